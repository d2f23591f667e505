import { describe, expect, it } from 'vitest';
import { compileFilter, compileProjection, type Doc } from '../../engine/docs/index.js';
import { json } from './query/matching.js';

// The manual's "Project Fields to Return from Query" example document.
const item = {
  _id: 1,
  item: 'journal',
  status: 'A',
  size: { h: 14, w: 21, uom: 'cm' },
  instock: [
    { warehouse: 'A', qty: 5 },
    { warehouse: 'C', qty: 15 },
  ],
};

function projected(doc: Doc, spec: unknown): Doc {
  return compileProjection(spec).apply(doc);
}

describe('projection (manual examples)', () => {
  const cases: Array<[string, unknown, Doc]> = [
    ['an empty projection returns everything', {}, item],
    ['inclusion returns those fields and _id', { item: 1, status: 1 }, { _id: 1, item: 'journal', status: 'A' }],
    ['_id can be left out', { item: 1, status: 1, _id: 0 }, { item: 'journal', status: 'A' }],
    ['exclusion returns everything else', { status: 0, instock: 0 }, { _id: 1, item: 'journal', size: item.size }],
    ['a field of an embedded document', { item: 1, 'size.uom': 1 }, { _id: 1, item: 'journal', size: { uom: 'cm' } }],
    ['the nested form is the same', { item: 1, size: { uom: 1 } }, { _id: 1, item: 'journal', size: { uom: 'cm' } }],
    ['excluding a field of an embedded document', { 'size.uom': 0 }, { ...item, size: { h: 14, w: 21 } }],
    ['a field of the documents in an array', { item: 1, 'instock.qty': 1 }, { _id: 1, item: 'journal', instock: [{ qty: 5 }, { qty: 15 }] }],
    ['only _id', { _id: 1 }, { _id: 1 }],
    ['all but _id', { _id: 0 }, { item: 'journal', status: 'A', size: item.size, instock: item.instock }],
    ['true and false work like 1 and 0', { item: true, _id: false }, { item: 'journal' }],
  ];
  for (const [name, spec, expected] of cases) it(name, () => expect(projected(item, spec)).toStrictEqual(expected));
});

describe('projection through arrays and scalars', () => {
  const doc = { _id: 1, a: [{ b: 1, c: 2 }, 3, [{ b: 4, c: 5 }], { c: 6 }], s: 7 };
  it('inclusion drops non-document elements and keeps the structure', () => {
    expect(projected(doc, { 'a.b': 1, _id: 0 })).toStrictEqual({ a: [{ b: 1 }, [{ b: 4 }], {}] });
  });
  it('exclusion keeps non-document elements', () => {
    expect(projected(doc, { 'a.b': 0, _id: 0 })).toStrictEqual({ a: [{ c: 2 }, 3, [{ c: 5 }], { c: 6 }], s: 7 });
  });
  it('a sub-field of a scalar is left out on inclusion', () => expect(projected(doc, { 's.x': 1 })).toStrictEqual({ _id: 1 }));
  it('and kept on exclusion', () => expect(projected(doc, { 's.x': 0 })).toStrictEqual(doc));
  it('keeps the document order of fields', () => expect(Object.keys(projected({ _id: 1, b: 1, a: 2 }, { a: 1, b: 1 }))).toEqual(['_id', 'b', 'a']));
  it('copies values', () => {
    const out = projected(doc, { a: 1 });
    expect(out['a']).not.toBe(doc.a);
  });
  it('handles "__proto__" fields as data', () => {
    const input = json('{"_id": 1, "__proto__": {"x": 1, "y": 2}, "z": 3}');
    const out = projected(input, json('{"__proto__.x": 1}'));
    expect(JSON.stringify(out)).toBe('{"_id":1,"__proto__":{"x":1}}');
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
  });
  it('describes itself', () => {
    expect(compileProjection({ a: 1, 'b.c': 1, _id: 0 })).toMatchObject({ mode: 'inclusion', paths: ['a', 'b.c'], includesId: false });
    expect(compileProjection({ a: 0 })).toMatchObject({ mode: 'exclusion', includesId: true });
    expect(compileProjection(undefined)).toMatchObject({ mode: 'all' });
  });
});

describe('invalid projections', () => {
  const errors: Array<[string, unknown, RegExp]> = [
    ['inclusion mixed with exclusion', { a: 1, b: 0 }, /Cannot do exclusion on field b in inclusion projection/],
    ['exclusion mixed with inclusion', { a: 0, b: 1 }, /Cannot do inclusion on field b in exclusion projection/],
    ['a path inside another', { a: 1, 'a.b': 1 }, /Path collision at a.b/],
    ['a path around another', { 'a.b': 1, a: 1 }, /Path collision at a/],
    ['$meta searchScore', { score: { $meta: 'searchScore' } }, /unsupported: \{\$meta: "searchScore"\}/],
    // Computed fields are a $project's (docs-model.ts compileFindProjection): compileProjection takes none.
    ['an expression', { a: { $add: [1, 2] } }, /does not take both in one find projection/],
    ['a literal', { a: 'x' }, /does not take both in one find projection/],
    ['$slice of a string', { a: { $slice: 'x' } }, /\$slice only supports numbers and \[skip, limit\] arrays/],
    ['$slice with a limit of 0', { a: { $slice: [1, 0] } }, /\$slice limit must be positive/],
    ['$slice with three numbers', { a: { $slice: [1, 2, 3] } }, /of the form \[skip, limit\]/],
    ['an operator with company', { a: { $slice: 1, $elemMatch: {} } }, /must be alone in its object/],
    ['$elemMatch on a nested field', { 'a.b': { $elemMatch: { c: 1 } } }, /Cannot use \$elemMatch projection on a nested field/],
    ['$elemMatch that is not an object', { a: { $elemMatch: 1 } }, /object required/],
    ['$elemMatch with an unknown operator', { a: { $elemMatch: { $foo: 1 } } }, /\$foo/],
    ['$elemMatch in an exclusion', { b: 0, a: { $elemMatch: { c: 1 } } }, /Cannot do inclusion on field a in exclusion projection/],
    ['a positional exclusion', { 'a.$': 0 }, /Cannot exclude a positional projection/],
    ['a positional with exclusions', { 'a.$': 1, b: 0 }, /Cannot do exclusion on field b in inclusion projection/],
    ['two positionals', { 'a.$': 1, 'b.$': 1 }, /Cannot specify more than one positional projection per query/],
    ['a positional with $slice', { 'a.$': { $slice: 1 } }, /positional projection cannot be used with the \$slice operator/],
    ['a positional without a field', { '.$': 1 }, /needs a field before it|empty field name/],
    ['$ inside a path', { 'a.$.b': 1 }, /may only end a projection path/],
    ['a positional and its own path', { a: 1, 'a.$': 1 }, /Path collision/],
    ['$slice and an inclusion of the same path', { a: 1, 'a.b': { $slice: 1 } }, /Path collision/],
    ['an empty sub-projection', { a: {} }, /empty sub-projection/],
    ['a non-object', ['a'], /projection must be an object/],
  ];
  for (const [name, spec, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => compileProjection(spec)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});

describe('$slice (manual: $slice projection)', () => {
  const post = { _id: 1, title: 'bagel', comments: [1, 2, 3, 4, 5], details: { colors: ['blue', 'red'], sizes: ['S', 'M', 'L'] }, n: 7 };
  const cases: Array<[string, unknown, Doc]> = [
    ['the first n, every other field kept', { comments: { $slice: 2 } }, { ...post, comments: [1, 2] }],
    ['the last n', { comments: { $slice: -2 } }, { ...post, comments: [4, 5] }],
    ['more than there are', { comments: { $slice: 10 } }, post],
    ['[skip, limit]', { comments: { $slice: [1, 2] } }, { ...post, comments: [2, 3] }],
    ['[negative skip, limit]', { comments: { $slice: [-4, 2] } }, { ...post, comments: [2, 3] }],
    ['a skip past the end', { comments: { $slice: [9, 2] } }, { ...post, comments: [] }],
    ['a negative skip past the start', { comments: { $slice: [-9, 2] } }, { ...post, comments: [1, 2] }],
    ['0 gives an empty array', { comments: { $slice: 0 } }, { ...post, comments: [] }],
    ['a non-array is returned as it is', { n: { $slice: 1 } }, post],
    ['with an inclusion, only the included and the slice', { title: 1, comments: { $slice: -1 } }, { _id: 1, title: 'bagel', comments: [5] }],
    ['a nested array in an inclusion drops its siblings', { n: 1, 'details.colors': { $slice: 1 } }, { _id: 1, details: { colors: ['blue'] }, n: 7 }],
    ['a nested array in an exclusion keeps them', { _id: 0, 'details.colors': { $slice: 1 } }, { title: 'bagel', comments: [1, 2, 3, 4, 5], details: { colors: ['blue'], sizes: ['S', 'M', 'L'] }, n: 7 }],
    ['with exclusions', { title: 0, comments: { $slice: 1 } }, { _id: 1, comments: [1], details: post.details, n: 7 }],
    ['a fractional count is truncated', { comments: { $slice: 1.9 } }, { ...post, comments: [1] }],
  ];
  for (const [name, spec, expected] of cases) it(name, () => expect(projected(post, spec)).toStrictEqual(expected));
  it('applies through an array of documents', () => {
    expect(projected({ _id: 1, a: [{ b: [1, 2, 3] }, { b: [4] }, 5] }, { 'a.b': { $slice: -1 } })).toStrictEqual({ _id: 1, a: [{ b: [3] }, { b: [4] }, 5] });
  });
});

describe('$elemMatch (manual: $elemMatch projection)', () => {
  const school = { _id: 1, zipcode: '63109', students: [{ name: 'john', school: 102, age: 10 }, { name: 'jess', school: 102, age: 11 }, { name: 'jeff', school: 108, age: 15 }] };
  it('returns the first matching element, with _id', () => {
    expect(projected(school, { students: { $elemMatch: { school: 102 } } })).toStrictEqual({ _id: 1, students: [{ name: 'john', school: 102, age: 10 }] });
  });
  it('takes several conditions on one element', () => {
    expect(projected(school, { students: { $elemMatch: { school: 102, age: { $gt: 10 } } } })).toStrictEqual({ _id: 1, students: [{ name: 'jess', school: 102, age: 11 }] });
  });
  it('leaves the field out when nothing matches', () => expect(projected(school, { zipcode: 1, students: { $elemMatch: { school: 999 } } })).toStrictEqual({ _id: 1, zipcode: '63109' }));
  it('leaves a non-array out', () => expect(projected({ _id: 1, a: { school: 102 } }, { a: { $elemMatch: { school: 102 } } })).toStrictEqual({ _id: 1 }));
  it('matches scalar elements with operator conditions', () => expect(projected({ _id: 1, a: [1, 5, 9] }, { a: { $elemMatch: { $gt: 4 } } })).toStrictEqual({ _id: 1, a: [5] }));
});

describe('the positional $ (manual: $ projection, and MongoDB\'s positional_projection tests)', () => {
  const run = (filter: Doc, spec: Doc, doc: Doc): Doc => {
    const f = compileFilter(filter);
    const out = compileProjection(spec, { filter: () => f.ast }).apply(doc);
    delete out['_id'];
    return out;
  };
  const x = [{ a: 1, b: 2 }, { a: 2, c: 3 }, { a: 1, d: 5 }];
  const y = [{ aa: 1, bb: 2 }, { aa: 2, cc: 3 }, { aa: 1, dd: 5 }];
  const cases: Array<[string, Doc, Doc, Doc, Doc]> = [
    ['the element a condition matched', { 'x.a': 2 }, { 'x.$': 1 }, { x, y }, { x: [{ a: 2, c: 3 }] }],
    ['the first one', { 'x.a': 1 }, { 'x.$': 1 }, { x, y }, { x: [{ a: 1, b: 2 }] }],
    ['another array', { 'y.dd': 5 }, { 'y.$': 1 }, { x, y }, { y: [{ aa: 1, dd: 5 }] }],
    ['a nested path', { 'x.y.a': 1 }, { 'x.y.$': 1 }, { x: { y: [{ a: 1, b: 1 }, { a: 1, b: 2 }] } }, { x: { y: [{ a: 1, b: 1 }] } }],
    ['a missing field', {}, { 'g.$': 1 }, { x, y }, {}],
    ['a path that is not there returns what is', { x: { $gt: 0 } }, { 'a.b.c.$': 1 }, { x: [-1, 1, 2], a: { b: { d: [1, 2, 3], f: 456 }, e: 123 } }, { a: { b: {} } }],
    ['a path without an array is returned unchanged', { x: { $gt: 0 } }, { 'a.b.c.$': 1 }, { x: [-1, 1, 2], a: { b: { c: { d: { e: 1 } } } } }, { a: { b: { c: { d: { e: 1 } } } } }],
    ['applied to the first array on the path', { 'x.y.z': 1 }, { 'a.b.c.$': 1 }, { x: { y: { z: [0, 1, 2] } }, a: [{ b: { c: [1, 2, 3] } }, { b: { c: [4, 5, 6] } }] }, { a: [{ b: { c: [4, 5, 6] } }] }],
    ['the first array deeper on the path', { 'x.y.z': 1 }, { 'a.b.c.$': 1 }, { x: { y: { z: [0, 1, 2] } }, a: { b: { c: [1, 2, 3] } } }, { a: { b: { c: [2] } } }],
    ['$elemMatch in the filter', { x: { $elemMatch: { $gt: 1, $lt: 3 } } }, { 'x.$': 1 }, { x: [1, 2, 3] }, { x: [2] }],
    ['nested $elemMatch, another array', { a: { $elemMatch: { $elemMatch: { $eq: 3 } } } }, { 'b.$': 1 }, { a: [[1, 2], [3, 4]], b: [[5, 6], [7, 8]] }, { b: [[7, 8]] }],
    ['the last $and member', { $and: [{ a: 1 }, { a: 2 }, { a: 3 }] }, { 'b.$': 1 }, { a: [1, 2, 3], b: [4, 5, 6] }, { b: [6] }],
    ['$in', { a: { $in: [2, 3] } }, { 'b.$': 1 }, { a: [1, 2, 3], b: [4, 5, 6] }, { b: [5] }],
    ['$or over one path', { $or: [{ a: 2 }, { a: 3 }] }, { 'b.$': 1 }, { a: [1, 2, 3], b: [4, 5, 6] }, { b: [5] }],
    ['beside other inclusions', { 'x.a': 2 }, { 'x.$': 1, y: 1 }, { x, y, z: 1 }, { x: [{ a: 2, c: 3 }], y }],
  ];
  for (const [name, filter, spec, doc, expected] of cases) it(name, () => expect(run(filter, spec, doc)).toStrictEqual(expected));

  const errors: Array<[string, Doc, Doc, Doc]> = [
    ['no condition', {}, { 'x.$': 1 }, { x }],
    ['a whole-array equality', { b: [4, 5, 6] }, { 'c.$': 1 }, { b: [4, 5, 6], c: [7, 8, 9] }],
    ['$or over several paths', { $or: [{ a: 1 }, { b: 5 }] }, { 'a.$': 1 }, { a: [1, 2, 3], b: [4, 5, 6] }],
    ['$nor', { $nor: [{ a: -1 }] }, { 'a.$': 1 }, { a: [1, 2, 3] }],
    ['$not', { a: { $not: { $elemMatch: { $eq: 100 } } } }, { 'a.$': 1 }, { a: [1, 2, 3] }],
    ['a position past the end of the projected array', { a: 3 }, { 'b.$': 1 }, { a: [1, 2, 3], b: [4] }],
  ];
  for (const [name, filter, spec, doc] of errors) {
    it(`refuses ${name}`, () => expect(() => run(filter, spec, doc)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(/couldn't find a matching element in the array/) })));
  }
});
