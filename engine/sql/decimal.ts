import { fail } from '../errors.js';

/**
 * Exact decimal for PostgreSQL `numeric`: an unscaled bigint and a decimal scale
 * (value = unscaled / 10^scale). The scale is the "display scale" PostgreSQL keeps, so
 * 1.50 + 1 prints as 2.50. Division follows PostgreSQL's select_div_scale (computed on
 * base-10000 weights, as PostgreSQL does), rounding half away from zero.
 */
export class Decimal {
  readonly unscaled: bigint;
  readonly scale: number;

  constructor(unscaled: bigint, scale: number) {
    this.unscaled = unscaled;
    this.scale = scale;
  }

  /** Parses a decimal literal (optional sign, digits, optional fraction, optional exponent). */
  static parse(text: string): Decimal | null {
    const m = /^\s*([+-])?(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(text);
    if (!m || ((m[2] ?? '') === '' && (m[3] ?? '') === '')) return null;
    const sign = m[1] === '-' ? -1n : 1n;
    const intPart = m[2] ?? '';
    const frac = m[3] ?? '';
    let scale = frac.length;
    let unscaled = BigInt((intPart + frac) || '0');
    const exp = m[4] === undefined ? 0 : Number(m[4]);
    scale -= exp;
    if (scale < 0) {
      unscaled *= 10n ** BigInt(-scale);
      scale = 0;
    }
    return new Decimal(sign * unscaled, scale);
  }

  static fromBigInt(v: bigint): Decimal {
    return new Decimal(v, 0);
  }

  /** From a float: shortest round-trip representation, as PostgreSQL's float8 -> numeric. */
  static fromNumber(v: number): Decimal {
    if (!Number.isFinite(v)) fail('SQL_ERROR', `cannot convert ${v} to numeric`, { sqlstate: '22003' });
    const d = Decimal.parse(String(v));
    if (d === null) fail('SQL_ERROR', `cannot convert ${v} to numeric`, { sqlstate: '22003' });
    return d;
  }

  rescale(scale: number): Decimal {
    if (scale === this.scale) return this;
    if (scale > this.scale) return new Decimal(this.unscaled * 10n ** BigInt(scale - this.scale), scale);
    return new Decimal(divRound(this.unscaled, 10n ** BigInt(this.scale - scale)), scale);
  }

  add(o: Decimal): Decimal {
    const s = Math.max(this.scale, o.scale);
    return new Decimal(this.rescale(s).unscaled + o.rescale(s).unscaled, s);
  }

  sub(o: Decimal): Decimal {
    return this.add(o.neg());
  }

  mul(o: Decimal): Decimal {
    return new Decimal(this.unscaled * o.unscaled, this.scale + o.scale);
  }

  neg(): Decimal {
    return new Decimal(-this.unscaled, this.scale);
  }

  abs(): Decimal {
    return this.unscaled < 0n ? this.neg() : this;
  }

  sign(): number {
    return this.unscaled === 0n ? 0 : this.unscaled < 0n ? -1 : 1;
  }

  /** @throws SQL_ERROR 22012 on division by zero. */
  div(o: Decimal): Decimal {
    if (o.unscaled === 0n) fail('SQL_ERROR', 'division by zero', { sqlstate: '22012' });
    const rscale = divScale(this, o);
    // this/o = (u1 / 10^s1) / (u2 / 10^s2); scaled by 10^rscale.
    const num = this.unscaled * 10n ** BigInt(rscale + o.scale);
    const den = o.unscaled * 10n ** BigInt(this.scale);
    return new Decimal(divRound(num, den), rscale);
  }

  /** Remainder with the sign of the dividend (truncating division), as PostgreSQL. */
  mod(o: Decimal): Decimal {
    if (o.unscaled === 0n) fail('SQL_ERROR', 'division by zero', { sqlstate: '22012' });
    const s = Math.max(this.scale, o.scale);
    return new Decimal(this.rescale(s).unscaled % o.rescale(s).unscaled, s);
  }

  cmp(o: Decimal): number {
    const s = Math.max(this.scale, o.scale);
    const a = this.rescale(s).unscaled;
    const b = o.rescale(s).unscaled;
    return a < b ? -1 : a > b ? 1 : 0;
  }

  /** Rounds to `scale` digits (negative scale rounds left of the point), half away from zero. */
  round(scale: number): Decimal {
    if (scale >= 0) return this.rescale(scale);
    const f = 10n ** BigInt(this.scale - scale);
    return new Decimal(divRound(this.unscaled, f) * 10n ** BigInt(-scale), 0);
  }

  /** Truncates toward zero at `scale` digits. */
  trunc(scale: number): Decimal {
    if (scale >= this.scale) return this.rescale(scale);
    const f = 10n ** BigInt(this.scale - scale);
    return new Decimal(this.unscaled / f, scale);
  }

  floor(): Decimal {
    const t = this.trunc(0);
    return this.unscaled < 0n && t.rescale(this.scale).unscaled !== this.unscaled ? new Decimal(t.unscaled - 1n, 0) : t;
  }

  ceil(): Decimal {
    const t = this.trunc(0);
    return this.unscaled > 0n && t.rescale(this.scale).unscaled !== this.unscaled ? new Decimal(t.unscaled + 1n, 0) : t;
  }

  isInteger(): boolean {
    return this.scale === 0 || this.unscaled % 10n ** BigInt(this.scale) === 0n;
  }

  toNumber(): number {
    return Number(this.toString());
  }

  toString(): string {
    const neg = this.unscaled < 0n;
    let digits = (neg ? -this.unscaled : this.unscaled).toString();
    if (this.scale > 0) {
      digits = digits.padStart(this.scale + 1, '0');
      digits = `${digits.slice(0, digits.length - this.scale)}.${digits.slice(digits.length - this.scale)}`;
    }
    return neg ? `-${digits}` : digits;
  }
}

/**
 * Square root with PostgreSQL's numeric_sqrt result scale: at least 16 significant digits,
 * never fewer decimals than the input, correctly rounded (half up).
 * @throws SQL_ERROR 2201F for a negative argument
 */
export function decimalSqrt(x: Decimal): Decimal {
  if (x.sign() < 0) fail('SQL_ERROR', 'cannot take square root of a negative number', { sqlstate: '2201F' });
  const { weight } = nbaseWeight(x);
  const sweight = Math.trunc(((weight + 1) * 4) / 2) - 1;
  const rscale = Math.min(Math.max(16 - sweight, x.scale, 0), 1000);
  return decimalSqrtToScale(x, rscale);
}

/** Square root of a non-negative decimal rounded (half up) to `rscale` digits, as PostgreSQL's sqrt_var. */
export function decimalSqrtToScale(x: Decimal, rscale: number): Decimal {
  if (x.sign() < 0) fail('SQL_ERROR', 'cannot take square root of a negative number', { sqlstate: '2201F' });
  // floor(sqrt(x) * 10^(rscale+1)) exactly, then round the last digit half up.
  const shift = 2 * (rscale + 1) - x.scale;
  const radicand = shift >= 0 ? x.unscaled * 10n ** BigInt(shift) : x.unscaled / 10n ** BigInt(-shift);
  const root = isqrt(radicand);
  return new Decimal((root + 5n) / 10n, rscale);
}

/**
 * floor(sqrt(n)) by Newton's method from a power of two at or above the root, so every step
 * decreases and it ends in O(log) steps for any size (a float estimate can fall below the root
 * for large n, and counting up from there took ~1e15 steps for sqrt(1e60)).
 */
export function isqrt(n: bigint): bigint {
  if (n < 2n) return n;
  let x = 1n << BigInt(Math.ceil(n.toString(2).length / 2));
  for (;;) {
    const y = (x + n / x) >> 1n;
    if (y >= x) return x;
    x = y;
  }
}

/** Integer division of bigints rounding half away from zero. */
export function divRound(num: bigint, den: bigint): bigint {
  let q = num / den;
  const r = num % den;
  if (r !== 0n) {
    const twice = (r < 0n ? -r : r) * 2n;
    const absDen = den < 0n ? -den : den;
    if (twice >= absDen) q += (num < 0n) !== (den < 0n) ? -1n : 1n;
  }
  return q;
}

/** Base-10000 weight and first base-10000 digit of |d|, as PostgreSQL's NumericVar. */
function nbaseWeight(d: Decimal): { weight: number; first: number } {
  const abs = d.abs();
  if (abs.unscaled === 0n) return { weight: 0, first: 0 };
  const text = abs.toString();
  const [ip = '', fp = ''] = text.split('.');
  const intDigits = ip.replace(/^0+/, '');
  if (intDigits.length > 0) {
    const weight = Math.floor((intDigits.length - 1) / 4);
    const lead = intDigits.length - weight * 4;
    return { weight, first: Number(intDigits.slice(0, lead)) };
  }
  const padded = fp.padEnd(Math.ceil(fp.length / 4) * 4, '0');
  for (let i = 0; i < padded.length; i += 4) {
    const g = Number(padded.slice(i, i + 4));
    if (g !== 0) return { weight: -(i / 4) - 1, first: g };
  }
  return { weight: 0, first: 0 };
}

/** PostgreSQL's select_div_scale: at least 16 significant digits, never less than either input's scale. */
function divScale(a: Decimal, b: Decimal): number {
  const wa = nbaseWeight(a);
  const wb = nbaseWeight(b);
  let qweight = wa.weight - wb.weight;
  if (wa.first <= wb.first) qweight--;
  let rscale = 16 - qweight * 4;
  rscale = Math.max(rscale, a.scale, b.scale, 0);
  return Math.min(rscale, 1000);
}
