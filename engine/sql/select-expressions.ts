import nodeSqlParser from 'node-sql-parser';
import { compileExpression, type AstNode, type CompileEnv } from './expression-eval.js';
import type { EvalContext } from './compiled-expr.js';
import { figureColumnName } from './exec/column-names.js';
import { paramsFromJson } from './sql-params.js';
import { restoreLiterals } from './sql-literals.js';
import { protectLiteralText } from './sql-rewrite.js';
import { isEnumValue, sqlFail, toText, type SqlTypeName, type SqlValue } from './sql-types.js';

const { Parser } = nodeSqlParser;
const parser = new Parser();

/** One output column: its name (alias or PostgreSQL's default name) and SQL type. */
export interface ColumnInfo {
  name: string;
  type: SqlTypeName;
}

export interface SelectExpressionsResult {
  columns: ColumnInfo[];
  /** JS forms of the values (see toJsValue). */
  row: unknown[];
  /** The typed SQL values behind `row`. */
  values: SqlValue[];
}

export interface SelectOptions {
  /** The statement time for now()/current_timestamp (default: the current clock). */
  statementTime?: Date;
}

/** Parses PostgreSQL-dialect SQL. @throws SQL_ERROR 42601 on a syntax error */
export function parseSql(sql: string): unknown {
  const { text, literals } = protectLiteralText(sql);
  try {
    const ast = parser.astify(text, { database: 'PostgreSQL' });
    if (literals !== undefined) restoreLiterals(ast, literals);
    return ast;
  } catch (err) {
    return sqlFail('42601', `syntax error: ${(err as Error).message.split('\n')[0]}`);
  }
}

/**
 * Evaluates `SELECT <expr> [AS name], ...` (no FROM) with bound parameters ($1 = params[0],
 * given as JSON; never interpolated into the SQL text).
 * @throws SQL_ERROR with details.sqlstate (42601 syntax, 0A000 unsupported, 22xxx data errors, ...)
 */
export function evaluateSelectExpressions(sql: string, params: readonly unknown[] = [], options: SelectOptions = {}): SelectExpressionsResult {
  const parsed = parseSql(sql);
  const stmts = Array.isArray(parsed) ? parsed : [parsed];
  if (stmts.length !== 1) sqlFail('0A000', 'unsupported: several statements');
  const stmt = stmts[0] as Record<string, unknown>;
  if (stmt.type !== 'select') sqlFail('0A000', `unsupported: ${String(stmt.type)} statement (only SELECT <expressions>)`);
  const into = stmt.into as { position?: unknown } | null | undefined;
  if (into && into.position !== null && into.position !== undefined) sqlFail('0A000', 'unsupported: SELECT INTO');
  for (const clause of ['options', 'from', 'where', 'groupby', 'having', 'orderby', 'limit', 'with', 'distinct', 'window', '_next']) {
    const v = stmt[clause];
    const empty =
      v === null ||
      v === undefined ||
      (Array.isArray(v) && v.length === 0) ||
      (clause === 'limit' && isEmptyLimit(v)) ||
      (clause === 'distinct' && (v as { type?: unknown }).type === null);
    if (!empty) sqlFail('0A000', `unsupported: ${clause.toUpperCase()} (only SELECT <expressions> so far)`);
  }
  const env: CompileEnv = { params: paramsFromJson(params) };
  const micros = BigInt((options.statementTime ?? new Date()).getTime()) * 1000n;
  const ctx: EvalContext = { statementTime: micros };
  const columns: ColumnInfo[] = [];
  const row: unknown[] = [];
  const values: SqlValue[] = [];
  for (const col of stmt.columns as Record<string, unknown>[]) {
    // Usually {type: 'expr', expr, as}; a lone `$1::int` comes back as the cast node itself.
    const node = (col.type === 'expr' ? col.expr : col) as AstNode;
    if (col.type === 'star' || (node.type === 'column_ref' && (node as { column?: unknown }).column === '*')) sqlFail('0A000', 'unsupported: *');
    const compiled = compileExpression(node, env);
    const value = compiled.evaluate(ctx);
    columns.push({ name: typeof col.as === 'string' ? col.as : figureColumnName(node), type: compiled.type === 'unknown' ? 'text' : compiled.type });
    values.push(value);
    row.push(toJsValue(value));
  }
  return { columns, row, values };
}

function isEmptyLimit(v: unknown): boolean {
  const l = v as { value?: unknown[] } | null;
  return l === null || !Array.isArray(l.value) || l.value.length === 0;
}

/**
 * The JS form of a SQL value in results: int8 is a number when safe, else a bigint; numeric is
 * an exact decimal string; dates and timestamps are PostgreSQL's text forms (UTC); jsonb is
 * parsed JSON; bytea a Buffer; an array a JS array of its elements' JS forms.
 */
export function toJsValue(v: SqlValue): unknown {
  if (v.value === null) return null;
  switch (v.type) {
    case 'int8':
      return v.value >= BigInt(Number.MIN_SAFE_INTEGER) && v.value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v.value) : v.value;
    case 'numeric':
    case 'date':
    case 'timestamp':
    case 'timestamptz':
    case 'time':
    case 'timetz':
    case 'interval':
      // PostgreSQL's text forms: exact digits, '2024-01-02', '... 10:00:00', '1 day 02:00:00'.
      return toText(v);
    case 'jsonb':
      return v.value.json;
    default:
      if (Array.isArray(v.value)) return v.value.map(toJsValue);
      // An enum's value is its sort key; its label is what a client sees.
      if (isEnumValue(v)) return toText(v);
      return v.value;
  }
}
