// The string operators that count UTF-8 bytes ($substrBytes, $substr, $strLenBytes, $indexOfBytes),
// over HTTP with the manual's examples; mingo checks the single-byte cases (it counts UTF-16 code
// units for $indexOfBytes and refuses what MongoDB coerces, docs/mql.md).
import { describe, expect, it } from 'vitest';
import { aggregateHarness, errorCases, valueCases } from '../../../helpers/aggregate-cases.js';

const food = ['apple', 'banana', 'éclair', 'hamburger', 'jalapeño', 'pizza', 'tacos', '寿司sushi'].map((name, i) => ({ _id: i + 1, name }));

const h = aggregateHarness({
  docs: [{ _id: 1, s: 'cafétéria', n: null, d: { $date: '2017-02-08T12:10:40.787Z' }, emoji: 'a😀b' }],
  inventory: [
    { _id: 1, item: 'ABC1', quarter: '13Q1', description: 'product 1' },
    { _id: 2, item: 'ABC2', quarter: '13Q4', description: 'product 2' },
    { _id: 3, item: 'XYZ1', quarter: '14Q2', description: null },
  ],
  food,
  items: [{ _id: 1, item: 'foo' }, { _id: 2, item: 'fóofoo' }, { _id: 3, item: 'the foo bar' }, { _id: 4, item: 'hello world fóo' }, { _id: 5, item: null }, { _id: 6, amount: 3 }],
});

describe('$substrBytes and $substr', () => {
  it('splits single-byte strings by byte (the manual: year and quarter)', async () => {
    const res = await h.aggregate([{ $project: { item: 1, yearSubstring: { $substrBytes: ['$quarter', 0, 2] }, quarterSubtring: { $substrBytes: ['$quarter', 2, { $subtract: [{ $strLenBytes: '$quarter' }, 2] }] } } }], 'inventory');
    expect(res.body.documents).toEqual([
      { _id: 1, item: 'ABC1', yearSubstring: '13', quarterSubtring: 'Q1' },
      { _id: 2, item: 'ABC2', yearSubstring: '13', quarterSubtring: 'Q4' },
      { _id: 3, item: 'XYZ1', yearSubstring: '14', quarterSubtring: 'Q2' },
    ]);
  });
  it('takes whole characters of several bytes (the manual: the first three bytes of each name)', async () => {
    const res = await h.aggregate([{ $project: { _id: 0, menuCode: { $substrBytes: ['$name', 0, 3] } } }], 'food');
    expect(res.body.documents.map((d: { menuCode: string }) => d.menuCode)).toEqual(['app', 'ban', 'éc', 'ham', 'jal', 'piz', 'tac', '寿']);
  });
  valueCases(h, [
    ['the manual table', [{ $substrBytes: ['abcde', 1, 2] }, { $substrBytes: ['Hello World!', 6, 5] }, { $substrBytes: ['$s', 0, 5] }, { $substrBytes: ['$s', 5, 4] }], ['bc', 'World', 'café', 'tér']],
    ['$substr is $substrBytes', { $substr: ['$s', 5, 4] }, 'tér'],
    ['a negative length is the rest; a start past the end is empty', [{ $substrBytes: ['$s', 5, -1] }, { $substrBytes: ['$s', 50, 2] }, { $substrBytes: ['$s', 3, 0] }], ['téria', '', '']],
    ['null is "", numbers and dates are coerced, indexes truncated', [{ $substrBytes: ['$n', 0, 2] }, { $substrBytes: [12345, 1.9, 2.2] }, { $substrBytes: ['$d', 0, 4] }], ['', '23', '2017']],
    ['four-byte characters', { $substrBytes: ['$emoji', 1, 4] }, '😀'],
    ['ASCII agrees with mingo', { $substrBytes: ['Hello World!', 6, 5] }, 'World', 'mingo'],
  ]);
  errorCases(h, [
    ['a start inside a character (the manual)', { $substrBytes: ['$s', 7, 3] }, '$substrBytes', /Invalid range, starting index is a UTF-8 continuation byte/],
    ['an end inside a character (the manual)', { $substrBytes: ['$s', 3, 1] }, '$substrBytes', /Invalid range, ending index is in the middle of a UTF-8 character/],
    ['an end inside a character, through $substr', { $substr: ['$emoji', 0, 2] }, '$substr', /ending index is in the middle of a UTF-8 character/],
    ['a negative start', { $substrBytes: ['$s', -1, 2] }, '$substrBytes', /starting index must be non-negative/],
    ['a start that is not a number', { $substrBytes: ['$s', '1', 2] }, '$substrBytes', /starting index must be a numeric type \(is BSON type string\)/],
    ['a length that is not a number', { $substrBytes: ['$s', 1, null] }, '$substrBytes', /length must be a numeric type \(is BSON type null\)/],
    ['two arguments', { $substrBytes: ['$s', 1] }, '$substrBytes', /takes 3 arguments/],
    ['an array to coerce', { $substrBytes: [[1], 0, 1] }, '$substrBytes', /can't convert from BSON type array to String/],
  ]);
});

describe('$strLenBytes', () => {
  it('counts UTF-8 bytes (the manual: food names)', async () => {
    const res = await h.aggregate([{ $project: { _id: 0, length: { $strLenBytes: '$name' } } }], 'food');
    expect(res.body.documents.map((d: { length: number }) => d.length)).toEqual([5, 6, 7, 9, 9, 5, 5, 11]);
  });
  valueCases(h, [
    ['of a string', [{ $strLenBytes: '$s' }, { $strLenBytes: '$emoji' }, { $strLenBytes: '' }], [11, 6, 0]],
    ['of ASCII, as mingo', { $strLenBytes: 'abc' }, 3, 'mingo'],
  ]);
  errorCases(h, [
    ['null', { $strLenBytes: '$n' }, '$strLenBytes', /requires a string argument, found: null/],
    ['a number', { $strLenBytes: 5 }, '$strLenBytes', /requires a string argument, found: int/],
  ]);
});

describe('$indexOfBytes', () => {
  it('finds the byte index (the manual: items)', async () => {
    const res = await h.aggregate([{ $project: { _id: 0, byteLocation: { $indexOfBytes: ['$item', 'foo'] } } }], 'items');
    expect(res.body.documents.map((d: { byteLocation: unknown }) => d.byteLocation)).toEqual([0, 4, 4, -1, null, null]);
  });
  valueCases(h, [
    ['with start and end byte indexes', [{ $indexOfBytes: ['$s', 't', 5] }, { $indexOfBytes: ['$s', 'ria', 0, 10] }, { $indexOfBytes: ['$s', 'ria', 0, 11] }], [5, -1, 8]],
    ['a start past the end or an end before the start', [{ $indexOfBytes: ['$s', '', 11] }, { $indexOfBytes: ['$s', '', 12] }, { $indexOfBytes: ['$s', 'c', 3, 2] }], [11, -1, -1]],
    ['ASCII agrees with mingo', { $indexOfBytes: ['cafeteria', 'ter', 2] }, 4, 'mingo'],
  ]);
  errorCases(h, [
    ['a fractional start', { $indexOfBytes: ['$s', 'a', 1.5] }, '$indexOfBytes', /requires an integral starting index, found a value of type: double/],
    ['a negative end', { $indexOfBytes: ['$s', 'a', 0, -1] }, '$indexOfBytes', /requires a nonnegative ending index, found: -1/],
    ['a token that is not a string', { $indexOfBytes: ['$s', 1] }, '$indexOfBytes', /requires a string as the second argument, found: int/],
    ['a string that is not a string', { $indexOfBytes: [1, 'a'] }, '$indexOfBytes', /requires a string as the first argument, found: int/],
  ]);
});
