/**
 * Find projections (manual: "Project Fields to Return from Query"), inclusion or exclusion:
 * - `{a: 1, "b.c": 1}` returns only those paths (and `_id`, unless `_id: 0`); `{a: 0}` returns
 *   everything else. Mixing the two is an error, except for `_id`. `{a: {b: 1}}` is `{"a.b": 1}`.
 * - A dot path through an array of documents applies to each element and keeps the array:
 *   `{"a.b": 1}` on `{a: [{b: 1, c: 2}, 3]}` gives `{a: [{b: 1}]}` (inclusion drops non-document
 *   elements; exclusion keeps them). Nested arrays are entered the same way.
 * - Included fields keep the document's order.
 * - The projection operators ($slice, $elemMatch, $meta, positional `a.$`) and computed fields
 *   are not supported: QUERY_ERROR.
 */

import { fail } from '../errors.js';
import { cloneValue, isPlainObject, MISSING, setOwn, type Doc } from './values.js';

/** A compiled projection. */
export interface CompiledProjection {
  /** 'all' for an empty projection (whole documents). */
  readonly mode: 'inclusion' | 'exclusion' | 'all';
  /** The projected paths as written (after flattening nested forms), without `_id` rules. */
  readonly paths: readonly string[];
  /** True when `_id` is returned. */
  readonly includesId: boolean;
  /** A new document with the projection applied (the input is not changed). */
  apply(doc: Doc): Doc;
}

// A projection tree: `true` marks a projected path's end, a map its sub-paths.
type Tree = Map<string, Tree | true>;

const UNSUPPORTED_OPERATORS = new Set(['$slice', '$elemMatch', '$meta']);

function invalid(message: string, path?: string): never {
  fail('QUERY_ERROR', message, path === undefined ? { operator: 'projection' } : { operator: 'projection', path });
}

function flatten(spec: Doc, prefix: string, out: Array<[string, boolean]>): void {
  for (const key of Object.keys(spec)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const v = spec[key];
    if (typeof v === 'number' || typeof v === 'boolean') {
      out.push([path, v !== 0 && v !== false]);
      continue;
    }
    if (isPlainObject(v)) {
      const first = Object.keys(v)[0];
      if (first !== undefined && first.startsWith('$')) {
        if (UNSUPPORTED_OPERATORS.has(first)) invalid(`unsupported: the ${first} projection operator is not supported ('${path}')`, path);
        invalid(`unsupported: expressions in projections are not supported ('${path}': ${first})`, path);
      }
      if (first === undefined) invalid(`An empty sub-projection is not a valid value. Found empty object at path '${path}'`, path);
      flatten(v, path, out);
      continue;
    }
    invalid(`unsupported projection value for '${path}': only 0, 1, true and false are supported`, path);
  }
}

function checkPath(path: string): string[] {
  const parts = path.split('.');
  for (const part of parts) {
    if (part === '') invalid(`projection path '${path}' has an empty field name`, path);
    if (part === '$') invalid(`unsupported: the positional projection operator ('${path}') is not supported`, path);
    if (part.startsWith('$')) invalid(`projection path '${path}' has a field name starting with '$'`, path);
  }
  return parts;
}

function addPath(tree: Tree, parts: readonly string[], path: string): void {
  let node = tree;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const existing = node.get(part);
    const isLast = i === parts.length - 1;
    if (existing === true || (existing !== undefined && isLast)) {
      invalid(`Path collision at ${path}`, path);
    }
    if (isLast) {
      node.set(part, true);
    } else {
      let next = existing;
      if (next === undefined) node.set(part, (next = new Map()));
      node = next;
    }
  }
}

function includeValue(v: unknown, tree: Tree): unknown {
  if (isPlainObject(v)) return includeObject(v, tree);
  if (Array.isArray(v)) {
    const out: unknown[] = [];
    for (const el of v) {
      const projected = includeValue(el, tree);
      if (projected !== MISSING) out.push(projected);
    }
    return out;
  }
  // A scalar where the projection expects sub-fields has none of them: it is left out.
  return MISSING;
}

function includeObject(obj: Doc, tree: Tree): Doc {
  const out: Doc = {};
  for (const key of Object.keys(obj)) {
    const sub = tree.get(key);
    if (sub === undefined) continue;
    const v = obj[key];
    if (sub === true) {
      setOwn(out, key, cloneValue(v));
      continue;
    }
    const projected = includeValue(v, sub);
    if (projected !== MISSING) setOwn(out, key, projected);
  }
  return out;
}

function excludeValue(v: unknown, tree: Tree): unknown {
  if (isPlainObject(v)) return excludeObject(v, tree);
  if (Array.isArray(v)) return v.map((el) => excludeValue(el, tree));
  return cloneValue(v);
}

function excludeObject(obj: Doc, tree: Tree): Doc {
  const out: Doc = {};
  for (const key of Object.keys(obj)) {
    const sub = tree.get(key);
    if (sub === true) continue;
    const v = obj[key];
    setOwn(out, key, sub === undefined ? cloneValue(v) : excludeValue(v, sub));
  }
  return out;
}

const WHOLE_DOCUMENTS: CompiledProjection = Object.freeze({ mode: 'all', paths: [], includesId: true, apply: (doc: Doc) => cloneValue(doc) as Doc });

/**
 * Compiles a find projection (undefined, null and {} return whole documents).
 * @throws QUERY_ERROR for mixed inclusion and exclusion, path collisions and unsupported forms
 */
export function compileProjection(spec: unknown): CompiledProjection {
  // The common case, no projection: one shared answer instead of a compile per find.
  if (spec === undefined || spec === null) return WHOLE_DOCUMENTS;
  if (!isPlainObject(spec)) invalid('projection must be an object such as {"a": 1}');
  const entries: Array<[string, boolean]> = [];
  flatten(spec, '', entries);
  let idSetting: boolean | undefined;
  let mode: 'inclusion' | 'exclusion' | undefined;
  const tree: Tree = new Map();
  const paths: string[] = [];
  for (const [path, include] of entries) {
    const parts = checkPath(path);
    if (path === '_id') {
      idSetting = include;
      continue;
    }
    const wanted = include ? 'inclusion' : 'exclusion';
    if (mode !== undefined && mode !== wanted) {
      invalid(include ? `Cannot do inclusion on field ${path} in exclusion projection` : `Cannot do exclusion on field ${path} in inclusion projection`, path);
    }
    mode = wanted;
    addPath(tree, parts, path);
    paths.push(path);
  }
  // `_id` alone decides the mode: {_id: 0} excludes it, {_id: 1} returns only it.
  if (mode === undefined && idSetting !== undefined) mode = idSetting ? 'inclusion' : 'exclusion';
  if (mode === undefined) return { mode: 'all', paths: [], includesId: true, apply: (doc) => cloneValue(doc) };
  // A path inside _id ("_id.a") takes over from the whole-_id default.
  const idTree = tree.get('_id');
  if (idSetting !== undefined && idTree !== undefined) invalid('Path collision at _id', '_id');
  const includesId = idSetting ?? (mode === 'inclusion' ? idTree === undefined : true);
  if (mode === 'inclusion' && includesId) tree.set('_id', true);
  if (mode === 'exclusion' && idSetting === false) tree.set('_id', true);
  const finalMode = mode;
  return {
    mode: finalMode,
    paths,
    includesId,
    apply: (doc) => (finalMode === 'inclusion' ? includeObject(doc, tree) : excludeObject(doc, tree)),
  };
}
