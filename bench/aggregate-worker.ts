// One engine of the aggregation benchmark at one size, in a process of its own (forked by
// aggregate.bench.ts), so its RSS and garbage are its own: open it, load the 12 cities and N
// documents (batches of 1000, each awaited until durable where the engine is), settle (tetradb:
// checkpoint; PostgreSQL: VACUUM ANALYZE), answer a sample of every pipeline and check it against the
// answers of the engines that ran before it at this size (a difference stops here, before any
// timing, unless lib/agg-engines.ts KNOWN_DIFFERENCES lists it: that pipeline is then
// reported, not timed), then time each pipeline from one caller. A pipeline an engine refuses (tetradb's
// blocking-stage bound, say) is reported with its message and the others still run. Memory is
// sampled every 250 ms, over the whole run and per pipeline (no forced GC). Sends one
// AggWorkerResult over IPC.
import { performance } from 'node:perf_hooks';
import { cityDocuments, checkOfAnswer, PIPELINES, sampleCalls, TIMED_CALLS, CITIES_COLLECTION, COLLECTION, type AggPipeline, type PipelineName } from './lib/agg-workload.js';
import { KNOWN_DIFFERENCES, openAggEngine, type AggBenchEngine, type AggEngineName, type AggEngineOptions } from './lib/agg-engines.js';
import { BATCH_DOCS } from './lib/docs-workload.js';
import { makeQueryDocument, type QueryDocument } from './lib/documents.js';
import { closedLoop } from './lib/harness.js';
import { sampledLoad, startSampler } from './lib/sampler.js';
import { compareChecks, type SampleCheck } from './lib/sql-workload.js';
import { workerMain } from './lib/worker-main.js';
import { applyHeapGrowth, loadConfig } from '../server/config.js';

/** An answer of the sample, and the engine that gave it. */
export interface ExpectedCheck {
  engine: AggEngineName;
  pipeline: PipelineName;
  check: SampleCheck;
}

export interface AggTask extends AggEngineOptions {
  engine: AggEngineName;
  dir: string;
  size: number;
  /** Time per pipeline (after a warm-up of a quarter of it). */
  seconds: number;
  /** The load gives up after this long (the engine is then reported as skipped, with why). */
  maxLoadSeconds: number;
  /** The answers of the engines that ran before at this size. */
  expected: ExpectedCheck[];
  /** Pipelines not to run at this size, and why (a call would take too long). */
  skip: Partial<Record<PipelineName, string>>;
}

export type PipelineResult =
  | {
      pipeline: PipelineName;
      ok: true;
      hz: number;
      p50Us: number;
      p99Us: number;
      /** Calls timed. */
      ops: number;
      /** Peaks while this pipeline was timed (its warm-up included). */
      peakRssMiB: number;
      peakHeapMiB: number;
      extraPeaks: Record<string, number>;
    }
  /** The engine cannot run it (mingo's writes) or refused it; `reason` says which. */
  | { pipeline: PipelineName; ok: false; reason: string };

export type AggWorkerResult =
  | {
      ok: true;
      engine: AggEngineName;
      size: number;
      openMs: number;
      /** Documents per second of the load (batches of 1000, each awaited). */
      loadDocsPerSecond: number;
      loadSeconds: number;
      settleSeconds: number;
      checks: ExpectedCheck[];
      pipelines: PipelineResult[];
      loadedRssMiB: number;
      loadedHeapMiB: number;
      /** Peaks over the whole run (load and pipelines). */
      peakRssMiB: number;
      peakHeapMiB: number;
      extraPeaks: Record<string, number>;
    }
  | { ok: false; engine: AggEngineName; size: number; reason: string };

const MiB = 2 ** 20;
const SAMPLE_MS = 250;
/** Room for the timed calls' latencies: far above what any pipeline reaches in its seconds. */
const MAX_OPS = 1_000_000;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The engine's answers to the sample of `p`; a write's answer is its target read back. */
async function answer(engine: AggBenchEngine, p: AggPipeline, size: number): Promise<SampleCheck[]> {
  const checks: SampleCheck[] = [];
  for (const { label, call } of sampleCalls(p, size)) {
    const docs = await engine.run(p, call);
    checks.push(checkOfAnswer(p, label, p.target === undefined ? docs : await engine.readBack(p.target)));
  }
  return checks;
}

/**
 * Compares every answer with the ones the engines before gave for the same call (only pipelines
 * both answered: one refused is reported, not a difference). Returns the pipelines whose answers
 * differ as `known` says they do (reported, not timed).
 * @throws naming every other difference: timings of different answers mean nothing
 */
function compareAll(engine: AggEngineName, checks: readonly ExpectedCheck[], expected: readonly ExpectedCheck[], known: Partial<Record<PipelineName, string>>): Map<PipelineName, string> {
  const differing = new Map<PipelineName, string>();
  const bad: string[] = [];
  for (const pipeline of new Set(checks.map((c) => c.pipeline))) {
    const mine = checks.filter((c) => c.pipeline === pipeline).map((c) => c.check);
    for (const reference of new Set(expected.map((e) => e.engine))) {
      const theirs = expected.filter((e) => e.engine === reference && e.pipeline === pipeline).map((e) => e.check);
      try {
        compareChecks(engine, mine, reference, theirs);
      } catch (err) {
        const why = known[pipeline];
        if (why !== undefined) differing.set(pipeline, `answers differ from ${reference}'s, as known: ${why}`);
        else bad.push(message(err));
      }
    }
  }
  if (bad.length > 0) throw new Error(bad.join('\n'));
  return differing;
}

async function time(task: AggTask, engine: AggBenchEngine, p: AggPipeline): Promise<PipelineResult> {
  const calls = p.calls(task.size, TIMED_CALLS, 1);
  // One caller in a closed loop for every engine: each call costs a millisecond or more, so an
  // await per call (mingo's are synchronous) adds nothing that shows.
  const run = (seq: number): unknown => engine.run(p, calls[seq % calls.length]!);
  const sampler = startSampler(SAMPLE_MS, engine.memoryExtra);
  try {
    await closedLoop({ workers: 1, seconds: task.seconds / 4, maxOps: MAX_OPS }, run);
    const r = await closedLoop({ workers: 1, seconds: task.seconds, maxOps: MAX_OPS }, run);
    const peaks = sampler.stop();
    return { pipeline: p.name, ok: true, hz: r.hz, p50Us: r.p50Us, p99Us: r.p99Us, ops: r.ops, peakRssMiB: peaks.peakRssMiB, peakHeapMiB: peaks.peakHeapMiB, extraPeaks: peaks.extraPeaks };
  } catch (err) {
    sampler.stop();
    return { pipeline: p.name, ok: false, reason: message(err) };
  }
}

async function runTask(task: AggTask): Promise<AggWorkerResult> {
  const fail = (err: unknown): AggWorkerResult => ({ ok: false, engine: task.engine, size: task.size, reason: message(err) });
  // tetradb's process runs with the heap growth `npm start` sets, before its heap grows; the
  // others with V8's own policy, as users run them.
  if (task.engine === 'tetradb') applyHeapGrowth(loadConfig(process.env, []).heapGrowthPercent);
  const t0 = performance.now();
  let engine: AggBenchEngine;
  try {
    engine = await openAggEngine(task.engine, task.dir, task);
  } catch (err) {
    return fail(err);
  }
  const openMs = performance.now() - t0;
  const sampler = startSampler(SAMPLE_MS, engine.memoryExtra);
  try {
    await engine.insertMany(CITIES_COLLECTION, cityDocuments());
    const load = await sampledLoad({ size: task.size, batch: BATCH_DOCS, maxSeconds: task.maxLoadSeconds, intervalMs: SAMPLE_MS }, async (from, to) => {
      const docs: QueryDocument[] = [];
      for (let i = from; i < to; i++) docs.push(makeQueryDocument(i));
      await engine.insertMany(COLLECTION, docs as unknown as Array<Record<string, unknown>>);
    });
    if (load.loaded < task.size) throw new Error(`load not done after its time limit of ${task.maxLoadSeconds} s: ${load.loaded} of ${task.size} documents loaded`);
    const s0 = performance.now();
    await engine.settle();
    const settleSeconds = (performance.now() - s0) / 1000;
    const loaded = process.memoryUsage();

    const checks: ExpectedCheck[] = [];
    const refused = new Map<PipelineName, string>();
    for (const p of PIPELINES) {
      if (!engine.supports(p)) {
        refused.set(p.name, p.needsIndexes === true ? `${task.engine} has no indexes: a scan per input document would take minutes a call` : `${task.engine} cannot run it (no storage to write into)`);
        continue;
      }
      const skip = task.skip[p.name];
      if (skip !== undefined) {
        refused.set(p.name, `skipped: ${skip}`);
        continue;
      }
      try {
        for (const check of await answer(engine, p, task.size)) checks.push({ engine: task.engine, pipeline: p.name, check });
      } catch (err) {
        refused.set(p.name, `refused: ${message(err)}`);
      }
    }
    for (const [pipeline, why] of compareAll(task.engine, checks, task.expected, KNOWN_DIFFERENCES[task.engine] ?? {})) refused.set(pipeline, why);

    const pipelines: PipelineResult[] = [];
    for (const p of PIPELINES) {
      const reason = refused.get(p.name);
      pipelines.push(reason !== undefined ? { pipeline: p.name, ok: false, reason } : await time(task, engine, p));
    }
    const peaks = sampler.stop();
    return {
      ok: true,
      engine: task.engine,
      size: task.size,
      openMs,
      loadDocsPerSecond: task.size / load.loadSeconds,
      loadSeconds: load.loadSeconds,
      settleSeconds,
      // A known wrong answer is no reference for the engines after this one.
      checks: checks.filter((c) => !refused.has(c.pipeline)),
      pipelines,
      loadedRssMiB: loaded.rss / MiB,
      loadedHeapMiB: loaded.heapUsed / MiB,
      peakRssMiB: peaks.peakRssMiB,
      peakHeapMiB: peaks.peakHeapMiB,
      extraPeaks: peaks.extraPeaks,
    };
  } catch (err) {
    sampler.stop();
    return fail(err);
  } finally {
    await engine.close().catch(() => undefined);
  }
}

workerMain(runTask);
