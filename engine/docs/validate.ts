/**
 * What a stored document may contain. Stricter than MongoDB 5+ on field names (documented in
 * docs/mql.md): a name may not start with '$' (it would read as an operator), contain '.' (it
 * would read as a path) or contain NUL (BSON cannot hold it). Values are JSON values and Dates;
 * strings must be well-formed UTF-16 so they survive UTF-8 storage unchanged.
 */

import { fail } from '../errors.js';
import { fromJson } from './ejson.js';
import { DOCS_LIMITS } from './limits.js';
import { isValidId } from './object-id.js';
import { isPlainObject, type Doc } from './values.js';

/** Options of validateDocument. */
export interface ValidateOptions {
  /** Maximum nesting of objects and arrays, the document itself being level 1. */
  maxDepth?: number;
}

// String.prototype.isWellFormed is in Node 20 but in the ES2024 lib, newer than ours.
interface WellFormedCheck {
  isWellFormed(): boolean;
}

function invalid(path: string, message: string): never {
  fail('VALIDATION_FAILED', path === '' ? message : `${message} (at '${path}')`, { path });
}

/** False when `s` holds a lone UTF-16 surrogate (no UTF-8 can say it). */
export function wellFormed(s: string): boolean {
  return (s as unknown as WellFormedCheck).isWellFormed();
}

function checkName(name: string, path: string): void {
  if (name.startsWith('$')) invalid(path, `field name '${name}' must not start with '$'`);
  if (name.includes('.')) invalid(path, `field name '${name}' must not contain '.'`);
  if (name.includes('\0')) invalid(path, 'field names must not contain the NUL character');
  if (!wellFormed(name)) invalid(path, 'field names must not contain a lone UTF-16 surrogate');
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function checkValue(v: unknown, path: string, depth: number, maxDepth: number): void {
  switch (typeof v) {
    case 'string':
      if (!wellFormed(v)) invalid(path, 'strings must not contain a lone UTF-16 surrogate');
      return;
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(v)) invalid(path, 'numbers must be finite');
      return;
    case 'object':
      break;
    default:
      invalid(path, `values of type ${typeof v} cannot be stored`);
  }
  if (v === null) return;
  if (v instanceof Date) {
    if (Number.isNaN(v.getTime())) invalid(path, 'invalid date');
    return;
  }
  if (depth + 1 > maxDepth) invalid(path, `document nesting exceeds ${maxDepth} levels`);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) checkValue(v[i], join(path, String(i)), depth + 1, maxDepth);
    return;
  }
  if (!isPlainObject(v)) invalid(path, 'only plain objects, arrays, strings, numbers, booleans, null and dates can be stored');
  checkFields(v, path, depth + 1, maxDepth);
}

function checkFields(obj: Doc, path: string, depth: number, maxDepth: number): void {
  for (const key of Object.keys(obj)) {
    const at = join(path, key);
    checkName(key, at);
    checkValue(obj[key], at, depth, maxDepth);
  }
}

/**
 * Checks a document before it is stored: a plain object, a valid `_id` if present (string,
 * finite number or boolean), field names, value types and nesting depth (default
 * DOCS_LIMITS.maxDocumentDepth). @throws VALIDATION_FAILED naming the path
 */
export function validateDocument(doc: unknown, options: ValidateOptions = {}): asserts doc is Doc {
  const maxDepth = options.maxDepth ?? DOCS_LIMITS.maxDocumentDepth;
  if (!isPlainObject(doc)) invalid('', 'a document must be a JSON object');
  if (Object.hasOwn(doc, '_id') && !isValidId(doc['_id'])) invalid('_id', '_id must be a string, a number or a boolean');
  checkFields(doc, '', 1, maxDepth);
}

/**
 * Checks a free-form object stored beside other data (vector metadata): what validateDocument
 * checks except the `_id` rule. @throws VALIDATION_FAILED naming the path
 */
export function validateFields(doc: unknown, maxDepth: number): asserts doc is Doc {
  if (!isPlainObject(doc)) invalid('', 'must be a JSON object');
  checkFields(doc, '', 1, maxDepth);
}

/**
 * Checks a value an update will store at `path` (field names and types as validateDocument;
 * depth counted from the path's own depth). @throws VALIDATION_FAILED
 */
export function checkStorable(value: unknown, path: string): void {
  checkValue(value, path, path.split('.').length, DOCS_LIMITS.maxDocumentDepth);
}

// True when a value needs neither conversion nor a message: what fromJson returns unchanged and
// checkValue accepts. A `{$date}` wrapper fails the name test, so it goes the long way too.
function storableAsIs(v: unknown, depth: number, maxDepth: number): boolean {
  switch (typeof v) {
    case 'string':
      return wellFormed(v);
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object':
      break;
    default:
      return false;
  }
  if (v === null) return true;
  if (v instanceof Date) return !Number.isNaN(v.getTime());
  if (depth + 1 > maxDepth || depth + 1 > DOCS_LIMITS.maxJsonDepth) return false;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!storableAsIs(v[i], depth + 1, maxDepth)) return false;
    return true;
  }
  return isPlainObject(v) && fieldsStorableAsIs(v, depth + 1, maxDepth);
}

function fieldsStorableAsIs(obj: Doc, depth: number, maxDepth: number): boolean {
  for (const key of Object.keys(obj)) {
    if (key.startsWith('$') || key.includes('.') || key.includes('\0') || !wellFormed(key)) return false;
    if (!storableAsIs(obj[key], depth, maxDepth)) return false;
  }
  return true;
}

/** A stored-ready document from parsed JSON: `{$date}` converted, then validated. @throws VALIDATION_FAILED */
export function documentFromJson(json: unknown, options: ValidateOptions = {}): Doc {
  // Most documents need nothing: one walk that builds no path strings says so, and the document
  // itself comes back (as fromJson would return it). Anything else converts and then validates,
  // which names the problem.
  const maxDepth = options.maxDepth ?? DOCS_LIMITS.maxDocumentDepth;
  if (isPlainObject(json) && (!Object.hasOwn(json, '_id') || isValidId(json['_id'])) && fieldsStorableAsIs(json, 1, maxDepth)) return json;
  const doc = fromJson(json, { code: 'VALIDATION_FAILED' });
  validateDocument(doc, options);
  return doc;
}
