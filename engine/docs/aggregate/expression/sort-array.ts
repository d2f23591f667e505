/**
 * $sortArray (manual: $sortArray): `input` sorted by `sortBy`, 1 or -1 for the values themselves
 * in BSON order, or a sort document for documents, compared as the find sort compares them
 * (sort.ts; values that are not documents have every field missing). Ties keep their order. A
 * null or missing input gives null.
 */

import { compileSort } from '../../sort.js';
import { bsonTypeOf, compareValues, isPlainObject } from '../../values.js';
import { exprError, isNullish, type ExprOperator } from './expression.js';
import { isTetraError } from '../../../errors.js';

const sortArray: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    if (!isPlainObject(args)) exprError(name, `$sortArray requires an object as an argument, found: ${bsonTypeOf(args)}`);
    for (const k of Object.keys(args)) if (k !== 'input' && k !== 'sortBy') exprError(name, `$sortArray found an unknown argument: ${k}`);
    if (!Object.hasOwn(args, 'input')) exprError(name, "$sortArray requires 'input' to be specified");
    if (!Object.hasOwn(args, 'sortBy')) exprError(name, "$sortArray requires 'sortBy' to be specified");
    const input = ctx.compile(args['input']);
    const sortBy = args['sortBy'];
    let compare: (a: unknown, b: unknown) => number;
    if (sortBy === 1 || sortBy === -1) compare = (a, b) => sortBy * compareValues(a, b);
    else if (isPlainObject(sortBy) && Object.keys(sortBy).length > 0) {
      try {
        compare = compileSort(sortBy).compare;
      } catch (err) {
        // The find sort's message, named as this operator's.
        if (isTetraError(err, 'QUERY_ERROR')) exprError(name, `$sortArray: ${err.message}`);
        throw err;
      }
    } else exprError(name, '$sortArray requires sortBy to be either 1, -1 or a non-empty sort document');
    return (scope) => {
      const v = input(scope);
      if (isNullish(v)) return null;
      if (!Array.isArray(v)) exprError(name, `The input argument to $sortArray must be an array, but was of type: ${bsonTypeOf(v)}`);
      // Array.prototype.sort is stable.
      return [...v].sort(compare);
    };
  },
};

export const sortArrayOperators: Record<string, ExprOperator> = { $sortArray: sortArray };
