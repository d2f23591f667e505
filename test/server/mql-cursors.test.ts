// Cursors over HTTP: a find with batchSize and an aggregate with `cursor` answer a first batch and
// a cursor id, getMore the batches after it, killCursors ends them (engine/docs/cursors.ts). Every
// shape of read is drained batch by batch and compared with mingo (an oracle only) and with the
// same find answered whole: a collection scan, an index read, a sort in memory and a sort that
// spilled (its file gone with the cursor, drained or killed), with skip, limit and projection.
// Batches read the snapshot the find took, writes made meanwhile in none. Then the errors, the
// tenant's bounds (429 with Retry-After), the idle timeout and a restart, which ends every cursor.
import { Query } from 'mingo';
import { describe, expect, it } from 'vitest';
import { http, serverForFile, signup, startServer, type FileServer } from '../helpers/server.js';
import { makeSpillDocs, seedOn, spillFiles } from '../helpers/spill.js';

const big = serverForFile();
/** Sorts spill past 16 KiB here. */
const small = serverForFile({ mqlBlockingBytes: 16 * 1024 });
/** Two cursors per tenant, closed after 300 ms idle. */
const tight = serverForFile({ mqlCursorsPerTenant: 2, mqlCursorTimeoutMs: 300 });

const DOCS = makeSpillDocs(2500, 7);

interface Drained {
  docs: any[];
  batches: number[];
}

/** Opens a cursor with `op` (find or aggregate) and drains it with getMore, checking each batch's size. */
async function drain(server: FileServer, op: 'find' | 'aggregate', json: Record<string, any>, first: number, next?: number): Promise<Drained> {
  const res = await server.mql(op, json);
  expect(res.status, res.text).toBe(200);
  const docs = [...res.body.documents];
  const batches = [res.body.documents.length];
  expect(res.body.documents.length).toBeLessThanOrEqual(first);
  let cursorId: string | null = res.body.cursorId;
  while (cursorId !== null) {
    expect(typeof cursorId).toBe('string');
    const more = await server.mql('getMore', { ...(json.collection === undefined ? {} : { collection: json.collection }), cursorId, ...(next === undefined ? {} : { batchSize: next }) });
    expect(more.status, more.text).toBe(200);
    expect(more.body.documents.length).toBeLessThanOrEqual(next ?? (first > 0 ? first : 101));
    docs.push(...more.body.documents);
    batches.push(more.body.documents.length);
    cursorId = more.body.cursorId;
    expect(batches.length).toBeLessThan(10_000);
  }
  return { docs, batches };
}

function oracle(filter: Record<string, unknown>, sort?: Record<string, 1 | -1>, skip = 0, limit = 0, projection?: Record<string, 0 | 1>): any[] {
  let cursor = new Query(filter).find(DOCS, projection);
  if (sort !== undefined) cursor = cursor.sort(sort);
  if (skip > 0) cursor = cursor.skip(skip);
  if (limit > 0) cursor = cursor.limit(limit);
  return cursor.all() as any[];
}

const byId = (docs: any[]): any[] => [...docs].sort((a, b) => a._id - b._id);

describe('find with batchSize', () => {
  it('reads every match batch by batch: a collection scan, an index read, a sort in memory, skip, limit and projection', async () => {
    const c = await seedOn([big], DOCS, 'cur');
    await big.createIndex(c, { k: 1 });
    // The whole collection in _id order.
    const all = await drain(big, 'find', { collection: c, sort: { _id: 1 }, batchSize: 300 }, 300);
    expect(all.docs).toEqual(oracle({}, { _id: 1 }));
    expect(all.batches.slice(0, 8)).toEqual([300, 300, 300, 300, 300, 300, 300, 300]);
    expect(all.batches.reduce((a, b) => a + b, 0)).toBe(2500);
    // An index read without a sort: the plan's order, as the whole find gives it.
    const filter = { k: { $gte: 10, $lt: 40 } };
    const plan = await big.mql('find', { collection: c, filter, explain: true, limit: 1 });
    expect(JSON.stringify(plan.body.explain.plan)).toContain('k_1');
    const whole = await big.mql('find', { collection: c, filter, limit: 10_000 });
    const indexed = await drain(big, 'find', { collection: c, filter, batchSize: 128 }, 128);
    expect(indexed.docs).toEqual(whole.body.documents);
    expect(byId(indexed.docs)).toEqual(byId(oracle(filter)));
    // A sort the plan does not give (in memory here), ties broken by _id, with skip and limit over the batches.
    const sorted = { v: { $in: [1, 'x', null, 20] } };
    const spec = { n: -1, _id: 1 } as const;
    const part = await drain(big, 'find', { collection: c, filter: sorted, sort: spec, skip: 7, limit: 500, batchSize: 64 }, 64, 100);
    expect(part.docs).toEqual(oracle(sorted, spec, 7, 500));
    expect(part.docs).toHaveLength(500);
    // Projection, and limit 0 for none (MongoDB's).
    const projected = await drain(big, 'find', { collection: c, filter: { small: 's3' }, projection: { text: 0, o: 0 }, sort: { _id: -1 }, limit: 0, batchSize: 50 }, 50);
    expect(projected.docs).toEqual(oracle({ small: 's3' }, { _id: -1 }, 0, 0, { text: 0, o: 0 }));
  });

  it('streams a spilled sort from its file, and the file goes when the cursor is drained or killed', async () => {
    const c = await seedOn([small], DOCS, 'spillcur');
    const spec = { g: 1, _id: 1 } as const;
    const drained = await drain(small, 'find', { collection: c, sort: spec, batchSize: 100 }, 100);
    expect(drained.docs).toEqual(oracle({}, spec));
    expect(spillFiles(small)).toEqual([]);
    // Open, read a batch: the sort's file is there while the cursor is; killCursors removes both.
    const first = await small.mql('find', { collection: c, sort: { text: -1, _id: 1 }, batchSize: 10 });
    expect(first.status, first.text).toBe(200);
    expect(first.body.documents).toEqual(oracle({}, { text: -1, _id: 1 }, 0, 10));
    expect(spillFiles(small).length).toBeGreaterThan(0);
    const killed = await small.mql('killCursors', { collection: c, cursors: [first.body.cursorId] });
    expect(killed.body).toEqual({ cursorsKilled: [first.body.cursorId], cursorsNotFound: [] });
    expect(spillFiles(small)).toEqual([]);
  });

  it('reads the snapshot the find took: writes made between batches are in none of them', async () => {
    const c = await seedOn([big], DOCS.slice(0, 1000), 'snapcur');
    const everything = async (): Promise<any[]> => (await big.mql('find', { collection: c, sort: { _id: 1 }, limit: 10_000 })).body.documents;
    const before = await everything();
    expect(before).toHaveLength(1000);
    const first = await big.mql('find', { collection: c, sort: { _id: 1 }, batchSize: 100 });
    expect(first.body.documents).toEqual(before.slice(0, 100));
    expect((await big.mql('insertMany', { collection: c, documents: [{ _id: 5000 }, { _id: 5001 }] })).status).toBe(201);
    expect((await big.mql('deleteMany', { collection: c, filter: { _id: { $gte: 500, $lt: 600 } } })).status).toBe(200);
    expect((await big.mql('updateMany', { collection: c, filter: {}, update: { $set: { changed: true } } })).status).toBe(200);
    const docs = [...first.body.documents];
    let cursorId = first.body.cursorId;
    while (cursorId !== null) {
      const more = await big.mql('getMore', { collection: c, cursorId });
      expect(more.status, more.text).toBe(200);
      docs.push(...more.body.documents);
      cursorId = more.body.cursorId;
    }
    expect(docs).toEqual(before);
    // A find made now sees the writes.
    const now = await everything();
    expect(now).toHaveLength(902);
    expect(now.every((d) => d.changed === true)).toBe(true);
  });

  it('opens a cursor with batchSize 0, ends on the batch that finds nothing more, and is gone after', async () => {
    const c = await big.seed(Array.from({ length: 10 }, (_, i) => ({ _id: i })), 'zero');
    const open = await big.mql('find', { collection: c, batchSize: 0 });
    expect(open.status, open.text).toBe(200);
    expect(open.body.documents).toEqual([]);
    expect(typeof open.body.cursorId).toBe('string');
    // getMore without batchSize takes 101 (MongoDB's default first batch) when the cursor was opened with 0.
    const rest = await big.mql('getMore', { collection: c, cursorId: open.body.cursorId });
    expect(rest.body).toEqual({ documents: Array.from({ length: 10 }, (_, i) => ({ _id: i })), cursorId: null });
    await big.refuses('getMore', { collection: c, cursorId: open.body.cursorId }, 404, 'NOT_FOUND', `cursor id ${open.body.cursorId} not found`);
    // A batch that ends exactly at the last match keeps the cursor: the next one finds nothing.
    const exact = await big.mql('find', { collection: c, batchSize: 10 });
    expect(exact.body.documents).toHaveLength(10);
    expect(typeof exact.body.cursorId).toBe('string');
    expect((await big.mql('getMore', { collection: c, cursorId: exact.body.cursorId })).body).toEqual({ documents: [], cursorId: null });
    // A find of a collection that does not exist: nothing, no cursor.
    expect((await big.mql('find', { collection: 'nothing-here', batchSize: 5 })).body).toEqual({ documents: [], cursorId: null });
  });
});

describe('aggregate with cursor', () => {
  it('hands out a pipeline\'s output in batches, collection-less ones too; a $merge runs whole and opens none', async () => {
    const c = await seedOn([big], DOCS, 'aggcur');
    const pipeline = [{ $match: { n: { $gte: 0 } } }, { $group: { _id: '$g', count: { $sum: 1 }, top: { $max: '$n' } } }, { $sort: { count: -1, _id: 1 } }];
    const whole = await big.aggregate(c, pipeline);
    const drained = await drain(big, 'aggregate', { collection: c, pipeline, cursor: { batchSize: 37 } }, 37, 50);
    expect(drained.docs).toEqual(whole);
    expect(whole.length).toBeGreaterThan(100);
    // The default first batch is 101.
    const dflt = await big.mql('aggregate', { collection: c, pipeline, cursor: {} });
    expect(dflt.body.documents).toEqual(whole.slice(0, 101));
    expect(dflt.body.executedBy).toBe('native');
    await big.mql('killCursors', { collection: c, cursors: [dflt.body.cursorId] });
    // Without a collection ($documents): getMore names none, and naming one is refused.
    const docs = Array.from({ length: 12 }, (_, i) => ({ i }));
    const free = await big.mql('aggregate', { pipeline: [{ $documents: docs }], cursor: { batchSize: 5 } });
    expect(free.body.documents).toEqual(docs.slice(0, 5));
    await big.refuses('getMore', { collection: c, cursorId: free.body.cursorId }, 400, 'VALIDATION_FAILED', 'belongs to no collection');
    const rest = await drain(big, 'aggregate', { pipeline: [{ $documents: docs }], cursor: { batchSize: 5 } }, 5);
    expect(rest.docs).toEqual(docs);
    // A final $merge writes and answers no documents and no cursor, as MongoDB's.
    const merged = await big.mql('aggregate', { collection: c, pipeline: [{ $match: { k: 3 } }, { $merge: { into: `${c}_out` } }], cursor: { batchSize: 2 } });
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body).toEqual({ documents: [], cursorId: null, executedBy: 'native' });
    expect(byId(await big.all(`${c}_out`))).toEqual(byId(oracle({ k: 3 })));
  });
});

describe('errors and bounds', () => {
  it('refuses a bad batchSize, explain with one, a getMore of no cursor, of another collection or of another tenant', async () => {
    const c = await big.seed(Array.from({ length: 30 }, (_, i) => ({ _id: i })), 'errcur');
    for (const bad of [-1, 10_001, 1.5, 'x']) {
      await big.refuses('find', { collection: c, batchSize: bad }, 400, 'VALIDATION_FAILED', 'batchSize');
      await big.refuses('aggregate', { collection: c, pipeline: [], cursor: { batchSize: bad } }, 400, 'VALIDATION_FAILED', 'batchSize');
    }
    await big.refuses('aggregate', { collection: c, pipeline: [], cursor: { size: 1 } }, 400, 'VALIDATION_FAILED', '');
    await big.refuses('find', { collection: c, batchSize: 5, explain: true }, 400, 'VALIDATION_FAILED', 'explain cannot be combined with batchSize');
    await big.refuses('find', { collection: c, batchSize: 5, limit: -1 }, 400, 'VALIDATION_FAILED', 'limit');
    await big.refuses('find', { collection: c, batchSize: 5, filter: { $bad: 1 } }, 400, 'QUERY_ERROR', '$bad');
    await big.refuses('getMore', { collection: c, cursorId: 'AAAAAAAAAAAAAAAA' }, 404, 'NOT_FOUND', 'cursor id AAAAAAAAAAAAAAAA not found');
    await big.refuses('getMore', { collection: c }, 400, 'VALIDATION_FAILED', 'cursorId');
    const open = await big.mql('find', { collection: c, sort: { _id: 1 }, batchSize: 10 });
    const id = open.body.cursorId as string;
    await big.refuses('getMore', { collection: c, cursorId: id, batchSize: 0 }, 400, 'VALIDATION_FAILED', 'batchSize of getMore');
    await big.refuses('getMore', { collection: `${c}x`, cursorId: id }, 400, 'VALIDATION_FAILED', `belongs to collection '${c}'`);
    // Another tenant: not found, in getMore and killCursors, and the cursor is untouched.
    const other = await signup(big.server.url, 'other');
    const theirs = (op: string, json: unknown) => http(big.server.url, 'POST', `/api/mql/${op}`, { json, apiKey: other.apiKey });
    expect((await theirs('getMore', { collection: c, cursorId: id })).status).toBe(404);
    expect((await theirs('killCursors', { collection: c, cursors: [id] })).body).toEqual({ cursorsKilled: [], cursorsNotFound: [id] });
    expect((await big.mql('killCursors', { collection: `${c}x`, cursors: [id] })).body).toEqual({ cursorsKilled: [], cursorsNotFound: [id] });
    const next = await big.mql('getMore', { collection: c, cursorId: id, batchSize: 5 });
    expect(next.body).toEqual({ documents: Array.from({ length: 5 }, (_, i) => ({ _id: 10 + i })), cursorId: id });
    expect((await big.mql('killCursors', { collection: c, cursors: [id, id, 'nope'] })).body).toEqual({ cursorsKilled: [id], cursorsNotFound: ['nope'] });
    await big.refuses('getMore', { collection: c, cursorId: id }, 404, 'NOT_FOUND', 'not found');
  });

  it('bounds the cursors a tenant holds (429 with Retry-After) and closes idle ones', async () => {
    const c = await tight.seed(Array.from({ length: 10 }, (_, i) => ({ _id: i })), 'tight');
    const a = await tight.mql('find', { collection: c, batchSize: 1 });
    const b = await tight.mql('find', { collection: c, batchSize: 1 });
    expect(typeof a.body.cursorId).toBe('string');
    const third = await tight.mql('find', { collection: c, batchSize: 1 });
    expect(third.status, third.text).toBe(429);
    expect(third.body.error.code).toBe('RATE_LIMITED');
    expect(third.headers.get('retry-after')).toBe('1');
    const agg = await tight.mql('aggregate', { collection: c, pipeline: [], cursor: { batchSize: 1 } });
    expect(agg.status).toBe(429);
    // A find that is not a cursor still answers, and a cursor that ends within its first batch takes no room.
    expect((await tight.mql('find', { collection: c })).body.documents).toHaveLength(10);
    expect((await tight.mql('find', { collection: c, batchSize: 50 })).body.cursorId).toBeNull();
    await tight.mql('killCursors', { collection: c, cursors: [a.body.cursorId] });
    const d = await tight.mql('find', { collection: c, batchSize: 1 });
    expect(d.status, d.text).toBe(200);
    // Idle past 300 ms: closed.
    await new Promise((r) => setTimeout(r, 900));
    await tight.refuses('getMore', { collection: c, cursorId: b.body.cursorId }, 404, 'NOT_FOUND', 'not found');
    await tight.refuses('getMore', { collection: c, cursorId: d.body.cursorId }, 404, 'NOT_FOUND', 'not found');
    expect((await tight.mql('find', { collection: c, batchSize: 1 })).status).toBe(200);
  });

  it('ends every cursor at a restart', async () => {
    const first = await startServer();
    let second: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const { apiKey } = await signup(first.url);
      const call = (url: string, op: string, json: unknown) => http(url, 'POST', `/api/mql/${op}`, { json, apiKey });
      expect((await call(first.url, 'insertMany', { collection: 'r', documents: Array.from({ length: 20 }, (_, i) => ({ _id: i })) })).status).toBe(201);
      const open = await call(first.url, 'find', { collection: 'r', batchSize: 5 });
      expect(open.body.documents).toHaveLength(5);
      await first.stop({ keepData: true });
      second = await startServer({ dataDir: first.dataDir });
      const gone = await call(second.url, 'getMore', { collection: 'r', cursorId: open.body.cursorId });
      expect(gone.status, gone.text).toBe(404);
      expect((await call(second.url, 'find', { collection: 'r', batchSize: 5 })).body.documents).toEqual(open.body.documents);
    } finally {
      await second?.stop();
    }
  });
});
