import { afterEach, describe, expect, it } from 'vitest';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

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

  it('never hands out the id of a file that is still open, however often ids wrap', () => {
    const cache = new PageCache<string>(1_000_000, { maxFileIds: 4 });
    const longLived = cache.allocateFileId();
    cache.set(PageCache.key(longLived, 7), 'system page', 100);
    const seen = new Set<number>();
    for (let i = 0; i < 100; i++) {
      const id = cache.allocateFileId();
      expect(id).not.toBe(longLived);
      seen.add(id);
      expect(cache.get(PageCache.key(id, 7))).toBeUndefined();
      cache.set(PageCache.key(id, 7), `churn ${i}`, 100);
      cache.releaseFileId(id);
    }
    expect(seen.size).toBeGreaterThan(1); // the ids did wrap
    expect(cache.get(PageCache.key(longLived, 7))).toBe('system page');
  });

  it('refuses to open more files than it has ids for, rather than share one', () => {
    const cache = new PageCache<string>(1_000_000, { maxFileIds: 3 });
    cache.allocateFileId();
    cache.allocateFileId();
    expect(() => cache.allocateFileId()).toThrow(expect.objectContaining({ code: 'UNAVAILABLE' }));
  });

  it('keeps a long-lived store reading its own pages while other stores open, compact and close until ids wrap', async () => {
    const cache = new PageCache<TreeNode>(4 * 1024 * 1024, { maxFileIds: 5 });
    const dir = tempDir('wrap');
    dirs.push(dir);
    const key = (i: number) => Buffer.from(`key-${String(i).padStart(5, '0')}`);
    const options = { cache, checkpointIntervalMs: 0, fsync: 'off' as const };
    const system = await TenantStore.open(`${dir.path}/system`, options);
    await system.write(Array.from({ length: 2000 }, (_, i) => ({ op: 'put' as const, tree: 't', key: key(i), value: Buffer.from(`system-${i}`) })));
    await system.checkpoint(); // its pages are now in the cache under its file id
    for (let round = 0; round < 12; round++) {
      const tenant = await TenantStore.open(`${dir.path}/tenant-${round % 3}`, options);
      // The same keys, other values: a shared id would serve one store the other's pages.
      await tenant.write(Array.from({ length: 2000 }, (_, i) => ({ op: 'put' as const, tree: 't', key: key(i), value: Buffer.from(`tenant-${round}-${i}`) })));
      await tenant.checkpoint();
      await tenant.compact(); // a new file, a new id
      for (const i of [0, 777, 1999]) {
        expect(tenant.get('t', key(i))?.toString()).toBe(`tenant-${round}-${i}`);
        expect(system.get('t', key(i))?.toString()).toBe(`system-${i}`);
      }
      await tenant.close();
    }
    expect([...system.scan('t')].every(([k, v]) => v.toString() === `system-${Number(k.toString().slice(4))}`)).toBe(true);
    await system.close();
    expect(cache.openFileIds).toBe(0);
  });
});
