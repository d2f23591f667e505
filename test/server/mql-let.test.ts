// A command's `let` (MongoDB 5.0+) over HTTP on a real server: find, findOne, aggregate, the
// updates, replaceOne, the deletes, the findOneAnd* operations and bulkWrite. The manual's examples
// (the cakeFlavors collection), MongoDB's jstests (core/command_let_variables.js,
// command_let_variables_expressions.js), its errors (Variables::seedVariablesWithLetParameters:
// 4890500, "Attempt to set internal constant", the user variable name rule), and a randomized
// comparison with mingo's global variables (an oracle only).
import { Aggregator, Query } from 'mingo';
import { describe, expect, it } from 'vitest';
import { randomInt, seededRandom } from '../helpers/random.js';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

const cakeFlavors = [
  { _id: 1, flavor: 'chocolate' },
  { _id: 2, flavor: 'strawberry' },
  { _id: 3, flavor: 'cherry' },
];
const byFlavor = { $expr: { $eq: ['$flavor', '$$targetFlavor'] } };

describe('the manual', () => {
  it('find reads let variables in $expr', async () => {
    const c = await file.seed(cakeFlavors);
    const res = await mql('find', { collection: c, filter: byFlavor, projection: { _id: 0 }, let: { targetFlavor: 'chocolate' } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents).toEqual([{ flavor: 'chocolate' }]);
    const one = await mql('findOne', { collection: c, filter: byFlavor, let: { targetFlavor: 'cherry' } });
    expect(one.body.document).toEqual({ _id: 3, flavor: 'cherry' });
  });

  it('updateOne reads them in its filter and its pipeline', async () => {
    const c = await file.seed(cakeFlavors);
    const res = await mql('updateOne', { collection: c, filter: byFlavor, update: [{ $set: { flavor: '$$newFlavor' } }], let: { targetFlavor: 'strawberry', newFlavor: 'orange' } });
    expect(res.body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    expect(await file.all(c)).toEqual([cakeFlavors[0], { _id: 2, flavor: 'orange' }, cakeFlavors[2]]);
  });

  it('deleteOne and deleteMany read them', async () => {
    const c = await file.seed(cakeFlavors);
    expect((await mql('deleteOne', { collection: c, filter: byFlavor, let: { targetFlavor: 'strawberry' } })).body).toEqual({ deletedCount: 1 });
    expect((await mql('deleteMany', { collection: c, filter: { $expr: { $in: ['$flavor', '$$gone'] } }, let: { gone: ['cherry', 'vanilla'] } })).body).toEqual({ deletedCount: 1 });
    expect(await file.all(c)).toEqual([cakeFlavors[0]]);
  });

  it('aggregate reads them in every stage', async () => {
    const c = await file.seed([
      { _id: 1, state: 'CA', price: 3, quantity: 120 },
      { _id: 2, state: 'WA', price: 4, quantity: 45 },
      { _id: 3, state: 'CA', price: 2, quantity: 100 },
    ]);
    const res = await mql('aggregate', {
      collection: c,
      pipeline: [{ $match: { $expr: { $gt: ['$quantity', '$$minimum'] } } }, { $project: { state: 1, total: { $multiply: ['$price', '$quantity', '$$rate'] } } }, { $sort: { _id: 1 } }],
      let: { minimum: 50, rate: 2 },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents).toEqual([
      { _id: 1, state: 'CA', total: 720 },
      { _id: 3, state: 'CA', total: 400 },
    ]);
  });

  it('the findOneAnd* operations and replaceOne read them, in their projections too', async () => {
    const c = await file.seed(cakeFlavors);
    const upd = await mql('findOneAndUpdate', { collection: c, filter: byFlavor, update: [{ $set: { note: '$$note' } }], projection: { _id: 0, flavor: 1, note: 1, tag: '$$tag' }, returnDocument: 'after', let: { targetFlavor: 'cherry', note: 'red', tag: 't' } });
    expect(upd.status, upd.text).toBe(200);
    expect(upd.body.document).toEqual({ flavor: 'cherry', note: 'red', tag: 't' });
    const rep = await mql('findOneAndReplace', { collection: c, filter: byFlavor, replacement: { flavor: 'lemon' }, returnDocument: 'after', let: { targetFlavor: 'chocolate' } });
    expect(rep.body.document).toEqual({ _id: 1, flavor: 'lemon' });
    const replaced = await mql('replaceOne', { collection: c, filter: byFlavor, replacement: { flavor: 'lime' }, let: { targetFlavor: 'lemon' } });
    expect(replaced.body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    const del = await mql('findOneAndDelete', { collection: c, filter: byFlavor, let: { targetFlavor: 'strawberry' } });
    expect(del.body.document).toEqual({ _id: 2, flavor: 'strawberry' });
    expect(await file.all(c)).toEqual([
      { _id: 1, flavor: 'lime' },
      { _id: 3, flavor: 'cherry', note: 'red' },
    ]);
  });

  it('an upsert builds its document with them', async () => {
    const c = await file.seed(cakeFlavors);
    const res = await mql('updateOne', { collection: c, filter: { _id: 9 }, update: [{ $set: { flavor: '$$f' } }], upsert: true, let: { f: 'mint' } });
    expect(res.body).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: 9 });
    expect((await file.all(c)).at(-1)).toEqual({ _id: 9, flavor: 'mint' });
  });
});

describe("MongoDB's jstests", () => {
  // command_let_variables_expressions.js
  const docs = [{ _id: 2, a: {} }, { _id: 3, b: 1 }, { _id: 4, a: '$notAFieldPath' }];
  const missingLetParam = { $getField: { field: 'c', input: { a: 1 } } };
  const literalLetParam = { $literal: '$notAFieldPath' };
  const sameAsC = { $expr: { $eq: ['$a', '$$c'] } };

  it('a value that evaluates to missing stays missing, and $literal keeps a $-string a string', async () => {
    const c = await file.seed(docs);
    for (const op of ['find', 'aggregate'] as const) {
      const body = (c2: unknown) => (op === 'find' ? { collection: c, filter: sameAsC, let: { c: c2 } } : { collection: c, pipeline: [{ $match: sameAsC }], let: { c: c2 } });
      expect((await mql(op, body(missingLetParam))).body.documents, op).toEqual([{ _id: 3, b: 1 }]);
      expect((await mql(op, body(literalLetParam))).body.documents, op).toEqual([{ _id: 4, a: '$notAFieldPath' }]);
    }
  });

  it('so do the updates, the findOneAnd* operations and the deletes', async () => {
    const u1 = await file.seed(docs);
    await mql('updateMany', { collection: u1, filter: sameAsC, update: [{ $set: { c: 'updated' } }], let: { c: missingLetParam } });
    expect(await file.all(u1)).toEqual([{ _id: 2, a: {} }, { _id: 3, b: 1, c: 'updated' }, { _id: 4, a: '$notAFieldPath' }]);
    const u2 = await file.seed(docs);
    await mql('updateMany', { collection: u2, filter: sameAsC, update: [{ $set: { c: 'updated' } }], let: { c: literalLetParam } });
    expect(await file.all(u2)).toEqual([{ _id: 2, a: {} }, { _id: 3, b: 1 }, { _id: 4, a: '$notAFieldPath', c: 'updated' }]);
    const f = await file.seed(docs);
    await mql('findOneAndUpdate', { collection: f, filter: { _id: 3, ...sameAsC }, update: [{ $set: { c: 'updated' } }], let: { c: missingLetParam } });
    await mql('findOneAndUpdate', { collection: f, filter: { _id: 4, ...sameAsC }, update: [{ $set: { c: 'updated' } }], let: { c: literalLetParam } });
    expect(await file.all(f)).toEqual([{ _id: 2, a: {} }, { _id: 3, b: 1, c: 'updated' }, { _id: 4, a: '$notAFieldPath', c: 'updated' }]);
    const d1 = await file.seed(docs);
    await mql('deleteMany', { collection: d1, filter: sameAsC, let: { c: missingLetParam } });
    expect(await file.all(d1)).toEqual([{ _id: 2, a: {} }, { _id: 4, a: '$notAFieldPath' }]);
    const d2 = await file.seed(docs);
    await mql('deleteMany', { collection: d2, filter: sameAsC, let: { c: literalLetParam } });
    expect(await file.all(d2)).toEqual([{ _id: 2, a: {} }, { _id: 3, b: 1 }]);
  });

  // command_let_variables.js
  const birds = [
    { _id: 1, Species: 'Blackbird (Turdus merula)', population_trends: [{ term: { start: 1970, end: 2014 }, pct_change: -16, trend: 'no change' }, { term: { start: 2009, end: 2014 }, pct_change: -2, trend: 'no change' }] },
    { _id: 2, Species: 'Bullfinch (Pyrrhula pyrrhula)', population_trends: [{ term: { start: 1970, end: 2014 }, pct_change: -39, trend: 'no change' }, { term: { start: 2009, end: 2014 }, pct_change: 12, trend: 'weak increase' }] },
    { _id: 3, Species: 'Chaffinch (Fringilla coelebs)', population_trends: [{ term: { start: 1970, end: 2014 }, pct_change: 27, trend: 'no change' }, { term: { start: 2009, end: 2014 }, pct_change: -7, trend: 'weak decline' }] },
    { _id: 4, Species: 'Song Thrush (Turdus philomelos)', population_trends: [{ term: { start: 1970, end: 2014 }, pct_change: -53, trend: 'weak decline' }, { term: { start: 2009, end: 2014 }, pct_change: -4, trend: 'no change' }] },
  ];
  const trendPipeline = [{ $project: { _id: 0 } }, { $unwind: '$population_trends' }, { $match: { $expr: { $eq: ['$population_trends.trend', '$$target_trend'] } } }, { $sort: { Species: 1 } }];

  it('a $match after $unwind reads them', async () => {
    const c = await file.seed(birds);
    const res = await mql('aggregate', { collection: c, pipeline: trendPipeline, let: { target_trend: 'weak decline' } });
    expect(res.body.documents.map((d: { Species: string }) => d.Species)).toEqual(['Chaffinch (Fringilla coelebs)', 'Song Thrush (Turdus philomelos)']);
    expect((await mql('aggregate', { collection: c, pipeline: trendPipeline.slice(0, 2), let: {} })).status).toBe(200);
  });

  it('$let inside the pipeline shadows a command variable of the same name, and both can be read', async () => {
    const c = await file.seed(birds);
    const projected = (then: unknown, vars: Record<string, unknown> | undefined) => [
      { $project: { var: vars === undefined ? { $cond: { if: { $eq: [{ $substr: ['$Species', 0, 1] }, 'B'] }, then, else: '---' } } : { $let: { vars, in: { $cond: { if: { $eq: [{ $substr: ['$Species', 0, 1] }, 'B'] }, then, else: '---' } } } } } },
    ];
    const count = async (pipeline: unknown[], value: string, letSpec: unknown) =>
      (await mql('aggregate', { collection: c, pipeline: [...pipeline, { $match: { $expr: { $eq: ['$var', value] } } }], let: letSpec })).body.documents.length;
    expect(await count(projected('$$variable', undefined), 'OUTER', { variable: 'OUTER' })).toBe(2);
    expect(await count(projected({ $concat: ['$$innerVar', '$$outerVar'] }, { innerVar: 'INNER' }), 'INNEROUTER', { outerVar: 'OUTER' })).toBe(2);
    expect(await count(projected('$$variable', { variable: 'INNER' }), 'INNER', { variable: 'OUTER' })).toBe(2);
  });

  it('update reads different variables in its query and its pipeline, beside $$NOW', async () => {
    const c = await file.seed(birds);
    const res = await mql('updateMany', {
      collection: c,
      filter: { $expr: { $eq: ['$Species', '$$target_species'] } },
      update: [{ $set: { seen: '$$NOW' } }, { $set: { Species: '$$new_name' } }],
      let: { target_species: 'Chaffinch (Fringilla coelebs)', new_name: 'Chaffinch' },
    });
    expect(res.body).toEqual({ matchedCount: 1, modifiedCount: 1 });
    const after = await file.all(c);
    expect(after[2].Species).toBe('Chaffinch');
    expect(after[2].seen).toHaveProperty('$date');
  });

  it('an undefined variable is refused in a query and in an update, which then changes nothing', async () => {
    const c = await file.seed(birds);
    await file.refuses('aggregate', { collection: c, pipeline: trendPipeline, let: { cat: 'not_a_bird' } }, 400, 'QUERY_ERROR', 'Use of undefined variable: target_trend');
    await file.refuses('updateMany', { collection: c, filter: { $expr: { $eq: ['$Species', '$$target_species'] } }, update: [{ $set: { Species: 'Homo Erectus' } }], let: { cat: 'not_a_bird' } }, 400, 'QUERY_ERROR', 'Use of undefined variable: target_species');
    await file.refuses('updateMany', { collection: c, filter: {}, update: [{ $set: { Species: '$$new_name' } }], let: { cat: 'not_a_bird' } }, 400, 'QUERY_ERROR', 'Use of undefined variable: new_name');
    expect(await file.all(c)).toEqual(birds);
  });

  it('reserved and malformed names are refused, as a let that is not an object', async () => {
    const c = await file.seed(birds);
    for (const name of ['NOW', 'CLUSTER_TIME', 'IS_MR', 'JS_SCOPE']) {
      await file.refuses('aggregate', { collection: c, pipeline: [], let: { [name]: 'failure' } }, 400, 'QUERY_ERROR', `Attempt to set internal constant: ${name}`);
    }
    for (const name of ['Reserved', 'ROOT', 'REMOVE', 'CURRENT', '_x', '1a', '$a']) {
      await file.refuses('aggregate', { collection: c, pipeline: [], let: { [name]: 'failure' } }, 400, 'QUERY_ERROR', `Invalid 'let' parameter :: caused by :: '${name}' starts with an invalid character for a user variable name`);
    }
    await file.refuses('find', { collection: c, let: { '': 1 } }, 400, 'QUERY_ERROR', 'empty variable names are not allowed');
    await file.refuses('find', { collection: c, let: null }, 400, 'QUERY_ERROR', "BSON field 'FindCommandRequest.let' is the wrong type 'null', expected type 'object'");
    await file.refuses('aggregate', { collection: c, pipeline: [], let: [1] }, 400, 'QUERY_ERROR', "BSON field 'aggregate.let' is the wrong type 'array', expected type 'object'");
    await file.refuses('updateOne', { collection: c, filter: {}, update: { $set: { x: 1 } }, let: 5 }, 400, 'QUERY_ERROR', "BSON field 'update.let' is the wrong type 'int', expected type 'object'");
    await file.refuses('deleteMany', { collection: c, filter: {}, let: 'x' }, 400, 'QUERY_ERROR', "BSON field 'delete.let' is the wrong type 'string', expected type 'object'");
    await file.refuses('findOneAndDelete', { collection: c, filter: {}, let: true }, 400, 'QUERY_ERROR', "BSON field 'findAndModify.let' is the wrong type 'bool', expected type 'object'");
    expect(await file.all(c)).toEqual(birds);
  });
});

describe('values', () => {
  const fieldAccess = 'Command let Expression tried to access a field, but this is not allowed because Command let Expressions run before the query examines any documents.';

  it('a value that reads a field is refused before anything is read or written', async () => {
    const c = await file.seed(cakeFlavors);
    for (const value of ['$flavor', '$$ROOT', '$$CURRENT.flavor', { $concat: ['x', '$flavor'] }, { $getField: 'flavor' }, { $getField: { field: 'flavor' } }, { $meta: 'textScore' }, { $map: { input: [1], in: '$flavor' } }]) {
      await file.refuses('deleteMany', { collection: c, filter: {}, let: { v: value } }, 400, 'QUERY_ERROR', fieldAccess);
    }
    expect(await file.all(c)).toEqual(cakeFlavors);
  });

  it('constants, $$NOW, $literal, $map over its own variable and $getField of an input are values', async () => {
    const c = await file.seed([{ _id: 1 }]);
    const res = await mql('aggregate', {
      collection: c,
      pipeline: [{ $project: { _id: 0, a: '$$a', b: '$$b', c: '$$c', d: '$$d', same: { $eq: ['$$n', '$$NOW'] }, e: '$$e' } }],
      let: { a: { $literal: '$x' }, b: { $map: { input: [1, 2], in: { $multiply: ['$$this', 10] } } }, c: { $getField: { field: 'k', input: { k: 7 } } }, d: { $dateToString: { date: { $date: '2024-01-02T00:00:00Z' }, format: '%Y' } }, n: '$$NOW', e: { nested: [1, { $add: [1, 1] }] } },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents).toEqual([{ a: '$x', b: [10, 20], c: 7, d: '2024', same: true, e: { nested: [1, 2] } }]);
  });

  it('a value reads the values before it, not after', async () => {
    const c = await file.seed([{ _id: 1 }]);
    const res = await mql('aggregate', { collection: c, pipeline: [{ $project: { _id: 0, b: '$$b' } }], let: { a: 2, b: { $add: ['$$a', 1] } } });
    expect(res.body.documents).toEqual([{ b: 3 }]);
    await file.refuses('aggregate', { collection: c, pipeline: [], let: { b: { $add: ['$$a', 1] }, a: 2 } }, 400, 'QUERY_ERROR', 'Use of undefined variable: a');
  });

  it('a value is evaluated once per command ($rand), in a bulkWrite too', async () => {
    const c = await file.seed(Array.from({ length: 20 }, (_, i) => ({ _id: i })));
    const res = await mql('aggregate', { collection: c, pipeline: [{ $project: { r: '$$r' } }], let: { r: { $rand: {} } } });
    expect(new Set(res.body.documents.map((d: { r: number }) => d.r)).size).toBe(1);
    const bulk = await mql('bulkWrite', {
      collection: c,
      operations: [{ updateMany: { filter: { _id: { $lt: 10 } }, update: [{ $set: { r: '$$r' } }] } }, { updateMany: { filter: { _id: { $gte: 10 } }, update: [{ $set: { r: '$$r' } }] } }],
      let: { r: { $rand: {} } },
    });
    expect(bulk.status, bulk.text).toBe(200);
    expect(new Set((await file.all(c)).map((d: { r: number }) => d.r)).size).toBe(1);
  });

  it('Extended JSON dates are dates', async () => {
    const c = await file.seed([{ _id: 1, at: { $date: '2024-05-01T00:00:00Z' } }, { _id: 2, at: { $date: '2023-05-01T00:00:00Z' } }]);
    const res = await mql('find', { collection: c, filter: { $expr: { $gt: ['$at', '$$since'] } }, let: { since: { $date: '2024-01-01T00:00:00Z' } } });
    expect(res.body.documents.map((d: { _id: number }) => d._id)).toEqual([1]);
  });
});

describe('where they are seen', () => {
  it('a $lookup pipeline reads the command variables, and its own let shadows them', async () => {
    const c = await file.seed([{ _id: 1 }, { _id: 2 }, { _id: 3 }]);
    const lookup = (own: Record<string, unknown> | undefined) => ({ $lookup: { from: c, ...(own === undefined ? {} : { let: own }), pipeline: [{ $match: { $expr: { $eq: ['$_id', '$$pick'] } } }], as: 'j' } });
    const run = async (own: Record<string, unknown> | undefined) => (await mql('aggregate', { collection: c, pipeline: [{ $match: { _id: 1 } }, lookup(own)], let: { pick: 3 } })).body.documents;
    expect(await run(undefined)).toEqual([{ _id: 1, j: [{ _id: 3 }] }]);
    expect(await run({ pick: 2 })).toEqual([{ _id: 1, j: [{ _id: 2 }] }]);
  });

  it('a $unionWith pipeline reads them, and a $merge whenMatched pipeline beside its own (which win)', async () => {
    const c = await file.seed([{ _id: 1, n: 1 }, { _id: 2, n: 2 }]);
    const other = await file.seed([{ _id: 10, n: 5 }, { _id: 11, n: 6 }]);
    const union = await mql('aggregate', { collection: c, pipeline: [{ $unionWith: { coll: other, pipeline: [{ $match: { $expr: { $gt: ['$n', '$$floor'] } } }] } }, { $sort: { _id: 1 } }], let: { floor: 5 } });
    expect(union.body.documents).toEqual([{ _id: 1, n: 1 }, { _id: 2, n: 2 }, { _id: 11, n: 6 }]);
    const target = await file.seed([{ _id: 1, n: 0 }]);
    const merged = await mql('aggregate', {
      collection: c,
      pipeline: [{ $merge: { into: target, let: { own: 'merge' }, whenMatched: [{ $set: { own: '$$own', cmd: '$$cmd', from: '$$new.n' } }] } }],
      let: { own: 'command', cmd: 'command' },
    });
    expect(merged.status, merged.text).toBe(200);
    expect(await file.all(target)).toEqual([{ _id: 1, n: 0, own: 'merge', cmd: 'command', from: 1 }, { _id: 2, n: 2 }]);
  });

  it('an indexed find with let answers as one without ($expr never uses the index)', async () => {
    const c = await file.seed(Array.from({ length: 50 }, (_, i) => ({ _id: i, k: i % 5, v: i })));
    await file.createIndex(c, { k: 1 });
    const res = await mql('find', { collection: c, filter: { k: 2, $expr: { $gt: ['$v', '$$min'] } }, sort: { _id: 1 }, let: { min: 20 } });
    expect(res.body.documents.map((d: { _id: number }) => d._id)).toEqual([22, 27, 32, 37, 42, 47]);
  });

  it('a bulkWrite hands them to every operation; a bad let writes nothing', async () => {
    const c = await file.seed(cakeFlavors);
    const res = await mql('bulkWrite', {
      collection: c,
      operations: [
        { updateOne: { filter: byFlavor, update: [{ $set: { picked: true } }] } },
        { replaceOne: { filter: { $expr: { $eq: ['$_id', '$$replaced'] } }, replacement: { flavor: 'plum' } } },
        { deleteOne: { filter: { $expr: { $eq: ['$flavor', '$$dropped'] } } } },
      ],
      let: { targetFlavor: 'chocolate', replaced: 2, dropped: 'cherry' },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ matchedCount: 2, modifiedCount: 2, deletedCount: 1 });
    expect(await file.all(c)).toEqual([
      { _id: 1, flavor: 'chocolate', picked: true },
      { _id: 2, flavor: 'plum' },
    ]);
    await file.refuses('bulkWrite', { collection: c, operations: [{ insertOne: { document: { _id: 5 } } }], let: { v: '$flavor' } }, 400, 'QUERY_ERROR', 'Command let Expression tried to access a field');
    expect((await file.all(c)).length).toBe(2);
  });

  it('countDocuments and distinct take no let (MongoDB has none there)', async () => {
    const c = await file.seed(cakeFlavors);
    await file.refuses('countDocuments', { collection: c, let: {} }, 400, 'VALIDATION_FAILED', 'let');
    await file.refuses('distinct', { collection: c, key: 'flavor', let: {} }, 400, 'VALIDATION_FAILED', 'let');
  });
});

describe('against mingo', () => {
  // The comparisons are of numbers with numbers: across types (and with null or missing) MongoDB
  // compares in BSON order where mingo does not (docs/mql.md, expression-comparison-across-types).
  // The values of other types go through the pipeline's computed fields.
  it('agrees on random variables in $expr filters, computed fields and pipelines', async () => {
    const rand = seededRandom(4242);
    const value = (): unknown => [null, randomInt(rand, -5, 5), `s${randomInt(rand, 0, 3)}`, [randomInt(rand, 0, 3)], true, { k: randomInt(rand, 0, 3) }][randomInt(rand, 0, 5)];
    const docs = Array.from({ length: 120 }, (_, i) => {
      const d: Record<string, unknown> = { _id: i, b: randomInt(rand, -5, 5), c: randomInt(rand, -5, 5) };
      if (rand() < 0.8) d['a'] = value();
      return d;
    });
    const c = await file.seed(docs);
    const ops = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte'];
    for (let i = 0; i < 60; i++) {
      const variables = { x: value(), y: randomInt(rand, -5, 5), z: randomInt(rand, -5, 5) };
      const op = ops[randomInt(rand, 0, ops.length - 1)]!;
      const filter = { $expr: { [op]: [rand() < 0.5 ? '$b' : '$c', rand() < 0.5 ? '$$y' : { $add: ['$$z', '$c'] }] } };
      const expected = new Query(filter, { variables }).find(docs).all();
      const found = await mql('find', { collection: c, filter, sort: { _id: 1 }, limit: 1000, let: variables });
      expect(found.body.documents, JSON.stringify({ filter, variables })).toEqual(expected);
      const pipeline = [{ $match: filter }, { $project: { s: { $add: ['$b', '$$y'] }, x: '$$x', pair: ['$a', '$$x'], pick: { $cond: [{ $gt: ['$c', '$$z'] }, '$$x', '$a'] } } }];
      const aggregated = await mql('aggregate', { collection: c, pipeline, let: variables });
      expect(aggregated.body.documents, JSON.stringify({ pipeline, variables })).toEqual(new Aggregator(pipeline, { variables }).run(docs));
    }
  });
});
