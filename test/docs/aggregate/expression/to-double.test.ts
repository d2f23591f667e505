// $toDouble and $convert to double of strings, by MongoDB's rules (NumberParser over C's strtod):
// the whole string is the number, no whitespace around it, inf/infinity/nan in any case, a leading
// 0x refused, values out of the double range refused; over HTTP.
import { describe } from 'vitest';
import { aggregateHarness, errorCases, valueCases } from '../../../helpers/aggregate-cases.js';

const h = aggregateHarness({ docs: [{ _id: 1, s: ' 1', hex: '0x10' }] });
const inf = (sign = '') => ({ $numberDouble: `${sign}Infinity` });

describe('$toDouble of strings', () => {
  valueCases(h, [
    ['decimal forms strtod reads', ['1', '+5', '-5', '.5', '5.', '1e3', '1.5E-3', '007'].map((s) => ({ $toDouble: s })), [1, 5, -5, 0.5, 5, 1000, 0.0015, 7]],
    ['negative zero keeps its sign (JSON writes it as 0, so seen through $toString)', { $toString: { $toDouble: '-0' } }, '-0'],
    ['plain decimals, as mingo', [{ $toDouble: '2.5' }, { $toDouble: '-12' }], [2.5, -12], 'mingo'],
    ['infinities and NaN by name, in any case', ['inf', 'INF', '-Infinity', 'infinity', 'nan', 'NaN'].map((s) => ({ $toDouble: s })), [inf(), inf(), inf('-'), inf(), { $numberDouble: 'NaN' }, { $numberDouble: 'NaN' }]],
    ['a signed hexadecimal number (MongoDB refuses only a leading 0x)', { $toDouble: '-0x10' }, -16],
    ['$convert with onError for what does not parse', [
      { $convert: { input: '$s', to: 'double', onError: 'bad' } },
      { $convert: { input: '$hex', to: 'double', onError: 'hex' } },
      { $convert: { input: '1e400', to: 'double', onError: 'range' } },
      { $convert: { input: '12abc', to: 1, onError: 'trailing' } },
    ], ['bad', 'hex', 'range', 'trailing']],
  ]);
  errorCases(h, [
    ['leading whitespace', { $toDouble: '$s' }, '$toDouble', /Failed to parse number ' 1' in \$convert with no onError value: Leading whitespace/],
    ['trailing whitespace', { $toDouble: '1 ' }, '$toDouble', /Failed to parse number '1 ' in \$convert with no onError value: Did not consume whole string\./],
    ['an empty string', { $toDouble: '' }, '$toDouble', /Failed to parse number '' in \$convert with no onError value: Empty string/],
    ['a hexadecimal number', { $toDouble: '$hex' }, '$toDouble', /Illegal hexadecimal input in \$convert with no onError value: 0x10/],
    ['words', { $toDouble: 'abc' }, '$toDouble', /Did not consume any digits/],
    ['JavaScript-only forms', { $toDouble: '0b101' }, '$toDouble', /Did not consume whole string/],
    ['a number past the double range', { $toDouble: '1e400' }, '$toDouble', /Failed to parse number '1e400' in \$convert with no onError value: Out of range/],
    ['a number below the normal range', { $convert: { input: '1e-310', to: 'double' } }, '$convert', /Out of range/],
  ]);
});
