/**
 * Index options over HTTP, laid out like the MongoDB manual's pages (Partial Indexes, Sparse
 * Indexes, hint): which documents sparse and partial indexes hold, unique constraints within
 * them, when a query may read them (explain), `hint` on every operation that takes it, the
 * options' errors, and that they survive a restart. The differential fuzz
 * (test/fuzz/docs-index.fuzz.test.ts, "sparse and partial") checks random queries against
 * collection scans.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, signup, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let apiKey: string;
beforeAll(async () => {
  server = await startServer({ signupRateLimit: 0 });
  ({ apiKey } = await signup(server.url));
});
afterAll(() => server.stop());

const mql = <T = any>(op: string, json: unknown, key = apiKey, url = server.url) => http<T>(url, 'POST', `/api/mql/${op}`, { json, apiKey: key });

async function seed(collection: string, documents: unknown[]): Promise<void> {
  const res = await mql('insertMany', { collection, documents });
  expect(res.status, res.text).toBe(201);
}

async function createIndex(spec: Record<string, unknown>): Promise<void> {
  const res = await mql('createIndex', spec);
  expect(res.status, res.text).toBe(200);
  expect(res.body.created).toBe(true);
}

/** The documents and the plan stage (and index) a find used. */
async function explained(collection: string, filter: unknown, extra: Record<string, unknown> = {}): Promise<{ ids: unknown[]; stage: string; index?: string; keys: number }> {
  const res = await mql('find', { collection, filter, explain: true, ...extra });
  expect(res.status, res.text).toBe(200);
  const { plan, keysExamined } = res.body.explain;
  return { ids: res.body.documents.map((d: { _id: unknown }) => d._id), stage: plan.stage, index: plan.indexName, keys: keysExamined };
}

describe('partial indexes (manual: Partial Indexes)', () => {
  const restaurants = [
    { _id: 1, cuisine: 'Italian', name: 'Roma', rating: 9 },
    { _id: 2, cuisine: 'Italian', name: 'Napoli', rating: 6 },
    { _id: 3, cuisine: 'Italian', name: 'Pisa', rating: 1 },
    { _id: 4, cuisine: 'Italian', name: 'Siena' },
    { _id: 5, cuisine: 'Bakery', name: 'Morris Park', rating: 8 },
    { _id: 6, cuisine: 'Italian', name: 'Lucca', rating: '9' },
  ];

  it('holds only the documents its filter matches, and serves only queries that imply the filter', async () => {
    await seed('restaurants', restaurants);
    await createIndex({ collection: 'restaurants', keys: { cuisine: 1 }, partialFilterExpression: { rating: { $gt: 5 } } });

    // rating $gte 8 implies rating $gt 5: the index serves it (and holds Roma, Napoli, Morris Park only).
    const served = await explained('restaurants', { cuisine: 'Italian', rating: { $gte: 8 } });
    expect(served).toMatchObject({ ids: [1], stage: 'IXSCAN', index: 'cuisine_1' });
    expect(served.keys).toBe(2); // Roma and Napoli: Pisa (1), Siena (no rating) and Lucca ('9') are not in it

    // rating $lt 8 matches documents the index lacks (Pisa): a collection scan, every match.
    expect(await explained('restaurants', { cuisine: 'Italian', rating: { $lt: 8 } })).toMatchObject({ ids: [2, 3], stage: 'COLLSCAN' });
    // No condition on rating at all: the same.
    expect(await explained('restaurants', { cuisine: 'Italian' })).toMatchObject({ ids: [1, 2, 3, 4, 6], stage: 'COLLSCAN' });
    // Equality and $in operands that all satisfy the filter imply it.
    expect(await explained('restaurants', { cuisine: 'Italian', rating: 6 })).toMatchObject({ ids: [2], stage: 'IXSCAN' });
    expect(await explained('restaurants', { cuisine: 'Bakery', rating: { $in: [8, 9] } })).toMatchObject({ ids: [5], stage: 'IXSCAN' });
    // One operand below the bound, or of another type, does not.
    expect(await explained('restaurants', { cuisine: 'Italian', rating: { $in: [1, 9] } })).toMatchObject({ ids: [1, 3], stage: 'COLLSCAN' });
    expect(await explained('restaurants', { cuisine: 'Italian', rating: '9' })).toMatchObject({ ids: [6], stage: 'COLLSCAN' });
    // A query $or whose every branch implies the filter.
    expect(await explained('restaurants', { cuisine: 'Italian', $or: [{ rating: 9 }, { rating: { $gt: 7 } }] })).toMatchObject({ ids: [1], stage: 'IXSCAN' });
    expect(await explained('restaurants', { cuisine: 'Italian', $or: [{ rating: 9 }, { rating: { $gt: 3 } }] })).toMatchObject({ ids: [1, 2], stage: 'COLLSCAN' });

    // Writes keep membership: a document rated up joins the index, one rated down leaves it.
    expect((await mql('updateOne', { collection: 'restaurants', filter: { _id: 3 }, update: { $set: { rating: 10 } } })).status).toBe(200);
    expect((await mql('updateOne', { collection: 'restaurants', filter: { _id: 1 }, update: { $set: { rating: 2 } } })).status).toBe(200);
    const after = await explained('restaurants', { cuisine: 'Italian', rating: { $gte: 6 } });
    expect(after).toMatchObject({ ids: [2, 3], stage: 'IXSCAN', keys: 2 });
  });

  it('serves a query with a non-null condition on a filter field other than the key (manual: contacts)', async () => {
    await seed('contacts', [
      { _id: 1, name: 'xyz', email: 'a@b.org' },
      { _id: 2, name: 'xyz', email: 'a@b.com' },
      { _id: 3, name: 'xyz' },
      { _id: 4, name: 'xyz', email: null },
    ]);
    await createIndex({ collection: 'contacts', keys: { name: 1 }, partialFilterExpression: { email: { $exists: true } } });
    expect(await explained('contacts', { name: 'xyz', email: { $regex: '\\.org$' } })).toMatchObject({ ids: [1], stage: 'IXSCAN', index: 'name_1' });
    expect(await explained('contacts', { name: 'xyz', email: { $exists: false } })).toMatchObject({ ids: [3], stage: 'COLLSCAN' });
    // {email: null} also matches a missing email: not implied.
    expect(await explained('contacts', { name: 'xyz', email: null })).toMatchObject({ ids: [3, 4], stage: 'COLLSCAN' });
    expect(await explained('contacts', { name: 'xyz', email: { $ne: null } })).toMatchObject({ ids: [1, 2], stage: 'IXSCAN' });
  });

  it('applies a unique constraint to the documents in the index only (manual: users)', async () => {
    await seed('users', [
      { _id: 1, username: 'david', age: 29 },
      { _id: 2, username: 'amanda', age: 35 },
      { _id: 3, username: 'rajiv', age: 57 },
    ]);
    await createIndex({ collection: 'users', keys: { username: 1 }, unique: true, partialFilterExpression: { age: { $gte: 21 } } });
    for (const doc of [{ username: 'david', age: 27 }, { username: 'amanda', age: 25 }, { username: 'rajiv', age: 32 }]) {
      const res = await mql('insertOne', { collection: 'users', document: doc });
      expect(res.status, res.text).toBe(409);
      expect(res.body.error.code).toBe('DUPLICATE_KEY');
    }
    for (const doc of [{ _id: 4, username: 'david', age: 20 }, { _id: 5, username: 'amanda' }, { _id: 6, username: 'rajiv', age: null }]) {
      expect((await mql('insertOne', { collection: 'users', document: doc })).status).toBe(201);
    }
    // An update that would bring a duplicate into the index is refused and changes nothing.
    const refused = await mql('updateOne', { collection: 'users', filter: { _id: 4 }, update: { $set: { age: 40 } } });
    expect(refused.status, refused.text).toBe(409);
    expect((await mql('findOne', { collection: 'users', filter: { _id: 4 } })).body.document).toEqual({ _id: 4, username: 'david', age: 20 });
    // Once the member leaves, the name is free.
    expect((await mql('updateOne', { collection: 'users', filter: { _id: 1 }, update: { $set: { age: 18 } } })).status).toBe(200);
    expect((await mql('updateOne', { collection: 'users', filter: { _id: 4 }, update: { $set: { age: 40 } } })).status).toBe(200);
    expect((await mql('countDocuments', { collection: 'users', filter: { username: 'david', age: { $gte: 21 } } })).body.count).toBe(1);
  });

  it('builds from existing documents, refusing duplicates among members only', async () => {
    await seed('late', [
      { _id: 1, code: 'a', active: true },
      { _id: 2, code: 'a', active: false },
      { _id: 3, code: 'b', active: true },
    ]);
    await createIndex({ collection: 'late', keys: { code: 1 }, unique: true, partialFilterExpression: { active: true } });
    expect(await explained('late', { active: true, code: { $gte: 'a' } })).toMatchObject({ ids: [1, 3], stage: 'IXSCAN', keys: 2 });
    await seed('late2', [
      { _id: 1, code: 'a', active: true },
      { _id: 2, code: 'a', active: true },
    ]);
    const failed = await mql('createIndex', { collection: 'late2', keys: { code: 1 }, unique: true, partialFilterExpression: { active: true } });
    expect(failed.status, failed.text).toBe(409);
    expect(failed.body.error.code).toBe('DUPLICATE_KEY');
    expect((await mql('listIndexes', { collection: 'late2' })).body.indexes.map((i: { name: string }) => i.name)).toEqual(['_id_']);
  });

  it('takes $and, $or, $in and $type in its filter, and lists the filter as written', async () => {
    await seed('ops', [
      { _id: 1, k: 1, kind: 'a', n: 5, at: { $date: '2024-01-01T00:00:00Z' } },
      { _id: 2, k: 1, kind: 'b', n: 'x', at: { $date: '1990-01-01T00:00:00Z' } },
      { _id: 3, k: 1, kind: 'c', n: 7 },
    ]);
    const partialFilterExpression = { $and: [{ $or: [{ kind: { $in: ['a', 'b'] } }, { n: { $type: 'string' } }] }, { at: { $gt: { $date: '2000-01-01T00:00:00Z' } } }] };
    await createIndex({ collection: 'ops', keys: { k: 1 }, name: 'k_recent', partialFilterExpression });
    const listed = (await mql('listIndexes', { collection: 'ops' })).body.indexes;
    expect(listed[1]).toEqual({ name: 'k_recent', key: { k: 1 }, partialFilterExpression });
    expect(await explained('ops', { k: 1, kind: 'a', at: { $gte: { $date: '2020-01-01T00:00:00Z' } } })).toMatchObject({ ids: [1], stage: 'IXSCAN', keys: 1 });
    expect(await explained('ops', { k: 1, kind: 'a' })).toMatchObject({ ids: [1], stage: 'COLLSCAN' });
  });

  it('allows several partial indexes on one key pattern when their filters differ, each dropped by name', async () => {
    await seed('multi', [{ _id: 1, k: 1, t: 'x' }, { _id: 2, k: 1, t: 'y' }]);
    await createIndex({ collection: 'multi', keys: { k: 1 }, name: 'k_x', partialFilterExpression: { t: 'x' } });
    await createIndex({ collection: 'multi', keys: { k: 1 }, name: 'k_y', partialFilterExpression: { t: 'y' } });
    expect(await explained('multi', { k: 1, t: 'y' })).toMatchObject({ ids: [2], stage: 'IXSCAN', index: 'k_y' });
    // The same filter again under another name, or a plain index on the pattern: one exists already.
    expect((await mql('createIndex', { collection: 'multi', keys: { k: 1 }, name: 'k_x2', partialFilterExpression: { t: 'x' } })).status).toBe(409);
    // The same spec and name again: nothing to do.
    expect((await mql('createIndex', { collection: 'multi', keys: { k: 1 }, name: 'k_x', partialFilterExpression: { t: 'x' } })).body).toEqual({ name: 'k_x', created: false });
    const ambiguous = await mql('dropIndex', { collection: 'multi', index: { k: 1 } });
    expect(ambiguous.status, ambiguous.text).toBe(409);
    expect(ambiguous.body.error.message).toMatch(/drop one by name/);
    expect((await mql('dropIndex', { collection: 'multi', index: 'k_x' })).body).toEqual({ dropped: 'k_x' });
    expect((await mql('dropIndex', { collection: 'multi', index: { k: 1 } })).body).toEqual({ dropped: 'k_y' });
  });
});

describe('sparse indexes (manual: Sparse Indexes)', () => {
  it('hold documents with the field (null included), and serve only queries that need it', async () => {
    await seed('scores', [
      { _id: 1, userid: 'newbie' },
      { _id: 2, userid: 'abby', score: 82 },
      { _id: 3, userid: 'nina', score: 90 },
      { _id: 4, userid: 'zed', score: null },
    ]);
    await createIndex({ collection: 'scores', keys: { score: 1 }, sparse: true });
    expect(await explained('scores', { score: { $lt: 90 } })).toMatchObject({ ids: [2], stage: 'IXSCAN', index: 'score_1' });
    expect(await explained('scores', { score: { $exists: true } }, { sort: { score: 1 } })).toMatchObject({ ids: [4, 2, 3], stage: 'IXSCAN', keys: 3 });
    // {score: null} matches the missing score too: not from the index.
    expect(await explained('scores', { score: null })).toMatchObject({ ids: [1, 4], stage: 'COLLSCAN' });
    // A sort alone would leave out newbie: the manual's example answers all four.
    const sorted = await explained('scores', {}, { sort: { score: -1 } });
    expect(sorted).toMatchObject({ ids: [3, 2, 1, 4], stage: 'COLLSCAN' });
  });

  it('with unique, allow many documents without the field but not two with one value', async () => {
    await seed('sparseu', [{ _id: 1, x: 1 }, { _id: 2 }]);
    await createIndex({ collection: 'sparseu', keys: { x: 1 }, unique: true, sparse: true });
    expect((await mql('insertMany', { collection: 'sparseu', documents: [{ _id: 3 }, { _id: 4, y: 1 }] })).status).toBe(201);
    const dup = await mql('insertOne', { collection: 'sparseu', document: { _id: 5, x: 1 } });
    expect(dup.status, dup.text).toBe(409);
    // Null is a value: one document may hold it, a second may not.
    expect((await mql('insertOne', { collection: 'sparseu', document: { _id: 6, x: null } })).status).toBe(201);
    expect((await mql('insertOne', { collection: 'sparseu', document: { _id: 7, x: null } })).status).toBe(409);
    expect((await mql('countDocuments', { collection: 'sparseu' })).body.count).toBe(5);
  });

  it('compound: hold a document with any of the fields', async () => {
    await seed('csparse', [{ _id: 1, a: 1 }, { _id: 2, b: 2 }, { _id: 3, c: 3 }]);
    await createIndex({ collection: 'csparse', keys: { a: 1, b: 1 }, sparse: true });
    expect(await explained('csparse', { b: { $gt: 0 } }, { sort: { a: 1, b: 1 } })).toMatchObject({ ids: [2], stage: 'IXSCAN', keys: 2 });
    expect(await explained('csparse', { a: { $exists: false } })).toMatchObject({ ids: [2, 3], stage: 'COLLSCAN' });
  });
});

describe('sparse and partial index options: errors change nothing', () => {
  const cases: Array<[string, Record<string, unknown>, number, RegExp]> = [
    ['both sparse and a partial filter', { keys: { a: 1 }, sparse: true, partialFilterExpression: { a: 1 } }, 400, /cannot mix "partialFilterExpression" and "sparse"/],
    ['a non-boolean sparse', { keys: { a: 1 }, sparse: 'yes' }, 400, /sparse/],
    ['a partial filter that is not an object', { keys: { a: 1 }, partialFilterExpression: 3 }, 400, /partialFilterExpression/],
    ['an empty partial filter', { keys: { a: 1 }, partialFilterExpression: {} }, 400, /must not be empty/],
    ['$ne in a partial filter', { keys: { a: 1 }, partialFilterExpression: { a: { $ne: 1 } } }, 400, /not supported in partial index: a: \{\$ne/],
    ['$exists: false in a partial filter', { keys: { a: 1 }, partialFilterExpression: { a: { $exists: false } } }, 400, /only \$exists: true/],
    ['$regex in a partial filter', { keys: { a: 1 }, partialFilterExpression: { a: { $regex: 'x' } } }, 400, /not supported in partial index/],
    ['$nor in a partial filter', { keys: { a: 1 }, partialFilterExpression: { $nor: [{ a: 1 }] } }, 400, /not supported in partial index: \$nor/],
    ['$expr in a partial filter', { keys: { a: 1 }, partialFilterExpression: { $expr: true } }, 400, /not supported in partial index: \$expr/],
    ['a bad $type in a partial filter', { keys: { a: 1 }, partialFilterExpression: { a: { $type: 'nonsense' } } }, 400, /type/i],
    ['a sparse _id index', { keys: { _id: 1 }, sparse: true }, 400, /_id index/],
  ];
  for (const [what, spec, status, message] of cases) {
    it(`refuses ${what}`, async () => {
      await seed('errs', [{ a: 1 }]);
      const res = await mql('createIndex', { collection: 'errs', ...spec });
      expect(res.status, res.text).toBe(status);
      expect(res.body.error.message).toMatch(message);
      expect((await mql('listIndexes', { collection: 'errs' })).body.indexes.map((i: { name: string }) => i.name)).toEqual(['_id_']);
    });
  }
});

describe('sparse and partial indexes after a restart', () => {
  it('keep their options, members and plans', async () => {
    const own = await startServer();
    let again: RunningServer | undefined;
    try {
      const { apiKey: key } = await signup(own.url);
      const call = (url: string, op: string, json: unknown) => mql(op, json, key, url);
      expect((await call(own.url, 'insertMany', { collection: 'r', documents: [{ _id: 1, a: 1, on: true }, { _id: 2, a: 1, on: false }, { _id: 3 }] })).status).toBe(201);
      expect((await call(own.url, 'createIndex', { collection: 'r', keys: { a: 1 }, unique: true, partialFilterExpression: { on: true } })).status).toBe(200);
      expect((await call(own.url, 'createIndex', { collection: 'r', keys: { b: 1 }, sparse: true })).status).toBe(200);
      await own.stop({ keepData: true });
      again = await startServer({ dataDir: own.dataDir });
      const listed = (await call(again.url, 'listIndexes', { collection: 'r' })).body.indexes;
      expect(listed.slice(1)).toEqual([
        { name: 'a_1', key: { a: 1 }, unique: true, partialFilterExpression: { on: true } },
        { name: 'b_1', key: { b: 1 }, sparse: true },
      ]);
      const found = await call(again.url, 'find', { collection: 'r', filter: { a: 1, on: true }, explain: true });
      expect(found.body.documents.map((d: { _id: number }) => d._id)).toEqual([1]);
      expect(found.body.explain.plan).toMatchObject({ stage: 'IXSCAN', indexName: 'a_1', isPartial: true });
      expect((await call(again.url, 'insertOne', { collection: 'r', document: { _id: 4, a: 1, on: true } })).status).toBe(409);
      expect((await call(again.url, 'insertOne', { collection: 'r', document: { _id: 5, a: 1 } })).status).toBe(201);
    } finally {
      await again?.stop();
      if (again === undefined) await own.stop();
    }
  });
});

describe('hint (manual: cursor.hint)', () => {
  beforeAll(async () => {
    await seed('hinted', [
      { _id: 1, a: 1, b: 'x', score: 5 },
      { _id: 2, a: 1, b: 'y' },
      { _id: 3, a: 2, b: 'x', score: 7 },
      { _id: 4, a: 2, b: 'y', score: 1, on: true },
    ]);
    await createIndex({ collection: 'hinted', keys: { a: 1 } });
    await createIndex({ collection: 'hinted', keys: { b: 1, a: -1 } });
    await createIndex({ collection: 'hinted', keys: { score: 1 }, sparse: true });
    await createIndex({ collection: 'hinted', keys: { a: 1, b: 1 }, name: 'a_b_on', partialFilterExpression: { on: true } });
  });

  it('reads the index it names, by name or key pattern, whatever the planner would pick', async () => {
    expect(await explained('hinted', { a: 1, b: 'x' })).toMatchObject({ ids: [1], stage: 'IXSCAN', index: 'b_1_a_-1' });
    expect(await explained('hinted', { a: 1, b: 'x' }, { hint: 'a_1' })).toMatchObject({ ids: [1], stage: 'IXSCAN', index: 'a_1', keys: 2 });
    expect(await explained('hinted', { a: 1, b: 'x' }, { hint: { a: 1 } })).toMatchObject({ ids: [1], stage: 'IXSCAN', index: 'a_1' });
    // No condition on the hinted index's fields: the whole index, in its order.
    expect(await explained('hinted', { score: { $gt: 4 } }, { hint: { b: 1, a: -1 } })).toMatchObject({ ids: [3, 1], stage: 'IXSCAN', keys: 4 });
    // The _id index, and $natural order (the _id order here), forward and backward.
    expect(await explained('hinted', { a: 2 }, { hint: '_id_' })).toMatchObject({ ids: [3, 4], stage: 'COLLSCAN' });
    expect(await explained('hinted', { a: 2 }, { hint: { _id: 1 } })).toMatchObject({ ids: [3, 4], stage: 'COLLSCAN' });
    expect(await explained('hinted', {}, { hint: { $natural: -1 } })).toMatchObject({ ids: [4, 3, 2, 1], stage: 'COLLSCAN' });
  });

  it('reads a hinted sparse index even where it misses documents, as MongoDB does', async () => {
    // The manual (Sparse Indexes): with the hint, the sort answers only the documents with a score.
    expect(await explained('hinted', {}, { sort: { score: -1 }, hint: { score: 1 } })).toMatchObject({ ids: [3, 1, 4], stage: 'IXSCAN' });
    expect(await explained('hinted', {}, { sort: { score: -1 } })).toMatchObject({ ids: [3, 1, 4, 2], stage: 'COLLSCAN' });
    expect((await mql('countDocuments', { collection: 'hinted', hint: 'score_1' })).body).toEqual({ count: 3 });
    expect((await mql('countDocuments', { collection: 'hinted' })).body).toEqual({ count: 4 });
  });

  it('takes a partial index only for a query that implies its filter', async () => {
    expect(await explained('hinted', { a: 2, on: true }, { hint: 'a_b_on' })).toMatchObject({ ids: [4], stage: 'IXSCAN', index: 'a_b_on' });
    const refused = await mql('find', { collection: 'hinted', filter: { a: 2 }, hint: 'a_b_on' });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'QUERY_ERROR' });
    expect(refused.body.error.message).toMatch(/hint provided does not correspond to an existing index.*partial/);
  });

  it('refuses a hint no index fits, and a malformed one, changing nothing', async () => {
    const bad: Array<[unknown, string, RegExp]> = [
      ['nope_1', 'QUERY_ERROR', /hint provided does not correspond to an existing index: "nope_1"/],
      [{ c: 1 }, 'QUERY_ERROR', /does not correspond to an existing index/],
      [{ a: -1 }, 'QUERY_ERROR', /does not correspond to an existing index/],
      [{ $natural: 2 }, 'VALIDATION_FAILED', /\$natural/],
      [{ a: 'text' }, 'VALIDATION_FAILED', /must be 1 or -1/],
      ['', 'VALIDATION_FAILED', /hint must be/],
      [5, 'VALIDATION_FAILED', /hint/],
    ];
    for (const [hintSpec, code, message] of bad) {
      for (const [op, extra] of [
        ['find', { filter: {} }],
        ['countDocuments', { filter: {} }],
        ['distinct', { key: 'a', filter: {} }],
        ['aggregate', { pipeline: [{ $match: {} }] }],
        ['updateMany', { filter: {}, update: { $set: { touched: true } } }],
        ['deleteMany', { filter: {} }],
        ['findOneAndUpdate', { filter: {}, update: { $set: { touched: true } } }],
        ['findOneAndDelete', { filter: {} }],
        ['replaceOne', { filter: {}, replacement: { touched: true } }],
      ] as const) {
        const res = await mql(op, { collection: 'hinted', ...extra, hint: hintSpec });
        expect(res.status, `${op} ${JSON.stringify(hintSpec)}: ${res.text}`).toBe(400);
        expect(res.body.error.code, `${op} ${JSON.stringify(hintSpec)}: ${res.text}`).toBe(code);
        expect(res.body.error.message, `${op} ${JSON.stringify(hintSpec)}`).toMatch(message);
      }
    }
    expect((await mql('countDocuments', { collection: 'hinted', filter: { touched: true } })).body).toEqual({ count: 0 });
    expect((await mql('countDocuments', { collection: 'hinted' })).body).toEqual({ count: 4 });
  });

  it('steers updates, deletes, distinct and aggregate alike', async () => {
    await seed('hinted2', [
      { _id: 1, a: 1, b: 'x', score: 5 },
      { _id: 2, a: 1, b: 'y' },
      { _id: 3, a: 2, b: 'x', score: 7 },
    ]);
    await createIndex({ collection: 'hinted2', keys: { score: 1 }, sparse: true });
    await createIndex({ collection: 'hinted2', keys: { a: 1 } });
    // The hinted sparse index misses _id 2: an update through it does not see it (MongoDB alike).
    expect((await mql('updateMany', { collection: 'hinted2', filter: {}, update: { $inc: { n: 1 } }, hint: { score: 1 } })).body).toEqual({ matchedCount: 2, modifiedCount: 2 });
    expect((await mql('distinct', { collection: 'hinted2', key: 'a', filter: {}, hint: 'score_1' })).body).toEqual({ values: [1, 2] });
    expect((await mql('distinct', { collection: 'hinted2', key: 'b', filter: { a: 1 }, hint: 'a_1' })).body).toEqual({ values: ['x', 'y'] });
    const agg = await mql('aggregate', { collection: 'hinted2', pipeline: [{ $group: { _id: null, n: { $sum: 1 } } }], hint: { score: 1 } });
    expect(agg.body.documents).toEqual([{ _id: null, n: 2 }]);
    const sorted = await mql('findOneAndUpdate', { collection: 'hinted2', filter: { a: 1 }, update: { $set: { first: true } }, sort: { _id: -1 }, hint: 'a_1' });
    expect(sorted.body.document._id).toBe(2);
    expect((await mql('deleteMany', { collection: 'hinted2', filter: { a: { $gte: 1 } }, hint: 'score_1' })).body).toEqual({ deletedCount: 2 });
    expect((await mql('find', { collection: 'hinted2', filter: {} })).body.documents.map((d: { _id: number }) => d._id)).toEqual([2]);
  });
});
