/**
 * Proleptic Gregorian calendar arithmetic on the value model's representations (dates as days
 * since 1970-01-01, timestamps as microseconds since the epoch, UTC), shared by the time
 * functions and the interval operators. Pure integer arithmetic, so years before 1970 and after
 * 2038 behave like any other.
 */
// sql-types imports this module for its output functions; sqlFail is only called, never read
// while the modules load, so the cycle is harmless.
import { sqlFail, type Interval } from '../sql-types.js';

export const MICROS_PER_SECOND = 1_000_000n;
export const MICROS_PER_MINUTE = 60_000_000n;
export const MICROS_PER_HOUR = 3_600_000_000n;
export const MICROS_PER_DAY = 86_400_000_000n;
/** PostgreSQL counts a month as 30 days when it must compare or justify intervals. */
export const DAYS_PER_MONTH = 30;

/**
 * The dates a date holds, as days since 1970-01-01: PostgreSQL's range, from 4714-11-24 BC
 * (Julian day 0) up to 5874897-12-31; DATE_END_DAYS is the first day past it.
 */
export const DATE_MIN_DAYS = -2_440_588;
export const DATE_END_DAYS = 2_145_042_906;

/**
 * The instants a timestamp holds, as microseconds since 1970: from 4714-11-24 00:00:00 BC, as
 * PostgreSQL, up to 294246-12-31 23:59:59.999999 (TIMESTAMP_END is 294247-01-01). PostgreSQL
 * counts from 2000 and reaches 294276; an int64 counted from 1970 (the stored form) ends in
 * January 294247, and the range stops at the last whole year before that.
 */
export const TIMESTAMP_MIN = BigInt(DATE_MIN_DAYS) * MICROS_PER_DAY;
/** 294247-01-01 is day 106,751,982 since 1970. */
export const TIMESTAMP_END = 106_751_982n * MICROS_PER_DAY;

/** A day number checked against the date range. @throws SQL_ERROR 22008 date out of range */
export function checkDate(days: number, input?: string): number {
  // Negated so that NaN (from a non-finite operand) fails too.
  if (!(days >= DATE_MIN_DAYS && days < DATE_END_DAYS)) sqlFail('22008', input === undefined ? 'date out of range' : `date out of range: "${input}"`);
  return days;
}

/** Microseconds checked against the timestamp range. @throws SQL_ERROR 22008 timestamp out of range */
export function checkTimestamp(micros: bigint, input?: string): bigint {
  if (micros < TIMESTAMP_MIN || micros >= TIMESTAMP_END) sqlFail('22008', input === undefined ? 'timestamp out of range' : `timestamp out of range: "${input}"`);
  return micros;
}

/** date + integer (date_pli). @throws SQL_ERROR 22008 date out of range */
export function addDays(days: number, n: number): number {
  return checkDate(days + n);
}

/** Floor division for bigint (JavaScript's `/` truncates toward zero). */
export function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** Days since the epoch -> year, month (1-12), day (Howard Hinnant's civil_from_days). */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day };
}

/** Year, month (1-12), day -> days since the epoch (days_from_civil); no range checks. */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

export function daysInMonth(year: number, month: number): number {
  return [31, isLeapYear(year) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/** The broken-down fields of a timestamp (UTC). */
export interface TimestampFields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  /** Microseconds within the second, 0..999999. */
  micro: number;
  /** Days since the epoch. */
  days: number;
}

export function timestampFields(micros: bigint): TimestampFields {
  const days = floorDiv(micros, MICROS_PER_DAY);
  let rest = micros - days * MICROS_PER_DAY;
  const hour = Number(rest / MICROS_PER_HOUR);
  rest %= MICROS_PER_HOUR;
  const minute = Number(rest / MICROS_PER_MINUTE);
  rest %= MICROS_PER_MINUTE;
  const second = Number(rest / MICROS_PER_SECOND);
  const micro = Number(rest % MICROS_PER_SECOND);
  return { ...civilFromDays(Number(days)), hour, minute, second, micro, days: Number(days) };
}

/** Fields -> microseconds since the epoch (fields may overflow; they are added up). */
export function timestampFromFields(year: number, month: number, day: number, hour: number, minute: number, secondMicros: bigint): bigint {
  return BigInt(daysFromCivil(year, month, day)) * MICROS_PER_DAY + BigInt(hour) * MICROS_PER_HOUR + BigInt(minute) * MICROS_PER_MINUTE + secondMicros;
}

/**
 * timestamp + interval as PostgreSQL's timestamp_pl_interval: months first (clamping the day to
 * the month's length), then days, then the time part; like PostgreSQL, each step must stay in
 * range, so a later field cannot bring back a value an earlier one pushed out.
 * @throws SQL_ERROR 22008 timestamp out of range
 */
export function addInterval(micros: bigint, iv: Interval): bigint {
  let t = micros;
  if (iv.months !== 0) {
    const f = timestampFields(t);
    const total = f.year * 12 + (f.month - 1) + iv.months;
    const year = Math.floor(total / 12);
    const month = total - year * 12 + 1;
    const day = Math.min(f.day, daysInMonth(year, month));
    t = checkTimestamp(BigInt(daysFromCivil(year, month, day)) * MICROS_PER_DAY + (t - BigInt(f.days) * MICROS_PER_DAY));
  }
  if (iv.days !== 0) t = checkTimestamp(t + BigInt(iv.days) * MICROS_PER_DAY);
  return checkTimestamp(t + iv.micros);
}

export function negateInterval(iv: Interval): Interval {
  return { months: -iv.months, days: -iv.days, micros: -iv.micros };
}

/** ISO 8601 week-numbering year and week of a date (weeks start on Monday). */
export function isoWeek(days: number): { isoYear: number; week: number } {
  const isoDow = ((((days + 3) % 7) + 7) % 7) + 1; // 1970-01-01 was a Thursday (4)
  const thursday = days - isoDow + 4;
  const isoYear = civilFromDays(thursday).year;
  const jan1 = daysFromCivil(isoYear, 1, 1);
  return { isoYear, week: Math.floor((thursday - jan1) / 7) + 1 };
}

/** Day of week, 0 = Sunday. */
export function dayOfWeek(days: number): number {
  return (((days + 4) % 7) + 7) % 7;
}
