import { roundHalfEven } from '../sql-cast.js';
import { checkFloat } from '../operators.js';
import { makeInt, sqlFail, type NonNullSqlValue, type SqlValue } from '../sql-types.js';
import { Decimal, decimalSqrt } from '../decimal.js';
import { noFunction, strict, type FunctionDef } from './function-def.js';
import { numericExp, numericLn, numericLog, numericPower } from './numeric-math.js';

const f = (v: NonNullSqlValue): number => v.value as number;
const d = (v: NonNullSqlValue): Decimal => v.value as Decimal;
const float = (value: number): SqlValue => ({ type: 'float8', value });
const num = (value: Decimal): SqlValue => ({ type: 'numeric', value });

/** float8 logarithms: PostgreSQL's errors for zero and negative arguments. */
function floatLog(x: number, log: (x: number) => number): number {
  if (x === 0) sqlFail('2201E', 'cannot take logarithm of zero');
  if (x < 0) sqlFail('2201E', 'cannot take logarithm of a negative number');
  return log(x);
}

function floatExp(x: number): number {
  const r = Math.exp(x);
  return checkFloat(r, Number.isFinite(x), x !== -Infinity && Number.isFinite(x));
}

/** trunc(numeric, s): toward zero at s decimals; a negative s zeroes digits left of the point. */
function truncNumeric(x: Decimal, s: number): Decimal {
  if (s >= 0) return x.trunc(s);
  const f = 10n ** BigInt(x.scale - s);
  return new Decimal((x.unscaled / f) * 10n ** BigInt(-s), 0);
}

function gcdBig(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

type IntType = 'int4' | 'int8';
const intOf = (v: NonNullSqlValue): bigint => BigInt(v.value as number | bigint);

function intGcd(type: IntType, a: bigint, b: bigint): SqlValue {
  return makeInt(type, gcdBig(a, b));
}

function intLcm(type: IntType, a: bigint, b: bigint): SqlValue {
  if (a === 0n || b === 0n) return makeInt(type, 0n);
  const r = (a / gcdBig(a, b)) * b;
  return makeInt(type, r < 0n ? -r : r);
}

/** gcd/lcm on numerics: exact on the common scale. */
function numericGcdLcm(a: Decimal, b: Decimal, lcm: boolean): Decimal {
  const s = Math.max(a.scale, b.scale);
  const x = a.rescale(s).unscaled;
  const y = b.rescale(s).unscaled;
  if (!lcm) return new Decimal(gcdBig(x, y), s);
  if (x === 0n || y === 0n) return new Decimal(0n, s);
  const r = (x / gcdBig(x, y)) * y;
  return new Decimal(r < 0n ? -r : r, s);
}

function widthBucketCheck(count: number, lowEqHigh: boolean): void {
  if (count <= 0) sqlFail('2201G', 'count must be greater than zero');
  if (lowEqHigh) sqlFail('2201G', 'lower bound cannot equal upper bound');
}

function widthBucketFloat(op: number, low: number, high: number, count: number): number {
  widthBucketCheck(count, low === high);
  if ([op, low, high].some(Number.isNaN)) sqlFail('2201G', 'operand, lower bound, and upper bound cannot be NaN');
  if (!Number.isFinite(low) || !Number.isFinite(high)) sqlFail('2201G', 'lower and upper bounds must be finite');
  if (low < high) {
    if (op < low) return 0;
    if (op >= high) return count + 1;
    return Math.floor((count * (op - low)) / (high - low)) + 1;
  }
  if (op > low) return 0;
  if (op <= high) return count + 1;
  return Math.floor((count * (low - op)) / (low - high)) + 1;
}

function widthBucketNumeric(op: Decimal, low: Decimal, high: Decimal, count: number): number {
  widthBucketCheck(count, low.cmp(high) === 0);
  const s = Math.max(op.scale, low.scale, high.scale);
  const [o, l, h] = [op, low, high].map((d) => d.rescale(s).unscaled) as [bigint, bigint, bigint];
  const n = BigInt(count);
  if (l < h) {
    if (o < l) return 0;
    if (o >= h) return count + 1;
    return Number((n * (o - l)) / (h - l)) + 1;
  }
  if (o > l) return 0;
  if (o <= h) return count + 1;
  return Number((n * (l - o)) / (l - h)) + 1;
}

/** random(): volatile, a new value on every evaluation (never folded). */
const random: FunctionDef = {
  compile(name, args) {
    if (args.length === 0) return { type: 'float8', evaluate: () => float(Math.random()) };
    if (args.length !== 2) return noFunction(name, args);
    // random(min, max) (PostgreSQL 17): uniform over the closed integer range.
    return strict(
      {
        args: ['int4', 'int4'],
        returns: 'int4',
        impl: ([lo, hi]) => {
          const a = f(lo!);
          const b = f(hi!);
          if (a > b) sqlFail('22023', 'lower bound must be less than or equal to upper bound');
          return { type: 'int4', value: a + Math.floor(Math.random() * (b - a + 1)) };
        },
      },
      {
        args: ['int8', 'int8'],
        returns: 'int8',
        impl: ([lo, hi]) => {
          const a = intOf(lo!);
          const b = intOf(hi!);
          if (a > b) sqlFail('22023', 'lower bound must be less than or equal to upper bound');
          return makeInt('int8', a + BigInt(Math.floor(Math.random() * Number(b - a + 1n))));
        },
      },
    ).compile(name, args);
  },
};

const floatFn = (fn: (x: number) => number): FunctionDef => strict({ args: ['float8'], returns: 'float8', impl: ([x]) => float(fn(f(x!))) });

function floatPower(x: number, y: number): number {
  if (x === 0 && y < 0) sqlFail('2201F', 'zero raised to a negative power is undefined');
  if (x < 0 && !Number.isInteger(y)) sqlFail('2201F', 'a negative number raised to a non-integer power yields a complex result');
  const r = Math.pow(x, y);
  return checkFloat(r, Number.isFinite(x) && Number.isFinite(y), x !== 0);
}

export const MATH_FUNCTIONS: Record<string, FunctionDef> = {
  abs: strict(
    // float8 first: an unknown argument resolves to the preferred numeric type, as PostgreSQL.
    { args: ['float8'], returns: 'float8', impl: ([x]) => float(Math.abs(f(x!))) },
    { args: ['int2'], returns: 'int2', impl: ([x]) => makeInt('int2', BigInt(Math.abs(f(x!)))) },
    { args: ['int4'], returns: 'int4', impl: ([x]) => makeInt('int4', BigInt(Math.abs(f(x!)))) },
    { args: ['int8'], returns: 'int8', impl: ([x]) => makeInt('int8', (x!.value as bigint) < 0n ? -(x!.value as bigint) : (x!.value as bigint)) },
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(d(x!).abs()) },
  ),
  round: strict(
    { args: ['float8'], returns: 'float8', impl: ([x]) => float(roundHalfEven(f(x!))) },
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(d(x!).round(0)) },
    { args: ['numeric', 'int4'], returns: 'numeric', impl: ([x, s]) => num(d(x!).round(f(s!))) },
  ),
  ceil: strict(
    { args: ['float8'], returns: 'float8', impl: ([x]) => float(Math.ceil(f(x!))) },
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(d(x!).ceil()) },
  ),
  ceiling: strict(
    { args: ['float8'], returns: 'float8', impl: ([x]) => float(Math.ceil(f(x!))) },
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(d(x!).ceil()) },
  ),
  floor: strict(
    { args: ['float8'], returns: 'float8', impl: ([x]) => float(Math.floor(f(x!))) },
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(d(x!).floor()) },
  ),
  mod: strict(
    { args: ['int2', 'int2'], returns: 'int2', impl: ([a, b]) => intMod('int2', a!, b!) },
    { args: ['int4', 'int4'], returns: 'int4', impl: ([a, b]) => intMod('int4', a!, b!) },
    { args: ['int8', 'int8'], returns: 'int8', impl: ([a, b]) => intMod('int8', a!, b!) },
    { args: ['numeric', 'numeric'], returns: 'numeric', impl: ([a, b]) => num(d(a!).mod(d(b!))) },
  ),
  power: strict(
    { args: ['float8', 'float8'], returns: 'float8', impl: ([x, y]) => float(floatPower(f(x!), f(y!))) },
    { args: ['numeric', 'numeric'], returns: 'numeric', impl: ([x, y]) => num(numericPower(d(x!), d(y!))) },
  ),
  pow: strict(
    { args: ['float8', 'float8'], returns: 'float8', impl: ([x, y]) => float(floatPower(f(x!), f(y!))) },
    { args: ['numeric', 'numeric'], returns: 'numeric', impl: ([x, y]) => num(numericPower(d(x!), d(y!))) },
  ),
  pi: strict({ args: [], returns: 'float8', impl: () => float(Math.PI) }),
  exp: strict(
    { args: ['float8'], returns: 'float8', impl: ([x]) => float(floatExp(f(x!))) },
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(numericExp(d(x!))) },
  ),
  ln: strict(
    { args: ['float8'], returns: 'float8', impl: ([x]) => float(floatLog(f(x!), Math.log)) },
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(numericLn(d(x!))) },
  ),
  log: strict(
    { args: ['float8'], returns: 'float8', impl: ([x]) => float(floatLog(f(x!), Math.log10)) },
    // log(numeric) is log(10, x) in PostgreSQL, with that function's result scale.
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(numericLog(new Decimal(10n, 0), d(x!))) },
    { args: ['numeric', 'numeric'], returns: 'numeric', impl: ([b, x]) => num(numericLog(d(b!), d(x!))) },
  ),
  log10: strict(
    { args: ['float8'], returns: 'float8', impl: ([x]) => float(floatLog(f(x!), Math.log10)) },
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(numericLog(new Decimal(10n, 0), d(x!))) },
  ),
  trunc: strict(
    { args: ['float8'], returns: 'float8', impl: ([x]) => float(Math.trunc(f(x!))) },
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(d(x!).trunc(0)) },
    { args: ['numeric', 'int4'], returns: 'numeric', impl: ([x, s]) => num(truncNumeric(d(x!), f(s!))) },
  ),
  sign: strict(
    { args: ['float8'], returns: 'float8', impl: ([x]) => float(Number.isNaN(f(x!)) ? NaN : f(x!) > 0 ? 1 : f(x!) < 0 ? -1 : 0) },
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(Decimal.fromBigInt(BigInt(d(x!).sign()))) },
  ),
  cbrt: floatFn(Math.cbrt),
  degrees: floatFn((x) => (x * 180) / Math.PI),
  radians: floatFn((x) => (x * Math.PI) / 180),
  random,
  div: strict({
    args: ['numeric', 'numeric'],
    returns: 'numeric',
    impl: ([a, b]) => {
      if (d(b!).sign() === 0) sqlFail('22012', 'division by zero');
      const s = Math.max(d(a!).scale, d(b!).scale);
      return num(new Decimal(d(a!).rescale(s).unscaled / d(b!).rescale(s).unscaled, 0));
    },
  }),
  gcd: strict(
    { args: ['int4', 'int4'], returns: 'int4', impl: ([a, b]) => intGcd('int4', intOf(a!), intOf(b!)) },
    { args: ['int8', 'int8'], returns: 'int8', impl: ([a, b]) => intGcd('int8', intOf(a!), intOf(b!)) },
    { args: ['numeric', 'numeric'], returns: 'numeric', impl: ([a, b]) => num(numericGcdLcm(d(a!), d(b!), false)) },
  ),
  lcm: strict(
    { args: ['int4', 'int4'], returns: 'int4', impl: ([a, b]) => intLcm('int4', intOf(a!), intOf(b!)) },
    { args: ['int8', 'int8'], returns: 'int8', impl: ([a, b]) => intLcm('int8', intOf(a!), intOf(b!)) },
    { args: ['numeric', 'numeric'], returns: 'numeric', impl: ([a, b]) => num(numericGcdLcm(d(a!), d(b!), true)) },
  ),
  width_bucket: strict(
    { args: ['float8', 'float8', 'float8', 'int4'], returns: 'int4', impl: ([o, l, h, c]) => ({ type: 'int4', value: widthBucketFloat(f(o!), f(l!), f(h!), f(c!)) }) },
    { args: ['numeric', 'numeric', 'numeric', 'int4'], returns: 'int4', impl: ([o, l, h, c]) => ({ type: 'int4', value: widthBucketNumeric(d(o!), d(l!), d(h!), f(c!)) }) },
  ),
  sqrt: strict(
    {
      args: ['float8'],
      returns: 'float8',
      impl: ([x]) => (f(x!) < 0 ? sqlFail('2201F', 'cannot take square root of a negative number') : float(Math.sqrt(f(x!)))),
    },
    { args: ['numeric'], returns: 'numeric', impl: ([x]) => num(decimalSqrt(d(x!))) },
  ),
};

function intMod(type: 'int2' | 'int4' | 'int8', a: NonNullSqlValue, b: NonNullSqlValue): SqlValue {
  const y = BigInt(b.value as number | bigint);
  if (y === 0n) sqlFail('22012', 'division by zero');
  return makeInt(type, BigInt(a.value as number | bigint) % y);
}
