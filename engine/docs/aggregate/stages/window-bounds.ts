/**
 * The `window` of a $setWindowFields output (manual: $setWindowFields, "window"), parsed and
 * turned into each document's range of the partition, as MongoDB's WindowBounds::parse and
 * PartitionIterator do:
 * - `{documents: [lo, hi]}`: positions relative to the current document; "unbounded",
 *   "current" (0) or integers; anything but [unbounded, unbounded] needs a sortBy.
 * - `{range: [lo, hi]}`: sortBy values relative to the current document's (one ascending sortBy
 *   field, numbers); with `unit`, dates moved by whole units. "current" is the current document
 *   itself (not its ties); "unbounded" reaches the first (last) document whose value has the
 *   window's type. The current document's value must have that type (checked at run time).
 * - No window: the whole partition.
 * A window may be empty (its start past its end). Starts and ends never go down along a
 * partition, which lets the window functions slide (window-functions.ts) and read the partition
 * forward only (WindowTracker).
 */

import { bsonTypeOf, compareValues, isPlainObject, MISSING, type Doc } from '../../values.js';
import { exprFields } from '../dependencies.js';
import { addUnits, type TimeUnit } from '../expression/date-units.js';
import { Scope } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { stageError } from '../stage.js';
import type { PartitionCursor, Wait, WindowEntry, WindowPartition } from './window-partition.js';

const STAGE = '$setWindowFields';

/** A bound: "unbounded", "current" or an amount (documents or sortBy units). */
export type Bound = 'unbounded' | 'current' | number;

export type WindowBounds =
  | { readonly kind: 'documents'; readonly lower: Bound; readonly upper: Bound }
  | { readonly kind: 'range'; readonly lower: Bound; readonly upper: Bound; readonly unit: TimeUnit | undefined };

/** The whole partition. */
export const WHOLE_PARTITION: WindowBounds = { kind: 'documents', lower: 'unbounded', upper: 'unbounded' };

/** What the bounds need of the stage's sortBy. */
export interface SortShape {
  /** The number of sortBy fields (undefined: no sortBy). */
  readonly fields: number | undefined;
  /** True when the only sortBy field is ascending. */
  readonly ascending: boolean;
}

const TIME_UNITS: ReadonlySet<string> = new Set(['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'millisecond']);

/** A time unit as MongoDB's parseTimeUnit reads it. @throws QUERY_ERROR */
export function parseTimeUnit(v: string): TimeUnit {
  if (!TIME_UNITS.has(v)) stageError(STAGE, `unknown time unit value: ${v}`);
  return v as TimeUnit;
}

// A bound's value: a string keyword, else a constant expression (a number, `{$literal: 2}`,
// `{$add: [1, 1]}`); MongoDB folds constant expressions and refuses any other.
function parseBound(v: unknown, check: (n: unknown) => number): Bound {
  if (typeof v === 'string') {
    if (v === 'unbounded' || v === 'current') return v;
    stageError(STAGE, "Window bounds must be 'unbounded', 'current', or a number.");
  }
  let value = v;
  if (isPlainObject(v) || Array.isArray(v)) {
    const fields = new Set<string>();
    if (!exprFields(v, fields) || fields.size > 0 || JSON.stringify(v).includes('"$$')) stageError(STAGE, 'Window bounds expression must be a constant.');
    value = compileExpression(v)(Scope.of({}));
  }
  return check(value);
}

const isNumber = (v: unknown): v is number => typeof v === 'number';

function checkForward(lower: Bound, upper: Bound, show: (n: number) => string): void {
  const l = lower === 'current' ? 0 : lower;
  const u = upper === 'current' ? 0 : upper;
  if (typeof l === 'number' && typeof u === 'number' && !(l <= u)) stageError(STAGE, `Lower bound must not exceed upper bound: [${show(l)}, ${show(u)}]`);
}

function pair(v: unknown): [unknown, unknown] {
  if (!Array.isArray(v) || v.length !== 2) stageError(STAGE, `Window bounds must be a 2-element array: ${JSON.stringify(v)}`);
  return [v[0], v[1]];
}

/**
 * The `window` of a window function's specification `{<name>: ..., window?: ...}`, undefined
 * without one; any other field is refused with MongoDB's message. @throws QUERY_ERROR
 */
export function specWindow(spec: Doc, name: string, sort: SortShape): WindowBounds | undefined {
  let bounds: WindowBounds | undefined;
  for (const k of Object.keys(spec)) {
    if (k === 'window') bounds = parseWindow(spec[k], sort);
    else if (k !== name) stageError(STAGE, `${name} got unexpected argument: ${k}`);
  }
  return bounds;
}

/** Parses a `window` field. @throws QUERY_ERROR with MongoDB's messages */
export function parseWindow(spec: unknown, sort: SortShape): WindowBounds {
  if (!isPlainObject(spec)) stageError(STAGE, "'window' field must be an object");
  const has = (k: string) => Object.hasOwn(spec, k);
  const size = Object.keys(spec).length;
  if (has('documents') && has('range')) stageError(STAGE, "Window bounds can specify either 'documents' or 'unit', not both.");
  if (!has('range') && has('unit')) stageError(STAGE, "Window bounds can only specify 'unit' with range-based bounds.");
  if (!has('range') && !has('documents')) {
    if (size !== 0) stageError(STAGE, "'window' field can only contain 'documents' as the only argument or 'range' with an optional 'unit' field");
    return WHOLE_PARTITION;
  }
  if (has('documents')) {
    if (size !== 1) stageError(STAGE, "'window' field that specifies documents cannot have other fields");
    const [lo, hi] = pair(spec['documents']);
    const integer = (n: unknown): number => {
      if (!isNumber(n) || !Number.isInteger(n)) stageError(STAGE, 'Numeric document-based bounds must be an integer');
      return n;
    };
    const lower = parseBound(lo, integer);
    const upper = parseBound(hi, integer);
    checkForward(lower, upper, String);
    if (!(lower === 'unbounded' && upper === 'unbounded') && sort.fields === undefined) stageError(STAGE, 'Document-based bounds require a sortBy');
    return { kind: 'documents', lower, upper };
  }
  const [lo, hi] = pair(spec['range']);
  let unit: TimeUnit | undefined;
  let lower: Bound;
  let upper: Bound;
  if (has('unit')) {
    if (size !== 2) stageError(STAGE, "'window' field that specifies unit cannot have other fields besides 'range'");
    const u = spec['unit'];
    if (typeof u !== 'string') stageError(STAGE, "'unit' must be a string");
    const integer = (n: unknown): number => {
      if (!isNumber(n) || !Number.isInteger(n)) stageError(STAGE, "With 'unit', range-based bounds must be an integer");
      return n;
    };
    lower = parseBound(lo, integer);
    upper = parseBound(hi, integer);
    checkForward(lower, upper, String);
    unit = parseTimeUnit(u);
  } else {
    if (size !== 1) stageError(STAGE, "'window' field that specifies range cannot have other fields besides 'unit'");
    const number = (n: unknown): number => {
      if (!isNumber(n)) stageError(STAGE, 'Range-based bounds expression must be a number');
      return n;
    };
    lower = parseBound(lo, number);
    upper = parseBound(hi, number);
    checkForward(lower, upper, String);
  }
  if (sort.fields !== 1) stageError(STAGE, 'Range-based bounds require sortBy a single field');
  if (!sort.ascending) stageError(STAGE, 'Range-based bounds require an ascending sortBy');
  return { kind: 'range', lower, upper, unit };
}

/** True when the window starts at the partition's first document (nothing ever leaves it). */
export function leftUnbounded(bounds: WindowBounds): boolean {
  return bounds.lower === 'unbounded';
}

/** A window's position bounds as a tracker moves: its start and end positions, or none. */
export interface WindowPosition {
  /** True when the window holds no document (then start and end mean nothing). */
  readonly empty: boolean;
  readonly start: number;
  readonly end: number;
}

/**
 * Each document's window in turn, as a partition is read (window-partition.ts): step(i) for i =
 * 0, 1, 2, ... sets the window of document i. Starts and ends never go down along a partition, so
 * the scans of a range window go on from where the previous document's stopped (MongoDB's hints),
 * reading each document once; a documents window reads nothing (it asks only whether its end
 * exists, or how many documents there are when it is unbounded).
 */
export class WindowTracker implements WindowPosition {
  empty = true;
  start = 0;
  end = -1;
  readonly #bounds: WindowBounds;
  readonly #p: WindowPartition;
  /** The document whose window is set. */
  #done = -1;
  // Range windows: the document being worked, how far, and the scans (kept from one document to the next).
  #working = -1;
  #phase = 0;
  #lowThreshold: unknown;
  #highThreshold: unknown;
  readonly #low: PartitionCursor | undefined;
  readonly #high: PartitionCursor | undefined;
  #lowScan = 0;
  /** The scan for an unbounded lower bound is over (it stops at the first document of the window's type, for good). */
  #lowFound = false;
  #lowPastEnd = false;
  #lo = 0;
  #loPastEnd = false;
  /** The last position found in an upper bound (the previous window's end). */
  #highScan = 0;
  /** Positions below it are known to be within the upper bound (the thresholds only grow). */
  #highKnown = 0;
  #from = 0;
  #j = 0;

  constructor(bounds: WindowBounds, p: WindowPartition) {
    this.#bounds = bounds;
    this.#p = p;
    if (bounds.kind === 'range') {
      if (bounds.lower !== 'current') this.#low = p.cursor();
      if (bounds.upper !== 'current') this.#high = p.cursor();
    }
  }

  /**
   * Sets the window of document `i` (`current`). @throws QUERY_ERROR when a range window's current
   * document has a sortBy value of the wrong type
   */
  step(i: number, current: WindowEntry): Wait {
    if (this.#done === i) return undefined;
    return this.#bounds.kind === 'documents' ? this.#documents(i) : this.#range(i, current);
  }

  #set(i: number, start: number, end: number): void {
    this.#done = i;
    this.empty = end < start;
    this.start = start;
    this.end = end;
  }

  #documents(i: number): Wait {
    const { lower, upper } = this.#bounds;
    const p = this.#p;
    let end: number;
    if (upper === 'unbounded') {
      const n = p.size;
      if (n === undefined) return p.fetch(Infinity);
      end = n - 1;
    } else {
      const ahead = upper === 'current' ? 0 : upper;
      if (ahead <= 0) end = i + ahead;
      else {
        const has = p.has(i + ahead);
        if (has === undefined) return p.fetch(i + ahead);
        end = has ? i + ahead : p.size! - 1;
      }
    }
    const start = lower === 'unbounded' ? 0 : Math.max(0, i + (lower === 'current' ? 0 : lower));
    this.#set(i, start, end);
    return undefined;
  }

  #range(i: number, current: WindowEntry): Wait {
    const bounds = this.#bounds as Extract<WindowBounds, { kind: 'range' }>;
    const p = this.#p;
    const unit = bounds.unit;
    const expected = (v: unknown): boolean => (unit !== undefined ? v instanceof Date : typeof v === 'number');
    if (this.#working !== i) {
      const base = p.sortValue(current);
      if (unit !== undefined) {
        if (!(base instanceof Date)) stageError(STAGE, `Invalid range: Expected the sortBy field to be a Date, but it was ${bsonTypeOf(base)}`);
      } else {
        if (base instanceof Date) stageError(STAGE, 'Invalid range: For windows that involve date or time ranges, a unit must be provided.');
        if (typeof base !== 'number') stageError(STAGE, `Invalid range: Expected the sortBy field to be a number, but it was ${bsonTypeOf(base)}`);
      }
      const shift = (delta: number): unknown => (unit !== undefined ? addUnits(base as Date, unit, delta, STAGE) : (base as number) + delta);
      if (typeof bounds.lower === 'number') this.#lowThreshold = shift(bounds.lower);
      if (typeof bounds.upper === 'number') this.#highThreshold = shift(bounds.upper);
      this.#working = i;
      this.#phase = 0;
    }
    const sortValue = (e: WindowEntry): unknown => {
      const v = p.sortValue(e);
      return v === MISSING ? null : v;
    };
    if (this.#phase === 0) {
      if (bounds.lower === 'current') {
        this.#lo = i;
        this.#loPastEnd = false;
      } else if (bounds.lower === 'unbounded') {
        // The first document whose value has the window's type, found once.
        const low = this.#low!;
        while (!this.#lowFound) {
          const e = low.at(this.#lowScan);
          if (e === undefined) return low.fetch(this.#lowScan);
          if (e === null) this.#lowPastEnd = true;
          if (e === null || expected(sortValue(e))) {
            this.#lowFound = true;
            low.advance(Infinity);
            break;
          }
          this.#lowScan++;
          const w = p.tick();
          if (w !== undefined) return w;
        }
        this.#lo = this.#lowScan;
        this.#loPastEnd = this.#lowPastEnd;
      } else {
        const low = this.#low!;
        for (;;) {
          const e = low.at(this.#lowScan);
          if (e === undefined) return low.fetch(this.#lowScan);
          if (e === null || compareValues(sortValue(e), this.#lowThreshold) >= 0) {
            this.#loPastEnd = e === null;
            break;
          }
          this.#lowScan++;
          const w = p.tick();
          if (w !== undefined) return w;
        }
        this.#lo = this.#lowScan;
      }
      this.#phase = 1;
      const lo = this.#lo;
      if (bounds.upper === 'unbounded') this.#j = Math.max(lo, i, this.#highKnown);
      else if (bounds.upper !== 'current') {
        this.#from = Math.max(lo, this.#highScan);
        this.#j = Math.max(this.#from, this.#highKnown);
      }
    }
    const lo = this.#lo;
    if (this.#loPastEnd) {
      this.#set(i, lo, -1);
      return undefined;
    }
    if (bounds.upper === 'current') {
      this.#set(i, lo, i);
      return undefined;
    }
    const high = this.#high!;
    const unbounded = bounds.upper === 'unbounded';
    for (;;) {
      const e = high.at(this.#j);
      if (e === undefined) return high.fetch(this.#j);
      if (e === null) break;
      const v = sortValue(e);
      if (unbounded ? !expected(v) : compareValues(this.#highThreshold, v) < 0) break;
      this.#j++;
      const w = p.tick();
      if (w !== undefined) return w;
    }
    const j = this.#j;
    this.#highKnown = j;
    let hi: number;
    if (unbounded) {
      hi = j - 1;
      this.#highScan = hi;
    } else {
      // The first document scanned is already past the bound: nothing is in the window.
      hi = j === this.#from ? -1 : j - 1;
      if (hi >= 0) this.#highScan = hi;
    }
    this.#set(i, lo, hi);
    return undefined;
  }
}
