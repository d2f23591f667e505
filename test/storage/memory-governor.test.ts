import { describe, expect, it } from 'vitest';
import { MemoryGovernor, PageCache } from '../../engine/storage/index.js';

// The governor's levers in process, on a real RSS: resident ballast (a filled Buffer) far past a
// small bound. test/memory/rss-bound.test.ts runs it inside the real server under a load.

const MiB = 1024 * 1024;

// Writes in progress (a quarter of the dirty budget in use): the governor cuts as it does during a
// load, through memory not in use too (while writes are few it counts that memory as room, which
// makes what it cuts depend on what the allocator happens to hold).
function filledCache(): PageCache<string> {
  const cache = new PageCache<string>(8 * MiB, { dirtyBytes: 8 * MiB });
  const file = cache.allocateFileId();
  for (let i = 0; i < 128; i++) cache.set(PageCache.key(file, i), `p${i}`, 64 * 1024);
  expect(cache.bytes).toBe(8 * MiB);
  cache.dirty.add(2 * MiB);
  return cache;
}

describe('MemoryGovernor', () => {
  it('pulls the cache, then the dirty budget, then (both at their floors) the heap growth while the RSS is past its bound, and gives everything back on stop', async () => {
    const cache = filledCache();
    const governor = new MemoryGovernor(cache, { intervalMs: 60_000 });
    try {
      const ballast = Buffer.alloc(96 * MiB, 1); // resident: 6x the 16 MiB bound
      governor.check();
      let state = governor.state;
      expect(state.boundBytes).toBe(16 * MiB);
      expect(state.growthBytes).toBeGreaterThan(90 * MiB);
      expect(state.cuts).toBe(1);
      // An excess larger than both budgets can give: the cache down to its floor (a sixteenth),
      // the dirty budget down to half, and then V8's heap growth held.
      expect(cache.limit).toBe(512 * 1024);
      expect(cache.bytes).toBeLessThanOrEqual(cache.limit);
      expect(cache.dirty.limit).toBe(4 * MiB);
      expect(state.tightHeap).toBe(true);
      // What was cut counts as pending: a reading right after cuts nothing more.
      governor.check();
      expect(governor.state.cuts).toBe(1);
      // Once the pending cut has had its time (no full collection needed), it cuts again; every
      // lever is at its floor already.
      await new Promise((r) => setTimeout(r, 2100));
      governor.check();
      state = governor.state;
      expect(state.cuts).toBe(2);
      expect(cache.dirty.limit).toBe(4 * MiB); // down to half, no lower
      expect(cache.limit).toBe(512 * 1024);
      expect(ballast[ballast.length - 1]).toBe(1);
    } finally {
      governor.stop();
    }
    expect(cache.limit).toBe(8 * MiB);
    expect(cache.dirty.limit).toBe(8 * MiB);
    expect(governor.state.tightHeap).toBe(false);
  });

  it('takes a small excess from the cache alone, and a larger one from the dirty budget next, before touching the heap growth', () => {
    const cache = filledCache();
    // The bound is set per reading through the memory accounted elsewhere, so the excess over the
    // cut line (70% of the bound) is what the test chooses, whatever the RSS grew by.
    let extra = 1024 * MiB;
    const governor = new MemoryGovernor(cache, { intervalMs: 60_000, extraBytes: () => extra });
    try {
      const ballast = Buffer.alloc(64 * MiB, 1);
      governor.check();
      expect(governor.state.cuts).toBe(0);
      const growth = governor.state.growthBytes;
      // An excess of ~4 MiB: the cache (8 MiB, floor 0.5) gives it all.
      extra = Math.ceil((growth - 4 * MiB) / 0.7) - 16 * MiB;
      governor.check();
      let state = governor.state;
      expect(state.cuts).toBe(1);
      expect(cache.limit).toBeLessThan(6 * MiB);
      expect(cache.limit).toBeGreaterThan(512 * 1024);
      expect(cache.dirty.limit).toBe(8 * MiB);
      expect(state.tightHeap).toBe(false);
      governor.stop();

      // A fresh cache and governor, an excess of ~10 MiB: the cache to its floor (7.5 MiB), the
      // rest (~2.5 MiB) from the dirty budget, which stays above its floor (4 MiB), so the heap
      // growth is left alone.
      const cache2 = filledCache();
      const second = new MemoryGovernor(cache2, { intervalMs: 60_000, extraBytes: () => extra });
      try {
        extra = 1024 * MiB;
        const ballast2 = Buffer.alloc(64 * MiB, 2);
        second.check();
        const growth2 = second.state.growthBytes;
        extra = Math.ceil((growth2 - 10 * MiB) / 0.7) - 16 * MiB;
        second.check();
        state = second.state;
        expect(state.cuts).toBe(1);
        expect(cache2.limit).toBe(512 * 1024);
        expect(cache2.dirty.limit).toBeLessThan(7 * MiB);
        expect(cache2.dirty.limit).toBeGreaterThan(4 * MiB);
        expect(state.tightHeap).toBe(false);
        expect(ballast2[0]).toBe(2);
      } finally {
        second.stop();
      }
      expect(ballast[0]).toBe(1);
    } finally {
      governor.stop();
    }
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

// Readings the test chooses (the options' memoryUsage and clock): what the process holds after a
// burst of writes, when the RSS stays high but little of it is in use.
describe('MemoryGovernor after writes stop', () => {
  const BASE: NodeJS.MemoryUsage = { rss: 200 * MiB, heapTotal: 40 * MiB, heapUsed: 30 * MiB, external: 10 * MiB, arrayBuffers: 5 * MiB };

  /** A governor over a full 64 MiB cache and a 32 MiB dirty budget (bound 96 MiB, cut line 67.2), its readings set by `at`. */
  function governed(): { cache: PageCache<string>; governor: MemoryGovernor; at: (ms: number, rssGrowth: number, inUse: number, dirty: number) => void; fill: () => void } {
    const cache = new PageCache<string>(64 * MiB, { dirtyBytes: 32 * MiB });
    const file = cache.allocateFileId();
    const fill = (): void => {
      for (let i = 0; i < 1024; i++) cache.set(PageCache.key(file, i), `p${i}`, 64 * 1024);
    };
    fill();
    let reading = BASE;
    let clock = 0;
    const governor = new MemoryGovernor(cache, { intervalMs: 60_000, memoryUsage: () => reading, now: () => clock });
    return {
      cache,
      governor,
      fill,
      at(ms, rssGrowth, inUse, dirty) {
        clock = ms;
        reading = { ...BASE, rss: BASE.rss + rssGrowth, heapUsed: BASE.heapUsed + inUse };
        cache.dirty.add(dirty - cache.dirty.bytes);
        governor.check();
      },
    };
  }

  it('cuts the cache while writes go on and gives it back once they stop, though the RSS stays past the cut line in memory not in use', () => {
    const { cache, governor, at } = governed();
    try {
      // A burst of writes: dirty memory growing, the RSS 130 MiB up (past the 67.2 MiB cut line),
      // only 30 MiB of it in use. While writes go on, memory not in use is no room (a load's RSS
      // grows through it): the cache is cut to its floor.
      at(0, 130 * MiB, 30 * MiB, 8 * MiB);
      at(100, 130 * MiB, 30 * MiB, 12 * MiB);
      expect(governor.state.cuts).toBeGreaterThan(0);
      expect(cache.limit).toBe(4 * MiB);
      // Writes continue for a while: no give-back.
      for (let t = 200; t <= 2600; t += 100) at(t, 130 * MiB, 30 * MiB, 12 * MiB + t * 1024);
      expect(cache.limit).toBe(4 * MiB);
      // The writes stop. The dirty data stays (12+ MiB, past an eighth of the budget, until a
      // checkpoint) and so does the RSS, but the 100 MiB not in use is room: after a second
      // without dirty growth, the limits come back a step at a time while the RSS does not grow.
      const dirtyLeft = cache.dirty.bytes;
      const cutsBefore = governor.state.cuts;
      for (let t = 2700; t <= 3600; t += 100) at(t, 130 * MiB, 30 * MiB, dirtyLeft);
      expect(cache.limit).toBe(4 * MiB); // not within the first second
      for (let t = 3700; t <= 12_000; t += 100) at(t, 130 * MiB, 30 * MiB, dirtyLeft);
      expect(governor.state.cuts).toBe(cutsBefore);
      expect(cache.limit).toBe(64 * MiB);
      expect(cache.dirty.limit).toBe(32 * MiB);
    } finally {
      governor.stop();
    }
  });

  it('stops giving back when a step makes the RSS grow, and cuts again once what is in use passes the cut line', () => {
    const { cache, governor, at, fill } = governed();
    try {
      at(0, 130 * MiB, 30 * MiB, 8 * MiB);
      at(100, 130 * MiB, 30 * MiB, 12 * MiB);
      expect(cache.limit).toBe(4 * MiB);
      // Writes stopped; pending cuts expire after 2 s.
      let t = 2200;
      for (; t <= 3400; t += 100) at(t, 130 * MiB, 30 * MiB, 12 * MiB);
      const raised = cache.limit;
      expect(raised).toBeGreaterThan(4 * MiB);
      // The step raised the RSS (the allocator had no room after all): no further step while it
      // stays there (the next probe only after CALM_MS, 3 s).
      const grown = 130 * MiB + 6 * MiB;
      for (const end = t + 2500; t <= end; t += 100) at(t, grown, 30 * MiB, 12 * MiB);
      expect(cache.limit).toBe(raised);
      // Reads fill the cache: what is in use passes the cut line, and the cache is cut again.
      fill();
      at(t, 140 * MiB, 125 * MiB, 12 * MiB);
      expect(cache.limit).toBeLessThan(raised);
    } finally {
      governor.stop();
    }
  });
});
