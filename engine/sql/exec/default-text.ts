import nodeSqlParser from 'node-sql-parser';
import { userTypeRef, type AstNode } from '../expression-eval.js';
import { quoteTypeName } from '../enum-types.js';
import type { Catalog, ColumnDef } from '../catalog.js';
import { castValue, parseText, typeDisplay } from '../sql-cast.js';
import { numericLiteral, toText, type NonNullSqlValue, type SqlValue } from '../sql-types.js';
import { columnType } from './ddl.js';
import { functionName } from './select.js';
import { columnName } from './scope.js';
import { sequenceDefaultText } from './sequence-ddl.js';

type Ast = AstNode & Record<string, unknown>;

const { Parser } = nodeSqlParser;
const parser = new Parser();

/**
 * A column's default as PostgreSQL shows it (information_schema.columns.column_default, from
 * pg_get_expr): constants as its ruleutils prints them (a non-negative integer or a decimal bare,
 * any other constant quoted with its type, `'-1'::integer`, `'x'::text`), a literal given to the
 * column typed as the column (`'2020-01-01'::date`, `7` for an integer column given '7'), calls
 * as `name(args)`, the SQL value functions by their keywords (CURRENT_TIMESTAMP) and an operator
 * in parentheses (`(1 + 2)`); null for DEFAULT NULL, which PostgreSQL does not keep. What it
 * does not know how to print comes back as node-sql-parser prints it (docs/sql.md).
 */
export function defaultText(node: AstNode, column: ColumnDef, catalog: Catalog): string | null {
  const bound = sequenceDefaultText(node, catalog);
  if (bound !== undefined) return bound;
  const n = node as Ast;
  if (n.type === 'null') return null;
  // A literal given to the column is converted to the column's type when the default is defined.
  if (n.type === 'single_quote_string') {
    const value = parseText(literalText(n), column.type);
    return value.value === null ? null : constantText(value as NonNullSqlValue, column.declared);
  }
  return expressionText(n);
}

function literalText(n: Ast): string {
  return String(n.value).replace(/''/g, "'");
}

/** A constant as ruleutils.c's get_const_expr prints it. */
function constantText(v: NonNullSqlValue, declared?: string): string {
  const text = toText(v);
  switch (v.type) {
    case 'int4':
      return text.startsWith('-') ? `'${text}'::integer` : text;
    case 'numeric':
      return /^[0-9]/.test(text) && /[eE.]/.test(text) ? text : `'${text}'::numeric`;
    case 'boolean':
      return text === 't' || text === 'true' ? 'true' : 'false';
    default:
      return `'${text.replace(/'/g, "''")}'::${typeLabel(v.type, declared)}`;
  }
}

/** The type's name without its modifiers (format_type with no typmod: `bpchar` for character(n)). */
function typeLabel(type: SqlValue['type'], declared: string | undefined): string {
  if (type === 'bpchar') return 'bpchar';
  return declared === undefined ? typeDisplay(type) : declared.replace(/\(.*\)$/, '');
}

/** The SQL value functions, which PostgreSQL prints as their keywords. */
const VALUE_FUNCTIONS = new Set(['current_timestamp', 'current_date', 'current_time', 'localtimestamp', 'localtime', 'current_user', 'session_user', 'current_role', 'user', 'current_catalog', 'current_schema']);
/** Of those, the ones the rewrite makes calls of (sql-grammar-gaps.ts rewriteValueFunctions): no other form reaches here. */
const CALLED_VALUE_FUNCTIONS = new Set(['localtimestamp', 'localtime', 'current_user', 'session_user', 'current_role', 'current_catalog', 'current_schema']);

/**
 * An expression as PostgreSQL's ruleutils prints it (pg_get_indexdef, a unique violation's key):
 * columns by name (quoted when they need it), constants, calls and operators as expressionText
 * prints a default's.
 */
export function expressionSqlText(node: AstNode): string {
  return expressionText(node as Ast);
}

function expressionText(n: Ast): string {
  switch (n.type) {
    case 'column_ref': {
      const name = columnName(n);
      return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
    }
    case 'number':
    case 'bigint':
      return constantText(numericLiteral(String(n.value)) as NonNullSqlValue);
    case 'single_quote_string':
      // An untyped literal among operators and calls resolves to text there.
      return constantText({ type: 'text', value: literalText(n) } as NonNullSqlValue);
    case 'bool':
      return n.value === true ? 'true' : 'false';
    case 'null':
      return 'NULL';
    case 'interval':
      return constantText(castValue({ type: 'unknown', value: literalText(n.expr as Ast) } as SqlValue, { type: 'interval' }) as NonNullSqlValue);
    case 'unary_expr': {
      const operand = n.expr as Ast;
      if (n.operator === '-' && (operand.type === 'number' || operand.type === 'bigint')) return constantText(numericLiteral(`-${String(operand.value)}`) as NonNullSqlValue);
      return `(${String(n.operator)} ${expressionText(operand)})`;
    }
    case 'binary_expr':
      return `(${expressionText(n.left as Ast)} ${String(n.operator).toUpperCase()} ${expressionText(n.right as Ast)})`;
    case 'cast': {
      const inner = n.expr as Ast;
      const ref = userTypeRef((n.target as Ast[])[0]! as unknown as { dataType: string });
      if (ref !== undefined) {
        // A cast to an enum type: its name as format_type writes it (the label is not checked here).
        const name = `${quoteTypeName(ref.name)}${ref.array ? '[]' : ''}`;
        return inner.type === 'single_quote_string' ? `'${literalText(inner).replace(/'/g, "''")}'::${name}` : `(${expressionText(inner)})::${name}`;
      }
      // The target as a column of that type would be declared (varchar: character varying).
      const { target, declared } = columnType((n.target as Ast[])[0]!);
      // The parser types a quoted literal as the cast's target (one constant); a number keeps its
      // own type, cast to the target when that differs.
      if (inner.type === 'single_quote_string') {
        try {
          const value = castValue({ type: 'unknown', value: literalText(inner) } as SqlValue, target);
          if (value.value !== null) return constantText(value as NonNullSqlValue, declared);
        } catch {
          // Printed as written below.
        }
      }
      if ((inner.type === 'number' || inner.type === 'bigint') && numericLiteral(String(inner.value)).type === target.type) return expressionText(inner);
      return `(${expressionText(inner)})::${declared}`;
    }
    case 'function': {
      const name = functionName(n);
      const args = ((n.args as Ast | undefined)?.value as Ast[] | undefined) ?? [];
      if ((n.args === undefined && VALUE_FUNCTIONS.has(name)) || (args.length === 0 && CALLED_VALUE_FUNCTIONS.has(name))) return name.toUpperCase();
      // The clock's precision: `LOCALTIME(2)`, `CURRENT_TIME(0)`.
      if (args.length === 1 && args[0]!.type === 'number' && ['current_time', 'current_timestamp', 'localtime', 'localtimestamp'].includes(name)) return `${name.toUpperCase()}(${String(args[0]!.value)})`;
      // A sequence named by a literal is a regclass argument (one bound to its sequence is printed before this).
      if (name === 'nextval' && args.length === 1 && args[0]!.type === 'single_quote_string') return `nextval('${String(args[0]!.value)}'::regclass)`;
      return `${name}(${args.map(expressionText).join(', ')})`;
    }
    default:
      return parser.exprToSQL(n as never, { database: 'postgresql' });
  }
}
