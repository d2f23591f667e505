/**
 * $facet: several sub-pipelines over the same input (gathered within the blocking bound), one
 * output document with each one's results in an array field.
 */

import { isPlainObject, setOwn, type Doc } from '../../values.js';
import { BlockingBudget, chunksOf, gather, outputField, pushAll, stageError, type Stage } from '../stage.js';
import type { SubPipelineCompiler } from './lookup.js';

const NOT_IN_FACET = new Set(['$facet', '$out', '$merge', '$collStats', '$indexStats', '$geoNear']);

export function facetStage(spec: unknown, names: ReadonlySet<string>, compileSub: SubPipelineCompiler): Stage {
  const stage = '$facet';
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) stageError(stage, 'the $facet specification must be a non-empty object');
  const facets = Object.entries(spec).map(([name, pipeline]) => {
    outputField(stage, name, 'output field');
    if (Array.isArray(pipeline)) {
      for (const s of pipeline) {
        const op = isPlainObject(s) ? Object.keys(s)[0] : undefined;
        if (op !== undefined && NOT_IN_FACET.has(op)) stageError(stage, `${op} is not allowed to be used within a $facet stage`);
      }
    }
    return { name, pipeline: compileSub(pipeline, names) };
  });
  // Each facet reads what its own pipeline needs; one that keeps whole documents needs them all.
  const fields = new Set<string>();
  let all = false;
  for (const f of facets) {
    if (f.pipeline.fields === undefined) all = true;
    else for (const x of f.pipeline.fields) fields.add(x);
  }
  return {
    name: stage,
    reads: facets.flatMap((f) => f.pipeline.reads),
    needs: { fields: all ? 'all' : fields, replaces: true },
    async *run(input, ctx) {
      const docs = await gather(input, stage, new BlockingBudget(stage, ctx.memory));
      const out: Doc = {};
      for (const f of facets) {
        const results: Doc[] = [];
        for await (const c of f.pipeline.run(chunksOf(docs), ctx)) pushAll(results, c);
        setOwn(out, f.name, results);
      }
      yield [out];
    },
  };
}
