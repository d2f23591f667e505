// Aggregation routing to an external MongoDB (TETRA_MONGODB_URI) and the mirror of the tenants'
// collections it runs on: through the real server on a real port, the official driver, and a
// stand-in MongoDB (test/helpers/mongo-standin.ts: no MongoDB server can be had here).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMongoStandIn, type MongoStandIn } from '../helpers/mongo-standin.js';
import { http, signup, startServer, type RunningServer } from '../helpers/server.js';
import { spawnServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

let mongo: MongoStandIn;
let server: RunningServer;
let native: RunningServer;
beforeAll(async () => {
  mongo = await startMongoStandIn();
  server = await startServer({ mongodbUri: mongo.uri, mongodbTimeoutMs: 1500 });
  native = await startServer();
});
afterAll(async () => {
  await server?.stop();
  await native?.stop();
  await mongo?.stop();
});

const mql = <T = any>(base: string, key: string, op: string, json: unknown) => http<T>(base, 'POST', `/api/mql/${op}`, { json, apiKey: key });

const CUSTOMERS = [
  { _id: 'c1', name: 'Ada', city: 'London', manager: null },
  { _id: 'c2', name: 'Grace', city: 'Arlington', manager: 'c1' },
  { _id: 'c3', name: 'Edsger', city: 'Nuenen', manager: 'c2' },
];
const ORDERS = [
  { _id: 1, customer: 'c1', total: 30, at: { $date: '2026-01-02T03:04:05Z' } },
  { _id: 2, customer: 'c1', total: 12.5 },
  { _id: 3, customer: 'c2', total: 7 },
  { _id: 4, customer: 'c9', total: 1 },
];
const LOOKUP = [
  { $lookup: { from: 'customers', localField: 'customer', foreignField: '_id', as: 'who' } },
  { $sort: { _id: 1 } },
];
const FACET = [{ $facet: { big: [{ $match: { total: { $gte: 10 } } }, { $count: 'n' }], byCustomer: [{ $group: { _id: '$customer', sum: { $sum: '$total' } } }, { $sort: { _id: 1 } }] } }];
const GRAPH = [
  { $match: { _id: 'c3' } },
  { $graphLookup: { from: 'customers', startWith: '$manager', connectFromField: 'manager', connectToField: '_id', as: 'chain', depthField: 'depth' } },
  { $unwind: '$chain' },
  { $sort: { 'chain._id': 1 } },
  { $group: { _id: '$_id', chain: { $push: { id: '$chain._id', depth: '$chain.depth' } } } },
];

async function seed(base: string, key: string): Promise<void> {
  expect((await mql(base, key, 'insertMany', { collection: 'customers', documents: CUSTOMERS })).status).toBe(201);
  expect((await mql(base, key, 'insertMany', { collection: 'orders', documents: ORDERS })).status).toBe(201);
}

/** The tenant's mirrored documents as the stand-in holds them, as JSON (dates as the API shows them). */
function mirrored(tenantId: string, collection: string): unknown[] {
  return JSON.parse(JSON.stringify(mongo.docs(`tetra_${tenantId}`, collection), (_k, v) => v));
}

async function everything(base: string, key: string, collection: string): Promise<unknown[]> {
  const res = await mql(base, key, 'find', { collection, filter: {}, sort: { _id: 1 }, limit: 10000 });
  return JSON.parse(JSON.stringify(res.body.documents, (_k, v) => (v !== null && typeof v === 'object' && '$date' in v ? v.$date : v)));
}

describe('aggregation routed to an external MongoDB', () => {
  it('runs $lookup, $facet and $graphLookup there, with the answers the native stages give', async () => {
    const routed = await signup(server.url);
    const plain = await signup(native.url);
    await seed(server.url, routed.apiKey);
    await seed(native.url, plain.apiKey);
    for (const pipeline of [LOOKUP, FACET, GRAPH]) {
      const external = await mql(server.url, routed.apiKey, 'aggregate', { collection: pipeline === GRAPH ? 'customers' : 'orders', pipeline });
      expect(external.status, external.text).toBe(200);
      expect(external.body.executedBy).toBe('external');
      const reference = await mql(native.url, plain.apiKey, 'aggregate', { collection: pipeline === GRAPH ? 'customers' : 'orders', pipeline });
      expect(reference.body.executedBy).toBe('native');
      expect(external.body.documents).toEqual(reference.body.documents);
    }
    // A pipeline without those stages runs natively, MongoDB or not.
    const plainStages = await mql(server.url, routed.apiKey, 'aggregate', { collection: 'orders', pipeline: [{ $group: { _id: null, n: { $sum: 1 } } }] });
    expect(plainStages.body).toEqual({ documents: [{ _id: null, n: 4 }], executedBy: 'native' });
    // Dates come back as the API writes them.
    const dated = await mql(server.url, routed.apiKey, 'aggregate', { collection: 'orders', pipeline: [{ $match: { _id: 1 } }, ...LOOKUP] });
    expect(dated.body.documents[0].at).toEqual({ $date: '2026-01-02T03:04:05.000Z' });
  });

  it('hands a routed answer out in batches when the aggregate asks for a cursor', async () => {
    const routed = await signup(server.url);
    const plain = await signup(native.url);
    await seed(server.url, routed.apiKey);
    await seed(native.url, plain.apiKey);
    const reference = await mql(native.url, plain.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP });
    const first = await mql(server.url, routed.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP, cursor: { batchSize: 3 } });
    expect(first.status, first.text).toBe(200);
    expect(first.body.executedBy).toBe('external');
    expect(first.body.documents).toEqual(reference.body.documents.slice(0, 3));
    const rest = await mql(server.url, routed.apiKey, 'getMore', { collection: 'orders', cursorId: first.body.cursorId, batchSize: 10 });
    expect(rest.body).toEqual({ documents: reference.body.documents.slice(3), cursorId: null });
    expect(reference.body.documents.length).toBeGreaterThan(3);
  });

  it("hands MongoDB the request's let, checked first as a native run checks it", async () => {
    const routed = await signup(server.url);
    const plain = await signup(native.url);
    await seed(server.url, routed.apiKey);
    await seed(native.url, plain.apiKey);
    const body = { collection: 'orders', pipeline: [{ $match: { $expr: { $gte: ['$total', '$$min'] } } }, ...LOOKUP, { $addFields: { label: '$$label' } }], let: { min: 10, label: 'big' } };
    const external = await mql(server.url, routed.apiKey, 'aggregate', body);
    expect(external.status, external.text).toBe(200);
    expect(external.body.executedBy).toBe('external');
    const reference = await mql(native.url, plain.apiKey, 'aggregate', body);
    expect(reference.body.executedBy).toBe('native');
    expect(external.body.documents.map((d: any) => [d._id, d.label])).toEqual([
      [1, 'big'],
      [2, 'big'],
    ]);
    expect(external.body.documents).toEqual(reference.body.documents);
    const bad = await mql(server.url, routed.apiKey, 'aggregate', { ...body, let: { min: '$total' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toBe((await mql(native.url, plain.apiKey, 'aggregate', { ...body, let: { min: '$total' } })).body.error.message);
  });

  it('mirrors every acknowledged write, and a routed aggregation sees the writes made before it', async () => {
    const t = await signup(server.url);
    await seed(server.url, t.apiKey);
    const ops: Array<[string, unknown]> = [
      ['insertOne', { collection: 'orders', document: { _id: 5, customer: 'c3', total: 99 } }],
      ['updateOne', { collection: 'orders', filter: { _id: 2 }, update: { $inc: { total: 1 }, $set: { note: 'late' } } }],
      ['updateMany', { collection: 'orders', filter: { customer: 'c1' }, update: { $set: { vip: true } } }],
      ['replaceOne', { collection: 'customers', filter: { _id: 'c3' }, replacement: { name: 'Dijkstra', city: 'Austin', manager: 'c2' } }],
      ['deleteOne', { collection: 'orders', filter: { _id: 4 } }],
      ['insertMany', { collection: 'scratch', documents: [{ _id: 'a' }, { _id: 'b' }] }],
      ['dropCollection', { collection: 'scratch' }],
      ['deleteMany', { collection: 'customers', filter: { city: 'London' } }],
    ];
    for (const [op, body] of ops) expect((await mql(server.url, t.apiKey, op, body)).status, op).toBeLessThan(300);
    // Read-your-writes: the routed aggregation waits for the mirror to hold what came before it.
    const res = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP });
    expect(res.body.executedBy).toBe('external');
    expect(res.body.documents.map((d: any) => [d._id, d.total, d.who.map((w: any) => w.name)])).toEqual([
      [1, 30, []],
      [2, 13.5, []],
      [3, 7, ['Grace']],
      [5, 99, ['Dijkstra']],
    ]);
    expect(mirrored(t.tenantId, 'orders')).toEqual(await everything(server.url, t.apiKey, 'orders'));
    expect(mirrored(t.tenantId, 'customers')).toEqual(await everything(server.url, t.apiKey, 'customers'));
    expect(mongo.dbs.get(`tetra_${t.tenantId}`)?.has('scratch')).toBe(false);
    const health = await http(server.url, 'GET', '/api/health', { apiKey: t.apiKey });
    expect(health.body.mongodb).toMatchObject({ configured: true, mirror: { state: 'live', queuedBatches: 0 } });
    expect(health.body.mongodb.mirror.mirroredLsn).toBeGreaterThan(0);
    expect((await http(native.url, 'GET', '/api/health', { apiKey: (await signup(native.url)).apiKey })).body.mongodb).toEqual({ configured: false });
  });

  it('mirrors tetradb\'s indexes as plain MongoDB indexes, and drops them with tetradb', async () => {
    const t = await signup(server.url);
    await seed(server.url, t.apiKey);
    const db = `tetra_${t.tenantId}`;
    const names = () => mongo.indexes(db, 'orders').map((ix) => [ix.name, ix.key, ix.unique ?? false, ix.expireAfterSeconds ?? null]);
    expect((await mql(server.url, t.apiKey, 'createIndex', { collection: 'orders', keys: { customer: 1, total: -1 } })).status).toBe(200);
    expect((await mql(server.url, t.apiKey, 'createIndex', { collection: 'orders', keys: { at: 1 }, expireAfterSeconds: 3600 })).status).toBe(200);
    expect((await mql(server.url, t.apiKey, 'createIndex', { collection: 'orders', keys: { total: 1 }, unique: true })).status).toBe(200);
    // A routed aggregation waits for the mirror: everything before it is there.
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP })).body.executedBy).toBe('external');
    expect(names()).toEqual([
      ['tetra_customer_1_total_-1', { customer: 1, total: -1 }, false, null],
      ['tetra_at_1', { at: 1 }, false, null],
      ['tetra_total_1', { total: 1 }, false, null],
    ]);
    // A hint by name reaches MongoDB as the key pattern (the mirror names its indexes its own way).
    const hinted = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP, hint: 'customer_1_total_-1' });
    expect(hinted.body.executedBy).toBe('external');
    expect(mongo.commands.filter((c) => c.name === 'aggregate').at(-1)!.body['hint']).toEqual({ customer: 1, total: -1 });
    // allowDiskUse reaches MongoDB as given (absent: MongoDB's own default); a non-boolean is refused first, with MongoDB's message.
    for (const allowDiskUse of [false, true]) {
      const routed = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP, allowDiskUse });
      expect(routed.body.executedBy).toBe('external');
      expect(mongo.commands.filter((c) => c.name === 'aggregate').at(-1)!.body['allowDiskUse']).toBe(allowDiskUse);
    }
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP })).body.executedBy).toBe('external');
    expect(mongo.commands.filter((c) => c.name === 'aggregate').at(-1)!.body['allowDiskUse']).toBeUndefined();
    const badAllow = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP, allowDiskUse: 'yes' });
    expect(badAllow.status, badAllow.text).toBe(400);
    expect(badAllow.body.error.message).toBe("BSON field 'aggregate.allowDiskUse' is the wrong type 'string', expected type 'bool'");
    // maxTimeMS: the lower of it and the routing's own timeout reaches MongoDB; a malformed one is refused first, with MongoDB's message.
    const timed = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP, maxTimeMS: 1234 });
    expect(timed.body.executedBy).toBe('external');
    const sent = mongo.commands.filter((c) => c.name === 'aggregate').at(-1)!.body['maxTimeMS'] as number;
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThanOrEqual(1234);
    const before = mongo.commands.length;
    const badTime = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP, maxTimeMS: -5 });
    expect(badTime.status, badTime.text).toBe(400);
    expect(badTime.body.error.message).toBe('-5 value for maxTimeMS is out of range');
    expect(mongo.commands.slice(before).filter((c) => c.name === 'aggregate')).toEqual([]);
    const unknownHint = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP, hint: 'nope_1' });
    expect(unknownHint.status, unknownHint.text).toBe(400);
    expect(unknownHint.body.error.message).toMatch(/hint provided does not correspond to an existing index/);
    expect((await mql(server.url, t.apiKey, 'dropIndex', { collection: 'orders', index: 'at_1' })).status).toBe(200);
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP })).body.executedBy).toBe('external');
    expect(names().map((n) => n[0])).toEqual(['tetra_customer_1_total_-1', 'tetra_total_1']);
    // A hidden index is not there for routed queries either: its copy goes, and comes back unhidden.
    expect((await mql(server.url, t.apiKey, 'collMod', { collection: 'orders', index: { name: 'total_1', hidden: true } })).status).toBe(200);
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP })).body.executedBy).toBe('external');
    expect(names().map((n) => n[0])).toEqual(['tetra_customer_1_total_-1']);
    expect((await mql(server.url, t.apiKey, 'collMod', { collection: 'orders', index: { name: 'total_1', hidden: false } })).status).toBe(200);
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP })).body.executedBy).toBe('external');
    expect(names().map((n) => n[0])).toEqual(['tetra_customer_1_total_-1', 'tetra_total_1']);
  });

  it('keeps tenants apart: each has its own database, and a $lookup reads only its own collections', async () => {
    const a = await signup(server.url);
    const b = await signup(server.url);
    await seed(server.url, a.apiKey);
    expect((await mql(server.url, b.apiKey, 'insertMany', { collection: 'orders', documents: [{ _id: 1, customer: 'c1', total: 5 }] })).status).toBe(201);
    const res = await mql(server.url, b.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP });
    expect(res.body).toEqual({ documents: [{ _id: 1, customer: 'c1', total: 5, who: [] }], executedBy: 'external' });
    expect(mongo.docs(`tetra_${b.tenantId}`, 'customers')).toEqual([]);
    expect(mongo.docs(`tetra_${a.tenantId}`, 'customers')).toHaveLength(3);
  });

  it('refuses stages that could reach past the tenant\'s database, and JavaScript, before anything reaches MongoDB', async () => {
    const t = await signup(server.url);
    await seed(server.url, t.apiKey);
    const before = mongo.commands.filter((c) => c.name === 'aggregate').length;
    for (const [pipeline, names] of [
      [[{ $lookup: { from: 'customers', localField: 'customer', foreignField: '_id', as: 'w' } }, { $out: 'copy' }], '$out'],
      [[{ $lookup: { from: { db: 'other', coll: 'customers' }, localField: 'customer', foreignField: '_id', as: 'w' } }], '$lookup.from'],
      [[{ $facet: { x: [{ $merge: { into: { db: 'other', coll: 'x' } } }] } }], '$merge'],
      [[{ $facet: { x: [{ $unionWith: { coll: '', pipeline: [] } }] } }], '$unionWith.coll'],
      [[{ $graphLookup: { from: { db: 'admin' }, startWith: '$a', connectFromField: 'a', connectToField: 'b', as: 'c' } }], '$graphLookup.from'],
      [[{ $lookup: { from: 'customers', pipeline: [{ $match: { $where: 'true' } }], as: 'w' } }], '$where'],
      [[{ $facet: { x: [{ $group: { _id: null, f: { $accumulator: {} } } }] } }], '$accumulator'],
      [[{ $lookup: { from: 'customers', pipeline: [{ $currentOp: {} }], as: 'w' } }], '$currentOp'],
      [[{ $match: { $text: { $search: 'ada', $unknown: 1 } } }], '$unknown'],
      [[{ $match: { $text: 'ada' } }], '$text'],
    ] as const) {
      const res = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline });
      expect(res.status, JSON.stringify(pipeline)).toBe(400);
      expect(res.body.error.code).toBe('QUERY_ERROR');
      expect(res.body.error.message).toContain(names);
    }
    expect(mongo.commands.filter((c) => c.name === 'aggregate').length).toBe(before);
  });

  it('refuses a $merge in a pipeline that would be routed (MongoDB holds only a mirror); without routed stages, or without MongoDB, it writes natively', async () => {
    const t = await signup(server.url);
    await seed(server.url, t.apiKey);
    const before = mongo.commands.filter((c) => c.name === 'aggregate').length;
    for (const routed of [LOOKUP, FACET, GRAPH, [{ $match: { $text: { $search: 'ada' } } }]]) {
      const res = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: [...routed, { $merge: 'copy' }] });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('QUERY_ERROR');
      expect(res.body.error.message).toContain('$merge cannot be used in a pipeline that runs on the external MongoDB');
    }
    expect(mongo.commands.filter((c) => c.name === 'aggregate').length).toBe(before);
    expect((await mql(server.url, t.apiKey, 'listCollections', {})).body.collections.map((c: { name: string }) => c.name)).not.toContain('copy');
    // No routed stage: native, and the write is mirrored as any other.
    const plain = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: [{ $match: { total: { $gte: 10 } } }, { $merge: 'copy' }] });
    expect(plain.body).toEqual({ documents: [], executedBy: 'native' });
    expect((await everything(server.url, t.apiKey, 'copy')).map((d: any) => d._id)).toEqual([1, 2]);
    // A routed read of it waits for the mirror, which then holds the merged documents.
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'copy', pipeline: LOOKUP })).body.executedBy).toBe('external');
    expect(mirrored(t.tenantId, 'copy')).toEqual(await everything(server.url, t.apiKey, 'copy'));
    // Without MongoDB, the routed stages run natively and the $merge writes.
    const p = await signup(native.url);
    await seed(native.url, p.apiKey);
    const local = await mql(native.url, p.apiKey, 'aggregate', { collection: 'orders', pipeline: [...LOOKUP, { $merge: 'copy' }] });
    expect(local.body).toEqual({ documents: [], executedBy: 'native' });
    expect((await everything(native.url, p.apiKey, 'copy')).map((d: any) => [d._id, d.who.length])).toEqual([[1, 1], [2, 1], [3, 1], [4, 0]]);
  });

  it('refuses a $out in a pipeline that would be routed; without routed stages it replaces the collection natively, and the mirror follows the swap', async () => {
    const t = await signup(server.url);
    await seed(server.url, t.apiKey);
    const db = `tetra_${t.tenantId}`;
    for (const routed of [LOOKUP, FACET, GRAPH, [{ $match: { $text: { $search: 'ada' } } }]]) {
      const res = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: [...routed, { $out: 'copy' }] });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.message).toContain('$out cannot be used in a pipeline that runs on the external MongoDB');
    }
    // A target the mirror already holds, with an index: replaced on both sides.
    expect((await mql(server.url, t.apiKey, 'insertMany', { collection: 'copy', documents: [{ _id: 'old', total: 0 }] })).status).toBe(201);
    expect((await mql(server.url, t.apiKey, 'createIndex', { collection: 'copy', keys: { total: 1 } })).status).toBe(200);
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'copy', pipeline: LOOKUP })).body.executedBy).toBe('external');
    expect(mirrored(t.tenantId, 'copy')).toEqual([{ _id: 'old', total: 0 }]);
    const plain = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: [{ $match: { total: { $gte: 10 } } }, { $out: 'copy' }] });
    expect(plain.body).toEqual({ documents: [], executedBy: 'native' });
    expect((await everything(server.url, t.apiKey, 'copy')).map((d: any) => d._id)).toEqual([1, 2]);
    // A routed read of it waits for the mirror, which then holds the new documents only.
    const routed = await mql(server.url, t.apiKey, 'aggregate', { collection: 'copy', pipeline: LOOKUP });
    expect(routed.body.executedBy).toBe('external');
    expect(routed.body.documents.map((d: any) => d._id)).toEqual([1, 2]);
    expect(mirrored(t.tenantId, 'copy')).toEqual(await everything(server.url, t.apiKey, 'copy'));
    expect(mongo.indexes(db, 'copy').map((i) => i.name)).toContain('tetra_total_1');
    // The hidden collection the $out wrote into never reached MongoDB.
    expect([...(mongo.dbs.get(db)?.keys() ?? [])].filter((n) => n.startsWith('system.'))).toEqual([]);
    expect(mongo.commands.filter((c) => c.db === db && JSON.stringify(c.body).includes('agg_out'))).toEqual([]);
    // Into a collection the mirror does not have yet: created there with the documents.
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: [{ $match: { total: { $lt: 10 } } }, { $out: 'fresh' }] })).status).toBe(200);
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'fresh', pipeline: LOOKUP })).body.executedBy).toBe('external');
    expect(mirrored(t.tenantId, 'fresh')).toEqual(await everything(server.url, t.apiKey, 'fresh'));
    expect(mirrored(t.tenantId, 'fresh')).toHaveLength(2);
  });

  it('follows a renameCollection: the old name dropped, the documents and indexes under the new one, dropTarget included', async () => {
    const t = await signup(server.url);
    await seed(server.url, t.apiKey);
    const db = `tetra_${t.tenantId}`;
    expect((await mql(server.url, t.apiKey, 'createIndex', { collection: 'orders', keys: { total: 1 } })).status).toBe(200);
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP })).body.executedBy).toBe('external');
    expect(mirrored(t.tenantId, 'orders')).toHaveLength(4);
    const renamed = await mql(server.url, t.apiKey, 'renameCollection', { collection: 'orders', to: 'sales' });
    expect(renamed.status, renamed.text).toBe(200);
    const routed = await mql(server.url, t.apiKey, 'aggregate', { collection: 'sales', pipeline: LOOKUP });
    expect(routed.body.executedBy).toBe('external');
    expect(routed.body.documents.map((d: any) => [d._id, d.who.length])).toEqual([[1, 1], [2, 1], [3, 1], [4, 0]]);
    expect(mirrored(t.tenantId, 'sales')).toEqual(await everything(server.url, t.apiKey, 'sales'));
    expect(mongo.docs(db, 'orders')).toEqual([]);
    expect(mongo.indexes(db, 'sales').map((i) => i.name)).toContain('tetra_total_1');
    // Onto an existing collection with dropTarget: the mirror holds the renamed documents only.
    const dropped = await mql(server.url, t.apiKey, 'renameCollection', { collection: 'customers', to: 'sales', dropTarget: true });
    expect(dropped.status, dropped.text).toBe(200);
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'sales', pipeline: LOOKUP })).body.executedBy).toBe('external');
    expect(mirrored(t.tenantId, 'sales')).toEqual(await everything(server.url, t.apiKey, 'sales'));
    expect(mirrored(t.tenantId, 'sales').map((d: any) => d._id)).toEqual(['c1', 'c2', 'c3']);
    expect(mongo.docs(db, 'customers')).toEqual([]);
  });

  it('hands MongoDB the operators the native stages lack (a routed pipeline has MongoDB\'s language)', async () => {
    const t = await signup(server.url);
    await seed(server.url, t.apiKey);
    const pipeline = [
      { $match: { _id: 'c3' } },
      { $graphLookup: { from: 'customers', startWith: '$manager', connectFromField: 'manager', connectToField: '_id', as: 'chain' } },
      { $project: { chain: { $sortArray: { input: '$chain._id', sortBy: 1 } }, ratio: { $toDecimal: '1.5' } } },
    ];
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'customers', pipeline })).body).toEqual({ documents: [{ _id: 'c3', chain: ['c1', 'c2'], ratio: 1.5 }], executedBy: 'external' });
    const p = await signup(native.url);
    await seed(native.url, p.apiKey);
    const refused = await mql(native.url, p.apiKey, 'aggregate', { collection: 'customers', pipeline });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('$toDecimal');
  });

  it('answers $text from MongoDB, with a text index made there; without one, MongoDB\'s error; without MongoDB, natively', async () => {
    const t = await signup(server.url);
    await seed(server.url, t.apiKey);
    const search = [{ $match: { $text: { $search: 'grace' } } }, { $project: { name: 1 } }];
    const missing = await mql(server.url, t.apiKey, 'aggregate', { collection: 'customers', pipeline: search });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('QUERY_ERROR');
    expect(missing.body.error.message).toMatch(/text index required/);
    // The text index is made on the MongoDB side; the mirror keeps it (a copy empties collections, it does not drop them).
    const { MongoClient } = await import('mongodb');
    const client = new MongoClient(mongo.uri);
    await client.db(`tetra_${t.tenantId}`).collection('customers').createIndex({ name: 'text' });
    await client.close();
    const found = await mql(server.url, t.apiKey, 'aggregate', { collection: 'customers', pipeline: search });
    expect(found.body).toEqual({ documents: [{ _id: 'c2', name: 'Grace' }], executedBy: 'external' });
    const p = await signup(native.url);
    await seed(native.url, p.apiKey);
    const unindexed = await mql(native.url, p.apiKey, 'aggregate', { collection: 'customers', pipeline: search });
    expect(unindexed.status).toBe(400);
    expect(unindexed.body.error.message).toBe('text index required for $text query');
    expect((await mql(native.url, p.apiKey, 'createIndex', { collection: 'customers', keys: { name: 'text' } })).status).toBe(200);
    const local = await mql(native.url, p.apiKey, 'aggregate', { collection: 'customers', pipeline: search });
    expect(local.body).toEqual({ documents: [{ _id: 'c2', name: 'Grace' }], executedBy: 'native' });
  });

  it('mirrors a tetradb text index as a MongoDB text index (same fields, weights and languages), which a routed $text reads', async () => {
    const t = await signup(server.url);
    await seed(server.url, t.apiKey);
    const db = `tetra_${t.tenantId}`;
    const created = await mql(server.url, t.apiKey, 'createIndex', { collection: 'customers', keys: { name: 'text' }, weights: { name: 5, notes: 2 }, default_language: 'spanish', language_override: 'idioma' });
    expect(created.status, created.text).toBe(200);
    const search = [{ $match: { $text: { $search: 'grace' } } }, { $project: { name: 1 } }];
    const found = await mql(server.url, t.apiKey, 'aggregate', { collection: 'customers', pipeline: search });
    expect(found.body).toEqual({ documents: [{ _id: 'c2', name: 'Grace' }], executedBy: 'external' });
    const text = mongo.indexes(db, 'customers').find((ix) => ix.name === 'tetra_name_text');
    expect(text).toMatchObject({ key: { name: 'text', notes: 'text' }, weights: { name: 5, notes: 2 }, default_language: 'spanish', language_override: 'idioma' });
    // Dropped with tetradb.
    expect((await mql(server.url, t.apiKey, 'dropIndex', { collection: 'customers', index: 'name_text' })).status).toBe(200);
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP })).body.executedBy).toBe('external');
    expect(mongo.indexes(db, 'customers').map((ix) => ix.name)).not.toContain('tetra_name_text');
  });

  it('mirrors a compound partial text index with its prefix and suffix fields in order, and its filter', async () => {
    const t = await signup(server.url);
    await seed(server.url, t.apiKey);
    const db = `tetra_${t.tenantId}`;
    const created = await mql(server.url, t.apiKey, 'createIndex', {
      collection: 'customers',
      keys: { city: 1, name: 'text', manager: -1 },
      partialFilterExpression: { since: { $gte: { $date: '2020-01-01T00:00:00Z' } } },
    });
    expect(created.status, created.text).toBe(200);
    // A routed stage makes the mirror catch up.
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP })).body.executedBy).toBe('external');
    const text = mongo.indexes(db, 'customers').find((ix) => ix.name === 'tetra_city_1_name_text_manager_-1');
    expect(text).toMatchObject({ key: { city: 1, name: 'text', manager: -1 }, weights: { name: 1 }, default_language: 'english', language_override: 'language' });
    expect(Object.keys(text!.key as object)).toEqual(['city', 'name', 'manager']);
    // The filter as MongoDB takes it: the Extended JSON date is a date there.
    expect((text!.partialFilterExpression as { since: { $gte: unknown } }).since.$gte).toEqual(new Date('2020-01-01T00:00:00Z'));
  });
});

describe('the mirror when MongoDB goes away and comes back', () => {
  it('runs routed stages natively meanwhile ($text too, through the native text index), queues the writes, and ships them once MongoDB is back', async () => {
    const t = await signup(server.url);
    await seed(server.url, t.apiKey);
    expect((await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP })).body.executedBy).toBe('external');
    await mongo.stop();
    try {
      expect((await mql(server.url, t.apiKey, 'insertOne', { collection: 'orders', document: { _id: 6, customer: 'c2', total: 3 } })).status).toBe(201);
      const fallback = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP });
      expect(fallback.body.executedBy).toBe('native');
      expect(fallback.body.documents.map((d: any) => d._id)).toEqual([1, 2, 3, 4, 6]);
      expect((await mql(server.url, t.apiKey, 'createIndex', { collection: 'customers', keys: { name: 'text' } })).status).toBe(200);
      const text = await mql(server.url, t.apiKey, 'aggregate', { collection: 'customers', pipeline: [{ $match: { $text: { $search: 'ada' } } }, { $project: { name: 1 } }] });
      expect(text.body).toEqual({ documents: [{ _id: 'c1', name: 'Ada' }], executedBy: 'native' });
    } finally {
      await mongo.start();
    }
    // Back: the queued insert is shipped (retries back off up to 10 s), then aggregations route again.
    const deadline = Date.now() + 20_000;
    let res;
    do {
      res = await mql(server.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP });
    } while (res.body.executedBy !== 'external' && Date.now() < deadline);
    expect(res.body.executedBy).toBe('external');
    expect(res.body.documents.map((d: any) => d._id)).toEqual([1, 2, 3, 4, 6]);
    expect(mirrored(t.tenantId, 'orders')).toEqual(await everything(server.url, t.apiKey, 'orders'));
  }, 40_000);

  it('counts a routed pipeline\'s maxTimeMS from the request: run natively after MongoDB did not catch up, it has only what is left', async () => {
    const own = await startMongoStandIn();
    const srv = await startServer({ mongodbUri: own.uri, mongodbTimeoutMs: 1500 });
    try {
      const t = await signup(srv.url);
      await seed(srv.url, t.apiKey);
      expect((await mql(srv.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP })).body.executedBy).toBe('external');
      // A write MongoDB has not done: it stays up (hello and ping answered, so the mirror never
      // counts it away) but holds its writes. Each routed aggregation waits the routing's 1.5 s
      // for the write, then runs natively. (With MongoDB stopped instead, the mirror's failed
      // shipment could mark it away before the aggregation came, which then ran natively at once.)
      own.hold(['insert', 'update', 'delete']);
      expect((await mql(srv.url, t.apiKey, 'insertOne', { collection: 'orders', document: { _id: 6, customer: 'c2', total: 3 } })).status).toBe(201);
      const spent = await mql(srv.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP, maxTimeMS: 1000 });
      expect(spent.status, spent.text).toBe(400);
      expect(spent.body.error).toMatchObject({ code: 'QUERY_ERROR', message: 'operation exceeded time limit', details: { maxTimeMS: 1000 } });
      const left = await mql(srv.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP, maxTimeMS: 10_000 });
      expect(left.status, left.text).toBe(200);
      expect(left.body.executedBy).toBe('native');
      expect(left.body.documents.map((d: any) => d._id)).toEqual([1, 2, 3, 4, 6]);
      // Once MongoDB does the write, the pipeline goes to it again.
      own.release();
      const back = await mql(srv.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP, maxTimeMS: 10_000 });
      expect(back.body.executedBy).toBe('external');
      expect(back.body.documents.map((d: any) => d._id)).toEqual([1, 2, 3, 4, 6]);
    } finally {
      await srv.stop();
      await own.stop();
    }
  }, 20_000);

  it('copies a tenant again when its mirror is behind: MongoDB wiped, or more changes than the queue holds', async () => {
    const own = await startMongoStandIn();
    const dir = tempDir('mirror-copy');
    let s = await startServer({ dataDir: dir.path, mongodbUri: own.uri, mongodbTimeoutMs: 1500, mongodbQueueBytes: 64 * 1024 });
    try {
      const t = await signup(s.url);
      await seed(s.url, t.apiKey);
      expect((await mql(s.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: LOOKUP })).body.executedBy).toBe('external');
      // On the MongoDB side: an index of the operator's own, and one named as the mirror names its
      // own that tetradb does not have (as if dropped while MongoDB was away): the copy keeps the
      // first and drops the second.
      const { MongoClient } = await import('mongodb');
      const client = new MongoClient(own.uri);
      await client.db(`tetra_${t.tenantId}`).collection('orders').createIndex({ total: 1 }, { name: 'ops_total' });
      await client.db(`tetra_${t.tenantId}`).collection('orders').createIndex({ gone: 1 }, { name: 'tetra_gone_1' });
      await client.close();
      // MongoDB away while ~200 KB of documents arrive: past the 64 KiB queue, the changes are dropped.
      await own.stop();
      const big = Array.from({ length: 200 }, (_, i) => ({ _id: 100 + i, customer: 'c1', total: i, pad: 'x'.repeat(1000) }));
      expect((await mql(s.url, t.apiKey, 'insertMany', { collection: 'orders', documents: big })).status).toBe(201);
      expect((await mql(s.url, t.apiKey, 'deleteOne', { collection: 'orders', filter: { _id: 1 } })).status).toBe(200);
      await own.start();
      const deadline = Date.now() + 20_000;
      while ((await mql(s.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: [{ $count: 'n' }, { $lookup: { from: 'x', pipeline: [], as: 'y' } }] })).body.executedBy !== 'external' && Date.now() < deadline);
      expect(own.docs(`tetra_${t.tenantId}`, 'orders')).toHaveLength(203);
      expect(own.docs(`tetra_${t.tenantId}`, 'orders').some((d) => d._id === 1)).toBe(false);
      expect(own.indexes(`tetra_${t.tenantId}`, 'orders').map((ix) => ix.name)).toEqual(['ops_total']);
      // Restart against a wiped MongoDB: the first routed aggregation finds everything there.
      await s.stop({ keepData: true });
      await own.stop();
      await own.start({ wipe: true });
      s = await startServer({ dataDir: dir.path, mongodbUri: own.uri, mongodbTimeoutMs: 5000 });
      const res = await mql(s.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: [{ $match: { _id: { $lt: 100 } } }, ...LOOKUP] });
      expect(res.body.executedBy).toBe('external');
      expect(res.body.documents.map((d: any) => d._id)).toEqual([2, 3, 4]);
      expect(own.docs(`tetra_${t.tenantId}`, 'customers')).toHaveLength(3);
      expect(own.docs('tetra_mirror', 'tenants').find((d) => d._id === t.tenantId)).toBeDefined();
    } finally {
      await s.stop();
      dir.remove();
      await own.stop();
    }
  }, 60_000);

  it('after a SIGKILL, holds every acknowledged write once the tenant opens again', async () => {
    const own = await startMongoStandIn();
    const dir = tempDir('mirror-kill');
    const env = { TETRA_MONGODB_URI: own.uri, TETRA_MONGODB_TIMEOUT_MS: '5000' };
    let proc = await spawnServer(dir.path, [], env);
    try {
      const t = await signup(proc.url);
      await seed(proc.url, t.apiKey);
      const acked: number[] = [];
      for (let i = 0; i < 40; i++) {
        const res = await mql(proc.url, t.apiKey, 'insertOne', { collection: 'orders', document: { _id: 1000 + i, customer: 'c2', total: i } });
        if (res.status === 201) acked.push(1000 + i);
      }
      proc.child.kill('SIGKILL');
      await proc.exited;
      proc = await spawnServer(dir.path, [], env);
      const res = await mql(proc.url, t.apiKey, 'aggregate', { collection: 'orders', pipeline: [{ $match: { _id: { $gte: 1000 } } }, ...LOOKUP] });
      expect(res.body.executedBy, proc.output()).toBe('external');
      expect(res.body.documents.map((d: any) => d._id)).toEqual(acked);
      expect(own.docs(`tetra_${t.tenantId}`, 'orders').filter((d) => (d._id as number) >= 1000).map((d) => d._id)).toEqual(acked);
    } finally {
      proc.child.kill('SIGKILL');
      await proc.exited;
      dir.remove();
      await own.stop();
    }
  }, 60_000);
});
