import { rowTree } from '../catalog.js';
import type { CompiledExpr } from '../compiled-expr.js';
import type { Accumulator } from '../aggregates.js';
import { checkFloat } from '../operators.js';
import { decodeRowValues, TextInterner } from '../store/sql-codec.js';
import { Decimal, makeInt, type SqlTypeName, type SqlValue } from '../sql-types.js';
import { closeRuns, readsWholeTable, TableScanPlan, type TableReader } from './access.js';
import { bareFilter, type BareCond } from './bare-filter.js';
import type { AggregateCall, AggregatePlan } from './aggregate-plan.js';
import { LookupJoinPlan, lookupThreshold } from './lookup-join.js';
import { DIRECT_KEY_TYPES, FilterPlan, hashKey, JoinPlan } from './ops.js';
import { PAUSE, type Exec, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';

/*
 * GROUP BY over a base table, or over inner equi-joins of one large table with others: the
 * shape of most reporting queries ("revenue per status", "orders per region"). The general
 * operators hand each row up a chain of generators as an array of SqlValue objects, and a join
 * builds a new array per joined row; here the large table's rows are decoded straight from their
 * pages into bare values, only the columns the query reads, joined through hash tables and folded
 * into the groups in one loop. Same groups, same order, same results as the general plan
 * (AggregatePlan over JoinPlan / TableScanPlan), which runs instead whenever the shape is not
 * met, including at run time (a lookup join that would probe the key rather than hash).
 */

const NULL_GROUP = Symbol('null group');

/** What EXPLAIN adds to an aggregate run this way. */
export const FUSED = 'fused with its scan and joins (bare values)';

/** What EXPLAIN adds when the scan's conditions are tested on the bare values too. */
export const FUSED_FILTER = 'conditions tested on bare values';

/** One inner hash join of the chain: a build side, and the key columns on each side. */
interface Level {
  build: Plan;
  /** Slot of the key in the composite row so far (the probe table's columns, then earlier levels'). */
  leftSlot: number;
  /** Slot of the key in the build side's rows. */
  rightSlot: number;
  /** Where the build side's columns start in the composite row. */
  offset: number;
  /** Set when the join came from a lookup join: it hashes only when the probe table is large. */
  lookupTable?: string;
}

/** The aggregate over a value of one column: a fold of bare values. */
interface RawAcc {
  add(v: unknown): void;
  result(): SqlValue;
  readonly bytes?: number;
}

class CountStar implements RawAcc {
  n = 0;
  add(): void {
    this.n++;
  }
  result(): SqlValue {
    return { type: 'int8', value: BigInt(this.n) };
  }
}

class CountValues implements RawAcc {
  n = 0;
  add(v: unknown): void {
    if (v !== null) this.n++;
  }
  result(): SqlValue {
    return { type: 'int8', value: BigInt(this.n) };
  }
}

/** Exact while |sum| stays below 2^52 (int2/int4 inputs are below 2^31); then carried into a bigint. */
const SAFE_PART = 4_503_599_627_370_496;

/** sum(int2/int4) -> int8, avg(int2/int4) -> numeric: an exact integer sum without a bigint per row. */
class IntSum implements RawAcc {
  n = 0;
  part = 0;
  big = 0n;
  constructor(private readonly avg: boolean) {}
  add(v: unknown): void {
    if (v === null) return;
    this.n++;
    const s = this.part + (v as number);
    if (s > SAFE_PART || s < -SAFE_PART) {
      this.big += BigInt(s);
      this.part = 0;
    } else this.part = s;
  }
  result(): SqlValue {
    if (this.n === 0) return { type: this.avg ? 'numeric' : 'int8', value: null };
    const total = this.big + BigInt(this.part);
    // As IntSumAcc / NumericMomentsAcc('avg'): int8 range-checked, avg = Σx / N in numeric.
    if (!this.avg) return makeInt('int8', total);
    return { type: 'numeric', value: new Decimal(0n, 0).add(Decimal.fromBigInt(total)).div(Decimal.fromBigInt(BigInt(this.n))) };
  }
}

/** sum(float8), as FloatSumAcc: float8pl, an infinite result from finite operands is an overflow. */
class FloatSum implements RawAcc {
  sum: number | null = null;
  add(v: unknown): void {
    if (v === null) return;
    const x = v as number;
    if (this.sum === null) {
      this.sum = x;
      return;
    }
    this.sum = checkFloat(this.sum + x, Number.isFinite(this.sum) && Number.isFinite(x), false);
  }
  result(): SqlValue {
    return { type: 'float8', value: this.sum };
  }
}

/** min/max of integers and dates (numbers or bigints): plain comparison, the later of equals kept as MinMaxAcc does. */
class IntMinMax implements RawAcc {
  best: number | bigint | null = null;
  constructor(
    private readonly type: SqlTypeName,
    private readonly max: boolean,
  ) {}
  add(v: unknown): void {
    if (v === null) return;
    const x = v as number | bigint;
    if (this.best === null || (this.max ? x >= this.best : x <= this.best)) this.best = x;
  }
  result(): SqlValue {
    return { type: this.type, value: this.best } as SqlValue;
  }
}

/** Aggregates whose accumulators read argument values and keep no reference to them. */
const READS_ONLY = new Set(['count', 'sum', 'avg', 'stddev', 'stddev_samp', 'stddev_pop', 'variance', 'var_samp', 'var_pop', 'bool_and', 'bool_or', 'every']);

/** Any other aggregate: the general accumulator, fed a SqlValue (one reused when it keeps none). */
class Wrapped implements RawAcc {
  readonly #acc: Accumulator;
  readonly #scratch: SqlValue | undefined;
  readonly #type: SqlTypeName;
  readonly #args: SqlValue[] = [];
  constructor(acc: Accumulator, type: SqlTypeName, reuse: boolean) {
    this.#acc = acc;
    this.#type = type;
    this.#scratch = reuse ? ({ type, value: null } as SqlValue) : undefined;
  }
  get bytes(): number | undefined {
    return this.#acc.bytes;
  }
  add(v: unknown): void {
    let sv = this.#scratch;
    if (sv !== undefined) (sv as { value: unknown }).value = v;
    else sv = { type: this.#type, value: v } as SqlValue;
    this.#args[0] = sv;
    this.#acc.add(this.#args);
  }
  result(): SqlValue {
    return this.#acc.result();
  }
}

/** How one aggregate call is folded: its argument slot (-1: count(*)) and a factory. */
interface FastCall {
  slot: number;
  create: () => RawAcc;
}

function fastCall(call: AggregateCall): FastCall | undefined {
  if (call.filter !== undefined || call.order !== undefined || call.def.reusableArgs !== true) return undefined;
  const def = call.def;
  if (call.args.length === 0) return def.name === 'count' ? { slot: -1, create: () => new CountStar() } : undefined;
  if (call.args.length !== 1 || call.args[0]!.slot === undefined) return undefined;
  const arg = call.args[0]!;
  const slot = arg.slot!;
  const t = arg.type;
  if (def.argTypes[0] !== t) return undefined;
  const small = t === 'int2' || t === 'int4';
  switch (def.name) {
    case 'count':
      return { slot, create: () => new CountValues() };
    case 'sum':
      if (small) return { slot, create: () => new IntSum(false) };
      if (t === 'float8') return { slot, create: () => new FloatSum() };
      break;
    case 'avg':
      if (small) return { slot, create: () => new IntSum(true) };
      break;
    case 'min':
    case 'max':
      if (small || t === 'int8' || t === 'date' || t === 'timestamp' || t === 'timestamptz') return { slot, create: () => new IntMinMax(t, def.name === 'max') };
      break;
    default:
  }
  const reuse = READS_ONLY.has(def.name);
  return { slot, create: () => new Wrapped(def.create(), t, reuse) };
}

/** The probe table and the joins above it, or undefined when `plan` is not such a chain. */
function chainOf(plan: Plan): { probe: TableScanPlan; levels: Level[] } | undefined {
  if (plan instanceof TableScanPlan) return { probe: plan, levels: [] };
  let join: JoinPlan;
  let lookupTable: string | undefined;
  if (plan instanceof LookupJoinPlan) {
    if (plan.kind !== 'inner' || plan.residual !== undefined) return undefined;
    join = plan.hash;
    lookupTable = rowTree(plan.spec.reader.table);
  } else if (plan instanceof JoinPlan) join = plan;
  else return undefined;
  if (join.kind !== 'inner' || join.residual !== undefined || join.leftKeys.length !== 1) return undefined;
  const leftSlot = join.leftKeys[0]!.slot;
  const rightSlot = join.rightKeys[0]!.slot;
  if (leftSlot === undefined || rightSlot === undefined) return undefined;
  const inner = chainOf(join.left);
  if (inner === undefined) return undefined;
  // A lookup join decides on the size of its left side: known up front only right on the table.
  if (lookupTable !== undefined && inner.levels.length > 0) return undefined;
  inner.levels.push({ build: join.right, leftSlot, rightSlot, offset: join.left.columns.length, ...(lookupTable !== undefined ? { lookupTable } : {}) });
  return inner;
}

/**
 * The plan for an aggregate: a ScanAggregatePlan when its input and calls have the shape it
 * handles (group keys and arguments plain columns), else the general one.
 */
export function aggregatePlan(general: AggregatePlan, input: Plan, groupExprs: readonly CompiledExpr[], calls: readonly AggregateCall[]): Plan {
  if (groupExprs.some((g) => g.slot === undefined)) return general;
  // count(*) of the rows an exact key read keeps: its entries, counted without reading a row.
  if (groupExprs.length === 0 && calls.length === 1 && input instanceof TableScanPlan && input.exactKeys && fastCall(calls[0]!)?.slot === -1) return new KeyCountPlan(general, input);
  // WHERE conditions kept above a lone table's scan (those with subqueries): fused only when
  // they and the scan's own are all tested on bare values, in that order (as the two filters run).
  let late: BareCond[] | undefined;
  let below = input;
  if (input instanceof FilterPlan) {
    const scan = input.input;
    if (!(scan instanceof TableScanPlan) || !readsWholeTable(scan.path)) return general;
    late = input.bareFilter();
    if (late === undefined || (scan.filterExpr !== undefined && scan.bareFilter() === undefined)) return general;
    below = scan;
  }
  const chain = chainOf(below);
  if (chain === undefined) return general;
  // A lookup join over a filtered or ranged read of the table probes the key at run time: the
  // general plan runs then, so EXPLAIN does not claim otherwise.
  if (chain.levels.some((l) => l.lookupTable !== undefined) && !fullScanOf(chain.probe)) return general;
  const fast: FastCall[] = [];
  for (const c of calls) {
    const f = fastCall(c);
    if (f === undefined) return general;
    fast.push(f);
  }
  // Conditions on a whole-table read are tested on the decoded bare values when they all can be.
  const probe = chain.probe;
  const filter = probe.filterExpr !== undefined && readsWholeTable(probe.path) && chain.levels.every((l) => l.lookupTable === undefined) ? probe.bareFilter() : undefined;
  return new ScanAggregatePlan(general, probe, chain.levels, groupExprs.map((g) => g.slot!), groupExprs.map((g) => g.type), fast, filter, late);
}

/** What EXPLAIN adds to a count of an exact key read. */
export const KEY_COUNT = 'counted in the keys of its read, no row read';

/** count(*) over a lone table whose read's keys are exact (TableScanPlan.countRows): one row, the count. */
export class KeyCountPlan implements Plan {
  readonly columns: PlanColumn[];

  constructor(
    private readonly general: AggregatePlan,
    private readonly scan: TableScanPlan,
  ) {
    this.columns = general.columns;
  }

  *rows(x: Exec): Generator<Step> {
    const n = yield* this.scan.countRows(x);
    yield [{ type: 'int8', value: BigInt(n) }];
  }

  explain(): ExplainNode {
    const e = this.general.explain();
    return { ...e, detail: [e.detail, KEY_COUNT].filter((d) => d !== undefined && d !== '').join('; ') };
  }
}

export class ScanAggregatePlan implements Plan {
  readonly columns: PlanColumn[];
  /** Per composite slot: -1 for the probe table, else the level whose build row holds it. */
  readonly #levelOf: Int32Array;
  readonly #width: number;

  constructor(
    private readonly general: AggregatePlan,
    private readonly probe: TableScanPlan,
    private readonly levels: readonly Level[],
    private readonly groupSlots: readonly number[],
    private readonly groupTypes: readonly SqlTypeName[],
    private readonly calls: readonly FastCall[],
    /** The probe scan's conditions on bare values (its path then reads the whole table). */
    private readonly filter: readonly BareCond[] | undefined,
    /** Conditions of a filter above the scan, tested on the rows that pass the scan's. */
    private readonly late?: readonly BareCond[],
  ) {
    this.columns = general.columns;
    const probeWidth = probe.columns.length;
    let width = probeWidth;
    for (const l of levels) width = l.offset + l.build.columns.length;
    this.#width = width;
    this.#levelOf = new Int32Array(width).fill(-1);
    levels.forEach((l, k) => this.#levelOf.fill(k, l.offset, l.offset + l.build.columns.length));
  }

  rows(x: Exec): Generator<Step> {
    for (const l of this.levels) {
      if (l.lookupTable === undefined) continue;
      // The lookup join hashes once its left side passes the threshold; below it, it probes.
      const probeRows = x.reader.count(rowTree(this.probe.reader.table));
      if (!this.#fullScan() || probeRows <= lookupThreshold(x.reader.count(l.lookupTable))) return this.general.rows(x);
    }
    return this.#rows(x);
  }

  #fullScan(): boolean {
    return fullScanOf(this.probe);
  }

  *#rows(x: Exec): Generator<Step> {
    const levels = this.levels;
    const levelOf = this.#levelOf;
    const probeWidth = this.probe.columns.length;
    // The columns the query reads, by composite slot.
    const used = new Set<number>();
    for (const s of this.groupSlots) used.add(s);
    for (const c of this.calls) if (c.slot >= 0) used.add(c.slot);
    for (const l of levels) used.add(l.leftSlot);
    const groupSlots = this.groupSlots;
    const keyish = (s: number): boolean => groupSlots.includes(s) || levels.some((l) => l.leftSlot === s);

    // Build every hash table first, as JoinPlan does (its memory accounting too), of bare rows.
    const tables: HashTable[] = [];
    for (const l of levels) {
      const table = new Map<unknown, Bucket>();
      const width = l.build.columns.length;
      const types = l.build.columns.map((c) => c.type);
      const slots = [...used].filter((s) => s >= l.offset && s < l.offset + width).map((s) => s - l.offset);
      if (!slots.includes(l.rightSlot)) slots.push(l.rightSlot);
      const keyDirect = DIRECT_KEY_TYPES.has(types[l.rightSlot]!);
      let bytes = 0;
      for (const row of bareRows(l.build, x, slots, (s) => keyish(s + l.offset))) {
        if (row === PAUSE) {
          yield row;
          continue;
        }
        bytes += bareRowBytes(row, width);
        x.checkWork(bytes, 'the join');
        const v = row[l.rightSlot];
        if (v === null) continue;
        const key = keyDirect ? v : hashKey([{ type: types[l.rightSlot]!, value: v } as SqlValue]);
        const bucket = table.get(key);
        if (bucket === undefined) table.set(key, row);
        else if (bucket instanceof Dups) bucket.rows.push(row);
        else table.set(key, new Dups([bucket, row]));
      }
      const dense = denseOf(table);
      if (dense !== undefined) x.checkWork(bytes + dense.length * 8, 'the join');
      tables.push({ map: table, dense });
    }

    // Groups, as AggregatePlan keeps them.
    const groupTypes = this.groupTypes;
    const calls = this.calls;
    const grouped = groupSlots.length > 0;
    const directKey = groupSlots.length === 1 && DIRECT_KEY_TYPES.has(groupTypes[0]!);
    // Several keys whose values are their own equality keys: nested Maps, no key string per row.
    const nested = groupSlots.length > 1 && groupTypes.every((t) => DIRECT_KEY_TYPES.has(t));
    const lastKey = groupSlots.length - 1;
    const scratch: SqlValue[] = groupTypes.map((type) => ({ type, value: null }) as SqlValue);
    interface Group {
      keys: SqlValue[];
      accs: RawAcc[];
    }
    const groups = new Map<unknown, Group>();
    const nestedRoot = new Map<unknown, unknown>();
    /** Every group, in first-seen order (the output order, as AggregatePlan's). */
    const list: Group[] = [];
    let only: Group | undefined;
    let bytes = 0;
    let counter = 0;
    let nextCheck = 1024;
    // Accumulators with growing state (string_agg, array_agg...) report their bytes.
    const growing = calls.some((c) => c.create().bytes !== undefined);
    // The probe row's values, and the build row each join level matched, by column.
    const values: unknown[] = new Array<unknown>(probeWidth).fill(null);
    const matched: unknown[][] = new Array<unknown[]>(levels.length);
    // Where each value read comes from: the probe row (level -1) or a level's build row.
    const indexIn = (slot: number): number => (levelOf[slot]! < 0 ? slot : slot - levels[levelOf[slot]!]!.offset);
    const valueAt = (slot: number): unknown => {
      const k = levelOf[slot]!;
      return k < 0 ? values[slot] : matched[k]![indexIn(slot)];
    };
    const g0Level = grouped ? levelOf[groupSlots[0]!]! : -1;
    const g0Index = grouped ? indexIn(groupSlots[0]!) : 0;
    const callLevel = Int32Array.from(calls, (c) => (c.slot < 0 ? -2 : levelOf[c.slot]!));
    const callIndex = Int32Array.from(calls, (c) => (c.slot < 0 ? 0 : indexIn(c.slot)));
    const nCalls = calls.length;
    const newGroup = (id: unknown, into: Map<unknown, unknown> = groups): Group => {
      const g: Group = { keys: groupSlots.map((s, i) => ({ type: groupTypes[i]!, value: valueAt(s) }) as SqlValue), accs: calls.map((c) => c.create()) };
      into.set(id, g);
      list.push(g);
      bytes += 96 + (typeof id === 'string' ? id.length * 2 : 8 * groupSlots.length) + calls.length * 64;
      return g;
    };
    // Group keys all read from one join level's build row: the row remembers its group, in a
    // slot past its columns, so later matches of it skip the key lookup.
    const cacheLevel = grouped && groupSlots.every((s) => levelOf[s] === levelOf[groupSlots[0]!]) ? levelOf[groupSlots[0]!]! : -1;
    const cacheSlot = cacheLevel >= 0 ? levels[cacheLevel]!.build.columns.length : 0;
    // With that level's table dense, the groups by join key too: a match of a key with one build
    // row then finds its group without reading the row (a cache miss per probe row at 1M rows).
    const cacheDense = cacheLevel >= 0 ? tables[cacheLevel]!.dense : undefined;
    const groupByKey: (Group | undefined)[] = cacheDense !== undefined ? new Array<Group | undefined>(cacheDense.length).fill(undefined) : [];
    let curKey = -1;
    let curGroup: Group | undefined;
    const fold = (): void => {
      let g: Group | undefined;
      if (cacheLevel >= 0) g = curGroup ?? (matched[cacheLevel]![cacheSlot] as Group | undefined);
      if (g !== undefined) {
        // The matched build row's group, found before.
      } else if (!grouped) g = only ??= newGroup('');
      else {
        let id: unknown;
        if (directKey) {
          id = (g0Level < 0 ? values[g0Index] : matched[g0Level]![g0Index]) ?? NULL_GROUP;
          g = groups.get(id) ?? newGroup(id);
        } else if (nested) {
          let m = nestedRoot;
          for (let k = 0; k < lastKey; k++) {
            const v = valueAt(groupSlots[k]!) ?? NULL_GROUP;
            let next = m.get(v) as Map<unknown, unknown> | undefined;
            if (next === undefined) {
              next = new Map<unknown, unknown>();
              m.set(v, next);
              bytes += 64;
            }
            m = next;
          }
          id = valueAt(groupSlots[lastKey]!) ?? NULL_GROUP;
          g = (m.get(id) as Group | undefined) ?? newGroup(id, m);
        } else {
          for (let k = 0; k < groupSlots.length; k++) (scratch[k] as { value: unknown }).value = valueAt(groupSlots[k]!);
          id = hashKey(scratch);
          g = groups.get(id) ?? newGroup(id);
        }
        if (cacheLevel >= 0) {
          matched[cacheLevel]![cacheSlot] = g;
          if (curKey >= 0) groupByKey[curKey] = g;
        }
      }
      const accs = g.accs;
      for (let i = 0; i < nCalls; i++) {
        const k = callLevel[i]!;
        accs[i]!.add(k === -2 ? null : k < 0 ? values[callIndex[i]!] : matched[k]![callIndex[i]!]);
      }
      if (++counter >= nextCheck) {
        // Amortised: the groups' growing state is summed every max(1024, groups) rows.
        let acc = 0;
        if (growing) for (const gr of list) for (const a of gr.accs) acc += a.bytes ?? 0;
        x.checkWork(bytes + acc, 'GROUP BY');
        nextCheck = counter + Math.max(1024, list.length);
      }
    };
    // Each level's key on the left: its type, and whether its value is its own hash key.
    const leftTypes = levels.map((l) => {
      const k = levelOf[l.leftSlot]!;
      return k < 0 ? this.probe.columns[l.leftSlot]!.type : levels[k]!.build.columns[indexIn(l.leftSlot)]!.type;
    });
    const leftDirect = leftTypes.map((t) => DIRECT_KEY_TYPES.has(t));
    const leftLevel = Int32Array.from(levels, (l) => levelOf[l.leftSlot]!);
    const leftIndex = Int32Array.from(levels, (l) => indexIn(l.leftSlot));
    // One probe row (its values in `values`): through the joins, depth first, into the groups.
    const join = (k: number): void => {
      if (k === levels.length) {
        fold();
        return;
      }
      const from = leftLevel[k]!;
      const v = from < 0 ? values[leftIndex[k]!] : matched[from]![leftIndex[k]!];
      if (v === null) return;
      const t = tables[k]!;
      let bucket: Bucket | undefined;
      if (t.dense !== undefined) bucket = typeof v === 'number' ? t.dense[v] : undefined;
      else bucket = t.map.get(leftDirect[k] ? v : hashKey([{ type: leftTypes[k]!, value: v } as SqlValue]));
      if (bucket === undefined) return;
      if (k === cacheLevel) {
        const single = t.dense !== undefined && !(bucket instanceof Dups);
        curKey = single ? (v as number) : -1;
        curGroup = single ? groupByKey[v as number] : undefined;
      }
      if (bucket instanceof Dups) {
        const rows = bucket.rows;
        for (let b = 0; b < rows.length; b++) {
          matched[k] = rows[b]!;
          join(k + 1);
        }
      } else {
        matched[k] = bucket;
        join(k + 1);
      }
    };
    const onRow = levels.length === 0 ? fold : (): void => join(0);

    const probeSlots = [...used].filter((s) => s < probeWidth);
    const conds = [...(this.filter ?? []), ...(this.late ?? [])];
    for (const c of conds) if (!probeSlots.includes(c.slot)) probeSlots.push(c.slot);
    const first = this.filter !== undefined ? bareFilter(this.filter, x.ctx()) : undefined;
    const then = this.late !== undefined ? bareFilter(this.late, x.ctx()) : undefined;
    const passes = then === undefined ? first : first === undefined ? then : (values: readonly unknown[]): boolean => first(values) && then(values);
    if (this.#fullScan() || passes !== undefined) {
      // Straight from the pages: only the columns read, as bare values, into one reused array.
      const reader = this.probe.reader;
      const { physSlots, last, interners } = bareDecoder(reader, probeSlots, keyish);
      const runs = x.reader.valueRuns(rowTree(reader.table), { reverse: this.probe.path.reverse });
      try {
        for (let r = runs.next(); r.done !== true; r = runs.next()) {
          const run = r.value;
          for (let i = 0; i < run.count; i++) {
            decodeRowValues(run.bufs[i]!, run.starts[i]!, reader.types, reader.missing, physSlots, last, values, interners);
            if (passes === undefined || passes(values)) onRow();
            if (x.tick()) yield PAUSE;
          }
        }
      } finally {
        closeRuns(runs);
      }
    } else {
      for (const row of this.probe.rows(x)) {
        if (row === PAUSE) {
          yield row;
          continue;
        }
        for (const s of probeSlots) values[s] = row[s]!.value;
        onRow();
      }
    }

    if (!grouped && list.length === 0) newGroup('');
    // The output rows are built by a function of their own, for the reason closeRuns is one (code
    // after the scan loop is compiled with the loop before it has ever run): with this loop inline,
    // 3 of 7 benchmark processes still ran the group-by of 100k rows at 19-21 ms instead of 12.
    yield* groupRows(list);
  }

  explain(): ExplainNode {
    const e = this.general.explain();
    const fused = this.filter !== undefined || this.late !== undefined ? `${FUSED}, ${FUSED_FILTER}` : FUSED;
    return { ...e, detail: [e.detail, fused].filter((d) => d !== undefined && d !== '').join('; ') };
  }
}

/** The result rows of fused groups: each group's keys, then its accumulators' results. */
function groupRows(list: ReadonlyArray<{ keys: SqlValue[]; accs: RawAcc[] }>): Row[] {
  const out: Row[] = new Array<Row>(list.length);
  for (let i = 0; i < list.length; i++) {
    const g = list[i]!;
    const row: Row = g.keys.slice();
    for (const a of g.accs) row.push(a.result());
    out[i] = row;
  }
  return out;
}

/** Build rows sharing one join key; a key with one row holds the row itself. */
class Dups {
  constructor(readonly rows: unknown[][]) {}
}
type Bucket = unknown[] | Dups;

/** A join level's hash table; `dense` when its keys are small non-negative integers (an array indexed by key). */
interface HashTable {
  map: Map<unknown, Bucket>;
  dense: Bucket[] | undefined;
}

/** The table as an array indexed by key, when every key is a non-negative integer below 4x the count (plus 1024). */
function denseOf(map: Map<unknown, Bucket>): Bucket[] | undefined {
  const limit = map.size * 4 + 1024;
  let max = -1;
  for (const k of map.keys()) {
    if (typeof k !== 'number' || !Number.isInteger(k) || k < 0 || k >= limit) return undefined;
    if (k > max) max = k;
  }
  if (max < 0) return undefined;
  const dense = new Array<Bucket | undefined>(max + 1).fill(undefined) as Bucket[];
  for (const [k, b] of map) dense[k as number] = b;
  return dense;
}

/** Whether a scan reads its whole table without conditions. */
function fullScanOf(scan: TableScanPlan): boolean {
  return readsWholeTable(scan.path) && scan.filterExpr === undefined;
}

/**
 * How decodeRowValues reads `slots` (live columns) of a table's rows: the slot of each physical
 * column (-1: skipped), the last physical column read, and interners for the text slots `keyish`
 * marks (group and join keys).
 */
function bareDecoder(reader: TableReader, slots: readonly number[], keyish: (slot: number) => boolean): { physSlots: Int32Array; last: number; interners: (TextInterner | undefined)[] } {
  const live = reader.live ?? reader.types.map((_, i) => i);
  const physSlots = new Int32Array(reader.types.length).fill(-1);
  const interners: (TextInterner | undefined)[] = [];
  let last = -1;
  for (const s of slots) {
    const phys = live[s]!;
    physSlots[phys] = s;
    last = Math.max(last, phys);
    if (reader.types[phys] === 'text' && keyish(s)) interners[s] = new TextInterner();
  }
  return { physSlots, last, interners };
}

/**
 * The rows of a build side as arrays of bare values (only `slots` filled, the rest null): a
 * full scan of a table without conditions decodes them straight from its pages, anything else
 * runs its plan. `keyish` marks the slots whose text is worth interning.
 */
function* bareRows(plan: Plan, x: Exec, slots: readonly number[], keyish: (slot: number) => boolean): Generator<unknown[] | typeof PAUSE> {
  const width = plan.columns.length;
  if (plan instanceof TableScanPlan && fullScanOf(plan)) {
    const reader = plan.reader;
    const { physSlots, last, interners } = bareDecoder(reader, slots, keyish);
    const runs = x.reader.valueRuns(rowTree(reader.table), { reverse: plan.path.reverse });
    try {
      for (let r = runs.next(); r.done !== true; r = runs.next()) {
        const run = r.value;
        for (let i = 0; i < run.count; i++) {
          const row = new Array<unknown>(width).fill(null);
          decodeRowValues(run.bufs[i]!, run.starts[i]!, reader.types, reader.missing, physSlots, last, row, interners);
          yield row;
          if (x.tick()) yield PAUSE;
        }
      }
    } finally {
      closeRuns(runs);
    }
    return;
  }
  for (const row of plan.rows(x)) {
    if (row === PAUSE) {
      yield row;
      continue;
    }
    const bare = new Array<unknown>(width).fill(null);
    for (const s of slots) bare[s] = row[s]!.value;
    yield bare;
  }
}

/** rowBytes of the row these values came from (every column counted, as JoinPlan counts them). */
function bareRowBytes(values: readonly unknown[], width: number): number {
  let n = 16 + width * 40;
  for (const v of values) {
    if (typeof v === 'string') n += v.length * 2;
    else if (Buffer.isBuffer(v)) n += v.length;
    else if (v !== null && typeof v === 'object' && !(v instanceof Decimal) && !Array.isArray(v)) n += 64;
  }
  return n;
}
