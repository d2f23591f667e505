/**
 * $expr (manual: Query Operators > Evaluation): an aggregation expression (aggregate/expression)
 * evaluated on the whole document, matching when its value is truthy: `{$expr: {$gt: ["$spent",
 * "$budget"]}}` compares two fields of one document. At the top level of a filter or inside
 * `$and`/`$or`/`$nor`, not inside `$elemMatch` (as in MongoDB). It never uses an index.
 */

import { exprFields } from '../../aggregate/dependencies.js';
import { compileExpression } from '../../aggregate/expression/operator-table.js';
import { queryError, type ExprOperator } from '../operator.js';

export const exprOperator: ExprOperator = {
  kind: 'expr',
  parse(operand, ctx) {
    if (!ctx.exprAllowed) queryError('$expr', '$expr can only be applied to the top-level document, not inside $elemMatch');
    // Compiled once here so that a bad expression fails with the filter, naming its operator.
    compileExpression(operand, ctx.names);
    const fields = new Set<string>();
    return { kind: 'expr', spec: operand, fields: exprFields(operand, fields) ? [...fields] : 'all', names: [...ctx.names] };
  },
};
