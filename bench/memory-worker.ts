// One engine loading one data set, in a process of its own (spawned by memory.bench.ts), so the
// RSS it reports is that engine's alone. Loads `size` keys in durable batches of 1000 in
// ascending or scrambled order while sampling memory every 250 ms (no forced GC) and the event
// loop's delay; then closes the engine and measures its files. Sends one MemoryRow over IPC.
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { keyOf, scrambled, valueOf } from './lib/dataset.js';
import { dirBytes } from './lib/dir-bytes.js';
import { openEngine, type EngineName } from './lib/engines.js';
import { sampledLoad, type SamplerResult } from './lib/sampler.js';
import { workerMain } from './lib/worker-main.js';

export type LoadOrder = 'ascending' | 'random';

export interface MemoryTask {
  engine: EngineName;
  /** How the row is labelled in the table (engine and settings). */
  label: string;
  dir: string;
  size: number;
  order: LoadOrder;
  cacheBytes: number;
  /** tetradb's dirty budget; absent: the engine's default. */
  dirtyBytes?: number;
  /** Stop loading after this long (the row then says how many keys it loaded). */
  maxSeconds: number;
}

export interface MemoryRow extends SamplerResult {
  task: MemoryTask;
  /** Keys loaded (less than task.size when maxSeconds cut the load short). */
  loaded: number;
  loadSeconds: number;
  /** Closing: tetradb's final checkpoint, SQLite's WAL checkpoint, LevelDB's log flush. */
  closeSeconds: number;
  filesEndOfLoadMiB: number;
  filesAfterCloseMiB: number;
  /** tetradb: the dirty budget's limit in MiB (its peak in use is extraPeaks.dirtyMiB). */
  dirtyLimitMiB?: number;
  cacheMaxMiB?: number;
}

const BATCH_ROWS = 1000;
const SAMPLE_MS = 250;
const MiB = 2 ** 20;

async function run(task: MemoryTask): Promise<MemoryRow> {
  const engine = await openEngine(task.engine, task.dir, { cacheBytes: task.cacheBytes, dirtyBytes: task.dirtyBytes });
  const idOf = task.order === 'ascending' ? (i: number) => i : scrambled(task.size);
  const tetra = task.engine === 'tetradb';
  // tetradb's dirty budget in use and its page cache, sampled with the memory (stats() is cheap).
  const extra = tetra
    ? () => {
        const s = engine.stats();
        return { dirtyMiB: s.dirtyBytes! / MiB, cacheMiB: s.cacheBytes! / MiB };
      }
    : undefined;
  const limits = tetra ? engine.stats() : {};
  const { sampled, loaded, loadSeconds } = await sampledLoad({ size: task.size, batch: BATCH_ROWS, maxSeconds: task.maxSeconds, intervalMs: SAMPLE_MS, extra }, async (from, to) => {
    const rows: Array<[Buffer, Buffer]> = [];
    for (let i = from; i < to; i++) {
      const id = idOf(i);
      rows.push([keyOf(id), valueOf(id)]);
    }
    await engine.load(rows);
    // better-sqlite3 commits synchronously: yield a turn between batches, as a server handling
    // one request per batch would, so its timers (and the sampler) get to run at all.
    if (engine.syncCommit) await nextTurn();
  });
  const filesEndOfLoadMiB = dirBytes(task.dir) / MiB;
  const t0 = performance.now();
  await engine.close();
  const closeSeconds = (performance.now() - t0) / 1000;
  const filesAfterCloseMiB = dirBytes(task.dir) / MiB;
  return {
    ...sampled,
    task,
    loaded,
    loadSeconds,
    closeSeconds,
    filesEndOfLoadMiB,
    filesAfterCloseMiB,
    ...(tetra ? { dirtyLimitMiB: limits.dirtyLimit! / MiB, cacheMaxMiB: limits.cacheMaxBytes! / MiB } : {}),
  };
}

workerMain<MemoryTask, Awaited<ReturnType<typeof run>>>(run);
