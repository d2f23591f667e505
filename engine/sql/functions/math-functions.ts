import { roundHalfEven } from '../sql-cast.js';
import { checkFloat } from '../operators.js';
import { makeInt, sqlFail, type NonNullSqlValue, type SqlValue } from '../sql-types.js';
import { decimalSqrt, type Decimal } from '../decimal.js';
import { strict, type FunctionDef, type Overload } from './function-def.js';

const f = (v: NonNullSqlValue): number => v.value as number;
const d = (v: NonNullSqlValue): Decimal => v.value as Decimal;
const float = (value: number): SqlValue => ({ type: 'float8', value });
const num = (value: Decimal): SqlValue => ({ type: 'numeric', value });

/** Numeric power needs PostgreSQL's result-scale rules; refused rather than approximated. */
const numericUnsupported = (name: string): Overload['impl'] => () =>
  sqlFail('0A000', `unsupported: ${name}(numeric) (exact numeric result scale not implemented; cast to float8)`);

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
    { args: ['numeric', 'numeric'], returns: 'numeric', impl: numericUnsupported('power') },
  ),
  pow: strict(
    { args: ['float8', 'float8'], returns: 'float8', impl: ([x, y]) => float(floatPower(f(x!), f(y!))) },
    { args: ['numeric', 'numeric'], returns: 'numeric', impl: numericUnsupported('power') },
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
