// The other blocking stages past the memory bound, as MongoDB runs them: $bucketAuto, $sample and
// $densify sort through the spilling sorter, $fill is a $setWindowFields (which spills, a single
// partition too: mql-spill-windows.test.ts), $facet
// streams its input to its sub-pipelines (whose $sort and $group spill), a $lookup sub-pipeline
// spills in its own stages; $graphLookup never spills (MongoDB ignores allowDiskUse there), and a
// $lookup's `as` array and a $facet's output are bounded with MongoDB's messages. A server whose
// bound (TETRA_MQL_BLOCKING_BYTES) is 16 KiB makes small data spill: answers are checked against
// mingo (an oracle only) and a server with the default bound; spill files are watched appearing
// during the query and checked gone after it.
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { serverForFile, type FileServer } from '../helpers/server.js';
import { makeSpillDocs, seedOn, spillFiles as spillFilesOf, watchingSpills as watchingSpillsOf } from '../helpers/spill.js';

/** The in-memory bound of the spilling server: the smallest the setting allows. */
const BOUND = 16 * 1024;
const small = serverForFile({ mqlBlockingBytes: BOUND });
const large = serverForFile();
/** A server whose queries may spill only 64 KiB. */
const SPILL_BOUND = 64 * 1024;
const tight = serverForFile({ mqlBlockingBytes: BOUND, mqlSpillBytes: SPILL_BOUND });

const spillFiles = (server: FileServer = small): string[] => spillFilesOf(server);
/** Seeds `docs` on `servers` (both by default): the collection's name, the same on each. */
const seed = (docs: Record<string, unknown>[], servers: readonly FileServer[] = [small, large]): Promise<string> => seedOn(servers, docs, 'stages');
const watchingSpills = <T>(fn: () => Promise<T>, server: FileServer = small) => watchingSpillsOf(server, fn);
const SORT_REFUSAL = `Sort exceeded memory limit of ${BOUND} bytes, but did not opt in to external sorting. Aborting operation. Pass allowDiskUse:true to opt in.`;




/** Runs `pipeline` on the spilling server: it must answer, spill during the query, and leave no file. */
async function spilling(c: string, pipeline: unknown[]): Promise<any[]> {
  const { result, created } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline }));
  expect(result.status, result.text).toBe(200);
  expect(created.length, `a spill file was made: ${JSON.stringify(pipeline)}`).toBeGreaterThan(0);
  expect(spillFiles()).toEqual([]);
  return result.body.documents;
}

const key = (v: unknown): string => JSON.stringify(v);
/** A value's JSON with the keys of its documents sorted: equal documents, equal strings, whatever their field order. */
const canonical = (v: unknown): string => JSON.stringify(v, (_k, x) => (x !== null && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));
/** Documents in a stable order (by `_id`, then whole), for answers whose order MongoDB does not give. */
const normalized = (docs: any[]): any[] => [...docs].sort((a, b) => (key(a._id) < key(b._id) ? -1 : key(a._id) > key(b._id) ? 1 : key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));

const DOCS = makeSpillDocs(2000, 41);
let shared: Promise<string> | undefined;
/** DOCS on the small and large servers: about 400 KB by estimate, 25x the small bound. */
const sharedCollection = (): Promise<string> => (shared ??= seed(DOCS));

describe('$bucketAuto past the memory bound', () => {
  it('sorts through spill files and builds the buckets one at a time: as mingo and an unbounded server', async () => {
    const c = await sharedCollection();
    for (const spec of [
      // Numbers with missing values (null first), every document's _id kept in order.
      { groupBy: '$n', buckets: 7, output: { count: { $sum: 1 }, ids: { $push: '$_id' }, total: { $sum: '$k' }, first: { $first: '$g' }, last: { $last: '$g' } } },
      // 50 distinct values in 6 buckets: equal values never straddle two.
      { groupBy: '$k', buckets: 6 },
      // Strings; more buckets than there are distinct values' room for.
      { groupBy: '$g', buckets: 300, output: { n: { $sum: 1 }, last: { $last: '$_id' } } },
      // Mixed types in BSON order.
      { groupBy: '$v', buckets: 4, output: { ids: { $push: '$_id' } } },
    ]) {
      const pipeline = [{ $bucketAuto: spec }];
      const ours = await spilling(c, pipeline);
      expect(ours).toEqual(await large.aggregate(c, pipeline));
      expect(withoutNullTies(ours)).toEqual(withoutNullTies(aggregate(DOCS, pipeline) as any[]));
    }
  });

  /**
   * mingo's $bucketAuto sorts null and missing keys before the others in no given order among
   * themselves (its comparator puts either first); MongoDB keeps their input order ($first, $last
   * and $push see it). In the bucket of null keys, the ids are compared as a set and $first/$last
   * left out; elsewhere everything (checked against MongoDB's rule with the unbounded server above).
   */
  function withoutNullTies(buckets: any[]): any[] {
    return buckets.map((b) => {
      if (b._id.min !== null) return b;
      const { first: _first, last: _last, ...rest } = b;
      return Array.isArray(rest.ids) ? { ...rest, ids: [...rest.ids].sort((x: number, y: number) => x - y) } : rest;
    });
  }

  it('with a granularity: the same boundaries as an unbounded server, every document counted once', async () => {
    const c = await sharedCollection();
    for (const granularity of ['R10', 'E12', '1-2-5', 'POWERSOF2']) {
      const pipeline = [{ $match: { n: { $type: 'number' } } }, { $bucketAuto: { groupBy: { $abs: '$n' }, buckets: 5, granularity, output: { count: { $sum: 1 }, ids: { $push: '$_id' } } } }];
      const ours = await spilling(c, pipeline);
      expect(ours).toEqual(await large.aggregate(c, pipeline));
      // Derived from the data: the buckets hold each matched document once, in ascending ranges
      // (max of one the min of the next), each value inside its bucket's range.
      const matched = DOCS.filter((d) => typeof d['n'] === 'number');
      expect(ours.reduce((n, b) => n + b.count, 0)).toBe(matched.length);
      expect(new Set(ours.flatMap((b) => b.ids)).size).toBe(matched.length);
      for (let i = 0; i < ours.length; i++) {
        const { min, max } = ours[i]._id;
        if (i > 0) expect(min).toBe(ours[i - 1]._id.max);
        for (const id of ours[i].ids) {
          const v = Math.abs(DOCS[id]!['n'] as number);
          expect(v >= min && (v < max || (i === ours.length - 1 && v <= max)), `${v} in [${min}, ${max})`).toBe(true);
        }
      }
    }
  });

  it('allowDiskUse: false fails with MongoDB\'s sorter message; past the spill bound it fails and leaves no file', async () => {
    const c = await sharedCollection();
    const pipeline = [{ $bucketAuto: { groupBy: '$n', buckets: 3 } }];
    await small.refuses('aggregate', { collection: c, pipeline, allowDiskUse: false }, 400, 'QUERY_ERROR', SORT_REFUSAL);
    expect(spillFiles()).toEqual([]);
    // Within the bound, allowDiskUse: false changes nothing.
    const few = await small.mql('aggregate', { collection: c, pipeline: [{ $match: { _id: { $lt: 20 } } }, ...pipeline], allowDiskUse: false });
    expect(few.status, few.text).toBe(200);
    expect(few.body.documents).toEqual(aggregate(DOCS.slice(0, 20), pipeline));
    // The sort holds the documents with their text (about 150 KB): more than the tight server may spill.
    const t = await seed(DOCS, [tight]);
    await tight.refuses('aggregate', { collection: t, pipeline: [{ $bucketAuto: { groupBy: '$n', buckets: 3, output: { texts: { $push: '$text' } } } }] }, 400, 'QUERY_ERROR', `the query spilled more than ${SPILL_BOUND} bytes to disk`);
    expect(spillFiles(tight)).toEqual([]);
  });
});

describe('$sample past the memory bound', () => {
  /** The sample of `size` the spilling server gives (it must answer): its documents. */
  async function sample(c: string, size: number): Promise<any[]> {
    const res = await small.mql('aggregate', { collection: c, pipeline: [{ $sample: { size } }] });
    expect(res.status, res.text).toBe(200);
    return res.body.documents;
  }

  it('keeps its documents through spill files: the exact size, documents of the input whole, no duplicates', async () => {
    const c = await sharedCollection();
    for (const size of [1200, 1999, 2000, 5000]) {
      const ours = await spilling(c, [{ $sample: { size } }]);
      expect(ours).toHaveLength(Math.min(size, DOCS.length));
      expect(new Set(ours.map((d) => d._id)).size).toBe(ours.length);
      for (const d of ours) expect(d).toEqual(DOCS[d._id]);
      // The unbounded server answers with the same size.
      expect(await large.aggregate(c, [{ $sample: { size } }])).toHaveLength(Math.min(size, DOCS.length));
    }
    // A sample whose documents fit in the bound does not spill.
    const few = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline: [{ $sample: { size: 5 } }] }));
    expect(few.result.body.documents).toHaveLength(5);
    expect(few.created).toEqual([]);
  });

  it('is uniform and in random order when it spills: every part of the input as likely, runs differ', async () => {
    const c = await sharedCollection();
    const RUNS = 8;
    const SIZE = 1000;
    const picks = new Array<number>(DOCS.length).fill(0);
    const runs: string[] = [];
    let ascending = 0;
    for (let r = 0; r < RUNS; r++) {
      const ours = await sample(c, SIZE);
      expect(ours).toHaveLength(SIZE);
      for (const d of ours) picks[d._id] = picks[d._id]! + 1;
      for (let i = 1; i < ours.length; i++) if (ours[i]._id > ours[i - 1]._id) ascending++;
      runs.push(key(ours.map((d) => d._id).sort((a, b) => a - b)));
    }
    // 8 samples of half the input: a document is left out of all with probability 1/256 (about 8 of 2000).
    expect(new Set(runs).size).toBe(RUNS);
    expect(picks.filter((p) => p > 0).length).toBeGreaterThan(1900);
    // Each quarter of the input (the spilled runs hold its stretches in order) gets a quarter of
    // the 8000 picks: the standard deviation is about 39, the bound 400.
    for (let q = 0; q < 4; q++) {
      const got = picks.slice(q * 500, (q + 1) * 500).reduce((a, b) => a + b, 0);
      expect(Math.abs(got - (RUNS * SIZE) / 4), `quarter ${q}: ${got}`).toBeLessThan(400);
    }
    // In random order: about half of the neighbours ascend (standard deviation about 0.006).
    const fraction = ascending / (RUNS * (SIZE - 1));
    expect(fraction).toBeGreaterThan(0.4);
    expect(fraction).toBeLessThan(0.6);
  });

  it('stays uniform when what it keeps passes the bound late: the documents held then count as the earliest of the input should', async () => {
    // 1000 small documents, then 1000 of about 650 bytes: a sample of 100 fits in the bound until
    // the large ones replace some of it, well after the first 100 (the sort by random key takes
    // over from there). Each document is drawn with probability 100 / 2000: half of the picks are
    // small ones (a sample of 100 of them has a standard deviation of 0.035; of 20 runs, 0.008).
    const docs = Array.from({ length: 2000 }, (_, i) => (i < 1000 ? { _id: i, s: 'a' } : { _id: i, pad: 'x'.repeat(300) }));
    // (Seeded on both servers, which name collections in step.)
    const c = await seed(docs);
    const RUNS = 20;
    let smallPicks = 0;
    let spilledRuns = 0;
    for (let r = 0; r < RUNS; r++) {
      const { result, created } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline: [{ $sample: { size: 100 } }] }));
      expect(result.status, result.text).toBe(200);
      const ours: any[] = result.body.documents;
      expect(ours).toHaveLength(100);
      expect(new Set(ours.map((d) => d._id)).size).toBe(100);
      smallPicks += ours.filter((d) => d._id < 1000).length;
      if (created.length > 0) spilledRuns++;
    }
    expect(spilledRuns, 'the runs spilled').toBe(RUNS);
    expect(spillFiles()).toEqual([]);
    const fraction = smallPicks / (RUNS * 100);
    expect(Math.abs(fraction - 0.5), `small documents: ${fraction}`).toBeLessThan(0.08);
  });

  it('allowDiskUse: false fails with MongoDB\'s sort message (a $sample is a sort by a random key)', async () => {
    const c = await sharedCollection();
    await small.refuses('aggregate', { collection: c, pipeline: [{ $sample: { size: 1000 } }], allowDiskUse: false }, 400, 'QUERY_ERROR', SORT_REFUSAL);
    const ok = await small.mql('aggregate', { collection: c, pipeline: [{ $sample: { size: 10 } }], allowDiskUse: false });
    expect(ok.body.documents).toHaveLength(10);
  });
});

describe('$fill past the memory bound', () => {
  /**
   * The manual's linear fill, derived from the data: a document without `n` gets the value on the
   * line between the nearest documents of its partition (by `k`, in `_id` order) that have one,
   * null when it has no such neighbour on either side.
   */
  function linearN(docs: readonly Record<string, unknown>[]): Map<number, unknown> {
    const out = new Map<number, unknown>();
    const byK = new Map<unknown, Record<string, unknown>[]>();
    for (const d of docs) byK.set(d['k'], [...(byK.get(d['k']) ?? []), d]);
    for (const part of byK.values()) {
      part.sort((a, b) => (a['_id'] as number) - (b['_id'] as number));
      part.forEach((d, i) => {
        if (typeof d['n'] === 'number') return out.set(d['_id'] as number, d['n']);
        const before = part.slice(0, i).reverse().find((x) => typeof x['n'] === 'number');
        const after = part.slice(i + 1).find((x) => typeof x['n'] === 'number');
        if (before === undefined || after === undefined) return out.set(d['_id'] as number, null);
        const [x1, y1, x2, y2] = [before['_id'], before['n'], after['_id'], after['n']] as number[];
        out.set(d['_id'] as number, y1! + ((d['_id'] as number) - x1!) * ((y2! - y1!) / (x2! - x1!)));
      });
    }
    return out;
  }

  it('goes through the spilling $setWindowFields: as mingo (and the manual\'s linear fill) and an unbounded server', async () => {
    const c = await sharedCollection();
    // 50 partitions of about 40 documents (each within the bound), both methods and a value.
    const project = { $project: { text: 0, g: 0 } };
    const fill = { partitionByFields: ['k'], sortBy: { _id: 1 }, output: { n: { method: 'linear' }, v: { method: 'locf' }, o: { value: { none: true } } } };
    const ours = await spilling(c, [project, { $fill: fill }]);
    expect(ours).toEqual(await large.aggregate(c, [project, { $fill: fill }]));
    // mingo's $linearFill fails on a partition that starts or ends without a value: the other
    // fields from mingo, n from the manual's rule. MongoDB gives partitions no order: by _id.
    const linear = linearN(DOCS);
    const others = aggregate(DOCS, [project, { $fill: { ...fill, output: { v: fill.output.v, o: fill.output.o } } }]) as any[];
    expect(normalized(ours)).toEqual(normalized(others.map((d) => ({ ...d, n: linear.get(d._id) }))));
    // 40 partitions (by an expression) of small documents, locf only.
    const locf = [{ $project: { n: 1 } }, { $fill: { partitionBy: { $mod: ['$_id', 40] }, sortBy: { _id: -1 }, output: { n: { method: 'locf' } } } }];
    const filled = await spilling(c, locf);
    expect(filled).toEqual(await large.aggregate(c, locf));
    expect(normalized(filled)).toEqual(normalized(aggregate(DOCS, locf) as any[]));
  });

  it('allowDiskUse: false fails with MongoDB\'s sort message; one partition of every document past the bound answers, as $setWindowFields does', async () => {
    const c = await sharedCollection();
    await small.refuses('aggregate', { collection: c, pipeline: [{ $fill: { partitionByFields: ['k'], sortBy: { _id: 1 }, output: { n: { method: 'locf' } } } }], allowDiskUse: false }, 400, 'QUERY_ERROR', SORT_REFUSAL);
    // No partitions: one of every document (about 25 times the bound). $linearFill reads ahead to
    // the next value only: the partition's documents stay few, only the sort spills.
    const fill = [{ $project: { n: 1, v: 1, text: 1 } }, { $fill: { sortBy: { _id: 1 }, output: { n: { method: 'linear' }, v: { method: 'locf' } } } }];
    const ours = await spilling(c, fill);
    expect(ours).toEqual(await large.aggregate(c, fill));
    // n from the manual's rule (one partition: k the same for all), v from mingo.
    const linear = linearN(DOCS.map((d) => ({ ...d, k: 0 })));
    const locf = normalized(aggregate(DOCS, [{ $project: { v: 1 } }, { $fill: { sortBy: { _id: 1 }, output: { v: { method: 'locf' } } } }]) as any[]);
    expect(normalized(ours)).toEqual(locf.map((d) => ({ _id: d._id, n: linear.get(d._id), v: d.v, text: DOCS[d._id]!['text'] })));
  });
});

describe('$densify past the memory bound', () => {
  it('sorts through spill files, then streams: as mingo and an unbounded server', async () => {
    const c = await sharedCollection();
    const pipelines = [
      [{ $project: { small: 1, n: 1 } }, { $densify: { field: 'n', partitionByFields: ['small'], range: { step: 25, bounds: 'partition' } } }],
      [{ $project: { small: 1, n: 1 } }, { $densify: { field: 'n', partitionByFields: ['small'], range: { step: 100, bounds: [-500, 500] } } }],
      [{ $project: { n: 1, g: 1 } }, { $densify: { field: 'n', range: { step: 7, bounds: 'full' } } }],
    ];
    for (const pipeline of pipelines) {
      const ours = await spilling(c, pipeline);
      expect(ours).toEqual(await large.aggregate(c, pipeline));
      // Generated documents have no _id: compared as a multiset with mingo (which orders fields its own way).
      expect(ours.map(canonical).sort()).toEqual((aggregate(DOCS, pipeline) as any[]).map(canonical).sort());
    }
  });

  it('"partition" bounds: a partition whose field is missing is apart from null even when their documents interleave in the sort', async () => {
    // Derived from MongoDB's rules: each partition ({p: null}, {} and {p: "a"}) filled from its own
    // minimum to its maximum by 1; the missing and null ones sort as equals, so their documents
    // interleave, which must not end either partition.
    const docs: Record<string, unknown>[] = [];
    for (let i = 0; i < 300; i++) {
      const d: Record<string, unknown> = { _id: i, x: 'y'.repeat(120), n: 3 * (i % 100) + (i < 100 ? 0 : i < 200 ? 1 : 2) };
      if (i < 100) d['p'] = null;
      else if (i >= 200) d['p'] = 'a';
      docs.push(d);
    }
    const c = await seed(docs);
    const pipeline = [{ $densify: { field: 'n', partitionByFields: ['p'], range: { step: 1, bounds: 'partition' } } }];
    const ours = await spilling(c, pipeline);
    expect(ours).toEqual(await large.aggregate(c, pipeline));
    const generated = ours.filter((d) => d._id === undefined);
    const range = (lo: number, hi: number, fields: object): string[] => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i).filter((n) => (n - lo) % 3 !== 0).map((n) => key({ ...fields, n }));
    expect(generated.map(key).sort()).toEqual([...range(0, 297, { p: null }), ...range(1, 298, {}), ...range(2, 299, { p: 'a' })].sort());
  });

  it('allowDiskUse: false fails with MongoDB\'s sort message; the generated-documents limit holds', async () => {
    const c = await sharedCollection();
    await small.refuses('aggregate', { collection: c, pipeline: [{ $densify: { field: 'n', range: { step: 1, bounds: 'full' } } }], allowDiskUse: false }, 400, 'QUERY_ERROR', SORT_REFUSAL);
    // (A $count after it: the documents it generates are not held as the result.)
    await small.refuses('aggregate', { collection: c, pipeline: [{ $densify: { field: 'n', partitionByFields: ['g'], range: { step: 0.003, bounds: 'full' } } }, { $count: 'n' }] }, 400, 'QUERY_ERROR', 'Generated 500001 documents in $densify, which is over the limit of 500000.');
    expect(spillFiles()).toEqual([]);
  });
});

describe('$facet, $lookup and $graphLookup past the memory bound', () => {
  it('$facet streams its input: a $sort and a $group in its sub-pipelines spill, as mingo and an unbounded server', async () => {
    const c = await sharedCollection();
    const pipeline = [
      {
        $facet: {
          firstByK: [{ $sort: { text: -1 } }, { $group: { _id: '$k', first: { $first: '$_id' }, n: { $sum: 1 } } }, { $sort: { _id: 1 } }],
          groups: [{ $group: { _id: '$g', ids: { $push: '$_id' } } }, { $match: { 'ids.2': { $exists: true } } }, { $count: 'n' }],
          deep: [{ $sort: { n: 1, _id: 1 } }, { $skip: 1990 }, { $project: { n: 1 } }],
          count: [{ $count: 'n' }],
        },
      },
    ];
    const ours = await spilling(c, pipeline);
    expect(ours).toEqual(await large.aggregate(c, pipeline));
    expect(ours).toEqual(aggregate(DOCS, pipeline));
    // A $limit in every facet: the input is closed early.
    const limited = [{ $facet: { a: [{ $limit: 3 }], b: [{ $skip: 5 }, { $limit: 2 }] } }];
    expect(await small.aggregate(c, limited)).toEqual(aggregate(DOCS, limited));
  });

  it('$facet: allowDiskUse: false fails in its $sort with MongoDB\'s message; its output is bounded with MongoDB\'s message; a failing facet leaves no file', async () => {
    const c = await sharedCollection();
    await small.refuses('aggregate', { collection: c, pipeline: [{ $facet: { s: [{ $sort: { k: 1 } }, { $limit: 500 }, { $count: 'n' }], n: [{ $count: 'n' }] } }], allowDiskUse: false }, 400, 'QUERY_ERROR', SORT_REFUSAL);
    const res = await small.mql('aggregate', { collection: c, pipeline: [{ $facet: { all: [], n: [{ $count: 'n' }] } }] });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.message).toMatch(new RegExp(`^document constructed by \\$facet is \\d+ bytes, which exceeds the limit of ${BOUND} bytes$`));
    const failing = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline: [{ $facet: { s: [{ $sort: { text: 1 } }, { $project: { bad: { $toInt: '$text' } } }], n: [{ $count: 'n' }] } }] }));
    expect(failing.result.status, failing.result.text).toBe(400);
    expect(failing.created.length).toBeGreaterThan(0);
    expect(spillFiles()).toEqual([]);
  });

  it('a $lookup sub-pipeline\'s $sort and $group spill: the sub-pipeline\'s answer for each document, as mingo gives it', async () => {
    const c = await sharedCollection();
    const sub = [{ $sort: { text: -1 } }, { $group: { _id: '$k', first: { $first: '$_id' }, ids: { $push: '$_id' } } }, { $sort: { _id: 1 } }, { $project: { first: 1, n: { $size: '$ids' } } }];
    const pipeline = [{ $match: { _id: { $lt: 3 } } }, { $lookup: { from: c, pipeline: sub, as: 'sub' } }];
    const ours = await spilling(c, pipeline);
    expect(ours).toEqual(await large.aggregate(c, pipeline));
    const expected = aggregate(DOCS, sub);
    expect(ours).toEqual(DOCS.slice(0, 3).map((d) => ({ ...d, sub: expected })));
  });

  it('a $lookup\'s as array is bounded with MongoDB\'s message; $graphLookup does not spill, allowDiskUse or not, and fails with MongoDB\'s message', async () => {
    const c = await sharedCollection();
    await small.refuses('aggregate', { collection: c, pipeline: [{ $match: { _id: 1 } }, { $lookup: { from: c, pipeline: [{ $project: { text: 1 } }], as: 'all' } }] }, 400, 'QUERY_ERROR', `Total size of documents in ${c} matching pipeline's $lookup stage exceeds ${BOUND} bytes`);
    await small.refuses('aggregate', { collection: c, pipeline: [{ $match: { _id: 1 } }, { $lookup: { from: c, localField: 'small', foreignField: 'small', as: 'same' } }] }, 400, 'QUERY_ERROR', `Total size of documents in ${c} matching pipeline's $lookup stage exceeds ${BOUND} bytes`);
    // Within the bound, the same lookup answers.
    const ok = await small.aggregate(c, [{ $match: { _id: 1 } }, { $lookup: { from: c, localField: 'g', foreignField: 'g', as: 'same' } }]);
    expect(ok[0].same).toEqual(DOCS.filter((d) => d['g'] === DOCS[1]!['g']));
    for (const allowDiskUse of [true, false]) {
      const graph = [{ $match: { _id: 1 } }, { $graphLookup: { from: c, startWith: '$small', connectFromField: 'small', connectToField: 'small', as: 'reached' } }];
      const { result, created } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline: graph, allowDiskUse }));
      expect(result.status, result.text).toBe(400);
      expect(result.body.error.message).toBe('$graphLookup reached maximum memory consumption');
      expect(created).toEqual([]);
    }
  });
});
