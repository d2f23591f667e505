/**
 * Extended JSON for the one non-JSON type the model holds: a date travels as
 * `{"$date": "<ISO-8601>"}` or `{"$date": <milliseconds>}` (also the canonical
 * `{"$date": {"$numberLong": "<milliseconds>"}}`). fromJson turns those into Date objects in
 * documents, filters and updates; toJson turns Dates back for responses.
 */

import { fail, type ErrorCode } from '../errors.js';
import { DOCS_LIMITS } from './limits.js';
import { isPlainObject, setOwn, type Doc } from './values.js';

/** Options of fromJson: which error code a bad date raises (documents vs. queries). */
export interface FromJsonOptions {
  code?: Extract<ErrorCode, 'VALIDATION_FAILED' | 'QUERY_ERROR'>;
}

// The range of a JavaScript Date (ECMA-262 TimeClip): +-100,000,000 days around the epoch.
const MAX_DATE_MS = 8.64e15;
const MS_PER_MINUTE = 60_000;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):?(\d{2}))$/;
const LONG_STRING = /^-?\d{1,16}$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeap(year) ? 29 : DAYS_IN_MONTH[month - 1]!;
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Milliseconds of a strict ISO-8601 date-time with seconds and an offset, or undefined. */
export function parseIsoDate(text: string): number | undefined {
  const m = ISO_DATE.exec(text);
  if (m === null) return undefined;
  return composeDate(m[1]!, m[2]!, m[3]!, m[4]!, m[5]!, m[6]!, m[7], m[8] === 'Z' ? undefined : m[9], m[10], m[11]);
}

// The date strings $toDate and $convert read (MongoDB's date parser): a date alone, or with a
// time after T or a space (seconds and fraction optional), then an optional offset (Z, +05:00,
// +0500, +05, also after a space); no offset is UTC.
const LOOSE_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)? ?(Z|([+-])(\d{2}):?(\d{2})?)?$/;

/** A date string as $toDate reads it (see LOOSE_DATE), as epoch milliseconds; undefined when it is not one. */
export function parseDateString(text: string): number | undefined {
  const m = LOOSE_DATE.exec(text.trim());
  if (m === null) return undefined;
  return composeDate(m[1]!, m[2]!, m[3]!, m[4] ?? '0', m[5] ?? '0', m[6] ?? '0', m[7], m[8] === undefined || m[8] === 'Z' ? undefined : m[9], m[10], m[11] ?? '0');
}

/** Epoch milliseconds of validated date parts; `sign` undefined: UTC. Undefined for an impossible date. */
function composeDate(y: string, mo: string, d: string, h: string, mi: string, s: string, fraction: string | undefined, sign: string | undefined, oh: string | undefined, om: string | undefined): number | undefined {
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = 0;
  if (sign !== undefined) {
    const offH = Number(oh);
    const offM = Number(om);
    if (offH > 23 || offM > 59) return undefined;
    offset = (sign === '-' ? -1 : 1) * (offH * 60 + offM);
  }
  // Fractions beyond milliseconds are truncated: a Date holds whole milliseconds.
  const ms = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime() - offset * MS_PER_MINUTE;
}

function dateFrom(operand: unknown, path: string, code: ErrorCode): Date {
  let ms: number | undefined;
  if (typeof operand === 'string') {
    ms = parseIsoDate(operand);
  } else if (typeof operand === 'number') {
    ms = Number.isInteger(operand) ? operand : undefined;
  } else if (isPlainObject(operand)) {
    const keys = Object.keys(operand);
    const long = operand['$numberLong'];
    if (keys.length === 1 && typeof long === 'string' && LONG_STRING.test(long)) ms = Number(long);
  }
  if (ms === undefined || !(Math.abs(ms) <= MAX_DATE_MS)) {
    fail(
      code,
      `${path === '' ? '' : `${path}: `}$date must be an ISO-8601 date-time such as "2024-01-31T12:00:00Z" or an integer number of milliseconds since the epoch`,
      { path },
    );
  }
  return new Date(ms);
}

function isDateWrapper(v: Doc): boolean {
  // Only an object whose single key is $date: anything else is an ordinary (sub)document.
  let count = 0;
  for (const key in v) {
    if (!Object.hasOwn(v, key)) continue;
    if (++count > 1 || key !== '$date') return false;
  }
  return count === 1;
}

function convertIn(value: unknown, path: string, depth: number, code: ErrorCode): unknown {
  if (typeof value !== 'object' || value === null || value instanceof Date) return value;
  if (depth > DOCS_LIMITS.maxJsonDepth) {
    fail(code, `value nesting exceeds ${DOCS_LIMITS.maxJsonDepth} levels`, { path, limit: DOCS_LIMITS.maxJsonDepth });
  }
  if (Array.isArray(value)) {
    return value.map((el, i) => convertIn(el, path === '' ? String(i) : `${path}.${i}`, depth + 1, code));
  }
  const obj = value as Doc;
  if (isDateWrapper(obj)) return dateFrom(obj['$date'], path, code);
  const out: Doc = {};
  for (const key of Object.keys(obj)) {
    setOwn(out, key, convertIn(obj[key], path === '' ? key : `${path}.${key}`, depth + 1, code));
  }
  return out;
}

/**
 * A parsed JSON value with every `{$date: ...}` object turned into a Date: a copy when there
 * is one to convert, else the value itself (treat both as read-only). Dates already present
 * pass through, so converting twice is harmless. @throws VALIDATION_FAILED
 * (or options.code) for a malformed $date or nesting deeper than DOCS_LIMITS.maxJsonDepth
 */
export function fromJson(value: unknown, options: FromJsonOptions = {}): unknown {
  // Most values hold no $date: one walk that only looks, and the value itself comes back.
  if (!needsConversion(value, 1)) return value;
  return convertIn(value, '', 1, options.code ?? 'VALIDATION_FAILED');
}

// True when convertIn would change something or refuse: a $date wrapper, or nesting past the limit.
function needsConversion(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null || value instanceof Date) return false;
  if (depth > DOCS_LIMITS.maxJsonDepth) return true;
  if (Array.isArray(value)) {
    for (const el of value) if (needsConversion(el, depth + 1)) return true;
    return false;
  }
  if (isDateWrapper(value as Doc)) return true;
  for (const key of Object.keys(value)) if (needsConversion((value as Doc)[key], depth + 1)) return true;
  return false;
}

// True when a value holds a Date or a number JSON cannot carry (Infinity, NaN: an aggregation can
// compute them), which toJson must convert.
function needsJsonForm(value: unknown): boolean {
  if (typeof value === 'number') return !Number.isFinite(value);
  if (typeof value !== 'object' || value === null) return false;
  if (value instanceof Date) return true;
  if (Array.isArray(value)) {
    for (const el of value) if (needsJsonForm(el)) return true;
    return false;
  }
  for (const key of Object.keys(value)) if (needsJsonForm((value as Doc)[key])) return true;
  return false;
}

function dateToJson(d: Date): unknown {
  const ms = d.getTime();
  if (Number.isNaN(ms)) return null;
  const year = d.getUTCFullYear();
  // Relaxed Extended JSON: ISO only for four-digit years; others as canonical milliseconds,
  // since ISO strings with expanded years ("+010000-...") are not portable.
  if (year >= 0 && year <= 9999) return { $date: d.toISOString() };
  return { $date: { $numberLong: String(ms) } };
}

/**
 * A JSON-ready form of a document value: every Date becomes `{$date: "<ISO-8601>"}`, and a number
 * JSON cannot carry becomes MongoDB's Extended JSON for it (`{$numberDouble: "Infinity"}`,
 * `"-Infinity"`, `"NaN"`), as mongosh and the drivers print them. A value without either is
 * returned as it is (not copied).
 */
export function toJson(value: unknown): unknown {
  if (!needsJsonForm(value)) return value;
  return toJsonForm(value);
}

function toJsonForm(value: unknown): unknown {
  if (typeof value === 'number') return Number.isFinite(value) ? value : { $numberDouble: Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity' };
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Date) return dateToJson(value);
  if (Array.isArray(value)) return value.map(toJsonForm);
  const out: Doc = {};
  for (const key of Object.keys(value)) setOwn(out, key, toJsonForm((value as Doc)[key]));
  return out;
}
