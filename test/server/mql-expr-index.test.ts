// `$expr` equalities and comparisons read through indexes (query/expr-bounds.ts), as MongoDB 5.0+ plans them, over
// HTTP on a real server: the plans explain shows, the answers against a copy of the collection
// without indexes (multikey, sparse and partial indexes, arrays, documents, null and missing
// values), and the $lookup and $unionWith sub-pipelines whose leading $match now goes through the
// planner with each document's variables. test/fuzz/docs-index.fuzz.test.ts draws such filters too.
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

async function explainOf(collection: string, filter: unknown, extra: Record<string, unknown> = {}): Promise<{ stage: string; keysExamined: number; docs: unknown[] }> {
  const res = await mql('find', { collection, filter, explain: true, sort: { _id: 1 }, ...extra });
  expect(res.status, res.text).toBe(200);
  return { stage: res.body.explain.plan.stage, keysExamined: res.body.explain.keysExamined, docs: res.body.documents };
}

const TRICKY = [
  { _id: 1, a: 5, s: 'x', p: 5, n: { b: 5 } },
  { _id: 2, a: [5], p: -1, n: [{ b: 5 }] },
  { _id: 3, a: [5, 6], s: null, n: { b: [5] } },
  { _id: 4, a: { x: 1 }, p: 7, n: [{ b: 6 }, { b: 5 }] },
  { _id: 5, a: null, s: 'y', p: 5 },
  { _id: 6, p: null },
  { _id: 7, a: '5', s: 'x', n: { b: '5' } },
  { _id: 8, a: [[5]], n: { c: 1 } },
  { _id: 9, a: { $date: '2024-01-01T00:00:00Z' }, p: 0 },
];

describe('plans', () => {
  it('an $expr equality or $in of a field with a constant or a variable reads the index', async () => {
    const c = await file.seed(Array.from({ length: 200 }, (_, i) => ({ _id: `k${i}`, v: i % 20, w: i })));
    await file.createIndex(c, { v: 1 });
    expect((await explainOf(c, { $expr: { $eq: ['$_id', 'k7'] } })).stage).toBe('IDHACK');
    expect((await explainOf(c, { $expr: { $eq: ['k7', '$_id'] } })).stage).toBe('IDHACK');
    const ins = await explainOf(c, { $expr: { $in: ['$_id', ['k1', 'k2', 'nope']] } });
    expect([ins.stage, ins.keysExamined, ins.docs.length]).toEqual(['IDHACK', 3, 2]);
    const byLet = await explainOf(c, { $expr: { $eq: ['$v', { $add: ['$$base', 1] }] } }, { let: { base: 2 }, limit: 1000 });
    expect([byLet.stage, byLet.keysExamined, byLet.docs.length]).toEqual(['IXSCAN', 10, 10]);
    const inAnd = await explainOf(c, { $expr: { $and: [{ $eq: ['$v', 3] }, { $gt: ['$w', 100] }] } }, { limit: 1000 });
    expect([inAnd.stage, inAnd.keysExamined, inAnd.docs.length]).toEqual(['IXSCAN', 10, 5]);
    // Beside a condition on the same field, both bound the read.
    const both = await explainOf(c, { v: { $gte: 3 }, $expr: { $eq: ['$v', 3] } }, { limit: 1000 });
    expect([both.stage, both.keysExamined]).toEqual(['IXSCAN', 10]);
  });

  it('an $expr comparison of a field with a value known first reads a range of the index, over every type above or below it', async () => {
    const docs: Record<string, unknown>[] = Array.from({ length: 100 }, (_, i) => ({ _id: i, v: i, w: i % 7 }));
    docs.push({ _id: 100, v: 'text' }, { _id: 101, v: { $date: '2024-01-01T00:00:00Z' } }, { _id: 102, v: true }, { _id: 103, v: null }, { _id: 104 }, { _id: 105, v: { o: 1 } });
    const c = await file.seed(docs);
    await file.createIndex(c, { v: 1 });
    const gt = await explainOf(c, { $expr: { $gt: ['$v', 95] } }, { limit: 1000 });
    // 96-99, then the string, the document, the boolean and the date: every value above 95 in BSON order.
    expect([gt.stage, gt.docs.map((d: any) => d._id)]).toEqual(['IXSCAN', [96, 97, 98, 99, 100, 101, 102, 105]]);
    expect(gt.keysExamined).toBe(8);
    // Reversed sides, a let variable, and below: null and the missing field are below every number.
    const lt = await explainOf(c, { $expr: { $lt: ['$$top', '$v'] } }, { let: { top: 97 }, limit: 1000 });
    expect([lt.stage, lt.docs.map((d: any) => d._id)]).toEqual(['IXSCAN', [98, 99, 100, 101, 102, 105]]);
    const below = await explainOf(c, { $expr: { $lte: ['$v', 2] } }, { limit: 1000 });
    expect([below.stage, below.docs.map((d: any) => d._id)]).toEqual(['IXSCAN', [0, 1, 2, 103, 104]]);
    // Both ends, in an $and with another field's test, and $$NOW against dates.
    const both = await explainOf(c, { $expr: { $and: [{ $gte: ['$v', 10] }, { $lt: ['$v', 20] }, { $eq: ['$w', 3] }] } }, { limit: 1000 });
    expect([both.stage, both.keysExamined, both.docs.map((d: any) => d._id)]).toEqual(['IXSCAN', 10, [10, 17]]);
    const dated = await explainOf(c, { $expr: { $lt: ['$v', '$$NOW'] } }, { limit: 1000 });
    expect(dated.stage).toBe('IXSCAN');
    expect(dated.docs).toHaveLength(106);
    // A sort on the field comes from the range's order.
    const sorted = await mql('find', { collection: c, filter: { $expr: { $gte: ['$v', 98] } }, sort: { v: -1 }, explain: true });
    expect(sorted.body.explain.inMemorySort).toBe(false);
    expect(sorted.body.documents.map((d: any) => d._id)).toEqual([101, 102, 105, 100, 99, 98]);
  });

  it('an $expr comparison is not read as a range of a multikey index, nor of a sparse one', async () => {
    const c = await file.seed(Array.from({ length: 50 }, (_, i) => ({ _id: i, m: i === 3 ? [1, 100] : i, s: i })));
    await file.createIndex(c, { m: 1 });
    await file.createIndex(c, { s: 1 }, { sparse: true });
    // [1, 100] is an array: above every number as a whole, where its keys 1 and 100 would say otherwise.
    const multi = await explainOf(c, { $expr: { $gt: ['$m', 40] } }, { limit: 1000 });
    expect([multi.stage, multi.docs.map((d: any) => d._id)]).toEqual(['COLLSCAN', [3, 41, 42, 43, 44, 45, 46, 47, 48, 49]]);
    expect((await explainOf(c, { $expr: { $lt: ['$s', 3] } })).stage).toBe('COLLSCAN');
  });

  it('anything else is read as before: two fields, null, arrays, $rand, the document', async () => {
    const c = await file.seed(Array.from({ length: 50 }, (_, i) => ({ _id: i, v: i % 5, w: i % 5 })));
    await file.createIndex(c, { v: 1 });
    for (const filter of [
      { $expr: { $gt: ['$v', null] } },
      { $expr: { $lt: ['$v', [3]] } },
      { $expr: { $gte: ['$v', { x: 1 }] } },
      { $expr: { $eq: ['$v', '$w'] } },
      { $expr: { $eq: ['$v', null] } },
      { $expr: { $eq: ['$v', [1]] } },
      { $expr: { $in: ['$v', [1, null]] } },
      { $expr: { $in: ['$v', [[1], 2]] } },
      { $expr: { $eq: ['$v', { $floor: { $multiply: [{ $rand: {} }, 0] } }] } },
      { $expr: { $eq: ['$v', '$$ROOT.w'] } },
      { $expr: { $or: [{ $eq: ['$v', 1] }, { $eq: ['$v', 2] }] } },
      { $expr: { $eq: ['$v', '$$missing'] } },
    ]) {
      expect((await explainOf(c, filter, { let: { missing: { $getField: { field: 'q', input: {} } } } })).stage, JSON.stringify(filter)).toBe('COLLSCAN');
    }
  });
});

describe('answers', () => {
  it('match an unindexed copy: multikey, sparse and partial indexes, through arrays and documents', async () => {
    const plain = await file.seed(TRICKY);
    const indexed = await file.seed(TRICKY);
    await file.createIndex(indexed, { a: 1 });
    await file.createIndex(indexed, { 'n.b': 1 });
    await file.createIndex(indexed, { s: 1 }, { sparse: true });
    await file.createIndex(indexed, { p: 1 }, { partialFilterExpression: { p: { $gt: 0 } } });
    const values = [5, '5', 6, [5], [5, 6], { x: 1 }, null, 'x', 7, -1, 0, { $date: '2024-01-01T00:00:00Z' }];
    for (const path of ['a', 'n.b', 's', 'p', '_id']) {
      for (const v of values) {
        const compared = ['$gt', '$gte', '$lt', '$lte'].map((op) => ({ $expr: { [op]: [`$${path}`, { $literal: v }] } }));
        for (const filter of [{ $expr: { $eq: [`$${path}`, { $literal: v }] } }, { $expr: { $in: [`$${path}`, { $literal: [v, 5] }] } }, ...compared]) {
          const want = (await mql('find', { collection: plain, filter, sort: { _id: 1 } })).body.documents;
          const got = await mql('find', { collection: indexed, filter, sort: { _id: 1 } });
          expect(got.status, got.text).toBe(200);
          expect(got.body.documents, JSON.stringify(filter)).toEqual(want);
        }
      }
    }
    // The partial index serves an equality inside its filter, and only such a one.
    expect((await explainOf(indexed, { $expr: { $eq: ['$p', 5] } })).stage).toBe('IXSCAN');
    expect((await explainOf(indexed, { $expr: { $eq: ['$p', -1] } })).stage).toBe('COLLSCAN');
    // Aggregation equality: "$n.b" through an array of documents is an array, which 5 is not.
    expect((await explainOf(indexed, { $expr: { $eq: ['$n.b', 5] } })).docs).toEqual([{ _id: 1, a: 5, s: 'x', p: 5, n: { b: 5 } }]);
  });

  it('updates and deletes change what an unindexed copy changes', async () => {
    const plain = await file.seed(TRICKY);
    const indexed = await file.seed(TRICKY);
    await file.createIndex(indexed, { a: 1 });
    for (const c of [plain, indexed]) {
      expect((await mql('updateMany', { collection: c, filter: { $expr: { $eq: ['$a', '$$five'] } }, update: { $set: { hit: true } }, let: { five: 5 } })).status).toBe(200);
      expect((await mql('deleteMany', { collection: c, filter: { $expr: { $in: ['$a', ['5', 99]] } } })).status).toBe(200);
    }
    expect(await file.all(indexed)).toEqual(await file.all(plain));
    expect((await file.all(indexed)).filter((d) => d.hit).map((d) => d._id)).toEqual([1]);
  });
});

describe('sub-pipelines', () => {
  const customers = Array.from({ length: 60 }, (_, i) => ({ _id: `c${i}`, tier: i % 3, city: ['Oslo', 'Rome', 'Lima'][i % 3] }));
  const orders = Array.from({ length: 40 }, (_, i) => ({ _id: i, customer: `c${(i * 7) % 65}`, tier: i % 4 }));

  it('a $lookup pipeline that matches its let with $expr answers as the equality form and mingo do', async () => {
    const cust = await file.seed(customers);
    const ord = await file.seed(orders);
    await file.createIndex(cust, { tier: 1 });
    const byExpr = [
      { $lookup: { from: cust, let: { k: '$customer' }, pipeline: [{ $match: { $expr: { $eq: ['$_id', '$$k'] } } }, { $project: { city: 1 } }], as: 'c' } },
      { $sort: { _id: 1 } },
    ];
    const byEquality = [
      { $lookup: { from: cust, localField: 'customer', foreignField: '_id', as: 'c' } },
      { $project: { customer: 1, tier: 1, c: { $map: { input: '$c', in: { _id: '$$this._id', city: '$$this.city' } } } } },
      { $sort: { _id: 1 } },
    ];
    const got = await file.aggregate(ord, byExpr);
    expect(got).toEqual(await file.aggregate(ord, byEquality));
    expect(got).toEqual(aggregate(orders, byExpr, { collectionResolver: (name: string) => (name === cust ? customers : []) }));
    // An indexed field of the foreign collection, two conditions, and a variable of the request's let.
    const byTier = [
      { $lookup: { from: cust, let: { t: '$tier' }, pipeline: [{ $match: { city: { $ne: 'Rome' }, $expr: { $and: [{ $eq: ['$tier', '$$t'] }, { $eq: ['$city', '$$city'] }] } } }, { $count: 'n' }], as: 'same' } },
      { $sort: { _id: 1 } },
    ];
    const res = await mql('aggregate', { collection: ord, pipeline: byTier, let: { city: 'Oslo' } });
    expect(res.status, res.text).toBe(200);
    const expected = orders.map((o) => {
      const n = customers.filter((c) => c.tier === o.tier && c.city === 'Oslo').length;
      return { ...o, same: n === 0 ? [] : [{ n }] };
    });
    expect(res.body.documents).toEqual(expected);
  });

  it('equal let values share one run of the pipeline, and missing is not null there', async () => {
    const cust = await file.seed(customers);
    const many = Array.from({ length: 90 }, (_, i) => ({ _id: i, tier: i % 3, missing: i % 2 === 0 ? null : undefined }));
    const ord = await file.seed(many.map(({ missing, ...d }) => (missing === undefined ? d : { ...d, missing })));
    const pipeline = [
      { $lookup: { from: cust, let: { t: '$tier', m: '$missing' }, pipeline: [{ $match: { $expr: { $and: [{ $eq: ['$tier', '$$t'] }, { $eq: ['$$m', null] }] } } }, { $sort: { _id: 1 } }, { $limit: 2 }, { $project: { _id: 1 } }], as: 'j' } },
      // Each document's matches carry its own _id after this (the memory hands out copies, though
      // no stage changes its input in place today, so this cannot show what sharing would break).
      { $set: { 'j.owner': '$_id' } },
      { $sort: { _id: 1 } },
    ];
    const res = await mql('aggregate', { collection: ord, pipeline });
    expect(res.status, res.text).toBe(200);
    // By hand (mingo sets no field through an array, and takes a missing variable for null): a
    // missing value is not null in MongoDB, so the odd documents (no `missing`) match nothing.
    const firstTwo = (tier: number) => customers.filter((c) => c.tier === tier).map((c) => c._id).sort().slice(0, 2);
    expect(res.body.documents).toEqual(
      many.map(({ missing, ...d }) => ({ ...d, ...(missing === undefined ? {} : { missing }), j: missing === undefined ? [] : firstTwo(d.tier).map((id) => ({ _id: id, owner: d._id })) })),
    );
  });

  it('a $unionWith pipeline starting with $match reads only its matches, with the request variables', async () => {
    const cust = await file.seed(customers);
    const ord = await file.seed(orders.slice(0, 3));
    await file.createIndex(cust, { city: 1 });
    const res = await mql('aggregate', {
      collection: ord,
      pipeline: [{ $project: { _id: 1 } }, { $unionWith: { coll: cust, pipeline: [{ $match: { $expr: { $eq: ['$city', '$$city'] }, tier: 0 } }, { $project: { _id: 1 } }] } }],
      let: { city: 'Oslo' },
    });
    // Without a sort, the matches come in the plan's order (here the index's): compared as a set.
    const ids = res.body.documents.map((d: { _id: unknown }) => d._id);
    expect(ids.slice(0, 3)).toEqual([0, 1, 2]);
    expect(ids.slice(3).sort()).toEqual(customers.filter((c) => c.city === 'Oslo' && c.tier === 0).map((c) => c._id).sort());
  });
});
