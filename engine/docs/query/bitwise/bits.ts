/**
 * $bitsAllSet, $bitsAnySet, $bitsAllClear, $bitsAnyClear (manual: Query > Bitwise): test bit
 * positions of a number, given as a non-negative integer bitmask (its set bits) or an array of
 * positions (non-negative 32-bit integers), with MongoDB's parse messages (BSONElement's
 * parseIntegerElementTo*). BinData bitmasks have no JSON form here and are refused by name.
 *
 * Matching is MongoDB's BitTestMatchExpression: only numbers that are 64-bit integers match (an
 * integral double in [-2^63, 2^63) counts; fractions, and anything that is not a number, never
 * match); a negative number is two's complement, sign-extended, so a position of 64 or more
 * reads its sign (bit 200 is set in -5 and clear in 5). With no position, "all" matches every
 * such number and "any" none. Array fields match through their elements.
 */

import { describeValue, isPlainObject } from '../../values.js';
import type { BitsOp } from '../filter-ast.js';
import { anyValue, nonNegativeInteger, queryError, type FieldOperator } from '../operator.js';

type BitsName = BitsOp['op'];

const INT64_LIMIT = 2 ** 63;
const INT32_MAX = 2 ** 31 - 1;

// The text MongoDB gives for an element: `name: value`.
const shown = (name: string, v: unknown): string => `${name}: ${describeValue(v)}`;

/** The positions of the set bits of a non-negative integer below 2^63. */
function setBits(mask: number): number[] {
  const out: number[] = [];
  let m = BigInt(mask);
  for (let i = 0; m > 0n; i++, m >>= 1n) if ((m & 1n) === 1n) out.push(i);
  return out;
}

function parseBits(name: BitsName, operand: unknown): BitsOp {
  if (Array.isArray(operand)) {
    const positions = operand.map((p, i) => nonNegativeInteger(p, String(i), name, INT32_MAX, 'Failed to parse bit position. '));
    return { op: name, value: [...new Set(positions)].sort((a, b) => a - b) };
  }
  if (typeof operand === 'number') return { op: name, value: setBits(nonNegativeInteger(operand, name, name, INT64_LIMIT)) };
  if (isPlainObject(operand) && Object.hasOwn(operand, '$binary')) {
    queryError(name, `${name} with a BinData bitmask is not supported: tetradb has no binary type; give the bitmask as a number or an array of bit positions`);
  }
  queryError(name, `${name} takes an Array, a number, or a BinData but received: ${shown(name, operand)}`);
}

/** The value as a 64-bit integer, or undefined when it is not one (then it never matches). */
function int64(v: unknown): bigint | undefined {
  if (typeof v !== 'number' || !Number.isInteger(v) || v >= INT64_LIMIT || v < -INT64_LIMIT) return undefined;
  return BigInt(v);
}

function isSet(value: bigint, position: number): boolean {
  if (position >= 64) return value < 0n;
  return ((BigInt.asUintN(64, value) >> BigInt(position)) & 1n) === 1n;
}

function bitsOperator(name: BitsName, wantSet: boolean, all: boolean): FieldOperator<BitsName> {
  return {
    kind: 'field',
    parse: (operand) => parseBits(name, operand),
    compile: (op) => {
      const positions = op.value;
      return anyValue('traverse', (v) => {
        const n = int64(v);
        if (n === undefined) return false;
        return all ? positions.every((p) => isSet(n, p) === wantSet) : positions.some((p) => isSet(n, p) === wantSet);
      });
    },
  };
}

export const bitsAllSetOperator = bitsOperator('$bitsAllSet', true, true);
export const bitsAnySetOperator = bitsOperator('$bitsAnySet', true, false);
export const bitsAllClearOperator = bitsOperator('$bitsAllClear', false, true);
export const bitsAnyClearOperator = bitsOperator('$bitsAnyClear', false, false);
