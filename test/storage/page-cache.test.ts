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

describe('PageCache across a compaction', () => {
  it('keeps the pages readers used cached from the new file, and only those', async () => {
    const dir = tempDir('cache-compaction');
    dirs.push(dir);
    const options = { checkpointIntervalMs: 0, fsync: 'off' as const, compactMinBytes: 0 };
    const key = (i: number): Buffer => Buffer.from(`k${String(i).padStart(6, '0')}`);
    const writer = await TenantStore.open(dir.path, { cache: new PageCache<TreeNode>(64 * 1024 * 1024), ...options });
    await writer.write(Array.from({ length: 20_000 }, (_, i) => ({ op: 'put' as const, tree: 't', key: key(i), value: Buffer.alloc(100, i % 251) })));
    await writer.checkpoint();
    await writer.write(Array.from({ length: 10_000 }, (_, i) => ({ op: 'delete' as const, tree: 't', key: key(2 * i) }))); // garbage
    await writer.close();
    // Reopened with an empty cache: only what is read from here on is cached.
    const cache = new PageCache<TreeNode>(64 * 1024 * 1024);
    const store = await TenantStore.open(dir.path, { cache, ...options });
    // Read the upper half only: those leaves (and the branches above them) are the hot set.
    for (let i = 10_001; i < 20_000; i += 2) expect(store.get('t', key(i))?.[0]).toBe(i % 251);
    const cachedBefore = cache.size;
    await store.compact();
    const missesBefore = cache.misses;
    for (let i = 10_001; i < 20_000; i += 2) expect(store.get('t', key(i))?.[0]).toBe(i % 251);
    expect(cache.misses).toBe(missesBefore); // served from pages carried over to the new file
    expect(cache.size).toBeLessThanOrEqual(cachedBefore); // nothing cold was added
    for (let i = 1; i < 10_000; i += 2) expect(store.get('t', key(i))?.[0]).toBe(i % 251);
    expect(cache.misses).toBeGreaterThan(missesBefore); // the cold half is read from the new file
    await store.close();
  });
});

describe('copy-on-write of pages that are not cached', () => {
  it('reads them without caching them (the live tree never reads them again); reads still cache what they load', async () => {
    const dir = tempDir('cow-uncached');
    dirs.push(dir);
    const key = (i: number): Buffer => Buffer.from(`key-${String(i).padStart(6, '0')}`);
    const first = await TenantStore.open(dir.path, { cache: new PageCache<TreeNode>(8 * 1024 * 1024), checkpointIntervalMs: 0, fsync: 'off' });
    await first.write(Array.from({ length: 20_000 }, (_, i) => ({ op: 'put' as const, tree: 't', key: key(i), value: Buffer.alloc(60, i % 251) })));
    await first.close();

    // A fresh cache: nothing of the tree is cached.
    const cache = new PageCache<TreeNode>(8 * 1024 * 1024);
    const store = await TenantStore.open(dir.path, { cache, checkpointIntervalMs: 0, fsync: 'off' });
    const before = { size: cache.size, misses: cache.misses };
    // A write copies the path from the root to the leaf of key 10,000 (a root branch over ~200
    // leaves): two pages read...
    await store.write([{ op: 'put', tree: 't', key: key(10_000), value: Buffer.from('new') }]);
    expect(cache.misses).toBeGreaterThanOrEqual(before.misses + 2);
    // ...and none of them cached.
    expect(cache.size).toBe(before.size);
    expect(store.get('t', key(10_000))?.toString()).toBe('new');
    // A read far from it loads its own leaf (the path's branches are dirty copies now) and caches it.
    expect(store.get('t', key(19_990))).toEqual(Buffer.alloc(60, 19_990 % 251));
    expect(cache.size).toBeGreaterThan(before.size);
    await store.checkpoint();
    await store.close();

    const reopened = await TenantStore.open(dir.path, { cache: new PageCache<TreeNode>(8 * 1024 * 1024), checkpointIntervalMs: 0, fsync: 'off' });
    expect(reopened.get('t', key(10_000))?.toString()).toBe('new');
    expect(reopened.get('t', key(9_999))).toEqual(Buffer.alloc(60, 9_999 % 251));
    await reopened.close();
  });
});

describe('long scans and the cache', () => {
  it('a scan of a tree larger than the cache leaves the pages other readers use cached; pages a scan reads join the cache when read again', async () => {
    const dir = tempDir('scan-resistance');
    dirs.push(dir);
    const key = (i: number): Buffer => Buffer.from(`key-${String(i).padStart(6, '0')}`);
    const first = await TenantStore.open(dir.path, { cache: new PageCache<TreeNode>(64 * 1024 * 1024), checkpointIntervalMs: 0, fsync: 'off' });
    await first.write(Array.from({ length: 2_000 }, (_, i) => ({ op: 'put' as const, tree: 'hot', key: key(i), value: Buffer.alloc(100, 1) })));
    await first.write(Array.from({ length: 3_000 }, (_, i) => ({ op: 'put' as const, tree: 'mid', key: key(i), value: Buffer.alloc(100, 3) })));
    for (let batch = 0; batch < 6; batch++) {
      await first.write(Array.from({ length: 10_000 }, (_, i) => ({ op: 'put' as const, tree: 'big', key: key(batch * 10_000 + i), value: Buffer.alloc(100, 2) })));
    }
    await first.checkpoint();
    await first.close();

    // 2 MiB: ~240 pages; 'big' has ~850 leaves, 'hot' ~30, 'mid' ~45.
    const cache = new PageCache<TreeNode>(2 * 1024 * 1024);
    const store = await TenantStore.open(dir.path, { cache, checkpointIntervalMs: 0, fsync: 'off' });
    const readHot = (): void => {
      for (let i = 0; i < 2_000; i++) expect(store.get('hot', key(i))?.length).toBe(100);
    };
    const scan = (tree: string): number => {
      let rows = 0;
      for (const _entry of store.scan(tree)) rows++;
      return rows;
    };
    readHot();
    let misses = cache.misses;
    readHot();
    expect(cache.misses).toBe(misses);

    // Twice through 3.5x the cache, the hot set untouched meanwhile: it is still all there.
    expect(scan('big')).toBe(60_000);
    expect(scan('big')).toBe(60_000);
    expect(cache.bytes).toBeLessThanOrEqual(2 * 1024 * 1024);
    misses = cache.misses;
    readHot();
    expect(cache.misses).toBe(misses);

    // A tree scanned again is read from the cache, and from then on its pages are the cache's own:
    // a long scan in between does not push them out either.
    expect(scan('mid')).toBe(3_000);
    misses = cache.misses;
    expect(scan('mid')).toBe(3_000);
    expect(cache.misses).toBe(misses);
    scan('big');
    misses = cache.misses;
    expect(scan('mid')).toBe(3_000);
    readHot();
    expect(cache.misses).toBe(misses);
    await store.close();
  });
});

describe('the dirty budget across checkpoints', () => {
  it('counts nothing once a checkpoint with no write during it is done: the catalog copies it makes included', async () => {
    const cache = new PageCache<TreeNode>(8 * 1024 * 1024, { dirtyBytes: 64 * 1024 * 1024 });
    const dir = tempDir('budget-after-checkpoint');
    dirs.push(dir);
    const store = await TenantStore.open(dir.path, { cache, checkpointIntervalMs: 0, fsync: 'off' });
    for (let round = 0; round < 4; round++) {
      // Random keys over a checkpointed tree: dirty leaves copy clean pages (carved from slabs),
      // and each checkpoint copies the catalog's leaf to record the tree's new root.
      await store.write(Array.from({ length: 2000 }, (_, i) => ({ op: 'put' as const, tree: `t${round % 2}`, key: Buffer.from(`k${(i * 7919 + round) % 5000}`), value: Buffer.alloc(40, round) })));
      expect(cache.dirty.bytes).toBeGreaterThan(0);
      await store.checkpoint();
      expect(store.stats().pendingBytes).toBe(0);
      expect(cache.dirty.bytes).toBe(0);
    }
    await store.close();
  });
});

describe('limits in force below the configured ones (the memory governor lowers them)', () => {
  it('PageCache.setLimit evicts down to the new limit at once, holds it, and never goes past maxBytes', () => {
    const cache = new PageCache<string>(100_000);
    const f = cache.allocateFileId();
    for (let i = 1; i <= 50; i++) cache.set(PageCache.key(f, i), `p${i}`, 2_000);
    expect(cache.bytes).toBe(100_000);
    cache.get(PageCache.key(f, 50)); // used: survives the first pass
    cache.setLimit(20_000);
    expect(cache.limit).toBe(20_000);
    expect(cache.bytes).toBeLessThanOrEqual(20_000);
    expect(cache.get(PageCache.key(f, 50))).toBe('p50');
    for (let i = 51; i <= 80; i++) cache.set(PageCache.key(f, i), `p${i}`, 2_000);
    expect(cache.bytes).toBeLessThanOrEqual(20_000);
    // An entry larger than the limit in force is not cached.
    cache.set(PageCache.key(f, 99), 'big', 30_000);
    expect(cache.has(PageCache.key(f, 99))).toBe(false);
    cache.setLimit(10 ** 9);
    expect(cache.limit).toBe(100_000);
    for (let i = 100; i <= 200; i++) cache.set(PageCache.key(f, i), `p${i}`, 2_000);
    expect(cache.bytes).toBeGreaterThan(90_000);
    expect(cache.bytes).toBeLessThanOrEqual(100_000);
  });

  it('a lower dirty limit starts a checkpoint and holds acknowledgements until it makes room; refusal stays at twice the configured limit', async () => {
    const MiB = 1024 * 1024;
    const cache = new PageCache<TreeNode>(8 * MiB, { dirtyBytes: 32 * MiB });
    const dir = tempDir('dirty-limit');
    dirs.push(dir);
    // No timed checkpoints and no WAL-size trigger in reach: only the budget starts one.
    const store = await TenantStore.open(dir.path, { cache, checkpointIntervalMs: 0, fsync: 'off' });
    let checkpoints = 0;
    store.onCheckpoint(() => checkpoints++);
    await store.write(Array.from({ length: 3000 }, (_, i) => ({ op: 'put' as const, tree: 't', key: Buffer.from(`k${String(i).padStart(6, '0')}`), value: Buffer.alloc(400, 1) })));
    const used = cache.dirty.bytes;
    expect(used).toBeGreaterThan(MiB);
    expect(used).toBeLessThan(16 * MiB); // below the configured checkpoint threshold
    expect(checkpoints).toBe(0);
    expect(cache.dirty.full).toBe(false);

    cache.dirty.setLimit(used / 2);
    expect(cache.dirty.limit).toBe(Math.floor(used / 2));
    expect(cache.dirty.full).toBe(true);
    expect(cache.dirty.exhausted).toBe(false); // refusal counts from the configured 32 MiB
    // An acknowledgement now waits for room, which the checkpoint the lower limit started makes.
    const room = cache.dirty.room();
    expect(room).toBeDefined();
    await room;
    expect(cache.dirty.bytes).toBeLessThan(cache.dirty.limit);
    // The checkpoint that made room completes (nothing else starts one here).
    for (let waited = 0; checkpoints === 0 && waited < 5000; waited += 10) await new Promise((r) => setTimeout(r, 10));
    expect(checkpoints).toBeGreaterThanOrEqual(1);

    cache.dirty.setLimit(10 ** 12);
    expect(cache.dirty.limit).toBe(32 * MiB);
    await store.close();
  });
});
