/**
 * $merge (manual: $merge): the specification of the pipeline's last stage, which writes its
 * output into a collection of the tenant instead of returning it. Parsed here, with MongoDB's
 * messages; the writes themselves are the document model's (docs-model.ts, mergeChunk), which
 * holds the write paths, the unique checks and the index maintenance.
 *
 * `{$merge: "coll"}` or `{$merge: {into, on, let, whenMatched, whenNotMatched}}`. tetradb has one
 * database per tenant: `into` is a collection name or `{coll}`; a `db` is refused (MongoDB would
 * write to that database). `on` is `_id` by default, else a field or an array of distinct fields.
 * whenMatched: replace (default), keepExisting, merge, fail, or a pipeline of the pipeline-style
 * update stages run on the matched document with `$$new` (the output document) and the `let`
 * variables (expressions of the output document) bound; the model compiles it as an update
 * (update/pipeline-update.ts: importing it here would make a cycle). whenNotMatched: insert
 * (default), discard, fail, in MongoDB's supported pairs.
 */

import { validateCollectionName } from '../../catalog.js';
import { bsonTypeOf, isPlainObject, type Doc } from '../../values.js';
import { checkVariableName, Scope, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { stageError } from '../stage.js';

const STAGE = '$merge';
const ID = '_id';

export type WhenMatched = 'replace' | 'keepExisting' | 'merge' | 'fail' | 'pipeline';
export type WhenNotMatched = 'insert' | 'discard' | 'fail';

const WHEN_MATCHED: readonly string[] = ['replace', 'keepExisting', 'merge', 'fail'];
const WHEN_NOT_MATCHED: readonly string[] = ['insert', 'discard', 'fail'];

// MongoDB's supported pairs (its merge strategy descriptors): keepExisting and fail only insert.
const SUPPORTED_MODES: ReadonlySet<string> = new Set([
  'replace/insert', 'replace/discard', 'replace/fail',
  'merge/insert', 'merge/discard', 'merge/fail',
  'keepExisting/insert',
  'fail/insert',
  'pipeline/insert', 'pipeline/discard', 'pipeline/fail',
]);
// `$$new` is the output document: `let` may bind it to nothing else.
const NEW = 'new';
const ROOT = '$$ROOT';

const SPEC_FIELDS = new Set(['into', 'on', 'let', 'whenMatched', 'whenNotMatched']);

/** A parsed $merge. */
export interface MergeSpec {
  /** The target collection (of the same tenant). */
  readonly into: string;
  /** The `on` fields (dot paths), `['_id']` by default, in the order given. */
  readonly on: readonly string[];
  /** True when `on` is `_id` alone: documents are matched by primary key, no other index needed. */
  readonly onId: boolean;
  readonly whenMatched: WhenMatched;
  readonly whenNotMatched: WhenNotMatched;
  /** whenMatched "pipeline": its stages, a pipeline-style update the model compiles. */
  readonly pipeline?: readonly unknown[];
  /** The variables the pipeline reads, each an expression of the output document (`new` among them). */
  readonly variables: ReadonlyArray<readonly [string, Expr]>;
}

/** The values of a $merge's variables for one output document (`now`: the aggregate's $$NOW). */
export function mergeVariables(spec: MergeSpec, doc: Doc, now: Date): Map<string, unknown> {
  const scope = Scope.of(doc, new Scope(new Map([['NOW', now]])));
  return new Map(spec.variables.map(([name, e]) => [name, e(scope)]));
}

/**
 * The variables of a whenMatched pipeline, as MongoDB makes them: `let` (default `{new:
 * "$$ROOT"}`), where `new` may only be `"$$ROOT"`, and is added when missing for whenNotMatched
 * "insert" (MongoDB must ship the output document then); without it, `$$new` is undefined.
 */
function variables(letSpec: unknown, whenNotMatched: WhenNotMatched): Array<readonly [string, Expr]> {
  if (letSpec === undefined) return [[NEW, compileExpression(ROOT)]];
  if (!isPlainObject(letSpec)) stageError(STAGE, `BSON field '$merge.let' is the wrong type '${bsonTypeOf(letSpec)}', expected type 'object'`);
  if (Object.hasOwn(letSpec, NEW) && letSpec[NEW] !== ROOT) stageError(STAGE, "'let' may not define a value for the reserved 'new' variable other than '$$ROOT'");
  const out: Array<readonly [string, Expr]> = Object.entries(letSpec).map(([name, spec]) => [checkVariableName(name, STAGE), compileExpression(spec)]);
  if (!Object.hasOwn(letSpec, NEW) && whenNotMatched === 'insert') out.push([NEW, compileExpression(ROOT)]);
  return out;
}

/**
 * The collection a writing stage names ($merge's `into`, the whole of $out's argument): a
 * collection name, or `{coll}`. tetradb has one database per tenant, so a `db` is refused (MongoDB
 * would write to that database). `within`: the stage's field holding the target ("into"), or
 * undefined when the argument is the target; MongoDB's messages name the path.
 * @throws QUERY_ERROR for another type, a `db`, an unknown field or a missing `coll`; VALIDATION_FAILED for a name no collection may have
 */
export function targetCollection(stage: string, within: string | undefined, target: unknown): string {
  const field = within === undefined ? stage : `${stage}.${within}`;
  if (typeof target === 'string') return validateCollectionName(target);
  if (!isPlainObject(target)) stageError(stage, `BSON field '${field}' is the wrong type '${bsonTypeOf(target)}', expected types '[string, object]'`);
  for (const k of Object.keys(target)) {
    if (k === 'db') {
      const where = within === undefined ? 'db' : `${within}.db`;
      const takes = within === undefined ? `${stage} takes` : `'${within}' is`;
      stageError(stage, `${stage} cannot write to another database (${where}: ${JSON.stringify(target[k])}): tetradb has one database per tenant, so ${takes} a collection name or {coll}`);
    }
    if (k !== 'coll') stageError(stage, `BSON field '${field}.${k}' is an unknown field.`);
  }
  if (!Object.hasOwn(target, 'coll')) stageError(stage, `BSON field '${field}.coll' is missing but a required field`);
  if (typeof target['coll'] !== 'string') stageError(stage, `BSON field '${field}.coll' is the wrong type '${bsonTypeOf(target['coll'])}', expected type 'string'`);
  return validateCollectionName(target['coll']);
}

function onFields(on: unknown): string[] {
  if (on === undefined) return [ID];
  const fields = typeof on === 'string' ? [on] : Array.isArray(on) ? on : undefined;
  if (fields === undefined) stageError(STAGE, `BSON field '$merge.on' is the wrong type '${bsonTypeOf(on)}', expected types '[string, array]'`);
  const seen = new Set<string>();
  for (const f of fields) {
    if (typeof f !== 'string') stageError(STAGE, `BSON field '$merge.on' is the wrong type '${bsonTypeOf(f)}', expected type 'string'`);
    if (f === '') stageError(STAGE, 'FieldPath cannot be constructed with empty string');
    if (f.startsWith('$')) stageError(STAGE, `FieldPath field names may not start with '$'. Consider using $getField or $setField.`);
    if (f.split('.').some((p) => p === '')) stageError(STAGE, 'FieldPath field names may not be empty strings.');
    if (seen.has(f)) stageError(STAGE, `Found a duplicate field '${f}'`);
    seen.add(f);
  }
  return fields as string[];
}

function mode<T extends string>(value: unknown, field: string, allowed: readonly string[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') stageError(STAGE, `BSON field '$merge.${field}' is the wrong type '${bsonTypeOf(value)}', expected type 'string'`);
  if (!allowed.includes(value)) stageError(STAGE, `Enumeration value '${value}' for field '${field}' is not a valid value.`);
  return value as T;
}

/** Parses a $merge specification. @throws QUERY_ERROR with MongoDB's message for a bad one */
export function parseMerge(spec: unknown): MergeSpec {
  if (typeof spec === 'string') return { into: validateCollectionName(spec), on: [ID], onId: true, whenMatched: 'replace', whenNotMatched: 'insert', variables: [] };
  if (!isPlainObject(spec)) stageError(STAGE, `$merge only supports a string or object argument, not ${bsonTypeOf(spec)}`);
  for (const k of Object.keys(spec)) if (!SPEC_FIELDS.has(k)) stageError(STAGE, `BSON field '$merge.${k}' is an unknown field.`);
  if (!Object.hasOwn(spec, 'into')) stageError(STAGE, "BSON field '$merge.into' is missing but a required field");
  const into = targetCollection(STAGE, 'into', spec['into']);
  const on = onFields(spec['on']);
  const pipeline = Array.isArray(spec['whenMatched']) ? (spec['whenMatched'] as unknown[]) : undefined;
  const whenMatched = pipeline !== undefined ? 'pipeline' : mode<WhenMatched>(spec['whenMatched'], 'whenMatched', WHEN_MATCHED, 'replace');
  const whenNotMatched = mode<WhenNotMatched>(spec['whenNotMatched'], 'whenNotMatched', WHEN_NOT_MATCHED, 'insert');
  if (!SUPPORTED_MODES.has(`${whenMatched}/${whenNotMatched}`)) {
    stageError(STAGE, `Combination of $merge modes 'whenMatched: ${whenMatched}' and 'whenNotMatched: ${whenNotMatched}' is not supported`);
  }
  if (pipeline === undefined) {
    if (spec['let'] !== undefined) stageError(STAGE, `Cannot use 'let' variables with 'whenMatched: ${whenMatched}' mode`);
    return { into, on, onId: on.length === 1 && on[0] === ID, whenMatched, whenNotMatched, variables: [] };
  }
  return { into, on, onId: on.length === 1 && on[0] === ID, whenMatched, whenNotMatched, pipeline, variables: variables(spec['let'], whenNotMatched) };
}
