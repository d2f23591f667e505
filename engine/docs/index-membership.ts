/**
 * Which documents an index holds, and which queries may read it: MongoDB's sparse indexes (only
 * documents with at least one of the indexed fields) and partial indexes (only documents a
 * `partialFilterExpression` matches).
 *
 * Such an index is incomplete, so a plan may read it only when every document the query can
 * match is in it: the query must imply the index's membership filter. The check is conservative,
 * as MongoDB's is: it proves the implication condition by condition (a query's `{rating: {$gte:
 * 8}}` implies a member filter's `{rating: {$gt: 5}}`) and answers false when it cannot, which
 * only costs a different plan, never a different answer.
 *
 * Soundness rests on how a field node matches (filter-ast.ts): each of its conditions holds for
 * some value at its path, on its own. So a query condition that makes some value at the path
 * equal `w` implies a member condition that `w` itself satisfies, and a range implies a wider
 * range of the same type bracket.
 */

import { fail } from '../errors.js';
import type { IndexInfo } from './catalog.js';
import { compileFilter, opsMatchValue, type CompiledFilter } from './query/compile-filter.js';
import type { AndNode, FieldNode, FieldOp, FilterNode } from './query/filter-ast.js';
import { compareValues, isPlainObject, TYPE_BRACKET, typeBracket, type Doc } from './values.js';

// The operators MongoDB accepts in a partialFilterExpression (manual: Partial Indexes).
const PARTIAL_FIELD_OPERATORS = new Set(['$eq', '$exists', '$gt', '$gte', '$lt', '$lte', '$type', '$in']);
// A partial filter is small: $and/$or nest at most three levels under its top.
const MAX_PARTIAL_DEPTH = 4;

function unsupported(what: string): never {
  fail('VALIDATION_FAILED', `Expression not supported in partial index: ${what}`, { field: 'partialFilterExpression' });
}

function checkPartialClauses(filter: unknown, depth: number): void {
  if (!isPlainObject(filter)) fail('VALIDATION_FAILED', 'partialFilterExpression must be an object', { field: 'partialFilterExpression' });
  if (depth > MAX_PARTIAL_DEPTH) unsupported('$and/$or nested too deeply');
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(value) || value.length === 0) fail('VALIDATION_FAILED', `${key} in partialFilterExpression must be a non-empty array`, { field: 'partialFilterExpression' });
      for (const clause of value) checkPartialClauses(clause, depth + 1);
      continue;
    }
    if (key.startsWith('$')) unsupported(key);
    // A field: a value (equality) or an operator object.
    if (!isPlainObject(value)) continue;
    const names = Object.keys(value);
    if (!names.some((n) => n.startsWith('$'))) continue; // an embedded document: equality
    for (const name of names) {
      if (!PARTIAL_FIELD_OPERATORS.has(name)) unsupported(`${key}: {${name}: ...}`);
      if (name === '$exists' && value[name] !== true) unsupported(`${key}: {$exists: ${JSON.stringify(value[name])}} (only $exists: true)`);
    }
  }
}

/**
 * Checks a createIndex `partialFilterExpression` (as the client wrote it, Extended JSON) and
 * returns it to store.
 * @throws VALIDATION_FAILED for an operator MongoDB does not accept there, or a filter that does not compile
 */
export function validatePartialFilter(spec: unknown): Doc {
  checkPartialClauses(spec, 1);
  if (Object.keys(spec as Doc).length === 0) fail('VALIDATION_FAILED', 'partialFilterExpression must not be empty', { field: 'partialFilterExpression' });
  compileFilter(spec); // a QUERY_ERROR for a bad operand ($type: "nonsense", $in: 3)
  return spec as Doc;
}

// Compiled membership filters, per stored spec object (an IndexInfo copy shares its spec).
const PARTIAL_FILTERS = new WeakMap<Doc, CompiledFilter>();
const SPARSE_FILTERS = new WeakMap<IndexInfo['fields'], CompiledFilter>();

/** The filter a document must match to be in `index`; undefined for an index that holds every document. */
export function membershipFilter(index: IndexInfo): CompiledFilter | undefined {
  const partial = index.partialFilterExpression;
  if (partial !== undefined) {
    let compiled = PARTIAL_FILTERS.get(partial);
    if (compiled === undefined) {
      compiled = compileFilter(partial);
      PARTIAL_FILTERS.set(partial, compiled);
    }
    return compiled;
  }
  if (index.sparse === true) {
    let compiled = SPARSE_FILTERS.get(index.fields);
    if (compiled === undefined) {
      compiled = compileFilter({ $or: index.fields.map((f) => ({ [f.path]: { $exists: true } })) });
      SPARSE_FILTERS.set(index.fields, compiled);
    }
    return compiled;
  }
  return undefined;
}

/** True when `doc` belongs in `index` (every document, for an index that is neither sparse nor partial). */
export function isIndexMember(index: IndexInfo, doc: Doc): boolean {
  const filter = membershipFilter(index);
  return filter === undefined || filter.test(doc);
}

/** True when every document `query` can match is in `index`, so a plan may read the index alone. */
export function indexServesQuery(index: IndexInfo, query: AndNode): boolean {
  const filter = membershipFilter(index);
  return filter === undefined || implies(query, filter.ast);
}

// ---- Implication --------------------------------------------------------------------------------

/** True when every document matching `query` matches `member` (false: not proven). */
function implies(query: FilterNode, member: FilterNode): boolean {
  // Each rule below is sound on its own; the answer is true when any of them proves it.
  if (query.kind === 'or') return query.children.length > 0 && query.children.every((q) => implies(q, member));
  if (member.kind === 'and') return member.children.every((m) => implies(query, m));
  if (member.kind === 'or' && member.children.some((m) => implies(query, m))) return true;
  if (query.kind === 'and') return query.children.some((q) => implies(q, member));
  if (query.kind === 'field' && member.kind === 'field') return fieldImplies(query, member);
  return false;
}

function fieldImplies(query: FieldNode, member: FieldNode): boolean {
  if (query.path !== member.path) return false;
  return member.ops.every((m) => query.ops.some((q) => opImplies(q, m)));
}

function sameOp(a: FieldOp, b: FieldOp): boolean {
  return a.op === b.op && JSON.stringify(a) === JSON.stringify(b) && compareValues(a.value, b.value) === 0;
}

// Operators that only match a present field (MongoDB's list for {$exists: true} partial indexes).
const NEEDS_FIELD = new Set(['$exists', '$type', '$regex', '$mod', '$size', '$elemMatch']);

/** True when a field's value `v` in an equality or `$in` lets it match missing fields too. */
function matchesMissing(v: unknown): boolean {
  return v === null;
}

/** True when `query` (a condition on a path) excludes documents without the path. */
function excludesMissing(query: FieldOp): boolean {
  switch (query.op) {
    case '$exists':
      return query.value;
    case '$eq':
    case '$gt':
    case '$gte':
    case '$lt':
    case '$lte':
      return !matchesMissing(query.value);
    case '$in':
      return query.value.length > 0 && !query.value.some(matchesMissing);
    case '$ne':
      return query.value === null;
    case '$nin':
      return query.value.some(matchesMissing);
    default:
      return NEEDS_FIELD.has(query.op);
  }
}

// Values whose equality condition is settled by value alone: not an array (equality with an
// array also matches the array as a whole), not null (which also matches missing fields).
function plainOperand(v: unknown): boolean {
  return v !== null && v !== undefined && !Array.isArray(v);
}

const RANGE_OPS = new Set(['$gt', '$gte', '$lt', '$lte']);

function rangeImplies(query: FieldOp & { value: unknown }, member: FieldOp & { value: unknown }): boolean {
  const w = query.value;
  const v = member.value;
  const bracket = typeBracket(v);
  if (typeBracket(w) !== bracket || bracket === TYPE_BRACKET.null || bracket === TYPE_BRACKET.object || bracket === TYPE_BRACKET.array) return false;
  const c = compareValues(w, v);
  switch (member.op) {
    case '$gt':
      return (query.op === '$gt' && c >= 0) || (query.op === '$gte' && c > 0);
    case '$gte':
      return (query.op === '$gt' || query.op === '$gte') && c >= 0;
    case '$lt':
      return (query.op === '$lt' && c <= 0) || (query.op === '$lte' && c < 0);
    case '$lte':
      return (query.op === '$lt' || query.op === '$lte') && c <= 0;
    default:
      return false;
  }
}

function typeImplies(query: FieldOp, member: FieldOp & { op: '$type' }): boolean {
  if (query.op !== '$type') return false;
  const allowed = new Set<string>(member.value);
  const numeric = allowed.has('number');
  return query.value.every((t) => allowed.has(t) || (numeric && (t === 'int' || t === 'long' || t === 'double' || t === 'decimal')));
}

/** True when every document meeting `query` meets `member` (both conditions on the same path). */
function opImplies(query: FieldOp, member: FieldOp): boolean {
  if (sameOp(query, member)) return true;
  if (member.op === '$exists') return member.value ? excludesMissing(query) : false;
  if (member.op !== '$eq' && member.op !== '$in' && member.op !== '$type' && !RANGE_OPS.has(member.op)) return false;
  // The query pins the path's value(s): the member condition must hold for each of them.
  if (query.op === '$eq') return plainOperand(query.value) && opsMatchValue([member], query.value);
  if (query.op === '$in') return query.value.length > 0 && query.value.every((w) => plainOperand(w) && opsMatchValue([member], w));
  if (member.op === '$type') return typeImplies(query, member);
  if (RANGE_OPS.has(query.op) && RANGE_OPS.has(member.op)) return rangeImplies(query as FieldOp & { value: unknown }, member as FieldOp & { value: unknown });
  return false;
}
