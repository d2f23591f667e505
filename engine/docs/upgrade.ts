/**
 * Upgrades of stored documents, run when a tenant's store opens, before any request reads it.
 *
 * Before ids were kept exact (idComponent), an `_id` string longer than 200 characters was keyed
 * by its first 200 and a marker, as index values are. Two such ids sharing that prefix shared a
 * key: the second insert was refused as a duplicate, and a find by one id returned the other. A
 * unique index likewise kept a shortened value (a long string, a large object or array) under
 * its shortened key alone, so two different values sharing it were refused as duplicates; such
 * entries now carry the document's id, and uniqueness is decided on the values whole.
 *
 * upgradeIdKeys moves every document stored under a shortened id key to its exact key (with its
 * index entries), and every shortened unique entry to the key with the id, then marks the
 * collection `exactIds` so this runs once. A store written then holds at most one document per
 * shortened key (the second was always refused), so nothing collides. Batches are atomic and the
 * scans start over at every open until the mark is written, so a crash midway loses nothing.
 */
import { decodeKey, type KeyPart } from '../storage/index.js';
import type { BatchOp, TenantStore } from '../tenant/index.js';
import { docsTree, indexTree, listCollectionInfos, putCollection, type CollectionInfo, type IndexInfo } from './catalog.js';
import { decodeDocument, idKey } from './doc-codec.js';
import { indexEntryKeys } from './docs-model.js';
import { documentKeys, entryKey, idComponent, legacyIdComponent } from './index-key.js';
import type { Doc } from './values.js';

// A shortened key holds a 200-character prefix: shorter keys are exact.
const LEGACY_MIN_BYTES = 200;
// Documents moved per atomic batch.
const BATCH_DOCS = 500;

/** True for a primary key written shortened: its one component is `[bracket, prefix, true]`. */
function isLegacyKey(key: Buffer): boolean {
  if (key.length < LEGACY_MIN_BYTES) return false;
  const part = decodeKey(key)[0] as KeyPart[] | undefined;
  return Array.isArray(part) && part.length === 3 && part[2] === true;
}

/** The keys `doc` had in `index` in the layout before (ids shortened, unique entries without ids). */
export function legacyEntryKeys(index: IndexInfo, doc: Doc): Buffer[] {
  const idPart = index.unique ? undefined : legacyIdComponent(doc._id).part;
  return documentKeys(doc, index.fields).entries.map((parts) => entryKey(parts, idPart));
}

/** Writes `ops` in batches of about BATCH_DOCS documents' worth. */
class Batcher {
  #ops: BatchOp[] = [];
  #docs = 0;
  constructor(private readonly store: TenantStore) {}
  async add(ops: BatchOp[]): Promise<void> {
    this.#ops.push(...ops);
    if (++this.#docs >= BATCH_DOCS) await this.flush();
  }
  async flush(): Promise<void> {
    if (this.#ops.length > 0) await this.store.write(this.#ops);
    this.#ops = [];
    this.#docs = 0;
  }
}

async function moveLegacyIds(store: TenantStore, info: CollectionInfo, batcher: Batcher): Promise<number> {
  const tree = docsTree(info);
  const legacy: Buffer[] = [];
  for (const key of store.keys(tree)) if (isLegacyKey(key)) legacy.push(Buffer.from(key));
  for (const oldKey of legacy) {
    const raw = store.get(tree, oldKey);
    if (raw === undefined) continue;
    const doc = decodeDocument(raw);
    const pk = idKey(doc._id as string);
    const ops: BatchOp[] = [
      { op: 'delete', tree, key: oldKey },
      { op: 'put', tree, key: pk, value: raw },
    ];
    for (const index of info.indexes) {
      for (const key of legacyEntryKeys(index, doc)) ops.push({ op: 'delete', tree: indexTree(info, index), key });
      for (const key of indexEntryKeys(index, doc)) ops.push({ op: 'put', tree: indexTree(info, index), key, value: pk });
    }
    await batcher.add(ops);
  }
  await batcher.flush();
  return legacy.length;
}

// A unique index's shortened entries, still stored without the id: moved to the key with it.
async function suffixUniqueEntries(store: TenantStore, info: CollectionInfo, index: IndexInfo, batcher: Batcher): Promise<void> {
  const tree = indexTree(info, index);
  const entries: Array<[Buffer, Buffer]> = [];
  for (const [key, pk] of store.scan(tree)) entries.push([Buffer.from(key), Buffer.from(pk)]);
  for (const [key, pk] of entries) {
    const raw = store.get(docsTree(info), pk);
    if (raw === undefined) continue;
    const doc = decodeDocument(raw);
    const keys = documentKeys(doc, index.fields);
    for (let e = 0; e < keys.entries.length; e++) {
      if (keys.wholes[e] === undefined || !entryKey(keys.entries[e]!, undefined).equals(key)) continue;
      await batcher.add([
        { op: 'delete', tree, key },
        { op: 'put', tree, key: entryKey(keys.entries[e]!, idComponent(doc._id).part), value: pk },
      ]);
    }
  }
  await batcher.flush();
}

/** Brings every collection of `store` to exact ids (see above); returns how many documents moved. */
export async function upgradeIdKeys(store: TenantStore): Promise<number> {
  let moved = 0;
  for (const info of listCollectionInfos(store)) {
    if (info.exactIds === true) continue;
    const batcher = new Batcher(store);
    moved += await moveLegacyIds(store, info, batcher);
    for (const index of info.indexes) if (index.unique && index.lossy) await suffixUniqueEntries(store, info, index, batcher);
    await store.write([putCollection({ ...info, exactIds: true })]);
  }
  return moved;
}
