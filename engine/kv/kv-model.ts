/**
 * The key-value model: stateless functions over one tenant's store. Reads check expiry exactly
 * (a key whose expiresAt <= now is gone, whether or not the sweeper has deleted it yet); every
 * write is one atomic batch over all the model's trees (see kv-codec.ts for the layout and its
 * invariants).
 */

import { fail } from '../errors.js';
import type { BatchOp, TenantStore } from '../tenant/index.js';
import {
  decodeExpiryKey,
  decodeRecord,
  decodeValue,
  encodeCursor,
  encodeRecord,
  expiryDueBound,
  expiryKey,
  expiryValue,
  inlineValue,
  KV_EXPIRY_TREE,
  KV_INLINE_VALUE_MAX_BYTES,
  KV_RECORD_HEADER_BYTES,
  KV_TREE,
  KV_VALUE_TREE,
  recordKey,
  type KvRecord,
} from './kv-codec.js';
import { validateCursor, validateKey, validateLimit, validatePrefix, validateTtl, validateValue } from './kv-validate.js';

/** A key as read: ttl is the remaining lifetime in (fractional) seconds. */
export interface KvEntry {
  key: string;
  value: string;
  ttl: number | null;
  expiresAt: string | null;
}

/** One key of a list page. */
export interface KvListItem {
  key: string;
  expiresAt: string | null;
}

/** Options of kvList; all come straight from the request and are validated here. */
export interface KvListOptions {
  prefix?: unknown;
  cursor?: unknown;
  limit?: unknown;
}

// A list page stops after examining this many records, even short of `limit`, so a range full of
// expired keys the sweeper has not reached yet cannot stall the event loop; the cursor then
// continues after the last key examined.
const LIST_SCAN_BUDGET = 10_000;

// Leaf entry bytes besides key and value ([u16 keyLength][u8 valueKind][u32 valueLength]), from
// docs/storage-format.md; a quota estimate, so it is not worth importing the page layout.
const LEAF_ENTRY_OVERHEAD = 7;

const MS_PER_SECOND = 1000;
const RESOLVED: Promise<void> = Promise.resolve();

function toIso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

function isExpired(expiresAtMs: number | null, now: number): boolean {
  return expiresAtMs !== null && expiresAtMs <= now;
}

// The caller awaits durability; the lsn is the store's business.
function durable(write: Promise<unknown>): Promise<void> {
  return write.then(() => undefined);
}

/**
 * Sets `key` to `value`, expiring after `ttl` seconds (none when undefined/null, which also clears
 * an existing expiry). Applied at once; `durable` resolves when it is on disk.
 * @throws VALIDATION_FAILED naming key, value or ttl (nothing written)
 * @throws UNAVAILABLE / CORRUPTION from the store
 */
export function kvPut(
  store: TenantStore,
  key: unknown,
  value: unknown,
  ttl: unknown,
  now: number = Date.now(),
): { durable: Promise<void>; result: { key: string; expiresAt: string | null }; expiresAtMs: number | null } {
  const k = validateKey(key);
  const v = validateValue(value);
  const ttlMs = validateTtl(ttl);
  const expiresAtMs = ttlMs === null ? null : Math.ceil(now) + ttlMs;
  const rk = recordKey(k);
  const raw = store.get(KV_TREE, rk);
  const old = raw === undefined ? undefined : decodeRecord(raw);
  const encoded = encodeRecord(v, expiresAtMs);
  const ops: BatchOp[] = [];
  // One batch: the old record's expiry entry and separate value go in the same write that
  // replaces it, so no crash can leave a record without the entries that match it.
  if (old !== undefined && old.expiresAtMs !== null && old.expiresAtMs !== expiresAtMs) {
    ops.push({ op: 'delete', tree: KV_EXPIRY_TREE, key: expiryKey(old.expiresAtMs, k) });
  }
  if (old?.external === true && encoded.external === undefined) ops.push({ op: 'delete', tree: KV_VALUE_TREE, key: recordKey(k) });
  ops.push({ op: 'put', tree: KV_TREE, key: rk, value: encoded.record });
  if (encoded.external !== undefined) ops.push({ op: 'put', tree: KV_VALUE_TREE, key: recordKey(k), value: encoded.external });
  if (expiresAtMs !== null) {
    ops.push({ op: 'put', tree: KV_EXPIRY_TREE, key: expiryKey(expiresAtMs, k), value: expiryValue() });
  }
  return { durable: durable(store.write(ops)), result: { key: k, expiresAt: toIso(expiresAtMs) }, expiresAtMs };
}

/** The live entry under `key`, or undefined when it is missing or expired at `now`. @throws VALIDATION_FAILED naming key */
export function kvGet(store: TenantStore, key: unknown, now: number = Date.now()): KvEntry | undefined {
  const k = validateKey(key);
  const raw = store.get(KV_TREE, recordKey(k));
  if (raw === undefined) return undefined;
  const record = decodeRecord(raw);
  if (isExpired(record.expiresAtMs, now)) return undefined;
  return {
    key: k,
    value: decodeValue(record.external ? externalValue(store, k) : inlineValue(raw)),
    ttl: record.expiresAtMs === null ? null : (record.expiresAtMs - now) / MS_PER_SECOND,
    expiresAt: toIso(record.expiresAtMs),
  };
}

/**
 * Deletes `key`; `deleted` is false when it was missing or already expired (an expired record is
 * still removed, early, along with its expiry entry). @throws VALIDATION_FAILED naming key
 */
export function kvDelete(store: TenantStore, key: unknown, now: number = Date.now()): { durable: Promise<void>; deleted: boolean } {
  const k = validateKey(key);
  const rk = recordKey(k);
  const old = store.get(KV_TREE, rk);
  if (old === undefined) return { durable: RESOLVED, deleted: false };
  const record = decodeRecord(old);
  const ops = deleteOps(k, rk, record);
  if (record.expiresAtMs !== null) ops.push({ op: 'delete', tree: KV_EXPIRY_TREE, key: expiryKey(record.expiresAtMs, k) });
  return { durable: durable(store.write(ops)), deleted: !isExpired(record.expiresAtMs, now) };
}

/**
 * One page of live keys in UTF-8 byte order, optionally under a prefix, continuing strictly after
 * `cursor`. A page holds at most `limit` items and may hold fewer (even none) with a non-null
 * nextCursor when it had to skip many expired keys; nextCursor is null at the end.
 * @throws VALIDATION_FAILED naming prefix, cursor or limit
 */
export function kvList(store: TenantStore, opts: KvListOptions, now: number = Date.now()): { items: KvListItem[]; nextCursor: string | null } {
  const prefix = validatePrefix(opts.prefix);
  const after = validateCursor(opts.cursor);
  const limit = validateLimit(opts.limit);
  const range: { prefix?: Uint8Array; gt?: Uint8Array } = {};
  if (prefix !== '') range.prefix = recordKey(prefix);
  if (after !== undefined) range.gt = after;

  const items: KvListItem[] = [];
  let lastKey: Buffer | undefined;
  let examined = 0;
  for (const [rk, raw] of store.scan(KV_TREE, range)) {
    const { expiresAtMs } = decodeRecord(raw);
    if (isExpired(expiresAtMs, now)) {
      if (++examined >= LIST_SCAN_BUDGET) return { items, nextCursor: encodeCursor(rk) };
      continue;
    }
    // A live key past a full page: there is more, and it starts after the page's last key.
    if (items.length === limit) return { items, nextCursor: encodeCursor(lastKey as Buffer) };
    items.push({ key: rk.toString('utf8'), expiresAt: toIso(expiresAtMs) });
    // A copy: scanned keys may be views into a cached page.
    lastKey = Buffer.from(rk);
    if (++examined >= LIST_SCAN_BUDGET) return { items, nextCursor: encodeCursor(rk) };
  }
  return { items, nextCursor: null };
}

/**
 * Deletes up to `max` keys whose expiry is <= now, in one batch; nextExpiryMs is the earliest
 * expiry still pending (<= now when more are due) or null.
 * @throws VALIDATION_FAILED for a max that is not a positive integer
 */
export function kvExpireDue(store: TenantStore, now: number, max: number): { deleted: number; durable: Promise<void>; nextExpiryMs: number | null } {
  if (!Number.isInteger(max) || max < 1) fail('VALIDATION_FAILED', 'max must be a positive integer', { field: 'max' });
  const ops: BatchOp[] = [];
  let deleted = 0;
  for (const ek of store.keys(KV_EXPIRY_TREE, { lt: expiryDueBound(now), limit: max })) {
    const { expiresAtMs, key } = decodeExpiryKey(ek);
    const rk = recordKey(key);
    const raw = store.get(KV_TREE, rk);
    const record = raw === undefined ? undefined : decodeRecord(raw);
    // The record is the truth; an entry that does not match it is stale and only dropped.
    if (record !== undefined && record.expiresAtMs === expiresAtMs) {
      ops.push(...deleteOps(key, rk, record));
      deleted++;
    }
    // A copy: scanned keys may be views into a cached page, and the store owns what it is given.
    ops.push({ op: 'delete', tree: KV_EXPIRY_TREE, key: Buffer.from(ek) });
  }
  const written = ops.length === 0 ? RESOLVED : durable(store.write(ops));
  let nextExpiryMs: number | null;
  try {
    // write() applies the batch before it returns, so the first entry left is the next expiry.
    nextExpiryMs = kvNextExpiry(store);
  } catch (err) {
    // The store failed under the write: report that once, not also as an unhandled rejection.
    written.catch(() => undefined);
    throw err;
  }
  return { deleted, durable: written, nextExpiryMs };
}

// The ops removing a record and its separate value (the caller removes its expiry entry).
function deleteOps(key: string, rk: Buffer, record: KvRecord): BatchOp[] {
  const ops: BatchOp[] = [{ op: 'delete', tree: KV_TREE, key: rk }];
  if (record.external) ops.push({ op: 'delete', tree: KV_VALUE_TREE, key: recordKey(key) });
  return ops;
}

/** The separate value of an external record. @throws CORRUPTION when it is missing */
function externalValue(store: TenantStore, key: string): Buffer {
  const bytes = store.get(KV_VALUE_TREE, recordKey(key));
  if (bytes === undefined) fail('CORRUPTION', 'key-value record refers to a value that is missing');
  return bytes;
}

/** The earliest pending expiry in this store (ms), or null when no key has one. @throws CORRUPTION */
export function kvNextExpiry(store: TenantStore): number | null {
  for (const ek of store.keys(KV_EXPIRY_TREE, { limit: 1 })) return decodeExpiryKey(ek).expiresAtMs;
  return null;
}

/** Bytes a put of `key` = `value` adds (record, separate value, leaf entries), for quota checks by the caller. */
export function kvPutCost(key: string, value: string): number {
  const keyBytes = Buffer.byteLength(key, 'utf8');
  const valueBytes = Buffer.byteLength(value, 'utf8');
  const record = keyBytes + KV_RECORD_HEADER_BYTES + LEAF_ENTRY_OVERHEAD;
  // A large value is a second entry under the same key (see kv-codec.ts).
  return record + valueBytes + (valueBytes > KV_INLINE_VALUE_MAX_BYTES ? keyBytes + LEAF_ENTRY_OVERHEAD : 0);
}
