/**
 * Object and variable expression operators (manual: Object Expression Operators, `$let`,
 * `$literal`): `$mergeObjects` (null and missing ignored, later fields win), `$objectToArray`,
 * `$arrayToObject` (`[k, v]` pairs or `{k, v}` documents), `$getField`, `$let` and `$literal`.
 */

import { bsonTypeOf, getOwn, isPlainObject, setOwn, type Doc } from '../../values.js';
import { checkVariableName, exprError, isNullish, unary, type ExprOperator } from './expression.js';

function obj(v: unknown, name: string): Doc {
  if (!isPlainObject(v)) exprError(name, `${name} requires a document input, found: ${bsonTypeOf(v)}`);
  return v;
}

const mergeObjects: ExprOperator = {
  kind: 'expression',
  compile(args, ctx) {
    const parts = (Array.isArray(args) ? args : [args]).map((a) => ctx.compile(a));
    return (scope) => {
      const out: Doc = {};
      const add = (v: unknown): void => {
        if (isNullish(v)) return;
        for (const [k, x] of Object.entries(obj(v, '$mergeObjects'))) setOwn(out, k, x);
      };
      // One argument that is an array (the accumulator form's input) merges its elements.
      if (parts.length === 1) {
        const v = parts[0]!(scope);
        if (Array.isArray(v)) for (const el of v) add(el);
        else add(v);
      } else for (const e of parts) add(e(scope));
      return out;
    };
  },
};

const arrayToObject = unary((v, name) => {
  if (isNullish(v)) return null;
  if (!Array.isArray(v)) exprError(name, `$arrayToObject requires an array input, found: ${bsonTypeOf(v)}`);
  const out: Doc = {};
  for (const el of v) {
    let k: unknown;
    let x: unknown;
    if (Array.isArray(el) && el.length === 2) [k, x] = el;
    else if (isPlainObject(el) && Object.keys(el).length === 2 && Object.hasOwn(el, 'k') && Object.hasOwn(el, 'v')) [k, x] = [el['k'], el['v']];
    else exprError(name, '$arrayToObject requires an array of size-2 arrays or of documents with exactly the fields k and v');
    if (typeof k !== 'string') exprError(name, `$arrayToObject requires string keys, found: ${bsonTypeOf(k)}`);
    if (k.includes('\0')) exprError(name, "$arrayToObject: a key must not contain a NUL character");
    setOwn(out, k, x);
  }
  return out;
});

const getField: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const spec = isPlainObject(args) && Object.hasOwn(args, 'field') ? args : { field: args, input: '$$CURRENT' };
    for (const k of Object.keys(spec)) if (k !== 'field' && k !== 'input') exprError(name, `$getField found an unknown argument: ${k}`);
    if (typeof spec['field'] !== 'string') exprError(name, "$getField requires 'field' to evaluate to a constant string");
    const field = spec['field'];
    const input = ctx.compile(Object.hasOwn(spec, 'input') ? spec['input'] : '$$CURRENT');
    return (scope) => {
      const v = input(scope);
      if (isNullish(v)) return null;
      return isPlainObject(v) ? getOwn(v, field) : exprError(name, `$getField requires 'input' to evaluate to an object, found: ${bsonTypeOf(v)}`);
    };
  },
};

const letOperator: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    if (!isPlainObject(args) || !isPlainObject(args['vars']) || !Object.hasOwn(args, 'in')) exprError(name, "$let requires an object with 'vars' (an object) and 'in'");
    for (const k of Object.keys(args)) if (k !== 'vars' && k !== 'in') exprError(name, `Unrecognized parameter to $let: ${k}`);
    const vars = Object.entries(args['vars']).map(([k, v]) => [checkVariableName(k, name), ctx.compile(v)] as const);
    const body = ctx.withNames(vars.map(([k]) => k)).compile(args['in']);
    return (scope) => body(scope.with(new Map(vars.map(([k, e]) => [k, e(scope)]))));
  },
};

export const objectOperators: Record<string, ExprOperator> = {
  $mergeObjects: mergeObjects,
  $objectToArray: unary((v, name) => (isNullish(v) ? null : Object.entries(obj(v, name)).map(([k, x]) => ({ k, v: x })))),
  $arrayToObject: arrayToObject,
  $getField: getField,
  $let: letOperator,
  $literal: { kind: 'expression', compile: (args) => () => args },
};
