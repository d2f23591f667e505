/**
 * Proleptic Gregorian calendar arithmetic on the value model's representations (dates as days
 * since 1970-01-01, timestamps as microseconds since the epoch, UTC), shared by the time
 * functions and the interval operators. Pure integer arithmetic, so years before 1970 and after
 * 2038 behave like any other.
 */
import type { Interval } from '../sql-types.js';

export const MICROS_PER_SECOND = 1_000_000n;
export const MICROS_PER_MINUTE = 60_000_000n;
export const MICROS_PER_HOUR = 3_600_000_000n;
export const MICROS_PER_DAY = 86_400_000_000n;
/** PostgreSQL counts a month as 30 days when it must compare or justify intervals. */
export const DAYS_PER_MONTH = 30;

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
 * the month's length), then days, then the time part.
 */
export function addInterval(micros: bigint, iv: Interval): bigint {
  let t = micros;
  if (iv.months !== 0) {
    const f = timestampFields(t);
    const total = f.year * 12 + (f.month - 1) + iv.months;
    const year = Math.floor(total / 12);
    const month = total - year * 12 + 1;
    const day = Math.min(f.day, daysInMonth(year, month));
    t = BigInt(daysFromCivil(year, month, day)) * MICROS_PER_DAY + (t - BigInt(f.days) * MICROS_PER_DAY);
  }
  if (iv.days !== 0) t += BigInt(iv.days) * MICROS_PER_DAY;
  return t + iv.micros;
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
