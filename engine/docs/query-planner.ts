/**
 * Picks how a filter (and sort) reads a collection: by `_id`, through one secondary index, or by
 * scanning the collection. A plan only narrows the candidates (bounds are always a superset of
 * the matches); every candidate is then tested against the whole filter, so a plan can cost
 * time but never change an answer. Plans are small immutable objects with a `kind`.
 *
 * Bounds come from the top-level AND-ed conditions: `$eq` and `$in` give points, `$gt`/`$gte`/
 * `$lt`/`$lte` a range within the operand's type bracket (comparisons only match their own
 * type). A compound index takes points on a prefix of its fields, then at most one range.
 */

import { fail } from '../errors.js';
import { keyPrefixRange, encodeKey, type KeyPart, type ScanRange } from '../storage/index.js';
import { indexUsable, sameKeyPattern, type CollectionInfo, type IndexInfo } from './catalog.js';
import { indexServesQuery } from './index-membership.js';
import { directed, EMPTY_ARRAY_COMPONENT, idComponent, indexComponent, isScalarForBounds, type Component, type IndexField } from './index-key.js';
import type { AndNode, FieldOp, FilterNode, OrNode } from './query/filter-ast.js';
import { withExprEqualities, type ExprRangeOp } from './query/expr-bounds.js';
import type { Scope } from './aggregate/expression/expression.js';
import { filterTextSearch, topLevelConditions } from './query/compile-filter.js';
import { termKey, textKeyFields, textKeyPattern, type TextSearch } from './text/index.js';
import type { SortKey } from './sort.js';
import { TYPE_BRACKET, typeBracket } from './values.js';

/** One end of an interval over a component, in the index's stored order. */
interface Bound {
  readonly part: KeyPart;
  readonly inclusive: boolean;
}

/** What the conditions on one field allow: points, or one interval, or nothing usable. */
type FieldBounds = { readonly kind: 'points'; readonly parts: readonly KeyPart[] } | { readonly kind: 'range'; readonly lo: Bound; readonly hi: Bound } | undefined;

export type Plan =
  /** Nothing can match (an empty `$in`). */
  | { readonly kind: 'empty' }
  /** Documents by `_id`: point reads or ranges of the collection's own tree (also a full scan). */
  | { readonly kind: 'primary'; readonly ranges: readonly ScanRange[]; readonly points: boolean; readonly reverse: boolean; readonly sorted: boolean }
  /** Entries of one secondary index, then the documents they name. */
  | { readonly kind: 'index'; readonly index: IndexInfo; readonly ranges: readonly ScanRange[]; readonly reverse: boolean; readonly sorted: boolean; readonly dedupe: boolean }
  /** The union of several reads (an `$or` holding a `$text`, each of its clauses read through an index): each document once. */
  | { readonly kind: 'or'; readonly children: readonly ReadPlan[]; readonly sorted: boolean };

/** A plan that reads one tree: the collection's own or one index's. */
export type ReadPlan = Plan & { readonly kind: 'primary' | 'index' };

// Above this many point combinations a compound prefix stops extending (the rest stays unbounded).
const MAX_POINT_COMBINATIONS = 1000;

const ID_FIELD: readonly IndexField[] = [{ path: '_id', direction: 1 }];

/** How a field's values become key components: indexComponent, or idComponent for the primary tree (ids are kept exact). */
type ComponentOf = (v: unknown) => Component;

function pointsOf(value: unknown, component: ComponentOf): KeyPart[] {
  if (Array.isArray(value)) {
    // Equality with an array matches the array itself as an element, or the whole field, whose
    // index keys are its elements: the first one (or the empty-array key) is among them.
    const first = value.length === 0 ? EMPTY_ARRAY_COMPONENT.part : component(value[0]).part;
    return [component(value).part, first];
  }
  return [component(value).part];
}

function bracketStart(bracket: number): Bound {
  return { part: [bracket], inclusive: true };
}

function bracketEnd(bracket: number): Bound {
  return { part: [bracket + 1], inclusive: false };
}

/** The ascending bounds the conditions on one path give; undefined when none is usable. */
function fieldBounds(ops: readonly FieldOp[], multikey: boolean, component: ComponentOf): FieldBounds {
  let points: KeyPart[] | undefined;
  let lo: Bound | undefined;
  let hi: Bound | undefined;
  let bracket: number | undefined;
  // Bounds over the order of all values, from `$expr` comparisons: not on a multikey index (an
  // array compares as a whole there, its element keys bound nothing); used when no bracketed range is.
  let exprLo: Bound | undefined;
  let exprHi: Bound | undefined;
  for (const op of ops) {
    if ((op as FieldOp | ExprRangeOp).op === '$exprRange') {
      if (multikey) continue;
      const { cmp, bound } = (op as unknown as ExprRangeOp).value;
      const c = component(bound);
      const b = { part: c.part, inclusive: cmp === '$gte' || cmp === '$lte' || c.lossy };
      if (cmp === '$gt' || cmp === '$gte') exprLo ??= b;
      else exprHi ??= b;
      continue;
    }
    switch (op.op) {
      case '$eq': {
        const p = pointsOf(op.value, component);
        points = points === undefined ? p : points; // one equality bounds; others are filtered
        break;
      }
      case '$in':
        if (points === undefined) points = op.value.flatMap((v) => pointsOf(v, component));
        break;
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte': {
        const v = op.value;
        if (!isScalarForBounds(v) || typeBracket(v) === TYPE_BRACKET.null) break;
        const b = typeBracket(v);
        if (bracket !== undefined && bracket !== b) return undefined; // both cannot hold: the filter decides
        bracket = b;
        const c = component(v);
        const bound = { part: c.part, inclusive: op.op === '$gte' || op.op === '$lte' || c.lossy };
        if (op.op === '$gt' || op.op === '$gte') {
          lo = bound;
          if (multikey) hi = undefined;
        } else {
          hi = bound;
          if (multikey) lo = undefined;
        }
        break;
      }
      default:
        break;
    }
  }
  if (points !== undefined) return { kind: 'points', parts: points };
  if (bracket !== undefined) return { kind: 'range', lo: lo ?? bracketStart(bracket), hi: hi ?? bracketEnd(bracket) };
  if (exprLo !== undefined || exprHi !== undefined) return { kind: 'range', lo: exprLo ?? bracketStart(TYPE_BRACKET.minKey), hi: exprHi ?? bracketEnd(TYPE_BRACKET.maxKey) };
  return undefined;
}

function flip(bounds: FieldBounds & { kind: 'range' }, direction: 1 | -1): { lo: Bound; hi: Bound } {
  if (direction === 1) return bounds;
  // Complemented bytes reverse the order: the ascending upper end becomes the lower one.
  return {
    lo: { part: directed(bounds.hi.part, -1), inclusive: bounds.hi.inclusive },
    hi: { part: directed(bounds.lo.part, -1), inclusive: bounds.lo.inclusive },
  };
}

/** The byte range of keys extending `prefix` whose next component lies within [lo, hi]. */
function rangeOf(prefix: readonly KeyPart[], lo: Bound | undefined, hi: Bound | undefined): ScanRange {
  const range: ScanRange = {};
  if (lo === undefined && hi === undefined) {
    // Equality on every bounded field: the prefix's range, encoded once.
    if (prefix.length === 0) return range;
    const { start, end } = keyPrefixRange(prefix);
    range.gte = start;
    if (end !== undefined) range.lt = end;
    return range;
  }
  if (lo === undefined) {
    if (prefix.length > 0) range.gte = encodeKey(prefix);
  } else {
    range.gte = lo.inclusive ? encodeKey([...prefix, lo.part]) : keyPrefixRange([...prefix, lo.part]).end!;
  }
  if (hi === undefined) {
    const end = prefix.length > 0 ? keyPrefixRange(prefix).end : undefined;
    if (end !== undefined) range.lt = end;
  } else {
    range.lt = hi.inclusive ? keyPrefixRange([...prefix, hi.part]).end! : encodeKey([...prefix, hi.part]);
  }
  return range;
}

interface Candidate {
  readonly ranges: ScanRange[];
  readonly eqFields: number;
  readonly hasRange: boolean;
  readonly single: boolean;
}

/** Key ranges of an index over `fields` for these conditions, or undefined when they bound nothing. */
function boundsFor(fields: readonly IndexField[], conditions: Map<string, readonly FieldOp[]>, multikey = false): Candidate | undefined {
  let prefixes: KeyPart[][] = [[]];
  let eqFields = 0;
  for (const field of fields) {
    const ops = conditions.get(field.path);
    const bounds = ops === undefined ? undefined : fieldBounds(ops, multikey, fields === ID_FIELD ? idComponent : indexComponent);
    if (bounds === undefined) break;
    if (bounds.kind === 'points') {
      if (prefixes.length * bounds.parts.length > MAX_POINT_COMBINATIONS) break;
      if (prefixes.length === 1 && bounds.parts.length === 1) {
        // One point (the common equality): nothing to deduplicate.
        prefixes = [[...prefixes[0]!, directed(bounds.parts[0]!, field.direction)]];
        eqFields++;
        continue;
      }
      const next: KeyPart[][] = [];
      const seen = new Set<string>();
      for (const prefix of prefixes) {
        for (const p of bounds.parts) {
          const parts = [...prefix, directed(p, field.direction)];
          const id = encodeKey(parts).toString('latin1');
          if (!seen.has(id)) {
            seen.add(id);
            next.push(parts);
          }
        }
      }
      prefixes = next;
      eqFields++;
      continue;
    }
    const { lo, hi } = flip(bounds, field.direction);
    const ranges = prefixes.map((prefix) => rangeOf(prefix, lo, hi));
    return { ranges, eqFields, hasRange: true, single: ranges.length === 1 };
  }
  if (eqFields === 0) return undefined;
  // Ranges in ascending key order, so a single-prefix plan still reads in index order.
  const ranges = prefixes.map((prefix) => rangeOf(prefix, undefined, undefined)).sort((a, b) => Buffer.compare(a.gte as Buffer, b.gte as Buffer));
  return { ranges, eqFields, hasRange: false, single: ranges.length === 1 };
}

/** Whether reading `fields` in order (or reversed) after `eqFields` fixed ones gives `sort`. */
function sortDirection(fields: readonly IndexField[], eqFields: number, sort: readonly SortKey[]): 'forward' | 'reverse' | undefined {
  if (sort.length === 0) return 'forward';
  let direction: 'forward' | 'reverse' | undefined;
  let next = eqFields;
  for (const key of sort) {
    if (key.meta !== undefined) return undefined; // a text score is no field of any index
    const field = fields[next];
    if (field !== undefined && field.path === key.path) {
      const d = field.direction === key.direction ? 'forward' : 'reverse';
      if (direction !== undefined && direction !== d) return undefined;
      direction = d;
      next++;
      continue;
    }
    // A sort key on a field fixed by equality costs nothing.
    if (!fields.slice(0, eqFields).some((f) => f.path === key.path)) return undefined;
  }
  return direction ?? 'forward';
}

/**
 * MongoDB's `hint`: read through one index, named or given by its key pattern (`_id_` or
 * `{_id: 1}`: the collection's own tree), or scan in `$natural` order (`_id` order here).
 */
export type Hint = { readonly kind: 'name'; readonly name: string } | { readonly kind: 'keys'; readonly fields: readonly IndexField[] } | { readonly kind: 'natural'; readonly reverse: boolean };

function badHint(hint: Hint, why: string): never {
  const shown = hint.kind === 'name' ? JSON.stringify(hint.name) : hint.kind === 'keys' ? JSON.stringify(Object.fromEntries(hint.fields.map((f) => [f.path, f.direction]))) : '$natural';
  fail('QUERY_ERROR', `hint provided does not correspond to an existing index: ${shown} (${why})`, { hint: shown });
}

/** The plan of `_id` points (`_id` equality or `$in`): sorted when one point, or when no sort is asked for. */
function idPoints(primary: Candidate, sort: readonly SortKey[]): Plan {
  return { kind: 'primary', ranges: primary.ranges, points: true, reverse: false, sorted: sort.length === 0 || (primary.single && sortDirection(ID_FIELD, 1, sort) !== undefined) };
}

/** A read of the collection's own tree over `_id` ranges (the whole tree without them), in the sort's direction when it can give it. */
function primaryRead(primary: Candidate | undefined, sort: readonly SortKey[]): Plan & { kind: 'primary' } {
  const dir = primary === undefined || primary.single ? sortDirection(ID_FIELD, 0, sort) : undefined;
  return { kind: 'primary', ranges: primary?.ranges ?? [{}], points: false, reverse: dir === 'reverse', sorted: sort.length === 0 || dir !== undefined };
}

/** A read of `index` over `bounds` (the whole index without them), in the sort's direction when it can give it. */
function indexRead(index: IndexInfo, bounds: Candidate | undefined, sort: readonly SortKey[]): Plan & { kind: 'index' } {
  const orderable = !index.multikey && !index.lossy;
  const dir = orderable && (bounds === undefined || bounds.single) ? sortDirection(index.fields, bounds?.eqFields ?? 0, sort) : undefined;
  const dedupe = index.multikey || (bounds !== undefined && bounds.ranges.length > 1);
  return { kind: 'index', index, ranges: bounds?.ranges ?? [{}], reverse: dir === 'reverse', sorted: sort.length === 0 || dir !== undefined, dedupe };
}

/**
 * The plan a hint asks for: its index read with the bounds the query gives it, or whole when it
 * gives none. As in MongoDB, a hinted sparse index is read even when it misses documents the
 * query matches (the manual: such a hint gives an incomplete result); a partial index only
 * serves a query that implies its filter.
 * @throws QUERY_ERROR when no index fits the hint, the index is still being built, or the query does not imply a partial index's filter
 */
function hintedPlan(info: CollectionInfo, ast: AndNode, sort: readonly SortKey[], hint: Hint): Plan {
  if (hint.kind === 'natural') return { kind: 'primary', ranges: [{}], points: false, reverse: hint.reverse, sorted: sort.length === 0 };
  const conditions = topLevelConditions(ast);
  if (hint.kind === 'name' ? hint.name === '_id_' : sameKeyPattern(hint.fields, ID_FIELD)) {
    const primary = boundsFor(ID_FIELD, conditions);
    if (primary !== undefined && primary.ranges.length === 0) return { kind: 'empty' };
    return primary !== undefined && !primary.hasRange ? idPoints(primary, sort) : primaryRead(primary, sort);
  }
  const matching = info.indexes.filter((i) => (hint.kind === 'name' ? i.name === hint.name : sameKeyPattern(i.fields, hint.fields)));
  if (matching.length === 0) badHint(hint, 'no such index');
  // As MongoDB: a hidden index is not there for the planner, hinted or not.
  if (matching.every((i) => i.hidden === true)) badHint(hint, 'the index is hidden');
  if (matching.some((i) => i.text !== undefined)) badHint(hint, 'a text index answers $text queries only');
  // Several partial indexes may share a key pattern: the first whose filter the query implies.
  const index = matching.find((i) => i.hidden !== true && (i.partialFilterExpression === undefined || indexServesQuery(i, ast))) ?? badHint(hint, "the query does not imply the partial index's filter");
  if ((index as { building?: boolean }).building === true) badHint(hint, 'the index is still being built');
  const bounds = boundsFor(index.fields, conditions, index.multikey);
  if (bounds !== undefined && bounds.ranges.length === 0) return { kind: 'empty' };
  return indexRead(index, bounds, sort);
}

/**
 * The plan for `ast` (and `sort`, when one is asked for) over a collection's indexes. Indexes
 * still being built are not used, nor sparse or partial ones the query could find incomplete.
 * With a `hint`, the plan it names (hintedPlan); with a `$text`, a read of the text index
 * (textQueryPlan). `vars`: the variables the filter is evaluated with (its `$expr`s' `let`s).
 * @throws QUERY_ERROR for a hint no index fits, or a `$text` the text index cannot answer
 */
export function planQuery(info: CollectionInfo | undefined, ast: AndNode, sort: readonly SortKey[], hint?: Hint, vars?: Scope): Plan {
  if (info === undefined) return { kind: 'empty' };
  const text = filterTextSearch(ast);
  if (text !== undefined) return textQueryPlan(info, ast, text, sort, hint);
  // Equalities of `$expr`s to values known now are read as bounds too (query/expr-bounds.ts).
  const planned = withExprEqualities(ast, vars);
  if (hint !== undefined) return hintedPlan(info, planned, sort, hint);
  return indexedPlan(info, planned, sort) ?? primaryRead(undefined, sort);
}

/**
 * The best plan reading `_id`s or an index over bounds the top-level conditions of `ast` give
 * (or, with a sort, a whole index read that gives it); undefined when there is none, and only a
 * collection scan would do.
 */
function indexedPlan(info: CollectionInfo, ast: AndNode, sort: readonly SortKey[]): Plan | undefined {
  const conditions = topLevelConditions(ast);
  const wantsSort = sort.length > 0;

  const primary = boundsFor(ID_FIELD, conditions);
  if (primary !== undefined && primary.ranges.length === 0) return { kind: 'empty' };
  if (primary !== undefined && !primary.hasRange) return idPoints(primary, sort);

  let best: { plan: Plan; score: number } | undefined;
  const consider = (plan: Plan, score: number): void => {
    if (best === undefined || score > best.score) best = { plan, score };
  };
  if (primary !== undefined) {
    const plan = primaryRead(primary, sort);
    consider(plan, 5 + (wantsSort && plan.sorted ? 3 : 0));
  }
  for (const index of info.indexes) {
    // A text index holds terms, not values: it answers $text alone (textQueryPlan).
    if (!indexUsable(index) || index.text !== undefined) continue;
    // A sparse or partial index misses documents: only a query that cannot match them may read it.
    if (!indexServesQuery(index, ast)) continue;
    const bounds = boundsFor(index.fields, conditions, index.multikey);
    if (bounds === undefined) {
      // No bounds: worth a full index read only to give a requested sort.
      if (!wantsSort) continue;
      const plan = indexRead(index, undefined, sort);
      if (plan.sorted) consider(plan, 1);
      continue;
    }
    if (bounds.ranges.length === 0) return { kind: 'empty' };
    const plan = indexRead(index, bounds, sort);
    const score = bounds.eqFields * 10 + (bounds.hasRange ? 5 : 0) + (index.unique && bounds.eqFields === index.fields.length ? 5 : 0) + (wantsSort && plan.sorted ? 3 : 0);
    consider(plan, score);
  }
  return (best as { plan: Plan } | undefined)?.plan;
}

// MongoDB's messages (query_planner.cpp) when a $text cannot be answered.
const TEXT_INDEX_UNUSABLE = 'failed to use text index to satisfy $text query (if text index is compound, are equality predicates given for all prefix fields?)';
const TEXT_UNDER_OR = 'Failed to produce a solution for TEXT under OR - other non-TEXT clauses under OR have to be indexed as well.';
const NO_SOLUTIONS = 'No query solutions';

/** What planning a `$text` query reads: the collection, its text index and the search bound to it. */
interface TextPlanning {
  readonly info: CollectionInfo;
  readonly index: IndexInfo;
  readonly search: TextSearch;
  readonly sort: readonly SortKey[];
}

function holdsText(node: FilterNode): boolean {
  return node.kind === 'text' || ((node.kind === 'and' || node.kind === 'or') && node.children.some(holdsText));
}

function asAnd(node: FilterNode): AndNode {
  return node.kind === 'and' ? node : { kind: 'and', children: [node] };
}

/**
 * The plan of a `$text` query (MongoDB's rules: query_planner.cpp, planner_access.cpp). The text
 * index must answer the `$text`: when it is among the filter's top-level conditions, the plan is
 * the text index read (textRead); when it is inside an `$or`, that `$or` is read clause by clause
 * (planOr), and every clause must be answerable by an index, else MongoDB's error. Binds the
 * search to the index. A hint may name the text index only.
 * @throws QUERY_ERROR (MongoDB's messages) when the collection has no text index, a hint names another, or the text index cannot answer the `$text`
 */
function textQueryPlan(info: CollectionInfo, ast: AndNode, search: TextSearch, sort: readonly SortKey[], hint: Hint | undefined): Plan {
  const index = info.indexes.find((i) => i.text !== undefined && indexUsable(i));
  if (index === undefined) fail('QUERY_ERROR', 'text index required for $text query', { operator: '$text' });
  if (hint !== undefined && !(hint.kind === 'name' ? hint.name === index.name : hint.kind === 'keys' && sameKeyPattern(hint.fields, index.fields))) {
    badHint(hint, 'a $text query reads the text index');
  }
  search.bind(index.text!);
  const planning: TextPlanning = { info, index, search, sort };
  const plan = planAnd(planning, ast, []);
  if (plan !== undefined) return plan;
  // MongoDB names the case of a $text directly under a top-level $or; any other shape fails its enumeration.
  const only = ast.children.length === 1 ? ast.children[0]! : undefined;
  const textUnderRootOr = only?.kind === 'or' && only.children.some((c) => c.kind === 'text');
  fail('QUERY_ERROR', textUnderRootOr ? TEXT_UNDER_OR : NO_SOLUTIONS, { operator: '$text', reason: 'every clause of an $or holding $text must be answerable by an index' });
}

/**
 * The plan of an AND holding the `$text` (at any depth): the text index read when the `$text` is
 * one of its conditions, else the plan of its `$or` holding it (its other conditions filter the
 * candidates). `outer`: the conditions AND-ed with it above (they hold for every match reached
 * through it). Undefined when an `$or` on the way has a clause no index answers.
 */
function planAnd(p: TextPlanning, and: AndNode, outer: readonly FilterNode[]): Plan | undefined {
  if (and.children.some((c) => c.kind === 'text')) return textRead(p, and, outer);
  const or = and.children.find((c) => c.kind === 'or' && holdsText(c)) as OrNode;
  return planOr(p, or, [...outer, ...and.children.filter((c) => c !== or)]);
}

/**
 * The plan of an `$or` holding the `$text`: the union of its clauses' reads, the text index for
 * the clause holding the `$text` (planned first, so that its own errors come first, as in
 * MongoDB) and an index (or `_id`) read for each other clause; undefined when some clause has
 * none. Nested `$or`s are read as one.
 */
function planOr(p: TextPlanning, or: OrNode, outer: readonly FilterNode[]): Plan | undefined {
  const reads: ReadPlan[] = [];
  const clauses = [...or.children].sort((a, b) => Number(holdsText(b)) - Number(holdsText(a)));
  for (const clause of clauses) {
    let plan: Plan | undefined;
    if (clause.kind === 'or') plan = planOr(p, clause, outer);
    else if (holdsText(clause)) plan = planAnd(p, asAnd(clause), outer);
    else plan = indexedPlan(p.info, asAnd(clause), []);
    if (plan === undefined) return undefined;
    if (plan.kind === 'or') reads.push(...plan.children);
    else if (plan.kind !== 'empty') reads.push(plan);
  }
  if (reads.length === 0) return { kind: 'empty' };
  if (reads.length === 1) return reads[0]!;
  return { kind: 'or', children: reads, sorted: p.sort.length === 0 };
}

/**
 * The text index read for the `$text` among the conditions of `and`: the entries under each of
 * the search's positive terms (every document holding one), deduplicated; the filter then tests
 * each candidate (phrases, negations, the other conditions). A compound text index needs an
 * equality on each of its prefix fields among those same conditions (their values lead its keys,
 * so the read covers just their entries); a partial one needs the conditions (with `outer`) to
 * imply its filter.
 * @throws QUERY_ERROR (MongoDB's message) otherwise
 */
function textRead(p: TextPlanning, and: AndNode, outer: readonly FilterNode[]): Plan {
  const { index } = p;
  const conditions = topLevelConditions(and);
  const prefix: KeyPart[] = [];
  for (const field of textKeyFields(index.fields).prefix) {
    const eq = conditions.get(field.path)?.find((op) => op.op === '$eq');
    if (eq === undefined) fail('QUERY_ERROR', TEXT_INDEX_UNUSABLE, { operator: '$text', index: index.name, field: field.path });
    prefix.push(directed(indexComponent(eq.value).part, field.direction));
  }
  if (!indexServesQuery(index, { kind: 'and', children: [...outer, ...and.children] })) {
    fail('QUERY_ERROR', TEXT_INDEX_UNUSABLE, { operator: '$text', index: index.name, reason: "the query does not imply the text index's partialFilterExpression" });
  }
  const terms = p.search.boundsTerms();
  if (terms.length === 0) return { kind: 'empty' };
  const ranges = [...new Set(terms.map(termKey))].map((term) => rangeOf([...prefix, term], undefined, undefined));
  return { kind: 'index', index, ranges, reverse: false, sorted: p.sort.length === 0, dedupe: true };
}

/** A plan as explain shows it. */
export function describePlan(plan: Plan): Record<string, unknown> {
  switch (plan.kind) {
    case 'empty':
      return { stage: 'EOF' };
    case 'primary':
      return plan.points
        ? { stage: 'IDHACK', keys: plan.ranges.length }
        : { stage: plan.ranges.length === 1 && plan.ranges[0]!.gte === undefined && plan.ranges[0]!.lt === undefined ? 'COLLSCAN' : 'IDSCAN', direction: plan.reverse ? 'backward' : 'forward', sortedByPlan: plan.sorted };
    case 'index':
      if (plan.index.text !== undefined) {
        return { stage: 'TEXT', indexName: plan.index.name, keyPattern: textKeyPattern(plan.index.fields), ...(plan.index.partialFilterExpression !== undefined ? { isPartial: true } : {}), terms: plan.ranges.length };
      }
      return {
        stage: 'IXSCAN',
        indexName: plan.index.name,
        keyPattern: Object.fromEntries(plan.index.fields.map((f) => [f.path, f.direction])),
        isMultiKey: plan.index.multikey,
        ...(plan.index.sparse === true ? { isSparse: true } : {}),
        ...(plan.index.partialFilterExpression !== undefined ? { isPartial: true } : {}),
        ranges: plan.ranges.length,
        direction: plan.reverse ? 'backward' : 'forward',
        sortedByPlan: plan.sorted,
      };
    case 'or':
      return { stage: 'OR', inputStages: plan.children.map(describePlan) };
    default: {
      const never: never = plan;
      return never;
    }
  }
}
