import { describe, expect, it } from 'vitest';
import type { Doc } from '../../../engine/docs/index.js';
import { modifies, updated, type UpdateCase } from './applying.js';

function run(cases: readonly UpdateCase[]): void {
  for (const c of cases) it(c.name, () => expect(updated(c.doc, c.update)).toStrictEqual(c.expected));
}

function refuses(cases: ReadonlyArray<[string, Doc, unknown, RegExp]>): void {
  for (const [name, doc, update, message] of cases) {
    it(`refuses ${name}`, () => {
      expect(() => updated(doc, update)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
}

describe('$push (manual examples)', () => {
  run([
    { name: 'a value', doc: { _id: 1, scores: [44, 78, 38, 80] }, update: { $push: { scores: 89 } }, expected: { _id: 1, scores: [44, 78, 38, 80, 89] } },
    { name: 'several values with $each', doc: { _id: 1, scores: [1] }, update: { $push: { scores: { $each: [90, 92, 85] } } }, expected: { _id: 1, scores: [1, 90, 92, 85] } },
    { name: 'an array value is pushed as one element', doc: { _id: 1, a: [] }, update: { $push: { a: [1, 2] } }, expected: { _id: 1, a: [[1, 2]] } },
    { name: 'a missing field becomes an array', doc: { _id: 1 }, update: { $push: { 'a.b': 1 } }, expected: { _id: 1, a: { b: [1] } } },
    {
      name: '$each, $sort by a field and $slice (manual: quizzes)',
      doc: { _id: 5, quizzes: [{ wk: 1, score: 10 }, { wk: 2, score: 8 }, { wk: 3, score: 5 }, { wk: 4, score: 6 }] },
      update: { $push: { quizzes: { $each: [{ wk: 5, score: 8 }, { wk: 6, score: 7 }, { wk: 7, score: 6 }], $sort: { score: -1 }, $slice: 3 } } },
      expected: { _id: 5, quizzes: [{ wk: 1, score: 10 }, { wk: 2, score: 8 }, { wk: 5, score: 8 }] },
    },
    { name: '$position', doc: { _id: 1, scores: [100] }, update: { $push: { scores: { $each: [50, 60, 70], $position: 0 } } }, expected: { _id: 1, scores: [50, 60, 70, 100] } },
    { name: 'a negative $position counts from the end', doc: { _id: 1, scores: [50, 60, 70, 100] }, update: { $push: { scores: { $each: [20, 30], $position: -2 } } }, expected: { _id: 1, scores: [50, 60, 20, 30, 70, 100] } },
    { name: 'a negative $slice keeps the last elements', doc: { _id: 1, s: [40, 50, 60] }, update: { $push: { s: { $each: [80, 78, 86], $slice: -5 } } }, expected: { _id: 1, s: [50, 60, 80, 78, 86] } },
    { name: '$slice alone trims', doc: { _id: 1, s: [1, 2, 3] }, update: { $push: { s: { $each: [], $slice: 1 } } }, expected: { _id: 1, s: [1] } },
    { name: '$sort of whole values in BSON order', doc: { _id: 1, s: [3, 'a', null] }, update: { $push: { s: { $each: [1], $sort: 1 } } }, expected: { _id: 1, s: [null, 1, 3, 'a'] } },
    { name: 'modifiers on a missing field', doc: { _id: 1 }, update: { $push: { s: { $each: [3, 1, 2], $sort: -1, $slice: 2 } } }, expected: { _id: 1, s: [3, 2] } },
  ]);
  it('an empty $each on an existing array is not a modification', () => expect(modifies({ _id: 1, a: [1] }, { $push: { a: { $each: [] } } })).toBe(false));
  refuses([
    ['a non-array field', { a: 1 }, { $push: { a: 2 } }, /The field 'a' must be an array but is of type int/],
    ['$each that is not an array', {}, { $push: { a: { $each: 1 } } }, /The argument to \$each in \$push must be an array/],
    ['an unknown clause', {}, { $push: { a: { $each: [], $foo: 1 } } }, /Unrecognized clause in \$push: \$foo/],
    ['a fractional $slice', {}, { $push: { a: { $each: [], $slice: 1.5 } } }, /The value for \$slice must be an integer/],
    ['a bad $sort', {}, { $push: { a: { $each: [], $sort: 2 } } }, /The \$sort is invalid/],
  ]);
});

describe('$addToSet (manual examples)', () => {
  run([
    { name: 'a new value', doc: { _id: 1, colors: ['blue', 'green', 'red'] }, update: { $addToSet: { colors: 'mauve' } }, expected: { _id: 1, colors: ['blue', 'green', 'red', 'mauve'] } },
    { name: 'an existing value', doc: { _id: 1, colors: ['blue', 'green'] }, update: { $addToSet: { colors: 'green' } }, expected: { _id: 1, colors: ['blue', 'green'] } },
    { name: 'an array value is one element', doc: { _id: 1, letters: ['a', 'b'] }, update: { $addToSet: { letters: ['c', 'd'] } }, expected: { _id: 1, letters: ['a', 'b', ['c', 'd']] } },
    {
      name: '$each adds each new value once',
      doc: { _id: 2, item: 'cable', tags: ['electronics', 'supplies'] },
      update: { $addToSet: { tags: { $each: ['camera', 'electronics', 'accessories', 'camera'] } } },
      expected: { _id: 2, item: 'cable', tags: ['electronics', 'supplies', 'camera', 'accessories'] },
    },
    { name: 'a missing field', doc: { _id: 1 }, update: { $addToSet: { t: { $each: [1, 1, 2] } } }, expected: { _id: 1, t: [1, 2] } },
    { name: 'documents compare field by field in order', doc: { _id: 1, a: [{ x: 1, y: 2 }] }, update: { $addToSet: { a: { y: 2, x: 1 } } }, expected: { _id: 1, a: [{ x: 1, y: 2 }, { y: 2, x: 1 }] } },
    { name: 'numbers compare by value', doc: { _id: 1, a: [1] }, update: { $addToSet: { a: 1.0 } }, expected: { _id: 1, a: [1] } },
  ]);
  it('adding only present values is not a modification', () => expect(modifies({ _id: 1, a: [1, 2] }, { $addToSet: { a: { $each: [2, 1] } } })).toBe(false));
  refuses([
    ['a non-array field', { a: 'x' }, { $addToSet: { a: 1 } }, /Cannot apply \$addToSet to non-array field/],
    ['$each that is not an array', {}, { $addToSet: { a: { $each: 'x' } } }, /The argument to \$each in \$addToSet must be an array/],
    ['fields after $each', {}, { $addToSet: { a: { $each: [], $slice: 1 } } }, /Found unexpected fields after \$each/],
  ]);
});

describe('$pop (manual examples)', () => {
  run([
    { name: 'the first element', doc: { _id: 1, scores: [8, 9, 10] }, update: { $pop: { scores: -1 } }, expected: { _id: 1, scores: [9, 10] } },
    { name: 'the last element', doc: { _id: 1, scores: [9, 10] }, update: { $pop: { scores: 1 } }, expected: { _id: 1, scores: [9] } },
    { name: 'the last one leaves an empty array', doc: { _id: 1, s: [1] }, update: { $pop: { s: 1 } }, expected: { _id: 1, s: [] } },
  ]);
  it('a missing field or an empty array is a no-op', () => expect(modifies({ _id: 1, e: [] }, { $pop: { e: 1, m: -1 } })).toBe(false));
  refuses([
    ['a non-array field', { a: 1 }, { $pop: { a: 1 } }, /Path 'a' contains an element of non-array type 'int'/],
    ['an operand other than 1 or -1', {}, { $pop: { a: 2 } }, /\$pop expects 1 or -1, found: 2/],
  ]);
});

describe('$pull and $pullAll (manual examples)', () => {
  const stores = {
    _id: 1,
    fruits: ['apples', 'pears', 'oranges', 'grapes', 'bananas'],
    vegetables: ['carrots', 'celery', 'squash', 'carrots'],
  };
  run([
    {
      name: 'values and conditions',
      doc: stores,
      update: { $pull: { fruits: { $in: ['apples', 'oranges'] }, vegetables: 'carrots' } },
      expected: { _id: 1, fruits: ['pears', 'grapes', 'bananas'], vegetables: ['celery', 'squash'] },
    },
    { name: 'a condition on each element', doc: { _id: 1, votes: [3, 5, 6, 7, 7, 8] }, update: { $pull: { votes: { $gte: 6 } } }, expected: { _id: 1, votes: [3, 5] } },
    {
      name: 'documents matching a filter, whatever their other fields',
      doc: { _id: 1, results: [{ item: 'A', score: 5 }, { item: 'B', score: 8, comment: 'x' }] },
      update: { $pull: { results: { score: 8, item: 'B' } } },
      expected: { _id: 1, results: [{ item: 'A', score: 5 }] },
    },
    {
      name: 'documents with $elemMatch on a nested array',
      doc: { _id: 1, results: [{ item: 'A', answers: [{ q: 1, a: 4 }, { q: 2, a: 6 }] }, { item: 'B', answers: [{ q: 1, a: 8 }, { q: 2, a: 9 }] }] },
      update: { $pull: { results: { answers: { $elemMatch: { q: 2, a: { $gte: 8 } } } } } },
      expected: { _id: 1, results: [{ item: 'A', answers: [{ q: 1, a: 4 }, { q: 2, a: 6 }] }] },
    },
    { name: 'an operator condition sees through an inner array', doc: { _id: 1, a: [[7], 5] }, update: { $pull: { a: { $gte: 6 } } }, expected: { _id: 1, a: [5] } },
    { name: 'an array value removes equal arrays only', doc: { _id: 1, a: [[1, 2], [2, 1], 1] }, update: { $pull: { a: [1, 2] } }, expected: { _id: 1, a: [[2, 1], 1] } },
    { name: '$pullAll', doc: { _id: 1, scores: [0, 2, 5, 5, 1, 0] }, update: { $pullAll: { scores: [0, 5] } }, expected: { _id: 1, scores: [2, 1] } },
  ]);
  it('nothing to remove is not a modification', () => expect(modifies({ _id: 1, a: [1] }, { $pull: { a: 2, missing: 1 } })).toBe(false));
  refuses([
    ['a non-array field', { a: 1 }, { $pull: { a: 1 } }, /Cannot apply \$pull to a non-array value/],
    ['a $pullAll operand that is not an array', {}, { $pullAll: { a: 1 } }, /\$pullAll requires an array argument/],
    ['an invalid condition', {}, { $pull: { a: { $in: 1 } } }, /\$in needs an array/],
  ]);
});
