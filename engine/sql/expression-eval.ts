import { constant, type CompiledExpr, type EvalContext } from './compiled-expr.js';
import type { EnumTypeDef } from './enum-types.js';
import { FUNCTION_TABLE } from './functions/function-table.js';
import { REGCLASS_ARGUMENT_FUNCTIONS } from './sequences.js';
import { jsonbAsText, jsonbContains, jsonbHasKey, jsonbPath } from './functions/json-functions.js';
import { sqlRegExp } from './functions/string-functions.js';
import { EXTRACT_SOURCES, extractField } from './functions/time-functions.js';
import { castValue, canCast, MAX_FRACTION_DIGITS, parseInterval, parseText, typeDisplay, type CastTarget } from './sql-cast.js';
import { applyArith, compareValues, negate, noOperator, noPrefixOperator, resolveArith, resolveComparison, type ArithOp } from './operators.js';
import { ARRAY_CODE_SPAN, ARRAY_ELEMENT_CODES, BIT_LITERAL, BIT_OPERATOR, COLLATE_MARKER, SLICE_MARKER, SLICE_OPEN, POWER_OPERATOR, TYPE_REF_MARKER, UNBOUNDED_BPCHAR, UNKNOWN_OPERATOR } from './sql-grammar-gaps.js';
import { asciiCaseOnly, asciiLower, isCollatable, markerNameParts, mergeCollations, neededCollation, resolveCollation, type Collation } from './collation.js';
import { bitNot, bitShift, bitwise, isBitType, parseBits } from './bit-string.js';
import { canCoerce, castOnce, commonType, coerce } from './type-resolution.js';
import { arrayContains, arrayOf, arrayOverlaps, constructed, quantify, subscript } from './arrays.js';
import {
  elementTypeOf,
  isArrayType,
  makeInt,
  NUMERIC_RANK,
  numericLiteral,
  jsonbText,
  sqlFail,
  toJsonb,
  toText,
  type Jsonb,
  type JsonValue,
  type NonNullSqlValue,
  type SqlTypeName,
  type ArrayTypeName,
  type SqlValue,
  NO_FUNCTION_HINT,
} from './sql-types.js';

/**
 * The node-sql-parser (PostgreSQL dialect) expression node, as far as this evaluator reads it.
 * The library's own typings are loose (`any` in places), so this is the shape we rely on.
 */
export interface AstNode {
  type: string;
  [key: string]: unknown;
}

/** What compilation needs besides the AST: the bound parameters ($1 is params[0]). */
export interface CompileEnv {
  readonly params: readonly SqlValue[];
  /**
   * With parameter slots, $n compiles to a read of ctx.params at run time (typed as params[n-1]
   * is now), so a cached plan runs again with other values of the same types.
   */
  readonly paramSlots?: boolean;
  /**
   * Consulted first for every node: the executor resolves column references, aggregates,
   * window functions, subqueries and GROUP BY expressions here. Undefined = not handled.
   */
  readonly resolve?: (node: AstNode, env: CompileEnv) => CompiledExpr | undefined;
  /** The tenant's enum types by name, for casts to them (absent: none can be named). */
  readonly types?: TypeLookup;
}

/** Finds a user-defined (enum) type by name: the current version of the catalog's type. */
export type TypeLookup = (name: string) => EnumTypeDef | undefined;

/** Context for folding literal casts while compiling (they never read the clock). */
const COMPILE_TIME_CONTEXT: EvalContext = { statementTime: 0n };

type Handler = (node: AstNode, env: CompileEnv) => CompiledExpr;

/** Node kinds this evaluator understands; any other kind is refused by name. */
type NodeKind =
  | 'number'
  | 'bigint'
  | 'single_quote_string'
  | 'bool'
  | 'null'
  | 'var'
  | 'cast'
  | 'binary_expr'
  | 'unary_expr'
  | 'case'
  | 'function'
  | 'date'
  | 'timestamp'
  | 'time'
  | 'column_ref'
  | 'aggr_func'
  | 'interval'
  | 'extract'
  | 'double_quote_string'
  | 'expr_list'
  | 'array';

const HANDLERS: Record<NodeKind, Handler> = {
  number: (n) => constant(numericLiteral(String(n.value))),
  bigint: (n) => constant(numericLiteral(String(n.value))),
  // The parser keeps a doubled quote ('it''s') as written: SQL reads it as one quote.
  single_quote_string: (n) => constant({ type: 'unknown', value: String(n.value).replace(/''/g, "'") }),
  bool: (n) => constant({ type: 'boolean', value: n.value === true }),
  null: () => constant({ type: 'unknown', value: null }),
  var: compileParam,
  cast: compileCast,
  binary_expr: compileBinary,
  unary_expr: compileUnary,
  case: compileCase,
  function: compileFunction,
  // `date '2020-01-01'` and `timestamp '...'` typed literals.
  date: (n) => constant(parseText(String(n.value), 'date')),
  timestamp: (n) => constant(parseText(String(n.value), 'timestamp')),
  time: (n) => constant(parseText(String(n.value), 'time')),
  column_ref: () => unsupported('column references (no FROM clause yet)'),
  aggr_func: () => unsupported('aggregate functions'),
  interval: compileIntervalLiteral,
  extract: compileExtract,
  double_quote_string: () => unsupported('quoted identifiers'),
  expr_list: () => unsupported('row constructors / lists outside IN'),
  array: compileArrayConstructor,
};

/**
 * ARRAY[a, b, ...]: the elements' common type (PostgreSQL's select_common_type, untyped literals
 * taking it, text when all are untyped); an element that is itself an array would make a
 * multidimensional array, which is not supported.
 * @throws SQL_ERROR 42804 elements whose types cannot be matched, 0A000 an array element
 */
function compileArrayConstructor(node: AstNode, env: CompileEnv): CompiledExpr {
  const items = (node.expr_list as { value?: AstNode[] } | undefined)?.value;
  if (!Array.isArray(items)) return sqlFail('42P18', 'cannot determine type of empty array', undefined, 'Explicitly cast to the desired type, for example ARRAY[]::integer[].');
  const compiled = items.map((i) => compileExpression(i, env));
  if (compiled.some((c) => isArrayType(c.type))) return unsupported('multidimensional arrays');
  const element = commonType(compiled.map((c) => c.type), 'ARRAY');
  const type = arrayOf(element);
  const coerced = compiled.map((c) => coerce(c, element));
  return { type, evaluate: (ctx) => constructed(type, coerced, ctx) };
}

/** A slice's bounds (`a[lo:hi]`, written SLICE_MARKER(lo, hi) by sql-grammar-gaps.ts; undefined for an omitted one), or undefined for a plain subscript. */
function sliceBounds(n: AstNode): [AstNode | undefined, AstNode | undefined] | undefined {
  if (n.type !== 'function') return undefined;
  const parts = (n.name as { name?: { value: unknown }[] } | undefined)?.name ?? [];
  if (parts.length !== 1 || parts[0]!.value !== SLICE_MARKER) return undefined;
  const [lo, hi] = ((n.args as { value: AstNode[] }).value ?? []).map((b) => (b.type === 'column_ref' && JSON.stringify(b.column).includes(SLICE_OPEN) ? undefined : b));
  return [lo, hi];
}

/** A subscript as an integer. @throws SQL_ERROR 42804 when it is not one */
function intSubscript(index: CompiledExpr): CompiledExpr {
  if (!canCoerce(index.type, 'int4')) sqlFail('42804', 'array subscript must have type integer');
  return coerce(index, 'int4');
}

/**
 * `x[i]` (node-sql-parser's array_index, on a column or any parenthesised expression): an array's
 * element at 1-based i (NULL out of range; a second subscript of a one-dimensional array is NULL,
 * as PostgreSQL's for the wrong number of subscripts), or a jsonb value's member (`doc['key']`,
 * `doc[0]`, PostgreSQL 14's jsonb subscripting).
 * @throws SQL_ERROR 42804 a type that has no subscripts
 */
function compileSubscripts(node: AstNode, env: CompileEnv): CompiledExpr {
  const subs = node.array_index as { index: AstNode }[];
  const { array_index: _unused, ...bare } = node;
  let e = compileExpression(bare as AstNode, env);
  if (subs.length > 1 && isArrayType(e.type) && subs.some((sub) => sliceBounds(sub.index) !== undefined)) {
    // With a slice among them every subscript is a slice (PostgreSQL), and a second dimension of a
    // one-dimensional array has no element: an empty array (the bounds still read, for their errors).
    for (const sub of subs) for (const b of sliceBounds(sub.index) ?? [sub.index]) if (b !== undefined) intSubscript(compileExpression(b, env));
    const base = e;
    const type = base.type;
    return { type, evaluate: (ctx) => ({ type, value: base.evaluate(ctx).value === null ? null : [] }) as SqlValue };
  }
  for (const [k, sub] of subs.entries()) {
    const slice = sliceBounds(sub.index);
    if (slice !== undefined && !isArrayType(e.type)) return sqlFail('42804', `cannot subscript type ${typeDisplay(e.type)} because it does not support subscripting`);
    const index = slice !== undefined ? e : compileExpression(sub.index, env);
    const base = e;
    if (base.type === 'jsonb') {
      const key = index.type === 'unknown' ? coerce(index, 'text') : index;
      if (key.type !== 'text' && NUMERIC_RANK[key.type] === undefined) sqlFail('42804', `subscript type ${typeDisplay(key.type)} is not supported as jsonb subscript`, undefined, 'jsonb subscript must be coercible to either integer or text.');
      e = {
        type: 'jsonb',
        evaluate(ctx) {
          const doc = base.evaluate(ctx);
          const i = key.evaluate(ctx);
          if (doc.value === null || i.value === null) return { type: 'jsonb', value: null };
          const got = jsonbPath((doc.value as Jsonb).json, [String(i.value)]);
          return got === undefined ? { type: 'jsonb', value: null } : { type: 'jsonb', value: { json: got } };
        },
      };
      continue;
    }
    if (!isArrayType(base.type)) {
      if (k > 0) {
        const type = base.type;
        e = { type, evaluate: () => ({ type, value: null }) as SqlValue };
        continue;
      }
      return sqlFail('42804', `cannot subscript type ${typeDisplay(base.type)} because it does not support subscripting`);
    }
    if (slice !== undefined) {
      // a[lo:hi]: the elements from lo to hi that exist (an omitted bound is the array's end), an
      // array from 1; a NULL bound makes NULL.
      const [lo, hi] = slice.map((b) => (b === undefined ? undefined : intSubscript(compileExpression(b, env))));
      const type = base.type;
      e = {
        type,
        ...(base.collation === undefined ? {} : { collation: base.collation }),
        evaluate(ctx) {
          const a = base.evaluate(ctx).value as SqlValue[] | null;
          const from = lo === undefined ? 1 : (lo.evaluate(ctx).value as number | null);
          const to = hi === undefined ? (a?.length ?? 0) : (hi.evaluate(ctx).value as number | null);
          if (a === null || from === null || to === null) return { type, value: null } as SqlValue;
          return { type, value: a.slice(Math.max(from, 1) - 1, Math.max(to, 0)) } as SqlValue;
        },
      };
      continue;
    }
    const i = intSubscript(index);
    const type = elementTypeOf(base.type);
    e = { type, ...(base.collation === undefined ? {} : { collation: base.collation }), evaluate: (ctx) => subscript(base.evaluate(ctx), i.evaluate(ctx), type) };
  }
  return e;
}

/** @throws SQL_ERROR 0A000 "unsupported: <what>" */
export function unsupported(what: string): never {
  return sqlFail('0A000', `unsupported: ${what}`);
}

/**
 * The expressions compiled so far directly under the node being compiled (its operands), for
 * PostgreSQL's derivation of its collation; undefined outside any node, and while a nested query
 * is planned (compileIsolated).
 */
let operands: CompiledExpr[] | undefined;

/**
 * Compiles a node-sql-parser expression node to a typed, re-evaluable expression. A text result
 * whose node did not decide its collation takes its operands' (collation.ts mergeCollations).
 * @throws SQL_ERROR with a sqlstate: 0A000 unsupported, 42883 unknown function/operator, 42P21 two explicit collations, ...
 */
export function compileExpression(node: AstNode, env: CompileEnv): CompiledExpr {
  if (Array.isArray(node.array_index) && node.array_index.length > 0) return compileSubscripts(node, env);
  const outer = operands;
  const mine: CompiledExpr[] = [];
  operands = mine;
  let e: CompiledExpr;
  try {
    e = (env.resolve === undefined ? undefined : env.resolve(node, env)) ?? compileNode(node, env);
  } finally {
    operands = outer;
  }
  if (!('collation' in e) && mine.length > 0) {
    // Also for a result that is not text (a comparison): two explicit collations are 42P21 here.
    const merged = mergeCollations(mine);
    if (merged !== undefined && isCollatable(e.type)) e = { ...e, collation: merged };
  }
  outer?.push(e);
  return e;
}

function compileNode(node: AstNode, env: CompileEnv): CompiledExpr {
  const handler = (HANDLERS as Record<string, Handler | undefined>)[node.type];
  if (handler === undefined) return unsupported(`expression node '${node.type}'`);
  return handler(node, env);
}

/** Runs `plan` (the planning of a nested query) apart from the node being compiled: its expressions are not that node's operands. */
export function compileIsolated<T>(plan: () => T): T {
  const outer = operands;
  operands = undefined;
  try {
    return plan();
  } finally {
    operands = outer;
  }
}

/** The collation of what an operator or function over `args` compares or maps (see mergeCollations). */
export function inputCollation(args: readonly CompiledExpr[]): Collation | undefined {
  return mergeCollations(args);
}

/** Compiles and evaluates once. */
export function evaluateExpression(node: AstNode, env: CompileEnv, ctx: EvalContext): SqlValue {
  return compileExpression(node, env).evaluate(ctx);
}

function compileParam(node: AstNode, env: CompileEnv): CompiledExpr {
  if (node.prefix !== '$' || typeof node.name !== 'number') return unsupported(`variable ${String(node.prefix)}${String(node.name)}`);
  const v = env.params[node.name - 1];
  if (v === undefined) return sqlFail('42P02', `there is no parameter $${node.name}`);
  if (env.paramSlots === true) {
    const i = node.name - 1;
    return { type: v.type, param: i, evaluate: (ctx) => ctx.params![i]! };
  }
  return constant(v);
}

// ---- casts -------------------------------------------------------------------------------

interface DataTypeNode {
  dataType: string;
  length?: number;
  /** The length was written in parentheses (`float(53)`), not in the name (`float8`). */
  parentheses?: boolean;
  /** `int[]`, `int ARRAY`: an array of the type. */
  array?: unknown;
  scale?: number;
  suffix?: unknown;
}

/** Maps node-sql-parser's dataType (int8 arrives as INT with length 8) to a cast target. */
export function castTargetOf(t: DataTypeNode, types?: TypeLookup): CastTarget {
  const name = t.dataType.toUpperCase();
  const suffix = Array.isArray(t.suffix) ? t.suffix.map(String).join(' ').toUpperCase() : '';
  const element = arrayElementNode(t);
  if (element !== undefined) return arrayTarget(castTargetOf(element, types));
  switch (name) {
    case 'ENUM': {
      // A user-defined type's name, as sql-grammar-gaps.ts carries it (TYPE_REF_MARKER).
      const ref = userTypeRef(t);
      if (ref === undefined) return unsupported('type enum');
      const def = types?.(ref.name) ?? sqlFail('42704', `type "${ref.name}${ref.array ? '[]' : ''}" does not exist`);
      return ref.array ? arrayTarget({ type: def.typeName }) : { type: def.typeName };
    }
    case 'INT':
    case 'INTEGER':
      if (t.length === 2) return { type: 'int2' };
      if (t.length === 8) return { type: 'int8' };
      if (t.length === undefined || t.length === 4) return { type: 'int4' };
      return unsupported(`type ${name}${t.length}`);
    case 'SMALLINT':
      return { type: 'int2' };
    case 'BIGINT':
      return { type: 'int8' };
    case 'NUMERIC':
    case 'DECIMAL':
      if (t.length !== undefined) return { type: 'numeric', precision: t.length, scale: t.scale ?? 0 };
      return { type: 'numeric' };
    case 'FLOAT':
      if (t.parentheses === true) {
        // float(p): p bits of mantissa, real up to 24, double precision up to 53.
        const bits = t.length ?? 53;
        if (bits < 1) sqlFail('22023', 'precision for type float must be at least 1 bit');
        if (bits > 53) sqlFail('22023', 'precision for type float must be less than 54 bits');
        if (bits <= 24) return unsupported(`type float(${bits}) (real)`);
        return { type: 'float8' };
      }
      if (t.length === 8 || t.length === undefined) return { type: 'float8' };
      return unsupported(`type float${t.length} (only float8)`);
    case 'DOUBLE PRECISION':
      return { type: 'float8' };
    case 'TEXT':
      return { type: 'text' };
    case 'VARCHAR':
    case 'CHARACTER VARYING':
      return t.length === undefined ? { type: 'text' } : { type: 'text', maxLength: t.length };
    case 'CHAR':
    case 'CHARACTER':
      return bpcharTarget(t.length);
    case 'BIT':
      // bit alone is bit(1); bit varying alone has no length.
      return { type: 'bit', maxLength: bitLength('bit', t.length ?? 1) };
    case 'BIT VARYING':
      return t.length === undefined ? { type: 'varbit' } : { type: 'varbit', maxLength: bitLength('varbit', t.length) };
    case 'BOOL':
    case 'BOOLEAN':
      return { type: 'boolean' };
    case 'DATE':
      return { type: 'date' };
    case 'TIMESTAMP':
      return withFractionDigits(suffix.includes('WITH TIME ZONE') && !suffix.includes('WITHOUT') ? 'timestamptz' : 'timestamp', t.length);
    case 'TIMESTAMPTZ':
      return withFractionDigits('timestamptz', t.length);
    case 'TIME':
      return withFractionDigits(suffix.includes('WITH TIME ZONE') && !suffix.includes('WITHOUT') ? 'timetz' : 'time', t.length);
    case 'TIMETZ':
      return withFractionDigits('timetz', t.length);
    case 'JSONB':
      return { type: 'jsonb' };
    case 'BYTEA':
      return { type: 'bytea' };
    case 'UUID':
      return { type: 'uuid' };
    case 'INTERVAL':
      if (t.length !== undefined || suffix !== '') return unsupported('interval fields or precision');
      return { type: 'interval' };
    default:
      return unsupported(`type ${t.dataType.toLowerCase()}`);
  }
}

/** The name a TYPE_REF_MARKER type node carries, and whether it is an array of that type. */
export function userTypeRef(t: { dataType: string; expr?: unknown }): { name: string; array: boolean } | undefined {
  if (String(t.dataType).toUpperCase() !== 'ENUM') return undefined;
  const values = ((t.expr as { value?: Array<{ value?: unknown }> } | undefined)?.value ?? []).map((v) => v.value);
  if (values[0] !== TYPE_REF_MARKER || typeof values[1] !== 'string') return undefined;
  return { name: values[1], array: values[2] === '[]' };
}

/**
 * The element type of an array type as the parser gives it (`int[]`, `int ARRAY`, `int[3]`,
 * `int[][]`: PostgreSQL ignores declared sizes and dimensions; `text[]` arrives as one name), or
 * undefined for a type that is not an array.
 */
export function arrayElementNode<T extends DataTypeNode>(t: T): T | undefined {
  if (t.array !== undefined && t.array !== null) {
    if (String(t.dataType).toUpperCase() !== 'TINYINT') return { ...t, array: undefined };
    // An element type the parser reads no [] after, carried by sql-grammar-gaps.ts's rewriteArrayTypes.
    const code = t.length ?? 0;
    const modifier = code % ARRAY_CODE_SPAN;
    const name = ARRAY_ELEMENT_CODES[Math.floor(code / ARRAY_CODE_SPAN) - 1] ?? sqlFail('XX000', `internal: array element code ${code}`);
    const { length: _length, parentheses: _parentheses, scale: _scale, ...rest } = t;
    return { ...rest, dataType: name, array: undefined, ...(modifier === ARRAY_CODE_SPAN - 1 ? {} : { length: modifier, parentheses: true }) } as T;
  }
  const name = String(t.dataType);
  return name.endsWith('[]') ? { ...t, dataType: name.slice(0, -2).trimEnd() } : undefined;
}

/** The cast target of an array of `element` (its modifiers kept for each element). */
export function arrayTarget(element: CastTarget): CastTarget {
  const { type, ...modifiers } = element;
  return { type: arrayOf(type), ...(Object.keys(modifiers).length > 0 ? { element } : {}) };
}

/**
 * character(n): `char` alone is char(1); bpchar (written `char(UNBOUNDED_BPCHAR)` by
 * sql-grammar-gaps.ts) has no length.
 * @throws SQL_ERROR 22023 a length below 1
 */
function bpcharTarget(length: number | undefined): CastTarget {
  if (length === undefined) return { type: 'bpchar', maxLength: 1 };
  if (length === UNBOUNDED_BPCHAR) return { type: 'bpchar' };
  if (length < 1) sqlFail('22023', 'length for type char must be at least 1');
  return { type: 'bpchar', maxLength: length };
}

/** PostgreSQL's longest bit string type (MaxAttrSize bits). */
const MAX_BIT_LENGTH = 83_886_080;

/** A bit(n) / varbit(n) length, checked. @throws SQL_ERROR 22023 below 1 or past the longest */
function bitLength(type: 'bit' | 'varbit', n: number): number {
  if (n < 1) sqlFail('22023', `length for type ${type} must be at least 1`);
  if (n > MAX_BIT_LENGTH) sqlFail('22023', `length for type ${type} cannot exceed ${MAX_BIT_LENGTH}`);
  return n;
}

/**
 * timestamp(p): PostgreSQL keeps at most 6 fractional digits (a larger p is reduced to 6 with a
 * warning, which has no channel here).
 */
function withFractionDigits(type: 'timestamp' | 'timestamptz' | 'time' | 'timetz', p: number | undefined): CastTarget {
  return p === undefined ? { type } : { type, fractionDigits: Math.min(p, MAX_FRACTION_DIGITS) };
}

function compileCast(node: AstNode, env: CompileEnv): CompiledExpr {
  const tail = node.tail as { operator?: unknown; expr?: AstNode } | undefined | null;
  if (tail) {
    // node-sql-parser reads a select item `$1::int * 2 + 3` as cast($1) with tail {*, 2 + 3},
    // losing precedence. Rebuild the binary node only when the tail is a single operand.
    const right = tail.expr;
    if (right === undefined || (right.type === 'binary_expr' && right.parentheses !== true)) {
      return unsupported('an operator chain after a parameter cast in a select item; parenthesise it: ($1::type * 2) + 3');
    }
    const { tail: _tail, ...castOnly } = node;
    void _tail;
    return compileExpression({ type: 'binary_expr', operator: tail.operator, left: castOnly, right }, env);
  }
  // `x::a::b` arrives as one cast node with targets [a, b], applied left to right.
  const targets = node.target as DataTypeNode[] | undefined;
  if (!Array.isArray(targets) || targets.length === 0) return unsupported('cast without a target type');
  const inner0 = node.expr as AstNode;
  if (isNotCall(inner0) && inner0.parentheses !== true) {
    // `NOT (x)::t` means NOT ((x)::t) in PostgreSQL, but node-sql-parser yields (NOT x)::t.
    return unsupported('NOT (x)::type without parentheses; write NOT ((x)::type) or (NOT x)::type');
  }
  // ARRAY[]::t[]: the empty array takes its type from the cast (alone it has none, see compileArrayConstructor).
  const empty = inner0.type === 'array' && !Array.isArray((inner0.expr_list as { value?: unknown } | undefined)?.value);
  let e = empty ? constant({ type: 'unknown', value: '{}' }) : compileExpression(inner0, env);
  for (const t of targets) {
    const target = castTargetOf(t, env.types);
    if (empty && !isArrayType(target.type)) sqlFail('42P18', 'cannot determine type of empty array', undefined, 'Explicitly cast to the desired type, for example ARRAY[]::integer[].');
    const inner = e;
    if (!canCast(inner.type, target.type)) {
      // Between two array types PostgreSQL names the elements' cast that is missing.
      const [from, to] = isArrayType(inner.type) && isArrayType(target.type) ? [elementTypeOf(inner.type), elementTypeOf(target.type)] : [inner.type, target.type];
      sqlFail('42846', `cannot cast type ${typeDisplay(from)} to ${typeDisplay(to)}`);
    }
    e = inner.param !== undefined ? castOnce(inner, target) : { type: target.type, evaluate: (ctx) => castValue(inner.evaluate(ctx), target) };
    // A cast of a literal is folded at compile time, so bad input fails even when not reached.
    if (inner.type === 'unknown' && inner.param === undefined) e = constant(e.evaluate(COMPILE_TIME_CONTEXT));
  }
  return e;
}

// ---- interval literals and EXTRACT ----------------------------------------------------------

/** `interval '1 day'`, or `interval '2' hour` (a bare number in the named unit). */
function compileIntervalLiteral(node: AstNode): CompiledExpr {
  const expr = node.expr as AstNode | undefined;
  if (expr?.type !== 'single_quote_string') return unsupported('INTERVAL with a non-literal operand');
  const raw = String(expr.value);
  const unit = String(node.unit ?? '').toLowerCase();
  if (unit !== '' && !/^\s*[+-]?(\d+\.?\d*|\.\d+)\s*$/.test(raw)) return unsupported(`INTERVAL '...' ${unit} with more than a number`);
  return constant({ type: 'interval', value: parseInterval(raw, unit === '' ? undefined : unit) });
}

/** EXTRACT(field FROM source): numeric, as PostgreSQL 14+. */
function compileExtract(node: AstNode, env: CompileEnv): CompiledExpr {
  const args = node.args as { field: unknown; cast_type: unknown; source: AstNode };
  const field = String(args.field);
  let source: CompiledExpr;
  if (typeof args.cast_type === 'string' && args.cast_type !== '') {
    // `EXTRACT(year FROM TIMESTAMP '...')`: the source is a typed literal.
    const target = castTargetOf({ dataType: args.cast_type });
    if (args.source.type !== 'single_quote_string') return unsupported(`EXTRACT from ${args.cast_type} ${args.source.type}`);
    source = constant(parseText(String(args.source.value), target.type));
  } else {
    source = compileExpression(args.source, env);
  }
  if (source.type === 'unknown') sqlFail('42725', 'function extract(unknown, unknown) is not unique');
  if (!EXTRACT_SOURCES.includes(source.type)) sqlFail('42883', `function extract(unknown, ${typeDisplay(source.type)}) does not exist`, undefined, NO_FUNCTION_HINT);
  const src = source;
  return {
    type: 'numeric',
    evaluate(ctx) {
      const v = src.evaluate(ctx);
      return v.value === null ? { type: 'numeric', value: null } : extractField(field, v as NonNullSqlValue);
    },
  };
}

// ---- operators ---------------------------------------------------------------------------

type BinaryOp =
  | '+'
  | '-'
  | '*'
  | '/'
  | '%'
  | '||'
  | '='
  | '<>'
  | '!='
  | '<'
  | '<='
  | '>'
  | '>='
  | 'AND'
  | 'OR'
  | 'IS'
  | 'IS NOT'
  | 'IN'
  | 'NOT IN'
  | 'BETWEEN'
  | 'NOT BETWEEN'
  | 'LIKE'
  | 'NOT LIKE'
  | 'ILIKE'
  | 'NOT ILIKE'
  | '->'
  | '->>'
  | '#>'
  | '#>>'
  | '@>'
  | '<@'
  | '&&'
  | '?'
  | '~'
  | '~*'
  | '!~'
  | '!~*';

type BinaryHandler = (op: string, node: AstNode, env: CompileEnv) => CompiledExpr;

const arith: BinaryHandler = (op, node, env) => {
  const l = compileExpression(node.left as AstNode, env);
  const r = compileExpression(node.right as AstNode, env);
  const res = resolveArith(op as ArithOp, l.type, r.type);
  const lc = coerce(l, res.left);
  const rc = coerce(r, res.right);
  return {
    type: res.result,
    evaluate(ctx) {
      const a = lc.evaluate(ctx);
      const b = rc.evaluate(ctx);
      if (a.value === null || b.value === null) return { type: res.result, value: null };
      return applyArith(op as ArithOp, a as NonNullSqlValue, b as NonNullSqlValue, res.result);
    },
  };
};

const COMPARE: Record<string, (c: number) => boolean> = {
  '=': (c) => c === 0,
  '<>': (c) => c !== 0,
  '!=': (c) => c !== 0,
  '<': (c) => c < 0,
  '<=': (c) => c <= 0,
  '>': (c) => c > 0,
  '>=': (c) => c >= 0,
};

/** A comparison of two compiled expressions in their common type; NULL if either is NULL. */
export function comparison(op: string, l: CompiledExpr, r: CompiledExpr): CompiledExpr {
  const t = resolveComparison(op, l.type, r.type);
  if ((t === 'jsonb' && op !== '=' && op !== '<>' && op !== '!=') || t === 'unknown') {
    return unsupported(`operator ${op} on ${typeDisplay(t)}`);
  }
  const lc = coerce(l, t);
  const rc = coerce(r, t);
  const test = COMPARE[op]!;
  // Text compared under a conflict of collations: PostgreSQL's texteq / text_lt fail when they run.
  const collated = isCollatable(t) ? neededCollation(inputCollation([l, r]), 'string comparison') : undefined;
  return {
    type: 'boolean',
    evaluate(ctx) {
      const a = lc.evaluate(ctx);
      const b = rc.evaluate(ctx);
      if (a.value === null || b.value === null) return { type: 'boolean', value: null };
      collated?.();
      return { type: 'boolean', value: test(compareValues(a as NonNullSqlValue, b as NonNullSqlValue)) };
    },
  };
}

const compare: BinaryHandler = (op, node, env) =>
  comparison(op, compileExpression(node.left as AstNode, env), compileExpression(node.right as AstNode, env));

/** Operands of AND/OR/NOT/CASE WHEN must be boolean (unknown literals are parsed as boolean). */
function asBoolean(e: CompiledExpr, what: string): CompiledExpr {
  if (e.type === 'boolean') return e;
  if (e.type === 'unknown') return coerce(e, 'boolean');
  return sqlFail('42804', `argument of ${what} must be type boolean, not type ${typeDisplay(e.type)}`);
}

const logical: BinaryHandler = (op, node, env) => {
  const l = asBoolean(compileExpression(node.left as AstNode, env), op);
  const r = asBoolean(compileExpression(node.right as AstNode, env), op);
  const isAnd = op === 'AND';
  return {
    type: 'boolean',
    evaluate(ctx) {
      // Three-valued logic; the right side is skipped when the left decides (PostgreSQL may
      // evaluate in either order, so no query may rely on errors being skipped).
      const a = l.evaluate(ctx).value as boolean | null;
      if (a === !isAnd) return { type: 'boolean', value: a };
      const b = r.evaluate(ctx).value as boolean | null;
      if (b === !isAnd) return { type: 'boolean', value: b };
      if (a === null || b === null) return { type: 'boolean', value: null };
      return { type: 'boolean', value: isAnd };
    },
  };
};

const isTest: BinaryHandler = (op, node, env) => {
  const negated = op === 'IS NOT';
  const right = node.right as AstNode;
  const l = compileExpression(node.left as AstNode, env);
  if (right.type === 'null') {
    return { type: 'boolean', evaluate: (ctx) => ({ type: 'boolean', value: (l.evaluate(ctx).value === null) !== negated }) };
  }
  if (right.type === 'bool') {
    const want = right.value === true;
    const lb = asBoolean(l, `IS ${want ? 'TRUE' : 'FALSE'}`);
    return { type: 'boolean', evaluate: (ctx) => ({ type: 'boolean', value: (lb.evaluate(ctx).value === want) !== negated }) };
  }
  return unsupported(`${op} ${right.type}`);
};

const inList: BinaryHandler = (op, node, env) => {
  const right = node.right as AstNode;
  if (right.type !== 'expr_list' || !Array.isArray(right.value)) return unsupported(`${op} with a subquery`);
  const l = compileExpression(node.left as AstNode, env);
  const items = (right.value as AstNode[]).map((n) => compileExpression(n, env));
  // PostgreSQL uses one common type when there is one, else one = operator per element.
  let tests: CompiledExpr[];
  try {
    const t = commonType([l.type, ...items.map((i) => i.type)], 'IN');
    tests = items.map((i) => comparison('=', coerce(l, t), coerce(i, t)));
  } catch {
    tests = items.map((i) => comparison('=', l, i));
  }
  const negated = op === 'NOT IN';
  return {
    type: 'boolean',
    evaluate(ctx) {
      let sawNull = false;
      for (const test of tests) {
        const v = test.evaluate(ctx).value;
        if (v === true) return { type: 'boolean', value: !negated };
        if (v === null) sawNull = true;
      }
      return { type: 'boolean', value: sawNull ? null : negated };
    },
  };
};

const between: BinaryHandler = (op, node, env) => {
  const right = node.right as AstNode;
  const bounds = right.value as AstNode[];
  if (right.type !== 'expr_list' || bounds.length !== 2) return unsupported(`${op} form`);
  const x = compileExpression(node.left as AstNode, env);
  const lo = compileExpression(bounds[0]!, env);
  const hi = compileExpression(bounds[1]!, env);
  const ge = comparison('>=', x, lo);
  const le = comparison('<=', x, hi);
  const negated = op === 'NOT BETWEEN';
  return {
    type: 'boolean',
    evaluate(ctx) {
      // PostgreSQL reads BETWEEN as `x >= lo AND x <= hi` (NOT BETWEEN as `x < lo OR x > hi`):
      // the upper bound is not evaluated once the lower one decides.
      const a = ge.evaluate(ctx).value as boolean | null;
      if (a === false) return { type: 'boolean', value: negated };
      const b = le.evaluate(ctx).value as boolean | null;
      const both = b === false ? false : a === null || b === null ? null : true;
      return { type: 'boolean', value: both === null ? null : both !== negated };
    },
  };
};

/**
 * Translates a LIKE pattern to an anchored RegExp. A pattern ending in its escape character
 * (`dangling`) gets instead one that matches when PostgreSQL's matcher would reach that escape
 * with text left: PostgreSQL reports it only then (22025), a mismatch before it is just false.
 */
export function likeToRegExp(pattern: string, escape: string | null, insensitive: boolean): { re: RegExp; dangling: boolean } {
  let re = '';
  const cs = [...pattern];
  for (let i = 0; i < cs.length; i++) {
    const c = cs[i]!;
    if (escape !== null && c === escape) {
      const next = cs[++i];
      if (next === undefined) return { re: new RegExp(`^${re}.`, insensitive ? 'isu' : 'su'), dangling: true };
      re += next.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    } else if (c === '%') re += '.*';
    else if (c === '_') re += '.';
    else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  return { re: new RegExp(`^${re}$`, insensitive ? 'isu' : 'su'), dangling: false };
}

const like: BinaryHandler = (op, node, env) => {
  const right = node.right as AstNode;
  const insensitive = op.endsWith('ILIKE');
  const negated = op.startsWith('NOT');
  const l = compileExpression(node.left as AstNode, env);
  const r = compileExpression(right, env);
  // A bpchar subject is matched with its padding (bpcharlike), a bpchar pattern as text.
  if ((l.type !== 'text' && l.type !== 'unknown' && l.type !== 'bpchar') || !canCoerce(r.type, 'text')) noOperator(insensitive ? '~~*' : '~~', l.type, r.type);
  const rc = coerce(r, 'text');
  let escape: CompiledExpr | null = null;
  const esc = right.escape as { value?: AstNode } | undefined;
  if (esc?.value !== undefined) escape = compileExpression(esc.value, env);
  // ILIKE lowers both sides under their collation (ASCII letters only under "C" and its kind)
  // and fails on a conflict of collations; LIKE needs none.
  const collation = inputCollation([l, r]);
  const needed = insensitive ? neededCollation(collation, 'ILIKE') : undefined;
  const ascii = insensitive && asciiCaseOnly(collation);
  return {
    type: 'boolean',
    evaluate(ctx) {
      let s = l.evaluate(ctx).value as string | null;
      let p = rc.evaluate(ctx).value as string | null;
      let e: string | null = '\\';
      if (escape !== null) {
        const ev = escape.evaluate(ctx).value as string | null;
        if (ev === null) return { type: 'boolean', value: null };
        if ([...ev].length > 1) sqlFail('22025', 'invalid escape string');
        e = ev === '' ? null : ev;
      }
      if (s === null || p === null) return { type: 'boolean', value: null };
      needed?.();
      if (ascii) {
        s = asciiLower(s);
        p = asciiLowerPattern(p, e);
      }
      const { re, dangling } = likeToRegExp(p, e, insensitive && !ascii);
      if (dangling && re.test(s)) sqlFail('22025', 'LIKE pattern must not end with escape character');
      return { type: 'boolean', value: (dangling ? false : re.test(s)) !== negated };
    },
  };
};

const concatOp: BinaryHandler = (op, node, env) => {
  const l = compileExpression(node.left as AstNode, env);
  const r = compileExpression(node.right as AstNode, env);
  if (isArrayType(l.type) || isArrayType(r.type)) return arrayConcat(l, r);
  if ((l.type === 'jsonb' && (r.type === 'jsonb' || r.type === 'unknown')) || (r.type === 'jsonb' && l.type === 'unknown')) {
    const lc = coerce(l, 'jsonb');
    const rc = coerce(r, 'jsonb');
    return {
      type: 'jsonb',
      evaluate(ctx) {
        const a = lc.evaluate(ctx).value as Jsonb | null;
        const b = rc.evaluate(ctx).value as Jsonb | null;
        if (a === null || b === null) return { type: 'jsonb', value: null };
        return { type: 'jsonb', value: { json: jsonbConcat(a.json, b.json) } };
      },
    };
  }
  const bitish = (t: SqlTypeName): boolean => isBitType(t) || t === 'unknown';
  if ((isBitType(l.type) || isBitType(r.type)) && bitish(l.type) && bitish(r.type)) {
    // bitcat: bit strings (a literal beside one is read as one) join into a bit varying.
    const lc = coerce(l, 'varbit');
    const rc = coerce(r, 'varbit');
    return {
      type: 'varbit',
      evaluate(ctx) {
        const a = lc.evaluate(ctx).value as string | null;
        const b = rc.evaluate(ctx).value as string | null;
        return a === null || b === null ? { type: 'varbit', value: null } : { type: 'varbit', value: a + b };
      },
    };
  }
  const textish = (t: SqlTypeName): boolean => t === 'text' || t === 'unknown' || t === 'bpchar';
  if (!textish(l.type) && !textish(r.type)) return noOperator(op, l.type, r.type);
  if (l.type === 'jsonb' || r.type === 'jsonb') return unsupported('|| between jsonb and text');
  // A bpchar operand is cast to text first, which drops its padding ('a'::char(3) || 'b' is 'ab').
  const lt = l.type === 'bpchar' ? coerce(l, 'text') : l;
  const rt = r.type === 'bpchar' ? coerce(r, 'text') : r;
  return {
    type: 'text',
    evaluate(ctx) {
      const a = lt.evaluate(ctx);
      const b = rt.evaluate(ctx);
      if (a.value === null || b.value === null) return { type: 'text', value: null };
      return { type: 'text', value: toText(a as NonNullSqlValue) + toText(b as NonNullSqlValue) };
    },
  };
};

/** jsonb || jsonb: objects merge (right wins), anything else concatenates as arrays. */
function jsonbConcat(a: JsonValue, b: JsonValue): JsonValue {
  const isObj = (v: JsonValue): v is Record<string, JsonValue> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObj(a) && isObj(b)) return toJsonb({ ...a, ...b });
  const arr = (v: JsonValue): JsonValue[] => (Array.isArray(v) ? v : [v]);
  return [...arr(a), ...arr(b)];
}

const jsonArrow: BinaryHandler = (op, node, env) => {
  const l = compileExpression(node.left as AstNode, env);
  const r = compileExpression(node.right as AstNode, env);
  if (l.type === 'unknown' && r.type === 'unknown') sqlFail('42725', `operator is not unique: unknown ${op} unknown`);
  if (l.type !== 'jsonb') return noOperator(op, l.type, r.type);
  const byIndex = r.type === 'int4' || r.type === 'int2';
  if (!byIndex && r.type !== 'text' && r.type !== 'unknown') return noOperator(op, l.type, r.type);
  const asText = op === '->>';
  const type: SqlTypeName = asText ? 'text' : 'jsonb';
  return {
    type,
    evaluate(ctx) {
      const doc = l.evaluate(ctx).value as Jsonb | null;
      const k = r.evaluate(ctx).value as string | number | null;
      if (doc === null || k === null) return { type, value: null };
      const j = doc.json;
      let got: JsonValue | undefined;
      if (typeof k === 'number') {
        if (Array.isArray(j)) got = j[k < 0 ? j.length + k : k];
      } else if (j !== null && typeof j === 'object' && !Array.isArray(j)) {
        got = Object.hasOwn(j, k) ? j[k] : undefined;
      }
      if (got === undefined) return { type, value: null };
      if (!asText) return { type: 'jsonb', value: { json: got } };
      if (got === null) return { type: 'text', value: null };
      return { type: 'text', value: typeof got === 'string' ? got : jsonbText(got) };
    },
  };
};

/** Parses a one-dimensional text[] literal such as `{a,b,"c d"}` (jsonb paths). @throws SQL_ERROR 22P02 */
function parseTextArray(raw: string): string[] {
  const s = raw.trim();
  if (!s.startsWith('{') || !s.endsWith('}')) return sqlFail('22P02', `malformed array literal: "${raw}"`);
  const body = s.slice(1, -1);
  const out: string[] = [];
  const re = /\s*(?:"((?:[^"\\]|\\.)*)"|([^,{}"]*?))\s*(,|$)/y;
  let pos = 0;
  if (body.trim() === '') return out;
  while (pos < body.length) {
    re.lastIndex = pos;
    const m = re.exec(body);
    if (m === null) return sqlFail('22P02', `malformed array literal: "${raw}"`);
    out.push(m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2]!);
    pos = re.lastIndex;
    if (m[3] === '') break;
  }
  return out;
}

/** jsonb #> text[] and #>> text[]: the value at a path (keys, or array indexes). */
const jsonPathOp: BinaryHandler = (op, node, env) => {
  const l = compileExpression(node.left as AstNode, env);
  const r = compileExpression(node.right as AstNode, env);
  if (l.type !== 'jsonb' && l.type !== 'unknown') return noOperator(op, l.type, r.type);
  if (r.type !== 'text[]' && r.type !== 'unknown') return noOperator(op, l.type, r.type);
  const lc = coerce(l, 'jsonb');
  const asText = op === '#>>';
  const type: SqlTypeName = asText ? 'text' : 'jsonb';
  return {
    type,
    evaluate(ctx) {
      const doc = lc.evaluate(ctx);
      const p = r.evaluate(ctx);
      if (doc.value === null || p.value === null) return { type, value: null };
      const path = typeof p.value === 'string' ? parseTextArray(p.value) : (p.value as SqlValue[]).map((e) => e.value as string | null);
      // A NULL path element matches nothing.
      const got = path.includes(null) ? undefined : jsonbPath((doc.value as Jsonb).json, path as string[]);
      if (asText) return jsonbAsText(got);
      return got === undefined ? { type: 'jsonb', value: null } : { type: 'jsonb', value: { json: got } };
    },
  };
};

/** jsonb @> jsonb, jsonb <@ jsonb (containment) and jsonb ? text (key exists). */
const jsonTest: BinaryHandler = (op, node, env) => {
  const l = compileExpression(node.left as AstNode, env);
  const r = compileExpression(node.right as AstNode, env);
  const rightType: SqlTypeName = op === '?' ? 'text' : 'jsonb';
  if ((l.type !== 'jsonb' && !(l.type === 'unknown' && r.type === 'jsonb')) || (r.type !== rightType && r.type !== 'unknown')) return noOperator(op, l.type, r.type);
  const lc = coerce(l, 'jsonb');
  const rc = coerce(r, rightType);
  return {
    type: 'boolean',
    evaluate(ctx) {
      const a = lc.evaluate(ctx).value as Jsonb | null;
      const b = rc.evaluate(ctx).value as Jsonb | string | null;
      if (a === null || b === null) return { type: 'boolean', value: null };
      if (op === '?') return { type: 'boolean', value: jsonbHasKey(a.json, b as string) };
      const [outer, inner] = op === '@>' ? [a.json, (b as Jsonb).json] : [(b as Jsonb).json, a.json];
      return { type: 'boolean', value: jsonbContains(outer, inner) };
    },
  };
};

/** POSIX regular expression match: ~, ~* (case-insensitive) and their negations. */
const regexMatch: BinaryHandler = (op, node, env) => {
  const l = compileExpression(node.left as AstNode, env);
  const r = compileExpression(node.right as AstNode, env);
  // A bpchar subject is matched with its padding (bpcharregexeq), a bpchar pattern as text.
  if ((l.type !== 'text' && l.type !== 'unknown' && l.type !== 'bpchar') || !canCoerce(r.type, 'text')) noOperator(op, l.type, r.type);
  const rc = coerce(r, 'text');
  const negated = op.startsWith('!');
  const flags = op.endsWith('*') ? 'i' : '';
  const collation = inputCollation([l, r]);
  const needed = neededCollation(collation, 'regular expression');
  const ascii = asciiCaseOnly(collation);
  return {
    type: 'boolean',
    evaluate(ctx) {
      const s = l.evaluate(ctx).value as string | null;
      const p = rc.evaluate(ctx).value as string | null;
      if (s === null || p === null) return { type: 'boolean', value: null };
      needed();
      return { type: 'boolean', value: sqlRegExp(p, flags, false, ascii).test(s) !== negated };
    },
  };
};

/** Two arrays of one type for an array operator: an untyped literal takes the other's type, elements of two types their common one. */
function arrayOperands(op: string, l: CompiledExpr, r: CompiledExpr): [CompiledExpr, CompiledExpr] {
  const lt = l.type === 'unknown' ? r.type : l.type;
  const rt = r.type === 'unknown' ? l.type : r.type;
  if (!isArrayType(lt) || !isArrayType(rt)) return noOperator(op, l.type, r.type);
  const el = elementTypeOf(lt);
  const er = elementTypeOf(rt);
  let element: SqlTypeName = el;
  if (el !== er) {
    if (canCoerce(el, er)) element = er;
    else if (!canCoerce(er, el)) return noOperator(op, l.type, r.type);
  }
  const type = arrayOf(element);
  return [coerce(l, type), coerce(r, type)];
}

const elementEquals = (a: SqlValue, b: SqlValue): boolean => compareValues(a as NonNullSqlValue, b as NonNullSqlValue) === 0;

/** a @> b and a <@ b over arrays (else jsonb's), a && b (overlap). */
const containment: BinaryHandler = (op, node, env) => {
  const l = compileExpression(node.left as AstNode, env);
  const r = compileExpression(node.right as AstNode, env);
  if (op !== '&&' && !isArrayType(l.type) && !isArrayType(r.type)) return jsonTest(op, node, env);
  const [lc, rc] = arrayOperands(op, l, r);
  return {
    type: 'boolean',
    evaluate(ctx) {
      const a = lc.evaluate(ctx).value as SqlValue[] | null;
      const b = rc.evaluate(ctx).value as SqlValue[] | null;
      if (a === null || b === null) return { type: 'boolean', value: null };
      if (op === '&&') return { type: 'boolean', value: arrayOverlaps(a, b, elementEquals) };
      return { type: 'boolean', value: op === '@>' ? arrayContains(a, b, elementEquals) : arrayContains(b, a, elementEquals) };
    },
  };
};

/**
 * `||` with an array: array || array (array_cat), array || element (array_append), element ||
 * array (array_prepend); an untyped literal beside an array is an array. A NULL array is empty
 * here, as in those functions; a NULL element is appended.
 */
function arrayConcat(l: CompiledExpr, r: CompiledExpr): CompiledExpr {
  const lArray = isArrayType(l.type) || (l.type === 'unknown' && isArrayType(r.type));
  const rArray = isArrayType(r.type) || (r.type === 'unknown' && isArrayType(l.type));
  if (lArray && rArray) {
    const [lc, rc] = arrayOperands('||', l, r);
    const type = lc.type;
    return {
      type,
      ...(l.collation === undefined ? {} : { collation: l.collation }),
      evaluate(ctx) {
        const a = lc.evaluate(ctx).value as SqlValue[] | null;
        const b = rc.evaluate(ctx).value as SqlValue[] | null;
        if (a === null && b === null) return { type, value: null } as SqlValue;
        return { type, value: [...(a ?? []), ...(b ?? [])] } as SqlValue;
      },
    };
  }
  const array = lArray ? l : r;
  const element = elementTypeOf(array.type as ArrayTypeName);
  const item = lArray ? r : l;
  if (!canCoerce(item.type, element)) return noOperator('||', l.type, r.type);
  const ic = coerce(item, element);
  const type = array.type;
  return {
    type,
    evaluate(ctx) {
      const a = (array.evaluate(ctx).value as SqlValue[] | null) ?? [];
      const v = ic.evaluate(ctx);
      return { type, value: lArray ? [...a, v] : [v, ...a] } as SqlValue;
    },
  };
}

/** `ANY (x)`, `SOME (x)`, `ALL (x)` with an expression (not a subquery) inside: the array expression. */
export function arrayQuantifier(n: AstNode | undefined): { array: AstNode; all: boolean } | undefined {
  if (n?.type !== 'function') return undefined;
  const parts = (n.name as { name?: { value: unknown }[] } | undefined)?.name ?? [];
  const name = parts.length === 1 ? String(parts[0]!.value).toLowerCase() : '';
  if (name !== 'any' && name !== 'some' && name !== 'all') return undefined;
  const args = ((n.args as { value?: AstNode[] } | undefined)?.value ?? []) as AstNode[];
  if (args.length !== 1 || (args[0] as { ast?: unknown }).ast !== undefined) return undefined;
  return { array: args[0]!, all: name === 'all' };
}

/**
 * `x op ANY (array)` / `x op ALL (array)`: op between x and each element (see arrays.ts
 * quantify). An untyped literal is an array of x's type; a JSON array parameter too.
 * @throws SQL_ERROR 42809 when the right side is not an array
 */
function arrayQuantified(op: string, l: CompiledExpr, a: CompiledExpr, all: boolean): CompiledExpr {
  const wanted = arrayOf(l.type === 'unknown' ? 'text' : l.type);
  if (a.type === 'unknown') a = coerce(a, wanted);
  else if (a.type === 'jsonb' && a.param !== undefined) a = castOnce(a, { type: wanted });
  if (!isArrayType(a.type)) return sqlFail('42809', 'op ANY/ALL (array) requires array on right side');
  const element = elementTypeOf(a.type);
  const t = resolveComparison(op, l.type, element);
  const lc = coerce(l, t);
  let left: SqlValue = { type: t, value: null } as SqlValue;
  let current: SqlValue = left;
  const test = comparison(op, { type: t, ...(l.collation === undefined ? {} : { collation: l.collation }), evaluate: () => left }, { type: element, ...(a.collation === undefined ? {} : { collation: a.collation }), evaluate: () => current });
  const arr = a;
  return {
    type: 'boolean',
    evaluate(ctx) {
      left = lc.evaluate(ctx);
      const elements = arr.evaluate(ctx).value as SqlValue[] | null;
      if (elements === null) return { type: 'boolean', value: null };
      const tests = function* (): Generator<boolean | null> {
        for (const e of elements) {
          current = e;
          yield test.evaluate(ctx).value as boolean | null;
        }
      };
      return { type: 'boolean', value: quantify(tests(), all) };
    },
  };
}

const BINARY: Record<BinaryOp, BinaryHandler> = {
  '+': arith,
  '-': arith,
  '*': arith,
  '/': arith,
  '%': arith,
  '||': concatOp,
  '=': compare,
  '<>': compare,
  '!=': compare,
  '<': compare,
  '<=': compare,
  '>': compare,
  '>=': compare,
  AND: logical,
  OR: logical,
  IS: isTest,
  'IS NOT': isTest,
  IN: inList,
  'NOT IN': inList,
  BETWEEN: between,
  'NOT BETWEEN': between,
  LIKE: like,
  'NOT LIKE': like,
  ILIKE: like,
  'NOT ILIKE': like,
  '->': jsonArrow,
  '->>': jsonArrow,
  '#>': jsonPathOp,
  '#>>': jsonPathOp,
  '@>': containment,
  '<@': containment,
  '&&': containment,
  '?': jsonTest,
  '~': regexMatch,
  '~*': regexMatch,
  '!~': regexMatch,
  '!~*': regexMatch,
};

/** Operators node-sql-parser groups differently from PostgreSQL when mixed with `||`. */
const MISGROUPED_WITH_CONCAT = new Set(['+', '-', '*', '/', '%', '->', '->>']);

function isBareBinary(n: unknown, ops: Set<string>): boolean {
  const b = n as AstNode | null;
  return b !== null && b.type === 'binary_expr' && b.parentheses !== true && ops.has(String(b.operator));
}

/**
 * node-sql-parser binds `||` tighter than * and +, and groups `j || k -> 'a'` as j || (k -> 'a');
 * PostgreSQL puts `||` below + and at the level of -> (left to right). Such mixes without
 * parentheses are refused rather than evaluated with the wrong grouping.
 */
function checkConcatGrouping(op: string, node: AstNode): void {
  const concat = new Set(['||']);
  const misgrouped =
    (op === '||' && (isBareBinary(node.left, MISGROUPED_WITH_CONCAT) || isBareBinary(node.right, MISGROUPED_WITH_CONCAT))) ||
    (MISGROUPED_WITH_CONCAT.has(op) && (isBareBinary(node.left, concat) || isBareBinary(node.right, concat)));
  if (misgrouped) unsupported(`mixing || with arithmetic or JSON operators without parentheses (the parser groups them unlike PostgreSQL)`);
}

function compileBinary(node: AstNode, env: CompileEnv): CompiledExpr {
  const op = String(node.operator).toUpperCase();
  checkConcatGrouping(op, node);
  const quantifier = arrayQuantifier(node.right as AstNode);
  if (quantifier !== undefined && op in COMPARE) return arrayQuantified(op, compileExpression(node.left as AstNode, env), compileExpression(quantifier.array, env), quantifier.all);
  const handler = (BINARY as Record<string, BinaryHandler | undefined>)[op];
  if (handler === undefined) return unsupported(`operator ${String(node.operator)}`);
  return handler(op, node, env);
}

function compileUnary(node: AstNode, env: CompileEnv): CompiledExpr {
  const op = String(node.operator).toUpperCase();
  const operand = node.expr as AstNode;
  if (op === '-' && (operand.type === 'number' || operand.type === 'bigint')) {
    // PostgreSQL's grammar folds a minus over a numeric literal (parenthesised or not) into one
    // negative literal, typed by its own value: -2147483648 is an integer, -9223372036854775808
    // a bigint, though their magnitudes are not.
    const text = String(operand.value);
    return constant(numericLiteral(text.startsWith('-') ? text.slice(1) : `-${text.startsWith('+') ? text.slice(1) : text}`));
  }
  const e = compileExpression(operand, env);
  if (op === 'NOT') {
    const b = asBoolean(e, 'NOT');
    return {
      type: 'boolean',
      evaluate(ctx) {
        const v = b.evaluate(ctx).value as boolean | null;
        return { type: 'boolean', value: v === null ? null : !v };
      },
    };
  }
  if (op === '-' || op === '+') {
    if (e.type === 'unknown') sqlFail('42725', `operator is not unique: ${op} unknown`);
    if (op === '-') {
      return {
        type: e.type,
        evaluate(ctx) {
          const v = e.evaluate(ctx);
          return v.value === null ? v : negate(v as NonNullSqlValue);
        },
      };
    }
    return e;
  }
  return unsupported(`unary operator ${String(node.operator)}`);
}

// ---- CASE and the conditional functions ----------------------------------------------------

function compileCase(node: AstNode, env: CompileEnv): CompiledExpr {
  const args = node.args as AstNode[];
  const subject = node.expr ? compileExpression(node.expr as AstNode, env) : null;
  const whens: { cond: CompiledExpr; result: CompiledExpr }[] = [];
  let otherwise: CompiledExpr | null = null;
  for (const a of args) {
    if (a.type === 'when') {
      const c = compileExpression(a.cond as AstNode, env);
      const cond = subject === null ? asBoolean(c, 'CASE/WHEN') : comparison('=', subject, c);
      whens.push({ cond, result: compileExpression(a.result as AstNode, env) });
    } else if (a.type === 'else') {
      otherwise = compileExpression(a.result as AstNode, env);
    } else {
      return unsupported(`CASE arm ${a.type}`);
    }
  }
  const type = commonType([...whens.map((w) => w.result.type), ...(otherwise ? [otherwise.type] : [])], 'CASE');
  const arms = whens.map((w) => ({ cond: w.cond, result: coerce(w.result, type) }));
  const fallback = otherwise ? coerce(otherwise, type) : null;
  // Only the results make the CASE's collation (PostgreSQL leaves a simple CASE's subject out).
  const results = [...whens.map((w) => w.result), ...(otherwise ? [otherwise] : [])];
  return {
    type,
    collation: isCollatable(type) ? mergeCollations(results) : undefined,
    evaluate(ctx) {
      for (const arm of arms) if (arm.cond.evaluate(ctx).value === true) return arm.result.evaluate(ctx);
      return fallback ? fallback.evaluate(ctx) : { type, value: null };
    },
  };
}

type Conditional = (name: string, args: CompiledExpr[]) => CompiledExpr;

const CONDITIONALS: Record<'coalesce' | 'nullif' | 'greatest' | 'least', Conditional> = {
  coalesce(name, args) {
    const type = commonType(args.map((a) => a.type), name.toUpperCase());
    const cs = args.map((a) => coerce(a, type));
    return {
      type,
      evaluate(ctx) {
        for (const c of cs) {
          const v = c.evaluate(ctx);
          if (v.value !== null) return v;
        }
        return { type, value: null };
      },
    };
  },
  nullif(name, args) {
    if (args.length !== 2) return unsupported(`${name} with ${args.length} arguments`);
    const [a, b] = args as [CompiledExpr, CompiledExpr];
    const eq = comparison('=', a, b);
    // The result has the type the = operator compared in (NULLIF(3, 1.5) is numeric).
    const type = a.type === 'unknown' && b.type === 'unknown' ? 'text' : resolveComparison('=', a.type, b.type);
    const ac = coerce(a, type);
    return {
      type,
      evaluate(ctx) {
        const v = ac.evaluate(ctx);
        return eq.evaluate(ctx).value === true ? { type, value: null } : v;
      },
    };
  },
  greatest: (name, args) => extremum(name, args, 1),
  least: (name, args) => extremum(name, args, -1),
};

function extremum(name: string, args: CompiledExpr[], sign: 1 | -1): CompiledExpr {
  const type = commonType(args.map((a) => a.type), name.toUpperCase());
  if (type === 'jsonb') return unsupported(`${name} on jsonb`);
  const cs = args.map((a) => coerce(a, type));
  return {
    type,
    evaluate(ctx) {
      let best: SqlValue = { type, value: null };
      for (const c of cs) {
        const v = c.evaluate(ctx);
        if (v.value === null) continue;
        if (best.value === null || compareValues(v as NonNullSqlValue, best as NonNullSqlValue) * sign > 0) best = v;
      }
      return best;
    },
  };
}

const INTEGER_TYPES: readonly SqlTypeName[] = ['int2', 'int4', 'int8'];

/**
 * The bitwise operators, made calls before parsing (sql-grammar-gaps.ts): `&`, `|`, `#` (xor),
 * `<<`, `>>` and prefix `~`, over integers (of the wider operand's type; a shift keeps the left
 * operand's type and takes an integer count, as C shifts: modulo the width) and over bit strings
 * (a result of type bit).
 * @throws SQL_ERROR 42883 other operand types, 42725 unknown operands
 */
function compileBitOperator(op: string, operands: CompiledExpr[]): CompiledExpr {
  const [a, b] = operands as [CompiledExpr, CompiledExpr | undefined];
  const types = operands.map((o) => o.type);
  const fail = (): never => (b === undefined ? noPrefixOperator(op, a.type) : noOperator(op, a.type, b.type));
  const shift = op === '<<' || op === '>>';
  if (types.every((t) => t === 'unknown')) sqlFail('42725', b === undefined ? `operator is not unique: ${op} unknown` : `operator is not unique: unknown ${op} unknown`);
  // An unknown operand takes the other's type (a shift count is an integer).
  const known = types.find((t) => t !== 'unknown')!;
  if (isBitType(known) || (shift && isBitType(a.type))) {
    const ac = isBitType(a.type) || a.type === 'unknown' ? coerce(a, 'bit') : fail();
    const bc = b === undefined ? undefined : shift ? (canCoerce(b.type, 'int4') ? coerce(b, 'int4') : fail()) : isBitType(b.type) || b.type === 'unknown' ? coerce(b, 'bit') : fail();
    return {
      type: 'bit',
      evaluate(ctx) {
        const x = ac.evaluate(ctx).value as string | null;
        const y = bc?.evaluate(ctx).value as string | number | null | undefined;
        if (x === null || y === null) return { type: 'bit', value: null };
        if (y === undefined) return { type: 'bit', value: bitNot(x) };
        if (shift) return { type: 'bit', value: bitShift(x, y as number, op === '<<') };
        return { type: 'bit', value: bitwise(op as '&' | '|' | '#', x, y as string) };
      },
    };
  }
  if (!INTEGER_TYPES.includes(known) || (b !== undefined && !shift && b.type !== 'unknown' && !INTEGER_TYPES.includes(b.type))) return fail();
  if (shift && b !== undefined && b.type !== 'unknown' && !canCoerce(b.type, 'int4')) return fail();
  const type = shift || b === undefined ? (a.type === 'unknown' ? 'int4' : a.type) : types.reduce((w, t) => (t !== 'unknown' && INTEGER_TYPES.indexOf(t) > INTEGER_TYPES.indexOf(w) ? t : w), known);
  if (!INTEGER_TYPES.includes(type)) return fail();
  const ac = coerce(a, type);
  const bc = b === undefined ? undefined : coerce(b, shift ? 'int4' : type);
  return {
    type,
    evaluate(ctx) {
      const x = ac.evaluate(ctx).value as number | bigint | null;
      const y = bc?.evaluate(ctx).value as number | bigint | null | undefined;
      if (x === null || y === null) return { type, value: null } as SqlValue;
      return integerBitOp(op, type as 'int2' | 'int4' | 'int8', BigInt(x), y === undefined ? undefined : BigInt(y));
    },
  };
}

/** An integer bitwise operation in the type's width (a shift count taken modulo it, as C on x86). */
function integerBitOp(op: string, type: 'int2' | 'int4' | 'int8', x: bigint, y: bigint | undefined): SqlValue {
  const width = type === 'int8' ? 64 : 32;
  let r: bigint;
  if (y === undefined) r = ~x;
  else if (op === '&') r = x & y;
  else if (op === '|') r = x | y;
  else if (op === '#') r = x ^ y;
  else {
    const count = BigInt(Number(BigInt.asUintN(64, y)) % width);
    r = op === '<<' ? BigInt.asIntN(width, x << count) : x >> count;
  }
  // int2 results are cut to 16 bits, as PostgreSQL's int2shl does; nothing else can overflow.
  return makeInt(type, BigInt.asIntN(type === 'int2' ? 16 : width, r));
}

function isNotCall(n: AstNode): boolean {
  const parts = (n.name as { name?: { value: unknown }[] } | undefined)?.name;
  return n.type === 'function' && parts?.length === 1 && String(parts[0]!.value).toUpperCase() === 'NOT';
}

/** Keyword arguments node-sql-parser leaves in function argument lists. */
function keywordOf(n: AstNode): string | null {
  return n.type === 'origin' ? String(n.value).toLowerCase() : null;
}

/** The keywords between a call's arguments (`substring(s FROM a FOR b)`: "from for"), or "". */
function separatorsOf(node: AstNode): string {
  const seps = (node as { separator?: unknown }).separator;
  if (!Array.isArray(seps)) return '';
  return seps.map((sep: { value?: unknown }) => String(sep?.value ?? '').toLowerCase()).join(' ');
}

function compileFunction(node: AstNode, env: CompileEnv): CompiledExpr {
  const nameParts = (node.name as { name?: { value: unknown }[] } | undefined)?.name ?? [];
  if (nameParts.length !== 1) return unsupported('schema-qualified function names');
  const name = String(nameParts[0]!.value).toLowerCase();
  if (node.over) return unsupported('window functions');
  if (name === COLLATE_MARKER) return compileCollate(node, env);
  const argList = node.args as { type: string; value: AstNode[] } | undefined;
  let argNodes = argList?.value ?? [];
  let trimMode: string | null = null;
  if (name === 'trim') {
    // trim([both|leading|trailing] [chars] FROM s) arrives as a flat list with 'origin' keywords.
    const kws = argNodes.map(keywordOf);
    if (kws[0] !== null && kws[0] !== undefined && ['both', 'leading', 'trailing'].includes(kws[0])) {
      trimMode = kws[0];
      argNodes = argNodes.slice(1);
    }
    const fromAt = argNodes.findIndex((n) => keywordOf(n) === 'from');
    if (fromAt >= 0) argNodes = [...argNodes.slice(fromAt + 1), ...argNodes.slice(0, fromAt)];
  } else if (name === 'position') {
    argNodes = argNodes.filter((n) => keywordOf(n) !== 'in');
  } else if (name === 'substring' && argNodes.length === 2 && separatorsOf(node) === 'for') {
    // substring(s FOR n) is substring(s FROM 1 FOR n); the parser gives it as (s, n).
    argNodes = [argNodes[0]!, { type: 'number', value: 1 } as AstNode, argNodes[1]!];
  }
  const stray = argNodes.find((n) => keywordOf(n) !== null);
  if (stray) return unsupported(`keyword ${String(stray.value)} in ${name}()`);
  // nextval('s'::regclass), as pg_dump writes it: the name is read when the call runs.
  if (REGCLASS_ARGUMENT_FUNCTIONS.has(name) && argNodes.length > 0 && isRegclassCast(argNodes[0]!)) argNodes = [argNodes[0]!.expr as AstNode, ...argNodes.slice(1)];
  const args = argNodes.map((n) => compileExpression(n, env));
  const schema = (node.name as { schema?: { value: unknown } } | undefined)?.schema?.value;
  if (schema !== undefined && schema !== null && String(schema).toLowerCase() !== 'pg_catalog') {
    // Functions live in pg_catalog only.
    if (String(schema).toLowerCase() === 'public') sqlFail('42883', `function public.${name}(${args.map((a) => typeDisplay(a.type)).join(', ')}) does not exist`, undefined, NO_FUNCTION_HINT);
    sqlFail('3F000', `schema "${String(schema).toLowerCase()}" does not exist`);
  }
  if (name === 'not' && args.length === 1) {
    // node-sql-parser reads `NOT (expr)` as a call of a function named NOT.
    const b = asBoolean(args[0]!, 'NOT');
    return {
      type: 'boolean',
      evaluate(ctx) {
        const v = b.evaluate(ctx).value as boolean | null;
        return { type: 'boolean', value: v === null ? null : !v };
      },
    };
  }
  const cond = (CONDITIONALS as Record<string, Conditional | undefined>)[name];
  if (cond) return cond(name, args);
  if (name === UNKNOWN_OPERATOR && args.length === 3) {
    // `2^-1` (sql-grammar-gaps.ts): an operator no type has, named by its text (a constant).
    return noOperator(String(args[0]!.evaluate(COMPILE_TIME_CONTEXT).value), args[1]!.type, args[2]!.type);
  }
  if (name === BIT_LITERAL && args.length === 1) {
    // B'0101' / X'1F' (sql-grammar-gaps.ts): a bit string of the length written.
    return constant({ type: 'bit', value: parseBits(String(args[0]!.evaluate(COMPILE_TIME_CONTEXT).value)) });
  }
  if (name === BIT_OPERATOR && (args.length === 2 || args.length === 3)) {
    return compileBitOperator(String(args[0]!.evaluate(COMPILE_TIME_CONTEXT).value), args.slice(1));
  }
  if (name === POWER_OPERATOR && args.length === 2) {
    // `a ^ b`, made a call before parsing (sql-grammar-gaps.ts): PostgreSQL's ^ is power() under
    // an operator's name (double precision for integers and floats, numeric beside a numeric).
    if (!args.every((a) => canCoerce(a.type, 'float8') || canCoerce(a.type, 'numeric'))) noOperator('^', args[0]!.type, args[1]!.type);
    return FUNCTION_TABLE.get('power')!.compile('power', args);
  }
  const fnName = trimMode === 'leading' ? 'ltrim' : trimMode === 'trailing' ? 'rtrim' : name;
  const def = FUNCTION_TABLE.get(fnName);
  // PostgreSQL names a qualified call so in its errors (`AT TIME ZONE` is pg_catalog.timezone).
  const shown = schema === undefined || schema === null ? name : `pg_catalog.${name}`;
  if (def === undefined) return sqlFail('42883', `function ${shown}(${args.map((a) => typeDisplay(a.type)).join(', ')}) does not exist`, undefined, NO_FUNCTION_HINT);
  return def.compile(shown, args, inputCollation(args));
}

/** `x::regclass` / `CAST(x AS regclass)`. */
function isRegclassCast(n: AstNode): boolean {
  const target = (n as { target?: { dataType?: unknown }[] }).target;
  return n.type === 'cast' && Array.isArray(target) && target.length === 1 && String(target[0]!.dataType).toUpperCase() === 'REGCLASS';
}

/**
 * `x COLLATE name` (the marker call of sql-grammar-gaps.ts): x with an explicit collation, after
 * PostgreSQL's checks in its order (the operand, its type, then the name). An untyped literal
 * becomes text.
 * @throws SQL_ERROR 42804 a type without collations, 42704 / 0A000 / 3F000 the name (collation.ts resolveCollation)
 */
function compileCollate(node: AstNode, env: CompileEnv): CompiledExpr {
  const [operand, name] = (node.args as { value: AstNode[] }).value as [AstNode, AstNode];
  let e = compileExpression(operand, env);
  if (e.type === 'unknown') e = coerce(e, 'text');
  if (!isCollatable(e.type)) sqlFail('42804', `collations are not supported by type ${typeDisplay(e.type)}`);
  return { ...e, collation: { name: resolveCollation(markerNameParts(name)), strength: 'explicit' } };
}

/**
 * A LIKE pattern with its ASCII letters lowered, but not the escape character where it escapes
 * (PostgreSQL lowers the pattern after reading its escapes).
 */
function asciiLowerPattern(p: string, escape: string | null): string {
  if (escape === null) return asciiLower(p);
  let out = '';
  const cs = [...p];
  for (let i = 0; i < cs.length; i++) {
    if (cs[i] === escape) {
      out += escape + asciiLower(cs[i + 1] ?? '');
      i++;
      continue;
    }
    // A letter that lowers to the escape character is that character, escaped.
    const c = asciiLower(cs[i]!);
    out += c === escape ? escape + c : c;
  }
  return out;
}

export type { EvalContext, CompiledExpr, CastTarget };
