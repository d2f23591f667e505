import { describe, expect, it } from 'vitest';
import { bsonTypeOf, cloneValue, compareValues, MISSING, typeBracket, TYPE_BRACKET, valuesEqual } from '../../engine/docs/index.js';
import { json } from './query/matching.js';

describe('bsonTypeOf: JSON numbers are typed by value', () => {
  const cases: Array<[unknown, string]> = [
    [0, 'int'],
    [-2147483648, 'int'],
    [2147483647, 'int'],
    [2147483648, 'long'],
    [-9007199254740991, 'long'],
    [9007199254740992, 'double'],
    [1.5, 'double'],
    [-0, 'double'],
    [Number.NaN, 'double'],
    ['x', 'string'],
    [true, 'bool'],
    [null, 'null'],
    [new Date(0), 'date'],
    [[], 'array'],
    [{}, 'object'],
    [MISSING, 'missing'],
  ];
  for (const [v, t] of cases) it(`${String(v)} is ${t}`, () => expect(bsonTypeOf(v)).toBe(t));
});

describe('compareValues: BSON order', () => {
  // Each row is in ascending order; every pair must compare accordingly.
  const ascending: unknown[] = [
    MISSING,
    null,
    Number.NaN,
    -Infinity,
    -1,
    0,
    0.5,
    1,
    '',
    'A',
    'B',
    'a',
    'ab',
    '\uffff',
    '😀', // an astral character sorts after U+FFFF in code point order
    {},
    { a: 1 },
    { b: 0 },
    { b: 0, c: 0 },
    { a: 'x' }, // the first pair's value type (string > number) decides before its name
    [],
    [0],
    [0, 0],
    [1],
    ['a'],
    false,
    true,
    new Date(-1),
    new Date(0),
  ];
  it('orders values of every bracket', () => {
    for (let i = 0; i < ascending.length; i++) {
      for (let j = 0; j < ascending.length; j++) {
        const expected = i === j || (i <= 1 && j <= 1) ? 0 : Math.sign(i - j);
        expect(compareValues(ascending[i], ascending[j]), `${i} vs ${j}`).toBe(expected);
      }
    }
  });

  it('compares the value types of a pair before the field names', () => {
    // The manual: types first, then names, then values.
    expect(compareValues({ b: 1 }, { a: 'x' })).toBe(-1);
    expect(compareValues({ a: 1 }, { b: 1 })).toBe(-1);
  });

  it('puts the types in the manual order', () => {
    expect(TYPE_BRACKET.null).toBeLessThan(TYPE_BRACKET.number);
    expect(TYPE_BRACKET.number).toBeLessThan(TYPE_BRACKET.string);
    expect(TYPE_BRACKET.string).toBeLessThan(TYPE_BRACKET.object);
    expect(TYPE_BRACKET.object).toBeLessThan(TYPE_BRACKET.array);
    expect(TYPE_BRACKET.array).toBeLessThan(TYPE_BRACKET.bool);
    expect(TYPE_BRACKET.bool).toBeLessThan(TYPE_BRACKET.date);
    expect(typeBracket(MISSING)).toBe(typeBracket(null));
  });
});

describe('valuesEqual', () => {
  const cases: Array<[unknown, unknown, boolean]> = [
    [1, 1.0, true],
    [Number.NaN, Number.NaN, true],
    [null, MISSING, false],
    [MISSING, MISSING, true],
    [new Date(5), new Date(5), true],
    [new Date(5), 5, false],
    [[1, [2]], [1, [2]], true],
    [[1, 2], [2, 1], false],
    [{ a: 1, b: 2 }, { a: 1, b: 2 }, true],
    [{ a: 1, b: 2 }, { b: 2, a: 1 }, false],
    [{ a: 1 }, { a: 1, b: undefined }, false],
    ['1', 1, false],
  ];
  for (const [a, b, expected] of cases) it(`${JSON.stringify(a)} vs ${JSON.stringify(b)}`, () => expect(valuesEqual(a, b)).toBe(expected));
});

describe('cloneValue', () => {
  it('copies deeply and keeps "__proto__" keys as data', () => {
    const original = json<Record<string, unknown>>('{"__proto__": {"x": 1}, "d": [1, {"e": 2}]}');
    original['t'] = new Date(3);
    const copy = cloneValue(original);
    expect(copy).toStrictEqual(original);
    expect(copy['d']).not.toBe(original['d']);
    expect(copy['t']).not.toBe(original['t']);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'd', 't']);
  });
});
