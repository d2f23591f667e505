/**
 * Trigonometry expression operators (manual: Trigonometry Expression Operators), as MongoDB's
 * expression_trigonometric.h has them: one numeric argument (null or missing gives null, another
 * type is an error naming it), computed in doubles. The functions with a domain refuse a value
 * outside it with MongoDB's message, bounds and value written as C++'s ostream writes doubles
 * ("cannot apply $acos to 2, value must in [-1,1]": MongoDB's wording, its missing "be"
 * included); `$sin`, `$cos` and `$tan` refuse infinities that way ("(-inf,inf)"). A NaN argument
 * gives NaN. `$atan2` takes two numbers (y, x).
 */

import { bsonTypeOf } from '../../values.js';
import { compileArgs, exprError, isNullish, unary, type ExprOperator } from './expression.js';

/** An open interval excludes its bounds, a closed one includes them. */
interface Domain {
  readonly lower: number;
  readonly upper: number;
  readonly closed: boolean;
}

const ALL_FINITE: Domain = { lower: -Infinity, upper: Infinity, closed: false };
const UNIT: Domain = { lower: -1, upper: 1, closed: true };
const AT_LEAST_ONE: Domain = { lower: 1, upper: Infinity, closed: true };

/** C++'s default ostream precision: the significant digits MongoDB's messages give a double. */
const OSTREAM_PRECISION = 6;

/**
 * A double as C++'s `ostream << double` writes it (printf's %g with 6 significant digits):
 * `2`, `1.1`, `-0`, `1.23457e+06`, `1e-05`, `inf`, `-inf`.
 */
export function ostreamDouble(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mantissa, exp] = x.toExponential(OSTREAM_PRECISION - 1).split('e') as [string, string];
  const exponent = Number(exp);
  const strip = (s: string): string => (s.includes('.') ? s.replace(/\.?0+$/, '') : s);
  if (exponent < -4 || exponent >= OSTREAM_PRECISION) {
    const digits = String(Math.abs(exponent)).padStart(2, '0');
    return `${strip(mantissa)}e${exponent < 0 ? '-' : '+'}${digits}`;
  }
  return strip(x.toFixed(OSTREAM_PRECISION - 1 - exponent));
}

function numeric(v: unknown, name: string): number {
  if (typeof v !== 'number') exprError(name, `${name} only supports numeric types, not ${bsonTypeOf(v)}`);
  return v;
}

function within(x: number, d: Domain): boolean {
  return d.closed ? x >= d.lower && x <= d.upper : x > d.lower && x < d.upper;
}

/** A one-argument function of a double, refusing values outside `domain`. */
function bounded(fn: (x: number) => number, domain: Domain): ExprOperator {
  return unary((v, name) => {
    if (isNullish(v)) return null;
    const x = numeric(v, name);
    if (Number.isNaN(x)) return x;
    if (!within(x, domain)) {
      const [open, close] = domain.closed ? ['[', ']'] : ['(', ')'];
      exprError(name, `cannot apply ${name} to ${ostreamDouble(x)}, value must in ${open}${ostreamDouble(domain.lower)},${ostreamDouble(domain.upper)}${close}`);
    }
    return fn(x);
  });
}

/** A one-argument function of a double defined everywhere (NaN in, NaN out). */
function unbounded(fn: (x: number) => number): ExprOperator {
  return unary((v, name) => (isNullish(v) ? null : fn(numeric(v, name))));
}

// MongoDB's constants (kDoublePiOver180, kDouble180OverPi), the same doubles as these.
const PI_OVER_180 = Math.PI / 180;
const ONE_80_OVER_PI = 180 / Math.PI;

// Each argument is checked in turn: a null first one gives null before the second is looked at.
const atan2: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const [a, b] = compileArgs(args, ctx, name, 2);
    return (scope) => {
      const y = a!(scope);
      if (isNullish(y)) return null;
      numeric(y, name);
      const x = b!(scope);
      if (isNullish(x)) return null;
      return Math.atan2(y as number, numeric(x, name));
    };
  },
};

export const trigonometryOperators: Record<string, ExprOperator> = {
  $sin: bounded(Math.sin, ALL_FINITE),
  $cos: bounded(Math.cos, ALL_FINITE),
  $tan: bounded(Math.tan, ALL_FINITE),
  $asin: bounded(Math.asin, UNIT),
  $acos: bounded(Math.acos, UNIT),
  $atan: unbounded(Math.atan),
  $atan2: atan2,
  $sinh: unbounded(Math.sinh),
  $cosh: unbounded(Math.cosh),
  $tanh: unbounded(Math.tanh),
  $asinh: unbounded(Math.asinh),
  $acosh: bounded(Math.acosh, AT_LEAST_ONE),
  $atanh: bounded(Math.atanh, UNIT),
  $degreesToRadians: unbounded((x) => x * PI_OVER_180),
  $radiansToDegrees: unbounded((x) => x * ONE_80_OVER_PI),
};
