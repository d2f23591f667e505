/**
 * $zip (manual: $zip): the arrays of `inputs` transposed, as long as the shortest (or, with
 * `useLongestLength`, the longest, shorter arrays padded with `defaults` or null). A null or
 * missing input gives null; another non-array is an error.
 */

import { bsonTypeOf, describeValue, isPlainObject, MISSING } from '../../values.js';
import { exprError, isNullish, type Expr, type ExprOperator } from './expression.js';

/** The most elements a $zip builds (MongoDB stops at its 16 MiB value limit; each element takes a byte or more there). */
const MAX_ELEMENTS = 16 * 1024 * 1024;

const zip: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    if (!isPlainObject(args)) exprError(name, `$zip only supports an object as an argument, found ${bsonTypeOf(args)}`);
    let inputs: Expr[] | undefined;
    let defaults: Expr[] = [];
    let longest = false;
    for (const [k, v] of Object.entries(args)) {
      if (k === 'inputs') {
        if (!Array.isArray(v)) exprError(name, `inputs must be an array of expressions, found ${bsonTypeOf(v)}`);
        inputs = v.map((e) => ctx.compile(e));
      } else if (k === 'defaults') {
        if (!Array.isArray(v)) exprError(name, `defaults must be an array of expressions, found ${bsonTypeOf(v)}`);
        defaults = v.map((e) => ctx.compile(e));
      } else if (k === 'useLongestLength') {
        if (typeof v !== 'boolean') exprError(name, `useLongestLength must be a bool, found ${bsonTypeOf(v)}`);
        longest = v;
      } else exprError(name, `$zip found an unknown argument: ${k}`);
    }
    if (inputs === undefined || inputs.length === 0) exprError(name, '$zip requires at least one input array');
    if (!longest && defaults.length > 0) exprError(name, 'cannot specify defaults unless useLongestLength is true');
    if (defaults.length > 0 && defaults.length !== inputs.length) exprError(name, 'defaults and inputs must have the same length');
    const ins = inputs;
    return (scope) => {
      const arrays: unknown[][] = [];
      for (const e of ins) {
        const v = e(scope);
        if (isNullish(v)) return null;
        if (!Array.isArray(v)) exprError(name, `$zip found a non-array expression in input: ${describeValue(v)}`);
        arrays.push(v);
      }
      const pad = ins.map((_, i) => {
        const v = defaults[i] === undefined ? null : defaults[i]!(scope);
        return v === MISSING ? null : v;
      });
      const lengths = arrays.map((a) => a.length);
      const n = longest ? Math.max(...lengths) : Math.min(...lengths);
      if (n * arrays.length > MAX_ELEMENTS) exprError(name, `$zip would make more than ${MAX_ELEMENTS} elements`);
      const out: unknown[][] = [];
      for (let i = 0; i < n; i++) out.push(arrays.map((a, j) => (i < a.length ? a[i] : pad[j])));
      return out;
    };
  },
};

export const zipOperators: Record<string, ExprOperator> = { $zip: zip };
