import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../../engine/docs/index.js';
import { ids, type MatchCase } from './matching.js';

// The manual's $and/$or/$nor/$not examples (inventory with price, qty, sale).
const inventory = [
  { _id: 1, item: 'Flour', price: 1.99, qty: 20, sale: true },
  { _id: 2, item: 'Sugar', price: 1.25, qty: 10, sale: false },
  { _id: 3, item: 'Salt', price: 2.5, qty: 0 },
  { _id: 4, item: 'Pepper', price: 1.99 },
  { _id: 5, item: 'Rice', qty: 40, sale: true },
  { _id: 6, item: 'Beans', price: 3, qty: 5, sale: false, tags: ['legume'] },
];

describe('logical operators (manual examples)', () => {
  const cases: MatchCase[] = [
    { name: '$and', filter: { $and: [{ price: { $ne: 1.99 } }, { price: { $exists: true } }] }, expected: [2, 3, 6] },
    { name: '$and of $or', filter: { $and: [{ $or: [{ qty: { $lt: 10 } }, { qty: { $gt: 30 } }] }, { $or: [{ sale: true }, { price: { $lt: 2 } }] }] }, expected: [5] },
    { name: 'several keys are an implicit $and', filter: { price: 1.99, sale: true }, expected: [1] },
    { name: '$or', filter: { $or: [{ qty: { $lt: 10 } }, { price: 1.25 }] }, expected: [2, 3, 6] },
    { name: '$nor matches documents missing the fields', filter: { $nor: [{ price: 1.99 }, { sale: true }] }, expected: [2, 3, 6] },
    { name: '$nor with a range', filter: { $nor: [{ price: 1.99 }, { qty: { $lt: 20 } }, { sale: true }] }, expected: [] },
    { name: '$not matches documents without the field', filter: { price: { $not: { $gt: 1.99 } } }, expected: [1, 2, 4, 5] },
    { name: '$not of a regex', filter: { item: { $not: { $regex: '^S' } } }, expected: [1, 4, 5, 6] },
    { name: '$not of several conditions negates their AND', filter: { qty: { $not: { $gte: 5, $lte: 20 } } }, expected: [3, 4, 5] },
    { name: '$comment is ignored', filter: { $comment: 'why this query', qty: 0 }, expected: [3] },
    { name: 'an empty filter matches everything', filter: {}, expected: [1, 2, 3, 4, 5, 6] },
    { name: 'undefined and null filters match everything', filter: undefined, expected: [1, 2, 3, 4, 5, 6] },
    { name: 'an empty $and member matches everything', filter: { $or: [{}, { qty: 99 }] }, expected: [1, 2, 3, 4, 5, 6] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(inventory, c.filter)).toEqual(c.expected));
});

describe('malformed logical operators', () => {
  const errors: Array<[string, unknown, RegExp]> = [
    ['$and with an empty array', { $and: [] }, /\$and must be a nonempty array/],
    ['$or that is not an array', { $or: { a: 1 } }, /\$or must be a nonempty array/],
    ['$nor with a non-object member', { $nor: [1] }, /\$nor entries need to be full objects/],
    ['$not that is not a document', { a: { $not: 5 } }, /\$not needs a regex or a document/],
    ['$not that is empty', { a: { $not: {} } }, /\$not cannot be empty/],
    ['$not of a field name', { a: { $not: { b: 1 } } }, /unknown operator: b/],
    ['$and at field level', { a: { $and: [{ b: 1 }] } }, /unknown operator: \$and/],
    ['a field operator at the top level', { $gt: 1 }, /unknown top level operator: \$gt/],
    ['an unknown top-level operator', { $foo: 1 }, /unknown top level operator: \$foo/],
    ['a filter that is not an object', [1], /filter must be an object/],
  ];
  for (const [name, filter, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }

  it('bounds the nesting depth', () => {
    let filter: unknown = { a: 1 };
    for (let i = 0; i < 101; i++) filter = { $and: [filter] };
    expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(/maximum nesting depth of 100/) }));
    let ok: unknown = { a: 1 };
    for (let i = 0; i < 98; i++) ok = { $or: [ok] };
    expect(compileFilter(ok).test({ a: 1 })).toBe(true);
  });

  it('bounds $not and $elemMatch nesting too', () => {
    let expr: unknown = { $eq: 1 };
    for (let i = 0; i < 101; i++) expr = { $not: expr };
    expect(() => compileFilter({ a: expr })).toThrow(expect.objectContaining({ code: 'QUERY_ERROR' }));
    let em: unknown = { $eq: 1 };
    for (let i = 0; i < 101; i++) em = { $elemMatch: em };
    expect(() => compileFilter({ a: em })).toThrow(expect.objectContaining({ code: 'QUERY_ERROR' }));
  });
});
