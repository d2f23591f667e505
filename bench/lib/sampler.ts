// What an operator sees while a workload runs: the process's RSS, V8 heap and Buffer memory
// sampled on a timer (no forced GC), the event loop's delay and GC pauses from perf_hooks; and a
// batched load run under that sampling. Used by the memory, documents-memory and stalls benchmarks
// inside their worker processes.
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';

const MiB = 2 ** 20;

/** monitorEventLoopDelay's timer period: the histogram's values include it (idle ≈ 10 ms). */
export const LOOP_RESOLUTION_MS = 10;

export interface LoopDelay {
  /** Percentiles of the recorded delays in ms, as perf_hooks reports them (timer period included). */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  samples: number;
}

export interface MemoryPeaks {
  peakRssMiB: number;
  peakHeapMiB: number;
  peakBuffersMiB: number;
  /** The last sample, taken when the sampler stopped. */
  endRssMiB: number;
  endHeapMiB: number;
  endBuffersMiB: number;
  /** Peak of each extra figure the caller asked to sample (e.g. the dirty budget in use). */
  extraPeaks: Record<string, number>;
  samples: number;
}

/** Garbage-collection pauses seen by perf_hooks (they block the event loop). */
export interface GcPauses {
  count: number;
  totalMs: number;
  maxMs: number;
}

export interface SamplerResult extends MemoryPeaks {
  loop: LoopDelay;
  gc: GcPauses;
}

/**
 * Starts sampling memory every `intervalMs` and the event loop's delay continuously; stop()
 * takes a last sample and returns the peaks. `extra` adds figures of the caller's (sampled too).
 */
export function startSampler(intervalMs: number, extra?: () => Record<string, number>): { stop(): SamplerResult } {
  const histogram = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
  const peaks: MemoryPeaks = { peakRssMiB: 0, peakHeapMiB: 0, peakBuffersMiB: 0, endRssMiB: 0, endHeapMiB: 0, endBuffersMiB: 0, extraPeaks: {}, samples: 0 };
  const sample = (): void => {
    const m = process.memoryUsage();
    peaks.endRssMiB = m.rss / MiB;
    peaks.endHeapMiB = m.heapUsed / MiB;
    peaks.endBuffersMiB = m.arrayBuffers / MiB;
    peaks.peakRssMiB = Math.max(peaks.peakRssMiB, peaks.endRssMiB);
    peaks.peakHeapMiB = Math.max(peaks.peakHeapMiB, peaks.endHeapMiB);
    peaks.peakBuffersMiB = Math.max(peaks.peakBuffersMiB, peaks.endBuffersMiB);
    if (extra !== undefined) {
      for (const [name, value] of Object.entries(extra())) peaks.extraPeaks[name] = Math.max(peaks.extraPeaks[name] ?? -Infinity, value);
    }
    peaks.samples++;
  };
  const gc: GcPauses = { count: 0, totalMs: 0, maxMs: 0 };
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count++;
      gc.totalMs += entry.duration;
      gc.maxMs = Math.max(gc.maxMs, entry.duration);
    }
  });
  observer.observe({ entryTypes: ['gc'] });
  histogram.enable();
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop(): SamplerResult {
      clearInterval(timer);
      histogram.disable();
      observer.disconnect();
      sample();
      return {
        ...peaks,
        gc,
        loop: {
          p50Ms: histogram.percentile(50) / 1e6,
          p99Ms: histogram.percentile(99) / 1e6,
          maxMs: histogram.max / 1e6,
          samples: histogram.count,
        },
      };
    },
  };
}

export interface SampledLoad {
  sampled: SamplerResult;
  /** Items loaded: less than the size asked for when the time limit cut the load short. */
  loaded: number;
  loadSeconds: number;
}

/**
 * Loads items 0 to `size` - 1 through `loadBatch(from, to)` (to exclusive), `batch` at a time and
 * each awaited before the next, while startSampler(`intervalMs`, `extra`) runs; stops starting
 * batches once `maxSeconds` have passed. The sampler stops as soon as the last batch is done, so
 * whatever the caller does next (measuring files, closing) is not in the figures.
 */
export async function sampledLoad(
  options: { size: number; batch: number; maxSeconds: number; intervalMs: number; extra?: () => Record<string, number> },
  loadBatch: (from: number, to: number) => Promise<void>,
): Promise<SampledLoad> {
  const sampler = startSampler(options.intervalMs, options.extra);
  const started = performance.now();
  const deadline = started + options.maxSeconds * 1000;
  let loaded = 0;
  try {
    while (loaded < options.size && performance.now() < deadline) {
      const end = Math.min(options.size, loaded + options.batch);
      await loadBatch(loaded, end);
      loaded = end;
    }
  } catch (err) {
    // Its interval timer would otherwise keep the process alive after the failure.
    sampler.stop();
    throw err;
  }
  const loadSeconds = (performance.now() - started) / 1000;
  return { sampled: sampler.stop(), loaded, loadSeconds };
}
