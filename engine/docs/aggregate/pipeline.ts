/**
 * Aggregation pipelines (manual: Aggregation Pipeline Stages): compiled whole before a document
 * is read, so a bad stage fails before any work. One table of stages; an unknown one is a
 * QUERY_ERROR naming it, the unsupported ones say why. A leading $match is handed to the query
 * planner by the model (docs-model.ts), so an index serves it; a $limit right after a $sort
 * bounds what the sort holds.
 */

import { isPlainObject } from '../values.js';
import { pipelineFields } from './dependencies.js';
import { filterTextSearch, type CompiledFilter } from '../query/compile-filter.js';
import type { Doc } from '../values.js';
import { AGGREGATE_LIMITS, stageError, type DocStream, type Stage, type StageContext } from './stage.js';
import type { Interrupt } from '../../interrupt.js';
import { bucketStage } from './stages/bucket.js';
import { bucketAutoStage } from './stages/bucket-auto.js';
import { densifyStage } from './stages/densify.js';
import { DOCUMENTS_STAGE, documentsStage } from './stages/documents.js';
import { COLL_STATS_STAGE, collStatsStage } from './stages/coll-stats.js';
import { INDEX_STATS_STAGE, indexStatsStage } from './stages/index-stats.js';
import { facetStage } from './stages/facet.js';
import { fillStage } from './stages/fill.js';
import { countStage, groupStage, sortByCountStage } from './stages/group.js';
import { graphLookupStage } from './stages/graph-lookup.js';
import { lookupStage } from './stages/lookup.js';
import { matchStage, type MatchStage } from './stages/match.js';
import { parseMerge, type MergeSpec } from './stages/merge.js';
import { parseOut, type OutSpec } from './stages/out.js';
import { limitStage, skipStage, sortStage, validCount, type SortStage } from './stages/order.js';
import { addFieldsStage, projectStage, replaceRootStage, unsetStage } from './stages/project.js';
import { redactStage } from './stages/redact.js';
import { sampleStage } from './stages/sample.js';
import { setWindowFieldsStage } from './stages/set-window-fields.js';
import { unionWithStage } from './stages/union-with.js';
import { unwindStage } from './stages/unwind.js';

const UNSUPPORTED: Record<string, string> = {
  $search: 'Atlas Search is not available',
  $geoNear: 'there are no geospatial indexes',
  $planCacheStats: 'not available',
  $currentOp: 'not available',
  $listSessions: 'not available',
};

// Every stage the switch in compileStages handles: with UNSUPPORTED, the stages tetradb knows.
const SUPPORTED = new Set([
  '$match', '$project', '$addFields', '$set', '$unset', '$replaceRoot', '$replaceWith', '$group', '$count', '$sortByCount', '$sort', '$skip',
  '$limit', '$unwind', '$lookup', '$facet', '$graphLookup', '$unionWith', '$bucket', '$bucketAuto', '$sample',
  '$setWindowFields', '$fill', '$densify', '$merge', '$out', '$redact', '$documents', '$indexStats', '$collStats',
]);

/** True for the name of an aggregation stage tetradb knows, supported or not (a pipeline-style update refuses the others by name). */
export function isStageName(name: string): boolean {
  return SUPPORTED.has(name) || Object.hasOwn(UNSUPPORTED, name);
}

/** A compiled pipeline. */
export interface CompiledPipeline {
  /** A leading $match's filter (without `$expr`), for the query planner; undefined when none. */
  readonly leading: CompiledFilter | undefined;
  /** Every collection the pipeline reads besides its own ($lookup), for the snapshot. */
  readonly reads: readonly string[];
  /** The paths of its input it reads (dependencies.ts), or undefined for whole documents. */
  readonly fields: readonly string[] | undefined;
  /** A final $merge: the model writes the output of `run` into its collection instead of returning it. */
  readonly merge: MergeSpec | undefined;
  /** A final $out: the model replaces its collection with the output of `run` instead of returning it. */
  readonly out: OutSpec | undefined;
  /** True when it starts with $documents: it makes its own documents and reads no input. */
  readonly generated: boolean;
  /** True when it starts with $indexStats or $collStats: its documents describe the collection, none of its documents is read. */
  readonly describes: boolean;
  /**
   * `leadingDone`: the input already passed the leading $match (the model read it through the
   * planner). `keepGenerated`: which documents of a leading $documents go on (a $lookup's
   * equality match, which MongoDB places right after the $documents).
   */
  run(input: DocStream, ctx: StageContext, leadingDone?: boolean, keepGenerated?: (doc: Doc) => boolean): DocStream;
}

/** The stage whose sub-pipeline is being compiled (a $facet checks its own), undefined at the top. */
type Host = '$lookup' | '$unionWith' | '$facet' | undefined;

/** What a pipeline's final writing stage ($merge or $out) writes, when it has one. */
interface Writes {
  merge?: MergeSpec;
  out?: OutSpec;
}

function compileStages(spec: unknown, names: ReadonlySet<string>, counter: { stages: number }, host: Host, out: Writes): Stage[] {
  if (!Array.isArray(spec)) stageError('pipeline', 'the pipeline must be an array of stages');
  const stages: Stage[] = [];
  const subIn = (h: Host) => (s: unknown, n: ReadonlySet<string>) => compile(s, n, counter, h);
  for (let i = 0; i < spec.length; i++) {
    const item = spec[i];
    if (++counter.stages > AGGREGATE_LIMITS.maxStages) stageError('pipeline', `the pipeline has more than ${AGGREGATE_LIMITS.maxStages} stages`);
    if (!isPlainObject(item) || Object.keys(item).length !== 1) stageError('pipeline', 'A pipeline stage specification object must contain exactly one field.');
    const name = Object.keys(item)[0]!;
    const arg = item[name];
    switch (name) {
      case '$match': {
        const match = matchStage(arg, names);
        // MongoDB's rule: the planner answers $text, so only a pipeline's first stage may hold one;
        // tetradb reads sub-pipelines' collections without a planner's $text, so not theirs either.
        if ((i !== 0 || host !== undefined) && filterTextSearch(match.filter.ast) !== undefined) stageError('$match', '$match with $text is only allowed as the first pipeline stage');
        stages.push(match);
        break;
      }
      case '$project':
        stages.push(projectStage(arg, names));
        break;
      case '$addFields':
      case '$set':
        stages.push(addFieldsStage(name, arg, names));
        break;
      case '$unset':
        stages.push(unsetStage(arg));
        break;
      case '$replaceRoot':
      case '$replaceWith':
        stages.push(replaceRootStage(name, arg, names));
        break;
      case '$group':
        stages.push(groupStage(arg, names));
        break;
      case '$count':
        stages.push(countStage(arg));
        break;
      case '$sortByCount':
        stages.push(sortByCountStage(arg, names));
        break;
      case '$sort': {
        // A $limit right after it, or a $skip then a $limit (MongoDB folds both into the sort's
        // limit): the sort keeps only the best skip + limit documents.
        // Only well-formed ones: a malformed $skip or $limit fails as its own stage, after this one.
        const countIn = (x: unknown, name: string, min: number): number | undefined => validCount(isPlainObject(x) && Object.keys(x).length === 1 ? x[name] : undefined, min);
        const skip = countIn(spec[i + 1], '$skip', 0);
        const limit = countIn(spec[skip === undefined ? i + 1 : i + 2], '$limit', 1);
        stages.push(sortStage(arg, limit === undefined ? undefined : limit + (skip ?? 0), limit === undefined ? undefined : skip));
        break;
      }
      case '$skip':
        stages.push(skipStage(arg));
        break;
      case '$limit':
        stages.push(limitStage(arg));
        break;
      case '$unwind':
        stages.push(unwindStage(arg));
        break;
      case '$lookup':
        stages.push(lookupStage(arg, names, subIn('$lookup')));
        break;
      case '$facet':
        stages.push(facetStage(arg, names, subIn('$facet')));
        break;
      case '$graphLookup':
        stages.push(graphLookupStage(arg, names));
        break;
      case '$unionWith':
        stages.push(unionWithStage(arg, names, subIn('$unionWith')));
        break;
      case '$bucket':
        stages.push(bucketStage(arg, names));
        break;
      case '$bucketAuto':
        stages.push(bucketAutoStage(arg, names));
        break;
      case '$sample':
        stages.push(sampleStage(arg));
        break;
      case '$redact':
        stages.push(redactStage(arg, names));
        break;
      case '$setWindowFields':
        stages.push(setWindowFieldsStage(arg, names));
        break;
      case '$fill':
        stages.push(fillStage(arg, names));
        break;
      case '$densify':
        stages.push(densifyStage(arg));
        break;
      case '$documents':
        // MongoDB's order of checks: the sub-pipeline, then the position.
        if (host === '$facet') stageError(name, `${name} is not allowed to be used within a $facet stage`);
        if (i !== 0) stageError(name, `${name} is only valid as the first stage in a pipeline`);
        stages.push(documentsStage(arg, names));
        break;
      case '$indexStats':
      case '$collStats':
        // MongoDB's order of checks: the sub-pipeline, then the position, then the argument.
        if (host !== undefined) stageError(name, host === '$facet' ? `${name} is not allowed to be used within a $facet stage` : `${name} is not allowed within a ${host}'s sub-pipeline`);
        if (i !== 0) stageError(name, `${name} is only valid as the first stage in a pipeline`);
        stages.push(name === '$indexStats' ? indexStatsStage(arg) : collStatsStage(arg));
        break;
      case '$merge':
      case '$out':
        // The writing stages, placed alike. MongoDB's order of checks: the sub-pipeline, then the position.
        if (host === '$lookup' || host === '$unionWith') stageError(name, `${name} is not allowed within a ${host}'s sub-pipeline`);
        if (host === '$facet') stageError(name, `${name} is not allowed to be used within a $facet stage`);
        if (i !== spec.length - 1) stageError(name, `${name} can only be the final stage in the pipeline`);
        if (name === '$merge') out.merge = parseMerge(arg);
        else out.out = parseOut(arg);
        break;
      default:
        if (SUPPORTED.has(name)) throw new Error(`stage ${name} is listed as supported but not compiled`);
        if (Object.hasOwn(UNSUPPORTED, name)) stageError(name, `unsupported: the ${name} stage is not supported (${UNSUPPORTED[name]})`);
        stageError(name, `Unrecognized pipeline stage name: '${name}'`);
    }
  }
  return stages;
}

async function* keepOnly(input: DocStream, keep: (doc: Doc) => boolean): DocStream {
  for await (const chunk of input) {
    const kept = chunk.filter(keep);
    if (kept.length > 0) yield kept;
  }
}

/** The largest $limit after a $sort for which the top-k reads only the sort keys first (see topK). */
const TOP_K_MAX = 1000;

/**
 * The $sort of a pipeline that starts (after its leading $match) with $sort and a $limit of at
 * most TOP_K_MAX (after a $skip of any size, when there is one), when the stages after it need
 * whole documents: such a sort may read only its keys (and `_id`), keep the best, and have the
 * model read the winners past the skip whole (StageContext.whole). A top-10 over 100k documents
 * otherwise decoded them all whole to keep 10, and a page deep into a sort (skip 5,000, limit 5
 * of 10k documents) decoded every document and kept 5,005 whole.
 */
function topK(stages: readonly Stage[], leading: CompiledFilter | undefined, fields: readonly string[] | undefined): SortStage | undefined {
  if (fields !== undefined) return undefined; // the input is read in part anyway
  const sort = stages[leading === undefined ? 0 : 1];
  if (sort?.name !== '$sort') return undefined;
  const { limit, skip, keyPaths } = sort as SortStage;
  // With a $skip between the sort and its $limit, only the documents past the skip are read whole.
  if (limit === undefined || limit - (skip ?? 0) > TOP_K_MAX || keyPaths === undefined) return undefined;
  // Text scores are kept with the documents read: a re-read whole document would lack them.
  if (leading !== undefined && filterTextSearch(leading.ast) !== undefined) return undefined;
  return sort as SortStage;
}

/**
 * `input`, checking `interrupt` before each chunk goes on: after every stage, so a query stops
 * soon wherever its time goes (a blocking stage's output, a merge of spilled runs, a sub-pipeline).
 */
async function* interruptible(input: DocStream, interrupt: Interrupt): DocStream {
  for await (const chunk of input) {
    interrupt.check();
    yield chunk;
  }
}

/** The documents of `input` (read in part) as stored, whole. */
async function* wholeDocuments(input: DocStream, whole: (docs: readonly Doc[]) => Doc[]): DocStream {
  for await (const chunk of input) yield whole(chunk);
}

function compile(spec: unknown, names: ReadonlySet<string>, counter: { stages: number }, host: Host): CompiledPipeline {
  const out: Writes = {};
  const stages = compileStages(spec, names, counter, host, out);
  const first = stages[0];
  const generated = first?.name === DOCUMENTS_STAGE;
  const describes = first?.name === INDEX_STATS_STAGE || first?.name === COLL_STATS_STAGE;
  const leading = first?.name === '$match' ? (first as MatchStage).filter : undefined;
  const fields = pipelineFields(stages);
  // Only the top level reads a collection through the model's planner (`fields` and `whole`).
  const top = host === undefined && !generated && !describes ? topK(stages, leading, fields) : undefined;
  // The winners are read whole after the top-k's $skip, when it has one: the skipped ones never are.
  const wholeAfter = top === undefined ? undefined : top.skip === undefined ? top : stages[stages.indexOf(top) + 1];
  return {
    merge: out.merge,
    out: out.out,
    generated,
    describes,
    leading,
    reads: [...new Set(stages.flatMap((s) => s.reads))],
    fields: top === undefined ? fields : [...new Set(['_id', ...top.keyPaths!])],
    run(input, ctx, leadingDone = false, keepGenerated) {
      // A top-k read in part needs the model to read the winners whole; without it, whole documents come in.
      if (top !== undefined && ctx.whole === undefined) throw new Error('a top-k pipeline read in part needs StageContext.whole');
      let stream = input;
      const interrupt = ctx.memory.interrupt;
      for (const s of leadingDone && first?.name === '$match' ? stages.slice(1) : stages) {
        stream = s.run(stream, ctx);
        if (interrupt !== undefined) stream = interruptible(stream, interrupt);
        if (s === first && generated && keepGenerated !== undefined) stream = keepOnly(stream, keepGenerated);
        if (s === wholeAfter) stream = wholeDocuments(stream, ctx.whole!);
      }
      return stream;
    },
  };
}

/**
 * Compiles a pipeline (an array of stage objects); `names`: the variables its expressions may read
 * besides the built-in ones (the command's `let`). @throws QUERY_ERROR for anything malformed, unknown or unsupported
 */
export function compilePipeline(spec: unknown, names: ReadonlySet<string> = new Set()): CompiledPipeline {
  return compile(spec, names, { stages: 0 }, undefined);
}
