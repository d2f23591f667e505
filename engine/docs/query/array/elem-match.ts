/**
 * $elemMatch (manual: Array): matches an array field with at least one element satisfying all
 * the conditions. Two forms, told apart by the first key as MongoDB does:
 * `{$elemMatch: {$gte: 80, $lt: 85}}` applies operators to each element itself;
 * `{$elemMatch: {product: "xyz", score: {$gte: 8}}}` applies a filter to each element that is a
 * document (an element that is an array is read as a document with keys "0", "1", ...).
 */

import { isPlainObject, setOwn, type Doc } from '../../values.js';
import type { ElemMatchOp } from '../filter-ast.js';
import { anyValue, queryError, type FieldOperator } from '../operator.js';

// Operators that take no path: when one comes first, the operand is a filter (document form).
const PATHLESS = new Set(['$and', '$or', '$nor', '$comment', '$where', '$expr', '$text', '$jsonSchema', '$alwaysTrue', '$alwaysFalse', '$sampleRate']);

function arrayAsDocument(arr: readonly unknown[]): Doc {
  const doc: Doc = {};
  for (let i = 0; i < arr.length; i++) setOwn(doc, String(i), arr[i]);
  return doc;
}

export const elemMatchOperator: FieldOperator<'$elemMatch'> = {
  kind: 'field',
  parse: (operand, ctx): ElemMatchOp => {
    if (!isPlainObject(operand)) queryError('$elemMatch', '$elemMatch needs an Object');
    const first = Object.keys(operand)[0];
    if (first !== undefined && first.startsWith('$') && !PATHLESS.has(first)) {
      return { op: '$elemMatch', value: { form: 'value', ops: ctx.parseOperators(operand, '$elemMatch') } };
    }
    return { op: '$elemMatch', value: { form: 'document', filter: ctx.parseFilter(operand, '$elemMatch') } };
  },
  compile: (op, ctx) => {
    let element: (el: unknown) => boolean;
    const spec = op.value;
    if (spec.form === 'value') {
      const ops = ctx.compileOps(spec.ops);
      element = (el) => ops.every((c) => c.single(el));
    } else {
      const test = ctx.compileFilter(spec.filter);
      element = (el) => (isPlainObject(el) ? test(el) : Array.isArray(el) ? test(arrayAsDocument(el)) : false);
    }
    return anyValue('no-traversal', (v) => Array.isArray(v) && v.some(element));
  },
};
