// One documents engine at one size, in a process of its own (forked by docs.bench.ts), so its RSS
// and garbage are its own: warm it up (a load of warmDocs documents into a throwaway instance,
// closed and deleted, so the timed load runs on compiled code as in a running server, as each
// timed query runs after a warm-up), open it (collection and indexes on email and joined first), load N
// documents through insertMany in batches of 1000, each awaited (until durable where the engine
// is), settle (tetradb: checkpoint; Loki: build its indexes), answer the sample queries and check
// them against the reference engine's answers (a difference stops here, before any timing), then
// time each query and updateOne by _id from 1 and from 16 callers. Memory is sampled every 250 ms
// throughout (no forced GC), and separately during the load. Sends one DocsWorkerResult over IPC;
// an engine that cannot open or load in time sends its reason instead, never a partial table.
import { rmSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { benchmarkSync, closedLoop, sampleSync } from './lib/harness.js';
import { openDocsEngine, type DocsBenchEngine, type DocsEngineName, type TetraSettings } from './lib/docs-engines.js';
import { aggregateArgs, BATCH_DOCS, checkOfDocs, checkOfGroups, positionalArgs, QUERY_NAMES, queryArgs, replaceArgs, sampleQueries, updateArgs, type OpName, type QueryArgs } from './lib/docs-workload.js';
import { makeQueryDocument, type QueryDocument } from './lib/documents.js';
import { sampledLoad, startSampler } from './lib/sampler.js';
import { compareChecks, type SampleCheck } from './lib/sql-workload.js';
import { workerMain } from './lib/worker-main.js';
import { applyHeapGrowth, loadConfig } from '../server/config.js';

export interface DocsTask {
  engine: DocsEngineName;
  dir: string;
  size: number;
  /** Time per measured operation (after a warm-up of a quarter of it). */
  seconds: number;
  /** The load gives up after this long (the engine is then reported as skipped, with why). */
  maxLoadSeconds: number;
  /** Documents loaded into a throwaway instance first (0: none, a cold load). */
  warmDocs: number;
  tetra: TetraSettings;
  /** Concurrent callers of the updateOne rows. */
  updateCallers: number[];
  /** The reference engine's answers to the sample at this size, when it ran first. */
  expected?: { engine: DocsEngineName; checks: SampleCheck[] };
}

export interface OpResult {
  op: OpName;
  /** Operations per second (insertMany: documents per second). */
  hz: number;
  /** Per call (insertMany: per batch of 1000). */
  p50Us: number;
  p99Us: number;
  /** Calls timed (insertMany: batches). */
  ops: number;
  /** How it was timed: a closed loop, or benchmark.js + a latency pass for synchronous engines. */
  timer: 'loop' | 'benchmark.js' | 'load';
}

export type DocsWorkerResult =
  | {
      ok: true;
      engine: DocsEngineName;
      size: number;
      openMs: number;
      loadSeconds: number;
      settleSeconds: number;
      checks: SampleCheck[];
      ops: OpResult[];
      /** RSS and V8 heap after open (before the first document), after the load and settle. */
      openRssMiB: number;
      loadedRssMiB: number;
      loadedHeapMiB: number;
      /** Peaks during the load alone (sampled every 250 ms). */
      loadPeakRssMiB: number;
      loadPeakHeapMiB: number;
      /** tetradb: peaks of its page cache and dirty bytes during the load. */
      loadExtraPeaks: Record<string, number>;
      /** Peaks over the whole run (load, queries, updates). */
      peakRssMiB: number;
      peakHeapMiB: number;
    }
  | { ok: false; engine: DocsEngineName; size: number; reason: string };

const MiB = 2 ** 20;
const SAMPLE_MS = 250;
/** Most per-call latencies the synchronous engines' latency pass takes. */
const LATENCY_SAMPLES = 100_000;

async function measure(task: DocsTask, engine: DocsBenchEngine, op: OpName, callers: number, run: (seq: number) => unknown): Promise<OpResult> {
  if (engine.sync && callers === 1) {
    // Calibrated cycles for throughput, then each call timed alone for p50/p99 (benchmark.js keeps
    // per-cycle means only). An await per call would add more than some of these calls cost.
    let seq = 0;
    const fn = (): void => void run(seq++);
    const { hz } = benchmarkSync(op, fn, task.seconds);
    // sampleSync looks at the clock every 256 calls: for slow calls (mingo scanning 1M documents)
    // the count, sized from the measured rate, is what keeps this pass near its time.
    const lat = sampleSync(fn, Math.max(5, Math.min(LATENCY_SAMPLES, Math.round((hz * task.seconds) / 4))), task.seconds / 4);
    return { op, hz, p50Us: lat.p50Us, p99Us: lat.p99Us, ops: lat.samples, timer: 'benchmark.js' };
  }
  // Several callers of a synchronous engine cannot overlap: each yields a turn first, so its
  // latency includes waiting for the ones ahead, as requests in a server would.
  const loop = (seconds: number) => closedLoop({ workers: callers, seconds, maxOps: 1_000_000, yieldBeforeOp: engine.sync }, run);
  await loop(task.seconds / 4);
  const r = await loop(task.seconds);
  return { op, hz: r.hz, p50Us: r.p50Us, p99Us: r.p99Us, ops: r.ops, timer: 'loop' };
}

/**
 * The warm-up: `task.warmDocs` other documents loaded as the timed load loads them into a
 * throwaway instance of the engine (its own files), closed and deleted before the timed one opens.
 */
async function warmUp(task: DocsTask): Promise<void> {
  const dir = `${task.dir}-warm-up`;
  const warm = await openDocsEngine(task.engine, dir, task.tetra);
  try {
    for (let from = 0; from < task.warmDocs; from += BATCH_DOCS) {
      const docs: QueryDocument[] = [];
      for (let i = from; i < Math.min(task.warmDocs, from + BATCH_DOCS); i++) docs.push(makeQueryDocument(WARM_UP_IDS + i));
      await warm.insertMany(docs);
    }
  } finally {
    await warm.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Where the warm-up's documents start (makeQueryDocument's argument): none of the timed load's. */
const WARM_UP_IDS = 100_000_000;

async function runTask(task: DocsTask): Promise<DocsWorkerResult> {
  const fail = (err: unknown): DocsWorkerResult => ({ ok: false, engine: task.engine, size: task.size, reason: err instanceof Error ? err.message : String(err) });
  const sampler = startSampler(SAMPLE_MS);
  let engine: DocsBenchEngine;
  // tetradb's process runs with the heap growth `npm start` sets (TETRA_HEAP_GROWTH_PERCENT or its
  // default), before its heap grows; the other engines with V8's own policy, as users run them.
  if (task.engine === 'tetradb') applyHeapGrowth(loadConfig(process.env, []).heapGrowthPercent);
  try {
    if (task.warmDocs > 0) await warmUp(task);
  } catch (err) {
    sampler.stop();
    return fail(err);
  }
  const t0 = performance.now();
  try {
    engine = await openDocsEngine(task.engine, task.dir, task.tetra);
  } catch (err) {
    sampler.stop();
    return fail(err);
  }
  const openMs = performance.now() - t0;
  const openRss = process.memoryUsage().rss;
  try {
    // insertMany: the load itself, each batch timed (documents are made outside the timing).
    const batchUs: number[] = [];
    const load = await sampledLoad({ size: task.size, batch: BATCH_DOCS, maxSeconds: task.maxLoadSeconds, intervalMs: SAMPLE_MS, extra: engine.memoryExtra }, async (from, to) => {
      const docs: QueryDocument[] = [];
      for (let i = from; i < to; i++) docs.push(makeQueryDocument(i));
      const b0 = performance.now();
      await engine.insertMany(docs);
      batchUs.push((performance.now() - b0) * 1000);
    });
    if (load.loaded < task.size) throw new Error(`load not done after its time limit of ${task.maxLoadSeconds} s: ${load.loaded} of ${task.size} documents loaded`);
    const insertSeconds = batchUs.reduce((s, us) => s + us, 0) / 1e6;
    const s0 = performance.now();
    await engine.settle();
    const settleSeconds = (performance.now() - s0) / 1000;
    const loaded = process.memoryUsage();
    const sorted = Float64Array.from(batchUs).sort();
    const ops: OpResult[] = [
      {
        op: 'insertMany',
        hz: task.size / insertSeconds,
        p50Us: sorted[Math.floor(sorted.length * 0.5)]!,
        p99Us: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))]!,
        ops: sorted.length,
        timer: 'load',
      },
    ];

    const checks: SampleCheck[] = [];
    for (const q of sampleQueries(task.size)) checks.push(checkOfDocs(q, await engine.find(q)));
    const groupings = aggregateArgs(task.size);
    for (const a of aggregateArgs(task.size, 3, 99)) checks.push(checkOfGroups(a, await engine.aggregate(a)));
    if (task.expected !== undefined) compareChecks(task.engine, checks, task.expected.engine, task.expected.checks);

    for (const name of QUERY_NAMES) {
      const args: QueryArgs[] = queryArgs(name, task.size);
      ops.push(await measure(task, engine, name, 1, (i) => engine.find(args[i % args.length]!)));
    }
    ops.push(await measure(task, engine, 'aggregate', 1, (i) => engine.aggregate(groupings[i % groupings.length]!)));
    // Writes last, so every query ran on the loaded documents.
    const updates = updateArgs(task.size);
    for (const callers of task.updateCallers) {
      ops.push(
        await measure(task, engine, `update-${callers}`, callers, (i) => {
          const u = updates[i % updates.length]!;
          return engine.updateById(u.id, u.city);
        }),
      );
    }
    const replacements = replaceArgs(task.size);
    ops.push(
      await measure(task, engine, 'replace', 1, (i) => {
        const r = replacements[i % replacements.length]!;
        return engine.replaceById(r.id, r.doc);
      }),
    );
    const retags = positionalArgs(task.size);
    ops.push(
      await measure(task, engine, 'positional', 1, (i) => {
        const r = retags[i % retags.length]!;
        return engine.retagById(r.id, r.tag);
      }),
    );
    const peaks = sampler.stop();
    return {
      ok: true,
      engine: task.engine,
      size: task.size,
      openMs,
      loadSeconds: load.loadSeconds,
      settleSeconds,
      checks,
      ops,
      openRssMiB: openRss / MiB,
      loadedRssMiB: loaded.rss / MiB,
      loadedHeapMiB: loaded.heapUsed / MiB,
      loadPeakRssMiB: load.sampled.peakRssMiB,
      loadPeakHeapMiB: load.sampled.peakHeapMiB,
      loadExtraPeaks: load.sampled.extraPeaks,
      peakRssMiB: peaks.peakRssMiB,
      peakHeapMiB: peaks.peakHeapMiB,
    };
  } catch (err) {
    sampler.stop();
    return fail(err);
  } finally {
    await engine.close().catch(() => undefined);
  }
}

workerMain(runTask);
