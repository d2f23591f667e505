import { describe, expect, it } from 'vitest';
import { documentFromJson, validateDocument } from '../../engine/docs/index.js';
import { json } from './query/matching.js';

function nested(depth: number): Record<string, unknown> {
  let doc: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < depth; i++) doc = { n: doc };
  return doc;
}

describe('validateDocument', () => {
  it('accepts JSON values and dates, with "__proto__" as an ordinary field', () => {
    expect(() => validateDocument({ _id: 'x', a: [1, 'b', null, true, { c: new Date(0) }], e: {} })).not.toThrow();
    expect(() => validateDocument(json('{"__proto__": {"x": 1}, "constructor": 2}'))).not.toThrow();
  });

  const cases: Array<[string, unknown, RegExp, string]> = [
    ['a non-object', [1], /a document must be a JSON object/, ''],
    ['a $-prefixed field', { a: { $x: 1 } }, /field name '\$x' must not start with '\$'/, 'a.$x'],
    ['a dotted field', { 'a.b': 1 }, /field name 'a.b' must not contain '.'/, 'a.b'],
    ['a NUL in a field name', { 'a\0': 1 }, /NUL/, 'a\0'],
    ['an object _id', { _id: { a: 1 } }, /_id must be a string, a number or a boolean/, '_id'],
    ['a null _id', { _id: null }, /_id must be a string/, '_id'],
    ['a lone surrogate', { s: 'a\ud800' }, /lone UTF-16 surrogate/, 's'],
    ['a non-finite number', { n: Infinity }, /numbers must be finite/, 'n'],
    ['undefined', { u: undefined }, /values of type undefined cannot be stored/, 'u'],
    ['an invalid date', { d: new Date(Number.NaN) }, /invalid date/, 'd'],
    ['a class instance', { m: new Map() }, /only plain objects/, 'm'],
    ['a field deep in an array', { a: [{ ok: 1 }, { 'x.y': 1 }] }, /must not contain '.'/, 'a.1.x.y'],
  ];
  for (const [name, doc, message, path] of cases) {
    it(`refuses ${name}, naming the path`, () => {
      expect(() => validateDocument(doc)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringMatching(message), details: { path } }));
    });
  }

  it('bounds nesting at 100 levels, the document being level 1', () => {
    expect(() => validateDocument(nested(100))).not.toThrow();
    expect(() => validateDocument(nested(101))).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringMatching(/nesting exceeds 100 levels/) }));
    expect(() => validateDocument(nested(10), { maxDepth: 5 })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });

  it('counts arrays as levels', () => {
    let v: unknown = 1;
    for (let i = 0; i < 100; i++) v = [v];
    expect(() => validateDocument({ a: v })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
});

describe('documentFromJson', () => {
  it('converts dates and validates', () => {
    expect(documentFromJson({ _id: 1, at: { $date: 0 } })).toStrictEqual({ _id: 1, at: new Date(0) });
    expect(() => documentFromJson({ at: { $date: 'nope' } })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => documentFromJson({ $set: 1 })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
});
