/**
 * The filter compiler: parses an MQL filter into the AST of filter-ast.ts (validating every
 * operator through the one operator table) and compiles the AST into a predicate over documents.
 */

import { fail } from '../../errors.js';
import { fromJson } from '../ejson.js';
import { DOCS_LIMITS } from '../limits.js';
import { collectValues, expandValue, parsePath, type LeafArrays } from '../path.js';
import { getOwn, isPlainObject, MISSING, type Doc } from '../values.js';
import type { AndNode, FieldNode, FieldOp, FieldOpName, FilterNode } from './filter-ast.js';
import { FIELD_OPERATORS, lookupOperator } from './operator-table.js';
import { queryError, type CompileContext, type CompiledOp, type FieldOperator, type ParseContext, type Subject } from './operator.js';
import { regexOperator } from './evaluation/regex.js';
import { truthy } from '../aggregate/expression/comparison.js';
import { Scope } from '../aggregate/expression/expression.js';
import { compileExpression } from '../aggregate/expression/operator-table.js';
import { exprIsVolatile } from '../aggregate/dependencies.js';
import { compileSampleRate, idDraws, type Sampling } from './miscellaneous/sample-rate.js';
import { compileDocumentSchema } from './evaluation/json-schema-match.js';
import type { TextSearch } from '../text/index.js';

/** A compiled filter: the AST for planners and explain, and the predicate. */
export interface CompiledFilter {
  readonly ast: AndNode;
  /** `vars`: the variables an `$expr` reads (a `$lookup` pipeline's `let`), when it has any. */
  test(doc: Doc, vars?: Scope): boolean;
  /** The variables `test` reads when its caller gives none (a command's `let`: let-variables.ts bindFilter), which the planner reads too. */
  readonly vars?: Scope;
}

function checkDepth(depth: number, operator: string): void {
  if (depth > DOCS_LIMITS.maxFilterDepth) {
    queryError(operator, `filter exceeds the maximum nesting depth of ${DOCS_LIMITS.maxFilterDepth}`, { limit: DOCS_LIMITS.maxFilterDepth });
  }
}

const NO_NAMES: ReadonlySet<string> = new Set();

function parseContext(depth: number, exprAllowed = true, names: ReadonlySet<string> = NO_NAMES): ParseContext {
  return {
    depth,
    exprAllowed,
    names,
    parseOperators: (expr, operator) => {
      checkDepth(depth + 1, operator);
      return parseOperators(expr, depth + 1);
    },
    parseFilter: (filter, operator) => {
      checkDepth(depth + 1, operator);
      return collapse(parseFilterDocument(filter, depth + 1, exprAllowed && operator !== '$elemMatch', names));
    },
  };
}

// MongoDB decides by the first key: `{a: {$gt: 1}}` is an operator expression, `{a: {b: 1}}`
// (and `{a: {b: 1, $gt: 1}}`) an embedded document to compare with.
function isOperatorExpression(value: unknown): value is Doc {
  if (!isPlainObject(value)) return false;
  for (const key in value) if (Object.hasOwn(value, key)) return key.startsWith('$');
  return false;
}

function unsupportedOperator(name: string, reason: string): never {
  queryError(name, `unsupported operator: ${name} (${reason})`);
}

/** The conditions of an operator expression such as `{$gte: 1, $lt: 5}`. */
function parseOperators(expr: Doc, depth: number): FieldOp[] {
  const ctx = parseContext(depth);
  const hasRegex = Object.hasOwn(expr, '$regex');
  if (Object.hasOwn(expr, '$options') && !hasRegex) queryError('$options', '$options needs a $regex');
  const ops: FieldOp[] = [];
  for (const name of Object.keys(expr)) {
    const operand = expr[name];
    if (name === '$options') continue;
    if (name === '$regex') {
      ops.push(regexOperator.parse({ $regex: operand, $options: expr['$options'] }, ctx));
      continue;
    }
    const entry = name.startsWith('$') ? lookupOperator(name) : undefined;
    switch (entry?.kind) {
      case 'field':
        ops.push(entry.parse(operand, ctx));
        break;
      case 'expands':
        ops.push(...entry.parse(operand, ctx));
        break;
      case 'unsupported':
        unsupportedOperator(name, entry.reason);
        break;
      default:
        queryError(name, `unknown operator: ${name}`);
    }
  }
  return ops;
}

/** The AND-ed conditions of one filter document. */
function parseFilterDocument(filter: unknown, depth: number, exprAllowed = true, names: ReadonlySet<string> = NO_NAMES): FilterNode[] {
  if (!isPlainObject(filter)) fail('QUERY_ERROR', 'filter must be an object such as {"a": 1}');
  const ctx = parseContext(depth, exprAllowed, names);
  const conditions: FilterNode[] = [];
  for (const key of Object.keys(filter)) {
    const value = filter[key];
    if (!key.startsWith('$')) {
      const ops: FieldOp[] = isOperatorExpression(value) ? parseOperators(value, depth) : [{ op: '$eq', value }];
      conditions.push({ kind: 'field', path: key, ops });
      continue;
    }
    const entry = lookupOperator(key);
    switch (entry?.kind) {
      case 'logical':
      case 'expr':
      case 'sampleRate':
      case 'jsonSchema':
      case 'text':
        conditions.push(entry.parse(value, ctx));
        break;
      case 'ignored':
        break;
      case 'unsupported':
        unsupportedOperator(key, entry.reason);
        break;
      default:
        queryError(key, `unknown top level operator: ${key}`);
    }
  }
  return conditions;
}

/** AND of conditions, flattened and with the conditions on one path merged into one field node. */
function andOf(conditions: readonly FilterNode[]): AndNode {
  const children: FilterNode[] = [];
  const fieldAt = new Map<string, number>();
  const add = (node: FilterNode): void => {
    if (node.kind === 'and') {
      for (const child of node.children) add(child);
      return;
    }
    if (node.kind === 'field') {
      const at = fieldAt.get(node.path);
      if (at !== undefined) {
        const prev = children[at] as FieldNode;
        children[at] = { kind: 'field', path: node.path, ops: [...prev.ops, ...node.ops] };
        return;
      }
      fieldAt.set(node.path, children.length);
    }
    children.push(node);
  };
  for (const c of conditions) add(c);
  return { kind: 'and', children };
}

function collapse(conditions: readonly FilterNode[]): FilterNode {
  const and = andOf(conditions);
  return and.children.length === 1 ? and.children[0]! : and;
}

/**
 * Parses a filter into its AST without compiling it. `text`: the filter may hold a `$text` (a
 * find's, a count's, a write's or an aggregation's leading $match; elsewhere MongoDB refuses it).
 * @throws QUERY_ERROR
 */
export function parseFilter(filter: unknown, names: ReadonlySet<string> = NO_NAMES, text = false): AndNode {
  const converted = fromJson(filter ?? {}, { code: 'QUERY_ERROR' });
  const ast = andOf(parseFilterDocument(converted, 1, true, names));
  checkTextPlacement(ast, text);
  return ast;
}

/**
 * MongoDB's rules for `$text` (canonical_query.cpp): one at most, not under `$nor`. Under `$or`
 * it is allowed here; whether such a query can run (every other clause indexed) is the planner's
 * to say (query-planner.ts).
 * @throws QUERY_ERROR
 */
function checkTextPlacement(ast: AndNode, allowed: boolean): void {
  let count = 0;
  let underNor = false;
  const visit = (node: FilterNode, inNor: boolean): void => {
    if (node.kind === 'text') {
      count++;
      underNor ||= inNor;
    } else if (node.kind === 'and' || node.kind === 'or' || node.kind === 'nor') {
      for (const child of node.children) visit(child, inNor || node.kind === 'nor');
    }
  };
  visit(ast, false);
  if (count === 0) return;
  if (!allowed) queryError('$text', '$text is not allowed in this context');
  if (count > 1) queryError('$text', 'Too many text expressions');
  if (underNor) queryError('$text', 'text expression not allowed in nor');
}

/** The `$text` search of a filter, when it has one (at the top level, or inside `$or`s and `$and`s). */
export function filterTextSearch(ast: AndNode): TextSearch | undefined {
  const find = (node: FilterNode): TextSearch | undefined => {
    if (node.kind === 'text') return node.search;
    if (node.kind !== 'and' && node.kind !== 'or') return undefined;
    for (const child of node.children) {
      const found = find(child);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return find(ast);
}

/** True when the filter's `$text` is one of its top-level AND-ed conditions: every match then matches the search. */
export function filterTextAtTop(ast: AndNode): boolean {
  return ast.children.some((c) => c.kind === 'text');
}

class PathSubject implements Subject {
  readonly #doc: Doc;
  readonly #parts: readonly string[];
  #traverse: unknown[] | undefined;
  #other: Map<LeafArrays, unknown[]> | undefined;

  constructor(doc: Doc, parts: readonly string[]) {
    this.#doc = doc;
    this.#parts = parts;
  }

  values(leaf: LeafArrays): readonly unknown[] {
    if (leaf === 'traverse') return (this.#traverse ??= collectValues(this.#doc, this.#parts, leaf));
    this.#other ??= new Map();
    let v = this.#other.get(leaf);
    if (v === undefined) this.#other.set(leaf, (v = collectValues(this.#doc, this.#parts, leaf)));
    return v;
  }
}

class ValueSubject implements Subject {
  readonly #value: unknown;

  constructor(value: unknown) {
    this.#value = value;
  }

  values(leaf: LeafArrays): readonly unknown[] {
    return expandValue(this.#value, leaf);
  }
}

// Filters inside operators ($elemMatch's document form) hold no $sampleRate: top level only.
const compileContext: CompileContext = {
  compileOps: (ops) => ops.map(compileOp),
  compileFilter: (node) => compileNode(node, 'stable'),
};

function compileOp(op: FieldOp): CompiledOp {
  // The table is typed per name; this lookup pairs each op with its own operator, which the
  // type system cannot see through the union, hence the one cast.
  const operator = FIELD_OPERATORS[op.op] as unknown as FieldOperator<FieldOpName>;
  return operator.compile(op, compileContext);
}

type Predicate = (doc: Doc, vars?: Scope) => boolean;

function compileNode(node: FilterNode, sampling: Sampling): Predicate {
  const compileChild = (child: FilterNode): Predicate => compileNode(child, sampling);
  switch (node.kind) {
    case 'and': {
      const children = node.children.map(compileChild);
      if (children.length === 1) return children[0]!;
      return (doc, vars) => children.every((c) => c(doc, vars));
    }
    case 'or': {
      const children = node.children.map(compileChild);
      return (doc, vars) => children.some((c) => c(doc, vars));
    }
    case 'nor': {
      const children = node.children.map(compileChild);
      return (doc, vars) => !children.some((c) => c(doc, vars));
    }
    case 'field': {
      const parts = parsePath(node.path);
      const ops = node.ops.map(compileOp);
      if (ops.length === 1) {
        const only = ops[0]!;
        return (doc) => only.matches(new PathSubject(doc, parts));
      }
      return (doc) => {
        const subject = new PathSubject(doc, parts);
        return ops.every((c) => c.matches(subject));
      };
    }
    case 'expr': {
      const expr = compileExpression(node.spec, new Set(node.names));
      // $$NOW is one instant per operation, as in MongoDB: the compile's (a filter is compiled per
      // request), unless the caller's variables (an aggregation's) bind it.
      const now = new Scope(new Map([['NOW', new Date()]]));
      if (sampling === 'independent' || !exprIsVolatile(node.spec)) return (doc, vars) => truthy(expr(Scope.of(doc, vars ?? now)));
      // $rand on stored documents, which may be tested more than once in a request (a write
      // re-tests its matches in the turn that writes them): the draws come from the document's
      // `_id` and a seed of this compile, as $sampleRate's do, so every test agrees.
      const seed = Math.floor(Math.random() * 2 ** 32);
      return (doc, vars) => {
        const id = getOwn(doc, '_id');
        return truthy(expr(Scope.of(doc, vars ?? now, id === MISSING ? undefined : idDraws(seed, id))));
      };
    }
    case 'sampleRate':
      return compileSampleRate(node, sampling);
    case 'jsonSchema':
      return compileDocumentSchema(node.schema);
    case 'text': {
      const search = node.search;
      return (doc) => search.matches(doc);
    }
    default: {
      const unhandled: never = node;
      throw new Error(`unhandled filter node ${JSON.stringify(unhandled)}`);
    }
  }
}

/** Options of compileFilter. */
export interface CompileFilterOptions {
  /** How `$sampleRate` draws (query/miscellaneous/sample-rate.ts); 'stable' unless each document is tested once. */
  readonly sampling?: Sampling;
  /** The filter may hold a `$text` (see parseFilter). */
  readonly text?: boolean;
}

/**
 * Compiles an MQL filter (`{}`, undefined and null match everything). `{$date: ...}` values are
 * converted first; `names` are the user variables an `$expr` may read (see CompiledFilter.test).
 * @throws QUERY_ERROR naming the operator for anything malformed, unknown or unsupported
 */
export function compileFilter(filter: unknown, names?: ReadonlySet<string>, options: CompileFilterOptions = {}): CompiledFilter {
  const ast = parseFilter(filter, names, options.text === true);
  const test = compileNode(ast, options.sampling ?? 'stable');
  return { ast, test };
}

/** The predicate of an already parsed filter (a part of one, as the positional `$` of updates uses). */
export function compileFilterAst(ast: AndNode): (doc: Doc) => boolean {
  return compileNode(ast, 'stable');
}

/**
 * A predicate over one value from an operator expression such as `{$gte: 6}`, with the value
 * read as if it sat at the end of a path (an array matches through its elements). $pull uses it.
 * @throws QUERY_ERROR
 */
export function compileValueMatcher(expr: Doc): (value: unknown) => boolean {
  const ops = parseOperators(fromJson(expr, { code: 'QUERY_ERROR' }) as Doc, 1).map(compileOp);
  return (value) => {
    const subject = new ValueSubject(value);
    return ops.every((c) => c.matches(subject));
  };
}

/**
 * True when `value`, read as if it sat at the end of a path, meets every condition in `ops`
 * (the partial-index planner asks this of a query's equality operands).
 */
export function opsMatchValue(ops: readonly FieldOp[], value: unknown): boolean {
  const subject = new ValueSubject(value);
  return ops.every((op) => compileOp(op).matches(subject));
}

/**
 * The top-level fields a filter reads (`{'a.b': 1, $or: [{c: 2}]}` -> a, c), in a stable order;
 * empty for a filter that reads none (`{}`). A document holding only these fields matches exactly
 * when the whole document does: each condition reads the values under its own path alone
 * ($elemMatch's inner paths are inside its field's values).
 */
export function filterFields(ast: AndNode): string[] {
  return [...new Set(filterPaths(ast).map((p) => p.split('.')[0]!))];
}

/**
 * The dot paths a filter reads (`{'a.b': 1, $or: [{c: 2}]}` -> a.b, c), for reading documents in
 * part (FieldReader): a document holding only the values at these paths matches exactly when the
 * whole document does. An `$expr` counts the field paths it reads.
 */
export function filterPaths(ast: AndNode): string[] {
  const out = new Set<string>();
  const visit = (node: FilterNode): void => {
    if (node.kind === 'field') out.add(node.path);
    else if (node.kind === 'expr') {
      if (node.fields !== 'all') for (const f of node.fields) out.add(f);
    } else if (node.kind === 'sampleRate') out.add('_id'); // its draw reads the _id
    else if (node.kind !== 'jsonSchema' && node.kind !== 'text') for (const child of node.children) visit(child);
  };
  visit(ast);
  return [...out];
}

// True when some node of the filter passes `test`, looking inside $and, $or and $nor.
function someNode(ast: AndNode, test: (node: FilterNode) => boolean): boolean {
  const visit = (node: FilterNode): boolean => test(node) || ((node.kind === 'and' || node.kind === 'or' || node.kind === 'nor') && node.children.some(visit));
  return visit(ast);
}

/**
 * True when the filter may read any field (filterFields then does not cover it): an `$expr` that
 * reads `$$ROOT` or `$getField`, a `$jsonSchema` (whose `additionalProperties`, `enum` or
 * `minProperties` read the whole document), or a `$text` (which reads its index's fields, and the
 * documents' language fields).
 */
export function filterReadsAll(ast: AndNode): boolean {
  return someNode(ast, (node) => (node.kind === 'expr' && node.fields === 'all') || node.kind === 'jsonSchema' || node.kind === 'text');
}

/** True when the filter has an `$expr` anywhere. */
export function filterHasExpr(ast: AndNode): boolean {
  return someNode(ast, (node) => node.kind === 'expr');
}

/** True when the filter has an `$expr` drawing random numbers (`$rand`): it must be tested once per document. */
export function filterIsVolatile(ast: AndNode): boolean {
  return someNode(ast, (node) => node.kind === 'expr' && exprIsVolatile(node.spec));
}

/** True when the filter has a `$sampleRate` anywhere. */
export function filterHasSample(ast: AndNode): boolean {
  return someNode(ast, (node) => node.kind === 'sampleRate');
}

/** True when the filter has a `$jsonSchema` anywhere. */
export function filterHasJsonSchema(ast: AndNode): boolean {
  return someNode(ast, (node) => node.kind === 'jsonSchema');
}

/** Conditions per top-level AND-ed path (`{a: {$gt: 1}, b: 2}` -> a: [$gt 1], b: [$eq 2]), for planners. */
export function topLevelConditions(ast: AndNode): Map<string, readonly FieldOp[]> {
  const out = new Map<string, readonly FieldOp[]>();
  for (const child of ast.children) if (child.kind === 'field') out.set(child.path, child.ops);
  return out;
}
