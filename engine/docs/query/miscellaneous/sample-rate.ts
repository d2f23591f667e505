/**
 * $sampleRate (manual: $sampleRate, MongoDB 4.4.2+): `{$sampleRate: 0.33}` at the top level of a
 * filter (or in `$and`/`$or`/`$nor`) matches each document with that probability, as MongoDB's
 * `{$expr: {$lt: [{$rand: {}}, 0.33]}}` does; 0 matches nothing and 1 everything. As in MongoDB's
 * parser, the rate is a number in [0, 1], and the operator is refused inside `$elemMatch`.
 *
 * tetradb may test one stored document against a filter several times in one request (a
 * pre-filter on the fields the filter reads, the full test, a write's re-check in the turn that
 * writes), where MongoDB tests it once. So that those tests agree, the draw for a document is a
 * function of its `_id` and a seed drawn once per compiled filter (one per request): the sample
 * is still uniform, and each document is drawn once. Where a document is tested only once (a
 * `$match` that is not the first stage, which sees documents that may share an `_id` after an
 * `$unwind`, or none), the filter is compiled for independent draws ('independent').
 */

import { getOwn, MISSING, type Doc } from '../../values.js';
import type { SampleRateNode } from '../filter-ast.js';
import { queryError, type SampleRateOperator } from '../operator.js';

/** How a compiled filter draws for $sampleRate: by `_id` with one seed ('stable'), or afresh per test. */
export type Sampling = 'stable' | 'independent';

export const sampleRateOperator: SampleRateOperator = {
  kind: 'sampleRate',
  parse(operand, ctx): SampleRateNode {
    if (!ctx.exprAllowed) queryError('$sampleRate', '$sampleRate can only be applied to the top-level document');
    if (typeof operand !== 'number') queryError('$sampleRate', 'argument to $sampleRate must be a numeric type');
    if (!(operand >= 0 && operand <= 1)) queryError('$sampleRate', 'numeric argument to $sampleRate must be in [0, 1]');
    return { kind: 'sampleRate', rate: operand };
  },
};

// A uniform value in [0, 1) from a seed and an id (a 32-bit multiply-xorshift hash, MurmurHash3's
// finaliser at the end): the same pair always draws the same value.
function idDraw(seed: number, id: unknown): number {
  const text = `${typeof id}:${String(id)}`;
  let h = seed ^ text.length;
  for (let i = 0; i < text.length; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return (h >>> 0) / 2 ** 32;
}

/**
 * The draws of `$rand` in one test of a stored document by a 'stable' filter: the k-th draw is a
 * function of the seed, the document's `_id` and k, so every test of the document in the request
 * draws the same numbers (see the file comment: the same reason as for $sampleRate).
 */
export function idDraws(seed: number, id: unknown): () => number {
  let k = 0;
  return () => idDraw((seed ^ Math.imul(++k, 0x9e3779b1)) >>> 0, id);
}

/** The predicate of a $sampleRate node (see the file comment). */
export function compileSampleRate(node: SampleRateNode, sampling: Sampling): (doc: Doc) => boolean {
  const rate = node.rate;
  if (rate <= 0) return () => false;
  if (rate >= 1) return () => true;
  if (sampling === 'independent') return () => Math.random() < rate;
  const seed = Math.floor(Math.random() * 2 ** 32);
  return (doc) => {
    const id = getOwn(doc, '_id');
    return (id === MISSING ? Math.random() : idDraw(seed, id)) < rate;
  };
}
