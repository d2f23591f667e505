// One engine under a mixed load, in a process of its own (spawned by stalls.bench.ts): preload
// `keys` rows, then for `seconds` run concurrent writers (batches of random overwrites and
// deletes), point readers and one reader scanning everything on a snapshot in chunks, while the
// event loop's delay, memory and (tetradb) checkpoints and compactions are recorded. Sends one
// StallsRow over IPC.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep, setImmediate as nextTurn } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { isTetraError } from '../engine/errors.js';
import { PageCache, type TreeNode } from '../engine/storage/index.js';
import { TenantStore, type BatchOp } from '../engine/tenant/index.js';
import type { MemoryGovernorState } from '../engine/storage/memory-governor.js';
import { loadConfig, startMemoryGovernor } from '../server/config.js';
import { keyOf, seededRandom, valueOf } from './lib/dataset.js';
import { startSampler, type LoopDelay, type SamplerResult } from './lib/sampler.js';
import { workerMain } from './lib/worker-main.js';

export interface StallsTask {
  engine: 'tetradb' | 'sqlite';
  label: string;
  dir: string;
  keys: number;
  seconds: number;
  writers: number;
  batchOps: number;
  /** Rows per scan from a random key; 0: whole-tree scans. */
  scanRows: number;
  /** Share of a batch's operations that are deletes (the rest overwrite or re-insert). */
  deleteShare: number;
  readers: number;
  /** Write batches per second offered by all writers together, on a schedule; 0: closed loop. */
  writeRate: number;
  cacheBytes: number;
  /** tetradb: dirty budget (absent: the engine's default) and maintenance thresholds. */
  dirtyBytes?: number;
  checkpointWalBytes: number;
  compactMinBytes: number;
}

export interface OpStats {
  ops: number;
  p50Ms: number;
  p99Ms: number;
}

export interface StallsRow {
  task: StallsTask;
  preloadSeconds: number;
  windowSeconds: number;
  /** The event loop before the window, 2 s with nothing running: what the machine alone adds. */
  idleLoop: LoopDelay;
  window: SamplerResult;
  /** Write batches (each `batchOps` operations), latency to acknowledgement. */
  writes: OpStats & { refused: number; longestSyncMs: number };
  /** Point gets; tetradb's include the durability fence a server response waits for. */
  reads: OpStats;
  scans: { completed: number; rows: number; expired: number };
  /** tetradb only: checkpoints and compactions seen in stats() during the window. */
  checkpoints?: number;
  compactions?: number;
  fileMiBStart?: number;
  fileMiBEnd?: number;
  dirtyLimitMiB?: number;
  /** tetradb only: the memory governor at the end of the window (undefined when TETRA_MEMORY_CHECK_MS=0). */
  governor?: { cuts: number; readings: number; peakGrowthMiB: number; boundMiB: number; cacheLimitMiB: number };
}

/** What the workload needs of an engine. */
interface Target {
  /** One atomic batch; resolves when acknowledged (durable). */
  write(batch: Array<{ key: Buffer; value: Buffer | undefined }>): Promise<void>;
  /** One point read as a server would answer it (tetradb: waiting for the durability fence). */
  read(key: Buffer): Promise<void>;
  /**
   * One scan of up to `limit` rows (0: to the end) from `start`, on a snapshot, in chunks of 256
   * rows with an event-loop turn between chunks; `onRows` hears of every chunk.
   */
  scan(start: Buffer, limit: number, onRows: (n: number) => void, stop: () => boolean): Promise<void>;
  preload(rows: Array<[Buffer, Buffer]>): Promise<void>;
  settle(): Promise<void>;
  /** Longest synchronous part of one write() call so far (applying the batch in memory), ms. */
  longestSyncWriteMs(): number;
  /** Maintenance counters and figures, polled during the window. */
  poll(): { checkpointLsn?: number; fileBytes?: number; dirtyBytes?: number; dirtyLimit?: number };
  /** tetradb: the memory governor's state, as server/app.ts runs it (undefined when off). */
  governor?(): MemoryGovernorState | undefined;
  close(): Promise<void>;
}

const TREE = 'kv';
const CHUNK = 256;
const PRELOAD_BATCH = 1000;
const MiB = 2 ** 20;

async function openTetra(task: StallsTask): Promise<Target> {
  const cache = new PageCache<TreeNode>(task.cacheBytes, task.dirtyBytes === undefined ? {} : { dirtyBytes: task.dirtyBytes });
  const store = await TenantStore.open(task.dir, { cache, checkpointWalBytes: task.checkpointWalBytes, compactMinBytes: task.compactMinBytes });
  // As server/app.ts starts it once the stores are open (TETRA_MEMORY_CHECK_MS=0: none).
  const governor = startMemoryGovernor(cache, loadConfig(process.env, []));
  let longestSync = 0;
  return {
    async write(batch) {
      const ops: BatchOp[] = batch.map(({ key, value }) => (value === undefined ? { op: 'delete', tree: TREE, key } : { op: 'put', tree: TREE, key, value }));
      const t0 = performance.now();
      const durable = store.write(ops);
      longestSync = Math.max(longestSync, performance.now() - t0);
      await durable;
    },
    longestSyncWriteMs: () => longestSync,
    async read(key) {
      store.get(TREE, key);
      // As TenantRegistry.use does for every response: wait until what the read saw is durable.
      const fence = store.whenDurable(store.lsn);
      if (fence !== undefined) await fence;
      else await nextTurn();
    },
    async scan(start, limit, onRows, stop) {
      const snapshot = store.snapshot();
      try {
        for await (const chunk of snapshot.scanChunks(TREE, limit > 0 ? { gte: start, limit } : {}, CHUNK)) {
          onRows(chunk.length);
          if (stop()) break;
        }
      } finally {
        snapshot.close();
      }
      await store.whenDurable(snapshot.lsn);
    },
    async preload(rows) {
      await store.write(rows.map(([key, value]) => ({ op: 'put' as const, tree: TREE, key, value })));
    },
    async settle() {
      await store.checkpoint();
    },
    poll() {
      const s = store.stats();
      return { checkpointLsn: s.checkpointLsn, fileBytes: s.pageFileBytes, dirtyBytes: cache.dirty.bytes, dirtyLimit: cache.dirty.limit };
    },
    governor: () => governor?.state,
    async close() {
      governor?.stop();
      await store.close();
    },
  };
}

function openSqlite(task: StallsTask): Target {
  const path = join(task.dir, 'kv.sqlite');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma(`cache_size = -${Math.floor(task.cacheBytes / 1024)}`);
  db.exec('CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID');
  // The scanner reads through a connection of its own: an open statement holds a read
  // transaction, so it sees one snapshot however long it takes (WAL mode), as tetradb's does.
  const scanDb = new Database(path, { readonly: true });
  scanDb.pragma(`cache_size = -${Math.floor(task.cacheBytes / 1024)}`);
  const put = db.prepare<[Buffer, Buffer]>('INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)');
  const del = db.prepare<[Buffer]>('DELETE FROM kv WHERE k = ?');
  const get = db.prepare<[Buffer], Buffer>('SELECT v FROM kv WHERE k = ?').pluck();
  const all = scanDb.prepare<[], [Buffer, Buffer]>('SELECT k, v FROM kv ORDER BY k').raw();
  const range = scanDb.prepare<[Buffer, number], [Buffer, Buffer]>('SELECT k, v FROM kv WHERE k >= ? ORDER BY k LIMIT ?').raw();
  let longestSync = 0;
  const apply = db.transaction((batch: Array<{ key: Buffer; value: Buffer | undefined }>) => {
    for (const { key, value } of batch) {
      if (value === undefined) del.run(key);
      else put.run(key, value);
    }
  });
  const load = db.transaction((rows: Array<[Buffer, Buffer]>) => {
    for (const [k, v] of rows) put.run(k, v);
  });
  return {
    async write(batch) {
      // Synchronous: commits cannot overlap, so each waits its turn of the event loop (as a
      // request in a server would), then blocks the loop for its fsync.
      await nextTurn();
      const t0 = performance.now();
      apply(batch);
      longestSync = Math.max(longestSync, performance.now() - t0);
    },
    longestSyncWriteMs: () => longestSync,
    async read(key) {
      get.get(key);
      await nextTurn();
    },
    async scan(start, limit, onRows, stop) {
      let rows = 0;
      const it = limit > 0 ? range.iterate(start, limit) : all.iterate();
      try {
        for (let r = it.next(); !r.done; r = it.next()) {
          if (++rows % CHUNK === 0) {
            onRows(CHUNK);
            await nextTurn();
            if (stop()) break;
          }
        }
        onRows(rows % CHUNK);
      } finally {
        it.return?.();
      }
    },
    async preload(rows) {
      load(rows);
    },
    async settle() {
      db.pragma('wal_checkpoint(TRUNCATE)');
    },
    poll: () => ({}),
    async close() {
      scanDb.close();
      db.close();
    },
  };
}

function stats(times: number[]): OpStats {
  const sorted = Float64Array.from(times).sort();
  const at = (p: number): number => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!);
  return { ops: times.length, p50Ms: at(0.5), p99Ms: at(0.99) };
}

async function run(task: StallsTask): Promise<StallsRow> {
  const target = task.engine === 'tetradb' ? await openTetra(task) : openSqlite(task);
  try {
    // Preload: ascending ids in durable batches, then the engine's own settle step.
    const t0 = performance.now();
    for (let start = 0; start < task.keys; start += PRELOAD_BATCH) {
      const rows: Array<[Buffer, Buffer]> = [];
      for (let id = start; id < Math.min(task.keys, start + PRELOAD_BATCH); id++) rows.push([keyOf(id), valueOf(id)]);
      await target.preload(rows);
    }
    await target.settle();
    const preloadSeconds = (performance.now() - t0) / 1000;

    const idle = startSampler(250);
    await sleep(2000);
    const idleLoop = idle.stop().loop;

    // Maintenance seen through stats(): a new checkpoint lsn is a checkpoint; a page file that
    // shrinks was compacted (checkpoints only append).
    const first = target.poll();
    let checkpoints = 0;
    let compactions = 0;
    let lastLsn = first.checkpointLsn;
    let lastFile = first.fileBytes;
    const poller = setInterval(() => {
      const p = target.poll();
      if (p.checkpointLsn !== lastLsn) checkpoints++;
      if (p.fileBytes !== undefined && lastFile !== undefined && p.fileBytes < lastFile) compactions++;
      lastLsn = p.checkpointLsn;
      lastFile = p.fileBytes;
    }, 20);

    const sampler = startSampler(250, (): Record<string, number> => {
      const p = target.poll();
      return p.dirtyBytes === undefined ? {} : { dirtyMiB: p.dirtyBytes / MiB };
    });
    const started = performance.now();
    const deadline = started + task.seconds * 1000;
    let stopped = false;
    const stop = (): boolean => stopped || (stopped = performance.now() >= deadline);
    const writeTimes: number[] = [];
    const readTimes: number[] = [];
    let refused = 0;
    const scans = { completed: 0, rows: 0, expired: 0 };

    // Open loop: writer w starts batch k at started + (k * writers + w) / writeRate s, or at once
    // when it is behind that schedule.
    const period = task.writeRate > 0 ? (1000 * task.writers) / task.writeRate : 0;
    const writer = async (w: number): Promise<void> => {
      const rand = seededRandom(0x5eed + w);
      let next = started + (period * w) / task.writers;
      while (!stop()) {
        if (period > 0) {
          const wait = next - performance.now();
          if (wait > 0) await sleep(wait);
          next += period;
          if (stop()) break;
        }
        const batch: Array<{ key: Buffer; value: Buffer | undefined }> = [];
        for (let i = 0; i < task.batchOps; i++) {
          const id = Math.floor(rand() * task.keys);
          batch.push({ key: keyOf(id), value: rand() < task.deleteShare ? undefined : valueOf(Math.floor(rand() * 1e9)) });
        }
        const s = performance.now();
        try {
          await target.write(batch);
          writeTimes.push(performance.now() - s);
        } catch (err) {
          // Writers outran the dirty budget by twice its size: the engine refuses (nothing applied).
          if (!isTetraError(err) || err.code !== 'UNAVAILABLE') throw err;
          refused++;
          await sleep(5);
        }
      }
    };
    const reader = async (r: number): Promise<void> => {
      const rand = seededRandom(0xbeef + r);
      while (!stop()) {
        const key = keyOf(Math.floor(rand() * task.keys));
        const s = performance.now();
        await target.read(key);
        readTimes.push(performance.now() - s);
      }
    };
    const scanner = async (): Promise<void> => {
      const rand = seededRandom(0xca7);
      while (!stop()) {
        try {
          await target.scan(keyOf(Math.floor(rand() * task.keys)), task.scanRows, (n) => (scans.rows += n), stop);
          if (!stopped) scans.completed++;
        } catch (err) {
          // A snapshot pinning too much of the dirty budget expires: the read fails, retry.
          if (!isTetraError(err) || err.code !== 'UNAVAILABLE') throw err;
          scans.expired++;
        }
      }
    };
    await Promise.all([
      ...Array.from({ length: task.writers }, (_, w) => writer(w)),
      ...Array.from({ length: task.readers }, (_, r) => reader(r)),
      scanner(),
    ]);
    const windowSeconds = (performance.now() - started) / 1000;
    const window = sampler.stop();
    clearInterval(poller);
    const last = target.poll();
    return {
      task,
      preloadSeconds,
      windowSeconds,
      idleLoop,
      window,
      writes: { ...stats(writeTimes), refused, longestSyncMs: target.longestSyncWriteMs() },
      reads: stats(readTimes),
      scans,
      ...(task.engine === 'tetradb'
        ? { checkpoints, compactions, fileMiBStart: first.fileBytes! / MiB, fileMiBEnd: last.fileBytes! / MiB, dirtyLimitMiB: last.dirtyLimit! / MiB, ...governorOf(target) }
        : {}),
    };
  } finally {
    await target.close();
  }
}

function governorOf(target: Target): Pick<StallsRow, 'governor'> {
  const g = target.governor?.();
  if (g === undefined) return {};
  return { governor: { cuts: g.cuts, readings: g.readings, peakGrowthMiB: g.peakGrowthBytes / MiB, boundMiB: g.boundBytes / MiB, cacheLimitMiB: g.cacheLimitBytes / MiB } };
}

workerMain<StallsTask, Awaited<ReturnType<typeof run>>>(run);
