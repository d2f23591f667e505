import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  compileFilter,
  compileSort,
  docsCount,
  docsCreateIndex,
  docsDelete,
  docsDropCollection,
  docsExpireDue,
  docsFind,
  docsInsert,
  docsListIndexes,
  docsUpdate,
  sortDocuments,
  type Doc,
} from '../../engine/docs/index.js';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';

const makeDir = dirsRemovedAfterEach();
let store: TenantStore;
beforeEach(async () => {
  // Index deltas merged every few dozen entries (engine/storage/buffered-tree.ts), so the tests read indexes merged and unmerged.
  store = await TenantStore.open(makeDir('docs-model'), { cache: new PageCache<TreeNode>(16 * 1024 * 1024), fsync: 'off', checkpointIntervalMs: 0, deltaMergeMin: 16, bufferFromEntries: 24 });
});
afterEach(() => store.close());

async function insert(collection: string, documents: unknown[]): Promise<void> {
  await docsInsert(store, collection, documents).durable;
}

async function index(collection: string, keys: Doc, options: Doc = {}): Promise<void> {
  await (await docsCreateIndex(store, collection, keys, options)).durable;
}

async function ids(collection: string, filter: unknown, sort?: Doc): Promise<unknown[]> {
  const { documents } = await docsFind(store, collection, { filter, sort, limit: 10_000 });
  return documents.map((d) => d['_id']);
}

async function explain(collection: string, filter: unknown, sort?: Doc): Promise<{ ids: unknown[]; plan: Record<string, unknown>; explain: Record<string, unknown> }> {
  const { documents, explain } = await docsFind(store, collection, { filter, sort, limit: 10_000, explain: true });
  return { ids: documents.map((d) => d['_id']), plan: explain!['plan'] as Record<string, unknown>, explain: explain! };
}

/** What a filter and sort select from `docs`, computed without the store. */
function expected(docs: readonly Doc[], filter: unknown, sort: Doc = {}): unknown[] {
  const f = compileFilter(filter);
  return sortDocuments(docs.filter((d) => f.test(d)), compileSort(sort)).map((d) => d['_id']);
}

// ---------------------------------------------------------------------------------------------

describe('the planner, as explain shows it', () => {
  // Sort keys b, c are unique together (c alone is), so every sorted answer has one order.
  const docs: Doc[] = Array.from({ length: 40 }, (_, i) => ({ _id: i, a: i % 7, b: i % 4, c: i, u: i * 10, m: [i % 3, i % 5], s: `k${i % 6}` }));
  beforeEach(async () => {
    await insert('plan', docs);
    await index('plan', { a: 1 });
    await index('plan', { b: 1, c: -1 });
    await index('plan', { u: 1 }, { unique: true });
    await index('plan', { m: 1 });
  });

  const cases: Array<{ name: string; filter: Doc; sort?: Doc; stage: string; index?: string; inMemorySort: boolean; direction?: string }> = [
    { name: '_id equality reads one document', filter: { _id: 5 }, stage: 'IDHACK', inMemorySort: false },
    { name: '_id $in reads each point', filter: { _id: { $in: [3, 1, 99] } }, stage: 'IDHACK', inMemorySort: false },
    { name: '_id equality wins over an index', filter: { _id: 5, a: 5 }, stage: 'IDHACK', inMemorySort: false },
    { name: 'a range on _id reads part of the collection', filter: { _id: { $gte: 30 } }, stage: 'IDSCAN', inMemorySort: false },
    { name: 'equality on an indexed field', filter: { a: 3 }, stage: 'IXSCAN', index: 'a_1', inMemorySort: false },
    { name: 'a range on an indexed field', filter: { a: { $gt: 1, $lte: 4 } }, stage: 'IXSCAN', index: 'a_1', inMemorySort: false },
    { name: 'equality then a range on a compound index beats one equality', filter: { a: 3, b: 1, c: { $gt: 10 } }, stage: 'IXSCAN', index: 'b_1_c_-1', inMemorySort: false },
    { name: 'a unique index fixed by equality is preferred', filter: { b: 2, u: 60 }, stage: 'IXSCAN', index: 'u_1', inMemorySort: false },
    { name: 'a multikey index answers equality on an element', filter: { m: 4 }, stage: 'IXSCAN', index: 'm_1', inMemorySort: false },
    { name: 'a sort in index order needs no sort in memory', filter: {}, sort: { b: 1, c: -1 }, stage: 'IXSCAN', index: 'b_1_c_-1', inMemorySort: false, direction: 'forward' },
    { name: 'the reverse sort reads the index backwards', filter: {}, sort: { b: -1, c: 1 }, stage: 'IXSCAN', index: 'b_1_c_-1', inMemorySort: false, direction: 'backward' },
    { name: 'equality on the prefix then a sort on the next field', filter: { b: 2 }, sort: { c: -1 }, stage: 'IXSCAN', index: 'b_1_c_-1', inMemorySort: false },
    { name: 'a sort on a field fixed by equality costs nothing, then the next field', filter: { b: 2 }, sort: { b: 1, c: 1 }, stage: 'IXSCAN', index: 'b_1_c_-1', inMemorySort: false, direction: 'backward' },
    { name: 'a sort on the next field, then one fixed by equality', filter: { b: 2 }, sort: { c: 1, b: -1 }, stage: 'IXSCAN', index: 'b_1_c_-1', inMemorySort: false, direction: 'backward' },
    { name: 'a range then a sort on the same field', filter: { u: { $gte: 100 } }, sort: { u: -1 }, stage: 'IXSCAN', index: 'u_1', inMemorySort: false, direction: 'backward' },
    { name: 'several prefixes ($in) cannot give the order', filter: { b: { $in: [1, 2] } }, sort: { c: -1 }, stage: 'IXSCAN', index: 'b_1_c_-1', inMemorySort: true },
    { name: 'a sort against the index order is done in memory', filter: {}, sort: { b: 1, c: 1 }, stage: 'COLLSCAN', inMemorySort: true },
    { name: 'a multikey index cannot give a sort order', filter: {}, sort: { m: 1 }, stage: 'COLLSCAN', inMemorySort: true },
    { name: 'a sort on _id reads the collection in order', filter: {}, sort: { _id: -1 }, stage: 'COLLSCAN', inMemorySort: false, direction: 'backward' },
    { name: '$ne cannot bound an index', filter: { a: { $ne: 3 } }, stage: 'COLLSCAN', inMemorySort: false },
    { name: 'a top-level $or is not planned', filter: { $or: [{ a: 1 }, { a: 2 }] }, stage: 'COLLSCAN', inMemorySort: false },
    { name: '$regex is not planned', filter: { s: { $regex: '^k1' } }, stage: 'COLLSCAN', inMemorySort: false },
    { name: 'an unindexed field', filter: { s: 'k1' }, stage: 'COLLSCAN', inMemorySort: false },
    { name: 'an empty $in matches nothing', filter: { a: { $in: [] } }, stage: 'EOF', inMemorySort: false },
    { name: 'an empty $in on _id matches nothing', filter: { _id: { $in: [] }, a: 1 }, stage: 'EOF', inMemorySort: false },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.stage}${c.index ? ` ${c.index}` : ''}`, async () => {
      const got = await explain('plan', c.filter, c.sort);
      expect(got.plan['stage']).toBe(c.stage);
      if (c.index !== undefined) expect(got.plan['indexName']).toBe(c.index);
      if (c.direction !== undefined) expect(got.plan['direction']).toBe(c.direction);
      expect(got.explain['inMemorySort']).toBe(c.inMemorySort);
      const want = expected(docs, c.filter, c.sort);
      // Without a sort the order is the plan's: compare as sets.
      if (c.sort === undefined) expect([...got.ids].sort()).toEqual([...want].sort());
      else expect(got.ids).toEqual(want);
      expect(got.explain['nReturned']).toBe(want.length);
    });
  }

  it('IDHACK examines only the points, an equality IXSCAN only its keys', async () => {
    expect((await explain('plan', { _id: { $in: [3, 1, 99] } })).explain).toMatchObject({ keysExamined: 3, docsExamined: 2, nReturned: 2 });
    expect((await explain('plan', { a: 3 })).explain).toMatchObject({ keysExamined: 6, docsExamined: 6, nReturned: 6 });
    expect((await explain('plan', { a: { $in: [] } })).explain).toMatchObject({ keysExamined: 0, docsExamined: 0, nReturned: 0 });
  });
});

// ---------------------------------------------------------------------------------------------

describe('index bounds find every match', () => {
  // Each case: documents, an index, a filter the planner bounds with that index; the answer must
  // be what the filter selects from the documents.
  const LONG = 'x'.repeat(250);
  const D = (iso: string) => ({ $date: iso });
  const cases: Array<{ name: string; docs: Doc[]; keys: Doc; filter: Doc }> = [
    {
      name: 'both ends of a range on a multikey field may hold for different elements',
      docs: [{ _id: 1, a: [0, 5] }, { _id: 2, a: [1.5] }, { _id: 3, a: 7 }],
      keys: { a: 1 },
      filter: { a: { $gt: 1, $lt: 2 } },
    },
    {
      name: 'a range whose ends cross, over arrays of dates',
      docs: [{ _id: 1, t: [D('2020-01-01T00:00:00Z'), D('2030-01-01T00:00:00Z')] }, { _id: 2, t: D('2025-01-01T00:00:00Z') }],
      keys: { t: -1 },
      filter: { t: { $gte: D('2029-01-01T00:00:00Z'), $lte: D('2021-01-01T00:00:00Z') } },
    },
    {
      name: 'two ranges on one multikey path under $and',
      docs: [{ _id: 1, 'd': [{ e: 0 }, { e: 9 }] }, { _id: 2, d: [{ e: 5 }] }],
      keys: { 'd.e': 1 },
      filter: { $and: [{ 'd.e': { $gt: 6 } }, { 'd.e': { $lt: 3 } }] },
    },
    {
      name: '$gt a long string: keys share the shortened prefix',
      docs: [{ _id: 1, s: `${LONG}y` }, { _id: 2, s: LONG }, { _id: 3, s: 'x' }],
      keys: { s: 1 },
      filter: { s: { $gt: `${'x'.repeat(220)}` } },
    },
    {
      name: '$lt a long string: keys share the shortened prefix',
      docs: [{ _id: 1, s: LONG }, { _id: 2, s: `${LONG}y` }, { _id: 3, s: 'y' }],
      keys: { s: -1 },
      filter: { s: { $lt: `${LONG}a` } },
    },
    {
      name: '$gte and $lte long strings',
      docs: [{ _id: 1, s: LONG }, { _id: 2, s: `${LONG}y` }, { _id: 3, s: 'y' }],
      keys: { s: 1 },
      filter: { s: { $gte: `${LONG}a`, $lte: `${LONG}z` } },
    },
    {
      name: 'a range with both ends on a field that is never an array',
      docs: [{ _id: 1, a: 1 }, { _id: 2, a: 1.5 }, { _id: 3, a: 2 }, { _id: 4, a: 'b' }],
      keys: { a: -1 },
      filter: { a: { $gt: 1, $lte: 2 } },
    },
    {
      name: 'equality with an array: the whole array or an element that is that array',
      docs: [{ _id: 1, a: [1, 2] }, { _id: 2, a: [[1, 2], 3] }, { _id: 3, a: [2, 1] }, { _id: 4, a: 1 }],
      keys: { a: 1 },
      filter: { a: [1, 2] },
    },
    {
      name: 'equality with an empty array',
      docs: [{ _id: 1, a: [] }, { _id: 2, a: [[]] }, { _id: 3, a: null }, { _id: 4 }],
      keys: { a: 1 },
      filter: { a: [] },
    },
    {
      name: 'null matches null, a missing field, [null] and a missing field in an array of documents',
      docs: [{ _id: 1, d: { e: null } }, { _id: 2, d: {} }, { _id: 3, d: [{ e: 1 }, { f: 1 }] }, { _id: 4, d: [{ e: [null] }] }, { _id: 5, d: { e: 0 } }, { _id: 6 }],
      keys: { 'd.e': 1 },
      filter: { 'd.e': null },
    },
    {
      name: '$in with null, an array and a date',
      docs: [{ _id: 1, a: null }, { _id: 2, a: [5, [7]] }, { _id: 3, a: D('2020-01-01T00:00:00Z') }, { _id: 4, a: 7 }],
      keys: { a: 1 },
      filter: { a: { $in: [null, [7], D('2020-01-01T00:00:00Z')] } },
    },
    {
      name: '-0 equals 0',
      docs: [{ _id: 1, a: -0 }, { _id: 2, a: 0 }, { _id: 3, a: [-0] }],
      keys: { a: -1 },
      filter: { a: 0 },
    },
    {
      name: 'a compound index: equality on a multikey prefix, a range on the next field',
      docs: [{ _id: 1, a: [1, 2], b: 5 }, { _id: 2, a: 1, b: 3 }, { _id: 3, a: [3], b: 5 }],
      keys: { a: 1, b: -1 },
      filter: { a: 1, b: { $gte: 4 } },
    },
    {
      name: 'an embedded document compared whole',
      docs: [{ _id: 1, a: { x: 1, y: 2 } }, { _id: 2, a: { y: 2, x: 1 } }, { _id: 3, a: [{ x: 1, y: 2 }] }],
      keys: { a: 1 },
      filter: { a: { x: 1, y: 2 } },
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      await insert('bounds', c.docs);
      await index('bounds', c.keys);
      const stored = (await docsFind(store, 'bounds', { limit: 10_000 })).documents;
      const got = await explain('bounds', c.filter);
      expect(got.plan['stage']).toBe('IXSCAN');
      expect([...got.ids].sort()).toEqual([...expected(stored, c.filter)].sort());
      // Writes find their documents through the same plans.
      expect(await docsCount(store, 'bounds', { filter: c.filter })).toBe(got.ids.length);
      const { result } = await docsUpdate(store, 'bounds', c.filter, { $set: { hit: true } }, { multi: true });
      expect(result.matchedCount).toBe(got.ids.length);
    });
  }

  it('a string whose 200th UTF-16 unit starts a surrogate pair can be indexed and queried', async () => {
    // Index keys keep the first 200 characters of a long string; cutting a pair in half leaves
    // a lone surrogate, which the key codec refuses.
    const straddling = `${'x'.repeat(199)}\u{1F600}tail`;
    await index('astral', { s: 1 });
    await insert('astral', [{ _id: 1, s: straddling }, { _id: 2, s: `${'x'.repeat(199)}w` }]);
    expect(await ids('astral', { s: straddling })).toEqual([1]);
    expect(await ids('astral', { s: { $gt: `${'x'.repeat(199)}\uFFFF` } })).toEqual([1]); // U+1F600 > U+FFFF by code point
  });
});

// ---------------------------------------------------------------------------------------------

describe('unique indexes', () => {
  it('count a missing field as null: a second document without the field conflicts (as in MongoDB)', async () => {
    await index('uq', { u: 1 }, { unique: true });
    await insert('uq', [{ _id: 1 }]);
    expect(() => docsInsert(store, 'uq', [{ _id: 2 }])).toThrow(expect.objectContaining({ code: 'DUPLICATE_KEY' }));
    expect(() => docsInsert(store, 'uq', [{ _id: 3, u: null }])).toThrow(expect.objectContaining({ code: 'DUPLICATE_KEY' }));
    await insert('uq', [{ _id: 4, u: 1 }]);
    expect(await ids('uq', {}, { _id: 1 })).toEqual([1, 4]);
  });

  it('let a document repeat a value in its own array, but not another document', async () => {
    await index('uq', { u: 1 }, { unique: true });
    await insert('uq', [{ _id: 1, u: [1, 1] }]);
    await insert('uq', [{ _id: 2, u: [2, 3] }]);
    expect(() => docsInsert(store, 'uq', [{ _id: 3, u: 1 }])).toThrow(expect.objectContaining({ code: 'DUPLICATE_KEY' }));
    expect(() => docsInsert(store, 'uq', [{ _id: 4, u: [4, 3] }])).toThrow(expect.objectContaining({ code: 'DUPLICATE_KEY' }));
    // Updating the document within its own keys is no conflict either.
    const { result } = await docsUpdate(store, 'uq', { _id: 1 }, { $push: { u: 1 } }, { multi: false });
    expect(result).toEqual({ matchedCount: 1, modifiedCount: 1 });
    expect(await ids('uq', { u: 1 })).toEqual([1]);
  });

  it('refuse a whole insertMany that repeats a key within itself', async () => {
    await index('uq', { u: 1 }, { unique: true });
    expect(() => docsInsert(store, 'uq', [{ _id: 1, u: 'k' }, { _id: 2, u: 'j' }, { _id: 3, u: 'k' }])).toThrow(expect.objectContaining({ code: 'DUPLICATE_KEY' }));
    expect(await docsCount(store, 'uq', {})).toBe(0);
  });

  it('follow an update that moves a key: the old key is free, the new one taken', async () => {
    await index('uq', { u: 1 }, { unique: true });
    await insert('uq', [{ _id: 1, u: 1 }, { _id: 2, u: 2 }]);
    await (await docsUpdate(store, 'uq', { _id: 1 }, { $set: { u: 10 } }, { multi: false })).durable;
    await insert('uq', [{ _id: 3, u: 1 }]);
    expect(() => docsInsert(store, 'uq', [{ _id: 4, u: 10 }])).toThrow(expect.objectContaining({ code: 'DUPLICATE_KEY' }));
    await expect(docsUpdate(store, 'uq', { _id: 2 }, { $set: { u: 10 } }, { multi: false })).rejects.toMatchObject({ code: 'DUPLICATE_KEY' });
    expect((await docsFind(store, 'uq', { sort: { _id: 1 } })).documents).toEqual([{ _id: 1, u: 10 }, { _id: 2, u: 2 }, { _id: 3, u: 1 }]);
    expect(await ids('uq', { u: 10 })).toEqual([1]);
  });

  it('refuse an updateMany that would repeat a key, changing nothing in that chunk', async () => {
    await index('uq', { u: 1 }, { unique: true });
    await insert('uq', [{ _id: 1, u: 1 }, { _id: 2, u: 2 }, { _id: 3, u: 3 }]);
    // In _id order the first document would take 2, still held by the second.
    await expect(docsUpdate(store, 'uq', {}, { $inc: { u: 1 } }, { multi: true })).rejects.toMatchObject({ code: 'DUPLICATE_KEY' });
    expect((await docsFind(store, 'uq', { sort: { _id: 1 } })).documents.map((d) => d['u'])).toEqual([1, 2, 3]);
  });

  it('let an updateMany take a key an earlier document of the same operation gave up (as MongoDB does, one document after another)', async () => {
    await index('uq', { u: 1 }, { unique: true });
    await insert('uq', [{ _id: 1, u: 1 }, { _id: 2, u: 2 }, { _id: 3, u: 3 }]);
    // In _id order: 1 -> 0 frees 1, 2 -> 1 frees 2, 3 -> 2.
    const { result } = await docsUpdate(store, 'uq', {}, { $inc: { u: -1 } }, { multi: true });
    expect(result).toEqual({ matchedCount: 3, modifiedCount: 3 });
    expect((await docsFind(store, 'uq', { sort: { _id: 1 } })).documents.map((d) => d['u'])).toEqual([0, 1, 2]);
  });

  it('refuse to build over duplicate data, leaving no index behind', async () => {
    await insert('uq', [{ _id: 1, u: 1 }, { _id: 2, u: 2 }, { _id: 3, u: 1 }]);
    await expect(docsCreateIndex(store, 'uq', { u: 1 }, { unique: true })).rejects.toMatchObject({ code: 'DUPLICATE_KEY' });
    expect(docsListIndexes(store, 'uq').map((i) => i.name)).toEqual(['_id_']);
    await insert('uq', [{ _id: 4, u: 1 }]); // nothing enforces the failed index
    expect((await explain('uq', { u: 1 })).plan['stage']).toBe('COLLSCAN');
  });
});

// ---------------------------------------------------------------------------------------------

describe('compound multikey indexes', () => {
  it('refuse a document with arrays in two fields of one key (parallel arrays), in inserts, updates and builds', async () => {
    await index('par', { a: 1, b: 1 });
    await insert('par', [{ _id: 1, a: [1, 2], b: 3 }, { _id: 2, a: 1, b: [3, 4] }]);
    expect(() => docsInsert(store, 'par', [{ _id: 3, a: [1], b: [2] }])).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    await expect(docsUpdate(store, 'par', { _id: 1 }, { $set: { b: [5, 6] } }, { multi: false })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await docsFind(store, 'par', { sort: { _id: 1 } })).documents).toEqual([{ _id: 1, a: [1, 2], b: 3 }, { _id: 2, a: 1, b: [3, 4] }]);

    await insert('par2', [{ _id: 1, x: [1], y: [2] }]);
    await expect(docsCreateIndex(store, 'par2', { x: 1, y: 1 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(docsListIndexes(store, 'par2').map((i) => i.name)).toEqual(['_id_']);
  });

  it('accept two fields under one array of documents ({"d.x": 1, "d.y": 1}), which MongoDB does not count as parallel', async () => {
    await index('shared', { 'd.x': 1, 'd.y': 1 });
    await insert('shared', [{ _id: 1, d: [{ x: 1, y: 5 }, { x: 3, y: 2 }] }]);
    expect(await ids('shared', { 'd.x': 1, 'd.y': 2 })).toEqual([1]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('dropCollection', () => {
  it('drops documents and indexes: the name comes back empty, with only _id_', async () => {
    await index('gone', { a: 1 });
    await index('gone', { b: 1 }, { unique: true });
    await insert('gone', [{ _id: 1, a: 5, b: 1 }, { _id: 2, a: 5, b: 2 }]);
    const drop = docsDropCollection(store, 'gone');
    await drop.durable;
    expect(drop.result).toEqual({ dropped: true });
    expect(docsDropCollection(store, 'gone').result).toEqual({ dropped: false });
    expect(await ids('gone', {})).toEqual([]);
    expect(() => docsListIndexes(store, 'gone')).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));

    await insert('gone', [{ _id: 1, a: 6, b: 1 }]);
    expect(docsListIndexes(store, 'gone')).toEqual([{ name: '_id_', key: { _id: 1 }, unique: true }]);
    expect(await docsCount(store, 'gone', {})).toBe(1);
    await insert('gone', [{ _id: 2, b: 1 }]); // the old unique index is gone with its entries
    expect((await explain('gone', { a: 5 })).plan['stage']).toBe('COLLSCAN');
    // A new index of the same name starts from the new documents only.
    await index('gone', { a: 1 });
    const got = await explain('gone', { a: { $gte: 0 } });
    expect(got.plan).toMatchObject({ stage: 'IXSCAN', indexName: 'a_1' });
    expect(got.ids).toEqual([1]);
    expect(got.explain['keysExamined']).toBe(1);
  });
});

// ---------------------------------------------------------------------------------------------

describe('multi-document updates against concurrent writes', () => {
  const N = 2000; // eight chunks of 256: updateMany yields to the event loop between them

  it('updateMany re-reads each document live: a concurrent updateOne is kept, a concurrent delete stays deleted', async () => {
    await index('live', { n: 1 });
    await insert('live', Array.from({ length: N }, (_, i) => ({ _id: i, n: 0, flag: true })));
    const finished: string[] = [];
    const many = docsUpdate(store, 'live', { flag: true }, { $inc: { n: 1 } }, { multi: true }).then((w) => {
      finished.push('many');
      return w;
    });
    await nextTurn();
    await nextTurn();
    const ones = [
      docsUpdate(store, 'live', { _id: 0 }, { $inc: { n: 10 } }, { multi: false }), // probably already done by updateMany
      docsUpdate(store, 'live', { _id: N - 1 }, { $inc: { n: 100 } }, { multi: false }), // not reached yet
      docsUpdate(store, 'live', { _id: N - 2 }, { $set: { flag: false } }, { multi: false }), // no longer matches
      docsDelete(store, 'live', { _id: N - 3 }, { multi: false }),
    ].map((p) =>
      p.then((w) => {
        finished.push('one');
        return w;
      }),
    );
    const written = await Promise.all([many, ...ones]);
    await Promise.all(written.map((w) => w.durable));
    // The single-document writes really ran while updateMany was under way.
    expect(finished).toEqual(['one', 'one', 'one', 'one', 'many']);
    expect(written[0]!.result).toEqual({ matchedCount: N - 2, modifiedCount: N - 2 });

    const byId = new Map((await docsFind(store, 'live', { limit: 10_000 })).documents.map((d) => [d['_id'], d]));
    expect(byId.size).toBe(N - 1);
    expect(byId.get(0)).toEqual({ _id: 0, n: 11, flag: true });
    expect(byId.get(N - 1)).toEqual({ _id: N - 1, n: 101, flag: true });
    expect(byId.get(N - 2)).toEqual({ _id: N - 2, n: 0, flag: false });
    expect(byId.has(N - 3)).toBe(false);
    // The index holds the same story.
    expect(await ids('live', { n: 101 })).toEqual([N - 1]);
    expect(await ids('live', { n: 0 })).toEqual([N - 2]);
    expect(await docsCount(store, 'live', { filter: { n: 1 } })).toBe(N - 4);
    expect((await explain('live', { n: 1 })).plan['stage']).toBe('IXSCAN');
  });
});

// ---------------------------------------------------------------------------------------------

describe('an index built from existing data', () => {
  const N = 3000; // twelve chunks: the build yields to the event loop between them

  /** Starts building {k: 1} and returns once it is registered (listed), long before it is built. */
  async function startBuild(): Promise<{ building: ReturnType<typeof docsCreateIndex>; listed: Doc }> {
    await insert('build', Array.from({ length: N }, (_, i) => ({ _id: i, k: i % 10 })));
    const building = docsCreateIndex(store, 'build', { k: 1 });
    for (let turn = 0; turn < 100; turn++) {
      const listed = docsListIndexes(store, 'build').find((i) => i.name === 'k_1');
      if (listed !== undefined) return { building, listed: listed as unknown as Doc };
      await nextTurn();
    }
    throw new Error('the index was never registered');
  }

  it('is maintained by writes during the build and unused by queries until built', async () => {
    const { building } = await startBuild();
    // No await between these writes and the plan check below, so the build is still running.
    const durable = [docsInsert(store, 'build', [{ _id: N, k: 3 }]).durable];
    durable.push((await docsUpdate(store, 'build', { _id: N - 1 }, { $set: { k: 3 } }, { multi: false })).durable);
    durable.push((await docsDelete(store, 'build', { _id: 3 }, { multi: false })).durable);
    const during = await docsFind(store, 'build', { filter: { k: 3 }, limit: 1, explain: true });
    expect((during.explain!['plan'] as Doc)['stage']).toBe('COLLSCAN');
    expect((await building).result).toEqual({ name: 'k_1', created: true });
    await Promise.all(durable);

    const got = await explain('build', { k: 3 });
    expect(got.plan).toMatchObject({ stage: 'IXSCAN', indexName: 'k_1' });
    const want = Array.from({ length: N }, (_, i) => i).filter((i) => i % 10 === 3 && i !== 3).concat(N - 1, N);
    expect([...got.ids].sort((a, b) => (a as number) - (b as number))).toEqual(want.sort((a, b) => a - b));
    expect(got.explain['keysExamined']).toBe(want.length);
    expect(await docsCount(store, 'build', { filter: { k: { $gte: 0 } } })).toBe(N);
  });

  it('is listed with building: true until built (docs/mql.md, Indexes)', async () => {
    const { building, listed } = await startBuild();
    expect(listed).toMatchObject({ name: 'k_1', building: true });
    await building;
    expect(docsListIndexes(store, 'build').find((i) => i.name === 'k_1')).not.toHaveProperty('building');
  });
});

// ---------------------------------------------------------------------------------------------

describe('TTL indexes (docsExpireDue)', () => {
  const NOW = Date.UTC(2026, 0, 1);
  const at = (secondsFromNow: number) => ({ $date: NOW + secondsFromNow * 1000 });
  // expireAfterSeconds 60: a date more than 60 s before "now" is due.
  const docs: Doc[] = [
    { _id: 'old', t: at(-120) },
    { _id: 'young', t: at(-30) },
    { _id: 'array-old-first', t: [at(1000), at(-120)] },
    { _id: 'array-young', t: [at(-30), at(1000)] },
    { _id: 'string', t: '2000-01-01T00:00:00Z' },
    { _id: 'number', t: NOW - 1e9 },
    { _id: 'null', t: null },
    { _id: 'missing' },
    { _id: 'empty', t: [] },
    { _id: 'object', t: { when: at(-1e6) } },
  ];
  for (const direction of [1, -1] as const) {
    it(`deletes documents whose earliest date is due, with their index entries (index direction ${direction})`, async () => {
      await index('ttl', { t: direction }, { expireAfterSeconds: 60 });
      await insert('ttl', docs);
      const first = docsExpireDue(store, NOW, 500);
      await first.durable;
      expect(first.deleted).toBe(2);
      expect(first.nextExpiryMs).toBe(NOW + 30_000);
      expect(await ids('ttl', {}, { _id: 1 })).toEqual(['array-young', 'empty', 'missing', 'null', 'number', 'object', 'string', 'young']);
      // Only the dates of the remaining documents are left in the index (a stale entry would
      // name a missing document, which a read reports as CORRUPTION).
      const dated = await explain('ttl', { t: { $gte: { $date: 0 } } });
      expect(dated.plan).toMatchObject({ stage: 'IXSCAN', indexName: `t_${direction}` });
      expect([...dated.ids].sort()).toEqual(['array-young', 'young']);
      expect(dated.explain['keysExamined']).toBe(3);

      expect(docsExpireDue(store, NOW + 29_000, 500).deleted).toBe(0);
      const later = docsExpireDue(store, NOW + 31_000, 500);
      await later.durable;
      expect(later.deleted).toBe(2);
      expect(later.nextExpiryMs).toBeNull();
      expect(await ids('ttl', {}, { _id: 1 })).toEqual(['empty', 'missing', 'null', 'number', 'object', 'string']);
      expect(docsExpireDue(store, NOW + 1e12, 500).deleted).toBe(0); // non-dates never expire
    });
  }

  it('stops at its budget and asks to come back at once', async () => {
    await index('ttl', { t: 1 }, { expireAfterSeconds: 0 });
    await insert('ttl', Array.from({ length: 5 }, (_, i) => ({ _id: i, t: at(-i - 1) })));
    const first = docsExpireDue(store, NOW, 2);
    await first.durable;
    expect(first).toMatchObject({ deleted: 2, nextExpiryMs: NOW });
    expect(await ids('ttl', {}, { _id: 1 })).toEqual([0, 1, 2]); // the earliest went first
    expect(docsExpireDue(store, NOW, 500).deleted).toBe(3);
  });

  it('expires by a date inside an array of documents ("e.at"), as MongoDB\'s TTL monitor does through the index', async () => {
    await index('ttl', { 'e.at': 1 }, { expireAfterSeconds: 60 });
    await insert('ttl', [{ _id: 1, e: [{ at: at(-120) }, { at: at(1000) }] }, { _id: 2, e: [{ at: at(1000) }] }]);
    const due = docsExpireDue(store, NOW, 500);
    await due.durable;
    expect(due.deleted).toBe(1);
    expect(await ids('ttl', {})).toEqual([2]);
  });
});

describe('long reads and large writes', () => {
  it('a find over many documents yields to the event loop between chunks and sees one state', async () => {
    await insert('long', Array.from({ length: 3000 }, (_, i) => ({ _id: i, v: 'before' })));
    let turns = 0;
    let ticking = true;
    const tick = (): void => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const pending = docsFind(store, 'long', { filter: { v: { $in: ['before', 'after'] } }, limit: 10000 });
    // Writes landing while the find runs are not seen by it: it reads a snapshot.
    await nextTurn();
    await docsUpdate(store, 'long', {}, { $set: { v: 'after' } }, { multi: true }).then((w) => w.durable);
    const { documents } = await pending;
    ticking = false;
    expect(documents).toHaveLength(3000);
    expect(new Set(documents.map((d) => d.v))).toEqual(new Set(['before']));
    expect(turns).toBeGreaterThan(3000 / 256 - 2);
  });

  it('refuses an insertMany of more than 10,000 documents, writing nothing', () => {
    expect(() => docsInsert(store, 'many', Array.from({ length: 10_001 }, () => ({})))).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => docsInsert(store, 'many', [])).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
});

describe('finds of about one chunk (256 reads): answered in one turn, or on a snapshot past it', () => {
  // g picks how many documents a filter reads: g < n matches n documents through the index.
  const docs: Doc[] = Array.from({ length: 700 }, (_, i) => ({ _id: i, g: i % 700, r: (i * 37) % 101, t: `x${i % 13}` }));
  beforeEach(async () => {
    await insert('chunk', docs);
    await index('chunk', { g: 1 });
  });

  it.each([1, 255, 256, 257, 300, 511, 512, 513, 700])('an index range matching %i documents, with and without sort, skip and limit', async (n) => {
    const filter = { g: { $lt: n } };
    for (const [sort, skip, limit] of [[undefined, 0, 10_000], [{ r: -1, _id: 1 }, 0, 10_000], [{ g: -1 }, 5, 250], [{ r: 1, _id: 1 }, 3, 256], [undefined, 255, 2]] as const) {
      const want = expected(docs, filter, sort ?? {}).slice(skip, skip + limit);
      const { documents } = await docsFind(store, 'chunk', { filter, sort, skip, limit });
      expect(documents.map((d) => d['_id']), `n=${n} sort=${JSON.stringify(sort)} skip=${skip} limit=${limit}`).toEqual(want);
      // The same find through the snapshot path (explain always takes it).
      const viaSnapshot = await docsFind(store, 'chunk', { filter, sort, skip, limit, explain: true });
      expect(viaSnapshot.documents).toEqual(documents);
    }
  });

  it('a longer read does not hold the event loop: writes made meanwhile land, and it sees none of them', async () => {
    let turns = 0;
    let stop = false;
    const ticker = (async () => {
      while (!stop) {
        await nextTurn();
        turns++;
      }
    })();
    // 700 matches: three chunks, so two turns of the event loop inside the find.
    const pending = docsFind(store, 'chunk', { filter: { g: { $gte: 0 } }, limit: 10_000 }).then((r) => ({ ...r, turns }));
    await insert('chunk', [{ _id: 'late', g: 1 }]);
    const { documents, turns: turnsWhileReading } = await pending;
    stop = true;
    await ticker;
    expect(documents).toHaveLength(700);
    expect(turnsWhileReading).toBeGreaterThanOrEqual(1);
  });
});

describe('inserted documents', () => {
  it('are stored with _id first, as MongoDB stores them, whatever order they came in', async () => {
    await insert('order', [{ a: 1, _id: 'late', b: { c: 2 } }, { _id: 'early', a: 1 }, { a: 1, z: 2 }]);
    const { documents } = await docsFind(store, 'order', { filter: {}, limit: 10 });
    for (const d of documents) expect(Object.keys(d)[0]).toBe('_id');
    const late = documents.find((d) => d['_id'] === 'late')!;
    expect(Object.keys(late)).toStrictEqual(['_id', 'a', 'b']);
  });

  it('are not changed in the hands of the caller', async () => {
    const given = { a: 1, _id: 'x', at: { $date: 0 } };
    const copy = structuredClone(given);
    await insert('untouched', [given]);
    expect(given).toStrictEqual(copy);
  });
});

describe('collection scans read the filter fields before the whole document', () => {
  // 1,500 documents: more than a chunk (256) and than the prefilter's trial (512), so chunks cut
  // by reads and a prefilter that turns itself off are both exercised; some documents lack the
  // fields, hold arrays or nested documents, or are stored with __proto__ keys (read whole).
  function makeDocs(): Doc[] {
    const docs: Doc[] = [];
    for (let i = 0; i < 1500; i++) {
      const doc: Doc = { _id: i, n: i, tag: `t${i % 7}`, bio: 'x'.repeat(i % 50) };
      if (i % 5 === 0) doc.p = { q: i % 4, r: [i % 3, 'z'] };
      if (i % 11 === 0) delete doc.n;
      if (i % 13 === 0) doc.tag = [`t${i % 7}`, 'extra'];
      // JSON.parse makes __proto__ an own key, as a request body does.
      docs.push(i % 97 === 0 ? (JSON.parse(JSON.stringify(doc).replace(/^\{/, `{"__proto__": {"n": ${i}}, "w": ${i}, `)) as Doc) : doc);
    }
    return docs;
  }
  const filters: Array<[string, Doc]> = [
    ['a narrow range (few pass)', { n: { $gte: 100, $lt: 110 } }],
    ['a wide range (most pass: the prefilter turns itself off)', { n: { $gte: 10 } }],
    ['a nested path', { 'p.q': 3 }],
    ['an array element or a value', { tag: 'extra' }],
    ['$or over fields, one of them _id', { $or: [{ _id: { $lt: 5 } }, { 'p.r': 2 }, { w: { $exists: true } }] }],
    ['a missing field', { n: { $exists: false } }],
    ['$nor with $elemMatch', { $nor: [{ 'p.r': { $elemMatch: { $gte: 1 } } }, { tag: 't3' }] }],
  ];

  const indexed: Array<[string, Doc]> = [
    ['an index range with a condition on another field', { n: { $gte: 100, $lt: 700 }, tag: 't3' }],
    ['an index range with a nested condition', { n: { $lt: 1000 }, 'p.q': { $in: [1, 3] } }],
  ];
  it.each(indexed)('over an index on n, %s: count, updateMany and deleteMany read the filter fields of each indexed document', async (_name, filter) => {
    await index('scan', { n: 1 });
    await insert('scan', makeDocs());
    expect((await explain('scan', filter)).plan['stage']).toBe('IXSCAN');
    const all = (await docsFind(store, 'scan', { limit: 10_000 })).documents;
    const test = compileFilter(filter).test;
    const want = all.filter((d) => test(d)).map((d) => d._id);
    expect(want.length).toBeGreaterThan(0);
    expect(await docsCount(store, 'scan', { filter })).toBe(want.length);
    const { result } = await docsUpdate(store, 'scan', filter, { $set: { hit: true } }, { multi: true });
    expect(result).toMatchObject({ matchedCount: want.length, modifiedCount: want.length });
    expect((await docsFind(store, 'scan', { filter: { hit: true }, limit: 10_000 })).documents.map((d) => d._id)).toEqual(want);
    expect((await docsDelete(store, 'scan', filter, { multi: true })).result.deletedCount).toBe(want.length);
    expect(await docsCount(store, 'scan', {})).toBe(1500 - want.length);
  });

  it.each(filters)('%s: find, count, updateMany and deleteMany agree with the filter applied to every document', async (_name, filter) => {
    await insert('scan', makeDocs());
    const all = (await docsFind(store, 'scan', { limit: 10_000 })).documents;
    expect(all).toHaveLength(1500);
    const test = compileFilter(filter).test;
    const want = all.filter((d) => test(d));
    expect(want.length).toBeGreaterThan(0);
    expect(want.length).toBeLessThan(1500);
    const found = (await docsFind(store, 'scan', { filter, limit: 10_000 })).documents;
    expect(found).toStrictEqual(want);
    expect(await docsCount(store, 'scan', { filter })).toBe(want.length);
    const { result } = await docsUpdate(store, 'scan', filter, { $set: { hit: true } }, { multi: true });
    expect(result).toMatchObject({ matchedCount: want.length, modifiedCount: want.length });
    expect((await docsFind(store, 'scan', { filter: { hit: true }, limit: 10_000 })).documents.map((d) => d._id)).toEqual(want.map((d) => d._id));
    const deleted = await docsDelete(store, 'scan', filter, { multi: true });
    expect(deleted.result.deletedCount).toBe(want.length);
    expect(await docsCount(store, 'scan', {})).toBe(1500 - want.length);
  });
});

describe('sorts the plan does not provide (a bounded in-memory top-k)', () => {
  it('returns exactly the window of a full stable sort, ties in scan order, past several trims', async () => {
    // 5000 documents with few distinct sort values (many ties), some arrays and missing fields:
    // the top-k trims every 1024 candidates and then drops those that cannot make the cut; each
    // window must equal the same window of the whole collection sorted stably in _id order.
    const docs = Array.from({ length: 5000 }, (_, i) => {
      const doc: Doc = { _id: i, g: (i * 7919) % 13 };
      if (i % 5 === 0) doc['a'] = [(i * 31) % 17, (i * 17) % 11];
      else if (i % 5 !== 1) doc['a'] = (i * 13) % 9;
      return doc;
    });
    for (let i = 0; i < docs.length; i += 1000) await insert('topk', docs.slice(i, i + 1000));
    for (const sortSpec of [{ g: 1 }, { g: -1 }, { a: 1 }, { a: -1, g: 1 }, { g: 1, a: -1 }]) {
      const full = sortDocuments(docs, compileSort(sortSpec)).map((d) => d['_id']);
      for (const [skip, limit] of [[0, 1], [0, 10], [3, 7], [500, 100], [1020, 10], [0, 2000], [4990, 100]] as Array<[number, number]>) {
        const { documents } = await docsFind(store, 'topk', { filter: {}, sort: sortSpec, skip, limit });
        expect(documents.map((d) => d['_id']), `${JSON.stringify(sortSpec)} skip ${skip} limit ${limit}`).toEqual(full.slice(skip, skip + limit));
      }
    }
  });
});

describe('a change found in one turn writes in that turn, without a snapshot', () => {
  // A snapshot open at a write starts a new write epoch, which makes every dirty page
  // copy-on-write: changes that each took one copied their leaf, its branches and the root again
  // every time. The dirty memory shows it.
  it('changes one document again and again without copying its pages again', async () => {
    const cache = new PageCache<TreeNode>(64 * 1024 * 1024);
    const own = await TenantStore.open(makeDir('docs-one-turn'), { cache, fsync: 'off', checkpointIntervalMs: 0 });
    try {
      await (await docsCreateIndex(own, 'c', { email: 1 })).durable;
      const docs = Array.from({ length: 3000 }, (_, i) => ({ _id: `d${String(i).padStart(5, '0')}`, email: `u${i}@x.com`, n: i, pad: 'x'.repeat(200) }));
      await docsInsert(own, 'c', docs).durable;
      await own.checkpoint();
      // The first change of each kind copies the pages it touches; the ones after it copy nothing.
      const kinds: Array<[string, unknown]> = [
        ['_id', { _id: 'd01500' }],
        ['an index', { email: 'u1600@x.com' }],
        ['a scan', { n: 20 }],
      ];
      for (const [, filter] of kinds) await (await docsUpdate(own, 'c', filter, { $inc: { k: 1 } }, { multi: false })).durable;
      const before = cache.dirty.bytes;
      for (let i = 0; i < 100; i++) {
        for (const [, filter] of kinds) {
          const written = await docsUpdate(own, 'c', filter, { $inc: { k: 1 } }, { multi: false });
          expect(written.result.modifiedCount).toBe(1);
          await written.durable;
        }
      }
      // 300 changes, each a new version of a ~260-byte document: far less than a page copy each
      // (8 KiB: 2.4 MiB for the leaves alone).
      expect(cache.dirty.bytes - before).toBeLessThan(300 * 1024);
      for (const [what, filter] of kinds) {
        const { documents } = await docsFind(own, 'c', { filter });
        expect(documents.map((d) => d['k']), what).toEqual([101]);
      }
    } finally {
      await own.close();
    }
  });
});
