// $indexStats over HTTP: each operation that reads an index counts once for it (finds by an
// equality, a range, a sort, by _id; counts, distinct, updates, deletes, aggregations and each
// $lookup read), a collection scan for none, a hidden index never; the documents have MongoDB's
// shape; the stage's place and argument are checked; counts are per tenant and start again at a
// restart (they live in memory, as MongoDB's).
import { describe, expect, it } from 'vitest';
import { http, serverForFile, signup, startServer } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

async function opsOf(collection: string): Promise<Record<string, number>> {
  const res = await mql('aggregate', { collection, pipeline: [{ $indexStats: {} }] });
  expect(res.status, res.text).toBe(200);
  return Object.fromEntries(res.body.documents.map((d: any) => [d.name, d.accesses.ops]));
}

describe('$indexStats', () => {
  it('counts each operation once for each index its plan reads', async () => {
    const c = await file.seed(Array.from({ length: 600 }, (_, i) => ({ _id: i, a: i, b: i % 10, t: `t${i}` })));
    await file.createIndex(c, { a: 1 }, { unique: true });
    await file.createIndex(c, { b: 1 });
    await file.createIndex(c, { t: 1 }, { hidden: true });
    let want = { _id_: 0, a_1: 0, b_1: 0, t_1: 0 };
    expect(await opsOf(c)).toEqual(want);
    const step = async (op: string, json: Record<string, unknown>, delta: Partial<typeof want>): Promise<void> => {
      const res = await mql(op, { collection: c, ...json });
      expect(res.status, `${op} ${JSON.stringify(json)}: ${res.text}`).toBeLessThan(300);
      want = { ...want };
      for (const [k, v] of Object.entries(delta)) want[k as keyof typeof want] += v!;
      expect(await opsOf(c), `${op} ${JSON.stringify(json)}`).toEqual(want);
    };
    await step('find', { filter: { a: 5 } }, { a_1: 1 }); // the express path
    await step('find', { filter: { a: { $gte: 100, $lt: 110 } } }, { a_1: 1 });
    await step('find', { filter: { b: 3 }, limit: 1000 }, { b_1: 1 }); // more than one chunk: on a snapshot
    await step('find', { sort: { a: -1 }, limit: 2 }, { a_1: 1 });
    await step('find', { filter: { _id: 7 } }, { _id_: 1 });
    await step('find', { filter: { _id: { $gt: 590 } } }, { _id_: 1 });
    await step('find', { filter: { t: 't5' } }, {}); // hidden: a collection scan
    await step('find', { filter: { x: 1 } }, {});
    await step('find', { filter: { a: 5 }, explain: true }, {}); // explain runs nothing for the counts
    await step('findOne', { filter: { b: 4 } }, { b_1: 1 });
    await step('countDocuments', { filter: { b: 2 } }, { b_1: 1 }); // counted in the index's entries
    await step('countDocuments', { filter: { a: { $lt: 50 } } }, { a_1: 1 });
    await step('distinct', { key: 'b', filter: { a: { $lt: 20 } } }, { a_1: 1 });
    await step('updateOne', { filter: { a: 9 }, update: { $set: { u: 1 } } }, { a_1: 1 });
    await step('updateMany', { filter: { b: 1 }, update: { $inc: { n: 1 } } }, { b_1: 1 });
    await step('deleteOne', { filter: { _id: 599 } }, { _id_: 1 });
    await step('findOneAndUpdate', { filter: { b: 2 }, sort: { a: 1 }, update: { $set: { v: 1 } } }, { b_1: 1 });
    await step('aggregate', { pipeline: [{ $match: { a: { $gt: 500 } } }, { $count: 'n' }] }, { a_1: 1 });
    // A $lookup into the same collection: one read of the foreign collection per distinct key.
    await step('aggregate', { pipeline: [{ $match: { _id: { $in: [1, 2, 3] } } }, { $lookup: { from: c, localField: 'a', foreignField: 'a', as: 'same' } }] }, { _id_: 1, a_1: 3 });
    const docs = (await mql('aggregate', { collection: c, pipeline: [{ $indexStats: {} }] })).body.documents;
    expect(docs.map((d: any) => d.name)).toEqual(['_id_', 'a_1', 'b_1', 't_1']);
  });

  it("gives MongoDB's document for each index", async () => {
    const c = await file.seed([{ _id: 1, a: 1, d: { $date: '2024-01-01T00:00:00Z' } }]);
    await file.createIndex(c, { a: 1, d: -1 }, { name: 'ad', unique: true, partialFilterExpression: { a: { $gt: 0 } } });
    await file.createIndex(c, { d: 1 }, { expireAfterSeconds: 86_400 * 365 * 50, sparse: true, hidden: true });
    const res = await mql('aggregate', { collection: c, pipeline: [{ $indexStats: {} }] });
    const [id, ad, d] = res.body.documents;
    expect(typeof id.host).toBe('string');
    expect(id.host.length).toBeGreaterThan(0);
    expect(Date.parse(id.accesses.since.$date)).toBeLessThanOrEqual(Date.now());
    expect({ ...id, host: 'h', accesses: { ...id.accesses, since: 's' } }).toEqual({ name: '_id_', key: { _id: 1 }, host: 'h', accesses: { ops: 0, since: 's' }, spec: { v: 2, key: { _id: 1 }, name: '_id_' } });
    expect(ad.spec).toEqual({ v: 2, key: { a: 1, d: -1 }, name: 'ad', unique: true, partialFilterExpression: { a: { $gt: 0 } } });
    expect(d.spec).toEqual({ v: 2, key: { d: 1 }, name: 'd_1', expireAfterSeconds: 86_400 * 365 * 50, sparse: true, hidden: true });
    // Later stages see them as documents.
    const names = await mql('aggregate', { collection: c, pipeline: [{ $indexStats: {} }, { $match: { 'spec.unique': true } }, { $project: { _id: 0, name: 1 } }] });
    expect(names.body.documents).toEqual([{ name: 'ad' }]);
    // A collection that does not exist has no indexes.
    expect((await mql('aggregate', { collection: 'no_such_collection', pipeline: [{ $indexStats: {} }] })).body.documents).toEqual([]);
  });

  it('refuses $indexStats anywhere but first, and an argument other than {}', async () => {
    const c = await file.seed([{ _id: 1 }]);
    await file.refuses('aggregate', { collection: c, pipeline: [{ $match: {} }, { $indexStats: {} }] }, 400, 'QUERY_ERROR', '$indexStats is only valid as the first stage in a pipeline');
    await file.refuses('aggregate', { collection: c, pipeline: [{ $facet: { x: [{ $indexStats: {} }] } }] }, 400, 'QUERY_ERROR', '$indexStats is not allowed to be used within a $facet stage');
    await file.refuses('aggregate', { collection: c, pipeline: [{ $lookup: { from: c, pipeline: [{ $indexStats: {} }], as: 'x' } }] }, 400, 'QUERY_ERROR', "$indexStats is not allowed within a $lookup's sub-pipeline");
    await file.refuses('aggregate', { collection: c, pipeline: [{ $indexStats: 1 }] }, 400, 'QUERY_ERROR', 'must be an empty object');
    await file.refuses('aggregate', { collection: c, pipeline: [{ $indexStats: { a: 1 } }] }, 400, 'QUERY_ERROR', 'must be an empty object');
    await file.refuses('aggregate', { pipeline: [{ $indexStats: {} }] }, 400, 'VALIDATION_FAILED', 'collection is required');
  });

  it('counts per tenant, from zero again after a restart', async () => {
    const first = await startServer();
    let second: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const a = await signup(first.url, 'a');
      const b = await signup(first.url, 'b');
      const call = (url: string, key: string, op: string, json: unknown) => http(url, 'POST', `/api/mql/${op}`, { json, apiKey: key });
      const ops = async (url: string, key: string) => (await call(url, key, 'aggregate', { collection: 'c', pipeline: [{ $indexStats: {} }] })).body.documents.map((d: any) => d.accesses.ops);
      for (const key of [a.apiKey, b.apiKey]) {
        expect((await call(first.url, key, 'insertMany', { collection: 'c', documents: [{ _id: 1, x: 1 }] })).status).toBe(201);
        expect((await call(first.url, key, 'createIndex', { collection: 'c', keys: { x: 1 } })).status).toBe(200);
      }
      for (let i = 0; i < 3; i++) await call(first.url, a.apiKey, 'find', { collection: 'c', filter: { x: 1 } });
      expect(await ops(first.url, a.apiKey)).toEqual([0, 3]);
      expect(await ops(first.url, b.apiKey)).toEqual([0, 0]);
      await first.stop({ keepData: true });
      second = await startServer({ dataDir: first.dataDir });
      expect(await ops(second.url, a.apiKey)).toEqual([0, 0]);
    } finally {
      await second?.stop();
    }
  });
});
