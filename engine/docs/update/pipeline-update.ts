/**
 * Pipeline-style updates (manual: "Updates with Aggregation Pipeline", MongoDB 4.2+): the update
 * is an array of the reshaping stages `$addFields`/`$set`, `$project`/`$unset` and
 * `$replaceRoot`/`$replaceWith`, run in order on the matched document (or, for an upsert that
 * inserts, on the document built from the filter's equalities) with the aggregation expression
 * engine; `$$NOW` is one instant for the whole operation.
 *
 * The result replaces the document as MongoDB's ObjectReplaceExecutor does: a result without
 * `_id` keeps the document's, a result whose `_id` differs is refused, and a result equal to the
 * document (field order included) is not a modification. tetradb stores `_id` first, as in every
 * document it writes.
 *
 * Other stages are refused as MongoDB refuses them ("$match is not allowed to be used within an
 * update"), an unknown name as an unknown stage (`[{$inc: ...}]` is "Unrecognized pipeline stage
 * name: '$inc'"); an empty pipeline changes nothing, as the server takes it.
 */

import { fail } from '../../errors.js';
import { isStageName } from '../aggregate/pipeline.js';
import { stageError } from '../aggregate/stage.js';
import { Scope } from '../aggregate/expression/expression.js';
import { addFieldsTransform, projectTransform, replaceRootTransform, unsetTransform, type DocTransform } from '../aggregate/stages/project.js';
import { cloneValue, describeValue, getOwn, isPlainObject, MISSING, setOwn, valuesEqual, type Doc } from '../values.js';
import type { ApplyOptions, UpdateResult } from './compile-update.js';

const ID = '_id';
const NO_NAMES: ReadonlySet<string> = new Set();

function transform(name: string, arg: unknown, names: ReadonlySet<string>): DocTransform | undefined {
  switch (name) {
    case '$addFields':
    case '$set':
      return addFieldsTransform(name, arg, names);
    case '$project':
      return projectTransform(arg, names);
    case '$unset':
      return unsetTransform(arg);
    case '$replaceRoot':
    case '$replaceWith':
      return replaceRootTransform(name, arg, names);
    default:
      return undefined;
  }
}

/** A compiled pipeline-style update: applies its stages to a copy of a document. */
export interface CompiledPipelineUpdate {
  apply(doc: Doc, options?: ApplyOptions): UpdateResult;
}

/**
 * Compiles an update pipeline (already converted from Extended JSON). As MongoDB parses the
 * whole pipeline before checking where it runs, a malformed or unknown stage anywhere is reported
 * before a stage that is not allowed in an update. `names`: the variables its stages may read
 * besides the built-in ones (given to apply as `variables`).
 * @throws QUERY_ERROR for a malformed stage, an unknown stage or one not allowed in an update
 */
export function compilePipelineUpdate(pipeline: readonly unknown[], names: ReadonlySet<string> = NO_NAMES): CompiledPipelineUpdate {
  const stages: DocTransform[] = [];
  let refused: string | undefined;
  for (const item of pipeline) {
    if (!isPlainObject(item)) stageError('pipeline', "Each element of the 'pipeline' array must be an object");
    if (Object.keys(item).length !== 1) stageError('pipeline', 'A pipeline stage specification object must contain exactly one field.');
    const name = Object.keys(item)[0]!;
    const t = transform(name, item[name], names);
    if (t !== undefined) stages.push(t);
    else if (isStageName(name)) refused ??= name;
    else stageError(name, `Unrecognized pipeline stage name: '${name}'`);
  }
  if (refused !== undefined) stageError(refused, `${refused} is not allowed to be used within an update`);
  return {
    apply(doc, options = {}) {
      const vars = new Scope(new Map([...(options.variables ?? []), ['NOW', options.now ?? new Date()]]));
      let out = doc;
      for (const t of stages) out = t.apply(out, vars);
      const before = getOwn(doc, ID);
      const after = getOwn(out, ID);
      if (after !== MISSING && before !== MISSING && !valuesEqual(after, before)) {
        fail('QUERY_ERROR', `After applying the update, the (immutable) field '_id' was found to have been altered to _id: ${describeValue(after)}`, { path: ID });
      }
      const id = after !== MISSING ? after : before;
      const result: Doc = {};
      if (id !== MISSING) setOwn(result, ID, id);
      // The stages' output shares the input's unchanged values: the result is a copy, as an
      // operator update's is.
      for (const key of Object.keys(out)) if (key !== ID) setOwn(result, key, cloneValue(out[key]));
      return { doc: result, modified: !valuesEqual(result, doc) };
    },
  };
}
