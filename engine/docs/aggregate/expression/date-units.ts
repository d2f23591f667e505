/**
 * Calendar arithmetic for the date operators that take a `unit` ($dateAdd, $dateSubtract,
 * $dateDiff, $dateTrunc), in a time zone, as MongoDB's date_time_support does it: adding months
 * keeps the day unless the month is shorter (2020-01-31 + 1 month is 2020-02-29); a difference
 * counts the unit boundaries crossed between the two dates (23:59:59 to 00:00:00 is one day);
 * truncation counts bins from the reference point 2000-01-01T00:00:00 local time (for weeks, the
 * first `startOfWeek` day on or after it).
 *
 * In a named zone, days and longer units are calendar units of local time: a day added keeps the
 * local time of day across a DST change (23 or 25 hours), differences and bins count local
 * midnights; hours and shorter units are elapsed time. The calendar itself is the UTC one, run on
 * local times (time-zone.ts `localTime`) and mapped back with the zone's `instant`.
 */

import { bsonTypeOf } from '../../values.js';
import { dateAt } from './arithmetic.js';
import { exprError } from './expression.js';
import { localTime, UTC, type TimeZone } from './time-zone.js';

export type TimeUnit = 'year' | 'quarter' | 'month' | 'week' | 'day' | 'hour' | 'minute' | 'second' | 'millisecond';

const UNITS: ReadonlySet<string> = new Set<TimeUnit>(['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'millisecond']);

/** Milliseconds in the fixed-length units. */
const UNIT_MS = { week: 604_800_000, day: 86_400_000, hour: 3_600_000, minute: 60_000, second: 1000, millisecond: 1 } as const;

/** Monday 1 ... Sunday 7, as MongoDB's DayOfWeek. */
const DAYS: Readonly<Record<string, number>> = {
  monday: 1, mon: 1, tuesday: 2, tue: 2, wednesday: 3, wed: 3, thursday: 4, thu: 4, friday: 5, fri: 5, saturday: 6, sat: 6, sunday: 7, sun: 7,
};

/** The default first day of a week (MongoDB's kStartOfWeekDefault). */
export const SUNDAY = 7;

/** 2000-01-01T00:00:00Z, $dateTrunc's reference point. */
const REFERENCE_MS = 946_684_800_000;

/** True for the name of a time unit ('millisecond' ... 'year'). */
export function isTimeUnit(v: unknown): v is TimeUnit {
  return typeof v === 'string' && UNITS.has(v);
}

/** A `unit` value. @throws QUERY_ERROR naming the operator */
export function parseUnit(v: unknown, name: string): TimeUnit {
  if (typeof v !== 'string') exprError(name, `${name} requires 'unit' to be a string, but got ${bsonTypeOf(v)}`);
  if (!UNITS.has(v)) exprError(name, `${name} parameter 'unit' value parsing failed :: caused by :: unknown time unit value: ${v}`);
  return v as TimeUnit;
}

/** A `startOfWeek` value (case-insensitive, full or three letters) as 1 (Monday) to 7. @throws QUERY_ERROR */
export function parseDayOfWeek(v: unknown, name: string, parameter: string): number {
  if (typeof v !== 'string') exprError(name, `${name} requires '${parameter}' to be a string, but got ${bsonTypeOf(v)}`);
  const day = Object.hasOwn(DAYS, v.toLowerCase()) ? DAYS[v.toLowerCase()] : undefined;
  if (day === undefined) exprError(name, `${name} parameter '${parameter}' value cannot be recognized as a day of a week: ${v}`);
  return day;
}

const floorDiv = (a: number, b: number): number => Math.floor(a / b);

/** The non-negative remainder of `value` by `size` (size > 0). */
function binOffset(value: number, size: number): number {
  const r = value % size;
  return r < 0 ? r + size : r;
}

/** Days in a month of the proleptic Gregorian calendar (month 1-12). */
export function daysInMonth(year: number, month: number): number {
  return month === 2 ? (isLeap(year) ? 29 : 28) : MONTH_DAYS[month - 1]!;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** The largest amounts MongoDB's dateAdd accepts per unit (isDateAddAmountValid): about the range of 64-bit milliseconds. */
const MAX_DAYS = Number(2n ** 64n / 86_400_000n + 1n);
const MAX_YEARS = Math.floor(MAX_DAYS / 365) + 1;
const MAX_AMOUNT: Readonly<Record<Exclude<TimeUnit, 'millisecond'>, number>> = {
  year: MAX_YEARS,
  quarter: MAX_YEARS * 4,
  month: MAX_YEARS * 12,
  week: Math.floor(MAX_DAYS / 7),
  day: MAX_DAYS,
  hour: MAX_DAYS * 24,
  minute: MAX_DAYS * 24 * 60,
  second: MAX_DAYS * 24 * 60 * 60,
};

/**
 * `date` plus `amount` units in `zone` (MongoDB's dateAdd): milliseconds always, and in a named
 * zone hours, minutes and seconds too, are elapsed time; the others step the local calendar and
 * keep the local time of day, a time the step lands on twice taking the start's DST flag.
 * @throws QUERY_ERROR "date overflow" past the date range
 */
export function addUnits(date: Date, unit: TimeUnit, amount: number, name: string, zone: TimeZone = UTC): Date {
  const t = date.getTime();
  if (unit === 'millisecond') return dateAt(t + amount, name);
  if (!(Math.abs(amount) < MAX_AMOUNT[unit])) exprError(name, `invalid ${name.slice(1)} 'amount' parameter value: ${amount} ${unit}`);
  if (zone.fixed) {
    const offset = zone.offset(t);
    return dateAt(addWall(t + offset, unit, amount, name) - offset, name);
  }
  if (unit === 'hour' || unit === 'minute' || unit === 'second') return dateAt(t + amount * UNIT_MS[unit], name);
  return dateAt(zone.instant(addWall(localTime(zone, t), unit, amount, name), zone.isDst(t)), name);
}

/** A local time (milliseconds read as UTC) plus `amount` units of the calendar. @throws QUERY_ERROR */
function addWall(wall: number, unit: Exclude<TimeUnit, 'millisecond'>, amount: number, name: string): number {
  if (unit === 'year' || unit === 'quarter' || unit === 'month') {
    const date = new Date(wall);
    const months = amount * (unit === 'year' ? 12 : unit === 'quarter' ? 3 : 1);
    const total = date.getUTCFullYear() * 12 + date.getUTCMonth() + months;
    const year = Math.floor(total / 12);
    const month = total - year * 12 + 1;
    if (!Number.isFinite(year) || Math.abs(year) > 300_000) exprError(name, `date overflow in ${name}`);
    // The day is kept unless the month is shorter: then its last day (MongoDB's daysToAdd).
    const day = Math.min(date.getUTCDate(), daysInMonth(year, month));
    const out = new Date(wall);
    out.setUTCFullYear(year, month - 1, day);
    return dateAt(out.getTime(), name).getTime();
  }
  return wall + amount * UNIT_MS[unit];
}

/** The day of the week of a day number (days since the epoch), 0 for `startOfWeek` to 6. */
function weekday(dayNumber: number, startOfWeek: number): number {
  // 1970-01-01 was a Thursday (ISO 4).
  const iso = binOffset(dayNumber + 3, 7) + 1;
  return (iso - startOfWeek + 7) % 7;
}

/**
 * How many `unit` boundaries lie between `start` and `end` in `zone` (negative when end is
 * earlier), as MongoDB's dateDiff: days and longer count the local calendar's boundaries; hours and
 * minutes count local ones corrected by the change of offset between the two dates (so a DST change
 * adds or takes none, while a half-hour zone's hours turn at half past UTC ones).
 */
export function diffUnits(start: Date, end: Date, unit: TimeUnit, startOfWeek: number, zone: TimeZone = UTC): number {
  const a = start.getTime();
  const b = end.getTime();
  if (unit === 'millisecond') return b - a;
  const offsetA = zone.offset(a);
  const offsetB = zone.offset(b);
  const la = a + offsetA;
  const lb = b + offsetB;
  const local = (ms: number): Date => new Date(ms);
  switch (unit) {
    case 'year':
      return local(lb).getUTCFullYear() - local(la).getUTCFullYear();
    case 'quarter':
      return Math.floor(local(lb).getUTCMonth() / 3) - Math.floor(local(la).getUTCMonth() / 3) + 4 * (local(lb).getUTCFullYear() - local(la).getUTCFullYear());
    case 'month':
      return local(lb).getUTCMonth() - local(la).getUTCMonth() + 12 * (local(lb).getUTCFullYear() - local(la).getUTCFullYear());
    case 'week': {
      const da = floorDiv(la, UNIT_MS.day);
      const db = floorDiv(lb, UNIT_MS.day);
      // The first days of the two weeks are a whole number of weeks apart.
      return (db - weekday(db, startOfWeek) - (da - weekday(da, startOfWeek))) / 7;
    }
    case 'day':
      return floorDiv(lb, UNIT_MS.day) - floorDiv(la, UNIT_MS.day);
    case 'hour':
    case 'minute':
      // C++ integer division of the offset change: toward zero.
      return floorDiv(lb, UNIT_MS[unit]) - floorDiv(la, UNIT_MS[unit]) + Math.trunc((offsetA - offsetB) / UNIT_MS[unit]);
    case 'second':
      return floorDiv(b, UNIT_MS.second) - floorDiv(a, UNIT_MS.second);
    default: {
      const never: never = unit;
      throw new Error(`unknown unit ${String(never)}`);
    }
  }
}

/** The largest bin size $dateTrunc takes for days and longer units (MongoDB: what dateAdd handles). */
const MAX_CALENDAR_BIN = 100_000_000_000;

/**
 * The start of the `binSize`-unit bin `date` falls in, bins counted from 2000-01-01T00:00:00 in
 * `zone` (that instant's offset placing it, as MongoDB's defaultReferencePointForDateTrunc).
 * @throws QUERY_ERROR
 */
export function truncUnits(date: Date, unit: TimeUnit, binSize: number, startOfWeek: number, name: string, zone: TimeZone = UTC): Date {
  const t = date.getTime();
  let reference = REFERENCE_MS - zone.offset(REFERENCE_MS);
  if (unit === 'millisecond' || unit === 'second' || unit === 'minute' || unit === 'hour') {
    const size = binSize * UNIT_MS[unit];
    return dateAt(t - binOffset(t - reference, size), name);
  }
  if (binSize > MAX_CALENDAR_BIN) exprError(name, 'dateTrunc unsupported binSize value');
  if (unit === 'week') {
    // 2000-01-01 was a Saturday: the reference moves to the first startOfWeek day from it (no
    // zone changes offset in the first week of 2000, so days are 24 hours here).
    const saturday = (6 - startOfWeek + 7) % 7;
    reference += ((7 - saturday) % 7) * UNIT_MS.day;
  }
  const distance = diffUnits(new Date(reference), date, unit, startOfWeek, zone);
  return addUnits(new Date(reference), unit, distance - binOffset(distance, binSize), name, zone);
}
