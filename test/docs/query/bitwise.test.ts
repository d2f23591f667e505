// $bitsAllSet, $bitsAnySet, $bitsAllClear, $bitsAnyClear: the manual's examples (its fourth
// document, a BinData value, has no JSON form here), its floating point and sign extension rules,
// and MongoDB's messages for a bad bitmask.
import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../../engine/docs/index.js';
import { ids, type MatchCase } from './matching.js';

// The manual's collection (a: 54 is 00110110, 20 is 00010100).
const manual = [
  { _id: 1, a: 54, binaryValueofA: '00110110' },
  { _id: 2, a: 20, binaryValueofA: '00010100' },
  { _id: 3, a: 20.0, binaryValueofA: '00010100' },
];

describe('the bitwise query operators (manual examples)', () => {
  const cases: MatchCase[] = [
    { name: '$bitsAllSet with positions', filter: { a: { $bitsAllSet: [1, 5] } }, expected: [1] },
    { name: '$bitsAllSet with a bitmask', filter: { a: { $bitsAllSet: 50 } }, expected: [1] },
    { name: '$bitsAnySet with positions', filter: { a: { $bitsAnySet: [1, 5] } }, expected: [1] },
    { name: '$bitsAnySet with a bitmask', filter: { a: { $bitsAnySet: 35 } }, expected: [1] },
    { name: '$bitsAllClear with positions', filter: { a: { $bitsAllClear: [1, 5] } }, expected: [2, 3] },
    { name: '$bitsAllClear with a bitmask', filter: { a: { $bitsAllClear: 35 } }, expected: [2, 3] },
    { name: '$bitsAnyClear with positions', filter: { a: { $bitsAnyClear: [1, 5] } }, expected: [2, 3] },
    { name: '$bitsAnyClear with a bitmask', filter: { a: { $bitsAnyClear: 35 } }, expected: [1, 2, 3] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(manual, c.filter)).toEqual(c.expected));
});

describe('what the bitwise query operators match', () => {
  const values = [
    { _id: 'neg5', a: -5 },
    { _id: 'pos5', a: 5 },
    { _id: 'frac', a: 5.5 },
    { _id: 'big', a: 2 ** 62 + 2 ** 61 },
    { _id: 'min', a: -(2 ** 63) },
    { _id: 'huge', a: 2 ** 63 },
    { _id: 'str', a: '5' },
    { _id: 'bool', a: true },
    { _id: 'null', a: null },
    { _id: 'none' },
    { _id: 'arr', a: [2, 4] },
    { _id: 'date', a: new Date(5) },
  ];
  const cases: MatchCase[] = [
    // Sign extension (the manual): bit 200 is set in -5 and clear in 5.
    { name: 'a position past 63 reads the sign: set', filter: { a: { $bitsAllSet: [200] } }, expected: ['neg5', 'min'] },
    { name: 'a position past 63 reads the sign: clear', filter: { a: { $bitsAllClear: [200] } }, expected: ['pos5', 'big', 'arr'] },
    { name: 'negative numbers are two\'s complement', filter: { a: { $bitsAllSet: [0, 1, 3, 4, 63] } }, expected: ['neg5'] },
    { name: 'integers past 2^53 are read exactly (and -5 has every high bit set)', filter: { a: { $bitsAllSet: [61, 62] } }, expected: ['neg5', 'big'] },
    { name: '-2^63 has bit 63 set and bit 62 clear', filter: { a: { $bitsAllSet: [63], $bitsAllClear: 2 ** 62 } }, expected: ['min'] },
    // The manual: only values representable as a signed 64-bit integer match; strings, booleans
    // and the like never do, even for "clear".
    { name: 'fractions, 2^63, strings, booleans, null, missing and dates never match', filter: { a: { $bitsAllClear: [1, 3] } }, expected: ['pos5', 'big', 'min', 'arr'] },
    { name: 'an array matches through its elements', filter: { a: { $bitsAnySet: [2] } }, expected: ['pos5', 'arr'] },
    { name: 'no position: all matches every integer, any none', filter: { a: { $bitsAllSet: [] } }, expected: ['neg5', 'pos5', 'big', 'min', 'arr'] },
    { name: 'no position with any', filter: { a: { $bitsAnySet: 0 } }, expected: [] },
    { name: '$not of a bitwise test matches what it does not (non-numbers included)', filter: { a: { $not: { $bitsAnySet: [0] } } }, expected: ['frac', 'big', 'min', 'huge', 'str', 'bool', 'null', 'none', 'arr', 'date'] },
    { name: 'positions may repeat and come in any order', filter: { a: { $bitsAllSet: [2, 0, 2] } }, expected: ['pos5'] },
    { name: 'an integral double as a bitmask', filter: { a: { $bitsAllSet: 4.0 } }, expected: ['pos5', 'arr'] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(values, c.filter)).toEqual(c.expected));
});

describe('bad bitmasks are refused with MongoDB\'s messages', () => {
  const errors: Array<[string, unknown, RegExp]> = [
    ['a negative bitmask', { a: { $bitsAllSet: -1 } }, /^Expected a non-negative number in: \$bitsAllSet: -1$/],
    ['a fractional bitmask', { a: { $bitsAnySet: 1.5 } }, /^Expected an integer: \$bitsAnySet: 1\.5$/],
    ['a bitmask past 2^63', { a: { $bitsAllClear: 2 ** 64 } }, /^Cannot represent as a 64-bit integer: \$bitsAllClear: /],
    ['a string', { a: { $bitsAnyClear: '1' } }, /^\$bitsAnyClear takes an Array, a number, or a BinData but received: \$bitsAnyClear: "1"$/],
    ['a document', { a: { $bitsAllSet: { x: 1 } } }, /takes an Array, a number, or a BinData but received/],
    ['null', { a: { $bitsAllSet: null } }, /takes an Array, a number, or a BinData but received: \$bitsAllSet: null/],
    ['a negative position', { a: { $bitsAllSet: [1, -1] } }, /^Failed to parse bit position\. Expected a non-negative number in: 1: -1$/],
    ['a fractional position', { a: { $bitsAllSet: [1.5] } }, /^Failed to parse bit position\. Expected an integer: 0: 1\.5$/],
    ['a position that is not a number', { a: { $bitsAllSet: ['1'] } }, /^Failed to parse bit position\. Expected a number in: 0: "1"$/],
    ['a position past the int range', { a: { $bitsAllSet: [2 ** 31] } }, /^Failed to parse bit position\. Cannot represent 0: 2147483648 in an int$/],
    ['a BinData bitmask', { a: { $bitsAnySet: { $binary: { base64: 'Zg==', subType: '00' } } } }, /BinData bitmask is not supported: tetradb has no binary type/],
  ];
  for (const [name, filter, message] of errors) {
    it(`refuses ${name}`, () => expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) })));
  }
});
