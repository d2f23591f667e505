// The $minMaxScaler window function (MongoDB 8.2) over HTTP on a real server: the manual's
// example, MongoDB's jstests (min_max_scaler_output_values.js, min_max_scaler_parsing.js), its
// messages (window_function_expression.cpp, window_function_min_max_scaler_util.cpp, the IDL),
// the window whose values are all equal (MongoDB gives `min`), and random partitions, windows
// and ranges against a brute-force model written here, independent of the engine's code.
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { randomInt, seededRandom } from '../helpers/random.js';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const seed = (documents: unknown[]): Promise<string> => file.seed(documents, 'mms');

/** `output` as a $setWindowFields over `docs`, then sorted by `_id`. */
async function scaled(docs: unknown[], stage: Record<string, unknown>): Promise<any[]> {
  return file.aggregate(await seed(docs), [{ $setWindowFields: stage }, { $sort: { _id: 1 } }]);
}

describe('the manual', () => {
  it('normalizes to [0, 1] by default, or to the range given', async () => {
    const docs = [{ _id: 1, a: 1 }, { _id: 2, a: 5 }, { _id: 3, a: 13 }, { _id: 4, a: 21 }];
    const out = await scaled(docs, { sortBy: { a: 1 }, output: { scaled: { $minMaxScaler: '$a' }, scaledTo100: { $minMaxScaler: { input: '$a', min: 0, max: 100 } } } });
    expect(out).toEqual([
      { _id: 1, a: 1, scaled: 0, scaledTo100: 0 },
      { _id: 2, a: 5, scaled: 0.2, scaledTo100: 20 },
      { _id: 3, a: 13, scaled: 0.6, scaledTo100: 60 },
      { _id: 4, a: 21, scaled: 1, scaledTo100: 100 },
    ]);
    // mingo (which has $minMaxScaler) agrees here.
    const stage = { $setWindowFields: { sortBy: { a: 1 }, output: { scaled: { $minMaxScaler: { input: '$a' } } } } };
    expect(await file.aggregate(await seed(docs), [stage, { $sort: { _id: 1 } }])).toEqual(aggregate(docs, [stage, { $sort: { _id: 1 } }]));
  });
});

describe("MongoDB's jstests (min_max_scaler_output_values.js)", () => {
  const docs = [
    { _id: 1, x: -3, y: 8, partition: 'A' },
    { _id: 2, x: 10, y: 4, partition: 'B' },
    { _id: 3, x: 3, y: -2, partition: 'A' },
    { _id: 4, x: 2, y: 3, partition: 'B' },
    { _id: 5, x: -6, y: 6, partition: 'A' },
    { _id: 6, x: 0, y: -8, partition: 'B' },
    { _id: 7, x: 4, y: 10, partition: 'A' },
  ];
  // setWindowFields arguments, the value for _id 1..7
  const cases: ReadonlyArray<readonly [string, Record<string, unknown>, number[]]> = [
    ['a window of the current document only gives 0', { sortBy: { _id: 1 }, output: { v: { $minMaxScaler: { input: '$x' }, window: { documents: ['current', 'current'] } } } }, [0, 0, 0, 0, 0, 0, 0]],
    ['documents [current, unbounded]', { sortBy: { _id: 1 }, output: { v: { $minMaxScaler: { input: '$x' }, window: { documents: ['current', 'unbounded'] } } } }, [3 / 16, 1, 9 / 10, 8 / 10, 0, 0, 0]],
    ['documents [-2, 2]', { sortBy: { _id: 1 }, output: { v: { $minMaxScaler: { input: '$x' }, window: { documents: [-2, 2] } } } }, [0, 1, 9 / 16, 8 / 16, 0, 6 / 10, 1]],
    ['sorted by y', { sortBy: { y: 1 }, output: { v: { $minMaxScaler: { input: '$x' }, window: { documents: ['current', 'unbounded'] } } } }, [0, 1, 9 / 16, 8 / 16, 0, 6 / 16, 0]],
    ['sorted by y, scaled to [10000, 20000]', { sortBy: { y: 1 }, output: { v: { $minMaxScaler: { input: '$x', min: 10000, max: 20000 }, window: { documents: ['current', 'unbounded'] } } } }, [10000, 20000, 15625, 15000, 10000, 13750, 10000]],
    ['an expression as input', { sortBy: { _id: 1 }, output: { v: { $minMaxScaler: { input: { $add: [1, '$x'] } }, window: { documents: ['current', 'unbounded'] } } } }, [3 / 16, 1, 9 / 10, 8 / 10, 0, 0, 0]],
    ['a constant input gives 0 everywhere ($literal for the jstest\'s $const)', { sortBy: { y: 1 }, output: { v: { $minMaxScaler: { input: { $literal: 1 } }, window: { documents: ['current', 'unbounded'] } } } }, [0, 0, 0, 0, 0, 0, 0]],
    ['partitions', { partitionBy: '$partition', sortBy: { _id: 1 }, output: { v: { $minMaxScaler: { input: '$x' }, window: { documents: [-1, 2] } } } }, [3 / 9, 1, 9 / 10, 2 / 10, 0, 0, 1]],
    ['range [current, 2]', { sortBy: { _id: 1 }, output: { v: { $minMaxScaler: { input: '$x' }, window: { range: ['current', 2] } } } }, [0, 1, 1, 1, 0, 0, 0]],
    ['range [-5, 5] sorted by y', { sortBy: { y: 1 }, output: { v: { $minMaxScaler: { input: '$x' }, window: { range: [-5, 5] } } } }, [3 / 16, 1, 1, 8 / 16, 0, 0, 1]],
    ['range [-3, 4] in partitions', { partitionBy: '$partition', sortBy: { y: 1 }, output: { v: { $minMaxScaler: { input: '$x' }, window: { range: [-3, 4] } } } }, [3 / 10, 1, 0, 0, 0, 0, 1]],
  ];
  for (const [name, stage, expected] of cases) {
    it(name, async () => {
      const out = await scaled(docs, stage);
      expect(out.map((d) => d._id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      out.forEach((d, i) => expect(d.v, `_id ${d._id}`).toBeCloseTo(expected[i]!, 12));
    });
  }

  it('windows left unbounded (MongoDB 8.2 computes them; 8.1 refused them)', async () => {
    const out = await scaled(docs, { sortBy: { _id: 1 }, output: { v: { $minMaxScaler: { input: '$x', min: 0, max: 10 } }, w: { $minMaxScaler: '$x', window: { documents: ['unbounded', 'current'] } } } });
    // The whole partition: x from -6 to 10.
    expect(out.map((d) => d.v)).toEqual(docs.map((d) => ((d.x + 6) / 16) * 10));
    // _id 1..7 see -3; -3,10; -3..10; ...; the running minimum and maximum.
    expect(out.map((d) => d.w)).toEqual([0, 1, 6 / 13, 5 / 13, 0, 6 / 16, 10 / 16]);
  });
});

describe('a window whose values are all equal', () => {
  it("gives 'min' (MongoDB's computeResult: no range to divide by)", async () => {
    const out = await scaled([{ _id: 1, x: 7 }, { _id: 2, x: 7 }, { _id: 3, x: 9 }], { sortBy: { _id: 1 }, output: { v: { $minMaxScaler: { input: '$x', min: -5, max: 5 }, window: { documents: [-1, 0] } } } });
    expect(out.map((d) => d.v)).toEqual([-5, -5, 5]);
  });
});

describe('refusals', () => {
  const stage = (fn: unknown, extra: Record<string, unknown> = {}) => [{ $setWindowFields: { sortBy: { _id: 1 }, output: { v: fn }, ...extra } }];
  const within = '\\(the current doc\\), as \\$minMaxScaler must ensure that the current document being processed is always within the configured window\\.';
  // name, pipeline, MongoDB's message (jstests min_max_scaler_parsing.js for the cases it has)
  const cases: ReadonlyArray<readonly [string, unknown[], RegExp]> = [
    ['an unknown argument', stage({ $minMaxScaler: { input: '$x', hello: 'world' }, window: { documents: ['current', 'unbounded'] } }), /^BSON field 'root\.\$minMaxScaler\.hello' is an unknown field\.$/],
    ['an unknown field beside it', stage({ $minMaxScaler: { input: '$x' }, other: 1 }), /^BSON field 'root\.other' is an unknown field\.$/],
    ['no input', stage({ $minMaxScaler: { min: 0, max: 10 } }), /^BSON field 'root\.\$minMaxScaler\.input' is missing but a required field$/],
    ['a window that is not an object', stage({ $minMaxScaler: '$x', window: 5 }), /^BSON field 'root\.window' is the wrong type 'int', expected type 'object'$/],
    ['a min that is a string', stage({ $minMaxScaler: { input: '$x', min: 'hello', max: 10 } }), /^'min' argument to \$minMaxScaler must be a numeric type$/],
    ['a max that is a string', stage({ $minMaxScaler: { input: '$x', min: 0, max: 'world' } }), /^'max' argument to \$minMaxScaler must be a numeric type$/],
    ['a min that reads a field', stage({ $minMaxScaler: { input: '$x', min: '$x', max: 10 } }), /^'min' argument to \$minMaxScaler must be a constant$/],
    ['min without max', stage({ $minMaxScaler: { input: '$x', min: 0 } }), /^Only one of 'min' and 'max' were specified as an argument to \$minMaxScaler\. Neither or both must be specified$/],
    ['max without min', stage({ $minMaxScaler: { input: '$x', max: 10 } }), /^Only one of 'min' and 'max'/],
    ['max equal to min', stage({ $minMaxScaler: { input: '$x', min: 10, max: 10 } }), /^the 'max' must be strictly greater than 'min', as arguments to \$minMaxScaler$/],
    ['max below min', stage({ $minMaxScaler: { input: '$x', min: 11, max: 10 } }), /^the 'max' must be strictly greater than 'min'/],
    ['a document window starting after the current document', stage({ $minMaxScaler: { input: '$x' }, window: { documents: [1, 'unbounded'] } }), new RegExp(`^Lower specified bound cannot be greater than 0 ${within} Lower specified bound = 1\\.000000$`)],
    ['a document window ending before it', stage({ $minMaxScaler: { input: '$x' }, window: { documents: [-2, -1] } }), new RegExp(`^Upper specified bound cannot be less than 0 ${within} Upper specified bound = -1\\.000000$`)],
    ['a range window starting after it', [{ $setWindowFields: { sortBy: { x: 1 }, output: { v: { $minMaxScaler: { input: '$x' }, window: { range: [1.5, 'unbounded'] } } } } }], /Lower specified bound = 1\.500000$/],
    ['a range window ending before it', [{ $setWindowFields: { sortBy: { x: 1 }, output: { v: { $minMaxScaler: { input: '$x' }, window: { range: [-1.5, -0.5] } } } } }], /Upper specified bound = -0\.500000$/],
  ];
  for (const [name, pipeline, message] of cases) {
    it(`refuses ${name}, when compiled`, async () => {
      // No document at all: the refusal comes from compiling the pipeline.
      const res = await mql('aggregate', { collection: 'mms-none', pipeline });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('QUERY_ERROR');
      expect(res.body.error.message).toMatch(message);
    });
  }

  // The manual: an error for non-numeric input, null, an (empty) array, a string.
  const inputs: ReadonlyArray<readonly [string, unknown, string]> = [
    ['a string', 'five', 'string'],
    ['null', null, 'null'],
    ['an empty array', [], 'array'],
    ['a document', { n: 1 }, 'object'],
    ['a boolean', true, 'bool'],
  ];
  for (const [name, value, type] of inputs) {
    it(`refuses an input that is ${name} in any document`, async () => {
      const c = await seed([{ _id: 1, x: 1 }, { _id: 2, x: value }, { _id: 3, x: 3 }]);
      const res = await mql('aggregate', { collection: c, pipeline: stage({ $minMaxScaler: '$x', window: { documents: [0, 0] } }) });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('QUERY_ERROR');
      expect(res.body.error.message).toBe(`'input' argument to $minMaxScaler must evaluate to a numeric type, got: ${type}`);
    });
  }
  it('refuses a missing input', async () => {
    const c = await seed([{ _id: 1, x: 1 }, { _id: 2 }]);
    const res = await mql('aggregate', { collection: c, pipeline: stage({ $minMaxScaler: '$x' }) });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.message).toBe("'input' argument to $minMaxScaler must evaluate to a numeric type, got: missing");
  });
});

describe('against a brute-force model', () => {
  type Bound = number | 'unbounded' | 'current';
  interface Case { window: { documents: [Bound, Bound] } | { range: [Bound, Bound] } | undefined; min: number; max: number }

  // The value for each document of one partition sorted by t (distinct): the window's positions
  // found by scanning every document, its least and greatest x, then the manual's formula.
  function model(part: Array<{ t: number; x: number }>, c: Case): number[] {
    return part.map((d, i) => {
      const inWindow = part.filter((e, j) => {
        if (c.window === undefined) return true;
        if ('documents' in c.window) {
          const [lo, hi] = c.window.documents.map((b) => (b === 'current' ? 0 : b));
          return (lo === 'unbounded' || j >= i + (lo as number)) && (hi === 'unbounded' || j <= i + (hi as number));
        }
        const [lo, hi] = c.window.range.map((b) => (b === 'current' ? 0 : b));
        return (lo === 'unbounded' || e.t >= d.t + (lo as number)) && (hi === 'unbounded' || e.t <= d.t + (hi as number));
      });
      const xs = inWindow.map((e) => e.x);
      const lo = Math.min(...xs);
      const hi = Math.max(...xs);
      return lo === hi ? c.min : ((d.x - lo) / (hi - lo)) * (c.max - c.min) + c.min;
    });
  }

  function randomBound(rand: () => number, sign: -1 | 1, range: boolean): Bound {
    const r = rand();
    if (r < 0.2) return 'unbounded';
    if (r < 0.35) return 'current';
    return range ? sign * randomInt(rand, 0, 40) / 2 : sign * randomInt(rand, 0, 5);
  }

  it('agrees on random partitions, windows and output ranges', async () => {
    const rand = seededRandom(23);
    // Distinct t values (a permutation) so the sort has no ties; x with repeats, some fractions.
    const n = 120;
    const ts = Array.from({ length: n }, (_, i) => i * 1.5 - 40).sort(() => rand() - 0.5);
    const docs = ts.map((t, i) => ({ _id: i, p: randomInt(rand, 0, 3), t, x: rand() < 0.2 ? randomInt(rand, -3, 3) : Math.round((rand() - 0.5) * 1000) / 8 }));
    const c = await seed(docs);
    for (let round = 0; round < 24; round++) {
      const kind = round % 3;
      const window: Case['window'] = kind === 0 ? undefined : kind === 1 ? { documents: [randomBound(rand, -1, false), randomBound(rand, 1, false)] } : { range: [randomBound(rand, -1, true), randomBound(rand, 1, true)] };
      const min = randomInt(rand, -10, 10);
      const cse: Case = { window, min, max: min + randomInt(rand, 1, 100) / 4 };
      const fn = { $minMaxScaler: { input: '$x', min: cse.min, max: cse.max }, ...(window === undefined ? {} : { window }) };
      const out = await file.aggregate(c, [{ $setWindowFields: { partitionBy: '$p', sortBy: { t: 1 }, output: { v: fn } } }, { $sort: { _id: 1 } }]);
      const expected = new Map<number, number>();
      for (let p = 0; p <= 3; p++) {
        const part = docs.filter((d) => d.p === p).sort((a, b) => a.t - b.t);
        model(part, cse).forEach((v, i) => expected.set(part[i]!._id, v));
      }
      expect(out.length).toBe(n);
      for (const d of out) expect(d.v, `round ${round}, ${JSON.stringify(fn)}, _id ${d._id}`).toBeCloseTo(expected.get(d._id)!, 9);
    }
  });
});
