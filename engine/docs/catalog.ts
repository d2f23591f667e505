/**
 * The document model's catalog, in one tree of the tenant's store: collection name -> its id and
 * index definitions. Every collection keeps its documents in the tree `docs.<id>` and each index
 * in `docs.<id>.<indexId>`; ids are never reused, so dropping a collection (or index) and
 * creating it again never meets old entries. Catalog changes go in the same atomic batch as the
 * data they describe.
 */

import type { CollectionValidator } from './collection-validator.js';
import { Packr } from 'msgpackr';
import { fail } from '../errors.js';
import type { BatchOp, Snapshot, TenantStore } from '../tenant/index.js';
import type { IndexField } from './index-key.js';
import type { TextIndexSpec } from './text/index.js';
import type { Doc } from './values.js';

export const CATALOG_TREE = 'docs.catalog';
/** Catalog key of the next collection id (collection names are never empty, so it cannot clash). */
const NEXT_ID_KEY = Buffer.alloc(0);

/** Longest collection name in UTF-8 bytes (MongoDB: 255 bytes for the whole namespace). */
export const MAX_COLLECTION_NAME_BYTES = 120;
/** Most indexes on one collection besides `_id` (MongoDB: 64 including `_id`). */
export const MAX_INDEXES = 63;

/** True when two key patterns name the same fields in the same order and directions. */
export function sameKeyPattern(a: readonly IndexField[], b: readonly IndexField[]): boolean {
  return a.length === b.length && a.every((f, k) => f.path === b[k]!.path && f.direction === b[k]!.direction);
}

/** An index the planner may read: built, and not hidden. */
export function indexUsable(index: IndexInfo): boolean {
  return index.hidden !== true && (index as { building?: boolean }).building !== true;
}

/** A secondary index. */
export interface IndexInfo {
  readonly id: number;
  readonly name: string;
  readonly fields: readonly IndexField[];
  readonly unique: boolean;
  /** Seconds after the date in the (single) field when a document expires; TTL indexes only. */
  readonly expireAfterSeconds?: number;
  /** Holds only documents with at least one of its fields (MongoDB's sparse index). */
  readonly sparse?: boolean;
  /** Holds only documents this filter matches (MongoDB's partial index), kept as the client wrote it. */
  readonly partialFilterExpression?: Doc;
  /** Kept up to date (and unique, and expiring) but never read by a query (MongoDB 4.4's hidden index): true when so. */
  readonly hidden?: boolean;
  /**
   * A text index (its `fields` are then MongoDB's `_fts`/`_ftsx` pair): what it holds and in
   * which languages. Its entries are one per distinct term of a document (text/).
   */
  readonly text?: TextIndexSpec;
  /** Some document put more than one key in it (an array on the path): it cannot give a sort order. */
  multikey: boolean;
  /** Some key had to be shortened (see index-key.ts): it cannot give a sort order either. */
  lossy: boolean;
}

export interface CollectionInfo {
  readonly name: string;
  readonly id: number;
  readonly createdAt: number;
  nextIndexId: number;
  indexes: IndexInfo[];
  /**
   * Every `_id` in the collection's keys is exact (idComponent). Collections created before that
   * lack it until upgradeIdKeys has rewritten their long string ids.
   */
  exactIds?: boolean;
  /** Schema validation (createCollection, collMod), when set: collection-validator.ts. */
  validator?: CollectionValidator;
}

const packr = new Packr({ useRecords: false });

/** @throws VALIDATION_FAILED for a name MongoDB-style collections cannot have */
export function validateCollectionName(name: unknown, field = 'collection'): string {
  if (typeof name !== 'string' || name.length === 0) fail('VALIDATION_FAILED', `${field} must be a non-empty string`, { field });
  if (Buffer.byteLength(name) > MAX_COLLECTION_NAME_BYTES) {
    fail('VALIDATION_FAILED', `collection names are limited to ${MAX_COLLECTION_NAME_BYTES} bytes of UTF-8`, { field, limit: MAX_COLLECTION_NAME_BYTES });
  }
  if (name.includes('$')) fail('VALIDATION_FAILED', "collection names must not contain '$'", { field });
  if (name.includes('\0')) fail('VALIDATION_FAILED', 'collection names must not contain the NUL character', { field });
  if (name.startsWith('system.')) fail('VALIDATION_FAILED', "collection names must not start with 'system.'", { field });
  if (!(name as unknown as { isWellFormed(): boolean }).isWellFormed()) fail('VALIDATION_FAILED', 'collection names must be valid UTF-16', { field });
  return name;
}

export function docsTree(info: CollectionInfo): string {
  return `docs.${info.id}`;
}

export function indexTree(info: CollectionInfo, index: IndexInfo): string {
  return `docs.${info.id}.${index.id}`;
}

type Reader = Pick<TenantStore | Snapshot, 'get' | 'scan'>;

/** The collection called `name`, or undefined. */
export function readCollection(store: Reader, name: string): CollectionInfo | undefined {
  const raw = store.get(CATALOG_TREE, Buffer.from(name));
  return raw === undefined ? undefined : (packr.unpack(raw) as CollectionInfo);
}

/**
 * Prefix of the hidden collections a $out writes into before its swap (MongoDB's
 * `tmp.agg_out.<uuid>`). Under `system.`, which validateCollectionName refuses, so no client can
 * create, read or drop one; the collection's id follows, so no two ever share a name.
 */
export const TEMPORARY_COLLECTION_PREFIX = 'system.tmp.agg_out.';

/** True for the name (or the catalog key) of a hidden temporary collection. */
export function isTemporaryCollection(name: string | Uint8Array): boolean {
  const text = typeof name === 'string' ? name : Buffer.from(name).toString('utf8');
  return text.startsWith(TEMPORARY_COLLECTION_PREFIX);
}

/** A collection's catalog entry from its stored bytes (the value of a catalog put). */
export function decodeCollectionInfo(value: Uint8Array): CollectionInfo {
  return packr.unpack(value) as CollectionInfo;
}

/** True for the catalog key of a collection (the other key holds the next collection id). */
export function isCollectionKey(key: Uint8Array): boolean {
  return key.length > 0;
}

/**
 * Every collection clients see, by name: not the hidden temporary ones, which a $out fills and
 * swaps in (nothing else reads, lists, expires or mirrors them).
 */
export function listCollectionInfos(store: Reader): CollectionInfo[] {
  const out: CollectionInfo[] = [];
  for (const [key, value] of store.scan(CATALOG_TREE)) if (key.length > 0 && !isTemporaryCollection(key)) out.push(packr.unpack(value) as CollectionInfo);
  return out;
}

/** The hidden temporary collections (a $out's, still there only while it runs or after a crash). */
export function listTemporaryCollections(store: Reader): CollectionInfo[] {
  const out: CollectionInfo[] = [];
  const start = Buffer.from(TEMPORARY_COLLECTION_PREFIX);
  for (const [key, value] of store.scan(CATALOG_TREE, { gte: start })) {
    if (!isTemporaryCollection(key)) break;
    out.push(packr.unpack(value) as CollectionInfo);
  }
  return out;
}

/** The op that stores `info` (in the batch of the change it describes). */
export function putCollection(info: CollectionInfo): BatchOp {
  return { op: 'put', tree: CATALOG_TREE, key: Buffer.from(info.name), value: packr.pack(info) };
}

export function deleteCollection(info: CollectionInfo): BatchOp {
  return { op: 'delete', tree: CATALOG_TREE, key: Buffer.from(info.name) };
}

/** The ops that drop a collection with its documents and indexes (one atomic batch). */
export function dropCollectionOps(info: CollectionInfo): BatchOp[] {
  return [deleteCollection(info), { op: 'dropTree', tree: docsTree(info) }, ...info.indexes.map((index): BatchOp => ({ op: 'dropTree', tree: indexTree(info, index) }))];
}

/**
 * A new hidden temporary collection's info (named after its id) and the op that takes the id; the
 * caller stores the info in the same batch.
 */
export function newTemporaryCollection(store: Reader, now: number): { info: CollectionInfo; op: BatchOp } {
  const { info, op } = newCollection(store, '', now);
  return { info: { ...info, name: `${TEMPORARY_COLLECTION_PREFIX}${info.id}` }, op };
}

/**
 * A new collection's info and the op that takes its id; the caller adds putCollection(info), after
 * any change it makes to the info, to the same batch as the collection's first write.
 */
export function newCollection(store: Reader, name: string, now: number): { info: CollectionInfo; op: BatchOp } {
  const raw = store.get(CATALOG_TREE, NEXT_ID_KEY);
  const id = raw === undefined ? 1 : raw.readUInt32BE(0);
  const next = Buffer.allocUnsafe(4);
  next.writeUInt32BE(id + 1, 0);
  const info: CollectionInfo = { name, id, createdAt: now, nextIndexId: 1, indexes: [], exactIds: true };
  return { info, op: { op: 'put', tree: CATALOG_TREE, key: NEXT_ID_KEY, value: next } };
}
