// One document load in a process of its own (spawned by docs-http.bench.ts), so the RSS it reports
// is the engine's alone: a TenantStore with the server's settings (one PageCache with the cache
// size and dirty budget, fsync=batch, the store defaults), an index on `email` created first,
// then `size` benchmark documents inserted through docsInsert in batches of 1000, one batch at a
// time, each awaited until durable (as the insertMany route answers). Memory is sampled every
// 250 ms without forced GC, and once more after two full GCs at the end. Sends one DocsMemoryRow
// over IPC.
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { docsCreateIndex, docsInsert } from '../engine/docs/index.js';
import { PageCache, type TreeNode } from '../engine/storage/index.js';
import { TenantStore } from '../engine/tenant/index.js';
import { applyHeapGrowth, DEFAULT_HEAP_GROWTH_PERCENT, loadConfig, startMemoryGovernor } from '../server/config.js';
import { dirBytes } from './lib/dir-bytes.js';
import { makeDocument } from './lib/documents.js';
import { sampledLoad, type SamplerResult } from './lib/sampler.js';
import { workerMain } from './lib/worker-main.js';

export interface DocsMemoryTask {
  label: string;
  dir: string;
  size: number;
  cacheBytes: number;
  dirtyBytes: number;
  /** Stop loading after this long (the row then says how many documents it loaded). */
  maxSeconds: number;
  /** TETRA_HEAP_GROWTH_PERCENT (default: the server's). */
  heapGrowthPercent?: number;
  /** The memory governor's reading interval (undefined: the server's default; 0: none). */
  memoryCheckMs?: number;
}

export interface DocsMemoryRow extends SamplerResult {
  task: DocsMemoryTask;
  loaded: number;
  loadSeconds: number;
  /** RSS and heap after the store opened, before the first document. */
  baseRssMiB: number;
  baseHeapMiB: number;
  /**
   * After the load, with the store still open, after two full GCs: what is live (the samples
   * include garbage V8 has not collected yet, which no setting of tetradb's bounds).
   */
  liveRssMiB: number;
  liveHeapMiB: number;
  liveBuffersMiB: number;
  /** The final checkpoint and close. */
  closeSeconds: number;
  filesEndOfLoadMiB: number;
  filesAfterCloseMiB: number;
}

const COLLECTION = 'people';
const BATCH_DOCS = 1000;
const SAMPLE_MS = 250;
const MiB = 2 ** 20;

/** Memory after two full collections, without starting the process with --expose-gc (which would change what the samples show). */
function liveMemory(): NodeJS.MemoryUsage {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage();
}

async function run(task: DocsMemoryTask): Promise<DocsMemoryRow> {
  // As server/main.ts does at start-up, before the heap grows.
  applyHeapGrowth(task.heapGrowthPercent ?? DEFAULT_HEAP_GROWTH_PERCENT);
  const cache = new PageCache<TreeNode>(task.cacheBytes, { dirtyBytes: task.dirtyBytes });
  const store = await TenantStore.open(task.dir, { cache, fsync: 'batch' });
  await (await docsCreateIndex(store, COLLECTION, { email: 1 })).durable;
  // As server/app.ts starts it once the stores are open.
  const governor = startMemoryGovernor(cache, { memoryCheckMs: task.memoryCheckMs ?? loadConfig({}, []).memoryCheckMs, heapGrowthPercent: task.heapGrowthPercent ?? DEFAULT_HEAP_GROWTH_PERCENT });
  const base = process.memoryUsage();
  const extra = (): Record<string, number> => ({ dirtyMiB: cache.dirty.bytes / MiB, cacheMiB: cache.bytes / MiB });
  const { sampled, loaded, loadSeconds } = await sampledLoad({ size: task.size, batch: BATCH_DOCS, maxSeconds: task.maxSeconds, intervalMs: SAMPLE_MS, extra }, async (from, to) => {
    const docs = [];
    for (let i = from; i < to; i++) docs.push(makeDocument(i));
    await docsInsert(store, COLLECTION, docs).durable;
  });
  const filesEndOfLoadMiB = dirBytes(task.dir) / MiB;
  const live = liveMemory();
  governor?.stop();
  const t0 = performance.now();
  await store.close();
  const closeSeconds = (performance.now() - t0) / 1000;
  return {
    ...sampled,
    task,
    loaded,
    loadSeconds,
    baseRssMiB: base.rss / MiB,
    baseHeapMiB: base.heapUsed / MiB,
    liveRssMiB: live.rss / MiB,
    liveHeapMiB: live.heapUsed / MiB,
    liveBuffersMiB: live.arrayBuffers / MiB,
    closeSeconds,
    filesEndOfLoadMiB,
    filesAfterCloseMiB: dirBytes(task.dir) / MiB,
  };
}

workerMain<DocsMemoryTask, DocsMemoryRow>(run);
