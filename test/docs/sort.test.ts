import { describe, expect, it } from 'vitest';
import { compileSort, sortDocuments, type Doc } from '../../engine/docs/index.js';

function order(docs: readonly Doc[], spec: unknown): unknown[] {
  return sortDocuments(docs, compileSort(spec)).map((d) => d['_id']);
}

describe('sort', () => {
  const mixed = [
    { _id: 1, a: 'b' },
    { _id: 2, a: 2 },
    { _id: 3 },
    { _id: 4, a: null },
    { _id: 5, a: { x: 1 } },
    { _id: 6, a: [] },
    { _id: 7, a: true },
    { _id: 8, a: new Date(0) },
    { _id: 9, a: 1.5 },
  ];
  const cases: Array<[string, readonly Doc[], unknown, unknown[]]> = [
    ['BSON type order; missing with null; empty array below both', mixed, { a: 1 }, [6, 3, 4, 9, 2, 1, 5, 7, 8]],
    ['descending', mixed, { a: -1 }, [8, 7, 5, 1, 2, 9, 3, 4, 6]],
    [
      'arrays by their smallest element ascending',
      [{ _id: 1, a: [3, 9] }, { _id: 2, a: 4 }, { _id: 3, a: [1, 5] }],
      { a: 1 },
      [3, 1, 2],
    ],
    [
      'arrays by their largest element descending',
      [{ _id: 1, a: [3, 9] }, { _id: 2, a: 4 }, { _id: 3, a: [1, 5] }],
      { a: -1 },
      [1, 3, 2],
    ],
    [
      'values reached through arrays of documents',
      [{ _id: 1, a: [{ b: 5 }, { b: 1 }] }, { _id: 2, a: { b: 3 } }, { _id: 3, a: [{ c: 1 }, { b: 2 }] }],
      { 'a.b': 1 },
      [3, 1, 2],
    ],
    [
      'several keys',
      [{ _id: 1, a: 1, b: 2 }, { _id: 2, a: 1, b: 1 }, { _id: 3, a: 0, b: 9 }],
      { a: 1, b: -1 },
      [3, 1, 2],
    ],
    [
      'strings by code point',
      [{ _id: 1, s: 'b' }, { _id: 2, s: 'B' }, { _id: 3, s: 'é' }, { _id: 4, s: 'a' }],
      { s: 1 },
      [2, 4, 1, 3],
    ],
    ['ties keep their order', [{ _id: 1, a: 1 }, { _id: 2, a: 1 }, { _id: 3, a: 0 }], { a: 1 }, [3, 1, 2]],
    ['an empty sort keeps the order', [{ _id: 2 }, { _id: 1 }], {}, [2, 1]],
  ];
  for (const [name, docs, spec, expected] of cases) it(name, () => expect(order(docs, spec)).toEqual(expected));

  it('compare agrees with sortDocuments', () => {
    const sort = compileSort({ a: -1 });
    expect([...mixed].sort((x, y) => sort.compare(x, y)).map((d) => d._id)).toEqual(order(mixed, { a: -1 }));
  });

  const errors: Array<[string, unknown, RegExp]> = [
    ['a direction other than 1 or -1', { a: 2 }, /\$sort key ordering must be 1 \(for ascending\) or -1 \(for descending\)/],
    ['a string direction', { a: 'asc' }, /must be 1/],
    ['$meta', { a: { $meta: 'textScore' } }, /unsupported: \$meta/],
    ['a non-object', [['a', 1]], /sort must be an object/],
    ['an empty path component', { 'a..b': 1 }, /empty field name/],
    ['a $-prefixed path', { $a: 1 }, /must not have a field name starting with '\$'/],
    ['more than 32 keys', Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 1])), /at most 32 keys/],
  ];
  for (const [name, spec, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => compileSort(spec)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});
