import type { CompiledExpr } from '../compiled-expr.js';
import { compareValues } from '../operators.js';
import { arrayTypeOf, elementTypeOf, isArrayType, sqlFail, toText, type ArrayTypeName, type NonNullSqlValue, type ScalarTypeName, type SqlTypeName, type SqlValue } from '../sql-types.js';
import { canCoerce, coerce } from '../type-resolution.js';
import { noFunction, type FunctionDef } from './function-def.js';

/**
 * PostgreSQL's array functions over one-dimensional arrays (lower bound 1). Their polymorphic
 * arguments resolve as PostgreSQL's anyarray / anyelement: the array's element type is the
 * element's, an untyped literal takes the other argument's type, and two untyped ones cannot be
 * resolved (42804 as PostgreSQL's message says).
 */

/** A signature: `array` (anyarray), `element` (anyelement of that array), or a fixed type. */
type Slot = 'array' | 'element' | SqlTypeName;

/**
 * The arguments coerced to `slots`, with the array type they resolve to.
 * @throws SQL_ERROR 42883 arguments that fit no such signature, 42804 an unresolvable untyped pair
 */
function resolve(name: string, args: CompiledExpr[], slots: Slot[]): { args: CompiledExpr[]; type: ArrayTypeName } {
  if (args.length !== slots.length) return noFunction(name, args);
  let type: ArrayTypeName | undefined;
  slots.forEach((slot, i) => {
    const t = args[i]!.type;
    if (t === 'unknown') return;
    if (slot === 'array') {
      if (!isArrayType(t)) noFunction(name, args);
      type ??= t;
    } else if (slot === 'element') {
      if (isArrayType(t)) noFunction(name, args);
      type ??= arrayTypeOf(t as ScalarTypeName);
    }
  });
  if (type === undefined) {
    if (slots.includes('element') || slots.includes('array')) {
      if (!slots.includes('element')) return sqlFail('42804', `could not determine polymorphic type because input has type unknown`);
      // An untyped element beside an untyped array: text (PostgreSQL refuses; text is what it would read).
      type = 'text[]';
    } else type = 'text[]';
  }
  const element = elementTypeOf(type);
  const coerced = args.map((a, i) => {
    const slot = slots[i]!;
    const want: SqlTypeName = slot === 'array' ? type! : slot === 'element' ? element : slot;
    if (!canCoerce(a.type, want)) return noFunction(name, args);
    return coerce(a, want);
  });
  return { args: coerced, type };
}

const int = (v: number | null): SqlValue => ({ type: 'int4', value: v }) as SqlValue;
const elements = (v: SqlValue): SqlValue[] | null => v.value as SqlValue[] | null;
/** IS NOT DISTINCT FROM between two elements of one type (array_position, array_remove, array_replace). */
const same = (a: SqlValue, b: SqlValue): boolean => (a.value === null || b.value === null ? a.value === b.value : compareValues(a as NonNullSqlValue, b as NonNullSqlValue) === 0);

/** A function of the resolved arguments' values; `strictArray`: NULL when the array is NULL. */
function arrayFunction(slots: Slot[], returns: (type: ArrayTypeName) => SqlTypeName, impl: (vals: SqlValue[], type: ArrayTypeName) => SqlValue | null | number | string, strictOn: number[] = [0]): FunctionDef {
  return {
    compile(name, args) {
      const { args: coerced, type } = resolve(name, args, slots);
      const out = returns(type);
      return {
        type: out,
        evaluate(ctx) {
          const vals = coerced.map((a) => a.evaluate(ctx));
          if (strictOn.some((i) => vals[i]!.value === null)) return { type: out, value: null } as SqlValue;
          const r = impl(vals, type);
          if (r === null) return { type: out, value: null } as SqlValue;
          if (typeof r === 'number') return { type: out, value: r } as SqlValue;
          if (typeof r === 'string') return { type: out, value: r } as SqlValue;
          return r;
        },
      };
    },
  };
}

/** Only dimension 1 exists: array_length / array_upper / array_lower of another is NULL, as of an empty array. */
const dimension = (vals: SqlValue[]): number | null => {
  const n = elements(vals[0]!)!.length;
  return vals[1]!.value !== 1 || n === 0 ? null : n;
};

export const ARRAY_FUNCTIONS: Record<string, FunctionDef> = {
  array_length: arrayFunction(['array', 'int4'], () => 'int4', (vals) => dimension(vals), [0, 1]),
  array_upper: arrayFunction(['array', 'int4'], () => 'int4', (vals) => dimension(vals), [0, 1]),
  array_lower: arrayFunction(['array', 'int4'], () => 'int4', (vals) => (dimension(vals) === null ? null : 1), [0, 1]),
  array_ndims: arrayFunction(['array'], () => 'int4', (vals) => (elements(vals[0]!)!.length === 0 ? null : 1)),
  array_dims: arrayFunction(['array'], () => 'text', (vals) => {
    const n = elements(vals[0]!)!.length;
    return n === 0 ? null : `[1:${n}]`;
  }),
  cardinality: arrayFunction(['array'], () => 'int4', (vals) => elements(vals[0]!)!.length),
  // Not strict: a NULL array is an empty one, a NULL element is added.
  array_append: arrayFunction(['array', 'element'], (t) => t, ([a, e], type) => ({ type, value: [...(elements(a!) ?? []), e!] }), []),
  array_prepend: arrayFunction(['element', 'array'], (t) => t, ([e, a], type) => ({ type, value: [e!, ...(elements(a!) ?? [])] }), []),
  array_cat: arrayFunction(['array', 'array'], (t) => t, ([a, b], type) => (a!.value === null && b!.value === null ? null : { type, value: [...(elements(a!) ?? []), ...(elements(b!) ?? [])] }), []),
  array_remove: arrayFunction(['array', 'element'], (t) => t, ([a, e], type) => ({ type, value: elements(a!)!.filter((x) => !same(x, e!)) })),
  array_replace: arrayFunction(['array', 'element', 'element'], (t) => t, ([a, from, to], type) => ({ type, value: elements(a!)!.map((x) => (same(x, from!) ? to! : x)) })),
  array_position: {
    compile(name, args) {
      const { args: coerced } = resolve(name, args, args.length === 3 ? ['array', 'element', 'int4'] : ['array', 'element']);
      return {
        type: 'int4',
        evaluate(ctx) {
          const [a, e, start] = coerced.map((x) => x.evaluate(ctx));
          if (a!.value === null) return int(null);
          if (start !== undefined && start.value === null) sqlFail('22004', 'initial position must not be null');
          const list = elements(a!)!;
          for (let i = Math.max(1, (start?.value as number | undefined) ?? 1); i <= list.length; i++) if (same(list[i - 1]!, e!)) return int(i);
          return int(null);
        },
      };
    },
  },
  array_positions: arrayFunction(['array', 'element'], () => 'int4[]', ([a, e]) => ({ type: 'int4[]', value: elements(a!)!.flatMap((x, i) => (same(x, e!) ? [int(i + 1)] : [])) })),
  array_to_string: {
    compile(name, args) {
      if (args[0] === undefined || !isArrayType(args[0].type)) return noFunction(name, args);
      const rest = args.slice(1).map((a) => (canCoerce(a.type, 'text') ? coerce(a, 'text') : noFunction(name, args)));
      if (rest.length < 1 || rest.length > 2) return noFunction(name, args);
      const array = args[0];
      return {
        type: 'text',
        evaluate(ctx) {
          const a = array.evaluate(ctx);
          const [sep, nullText] = rest.map((x) => x.evaluate(ctx));
          if (a.value === null || sep!.value === null) return { type: 'text', value: null };
          const parts: string[] = [];
          for (const e of elements(a)!) {
            if (e.value !== null) parts.push(toText(e as NonNullSqlValue));
            else if (nullText !== undefined && nullText.value !== null) parts.push(nullText.value as string);
          }
          return { type: 'text', value: parts.join(sep!.value as string) };
        },
      };
    },
  },
  string_to_array: {
    compile(name, args) {
      if (args.length < 2 || args.length > 3 || !args.every((a) => canCoerce(a.type, 'text'))) return noFunction(name, args);
      const [s, d, n] = args.map((a) => coerce(a, 'text'));
      return {
        type: 'text[]',
        evaluate(ctx) {
          const str = s!.evaluate(ctx).value as string | null;
          const delim = d!.evaluate(ctx).value as string | null;
          const nullText = n === undefined ? null : (n.evaluate(ctx).value as string | null);
          if (str === null) return { type: 'text[]', value: null };
          const fields = delim === null ? Array.from(str) : str === '' ? [] : delim === '' ? [str] : str.split(delim);
          return { type: 'text[]', value: fields.map((f) => ({ type: 'text', value: nullText !== null && f === nullText ? null : f }) as SqlValue) };
        },
      };
    },
  },
};
