// A $group past the memory bound writes its partial groups to spill files as compact records (a
// key, an _id and each accumulator's state: engine/docs/aggregate/stages/group-runs.ts,
// engine/docs/spill-value-codec.ts) and merges them by key. Every kind of value a document holds
// goes through those records as a group key and as accumulator state, on a server whose bound
// (TETRA_MQL_BLOCKING_BYTES) is 16 KiB: the answers are the unbounded server's (nothing spills
// there) and mingo's (an oracle only), values that JSON cannot carry (-0, NaN, infinities) are
// compared through $toString, the spilled groups come out in key order, a group record larger
// than a block and than a run's read buffer goes through, and a query stopped by its time limit
// during the merge leaves no file.
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';
import { seedOn, spillFiles as spillFilesOf, watchingSpills as watchingSpillsOf } from '../helpers/spill.js';

/** The in-memory bound of the spilling server: the smallest the setting allows. */
const BOUND = 16 * 1024;
const small = serverForFile({ mqlBlockingBytes: BOUND });
const large = serverForFile();
/** Queries may spill 128 KiB at once here: one $group of RELEASE_DOCS spills less, two at once more. */
const frugal = serverForFile({ mqlBlockingBytes: BOUND, mqlSpillBytes: 128 * 1024 });

const spillFiles = (): string[] => spillFilesOf(small);
const seed = (docs: Record<string, unknown>[]): Promise<string> => seedOn([small, large], docs.map(toEjson) as Record<string, unknown>[], 'spillgroup');

/** Runs `pipeline` on the spilling server: it must answer, spill during the query, and leave no file. */
async function spilling(c: string, pipeline: unknown[], extra: Record<string, unknown> = {}): Promise<any[]> {
  const { result, created } = await watchingSpillsOf(small, () => small.mql('aggregate', { collection: c, pipeline, ...extra }));
  expect(result.status, result.text).toBe(200);
  expect(created.length, `a spill file was made: ${JSON.stringify(pipeline)}`).toBeGreaterThan(0);
  expect(spillFiles()).toEqual([]);
  return result.body.documents;
}

/** A value as the server's JSON gives it (dates as Extended JSON), for mingo's answers and for seeding. */
function toEjson(v: unknown): unknown {
  if (v instanceof Date) return { $date: v.toISOString() };
  if (Array.isArray(v)) return v.map(toEjson);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toEjson(x)]));
  return v;
}

const key = (v: unknown): string => JSON.stringify(v);
/** Groups in `_id` order (its JSON, field order kept), the arrays of `sets` sorted: for answers whose order is not given. */
function normalized(docs: any[], sets: readonly string[] = []): any[] {
  return docs
    .map((d) => {
      const out = { ...d };
      for (const f of sets) if (Array.isArray(out[f])) out[f] = [...out[f]].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
      return out;
    })
    .sort((a, b) => (key(a._id) < key(b._id) ? -1 : key(a._id) > key(b._id) ? 1 : 0));
}

/** Marks a document whose `x` is missing. */
const MISSING_X = Symbol('missing');

/**
 * Values of every kind, at the edges of the spill records' encoding: small integers (written in
 * their tag), int32 and past it, doubles, integers past 2^53, strings empty, ASCII, accented,
 * combining, CJK, astral (surrogate pairs), U+E000 and U+FFFF (which sort after surrogates in
 * UTF-16 and before them in UTF-8), long; booleans, null and missing (one group, as MongoDB
 * groups them), dates before and after the epoch, documents (nested, empty), arrays (nested,
 * empty, of documents).
 */
const VALUES: readonly unknown[] = [
  0, 1, -1, 127, 128, 2.5, -7.25, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, 1e21, -1e-300, 123456789012,
  '', 'a', 'A', 'é', 'e\u0301', '日本語', '😀', '\uffff', '\ue000', 'x'.repeat(100), 'long é '.repeat(5),
  true, false, null, MISSING_X,
  new Date(0), new Date('2024-02-29T12:00:00.123Z'), new Date(-1e12),
  { a: 1 }, { a: 1, b: 'é' }, { n: { m: [1, { z: null }] } }, {},
  [], [1, 2], [2, 1], [null], [[1], 'x'], [{ a: 1 }],
];

/** 1,500 documents: `x` cycles through VALUES (missing where it says), `g` through 37 groups, so each group's partial states lie in many runs. */
const DOCS: Record<string, unknown>[] = Array.from({ length: 1500 }, (_, i) => {
  const d: Record<string, unknown> = { _id: i, g: `g${i % 37}`, n: i % 11 };
  const x = VALUES[i % VALUES.length];
  if (x !== MISSING_X) d['x'] = x;
  if (i % 3 !== 0) d['o'] = { [`f${i % 4}`]: x === MISSING_X ? null : x, i };
  return d;
});
let shared: Promise<string> | undefined;
const sharedCollection = (): Promise<string> => (shared ??= seed(DOCS));

describe('$group past the memory bound: values of every kind through its spill records', () => {
  it('as group keys: the same groups and states as an unbounded server and as mingo', async () => {
    const c = await sharedCollection();
    for (const id of ['$x', { x: '$x', m: { $mod: ['$n', 3] } }, ['$x', '$n']]) {
      const pipeline = [{ $group: { _id: id, count: { $count: {} }, sum: { $sum: '$n' }, avg: { $avg: '$n' }, first: { $first: '$_id' }, last: { $last: '$_id' }, ns: { $push: '$n' }, gs: { $addToSet: '$g' } } }];
      const ours = await spilling(c, pipeline);
      // In input order across runs (push, first, last), a set in first-seen order: as in memory, exactly.
      expect(normalized(ours)).toEqual(normalized(await large.aggregate(c, pipeline)));
      // mingo keeps a missing value in an array expression as undefined (another group than
      // [null, n]), where MongoDB makes it null: the array key against the unbounded server only.
      if (!Array.isArray(id)) expect(normalized(ours, ['gs'])).toEqual(normalized(toEjson(aggregate(DOCS, pipeline)) as any[], ['gs']));
    }
  });

  it('as accumulator states ($first of a missing value, extremes across types, lists and sets of them, merged documents)', async () => {
    const c = await sharedCollection();
    const pipeline = [
      {
        $group: {
          _id: '$g',
          first: { $first: '$x' },
          last: { $last: '$x' },
          min: { $min: '$x' },
          max: { $max: '$x' },
          xs: { $push: '$x' },
          set: { $addToSet: '$x' },
          firstN: { $firstN: { input: '$x', n: 3 } },
          lastN: { $lastN: { input: '$x', n: 2 } },
          merged: { $mergeObjects: '$o' },
        },
      },
    ];
    const ours = await spilling(c, pipeline);
    expect(normalized(ours)).toEqual(normalized(await large.aggregate(c, pipeline)));
    // mingo orders values of different types otherwise than BSON for $min and $max, leaves null
    // out of $addToSet and pushes a missing value as null (MongoDB leaves out only missing values
    // from both): those against the unbounded server only.
    const oracle = toEjson(aggregate(DOCS, pipeline)) as any[];
    const mingoFields = ({ min: _min, max: _max, set: _set, xs: _xs, ...rest }: any): any => rest;
    expect(normalized(ours.map(mingoFields))).toEqual(normalized(oracle.map(mingoFields)));
    // The first document of this group has no x: its $first is null, though its later documents (in later runs) have one.
    const firstMissing = ours.find((d) => d._id === `g${VALUES.indexOf(MISSING_X)}`);
    expect(firstMissing.first).toBeNull();
    expect(firstMissing.xs.length).toBeGreaterThan(30);
  });

  it('values JSON cannot carry (-0, NaN, infinities) made by expressions: as keys and states, as an unbounded server has them', async () => {
    const c = await sharedCollection();
    const made = {
      $switch: {
        branches: [
          { case: { $eq: [{ $mod: ['$_id', 5] }, 0] }, then: { $multiply: [0, -1] } },
          { case: { $eq: [{ $mod: ['$_id', 5] }, 1] }, then: { $toDouble: 'NaN' } },
          { case: { $eq: [{ $mod: ['$_id', 5] }, 2] }, then: { $toDouble: 'Infinity' } },
          { case: { $eq: [{ $mod: ['$_id', 5] }, 3] }, then: { $toDouble: '-Infinity' } },
        ],
        default: { $add: [2 ** 53, '$n', 0.5] },
      },
    };
    const asStrings = (field: string) => ({ $map: { input: field, in: { $toString: '$$this' } } });
    const pipeline = [
      { $set: { y: made } },
      { $group: { _id: { y: '$y', g: { $mod: ['$_id', 41] } }, first: { $first: '$y' }, last: { $last: '$y' }, min: { $min: '$y' }, max: { $max: '$y' }, sum: { $sum: '$y' }, ys: { $push: '$y' }, set: { $addToSet: '$y' } } },
      { $project: { idY: { $toString: '$_id.y' }, first: { $toString: '$first' }, last: { $toString: '$last' }, min: { $toString: '$min' }, max: { $toString: '$max' }, sum: { $toString: '$sum' }, ys: asStrings('$ys'), set: asStrings('$set') } },
    ];
    const ours = await spilling(c, pipeline);
    const expected = await large.aggregate(c, pipeline);
    expect(normalized(ours)).toEqual(normalized(expected));
    // What the comparison must have seen: negative zeros as keys and states, NaN, both infinities.
    const strings = new Set(ours.flatMap((d) => [d.idY, d.first, ...d.ys]));
    for (const s of ['-0', 'NaN', 'Infinity', '-Infinity']) expect(strings.has(s), s).toBe(true);
  });

  it('groups come out in key order: strings in UTF-16 code unit order, past U+FFFF too', async () => {
    const chars = ['a', 'z', 'é', '日', '\ue000', '\uffff', '😀', '𝄞', ' ', '~'];
    const docs = Array.from({ length: 1200 }, (_, i) => ({ _id: i, s: `${chars[i % chars.length]}${chars[Math.floor(i / chars.length) % chars.length]}${i % 7}`, n: i }));
    const c = await seed(docs);
    const pipeline = [{ $group: { _id: '$s', n: { $sum: '$n' }, ids: { $push: '$_id' } } }];
    const ours = await spilling(c, pipeline);
    const ids = ours.map((d) => d._id as string);
    expect(ids).toEqual([...ids].sort());
    expect(new Set(ids).size).toBe(ids.length);
    expect(normalized(ours)).toEqual(normalized(await large.aggregate(c, pipeline)));
    expect(normalized(ours)).toEqual(normalized(aggregate(docs, pipeline) as any[]));
  });

  it('a group record larger than a block and than a run\'s read buffer goes through whole', async () => {
    // Many small groups, and group 0 of 600 doubles, in many runs.
    const docs = Array.from({ length: 2400 }, (_, i) => ({ _id: i, k: i % 4 === 0 ? 0 : 1 + (i % 97), v: i + 0.25 }));
    const c = await seed(docs);
    const pipeline = [{ $group: { _id: '$k', vs: { $push: '$v' }, n: { $count: {} } } }];
    const ours = await spilling(c, pipeline);
    expect(ours.find((d) => d._id === 0).vs).toHaveLength(600);
    expect(normalized(ours)).toEqual(normalized(await large.aggregate(c, pipeline)));
    // Then group -1 of 1,900 doubles, read last (string _ids): ~15.6 KiB by estimate, under the
    // bound; ~17 KiB written (9 bytes a double), past the 8 KiB blocks and the 16 KiB read buffer
    // each of the many runs gets.
    const big = Array.from({ length: 1900 }, (_, i) => ({ _id: `b${String(i).padStart(4, '0')}`, k: -1, v: i + 0.5 }));
    const c2 = await seed([...docs, ...big]);
    const ours2 = await spilling(c2, pipeline);
    expect(ours2.find((d) => d._id === -1).vs).toEqual(big.map((d) => d.v));
    expect(normalized(ours2)).toEqual(normalized(await large.aggregate(c2, pipeline)));
  });

  it('stopped by its time limit while its runs are merged: the time-limit error, and no file left', async () => {
    const docs = Array.from({ length: 3000 }, (_, i) => ({ _id: i, g: i }));
    const c = await seed(docs);
    // The $group spills its 3,000 groups and merges them 256 at a time; each group then costs a
    // $reduce of 20,000 steps, so the time goes after the spill, between the merge's chunks.
    const pipeline = [
      { $group: { _id: '$g', n: { $sum: 1 } } },
      { $set: { w: { $reduce: { input: { $range: [0, 20_000] }, initialValue: 0, in: { $add: ['$$value', 1] } } } } },
      { $count: 'n' },
    ];
    const { result, created } = await watchingSpillsOf(small, () => small.mql('aggregate', { collection: c, pipeline, maxTimeMS: 1500 }));
    expect(result.status, result.text).toBe(400);
    expect(result.body.error).toMatchObject({ code: 'QUERY_ERROR', message: 'operation exceeded time limit' });
    expect(created.length).toBeGreaterThan(0);
    expect(spillFiles()).toEqual([]);
  });

  it('releases its spill file when it ends, not when the query does: a $lookup spills in each document\'s sub-pipeline within the query\'s spill bound', async () => {
    // 2,000 groups of ~40 bytes written each: ~80 KiB a $group spills, under the 128 KiB the
    // frugal server lets a query hold, twice that over it.
    const inner = Array.from({ length: 2000 }, (_, i) => ({ _id: i, s: `${'x'.repeat(20)}${i}` }));
    const c = await seedOn([frugal], inner, 'release');
    const sub = [{ $group: { _id: '$_id', s: { $first: '$s' } } }, { $count: 'n' }];
    const one = await frugal.mql('aggregate', { collection: c, pipeline: sub });
    expect(one.status, one.text).toBe(200);
    // Two at once (a $facet's sub-pipelines run side by side) pass the bound: what the test rests on.
    const both = await frugal.mql('aggregate', { collection: c, pipeline: [{ $facet: { a: sub, b: sub } }] });
    expect(both.status, both.text).toBe(400);
    expect(both.body.error.message).toMatch(/^the query spilled more than 131072 bytes to disk/);
    // One after another, five times in one query: each $group's file is gone before the next spills.
    // Each document's `let` differs (equal values would share one run of the sub-pipeline).
    const perDocument = [{ $match: { $expr: { $gte: ['$$k', 0] } } }, ...sub];
    const { result, created } = await watchingSpillsOf(frugal, () => frugal.mql('aggregate', { collection: c, pipeline: [{ $sort: { _id: 1 } }, { $limit: 5 }, { $lookup: { from: c, let: { k: '$_id' }, pipeline: perDocument, as: 'groups' } }, { $project: { groups: 1 } }] }));
    expect(result.status, result.text).toBe(200);
    expect(result.body.documents).toEqual([0, 1, 2, 3, 4].map((i) => ({ _id: i, groups: [{ n: 2000 }] })));
    expect(created.length).toBeGreaterThanOrEqual(5);
    expect(spillFilesOf(frugal)).toEqual([]);
  });
});
