/**
 * Positional update paths (manual: Update Operators > Array > `$`, `$[]`, `$[<identifier>]`).
 * A path such as `grades.$[g].score` names a set of places that depends on the document: it is
 * expanded, per document, into concrete paths (`grades.0.score`, `grades.2.score`) that the
 * operators then apply to as to any other path.
 *
 * - `$` is the position the update's filter recorded while matching the document, as MongoDB's
 *   matcher records it (query/recorded-position.ts): the position of the element a condition matched
 *   through an array. None recorded is MongoDB's "The positional operator did not find the match
 *   needed from the query."
 * - `$[]` is every element of the array; `$[<id>]` every element its array filter matches, the
 *   filter evaluated as a document `{<id>: element}`.
 * - `$[]` and `$[<id>]` need an array where they stand: a missing path is "must exist", any
 *   other value "Cannot apply array updates to non-array element". An empty array expands to
 *   nothing.
 *
 * Expansion reads the document as it was before the update; the update's paths cannot overlap
 * (compile-update checks the templates, then the expanded paths), so no operator's change can
 * move another's target.
 */

import { fail } from '../../errors.js';
import { compileFilter, filterFields, filterHasExpr, filterHasJsonSchema, filterHasSample } from '../query/compile-filter.js';
import { isArrayIndex } from '../path.js';
import { describeValue, getOwn, isPlainObject, MISSING, setOwn, type Doc } from '../values.js';

/** One component of an update path. */
export type PathStep = { readonly kind: 'name'; readonly name: string } | { readonly kind: 'first' } | { readonly kind: 'all' } | { readonly kind: 'filtered'; readonly id: string };

const FILTERED = /^\$\[(.+)\]$/;
const IDENTIFIER = /^[a-z][a-zA-Z0-9]*$/;

function invalid(message: string, details: Record<string, unknown> = {}): never {
  fail('QUERY_ERROR', message, details);
}

/** True when a path component is `$`, `$[]` or `$[<id>]`. */
export function isPositionalPart(part: string): boolean {
  return part === '$' || (part.startsWith('$[') && part.endsWith(']'));
}

/** The steps of a path's components, or undefined when none is positional. */
export function positionalSteps(parts: readonly string[]): PathStep[] | undefined {
  if (!parts.some(isPositionalPart)) return undefined;
  return parts.map((part): PathStep => {
    if (part === '$') return { kind: 'first' };
    if (part === '$[]') return { kind: 'all' };
    const m = FILTERED.exec(part);
    return m === null ? { kind: 'name', name: part } : { kind: 'filtered', id: m[1]! };
  });
}

/** Checks where positional components stand in one update path. @throws QUERY_ERROR */
export function checkPositionalPath(path: string, parts: readonly string[]): void {
  if (isPositionalPart(parts[0]!)) {
    invalid(`Cannot have a positional element ('${parts[0]}') in the first position in path '${path}'`, { path });
  }
  const firsts = parts.filter((p) => p === '$').length;
  if (firsts > 1) invalid(`Too many positional (i.e. '$') elements found in path '${path}'`, { path });
}

/** The array filters of an update, by identifier. */
export type ArrayFilters = ReadonlyMap<string, (element: unknown) => boolean>;

/**
 * Parses the `arrayFilters` option: an array of filter documents, each with conditions on one
 * identifier (`{"g.score": {$gte: 80}}`, `{$or: [{g: 0}, {g: 3}]}`), each identifier once.
 * @throws VALIDATION_FAILED when it is not an array of objects; QUERY_ERROR for a bad filter
 */
export function parseArrayFilters(spec: unknown): ArrayFilters {
  const out = new Map<string, (element: unknown) => boolean>();
  if (spec === undefined) return out;
  if (!Array.isArray(spec) || !spec.every(isPlainObject)) {
    fail('VALIDATION_FAILED', 'arrayFilters must be an array of filter documents', { field: 'arrayFilters' });
  }
  for (const doc of spec) {
    const filter = compileFilter(doc);
    if (filterHasExpr(filter.ast)) invalid('$expr is not allowed in the context of an array filter', { field: 'arrayFilters' });
    if (filterHasSample(filter.ast)) invalid('$sampleRate is not allowed in the context of an array filter', { field: 'arrayFilters' });
    if (filterHasJsonSchema(filter.ast)) invalid('$jsonSchema is not allowed in the context of an array filter', { field: 'arrayFilters' });
    const fields = filterFields(filter.ast);
    if (fields.length === 0) invalid('Cannot use an expression without a top-level field name in arrayFilters', { field: 'arrayFilters' });
    if (fields.length > 1) invalid(`Error parsing array filter: Expected a single top-level field name, found '${fields[0]}' and '${fields[1]}'`, { field: 'arrayFilters' });
    const id = fields[0]!;
    if (!IDENTIFIER.test(id)) {
      invalid(`Error parsing array filter: The top-level field name must be an alphanumeric string beginning with a lowercase letter, found '${id}'`, { field: 'arrayFilters' });
    }
    if (out.has(id)) invalid(`Found multiple array filters with the same top-level field name ${id}`, { field: 'arrayFilters', identifier: id });
    out.set(id, (element) => {
      const wrapped: Doc = {};
      setOwn(wrapped, id, element);
      return filter.test(wrapped);
    });
  }
  return out;
}

const NO_MATCH = 'The positional operator did not find the match needed from the query.';

/** MongoDB's refusal of a `$` with no element to stand for. @throws QUERY_ERROR */
export function positionalNoMatch(path: string): never {
  invalid(NO_MATCH, { path });
}

// One step into a value by name, as update paths read (object fields, array indexes).
function child(value: unknown, name: string): unknown {
  if (isPlainObject(value)) return getOwn(value, name);
  if (Array.isArray(value) && isArrayIndex(name)) return Number(name) < value.length ? value[Number(name)] : MISSING;
  return MISSING;
}

/**
 * The concrete paths (as component lists) `steps` names in `doc`. `first` is the document's `$`
 * position when the path has one. @throws QUERY_ERROR where `$[]`/`$[<id>]` meet a missing path
 * or a value that is not an array
 */
export function expandSteps(doc: Doc, steps: readonly PathStep[], filters: ArrayFilters, first: number | undefined): string[][] {
  const out: string[][] = [];
  // Where the last array update stands: past it the rest of the path is taken as written.
  let lastArray = -1;
  for (let i = 0; i < steps.length; i++) if (steps[i]!.kind === 'all' || steps[i]!.kind === 'filtered') lastArray = i;
  const walk = (value: unknown, i: number, prefix: string[]): void => {
    if (i > lastArray) {
      const rest = steps.slice(i).map((s) => (s.kind === 'name' ? s.name : String(first)));
      out.push([...prefix, ...rest]);
      return;
    }
    const step = steps[i]!;
    if (step.kind === 'name' || step.kind === 'first') {
      const name = step.kind === 'name' ? step.name : String(first);
      walk(child(value, name), i + 1, [...prefix, name]);
      return;
    }
    if (value === MISSING) {
      invalid(`The path '${prefix.join('.')}' must exist in the document in order to apply array updates.`, { path: prefix.join('.') });
    }
    if (!Array.isArray(value)) {
      invalid(`Cannot apply array updates to non-array element ${prefix[prefix.length - 1]}: ${describeValue(value)}`, { path: prefix.join('.') });
    }
    const matches = step.kind === 'filtered' ? filters.get(step.id)! : undefined;
    for (let k = 0; k < value.length; k++) {
      if (matches !== undefined && !matches(value[k])) continue;
      walk(value[k], i + 1, [...prefix, String(k)]);
    }
  };
  walk(doc, 0, []);
  return out;
}
