// The $sample and $bucketAuto stages over HTTP, with the manual's examples ($bucketAuto's artwork),
// mingo where it agrees (its granularity algorithm is its own, docs/mql.md), and $sample's bound
// on what it holds.
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { compilePipeline, IN_MEMORY_ONLY, type Doc } from '../../../../engine/docs/index.js';
import { aggregateHarness, expectQueryError } from '../../../helpers/aggregate-cases.js';

const artwork = [
  { _id: 1, title: 'The Pillars of Society', artist: 'Grosz', year: 1926, price: 199.99, dimensions: { height: 39, width: 21, units: 'in' } },
  { _id: 2, title: 'Melancholy III', artist: 'Munch', year: 1902, price: 280.0, dimensions: { height: 49, width: 32, units: 'in' } },
  { _id: 3, title: 'Dancer', artist: 'Miro', year: 1925, price: 76.04, dimensions: { height: 25, width: 20, units: 'in' } },
  { _id: 4, title: 'The Great Wave off Kanagawa', artist: 'Hokusai', price: 167.3, dimensions: { height: 24, width: 36, units: 'in' } },
  { _id: 5, title: 'The Persistence of Memory', artist: 'Dali', year: 1931, price: 483.0, dimensions: { height: 20, width: 24, units: 'in' } },
  { _id: 6, title: 'Composition VII', artist: 'Kandinsky', year: 1913, price: 385.0, dimensions: { height: 30, width: 46, units: 'in' } },
  { _id: 7, title: 'The Scream', artist: 'Munch', price: 159.0, dimensions: { height: 24, width: 18, units: 'in' } },
  { _id: 8, title: "Blue Flower", artist: "O'Keefe", year: 1918, price: 118.42, dimensions: { height: 24, width: 20, units: 'in' } },
];
const numbers = Array.from({ length: 20 }, (_, i) => ({ _id: i + 1, n: i + 1 }));

const h = aggregateHarness({
  artwork,
  numbers,
  zeros: [0, 0, 0, 1, 2, 3].map((n, i) => ({ _id: i, n })),
  mixed: [{ _id: 1, v: 'b' }, { _id: 2, v: 3 }, { _id: 3 }, { _id: 4, v: 'a' }, { _id: 5, v: null }, { _id: 6, v: 1 }],
});

const bucketAuto = async (collection: string, spec: Doc): Promise<Doc[]> => {
  const res = await h.aggregate([{ $bucketAuto: spec }], collection);
  expect(res.status, res.text).toBe(200);
  return res.body.documents;
};

describe('$bucketAuto', () => {
  it('cuts prices into four buckets of two (the manual), as mingo', async () => {
    const expected = [
      { _id: { min: 76.04, max: 159 }, count: 2 },
      { _id: { min: 159, max: 199.99 }, count: 2 },
      { _id: { min: 199.99, max: 385 }, count: 2 },
      { _id: { min: 385, max: 483 }, count: 2 },
    ];
    expect(await bucketAuto('artwork', { groupBy: '$price', buckets: 4 })).toEqual(expected);
    expect(aggregate(structuredClone(artwork), [{ $bucketAuto: { groupBy: '$price', buckets: 4 } }])).toEqual(expected);
  });
  it('keeps equal values in one bucket, missing sorts as null (the manual: $facet by year and area)', async () => {
    const res = await h.aggregate([{
      $facet: {
        year: [{ $bucketAuto: { groupBy: '$year', buckets: 3, output: { count: { $sum: 1 }, years: { $push: '$year' } } } }],
        area: [{ $bucketAuto: { groupBy: { $multiply: ['$dimensions.height', '$dimensions.width'] }, buckets: 4, output: { count: { $sum: 1 }, titles: { $push: '$title' } } } }],
      },
    }], 'artwork');
    expect(res.body.documents).toEqual([{
      year: [
        { _id: { min: null, max: 1913 }, count: 3, years: [1902] },
        { _id: { min: 1913, max: 1926 }, count: 3, years: [1913, 1918, 1925] },
        { _id: { min: 1926, max: 1931 }, count: 2, years: [1926, 1931] },
      ],
      area: [
        { _id: { min: 432, max: 500 }, count: 3, titles: ['The Scream', 'The Persistence of Memory', 'Blue Flower'] },
        { _id: { min: 500, max: 864 }, count: 2, titles: ['Dancer', 'The Pillars of Society'] },
        { _id: { min: 864, max: 1568 }, count: 2, titles: ['The Great Wave off Kanagawa', 'Composition VII'] },
        { _id: { min: 1568, max: 1568 }, count: 1, titles: ['Melancholy III'] },
      ],
    }]);
  });
  it('sorts values of different types in BSON order', async () => {
    expect(await bucketAuto('mixed', { groupBy: '$v', buckets: 3, output: { ids: { $push: '$_id' } } })).toEqual([
      { _id: { min: null, max: 1 }, ids: [3, 5] },
      { _id: { min: 1, max: 'a' }, ids: [6, 2] },
      { _id: { min: 'a', max: 'b' }, ids: [4, 1] },
    ]);
  });
  it('makes fewer buckets when there are fewer documents', async () => {
    expect(await bucketAuto('zeros', { groupBy: '$n', buckets: 10 })).toEqual([
      { _id: { min: 0, max: 1 }, count: 3 },
      { _id: { min: 1, max: 2 }, count: 1 },
      { _id: { min: 2, max: 3 }, count: 1 },
      { _id: { min: 3, max: 3 }, count: 1 },
    ]);
  });
  it('rounds boundaries to the Renard series R5, absorbing the values below a rounded boundary', async () => {
    expect(await bucketAuto('numbers', { groupBy: '$n', buckets: 5, granularity: 'R5' })).toEqual([
      { _id: { min: 0.63, max: 63 * 0.1 }, count: 6 },
      { _id: { min: 63 * 0.1, max: 16 }, count: 9 },
      { _id: { min: 16, max: 25 }, count: 5 },
    ]);
  });
  it('rounds to powers of two, and to 1-2-5 and E6', async () => {
    expect(await bucketAuto('numbers', { groupBy: '$n', buckets: 5, granularity: 'POWERSOF2' })).toEqual([
      { _id: { min: 0.5, max: 8 }, count: 7 },
      { _id: { min: 8, max: 16 }, count: 8 },
      { _id: { min: 16, max: 32 }, count: 5 },
    ]);
    expect(await bucketAuto('numbers', { groupBy: '$n', buckets: 2, granularity: '1-2-5' })).toEqual([
      { _id: { min: 0.5, max: 20 }, count: 19 },
      { _id: { min: 20, max: 50 }, count: 1 },
    ]);
    // MongoDB scales the series by repeated division by 10, so its boundaries are these doubles.
    const scale = (s: number, divisions: number): number => s * Array.from({ length: divisions }).reduce<number>((m) => m / 10, 1);
    expect(await bucketAuto('numbers', { groupBy: { $multiply: ['$n', 0.1] }, buckets: 4, granularity: 'E6' })).toEqual([
      { _id: { min: scale(68, 3), max: scale(68, 2) }, count: 6 },
      { _id: { min: scale(68, 2), max: scale(15, 1) }, count: 8 },
      { _id: { min: scale(15, 1), max: scale(22, 1) }, count: 6 },
    ]);
  });
  it('takes the next bucket\'s rounded-down min when the first bucket ends at 0', async () => {
    expect(await bucketAuto('zeros', { groupBy: '$n', buckets: 2, granularity: 'R5' })).toEqual([
      { _id: { min: 0, max: 0.63 }, count: 3 },
      { _id: { min: 0.63, max: 4 }, count: 3 },
    ]);
  });
  it.each([
    ['no buckets', { groupBy: '$n' }, /requires 'groupBy' and 'buckets' to be specified/],
    ['0 buckets', { groupBy: '$n', buckets: 0 }, /'buckets' field must be greater than 0, but found: 0/],
    ['a fractional count', { groupBy: '$n', buckets: 2.5 }, /'buckets' field must be representable as a 32-bit integer, but found 2.5/],
    ['a count that is a string', { groupBy: '$n', buckets: '2' }, /'buckets' field must be a numeric value, but found type: string/],
    ['a groupBy that is not a path or an operator', { groupBy: 'n', buckets: 2 }, /'groupBy' field must be defined as a \$-prefixed path or an expression object/],
    ['an unknown granularity', { groupBy: '$n', buckets: 2, granularity: 'R7' }, /Unknown rounding granularity 'R7'/],
    ['an output that is not an object', { groupBy: '$n', buckets: 2, output: 1 }, /'output' field must be an object, but found type: int/],
    ['an unknown accumulator', { groupBy: '$n', buckets: 2, output: { x: { $mode: '$n' } } }, /unknown group operator '\$mode'/],
    ['an unknown option', { groupBy: '$n', buckets: 2, sortBy: 1 }, /Unrecognized option to \$bucketAuto: sortBy/],
  ])('refuses %s before reading documents', async (_name, spec, message) => {
    expectQueryError(await h.aggregate([{ $bucketAuto: spec }], 'empty'), message.source.includes('$mode') ? '$group' : '$bucketAuto', message);
  });
  it('refuses values a granularity cannot round', async () => {
    expectQueryError(await h.aggregate([{ $bucketAuto: { groupBy: '$v', buckets: 2, granularity: 'R5' } }], 'mixed'), '$bucketAuto', /with numeric boundaries only, but found a value with type: string/);
    expectQueryError(await h.aggregate([{ $bucketAuto: { groupBy: { $subtract: [0, '$n'] }, buckets: 2, granularity: 'E12' } }], 'numbers'), '$bucketAuto', /non-negative numbers only/);
  });
});

describe('$sample', () => {
  const ids = async (size: unknown, collection = 'numbers'): Promise<unknown[]> => {
    const res = await h.aggregate([{ $sample: { size } }, { $project: { _id: 1 } }], collection);
    expect(res.status, res.text).toBe(200);
    return res.body.documents.map((d: Doc) => d['_id']);
  };
  it('returns size distinct documents of the input', async () => {
    const got = await ids(5);
    expect(got).toHaveLength(5);
    expect(new Set(got).size).toBe(5);
    for (const id of got) expect(numbers.map((d) => d._id)).toContain(id);
  });
  it('returns every document, in some order, when size is larger; none for size 0', async () => {
    expect([...(await ids(100))].sort((a, b) => (a as number) - (b as number))).toEqual(numbers.map((d) => d._id));
    expect(await ids(0)).toEqual([]);
    expect(await ids(2.9)).toHaveLength(2);
  });
  it('picks each document about as often as the others', async () => {
    const counts = new Map<unknown, number>();
    const runs = 200;
    for (let i = 0; i < runs; i++) for (const id of await ids(2)) counts.set(id, (counts.get(id) ?? 0) + 1);
    // Each of the 20 documents is expected 20 times; all of them within a wide margin.
    expect(counts.size).toBe(20);
    for (const n of counts.values()) expect(n).toBeGreaterThan(3);
    for (const n of counts.values()) expect(n).toBeLessThan(50);
  });
  it.each([
    ['a negative size', { size: -1 }, /size argument to \$sample must not be negative/],
    ['a size that is a string', { size: '2' }, /size argument to \$sample must be a number/],
    ['no size', {}, /\$sample stage must specify a size/],
    ['an unknown option', { size: 1, seed: 4 }, /unrecognized option to \$sample: seed/],
    ['a specification that is not an object', 3, /the \$sample stage specification must be an object/],
  ])('refuses %s', async (_name, spec, message) => {
    expectQueryError(await h.aggregate([{ $sample: spec }], 'numbers'), '$sample', message);
  });
  it('holds only size documents, within the blocking bound', async () => {
    // 40 documents of 2 MiB (by estimate) each: more than the 64 MiB bound in all, 4 MiB for two.
    async function* big(): AsyncIterable<Doc[]> {
      for (let i = 0; i < 40; i++) yield [{ _id: i, s: 'x'.repeat(1 << 20) }];
    }
    const ctx = { lookup: async () => [], scan: big, vars: undefined, memory: IN_MEMORY_ONLY };
    const run = async (size: number) => {
      const out: Doc[] = [];
      for await (const c of compilePipeline([{ $sample: { size } }]).run(big(), ctx)) out.push(...c);
      return out;
    };
    expect(await run(2)).toHaveLength(2);
    await expect(run(1000)).rejects.toMatchObject({ code: 'QUERY_ERROR', message: expect.stringMatching(/\$sample holds more than/) });
  });
});
