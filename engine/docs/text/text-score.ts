/**
 * The `textScore` metadata of documents (MongoDB's `{$meta: "textScore"}`): set on each document a
 * `$text` search returns, read by `$meta` in projections, sorts and expressions. A document's
 * metadata is not one of its fields: it is kept beside the document object, and stages that make
 * a new document from one (`$project`, `$addFields`, `$unwind`, ...) carry it over, as MongoDB's do.
 */

import { fail } from '../../errors.js';

// A document's score; null for a match of a `$text` query that the search itself did not match
// (another clause of its `$or` did): MongoDB gives it no score, and `$meta` reads it as missing.
const SCORES = new WeakMap<object, number | null>();

/** MongoDB's message when a `textScore` is asked of a document without one. */
export const TEXT_SCORE_UNAVAILABLE = 'query requires text score metadata, but it is not available';

export function setTextScore(doc: object, score: number): void {
  SCORES.set(doc, score);
}

/** Marks a match of a `$text` query the search did not match (another `$or` clause did): it has no score. */
export function setNoTextScore(doc: object): void {
  SCORES.set(doc, null);
}

/**
 * The document's text score; undefined for a match of a `$text` query the search itself did not
 * match (MongoDB's missing metadata: a projection leaves the field out, an expression is missing).
 * @throws QUERY_ERROR (MongoDB's message) when it comes from no `$text` query
 */
export function textScoreOf(doc: unknown): number | undefined {
  const score = typeof doc === 'object' && doc !== null ? SCORES.get(doc) : undefined;
  if (score === undefined) fail('QUERY_ERROR', TEXT_SCORE_UNAVAILABLE, { operator: '$meta' });
  return score ?? undefined;
}

/**
 * The document's text score: null for a match the search did not match (setNoTextScore), undefined
 * when it has none at all (a spilled document carries either: external-sort.ts).
 */
export function textScoreIfAny(doc: object): number | null | undefined {
  return SCORES.get(doc);
}

/** Gives `to` the text score of `from`, when it has one; returns `to`. */
export function carryTextScore<T extends object>(from: object, to: T): T {
  if (SCORES.has(from) && from !== to) SCORES.set(to, SCORES.get(from)!);
  return to;
}

// The other `$meta` names MongoDB knows: refused by name (no Atlas Search, geo, or index keys here).
const OTHER_META = new Set(['searchScore', 'searchHighlights', 'searchScoreDetails', 'searchSequenceToken', 'vectorSearchScore', 'score', 'scoreDetails', 'indexKey', 'recordId', 'sortKey', 'geoNearDistance', 'geoNearPoint', 'randVal']);

/**
 * Checks a `$meta` argument: "textScore" is the one tetradb has.
 * @throws QUERY_ERROR naming the others MongoDB knows, or with MongoDB's message for an unknown one
 */
export function checkMetaName(name: unknown, operator = '$meta'): 'textScore' {
  if (name === 'textScore') return name;
  if (typeof name === 'string' && OTHER_META.has(name)) fail('QUERY_ERROR', `unsupported: {$meta: "${name}"} (tetradb's only metadata is "textScore", the score of a $text search)`, { operator });
  return fail('QUERY_ERROR', `Unsupported argument to $meta: ${typeof name === 'string' ? name : JSON.stringify(name)}`, { operator });
}
