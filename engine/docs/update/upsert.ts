/**
 * The document an upsert inserts when nothing matches, built as MongoDB builds it: the
 * equality conditions of the filter (top-level fields, `$and` members, a single-member `$or`,
 * `$in` with one value, `$all` members) seed a new document, then the update is applied with
 * isInsert (so $setOnInsert applies). `_id` comes first when the filter or the update sets it;
 * otherwise the caller generates one.
 */

import { fail } from '../../errors.js';
import type { AndNode, FilterNode } from '../query/filter-ast.js';
import { cloneValue, compareStrings, getOwn, MISSING, setOwn, type Doc } from '../values.js';
import type { CompiledUpdate } from './compile-update.js';
import { locate, writeChild } from './update-path.js';

interface Equality {
  readonly path: string;
  readonly parts: readonly string[];
  readonly value: unknown;
}

function collect(node: FilterNode, out: Equality[]): void {
  switch (node.kind) {
    case 'and':
      for (const child of node.children) collect(child, out);
      return;
    case 'or':
      // MongoDB simplifies a one-member $or to its member; larger ones say nothing certain.
      if (node.children.length === 1) collect(node.children[0]!, out);
      return;
    case 'nor':
    case 'expr':
    case 'sampleRate':
    case 'jsonSchema':
    case 'text':
      return;
    case 'field':
      for (const op of node.ops) {
        if (op.op === '$eq') out.push({ path: node.path, parts: node.path.split('.'), value: op.value });
        else if (op.op === '$in' && op.value.length === 1) out.push({ path: node.path, parts: node.path.split('.'), value: op.value[0] });
      }
      return;
    default: {
      const unhandled: never = node;
      throw new Error(`unhandled filter node ${JSON.stringify(unhandled)}`);
    }
  }
}

function compareParts(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareStrings(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

function checkInferable(equalities: readonly Equality[]): void {
  // Sorted component-wise, a path sits next to a path it equals or extends whenever one exists.
  const sorted = [...equalities].sort((x, y) => compareParts(x.parts, y.parts));
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!;
    const b = sorted[i]!;
    if (a.path === b.path) fail('QUERY_ERROR', `cannot infer query fields to set, path '${a.path}' is matched twice`, { path: a.path });
    if (a.parts.length < b.parts.length && a.parts.every((p, k) => p === b.parts[k])) {
      fail('QUERY_ERROR', `cannot infer query fields to set, both paths '${a.path}' and '${b.path}' are matched`, { path: b.path });
    }
  }
}

/**
 * The document an upsert inserts for `filter` and `update` (see the file comment); the caller
 * adds an `_id` if it has none and validates the result. @throws QUERY_ERROR
 */
export function buildUpsertDocument(filter: { readonly ast: AndNode }, update: CompiledUpdate, options: { now?: Date; variables?: ReadonlyMap<string, unknown> } = {}): Doc {
  const equalities: Equality[] = [];
  collect(filter.ast, equalities);
  checkInferable(equalities);
  const seed: Doc = {};
  for (const eq of equalities) {
    const at = locate(seed, eq.parts, true, 'upsert')!;
    writeChild(at.container, at.key, cloneValue(eq.value), 'upsert');
  }
  const { doc } = update.apply(seed, { isInsert: true, now: options.now ?? new Date(), variables: options.variables });
  const id = getOwn(doc, '_id');
  if (id === MISSING || Object.keys(doc)[0] === '_id') return doc;
  const ordered: Doc = {};
  setOwn(ordered, '_id', id);
  for (const key of Object.keys(doc)) if (key !== '_id') setOwn(ordered, key, doc[key]);
  return ordered;
}

/**
 * The `_id` a replacement upsert takes from `filter` when its replacement has none: the value of
 * an equality condition on `_id` itself (MongoDB takes no other field from the filter of a
 * replacement), or MISSING. @throws QUERY_ERROR when the filter fixes `_id` twice
 */
export function filterIdEquality(filter: { readonly ast: AndNode }): unknown {
  const equalities: Equality[] = [];
  collect(filter.ast, equalities);
  const ids = equalities.filter((e) => e.path === '_id');
  checkInferable(ids);
  return ids.length === 0 ? MISSING : cloneValue(ids[0]!.value);
}
