// Where a full leaf splits decides how full the tree's pages end up, and so how much of the data
// a page cache of a given size holds. Each insert order a user's data commonly has must leave
// pages as full as that order allows: appends at either edge of the tree (an ascending `_id`; a
// descending index on an ascending time), one key's entries arriving in order in the middle of
// a compound index, and random keys. Every key must still be there, in order, after a
// checkpoint and a reopen.
import { afterEach, describe, expect, it } from 'vitest';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { seededRandom } from '../helpers/random.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

const N = 30_000;
const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** Keys already in the tree (200 users x 100 entries), then a run of `N` new ones. */
function compound(run: (i: number) => string): string[] {
  const base = Array.from({ length: 20_000 }, (_, j) => `u${pad(j % 200, 4)}|${pad(j, 8)}`);
  return [...base, ...Array.from({ length: N }, (_, i) => run(i))];
}

function randomKeys(): string[] {
  const rand = seededRandom(11);
  return Array.from({ length: N }, () => `k${pad(Math.floor(rand() * 1e9), 10)}`);
}

const ORDERS: Array<{ name: string; keys: () => string[]; minFill: number }> = [
  { name: 'ascending (time-ordered _id)', keys: () => Array.from({ length: N }, (_, i) => `k${pad(i, 8)}`), minFill: 0.95 },
  // Inserts at the tree's left edge: 50% full when split in the middle.
  { name: 'descending ({t: -1} on an ascending t)', keys: () => Array.from({ length: N }, (_, i) => `k${pad(N - i, 8)}`), minFill: 0.95 },
  // One user's entries of a (user, time) index arrive in the middle of the tree: 58% when split in
  // the middle (the 20,000 keys before them, loaded user by user in turn, are ~55% full either way).
  { name: 'ascending inside the tree (one user of a (user, time) index)', keys: () => compound((i) => `u0100|${pad(1e6 + i, 8)}`), minFill: 0.78 },
  { name: 'ascending inside the tree, four users in turn', keys: () => compound((i) => `u${pad(50 * (i % 4), 4)}|${pad(1e6 + i, 8)}`), minFill: 0.78 },
  // Not an order the splits can follow: split in the middle, never into near-empty pages.
  { name: 'descending inside the tree', keys: () => compound((i) => `u0100|${pad(1e7 - i, 8)}`), minFill: 0.5 },
  { name: 'random', keys: randomKeys, minFill: 0.65 },
];

async function open(path: string): Promise<TenantStore> {
  return TenantStore.open(path, { cache: new PageCache<TreeNode>(16 * 1024 * 1024), checkpointIntervalMs: 0, fsync: 'off' });
}

function fill(store: TenantStore): number {
  const stats = store.pageStats('t')!;
  return stats.leafBytes / (stats.leaves * 8192);
}

describe('leaf splits', () => {
  for (const order of ORDERS) {
    it(`leave pages full for: ${order.name}`, async () => {
      const dir = tempDir('split-fill');
      dirs.push(dir);
      const keys = order.keys();
      let store = await open(dir.path);
      for (let i = 0; i < keys.length; i += 1000) {
        await store.write(keys.slice(i, i + 1000).map((k) => ({ op: 'put' as const, tree: 't', key: Buffer.from(k), value: Buffer.from(`v-${k}`) })));
        // A checkpoint now and then: the leaves it writes are copied again by the next inserts.
        if (i % 10_000 === 0) await store.checkpoint();
      }
      const dirtyFill = fill(store);
      expect(dirtyFill, `fill ${dirtyFill.toFixed(3)}`).toBeGreaterThanOrEqual(order.minFill);
      expect(dirtyFill).toBeLessThanOrEqual(1);
      await store.checkpoint();
      await store.close();

      store = await open(dir.path);
      try {
        expect(fill(store)).toBeCloseTo(dirtyFill, 6);
        const sorted = [...new Set(keys)].sort();
        const scanned = [...store.scan('t')].map(([k, v]) => {
          expect(v.toString()).toBe(`v-${k.toString()}`);
          return k.toString();
        });
        expect(scanned).toStrictEqual(sorted);
        for (const k of keys.slice(0, 500)) expect(store.get('t', Buffer.from(k))?.toString()).toBe(`v-${k}`);
      } finally {
        await store.close();
      }
    });
  }

  it('counts no pages for a tree that does not exist', async () => {
    const dir = tempDir('split-fill');
    dirs.push(dir);
    const store = await open(dir.path);
    try {
      expect(store.pageStats('none')).toBeUndefined();
      await store.write([{ op: 'put', tree: 't', key: Buffer.from('a'), value: Buffer.from('b') }]);
      expect(store.pageStats('t')).toStrictEqual({ leaves: 1, branches: 0, leafBytes: expect.any(Number), branchBytes: 0, overflowPages: 0, valueBytes: expect.any(Number) });
    } finally {
      await store.close();
    }
  });
});
