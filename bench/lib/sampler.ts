// What an operator sees while a workload runs: the process's RSS, V8 heap and Buffer memory
// sampled on a timer (no forced GC), the event loop's delay and GC pauses from perf_hooks. Used by the
// memory and stalls benchmarks inside their worker processes.
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

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
