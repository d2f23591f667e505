// The N window functions of $setWindowFields ($firstN, $lastN, $minN, $maxN, $top, $bottom, $topN,
// $bottomN, and $median/$percentile over the same windows) over HTTP on a real server: every
// function over documents and range windows of random partitions, checked against a brute-force
// computation of each window written here; MongoDB's rules for ties (window_function_top_bottom_n.h
// for sliding windows, the $group accumulator for windows from the partition start) and messages
// (window_function_expression.cpp's ExpressionN).
import { beforeAll, describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';
import { randomInt, seededRandom } from '../helpers/random.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const seed = (documents: unknown[]): Promise<string> => file.seed(documents, 'w');

const run = (collection: string, pipeline: unknown[]): Promise<any[]> => file.aggregate(collection, pipeline);

interface Row {
  _id: number;
  g: number;
  t: number;
  s: number;
  v?: number | null;
}

type Bound = number | 'unbounded' | 'current';
type Window = { documents: [Bound, Bound] } | { range: [Bound, Bound] } | undefined;

/** The positions of row i's window in its partition (sorted by t), computed naively. */
function windowOf(rows: readonly Row[], i: number, w: Window): number[] {
  const all = rows.map((_r, j) => j);
  if (w === undefined) return all;
  if ('documents' in w) {
    const at = (b: Bound, unbounded: number): number => (b === 'unbounded' ? unbounded : b === 'current' ? i : i + b);
    const lo = Math.max(0, at(w.documents[0], 0));
    const hi = Math.min(rows.length - 1, at(w.documents[1], rows.length - 1));
    return all.filter((j) => j >= lo && j <= hi);
  }
  const t = rows[i]!.t;
  const [lo, hi] = w.range;
  return all.filter((j) => {
    const x = rows[j]!.t;
    return (lo === 'unbounded' || x >= t + (lo === 'current' ? 0 : lo)) && (hi === 'unbounded' || x <= t + (hi === 'current' ? 0 : hi));
  });
}

const nullish = (v: unknown): boolean => v === null || v === undefined;

/** Each function's value over a window's rows, computed naively (values: v; sort key: s, unique). */
function expected(fn: string, n: number, ws: readonly Row[]): unknown {
  const values = ws.map((r) => (r.v === undefined ? null : r.v));
  const numbers = ws.map((r) => r.v).filter((v): v is number => !nullish(v)).sort((a, b) => a - b);
  const bySort = [...ws].sort((a, b) => a.s - b.s).map((r) => r._id);
  const discrete = (p: number): number | null => (numbers.length === 0 ? null : numbers[p >= 1 ? numbers.length - 1 : Math.max(0, Math.ceil(numbers.length * p) - 1)]!);
  switch (fn) {
    case '$firstN':
      return values.slice(0, n);
    case '$lastN':
      return values.slice(Math.max(0, values.length - n));
    case '$minN':
      return numbers.slice(0, n);
    case '$maxN':
      return [...numbers].reverse().slice(0, n);
    case '$topN':
      return bySort.slice(0, n);
    case '$bottomN':
      return bySort.slice(Math.max(0, bySort.length - n));
    case '$top':
      return bySort[0] ?? null;
    case '$bottom':
      return bySort[bySort.length - 1] ?? null;
    case '$percentile':
      return [discrete(0.5), discrete(0.9)];
    case '$median':
      return discrete(0.5);
    default:
      throw new Error(fn);
  }
}

function spec(fn: string, n: number, window: Window): Record<string, unknown> {
  const args: Record<string, unknown> =
    fn === '$firstN' || fn === '$lastN' || fn === '$minN' || fn === '$maxN'
      ? { input: '$v', n }
      : fn === '$percentile'
        ? { input: '$v', p: [0.5, 0.9], method: 'discrete' }
        : fn === '$median'
          ? { input: '$v', method: 'approximate' }
          : fn === '$top' || fn === '$bottom'
            ? { output: '$_id', sortBy: { s: 1 } }
            : { output: '$_id', sortBy: { s: 1 }, n };
  return window === undefined ? { [fn]: args } : { [fn]: args, window };
}

const FUNCTIONS = ['$firstN', '$lastN', '$minN', '$maxN', '$top', '$bottom', '$topN', '$bottomN', '$percentile', '$median'];
const WINDOWS: Window[] = [
  undefined,
  { documents: [-1, 1] },
  { documents: [-3, 0] },
  { documents: ['unbounded', 'current'] },
  { documents: ['current', 'unbounded'] },
  { documents: [2, 4] },
  { range: [-5, 5] },
  { range: [-10, 'current'] },
  { range: ['unbounded', 3] },
];

describe('every N function over every window kind, against a brute-force computation', () => {
  const rand = seededRandom(777);
  const rows: Row[] = [];
  for (let g = 0; g < 3; g++) {
    const count = randomInt(rand, 1, 30);
    const ts = new Set<number>();
    while (ts.size < count) ts.add(randomInt(rand, 0, 100));
    const ss = new Set<number>();
    while (ss.size < count) ss.add(randomInt(rand, 0, 1000));
    const sList = [...ss];
    [...ts].forEach((t, k) => {
      const row: Row = { _id: rows.length, g, t, s: sList[k]! };
      const r = rand();
      if (r < 0.7) row.v = randomInt(rand, -50, 50);
      else if (r < 0.85) row.v = null;
      rows.push(row);
    });
  }
  let c: string;
  beforeAll(async () => {
    c = await seed(rows);
  });

  for (const window of WINDOWS) {
    it(`window ${JSON.stringify(window ?? 'the whole partition')}`, async () => {
      const n = randomInt(rand, 1, 4);
      const output = Object.fromEntries(FUNCTIONS.map((fn) => [fn.slice(1), spec(fn, n, window)]));
      const docs = await run(c, [{ $setWindowFields: { partitionBy: '$g', sortBy: { t: 1 }, output } }]);
      expect(docs).toHaveLength(rows.length);
      for (const g of [0, 1, 2]) {
        const part = rows.filter((r) => r.g === g).sort((a, b) => a.t - b.t);
        const got = docs.filter((d) => d.g === g);
        expect(got.map((d) => d._id)).toEqual(part.map((r) => r._id));
        part.forEach((_r, i) => {
          const ws = windowOf(part, i, window).map((j) => part[j]!);
          for (const fn of FUNCTIONS) expect(got[i][fn.slice(1)], `${fn} n=${n} at ${i} of partition ${g}`).toEqual(expected(fn, n, ws));
        });
      }
    });
  }
});

describe('ties and the rules MongoDB follows', () => {
  let c: string;
  beforeAll(async () => {
    c = await seed([{ _id: 1, k: 1 }, { _id: 2, k: 1 }, { _id: 3, k: 2 }, { _id: 4, k: 1 }]);
  });

  it('a sliding window keeps every document in sort order, ties by position: $bottomN takes the last n', async () => {
    const docs = await run(c, [{ $setWindowFields: { sortBy: { _id: 1 }, output: { b: { $bottomN: { n: 2, output: '$_id', sortBy: { k: 1 } }, window: { documents: [-3, 0] } } } } }]);
    expect(docs.map((d) => d.b)).toEqual([[1], [1, 2], [2, 3], [4, 3]]);
  });

  it('a window from the partition start is the $group accumulator: a full $bottomN refuses a tie', async () => {
    const docs = await run(c, [{ $setWindowFields: { sortBy: { _id: 1 }, output: { b: { $bottomN: { n: 2, output: '$_id', sortBy: { k: 1 } }, window: { documents: ['unbounded', 'current'] } } } } }]);
    expect(docs.map((d) => d.b)).toEqual([[1], [1, 2], [2, 3], [2, 3]]);
  });

  it('empty windows: [] for the N functions, null for $top and $bottom', async () => {
    const docs = await run(c, [
      {
        $setWindowFields: {
          sortBy: { _id: 1 },
          output: {
            f: { $firstN: { input: '$k', n: 2 }, window: { documents: [5, 6] } },
            m: { $maxN: { input: '$k', n: 2 }, window: { documents: [5, 6] } },
            t: { $topN: { output: '$k', sortBy: { k: 1 }, n: 2 }, window: { documents: [5, 6] } },
            top: { $top: { output: '$k', sortBy: { k: 1 } }, window: { documents: [5, 6] } },
            bottom: { $bottom: { output: '$k', sortBy: { k: 1 } }, window: { documents: [5, 6] } },
          },
        },
      },
      { $limit: 1 },
    ]);
    expect(docs).toEqual([{ _id: 1, k: 1, f: [], m: [], t: [], top: null, bottom: null }]);
  });

  it('missing values: null in $firstN/$lastN and in outputs, skipped by $minN/$maxN', async () => {
    const m = await seed([{ _id: 1, v: 2 }, { _id: 2 }, { _id: 3, v: null }]);
    const docs = await run(m, [{ $setWindowFields: { sortBy: { _id: 1 }, output: { f: { $firstN: { input: '$v', n: 3 } }, l: { $lastN: { input: '$v', n: 2 } }, mn: { $minN: { input: '$v', n: 3 } }, t: { $topN: { output: '$v', sortBy: { _id: -1 }, n: 2 } } } } }, { $limit: 1 }]);
    expect(docs).toEqual([{ _id: 1, v: 2, f: [2, null, null], l: [null, null], mn: [2], t: [null, null] }]);
  });
});

describe('what the stage reads', () => {
  it('reads the sortBy fields of $topN and the like when a later stage keeps only the outputs', async () => {
    const c = await seed([{ _id: 1, s: 3 }, { _id: 2, s: 1 }, { _id: 3, s: 2 }]);
    const docs = await run(c, [{ $setWindowFields: { output: { t: { $topN: { n: 2, output: '$_id', sortBy: { s: 1 } } }, b: { $bottom: { output: '$_id', sortBy: { s: 1 } } } } } }, { $project: { t: 1, b: 1 } }, { $limit: 1 }]);
    expect(docs).toEqual([{ _id: 1, t: [2, 3], b: 1 }]);
  });
});

describe('refusals with MongoDB messages', () => {
  let c: string;
  beforeAll(async () => {
    c = await seed([{ _id: 1, x: 1 }]);
  });
  const cases: ReadonlyArray<readonly [string, unknown, RegExp]> = [
    ['n from a field (evaluated on an empty document)', { $minN: { input: '$x', n: '$x' } }, /^Value for 'n' must be of integral type, but found MISSING$/],
    ['n 0', { $topN: { output: '$x', sortBy: { x: 1 }, n: 0 } }, /^'n' must be greater than 0, found 0$/],
    ['an unknown argument beside the function', { $lastN: { input: '$x', n: 1 }, other: 1 }, /^\$lastN got unexpected argument: other$/],
    ['a bad specification', { $firstN: { input: '$x' } }, /^Missing value for 'n'$/],
    ['a bad sortBy', { $bottom: { output: '$x', sortBy: { x: 0 } } }, /^\$sort key ordering must be 1 \(for ascending\) or -1 \(for descending\)$/],
    ['a bad window', { $maxN: { input: '$x', n: 1 }, window: { documents: [1] } }, /^Window bounds must be a 2-element array/],
  ];
  for (const [name, fn, message] of cases) {
    it(`refuses ${name}`, async () => {
      const res = await mql('aggregate', { collection: c, pipeline: [{ $setWindowFields: { sortBy: { _id: 1 }, output: { out: fn } } }] });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('QUERY_ERROR');
      expect(res.body.error.message).toMatch(message);
    });
  }
});
