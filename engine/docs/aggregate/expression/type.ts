/**
 * Type expression operators (manual: Type Expression Operators): `$type` (BSON type names, with
 * tetradb's number typing: values.ts), `$isNumber`, and the conversions `$toString`, `$toInt`,
 * `$toLong`, `$toDouble`, `$toBool`, `$toDate` and `$convert` (with `onError`/`onNull`). null or
 * missing converts to null; a value that cannot convert is a QUERY_ERROR naming both types.
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
        const n = Number(v);
        if (v.trim() === '' || (Number.isNaN(n) && v !== 'NaN')) exprError(name, `Failed to parse number '${v}' in $convert with no onError value`);
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
