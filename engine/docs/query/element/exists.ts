/**
 * $exists (manual: Element). `{a: {$exists: true}}` matches when some value is reached at `a`
 * (null counts; an empty array counts); `$exists: false` is its negation. The operand is read as
 * MongoDB reads it: false, 0 and null mean false, anything else true.
 */

import { MISSING } from '../../values.js';
import type { ExistsOp } from '../filter-ast.js';
import { anyValue, negate, type FieldOperator } from '../operator.js';

export const existsOperator: FieldOperator<'$exists'> = {
  kind: 'field',
  parse: (operand): ExistsOp => ({ op: '$exists', value: !(operand === false || operand === 0 || operand === null) }),
  compile: (op) => {
    const exists = anyValue('traverse', (v) => v !== MISSING);
    return op.value ? exists : negate(exists);
  },
};
