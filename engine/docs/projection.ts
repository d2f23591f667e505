/**
 * Find projections (manual: "Project Fields to Return from Query"), inclusion or exclusion:
 * - `{a: 1, "b.c": 1}` returns only those paths (and `_id`, unless `_id: 0`); `{a: 0}` returns
 *   everything else. Mixing the two is an error, except for `_id`. `{a: {b: 1}}` is `{"a.b": 1}`.
 * - A dot path through an array of documents applies to each element and keeps the array:
 *   `{"a.b": 1}` on `{a: [{b: 1, c: 2}, 3]}` gives `{a: [{b: 1}]}` (inclusion drops non-document
 *   elements; exclusion keeps them). Nested arrays are entered the same way.
 * - Included fields keep the document's order.
 * - Projection operators (manual: Projection Operators):
 *   - `{a: {$slice: n}}` (first n, or last -n) and `{a: {$slice: [skip, limit]}}` return part of
 *     an array (any other value as it is). They decide no mode: with inclusions the sliced path
 *     is included; otherwise every other field is returned (an exclusion projection).
 *   - `{a: {$elemMatch: {...}}}` (a top-level field) returns the first element matching, as a
 *     one-element array, or leaves the field out; it is an inclusion.
 *   - `{"a.$": 1}` returns, of the first array on the path, the element at the position the
 *     find's filter recorded (the update `$`'s rule, update/positional.ts); it is an inclusion.
 *     One per projection; an array with no position recorded is an error.
 * - Computed fields (MongoDB 4.4+: `{total: {$add: ["$a", "$b"]}}`, `{name: "$profile.name"}`, a
 *   string or array literal) make the projection a $project stage's (docs-model.ts compiles it
 *   through aggregate/stages/project.ts); projectionFeatures tells.
 * - `{score: {$meta: "textScore"}}` (a top-level field) adds the document's text score (a `$text`
 *   find's); it decides no mode: alone, every field is returned with it.
 */

import { fail } from '../errors.js';
import { compileFilter } from './query/compile-filter.js';
import type { AndNode } from './query/filter-ast.js';
import { withPath } from './path.js';
import { firstArray, positionFinder } from './query/recorded-position.js';
import { checkMetaName, textScoreOf } from './text/index.js';
import { cloneValue, isPlainObject, MISSING, setOwn, type Doc } from './values.js';

/** A compiled projection. */
export interface CompiledProjection {
  /** 'all' for an empty projection (whole documents). */
  readonly mode: 'inclusion' | 'exclusion' | 'all';
  /** The projected paths as written (after flattening nested forms), without `_id` rules. */
  readonly paths: readonly string[];
  /** True when `_id` is returned. */
  readonly includesId: boolean;
  /** A new document with the projection applied (the input is not changed). @throws QUERY_ERROR when a positional projection finds no position */
  apply(doc: Doc): Doc;
  /** True when it adds `{$meta: "textScore"}` fields (the find must be a `$text` search). */
  readonly textScore?: boolean;
}

/** What a projection's positional `$` needs: the find's filter, parsed (asked for only then). */
export interface ProjectionOptions {
  filter?: () => AndNode;
}

/** A part of an array: `$slice: n` is {skip: 0, limit: n} or, negative, the last -n. */
interface SliceLeaf {
  readonly kind: 'slice';
  readonly skip: number;
  readonly limit: number | undefined;
  readonly last: number | undefined;
}

/** The first element a condition matches. */
interface ElemMatchLeaf {
  readonly kind: 'elemMatch';
  readonly matches: (element: unknown) => boolean;
}

type Leaf = true | SliceLeaf | ElemMatchLeaf;

// A projection tree: a leaf marks a projected path's end, a map its sub-paths.
type Tree = Map<string, Tree | Leaf>;

/** One member of a projection, flattened. */
type Entry =
  | { readonly path: string; readonly kind: 'include' | 'exclude' | 'positional' | 'meta' }
  | { readonly path: string; readonly kind: 'operator'; readonly leaf: SliceLeaf | ElemMatchLeaf };

function invalid(message: string, path?: string): never {
  fail('QUERY_ERROR', message, path === undefined ? { operator: 'projection' } : { operator: 'projection', path });
}

function wholeNumber(v: unknown, path: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) invalid(`$slice only supports numbers and [skip, limit] arrays ('${path}')`, path);
  return Math.trunc(v);
}

function parseSlice(v: unknown, path: string): SliceLeaf {
  if (Array.isArray(v)) {
    if (v.length !== 2) invalid(`$slice array argument must be of the form [skip, limit] ('${path}')`, path);
    const limit = wholeNumber(v[1], path);
    if (limit <= 0) invalid(`$slice limit must be positive ('${path}')`, path);
    return { kind: 'slice', skip: wholeNumber(v[0], path), limit, last: undefined };
  }
  const n = wholeNumber(v, path);
  return n >= 0 ? { kind: 'slice', skip: 0, limit: n, last: undefined } : { kind: 'slice', skip: 0, limit: undefined, last: -n };
}

function parseElemMatch(v: unknown, path: string): ElemMatchLeaf {
  if (path.includes('.')) invalid(`Cannot use $elemMatch projection on a nested field ('${path}')`, path);
  if (!isPlainObject(v)) invalid(`elemMatch: Invalid argument, object required ('${path}')`, path);
  // The query operator itself, applied to one element at a time.
  const filter = compileFilter({ x: { $elemMatch: v } });
  return { kind: 'elemMatch', matches: (element) => filter.test({ x: [element] }) };
}

function flatten(spec: Doc, prefix: string, out: Entry[]): void {
  for (const key of Object.keys(spec)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const v = spec[key];
    if (typeof v === 'number' || typeof v === 'boolean') {
      const include = v !== 0 && v !== false;
      if (key === '$' || path.endsWith('.$')) {
        if (!include) invalid(`Cannot exclude a positional projection ('${path}')`, path);
        out.push({ path: path.slice(0, -2), kind: 'positional' });
      } else out.push({ path, kind: include ? 'include' : 'exclude' });
      continue;
    }
    if (isPlainObject(v)) {
      const names = Object.keys(v);
      const first = names[0];
      if (first !== undefined && first.startsWith('$')) {
        if (names.length > 1) invalid(`a projection operator must be alone in its object ('${path}': ${names.join(', ')})`, path);
        if (path.endsWith('.$')) invalid(`positional projection cannot be used with the ${first} operator ('${path}')`, path);
        if (first === '$slice') out.push({ path, kind: 'operator', leaf: parseSlice(v[first], path) });
        else if (first === '$elemMatch') out.push({ path, kind: 'operator', leaf: parseElemMatch(v[first], path) });
        else if (first === '$meta') {
          checkMetaName(v[first], 'projection');
          if (prefix !== '' || key.includes('.')) invalid(`unsupported: a $meta projection of a dotted path ('${path}'): project it at the top level`, path);
          out.push({ path, kind: 'meta' });
        }
        else invalid(`an expression ('${path}': ${first}) in a projection with $slice, $elemMatch or a positional '$': tetradb does not take both in one find projection (use an aggregation)`, path);
        continue;
      }
      if (first === undefined) invalid(`An empty sub-projection is not a valid value. Found empty object at path '${path}'`, path);
      flatten(v, path, out);
      continue;
    }
    invalid(`a computed value for '${path}' in a projection with $slice, $elemMatch or a positional '$': tetradb does not take both in one find projection (use an aggregation)`, path);
  }
}

// The projection operators of find, which a computed projection (a $project's) does not take.
const FIND_OPERATORS = new Set(['$slice', '$elemMatch', '$meta']);

/**
 * What a find projection holds besides inclusions and exclusions: `computed` when some value is
 * neither a number, a boolean, a projection operator nor a sub-projection (an expression object
 * such as `{$add: ...}`, a field path or other string, an array, null: MongoDB 4.4+'s computed
 * fields, a $project stage's); `findOperators` when it uses an operator only find has ($slice,
 * $elemMatch, $meta, or a positional `$` path).
 */
export function projectionFeatures(spec: unknown): { computed: boolean; findOperators: boolean } {
  const out = { computed: false, findOperators: false };
  const walk = (v: Doc): void => {
    for (const key of Object.keys(v)) {
      if (key === '$' || key.endsWith('.$')) out.findOperators = true;
      const value = v[key];
      if (typeof value === 'number' || typeof value === 'boolean') continue;
      if (!isPlainObject(value)) {
        out.computed = true;
        continue;
      }
      const first = Object.keys(value)[0];
      if (first === undefined) continue; // refused by compileProjection
      if (!first.startsWith('$')) walk(value);
      else if (FIND_OPERATORS.has(first)) out.findOperators = true;
      else out.computed = true;
    }
  };
  if (isPlainObject(spec)) walk(spec);
  return out;
}

function checkPath(path: string): string[] {
  const parts = path.split('.');
  for (const part of parts) {
    if (part === '') invalid(`projection path '${path}' has an empty field name`, path);
    if (part === '$') invalid(`the positional operator '$' may only end a projection path ('${path}')`, path);
    if (part.startsWith('$')) invalid(`projection path '${path}' has a field name starting with '$'`, path);
  }
  return parts;
}

function addPath(tree: Tree, parts: readonly string[], path: string, leaf: Leaf): void {
  let node = tree;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const existing = node.get(part);
    const isLast = i === parts.length - 1;
    if ((existing !== undefined && !(existing instanceof Map)) || (existing !== undefined && isLast)) {
      invalid(`Path collision at ${path}`, path);
    }
    if (isLast) {
      node.set(part, leaf);
    } else {
      let next = existing;
      if (next === undefined) node.set(part, (next = new Map()));
      node = next;
    }
  }
}

function sliceOf(v: unknown, leaf: SliceLeaf): unknown {
  if (!Array.isArray(v)) return cloneValue(v);
  let start: number;
  let end: number;
  if (leaf.last !== undefined) {
    start = Math.max(0, v.length - leaf.last);
    end = v.length;
  } else {
    start = leaf.skip >= 0 ? Math.min(leaf.skip, v.length) : Math.max(0, v.length + leaf.skip);
    end = leaf.limit === undefined ? v.length : Math.min(v.length, start + leaf.limit);
  }
  return v.slice(start, end).map(cloneValue);
}

// The projected value of a leaf in an inclusion, or MISSING to leave the field out.
function includeLeaf(v: unknown, leaf: Leaf): unknown {
  if (leaf === true) return cloneValue(v);
  if (leaf.kind === 'slice') return sliceOf(v, leaf);
  if (!Array.isArray(v)) return MISSING;
  for (const el of v) if (leaf.matches(el)) return [cloneValue(el)];
  return MISSING;
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
    const projected = sub instanceof Map ? includeValue(obj[key], sub) : includeLeaf(obj[key], sub);
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
    // Exclusion trees hold only `true` and $slice leaves (the inclusion-only forms are refused).
    setOwn(out, key, sub === undefined ? cloneValue(v) : sub instanceof Map ? excludeValue(v, sub) : sliceOf(v, sub as SliceLeaf));
  }
  return out;
}

const WHOLE_DOCUMENTS: CompiledProjection = Object.freeze({ mode: 'all', paths: [], includesId: true, apply: (doc: Doc) => cloneValue(doc) as Doc });

// The document with the first array on `parts` cut down to its element at the recorded position.
function positionalView(doc: Doc, parts: readonly string[], position: (doc: Doc) => number | undefined, path: string): Doc {
  const at = firstArray(doc, parts);
  if (at === undefined) return doc; // no array on the path: projected as a plain inclusion
  const i = position(doc);
  if (i === undefined || i >= at.array.length) invalid(`positional operator '${path}.$' couldn't find a matching element in the array`, path);
  return withPath(doc, at.prefix, [at.array[i]]);
}

/**
 * Compiles a find projection (undefined, null and {} return whole documents). A positional
 * `a.$` takes its position from `options.filter`.
 * @throws QUERY_ERROR for mixed inclusion and exclusion, path collisions and malformed or
 *   unsupported forms
 */
export function compileProjection(spec: unknown, options: ProjectionOptions = {}): CompiledProjection {
  // The common case, no projection: one shared answer instead of a compile per find.
  if (spec === undefined || spec === null) return WHOLE_DOCUMENTS;
  if (!isPlainObject(spec)) invalid('projection must be an object such as {"a": 1}');
  const { projection, metas } = compileFields(spec, options);
  if (metas.length === 0) return projection;
  // The text score fields come last, replacing a field of the same name (MongoDB's metadata fields).
  return {
    ...projection,
    textScore: true,
    apply: (doc) => {
      const out = projection.apply(doc);
      // A match without a score (another clause of the `$text` query's `$or` matched it) has none to show, as in MongoDB.
      const score = textScoreOf(doc);
      if (score !== undefined) for (const path of metas) setOwn(out, path, score);
      return out;
    },
  };
}

function compileFields(spec: Doc, options: ProjectionOptions): { projection: CompiledProjection; metas: readonly string[] } {
  const entries: Entry[] = [];
  flatten(spec, '', entries);
  let idSetting: boolean | undefined;
  let mode: 'inclusion' | 'exclusion' | undefined;
  let sliced = false;
  let positional: { parts: string[]; path: string } | undefined;
  const tree: Tree = new Map();
  const paths: string[] = [];
  const metas: string[] = [];
  for (const entry of entries) {
    const { path } = entry;
    if (path === '') invalid("the positional operator '$' needs a field before it ('.$')");
    const parts = checkPath(path);
    if (entry.kind === 'meta') {
      if (metas.includes(path) || tree.has(path)) invalid(`Path collision at ${path}`, path);
      metas.push(path);
      continue;
    }
    if (metas.includes(path)) invalid(`Path collision at ${path}`, path);
    if (path === '_id' && (entry.kind === 'include' || entry.kind === 'exclude')) {
      idSetting = entry.kind === 'include';
      continue;
    }
    const slice = entry.kind === 'operator' && entry.leaf.kind === 'slice';
    if (slice) sliced = true;
    else {
      const wanted = entry.kind === 'exclude' ? 'exclusion' : 'inclusion';
      if (mode !== undefined && mode !== wanted) {
        invalid(wanted === 'inclusion' ? `Cannot do inclusion on field ${path} in exclusion projection` : `Cannot do exclusion on field ${path} in inclusion projection`, path);
      }
      mode = wanted;
    }
    if (entry.kind === 'positional') {
      if (positional !== undefined) invalid('Cannot specify more than one positional projection per query.', path);
      positional = { parts, path };
    }
    addPath(tree, parts, path, entry.kind === 'operator' ? entry.leaf : true);
    paths.push(entry.kind === 'positional' ? `${path}.$` : path);
  }
  // Slices alone return every other field; `_id` alone decides otherwise: {_id: 0} excludes it, {_id: 1} returns only it.
  if (mode === undefined && sliced) mode = 'exclusion';
  if (mode === undefined && idSetting !== undefined) mode = idSetting ? 'inclusion' : 'exclusion';
  // Text scores alone return every field too (an exclusion of nothing, so that they are added).
  if (mode === undefined && metas.length > 0) mode = 'exclusion';
  if (mode === undefined) return { projection: { mode: 'all', paths: [], includesId: true, apply: (doc) => cloneValue(doc) }, metas };
  // A path inside _id ("_id.a") takes over from the whole-_id default.
  const idTree = tree.get('_id');
  if (idSetting !== undefined && idTree !== undefined) invalid('Path collision at _id', '_id');
  const includesId = idSetting ?? (mode === 'inclusion' ? idTree === undefined : true);
  if (mode === 'inclusion' && includesId) tree.set('_id', true);
  if (mode === 'exclusion' && idSetting === false) tree.set('_id', true);
  if (mode === 'inclusion') {
    if (positional === undefined) return { projection: { mode, paths, includesId, apply: (doc) => includeObject(doc, tree) }, metas };
    const { parts, path } = positional;
    const position = positionFinder(options.filter?.());
    return { projection: { mode, paths, includesId, apply: (doc) => includeObject(positionalView(doc, parts, position, path), tree) }, metas };
  }
  return { projection: { mode, paths, includesId, apply: (doc) => excludeObject(doc, tree) }, metas };
}
