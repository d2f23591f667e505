import type { SqlTypeName, SqlValue } from './sql-types.js';

/** What an expression is evaluated against: fixed per statement, so now() is stable. */
export interface EvalContext {
  /** Statement start time in microseconds since the epoch (now(), current_timestamp). */
  readonly statementTime: bigint;
}

/** An expression compiled once (types resolved) and evaluated many times. */
export interface CompiledExpr {
  /** The PostgreSQL type of the result, known before evaluation (as PostgreSQL's parser). */
  readonly type: SqlTypeName;
  evaluate(ctx: EvalContext): SqlValue;
}

/** A compiled constant (literals, bound parameters). */
export function constant(value: SqlValue): CompiledExpr {
  return { type: value.type, evaluate: () => value };
}
