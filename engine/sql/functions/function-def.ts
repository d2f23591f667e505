import type { Collation } from '../collation.js';
import { typeDisplay } from '../sql-cast.js';
import type { CompiledExpr, EvalContext } from '../compiled-expr.js';
import { canCoerce, coerce } from '../type-resolution.js';
import { sqlFail, type NonNullSqlValue, type SqlTypeName, type SqlValue, NO_FUNCTION_HINT } from '../sql-types.js';

/** A SQL function: resolves its overload from the argument types at compile time. */
export interface FunctionDef {
  /** `collation`: the arguments' (collation.ts mergeCollations), for what maps case or compares text. */
  compile(name: string, args: CompiledExpr[], collation?: Collation): CompiledExpr;
}

/** One signature of a strict function (NULL in, NULL out). */
export interface Overload {
  args: SqlTypeName[];
  returns: SqlTypeName;
  impl(args: NonNullSqlValue[], ctx: EvalContext): SqlValue;
}

/** @throws SQL_ERROR 42883 naming the function and argument types */
export function noFunction(name: string, args: CompiledExpr[]): never {
  return sqlFail('42883', `function ${name}(${args.map((a) => typeDisplay(a.type)).join(', ')}) does not exist`, undefined, NO_FUNCTION_HINT);
}

/**
 * A strict function with overloads. Resolution: an exact match on every known argument type
 * first, then the coercible overload with the most exact matches (list the preferred type first:
 * float8 before numeric, as PostgreSQL prefers float8 for integer arguments).
 */
export function strict(...overloads: Overload[]): FunctionDef {
  return {
    compile(name, args) {
      const fits = (o: Overload, exact: boolean): boolean =>
        o.args.length === args.length && o.args.every((t, i) => (exact ? args[i]!.type === t || args[i]!.type === 'unknown' : canCoerce(args[i]!.type, t)));
      // Then, among coercible ones, the one with the most exact argument matches (first wins ties).
      const exactCount = (o: Overload): number => o.args.filter((t, i) => args[i]!.type === t).length;
      let o = overloads.find((x) => fits(x, true));
      if (o === undefined) {
        for (const x of overloads) if (fits(x, false) && (o === undefined || exactCount(x) > exactCount(o))) o = x;
      }
      if (o === undefined) return noFunction(name, args);
      const coerced = args.map((a, i) => coerce(a, o.args[i]!));
      return {
        type: o.returns,
        evaluate(ctx) {
          // Every argument is evaluated before the NULL check, so argument errors surface as in PostgreSQL.
          const vals = coerced.map((a) => a.evaluate(ctx));
          if (vals.some((v) => v.value === null)) return { type: o.returns, value: null };
          return o.impl(vals as NonNullSqlValue[], ctx);
        },
      };
    },
  };
}
