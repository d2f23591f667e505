import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../../engine/docs/index.js';
import { ids, type MatchCase } from './matching.js';

// The manual's $all examples (inventory with tags and qty arrays).
const inventory = [
  {
    _id: 1,
    code: 'xyz',
    tags: ['school', 'book', 'bag', 'headphone', 'appliance'],
    qty: [
      { size: 'S', num: 10, color: 'blue' },
      { size: 'M', num: 45, color: 'blue' },
      { size: 'L', num: 100, color: 'green' },
    ],
  },
  {
    _id: 2,
    code: 'abc',
    tags: ['appliance', 'school', 'book'],
    qty: [
      { size: '6', num: 100, color: 'green' },
      { size: '6', num: 50, color: 'blue' },
      { size: '8', num: 100, color: 'brown' },
    ],
  },
  {
    _id: 3,
    code: 'efg',
    tags: ['school', 'book'],
    qty: [
      { size: 'S', num: 10, color: 'blue' },
      { size: 'M', num: 100, color: 'blue' },
      { size: 'L', num: 100, color: 'green' },
    ],
  },
  { _id: 4, code: 'ijk', tags: ['electronics', 'school'], qty: [{ size: 'M', num: 100, color: 'green' }] },
  { _id: 5, code: 'lmn', tags: 'school', qty: [] },
];

describe('$all (manual examples)', () => {
  const cases: MatchCase[] = [
    { name: 'all values present', filter: { tags: { $all: ['appliance', 'school', 'book'] } }, expected: [1, 2] },
    { name: 'a single value also matches a non-array field', filter: { tags: { $all: ['school'] } }, expected: [1, 2, 3, 4, 5] },
    {
      name: 'with $elemMatch members',
      filter: { qty: { $all: [{ $elemMatch: { size: 'M', num: { $gt: 50 } } }, { $elemMatch: { num: 100, color: 'green' } }] } },
      expected: [3, 4],
    },
    { name: 'on an embedded field', filter: { 'qty.num': { $all: [50] } }, expected: [2] },
    { name: 'an empty $all matches nothing', filter: { tags: { $all: [] } }, expected: [] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(inventory, c.filter)).toEqual(c.expected));

  it('a nested array member is whole-array equality', () => {
    const docs = [
      { _id: 1, tags: [['ssl', 'security'], 'x'] },
      { _id: 2, tags: ['ssl', 'security'] },
    ];
    expect(ids(docs, { tags: { $all: [['ssl', 'security']] } })).toEqual([1, 2]);
  });

  it('is rewritten as equality conditions in the AST', () => {
    expect(compileFilter({ tags: { $all: ['a', 'b'] } }).ast.children).toEqual([
      { kind: 'field', path: 'tags', ops: [{ op: '$eq', value: 'a' }, { op: '$eq', value: 'b' }] },
    ]);
  });

  const errors: Array<[string, unknown, RegExp]> = [
    ['a non-array', { tags: { $all: 'x' } }, /\$all needs an array/],
    ['$elemMatch mixed with values', { tags: { $all: [{ $elemMatch: { a: 1 } }, 'x'] } }, /\$all\/\$elemMatch has to be consistent/],
    ['an operator member', { tags: { $all: [{ $gt: 1 }] } }, /no \$ expressions in \$all/],
  ];
  for (const [name, filter, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});

describe('$elemMatch (manual examples)', () => {
  const scores = [
    { _id: 1, results: [82, 85, 88] },
    { _id: 2, results: [75, 88, 89] },
    { _id: 3, results: [[82], 90] },
    { _id: 4, results: 83 },
  ];
  const survey = [
    { _id: 1, results: [{ product: 'abc', score: 10 }, { product: 'xyz', score: 5 }] },
    { _id: 2, results: [{ product: 'abc', score: 8 }, { product: 'xyz', score: 7 }] },
    { _id: 3, results: [{ product: 'abc', score: 7 }, { product: 'xyz', score: 8 }] },
    { _id: 4, results: [{ product: 'abc', score: 7 }, { product: 'def', score: 8 }] },
    { _id: 5, results: { product: 'xyz', score: 9 } },
  ];
  const cases: Array<MatchCase & { docs: readonly Record<string, unknown>[] }> = [
    { name: 'one element satisfies every condition', docs: scores, filter: { results: { $elemMatch: { $gte: 80, $lt: 85 } } }, expected: [1] },
    { name: 'conditions without $elemMatch may be met by different elements', docs: scores, filter: { results: { $gte: 80, $lt: 85 } }, expected: [1, 2, 4] },
    { name: 'an element that is an array is not entered', docs: scores, filter: { results: { $elemMatch: { $eq: 82 } } }, expected: [1] },
    { name: 'a non-array field never matches', docs: scores, filter: { results: { $elemMatch: { $gt: 0 } } }, expected: [1, 2, 3] },
    { name: 'a filter on embedded documents', docs: survey, filter: { results: { $elemMatch: { product: 'xyz', score: { $gte: 8 } } } }, expected: [3] },
    { name: 'a single condition', docs: survey, filter: { results: { $elemMatch: { product: 'xyz' } } }, expected: [1, 2, 3] },
    { name: 'without $elemMatch the conditions may hit different documents', docs: survey, filter: { 'results.product': 'xyz', 'results.score': { $gte: 8 } }, expected: [1, 2, 3, 5] },
    { name: '$not inside the value form', docs: scores, filter: { results: { $elemMatch: { $not: { $gte: 80 } } } }, expected: [2, 3] },
    { name: 'an empty $elemMatch matches arrays holding a document or an array', docs: scores, filter: { results: { $elemMatch: {} } }, expected: [3] },
    { name: '$or inside the document form', docs: survey, filter: { results: { $elemMatch: { $or: [{ score: 10 }, { product: 'def' }] } } }, expected: [1, 4] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(c.docs, c.filter)).toEqual(c.expected));

  it('reads an element that is an array as a document with index keys (as MongoDB does)', () => {
    expect(ids([{ _id: 1, a: [[5, 6]] }], { a: { $elemMatch: { '1': 6 } } })).toEqual([1]);
  });

  it('keeps both forms apart in the AST', () => {
    const value = compileFilter({ a: { $elemMatch: { $gt: 1 } } }).ast.children[0];
    expect(value).toEqual({ kind: 'field', path: 'a', ops: [{ op: '$elemMatch', value: { form: 'value', ops: [{ op: '$gt', value: 1 }] } }] });
    const doc = compileFilter({ a: { $elemMatch: { b: 1 } } }).ast.children[0];
    expect(doc).toEqual({
      kind: 'field',
      path: 'a',
      ops: [{ op: '$elemMatch', value: { form: 'document', filter: { kind: 'field', path: 'b', ops: [{ op: '$eq', value: 1 }] } } }],
    });
  });

  it('refuses a non-object operand', () => {
    expect(() => compileFilter({ a: { $elemMatch: [1] } })).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: '$elemMatch needs an Object' }));
  });
});

describe('$size (manual examples)', () => {
  const docs = [
    { _id: 1, field: ['red', 'green'] },
    { _id: 2, field: ['apple', 'lime'] },
    { _id: 3, field: 'fruit' },
    { _id: 4, field: ['orange', 'lemon', 'grapefruit'] },
    { _id: 5, field: [] },
    { _id: 6, field: [['a', 'b', 'c']] },
  ];
  const cases: MatchCase[] = [
    { name: 'exactly two elements', filter: { field: { $size: 2 } }, expected: [1, 2] },
    { name: 'zero', filter: { field: { $size: 0 } }, expected: [5] },
    { name: 'an inner array does not count', filter: { field: { $size: 3 } }, expected: [4] },
    { name: 'a whole-number double', filter: { field: { $size: 1.0 } }, expected: [6] },
    { name: 'with $not', filter: { field: { $not: { $size: 2 } } }, expected: [3, 4, 5, 6] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(docs, c.filter)).toEqual(c.expected));

  const errors: Array<[string, unknown, RegExp]> = [
    ['a negative size', { a: { $size: -1 } }, /\$size may not be negative/],
    ['a fraction', { a: { $size: 1.5 } }, /\$size must be a whole number/],
    ['a range (not supported by MongoDB either)', { a: { $size: { $gt: 1 } } }, /\$size needs a number/],
    ['a string', { a: { $size: '2' } }, /\$size needs a number/],
  ];
  for (const [name, filter, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});
