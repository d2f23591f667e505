import { describe, expect, it } from 'vitest';
import { fromJson, parseIsoDate, toJson } from '../../engine/docs/index.js';
import { json } from './query/matching.js';

describe('fromJson', () => {
  it('turns {$date} objects into Dates, anywhere', () => {
    const value = fromJson({ a: { $date: '2024-02-29T23:59:59.123Z' }, b: [{ $date: 0 }], c: { d: { $date: { $numberLong: '-1000' } } } });
    expect(value).toStrictEqual({ a: new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 123)), b: [new Date(0)], c: { d: new Date(-1000) } });
  });

  it('only converts objects whose single key is $date', () => {
    expect(fromJson({ a: { $date: 0, x: 1 } })).toStrictEqual({ a: { $date: 0, x: 1 } });
  });

  it('leaves Dates as they are, so converting twice is harmless', () => {
    const once = fromJson({ a: { $date: 5 } });
    expect(fromJson(once)).toStrictEqual(once);
  });

  it('keeps "__proto__" keys as own data', () => {
    const out = fromJson(json('{"__proto__": {"$date": 0}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toStrictEqual(new Date(0));
  });

  const bad: Array<[string, unknown]> = [
    ['a date-only string', '2024-01-01'],
    ['no offset', '2024-01-01T00:00:00'],
    ['February 30', '2024-02-30T00:00:00Z'],
    ['hour 24', '2024-01-01T24:00:00Z'],
    ['a fractional millisecond count', 1.5],
    ['out of the Date range', 8.64e15 + 1],
    ['a boolean', true],
    ['a bad $numberLong', { $numberLong: 'x' }],
  ];
  for (const [name, operand] of bad) {
    it(`refuses ${name}`, () => {
      expect(() => fromJson({ at: { $date: operand } })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', details: { path: 'at' } }));
    });
  }

  it('uses the code it is given (filters and updates say QUERY_ERROR)', () => {
    expect(() => fromJson({ $date: 'x' }, { code: 'QUERY_ERROR' })).toThrow(expect.objectContaining({ code: 'QUERY_ERROR' }));
  });

  it('bounds nesting before it can overflow the stack', () => {
    const deep = JSON.parse('['.repeat(10_000) + ']'.repeat(10_000)) as unknown;
    expect(() => fromJson(deep)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
});

describe('parseIsoDate', () => {
  const cases: Array<[string, number | undefined]> = [
    ['1970-01-01T00:00:00Z', 0],
    ['1970-01-01T01:00:00+01:00', 0],
    ['1970-01-01T00:00:00.5-0030', 1_800_500],
    ['0001-01-01T00:00:00Z', Date.UTC(2000, 0, 1) - 730_119 * 86_400_000],
    ['2023-02-29T00:00:00Z', undefined],
    ['2024-01-01T00:00:60Z', undefined],
  ];
  for (const [text, ms] of cases) it(text, () => expect(parseIsoDate(text)).toBe(ms));
});

describe('toJson', () => {
  it('writes Dates as {$date: ISO}, recursively', () => {
    expect(toJson({ a: new Date(0), b: [new Date(1)], c: 1 })).toStrictEqual({ a: { $date: '1970-01-01T00:00:00.000Z' }, b: [{ $date: '1970-01-01T00:00:00.001Z' }], c: 1 });
  });

  it('writes numbers JSON cannot carry as MongoDB Extended JSON ($numberDouble), anywhere in the value', () => {
    expect(toJson(Infinity)).toStrictEqual({ $numberDouble: 'Infinity' });
    expect(toJson({ a: [-Infinity, 1, { b: NaN }], c: 'x' })).toStrictEqual({ a: [{ $numberDouble: '-Infinity' }, 1, { b: { $numberDouble: 'NaN' } }], c: 'x' });
    const plain = { a: [1, 2], b: 'x' };
    expect(toJson(plain)).toBe(plain); // nothing to convert: not copied
  });

  it('round-trips through fromJson, also outside four-digit years', () => {
    for (const ms of [0, -1, Date.UTC(9999, 11, 31), Date.UTC(10000, 0, 1), -62198755200001]) {
      expect(fromJson(JSON.parse(JSON.stringify(toJson({ d: new Date(ms) }))))).toStrictEqual({ d: new Date(ms) });
    }
  });
});
