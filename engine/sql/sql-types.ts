import { fail } from '../errors.js';
import { Decimal } from './decimal.js';
import { civilFromDays } from './functions/calendar.js';
import { enumLabel as enumLabelOf } from './enum-types.js';

/**
 * The SQL value model. Every value carries its PostgreSQL type name; SQL NULL is `value: null`
 * with whatever type the expression has (a bare NULL literal is `unknown`).
 *
 * Representation per type:
 *  - boolean: boolean; int2/int4: number; int8: bigint (always, so overflow checks are exact)
 *  - numeric: Decimal (exact); float8: number
 *  - text / unknown (an untyped string literal): string
 *  - bpchar (`character(n)`): string, blank-padded to n as PostgreSQL stores it; trailing
 *    spaces carry no meaning (comparison, hashing and keys ignore them, see bpcharTrim)
 *  - bit / varbit (`bit(n)`, `bit varying(n)`): string of 0s and 1s (see bit-string.ts)
 *  - date: days since 1970-01-01 (number); timestamp / timestamptz: microseconds since the
 *    epoch (bigint), timestamptz in UTC (the session time zone is always UTC here)
 *  - time: microseconds since midnight (bigint, 0 to 24:00:00 inclusive, as PostgreSQL's);
 *    timetz: { time, zone } as PostgreSQL's TimeTzADT (zone in seconds WEST of UTC: +02 is -7200)
 *  - jsonb: { json: parsed JSON } (boxed: JSON null is not SQL NULL); bytea: Buffer
 *  - interval: { months, days, micros } kept apart as PostgreSQL does (a month is not 30 days
 *    until intervals are compared; a day is not 24 hours across the calendar)
 *  - one-dimensional arrays (`'int4[]'`, `'text[]'`, ...): SqlValue[] of the element type, NULL
 *    elements allowed; lower bound 1, as PostgreSQL's array_agg builds them
 */
export type SqlTypeName = ScalarTypeName | ArrayTypeName;

/** The types of single values (everything but arrays). */
export type ScalarTypeName =
  | 'unknown'
  | 'boolean'
  | 'int2'
  | 'int4'
  | 'int8'
  | 'numeric'
  | 'float8'
  | 'text'
  | 'bpchar'
  | 'bit'
  | 'varbit'
  | 'date'
  | 'timestamp'
  | 'timestamptz'
  | 'time'
  | 'timetz'
  | 'jsonb'
  | 'bytea'
  | 'uuid'
  | 'interval'
  | EnumTypeName;

/**
 * An enum type (CREATE TYPE ... AS ENUM): `enum:<id>`, one name per version of one tenant's type
 * (a random id, so no two tenants' types share one; see enum-types.ts). Its values are their
 * labels' sort keys (strings whose code point order is the labels' declared order).
 */
export type EnumTypeName = `enum:${string}`;

/** Whether `t` is an enum type (not an array of one). */
export function isEnumType(t: SqlTypeName): t is EnumTypeName {
  return t.startsWith('enum:') && !t.endsWith('[]');
}

/** Narrows a non-null value to an enum's. */
export function isEnumValue(v: NonNullSqlValue): v is { type: EnumTypeName; value: string } {
  return isEnumType(v.type);
}

/** Array types are named by their element type plus `[]`, as PostgreSQL's `integer[]`. */
export type ArrayTypeName = `${Exclude<ScalarTypeName, 'unknown'>}[]`;

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/** An interval datum: PostgreSQL's three independent fields. */
export interface Interval {
  readonly months: number;
  readonly days: number;
  readonly micros: bigint;
}

/** A timetz datum: the local time of day and its zone, seconds west of UTC (PostgreSQL's sign). */
export interface TimeTz {
  readonly time: bigint;
  readonly zone: number;
}

/** A jsonb datum; boxed so that the JSON `null` document is distinct from SQL NULL. */
export interface Jsonb {
  readonly json: JsonValue;
}

export type SqlValue =
  | { type: SqlTypeName; value: null }
  | { type: 'unknown' | 'text' | 'bpchar' | 'bit' | 'varbit' | 'uuid'; value: string }
  | { type: 'boolean'; value: boolean }
  | { type: 'int2' | 'int4'; value: number }
  | { type: 'int8'; value: bigint }
  | { type: 'numeric'; value: Decimal }
  | { type: 'float8'; value: number }
  | { type: 'date'; value: number }
  | { type: 'timestamp' | 'timestamptz' | 'time'; value: bigint }
  | { type: 'timetz'; value: TimeTz }
  | { type: 'jsonb'; value: Jsonb }
  | { type: 'bytea'; value: Buffer }
  | { type: 'interval'; value: Interval }
  | { type: EnumTypeName; value: string }
  | { type: ArrayTypeName; value: SqlValue[] };

export type NonNullSqlValue = Exclude<SqlValue, { value: null }>;

export const INT_RANGES = {
  int2: [-32768n, 32767n],
  int4: [-2147483648n, 2147483647n],
  int8: [-9223372036854775808n, 9223372036854775807n],
} as const;

/** The numeric types in PostgreSQL's implicit promotion order. */
export const NUMERIC_RANK: Partial<Record<SqlTypeName, number>> = { int2: 0, int4: 1, int8: 2, numeric: 3, float8: 4 };

export function isArrayType(t: SqlTypeName): t is ArrayTypeName {
  return t.endsWith('[]');
}

/** The array type whose elements are `t` (an unknown literal's array is text[]). */
export function arrayTypeOf(t: ScalarTypeName): ArrayTypeName {
  return `${t === 'unknown' ? 'text' : t}[]`;
}

/** The element type of an array type. */
export function elementTypeOf(t: ArrayTypeName): ScalarTypeName {
  return t.slice(0, -2) as ScalarTypeName;
}

export function sqlNull(type: SqlTypeName = 'unknown'): SqlValue {
  return { type, value: null };
}

export function isNull(v: SqlValue): v is { type: SqlTypeName; value: null } {
  return v.value === null;
}

/**
 * Raises a SQL_ERROR with the given SQLSTATE, and PostgreSQL's DETAIL and HINT where it gives
 * them; the one way this module reports SQL errors.
 */
/** PostgreSQL's HINT of a call that resolves to no function (42883, `function f(...) does not exist`). */
export const NO_FUNCTION_HINT = 'No function matches the given name and argument types. You might need to add explicit type casts.';

export function sqlFail(sqlstate: string, message: string, detail?: string, hint?: string): never {
  return fail('SQL_ERROR', message, { sqlstate, ...(detail === undefined ? {} : { detail }), ...(hint === undefined ? {} : { hint }) });
}

/** An integer of the given type, checked against its range. @throws SQL_ERROR 22003 */
export function makeInt(type: 'int2' | 'int4' | 'int8', v: bigint): SqlValue {
  const [lo, hi] = INT_RANGES[type];
  if (v < lo || v > hi) {
    sqlFail('22003', type === 'int2' ? 'smallint out of range' : type === 'int4' ? 'integer out of range' : 'bigint out of range');
  }
  return type === 'int8' ? { type, value: v } : { type, value: Number(v) };
}

/**
 * The type of a numeric literal as PostgreSQL infers it: integers that fit int4 are integer,
 * then bigint, anything else (fraction, exponent, too big) is numeric.
 */
export function numericLiteral(text: string): SqlValue {
  if (/^-?\d+$/.test(text)) {
    const b = BigInt(text);
    if (b >= INT_RANGES.int4[0] && b <= INT_RANGES.int4[1]) return { type: 'int4', value: Number(b) };
    if (b >= INT_RANGES.int8[0] && b <= INT_RANGES.int8[1]) return { type: 'int8', value: b };
  }
  const d = Decimal.parse(text);
  if (d === null) sqlFail('22P02', `invalid input syntax for type numeric: "${text}"`);
  return { type: 'numeric', value: d };
}

/**
 * Days since epoch -> PostgreSQL's ISO text: 'YYYY-MM-DD', years past 9999 with all their digits,
 * years before 1 as 'YYYY-MM-DD BC' (there is no year 0: day numbers in year 0 are 1 BC).
 */
export function formatDate(days: number): string {
  const { text, bc } = civilDate(days);
  return bc ? `${text} BC` : text;
}

const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));

/** 'YYYY-MM-DD' of a day number in PostgreSQL's AD/BC numbering, and whether it is BC. */
function civilDate(days: number): { text: string; bc: boolean } {
  const { year, month, day } = civilFromDays(days);
  const bc = year < 1;
  return { text: `${String(bc ? 1 - year : year).padStart(4, '0')}-${pad2(month)}-${pad2(day)}`, bc };
}

const MICROS_PER_DAY = 86_400_000_000;

/**
 * Microseconds since epoch -> 'YYYY-MM-DD HH:MM:SS[.ffffff][+00][ BC]' (PostgreSQL's text form,
 * UTC; the era comes last, after the zone).
 */
export function formatTimestamp(micros: bigint, tz: boolean): string {
  let day: number;
  let time: number;
  if (micros >= -9_007_199_254_740_991n && micros <= 9_007_199_254_740_991n) {
    // Number arithmetic is exact below 2^53 and much cheaper than bigint division; % is exact.
    const m = Number(micros);
    time = m % MICROS_PER_DAY;
    if (time < 0) time += MICROS_PER_DAY;
    day = (m - time) / MICROS_PER_DAY;
  } else {
    const big = BigInt(MICROS_PER_DAY);
    let rest = micros % big;
    if (rest < 0n) rest += big;
    day = Number((micros - rest) / big);
    time = Number(rest);
  }
  const { text, bc } = civilDate(day);
  const secs = Math.floor(time / 1_000_000);
  const frac = time - secs * 1_000_000;
  let out = `${text} ${pad2(Math.floor(secs / 3600))}:${pad2(Math.floor(secs / 60) % 60)}:${pad2(secs % 60)}`;
  if (frac !== 0) out += `.${String(frac).padStart(6, '0').replace(/0+$/, '')}`;
  if (tz) out += '+00';
  return bc ? `${out} BC` : out;
}

/** Microseconds since midnight -> 'HH:MM:SS[.ffffff]' (time_out; 24:00:00 is a value of its own). */
export function formatTime(micros: bigint): string {
  const t = Number(micros);
  const secs = Math.floor(t / 1_000_000);
  const frac = t - secs * 1_000_000;
  const out = `${pad2(Math.floor(secs / 3600))}:${pad2(Math.floor(secs / 60) % 60)}:${pad2(secs % 60)}`;
  return frac === 0 ? out : `${out}.${String(frac).padStart(6, '0').replace(/0+$/, '')}`;
}

/** A zone in seconds west of UTC as PostgreSQL prints it after a time: `+02`, `-05:30`, `+02:30:15`. */
export function formatZone(zoneWest: number): string {
  const east = -zoneWest;
  const abs = Math.abs(east);
  let out = `${east < 0 ? '-' : '+'}${pad2(Math.floor(abs / 3600))}`;
  const minutes = Math.floor(abs / 60) % 60;
  const seconds = abs % 60;
  if (minutes !== 0 || seconds !== 0) out += `:${pad2(minutes)}`;
  if (seconds !== 0) out += `:${pad2(seconds)}`;
  return out;
}

/**
 * A bpchar's significant characters: without its trailing spaces (only U+0020, as PostgreSQL's
 * bcTruelen). What bpchar -> text casts give and what bpchar comparison and hashing look at.
 */
export function bpcharTrim(s: string): string {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === 0x20) end--;
  return end === s.length ? s : s.slice(0, end);
}

/** Text form of a value, as PostgreSQL's output function (used by ::text and ||). */
export function toText(v: NonNullSqlValue): string {
  switch (v.type) {
    case 'unknown':
    case 'text':
    case 'bpchar':
    case 'bit':
    case 'varbit':
    case 'uuid':
      return v.value;
    case 'boolean':
      return v.value ? 'true' : 'false';
    case 'int2':
    case 'int4':
    case 'int8':
      return v.value.toString();
    case 'numeric':
      return v.value.toString();
    case 'float8':
      return formatFloat(v.value);
    case 'date':
      return formatDate(v.value);
    case 'timestamp':
      return formatTimestamp(v.value, false);
    case 'timestamptz':
      return formatTimestamp(v.value, true);
    case 'time':
      return formatTime(v.value);
    case 'timetz':
      return formatTime(v.value.time) + formatZone(v.value.zone);
    case 'jsonb':
      return jsonbText(v.value.json);
    case 'bytea':
      return `\\x${v.value.toString('hex')}`;
    case 'interval':
      return formatInterval(v.value);
    default: {
      // Array and enum types are template-literal names, so they cannot be listed as cases.
      if (isArrayValue(v)) return arrayText(v.value);
      if (isEnumValue(v)) return enumLabelOf(v.type, v.value);
      const never: never = v;
      return never;
    }
  }
}

/** A value as its type's output function writes it: toText, except booleans, which are t/f (boolout; `::text` says true/false). */
export function outputText(v: NonNullSqlValue): string {
  return v.type === 'boolean' ? (v.value ? 't' : 'f') : toText(v);
}

/**
 * PostgreSQL's interval output (IntervalStyle postgres): `1 year 2 mons 3 days 04:05:06.5`;
 * a field after a negative one carries an explicit `+`; the time part is shown when non-zero
 * or when everything is zero.
 */
export function formatInterval(iv: Interval): string {
  const parts: string[] = [];
  let before = false;
  const add = (value: number, unit: string): void => {
    if (value === 0) return;
    parts.push(`${before && value > 0 ? '+' : ''}${value} ${unit}${value !== 1 ? 's' : ''}`);
    before = value < 0;
  };
  add(Math.trunc(iv.months / 12), 'year');
  add(iv.months % 12, 'mon');
  add(iv.days, 'day');
  if (parts.length === 0 || iv.micros !== 0n) {
    const neg = iv.micros < 0n;
    const abs = neg ? -iv.micros : iv.micros;
    const hours = abs / 3_600_000_000n;
    const minutes = (abs / 60_000_000n) % 60n;
    const seconds = (abs / 1_000_000n) % 60n;
    const frac = abs % 1_000_000n;
    const two = (n: bigint): string => n.toString().padStart(2, '0');
    let time = `${neg ? '-' : before ? '+' : ''}${two(hours)}:${two(minutes)}:${two(seconds)}`;
    if (frac !== 0n) time += `.${frac.toString().padStart(6, '0').replace(/0+$/, '')}`;
    parts.push(time);
  }
  return parts.join(' ');
}

/** Narrows a non-null value to an array. */
export function isArrayValue(v: NonNullSqlValue): v is { type: ArrayTypeName; value: SqlValue[] } {
  return isArrayType(v.type);
}

/**
 * PostgreSQL's array_out for one dimension: `{1,2,NULL}`. An element is double-quoted when it is
 * empty, spells NULL, or holds a brace, comma, quote, backslash or white space; inside quotes
 * `"` and `\` are backslash-escaped. Elements print with their type's output function, so
 * booleans are t/f here (unlike boolean::text).
 */
export function arrayText(elements: readonly SqlValue[]): string {
  const parts = elements.map((e) => {
    if (e.value === null) return 'NULL';
    const nn = e as NonNullSqlValue;
    const s = outputText(nn);
    const quote = s === '' || s.toUpperCase() === 'NULL' || /[{}",\\\s]/.test(s);
    return quote ? `"${s.replace(/["\\]/g, (c) => `\\${c}`)}"` : s;
  });
  return `{${parts.join(',')}}`;
}


/** float8 output: shortest round-trip digits, PostgreSQL spellings of the specials. */
export function formatFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (n === Infinity) return 'Infinity';
  if (n === -Infinity) return '-Infinity';
  if (Object.is(n, -0)) return '-0';
  const abs = Math.abs(n);
  if (abs !== 0 && (abs >= 1e15 || abs < 1e-4)) {
    // PostgreSQL switches to exponent form like printf %g with shortest digits: 1e+15, 1e-05.
    const [m, e = '0'] = n.toExponential().split('e');
    const exp = Number(e);
    return `${m}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return String(n);
}

/** jsonb text form: keys sorted by (length, bytes), ", " and ": " separators, as PostgreSQL prints. */
export function jsonbText(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map(jsonbText).join(', ')}]`;
  if (typeof v === 'object') {
    const keys = sortJsonbKeys(Object.keys(v));
    return `{${keys.map((k) => `${JSON.stringify(k)}: ${jsonbText(v[k] as JsonValue)}`).join(', ')}}`;
  }
  return JSON.stringify(v);
}

/** jsonb stores object keys shorter-first, then bytewise. */
export function sortJsonbKeys(keys: string[]): string[] {
  return [...keys].sort((a, b) => {
    const la = Buffer.byteLength(a);
    const lb = Buffer.byteLength(b);
    if (la !== lb) return la - lb;
    return Buffer.compare(Buffer.from(a), Buffer.from(b));
  });
}

/** Normalises a parsed JSON value to jsonb's canonical form (sorted keys, last duplicate wins). */
export function toJsonb(v: unknown): JsonValue {
  if (v === null || typeof v === 'boolean' || typeof v === 'string') return v;
  if (typeof v === 'number') return v;
  if (Array.isArray(v)) return v.map(toJsonb);
  if (typeof v === 'object') {
    const out: Record<string, JsonValue> = {};
    for (const k of sortJsonbKeys(Object.keys(v as object))) out[k] = toJsonb((v as Record<string, unknown>)[k]);
    return out;
  }
  return sqlFail('22P02', 'invalid input syntax for type json');
}

export { Decimal };
