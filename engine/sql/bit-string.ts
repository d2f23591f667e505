import { makeInt, sqlFail, type SqlValue } from './sql-types.js';

/**
 * PostgreSQL's bit strings, `bit(n)` and `bit varying(n)`. A value is held as a string of the
 * characters 0 and 1, most significant bit first. Ordered as PostgreSQL's bitcmp orders them
 * (the bits compared left to right, a prefix before the longer string), which is plain string
 * order of that form; so the key encoding and hashing use the string as it is.
 */

/** A bit-string type. */
export type BitType = 'bit' | 'varbit';

/** Whether a type is one of the bit-string types. */
export function isBitType(t: string): t is BitType {
  return t === 'bit' || t === 'varbit';
}

/**
 * bit_in / varbit_in: binary digits, or with a leading `B` binary and with `X` hex digits (four
 * bits each).
 * @throws SQL_ERROR 22P02 a digit of the wrong kind
 */
export function parseBits(raw: string): string {
  const first = raw[0];
  if (first === 'x' || first === 'X') {
    let out = '';
    for (const c of raw.slice(1)) {
      const d = parseInt(c, 16);
      if (!/^[0-9a-fA-F]$/.test(c)) sqlFail('22P02', `"${c}" is not a valid hexadecimal digit`);
      out += d.toString(2).padStart(4, '0');
    }
    return out;
  }
  const digits = first === 'b' || first === 'B' ? raw.slice(1) : raw;
  for (const c of digits) if (c !== '0' && c !== '1') sqlFail('22P02', `"${c}" is not a valid binary digit`);
  return digits;
}

/**
 * A bit string brought to a typmod by an explicit cast: bit(n) truncates or pads with zeros on
 * the right, bit varying(n) truncates.
 */
export function fitBits(bits: string, type: BitType, n: number): string {
  if (bits.length > n) return bits.slice(0, n);
  return type === 'bit' && bits.length < n ? bits + '0'.repeat(n - bits.length) : bits;
}

/**
 * A bit string assigned to a column of type bit(n) (exactly n bits) or bit varying(n) (at most n).
 * @throws SQL_ERROR 22026 bit(n) of another length, 22001 bit varying(n) too long
 */
export function assignBits(bits: string, type: BitType, n: number): string {
  if (type === 'bit' && bits.length !== n) sqlFail('22026', `bit string length ${bits.length} does not match type bit(${n})`);
  if (type === 'varbit' && bits.length > n) sqlFail('22001', `bit string too long for type bit varying(${n})`);
  return bits;
}

/** int4 / int8 -> bit(n): the low n bits in two's complement, sign-extended past the width. */
export function bitsFromInt(v: bigint, width: 32 | 64, n: number): string {
  const bits = BigInt.asUintN(width, v).toString(2).padStart(width, '0');
  if (n <= width) return bits.slice(width - n);
  return bits[0]!.repeat(n - width) + bits;
}

/**
 * bit -> int4 / int8: the bits as a two's complement integer of the width.
 * @throws SQL_ERROR 22003 more bits than the width
 */
export function intFromBits(bits: string, type: 'int4' | 'int8'): SqlValue {
  const width = type === 'int4' ? 32 : 64;
  if (bits.length > width) sqlFail('22003', type === 'int4' ? 'integer out of range' : 'bigint out of range');
  return makeInt(type, bits === '' ? 0n : BigInt.asIntN(width, BigInt(`0b${bits}`)));
}

const BIT_OPERATION_NAMES = { '&': 'AND', '|': 'OR', '#': 'XOR' } as const;

/**
 * bit & bit, bit | bit, bit # bit: bitwise over strings of the same length.
 * @throws SQL_ERROR 22026 lengths differ
 */
export function bitwise(op: '&' | '|' | '#', a: string, b: string): string {
  if (a.length !== b.length) sqlFail('22026', `cannot ${BIT_OPERATION_NAMES[op]} bit strings of different sizes`);
  let out = '';
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i) === 0x31;
    const y = b.charCodeAt(i) === 0x31;
    out += (op === '&' ? x && y : op === '|' ? x || y : x !== y) ? '1' : '0';
  }
  return out;
}

/** ~bit: every bit flipped. */
export function bitNot(a: string): string {
  let out = '';
  for (let i = 0; i < a.length; i++) out += a.charCodeAt(i) === 0x31 ? '0' : '1';
  return out;
}

/** bit << n, bit >> n: the length kept, zeros shifted in; a negative count shifts the other way. */
export function bitShift(a: string, count: number, left: boolean): string {
  if (count < 0) return bitShift(a, -count, !left);
  const n = a.length;
  if (count >= n) return '0'.repeat(n);
  return left ? a.slice(count) + '0'.repeat(count) : '0'.repeat(count) + a.slice(0, n - count);
}

/**
 * get_bit / set_bit's index check (bits counted from 0 at the left).
 * @throws SQL_ERROR 2202E out of range
 */
export function checkBitIndex(a: string, n: number): void {
  if (n < 0 || n >= a.length) sqlFail('2202E', `bit index ${n} out of valid range (0..${a.length - 1})`);
}
