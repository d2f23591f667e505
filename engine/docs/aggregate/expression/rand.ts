/**
 * `$rand` (manual: Miscellaneous Operators): a double in [0, 1), drawn afresh each time the
 * expression is evaluated (per document, per use). It takes no arguments: `{"$rand": {}}`.
 * JavaScript's Math.random draws it (MongoDB's is not cryptographic either), unless the scope
 * gives a source: a filter tested on stored documents draws from the document's `_id` and a seed
 * of the request, so testing one document twice draws the same numbers (compile-filter.ts).
 */

import { isPlainObject } from '../../values.js';
import { exprError, type ExprOperator } from './expression.js';

const rand: ExprOperator = {
  kind: 'expression',
  compile(args, _ctx, name) {
    // MongoDB reads the argument as a BSON object (an array is one) and wants it empty.
    if (!isPlainObject(args) && !Array.isArray(args)) exprError(name, `invalid parameter: expected an object (${name})`);
    if (Object.keys(args).length > 0) exprError(name, `${name} does not currently accept arguments`);
    return (scope) => scope.random();
  },
};

export const randOperators: Record<string, ExprOperator> = { $rand: rand };
