/**
 * Conditional expression operators (manual: Conditional Expression Operators): `$cond` (array or
 * `{if, then, else}` form), `$ifNull` (the first argument that is neither null nor missing, else
 * the last), `$switch` (the first branch whose case is true, else `default`; none is an error).
 */

import { isPlainObject } from '../../values.js';
import { truthy } from './comparison.js';
import { compileArgs, exprError, isNullish, type Expr, type ExprOperator } from './expression.js';

const cond: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    let parts: Expr[];
    if (isPlainObject(args)) {
      for (const k of Object.keys(args)) if (k !== 'if' && k !== 'then' && k !== 'else') exprError(name, `Unrecognized parameter to $cond: ${k}`);
      for (const k of ['if', 'then', 'else']) if (!Object.hasOwn(args, k)) exprError(name, `Missing '${k}' parameter to $cond`);
      parts = [ctx.compile(args['if']), ctx.compile(args['then']), ctx.compile(args['else'])];
    } else parts = compileArgs(args, ctx, name, 3);
    const [test, then, otherwise] = parts as [Expr, Expr, Expr];
    return (scope) => (truthy(test(scope)) ? then(scope) : otherwise(scope));
  },
};

const ifNull: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const parts = compileArgs(args, ctx, name, 2, Infinity);
    return (scope) => {
      for (let i = 0; i < parts.length - 1; i++) {
        const v = parts[i]!(scope);
        if (!isNullish(v)) return v;
      }
      return parts[parts.length - 1]!(scope);
    };
  },
};

const switchOperator: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    if (!isPlainObject(args)) exprError(name, '$switch requires an object as an argument');
    for (const k of Object.keys(args)) if (k !== 'branches' && k !== 'default') exprError(name, `$switch found an unknown argument: ${k}`);
    const branchSpecs = args['branches'];
    if (!Array.isArray(branchSpecs)) exprError(name, "$switch expected an array for 'branches'");
    const branches = branchSpecs.map((b) => {
      if (!isPlainObject(b) || !Object.hasOwn(b, 'case') || !Object.hasOwn(b, 'then')) exprError(name, "$switch requires each branch have a 'case' and a 'then' expression");
      for (const k of Object.keys(b)) if (k !== 'case' && k !== 'then') exprError(name, `$switch found an unknown argument to a branch: ${k}`);
      return { test: ctx.compile(b['case']), then: ctx.compile(b['then']) };
    });
    const otherwise = Object.hasOwn(args, 'default') ? ctx.compile(args['default']) : undefined;
    return (scope) => {
      for (const b of branches) if (truthy(b.test(scope))) return b.then(scope);
      if (otherwise === undefined) exprError(name, '$switch could not find a matching branch for an input, and no default was specified.');
      return otherwise(scope);
    };
  },
};

export const conditionalOperators: Record<string, ExprOperator> = {
  $cond: cond,
  $ifNull: ifNull,
  $switch: switchOperator,
};
