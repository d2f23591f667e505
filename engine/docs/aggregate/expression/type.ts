/**
 * Type expression operators (manual: Type Expression Operators): `$type` (BSON type names, with
 * tetradb's number typing: values.ts), `$isNumber`, and the conversions `$toString`, `$toInt`,
 * `$toLong`, `$toDouble`, `$toBool`, `$toDate` and `$convert` (with `onError`/`onNull`). null or
 * missing converts to null; a value that cannot convert is a QUERY_ERROR naming both types.
 * Strings convert to doubles by MongoDB's rules (parseDouble), not JavaScript's Number().
 */

import { parseDateString } from '../../ejson.js';
import { dateAt } from './arithmetic.js';
import { bsonTypeOf, isPlainObject, MISSING } from '../../values.js';
import { exprError, isNullish, unary, type ExprOperator } from './expression.js';
import { coerceToString } from './string.js';

type Target = 'string' | 'int' | 'long' | 'double' | 'bool' | 'date';

const TARGETS: Record<string, Target> = { string: 'string', int: 'int', long: 'long', double: 'double', bool: 'bool', date: 'date', 2: 'string', 16: 'int', 18: 'long', 1: 'double', 8: 'bool', 9: 'date' };

function cannot(v: unknown, to: Target, name: string): never {
  return exprError(name, `Unsupported conversion from ${bsonTypeOf(v)} to ${to} in $convert with no onError value`);
}

function integer(v: unknown, to: 'int' | 'long', name: string): number {
  let n: number;
  if (typeof v === 'number') n = Math.trunc(v);
  else if (typeof v === 'boolean') n = v ? 1 : 0;
  else if (typeof v === 'string') {
    if (!/^[+-]?\d+$/.test(v.trim()) || v.trim() !== v) exprError(name, `Failed to parse number '${v}' in $convert with no onError value: Did not consume whole string.`);
    n = Number(v);
  } else if (v instanceof Date) n = v.getTime();
  else return cannot(v, to, name);
  if (!Number.isFinite(n) || (to === 'int' ? n < -2147483648 || n > 2147483647 : !Number.isSafeInteger(n))) {
    exprError(name, `Conversion would overflow target type in $convert with no onError value: ${String(v)}`);
  }
  return n;
}

// What C's strtod reads at the start of a string (MongoDB parses doubles with it, glibc's): a
// decimal number with an optional exponent, inf or infinity, nan or nan(chars), or a hexadecimal
// number after a sign (MongoDB refuses a leading 0x itself, not -0x).
const DECIMAL_PREFIX = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/;
const INFINITY_PREFIX = /^([+-]?)inf(?:inity)?/i;
const NAN_PREFIX = /^[+-]?nan(?:\([0-9A-Za-z_]*\))?/i;
const HEX_PREFIX = /^([+-]?)0[xX]([0-9a-fA-F]*)(?:\.([0-9a-fA-F]*))?(?:[pP]([+-]?\d+))?/;
/** C's isspace in the C locale. */
const C_SPACE = /^[ \t\n\v\f\r]/;
/** The smallest normal double: strtod reports a result below it (or a non-zero one rounded to 0) as out of range. */
const MIN_NORMAL = 2.2250738585072014e-308;

/**
 * A string read as a double the way MongoDB reads one (NumberParser over strtod): the whole string
 * must be the number, without leading or trailing whitespace; `inf`, `infinity` and `nan` in any
 * case are numbers; values past the double range, or below its normal range, are out of range.
 * Returns the number, or MongoDB's reason it is not one.
 */
export function parseDouble(text: string): number | string {
  if (text === '') return 'Empty string';
  if (C_SPACE.test(text)) return 'Leading whitespace';
  let consumed: string;
  let value: number;
  let hex: RegExpExecArray | null;
  const inf = INFINITY_PREFIX.exec(text);
  const nan = NAN_PREFIX.exec(text);
  if (inf !== null) {
    consumed = inf[0];
    value = inf[1] === '-' ? -Infinity : Infinity;
  } else if (nan !== null) {
    consumed = nan[0];
    value = NaN;
  } else if ((hex = HEX_PREFIX.exec(text)) !== null && (hex[2] !== '' || (hex[3] ?? '') !== '')) {
    consumed = hex[0];
    const digits = hex[2]! + (hex[3] ?? '');
    value = (hex[1] === '-' ? -1 : 1) * Number.parseInt(digits, 16) * 2 ** (Number(hex[4] ?? 0) - 4 * (hex[3] ?? '').length);
    if (!Number.isFinite(value) || (value !== 0 && Math.abs(value) < MIN_NORMAL)) return 'Out of range';
  } else {
    const m = DECIMAL_PREFIX.exec(text);
    if (m === null) return 'Did not consume any digits';
    consumed = m[0];
    value = Number(consumed);
    const nonZero = /[1-9]/.test(consumed.split(/[eE]/)[0]!);
    if (!Number.isFinite(value) || (nonZero && Math.abs(value) < MIN_NORMAL)) return 'Out of range';
  }
  if (consumed.length !== text.length) return 'Did not consume whole string.';
  return value;
}

/** Converts a value that is neither null nor missing. @throws QUERY_ERROR */
export function convert(v: unknown, to: Target, name: string): unknown {
  switch (to) {
    case 'string':
      if (isPlainObject(v) || Array.isArray(v)) return cannot(v, to, name);
      // -0 keeps its sign, as MongoDB writes it ("-0"; String(-0) is "0").
      if (Object.is(v, -0)) return '-0';
      return typeof v === 'boolean' ? String(v) : coerceToString(v, name);
    case 'int':
    case 'long':
      return integer(v, to, name);
    case 'double':
      if (typeof v === 'number') return v;
      if (typeof v === 'boolean') return v ? 1 : 0;
      if (v instanceof Date) return v.getTime();
      if (typeof v === 'string') {
        if (v.startsWith('0x') || v.startsWith('0X')) exprError(name, `Illegal hexadecimal input in $convert with no onError value: ${v}`);
        const n = parseDouble(v);
        if (typeof n === 'string') exprError(name, `Failed to parse number '${v}' in $convert with no onError value: ${n}`);
        return n;
      }
      return cannot(v, to, name);
    case 'bool':
      if (typeof v === 'boolean') return v;
      if (typeof v === 'number') return v !== 0;
      if (typeof v === 'string' || v instanceof Date || isPlainObject(v) || Array.isArray(v)) return true;
      return cannot(v, to, name);
    case 'date':
      if (v instanceof Date) return v;
      if (typeof v === 'number') {
        if (!Number.isFinite(v)) exprError(name, `Attempt to convert ${v} to a date in $convert with no onError value`);
        return dateAt(Math.trunc(v), name);
      }
      if (typeof v === 'string') {
        const ms = parseDateString(v);
        if (ms === undefined) exprError(name, `Error parsing date string '${v}' in $convert with no onError value`);
        return dateAt(ms, name);
      }
      return cannot(v, to, name);
    default: {
      const never: never = to;
      throw new Error(`unknown conversion ${String(never)}`);
    }
  }
}

function to(target: Target): ExprOperator {
  return unary((v, name) => (isNullish(v) ? null : convert(v, target, name)));
}

const convertOperator: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    if (!isPlainObject(args)) exprError(name, '$convert expects an object of named arguments but found: ' + bsonTypeOf(args));
    for (const k of Object.keys(args)) if (!['input', 'to', 'onError', 'onNull'].includes(k)) exprError(name, `$convert found an unknown argument: ${k}`);
    if (!Object.hasOwn(args, 'input') || !Object.hasOwn(args, 'to')) exprError(name, "$convert requires 'input' and 'to'");
    const input = ctx.compile(args['input']);
    const target = ctx.compile(args['to']);
    const onError = Object.hasOwn(args, 'onError') ? ctx.compile(args['onError']) : undefined;
    const onNull = Object.hasOwn(args, 'onNull') ? ctx.compile(args['onNull']) : undefined;
    return (scope) => {
      const t = target(scope);
      const kind = typeof t === 'string' || typeof t === 'number' ? TARGETS[String(t)] : undefined;
      if (kind === undefined) exprError(name, `Unknown or unsupported type in $convert: ${String(t)}`);
      const v = input(scope);
      if (isNullish(v)) return onNull === undefined ? null : onNull(scope);
      if (onError === undefined) return convert(v, kind, name);
      try {
        return convert(v, kind, name);
      } catch {
        return onError(scope);
      }
    };
  },
};

export const typeOperators: Record<string, ExprOperator> = {
  $type: unary((v) => (v === MISSING ? 'missing' : bsonTypeOf(v))),
  $isNumber: unary((v) => typeof v === 'number'),
  $toString: to('string'),
  $toInt: to('int'),
  $toLong: to('long'),
  $toDouble: to('double'),
  $toBool: to('bool'),
  $toDate: to('date'),
  $convert: convertOperator,
};
