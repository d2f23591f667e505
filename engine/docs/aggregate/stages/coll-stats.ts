/**
 * $collStats (manual: $collStats): one document about the pipeline's collection, `{ns, host,
 * localTime}` and, when asked, `storageStats` (`{scale}`: sizes divided by it) and `count`. The
 * first stage of a pipeline over a collection; it reads none of the collection's documents
 * through the pipeline (StageContext.collStats). `latencyStats` and `queryExecStats` are refused
 * by name: tetradb keeps no per-collection latency or plan statistics.
 */

import { bsonTypeOf, isPlainObject } from '../../values.js';
import { needsOf } from '../dependencies.js';
import { stageError, type Stage } from '../stage.js';

export const COLL_STATS_STAGE = '$collStats';

/** What a $collStats asks for. */
export interface CollStatsSpec {
  /** storageStats with its scale (a whole number >= 1), or undefined when not asked. */
  readonly storageStats: { readonly scale: number } | undefined;
  readonly count: boolean;
}

const UNSUPPORTED: Record<string, string> = {
  latencyStats: 'tetradb keeps no per-collection latency statistics',
  queryExecStats: 'tetradb keeps no per-collection query statistics (see $indexStats for index use)',
};

/** The $collStats stage. @throws QUERY_ERROR for an argument MongoDB refuses, or a statistic tetradb does not keep */
export function collStatsStage(spec: unknown): Stage {
  const parsed = parseCollStats(spec);
  return {
    name: COLL_STATS_STAGE,
    reads: [],
    needs: needsOf([], [], true),
    async *run(_input, ctx) {
      if (ctx.collStats === undefined) throw new Error('$collStats run without StageContext.collStats');
      yield [await ctx.collStats(parsed)];
    },
  };
}

function parseCollStats(spec: unknown): CollStatsSpec {
  if (!isPlainObject(spec)) stageError(COLL_STATS_STAGE, `$collStats must take a nested object but found: ${JSON.stringify(spec) ?? String(spec)}`);
  let storageStats: CollStatsSpec['storageStats'];
  let count = false;
  for (const [field, value] of Object.entries(spec)) {
    const unsupported = UNSUPPORTED[field];
    if (unsupported !== undefined) stageError(COLL_STATS_STAGE, `$collStats: ${field} is not supported: ${unsupported}`);
    if (field !== 'storageStats' && field !== 'count') stageError(COLL_STATS_STAGE, `BSON field '$collStats.${field}' is an unknown field.`);
    if (!isPlainObject(value)) stageError(COLL_STATS_STAGE, `BSON field '$collStats.${field}' is the wrong type '${bsonTypeOf(value)}', expected type 'object'`);
    if (field === 'count') {
      for (const key of Object.keys(value)) stageError(COLL_STATS_STAGE, `BSON field '$collStats.count.${key}' is an unknown field.`);
      count = true;
      continue;
    }
    let scale = 1;
    for (const [key, v] of Object.entries(value)) {
      if (key !== 'scale') stageError(COLL_STATS_STAGE, `BSON field '$collStats.storageStats.${key}' is an unknown field.`);
      if (typeof v !== 'number' || Number.isNaN(v)) stageError(COLL_STATS_STAGE, `BSON field '$collStats.storageStats.scale' is the wrong type '${bsonTypeOf(v)}', expected types '[long, int, decimal, double]'`);
      // MongoDB takes the whole part of a fractional scale (1023.999 is 1023), after its bound check.
      if (!(v >= 1)) stageError(COLL_STATS_STAGE, `BSON field 'scale' value must be >= 1, actual value '${Math.trunc(v)}'`);
      scale = Math.min(Math.trunc(v), Number.MAX_SAFE_INTEGER);
    }
    storageStats = { scale };
  }
  return { storageStats, count };
}
