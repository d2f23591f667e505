// Runs tetradb's evaluator and renders the outcome as PostgreSQL's text output, so the
// differential test compares like with like.
import { isTetraError } from '../../engine/errors.js';
import { evaluateSelectExpressions as evaluate, toText, type NonNullSqlValue } from '../../engine/sql/index.js';

export type DiffOutcome = { kind: 'value'; type: string; text: string | null } | { kind: 'error'; sqlstate: string };

export function evaluateSelectExpressions(sql: string, statementTime: Date, params: unknown[] = []): DiffOutcome {
  try {
    const r = evaluate(sql, params, { statementTime });
    const type = r.columns[0]!.type;
    const v = r.values[0]!;
    if (v.value === null) return { kind: 'value', type, text: null };
    return { kind: 'value', type, text: v.type === 'boolean' ? (v.value ? 't' : 'f') : toText(v as NonNullSqlValue) };
  } catch (err) {
    if (isTetraError(err, 'SQL_ERROR')) return { kind: 'error', sqlstate: String(err.details?.sqlstate) };
    throw err;
  }
}
