/**
 * The reshaping stages (manual: $project, $addFields/$set, $unset, $replaceRoot/$replaceWith).
 * - $project: the find projection's inclusions and exclusions (projection.ts), plus computed
 *   fields (`{total: {$add: ["$a", "$b"]}}`, `{"x.y": "$z"}`); computed fields make it an
 *   inclusion, and exclusions admit none. A non-zero number or true includes.
 * - $addFields / $set: each field set to its expression's value, computed on the input document;
 *   existing fields keep their place, new ones are appended; `$$REMOVE` removes the field. A dot
 *   path through an array sets the field in each element.
 * - $unset: the exclusion projection of its path(s).
 * - $replaceRoot / $replaceWith: the document becomes its expression's value, which must be an
 *   object.
 * Each is a function of one document (DocTransform), which the stage maps over its input and a
 * pipeline-style update (update/pipeline-update.ts) applies to the document it changes.
 */

import { carryTextScore } from '../../text/index.js';
import { compileProjection } from '../../projection.js';
import { bsonTypeOf, getOwn, isPlainObject, MISSING, setOwn, type Doc } from '../../values.js';
import { Scope, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { needsOf, PASS_THROUGH, READS_ALL, type Needs } from '../dependencies.js';
import { stageError, streaming, type Stage } from '../stage.js';

/** A reshaping stage as a function of one document. */
export interface DocTransform {
  readonly name: string;
  /** What it reads of its input (dependencies.ts). */
  readonly needs: Needs;
  /** The output document for `doc` (never changed); `vars` are the variables in force. @throws QUERY_ERROR */
  apply(doc: Doc, vars: Scope | undefined): Doc;
}

/** The stage that applies a transform to each document of its input. */
export function transformStage(t: DocTransform): Stage {
  // The new document keeps the input's text score, as MongoDB's metadata goes along.
  return streaming(t.name, t.needs, (chunk, ctx) => chunk.map((doc) => carryTextScore(doc, t.apply(doc, ctx.vars))));
}

// Sets `value` at `parts` of a copy-on-write document (`target`; objects are copied on the way)
// along the arrays of `input`: every element of an input array on the path gets the rest of the
// path, one that is not a document becoming one; an array inside an array is walked alike.
// $addFields passes the document as both. $project passes its projected output and the input
// (MongoDB applies computed fields over the input's structure, jstests projection_semantics.js):
// an element the inclusion projection dropped (a scalar) comes back as a document of the field.
function setAlong(target: unknown, input: unknown, parts: readonly string[], i: number, value: unknown): Doc {
  const out: Doc = isPlainObject(target) ? { ...target } : {};
  const key = parts[i]!;
  if (i === parts.length - 1) {
    if (value === MISSING) delete out[key];
    else setOwn(out, key, value);
    return out;
  }
  const childIn = isPlainObject(input) ? getOwn(input, key) : MISSING;
  const childOut = getOwn(out, key);
  setOwn(out, key, Array.isArray(childIn) ? setAlongInArray(childOut, childIn, parts, i + 1, value) : setAlong(childOut, childIn, parts, i + 1, value));
  return out;
}

function setAlongInArray(target: unknown, input: readonly unknown[], parts: readonly string[], i: number, value: unknown): unknown[] {
  const outs = Array.isArray(target) ? target : [];
  // The projection kept the input array's documents and arrays, in order, and dropped the rest;
  // once a computed field has given every element its place, the two line up one to one.
  const aligned = outs.length === input.length;
  let k = 0;
  return input.map((el) => {
    const o = aligned || isPlainObject(el) || Array.isArray(el) ? outs[k++] : undefined;
    return Array.isArray(el) ? setAlongInArray(o, el, parts, i, value) : setAlong(o, el, parts, i, value);
  });
}

function checkFieldPath(stage: string, path: string): string[] {
  const parts = path.split('.');
  for (const p of parts) {
    if (p === '') stageError(stage, `${stage}: FieldPath field names may not be empty strings ('${path}')`);
    if (p.startsWith('$')) stageError(stage, `${stage}: FieldPath field names may not start with '$' ('${path}')`);
  }
  return parts;
}

// Nested specifications ({a: {b: 1}}) are dot paths ("a.b": 1) unless they are expressions.
function flatten(spec: Doc, prefix: string, out: Array<[string, unknown]>, stage: string): void {
  for (const key of Object.keys(spec)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const v = spec[key];
    if (isPlainObject(v) && Object.keys(v).length > 0 && !Object.keys(v)[0]!.startsWith('$')) flatten(v, path, out, stage);
    else if (isPlainObject(v) && Object.keys(v).length === 0) stageError(stage, `${stage}: an empty object is not a valid value for '${path}'`);
    else out.push([path, v]);
  }
}

const isFlag = (v: unknown): v is number | boolean => typeof v === 'number' || typeof v === 'boolean';

/** $project's transform. @throws QUERY_ERROR for a malformed specification */
export function projectTransform(spec: unknown, names: ReadonlySet<string>): DocTransform {
  const stage = '$project';
  if (!isPlainObject(spec) || Object.keys(spec).length === 0) stageError(stage, '$project specification must be an object with at least one field');
  const entries: Array<[string, unknown]> = [];
  flatten(spec, '', entries, stage);
  const flags: Doc = {};
  const computed: Array<{ parts: string[]; expr: Expr }> = [];
  let excludes = false;
  for (const [path, v] of entries) {
    if (isFlag(v)) {
      const include = v !== 0 && v !== false;
      if (!include && path !== '_id') excludes = true;
      flags[path] = include ? 1 : 0;
    } else computed.push({ parts: checkFieldPath(stage, path), expr: compileExpression(v, names) });
  }
  if (excludes && computed.length > 0) stageError(stage, 'Invalid $project :: caused by :: Cannot use expression other than $meta in exclusion projection');
  const computedId = computed.some((c) => c.parts.length === 1 && c.parts[0] === '_id');
  if (computed.length > 0) {
    // Computed fields are inclusions: the find projection keeps the included ones (and _id).
    if (computedId) flags['_id'] = 0;
    else if (!Object.hasOwn(flags, '_id')) flags['_id'] = 1;
  }
  const projection = Object.keys(flags).length > 0 ? compileProjection(flags) : undefined;
  // With only computed fields and _id excluded, nothing of the input is kept.
  const keepNothing = computed.length > 0 && !Object.values(flags).some((f) => f === 1);
  // An exclusion keeps every other field, `{_id: 0}` alone included; an inclusion reads its
  // paths and expressions only.
  const needs = excludes || (computed.length === 0 && projection?.mode === 'exclusion')
    ? READS_ALL
    : needsOf(
        entries.filter(([, v]) => !isFlag(v)).map(([, v]) => v),
        // A computed dot path follows the input's structure above its last field (setAlong).
        [...Object.keys(flags).filter((k) => flags[k] === 1), ...computed.filter((c) => c.parts.length > 1).map((c) => c.parts.slice(0, -1).join('.'))],
        true,
      );
  return {
    name: stage,
    needs,
    apply(doc, vars) {
      let out: unknown = keepNothing ? {} : projection === undefined ? { ...doc } : projection.apply(doc);
      if (computed.length > 0) {
        const scope = Scope.of(doc, vars);
        for (const c of computed) out = setAlong(out, doc, c.parts, 0, c.expr(scope));
      }
      return out as Doc;
    },
  };
}

export function projectStage(spec: unknown, names: ReadonlySet<string>): Stage {
  return transformStage(projectTransform(spec, names));
}

/** $addFields' (and $set's) transform. @throws QUERY_ERROR for a malformed specification */
export function addFieldsTransform(name: '$addFields' | '$set', spec: unknown, names: ReadonlySet<string>): DocTransform {
  if (!isPlainObject(spec)) stageError(name, `${name} specification must be an object`);
  const entries: Array<[string, unknown]> = [];
  flatten(spec, '', entries, name);
  const fields = entries.map(([path, v]) => ({ parts: checkFieldPath(name, path), expr: compileExpression(v, names) }));
  return {
    name,
    needs: needsOf(entries.map(([, v]) => v), [], false),
    apply(doc, vars) {
      const scope = Scope.of(doc, vars);
      const values = fields.map((f) => f.expr(scope));
      let out: unknown = doc;
      fields.forEach((f, i) => (out = setAlong(out, out, f.parts, 0, values[i])));
      return out as Doc;
    },
  };
}

export function addFieldsStage(name: '$addFields' | '$set', spec: unknown, names: ReadonlySet<string>): Stage {
  return transformStage(addFieldsTransform(name, spec, names));
}

/** $unset's transform. @throws QUERY_ERROR for a malformed specification */
export function unsetTransform(spec: unknown): DocTransform {
  const paths = typeof spec === 'string' ? [spec] : spec;
  if (!Array.isArray(paths) || paths.length === 0 || !paths.every((p) => typeof p === 'string')) stageError('$unset', '$unset specification must be a string or an array of strings');
  const projection = compileProjection(Object.fromEntries(paths.map((p) => [p, 0])));
  return { name: '$unset', needs: PASS_THROUGH, apply: (doc) => projection.apply(doc) };
}

export function unsetStage(spec: unknown): Stage {
  return transformStage(unsetTransform(spec));
}

/** $replaceRoot's (and $replaceWith's) transform. @throws QUERY_ERROR for a malformed specification */
export function replaceRootTransform(name: '$replaceRoot' | '$replaceWith', spec: unknown, names: ReadonlySet<string>): DocTransform {
  let exprSpec: unknown = spec;
  if (name === '$replaceRoot') {
    if (!isPlainObject(spec) || !Object.hasOwn(spec, 'newRoot') || Object.keys(spec).length !== 1) stageError(name, "$replaceRoot requires exactly one field, 'newRoot'");
    exprSpec = spec['newRoot'];
  }
  const expr = compileExpression(exprSpec, names);
  return {
    name,
    needs: needsOf([exprSpec], [], true),
    apply(doc, vars) {
      const v = expr(Scope.of(doc, vars));
      if (!isPlainObject(v)) stageError(name, `'newRoot' expression must evaluate to an object, but resulting value was: ${v === MISSING ? 'missing' : bsonTypeOf(v)}`);
      return v;
    },
  };
}

export function replaceRootStage(name: '$replaceRoot' | '$replaceWith', spec: unknown, names: ReadonlySet<string>): Stage {
  return transformStage(replaceRootTransform(name, spec, names));
}
