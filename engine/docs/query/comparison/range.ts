/**
 * $gt, $gte, $lt, $lte (manual: Comparison). A comparison only matches values of the operand's
 * type bracket: `{a: {$gt: 1}}` never matches a string. `$gte: null` and `$lte: null` match null
 * and missing like equality; NaN is only ever >= or <= NaN.
 */

import { compareValues, MISSING, typeBracket } from '../../values.js';
import type { ComparisonOp } from '../filter-ast.js';
import { anyValue, type CompiledOp, type FieldOperator } from '../operator.js';

type RangeName = '$gt' | '$gte' | '$lt' | '$lte';

/** The test of one value against `{<name>: operand}` (also $jsonSchema's minimum and maximum). */
export function rangeSingle(name: RangeName, operand: unknown): (value: unknown) => boolean {
  const inclusive = name === '$gte' || name === '$lte';
  const accept = name === '$gt' ? (c: number) => c > 0 : name === '$gte' ? (c: number) => c >= 0 : name === '$lt' ? (c: number) => c < 0 : (c: number) => c <= 0;
  const operandNaN = typeof operand === 'number' && Number.isNaN(operand);
  const bracket = typeBracket(operand);
  return (value) => {
    // Missing and null are distinct types that compare as equal (MongoDB: "jstNULL and undefined
    // are treated the same"), so only the inclusive comparisons with null accept a missing field.
    if (value === MISSING) return operand === null && inclusive;
    if (typeBracket(value) !== bracket) return false;
    const valueNaN = typeof value === 'number' && Number.isNaN(value);
    if (valueNaN || operandNaN) return inclusive && valueNaN && operandNaN;
    return accept(compareValues(value, operand));
  };
}

function rangeOperator(name: RangeName): FieldOperator<RangeName> {
  return {
    kind: 'field',
    parse: (operand): ComparisonOp => ({ op: name, value: operand }),
    compile: (op): CompiledOp => anyValue('traverse', rangeSingle(name, op.value)),
  };
}

export const gtOperator = rangeOperator('$gt');
export const gteOperator = rangeOperator('$gte');
export const ltOperator = rangeOperator('$lt');
export const lteOperator = rangeOperator('$lte');
