import { describe, expect, it } from 'vitest';
import { documentFromJson, fromJson, validateDocument } from '../../engine/docs/index.js';
import { seededRandom } from '../helpers/random.js';
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

describe('documentFromJson against fromJson then validateDocument', () => {
  // documentFromJson returns most documents after one walk that builds no paths; it must accept,
  // refuse (with the same message and path) and convert exactly as the two steps do.
  const twoSteps = (value: unknown): unknown => {
    const doc = fromJson(value, { code: 'VALIDATION_FAILED' });
    validateDocument(doc);
    return doc;
  };
  const outcome = (f: () => unknown): unknown => {
    try {
      return { ok: f() };
    } catch (err) {
      return { error: (err as Error).message, details: (err as { details?: unknown }).details };
    }
  };
  const names = ['a', 'b', '$x', 'x.y', 'n\0', '__proto__', 'ok', '\ud800', '$date'];
  const values = (rand: () => number, depth: number): unknown => {
    const r = rand();
    if (r < 0.1) return null;
    if (r < 0.2) return [1, -0, 2.5, Infinity, Number.NaN][Math.floor(rand() * 5)];
    if (r < 0.3) return ['s', '', 'a\ud800', 'é'][Math.floor(rand() * 4)];
    if (r < 0.35) return rand() < 0.5;
    if (r < 0.4) return rand() < 0.8 ? new Date(0) : new Date(Number.NaN);
    if (r < 0.43) return [undefined, new Map(), () => 1][Math.floor(rand() * 3)];
    if (r < 0.5) return { $date: rand() < 0.7 ? '2024-01-31T12:00:00Z' : 'nope' };
    if (depth > 3) return 1;
    if (r < 0.75) return Array.from({ length: Math.floor(rand() * 3) }, () => values(rand, depth + 1));
    return object(rand, depth + 1);
  };
  const object = (rand: () => number, depth: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const name of names) if (rand() < (name.length === 1 || name === 'ok' ? 0.5 : 0.04)) Object.defineProperty(out, name, { value: values(rand, depth), enumerable: true, writable: true, configurable: true });
    return out;
  };

  it('agrees on thousands of random documents, good and bad', () => {
    const rand = seededRandom(11);
    let accepted = 0;
    let refused = 0;
    for (let i = 0; i < 4000; i++) {
      const doc: Record<string, unknown> = rand() < 0.8 ? { _id: [1, 's', true, null, { a: 1 }][Math.floor(rand() * 5)], ...object(rand, 1) } : object(rand, 1);
      const ours = outcome(() => documentFromJson(doc));
      expect(ours).toStrictEqual(outcome(() => twoSteps(doc)));
      if ('ok' in (ours as object)) accepted++;
      else refused++;
    }
    expect(accepted).toBeGreaterThan(400);
    expect(refused).toBeGreaterThan(400);
  });

  it('returns a document that needs nothing as it is, and a converted copy otherwise', () => {
    const plain = { _id: 1, a: { b: [1, 'x'] } };
    expect(documentFromJson(plain)).toBe(plain);
    const dated = { _id: 1, at: { $date: 0 } };
    expect(documentFromJson(dated)).not.toBe(dated);
  });

  it('bounds nesting the same way', () => {
    expect(outcome(() => documentFromJson(nested(101)))).toStrictEqual(outcome(() => twoSteps(nested(101))));
    expect(documentFromJson(nested(100))).toStrictEqual(nested(100));
    expect(outcome(() => documentFromJson(nested(10), { maxDepth: 5 }))).toMatchObject({ error: expect.stringMatching(/nesting exceeds 5 levels/) });
  });
});
