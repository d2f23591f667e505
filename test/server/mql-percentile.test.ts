// $percentile and $median (MongoDB 7.0+; 'discrete' and 'continuous' 7.2+) over HTTP on a real
// server: as $group accumulators, expressions and $setWindowFields window functions, with the
// MongoDB manual's examples and outputs, MongoDB's jstests (jstests/aggregation/accumulators/
// percentiles_approx.js, percentiles_continuous.js, percentiles_syntax.js) and every message of
// accumulator_percentile.cpp and its IDL specification. 'approximate' is the discrete percentile
// here (exact; MongoDB's t-digest is exact on these small inputs: docs/mql.md).
import { beforeAll, describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const seed = (documents: unknown[]): Promise<string> => file.seed(documents, 'p');

const run = (collection: string, pipeline: unknown[]): Promise<any[]> => file.aggregate(collection, pipeline);

// The manual's testScores collection ($percentile and $median pages).
const TEST_SCORES = [
  { _id: 1, studentId: '2345', test01: 62, test02: 81, test03: 80 },
  { _id: 2, studentId: '2356', test01: 60, test02: 83, test03: 79 },
  { _id: 3, studentId: '2358', test01: 67, test02: 82, test03: 78 },
  { _id: 4, studentId: '2367', test01: 64, test02: 72, test03: 77 },
  { _id: 5, studentId: '2369', test01: 60, test02: 53, test03: 72 },
];

describe('the manual', () => {
  let scores: string;
  beforeAll(async () => {
    scores = await seed(TEST_SCORES);
  });

  it('$percentile in $group: one percentile', async () => {
    expect(await run(scores, [{ $group: { _id: null, test01_percentiles: { $percentile: { input: '$test01', p: [0.95], method: 'approximate' } } } }])).toEqual([
      { _id: null, test01_percentiles: [67] },
    ]);
  });

  it('$percentile in $group: several percentiles, in the order asked', async () => {
    const p = (input: string, ps: number[]): unknown => ({ $percentile: { input, p: ps, method: 'approximate' } });
    expect(await run(scores, [{ $group: { _id: null, test01_percentiles: p('$test01', [0.5, 0.75, 0.9, 0.95]), test02_percentiles: p('$test02', [0.5, 0.75, 0.9, 0.95]), test03_percentiles: p('$test03', [0.5, 0.75, 0.9, 0.95]), test03_percent_alt: p('$test03', [0.9, 0.5, 0.75, 0.95]) } }])).toEqual([
      { _id: null, test01_percentiles: [62, 64, 67, 67], test02_percentiles: [81, 82, 83, 83], test03_percentiles: [78, 79, 80, 80], test03_percent_alt: [80, 78, 79, 80] },
    ]);
  });

  it('$median in $group', async () => {
    expect(await run(scores, [{ $group: { _id: null, test01_median: { $median: { input: '$test01', method: 'approximate' } } } }])).toEqual([{ _id: null, test01_median: 62 }]);
  });

  it('$percentile and $median as expressions over an array of fields', async () => {
    const docs = await run(scores, [
      { $project: { _id: 0, studentId: 1, testPercentiles: { $percentile: { input: ['$test01', '$test02', '$test03'], p: [0.5, 0.95], method: 'approximate' } }, testMedians: { $median: { input: ['$test01', '$test02', '$test03'], method: 'approximate' } } } },
    ]);
    expect(docs).toEqual([
      { studentId: '2345', testPercentiles: [80, 81], testMedians: 80 },
      { studentId: '2356', testPercentiles: [79, 83], testMedians: 79 },
      { studentId: '2358', testPercentiles: [78, 82], testMedians: 78 },
      { studentId: '2367', testPercentiles: [72, 77], testMedians: 72 },
      { studentId: '2369', testPercentiles: [60, 72], testMedians: 60 },
    ]);
  });

  it('$percentile and $median as window functions over a range window', async () => {
    const docs = await run(scores, [
      {
        $setWindowFields: {
          sortBy: { test01: 1 },
          output: {
            test01_95percentile: { $percentile: { input: '$test01', p: [0.95], method: 'approximate' }, window: { range: [-3, 3] } },
            test01_median: { $median: { input: '$test01', method: 'approximate' }, window: { range: [-3, 3] } },
          },
        },
      },
      { $project: { _id: 0, studentId: 1, test01_95percentile: 1, test01_median: 1 } },
    ]);
    expect(docs).toEqual([
      { studentId: '2356', test01_95percentile: [62], test01_median: 60 },
      { studentId: '2369', test01_95percentile: [62], test01_median: 60 },
      { studentId: '2345', test01_95percentile: [64], test01_median: 60 },
      { studentId: '2367', test01_95percentile: [67], test01_median: 64 },
      { studentId: '2358', test01_95percentile: [67], test01_median: 64 },
    ]);
  });
});

describe('jstests: semantics of each method', () => {
  const single = async (docs: unknown[], spec: unknown): Promise<unknown> => {
    const c = await seed(docs.map((d, i) => ({ _id: i, ...(d as object) })));
    const out = await run(c, [{ $group: { _id: null, p: spec } }]);
    return out[0].p;
  };
  for (const method of ['approximate', 'discrete', 'continuous']) {
    it(`${method}: non-numbers are ignored, none gives null, the extremes are min and max`, async () => {
      expect(await single([{ x: 0 }, { x: 'non-numeric' }, { x: 1 }, { no_x: 0 }, { x: 2 }], { $percentile: { p: [0.5], input: '$x', method } })).toEqual([1]);
      const none = [{ x: 'non-numeric' }, { no_x: 0 }, { x: { $date: '2024-01-31T12:00:00Z' } }, { x: [42, 43] }, { x: null }, { x: true }];
      expect(await single(none, { $percentile: { p: [0.5], input: '$x', method } })).toEqual([null]);
      expect(await single(none, { $percentile: { p: [0.5, 0.9], input: '$x', method } })).toEqual([null, null]);
      expect(await single(none, { $median: { input: '$x', method } })).toBeNull();
      expect(await single([{ x: 10 }, { x: 5 }, { x: 27 }], { $percentile: { p: [0], input: '$x', method } })).toEqual([5]);
      expect(await single([{ x: 10 }, { x: 5 }, { x: 27 }], { $percentile: { p: [1], input: '$x', method } })).toEqual([27]);
    });
  }

  it('approximate and discrete: the value at rank ceil(n * p) - 1', async () => {
    for (const method of ['approximate', 'discrete']) {
      expect(await single([{ x: 0 }, { x: 1 }, { x: 2 }], { $percentile: { p: [0.5, 0.9, 0.1], input: '$x', method } })).toEqual([1, 2, 0]);
      expect(await single([{ x: 0 }, { x: 1 }, { x: 2 }], { $percentile: { p: { $concatArrays: [[0.1, 0.5], [0.9]] }, input: '$x', method } })).toEqual([0, 1, 2]);
      expect(await single([{ x: 0 }, { x: 1 }, { x: 2 }], { $percentile: { p: [0.5, 0.9, 0.1], input: { $add: [42, '$x'] }, method } })).toEqual([43, 44, 42]);
      expect(await single([{ x: 4 }, { x: 1 }, { x: 3 }, { x: 2 }], { $median: { input: '$x', method } })).toBe(2);
    }
  });

  it('continuous: interpolated at rank p * (n - 1)', async () => {
    expect(await single([{ x: 0 }, { x: 1 }, { x: 2 }], { $percentile: { p: [0.5, 0.9, 0.1], input: '$x', method: 'continuous' } })).toEqual([1, 1.8, 0.2]);
    expect(await single([{ x: 0 }, { x: 1 }, { x: 2 }], { $percentile: { p: [0.5, 0.9, 0.1], input: { $add: [42, '$x'] }, method: 'continuous' } })).toEqual([42 + 1, 42 + 1.8, 42 + 0.2]);
    expect(await single([{ x: 4 }, { x: 1 }, { x: 3 }, { x: 2 }], { $median: { input: '$x', method: 'continuous' } })).toBe(2.5);
  });

  it('continuous: a rank among infinities is that infinity, never an interpolation with one', async () => {
    // {$exp: 1000} is Infinity (JSON has no infinities); the results are compared in a $project.
    const c = await seed([{ _id: 1, sign: -1 }, { _id: 2, sign: 1 }, { _id: 3, sign: 1 }]);
    const inf = { $exp: 1000 };
    const docs = await run(c, [
      { $group: { _id: null, p: { $percentile: { input: { $multiply: ['$sign', inf] }, p: [0, 0.25, 0.5, 1], method: 'continuous' } } } },
      { $project: { _id: 0, signs: { $map: { input: '$p', in: { $cond: [{ $eq: ['$$this', inf] }, 'inf', { $cond: [{ $eq: ['$$this', { $multiply: [-1, inf] }] }, '-inf', { $toString: '$$this' }] }] } } } } },
    ]);
    expect(docs).toEqual([{ signs: ['-inf', '-inf', 'inf', 'inf'] }]);
  });

  it('several groups', async () => {
    const c = await seed([{ k: 0, x: 0 }, { k: 0, x: 1 }, { k: 1, x: 2 }, { k: 2 }, { k: 0, x: 'str' }, { k: 1, x: 0 }].map((d, i) => ({ _id: i, ...d })));
    for (const [method, expected] of [['approximate', [[1], [2], [null]]], ['continuous', [[0.9], [1.8], [null]]]] as const) {
      const docs = await run(c, [{ $group: { _id: '$k', p: { $percentile: { p: [0.9], input: '$x', method } } } }, { $sort: { _id: 1 } }]);
      expect(docs.map((d) => d.p)).toEqual(expected);
    }
  });

  it('the expression forms: a number is each of its percentiles; no numbers give null', async () => {
    const c = await seed([{ _id: 1, v: 7 }, { _id: 2, v: null }, { _id: 3 }, { _id: 4, v: 'x' }, { _id: 5, v: [] }, { _id: 6, v: ['a', [1], 4, 0] }]);
    const docs = await run(c, [{ $project: { p: { $percentile: { input: '$v', p: [0.25, 0.75], method: 'continuous' } }, m: { $median: { input: '$v', method: 'discrete' } } } }, { $sort: { _id: 1 } }]);
    expect(docs).toEqual([
      { _id: 1, p: [7, 7], m: 7 },
      { _id: 2, p: [null, null], m: null },
      { _id: 3, p: [null, null], m: null },
      { _id: 4, p: [null, null], m: null },
      { _id: 5, p: [null, null], m: null },
      { _id: 6, p: [1, 3], m: 0 },
    ]);
  });

  it('window functions: empty windows give null, sliding documents windows enter and leave', async () => {
    const c = await seed([1, 5, 2, 8, 3].map((x, i) => ({ _id: i, x })));
    const docs = await run(c, [
      {
        $setWindowFields: {
          sortBy: { _id: 1 },
          output: {
            med: { $median: { input: '$x', method: 'continuous' }, window: { documents: [-1, 1] } },
            ahead: { $percentile: { input: '$x', p: [0, 1], method: 'discrete' }, window: { documents: [1, 2] } },
            all: { $median: { input: '$x', method: 'discrete' } },
          },
        },
      },
    ]);
    expect(docs.map((d) => [d.med, d.ahead, d.all])).toEqual([
      [3, [2, 5], 3],
      [2, [2, 8], 3],
      [5, [3, 8], 3],
      [3, [3, 3], 3],
      [5.5, [null, null], 3],
    ]);
  });
});

describe('refusals with MongoDB messages', () => {
  let c: string;
  beforeAll(async () => {
    c = await seed([{ _id: 1, x: 42 }]);
  });
  const cases: ReadonlyArray<readonly [string, unknown, RegExp]> = [
    ['a specification that is not an object', { $percentile: 0.5 }, /^specification must be an object; found \$percentile: 0\.5$/],
    ['no p', { $percentile: { input: '$x', method: 'approximate' } }, /^BSON field '\$percentile\.p' is missing but a required field$/],
    ['no input', { $percentile: { p: [0.5], method: 'approximate' } }, /^BSON field '\$percentile\.input' is missing but a required field$/],
    ['no method', { $percentile: { p: [0.5], input: '$x' } }, /^BSON field '\$percentile\.method' is missing but a required field$/],
    ['an unknown field', { $percentile: { p: [0.5], input: '$x', method: 'approximate', extras: 42 } }, /^BSON field '\$percentile\.extras' is an unknown field\.$/],
    ['a p that is not an array', { $percentile: { p: 0.5, input: '$x', method: 'approximate' } }, /^The \$percentile 'p' field must be an array of numbers from \[0\.0, 1\.0\], but found: 0\.5$/],
    ['an empty p', { $percentile: { p: [], input: '$x', method: 'approximate' } }, /^The \$percentile 'p' field must be an array of numbers from \[0\.0, 1\.0\], but found: \[\]$/],
    ['a p with a string', { $percentile: { p: [0.5, 'foo'], input: '$x', method: 'approximate' } }, /must be an array of numbers from \[0\.0, 1\.0\], but found: "foo"$/],
    ['a p past 1', { $percentile: { p: [0.5, 10], input: '$x', method: 'approximate' } }, /must be an array of numbers from \[0\.0, 1\.0\], but found: 10$/],
    ['a p below 0', { $percentile: { p: [-0.1], input: '$x', method: 'approximate' } }, /must be an array of numbers from \[0\.0, 1\.0\], but found: -0\.1$/],
    ['a p that reads a field', { $percentile: { p: ['$x'], input: '$x', method: 'approximate' } }, /^The \$percentile 'p' field must be an array of constant values, but found value: \["\$x"\]\.$/],
    ['a p expression that is not an array', { $percentile: { p: { $add: [0.1, 0.5] }, input: '$x', method: 'approximate' } }, /must be an array of numbers from \[0\.0, 1\.0\], but found: 0\.6$/],
    ['a p expression with a string', { $percentile: { p: { $concatArrays: [[0.01, 0.1], ['foo']] }, input: '$x', method: 'approximate' } }, /but found: "foo"$/],
    ['a method that is not a string', { $percentile: { p: [0.5, 0.7], input: '$x', method: 42 } }, /^BSON field '\$percentile\.method' is the wrong type 'int', expected type 'string'$/],
    ['an unknown method', { $percentile: { p: [0.5, 0.7], input: '$x', method: 'fancy' } }, /^Currently only 'approximate', 'discrete', and 'continuous' can be used as percentile 'method'\.$/],
    ['$median with p', { $median: { p: [0.5], input: '$x', method: 'approximate' } }, /^BSON field '\$median\.p' is an unknown field\.$/],
    ['$median without input', { $median: { method: 'approximate' } }, /^BSON field '\$median\.input' is missing but a required field$/],
    ['$median without method', { $median: { input: '$x' } }, /^BSON field '\$median\.method' is missing but a required field$/],
    ['$median with an unknown method', { $median: { input: '$x', method: 'fancy' } }, /^Currently only 'approximate', 'discrete', and 'continuous'/],
  ];
  for (const [name, spec, message] of cases) {
    it(`refuses ${name}, in $group, as an expression and as a window function`, async () => {
      for (const pipeline of [[{ $group: { _id: null, p: spec } }], [{ $project: { p: spec } }], [{ $setWindowFields: { output: { p: spec } } }]]) {
        const res = await mql('aggregate', { collection: c, pipeline });
        expect(res.status, `${JSON.stringify(pipeline)}: ${res.text}`).toBe(400);
        expect(res.body.error.code).toBe('QUERY_ERROR');
        expect(res.body.error.message).toMatch(message);
      }
    });
  }

  it('accepts p as a constant expression or with expressions for its elements (percentiles_syntax.js)', async () => {
    expect(await run(c, [{ $group: { _id: null, a: { $percentile: { p: { $concatArrays: [[0.01, 0.1], [0.9, 0.99]] }, input: '$x', method: 'approximate' } }, b: { $percentile: { p: [{ $add: [0.1, 0.5] }], input: '$x', method: 'approximate' } }, c: { $percentile: { p: [0.5, 0.9], input: 'x', method: 'approximate' } } } }])).toEqual([
      { _id: null, a: [42, 42, 42, 42], b: [42], c: [null, null] },
    ]);
  });
});
