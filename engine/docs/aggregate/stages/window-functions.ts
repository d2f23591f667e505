/**
 * The window functions of $setWindowFields (manual: $setWindowFields, "Window Operators"), each
 * parsed with MongoDB's rules and messages (window_function_expression.h and its parsers) and
 * computed over one sorted partition at a time:
 * - accumulators over a window (window-bounds.ts; default: the whole partition): $sum, $avg,
 *   $min, $max, $count, $push, $addToSet, $stdDevPop, $stdDevSamp, $covariancePop,
 *   $covarianceSamp, $first, $last, $integral, $derivative (explicit window), and $mergeObjects
 *   (windows starting at the partition's first document only, as MongoDB 8.x);
 * - $rank, $denseRank, $documentNumber (one sortBy field, no window);
 * - $shift {output, by, default}, $expMovingAvg {input, N | alpha}, $locf, $linearFill;
 * - $firstN, $lastN, $minN, $maxN, $top, $bottom, $topN, $bottomN, $percentile, $median
 *   (window-n-functions.ts);
 * - $minMaxScaler {input, min, max} (MongoDB 8.2): the input rescaled from its window's range to
 *   [min, max].
 * A window that slides (its start moves) feeds a removable accumulator (window-accumulators.ts):
 * each document enters and leaves once, O(n) per partition for the counting ones.
 *
 * Each function works a partition document after document (window-partition.ts, MongoDB's
 * window function executors): step(i) computes document i's value, reading the partition forward
 * only, as far ahead as its window reaches; it returns a promise when it must wait for a document
 * (read from the input or from the spill file) and goes on where it stopped when called again.
 * What it holds is counted (`bytes`): its accumulator's state, and a `$rand` input's values while
 * they are in the window (any other input is evaluated again on the document that leaves).
 */

import { bsonTypeOf, compareValues, isPlainObject, MISSING, type Doc } from '../../values.js';
import type { TimeUnit } from '../expression/date-units.js';
import { constantValue } from '../expression/constant.js';
import { isNullish, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { exprIsVolatile } from '../dependencies.js';
import { stageError } from '../stage.js';
import { NON_REMOVABLE, RemovableSum, SMALL_STATE_BYTES, ValueQueue, WINDOW_ACCUMULATORS, type WindowAccumulator, type WindowAccumulatorFactory } from './window-accumulators.js';
import { N_WINDOW_FUNCTIONS, parseNWindowFunction } from './window-n-functions.js';
import { leftUnbounded, parseTimeUnit, parseWindow, specWindow, WHOLE_PARTITION, WindowTracker, type SortShape, type WindowBounds } from './window-bounds.js';
import type { PartitionCursor, Wait, WindowEntry, WindowPartition } from './window-partition.js';

const STAGE = '$setWindowFields';

/** A window function at work on one partition. */
export interface WindowExec {
  /**
   * Computes the value of the document at position `i` (`current`), for i = 0, 1, 2, ... in turn:
   * undefined once `value` holds it, else a promise to await before calling it again.
   * @throws QUERY_ERROR for a value it cannot work with, with MongoDB's message
   */
  step(i: number, current: WindowEntry): Wait;
  /** The value of the last document stepped (MISSING: no field). */
  readonly value: unknown;
  /** Estimated bytes its state holds. */
  readonly bytes: number;
}

/** A window function's work whose value it sets as it steps. */
interface Stepping extends WindowExec {
  value: unknown;
}

/** A parsed window function. */
export interface WindowFunction {
  /** Its work on a partition. */
  open(p: WindowPartition): WindowExec;
  /** Fields it reads besides those of its expressions (a $topN's sortBy). */
  readonly paths?: readonly string[];
}

function fail(message: string): never {
  stageError(STAGE, message);
}

type Parser = (spec: Doc, name: string, sort: SortShape, names: ReadonlySet<string>) => WindowFunction;

/** The document at `j` (a reader of the partition past its end there would be a bug: windows end within it). */
function entryAt(c: PartitionCursor, j: number): WindowEntry | undefined {
  const e = c.at(j);
  if (e === null) throw new Error(`a window reached position ${j}, past its partition`);
  return e;
}

/** How a Slide works beyond its bounds and accumulator. */
interface SlideOptions {
  /** Only the first (last) n positions of each window count ($firstN, $lastN). */
  readonly cap?: { readonly n: number; readonly last: boolean };
  /** The input draws a random number (`$rand`): a value leaves as it entered, kept until then. */
  readonly volatile?: boolean;
}

/**
 * An accumulator slid over the windows: each document enters once (read at the window's end) and
 * leaves once (read again at the window's start, its input evaluated again; a `$rand` input's
 * values are kept instead, as MongoDB's removable executors keep every value), O(1) amortized per
 * document for the counting accumulators, whose state then does not grow with the window. A
 * window equal to the previous document's gives the same value, computed once and shared (values
 * are never changed in place).
 */
class Slide implements WindowExec {
  value: unknown = null;
  readonly #p: WindowPartition;
  readonly #tracker: WindowTracker;
  readonly #valueOf: (e: WindowEntry) => unknown;
  readonly #make: WindowAccumulatorFactory;
  readonly #acc: WindowAccumulator;
  readonly #cap: SlideOptions['cap'];
  readonly #adder: PartitionCursor;
  /** Where leaving documents are read again: none when nothing leaves, or their values are kept. */
  readonly #remover: PartitionCursor | undefined;
  /** The values of the documents entered and not yet left, when they are kept (a volatile input). */
  readonly #queue: ValueQueue | undefined;
  /** Documents before this position have left. */
  #removed = 0;
  /** Documents before this position have entered. */
  #added = 0;
  /** The previous document's window (start -1: none, or empty). */
  #lastStart = -1;
  #lastEnd = -1;

  constructor(p: WindowPartition, bounds: WindowBounds, valueOf: (e: WindowEntry) => unknown, make: WindowAccumulatorFactory, options: SlideOptions = {}) {
    this.#p = p;
    this.#tracker = trackerOf(p, bounds);
    this.#valueOf = valueOf;
    this.#make = make;
    this.#cap = options.cap;
    // A window starting at the partition's first document only grows; $lastN's start follows its end.
    const removable = !leftUnbounded(bounds) || options.cap?.last === true;
    this.#acc = make(removable);
    // An accumulator that keeps what it took needs nothing to remove a document but its position.
    const needsValues = removable && this.#acc.removesOwn !== true;
    this.#queue = needsValues && options.volatile === true ? new ValueQueue() : undefined;
    this.#remover = needsValues && options.volatile !== true ? p.cursor() : undefined;
    this.#adder = p.cursor();
  }

  get bytes(): number {
    return this.#acc.bytes + (this.#queue?.bytes ?? 0);
  }

  step(i: number, current: WindowEntry): Wait {
    const wait = this.#tracker.step(i, current);
    if (wait !== undefined) return wait;
    const t = this.#tracker;
    if (t.empty) {
      this.value = this.#make(false).result();
      this.#lastStart = -1;
      return undefined;
    }
    let s = t.start;
    let e = t.end;
    const cap = this.#cap;
    if (cap !== undefined) {
      if (cap.last) s = Math.max(s, e - cap.n + 1);
      else e = Math.min(e, s + cap.n - 1);
    }
    if (s === this.#lastStart && e === this.#lastEnd) return undefined;
    const acc = this.#acc;
    const p = this.#p;
    while (this.#removed < s && this.#removed < this.#added) {
      const j = this.#removed;
      let v: unknown;
      if (this.#queue !== undefined) v = this.#queue.shift();
      else if (this.#remover !== undefined) {
        const entry = entryAt(this.#remover, j);
        if (entry === undefined) return this.#remover.fetch(j);
        v = this.#valueOf(entry);
        this.#remover.advance(j + 1);
      }
      acc.remove(v, j);
      this.#removed = j + 1;
      const w = p.tick();
      if (w !== undefined) return w;
    }
    if (this.#removed < s) {
      this.#removed = s;
      this.#remover?.advance(s);
    }
    if (this.#added < this.#removed) this.#added = this.#removed;
    const adder = this.#adder;
    adder.advance(this.#added);
    while (this.#added <= e) {
      const j = this.#added;
      const entry = entryAt(adder, j);
      if (entry === undefined) return adder.fetch(j);
      const v = this.#valueOf(entry);
      acc.add(v, j);
      this.#queue?.push(v);
      this.#added = j + 1;
      adder.advance(j + 1);
      const w = p.tick();
      if (w !== undefined) return w;
    }
    this.value = acc.result();
    this.#lastStart = s;
    this.#lastEnd = e;
    return undefined;
  }
}

/** The partition's tracker of `bounds`, shared by the functions with the same bounds. */
function trackerOf(p: WindowPartition, bounds: WindowBounds): WindowTracker {
  const key = bounds.kind === 'documents' ? `d ${bounds.lower} ${bounds.upper}` : `r ${bounds.lower} ${bounds.upper} ${bounds.unit}`;
  return p.shared(key, () => new WindowTracker(bounds, p));
}

/**
 * The document at a window's position that never goes down, kept while the position stays (the
 * reader moves past it, so it holds nothing else of the partition back).
 */
class Picker {
  readonly #cursor: PartitionCursor;
  #at = -1;
  #entry: WindowEntry | undefined;

  constructor(p: WindowPartition) {
    this.#cursor = p.cursor();
  }

  /** The document at `j`, or undefined until fetch(j) is awaited. */
  at(j: number): WindowEntry | undefined {
    if (j === this.#at) return this.#entry;
    const e = entryAt(this.#cursor, j);
    if (e === undefined) return undefined;
    this.#at = j;
    this.#entry = e;
    this.#cursor.advance(j + 1);
    return e;
  }

  fetch(j: number): Promise<void> {
    return this.#cursor.fetch(j);
  }
}

function checkNoSecond(name: string | undefined): void {
  if (name !== undefined) fail('Cannot specify two functions in window function spec');
}

/** `{$sum: <expr>, window: {...}}` and the other accumulators (MongoDB's ExpressionRemovable). */
const accumulator: Parser = (spec, _name, sort, names) => {
  let fn: string | undefined;
  let bounds = WHOLE_PARTITION;
  for (const k of Object.keys(spec)) {
    if (k === 'window') bounds = parseWindow(spec[k], sort);
    else if (isWindowFunction(k)) {
      checkNoSecond(fn);
      fn = k;
    } else fail(`Window function found an unknown argument: ${k}`);
  }
  let op = fn!;
  let inputSpec = spec[op];
  if (op === '$count') {
    if (!isPlainObject(inputSpec) || Object.keys(inputSpec).length > 0) fail('$count only accepts an empty object as input');
    op = '$sum';
    inputSpec = 1;
  }
  if (NON_REMOVABLE.has(op) && !leftUnbounded(bounds)) fail(`Window function ${op} is not supported with a removable window`);
  const input = compileExpression(inputSpec, names);
  const make = WINDOW_ACCUMULATORS[op]!;
  const volatile = exprIsVolatile(inputSpec);
  return { open: (p) => new Slide(p, bounds, (e) => input(e.scope), make, { volatile }) };
};

/** $first/$last: the input at the window's first (last) document; null for an empty window. */
const endpoint: Parser = (spec, name, sort, names) => {
  const bounds = specWindow(spec, name, sort) ?? WHOLE_PARTITION;
  const input = compileExpression(spec[name], names);
  const last = name === '$last';
  return {
    open(p): Stepping {
      const tracker = trackerOf(p, bounds);
      const picker = new Picker(p);
      return {
        value: null as unknown,
        bytes: SMALL_STATE_BYTES,
        step(i, current) {
          const wait = tracker.step(i, current);
          if (wait !== undefined) return wait;
          if (tracker.empty) {
            this.value = null;
            return undefined;
          }
          const j = last ? tracker.end : tracker.start;
          const e = picker.at(j);
          if (e === undefined) return picker.fetch(j);
          this.value = input(e.scope);
          return undefined;
        },
      };
    },
  };
};

/** $rank, $denseRank, $documentNumber: ties are documents whose sortBy values sort alike. */
const rank: Parser = (spec, name, sort) => {
  if (Object.keys(spec).length !== 1) fail('Rank style window functions take no other arguments');
  const arg = spec[name];
  if (!isPlainObject(arg) || Object.keys(arg).length > 0) fail(`${name} must be specified with '{}' as the value`);
  if (sort.fields !== 1) fail(`${name} must be specified with a top level sortBy expression with exactly one element`);
  return {
    open(p): Stepping {
      let rankOf = 0;
      let dense = 0;
      let previous: unknown[] | undefined;
      return {
        value: null as unknown,
        bytes: SMALL_STATE_BYTES,
        step(i, current) {
          if (name === '$documentNumber') {
            this.value = i + 1;
            return undefined;
          }
          const key = p.sortKey(current);
          if (previous === undefined || !p.ties(previous, key)) {
            rankOf = i + 1;
            dense++;
          }
          previous = key;
          this.value = name === '$rank' ? rankOf : dense;
          return undefined;
        },
      };
    },
  };
};

/** $shift {output, by, default}: the output expression on the document `by` places away. */
const shift: Parser = (spec, name, sort, names) => {
  let fn: string | undefined;
  for (const k of Object.keys(spec)) {
    if (k === 'window') fail("$shift does not accept a 'window' field");
    else if (isWindowFunction(k)) {
      if (fn !== undefined) fail('Cannot specify multiple functions in window function spec');
      fn = k;
      if (!isPlainObject(spec[k])) fail('Argument to $shift must be an object');
    } else fail(`Window function found an unknown argument: ${k}`);
  }
  const args = spec[name] as Doc;
  let output: Expr | undefined;
  let by: number | undefined;
  let fallback: unknown = null;
  for (const [k, v] of Object.entries(args)) {
    if (k === 'output') output = compileExpression(v, names);
    else if (k === 'default') {
      const c = constantValue(v, (e) => compileExpression(e));
      if (c === undefined) fail("'$shift:default' expression must yield a constant value.");
      fallback = c.value === MISSING ? null : c.value;
    } else if (k === 'by') {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < -2147483648 || v > 2147483647) fail(`'$shift:by' field must be an integer, but found  by: ${JSON.stringify(v)}`);
      by = v;
    } else fail(`Unknown argument in ${name}`);
  }
  if (output === undefined) fail(`${name} requires an 'output' expression.`);
  if (by === undefined) fail(`${name} requires 'by' as an integer value.`);
  if (sort.fields === undefined) fail(`'${name}' requires a sortBy`);
  const offset = by;
  const out = output;
  return {
    open(p): Stepping {
      const cursor = p.cursor();
      return {
        value: null as unknown,
        bytes: SMALL_STATE_BYTES,
        step(i) {
          const j = i + offset;
          if (j < 0) {
            this.value = fallback;
            return undefined;
          }
          const e = cursor.at(j);
          if (e === undefined) return cursor.fetch(j);
          this.value = e === null ? fallback : out(e.scope);
          return undefined;
        },
      };
    },
  };
};

/** Milliseconds in the units $derivative and $integral take (MongoDB's typical lengths). */
const UNIT_MS: Readonly<Partial<Record<TimeUnit, number>>> = { week: 604_800_000, day: 86_400_000, hour: 3_600_000, minute: 60_000, second: 1000, millisecond: 1 };

function typeName(v: unknown): string {
  return bsonTypeOf(v);
}

/** `{$derivative | $integral: {input, unit}, window}`, checked as MongoDB's ExpressionWithUnit. */
function withUnit(spec: Doc, name: string, sort: SortShape, names: ReadonlySet<string>): { input: Expr; unitMs: number | undefined; bounds: WindowBounds | undefined } {
  if (sort.fields === undefined) fail(`${name} requires a sortBy`);
  if (sort.fields !== 1) fail(`${name} requires a non-compound sortBy`);
  const bounds = specWindow(spec, name, sort);
  const args = spec[name];
  if (!isPlainObject(args)) fail(`${name} expects an object, but got a ${typeName(args)}: ${name}: ${JSON.stringify(args)}`);
  let input: Expr | undefined;
  let unitMs: number | undefined;
  for (const [k, v] of Object.entries(args)) {
    if (k === 'input') input = compileExpression(v, names);
    else if (k === 'unit') {
      if (typeof v !== 'string') fail(`unit' must be a string, but got ${typeName(v)}`);
      const unit = parseTimeUnit(v);
      const ms = UNIT_MS[unit];
      if (ms === undefined) fail("unit must be 'week' or smaller");
      unitMs = ms;
    } else fail(`${name} got unexpected argument: ${k}`);
  }
  if (input === undefined) fail(`${name} requires an 'input' expression`);
  return { input, unitMs, bounds };
}

const derivative: Parser = (spec, name, sort, names) => {
  const { input, unitMs, bounds } = withUnit(spec, name, sort, names);
  if (bounds === undefined) fail('$derivative requires explicit window bounds');
  return {
    open(p): Stepping {
      const tracker = trackerOf(p, bounds);
      const first = new Picker(p);
      const last = new Picker(p);
      return {
        value: null as unknown,
        bytes: SMALL_STATE_BYTES,
        step(i, current) {
          const wait = tracker.step(i, current);
          if (wait !== undefined) return wait;
          if (tracker.empty) {
            this.value = null;
            return undefined;
          }
          const s = first.at(tracker.start);
          if (s === undefined) return first.fetch(tracker.start);
          const e = last.at(tracker.end);
          if (e === undefined) return last.fetch(tracker.end);
          this.value = slope(p.sortValue(s), p.sortValue(e), s, e);
          return undefined;
        },
      };
    },
  };

  function slope(t0: unknown, t1: unknown, s: WindowEntry, e: WindowEntry): unknown {
    if (unitMs !== undefined) {
      if (!(t0 instanceof Date && t1 instanceof Date)) fail("$derivative with 'unit' expects the sortBy field to be a Date");
    } else {
      if (t0 instanceof Date || t1 instanceof Date) fail("$derivative where the sortBy is a Date requires an 'unit'");
      if (typeof t0 !== 'number' || typeof t1 !== 'number') fail("$derivative (with no 'unit') expects the sortBy field to be numeric");
    }
    const run = +(t1 as number | Date) - +(t0 as number | Date);
    const rise = difference(input(e.scope), input(s.scope));
    // A window of one document (the partition's first with [-1, 0]) has no run.
    if (run === 0) return null;
    const result = rise / run;
    return unitMs === undefined ? result : result * unitMs;
  }
};

// $subtract's rules for the rise: numbers, or dates (milliseconds).
function difference(a: unknown, b: unknown): number {
  if (isNullish(a) || isNullish(b)) fail('$derivative input must not be null or missing');
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (a instanceof Date && typeof b === 'number') return a.getTime() - b;
  return fail(`can't $subtract ${typeName(b)} from ${typeName(a)}`);
}

const integral: Parser = (spec, name, sort, names) => {
  const { input, unitMs, bounds } = withUnit(spec, name, sort, names);
  const window = bounds ?? WHOLE_PARTITION;
  const point = (v: unknown): [number, number, boolean] => {
    const [x, y] = v as [unknown, unknown];
    if (!(typeof y === 'number' && (typeof x === 'number' || x instanceof Date))) {
      fail('The input value of $integral window function must be a vector of 2 value, the first value must be numeric or date type and the second must be numeric.');
    }
    if (unitMs !== undefined && !(x instanceof Date)) fail("$integral with 'outputUnit' expects the sortBy field to be a Date");
    if (unitMs === undefined && typeof x !== 'number') fail("$integral (with no 'outputUnit') expects the sortBy field to be numeric");
    const t = +(x as number | Date);
    return [t, y, Number.isNaN(t) || Number.isNaN(y)];
  };
  const trapezoid = (a: [number, number, boolean], b: [number, number, boolean]): number =>
    Number.isNaN(a[0]) || Number.isNaN(a[1]) || Number.isNaN(b[0]) || Number.isNaN(b[1]) ? 0 : ((b[0] - a[0]) * (a[1] + b[1])) / 2;
  // The trapezoids between neighbouring points of the window; NaN points counted apart. A window
  // that only grows keeps its last point alone; a sliding one its points (MongoDB's keeps them too).
  const make: WindowAccumulatorFactory = (removable) => {
    const points: Array<[number, number, boolean]> = [];
    let head = 0;
    let lastPoint: [number, number, boolean] | undefined;
    let count = 0;
    const area = new RemovableSum();
    let nan = 0;
    return {
      add(v) {
        const pt = point(v);
        if (pt[2]) nan++;
        if (lastPoint !== undefined) area.add(trapezoid(lastPoint, pt));
        lastPoint = pt;
        count++;
        if (!removable) return;
        points.push(pt);
      },
      remove() {
        const pt = points[head++]!;
        count--;
        if (pt[2]) nan--;
        if (points.length > head) area.remove(trapezoid(pt, points[head]!));
        else lastPoint = undefined;
        if (head > 1024 && head * 2 > points.length) {
          points.splice(0, head);
          head = 0;
        }
      },
      result() {
        if (count === 0) return null;
        if (nan > 0) return NaN;
        return unitMs === undefined ? area.value : area.value / unitMs;
      },
      get bytes() {
        return SMALL_STATE_BYTES + (points.length - head) * 48;
      },
      removesOwn: true,
    };
  };
  return { open: (p) => new Slide(p, window, (e) => [p.sortValue(e), input(e.scope)], make) };
};

/** $expMovingAvg {input, N | alpha}: from the partition's start to the current document. */
const expMovingAvg: Parser = (spec, name, sort, names) => {
  const args = spec[name];
  if (Object.keys(spec).length !== 1 || !isPlainObject(args)) fail('$expMovingAvg must have exactly one argument that is an object');
  const shape = "$expMovingAvg sub object must have exactly two fields: An 'input' field, and either an 'N' field or an 'alpha' field";
  if (Object.keys(args).length !== 2 || !Object.hasOwn(args, 'input')) fail(shape);
  if (sort.fields === undefined) fail("$expMovingAvg requires an explicit 'sortBy'");
  const input = compileExpression(args['input'], names);
  let alpha: number;
  let n: number | undefined;
  if (Object.hasOwn(args, 'N')) {
    const count = args['N'];
    if (typeof count !== 'number') fail(`'N' field must be an integer, but found type ${typeName(count)}`);
    if (!Number.isInteger(count)) fail(`'N' field must be an integer, but found  N: ${count}. To use a non-integer, use the 'alpha' argument instead`);
    if (count <= 0) fail(`'N' must be greater than zero. Got ${count}`);
    alpha = 2 / (count + 1);
    n = args['N'] as number;
  } else if (Object.hasOwn(args, 'alpha')) {
    const a = args['alpha'];
    if (typeof a !== 'number') fail("'alpha' must be a number");
    if (!(a > 0 && a < 1)) fail(`'alpha' must be between 0 and 1 (exclusive), found alpha: ${a}`);
    alpha = a;
  } else return fail(`Got unrecognized field in $expMovingAvg${shape}`);
  return {
    open(): Stepping {
      let average: number | null = null;
      return {
        value: null as unknown,
        bytes: SMALL_STATE_BYTES,
        step(_i, current) {
          const v = input(current.scope);
          // With N, (2v + (N - 1) average) / (N + 1): one rounding, as close to MongoDB's decimal
          // arithmetic as a double gets (v * alpha + average * (1 - alpha) drifts in the last bit).
          if (typeof v === 'number') average = average === null ? v : n !== undefined ? (2 * v + (n - 1) * average) / (n + 1) : v * alpha + average * (1 - alpha);
          this.value = average;
          return undefined;
        },
      };
    },
  };
};

/** `{$locf: <expr>}` and `{$linearFill: <expr>}`: no window (MongoDB's left-unbounded functions). */
function noWindow(spec: Doc): string {
  let fn: string | undefined;
  let window = false;
  for (const k of Object.keys(spec)) {
    if (k === 'window') window = true;
    else if (isWindowFunction(k)) {
      checkNoSecond(fn);
      fn = k;
    } else fail(`Window function found an unknown argument: ${k}`);
  }
  if (window) fail(`'window' field is not allowed in ${fn}`);
  return fn!;
}

/** $locf: the last non-null value so far in the partition (null before the first). */
const locf: Parser = (spec, name, _sort, names) => {
  noWindow(spec);
  const input = compileExpression(spec[name], names);
  return {
    open(): Stepping {
      let last: unknown = null;
      return {
        value: null as unknown,
        bytes: SMALL_STATE_BYTES,
        step(_i, current) {
          const v = input(current.scope);
          if (!isNullish(v)) last = v;
          this.value = last;
          return undefined;
        },
      };
    },
  };
};

/** $linearFill: null and missing values interpolated between the nearest numbers around them. */
const linearFill: Parser = (spec, name, sort, names) => {
  noWindow(spec);
  if (sort.fields !== 1) fail(`${name} must be specified with a top level sortBy expression with exactly one element`);
  const input = compileExpression(spec[name], names);
  return { open: (p) => new LinearFill(p, input) };
};

/** A point of a $linearFill: a sortBy value and a number. */
interface FillPoint {
  readonly x: number | Date;
  readonly y: number;
}

/**
 * MongoDB's WindowFunctionExecLinearFill over one partition: the last document with a value
 * before the current one, and the next one after it, found by a reader that runs ahead.
 */
class LinearFill implements WindowExec {
  value: unknown = null;
  readonly bytes = SMALL_STATE_BYTES;
  readonly #p: WindowPartition;
  readonly #input: Expr;
  readonly #ahead: PartitionCursor;
  #previousX: unknown = MISSING;
  #left: FillPoint | undefined;
  /** The next document with a value and a sortBy value, from #scan on; null: none to the partition's end. */
  #right: (FillPoint & { readonly at: number }) | null | undefined;
  #scan = 0;
  /** The current document, checked, waits for #right. */
  #waiting = -1;

  constructor(p: WindowPartition, input: Expr) {
    this.#p = p;
    this.#input = input;
    this.#ahead = p.cursor();
  }

  step(i: number, current: WindowEntry): Wait {
    if (this.#waiting !== i) {
      // Nothing before the next document is read ahead again: it must not hold the partition back.
      if (this.#scan <= i) {
        this.#scan = i + 1;
        this.#ahead.advance(i + 1);
      }
      const y = this.#input(current.scope);
      const x = this.#p.sortValue(current);
      if (!(typeof y === 'number' || isNullish(y))) fail(`Value to be filled must be numeric or nullish, but found ${typeName(y)}`);
      if (!(typeof x === 'number' || x instanceof Date)) fail(`Value of the sortBy field must be numeric or a date, but found ${typeName(x)}`);
      const previousX = this.#previousX;
      if (previousX !== MISSING) {
        if (+(previousX as number | Date) === +x && (previousX instanceof Date) === (x instanceof Date)) fail('There can be no repeated values in the sort field');
        if ((previousX instanceof Date) !== (x instanceof Date)) fail(`Conflicting sort value types, previously received type ${typeName(previousX)}, but found ${typeName(x)}`);
      }
      this.#previousX = x;
      if (!isNullish(y)) {
        this.#left = { x, y: y as number };
        this.value = y;
        return undefined;
      }
      if (this.#left === undefined) {
        this.value = null;
        return undefined;
      }
      this.#waiting = i;
    }
    // The next document after this one with both values (the previous answer while it is ahead).
    if (this.#right === undefined || (this.#right !== null && this.#right.at <= i)) {
      this.#right = undefined;
      const ahead = this.#ahead;
      for (;;) {
        const e = ahead.at(this.#scan);
        if (e === undefined) return ahead.fetch(this.#scan);
        if (e === null) {
          this.#right = null;
          break;
        }
        const y = this.#input(e.scope);
        const x = this.#p.sortValue(e);
        if (!isNullish(y) && !isNullish(x)) {
          this.#right = { x: x as number | Date, y: y as number, at: this.#scan };
          break;
        }
        this.#scan++;
        const w = this.#p.tick();
        if (w !== undefined) return w;
      }
    }
    this.#waiting = -1;
    const right = this.#right;
    if (right === null) {
      this.value = null;
      return undefined;
    }
    const left = this.#left!;
    const x1 = +left.x;
    const x2 = +right.x;
    this.value = left.y + (+(this.#p.sortValue(current) as number | Date) - x1) * ((right.y - left.y) / (x2 - x1));
    return undefined;
  }
}

// MongoDB parses $minMaxScaler's specification with IDL (window_function_expression.idl, context
// "root"): its messages name the field by its path from there.
const IDL_ROOT = 'root';

/** A bound as MongoDB writes it in $minMaxScaler's messages (C++'s std::to_string of a double). */
function boundText(n: number): string {
  return n.toFixed(6);
}

/**
 * `{$minMaxScaler: {input, min, max} | <input>, window}` (MongoDB 8.2): for each document,
 * ((x - wmin) / (wmax - wmin)) * (max - min) + min, with wmin and wmax the least and greatest
 * input in its window; `min` when they are equal (MongoDB's min_max_scaler::computeResult, which
 * avoids the division by zero). Every input must be a number; the window must hold the current
 * document. Checked in MongoDB's order: the specification's shape, the window, then min and max.
 */
const minMaxScaler: Parser = (spec, name, sort, names) => {
  let bounds = WHOLE_PARTITION;
  for (const k of Object.keys(spec)) {
    if (k !== name && k !== 'window') fail(`BSON field '${IDL_ROOT}.${k}' is an unknown field.`);
  }
  const arg = spec[name];
  // The manual's short form, `{$minMaxScaler: <numeric expression>}`: the input alone (an object
  // whose first field is an operator is an expression, as everywhere else).
  const args: Doc = isPlainObject(arg) && !Object.keys(arg)[0]?.startsWith('$') ? arg : { input: arg };
  for (const k of Object.keys(args)) {
    if (k !== 'input' && k !== 'min' && k !== 'max') fail(`BSON field '${IDL_ROOT}.${name}.${k}' is an unknown field.`);
  }
  if (!Object.hasOwn(args, 'input')) fail(`BSON field '${IDL_ROOT}.${name}.input' is missing but a required field`);
  if (Object.hasOwn(spec, 'window')) {
    if (!isPlainObject(spec['window'])) fail(`BSON field '${IDL_ROOT}.window' is the wrong type '${typeName(spec['window'])}', expected type 'object'`);
    bounds = parseWindow(spec['window'], sort);
    // The current document must be in its own window: the scaled value lies between the window's.
    const within = ' (the current doc), as $minMaxScaler must ensure that the current document being processed is always within the configured window.';
    if (typeof bounds.lower === 'number' && bounds.lower > 0) fail(`Lower specified bound cannot be greater than 0${within} Lower specified bound = ${boundText(bounds.lower)}`);
    if (typeof bounds.upper === 'number' && bounds.upper < 0) fail(`Upper specified bound cannot be less than 0${within} Upper specified bound = ${boundText(bounds.upper)}`);
  }
  const input = compileExpression(args['input'], names);
  if (Object.hasOwn(args, 'min') !== Object.hasOwn(args, 'max')) {
    fail("Only one of 'min' and 'max' were specified as an argument to $minMaxScaler. Neither or both must be specified");
  }
  const constant = (arg: 'min' | 'max', fallback: number): number => {
    if (!Object.hasOwn(args, arg)) return fallback;
    const c = constantValue(args[arg], (e) => compileExpression(e));
    if (c === undefined) fail(`'${arg}' argument to $minMaxScaler must be a constant`);
    if (typeof c.value !== 'number') fail(`'${arg}' argument to $minMaxScaler must be a numeric type`);
    return c.value;
  };
  const sMin = constant('min', 0);
  const sMax = constant('max', 1);
  if (!(compareValues(sMin, sMax) < 0)) fail("the 'max' must be strictly greater than 'min', as arguments to $minMaxScaler");
  // Each input checked as it enters a window (the current document is always in its own).
  const valueOf = (e: WindowEntry): number => {
    const v = input(e.scope);
    if (typeof v !== 'number') fail(`'input' argument to $minMaxScaler must evaluate to a numeric type, got: ${typeName(v)}`);
    return v;
  };
  return {
    open(p): Stepping {
      // Each window's least and greatest input, slid as $min and $max are.
      const range = new Slide(p, bounds, valueOf, minAndMax, { volatile: exprIsVolatile(args['input']) });
      return {
        value: null as unknown,
        get bytes() {
          return range.bytes;
        },
        step(i, current) {
          const wait = range.step(i, current);
          if (wait !== undefined) return wait;
          const [lo, hi] = range.value as [number, number];
          const x = valueOf(current);
          this.value = compareValues(lo, hi) === 0 ? sMin : ((x - lo) / (hi - lo)) * (sMax - sMin) + sMin;
          return undefined;
        },
      };
    },
  };
};

/** $min and $max of one window at once: [least, greatest]. */
const minAndMax: WindowAccumulatorFactory = (removable) => {
  const lo = WINDOW_ACCUMULATORS['$min']!(removable);
  const hi = WINDOW_ACCUMULATORS['$max']!(removable);
  return {
    add(v, i) {
      lo.add(v, i);
      hi.add(v, i);
    },
    remove(v, i) {
      lo.remove(v, i);
      hi.remove(v, i);
    },
    result: () => [lo.result(), hi.result()],
    get bytes() {
      return lo.bytes + hi.bytes;
    },
    removesOwn: true,
  };
};

/** The N functions and percentiles (window-n-functions.ts), sliding as the accumulators do. */
const nFunction: Parser = (spec, name, sort, names) => {
  const fn = parseNWindowFunction(spec, name, sort, names);
  return {
    paths: fn.paths,
    open: (p) => new Slide(p, fn.bounds, fn.value, fn.make, { cap: fn.cap, volatile: exprIsVolatile(spec[name]) }),
  };
};

const PARSERS: Readonly<Record<string, Parser>> = {
  ...Object.fromEntries(['$sum', '$avg', '$min', '$max', '$count', '$push', '$addToSet', '$stdDevPop', '$stdDevSamp', '$covariancePop', '$covarianceSamp', '$mergeObjects'].map((n) => [n, accumulator])),
  $first: endpoint,
  $last: endpoint,
  $rank: rank,
  $denseRank: rank,
  $documentNumber: rank,
  $shift: shift,
  $derivative: derivative,
  $integral: integral,
  $expMovingAvg: expMovingAvg,
  $locf: locf,
  $linearFill: linearFill,
  ...Object.fromEntries(N_WINDOW_FUNCTIONS.map((n) => [n, nFunction])),
  $minMaxScaler: minMaxScaler,
};

function isWindowFunction(name: string): boolean {
  return Object.hasOwn(PARSERS, name);
}

/** Parses one output field's window function (`{$sum: "$x", window: {...}}`). @throws QUERY_ERROR */
export function parseWindowFunction(field: string, spec: unknown, sort: SortShape, names: ReadonlySet<string>): WindowFunction {
  if (!isPlainObject(spec)) fail(`The field '${field}' must be an object`);
  const keys = Object.keys(spec);
  const name = keys.find((k) => k.startsWith('$'));
  if (name === undefined) fail(`Expected a $-prefixed window function${keys.length > 0 ? `, ${keys[0]}` : ''}`);
  if (!isWindowFunction(name)) fail(`Unrecognized window function, ${name}`);
  return PARSERS[name]!(spec, name, sort, names);
}
