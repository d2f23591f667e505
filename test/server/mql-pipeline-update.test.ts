// Pipeline-style updates (MongoDB 4.2+) over HTTP on a real server: updateOne, updateMany and
// findOneAndUpdate with an array of stages, upserts, errors, and a restart. Expected answers are
// the MongoDB manual's ("Updates with Aggregation Pipeline", the updateOne / updateMany /
// findOneAndUpdate pages) and the server's own jstests (update_with_pipeline.js).
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { http, signup, startServer, type HttpResult, serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

const seed = (documents: unknown[]): Promise<string> => file.seed(documents, 'p');
const all = (collection: string): Promise<any[]> => file.all(collection);

/** The date an Extended JSON `{$date}` stands for. */
const dateOf = (v: { $date: string }): number => Date.parse(v.$date);

describe('pipeline-style updates: the manual', () => {
  it('updateOne with $set: existing fields keep their place, new ones come last, $$NOW is the time of the update', async () => {
    const c = await seed([
      { _id: 1, test1: 95, test2: 92, test3: 90, modified: { $date: '2020-01-05T00:00:00Z' } },
      { _id: 2, test1: 98, test2: 100, test3: 102, modified: { $date: '2020-01-05T00:00:00Z' } },
      { _id: 3, test1: 95, test2: 110, modified: { $date: '2020-01-04T00:00:00Z' } },
    ]);
    const before = Date.now();
    const res = await mql('updateOne', { collection: c, filter: { _id: 3 }, update: [{ $set: { test3: 98, modified: '$$NOW' } }] });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    const [, , third] = await all(c);
    expect(Object.keys(third)).toEqual(['_id', 'test1', 'test2', 'modified', 'test3']);
    expect(third).toMatchObject({ _id: 3, test1: 95, test2: 110, test3: 98 });
    expect(dateOf(third.modified)).toBeGreaterThanOrEqual(before);
    expect(dateOf(third.modified)).toBeLessThanOrEqual(Date.now());
  });

  it('updateMany with $replaceRoot of $mergeObjects and $$ROOT, then $set: one $$NOW for every document', async () => {
    const c = await seed([
      { _id: 1, quiz1: 8, test2: 100, quiz2: 9, modified: { $date: '2020-01-05T00:00:00Z' } },
      { _id: 2, quiz2: 5, test1: 80, test2: 89, modified: { $date: '2020-01-05T00:00:00Z' } },
    ]);
    const res = await mql('updateMany', {
      collection: c,
      filter: {},
      update: [{ $replaceRoot: { newRoot: { $mergeObjects: [{ quiz1: 0, quiz2: 0, test1: 0, test2: 0 }, '$$ROOT'] } } }, { $set: { modified: '$$NOW' } }],
    });
    expect(res.body).toEqual({ matchedCount: 2, modifiedCount: 2 });
    const docs = await all(c);
    expect(docs.map(({ modified: _, ...rest }) => rest)).toEqual([
      { _id: 1, quiz1: 8, quiz2: 9, test1: 0, test2: 100 },
      { _id: 2, quiz1: 0, quiz2: 5, test1: 80, test2: 89 },
    ]);
    expect(Object.keys(docs[0])).toEqual(['_id', 'quiz1', 'quiz2', 'test1', 'test2', 'modified']);
    expect(docs[0].modified).toEqual(docs[1].modified);
  });

  it('updateMany with two $set stages: the second reads what the first computed ($trunc of $avg, $switch)', async () => {
    const c = await seed([
      { _id: 1, tests: [95, 92, 90], modified: { $date: '2019-01-01T00:00:00Z' } },
      { _id: 2, tests: [94, 88, 90], modified: { $date: '2019-01-01T00:00:00Z' } },
      { _id: 3, tests: [70, 75, 82], modified: { $date: '2019-01-01T00:00:00Z' } },
    ]);
    const grade = {
      $switch: {
        branches: [
          { case: { $gte: ['$average', 90] }, then: 'A' },
          { case: { $gte: ['$average', 80] }, then: 'B' },
          { case: { $gte: ['$average', 70] }, then: 'C' },
          { case: { $gte: ['$average', 60] }, then: 'D' },
        ],
        default: 'F',
      },
    };
    const res = await mql('updateMany', { collection: c, filter: {}, update: [{ $set: { average: { $trunc: [{ $avg: '$tests' }, 0] }, modified: '$$NOW' } }, { $set: { grade } }] });
    expect(res.body).toEqual({ matchedCount: 3, modifiedCount: 3 });
    const docs = await all(c);
    expect(docs.map(({ modified: _, ...rest }) => rest)).toEqual([
      { _id: 1, tests: [95, 92, 90], average: 92, grade: 'A' },
      { _id: 2, tests: [94, 88, 90], average: 90, grade: 'A' },
      { _id: 3, tests: [70, 75, 82], average: 75, grade: 'C' },
    ]);
    expect(Object.keys(docs[0])).toEqual(['_id', 'tests', 'modified', 'average', 'grade']);
  });

  it('updateOne with $concatArrays', async () => {
    const c = await seed([
      { _id: 1, quizzes: [4, 6, 7] },
      { _id: 2, quizzes: [5] },
      { _id: 3, quizzes: [10, 10, 10] },
    ]);
    expect((await mql('updateOne', { collection: c, filter: { _id: 2 }, update: [{ $set: { quizzes: { $concatArrays: ['$quizzes', [8, 6]] } } }] })).body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    expect(await all(c)).toEqual([
      { _id: 1, quizzes: [4, 6, 7] },
      { _id: 2, quizzes: [5, 8, 6] },
      { _id: 3, quizzes: [10, 10, 10] },
    ]);
  });

  it('updateMany with $addFields of a $map', async () => {
    const c = await seed([
      { _id: 1, date: { $date: '2019-06-23T00:00:00Z' }, tempsC: [4, 12, 17] },
      { _id: 2, date: { $date: '2019-07-07T00:00:00Z' }, tempsC: [14, 24, 11] },
      { _id: 3, date: { $date: '2019-10-30T00:00:00Z' }, tempsC: [18, 6, 8] },
    ]);
    const tempsF = { $map: { input: '$tempsC', as: 'celsius', in: { $add: [{ $multiply: ['$$celsius', 9 / 5] }, 32] } } };
    expect((await mql('updateMany', { collection: c, filter: {}, update: [{ $addFields: { tempsF } }] })).body).toEqual({ matchedCount: 3, modifiedCount: 3 });
    expect(await all(c)).toEqual([
      { _id: 1, date: { $date: '2019-06-23T00:00:00.000Z' }, tempsC: [4, 12, 17], tempsF: [39.2, 53.6, 62.6] },
      { _id: 2, date: { $date: '2019-07-07T00:00:00.000Z' }, tempsC: [14, 24, 11], tempsF: [57.2, 75.2, 51.8] },
      { _id: 3, date: { $date: '2019-10-30T00:00:00.000Z' }, tempsC: [18, 6, 8], tempsF: [64.4, 42.8, 46.4] },
    ]);
  });

  it('updateMany with $set of an array of fields, then $unset of them (the updateMany page)', async () => {
    const c = await seed([
      { _id: 1, student: 'Skye', points: 75, commentsSemester1: 'great at math', commentsSemester2: 'loses temper', lastUpdate: { $date: '2019-01-01T00:00:00Z' } },
      { _id: 2, student: 'Elizabeth', points: 60, commentsSemester1: 'well behaved', commentsSemester2: 'needs improvement', lastUpdate: { $date: '2019-01-01T00:00:00Z' } },
    ]);
    const update = [{ $set: { status: 'Modified', comments: ['$commentsSemester1', '$commentsSemester2'], lastUpdate: '$$NOW' } }, { $unset: ['commentsSemester1', 'commentsSemester2'] }];
    expect((await mql('updateMany', { collection: c, filter: {}, update })).body).toEqual({ matchedCount: 2, modifiedCount: 2 });
    const docs = await all(c);
    expect(docs.map(({ lastUpdate: _, ...rest }) => rest)).toEqual([
      { _id: 1, student: 'Skye', points: 75, status: 'Modified', comments: ['great at math', 'loses temper'] },
      { _id: 2, student: 'Elizabeth', points: 60, status: 'Modified', comments: ['well behaved', 'needs improvement'] },
    ]);
    expect(Object.keys(docs[0])).toEqual(['_id', 'student', 'points', 'lastUpdate', 'status', 'comments']);
  });

  it('findOneAndUpdate with $sum of a path through an array (the findOneAndUpdate page), before and after', async () => {
    const c = await seed([
      { _id: 1, grades: [{ grade: 80, mean: 75, std: 6 }, { grade: 85, mean: 90, std: 4 }, { grade: 85, mean: 85, std: 6 }] },
      { _id: 2, grades: [{ grade: 90, mean: 75, std: 6 }, { grade: 87, mean: 90, std: 3 }, { grade: 85, mean: 85, std: 4 }] },
    ]);
    const after = await mql('findOneAndUpdate', { collection: c, filter: { _id: 1 }, update: [{ $set: { total: { $sum: '$grades.grade' } } }], returnDocument: 'after' });
    expect(after.status, after.text).toBe(200);
    expect(after.body.document).toEqual({ _id: 1, grades: [{ grade: 80, mean: 75, std: 6 }, { grade: 85, mean: 90, std: 4 }, { grade: 85, mean: 85, std: 6 }], total: 250 });
    // With sort and projection (MongoDB 4.2+ accepts both beside a pipeline): the before image.
    const before = await mql('findOneAndUpdate', { collection: c, filter: {}, sort: { _id: -1 }, projection: { grades: 0 }, update: [{ $set: { total: { $sum: '$grades.grade' } } }] });
    expect(before.body).toEqual({ document: { _id: 2 }, matchedCount: 1, modifiedCount: 1 });
    expect((await all(c))[1].total).toBe(262);
  });
});

describe('pipeline-style updates: the server (jstests update_with_pipeline.js)', () => {
  const cases: ReadonlyArray<readonly [name: string, doc: unknown, update: unknown[], expected: unknown]> = [
    ['$project keeps _id and the listed fields', { _id: 1, x: 1, y: 1 }, [{ $project: { x: 1 } }], { _id: 1, x: 1 }],
    ['$unset of a path through an array of documents', { _id: 1, x: 1, y: [{ z: 1, foo: 1 }] }, [{ $unset: ['x', 'y.z'] }], { _id: 1, y: [{ foo: 1 }] }],
    ['$replaceWith a sub-document keeps _id', { _id: 1, x: 1, t: { u: { v: 1 } } }, [{ $replaceWith: '$t' }], { _id: 1, u: { v: 1 } }],
    ['$project excluding _id keeps it', { _id: 1, x: 1, y: 2 }, [{ $project: { _id: 0, x: 1 } }], { _id: 1, x: 1 }],
    ['$unset of _id keeps it', { _id: 1, x: 1, y: 2 }, [{ $unset: ['_id', 'y'] }], { _id: 1, x: 1 }],
    ['a result repeating _id elsewhere stores it first', { _id: 1, x: 1 }, [{ $replaceWith: { a: 2, _id: '$_id' } }], { _id: 1, a: 2 }],
    ['$$REMOVE removes a field; nested specifications are dot paths', { _id: 1, a: { b: 1, c: 2 }, d: 3 }, [{ $set: { d: '$$REMOVE', a: { c: { $add: ['$a.c', 1] } } } }], { _id: 1, a: { b: 1, c: 3 } }],
  ];
  for (const [name, doc, update, expected] of cases) {
    it(name, async () => {
      const c = await seed([doc]);
      expect((await mql('updateOne', { collection: c, filter: { _id: 1 }, update })).body).toEqual({ matchedCount: 1, modifiedCount: 1 });
      const [stored] = await all(c);
      expect(stored).toEqual(expected);
      expect(Object.keys(stored)).toEqual(Object.keys(expected as object));
    });
  }

  it('multi: updateMany changes every match, updateOne the first', async () => {
    const c = await seed([
      { _id: 1, x: 1 },
      { _id: 2, x: 2 },
      { _id: 3, x: 1 },
    ]);
    expect((await mql('updateMany', { collection: c, filter: { x: 1 }, update: [{ $set: { bar: 4 } }] })).body).toEqual({ matchedCount: 2, modifiedCount: 2 });
    expect((await mql('updateOne', { collection: c, filter: { _id: { $in: [1, 2] } }, update: [{ $set: { baz: 5 } }] })).body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    expect(await all(c)).toEqual([
      { _id: 1, x: 1, bar: 4, baz: 5 },
      { _id: 2, x: 2 },
      { _id: 3, x: 1, bar: 4 },
    ]);
  });

  it('counts only real changes: an equal result, an empty pipeline and $set of the values a document has modify nothing', async () => {
    const c = await seed([
      { _id: 1, a: 1, b: [1, 2] },
      { _id: 2, a: 2, b: [1, 2] },
    ]);
    expect((await mql('updateMany', { collection: c, filter: {}, update: [{ $set: { b: [1, 2] } }] })).body).toEqual({ matchedCount: 2, modifiedCount: 0 });
    expect((await mql('updateMany', { collection: c, filter: {}, update: [] })).body).toEqual({ matchedCount: 2, modifiedCount: 0 });
    expect((await mql('updateMany', { collection: c, filter: {}, update: [{ $set: { a: 1 } }] })).body).toEqual({ matchedCount: 2, modifiedCount: 1 });
    // The same fields in another order are another document, as in BSON.
    expect((await mql('updateOne', { collection: c, filter: { _id: 1 }, update: [{ $replaceWith: { b: '$b', a: '$a' } }] })).body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    expect(Object.keys((await all(c))[0])).toEqual(['_id', 'b', 'a']);
  });

  it('keeps __proto__ and constructor names as plain data', async () => {
    const c = await seed([{ _id: 1 }]);
    const raw = `{"collection":"${c}","filter":{"_id":1},"update":[{"$set":{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}}]}`;
    const res = await http(file.server.url, 'POST', '/api/mql/updateOne', { raw, contentType: 'application/json', apiKey: file.apiKey });
    expect(res.body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    const found = await http(file.server.url, 'POST', '/api/mql/find', { raw: `{"collection":"${c}","filter":{"__proto__.polluted":true}}`, contentType: 'application/json', apiKey: file.apiKey });
    expect(found.text).toContain('"__proto__":{"polluted":true}');
    expect(found.text).toContain('"constructor":{"prototype":{"x":1}}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('pipeline-style upserts: the document built from the filter\'s equalities goes through the pipeline', () => {
  const cases: ReadonlyArray<readonly [name: string, filter: unknown, update: unknown[], expected: unknown]> = [
    ['$set', { _id: 1, x: 1 }, [{ $set: { foo: 4 } }], { _id: 1, x: 1, foo: 4 }],
    ['$project of a field', { _id: 1, x: 1 }, [{ $project: { x: 1 } }], { _id: 1, x: 1 }],
    ['$project of a literal', { _id: 1, x: 1 }, [{ $project: { x: 'foo' } }], { _id: 1, x: 'foo' }],
    ['$unset', { _id: 1, x: 1, y: 1 }, [{ $unset: ['x'] }], { _id: 1, y: 1 }],
    ['fields computed from the equalities', { _id: 1, 'a.b': 2, c: { $in: [3] }, d: { $gt: 0 } }, [{ $set: { sum: { $add: ['$a.b', '$c'] } } }], { _id: 1, a: { b: 2 }, c: 3, sum: 5 }],
    ['_id set by the pipeline', { x: 1 }, [{ $set: { _id: 'chosen' } }], { _id: 'chosen', x: 1 }],
    ['an empty pipeline inserts the equalities', { _id: 1, x: 1 }, [], { _id: 1, x: 1 }],
    ['$$ROOT is the document built from the filter', { _id: 1, x: 1 }, [{ $replaceWith: { copy: '$$ROOT' } }], { _id: 1, copy: { _id: 1, x: 1 } }],
  ];
  for (const [name, filter, update, expected] of cases) {
    it(name, async () => {
      const c = await seed([{ _id: 'other' }]);
      const res = await mql('updateOne', { collection: c, filter, update, upsert: true });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: (expected as { _id: unknown })._id });
      const stored = (await mql('findOne', { collection: c, filter: { _id: res.body.upsertedId } })).body.document;
      expect(stored).toEqual(expected);
      expect(Object.keys(stored)).toEqual(Object.keys(expected as object));
    });
  }

  it('generates an _id when neither the filter nor the pipeline gives one; findOneAndUpdate returns the new document', async () => {
    const c = await seed([{ _id: 'other' }]);
    const res = await mql('findOneAndUpdate', { collection: c, filter: { name: 'new' }, update: [{ $set: { n: { $strLenCP: '$name' } } }], upsert: true, returnDocument: 'after' });
    expect(res.status, res.text).toBe(200);
    expect(res.body.upsertedId).toMatch(/^[0-9a-f]{24}$/);
    expect(res.body.document).toEqual({ _id: res.body.upsertedId, name: 'new', n: 3 });
  });
});

describe('pipeline-style updates: refusals change nothing', () => {
  const DOC = { _id: 1, a: 1, s: 'text', t: { u: 1 } };

  async function refused(update: unknown, code: string, message: RegExp, extra: Record<string, unknown> = {}): Promise<HttpResult> {
    const c = await seed([DOC]);
    for (const op of ['updateOne', 'updateMany', 'findOneAndUpdate']) {
      const res = await mql(op, { collection: c, filter: { _id: 1 }, update, ...extra });
      expect(res.status, `${op}: ${res.text}`).toBe(400);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.message).toMatch(message);
    }
    expect(await all(c)).toEqual([DOC]);
    return mql('updateOne', { collection: c, filter: { _id: 2 }, update, upsert: true, ...extra });
  }

  const cases: ReadonlyArray<readonly [name: string, update: unknown, code: string, message: RegExp, extra?: Record<string, unknown>]> = [
    ['a stage other updates do not allow, by name', [{ $set: { b: 1 } }, { $match: { a: 1 } }], 'QUERY_ERROR', /^\$match is not allowed to be used within an update$/],
    ['$group', [{ $group: { _id: null } }], 'QUERY_ERROR', /^\$group is not allowed to be used within an update$/],
    ['$lookup', [{ $lookup: { from: 'x', localField: 'a', foreignField: 'b', as: 'c' } }], 'QUERY_ERROR', /^\$lookup is not allowed to be used within an update$/],
    ['an update operator as a stage', [{ $inc: { a: 1 } }], 'QUERY_ERROR', /^Unrecognized pipeline stage name: '\$inc'$/],
    ['an unknown stage before a refused one', [{ $sort: { a: 1 } }, { $nope: 1 }], 'QUERY_ERROR', /^Unrecognized pipeline stage name: '\$nope'$/],
    ['a stage with two fields', [{ $set: { b: 1 }, $unset: 'a' }], 'QUERY_ERROR', /must contain exactly one field/],
    ['a stage that is not an object', [{ $set: { b: 1 } }, 'x'], 'QUERY_ERROR', /must be an object/],
    ['a malformed stage', [{ $project: {} }], 'QUERY_ERROR', /\$project specification must be an object with at least one field/],
    ['an unknown expression', [{ $set: { b: { $frobnicate: 1 } } }], 'QUERY_ERROR', /Unrecognized expression '\$frobnicate'/],
    ['an expression failing on the document', [{ $set: { b: { $add: ['$s', 1] } } }], 'QUERY_ERROR', /\$add/],
    ['a change of _id', [{ $set: { _id: 2 } }], 'QUERY_ERROR', /^After applying the update, the \(immutable\) field '_id' was found to have been altered to _id: 2$/],
    ['a change of _id by $replaceWith', [{ $replaceWith: { _id: 'x' } }], 'QUERY_ERROR', /altered to _id: "x"/],
    ['$replaceWith of a value that is not a document', [{ $replaceWith: '$a' }], 'QUERY_ERROR', /'newRoot' expression must evaluate to an object, but resulting value was: int/],
    ['arrayFilters beside a pipeline', [{ $set: { b: 1 } }], 'QUERY_ERROR', /^arrayFilters may not be specified for pipeline-style updates$/, { arrayFilters: [{ 'i.x': 1 }] }],
    ['a field name starting with $', [{ $replaceWith: { $literal: { $bad: 1 } } }], 'VALIDATION_FAILED', /field name '\$bad' must not start with '\$'/],
    ['a field name with a dot', [{ $replaceWith: { $literal: { 'a.b': 1 } } }], 'VALIDATION_FAILED', /field name 'a.b' must not contain '.'/],
    ['a number JSON cannot carry', [{ $set: { b: { $multiply: [1e308, 10] } } }], 'VALIDATION_FAILED', /numbers must be finite/],
    ['an update that is neither a document nor an array', 5, 'VALIDATION_FAILED', /^update must be object or array$/],
    ['a document past the size bound', [{ $set: { big: { $reduce: { input: { $range: [0, 20] }, initialValue: 'xx', in: { $concat: ['$$value', '$$value'] } } } } }], 'VALIDATION_FAILED', /exceeds the limit/],
  ];
  for (const [name, update, code, message, extra] of cases) {
    it(`refuses ${name}`, async () => {
      const upsert = await refused(update, code, message, extra);
      // An upsert's new document has no _id to keep and no `s` to fail on; the others fail alike.
      if (!/_id|failing/.test(name)) {
        expect(upsert.status, upsert.text).toBe(400);
        expect(upsert.body.error.code).toBe(code);
      }
    });
  }

  it('refuses a document nested past the depth bound', async () => {
    const nested = (n: number): unknown => (n === 0 ? 1 : { d: nested(n - 1) });
    await refused([{ $set: { b: { $literal: nested(120) } } }], 'VALIDATION_FAILED', /nesting exceeds/);
  });

  it('refuses an upsert whose pipeline gives the new document an _id that cannot be one, inserting nothing', async () => {
    const c = await seed([DOC]);
    const res = await mql('updateOne', { collection: c, filter: { x: 5 }, update: [{ $set: { _id: { a: 1 } } }], upsert: true });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.message).toMatch(/_id must be a string, a number or a boolean/);
    expect(await all(c)).toEqual([DOC]);
  });

  it('an arrayFilters list that is empty is accepted (MongoDB parses it to no filters)', async () => {
    const c = await seed([DOC]);
    expect((await mql('updateOne', { collection: c, filter: { _id: 1 }, update: [{ $set: { b: 1 } }], arrayFilters: [] })).body).toEqual({ matchedCount: 1, modifiedCount: 1 });
  });

  it('refuses an update that is neither an object nor an array', async () => {
    const res = await mql('updateOne', { collection: 'x', filter: {}, update: 'text' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
  });
});

describe('pipeline-style updates across a restart', () => {
  it('reads back the result of a pipeline update after the store reopens', async () => {
    const first = await startServer();
    const { apiKey: key } = await signup(first.url);
    const call = (base: string, op: string, json: unknown) => http(base, 'POST', `/api/mql/${op}`, { json, apiKey: key });
    await call(first.url, 'insertMany', { collection: 'r', documents: [{ _id: 1, tests: [95, 92, 90] }, { _id: 2, tests: [70, 75, 82] }] });
    const update = [{ $set: { average: { $trunc: [{ $avg: '$tests' }, 0] } } }, { $unset: 'tests' }, { $replaceWith: { $mergeObjects: [{ first: true }, '$$ROOT'] } }];
    expect((await call(first.url, 'updateMany', { collection: 'r', filter: {}, update })).body).toEqual({ matchedCount: 2, modifiedCount: 2 });
    const expected = [
      { _id: 1, first: true, average: 92 },
      { _id: 2, first: true, average: 75 },
    ];
    expect((await call(first.url, 'find', { collection: 'r' })).body.documents).toEqual(expected);
    await first.stop({ keepData: true });
    const second = await startServer({ dataDir: first.dataDir });
    try {
      const docs = (await call(second.url, 'find', { collection: 'r' })).body.documents;
      expect(docs).toEqual(expected);
      expect(Object.keys(docs[0])).toEqual(['_id', 'first', 'average']);
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
