import type { AstNode } from '../expression-eval.js';
import { COLLATE_MARKER, JSON_AGG_ORDERED, JSONB_AGG_ORDERED, QUERY_MARKER } from '../sql-grammar-gaps.js';
import { DISTINCT_PREFIX, NO_ARGUMENT, WINDOW_CALL_PREFIX } from '../sql-rewrite.js';
import { columnName } from './scope.js';

/**
 * PostgreSQL's default output column name for an unaliased select or RETURNING item
 * (FigureColname in src/backend/parser/parse_target.c), over node-sql-parser's node kinds.
 * Rows come back keyed by these names over HTTP, so they follow PostgreSQL's rules exactly:
 * a column or a function names itself (strength 2); a cast or a typed literal falls back to its
 * type name and CASE to "case" (strength 1) when nothing inside names it more strongly; anything
 * else (operators, literals, IS NULL, ...) is "?column?".
 */
export function figureColumnName(node: AstNode, starName?: StarName): string {
  const { name, strength } = figure(node, starName);
  return strength === 0 ? '?column?' : name;
}

/**
 * The name of the first column of a subquery whose select list starts with `*` (`(SELECT * FROM
 * t)`), which only its plan knows; without one, such a subquery names nothing.
 */
export type StarName = (query: AstNode) => string | undefined;

interface Figured {
  name: string;
  /** 0: no name, 1: a fallback (type name, "case"), 2: a column or function name. */
  strength: 0 | 1 | 2;
}

const NONE: Figured = { name: '?column?', strength: 0 };
const strong = (name: string): Figured => ({ name, strength: 2 });

function figure(node: AstNode | null | undefined, starName?: StarName): Figured {
  if (node === null || node === undefined || typeof node !== 'object') return NONE;
  // A parenthesised subquery: the name of its first output column (PostgreSQL's EXPR_SUBLINK).
  if (node.ast !== undefined && (node.type === undefined || node.type === 'expr')) return subqueryName(node.ast as AstNode, starName);
  switch (node.type) {
    case 'column_ref': {
      const name = columnName(node);
      return name === '*' ? NONE : strong(name);
    }
    case 'aggr_func':
    case 'window_func':
      return strong(String(node.name).toLowerCase());
    case 'function': {
      // `x COLLATE c` (a marker call) is named as x (FigureColnameInternal looks through it).
      const called = (node.name as { name?: { value: unknown }[] } | undefined)?.name;
      if (called?.length === 1 && called[0]!.value === COLLATE_MARKER) return figure((node.args as { value: AstNode[] }).value[0], starName);
      const name = functionColumnName(node);
      return name === '?column?' ? NONE : strong(name);
    }
    case 'extract':
      return strong('extract');
    case 'array':
      return strong('array');
    case 'cast': {
      // The inner expression's name wins unless it is only a fallback (`1::int` is "int4",
      // `a::int` is "a", `a::int::text` is "a").
      const inner = figure(node.expr as AstNode, starName);
      if (inner.strength === 2) return inner;
      const targets = node.target as AstNode[] | undefined;
      return { name: typeName(targets?.[targets.length - 1]), strength: 1 };
    }
    // Typed literals (`date '...'`, `interval '1 day'`) are casts of a string in PostgreSQL's
    // grammar: they take the type's name.
    case 'date':
    case 'time':
    case 'timestamp':
    case 'interval':
      return { name: node.type, strength: 1 };
    case 'case': {
      const otherwise = ((node.args ?? []) as AstNode[]).find((a) => a.type === 'else');
      const inner = figure(otherwise?.result as AstNode | undefined, starName);
      return inner.strength === 2 ? inner : { name: 'case', strength: 1 };
    }
    default:
      return NONE;
  }
}

function subqueryName(ast: AstNode, starName: StarName | undefined): Figured {
  const first = (ast.columns as AstNode[] | undefined)?.[0];
  if (first === undefined) return NONE;
  // The pre-pass's stand-in for a parenthesised query (sql-grammar-gaps.ts) is named by that query.
  const from = ast.from as { as?: unknown; expr?: { ast?: AstNode } }[] | null | undefined;
  const marked = (first.expr ?? first) as AstNode;
  if (from?.[0]?.as === QUERY_MARKER && from[0].expr?.ast !== undefined && marked.type === 'column_ref' && columnName(marked) === QUERY_MARKER) return subqueryName(from[0].expr.ast, starName);
  if (typeof first.as === 'string') return strong(first.as);
  if (marked.type === 'column_ref' && columnName(marked) === '*') {
    const name = starName?.(ast);
    return name === undefined ? NONE : strong(name);
  }
  const inner = figure((first.expr ?? first) as AstNode, starName);
  // PostgreSQL takes the subquery's already-chosen name, "?column?" included, as a strong name.
  return strong(inner.name);
}

/** The name a function call gives its column: the grammar's own function for special forms. */
function functionColumnName(node: AstNode): string {
  const parts = ((node.name as { name?: { value: unknown }[] } | undefined)?.name ?? []);
  let name = String(parts[parts.length - 1]?.value ?? '').toLowerCase();
  const args = (node.args as { value?: AstNode[] } | undefined)?.value ?? [];
  // Aggregates called with OVER reach the parser as ntile(<marker>name, ...) (sql-rewrite.ts).
  const first = args[0];
  if (first?.type === 'column_ref' && columnName(first).startsWith(WINDOW_CALL_PREFIX)) name = columnName(first).slice(WINDOW_CALL_PREFIX.length);
  if (name.startsWith(DISTINCT_PREFIX)) return name.slice(DISTINCT_PREFIX.length);
  // IS DISTINCT FROM and BETWEEN SYMMETRIC, rewritten to marker functions, are operators; so is
  // a parenthesised NOT, which the parser reads as a call of a function named not.
  if (name === JSON_AGG_ORDERED) return 'json_agg';
  if (name === JSONB_AGG_ORDERED) return 'jsonb_agg';
  if (name.startsWith('__tetra_') || name === 'not') return '?column?';
  // cume_dist() / percent_rank() likewise.
  if (first?.type === 'column_ref' && columnName(first).startsWith(NO_ARGUMENT)) return columnName(first).slice(NO_ARGUMENT.length);
  // TRIM(LEADING ...) is ltrim in PostgreSQL's grammar, TRIM(TRAILING ...) rtrim, others btrim.
  if (name === 'trim') {
    const mode = first?.type === 'origin' ? String(first.value).toLowerCase() : '';
    name = mode === 'leading' ? 'ltrim' : mode === 'trailing' ? 'rtrim' : 'btrim';
  }
  return name;
}

/** PostgreSQL's internal name of a cast's target type (`integer` is int4, `decimal` numeric). */
function typeName(target: AstNode | undefined): string {
  const dataType = String(target?.dataType ?? '').toLowerCase();
  const suffix = ((target?.suffix ?? []) as unknown[]).map((s) => String(s).toLowerCase()).join(' ');
  const length = target?.length as number | undefined;
  switch (dataType) {
    case 'int':
      return length === 8 ? 'int8' : length === 2 ? 'int2' : 'int4';
    case 'float':
      // float8 / float4 arrive as FLOAT with the byte length; float(p) has p bits of precision.
      if (length === 4 || (target?.parentheses === true && length !== undefined && length <= 24)) return 'float4';
      return 'float8';
    case 'timestamp':
      return suffix === 'with time zone' ? 'timestamptz' : 'timestamp';
    case 'time':
      return suffix === 'with time zone' ? 'timetz' : 'time';
    default:
      return TYPE_NAMES[dataType] ?? dataType;
  }
}

const TYPE_NAMES: Record<string, string> = {
  integer: 'int4',
  smallint: 'int2',
  bigint: 'int8',
  'double precision': 'float8',
  real: 'float4',
  boolean: 'bool',
  decimal: 'numeric',
  dec: 'numeric',
  'character varying': 'varchar',
  char: 'bpchar',
  character: 'bpchar',
};
