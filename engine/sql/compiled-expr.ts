import type { Collation } from './collation.js';
import type { SqlTypeName, SqlValue } from './sql-types.js';

/** What an expression is evaluated against: fixed per statement, so now() is stable. */
export interface EvalContext {
  /** Statement start time in microseconds since the epoch (now(), current_timestamp). */
  readonly statementTime: bigint;
  /** Bound parameters ($1 is params[0]) when the expression was compiled with parameter slots. */
  params?: readonly SqlValue[];
  /** The current row of the operator evaluating the expression (column references read it). */
  row?: SqlValue[];
  /** Rows of enclosing queries, innermost last (correlated subqueries read them). */
  outer?: SqlValue[][];
  /** Executor state for subqueries (opaque here). */
  exec?: unknown;
}

/** An expression compiled once (types resolved) and evaluated many times. */
export interface CompiledExpr {
  /** The PostgreSQL type of the result, known before evaluation (as PostgreSQL's parser). */
  readonly type: SqlTypeName;
  evaluate(ctx: EvalContext): SqlValue;
  /** Set on a bound parameter read at run time: its value is only known when evaluated. */
  readonly param?: number;
  /** Set on a reference to a column of the current row: its index there (ctx.row[slot]). */
  readonly slot?: number;
  /**
   * A text result's collation and its derivation (collation.ts); absent: "default", implicit.
   * Present (even undefined) when the node decided it; else compileExpression derives it from
   * the node's operands.
   */
  readonly collation?: Collation;
}

/** A compiled constant (literals, bound parameters). */
export function constant(value: SqlValue): CompiledExpr {
  return { type: value.type, evaluate: () => value };
}
