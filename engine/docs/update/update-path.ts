/**
 * Writing at a dot path for the update operators. Unlike reads, a write path names one place:
 * object fields by name and array elements by index only (no implicit traversal; positional
 * operators such as `a.$` are not supported). Fields are written with setOwn, so a key
 * "__proto__" is stored as data and Object.prototype is never touched.
 */

import { fail } from '../../errors.js';
import { DOCS_LIMITS } from '../limits.js';
import { isArrayIndex } from '../path.js';
import { bsonTypeOf, describeValue, getOwn, isPlainObject, MISSING, setOwn, type Doc } from '../values.js';

/** An object or an array that holds the target of a write. */
export type Container = Doc | unknown[];

/** Where a write lands: the container and the last path component. */
export interface Location {
  readonly container: Container;
  readonly key: string;
}

/** Throws MongoDB's "Cannot create field" error. @throws QUERY_ERROR */
export function cannotCreate(operator: string, field: string, parentName: string, parent: unknown): never {
  fail('QUERY_ERROR', `Cannot create field '${field}' in element {${parentName}: ${describeValue(parent)}}`, { operator, field });
}

/** The value at `key` in a container, or MISSING (an index past the end is MISSING). */
export function readChild(container: Container, key: string): unknown {
  if (!Array.isArray(container)) return getOwn(container, key);
  if (!isArrayIndex(key)) return MISSING;
  const i = Number(key);
  return i < container.length ? container[i] : MISSING;
}

/** Writes `value` at `key`; an array index past the end pads with nulls as MongoDB does. @throws QUERY_ERROR */
export function writeChild(container: Container, key: string, value: unknown, operator: string): void {
  if (!Array.isArray(container)) {
    setOwn(container, key, value);
    return;
  }
  const i = Number(key);
  if (i > DOCS_LIMITS.maxArrayPadding) {
    fail('QUERY_ERROR', `can't backfill array to larger than ${DOCS_LIMITS.maxArrayPadding} elements`, { operator, index: i });
  }
  while (container.length < i) container.push(null);
  container[i] = value;
}

/** Removes the value at `key`: deletes a field; an array element becomes null (MongoDB's $unset). */
export function removeChild(container: Container, key: string): void {
  if (Array.isArray(container)) container[Number(key)] = null;
  else delete container[key];
}

/**
 * The container of the last component of `parts`. With `create`, missing objects along the way
 * are created (and arrays padded); without it, a path that does not exist gives undefined.
 * Passing through a scalar, or naming a non-index field of an array, is an error when creating
 * and undefined otherwise. @throws QUERY_ERROR
 */
export function locate(doc: Doc, parts: readonly string[], create: boolean, operator: string): Location | undefined {
  let container: Container = doc;
  let name = '';
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i]!;
    if (Array.isArray(container) && !isArrayIndex(part)) {
      return create ? cannotCreate(operator, part, name, container) : undefined;
    }
    let next = readChild(container, part);
    if (next === MISSING) {
      if (!create) return undefined;
      next = {};
      writeChild(container, part, next, operator);
    } else if (!isPlainObject(next) && !Array.isArray(next)) {
      return create ? cannotCreate(operator, parts[i + 1]!, part, next) : undefined;
    }
    container = next as Container;
    name = part;
  }
  const key = parts[parts.length - 1]!;
  if (Array.isArray(container) && !isArrayIndex(key)) {
    return create ? cannotCreate(operator, key, name, container) : undefined;
  }
  return { container, key };
}

/** The BSON type name of a value, for messages such as "must be an array but is of type string". */
export function typeName(v: unknown): string {
  return bsonTypeOf(v);
}
