// $setWindowFields with a single partition past the memory bound, as MongoDB 6.0+ runs it (its
// SpillableCache): the partition's documents are held while they fit, then written to a spill
// file and read back by position as the windows move. A server whose bound
// (TETRA_MQL_BLOCKING_BYTES) is 16 KiB makes 2,000 documents of about 200 bytes (25 times the
// bound) one partition far past it: every window family is checked against mingo (an oracle
// only, where it agrees with MongoDB; otherwise the manual's formulas, written here) and against a
// server with the default bound (nothing spills there). A query of one $setWindowFields makes
// one spill file for its sort; a second one is the partition's, watched appearing during the
// query and checked gone after it; windows that read little hold little (no second file), and
// each partition's file goes when the partition is done. Random windows and functions answer as
// on the default-bound server. The sort's input held in memory goes to disk too when a
// partition's state needs the room. What cannot spill (window state as large as the window)
// fails with MongoDB's message and leaves no file; so does a partition past the query's spill
// bound. A time limit stops a spilled partition, and a partition worked in memory gives up the
// event loop (another request is answered meanwhile).
import { aggregate } from 'mingo';
import { mkdirSync, readdirSync, watch } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { http, serverForFile, type FileServer } from '../helpers/server.js';
import { seededRandom } from '../helpers/random.js';
import { makeSpillDocs, seedOn, spillDir, spillFiles as spillFilesOf, watchingSpills } from '../helpers/spill.js';

/** The in-memory bound of the spilling server: the smallest the setting allows. */
const BOUND = 16 * 1024;
const small = serverForFile({ mqlBlockingBytes: BOUND });
const large = serverForFile();
/** A server whose queries may spill only 2 KiB (TETRA_MQL_SPILL_BYTES): about 20 of these documents as stored. */
const SPILL_BOUND = 2048;
const tight = serverForFile({ mqlBlockingBytes: BOUND, mqlSpillBytes: SPILL_BOUND });

const spillFiles = (): string[] => spillFilesOf(small);
const seed = (docs: Record<string, unknown>[], servers: readonly FileServer[] = [small, large]): Promise<string> => seedOn(servers, docs, 'windows');

const DOCS = makeSpillDocs(2000, 58);
let shared: Promise<string> | undefined;
/** DOCS on the small and large servers: about 400 KB by estimate. */
const sharedCollection = (): Promise<string> => (shared ??= seed(DOCS));

const key = (v: unknown): string => JSON.stringify(v);
/** Documents by `_id` (MongoDB gives partitions no order, and mingo orders them its own way). */
const byId = (docs: any[]): any[] => [...docs].sort((a, b) => a._id - b._id);
/** Dates as the server's Extended JSON gives them (mingo's are Date objects). */
function plain(v: unknown): unknown {
  if (v instanceof Date) return { $date: v.toISOString() };
  if (Array.isArray(v)) return v.map(plain);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
  return v;
}

/**
 * Where `a` and `b` differ first, or undefined: numbers within a relative 1e-9 are equal (mingo
 * sums and divides in another order than MongoDB's compensated running sums), fields in any order.
 */
function difference(a: unknown, b: unknown, path = ''): string | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b)) ? undefined : `${path}: ${a} != ${b}`;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return `${path}: ${a.length} elements != ${b.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = difference(a[i], b[i], `${path}[${i}]`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) {
      const d = difference((a as any)[k], (b as any)[k], `${path}.${k}`);
      if (d !== undefined) return d;
    }
    return undefined;
  }
  return Object.is(a, b) ? undefined : `${path}: ${key(a)} != ${key(b)}`;
}

interface Check {
  /** mingo's answer is MongoDB's here (compared by _id, numbers rounded). */
  readonly mingo?: boolean;
  /** The documents mingo is compared on, when not all (mingo fills a window that holds nothing from other documents). */
  readonly mingoOn?: (d: any) => boolean;
  /** The partition passes the bound in what the windows hold: a second spill file (the default). */
  readonly partitionSpills?: boolean;
}

/**
 * Runs `pipeline` on the spilling server: it must answer, spill its sort (and its partition,
 * unless told), leave no file, and answer as the default-bound server (and mingo, when told).
 * Returns the spilling server's documents.
 */
async function agrees(c: string, pipeline: unknown[], check: Check = {}): Promise<any[]> {
  const { result, created } = await watchingSpills(small, () => small.mql('aggregate', { collection: c, pipeline }));
  expect(result.status, result.text.slice(0, 500)).toBe(200);
  const ours: any[] = result.body.documents;
  // The sort's file, and the partition's when its documents went to disk.
  if (check.partitionSpills ?? true) expect(created.length, `the partition spilled: ${key(pipeline)}`).toBeGreaterThanOrEqual(2);
  else expect(created.length, `only the sort spilled: ${key(pipeline)}`).toBe(1);
  expect(spillFiles()).toEqual([]);
  expect(ours, key(pipeline)).toEqual(await large.aggregate(c, pipeline));
  if (check.mingo === true) {
    const on = check.mingoOn ?? (() => true);
    const expected = byId(plain(aggregate(DOCS, pipeline as any)) as any[]).filter(on);
    expect(difference(byId(ours).filter(on), expected), key(pipeline)).toBeUndefined();
  }
  return ours;
}

const windowed = (output: Record<string, unknown>, sortBy: Record<string, 1 | -1> = { _id: 1 }, before: unknown[] = [{ $project: { text: 1, n: 1, k: 1, v: 1, o: 1 } }]): unknown[] => [...before, { $setWindowFields: { sortBy, output } }];

describe('$setWindowFields: one partition past the memory bound, spilled and read back by position', () => {
  // Windows of a few hundred documents: each holds several times the bound, and mingo (which
  // computes every window afresh) stays quick.
  it('documents windows behind, ahead and around: the counting accumulators, $first and $last', async () => {
    const c = await sharedCollection();
    const pipelines = [
      windowed({ sum: { $sum: '$n', window: { documents: [-100, 100] } }, avg: { $avg: '$n', window: { documents: [-100, 100] } }, count: { $count: {}, window: { documents: [-100, 100] } } }),
      windowed({ low: { $min: '$n', window: { documents: [-300, -100] } }, high: { $max: '$k', window: { documents: [-300, -100] } }, first: { $first: '$k', window: { documents: [-300, -100] } } }),
      windowed({ sd: { $stdDevPop: '$n', window: { documents: [0, 150] } }, sds: { $stdDevSamp: '$n', window: { documents: [100, 250] } }, last: { $last: '$_id', window: { documents: [100, 250] } } }),
      windowed({ cov: { $covariancePop: [{ $ifNull: ['$n', 0] }, '$k'], window: { documents: [-120, 120] } }, covs: { $covarianceSamp: [{ $ifNull: ['$n', 0] }, '$k'], window: { documents: [-5, 200] } } }),
    ];
    // Windows that hold no document (the first 100 behind, the last 50 ahead) are MongoDB's empty values; mingo's are not.
    for (const pipeline of pipelines) await agrees(c, pipeline, { mingo: true, mingoOn: (d) => d._id >= 100 && d._id < 1750 });
  });

  it('documents windows unbounded on either side: the whole partition read ahead, or everything after a position', async () => {
    const c = await sharedCollection();
    const pipeline = windowed({ total: { $sum: '$n' }, most: { $max: '$k', window: { documents: ['current', 'unbounded'] } }, before: { $avg: '$n', window: { documents: ['unbounded', -100] } }, after: { $sum: '$k', window: { documents: [1000, 'unbounded'] } } });
    await agrees(c, pipeline, { mingo: true, mingoOn: (d) => d._id >= 100 && d._id < 1000 });
  });

  it('range windows over numbers (ties included) and over dates with units', async () => {
    const c = await sharedCollection();
    const numbers = [{ $match: { n: { $type: 'number' } } }, { $project: { n: 1, k: 1, text: 1 } }];
    const dates = [{ $addFields: { t: { $toDate: { $multiply: ['$_id', 60_000] } } } }, { $project: { t: 1, n: 1, k: 1, text: 1 } }];
    const pipelines = [
      windowed({ near: { $sum: '$k', window: { range: [-150, 150] } }, count: { $count: {}, window: { range: [-40, 0] } }, wide: { $avg: '$k', window: { range: [-100, 'unbounded'] } } }, { n: 1 }, numbers),
      windowed({ ahead: { $max: '$k', window: { range: [100, 300] } }, behind: { $min: '$k', window: { range: ['unbounded', -500] } } }, { n: 1 }, numbers),
      windowed({ hours: { $sum: '$k', window: { range: [-2, 2], unit: 'hour' } }, minutes: { $count: {}, window: { range: [-150, 60], unit: 'minute' } }, day: { $max: '$n', window: { range: [-1, 0], unit: 'day' } } }, { t: 1 }, dates),
    ];
    // A number window that holds nothing (the values near the ends) is MongoDB's empty value; mingo's is not.
    for (const pipeline of pipelines) await agrees(c, pipeline, { mingo: true, mingoOn: (d) => d.n === undefined || (d.n >= -450 && d.n <= 650) });
  });

  it('$derivative, $integral, $expMovingAvg, $shift and the ranks', async () => {
    const c = await sharedCollection();
    const y = { $ifNull: ['$n', 0] };
    const pipelines = [
      // $integral keeps its window's points (as MongoDB's does): windows of 120 here.
      windowed({ slope: { $derivative: { input: y }, window: { documents: [-300, 0] } }, area: { $integral: { input: y }, window: { documents: [-60, 60] } }, since: { $integral: { input: y }, window: { range: ['unbounded', 0] } } }),
      windowed({ ema: { $expMovingAvg: { input: '$n', alpha: 0.25 } }, ahead: { $shift: { output: '$k', by: 700, default: 'none' } }, behind: { $shift: { output: '$_id', by: -900 } }, total: { $sum: '$k' } }),
      // Ties in k: ranks by value, $documentNumber by position (ties in input order, as mingo keeps them).
      windowed({ rank: { $rank: {} }, dense: { $denseRank: {} }, number: { $documentNumber: {} }, total: { $sum: '$n', window: { documents: ['unbounded', 'unbounded'] } } }, { k: 1 }),
    ];
    for (const pipeline of pipelines) await agrees(c, pipeline, { mingo: true });
    // With a unit over dates, checked against the manual's formula: (y2 - y1) / (t2 - t1) in hours.
    const dated = windowed({ slope: { $derivative: { input: y, unit: 'hour' }, window: { range: [-120, 0], unit: 'minute' } } }, { t: 1 }, [{ $addFields: { t: { $toDate: { $multiply: ['$_id', 60_000] } } } }, { $project: { t: 1, n: 1, text: 1 } }]);
    const ours = await agrees(c, dated);
    for (const d of ours) {
      const from = DOCS[Math.max(0, d._id - 120)]!;
      const to = DOCS[d._id]!;
      const rise = ((to['n'] as number | undefined) ?? 0) - ((from['n'] as number | undefined) ?? 0);
      if (d._id === 0) expect(d.slope).toBeNull();
      else expect(d.slope).toBeCloseTo(rise / ((d._id - (from['_id'] as number)) / 60), 6);
    }
  });

  it('the N functions and the percentiles over sliding and growing windows', async () => {
    const c = await sharedCollection();
    // The sliding ones keep their window's values in order (as MongoDB's do): windows of 120 to 200 here.
    const pipelines = [
      windowed({ low: { $minN: { input: '$n', n: 3 }, window: { documents: [-100, 100] } }, high: { $maxN: { input: '$k', n: 2 }, window: { documents: ['unbounded', 300] } }, firsts: { $firstN: { input: '$n', n: 3 }, window: { documents: [-400, 100] } }, lasts: { $lastN: { input: '$k', n: 4 }, window: { documents: [-100, 400] } } }),
      windowed({ top: { $topN: { n: 2, sortBy: { k: -1, _id: 1 }, output: '$_id' }, window: { documents: [-60, 60] } }, bottom: { $bottomN: { n: 2, sortBy: { k: 1, _id: 1 }, output: '$_id' }, window: { documents: ['unbounded', 'current'] } } }),
    ];
    for (const pipeline of pipelines) await agrees(c, pipeline, { mingo: true });
    // The percentiles (mingo 7's windowed $median is wrong here): the manual's rule over each window,
    // the value at rank ceil(p * n) of the window's numbers ('approximate' is exact at this size).
    const percentiles = await agrees(c, windowed({ median: { $median: { input: '$n', method: 'approximate' }, window: { documents: [-100, 100] } }, p: { $percentile: { input: '$k', p: [0.1, 0.9], method: 'approximate' }, window: { documents: [0, 150] } } }));
    const rank = (values: unknown[], p: number): number | null => {
      const xs = values.filter((x): x is number => typeof x === 'number').sort((a, b) => a - b);
      return xs.length === 0 ? null : xs[Math.max(0, Math.ceil(p * xs.length) - 1)]!;
    };
    for (const d of percentiles) {
      expect(d.median).toBe(rank(windowOf(d._id, -100, 100).map((x) => x['n']), 0.5));
      const ks = windowOf(d._id, 0, 150).map((x) => x['k']);
      expect(d.p).toEqual([rank(ks, 0.1), rank(ks, 0.9)]);
    }
    // $top and $bottom give one value (mingo gives an array of one): checked against $topN's first.
    const single = await agrees(c, windowed({ top: { $top: { sortBy: { n: -1, _id: 1 }, output: '$_id' }, window: { documents: [-40, 40] } }, topN: { $topN: { n: 1, sortBy: { n: -1, _id: 1 }, output: '$_id' }, window: { documents: [-40, 40] } } }));
    for (const d of single) expect(d.top).toBe(d.topN[0]);
  });

  it('$push, $addToSet, $mergeObjects and $minMaxScaler', async () => {
    const c = await sharedCollection();
    await agrees(c, windowed({ around: { $push: '$_id', window: { documents: [-40, 40] } }, later: { $push: '$k', window: { documents: [500, 520] } } }), { mingo: true, mingoOn: (d) => d._id < 1480 });
    // $addToSet's order: BSON order in MongoDB's removable windows, insertion order in mingo's (compared as sets).
    const sets = windowed({ ks: { $addToSet: '$k', window: { documents: [-100, 100] } }, smalls: { $addToSet: '$small', window: { documents: ['unbounded', 'unbounded'] } } }, { _id: 1 }, [{ $project: { k: 1, small: 1, text: 1 } }]);
    const ours = await agrees(c, sets);
    const sorted = (docs: any[]): any[] => byId(docs).map((d) => ({ ...d, ks: [...d.ks].sort((a: number, b: number) => a - b), smalls: [...d.smalls].sort() }));
    expect(sorted(ours)).toEqual(sorted(aggregate(DOCS, sets as any) as any[]));
    // $mergeObjects over a growing window (MongoDB has no removable one): the manual's rule, later
    // fields winning. It reads nothing ahead: the partition is never written.
    const merged = await agrees(c, windowed({ all: { $mergeObjects: '$o', window: { documents: ['unbounded', 'current'] } } }), { partitionSpills: false });
    let expected: Record<string, unknown> = {};
    for (const d of byId(merged)) {
      const o = DOCS[d._id]!['o'];
      if (o !== undefined) expected = { ...expected, ...(o as object) };
      expect(d.all).toEqual(expected);
    }
    // $minMaxScaler (mingo 7's windowed one reads the wrong document here): MongoDB's formula over each window.
    const scaled = await agrees(c, windowed({ scaled: { $minMaxScaler: { input: { $ifNull: ['$n', 0] }, min: -1, max: 1 }, window: { documents: [-100, 100] } } }));
    for (const d of scaled) {
      const ys = windowOf(d._id, -100, 100).map((x) => (x['n'] as number | undefined) ?? 0);
      const [lo, hi] = [Math.min(...ys), Math.max(...ys)];
      expect(d.scaled).toBeCloseTo(lo === hi ? -1 : (((d.n ?? 0) - lo) / (hi - lo)) * 2 - 1, 12);
    }
  });

  it('$locf and $linearFill; $fill without partitions, over all the documents', async () => {
    const c = await sharedCollection();
    // Everything ahead is read (a whole-partition $sum) before the first document is filled.
    await agrees(c, windowed({ v: { $locf: '$v' }, total: { $sum: '$k' } }), { mingo: true });
    const linear = await agrees(c, windowed({ n: { $linearFill: '$n' }, total: { $sum: '$k' } }));
    expect(byId(linear).map((d) => d.n)).toEqual(linearFill(DOCS));
    // $fill is a $setWindowFields: one partition of every document (before, past the bound it failed).
    const fill = [{ $project: { n: 1, v: 1, k: 1, text: 1 } }, { $fill: { sortBy: { _id: 1 }, output: { n: { method: 'linear' }, v: { method: 'locf' }, k: { value: 0 } } } }];
    const filled = await agrees(c, fill, { partitionSpills: false });
    expect(byId(filled).map((d) => d.n)).toEqual(linearFill(DOCS));
    const locf = aggregate(DOCS, [{ $project: { v: 1 } }, { $fill: { sortBy: { _id: 1 }, output: { v: { method: 'locf' } } } }]) as any[];
    expect(byId(filled).map((d) => d.v)).toEqual(byId(locf).map((d) => d.v));
  });

  it('windows that reach little behind and nothing ahead hold a few documents: only the sort spills', async () => {
    const c = await sharedCollection();
    // ($linearFill of a field every document has: nothing is read ahead.)
    const pipeline = windowed({ recent: { $sum: '$n', window: { documents: [-3, 0] } }, previous: { $shift: { output: '$k', by: -2, default: null } }, rank: { $rank: {} }, v: { $locf: '$v' }, ema: { $expMovingAvg: { input: '$n', N: 4 } }, running: { $max: '$k', window: { documents: ['unbounded', 'current'] } }, k: { $linearFill: '$k' } }, { _id: 1 });
    await agrees(c, pipeline, { partitionSpills: false });
  });

  it('random windows and functions: the spilling server answers (or refuses) as the default-bound one', async () => {
    const c = await sharedCollection();
    const rand = seededRandom(20261127);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const bounds: readonly unknown[] = ['unbounded', 'current', -250, -60, -5, -1, 0, 1, 5, 60, 250];
    const offset = (b: unknown): number => (b === 'unbounded' ? NaN : b === 'current' ? 0 : (b as number));
    const documents = (): unknown => {
      let [lo, hi] = [pick(bounds), pick(bounds)];
      if (lo === 'unbounded' || hi === 'unbounded') return { documents: lo === 'unbounded' ? [lo, hi] : [hi, lo] };
      if (offset(lo) > offset(hi)) [lo, hi] = [hi, lo];
      return { documents: [lo, hi] };
    };
    const range = (): unknown => pick([{ range: [-300, 300] }, { range: ['unbounded', -40] }, { range: [0, 'unbounded'] }, { range: [-40, 'current'] }, { range: [10, 500] }]);
    const functions: ReadonlyArray<(numeric: boolean) => unknown> = [
      (r) => ({ $sum: '$n', window: r ? range() : documents() }),
      (r) => ({ $avg: '$k', window: r ? range() : documents() }),
      // (Of k, in no order along n: a $min of n over a window sorted by n keeps every value, past the bound.)
      (r) => ({ $min: '$k', window: r ? range() : documents() }),
      (r) => ({ $max: '$v', window: r ? range() : documents() }),
      (r) => ({ $stdDevSamp: '$n', window: r ? range() : documents() }),
      (r) => ({ $first: '$_id', window: r ? range() : documents() }),
      (r) => ({ $last: '$k', window: r ? range() : documents() }),
      () => ({ $addToSet: '$small', window: documents() }),
      () => ({ $push: '$_id', window: pick([{ documents: [-20, 20] }, { documents: [30, 60] }, { documents: [-9, -3] }]) }),
      () => ({ $maxN: { n: 3, input: '$n' }, window: pick([{ documents: [-40, 40] }, { documents: ['unbounded', 5] }]) }),
      () => ({ $lastN: { n: 2, input: '$k' }, window: documents() }),
      () => ({ $shift: { output: '$_id', by: pick([-300, -1, 2, 300]), default: -1 } }),
      () => ({ $locf: '$v' }),
      () => ({ $expMovingAvg: { input: '$n', alpha: 0.3 } }),
    ];
    for (let round = 0; round < 20; round++) {
      const numeric = rand() < 0.4;
      const output: Record<string, unknown> = {};
      for (let f = 0, count = 1 + Math.floor(rand() * 3); f < count; f++) output[`f${f}`] = pick(functions)(numeric);
      const partitionBy = pick([null, '$small', { $mod: ['$_id', 2] }]);
      const pipeline = numeric
        ? [{ $match: { n: { $type: 'number' } } }, { $project: { n: 1, k: 1, v: 1, small: 1, text: 1 } }, { $setWindowFields: { partitionBy, sortBy: { n: 1 }, output } }]
        : [{ $project: { n: 1, k: 1, v: 1, small: 1, text: 1 } }, { $setWindowFields: { partitionBy, sortBy: pick([{ _id: 1 }, { k: -1, _id: 1 }]), output } }];
      const [ours, theirs] = await Promise.all([small.mql('aggregate', { collection: c, pipeline }), large.mql('aggregate', { collection: c, pipeline })]);
      expect(ours.status, `${key(pipeline)}: ${ours.text.slice(0, 300)}`).toBe(theirs.status);
      expect(ours.body, key(pipeline)).toEqual(theirs.body);
    }
    expect(spillFiles()).toEqual([]);
  });

  it('partitions past the bound one after another: each one\'s file is removed when it is done', async () => {
    const c = await sharedCollection();
    // 7 partitions of about 285 documents (57 KB each); whole-partition windows read each to its end.
    const pipeline = [{ $project: { small: 1, n: 1, k: 1, text: 1 } }, { $setWindowFields: { partitionBy: '$small', sortBy: { _id: 1 }, output: { total: { $sum: '$n' }, around: { $avg: '$k', window: { documents: [-150, 150] } } } } }];
    const { result, created, most } = await watchingHeld(small, () => small.mql('aggregate', { collection: c, pipeline }));
    expect(result.status, result.text.slice(0, 500)).toBe(200);
    expect(created.length, 'the sort\'s file and one per partition').toBe(8);
    expect(most, 'at most the sort\'s file and one partition\'s at a time').toBeLessThanOrEqual(2);
    expect(spillFiles()).toEqual([]);
    expect(result.body.documents).toEqual(await large.aggregate(c, pipeline));
    expect(difference(byId(result.body.documents), byId(aggregate(DOCS, pipeline as any) as any[]))).toBeUndefined();
  });

  it('with its input in memory (the sort did not spill) the partition spills all the same', async () => {
    const c = await sharedCollection();
    // 40 documents (15 KB) fit in the bound; they and their texts in one array do not.
    const pipeline = [{ $match: { _id: { $lt: 40 } } }, { $setWindowFields: { sortBy: { _id: 1 }, output: { texts: { $push: '$text' } } } }];
    const { result, created } = await watchingSpills(small, () => small.mql('aggregate', { collection: c, pipeline }));
    expect(result.status, result.text.slice(0, 500)).toBe(200);
    expect(created.length, 'the partition\'s file alone').toBe(1);
    expect(spillFiles()).toEqual([]);
    const texts = DOCS.slice(0, 40).map((d) => d['text']);
    expect(result.body.documents).toEqual(DOCS.slice(0, 40).map((d) => ({ ...d, texts })));
  });
});

describe('$setWindowFields: the sort\'s input in memory', () => {
  it('goes to disk too when a partition\'s state needs the room', async () => {
    // 90 documents of about 156 bytes (14 KB) fit in the bound: the sort keeps them in memory. The
    // first partition's windows keep 30 strings of 200 characters (13 KB) while the sort still
    // holds the other partition's 60 documents (9 KB): these go to a spill file.
    const docs = Array.from({ length: 90 }, (_, i) => ({ _id: i, g: i < 30 ? 'a' : 'b', s: 'x'.repeat(20) }));
    const c = await seed(docs);
    const long = { $concat: new Array(10).fill('$s') };
    const pipeline = [{ $setWindowFields: { partitionBy: '$g', sortBy: { _id: 1 }, output: { recent: { $push: long, window: { documents: [-29, 0] } } } } }];
    const { result, created } = await watchingSpills(small, () => small.mql('aggregate', { collection: c, pipeline }));
    expect(result.status, result.text.slice(0, 500)).toBe(200);
    expect(created.length, 'the rest of the sort\'s input').toBeGreaterThan(0);
    expect(spillFiles()).toEqual([]);
    expect(result.body.documents).toEqual(await large.aggregate(c, pipeline));
    const first = (i: number): number => (i < 30 ? 0 : 30);
    expect(result.body.documents).toEqual(docs.map((d, i) => ({ ...d, recent: new Array(i - Math.max(first(i), i - 29) + 1).fill('x'.repeat(200)) })));
  });
});

describe('$setWindowFields: the event loop', () => {
  it('is given up while a partition is worked in memory: another request is answered meanwhile', async () => {
    // 3,000 documents of one partition (within the default bound); each input costs a $range of
    // 100,000, so the window's first step alone takes seconds. A request sent meanwhile is
    // answered before the aggregation ends (its time limit ends it).
    const docs = Array.from({ length: 3000 }, (_, i) => ({ _id: i }));
    const c = await seed(docs, [large]);
    const pipeline = [{ $setWindowFields: { sortBy: { _id: 1 }, output: { s: { $sum: { $size: { $range: [0, 100_000] } } } } } }];
    const done: string[] = [];
    const slow = large.mql('aggregate', { collection: c, pipeline, maxTimeMS: 2500 }).then((r) => {
      done.push('aggregate');
      return r;
    });
    await new Promise((r) => setTimeout(r, 300));
    const health = await http(large.server.url, 'GET', '/api/health', { apiKey: large.apiKey });
    done.push('health');
    expect(health.status).toBe(200);
    const res = await slow;
    expect(res.body.error?.message).toBe('operation exceeded time limit');
    expect(done).toEqual(['health', 'aggregate']);
  });
});

describe('$setWindowFields: what cannot spill', () => {
  const EXCEEDED = /^Exceeded memory limit in DocumentSourceSetWindowFields, used \d+ bytes but max allowed is 16384$/;

  it('window state past the bound fails with MongoDB\'s message (5414201) after the documents went to disk, and leaves no file', async () => {
    const c = await sharedCollection();
    for (const output of [
      // Every text of the partition in one array (about 150 KB), and a window that grows to it.
      { texts: { $push: '$text' } },
      { ids: { $push: '$_id', window: { documents: ['unbounded', 'current'] } } },
      // A set of every text of a window of 1,501 documents.
      { near: { $addToSet: '$text', window: { documents: [-750, 750] } } },
      // A $rand input's values are kept until they leave the window (as MongoDB keeps every value).
      { r: { $sum: { $rand: {} }, window: { documents: [-1000, 0] } } },
    ]) {
      const { result, created } = await watchingSpills(small, () => small.mql('aggregate', { collection: c, pipeline: windowed(output) }));
      expect(result.status, result.text.slice(0, 500)).toBe(400);
      expect(result.body.error.code).toBe('QUERY_ERROR');
      expect(result.body.error.message).toMatch(EXCEEDED);
      expect(created.length, key(output)).toBeGreaterThan(0);
      expect(spillFiles()).toEqual([]);
    }
    // The counting accumulators hold no more for a wide window: the documents leaving it are read again.
    await agrees(c, windowed({ s: { $sum: '$n', window: { documents: [-1000, 1000] } }, ids: { $push: '$_id', window: { documents: [-40, 40] } } }));
  });

  it('allowDiskUse: false: the partition may not spill either (MongoDB\'s 5414201); past the bound the sort fails first', async () => {
    const c = await sharedCollection();
    const few = [{ $match: { _id: { $lt: 40 } } }, { $setWindowFields: { sortBy: { _id: 1 }, output: { texts: { $push: '$text' } } } }];
    const res = await small.mql('aggregate', { collection: c, pipeline: few, allowDiskUse: false });
    expect(res.status, res.text.slice(0, 500)).toBe(400);
    expect(res.body.error.message).toMatch(EXCEEDED);
    // What fits with its state answers.
    const fewer = await small.mql('aggregate', { collection: c, pipeline: [{ $match: { _id: { $lt: 20 } } }, few[1]], allowDiskUse: false });
    expect(fewer.status, fewer.text.slice(0, 500)).toBe(200);
    expect(spillFiles()).toEqual([]);
    await small.refuses('aggregate', { collection: c, pipeline: windowed({ n: { $count: {} } }), allowDiskUse: false }, 400, 'QUERY_ERROR', `Sort exceeded memory limit of ${BOUND} bytes, but did not opt in to external sorting.`);
  });

  it('a partition\'s file counts against the query\'s spill bound: past it the query fails and leaves no file', async () => {
    // 40 documents (15 KB by estimate, about 4 KB as stored) the sort holds in memory; their texts
    // in one array take the partition to disk.
    const c = await seed(DOCS.slice(0, 40), [tight]);
    const pushed = [{ $setWindowFields: { sortBy: { _id: 1 }, output: { texts: { $push: '$text' } } } }];
    const { result, created } = await watchingSpills(tight, () => tight.mql('aggregate', { collection: c, pipeline: pushed }));
    expect(result.status, result.text.slice(0, 500)).toBe(400);
    expect(result.body.error.message).toContain(`the query spilled more than ${SPILL_BOUND} bytes to disk`);
    expect(created.length).toBe(1);
    expect(spillFilesOf(tight)).toEqual([]);
    // A window that reads nothing ahead holds a few documents and writes nothing.
    const res = await tight.mql('aggregate', { collection: c, pipeline: [{ $setWindowFields: { sortBy: { _id: 1 }, output: { last: { $push: '$text', window: { documents: [-2, 0] } } } } }] });
    expect(res.status, res.text.slice(0, 500)).toBe(200);
  });

  it('a time limit that passes in the middle of a spilled partition stops the query and removes its files', async () => {
    // 10,000 documents of one partition; each input costs a $range of 100,000 (seconds in all).
    const docs = Array.from({ length: 10_000 }, (_, i) => ({ _id: i, pad: 'p'.repeat(40 + (i % 20)) }));
    const c = await seed(docs, [small]);
    const pipeline = [{ $setWindowFields: { sortBy: { _id: 1 }, output: { s: { $sum: { $size: { $range: [0, 100_000] } }, window: { documents: ['unbounded', 'unbounded'] } } } } }];
    const { result, created } = await watchingSpills(small, () => small.mql('aggregate', { collection: c, pipeline, maxTimeMS: 3000 }));
    expect(result.status, result.text.slice(0, 500)).toBe(400);
    expect(result.body.error.message).toBe('operation exceeded time limit');
    expect(created.length, 'the sort\'s file and the partition\'s: it stopped in the partition').toBeGreaterThanOrEqual(2);
    expect(spillFiles()).toEqual([]);
  });
});

/** The documents of the window [lo, hi] around `_id` `i` (DOCS in `_id` order, one partition). */
function windowOf(i: number, lo: number, hi: number): Record<string, unknown>[] {
  return DOCS.slice(Math.max(0, i + lo), Math.max(0, i + hi + 1));
}

/**
 * The manual's $linearFill of `n` over documents in `_id` order: a number stays, a missing one
 * is on the line between the nearest numbers before and after it, null without one on either side.
 */
function linearFill(docs: readonly Record<string, unknown>[]): unknown[] {
  return docs.map((d, i) => {
    if (typeof d['n'] === 'number') return d['n'];
    let before = i - 1;
    while (before >= 0 && typeof docs[before]!['n'] !== 'number') before--;
    let after = i + 1;
    while (after < docs.length && typeof docs[after]!['n'] !== 'number') after++;
    if (before < 0 || after >= docs.length) return null;
    const [y1, y2] = [docs[before]!['n'] as number, docs[after]!['n'] as number];
    return y1 + (i - before) * ((y2 - y1) / (after - before));
  });
}

/** Runs `fn`, recording the spill files created meanwhile and the most that were there at once. */
async function watchingHeld<T>(server: FileServer, fn: () => Promise<T>): Promise<{ result: T; created: string[]; most: number }> {
  const dir = spillDir(server);
  mkdirSync(dir, { recursive: true });
  const created = new Set<string>();
  let most = 0;
  const watcher = watch(dir, (_event, name) => {
    if (name === null || !name.endsWith('.spill')) return;
    created.add(name);
    most = Math.max(most, readdirSync(dir).filter((n) => n.endsWith('.spill')).length);
  });
  try {
    const result = await fn();
    await new Promise((r) => setTimeout(r, 20));
    return { result, created: [...created], most };
  } finally {
    watcher.close();
  }
}
