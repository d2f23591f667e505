// The $redact stage over HTTP on a real server: the manual's examples, MongoDB's jstests
// (jstests/aggregation/sources/redact/redact.js, root_redact.js), its error for an answer other
// than $$KEEP/$$PRUNE/$$DESCEND (document_source_redact.cpp, 17053), the three variables being
// the stage's own, and a randomized comparison with mingo (an oracle only).
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { randomInt, seededRandom } from '../helpers/random.js';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const seed = (documents: unknown[]): Promise<string> => file.seed(documents, 'r');

/** The documents `pipeline` outputs over `docs` stored in a new collection, in `_id` order. */
async function run(docs: unknown[], pipeline: unknown[]): Promise<any[]> {
  return file.aggregate(await seed(docs), [...pipeline, { $sort: { _id: 1 } }]);
}

describe('the manual', () => {
  it('evaluates access at every document level ($setIntersection over tags)', async () => {
    const forecast = {
      _id: 1,
      title: '123 Department Report',
      tags: ['G', 'STLW'],
      year: 2014,
      subsections: [
        { subtitle: 'Section 1: Overview', tags: ['SI', 'G'], content: 'Section 1: This is the content of section 1.' },
        { subtitle: 'Section 2: Analysis', tags: ['STLW'], content: 'Section 2: This is the content of section 2.' },
        { subtitle: 'Section 3: Budgeting', tags: ['TK'], content: { text: 'Section 3: This is the content of section 3.', tags: ['HCS'] } },
      ],
    };
    const userAccess = ['STLW', 'G'];
    const pipeline = [
      { $match: { year: 2014 } },
      { $redact: { $cond: { if: { $gt: [{ $size: { $setIntersection: ['$tags', userAccess] } }, 0] }, then: '$$DESCEND', else: '$$PRUNE' } } },
    ];
    expect(await run([forecast], pipeline)).toEqual([
      {
        _id: 1,
        title: '123 Department Report',
        tags: ['G', 'STLW'],
        year: 2014,
        subsections: [
          { subtitle: 'Section 1: Overview', tags: ['SI', 'G'], content: 'Section 1: This is the content of section 1.' },
          { subtitle: 'Section 2: Analysis', tags: ['STLW'], content: 'Section 2: This is the content of section 2.' },
        ],
      },
    ]);
  });

  it('excludes every field at a level with $$PRUNE (the accounts example)', async () => {
    const account = {
      _id: 1,
      level: 1,
      acct_id: 'xyz123',
      cc: {
        level: 5,
        type: 'yy',
        num: 0,
        exp_date: { $date: '2015-11-01T00:00:00.000Z' },
        billing_addr: { level: 5, addr1: '123 ABC Street', city: 'Some City' },
        shipping_addr: [
          { level: 3, addr1: '987 XYZ Ave', city: 'Some City' },
          { level: 3, addr1: 'PO Box 0123', city: 'Some City' },
        ],
      },
      status: 'A',
    };
    const pipeline = [{ $match: { status: 'A' } }, { $redact: { $cond: { if: { $eq: ['$level', 5] }, then: '$$PRUNE', else: '$$DESCEND' } } }];
    expect(await run([account], pipeline)).toEqual([{ _id: 1, level: 1, acct_id: 'xyz123', status: 'A' }]);
  });
});

describe("MongoDB's jstests (redact.js)", () => {
  // Levels 1..5 decide which parts of document 1 (and whether document 2) a reader sees.
  const levels = [
    {
      _id: 1,
      level: 1,
      b: {
        level: 3,
        c: 5,
        d: [{ level: 1, e: 4 }, { f: 6 }, { level: 5, g: 9 }, 'NOT AN OBJECT!!11!', [2, 3, 4, { level: 1, r: 11 }, { level: 5, s: 99 }]],
      },
      h: { level: 2, i: { level: 4, j: { level: 1, k: 8 } } },
      l: { m: { level: 3, n: 12 } },
      o: [{ level: 5, p: 19 }],
      q: 14,
    },
    { _id: 2, level: 4 },
  ];
  const seen = (n: number) => [{ $redact: { $cond: [{ $lte: ['$level', n] }, '$$DESCEND', '$$PRUNE'] } }];
  const bAt3 = { level: 3, c: 5, d: [{ level: 1, e: 4 }, { f: 6 }, 'NOT AN OBJECT!!11!', [2, 3, 4, { level: 1, r: 11 }]] };
  const cases: ReadonlyArray<readonly [number, unknown[]]> = [
    [1, [{ _id: 1, level: 1, l: {}, o: [], q: 14 }]],
    [2, [{ _id: 1, level: 1, h: { level: 2 }, l: {}, o: [], q: 14 }]],
    [3, [{ _id: 1, level: 1, b: bAt3, h: { level: 2 }, l: { m: { level: 3, n: 12 } }, o: [], q: 14 }]],
    [4, [{ _id: 1, level: 1, b: bAt3, h: { level: 2, i: { level: 4, j: { level: 1, k: 8 } } }, l: { m: { level: 3, n: 12 } }, o: [], q: 14 }, { _id: 2, level: 4 }]],
    [5, levels],
  ];
  for (const [n, expected] of cases) {
    it(`a reader of level ${n} sees the parts at or below it, and only through parents it sees`, async () => {
      expect(await run(levels, seen(n))).toEqual(expected);
    });
  }

  it('a bare variable: $$PRUNE drops every document, $$KEEP and $$DESCEND keep them whole', async () => {
    const c = await seed(levels);
    expect(await file.aggregate(c, [{ $redact: '$$PRUNE' }])).toEqual([]);
    expect(await file.aggregate(c, [{ $redact: '$$KEEP' }, { $sort: { _id: 1 } }])).toEqual(levels);
    expect(await file.aggregate(c, [{ $redact: '$$DESCEND' }, { $sort: { _id: 1 } }])).toEqual(levels);
  });

  it('$$KEEP keeps a level with everything below it, unexamined', async () => {
    const doc = { _id: 1, level: 2, b: { level: 3, c: 2 }, d: { level: 1, e: 8 }, f: 9 };
    const keepAt = (n: number) => [{ $redact: { $cond: [{ $lte: ['$level', n] }, '$$KEEP', '$$PRUNE'] } }];
    const c = await seed([doc]);
    expect(await file.aggregate(c, keepAt(1))).toEqual([]);
    expect(await file.aggregate(c, keepAt(2))).toEqual([doc]);
    expect(await file.aggregate(c, keepAt(3))).toEqual([doc]);
  });

  it('$$ROOT is the whole document at every level, $$CURRENT the level (root_redact.js)', async () => {
    const bigStr = 'X'.repeat(1024);
    const doc = { _id: 0, d: true, sub: { d: false, str: bigStr }, str: bigStr };
    const pipeline = [{ $redact: { $cond: { if: '$d', then: '$$DESCEND', else: { $cond: { if: { $objectToArray: '$$ROOT' }, then: '$$KEEP', else: '$$PRUNE' } } } } }];
    expect(await run([doc], pipeline)).toEqual([doc]);
    // At `sub`, "$$ROOT.d" is the document's (true) while "$d" is sub's own (false).
    const both = [{ $redact: { $cond: [{ $and: ['$$ROOT.d', { $not: ['$$CURRENT.d'] }, { $eq: ['$$CURRENT', '$sub'] }] }, '$$PRUNE', '$$DESCEND'] } }];
    expect(await run([{ _id: 1, d: true, sub: { d: false } }, { _id: 2, d: false, sub: { d: false } }], both)).toEqual([
      { _id: 1, d: true, sub: { d: false } },
      { _id: 2, d: false, sub: { d: false } },
    ]);
    const root = [{ $redact: { $cond: [{ $and: ['$$ROOT.d', { $eq: ['$d', false] }] }, '$$PRUNE', '$$DESCEND'] } }];
    expect(await run([{ _id: 1, d: true, sub: { d: false }, keep: { d: true } }, { _id: 2, d: false, sub: { d: false } }], root)).toEqual([
      { _id: 1, d: true, keep: { d: true } },
      { _id: 2, d: false, sub: { d: false } },
    ]);
  });
});

describe('in pipelines', () => {
  it("in a $lookup's pipeline, with its let variables", async () => {
    const readers = await seed([{ _id: 'r1', clearance: 2 }, { _id: 'r2', clearance: 5 }]);
    const files = await seed([{ _id: 'f', level: 1, summary: { level: 1, text: 's' }, secret: { level: 4, text: 't' } }]);
    const pipeline = [
      { $lookup: { from: files, let: { clearance: '$clearance' }, pipeline: [{ $redact: { $cond: [{ $lte: ['$level', '$$clearance'] }, '$$DESCEND', '$$PRUNE'] } }], as: 'files' } },
      { $sort: { _id: 1 } },
    ];
    expect(await file.aggregate(readers, pipeline)).toEqual([
      { _id: 'r1', clearance: 2, files: [{ _id: 'f', level: 1, summary: { level: 1, text: 's' } }] },
      { _id: 'r2', clearance: 5, files: [{ _id: 'f', level: 1, summary: { level: 1, text: 's' }, secret: { level: 4, text: 't' } }] },
    ]);
  });

  it('keeps every scalar of an array, null included, and decides documents in nested arrays', async () => {
    const doc = { _id: 1, level: 0, a: [null, 1, { level: 9 }, [null, { level: 0, x: [{ level: 2 }] }, { level: 3 }]] };
    const pipeline = [{ $redact: { $cond: [{ $lte: ['$level', 1] }, '$$DESCEND', '$$PRUNE'] } }];
    expect(await run([doc], pipeline)).toEqual([{ _id: 1, level: 0, a: [null, 1, [null, { level: 0, x: [] }]] }]);
  });

  it('answers with the strings the variables hold (MongoDB compares the values)', async () => {
    expect(await run([{ _id: 1, a: { b: 1 } }], [{ $redact: { $literal: 'keep' } }])).toEqual([{ _id: 1, a: { b: 1 } }]);
    expect(await run([{ _id: 1 }], [{ $redact: { $concat: ['pr', 'une'] } }])).toEqual([]);
  });
});

describe('refusals', () => {
  const cases: ReadonlyArray<readonly [string, unknown[], RegExp]> = [
    ['an answer that is another string', [{ $redact: 'x' }], /^\$redact's expression should not return anything aside from the variables \$\$KEEP, \$\$DESCEND, and \$\$PRUNE, but returned "x"$/],
    ['an answer that is a number', [{ $redact: { $cond: [true, 1, 2] } }], /but returned 1$/],
    ['an answer that is missing', [{ $redact: '$nothing' }], /but returned MISSING$/],
    ['a wrong answer at a lower level only', [{ $redact: { $cond: [{ $eq: ['$_id', 1] }, '$$DESCEND', 'oops'] } }], /but returned "oops"$/],
    ['$$KEEP outside $redact (the variables are the stage\'s own)', [{ $project: { k: '$$KEEP' } }], /^Use of undefined variable: KEEP$/],
    ['$$DESCEND in a stage after $redact', [{ $redact: '$$KEEP' }, { $set: { d: '$$DESCEND' } }], /^Use of undefined variable: DESCEND$/],
    ['an unknown operator in its expression', [{ $redact: { $nope: 1 } }], /Unrecognized expression '\$nope'/],
  ];
  for (const [name, pipeline, message] of cases) {
    it(`refuses ${name}: 400 QUERY_ERROR`, async () => {
      const c = await seed([{ _id: 1, a: { b: 1 } }]);
      const res = await mql('aggregate', { collection: c, pipeline });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('QUERY_ERROR');
      expect(res.body.error.message).toMatch(message);
    });
  }
});

describe('against mingo', () => {
  // Random trees of documents and arrays, with a `level` here and there. No array directly in an
  // array, and no null in one: mingo keeps the first unexamined and drops the second, where MongoDB
  // decides the documents in a nested array and keeps every scalar (the jstests above; docs/mql.md,
  // where mingo differs).
  function randomValue(rand: () => number, depth: number, inArray = false): unknown {
    const r = rand();
    if (depth >= 4 || r < 0.35) return randomInt(rand, 0, 9);
    if (r < 0.45) return ['s', inArray ? false : null, true][randomInt(rand, 0, 2)];
    if (r < 0.75 || inArray) return randomDoc(rand, depth + 1);
    return Array.from({ length: randomInt(rand, 0, 4) }, () => randomValue(rand, depth + 1, true));
  }
  function randomDoc(rand: () => number, depth: number): Record<string, unknown> {
    const d: Record<string, unknown> = {};
    if (rand() < 0.7) d['level'] = randomInt(rand, 0, 5);
    for (const k of ['a', 'b', 'c']) if (rand() < 0.6) d[k] = randomValue(rand, depth);
    return d;
  }

  it('agrees on random nested documents, for DESCEND/PRUNE and KEEP/PRUNE by level', async () => {
    const rand = seededRandom(17);
    const docs = Array.from({ length: 150 }, (_, i) => ({ _id: i, ...randomDoc(rand, 0) }));
    const c = await seed(docs);
    for (const n of [0, 2, 4]) {
      for (const then of ['$$DESCEND', '$$KEEP']) {
        const redact = { $redact: { $cond: [{ $lte: [{ $ifNull: ['$level', 0] }, n] }, then, '$$PRUNE'] } };
        // mingo outputs a document pruned at its top as undefined (MongoDB drops it); the input is in _id order.
        const expected = (aggregate(docs, [redact]) as unknown[]).filter((d) => d !== undefined);
        expect(await file.aggregate(c, [redact, { $sort: { _id: 1 } }]), `level ${n}, ${then}`).toEqual(expected);
      }
    }
  });
});
