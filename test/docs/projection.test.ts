import { describe, expect, it } from 'vitest';
import { compileProjection, type Doc } from '../../engine/docs/index.js';
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
    ['$slice', { a: { $slice: 2 } }, /unsupported: the \$slice projection operator/],
    ['$elemMatch', { a: { $elemMatch: { b: 1 } } }, /unsupported: the \$elemMatch projection operator/],
    ['$meta', { score: { $meta: 'textScore' } }, /unsupported: the \$meta projection operator/],
    ['the positional operator', { 'a.$': 1 }, /unsupported: the positional projection operator/],
    ['an expression', { a: { $add: [1, 2] } }, /unsupported: expressions in projections/],
    ['a literal', { a: 'x' }, /only 0, 1, true and false are supported/],
    ['an empty sub-projection', { a: {} }, /empty sub-projection/],
    ['a non-object', ['a'], /projection must be an object/],
  ];
  for (const [name, spec, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => compileProjection(spec)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});
