/**
 * Date expression operators (manual: Date Expression Operators), in UTC: the parts of a date
 * (`$year` ... `$millisecond`, `$dayOfWeek` 1 = Sunday, `$dayOfYear`, `$isoDayOfWeek`) and
 * `$dateToString` with the common format specifiers. A `timezone` other than UTC is refused (no
 * time-zone database); null or missing gives null; another type is an error. The operators with
 * units are in date-arithmetic.ts, the constructors in date-from-parts.ts and date-from-string.ts.
 */

import { bsonTypeOf, isPlainObject } from '../../values.js';
import { constantArg, exprError, isNullish, type Expr, type ExprContext, type ExprOperator } from './expression.js';

const UTC = new Set(['UTC', 'GMT', 'Z', '+00:00', '+0000', '+00', '-00:00', 'Etc/UTC', 'Etc/GMT']);

/**
 * Checks a `timezone` value: true for UTC, false for null or missing (the operator gives null, as
 * MongoDB's do); another zone is refused. @throws QUERY_ERROR
 */
export function utcZone(zone: unknown, name: string): boolean {
  if (isNullish(zone)) return false;
  if (typeof zone !== 'string') exprError(name, `timezone must evaluate to a string, found ${bsonTypeOf(zone)}`);
  if (!UTC.has(zone)) exprError(name, `unsupported: time zones other than UTC ('${zone}')`);
  return true;
}

/**
 * Compiles a `timezone` argument: a constant one is checked now. The function is true for UTC and
 * false for null or missing. @throws QUERY_ERROR
 */
export function compileZone(spec: unknown, ctx: ExprContext, name: string): (scope: Parameters<Expr>[0]) => boolean {
  const constant = constantArg(spec);
  if (constant !== undefined) {
    const ok = utcZone(constant.value, name);
    return () => ok;
  }
  const zone = ctx.compile(spec);
  return (scope) => utcZone(zone(scope), name);
}

function date(v: unknown, name: string): Date {
  if (!(v instanceof Date)) exprError(name, `can't convert from BSON type ${bsonTypeOf(v)} to Date`);
  return v;
}

// The argument: a date expression (alone or as a one-element list), or {date, timezone}.
function dateArg(args: unknown, ctx: ExprContext, name: string): Expr {
  if (isPlainObject(args) && Object.hasOwn(args, 'date') && !Object.keys(args)[0]!.startsWith('$')) {
    for (const k of Object.keys(args)) if (k !== 'date' && k !== 'timezone') exprError(name, `unrecognized option to ${name}: ${k}`);
    const d = ctx.compile(args['date']);
    if (!Object.hasOwn(args, 'timezone')) return d;
    const zone = compileZone(args['timezone'], ctx, name);
    return (scope) => (zone(scope) ? d(scope) : null);
  }
  // MongoDB's arity error: a list is the argument list, not an array literal.
  if (Array.isArray(args) && args.length !== 1) exprError(name, `Expression ${name} takes exactly 1 arguments. ${args.length} were passed in.`);
  return ctx.compile(Array.isArray(args) ? args[0] : args);
}

function part(fn: (d: Date) => number): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      const d = dateArg(args, ctx, name);
      return (scope) => {
        const v = d(scope);
        return isNullish(v) ? null : fn(date(v, name));
      };
    },
  };
}

function dayOfYear(d: Date): number {
  return Math.floor((d.getTime() - Date.UTC(d.getUTCFullYear(), 0, 1)) / 86_400_000) + 1;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

function format(d: Date, spec: string, name: string): string {
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
        out += String(d.getUTCDay() === 0 ? 7 : d.getUTCDay());
        break;
      case 'z':
        out += '+0000';
        break;
      case 'Z':
        out += '0';
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

const dateToString: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    if (!isPlainObject(args)) exprError(name, '$dateToString only supports an object as its argument');
    for (const k of Object.keys(args)) if (!['date', 'format', 'timezone', 'onNull'].includes(k)) exprError(name, `Unrecognized parameter to $dateToString: ${k}`);
    if (!Object.hasOwn(args, 'date')) exprError(name, "Missing 'date' parameter to $dateToString");
    const d = ctx.compile(args['date']);
    const zone = Object.hasOwn(args, 'timezone') ? compileZone(args['timezone'], ctx, name) : () => true;
    const fmt = Object.hasOwn(args, 'format') ? ctx.compile(args['format']) : () => '%Y-%m-%dT%H:%M:%S.%LZ';
    const onNull = Object.hasOwn(args, 'onNull') ? ctx.compile(args['onNull']) : () => null;
    return (scope) => {
      const v = d(scope);
      // A null date gives onNull; a null time zone gives null (MongoDB's order).
      const utc = zone(scope);
      if (isNullish(v)) return onNull(scope);
      if (!utc) return null;
      const spec = fmt(scope);
      if (typeof spec !== 'string') exprError(name, `$dateToString requires that 'format' be a string, found: ${bsonTypeOf(spec)}`);
      return format(date(v, name), spec, name);
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
  $isoDayOfWeek: part((d) => (d.getUTCDay() === 0 ? 7 : d.getUTCDay())),
  $dayOfYear: part(dayOfYear),
  $dateToString: dateToString,
};
