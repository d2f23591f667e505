/**
 * $dateFromParts (manual: $dateFromParts): a date from local parts in `timezone` (UTC without one;
 * time-zone.ts maps a local time a DST change skips or repeats as MongoDB does): calendar parts
 * (`year` 1-9999, `month`, `day`, `hour`, `minute`, `second`, `millisecond`) or ISO week parts
 * (`isoWeekYear` 1-9999, `isoWeek`, `isoDayOfWeek` and the time). Parts outside their natural range carry into
 * the next larger one, as MongoDB's do (month 14 is February of the next year, day 0 the last day
 * of the month before); month, day, hour, minute, isoWeek and isoDayOfWeek must lie in
 * [-32768, 32767]. A null or missing part gives null.
 */

import { bsonTypeOf } from '../../values.js';
import { dateAt } from './arithmetic.js';
import { compileZone } from './date.js';
import { exprError, isIntegral64, isNullish, type Expr, type ExprOperator } from './expression.js';
import type { Scope } from './expression.js';
import type { TimeZone } from './time-zone.js';

const CALENDAR = ['year', 'month', 'day'];
const ISO = ['isoWeekYear', 'isoWeek', 'isoDayOfWeek'];
const TIME = ['hour', 'minute', 'second', 'millisecond'];
/** The parts MongoDB bounds to a 16-bit integer (the others only to 64 bits). */
const BOUNDED = new Set(['month', 'day', 'hour', 'minute', 'isoWeek', 'isoDayOfWeek']);
const DEFAULTS: Readonly<Record<string, number>> = { year: 1970, month: 1, day: 1, isoWeekYear: 1970, isoWeek: 1, isoDayOfWeek: 1, hour: 0, minute: 0, second: 0, millisecond: 0 };
const DAY_MS = 86_400_000;

/** Milliseconds since the epoch of a UTC date and time whose parts may carry over. */
export function utcFromParts(year: number, month: number, day: number, hour: number, minute: number, second: number, millisecond: number): number {
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999. Both carry over.
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, 1);
  return d.getTime() + (day - 1) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + millisecond;
}

/** Milliseconds of the Monday of ISO week 1 of `isoYear` (the week holding January 4th). */
function isoWeekOne(isoYear: number): number {
  const jan4 = utcFromParts(isoYear, 1, 4, 0, 0, 0, 0);
  const isoDay = ((Math.floor(jan4 / DAY_MS) + 3) % 7 + 7) % 7; // 0 = Monday
  return jan4 - isoDay * DAY_MS;
}

/** The epoch milliseconds of 1970-01-01T00:00:00Z. */
const EPOCH = 0;

/**
 * The instant of a local time built from parts, as MongoDB's createFromDateParts: timelib's fresh
 * time carries the DST flag of the epoch in the zone, which decides a time that happens twice.
 */
export function fromLocal(zone: TimeZone, wall: number): number {
  return zone.instant(wall, zone.isDst(EPOCH));
}

const dateFromParts: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    if (args === null || typeof args !== 'object' || Array.isArray(args) || args instanceof Date) exprError(name, `$dateFromParts requires an object as an argument, found: ${bsonTypeOf(args)}`);
    const a = args as Record<string, unknown>;
    for (const k of Object.keys(a)) if (![...CALENDAR, ...ISO, ...TIME, 'timezone'].includes(k)) exprError(name, `Unrecognized argument to $dateFromParts: ${k}`);
    const has = (k: string): boolean => Object.hasOwn(a, k);
    if (!has('year') && !has('isoWeekYear')) exprError(name, "$dateFromParts requires either 'year' or 'isoWeekYear' to be present");
    if ((has('year') || has('month') || has('day')) && ISO.some(has)) exprError(name, '$dateFromParts does not allow mixing natural dates with ISO dates');
    const iso = !has('year');
    const part = (k: string): Expr | undefined => (has(k) ? ctx.compile(a[k]) : undefined);
    const parts = new Map<string, Expr | undefined>([...TIME, ...(iso ? ISO : CALENDAR)].map((k) => [k, part(k)]));
    const zoneArg = compileZone(a, ctx, name);
    // A part's value, or undefined when it is null or missing (the result is then null).
    const read = (k: string, scope: Scope): number | undefined => {
      const e = parts.get(k);
      if (e === undefined) return DEFAULTS[k]!;
      const v = e(scope);
      if (isNullish(v)) return undefined;
      if (!isIntegral64(v)) exprError(name, `'${k}' must evaluate to an integer, found ${bsonTypeOf(v)} with value ${String(v)}`);
      if (BOUNDED.has(k) && (v < -32768 || v > 32767)) exprError(name, `'${k}' must evaluate to a value in the range [-32768, 32767]; value ${v} is not in range`);
      return v;
    };
    return (scope) => {
      const time: number[] = [];
      for (const k of TIME) {
        const v = read(k, scope);
        if (v === undefined) return null;
        time.push(v);
      }
      const zone = zoneArg(scope);
      if (zone === null) return null;
      const [hour, minute, second, millisecond] = time as [number, number, number, number];
      const [y, m, d] = (iso ? ISO : CALENDAR).map((k) => read(k, scope));
      if (y === undefined || m === undefined || d === undefined) return null;
      if (y < 1 || y > 9999) exprError(name, `'${iso ? 'isoWeekYear' : 'year'}' must evaluate to an integer in the range 1 to 9999, found ${y}`);
      const wall = iso
        ? isoWeekOne(y) + ((m - 1) * 7 + (d - 1)) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + millisecond
        : utcFromParts(y, m, d, hour, minute, second, millisecond);
      return dateAt(fromLocal(zone, wall), name);
    };
  },
};

export const dateFromPartsOperators: Record<string, ExprOperator> = {
  $dateFromParts: dateFromParts,
};
