/**
 * The update compiler: validates a whole update document up front (operators, paths, operands,
 * `_id`, conflicts between paths), so that a bad update fails before any document is touched,
 * then applies it to copies of documents.
 */

import { fail } from '../../errors.js';
import { fromJson } from '../ejson.js';
import { isValidId } from '../object-id.js';
import { isArrayIndex } from '../path.js';
import { cloneValue, compareStrings, getOwn, isPlainObject, MISSING, valuesEqual, type Doc } from '../values.js';
import type { UpdateAction } from './operator.js';
import { updateOperators } from './operator-table.js';

/** Options of CompiledUpdate.apply. */
export interface ApplyOptions {
  /** True when building the document an upsert inserts: $setOnInsert applies. Default false. */
  isInsert?: boolean;
  /** The time $currentDate writes. Default: now. */
  now?: Date;
}

/** The outcome of applying an update: a new document (the input is never changed). */
export interface UpdateResult {
  readonly doc: Doc;
  /** False when every operator was a no-op ($set to an equal value, $unset of a missing field...). */
  readonly modified: boolean;
}

/** A validated update. */
export interface CompiledUpdate {
  /** Every path the update may change, in the order it applies them. */
  readonly paths: readonly string[];
  /** Applies the update to a copy of `doc`. @throws QUERY_ERROR when the document does not admit it (e.g. $inc on a string) */
  apply(doc: Doc, options?: ApplyOptions): UpdateResult;
}

const ID = '_id';
const POSITIONAL = /^\$(?:\[[^\]]*\])?$/;

function invalid(message: string, details: Record<string, unknown> = {}): never {
  fail('QUERY_ERROR', message, details);
}

/** The components of an update path, refusing what MongoDB refuses and positional operators. @throws QUERY_ERROR */
export function checkUpdatePath(path: string): string[] {
  if (path === '') invalid('An empty update path is not valid.', { path });
  const parts = path.split('.');
  for (const part of parts) {
    if (part === '') invalid(`The update path '${path}' contains an empty field name, which is not allowed.`, { path });
    if (POSITIONAL.test(part)) invalid(`unsupported: positional update operators ('${part}' in '${path}') are not supported`, { path });
    if (part.startsWith('$')) invalid(`The dollar ($) prefixed field '${part}' in '${path}' is not allowed`, { path });
    if (part.includes('\0')) invalid(`The update path '${path}' contains the NUL character`, { path });
  }
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

function checkConflicts(actions: readonly UpdateAction[]): void {
  const paths = actions.flatMap((a) => [a.path, ...a.alsoChanges]).map((path) => ({ path, parts: path.split('.') }));
  // After sorting, a path is next to a path it equals or extends whenever any such path exists.
  paths.sort((x, y) => comparePaths(x.parts, y.parts));
  for (let i = 1; i < paths.length; i++) {
    const prev = paths[i - 1]!;
    const cur = paths[i]!;
    if (prev.path === cur.path || isPrefix(prev.parts, cur.parts)) {
      invalid(`Updating the path '${cur.path}' would create a conflict at '${prev.path}'`, { path: cur.path, conflictsWith: prev.path });
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

function parseActions(update: Doc): UpdateAction[] {
  const actions: UpdateAction[] = [];
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
      if (name === '$rename' && typeof value === 'string' && value.split('.')[0] === ID) {
        invalid(`Performing an update on the path '${value}' would modify the immutable field '_id'`, { operator: name, path: value });
      }
      actions.push(entry.parse(path, parts, value));
    }
  }
  return actions;
}

/**
 * Compiles an update document of operators (`{$set: {...}, $inc: {...}}`); `{$date: ...}`
 * values are converted first. @throws QUERY_ERROR for a replacement document, an unknown or
 * unsupported operator, a malformed operand, a change to `_id` or two conflicting paths;
 * VALIDATION_FAILED for a value that could not be stored (e.g. a field name with '$')
 */
export function compileUpdate(update: unknown): CompiledUpdate {
  const converted = fromJson(update, { code: 'QUERY_ERROR' });
  if (!isPlainObject(converted)) invalid('update must be an object of update operators, such as {"$set": {"a": 1}}');
  const names = Object.keys(converted);
  if (names.length === 0) invalid('update must contain at least one update operator, such as $set');
  if (names.some((n) => !n.startsWith('$'))) {
    invalid('replacement documents are not supported by updateOne/updateMany; use update operators such as $set, or replaceOne to replace a whole document');
  }
  const actions = parseActions(converted);
  checkConflicts(actions);
  actions.sort((x, y) => comparePaths(x.parts, y.parts));
  return {
    paths: actions.flatMap((a) => [a.path, ...a.alsoChanges]),
    apply(doc, options = {}) {
      const ctx = { isInsert: options.isInsert ?? false, now: options.now ?? new Date() };
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
