// $collStats over HTTP: the document MongoDB gives (ns, host, localTime; storageStats and count
// when asked), sizes that follow the data (documents' bytes, pages of 8 KiB, the overflow pages
// of a large document, one size per index), the scale, a collection that does not exist, and
// every refusal of the stage's place and argument, naming the statistic tetradb does not keep.
import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { http, serverForFile, signup, startServer } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const PAGE = 8192;
// What a document's MessagePack takes, by the library itself (each map standing alone, as stored).
const messagePack = new Packr({ useRecords: false });
const packedSize = (docs: readonly object[]): number => docs.reduce((n, d) => n + messagePack.pack(d).length, 0);

async function collStats(collection: string, spec: Record<string, unknown>): Promise<any> {
  const res = await mql('aggregate', { collection, pipeline: [{ $collStats: spec }] });
  expect(res.status, res.text).toBe(200);
  expect(res.body.documents).toHaveLength(1);
  return res.body.documents[0];
}

describe('$collStats', () => {
  it("gives MongoDB's document: ns, host and localTime, then storageStats and count when asked", async () => {
    const c = await file.seed(Array.from({ length: 50 }, (_, i) => ({ _id: i, a: i, s: 'x'.repeat(i) })));
    const before = Date.now();
    const bare = await collStats(c, {});
    expect(Object.keys(bare)).toEqual(['ns', 'host', 'localTime']);
    expect(bare.ns).toBe(`tenant.${c}`);
    expect(typeof bare.host).toBe('string');
    expect(bare.host.length).toBeGreaterThan(0);
    expect(Date.parse(bare.localTime.$date)).toBeGreaterThanOrEqual(before - 1000);
    const both = await collStats(c, { storageStats: {}, count: {} });
    expect(Object.keys(both)).toEqual(['ns', 'host', 'localTime', 'storageStats', 'count']);
    expect(both.count).toBe(50);
    expect(Object.keys(both.storageStats)).toEqual([
      'size', 'count', 'avgObjSize', 'numOrphanDocs', 'storageSize', 'freeStorageSize', 'capped', 'nindexes',
      'indexBuilds', 'totalIndexSize', 'totalSize', 'indexSizes', 'scaleFactor',
    ]);
    expect(both.storageStats).toMatchObject({ count: 50, numOrphanDocs: 0, freeStorageSize: 0, capped: false, nindexes: 1, indexBuilds: [], scaleFactor: 1 });
    expect(Object.keys(both.storageStats.indexSizes)).toEqual(['_id_']);
    expect((await collStats(c, { count: {} })).count).toBe(50);
    // Later stages see it as a document.
    const projected = await mql('aggregate', { collection: c, pipeline: [{ $collStats: { count: {} } }, { $project: { _id: 0, n: '$count' } }] });
    expect(projected.body.documents).toEqual([{ n: 50 }]);
  });

  it('measures the data: documents, pages, a large document on overflow pages, each index', async () => {
    const seeded = Array.from({ length: 3000 }, (_, i) => ({ _id: i, a: i, b: i % 7, s: 'y'.repeat(i % 300) }));
    const c = await file.seed(seeded);
    const small = (await collStats(c, { storageStats: {} })).storageStats;
    // The documents' MessagePack, byte for byte.
    expect(small.size).toBe(packedSize(seeded));
    expect(small.avgObjSize).toBe(Math.trunc(small.size / 3000));
    expect(small.storageSize % PAGE).toBe(0);
    expect(small.storageSize).toBeGreaterThanOrEqual(small.size);
    expect(small.totalSize).toBe(small.storageSize + small.totalIndexSize);
    await file.createIndex(c, { a: 1 });
    await file.createIndex(c, { b: 1, a: -1 }, { name: 'ba' });
    const indexed = (await collStats(c, { storageStats: {} })).storageStats;
    expect(indexed.nindexes).toBe(3);
    expect(Object.keys(indexed.indexSizes)).toEqual(['_id_', 'a_1', 'ba']);
    for (const name of ['a_1', 'ba']) {
      expect(indexed.indexSizes[name]).toBeGreaterThan(0);
      expect(indexed.indexSizes[name] % PAGE).toBe(0);
    }
    expect(indexed.totalIndexSize).toBe(Object.values(indexed.indexSizes as Record<string, number>).reduce((s, v) => s + v, 0));
    expect(indexed.size).toBe(small.size);
    // A document too large for a leaf goes to overflow pages, which count in storageSize.
    const big = await mql('insertOne', { collection: c, document: { _id: 'big', s: 'z'.repeat(200_000) } });
    expect(big.status, big.text).toBe(201);
    const grown = (await collStats(c, { storageStats: {} })).storageStats;
    expect(grown.count).toBe(3001);
    expect(grown.size - indexed.size).toBe(packedSize([{ _id: 'big', s: 'z'.repeat(200_000) }]));
    expect(grown.storageSize - indexed.storageSize).toBeGreaterThanOrEqual(200_000);
    // Deleting documents: the count and size follow at once.
    const del = await mql('deleteMany', { collection: c, filter: { _id: { $lt: 1000 } } });
    expect(del.status, del.text).toBe(200);
    const after = await collStats(c, { storageStats: {}, count: {} });
    expect(after.count).toBe(2001);
    expect(after.storageStats.count).toBe(2001);
    expect(after.storageStats.size).toBe(grown.size - packedSize(seeded.slice(0, 1000)));
  });

  it('divides sizes by the scale (its whole part), not avgObjSize', async () => {
    const c = await file.seed(Array.from({ length: 500 }, (_, i) => ({ _id: i, s: 'w'.repeat(300) })));
    await file.createIndex(c, { s: 1 });
    const bytes = (await collStats(c, { storageStats: {} })).storageStats;
    for (const scale of [1024, 1023.999, 7]) {
      const whole = Math.trunc(scale);
      const kb = (await collStats(c, { storageStats: { scale } })).storageStats;
      expect(kb.scaleFactor).toBe(whole);
      for (const field of ['size', 'storageSize', 'totalIndexSize', 'totalSize']) expect(kb[field], field).toBe(Math.trunc(bytes[field] / whole));
      expect(kb.indexSizes).toEqual({ _id_: Math.trunc(bytes.indexSizes._id_ / whole), s_1: Math.trunc(bytes.indexSizes.s_1 / whole) });
      expect(kb.avgObjSize).toBe(bytes.avgObjSize);
      expect(kb.count).toBe(500);
    }
  });

  it('answers a collection that does not exist with its bare document, and refuses its statistics', async () => {
    const bare = await collStats('no_such_collection', {});
    expect(bare.ns).toBe('tenant.no_such_collection');
    await file.refuses('aggregate', { collection: 'no_such_collection', pipeline: [{ $collStats: { count: {} } }] }, 404, 'NOT_FOUND', 'Unable to retrieve count in $collStats stage :: caused by :: Collection [tenant.no_such_collection] not found.');
    await file.refuses('aggregate', { collection: 'no_such_collection', pipeline: [{ $collStats: { storageStats: {}, count: {} } }] }, 404, 'NOT_FOUND', 'Unable to retrieve storageStats in $collStats stage');
  });

  it('refuses $collStats anywhere but first, arguments MongoDB refuses, and the statistics tetradb does not keep', async () => {
    const c = await file.seed([{ _id: 1 }]);
    const refuses = (pipeline: unknown[], message: string) => file.refuses('aggregate', { collection: c, pipeline }, 400, 'QUERY_ERROR', message);
    await refuses([{ $match: {} }, { $collStats: {} }], '$collStats is only valid as the first stage in a pipeline');
    await refuses([{ $facet: { x: [{ $collStats: {} }] } }], '$collStats is not allowed to be used within a $facet stage');
    await refuses([{ $lookup: { from: c, pipeline: [{ $collStats: {} }], as: 'x' } }], "$collStats is not allowed within a $lookup's sub-pipeline");
    await refuses([{ $unionWith: { coll: c, pipeline: [{ $collStats: {} }] } }], "$collStats is not allowed within a $unionWith's sub-pipeline");
    await refuses([{ $collStats: 1 }], '$collStats must take a nested object but found: 1');
    await refuses([{ $collStats: { other: {} } }], "BSON field '$collStats.other' is an unknown field.");
    await refuses([{ $collStats: { count: 1 } }], "BSON field '$collStats.count' is the wrong type 'int', expected type 'object'");
    await refuses([{ $collStats: { count: { x: 1 } } }], "BSON field '$collStats.count.x' is an unknown field.");
    await refuses([{ $collStats: { storageStats: true } }], "BSON field '$collStats.storageStats' is the wrong type 'bool', expected type 'object'");
    await refuses([{ $collStats: { storageStats: { scale: 0 } } }], "BSON field 'scale' value must be >= 1, actual value '0'");
    await refuses([{ $collStats: { storageStats: { scale: -3.5 } } }], "BSON field 'scale' value must be >= 1, actual value '-3'");
    await refuses([{ $collStats: { storageStats: { scale: 'k' } } }], "BSON field '$collStats.storageStats.scale' is the wrong type 'string'");
    await refuses([{ $collStats: { storageStats: { verbose: true } } }], "BSON field '$collStats.storageStats.verbose' is an unknown field.");
    await refuses([{ $collStats: { latencyStats: {} } }], '$collStats: latencyStats is not supported');
    await refuses([{ $collStats: { queryExecStats: {} } }], '$collStats: queryExecStats is not supported');
  });

  it('gives the same sizes from changes not yet checkpointed as from their pages after a restart', async () => {
    const first = await startServer();
    let second: Awaited<ReturnType<typeof startServer>> | undefined;
    try {
      const { apiKey } = await signup(first.url, 'stats');
      const call = (url: string, op: string, json: unknown) => http(url, 'POST', `/api/mql/${op}`, { json, apiKey });
      const documents = Array.from({ length: 2000 }, (_, i) => ({ _id: i, a: i % 13, s: 'v'.repeat(i % 200) }));
      expect((await call(first.url, 'insertMany', { collection: 'c', documents })).status).toBe(201);
      expect((await call(first.url, 'insertOne', { collection: 'c', document: { _id: 'big', s: 'q'.repeat(100_000) } })).status).toBe(201);
      expect((await call(first.url, 'createIndex', { collection: 'c', keys: { a: 1 } })).status).toBe(200);
      const stats = async (url: string) => {
        const res = await call(url, 'aggregate', { collection: 'c', pipeline: [{ $collStats: { storageStats: {}, count: {} } }] });
        expect(res.status, res.text).toBe(200);
        const { storageStats, count } = res.body.documents[0];
        return { storageStats, count };
      };
      const before = await stats(first.url);
      expect(before.count).toBe(2001);
      expect(before.storageStats.storageSize).toBeGreaterThan(100_000);
      await first.stop({ keepData: true });
      second = await startServer({ dataDir: first.dataDir });
      expect(await stats(second.url)).toEqual(before);
    } finally {
      await second?.stop();
    }
  });
});
