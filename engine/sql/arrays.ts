import type { CompiledExpr, EvalContext } from './compiled-expr.js';
import { arrayTypeOf, elementTypeOf, isArrayType, sqlFail, type ArrayTypeName, type JsonValue, type ScalarTypeName, type SqlTypeName, type SqlValue } from './sql-types.js';

/**
 * PostgreSQL's one-dimensional arrays: their text form (array_in), and the values of the array
 * operators and functions (expression-eval.ts and functions/array-functions.ts compile them).
 * A value of `int4[]` is a SqlValue[] of int4 values, NULL elements allowed; lower bound 1.
 * Multidimensional arrays are not supported (0A000 where one would be made).
 */

/** A value of an array type, its elements listed. */
export type ArrayValue = { type: ArrayTypeName; value: SqlValue[] };

/** @throws SQL_ERROR 22P02 `malformed array literal` with PostgreSQL's DETAIL */
function malformed(raw: string, detail: string): never {
  return sqlFail('22P02', `malformed array literal: "${raw}"`, detail);
}

const isSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\v' || c === '\f';

/**
 * The elements of an array's text form, `{1,2,"a b",NULL}` (array_in, one dimension): elements
 * quoted or not, backslash escapes in either, whitespace around them ignored, an unquoted NULL
 * (any case) the NULL element. Each element's text is read by `element` (its type's input).
 * @throws SQL_ERROR 22P02 malformed literal (PostgreSQL's DETAIL), 0A000 more than one dimension
 */
export function parseArrayText(raw: string, element: (text: string) => SqlValue, nullOf: SqlValue): SqlValue[] {
  let i = 0;
  const n = raw.length;
  while (isSpace(raw[i])) i++;
  if (raw[i] === '[') return sqlFail('0A000', 'unsupported: array bounds in an array literal ([1:3]={...}); arrays here start at 1');
  if (raw[i] !== '{') return malformed(raw, 'Array value must start with "{" or dimension information.');
  i++;
  const out: SqlValue[] = [];
  while (isSpace(raw[i])) i++;
  if (raw[i] === '}') {
    i++;
  } else {
    for (;;) {
      while (isSpace(raw[i])) i++;
      if (i >= n) return malformed(raw, 'Unexpected end of input.');
      const c = raw[i]!;
      if (c === '{') return sqlFail('0A000', 'unsupported: multidimensional arrays');
      if (c === ',' || c === '}') return malformed(raw, `Unexpected "${c}" character.`);
      let text = '';
      let quoted = false;
      let escaped = false;
      if (c === '"') {
        quoted = true;
        i++;
        for (;;) {
          if (i >= n) return malformed(raw, 'Unexpected end of input.');
          const d = raw[i++]!;
          if (d === '\\') {
            if (i >= n) return malformed(raw, 'Unexpected end of input.');
            text += raw[i++];
          } else if (d === '"') break;
          else text += d;
        }
        while (isSpace(raw[i])) i++;
      } else {
        // Unquoted: up to the next delimiter; trailing whitespace that was not escaped is dropped.
        let keep = 0;
        while (i < n && raw[i] !== ',' && raw[i] !== '}') {
          const d = raw[i]!;
          if (d === '"') return malformed(raw, 'Unexpected array element.');
          if (d === '{') return malformed(raw, 'Unexpected "{" character.');
          if (d === '\\') {
            if (i + 1 >= n) return malformed(raw, 'Unexpected end of input.');
            text += raw[i + 1];
            escaped = true;
            i += 2;
            keep = text.length;
            continue;
          }
          text += d;
          i++;
          if (!isSpace(d)) keep = text.length;
        }
        text = text.slice(0, keep);
      }
      if (i >= n) return malformed(raw, 'Unexpected end of input.');
      out.push(!quoted && !escaped && text.toUpperCase() === 'NULL' ? nullOf : element(text));
      const d = raw[i++]!;
      if (d === '}') break;
      if (d !== ',') return malformed(raw, `Unexpected "${d}" character.`);
    }
  }
  while (isSpace(raw[i])) i++;
  if (i < n) return malformed(raw, 'Junk after closing right brace.');
  return out;
}

/**
 * The elements of a JSON array as values of `element` (a parameter sent as a JSON array, read
 * where an array is wanted): numbers and strings through their text, JSON null as NULL.
 * @throws SQL_ERROR 22P02 for an element that is an array or an object, or not of the type
 */
export function jsonArrayElements(json: JsonValue, element: (text: string) => SqlValue, nullOf: SqlValue): SqlValue[] {
  if (!Array.isArray(json)) return sqlFail('22P02', `malformed array literal: "${JSON.stringify(json)}"`, 'A JSON value read as an array must be a JSON array.');
  return json.map((e) => {
    if (e === null) return nullOf;
    if (typeof e === 'object') return sqlFail('0A000', 'unsupported: multidimensional arrays');
    return element(String(e));
  });
}

/** The array type of `t`'s elements, or undefined for a type that is not an array. */
export function elementOf(t: SqlTypeName): ScalarTypeName | undefined {
  return isArrayType(t) ? elementTypeOf(t) : undefined;
}

/** The array type whose elements are `t`. @throws SQL_ERROR 0A000 for an array of arrays */
export function arrayOf(t: SqlTypeName): ArrayTypeName {
  if (isArrayType(t)) return sqlFail('0A000', 'unsupported: multidimensional arrays');
  return arrayTypeOf(t);
}

/** Whether two non-null elements are equal (the array operators' and functions' equality: NULL equals nothing). */
export type ElementEquals = (a: SqlValue, b: SqlValue) => boolean;

/** a @> b: every non-null element of b is in a (a NULL element of b is in nothing), as array_contain_compare. */
export function arrayContains(a: readonly SqlValue[], b: readonly SqlValue[], eq: ElementEquals): boolean {
  return b.every((y) => y.value !== null && a.some((x) => x.value !== null && eq(x, y)));
}

/** a && b: some non-null element is in both. */
export function arrayOverlaps(a: readonly SqlValue[], b: readonly SqlValue[], eq: ElementEquals): boolean {
  return a.some((x) => x.value !== null && b.some((y) => y.value !== null && eq(x, y)));
}

/**
 * `x op ANY (array)` / `x op ALL (array)` over the element tests: ANY is true when one is true,
 * else NULL when one is NULL, else false (false over no element); ALL the other way round.
 */
export function quantify(tests: Iterable<boolean | null>, all: boolean): boolean | null {
  let sawNull = false;
  for (const t of tests) {
    if (t === null) sawNull = true;
    else if (t !== all) return !all;
  }
  return sawNull ? null : all;
}

/** A subscript `a[i]`: the element at 1-based `i`, NULL outside the array or for a NULL index. */
export function subscript(a: SqlValue, index: SqlValue, type: SqlTypeName): SqlValue {
  if (a.value === null || index.value === null) return { type, value: null } as SqlValue;
  const i = Number(index.value);
  const elements = a.value as SqlValue[];
  return elements[i - 1] ?? ({ type, value: null } as SqlValue);
}

/** Evaluates the expressions of an ARRAY[...] constructor into its value. */
export function constructed(type: ArrayTypeName, elements: readonly CompiledExpr[], ctx: EvalContext): SqlValue {
  return { type, value: elements.map((e) => e.evaluate(ctx)) };
}
