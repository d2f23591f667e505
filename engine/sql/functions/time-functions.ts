import type { CompiledExpr } from '../compiled-expr.js';
import { castValue, MAX_FRACTION_DIGITS, roundHalfEven, typeDisplay, type CastTarget } from '../sql-cast.js';
import { localOf, offsetEast, utcOf, zoneNamed, zoneOfInterval } from '../time-zones.js';
import { canCoerce, coerce } from '../type-resolution.js';
import { Decimal, sqlFail, type Interval, type NonNullSqlValue, type SqlTypeName, type SqlValue, type TimeTz, NO_FUNCTION_HINT } from '../sql-types.js';
import {
  checkDate,
  checkTimestamp,
  civilFromDays,
  dayOfWeek,
  daysFromCivil,
  daysInMonth,
  floorDiv,
  isoWeek,
  MICROS_PER_DAY,
  MICROS_PER_HOUR,
  MICROS_PER_MINUTE,
  MICROS_PER_SECOND,
  timestampFields,
  timestampFromFields,
  type TimestampFields,
} from './calendar.js';
import { noFunction, strict, type FunctionDef } from './function-def.js';
import { formatNumberPattern } from './number-format.js';

/**
 * A function of the statement time only (stable within a statement, as PostgreSQL), in the
 * session's zone (UTC). The times take a precision as PostgreSQL's grammar does
 * (`current_time(2)`, `localtimestamp(0)`: an integer literal, rounded to, 6 past 6).
 */
const statementClock = (type: 'timestamptz' | 'timestamp' | 'date' | 'time' | 'timetz'): FunctionDef => ({
  compile(name, args): CompiledExpr {
    const precision = type === 'date' || args.length !== 1 ? undefined : args[0]!;
    if (args.length > (precision === undefined ? 0 : 1)) return noFunction(name, args);
    let target: CastTarget = { type };
    if (precision !== undefined) {
      const p = precision.type === 'int4' && precision.param === undefined ? precision.evaluate({ statementTime: 0n }).value : null;
      if (typeof p !== 'number' || p < 0) return noFunction(name, args);
      target = { type, fractionDigits: Math.min(p, MAX_FRACTION_DIGITS) };
    }
    return {
      type,
      evaluate(ctx) {
        const now = ctx.statementTime;
        if (type === 'date') return { type, value: Number(floorDiv(now, MICROS_PER_DAY)) };
        const time = now - floorDiv(now, MICROS_PER_DAY) * MICROS_PER_DAY;
        const v: SqlValue = type === 'time' ? { type, value: time } : type === 'timetz' ? { type, value: { time, zone: 0 } } : { type, value: now };
        return target.fractionDigits === undefined ? v : castValue(v, target);
      },
    };
  },
});

const str = (v: NonNullSqlValue): string => v.value as string;
const int = (v: NonNullSqlValue): number => v.value as number;
const micros = (v: NonNullSqlValue): bigint => v.value as bigint;
const iv = (v: NonNullSqlValue): Interval => v.value as Interval;
const num = (unscaled: bigint, scale = 0): SqlValue => ({ type: 'numeric', value: new Decimal(unscaled, scale) });

/** PostgreSQL's year numbering: there is no year 0, so the proleptic year 0 is 1 BC (-1). */
const pgYear = (y: number): number => (y > 0 ? y : y - 1);

/** The year as to_char prints it (ADJUST_YEAR): BC years count up from 1 BC, the era apart. */
const eraYear = (y: number): number => (y > 0 ? y : 1 - y);

/** Julian day number of a date (PostgreSQL's date2j). */
const julianDay = (days: number): bigint => BigInt(days + 2440588);

function unitNotRecognized(unit: string, type: SqlTypeName): never {
  return sqlFail('22023', `unit "${unit}" not recognized for type ${typeDisplay(type)}`);
}
function unitNotSupported(unit: string, type: SqlTypeName): never {
  return sqlFail('0A000', `unit "${unit}" not supported for type ${typeDisplay(type)}`);
}

/** Field names PostgreSQL accepts, mapped to the canonical one (plural and short spellings). */
const FIELD_ALIASES: Record<string, string> = {
  microsecond: 'microseconds', microseconds: 'microseconds', us: 'microseconds', usec: 'microseconds', usecs: 'microseconds', useconds: 'microseconds',
  millisecond: 'milliseconds', milliseconds: 'milliseconds', ms: 'milliseconds', msec: 'milliseconds', msecs: 'milliseconds', mseconds: 'milliseconds',
  second: 'second', seconds: 'second', s: 'second', sec: 'second', secs: 'second',
  minute: 'minute', minutes: 'minute', m: 'minute', min: 'minute', mins: 'minute',
  hour: 'hour', hours: 'hour', h: 'hour', hr: 'hour', hrs: 'hour',
  day: 'day', days: 'day', d: 'day',
  week: 'week', weeks: 'week', w: 'week',
  month: 'month', months: 'month', mon: 'month', mons: 'month',
  quarter: 'quarter', qtr: 'quarter',
  year: 'year', years: 'year', y: 'year', yr: 'year', yrs: 'year',
  decade: 'decade', decades: 'decade', dec: 'decade', decs: 'decade',
  century: 'century', centuries: 'century', c: 'century', cent: 'century',
  millennium: 'millennium', millennia: 'millennium', mil: 'millennium', mils: 'millennium',
  dow: 'dow', isodow: 'isodow', doy: 'doy', isoyear: 'isoyear', epoch: 'epoch', julian: 'julian', j: 'julian',
  timezone: 'timezone', timezone_hour: 'timezone_hour', timezone_minute: 'timezone_minute',
};

const canonicalField = (raw: string): string | undefined => FIELD_ALIASES[raw.trim().toLowerCase()];

/** Date fields shared by date and timestamp EXTRACT (all integers). */
function dateField(field: string, f: { year: number; month: number; day: number }, days: number): bigint | undefined {
  const year = pgYear(f.year);
  // Decades, centuries and millennia are counted from the proleptic year (1 BC is 0), as
  // PostgreSQL's timestamp_part does with its tm_year; C's division truncates, as Math.trunc.
  const y = f.year;
  switch (field) {
    case 'day':
      return BigInt(f.day);
    case 'month':
      return BigInt(f.month);
    case 'quarter':
      return BigInt(Math.floor((f.month - 1) / 3) + 1);
    case 'year':
      return BigInt(year);
    case 'decade':
      return BigInt(y >= 0 ? Math.trunc(y / 10) : -Math.trunc((8 - (y - 1)) / 10));
    case 'century':
      return BigInt(y > 0 ? Math.trunc((y + 99) / 100) : -Math.trunc((99 - (y - 1)) / 100));
    case 'millennium':
      return BigInt(y > 0 ? Math.trunc((y + 999) / 1000) : -Math.trunc((999 - (y - 1)) / 1000));
    case 'week':
      return BigInt(isoWeek(days).week);
    case 'isoyear': {
      const y = isoWeek(days).isoYear;
      return BigInt(y > 0 ? y : y - 1);
    }
    case 'dow':
      return BigInt(dayOfWeek(days));
    case 'isodow':
      return BigInt(dayOfWeek(days) === 0 ? 7 : dayOfWeek(days));
    case 'doy':
      return BigInt(days - daysFromCivil(f.year, 1, 1) + 1);
    default:
      return undefined;
  }
}

/** EXTRACT's fields of the seconds past the minute (`secMicros`, in microseconds): microseconds, milliseconds (scale 3), second (scale 6); undefined for any other field. */
function secondsField(field: string, secMicros: bigint): SqlValue | undefined {
  if (field === 'microseconds') return num(secMicros);
  if (field === 'milliseconds') return num(secMicros, 3);
  if (field === 'second') return num(secMicros, 6);
  return undefined;
}

/**
 * EXTRACT(field FROM source) as PostgreSQL 14+: numeric, scale 0 except seconds (6),
 * milliseconds (3), epoch (6 for timestamps and intervals, 0 for dates).
 * @throws SQL_ERROR 22023 unknown unit, 0A000 unit not supported for the type
 */
export function extractField(rawField: string, v: NonNullSqlValue): SqlValue {
  const field = canonicalField(rawField);
  const type = v.type;
  if (field === undefined) return unitNotRecognized(rawField, type);
  switch (v.type) {
    case 'date': {
      if (field === 'epoch') return num(BigInt(v.value) * 86400n);
      if (field === 'julian') return num(julianDay(v.value));
      const r = dateField(field, civilFromDays(v.value), v.value);
      if (r !== undefined) return num(r);
      if (['microseconds', 'milliseconds', 'second', 'minute', 'hour', 'timezone', 'timezone_hour', 'timezone_minute'].includes(field)) {
        return unitNotSupported(rawField, type);
      }
      return unitNotRecognized(rawField, type);
    }
    case 'timestamp':
    case 'timestamptz': {
      const f = timestampFields(v.value);
      const secMicros = BigInt(f.second) * MICROS_PER_SECOND + BigInt(f.micro);
      const seconds = secondsField(field, secMicros);
      if (seconds !== undefined) return seconds;
      switch (field) {
        case 'minute':
          return num(BigInt(f.minute));
        case 'hour':
          return num(BigInt(f.hour));
        case 'epoch':
          return num(v.value, 6);
        case 'julian': {
          const dayMicros = v.value - BigInt(f.days) * MICROS_PER_DAY;
          return { type: 'numeric', value: Decimal.fromBigInt(julianDay(f.days)).add(Decimal.fromBigInt(dayMicros).div(Decimal.fromBigInt(MICROS_PER_DAY))) };
        }
        case 'timezone':
        case 'timezone_hour':
        case 'timezone_minute':
          // The session time zone is always UTC here.
          return v.type === 'timestamptz' ? num(0n) : unitNotSupported(rawField, type);
        default: {
          const r = dateField(field, f, f.days);
          return r === undefined ? unitNotSupported(rawField, type) : num(r);
        }
      }
    }
    case 'time':
    case 'timetz': {
      // The time of day's fields; a timetz's zone too, its epoch in UTC.
      const time = v.type === 'time' ? (v.value as bigint) : (v.value as TimeTz).time;
      const zoneWest = v.type === 'timetz' ? (v.value as TimeTz).zone : 0;
      const secMicros = time % (60n * MICROS_PER_SECOND);
      const seconds = secondsField(field, secMicros);
      if (seconds !== undefined) return seconds;
      switch (field) {
        case 'minute':
          return num((time / MICROS_PER_MINUTE) % 60n);
        case 'hour':
          return num(time / MICROS_PER_HOUR);
        case 'epoch':
          return num(time + BigInt(zoneWest) * MICROS_PER_SECOND, 6);
        case 'timezone':
          if (v.type === 'timetz') return num(BigInt(-zoneWest + 0));
          return unitNotSupported(rawField, type);
        case 'timezone_hour':
          if (v.type === 'timetz') return num(BigInt(Math.trunc(-zoneWest / 3600)));
          return unitNotSupported(rawField, type);
        case 'timezone_minute':
          if (v.type === 'timetz') return num(BigInt(Math.trunc(-zoneWest / 60) % 60));
          return unitNotSupported(rawField, type);
        default:
          return unitNotSupported(rawField, type);
      }
    }
    case 'interval': {
      const t = intervalFields(v.value);
      const secMicros = BigInt(t.second) * MICROS_PER_SECOND + BigInt(t.micro);
      const seconds = secondsField(field, secMicros);
      if (seconds !== undefined) return seconds;
      switch (field) {
        case 'minute':
          return num(BigInt(t.minute));
        case 'hour':
          return num(t.hour);
        case 'day':
          return num(BigInt(t.day));
        case 'month':
          return num(BigInt(t.month));
        case 'quarter':
          return num(BigInt(Math.trunc(t.month / 3) + 1));
        case 'year':
          return num(BigInt(t.year));
        case 'decade':
          return num(BigInt(Math.trunc(t.year / 10)));
        case 'century':
          return num(BigInt(Math.trunc(t.year / 100)));
        case 'millennium':
          return num(BigInt(Math.trunc(t.year / 1000)));
        case 'epoch': {
          // 365.25-day years and 30-day months, as PostgreSQL (computed in quarter days).
          const m = v.value.months;
          const quarterDays = 1461n * BigInt(Math.trunc(m / 12)) + 120n * BigInt(m % 12) + 4n * BigInt(v.value.days);
          return num(quarterDays * 21600n * MICROS_PER_SECOND + v.value.micros, 6);
        }
        default:
          return unitNotSupported(rawField, type);
      }
    }
    default:
      return sqlFail('42883', `function extract(unknown, ${typeDisplay(type)}) does not exist`, undefined, NO_FUNCTION_HINT);
  }
}

/** An interval's fields as PostgreSQL's interval2itm (each truncated toward zero). */
function intervalFields(i: Interval): { year: number; month: number; day: number; hour: bigint; minute: number; second: number; micro: number } {
  const t = i.micros;
  return {
    year: Math.trunc(i.months / 12),
    month: i.months % 12,
    day: i.days,
    hour: t / MICROS_PER_HOUR,
    minute: Number((t / MICROS_PER_MINUTE) % 60n),
    second: Number((t / MICROS_PER_SECOND) % 60n),
    micro: Number(t % MICROS_PER_SECOND),
  };
}

/** The source types EXTRACT accepts. */
export const EXTRACT_SOURCES: readonly SqlTypeName[] = ['date', 'timestamp', 'timestamptz', 'time', 'timetz', 'interval'];

const datePart = strict(
  { args: ['text', 'timestamptz'], returns: 'float8', impl: ([f, t]) => asFloat(extractField(str(f!), t!)) },
  { args: ['text', 'timestamp'], returns: 'float8', impl: ([f, t]) => asFloat(extractField(str(f!), t!)) },
  { args: ['text', 'interval'], returns: 'float8', impl: ([f, t]) => asFloat(extractField(str(f!), t!)) },
  { args: ['text', 'time'], returns: 'float8', impl: ([f, t]) => asFloat(extractField(str(f!), t!)) },
  { args: ['text', 'timetz'], returns: 'float8', impl: ([f, t]) => asFloat(extractField(str(f!), t!)) },
  {
    args: ['text', 'date'],
    returns: 'float8',
    // date_part(text, date) is SQL-defined as date_part($1, $2::timestamp).
    impl: ([f, d]) => asFloat(extractField(str(f!), { type: 'timestamp', value: BigInt(int(d!)) * MICROS_PER_DAY })),
  },
);

function asFloat(v: SqlValue): SqlValue {
  return { type: 'float8', value: (v.value as Decimal).toNumber() };
}

/** date_trunc on timestamp fields. @throws SQL_ERROR 22023 unknown unit */
function truncTimestamp(rawField: string, t: bigint, type: SqlTypeName): bigint {
  const field = canonicalField(rawField);
  const f = timestampFields(t);
  const at = (year: number, month: number, day: number): bigint => BigInt(daysFromCivil(year, month, day)) * MICROS_PER_DAY;
  const dayStart = BigInt(f.days) * MICROS_PER_DAY;
  switch (field) {
    case 'microseconds':
      return t;
    case 'milliseconds':
      return floorDiv(t, 1000n) * 1000n;
    case 'second':
      return floorDiv(t, MICROS_PER_SECOND) * MICROS_PER_SECOND;
    case 'minute':
      return floorDiv(t, MICROS_PER_MINUTE) * MICROS_PER_MINUTE;
    case 'hour':
      return floorDiv(t, MICROS_PER_HOUR) * MICROS_PER_HOUR;
    case 'day':
      return dayStart;
    case 'week': {
      const dow = dayOfWeek(f.days);
      return BigInt(f.days - (dow === 0 ? 6 : dow - 1)) * MICROS_PER_DAY;
    }
    case 'month':
      return at(f.year, f.month, 1);
    case 'quarter':
      return at(f.year, Math.floor((f.month - 1) / 3) * 3 + 1, 1);
    case 'year':
      return at(f.year, 1, 1);
    // PostgreSQL's timestamp_trunc on the proleptic year (1 BC is 0), with C's truncating division.
    case 'decade':
      return at(f.year > 0 ? Math.trunc(f.year / 10) * 10 : -Math.trunc((8 - (f.year - 1)) / 10) * 10, 1, 1);
    case 'century':
      return at(f.year > 0 ? Math.trunc((f.year + 99) / 100) * 100 - 99 : -Math.trunc((99 - (f.year - 1)) / 100) * 100 + 1, 1, 1);
    case 'millennium':
      return at(f.year > 0 ? Math.trunc((f.year + 999) / 1000) * 1000 - 999 : -Math.trunc((999 - (f.year - 1)) / 1000) * 1000 + 1, 1, 1);
    default:
      return field === undefined ? unitNotRecognized(rawField, type) : unitNotSupported(rawField, type);
  }
}

/** date_trunc on interval fields (months, days and time truncated per field). */
function truncInterval(rawField: string, i: Interval): Interval {
  const field = canonicalField(rawField);
  const t = i.micros;
  const keepTime = (unit: bigint): bigint => (t / unit) * unit;
  switch (field) {
    case 'microseconds':
      return i;
    case 'milliseconds':
      return { ...i, micros: keepTime(1000n) };
    case 'second':
      return { ...i, micros: keepTime(MICROS_PER_SECOND) };
    case 'minute':
      return { ...i, micros: keepTime(MICROS_PER_MINUTE) };
    case 'hour':
      return { ...i, micros: keepTime(MICROS_PER_HOUR) };
    case 'day':
      return { ...i, micros: 0n };
    case 'month':
      return { months: i.months, days: 0, micros: 0n };
    case 'quarter':
      return { months: i.months - (i.months % 12) + Math.trunc((i.months % 12) / 3) * 3, days: 0, micros: 0n };
    case 'year':
      return { months: i.months - (i.months % 12), days: 0, micros: 0n };
    case 'decade':
      return { months: i.months - (i.months % 120), days: 0, micros: 0n };
    case 'century':
      return { months: i.months - (i.months % 1200), days: 0, micros: 0n };
    case 'millennium':
      return { months: i.months - (i.months % 12000), days: 0, micros: 0n };
    default:
      return field === undefined ? unitNotRecognized(rawField, 'interval') : unitNotSupported(rawField, 'interval');
  }
}

/** date_trunc: an unknown-typed second argument is ambiguous in PostgreSQL (42725), so refused. */
const dateTrunc: FunctionDef = {
  compile(name, args) {
    if (args.length === 2 && args[1]!.type === 'unknown') sqlFail('42725', `function ${name}(${args.map((a) => typeDisplay(a.type)).join(', ')}) is not unique`);
    return strict(
      // Truncating the earliest timestamps can step before the range (to 4714-01-01 BC).
      { args: ['text', 'timestamptz'], returns: 'timestamptz', impl: ([f, t]) => ({ type: 'timestamptz', value: checkTimestamp(truncTimestamp(str(f!), micros(t!), 'timestamptz')) }) },
      { args: ['text', 'timestamp'], returns: 'timestamp', impl: ([f, t]) => ({ type: 'timestamp', value: checkTimestamp(truncTimestamp(str(f!), micros(t!), 'timestamp')) }) },
      { args: ['text', 'interval'], returns: 'interval', impl: ([f, i]) => ({ type: 'interval', value: truncInterval(str(f!), iv(i!)) }) },
    ).compile(name, args);
  },
};

/** make_date: negative years are BC; there is no year 0. @throws SQL_ERROR 22008 */
function makeDate(y: number, m: number, d: number, what: string): number {
  if (y === 0 || m < 1 || m > 12) sqlFail('22008', `date field value out of range: ${what}`);
  const year = y < 0 ? y + 1 : y;
  if (d < 1 || d > daysInMonth(year, m)) sqlFail('22008', `date field value out of range: ${what}`);
  return checkDate(daysFromCivil(year, m, d));
}

const makeTimestamp = (y: number, mo: number, d: number, h: number, mi: number, sec: number): bigint => {
  const days = makeDate(y, mo, d, `${y}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}`);
  if (h < 0 || h > 24 || mi < 0 || mi > 59 || sec < 0 || sec > 60 || (h === 24 && (mi > 0 || sec > 0))) {
    sqlFail('22008', `time field value out of range: ${h}:${String(mi).padStart(2, '0')}:${String(sec).padStart(2, '0')}`);
  }
  return checkTimestamp(timestampFromFields(1970, 1, 1 + days, h, mi, BigInt(Math.round(sec * 1e6))));
};

/** C's printf `%02g` (make_time's message): six significant digits, at least two characters. */
function printfG2(x: number): string {
  const s = String(Number(x.toPrecision(6)));
  const neg = s.startsWith('-');
  const digits = neg ? s.slice(1) : s;
  return (neg ? '-' : '') + (s.length < 2 ? digits.padStart(2 - (neg ? 1 : 0), '0') : digits);
}

/** make_time(hour, min, sec) as PostgreSQL's: 24:00:00 allowed, nothing past it. @throws SQL_ERROR 22008 */
function makeTime(h: number, m: number, sec: number): bigint {
  const micros = ((h * 60 + m) * 60) * 1e6 + roundHalfEven(sec * 1e6);
  if (h < 0 || m < 0 || m > 59 || h > 24 || !(sec >= 0 && sec <= 60) || micros > 86_400e6) {
    sqlFail('22008', `time field value out of range: ${h}:${String(m).padStart(2, '0')}:${printfG2(sec)}`);
  }
  return BigInt(micros);
}

/**
 * timezone(zone, x), which `x AT TIME ZONE zone` is (sql-grammar-gaps.ts), as PostgreSQL 15's
 * timestamptz_zone, timestamp_zone and timetz_zone and their interval forms: a timestamptz
 * becomes the zone's local timestamp, a timestamp (a local time of the zone) the timestamptz it
 * is, a timetz the same instant in the zone (a named zone's offset taken at the statement's
 * time, as PostgreSQL takes the transaction's). A time is a timetz in the session's zone (UTC)
 * and an untyped literal or a date a timestamptz, as PostgreSQL resolves the call.
 * @throws SQL_ERROR 42883 other argument types, 22023 an unknown zone or an interval with days, 22008 out of range
 */
const timezoneFunction: FunctionDef = {
  compile(name, args) {
    if (args.length !== 2) return noFunction(name, args);
    const [zoneArg, valueArg] = args as [CompiledExpr, CompiledExpr];
    const byInterval = zoneArg.type === 'interval';
    if (!byInterval && !canCoerce(zoneArg.type, 'text')) return noFunction(name, args);
    const valueType: SqlTypeName | undefined =
      valueArg.type === 'unknown' || valueArg.type === 'date' ? 'timestamptz' : valueArg.type === 'time' ? 'timetz' : ['timestamp', 'timestamptz', 'timetz'].includes(valueArg.type) ? valueArg.type : undefined;
    if (valueType === undefined) return noFunction(name, args);
    const zoneExpr = coerce(zoneArg, byInterval ? 'interval' : 'text');
    const value = coerce(valueArg, valueType);
    const type: SqlTypeName = valueType === 'timestamptz' ? 'timestamp' : valueType === 'timestamp' ? 'timestamptz' : 'timetz';
    return {
      type,
      evaluate(ctx) {
        const z = zoneExpr.evaluate(ctx);
        const v = value.evaluate(ctx);
        if (z.value === null || v.value === null) return { type, value: null } as SqlValue;
        const zone = byInterval ? zoneOfInterval(z.value as Interval) : zoneNamed(str(z as NonNullSqlValue));
        if (v.type === 'timestamptz') return { type: 'timestamp', value: checkTimestamp(localOf(zone, v.value)) };
        if (v.type === 'timestamp') return { type: 'timestamptz', value: checkTimestamp(utcOf(zone, v.value)) };
        const t = v.value as TimeTz;
        const west = -offsetEast(zone, ctx.statementTime);
        let time = (t.time + BigInt(t.zone - west) * MICROS_PER_SECOND) % MICROS_PER_DAY;
        if (time < 0n) time += MICROS_PER_DAY;
        return { type: 'timetz', value: { time, zone: west + 0 } };
      },
    };
  },
};

/**
 * age(a, b) as PostgreSQL: field-wise difference of the broken-down timestamps, borrowing
 * from the next larger field (days borrow the length of b's month).
 */
function age(a: bigint, b: bigint): Interval {
  const neg = a < b;
  const [x, y] = neg ? [b, a] : [a, b];
  const fx = timestampFields(x);
  const fy = timestampFields(y);
  let micro = fx.micro - fy.micro;
  let sec = fx.second - fy.second;
  let min = fx.minute - fy.minute;
  let hour = fx.hour - fy.hour;
  let day = fx.day - fy.day;
  let mon = fx.month - fy.month;
  let year = fx.year - fy.year;
  while (micro < 0) (micro += 1_000_000), sec--;
  while (sec < 0) (sec += 60), min--;
  while (min < 0) (min += 60), hour--;
  while (hour < 0) (hour += 24), day--;
  // Days borrow the length of the earlier value's month, as PostgreSQL's timestamp_age.
  while (day < 0) (day += daysInMonth(fy.year, fy.month)), mon--;
  while (mon < 0) (mon += 12), year--;
  const time = BigInt(hour) * MICROS_PER_HOUR + BigInt(min) * MICROS_PER_MINUTE + BigInt(sec) * MICROS_PER_SECOND + BigInt(micro);
  const r = { months: year * 12 + mon, days: day, micros: time };
  return neg ? { months: -r.months + 0, days: -r.days + 0, micros: -r.micros } : r;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Applies a text pattern's case: MONTH upper, Month capitalised, month lower. */
function cased(pattern: string, word: string): string {
  if (pattern === pattern.toUpperCase()) return word.toUpperCase();
  if (pattern[1] === pattern[1]!.toLowerCase() && pattern[0] === pattern[0]!.toUpperCase()) return word;
  return word.toLowerCase();
}

type Formatter = (f: TimestampFields, fm: boolean, tz: boolean) => string;

const pad = (n: number, width: number, fm: boolean): string => {
  const s = String(Math.abs(n)).padStart(fm ? 0 : width, '0');
  return n < 0 ? `-${s}` : s;
};

/** to_char patterns, longest first; numeric ones match in any case, names by their case. */
const TO_CHAR_PATTERNS: [RegExp, Formatter][] = [
  [/^HH24/i, (f, fm) => pad(f.hour, 2, fm)],
  [/^HH12/i, (f, fm) => pad(f.hour % 12 === 0 ? 12 : f.hour % 12, 2, fm)],
  [/^HH/i, (f, fm) => pad(f.hour % 12 === 0 ? 12 : f.hour % 12, 2, fm)],
  [/^MI/i, (f, fm) => pad(f.minute, 2, fm)],
  [/^SSSSS?/i, (f) => String(f.hour * 3600 + f.minute * 60 + f.second)],
  [/^SS/i, (f, fm) => pad(f.second, 2, fm)],
  [/^MS/i, (f, fm) => pad(Math.floor(f.micro / 1000), 3, fm)],
  [/^US/i, (f, fm) => pad(f.micro, 6, fm)],
  [/^(A\.M\.|P\.M\.)/, (f) => (f.hour < 12 ? 'A.M.' : 'P.M.')],
  [/^(a\.m\.|p\.m\.)/, (f) => (f.hour < 12 ? 'a.m.' : 'p.m.')],
  [/^(AM|PM)/, (f) => (f.hour < 12 ? 'AM' : 'PM')],
  [/^(am|pm)/, (f) => (f.hour < 12 ? 'am' : 'pm')],
  [/^Y,YYY/i, (f) => { const y = eraYear(f.year); return `${Math.trunc(y / 1000)},${pad(y % 1000, 3, false)}`; }],
  [/^IYYY/i, (f, fm) => pad(eraYear(isoWeek(f.days).isoYear), 4, fm)],
  [/^YYYY/i, (f, fm) => pad(eraYear(f.year), 4, fm)],
  [/^YYY/i, (f, fm) => pad(eraYear(f.year) % 1000, 3, fm)],
  [/^YY/i, (f, fm) => pad(eraYear(f.year) % 100, 2, fm)],
  [/^Y/i, (f) => String(eraYear(f.year) % 10)],
  [/^(A\.D\.|B\.C\.)/, (f) => (f.year > 0 ? 'A.D.' : 'B.C.')],
  [/^(a\.d\.|b\.c\.)/, (f) => (f.year > 0 ? 'a.d.' : 'b.c.')],
  [/^(AD|BC)/, (f) => (f.year > 0 ? 'AD' : 'BC')],
  [/^(ad|bc)/, (f) => (f.year > 0 ? 'ad' : 'bc')],
  [/^(MONTH|Month|month)/, (f, fm) => (fm ? MONTHS[f.month - 1]! : MONTHS[f.month - 1]!.padEnd(9))],
  [/^(MON|Mon|mon)/, (f) => MONTHS[f.month - 1]!.slice(0, 3)],
  [/^MM/i, (f, fm) => pad(f.month, 2, fm)],
  [/^(DAY|Day|day)/, (f, fm) => (fm ? DAYS[dayOfWeek(f.days)]! : DAYS[dayOfWeek(f.days)]!.padEnd(9))],
  [/^(DY|Dy|dy)/, (f) => DAYS[dayOfWeek(f.days)]!.slice(0, 3)],
  [/^DDD/i, (f, fm) => pad(f.days - daysFromCivil(f.year, 1, 1) + 1, 3, fm)],
  [/^DD/i, (f, fm) => pad(f.day, 2, fm)],
  [/^D/i, (f) => String(dayOfWeek(f.days) + 1)],
  [/^ID/i, (f) => String(dayOfWeek(f.days) === 0 ? 7 : dayOfWeek(f.days))],
  [/^IW/i, (f, fm) => pad(isoWeek(f.days).week, 2, fm)],
  [/^WW/i, (f, fm) => pad(Math.floor((f.days - daysFromCivil(f.year, 1, 1)) / 7) + 1, 2, fm)],
  [/^Q/i, (f) => String(Math.floor((f.month - 1) / 3) + 1)],
  [/^CC/i, (f, fm) => pad(f.year > 0 ? Math.trunc((f.year - 1) / 100) + 1 : Math.trunc(f.year / 100) - 1, 2, fm)],
  [/^J/i, (f) => String(julianDay(f.days))],
  [/^(TZ|tz)/, (_f, _fm, tz) => (tz ? 'UTC' : '')],
];

/**
 * to_char(timestamp, format) for the common template patterns; FM suppresses padding,
 * double-quoted text is copied, other characters are copied as they are.
 */
export function formatTimestampPattern(t: bigint, format: string, tz: boolean): string {
  const f = timestampFields(t);
  // The case of a name pattern is read from the pattern's first letters (Month / MONTH / month).
  let out = '';
  let i = 0;
  while (i < format.length) {
    let fm = false;
    if (format.startsWith('FM', i) || format.startsWith('fm', i)) {
      fm = true;
      i += 2;
    }
    const rest = format.slice(i);
    if (rest.startsWith('"')) {
      const end = rest.indexOf('"', 1);
      out += end < 0 ? rest.slice(1) : rest.slice(1, end);
      i += end < 0 ? rest.length : end + 1;
      continue;
    }
    if (rest.startsWith('\\') && rest.length > 1) {
      out += rest[1];
      i += 2;
      continue;
    }
    const hit = TO_CHAR_PATTERNS.find(([re]) => re.test(rest));
    if (hit === undefined) {
      if (rest.length > 0) out += rest[0];
      i += 1;
      continue;
    }
    const matched = hit[0].exec(rest)![0];
    let text = hit[1](f, fm, tz);
    if (/^(MONTH|Month|month|MON|Mon|mon|DAY|Day|day|DY|Dy|dy)$/.test(matched)) text = cased(matched, text);
    out += text;
    i += matched.length;
  }
  return out;
}

const text = (value: string): SqlValue => ({ type: 'text', value });

export const TIME_FUNCTIONS: Record<string, FunctionDef> = {
  now: statementClock('timestamptz'),
  current_timestamp: statementClock('timestamptz'),
  transaction_timestamp: statementClock('timestamptz'),
  localtimestamp: statementClock('timestamp'),
  current_date: statementClock('date'),
  current_time: statementClock('timetz'),
  localtime: statementClock('time'),
  timezone: timezoneFunction,
  make_time: strict({
    args: ['int4', 'int4', 'float8'],
    returns: 'time',
    impl: ([h, m, sec]) => ({ type: 'time', value: makeTime(int(h!), int(m!), sec!.value as number) }),
  }),
  date_part: datePart,
  date_trunc: dateTrunc,
  make_date: strict({
    args: ['int4', 'int4', 'int4'],
    returns: 'date',
    impl: ([y, m, d]) => ({ type: 'date', value: makeDate(int(y!), int(m!), int(d!), `${int(y!)}-${String(int(m!)).padStart(2, '0')}-${String(int(d!)).padStart(2, '0')}`) }),
  }),
  make_timestamp: strict({
    args: ['int4', 'int4', 'int4', 'int4', 'int4', 'float8'],
    returns: 'timestamp',
    impl: ([y, mo, d, h, mi, s]) => ({ type: 'timestamp', value: makeTimestamp(int(y!), int(mo!), int(d!), int(h!), int(mi!), s!.value as number) }),
  }),
  make_interval: {
    compile(name, args) {
      // make_interval(years, months, weeks, days, hours, mins, secs), positional only here.
      if (args.length > 7) return noFunction(name, args);
      const types: SqlTypeName[] = ['int4', 'int4', 'int4', 'int4', 'int4', 'int4', 'float8'];
      return strict({
        args: types.slice(0, args.length),
        returns: 'interval',
        impl: (v) => {
          const n = (k: number): number => (v[k] === undefined ? 0 : (v[k]!.value as number));
          const time = BigInt(n(4)) * MICROS_PER_HOUR + BigInt(n(5)) * MICROS_PER_MINUTE + BigInt(Math.round(n(6) * 1e6));
          return { type: 'interval', value: { months: n(0) * 12 + n(1), days: n(2) * 7 + n(3), micros: time } };
        },
      }).compile(name, args);
    },
  },
  age: strict(
    { args: ['timestamp', 'timestamp'], returns: 'interval', impl: ([a, b]) => ({ type: 'interval', value: age(micros(a!), micros(b!)) }) },
    { args: ['timestamptz', 'timestamptz'], returns: 'interval', impl: ([a, b]) => ({ type: 'interval', value: age(micros(a!), micros(b!)) }) },
    // age(t) is age(current_date, t): measured from midnight of the statement's date.
    { args: ['timestamptz'], returns: 'interval', impl: ([t], ctx) => ({ type: 'interval', value: age(floorDiv(ctx.statementTime, MICROS_PER_DAY) * MICROS_PER_DAY, micros(t!)) }) },
    { args: ['timestamp'], returns: 'interval', impl: ([t], ctx) => ({ type: 'interval', value: age(floorDiv(ctx.statementTime, MICROS_PER_DAY) * MICROS_PER_DAY, micros(t!)) }) },
  ),
  to_char: strict(
    { args: ['timestamptz', 'text'], returns: 'text', impl: ([t, f]) => text(formatTimestampPattern(micros(t!), str(f!), true)) },
    { args: ['timestamp', 'text'], returns: 'text', impl: ([t, f]) => text(formatTimestampPattern(micros(t!), str(f!), false)) },
    // Numbers: integers and numerics exactly; float8 through its shortest decimal form.
    { args: ['numeric', 'text'], returns: 'text', impl: ([n, f]) => text(formatNumberPattern(n!.value as Decimal, str(f!))) },
    { args: ['float8', 'text'], returns: 'text', impl: ([n, f]) => text(formatNumberPattern(Decimal.fromNumber(n!.value as number), str(f!))) },
  ),
  justify_days: strict({ args: ['interval'], returns: 'interval', impl: ([i]) => ({ type: 'interval', value: justifyDays(iv(i!)) }) }),
  justify_hours: strict({ args: ['interval'], returns: 'interval', impl: ([i]) => ({ type: 'interval', value: justifyHours(iv(i!)) }) }),
};

function justifyHours(i: Interval): Interval {
  let days = i.days + Number(i.micros / MICROS_PER_DAY);
  let t = i.micros % MICROS_PER_DAY;
  if (days > 0 && t < 0) (t += MICROS_PER_DAY), days--;
  else if (days < 0 && t > 0) (t -= MICROS_PER_DAY), days++;
  return { months: i.months, days, micros: t };
}

function justifyDays(i: Interval): Interval {
  let months = i.months + Math.trunc(i.days / 30);
  let days = i.days % 30;
  if (months > 0 && days < 0) (days += 30), months--;
  else if (months < 0 && days > 0) (days -= 30), months++;
  return { months, days: days + 0, micros: i.micros };
}
