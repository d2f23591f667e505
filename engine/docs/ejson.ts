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
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  let offset = 0;
  if (m[8] !== 'Z') {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return undefined;
    offset = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // Fractions beyond milliseconds are truncated: a Date holds whole milliseconds.
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, '0'));
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, ms);
  return d.getTime() - offset * MS_PER_MINUTE;
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

function holdsDate(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (value instanceof Date) return true;
  if (Array.isArray(value)) {
    for (const el of value) if (holdsDate(el)) return true;
    return false;
  }
  for (const key of Object.keys(value)) if (holdsDate((value as Doc)[key])) return true;
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
 * A JSON-ready form of a document value: every Date becomes `{$date: "<ISO-8601>"}`. A value
 * without dates is returned as it is (not copied).
 */
export function toJson(value: unknown): unknown {
  if (!holdsDate(value)) return value;
  return datesToJson(value);
}

function datesToJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (value instanceof Date) return dateToJson(value);
  if (Array.isArray(value)) return value.map(datesToJson);
  const out: Doc = {};
  for (const key of Object.keys(value)) setOwn(out, key, datesToJson((value as Doc)[key]));
  return out;
}
