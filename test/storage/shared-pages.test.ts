// A dirty leaf shares the clean page it was copied from (pinned in the page cache) instead of
// copying it: the cache's pins, their release with the dirty bytes, and the data read through
// shared pages across checkpoints, snapshots, compaction and reopening.
import { afterEach, describe, expect, it } from 'vitest';
import { PAGE_SIZE, PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore, type BatchOp } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

const MiB = 1024 * 1024;
const key = (i: number) => Buffer.from(`key-${String(i).padStart(7, '0')}`);

/** A deterministic shuffle of 0..n-1 (random leaves, as a randomly keyed index is written). */
function shuffled(n: number, seed: number): number[] {
  const xs = Array.from({ length: n }, (_, i) => i);
  let s = seed >>> 0;
  for (let i = n - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}

async function openStore(cache: PageCache<TreeNode>, dir?: string, extra: Partial<Parameters<typeof TenantStore.open>[1]> = {}): Promise<{ store: TenantStore; dir: string }> {
  let path = dir;
  if (path === undefined) {
    const d = tempDir('shared-pages');
    dirs.push(d);
    path = d.path;
  }
  return { store: await TenantStore.open(path, { cache, checkpointIntervalMs: 0, fsync: 'off', ...extra }), dir: path };
}

/** Writes `ids` as puts of `tag` values, 500 per batch, into `model` too. */
async function put(store: TenantStore, model: Map<string, string>, ids: number[], tag: string): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    const ops: BatchOp[] = ids.slice(i, i + 500).map((id) => {
      const value = `${tag}-${id}`;
      model.set(key(id).toString(), value);
      return { op: 'put', tree: 't', key: key(id), value: Buffer.from(value) };
    });
    await store.write(ops);
  }
}

function expectContents(read: { scan: (tree: string) => Iterable<[Buffer, Buffer]> }, model: Map<string, string>): void {
  const got = [...read.scan('t')].map(([k, v]) => [k.toString(), v.toString()]);
  const want = [...model].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  expect(got.length).toBe(want.length);
  expect(got).toEqual(want);
}

describe('PageCache pins', () => {
  it('keeps pinned entries through eviction, up to half the cache, until the last unpin', () => {
    const cache = new PageCache<string>(10_000);
    const f = cache.allocateFileId();
    for (let i = 1; i <= 5; i++) cache.set(PageCache.key(f, i), `p${i}`, 2_000);
    const one = cache.pin(PageCache.key(f, 1))!;
    const two = cache.pin(PageCache.key(f, 2))!;
    expect(one.value).toBe('p1');
    expect(cache.pinnedBytes).toBe(4_000);
    // A third would pin 6,000 of 10,000 bytes: refused, the caller copies instead.
    expect(cache.pin(PageCache.key(f, 3))).toBeUndefined();
    // Pinned twice, released once: still pinned.
    expect(cache.repin(one)).toBe(true);
    cache.unpin(one);
    // New pages push out every unpinned one, never the pinned two.
    for (let i = 6; i <= 12; i++) cache.set(PageCache.key(f, i), `p${i}`, 2_000);
    expect(cache.get(PageCache.key(f, 1))).toBe('p1');
    expect(cache.get(PageCache.key(f, 2))).toBe('p2');
    expect(cache.get(PageCache.key(f, 3))).toBeUndefined();
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
    cache.unpin(one);
    cache.unpin(two);
    expect(cache.pinnedBytes).toBe(0);
    for (let i = 13; i <= 20; i++) cache.set(PageCache.key(f, i), `p${i}`, 2_000);
    expect(cache.get(PageCache.key(f, 1))).toBeUndefined();
    expect(() => cache.unpin(one)).toThrow(/not pinned/);
    // Evicted: its holder must copy from now on, the cache no longer counts it.
    expect(cache.repin(one)).toBe(false);
  });

  it('pins only the value asked for, and counts a pinned entry dropped with its file until its last unpin', () => {
    const cache = new PageCache<string>(100_000);
    const f = cache.allocateFileId();
    cache.set(PageCache.key(f, 1), 'p1', 1_000);
    cache.set(PageCache.key(f, 2), 'p2', 1_000);
    expect(cache.pin(PageCache.key(f, 1), 'another value')).toBeUndefined();
    expect(cache.pin(PageCache.key(f, 9))).toBeUndefined();
    const pin = cache.pin(PageCache.key(f, 1), 'p1')!;
    cache.releaseFileId(f);
    expect(cache.size).toBe(0);
    // Gone from the map (its id may be reused), still counted: the holder keeps its bytes alive.
    expect(cache.bytes).toBe(1_000);
    expect(cache.pinnedBytes).toBe(1_000);
    expect(cache.repin(pin)).toBe(true);
    cache.unpin(pin);
    cache.unpin(pin);
    expect(cache.bytes).toBe(0);
    expect(cache.pinnedBytes).toBe(0);
    // Dropped and unpinned: it cannot be pinned again.
    expect(cache.repin(pin)).toBe(false);
  });
});

describe('dirty leaves sharing clean pages', () => {
  it('cost the dirty budget their entries, not a page copy, and release their pins with the checkpoint', async () => {
    const n = 40_000;
    const sharing = new PageCache<TreeNode>(64 * MiB, { dirtyBytes: 256 * MiB });
    // A cache smaller than one cached page: nothing is cached or pinned, every dirty leaf copies its page.
    const copying = new PageCache<TreeNode>(PAGE_SIZE, { dirtyBytes: 256 * MiB });
    const costs: number[] = [];
    for (const cache of [sharing, copying]) {
      const { store } = await openStore(cache);
      const model = new Map<string, string>();
      await put(store, model, shuffled(n, 7), 'v0');
      await store.checkpoint();
      expect(store.stats().pendingBytes).toBe(0);
      // One overwrite of the same length in every ~20th key: most leaves get one or two changes.
      await put(store, model, shuffled(n, 11).slice(0, n / 20), 'v1');
      costs.push(store.stats().pendingBytes);
      expectContents(store, model);
      if (cache === sharing) expect(cache.pinnedBytes).toBeGreaterThan(100 * PAGE_SIZE);
      else expect(cache.pinnedBytes).toBe(0);
      await store.checkpoint();
      expect(cache.pinnedBytes).toBe(0);
      expect(store.stats().pendingBytes).toBe(0);
      expectContents(store, model);
      await store.close();
      expect(cache.bytes).toBe(0);
      expect(cache.dirty.bytes).toBe(0);
    }
    const [shared, copied] = costs as [number, number];
    expect(shared).toBeLessThan(copied * 0.6);
  });

  it('keep their pages pinned for a snapshot that reads them across the checkpoint, and read right after reopening', async () => {
    const cache = new PageCache<TreeNode>(32 * MiB, { dirtyBytes: 64 * MiB });
    const { store, dir } = await openStore(cache);
    const model = new Map<string, string>();
    await put(store, model, shuffled(20_000, 3), 'v0');
    await store.checkpoint();
    await put(store, model, shuffled(20_000, 5).slice(0, 2_000), 'v1');
    const before = new Map(model);
    const snapshot = store.snapshot();
    // The next writes copy the shared dirty leaves again (the snapshot holds them): they share the same pages.
    await put(store, model, shuffled(20_000, 9).slice(0, 2_000), 'v2');
    await store.checkpoint();
    expect(cache.pinnedBytes).toBeGreaterThan(0);
    expect(store.stats().pinnedBytes).toBeGreaterThan(0);
    expectContents(snapshot, before);
    expectContents(store, model);
    // Pages read while the pins hold them stay intact under more writes and another checkpoint.
    await put(store, model, shuffled(20_000, 13).slice(0, 4_000), 'v3');
    await store.checkpoint();
    expectContents(snapshot, before);
    snapshot.close();
    expect(cache.pinnedBytes).toBe(0);
    expect(store.stats().pinnedBytes).toBe(0);
    await store.close();
    const reopened = await openStore(cache, dir);
    expectContents(reopened.store, model);
    await reopened.store.close();
  });

  it('survive a compaction that replaces the file their pages came from', async () => {
    const cache = new PageCache<TreeNode>(32 * MiB, { dirtyBytes: 64 * MiB });
    const { store, dir } = await openStore(cache, undefined, { compactMinBytes: 0 });
    const model = new Map<string, string>();
    await put(store, model, shuffled(20_000, 17), 'v0');
    await store.checkpoint();
    await put(store, model, shuffled(20_000, 19), 'v1'); // every leaf rewritten: half the file is garbage
    await store.checkpoint();
    await put(store, model, shuffled(20_000, 23).slice(0, 3_000), 'v2'); // dirty leaves on the current file's pages
    const pinned = cache.pinnedBytes;
    expect(pinned).toBeGreaterThan(0);
    await store.compact();
    // The old file's entries left the cache; the pinned ones stay counted until their checkpoint.
    expect(cache.pinnedBytes).toBe(pinned);
    expectContents(store, model);
    await put(store, model, shuffled(20_000, 29).slice(0, 3_000), 'v3');
    expectContents(store, model);
    await store.checkpoint();
    expect(cache.pinnedBytes).toBe(0);
    expectContents(store, model);
    await store.close();
    expect(cache.bytes).toBe(0);
    const reopened = await openStore(cache, dir);
    expectContents(reopened.store, model);
    await reopened.store.close();
  });

  it('never pin more than half the cache: past that, dirty leaves copy their pages', async () => {
    const cacheBytes = 40 * PAGE_SIZE;
    const cache = new PageCache<TreeNode>(cacheBytes, { dirtyBytes: 64 * MiB });
    const { store } = await openStore(cache);
    const model = new Map<string, string>();
    await put(store, model, shuffled(20_000, 31), 'v0');
    await store.checkpoint();
    await put(store, model, shuffled(20_000, 37).slice(0, 5_000), 'v1');
    expect(cache.pinnedBytes).toBeGreaterThan(0);
    expect(cache.pinnedBytes).toBeLessThanOrEqual(cacheBytes / 2);
    expect(cache.bytes).toBeLessThanOrEqual(cacheBytes);
    expectContents(store, model);
    await store.checkpoint();
    expect(cache.pinnedBytes).toBe(0);
    expectContents(store, model);
    await store.close();
  });
});
