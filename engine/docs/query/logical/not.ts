/**
 * $not (manual: Logical): `{price: {$not: {$gt: 1.99}}}` matches when the operator expression
 * does not match, including documents without the field. The operand must be a nonempty
 * operator expression (MongoDB's regex-literal form has no JSON spelling; use `{$regex: ...}`).
 */

import { isPlainObject } from '../../values.js';
import type { NotOp } from '../filter-ast.js';
import { queryError, type FieldOperator } from '../operator.js';

export const notOperator: FieldOperator<'$not'> = {
  kind: 'field',
  parse: (operand, ctx): NotOp => {
    if (!isPlainObject(operand)) queryError('$not', '$not needs a regex or a document');
    if (Object.keys(operand).length === 0) queryError('$not', '$not cannot be empty');
    return { op: '$not', value: ctx.parseOperators(operand, '$not') };
  },
  compile: (op, ctx) => {
    const inner = ctx.compileOps(op.value);
    return {
      matches: (subject) => !inner.every((c) => c.matches(subject)),
      single: (value) => !inner.every((c) => c.single(value)),
    };
  },
};
