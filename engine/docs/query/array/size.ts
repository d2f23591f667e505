/**
 * $size (manual: Array): matches an array field with exactly that many elements. Only exact
 * sizes, as in MongoDB (no ranges); the operand must be a non-negative whole number.
 */

import type { SizeOp } from '../filter-ast.js';
import { anyValue, queryError, type FieldOperator } from '../operator.js';

const INT32_MAX = 2147483647;

export const sizeOperator: FieldOperator<'$size'> = {
  kind: 'field',
  parse: (operand): SizeOp => {
    if (typeof operand !== 'number') queryError('$size', '$size needs a number');
    if (!Number.isInteger(operand)) queryError('$size', '$size must be a whole number');
    if (operand < 0) queryError('$size', '$size may not be negative');
    if (operand > INT32_MAX) queryError('$size', '$size must be representable as a 32-bit integer');
    return { op: '$size', value: operand };
  },
  compile: (op) => anyValue('no-traversal', (v) => Array.isArray(v) && v.length === op.value),
};
