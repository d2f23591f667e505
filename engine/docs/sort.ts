/**
 * Sort specifications (`{a: 1, "b.c": -1}`) compiled into comparators with MongoDB's semantics
 * (manual: cursor.sort and "Comparison/Sort Order"):
 * - values compare in BSON type order (compareValues), a missing field like null;
 * - an array field sorts by its smallest element ascending and its largest descending (values
 *   reached through arrays of documents count the same way);
 * - an empty array sorts below null and missing fields, in either direction's terms (first when
 *   ascending, last when descending).
 * Ties keep their input order (sortDocuments is stable); MongoDB leaves tie order unspecified.
 */

import { fail } from '../errors.js';
import { DOCS_LIMITS } from './limits.js';
import { collectValues, parsePath } from './path.js';
import { checkMetaName, textScoreOf } from './text/index.js';
import { compareValues, isPlainObject, MISSING } from './values.js';

/** One key of a sort specification. */
export interface SortKey {
  readonly path: string;
  readonly direction: 1 | -1;
  /** `{$meta: "textScore"}`: the document's text score, highest first (no field, no index gives it). */
  readonly meta?: 'textScore';
}

/** Options of compileSort. */
export interface SortOptions {
  /** `{$meta: "textScore"}` keys are allowed (a find's, a change's or a $sort stage's sort). */
  readonly meta?: boolean;
}

/** A compiled sort: its keys, and a comparator over documents. */
export interface CompiledSort {
  readonly keys: readonly SortKey[];
  /** Orders two documents (or any values: a non-document has every field missing). */
  compare(a: unknown, b: unknown): number;
  /** A document's sort keys, computed once: compareKeyed of two documents' keys is compare of the documents. */
  keyOf(doc: unknown): unknown[];
  compareKeyed(a: readonly unknown[], b: readonly unknown[]): number;
}

// The sort key of an empty array: below null (MongoDB keys it as undefined).
const EMPTY_ARRAY: unique symbol = Symbol('empty array');

/** Sort keys (keyOf) as plain data, for a spill record: each key `[0]` for an empty array, `[1, value]` otherwise. */
export function sortKeyToData(keys: readonly unknown[]): unknown[] {
  return keys.map((k) => (k === EMPTY_ARRAY ? [0] : [1, k]));
}

/** The sort keys sortKeyToData wrote. */
export function sortKeyFromData(data: readonly unknown[]): unknown[] {
  return data.map((d) => ((d as unknown[])[0] === 0 ? EMPTY_ARRAY : (d as unknown[])[1]));
}

function compareKeys(a: unknown, b: unknown): number {
  if (a === EMPTY_ARRAY) return b === EMPTY_ARRAY ? 0 : -1;
  if (b === EMPTY_ARRAY) return 1;
  return compareValues(a, b);
}

function sortKeyOf(doc: unknown, parts: readonly string[], direction: 1 | -1): unknown {
  if (!isPlainObject(doc)) return null;
  let best: unknown = null;
  let found = false;
  const consider = (v: unknown): void => {
    if (!found || compareKeys(v, best) * direction < 0) best = v;
    found = true;
  };
  for (const v of collectValues(doc, parts, 'no-traversal')) {
    if (!Array.isArray(v)) consider(v === MISSING ? null : v);
    else if (v.length === 0) consider(EMPTY_ARRAY);
    else for (const el of v) consider(el);
  }
  return best;
}

function invalid(message: string, details: Record<string, unknown> = {}): never {
  fail('QUERY_ERROR', message, { operator: '$sort', ...details });
}

function checkSortPath(path: string): string[] {
  if (path === '') invalid('sort field paths must not be empty', { path });
  const parts = parsePath(path);
  for (const part of parts) {
    if (part === '') invalid(`sort field path '${path}' has an empty field name`, { path });
    if (part.startsWith('$')) invalid(`sort field path '${path}' must not have a field name starting with '$'`, { path });
  }
  return parts;
}

/**
 * Compiles a sort specification: an object of paths to 1 (ascending) or -1 (descending);
 * undefined, null and {} mean no order. @throws QUERY_ERROR
 */
export function compileSort(spec: unknown, options: SortOptions = {}): CompiledSort {
  if (spec === undefined || spec === null) spec = {};
  if (!isPlainObject(spec)) invalid('sort must be an object such as {"a": 1, "b": -1}');
  const names = Object.keys(spec);
  if (names.length > DOCS_LIMITS.maxSortKeys) invalid(`sort accepts at most ${DOCS_LIMITS.maxSortKeys} keys`, { limit: DOCS_LIMITS.maxSortKeys });
  const keys: SortKey[] = [];
  const parsed: Array<{ parts: string[]; direction: 1 | -1; meta?: 'textScore' }> = [];
  for (const path of names) {
    const direction = spec[path];
    if (isPlainObject(direction) && Object.hasOwn(direction, '$meta')) {
      if (options.meta !== true) invalid(`unsupported: $meta sort on '${path}'`, { path });
      if (Object.keys(direction).length !== 1) invalid(`Cannot have additional keys in a $meta sort specification: '${path}'`, { path });
      // A text score sorts highest first, as MongoDB's does.
      const meta = checkMetaName(direction['$meta'], '$sort');
      keys.push({ path, direction: -1, meta });
      parsed.push({ parts: checkSortPath(path), direction: -1, meta });
      continue;
    }
    if (direction !== 1 && direction !== -1) invalid(`$sort key ordering must be 1 (for ascending) or -1 (for descending): '${path}'`, { path });
    keys.push({ path, direction });
    parsed.push({ parts: checkSortPath(path), direction });
  }
  // A match without a text score (another clause of the `$text` query's `$or` matched it) ranks
  // as 0, the score MongoDB's sort key generator gives missing metadata.
  const keyOfOne = (doc: unknown, k: (typeof parsed)[number]): unknown => (k.meta !== undefined ? (textScoreOf(doc) ?? 0) : sortKeyOf(doc, k.parts, k.direction));
  const keyOf = (doc: unknown): unknown[] => parsed.map((k) => keyOfOne(doc, k));
  const compareKeyed = (x: readonly unknown[], y: readonly unknown[]): number => {
    for (let i = 0; i < parsed.length; i++) {
      const c = compareKeys(x[i], y[i]);
      if (c !== 0) return c * parsed[i]!.direction;
    }
    return 0;
  };
  return {
    keys,
    compare(a, b) {
      for (const k of parsed) {
        const c = compareKeys(keyOfOne(a, k), keyOfOne(b, k));
        if (c !== 0) return c * k.direction;
      }
      return 0;
    },
    keyOf,
    compareKeyed,
  };
}

/** A sorted copy of `docs`, computing each document's keys once; stable. */
export function sortDocuments<T>(docs: readonly T[], sort: CompiledSort): T[] {
  if (sort.keys.length === 0) return [...docs];
  const decorated = docs.map((doc, index) => ({ doc, index, keys: sort.keyOf(doc) }));
  decorated.sort((x, y) => sort.compareKeyed(x.keys, y.keys) || x.index - y.index);
  return decorated.map((d) => d.doc);
}
