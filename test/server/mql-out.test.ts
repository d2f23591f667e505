// The $out stage over HTTP on a real server: the manual's examples ($out page: output to the same
// database; to another one, which tetradb refuses), MongoDB's jstests
// (jstests/aggregation/sources/out/replace_collection.js, required_last_position.js,
// out_in_lookup_not_allowed.js): replacing a collection (its indexes kept), a new target, the
// source itself, failures that leave the target as it was (an error midway, a unique index, an
// `_id` repeated, a document tetradb cannot store, the quota), readers that see the old documents
// or the new but never a mix, refusals with MongoDB's messages, a restart, and a SIGKILL midway.
// Expected answers are the manual's, or worked by hand.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listTemporaryCollections } from '../../engine/docs/catalog.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { http, signup, startServer, serverForFile } from '../helpers/server.js';
import { spawnServer } from '../helpers/server-process.js';
import { storeOptions } from '../helpers/store-fixture.js';
import { tempDir } from '../helpers/temp-dir.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const all = (collection: string): Promise<any[]> => file.all(collection);
const createIndex = file.createIndex.bind(file);
const collectionNames = file.collectionNames.bind(file);
const refused = (collection: string, pipeline: unknown[], status: number, code: string, message: string): Promise<void> => file.refuses('aggregate', { collection, pipeline }, status, code, message);
const indexes = file.indexes.bind(file);
let names = 0;
/** A fresh collection name (nothing in it yet). */
const fresh = (prefix = 'o'): string => `${prefix}${++names}`;

async function insert(collection: string, documents: unknown[]): Promise<void> {
  const res = await mql('insertMany', { collection, documents });
  expect(res.status, res.text).toBe(201);
}

/** Runs a pipeline that ends in $out: MongoDB answers no documents. */
async function out(collection: string, pipeline: unknown[]): Promise<void> {
  const res = await mql('aggregate', { collection, pipeline });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({ documents: [], executedBy: 'native' });
}

/** The hidden collections left in a tenant's store, read from its files (the server stopped). */
async function leftovers(dataDir: string, tenantId: string): Promise<string[]> {
  const store = await TenantStore.open(join(dataDir, 'tenants', tenantId), storeOptions());
  try {
    return listTemporaryCollections(store).map((info) => info.name);
  } finally {
    await store.close();
  }
}

// The manual's $out page.
const BOOKS = [
  { _id: 8751, title: 'The Banquet', author: 'Dante', copies: 2 },
  { _id: 8752, title: 'Divine Comedy', author: 'Dante', copies: 1 },
  { _id: 8645, title: 'Eclogues', author: 'Dante', copies: 2 },
  { _id: 7000, title: 'The Odyssey', author: 'Homer', copies: 10 },
  { _id: 7020, title: 'Iliad', author: 'Homer', copies: 10 },
];

describe('$out: the manual', () => {
  it('output to the same database: the authors with their books', async () => {
    const books = await file.seed(BOOKS, 'books');
    const authors = fresh('authors');
    await out(books, [{ $group: { _id: '$author', books: { $push: '$title' } } }, { $out: authors }]);
    // $push keeps the input's order: MongoDB's natural (insertion) order, tetradb's _id order; compared as sets.
    const sorted = (await all(authors)).map((d) => ({ ...d, books: [...d.books].sort() }));
    expect(sorted).toEqual([
      { _id: 'Dante', books: ['Divine Comedy', 'Eclogues', 'The Banquet'] },
      { _id: 'Homer', books: ['Iliad', 'The Odyssey'] },
    ]);
    // The object form, without a database: the same collection, replaced.
    await out(books, [{ $match: { author: 'Homer' } }, { $group: { _id: '$author', copies: { $sum: '$copies' } } }, { $out: { coll: authors } }]);
    expect(await all(authors)).toEqual([{ _id: 'Homer', copies: 20 }]);
  });

  it('output to a different database: refused (one database per tenant), nothing written', async () => {
    const books = await file.seed(BOOKS, 'books');
    await refused(books, [{ $group: { _id: '$author', books: { $push: '$title' } } }, { $out: { db: 'reporting', coll: 'authors' } }], 400, 'QUERY_ERROR',
      '$out cannot write to another database (db: "reporting"): tetradb has one database per tenant');
    expect(await collectionNames()).not.toContain('authors');
  });
});

describe('$out: targets', () => {
  it('replaces an existing collection: its documents gone, the output there, its indexes kept and maintained', async () => {
    const source = await file.seed([{ _id: 1, k: 'x', tags: ['a', 'b'] }, { _id: 2, k: 'y', tags: [] }, { _id: 3, k: 'z' }]);
    const target = fresh('t');
    await insert(target, [{ _id: 'old1', k: 'a' }, { _id: 'old2', k: 'b', at: { $date: '2030-01-01T00:00:00Z' } }]);
    await createIndex(target, { k: 1 }, { unique: true });
    await createIndex(target, { at: 1 }, { expireAfterSeconds: 3600 });
    await createIndex(target, { tags: 1 }, { name: 'byTag', sparse: true });
    await createIndex(target, { k: -1, _id: 1 }, { partialFilterExpression: { k: { $gt: 'm' } } });
    const before = await indexes(target);
    await out(source, [{ $out: target }]);
    expect(await all(target)).toEqual([{ _id: 1, k: 'x', tags: ['a', 'b'] }, { _id: 2, k: 'y', tags: [] }, { _id: 3, k: 'z' }]);
    // The same indexes; byTag is multikey now, from the new documents.
    const after = await indexes(target);
    expect(after).toEqual(before.map((i: any) => (i.name === 'byTag' ? { ...i, multikey: true } : i)));
    // They serve finds, hold the new documents' keys and none of the old ones', and the unique one still refuses.
    expect((await mql('find', { collection: target, filter: { k: 'a' } })).body.documents).toEqual([]);
    expect((await mql('find', { collection: target, filter: { tags: 'b' }, hint: 'byTag' })).body.documents).toEqual([{ _id: 1, k: 'x', tags: ['a', 'b'] }]);
    expect((await mql('find', { collection: target, filter: { k: 'y' }, hint: 'k_1' })).body.documents).toEqual([{ _id: 2, k: 'y', tags: [] }]);
    expect((await mql('insertOne', { collection: target, document: { _id: 4, k: 'z' } })).status).toBe(409);
    expect(await collectionNames()).toContain(target);
  });

  it('MongoDB\'s replace_collection.js: a target document the output would collide with is no violation (the target is replaced whole)', async () => {
    const source = await file.seed([{ _id: 0, a: 0 }]);
    const target = fresh('t');
    await insert(target, [{ _id: 1, a: 0 }]);
    await createIndex(target, { a: 1 }, { unique: true });
    await out(source, [{ $out: target }]);
    expect(await all(target)).toEqual([{ _id: 0, a: 0 }]);
    expect((await indexes(target)).length).toBe(2);
  });

  it('a new target is created; an empty output makes (or leaves) an empty collection, as MongoDB\'s', async () => {
    const source = await file.seed([{ _id: 1, g: 'x' }, { _id: 2, g: 'y' }, { _id: 3, g: 'x' }]);
    const target = fresh('created');
    expect(await collectionNames()).not.toContain(target);
    await out(source, [{ $group: { _id: '$g', n: { $sum: 1 } } }, { $out: target }]);
    expect(await all(target)).toEqual([{ _id: 'x', n: 2 }, { _id: 'y', n: 1 }]);
    await out(source, [{ $match: { g: 'none' } }, { $out: target }]);
    const listed = (await mql('listCollections', {})).body.collections.find((c: { name: string }) => c.name === target);
    expect(listed).toMatchObject({ name: target, count: 0 });
    const empty = fresh('empty');
    await out(source, [{ $match: { g: 'none' } }, { $out: empty }]);
    expect(await collectionNames()).toContain(empty);
    expect(await all(empty)).toEqual([]);
  });

  it('into the source collection: the pipeline reads its snapshot, so each document is read once; what it leaves out is gone', async () => {
    const c = await file.seed([{ _id: 1, n: 1 }, { _id: 2, n: 2 }, { _id: 3, n: 3 }]);
    await out(c, [{ $match: { n: { $gte: 2 } } }, { $set: { n: { $add: ['$n', 10] } } }, { $out: c }]);
    expect(await all(c)).toEqual([{ _id: 2, n: 12 }, { _id: 3, n: 13 }]);
    // New _ids from every document: the output is exactly one per input document.
    await out(c, [{ $set: { _id: { $add: ['$_id', 100] } } }, { $out: c }]);
    expect(await all(c)).toEqual([{ _id: 102, n: 12 }, { _id: 103, n: 13 }]);
  });

  it('documents without _id get one (a new ObjectId-style string), first in the document', async () => {
    const source = await file.seed([{ _id: 1, a: 'p' }, { _id: 2, a: 'q' }]);
    const target = fresh('t');
    await out(source, [{ $project: { _id: 0, a: 1 } }, { $out: target }]);
    const docs = await all(target);
    expect(docs.map((d) => d.a).sort()).toEqual(['p', 'q']);
    for (const d of docs) {
      expect(d._id).toMatch(/^[0-9a-f]{24}$/);
      expect(Object.keys(d)).toEqual(['_id', 'a']);
    }
  });

  it('a large output (past many batches, one chunk from an $unwind) is all there', async () => {
    const source = await file.seed(Array.from({ length: 30 }, (_, i) => ({ _id: i })));
    const target = fresh('t');
    await insert(target, [{ _id: 'old' }]);
    await out(source, [{ $set: { r: { $range: [0, 100] } } }, { $unwind: '$r' }, { $project: { _id: { $add: [{ $multiply: ['$_id', 1000] }, '$r'] } } }, { $out: target }]);
    expect((await mql('countDocuments', { collection: target })).body.count).toBe(3000);
    expect((await mql('find', { collection: target, filter: { _id: 'old' } })).body.documents).toEqual([]);
  });
});

describe('$out: failures leave the target as it was', () => {
  /** A target with two documents and a unique index on k: what every failure must leave. */
  async function standingTarget(): Promise<{ target: string; docs: any[]; indexes: unknown[] }> {
    const target = fresh('kept');
    await insert(target, [{ _id: 'a', k: 1 }, { _id: 'b', k: 2 }]);
    await createIndex(target, { k: 1 }, { unique: true });
    return { target, docs: await all(target), indexes: await indexes(target) };
  }

  async function unchanged(before: { target: string; docs: any[]; indexes: unknown[] }): Promise<void> {
    expect(await all(before.target)).toEqual(before.docs);
    expect(await indexes(before.target)).toEqual(before.indexes);
  }

  it('an error midway through the pipeline (after batches were written): the target unchanged', async () => {
    const before = await standingTarget();
    const source = await file.seed(Array.from({ length: 1500 }, (_, i) => ({ _id: i, k: i + 10, s: i === 1200 ? 'x' : String(i) })));
    await refused(source, [{ $sort: { _id: 1 } }, { $set: { n: { $toInt: '$s' } } }, { $out: before.target }], 400, 'QUERY_ERROR', 'x');
    await unchanged(before);
  });

  it('the target\'s unique index violated by the output, late in a large one: 409, the target unchanged', async () => {
    const before = await standingTarget();
    const source = await file.seed(Array.from({ length: 1200 }, (_, i) => ({ _id: i, k: i === 1100 ? 5 : i + 10 })));
    // k 5 is taken by the output's own document 1100 and by none of the target's: the output collides with itself.
    const res = await mql('aggregate', { collection: source, pipeline: [{ $sort: { _id: 1 } }, { $set: { k: { $cond: [{ $eq: ['$_id', 1150] }, 5, '$k'] } } }, { $out: before.target }] });
    expect(res.status, res.text).toBe(409);
    expect(res.body.error.code).toBe('DUPLICATE_KEY');
    expect(res.body.error.message).toBe(`E11000 duplicate key error collection: ${before.target} index: k_1 dup key: {"k":5}`);
    await unchanged(before);
  });

  it('an _id repeated in the output: 409 on _id_, the target unchanged', async () => {
    const before = await standingTarget();
    const source = await file.seed([{ _id: 1, g: 'x' }, { _id: 2, g: 'x' }]);
    const res = await mql('aggregate', { collection: source, pipeline: [{ $project: { _id: '$g' } }, { $out: before.target }] });
    expect(res.status, res.text).toBe(409);
    expect(res.body.error.message).toBe(`E11000 duplicate key error collection: ${before.target} index: _id_ dup key: { _id: "x" }`);
    await unchanged(before);
  });

  it('documents tetradb cannot store (an _id of another type, past the size limit): 400, the target unchanged', async () => {
    const before = await standingTarget();
    const source = await file.seed([{ _id: 1, s: 'x'.repeat(1000) }]);
    await refused(source, [{ $project: { _id: { a: '$_id' } } }, { $out: before.target }], 400, 'VALIDATION_FAILED', '$out cannot write a document whose _id is {');
    const big = { $reduce: { input: { $range: [0, 11] }, initialValue: '$s', in: { $concat: ['$$value', '$$value'] } } };
    await refused(source, [{ $set: { big } }, { $out: before.target }], 400, 'VALIDATION_FAILED', 'exceeds the limit');
    await unchanged(before);
  });

  it('a tenant past its quota: 507 QUOTA_EXCEEDED, the target unchanged', async () => {
    const server = await startServer({ quotaBytes: 200 * 1024, bodyLimit: 2 * 1024 * 1024 });
    try {
      const { apiKey } = await signup(server.url);
      const call = (op: string, json: unknown) => http(server.url, 'POST', `/api/mql/${op}`, { json, apiKey });
      expect((await call('insertMany', { collection: 's', documents: [{ _id: 1, s: 'x'.repeat(50_000) }] })).status).toBe(201);
      expect((await call('insertMany', { collection: 't', documents: [{ _id: 'kept' }] })).status).toBe(201);
      const res = await call('aggregate', { collection: 's', pipeline: [{ $set: { s: { $concat: ['$s', '$s', '$s', '$s', '$s'] } } }, { $out: 't' }] });
      expect(res.status, res.text).toBe(507);
      expect(res.body.error.code).toBe('QUOTA_EXCEEDED');
      expect((await call('find', { collection: 't' })).body.documents).toEqual([{ _id: 'kept' }]);
    } finally {
      await server.stop();
    }
  });

  it('no hidden collection is left behind by a failed $out, nor by a finished one', async () => {
    const dir = tempDir('out-failed');
    const server = await startServer({ dataDir: dir.path });
    const { apiKey, tenantId } = await signup(server.url);
    const call = (op: string, json: unknown) => http(server.url, 'POST', `/api/mql/${op}`, { json, apiKey });
    expect((await call('insertMany', { collection: 's', documents: Array.from({ length: 600 }, (_, i) => ({ _id: i, s: i === 500 ? 'x' : String(i) })) })).status).toBe(201);
    expect((await call('aggregate', { collection: 's', pipeline: [{ $set: { n: { $toInt: '$s' } } }, { $out: 't' }] })).status).toBe(400);
    expect((await call('aggregate', { collection: 's', pipeline: [{ $project: { _id: '$s' } }, { $set: { _id: 'same' } }, { $out: 't' }] })).status).toBe(409);
    expect((await call('aggregate', { collection: 's', pipeline: [{ $out: 't' }] })).status).toBe(200);
    expect((await call('listCollections', {})).body.collections.map((c: { name: string }) => c.name).sort()).toEqual(['s', 't']);
    await server.stop();
    try {
      expect(await leftovers(dir.path, tenantId)).toEqual([]);
    } finally {
      dir.remove();
    }
  });
});

describe('$out: readers', () => {
  it('see the old documents or the new, never a mix, while a large $out runs', async () => {
    const target = fresh('swap');
    await insert(target, Array.from({ length: 2000 }, (_, i) => ({ _id: i, v: 'old' })));
    const source = await file.seed(Array.from({ length: 50 }, (_, i) => ({ _id: i })));
    const pipeline = [{ $set: { r: { $range: [0, 100] } } }, { $unwind: '$r' }, { $project: { _id: { $add: [{ $multiply: ['$_id', 1000] }, '$r'] }, v: 'new' } }, { $out: target }];
    const running = mql('aggregate', { collection: source, pipeline });
    let done = false;
    void running.then(() => (done = true));
    const seen = new Set<string>();
    const listed = new Set<string>();
    while (!done) {
      const res = await mql('aggregate', { collection: target, pipeline: [{ $group: { _id: '$v', n: { $sum: 1 } } }] });
      expect(res.status, res.text).toBe(200);
      seen.add(JSON.stringify(res.body.documents));
      // The hidden collection the $out is filling is never listed.
      for (const name of await collectionNames()) listed.add(name);
    }
    expect([...listed].filter((n) => n.startsWith('system.'))).toEqual([]);
    expect((await running).status).toBe(200);
    seen.add(JSON.stringify((await mql('aggregate', { collection: target, pipeline: [{ $group: { _id: '$v', n: { $sum: 1 } } }] })).body.documents));
    expect([...seen].every((s) => s === '[{"_id":"old","n":2000}]' || s === '[{"_id":"new","n":5000}]'), [...seen].join()).toBe(true);
    expect(seen.has('[{"_id":"new","n":5000}]')).toBe(true);
  });

  it('hidden collections are never listed (MongoDB\'s temporary collections are not either), and their names cannot be used', async () => {
    const source = await file.seed([{ _id: 1 }]);
    await out(source, [{ $out: fresh('t') }]);
    expect((await collectionNames()).filter((n) => n.startsWith('system.'))).toEqual([]);
    const res = await mql('find', { collection: 'system.tmp.agg_out.1' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe("collection names must not start with 'system.'");
  });
});

describe('$out: the target changed meanwhile', () => {
  it('an index created on the target while the $out runs: 409 CONFLICT (MongoDB: "indexes of target collection ... changed during processing."), the target keeps its documents and the new index', async () => {
    const source = await file.seed(Array.from({ length: 300 }, (_, i) => ({ _id: i })));
    const pipeline = (target: string) => [{ $set: { r: { $range: [0, 100] } } }, { $unwind: '$r' }, { $project: { _id: { $add: [{ $multiply: ['$_id', 1000] }, '$r'] }, k: '$r' } }, { $out: target }];
    let conflicts = 0;
    // The index must land while the $out writes: started a little after it (the $out read the target's indexes at once).
    for (const delayMs of [40, 20, 80]) {
      const target = fresh('changing');
      await insert(target, [{ _id: 'old', k: -1 }]);
      const running = mql('aggregate', { collection: source, pipeline: pipeline(target) });
      await new Promise((r) => setTimeout(r, delayMs));
      await createIndex(target, { k: 1 });
      const res = await running;
      if (res.status === 200) continue; // the $out was done first: nothing to see this time
      expect(res.status, res.text).toBe(409);
      expect(res.body.error.code).toBe('CONFLICT');
      expect(res.body.error.message).toBe(`indexes of target collection ${target} changed during processing.`);
      expect(await all(target)).toEqual([{ _id: 'old', k: -1 }]);
      expect((await indexes(target)).map((i: any) => i.name)).toEqual(['_id_', 'k_1']);
      conflicts++;
      break;
    }
    expect(conflicts).toBe(1);
  });
});

describe('$out: TTL indexes', () => {
  it('documents it writes with a past date into a target with a TTL index expire, as inserted ones do', async () => {
    const past = new Date(Date.now() - 60_000).toISOString();
    const source = await file.seed([{ _id: 'old', at: { $date: past } }, { _id: 'keep' }, { _id: 'far', at: { $date: new Date(Date.now() + 3_600_000).toISOString() } }]);
    const target = fresh('ttl');
    await insert(target, [{ _id: 'gone' }]);
    await createIndex(target, { at: 1 }, { expireAfterSeconds: 1 });
    await out(source, [{ $out: target }]);
    const deadline = Date.now() + 5000;
    let ids: unknown[] = [];
    while (Date.now() < deadline) {
      ids = (await all(target)).map((d) => d._id);
      if (ids.length === 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(ids).toEqual(['far', 'keep']);
  });
});

describe('$out: refusals (nothing written)', () => {
  it.each([
    // MongoDB's required_last_position.js (40601) and out_in_lookup_not_allowed.js (51047).
    [[{ $out: 'x' }, { $match: {} }], '$out can only be the final stage in the pipeline'],
    [[{ $project: { a: 0 } }, { $out: 'x' }, { $match: { a: true } }], '$out can only be the final stage in the pipeline'],
    [[{ $lookup: { from: 'y', pipeline: [{ $out: 'x' }], as: 'z' } }], "$out is not allowed within a $lookup's sub-pipeline"],
    [[{ $lookup: { from: 'y', pipeline: [{ $project: { a: 0 } }, { $out: 'x' }], as: 'z' } }], "$out is not allowed within a $lookup's sub-pipeline"],
    [[{ $unionWith: { coll: 'y', pipeline: [{ $out: 'x' }] } }], "$out is not allowed within a $unionWith's sub-pipeline"],
    [[{ $facet: { a: [{ $out: 'x' }] } }], '$out is not allowed to be used within a $facet stage'],
    [[{ $out: 'x' }, { $merge: 'y' }], '$out can only be the final stage in the pipeline'],
    [[{ $out: 1 }], '$out only supports a string or object argument, but found int'],
    [[{ $out: ['x'] }], '$out only supports a string or object argument, but found array'],
    [[{ $out: { db: 'other', coll: 'x' } }], '$out cannot write to another database (db: "other")'],
    [[{ $out: { coll: 'x', foo: 1 } }], "BSON field '$out.foo' is an unknown field."],
    [[{ $out: {} }], "BSON field '$out.coll' is missing but a required field"],
    [[{ $out: { coll: 1 } }], "BSON field '$out.coll' is the wrong type 'int', expected type 'string'"],
    [[{ $out: { coll: 'x', timeseries: { timeField: 't' } } }], "$out's timeseries option is not supported"],
  ])('%j: %s', async (pipeline, message) => {
    const source = await file.seed([{ _id: 1 }]);
    await refused(source, pipeline, 400, 'QUERY_ERROR', message);
    expect(await collectionNames()).not.toContain('x');
  });

  it.each([
    [{ $out: '' }, 'collection must be a non-empty string'],
    [{ $out: 'system.x' }, "collection names must not start with 'system.'"],
    [{ $out: 'a$b' }, "collection names must not contain '$'"],
  ])('a name no collection may have, %j: 400 VALIDATION_FAILED', async (stage, message) => {
    const source = await file.seed([{ _id: 1 }]);
    await refused(source, [stage], 400, 'VALIDATION_FAILED', message);
  });

  it('a pipeline-style update refuses $out as a stage', async () => {
    const c = await file.seed([{ _id: 1 }]);
    const res = await mql('updateOne', { collection: c, filter: {}, update: [{ $out: 'x' }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('$out is not allowed to be used within an update');
  });
});

describe('$out across a restart', () => {
  it('the new documents are durable once the aggregate answers', async () => {
    const first = await startServer();
    const { apiKey } = await signup(first.url);
    const call = (base: string, op: string, json: unknown) => http(base, 'POST', `/api/mql/${op}`, { json, apiKey });
    await call(first.url, 'insertMany', { collection: 's', documents: Array.from({ length: 700 }, (_, i) => ({ _id: i, g: i % 7 })) });
    await call(first.url, 'insertMany', { collection: 'r', documents: [{ _id: 'old' }] });
    await call(first.url, 'createIndex', { collection: 'r', keys: { h: 1 } });
    const res = await call(first.url, 'aggregate', { collection: 's', pipeline: [{ $set: { h: { $multiply: ['$g', 2] } } }, { $out: 'r' }] });
    expect(res.status, res.text).toBe(200);
    await first.stop({ keepData: true });
    const second = await startServer({ dataDir: first.dataDir });
    try {
      expect((await call(second.url, 'countDocuments', { collection: 'r' })).body).toEqual({ count: 700 });
      const some = await call(second.url, 'find', { collection: 'r', filter: { h: 12 }, hint: 'h_1', sort: { _id: 1 }, limit: 2 });
      expect(some.body.documents).toEqual([{ _id: 6, g: 6, h: 12 }, { _id: 13, g: 6, h: 12 }]);
      expect((await call(second.url, 'find', { collection: 'r', filter: { _id: 'old' } })).body.documents).toEqual([]);
    } finally {
      await second.stop();
    }
  });
});

describe('$out and a crash', () => {
  it('SIGKILL midway: after a restart the target is wholly old or wholly new, and no hidden collection remains', async () => {
    const dir = tempDir('out-crash');
    const OLD = 300;
    const NEW = 30_000;
    try {
      let apiKey = '';
      let tenantId = '';
      let killedMidway = 0;
      const outcomes: string[] = [];
      // Kill later and later until some kill lands while the $out writes (its hidden collection is then on disk).
      for (const delayMs of [150, 300, 600, 1000, 1600, 2500]) {
        const server = await spawnServer(dir.path, ['--rate-limit', '0']);
        if (apiKey === '') ({ apiKey, tenantId } = await signup(server.url, 'out-crash'));
        const call = (op: string, json: unknown) => http(server.url, 'POST', `/api/mql/${op}`, { json, apiKey });
        // The target, old; the source: 300 documents, each unwound into 100 of the output.
        await call('dropCollection', { collection: 'target' });
        expect((await call('insertMany', { collection: 'target', documents: Array.from({ length: OLD }, (_, i) => ({ _id: `old${i}`, v: 'old' })) })).status).toBe(201);
        expect((await call('createIndex', { collection: 'target', keys: { v: 1 } })).status).toBe(200);
        if (outcomes.length === 0) {
          const documents = Array.from({ length: NEW / 100 }, (_, i) => ({ _id: i, pad: 'x'.repeat(300) }));
          expect((await call('insertMany', { collection: 'source', documents })).status).toBe(201);
        }
        const pipeline = [{ $set: { r: { $range: [0, 100] } } }, { $unwind: '$r' }, { $project: { _id: { $add: [{ $multiply: ['$_id', 1000] }, '$r'] }, v: 'new', pad: 1 } }, { $out: 'target' }];
        const running = call('aggregate', { collection: 'source', pipeline }).catch(() => undefined);
        await new Promise((r) => setTimeout(r, delayMs));
        server.child.kill('SIGKILL');
        await running;
        expect((await server.exited).signal).toBe('SIGKILL');
        if ((await leftovers(dir.path, tenantId)).length > 0) killedMidway++;

        const again = await spawnServer(dir.path, ['--rate-limit', '0']);
        try {
          const res = await http(again.url, 'POST', '/api/mql/aggregate', { json: { collection: 'target', pipeline: [{ $group: { _id: '$v', n: { $sum: 1 } } }] }, apiKey });
          expect(res.status, res.text).toBe(200);
          const outcome = JSON.stringify(res.body.documents);
          outcomes.push(outcome);
          expect([`[{"_id":"old","n":${OLD}}]`, `[{"_id":"new","n":${NEW}}]`]).toContain(outcome);
          // The index is there either way, and serves the documents that are.
          const listed = await http(again.url, 'POST', '/api/mql/listIndexes', { json: { collection: 'target' }, apiKey });
          expect(listed.body.indexes.map((i: { name: string }) => i.name)).toEqual(['_id_', 'v_1']);
        } finally {
          again.child.kill('SIGTERM');
          await again.exited;
        }
        // The restart dropped what the killed $out left.
        expect(await leftovers(dir.path, tenantId)).toEqual([]);
        if (killedMidway > 0) break;
      }
      expect(killedMidway, `no kill landed midway: ${outcomes.join(' ')}`).toBeGreaterThan(0);
    } finally {
      dir.remove();
    }
  });
});
