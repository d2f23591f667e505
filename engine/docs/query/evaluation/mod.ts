/**
 * $mod (manual: Evaluation): `{a: {$mod: [divisor, remainder]}}` matches numbers whose value,
 * truncated toward zero, has that remainder (sign of the dividend, as in C and JavaScript).
 * Operands are truncated to integers as in MongoDB 5+; NaN, Infinity and a zero divisor are
 * errors.
 */

import type { ModOp } from '../filter-ast.js';
import { anyValue, queryError, type FieldOperator } from '../operator.js';

const INT64_LIMIT = 2 ** 63;

function operandPart(value: unknown, what: 'divisor' | 'remainder'): number {
  if (typeof value !== 'number') queryError('$mod', `malformed mod, ${what} not a number`);
  if (!Number.isFinite(value) || Math.abs(Math.trunc(value)) >= INT64_LIMIT) {
    queryError('$mod', `malformed mod, ${what} value is invalid: ${value} is not representable as a 64-bit integer`);
  }
  return Math.trunc(value) + 0; // + 0 turns -0 into 0
}

export const modOperator: FieldOperator<'$mod'> = {
  kind: 'field',
  parse: (operand): ModOp => {
    if (!Array.isArray(operand)) queryError('$mod', 'malformed mod, needs to be an array');
    if (operand.length < 2) queryError('$mod', 'malformed mod, not enough elements');
    if (operand.length > 2) queryError('$mod', 'malformed mod, too many elements');
    const divisor = operandPart(operand[0], 'divisor');
    const remainder = operandPart(operand[1], 'remainder');
    if (divisor === 0) queryError('$mod', 'divisor cannot be 0');
    return { op: '$mod', value: [divisor, remainder] };
  },
  compile: (op) => {
    const [divisor, remainder] = op.value;
    return anyValue('traverse', (v) => {
      if (typeof v !== 'number' || !Number.isFinite(v)) return false;
      const dividend = Math.trunc(v);
      if (Math.abs(dividend) >= INT64_LIMIT) return false;
      // Exact: both are integers held exactly, and % on doubles is exact (fmod).
      return dividend % divisor === remainder;
    });
  },
};
