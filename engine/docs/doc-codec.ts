/**
 * How documents and their `_id`s are stored: a document is one value in its collection's tree,
 * `[u8 format][msgpack]`, under the key `encodeKey([idComponent(_id)])`, so a tree scan returns
 * documents in `_id` order (BSON order of the id values).
 *
 * Formats: PLAIN documents decode with msgpackr's fast object mode. msgpackr renames a map key
 * `__proto__` when it builds objects (a guard against prototype pollution), so a document with
 * that field name anywhere is stored as PROTO_KEYS and decoded through Maps into objects whose
 * `__proto__` is an own data property: stored and returned as plain data, no prototype effect.
 */

import { Packr } from 'msgpackr';
import { fail } from '../errors.js';
import { encodeKey } from '../storage/index.js';
import { indexComponent } from './index-key.js';
import { isPlainObject, setOwn, type Doc } from './values.js';

const FORMAT = { PLAIN: 1, PROTO_KEYS: 2 } as const;

// useRecords off: every document stands alone (no shared structure table to lose).
const packr = new Packr({ useRecords: false });
const mapReader = new Packr({ useRecords: false, mapsAsObjects: false });

/** Longest `_id` string, in UTF-8 bytes: ids are keys, and keys are bounded. */
export const MAX_ID_BYTES = 1024;

function hasProtoKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasProtoKey);
  if (!isPlainObject(v)) return false;
  for (const key of Object.keys(v)) if (key === '__proto__' || hasProtoKey(v[key])) return true;
  return false;
}

/** The stored bytes of a validated document. */
export function encodeDocument(doc: Doc): Buffer {
  const body = packr.pack(doc);
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = hasProtoKey(doc) ? FORMAT.PROTO_KEYS : FORMAT.PLAIN;
  body.copy(out, 1);
  return out;
}

function fromMaps(v: unknown): unknown {
  if (v instanceof Map) {
    const out: Doc = {};
    for (const [key, value] of v) setOwn(out, String(key), fromMaps(value));
    return out;
  }
  if (Array.isArray(v)) return v.map(fromMaps);
  return v;
}

// The msgpack body starts after the format byte: read in place rather than through a view.
const BODY = { start: 1 } as const;

/** A stored document. @throws CORRUPTION when the bytes are not one */
export function decodeDocument(bytes: Buffer): Doc {
  const format = bytes[0];
  const doc = format === FORMAT.PLAIN ? packr.unpack(bytes, BODY) : format === FORMAT.PROTO_KEYS ? fromMaps(mapReader.unpack(bytes, BODY)) : undefined;
  if (!isPlainObject(doc)) fail('CORRUPTION', `stored document has an unknown format (${format})`);
  return doc;
}

/** The key of a document in its collection's tree. @throws VALIDATION_FAILED for an overlong string id */
export function idKey(id: string | number | boolean): Buffer {
  if (typeof id === 'string' && Buffer.byteLength(id) > MAX_ID_BYTES) {
    fail('VALIDATION_FAILED', `_id strings are limited to ${MAX_ID_BYTES} bytes of UTF-8`, { limit: MAX_ID_BYTES });
  }
  return encodeKey([indexComponent(id).part]);
}
