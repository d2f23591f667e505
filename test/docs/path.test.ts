import { describe, expect, it } from 'vitest';
import { collectValues, getPathValue, isArrayIndex, MISSING, parsePath, type Doc, type LeafArrays } from '../../engine/docs/index.js';
import { json } from './query/matching.js';

function values(doc: Doc, path: string, leaf: LeafArrays = 'traverse'): unknown[] {
  return collectValues(doc, parsePath(path), leaf);
}

describe('collectValues', () => {
  const cases: Array<[string, Doc, string, LeafArrays, unknown[]]> = [
    ['a field', { a: 1 }, 'a', 'traverse', [1]],
    ['a missing field', {}, 'a', 'traverse', [MISSING]],
    ['through a scalar', { a: 1 }, 'a.b', 'traverse', [MISSING]],
    ['through null', { a: null }, 'a.b', 'traverse', [MISSING]],
    ['a leaf array: elements then the array', { a: [1, 2] }, 'a', 'traverse', [1, 2, [1, 2]]],
    ['a leaf array whole', { a: [1, 2] }, 'a', 'no-traversal', [[1, 2]]],
    ['a leaf array: elements only', { a: [1, 2] }, 'a', 'traverse-omit-array', [1, 2]],
    ['documents in an array', { a: [{ b: 1 }, { c: 1 }, 3] }, 'a.b', 'traverse', [1, MISSING]],
    ['an empty array yields nothing below it', { a: [] }, 'a.b', 'traverse', []],
    ['nested arrays are not entered', { a: [[{ b: 1 }]] }, 'a.b', 'traverse', []],
    ['an index', { a: [5, 6] }, 'a.1', 'traverse', [6]],
    ['an index past the end', { a: [5] }, 'a.3', 'traverse', []],
    ['an index element is not expanded', { a: [[1, 2]] }, 'a.0', 'traverse', [[1, 2]]],
    ['an index over documents also reads their field "0"', { a: [{ b: 1 }] }, 'a.0.b', 'traverse', [MISSING, 1]],
    ['an index into a nested array', { a: [[{ b: 1 }, { b: 2 }]] }, 'a.0.b', 'traverse', [1, 2]],
    ['a non-canonical index is a field name only', { a: [5, 6] }, 'a.01', 'traverse', []],
    ['leaf arrays through documents', { a: [{ b: [1] }, { b: 2 }] }, 'a.b', 'traverse', [1, [1], 2]],
  ];
  for (const [name, doc, path, leaf, expected] of cases) it(name, () => expect(values(doc, path, leaf)).toStrictEqual(expected));

  it('reads own properties only', () => {
    expect(values({}, 'constructor')).toStrictEqual([MISSING]);
    expect(values({}, '__proto__')).toStrictEqual([MISSING]);
    expect(values({ a: {} }, 'a.toString')).toStrictEqual([MISSING]);
    expect(values(json('{"__proto__": {"b": 2}}'), '__proto__.b')).toStrictEqual([2]);
  });
});

describe('getPathValue', () => {
  const doc = { a: { b: [10, { c: 3 }] } };
  const cases: Array<[string, unknown]> = [
    ['a.b.0', 10],
    ['a.b.1.c', 3],
    ['a.b.c', MISSING],
    ['a.x', MISSING],
    ['a.b.5', MISSING],
    ['constructor', MISSING],
  ];
  for (const [path, expected] of cases) it(path, () => expect(getPathValue(doc, parsePath(path))).toStrictEqual(expected));
});

describe('isArrayIndex', () => {
  const cases: Array<[string, boolean]> = [
    ['0', true],
    ['12', true],
    ['01', false],
    ['-1', false],
    ['1.5', false],
    ['', false],
    ['1e3', false],
    ['9999999999999999', false],
  ];
  for (const [s, expected] of cases) it(JSON.stringify(s), () => expect(isArrayIndex(s)).toBe(expected));
});
