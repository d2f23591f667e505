// Stores written before `_id`s were kept exact: their long string ids sit under shortened keys,
// which upgradeIdKeys moves (with their index entries) when the store opens.
import { describe, expect, it } from 'vitest';
import { docsTree, indexTree, readCollection, putCollection, type CollectionInfo } from '../../engine/docs/catalog.js';
import { docsFind, docsInsert, docsCreateIndex, upgradeIdKeys } from '../../engine/docs/index.js';
import { legacyIdComponent } from '../../engine/docs/index-key.js';
import { decodeDocument, idKey } from '../../engine/docs/doc-codec.js';
import { indexEntryKeys } from '../../engine/docs/docs-model.js';
import { legacyEntryKeys } from '../../engine/docs/upgrade.js';
import { encodeKey } from '../../engine/storage/index.js';
import { TenantStore, type BatchOp } from '../../engine/tenant/index.js';
import { http, signup, startServer } from '../helpers/server.js';
import { storeOptions } from '../helpers/store-fixture.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';

const newDir = dirsRemovedAfterEach();
// Before the upgrade, a unique index held one document per shortened key: the fixtures' long
// values sharing a 200-character prefix come only after it.
const LONG = 'y'.repeat(240);

/** Rewrites collection `name` of `store` as the old code stored it: long ids under shortened keys, shortened unique entries without ids, no exactIds mark. */
async function makeLegacy(store: TenantStore, name: string): Promise<void> {
  const info = readCollection(store, name)!;
  const ops: BatchOp[] = [];
  for (const [key, raw] of [...store.scan(docsTree(info))].map(([k, v]) => [Buffer.from(k), Buffer.from(v)] as const)) {
    const doc = decodeDocument(raw);
    const id = doc._id;
    const legacyKey = typeof id === 'string' && id.length > 200 ? encodeKey([legacyIdComponent(id).part]) : key;
    if (legacyKey !== key) ops.push({ op: 'delete', tree: docsTree(info), key }, { op: 'put', tree: docsTree(info), key: legacyKey, value: raw });
    for (const index of info.indexes) {
      for (const k of indexEntryKeys(index, doc)) ops.push({ op: 'delete', tree: indexTree(info, index), key: k });
      for (const k of legacyEntryKeys(index, doc)) ops.push({ op: 'put', tree: indexTree(info, index), key: k, value: legacyKey });
    }
  }
  const { exactIds: _, ...old } = info;
  ops.push(putCollection(old as CollectionInfo));
  await store.write(ops);
}

describe('upgrading long _id keys written before ids were exact', () => {
  it('moves shortened keys and their index entries; finds, index reads and new inserts then work, and a second open changes nothing', async () => {
    const dir = newDir('upgrade-ids');
    let store = await TenantStore.open(dir, storeOptions());
    await docsInsert(store, 'c', [
      { _id: `${LONG}-1`, city: 'Rome', n: 1, code: `${LONG}:one` },
      { _id: 'short', city: 'Rome', n: 2, code: 'two' },
      { _id: `${'z'.repeat(230)}`, city: 'Lima', n: 3, code: `${'q'.repeat(240)}:three` },
      { _id: 'm', city: 'Oslo', n: 6, code: `${'w'.repeat(240)}:six` },
    ]).durable;
    await (await docsCreateIndex(store, 'c', { city: 1 })).durable;
    await (await docsCreateIndex(store, 'c', { n: 1 }, { unique: true })).durable;
    await (await docsCreateIndex(store, 'c', { code: -1 }, { unique: true })).durable;
    await makeLegacy(store, 'c');
    await store.close();

    store = await TenantStore.open(dir, storeOptions());
    // The fixture really is the old layout: the new code does not find the long id by key.
    expect(store.get(docsTree(readCollection(store, 'c')!), idKey(`${LONG}-1`))).toBeUndefined();
    expect(readCollection(store, 'c')!.exactIds).toBeUndefined();
    expect(await upgradeIdKeys(store)).toBe(2);
    expect(readCollection(store, 'c')!.exactIds).toBe(true);
    const find = async (filter: unknown) => (await docsFind(store, 'c', { filter, sort: { n: 1 }, projection: { n: 1, _id: 0 } })).documents;
    expect(await find({ _id: `${LONG}-1` })).toEqual([{ n: 1 }]);
    expect(await find({ city: 'Rome' })).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await find({ n: 3 })).toEqual([{ n: 3 }]);
    expect(await find({ n: { $gte: 1 } })).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 6 }]);
    expect(await find({ code: `${'w'.repeat(240)}:six` })).toEqual([{ n: 6 }]);
    expect(await find({ code: `${'q'.repeat(240)}:three` })).toEqual([{ n: 3 }]);
    await docsInsert(store, 'c', [{ _id: `${LONG}-2`, city: 'Rome', n: 4, code: `${LONG}:four` }]).durable;
    expect(await find({ city: 'Rome' })).toEqual([{ n: 1 }, { n: 2 }, { n: 4 }]);
    // The unique index on long codes holds its entries with ids now: a true duplicate is still refused.
    expect(() => docsInsert(store, 'c', [{ _id: 'dup', n: 5, code: `${LONG}:one` }])).toThrow(/duplicate key/);
    // Every entry of every index names a document that holds it, and none is left in the old layout.
    const info = readCollection(store, 'c')!;
    for (const index of info.indexes) {
      const stored = [...store.scan(indexTree(info, index))].map(([k]) => Buffer.from(k).toString('hex')).sort();
      const expected = [...store.scan(docsTree(info))].flatMap(([, raw]) => indexEntryKeys(index, decodeDocument(Buffer.from(raw)))).map((k) => k.toString('hex')).sort();
      expect(stored, index.name).toEqual(expected);
    }
    await store.close();

    store = await TenantStore.open(dir, storeOptions());
    const lsn = store.lsn;
    expect(await upgradeIdKeys(store)).toBe(0);
    expect(store.lsn).toBe(lsn);
    await store.close();
  });

  it('runs when the server opens a tenant, before its first request', async () => {
    const server = await startServer();
    const { apiKey, tenantId } = await signup(server.url);
    const mql = (op: string, json: unknown) => http(server.url, 'POST', `/api/mql/${op}`, { json, apiKey });
    expect((await mql('insertMany', { collection: 'p', documents: [{ _id: `${LONG}-a`, v: 1 }] })).status).toBe(201);
    await server.stop({ keepData: true });
    const store = await TenantStore.open(`${server.dataDir}/tenants/${tenantId}`, storeOptions());
    await makeLegacy(store, 'p');
    await store.close();

    const again = await startServer({ dataDir: server.dataDir });
    try {
      const call = (op: string, json: unknown) => http(again.url, 'POST', `/api/mql/${op}`, { json, apiKey });
      expect((await call('findOne', { collection: 'p', filter: { _id: `${LONG}-a` } })).body.document).toEqual({ _id: `${LONG}-a`, v: 1 });
      expect((await call('insertOne', { collection: 'p', document: { _id: `${LONG}-b`, v: 2 } })).status).toBe(201);
      expect((await call('countDocuments', { collection: 'p' })).body.count).toBe(2);
    } finally {
      await again.stop();
    }
  });
});
