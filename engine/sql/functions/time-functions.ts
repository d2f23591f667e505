import type { CompiledExpr } from '../compiled-expr.js';
import { noFunction, type FunctionDef } from './function-def.js';

const MICROS_PER_DAY = 86_400_000_000n;

/** A function of the statement time only (stable within a statement, as PostgreSQL). */
const statementClock = (type: 'timestamptz' | 'timestamp' | 'date'): FunctionDef => ({
  compile(name, args): CompiledExpr {
    if (args.length !== 0) return noFunction(name, args);
    return {
      type,
      evaluate: (ctx) =>
        type === 'date'
          ? { type, value: Number(ctx.statementTime / MICROS_PER_DAY) }
          : { type, value: ctx.statementTime },
    };
  },
});

export const TIME_FUNCTIONS: Record<string, FunctionDef> = {
  now: statementClock('timestamptz'),
  current_timestamp: statementClock('timestamptz'),
  transaction_timestamp: statementClock('timestamptz'),
  localtimestamp: statementClock('timestamp'),
  current_date: statementClock('date'),
};
