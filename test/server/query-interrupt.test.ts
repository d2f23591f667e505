// Time limits of document queries: MongoDB's maxTimeMS on find, findOne, countDocuments,
// distinct, aggregate and the changes that search (updates, replaces, deletes, findOneAnd*), the
// server's own limit (TETRA_MQL_TIME_LIMIT_MS), and a query whose client closed its connection
// stopping, as MongoDB kills the operation of a client that disconnected. Malformed values get
// MongoDB's messages (its parseMaxTimeMS, as FerretDB's compatibility tests record MongoDB's
// answers), and a refused change changes nothing.
import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../helpers/server-process.js';
import { http, serverForFile, signup } from '../helpers/server.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';

const s = serverForFile();
/** A server whose own limit is 1 ms. */
const strict = serverForFile({ mqlTimeLimitMs: 1 });
const freshDir = dirsRemovedAfterEach();

/** Documents a scan takes many chunks to read: 20,000 of them, none matching `pad: 'zzz'`. */
const SCAN_DOCS = Array.from({ length: 20_000 }, (_, i) => ({ _id: i, n: i, g: i % 7, pad: `p${i}` }));
/**
 * A pipeline whose every document looks up the whole collection by an unindexed field with a
 * value unique to it: one scan of the collection per document, seconds of work over 3,000
 * documents, in chunks (each lookup reads its own).
 */
const SLOW_PIPELINE = [{ $lookup: { from: 'slow', localField: 'u', foreignField: 'u', as: 'same' } }, { $count: 'n' }];
const SLOW_DOCS = Array.from({ length: 3000 }, (_, i) => ({ _id: i, u: `u${i}`, pad: 'x'.repeat(40) }));

async function load(server: ReturnType<typeof serverForFile>, collection: string, docs: unknown[]): Promise<void> {
  for (let i = 0; i < docs.length; i += 10_000) {
    const res = await server.mql('insertMany', { collection, documents: docs.slice(i, i + 10_000) });
    expect(res.status, res.text).toBe(201);
  }
}

const TIME_EXCEEDED = 'operation exceeded time limit';

describe('maxTimeMS', () => {
  it('refuses a malformed maxTimeMS with MongoDB\'s messages on every endpoint that takes it, changing nothing', async () => {
    await load(s, 'bad', [{ _id: 1, a: 1 }]);
    // MongoDB's answers (code 2, BadValue), as recorded against MongoDB by FerretDB's tests.
    const cases: Array<[unknown, string]> = [
      ['string', 'maxTimeMS must be a number'],
      [null, 'maxTimeMS must be a number'],
      [[42, 'foo', null], 'maxTimeMS must be a number'],
      [{ foo: 42 }, 'maxTimeMS must be a number'],
      [true, 'maxTimeMS must be a number'],
      [43.15, 'maxTimeMS has non-integral value'],
      [-1123123, '-1123123 value for maxTimeMS is out of range'],
      [-14245345234123245.55, '-14245345234123246 value for maxTimeMS is out of range'],
      [9223372036854775807, '9223372036854775807 value for maxTimeMS is out of range'],
      [2147483648, '2147483648 value for maxTimeMS is out of range'],
    ];
    const requests: Array<[string, Record<string, unknown>]> = [
      ['find', { collection: 'bad', filter: { a: 1 } }],
      ['find', { collection: 'bad', filter: { _id: 1 } }],
      ['findOne', { collection: 'bad', filter: { a: 1 } }],
      ['countDocuments', { collection: 'bad', filter: {} }],
      ['distinct', { collection: 'bad', key: 'a' }],
      ['aggregate', { collection: 'bad', pipeline: [{ $match: {} }] }],
      ['updateOne', { collection: 'bad', filter: { _id: 1 }, update: { $set: { a: 2 } } }],
      ['updateMany', { collection: 'bad', filter: {}, update: { $set: { a: 2 } } }],
      ['replaceOne', { collection: 'bad', filter: { _id: 1 }, replacement: { a: 2 } }],
      ['deleteOne', { collection: 'bad', filter: { _id: 1 } }],
      ['deleteMany', { collection: 'bad', filter: {} }],
      ['findOneAndUpdate', { collection: 'bad', filter: { _id: 1 }, update: { $set: { a: 2 } } }],
      ['findOneAndReplace', { collection: 'bad', filter: { _id: 1 }, replacement: { a: 2 } }],
      ['findOneAndDelete', { collection: 'bad', filter: { _id: 1 } }],
      ['insertOne', { collection: 'bad', document: { _id: 2, a: 2 } }],
      ['insertMany', { collection: 'bad', documents: [{ _id: 3 }, { _id: 4 }] }],
      ['bulkWrite', { collection: 'bad', operations: [{ insertOne: { document: { _id: 5 } } }, { deleteOne: { filter: { _id: 1 } } }] }],
    ];
    for (const [op, body] of requests) {
      for (const [value, message] of cases) {
        const res = await s.mql(op, { ...body, maxTimeMS: value });
        expect(res.status, `${op} ${JSON.stringify(value)}: ${res.text}`).toBe(400);
        expect(res.body.error.code).toBe('QUERY_ERROR');
        expect(res.body.error.message).toBe(message);
      }
    }
    expect(await s.all('bad')).toEqual([{ _id: 1, a: 1 }]);
  });

  it('accepts 0 (no limit) and the largest value, as MongoDB does', async () => {
    await load(s, 'ok', [{ _id: 1, a: 1 }]);
    for (const maxTimeMS of [0, 2147483647, 10000, 10000.0]) {
      const res = await s.mql('find', { collection: 'ok', filter: { a: 1 }, maxTimeMS });
      expect(res.status, res.text).toBe(200);
      expect(res.body.documents).toEqual([{ _id: 1, a: 1 }]);
    }
  });

  it('stops a find, a count and a distinct that read past their time, with MongoDB\'s message', async () => {
    await load(s, 'scan', SCAN_DOCS);
    const slow = { collection: 'scan', filter: { pad: 'zzz' } };
    for (const [op, body] of [
      ['find', slow],
      ['findOne', slow],
      ['countDocuments', slow],
      ['distinct', { ...slow, key: 'g' }],
    ] as const) {
      const res = await s.mql(op, { ...body, maxTimeMS: 1 });
      expect(res.status, `${op}: ${res.text}`).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'QUERY_ERROR', message: TIME_EXCEEDED, details: { maxTimeMS: 1 } });
      // The same request with time enough answers.
      const full = await s.mql(op, { ...body, maxTimeMS: 600_000 });
      expect(full.status, `${op}: ${full.text}`).toBe(200);
    }
    const count = await s.mql('countDocuments', { collection: 'scan', filter: { g: 3 }, maxTimeMS: 600_000 });
    expect(count.body.count).toBe(SCAN_DOCS.filter((d) => d.g === 3).length);
  });

  it('stops an aggregation past its time wherever its time goes (its $lookup reads), and not one given time enough', async () => {
    await load(s, 'slow', SLOW_DOCS);
    const res = await s.mql('aggregate', { collection: 'slow', pipeline: SLOW_PIPELINE, maxTimeMS: 50 });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'QUERY_ERROR', message: TIME_EXCEEDED, details: { maxTimeMS: 50 } });
    // The same lookups over a few documents, within a generous limit.
    const few = await s.mql('aggregate', { collection: 'slow', pipeline: [{ $limit: 5 }, ...SLOW_PIPELINE], maxTimeMS: 600_000 });
    expect(few.status, few.text).toBe(200);
    expect(few.body.documents).toEqual([{ n: 5 }]);
  });

  it('stops a pipeline whose time goes in its stages rather than its reads', async () => {
    // 3,000 generated documents, each summing 2,000 numbers: seconds of work, no collection read.
    const heavy = [
      { $documents: { $map: { input: { $range: [0, 3000] }, in: { i: '$$this' } } } },
      { $set: { sum: { $reduce: { input: { $range: [0, 2000] }, initialValue: 0, in: { $add: ['$$value', '$$this'] } } } } },
      { $group: { _id: null, total: { $sum: '$sum' } } },
    ];
    const res = await s.mql('aggregate', { pipeline: heavy, maxTimeMS: 50 });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'QUERY_ERROR', message: TIME_EXCEEDED });
    const small = structuredClone(heavy);
    (small[0] as any).$documents.$map.input.$range[1] = 3;
    const ok = await s.mql('aggregate', { pipeline: small, maxTimeMS: 600_000 });
    expect(ok.body.documents).toEqual([{ _id: null, total: 3 * 1999 * 1000 }]);
  });

  it('stops the search of a change past its time: one-document changes change nothing', async () => {
    const collection = 'change';
    await load(s, collection, SCAN_DOCS);
    const before = await s.mql('countDocuments', { collection, filter: { pad: { $exists: true } } });
    // The filter matches only the last document: its search reads every chunk.
    const last = SCAN_DOCS.length - 1;
    for (const [op, body] of [
      ['updateOne', { filter: { n: last, pad: `p${last}` }, update: { $set: { hit: true } } }],
      ['replaceOne', { filter: { n: last, pad: `p${last}` }, replacement: { hit: true } }],
      ['deleteOne', { filter: { n: last, pad: `p${last}` } }],
      ['findOneAndUpdate', { filter: { n: last, pad: `p${last}` }, update: { $set: { hit: true } } }],
      ['findOneAndReplace', { filter: { n: last, pad: `p${last}` }, replacement: { hit: true } }],
      ['findOneAndDelete', { filter: { n: last, pad: `p${last}` } }],
      ['findOneAndUpdate', { filter: { pad: { $gte: 'p' } }, sort: { n: -1 }, update: { $set: { hit: true } } }],
    ] as const) {
      const res = await s.mql(op, { collection, ...body, maxTimeMS: 1 });
      expect(res.status, `${op}: ${res.text}`).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'QUERY_ERROR', message: TIME_EXCEEDED });
    }
    const docs = await s.mql('find', { collection, filter: { _id: last } });
    expect(docs.body.documents).toEqual([SCAN_DOCS[last]]);
    const after = await s.mql('countDocuments', { collection, filter: { pad: { $exists: true } } });
    expect(after.body.count).toBe(before.body.count);
    // With time enough the change happens.
    const done = await s.mql('updateOne', { collection, filter: { n: last, pad: `p${last}` }, update: { $set: { hit: true } }, maxTimeMS: 600_000 });
    expect(done.body).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
  });

  it('stops an updateMany or deleteMany past its time (the chunks written before stay, as in MongoDB)', async () => {
    const collection = 'many';
    await load(s, collection, SCAN_DOCS);
    const res = await s.mql('updateMany', { collection, filter: { pad: { $gte: 'p' } }, update: { $inc: { n: 1 } }, maxTimeMS: 1 });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.message).toBe(TIME_EXCEEDED);
    // Every document is either updated once or not at all, and not all of them were.
    const steps = await s.aggregate(collection, [{ $group: { _id: { $subtract: ['$n', '$_id'] }, c: { $sum: 1 } } }, { $sort: { _id: 1 } }]);
    expect(steps.map((g) => g._id).every((d) => d === 0 || d === 1)).toBe(true);
    expect(steps.reduce((n, g) => n + g.c, 0)).toBe(SCAN_DOCS.length);
    expect(steps.find((g) => g._id === 1)?.c ?? 0).toBeLessThan(SCAN_DOCS.length);
    const del = await s.mql('deleteMany', { collection, filter: { pad: { $gte: 'p' } }, maxTimeMS: 1 });
    expect(del.status, del.text).toBe(400);
    expect(del.body.error.message).toBe(TIME_EXCEEDED);
    const left = await s.mql('countDocuments', { collection, filter: {} });
    expect(left.body.count).toBeGreaterThan(0);
  });

  it('takes maxTimeMS on inserts, which run in one turn and are never stopped', async () => {
    for (const maxTimeMS of [1, 0, 2147483647]) {
      const one = await s.mql('insertOne', { collection: `ins${maxTimeMS}`, document: { _id: 'one' }, maxTimeMS });
      expect(one.status, one.text).toBe(201);
      const many = await s.mql('insertMany', { collection: `ins${maxTimeMS}`, documents: SCAN_DOCS.slice(0, 9_999), maxTimeMS });
      expect(many.status, many.text).toBe(201);
      expect((await s.mql('countDocuments', { collection: `ins${maxTimeMS}`, filter: {} })).body.count).toBe(10_000);
    }
  });

  it('gives a bulkWrite one deadline for all its operations: past it the request stops, ordered or not, keeping what it applied', async () => {
    const collection = 'bulk';
    const docs = SCAN_DOCS.slice(0, 2000);
    await load(s, collection, docs);
    const last = docs.length - 1;
    // Each update searches the whole collection (only the last document matches): a few
    // milliseconds each, well within the limit, and hundreds of them well past it, so a limit
    // counted per operation would let them all run.
    // Each run sets fields of its own (`<tag><k>`): a later run's count is not mixed with an earlier one's.
    const slowUpdate = (k: number, tag = 'k') => ({ updateOne: { filter: { n: last, pad: `p${last}` }, update: { $inc: { hits: 1 }, $set: { [`${tag}${k}`]: true } } } });
    for (const ordered of [true, false]) {
      await s.mql('updateOne', { collection, filter: { _id: last }, update: { $set: { hits: 0 } } });
      // A second's limit (a loaded host still runs a few updates within it), seconds of updates.
      const operations = [{ insertOne: { document: { _id: `first-${ordered}` } } }, ...Array.from({ length: 1000 }, (_, k) => slowUpdate(k, ordered ? 'o' : 'u')), { insertOne: { document: { _id: `last-${ordered}` } } }];
      const res = await s.mql('bulkWrite', { collection, operations, ordered, maxTimeMS: 1000 });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'QUERY_ERROR', message: TIME_EXCEEDED, details: { maxTimeMS: 1000, writeErrors: [] } });
      const { index, result } = res.body.error.details;
      // It stopped somewhere among the updates, after some: the insert before them applied, the one after not.
      expect(index).toBeGreaterThan(2);
      expect(index).toBeLessThan(operations.length - 1);
      expect(result).toMatchObject({ insertedCount: 1, insertedIds: { 0: `first-${ordered}` }, matchedCount: index - 1, modifiedCount: index - 1 });
      expect((await s.mql('find', { collection, filter: { _id: { $in: [`first-${ordered}`, `last-${ordered}`] } } })).body.documents).toEqual([{ _id: `first-${ordered}` }]);
      // The updates applied are the ones the result counts (the one stopped in its search changed nothing).
      const doc = (await s.mql('find', { collection, filter: { _id: last } })).body.documents[0];
      expect(doc.hits).toBe(index - 1);
      expect(Object.keys(doc).filter((k) => new RegExp(`^${ordered ? 'o' : 'u'}[0-9]+$`).test(k))).toHaveLength(index - 1);
    }
    // The server's own limit bounds it too, whatever the request asks.
    await load(strict, collection, docs);
    for (const extra of [{}, { maxTimeMS: 600_000 }]) {
      const capped = await strict.mql('bulkWrite', { collection, operations: Array.from({ length: 400 }, (_, k) => slowUpdate(k)), ...extra });
      expect(capped.status, capped.text).toBe(400);
      expect(capped.body.error).toMatchObject({ message: TIME_EXCEEDED, details: { maxTimeMS: 1 } });
    }
    // Operations that each answer in one turn (updates by _id) are stopped between them.
    const quick = Array.from({ length: 5000 }, (_, k) => ({ updateOne: { filter: { _id: k % docs.length }, update: { $inc: { q: 1 } } } }));
    const between = await s.mql('bulkWrite', { collection, operations: quick, maxTimeMS: 10 });
    expect(between.status, between.text).toBe(400);
    const stoppedAt = between.body.error.details.index;
    expect(stoppedAt).toBeGreaterThan(0);
    expect(between.body.error.details.result.modifiedCount).toBe(stoppedAt);
    const counted = await s.aggregate(collection, [{ $group: { _id: null, q: { $sum: '$q' } } }]);
    expect(counted[0].q).toBe(stoppedAt);
    // One operation whose own search outlasts the limit stops inside it (an updateMany of 20,000).
    await load(s, 'bulk-one', SCAN_DOCS);
    const inside = await s.mql('bulkWrite', { collection: 'bulk-one', operations: [{ updateMany: { filter: { pad: { $gte: 'p' } }, update: { $inc: { n: 1 } } } }], maxTimeMS: 1 });
    expect(inside.status, inside.text).toBe(400);
    expect(inside.body.error).toMatchObject({ message: TIME_EXCEEDED, details: { index: 0, result: { matchedCount: 0 } } });
    // The same kind of request with time enough completes.
    const enough = await s.mql('bulkWrite', { collection, operations: [slowUpdate(1000), slowUpdate(1001)], maxTimeMS: 600_000 });
    expect(enough.status, enough.text).toBe(200);
    expect(enough.body).toMatchObject({ matchedCount: 2, modifiedCount: 2 });
  });

  it('applies the server\'s limit (TETRA_MQL_TIME_LIMIT_MS) to requests without maxTimeMS and to those with a higher one', async () => {
    await load(strict, 'scan', SCAN_DOCS);
    for (const extra of [{}, { maxTimeMS: 600_000 }, { maxTimeMS: 0 }]) {
      const res = await strict.mql('find', { collection: 'scan', filter: { pad: 'zzz' }, ...extra });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'QUERY_ERROR', message: TIME_EXCEEDED, details: { maxTimeMS: 1 } });
    }
    // What one turn answers is not stopped: a find by _id, an indexed read of a few.
    const byId = await strict.mql('find', { collection: 'scan', filter: { _id: 7 } });
    expect(byId.body.documents).toEqual([SCAN_DOCS[7]]);
  });
});

/** Sends `json` to `path`, waits until it is sent, then closes the connection 300 ms later, without reading an answer. */
function sendAndLeave(base: string, path: string, apiKey: string, json: unknown): Promise<void> {
  const body = JSON.stringify(json);
  return new Promise<void>((resolve) => {
    const req = request(new URL(path, base), { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } });
    req.on('error', () => resolve());
    req.on('close', () => resolve());
    req.end(body, () => setTimeout(() => req.destroy(), 300));
  });
}

/** Waits (up to 20 s) until the server has logged `n` queries stopped for a client gone, each at info with its request and tenant. */
async function stoppedQueries(server: ServerProcess, n: number): Promise<void> {
  const lines = (): string[] => server.output().split('\n').filter((l) => l.includes('query stopped: its client closed the connection'));
  for (let i = 0; i < 200 && lines().length < n; i++) await new Promise((r) => setTimeout(r, 100));
  expect(lines().length, server.output()).toBe(n);
  for (const line of lines()) expect(JSON.parse(line)).toMatchObject({ level: 30, tenantId: expect.any(String), reqId: expect.any(String) });
}

describe('a client gone', () => {
  it('stops its aggregation, and the server goes on serving', async () => {
    const dir = freshDir('client-gone');
    const server = await spawnServer(dir, [], { TETRA_LOG_LEVEL: 'info', TETRA_LOG_FORMAT: 'json' });
    try {
      const { apiKey } = await signup(server.url);
      const insert = await http(server.url, 'POST', '/api/mql/insertMany', { apiKey, json: { collection: 'slow', documents: SLOW_DOCS } });
      expect(insert.status, insert.text).toBe(201);
      // Sent, then the connection closed while the pipeline runs (it takes seconds).
      await sendAndLeave(server.url, '/api/mql/aggregate', apiKey, { collection: 'slow', pipeline: SLOW_PIPELINE });
      await stoppedQueries(server, 1);
      // No error was logged for it.
      expect(server.output()).not.toMatch(/"level":50/);
      const health = await http(server.url, 'GET', '/api/health', { apiKey });
      expect(health.status).toBe(200);
      // A client that stays gets its answer (over a few documents).
      const few = await http(server.url, 'POST', '/api/mql/aggregate', { apiKey, json: { collection: 'slow', pipeline: [{ $limit: 3 }, ...SLOW_PIPELINE] } });
      expect(few.body.documents).toEqual([{ n: 3 }]);
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });

  it('cancels its SQL statement, read or write, which then changes nothing', async () => {
    const dir = freshDir('client-gone-sql');
    const server = await spawnServer(dir, [], { TETRA_LOG_LEVEL: 'info', TETRA_LOG_FORMAT: 'json' });
    try {
      const { apiKey } = await signup(server.url);
      const sql = (text: string) => http(server.url, 'POST', '/api/sql/query', { apiKey, json: { sql: text } });
      expect((await sql('CREATE TABLE t (id int PRIMARY KEY, v int)')).status).toBe(200);
      expect((await sql('INSERT INTO t SELECT g, 0 FROM generate_series(1, 1000) g')).status).toBe(200);
      // A read of 10^9 rows joined (many seconds), and a write that must first count as many.
      await sendAndLeave(server.url, '/api/sql/query', apiKey, { sql: 'SELECT count(*) FROM t a, t b, t c' });
      await stoppedQueries(server, 1);
      expect((await sql('CREATE TABLE u (n bigint)')).status).toBe(200);
      await sendAndLeave(server.url, '/api/sql/query', apiKey, { sql: 'INSERT INTO u SELECT count(*) FROM t a, t b, t c' });
      await stoppedQueries(server, 2);
      const after = await sql('SELECT count(*) AS n FROM u');
      expect(after.body.rows).toEqual([{ n: 0 }]);
      // A write whose time goes in a subquery of its expression (an init plan, run in slices).
      await sendAndLeave(server.url, '/api/sql/query', apiKey, { sql: 'UPDATE t SET v = (SELECT count(*) FROM t a, t b, t c) WHERE id = 1' });
      await stoppedQueries(server, 3);
      expect((await sql('SELECT sum(v) AS s FROM t')).body.rows).toEqual([{ s: 0 }]);
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });
});
