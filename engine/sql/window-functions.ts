// Window functions over one partition that the executor has already sorted by the window's
// ORDER BY: ranking (row_number, rank, ...), navigation (lag/lead, first/last/nth_value) and
// every aggregate of aggregates.ts over a frame. Pure: rows come in, one value per row goes out.
import { resolveAggregate, type Accumulator, type AggregateDef } from './aggregates.js';
import { castValue, typeDisplay } from './sql-cast.js';
import { addInterval, MICROS_PER_DAY, negateInterval } from './functions/calendar.js';
import { intervalSpan } from './operators.js';
import { sqlFail, type Decimal, type Interval, type NonNullSqlValue, type SqlTypeName, type SqlValue, NO_FUNCTION_HINT } from './sql-types.js';
import { commonType } from './type-resolution.js';

export type FrameMode = 'rows' | 'range' | 'groups';

/**
 * A frame bound. Offsets are of type O: the planner's offset expressions, or (the default) their
 * values, computed once per execution as PostgreSQL does: int8 for ROWS and GROUPS, for RANGE the
 * type rangeOffsetType chose for the ORDER BY column.
 */
export type FrameBound<O = NonNullSqlValue> =
  | { readonly kind: 'unbounded_preceding' }
  | { readonly kind: 'preceding'; readonly offset: O }
  | { readonly kind: 'current_row' }
  | { readonly kind: 'following'; readonly offset: O }
  | { readonly kind: 'unbounded_following' };

export interface WindowFrame<O = NonNullSqlValue> {
  readonly mode: FrameMode;
  readonly start: FrameBound<O>;
  readonly end: FrameBound<O>;
  /** EXCLUDE CURRENT ROW / GROUP / TIES; absent for EXCLUDE NO OTHERS. */
  readonly exclude?: 'current_row' | 'group' | 'ties';
  /** RANGE with an offset: the single ORDER BY column's direction and where its NULLs sort. */
  readonly descending?: boolean;
  readonly nullsFirst?: boolean;
}

export interface WindowSpec {
  readonly name: string;
  readonly argTypes: readonly SqlTypeName[];
  readonly distinct?: boolean;
  readonly star?: boolean;
  readonly hasOrderBy: boolean;
}

/** One partition, sorted by the window's ORDER BY. */
export interface WindowPartition {
  readonly size: number;
  /** The function's evaluated arguments at a row. */
  args(row: number): readonly SqlValue[];
  /** Peer group number per row (rows equal under the window's ORDER BY share one); all 0 without ORDER BY. */
  readonly peers: Int32Array | number[];
  /** With FILTER: whether a row feeds the aggregate (absent: every row does). */
  readonly included?: (row: number) => boolean;
  /** The window's frame with its offsets computed; absent: the default, RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW. */
  readonly frame?: WindowFrame;
  /** RANGE with an offset: a row's value of the single ORDER BY column. */
  readonly orderValue?: (row: number) => SqlValue;
}

export interface WindowFunctionDef {
  readonly resultType: SqlTypeName;
  /** One result per row of the partition, in the partition's order. */
  evaluate(partition: WindowPartition): SqlValue[];
}

const DEFAULT_FRAME: WindowFrame = { mode: 'range', start: { kind: 'unbounded_preceding' }, end: { kind: 'current_row' } };

/** Window-only functions; anything else must be an aggregate. */
const WINDOW_ONLY = ['row_number', 'rank', 'dense_rank', 'percent_rank', 'cume_dist', 'ntile', 'lag', 'lead', 'first_value', 'last_value', 'nth_value'] as const;
type WindowOnlyName = (typeof WINDOW_ONLY)[number];

/** True when `name` is a function that exists only as a window function. */
export function isWindowOnlyName(name: string): boolean {
  return (WINDOW_ONLY as readonly string[]).includes(name.toLowerCase());
}

/**
 * Resolves a window function call. Its frame comes with each partition (WindowPartition.frame).
 * @throws SQL_ERROR 42883 unknown function or argument types, 0A000 DISTINCT
 */
export function resolveWindowFunction(spec: WindowSpec): WindowFunctionDef {
  const name = spec.name.toLowerCase();
  if (spec.distinct) sqlFail('0A000', 'DISTINCT is not implemented for window functions');
  if (isWindowOnlyName(name)) {
    if (spec.star) sqlFail('42809', `${name}(*) specified, but ${name} is not an aggregate function`);
    return windowOnly(name as WindowOnlyName, spec.argTypes);
  }
  const agg = resolveAggregate(name, spec.argTypes, { distinct: false, star: spec.star ?? false });
  return { resultType: agg.resultType, evaluate: (p) => aggregateOverFrames(agg, p) };
}

function noFunction(name: string, argTypes: readonly SqlTypeName[]): never {
  return sqlFail('42883', `function ${name}(${argTypes.map((t) => typeDisplay(t)).join(', ')}) does not exist`, undefined, NO_FUNCTION_HINT);
}

/** True for the types an int4 parameter accepts implicitly (unknown literals included). */
function int4Like(t: SqlTypeName | undefined): boolean {
  return t === 'int4' || t === 'int2' || t === 'unknown';
}

function windowOnly(name: WindowOnlyName, argTypes: readonly SqlTypeName[]): WindowFunctionDef {
  const n = argTypes.length;
  switch (name) {
    case 'row_number':
      if (n !== 0) return noFunction(name, argTypes);
      return { resultType: 'int8', evaluate: (p) => Array.from({ length: p.size }, (_, i) => int8(i + 1)) };
    case 'rank':
    case 'dense_rank':
    case 'percent_rank':
    case 'cume_dist':
      if (n !== 0) return noFunction(name, argTypes);
      return { resultType: name === 'percent_rank' || name === 'cume_dist' ? 'float8' : 'int8', evaluate: (p) => ranking(name, p) };
    case 'ntile':
      if (n !== 1 || !int4Like(argTypes[0])) return noFunction(name, argTypes);
      return { resultType: 'int4', evaluate: ntile };
    case 'lag':
    case 'lead': {
      if (n < 1 || n > 3 || (n >= 2 && !int4Like(argTypes[1]))) return noFunction(name, argTypes);
      let type: SqlTypeName;
      try {
        type = commonType(n === 3 ? [argTypes[0]!, argTypes[2]!] : [argTypes[0]!], name);
      } catch {
        return noFunction(name, argTypes);
      }
      return { resultType: type, evaluate: (p) => lagLead(p, name === 'lag' ? -1 : 1, type, n) };
    }
    case 'first_value':
    case 'last_value':
    case 'nth_value': {
      if (name === 'nth_value' ? n !== 2 || !int4Like(argTypes[1]) : n !== 1) return noFunction(name, argTypes);
      const type = argTypes[0] === 'unknown' ? 'text' : argTypes[0]!;
      return { resultType: type, evaluate: (p) => frameValue(name, p, type) };
    }
    default: {
      const never: never = name;
      return never;
    }
  }
}

function int8(v: number): SqlValue {
  return { type: 'int8', value: BigInt(v) };
}

/** Converts a value to the function's result type when it arrives as another (unknown literals, int vs numeric). */
function as(v: SqlValue, type: SqlTypeName): SqlValue {
  return v.type === type ? v : castValue(v, { type });
}

/** First and last row index of each row's peer group. */
function peerBounds(p: WindowPartition): { first: Int32Array; last: Int32Array } {
  const first = new Int32Array(p.size);
  const last = new Int32Array(p.size);
  for (let i = 0; i < p.size; i++) first[i] = i > 0 && p.peers[i] === p.peers[i - 1] ? first[i - 1]! : i;
  for (let i = p.size - 1; i >= 0; i--) last[i] = i < p.size - 1 && p.peers[i] === p.peers[i + 1] ? last[i + 1]! : i;
  return { first, last };
}

function ranking(name: 'rank' | 'dense_rank' | 'percent_rank' | 'cume_dist', p: WindowPartition): SqlValue[] {
  const { first, last } = peerBounds(p);
  const out: SqlValue[] = [];
  let dense = 0;
  for (let i = 0; i < p.size; i++) {
    if (first[i] === i) dense++;
    const rank = first[i]! + 1;
    if (name === 'rank') out.push(int8(rank));
    else if (name === 'dense_rank') out.push(int8(dense));
    else if (name === 'percent_rank') out.push({ type: 'float8', value: p.size > 1 ? (rank - 1) / (p.size - 1) : 0 });
    else out.push({ type: 'float8', value: (last[i]! + 1) / p.size });
  }
  return out;
}

/**
 * ntile(n): the bucket count is read at the partition's first row (as PostgreSQL, which
 * evaluates it once per partition); the first size % n buckets get one extra row.
 * @throws SQL_ERROR 22014 when the count is not positive
 */
function ntile(p: WindowPartition): SqlValue[] {
  if (p.size === 0) return [];
  const arg = p.args(0)[0]!;
  if (arg.value === null) return Array.from({ length: p.size }, () => ({ type: 'int4', value: null }));
  const buckets = Number(as(arg, 'int4').value);
  if (buckets <= 0) sqlFail('22014', 'argument of ntile must be greater than zero');
  const per = Math.floor(p.size / buckets);
  const extra = p.size % buckets;
  const out: SqlValue[] = [];
  let bucket = 1;
  let inBucket = 0;
  for (let i = 0; i < p.size; i++) {
    const cap = per + (bucket <= extra ? 1 : 0);
    if (inBucket >= cap) {
      bucket++;
      inBucket = 0;
    }
    inBucket++;
    out.push({ type: 'int4', value: bucket });
  }
  return out;
}

/** lag/lead: the value `offset` rows before/after (default 1; NULL offset gives NULL), else the default. */
function lagLead(p: WindowPartition, direction: -1 | 1, type: SqlTypeName, arity: number): SqlValue[] {
  const out: SqlValue[] = [];
  for (let i = 0; i < p.size; i++) {
    const args = p.args(i);
    const offsetArg = arity >= 2 ? args[1] : undefined;
    if (offsetArg !== undefined && offsetArg.value === null) {
      out.push({ type, value: null });
      continue;
    }
    const offset = offsetArg === undefined ? 1 : Number(as(offsetArg, 'int4').value);
    const target = i + direction * offset;
    if (target >= 0 && target < p.size) out.push(as(p.args(target)[0]!, type));
    else out.push(arity < 3 ? { type, value: null } : as(args[2]!, type));
  }
  return out;
}

function frameValue(name: 'first_value' | 'last_value' | 'nth_value', p: WindowPartition, type: SqlTypeName): SqlValue[] {
  const frames = frameBounds(p, p.frame ?? DEFAULT_FRAME);
  const out: SqlValue[] = [];
  for (let i = 0; i < p.size; i++) {
    let nth = 1;
    if (name === 'nth_value') {
      const nArg = p.args(i)[1]!;
      if (nArg.value === null) {
        out.push({ type, value: null });
        continue;
      }
      nth = Number(as(nArg, 'int4').value);
      if (nth <= 0) sqlFail('22016', 'argument of nth_value must be greater than zero');
    }
    const segments = frames.segments(i);
    let target = -1;
    if (name === 'last_value') {
      const last = segments[segments.length - 1];
      if (last !== undefined) target = last[1];
    } else {
      for (const [a, b] of segments) {
        if (nth <= b - a + 1) {
          target = a + nth - 1;
          break;
        }
        nth -= b - a + 1;
      }
    }
    out.push(target < 0 ? { type, value: null } : as(p.args(target)[0]!, type));
  }
  return out;
}

// ---- frames -----------------------------------------------------------------------------

/** Each row's frame: rows lo..hi (empty when lo > hi), and the non-empty row ranges left after EXCLUDE, in order. */
interface FrameRows {
  readonly lo: Int32Array;
  readonly hi: Int32Array;
  segments(row: number): [number, number][];
}

/**
 * Frame bounds per row, as PostgreSQL's update_frameheadpos / update_frametailpos place them:
 * ROWS counts rows, GROUPS counts peer groups, RANGE compares the ORDER BY value with the current
 * row's plus or minus the offset. Heads and tails only move forward as the current row does, so
 * each is one pass over the partition.
 */
function frameBounds(p: WindowPartition, frame: WindowFrame): FrameRows {
  const n = p.size;
  const { first, last } = peerBounds(p);
  const lo = new Int32Array(n);
  const hi = new Int32Array(n);
  // Peer group numbers and each group's first and last row, for GROUPS.
  let group: Int32Array | undefined;
  const groupFirst: number[] = [];
  const groupLast: number[] = [];
  if (frame.mode === 'groups') {
    group = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      if (first[i] === i) groupFirst.push(i);
      group[i] = groupFirst.length - 1;
      groupLast[group[i]!] = i;
    }
  }
  const groups = groupFirst.length;
  const offsetOf = (b: FrameBound): number => Number((b as { offset: NonNullSqlValue }).offset.value);
  const { start, end } = frame;
  const rangeStart = frame.mode === 'range' && (start.kind === 'preceding' || start.kind === 'following') ? rangeBound(p, frame, start, true) : undefined;
  const rangeEnd = frame.mode === 'range' && (end.kind === 'preceding' || end.kind === 'following') ? rangeBound(p, frame, end, false) : undefined;
  for (let i = 0; i < n; i++) {
    const g = group?.[i] ?? 0;
    switch (start.kind) {
      case 'unbounded_preceding':
        lo[i] = 0;
        break;
      case 'current_row':
        lo[i] = frame.mode === 'rows' ? i : first[i]!;
        break;
      case 'preceding':
      case 'following': {
        const off = start.kind === 'preceding' ? -offsetOf(start) : offsetOf(start);
        if (frame.mode === 'rows') lo[i] = Math.min(n, Math.max(0, i + off));
        else if (frame.mode === 'groups') lo[i] = g + off >= groups ? n : groupFirst[Math.max(0, g + off)]!;
        else lo[i] = rangeStart![i]!;
        break;
      }
      case 'unbounded_following':
        return sqlFail('42P20', 'frame start cannot be UNBOUNDED FOLLOWING');
      default: {
        const never: never = start;
        return never;
      }
    }
    switch (end.kind) {
      case 'unbounded_following':
        hi[i] = n - 1;
        break;
      case 'current_row':
        hi[i] = frame.mode === 'rows' ? i : last[i]!;
        break;
      case 'preceding':
      case 'following': {
        const off = end.kind === 'preceding' ? -offsetOf(end) : offsetOf(end);
        if (frame.mode === 'rows') hi[i] = Math.max(-1, Math.min(n - 1, i + off));
        else if (frame.mode === 'groups') hi[i] = g + off < 0 ? -1 : groupLast[Math.min(groups - 1, g + off)]!;
        else hi[i] = rangeEnd![i]!;
        break;
      }
      case 'unbounded_preceding':
        return sqlFail('42P20', 'frame end cannot be UNBOUNDED PRECEDING');
      default: {
        const never: never = end;
        return never;
      }
    }
  }
  const exclude = frame.exclude;
  const segments = (i: number): [number, number][] => {
    const l = lo[i]!;
    const h = hi[i]!;
    if (exclude === undefined) return l <= h ? [[l, h]] : [];
    // EXCLUDE takes the current row, or its peer group (TIES keeps the row itself), out of lo..hi.
    const exLo = exclude === 'current_row' ? i : first[i]!;
    const exHi = exclude === 'current_row' ? i : last[i]!;
    const out: [number, number][] = [[l, Math.min(h, exLo - 1)]];
    if (exclude === 'ties') out.push([Math.max(l, i), Math.min(h, i)]);
    out.push([Math.max(l, exHi + 1), h]);
    return out.filter(([a, b]) => a <= b);
  };
  return { lo, hi, segments };
}

/**
 * RANGE offset bounds (first row of each frame for a start, last for an end): a row is in when
 * PostgreSQL's in_range(value, current, offset, sub, less) holds. NULLs compare only by where
 * they sort: they are peers of each other, before every value with NULLS FIRST and after every
 * value with NULLS LAST, whatever the offset.
 */
function rangeBound(p: WindowPartition, frame: WindowFrame, bound: FrameBound & { offset: NonNullSqlValue }, isStart: boolean): Int32Array {
  const n = p.size;
  const value = p.orderValue!;
  const nullsFirst = frame.nullsFirst === true;
  // PostgreSQL's flags: subtract for PRECEDING, the head wants value >= sum and the tail
  // value <= sum; DESC flips both.
  let sub = bound.kind === 'preceding';
  let less = !isStart;
  if (frame.descending === true) {
    sub = !sub;
    less = !less;
  }
  let inRange: InRange | undefined;
  const test = (v: SqlValue, base: SqlValue): boolean => {
    inRange ??= inRangeFunction(bound.offset, v.type);
    return inRange(v as NonNullSqlValue, base as NonNullSqlValue, sub, less);
  };
  const out = new Int32Array(n);
  let pos = 0;
  for (let i = 0; i < n; i++) {
    const cur = value(i);
    const curNull = cur.value === null;
    if (isStart) {
      // The head: the first row in range.
      for (; pos < n; pos++) {
        const v = value(pos);
        const vNull = v.value === null;
        if (vNull || curNull) {
          if (nullsFirst ? !vNull || curNull : vNull || !curNull) break;
        } else if (test(v, cur)) break;
      }
      out[i] = pos;
    } else {
      // The tail: pos is the first row past the frame.
      for (; pos < n; pos++) {
        const v = value(pos);
        const vNull = v.value === null;
        if (vNull || curNull) {
          if (nullsFirst ? !vNull : !curNull) break;
        } else if (!test(v, cur)) break;
      }
      out[i] = pos - 1;
    }
  }
  return out;
}

type InRange = (value: NonNullSqlValue, base: NonNullSqlValue, sub: boolean, less: boolean) => boolean;

function badOffset(): never {
  return sqlFail('22013', 'invalid preceding or following size in window function');
}

/**
 * PostgreSQL's in_range support function for an ORDER BY value type: whether value <= base ± offset
 * (less) or value >= base ± offset. Exact for integers, numerics and dates; float8 as
 * in_range_float8_float8 (NaN after everything, infinite bases against infinite offsets).
 * @throws SQL_ERROR 22013 a negative (or NaN) offset, checked at the first comparison as PostgreSQL does
 */
function inRangeFunction(offset: NonNullSqlValue, type: SqlTypeName): InRange {
  const cmp = (x: bigint, s: bigint, less: boolean): boolean => (less ? x <= s : x >= s);
  switch (type) {
    case 'int2':
    case 'int4':
    case 'int8': {
      const o = BigInt(offset.value as number | bigint);
      if (o < 0n) badOffset();
      return (v, b, sub, less) => cmp(BigInt(v.value as number | bigint), BigInt(b.value as number | bigint) + (sub ? -o : o), less);
    }
    case 'numeric': {
      const o = as(offset, 'numeric').value as Decimal;
      if (o.sign() < 0) badOffset();
      return (v, b, sub, less) => {
        const c = (v.value as Decimal).cmp(sub ? (b.value as Decimal).sub(o) : (b.value as Decimal).add(o));
        return less ? c <= 0 : c >= 0;
      };
    }
    case 'float8': {
      const o = as(offset, 'float8').value as number;
      if (Number.isNaN(o) || o < 0) badOffset();
      return (v, b, sub, less) => {
        const val = v.value as number;
        const base = b.value as number;
        if (Number.isNaN(val)) return Number.isNaN(base) ? true : !less;
        if (Number.isNaN(base)) return less;
        if (!Number.isFinite(o) && !Number.isFinite(base) && (sub ? base > 0 : base < 0)) return true;
        const sum = sub ? base - o : base + o;
        return less ? val <= sum : val >= sum;
      };
    }
    case 'date':
    case 'timestamp':
    case 'timestamptz': {
      const iv = offset.value as Interval;
      if (intervalSpan(iv) < 0n) badOffset();
      const back = negateInterval(iv);
      // A date compares as the timestamp of its midnight (in_range_date_interval).
      const micros = (x: NonNullSqlValue): bigint => (x.type === 'date' ? BigInt(x.value) * MICROS_PER_DAY : (x.value as bigint));
      return (v, b, sub, less) => cmp(micros(v), addInterval(micros(b), sub ? back : iv), less);
    }
    case 'interval': {
      const iv = offset.value as Interval;
      if (intervalSpan(iv) < 0n) badOffset();
      return (v, b, sub, less) => {
        const base = b.value as Interval;
        const k = sub ? -1 : 1;
        const sum: Interval = { months: base.months + k * iv.months, days: base.days + k * iv.days, micros: base.micros + BigInt(k) * iv.micros };
        return cmp(intervalSpan(v.value as Interval), intervalSpan(sum), less);
      };
    }
    default:
      return sqlFail('0A000', `RANGE with offset PRECEDING/FOLLOWING is not supported for column type ${typeDisplay(type)}`);
  }
}

/**
 * An aggregate over each row's frame. Frames only move forward, so one accumulator follows them:
 * rows entering are added, and rows leaving are taken out through the aggregate's inverse
 * (count, sums and averages of exact types, bool_and/bool_or, and min/max through a monotonic
 * deque), so a sliding frame costs O(n). An aggregate without an inverse (float sums, string_agg,
 * array_agg, ...) folds the frame anew when its start moves, as PostgreSQL does, which keeps float
 * sums rounding as PostgreSQL's do. With EXCLUDE every row's frame is folded anew, as in
 * PostgreSQL. Rows sharing a frame (peers under the default frame) share one result.
 */
function aggregateOverFrames(agg: AggregateDef, p: WindowPartition): SqlValue[] {
  const frame = p.frame ?? DEFAULT_FRAME;
  const frames = frameBounds(p, frame);
  const included = p.included;
  const out: SqlValue[] = [];
  let empty: SqlValue | undefined;
  if (frame.exclude !== undefined) {
    let prevKey = '';
    let prev: SqlValue | undefined;
    for (let i = 0; i < p.size; i++) {
      const segments = frames.segments(i);
      const key = segments.join(';');
      if (prev === undefined || key !== prevKey) {
        const acc = agg.create();
        for (const [a, b] of segments) for (let r = a; r <= b; r++) if (included?.(r) !== false) acc.add(p.args(r));
        prev = acc.result();
        prevKey = key;
      }
      out.push(prev);
    }
    return out;
  }
  // A frame whose start never moves needs no inverse (and min/max no deque).
  const moving = frame.start.kind !== 'unbounded_preceding' && agg.createMoving !== undefined;
  const create = moving ? agg.createMoving! : agg.create;
  let acc: Accumulator | undefined;
  let accLo = 0;
  let accHi = -1;
  let prev: { lo: number; hi: number; value: SqlValue } | undefined;
  for (let i = 0; i < p.size; i++) {
    const l = frames.lo[i]!;
    const h = frames.hi[i]!;
    if (prev !== undefined && prev.lo === l && prev.hi === h) {
      out.push(prev.value);
      continue;
    }
    let value: SqlValue;
    if (l > h) value = empty ??= agg.create().result();
    else {
      if (acc === undefined || l > accHi) {
        acc = create();
        accLo = l;
        accHi = l - 1;
      } else if (l > accLo) {
        let restart = !moving;
        for (let r = accLo; r < l && !restart; r++) if (included?.(r) !== false && !acc.removeOldest!(p.args(r))) restart = true;
        if (restart) {
          acc = create();
          accHi = l - 1;
        }
        accLo = l;
      }
      for (let r = accHi + 1; r <= h; r++) if (included?.(r) !== false) acc.add(p.args(r));
      accHi = h;
      value = acc.result();
    }
    prev = { lo: l, hi: h, value };
    out.push(value);
  }
  return out;
}

/**
 * A planned frame with its offsets computed, once per execution (PostgreSQL's
 * calculate_frame_offsets, which runs even when there are no rows).
 * @throws SQL_ERROR 22004 a NULL offset, 22013 a negative ROWS or GROUPS offset (RANGE offsets are
 *   checked by the comparison, see inRangeFunction)
 */
export function computeFrame<O>(frame: WindowFrame<O>, valueOf: (offset: O) => SqlValue): WindowFrame {
  const bound = (b: FrameBound<O>, which: 'starting' | 'ending'): FrameBound => {
    if (b.kind !== 'preceding' && b.kind !== 'following') return b;
    const v = valueOf(b.offset);
    if (v.value === null) return sqlFail('22004', `frame ${which} offset must not be null`);
    if (frame.mode !== 'range' && BigInt(v.value as number | bigint) < 0n) sqlFail('22013', `frame ${which} offset must not be negative`);
    return { kind: b.kind, offset: v as NonNullSqlValue };
  };
  const start = bound(frame.start, 'starting');
  return { ...frame, start, end: bound(frame.end, 'ending') };
}

const INTEGER_TYPES: readonly SqlTypeName[] = ['int2', 'int4', 'int8'];

/**
 * The type a RANGE offset is converted to for an ORDER BY column type, as PostgreSQL picks an
 * in_range function: integers take integer offsets, numeric and float8 any number that converts
 * implicitly, dates, timestamps and intervals an interval; an untyped literal takes the column's
 * own offset type.
 * @throws SQL_ERROR 0A000 a column type without in_range, or an offset type it does not take
 */
export function rangeOffsetType(orderType: SqlTypeName, offsetType: SqlTypeName): SqlTypeName {
  let accepts: readonly SqlTypeName[];
  let target: SqlTypeName;
  if (INTEGER_TYPES.includes(orderType)) [accepts, target] = [INTEGER_TYPES, orderType];
  else if (orderType === 'numeric') [accepts, target] = [[...INTEGER_TYPES, 'numeric'], 'numeric'];
  else if (orderType === 'float8') [accepts, target] = [[...INTEGER_TYPES, 'numeric', 'float8'], 'float8'];
  else if (orderType === 'date' || orderType === 'timestamp' || orderType === 'timestamptz' || orderType === 'interval') [accepts, target] = [['interval'], 'interval'];
  else return sqlFail('0A000', `RANGE with offset PRECEDING/FOLLOWING is not supported for column type ${typeDisplay(orderType)}`);
  if (offsetType === 'unknown') return target;
  if (!accepts.includes(offsetType)) {
    sqlFail('0A000', `RANGE with offset PRECEDING/FOLLOWING is not supported for column type ${typeDisplay(orderType)} and offset type ${typeDisplay(offsetType)}`);
  }
  return INTEGER_TYPES.includes(orderType) ? offsetType : target;
}
