/**
 * $sort (the find sort: sort.ts, BSON order, stable), $skip and $limit. $sort gathers its input
 * within the blocking bound; a $limit right after it keeps only the best documents as they come.
 */

import { compileSort, sortDocuments } from '../../sort.js';
import type { Doc } from '../../values.js';
import { needsOf, PASS_THROUGH } from '../dependencies.js';
import { BlockingBudget, chunksOf, stageError, type Stage } from '../stage.js';

function count(stage: string, v: unknown, min: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) stageError(stage, `the ${stage} argument must be ${min === 0 ? 'a non-negative' : 'a positive'} integer, found ${JSON.stringify(v)}`);
  return v;
}

/** A $sort stage, with what a pipeline needs to know to sort documents decoded in part (pipeline.ts, top-k). */
export interface SortStage extends Stage {
  readonly name: '$sort';
  /** The $limit right after it, when there is one. */
  readonly limit: number | undefined;
  /** The paths its keys read; undefined when a key is `{$meta: ...}`. */
  readonly keyPaths: readonly string[] | undefined;
}

export function sortStage(spec: unknown, limit?: number): SortStage {
  // `{$meta: "textScore"}` keys read the documents' text scores (text/text-score.ts).
  const sort = compileSort(spec, { meta: true });
  if (sort.keys.length === 0) stageError('$sort', '$sort stage must have at least one sort key');
  return {
    name: '$sort',
    limit,
    keyPaths: sort.keys.some((k) => k.meta !== undefined) ? undefined : sort.keys.map((k) => k.path),
    reads: [],
    needs: needsOf([], sort.keys.filter((k) => k.meta === undefined).map((k) => k.path), false),
    async *run(input) {
      const budget = new BlockingBudget('$sort');
      let docs: Doc[] = [];
      const sizes = new Map<Doc, number>();
      for await (const chunk of input) {
        for (const d of chunk) {
          const n = budget.add(d);
          if (limit !== undefined) sizes.set(d, n);
          docs.push(d);
        }
        // With a $limit after it, a sort holds at most twice the limit between trims, and only
        // what it holds counts against the bound.
        if (limit !== undefined && docs.length > 2 * limit + 256) {
          const sorted = sortDocuments(docs, sort);
          for (const d of sorted.slice(limit)) {
            budget.release(sizes.get(d)!);
            sizes.delete(d);
          }
          docs = sorted.slice(0, limit);
        }
      }
      const sorted = sortDocuments(docs, sort);
      yield* chunksOf(limit === undefined ? sorted : sorted.slice(0, limit));
    },
  };
}

export function skipStage(spec: unknown): Stage {
  const n = count('$skip', spec, 0);
  return {
    name: '$skip',
    reads: [],
    needs: PASS_THROUGH,
    async *run(input) {
      let skipped = 0;
      for await (const chunk of input) {
        if (skipped >= n) {
          yield chunk;
          continue;
        }
        const take = chunk.slice(Math.min(chunk.length, n - skipped));
        skipped += chunk.length - take.length;
        if (take.length > 0) yield take;
      }
    },
  };
}

export function limitStage(spec: unknown): Stage & { readonly limit: number } {
  const n = count('$limit', spec, 1);
  return {
    name: '$limit',
    limit: n,
    reads: [],
    needs: PASS_THROUGH,
    async *run(input) {
      let taken = 0;
      for await (const chunk of input) {
        const take = chunk.slice(0, n - taken);
        taken += take.length;
        if (take.length > 0) yield take;
        if (taken >= n) return;
      }
    },
  };
}
