// One HNSW library on one data set, in a process of its own (forked by vector.bench.ts, with
// --expose-gc so the memory deltas are live memory), so neither library's heap, allocator or JIT
// state touches the other's figures. Regenerates the data from its seed (or reads the MiniLM
// vectors the parent wrote), builds the index one vector at a time, measures its memory, then
// answers the same queries at each ef of the sweep, single-threaded, and scores them against the
// ground truth. tetradb's worker computes that ground truth (HnswIndex.exact over every vector,
// checked against a plain loop on a few queries) and times it as the brute-force row; the
// hnswlib-node worker reads it from the file tetradb's wrote. Also times a serialize / load of
// the index alone, in this process. Sends one IndexResult over IPC.
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { HnswIndex } from '../engine/vector/index.js';
import { memory, type MemorySample } from './lib/harness.js';
import { dataVectors, DIMS, K, naiveTopK, queryVectors, recallAt, row } from './lib/vector-data.js';
import { workerMain } from './lib/worker-main.js';

export type IndexLib = 'tetradb' | 'hnswlib-node';

export interface IndexTask {
  lib: IndexLib;
  dir: string;
  size: number;
  queries: number;
  efs: number[];
  M: number;
  efConstruction: number;
  /** Where the ground truth is (tetradb writes it, hnswlib-node reads it): size-queries x K int32. */
  truthPath: string;
  /** Synthetic clustered vectors, or files of row-major float32 the parent wrote (MiniLM). */
  dataset: { kind: 'clustered' } | { kind: 'file'; dataPath: string; queryPath: string };
}

export interface SweepPoint {
  ef: number;
  recall: number;
  qps: number;
  p50Us: number;
  p99Us: number;
}

export interface IndexResult {
  lib: IndexLib;
  size: number;
  buildSeconds: number;
  /** The library's own account: tetradb memoryBytes(); hnswlib-node its documented layout (see layoutBytes). */
  reportedBytes: number;
  /** RSS growth over the build, after full GCs before and after (the input vectors excluded: allocated before). */
  rssDeltaBytes: number;
  /** V8 heap + external memory growth (external holds ArrayBuffers and WebAssembly memories). */
  heapDeltaBytes: number;
  after: MemorySample;
  /** Brute force over every vector (tetradb's worker only): queries/s single-threaded. */
  bruteQps?: number;
  bruteP50Us?: number;
  /** The ground truth's check against a plain loop: how many queries were compared. */
  truthChecked?: number;
  sweep: SweepPoint[];
  /** serialize() / writeIndexSync size and time, and a load of those bytes back in this process. */
  savedBytes: number;
  saveMs: number;
  loadMs: number;
  /** Recall at the middle ef after the load (it must equal the one before). */
  loadedRecall: number;
  loadedRecallBefore: number;
}

const WARMUP_QUERIES = 20;

function readF32(path: string): Float32Array {
  const b = readFileSync(path);
  return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
}

/** hnswlib-node's documented per-element layout (hnswalg.h of the bundled hnswlib), in bytes for n elements. */
function hnswlibLayoutBytes(n: number, dims: number, M: number): number {
  const level0 = dims * 4 + (2 * M * 4 + 4) + 8; // vector + level-0 links (count + 2M) + label
  const perElement = level0 + 8 /* linkLists_ pointer */ + 4 /* element_levels_ */ + 40 /* std::mutex in link_list_locks_ */ + 2 /* visited list */;
  // Upper levels: P(level >= l) = M^-l, each level (M + 1) ints: expected (M*4 + 4) / (M - 1).
  const upper = (M * 4 + 4) / (M - 1);
  // label_lookup_ (unordered_map<size_t, uint>): a node of ~24 bytes + malloc header, a bucket pointer.
  const lookup = 32 + 8;
  return n * (perElement + upper + lookup) + 65536 * 40 /* label_op_locks_ */;
}

/**
 * V8 heap plus external memory, after memory()'s full GCs: external counts ArrayBuffers and
 * WebAssembly memories (tetradb's vectors live in one), which process.memoryUsage().arrayBuffers
 * leaves out for the latter.
 */
function liveBytes(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

/** Runs every query once (after a few untimed), returns per-query results, QPS and latency. */
function pass(count: number, run: (q: number) => ArrayLike<number>): { found: ArrayLike<number>[]; qps: number; p50Us: number; p99Us: number } {
  for (let q = 0; q < Math.min(WARMUP_QUERIES, count); q++) run(q);
  const times = new Float64Array(count);
  const found: ArrayLike<number>[] = new Array(count);
  const t0 = performance.now();
  for (let q = 0; q < count; q++) {
    const a = performance.now();
    found[q] = run(q);
    times[q] = (performance.now() - a) * 1000;
  }
  const seconds = (performance.now() - t0) / 1000;
  times.sort();
  return { found, qps: count / seconds, p50Us: percentile(times, 0.5), p99Us: percentile(times, 0.99) };
}

interface Lib {
  build(data: Float32Array, n: number): void;
  search(query: number, ef: number): ArrayLike<number>;
  /** Brute force (tetradb only). */
  exact?(query: number): number[];
  reportedBytes(): number;
  save(path: string): number;
  load(path: string): void;
}

function tetradbLib(task: IndexTask, queries: Float32Array): Lib {
  let index = new HnswIndex({ dims: DIMS, M: task.M, efConstruction: task.efConstruction });
  return {
    build(data, n) {
      for (let i = 0; i < n; i++) index.insert(row(data, i));
    },
    search(q, ef) {
      return index.search(row(queries, q), K, { ef }).map((h) => h.node);
    },
    exact(q) {
      return index.exact(row(queries, q), K).map((h) => h.node);
    },
    reportedBytes: () => index.memoryBytes(),
    save(path) {
      const chunks = index.serialize();
      writeFileSync(path, Buffer.concat(chunks));
      return statSync(path).size;
    },
    load(path) {
      index = HnswIndex.deserialize([readFileSync(path)]);
    },
  };
}

function hnswlibLib(task: IndexTask, queries: Float32Array): Lib {
  const require = createRequire(import.meta.url);
  const { HierarchicalNSW } = require('hnswlib-node') as typeof import('hnswlib-node');
  // 'ip' on unit vectors: distance 1 - dot, the same order as tetradb's dot product ('cosine'
  // would normalise every vector again).
  let index = new HierarchicalNSW('ip', DIMS);
  // The addon takes plain arrays only; the queries are converted once, before any timing.
  const qs = Array.from({ length: task.queries }, (_, q) => Array.from(row(queries, q)));
  return {
    build(data, n) {
      index.initIndex({ maxElements: n, m: task.M, efConstruction: task.efConstruction, randomSeed: 100 });
      // Each vector is converted to an array as it goes in (a few µs, as a caller would).
      for (let i = 0; i < n; i++) index.addPoint(Array.from(row(data, i)), i);
    },
    search(q, ef) {
      index.setEf(ef);
      return index.searchKnn(qs[q]!, K).neighbors;
    },
    reportedBytes: () => hnswlibLayoutBytes(task.size, DIMS, task.M),
    save(path) {
      index.writeIndexSync(path);
      return statSync(path).size;
    },
    load(path) {
      index = new HierarchicalNSW('ip', DIMS);
      index.readIndexSync(path);
    },
  };
}

async function run(task: IndexTask): Promise<IndexResult> {
  const data = task.dataset.kind === 'clustered' ? dataVectors(task.size) : readF32(task.dataset.dataPath).subarray(0, task.size * DIMS);
  const queries = task.dataset.kind === 'clustered' ? queryVectors(task.queries) : readF32(task.dataset.queryPath).subarray(0, task.queries * DIMS);
  const lib = task.lib === 'tetradb' ? tetradbLib(task, queries) : hnswlibLib(task, queries);
  const before = memory();
  const liveBefore = liveBytes();
  const t0 = performance.now();
  lib.build(data, task.size);
  const buildSeconds = (performance.now() - t0) / 1000;
  const after = memory();
  const liveAfter = liveBytes();
  const result: Partial<IndexResult> = {
    lib: task.lib,
    size: task.size,
    buildSeconds,
    reportedBytes: lib.reportedBytes(),
    rssDeltaBytes: (after.rssMiB - before.rssMiB) * 2 ** 20,
    heapDeltaBytes: liveAfter - liveBefore,
    after,
  };

  let truth: Int32Array;
  if (lib.exact !== undefined) {
    // The ground truth, timed: the brute-force row. Node numbers are insertion order = data rows.
    const brute = pass(task.queries, (q) => lib.exact!(q));
    truth = new Int32Array(task.queries * K);
    brute.found.forEach((f, q) => truth.set(Array.from(f), q * K));
    // A few queries against the plainest loop, so a bug in exact() cannot pass as ground truth.
    const checked = Math.min(5, task.queries);
    for (let q = 0; q < checked; q++) {
      const naive = naiveTopK(data, task.size, row(queries, q));
      const got = new Set(Array.from(brute.found[q]!));
      const missing = naive.filter((i) => !got.has(i));
      // One swap at the 10th place is rounding (float64 sums here, exact()'s unrolled order there).
      if (missing.length > 1) throw new Error(`exact() disagrees with a plain loop on query ${q}: ${JSON.stringify(naive)} vs ${JSON.stringify(Array.from(brute.found[q]!))}`);
    }
    writeFileSync(task.truthPath, truth);
    result.bruteQps = brute.qps;
    result.bruteP50Us = brute.p50Us;
    result.truthChecked = checked;
  } else {
    const b = readFileSync(task.truthPath);
    truth = new Int32Array(b.buffer, b.byteOffset, b.byteLength / 4);
    if (truth.length !== task.queries * K) throw new Error(`ground truth has ${truth.length / K} queries, expected ${task.queries}`);
  }

  const sweep: SweepPoint[] = [];
  for (const ef of task.efs) {
    const p = pass(task.queries, (q) => lib.search(q, ef));
    sweep.push({ ef, recall: recallAt(p.found, truth), qps: p.qps, p50Us: p.p50Us, p99Us: p.p99Us });
  }
  result.sweep = sweep;

  // Save and load the index alone (no ids, no store), then check it answers the same.
  const midEf = task.efs[Math.floor(task.efs.length / 2)]!;
  result.loadedRecallBefore = sweep.find((x) => x.ef === midEf)!.recall;
  const path = join(task.dir, 'index.bin');
  let t = performance.now();
  result.savedBytes = lib.save(path);
  result.saveMs = performance.now() - t;
  t = performance.now();
  lib.load(path);
  result.loadMs = performance.now() - t;
  const again = pass(task.queries, (q) => lib.search(q, midEf));
  result.loadedRecall = recallAt(again.found, truth);
  return result as IndexResult;
}

workerMain(run);
