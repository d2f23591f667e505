import { describe, expect, it } from 'vitest';
import { PageCache } from '../../engine/storage/index.js';

describe('PageCache', () => {
  it('never holds more than its byte budget and evicts the least recently used first', () => {
    const cache = new PageCache<string>(10_000);
    const f = cache.allocateFileId();
    for (let i = 1; i <= 5; i++) cache.set(PageCache.key(f, i), `p${i}`, 2_000);
    expect(cache.bytes).toBe(10_000);
    cache.get(PageCache.key(f, 1)); // page 1 becomes most recent
    cache.set(PageCache.key(f, 6), 'p6', 2_000);
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
    expect(cache.get(PageCache.key(f, 2))).toBeUndefined(); // the oldest untouched page went
    expect(cache.get(PageCache.key(f, 1))).toBe('p1');
    expect(cache.get(PageCache.key(f, 6))).toBe('p6');
  });

  it('purges one file without touching another', () => {
    const cache = new PageCache<string>(1_000_000);
    const a = cache.allocateFileId();
    const b = cache.allocateFileId();
    cache.set(PageCache.key(a, 1), 'a1', 100);
    cache.set(PageCache.key(b, 1), 'b1', 100);
    cache.purgeFile(a);
    expect(cache.get(PageCache.key(a, 1))).toBeUndefined();
    expect(cache.get(PageCache.key(b, 1))).toBe('b1');
    expect(cache.bytes).toBe(100);
  });

  it('skips entries larger than the whole budget', () => {
    const cache = new PageCache<string>(100);
    cache.set(1, 'huge', 1_000);
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
  });
});
