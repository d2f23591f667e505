/**
 * $match: the find filter (query/compile-filter.ts), `$expr` and `$sampleRate` included; inside a
 * `$lookup` pipeline its `$expr`s read the `let` variables.
 */

import { compileFilter, filterHasSample, filterPaths, filterReadsAll, type CompiledFilter } from '../../query/compile-filter.js';
import { needsOf, READS_ALL } from '../dependencies.js';
import { isPlainObject } from '../../values.js';
import { stageError, streaming, type Stage } from '../stage.js';

/** A $match, with the filter a leading one hands to the query planner. */
export interface MatchStage extends Stage {
  /** The filter (the planner reads its field conditions; `$expr`s never use an index). */
  readonly filter: CompiledFilter;
}

export function matchStage(spec: unknown, names: ReadonlySet<string>): MatchStage {
  if (!isPlainObject(spec)) stageError('$match', 'the $match filter must be an object');
  // `$expr` anywhere in it reads the `let` variables of an enclosing $lookup pipeline.
  // A $text is checked for its place by the pipeline (only a leading $match of the collection's own).
  const filter = compileFilter(spec, names, { text: true });
  const needs = filterReadsAll(filter.ast) ? READS_ALL : needsOf([], filterPaths(filter.ast), false);
  // The stage tests each document once, and documents in a pipeline may share an `_id` (after
  // $unwind): its $sampleRate draws afresh for each. The planner's read of a leading $match
  // (`filter`) tests stored documents, and draws by `_id` (sample-rate.ts).
  const own = filterHasSample(filter.ast) ? compileFilter(spec, names, { sampling: 'independent', text: true }) : filter;
  const stage = streaming('$match', needs, (chunk, ctx) => chunk.filter((d) => own.test(d, ctx.vars)));
  return { ...stage, filter };
}
