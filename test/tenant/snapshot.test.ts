import { afterEach, describe, expect, it } from 'vitest';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantRegistry, TenantStore, type BatchOp } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

const key = (i: number) => Buffer.from(`key-${String(i).padStart(6, '0')}`);
const puts = (tree: string, from: number, to: number, tag: string): BatchOp[] =>
  Array.from({ length: to - from }, (_, j) => ({ op: 'put' as const, tree, key: key(from + j), value: Buffer.from(`${tag}-${from + j}`) }));

async function openStore(cache: PageCache<TreeNode>, extra: Partial<Parameters<typeof TenantStore.open>[1]> = {}): Promise<TenantStore> {
  const dir = tempDir('snapshot');
  dirs.push(dir);
  return TenantStore.open(dir.path, { cache, checkpointIntervalMs: 0, fsync: 'off', ...extra });
}

describe('snapshots', () => {
  it('see one state of every tree while batches land, checkpoint and compact, reading the old file after the swap', async () => {
    // A tiny cache: after compaction the snapshot must re-read its pages from the old file.
    const cache = new PageCache<TreeNode>(64 * 1024);
    const store = await openStore(cache, { compactMinBytes: 0 });
    await store.write([...puts('a', 0, 3000, 'v1'), ...puts('b', 0, 500, 'v1')]);
    await store.checkpoint();
    await store.write(puts('a', 3000, 3100, 'v1')); // dirty, uncheckpointed nodes too
    const snapshot = store.snapshot();
    const lsn = store.lsn;
    expect(snapshot.lsn).toBe(lsn);
    const filesBefore = cache.openFileIds;

    // Overwrite everything, delete some, drop a tree, checkpoint and compact (a new file).
    await store.write(puts('a', 0, 3100, 'v2'));
    await store.write(Array.from({ length: 1000 }, (_, i) => ({ op: 'delete' as const, tree: 'a', key: key(i) })));
    await store.write([{ op: 'dropTree', tree: 'b' }, ...puts('c', 0, 10, 'new')]);
    await store.checkpoint();
    await store.compact();
    expect(cache.openFileIds).toBe(filesBefore + 1); // the old file stays open for the snapshot

    expect(snapshot.count('a')).toBe(3100);
    expect(snapshot.count('b')).toBe(500);
    expect(snapshot.treeNames()).toEqual(['a', 'b']);
    expect(snapshot.get('a', key(5))?.toString()).toBe('v1-5');
    expect(snapshot.get('c', key(1))).toBeUndefined();
    const all = [...snapshot.scan('a')];
    expect(all.map(([k]) => k.toString())).toEqual(Array.from({ length: 3100 }, (_, i) => key(i).toString()));
    expect(all.every(([k, v]) => v.toString() === `v1-${Number(k.toString().slice(4))}`)).toBe(true);
    expect([...snapshot.scan('a', { prefix: Buffer.from('key-0030'), reverse: true })].map(([k]) => k.toString())).toEqual(
      Array.from({ length: 100 }, (_, i) => key(3099 - i).toString()),
    );
    // The live store has moved on.
    expect(store.count('a')).toBe(2100);
    expect(store.get('a', key(5))).toBeUndefined();
    expect(store.get('a', key(2000))?.toString()).toBe('v2-2000');

    snapshot.close();
    expect(cache.openFileIds).toBe(filesBefore); // the replaced file is closed with its last reader
    expect(() => snapshot.get('a', key(1))).toThrow(expect.objectContaining({ code: 'UNAVAILABLE' }));
    await store.close();
  });

  it('scanChunks yields to the event loop between chunks and never sees later writes', async () => {
    const cache = new PageCache<TreeNode>(8 * 1024 * 1024);
    const store = await openStore(cache);
    await store.write(puts('t', 0, 10_000, 'old'));
    const snapshot = store.snapshot();
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 0);
    let seen = 0;
    let chunks = 0;
    for await (const chunk of snapshot.scanChunks('t', {}, 500)) {
      chunks++;
      for (const [, v] of chunk) {
        expect(v.toString().startsWith('old-')).toBe(true);
        seen++;
      }
      // Writes land while the scan is paused between chunks.
      await store.write(puts('t', seen - chunk.length, seen, 'new'));
    }
    clearInterval(ticker);
    expect(seen).toBe(10_000);
    expect(chunks).toBe(20);
    expect(ticks).toBeGreaterThan(5); // timers ran while the scan was in progress
    snapshot.close();
    expect(store.get('t', key(9999))?.toString()).toBe('new-9999');
    await store.close();
  });

  it('expires a snapshot held past the age limit: its reads fail cleanly', async () => {
    const cache = new PageCache<TreeNode>(1024 * 1024);
    const store = await openStore(cache, { snapshotMaxAgeMs: 100 });
    await store.write(puts('t', 0, 100, 'v'));
    const snapshot = store.snapshot();
    expect(snapshot.get('t', key(1))?.toString()).toBe('v-1');
    const scan = store.scan('t'); // a live scan left unfinished is a snapshot too
    expect(scan.next().done).toBe(false);
    await new Promise((r) => setTimeout(r, 400));
    expect(() => snapshot.get('t', key(1))).toThrow(expect.objectContaining({ code: 'UNAVAILABLE', message: expect.stringContaining('snapshot expired') }));
    expect(() => scan.next()).toThrow(expect.objectContaining({ code: 'UNAVAILABLE' }));
    expect(store.stats().openSnapshots).toBe(0);
    await store.close();
  });

  it('gives way when the memory it pins keeps the dirty budget full: writers never stall for good', async () => {
    const dirtyBytes = 2 * 1024 * 1024;
    const cache = new PageCache<TreeNode>(1024 * 1024, { dirtyBytes });
    const store = await openStore(cache);
    await store.write(puts('t', 0, 20_000, 'v0'));
    await store.checkpoint();
    const snapshot = store.snapshot();
    let peak = 0;
    // Rewrite everything several times: each checkpoint's nodes stay reachable from the snapshot.
    for (let round = 1; round <= 6; round++) {
      for (let i = 0; i < 20_000; i += 1000) {
        await store.write(puts('t', i, i + 1000, `v${round}`));
        peak = Math.max(peak, cache.dirty.bytes);
      }
    }
    expect(() => [...snapshot.scan('t')]).toThrow(expect.objectContaining({ code: 'UNAVAILABLE', message: expect.stringContaining('dirty budget') }));
    expect(store.stats().pinnedBytes).toBe(0);
    // Bounded: the budget plus at most one batch in flight beyond it.
    expect(peak).toBeLessThan(dirtyBytes * 1.5);
    expect(store.get('t', key(19_999))?.toString()).toBe('v6-19999');
    await store.close();
    expect(cache.dirty.bytes).toBe(0);
  });

  it('makes writers copy nodes only while a snapshot that shares them is open', async () => {
    const cache = new PageCache<TreeNode>(1024 * 1024, { dirtyBytes: 64 * 1024 * 1024 });
    const store = await openStore(cache);
    await store.write(puts('t', 0, 5000, 'v0')); // all dirty, of the current epoch
    let version = 0;
    const costOfOverwrite = async (): Promise<number> => {
      const before = store.stats().pendingBytes;
      // Same length as the value it replaces, so the leaf neither grows nor splits.
      await store.write(puts('t', 2500, 2501, `x${++version}`));
      return store.stats().pendingBytes - before;
    };
    // Closed before the next write (a point query): the write changes its leaf in place.
    const quick = store.snapshot();
    expect(quick.get('t', key(2500))?.toString()).toBe('v0-2500');
    quick.close();
    const inPlace = await costOfOverwrite();
    // Open across the write: the write copies the path to the leaf, the snapshot keeps the old one.
    const held = store.snapshot();
    const copied = await costOfOverwrite();
    expect(held.get('t', key(2500))?.toString()).toBe('x1-2500');
    expect(store.get('t', key(2500))?.toString()).toBe('x2-2500');
    held.close();
    expect(inPlace).toBeLessThan(200);
    expect(copied).toBeGreaterThan(4000);
    await store.close();
  });

  it('releases what a closed snapshot pinned', async () => {
    const cache = new PageCache<TreeNode>(1024 * 1024, { dirtyBytes: 64 * 1024 * 1024 });
    const store = await openStore(cache);
    await store.write(puts('t', 0, 5000, 'v0'));
    const snapshot = store.snapshot();
    await store.write(puts('t', 0, 5000, 'v1'));
    await store.checkpoint();
    expect(store.stats().pinnedBytes).toBeGreaterThan(0);
    snapshot.close();
    expect(store.stats().pinnedBytes).toBe(0);
    expect(store.stats().pendingBytes).toBe(0);
    await store.close();
  });
});

describe('durable visibility', () => {
  it('whenDurable resolves once every applied batch is on disk', async () => {
    const cache = new PageCache<TreeNode>(1024 * 1024);
    const store = await openStore(cache, { fsync: 'batch' });
    expect(store.whenDurable()).toBeUndefined();
    const written = store.write(puts('t', 0, 10, 'v'));
    const lsn = store.lsn;
    const fence = store.whenDurable();
    expect(fence).toBeInstanceOf(Promise);
    await fence;
    expect(store.stats().durableLsn).toBeGreaterThanOrEqual(lsn);
    await written;
    await store.close();
  });

  it('TenantRegistry.use hands back a read only once the writes it saw are durable, also for errors', async () => {
    const dir = tempDir('fence');
    dirs.push(dir);
    const registry = new TenantRegistry({ dataDir: dir.path, idleCloseMs: 0, checkpointIntervalMs: 0, fsync: 'always' });
    let writeLsn = 0;
    for (let i = 0; i < 20; i++) {
      // A write in flight (not awaited) and a read of it in another use() right after.
      const pending = registry.use('t1', (s) => {
        const w = s.write([{ op: 'put', tree: 'kv', key: key(i), value: Buffer.from(`v${i}`) }]);
        writeLsn = s.lsn;
        return w;
      });
      const seen = await registry.use('t1', (s) => {
        const v = s.get('kv', key(i))?.toString();
        return { v, durableLsn: () => s.stats().durableLsn };
      });
      expect(seen.v).toBe(`v${i}`);
      expect(seen.durableLsn()).toBeGreaterThanOrEqual(writeLsn);
      await pending;
      // Errors that reveal what was read wait the same way.
      void registry.use('t1', (s) => s.write([{ op: 'put', tree: 'kv', key: key(1000 + i), value: Buffer.from('x') }]));
      const lsnBefore = await registry.use('t1', (s) => s.lsn);
      const err = await registry
        .use('t1', (s) => {
          if (s.get('kv', key(1000 + i)) !== undefined) throw Object.assign(new Error('exists'), { durableLsn: () => s.stats().durableLsn });
        })
        .catch((e: { durableLsn: () => number }) => e);
      expect((err as { durableLsn: () => number }).durableLsn()).toBeGreaterThanOrEqual(lsnBefore);
    }
    await registry.close();
  });

  it('TenantRegistry.useNow hands back a durable read as a value in the same turn, and anything else as use() does', async () => {
    const dir = tempDir('fence-now');
    dirs.push(dir);
    const registry = new TenantRegistry({ dataDir: dir.path, idleCloseMs: 0, checkpointIntervalMs: 0, fsync: 'always' });
    // Not open yet: a promise (the store opens first).
    const opened = registry.useNow('t1', (s) => s.get('kv', key(0)));
    expect(opened).toBeInstanceOf(Promise);
    expect(await opened).toBeUndefined();
    await registry.use('t1', (s) => s.write([{ op: 'put', tree: 'kv', key: key(0), value: Buffer.from('v0') }]));
    // Open, and everything it shows is durable: the value itself.
    const now = registry.useNow('t1', (s) => s.get('kv', key(0))?.toString());
    expect(now).toBe('v0');
    for (let i = 1; i < 20; i++) {
      // A write in flight: a read of it comes as a promise settled once the write is durable.
      let writeLsn = 0;
      const pending = registry.use('t1', (s) => {
        const w = s.write([{ op: 'put', tree: 'kv', key: key(i), value: Buffer.from(`v${i}`) }]);
        writeLsn = s.lsn;
        return w;
      });
      const seen = registry.useNow('t1', (s) => ({ v: s.get('kv', key(i))?.toString(), durableLsn: () => s.stats().durableLsn }));
      expect(seen).toBeInstanceOf(Promise);
      const read = await seen;
      expect(read.v).toBe(`v${i}`);
      expect(read.durableLsn()).toBeGreaterThanOrEqual(writeLsn);
      await pending;
      // An error thrown by fn, and a promise fn returns, come back as promises.
      await expect(registry.useNow('t1', () => {
        throw new Error('boom');
      })).rejects.toThrow('boom');
      expect(await registry.useNow('t1', async (s) => s.get('kv', key(i))?.toString())).toBe(`v${i}`);
    }
    // Every use has ended: the store may close.
    await registry.close();
  });
});
