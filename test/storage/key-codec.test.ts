import { describe, it, expect } from 'vitest';
import { seededRandom } from '../helpers/random.js';
import {
  KEY_MAX_DEPTH,
  KEY_TAG,
  KeyCodecError,
  compareKeys,
  decodeKey,
  encodeKey,
  encodeKeyPrefix,
  keyPrefixRange,
  prefixUpperBound,
} from '../../engine/storage/key-codec.js';
import type { KeyPart } from '../../engine/storage/key-codec.js';
import { TetraError } from '../../engine/errors.js';

// ---- independent model of the logical order -------------------------------------------------

// Written from the specification, not from the codec, so that the two can disagree.
function typeRank(part: KeyPart): number {
  if (part === null) return 0;
  if (part === false) return 1;
  if (part === true) return 2;
  if (typeof part === 'number') return 3;
  if (typeof part === 'string') return 4;
  if (part instanceof Uint8Array) return 5;
  return 6;
}

function sign(n: number): number {
  return n < 0 ? -1 : n > 0 ? 1 : 0;
}

function compareNumbers(a: number, b: number): number {
  const aNaN = Number.isNaN(a);
  const bNaN = Number.isNaN(b);
  if (aNaN || bNaN) return aNaN && bNaN ? 0 : aNaN ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0; // -0 and 0 fall through to equal
}

// By code point: JS `<` compares UTF-16 units, which puts astral characters below U+E000..U+FFFF.
function compareStrings(a: string, b: string): number {
  const ca = Array.from(a, (ch) => ch.codePointAt(0) as number);
  const cb = Array.from(b, (ch) => ch.codePointAt(0) as number);
  for (let i = 0; i < Math.min(ca.length, cb.length); i++) {
    const d = (ca[i] as number) - (cb[i] as number);
    if (d !== 0) return sign(d);
  }
  return sign(ca.length - cb.length);
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = (a[i] as number) - (b[i] as number);
    if (d !== 0) return sign(d);
  }
  return sign(a.length - b.length);
}

function referenceCompare(a: readonly KeyPart[], b: readonly KeyPart[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const d = comparePart(a[i] as KeyPart, b[i] as KeyPart);
    if (d !== 0) return d;
  }
  return sign(a.length - b.length);
}

function comparePart(a: KeyPart, b: KeyPart): number {
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return sign(ra - rb);
  if (typeof a === 'number') return compareNumbers(a, b as number);
  if (typeof a === 'string') return compareStrings(a, b as string);
  if (a instanceof Uint8Array) return compareBytes(a, b as Uint8Array);
  if (Array.isArray(a)) return referenceCompare(a, b as readonly KeyPart[]);
  return 0; // null, false, true: one value each
}

function startsWith(key: readonly KeyPart[], prefix: readonly KeyPart[]): boolean {
  return prefix.length <= key.length && referenceCompare(key.slice(0, prefix.length), prefix) === 0;
}

// What decodeKey must return for a tuple: -0 as 0, byte arrays as plain Uint8Array.
function normalize(parts: readonly KeyPart[]): KeyPart[] {
  return parts.map((part): KeyPart => {
    if (typeof part === 'number') return part === 0 ? 0 : part;
    if (part instanceof Uint8Array) return new Uint8Array(part);
    if (Array.isArray(part)) return normalize(part);
    return part;
  });
}

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

// ---- seeded random tuples ----------------------------------------------------------------

const EDGE_NUMBERS: readonly number[] = [
  0, -0, 1, -1, 0.5, -0.5, 2, -2, 1e-300, -1e-300,
  NaN, Infinity, -Infinity,
  Number.MIN_VALUE, -Number.MIN_VALUE, // smallest subnormals
  2.225073858507201e-308, -2.225073858507201e-308, // largest subnormals
  2.2250738585072014e-308, -2.2250738585072014e-308, // smallest normals
  Number.MAX_VALUE, -Number.MAX_VALUE,
  2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, -(2 ** 53 - 1), -(2 ** 53), -(2 ** 53 + 2),
  Number.EPSILON, 1 + Number.EPSILON, 1 - Number.EPSILON / 2,
];

const STRING_PIECES: readonly string[] = [
  'a', 'b', 'z', '\u0000', '\u0001', '\u007f', '\u0080', 'é', '\u07ff', '\u0800', '\uD7FF', '\uFEFF',
  '\uE000', '\uFFFF', '😀', '\u{10000}', '\u{10FFFF}', 'ab', 'abc',
];

const BYTE_VALUES: readonly number[] = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff];

function randomTools(seed: number) {
  const random = seededRandom(seed);
  const int = (n: number): number => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const bits = new DataView(new ArrayBuffer(8));

  const number = (): number => {
    switch (int(4)) {
      case 0:
        return pick(EDGE_NUMBERS);
      case 1:
        return int(7) - 3;
      case 2: {
        // Any bit pattern: all exponents, subnormals, NaNs with assorted payloads.
        bits.setUint32(0, int(2 ** 32));
        bits.setUint32(4, int(2 ** 32));
        return bits.getFloat64(0);
      }
      default:
        return (random() - 0.5) * 10 ** (int(40) - 20);
    }
  };

  // Any scalar value, so every bit of every UTF-8 length class gets exercised.
  const codePoint = (): string => {
    const cp = int(0x110000 - 0x800);
    return String.fromCodePoint(cp < 0xd800 ? cp : cp + 0x800);
  };

  const piece = (): string => (int(3) === 0 ? codePoint() : pick(STRING_PIECES));

  const string = (): string => {
    let s = '';
    const pieces = int(5);
    for (let i = 0; i < pieces; i++) s += piece();
    // Past the codec's short-string fast path now and then.
    if (int(8) === 0) s = s.repeat(2 + int(20)) + piece();
    return s;
  };

  const bytes = (): Uint8Array => {
    const length = int(8) === 0 ? 20 + int(40) : int(5);
    const out = new Uint8Array(length);
    for (let i = 0; i < length; i++) out[i] = pick(BYTE_VALUES);
    return int(2) === 0 ? out : Buffer.from(out);
  };

  const part = (depth: number): KeyPart => {
    switch (int(depth < 3 ? 8 : 7)) {
      case 0:
        return null;
      case 1:
        return int(2) === 0;
      case 2:
      case 3:
        return number();
      case 4:
      case 5:
        return string();
      case 6:
        return bytes();
      default:
        return tuple(depth + 1, 3);
    }
  };

  const tuple = (depth = 0, maxLength = 5): KeyPart[] => {
    const length = int(maxLength + 1);
    const out: KeyPart[] = [];
    for (let i = 0; i < length; i++) out.push(part(depth));
    return out;
  };

  // A neighbour of `t`: shares a prefix with it, so pairs disagree late rather than at byte 0.
  const variant = (t: readonly KeyPart[]): KeyPart[] => {
    const out = t.slice();
    switch (int(5)) {
      case 0:
        return out.slice(0, int(out.length + 1));
      case 1:
        return [...out, part(0)];
      case 2: {
        if (out.length === 0) return out;
        const i = int(out.length);
        const old = out[i] as KeyPart;
        out[i] = Array.isArray(old) && old.length > 0 ? variant(old) : part(0);
        return out;
      }
      case 3: {
        if (out.length === 0) return out;
        const i = out.length - 1;
        const old = out[i];
        if (typeof old === 'string') out[i] = old + pick(STRING_PIECES);
        else if (old instanceof Uint8Array) out[i] = Uint8Array.from([...old, pick(BYTE_VALUES)]);
        return out;
      }
      default:
        return tuple();
    }
  };

  return { int, pick, piece, tuple, variant };
}

// ---- tables ------------------------------------------------------------------------------

// Each list is in strictly increasing logical order.
const ORDERED: Record<string, readonly KeyPart[][]> = {
  'cross-type': [
    [null], [false], [true], [NaN], [-Infinity], [-1], [0], [1], [Infinity],
    [''], ['\u0000'], ['a'], ['\u{10FFFF}'],
    [new Uint8Array()], [new Uint8Array([0])], [new Uint8Array([0xff, 0xff])],
    [[]], [[null]], [[[]]],
  ],
  numbers: [
    [NaN], [-Infinity], [-Number.MAX_VALUE], [-(2 ** 53 + 2)], [-(2 ** 53)], [-(2 ** 53 - 1)],
    [-2], [-1], [-0.5], [-2.2250738585072014e-308], [-2.225073858507201e-308],
    [-Number.MIN_VALUE], [0], [Number.MIN_VALUE], [2.225073858507201e-308],
    [2.2250738585072014e-308], [0.5], [1 - Number.EPSILON / 2], [1], [1 + Number.EPSILON], [2],
    [2 ** 53 - 1], [2 ** 53], [2 ** 53 + 2], [Number.MAX_VALUE], [Infinity],
  ],
  strings: [
    [''], ['\u0000'], ['\u0000\u0000'], ['\u0000\u0001'], ['\u0001'], ['a'], ['a\u0000'],
    ['a\u0000\u0000'], ['a\u0000b'], ['a\u0001'], ['ab'], ['b'],
    // Past the short-string fast path, with and without NUL.
    ['x'.repeat(40)], ['x'.repeat(40) + '\u0000'], ['x'.repeat(40) + '\u0000é'], ['x'.repeat(40) + 'é'],
    ['\u007f'], ['\u0080'], ['é'], ['\u07ff'], ['\u0800'], ['\uD7FF'], ['\uE000'], ['\uFEFF'], ['\uFFFF'],
    ['😀'], ['😀\u0000'], ['😁'], ['\u{10FFFF}'],
  ],
  'byte arrays': [
    [new Uint8Array([])], [new Uint8Array([0])], [new Uint8Array([0, 0])], [new Uint8Array([0, 1])],
    [new Uint8Array([0, 0xff])], [new Uint8Array([1])], [Buffer.from([1, 0])], [new Uint8Array([0x7f])],
    [new Uint8Array([0x80])], [new Uint8Array([0xff])], [new Uint8Array([0xff, 0])],
    [new Uint8Array([0xff, 0xff])],
  ],
  'nested tuples': [
    [[]], [[null]], [[null, null]], [[null, false]], [[false]], [[NaN]], [[0]], [[0, null]], [['']],
    [['a']], [['a', null]], [['a', []]], [['a\u0000']], [['a\u0000', null]], [['b']],
    [[new Uint8Array([0])]], [[[]]], [[[], null]], [[[null]]], [[[[]]]],
  ],
  'top-level tuples': [
    [], [null], [null, null], [null, [null]], [false], [0, 'a'], [0, 'a', null], [0, 'a\u0000'],
    [0, 'b'], [1], ['a'], ['a', null], ['a', 0], ['a', 'b'], ['a', []], ['a\u0000'],
    ['a\u0000', null], ['a\u0001'], [new Uint8Array([1]), 'x'], [new Uint8Array([1, 0])],
    [[]], [[], []], [[null]],
  ],
};

describe('key-codec', () => {
  describe('order of encodings matches the logical order', () => {
    for (const [name, keys] of Object.entries(ORDERED)) {
      it(name, () => {
        for (let i = 1; i < keys.length; i++) {
          const lo = keys[i - 1] as KeyPart[];
          const hi = keys[i] as KeyPart[];
          // The table itself must be ordered by the model, or the next check proves nothing.
          expect(referenceCompare(lo, hi), `model: ${String(lo)} < ${String(hi)}`).toBe(-1);
          expect(compareKeys(encodeKey(lo), encodeKey(hi)), `${hex(encodeKey(lo))} < ${hex(encodeKey(hi))}`).toBe(-1);
        }
      });
    }
  });

  describe('equal values have equal encodings', () => {
    const nanWithPayload = new DataView(new ArrayBuffer(8));
    nanWithPayload.setUint32(0, 0xfff00000);
    nanWithPayload.setUint32(4, 1);
    const cases: readonly [string, KeyPart[], KeyPart[]][] = [
      ['-0 and 0', [-0], [0]],
      ['-0 and 0 nested', [[-0, 'x']], [[0, 'x']]],
      ['NaN from 0/0', [NaN], [0 / 0]],
      ['NaN with a sign bit and payload', [NaN], [nanWithPayload.getFloat64(0)]],
      ['Buffer and Uint8Array', [Buffer.from([1, 0, 2])], [new Uint8Array([1, 0, 2])]],
    ];
    for (const [name, a, b] of cases) {
      it(name, () => {
        expect(hex(encodeKey(a))).toBe(hex(encodeKey(b)));
        expect(compareKeys(encodeKey(a), encodeKey(b))).toBe(0);
      });
    }
  });

  describe('byte layout', () => {
    // The encoding is the on-disk format: these pin it so a change is deliberate.
    const cases: readonly [string, KeyPart[], string][] = [
      ['empty key', [], ''],
      ['null', [null], '10'],
      ['false, true', [false, true], '2021'],
      ['NaN', [NaN], '2f'],
      ['0', [0], '308000000000000000'],
      ['-0 as 0', [-0], '308000000000000000'],
      ['1', [1], '30bff0000000000000'],
      ['-1', [-1], '30400fffffffffffff'],
      ['-Infinity', [-Infinity], '30000fffffffffffff'],
      ['Infinity', [Infinity], '30fff0000000000000'],
      ['empty string', [''], '4000'],
      ['string with NUL', ['a\u0000b'], '406100ff6200'],
      ['UTF-8', ['é😀'], '40c3a9f09f988000'],
      ['bytes with 0x00 and 0xFF', [new Uint8Array([0, 0xff, 0])], '5000ffff00ff00'],
      ['nested tuples', [[], [null, 'x']], '6000601040780000'],
    ];
    for (const [name, key, expected] of cases) {
      it(name, () => {
        expect(hex(encodeKey(key))).toBe(expected);
      });
    }

    it('strings are their UTF-8 bytes with 0x00 escaped, short and long', () => {
      // Buffer's UTF-8 encoder is the reference for the codec's own one.
      const { int, piece } = randomTools(2024);
      for (let n = 0; n < 2000; n++) {
        let s = '';
        const pieces = int(n % 2 === 0 ? 12 : 60);
        for (let i = 0; i < pieces; i++) s += piece();
        const body = [...Buffer.from(s, 'utf8')].flatMap((byte) => (byte === 0 ? [0, 0xff] : [byte]));
        expect(hex(encodeKey([s]))).toBe(hex(new Uint8Array([0x40, ...body, 0x00])));
      }
    });

    it('tags are ordered like the types and leave the terminator below every tag', () => {
      const tags = [KEY_TAG.NULL, KEY_TAG.FALSE, KEY_TAG.TRUE, KEY_TAG.NAN, KEY_TAG.NUMBER,
        KEY_TAG.STRING, KEY_TAG.BYTES, KEY_TAG.TUPLE];
      expect(tags).toEqual([...tags].sort((x, y) => x - y));
      expect(new Set(tags).size).toBe(tags.length);
      expect(Math.min(...tags)).toBeGreaterThan(KEY_TAG.END);
      expect(Math.max(...tags)).toBeLessThan(KEY_TAG.ESCAPE);
    });
  });

  describe('round trip', () => {
    const cases: readonly [string, KeyPart[]][] = [
      ['empty', []],
      ['constants', [null, false, true]],
      ['edge numbers', [...EDGE_NUMBERS]],
      ['strings', ['', '\u0000', 'a\u0000', '\u0000\u0000', '\uFEFFbom', 'é', '😀', '\u{10FFFF}', 'x'.repeat(100)]],
      ['long non-ASCII strings with NUL', ['é\u0000'.repeat(30), '😀'.repeat(20) + '\u0000']],
      ['byte arrays', [new Uint8Array(), new Uint8Array([0]), new Uint8Array([0xff, 0, 0xff]), Buffer.from([0, 0, 1])]],
      ['nested', [[], [[]], [null, [0, ['a\u0000', new Uint8Array([0])]]], [[], []]]],
    ];
    for (const [name, key] of cases) {
      it(name, () => {
        const encoded = encodeKey(key);
        const decoded = decodeKey(encoded);
        expect(decoded).toEqual(normalize(key));
        expect(hex(encodeKey(decoded))).toBe(hex(encoded));
      });
    }

    it('decodes -0 as +0', () => {
      const [zero] = decodeKey(encodeKey([-0]));
      expect(Object.is(zero, 0)).toBe(true);
    });

    it('decodes byte arrays as copies that do not alias the input', () => {
      const encoded = encodeKey([new Uint8Array([1, 2, 3])]);
      const [bytes] = decodeKey(encoded);
      expect(bytes).toBeInstanceOf(Uint8Array);
      encoded[2] = 9;
      expect(bytes).toEqual(new Uint8Array([1, 2, 3]));
    });

    it('decodes from a view at a non-zero offset', () => {
      const encoded = encodeKey(['a\u0000', 7, new Uint8Array([0, 5])]);
      const backing = new Uint8Array(encoded.length + 10);
      backing.set(encoded, 4);
      expect(decodeKey(backing.subarray(4, 4 + encoded.length))).toEqual(['a\u0000', 7, new Uint8Array([0, 5])]);
    });

    it('round-trips thousands of random tuples', () => {
      const { tuple } = randomTools(0x5eed);
      for (let n = 0; n < 3000; n++) {
        const key = tuple();
        const encoded = encodeKey(key);
        const decoded = decodeKey(encoded);
        expect(decoded).toEqual(normalize(key));
        expect(hex(encodeKey(decoded))).toBe(hex(encoded));
      }
    });
  });

  describe('property: byte order equals logical order', () => {
    it('on random pairs, many of them sharing a prefix', () => {
      const { tuple, variant } = randomTools(42);
      let equal = 0;
      const mismatches: unknown[] = [];
      for (let n = 0; n < 5000; n++) {
        const a = tuple();
        const b = n % 3 === 0 ? tuple() : variant(a);
        const expected = referenceCompare(a, b);
        if (expected === 0) equal++;
        const actual = compareKeys(encodeKey(a), encodeKey(b));
        // Collected rather than asserted one by one so a failure shows the offending pairs.
        if (actual !== expected && mismatches.length < 5) {
          mismatches.push({ a, b, ea: hex(encodeKey(a)), eb: hex(encodeKey(b)), actual, expected });
        }
      }
      expect(mismatches).toEqual([]);
      // The generator must produce ties too, or equality is never exercised.
      expect(equal).toBeGreaterThan(50);
    });

    it('sorting by bytes sorts by the model', () => {
      const { tuple, variant } = randomTools(7);
      const keys: KeyPart[][] = [];
      for (let n = 0; n < 1500; n++) {
        const t = tuple();
        keys.push(t, variant(t));
      }
      const sorted = keys
        .map((key) => ({ key, bytes: encodeKey(key) }))
        .sort((x, y) => compareKeys(x.bytes, y.bytes));
      for (let i = 1; i < sorted.length; i++) {
        const prev = sorted[i - 1]!;
        const cur = sorted[i]!;
        const model = referenceCompare(prev.key, cur.key);
        const bytes = compareKeys(prev.bytes, cur.bytes);
        expect(model).toBe(bytes); // -1 when distinct, 0 exactly when the model says equal
      }
    });
  });

  describe('prefix scans', () => {
    it('prefixUpperBound increments the last byte that is not 0xFF', () => {
      const cases: readonly [number[], string | undefined][] = [
        [[1, 2, 3], '010204'],
        [[1, 0xff], '02'],
        [[0x10, 0xfe, 0xff, 0xff], '10ff'],
        [[0xff, 0xff], undefined],
        [[], undefined],
      ];
      for (const [input, expected] of cases) {
        const bound = prefixUpperBound(new Uint8Array(input));
        expect(bound === undefined ? undefined : hex(bound)).toBe(expected);
      }
    });

    it('prefixUpperBound leaves its input unchanged', () => {
      const input = new Uint8Array([1, 2, 0xff]);
      prefixUpperBound(input);
      expect(input).toEqual(new Uint8Array([1, 2, 0xff]));
    });

    it('encodeKeyPrefix is encodeKey for top-level tuples', () => {
      const parts: KeyPart[] = ['a', 1, [null]];
      expect(hex(encodeKeyPrefix(parts))).toBe(hex(encodeKey(parts)));
    });

    const inRange = (bytes: Uint8Array, start: Uint8Array, end: Uint8Array | undefined): boolean =>
      compareKeys(bytes, start) >= 0 && (end === undefined || compareKeys(bytes, end) < 0);

    // Includes keys that start with the bytes of a prefix without starting with its tuple
    // (['a\u0000'] against ['a']), the case a plain byte-prefix scan gets wrong.
    const adversarial: readonly KeyPart[][] = [
      ['a\u0000'], ['a\u0000', 1], ['a\u0000b'], ['a'], ['a', null], ['a', 1], ['a', 'b'], ['a', []],
      ['a', new Uint8Array([0xff])], ['`'], ['b'], [], [new Uint8Array([0x61])],
      [new Uint8Array([1])], [new Uint8Array([1, 0])], [new Uint8Array([1]), 'x'],
      [[1]], [[1], 2], [[1, 2]], [[1, 'a\u0000']], [[1, 'a']],
    ];
    const prefixes: readonly KeyPart[][] = [['a'], [new Uint8Array([1])], [[1]], [[1, 'a']], []];

    // A pool of keys with their encodings, and prefixes cut from keys of the pool so that many
    // keys share them.
    const pool = (seed: number): { keys: { key: KeyPart[]; bytes: Buffer }[]; prefixes: KeyPart[][] } => {
      const { tuple, variant, int } = randomTools(seed);
      const keys: KeyPart[][] = [...adversarial];
      for (let n = 0; n < 400; n++) {
        const t = tuple();
        keys.push(t, variant(t), variant(t));
      }
      const cut: KeyPart[][] = [...prefixes];
      for (let n = 0; n < 150; n++) {
        const key = keys[int(keys.length)] as KeyPart[];
        const prefix = key.slice(0, int(key.length + 1));
        cut.push(prefix);
        // Guaranteed extensions of every prefix, of each kind of next element.
        keys.push(prefix, [...prefix, null], [...prefix, 'z', 1], [...prefix, [[]]], [...prefix, new Uint8Array([0])]);
      }
      return { keys: keys.map((key) => ({ key, bytes: encodeKey(key) })), prefixes: cut };
    };

    it('every key with the prefix lies in [encodeKeyPrefix(p), prefixUpperBound(encodeKeyPrefix(p)))', () => {
      const { keys, prefixes: cut } = pool(99);
      const outside: string[] = [];
      let checked = 0;
      for (const prefix of cut) {
        const start = encodeKeyPrefix(prefix);
        const end = prefixUpperBound(start);
        for (const { key, bytes } of keys) {
          if (!startsWith(key, prefix)) continue;
          checked++;
          if (!inRange(bytes, start, end)) outside.push(`${hex(bytes)} outside prefix ${hex(start)}`);
        }
      }
      expect(outside.slice(0, 5)).toEqual([]);
      expect(checked).toBeGreaterThan(2000);
    });

    it('keyPrefixRange holds exactly the keys with the prefix', () => {
      const { keys, prefixes: cut } = pool(1234);
      const wrong: string[] = [];
      let inside = 0;
      let outside = 0;
      for (const prefix of cut) {
        const { start, end } = keyPrefixRange(prefix);
        for (const { key, bytes } of keys) {
          const expected = startsWith(key, prefix);
          if (expected) inside++;
          else outside++;
          if (inRange(bytes, start, end) !== expected) {
            wrong.push(`${hex(bytes)} ${expected ? 'outside' : 'inside'} range of ${hex(start)}`);
          }
        }
      }
      expect(wrong.slice(0, 5)).toEqual([]);
      // Both answers must occur often, or the check is one-sided.
      expect(inside).toBeGreaterThan(2000);
      expect(outside).toBeGreaterThan(2000);
    });

    it('the byte-prefix range of a string prefix also admits longer strings (why keyPrefixRange exists)', () => {
      const start = encodeKeyPrefix(['a']);
      const key = encodeKey(['a\u0000']);
      expect(inRange(key, start, prefixUpperBound(start))).toBe(true);
      const range = keyPrefixRange(['a']);
      expect(inRange(key, range.start, range.end)).toBe(false);
    });
  });

  describe('compareKeys', () => {
    it('returns -1, 0 or 1', () => {
      expect(compareKeys(encodeKey([1]), encodeKey([1000]))).toBe(-1);
      expect(compareKeys(encodeKey(['x']), encodeKey(['x']))).toBe(0);
      expect(compareKeys(encodeKey([[]]), encodeKey([null]))).toBe(1);
      expect(compareKeys(new Uint8Array([1]), new Uint8Array([1, 0]))).toBe(-1);
    });
  });

  describe('encodeKey rejects unsupported values', () => {
    const cyclic: KeyPart[] = [];
    cyclic.push(cyclic);
    const nest = (levels: number): KeyPart[] => {
      let t: KeyPart[] = [];
      for (let i = 0; i < levels; i++) t = [t];
      return t;
    };
    const cases: readonly [string, unknown[], RegExp][] = [
      ['undefined', [1, undefined], /position \[1\] is undefined/],
      ['a hole in a sparse array', [1, , 2], /position \[1\] is undefined/],
      ['a plain object', [{}], /position \[0\] is an object/],
      ['a Date', [new Date(0)], /position \[0\] is an object \(Date\)/],
      ['a bigint', [1n], /position \[0\] is bigint/],
      ['a function', [() => 1], /position \[0\] is function/],
      ['a symbol', [Symbol('s')], /position \[0\] is symbol/],
      ['a Uint16Array', [new Uint16Array([1])], /position \[0\] is an object \(Uint16Array\)/],
      ['a nested bad value', ['a', [null, ['b', undefined]]], /position \[1\]\[1\]\[1\] is undefined/],
      ['a lone high surrogate', ['x\uD800'], /position \[0\] is a string with a lone UTF-16 surrogate/],
      ['a lone low surrogate', [['\uDC00a']], /position \[0\]\[0\] is a string with a lone/],
      ['a high surrogate at the end', ['a', '😀\uD83D'], /position \[1\] is a string with a lone/],
      ['surrogates in the wrong order', ['\uDE00\uD83D'], /position \[0\] is a string with a lone/],
      ['two low surrogates', ['\uDC00\uDC00'], /position \[0\] is a string with a lone/],
      ['a lone surrogate in a long string', ['é'.repeat(40) + '\uD800x'], /position \[0\] is a string with a lone/],
      ['a cyclic array', cyclic, /nested deeper than/],
      ['nesting past the limit', nest(KEY_MAX_DEPTH + 1), /nested deeper than/],
    ];
    for (const [name, key, message] of cases) {
      it(name, () => {
        expect(() => encodeKey(key as KeyPart[])).toThrow(
          expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringMatching(message) }),
        );
        expect(() => encodeKey(key as KeyPart[])).toThrow(KeyCodecError);
        expect(() => encodeKey(key as KeyPart[])).toThrow(TetraError);
      });
    }

    it('accepts nesting up to the limit', () => {
      const key = nest(KEY_MAX_DEPTH);
      expect(decodeKey(encodeKey(key))).toEqual(key);
    });
  });

  describe('decodeKey rejects malformed bytes, naming the offset', () => {
    const cases: readonly [string, number[], RegExp][] = [
      ['a stray terminator at top level', [0x10, 0x00], /end-of-tuple byte at offset 1/],
      ['an unknown tag', [0x10, 0x11], /unknown type tag 0x11 at offset 1/],
      ['an escape byte as a tag', [0xff], /unknown type tag 0xff at offset 0/],
      ['a truncated number', [0x10, 0x30, 0x80, 0, 0], /number at offset 1 is truncated/],
      ['a number encoding -0', [0x30, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff], /number at offset 0 encodes -0/],
      ['a number encoding NaN', [0x20, 0x30, 0xff, 0xf8, 0, 0, 0, 0, 0, 0], /number at offset 1 encodes NaN/],
      ['an unterminated string', [0x40, 0x61, 0x00, 0xff], /value at offset 0 has no terminator/],
      ['unterminated bytes', [0x10, 0x50], /value at offset 1 has no terminator/],
      ['invalid UTF-8', [0x40, 0x61, 0xff, 0x00], /string at offset 0 is not valid UTF-8/],
      ['a UTF-8 encoded surrogate', [0x10, 0x40, 0xed, 0xa0, 0x80, 0x00], /string at offset 1 is not valid UTF-8/],
      ['a long invalid UTF-8 string', [0x40, ...new Array<number>(30).fill(0x61), 0xc3, 0x00], /string at offset 0 is not valid UTF-8/],
      ['an unterminated nested tuple', [0x60, 0x60, 0x10, 0x00], /nested tuple starting at offset 0 has no terminator/],
      ['an overlong NUL (a second encoding of \\u0000)', [0x40, 0xc0, 0x80, 0x00], /string at offset 0 is not valid UTF-8/],
      ['invalid UTF-8 after an escaped NUL', [0x40, 0x00, 0xff, 0xc3, 0x00], /string at offset 0 is not valid UTF-8/],
      [
        'nesting past the limit',
        new Array<number>(KEY_MAX_DEPTH + 1).fill(0x60),
        new RegExp(`nested tuple at offset ${KEY_MAX_DEPTH} is deeper than`),
      ],
    ];
    for (const [name, bytes, message] of cases) {
      it(name, () => {
        expect(() => decodeKey(new Uint8Array(bytes))).toThrow(
          expect.objectContaining({ code: 'VALIDATION_FAILED', message: expect.stringMatching(message) }),
        );
        expect(() => decodeKey(new Uint8Array(bytes))).toThrow(KeyCodecError);
      });
    }
  });
});
