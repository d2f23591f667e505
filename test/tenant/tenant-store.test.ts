import { describe, expect, it, afterEach } from 'vitest';
import { MAX_KEY_BYTES, MAX_VALUE_BYTES, PageCache, encodeKey, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore, type BatchOp } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});
const cache = new PageCache<TreeNode>(4 * 1024 * 1024);
const b = (s: string) => Buffer.from(s);

async function fresh(fsync: 'batch' | 'always' | 'off' = 'batch'): Promise<{ store: TenantStore; path: string }> {
  const dir = tempDir('store');
  dirs.push(dir);
  return { store: await TenantStore.open(dir.path, { cache, fsync, checkpointIntervalMs: 0 }), path: dir.path };
}

describe('TenantStore writes', () => {
  it.each(['batch', 'always', 'off'] as const)('fsync=%s: a resolved write is readable after reopen', async (mode) => {
    const { store, path } = await fresh(mode);
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.write([{ op: 'put', tree: 't', key: b(`k${i}`), value: b(`v${i}`) }])));
    // lsns are consecutive and in call order.
    expect(results.map((r) => r.lsn)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    await store.close();
    const again = await TenantStore.open(path, { cache, fsync: mode, checkpointIntervalMs: 0 });
    expect(again.count('t')).toBe(50);
    expect(again.get('t', b('k49'))?.toString()).toBe('v49');
    await again.close();
  });

  const invalid: Array<[string, BatchOp[]]> = [
    ['an empty tree name', [{ op: 'put', tree: '', key: b('k'), value: b('v') }]],
    ['a tree name over 512 bytes', [{ op: 'put', tree: 'x'.repeat(513), key: b('k'), value: b('v') }]],
    ['a key over the limit', [{ op: 'put', tree: 't', key: Buffer.alloc(MAX_KEY_BYTES + 1), value: b('v') }]],
    ['a value over the limit', [{ op: 'put', tree: 't', key: b('k'), value: Buffer.alloc(MAX_VALUE_BYTES + 1) }]],
    ['a key that is not bytes', [{ op: 'put', tree: 't', key: 'k' as unknown as Buffer, value: b('v') }]],
    ['an unknown op', [{ op: 'upsert', tree: 't', key: b('k'), value: b('v') } as unknown as BatchOp]],
  ];
  it.each(invalid)('rejects %s with VALIDATION_FAILED and applies nothing of the batch', async (_what, bad) => {
    const { store } = await fresh();
    const batch: BatchOp[] = [{ op: 'put', tree: 't', key: b('good'), value: b('1') }, ...bad];
    await expect(store.write(batch)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(store.get('t', b('good'))).toBeUndefined();
    expect(store.stats().lsn).toBe(0);
    await store.close();
  });

  it('applies a batch across trees atomically, visible at once', async () => {
    const { store } = await fresh();
    await store.write([{ op: 'put', tree: 'a', key: b('gone'), value: b('x') }]);
    const pending = store.write([
      { op: 'put', tree: 'a', key: b('one'), value: b('1') },
      { op: 'put', tree: 'b', key: b('two'), value: b('2') },
      { op: 'delete', tree: 'a', key: b('gone') },
    ]);
    // Applied synchronously: reads see the batch before it is durable.
    expect(store.get('b', b('two'))?.toString()).toBe('2');
    expect(store.has('a', b('gone'))).toBe(false);
    await pending;
    expect(store.treeNames()).toEqual(['a', 'b']);
    await store.close();
  });

  it('stores values from 0 bytes up to the 16 MiB limit, inline and on overflow pages', async () => {
    const { store, path } = await fresh();
    const sizes = [0, 1, 2_900, 3_000, 8_184, 8_185, 100_000, MAX_VALUE_BYTES];
    for (const size of sizes) {
      await store.write([{ op: 'put', tree: 'v', key: b(`s${size}`), value: Buffer.alloc(size, size % 255) }]);
    }
    await store.close();
    const again = await TenantStore.open(path, { cache, checkpointIntervalMs: 0 });
    for (const size of sizes) {
      const v = again.get('v', b(`s${size}`));
      expect(v?.length).toBe(size);
      if (size > 0) expect(v?.[size - 1]).toBe(size % 255);
    }
    await again.close();
  });

  it('scans a prefix of tuple-encoded keys in order, both directions, with bounds inside it', async () => {
    const { store } = await fresh();
    const ops: BatchOp[] = [];
    for (const user of ['ann', 'bob', 'bobby']) {
      for (let n = -3; n <= 3; n++) ops.push({ op: 'put', tree: 'idx', key: encodeKey([user, n]), value: b(`${user}:${n}`) });
    }
    await store.write(ops);
    const prefix = encodeKey(['bob']);
    const forward = [...store.scan('idx', { prefix })].map(([, v]) => v.toString());
    expect(forward).toEqual(['bob:-3', 'bob:-2', 'bob:-1', 'bob:0', 'bob:1', 'bob:2', 'bob:3']);
    const backward = [...store.scan('idx', { prefix, reverse: true, limit: 2 })].map(([, v]) => v.toString());
    expect(backward).toEqual(['bob:3', 'bob:2']);
    const bounded = [...store.scan('idx', { prefix, gte: encodeKey(['bob', 0]), lt: encodeKey(['bob', 2]) })].map(([, v]) => v.toString());
    expect(bounded).toEqual(['bob:0', 'bob:1']);
    expect(store.count('idx', { prefix })).toBe(7);
    await store.close();
  });

  it('refuses reads and writes after close with UNAVAILABLE', async () => {
    const { store } = await fresh();
    await store.close();
    await expect(store.write([{ op: 'put', tree: 't', key: b('k'), value: b('v') }])).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(() => store.get('t', b('k'))).toThrow(expect.objectContaining({ code: 'UNAVAILABLE' }));
  });

  it('checkpoints by WAL size and deletes old segments', async () => {
    const dir = tempDir('ckpt');
    dirs.push(dir);
    const store = await TenantStore.open(dir.path, { cache, fsync: 'off', walSegmentBytes: 32 * 1024, checkpointWalBytes: 64 * 1024, checkpointIntervalMs: 0 });
    for (let i = 0; i < 2000; i++) await store.write([{ op: 'put', tree: 't', key: b(`k${i}`), value: Buffer.alloc(100, 1) }]);
    await new Promise((r) => setTimeout(r, 50));
    const stats = store.stats();
    expect(stats.checkpointLsn).toBeGreaterThan(0);
    expect(stats.walBytes).toBeLessThan(2000 * 120);
    await store.close();
  });

  it('checkpoints by age when the interval passes', async () => {
    const dir = tempDir('age');
    dirs.push(dir);
    const store = await TenantStore.open(dir.path, { cache, checkpointIntervalMs: 100 });
    await store.write([{ op: 'put', tree: 't', key: b('k'), value: b('v') }]);
    expect(store.stats().checkpointLsn).toBe(0);
    await new Promise((r) => setTimeout(r, 400));
    expect(store.stats().checkpointLsn).toBe(1);
    await store.close();
  });
});

describe('TenantStore.treeVersion', () => {
  it('changes with every put and delete, stays with reads and checkpoints, and is never reused by a dropped and remade tree', async () => {
    const { store } = await fresh();
    expect(store.treeVersion('t')).toBe(0);
    await store.write([{ op: 'put', tree: 't', key: b('a'), value: b('1') }]);
    const seen = new Set<number>();
    const v1 = store.treeVersion('t');
    expect(v1).toBeGreaterThan(0);
    seen.add(v1);
    // Reads, scans, counts, snapshots and a checkpoint change nothing.
    store.get('t', b('a'));
    [...store.scan('t')];
    store.count('t');
    store.snapshot().close();
    await store.checkpoint();
    expect(store.treeVersion('t')).toBe(v1);
    // A write to another tree leaves this one's version alone.
    await store.write([{ op: 'put', tree: 'u', key: b('a'), value: b('1') }]);
    expect(store.treeVersion('t')).toBe(v1);
    for (const ops of [
      [{ op: 'put', tree: 't', key: b('b'), value: b('2') }],
      [{ op: 'put', tree: 't', key: b('b'), value: b('3') }], // a replacement
      [{ op: 'delete', tree: 't', key: b('a') }],
      [{ op: 'dropTree', tree: 't' }],
      [{ op: 'put', tree: 't', key: b('a'), value: b('1') }], // the same content as at v1, remade
    ] as BatchOp[][]) {
      await store.write(ops);
      const v = store.treeVersion('t');
      expect(seen.has(v), JSON.stringify(ops)).toBe(false);
      seen.add(v);
    }
    expect(store.get('t', b('a'))?.toString()).toBe('1');
    await store.close();
  });
});
