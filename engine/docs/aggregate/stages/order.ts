/**
 * $sort (the find sort: sort.ts, BSON order, stable), $skip and $limit. $sort gathers its input
 * within the blocking bound, and spills sorted runs to disk past it (external-sort.ts); a $limit
 * right after it keeps only the best documents as they come (and spills only when those pass it).
 */

import { DocSorter, refuseSort } from '../../external-sort.js';
import { compileSort } from '../../sort.js';
import type { Doc } from '../../values.js';
import { needsOf, PASS_THROUGH } from '../dependencies.js';
import { BlockingBudget, stageError, type QueryMemory, type Stage } from '../stage.js';

/** `v` when it is a valid $skip (min 0) or $limit (min 1) argument, else undefined. */
export function validCount(v: unknown, min: number): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= min ? v : undefined;
}

function count(stage: string, v: unknown, min: number): number {
  const n = validCount(v, min);
  if (n === undefined) stageError(stage, `the ${stage} argument must be ${min === 0 ? 'a non-negative' : 'a positive'} integer, found ${JSON.stringify(v)}`);
  return n;
}

/** A $sort stage, with what a pipeline needs to know to sort documents decoded in part (pipeline.ts, top-k). */
export interface SortStage extends Stage {
  readonly name: '$sort';
  /** How many documents it keeps: the $limit right after it, or the $skip and $limit after it together. */
  readonly limit: number | undefined;
  /** The $skip between it and its $limit, counted in `limit`. */
  readonly skip?: number | undefined;
  /** The paths its keys read; undefined when a key is `{$meta: ...}`. */
  readonly keyPaths: readonly string[] | undefined;
}

export function sortStage(spec: unknown, limit?: number, skip?: number): SortStage {
  // `{$meta: "textScore"}` keys read the documents' text scores (text/text-score.ts).
  const sort = compileSort(spec, { meta: true });
  if (sort.keys.length === 0) stageError('$sort', '$sort stage must have at least one sort key');
  return {
    name: '$sort',
    limit,
    skip,
    keyPaths: sort.keys.some((k) => k.meta !== undefined) ? undefined : sort.keys.map((k) => k.path),
    reads: [],
    needs: needsOf([], sort.keys.filter((k) => k.meta === undefined).map((k) => k.path), false),
    async *run(input, ctx) {
      // Past the bound, sorted runs go to disk and are merged at the end (external-sort.ts).
      const sorter = new DocSorter(sort, { memory: ctx.memory, keep: limit, refuse: refuseSortStage });
      for await (const chunk of input) {
        for (const d of chunk) {
          const spilled = sorter.add(d);
          if (spilled !== undefined) await spilled;
        }
      }
      yield* sorter.sorted();
    },
  };
}

/** allowDiskUse false: MongoDB's sorter message; no spill area (a library run): the bound's own. @throws QUERY_ERROR */
function refuseSortStage(memory: QueryMemory): never {
  if (!memory.allowDiskUse) refuseSort(memory);
  return new BlockingBudget('$sort', memory).refuse();
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
