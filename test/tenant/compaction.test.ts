// A compaction a checkpoint starts copies the page file while writes and further checkpoints go
// on (only its finish, which copies what those checkpoints wrote, and the swap are exclusive):
// every write, whenever it landed, must be there after the swap and after a reopen.
import { afterEach, describe, expect, it } from 'vitest';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore, type BatchOp } from '../../engine/tenant/index.js';
import { randomInt, seededRandom } from '../helpers/random.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

const key = (i: number): Buffer => Buffer.from(`key-${String(i).padStart(7, '0')}`);

function expectHolds(store: TenantStore, model: Map<number, string>, keys: number, context: string): void {
  for (let i = 0; i < keys; i++) {
    const got = store.get('t', key(i))?.toString();
    expect(got, `${context}: key ${i}`).toBe(model.get(i));
  }
  expect([...store.scan('t')].length, context).toBe(model.size);
}

describe('compaction started by a checkpoint', () => {
  it('lets checkpoints run while it copies, and loses nothing written meanwhile', async () => {
    const dir = tempDir('compaction');
    dirs.push(dir);
    const options = { cache: new PageCache<TreeNode>(8 * 1024 * 1024), checkpointIntervalMs: 0, fsync: 'off' as const, compactMinBytes: 0, compactGarbageRatio: 0.3 };
    let store = await TenantStore.open(dir.path, options);
    const rand = seededRandom(7);
    const KEYS = 20_000;
    const model = new Map<number, string>();
    const put = (i: number, tag: string): BatchOp => {
      const value = `${tag}-${i}-${'x'.repeat(randomInt(rand, 50, 200))}`;
      model.set(i, value);
      return { op: 'put', tree: 't', key: key(i), value: Buffer.from(value) };
    };
    for (let i = 0; i < KEYS; i += 2000) await store.write(Array.from({ length: 2000 }, (_, j) => put(i + j, 'v1')));
    await store.checkpoint();
    let checkpointsDuringCopy = 0;
    let compactions = 0;
    for (let round = 0; round < 4; round++) {
      // Rewrite most keys: the next checkpoint leaves enough garbage to start a compaction.
      for (let i = 0; i < KEYS; i += 2000) await store.write(Array.from({ length: 2000 }, (_, j) => put(i + j, `r${round}`)));
      await store.checkpoint();
      if (!store.stats().compacting) continue;
      let largest = store.stats().pageFileBytes;
      compactions++;
      // Writes, deletes and checkpoints while the copy runs (a while: under this much churn a
      // checkpoint after the swap may well start the next compaction at once).
      for (let n = 0; n < 40 && store.stats().compacting; n++) {
        const ops: BatchOp[] = [];
        for (let n = 0; n < 300; n++) {
          const i = randomInt(rand, 0, KEYS - 1);
          if (rand() < 0.2) {
            model.delete(i);
            ops.push({ op: 'delete', tree: 't', key: key(i) });
          } else {
            ops.push(put(i, `c${round}`));
          }
        }
        await store.write(ops);
        const before = store.stats().checkpointLsn;
        await store.checkpoint();
        if (store.stats().compacting && store.stats().checkpointLsn > before) checkpointsDuringCopy++;
        largest = Math.max(largest, store.stats().pageFileBytes);
      }
      // No more checkpoints: the compaction running now finishes, and none starts after it.
      while (store.stats().compacting) await new Promise((resolve) => setTimeout(resolve, 5));
      expectHolds(store, model, KEYS, `round ${round}, after the swap`);
      // A smaller file was swapped in (holding the garbage the copy's checkpoints superseded).
      expect(store.stats().pageFileBytes, `round ${round}`).toBeLessThan(largest);
    }
    // The scenario this test is about did happen.
    expect(compactions).toBeGreaterThan(0);
    expect(checkpointsDuringCopy).toBeGreaterThan(0);
    await store.close();
    store = await TenantStore.open(dir.path, options);
    try {
      expectHolds(store, model, KEYS, 'after a reopen');
    } finally {
      await store.close();
    }
  });

  it('is cancelled by a close in the middle of its copy, leaving the store whole', async () => {
    const dir = tempDir('compaction');
    dirs.push(dir);
    const options = { cache: new PageCache<TreeNode>(8 * 1024 * 1024), checkpointIntervalMs: 0, fsync: 'off' as const, compactMinBytes: 0, compactGarbageRatio: 0.3 };
    let store = await TenantStore.open(dir.path, options);
    const model = new Map<number, string>();
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 40_000; i += 2000) {
        const ops: BatchOp[] = [];
        for (let j = i; j < i + 2000; j++) {
          model.set(j, `v${round}-${j}`);
          ops.push({ op: 'put', tree: 't', key: key(j), value: Buffer.from(`v${round}-${j}`) });
        }
        await store.write(ops);
      }
      await store.checkpoint();
    }
    expect(store.stats().compacting).toBe(true);
    const bytes = store.stats().pageFileBytes;
    await store.close();
    expect(store.failed).toBe(false);
    store = await TenantStore.open(dir.path, options);
    try {
      // Cancelled, not finished: the file was not replaced by a smaller one.
      expect(store.stats().pageFileBytes).toBeGreaterThanOrEqual(bytes);
      expectHolds(store, model, 40_000, 'after a close that cancelled a compaction');
    } finally {
      await store.close();
    }
  });
});
