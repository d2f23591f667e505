/**
 * $documents (manual: $documents): documents from an expression instead of a collection, the
 * first stage of a pipeline that reads none — an aggregate request without a collection
 * (MongoDB's `{aggregate: 1}`), or a `$lookup`/`$unionWith` pipeline (whose `from`/`coll` it
 * then replaces). Its input, if any, is not read.
 *
 * MongoDB builds it as a queue of one empty document, a $project of the expression into a field,
 * an $unwind of that field and a $replaceRoot with it (document_source_documents.cpp), and this
 * follows that construction's behaviour: the expression sees an empty document as `$$CURRENT`
 * (so `"$field"` is missing) and the variables in force (a $lookup's `let`); an array gives its
 * elements, null or missing gives no document, any other value counts as one element (as
 * $unwind has it); every element must be a document, else the $replaceRoot's error (40228).
 * Where it stands is checked by the pipeline (pipeline.ts): first, and not in a $facet.
 */

import { bsonTypeOf, describeValue, isPlainObject, type Doc } from '../../values.js';
import { isNullish, Scope } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { needsOf } from '../dependencies.js';
import { BlockingBudget, chunksOf, stageError, type Stage } from '../stage.js';

export const DOCUMENTS_STAGE = '$documents';

/** The field MongoDB's construction holds the value in: its messages name it. */
const GENERATED_FIELD = '_tempDocumentsField';

/** True when a pipeline, as written, starts with $documents (what MongoDB checks before parsing it). */
export function startsWithDocuments(spec: unknown): boolean {
  return Array.isArray(spec) && isPlainObject(spec[0]) && Object.hasOwn(spec[0], DOCUMENTS_STAGE);
}

/** The $documents stage. @throws QUERY_ERROR for a malformed expression, or (running) a value that is not documents */
export function documentsStage(spec: unknown, names: ReadonlySet<string>): Stage {
  const expr = compileExpression(spec, names);
  return {
    name: DOCUMENTS_STAGE,
    reads: [],
    // It reads nothing of its input, and what it outputs is not its input.
    needs: needsOf([], [], true),
    async *run(_input, ctx) {
      const value = expr(Scope.of({}, ctx.vars));
      if (isNullish(value)) return;
      const elements = Array.isArray(value) ? value : [value];
      // The array is held while it is passed on: it counts against the blocking bound.
      new BlockingBudget(DOCUMENTS_STAGE, ctx.memory).add(elements);
      for (const el of elements) {
        if (!isPlainObject(el)) {
          const shown = describeValue(el);
          stageError(DOCUMENTS_STAGE, `'newRoot' expression must evaluate to an object, but resulting value was: ${shown}. Type of resulting value: '${bsonTypeOf(el)}'. Input document: {${GENERATED_FIELD}: ${shown}}`);
        }
      }
      yield* chunksOf(elements as Doc[]);
    },
  };
}
