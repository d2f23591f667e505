/**
 * Transcendental functions on exact numerics (ln, log, exp, power) with PostgreSQL's result
 * scales (numeric.c: ln_var, log_var, exp_var, power_var, power_var_int). Values are computed in
 * bigint fixed point with guard digits and rounded half away from zero to the result scale.
 */
import { divRound, isqrt } from '../decimal.js';
import { Decimal, sqlFail } from '../sql-types.js';

/** PostgreSQL's NUMERIC_MIN_SIG_DIGITS and NUMERIC_MAX_DISPLAY_SCALE. */
const MIN_SIG_DIGITS = 16;
const MAX_DISPLAY_SCALE = 1000;

const pow10 = (n: number): bigint => 10n ** BigInt(n);

const clampScale = (...candidates: number[]): number => Math.min(Math.max(...candidates, 0), MAX_DISPLAY_SCALE);

/** Number of decimal digits of |n| (1 for 0). */
const digitCount = (n: bigint): number => (n < 0n ? -n : n).toString().length;

/** log10(|d|) in double precision, for scale estimates only; -Infinity for 0. */
export function approxLog10(d: Decimal): number {
  if (d.unscaled === 0n) return -Infinity;
  const s = (d.unscaled < 0n ? -d.unscaled : d.unscaled).toString();
  const lead = Number(`0.${s.slice(0, 17)}`);
  return Math.log10(lead) + s.length - d.scale;
}

/** PostgreSQL's estimate_ln_dweight: the decimal weight of ln(x). */
function lnDweight(x: Decimal): number {
  if (x.sign() <= 0) return 0;
  if (x.cmp(new Decimal(9n, 1)) >= 0 && x.cmp(new Decimal(11n, 1)) <= 0) {
    const t = x.sub(new Decimal(1n, 0));
    if (t.unscaled === 0n) return 0;
    return digitCount(t.unscaled) - 1 - t.scale;
  }
  const lnVar = approxLog10(x) * Math.LN10;
  return Math.trunc(Math.log10(Math.abs(lnVar)));
}

/** x (value = unscaled / 10^scale) as fixed point with `g` decimals. */
function toFixed(x: Decimal, g: number): bigint {
  return g >= x.scale ? x.unscaled * pow10(g - x.scale) : x.unscaled / pow10(x.scale - g);
}

/** ln(m) for 1 <= m < 10 in fixed point with g decimals: 2^8 square roots, then atanh series. */
function lnSmall(m: bigint, g: number): bigint {
  const one = pow10(g);
  let z = m;
  for (let i = 0; i < 8; i++) z = isqrt(z * one);
  const t = ((z - one) * one) / (z + one);
  const t2 = (t * t) / one;
  let term = t;
  let sum = 0n;
  for (let n = 1n; term !== 0n; n += 2n) {
    sum += term / n;
    term = (term * t2) / one;
  }
  return sum * 512n;
}

const ln10Cache = new Map<number, bigint>();
function ln10(g: number): bigint {
  let v = ln10Cache.get(g);
  if (v === undefined) {
    v = lnSmall(10n * pow10(g), g);
    ln10Cache.set(g, v);
  }
  return v;
}

/** ln(x) for x > 0 in fixed point with `w` decimals (a few units in the last place). */
function lnFixed(x: Decimal, w: number): bigint {
  const e = digitCount(x.unscaled) - 1 - x.scale; // floor(log10(x))
  const g = w + 12 + String(Math.abs(e)).length;
  // m = x / 10^e, in [1, 10)
  const shift = g - x.scale - e;
  const m = shift >= 0 ? x.unscaled * pow10(shift) : x.unscaled / pow10(-shift);
  const r = lnSmall(m, g) + BigInt(e) * ln10(g);
  return divRound(r, pow10(g - w));
}

/** exp(y) for y in fixed point with g decimals, result in the same fixed point. */
function expFixed(y: bigint, g: number): bigint {
  const one = pow10(g);
  // Halve the argument k times until it is below 2^-10, then square k times.
  const mag = y < 0n ? -y : y;
  let k = 0;
  while (mag >> BigInt(k) > one >> 10n) k++;
  const gg = g + Math.ceil(k * 0.302) + 5;
  const one2 = pow10(gg);
  const r = (y * pow10(gg - g)) >> BigInt(k);
  let term = one2;
  let sum = one2;
  for (let n = 1n; term !== 0n; n++) {
    term = (term * r) / (one2 * n);
    sum += term;
  }
  for (let i = 0; i < k; i++) sum = (sum * sum) / one2;
  return sum / pow10(gg - g);
}

function lnArgCheck(x: Decimal): void {
  if (x.sign() === 0) sqlFail('2201E', 'cannot take logarithm of zero');
  if (x.sign() < 0) sqlFail('2201E', 'cannot take logarithm of a negative number');
}

/** ln(numeric). @throws SQL_ERROR 2201E zero or negative argument */
export function numericLn(x: Decimal): Decimal {
  lnArgCheck(x);
  const rscale = clampScale(MIN_SIG_DIGITS - lnDweight(x), x.scale);
  return new Decimal(divRound(lnFixed(x, rscale + 8), pow10(8)), rscale);
}

/** log(base, x) on numerics. @throws SQL_ERROR 2201E bad argument, 22012 base 1 */
export function numericLog(base: Decimal, x: Decimal): Decimal {
  lnArgCheck(base);
  lnArgCheck(x);
  const rscale = clampScale(MIN_SIG_DIGITS - (lnDweight(x) - lnDweight(base)), base.scale, x.scale);
  const g = rscale + 20 + Math.max(0, -lnDweight(base)) + Math.max(0, lnDweight(x));
  const lb = lnFixed(base, g);
  if (lb === 0n) sqlFail('22012', 'division by zero');
  const lx = lnFixed(x, g);
  return new Decimal(divRound(lx * pow10(rscale), lb), rscale);
}

/** exp(numeric). @throws SQL_ERROR 22003 overflow */
export function numericExp(x: Decimal): Decimal {
  const val = x.toNumber() * 0.434294481903252;
  if (Math.abs(val) >= 6000) {
    if (val > 0) sqlFail('22003', 'value overflows numeric format');
    return new Decimal(0n, MAX_DISPLAY_SCALE);
  }
  const rscale = clampScale(MIN_SIG_DIGITS - Math.trunc(val), x.scale);
  // Guard digits for the result's integer digits too: the error is relative.
  const g = rscale + 12 + Math.max(0, Math.ceil(val));
  return new Decimal(divRound(expFixed(toFixed(x, g + 10) / pow10(10), g), pow10(g - rscale)), rscale);
}

/**
 * power(numeric, numeric) as PostgreSQL's power_var: an integral exponent (fitting int4) is
 * exact then rounded to its scale; otherwise exp(y * ln(x)).
 * @throws SQL_ERROR 2201F zero to a negative power, negative base with a fractional exponent
 */
export function numericPower(x: Decimal, y: Decimal): Decimal {
  if (x.sign() === 0 && y.sign() < 0) sqlFail('2201F', 'zero raised to a negative power is undefined');
  const intExp = y.isInteger() ? y.trunc(0).unscaled : null;
  if (intExp !== null && intExp >= -2147483648n && intExp <= 2147483647n) return powerInt(x, Number(intExp), y.scale);
  if (x.sign() < 0) sqlFail('2201F', 'a negative number raised to a non-integer power yields a complex result');
  if (x.sign() === 0) return new Decimal(0n, MIN_SIG_DIGITS);
  const val = y.toNumber() * approxLog10(x);
  if (val > 6000) sqlFail('22003', 'value overflows numeric format');
  const rscale = clampScale(MIN_SIG_DIGITS - Math.trunc(val), x.scale, y.scale);
  if (val < -6000) return new Decimal(0n, rscale);
  const g = rscale + 12 + Math.max(0, Math.ceil(val));
  // ln(x) with enough digits that y * ln(x) keeps g decimals.
  const extra = Math.max(0, Math.ceil(approxLog10(y))) + 4;
  const lnx = lnFixed(x, g + extra);
  const prod = divRound(lnx * y.unscaled, pow10(y.scale + extra));
  return new Decimal(divRound(expFixed(prod, g), pow10(g - rscale)), rscale);
}

/** power_var_int: the result scale from an estimate of the result's decimal weight. */
function powerInt(x: Decimal, n: number, expScale: number): Decimal {
  const f = x.sign() === 0 ? 0 : n * approxLog10(x);
  const rscale = clampScale(MIN_SIG_DIGITS - Math.trunc(f), x.scale, expScale);
  if (n === 0) return new Decimal(pow10(rscale), rscale);
  if (f > 6000) sqlFail('22003', 'value overflows numeric format');
  const abs = Math.abs(n);
  if (digitCount(x.unscaled) * abs <= 20000) {
    const p = x.unscaled ** BigInt(abs);
    const pscale = x.scale * abs;
    if (n > 0) return new Decimal(pscale >= rscale ? divRound(p, pow10(pscale - rscale)) : p * pow10(rscale - pscale), rscale);
    return new Decimal(divRound(pow10(pscale + rscale), p), rscale);
  }
  // Too many digits to be exact: exp(n * ln|x|), with the sign of an odd power of a negative.
  const g = rscale + 12 + Math.max(0, Math.ceil(f));
  const lnx = lnFixed(x.abs(), g + String(abs).length + 2);
  const r = new Decimal(divRound(expFixed(divRound(lnx * BigInt(n), pow10(String(abs).length + 2)), g), pow10(g - rscale)), rscale);
  return x.sign() < 0 && abs % 2 === 1 ? r.neg() : r;
}
