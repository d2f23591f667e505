// createIndexes and dropIndexes (MongoDB's commands) over HTTP: several indexes created or dropped
// in one request, all or none: a failing build (a duplicate key in a unique one, a bad spec)
// drops the indexes the request created and names the failing one, equivalent ones already there
// stay; dropIndexes takes "*", a name, a key pattern or a list of names, refusing the whole list
// when one is not there.
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const names = async (c: string): Promise<string[]> => (await file.indexes(c)).map((ix: any) => ix.name);

describe('createIndexes', () => {
  it('creates every index given, keeps equivalent ones, and answers the counts', async () => {
    const c = await file.seed(Array.from({ length: 50 }, (_, i) => ({ _id: i, a: i, b: i % 5, t: `w${i}` })));
    await file.createIndex(c, { b: 1 });
    const res = await mql('createIndexes', { collection: c, indexes: [{ key: { a: 1 }, unique: true }, { key: { b: 1 } }, { key: { t: 'text' } }, { key: { b: -1, a: 1 }, name: 'mixed', hidden: true }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ createdIndexes: ['a_1', 't_text', 'mixed'], numIndexesBefore: 2, numIndexesAfter: 5 });
    expect(await names(c)).toEqual(['_id_', 'b_1', 'a_1', 't_text', 'mixed']);
    const plan = await mql('find', { collection: c, filter: { a: 7 }, explain: true });
    expect(plan.body.explain.plan.indexName).toBe('a_1');
    // On a collection that does not exist yet: made, as createIndex makes it.
    const fresh = await mql('createIndexes', { collection: `${c}_new`, indexes: [{ key: { x: 1 } }] });
    expect(fresh.body).toEqual({ createdIndexes: ['x_1'], numIndexesBefore: 1, numIndexesAfter: 2 });
  });

  it('creates none when one fails, naming it', async () => {
    const c = await file.seed([{ _id: 1, a: 1, b: 1 }, { _id: 2, a: 2, b: 1 }]);
    await file.createIndex(c, { a: 1 });
    const before = await file.indexes(c);
    const dup = await mql('createIndexes', { collection: c, indexes: [{ key: { c: 1 } }, { key: { a: 1 } }, { key: { b: 1 }, unique: true }] });
    expect(dup.status, dup.text).toBe(409);
    expect(dup.body.error.code).toBe('DUPLICATE_KEY');
    expect(dup.body.error.message).toMatch(/^indexes\.2: /);
    expect(dup.body.error.details.at).toBe('indexes.2');
    expect(await file.indexes(c)).toEqual(before);
    await file.refuses('createIndexes', { collection: c, indexes: [{ key: { d: 1 } }, { key: { e: 1 }, expireAfterSeconds: -5 }] }, 400, 'VALIDATION_FAILED', 'indexes.1: expireAfterSeconds');
    await file.refuses('createIndexes', { collection: c, indexes: [{ key: { d: 1 } }, { keys: { e: 1 } }] }, 400, 'VALIDATION_FAILED', 'indexes.1 must be an object with a key pattern in "key"');
    await file.refuses('createIndexes', { collection: c, indexes: [] }, 400, 'VALIDATION_FAILED', 'indexes must be a list of 1 to 63');
    await file.refuses('createIndexes', { collection: c, indexes: [{ key: { d: 1 }, name: 'a_1' }] }, 409, 'CONFLICT', 'indexes.0: an index named a_1 with a different specification exists');
    expect(await file.indexes(c)).toEqual(before);
  });
});

describe('dropIndexes', () => {
  it('drops "*", a name, a key pattern or a list of names, all or none', async () => {
    const c = await file.seed([{ _id: 1, a: 1, b: 1, c: 1 }]);
    for (const k of ['a', 'b', 'c', 'd']) await file.createIndex(c, { [k]: 1 });
    await file.refuses('dropIndexes', { collection: c, index: ['a_1', 'nope'] }, 404, 'NOT_FOUND', 'index not found: "nope"');
    await file.refuses('dropIndexes', { collection: c, index: ['a_1', '_id_'] }, 400, 'VALIDATION_FAILED', 'the _id index cannot be dropped');
    await file.refuses('dropIndexes', { collection: c, index: [] }, 400, 'VALIDATION_FAILED', 'non-empty list');
    await file.refuses('dropIndexes', { collection: c, index: { _id: 1 } }, 400, 'VALIDATION_FAILED', 'the _id index cannot be dropped');
    await file.refuses('dropIndexes', { collection: 'no_such', index: '*' }, 404, 'NOT_FOUND', 'ns not found no_such');
    expect(await names(c)).toEqual(['_id_', 'a_1', 'b_1', 'c_1', 'd_1']);
    expect((await mql('dropIndexes', { collection: c, index: ['a_1', 'c_1', 'a_1'] })).body).toEqual({ nIndexesWas: 5, dropped: ['a_1', 'c_1'] });
    expect((await mql('dropIndexes', { collection: c, index: { b: 1 } })).body).toEqual({ nIndexesWas: 3, dropped: ['b_1'] });
    expect((await mql('dropIndexes', { collection: c, index: '*' })).body).toEqual({ nIndexesWas: 2, dropped: ['d_1'] });
    expect(await names(c)).toEqual(['_id_']);
    expect((await mql('dropIndexes', { collection: c, index: '*' })).body).toEqual({ nIndexesWas: 1, dropped: [] });
    // The documents are all still there, and a find by a dropped index's field scans.
    expect((await mql('find', { collection: c, filter: { a: 1 }, explain: true })).body.explain.plan.stage).toBe('COLLSCAN');
  });
});
