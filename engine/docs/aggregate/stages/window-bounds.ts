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
 * partition, which lets the window functions slide (window-functions.ts).
 */

import { bsonTypeOf, compareValues, isPlainObject, MISSING } from '../../values.js';
import { exprFields } from '../dependencies.js';
import { addUnits, type TimeUnit } from '../expression/date-units.js';
import { Scope } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { stageError } from '../stage.js';

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

/** Each document's window in a partition: positions start[i]..end[i], empty when start > end. */
export interface Windows {
  readonly start: Int32Array;
  readonly end: Int32Array;
}

/**
 * The windows of a partition of `n` documents; `sortValues` are the values of the sortBy field
 * (range windows only). @throws QUERY_ERROR when a current document's sortBy value has the wrong type
 */
export function windowsOf(bounds: WindowBounds, n: number, sortValues?: readonly unknown[]): Windows {
  const start = new Int32Array(n);
  const end = new Int32Array(n);
  if (bounds.kind === 'documents') {
    for (let i = 0; i < n; i++) {
      const lo = bounds.lower === 'unbounded' ? 0 : i + (bounds.lower === 'current' ? 0 : bounds.lower);
      const hi = bounds.upper === 'unbounded' ? n - 1 : i + (bounds.upper === 'current' ? 0 : bounds.upper);
      start[i] = Math.max(0, lo);
      end[i] = Math.min(n - 1, hi);
    }
    return { start, end };
  }
  const values = sortValues!;
  const unit = bounds.unit;
  const expected = (v: unknown): boolean => (unit !== undefined ? v instanceof Date : typeof v === 'number');
  const shift = (base: unknown, delta: number): unknown =>
    unit !== undefined ? addUnits(base as Date, unit, delta, STAGE) : (base as number) + delta;
  // MongoDB's scans, kept from one document to the next (its hints): the thresholds only grow.
  let lowScan = 0;
  let highScan = 0;
  for (let i = 0; i < n; i++) {
    const base = values[i];
    if (unit !== undefined) {
      if (!(base instanceof Date)) stageError(STAGE, `Invalid range: Expected the sortBy field to be a Date, but it was ${bsonTypeOf(base)}`);
    } else {
      if (base instanceof Date) stageError(STAGE, 'Invalid range: For windows that involve date or time ranges, a unit must be provided.');
      if (typeof base !== 'number') stageError(STAGE, `Invalid range: Expected the sortBy field to be a number, but it was ${bsonTypeOf(base)}`);
    }
    let lo: number;
    if (bounds.lower === 'current') lo = i;
    else if (bounds.lower === 'unbounded') {
      lo = lowScan;
      while (lo < n && !expected(values[lo])) lo++;
      lowScan = lo;
    } else {
      const threshold = shift(base, bounds.lower);
      lo = lowScan;
      while (lo < n && compareValues(values[lo] === MISSING ? null : values[lo], threshold) < 0) lo++;
      lowScan = lo;
    }
    let hi: number;
    if (lo >= n) hi = -1;
    else if (bounds.upper === 'current') hi = i;
    else if (bounds.upper === 'unbounded') {
      let j = Math.max(lo, i, highScan);
      while (j < n && expected(values[j])) j++;
      hi = j - 1;
      highScan = hi;
    } else {
      const threshold = shift(base, bounds.upper);
      const from = Math.max(lo, highScan);
      let j = from;
      while (j < n && compareValues(threshold, values[j] === MISSING ? null : values[j]) >= 0) j++;
      // The first document scanned is already past the bound: nothing is in the window.
      hi = j === from ? -1 : j - 1;
      if (hi >= 0) highScan = hi;
    }
    // An empty window is [n, -1]: the window functions give their empty value and move on.
    start[i] = hi < lo ? n : lo;
    end[i] = hi < lo ? -1 : hi;
  }
  return { start, end };
}
