// $zip, $sortArray and the bitwise operators ($bitAnd, $bitOr, $bitXor, $bitNot), over HTTP with
// the manual's examples; mingo checks the cases where it agrees (docs/mql.md lists the others).
import { describe, expect, it } from 'vitest';
import { aggregateHarness, errorCases, expectQueryError, valueCases } from '../../../helpers/aggregate-cases.js';

const team = [
  { name: 'pat', age: 30, address: { street: '12 Baker St', city: 'London' } },
  { name: 'dallas', age: 36, address: { street: '12 Cowper St', city: 'Palo Alto' } },
  { name: 'charlie', age: 42, address: { street: '12 French St', city: 'New Brunswick' } },
];

const h = aggregateHarness({
  docs: [{ _id: 1, team, a: [1, null, 3], b: ['x', 'y'], n: null, big: 2 ** 53 - 1, neg: -(2 ** 53 - 1), f: 1.5 }],
  matrices: [
    { _id: 1, matrix: [[1, 2], [2, 3], [3, 4]] },
    { _id: 2, matrix: [[8, 7], [7, 6], [5, 4]] },
  ],
  switches: [
    { _id: 0, a: 0, b: 127 },
    { _id: 1, a: 2, b: 3 },
    { _id: 2, a: 3, b: 5 },
  ],
});

describe('$zip', () => {
  it('transposes matrices (the manual)', async () => {
    const res = await h.aggregate([{ $project: { _id: 0, transposed: { $zip: { inputs: [{ $arrayElemAt: ['$matrix', 0] }, { $arrayElemAt: ['$matrix', 1] }, { $arrayElemAt: ['$matrix', 2] }] } } } }], 'matrices');
    expect(res.body.documents).toEqual([{ transposed: [[1, 2, 3], [2, 3, 4]] }, { transposed: [[8, 7, 5], [7, 6, 4]] }]);
  });
  valueCases(h, [
    ['as long as the shortest input (the manual)', [{ $zip: { inputs: [['a'], ['b'], ['c']] } }, { $zip: { inputs: [['a'], ['b', 'c']] } }], [[['a', 'b', 'c']], [['a', 'b']]], 'mingo'],
    ['the longest, padded with null or defaults (the manual)', [
      { $zip: { inputs: [[1], [2, 3]], useLongestLength: true } },
      { $zip: { inputs: [[1], [2, 3], [4]], useLongestLength: true, defaults: ['a', 'b', 'c'] } },
    ], [[[1, 2], [null, 3]], [[1, 2, 4], ['a', 3, 'c']]], 'mingo'],
    ['a null element stays null (mingo replaces it with the default)', { $zip: { inputs: ['$a', '$b'], useLongestLength: true, defaults: [0, 'z'] } }, [[1, 'x'], [null, 'y'], [3, 'z']]],
    ['a null or missing input gives null; an empty one an empty result', [{ $zip: { inputs: ['$a', '$n'] } }, { $zip: { inputs: ['$a', '$nope'] } }, { $zip: { inputs: ['$a', []] } }], [null, null, []]],
  ]);
  errorCases(h, [
    ['an input that is not an array', { $zip: { inputs: ['$a', 'text'] } }, '$zip', /\$zip found a non-array expression in input: "text"/],
    ['inputs that are not an array', { $zip: { inputs: '$a' } }, '$zip', /inputs must be an array of expressions, found string/],
    ['no inputs', { $zip: { inputs: [] } }, '$zip', /\$zip requires at least one input array/],
    ['defaults without useLongestLength', { $zip: { inputs: ['$a'], defaults: [1] } }, '$zip', /cannot specify defaults unless useLongestLength is true/],
    ['defaults of another length', { $zip: { inputs: ['$a', '$b'], useLongestLength: true, defaults: [1] } }, '$zip', /defaults and inputs must have the same length/],
    ['useLongestLength that is not a boolean', { $zip: { inputs: ['$a'], useLongestLength: 1 } }, '$zip', /useLongestLength must be a bool, found int/],
    ['an unknown argument', { $zip: { inputs: ['$a'], longest: true } }, '$zip', /\$zip found an unknown argument: longest/],
    ['a result past the value bound', { $zip: { inputs: [{ $range: [0, 1_000_000] }, ...Array.from({ length: 16 }, () => [])], useLongestLength: true } }, '$zip', /\$zip would make more than 16777216 elements/],
  ]);
});

describe('$sortArray', () => {
  const names = (sortBy: unknown) => ({ $map: { input: { $sortArray: { input: '$team', sortBy } }, in: '$$this.name' } });
  valueCases(h, [
    ['documents by a field, a nested field, several fields (the manual)', [names({ name: 1 }), names({ age: -1 }), names({ 'address.city': 1 }), names({ age: -1, name: 1 })], [['charlie', 'dallas', 'pat'], ['charlie', 'dallas', 'pat'], ['pat', 'charlie', 'dallas'], ['charlie', 'dallas', 'pat']], 'mingo'],
    ['numbers, both ways (the manual)', [{ $sortArray: { input: [1, 4, 1, 6, 12, 5], sortBy: 1 } }, { $sortArray: { input: [1, 4, 1, 6, 12, 5], sortBy: -1 } }], [[1, 1, 4, 5, 6, 12], [12, 6, 5, 4, 1, 1]], 'mingo'],
    ['mixed types in BSON order (the manual, without its decimal)', { $sortArray: { input: { $literal: [20, 4, { a: 'Free' }, 6, 21, 5, 'Gratis', { a: null }, { a: { sale: true, price: 19 } }, { a: 'On sale' }] }, sortBy: 1 } }, [4, 5, 6, 20, 21, 'Gratis', { a: null }, { a: 'Free' }, { a: 'On sale' }, { a: { sale: true, price: 19 } }]],
    ['arrays compare element by element, dates after booleans', { $sortArray: { input: { $literal: [[2], true, [1, 5], { $date: '2020-01-01T00:00:00Z' }, null] }, sortBy: 1 } }, [null, [1, 5], [2], true, { $date: '2020-01-01T00:00:00.000Z' }]],
    ['null or missing input gives null', [{ $sortArray: { input: '$n', sortBy: 1 } }, { $sortArray: { input: '$nope', sortBy: 1 } }], [null, null]],
  ]);
  errorCases(h, [
    ['an input that is not an array', { $sortArray: { input: 'abc', sortBy: 1 } }, '$sortArray', /The input argument to \$sortArray must be an array, but was of type: string/],
    ['sortBy 0', { $sortArray: { input: '$a', sortBy: 0 } }, '$sortArray', /sortBy to be either 1, -1/],
    ['a sort document with 2', { $sortArray: { input: '$team', sortBy: { age: 2 } } }, '$sortArray', /must be 1 \(for ascending\) or -1/],
    ['no sortBy', { $sortArray: { input: '$a' } }, '$sortArray', /\$sortArray requires 'sortBy' to be specified/],
    ['an unknown argument', { $sortArray: { input: '$a', sortBy: 1, order: 1 } }, '$sortArray', /\$sortArray found an unknown argument: order/],
  ]);
});

describe('bitwise operators', () => {
  it('combine ints (the manual: switches)', async () => {
    const res = await h.aggregate([{ $project: { and: { $bitAnd: ['$a', '$b'] }, or: { $bitOr: ['$a', '$b'] }, xor: { $bitXor: ['$a', '$b'] }, not: { $bitNot: '$a' } } }], 'switches');
    expect(res.body.documents).toEqual([
      { _id: 0, and: 0, or: 127, xor: 127, not: -1 },
      { _id: 1, and: 2, or: 3, xor: 1, not: -3 },
      { _id: 2, and: 1, or: 7, xor: 6, not: -4 },
    ]);
  });
  valueCases(h, [
    ['small ints, as mingo', [{ $bitAnd: [12, 10] }, { $bitOr: [12, 10] }, { $bitXor: [12, 10] }, { $bitNot: 12 }], [8, 14, 6, -13], 'mingo'],
    ['one operand, and none (the identities)', [{ $bitAnd: 5 }, { $bitAnd: [] }, { $bitOr: [] }, { $bitXor: [] }], [5, -1, 0, 0]],
    ['longs past 32 bits stay exact (mingo works in 32 bits)', [
      { $bitAnd: ['$big', 2 ** 40 + 5] },
      { $bitOr: [2 ** 40, 1] },
      { $bitXor: ['$big', '$neg'] },
      { $bitNot: '$big' },
      { $bitNot: '$neg' },
      { $bitAnd: ['$neg', -2] },
    ], [2 ** 40 + 5, 2 ** 40 + 1, -2, -(2 ** 53), 2 ** 53 - 2, -(2 ** 53)]],
    ['null or missing gives null', [{ $bitAnd: [1, '$n'] }, { $bitOr: ['$nope', 1] }, { $bitNot: '$nope' }], [null, null, null]],
  ]);
  errorCases(h, [
    ['a fraction', { $bitAnd: [1, '$f'] }, '$bitAnd', /\$bitAnd only supports int and long operands/],
    ['an integer past 2^53 (a double here)', { $bitOr: [1, 2 ** 53] }, '$bitOr', /\$bitOr only supports int and long operands/],
    ['a string', { $bitXor: ['1', 1] }, '$bitXor', /\$bitXor only supports int and long operands/],
    ['$bitNot of a fraction', { $bitNot: 0.5 }, '$bitNot', /\$bitNot only supports int and long operands/],
    ['$bitNot with two arguments', { $bitNot: [1, 2] }, '$bitNot', /takes 1 argument/],
  ]);
  it('refuses before any document is read', async () => {
    expectQueryError(await h.aggregate([{ $project: { x: { $zip: { inputs: 1 } } } }], 'empty'), '$zip', /inputs must be an array/);
  });
});
