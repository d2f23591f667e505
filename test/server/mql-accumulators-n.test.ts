// The N accumulators ($firstN, $lastN, $minN, $maxN, $top, $bottom, $topN, $bottomN) in $group and
// as array expressions, over HTTP on a real server: the MongoDB manual's examples with its outputs,
// cases from MongoDB's jstests (jstests/aggregation/accumulators/first_n_last_n.js, min_n_max_n.js,
// top_bottom_top_n_bottom_n.js), every message of accumulator_multi.cpp's parsers, and random
// $group pipelines compared with mingo (a dev dependency, an oracle only).
import { aggregate } from 'mingo';
import { beforeAll, describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';
import { randomInt, seededRandom } from '../helpers/random.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const seed = (documents: unknown[]): Promise<string> => file.seed(documents, 'n');

const run = (collection: string, pipeline: unknown[]): Promise<any[]> => file.aggregate(collection, pipeline);

async function refused(collection: string, pipeline: unknown[], message: RegExp): Promise<void> {
  const res = await mql('aggregate', { collection, pipeline });
  expect(res.status, res.text).toBe(400);
  expect(res.body.error.code).toBe('QUERY_ERROR');
  expect(res.body.error.message).toMatch(message);
}

// The manual's gamescores collection ($topN, $bottomN, $firstN, $lastN, $minN, $maxN pages).
const GAMESCORES = [
  { _id: 1, playerId: 'PlayerA', gameId: 'G1', score: 31 },
  { _id: 2, playerId: 'PlayerB', gameId: 'G1', score: 33 },
  { _id: 3, playerId: 'PlayerC', gameId: 'G1', score: 99 },
  { _id: 4, playerId: 'PlayerD', gameId: 'G1', score: 1 },
  { _id: 5, playerId: 'PlayerA', gameId: 'G2', score: 10 },
  { _id: 6, playerId: 'PlayerB', gameId: 'G2', score: 14 },
  { _id: 7, playerId: 'PlayerC', gameId: 'G2', score: 66 },
  { _id: 8, playerId: 'PlayerD', gameId: 'G2', score: 80 },
];

describe('$group: the manual', () => {
  let games: string;
  beforeAll(async () => {
    games = await seed(GAMESCORES);
  });
  const g1 = (accumulator: unknown): unknown[] => [{ $match: { gameId: 'G1' } }, { $group: { _id: '$gameId', out: accumulator } }];

  const cases: ReadonlyArray<readonly [string, unknown, unknown]> = [
    ['$topN: the three highest scores', { $topN: { output: ['$playerId', '$score'], sortBy: { score: -1 }, n: 3 } }, [['PlayerC', 99], ['PlayerB', 33], ['PlayerA', 31]]],
    ['$bottomN: the three lowest scores', { $bottomN: { output: ['$playerId', '$score'], sortBy: { score: -1 }, n: 3 } }, [['PlayerB', 33], ['PlayerA', 31], ['PlayerD', 1]]],
    ['$top: the highest score', { $top: { output: ['$playerId', '$score'], sortBy: { score: -1 } } }, ['PlayerC', 99]],
    ['$bottom: the lowest score', { $bottom: { output: ['$playerId', '$score'], sortBy: { score: -1 } } }, ['PlayerD', 1]],
    ['$firstN: the first three documents', { $firstN: { input: ['$playerId', '$score'], n: 3 } }, [['PlayerA', 31], ['PlayerB', 33], ['PlayerC', 99]]],
    ['$lastN: the last three documents', { $lastN: { input: ['$playerId', '$score'], n: 3 } }, [['PlayerB', 33], ['PlayerC', 99], ['PlayerD', 1]]],
    ['$minN: the three smallest [score, player] pairs, ascending', { $minN: { input: ['$score', '$playerId'], n: 3 } }, [[1, 'PlayerD'], [31, 'PlayerA'], [33, 'PlayerB']]],
    ['$maxN: the three largest, descending', { $maxN: { input: ['$score', '$playerId'], n: 3 } }, [[99, 'PlayerC'], [33, 'PlayerB'], [31, 'PlayerA']]],
  ];
  for (const [name, accumulator, expected] of cases) {
    it(name, async () => {
      expect(await run(games, g1(accumulator))).toEqual([{ _id: 'G1', out: expected }]);
    });
  }

  it('n computed from the group key (the _id is the document n is evaluated on)', async () => {
    const n = { $cond: { if: { $eq: ['$gameId', 'G2'] }, then: 1, else: 3 } };
    const docs = await run(games, [
      { $group: { _id: { gameId: '$gameId' }, top: { $topN: { output: '$score', sortBy: { score: -1 }, n } }, first: { $firstN: { input: '$score', n } }, max: { $maxN: { input: '$score', n } } } },
      { $sort: { '_id.gameId': 1 } },
    ]);
    expect(docs).toEqual([
      { _id: { gameId: 'G1' }, top: [99, 33, 31], first: [31, 33, 99], max: [99, 33, 31] },
      { _id: { gameId: 'G2' }, top: [80], first: [10], max: [80] },
    ]);
  });

  it('$topN keeps nulls and makes a missing sort field or output null, sorted first (the manual)', async () => {
    const c = await seed([
      { _id: 1, playerId: 'PlayerA', gameId: 'G1', score: 1 },
      { _id: 2, playerId: 'PlayerB', gameId: 'G1', score: 2 },
      { _id: 3, playerId: 'PlayerC', gameId: 'G1', score: 3 },
      { _id: 4, playerId: 'PlayerD', gameId: 'G1' },
      { _id: 5, playerId: 'PlayerE', gameId: 'G1', score: null },
    ]);
    expect(await run(c, [{ $group: { _id: '$gameId', playerId: { $topN: { output: ['$playerId', '$score'], sortBy: { score: 1 }, n: 3 } } } }])).toEqual([
      { _id: 'G1', playerId: [['PlayerD', null], ['PlayerE', null], ['PlayerA', 1]] },
    ]);
    // A missing output is null for $top/$bottom as for $first (jstests: outputMissing).
    expect(await run(c, [{ $group: { _id: '', bottom: { $bottom: { output: '$b', sortBy: { score: 1 } } }, top: { $top: { output: '$b', sortBy: { score: 1 } } }, topN: { $topN: { output: '$b', sortBy: { score: 1 }, n: 2 } } } }])).toEqual([
      { _id: '', bottom: null, top: null, topN: [null, null] },
    ]);
  });

  it('$topN sorts mixed types in BSON order (the manual: strings after numbers)', async () => {
    const c = await seed([
      { _id: 1, playerId: 'PlayerA', gameId: 'G1', score: 1 },
      { _id: 2, playerId: 'PlayerB', gameId: 'G1', score: '2' },
      { _id: 3, playerId: 'PlayerC', gameId: 'G1', score: '' },
    ]);
    expect(await run(c, [{ $group: { _id: '$gameId', playerId: { $topN: { output: ['$playerId', '$score'], sortBy: { score: -1 }, n: 3 } } } }])).toEqual([
      { _id: 'G1', playerId: [['PlayerB', '2'], ['PlayerC', ''], ['PlayerA', 1]] },
    ]);
  });
});

describe('$group: jstests and the rules around them', () => {
  it('$firstN/$lastN per state (first_n_last_n.js), with fewer documents than n', async () => {
    const docs: unknown[] = [];
    let id = 0;
    for (let i = 0; i < 20; i++) {
      if (i < 2) docs.push({ _id: ++id, state: 'CA', sales: i * 10 });
      if (i < 3) docs.push({ _id: ++id, state: 'AZ', sales: i * 10 });
      docs.push({ _id: ++id, state: 'NY', sales: i * 10 });
    }
    const c = await seed(docs);
    const group = (op: string): unknown[] => [{ $sort: { _id: 1 } }, { $group: { _id: '$state', sales: { [op]: { input: '$sales', n: 3 } } } }, { $sort: { _id: 1 } }];
    expect(await run(c, group('$firstN'))).toEqual([{ _id: 'AZ', sales: [0, 10, 20] }, { _id: 'CA', sales: [0, 10] }, { _id: 'NY', sales: [0, 10, 20] }]);
    expect(await run(c, group('$lastN'))).toEqual([{ _id: 'AZ', sales: [0, 10, 20] }, { _id: 'CA', sales: [0, 10] }, { _id: 'NY', sales: [170, 180, 190] }]);
  });

  it('$minN/$maxN skip null and missing; $firstN/$lastN keep them as null', async () => {
    const c = await seed([{ _id: 1, v: 3 }, { _id: 2, v: null }, { _id: 3 }, { _id: 4, v: 'x' }, { _id: 5, v: 1 }]);
    expect(await run(c, [{ $group: { _id: null, min: { $minN: { input: '$v', n: 3 } }, max: { $maxN: { input: '$v', n: 10 } }, first: { $firstN: { input: '$v', n: 3 } }, last: { $lastN: { input: '$v', n: 3 } } } }])).toEqual([
      { _id: null, min: [1, 3, 'x'], max: ['x', 3, 1], first: [3, null, null], last: [null, 'x', 1] },
    ]);
    // Null, not a missing value in the array (JSON writes both as null; $type tells them apart).
    const types = { $map: { input: '$first', in: { $type: '$$this' } } };
    expect(await run(c, [{ $group: { _id: null, first: { $firstN: { input: '$v', n: 3 } } } }, { $project: { _id: 0, types } }])).toEqual([{ types: ['int', 'null', 'null'] }]);
    expect(await run(c, [{ $group: { _id: null, first: { $lastN: { input: '$v', n: 3 } } } }, { $project: { _id: 0, types } }])).toEqual([{ types: ['null', 'string', 'int'] }]);
  });

  it('sorts on an embedded field, an array field (its smallest element ascending), a nested array, and compound keys', async () => {
    const embedded = await seed([4, 2, 3, 1].map((i) => ({ _id: i, a: { b: i } })));
    expect(await run(embedded, [{ $group: { _id: '', result: { $bottomN: { n: 3, output: '$a.b', sortBy: { 'a.b': 1 } } } } }])).toEqual([{ _id: '', result: [2, 3, 4] }]);
    const arrays = await seed([4, 2, 3, 1].map((i) => ({ _id: i, a: [i, i + 1, i + 2] })));
    expect(await run(arrays, [{ $group: { _id: '', result: { $bottomN: { n: 3, output: '$a', sortBy: { a: 1 } } } } }])).toEqual([{ _id: '', result: [[2, 3, 4], [3, 4, 5], [4, 5, 6]] }]);
    const nested = await seed([4, 2, 3, 1].map((i) => ({ _id: i, a: [[i, i + 1, i + 2]] })));
    expect(await run(nested, [{ $group: { _id: '', result: { $bottomN: { n: 3, output: '$a', sortBy: { a: 1 } } } } }])).toEqual([{ _id: '', result: [[[2, 3, 4]], [[3, 4, 5]], [[4, 5, 6]]] }]);
    const pairs: Array<{ a: number; b: number }> = [];
    for (const a of [1, 2, 3]) for (const b of [1, 2, 3]) pairs.push({ a, b });
    const compound = await seed(pairs.map((p, i) => ({ _id: i, ...p })));
    expect(await run(compound, [{ $group: { _id: '', sorted: { $bottomN: { n: 9, output: { a: '$a', b: '$b' }, sortBy: { a: 1, b: -1 } } } } }])).toEqual([
      { _id: '', sorted: [1, 2, 3].flatMap((a) => [3, 2, 1].map((b) => ({ a, b }))) },
    ]);
  });

  it('a constant output over every document (jstests: testConstantOutputAndSort)', async () => {
    const c = await seed([{ _id: 1, a: 1 }, { _id: 2, a: 2 }, { _id: 3, a: 3 }]);
    expect(await run(c, [{ $group: { _id: null, top: { $topN: { n: 3, output: 'abc', sortBy: { a: 1 } } }, bottom: { $bottomN: { n: 3, output: 'abc', sortBy: { a: 1 } } } } }])).toEqual([
      { _id: null, top: ['abc', 'abc', 'abc'], bottom: ['abc', 'abc', 'abc'] },
    ]);
  });

  // Ties in sortBy, as MongoDB's AccumulatorTopBottomN (a multimap, equal keys in arrival order)
  // resolves them: a full set takes a document only if it sorts strictly before the last kept
  // ($topN) or strictly after the first kept ($bottomN), and the one it drops is, among equal
  // keys, the latest ($topN) or the earliest ($bottomN).
  it('ties in sortBy are resolved as MongoDB resolves them', async () => {
    const c = await seed([{ _id: 'a', k: 1 }, { _id: 'b', k: 1 }, { _id: 'c', k: 2 }, { _id: 'd', k: 1 }]);
    const group = (acc: unknown, match: unknown = {}): unknown[] => [{ $match: match }, { $group: { _id: null, out: acc } }];
    expect(await run(c, group({ $bottomN: { n: 2, output: '$_id', sortBy: { k: 1 } } }, { _id: { $in: ['a', 'b', 'c'] } }))).toEqual([{ _id: null, out: ['b', 'c'] }]);
    // d ties with the smallest kept (b): refused, where "the last 2 in sort order" would be [d, c].
    expect(await run(c, group({ $bottomN: { n: 2, output: '$_id', sortBy: { k: 1 } } }))).toEqual([{ _id: null, out: ['b', 'c'] }]);
    expect(await run(c, group({ $topN: { n: 2, output: '$_id', sortBy: { k: 1 } } }))).toEqual([{ _id: null, out: ['a', 'b'] }]);
    expect(await run(c, group({ $bottom: { output: '$_id', sortBy: { k: -1 } } }))).toEqual([{ _id: null, out: 'a' }]);
  });

  it('works as $bucket and $bucketAuto output accumulators', async () => {
    const c = await seed(GAMESCORES);
    expect(await run(c, [{ $bucket: { groupBy: '$score', boundaries: [0, 50, 100], output: { best: { $top: { output: '$playerId', sortBy: { score: -1 } } }, two: { $minN: { input: '$score', n: 2 } } } } }])).toEqual([
      { _id: 0, best: 'PlayerB', two: [1, 10] },
      { _id: 50, best: 'PlayerC', two: [66, 80] },
    ]);
    expect(await run(c, [{ $bucketAuto: { groupBy: '$score', buckets: 2, output: { last: { $lastN: { input: '$score', n: 1 } } } } }])).toHaveLength(2);
  });

  it('reads the sortBy fields even when nothing else names them (the fields a pipeline decodes)', async () => {
    const c = await seed([{ _id: 1, k: 3, v: 'x' }, { _id: 2, k: 1, v: 'y' }, { _id: 3, k: 2, v: 'z' }]);
    expect(await run(c, [{ $group: { _id: null, out: { $topN: { n: 2, output: '$v', sortBy: { k: 1 } } } } }])).toEqual([{ _id: null, out: ['y', 'z'] }]);
  });
});

describe('$group: refusals with MongoDB messages', () => {
  let c: string;
  beforeAll(async () => {
    c = await seed([{ _id: 1, state: 'CA', sales: 1, associate: 'Jim' }]);
  });
  const spec = (assign: Record<string, unknown>, drop: string[] = []): Record<string, unknown> => {
    const out: Record<string, unknown> = { output: '$associate', n: 2, sortBy: { sales: 1 }, ...assign };
    for (const d of drop) delete out[d];
    return out;
  };
  const cases: ReadonlyArray<readonly [string, unknown, RegExp]> = [
    ['a string n (5787902)', { $firstN: { input: '$sales', n: 'string' } }, /^Value for 'n' must be of integral type, but found "string"$/],
    ['a fractional n (5787903)', { $minN: { input: '$sales', n: 3.2 } }, /^Value for 'n' must be of integral type, but found 3\.2$/],
    ['a negative n (5787908)', { $maxN: { input: '$sales', n: -1 } }, /^'n' must be greater than 0, found -1$/],
    ['n 0 (5787908)', { $lastN: { input: '$sales', n: 0 } }, /^'n' must be greater than 0, found 0$/],
    ['n past a 64-bit integer', { $minN: { input: '$sales', n: 2 ** 64 } }, /^Value for 'n' must be of integral type, but found/],
    ['n of a field that is not in the group key (missing there)', { $minN: { input: '$sales', n: '$sales' } }, /^Value for 'n' must be of integral type, but found MISSING$/],
    ['an unknown argument (5787901)', { $firstN: { input: '$sales', n: 2, randomField: 'randomArg' } }, /^Unknown argument for 'n' operator: randomField$/],
    ['no n (5787906)', { $firstN: { input: '$sales' } }, /^Missing value for 'n'$/],
    ['no input (5787907)', { $minN: { n: 2 } }, /^Missing value for 'input'$/],
    ['a specification that is not an object (5787900)', { $maxN: 5 }, /^specification must be an object; found \$maxN: 5$/],
    ['a string n for $bottomN', { $bottomN: spec({ n: 'string' }) }, /^Value for 'n' must be of integral type, but found "string"$/],
    ['no n for $bottomN (5788003)', { $bottomN: spec({}, ['n']) }, /^Missing value for 'n'$/],
    ['no output (5788004)', { $bottomN: spec({}, ['output']) }, /^Missing value for 'output'$/],
    ['no sortBy (5788005)', { $bottomN: spec({}, ['sortBy']) }, /^Missing value for 'sortBy'$/],
    ['a sortBy direction that is a string (15974)', { $bottomN: spec({ sortBy: { sales: 'coffee' } }) }, /^Illegal key in \$sort specification: sales: "coffee"$/],
    ['a sortBy direction of 2 (15975)', { $bottomN: spec({ sortBy: { sales: 2 } }) }, /^\$sort key ordering must be 1 \(for ascending\) or -1 \(for descending\)$/],
    ['a sortBy that is not an object (10065)', { $bottomN: spec({ sortBy: 'sales' }) }, /^invalid parameter: expected an object \(sortBy\)$/],
    ['an empty sortBy', { $topN: spec({ sortBy: {} }) }, /requires a non-empty 'sortBy'/],
    ['an unknown argument (5788002)', { $bottomN: spec({ edgar: true }) }, /^Unknown argument to \$bottomN 'edgar'$/],
    ['n for $bottom (5788002)', { $bottom: spec({}) }, /^Unknown argument to \$bottom 'n'$/],
    ['a $top specification that is not an object (5788001)', { $top: [1] }, /^specification must be an object; found \$top: \[1\]$/],
  ];
  for (const [name, accumulator, message] of cases) {
    it(`refuses ${name}`, async () => {
      await refused(c, [{ $group: { _id: { st: '$state' }, out: accumulator } }], message);
    });
  }
});

// The manual's games collection for the array forms ($minN, $maxN, $firstN, $lastN array operator
// pages); NumberLong("2090845886852") is a plain number here.
const GAMES = [
  { _id: 1, playerId: 1, score: [1, 2, 3] },
  { _id: 2, playerId: 2, score: [12, 90, 7, 89, 8] },
  { _id: 3, playerId: 3, score: [null] },
  { _id: 4, playerId: 4, score: [] },
  { _id: 5, playerId: 5, score: [1293, null, 3489, 9] },
  { _id: 6, playerId: 6, score: ['12.1', 2, 2090845886852, 23] },
];

describe('array expressions: the manual', () => {
  let games: string;
  beforeAll(async () => {
    games = await seed(GAMES);
  });
  const cases: ReadonlyArray<readonly [string, unknown, unknown[]]> = [
    ['$minN', { $minN: { n: 2, input: '$score' } }, [[1, 2], [7, 8], [], [], [9, 1293], [2, 23]]],
    ['$maxN', { $maxN: { n: 2, input: '$score' } }, [[3, 2], [90, 89], [], [], [3489, 1293], ['12.1', 2090845886852]]],
    ['$firstN', { $firstN: { n: 3, input: '$score' } }, [[1, 2, 3], [12, 90, 7], [null], [], [1293, null, 3489], ['12.1', 2, 2090845886852]]],
    ['$lastN', { $lastN: { n: 3, input: '$score' } }, [[1, 2, 3], [7, 89, 8], [null], [], [null, 3489, 9], [2, 2090845886852, 23]]],
  ];
  for (const [name, expr, expected] of cases) {
    it(`${name} in $addFields`, async () => {
      const docs = await run(games, [{ $addFields: { out: expr } }, { $sort: { _id: 1 } }]);
      expect(docs.map((d) => d.out)).toEqual(expected);
    });
  }

  it('n is any expression of the document', async () => {
    const c = await seed([{ _id: 1, n: 1, a: [5, 6, 7] }, { _id: 2, n: 2, a: [5, 6, 7] }]);
    expect(await run(c, [{ $project: { out: { $lastN: { n: '$n', input: '$a' } } } }, { $sort: { _id: 1 } }])).toEqual([{ _id: 1, out: [7] }, { _id: 2, out: [6, 7] }]);
  });

  it('in a pipeline-style update and a computed find projection', async () => {
    const c = await seed([{ _id: 1, scores: [4, 9, 1, 7] }]);
    const res = await mql('updateOne', { collection: c, filter: { _id: 1 }, update: [{ $set: { best: { $maxN: { n: 2, input: '$scores' } } } }] });
    expect(res.body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    expect(await file.all(c)).toEqual([{ _id: 1, scores: [4, 9, 1, 7], best: [9, 7] }]);
    const found = await mql('find', { collection: c, projection: { _id: 0, low: { $minN: { n: 2, input: '$scores' } }, head: { $firstN: { n: 1, input: '$scores' } } } });
    expect(found.status, found.text).toBe(200);
    expect(found.body.documents).toEqual([{ low: [1, 4], head: [4] }]);
  });

  const refusals: ReadonlyArray<readonly [string, unknown, unknown, RegExp]> = [
    ['an input that is not an array (5788200)', { _id: 1, a: 5 }, { $firstN: { n: 1, input: '$a' } }, /^Input must be an array$/],
    ['a null input', { _id: 1, a: null }, { $minN: { n: 1, input: '$a' } }, /^Input must be an array$/],
    ['a missing input', { _id: 1 }, { $maxN: { n: 1, input: '$a' } }, /^Input must be an array$/],
    ['a bad n', { _id: 1, a: [1] }, { $lastN: { n: 0, input: '$a' } }, /^'n' must be greater than 0, found 0$/],
    ['an unknown argument', { _id: 1, a: [1] }, { $lastN: { n: 1, input: '$a', x: 1 } }, /^Unknown argument for 'n' operator: x$/],
    ['a missing n', { _id: 1, a: [1] }, { $minN: { input: '$a' } }, /^Missing value for 'n'$/],
  ];
  for (const [name, doc, expr, message] of refusals) {
    it(`refuses ${name}`, async () => {
      const c = await seed([doc]);
      await refused(c, [{ $project: { out: expr } }], message);
    });
  }
});

describe('$group against mingo', () => {
  // Values of one type with null and missing mixed in (mingo's comparisons across types are not
  // BSON order); sortBy ends with _id, so no two documents tie (tie rules: the tests above).
  it('gives mingo\'s answers on random groups', async () => {
    const rand = seededRandom(4242);
    const docs = Array.from({ length: 150 }, (_, i) => {
      const d: Record<string, unknown> = { _id: i, g: randomInt(rand, 0, 4) };
      const r = rand();
      if (r < 0.75) d['v'] = randomInt(rand, -20, 20);
      else if (r < 0.88) d['v'] = null;
      d['k'] = randomInt(rand, 0, 6);
      return d;
    });
    const c = await seed(docs);
    for (let round = 0; round < 40; round++) {
      const n = randomInt(rand, 1, 6);
      const dir = rand() < 0.5 ? 1 : -1;
      const group = {
        _id: '$g',
        firstN: { $firstN: { input: '$v', n } },
        lastN: { $lastN: { input: '$v', n } },
        minN: { $minN: { input: '$v', n } },
        maxN: { $maxN: { input: '$v', n } },
        topN: { $topN: { output: ['$_id', '$v'], sortBy: { k: dir, _id: 1 }, n } },
        bottomN: { $bottomN: { output: ['$_id', '$v'], sortBy: { k: dir, _id: -1 }, n } },
        top: { $top: { output: '$_id', sortBy: { v: dir, _id: 1 } } },
        bottom: { $bottom: { output: '$_id', sortBy: { v: dir, _id: 1 } } },
      };
      const pipeline = [{ $sort: { _id: 1 } }, { $group: group }, { $sort: { _id: 1 } }];
      const ours = await run(c, pipeline);
      // mingo's $top/$bottom give a one-element array (MongoDB: the value), and its arrays hold
      // undefined for a missing value (MongoDB: null); docs/mql.md lists both.
      const theirs = (aggregate(structuredClone(docs), structuredClone(pipeline) as never) as Array<Record<string, unknown>>).map((d) => ({
        ...(JSON.parse(JSON.stringify(d)) as Record<string, unknown>),
        top: (d['top'] as unknown[])[0],
        bottom: (d['bottom'] as unknown[])[0],
      }));
      expect(ours, JSON.stringify(pipeline)).toEqual(theirs);
    }
  });
});
