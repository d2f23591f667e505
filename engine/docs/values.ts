/**
 * Document values: JSON values plus Date, the BSON type each one stands for, and MongoDB's
 * comparison order over them. Everything in the document model compares through this file.
 *
 * Type mapping. A JSON number carries no int/long/double tag, so the type is inferred from the
 * value: an integer in the int32 range is 'int', any other safe integer (|n| <= 2^53 - 1) is
 * 'long', and everything else (fractions, larger magnitudes, -0, NaN, Infinity) is 'double'.
 * Numbers of all three types compare by value, as they do in MongoDB.
 */

import { compareCodePoints } from '../text-order.js';

/** An absent field. Distinct from null and from undefined: a path that leads nowhere yields it. */
export const MISSING: unique symbol = Symbol('missing');
export type Missing = typeof MISSING;

/** A document: a plain object whose own enumerable string keys are its fields. */
export type Doc = Record<string, unknown>;

/** The BSON types a stored value can have, plus 'missing' for an absent field. */
export type BsonType = 'double' | 'int' | 'long' | 'string' | 'object' | 'array' | 'bool' | 'null' | 'date' | 'missing';

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

/**
 * MongoDB's comparison order of types (the manual's "Comparison/Sort Order"): MinKey < null <
 * numbers < string < object < array < binData < objectId < bool < date < timestamp < regex <
 * MaxKey. Missing sorts with null. The types this model cannot hold keep their slot so the
 * numbers match the manual's list.
 */
export const TYPE_BRACKET = {
  minKey: 0,
  null: 1,
  number: 2,
  string: 3,
  object: 4,
  array: 5,
  binData: 6,
  objectId: 7,
  bool: 8,
  date: 9,
  timestamp: 10,
  regex: 11,
  maxKey: 12,
} as const;

/** True for a plain object (a document or an embedded document), not an array, Date or class instance. */
export function isPlainObject(v: unknown): v is Doc {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/** The value of an own field, or MISSING; never reads through the prototype chain. */
export function getOwn(obj: object, key: string): unknown {
  if (!Object.hasOwn(obj, key)) return MISSING;
  const v = (obj as Record<string, unknown>)[key];
  // An own property holding undefined only arises from JavaScript callers; JSON cannot say it.
  return v === undefined ? MISSING : v;
}

/**
 * Sets an own data property without running setters: `obj.__proto__ = v` would replace the
 * prototype, so a document field called "__proto__" is always defined, never assigned.
 */
export function setOwn(obj: object, key: string, value: unknown): void {
  // Object.prototype's only setter is __proto__; every other key assigns as an own data property.
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    (obj as Record<string, unknown>)[key] = value;
  }
}

/** A deep copy of a document value; Dates are copied, `__proto__` keys stay plain data. */
export function cloneValue<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) return v.map(cloneValue) as T;
  if (v instanceof Date) return new Date(v.getTime()) as T;
  const out: Doc = {};
  for (const key of Object.keys(v)) setOwn(out, key, cloneValue((v as Doc)[key]));
  return out as T;
}

/** The BSON type of a value under the number mapping described at the top of this file. */
export function bsonTypeOf(v: unknown): BsonType {
  switch (typeof v) {
    case 'number':
      if (Number.isInteger(v) && !Object.is(v, -0)) {
        if (v >= INT32_MIN && v <= INT32_MAX) return 'int';
        if (Number.isSafeInteger(v)) return 'long';
      }
      return 'double';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'undefined':
      return 'missing';
    case 'symbol':
      return v === MISSING ? 'missing' : 'object';
    default:
      if (v === null) return 'null';
      if (Array.isArray(v)) return 'array';
      if (v instanceof Date) return 'date';
      return 'object';
  }
}

/** The position of a value's type in MongoDB's comparison order (see TYPE_BRACKET). */
export function typeBracket(v: unknown): number {
  switch (typeof v) {
    case 'number':
      return TYPE_BRACKET.number;
    case 'string':
      return TYPE_BRACKET.string;
    case 'boolean':
      return TYPE_BRACKET.bool;
    case 'undefined':
    case 'symbol':
      return TYPE_BRACKET.null;
    default:
      if (v === null) return TYPE_BRACKET.null;
      if (Array.isArray(v)) return TYPE_BRACKET.array;
      if (v instanceof Date) return TYPE_BRACKET.date;
      return TYPE_BRACKET.object;
  }
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

// NaN sorts below every other number and equals itself, as in MongoDB.
function compareNumbers(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) return 0;
  const aNaN = Number.isNaN(a);
  const bNaN = Number.isNaN(b);
  return aNaN === bNaN ? 0 : aNaN ? -1 : 1;
}

/** Compares strings by Unicode code point (MongoDB's binary UTF-8 order): -1, 0 or 1. */
export function compareStrings(a: string, b: string): number {
  return sign(compareCodePoints(a, b));
}

// BSON object order (the manual's "Objects"): pair by pair, first the value types, then the
// field names, then the values; an object that runs out of pairs first is less.
function compareObjects(a: Doc, b: Doc): number {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const va = a[ka[i]!];
    const vb = b[kb[i]!];
    const byType = typeBracket(va) - typeBracket(vb);
    if (byType !== 0) return sign(byType);
    const byName = compareStrings(ka[i]!, kb[i]!);
    if (byName !== 0) return byName;
    const byValue = compareValues(va, vb);
    if (byValue !== 0) return byValue;
  }
  return sign(ka.length - kb.length);
}

function compareArrays(a: readonly unknown[], b: readonly unknown[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareValues(a[i], b[i]);
    if (c !== 0) return c;
  }
  return sign(a.length - b.length);
}

/**
 * A total order over document values in BSON order: types by TYPE_BRACKET, then numbers by
 * value, strings by code point, objects field by field, arrays element by element, false <
 * true, dates by time. Missing compares equal to null (their sort position). Returns -1, 0 or 1.
 */
export function compareValues(a: unknown, b: unknown): number {
  const ta = typeBracket(a);
  const tb = typeBracket(b);
  if (ta !== tb) return ta < tb ? -1 : 1;
  switch (ta) {
    case TYPE_BRACKET.number:
      return compareNumbers(a as number, b as number);
    case TYPE_BRACKET.string:
      return compareStrings(a as string, b as string);
    case TYPE_BRACKET.object:
      return compareObjects(a as Doc, b as Doc);
    case TYPE_BRACKET.array:
      return compareArrays(a as unknown[], b as unknown[]);
    case TYPE_BRACKET.bool:
      return a === b ? 0 : a ? 1 : -1;
    case TYPE_BRACKET.date:
      return compareNumbers((a as Date).getTime(), (b as Date).getTime());
    default:
      return 0;
  }
}

/**
 * Deep equality as MongoDB's: numbers by value (1 equals 1.0, NaN equals NaN), dates by time,
 * objects with the same fields in the same order, arrays element-wise. null and MISSING differ.
 */
export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b);
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!valuesEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && compareNumbers(a.getTime(), b.getTime()) === 0;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    if (ka[i] !== kb[i]) return false;
    if (!valuesEqual((a as Doc)[ka[i]!], (b as Doc)[kb[i]!])) return false;
  }
  return true;
}

/** A short JSON-ish rendering of a value for error messages (dates as ISO, long values cut). */
export function describeValue(v: unknown, max = 80): string {
  let text: string;
  try {
    text = JSON.stringify(v, (_key, x: unknown) => (x === MISSING ? undefined : x)) ?? 'missing';
  } catch {
    text = String(v);
  }
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}
