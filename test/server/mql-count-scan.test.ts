// countDocuments counted in an index's entries (MongoDB's COUNT_SCAN, docs-model.ts
// countIndexEntries) over HTTP on a real server: every count equals the number of documents find
// returns for the same filter, over multikey, sparse, unique and descending indexes, values of
// every countable type beside the ones that are not (null, long strings an index shortens), and
// skip/limit. test/fuzz/docs-index.fuzz.test.ts counts its random filters with and without indexes too.
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

const LONG = 'x'.repeat(3000);
const DOCS = [
  { _id: 1, status: 'b' },
  { _id: 2, status: ['b', 'c'] },
  { _id: 3, status: ['b', 'b', 'd'] },
  { _id: 4, status: 'c' },
  { _id: 5, status: 5 },
  { _id: 6, status: '5' },
  { _id: 7, status: true },
  { _id: 8, status: null },
  { _id: 9 },
  { _id: 10, status: [[' b']] },
  { _id: 11, status: LONG },
  { _id: 12, status: `${LONG}y` },
  { _id: 13, status: 5.0 },
  { _id: 14, status: -0 },
  { _id: 15, status: { b: 1 } },
  { _id: 16, status: [5, 'c'] },
];

const FILTERS: unknown[] = [
  { status: 'b' },
  { status: { $eq: 'c' } },
  { status: 5 },
  { status: '5' },
  { status: true },
  { status: 0 },
  { status: 'zzz' },
  { status: { $in: ['b', 'c'] } },
  { status: { $in: ['b', 'b'] } },
  { status: { $in: [5, 'd', true] } },
  { status: { $in: [] } },
  { status: null },
  { status: LONG },
  { status: LONG.slice(0, 900) },
  { status: [5, 'c'] },
  { status: { b: 1 } },
];

async function countsMatchFinds(collection: string): Promise<void> {
  for (const filter of FILTERS) {
    const found = await mql('find', { collection, filter, limit: 10000 });
    expect(found.status, found.text).toBe(200);
    const n = found.body.documents.length;
    for (const [skip, limit] of [[undefined, undefined], [1, undefined], [0, 1], [1, 2], [50, undefined]] as const) {
      const res = await mql('countDocuments', { collection, filter, ...(skip === undefined ? {} : { skip }), ...(limit === undefined ? {} : { limit }) });
      expect(res.status, res.text).toBe(200);
      const want = Math.min(limit ?? Infinity, Math.max(0, n - (skip ?? 0)));
      expect(res.body.count, JSON.stringify({ filter, skip, limit })).toBe(want);
    }
  }
}

describe('counts in index entries', () => {
  for (const [label, keys, options] of [
    ['a multikey index', { status: 1 }, {}],
    ['a descending index', { status: -1 }, {}],
    ['a sparse index', { status: 1 }, { sparse: true }],
  ] as const) {
    it(`equal find's answers over ${label}`, async () => {
      const c = await file.seed(DOCS);
      await file.createIndex(c, keys, options);
      await countsMatchFinds(c);
    });
  }

  it("equal find's answers over a unique index, and after writes", async () => {
    const c = await file.seed(Array.from({ length: 300 }, (_, i) => ({ _id: i, code: `k${i}`, tier: i % 3 })));
    await file.createIndex(c, { code: 1 }, { unique: true });
    await file.createIndex(c, { tier: 1 });
    const count = async (filter: unknown) => (await mql('countDocuments', { collection: c, filter })).body.count;
    expect(await count({ code: 'k7' })).toBe(1);
    expect(await count({ code: { $in: ['k7', 'k8', 'nope'] } })).toBe(2);
    expect(await count({ tier: 1 })).toBe(100);
    expect((await mql('updateMany', { collection: c, filter: { tier: 1, _id: { $lt: 30 } }, update: { $set: { tier: 2 } } })).status).toBe(200);
    expect((await mql('deleteMany', { collection: c, filter: { tier: 0, _id: { $gte: 150 } } })).status).toBe(200);
    expect(await count({ tier: 1 })).toBe(90);
    expect(await count({ tier: 2 })).toBe(110);
    expect(await count({ tier: 0 })).toBe(50);
    expect(await count({ tier: { $in: [0, 1] } })).toBe(140);
  });
});
