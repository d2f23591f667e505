import type { CompiledExpr } from '../compiled-expr.js';
import { computeFrame, type WindowFrame, type WindowFunctionDef } from '../window-functions.js';
import type { SqlValue } from '../sql-types.js';
import { compareForSort, hashKey, type SortKey } from './ops.js';
import { PAUSE, rowBytes, type Exec, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';

/** One window function call: the function, its arguments, and its window. */
export interface WindowCall {
  def: WindowFunctionDef;
  args: CompiledExpr[];
  partition: CompiledExpr[];
  order: CompiledExpr[];
  orderKeys: Omit<SortKey, 'index'>[];
  /** `agg(...) FILTER (WHERE ...) OVER`: only rows where it is true feed the aggregate. */
  filter?: CompiledExpr;
  /** The window's frame, offsets as expressions; absent: the default frame. */
  frame?: WindowFrame<CompiledExpr>;
}

/**
 * Window functions: the input is materialised (bounded by the work memory), each call's rows
 * sorted by its PARTITION BY and ORDER BY, its values computed per partition, and appended to
 * the rows, which come out in input order.
 */
export class WindowPlan implements Plan {
  constructor(
    readonly input: Plan,
    private readonly calls: WindowCall[],
    readonly columns: PlanColumn[],
  ) {}

  *rows(x: Exec): Generator<Step> {
    const rows: Row[] = [];
    let bytes = 0;
    for (const row of this.input.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      rows.push(row);
      bytes += rowBytes(row);
      x.checkWork(bytes, 'window functions');
    }
    const ctx = x.ctx();
    // Frame offsets are computed once, before any row, as PostgreSQL does (so a NULL or negative
    // offset fails even over no rows).
    const frames = this.calls.map((c) => (c.frame === undefined ? undefined : computeFrame(c.frame, (e) => e.evaluate(ctx))));
    const results: SqlValue[][] = this.calls.map(() => new Array<SqlValue>(rows.length));
    for (let c = 0; c < this.calls.length; c++) {
      const call = this.calls[c]!;
      const part: SqlValue[][] = [];
      const ord: SqlValue[][] = [];
      const args: SqlValue[][] = [];
      const filtered = call.filter === undefined ? undefined : new Uint8Array(rows.length);
      for (let r = 0; r < rows.length; r++) {
        ctx.row = rows[r]!;
        part.push(call.partition.map((e) => e.evaluate(ctx)));
        ord.push(call.order.map((e) => e.evaluate(ctx)));
        args.push(call.args.map((e) => e.evaluate(ctx)));
        if (filtered !== undefined) filtered[r] = call.filter!.evaluate(ctx).value === true ? 1 : 0;
      }
      const partKey = part.map((p) => (p.length === 0 ? '' : hashKey(p)));
      const compareOrder = (a: number, b: number): number => {
        for (let k = 0; k < call.orderKeys.length; k++) {
          const key = call.orderKeys[k]!;
          const r = compareForSort(ord[a]![k]!, ord[b]![k]!, key.desc, key.nullsFirst);
          if (r !== 0) return r;
        }
        return 0;
      };
      // Group rows by partition (first-seen order), then sort each partition stably.
      const partitions = new Map<string, number[]>();
      for (let i = 0; i < rows.length; i++) {
        const list = partitions.get(partKey[i]!);
        if (list === undefined) partitions.set(partKey[i]!, [i]);
        else list.push(i);
      }
      for (const members of partitions.values()) {
        members.sort((a, b) => compareOrder(a, b) || a - b);
        const peers = new Int32Array(members.length);
        for (let i = 1; i < members.length; i++) peers[i] = peers[i - 1]! + (compareOrder(members[i - 1]!, members[i]!) === 0 ? 0 : 1);
        const included = filtered === undefined ? undefined : (i: number): boolean => filtered[members[i]!] === 1;
        const frame = frames[c];
        const values = call.def.evaluate({
          size: members.length,
          args: (i: number) => args[members[i]!]!,
          peers,
          ...(included !== undefined ? { included } : {}),
          ...(frame !== undefined ? { frame, orderValue: (i: number) => ord[members[i]!]![0]! } : {}),
        });
        for (let i = 0; i < members.length; i++) results[c]![members[i]!] = values[i]!;
      }
      if (x.tick()) yield PAUSE;
    }
    for (let i = 0; i < rows.length; i++) {
      const out = rows[i]!.slice();
      for (let c = 0; c < this.calls.length; c++) out.push(results[c]![i]!);
      yield out;
    }
  }

  explain(): ExplainNode {
    return { node: 'WindowAgg', children: [this.input.explain()] };
  }
}
