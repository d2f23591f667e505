/**
 * $bucketAuto (manual: $bucketAuto): the input sorted by its `groupBy` value (missing as null, BSON
 * order) and cut into at most `buckets` buckets of about the same count, with MongoDB's algorithm
 * (document_source_bucket_auto): each bucket takes round(n / buckets) documents, then every
 * following document with the same value (a value never straddles two buckets); the last bucket
 * takes the rest. `_id` is `{min, max}`: min inclusive, max the next bucket's min (inclusive for
 * the last bucket, its largest value). With `granularity`, values must be non-negative numbers and
 * each boundary is rounded up to the series (granularity.ts), the bucket absorbing the values below
 * it; the first min is rounded down and the last max up. `output` holds accumulators as in $group
 * (default a count). The input is held within the blocking bound.
 */

import { bsonTypeOf, compareValues, isPlainObject, MISSING, type Doc } from '../../values.js';
import { compileExpression } from '../expression/operator-table.js';
import { Scope } from '../expression/expression.js';
import { needsOf } from '../dependencies.js';
import { BlockingBudget, chunksOf, gather, pushAll, stageError, type Stage } from '../stage.js';
import { granularityRounder, type GranularityRounder } from './granularity.js';
import { groupStage } from './group.js';

interface Bucket {
  min: unknown;
  max: unknown;
  docs: Doc[];
}

/** MongoDB's populateBuckets over entries sorted by key. */
function cut(entries: ReadonlyArray<{ key: unknown; doc: Doc }>, count: number, rounder: GranularityRounder | undefined): Bucket[] {
  const buckets: Bucket[] = [];
  const size = Math.max(1, Math.round(entries.length / count));
  let i = 0;
  for (let b = 0; b < count && i < entries.length; b++) {
    const first = entries[i++]!;
    const bucket: Bucket = { min: first.key, max: first.key, docs: [first.doc] };
    const add = (): void => {
      const e = entries[i++]!;
      bucket.max = e.key;
      bucket.docs.push(e.doc);
    };
    if (b === count - 1) {
      while (i < entries.length) add();
    } else {
      for (let j = 0; j < size - 1 && i < entries.length; j++) add();
      if (rounder !== undefined) {
        const boundary = rounder.roundUp(bucket.max as number);
        // Values below the rounded boundary belong to this bucket too.
        while (i < entries.length && compareValues(boundary, entries[i]!.key) > 0) add();
        if (i < entries.length) bucket.max = boundary;
      } else {
        // Values equal to the last one stay in this bucket.
        while (i < entries.length && compareValues(bucket.max, entries[i]!.key) === 0) add();
      }
    }
    const previous = buckets[buckets.length - 1];
    if (previous !== undefined) {
      if (rounder !== undefined) {
        // A first bucket that ends at 0: its max becomes the next min rounded down.
        if (previous.max === 0) previous.max = rounder.roundDown(bucket.min as number);
        bucket.min = previous.max;
      } else previous.max = bucket.min;
    }
    buckets.push(bucket);
  }
  if (rounder !== undefined && buckets.length > 0) {
    buckets[0]!.min = rounder.roundDown(buckets[0]!.min as number);
    const last = buckets[buckets.length - 1]!;
    last.max = rounder.roundUp(last.max as number);
  }
  return buckets;
}

export function bucketAutoStage(spec: unknown, names: ReadonlySet<string>): Stage {
  const stage = '$bucketAuto';
  if (!isPlainObject(spec)) stageError(stage, `The argument to $bucketAuto must be an object, but found type: ${bsonTypeOf(spec)}`);
  let count: number | undefined;
  let rounder: GranularityRounder | undefined;
  let output: Doc = { count: { $sum: 1 } };
  for (const [k, v] of Object.entries(spec)) {
    switch (k) {
      case 'groupBy':
        if (!(typeof v === 'string' && v.startsWith('$')) && !(isPlainObject(v) && Object.keys(v)[0]?.startsWith('$'))) {
          stageError(stage, `The $bucketAuto 'groupBy' field must be defined as a $-prefixed path or an expression object, but found: ${JSON.stringify(v)}`);
        }
        break;
      case 'buckets':
        if (typeof v !== 'number') stageError(stage, `The $bucketAuto 'buckets' field must be a numeric value, but found type: ${bsonTypeOf(v)}`);
        if (!Number.isInteger(v) || v < -2147483648 || v > 2147483647) stageError(stage, `The $bucketAuto 'buckets' field must be representable as a 32-bit integer, but found ${v}`);
        if (v <= 0) stageError(stage, `The $bucketAuto 'buckets' field must be greater than 0, but found: ${v}`);
        count = v;
        break;
      case 'output':
        if (!isPlainObject(v)) stageError(stage, `The $bucketAuto 'output' field must be an object, but found type: ${bsonTypeOf(v)}`);
        output = v;
        break;
      case 'granularity':
        if (typeof v !== 'string') stageError(stage, `The $bucketAuto 'granularity' field must be a string, but found type: ${bsonTypeOf(v)}`);
        rounder = granularityRounder(v);
        break;
      default:
        stageError(stage, `Unrecognized option to $bucketAuto: ${k}`);
    }
  }
  if (!Object.hasOwn(spec, 'groupBy') || count === undefined) stageError(stage, "$bucketAuto requires 'groupBy' and 'buckets' to be specified");
  const groupBy = compileExpression(spec['groupBy'], names);
  // The accumulators are $group's, keyed by the bucket each document was cut into; one group
  // stage per run (a $facet or $lookup pipeline may run several at once), this one checks the spec.
  const groupOf = (bucketOf: ReadonlyMap<Doc, number>): Stage => groupStage({ _id: null, ...output }, names, (scope) => bucketOf.get(scope.get('CURRENT') as Doc));
  groupOf(new Map());
  const buckets = count;
  return {
    name: stage,
    reads: [],
    needs: needsOf([spec['groupBy'], ...Object.values(output).map((acc) => (isPlainObject(acc) ? Object.values(acc)[0] : acc))], [], true),
    async *run(input, ctx) {
      const docs = await gather(input, stage, new BlockingBudget(stage, ctx.memory));
      const entries = docs.map((doc) => {
        const v = groupBy(Scope.of(doc, ctx.vars));
        const key = v === MISSING ? null : v;
        if (rounder !== undefined) {
          if (typeof key !== 'number') stageError(stage, `$bucketAuto can specify a 'granularity' with numeric boundaries only, but found a value with type: ${bsonTypeOf(key)}`);
          if (Number.isNaN(key)) stageError(stage, "$bucketAuto can specify a 'granularity' with numeric boundaries only, but found a NaN");
          if (key < 0) stageError(stage, "$bucketAuto can specify a 'granularity' with non-negative numbers only, but found a negative number");
        }
        return { key, doc };
      });
      // Stable: documents with equal values keep their input order.
      entries.sort((a, b) => compareValues(a.key, b.key));
      const cutInto = cut(entries, buckets, rounder);
      const bucketOf = new Map<Doc, number>();
      cutInto.forEach((b, i) => {
        for (const d of b.docs) bucketOf.set(d, i);
      });
      const grouped: Doc[] = [];
      for await (const c of groupOf(bucketOf).run(chunksOf(cutInto.flatMap((b) => b.docs)), ctx)) pushAll(grouped, c);
      yield* chunksOf(grouped.map((g) => ({ ...g, _id: { min: cutInto[g['_id'] as number]!.min, max: cutInto[g['_id'] as number]!.max } })));
    },
  };
}
