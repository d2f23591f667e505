/**
 * Upgrades of stored documents, run when a tenant's store opens, before any request reads it.
 *
 * upgradeIdKeys: before ids were kept exact (idComponent), an `_id` string longer than 200
 * characters was keyed by its first 200 and a marker, as index values are. Two such ids sharing
 * that prefix shared a key: the second insert was refused as a duplicate, and a find by one id
 * returned the other. A store written then may hold documents under such keys (one per prefix,
 * since the second was always refused); each is moved to its exact key, with its index entries,
 * and the collection is marked `exactIds` so this runs once. Batches are atomic and the scan
 * starts over at every open until the mark is written, so a crash midway loses nothing.
 */
import { decodeKey, type KeyPart } from '../storage/index.js';
import type { BatchOp, TenantStore } from '../tenant/index.js';
import { docsTree, indexTree, listCollectionInfos, putCollection } from './catalog.js';
import { decodeDocument, idKey } from './doc-codec.js';
import { documentKeys, entryKey, idComponent, legacyIdComponent } from './index-key.js';

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

/** Moves documents stored under shortened `_id` keys to exact ones; returns how many moved. */
export async function upgradeIdKeys(store: TenantStore): Promise<number> {
  let moved = 0;
  for (const info of listCollectionInfos(store)) {
    if (info.exactIds === true) continue;
    const tree = docsTree(info);
    const legacy: Buffer[] = [];
    for (const key of store.keys(tree)) if (isLegacyKey(key)) legacy.push(Buffer.from(key));
    for (let start = 0; start < legacy.length; start += BATCH_DOCS) {
      const ops: BatchOp[] = [];
      for (const oldKey of legacy.slice(start, start + BATCH_DOCS)) {
        const raw = store.get(tree, oldKey);
        if (raw === undefined) continue;
        const doc = decodeDocument(raw);
        const id = doc._id;
        const pk = idKey(id as string);
        ops.push({ op: 'delete', tree, key: oldKey }, { op: 'put', tree, key: pk, value: raw });
        for (const index of info.indexes) {
          for (const parts of documentKeys(doc, index.fields).entries) {
            if (!index.unique) ops.push({ op: 'delete', tree: indexTree(info, index), key: entryKey(parts, legacyIdComponent(id).part) });
            ops.push({ op: 'put', tree: indexTree(info, index), key: entryKey(parts, index.unique ? undefined : idComponent(id).part), value: pk });
          }
        }
        moved++;
      }
      await store.write(ops);
    }
    await store.write([putCollection({ ...info, exactIds: true })]);
  }
  return moved;
}
