/**
 * $lookup (manual: $lookup): for each document, the documents of another collection of the
 * same tenant, read on the pipeline's snapshot, in an array field `as`.
 * - Equality form `{from, localField, foreignField, as}`: the foreign documents whose
 *   `foreignField` equals the local value, or one of its elements when it is an array (query
 *   equality, so through arrays on the foreign side too); a missing or null local value matches
 *   foreign null and missing. It runs as a find with `{foreignField: {$in: values}}`, so an index
 *   on `foreignField` serves it.
 * - Pipeline form `{from, let, pipeline, as}` (optionally with localField/foreignField as well):
 *   the sub-pipeline runs over the foreign collection with the `let` variables, which `$expr`
 *   and other expressions read as `$$name`.
 * - A pipeline starting with $documents reads no collection: its documents are the foreign ones
 *   (`from` is then optional, and ignored when given, as in MongoDB 8); with localField and
 *   foreignField, the equality applies to them, right after the $documents.
 */

import { validateCollectionName } from '../../catalog.js';
import { compileFilter, type CompiledFilter } from '../../query/compile-filter.js';
import { bindScope } from '../../let-variables.js';
import { startsWithDocuments } from './documents.js';
import { collectValues, withPath } from '../../path.js';
import { cloneValue, isPlainObject, MISSING, type Doc } from '../../values.js';
import { checkVariableName, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { needsOf, writtenWith } from '../dependencies.js';
import { groupKey } from '../value-key.js';
import { approxBytes, outputField, pushAll, refuseLookupMatches, stageError, type DocStream, type Stage, type StageContext } from '../stage.js';
import { Scope } from '../expression/expression.js';

/** The key of an equality lookup: the foreign field and the local values (groupKey: equal keys, equal values). */
function equalityKey(foreignField: string, values: readonly unknown[]): string {
  let key = foreignField;
  for (const v of values) key += `\0${groupKey(v)}`;
  return key;
}

/**
 * How many sets of `let` values, and bytes of their matches, a pipeline $lookup remembers in one
 * run (as the model remembers the equality form's): input documents often share their values.
 */
const MEMO_ENTRIES = 4096;
const MEMO_BYTES = 16 * 1024 * 1024;

/** What makes a pipeline answer differently for the same variables: it draws random numbers. */
const DRAWS: ReadonlySet<string> = new Set(['$rand', '$sample', '$sampleRate']);

/** The key of a set of variable values: equal values, equal keys; missing is not null here (`$$c` missing matches what null does not). */
function variablesKey(values: readonly unknown[]): string {
  return JSON.stringify(values.map((v) => (v === MISSING ? 'M' : groupKey(v))));
}

/**
 * Checks the documents of one `as` array against the blocking bound, as MongoDB bounds them
 * (internalLookupStageIntermediateDocumentMaxSizeBytes, 100 MB): they are held whole in one
 * document. Their estimated bytes, each computed once here (the matches are fresh objects: copies
 * when remembered). @throws QUERY_ERROR past it, with MongoDB's message (code 4568)
 */
function checkMatchesSize(matches: readonly Doc[], from: string, limit: number): number {
  let total = 0;
  for (const m of matches) {
    total += approxBytes(m);
    if (total > limit) refuseLookupMatches(from, limit);
  }
  return total;
}

/** How the pipeline module compiles a sub-pipeline (passed in to avoid a cycle). */
export type SubPipelineCompiler = (
  spec: unknown,
  names: ReadonlySet<string>,
) => {
  run(input: DocStream, ctx: StageContext, leadingDone?: boolean, keepGenerated?: (doc: Doc) => boolean): DocStream;
  readonly reads: readonly string[];
  readonly fields: readonly string[] | undefined;
  /** It starts with $documents: it reads no collection. */
  readonly generated: boolean;
  /** Its leading $match, which the collection's read may take (then run with `leadingDone`). */
  readonly leading: CompiledFilter | undefined;
};

/** The input of a sub-pipeline that makes its own documents ($documents reads none). */
export async function* noInput(): DocStream {}

function localValues(doc: Doc, path: string): unknown[] {
  const values = collectValues(doc, path.split('.'), 'traverse-omit-array');
  const present = values.filter((v) => v !== MISSING);
  // A missing local value matches foreign null and missing, as null does; an empty array nothing.
  return values.length > 0 && present.length === 0 ? [null] : present;
}

export function lookupStage(spec: unknown, names: ReadonlySet<string>, compileSub: SubPipelineCompiler): Stage {
  const stage = '$lookup';
  if (!isPlainObject(spec)) stageError(stage, 'the $lookup specification must be an object');
  for (const k of Object.keys(spec)) if (!['from', 'localField', 'foreignField', 'as', 'let', 'pipeline'].includes(k)) stageError(stage, `unknown argument to $lookup: ${k}`);
  // Without `from`, the pipeline must make its documents (MongoDB's messages and order).
  let from: string | undefined;
  if (Object.hasOwn(spec, 'from')) from = validateCollectionName(spec['from']);
  else if (!Object.hasOwn(spec, 'pipeline')) stageError(stage, "must specify 'pipeline' when 'from' is empty");
  else if (!startsWithDocuments(spec['pipeline'])) stageError(stage, '$lookup stage without explicit collection must have a pipeline with $documents as first stage');
  const as = spec['as'];
  if (typeof as !== 'string' || as === '' || as.startsWith('$')) stageError(stage, "$lookup's 'as' must be a field path that does not start with '$'");
  const asParts = as.split('.').map((p) => outputField(stage, p, "'as'"));
  const hasEquality = Object.hasOwn(spec, 'localField') || Object.hasOwn(spec, 'foreignField');
  let localField: string | undefined;
  let foreignField: string | undefined;
  if (hasEquality) {
    if (typeof spec['localField'] !== 'string' || typeof spec['foreignField'] !== 'string') stageError(stage, "$lookup requires both 'localField' and 'foreignField' as strings");
    localField = spec['localField'];
    foreignField = spec['foreignField'];
  }
  const vars: Array<readonly [string, Expr]> = [];
  let sub: ReturnType<SubPipelineCompiler> | undefined;
  if (Object.hasOwn(spec, 'pipeline')) {
    if (Object.hasOwn(spec, 'let')) {
      if (!isPlainObject(spec['let'])) stageError(stage, "$lookup's 'let' must be an object");
      for (const [k, v] of Object.entries(spec['let'])) vars.push([checkVariableName(k, stage), compileExpression(v, names)]);
    }
    sub = compileSub(spec['pipeline'], new Set([...names, ...vars.map(([k]) => k)]));
  } else {
    if (!hasEquality) stageError(stage, "$lookup requires either 'localField' and 'foreignField', or 'pipeline'");
    if (Object.hasOwn(spec, 'let')) stageError(stage, "$lookup with 'let' must also specify 'pipeline'");
  }
  const generated = sub?.generated === true;
  const reads = generated || from === undefined ? (sub?.reads ?? []) : [from, ...(sub?.reads ?? [])];
  const letSpecs = isPlainObject(spec['let']) ? Object.values(spec['let']) : [];
  // Its matches depend on the let values alone (the foreign collection is read on the run's
  // snapshot, and the run's own variables do not change): equal values are answered from memory.
  const memoizable = sub !== undefined && !generated && localField === undefined && !writtenWith(spec['pipeline'], DRAWS);
  return {
    name: stage,
    reads,
    needs: needsOf(letSpecs, localField === undefined ? [] : [localField], false),
    async *run(input, ctx) {
      const memo = new Map<string, { docs: Doc[]; bytes: number }>();
      let memoBytes = 0;
      for await (const chunk of input) {
        const out: Doc[] = [];
        for (const doc of chunk) {
          const values = localField === undefined ? undefined : localValues(doc, localField);
          const filter: Doc = values === undefined ? {} : { [foreignField!]: { $in: values } };
          // Equal local values, equal foreign documents: the model may answer a repeat from memory.
          const key = values === undefined ? undefined : equalityKey(foreignField!, values);
          let matches: Doc[];
          let memoKey: string | undefined;
          if (sub === undefined) {
            const found = ctx.lookup(from!, filter, key);
            matches = found instanceof Promise ? await found : found;
          }
          else {
            const scope = Scope.of(doc, ctx.vars);
            const letValues = vars.map(([, e]) => e(scope));
            memoKey = memoizable ? variablesKey(letValues) : undefined;
            const known = memoKey === undefined ? undefined : memo.get(memoKey);
            if (known !== undefined) {
              // Copies: the stages after may change what they are given.
              out.push(withPath(doc, asParts, known.docs.map((d) => cloneValue(d))));
              continue;
            }
            const bound = scope.with(new Map(vars.map(([k], i) => [k, letValues[i]])));
            matches = [];
            if (generated) {
              // The equality is a filter on what the $documents makes (a find's semantics, as on a collection).
              const keep = localField === undefined ? undefined : compileFilter(filter);
              for await (const c of sub.run(noInput(), { ...ctx, vars: bound }, false, keep && ((d) => keep.test(d)))) pushAll(matches, c);
            } else {
              // Without an equality, a leading $match is the read's filter, planned with this
              // document's variables: `{$expr: {$eq: ["$_id", "$$k"]}}` reads the index, not the collection.
              const leading = localField === undefined ? sub.leading : undefined;
              const source = localField === undefined ? ctx.scan(from!, leading && bindScope(leading, bound)) : (async function* () {
                const found = ctx.lookup(from!, filter, key);
                yield found instanceof Promise ? await found : found;
              })();
              for await (const c of sub.run(source, { ...ctx, vars: bound }, leading !== undefined)) pushAll(matches, c);
            }
          }
          // A pipeline of $documents reads no collection: named by its first stage.
          const bytes = checkMatchesSize(matches, from ?? '$documents', ctx.memory.maxBlockingBytes);
          if (memoKey !== undefined && memo.size < MEMO_ENTRIES) {
            if (memoBytes + bytes <= MEMO_BYTES) {
              memo.set(memoKey, { docs: matches.map((d) => cloneValue(d)), bytes });
              memoBytes += bytes;
            }
          }
          out.push(withPath(doc, asParts, matches));
        }
        yield out;
      }
    },
  };
}
