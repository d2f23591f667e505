import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { decodeDocument, encodeDocument, FieldReader } from '../../engine/docs/doc-codec.js';
import { compileFilter, filterFields, parseFilter, type Doc } from '../../engine/docs/index.js';
import { filterPaths } from '../../engine/docs/query/compile-filter.js';
import { randomInt, seededRandom } from '../helpers/random.js';

type Rand = () => number;

const pick = <T>(rand: Rand, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

// Values in every MessagePack format msgpackr writes for documents: fixint, int8-64 and uint8-64
// at their edges, float64 and float32-exact values, -0, NaN, Infinity, nil, booleans, strings of
// every length class (fixstr, str8, str16, str32) in ASCII, other UTF-8 and lone surrogates,
// Dates (timestamp extensions), arrays and maps of every size class (fix, 16, 32 bits).
const SCALARS: readonly unknown[] = [
  0, 1, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1, -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1, -(2 ** 53) + 1,
  0.5, 1.25, -2.75, 3.141592653589793, 1e300, -1e-300, -0, NaN, Infinity, -Infinity,
  null, true, false,
  '', 'a', 'hello world', 'x'.repeat(31), 'x'.repeat(32), 'y'.repeat(255), 'y'.repeat(256), 'z'.repeat(70_000),
  'café', '日本語', '😀 emoji', '\ud800 lone', 'tail \udfff', 'mixed ascii and é'.repeat(20),
  new Date(0), new Date(Date.UTC(2024, 1, 29, 12, 0, 0, 123)), new Date(-62135596800000), new Date(8.64e15),
];

function value(rand: Rand, depth: number): unknown {
  const r = rand();
  if (depth >= 3 || r < 0.6) return pick(rand, SCALARS);
  if (r < 0.8) {
    const n = pick(rand, [0, 1, 3, 15, 16, 40]);
    return Array.from({ length: n }, () => value(rand, depth + 1));
  }
  const obj: Doc = {};
  const n = pick(rand, [0, 1, 4, 15, 16, 30]);
  for (let i = 0; i < n; i++) obj[`k${i}`] = value(rand, depth + 1);
  return obj;
}

const FIELDS = ['_id', 'a', 'b', 'c', 'name', 'émoji', 'nested', 'list', 'k15', 'missing', ''];

function randomDoc(rand: Rand, i: number): Doc {
  const doc: Doc = { _id: i % 3 === 0 ? `id-${i}` : i };
  for (const field of FIELDS.slice(1)) if (field !== 'missing' && rand() < 0.7) doc[field] = value(rand, 0);
  // Sometimes a wide document, so the top-level map is a map16.
  if (rand() < 0.2) for (let k = 0; k < 20; k++) doc[`extra${k}`] = value(rand, 1);
  return doc;
}

/** The fields of `doc` named in `names`, as they are in `doc` (absent ones left out). */
function picked(doc: Doc, names: readonly string[]): Doc {
  const out: Doc = {};
  for (const name of names) if (Object.hasOwn(doc, name)) out[name] = doc[name];
  return out;
}

describe('encodeDocument', () => {
  // The stored format, spelled out: a format byte (1 plain, 2 with `__proto__` keys), then
  // msgpackr's bytes for the document. encodeDocument writes the two into one buffer; these
  // must stay the bytes every earlier version stored.
  const reference = new Packr({ useRecords: false });
  const hasProto = (v: unknown): boolean => (Array.isArray(v) ? v.some(hasProto) : typeof v === 'object' && v !== null && !(v instanceof Date) && Object.keys(v).some((k) => k === '__proto__' || hasProto((v as Doc)[k])));
  const stored = (doc: Doc): Buffer => Buffer.concat([Buffer.from([hasProto(doc) ? 2 : 1]), reference.pack(doc)]);

  it('stores the format byte and then the msgpack bytes, each document in bytes of its own', () => {
    const rand = seededRandom(0xe4c0);
    const docs: Doc[] = [];
    for (let i = 0; i < 500; i++) docs.push(randomDoc(rand, i));
    docs.push(
      JSON.parse('{"_id": "p", "__proto__": 1, "a": [{"b": {"__proto__": {"x": -0}}}]}') as Doc,
      JSON.parse('{"_id": "q", "list": [[1, [2, {"__proto__": null}]]]}') as Doc,
      { _id: 'big', s: 'é'.repeat(100_000), when: new Date(5), z: -0, nested: [[[[]]], { a: [1.5, -0] }] },
      { _id: 'small' },
    );
    // Every result kept until all are encoded: a later encode must not write over an earlier one.
    const encoded = docs.map(encodeDocument);
    for (let i = 0; i < docs.length; i++) expect(encoded[i]!.equals(stored(docs[i]!)), `document ${i}`).toBe(true);
    expect(encoded.filter((b) => b[0] === 2).length).toBeGreaterThanOrEqual(2);
  });
});

describe('FieldReader', () => {
  it('reads exactly the named top-level fields as decodeDocument does, over every value format', () => {
    const rand = seededRandom(0xf1e1d);
    let compared = 0;
    for (let i = 0; i < 600; i++) {
      const bytes = encodeDocument(randomDoc(rand, i));
      const whole = decodeDocument(bytes);
      for (let r = 0; r < 4; r++) {
        const names = FIELDS.filter(() => rand() < 0.35);
        const got = new FieldReader(names).read(bytes);
        // toStrictEqual tells -0 from 0, NaN from null and Dates by time; the key order is the stored one.
        expect(got).toStrictEqual(picked(whole, Object.keys(whole).filter((k) => names.includes(k))));
        // In place, as a scan reads it inside its page: bytes around it are not read.
        const page = Buffer.concat([Buffer.alloc(r * 7 + 1, 0xc1), bytes, Buffer.alloc(5, 0xc1)]);
        expect(new FieldReader(names).readAt(page, r * 7 + 1, r * 7 + 1 + bytes.length)).toStrictEqual(got);
        compared++;
      }
    }
    expect(compared).toBe(2400);
  });

  it('reads each edge value alone, wherever the field stands in the document', () => {
    for (const v of SCALARS) {
      const doc: Doc = { _id: 1, before: { deep: [1, 'two', { three: 3 }] }, v, after: 'x'.repeat(300) };
      const bytes = encodeDocument(doc);
      expect(new FieldReader(['v']).read(bytes)).toStrictEqual({ v: decodeDocument(bytes).v });
      expect(new FieldReader(['after', '_id']).read(bytes)).toStrictEqual({ _id: 1, after: 'x'.repeat(300) });
    }
  });

  it('reads dot paths of embedded documents only as far as they name, and arrays on the way whole', () => {
    const doc: Doc = { _id: 1, profile: { age: 40, city: 'Oslo', deep: { x: 1, y: 2 } }, list: [{ age: 1 }, { age: 2 }], s: 'str' };
    const bytes = encodeDocument(doc);
    expect(new FieldReader(['profile.age', 'profile.deep.y']).read(bytes)).toStrictEqual({ profile: { age: 40, deep: { y: 2 } } });
    expect(new FieldReader(['profile.age', 'profile']).read(bytes)).toStrictEqual({ profile: doc['profile'] });
    expect(new FieldReader(['list.age', 's.length']).read(bytes)).toStrictEqual({ list: doc['list'], s: 'str' });
    expect(new FieldReader(['profile.nope']).read(bytes)).toStrictEqual({ profile: {} });
  });

  it('gives a filter on its paths the answers the whole document gives', () => {
    const rand = seededRandom(0xd07);
    const paths = ['nested', 'nested.k0', 'nested.k1.k0', 'nested.k3', 'list.k0', 'list.0', 'a.k1', 'b', 'c.k2.k1'];
    const operand = (): unknown => pick(rand, [pick(rand, SCALARS), { $exists: rand() < 0.5 }, { $gt: pick(rand, [0, 'a', null]) }, { $type: pick(rand, ['object', 'array', 'string']) }, { $size: randomInt(rand, 0, 3) }, null]);
    let compared = 0;
    let matched = 0;
    for (let i = 0; i < 400; i++) {
      const d = randomDoc(rand, i);
      const bytes = encodeDocument(d);
      const whole = decodeDocument(bytes);
      for (let r = 0; r < 5; r++) {
        const spec: Doc = {};
        for (let n = randomInt(rand, 1, 2); n > 0; n--) spec[pick(rand, paths)] = operand();
        const filter = compileFilter(spec);
        const partial = new FieldReader(filterPaths(filter.ast)).read(bytes);
        if (partial === undefined) continue;
        const expected = filter.test(whole);
        if (expected) matched++;
        // The message is built only for a failure: these documents can be megabytes of JSON.
        if (filter.test(partial) !== expected) expect.fail(`${JSON.stringify(spec)} gives ${!expected} on the fields read, ${expected} on ${JSON.stringify(d).slice(0, 300)}`);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(1500);
    expect(matched).toBeGreaterThan(100);
  });

  it('leaves out fields the document lacks, and reads nothing for no names', () => {
    const bytes = encodeDocument({ _id: 'a', x: 1 });
    expect(new FieldReader(['y', 'z']).read(bytes)).toStrictEqual({});
    expect(new FieldReader([]).read(bytes)).toStrictEqual({});
  });

  it('declines documents stored with __proto__ keys (they decode whole, through Maps)', () => {
    const doc = JSON.parse('{"_id": 1, "a": 2, "b": {"__proto__": {"polluted": true}}}') as Doc;
    const bytes = encodeDocument(doc);
    expect(new FieldReader(['a']).read(bytes)).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('declines bytes that are not a stored map: a wrong format byte, a non-map body, a truncated value', () => {
    const bytes = encodeDocument({ _id: 1, a: 'x'.repeat(100), b: 2 });
    expect(new FieldReader(['b']).read(Buffer.concat([Buffer.from([9]), bytes.subarray(1)]))).toBeUndefined();
    expect(new FieldReader(['b']).read(Buffer.from([1, 0x92, 1, 2]))).toBeUndefined();
    expect(new FieldReader(['b']).read(bytes.subarray(0, 40))).toBeUndefined();
  });
});

describe('filterFields', () => {
  const cases: Array<[string, unknown, string[]]> = [
    ['no conditions', {}, []],
    ['a top-level field', { a: 1 }, ['a']],
    ['dot paths by their first segment, each once', { 'a.b': 1, 'a.c': { $gt: 2 }, 'd.0': 3 }, ['a', 'd']],
    ['inside $or, $and, $nor', { $or: [{ x: 1 }, { $and: [{ y: 2 }, { 'z.q': 3 }] }], $nor: [{ w: 1 }] }, ['x', 'y', 'z', 'w']],
    ['$elemMatch reads only its own field', { tags: { $elemMatch: { kind: 'a', n: { $gt: 1 } } } }, ['tags']],
    ['$not and $exists', { a: { $not: { $gt: 1 } }, b: { $exists: false } }, ['a', 'b']],
    ['_id', { _id: { $in: [1, 2] } }, ['_id']],
  ];
  it.each(cases)('%s', (_name, filter, fields) => {
    expect(filterFields(parseFilter(filter)).sort()).toEqual([...fields].sort());
  });

  it('covers every field a random filter reads (checked against the AST walk of the paths)', () => {
    const rand = seededRandom(7);
    for (let i = 0; i < 200; i++) {
      const paths = Array.from({ length: randomInt(rand, 1, 4) }, () => pick(rand, ['a', 'b.c', 'd.0.e', 'f']));
      const filter = { $or: paths.map((p) => ({ [p]: randomInt(rand, 0, 3) })) };
      expect(new Set(filterFields(parseFilter(filter)))).toEqual(new Set(paths.map((p) => p.split('.')[0])));
    }
  });
});
