import type { CompiledExpr } from '../compiled-expr.js';
import { rowTree, type IndexDef, type TableDef } from '../catalog.js';
import type { LateralJoinPlan } from './lateral-join.js';
import { castValue } from '../sql-cast.js';
import type { SqlTypeName, SqlValue } from '../sql-types.js';
import { lookupStored, TableReader } from './access.js';
import { hashKey, JoinPlan, type JoinKind } from './ops.js';
import { PAUSE, type Exec, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';

/** How the inner table is probed: its key (primary key or index) prefix, from left-row expressions. */
export interface LookupSpec {
  reader: TableReader;
  index: IndexDef | undefined;
  /** Expressions over the left row giving the key prefix values, with the key columns' types. */
  keys: CompiledExpr[];
  keyTypes: SqlTypeName[];
  /** The keys cover the whole primary key: one point read per left row. */
  fullKey: boolean;
  /** Conditions on the inner table alone (pushed down), over its row. */
  filter: CompiledExpr | undefined;
  /** Every equi-join pair (left row / inner row expressions): all are checked on each match, not only the key's. */
  leftKeys: CompiledExpr[];
  rightKeys: CompiledExpr[];
}

/** Left rows buffered before choosing: at most this share of the inner table's size... */
const LOOKUP_SHARE = 1 / 8;
/** ...and never fewer than this many. */
const LOOKUP_MIN = 64;

/** Left rows past which a lookup join over an inner table of `tableRows` rows hashes instead. */
export function lookupThreshold(tableRows: number): number {
  return Math.max(LOOKUP_MIN, Math.floor(tableRows * LOOKUP_SHARE));
}

/**
 * Reads up to `threshold` rows of `left` (passing its pauses up): all of them (`replay`
 * undefined) when there are no more, else a plan that gives them again followed by the rest.
 */
export function* leftSample(left: Plan, x: Exec, threshold: number): Generator<Step, { buffered: Row[]; replay: Plan | undefined }> {
  const buffered: Row[] = [];
  const rows = left.rows(x);
  for (;;) {
    const r = rows.next();
    if (r.done === true) return { buffered, replay: undefined };
    if (r.value === PAUSE) {
      yield PAUSE;
      continue;
    }
    buffered.push(r.value);
    if (buffered.length > threshold) break;
  }
  const replay: Plan = {
    columns: left.columns,
    rows: function* () {
      yield* buffered;
      yield* { [Symbol.iterator]: () => rows };
    },
    explain: () => left.explain(),
  };
  return { buffered, replay };
}

/** The rows in `rows` as a plan with `left`'s columns. */
export function rowsPlan(left: Plan, rows: Row[]): Plan {
  return { columns: left.columns, rows: function* () { yield* rows; }, explain: () => left.explain() };
}

/**
 * A join whose inner side is a view or a subquery in FROM that can read the join's key values as
 * conditions on its own tables (a parameterised plan, planned with the keys as an enclosing level:
 * PostgreSQL gets there by pulling the subquery up into the join). As LookupJoinPlan: a small left
 * side (at most 1/8 of the largest table the parameterised plan reads by key) runs that plan once
 * per left row; a larger one hash-joins the view's rows, planned whole.
 */
export class ParameterisedJoinPlan implements Plan {
  readonly columns: PlanColumn[];

  constructor(
    readonly left: Plan,
    readonly hash: JoinPlan,
    readonly lookup: LateralJoinPlan,
    /** The tables the parameterised plan reads by key. */
    readonly keyed: readonly TableDef[],
    private readonly label: string,
  ) {
    this.columns = hash.columns;
  }

  *rows(x: Exec): Generator<Step> {
    const largest = Math.max(...this.keyed.map((t) => x.reader.count(rowTree(t))));
    const { buffered, replay } = yield* leftSample(this.left, x, lookupThreshold(largest));
    if (replay !== undefined) yield* this.hash.withLeft(replay).rows(x);
    else yield* this.lookup.withLeft(rowsPlan(this.left, buffered)).rows(x);
  }

  explain(): ExplainNode {
    return { node: `Lookup Join (${this.lookup.kind})`, detail: `${this.label} by its parameterised plan, or Hash Join when the outer side is large`, children: [this.left.explain(), this.lookup.right.explain()] };
  }
}

/**
 * An inner or left join whose inner side is a base table with a key on the join columns. It
 * reads the left side first: when the left side is small next to the table (at most 1/8 of its
 * rows), each left row probes the table's key (an index nested loop); otherwise it falls back to
 * the hash join, replaying the left rows already read. So a selective join reads a few keys and
 * a large one never does a lookup per row.
 */
export class LookupJoinPlan implements Plan {
  readonly columns: PlanColumn[];

  constructor(
    readonly left: Plan,
    readonly hash: JoinPlan,
    readonly spec: LookupSpec,
    readonly kind: JoinKind,
    readonly residual: CompiledExpr | undefined,
    private readonly label: string,
  ) {
    this.columns = hash.columns;
  }

  *rows(x: Exec): Generator<Step> {
    const { buffered, replay } = yield* leftSample(this.left, x, lookupThreshold(x.reader.count(rowTree(this.spec.reader.table))));
    if (replay !== undefined) {
      // Too many left rows: hash join over the buffered rows followed by the rest.
      yield* this.hash.withLeft(replay).rows(x);
      return;
    }
    const ctx = x.ctx();
    const ictx = x.ctx();
    const jctx = x.ctx();
    const nulls = this.spec.reader.table.columns.filter((c) => c.dropped !== true).map((c) => ({ type: c.type, value: null }) as SqlValue);
    for (const l of buffered) {
      ctx.row = l;
      const values = this.spec.keys.map((k, i) => {
        const v = k.evaluate(ctx);
        return v.value === null || v.type === this.spec.keyTypes[i] ? v : castValue(v, { type: this.spec.keyTypes[i]! });
      });
      let matched = false;
      for (const s of lookupStored(this.spec.reader, this.spec.index, values, x, this.spec.fullKey)) {
        const right = this.spec.reader.toLive(s.physical);
        if (this.spec.filter !== undefined) {
          ictx.row = right;
          if (this.spec.filter.evaluate(ictx).value !== true) continue;
        }
        if (this.spec.leftKeys.length > this.spec.keys.length) {
          ictx.row = right;
          let equal = true;
          for (let k = 0; k < this.spec.leftKeys.length && equal; k++) {
            const a = this.spec.leftKeys[k]!.evaluate(ctx);
            const b = this.spec.rightKeys[k]!.evaluate(ictx);
            equal = a.value !== null && b.value !== null && hashKey([a]) === hashKey([b]);
          }
          if (!equal) continue;
        }
        const joined = l.concat(right);
        if (this.residual !== undefined) {
          jctx.row = joined;
          if (this.residual.evaluate(jctx).value !== true) continue;
        }
        matched = true;
        yield joined;
      }
      if (!matched && this.kind === 'left') yield l.concat(nulls);
      if (x.tick()) yield PAUSE;
    }
  }

  explain(): ExplainNode {
    const via = this.spec.index !== undefined ? `index ${this.spec.index.name}` : 'primary key';
    return { node: `Lookup Join (${this.kind})`, detail: `${this.label} by ${via}, or Hash Join when the outer side is large`, children: [this.left.explain()] };
  }
}
