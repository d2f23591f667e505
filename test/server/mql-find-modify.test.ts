// findOneAndUpdate, findOneAndReplace, findOneAndDelete, the `sort` of updateOne and replaceOne,
// and distinct, over HTTP on a real server. Expected answers are MongoDB's (the manual's
// db.collection.findOneAndUpdate / findOneAndDelete / distinct pages and their examples).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, signup, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let apiKey: string;
let otherKey: string;
beforeAll(async () => {
  server = await startServer();
  ({ apiKey } = await signup(server.url));
  ({ apiKey: otherKey } = await signup(server.url));
});
afterAll(() => server.stop());

const mql = <T = any>(op: string, json: unknown, key = apiKey) => http<T>(server.url, 'POST', `/api/mql/${op}`, { json, apiKey: key });

async function seed(collection: string, documents: unknown[], indexes: Array<Record<string, number>> = []): Promise<void> {
  for (const keys of indexes) expect((await mql('createIndex', { collection, keys })).status).toBe(200);
  const res = await mql('insertMany', { collection, documents });
  expect(res.status, res.text).toBe(201);
}

async function all(collection: string): Promise<any[]> {
  const res = await mql('find', { collection, sort: { _id: 1 }, limit: 10000 });
  expect(res.status, res.text).toBe(200);
  return res.body.documents;
}

// The manual's grades example (findOneAndUpdate page).
const GRADES = [
  { _id: 6305, name: 'A. MacDyver', assignment: 5, points: 24 },
  { _id: 6308, name: 'B. Batlock', assignment: 3, points: 22 },
  { _id: 6312, name: 'M. Tagnum', assignment: 5, points: 30 },
  { _id: 6319, name: 'R. Stiles', assignment: 2, points: 12 },
  { _id: 6322, name: 'A. MacDyver', assignment: 2, points: 14 },
  { _id: 6234, name: 'R. Stiles', assignment: 1, points: 10 },
];

describe.each([
  ['without indexes', []],
  ['with indexes on the sort and filter fields', [{ points: 1 }, { name: 1, points: -1 }]],
] as Array<[string, Array<Record<string, number>>]>)('findOneAnd* %s', (label, indexes) => {
  const coll = (base: string) => `${base}_${indexes.length}`;

  it('findOneAndUpdate returns the document before the update by default, after it when asked, projected', async () => {
    const c = coll('grades_u');
    await seed(c, GRADES, indexes);
    const before = await mql('findOneAndUpdate', { collection: c, filter: { name: 'R. Stiles' }, update: { $inc: { points: 5 } }, sort: { points: 1 } });
    expect(before.status, before.text).toBe(200);
    // The manual: the lowest points of R. Stiles (6234, 10 points) is updated; the original is returned.
    expect(before.body).toEqual({ document: { _id: 6234, name: 'R. Stiles', assignment: 1, points: 10 }, matchedCount: 1, modifiedCount: 1 });
    const after = await mql('findOneAndUpdate', {
      collection: c,
      filter: { name: 'A. MacDyver' },
      update: { $inc: { points: 5 } },
      sort: { points: 1 },
      projection: { _id: 0, points: 1 },
      returnDocument: 'after',
    });
    expect(after.status, after.text).toBe(200);
    expect(after.body).toEqual({ document: { points: 19 }, matchedCount: 1, modifiedCount: 1 });
    const stored = await all(c);
    expect(stored.find((d) => d._id === 6234).points).toBe(15);
    expect(stored.find((d) => d._id === 6305).points).toBe(24);
    expect(stored.find((d) => d._id === 6322).points).toBe(19);
  });

  it('findOneAndUpdate without a match answers null and changes nothing; with upsert it inserts', async () => {
    const c = coll('grades_up');
    await seed(c, GRADES, indexes);
    const none = await mql('findOneAndUpdate', { collection: c, filter: { name: 'Nobody' }, update: { $set: { points: 1 } } });
    expect(none.body).toEqual({ document: null, matchedCount: 0, modifiedCount: 0 });
    expect(await all(c)).toEqual([...GRADES].sort((a, b) => a._id - b._id));
    const upBefore = await mql('findOneAndUpdate', { collection: c, filter: { name: 'T. Upsert' }, update: { $set: { points: 3 } }, upsert: true });
    expect(upBefore.status, upBefore.text).toBe(200);
    expect(upBefore.body.document).toBeNull();
    expect(upBefore.body.upsertedId).toMatch(/^[0-9a-f]{24}$/);
    const upAfter = await mql('findOneAndUpdate', { collection: c, filter: { _id: 1, name: 'U. Upsert' }, update: { $set: { points: 4 }, $setOnInsert: { assignment: 0 } }, upsert: true, returnDocument: 'after' });
    expect(upAfter.body).toEqual({ document: { _id: 1, name: 'U. Upsert', points: 4, assignment: 0 }, matchedCount: 0, modifiedCount: 0, upsertedId: 1 });
    expect((await mql('findOne', { collection: c, filter: { _id: 1 } })).body.document).toEqual(upAfter.body.document);
  });

  it('findOneAndUpdate reports an unchanged document as matched, not modified', async () => {
    const c = coll('grades_same');
    await seed(c, GRADES, indexes);
    const res = await mql('findOneAndUpdate', { collection: c, filter: { _id: 6305 }, update: { $set: { points: 24 } }, returnDocument: 'after' });
    expect(res.body).toEqual({ document: GRADES[0], matchedCount: 1, modifiedCount: 0 });
  });

  it('findOneAndReplace replaces the first match in sort order and keeps its _id', async () => {
    const c = coll('grades_r');
    await seed(c, GRADES, indexes);
    const res = await mql('findOneAndReplace', { collection: c, filter: { points: { $lt: 20 } }, replacement: { team: 'Fearful Mallards', score: 25000 }, sort: { points: 1 } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ document: { _id: 6234, name: 'R. Stiles', assignment: 1, points: 10 }, matchedCount: 1, modifiedCount: 1 });
    const after = await mql('findOneAndReplace', { collection: c, filter: { points: { $lt: 20 } }, replacement: { team: 'Blue Plovers', score: 1 }, sort: { points: -1 }, returnDocument: 'after' });
    expect(after.body.document).toEqual({ _id: 6322, team: 'Blue Plovers', score: 1 });
    const stored = await all(c);
    expect(stored.find((d) => d._id === 6234)).toEqual({ _id: 6234, team: 'Fearful Mallards', score: 25000 });
    expect(stored.find((d) => d._id === 6319)).toEqual(GRADES[3]);
    const upsert = await mql('findOneAndReplace', { collection: c, filter: { _id: 'new' }, replacement: { team: 'New' }, upsert: true, returnDocument: 'after' });
    expect(upsert.body).toEqual({ document: { _id: 'new', team: 'New' }, matchedCount: 0, modifiedCount: 0, upsertedId: 'new' });
  });

  it('findOneAndDelete deletes the first match in sort order and returns it', async () => {
    const c = coll('grades_d');
    await seed(c, GRADES, indexes);
    const res = await mql('findOneAndDelete', { collection: c, filter: { name: 'A. MacDyver' }, sort: { points: 1 }, projection: { assignment: 1 } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ document: { _id: 6322, assignment: 2 } });
    const none = await mql('findOneAndDelete', { collection: c, filter: { name: 'Nobody' } });
    expect(none.body).toEqual({ document: null });
    const stored = await all(c);
    expect(stored.map((d) => d._id)).toEqual([6234, 6305, 6308, 6312, 6319]);
    // The index entries went with it: a find served by the index no longer names it.
    expect((await mql('find', { collection: c, filter: { points: 14 } })).body.documents).toEqual([]);
  });

  it('updateOne and replaceOne take a sort (MongoDB 8.0) and change the first match in that order', async () => {
    const c = coll('grades_s');
    await seed(c, GRADES, indexes);
    const u = await mql('updateOne', { collection: c, filter: { points: { $gte: 20 } }, update: { $set: { top: true } }, sort: { points: -1 } });
    expect(u.body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    expect((await mql('find', { collection: c, filter: { top: true } })).body.documents.map((d: any) => d._id)).toEqual([6312]);
    const r = await mql('replaceOne', { collection: c, filter: { points: { $gte: 20 } }, replacement: { low: true }, sort: { points: 1, _id: 1 } });
    expect(r.body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    expect((await mql('findOne', { collection: c, filter: { _id: 6308 } })).body.document).toEqual({ _id: 6308, low: true });
  });
});

describe('findOneAnd*: errors and concurrency', () => {
  it('refuses bad options with the right error and changes nothing', async () => {
    await seed('fm_err', GRADES, [{ points: 1 }]);
    await mql('createIndex', { collection: 'fm_err', keys: { name: 1, assignment: 1 }, unique: true });
    const cases: Array<[string, unknown, number, string]> = [
      ['findOneAndUpdate', { collection: 'fm_err', filter: {}, update: { $set: { points: 1 } }, returnDocument: 'later' }, 400, 'VALIDATION_FAILED'],
      ['findOneAndUpdate', { collection: 'fm_err', filter: {}, update: { points: 1 } }, 400, 'QUERY_ERROR'],
      ['findOneAndUpdate', { collection: 'fm_err', filter: {}, update: { $set: { points: 1 } }, sort: { points: 2 } }, 400, 'QUERY_ERROR'],
      ['findOneAndUpdate', { collection: 'fm_err', filter: {}, update: { $set: { points: 1 } }, projection: { a: 1, b: 0 } }, 400, 'QUERY_ERROR'],
      ['findOneAndUpdate', { collection: 'fm_err', filter: { _id: 6308 }, update: { $set: { name: 'A. MacDyver', assignment: 5 } } }, 409, 'DUPLICATE_KEY'],
      ['findOneAndUpdate', { collection: 'fm_err', filter: { _id: 6308 }, update: { $set: { _id: 1 } } }, 400, 'QUERY_ERROR'],
      ['findOneAndReplace', { collection: 'fm_err', filter: {}, replacement: { $set: { a: 1 } } }, 400, 'QUERY_ERROR'],
      ['findOneAndReplace', { collection: 'fm_err', filter: { _id: 6308 }, replacement: { name: 'A. MacDyver', assignment: 5 } }, 409, 'DUPLICATE_KEY'],
      ['findOneAndDelete', { collection: 'fm_err', filter: { $where: 'true' } }, 400, 'QUERY_ERROR'],
      ['findOneAndDelete', { collection: 'fm_err' }, 400, 'VALIDATION_FAILED'],
      ['findOneAndDelete', { collection: 'fm_err', filter: {}, sort: 'points' }, 400, 'VALIDATION_FAILED'],
      ['updateMany', { collection: 'fm_err', filter: {}, update: { $set: { a: 1 } }, sort: { points: 1 } }, 400, 'VALIDATION_FAILED'],
      ['distinct', { collection: 'fm_err', key: '' }, 400, 'VALIDATION_FAILED'],
      ['distinct', { collection: 'fm_err', key: 'a..b' }, 400, 'VALIDATION_FAILED'],
      ['distinct', { collection: 'fm_err', key: '$name' }, 400, 'VALIDATION_FAILED'],
      ['distinct', { collection: 'fm_err', key: 'name', filter: { a: { $bogus: 1 } } }, 400, 'QUERY_ERROR'],
    ];
    for (const [op, json, status, code] of cases) {
      const res = await mql(op, json);
      expect(res.status, `${op} ${JSON.stringify(json)}: ${res.text}`).toBe(status);
      expect(res.body.error.code, res.text).toBe(code);
    }
    expect(await all('fm_err')).toEqual([...GRADES].sort((a, b) => a._id - b._id));
  });

  it('hands each of many concurrent callers a different document from a queue, in priority order', async () => {
    // The work-queue habit: findOneAndUpdate({state: "ready"}, {$set: {state: "taken"}}, sort by
    // priority). Every caller must get its own job, and the jobs taken are the best ones. 3000
    // jobs: without the index each search scans over several turns, so callers race (the first
    // match found on a snapshot is taken by another caller first, and the search runs again).
    for (const indexed of [false, true]) {
      const c = indexed ? 'queue_ix' : 'queue';
      const jobs = Array.from({ length: 3000 }, (_, i) => ({ _id: `job${i}`, state: 'ready', pri: (i * 37) % 3000 }));
      await seed(c, jobs, indexed ? [{ state: 1, pri: 1 }] : []);
      const takers = await Promise.all(
        Array.from({ length: 40 }, (_, w) => mql('findOneAndUpdate', { collection: c, filter: { state: 'ready' }, update: { $set: { state: 'taken', by: w } }, sort: { pri: 1 }, returnDocument: 'after' })),
      );
      for (const t of takers) expect(t.status, t.text).toBe(200);
      const taken = takers.map((t) => t.body.document);
      expect(new Set(taken.map((d) => d._id)).size).toBe(40);
      expect(taken.map((d) => d.pri).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i));
      const stored = (await all(c)).filter((d) => d.state === 'taken');
      expect(stored.map((d) => [d._id, d.by]).sort()).toEqual(taken.map((d) => [d._id, d.by]).sort());
      // Deleting the same way: each caller removes a different job.
      const removed = await Promise.all(Array.from({ length: 30 }, () => mql('findOneAndDelete', { collection: c, filter: { state: 'ready' }, sort: { pri: -1 } })));
      expect(new Set(removed.map((r) => r.body.document._id)).size).toBe(30);
      expect(removed.map((r) => r.body.document.pri).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => 2970 + i));
      expect((await mql('countDocuments', { collection: c })).body.count).toBe(2970);
    }
  });

  it('never reaches another tenant', async () => {
    await seed('fm_iso', [{ _id: 1, v: 1 }]);
    const other = await mql('findOneAndDelete', { collection: 'fm_iso', filter: {} }, otherKey);
    expect(other.body).toEqual({ document: null });
    expect((await mql('distinct', { collection: 'fm_iso', key: 'v' }, otherKey)).body).toEqual({ values: [] });
    expect(await all('fm_iso')).toEqual([{ _id: 1, v: 1 }]);
  });
});

describe('distinct', () => {
  // The manual's distinct example (inventory).
  const INVENTORY = [
    { _id: 1, dept: 'A', item: { sku: '111', color: 'red' }, sizes: ['S', 'M'] },
    { _id: 2, dept: 'A', item: { sku: '111', color: 'blue' }, sizes: ['M', 'L'] },
    { _id: 3, dept: 'B', item: { sku: '222', color: 'blue' }, sizes: 'S' },
    { _id: 4, dept: 'A', item: { sku: '333', color: 'black' }, sizes: ['S'] },
  ];

  it('answers the manual examples, with and without an index on the filter', async () => {
    await seed('inventory', INVENTORY);
    await seed('inventory_ix', INVENTORY, [{ dept: 1 }, { sizes: 1 }]);
    for (const c of ['inventory', 'inventory_ix']) {
      const d = async (json: Record<string, unknown>) => {
        const res = await mql('distinct', { collection: c, ...json });
        expect(res.status, res.text).toBe(200);
        return res.body.values;
      };
      expect(await d({ key: 'dept' })).toEqual(['A', 'B']);
      expect(await d({ key: 'item.sku' })).toEqual(['111', '222', '333']);
      expect(await d({ key: 'sizes' })).toEqual(['L', 'M', 'S']);
      expect(await d({ key: 'item.sku', filter: { dept: 'A' } })).toEqual(['111', '333']);
      expect(await d({ key: 'dept', filter: { sizes: 'L' } })).toEqual(['A']);
      expect(await d({ key: 'nothing' })).toEqual([]);
    }
    expect((await mql('distinct', { collection: 'no_such_collection', key: 'a' })).body).toEqual({ values: [] });
  });

  it('orders mixed types by BSON order, merges equal values, and walks arrays of documents', async () => {
    await seed('mixed', [
      { _id: 1, v: 2 },
      { _id: 2, v: 2.0 },
      { _id: 3, v: 'b' },
      { _id: 4, v: null },
      { _id: 5, v: [1, [1, 2], { x: 1 }] },
      { _id: 6, v: { x: 1 } },
      { _id: 7, v: true },
      { _id: 8, v: { $date: '2026-01-01T00:00:00Z' } },
      { _id: 9 },
      { _id: 10, v: -0 },
      { _id: 11, v: [] },
      { _id: 12, a: [{ b: 1 }, { b: [2, 3] }, { c: 1 }, 5] },
      { _id: 13, a: { b: 1 } },
    ]);
    const v = await mql('distinct', { collection: 'mixed', key: 'v' });
    expect(v.status, v.text).toBe(200);
    // null < numbers < strings < objects < arrays < booleans < dates; an empty array adds nothing.
    expect(v.body.values).toEqual([null, 0, 1, 2, 'b', { x: 1 }, [1, 2], true, { $date: '2026-01-01T00:00:00.000Z' }]);
    expect((await mql('distinct', { collection: 'mixed', key: 'a.b' })).body.values).toEqual([1, 2, 3]);
    expect((await mql('distinct', { collection: 'mixed', key: 'v', filter: { _id: { $lte: 3 } } })).body.values).toEqual([2, 'b']);
  });
});
