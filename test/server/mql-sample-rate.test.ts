// $sampleRate over HTTP on a real server: the manual's example (a $match of a third of the
// documents), the same operator in find, count, updates and deletes (MongoDB's parser takes it at
// the top level of any filter), the bounds 0 and 1, and MongoDB's refusals. Samples are checked
// against bands of six standard deviations around the expected count, so a correct sample fails
// about once in 500 million runs; drawing twice for one document (tetradb tests a stored
// document more than once in a request) would give rate² and fall far outside them.
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

const N = 1000;

let collections = 0;
/** A fresh collection of the manual's N documents `{_id: i, r: 0}` (and `g`: i % 2). */
async function seed(indexes: Array<Record<string, number>> = []): Promise<string> {
  const collection = `s${++collections}`;
  for (const keys of indexes) expect((await mql('createIndex', { collection, keys })).status).toBe(200);
  const documents = Array.from({ length: N }, (_, i) => ({ _id: i, r: 0, g: i % 2 }));
  const res = await mql('insertMany', { collection, documents });
  expect(res.status, res.text).toBe(201);
  return collection;
}

/** Expects `count` within six standard deviations of a binomial(n, rate) count. */
function expectSample(count: number, n: number, rate: number): void {
  const sd = Math.sqrt(n * rate * (1 - rate));
  expect(count).toBeGreaterThanOrEqual(Math.floor(n * rate - 6 * sd));
  expect(count).toBeLessThanOrEqual(Math.ceil(n * rate + 6 * sd));
}

describe('$sampleRate in an aggregation $match', () => {
  it('selects about a third of the documents (the manual: {$match: {$sampleRate: 0.33}}, {$count})', async () => {
    const c = await seed();
    const res = await mql('aggregate', { collection: c, pipeline: [{ $match: { $sampleRate: 0.33 } }, { $count: 'numMatches' }] });
    expect(res.status, res.text).toBe(200);
    expectSample(res.body.documents[0].numMatches, N, 0.33);
  });

  it('beside an indexed condition, and in a later $match', async () => {
    const c = await seed([{ g: 1 }]);
    const first = await mql('aggregate', { collection: c, pipeline: [{ $match: { g: 1, $sampleRate: 0.5 } }, { $group: { _id: '$g', n: { $sum: 1 } } }] });
    expect(first.body.documents).toHaveLength(1);
    expect(first.body.documents[0]._id).toBe(1);
    expectSample(first.body.documents[0].n, N / 2, 0.5);
    const later = await mql('aggregate', { collection: c, pipeline: [{ $project: { g: 1 } }, { $match: { $sampleRate: 0.5 } }, { $count: 'n' }] });
    expectSample(later.body.documents[0].n, N, 0.5);
  });

  it('draws each document afresh after $unwind, though they share an _id', async () => {
    const collection = `s${++collections}`;
    const documents = Array.from({ length: 100 }, (_, i) => ({ _id: i, k: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] }));
    expect((await mql('insertMany', { collection, documents })).status).toBe(201);
    const res = await mql('aggregate', { collection, pipeline: [{ $unwind: '$k' }, { $match: { $sampleRate: 0.5 } }, { $group: { _id: '$_id', n: { $sum: 1 } } }] });
    const counts: number[] = res.body.documents.map((d: { n: number }) => d.n);
    expectSample(counts.reduce((a, b) => a + b, 0), 1000, 0.5);
    // Drawn per _id, every group would hold all ten or none.
    expect(counts.filter((n) => n > 0 && n < 10).length).toBeGreaterThan(50);
  });

  it('with rates 0 and 1, nothing and everything; in $or and $and', async () => {
    const c = await seed();
    const count = async (match: unknown) => (await mql('aggregate', { collection: c, pipeline: [{ $match: match }, { $count: 'n' }] })).body.documents[0]?.n ?? 0;
    expect(await count({ $sampleRate: 0 })).toBe(0);
    expect(await count({ $sampleRate: 1 })).toBe(N);
    expect(await count({ $or: [{ _id: { $lt: 10 } }, { $sampleRate: 0 }] })).toBe(10);
    expect(await count({ $and: [{ g: 0 }, { $sampleRate: 1 }] })).toBe(N / 2);
  });
});

describe('$sampleRate in other filters (MongoDB takes it at the top level of any filter)', () => {
  it('find returns a sample of distinct documents; countDocuments counts one', async () => {
    const c = await seed();
    const found = await mql('find', { collection: c, filter: { $sampleRate: 0.5 }, limit: 10000 });
    expect(found.status, found.text).toBe(200);
    const ids = found.body.documents.map((d: { _id: number }) => d._id);
    expect(new Set(ids).size).toBe(ids.length);
    expectSample(ids.length, N, 0.5);
    expectSample((await mql('countDocuments', { collection: c, filter: { $sampleRate: 0.25 } })).body.count, N, 0.25);
    expect((await mql('find', { collection: c, filter: { $sampleRate: 1, _id: { $gte: 995 } } })).body.documents).toHaveLength(5);
  });

  it('updateMany changes a sample once each: every document it matched, and only those', async () => {
    const c = await seed();
    const res = await mql('updateMany', { collection: c, filter: { $sampleRate: 0.5 }, update: { $set: { picked: true } } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.modifiedCount).toBe(res.body.matchedCount);
    expectSample(res.body.matchedCount, N, 0.5);
    expect((await mql('countDocuments', { collection: c, filter: { picked: true } })).body.count).toBe(res.body.matchedCount);
  });

  it('deleteMany deletes a sample; updateOne and findOneAndUpdate change one match', async () => {
    const c = await seed();
    const del = await mql('deleteMany', { collection: c, filter: { g: 0, $sampleRate: 0.5 } });
    expectSample(del.body.deletedCount, N / 2, 0.5);
    expect((await mql('countDocuments', { collection: c, filter: { g: 1 } })).body.count).toBe(N / 2);
    expect((await mql('updateOne', { collection: c, filter: { $sampleRate: 1 }, update: { $inc: { r: 1 } } })).body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    const fam = await mql('findOneAndUpdate', { collection: c, filter: { g: 1, $sampleRate: 1 }, sort: { _id: -1 }, update: { $inc: { r: 1 } }, returnDocument: 'after' });
    expect(fam.body.document).toEqual({ _id: 999, r: 1, g: 1 });
  });
});

describe('$sampleRate refusals (400 QUERY_ERROR, MongoDB\'s messages), which change nothing', () => {
  const cases: ReadonlyArray<readonly [string, unknown, RegExp]> = [
    ['a rate above 1', { $sampleRate: 1.5 }, /^numeric argument to \$sampleRate must be in \[0, 1\]$/],
    ['a negative rate', { $sampleRate: -0.1 }, /^numeric argument to \$sampleRate must be in \[0, 1\]$/],
    ['a rate that is not a number', { $sampleRate: '0.5' }, /^argument to \$sampleRate must be a numeric type$/],
    ['null', { $sampleRate: null }, /^argument to \$sampleRate must be a numeric type$/],
    ['$sampleRate inside $elemMatch', { a: { $elemMatch: { b: 1, $sampleRate: 0.5 } } }, /^\$sampleRate can only be applied to the top-level document$/],
    ['$sampleRate as a field operator', { a: { $sampleRate: 0.5 } }, /^unknown operator: \$sampleRate$/],
  ];
  for (const [name, filter, message] of cases) {
    it(`refuses ${name}`, async () => {
      const c = await seed();
      for (const [op, body] of [
        ['find', {}],
        ['countDocuments', {}],
        ['updateMany', { update: { $set: { x: 1 } } }],
        ['deleteMany', {}],
      ] as const) {
        const res = await mql(op, { collection: c, filter, ...body });
        expect(res.status, `${op}: ${res.text}`).toBe(400);
        expect(res.body.error.code).toBe('QUERY_ERROR');
        expect(res.body.error.message).toMatch(message);
      }
      const agg = await mql('aggregate', { collection: c, pipeline: [{ $match: filter }] });
      expect(agg.status).toBe(400);
      expect(agg.body.error.message).toMatch(message);
      expect((await mql('countDocuments', { collection: c, filter: { x: 1 } })).body.count).toBe(0);
      expect((await mql('countDocuments', { collection: c })).body.count).toBe(N);
    });
  }

  it('refuses $sampleRate in arrayFilters', async () => {
    const c = await seed();
    const res = await mql('updateOne', { collection: c, filter: { _id: 1 }, update: { $set: { 'a.$[x]': 1 } }, arrayFilters: [{ x: 1, $sampleRate: 0.5 }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('$sampleRate is not allowed in the context of an array filter');
  });
});
