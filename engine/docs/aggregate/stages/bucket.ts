/**
 * $bucket (manual: $bucket): documents grouped by which of the ascending `boundaries` ranges
 * (lower bound included) their `groupBy` value falls in, `_id` being the range's lower bound;
 * values outside every range go to the `default` bucket, and with no `default` they are an
 * error. `output` holds accumulators as in $group (default `{count: {$sum: 1}}`). Buckets come out
 * in boundary order, the default last.
 */

import { bsonTypeOf, compareValues, isPlainObject, typeBracket, type Doc } from '../../values.js';
import { compareAgg } from '../expression/comparison.js';
import { compileExpression } from '../expression/operator-table.js';
import { needsOf } from '../dependencies.js';
import { chunksOf, pushAll, stageError, type Stage } from '../stage.js';
import { groupStage } from './group.js';

export function bucketStage(spec: unknown, names: ReadonlySet<string>): Stage {
  const stage = '$bucket';
  if (!isPlainObject(spec)) stageError(stage, 'the $bucket specification must be an object');
  for (const k of Object.keys(spec)) if (!['groupBy', 'boundaries', 'default', 'output'].includes(k)) stageError(stage, `unrecognized option to $bucket: ${k}`);
  if (!Object.hasOwn(spec, 'groupBy') || !Object.hasOwn(spec, 'boundaries')) stageError(stage, "$bucket requires 'groupBy' and 'boundaries'");
  const boundaries = spec['boundaries'];
  if (!Array.isArray(boundaries) || boundaries.length < 2) stageError(stage, "The $bucket 'boundaries' field must be an array with at least two values");
  for (let i = 1; i < boundaries.length; i++) {
    // As MongoDB: one type for all boundaries, numbers of any kind together.
    if (typeBracket(boundaries[i - 1]) !== typeBracket(boundaries[i])) {
      stageError(stage, `All values in the 'boundaries' option to $bucket must have the same type; found ${bsonTypeOf(boundaries[i - 1])} and ${bsonTypeOf(boundaries[i])}`);
    }
    if (compareValues(boundaries[i - 1], boundaries[i]) >= 0) stageError(stage, "The $bucket 'boundaries' field must be an array of values in ascending order");
  }
  const hasDefault = Object.hasOwn(spec, 'default');
  const fallback = spec['default'];
  if (hasDefault && compareValues(fallback, boundaries[0]) >= 0 && compareValues(fallback, boundaries[boundaries.length - 1]) < 0) {
    stageError(stage, "The $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary");
  }
  const groupBy = compileExpression(spec['groupBy'], names);
  const output = spec['output'] ?? { count: { $sum: 1 } };
  if (!isPlainObject(output)) stageError(stage, "The $bucket 'output' field must be an object");
  const bucketOf = (v: unknown): unknown => {
    let lo = 0;
    let hi = boundaries.length - 1;
    if (compareAgg(v, boundaries[0]) < 0 || compareAgg(v, boundaries[hi]) >= 0) {
      if (!hasDefault) stageError(stage, '$bucket could not find a matching branch for an input, and no default was specified.');
      return fallback;
    }
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if (compareAgg(v, boundaries[mid]) < 0) hi = mid;
      else lo = mid;
    }
    return boundaries[lo];
  };
  // The grouping itself is a $group keyed by the bucket's lower bound.
  const group = groupStage({ _id: null, ...output }, names, (scope) => bucketOf(groupBy(scope)));
  return {
    name: stage,
    reads: [],
    needs: needsOf([spec['groupBy'], ...Object.values(output).map((acc) => (isPlainObject(acc) ? Object.values(acc)[0] : acc))], [], true),
    async *run(input, ctx) {
      const out: Doc[] = [];
      for await (const c of group.run(input, ctx)) pushAll(out, c);
      out.sort((a, b) => {
        const da = compareValues(a['_id'], fallback) === 0 && hasDefault;
        const db = compareValues(b['_id'], fallback) === 0 && hasDefault;
        if (da !== db) return da ? 1 : -1;
        return compareValues(a['_id'], b['_id']);
      });
      yield* chunksOf(out);
    },
  };
}
