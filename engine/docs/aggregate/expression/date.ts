/**
 * Date expression operators (manual: Date Expression Operators) in a time zone (time-zone.ts; UTC
 * without one): the parts of a date (`$year` ... `$millisecond`, `$dayOfWeek` 1 = Sunday,
 * `$dayOfYear`, `$isoDayOfWeek`, `$isoWeek`, `$isoWeekYear`, `$week`), `$dateToParts` and
 * `$dateToString` with MongoDB's format specifiers. A null or missing date or time zone gives null;
 * another type is an error. The operators with units are in date-arithmetic.ts, the constructors
 * in date-from-parts.ts and date-from-string.ts.
 */

import { bsonTypeOf, isPlainObject } from '../../values.js';
import { constantArg, exprError, isNullish, type Expr, type ExprContext, type ExprOperator, type Scope } from './expression.js';
import { localTime, parseTimeZone, UTC, type TimeZone } from './time-zone.js';

/** A compiled `timezone` argument: the zone, or null when it is null or missing (the operator gives null). */
export type ZoneArg = (scope: Scope) => TimeZone | null;

/**
 * The zone a `timezone` value names, null for null or missing. `context` prefixes the error, as
 * $dateDiff and $dateTrunc do ("... parameter 'timezone' value parsing failed").
 * @throws QUERY_ERROR (40517 not a string, 40485 unknown zone)
 */
export function zoneOf(v: unknown, name: string, context?: string): TimeZone | null {
  if (isNullish(v)) return null;
  if (typeof v !== 'string') {
    const message = `timezone must evaluate to a string, found ${bsonTypeOf(v)}`;
    exprError(name, context === undefined ? message : `${context} :: caused by :: ${message}`);
  }
  return parseTimeZone(v, name, context);
}

/**
 * Compiles the `timezone` argument of `args` (UTC when absent): a constant one is checked now,
 * another when it is read. @throws QUERY_ERROR
 */
export function compileZone(args: Record<string, unknown>, ctx: ExprContext, name: string, context?: string): ZoneArg {
  if (!Object.hasOwn(args, 'timezone')) return () => UTC;
  const constant = constantArg(args['timezone']);
  if (constant !== undefined) {
    const zone = zoneOf(constant.value, name, context);
    return () => zone;
  }
  const e = ctx.compile(args['timezone']);
  return (scope) => zoneOf(e(scope), name, context);
}

/** A date argument's value as a date (MongoDB's coerceToDate). @throws QUERY_ERROR */
function date(v: unknown, name: string): Date {
  if (!(v instanceof Date)) exprError(name, `can't convert from BSON type ${bsonTypeOf(v)} to Date`);
  return v;
}

/** The local date and time of `d` in `zone`, as a Date whose UTC fields are the local ones. */
function local(d: Date, zone: TimeZone): Date {
  return zone === UTC ? d : new Date(localTime(zone, d.getTime()));
}

// The argument: a date expression (alone or as a one-element list), or {date, timezone}.
function dateArg(args: unknown, ctx: ExprContext, name: string): { date: Expr; zone: ZoneArg } {
  if (isPlainObject(args) && Object.hasOwn(args, 'date') && !Object.keys(args)[0]!.startsWith('$')) {
    for (const k of Object.keys(args)) if (k !== 'date' && k !== 'timezone') exprError(name, `unrecognized option to ${name}: ${k}`);
    return { date: ctx.compile(args['date']), zone: compileZone(args, ctx, name) };
  }
  // MongoDB's arity error: a list is the argument list, not an array literal.
  if (Array.isArray(args) && args.length !== 1) exprError(name, `Expression ${name} takes exactly 1 arguments. ${args.length} were passed in.`);
  return { date: ctx.compile(Array.isArray(args) ? args[0] : args), zone: () => UTC };
}

/** A part of the local date: `fn` reads the UTC fields of the local time. */
function part(fn: (local: Date) => number): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      const a = dateArg(args, ctx, name);
      return (scope) => {
        // The date is read and checked before the time zone (MongoDB's order).
        const v = a.date(scope);
        if (isNullish(v)) return null;
        const d = date(v, name);
        const zone = a.zone(scope);
        return zone === null ? null : fn(local(d, zone));
      };
    },
  };
}

function dayOfYear(d: Date): number {
  const jan1 = new Date(0);
  jan1.setUTCFullYear(d.getUTCFullYear(), 0, 1);
  return Math.floor((d.getTime() - jan1.getTime()) / 86_400_000) + 1;
}

/** Monday 1 ... Sunday 7. */
const isoDayOfWeek = (d: Date): number => (d.getUTCDay() === 0 ? 7 : d.getUTCDay());

/** The ISO 8601 week-numbering year and week of a date: those of its week's Thursday. */
function isoWeek(d: Date): { year: number; week: number } {
  const thursday = new Date(d.getTime() + (4 - isoDayOfWeek(d)) * 86_400_000);
  return { year: thursday.getUTCFullYear(), week: Math.floor((dayOfYear(thursday) - 1) / 7) + 1 };
}

/** MongoDB's $week (strftime %U): weeks start on Sunday, days before the year's first Sunday are week 0. */
function week(d: Date): number {
  return Math.floor((dayOfYear(d) - (d.getUTCDay() + 1) + 7) / 7);
}

const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** `d` formatted in `zone` (MongoDB's outputDateWithFormat). @throws QUERY_ERROR */
function format(instant: Date, zone: TimeZone, spec: string, name: string): string {
  const d = local(instant, zone);
  let out = '';
  for (let i = 0; i < spec.length; i++) {
    const c = spec[i]!;
    if (c !== '%') {
      out += c;
      continue;
    }
    const f = spec[++i];
    switch (f) {
      case 'Y': {
        // MongoDB formats four-digit years only (error 18537 otherwise).
        const year = d.getUTCFullYear();
        if (year < 0 || year > 9999) exprError(name, `$dateToString is only defined on year 0-9999, tried to use year ${year}`);
        out += pad(year, 4);
        break;
      }
      case 'm':
        out += pad(d.getUTCMonth() + 1);
        break;
      case 'd':
        out += pad(d.getUTCDate());
        break;
      case 'H':
        out += pad(d.getUTCHours());
        break;
      case 'M':
        out += pad(d.getUTCMinutes());
        break;
      case 'S':
        out += pad(d.getUTCSeconds());
        break;
      case 'L':
        out += pad(d.getUTCMilliseconds(), 3);
        break;
      case 'j':
        out += pad(dayOfYear(d), 3);
        break;
      case 'w':
        out += String(d.getUTCDay() + 1);
        break;
      case 'u':
        out += String(isoDayOfWeek(d));
        break;
      case 'U':
        out += pad(week(d));
        break;
      case 'V':
        out += pad(isoWeek(d).week);
        break;
      case 'G':
        out += pad(isoWeek(d).year, 4);
        break;
      case 'b':
        out += MONTH_NAMES[d.getUTCMonth()]!.slice(0, 3);
        break;
      case 'B':
        out += MONTH_NAMES[d.getUTCMonth()]!;
        break;
      case 'z': {
        // ±hhmm, hours and minutes of the offset each truncated toward zero.
        const offset = zone.offset(instant.getTime());
        out += (offset < 0 ? '-' : '+') + pad(Math.abs(Math.trunc(offset / 3_600_000))) + pad(Math.abs(Math.trunc(offset / 60_000) % 60));
        break;
      }
      case 'Z':
        out += String(Math.trunc(zone.offset(instant.getTime()) / 60_000));
        break;
      case '%':
        out += '%';
        break;
      default:
        exprError(name, `Invalid format character '%${f ?? ''}' in format string`);
    }
  }
  return out;
}

// A date any format can print (years 0-9999): formatting it checks a format's specifiers.
const EPOCH = new Date(0);

const dateToString: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    if (!isPlainObject(args)) exprError(name, '$dateToString only supports an object as its argument');
    for (const k of Object.keys(args)) if (!['date', 'format', 'timezone', 'onNull'].includes(k)) exprError(name, `Unrecognized parameter to $dateToString: ${k}`);
    if (!Object.hasOwn(args, 'date')) exprError(name, "Missing 'date' parameter to $dateToString");
    const d = ctx.compile(args['date']);
    const zoneArg = compileZone(args, ctx, name);
    const fmt = Object.hasOwn(args, 'format') ? ctx.compile(args['format']) : undefined;
    const onNull = Object.hasOwn(args, 'onNull') ? ctx.compile(args['onNull']) : () => null;
    return (scope) => {
      const v = d(scope);
      // MongoDB's order: a format that is given and not null is checked first, whatever the date;
      // then a null date gives onNull, a null time zone or format null.
      const given = fmt === undefined ? undefined : fmt(scope);
      if (given !== undefined && !isNullish(given)) {
        if (typeof given !== 'string') exprError(name, `$dateToString requires that 'format' be a string, found: ${bsonTypeOf(given)}`);
        format(EPOCH, UTC, given, name); // its specifiers, checked
      }
      const zone = zoneArg(scope);
      if (isNullish(v)) return onNull(scope);
      if (zone === null) return null;
      if (fmt !== undefined && isNullish(given)) return null;
      // Without a format, the ISO form: with a Z in UTC only, as MongoDB's kIsoFormatStringZ / NonZ.
      const spec = fmt === undefined ? (zone.utc ? '%Y-%m-%dT%H:%M:%S.%LZ' : '%Y-%m-%dT%H:%M:%S.%L') : (given as string);
      return format(date(v, name), zone, spec, name);
    };
  },
};

const dateToParts: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    if (!isPlainObject(args)) exprError(name, '$dateToParts only supports an object as its argument');
    for (const k of Object.keys(args)) if (!['date', 'timezone', 'iso8601'].includes(k)) exprError(name, `Unrecognized argument to $dateToParts: ${k}`);
    if (!Object.hasOwn(args, 'date')) exprError(name, "Missing 'date' parameter to $dateToParts");
    const d = ctx.compile(args['date']);
    const zoneArg = compileZone(args, ctx, name);
    const iso8601 = Object.hasOwn(args, 'iso8601') ? ctx.compile(args['iso8601']) : () => false;
    return (scope) => {
      // MongoDB's order: the date, the time zone, the flag, then null checks of the date.
      const v = d(scope);
      const zone = zoneArg(scope);
      if (zone === null) return null;
      const iso = iso8601(scope);
      if (isNullish(iso)) return null;
      if (typeof iso !== 'boolean') exprError(name, `iso8601 must evaluate to a bool, found ${bsonTypeOf(iso)}`);
      if (isNullish(v)) return null;
      const l = local(date(v, name), zone);
      const time = { hour: l.getUTCHours(), minute: l.getUTCMinutes(), second: l.getUTCSeconds(), millisecond: l.getUTCMilliseconds() };
      if (iso) {
        const w = isoWeek(l);
        return { isoWeekYear: w.year, isoWeek: w.week, isoDayOfWeek: isoDayOfWeek(l), ...time };
      }
      return { year: l.getUTCFullYear(), month: l.getUTCMonth() + 1, day: l.getUTCDate(), ...time };
    };
  },
};

export const dateOperators: Record<string, ExprOperator> = {
  $year: part((d) => d.getUTCFullYear()),
  $month: part((d) => d.getUTCMonth() + 1),
  $dayOfMonth: part((d) => d.getUTCDate()),
  $hour: part((d) => d.getUTCHours()),
  $minute: part((d) => d.getUTCMinutes()),
  $second: part((d) => d.getUTCSeconds()),
  $millisecond: part((d) => d.getUTCMilliseconds()),
  $dayOfWeek: part((d) => d.getUTCDay() + 1),
  $isoDayOfWeek: part(isoDayOfWeek),
  $dayOfYear: part(dayOfYear),
  $week: part(week),
  $isoWeek: part((d) => isoWeek(d).week),
  $isoWeekYear: part((d) => isoWeek(d).year),
  $dateToString: dateToString,
  $dateToParts: dateToParts,
};
