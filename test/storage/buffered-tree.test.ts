// Buffered trees (engine/storage/buffered-tree.ts): a randomly keyed tree's writes gathered in a
// delta and merged into it in key order. What it is for: checkpoints write far fewer pages for a
// random index than when every random key dirties a leaf of its own. What it must keep: the
// tree reads as one, across merges, reopens, and opens that do not buffer.
import { afterEach, describe, expect, it } from 'vitest';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { indexTree, type CollectionInfo, type IndexInfo } from '../../engine/docs/catalog.js';
import { isSecondaryIndexTree, TenantStore, type BatchOp, type TenantStoreOptions } from '../../engine/tenant/index.js';
import { randomBytes, seededRandom } from '../helpers/random.js';
import { SortedModel } from '../helpers/sorted-model.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

function newDir(): string {
  const dir = tempDir('buffered');
  dirs.push(dir);
  return dir.path;
}

/** Small budgets: a checkpoint every few thousand random keys, as at 1M documents with the default ones. */
function options(buffered: boolean, extra: Partial<TenantStoreOptions> = {}): TenantStoreOptions {
  return {
    cache: new PageCache<TreeNode>(4 * 1024 * 1024, { dirtyBytes: 2 * 1024 * 1024 }),
    fsync: 'off',
    checkpointIntervalMs: 0,
    // No compaction: the file's growth is what the checkpoints wrote.
    compactGarbageRatio: 2,
    bufferedTrees: buffered ? (tree) => tree === 'idx' : () => false,
    bufferFromEntries: 5_000,
    ...extra,
  };
}

/** Lets the event loop turn until the merges due have run (they go a chunk per turn). */
async function settle(store: TenantStore): Promise<void> {
  for (let i = 0; i < 10_000 && store.stats().deltaEntries > 0; i++) await new Promise((r) => setImmediate(r));
}

describe('a buffered tree', () => {
  it("is what the server buffers by default: the documents model's index trees, not its collections, catalog or deltas", () => {
    const info = { id: 12, name: 'c' } as CollectionInfo;
    expect(isSecondaryIndexTree(indexTree(info, { id: 3 } as IndexInfo))).toBe(true);
    expect(isSecondaryIndexTree(indexTree(info, { id: 45 } as IndexInfo))).toBe(true);
    for (const other of ['docs.12', 'docs.catalog', 'kv', 'sql.catalog', 'docs.12.3\u0000delta', 'docs.12.3.4']) expect(isSecondaryIndexTree(other), other).toBe(false);
  });

  it('makes checkpoints write a fraction of the pages a random index takes unbuffered, holding the same entries', async () => {
    const written: Record<string, number> = {};
    const contents: Record<string, string[]> = {};
    for (const buffered of [false, true]) {
      const rand = seededRandom(5);
      const store = await TenantStore.open(newDir(), options(buffered));
      for (let batch = 0; batch < 120; batch++) {
        const ops: BatchOp[] = [];
        for (let i = 0; i < 500; i++) ops.push({ op: 'put', tree: 'idx', key: randomBytes(rand, 16), value: Buffer.from('pk-0001') });
        await store.write(ops);
        // Merges run between batches, as they do between requests.
        await new Promise((r) => setImmediate(r));
      }
      await settle(store);
      await store.checkpoint();
      written[String(buffered)] = store.stats().pageFileBytes;
      contents[String(buffered)] = [...store.keys('idx')].map((k) => k.toString('hex'));
      if (buffered) expect(store.stats().mergedEntries).toBeGreaterThan(30_000);
      await store.close();
    }
    expect(contents['true']).toEqual(contents['false']);
    expect(contents['true']!.length).toBe(60_000);
    // Unbuffered, each checkpoint rewrote most of the index's leaves; buffered, the delta's few
    // and one rewrite of each leaf per merge.
    expect(written['true']!).toBeLessThan(written['false']! / 2);
  });

  it('reads the same whether its delta is merged or not, and a store opened without buffering reads and writes it right', async () => {
    const path = newDir();
    const rand = seededRandom(9);
    const model = new SortedModel();
    const keys: Buffer[] = [];
    const write = async (store: TenantStore, n: number, deletes: number): Promise<void> => {
      const ops: BatchOp[] = [];
      for (let i = 0; i < n; i++) {
        const key = randomBytes(rand, 12);
        const value = randomBytes(rand, 1 + (i % 40));
        keys.push(key);
        ops.push({ op: 'put', tree: 'idx', key, value });
        model.put(key, value);
      }
      for (let i = 0; i < deletes; i++) {
        const key = keys[Math.floor(rand() * keys.length)]!;
        ops.push({ op: 'delete', tree: 'idx', key });
        model.delete(key);
      }
      await store.write(ops);
    };
    const check = (store: TenantStore, context: string): void => {
      const expected = model.range().map(([k, v]) => `${k.toString('hex')}=${v.toString('hex')}`);
      expect([...store.scan('idx')].map(([k, v]) => `${k.toString('hex')}=${v.toString('hex')}`), context).toEqual(expected);
      expect(store.count('idx'), context).toBe(expected.length);
      for (const key of keys.slice(-200)) expect(store.get('idx', key)?.toString('hex'), context).toBe(model.get(key)?.toString('hex'));
    };

    // No merge yet: the delta is kept as it is until the third open.
    let store = await TenantStore.open(path, options(true, { deltaMergeMin: 100_000 }));
    await write(store, 6_000, 0); // past bufferFromEntries: later writes go to the delta
    await write(store, 3_000, 1_500);
    check(store, 'delta unmerged');
    expect(store.stats().deltaEntries).toBeGreaterThan(0);
    await store.close(); // the delta is checkpointed as it is

    store = await TenantStore.open(path, options(false));
    expect(store.stats().deltaEntries, 'the delta is still there').toBeGreaterThan(0);
    check(store, 'opened without buffering');
    // Direct writes over keys the delta holds (puts and tombstones) must win over them.
    await write(store, 500, 2_000);
    check(store, 'written without buffering');
    await store.close();

    store = await TenantStore.open(path, options(true, { deltaMergeMin: 1_000 }));
    await write(store, 2_000, 500);
    await settle(store);
    expect(store.stats().mergedEntries).toBeGreaterThan(0);
    check(store, 'merged');
    await store.close();
    store = await TenantStore.open(path, options(true));
    check(store, 'reopened');
    await store.close();
  });

  it('a live read across event-loop turns refuses to go on once a merge has moved entries', async () => {
    const store = await TenantStore.open(newDir(), options(true, { deltaMergeMin: 100, bufferFromEntries: 0 }));
    const rand = seededRandom(3);
    // Applied at once; the merge it makes due starts on a later turn, after the read began.
    const written = store.write(Array.from({ length: 2_000 }, () => ({ op: 'put' as const, tree: 'idx', key: randomBytes(rand, 8), value: Buffer.from('v') })));
    const reading = store.scanNow('idx');
    reading.next();
    expect(store.stats().deltaEntries).toBe(2_000);
    await written;
    await settle(store);
    expect(store.stats().mergedEntries).toBeGreaterThan(0);
    expect(() => reading.next()).toThrow(/stepped after a write/);
    await store.close();
  });
});
