/**
 * $unionWith (manual: $unionWith): after its input, the documents of another collection of the
 * same tenant (on the pipeline's snapshot), through their own pipeline when one is given:
 * `{$unionWith: "other"}` or `{$unionWith: {coll, pipeline}}`. A pipeline starting with
 * $documents reads no collection: `coll` is then optional, and ignored when given (MongoDB 8).
 */

import { validateCollectionName } from '../../catalog.js';
import { isPlainObject } from '../../values.js';
import { READS_ALL } from '../dependencies.js';
import { stageError, type Stage } from '../stage.js';
import { noInput, type SubPipelineCompiler } from './lookup.js';
import { startsWithDocuments } from './documents.js';
import { bindScope } from '../../let-variables.js';

export function unionWithStage(spec: unknown, names: ReadonlySet<string>, compileSub: SubPipelineCompiler): Stage {
  const stage = '$unionWith';
  const options = typeof spec === 'string' ? { coll: spec } : spec;
  if (!isPlainObject(options)) stageError(stage, '$unionWith takes a collection name or {coll, pipeline}');
  for (const k of Object.keys(options)) if (k !== 'coll' && k !== 'pipeline') stageError(stage, `unknown argument to $unionWith: ${k}`);
  let coll: string | undefined;
  if (Object.hasOwn(options, 'coll')) coll = validateCollectionName(options['coll']);
  else if (!startsWithDocuments(options['pipeline'])) stageError(stage, '$unionWith stage without explicit collection must have a pipeline with $documents as first stage');
  const sub = Object.hasOwn(options, 'pipeline') ? compileSub(options['pipeline'], names) : undefined;
  const generated = sub?.generated === true;
  return {
    name: stage,
    reads: generated || coll === undefined ? (sub?.reads ?? []) : [coll, ...(sub?.reads ?? [])],
    // Its input passes through as it is: whatever later stages read of it.
    needs: READS_ALL,
    async *run(input, ctx) {
      yield* input;
      if (sub !== undefined && generated) yield* sub.run(noInput(), ctx);
      else {
        // A leading $match is the read's filter (through the planner, with the pipeline's variables).
        const leading = sub?.leading;
        const other = ctx.scan(coll!, leading && (ctx.vars === undefined ? leading : bindScope(leading, ctx.vars)));
        yield* sub === undefined ? other : sub.run(other, ctx, leading !== undefined);
      }
    },
  };
}
