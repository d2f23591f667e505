import { describe, expect, it } from 'vitest';
import { ValueReader, ValueWriter } from '../../engine/docs/spill-value-codec.js';
import { seededRandom } from '../helpers/random.js';

type Rand = () => number;

/** Exactly the same value: -0 apart from 0, NaN equal to NaN, dates by time, field order and own `__proto__` fields kept. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return Object.is(a, b);
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && Object.is(a.getTime(), b.getTime());
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (Object.getPrototypeOf(b) !== Object.prototype) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && Object.hasOwn(b, k) && same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function withProto(value: unknown): Record<string, unknown> {
  const o: Record<string, unknown> = { a: 1 };
  Object.defineProperty(o, '__proto__', { value, writable: true, enumerable: true, configurable: true });
  o['z'] = 2;
  return o;
}

// Every kind the document model's values come in, at the edges of each encoding: the small
// integers written in their tag, int32, doubles (-0, NaN, infinities, past 2^53), strings short
// and long, ASCII and not (lone surrogates kept as they are), dates (invalid too), arrays and
// documents (integer-like names, which objects order first, and `__proto__` as an own field).
const SCALARS: readonly unknown[] = [
  0, 1, 127, 128, 255, 2 ** 31 - 1, -1, -128, -(2 ** 31), 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 2 ** 53 + 2, -(2 ** 63), 1e21,
  0.5, -2.75, 0.1, 3.141592653589793, 1e300, -1e-300, 5e-324, -0, NaN, Infinity, -Infinity,
  null, true, false, undefined,
  '', 'a', 'x'.repeat(63), 'x'.repeat(64), 'y'.repeat(200), 'z'.repeat(70_000), 'café', '日本語', '😀 emoji', '\ud800 lone', 'tail \udfff', 'é'.repeat(100), 'nul\u0000inside',
  new Date(0), new Date(-62135596800000), new Date(8.64e15), new Date(1.5), new Date(NaN),
  [], {}, [[[]]], { '': 1 }, { '10': 'a', '2': 'b', x: 'c' }, withProto({ p: 1 }), withProto(null),
];

function randomValue(rand: Rand, depth: number): unknown {
  const r = rand();
  if (depth >= 3 || r < 0.6) return SCALARS[Math.floor(rand() * SCALARS.length)];
  if (r < 0.8) return Array.from({ length: Math.floor(rand() * 8) }, () => randomValue(rand, depth + 1));
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 8); i > 0; i--) o[rand() < 0.2 ? `é${i}` : `k${i}`] = randomValue(rand, depth + 1);
  return o;
}

function roundTrip(values: readonly unknown[]): unknown[] {
  const w = new ValueWriter(16);
  for (const v of values) w.value(v);
  const r = new ValueReader();
  r.reset(w.bytes());
  const out = values.map(() => r.value());
  expect(r.done).toBe(true);
  return out;
}

describe('spill value codec', () => {
  it.each(SCALARS.map((v, i) => [i, v] as const))('value %i comes back exactly as it was', (_i, v) => {
    const [back] = roundTrip([v]);
    expect(same(back, v), `${String(v)} came back as ${String(back)}`).toBe(true);
  });

  it('many values written one after another in a growing buffer read back in order, exactly', () => {
    const rand = seededRandom(7);
    const values = Array.from({ length: 1000 }, () => randomValue(rand, 0));
    const back = roundTrip(values);
    for (let i = 0; i < values.length; i++) expect(same(back[i], values[i]), `value ${i}`).toBe(true);
  });

  it('strings and small integers as the group records write them, between other bytes', () => {
    const w = new ValueWriter(8);
    const strings = ['', 'sabc', 'é', 'x'.repeat(1000), '\udfff', 'k'.repeat(64)];
    for (const s of strings) {
      w.string(s);
      w.u8(200);
      w.value(s.length);
    }
    const r = new ValueReader();
    r.reset(w.bytes());
    for (const s of strings) {
      expect(r.string()).toBe(s);
      expect(r.u8()).toBe(200);
      expect(r.value()).toBe(s.length);
    }
    expect(r.done).toBe(true);
  });

  it('decoded documents are plain objects; a `__proto__` field is an own data property with no prototype effect', () => {
    const [back] = roundTrip([withProto({ polluted: true })]) as [Record<string, unknown>];
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.keys(back)).toEqual(['a', '__proto__', 'z']);
    expect((back as { polluted?: unknown }).polluted).toBeUndefined();
    expect(same(back['__proto__'], { polluted: true })).toBe(true);
  });

  it('refuses what no document holds, and bytes cut short or not written by it', () => {
    for (const v of [Symbol('x'), () => 1, new Map(), new Uint8Array(2), 10n]) expect(() => new ValueWriter().value(v)).toThrow(/spill record cannot hold/);
    const w = new ValueWriter();
    w.value({ a: 'hello', b: [1.5, 2] });
    const bytes = w.bytes();
    for (let cut = 0; cut < bytes.length; cut++) {
      const r = new ValueReader();
      r.reset(bytes, 0, cut);
      expect(() => r.value(), `cut at ${cut}`).toThrow(/ends inside a value/);
    }
    const r = new ValueReader();
    r.reset(Buffer.from([0x7f]));
    expect(() => r.value()).toThrow(/unknown value tag 127/);
  });
});
