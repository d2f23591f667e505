import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

// What `npm start` runs: server/main.ts compiled by esbuild (server/start.mjs).
const START = fileURLToPath(new URL('../../server/start.mjs', import.meta.url));

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
}

/**
 * Starts `npm start`'s entry point (server/start.mjs) as a real process on a port the process
 * picks itself (--port 0), and waits for its ready message (server/main.ts sends its URL over the
 * IPC channel). A port picked here and passed in could be taken by another test's server before
 * the child binds it, and a readiness probe would then be answered by that server: requests of
 * this test went to another server's tenants (CI saw a PUT answered 401 that way).
 */
export async function spawnServer(dataDir: string, extraArgs: string[] = [], env: Record<string, string> = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [START, '--port', '0', '--data-dir', dataDir, ...extraArgs], {
    env: { ...process.env, TETRA_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start in 30 s: ${output}`));
    }, 30_000);
    const done = (): void => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
    };
    const onMessage = (message: unknown): void => {
      const ready = message as { tetradb?: unknown; url?: unknown } | null;
      if (ready?.tetradb !== 'ready' || typeof ready.url !== 'string') return;
      done();
      resolve(ready.url);
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null): void => {
      done();
      // The output may still be arriving: read it once the pipes are done.
      setImmediate(() => reject(new Error(`server exited during start-up (code ${code}, signal ${signal}): ${output}`)));
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
  // The channel is only for this message: closed, it keeps neither process waiting on it.
  child.disconnect();
  return { url, child, exited, output: () => output };
}
