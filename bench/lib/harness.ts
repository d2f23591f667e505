// Timing. Throughput of synchronous reads comes from benchmark.js (calibrated cycles, a relative
// margin of error); latency percentiles come from a separate pass that times each call alone,
// because benchmark.js keeps per-cycle means, not per-call times. Writes and asynchronous reads
// run as a closed loop: N workers, each starting its next operation when the last one resolved.
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import Benchmark from 'benchmark';

export interface Throughput {
  /** Operations per second. */
  hz: number;
  /** benchmark.js relative margin of error, in percent (absent for closed loops). */
  rmePct?: number;
}

export interface Latency {
  p50Us: number;
  p99Us: number;
  samples: number;
}

export interface LoopResult extends Throughput, Latency {
  ops: number;
  seconds: number;
}

/** Throughput of a synchronous operation, measured by benchmark.js for about `seconds`. */
export function benchmarkSync(name: string, fn: () => void, seconds: number): Throughput {
  const bench = new Benchmark(name, fn, { maxTime: seconds, minSamples: 5, initCount: 1 });
  bench.run();
  if (bench.error !== undefined && bench.error !== null) throw bench.error;
  return { hz: bench.hz, rmePct: bench.stats.rme };
}

/**
 * Per-call latencies of a synchronous operation: up to `count` calls or `seconds`, whichever
 * ends first. Each call is timed alone, so the timer's own cost (tens of ns) is included.
 */
export function sampleSync(fn: () => void, count: number, seconds: number): Latency {
  const times = new Float64Array(count);
  const deadline = performance.now() + seconds * 1000;
  let n = 0;
  while (n < count) {
    const t0 = performance.now();
    fn();
    const t1 = performance.now();
    times[n++] = (t1 - t0) * 1000;
    if ((n & 255) === 0 && t1 > deadline) break;
  }
  return latency(times.subarray(0, n));
}

/** How often a closed loop lets the event loop turn (timers run), in milliseconds. */
const TURN_MS = 5;

export interface LoopOptions {
  workers: number;
  seconds: number;
  maxOps: number;
  /** Untimed operations first, so the loop measures a running engine, not its start-up. */
  warmupOps?: number;
  /**
   * Synchronous operations (SQLite) cannot overlap. With several workers each yields a turn of
   * the event loop before its call, so its latency includes waiting for the workers ahead of it,
   * as a request in a server would.
   */
  yieldBeforeOp?: boolean;
}

/**
 * Runs `op` from `workers` concurrent workers until `seconds` or `maxOps`; each worker awaits its
 * operation before starting the next. `op` receives a sequence number unique across workers.
 */
export async function closedLoop(options: LoopOptions, op: (seq: number) => Promise<unknown> | unknown): Promise<LoopResult> {
  let seq = 0;
  for (let i = 0; i < (options.warmupOps ?? 0); i++) await op(seq++);
  const times = new Float64Array(options.maxOps);
  let done = 0;
  const start = performance.now();
  const deadline = start + options.seconds * 1000;
  let stop = false;
  let turnAt = start;
  const worker = async (): Promise<void> => {
    while (!stop) {
      const t0 = performance.now();
      if (options.yieldBeforeOp === true) await nextTurn();
      if (stop) return;
      await op(seq++);
      const t1 = performance.now();
      if (done < times.length) times[done] = (t1 - t0) * 1000;
      done++;
      if (done >= options.maxOps || t1 >= deadline) stop = true;
      else if (t1 - turnAt >= TURN_MS) {
        // An operation that resolves without I/O (a cache hit) never lets the event loop turn, so
        // timers would not run for the whole loop: the engine's own (tetradb's memory governor,
        // which gives the page cache back its room after a load) and the memory sampler's. A
        // server's requests arrive through I/O, which turns it between them; so does this, every
        // TURN_MS, outside the operation's timing (its cost, ~10 µs a turn, counts in the rate).
        turnAt = t1;
        await nextTurn();
      }
    }
  };
  await Promise.all(Array.from({ length: options.workers }, worker));
  const seconds = (performance.now() - start) / 1000;
  const lat = latency(times.subarray(0, Math.min(done, times.length)));
  return { ops: done, seconds, hz: done / seconds, ...lat };
}

function latency(times: Float64Array): Latency {
  const sorted = Float64Array.from(times).sort();
  return { p50Us: percentile(sorted, 0.5), p99Us: percentile(sorted, 0.99), samples: sorted.length };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

export interface MemorySample {
  rssMiB: number;
  heapMiB: number;
  /** Memory of ArrayBuffers (Buffers' bytes live outside the V8 heap). */
  buffersMiB: number;
}

/**
 * Resident set, V8 heap and Buffer bytes now, after full GCs when the process was started with
 * --expose-gc (twice: the first leaves some ArrayBuffers' memory to be freed by the next).
 */
export function memory(): MemorySample {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc !== undefined) {
    gc();
    gc();
  }
  const m = process.memoryUsage();
  return { rssMiB: m.rss / 2 ** 20, heapMiB: m.heapUsed / 2 ** 20, buffersMiB: m.arrayBuffers / 2 ** 20 };
}

/** Wall time of `fn` in milliseconds, with its result. */
export async function timed<T>(fn: () => Promise<T> | T): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}
