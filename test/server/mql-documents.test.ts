// The $documents stage over HTTP on a real server: an aggregate without a collection (MongoDB's
// db.aggregate, {aggregate: 1}) and $lookup/$unionWith pipelines that read no collection. The
// manual's examples, MongoDB's jstests (jstests/aggregation/sources/documents/basics.js,
// subpipeline_validation.js), MongoDB's errors (its $documents construction's 40228, 40602,
// 40600, InvalidNamespace, the $lookup/$unionWith FailedToParse messages), the blocking bound,
// and a randomized comparison with mingo (an oracle only).
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { randomInt, seededRandom } from '../helpers/random.js';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const seed = (documents: unknown[]): Promise<string> => file.seed(documents, 'doc');

/** A collection-less aggregate (no `collection` in the request): its documents, the answer 200. */
async function dbAggregate(pipeline: unknown[]): Promise<any[]> {
  const res = await mql('aggregate', { pipeline });
  expect(res.status, res.text).toBe(200);
  expect(res.body.executedBy).toBe('native');
  return res.body.documents;
}

/** The 400 an aggregate gets: its code and message. */
async function refused(body: Record<string, unknown>): Promise<{ code: string; message: string }> {
  const res = await mql('aggregate', body);
  expect(res.status, res.text).toBe(400);
  return res.body.error;
}

describe('the manual', () => {
  it('tests a pipeline stage on literal documents, without a collection', async () => {
    expect(await dbAggregate([{ $documents: [{ x: 10 }, { x: 2 }, { x: 5 }] }, { $bucketAuto: { groupBy: '$x', buckets: 4 } }])).toEqual([
      { _id: { min: 2, max: 5 }, count: 1 },
      { _id: { min: 5, max: 10 }, count: 1 },
      { _id: { min: 10, max: 10 }, count: 1 },
    ]);
  });

  it('correlates a collection with literal documents in a $lookup (no from, localField/foreignField)', async () => {
    const locations = await seed([{ _id: 1, zip: 94301, name: 'Palo Alto' }, { _id: 2, zip: 10019, name: 'New York' }]);
    const pipeline = [
      { $match: {} },
      { $lookup: { localField: 'zip', foreignField: 'zip_id', as: 'city_state', pipeline: [{ $documents: [{ zip_id: 94301, name: 'Palo Alto, CA' }, { zip_id: 10019, name: 'New York, NY' }] }] } },
      { $sort: { _id: 1 } },
    ];
    expect(await file.aggregate(locations, pipeline)).toEqual([
      { _id: 1, zip: 94301, name: 'Palo Alto', city_state: [{ zip_id: 94301, name: 'Palo Alto, CA' }] },
      { _id: 2, zip: 10019, name: 'New York', city_state: [{ zip_id: 10019, name: 'New York, NY' }] },
    ]);
  });
});

describe("MongoDB's jstests (documents/basics.js)", () => {
  it('an array of objects, in order', async () => {
    expect(await dbAggregate([{ $documents: [{ a1: 1 }, { a1: 2 }] }])).toEqual([{ a1: 1 }, { a1: 2 }]);
    expect(await dbAggregate([{ $documents: [{ a: [1, 2, 3] }] }])).toEqual([{ a: [1, 2, 3] }]);
  });

  it('an expression that evaluates to an array of objects', async () => {
    const docs = await dbAggregate([{ $documents: { $map: { input: { $range: [0, 100] }, in: { x: '$$this' } } } }]);
    expect(docs).toEqual(Array.from({ length: 100 }, (_, i) => ({ x: i })));
  });

  it('in a $unionWith without coll', async () => {
    const c = await seed([{ _id: 1, a: 1 }]);
    const generated = await file.aggregate(c, [
      { $unionWith: { pipeline: [{ $documents: { $map: { input: { $range: [0, 5] }, in: { x: '$$this' } } } }] } },
      { $group: { _id: '$x', x: { $first: '$x' } } },
      { $project: { _id: 0 } },
      { $sort: { x: 1 } },
    ]);
    expect(generated).toEqual([{ x: null }, { x: 0 }, { x: 1 }, { x: 2 }, { x: 3 }, { x: 4 }]);
    const constant = await file.aggregate(c, [{ $unionWith: { pipeline: [{ $documents: [{ xx: 1 }, { xx: 2 }] }] } }, { $group: { _id: '$xx', xx: { $first: '$xx' } } }, { $project: { _id: 0 } }, { $sort: { xx: 1 } }]);
    expect(constant).toEqual([{ xx: null }, { xx: 1 }, { xx: 2 }]);
  });

  it('in a $lookup without from: with let and $match $expr, and with localField/foreignField', async () => {
    const names = await seed(Array.from({ length: 10 }, (_, i) => ({ _id: i, id_name: i, name: `name_${i}` })));
    const expected = [
      { id_name: 1, name: 'name_1', names: [{ xx: 1 }] },
      { id_name: 2, name: 'name_2', names: [{ xx: 2 }] },
    ];
    const withLet = [
      { $lookup: { let: { id_lookup: '$id_name' }, pipeline: [{ $documents: [{ xx: 1 }, { xx: 2 }] }, { $match: { $expr: { $eq: ['$$id_lookup', '$xx'] } } }], as: 'names' } },
      { $match: { names: { $ne: [] } } },
      { $sort: { _id: 1 } },
      { $project: { _id: 0 } },
    ];
    expect(await file.aggregate(names, withLet)).toEqual(expected);
    const withFields = [
      { $lookup: { localField: 'id_name', foreignField: 'xx', pipeline: [{ $documents: [{ xx: 1 }, { xx: 2 }] }], as: 'names' } },
      { $match: { names: { $ne: [] } } },
      { $sort: { _id: 1 } },
      { $project: { _id: 0 } },
    ];
    expect(await file.aggregate(names, withFields)).toEqual(expected);
  });

  const refusals: ReadonlyArray<readonly [string, Record<string, unknown>, string, RegExp]> = [
    ['$documents first in a collection\'s pipeline', { collection: 'docs-any', pipeline: [{ $documents: { $map: { input: { $range: [0, 100] }, in: { x: '$$this' } } } }] }, 'QUERY_ERROR', /^'\$documents' can only be run with \{aggregate: 1\}/],
    ['$documents after another stage', { collection: 'docs-any', pipeline: [{ $project: { a: [{ xx: 1 }, { xx: 2 }] } }, { $documents: [{ a: 1 }] }] }, 'QUERY_ERROR', /^\$documents is only valid as the first stage in a pipeline$/],
    ['a pipeline without a collection that does not start with $documents', { pipeline: [{ $project: { a: [{ xx: 1 }, { xx: 2 }] } }, { $documents: [{ a: 1 }] }] }, 'QUERY_ERROR', /^\$documents is only valid as the first stage in a pipeline$/],
    ['a $unionWith pipeline without coll and without $documents', { collection: 'docs-any', pipeline: [{ $unionWith: { pipeline: [{ $project: { a: [{ xx: 1 }, { xx: 2 }] } }] } }] }, 'QUERY_ERROR', /^\$unionWith stage without explicit collection must have a pipeline with \$documents as first stage$/],
    ['a $unionWith with neither coll nor pipeline', { collection: 'docs-any', pipeline: [{ $unionWith: {} }] }, 'QUERY_ERROR', /^\$unionWith stage without explicit collection must have a pipeline with \$documents as first stage$/],
    ['a $lookup without from and without $documents', { collection: 'docs-any', pipeline: [{ $lookup: { let: { id_lookup: '$id_name' }, as: 'aa', pipeline: [{ $project: { a: [{ xx: 1 }, { xx: 2 }] } }] } }] }, 'QUERY_ERROR', /^\$lookup stage without explicit collection must have a pipeline with \$documents as first stage$/],
    ['a $lookup without from and without pipeline', { collection: 'docs-any', pipeline: [{ $lookup: { let: { id_lookup: '$id_name' }, as: 'aa' } }] }, 'QUERY_ERROR', /^must specify 'pipeline' when 'from' is empty$/],
    ['an array of numbers', { pipeline: [{ $documents: [1, 2, 3] }] }, 'QUERY_ERROR', /^'newRoot' expression must evaluate to an object, but resulting value was: 1\. Type of resulting value: 'int'\. Input document: \{_tempDocumentsField: 1\}$/],
    ['an object and a number', { pipeline: [{ $documents: [{ a: 1 }, 2] }] }, 'QUERY_ERROR', /but resulting value was: 2\. Type of resulting value: 'int'/],
    ['a string', { pipeline: [{ $documents: 'string' }] }, 'QUERY_ERROR', /but resulting value was: "string"\. Type of resulting value: 'string'/],
    ['an array holding null', { pipeline: [{ $documents: [{ a: 1 }, null] }] }, 'QUERY_ERROR', /but resulting value was: null\. Type of resulting value: 'null'/],
  ];
  for (const [name, body, code, message] of refusals) {
    it(`refuses ${name}`, async () => {
      const error = await refused(body);
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
    });
  }

  it('refuses a pipeline without a collection that does not start with $documents, as the request\'s fault', async () => {
    for (const pipeline of [[{ $match: {} }], []]) {
      const error = await refused({ pipeline });
      expect(error.code).toBe('VALIDATION_FAILED');
      expect(error.message).toBe('collection is required, unless the pipeline starts with $documents');
    }
  });
});

describe("MongoDB's jstests (documents/subpipeline_validation.js)", () => {
  it('a collection\'s pipeline with $documents in its sub-pipelines', async () => {
    const c = await seed([{ _id: 0, arr: [{}, {}] }]);
    expect(await file.aggregate(c, [{ $lookup: { let: { documents: '$arr' }, pipeline: [{ $documents: '$$documents' }], as: 'duplicated' } }])).toEqual([{ _id: 0, arr: [{}, {}], duplicated: [{}, {}] }]);
    expect(await file.aggregate(c, [{ $unionWith: { pipeline: [{ $documents: [{ _id: 'gen' }] }] } }])).toEqual([{ _id: 0, arr: [{}, {}] }, { _id: 'gen' }]);
    const nested = await file.aggregate(c, [{ $unionWith: { coll: c, pipeline: [{ $lookup: { pipeline: [{ $documents: [] }, { $unionWith: { coll: c, pipeline: [] } }], as: 'nest' } }] } }]);
    expect(nested).toEqual([{ _id: 0, arr: [{}, {}] }, { _id: 0, arr: [{}, {}], nest: [{ _id: 0, arr: [{}, {}] }] }]);
  });

  it('a collection-less pipeline with $facet, $lookup, $unionWith and $merge after its $documents', async () => {
    const facet = await dbAggregate([
      { $documents: [{ x: 1, y: 1, val: 1 }, { x: 2, y: 2, val: 1 }, { x: 3, y: 1, val: 2 }, { x: 2, y: 2, val: 1 }] },
      { $facet: { sumByX: [{ $group: { _id: '$x', sum: { $sum: '$val' } } }, { $sort: { _id: 1 } }], sumByY: [{ $group: { _id: '$y', sum: { $sum: '$val' } } }, { $sort: { _id: 1 } }] } },
    ]);
    expect(facet).toEqual([{ sumByX: [{ _id: 1, sum: 1 }, { _id: 2, sum: 2 }, { _id: 3, sum: 2 }], sumByY: [{ _id: 1, sum: 3 }, { _id: 2, sum: 2 }] }]);

    expect(await dbAggregate([{ $documents: [{ x: 1, arr: [{ x: 2 }] }, { y: 1, arr: [] }] }, { $lookup: { let: { documents: '$arr' }, pipeline: [{ $documents: '$$documents' }], as: 'duplicated' } }])).toEqual([
      { x: 1, arr: [{ x: 2 }], duplicated: [{ x: 2 }] },
      { y: 1, arr: [], duplicated: [] },
    ]);

    const c = await seed([{ _id: 0, arr: [{}, {}] }]);
    expect(await dbAggregate([{ $documents: [{ _id: 2 }, { _id: 4 }] }, { $unionWith: { coll: c, pipeline: [] } }])).toEqual([{ _id: 2 }, { _id: 4 }, { _id: 0, arr: [{}, {}] }]);

    const merged = await mql('aggregate', { pipeline: [{ $documents: [{ _id: 2, x: 'foo' }, { _id: 4, x: 'bar' }] }, { $merge: { into: 'docs-target', on: '_id' } }] });
    expect(merged.status, merged.text).toBe(200);
    expect(merged.body.documents).toEqual([]);
    expect(await file.all('docs-target')).toEqual([{ _id: 2, x: 'foo' }, { _id: 4, x: 'bar' }]);

    const all = await dbAggregate([
      { $documents: [{ _id: 'first' }] },
      {
        $unionWith: {
          pipeline: [
            { $documents: [{ _id: 'uw' }] },
            { $unionWith: { pipeline: [{ $documents: [{ _id: 'uw_2' }] }] } },
            { $facet: { allTogether: [{ $group: { _id: null, all: { $addToSet: '$_id' } } }], countEach: [{ $group: { _id: '$_id', count: { $sum: 1 } } }, { $sort: { _id: 1 } }] } },
            { $lookup: { pipeline: [{ $documents: [{ x: 'lu1' }, { x: 'lu2' }] }], as: 'xs' } },
            { $set: { xs: { $map: { input: '$xs', in: '$$this.x' } } } },
          ],
        },
      },
    ]);
    expect(all).toEqual([{ _id: 'first' }, { allTogether: [{ _id: null, all: ['uw', 'uw_2'] }], countEach: [{ _id: 'uw', count: 1 }, { _id: 'uw_2', count: 1 }], xs: ['lu1', 'lu2'] }]);
  });

  it('a $lookup with from, or a $unionWith with coll, whose pipeline starts with $documents reads those instead', async () => {
    const c = await seed([{ _id: 0, arr: [{ z: 1 }] }]);
    const other = await seed([{ _id: 'never read' }]);
    expect(await file.aggregate(c, [{ $lookup: { from: other, pipeline: [{ $documents: [] }], as: 'lustuff' } }])).toEqual([{ _id: 0, arr: [{ z: 1 }], lustuff: [] }]);
    expect(await file.aggregate(c, [{ $lookup: { from: other, let: { docs: '$arr' }, pipeline: [{ $documents: '$$docs' }], as: 'lustuff' } }])).toEqual([{ _id: 0, arr: [{ z: 1 }], lustuff: [{ z: 1 }] }]);
    expect(await file.aggregate(c, [{ $unionWith: { coll: other, pipeline: [{ $documents: [] }] } }])).toEqual([{ _id: 0, arr: [{ z: 1 }] }]);
  });

  it('refuses $documents inside $facet', async () => {
    const error = await refused({ collection: 'docs-any', pipeline: [{ $facet: { test: [{ $documents: [] }] } }] });
    expect(error.code).toBe('QUERY_ERROR');
    expect(error.message).toBe('$documents is not allowed to be used within a $facet stage');
  });
});

describe('values that are not an array', () => {
  it('null, a missing field and an empty array give no documents (the $unwind MongoDB builds it with)', async () => {
    expect(await dbAggregate([{ $documents: null }])).toEqual([]);
    expect(await dbAggregate([{ $documents: '$nothing' }])).toEqual([]);
    expect(await dbAggregate([{ $documents: [] }])).toEqual([]);
  });

  it('a single document counts as one (as $unwind takes a non-array value)', async () => {
    expect(await dbAggregate([{ $documents: { $literal: { a: 1 } } }])).toEqual([{ a: 1 }]);
  });
});

describe('the blocking bound', () => {
  it('counts the array it holds: past 64 MiB, a 400 naming $documents', async () => {
    // 200,000 documents of a 200-character string: about 90 MB by the estimate.
    const big = { $map: { input: { $range: [0, 200_000] }, in: { s: { $concat: ['x'.repeat(200), { $toString: '$$this' }] } } } };
    const error = await refused({ pipeline: [{ $documents: big }, { $limit: 1 }] });
    expect(error.code).toBe('QUERY_ERROR');
    expect(error.message).toMatch(/^\$documents holds more than 67108864 bytes of documents/);
  });
});

describe('against mingo', () => {
  it('agrees on random literal documents through $match, $project and $sort', async () => {
    const rand = seededRandom(31);
    for (let round = 0; round < 10; round++) {
      const docs = Array.from({ length: randomInt(rand, 0, 30) }, (_, i) => ({ _id: i, a: randomInt(rand, 0, 9), b: rand() < 0.5 ? 'x' : { c: randomInt(rand, 0, 3) } }));
      const rest = [{ $match: { a: { $gte: randomInt(rand, 0, 9) } } }, { $project: { a: 1, twice: { $multiply: ['$a', 2] } } }, { $sort: { a: -1, _id: 1 } }];
      expect(await dbAggregate([{ $documents: docs }, ...rest]), `round ${round}`).toEqual(aggregate([], [{ $documents: docs }, ...rest]));
    }
  });
});
