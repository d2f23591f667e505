import type { CompiledExpr } from '../compiled-expr.js';
import type { Accumulator, AggregateDef } from '../aggregates.js';
import type { SqlValue } from '../sql-types.js';
import { hashKey } from './ops.js';
import { PAUSE, type Exec, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';

/** One aggregate call of a query: its definition, argument expressions and FILTER. */
export interface AggregateCall {
  def: AggregateDef;
  args: CompiledExpr[];
  filter: CompiledExpr | undefined;
}

interface Group {
  keys: SqlValue[];
  accumulators: Accumulator[];
}

/**
 * GROUP BY and aggregates: a hash aggregate. Output rows are the group key values followed by
 * the aggregate results; without GROUP BY there is exactly one output row, even over no input.
 * Groups come out in first-seen order (PostgreSQL gives no order without ORDER BY).
 */
export class AggregatePlan implements Plan {
  constructor(
    readonly input: Plan,
    private readonly groupExprs: CompiledExpr[],
    private readonly calls: AggregateCall[],
    readonly columns: PlanColumn[],
    private readonly text: string,
  ) {}

  *rows(x: Exec): Generator<Step> {
    const ctx = x.ctx();
    const groups = new Map<string, Group>();
    const grouped = this.groupExprs.length > 0;
    let bytes = 0;
    let counter = 0;
    for (const row of this.input.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      ctx.row = row;
      const keys = this.groupExprs.map((e) => e.evaluate(ctx));
      const id = grouped ? hashKey(keys) : '';
      let g = groups.get(id);
      if (g === undefined) {
        g = { keys, accumulators: this.calls.map((c) => c.def.create()) };
        groups.set(id, g);
        bytes += 96 + id.length * 2 + this.calls.length * 64;
      }
      for (let i = 0; i < this.calls.length; i++) {
        const call = this.calls[i]!;
        if (call.filter !== undefined && call.filter.evaluate(ctx).value !== true) continue;
        g.accumulators[i]!.add(call.args.map((a) => a.evaluate(ctx)));
      }
      if ((++counter & 1023) === 0) {
        let acc = 0;
        for (const gr of groups.values()) for (const a of gr.accumulators) acc += a.bytes ?? 0;
        x.checkWork(bytes + acc, 'GROUP BY');
      }
    }
    if (!grouped && groups.size === 0) groups.set('', { keys: [], accumulators: this.calls.map((c) => c.def.create()) });
    for (const g of groups.values()) {
      const out: Row = g.keys.slice();
      for (const a of g.accumulators) out.push(a.result());
      yield out;
    }
  }

  explain(): ExplainNode {
    return { node: this.groupExprs.length > 0 ? 'HashAggregate' : 'Aggregate', detail: this.text, children: [this.input.explain()] };
  }
}
