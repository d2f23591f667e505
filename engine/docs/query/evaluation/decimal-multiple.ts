/**
 * `multipleOf` as MongoDB tests it ($_internalSchemaFmod): in Decimal128, where a double enters
 * through its 15 significant digits (Decimal128's constructor from a double) and an integer
 * exactly, so `0.3` is a multiple of `0.1` as a reader expects, where JavaScript's `0.3 % 0.1` is
 * not 0. The remainder is exact: the values are scaled to integers and divided as BigInts.
 */

/** Significant digits a double keeps on its way into a Decimal128. */
const DOUBLE_DIGITS = 15;

/** A finite number as `mantissa * 10^exponent`. */
interface Decimal {
  readonly mantissa: bigint;
  readonly exponent: number;
}

function toDecimal(n: number): Decimal {
  // Integers typed int or long (values.ts) convert exactly.
  if (Number.isSafeInteger(n)) return { mantissa: BigInt(n), exponent: 0 };
  const [digits, exp] = n.toExponential(DOUBLE_DIGITS - 1).split('e') as [string, string];
  return { mantissa: BigInt(digits.replace('.', '')), exponent: Number(exp) - (DOUBLE_DIGITS - 1) };
}

/** True when `value` divided by `divisor` (finite, positive) leaves no remainder; NaN and infinities never do. */
export function isMultipleOf(value: number, divisor: number): boolean {
  if (!Number.isFinite(value)) return false;
  const a = toDecimal(value);
  const b = toDecimal(divisor);
  const exponent = Math.min(a.exponent, b.exponent);
  const scaledA = a.mantissa * 10n ** BigInt(a.exponent - exponent);
  const scaledB = b.mantissa * 10n ** BigInt(b.exponent - exponent);
  return scaledA % scaledB === 0n;
}
