// $fill over HTTP: the manual's examples (a constant value, linear interpolation, last
// observation carried forward, per partition), mingo where it agrees, and the refusals with
// MongoDB's messages.
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { fromJson, type Doc } from '../../../../engine/docs/index.js';
import { aggregateHarness, expectQueryError } from '../../../helpers/aggregate-cases.js';

const date = (iso: string) => ({ $date: iso });
const dailySales = [
  { _id: 1, date: date('2022-02-02T00:00:00Z'), bootsSold: 10, sandalsSold: 20, sneakersSold: 12 },
  { _id: 2, date: date('2022-02-03T00:00:00Z'), bootsSold: 7, sneakersSold: 18 },
  { _id: 3, date: date('2022-02-04T00:00:00Z'), sneakersSold: 5 },
];
const stock = [500, undefined, 515, undefined, null, 560].map((price, i) => ({ _id: i + 1, time: date(`2021-03-08T${String(9 + i).padStart(2, '0')}:00:00Z`), ...(price === undefined ? {} : { price }) }));
const reviews = [90, 92, undefined, undefined, 85, undefined].map((score, i) => ({ _id: i + 1, date: date(`2021-03-${String(8 + i).padStart(2, '0')}T00:00:00Z`), ...(score === undefined ? {} : { score }) }));
const multiple = [
  { _id: 1, date: date('2021-03-08T00:00:00Z'), restaurant: 'Joe', score: 90 },
  { _id: 2, date: date('2021-03-08T00:00:00Z'), restaurant: 'Sally', score: 75 },
  { _id: 3, date: date('2021-03-09T00:00:00Z'), restaurant: 'Joe', score: 92 },
  { _id: 4, date: date('2021-03-09T00:00:00Z'), restaurant: 'Sally' },
  { _id: 5, date: date('2021-03-10T00:00:00Z'), restaurant: 'Joe' },
  { _id: 6, date: date('2021-03-10T00:00:00Z'), restaurant: 'Sally', score: 68 },
  { _id: 7, date: date('2021-03-11T00:00:00Z'), restaurant: 'Joe', score: 72 },
  { _id: 8, date: date('2021-03-11T00:00:00Z'), restaurant: 'Sally' },
];

const h = aggregateHarness({ dailySales, stock, reviews, multiple });

type Case = readonly [name: string, collection: string, spec: Doc, field: string, expected: Array<[number, unknown]>, oracle?: 'mingo'];

describe('$fill (the manual)', () => {
  const cases: Case[] = [
    ['a constant value for missing fields', 'dailySales', { output: { bootsSold: { value: 0 }, sandalsSold: { value: 0 }, sneakersSold: { value: 0 } } }, 'sandalsSold', [[1, 20], [2, 0], [3, 0]], 'mingo'],
    ['linear interpolation of missing and null prices', 'stock', { sortBy: { time: 1 }, output: { price: { method: 'linear' } } }, 'price', [[1, 500], [2, 507.5], [3, 515], [4, 530], [5, 545], [6, 560]], 'mingo'],
    ['the last observed score carried forward', 'reviews', { sortBy: { date: 1 }, output: { score: { method: 'locf' } } }, 'score', [[1, 90], [2, 92], [3, 92], [4, 92], [5, 85], [6, 85]], 'mingo'],
    ['locf per restaurant (partitionByFields), partitions in key order', 'multiple', { sortBy: { date: 1 }, partitionByFields: ['restaurant'], output: { score: { method: 'locf' } } }, 'score',
      [[1, 90], [3, 92], [5, 92], [7, 72], [2, 75], [4, 75], [6, 68], [8, 68]]],
    ['locf per restaurant (partitionBy)', 'multiple', { sortBy: { date: 1 }, partitionBy: { restaurant: '$restaurant' }, output: { score: { method: 'locf' } } }, 'score',
      [[1, 90], [3, 92], [5, 92], [7, 72], [2, 75], [4, 75], [6, 68], [8, 68]]],
  ];
  for (const [name, collection, spec, field, expected, oracle] of cases) {
    it(name, async () => {
      const res = await h.aggregate([{ $fill: spec }], collection);
      expect(res.status, res.text).toBe(200);
      expect(res.body.documents.map((d: Doc) => [d['_id'], d[field]])).toEqual(expected);
      if (oracle === 'mingo') {
        const theirs = (aggregate(h.docs(collection), [{ $fill: spec }]) as Doc[]).map((d) => [d['_id'], d[field]]);
        expect(theirs, 'mingo').toEqual(fromJson(structuredClone(expected)));
      }
    });
  }

  it('tells filled values apart with a $set before it (the manual)', async () => {
    const res = await h.aggregate([{ $set: { valueExisted: { $ifNull: [{ $toBool: { $toString: '$score' } }, false] } } }, { $fill: { sortBy: { date: 1 }, output: { score: { method: 'locf' } } } }], 'reviews');
    expect(res.body.documents.map((d: Doc) => [d['score'], d['valueExisted']])).toEqual([[90, true], [92, true], [92, false], [92, false], [85, true], [85, false]]);
  });

  it.each([
    ['a spec that is not an object', 1, /The \$fill stage specification must be an object, found int/],
    ['no output', { sortBy: { a: 1 } }, /BSON field '\$fill.output' is missing but a required field/],
    ['an empty output', { output: {} }, /The output field in '\$fill' must contain an object with at least one element/],
    ['an unknown field', { output: { a: { value: 1 } }, foo: 1 }, /BSON field '\$fill.foo' is an unknown field./],
    ['an output field that is not an object', { output: { a: 1 } }, /Each fill output specification must be an object with exactly one field/],
    ['both method and value', { sortBy: { a: 1 }, output: { a: { method: 'locf', value: 1 } } }, /exactly one of 'method' or 'value' fields, not both/],
    ['an unknown method', { output: { a: { method: 'mean' } } }, /Method must be either locf or linear/],
    ['partitionBy and partitionByFields', { partitionBy: '$a', partitionByFields: ['a'], output: { b: { method: 'locf' } } }, /Maximum one of 'partitionBy' and 'partitionByFields can be specified in '\$fill'/],
    ['linear without sortBy', { output: { a: { method: 'linear' } } }, /\$linearFill must be specified with a top level sortBy expression with exactly one element/],
  ])('refuses %s', async (_name, spec, message) => {
    const res = await h.aggregate([{ $match: { _id: 'none' } }, { $fill: spec }], 'stock');
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('QUERY_ERROR');
    expect(res.body.error.message).toMatch(message);
  });

  it('refuses a value to interpolate that is not a number, when read', async () => {
    expectQueryError(await h.aggregate([{ $fill: { sortBy: { date: 1 }, output: { restaurant: { method: 'linear' } } } }], 'multiple'), '$setWindowFields', /Value to be filled must be numeric or nullish, but found string/);
  });
});
