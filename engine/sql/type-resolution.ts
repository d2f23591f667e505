import { castValue, typeDisplay, type CastTarget } from './sql-cast.js';
import { constant, type CompiledExpr } from './compiled-expr.js';
import { arrayTypeOf, elementTypeOf, isArrayType, NUMERIC_RANK, sqlFail, type ScalarTypeName, type SqlTypeName, type SqlValue } from './sql-types.js';

const TIME_RANK: Partial<Record<SqlTypeName, number>> = { date: 0, timestamp: 1, timestamptz: 2 };
const STRINGS: ReadonlySet<SqlTypeName> = new Set(['text', 'bpchar']);
const BITS: ReadonlySet<SqlTypeName> = new Set(['bit', 'varbit']);

/**
 * PostgreSQL's select_common_type for CASE, COALESCE, GREATEST, IN lists: unknowns take the
 * others' type (text when all unknown); numbers promote; times promote; bpchar beside text is text.
 * @throws SQL_ERROR 42804 when the types cannot be matched
 */
export function commonType(types: SqlTypeName[], context: string): SqlTypeName {
  const known = types.filter((t) => t !== 'unknown');
  if (known.length === 0) return 'text';
  let result = known[0]!;
  for (const t of known.slice(1)) {
    if (t === result) continue;
    const nr = NUMERIC_RANK[result];
    const nt = NUMERIC_RANK[t];
    const tr = TIME_RANK[result];
    const tt = TIME_RANK[t];
    if (nr !== undefined && nt !== undefined) result = nt > nr ? t : result;
    else if (tr !== undefined && tt !== undefined) result = tt > tr ? t : result;
    // time converts to timetz implicitly, not back.
    else if ((result === 'time' && t === 'timetz') || (result === 'timetz' && t === 'time')) result = 'timetz';
    // Both string types: text, the string category's preferred type, wins.
    else if (STRINGS.has(result) && STRINGS.has(t)) result = 'text';
    // bit beside bit varying: bit varying (bit converts to it without a change).
    else if (BITS.has(result) && BITS.has(t)) result = 'varbit';
    // Arrays: of their elements' common type.
    else if (isArrayType(result) && isArrayType(t)) result = arrayTypeOf(commonType([elementTypeOf(result), elementTypeOf(t)], context) as ScalarTypeName);
    else sqlFail('42804', `${context} types ${typeDisplay(result)} and ${typeDisplay(t)} cannot be matched`);
  }
  return result;
}

/**
 * Implicit coercion: unknown literals take any type; numbers and times promote; bpchar becomes
 * text (without its padding); bit and bit varying convert either way. PostgreSQL's implicit text -> bpchar is left out: no function here
 * takes bpchar where text would not do.
 */
export function canCoerce(from: SqlTypeName, to: SqlTypeName): boolean {
  if (from === to || from === 'unknown' || (from === 'bpchar' && to === 'text') || (BITS.has(from) && BITS.has(to))) return true;
  const nf = NUMERIC_RANK[from];
  const nt = NUMERIC_RANK[to];
  if (nf !== undefined && nt !== undefined) return nt >= nf;
  const tf = TIME_RANK[from];
  const tt = TIME_RANK[to];
  if (tf !== undefined && tt !== undefined) return tt >= tf;
  // time -> timetz (in the session's zone) and time -> interval are implicit casts.
  if (from === 'time' && (to === 'timetz' || to === 'interval')) return true;
  // An array coerces to an array of a type its elements coerce to (PostgreSQL's array coercion).
  if (isArrayType(from) && isArrayType(to)) return canCoerce(elementTypeOf(from), elementTypeOf(to));
  return false;
}

/** Wraps `e` so it yields `type`. @throws SQL_ERROR 42804 when no implicit coercion exists */
export function coerce(e: CompiledExpr, type: SqlTypeName): CompiledExpr {
  if (e.type === type) return e;
  if (!canCoerce(e.type, type)) sqlFail('42804', `cannot coerce ${typeDisplay(e.type)} to ${typeDisplay(type)}`);
  // Unknown-typed expressions are literals or parameters: PostgreSQL converts them while
  // parsing, so bad input fails even in a branch that is never taken.
  if (e.type === 'unknown' && e.param === undefined) return constant(castValue(e.evaluate({ statementTime: 0n }), { type }));
  if (e.param !== undefined) return castOnce(e, { type });
  return { type, evaluate: (ctx) => castValue(e.evaluate(ctx), { type }) };
}

/**
 * The cast of a bound parameter, made once per value: a condition re-checked on every row read
 * (`created_at >= $1`) would otherwise parse the parameter's text for each row. The parameters
 * are new values in each execution, so the last one's cast is reused only within an execution.
 */
export function castOnce(e: CompiledExpr, target: CastTarget): CompiledExpr {
  let lastIn: SqlValue | undefined;
  let lastOut: SqlValue | undefined;
  return {
    type: target.type,
    evaluate: (ctx) => {
      const v = e.evaluate(ctx);
      if (v !== lastIn || lastOut === undefined) {
        lastOut = castValue(v, target);
        lastIn = v;
      }
      return lastOut;
    },
  };
}
