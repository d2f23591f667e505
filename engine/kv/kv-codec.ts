/**
 * The key-value model's bytes inside a tenant store: three trees, the layout of their keys and
 * values, and the list cursor. These are on-disk format: changing one makes existing data
 * unreadable, so bump KV_RECORD_VERSION and keep a reader for the old layout.
 *
 *   tree `kv`         key   = the user's key as UTF-8 bytes (so byte order = code point order)
 *                     value = [u8 KV_RECORD_VERSION][u8 flags][f64 LE expiresAtMs, NaN = none]
 *                             then the UTF-8 value, unless flags has RECORD_FLAG_EXTERNAL
 *   tree `kv-value`   key   = as in `kv`; value = the UTF-8 value, for values over
 *                             KV_INLINE_VALUE_MAX_BYTES only
 *   tree `kv-expiry`  key   = encodeKey([expiresAtMs, userKey]) (time order, then key order)
 *                     value = empty
 *
 * Why large values live apart: lists and the expiry sweeper read records for their expiry, and
 * a B+tree read returns the whole value, overflow pages included. Kept small, a record stays
 * inline in its leaf (key <= 512 + record <= 2058 bytes is below the 3000-byte inline limit), so
 * a page of a list or a sweep batch never reads megabytes of values it does not return.
 *
 * Invariants, all kept by writing every change as one atomic batch: a record with an expiry has
 * its `kv-expiry` entry; a record flagged external has its `kv-value` entry, and only it. The
 * sweeper still trusts the record over the index: an expiry entry whose record is gone or
 * carries a different time is stale and is only dropped.
 */

import { fail } from '../errors.js';
import { decodeKey, encodeKey, keyPrefixRange } from '../storage/index.js';

/** Tree holding the records. */
export const KV_TREE = 'kv';
/** Tree holding values too large to keep in their record. */
export const KV_VALUE_TREE = 'kv-value';
/** Tree indexing records with an expiry by (expiresAtMs, key). */
export const KV_EXPIRY_TREE = 'kv-expiry';

/** First byte of every record; the layout version. */
export const KV_RECORD_VERSION = 1;
/** Flag: the value is in KV_VALUE_TREE, not in the record. */
export const RECORD_FLAG_EXTERNAL = 0x01;
const FLAGS_OFFSET = 1;
const EXPIRES_AT_OFFSET = 2;
/** Bytes of a record before an inline value. */
export const KV_RECORD_HEADER_BYTES = 10;
/** Largest value kept inside its record. */
export const KV_INLINE_VALUE_MAX_BYTES = 2048;

// fatal: a record or cursor that is not UTF-8 is damage or forgery, not something to patch over.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A decoded record header. */
export interface KvRecord {
  /** Absolute expiry in epoch ms, or null. */
  expiresAtMs: number | null;
  /** True when the value is in KV_VALUE_TREE under the same key. */
  external: boolean;
}

/** What a put writes: the record, and the value bytes to store apart when they are large. */
export interface EncodedPut {
  record: Buffer;
  external: Buffer | undefined;
}

/** The `kv` (and `kv-value`) tree key of a validated user key. */
export function recordKey(key: string): Buffer {
  return Buffer.from(key, 'utf8');
}

/** The record, and the separate value for a large one, of a validated value. */
export function encodeRecord(value: string, expiresAtMs: number | null): EncodedPut {
  const valueBytes = Buffer.byteLength(value, 'utf8');
  const external = valueBytes > KV_INLINE_VALUE_MAX_BYTES;
  const record = Buffer.allocUnsafe(KV_RECORD_HEADER_BYTES + (external ? 0 : valueBytes));
  record[0] = KV_RECORD_VERSION;
  record[FLAGS_OFFSET] = external ? RECORD_FLAG_EXTERNAL : 0;
  record.writeDoubleLE(expiresAtMs ?? NaN, EXPIRES_AT_OFFSET);
  if (!external) {
    record.write(value, KV_RECORD_HEADER_BYTES, 'utf8');
    return { record, external: undefined };
  }
  return { record, external: Buffer.from(value, 'utf8') };
}

/** The header of a record. @throws CORRUPTION */
export function decodeRecord(record: Buffer): KvRecord {
  if (record.length < KV_RECORD_HEADER_BYTES || record[0] !== KV_RECORD_VERSION) {
    fail('CORRUPTION', `key-value record has an unknown layout (version byte ${String(record[0])}, ${record.length} bytes)`);
  }
  const flags = record[FLAGS_OFFSET]!;
  if ((flags & ~RECORD_FLAG_EXTERNAL) !== 0) fail('CORRUPTION', `key-value record has unknown flags 0x${flags.toString(16)}`);
  const external = flags === RECORD_FLAG_EXTERNAL;
  if (external && record.length !== KV_RECORD_HEADER_BYTES) fail('CORRUPTION', 'key-value record of an external value holds a value too');
  const at = record.readDoubleLE(EXPIRES_AT_OFFSET);
  return { expiresAtMs: at !== at ? null : at, external };
}

/** UTF-8 bytes (from a record or KV_VALUE_TREE) as a string. @throws CORRUPTION */
export function decodeValue(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    fail('CORRUPTION', 'key-value record holds a value that is not UTF-8');
  }
}

/** The inline value bytes of a record (empty for an external one). */
export function inlineValue(record: Buffer): Buffer {
  return record.subarray(KV_RECORD_HEADER_BYTES);
}

/** The `kv-expiry` key of (expiresAtMs, key). */
export function expiryKey(expiresAtMs: number, key: string): Buffer {
  return encodeKey([expiresAtMs, key]);
}

/** The (expiresAtMs, key) of a `kv-expiry` key. @throws CORRUPTION */
export function decodeExpiryKey(bytes: Uint8Array): { expiresAtMs: number; key: string } {
  let parts;
  try {
    parts = decodeKey(bytes);
  } catch (err) {
    fail('CORRUPTION', 'key-value expiry index holds a malformed key', undefined, err);
  }
  const [expiresAtMs, key] = parts;
  if (parts.length !== 2 || typeof expiresAtMs !== 'number' || typeof key !== 'string') {
    fail('CORRUPTION', 'key-value expiry index holds a key that is not (time, key)');
  }
  return { expiresAtMs, key };
}

/**
 * Exclusive upper bound of the `kv-expiry` keys due at `nowMs` (expiresAtMs <= nowMs): every
 * key of a time <= nowMs sorts below it, every key of a later time above it.
 */
export function expiryDueBound(nowMs: number): Buffer {
  // keyPrefixRange([t]).end is above every (t, key) and below the encoding of any larger time.
  return keyPrefixRange([nowMs]).end as Buffer;
}

/** The value of every `kv-expiry` entry. */
export function expiryValue(): Uint8Array {
  // A fresh array each time: the store owns what it is given.
  return new Uint8Array(0);
}

/** The opaque list cursor after `recordKeyBytes`: base64url of the key's bytes. */
export function encodeCursor(recordKeyBytes: Uint8Array): string {
  return Buffer.from(recordKeyBytes.buffer, recordKeyBytes.byteOffset, recordKeyBytes.byteLength).toString('base64url');
}

/** The key bytes a cursor stands for, or undefined when it is not one encodeCursor could produce. */
export function decodeCursor(cursor: string, maxKeyBytes: number): Buffer | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, 'base64url');
  // Canonical form only: Node's decoder skips trailing bits, so "QQ" and "QR" would be one cursor.
  if (bytes.length === 0 || bytes.length > maxKeyBytes || bytes.toString('base64url') !== cursor) return undefined;
  try {
    utf8.decode(bytes);
  } catch {
    return undefined;
  }
  return bytes;
}
