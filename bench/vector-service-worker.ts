// The vector store layer (VectorService over a real TenantStore, the fallback embedder) in a
// process of its own, forked by vector.bench.ts for one phase:
//   build   upsert records 0..N-1 (1000 per call, each awaited: durable), settle the graph, close
//           the store (which writes the graph file); report times and file sizes.
//   reopen  in a fresh process: TenantStore.open + a VectorService + the first query answered,
//           timed, and where the graph came from (status().loadedFrom).
//   memory  upsert N records with a vector memory budget while sampling RSS every second, then
//           keep sampling while the graph catches up (up to a time limit).
//   embed   embedding throughput: the fallback embedder (and the ONNX model when present), one
//           text per call and batches of 32.
// Sends one message over IPC.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DEFAULT_DIRTY_BYTES, PageCache, type TreeNode } from '../engine/storage/index.js';
import { TenantStore } from '../engine/tenant/index.js';
import { createFallbackEmbedder, loadEmbedder, VectorService, type Embedder } from '../engine/vector/index.js';
import { dirBytes } from './lib/dir-bytes.js';
import { startSampler, type SamplerResult } from './lib/sampler.js';
import { queryTexts, records } from './lib/vector-data.js';
import { workerMain } from './lib/worker-main.js';

export const CACHE_BYTES = 256 * 2 ** 20; // npm start's page cache
const BATCH = 1000;
const MiB = 2 ** 20;

export type ServiceTask =
  | { phase: 'build'; dir: string; storeDir: string; records: number }
  | { phase: 'reopen'; dir: string; storeDir: string; queries: number }
  | { phase: 'memory'; dir: string; records: number; vectorMemoryBytes: number; maxSeconds: number; catchUpSeconds: number }
  | { phase: 'embed'; dir: string; modelDir: string; texts: number };

export interface BuildResult {
  phase: 'build';
  records: number;
  upsertSeconds: number;
  settleSeconds: number;
  closeSeconds: number;
  graphFileBytes: number;
  storeBytes: number;
}

export interface ReopenResult {
  phase: 'reopen';
  openMs: number;
  firstQueryMs: number;
  loadedFrom: string;
  pending: number;
  /** Median of the next queries (the graph warm), ms. */
  nextQueryMs: number;
  matches: number;
  graphFileBytes: number;
}

export interface MemoryResult {
  phase: 'memory';
  records: number;
  loaded: number;
  loadSeconds: number;
  /** RSS once the store was open and the service made, before any record. */
  baseRssMiB: number;
  load: SamplerResult;
  catchUp: SamplerResult;
  catchUpSeconds: number;
  /** Records still not in the graph when sampling stopped. */
  pendingAtEnd: number;
  vectorMemoryUsedMiB: number;
  cacheBytes: number;
  dirtyBytes: number;
  error?: string;
}

export interface EmbedRow {
  embedder: string;
  batch: number;
  textsPerSecond: number;
  texts: number;
}

export interface EmbedResult {
  phase: 'embed';
  rows: EmbedRow[];
  onnx: string;
}

/** The graph file(s) of a store directory: derived/vec-*.bin, in bytes. */
export function graphFileBytes(storeDir: string): number {
  const derived = join(storeDir, 'derived');
  let bytes = 0;
  try {
    for (const f of readdirSync(derived)) if (/^vec-.*\.bin$/.test(f)) bytes += statSync(join(derived, f)).size;
  } catch {
    return 0;
  }
  return bytes;
}

async function build(task: Extract<ServiceTask, { phase: 'build' }>): Promise<BuildResult> {
  const store = await TenantStore.open(task.storeDir, { cache: new PageCache<TreeNode>(CACHE_BYTES), fsync: 'batch' });
  const service = new VectorService({ embedder: createFallbackEmbedder() });
  const t0 = performance.now();
  for (let from = 0; from < task.records; from += BATCH) await service.upsert(store, records(from, Math.min(task.records, from + BATCH)), '');
  const t1 = performance.now();
  await service.settle(store, '');
  const t2 = performance.now();
  await store.close();
  const t3 = performance.now();
  return {
    phase: 'build',
    records: task.records,
    upsertSeconds: (t1 - t0) / 1000,
    settleSeconds: (t2 - t1) / 1000,
    closeSeconds: (t3 - t2) / 1000,
    graphFileBytes: graphFileBytes(task.storeDir),
    storeBytes: dirBytes(task.storeDir),
  };
}

async function reopen(task: Extract<ServiceTask, { phase: 'reopen' }>): Promise<ReopenResult> {
  const texts = queryTexts(task.queries + 1);
  const t0 = performance.now();
  const store = await TenantStore.open(task.storeDir, { cache: new PageCache<TreeNode>(CACHE_BYTES), fsync: 'batch' });
  const t1 = performance.now();
  const service = new VectorService({ embedder: createFallbackEmbedder() });
  const first = await service.query(store, { query: texts[0], topK: 10 });
  const t2 = performance.now();
  const status = await service.status(store, '');
  const times: number[] = [];
  for (const q of texts.slice(1)) {
    const a = performance.now();
    await service.query(store, { query: q, topK: 10 });
    times.push(performance.now() - a);
  }
  times.sort((a, b) => a - b);
  await store.close();
  return {
    phase: 'reopen',
    openMs: t1 - t0,
    firstQueryMs: t2 - t1,
    loadedFrom: status?.loadedFrom ?? 'no namespace',
    pending: status?.pending ?? -1,
    nextQueryMs: times[Math.floor(times.length / 2)] ?? Number.NaN,
    matches: first.matches.length,
    graphFileBytes: graphFileBytes(task.storeDir),
  };
}

async function memoryLoad(task: Extract<ServiceTask, { phase: 'memory' }>): Promise<MemoryResult> {
  const storeDir = join(task.dir, 'store');
  const cache = new PageCache<TreeNode>(CACHE_BYTES);
  const store = await TenantStore.open(storeDir, { cache, fsync: 'batch' });
  const service = new VectorService({ embedder: createFallbackEmbedder(), memoryBytes: task.vectorMemoryBytes });
  const baseRssMiB = process.memoryUsage().rss / MiB;
  const extra = (): Record<string, number> => ({ vectorMiB: service.memoryUsed / MiB });
  let sampler = startSampler(1000, extra);
  const t0 = performance.now();
  const deadline = t0 + task.maxSeconds * 1000;
  let loaded = 0;
  let error: string | undefined;
  try {
    while (loaded < task.records && performance.now() < deadline) {
      const to = Math.min(task.records, loaded + BATCH);
      await service.upsert(store, records(loaded, to), '');
      loaded = to;
    }
  } catch (err) {
    error = err instanceof Error ? err.message : String(err);
  }
  const loadSeconds = (performance.now() - t0) / 1000;
  const load = sampler.stop();
  // The graph catches up behind the writes: keep sampling while it does (bounded).
  sampler = startSampler(1000, extra);
  const t1 = performance.now();
  const catchUpDeadline = t1 + task.catchUpSeconds * 1000;
  let pendingAtEnd = (await service.status(store, ''))?.pending ?? 0;
  while (pendingAtEnd > 0 && performance.now() < catchUpDeadline) {
    await new Promise((r) => setTimeout(r, 1000));
    pendingAtEnd = (await service.status(store, ''))?.pending ?? 0;
  }
  const catchUpSeconds = (performance.now() - t1) / 1000;
  const catchUp = sampler.stop();
  const vectorMemoryUsedMiB = service.memoryUsed / MiB;
  await store.close();
  return {
    phase: 'memory',
    records: task.records,
    loaded,
    loadSeconds,
    baseRssMiB,
    load,
    catchUp,
    catchUpSeconds,
    pendingAtEnd,
    vectorMemoryUsedMiB,
    cacheBytes: CACHE_BYTES,
    dirtyBytes: DEFAULT_DIRTY_BYTES,
    ...(error === undefined ? {} : { error }),
  };
}

async function embedRate(embedder: Embedder, texts: string[], batch: number): Promise<EmbedRow> {
  // Untimed warm-up (JIT; the ONNX session's first runs).
  await embedder.embed(texts.slice(0, Math.min(64, texts.length)));
  const t0 = performance.now();
  for (let i = 0; i < texts.length; i += batch) await embedder.embed(texts.slice(i, i + batch));
  return { embedder: embedder.id, batch, texts: texts.length, textsPerSecond: texts.length / ((performance.now() - t0) / 1000) };
}

async function embed(task: Extract<ServiceTask, { phase: 'embed' }>): Promise<EmbedResult> {
  const texts = records(0, task.texts).map((r) => r.text);
  const rows: EmbedRow[] = [];
  const fallback = createFallbackEmbedder();
  for (const batch of [1, 32]) rows.push(await embedRate(fallback, texts, batch));
  const choice = await loadEmbedder({ modelDir: task.modelDir });
  if (choice.embedder.kind === 'onnx') {
    const few = texts.slice(0, Math.min(2000, texts.length));
    for (const batch of [1, 32]) rows.push(await embedRate(choice.embedder, few, batch));
  }
  await choice.embedder.close();
  return { phase: 'embed', rows, onnx: choice.embedder.kind === 'onnx' ? choice.reason : `skipped: model not present (${choice.reason})` };
}

workerMain<ServiceTask, BuildResult | ReopenResult | MemoryResult | EmbedResult>(async (task) => {
  switch (task.phase) {
    case 'build':
      return build(task);
    case 'reopen':
      return reopen(task);
    case 'memory':
      return memoryLoad(task);
    case 'embed':
      return embed(task);
    default: {
      const never: never = task;
      throw new Error(`unknown phase ${JSON.stringify(never)}`);
    }
  }
});
