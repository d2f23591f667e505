/**
 * Dot paths, read the way MongoDB's matcher reads them (src/mongo/db/matcher/path.cpp):
 *
 * - Object fields are followed by name; a path through a scalar or a missing field yields MISSING.
 * - An array met before the end of the path is traversed: each element that is an object is
 *   looked into with the rest of the path (non-object elements yield nothing, nested arrays are
 *   not entered implicitly). When the next component is an array index ("a.0"), the element at
 *   that position is used as well, after the object elements' field of that name.
 * - An array at the end of the path is, depending on the operator, returned whole
 *   ('no-traversal', for $size and $elemMatch), or as its elements followed by the array itself
 *   ('traverse', for equality and the comparisons), or as its elements only ('traverse-omit-array',
 *   for sort keys). An element picked by an index at the end of the path is returned as is.
 *
 * Reads use own properties only, so a path such as "constructor" or "__proto__" never reaches
 * Object.prototype.
 */

import { getOwn, isPlainObject, MISSING, setOwn, type Doc } from './values.js';

/** How an array found at the end of a path is presented to an operator (see file comment). */
export type LeafArrays = 'traverse' | 'traverse-omit-array' | 'no-traversal';

const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/;
const MAX_INDEX_DIGITS = 15;

/** The components of a dot path ("a.b.0" -> ["a", "b", "0"]). */
export function parsePath(path: string): string[] {
  return path.split('.');
}

/** True when a path component is a canonical array index ("0", "12"; not "01" or "-1"). */
export function isArrayIndex(component: string): boolean {
  return component.length <= MAX_INDEX_DIGITS && ARRAY_INDEX.test(component);
}

// MongoDB compares the path component with the element's decimal index as strings, so only
// canonical digit strings ever pick an element.
function isOffset(component: string, index: number): boolean {
  return component.length <= MAX_INDEX_DIGITS && component === String(index);
}

function leafArray(arr: readonly unknown[], leaf: LeafArrays, out: unknown[]): void {
  if (leaf === 'no-traversal') {
    out.push(arr);
    return;
  }
  for (const el of arr) out.push(el);
  if (leaf === 'traverse') out.push(arr);
}

function fromObject(obj: object, parts: readonly string[], start: number, leaf: LeafArrays, out: unknown[]): void {
  const last = parts.length - 1;
  let cur = obj;
  for (let i = start; ; i++) {
    const v = getOwn(cur, parts[i]!);
    if (Array.isArray(v)) {
      if (i === last) leafArray(v, leaf, out);
      else inArray(v, parts, i + 1, leaf, out);
      return;
    }
    if (i < last && isPlainObject(v)) {
      cur = v;
      continue;
    }
    out.push(i === last ? v : MISSING);
    return;
  }
}

// `parts[j]` is the component after the array `arr`; the path does not end at the array.
function inArray(arr: readonly unknown[], parts: readonly string[], j: number, leaf: LeafArrays, out: unknown[]): void {
  const last = parts.length - 1;
  const piece = parts[j]!;
  for (let k = 0; k < arr.length; k++) {
    const el = arr[k];
    const offset = isOffset(piece, k);
    if (isPlainObject(el)) {
      fromObject(el, parts, j, leaf, out);
      if (!offset) continue;
      if (j === last) out.push(el);
      else fromObject(el, parts, j + 1, leaf, out);
    } else if (offset) {
      if (j === last) out.push(el);
      else if (Array.isArray(el)) inArray(el, parts, j + 1, leaf, out);
    }
  }
}

/**
 * Every value a dot path reaches in a document, MongoDB-style (see the file comment); an
 * absent field contributes MISSING. The order is the document's.
 */
export function collectValues(doc: Doc, parts: readonly string[], leaf: LeafArrays): unknown[] {
  const out: unknown[] = [];
  fromObject(doc, parts, 0, leaf, out);
  return out;
}

/** The values an operator sees for a single value at the end of a path (an array expands per `leaf`). */
export function expandValue(value: unknown, leaf: LeafArrays): unknown[] {
  const out: unknown[] = [];
  if (Array.isArray(value)) leafArray(value, leaf, out);
  else out.push(value);
  return out;
}

/**
 * The single value at a path, following object fields and array indexes only (no implicit array
 * traversal), or MISSING. For updates, projections and upserts, where a path names one place.
 */
export function getPathValue(doc: unknown, parts: readonly string[]): unknown {
  let cur: unknown = doc;
  for (const part of parts) {
    if (isPlainObject(cur)) cur = getOwn(cur, part);
    else if (Array.isArray(cur) && isArrayIndex(part)) cur = Number(part) < cur.length ? cur[Number(part)] : MISSING;
    else return MISSING;
    if (cur === MISSING) return MISSING;
  }
  return cur;
}

/**
 * A copy of `doc` with `value` at the dot path `parts`: the documents on the way are copied, a
 * missing or non-document one becomes a document; MISSING removes the field (and then creates
 * nothing on the way).
 */
export function withPath(doc: Doc, parts: readonly string[], value: unknown): Doc {
  const out: Doc = { ...doc };
  let into = out;
  for (let i = 0; i < parts.length - 1; i++) {
    const cur = getOwn(into, parts[i]!);
    if (!isPlainObject(cur)) {
      if (value === MISSING) return out;
      const next: Doc = {};
      setOwn(into, parts[i]!, next);
      into = next;
      continue;
    }
    const next: Doc = { ...cur };
    setOwn(into, parts[i]!, next);
    into = next;
  }
  const last = parts[parts.length - 1]!;
  if (value === MISSING) delete into[last];
  else setOwn(into, last, value);
  return out;
}
