import { keyColumnType } from './index-keys.js';
import { castValue } from '../sql-cast.js';
import type { CompiledExpr } from '../compiled-expr.js';
import type { BareCond } from './bare-filter.js';
import { indexTree, liveColumns, rowTree, type IndexDef, type TableDef } from '../catalog.js';
import { decodeRow, encodeKeyTuple, valueOf } from '../store/sql-codec.js';
import type { SqlTypeName, SqlValue } from '../sql-types.js';
import { PAUSE, type Exec, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';

const INTS: ReadonlySet<SqlTypeName> = new Set(['int2', 'int4', 'int8']);

/** Whether a value of `exprType` can bound a key column of `colType` exactly. */
export function boundable(colType: SqlTypeName, exprType: SqlTypeName): boolean {
  return exprType === colType || exprType === 'unknown' || (INTS.has(colType) && INTS.has(exprType));
}

/** A bound on one key column: an expression, and how to bring its value to the column's type. */
export interface KeyBound {
  expr: CompiledExpr;
  type: SqlTypeName;
  inclusive: boolean;
}

/**
 * How a table is read: the row tree or one index, an equality prefix (several alternatives for
 * IN lists), an optional range on the next key column, and the direction.
 */
export interface AccessPath {
  index: IndexDef | undefined;
  /** Column ids of the key read (primary key or index columns). */
  keyColumns: number[];
  /** Alternatives of equality values for a prefix of the key columns (empty: no prefix). */
  eq: CompiledExpr[][];
  eqTypes: SqlTypeName[];
  lo?: KeyBound;
  hi?: KeyBound;
  reverse: boolean;
  /** The read comes out in the order the query asked for (its ORDER BY needs no sort). */
  ordered?: boolean;
  /** Text for EXPLAIN. */
  text: string;
}

/** The physical-to-live column mapping and decode helpers of a table. */
export class TableReader {
  readonly table: TableDef;
  readonly types: SqlTypeName[];
  readonly missing: SqlValue[];
  /** Physical slots of the live columns, or undefined when no column was dropped. */
  readonly live: number[] | undefined;

  constructor(table: TableDef) {
    this.table = table;
    this.types = table.columns.map((c) => c.type);
    this.missing = table.columns.map((c) => valueOf(c.missing ?? null, c.type));
    const live = table.columns.flatMap((c, i) => (c.dropped === true ? [] : [i]));
    this.live = live.length === table.columns.length ? undefined : live;
  }

  /** The physical row stored at `start` in `bytes`. */
  physical(bytes: Uint8Array, needed?: readonly boolean[], start = 0): SqlValue[] {
    return decodeRow(bytes, this.types, this.missing, needed, start);
  }

  toLive(physical: SqlValue[]): Row {
    return this.live === undefined ? physical : this.live.map((i) => physical[i]!);
  }
}

/** Brings a bound value to the key column's type (string literals and parameters are cast). */
function boundValue(v: SqlValue, colType: SqlTypeName): SqlValue {
  return v.type === 'unknown' && v.value !== null ? castValue(v, { type: colType }) : v;
}

/** Smallest byte string greater than every key starting with `prefix`. */
export function prefixEnd(prefix: Buffer): Buffer | undefined {
  const out = Buffer.from(prefix);
  for (let i = out.length - 1; i >= 0; i--) {
    if (out[i]! < 0xff) {
      out[i]! += 1;
      return out.subarray(0, i + 1);
    }
  }
  return undefined;
}

const NULL_TAG = Buffer.from([0xf0]);

interface Range {
  gte?: Buffer;
  gt?: Buffer;
  lt?: Buffer;
  lte?: Buffer;
}

/**
 * Equality values of an access path that stand for several: an array whose elements are the
 * alternatives (`key = ANY ($1)`), expanded when the path is read (accessRanges).
 */
export const manyValued = new WeakSet<CompiledExpr>();

/** The key ranges of an access path for this execution (bound values evaluated now). */
export function accessRanges(path: AccessPath, x: Exec, keyTypes: SqlTypeName[]): Range[] {
  const ctx = x.ctx();
  const ranges: Range[] = [];
  const alternatives = path.eq.length === 0 ? [[]] : path.eq;
  const seen = new Set<string>();
  // Each alternative's values; an array's elements (manyValued) make one alternative each.
  const tuples: SqlValue[][] = [];
  for (const alt of alternatives) {
    if (!alt.some((e) => manyValued.has(e))) {
      tuples.push(alt.map((e, i) => boundValue(e.evaluate(ctx), keyTypes[i]!)));
      continue;
    }
    let partial: SqlValue[][] = [[]];
    for (let i = 0; i < alt.length; i++) {
      const e = alt[i]!;
      const v = e.evaluate(ctx);
      const values = manyValued.has(e) ? ((v.value as SqlValue[] | null) ?? []) : [v];
      partial = partial.flatMap((p) => values.map((one) => [...p, boundValue(one, keyTypes[i]!)]));
    }
    tuples.push(...partial);
  }
  for (const values of tuples) {
    if (values.some((v) => v.value === null)) continue;
    const prefix = encodeKeyTuple(values);
    const id = prefix.toString('latin1');
    if (seen.has(id)) continue;
    seen.add(id);
    const r: Range = {};
    const col = values.length;
    if (path.lo !== undefined) {
      const v = boundValue(path.lo.expr.evaluate(ctx), keyTypes[col]!);
      if (v.value === null) continue;
      const k = Buffer.concat([prefix, encodeKeyTuple([v])]);
      if (path.lo.inclusive) r.gte = k;
      else {
        const end = prefixEnd(k);
        if (end === undefined) continue;
        r.gte = end;
      }
    } else if (prefix.length > 0) r.gte = prefix;
    if (path.hi !== undefined) {
      const v = boundValue(path.hi.expr.evaluate(ctx), keyTypes[col]!);
      if (v.value === null) continue;
      const k = Buffer.concat([prefix, encodeKeyTuple([v])]);
      if (path.hi.inclusive) {
        const end = prefixEnd(k);
        if (end !== undefined) r.lt = end;
      } else r.lt = k;
    } else if (path.lo !== undefined) {
      // A lower bound alone: stop before the NULLs, which sort last.
      r.lt = Buffer.concat([prefix, NULL_TAG]);
    } else if (prefix.length > 0) {
      const end = prefixEnd(prefix);
      if (end !== undefined) r.lt = end;
    }
    ranges.push(r);
  }
  // Alternatives in key order, so an ordered read stays ordered.
  ranges.sort((a, b) => Buffer.compare(a.gte ?? Buffer.alloc(0), b.gte ?? Buffer.alloc(0)));
  if (path.reverse) ranges.reverse();
  return ranges;
}

/** One stored row with its primary key bytes. */
export interface StoredRow {
  key: Buffer;
  physical: SqlValue[];
}

/** Reads a table along an access path: stored rows with their keys. */
/** The key of a stored row read without keys (by a scan that never writes). */
const NO_KEY = Buffer.alloc(0);

export function* readStored(table: TableReader, path: AccessPath, x: Exec, needed?: readonly boolean[], withKeys = true): Generator<StoredRow | typeof PAUSE> {
  const t = table.table;
  const keyTypes = path.keyColumns.map((id) => keyColumnType(t, id));
  const rows = rowTree(t);
  // A full-key equality is a point read.
  const pointRead = path.index === undefined && path.eq.length > 0 && path.eq[0]!.length === path.keyColumns.length && path.lo === undefined && path.hi === undefined;
  if (pointRead && path.eq.length === 1 && path.keyColumns.length > 0 && !path.eq[0]!.some((e) => manyValued.has(e))) {
    // One key (WHERE pk = $1): one get, without accessRanges' ranges, dedupe and sort.
    const alt = path.eq[0]!;
    const values = new Array<SqlValue>(alt.length);
    const ctx = x.ctx();
    for (let i = 0; i < alt.length; i++) {
      const v = boundValue(alt[i]!.evaluate(ctx), keyTypes[i]!);
      if (v.value === null) return;
      values[i] = v;
    }
    const key = encodeKeyTuple(values);
    const bytes = x.reader.get(rows, key);
    if (bytes !== undefined) yield { key, physical: table.physical(bytes, needed) };
    return;
  }
  const ranges = accessRanges(path, x, keyTypes);
  if (path.index === undefined) {
    for (const r of ranges) {
      if (pointRead && r.gte !== undefined) {
        const bytes = x.reader.get(rows, r.gte);
        if (bytes !== undefined) yield { key: r.gte, physical: table.physical(bytes, needed) };
        continue;
      }
      if (!withKeys) {
        for (const value of x.reader.values(rows, { ...r, reverse: path.reverse })) {
          yield { key: NO_KEY, physical: table.physical(value, needed) };
          if (x.tick()) yield PAUSE;
        }
        continue;
      }
      for (const [key, value] of x.reader.scan(rows, { ...r, reverse: path.reverse })) {
        yield { key, physical: table.physical(value, needed) };
        if (x.tick()) yield PAUSE;
      }
    }
    return;
  }
  const tree = indexTree(path.index);
  for (const r of ranges) {
    for (const [, pk] of x.reader.scan(tree, { ...r, reverse: path.reverse })) {
      const bytes = x.reader.get(rows, pk);
      if (bytes !== undefined) yield { key: pk, physical: table.physical(bytes, needed) };
      if (x.tick()) yield PAUSE;
    }
  }
}

/** Whether an access path reads its whole table (no index, no key bounds). */
export function readsWholeTable(path: AccessPath): boolean {
  return path.index === undefined && path.eq.length === 0 && path.lo === undefined && path.hi === undefined;
}

/** A base table read along an access path, with the pushed-down conditions applied. */
export class TableScanPlan implements Plan {
  readonly columns: PlanColumn[];
  readonly reader: TableReader;

  constructor(
    table: TableDef,
    qualifier: string,
    readonly path: AccessPath,
    private readonly filter: CompiledExpr | undefined,
    private readonly filterText: string,
    columns?: PlanColumn[],
    private readonly bareConds?: () => BareCond[] | undefined,
    /** The path's key ranges hold exactly the rows its conditions keep (select.ts exactKeys): countRows may count them. */
    readonly exactKeys = false,
  ) {
    this.reader = new TableReader(table);
    this.columns = columns ?? liveColumns(table).map((c) => ({ name: c.name, type: c.type, qualifier }));
  }

  /** The pushed-down conditions (all of them, re-checked on every row read). */
  get filterExpr(): CompiledExpr | undefined {
    return this.filter;
  }

  /**
   * The pushed-down conditions as tests of bare column values, when every one of them can be
   * (see bare-filter.ts); undefined without conditions. Planned on the first call, which must
   * come while the statement is planned (an operand's subquery registers as an init plan).
   */
  bareFilter(): BareCond[] | undefined {
    return this.bareConds?.();
  }

  /**
   * Physical columns some expression reads (known once the whole statement is planned: every
   * reference resolves through these column objects); the others are not decoded.
   */
  #needed(): boolean[] | undefined {
    const live = this.reader.live ?? this.columns.map((_, i) => i);
    const needed = this.reader.types.map(() => false);
    let all = true;
    this.columns.forEach((c, i) => {
      if (c.used === true) needed[live[i]!] = true;
      else all = false;
    });
    return all ? undefined : needed;
  }

  *rows(x: Exec): Generator<Step> {
    const ctx = x.ctx();
    const f = this.filter;
    const needed = this.#needed();
    const path = this.path;
    if (readsWholeTable(path)) {
      // A full scan of the row tree: values straight from the store, one generator less per row.
      // Rows decoded straight from their pages, a leaf at a time.
      const reader = this.reader;
      const runs = x.reader.valueRuns(rowTree(reader.table), { reverse: path.reverse });
      try {
        for (let r = runs.next(); r.done !== true; r = runs.next()) {
          const run = r.value;
          for (let i = 0; i < run.count; i++) {
            const row = reader.toLive(reader.physical(run.bufs[i]!, needed, run.starts[i]!));
            if (f !== undefined) {
              ctx.row = row;
              if (f.evaluate(ctx).value !== true) {
                if (x.tick()) yield PAUSE;
                continue;
              }
            }
            yield row;
            if (x.tick()) yield PAUSE;
          }
        }
      } finally {
        // An abandoned scan (LIMIT, an error) releases the snapshot its runs read.
        closeRuns(runs);
      }
      return;
    }
    for (const s of readStored(this.reader, this.path, x, needed, false)) {
      if (s === PAUSE) {
        yield s;
        continue;
      }
      const row = this.reader.toLive(s.physical);
      if (f !== undefined) {
        ctx.row = row;
        if (f.evaluate(ctx).value !== true) continue;
      }
      yield row;
    }
  }

  /**
   * The number of rows the read keeps, counted in its key ranges (the index's entries, or the row
   * tree's keys) without reading a row: for a path whose keys are exact (exactKeys). Entries come
   * through the statement's reader, so a transaction's own changes count.
   */
  *countRows(x: Exec): Generator<typeof PAUSE, number> {
    if (!this.exactKeys) throw new Error('countRows of a read whose keys are not exact');
    const t = this.reader.table;
    const path = this.path;
    const tree = path.index === undefined ? rowTree(t) : indexTree(path.index);
    let n = 0;
    for (const r of accessRanges(path, x, path.keyColumns.map((id) => keyColumnType(t, id)))) {
      for (const _ of x.reader.scan(tree, r)) {
        n++;
        if (x.tick()) yield PAUSE;
      }
    }
    return n;
  }

  explain(): ExplainNode {
    const t = this.reader.table.name;
    const node = this.path.index !== undefined ? `Index Scan using ${this.path.index.name} on ${t}` : this.path.eq.length > 0 || this.path.lo !== undefined || this.path.hi !== undefined ? `Primary Key Scan on ${t}` : `Seq Scan on ${t}`;
    const details = [this.path.text, this.filterText ? `Filter: ${this.filterText}` : ''].filter((s) => s !== '').join('; ');
    return { node: this.path.reverse ? `${node} Backward` : node, ...(details ? { detail: details } : {}) };
  }
}

/**
 * Rows of `table` whose key (primary key, or `index`) starts with `values` (already of the key
 * columns' types): the inner side of a lookup join.
 */
export function* lookupStored(table: TableReader, index: IndexDef | undefined, values: SqlValue[], x: Exec, fullKey: boolean): Generator<StoredRow> {
  for (const v of values) if (v.value === null) return;
  const prefix = encodeKeyTuple(values);
  const rows = rowTree(table.table);
  if (index === undefined) {
    if (fullKey) {
      const bytes = x.reader.get(rows, prefix);
      if (bytes !== undefined) yield { key: prefix, physical: table.physical(bytes) };
      return;
    }
    for (const [key, value] of x.reader.scan(rows, { gte: prefix, lt: prefixEnd(prefix) })) yield { key, physical: table.physical(value) };
    return;
  }
  for (const [, pk] of x.reader.scan(indexTree(index), { gte: prefix, lt: prefixEnd(prefix) })) {
    const bytes = x.reader.get(rows, pk);
    if (bytes !== undefined) yield { key: pk, physical: table.physical(bytes) };
  }
}

/**
 * Closes a scan's iterator: what the scans' `finally` blocks run. A function of its own because the
 * close is the first code after a scan loop, which V8 compiles on-stack while the loop runs,
 * before the close has ever run. As a property read there (`runs.return?.()`), it had no type
 * feedback and deoptimized the fused GROUP BY at the end of every query in a way that left the
 * next query's scan unoptimized: 19-20 ms instead of 11.5-12 for the group-by of 100k rows in
 * about half the processes. As a call it still deoptimizes there, but V8 keeps the compiled loop
 * (docs/benchmarks.md, SQL at 100k, 2026-11-26).
 */
export function closeRuns(runs: Iterator<unknown>): void {
  runs.return?.();
}
