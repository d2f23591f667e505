import type { CompiledExpr } from '../compiled-expr.js';
import type { AstNode } from '../expression-eval.js';
import { sqlFail } from '../sql-types.js';
import type { PlanColumn } from './runtime.js';

/** A resolved column reference: how many query levels out, and the slot in that level's row. */
export interface ColumnSlot {
  depth: number;
  index: number;
  column: PlanColumn;
}

/**
 * Names visible to expressions of one query level: the columns of its FROM clause, in row order.
 * `parent` is the enclosing query's scope (correlated references), absent at the top.
 */
export class Scope {
  readonly columns: PlanColumn[];
  readonly parent: Scope | undefined;
  /** Set when an expression of this level (or a nested one) read an enclosing level's row. */
  correlated = false;
  /** How many resolutions from deeper levels landed in this scope or above (correlation). */
  innerRefs = 0;

  constructor(columns: PlanColumn[], parent: Scope | undefined) {
    this.columns = columns;
    this.parent = parent;
  }

  /**
   * Resolves `qualifier.name` (qualifier null: unqualified), innermost level first.
   * @throws SQL_ERROR 42702 ambiguous, 42703 no such column, 42P01 unknown table qualifier
   */
  resolve(qualifier: string | null, name: string): ColumnSlot {
    let scope: Scope | undefined = this;
    let depth = 0;
    let qualifierSeen = false;
    const passed: Scope[] = [];
    while (scope !== undefined) {
      let found = -1;
      for (let i = 0; i < scope.columns.length; i++) {
        const c = scope.columns[i]!;
        if (c.name !== name || (qualifier !== null && c.qualifier !== qualifier)) continue;
        if (c.hidden === true && qualifier === null && found >= 0) continue;
        if (found >= 0 && !scope.columns[found]!.hidden) {
          sqlFail('42702', `column reference "${qualifier === null ? name : `${qualifier}.${name}`}" is ambiguous`);
        }
        found = i;
      }
      if (qualifier !== null && scope.columns.some((c) => c.qualifier === qualifier)) qualifierSeen = true;
      if (found >= 0) {
        scope.columns[found]!.used = true;
        for (const p of passed) p.correlated = true;
        if (depth > 0) for (let up: Scope | undefined = scope; up !== undefined; up = up.parent) up.innerRefs++;
        return { depth, index: found, column: scope.columns[found]! };
      }
      passed.push(scope);
      scope = scope.parent;
      depth++;
    }
    if (qualifier !== null && !qualifierSeen) sqlFail('42P01', `missing FROM-clause entry for table "${qualifier}"`);
    return sqlFail('42703', qualifier === null ? `column "${name}" does not exist` : `column ${qualifier}.${name} does not exist`);
  }
}

/** An expression that reads a resolved column slot. */
export function slotExpr(slot: ColumnSlot): CompiledExpr {
  const { index, depth } = slot;
  const type = slot.column.type;
  if (depth === 0) return { type, slot: index, evaluate: (ctx) => ctx.row![index]! };
  return { type, evaluate: (ctx) => ctx.outer![ctx.outer!.length - depth]![index]! };
}

/** The identifier of a column_ref node's column part: unquoted names fold to lower case. */
export function columnName(node: AstNode): string {
  const col = node.column as string | { expr: { type: string; value: unknown } };
  if (typeof col === 'string') return col === '*' ? '*' : col.toLowerCase();
  const e = col.expr;
  return e.type === 'double_quote_string' ? String(e.value) : String(e.value).toLowerCase();
}

/** The qualifier of a column_ref (`t` in `t.a`), folded like a table name. */
export function columnQualifier(node: AstNode): string | null {
  const t = node.table as string | { value: unknown } | null | undefined;
  if (t === null || t === undefined) return null;
  return (typeof t === 'string' ? t : String(t.value)).toLowerCase();
}

/** Table names and aliases fold to lower case (node-sql-parser drops their quoting). */
export function tableName(name: unknown): string {
  return String(name).toLowerCase();
}

/** A structural key for an expression, for matching GROUP BY and repeated aggregates. */
export function exprKey(node: unknown, scope?: Scope): string {
  return JSON.stringify(node, (k, v: unknown) => {
    if (k === 'loc' || k === 'parentheses' || k === 'collate') return undefined;
    if (scope !== undefined && v !== null && typeof v === 'object' && (v as AstNode).type === 'column_ref' && columnName(v as AstNode) !== '*') {
      try {
        const s = scope.resolve(columnQualifier(v as AstNode), columnName(v as AstNode));
        return `#col:${s.depth}:${s.index}`;
      } catch {
        return v;
      }
    }
    return v;
  });
}
