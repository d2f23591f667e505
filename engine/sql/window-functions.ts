// Window functions over one partition that the executor has already sorted by the window's
// ORDER BY: ranking (row_number, rank, ...), navigation (lag/lead, first/last/nth_value) and
// every aggregate of aggregates.ts over a frame. Pure: rows come in, one value per row goes out.
import { resolveAggregate, type Accumulator, type AggregateDef } from './aggregates.js';
import { castValue, TYPE_DISPLAY } from './sql-cast.js';
import { sqlFail, type SqlTypeName, type SqlValue } from './sql-types.js';
import { commonType } from './type-resolution.js';

export type FrameBound =
  | { readonly kind: 'unbounded_preceding' }
  | { readonly kind: 'preceding'; readonly offset: number }
  | { readonly kind: 'current_row' }
  | { readonly kind: 'following'; readonly offset: number }
  | { readonly kind: 'unbounded_following' };

export interface WindowFrame {
  readonly mode: 'rows' | 'range';
  readonly start: FrameBound;
  readonly end: FrameBound;
}

export interface WindowSpec {
  readonly name: string;
  readonly argTypes: readonly SqlTypeName[];
  readonly distinct?: boolean;
  readonly star?: boolean;
  readonly hasOrderBy: boolean;
  /** Absent: PostgreSQL's default, RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW. */
  readonly frame?: WindowFrame;
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
 * Resolves a window function call.
 * @throws SQL_ERROR 42883 unknown function or argument types, 0A000 DISTINCT or unsupported
 *   frames, 42P20 / 22013 invalid frames
 */
export function resolveWindowFunction(spec: WindowSpec): WindowFunctionDef {
  const name = spec.name.toLowerCase();
  if (spec.distinct) sqlFail('0A000', 'DISTINCT is not implemented for window functions');
  const frame = spec.frame ?? DEFAULT_FRAME;
  validateFrame(frame);
  if (isWindowOnlyName(name)) {
    if (spec.star) sqlFail('42809', `${name}(*) specified, but ${name} is not an aggregate function`);
    return windowOnly(name as WindowOnlyName, spec.argTypes, frame);
  }
  const agg = resolveAggregate(name, spec.argTypes, { distinct: false, star: spec.star ?? false });
  return { resultType: agg.resultType, evaluate: (p) => aggregateOverFrames(agg, p, frame) };
}

function noFunction(name: string, argTypes: readonly SqlTypeName[]): never {
  return sqlFail('42883', `function ${name}(${argTypes.map((t) => TYPE_DISPLAY[t]).join(', ')}) does not exist`);
}

/** True for the types an int4 parameter accepts implicitly (unknown literals included). */
function int4Like(t: SqlTypeName | undefined): boolean {
  return t === 'int4' || t === 'int2' || t === 'unknown';
}

function windowOnly(name: WindowOnlyName, argTypes: readonly SqlTypeName[], frame: WindowFrame): WindowFunctionDef {
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
      return { resultType: type, evaluate: (p) => frameValue(name, p, frame, type) };
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

function frameValue(name: 'first_value' | 'last_value' | 'nth_value', p: WindowPartition, frame: WindowFrame, type: SqlTypeName): SqlValue[] {
  const bounds = frameBounds(p, frame);
  const out: SqlValue[] = [];
  for (let i = 0; i < p.size; i++) {
    const lo = bounds.lo[i]!;
    const hi = bounds.hi[i]!;
    let target: number;
    if (name === 'first_value') target = lo;
    else if (name === 'last_value') target = hi;
    else {
      const nArg = p.args(i)[1]!;
      if (nArg.value === null) {
        out.push({ type, value: null });
        continue;
      }
      const nth = Number(as(nArg, 'int4').value);
      if (nth <= 0) sqlFail('22016', 'argument of nth_value must be greater than zero');
      target = lo + nth - 1;
    }
    out.push(lo <= hi && target <= hi ? as(p.args(target)[0]!, type) : { type, value: null });
  }
  return out;
}

/** Inclusive frame bounds per row; lo > hi is an empty frame. */
function frameBounds(p: WindowPartition, frame: WindowFrame): { lo: Int32Array; hi: Int32Array } {
  const peers = frame.mode === 'range' ? peerBounds(p) : undefined;
  const lo = new Int32Array(p.size);
  const hi = new Int32Array(p.size);
  const n = p.size;
  for (let i = 0; i < n; i++) {
    lo[i] = Math.max(0, boundIndex(frame.start, i, n, peers?.first[i] ?? i));
    hi[i] = Math.min(n - 1, boundIndex(frame.end, i, n, peers?.last[i] ?? i));
  }
  return { lo, hi };
}

/** The row a bound points at for row i (before clamping); `current` is i, or its first/last peer in RANGE mode. */
function boundIndex(b: FrameBound, i: number, n: number, current: number): number {
  switch (b.kind) {
    case 'unbounded_preceding':
      return 0;
    case 'preceding':
      return i - b.offset;
    case 'current_row':
      return current;
    case 'following':
      return i + b.offset;
    case 'unbounded_following':
      return n - 1;
    default: {
      const never: never = b;
      return never;
    }
  }
}

/**
 * An aggregate over each row's frame. A frame anchored at the partition start only grows, so one
 * accumulator runs through the partition and its result is taken once per distinct frame end
 * (once per peer group for the default frame): O(n). Other frames restart the aggregate per row
 * (O(n · frame width)); PostgreSQL does the same for aggregates without an inverse transition,
 * which keeps float sums rounding the same way.
 */
function aggregateOverFrames(agg: AggregateDef, p: WindowPartition, frame: WindowFrame): SqlValue[] {
  const { lo, hi } = frameBounds(p, frame);
  const out: SqlValue[] = [];
  const anchored = frame.start.kind === 'unbounded_preceding';
  let running: Accumulator | undefined;
  let added = 0;
  let prev: { lo: number; hi: number; value: SqlValue } | undefined;
  for (let i = 0; i < p.size; i++) {
    const l = lo[i]!;
    const h = hi[i]!;
    if (prev !== undefined && prev.lo === l && prev.hi === h) {
      out.push(prev.value);
      continue;
    }
    let value: SqlValue;
    if (anchored) {
      running ??= agg.create();
      for (; added <= h; added++) if (p.included?.(added) !== false) running.add(p.args(added));
      value = h < l ? agg.create().result() : running.result();
    } else {
      const acc = agg.create();
      for (let r = l; r <= h; r++) if (p.included?.(r) !== false) acc.add(p.args(r));
      value = acc.result();
    }
    prev = { lo: l, hi: h, value };
    out.push(value);
  }
  return out;
}

// ---- frames -----------------------------------------------------------------------------

/**
 * Checks a frame as PostgreSQL's parser does.
 * @throws SQL_ERROR 42P20 impossible bounds, 22013 negative offsets, 0A000 RANGE with offsets
 */
export function validateFrame(frame: WindowFrame): void {
  const { start, end } = frame;
  if (start.kind === 'unbounded_following') sqlFail('42P20', 'frame start cannot be UNBOUNDED FOLLOWING');
  if (end.kind === 'unbounded_preceding') sqlFail('42P20', 'frame end cannot be UNBOUNDED PRECEDING');
  if (start.kind === 'current_row' && end.kind === 'preceding') sqlFail('42P20', 'frame starting from current row cannot have preceding rows');
  if (start.kind === 'following' && (end.kind === 'preceding' || end.kind === 'current_row')) {
    sqlFail('42P20', 'frame starting from following row cannot have preceding rows');
  }
  for (const [b, which] of [
    [start, 'starting'],
    [end, 'ending'],
  ] as const) {
    if (b.kind !== 'preceding' && b.kind !== 'following') continue;
    if (frame.mode === 'range') sqlFail('0A000', 'unsupported: RANGE frames with offset PRECEDING/FOLLOWING');
    if (!Number.isInteger(b.offset)) sqlFail('22023', `frame ${which} offset must be an integer`);
    if (b.offset < 0) sqlFail('22013', `frame ${which} offset must not be negative`);
  }
}

type AstLike = { type?: unknown; value?: unknown; expr?: unknown; left?: unknown; right?: unknown; operator?: unknown } & Record<string, unknown>;

/**
 * The frame of a node-sql-parser window: accepts the `window_frame_clause` node, the
 * `window_specification` holding it, or the `over` node. Undefined when the window has no frame
 * clause (the caller then uses the default frame).
 * @throws SQL_ERROR 0A000 for frame forms not understood, 42P20 / 22013 as validateFrame
 */
export function frameFromAst(node: unknown): WindowFrame | undefined {
  if (node === null || node === undefined) return undefined;
  const n = node as AstLike;
  if (n.type === 'window') {
    const spec = (n.as_window_specification as { window_specification?: unknown } | string | null | undefined) ?? undefined;
    if (typeof spec !== 'object' || spec === null) return undefined;
    return frameFromAst((spec.window_specification as AstLike | undefined)?.window_frame_clause);
  }
  if ('window_frame_clause' in n) return frameFromAst(n.window_frame_clause);
  let frame: WindowFrame;
  if (n.type === 'binary_expr' && String(n.operator).toUpperCase() === 'BETWEEN') {
    const mode = frameMode((n.left as AstLike | undefined)?.value);
    const bounds = (n.right as AstLike | undefined)?.value;
    if (!Array.isArray(bounds) || bounds.length !== 2) return sqlFail('0A000', 'unsupported: window frame clause');
    frame = { mode, start: frameBound(bounds[0]), end: frameBound(bounds[1]) };
  } else if (typeof n.type === 'string' && ['rows', 'range'].includes(n.type.toLowerCase())) {
    // `ROWS <bound>` is short for ROWS BETWEEN <bound> AND CURRENT ROW.
    frame = { mode: frameMode(n.type), start: frameBound(n.expr), end: { kind: 'current_row' } };
  } else {
    return sqlFail('0A000', `unsupported: window frame clause ${String(n.type)}`);
  }
  validateFrame(frame);
  return frame;
}

function frameMode(v: unknown): 'rows' | 'range' {
  const m = String(v).toLowerCase();
  if (m === 'rows' || m === 'range') return m;
  return sqlFail('0A000', `unsupported: ${m.toUpperCase()} window frames`);
}

function frameBound(node: unknown): FrameBound {
  const text = String((node as AstLike | undefined)?.value ?? '')
    .trim()
    .replace(/\s+/g, ' ')
    .toLowerCase();
  if (text === 'current row') return { kind: 'current_row' };
  if (text === 'unbounded preceding') return { kind: 'unbounded_preceding' };
  if (text === 'unbounded following') return { kind: 'unbounded_following' };
  const m = /^(-?\d+) (preceding|following)$/.exec(text);
  if (m === null) return sqlFail('0A000', `unsupported: window frame bound ${JSON.stringify(text)}`);
  return { kind: m[2] === 'preceding' ? 'preceding' : 'following', offset: Number(m[1]) };
}
