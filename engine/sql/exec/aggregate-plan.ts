import type { CompiledExpr } from '../compiled-expr.js';
import type { Accumulator, AggregateDef } from '../aggregates.js';
import type { SqlValue } from '../sql-types.js';
import { compareForSort, DIRECT_KEY_TYPES, hashKey, type SortKey } from './ops.js';
import { PAUSE, type Exec, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';

const NULL_GROUP = Symbol('null group');

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
    const groups = new Map<unknown, Group>();
    const grouped = this.groupExprs.length > 0;
    const directKey = this.groupExprs.length === 1 && DIRECT_KEY_TYPES.has(this.groupExprs[0]!.type);
    let bytes = 0;
    let counter = 0;
    let nextCheck = 1024;
    // Accumulators with growing state (string_agg, array_agg, DISTINCT...) report their bytes.
    const growing = this.calls.some((c) => c.def.create().bytes !== undefined);
    const groupExprs = this.groupExprs;
    const calls = this.calls;
    // Scratch arrays reused row after row: group keys are copied only for a new group; argument
    // arrays are reused for calls whose accumulator keeps no reference to them (no DISTINCT, no
    // ORDER BY inside the call).
    const scratchKeys: SqlValue[] = new Array(groupExprs.length);
    const scratchArgs: (SqlValue[] | undefined)[] = calls.map((c) => (c.def.reusableArgs === true && c.order === undefined ? new Array<SqlValue>(c.args.length) : undefined));
    let last: Group | undefined;
    for (const row of this.input.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      ctx.row = row;
      for (let k = 0; k < groupExprs.length; k++) scratchKeys[k] = groupExprs[k]!.evaluate(ctx);
      let g: Group | undefined;
      if (!grouped) g = last;
      if (g === undefined) {
        // One key of a type whose JS value is its own equality key: the value itself.
        const id: unknown = !grouped ? '' : directKey ? (scratchKeys[0]!.value ?? NULL_GROUP) : hashKey(scratchKeys);
        g = groups.get(id);
        if (g === undefined) {
          g = { keys: scratchKeys.slice(), accumulators: calls.map((c) => c.def.create()), buffered: calls.map((c) => (c.order === undefined ? undefined : [])) };
          groups.set(id, g);
          bytes += 96 + (typeof id === 'string' ? id.length * 2 : 8) + calls.length * 64;
        }
        if (!grouped) last = g;
      }
      for (let i = 0; i < calls.length; i++) {
        const call = calls[i]!;
        if (call.filter !== undefined && call.filter.evaluate(ctx).value !== true) continue;
        let args = scratchArgs[i];
        if (args !== undefined) for (let a = 0; a < call.args.length; a++) args[a] = call.args[a]!.evaluate(ctx);
        else args = call.args.map((a) => a.evaluate(ctx));
        const buffer = g.buffered[i];
        if (buffer !== undefined) {
          buffer.push({ keys: call.order!.exprs.map((e) => e.evaluate(ctx)), args });
          bytes += 64 + args.length * 48;
        } else g.accumulators[i]!.add(args);
      }
      if (++counter >= nextCheck) {
        // Amortised: the groups' growing state is summed every max(1024, groups) rows.
        let acc = 0;
        if (growing) for (const gr of groups.values()) for (const a of gr.accumulators) acc += a.bytes ?? 0;
        x.checkWork(bytes + acc, 'GROUP BY');
        nextCheck = counter + Math.max(1024, groups.size);
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
