import { bitsFromInt, fitBits, intFromBits, isBitType, parseBits } from './bit-string.js';
import { jsonArrayElements, parseArrayText } from './arrays.js';
import { Decimal } from './decimal.js';
import { enumDisplay, enumValue } from './enum-types.js';
import { checkDate, checkTimestamp, DAYS_PER_MONTH, daysFromCivil, daysInMonth, TIMESTAMP_END } from './functions/calendar.js';
import {
  bpcharTrim,
  elementTypeOf,
  INT_RANGES,
  isArrayType,
  isArrayValue,
  isEnumType,
  NUMERIC_RANK,
  jsonbText,
  makeInt,
  sqlFail,
  toJsonb,
  toText,
  type Interval,
  type NonNullSqlValue,
  type ScalarTypeName,
  type SqlTypeName,
  type SqlValue,
} from './sql-types.js';

/** A resolved cast target: the type plus the modifiers PostgreSQL applies on assignment. */
export interface CastTarget {
  type: SqlTypeName;
  /**
   * varchar(n): explicit casts truncate to n characters. character(n) (bpchar): explicit casts
   * truncate to n, and shorter values are padded with spaces to n.
   */
  maxLength?: number;
  /** numeric(p, s): rounds to s, then checks p. */
  precision?: number;
  scale?: number;
  /** timestamp(p) / timestamptz(p) / time(p) / timetz(p): rounds to p fractional digits of a second (0 to 5; 6 is the default). */
  fractionDigits?: number;
  /** An array type's elements' modifiers (`varchar(3)[]`), applied to each element. */
  element?: CastTarget;
}

const SCALAR_DISPLAY: Record<ScalarTypeName, string> = {
  unknown: 'unknown',
  boolean: 'boolean',
  int2: 'smallint',
  int4: 'integer',
  int8: 'bigint',
  numeric: 'numeric',
  float8: 'double precision',
  text: 'text',
  bpchar: 'character',
  bit: 'bit',
  varbit: 'bit varying',
  date: 'date',
  timestamp: 'timestamp without time zone',
  timestamptz: 'timestamp with time zone',
  time: 'time without time zone',
  timetz: 'time with time zone',
  jsonb: 'jsonb',
  bytea: 'bytea',
  uuid: 'uuid',
  interval: 'interval',
};

/** PostgreSQL's names of the types, as error messages print them (`integer[]` for arrays). */
export const TYPE_DISPLAY = Object.fromEntries([
  ...Object.entries(SCALAR_DISPLAY),
  ...Object.entries(SCALAR_DISPLAY)
    .filter(([t]) => t !== 'unknown')
    .map(([t, display]) => [`${t}[]`, `${display}[]`]),
]) as Record<SqlTypeName, string>;

/** PostgreSQL's name of a type as error messages print it: TYPE_DISPLAY's, an enum's own name (quoted as format_type quotes it). */
export function typeDisplay(t: SqlTypeName): string {
  return TYPE_DISPLAY[t] ?? enumDisplay(t) ?? t;
}

const MICROS_PER_DAY = 86_400_000_000n;

/**
 * Casts a value, as PostgreSQL's explicit CAST / `::` does.
 * @throws SQL_ERROR 22P02 / 22007 / 22008 bad input text, 22003 out of range, 42846 no such cast
 */
export function castValue(v: SqlValue, target: CastTarget): SqlValue {
  if (v.value === null) return { type: target.type, value: null };
  const out = castNonNull(v, target.type, target);
  if (target.element !== undefined && isArrayType(out.type) && out.value !== null) {
    const element = target.element;
    return { type: out.type, value: (out.value as SqlValue[]).map((e) => castValue(e, element)) } as SqlValue;
  }
  return applyModifiers(out, target);
}

function applyModifiers(v: SqlValue, t: CastTarget): SqlValue {
  if (v.value === null) return v;
  if (v.type === 'text' && t.maxLength !== undefined) {
    const chars = [...v.value];
    if (chars.length > t.maxLength) return { type: 'text', value: chars.slice(0, t.maxLength).join('') };
  }
  if (v.type === 'bpchar' && t.maxLength !== undefined) return { type: 'bpchar', value: fitBpchar([...v.value], t.maxLength) };
  if ((v.type === 'bit' || v.type === 'varbit') && t.maxLength !== undefined) return { type: v.type, value: fitBits(v.value, v.type, t.maxLength) };
  if (v.type === 'numeric' && t.scale !== undefined) {
    const r = v.value.round(t.scale);
    if (t.precision !== undefined) {
      const intDigits = r.abs().trunc(0).unscaled.toString().replace(/^0$/, '').length;
      const maxDigits = t.precision - t.scale;
      if (intDigits > maxDigits) sqlFail('22003', 'numeric field overflow', `A field with precision ${t.precision}, scale ${t.scale} must round to an absolute value less than ${maxDigits > 0 ? `10^${maxDigits}` : '1'}.`);
    }
    return { type: 'numeric', value: r };
  }
  if ((v.type === 'timestamp' || v.type === 'timestamptz') && t.fractionDigits !== undefined && t.fractionDigits < MAX_FRACTION_DIGITS) {
    return { type: v.type, value: roundMicros(v.value, t.fractionDigits) };
  }
  if (t.fractionDigits !== undefined && t.fractionDigits < MAX_FRACTION_DIGITS) {
    // AdjustTimeForTypmod: half up (a time is never negative), 23:59:59.5 becoming 24:00:00.
    if (v.type === 'time') return { type: 'time', value: roundMicros(v.value, t.fractionDigits) };
    if (v.type === 'timetz') return { type: 'timetz', value: { time: roundMicros(v.value.time, t.fractionDigits), zone: v.value.zone } };
  }
  return v;
}

/** Code points cut or blank-padded to exactly n, as a character(n) holds them. */
export function fitBpchar(chars: string[], n: number): string {
  if (chars.length > n) return chars.slice(0, n).join('');
  const text = chars.join('');
  return chars.length === n ? text : text + ' '.repeat(n - chars.length);
}

/** Fractional digits of a second a timestamp keeps (microseconds). */
export const MAX_FRACTION_DIGITS = 6;

/** Microseconds rounded to `digits` fractional digits, half away from zero (AdjustTimestampForTypmod). */
function roundMicros(micros: bigint, digits: number): bigint {
  const unit = 10n ** BigInt(MAX_FRACTION_DIGITS - digits);
  const half = unit / 2n;
  return micros >= 0n ? ((micros + half) / unit) * unit : -(((-micros + half) / unit) * unit);
}

/** True when a cast from -> to exists (explicitly). */
export function canCast(from: SqlTypeName, to: SqlTypeName): boolean {
  // The string types convert to and from every type through its text form (I/O conversion).
  if (from === to || from === 'unknown' || from === 'text' || to === 'text' || from === 'bpchar' || to === 'bpchar') return true;
  if (NUMERIC_RANK[from] !== undefined && NUMERIC_RANK[to] !== undefined) return true;
  if ((from === 'int4' && to === 'boolean') || (from === 'boolean' && to === 'int4')) return true;
  const time = ['date', 'timestamp', 'timestamptz'];
  if (time.includes(from) && time.includes(to)) return true;
  if (to === 'time' && (from === 'timestamp' || from === 'timestamptz' || from === 'timetz' || from === 'interval')) return true;
  if (to === 'timetz' && (from === 'timestamptz' || from === 'time')) return true;
  if (from === 'time' && to === 'interval') return true;
  if (isBitType(from) && isBitType(to)) return true;
  // int4 / int8 <-> bit (not bit varying, not smallint).
  if ((from === 'int4' || from === 'int8') && to === 'bit') return true;
  if (from === 'bit' && (to === 'int4' || to === 'int8')) return true;
  if (from === 'jsonb' && ['boolean', 'int2', 'int4', 'int8', 'numeric', 'float8'].includes(to)) return true;
  // Arrays element by element; a JSON array (a parameter sent as one) into any array type.
  if (isArrayType(to) && (from === 'jsonb' || (isArrayType(from) && canCast(elementTypeOf(from), elementTypeOf(to))))) return true;
  return false;
}

function noCast(from: SqlTypeName, to: SqlTypeName): never {
  return sqlFail('42846', `cannot cast type ${typeDisplay(from)} to ${typeDisplay(to)}`);
}

function castNonNull(v: NonNullSqlValue, to: SqlTypeName, target?: CastTarget): SqlValue {
  if (v.type === to) return v;
  if (v.type === 'unknown' || v.type === 'text') return parseText(v.value, to);
  if (isArrayType(to)) {
    // Element by element from another array type; a JSON array (a parameter sent as one) as its elements' text.
    const element = elementTypeOf(to);
    if (isArrayValue(v)) return { type: to, value: v.value.map((e) => castValue(e, { type: element })) } as SqlValue;
    if (v.type === 'jsonb') return { type: to, value: jsonArrayElements(v.value.json, (t) => parseText(t, element), { type: element, value: null } as SqlValue) } as SqlValue;
    return noCast(v.type, to);
  }
  // bpchar -> text drops the padding (rtrim1); to any other type it is read as its text form.
  if (v.type === 'bpchar') return to === 'text' ? { type: 'text', value: bpcharTrim(v.value) } : parseText(v.value, to);
  if (to === 'text' || to === 'bpchar') return { type: to, value: toText(v) };
  if (to === 'unknown') return noCast(v.type, to);
  switch (v.type) {
    case 'int2':
    case 'int4':
    case 'int8':
      if (to === 'int2' || to === 'int4' || to === 'int8') return makeInt(to, BigInt(v.value));
      // The length is the target's: applied by castValue (bit alone is bit(1)).
      if (to === 'bit' && v.type !== 'int2') return { type: 'bit', value: bitsFromInt(BigInt(v.value), v.type === 'int4' ? 32 : 64, target?.maxLength ?? 1) };
      if (to === 'numeric') return { type: 'numeric', value: Decimal.fromBigInt(BigInt(v.value)) };
      if (to === 'float8') return { type: 'float8', value: Number(v.value) };
      if (to === 'boolean' && v.type === 'int4') return { type: 'boolean', value: v.value !== 0 };
      return noCast(v.type, to);
    case 'numeric':
      if (to === 'int2' || to === 'int4' || to === 'int8') return makeInt(to, v.value.round(0).unscaled);
      // PostgreSQL converts through the numeric's text, with float8in's range checks.
      if (to === 'float8') return { type: 'float8', value: float8FromText(v.value.toString(), v.value.toString()) };
      return noCast(v.type, to);
    case 'float8':
      if (to === 'int2' || to === 'int4' || to === 'int8') {
        if (!Number.isFinite(v.value)) sqlFail('22003', `${to === 'int2' ? 'smallint' : to === 'int4' ? 'integer' : 'bigint'} out of range`);
        return makeInt(to, BigInt(roundHalfEven(v.value)));
      }
      if (to === 'numeric') return { type: 'numeric', value: Decimal.fromNumber(v.value) };
      return noCast(v.type, to);
    case 'boolean':
      if (to === 'int4') return { type: 'int4', value: v.value ? 1 : 0 };
      return noCast(v.type, to);
    case 'date':
      if (to === 'timestamp' || to === 'timestamptz') {
        // Every timestamp is a valid date, but the date range reaches further.
        const micros = BigInt(v.value) * MICROS_PER_DAY;
        if (micros >= TIMESTAMP_END) sqlFail('22008', 'date out of range for timestamp');
        return { type: to, value: micros };
      }
      return noCast(v.type, to);
    case 'timestamp':
    case 'timestamptz':
      if (to === 'timestamp' || to === 'timestamptz') return { type: to, value: v.value };
      if (to === 'date') return { type: 'date', value: Number(floorDiv(v.value, MICROS_PER_DAY)) };
      // The time of day (in UTC, the session's zone, for a timestamptz).
      if (to === 'time') return { type: 'time', value: v.value - floorDiv(v.value, MICROS_PER_DAY) * MICROS_PER_DAY };
      if (to === 'timetz' && v.type === 'timestamptz') return { type: 'timetz', value: { time: v.value - floorDiv(v.value, MICROS_PER_DAY) * MICROS_PER_DAY, zone: 0 } };
      return noCast(v.type, to);
    case 'time':
      if (to === 'interval') return { type: 'interval', value: { months: 0, days: 0, micros: v.value } };
      // In the session's zone, UTC.
      if (to === 'timetz') return { type: 'timetz', value: { time: v.value, zone: 0 } };
      return noCast(v.type, to);
    case 'timetz':
      if (to === 'time') return { type: 'time', value: v.value.time };
      return noCast(v.type, to);
    case 'jsonb':
      return castJsonb(v.value.json, to);
    case 'bit':
    case 'varbit':
      if (isBitType(to)) return { type: to, value: v.value };
      if (v.type === 'bit' && (to === 'int4' || to === 'int8')) return intFromBits(v.value, to);
      return noCast(v.type, to);
    case 'interval':
      // interval_time: the time part modulo a day, months and days dropped.
      if (to === 'time') {
        let t = v.value.micros % MICROS_PER_DAY;
        if (t < 0n) t += MICROS_PER_DAY;
        return { type: 'time', value: t };
      }
      return noCast(v.type, to);
    case 'bytea':
    case 'uuid':
      return noCast(v.type, to);
    default:
      // unknown/text were parsed above; TypeScript does not narrow a union-typed discriminant here.
      return noCast(v.type, to);
  }
}

function castJsonb(j: unknown, to: SqlTypeName): SqlValue {
  const kind = j === null ? 'null' : Array.isArray(j) ? 'array' : typeof j === 'object' ? 'object' : typeof j;
  const display = typeDisplay(to);
  if (to === 'boolean') {
    if (typeof j === 'boolean') return { type: 'boolean', value: j };
    return sqlFail('22023', `cannot cast jsonb ${kind} to type ${display}`);
  }
  if (typeof j !== 'number') return sqlFail('22023', `cannot cast jsonb ${kind} to type ${display}`);
  return castNonNull({ type: 'numeric', value: Decimal.fromNumber(j) }, to);
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** rint(): float -> integer casts round half to even in PostgreSQL. */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

const BOOL_WORDS: [string, boolean][] = [
  ['true', true],
  ['false', false],
  ['yes', true],
  ['no', false],
  ['on', true],
  ['off', false],
  ['1', true],
  ['0', false],
];

/**
 * A uuid's canonical text (8-4-4-4-12 lower-case hex digits) from the forms PostgreSQL's uuid_in
 * reads: 32 hex digits in either case, a hyphen allowed after any group of four but the last,
 * the whole optionally in braces.
 * @throws SQL_ERROR 22P02 anything else
 */
export function parseUuid(raw: string): string {
  const bad = (): never => sqlFail('22P02', `invalid input syntax for type uuid: "${raw}"`);
  let i = 0;
  let end = raw.length;
  if (raw[0] === '{') {
    if (raw[end - 1] !== '}') bad();
    i = 1;
    end--;
  }
  let hex = '';
  for (; i < end; i++) {
    const c = raw.charCodeAt(i);
    const isHex = (c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70);
    if (isHex) hex += raw[i]!;
    else if (c === 45 && hex.length % 4 === 0 && hex.length > 0 && hex.length < 32 && raw.charCodeAt(i - 1) !== 45) continue;
    else bad();
  }
  if (hex.length !== 32 || raw.charCodeAt(end - 1) === 45) bad();
  const h = hex.toLowerCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Parses a text value into a type, as PostgreSQL's input functions. */
export function parseText(raw: string, to: SqlTypeName): SqlValue {
  const s = raw.trim();
  switch (to) {
    case 'unknown':
    case 'text':
    case 'bpchar':
      return { type: to, value: raw };
    case 'bit':
    case 'varbit':
      return { type: to, value: parseBits(raw) };
    case 'boolean': {
      const l = s.toLowerCase();
      // Unique prefixes are accepted ('t', 'fa', 'y'); 'o' alone is ambiguous.
      const hit = l.length === 0 ? undefined : BOOL_WORDS.filter(([w]) => w.startsWith(l) && (l.length > 1 || !['o'].includes(l)));
      if (hit && hit.length > 0 && hit.every(([, b]) => b === hit[0]![1])) return { type: 'boolean', value: hit[0]![1] };
      return sqlFail('22P02', `invalid input syntax for type boolean: "${raw}"`);
    }
    case 'int2':
    case 'int4':
    case 'int8': {
      if (!/^[+-]?\d+$/.test(s)) sqlFail('22P02', `invalid input syntax for type ${typeDisplay(to)}: "${raw}"`);
      const b = BigInt(s);
      const [lo, hi] = INT_RANGES[to];
      if (b < lo || b > hi) sqlFail('22003', `value "${raw}" is out of range for type ${typeDisplay(to)}`);
      return makeInt(to, b);
    }
    case 'numeric': {
      const d = Decimal.parse(s);
      if (d === null) return sqlFail('22P02', `invalid input syntax for type numeric: "${raw}"`);
      return { type: 'numeric', value: d };
    }
    case 'float8': {
      const l = s.toLowerCase();
      const special: Record<string, number> = { nan: NaN, infinity: Infinity, '+infinity': Infinity, '-infinity': -Infinity, inf: Infinity, '+inf': Infinity, '-inf': -Infinity };
      if (l in special) return { type: 'float8', value: special[l]! };
      if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) sqlFail('22P02', `invalid input syntax for type double precision: "${raw}"`);
      return { type: 'float8', value: float8FromText(s, raw) };
    }
    case 'date': {
      const dt = parseDateTime(raw, to);
      return { type: 'date', value: checkDate(dt.days, raw) };
    }
    case 'timestamp':
    case 'timestamptz': {
      const dt = parseDateTime(raw, to);
      let micros = BigInt(dt.days) * MICROS_PER_DAY + dt.micros;
      // A zone is read but ignored for timestamp without time zone, as PostgreSQL does.
      if (to === 'timestamptz') micros -= dt.zoneMicros;
      return { type: to, value: checkTimestamp(micros, raw) };
    }
    case 'jsonb': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(raw);
      } catch {
        return sqlFail('22P02', 'invalid input syntax for type json');
      }
      return { type: 'jsonb', value: { json: toJsonb(parsed) } };
    }
    case 'bytea': {
      if (raw.startsWith('\\x')) {
        const hex = raw.slice(2);
        if (!/^([0-9a-fA-F]{2})*$/.test(hex)) sqlFail('22023', 'invalid hexadecimal digit');
        return { type: 'bytea', value: Buffer.from(hex, 'hex') };
      }
      if (raw.includes('\\')) sqlFail('0A000', 'unsupported: bytea escape format input');
      return { type: 'bytea', value: Buffer.from(raw, 'utf8') };
    }
    case 'time': {
      const t = parseTimeOfDay(raw, to);
      return { type: 'time', value: t.micros };
    }
    case 'timetz': {
      const t = parseTimeOfDay(raw, to);
      return { type: 'timetz', value: { time: t.micros, zone: t.zoneWest } };
    }
    case 'interval':
      return { type: 'interval', value: parseInterval(raw) };
    case 'uuid':
      return { type: 'uuid', value: parseUuid(raw) };
    default: {
      if (isArrayType(to)) {
        const element = elementTypeOf(to);
        return { type: to, value: parseArrayText(raw, (t) => parseText(t, element), { type: element, value: null } as SqlValue) } as SqlValue;
      }
      // enum_in: the label exactly as written (no trimming).
      if (isEnumType(to)) return { type: to, value: enumValue(to, raw) };
      const never: never = to;
      return never;
    }
  }
}

/**
 * The date/time input forms read: `YYYY-MM-DD` (four or more year digits) or `YYYYMMDD` /
 * `YYMMDD` (six or more digits: day and month are the last four, two-digit years are
 * 1970-2069), an optional era `BC` / `AD` after the date or at the end, an optional time
 * `hh:mm[:ss[.fraction]]` after a space or `T`, an optional zone `Z` / `+hh[[:]mm]`.
 */
const DATETIME_INPUT =
  /^(?:(\d{4,})-(\d{1,2})-(\d{1,2})|(\d{6,}))(?:\s*(bc|ad)\b)?(?:(?:\s+|t)(\d{1,2}):(\d{1,2})(?::(\d{1,2})(\.\d+)?)?)?\s*(z|[+-]\d{2}(?::?\d{2})?)?(?:\s*(bc|ad))?$/i;

/** Special input words PostgreSQL accepts that have no value here (no infinite dates, no clock). */
const UNSUPPORTED_DATETIME_WORDS = new Set(['infinity', '+infinity', '-infinity', 'now', 'today', 'tomorrow', 'yesterday']);

/**
 * Reads date/time input text (PostgreSQL's DecodeDateTime for the forms above, plus `epoch`)
 * into days since 1970-01-01, the time of day and the zone's offset east of UTC. Fractions of a
 * second round to microseconds with rint(), as PostgreSQL. The value is not range-checked.
 * @throws SQL_ERROR 22007 unreadable, 22008 a field out of range, 0A000 infinity / now / today
 */
function parseDateTime(raw: string, to: 'date' | 'timestamp' | 'timestamptz'): { days: number; micros: bigint; zoneMicros: bigint } {
  const s = raw.trim();
  const word = s.toLowerCase();
  if (word === 'epoch') return { days: 0, micros: 0n, zoneMicros: 0n };
  if (UNSUPPORTED_DATETIME_WORDS.has(word)) sqlFail('0A000', `unsupported: "${word}" as a ${typeDisplay(to)}`);
  const m = DATETIME_INPUT.exec(s);
  if (m === null || (m[5] !== undefined && m[11] !== undefined)) return sqlFail('22007', `invalid input syntax for type ${typeDisplay(to)}: "${raw}"`);
  const fieldOverflow = (): never => sqlFail('22008', `date/time field value out of range: "${raw}"`);
  let year: number;
  let month: number;
  let day: number;
  let twoDigitYear = false;
  if (m[1] !== undefined) {
    [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  } else {
    const digits = m[4]!;
    year = Number(digits.slice(0, -4));
    month = Number(digits.slice(-4, -2));
    day = Number(digits.slice(-2));
    twoDigitYear = digits.length === 6;
  }
  if ((m[5] ?? m[11])?.toLowerCase() === 'bc') {
    if (year < 1) fieldOverflow();
    // 1 BC is the proleptic year 0, 2 BC is -1.
    year = 1 - year;
  } else if (twoDigitYear) {
    year += year < 70 ? 2000 : 1900;
  } else if (year < 1) {
    fieldOverflow();
  }
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) fieldOverflow();
  const hour = Number(m[6] ?? 0);
  const minute = Number(m[7] ?? 0);
  const second = Number(m[8] ?? 0);
  const fraction = m[9] === undefined ? 0 : roundHalfEven(Number(m[9]) * 1e6);
  const micros = ((hour * 60 + minute) * 60 + second) * 1e6 + fraction;
  // PostgreSQL's time_overflows: 24:00:00 and a leap second :60 are allowed, nothing past 24:00.
  if (hour > 24 || minute > 59 || second > 60 || fraction > 1e6 || micros > 86_400e6) fieldOverflow();
  let zoneMicros = 0n;
  const zone = m[10];
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const sign = zone.startsWith('-') ? -1n : 1n;
    const digits = zone.slice(1).replace(':', '');
    zoneMicros = sign * BigInt(Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || 0)) * 60_000_000n;
  }
  // A date keeps only the date part: '2024-01-01 24:00' is still 2024-01-01.
  return { days: daysFromCivil(year, month, day), micros: to === 'date' ? 0n : BigInt(micros), zoneMicros };
}

/**
 * The time input forms read: an optional date (`YYYY-MM-DD`, ignored) or `T`, `hh:mm[:ss[.fraction]]`
 * or `mm:ss.fraction`,
 * an optional `AM` / `PM`, and an optional zone `Z`, `UTC`, `GMT` or `+h[h][[:]mm[[:]ss]]` (read and
 * ignored by time); or `allballs` (midnight).
 */
const TIME_INPUT = /^(?:\d{4,}-\d{1,2}-\d{1,2}\s+|t)?(\d{1,2}):(\d{1,2})(?::(\d{1,2}))?(\.\d*)?\s*(am|pm|a\.m\.|p\.m\.)?\s*(z|utc|gmt|[+-]\d{1,2}(?::?\d{2}(?::?\d{2})?)?)?$/i;

/** PostgreSQL's limit of a zone displacement in input (MAX_TZDISP_HOUR): 15:59:59 either way. */
const MAX_ZONE_HOURS = 15;

/**
 * Reads time input text (PostgreSQL's DecodeTimeOnly for the forms above) into microseconds since
 * midnight and the zone's offset, seconds west of UTC (0 when none is written). Fractions round
 * to microseconds with rint(); 24:00:00 and a leap second (:60, carried into the next minute)
 * are allowed, as PostgreSQL.
 * @throws SQL_ERROR 22007 unreadable, 22008 a field out of range, 22009 a zone past 15:59:59, 0A000 now / special words
 */
function parseTimeOfDay(raw: string, to: 'time' | 'timetz'): { micros: bigint; zoneWest: number } {
  const s = raw.trim();
  const word = s.toLowerCase();
  if (word === 'allballs') return { micros: 0n, zoneWest: 0 };
  if (UNSUPPORTED_DATETIME_WORDS.has(word)) sqlFail('0A000', `unsupported: "${word}" as a ${TYPE_DISPLAY[to]}`);
  const m = TIME_INPUT.exec(s);
  // time_in names its type `time`, timetz_in `time with time zone`.
  if (m === null) return sqlFail('22007', `invalid input syntax for type ${to === 'time' ? 'time' : TYPE_DISPLAY[to]}: "${raw}"`);
  const fieldOverflow = (): never => sqlFail('22008', `date/time field value out of range: "${raw}"`);
  // `mm:ss.fraction`: a fraction after two fields makes them minutes and seconds (DecodeTime).
  const minutesFirst = m[3] === undefined && m[4] !== undefined;
  let hour = minutesFirst ? 0 : Number(m[1]);
  const minute = Number(minutesFirst ? m[1] : m[2]);
  const second = Number(minutesFirst ? m[2] : (m[3] ?? 0));
  const fraction = m[4] === undefined || m[4] === '.' ? 0 : roundHalfEven(Number(m[4]) * 1e6);
  const meridiem = m[5]?.toLowerCase().replace(/\./g, '');
  if (meridiem !== undefined) {
    if (hour > 12) fieldOverflow();
    hour = (hour % 12) + (meridiem === 'pm' ? 12 : 0);
  }
  if (hour > 24 || minute > 59 || second > 60 || fraction > 1e6 || (hour === 24 && (minute > 0 || second > 0 || fraction > 0))) fieldOverflow();
  const micros = BigInt(((hour * 60 + minute) * 60 + second) * 1e6 + fraction);
  // A leap second can carry 23:59:60 to 24:00:00, never further (PostgreSQL's time_overflows).
  if (micros > MICROS_PER_DAY) fieldOverflow();
  let zoneWest = 0;
  const zone = m[6]?.toLowerCase();
  if (zone !== undefined && (zone[0] === '+' || zone[0] === '-')) {
    const digits = zone.slice(1).replace(/:/g, '');
    // `+h` and `+hh` are hours; then minutes and seconds two digits each.
    const [h, mi, se] = digits.length <= 2 ? [Number(digits), 0, 0] : [Number(digits.slice(0, digits.length % 2 === 1 ? 1 : 2)), Number(digits.slice(digits.length % 2 === 1 ? 1 : 2, digits.length % 2 === 1 ? 3 : 4)), Number(digits.slice(digits.length % 2 === 1 ? 3 : 4) || 0)];
    if (h > MAX_ZONE_HOURS || mi > 59 || se > 59) sqlFail('22009', `time zone displacement out of range: "${raw}"`);
    zoneWest = (zone.startsWith('-') ? 1 : -1) * (h * 3600 + mi * 60 + se);
  }
  return { micros, zoneWest: zoneWest + 0 };
}

export { jsonbText };

/** Interval units: months, days and microseconds per unit, as PostgreSQL's DecodeInterval. */
const INTERVAL_UNITS: Record<string, { months: number; days: number; micros: number }> = {};
for (const [names, unit] of [
  [['microsecond', 'microseconds', 'us', 'usec', 'usecs', 'useconds'], { months: 0, days: 0, micros: 1 }],
  [['millisecond', 'milliseconds', 'ms', 'msec', 'msecs', 'mseconds'], { months: 0, days: 0, micros: 1_000 }],
  [['second', 'seconds', 's', 'sec', 'secs'], { months: 0, days: 0, micros: 1_000_000 }],
  [['minute', 'minutes', 'm', 'min', 'mins'], { months: 0, days: 0, micros: 60_000_000 }],
  [['hour', 'hours', 'h', 'hr', 'hrs'], { months: 0, days: 0, micros: 3_600_000_000 }],
  [['day', 'days', 'd'], { months: 0, days: 1, micros: 0 }],
  [['week', 'weeks', 'w'], { months: 0, days: 7, micros: 0 }],
  [['month', 'months', 'mon', 'mons'], { months: 1, days: 0, micros: 0 }],
  [['year', 'years', 'y', 'yr', 'yrs'], { months: 12, days: 0, micros: 0 }],
  [['decade', 'decades', 'dec', 'decs'], { months: 120, days: 0, micros: 0 }],
  [['century', 'centuries', 'c', 'cent'], { months: 1200, days: 0, micros: 0 }],
  [['millennium', 'millennia', 'mil', 'mils'], { months: 12000, days: 0, micros: 0 }],
] as const) {
  for (const n of names) INTERVAL_UNITS[n] = unit;
}

/**
 * Parses PostgreSQL's interval input: `1 day 2 hours`, `1 year 2 mons`, `-1 days +02:00:00`,
 * `01:30`, `1.5 hours`, `@ 3 days ago`; a bare number is seconds unless `unit` says otherwise
 * (`interval '1' day`). Fractions cascade down: 1.5 months is 1 mon 15 days, as PostgreSQL.
 * @throws SQL_ERROR 22007 invalid input syntax
 */
export function parseInterval(raw: string, unit?: string): Interval {
  const bad = (): never => sqlFail('22007', `invalid input syntax for type interval: "${raw}"`);
  let s = raw.trim().toLowerCase();
  if (s.startsWith('@')) s = s.slice(1).trim();
  let ago = false;
  if (/\bago$/.test(s)) {
    ago = true;
    s = s.slice(0, -3).trim();
  }
  if (s === '') bad();
  let months = 0;
  let days = 0;
  let micros = 0n;
  const token = /\s*(?:([+-]?)(\d+):(\d+)(?::(\d+(?:\.\d*)?))?|([+-]?(?:\d+\.?\d*|\.\d+))\s*([a-z]+)?)\s*/y;
  let pos = 0;
  while (pos < s.length) {
    token.lastIndex = pos;
    const m = token.exec(s);
    if (m === null || token.lastIndex === pos) return bad();
    pos = token.lastIndex;
    if (m[2] !== undefined) {
      // hh:mm[:ss[.frac]]
      const sign = m[1] === '-' ? -1n : 1n;
      if (Number(m[3]) > 59 || Number(m[4] ?? '0') >= 60) sqlFail('22015', `interval field value out of range: "${raw}"`);
      const secMicros = BigInt(Math.round(Number(m[4] ?? '0') * 1e6));
      micros += sign * (BigInt(m[2]) * 3_600_000_000n + BigInt(m[3]!) * 60_000_000n + secMicros);
      continue;
    }
    const name = m[6] ?? unit ?? 'second';
    const u = INTERVAL_UNITS[name];
    if (u === undefined) return bad();
    const n = Number(m[5]);
    const whole = Math.trunc(n);
    const frac = n - whole;
    if (u.months >= 12) {
      // Fractions of years and longer round to whole months.
      months += whole * u.months + Math.round(frac * u.months);
    } else if (u.months === 1) {
      months += whole;
      const fd = frac * DAYS_PER_MONTH;
      days += Math.trunc(fd);
      micros += BigInt(Math.round((fd - Math.trunc(fd)) * 86_400e6));
    } else if (u.days > 0) {
      const d = n * u.days;
      days += Math.trunc(d);
      micros += BigInt(Math.round((d - Math.trunc(d)) * 86_400e6));
    } else {
      micros += BigInt(whole) * BigInt(u.micros) + BigInt(Math.round(frac * u.micros));
    }
  }
  if (!Number.isFinite(months) || Math.abs(months) > 2147483647 || Math.abs(days) > 2147483647) {
    sqlFail('22008', `interval field value out of range: "${raw}"`);
  }
  // -0 would print as "-0"; normalise.
  const iv = { months: months + 0, days: days + 0, micros };
  return ago ? { months: -iv.months + 0, days: -iv.days + 0, micros: -iv.micros } : iv;
}

/**
 * A decimal text as double precision, refused as float8in does (strtod's ERANGE): past the range,
 * or so small that it underflows to zero (a denormal such as 1e-320 is kept).
 * @throws SQL_ERROR 22003
 */
function float8FromText(s: string, raw: string): number {
  const n = Number(s);
  const mantissa = s.split(/[eE]/)[0]!;
  if (!Number.isFinite(n) || (n === 0 && /[1-9]/.test(mantissa))) sqlFail('22003', `"${raw}" is out of range for type double precision`);
  return n;
}
