import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../../engine/docs/index.js';
import { ids, type MatchCase } from './matching.js';

// The manual's $exists examples (spices with saffron, cinnamon, mustard).
const spices = [
  { _id: 1, saffron: 5, cinnamon: 5, mustard: null },
  { _id: 2, saffron: 3, cinnamon: null, mustard: 8 },
  { _id: 3, saffron: null, cinnamon: 3, mustard: 9 },
  { _id: 4, saffron: 1, cinnamon: 2, mustard: 3 },
  { _id: 5, saffron: 2, mustard: 5 },
  { _id: 6, saffron: 3, cinnamon: 2 },
  { _id: 7, saffron: 4 },
  { _id: 8, cinnamon: 2 },
  { _id: 9, saffron: 6, cinnamon: 3, mustard: 1 },
];

describe('$exists (manual examples)', () => {
  const cases: MatchCase[] = [
    { name: 'exists and not equal to', filter: { saffron: { $exists: true, $nin: [5, 15] } }, expected: [2, 3, 4, 5, 6, 7, 9] },
    { name: 'true counts null values', filter: { cinnamon: { $exists: true } }, expected: [1, 2, 3, 4, 6, 8, 9] },
    { name: 'false matches missing fields only', filter: { cinnamon: { $exists: false } }, expected: [5, 7] },
    { name: '0 means false', filter: { mustard: { $exists: 0 } }, expected: [6, 7, 8] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(spices, c.filter)).toEqual(c.expected));

  const nested = [
    { _id: 1, a: [{ b: 1 }, { c: 2 }] },
    { _id: 2, a: [{ c: 2 }] },
    { _id: 3, a: [] },
    { _id: 4, a: [1, 2] },
    { _id: 5, a: { b: null } },
  ];
  it('a path through an array exists when some element has it', () => expect(ids(nested, { 'a.b': { $exists: true } })).toEqual([1, 5]));
  it('$exists: false through arrays', () => expect(ids(nested, { 'a.b': { $exists: false } })).toEqual([2, 3, 4]));
  it('an empty array exists', () => expect(ids(nested, { a: { $exists: true } })).toEqual([1, 2, 3, 4, 5]));
});

// The manual's $type examples (addressBook).
const addressBook = [
  { _id: 1, address: '2030 Martin Way', zipCode: '90698345' },
  { _id: 2, address: '156 Lunar Place', zipCode: 43339374 },
  { _id: 3, address: '2324 Pluto Place', zipCode: 3921412.5 },
  { _id: 4, address: '55 Saturn Ring', zipCode: 88602117 },
  { _id: 5, address: '104 Venus Drive', zipCode: ['834847278', '1893289032'] },
  { _id: 6, address: '1 Big Number Road', zipCode: 9007199254740991 },
  { _id: 7, address: '2 Nowhere', zipCode: null },
  { _id: 8, address: '3 Somewhere', zipCode: new Date(0) },
  { _id: 9, address: '4 Elsewhere', zipCode: [] },
  { _id: 10, address: '5 Bool Street', zipCode: true },
];

describe('$type (manual examples)', () => {
  const docs = addressBook;
  const cases: MatchCase[] = [
    { name: 'by code: 2 is string (array elements count)', filter: { zipCode: { $type: 2 } }, expected: [1, 5] },
    { name: 'by name', filter: { zipCode: { $type: 'string' } }, expected: [1, 5] },
    { name: 'double: numbers that are not integers', filter: { zipCode: { $type: 'double' } }, expected: [3] },
    { name: 'int: integers in the int32 range', filter: { zipCode: { $type: 'int' } }, expected: [2, 4] },
    { name: 'long: larger safe integers', filter: { zipCode: { $type: 'long' } }, expected: [6] },
    { name: 'number: any numeric type', filter: { zipCode: { $type: 'number' } }, expected: [2, 3, 4, 6] },
    { name: 'several types', filter: { zipCode: { $type: ['string', 'double'] } }, expected: [1, 3, 5] },
    { name: 'array', filter: { zipCode: { $type: 'array' } }, expected: [5, 9] },
    { name: 'null (not missing)', filter: { zipCode: { $type: 'null' } }, expected: [7] },
    { name: 'date', filter: { zipCode: { $type: 'date' } }, expected: [8] },
    { name: 'bool by code 8', filter: { zipCode: { $type: 8 } }, expected: [10] },
    { name: 'types this model cannot hold match nothing', filter: { zipCode: { $type: 'objectId' } }, expected: [] },
    { name: 'an empty list matches nothing', filter: { zipCode: { $type: [] } }, expected: [] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(docs, c.filter)).toEqual(c.expected));

  it('missing fields have no type', () => expect(ids([{ _id: 1 }], { a: { $type: 'null' } })).toEqual([]));

  const errors: Array<[string, unknown, RegExp]> = [
    ['an unknown name', { a: { $type: 'float' } }, /Unknown type name alias: float/],
    ['an unknown code', { a: { $type: 99 } }, /Invalid numerical type code: 99/],
    ['a fractional code', { a: { $type: 2.5 } }, /Invalid numerical type code: 2.5/],
    ['a non-string, non-number', { a: { $type: true } }, /type must be represented as a number or a string/],
    ['a bad member of a list', { a: { $type: ['string', 'nope'] } }, /Unknown type name alias: nope/],
  ];
  for (const [name, filter, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});
