// Aggregation stages through the document model on a real store (docsAggregate), with the
// manual's examples and the behaviours MongoDB documents where mingo (the fuzz oracle) differs.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compilePipeline, docsAggregate, docsCreateIndex, docsInsert, type Doc } from '../../../engine/docs/index.js';
import { PageCache, type TreeNode } from '../../../engine/storage/index.js';
import { TenantStore } from '../../../engine/tenant/index.js';
import { dirsRemovedAfterEach } from '../../helpers/temp-dir.js';

const newDir = dirsRemovedAfterEach();
let store: TenantStore;

const sales: Doc[] = [
  { _id: 1, item: 'abc', price: 10, quantity: 2, date: new Date('2014-03-01T08:00:00Z'), tags: ['a', 'b'] },
  { _id: 2, item: 'jkl', price: 20, quantity: 1, date: new Date('2014-03-01T09:00:00Z'), tags: [] },
  { _id: 3, item: 'xyz', price: 5, quantity: 10, date: new Date('2014-03-15T09:00:00Z'), tags: ['b'] },
  { _id: 4, item: 'xyz', price: 5, quantity: 20, date: new Date('2014-04-04T11:21:39Z'), tags: null },
  { _id: 5, item: 'abc', price: 10, quantity: 10, date: new Date('2014-04-04T21:23:13Z') },
];

beforeEach(async () => {
  store = await TenantStore.open(newDir('agg-stages'), { cache: new PageCache<TreeNode>(16 << 20, { dirtyBytes: 8 << 20 }), fsync: 'off' });
  await docsInsert(store, 'sales', structuredClone(sales)).durable;
  await docsInsert(store, 'inventory', [{ _id: 'i1', sku: 'abc', instock: 120 }, { _id: 'i2', sku: 'xyz', instock: 60 }, { _id: 'i3', sku: null }, { _id: 'i4' }]).durable;
});
afterEach(async () => store.close());

const run = async (pipeline: unknown[], collection = 'sales'): Promise<Doc[]> => (await docsAggregate(store, collection, pipeline)).documents;
const refuses = async (pipeline: unknown, message: RegExp): Promise<void> => {
  await expect(docsAggregate(store, 'sales', pipeline)).rejects.toMatchObject({ code: 'QUERY_ERROR', message: expect.stringMatching(message) });
};

describe('$group (manual examples)', () => {
  it('groups by an expression with accumulators, in first-seen order', async () => {
    expect(await run([{ $group: { _id: '$item', total: { $sum: { $multiply: ['$price', '$quantity'] } }, avgQty: { $avg: '$quantity' }, n: { $count: {} } } }])).toEqual([
      { _id: 'abc', total: 120, avgQty: 6, n: 2 },
      { _id: 'jkl', total: 20, avgQty: 1, n: 1 },
      { _id: 'xyz', total: 150, avgQty: 15, n: 2 },
    ]);
  });
  it('groups everything under _id null; $min/$max ignore null and missing, compare in BSON order; $first/$last', async () => {
    expect(await run([{ $group: { _id: null, min: { $min: '$tags' }, maxDate: { $max: '$date' }, first: { $first: '$item' }, last: { $last: '$tags' } } }])).toEqual([
      { _id: null, min: [], maxDate: new Date('2014-04-04T21:23:13Z'), first: 'abc', last: null },
    ]);
  });
  it('$push and $addToSet leave missing values out (MongoDB; mingo adds null)', async () => {
    expect(await run([{ $group: { _id: null, tags: { $push: '$tags' }, items: { $addToSet: '$item' } } }])).toEqual([{ _id: null, tags: [['a', 'b'], [], ['b'], null], items: ['abc', 'jkl', 'xyz'] }]);
  });
  it('takes 1 and 1.0, and equal documents, as one group', async () => {
    await docsInsert(store, 'nums', [{ _id: 1, k: 1 }, { _id: 2, k: 1.0 }, { _id: 3, k: { a: 1 } }, { _id: 4, k: { a: 1 } }, { _id: 5 }, { _id: 6, k: null }]).durable;
    expect(await run([{ $group: { _id: '$k', n: { $sum: 1 } } }], 'nums')).toEqual([{ _id: 1, n: 2 }, { _id: { a: 1 }, n: 2 }, { _id: null, n: 2 }]);
  });
  it('refuses a field without an accumulator, and a dotted field', async () => {
    await refuses([{ $group: { _id: null, x: 1 } }], /must be an accumulator object/);
    await refuses([{ $group: { _id: null, 'a.b': { $sum: 1 } } }], /must not contain '\.'/);
    await refuses([{ $group: { x: { $sum: 1 } } }], /must include an _id/);
    await refuses([{ $group: { _id: null, x: { $mode: '$a' } } }], /unknown group operator '\$mode'/);
  });
});

describe('$match, $sort, $skip, $limit, $count, $sortByCount', () => {
  it('filters with the find filter and $expr', async () => {
    expect((await run([{ $match: { item: 'xyz', $expr: { $gt: [{ $multiply: ['$price', '$quantity'] }, 60] } } }])).map((d) => d['_id'])).toEqual([4]);
  });
  it('sorts on several keys, then skips and limits', async () => {
    expect((await run([{ $sort: { price: -1, quantity: 1 } }, { $skip: 1 }, { $limit: 3 }])).map((d) => d['_id'])).toEqual([1, 5, 3]);
  });
  it('counts, and passes no document on for nothing (MongoDB; mingo passes {n: 0})', async () => {
    expect(await run([{ $match: { price: { $gt: 6 } } }, { $count: 'n' }])).toEqual([{ n: 3 }]);
    expect(await run([{ $match: { price: 999 } }, { $count: 'n' }])).toEqual([]);
  });
  it('sorts by count', async () => {
    expect(await run([{ $sortByCount: '$item' }])).toEqual([{ _id: 'abc', count: 2 }, { _id: 'xyz', count: 2 }, { _id: 'jkl', count: 1 }]);
  });
  it('uses an index for a leading $match', async () => {
    await (await docsCreateIndex(store, 'sales', { item: 1 })).durable;
    expect((await run([{ $match: { item: 'abc' } }, { $project: { _id: 1 } }])).map((d) => d['_id'])).toEqual([1, 5]);
  });
  it('refuses bad counts', async () => {
    await refuses([{ $limit: 0 }], /\$limit argument must be a positive integer/);
    await refuses([{ $skip: -1 }], /\$skip argument must be a non-negative integer/);
    await refuses([{ $count: '$n' }], /must not start with '\$'/);
  });
  it('names the first bad stage when a $sort is followed by a $skip and a $limit (folded into the sort)', async () => {
    await refuses([{ $sort: { item: 2 } }, { $limit: 0 }], /\$sort/);
    await refuses([{ $sort: { item: 1 } }, { $skip: -1 }, { $limit: 5 }], /\$skip argument must be a non-negative integer/);
    await refuses([{ $sort: { item: 1 } }, { $skip: 1 }, { $limit: 0 }], /\$limit argument must be a positive integer/);
    // Well-formed: the fold keeps skip + limit and the stages after it still apply.
    expect((await run([{ $sort: { _id: 1 } }, { $skip: 1 }, { $limit: 2 }, { $project: { _id: 1 } }])).map((d) => d['_id'])).toEqual([2, 3]);
  });
});

describe('$project, $addFields/$set, $unset, $replaceRoot/$replaceWith', () => {
  it('includes, computes and keeps _id first', async () => {
    expect((await run([{ $match: { _id: 1 } }, { $project: { item: 1, total: { $multiply: ['$price', '$quantity'] }, 'x.y': '$quantity' } }]))[0]).toEqual({ _id: 1, item: 'abc', total: 20, x: { y: 2 } });
  });
  it('excludes', async () => {
    expect((await run([{ $match: { _id: 2 } }, { $project: { date: 0, tags: 0, _id: 0 } }]))[0]).toEqual({ item: 'jkl', price: 20, quantity: 1 });
  });
  it('excludes _id alone, keeping every other field (the manual: "Suppress the _id field"), also for the stages after it', async () => {
    // The pipeline's field analysis once read only _id and the $match fields for this stage.
    const { _id, ...rest } = (await run([{ $match: { _id: 2 } }]))[0]!;
    expect(_id).toBe(2);
    expect((await run([{ $match: { _id: 2 } }, { $project: { _id: 0 } }]))[0]).toEqual(rest);
    expect((await run([{ $project: { _id: false } }, { $match: { item: 'jkl' } }]))[0]).toEqual(rest);
    expect(await run([{ $match: { _id: 2 } }, { $project: { _id: 0 } }, { $group: { _id: '$item', q: { $sum: '$quantity' } } }])).toEqual([{ _id: 'jkl', q: 1 }]);
    expect((await run([{ $facet: { f: [{ $match: { _id: 2 } }, { $project: { _id: 0 } }] } }]))[0]).toEqual({ f: [rest] });
  });
  it('computes _id and leaves it out', async () => {
    expect((await run([{ $match: { _id: 2 } }, { $project: { _id: '$item', q: '$quantity' } }]))[0]).toEqual({ _id: 'jkl', q: 1 });
    expect((await run([{ $match: { _id: 2 } }, { $project: { _id: 0, q: '$quantity' } }]))[0]).toEqual({ q: 1 });
  });
  it('applies a computed dot path along the input\'s arrays (MongoDB jstests projection_semantics.js, testComputedProjections)', async () => {
    await docsInsert(store, 'shapes', [
      { _id: 1, a: ['scalar', { b: 1, c: 1, d: 1 }, { b: 2, c: 2 }, { b: 3 }] },
      { _id: 3, a: [] },
      { _id: 4, a: [[], [{ b: [[1, 2], { c: 1, d: 1 }] }]] },
      { _id: 5, a: 5 },
      { _id: 7, a: [{ c: 1 }, { c: 2 }, 3], x: 9 },
    ]).durable;
    const ids = async (pipeline: unknown[]): Promise<unknown[]> => (await run(pipeline, 'shapes')).map((d) => d['a']);
    const v = 'new value';
    expect(await ids([{ $project: { 'a.b': v } }])).toEqual([[{ b: v }, { b: v }, { b: v }, { b: v }], [], [[], [{ b: v }]], { b: v }, [{ b: v }, { b: v }, { b: v }]]);
    expect(await ids([{ $project: { 'a.b.c': v } }])).toEqual([
      [{ b: { c: v } }, { b: { c: v } }, { b: { c: v } }, { b: { c: v } }],
      [],
      [[], [{ b: [[{ c: v }, { c: v }], { c: v }] }]],
      { b: { c: v } },
      [{ b: { c: v } }, { b: { c: v } }, { b: { c: v } }],
    ]);
    // Beside an inclusion: the scalar the inclusion drops comes back as a document of the computed field.
    expect((await run([{ $match: { _id: 7 } }, { $project: { 'a.c': 1, 'a.b': '$x' } }], 'shapes'))[0]).toEqual({ _id: 7, a: [{ c: 1, b: 9 }, { c: 2, b: 9 }, { b: 9 }] });
    expect((await run([{ $match: { _id: 7 } }, { $project: { a: { b: '$x', e: { $literal: 1 } } } }], 'shapes'))[0]).toEqual({ _id: 7, a: [{ b: 9, e: 1 }, { b: 9, e: 1 }, { b: 9, e: 1 }] });
  });
  it('refuses expressions in an exclusion', async () => {
    await refuses([{ $project: { a: 0, b: '$x' } }], /Cannot use expression other than \$meta in exclusion projection/);
    await refuses([{ $project: {} }], /at least one field/);
  });
  it('adds fields, nested ones creating their document, $$REMOVE removing', async () => {
    expect((await run([{ $match: { _id: 2 } }, { $addFields: { total: { $multiply: ['$price', '$quantity'] }, 'meta.n': 1, price: '$$REMOVE' } }]))[0]).toEqual({
      _id: 2,
      item: 'jkl',
      quantity: 1,
      date: sales[1]!['date'],
      tags: [],
      total: 20,
      meta: { n: 1 },
    });
  });
  it('creates the document of a nested field set to a missing value (MongoDB; mingo does not)', async () => {
    expect((await run([{ $match: { _id: 2 } }, { $set: { 'meta.n': '$nope' } }, { $project: { meta: 1, _id: 0 } }]))[0]).toEqual({ meta: {} });
  });
  it('sets a dotted field in each element of an array', async () => {
    await docsInsert(store, 'arr', [{ _id: 1, a: [{ x: 1 }, { x: 2 }] }]).durable;
    expect((await run([{ $set: { 'a.y': 0 } }], 'arr'))[0]).toEqual({ _id: 1, a: [{ x: 1, y: 0 }, { x: 2, y: 0 }] });
  });
  it('unsets and replaces the root', async () => {
    expect((await run([{ $match: { _id: 3 } }, { $unset: ['date', 'tags'] }]))[0]).toEqual({ _id: 3, item: 'xyz', price: 5, quantity: 10 });
    expect((await run([{ $match: { _id: 3 } }, { $replaceWith: { item: '$item', doubled: { $multiply: [2, '$price'] } } }]))[0]).toEqual({ item: 'xyz', doubled: 10 });
    await refuses([{ $replaceRoot: { newRoot: '$price' } }], /'newRoot' expression must evaluate to an object, but resulting value was: int/);
  });
});

describe('$unwind (manual examples)', () => {
  it('gives a document per element; empty, null and missing give none', async () => {
    expect((await run([{ $unwind: '$tags' }])).map((d) => [d['_id'], d['tags']])).toEqual([[1, 'a'], [1, 'b'], [3, 'b']]);
  });
  it('keeps them with preserveNullAndEmptyArrays, with the index', async () => {
    expect((await run([{ $unwind: { path: '$tags', includeArrayIndex: 'i', preserveNullAndEmptyArrays: true } }, { $project: { tags: 1, i: 1 } }]))).toEqual([
      { _id: 1, tags: 'a', i: 0 },
      { _id: 1, tags: 'b', i: 1 },
      { _id: 2, i: null },
      { _id: 3, tags: 'b', i: 0 },
      { _id: 4, tags: null, i: null },
      { _id: 5, i: null },
    ]);
  });
  it('takes a scalar as a one-element array', async () => {
    expect((await run([{ $match: { _id: 1 } }, { $unwind: '$item' }])).map((d) => d['item'])).toEqual(['abc']);
  });
  it('refuses a path without $', async () => refuses([{ $unwind: 'tags' }], /must be a string starting with '\$'/));
});

describe('$lookup and $facet', () => {
  it('joins by equality; missing and null local values match foreign null and missing (MongoDB)', async () => {
    await docsInsert(store, 'orders', [{ _id: 1, item: 'abc' }, { _id: 2, item: 'nope' }, { _id: 3 }]).durable;
    const out = await run([{ $lookup: { from: 'inventory', localField: 'item', foreignField: 'sku', as: 'stock' } }, { $project: { ids: '$stock._id' } }], 'orders');
    expect(out).toEqual([{ _id: 1, ids: ['i1'] }, { _id: 2, ids: [] }, { _id: 3, ids: ['i3', 'i4'] }]);
  });
  it('matches an array local value by its elements', async () => {
    await docsInsert(store, 'orders', [{ _id: 1, items: ['abc', 'xyz'] }]).durable;
    expect((await run([{ $lookup: { from: 'inventory', localField: 'items', foreignField: 'sku', as: 's' } }, { $project: { n: { $size: '$s' } } }], 'orders'))[0]).toEqual({ _id: 1, n: 2 });
  });
  it('runs a pipeline with let variables', async () => {
    const out = await run([
      { $match: { _id: { $in: [1, 3] } } },
      { $lookup: { from: 'inventory', let: { want: '$item', q: '$quantity' }, pipeline: [{ $match: { $expr: { $and: [{ $eq: ['$sku', '$$want'] }, { $gte: ['$instock', '$$q'] }] } } }, { $project: { _id: 1 } }], as: 'ok' } },
      { $project: { ok: 1 } },
    ]);
    expect(out).toEqual([{ _id: 1, ok: [{ _id: 'i1' }] }, { _id: 3, ok: [{ _id: 'i2' }] }]);
  });
  it('reads a collection that does not exist as empty', async () => {
    expect((await run([{ $match: { _id: 1 } }, { $lookup: { from: 'nowhere', localField: 'item', foreignField: 'x', as: 'r' } }]))[0]!['r']).toEqual([]);
  });
  it('runs facets over the same input', async () => {
    expect(await run([{ $facet: { byItem: [{ $sortByCount: '$item' }, { $limit: 1 }], total: [{ $count: 'n' }], priced: [{ $match: { price: { $gte: 10 } } }, { $project: { _id: 1 } }] } }])).toEqual([
      { byItem: [{ _id: 'abc', count: 2 }], total: [{ n: 5 }], priced: [{ _id: 1 }, { _id: 2 }, { _id: 5 }] },
    ]);
  });
  it('refuses a $facet inside a $facet, and a $lookup without its fields', async () => {
    await refuses([{ $facet: { a: [{ $facet: { b: [] } }] } }], /\$facet is not allowed to be used within a \$facet stage/);
    await refuses([{ $lookup: { from: 'inventory', as: 'x' } }], /requires either 'localField' and 'foreignField', or 'pipeline'/);
  });
});

describe('pipelines', () => {
  it('refuses what is not a pipeline, unknown stages and the unsupported ones by name', async () => {
    await refuses({ $match: {} }, /the pipeline must be an array of stages/);
    await refuses([{ $match: {}, $limit: 1 }], /exactly one field/);
    await refuses([{ $nope: {} }], /Unrecognized pipeline stage name: '\$nope'/);
    await refuses([{ $geoNear: { near: [0, 0] } }], /unsupported: the \$geoNear stage is not supported/);
    await refuses([{ $match: { $text: { $search: 'x' } } }], /\$text/);
    await refuses([{ $search: {} }], /unsupported: the \$search stage is not supported/);
    await refuses([{ $match: { $where: 'true' } }], /\$where/);
  });
  it('on a collection that does not exist, returns nothing', async () => {
    expect(await run([{ $match: {} }], 'none')).toEqual([]);
  });
  it('reads a snapshot: a write during a long pipeline does not show', async () => {
    const many = Array.from({ length: 3000 }, (_, i) => ({ _id: 100 + i, n: i }));
    await docsInsert(store, 'big', many).durable;
    const pending = docsAggregate(store, 'big', [{ $group: { _id: null, n: { $sum: 1 } } }]);
    await docsInsert(store, 'big', [{ _id: 1, n: -1 }]).durable;
    expect((await pending).documents).toEqual([{ _id: null, n: 3000 }]);
  });
});

describe('what a pipeline reads of its documents', () => {
  const fields = (pipeline: unknown[]): string[] | undefined => {
    const f = compilePipeline(pipeline).fields;
    return f === undefined ? undefined : [...f].sort();
  };
  it('is the paths read up to the first stage that replaces the document', () => {
    expect(fields([{ $match: { a: 1 } }, { $group: { _id: '$b.c', n: { $sum: '$d' } } }, { $project: { z: '$y' } }])).toEqual(['a', 'b.c', 'd']);
    expect(fields([{ $sort: { s: 1 } }, { $project: { x: 1, y: { $add: ['$p', '$q.r'] } } }])).toEqual(['_id', 'p', 'q.r', 's', 'x']);
    expect(fields([{ $unwind: '$u' }, { $count: 'n' }])).toEqual(['u']);
  });
  it('is the whole document when a stage may read anything, or nothing replaces it', () => {
    expect(fields([{ $group: { _id: '$$ROOT' } }])).toBeUndefined();
    expect(fields([{ $project: { a: 0 } }, { $group: { _id: null } }])).toBeUndefined();
    expect(fields([{ $match: { a: 1 } }])).toBeUndefined();
    expect(fields([{ $project: { v: { $getField: 'x' } } }])).toBeUndefined();
  });
  it('gives the same answers as whole documents', async () => {
    expect(await run([{ $group: { _id: '$$ROOT.item', doc: { $first: '$$ROOT' } } }, { $sort: { _id: 1 } }, { $limit: 1 }])).toEqual([{ _id: 'abc', doc: sales[0] }]);
    expect(await run([{ $match: { price: 5 } }, { $project: { item: 1, q: '$quantity' } }])).toEqual([{ _id: 3, item: 'xyz', q: 10 }, { _id: 4, item: 'xyz', q: 20 }]);
  });
});

describe('$graphLookup (manual examples)', () => {
  const employees = [
    { _id: 1, name: 'Dev' },
    { _id: 2, name: 'Eliot', reportsTo: 'Dev' },
    { _id: 3, name: 'Ron', reportsTo: 'Eliot' },
    { _id: 4, name: 'Andrew', reportsTo: 'Eliot' },
    { _id: 5, name: 'Asya', reportsTo: 'Ron' },
    { _id: 6, name: 'Dan', reportsTo: 'Andrew' },
  ];
  const names = (docs: unknown): string[] => (docs as Doc[]).map((d) => `${String(d['name'])}${d['depth'] === undefined ? '' : `@${String(d['depth'])}`}`).sort();
  it('follows the reporting hierarchy up, with depths', async () => {
    await docsInsert(store, 'employees', structuredClone(employees)).durable;
    const out = await run([{ $graphLookup: { from: 'employees', startWith: '$reportsTo', connectFromField: 'reportsTo', connectToField: 'name', as: 'chain', depthField: 'depth' } }, { $match: { name: 'Dan' } }], 'employees');
    expect(names(out[0]!['chain'])).toEqual(['Andrew@0', 'Dev@2', 'Eliot@1']);
  });
  it('stops at maxDepth, and filters each round', async () => {
    await docsInsert(store, 'employees', structuredClone(employees)).durable;
    const capped = await run([{ $match: { name: 'Asya' } }, { $graphLookup: { from: 'employees', startWith: '$reportsTo', connectFromField: 'reportsTo', connectToField: 'name', as: 'chain', maxDepth: 1 } }], 'employees');
    expect(names(capped[0]!['chain'])).toEqual(['Eliot', 'Ron']);
    const restricted = await run([{ $match: { name: 'Asya' } }, { $graphLookup: { from: 'employees', startWith: '$reportsTo', connectFromField: 'reportsTo', connectToField: 'name', as: 'chain', restrictSearchWithMatch: { _id: { $ne: 2 } } } }], 'employees');
    expect(names(restricted[0]!['chain'])).toEqual(['Ron']);
  });
  it('follows array values and stops at cycles', async () => {
    await docsInsert(store, 'airports', [
      { _id: 0, airport: 'JFK', connects: ['BOS', 'ORD'] },
      { _id: 1, airport: 'BOS', connects: ['JFK', 'PWM'] },
      { _id: 2, airport: 'ORD', connects: ['JFK'] },
      { _id: 3, airport: 'PWM', connects: ['BOS', 'LHR'] },
      { _id: 4, airport: 'LHR', connects: ['PWM'] },
    ]).durable;
    await docsInsert(store, 'travelers', [{ _id: 1, name: 'Dev', nearestAirport: 'JFK' }]).durable;
    const out = await run([{ $graphLookup: { from: 'airports', startWith: '$nearestAirport', connectFromField: 'connects', connectToField: 'airport', maxDepth: 2, depthField: 'hops', as: 'dest' } }], 'travelers');
    expect((out[0]!['dest'] as Doc[]).map((d) => `${String(d['airport'])}:${String(d['hops'])}`).sort()).toEqual(['BOS:1', 'JFK:0', 'ORD:1', 'PWM:2']);
  });
  it('refuses a missing argument', async () => refuses([{ $graphLookup: { from: 'x', startWith: '$a', connectFromField: 'b', as: 'c' } }], /requires 'connectToField'/));
});

describe('the bound on what blocking stages hold', () => {
  it('refuses a sort of more than it may hold, and not a sort with a limit or a group of sums over the same documents', async () => {
    const big = 'x'.repeat(2000);
    // ~4 KB each by the estimate: 17,000 documents pass the 64 MiB bound.
    for (let i = 0; i < 17_000; i += 1000) {
      await docsInsert(store, 'bulky', Array.from({ length: 1000 }, (_, k) => ({ _id: i + k, k: (i + k) % 7, s: big }))).durable;
    }
    await expect(docsAggregate(store, 'bulky', [{ $sort: { k: 1 } }])).rejects.toMatchObject({ code: 'QUERY_ERROR', message: expect.stringMatching(/\$sort holds more than 67108864 bytes/) });
    expect((await run([{ $sort: { k: -1, _id: 1 } }, { $limit: 2 }, { $project: { _id: 1 } }], 'bulky')).map((d) => d['_id'])).toEqual([6, 13]);
    expect(await run([{ $group: { _id: '$k', n: { $sum: 1 }, len: { $sum: { $strLenCP: '$s' } } } }, { $sort: { _id: 1 } }, { $limit: 1 }], 'bulky')).toEqual([{ _id: 0, n: 2429, len: 2429 * 2000 }]);
    await expect(docsAggregate(store, 'bulky', [{ $group: { _id: null, all: { $push: '$s' } } }])).rejects.toMatchObject({ code: 'QUERY_ERROR', message: expect.stringMatching(/\$group holds more than/) });
    // The N accumulators hold at most n values: an n past the input holds it all, a small n
    // releases each value it drops.
    await expect(docsAggregate(store, 'bulky', [{ $group: { _id: null, all: { $lastN: { input: '$s', n: 20_000 } } } }])).rejects.toMatchObject({ code: 'QUERY_ERROR', message: expect.stringMatching(/\$group holds more than/) });
    await expect(docsAggregate(store, 'bulky', [{ $group: { _id: null, all: { $topN: { n: 20_000, output: '$s', sortBy: { k: 1 } } } } }])).rejects.toMatchObject({ code: 'QUERY_ERROR', message: expect.stringMatching(/\$group holds more than/) });
    const few = await run([{ $group: { _id: null, last: { $lastN: { input: '$s', n: 2 } }, top: { $topN: { n: 3, output: '$_id', sortBy: { k: -1, _id: 1 } } }, max: { $maxN: { input: '$s', n: 2 } } } }, { $project: { _id: 0, last: { $size: '$last' }, top: 1, max: { $size: '$max' } } }], 'bulky');
    expect(few).toEqual([{ last: 2, top: [6, 13, 20], max: 2 }]);
  }, 60_000);
});

describe('$lookup let variables in nested $expr', () => {
  it('reads them inside $or and $and of the sub-pipeline $match', async () => {
    const out = await run([
      { $match: { _id: { $in: [1, 2] } } },
      { $lookup: { from: 'inventory', let: { want: '$item' }, pipeline: [{ $match: { $or: [{ $expr: { $eq: ['$sku', '$$want'] } }, { _id: 'i4' }] } }, { $project: { _id: 1 } }], as: 'm' } },
      { $project: { m: 1 } },
    ]);
    expect(out).toEqual([{ _id: 1, m: [{ _id: 'i1' }, { _id: 'i4' }] }, { _id: 2, m: [{ _id: 'i4' }] }]);
  });
});

describe('$bucket and $unionWith (manual examples)', () => {
  const artists = [
    { _id: 1, last_name: 'Bernard', year_born: 1868 },
    { _id: 2, last_name: 'Rippl-Ronai', year_born: 1861 },
    { _id: 3, last_name: 'Ostroumova', year_born: 1871 },
    { _id: 4, last_name: 'Van Gogh', year_born: 1853 },
    { _id: 5, last_name: 'Maurer', year_born: 1868 },
    { _id: 6, last_name: 'Munch', year_born: 1863 },
    { _id: 7, last_name: 'Redon', year_born: 1840 },
    { _id: 8, last_name: 'Diriks', year_born: 1855 },
    { _id: 9, last_name: 'Later', year_born: 1900 },
  ];
  it('groups into the boundary ranges, the default last', async () => {
    await docsInsert(store, 'artists', structuredClone(artists)).durable;
    const out = await run([{ $bucket: { groupBy: '$year_born', boundaries: [1840, 1850, 1860, 1870, 1880], default: 'Other', output: { count: { $sum: 1 }, names: { $push: '$last_name' } } } }], 'artists');
    expect(out).toEqual([
      { _id: 1840, count: 1, names: ['Redon'] },
      { _id: 1850, count: 2, names: ['Van Gogh', 'Diriks'] },
      { _id: 1860, count: 4, names: ['Bernard', 'Rippl-Ronai', 'Maurer', 'Munch'] },
      { _id: 1870, count: 1, names: ['Ostroumova'] },
      { _id: 'Other', count: 1, names: ['Later'] },
    ]);
    expect(await run([{ $bucket: { groupBy: '$year_born', boundaries: [1800, 1860, 2000] } }], 'artists')).toEqual([{ _id: 1800, count: 3 }, { _id: 1860, count: 6 }]);
  });
  it('refuses a value outside every range without a default, and bad boundaries', async () => {
    await docsInsert(store, 'artists', structuredClone(artists)).durable;
    await expect(docsAggregate(store, 'artists', [{ $bucket: { groupBy: '$year_born', boundaries: [1840, 1880] } }])).rejects.toMatchObject({ message: expect.stringMatching(/could not find a matching branch/) });
    await refuses([{ $bucket: { groupBy: '$x', boundaries: [3, 1] } }], /ascending order/);
    await refuses([{ $bucket: { groupBy: '$x', boundaries: [0, 5, 'a', 'z'] } }], /must have the same type; found int and string/);
    expect(await run([{ $bucket: { groupBy: '$year_born', boundaries: [1800, 1860.5, 2000] } }], 'artists')).toHaveLength(2); // numbers of any kind mix
    await refuses([{ $bucket: { groupBy: '$x', boundaries: [1, 3], default: 2 } }], /'default' field must be less than the lowest boundary/);
  });
  it('appends another collection, through its own pipeline', async () => {
    await docsInsert(store, 'artists', structuredClone(artists).slice(0, 2)).durable;
    const out = await run([{ $match: { _id: 1 } }, { $project: { who: '$item' } }, { $unionWith: { coll: 'artists', pipeline: [{ $project: { who: '$last_name' } }] } }, { $unionWith: 'inventory' }, { $count: 'n' }]);
    expect(out).toEqual([{ n: 1 + 2 + 4 }]);
    const names = await run([{ $match: { _id: 1 } }, { $project: { who: '$item' } }, { $unionWith: { coll: 'artists', pipeline: [{ $project: { who: '$last_name' } }] } }]);
    expect(names).toEqual([{ _id: 1, who: 'abc' }, { _id: 1, who: 'Bernard' }, { _id: 2, who: 'Rippl-Ronai' }]);
  });
});

describe('large values', () => {
  // One stored document under 1 MiB with an array of 150,000 numbers.
  const big = Array.from({ length: 150_000 }, (_, i) => i % 1000);
  beforeEach(async () => {
    await docsInsert(store, 'big', [{ _id: 1, big }]).durable;
  });

  it('concatenates, unwinds into $facet and $lookup pipelines past 120k elements (spreading them as arguments threw RangeError: a 500)', async () => {
    expect(await run([{ $project: { n: { $size: { $concatArrays: ['$big', [1]] } } } }], 'big')).toEqual([{ _id: 1, n: 150_001 }]);
    expect(await run([{ $facet: { u: [{ $unwind: '$big' }, { $count: 'n' }] } }], 'big')).toEqual([{ u: [{ n: 150_000 }] }]);
    const [looked] = await run([{ $lookup: { from: 'big', pipeline: [{ $unwind: '$big' }, { $project: { big: 1, _id: 0 } }], as: 'x' } }, { $project: { n: { $size: '$x' } } }], 'big');
    expect(looked).toEqual({ _id: 1, n: 150_000 });
    expect(await run([{ $unwind: '$big' }, { $group: { _id: null, n: { $sum: 1 } } }], 'big')).toEqual([{ _id: null, n: 150_000 }]);
  });

  it('refuses a string built past 16 MiB characters with a 400, not a 500', async () => {
    await expect(
      docsAggregate(store, 'big', [{ $project: { s: { $reduce: { input: { $range: [0, 30] }, initialValue: 'ab', in: { $concat: ['$$value', '$$value'] } } } } }]),
    ).rejects.toMatchObject({ code: 'QUERY_ERROR', message: expect.stringMatching(/\$concat would make a string of more than/) });
  });

  it('keeps distinct values by hashing: set operators and $addToSet over 150k values (comparing every pair took minutes)', async () => {
    const [out] = await run(
      [
        {
          $project: {
            _id: 0,
            union: { $size: { $setUnion: ['$big', { $range: [500, 1500] }] } },
            inter: { $size: { $setIntersection: ['$big', { $range: [990, 2000] }] } },
            diff: { $size: { $setDifference: ['$big', { $range: [0, 10] }] } },
            equals: { $setEquals: ['$big', { $range: [0, 1000] }] },
            subset: { $setIsSubset: [{ $range: [0, 1000] }, '$big'] },
          },
        },
      ],
      'big',
    );
    expect(out).toEqual({ union: 1500, inter: 10, diff: 990, equals: true, subset: true });
    const [set] = await run([{ $unwind: '$big' }, { $group: { _id: null, s: { $addToSet: '$big' } } }, { $project: { n: { $size: '$s' } } }], 'big');
    expect(set).toEqual({ _id: null, n: 1000 });
    // Equal in BSON terms is one value: 1 and 1.0, -0 and 0, equal documents (field order counts), equal dates.
    const [mixed] = await run([
      { $limit: 1 },
      {
        $project: {
          _id: 0,
          u: { $setUnion: [[1, 1.0, 0, -0, { a: 1, b: 2 }, { a: 1, b: 2 }, { b: 2, a: 1 }, { $literal: 'x' }, [1], [1]], [] ] },
          d: { $setUnion: [[{ $toDate: 0 }, { $toDate: 0 }, { $toDate: 1 }]] },
        },
      },
    ]);
    expect(mixed).toEqual({ u: [1, 0, { a: 1, b: 2 }, { b: 2, a: 1 }, 'x', [1]], d: [new Date(0), new Date(1)] });
  }, 30_000);
});
