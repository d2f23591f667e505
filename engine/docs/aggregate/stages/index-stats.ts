/**
 * $indexStats (manual: $indexStats): a document per index of the collection, with how many
 * operations read it since counting began (engine/docs/index-stats.ts) and its specification, as
 * MongoDB gives them: `{name, key, host, accesses: {ops, since}, spec: {v, key, name, ...}}`, and
 * `building: true` for an index whose build has not finished. The first stage of a pipeline over
 * a collection; it reads none of the collection's documents (StageContext.indexStats).
 */

import { isPlainObject } from '../../values.js';
import { needsOf } from '../dependencies.js';
import { chunksOf, stageError, type Stage } from '../stage.js';

export const INDEX_STATS_STAGE = '$indexStats';

/** The $indexStats stage. @throws QUERY_ERROR (MongoDB's 28803) for an argument other than an object */
export function indexStatsStage(spec: unknown): Stage {
  if (!isPlainObject(spec)) stageError(INDEX_STATS_STAGE, 'The $indexStats stage specification must be an empty object');
  if (Object.keys(spec).length > 0) stageError(INDEX_STATS_STAGE, 'The $indexStats stage specification must be an empty object');
  return {
    name: INDEX_STATS_STAGE,
    reads: [],
    needs: needsOf([], [], true),
    async *run(_input, ctx) {
      if (ctx.indexStats === undefined) throw new Error('$indexStats run without StageContext.indexStats');
      yield* chunksOf(ctx.indexStats());
    },
  };
}
