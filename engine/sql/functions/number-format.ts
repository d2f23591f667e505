/**
 * to_char(number, format) for the digit templates: 9 (digit or blank), 0 (digit or zero),
 * . or D (decimal point), , or G (group separator), FM (fill mode: no padding, no trailing
 * fraction zeros from 9s). Other template patterns (S, MI, PR, L, EEEE, ...) are refused.
 */
import { Decimal, sqlFail } from '../sql-types.js';

/** @throws SQL_ERROR 0A000 for template patterns outside the supported set */
export function formatNumberPattern(value: Decimal, format: string): string {
  let fm = false;
  let f = format;
  if (/^fm/i.test(f)) {
    fm = true;
    f = f.slice(2);
  }
  if (!/^[90,G]*([.D][90]*)?$/.test(f)) sqlFail('0A000', `unsupported: to_char number format "${format}" (only 9 0 . D , G and FM)`);
  const point = f.search(/[.D]/);
  const intPat = point < 0 ? f : f.slice(0, point);
  const fracPat = point < 0 ? '' : f.slice(point + 1);
  const intPos = (intPat.match(/[90]/g) ?? []).length;
  const rounded = value.round(fracPat.length);
  const neg = rounded.sign() < 0;
  const digits = rounded.abs().toString();
  let [intStr = '', fracStr = ''] = digits.split('.');
  // A zero integer part is not significant when the template has a decimal point.
  if (intStr === '0' && point >= 0) intStr = '';
  fracStr = fracStr.padEnd(fracPat.length, '0');
  if (intStr.length > intPos) {
    const hashes = f.replace(/[90]/g, '#').replace(/[D]/g, '.').replace(/G/g, ',');
    return fm ? hashes : ` ${hashes}`;
  }
  const zeroFrom = intPat.search(/0/);
  let out = '';
  let started = false;
  let digitIndex = 0;
  for (let i = 0; i < intPat.length; i++) {
    const c = intPat[i]!;
    if (c === ',' || c === 'G') {
      out += started ? ',' : fm ? '' : ' ';
      continue;
    }
    const fromRight = intPos - 1 - digitIndex++;
    if (fromRight < intStr.length) {
      if (!started) out += neg ? '-' : fm ? '' : ' ';
      started = true;
      out += intStr[intStr.length - 1 - fromRight];
    } else if (zeroFrom >= 0 && i >= zeroFrom) {
      if (!started) out += neg ? '-' : fm ? '' : ' ';
      started = true;
      out += '0';
    } else if (!fm) {
      out += ' ';
    }
  }
  const anyDigit = started;
  if (!started) out += neg ? '-' : fm ? '' : ' ';
  started = anyDigit;
  if (point < 0) return out;
  let frac = fracStr;
  if (fm) {
    // Fill mode drops trailing zeros that stand in 9 positions.
    let end = frac.length;
    while (end > 0 && fracPat[end - 1] === '9' && frac[end - 1] === '0') end--;
    frac = frac.slice(0, end);
    if (fracPat === '') return out;
    // Nothing significant at all still shows one zero.
    if (!started && frac === '') return `${out}0.`;
  }
  return `${out}.${frac}`;
}
