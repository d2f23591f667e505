/**
 * Arithmetic expression operators (manual: Arithmetic Expression Operators). null or missing in
 * gives null out; any other non-number is an error naming the type, as in MongoDB. `$add` also
 * adds milliseconds to one date, and `$subtract` subtracts dates and milliseconds from dates.
 */

import { bsonTypeOf } from '../../values.js';
import { compileArgs, exprError, isNullish, unary, type ExprOperator } from './expression.js';

function num(v: unknown, name: string): number {
  if (typeof v !== 'number') exprError(name, `${name} only supports numeric types, not ${bsonTypeOf(v)}`);
  return v;
}

/**
 * The date `ms` milliseconds after the epoch. MongoDB's dates are 64-bit milliseconds; a
 * JavaScript Date holds +-8.64e15 (years -271821 to 275760): past that, "date overflow" as
 * MongoDB reports one past its range, never an invalid Date rendered as null.
 */
export function dateAt(ms: number, name: string): Date {
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) exprError(name, `date overflow in ${name}`);
  return d;
}

const add: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const parts = compileArgs(args, ctx, name, 0, Infinity);
    return (scope) => {
      let total = 0;
      let date: Date | undefined;
      for (const e of parts) {
        const v = e(scope);
        if (isNullish(v)) return null;
        if (v instanceof Date) {
          if (date !== undefined) exprError(name, 'only one date allowed in an $add expression');
          date = v;
        } else if (typeof v === 'number') total += v;
        else exprError(name, `$add only supports numeric or date types, not ${bsonTypeOf(v)}`);
      }
      return date === undefined ? total : dateAt(date.getTime() + total, name);
    };
  },
};

const multiply: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const parts = compileArgs(args, ctx, name, 0, Infinity);
    return (scope) => {
      let product = 1;
      for (const e of parts) {
        const v = e(scope);
        if (isNullish(v)) return null;
        product *= num(v, name);
      }
      return product;
    };
  },
};

function binary(fn: (a: unknown, b: unknown, name: string) => unknown): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      const [a, b] = compileArgs(args, ctx, name, 2);
      return (scope) => {
        const x = a!(scope);
        const y = b!(scope);
        if (isNullish(x) || isNullish(y)) return null;
        return fn(x, y, name);
      };
    },
  };
}

const subtract = binary((a, b, name) => {
  if (a instanceof Date) {
    if (b instanceof Date) return a.getTime() - b.getTime();
    if (typeof b === 'number') return dateAt(a.getTime() - b, name);
  } else if (typeof a === 'number' && typeof b === 'number') return a - b;
  return exprError(name, `can't $subtract ${bsonTypeOf(b)} from ${bsonTypeOf(a)}`);
});

const divide = binary((a, b, name) => {
  if (num(b, name) === 0) exprError(name, "can't $divide by zero");
  return num(a, name) / (b as number);
});

const mod = binary((a, b, name) => {
  if (num(b, name) === 0) exprError(name, "can't $mod by zero");
  return num(a, name) % (b as number);
});

const pow = binary((a, b, name) => {
  const base = num(a, name);
  const exponent = num(b, name);
  if (base === 0 && exponent < 0) exprError(name, '$pow cannot take a base of 0 and a negative exponent');
  return base ** exponent;
});

const log = binary((a, b, name) => {
  const x = num(a, name);
  const base = num(b, name);
  if (x <= 0 || base <= 0 || base === 1) exprError(name, `$log's argument must be a positive number and its base a positive number other than 1, but is ${x} and ${base}`);
  return Math.log(x) / Math.log(base);
});

function math(fn: (x: number, name: string) => number): ExprOperator {
  return unary((v, name) => (isNullish(v) ? null : fn(num(v, name), name)));
}

// $round and $trunc take an optional number of decimal places (-20 to 100).
function rounding(mode: 'round' | 'trunc'): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      const [a, p] = compileArgs(args, ctx, name, 1, 2);
      return (scope) => {
        const v = a!(scope);
        const placesValue = p === undefined ? 0 : p(scope);
        if (isNullish(v) || isNullish(placesValue)) return null;
        const x = num(v, name);
        const places = num(placesValue, name);
        if (!Number.isInteger(places) || places < -20 || places > 100) exprError(name, `${name}'s place must be an integer between -20 and 100, but is ${places}`);
        const f = 10 ** places;
        if (mode === 'trunc') return Math.trunc(x * f) / f;
        // MongoDB rounds half to even.
        const scaled = x * f;
        const floor = Math.floor(scaled);
        const diff = scaled - floor;
        const rounded = diff > 0.5 ? floor + 1 : diff < 0.5 ? floor : floor % 2 === 0 ? floor : floor + 1;
        return rounded / f;
      };
    },
  };
}

export const arithmeticOperators: Record<string, ExprOperator> = {
  $add: add,
  $subtract: subtract,
  $multiply: multiply,
  $divide: divide,
  $mod: mod,
  $pow: pow,
  $log: log,
  $abs: math(Math.abs),
  $ceil: math(Math.ceil),
  $floor: math(Math.floor),
  $exp: math(Math.exp),
  $sqrt: math((x, name) => {
    if (x < 0) exprError(name, `$sqrt's argument must be greater than or equal to 0, but is ${x}`);
    return Math.sqrt(x);
  }),
  $ln: math((x, name) => {
    if (x <= 0) exprError(name, `$ln's argument must be a positive number, but is ${x}`);
    return Math.log(x);
  }),
  $log10: math((x, name) => {
    if (x <= 0) exprError(name, `$log10's argument must be a positive number, but is ${x}`);
    return Math.log10(x);
  }),
  $round: rounding('round'),
  $trunc: rounding('trunc'),
};
