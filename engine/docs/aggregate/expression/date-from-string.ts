/**
 * $dateFromString (manual: $dateFromString): a date from a string, with `format` (the specifiers
 * MongoDB documents: %Y %m %d %H %M %S %L %b %B %G %V %u %z %Z %%) or without one (the ISO-8601
 * forms $toDate reads, and `Oct 20 2017` / `20 Oct 2017`), `onError` for a string that does not
 * parse (or a value that is not a string) and `onNull` for null or missing. A parsed date must be
 * valid (no February 30th, hours 0-23, minutes and seconds 0-59); a time left out is midnight, a
 * partial time is completed with zeros, a date part left out is an error. The string's date and
 * time are local to `timezone` (UTC without one); an offset or zone written in the string applies
 * instead, and with a `timezone` other than UTC is an error (onError takes it), as in MongoDB.
 */

import { parseDateString } from '../../ejson.js';
import { bsonTypeOf, describeValue } from '../../values.js';
import { dateAt } from './arithmetic.js';
import { compileZone } from './date.js';
import { daysInMonth } from './date-units.js';
import { fromLocal, utcFromParts } from './date-from-parts.js';
import { constantArg, documentArgs, exprError, isNullish, type ExprOperator } from './expression.js';
import type { TimeZone } from './time-zone.js';

const SPECIFIERS = new Set(['b', 'B', 'd', 'G', 'H', 'L', 'm', 'M', 'S', 'u', 'V', 'Y', 'z', 'Z', '%']);
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const DAY_MS = 86_400_000;

/** Checks a format string: every `%` followed by a specifier $dateFromString knows. @throws QUERY_ERROR */
function validateFormat(format: string, name: string): void {
  for (let i = 0; i < format.length; i++) {
    if (format[i] !== '%') continue;
    if (++i === format.length) exprError(name, "Unmatched '%' at end of format string");
    if (!SPECIFIERS.has(format[i]!)) exprError(name, `Invalid format character '%${format[i]!}' in format string`);
  }
}

interface Parts {
  year?: number;
  month?: number;
  day?: number;
  hour?: number;
  minute?: number;
  second?: number;
  ms?: number;
  isoYear?: number;
  isoWeek?: number;
  isoDay?: number;
  /** Minutes east of UTC written in the string. */
  offset?: number;
  /** The zone abbreviation the offset was written as (Z, UTC, GMT), for MongoDB's error. */
  abbr?: string;
}

/** A parsed string: its date and time read as UTC, and the offset (and abbreviation) it carried. */
interface Parsed {
  wall: number;
  offset?: number;
  abbr?: string;
}

/** The numeric specifiers: the part they set, at most how many digits, the error when none is found. */
const NUMERIC: Readonly<Record<string, readonly [Exclude<keyof Parts, 'abbr'>, number, string]>> = {
  Y: ['year', 4, 'A four digit year could not be found'],
  m: ['month', 2, 'A two digit month could not be found'],
  d: ['day', 2, 'A two digit day could not be found'],
  H: ['hour', 2, 'A two digit hour could not be found'],
  M: ['minute', 2, 'A two digit minute could not be found'],
  S: ['second', 2, 'A two digit second could not be found'],
  G: ['isoYear', 4, 'A four digit ISO year could not be found'],
  V: ['isoWeek', 2, 'A two digit ISO week could not be found'],
  u: ['isoDay', 1, 'A single digit day of week could not be found'],
};

/** A date parsed with a format, or the reason it does not parse. */
function parseWithFormat(text: string, format: string): Parsed | string {
  const parts: Parts = {};
  let p = 0;
  const digits = (max: number): number | undefined => {
    const m = /^\d+/.exec(text.slice(p, p + max));
    if (m === null) return undefined;
    p += m[0].length;
    return Number(m[0]);
  };
  for (let f = 0; f < format.length; f++) {
    const c = format[f]!;
    if (c !== '%') {
      if (text[p] !== c) return p >= text.length ? 'Data missing' : `The format separator does not match '${text[p]!}'`;
      p++;
      continue;
    }
    const spec = format[++f]!;
    const n = Object.hasOwn(NUMERIC, spec) ? NUMERIC[spec] : undefined;
    if (n !== undefined) {
      const v = digits(n[1]);
      if (v === undefined) return n[2];
      parts[n[0]] = v;
      continue;
    }
    switch (spec) {
      case 'L': {
        const start = p;
        const v = digits(3);
        if (v === undefined) return 'A three digit millisecond could not be found';
        // Fewer digits are a fraction: "5" is 500 milliseconds.
        parts.ms = v * 10 ** (3 - (p - start));
        break;
      }
      case 'b':
      case 'B': {
        const word = spec === 'b' ? text.slice(p, p + 3).toLowerCase() : (/^[a-zA-Z]+/.exec(text.slice(p))?.[0].toLowerCase() ?? '');
        const month = MONTHS.findIndex((m) => (spec === 'b' ? m.slice(0, 3) : m) === word);
        if (month < 0) return 'A textual month could not be found';
        p += word.length;
        parts.month = month + 1;
        break;
      }
      case 'z': {
        const m = /^(?:Z|UTC|GMT|([+-])(\d{2}):?(\d{2})?)/.exec(text.slice(p));
        if (m === null) return 'The timezone could not be found in the database';
        p += m[0].length;
        parts.offset = m[1] === undefined ? 0 : (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0));
        if (m[1] === undefined) parts.abbr = m[0].toUpperCase();
        break;
      }
      case 'Z': {
        const m = /^([+-]?)(\d{1,4})/.exec(text.slice(p));
        if (m === null) return 'A minute offset could not be found';
        p += m[0].length;
        parts.offset = (m[1] === '-' ? -1 : 1) * Number(m[2]);
        break;
      }
      case '%':
        if (text[p] !== '%') return 'The escaped character could not be found';
        p++;
        break;
      default:
        return `unknown format specifier %${spec}`;
    }
  }
  if (p < text.length) return `Trailing data '${text[p]!}'`;
  return compose(parts, text);
}

function compose(parts: Parts, text: string): Parsed | string {
  let { year, month, day } = parts;
  let isoMs: number | undefined;
  if (parts.isoYear !== undefined || parts.isoWeek !== undefined || parts.isoDay !== undefined) {
    if (parts.isoYear === undefined) return `an incomplete date/time string has been found, with elements missing: "${text}"`;
    const jan4 = utcFromParts(parts.isoYear, 1, 4, 0, 0, 0, 0);
    const monday = jan4 - ((((Math.floor(jan4 / DAY_MS) + 3) % 7) + 7) % 7) * DAY_MS;
    isoMs = monday + (((parts.isoWeek ?? 1) - 1) * 7 + ((parts.isoDay ?? 1) - 1)) * DAY_MS;
    const d = new Date(isoMs);
    [year, month, day] = [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
  }
  if (year === undefined || month === undefined || day === undefined) return `an incomplete date/time string has been found, with elements missing: "${text}"`;
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return 'The parsed date was invalid';
  const timed = parts.hour !== undefined || parts.minute !== undefined || parts.second !== undefined || parts.ms !== undefined;
  const [hour, minute, second, ms] = timed ? [parts.hour ?? 0, parts.minute ?? 0, parts.second ?? 0, parts.ms ?? 0] : [0, 0, 0, 0];
  if (hour > 23 || minute > 59 || second > 59) return 'The parsed time was invalid';
  const wall = utcFromParts(year, month, day, hour, minute, second, ms);
  if (parts.offset === undefined) return { wall };
  return parts.abbr === undefined ? { wall, offset: parts.offset } : { wall, offset: parts.offset, abbr: parts.abbr };
}

/** A date in the forms read without a format, or the reason it does not parse. */
function parseFree(text: string): Parsed | string {
  const iso = parseDateString(text);
  if (iso !== undefined) {
    // The zone the string ends with, if any: parseDateString applied it; take it back out.
    const zone = ISO_ZONE.exec(text.trim());
    if (zone === null) return { wall: iso };
    if (zone[1] === 'Z') return { wall: iso, offset: 0, abbr: 'Z' };
    const offset = (zone[2] === '-' ? -1 : 1) * (Number(zone[3]) * 60 + Number(zone[4] ?? 0));
    return { wall: iso + offset * 60_000, offset };
  }
  // "Oct 20 2017", "October 20, 2017", "20 Oct 2017": a month name, a day and a year, midnight UTC.
  const m = /^\s*(?:([a-zA-Z]+)\.?\s+(\d{1,2}),?\s+(\d{4})|(\d{1,2})\s+([a-zA-Z]+)\.?,?\s+(\d{4}))\s*$/.exec(text);
  if (m !== null) {
    const word = (m[1] ?? m[5]!).toLowerCase();
    const month = MONTHS.findIndex((name) => word.length >= 3 && name.startsWith(word));
    if (month >= 0) return compose({ year: Number(m[3] ?? m[6]), month: month + 1, day: Number(m[2] ?? m[4]) }, text);
  }
  return 'the string is not a date MongoDB reads without a format here (use format)';
}

/** The zone at the end of a string parseDateString read (ejson.ts LOOSE_DATE): `Z` or an offset. */
const ISO_ZONE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)? ?(?:(Z)|([+-])(\d{2}):?(\d{2})?)$/;

/**
 * The instant of a parsed string in `zone`: its own offset when it has one (only with UTC, as in
 * MongoDB: else the error message), else its local time in the zone.
 */
function instantOf(parsed: Parsed, zone: TimeZone): number | { error: string } {
  if (parsed.offset === undefined) return fromLocal(zone, parsed.wall);
  if (!zone.utc) {
    return {
      error: parsed.abbr === undefined
        ? 'you cannot pass in a date/time string with GMT offset together with a timezone argument'
        : `you cannot pass in a date/time string with time zone information ('${parsed.abbr}') together with a timezone argument`,
    };
  }
  return parsed.wall - parsed.offset * 60_000;
}

const dateFromString: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const a = documentArgs(args, name, ['dateString', 'format', 'timezone', 'onError', 'onNull'], ['dateString']);
    const dateString = ctx.compile(a['dateString']);
    const hasFormat = Object.hasOwn(a, 'format');
    const constant = hasFormat ? constantArg(a['format']) : undefined;
    if (constant !== undefined && typeof constant.value === 'string') validateFormat(constant.value, name);
    const format = hasFormat ? ctx.compile(a['format']) : undefined;
    const zoneArg = compileZone(a, ctx, name);
    const onError = Object.hasOwn(a, 'onError') ? ctx.compile(a['onError']) : undefined;
    const onNull = Object.hasOwn(a, 'onNull') ? ctx.compile(a['onNull']) : undefined;
    return (scope) => {
      const v = dateString(scope);
      // The format is checked first, even for a null string (MongoDB's order).
      const f = format === undefined ? undefined : format(scope);
      if (!isNullish(f)) {
        if (typeof f !== 'string') exprError(name, `$dateFromString requires that 'format' be a string, found: ${bsonTypeOf(f)} with value ${describeValue(f)}`);
        validateFormat(f, name);
      }
      const zone = zoneArg(scope);
      if (isNullish(v)) return onNull === undefined ? null : onNull(scope);
      let error: string;
      if (typeof v !== 'string') error = `$dateFromString requires that 'dateString' be a string, found: ${bsonTypeOf(v)} with value ${describeValue(v)}`;
      else if (zone === null || (format !== undefined && isNullish(f))) return null;
      else {
        const parsed = typeof f === 'string' ? parseWithFormat(v, f) : parseFree(v);
        if (typeof parsed === 'string') error = `Error parsing date string '${v}'; ${parsed}`;
        else {
          const instant = instantOf(parsed, zone);
          if (typeof instant === 'number') return dateAt(instant, name);
          error = instant.error;
        }
      }
      if (onError !== undefined) return onError(scope);
      return exprError(name, error);
    };
  },
};

export const dateFromStringOperators: Record<string, ExprOperator> = {
  $dateFromString: dateFromString,
};
