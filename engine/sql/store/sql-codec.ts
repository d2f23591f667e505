import { Packr } from 'msgpackr';
import { Decimal } from '../decimal.js';
import { sqlFail, type SqlTypeName, type SqlValue } from '../sql-types.js';

/**
 * How SQL values are stored.
 *
 * Keys (primary keys and index entries) are tuples in an order-preserving byte encoding, so the
 * B+trees order them as PostgreSQL orders the values with plain byte comparison:
 *   NULL           0xF0 (after every value: ascending indexes put NULLs last, as PostgreSQL's)
 *   a value        0x20, then by type:
 *     int2/int4/int8/date/timestamp/timestamptz  8 bytes big-endian, sign bit flipped
 *     float8       8 bytes IEEE754 (positive: sign flipped; negative: all flipped); -0 as 0,
 *                  NaN above +Infinity (PostgreSQL sorts NaN last)
 *     numeric      sign byte (0x01 negative, 0x02 zero, 0x03 positive), then for non-zero the
 *                  decimal exponent (4 bytes, sign flipped) and the significant digits without
 *                  trailing zeros, 0x00-terminated; negative numbers complement exponent and
 *                  digits and end with 0xFF, so larger magnitudes sort first
 *     boolean      0x00 / 0x01
 *     text/bytea   the bytes with 0x00 written as 0x00 0xFF, then 0x00
 * jsonb cannot be a key. Every component starts with a tag below 0xFF, so a text terminator is
 * never mistaken for an escape, and a tuple's encoding is a prefix of any longer tuple's.
 *
 * Rows are msgpack arrays of the column values in physical column order (int8 and timestamps
 * as int64, numeric as its text, jsonb as its JSON text, dates as day numbers).
 */

const TAG_VALUE = 0x20;
const TAG_NULL = 0xf0;

export function keyable(type: SqlTypeName): boolean {
  return type !== 'jsonb' && type !== 'unknown' && !type.endsWith('[]');
}

/** Appends the key encoding of `v` (already of the column's type) to `out`. */
export function encodeKeyPart(out: number[], v: SqlValue): void {
  if (v.value === null) {
    out.push(TAG_NULL);
    return;
  }
  out.push(TAG_VALUE);
  switch (v.type) {
    case 'int2':
    case 'int4':
    case 'date':
      pushInt64(out, v.value);
      return;
    case 'int8':
    case 'timestamp':
    case 'timestamptz':
      pushInt64(out, v.value);
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
    case 'bytea':
      pushBytes(out, v.value);
      return;
    default:
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
    default:
      if (v.type.endsWith('[]')) return (v.value as unknown as SqlValue[]).map(storedOf);
      return v.value;
  }
}

/** A row (values in physical column order) to bytes. */
export function encodeRow(values: readonly SqlValue[]): Buffer {
  const out = new Array<unknown>(values.length);
  for (let i = 0; i < values.length; i++) out[i] = storedOf(values[i]!);
  return packr.pack(out);
}

/** Decodes a row into values of the physical columns' types; missing trailing columns get `missing`. */
export function decodeRow(bytes: Uint8Array, types: readonly SqlTypeName[], missing: readonly SqlValue[]): SqlValue[] {
  const raw = packr.unpack(bytes) as unknown[];
  const out = new Array<SqlValue>(types.length);
  for (let i = 0; i < types.length; i++) {
    out[i] = i < raw.length ? valueOf(raw[i], types[i]!) : missing[i]!;
  }
  return out;
}

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
      return { type, value: typeof raw === 'bigint' ? raw : BigInt(raw as number) } as SqlValue;
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
