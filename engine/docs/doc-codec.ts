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

import { Packr, RESERVE_START_SPACE } from 'msgpackr';
import { fail } from '../errors.js';
import { encodeKey } from '../storage/index.js';
import { idComponent } from './index-key.js';
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

// pack() leaves this many bytes free before the body, in the buffer it returns: room for the
// format byte, so the body is not copied into a second buffer behind it.
const RESERVE_FORMAT_BYTE = RESERVE_START_SPACE | 1;

/** The stored bytes of a validated document. */
export function encodeDocument(doc: Doc): Buffer {
  // A view into msgpackr's own buffer, which later packs never write over (they write past it).
  const out = packr.pack(doc, RESERVE_FORMAT_BYTE);
  out[0] = hasProtoKey(doc) ? FORMAT.PROTO_KEYS : FORMAT.PLAIN;
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

// Where msgpackr reads: reused, as unpack reads it before it returns.
const span = { start: 0, end: 0 };

/** A stored document. @throws CORRUPTION when the bytes are not one */
export function decodeDocument(bytes: Buffer): Doc {
  return decodeDocumentAt(bytes, 0, bytes.length);
}

/**
 * The stored document in bytes [start, end) of `buf` (a page, read in place). msgpackr keeps a
 * DataView on each Buffer it reads: a page read in place makes one for all its documents, where a
 * view made per document cost a Buffer and a DataView each (~0.5 µs of a ~2 µs decode).
 * @throws CORRUPTION when the bytes are not one
 */
export function decodeDocumentAt(buf: Buffer, start: number, end: number): Doc {
  const format = buf[start];
  // The msgpack body starts after the format byte.
  span.start = start + 1;
  span.end = end;
  const doc = format === FORMAT.PLAIN ? packr.unpack(buf, span) : format === FORMAT.PROTO_KEYS ? fromMaps(mapReader.unpack(buf, span)) : undefined;
  if (!isPlainObject(doc) || start >= end) fail('CORRUPTION', `stored document has an unknown format (${format})`);
  return doc;
}

// MessagePack's sized formats, by type byte: how many bytes their length (or element count)
// takes after the type byte; 0 for every other format.
const LENGTH_WIDTH = new Uint8Array(256);
for (const [type, width] of [
  [0xc4, 1], [0xc5, 2], [0xc6, 4], // bin8, bin16, bin32
  [0xc7, 1], [0xc8, 2], [0xc9, 4], // ext8, ext16, ext32 (a type byte follows the length)
  [0xd9, 1], [0xda, 2], [0xdb, 4], // str8, str16, str32
  [0xdc, 2], [0xdd, 4], // array16, array32
  [0xde, 2], [0xdf, 4], // map16, map32
] as const) LENGTH_WIDTH[type] = width;

// MessagePack's fixed-size formats other than the fix* ranges, by type byte: the whole value's
// size, type byte included; 0 for every other format.
const FIXED_SIZE = new Uint8Array(256);
for (const [types, size] of [
  [[0xc0, 0xc2, 0xc3], 1], // nil, false, true
  [[0xcc, 0xd0], 2], // uint8, int8
  [[0xcd, 0xd1], 3], // uint16, int16
  [[0xca, 0xce, 0xd2], 5], // float32, uint32, int32
  [[0xcb, 0xcf, 0xd3], 9], // float64, uint64, int64
  [[0xd4], 3], [[0xd5], 4], [[0xd6], 6], [[0xd7], 10], [[0xd8], 18], // fixext1, 2, 4, 8, 16: type byte, then data
] as const) for (const type of types) FIXED_SIZE[type] = size;

/** The length (or count) of the sized value whose type byte is at `pos`, or -1 when its header runs past `end`. */
function lengthAt(b: Buffer, pos: number, end: number): number {
  const width = LENGTH_WIDTH[b[pos]!]!;
  if (pos + 1 + width > end) return -1;
  return width === 1 ? b[pos + 1]! : width === 2 ? b.readUInt16BE(pos + 1) : b.readUInt32BE(pos + 1);
}

/**
 * Where the MessagePack value at `pos` ends (the spec's formats; every one says its own length,
 * extensions included), or -1 when the byte at `pos` is not the start of a value or the value runs
 * past `end`. Nested values are walked, not decoded.
 */
function skipValue(b: Buffer, pos: number, end: number): number {
  // Values still to skip: one, plus two per map entry and one per array element met on the way.
  let pending = 1;
  while (pending > 0) {
    if (pos >= end) return -1;
    pending--;
    const t = b[pos]!;
    if (t < 0x80 || t >= 0xe0) pos += 1; // fixint
    else if (t < 0x90) (pending += 2 * (t & 0x0f)), (pos += 1); // fixmap
    else if (t < 0xa0) (pending += t & 0x0f), (pos += 1); // fixarray
    else if (t < 0xc0) pos += 1 + (t & 0x1f); // fixstr
    else if (LENGTH_WIDTH[t] !== 0) {
      const n = lengthAt(b, pos, end);
      if (n < 0) return -1;
      const header = 1 + LENGTH_WIDTH[t]!;
      if (t >= 0xdc) (pending += t >= 0xde ? 2 * n : n), (pos += header); // array, map: elements follow
      else pos += header + n + (t >= 0xc7 && t <= 0xc9 ? 1 : 0); // bin, str, ext (its type byte)
    } else {
      const size = FIXED_SIZE[t]!;
      if (size === 0) return -1; // 0xc1: never used
      pos += size;
    }
  }
  return pos <= end ? pos : -1;
}

/** One level of the fields a FieldReader reads: a name either whole (true) or through its own level. */
interface ReadLevel {
  readonly names: readonly Buffer[];
  readonly keys: readonly string[];
  readonly subs: ReadonlyArray<ReadLevel | true>;
}

function readLevel(paths: ReadonlyArray<readonly string[]>): ReadLevel {
  const byName = new Map<string, Array<readonly string[]> | true>();
  for (const [head, ...rest] of paths) {
    const cur = byName.get(head!);
    if (rest.length === 0) byName.set(head!, true);
    else if (cur === undefined) byName.set(head!, [rest]);
    else if (cur !== true) cur.push(rest);
  }
  const keys = [...byName.keys()];
  return { keys, names: keys.map((k) => Buffer.from(k, 'utf8')), subs: keys.map((k) => (byName.get(k) === true ? true : readLevel(byName.get(k) as Array<readonly string[]>))) };
}

/**
 * Reads only some fields of stored documents, for filters that look at a few fields of many
 * documents (a collection scan): the other fields' bytes are skipped, not decoded, and a
 * document is decoded whole only once it matches. A collection scan spent ~75% of its time
 * decoding documents it then rejected. A dotted path reads, of an embedded document, only what
 * it names (`profile.age` gives `{profile: {age}}`); a value on the way that is not a document (an
 * array, which paths traverse by their own rules) is read whole, so every condition on a path
 * sees what it would see in the whole document.
 */
export class FieldReader {
  readonly #root: ReadLevel;
  readonly #range = { start: 0, end: 0 };

  /** `paths`: the fields to read, top-level names or dot paths (a filter's, see filterPaths). */
  constructor(paths: readonly string[]) {
    this.#root = readLevel(paths.map((p) => p.split('.')));
  }

  /**
   * The named fields of a stored document, as decodeDocument would give them (embedded documents
   * cut down to the paths named), and nothing else (a field the document lacks is absent).
   * Undefined for a document it does not read this way (one stored with `__proto__` keys, or
   * bytes not a map with string keys): decode it whole.
   */
  read(bytes: Buffer): Doc | undefined {
    return this.readAt(bytes, 0, bytes.length);
  }

  /** read() of the stored document in bytes [start, end) of `bytes` (a page, read in place). */
  readAt(bytes: Buffer, start: number, end: number): Doc | undefined {
    if (bytes[start] !== FORMAT.PLAIN) return undefined;
    return this.#map(bytes, start + 1, end, this.#root);
  }

  // The map at `pos` (ending by `end`), cut down to `level`; undefined when it is not one.
  #map(bytes: Buffer, start: number, end: number, level: ReadLevel): Doc | undefined {
    let pos = start;
    const t = bytes[pos]!;
    let count: number;
    if (t >= 0x80 && t < 0x90) (count = t & 0x0f), (pos += 1);
    else if (t === 0xde || t === 0xdf) {
      count = lengthAt(bytes, pos, end);
      if (count < 0) return undefined;
      pos += 1 + LENGTH_WIDTH[t]!;
    } else return undefined;
    const names = level.names;
    const out: Doc = {};
    let found = 0;
    for (let i = 0; i < count && found < names.length; i++) {
      // The key: a string (documents have no other keys).
      const k = bytes[pos]!;
      let keyStart: number;
      let keyLength: number;
      if (k >= 0xa0 && k < 0xc0) (keyStart = pos + 1), (keyLength = k & 0x1f);
      else if (k >= 0xd9 && k <= 0xdb) {
        keyLength = lengthAt(bytes, pos, end);
        if (keyLength < 0) return undefined;
        keyStart = pos + 1 + LENGTH_WIDTH[k]!;
      } else return undefined;
      const valueStart = keyStart + keyLength;
      const valueEnd = skipValue(bytes, valueStart, end);
      if (valueEnd < 0) return undefined;
      for (let n = 0; n < names.length; n++) {
        const name = names[n]!;
        if (name.length !== keyLength) continue;
        // Field names are short: a byte loop beats Buffer.compare's call overhead.
        let j = 0;
        while (j < keyLength && name[j] === bytes[keyStart + j]) j++;
        if (j !== keyLength) continue;
        // A document's keys are unique, so each name is met at most once.
        const sub = level.subs[n]!;
        const v = bytes[valueStart]!;
        const isMap = (v >= 0x80 && v < 0x90) || v === 0xde || v === 0xdf;
        const value = sub === true || !isMap ? this.#value(bytes, valueStart, valueEnd) : this.#map(bytes, valueStart, valueEnd, sub);
        if (value === undefined) return undefined;
        setOwn(out, level.keys[n]!, value);
        found++;
        break;
      }
      pos = valueEnd;
    }
    return out;
  }

  /**
   * The value in bytes [start, end): the common scalars read here (msgpackr's own set-up per call
   * costs more than they do), everything else by msgpackr, so every value is what decodeDocument
   * gives. Strings are read here only when ASCII (msgpackr's UTF-8 reading is the reference).
   */
  #value(b: Buffer, start: number, end: number): unknown {
    const t = b[start]!;
    if (t < 0x80) return t;
    if (t >= 0xe0) return t - 0x100;
    if (t >= 0xa0 && t < 0xc0) {
      let ascii = true;
      for (let i = start + 1; i < end; i++) {
        if (b[i]! >= 0x80) {
          ascii = false;
          break;
        }
      }
      if (ascii) return b.toString('latin1', start + 1, end);
    } else {
      switch (t) {
        case 0xc0:
          return null;
        case 0xc2:
          return false;
        case 0xc3:
          return true;
        case 0xcb:
          return b.readDoubleBE(start + 1);
        case 0xcc:
          return b[start + 1]!;
        case 0xcd:
          return b.readUInt16BE(start + 1);
        case 0xce:
          return b.readUInt32BE(start + 1);
        case 0xd0:
          return b.readInt8(start + 1);
        case 0xd1:
          return b.readInt16BE(start + 1);
        case 0xd2:
          return b.readInt32BE(start + 1);
      }
    }
    const range = this.#range;
    range.start = start;
    range.end = end;
    return packr.unpack(b, range);
  }
}

/** The key of a document in its collection's tree. @throws VALIDATION_FAILED for an overlong string id */
export function idKey(id: string | number | boolean): Buffer {
  if (typeof id === 'string' && Buffer.byteLength(id) > MAX_ID_BYTES) {
    fail('VALIDATION_FAILED', `_id strings are limited to ${MAX_ID_BYTES} bytes of UTF-8`, { limit: MAX_ID_BYTES });
  }
  return encodeKey([idComponent(id).part]);
}
