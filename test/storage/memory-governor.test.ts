import { describe, expect, it } from 'vitest';
import { MemoryGovernor, PageCache } from '../../engine/storage/index.js';

// The governor's levers in process, on a real RSS: resident ballast (a filled Buffer) far past a
// small bound. test/memory/rss-bound.test.ts runs it inside the real server under a load.

const MiB = 1024 * 1024;

function filledCache(): PageCache<string> {
  const cache = new PageCache<string>(8 * MiB, { dirtyBytes: 8 * MiB });
  const file = cache.allocateFileId();
  for (let i = 0; i < 128; i++) cache.set(PageCache.key(file, i), `p${i}`, 64 * 1024);
  expect(cache.bytes).toBe(8 * MiB);
  return cache;
}

describe('MemoryGovernor', () => {
  it('pulls the cache, then the heap growth, then the dirty budget while the RSS is past its bound, and gives everything back on stop', async () => {
    const cache = filledCache();
    const governor = new MemoryGovernor(cache, { intervalMs: 60_000 });
    try {
      const ballast = Buffer.alloc(96 * MiB, 1); // resident: 6x the 16 MiB bound
      governor.check();
      let state = governor.state;
      expect(state.boundBytes).toBe(16 * MiB);
      expect(state.growthBytes).toBeGreaterThan(90 * MiB);
      expect(state.cuts).toBe(1);
      // The cache down to its floor (a sixteenth), then V8's heap growth held.
      expect(cache.limit).toBe(512 * 1024);
      expect(cache.bytes).toBeLessThanOrEqual(cache.limit);
      expect(state.tightHeap).toBe(true);
      // What was cut counts as pending: a reading right after cuts nothing more.
      governor.check();
      expect(governor.state.cuts).toBe(1);
      expect(cache.dirty.limit).toBe(8 * MiB);
      // Once the pending cut has had its time (no full collection needed), the next lever.
      await new Promise((r) => setTimeout(r, 2100));
      governor.check();
      state = governor.state;
      expect(state.cuts).toBe(2);
      expect(cache.dirty.limit).toBe(4 * MiB); // down to half, no lower
      expect(ballast[ballast.length - 1]).toBe(1);
    } finally {
      governor.stop();
    }
    expect(cache.limit).toBe(8 * MiB);
    expect(cache.dirty.limit).toBe(8 * MiB);
    expect(governor.state.tightHeap).toBe(false);
  });

  it('counts the memory other parts account for (the vector graphs) into its bound', () => {
    const cache = filledCache();
    const governor = new MemoryGovernor(cache, { intervalMs: 60_000, extraBytes: () => 1024 * MiB });
    try {
      const ballast = Buffer.alloc(96 * MiB, 1);
      governor.check();
      expect(governor.state.boundBytes).toBe(1040 * MiB);
      expect(governor.state.cuts).toBe(0);
      expect(cache.limit).toBe(8 * MiB);
      expect(ballast[0]).toBe(1);
    } finally {
      governor.stop();
    }
  });
});
