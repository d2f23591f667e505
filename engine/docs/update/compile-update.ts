/**
 * The update compiler: validates a whole update document up front (operators, paths, operands,
 * `_id`, conflicts between paths, array filters), so that a bad update fails before any document
 * is touched, then applies it to copies of documents. Positional paths (`a.$`, `a.$[]`,
 * `a.$[id]`) are expanded per document into concrete paths (positional.ts) before applying.
 */

import { fail } from '../../errors.js';
import { fromJson } from '../ejson.js';
import { isValidId } from '../object-id.js';
import { isArrayIndex } from '../path.js';
import { cloneValue, compareStrings, getOwn, isPlainObject, MISSING, valuesEqual, type Doc } from '../values.js';
import type { AndNode } from '../query/filter-ast.js';
import type { UpdateAction, UpdateOperator } from './operator.js';
import { updateOperators } from './operator-table.js';
import { compilePipelineUpdate } from './pipeline-update.js';
import { positionFinder, type PositionFinder } from '../query/recorded-position.js';
import { checkPositionalPath, expandSteps, isPositionalPart, parseArrayFilters, positionalNoMatch, positionalSteps, type ArrayFilters, type PathStep } from './positional.js';

/** Options of CompiledUpdate.apply. */
export interface ApplyOptions {
  /** True when building the document an upsert inserts: $setOnInsert applies. Default false. */
  isInsert?: boolean;
  /** The time $currentDate writes. Default: now. */
  now?: Date;
  /** Variables a pipeline-style update's stages read besides `$$NOW` ($merge's `$$new` and `let`). */
  variables?: ReadonlyMap<string, unknown>;
}

/** The outcome of applying an update: a new document (the input is never changed). */
export interface UpdateResult {
  readonly doc: Doc;
  /** False when every operator was a no-op ($set to an equal value, $unset of a missing field...). */
  readonly modified: boolean;
}

/** A validated update. */
export interface CompiledUpdate {
  /** Every path the update may change, in the order it applies them; undefined for a pipeline (it may change any). */
  readonly paths: readonly string[] | undefined;
  /** Applies the update to a copy of `doc`. @throws QUERY_ERROR when the document does not admit it (e.g. $inc on a string) */
  apply(doc: Doc, options?: ApplyOptions): UpdateResult;
}

/** What an update's positional paths depend on besides the document. */
export interface CompileUpdateOptions {
  /** The `arrayFilters` option: the filters `$[<identifier>]` components name. */
  arrayFilters?: unknown;
  /** The parsed filter of the update, which the positional `$` takes its element from. */
  filter?: AndNode;
  /** The variables a pipeline-style update may read besides the built-in ones (the command's `let`), given to apply as `variables`. */
  names?: ReadonlySet<string>;
}

const ID = '_id';

function invalid(message: string, details: Record<string, unknown> = {}): never {
  fail('QUERY_ERROR', message, details);
}

/** The components of an update path, refusing what MongoDB refuses; positional components are kept. @throws QUERY_ERROR */
export function checkUpdatePath(path: string): string[] {
  if (path === '') invalid('An empty update path is not valid.', { path });
  const parts = path.split('.');
  for (const part of parts) {
    if (part === '') invalid(`The update path '${path}' contains an empty field name, which is not allowed.`, { path });
    if (part.includes('\0')) invalid(`The update path '${path}' contains the NUL character`, { path });
    if (isPositionalPart(part)) continue;
    if (part.startsWith('$')) invalid(`The dollar ($) prefixed field '${part}' in '${path}' is not allowed`, { path });
  }
  checkPositionalPath(path, parts);
  return parts;
}

const OPERATORS = updateOperators(checkUpdatePath);

// MongoDB 5+ applies an update's fields in path order, component by component: names
// lexicographically, names that are both array indexes numerically ("a.2" before "a.10").
function comparePaths(a: readonly string[], b: readonly string[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (isArrayIndex(x) && isArrayIndex(y)) return Number(x) - Number(y);
    return compareStrings(x, y);
  }
  return a.length - b.length;
}

function isPrefix(shorter: readonly string[], longer: readonly string[]): boolean {
  return shorter.length < longer.length && shorter.every((p, i) => p === longer[i]);
}

// Two paths conflict when one equals or extends the other. `expanded`: the concrete paths of
// one document (MongoDB's message for those differs from the one for paths as written).
function checkConflicts(actions: readonly UpdateAction[], expanded: boolean): void {
  const paths = actions.flatMap((a) => [a.path, ...a.alsoChanges]).map((path) => ({ path, parts: path.split('.') }));
  // After sorting, a path is next to a path it equals or extends whenever any such path exists.
  paths.sort((x, y) => comparePaths(x.parts, y.parts));
  for (let i = 1; i < paths.length; i++) {
    const prev = paths[i - 1]!;
    const cur = paths[i]!;
    if (prev.path === cur.path || isPrefix(prev.parts, cur.parts)) {
      if (expanded) invalid(`Update created a conflict at '${cur.path}'`, { path: cur.path, conflictsWith: prev.path });
      invalid(`Updating the path '${cur.path}' would create a conflict at '${prev.path}'`, { path: cur.path, conflictsWith: prev.path });
    }
  }
}

const isArrayUpdate = (part: string): boolean => part !== '$' && isPositionalPart(part);

// `$[]` and `$[<id>]` address a whole array: as in MongoDB, no other path may name a place in
// that array by `$`, by index or by field name ("a.$[i]" with "a.0"). Two array updates of one
// array are allowed; they conflict only where they expand to the same element.
function checkArrayUpdateSiblings(actions: readonly UpdateAction[]): void {
  const all = actions.flatMap((a) => [a.path, ...a.alsoChanges]).map((path) => ({ path, parts: path.split('.') }));
  for (const x of all) {
    if (!x.parts.some(isArrayUpdate)) continue;
    for (const y of all) {
      if (y === x) continue;
      const n = Math.min(x.parts.length, y.parts.length);
      let k = 0;
      while (k < n && x.parts[k] === y.parts[k]) k++;
      if (k === n || isArrayUpdate(x.parts[k]!) === isArrayUpdate(y.parts[k]!)) continue;
      const other = isArrayUpdate(x.parts[k]!) ? y : x;
      const at = x.parts.slice(0, k).join('.');
      invalid(`Updating the path '${other.path}' would create a conflict at '${at}'`, { path: other.path, conflictsWith: at });
    }
  }
}

// `_id` is immutable. Only $set and $setOnInsert of `_id` itself are accepted: they are no-ops
// when the value is unchanged (as in MongoDB), and give an upsert's new document its _id.
function checkId(operator: string, parts: readonly string[], operand: unknown, path: string): void {
  if (parts[0] !== ID) return;
  if (parts.length === 1 && (operator === '$set' || operator === '$setOnInsert')) {
    if (!isValidId(operand)) invalid('_id must be a string, a number or a boolean', { operator, path });
    return;
  }
  invalid(`Performing an update on the path '${path}' would modify the immutable field '_id'`, { operator, path });
}

/** Most concrete actions a positional path keeps parsed (one per expanded path). */
const MAX_CACHED_EXPANSIONS = 4096;

/** One operator on one path as written. */
interface Template {
  readonly operator: string;
  /** Parsed on the path as written: the action itself when the path is not positional. */
  readonly action: UpdateAction;
  /** The components, when some are positional. */
  readonly steps: readonly PathStep[] | undefined;
  /** True when the path has `$`. */
  readonly hasFirst: boolean;
  /** The action on one concrete path of a positional one. */
  concrete(parts: string[]): UpdateAction;
}

function template(entry: UpdateOperator, operator: string, path: string, parts: string[], operand: unknown): Template {
  const action = entry.parse(path, parts, operand);
  const steps = positionalSteps(parts);
  const cache = new Map<string, UpdateAction>();
  return {
    operator,
    action,
    steps,
    hasFirst: parts.includes('$'),
    concrete(concreteParts) {
      const concretePath = concreteParts.join('.');
      let a = cache.get(concretePath);
      if (a === undefined) {
        a = entry.parse(concretePath, concreteParts, operand);
        if (cache.size < MAX_CACHED_EXPANSIONS) cache.set(concretePath, a);
      }
      return a;
    },
  };
}

function parseTemplates(update: Doc, filters: ArrayFilters): Template[] {
  const templates: Template[] = [];
  const used = new Set<string>();
  for (const name of Object.keys(update)) {
    const entry = Object.hasOwn(OPERATORS, name) ? OPERATORS[name] : undefined;
    if (entry === undefined) invalid(`unknown update operator: ${name}`, { operator: name });
    if (entry.kind === 'unsupported') invalid(`unsupported update operator: ${name} (${entry.reason})`, { operator: name });
    const operand = update[name];
    if (!isPlainObject(operand)) {
      invalid(`Modifiers operate on fields but we found type ${operand === null ? 'null' : Array.isArray(operand) ? 'array' : typeof operand} instead. For example: {$mod: {<field>: ...}} not {${name}: ${JSON.stringify(operand)}}`, {
        operator: name,
      });
    }
    for (const path of Object.keys(operand)) {
      const parts = checkUpdatePath(path);
      const value = operand[path];
      checkId(name, parts, value, path);
      if (name === '$rename') {
        if (parts.some(isPositionalPart)) invalid(`The source field for $rename may not be dynamic: ${path}`, { operator: name, path });
        if (typeof value === 'string' && value.split('.').some(isPositionalPart)) {
          invalid(`The destination field for $rename may not be dynamic: ${value}`, { operator: name, path: value });
        }
        if (typeof value === 'string' && value.split('.')[0] === ID) {
          invalid(`Performing an update on the path '${value}' would modify the immutable field '_id'`, { operator: name, path: value });
        }
      }
      const t = template(entry, name, path, parts, value);
      for (const step of t.steps ?? []) {
        if (step.kind !== 'filtered') continue;
        if (!filters.has(step.id)) invalid(`No array filter found for identifier '${step.id}' in path '${path}'`, { operator: name, path, identifier: step.id });
        used.add(step.id);
      }
      templates.push(t);
    }
  }
  for (const id of filters.keys()) {
    if (!used.has(id)) invalid(`The array filter for identifier '${id}' was not used in the update`, { field: 'arrayFilters', identifier: id });
  }
  return templates;
}

// The concrete actions of a positional update on one document, checked and in path order.
function expand(templates: readonly Template[], doc: Doc, isInsert: boolean, filters: ArrayFilters, position: PositionFinder): UpdateAction[] {
  const out: UpdateAction[] = [];
  let recorded: number | undefined | null = null;
  for (const t of templates) {
    if (t.steps === undefined) {
      out.push(t.action);
      continue;
    }
    // $setOnInsert does nothing outside an upsert's insert, wherever its path leads.
    if (t.operator === '$setOnInsert' && !isInsert) continue;
    // An upsert's new document matched no filter, so `$` has no element (MongoDB refuses it too).
    let first: number | undefined;
    if (t.hasFirst) {
      if (isInsert) positionalNoMatch(t.action.path);
      if (recorded === null) recorded = position(doc);
      first = recorded ?? positionalNoMatch(t.action.path);
    }
    for (const parts of expandSteps(doc, t.steps, filters, first)) out.push(t.concrete(parts));
  }
  checkConflicts(out, true);
  out.sort((x, y) => comparePaths(x.parts, y.parts));
  return out;
}

/**
 * Compiles an update document of operators (`{$set: {...}, $inc: {...}}`), or an array of
 * pipeline stages (pipeline-update.ts); `{$date: ...}` values are converted first. Positional
 * paths take their elements from `options`.
 * @throws QUERY_ERROR for a replacement document, an unknown or unsupported operator, a
 *   malformed operand, a change to `_id`, two conflicting paths, array filters that are
 *   malformed, missing or unused (or given with a pipeline), or a stage a pipeline-style update
 *   does not allow; VALIDATION_FAILED for a value that could not be stored (e.g. a field name
 *   with '$') or arrayFilters that are not an array of objects
 */
export function compileUpdate(update: unknown, options: CompileUpdateOptions = {}): CompiledUpdate {
  const converted = fromJson(update, { code: 'QUERY_ERROR' });
  if (Array.isArray(converted)) {
    // MongoDB takes an empty list of array filters, and refuses any other beside a pipeline.
    const filters = options.arrayFilters;
    if (filters !== undefined && !(Array.isArray(filters) && filters.length === 0)) {
      invalid('arrayFilters may not be specified for pipeline-style updates', { field: 'arrayFilters' });
    }
    const pipeline = compilePipelineUpdate(converted, options.names);
    return { paths: undefined, apply: (doc, applyOptions) => pipeline.apply(doc, applyOptions) };
  }
  if (!isPlainObject(converted)) invalid('update must be an object of update operators, such as {"$set": {"a": 1}}, or an array of pipeline stages');
  const names = Object.keys(converted);
  if (names.length === 0) invalid('update must contain at least one update operator, such as $set');
  if (names.some((n) => !n.startsWith('$'))) {
    invalid('replacement documents are not supported by updateOne/updateMany; use update operators such as $set, or replaceOne to replace a whole document');
  }
  const filters = parseArrayFilters(options.arrayFilters);
  const templates = parseTemplates(converted, filters);
  const written = templates.map((t) => t.action);
  checkConflicts(written, false);
  const positional = templates.some((t) => t.steps !== undefined);
  if (positional) checkArrayUpdateSiblings(written);
  const position = positional ? positionFinder(options.filter) : () => undefined;
  const sorted = [...written].sort((x, y) => comparePaths(x.parts, y.parts));
  return {
    paths: sorted.flatMap((a) => [a.path, ...a.alsoChanges]),
    apply(doc, applyOptions = {}) {
      const ctx = { isInsert: applyOptions.isInsert ?? false, now: applyOptions.now ?? new Date() };
      const actions = positional ? expand(templates, doc, ctx.isInsert, filters, position) : sorted;
      const out = cloneValue(doc);
      let modified = false;
      for (const a of actions) if (a.apply(out, ctx)) modified = true;
      const before = getOwn(doc, ID);
      if (before !== MISSING && !valuesEqual(before, getOwn(out, ID))) {
        invalid("Performing an update on the path '_id' would modify the immutable field '_id'", { path: ID });
      }
      return { doc: out, modified };
    },
  };
}
