import { Packr } from 'msgpackr';
import { Decimal } from '../decimal.js';
import { bpcharTrim, elementTypeOf, isArrayType, isArrayValue, isEnumType, sqlFail, type SqlTypeName, type SqlValue } from '../sql-types.js';

/**
 * How SQL values are stored.
 *
 * Keys (primary keys and index entries) are tuples in an order-preserving byte encoding, so the
 * B+trees order them as PostgreSQL orders the values with plain byte comparison:
 *   NULL           0xF0 (after every value: ascending indexes put NULLs last, as PostgreSQL's)
 *   a value        0x20, then by type:
 *     int2/int4/int8/date/timestamp/timestamptz/time  8 bytes big-endian, sign bit flipped
 *     timetz       the UTC time (time + zone, not wrapped into a day) then the zone (seconds
 *                  west), each as above: PostgreSQL's timetz_cmp order
 *     float8       8 bytes IEEE754 (positive: sign flipped; negative: all flipped); -0 as 0,
 *                  NaN above +Infinity (PostgreSQL sorts NaN last)
 *     numeric      sign byte (0x01 negative, 0x02 zero, 0x03 positive), then for non-zero the
 *                  decimal exponent (4 bytes, sign flipped) and the significant digits without
 *                  trailing zeros, 0x00-terminated; negative numbers complement exponent and
 *                  digits and end with 0xFF, so larger magnitudes sort first
 *     boolean      0x00 / 0x01
 *     text/bytea   the bytes with 0x00 written as 0x00 0xFF, then 0x00
 *     bpchar       as text, without the trailing spaces (so 'a' and 'a  ' are one key)
 *     bit/varbit   as text: the characters 0 and 1 (their order is bitcmp's)
 *     enum         as text: the label's sort key (ASCII base-36 digits, see enum-types.ts)
 * jsonb cannot be a key. Every component starts with a tag below 0xFF, so a text terminator is
 * never mistaken for an escape, and a tuple's encoding is a prefix of any longer tuple's.
 *
 * Rows are msgpack arrays of the column values in physical column order (int8 and timestamps
 * as int64, numeric as its text, jsonb as its JSON text, dates as day numbers).
 */

const TAG_VALUE = 0x20;
/** Before each element of an array in a key, and after the last: the end sorts before another element. */
const ARRAY_ELEMENT = 0x02;
const ARRAY_END = 0x01;
const TAG_NULL = 0xf0;

export function keyable(type: SqlTypeName): boolean {
  if (isArrayType(type)) return keyable(elementTypeOf(type));
  return type !== 'jsonb' && type !== 'unknown' && type !== 'interval';
}

/** Appends the key encoding of `v` (already of the column's type) to `out`. */
export function encodeKeyPart(out: number[], v: SqlValue): void {
  if (v.value === null) {
    out.push(TAG_NULL);
    return;
  }
  out.push(TAG_VALUE);
  // An enum value is its label's sort key, whose byte order is the labels' order (enum-types.ts).
  if (isEnumType(v.type)) {
    pushBytes(out, Buffer.from(v.value as string, 'latin1'));
    return;
  }
  switch (v.type) {
    case 'int2':
    case 'int4':
    case 'date':
      pushInt64(out, v.value);
      return;
    case 'int8':
    case 'timestamp':
    case 'timestamptz':
    case 'time':
      pushInt64(out, v.value);
      return;
    case 'timetz':
      pushInt64(out, v.value.time + BigInt(v.value.zone) * 1_000_000n);
      pushInt64(out, v.value.zone);
      return;
    case 'float8':
      pushFloat(out, v.value);
      return;
    case 'numeric':
      pushNumeric(out, v.value);
      return;
    case 'boolean':
      out.push(v.value ? 1 : 0);
      return;
    case 'text':
    case 'unknown':
      pushBytes(out, Buffer.from(v.value, 'utf8'));
      return;
    case 'bpchar':
      pushBytes(out, Buffer.from(bpcharTrim(v.value), 'utf8'));
      return;
    case 'bit':
    case 'varbit':
    case 'uuid':
      pushBytes(out, Buffer.from(v.value, 'latin1'));
      return;
    case 'bytea':
      pushBytes(out, v.value);
      return;
    default:
      if (isArrayValue(v)) {
        // PostgreSQL's array order: element by element (each after 0x02; a NULL element, tagged
        // 0xf0, after every value), then the shorter first (0x01 ends the array, below 0x02).
        for (const e of v.value) {
          out.push(ARRAY_ELEMENT);
          encodeKeyPart(out, e);
        }
        out.push(ARRAY_END);
        return;
      }
      sqlFail('0A000', `unsupported: ${v.type} values in a key or index`);
  }
}

/** The key of a tuple of values. */
export function encodeKeyTuple(values: readonly SqlValue[]): Buffer {
  const out: number[] = [];
  for (const v of values) encodeKeyPart(out, v);
  return Buffer.from(out);
}

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);

function pushInt64(out: number[], v: bigint | number): void {
  let hi: number;
  let lo: number;
  if (typeof v === 'number' || (v >= -9_007_199_254_740_991n && v <= 9_007_199_254_740_991n)) {
    // Two 32-bit halves by Number arithmetic (exact below 2^53): no bigint work on hot paths.
    const n = Number(v);
    hi = Math.floor(n / 4294967296);
    lo = n - hi * 4294967296;
    hi = (hi >>> 0) ^ 0x80000000;
  } else {
    const u = BigInt.asUintN(64, v) ^ 0x8000000000000000n;
    hi = Number(u >> 32n);
    lo = Number(u & 0xffffffffn);
  }
  out.push((hi >>> 24) & 0xff, (hi >>> 16) & 0xff, (hi >>> 8) & 0xff, hi & 0xff, (lo >>> 24) & 0xff, (lo >>> 16) & 0xff, (lo >>> 8) & 0xff, lo & 0xff);
}

function pushFloat(out: number[], n: number): void {
  f64[0] = Number.isNaN(n) ? NaN : n === 0 ? 0 : n;
  // Float64Array is little-endian on every platform Node runs on; emit big-endian.
  const negative = (f64Bytes[7]! & 0x80) !== 0 && !Number.isNaN(n);
  for (let i = 7; i >= 0; i--) {
    let b = f64Bytes[i]!;
    if (negative) b = ~b & 0xff;
    else if (i === 7) b ^= 0x80;
    out.push(b);
  }
}

function pushNumeric(out: number[], d: Decimal): void {
  const sign = d.sign();
  if (sign === 0) {
    out.push(0x02);
    return;
  }
  let digits = (d.unscaled < 0n ? -d.unscaled : d.unscaled).toString();
  const exponent = digits.length - d.scale;
  digits = digits.replace(/0+$/, '');
  const bytes: number[] = [];
  const e = (exponent + 0x80000000) >>> 0;
  bytes.push((e >>> 24) & 0xff, (e >>> 16) & 0xff, (e >>> 8) & 0xff, e & 0xff);
  for (let i = 0; i < digits.length; i++) bytes.push(digits.charCodeAt(i));
  if (sign > 0) {
    out.push(0x03, ...bytes, 0x00);
  } else {
    out.push(0x01);
    for (const b of bytes) out.push(~b & 0xff);
    out.push(0xff);
  }
}

function pushBytes(out: number[], bytes: Uint8Array): void {
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    out.push(b);
    if (b === 0) out.push(0xff);
  }
  out.push(0x00);
}

// ---- rows ---------------------------------------------------------------------------------

const packr = new Packr({ useRecords: false, int64AsType: 'bigint' });

/** The stored form of one value. */
export function storedOf(v: SqlValue): unknown {
  if (v.value === null) return null;
  switch (v.type) {
    case 'numeric':
      return v.value.toString();
    case 'jsonb':
      return JSON.stringify(v.value.json);
    case 'timetz':
      return [Number(v.value.time), v.value.zone];
    default:
      if (v.type.endsWith('[]')) return (v.value as unknown as SqlValue[]).map(storedOf);
      return v.value;
  }
}

/*
 * Row format (version 1): [0x01][u16 column count] then per column a tag byte and its payload:
 *   0 NULL | 1 int32 (LE) | 2 int64 | 3 float64 | 4 text, bpchar (padded), bit/varbit (0s and 1s), uuid (canonical text), enum (its label's sort key) (u32 length + UTF-8) | 5 false | 6 true
 *   7 numeric (u32 length + decimal text) | 8 bytea (u32 length + bytes) | 9 jsonb (u32 length +
 *   JSON text) | 10 date (int32 days) | 11 timestamp(tz), time (int64 micros) | 12 anything else
 *   (u32 length + msgpack of the stored form: a timetz is [time micros, zone seconds west]).
 * Fixed-width little-endian fields and length prefixes let a reader skip the columns a query
 * does not use without decoding them.
 */
const ROW_FORMAT = 0x01;

/** A row (values in physical column order) to bytes. */
export function encodeRow(values: readonly SqlValue[]): Buffer {
  let size = 3;
  const texts: (Buffer | undefined)[] = new Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v.value === null) {
      size += 1;
      continue;
    }
    switch (v.type) {
      case 'int2':
      case 'int4':
      case 'date':
        size += 5;
        break;
      case 'int8':
      case 'timestamp':
      case 'timestamptz':
      case 'time':
      case 'float8':
        size += 9;
        break;
      case 'boolean':
        size += 1;
        break;
      case 'text':
      case 'bpchar':
      case 'bit':
      case 'varbit':
      case 'uuid':
      case 'unknown':
        texts[i] = Buffer.from(v.value, 'utf8');
        size += 5 + texts[i]!.length;
        break;
      case 'numeric':
        texts[i] = Buffer.from(v.value.toString(), 'latin1');
        size += 5 + texts[i]!.length;
        break;
      case 'jsonb':
        texts[i] = Buffer.from(JSON.stringify(v.value.json), 'utf8');
        size += 5 + texts[i]!.length;
        break;
      case 'bytea':
        texts[i] = v.value;
        size += 5 + v.value.length;
        break;
      default:
        // An enum value (its sort key, see enum-types.ts) is stored as text is.
        texts[i] = isEnumType(v.type) ? Buffer.from(v.value as string, 'utf8') : packr.pack(storedOf(v));
        size += 5 + texts[i]!.length;
    }
  }
  const out = Buffer.allocUnsafe(size);
  out[0] = ROW_FORMAT;
  out.writeUInt16LE(values.length, 1);
  let o = 3;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    if (v.value === null) {
      out[o++] = 0;
      continue;
    }
    switch (v.type) {
      case 'int2':
      case 'int4':
        out[o++] = 1;
        o = out.writeInt32LE(v.value, o);
        break;
      case 'date':
        out[o++] = 10;
        o = out.writeInt32LE(v.value, o);
        break;
      case 'int8':
        out[o++] = 2;
        o = out.writeBigInt64LE(v.value, o);
        break;
      case 'timestamp':
      case 'timestamptz':
      case 'time':
        out[o++] = 11;
        o = out.writeBigInt64LE(v.value, o);
        break;
      case 'float8':
        out[o++] = 3;
        o = out.writeDoubleLE(v.value, o);
        break;
      case 'boolean':
        out[o++] = v.value ? 6 : 5;
        break;
      default: {
        const tag = v.type === 'text' || v.type === 'bpchar' || v.type === 'bit' || v.type === 'varbit' || v.type === 'uuid' || v.type === 'unknown' || isEnumType(v.type) ? 4 : v.type === 'numeric' ? 7 : v.type === 'jsonb' ? 9 : v.type === 'bytea' ? 8 : 12;
        const bytes = texts[i]!;
        out[o++] = tag;
        o = out.writeUInt32LE(bytes.length, o);
        bytes.copy(out, o);
        o += bytes.length;
      }
    }
  }
  return out;
}

/**
 * Decodes a row into values of the physical columns' types; missing trailing columns (added
 * later) get `missing`. With `needed`, columns it marks false are skipped and come back NULL.
 * The row starts at `start` in `bytes` (a span of a page, as TreeReader.valueRuns hands out).
 */
export function decodeRow(bytes: Uint8Array, types: readonly SqlTypeName[], missing: readonly SqlValue[], needed?: readonly boolean[], start = 0): SqlValue[] {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buf[start] !== ROW_FORMAT) return sqlFail('XX001', `a stored row has an unknown format (${buf[start]})`);
  const n = buf.readUInt16LE(start + 1);
  const out = new Array<SqlValue>(types.length);
  let o = start + 3;
  for (let i = 0; i < types.length; i++) {
    const type = types[i]!;
    if (i >= n) {
      out[i] = missing[i]!;
      continue;
    }
    const tag = buf[o++]!;
    const skip = needed !== undefined && needed[i] === false;
    switch (tag) {
      case 0:
        out[i] = { type, value: null } as SqlValue;
        break;
      case 1:
        out[i] = skip ? NULLS[0]! : type === 'int8' ? { type, value: BigInt(buf.readInt32LE(o)) } : ({ type, value: buf.readInt32LE(o) } as SqlValue);
        o += 4;
        break;
      case 10:
        out[i] = skip ? NULLS[0]! : { type: 'date', value: buf.readInt32LE(o) };
        o += 4;
        break;
      case 2:
      case 11:
        out[i] = skip ? NULLS[0]! : ({ type, value: buf.readBigInt64LE(o) } as SqlValue);
        o += 8;
        break;
      case 3:
        out[i] = skip ? NULLS[0]! : { type: 'float8', value: buf.readDoubleLE(o) };
        o += 8;
        break;
      case 5:
      case 6:
        out[i] = { type: 'boolean', value: tag === 6 };
        break;
      default: {
        const len = buf.readUInt32LE(o);
        o += 4;
        if (!skip) {
          if (tag === 4) out[i] = { type: type === 'unknown' ? 'text' : type, value: buf.toString('utf8', o, o + len) } as SqlValue;
          else if (tag === 7) out[i] = { type: 'numeric', value: Decimal.parse(buf.toString('latin1', o, o + len))! };
          else if (tag === 9) out[i] = { type: 'jsonb', value: { json: JSON.parse(buf.toString('utf8', o, o + len)) } };
          else if (tag === 8) out[i] = { type: 'bytea', value: Buffer.from(buf.subarray(o, o + len)) };
          else if (tag === 12) out[i] = valueOf(packr.unpack(buf.subarray(o, o + len)), type);
          else sqlFail('XX001', `a stored row has an unknown value tag ${tag}`);
        } else out[i] = NULLS[0]!;
        o += len;
      }
    }
  }
  return out;
}

/**
 * Decodes only some columns of a row, as bare values: for physical column `i` with
 * `slots[i] >= 0`, `out[slots[i]]` gets exactly the `value` decodeRow would give it (null for
 * NULL), without a SqlValue object or an array per row. Scans that aggregate read rows this way.
 * `last` is the highest physical column wanted: decoding stops after it. `interners` (by slot)
 * reuse the strings of text columns with few distinct values.
 */
export function decodeRowValues(
  buf: Buffer,
  start: number,
  types: readonly SqlTypeName[],
  missing: readonly SqlValue[],
  slots: Int32Array,
  last: number,
  out: unknown[],
  interners?: readonly (TextInterner | undefined)[],
): void {
  if (buf[start] !== ROW_FORMAT) sqlFail('XX001', `a stored row has an unknown format (${buf[start]})`);
  const n = buf[start + 1]! | (buf[start + 2]! << 8);
  let o = start + 3;
  for (let i = 0; i <= last; i++) {
    const slot = slots[i]!;
    if (i >= n) {
      if (slot >= 0) out[slot] = missing[i]!.value;
      continue;
    }
    const tag = buf[o++]!;
    switch (tag) {
      case 0:
        if (slot >= 0) out[slot] = null;
        break;
      case 1:
        if (slot >= 0) out[slot] = types[i] === 'int8' ? BigInt(buf.readInt32LE(o)) : buf.readInt32LE(o);
        o += 4;
        break;
      case 10:
        if (slot >= 0) out[slot] = buf.readInt32LE(o);
        o += 4;
        break;
      case 2:
      case 11:
        if (slot >= 0) out[slot] = buf.readBigInt64LE(o);
        o += 8;
        break;
      case 3:
        if (slot >= 0) out[slot] = buf.readDoubleLE(o);
        o += 8;
        break;
      case 5:
      case 6:
        if (slot >= 0) out[slot] = tag === 6;
        break;
      default: {
        const len = buf.readUInt32LE(o);
        o += 4;
        if (slot >= 0) {
          if (tag === 4) {
            const interner = interners?.[slot];
            out[slot] = interner !== undefined ? interner.get(buf, o, len) : buf.toString('utf8', o, o + len);
          }
          else if (tag === 7) out[slot] = Decimal.parse(buf.toString('latin1', o, o + len))!;
          else if (tag === 9) out[slot] = { json: JSON.parse(buf.toString('utf8', o, o + len)) };
          else if (tag === 8) out[slot] = Buffer.from(buf.subarray(o, o + len));
          else if (tag === 12) out[slot] = valueOf(packr.unpack(buf.subarray(o, o + len)), types[i]!).value;
          else sqlFail('XX001', `a stored row has an unknown value tag ${tag}`);
        }
        o += len;
      }
    }
  }
}

/**
 * Strings of one text column met again and again (group keys such as a status or a region): a
 * row's bytes are compared with the few distinct values seen so far and the string already made
 * is returned, instead of decoding a new one (which also has to be hashed again by the Map it
 * goes into). Gives up, and decodes every value, once most lookups miss.
 */
export class TextInterner {
  #n = 0;
  #lookups = 0;
  #misses = 0;
  #off = false;
  readonly #bytes: Buffer[] = [];
  readonly #strings: string[] = [];

  get(buf: Buffer, o: number, len: number): string {
    if (this.#off) return buf.toString('utf8', o, o + len);
    this.#lookups++;
    const n = this.#n;
    search: for (let e = 0; e < n; e++) {
      const k = this.#bytes[e]!;
      if (k.length !== len) continue;
      for (let j = 0; j < len; j++) if (k[j] !== buf[o + j]) continue search;
      return this.#strings[e]!;
    }
    const s = buf.toString('utf8', o, o + len);
    if (n < INTERNED_MAX && len <= 64) {
      this.#bytes[n] = Buffer.from(buf.subarray(o, o + len));
      this.#strings[n] = s;
      this.#n = n + 1;
    }
    if (++this.#misses >= 256 && this.#misses * 2 > this.#lookups) this.#off = true;
    return s;
  }
}

const INTERNED_MAX = 16;

/** Placeholder of a skipped column (never read: the query does not refer to it). */
const NULLS: readonly SqlValue[] = [{ type: 'unknown', value: null }];

export function valueOf(raw: unknown, type: SqlTypeName): SqlValue {
  if (raw === null || raw === undefined) return { type, value: null } as SqlValue;
  switch (type) {
    case 'numeric':
      return { type, value: Decimal.parse(raw as string)! };
    case 'jsonb':
      return { type, value: { json: JSON.parse(raw as string) } };
    case 'int8':
    case 'timestamp':
    case 'timestamptz':
    case 'time':
      return { type, value: typeof raw === 'bigint' ? raw : BigInt(raw as number) } as SqlValue;
    case 'timetz': {
      const [time, zone] = raw as [number, number];
      return { type, value: { time: BigInt(time), zone } };
    }
    case 'bytea':
      return { type, value: Buffer.isBuffer(raw) ? raw : Buffer.from(raw as Uint8Array) };
    default:
      if (type.endsWith('[]')) {
        const element = type.slice(0, -2) as SqlTypeName;
        return { type, value: (raw as unknown[]).map((r) => valueOf(r, element)) } as unknown as SqlValue;
      }
      return { type, value: raw } as SqlValue;
  }
}

/** Metadata and catalog records. */
export const metaPackr = new Packr({ useRecords: false });
