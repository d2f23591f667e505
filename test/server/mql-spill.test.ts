// allowDiskUse: blocking stages and a find's sort past the memory bound spill to disk instead of
// failing (MongoDB 6.0+'s default). A server whose bound (TETRA_MQL_BLOCKING_BYTES) is 16 KiB
// makes small data spill: answers are checked against mingo (an oracle only) and against a server
// with the default bound (nothing spills there); allowDiskUse: false gets MongoDB's errors; spill
// files are watched appearing and checked gone after the query, after a failure, and after a
// restart that follows a SIGKILL mid-query.
import { aggregate } from 'mingo';
import { watch, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnServer } from '../helpers/server-process.js';
import { http, serverForFile, signup } from '../helpers/server.js';
import { makeSpillDocs, seedOn, spillDir as spillDirOf, spillFiles as spillFilesOf, watchingSpills as watchingSpillsOf } from '../helpers/spill.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';

/** The in-memory bound of the spilling server: the smallest the setting allows. */
const BOUND = 16 * 1024;
const small = serverForFile({ mqlBlockingBytes: BOUND });
const large = serverForFile();
/** A server whose queries may spill only 64 KiB. */
const SPILL_BOUND = 64 * 1024;
const tight = serverForFile({ mqlBlockingBytes: BOUND, mqlSpillBytes: SPILL_BOUND });
const freshDir = dirsRemovedAfterEach();

const spillDir = (): string => spillDirOf(small);
const spillFiles = (): string[] => spillFilesOf(small);
/** Seeds the same documents on both servers: the collection's name. */
const seedBoth = (docs: Record<string, unknown>[]): Promise<string> => seedOn([small, large], docs, 'spill');
const watchingSpills = <T>(fn: () => Promise<T>) => watchingSpillsOf(small, fn);




const DOCS = makeSpillDocs(2000, 77);
let shared: Promise<string> | undefined;
/** The collection of DOCS on both servers (about 25x the small server's bound). */
const sharedCollection = (): Promise<string> => (shared ??= seedBoth(DOCS));

describe('$sort past the memory bound', () => {
  it('spills and answers as mingo and as an unbounded server do, ties in input order; its files are gone after', async () => {
    const c = await sharedCollection();
    for (const sort of [{ k: 1 }, { v: -1, k: 1 }, { g: 1, n: -1 }, { small: -1 }, { n: 1, _id: -1 }]) {
      const pipeline = [{ $sort: sort }];
      const { result, created } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline }));
      expect(result.status, result.text).toBe(200);
      expect(created.length, 'a spill file was made').toBeGreaterThan(0);
      expect(spillFiles()).toEqual([]);
      const expected = await large.aggregate(c, pipeline);
      expect(result.body.documents).toEqual(expected);
      expect(result.body.documents).toEqual(aggregate(DOCS, pipeline));
    }
  });

  it('a $limit after it: top-k kept in memory when the k fit, spilled when they do not', async () => {
    const c = await sharedCollection();
    for (const limit of [5, 300, 1500]) {
      const pipeline = [{ $sort: { k: -1, g: 1 } }, { $limit: limit }, { $project: { text: 0 } }];
      const { result, created } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline }));
      expect(result.status, result.text).toBe(200);
      // 5 documents fit in 16 KiB; 300 or 1500 (about 200 bytes each) do not.
      expect(created.length > 0, `limit ${limit}`).toBe(limit > 5);
      expect(result.body.documents).toEqual(aggregate(DOCS, pipeline));
      expect(await large.aggregate(c, pipeline)).toEqual(result.body.documents);
    }
  });

  it('allowDiskUse: false fails with MongoDB\'s message; true and absent spill; a non-boolean is refused with MongoDB\'s message', async () => {
    const c = await sharedCollection();
    const pipeline = [{ $sort: { k: 1 } }];
    await small.refuses('aggregate', { collection: c, pipeline, allowDiskUse: false }, 400, 'QUERY_ERROR', `Sort exceeded memory limit of ${BOUND} bytes, but did not opt in to external sorting. Aborting operation. Pass allowDiskUse:true to opt in.`);
    const res = await small.mql('aggregate', { collection: c, pipeline, allowDiskUse: true });
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents).toHaveLength(DOCS.length);
    await small.refuses('aggregate', { collection: c, pipeline, allowDiskUse: 'yes' }, 400, 'QUERY_ERROR', "BSON field 'aggregate.allowDiskUse' is the wrong type 'string', expected type 'bool'");
    await small.refuses('aggregate', { collection: c, pipeline, allowDiskUse: 1 }, 400, 'QUERY_ERROR', "BSON field 'aggregate.allowDiskUse' is the wrong type 'int', expected type 'bool'");
    // Within the bound, allowDiskUse: false changes nothing.
    const few = await small.mql('aggregate', { collection: c, pipeline: [{ $match: { _id: { $lt: 10 } } }, { $sort: { k: 1 } }], allowDiskUse: false });
    expect(few.status, few.text).toBe(200);
    expect(spillFiles()).toEqual([]);
  });
});

describe('find with a sort no index gives, past the memory bound', () => {
  it('spills (a deep skip) and answers as mingo and as an unbounded server do', async () => {
    const c = await sharedCollection();
    for (const [sort, skip, limit] of [[{ k: 1 }, 1500, 100], [{ v: 1, n: -1 }, 300, 1000], [{ g: -1 }, 0, 1200], [{ small: 1 }, 1990, 50]] as const) {
      const { result, created } = await watchingSpills(() => small.mql('find', { collection: c, sort, skip, limit }));
      expect(result.status, result.text).toBe(200);
      expect(created.length, JSON.stringify(sort)).toBeGreaterThan(0);
      expect(spillFiles()).toEqual([]);
      const expected = (await large.mql('find', { collection: c, sort, skip, limit })).body.documents;
      expect(result.body.documents).toEqual(expected);
      expect(result.body.documents).toEqual(aggregate(DOCS, [{ $sort: sort }, { $skip: skip }, { $limit: limit }]));
    }
  });

  it('a projection and a filter apply to the spilled documents; a small top-k does not spill', async () => {
    const c = await sharedCollection();
    const query = { filter: { k: { $gte: 10 } }, sort: { n: -1, _id: 1 }, skip: 400, limit: 300, projection: { k: 1, n: 1 } };
    const { result, created } = await watchingSpills(() => small.mql('find', { collection: c, ...query }));
    expect(result.status, result.text).toBe(200);
    expect(created.length).toBeGreaterThan(0);
    expect(result.body.documents).toEqual(aggregate(DOCS, [{ $match: query.filter }, { $sort: query.sort }, { $skip: query.skip }, { $limit: query.limit }, { $project: query.projection }]));
    const top = await watchingSpills(() => small.mql('find', { collection: c, sort: { n: -1 }, limit: 10 }));
    expect(top.result.status).toBe(200);
    expect(top.created).toEqual([]);
  });

  it('text scores travel through the spill: a score, and no score for a match another $or clause found', async () => {
    // The same collection and indexes on both servers: a text index on `text` and an index on `small`.
    const docs = makeSpillDocs(1500, 91).map((d, i) => ({ ...d, text: i % 3 === 0 ? `apple ${'pie '.repeat(i % 5)}${d['text']}` : String(d['text']) }));
    const c = await seedBoth(docs);
    for (const server of [small, large]) {
      await server.createIndex(c, { text: 'text' });
      await server.createIndex(c, { small: 1 });
    }
    const query = { filter: { $or: [{ $text: { $search: 'apple' } }, { small: 's1' }] }, sort: { n: -1, _id: 1 }, skip: 100, limit: 600, projection: { score: { $meta: 'textScore' }, small: 1, n: 1 } };
    const { result, created } = await watchingSpills(() => small.mql('find', { collection: c, ...query }));
    expect(result.status, result.text).toBe(200);
    expect(created.length).toBeGreaterThan(0);
    const expected = (await large.mql('find', { collection: c, ...query })).body.documents;
    expect(result.body.documents).toEqual(expected);
    // Both kinds are among the answers: scored matches of the search, and others without a score.
    expect(result.body.documents.some((d: Record<string, unknown>) => typeof d['score'] === 'number')).toBe(true);
    expect(result.body.documents.some((d: Record<string, unknown>) => !('score' in d))).toBe(true);
  });

  it('allowDiskUse: false fails with MongoDB\'s message; a non-boolean is refused with MongoDB\'s message, also for a find by _id', async () => {
    const c = await sharedCollection();
    await small.refuses('find', { collection: c, sort: { k: 1 }, skip: 1500, limit: 100, allowDiskUse: false }, 400, 'QUERY_ERROR', `Sort exceeded memory limit of ${BOUND} bytes, but did not opt in to external sorting.`);
    await small.refuses('find', { collection: c, sort: { k: 1 }, allowDiskUse: 'no' }, 400, 'QUERY_ERROR', "BSON field 'FindCommandRequest.allowDiskUse' is the wrong type 'string', expected type 'bool'");
    await small.refuses('find', { collection: c, filter: { _id: 3 }, allowDiskUse: null }, 400, 'QUERY_ERROR', "BSON field 'FindCommandRequest.allowDiskUse' is the wrong type 'null', expected type 'bool'");
    const ok = await small.mql('find', { collection: c, filter: { _id: 3 }, allowDiskUse: false });
    expect(ok.body.documents).toEqual([DOCS[3]]);
  });
});

/** Documents sorted by `_id` (groups come out in no given order), the arrays of `sets` fields sorted too. */
function normalized(docs: any[], sets: readonly string[] = []): any[] {
  const key = (v: unknown): string => JSON.stringify(v);
  return docs
    .map((d) => {
      const out = { ...d };
      for (const f of sets) if (Array.isArray(out[f])) out[f] = [...out[f]].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
      return out;
    })
    .sort((a, b) => (key(a._id) < key(b._id) ? -1 : key(a._id) > key(b._id) ? 1 : 0));
}

/** Numbers equal to 9 significant digits (mingo's $stdDev sums in another order). */
function roughly(v: unknown): unknown {
  if (typeof v === 'number' && !Number.isInteger(v)) return Number(v.toPrecision(9));
  if (Array.isArray(v)) return v.map(roughly);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, roughly(x)]));
  return v;
}

describe('$group past the memory bound', () => {
  const EVERY_ACCUMULATOR = {
    sum: { $sum: '$n' },
    count: { $count: {} },
    avg: { $avg: '$n' },
    min: { $min: '$v' },
    max: { $max: '$v' },
    first: { $first: '$v' },
    last: { $last: '$n' },
    push: { $push: '$k' },
    set: { $addToSet: '$small' },
    merged: { $mergeObjects: '$o' },
    pop: { $stdDevPop: '$n' },
    samp: { $stdDevSamp: '$n' },
    firstN: { $firstN: { input: '$k', n: 3 } },
    lastN: { $lastN: { input: '$v', n: 2 } },
    minN: { $minN: { input: '$n', n: 2 } },
    maxN: { $maxN: { input: '$k', n: 3 } },
    top: { $top: { output: '$_id', sortBy: { k: 1 } } },
    bottom: { $bottom: { output: ['$_id', '$k'], sortBy: { k: 1 } } },
    topN: { $topN: { output: '$_id', sortBy: { v: -1 }, n: 3 } },
    bottomN: { $bottomN: { output: '$n', sortBy: { small: 1 }, n: 2 } },
    median: { $median: { input: '$n', method: 'approximate' } },
    p: { $percentile: { input: '$k', p: [0.1, 0.9], method: 'approximate' } },
  };

  it('counts what a group costs, not only its key and values: 150 groups of one $sum pass a 16 KiB bound and spill', async () => {
    // ~60 bytes a group by the key and value alone (150 fit in 16 KiB); ~380 with what each group
    // holds besides (its map entry, record and state), which is what the process spends.
    const docs = Array.from({ length: 150 }, (_, i) => ({ _id: i, n: i % 7 }));
    const c = await small.seed(docs, 'tiny');
    const pipeline = [{ $group: { _id: '$_id', total: { $sum: '$n' } } }, { $sort: { _id: 1 } }];
    const { result, created } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline }));
    expect(result.status, result.text).toBe(200);
    expect(created.length).toBeGreaterThan(0);
    expect(result.body.documents).toEqual(aggregate(docs, pipeline));
  });

  it('every accumulator family: the same groups as an unbounded server and as mingo', async () => {
    const c = await sharedCollection();
    for (const id of ['$g', { g: '$g', s: '$small' }, { $mod: ['$_id', 500] }]) {
      const pipeline = [{ $group: { _id: id, ...EVERY_ACCUMULATOR } }];
      const { result, created } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline }));
      expect(result.status, result.text).toBe(200);
      expect(created.length, JSON.stringify(id)).toBeGreaterThan(0);
      expect(spillFiles()).toEqual([]);
      const ours = normalized(result.body.documents);
      // The same values in the same order: runs are merged in input order.
      expect(ours).toEqual(normalized(await large.aggregate(c, pipeline)));
      // mingo differs from MongoDB on some: $top and $bottom wrapped in an array, $bottomN's ties,
      // $stdDev* of fewer than two numbers (NaN, -0 for null), percentiles over missing values.
      // Those are checked against the unbounded server above (and against MongoDB's rules in
      // mql-accumulators-n, mql-percentile), the rest against mingo too.
      const { top: _top, bottom: _bottom, bottomN: _bottomN, pop: _pop, samp: _samp, median: _median, p: _p, ...oracleFields } = EVERY_ACCUMULATOR;
      const oracle = aggregate(DOCS, [{ $group: { _id: id, ...oracleFields } }]) as any[];
      const without = ours.map(({ top: _t, bottom: _b, bottomN: _bn, pop: _sp, samp: _ss, median: _m, p: _q, ...rest }) => rest);
      expect(roughly(normalized(without, ['set']))).toEqual(roughly(normalized(oracle, ['set'])));
    }
  });

  it('$sortByCount and $bucket (built on $group) spill and answer alike', async () => {
    const c = await sharedCollection();
    for (const pipeline of [
      [{ $sortByCount: '$n' }, { $sort: { count: -1, _id: 1 } }],
      // (n + 0.5: no value on a boundary, where mingo's $bucket differs from MongoDB's)
      [{ $bucket: { groupBy: { $add: ['$n', 0.5] }, boundaries: [...Array.from({ length: 40 }, (_, i) => -1000 + 50 * i), 1001], default: 'other', output: { ids: { $push: '$_id' }, gs: { $push: '$g' }, total: { $sum: '$k' } } } }],
    ]) {
      const { result, created } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline }));
      expect(result.status, result.text).toBe(200);
      expect(created.length, JSON.stringify(pipeline)).toBeGreaterThan(0);
      expect(normalized(result.body.documents)).toEqual(normalized(await large.aggregate(c, pipeline)));
      expect(normalized(result.body.documents)).toEqual(normalized(aggregate(DOCS, pipeline) as any[]));
    }
  });

  it('allowDiskUse: false fails with MongoDB\'s message; one group past the bound by itself fails as without spilling; no file is left', async () => {
    const c = await sharedCollection();
    await small.refuses('aggregate', { collection: c, pipeline: [{ $group: { _id: '$n', ids: { $push: '$_id' } } }], allowDiskUse: false }, 400, 'QUERY_ERROR', "Exceeded memory limit for $group, but didn't allow external sort. Pass allowDiskUse:true to opt in.");
    const { result } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline: [{ $group: { _id: { $mod: ['$k', 2] }, texts: { $push: '$text' } } }] }));
    expect(result.status, result.text).toBe(400);
    expect(result.body.error.message).toMatch(/^\$group holds more than 16384 bytes/);
    expect(spillFiles()).toEqual([]);
    await small.refuses('aggregate', { collection: c, pipeline: [{ $group: { _id: null, texts: { $push: '$text' } } }] }, 400, 'QUERY_ERROR', '$group holds more than 16384 bytes');
  });
});

describe('$setWindowFields past the memory bound', () => {
  it('sorts through spill files, then works a partition at a time: as mingo and an unbounded server', async () => {
    const c = await sharedCollection();
    const pipelines = [
      // 400 partitions of about 5 documents.
      [{ $setWindowFields: { partitionBy: '$g', sortBy: { k: 1 }, output: { rank: { $rank: {} }, running: { $sum: '$n', window: { documents: ['unbounded', 'current'] } }, around: { $push: '$_id', window: { documents: [-1, 1] } } } } }],
      // 60 partitions of about 33 documents (each within the bound), a range window.
      [{ $match: { n: { $type: 'number' } } }, { $project: { k: 1, n: 1 } }, { $setWindowFields: { partitionBy: { $mod: ['$_id', 60] }, sortBy: { n: 1 }, output: { near: { $count: {}, window: { range: [-20, 20] } }, first: { $first: '$_id', window: { documents: ['unbounded', 'unbounded'] } } } } }],
    ];
    for (const pipeline of pipelines) {
      const { result, created } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline }));
      expect(result.status, result.text).toBe(200);
      expect(created.length, JSON.stringify(pipeline)).toBeGreaterThan(0);
      expect(spillFiles()).toEqual([]);
      expect(result.body.documents).toEqual(await large.aggregate(c, pipeline));
      // mingo orders partitions its own way (MongoDB gives them no order): compared by _id.
      expect(normalized(result.body.documents)).toEqual(normalized(aggregate(DOCS, pipeline) as any[]));
    }
  });

  it('a partition past the bound spills too (mql-spill-windows.test.ts covers every window kind); allowDiskUse: false gives MongoDB\'s sort message', async () => {
    const c = await sharedCollection();
    // 7 partitions of about 285 documents (57 KB each): a whole-partition window reads each to its end.
    const pipeline = [{ $setWindowFields: { partitionBy: '$small', sortBy: { k: 1 }, output: { r: { $rank: {} }, total: { $sum: '$n' } } } }];
    const { result, created } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline }));
    expect(result.status, result.text.slice(0, 500)).toBe(200);
    expect(created.length, 'the sort\'s file and the partitions\'').toBeGreaterThan(1);
    expect(spillFiles()).toEqual([]);
    expect(result.body.documents).toEqual(await large.aggregate(c, pipeline));
    expect(normalized(result.body.documents)).toEqual(normalized(aggregate(DOCS, pipeline) as any[]));
    await small.refuses('aggregate', { collection: c, pipeline: [{ $setWindowFields: { partitionBy: '$g', output: { n: { $count: {} } } } }], allowDiskUse: false }, 400, 'QUERY_ERROR', `Sort exceeded memory limit of ${BOUND} bytes, but did not opt in to external sorting.`);
  });
});

describe('spill files over a query\'s life', () => {
  it('a query past its spill bound fails cleanly, its files removed', async () => {
    const c = await tight.seed(DOCS.slice(0, 500), 'tight');
    for (let i = 500; i < DOCS.length; i += 500) expect((await tight.mql('insertMany', { collection: c, documents: DOCS.slice(i, i + 500) })).status).toBe(201);
    const dir = join(tight.server.dataDir, 'spill');
    for (const pipeline of [[{ $sort: { k: 1 } }], [{ $group: { _id: '$_id', t: { $first: '$text' } } }]]) {
      await tight.refuses('aggregate', { collection: c, pipeline }, 400, 'QUERY_ERROR', `the query spilled more than ${SPILL_BOUND} bytes to disk`);
      expect(readdirSync(dir)).toEqual([]);
    }
    await tight.refuses('find', { collection: c, sort: { k: 1 }, skip: 1900 }, 400, 'QUERY_ERROR', `the query spilled more than ${SPILL_BOUND} bytes to disk`);
    expect(readdirSync(dir)).toEqual([]);
    // Within it, the same server answers.
    const ok = await tight.mql('aggregate', { collection: c, pipeline: [{ $match: { _id: { $lt: 200 } } }, { $sort: { k: 1 } }] });
    expect(ok.status, ok.text).toBe(200);
  });

  it('a pipeline that fails after its stages spilled leaves no file', async () => {
    const c = await sharedCollection();
    const pipeline = [{ $sort: { k: 1 } }, { $group: { _id: '$g', ks: { $push: '$k' } } }, { $project: { bad: { $toInt: '$_id' } } }];
    const { result, created } = await watchingSpills(() => small.mql('aggregate', { collection: c, pipeline }));
    expect(result.status, result.text).toBe(400);
    expect(result.body.error.code).toBe('QUERY_ERROR');
    expect(created.length).toBeGreaterThan(0);
    expect(spillFiles()).toEqual([]);
  });

  it('another tenant\'s KV and find requests are served while a spilling aggregate runs', async () => {
    const c = await sharedCollection();
    // About 8000 documents sorted through 16 KiB: hundreds of runs.
    const pipeline = [{ $unionWith: c }, { $unionWith: c }, { $unionWith: c }, { $sort: { text: -1, k: 1 } }, { $group: { _id: '$k', n: { $sum: 1 }, ids: { $addToSet: '$_id' } } }];
    const other = await signup(small.server.url, 'other');
    mkdirSync(spillDir(), { recursive: true });
    let spilling!: () => void;
    const started = new Promise<void>((resolve) => (spilling = resolve));
    const watcher = watch(spillDir(), (_e, name) => name?.endsWith('.spill') && spilling());
    let finished = false;
    const running = small.mql('aggregate', { collection: c, pipeline }).then((r) => {
      finished = true;
      return r;
    });
    try {
      await started;
      const put = await http(small.server.url, 'PUT', '/api/kv/while-spilling', { apiKey: other.apiKey, json: { value: 'served' } });
      expect(put.status, put.text).toBe(200);
      const got = await http(small.server.url, 'GET', '/api/kv/while-spilling', { apiKey: other.apiKey });
      expect(got.body.value).toBe('served');
      const ins = await http(small.server.url, 'POST', '/api/mql/insertOne', { apiKey: other.apiKey, json: { collection: 'mine', document: { _id: 1, x: 1 } } });
      expect(ins.status, ins.text).toBe(201);
      const found = await http(small.server.url, 'POST', '/api/mql/find', { apiKey: other.apiKey, json: { collection: 'mine', filter: {} } });
      expect(found.body.documents).toEqual([{ _id: 1, x: 1 }]);
      expect(finished, 'the other tenant was answered before the aggregate ended').toBe(false);
    } finally {
      watcher.close();
    }
    const res = await running;
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents.reduce((n: number, d: any) => n + d.n, 0)).toBe(4 * DOCS.length);
    expect(spillFiles()).toEqual([]);
  });

  it('after a SIGKILL mid-query, the restarted server removes the leftover spill files (and nothing else)', async () => {
    const dataDir = freshDir('spill-kill');
    const args = ['--mql-blocking-bytes', String(BOUND)];
    const first = await spawnServer(dataDir, args);
    const dir = join(dataDir, 'spill');
    try {
      const { apiKey } = await signup(first.url);
      for (let i = 0; i < DOCS.length; i += 500) {
        const res = await http(first.url, 'POST', '/api/mql/insertMany', { apiKey, json: { collection: 'big', documents: DOCS.slice(i, i + 500) } });
        expect(res.status, res.text).toBe(201);
      }
      writeFileSync(join(dir, 'notes.txt'), 'not a spill file');
      const watcher = watch(dir, (_e, name) => {
        if (name?.endsWith('.spill')) first.child.kill('SIGKILL');
      });
      const pipeline = [{ $unionWith: 'big' }, { $unionWith: 'big' }, { $sort: { text: 1 } }];
      await http(first.url, 'POST', '/api/mql/aggregate', { apiKey, json: { collection: 'big', pipeline } }).catch(() => undefined);
      watcher.close();
      expect((await first.exited).signal).toBe('SIGKILL');
    } finally {
      first.child.kill('SIGKILL');
    }
    const left = readdirSync(dir).filter((n) => n.endsWith('.spill'));
    expect(left.length, 'the killed query left its spill file').toBeGreaterThan(0);
    // A spill file of a process that is running (this test's: a spill directory shared by two servers) stays.
    const live = `query-${process.pid}-1-1.spill`;
    writeFileSync(join(dir, live), '');
    const second = await spawnServer(dataDir, args);
    try {
      expect(readdirSync(dir).sort()).toEqual(['notes.txt', live]);
    } finally {
      second.child.kill('SIGKILL');
      await second.exited;
    }
  });
});
