/**
 * `$setField` and `$unsetField` (manual: Object Expression Operators, MongoDB 5.0+): a copy of
 * the `input` document with one field set or removed. The field is named by a constant string
 * (a plain string, or `$literal` for one starting with `$`), taken whole: a name with `.` or `$`
 * is that one field, never a path. A value that is missing (`$$REMOVE`, a missing field) removes
 * the field; an existing field keeps its place, a new one comes last. A null or missing input
 * gives null. MongoDB's messages, with its quirk that the evaluation error of `$unsetField` names
 * `$setField` (it is `$setField` with `value: "$$REMOVE"` there).
 */

import { bsonTypeOf, getOwn, isPlainObject, MISSING, setOwn, type Doc } from '../../values.js';
import { exprError, isNullish, type ExprContext, type ExprOperator } from './expression.js';

const SET_FIELD = '$setField';

/** The constant field name of `spec`, refused as MongoDB refuses what is not one. @throws QUERY_ERROR */
function fieldName(spec: unknown, name: string): string {
  if (typeof spec === 'string' && spec.startsWith('$')) {
    // MongoDB names the path as it parsed it: "$a" is $CURRENT.a, "$$v.a" the variable's $v.a.
    const ref = spec.startsWith('$$') ? spec.slice(1) : `$CURRENT.${spec.slice(1)}`;
    exprError(name, `'${ref}' is a field path reference which is not allowed in this context. Did you mean {$literal: '${ref}'}?`);
  }
  let value: unknown = spec;
  if (isPlainObject(spec) || Array.isArray(spec)) {
    const keys = isPlainObject(spec) ? Object.keys(spec) : [];
    if (keys.length !== 1 || keys[0] !== '$literal') exprError(name, `${name} requires 'field' to evaluate to a constant, but got a non-constant argument`);
    value = (spec as Doc)['$literal'];
  }
  if (typeof value !== 'string') exprError(name, `${name} requires 'field' to evaluate to type String, but got ${bsonTypeOf(value)}`);
  return value;
}

function setField(remove: boolean): ExprOperator {
  const allowed = remove ? ['field', 'input'] : ['field', 'input', 'value'];
  return {
    kind: 'expression',
    compile(args: unknown, ctx: ExprContext, name: string) {
      if (!isPlainObject(args)) exprError(name, `${name} only supports an object as its argument`);
      for (const k of Object.keys(args)) if (!allowed.includes(k)) exprError(name, `${name} found an unknown argument: ${k}`);
      if (!Object.hasOwn(args, 'field')) exprError(name, `${name} requires 'field' to be specified`);
      if (!remove && !Object.hasOwn(args, 'value')) exprError(name, `${SET_FIELD} requires 'value' to be specified`);
      if (!Object.hasOwn(args, 'input')) exprError(name, `${name} requires 'input' to be specified`);
      const field = fieldName(args['field'], name);
      const input = ctx.compile(args['input']);
      const value = remove ? () => MISSING : ctx.compile(args['value']);
      return (scope) => {
        const doc = input(scope);
        if (isNullish(doc)) return null;
        if (!isPlainObject(doc)) exprError(name, `${SET_FIELD} requires 'input' to evaluate to type Object`);
        const v = value(scope);
        const out: Doc = {};
        for (const k of Object.keys(doc)) if (k !== field || v !== MISSING) setOwn(out, k, k === field ? v : getOwn(doc, k));
        if (v !== MISSING) setOwn(out, field, v);
        return out;
      };
    },
  };
}

export const setFieldOperators: Record<string, ExprOperator> = {
  $setField: setField(false),
  $unsetField: setField(true),
};
