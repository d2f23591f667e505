/**
 * $eq and $ne (manual: Query and Projection Operators > Comparison). `{a: 1}` is `{a: {$eq: 1}}`.
 * Equality holds within one type bracket (1 equals 1.0, "1" does not); null also matches a
 * missing field; an array field matches when an element or the whole array equals the operand.
 */

import { compareValues, MISSING, typeBracket } from '../../values.js';
import type { ComparisonOp } from '../filter-ast.js';
import { anyValue, negate, type CompiledOp, type FieldOperator } from '../operator.js';

/** MongoDB's EQ on one value: same type bracket and equal; null also equals MISSING. */
export function equalsSingle(value: unknown, operand: unknown): boolean {
  if (operand === null) return value === null || value === MISSING;
  if (value === MISSING) return false;
  return typeBracket(value) === typeBracket(operand) && compareValues(value, operand) === 0;
}

function compileEq(operand: unknown): CompiledOp {
  return anyValue('traverse', (v) => equalsSingle(v, operand));
}

export const eqOperator: FieldOperator<'$eq'> = {
  kind: 'field',
  parse: (operand): ComparisonOp => ({ op: '$eq', value: operand }),
  compile: (op) => compileEq(op.value),
};

export const neOperator: FieldOperator<'$ne'> = {
  kind: 'field',
  parse: (operand): ComparisonOp => ({ op: '$ne', value: operand }),
  compile: (op) => negate(compileEq(op.value)),
};
