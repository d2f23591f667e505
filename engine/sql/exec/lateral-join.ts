import type { CompiledExpr, EvalContext } from '../compiled-expr.js';
import type { SqlValue } from '../sql-types.js';
import { PAUSE, type Exec, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';

/**
 * A join whose right side reads the left row: a LATERAL subquery, or a function in FROM whose
 * arguments read the items before it (PostgreSQL's nested loop with a parameterised inner side).
 * The right plan was planned with the left side's columns as its enclosing level: it runs once per
 * left row, with that row on the enclosing-row stack while (and only while) it produces a row, so
 * expressions above this join, evaluated between its rows, see the stack as it was. `parameters`
 * (absent: the left row itself) makes the enclosing row from the left row (a lookup's key values).
 * INNER (CROSS) or LEFT; `residual` is the join condition, tested on each joined row.
 */
export class LateralJoinPlan implements Plan {
  readonly columns: PlanColumn[];

  constructor(
    readonly left: Plan,
    readonly right: Plan,
    readonly kind: 'inner' | 'left',
    readonly residual: CompiledExpr | undefined,
    private readonly label: string,
    private readonly parameters?: (left: Row, ctx: EvalContext) => Row | undefined,
  ) {
    this.columns = [...left.columns, ...right.columns];
  }

  /** The same join over another left input. */
  withLeft(left: Plan): LateralJoinPlan {
    return new LateralJoinPlan(left, this.right, this.kind, this.residual, this.label, this.parameters);
  }

  *rows(x: Exec): Generator<Step> {
    const jctx = x.ctx();
    const pctx = x.ctx();
    const nulls: SqlValue[] = this.right.columns.map((c) => ({ type: c.type, value: null }) as SqlValue);
    for (const l of this.left.rows(x)) {
      if (l === PAUSE) {
        yield PAUSE;
        continue;
      }
      let matched = false;
      // A lookup whose key has a NULL matches nothing.
      const enclosing = this.parameters === undefined ? l : this.parameters(l, pctx);
      if (enclosing !== undefined) {
        const inner = this.right.rows(x);
        try {
          for (;;) {
            x.outer.push(enclosing);
            let step: IteratorResult<Step>;
            try {
              step = inner.next();
            } finally {
              x.outer.pop();
            }
            if (step.done === true) break;
            if (step.value === PAUSE) {
              yield PAUSE;
              continue;
            }
            const joined = l.concat(step.value);
            if (this.residual !== undefined) {
              jctx.row = joined;
              if (this.residual.evaluate(jctx).value !== true) continue;
            }
            matched = true;
            yield joined;
          }
        } finally {
          inner.return(undefined);
        }
      }
      if (!matched && this.kind === 'left') yield l.concat(nulls);
      if (x.tick()) yield PAUSE;
    }
  }

  explain(): ExplainNode {
    return { node: `Nested Loop (${this.kind})`, detail: `${this.label}, once per outer row`, children: [this.left.explain(), this.right.explain()] };
  }
}
