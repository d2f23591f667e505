// The positional update operators, laid out as the MongoDB manual's pages for `$`, `$[]` and
// `$[<identifier>]` (examples from those pages and from MongoDB's own update_arrayFilters tests).
import { describe, expect, it } from 'vitest';
import { buildUpsertDocument, compileFilter, compileUpdate, type Doc } from '../../../engine/docs/index.js';
import { NOW } from './applying.js';

interface PositionalCase {
  readonly name: string;
  readonly doc: Doc;
  readonly filter?: Doc;
  readonly update: Doc;
  readonly arrayFilters?: unknown[];
  readonly expected: Doc;
}

function apply(doc: Doc, filter: Doc, update: Doc, arrayFilters?: unknown[]): { doc: Doc; modified: boolean } {
  const f = compileFilter(filter);
  // The filter must match, as it would have for the update to reach the document.
  expect(f.test(doc)).toBe(true);
  return compileUpdate(update, { filter: f.ast, arrayFilters }).apply(doc, { now: NOW });
}

function table(cases: readonly PositionalCase[]): void {
  for (const c of cases) {
    it(c.name, () => {
      const before = structuredClone(c.doc);
      expect(apply(c.doc, c.filter ?? {}, c.update, c.arrayFilters).doc).toStrictEqual(c.expected);
      expect(c.doc).toStrictEqual(before);
    });
  }
}

function refuses(doc: Doc, filter: Doc, update: Doc, arrayFilters: unknown[] | undefined, message: RegExp, code = 'QUERY_ERROR'): void {
  expect(() => apply(doc, filter, update, arrayFilters)).toThrow(expect.objectContaining({ code, message: expect.stringMatching(message) }));
}

const students = [
  { _id: 4, grades: [{ grade: 80, mean: 75, std: 8 }, { grade: 85, mean: 90, std: 5 }, { grade: 85, mean: 85, std: 8 }] },
  { _id: 5, grades: [{ grade: 80, mean: 75, std: 8 }, { grade: 85, mean: 90, std: 5 }, { grade: 90, mean: 85, std: 3 }] },
];

describe('$ (the element the filter matched)', () => {
  table([
    { name: 'a value in an array', doc: { _id: 1, grades: [85, 80, 80] }, filter: { _id: 1, grades: 80 }, update: { $set: { 'grades.$': 82 } }, expected: { _id: 1, grades: [85, 82, 80] } },
    {
      name: 'a field of a document in an array',
      doc: students[0]!,
      filter: { _id: 4, 'grades.grade': 85 },
      update: { $set: { 'grades.$.std': 6 } },
      expected: { _id: 4, grades: [{ grade: 80, mean: 75, std: 8 }, { grade: 85, mean: 90, std: 6 }, { grade: 85, mean: 85, std: 8 }] },
    },
    {
      name: 'several conditions through $elemMatch',
      doc: students[1]!,
      filter: { _id: 5, grades: { $elemMatch: { grade: { $lte: 90 }, mean: { $gt: 80 } } } },
      update: { $set: { 'grades.$.std': 6 } },
      expected: { _id: 5, grades: [{ grade: 80, mean: 75, std: 8 }, { grade: 85, mean: 90, std: 6 }, { grade: 90, mean: 85, std: 3 }] },
    },
    {
      name: 'a range condition picks the first element in range',
      doc: { _id: 1, a: [1, 5, 7] },
      filter: { a: { $gt: 4 } },
      update: { $inc: { 'a.$': 10 } },
      expected: { _id: 1, a: [1, 15, 7] },
    },
    {
      name: 'several conditions on the array: the last one records the element (use $elemMatch for one element matching all)',
      doc: { _id: 1, a: [{ x: 1, y: 2 }, { x: 2, y: 2 }] },
      filter: { 'a.x': 2, 'a.y': 2 },
      update: { $set: { 'a.$.z': true } },
      expected: { _id: 1, a: [{ x: 1, y: 2, z: true }, { x: 2, y: 2 }] },
    },
    { name: '$and members in order, the last one wins', doc: { _id: 1, a: [1, 2, 3], b: [4, 5, 6] }, filter: { $and: [{ a: 1 }, { a: 2 }, { a: 3 }] }, update: { $set: { 'b.$': 0 } }, expected: { _id: 1, a: [1, 2, 3], b: [4, 5, 0] } },
    { name: '$and members reversed', doc: { _id: 1, a: [1, 2, 3], b: [4, 5, 6] }, filter: { $and: [{ a: 3 }, { a: 2 }, { a: 1 }] }, update: { $set: { 'b.$': 0 } }, expected: { _id: 1, a: [1, 2, 3], b: [0, 5, 6] } },
    { name: 'parallel arrays: the position a condition on another array recorded', doc: { _id: 1, x: [90, 91, 92], y: ['a', 'b', 'c'] }, filter: { x: 92 }, update: { $set: { 'y.$': 'z' } }, expected: { _id: 1, x: [90, 91, 92], y: ['a', 'b', 'z'] } },
    { name: '$in: the first element matching any value', doc: { _id: 1, a: [1, 2, 3] }, filter: { a: { $in: [3, 2] } }, update: { $set: { 'a.$': 0 } }, expected: { _id: 1, a: [1, 0, 3] } },
    { name: '$or over one path is an $in', doc: { _id: 1, a: [1, 2, 3], b: [4, 5, 6] }, filter: { $or: [{ a: 2 }, { a: 3 }] }, update: { $set: { 'b.$': 0 } }, expected: { _id: 1, a: [1, 2, 3], b: [4, 0, 6] } },
    { name: 'nested $elemMatch', doc: { _id: 1, a: [[1, 2], [3, 4]], b: [[5, 6], [7, 8]] }, filter: { a: { $elemMatch: { $elemMatch: { $eq: 3 } } } }, update: { $set: { 'b.$': [] } }, expected: { _id: 1, a: [[1, 2], [3, 4]], b: [[5, 6], []] } },
    { name: '$unset sets the element to null', doc: { _id: 1, a: [1, 2, 3] }, filter: { a: 2 }, update: { $unset: { 'a.$': '' } }, expected: { _id: 1, a: [1, null, 3] } },
    { name: 'a nested array path', doc: { _id: 1, x: { y: [8, 7, 6] } }, filter: { 'x.y': 7 }, update: { $inc: { 'x.y.$': 1 } }, expected: { _id: 1, x: { y: [8, 8, 6] } } },
    { name: '$push into the matched element', doc: { _id: 1, a: [{ k: 'x', v: [] }, { k: 'y', v: [1] }] }, filter: { 'a.k': 'y' }, update: { $push: { 'a.$.v': 2 } }, expected: { _id: 1, a: [{ k: 'x', v: [] }, { k: 'y', v: [1, 2] }] } },
    { name: 'a new field in the matched element', doc: { _id: 1, a: [{ k: 1 }, { k: 2 }] }, filter: { 'a.k': 2 }, update: { $set: { 'a.$.n': { deep: true } } }, expected: { _id: 1, a: [{ k: 1 }, { k: 2, n: { deep: true } }] } },
    {
      name: 'followed by $[] in the element',
      doc: { _id: 1, a: [{ k: 1, s: [1, 2] }, { k: 2, s: [3, 4] }] },
      filter: { 'a.k': 2 },
      update: { $inc: { 'a.$.s.$[]': 10 } },
      expected: { _id: 1, a: [{ k: 1, s: [1, 2] }, { k: 2, s: [13, 14] }] },
    },
  ]);

  it('takes the position from each document in an update of many', () => {
    const filter = compileFilter({ 'a.k': 'x' });
    const update = compileUpdate({ $set: { 'a.$.hit': true } }, { filter: filter.ast });
    expect(update.apply({ _id: 1, a: [{ k: 'x' }, { k: 'y' }] }).doc).toStrictEqual({ _id: 1, a: [{ k: 'x', hit: true }, { k: 'y' }] });
    expect(update.apply({ _id: 2, a: [{ k: 'y' }, { k: 'x' }] }).doc).toStrictEqual({ _id: 2, a: [{ k: 'y' }, { k: 'x', hit: true }] });
  });

  const NO_MATCH = /The positional operator did not find the match needed from the query/;
  it('refuses a filter without a condition on the array', () => refuses({ _id: 1, a: [1] }, { _id: 1 }, { $set: { 'a.$': 2 } }, undefined, NO_MATCH));
  it('refuses a condition that matched the field but no element (a negation)', () => refuses({ _id: 1, a: [1] }, { a: { $ne: 5 } }, { $set: { 'a.$': 2 } }, undefined, NO_MATCH));
  it('refuses a field that is not an array', () => refuses({ _id: 1, a: 1 }, { a: 1 }, { $set: { 'a.$': 2 } }, undefined, NO_MATCH));
  it('refuses a position from an $or over several paths', () => refuses({ _id: 1, a: [1] }, { $or: [{ a: 1 }, { b: 1 }] }, { $set: { 'a.$': 2 } }, undefined, NO_MATCH));
  it('refuses a position from $nor', () => refuses({ _id: 1, a: [1] }, { $nor: [{ a: 5 }] }, { $set: { 'a.$': 2 } }, undefined, NO_MATCH));
  it('refuses a position from a whole-array equality', () => refuses({ _id: 1, a: [4, 5, 6], c: [7, 8, 9] }, { a: [4, 5, 6] }, { $set: { 'c.$': 2 } }, undefined, NO_MATCH));
  it('stands for the recorded position after $[] too', () => {
    expect(apply({ _id: 1, a: [{ s: [1, 2] }, { s: [3, 4] }], k: [7, 8] }, { k: 8 }, { $set: { 'a.$[].s.$': 0 } }).doc).toStrictEqual({ _id: 1, a: [{ s: [1, 0] }, { s: [3, 0] }], k: [7, 8] });
  });
});

describe('$[] (every element)', () => {
  table([
    { name: 'every value', doc: { _id: 0, a: [0, 1, 0, 1] }, update: { $set: { 'a.$[]': 3 } }, expected: { _id: 0, a: [3, 3, 3, 3] } },
    { name: '$inc of every value', doc: { _id: 1, grades: [85, 82, 80] }, update: { $inc: { 'grades.$[]': 10 } }, expected: { _id: 1, grades: [95, 92, 90] } },
    { name: 'a field of every document', doc: { _id: 0, a: [{ b: 0 }, { b: 1 }] }, update: { $set: { 'a.$[].b': 2 } }, expected: { _id: 0, a: [{ b: 2 }, { b: 2 }] } },
    { name: '$unset of every value', doc: { _id: 0, a: [0, 1] }, update: { $unset: { 'a.$[]': true } }, expected: { _id: 0, a: [null, null] } },
    { name: '$min of a field everywhere', doc: { _id: 0, a: [{ b: 0, c: 1 }, { b: 0, c: -1 }, { b: 1, c: 1 }] }, update: { $min: { 'a.$[].c': 0 } }, expected: { _id: 0, a: [{ b: 0, c: 0 }, { b: 0, c: -1 }, { b: 1, c: 0 }] } },
    { name: '$addToSet into every inner array', doc: { _id: 0, a: [[0], [1]] }, update: { $addToSet: { 'a.$[]': 2 } }, expected: { _id: 0, a: [[0, 2], [1, 2]] } },
    { name: '$pop of every inner array', doc: { _id: 0, a: [[0]] }, update: { $pop: { 'a.$[]': 1 } }, expected: { _id: 0, a: [[]] } },
    { name: '$pullAll from every inner array', doc: { _id: 0, a: [[0, 1, 2, 3], [1, 2, 3, 4]] }, update: { $pullAll: { 'a.$[]': [0, 2] } }, expected: { _id: 0, a: [[1, 3], [1, 3, 4]] } },
    { name: '$pull from every inner array', doc: { _id: 0, a: [[0, 1], [1, 2]] }, update: { $pull: { 'a.$[]': 1 } }, expected: { _id: 0, a: [[0], [2]] } },
    { name: '$push into every inner array', doc: { _id: 0, a: [[0, 1], [2, 3]] }, update: { $push: { 'a.$[]': 4 } }, expected: { _id: 0, a: [[0, 1, 4], [2, 3, 4]] } },
    { name: 'an empty array is left as it is', doc: { _id: 0, a: [] }, update: { $inc: { 'a.$[]': 1 } }, expected: { _id: 0, a: [] } },
    { name: 'nested $[]', doc: { _id: 0, a: [[1, 2], [3]] }, update: { $mul: { 'a.$[].$[]': 2 } }, expected: { _id: 0, a: [[2, 4], [6]] } },
    {
      name: 'new fields created in path order inside each element',
      doc: { _id: 0, a: [{}, { z: 1 }] },
      update: { $set: { 'a.$[].y': 1, 'a.$[].x': 2 } },
      expected: { _id: 0, a: [{ x: 2, y: 1 }, { z: 1, x: 2, y: 1 }] },
    },
  ]);

  it('reports no change when every element already holds the value', () => {
    expect(apply({ _id: 0, a: [3, 3] }, {}, { $set: { 'a.$[]': 3 } }).modified).toBe(false);
  });
  it('refuses a missing array', () => refuses({ _id: 0 }, {}, { $set: { 'a.$[]': 1 } }, undefined, /The path 'a' must exist in the document in order to apply array updates/));
  it('refuses a value that is not an array', () => refuses({ _id: 0, a: 5 }, {}, { $set: { 'a.$[]': 1 } }, undefined, /Cannot apply array updates to non-array element a: 5/));
  it('refuses an inner path through a scalar element', () => refuses({ _id: 0, a: [1, { b: 1 }] }, {}, { $set: { 'a.$[].b': 2 } }, undefined, /Cannot create field 'b' in element \{0: 1\}/));
  it('refuses a nested $[] whose inner field is missing', () => refuses({ _id: 0, a: [{ b: [1] }, {}] }, {}, { $set: { 'a.$[].b.$[]': 2 } }, undefined, /The path 'a.1.b' must exist/));
  it('refuses an operator that does not fit one element, changing nothing', () => refuses({ _id: 0, a: [1, 'x'] }, {}, { $inc: { 'a.$[]': 1 } }, undefined, /Cannot apply \$inc to a value of non-numeric type/));
});

describe('$[<identifier>] (the elements an array filter matches)', () => {
  table([
    { name: 'values equal to a constant', doc: { _id: 0, a: [0, 1, 0, 1] }, update: { $set: { 'a.$[i]': 2 } }, arrayFilters: [{ i: 0 }], expected: { _id: 0, a: [2, 1, 2, 1] } },
    { name: 'a range', doc: { _id: 1, grades: [95, 92, 90] }, update: { $set: { 'grades.$[element]': 100 } }, arrayFilters: [{ element: { $gte: 92 } }], expected: { _id: 1, grades: [100, 100, 90] } },
    { name: 'a field of the element', doc: { _id: 0, a: [{ b: 0 }, { b: 1 }] }, update: { $set: { 'a.$[i].b': 2 } }, arrayFilters: [{ 'i.b': 0 }], expected: { _id: 0, a: [{ b: 2 }, { b: 1 }] } },
    {
      name: 'several conditions on the element',
      doc: students[0]!,
      update: { $inc: { 'grades.$[elem].std': -1 } },
      arrayFilters: [{ 'elem.grade': { $gte: 80 }, 'elem.std': { $gt: 5 } }],
      expected: { _id: 4, grades: [{ grade: 80, mean: 75, std: 7 }, { grade: 85, mean: 90, std: 5 }, { grade: 85, mean: 85, std: 7 }] },
    },
    { name: 'a logical operator', doc: { _id: 0, a: [0, 1, 3] }, update: { $set: { 'a.$[i]': 2 } }, arrayFilters: [{ $or: [{ i: 0 }, { i: 3 }] }], expected: { _id: 0, a: [2, 1, 2] } },
    { name: 'an element that is an array matches through its elements', doc: { _id: 0, a: [[0, 1], [2]] }, update: { $push: { 'a.$[i]': 9 } }, arrayFilters: [{ i: 1 }], expected: { _id: 0, a: [[0, 1, 9], [2]] } },
    { name: 'no element matching changes nothing', doc: { _id: 0, a: [1, 2] }, update: { $set: { 'a.$[i]': 0 } }, arrayFilters: [{ i: 7 }], expected: { _id: 0, a: [1, 2] } },
    { name: 'inside every element of an outer array', doc: { _id: 0, a: [[0, 1], [0, 1]] }, update: { $set: { 'a.$[].$[j]': 2 } }, arrayFilters: [{ j: 0 }], expected: { _id: 0, a: [[2, 1], [2, 1]] } },
    {
      name: 'two identifiers in one path',
      doc: { _id: 0, a: [{ b: 0, c: [{ d: 0 }, { d: 1 }] }, { b: 1, c: [{ d: 0 }, { d: 1 }] }] },
      update: { $set: { 'a.$[i].c.$[j].d': 2 } },
      arrayFilters: [{ 'i.b': 0 }, { 'j.d': 0 }],
      expected: { _id: 0, a: [{ b: 0, c: [{ d: 2 }, { d: 1 }] }, { b: 1, c: [{ d: 0 }, { d: 1 }] }] },
    },
    {
      name: 'two filters on one array with disjoint matches',
      doc: { _id: 0, a: [{ x: 0, b: [{ y: 0, c: 0 }] }, { x: 1, b: [{ y: 0, c: 0 }] }] },
      update: { $set: { 'a.$[i].b.$[k].c': 1, 'a.$[j].b.$[k].c': 2 } },
      arrayFilters: [{ 'i.x': 0 }, { 'j.x': 1 }, { 'k.y': 0 }],
      expected: { _id: 0, a: [{ x: 0, b: [{ y: 0, c: 1 }] }, { x: 1, b: [{ y: 0, c: 2 }] }] },
    },
    {
      name: 'two filters matching one element, different fields',
      doc: { _id: 0, a: [{ x: 0, b: [{ y: 0, c: 0, d: 0 }] }] },
      update: { $set: { 'a.$[i].b.$[k].c': 1, 'a.$[j].b.$[k].d': 1 } },
      arrayFilters: [{ 'i.x': 0 }, { 'j.x': 0 }, { 'k.y': 0 }],
      expected: { _id: 0, a: [{ x: 0, b: [{ y: 0, c: 1, d: 1 }] }] },
    },
    { name: '$currentDate on the matches', doc: { _id: 0, a: [0, 1] }, update: { $currentDate: { 'a.$[i]': true } }, arrayFilters: [{ i: 0 }], expected: { _id: 0, a: [NOW, 1] } },
    { name: 'an identifier named like a prototype key is data', doc: { _id: 0, a: [1, 2] }, update: { $set: { 'a.$[constructor]': 0 } }, arrayFilters: [{ constructor: 2 }], expected: { _id: 0, a: [1, 0] } },
  ]);

  const errors: Array<[string, Doc, unknown[] | undefined, RegExp, string?]> = [
    ['a missing filter', { $set: { 'a.$[i]': 0 } }, undefined, /No array filter found for identifier 'i' in path 'a.\$\[i\]'/],
    ['an unused filter', { $set: { 'a.$[i]': 5 } }, [{ i: 0 }, { j: 0 }], /The array filter for identifier 'j' was not used in the update/],
    ['an unused filter with no positional path', { $rename: { a: 'b' } }, [{ i: 0 }], /The array filter for identifier 'i' was not used/],
    ['two identifiers in one filter', { $set: { 'a.$[i]': 5 } }, [{ i: 0, j: 0 }], /Expected a single top-level field name, found 'i' and 'j'/],
    ['one identifier filtered twice', { $set: { 'a.$[i]': 5, 'a.$[j]': 6 } }, [{ i: 0 }, { j: 0 }, { i: 1 }], /Found multiple array filters with the same top-level field name i/],
    ['a filter without a field', { $set: { 'a.$[i]': 5 } }, [{}], /Cannot use an expression without a top-level field name in arrayFilters/],
    ['an identifier that is not lower-case alphanumeric', { $set: { 'a.$[I]': 1 } }, [{ I: 0 }], /must be an alphanumeric string beginning with a lowercase letter, found 'I'/],
    ['an unknown operator in a filter', { $set: { 'a.$[i]': 1 } }, [{ i: { $foo: 1 } }], /unknown operator: \$foo/],
    ['$where in a filter', { $set: { 'a.$[i]': 1 } }, [{ $where: 'true' }], /\$where/],
    ['$expr in a filter', { $set: { 'a.$[i]': 1 } }, [{ i: 1, $expr: { $eq: [1, 1] } }], /\$expr is not allowed in the context of an array filter/],
    ['a filter that is not an object', { $set: { 'a.$[i]': 1 } }, ['bad'], /arrayFilters must be an array of filter documents/, 'VALIDATION_FAILED'],
    ['filters not in an array', { $set: { 'a.$[i]': 1 } }, { i: 0 } as unknown as unknown[], /arrayFilters must be an array of filter documents/, 'VALIDATION_FAILED'],
    ['an array update beside a $ of the same array', { $set: { 'a.$[i]': 0, 'a.$': 0 } }, [{ i: 0 }], /Updating the path 'a.\$' would create a conflict at 'a'/],
    ['an array update beside an index of the same array', { $set: { 'a.$[i]': 0, 'a.0': 0 } }, [{ i: 0 }], /Updating the path 'a.0' would create a conflict at 'a'/],
    ['an array update beside a field of the same array', { $set: { 'a.$[i]': 0, 'a.b': 0 } }, [{ i: 0 }], /Updating the path 'a.b' would create a conflict at 'a'/],
    ['a path inside an array update', { $set: { 'a.$[]': 0, 'a.$[].b': 0 } }, undefined, /Updating the path 'a.\$\[\].b' would create a conflict at 'a.\$\[\]'/],
    ['the source of $rename', { $rename: { 'a.$[i]': 'b' } }, [{ i: 0 }], /The source field for \$rename may not be dynamic: a.\$\[i\]/],
  ];
  for (const [name, update, arrayFilters, message, code] of errors) {
    it(`refuses ${name}`, () => refuses({ _id: 0, a: [0, 1] }, {}, update, arrayFilters, message, code ?? 'QUERY_ERROR'));
  }

  it('refuses two filters matching one element for the same field', () => {
    refuses(
      { _id: 0, a: [{ x: 0, b: [{ y: 0, c: 0 }] }, { x: 1, b: [{ y: 0, c: 0 }] }] },
      {},
      { $set: { 'a.$[i].b.$[k].c': 1, 'a.$[j].b.$[k].c': 2 } },
      [{ 'i.x': 0 }, { 'j.x': 0 }, { 'k.y': 0 }],
      /Update created a conflict at 'a.0.b.0.c'/,
    );
  });
  it('refuses $[] and $[<identifier>] on the same element', () => refuses({ _id: 0, a: [0, 1] }, {}, { $set: { 'a.$[]': 0 }, $inc: { 'a.$[i]': 1 } }, [{ i: 1 }], /Update created a conflict at 'a.1'/));
  it('accepts $[] and $[<identifier>] when the filter matches nothing', () => {
    expect(apply({ _id: 0, a: [0, 1] }, {}, { $set: { 'a.$[]': 7 }, $inc: { 'a.$[i]': 1 } }, [{ i: 5 }]).doc).toStrictEqual({ _id: 0, a: [7, 7] });
  });
});

describe('positional paths in an upsert', () => {
  const upserted = (filter: Doc, update: Doc, arrayFilters?: unknown[]): Doc => {
    const f = compileFilter(filter);
    return buildUpsertDocument(f, compileUpdate(update, { filter: f.ast, arrayFilters }), { now: NOW });
  };
  it('applies $[] to an array the filter gives', () => expect(upserted({ _id: 0, a: [0] }, { $setOnInsert: { 'a.$[]': 1 } })).toStrictEqual({ _id: 0, a: [1] }));
  it('applies $[<identifier>] to an array the filter gives', () => expect(upserted({ _id: 0, a: [0, 2] }, { $setOnInsert: { 'a.$[i]': 1 } }, [{ i: 0 }])).toStrictEqual({ _id: 0, a: [1, 2] }));
  it('refuses $[] where the filter gives no array', () => expect(() => upserted({ _id: 0 }, { $set: { 'a.$[]': 1 } })).toThrow(/The path 'a' must exist/));
  it('refuses $, which an insert has no match for', () => expect(() => upserted({ a: 1 }, { $set: { 'a.$': 1 } })).toThrow(/The positional operator did not find the match/));
  it('ignores a positional $setOnInsert when the document exists', () => {
    expect(apply({ _id: 0, n: 1 }, {}, { $setOnInsert: { 'a.$[]': 1 }, $inc: { n: 1 } }).doc).toStrictEqual({ _id: 0, n: 2 });
  });
});
