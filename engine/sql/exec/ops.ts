import type { CompiledExpr, EvalContext } from '../compiled-expr.js';
import type { BareCond } from './bare-filter.js';
import { compareValues } from '../operators.js';
import { encodeKeyPart, keyable } from '../store/sql-codec.js';
import { bpcharTrim, jsonbText, sqlFail, type NonNullSqlValue, type SqlValue } from '../sql-types.js';
import { PAUSE, rowBytes, type Exec, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';

/**
 * Equality key of a tuple for hashing (GROUP BY, DISTINCT, hash joins, set operations): equal
 * under SQL equality (NULLs grouped together) exactly when the keys are equal strings. Integers
 * of every width share a form, numerics drop trailing zeros, -0 is 0, NaN equals NaN.
 */
export function hashKey(values: readonly SqlValue[]): string {
  if (values.length === 1) return partKey(values[0]!);
  let out = '';
  for (const v of values) {
    const k = partKey(v);
    // Length-prefixed, so no separator can be forged by a value's contents.
    out += `${k.length}:${k}`;
  }
  return out;
}

function partKey(v: SqlValue): string {
  if (v.value === null) return 'N';
  switch (v.type) {
    case 'int2':
    case 'int4':
    case 'int8':
      return `i${v.value}`;
    case 'text':
    case 'unknown':
      return `s${v.value}`;
    case 'bit':
    case 'varbit':
      return `B${v.value}`;
    case 'bpchar':
      // Equal to the text it casts to: trailing spaces are insignificant.
      return `s${bpcharTrim(v.value)}`;
    case 'boolean':
      return v.value ? 'T' : 'F';
    case 'float8':
      return `f${Number.isNaN(v.value) ? 'NaN' : v.value === 0 ? 0 : v.value}`;
    case 'numeric': {
      const d = v.value;
      let u = d.unscaled;
      let scale = d.scale;
      while (scale > 0 && u % 10n === 0n) {
        u /= 10n;
        scale--;
      }
      return `n${u}e${scale}`;
    }
    case 'date':
      return `d${v.value}`;
    case 'timestamp':
    case 'timestamptz':
      return `t${v.value}`;
    case 'time':
      return `h${v.value}`;
    case 'timetz':
      return `z${v.value.time}:${v.value.zone}`;
    case 'jsonb':
      return `j${jsonbText(v.value.json)}`;
    case 'bytea':
      return `b${v.value.toString('latin1')}`;
    case 'uuid':
      return `u${v.value}`;
    case 'interval': {
      // Equal as PostgreSQL compares intervals: a month is 30 days, a day 24 hours.
      const iv = v.value;
      return `v${(BigInt(iv.months) * 30n + BigInt(iv.days)) * 86_400_000_000n + BigInt(iv.micros)}`;
    }
    default:
      return `${v.type}:${Buffer.from(hashKeyFallback(v)).toString('latin1')}`;
  }
}

function hashKeyFallback(v: SqlValue): number[] {
  const out: number[] = [];
  if (Array.isArray(v.value)) for (const e of v.value as SqlValue[]) for (const ch of Buffer.from(`${partKey(e).length}:${partKey(e)}`, 'latin1')) out.push(ch);
  else if (keyable(v.type)) encodeKeyPart(out, v);
  else for (const ch of Buffer.from(String(v.value), 'utf8')) out.push(ch);
  return out;
}

/** Types whose JS values compare as SQL equality (strings by code unit, integers, booleans, dates). */
export const DIRECT_KEY_TYPES: ReadonlySet<string> = new Set(['text', 'int2', 'int4', 'boolean', 'date']);

/** SQL truth of a predicate result: only TRUE passes. */
export function isTrue(v: SqlValue): boolean {
  return v.value === true;
}

/** Sort order of two non-null-or-null values of one column. */
export function compareForSort(a: SqlValue, b: SqlValue, desc: boolean, nullsFirst: boolean): number {
  const an = a.value === null;
  const bn = b.value === null;
  if (an || bn) {
    if (an && bn) return 0;
    return an === nullsFirst ? -1 : 1;
  }
  if (a.type === 'jsonb') sqlFail('42883', 'could not identify an ordering operator for type jsonb');
  const c = compareValues(a as NonNullSqlValue, b as NonNullSqlValue);
  return desc ? -c : c;
}

/** A plan over rows computed once at compile time from expressions (VALUES, SELECT without FROM). */
export class ValuesPlan implements Plan {
  constructor(
    readonly columns: PlanColumn[],
    private readonly exprRows: CompiledExpr[][],
  ) {}

  *rows(x: Exec): Generator<Step> {
    const ctx = x.ctx();
    for (const r of this.exprRows) yield r.map((e) => e.evaluate(ctx));
  }

  explain(): ExplainNode {
    return { node: 'Values', detail: `${this.exprRows.length} row(s)` };
  }
}

export class FilterPlan implements Plan {
  constructor(
    readonly input: Plan,
    private readonly predicate: CompiledExpr,
    private readonly text: string,
    private readonly bareConds?: () => BareCond[] | undefined,
  ) {}

  /**
   * The conditions as tests of bare values of the input's columns (bare-filter.ts), when the
   * input is a table's scan and every condition can be. Planned on the first call, while the
   * statement is planned.
   */
  bareFilter(): BareCond[] | undefined {
    return this.bareConds?.();
  }

  get columns(): PlanColumn[] {
    return this.input.columns;
  }

  *rows(x: Exec): Generator<Step> {
    const ctx = x.ctx();
    const p = this.predicate;
    for (const row of this.input.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      ctx.row = row;
      if (p.evaluate(ctx).value === true) yield row;
    }
  }

  explain(): ExplainNode {
    return { node: 'Filter', detail: this.text, children: [this.input.explain()] };
  }
}

export class ProjectPlan implements Plan {
  constructor(
    readonly input: Plan,
    private readonly exprs: CompiledExpr[],
    readonly columns: PlanColumn[],
  ) {}

  *rows(x: Exec): Generator<Step> {
    const ctx = x.ctx();
    const exprs = this.exprs;
    const n = exprs.length;
    for (const row of this.input.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      ctx.row = row;
      const out = new Array<SqlValue>(n);
      for (let i = 0; i < n; i++) out[i] = exprs[i]!.evaluate(ctx);
      yield out;
    }
  }

  explain(): ExplainNode {
    return this.input.explain();
  }
}

export interface SortKey {
  /** Slot of the key in the input row. */
  index: number;
  desc: boolean;
  nullsFirst: boolean;
}

/** ORDER BY: an in-memory sort bounded by the work memory, or a top-k heap under a LIMIT. */
export class SortPlan implements Plan {
  constructor(
    readonly input: Plan,
    private readonly keys: SortKey[],
    /** Rows needed (LIMIT + OFFSET) when known at plan time, else undefined. */
    private readonly limit: ((x: Exec) => number | undefined) | undefined,
    private readonly text: string,
  ) {}

  get columns(): PlanColumn[] {
    return this.input.columns;
  }

  compare = (a: Row, b: Row): number => {
    for (const k of this.keys) {
      const c = compareForSort(a[k.index]!, b[k.index]!, k.desc, k.nullsFirst);
      if (c !== 0) return c;
    }
    return 0;
  };

  *rows(x: Exec): Generator<Step> {
    const keep = this.limit?.(x);
    const rows: Row[] = [];
    let bytes = 0;
    let seq = 0;
    const order = new Map<Row, number>();
    for (const row of this.input.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      if (keep !== undefined) order.set(row, seq++);
      rows.push(row);
      bytes += rowBytes(row);
      if (keep !== undefined && rows.length >= Math.max(2 * keep, 1024)) {
        // Top-k: keep the best `keep` rows (stable: ties keep input order).
        rows.sort((a, b) => this.compare(a, b) || order.get(a)! - order.get(b)!);
        for (const dropped of rows.splice(keep)) order.delete(dropped);
        bytes = rows.reduce((n, r) => n + rowBytes(r), 0);
      }
      x.checkWork(bytes, 'ORDER BY');
    }
    if (keep !== undefined) rows.sort((a, b) => this.compare(a, b) || order.get(a)! - order.get(b)!);
    else rows.sort(this.compare);
    const n = keep === undefined ? rows.length : Math.min(keep, rows.length);
    for (let i = 0; i < n; i++) yield rows[i]!;
  }

  explain(): ExplainNode {
    return { node: 'Sort', detail: this.text, children: [this.input.explain()] };
  }
}

/** LIMIT / OFFSET: stops pulling from its input as soon as it has enough rows. */
export class LimitPlan implements Plan {
  constructor(
    readonly input: Plan,
    private readonly count: (x: Exec) => number | undefined,
    private readonly offset: (x: Exec) => number,
  ) {}

  get columns(): PlanColumn[] {
    return this.input.columns;
  }

  *rows(x: Exec): Generator<Step> {
    const limit = this.count(x);
    let skip = this.offset(x);
    let left = limit ?? Infinity;
    if (left <= 0) return;
    for (const row of this.input.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      if (skip > 0) {
        skip--;
        continue;
      }
      yield row;
      if (--left <= 0) return;
    }
  }

  explain(): ExplainNode {
    return { node: 'Limit', children: [this.input.explain()] };
  }
}

/** DISTINCT (all columns, `count` = number of leading columns compared) and DISTINCT ON. */
export class DistinctPlan implements Plan {
  constructor(
    readonly input: Plan,
    /** Slots compared for equality. */
    private readonly slots: number[],
  ) {}

  get columns(): PlanColumn[] {
    return this.input.columns;
  }

  *rows(x: Exec): Generator<Step> {
    const seen = new Set<string>();
    let bytes = 0;
    for (const row of this.input.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      const key = hashKey(this.slots.map((i) => row[i]!));
      if (seen.has(key)) continue;
      seen.add(key);
      bytes += key.length * 2 + 64;
      x.checkWork(bytes, 'DISTINCT');
      yield row;
    }
  }

  explain(): ExplainNode {
    return { node: 'Distinct', children: [this.input.explain()] };
  }
}

/** Drops trailing hidden columns (ORDER BY keys not in the select list). */
export class TrimPlan implements Plan {
  constructor(
    readonly input: Plan,
    readonly columns: PlanColumn[],
  ) {}

  *rows(x: Exec): Generator<Step> {
    const n = this.columns.length;
    for (const row of this.input.rows(x)) yield row === PAUSE ? row : row.length === n ? row : row.slice(0, n);
  }

  explain(): ExplainNode {
    return this.input.explain();
  }
}

export type JoinKind = 'inner' | 'left' | 'right' | 'full' | 'cross';

function nullRow(columns: PlanColumn[]): Row {
  return columns.map((c) => ({ type: c.type, value: null }) as SqlValue);
}

/**
 * Joins. With equi-join keys, a hash join (the right side is built into a hash table, bounded
 * by the work memory; NULL keys never match); otherwise a nested loop over the materialised right
 * side. `residual` is the rest of the ON condition, evaluated on the joined row.
 */
export class JoinPlan implements Plan {
  readonly columns: PlanColumn[];

  constructor(
    readonly left: Plan,
    readonly right: Plan,
    readonly kind: JoinKind,
    /** Key expressions over the left row / the right row (same types pairwise). */
    readonly leftKeys: CompiledExpr[],
    readonly rightKeys: CompiledExpr[],
    readonly residual: CompiledExpr | undefined,
    private readonly text: string,
  ) {
    this.columns = [...left.columns, ...right.columns];
  }

  /** The same join over another left input (a lookup join falling back to hashing). */
  withLeft(left: Plan): JoinPlan {
    return new JoinPlan(left, this.right, this.kind, this.leftKeys, this.rightKeys, this.residual, this.text);
  }

  *rows(x: Exec): Generator<Step> {
    const rctx = x.ctx();
    const lctx = x.ctx();
    const jctx = x.ctx();
    const hashed = this.leftKeys.length > 0;
    // Build: the right side, hashed by key or kept as a list.
    const table = new Map<unknown, Row[]>();
    const all: Row[] = [];
    let bytes = 0;
    for (const row of this.right.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      bytes += rowBytes(row);
      x.checkWork(bytes, 'the join');
      all.push(row);
      if (hashed) {
        rctx.row = row;
        const key = this.#key(this.rightKeys, rctx);
        if (key === undefined) continue;
        const bucket = table.get(key);
        if (bucket === undefined) table.set(key, [row]);
        else bucket.push(row);
      }
    }
    const matchedRight = this.kind === 'right' || this.kind === 'full' ? new Set<Row>() : undefined;
    const rightNulls = nullRow(this.right.columns);
    for (const left of this.left.rows(x)) {
      if (left === PAUSE) {
        yield left;
        continue;
      }
      let candidates: Row[];
      if (hashed) {
        lctx.row = left;
        const key = this.#key(this.leftKeys, lctx);
        candidates = key === undefined ? [] : (table.get(key) ?? []);
      } else candidates = all;
      let matched = false;
      for (const right of candidates) {
        const joined = left.concat(right);
        if (this.residual !== undefined) {
          jctx.row = joined;
          if (this.residual.evaluate(jctx).value !== true) continue;
        }
        matched = true;
        matchedRight?.add(right);
        yield joined;
        if (!hashed && x.tick()) yield PAUSE;
      }
      if (!matched && (this.kind === 'left' || this.kind === 'full')) yield left.concat(rightNulls);
    }
    if (matchedRight !== undefined) {
      const leftNulls = nullRow(this.left.columns);
      for (const right of all) if (!matchedRight.has(right)) yield leftNulls.concat(right);
    }
  }

  #key(exprs: CompiledExpr[], ctx: EvalContext): unknown {
    if (exprs.length === 1) {
      const v = exprs[0]!.evaluate(ctx);
      if (v.value === null) return undefined;
      // A type whose JS value is its own equality key is hashed as itself.
      return DIRECT_KEY_TYPES.has(v.type) ? v.value : hashKey([v]);
    }
    const values = exprs.map((e) => e.evaluate(ctx));
    if (values.some((v) => v.value === null)) return undefined;
    return hashKey(values);
  }


  explain(): ExplainNode {
    const node = this.leftKeys.length > 0 ? 'Hash Join' : 'Nested Loop';
    return { node: `${node} (${this.kind})`, detail: this.text, children: [this.left.explain(), this.right.explain()] };
  }
}

/** UNION / INTERSECT / EXCEPT [ALL] with PostgreSQL's duplicate rules. */
export class SetOpPlan implements Plan {
  constructor(
    readonly left: Plan,
    readonly right: Plan,
    private readonly op: 'union' | 'intersect' | 'except',
    private readonly all: boolean,
    readonly columns: PlanColumn[],
  ) {}

  *rows(x: Exec): Generator<Step> {
    const all = this.all;
    if (this.op === 'union') {
      const seen = all ? undefined : new Set<string>();
      for (const side of [this.left, this.right]) {
        for (const row of side.rows(x)) {
          if (row === PAUSE) {
            yield row;
            continue;
          }
          if (seen !== undefined) {
            const k = hashKey(row);
            if (seen.has(k)) continue;
            seen.add(k);
          }
          yield row;
        }
      }
      return;
    }
    // INTERSECT / EXCEPT: count the right side's rows, then stream the left side.
    const counts = new Map<string, number>();
    let bytes = 0;
    for (const row of this.right.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      const k = hashKey(row);
      counts.set(k, (counts.get(k) ?? 0) + 1);
      bytes += k.length * 2 + 48;
      x.checkWork(bytes, this.op.toUpperCase());
    }
    const emitted = new Set<string>();
    for (const row of this.left.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      const k = hashKey(row);
      const n = counts.get(k) ?? 0;
      if (this.op === 'intersect') {
        if (n === 0) continue;
        if (all) counts.set(k, n - 1);
        else if (emitted.has(k)) continue;
        emitted.add(k);
        yield row;
      } else {
        if (all) {
          if (n > 0) {
            counts.set(k, n - 1);
            continue;
          }
          yield row;
        } else {
          if (n > 0 || emitted.has(k)) continue;
          emitted.add(k);
          yield row;
        }
      }
    }
  }

  explain(): ExplainNode {
    return { node: `${this.op.toUpperCase()}${this.all ? ' ALL' : ''}`, children: [this.left.explain(), this.right.explain()] };
  }
}

/** Rows computed once per statement and replayed (CTEs referenced several times, uncorrelated sources). */
export class MaterializePlan implements Plan {
  constructor(readonly input: Plan) {}

  get columns(): PlanColumn[] {
    return this.input.columns;
  }

  *rows(x: Exec): Generator<Step> {
    let rows = x.memo.get(this) as Row[] | undefined;
    if (rows === undefined) {
      const collected: Row[] = [];
      let bytes = 0;
      for (const row of this.input.rows(x)) {
        if (row === PAUSE) {
          yield row;
          continue;
        }
        collected.push(row);
        bytes += rowBytes(row);
        x.checkWork(bytes, 'a WITH query');
      }
      rows = collected;
      x.memo.set(this, rows);
    }
    yield* rows;
  }

  explain(): ExplainNode {
    return this.input.explain();
  }
}

/** Renames a plan's columns (derived tables, CTEs): same rows, new names and qualifier. */
export class AliasPlan implements Plan {
  constructor(
    readonly input: Plan,
    readonly columns: PlanColumn[],
    private readonly label: string,
  ) {}

  rows(x: Exec): Generator<Step> {
    return this.input.rows(x);
  }

  explain(): ExplainNode {
    return { node: 'Subquery', detail: this.label, children: [this.input.explain()] };
  }
}
