import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../../engine/docs/index.js';
import { ids, type MatchCase } from './matching.js';

// The manual's $eq / $in / $nin examples (inventory collection).
const inventory = [
  { _id: 1, item: { name: 'ab', code: '123' }, qty: 15, tags: ['A', 'B', 'C'] },
  { _id: 2, item: { name: 'cd', code: '123' }, qty: 20, tags: ['B'] },
  { _id: 3, item: { name: 'ij', code: '456' }, qty: 25, tags: ['A', 'B'] },
  { _id: 4, item: { name: 'xy', code: '456' }, qty: 30, tags: ['B', 'A'] },
  { _id: 5, item: { name: 'mn', code: '000' }, qty: 20, tags: [['A', 'B'], 'C'] },
];

// The manual's $gt / $ne examples: one document lacks `quantity`.
const supplies = [
  { _id: 1, item: 'nuts', quantity: 30, carrier: { name: 'Shipit', fee: 3 } },
  { _id: 2, item: 'bolts', quantity: 50, carrier: { name: 'Shipit', fee: 4 } },
  { _id: 3, item: 'washers', quantity: 10, carrier: { name: 'Shipit', fee: 1 } },
  { _id: 4, item: 'pins', carrier: { name: 'Shipit', fee: 5 } },
];

const mixed = [
  { _id: 1, a: 1 },
  { _id: 2, a: 1.5 },
  { _id: 3, a: '1' },
  { _id: 4, a: null },
  { _id: 5 },
  { _id: 6, a: [1, 5] },
  { _id: 7, a: [] },
  { _id: 8, a: [null] },
  { _id: 9, a: { b: 1 } },
  { _id: 10, a: new Date('2024-01-01T00:00:00Z') },
  { _id: 11, a: true },
];

describe('$eq (manual examples)', () => {
  const cases: MatchCase[] = [
    { name: 'a field equals a value', filter: { qty: { $eq: 20 } }, expected: [2, 5] },
    { name: 'implicit equality', filter: { qty: 20 }, expected: [2, 5] },
    { name: 'a field in an embedded document', filter: { 'item.name': { $eq: 'ab' } }, expected: [1] },
    { name: 'an array element equals a value', filter: { tags: { $eq: 'B' } }, expected: [1, 2, 3, 4] },
    { name: 'an array equals an array (whole, or as an element)', filter: { tags: { $eq: ['A', 'B'] } }, expected: [3, 5] },
    { name: 'an embedded document equals a document, fields in order', filter: { item: { name: 'ab', code: '123' } }, expected: [1] },
    { name: 'an embedded document with fields in another order is not equal', filter: { item: { code: '123', name: 'ab' } }, expected: [] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(inventory, c.filter)).toEqual(c.expected));
});

describe('equality across types', () => {
  const cases: MatchCase[] = [
    { name: 'numbers compare by value, never with strings', filter: { a: 1 }, expected: [1, 6] },
    { name: 'null matches null, missing, and arrays holding null', filter: { a: null }, expected: [4, 5, 8] },
    { name: '$eq null is the same', filter: { a: { $eq: null } }, expected: [4, 5, 8] },
    { name: 'an empty array matches only empty arrays', filter: { a: [] }, expected: [7] },
    { name: 'dates compare by time', filter: { a: new Date('2024-01-01T00:00:00Z') }, expected: [10] },
    { name: 'Extended JSON dates in a filter', filter: { a: { $date: '2024-01-01T00:00:00Z' } }, expected: [10] },
    { name: 'booleans only equal booleans', filter: { a: true }, expected: [11] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(mixed, c.filter)).toEqual(c.expected));
});

describe('$gt, $gte, $lt, $lte', () => {
  const cases: MatchCase[] = [
    { name: '$gt (manual)', filter: { quantity: { $gt: 20 } }, expected: [1, 2] },
    { name: '$gte (manual)', filter: { quantity: { $gte: 30 } }, expected: [1, 2] },
    { name: '$lt (manual)', filter: { quantity: { $lt: 20 } }, expected: [3] },
    { name: '$lte on an embedded field (manual)', filter: { 'carrier.fee': { $lte: 4 } }, expected: [1, 2, 3] },
    { name: 'a range is two independent conditions', filter: { quantity: { $gt: 10, $lt: 50 } }, expected: [1] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(supplies, c.filter)).toEqual(c.expected));

  const typed: MatchCase[] = [
    { name: 'a number bound never matches strings, booleans or dates', filter: { a: { $gt: 0 } }, expected: [1, 2, 6] },
    { name: 'a string bound only matches strings', filter: { a: { $gte: '' } }, expected: [3] },
    { name: 'a date bound only matches dates', filter: { a: { $lt: { $date: '2030-01-01T00:00:00Z' } } }, expected: [10] },
    { name: '$gte null matches null and missing, like equality', filter: { a: { $gte: null } }, expected: [4, 5, 8] },
    { name: '$lte null matches null and missing', filter: { a: { $lte: null } }, expected: [4, 5, 8] },
    { name: '$gt null matches nothing', filter: { a: { $gt: null } }, expected: [] },
    { name: '$lt null matches nothing', filter: { a: { $lt: null } }, expected: [] },
    { name: 'an array matches when any element does', filter: { a: { $gt: 4 } }, expected: [6] },
    { name: 'an array operand compares with whole arrays in BSON order', filter: { a: { $gt: [1] } }, expected: [6] },
    { name: 'a document operand compares with documents field by field', filter: { a: { $lt: { b: 2 } } }, expected: [9] },
  ];
  for (const c of typed) it(c.name, () => expect(ids(mixed, c.filter)).toEqual(c.expected));

  it('an array with elements on both sides of a range matches it (each condition on its own)', () => {
    expect(ids([{ _id: 1, a: [0, 10] }], { a: { $gt: 5, $lt: 5 } })).toEqual([1]);
  });
});

describe('$ne', () => {
  it('matches documents without the field (manual)', () => expect(ids(supplies, { quantity: { $ne: 30 } })).toEqual([2, 3, 4]));
  it('an array field matches only when no element equals', () => expect(ids(mixed, { a: { $ne: 1 } })).toEqual([2, 3, 4, 5, 7, 8, 9, 10, 11]));
  it('$ne null excludes null, missing and arrays holding null', () => expect(ids(mixed, { a: { $ne: null } })).toEqual([1, 2, 3, 6, 7, 9, 10, 11]));
});

describe('$in and $nin (manual examples)', () => {
  const cases: MatchCase[] = [
    { name: '$in values', filter: { qty: { $in: [15, 30] } }, expected: [1, 4] },
    { name: '$in matches array elements', filter: { tags: { $in: ['C', 'D'] } }, expected: [1, 5] },
    { name: '$in matches whole arrays', filter: { tags: { $in: [['A', 'B']] } }, expected: [3, 5] },
    { name: '$in with no values matches nothing', filter: { qty: { $in: [] } }, expected: [] },
    { name: '$nin values', filter: { qty: { $nin: [15, 30] } }, expected: [2, 3, 5] },
    { name: '$nin on an array field: no element may be listed', filter: { tags: { $nin: ['C'] } }, expected: [2, 3, 4] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(inventory, c.filter)).toEqual(c.expected));

  it('$in with null also matches missing fields', () => expect(ids(mixed, { a: { $in: [null, '1'] } })).toEqual([3, 4, 5, 8]));
  it('$nin matches documents without the field', () => expect(ids(supplies, { quantity: { $nin: [10, 30] } })).toEqual([2, 4]));
  it('numbers of any representation are found', () => expect(ids(mixed, { a: { $in: [1.0, 5] } })).toEqual([1, 6]));

  const errors: Array<[string, unknown, RegExp]> = [
    ['$in not an array', { a: { $in: 1 } }, /\$in needs an array/],
    ['$nin not an array', { a: { $nin: 'x' } }, /\$nin needs an array/],
    ['an operator inside $in', { a: { $in: [{ $gt: 1 }] } }, /cannot nest \$ under \$in/],
    ['$regex inside $in', { a: { $in: [{ $regex: 'x' }] } }, /\$in does not accept \$regex/],
  ];
  for (const [name, filter, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});
