import type { CompiledExpr } from '../compiled-expr.js';
import type { Accumulator, AggregateDef } from '../aggregates.js';
import type { SqlValue } from '../sql-types.js';
import { compareForSort, hashKey, type SortKey } from './ops.js';
import { PAUSE, type Exec, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';

/** One aggregate call of a query: its definition, argument expressions and FILTER. */
export interface AggregateCall {
  def: AggregateDef;
  args: CompiledExpr[];
  filter: CompiledExpr | undefined;
  /** ORDER BY inside the call (string_agg(x, ',' ORDER BY y)): inputs are sorted before feeding. */
  order?: { exprs: CompiledExpr[]; keys: Omit<SortKey, 'index'>[] };
}

interface Group {
  keys: SqlValue[];
  accumulators: Accumulator[];
  /** Per ordered call: the buffered (sort keys, args) of its inputs. */
  buffered: ({ keys: SqlValue[]; args: SqlValue[] }[] | undefined)[];
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
        g = { keys, accumulators: this.calls.map((c) => c.def.create()), buffered: this.calls.map((c) => (c.order === undefined ? undefined : [])) };
        groups.set(id, g);
        bytes += 96 + id.length * 2 + this.calls.length * 64;
      }
      for (let i = 0; i < this.calls.length; i++) {
        const call = this.calls[i]!;
        if (call.filter !== undefined && call.filter.evaluate(ctx).value !== true) continue;
        const args = call.args.map((a) => a.evaluate(ctx));
        const buffer = g.buffered[i];
        if (buffer !== undefined) {
          buffer.push({ keys: call.order!.exprs.map((e) => e.evaluate(ctx)), args });
          bytes += 64 + args.length * 48;
        } else g.accumulators[i]!.add(args);
      }
      if ((++counter & 1023) === 0) {
        let acc = 0;
        for (const gr of groups.values()) for (const a of gr.accumulators) acc += a.bytes ?? 0;
        x.checkWork(bytes + acc, 'GROUP BY');
      }
    }
    if (!grouped && groups.size === 0) groups.set('', { keys: [], accumulators: this.calls.map((c) => c.def.create()), buffered: this.calls.map(() => undefined) });
    for (const g of groups.values()) {
      g.buffered.forEach((buffer, i) => {
        if (buffer === undefined) return;
        const order = this.calls[i]!.order!.keys;
        buffer.sort((a, b) => {
          for (let k = 0; k < order.length; k++) {
            const c = compareForSort(a.keys[k]!, b.keys[k]!, order[k]!.desc, order[k]!.nullsFirst);
            if (c !== 0) return c;
          }
          return 0;
        });
        for (const b of buffer) g.accumulators[i]!.add(b.args);
      });
      const out: Row = g.keys.slice();
      for (const a of g.accumulators) out.push(a.result());
      yield out;
    }
  }

  explain(): ExplainNode {
    return { node: this.groupExprs.length > 0 ? 'HashAggregate' : 'Aggregate', detail: this.text, children: [this.input.explain()] };
  }
}
