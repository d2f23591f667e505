// POST /api/mql/bulkWrite over HTTP on a real server: the manual's db.collection.bulkWrite()
// example, ordered and unordered write errors (what was applied, what was not, the error's
// status and details), operations that see the ones before them, upserts, refusals that write
// nothing, and a randomized comparison with the same operations sent one by one to their own
// endpoints (whose semantics the other suites check against mingo and the manual). A SIGKILL
// right after an answer is in test/crash/docs.crash.test.ts's style below.
import { afterAll, describe, expect, it } from 'vitest';
import { seededRandom } from '../helpers/random.js';
import { http, serverForFile, signup, startServer } from '../helpers/server.js';
import { spawnServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const all = (collection: string): Promise<any[]> => file.all(collection);

const PIZZAS = [
  { _id: 0, type: 'pepperoni', size: 'small', price: 4 },
  { _id: 1, type: 'cheese', size: 'medium', price: 7 },
  { _id: 2, type: 'vegan', size: 'large', price: 8 },
];

async function bulk(collection: string, operations: unknown[], ordered?: boolean) {
  return mql('bulkWrite', { collection, operations, ...(ordered === undefined ? {} : { ordered }) });
}

describe('bulkWrite: the manual', () => {
  it('applies the pizzas example in order and answers its counts and ids', async () => {
    const c = await file.seed(PIZZAS, 'pizzas');
    const res = await bulk(c, [
      { insertOne: { document: { _id: 3, type: 'beef', size: 'medium', price: 6 } } },
      { insertOne: { document: { _id: 4, type: 'sausage', size: 'large', price: 10 } } },
      { updateOne: { filter: { type: 'cheese' }, update: { $set: { price: 8 } } } },
      { deleteOne: { filter: { type: 'pepperoni' } } },
      { replaceOne: { filter: { type: 'vegan' }, replacement: { type: 'tofu', size: 'small', price: 4 } } },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ insertedCount: 2, matchedCount: 2, modifiedCount: 2, deletedCount: 1, upsertedCount: 0, insertedIds: { 0: 3, 1: 4 }, upsertedIds: {} });
    expect(await all(c)).toEqual([
      { _id: 1, type: 'cheese', size: 'medium', price: 8 },
      { _id: 2, type: 'tofu', size: 'small', price: 4 },
      { _id: 3, type: 'beef', size: 'medium', price: 6 },
      { _id: 4, type: 'sausage', size: 'large', price: 10 },
    ]);
  });

  it('reports upserts by the index of their operation, with a generated _id where none is given', async () => {
    const c = await file.seed(PIZZAS, 'pizzas');
    const res = await bulk(c, [
      { updateOne: { filter: { type: 'margherita' }, update: { $set: { price: 5 } }, upsert: true } },
      { replaceOne: { filter: { _id: 9 }, replacement: { type: 'marinara', price: 3 }, upsert: true } },
      { updateMany: { filter: { price: { $gte: 7 } }, update: { $inc: { price: 1 } } } },
      { updateOne: { filter: { type: 'vegan' }, update: { $set: { price: 9 } }, upsert: true } },
    ]);
    expect(res.status, res.text).toBe(200);
    const generated = res.body.upsertedIds[0];
    expect(generated).toMatch(/^[0-9a-f]{24}$/);
    // updateMany matched cheese (7) and vegan (8); the last updateOne matched vegan again (now 9: unchanged).
    expect(res.body).toEqual({ insertedCount: 0, matchedCount: 3, modifiedCount: 2, deletedCount: 0, upsertedCount: 2, insertedIds: {}, upsertedIds: { 0: generated, 1: 9 } });
    const docs = await all(c);
    expect(docs.find((d) => d.type === 'margherita')).toEqual({ _id: generated, type: 'margherita', price: 5 });
    expect(docs.find((d) => d._id === 9)).toEqual({ _id: 9, type: 'marinara', price: 3 });
    expect(docs.find((d) => d._id === 2)).toEqual({ _id: 2, type: 'vegan', size: 'large', price: 9 });
  });

  it('lets each operation see the ones before it, and creates the collection on first insert', async () => {
    const c = `fresh${Date.now()}`;
    const res = await bulk(c, [
      { insertOne: { document: { _id: 'a', n: 1 } } },
      { updateOne: { filter: { _id: 'a' }, update: { $inc: { n: 10 } } } },
      { insertOne: { document: { _id: 'b', n: 2 } } },
      { deleteOne: { filter: { n: 11 } } },
      { updateMany: { filter: {}, update: { $set: { seen: true } } } },
    ]);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ insertedCount: 2, matchedCount: 2, modifiedCount: 2, deletedCount: 1, insertedIds: { 0: 'a', 2: 'b' } });
    expect(await all(c)).toEqual([{ _id: 'b', n: 2, seen: true }]);
  });
});

describe('bulkWrite: write errors', () => {
  const ops = [
    { insertOne: { document: { _id: 10, type: 'a' } } },
    { insertOne: { document: { _id: 1, type: 'duplicate' } } },
    { insertOne: { document: { _id: 11, type: 'b' } } },
    { updateOne: { filter: { _id: 2 }, update: { $set: { price: 1 } } } },
  ];

  it('ordered (the default): stops at the first error, keeps what came before, answers 409 with the details', async () => {
    const c = await file.seed(PIZZAS, 'pizzas');
    const res = await bulk(c, ops);
    expect(res.status, res.text).toBe(409);
    expect(res.body.error.code).toBe('DUPLICATE_KEY');
    expect(res.body.error.message).toContain('bulkWrite stopped at operations.1: E11000 duplicate key error');
    expect(res.body.error.message).toContain('the 1 operation before it was applied, none after it');
    expect(res.body.error.details.writeErrors).toEqual([expect.objectContaining({ index: 1, code: 'DUPLICATE_KEY' })]);
    expect(res.body.error.details.result).toEqual({ insertedCount: 1, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0, insertedIds: { 0: 10 }, upsertedIds: {} });
    const docs = await all(c);
    expect(docs.map((d) => d._id)).toEqual([0, 1, 2, 10]);
    expect(docs.find((d) => d._id === 1).type).toBe('cheese');
    expect(docs.find((d) => d._id === 2).price).toBe(8);
  });

  it('unordered: applies every operation that can be, and lists each failure', async () => {
    const c = await file.seed(PIZZAS, 'pizzas');
    const res = await bulk(c, [...ops, { insertOne: { document: { _id: 0 } } }], false);
    expect(res.status, res.text).toBe(409);
    expect(res.body.error.message).toContain('bulkWrite: 2 of 5 operations failed, the others were applied; operations.1: E11000');
    expect(res.body.error.details.writeErrors.map((e: { index: number }) => e.index)).toEqual([1, 4]);
    expect(res.body.error.details.result).toMatchObject({ insertedCount: 2, matchedCount: 1, modifiedCount: 1, insertedIds: { 0: 10, 2: 11 } });
    const docs = await all(c);
    expect(docs.map((d) => d._id)).toEqual([0, 1, 2, 10, 11]);
    expect(docs.find((d) => d._id === 2).price).toBe(1);
  });

  it('a failure while applying an update or a unique index is the write error of that operation', async () => {
    const c = await file.seed([{ _id: 1, email: 'a@x' }, { _id: 2, email: 'b@x' }], 'uniq');
    expect((await mql('createIndex', { collection: c, keys: { email: 1 }, unique: true })).status).toBe(200);
    const res = await bulk(c, [
      { updateOne: { filter: { _id: 1 }, update: { $set: { name: 'A' } } } },
      { updateOne: { filter: { _id: 2 }, update: { $set: { email: 'a@x' } } } },
      { updateOne: { filter: { _id: 1 }, update: { $set: { _id: 5 } } } },
      { insertOne: { document: { _id: 3, email: 'c@x' } } },
    ], false);
    expect(res.status, res.text).toBe(409);
    const errors = res.body.error.details.writeErrors;
    expect(errors.map((e: { index: number; code: string }) => [e.index, e.code])).toEqual([[1, 'DUPLICATE_KEY'], [2, 'QUERY_ERROR']]);
    expect(errors[1].message).toContain("would modify the immutable field '_id'");
    expect(await all(c)).toEqual([{ _id: 1, email: 'a@x', name: 'A' }, { _id: 2, email: 'b@x' }, { _id: 3, email: 'c@x' }]);
  });

  it('an insert that repeats an _id of the same request fails alone, the others are written', async () => {
    const c = `dups${Date.now()}`;
    const res = await bulk(c, [{ insertOne: { document: { _id: 1 } } }, { insertOne: { document: { _id: 2 } } }, { insertOne: { document: { _id: 1, again: true } } }, { insertOne: { document: { _id: 3 } } }], false);
    expect(res.status, res.text).toBe(409);
    expect(res.body.error.details.writeErrors.map((e: { index: number }) => e.index)).toEqual([2]);
    expect(await all(c)).toEqual([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
  });
});

describe('bulkWrite: refusals write nothing', () => {
  const cases: Array<[string, unknown, string, string]> = [
    ['an empty list', [], 'VALIDATION_FAILED', 'operations must not be empty'],
    ['an operation of two kinds', [{ insertOne: { document: {} }, deleteOne: { filter: {} } }], 'VALIDATION_FAILED', 'operations.1 must have exactly one of insertOne, updateOne'],
    ['an unknown kind', [{ upsertOne: { filter: {} } }], 'VALIDATION_FAILED', 'operations.1 must have exactly one of insertOne, updateOne, updateMany, replaceOne, deleteOne, deleteMany (found upsertOne)'],
    ['a missing field', [{ updateOne: { filter: {} } }], 'VALIDATION_FAILED', 'operations.1.updateOne.update is required'],
    ['an unknown field', [{ deleteMany: { filter: {}, sort: { a: 1 } } }], 'VALIDATION_FAILED', 'operations.1.deleteMany has an unknown field "sort"'],
    ['an unknown query operator', [{ deleteOne: { filter: { a: { $foo: 1 } } } }], 'QUERY_ERROR', 'operations.1.deleteOne: unknown operator: $foo'],
    ['an unknown update operator', [{ updateMany: { filter: {}, update: { $frob: { a: 1 } } } }], 'QUERY_ERROR', 'operations.1.updateMany: '],
    ['a replacement with operators', [{ replaceOne: { filter: {}, replacement: { $set: { a: 1 } } } }], 'QUERY_ERROR', 'operations.1.replaceOne: the replacement document must not contain update operators'],
    ['a bad _id', [{ insertOne: { document: { _id: null } } }], 'VALIDATION_FAILED', 'operations.1.insertOne: _id must be a string, a number or a boolean'],
    ['a bad hint', [{ updateOne: { filter: {}, update: { $set: { a: 1 } }, hint: 'nope' } }], 'QUERY_ERROR', 'operations.1.updateOne: hint provided does not correspond to an existing index: "nope" (no such index)'],
    ['a sort on updateMany', [{ updateMany: { filter: {}, update: { $set: { a: 1 } }, sort: { a: 1 } } }], 'VALIDATION_FAILED', 'operations.1.updateMany has an unknown field "sort"'],
  ];
  it.each(cases)('%s: 400 naming the operation, even after a valid one', async (_name, second, code, message) => {
    const c = await file.seed(PIZZAS, 'pizzas');
    const operations = Array.isArray(second) && second.length === 0 ? [] : [{ insertOne: { document: { _id: 99 } } }, ...(second as unknown[])];
    const res = await bulk(c, operations);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe(code);
    expect(res.body.error.message).toContain(message);
    expect(await all(c)).toEqual(PIZZAS);
  });

  it('a bad collection name, a non-boolean ordered and too many operations', async () => {
    const c = await file.seed(PIZZAS, 'pizzas');
    const one = { insertOne: { document: { x: 1 } } };
    for (const [body, message] of [
      [{ collection: 'a$b', operations: [one] }, 'collection'],
      [{ collection: c, operations: [one], ordered: 'yes' }, 'ordered'],
      [{ collection: c, operations: Array.from({ length: 10_001 }, () => one) }, 'at most 10000 operations per bulkWrite'],
      [{ collection: c, operations: [one], upsert: true }, 'upsert'],
    ] as const) {
      const res = await mql('bulkWrite', body);
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.message).toContain(message);
    }
    expect(await all(c)).toEqual(PIZZAS);
  });

  it('past the storage quota: 507, nothing written', async () => {
    const server = await startServer({ quotaBytes: 64 * 1024 });
    try {
      const { apiKey } = await signup(server.url);
      const big = 'x'.repeat(40 * 1024);
      const res = await http(server.url, 'POST', '/api/mql/bulkWrite', { apiKey, json: { collection: 'q', operations: [{ insertOne: { document: { _id: 1 } } }, { insertOne: { document: { _id: 2, big } } }, { insertOne: { document: { _id: 3, big } } }] } });
      expect(res.status, res.text).toBe(507);
      expect(res.body.error.code).toBe('QUOTA_EXCEEDED');
      const found = await http(server.url, 'POST', '/api/mql/find', { apiKey, json: { collection: 'q' } });
      expect(found.body.documents).toEqual([]);
    } finally {
      await server.stop();
    }
  });
});

// ---- The same operations one by one --------------------------------------------------------------

type Op = Record<string, Record<string, unknown>>;

function randomOperation(rand: () => number): Op {
  const int = (n: number): number => Math.floor(rand() * n);
  const filter = (): Record<string, unknown> => [{ a: int(4) }, { _id: int(12) }, { a: { $gte: int(4) } }, { tags: 'x' }, {}][int(5)]!;
  const update = (): unknown =>
    [{ $inc: { a: 1 } }, { $set: { b: int(3) } }, { $push: { tags: ['x', 'y'][int(2)] } }, { $unset: { b: '' } }, [{ $set: { a: { $add: ['$a', 2] } } }]][int(5)];
  switch (int(6)) {
    case 0:
      return { insertOne: { document: rand() < 0.8 ? { _id: int(12), a: int(4) } : { a: int(4) } } };
    case 1:
      return { updateOne: { filter: filter(), update: update(), ...(rand() < 0.3 ? { upsert: true } : {}) } };
    case 2:
      return { updateMany: { filter: filter(), update: update(), ...(rand() < 0.2 ? { upsert: true } : {}) } };
    case 3:
      return { replaceOne: { filter: filter(), replacement: { a: int(4), replaced: true }, ...(rand() < 0.3 ? { upsert: true } : {}) } };
    case 4:
      return { deleteOne: { filter: filter() } };
    default:
      return { deleteMany: { filter: filter() } };
  }
}

/** Sends one operation to its own endpoint: the counts it adds, or the error code it fails with. */
async function applyOne(collection: string, op: Op): Promise<{ counts: Record<string, number>; upserted?: unknown; inserted?: unknown } | { error: string }> {
  const [kind, args] = Object.entries(op)[0]!;
  const res = await mql(kind, { collection, ...args });
  if (res.status >= 300) return { error: res.body.error.code };
  switch (kind) {
    case 'insertOne':
      return { counts: { insertedCount: 1 }, inserted: res.body.insertedId };
    case 'deleteOne':
    case 'deleteMany':
      return { counts: { deletedCount: res.body.deletedCount } };
    default:
      return { counts: { matchedCount: res.body.matchedCount, modifiedCount: res.body.modifiedCount, upsertedCount: res.body.upsertedId === undefined ? 0 : 1 }, upserted: res.body.upsertedId };
  }
}

describe('bulkWrite: the same as each operation sent alone', () => {
  it('60 random lists of 15 operations, ordered and unordered', async () => {
    const rand = seededRandom(20261126);
    const start = Array.from({ length: 8 }, (_, i) => ({ _id: i, a: i % 4, ...(i % 3 === 0 ? { tags: ['x'] } : {}) }));
    for (let round = 0; round < 60; round++) {
      const ordered = round % 2 === 0;
      const operations = Array.from({ length: 15 }, () => randomOperation(rand));
      // Generated _ids differ between the two collections: give every insert and replacement upsert a fixed one.
      const bulkColl = await file.seed(start, 'bulk');
      const aloneColl = await file.seed(start, 'alone');
      const res = await bulk(bulkColl, operations, ordered);
      const expected: Record<string, number> = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0 };
      const failures: Array<[number, string]> = [];
      const insertedIds: Record<number, unknown> = {};
      for (let i = 0; i < operations.length; i++) {
        const r = await applyOne(aloneColl, operations[i]!);
        if ('error' in r) {
          failures.push([i, r.error]);
          if (ordered) break;
          continue;
        }
        for (const [k, v] of Object.entries(r.counts)) expected[k]! += v;
        if (r.inserted !== undefined && operations[i]!.insertOne!.document!.hasOwnProperty('_id')) insertedIds[i] = r.inserted;
      }
      const context = `round ${round} (${ordered ? 'ordered' : 'unordered'}): ${JSON.stringify(operations)}`;
      if (failures.length === 0) {
        expect(res.status, `${context}\n${res.text}`).toBe(200);
      } else {
        expect(res.status, `${context}\n${res.text}`).toBeGreaterThanOrEqual(400);
        expect(res.body.error.details.writeErrors.map((e: { index: number; code: string }) => [e.index, e.code]), context).toEqual(failures);
      }
      const result = failures.length === 0 ? res.body : res.body.error.details.result;
      for (const k of Object.keys(expected)) expect(result[k], `${context}: ${k}`).toBe(expected[k]);
      for (const [i, id] of Object.entries(insertedIds)) expect(result.insertedIds[i], context).toEqual(id);
      // Documents inserted without an _id get different generated ones: compare them without it.
      const strip = (docs: any[]) => docs.map((d) => (typeof d._id === 'string' ? { ...d, _id: 'generated' } : d)).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
      expect(strip(await all(bulkColl)), context).toEqual(strip(await all(aloneColl)));
    }
  }, 120_000);
});

describe('bulkWrite: durability', () => {
  const dir = tempDir('bulk-write-crash');
  afterAll(() => dir.remove());

  it('what an answer reports survives a SIGKILL right after it', async () => {
    let server = await spawnServer(dir.path, ['--rate-limit', '0']);
    const { apiKey } = await signup(server.url, 'bulk');
    const answered: number[] = [];
    for (let round = 0; round < 20; round++) {
      const operations = [
        ...Array.from({ length: 50 }, (_, k) => ({ insertOne: { document: { _id: round * 100 + k, round, k } } })),
        { updateMany: { filter: { round }, update: { $set: { done: true } } } },
        { deleteOne: { filter: { round, k: 0 } } },
      ];
      const res = await http(server.url, 'POST', '/api/mql/bulkWrite', { apiKey, json: { collection: 'crash', operations } });
      expect(res.status, res.text).toBe(200);
      answered.push(round);
    }
    server.child.kill('SIGKILL');
    await server.exited;
    server = await spawnServer(dir.path, ['--rate-limit', '0']);
    try {
      const res = await http(server.url, 'POST', '/api/mql/countDocuments', { apiKey, json: { collection: 'crash', filter: { done: true } } });
      expect(res.body.count).toBe(answered.length * 49);
      const gone = await http(server.url, 'POST', '/api/mql/countDocuments', { apiKey, json: { collection: 'crash', filter: { k: 0 } } });
      expect(gone.body.count).toBe(0);
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });
});
