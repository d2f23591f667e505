// Hidden indexes (MongoDB 4.4) and collMod's `index` option over HTTP: a hidden index is kept up
// to date, stays unique and expires documents, but no query reads it (equality, range, sort, the
// express find, $text, a hint; the plans explain shows); collMod hides and unhides it, changes a
// TTL index's time and makes a plain single-field index a TTL index (MongoDB 5.1), with MongoDB's
// old and new values in its answer and its refusals; the flags outlive a restart.
import { describe, expect, it } from 'vitest';
import { http, serverForFile, signup, startServer } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

async function stageOf(collection: string, json: Record<string, unknown>): Promise<string> {
  const res = await mql('find', { collection, explain: true, ...json });
  expect(res.status, res.text).toBe(200);
  return res.body.explain.plan.stage;
}

const waitFor = async (check: () => Promise<boolean>, ms = 5000): Promise<boolean> => {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
};

describe('hidden indexes', () => {
  it('are kept up to date and unique, read by no query, and serve again once unhidden', async () => {
    const c = await file.seed(Array.from({ length: 300 }, (_, i) => ({ _id: i, a: i, e: `u${i}@x.io`, t: `word${i % 3} text` })));
    await file.createIndex(c, { a: 1 }, { hidden: true });
    await file.createIndex(c, { e: 1 }, { unique: true, hidden: true });
    expect(await file.indexes(c)).toEqual([
      { name: '_id_', key: { _id: 1 }, unique: true },
      { name: 'a_1', key: { a: 1 }, hidden: true },
      { name: 'e_1', key: { e: 1 }, unique: true, hidden: true },
    ]);
    for (const q of [{ filter: { a: 7 } }, { filter: { a: { $gt: 290 } } }, { filter: {}, sort: { a: -1 }, limit: 3 }, { filter: { e: 'u5@x.io' } }, { filter: { $expr: { $eq: ['$a', 9] } } }]) {
      expect(await stageOf(c, q), JSON.stringify(q)).toBe('COLLSCAN');
    }
    // The express find by an indexed equality and the count answer as before (without the index).
    expect((await mql('find', { collection: c, filter: { e: 'u5@x.io' } })).body.documents).toEqual([{ _id: 5, a: 5, e: 'u5@x.io', t: 'word2 text' }]);
    expect((await mql('countDocuments', { collection: c, filter: { e: 'u5@x.io' } })).body.count).toBe(1);
    // A hint may not name it, by name or key pattern.
    await file.refuses('find', { collection: c, filter: { a: 7 }, hint: 'a_1' }, 400, 'QUERY_ERROR', 'hint provided does not correspond to an existing index: "a_1" (the index is hidden)');
    await file.refuses('find', { collection: c, filter: { a: 7 }, hint: { a: 1 } }, 400, 'QUERY_ERROR', 'the index is hidden');
    // Still unique, and still maintained: writes while hidden are in it once it is unhidden.
    await file.refuses('insertOne', { collection: c, document: { _id: 1000, e: 'u5@x.io' } }, 409, 'DUPLICATE_KEY', 'u5@x.io');
    expect((await mql('insertMany', { collection: c, documents: [{ _id: 300, a: 7, e: 'n300' }, { _id: 301, a: 1e6, e: 'n301' }] })).status).toBe(201);
    expect((await mql('deleteOne', { collection: c, filter: { _id: 7 } })).body.deletedCount).toBe(1);
    const shown = await mql('collMod', { collection: c, index: { name: 'a_1', hidden: false } });
    expect(shown.body).toEqual({ modified: true, hidden_old: true, hidden_new: false });
    const seven = await mql('find', { collection: c, filter: { a: 7 }, explain: true });
    expect([seven.body.explain.plan.stage, seven.body.explain.plan.indexName, seven.body.documents]).toEqual(['IXSCAN', 'a_1', [{ _id: 300, a: 7, e: 'n300' }]]);
    const top = await mql('find', { collection: c, sort: { a: -1 }, limit: 2, explain: true });
    expect([top.body.explain.inMemorySort, top.body.documents.map((d: any) => d._id)]).toEqual([false, [301, 299]]);
    // Hidden again by key pattern: not read again.
    expect((await mql('collMod', { collection: c, index: { keyPattern: { a: 1 }, hidden: true } })).body).toEqual({ modified: true, hidden_old: false, hidden_new: true });
    expect(await stageOf(c, { filter: { a: 7 } })).toBe('COLLSCAN');
    // An equivalent createIndex leaves it as it is (hidden), as MongoDB does.
    expect((await mql('createIndex', { collection: c, keys: { a: 1 } })).body).toEqual({ name: 'a_1', created: false });
    expect((await file.indexes(c)).find((ix: any) => ix.name === 'a_1').hidden).toBe(true);
  });

  it('a hidden text index answers no $text', async () => {
    const c = await file.seed([{ _id: 1, t: 'hello world' }, { _id: 2, t: 'other' }]);
    await file.createIndex(c, { t: 'text' }, { hidden: true });
    await file.refuses('find', { collection: c, filter: { $text: { $search: 'hello' } } }, 400, 'QUERY_ERROR', 'text index required for $text query');
    expect((await mql('collMod', { collection: c, index: { name: 't_text', hidden: false } })).status).toBe(200);
    expect((await mql('find', { collection: c, filter: { $text: { $search: 'hello' } }, projection: { _id: 1 } })).body.documents).toEqual([{ _id: 1 }]);
  });

  it('a hidden TTL index still expires documents; collMod changes its time, and makes a plain index a TTL index', async () => {
    const past = { $date: new Date(Date.now() - 120_000).toISOString() };
    const recent = { $date: new Date(Date.now() - 30_000).toISOString() };
    const c = await file.seed([{ _id: 'old', at: past }, { _id: 'recent', at: recent }, { _id: 'none' }]);
    await file.createIndex(c, { at: 1 }, { expireAfterSeconds: 3600, hidden: true });
    // One hour: nothing expires. Sixty seconds: `old` (two minutes ago) does, `recent` not yet.
    const changed = await mql('collMod', { collection: c, index: { name: 'at_1', expireAfterSeconds: 60 } });
    expect(changed.body).toEqual({ modified: true, expireAfterSeconds_old: 3600, expireAfterSeconds_new: 60 });
    const ids = async (): Promise<string[]> => (await mql('find', { collection: c, sort: { _id: 1 } })).body.documents.map((d: any) => d._id);
    expect(await waitFor(async () => (await ids()).join() === 'none,recent')).toBe(true);
    expect(await file.indexes(c)).toEqual([
      { name: '_id_', key: { _id: 1 }, unique: true },
      { name: 'at_1', key: { at: 1 }, expireAfterSeconds: 60, hidden: true },
    ]);
    // A plain index on a date field becomes a TTL index.
    const d = await file.seed([{ _id: 'old', when: past }, { _id: 'new', when: { $date: new Date(Date.now() + 3_600_000).toISOString() } }]);
    await file.createIndex(d, { when: 1 });
    expect((await mql('collMod', { collection: d, index: { keyPattern: { when: 1 }, expireAfterSeconds: 0 } })).body).toEqual({ modified: true, expireAfterSeconds_new: 0 });
    expect(await waitFor(async () => (await mql('find', { collection: d })).body.documents.length === 1)).toBe(true);
    expect((await mql('find', { collection: d })).body.documents.map((x: any) => x._id)).toEqual(['new']);
  });

  it('refuses what MongoDB refuses, changing nothing', async () => {
    const c = await file.seed([{ _id: 1, a: 1, b: 2 }]);
    await file.createIndex(c, { a: 1, b: 1 });
    await file.createIndex(c, { b: 1 }, { name: 'by_b' });
    const before = await file.indexes(c);
    await file.refuses('createIndex', { collection: c, keys: { z: 1 }, hidden: 'yes' }, 400, 'VALIDATION_FAILED', 'hidden');
    await file.refuses('createIndex', { collection: c, keys: { _id: 1 }, hidden: true }, 400, 'VALIDATION_FAILED', "can't hide _id index");
    await file.refuses('collMod', { collection: c, index: { name: 'by_b', keyPattern: { b: 1 }, hidden: true } }, 400, 'VALIDATION_FAILED', 'either index name or key pattern');
    await file.refuses('collMod', { collection: c, index: { hidden: true } }, 400, 'VALIDATION_FAILED', 'either index name or key pattern');
    await file.refuses('collMod', { collection: c, index: { name: 'by_b' } }, 400, 'VALIDATION_FAILED', 'no expireAfterSeconds or hidden field to update');
    await file.refuses('collMod', { collection: c, index: { name: 'by_b', hidden: 1 } }, 400, 'VALIDATION_FAILED', 'index.hidden must be a boolean');
    await file.refuses('collMod', { collection: c, index: { name: 'by_b', unique: true } }, 400, 'VALIDATION_FAILED', 'unsupported index option for collMod: unique');
    await file.refuses('collMod', { collection: c, index: { name: 'by_b', expireAfterSeconds: -1 } }, 400, 'VALIDATION_FAILED', 'expireAfterSeconds must be an integer');
    await file.refuses('collMod', { collection: c, index: { name: 'a_1_b_1', expireAfterSeconds: 5 } }, 400, 'VALIDATION_FAILED', 'compound indexes do not support TTL');
    await file.refuses('collMod', { collection: c, index: { name: '_id_', hidden: true } }, 400, 'VALIDATION_FAILED', "can't modify the _id index");
    await file.refuses('collMod', { collection: c, index: { keyPattern: { _id: 1 }, hidden: true } }, 400, 'VALIDATION_FAILED', "can't modify the _id index");
    await file.refuses('collMod', { collection: c, index: { name: 'nope', hidden: true } }, 404, 'NOT_FOUND', `cannot find index nope for ns ${c}`);
    await file.refuses('collMod', { collection: c, index: { keyPattern: { b: -1 }, hidden: true } }, 404, 'NOT_FOUND', 'cannot find index {"b":-1}');
    await file.refuses('collMod', { collection: c, index: 'by_b' }, 400, 'VALIDATION_FAILED', 'index must be');
    await file.refuses('collMod', { collection: 'no_such_collection', index: { name: 'by_b', hidden: true } }, 404, 'NOT_FOUND', 'ns does not exist');
    expect(await file.indexes(c)).toEqual(before);
  });

  it('keeps an index hidden across a restart', async () => {
    const first = await startServer();
    let second: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const { apiKey } = await signup(first.url);
      const call = (url: string, op: string, json: unknown) => http(url, 'POST', `/api/mql/${op}`, { json, apiKey });
      expect((await call(first.url, 'insertMany', { collection: 'r', documents: [{ _id: 1, a: 1 }] })).status).toBe(201);
      expect((await call(first.url, 'createIndex', { collection: 'r', keys: { a: 1 }, hidden: true })).status).toBe(200);
      await first.stop({ keepData: true });
      second = await startServer({ dataDir: first.dataDir });
      expect((await call(second.url, 'listIndexes', { collection: 'r' })).body.indexes[1]).toEqual({ name: 'a_1', key: { a: 1 }, hidden: true });
      expect((await call(second.url, 'find', { collection: 'r', filter: { a: 1 }, explain: true })).body.explain.plan.stage).toBe('COLLSCAN');
    } finally {
      await second?.stop();
    }
  });
});
