import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { PageCache, ValueRun, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore, type BatchOp, type Snapshot, type StoreScanRange as ScanRange } from '../../engine/tenant/index.js';
import { randomBytes, randomInt, seededRandom } from '../helpers/random.js';
import { SortedModel } from '../helpers/sorted-model.js';
import { tempDir } from '../helpers/temp-dir.js';

// Longer campaigns: TETRA_FUZZ_STEPS=200000 TETRA_FUZZ_SEED=123 npx vitest run test/fuzz
const STEPS = Number(process.env.TETRA_FUZZ_STEPS ?? 12_000);
const SEEDS = process.env.TETRA_FUZZ_SEED ? [Number(process.env.TETRA_FUZZ_SEED)] : [1, 2, 3];
// Seeds run with index-like keys as well: long random keys, nearly all new, so most writes add a
// key to a clean leaf (an overlay leaf, engine/storage/btree-node.ts) rather than replace one.
const INDEX_LIKE_SEEDS = process.env.TETRA_FUZZ_SEED ? [Number(process.env.TETRA_FUZZ_SEED)] : [4, 5];
const TREES = ['alpha', 'beta', 'gamma'];
// Seeds run with beta and gamma buffered (engine/storage/buffered-tree.ts), their deltas merged
// every few dozen entries, alpha as before beside them; every other reopen opens the store
// without buffering, which must read (and write) the deltas already there all the same.
const BUFFERED_SEEDS = process.env.TETRA_FUZZ_SEED ? [Number(process.env.TETRA_FUZZ_SEED)] : [6, 7];
const BUFFERED_INDEX_LIKE_SEEDS = process.env.TETRA_FUZZ_SEED ? [Number(process.env.TETRA_FUZZ_SEED)] : [8];

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

function randomKey(rand: () => number): Buffer {
  const r = rand();
  // Mostly short keys over a small alphabet (many collisions, deep shared prefixes), some long.
  if (r < 0.9) return randomBytes(rand, randomInt(rand, 0, 6), 4);
  if (r < 0.98) return randomBytes(rand, randomInt(rand, 1, 64));
  return randomBytes(rand, randomInt(rand, 500, 2048));
}

function randomValue(rand: () => number): Buffer {
  const r = rand();
  if (r < 0.85) return randomBytes(rand, randomInt(rand, 0, 120));
  if (r < 0.97) return randomBytes(rand, randomInt(rand, 500, 2900));
  return randomBytes(rand, randomInt(rand, 3000, 40_000)); // overflow pages
}

function randomBound(rand: () => number): Buffer | undefined {
  return rand() < 0.3 ? undefined : randomBytes(rand, randomInt(rand, 0, 4), 4);
}

async function checkAll(store: TenantStore, models: Map<string, SortedModel>, context: string): Promise<void> {
  for (const [name, model] of models) {
    const expected = model.range();
    const actual = [...store.scan(name)];
    expect(actual.length, `${context}: size of ${name}`).toBe(expected.length);
    expect(store.count(name), `${context}: count of ${name}`).toBe(expected.length);
    for (let i = 0; i < expected.length; i++) {
      if (!actual[i]![0].equals(expected[i]![0]) || !actual[i]![1].equals(expected[i]![1])) {
        throw new Error(`${context}: ${name} differs at index ${i}: key ${actual[i]![0].toString('hex')} vs ${expected[i]![0].toString('hex')}`);
      }
    }
  }
  const nonEmpty = [...models].filter(([, m]) => m.size > 0).map(([n]) => n).sort();
  expect(store.treeNames(), `${context}: tree names`).toEqual(nonEmpty);
}

/**
 * Every other read of a range against the scan's expected entries: values, keys, runs of values,
 * a bounded synchronous read, and point reads (get, getInto, has) of its first keys.
 */
function checkReads(store: TenantStore, tree: string, range: ScanRange, expected: Array<[Buffer, Buffer]>, context: string): void {
  const hex = (bs: Buffer[]): string[] => bs.map((b) => b.toString('hex'));
  expect(hex([...store.values(tree, range)]), `${context}: values`).toEqual(hex(expected.map(([, v]) => v)));
  expect(hex([...store.keys(tree, range)]), `${context}: keys`).toEqual(hex(expected.map(([k]) => k)));
  const runs: Buffer[] = [];
  for (const run of store.valueRuns(tree, range)) for (let i = 0; i < run.count; i++) runs.push(Buffer.from(run.bufs[i]!.subarray(run.starts[i]!, run.starts[i]! + run.lengths[i]!)));
  expect(hex(runs), `${context}: valueRuns`).toEqual(hex(expected.map(([, v]) => v)));
  const out: Buffer[] = [];
  const more = store.valuesNow(tree, range, 3, out);
  expect(hex(out), `${context}: valuesNow`).toEqual(hex(expected.slice(0, 3).map(([, v]) => v)));
  expect(more, `${context}: valuesNow says more`).toBe(expected.length > 3);
  const run = new ValueRun();
  for (const [k, v] of expected.slice(0, 3)) {
    expect(store.get(tree, k)?.equals(v), `${context}: get`).toBe(true);
    expect(store.has(tree, k), `${context}: has`).toBe(true);
    expect(store.getInto(tree, k, run), `${context}: getInto`).toBe(true);
    expect(run.bufs[0]!.subarray(run.starts[0]!, run.starts[0]! + run.lengths[0]!).equals(v), `${context}: getInto's value`).toBe(true);
  }
}

/**
 * Where the sequence takes its keys. Colliding: short keys over a small alphabet, so puts often
 * replace and deletes often hit. Index-like: random keys of 8 to 24 bytes, so puts add new keys;
 * deletes and reads take a key put before about half the time.
 */
function keySource(rand: () => number, indexLike: boolean): { put: () => Buffer; other: () => Buffer } {
  if (!indexLike) return { put: () => randomKey(rand), other: () => randomKey(rand) };
  const recent: Buffer[] = [];
  return {
    put: () => {
      const key = rand() < 0.02 ? randomKey(rand) : randomBytes(rand, randomInt(rand, 8, 24));
      if (recent.length < 4096) recent.push(key);
      else recent[randomInt(rand, 0, recent.length - 1)] = key;
      return key;
    },
    other: () => (recent.length > 0 && rand() < 0.5 ? recent[randomInt(rand, 0, recent.length - 1)]! : randomKey(rand)),
  };
}

describe('B+tree against a sorted map under random operations', () => {
  const runs = [
    ...SEEDS.map((seed) => ({ seed, indexLike: false, buffered: false })),
    ...INDEX_LIKE_SEEDS.map((seed) => ({ seed, indexLike: true, buffered: false })),
    ...BUFFERED_SEEDS.map((seed) => ({ seed, indexLike: false, buffered: true })),
    ...BUFFERED_INDEX_LIKE_SEEDS.map((seed) => ({ seed, indexLike: true, buffered: true })),
  ];
  for (const { seed, indexLike, buffered } of runs) {
    it(`seed ${seed}${indexLike ? ', index-like keys' : ''}${buffered ? ', two trees buffered' : ''}: ${STEPS} steps with checkpoints, compactions and reopens`, async () => {
      const rand = seededRandom(seed);
      const keys = keySource(rand, indexLike);
      const dir = tempDir('fuzz');
      dirs.push(dir);
      // A tiny cache forces evictions and re-reads from the file all the time.
      const cache = new PageCache<TreeNode>(256 * 1024);
      let opens = 0;
      const open = () =>
        TenantStore.open(dir.path, {
          cache,
          fsync: 'off',
          checkpointIntervalMs: 0,
          compactMinBytes: 0,
          compactGarbageRatio: 0.6,
          bufferedTrees: buffered && opens++ % 2 === 0 ? (tree) => tree !== 'alpha' : () => false,
          deltaMergeMin: 16,
          bufferFromEntries: 8,
        });
      let store = await open();
      let merged = 0;
      const models = new Map(TREES.map((t) => [t, new SortedModel()]));
      const counts = { checkpoint: 0, background: 0, compact: 0, reopen: 0, drop: 0, scans: 0, snapshots: 0, snapshotChecks: 0 };
      // Snapshots held across writes, checkpoints and compactions, each with the models as they
      // were when it was taken: reading one must always give exactly that state.
      let held: Array<{ snapshot: Snapshot; models: Map<string, SortedModel>; step: number }> = [];
      const checkSnapshot = (h: (typeof held)[number], step: number): void => {
        const tree = TREES[randomInt(rand, 0, TREES.length - 1)]!;
        const expected = h.models.get(tree)!.range();
        const actual = [...h.snapshot.scan(tree)];
        const context = `seed ${seed} step ${step}: snapshot from step ${h.step}, tree ${tree}`;
        expect(actual.length, context).toBe(expected.length);
        for (let i = 0; i < expected.length; i++) {
          if (!actual[i]![0].equals(expected[i]![0]) || !actual[i]![1].equals(expected[i]![1])) throw new Error(`${context}: differs at index ${i}`);
        }
        expect(h.snapshot.count(tree), context).toBe(expected.length);
        const probe = keys.other();
        const value = h.models.get(tree)!.get(probe);
        if (value === undefined) expect(h.snapshot.get(tree, probe), context).toBeUndefined();
        else expect(h.snapshot.get(tree, probe)?.equals(value), context).toBe(true);
        counts.snapshotChecks++;
      };
      // A checkpoint left running while the sequence goes on: writes meet frozen nodes.
      let background: Promise<void> | undefined;
      const settle = async (): Promise<void> => {
        await background;
        background = undefined;
      };

      for (let step = 0; step < STEPS; step++) {
        const r = rand();
        if (r < 0.55) {
          // An atomic batch of puts and deletes over several trees.
          const ops: BatchOp[] = [];
          for (let i = randomInt(rand, 1, 5); i > 0; i--) {
            const tree = TREES[randomInt(rand, 0, TREES.length - 1)]!;
            if (rand() < 0.7) ops.push({ op: 'put', tree, key: keys.put(), value: randomValue(rand) });
            else ops.push({ op: 'delete', tree, key: keys.other() });
          }
          await store.write(ops);
          for (const op of ops) {
            const model = models.get(op.tree)!;
            if (op.op === 'put') model.put(Buffer.from(op.key), Buffer.from(op.value));
            else if (op.op === 'delete') model.delete(Buffer.from(op.key));
          }
        } else if (r < 0.57) {
          const pick = rand();
          if (pick < 0.3 && held.length < 3) {
            held.push({ snapshot: store.snapshot(), models: new Map([...models].map(([n, m]) => [n, m.clone()])), step });
            counts.snapshots++;
          } else if (held.length > 0) {
            const i = randomInt(rand, 0, held.length - 1);
            checkSnapshot(held[i]!, step);
            if (pick > 0.8) {
              held[i]!.snapshot.close();
              held.splice(i, 1);
            }
          }
        } else if (r < 0.8) {
          const tree = TREES[randomInt(rand, 0, TREES.length - 1)]!;
          const key = keys.other();
          const expected = models.get(tree)!.get(key);
          const actual = store.get(tree, key);
          if (expected === undefined) expect(actual, `step ${step} get`).toBeUndefined();
          else expect(actual?.equals(expected), `step ${step} get ${key.toString('hex')}`).toBe(true);
        } else if (r < 0.97) {
          const tree = TREES[randomInt(rand, 0, TREES.length - 1)]!;
          const range: { gt?: Buffer; gte?: Buffer; lt?: Buffer; lte?: Buffer; reverse?: boolean; limit?: number } = {};
          const lo = randomBound(rand);
          const hi = randomBound(rand);
          if (lo) range[rand() < 0.5 ? 'gt' : 'gte'] = lo;
          if (hi) range[rand() < 0.5 ? 'lt' : 'lte'] = hi;
          if (rand() < 0.5) range.reverse = true;
          if (rand() < 0.3) range.limit = randomInt(rand, 0, 20);
          const expected = models.get(tree)!.range(range);
          const actual = [...store.scan(tree, range)];
          counts.scans++;
          expect(actual.map(([k]) => k.toString('hex')), `step ${step} scan ${JSON.stringify(range)}`).toEqual(expected.map(([k]) => k.toString('hex')));
          const { limit: _limit, ...unlimited } = range;
          expect(store.count(tree, unlimited), `step ${step} count`).toBe(models.get(tree)!.range(unlimited).length);
          if (buffered) checkReads(store, tree, range, expected, `step ${step} ${JSON.stringify(range)}`);
        } else if (buffered && r < 0.975) {
          // A turn of the event loop: a merge of a buffered tree's delta goes a chunk further.
          await nextTurn();
          merged = Math.max(merged, store.stats().mergedEntries);
        } else if (r < 0.978) {
          await settle();
          await store.checkpoint();
          counts.checkpoint++;
        } else if (r < 0.985) {
          if (background === undefined) {
            background = store.checkpoint();
            counts.background++;
          }
        } else if (r < 0.99) {
          await settle();
          await store.checkpoint();
          await store.compact();
          counts.compact++;
        } else if (r < 0.997) {
          await settle();
          merged = Math.max(merged, store.stats().mergedEntries);
          await store.close();
          // Closing the store ends its snapshots: reading one fails cleanly, never wrongly.
          for (const h of held) expect(() => [...h.snapshot.scan(TREES[0]!)]).toThrow(expect.objectContaining({ code: 'UNAVAILABLE' }));
          held = [];
          store = await open();
          counts.reopen++;
          await checkAll(store, models, `seed ${seed} after reopen at step ${step}`);
        } else {
          const tree = TREES[randomInt(rand, 0, TREES.length - 1)]!;
          await store.write([{ op: 'dropTree', tree }]);
          models.get(tree)!.clear();
          counts.drop++;
        }
      }
      await settle();
      for (const h of held) checkSnapshot(h, STEPS);
      await checkAll(store, models, `seed ${seed} at the end`);
      await store.close();
      store = await open();
      await checkAll(store, models, `seed ${seed} after the final reopen`);
      await store.close();
      expect(counts.reopen + counts.checkpoint + counts.compact).toBeGreaterThan(0);
      expect(counts.background).toBeGreaterThan(0);
      expect(counts.snapshotChecks).toBeGreaterThan(20);
      if (buffered) expect(merged, 'merges ran').toBeGreaterThan(100);
    });
  }

  it('grows to many levels with ascending, descending and random keys, then deletes everything', async () => {
    const dir = tempDir('levels');
    dirs.push(dir);
    const cache = new PageCache<TreeNode>(1024 * 1024);
    let store = await TenantStore.open(dir.path, { cache, fsync: 'off', checkpointIntervalMs: 0, compactMinBytes: 0 });
    const rand = seededRandom(99);
    const keys: Buffer[] = [];
    for (let i = 0; i < 20_000; i++) keys.push(Buffer.from(`asc-${String(i).padStart(8, '0')}`));
    for (let i = 20_000; i > 0; i--) keys.push(Buffer.from(`desc-${String(i).padStart(8, '0')}`));
    for (let i = 0; i < 20_000; i++) keys.push(randomBytes(rand, 12));
    const value = Buffer.alloc(40, 1);
    for (let i = 0; i < keys.length; i += 500) {
      await store.write(keys.slice(i, i + 500).map((key) => ({ op: 'put' as const, tree: 't', key, value })));
    }
    const distinct = new Set(keys.map((k) => k.toString('hex'))).size;
    expect(store.count('t')).toBe(distinct);
    await store.checkpoint();
    const sizeFull = store.stats().pageFileBytes;
    // Sequential inserts pack pages: 60k small entries need well under 2x their raw size.
    expect(sizeFull).toBeLessThan(distinct * 70 * 2.2);
    await store.close();
    store = await TenantStore.open(dir.path, { cache, fsync: 'off', checkpointIntervalMs: 0, compactMinBytes: 0 });
    const sorted = [...new Set(keys.map((k) => k.toString('hex')))].sort();
    expect([...store.keys('t')].map((k) => k.toString('hex'))).toEqual(sorted);
    for (let i = 0; i < keys.length; i += 700) {
      await store.write(keys.slice(i, i + 700).map((key) => ({ op: 'delete' as const, tree: 't', key })));
    }
    expect(store.count('t')).toBe(0);
    expect([...store.scan('t')]).toEqual([]);
    await store.checkpoint();
    await store.compact();
    expect(store.stats().pageFileBytes).toBeLessThan(sizeFull / 10);
    await store.close();
    store = await TenantStore.open(dir.path, { cache, fsync: 'off', checkpointIntervalMs: 0 });
    expect(store.treeNames()).toEqual([]);
    await store.close();
  });

  it('scans a snapshot: writes made while a scan runs never show up in it, keys moved across the cursor neither repeat nor go missing', async () => {
    const dir = tempDir('iter');
    dirs.push(dir);
    const cache = new PageCache<TreeNode>(1024 * 1024);
    const store = await TenantStore.open(dir.path, { cache, fsync: 'off', checkpointIntervalMs: 0 });
    const key = (i: number) => Buffer.from(String(i).padStart(6, '0'));
    await store.write(Array.from({ length: 3000 }, (_, i) => ({ op: 'put' as const, tree: 't', key: key(i * 2), value: Buffer.from('x') })));
    const seen: string[] = [];
    let writes = 0;
    for (const [k] of store.scan('t')) {
      seen.push(k.toString());
      if (seen.length % 50 === 0) {
        // Insert keys both behind and ahead of the cursor, and delete one ahead.
        const at = Number(k.toString());
        void store.write([
          { op: 'put', tree: 't', key: key(at + 1), value: Buffer.from('new') },
          { op: 'put', tree: 't', key: key(Math.max(0, at - 1)), value: Buffer.from('behind') },
          { op: 'delete', tree: 't', key: key(at + 4) },
        ]);
        writes++;
      }
    }
    expect(writes).toBeGreaterThan(10);
    // Exactly the state when the scan started: every original key once, in order, nothing new.
    expect(seen).toEqual(Array.from({ length: 3000 }, (_, i) => key(i * 2).toString()));
    // A key moved across the cursor in one batch (deleted ahead, put back behind, and the
    // reverse) is seen exactly once, at its old place.
    const moved: string[] = [];
    let step = 0;
    for (const [k] of store.scan('t', { gte: key(0), lt: key(2000) })) {
      moved.push(k.toString());
      if (++step === 100) {
        await store.write([
          { op: 'delete', tree: 't', key: key(1500) },
          { op: 'put', tree: 't', key: Buffer.from('000001-moved'), value: Buffer.from('moved back') },
          { op: 'delete', tree: 't', key: key(10) },
          { op: 'put', tree: 't', key: Buffer.from('001998-moved'), value: Buffer.from('moved ahead') },
        ]);
      }
    }
    expect(new Set(moved).size).toBe(moved.length);
    expect(moved).toContain(key(1500).toString());
    expect(moved).toContain(key(10).toString());
    expect(moved).not.toContain('000001-moved');
    expect(moved).not.toContain('001998-moved');
    await store.close();
  });
});
