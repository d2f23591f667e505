import { mkdirSync, rmSync } from 'node:fs';

/**
 * The body of a benchmark worker process: reads its task (JSON, with the data directory it may
 * use) from argv, runs it, sends the result row to the parent and exits; the directory is
 * removed whatever happens.
 */
export function workerMain<T extends { dir: string }, R>(run: (task: T) => Promise<R>): void {
  const main = async (): Promise<void> => {
    const task = JSON.parse(process.argv[2] ?? '') as T;
    mkdirSync(task.dir, { recursive: true });
    try {
      const row = await run(task);
      process.send!(row, () => process.exit(0));
    } finally {
      rmSync(task.dir, { recursive: true, force: true });
    }
  };
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
