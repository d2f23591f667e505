import type { Collation } from '../collation.js';
import type { CompiledExpr } from '../compiled-expr.js';
import type { AstNode } from '../expression-eval.js';
import { sqlFail } from '../sql-types.js';
import type { PlanColumn } from './runtime.js';

/** A resolved column reference: how many query levels out, and the slot in that level's row. */
export interface ColumnSlot {
  depth: number;
  /** The column's slot among the level's FROM columns (a view may map it: see slotExpr). */
  index: number;
  column: PlanColumn;
  /** The level it was found in (a view when found from a nested subquery). */
  scope: Scope;
  /** Resolved through a probe (Scope.probe): planned only to see how far out it reads. */
  probed?: boolean;
}

/**
 * How the subqueries of one clause see their enclosing level. The row a subquery gets for that
 * level is the row of the clause's operator: in a grouped query's select list, HAVING and ORDER
 * BY that is the aggregated row (group keys, then aggregate results), not a row of the FROM
 * clause, so a column is read from its group key's slot, and a column that is not grouped is
 * PostgreSQL's 42803. An aggregate whose arguments read only this level's columns (`max(g.v)`
 * inside the subquery) is an aggregate of this level, as in PostgreSQL.
 */
export interface LevelView {
  /** The clause, for errors ("aggregate functions are not allowed in WHERE"). */
  readonly context: string;
  /**
   * The slot of FROM column `index` in the clause's row; absent: the same slot.
   * @throws SQL_ERROR 42803 for a column that is neither grouped nor functionally dependent
   */
  slot?(index: number, column: PlanColumn): number;
  /**
   * An aggregate call of this level written inside a subquery of the clause: its slot in the
   * clause's row, when aggregates are allowed there.
   * @throws SQL_ERROR 42803 where they are not (WHERE, GROUP BY, inside another aggregate)
   */
  aggregate?(node: AstNode): { slot: number; type: CompiledExpr['type'] };
}

/**
 * Names visible to expressions of one query level: the columns of its FROM clause, in row order.
 * `parent` is the enclosing query's scope (correlated references), absent at the top.
 */
export class Scope {
  readonly columns: PlanColumn[];
  readonly parent: Scope | undefined;
  /**
   * How many resolutions from a subquery planned under this scope read this level or one above
   * it (a subquery whose count did not change while it was planned is not correlated).
   */
  innerRefs = 0;
  /** Set on the scope a clause's subqueries are planned under (see LevelView). */
  readonly view: LevelView | undefined;
  /**
   * Set on a probe of this level (see probe): the fewest levels out from it that a reference
   * through it reached, or Infinity while none did.
   */
  readonly reach: { levels: number } | undefined;

  constructor(columns: PlanColumn[], parent: Scope | undefined, view?: LevelView, reach?: { levels: number }) {
    this.columns = columns;
    this.parent = parent;
    this.view = view;
    this.reach = reach;
  }

  /** The same level as the subqueries of one clause see it: same columns and parent. */
  withView(view: LevelView): Scope {
    return new Scope(this.columns, this.parent, view);
  }

  /**
   * The same level, recording in `reach` how far out the references of subqueries planned under
   * it go (0: to this level's own columns); references that stay inside them are not counted.
   */
  probe(): Scope {
    return new Scope(this.columns, this.parent, this.view, { levels: Infinity });
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
        passed.forEach((p, d) => {
          if (p.reach !== undefined) p.reach.levels = Math.min(p.reach.levels, depth - d);
        });
        if (scope.reach !== undefined) scope.reach.levels = 0;
        const probed = scope.reach !== undefined || passed.some((p) => p.reach !== undefined);
        // Every subquery between the reference and this level is correlated: the parent each
        // was planned under (passed[1..], and this level for the outermost one) counts it.
        if (depth > 0) {
          for (let i = 1; i < passed.length; i++) passed[i]!.innerRefs++;
          scope.innerRefs++;
        }
        return { depth, index: found, column: scope.columns[found]!, scope, ...(probed ? { probed } : {}) };
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
/**
 * An expression that reads a resolved column slot.
 * @throws SQL_ERROR 42803 for an enclosing grouped level's column that is not grouped
 */
export function slotExpr(slot: ColumnSlot): CompiledExpr {
  const { depth } = slot;
  const type = slot.column.type;
  const collation = readCollation(slot.column.collation);
  if (depth === 0) {
    const index = slot.index;
    return { type, slot: index, collation, evaluate: (ctx) => ctx.row![index]! };
  }
  // A probe's plan never runs: it need not (and, for a grouped level, may not) map the slot.
  const index = (slot.probed ? undefined : slot.scope.view?.slot?.(slot.index, slot.column)) ?? slot.index;
  return { type, collation, evaluate: (ctx) => ctx.outer![ctx.outer!.length - depth]![index]! };
}

/**
 * The collation of a column's value where a query reads it: implicit, whatever the expression
 * that made the column had (a COLLATE clause inside a subquery is explicit only there), and
 * indeterminate for a column made of a conflict (a UNION ALL of two collations).
 */
export function readCollation(c: Collation | undefined): Collation | undefined {
  if (c === undefined || c.strength === 'indeterminate') return c;
  if (c.strength === 'conflict') return { strength: 'indeterminate' };
  return c.name === 'default' ? undefined : { name: c.name, strength: 'implicit' };
}

/**
 * The slot a column of `scope` at `index` stands for when expressions are matched: the column a
 * USING join's merged column is the same as (PlanColumn.sameAs), else its own.
 */
export function sameSlot(scope: Scope, index: number, column: PlanColumn): number {
  let c = column;
  while (c.sameAs !== undefined) c = c.sameAs;
  const i = c === column ? -1 : scope.columns.indexOf(c);
  return i >= 0 ? i : index;
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
        return `#col:${s.depth}:${sameSlot(s.scope, s.index, s.column)}`;
      } catch {
        return v;
      }
    }
    return v;
  });
}
