// $setWindowFields over HTTP: the manual's examples (cakeSales, deliveryFleet, powerConsumption,
// stockPrices), edge cases (null and missing values, mixed types in sortBy, empty windows,
// unbounded and current bounds, range windows over dates with units, ties in the ranks, dot
// paths), mingo (the oracle) where it agrees with the manual, and the refusals with MongoDB's
// messages, checked when the pipeline is compiled.
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { compilePipeline, fromJson, IN_MEMORY_ONLY, type Doc } from '../../../../engine/docs/index.js';
import { aggregateHarness, expectQueryError } from '../../../helpers/aggregate-cases.js';

const date = (iso: string) => ({ $date: iso });

const cakeSales = [
  { _id: 0, type: 'chocolate', orderDate: date('2020-05-18T14:10:30Z'), state: 'CA', price: 13, quantity: 120 },
  { _id: 1, type: 'chocolate', orderDate: date('2021-03-20T11:30:05Z'), state: 'WA', price: 14, quantity: 140 },
  { _id: 2, type: 'vanilla', orderDate: date('2021-01-11T06:31:15Z'), state: 'CA', price: 12, quantity: 145 },
  { _id: 3, type: 'vanilla', orderDate: date('2020-02-08T13:13:23Z'), state: 'WA', price: 13, quantity: 104 },
  { _id: 4, type: 'strawberry', orderDate: date('2019-05-18T16:09:01Z'), state: 'CA', price: 41, quantity: 162 },
  { _id: 5, type: 'strawberry', orderDate: date('2019-01-08T06:12:03Z'), state: 'WA', price: 43, quantity: 134 },
];
const fleetTimes = ['14:10:30', '14:11:00', '14:11:30', '14:12:00'];
const deliveryFleet = [
  ...[1295.1, 1295.63, 1296.17, 1296.7].map((miles, i) => ({ _id: i + 1, truckID: '1', timeStamp: date(`2020-05-18T${fleetTimes[i]}Z`), miles })),
  ...[10234.1, 10234.33, 10234.73, 10235.13].map((miles, i) => ({ _id: i + 5, truckID: '2', timeStamp: date(`2020-05-18T${fleetTimes[i]}Z`), miles })),
];
const powerConsumption = [
  ...[2.95, 2.7, 2.6, 2.98].map((kilowatts, i) => ({ _id: i + 1, powerMeterID: '1', timeStamp: date(`2020-05-18T${fleetTimes[i]}Z`), kilowatts })),
  ...[2.5, 2.25, 2.75, 2.82].map((kilowatts, i) => ({ _id: i + 5, powerMeterID: '2', timeStamp: date(`2020-05-18T${fleetTimes[i]}Z`), kilowatts })),
];
const stockPrices = [
  ...[13, 15.4, 12, 11.7].map((price, i) => ({ _id: i + 1, stock: 'ABC', date: date(`2020-05-${18 + i}T20:00:00Z`), price })),
  ...[82, 94, 112, 97.3].map((price, i) => ({ _id: i + 5, stock: 'DEF', date: date(`2020-05-${18 + i}T20:00:00Z`), price })),
];
// The $locf example: hourly prices with gaps.
const hourly = [500, 550, undefined, undefined, 575, undefined].map((price, i) => ({ _id: i, time: date(`2021-03-08T${String(9 + i).padStart(2, '0')}:00:00Z`), ...(price === undefined ? {} : { price }) }));
// Edge cases: nulls, missing fields, mixed types, ties.
const edge = [
  { _id: 1, g: 'a', x: 1, v: 10 },
  { _id: 2, g: 'a', x: 2, v: null },
  { _id: 3, g: 'a', x: 2 },
  { _id: 4, g: 'a', x: 4, v: 40 },
  { _id: 5, g: null, x: 5, v: 5 },
  { _id: 6, x: 6, v: 6 },
  { _id: 7, g: 'b', x: 'seven', v: 7 },
  { _id: 8, g: 'b', x: null, v: 8 },
  { _id: 9, g: 'b', x: 9, v: 9 },
  { _id: 10, g: 'b', x: 10, v: 10 },
];
const ranks = [5, 3, 5, 1, 3, 5, null].map((score, i) => ({ _id: i + 1, ...(score === null ? {} : { score }) })).concat([{ _id: 8, score: null } as never]);

const h = aggregateHarness({ cakeSales, deliveryFleet, powerConsumption, stockPrices, hourly, edge, ranks, numeric: edge.filter((d) => d.g === 'a') });

/** A case: name, collection, the stage's spec, the documents expected (_id and the output fields, in order), and 'mingo' when mingo agrees. */
type Case = readonly [name: string, collection: string, spec: Doc, expected: Doc[], oracle?: 'mingo'];

const projected = (spec: Doc, docs: Doc[]): Doc[] =>
  docs.map((d) => {
    const out: Doc = { _id: d['_id'] };
    for (const f of Object.keys(spec['output'] as Doc)) {
      const top = f.split('.')[0]!;
      if (d[top] !== undefined) out[top] = d[top];
    }
    return out;
  });

function cases(list: readonly Case[]): void {
  for (const [name, collection, spec, expected, oracle] of list) {
    it(name, async () => {
      const res = await h.aggregate([{ $setWindowFields: spec }], collection);
      expect(res.status, res.text).toBe(200);
      expect(projected(spec, res.body.documents)).toEqual(expected);
      if (oracle === 'mingo') {
        // mingo's partitions come in another order: compared by _id.
        const theirs = projected(spec, aggregate(h.docs(collection), [{ $setWindowFields: spec }]) as Doc[]);
        const byId = (a: Doc, b: Doc) => (a['_id'] as number) - (b['_id'] as number);
        expect(theirs.sort(byId), 'mingo').toEqual((fromJson(structuredClone(expected)) as Doc[]).sort(byId));
      }
    });
  }
}

const cumulative = { $sum: '$quantity', window: { documents: ['unbounded', 'current'] } };
const byYear = { $year: '$orderDate' };

describe('$setWindowFields: the manual', () => {
  cases([
    ['cumulative quantity for each state', 'cakeSales', { partitionBy: '$state', sortBy: { orderDate: 1 }, output: { cumulativeQuantityForState: cumulative } }, [
      { _id: 4, cumulativeQuantityForState: 162 }, { _id: 0, cumulativeQuantityForState: 282 }, { _id: 2, cumulativeQuantityForState: 427 },
      { _id: 5, cumulativeQuantityForState: 134 }, { _id: 3, cumulativeQuantityForState: 238 }, { _id: 1, cumulativeQuantityForState: 378 },
    ], 'mingo'],
    ['cumulative quantity for each year', 'cakeSales', { partitionBy: byYear, sortBy: { orderDate: 1 }, output: { cumulativeQuantityForYear: cumulative } }, [
      { _id: 5, cumulativeQuantityForYear: 134 }, { _id: 4, cumulativeQuantityForYear: 296 }, { _id: 3, cumulativeQuantityForYear: 104 },
      { _id: 0, cumulativeQuantityForYear: 224 }, { _id: 2, cumulativeQuantityForYear: 145 }, { _id: 1, cumulativeQuantityForYear: 285 },
    ], 'mingo'],
    ['moving average quantity for each year', 'cakeSales', { partitionBy: byYear, sortBy: { orderDate: 1 }, output: { averageQuantity: { $avg: '$quantity', window: { documents: [-1, 0] } } } }, [
      { _id: 5, averageQuantity: 134 }, { _id: 4, averageQuantity: 148 }, { _id: 3, averageQuantity: 104 },
      { _id: 0, averageQuantity: 112 }, { _id: 2, averageQuantity: 145 }, { _id: 1, averageQuantity: 142.5 },
    ], 'mingo'],
    ['cumulative and maximum quantity for each year', 'cakeSales', {
      partitionBy: byYear, sortBy: { orderDate: 1 },
      output: { cumulativeQuantityForYear: cumulative, maximumQuantityForYear: { $max: '$quantity', window: { documents: ['unbounded', 'unbounded'] } } },
    }, [
      { _id: 5, cumulativeQuantityForYear: 134, maximumQuantityForYear: 162 }, { _id: 4, cumulativeQuantityForYear: 296, maximumQuantityForYear: 162 },
      { _id: 3, cumulativeQuantityForYear: 104, maximumQuantityForYear: 120 }, { _id: 0, cumulativeQuantityForYear: 224, maximumQuantityForYear: 120 },
      { _id: 2, cumulativeQuantityForYear: 145, maximumQuantityForYear: 145 }, { _id: 1, cumulativeQuantityForYear: 285, maximumQuantityForYear: 145 },
    ], 'mingo'],
    ['a range window: quantity of orders within 10 of the price', 'cakeSales', { partitionBy: '$state', sortBy: { price: 1 }, output: { quantityFromSimilarOrders: { $sum: '$quantity', window: { range: [-10, 10] } } } }, [
      { _id: 2, quantityFromSimilarOrders: 265 }, { _id: 0, quantityFromSimilarOrders: 265 }, { _id: 4, quantityFromSimilarOrders: 162 },
      { _id: 3, quantityFromSimilarOrders: 244 }, { _id: 1, quantityFromSimilarOrders: 244 }, { _id: 5, quantityFromSimilarOrders: 134 },
    ], 'mingo'],
    ['a time range with a positive upper bound: orders up to 10 months after', 'cakeSales', { partitionBy: '$state', sortBy: { orderDate: 1 }, output: { recentOrders: { $push: '$orderDate', window: { range: ['unbounded', 10], unit: 'month' } } } }, [
      { _id: 4, recentOrders: [date('2019-05-18T16:09:01.000Z')] },
      { _id: 0, recentOrders: [date('2019-05-18T16:09:01.000Z'), date('2020-05-18T14:10:30.000Z'), date('2021-01-11T06:31:15.000Z')] },
      { _id: 2, recentOrders: [date('2019-05-18T16:09:01.000Z'), date('2020-05-18T14:10:30.000Z'), date('2021-01-11T06:31:15.000Z')] },
      { _id: 5, recentOrders: [date('2019-01-08T06:12:03.000Z')] },
      { _id: 3, recentOrders: [date('2019-01-08T06:12:03.000Z'), date('2020-02-08T13:13:23.000Z')] },
      { _id: 1, recentOrders: [date('2019-01-08T06:12:03.000Z'), date('2020-02-08T13:13:23.000Z'), date('2021-03-20T11:30:05.000Z')] },
    ], 'mingo'],
    ['a time range with a negative upper bound: orders more than 10 months before', 'cakeSales', { partitionBy: '$state', sortBy: { orderDate: 1 }, output: { recentOrders: { $push: '$orderDate', window: { range: ['unbounded', -10], unit: 'month' } } } }, [
      { _id: 4, recentOrders: [] }, { _id: 0, recentOrders: [date('2019-05-18T16:09:01.000Z')] }, { _id: 2, recentOrders: [date('2019-05-18T16:09:01.000Z')] },
      { _id: 5, recentOrders: [] }, { _id: 3, recentOrders: [date('2019-01-08T06:12:03.000Z')] },
      { _id: 1, recentOrders: [date('2019-01-08T06:12:03.000Z'), date('2020-02-08T13:13:23.000Z')] },
    ], 'mingo'],
    ['$rank, $denseRank and $documentNumber by quantity descending', 'cakeSales', { partitionBy: '$state', sortBy: { quantity: -1 }, output: { rank: { $rank: {} }, dense: { $denseRank: {} }, n: { $documentNumber: {} } } }, [
      { _id: 4, rank: 1, dense: 1, n: 1 }, { _id: 2, rank: 2, dense: 2, n: 2 }, { _id: 0, rank: 3, dense: 3, n: 3 },
      { _id: 1, rank: 1, dense: 1, n: 1 }, { _id: 5, rank: 2, dense: 2, n: 2 }, { _id: 3, rank: 3, dense: 3, n: 3 },
    ], 'mingo'],
    ['$shift by 1 and -1 with a default', 'cakeSales', {
      partitionBy: '$state', sortBy: { quantity: -1 },
      output: { next: { $shift: { output: '$quantity', by: 1, default: 'Not available' } }, previous: { $shift: { output: '$quantity', by: -1, default: 'Not available' } } },
    }, [
      { _id: 4, next: 145, previous: 'Not available' }, { _id: 2, next: 120, previous: 162 }, { _id: 0, next: 'Not available', previous: 145 },
      { _id: 1, next: 134, previous: 'Not available' }, { _id: 5, next: 104, previous: 140 }, { _id: 3, next: 'Not available', previous: 134 },
    ], 'mingo'],
    ['$expMovingAvg with alpha', 'stockPrices', { partitionBy: '$stock', sortBy: { date: 1 }, output: { expMovingAvgForStock: { $expMovingAvg: { input: '$price', alpha: 0.75 } } } }, [
      { _id: 1, expMovingAvgForStock: 13 }, { _id: 2, expMovingAvgForStock: 14.8 }, { _id: 3, expMovingAvgForStock: 12.7 }, { _id: 4, expMovingAvgForStock: 11.95 },
      { _id: 5, expMovingAvgForStock: 82 }, { _id: 6, expMovingAvgForStock: 91 }, { _id: 7, expMovingAvgForStock: 106.75 }, { _id: 8, expMovingAvgForStock: 99.6625 },
    ], 'mingo'],
    ['$locf fills the gaps with the last price', 'hourly', { sortBy: { time: 1 }, output: { price: { $locf: '$price' } } }, [
      { _id: 0, price: 500 }, { _id: 1, price: 550 }, { _id: 2, price: 550 }, { _id: 3, price: 550 }, { _id: 4, price: 575 }, { _id: 5, price: 575 },
    ], 'mingo'],
  ]);

  it('$expMovingAvg with N (the manual; MongoDB computes in decimal, so the last bit may differ)', async () => {
    const res = await h.aggregate([{ $setWindowFields: { partitionBy: '$stock', sortBy: { date: 1 }, output: { expMovingAvgForStock: { $expMovingAvg: { input: '$price', N: 2 } } } } }], 'stockPrices');
    expect(res.status, res.text).toBe(200);
    const expected = [13, 14.6, 12.866666666666667, 12.088888888888889, 82, 90, 104.66666666666667, 99.75555555555556];
    expect(res.body.documents.map((d: Doc) => d['_id'])).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    res.body.documents.forEach((d: Doc, i: number) => expect(d['expMovingAvgForStock']).toBeCloseTo(expected[i]!, 12));
  });

  it('$derivative: average speed in miles per hour over the last 30 seconds (the manual)', async () => {
    const res = await h.aggregate([
      { $setWindowFields: { partitionBy: '$truckID', sortBy: { timeStamp: 1 }, output: { truckAverageSpeed: { $derivative: { input: '$miles', unit: 'hour' }, window: { range: [-30, 0], unit: 'second' } } } } },
      { $match: { truckAverageSpeed: { $gt: 50 } } },
    ], 'deliveryFleet');
    expect(res.status, res.text).toBe(200);
    const speeds = res.body.documents.map((d: Doc) => [d['_id'], d['truckAverageSpeed']]);
    expect(speeds.map((s: unknown[]) => s[0])).toEqual([2, 3, 4]);
    [63.6, 64.8, 63.6].forEach((v, i) => expect(speeds[i][1]).toBeCloseTo(v, 9));
  });

  it('$integral: kilowatt-hours used, cumulative (the manual)', async () => {
    const res = await h.aggregate([{ $setWindowFields: { partitionBy: '$powerMeterID', sortBy: { timeStamp: 1 }, output: { powerMeterKilowattHours: { $integral: { input: '$kilowatts', unit: 'hour' }, window: { range: ['unbounded', 'current'], unit: 'hour' } } } } }], 'powerConsumption');
    expect(res.status, res.text).toBe(200);
    const got = res.body.documents.map((d: Doc) => d['powerMeterKilowattHours']);
    const expected = [0, 0.0235416666666667, 0.045625, 0.068875, 0, 0.0197916666666667, 0.040625, 0.0638333333333333];
    expected.forEach((v, i) => expect(got[i]).toBeCloseTo(v, 9));
    const theirs = (aggregate(h.docs('powerConsumption'), [{ $setWindowFields: { partitionBy: '$powerMeterID', sortBy: { timeStamp: 1 }, output: { k: { $integral: { input: '$kilowatts', unit: 'hour' }, window: { range: ['unbounded', 'current'], unit: 'hour' } } } } }]) as Doc[])
      .sort((a, b) => (a['_id'] as number) - (b['_id'] as number)).map((d) => d['k'] as number);
    expected.forEach((v, i) => expect(theirs[i]).toBeCloseTo(v, 9));
  });
});

describe('$setWindowFields: edge cases', () => {
  cases([
    ['no partitionBy and no sortBy: one partition in input order, the whole partition by default', 'edge', { output: { total: { $sum: '$v' }, n: { $count: {} } } },
      edge.map((d) => ({ _id: d._id, total: 95, n: 10 })), 'mingo'],
    ['missing and null partition keys are one partition; partitions in key order (null first)', 'edge', { partitionBy: '$g', output: { ids: { $push: '$_id' } } }, [
      { _id: 5, ids: [5, 6] }, { _id: 6, ids: [5, 6] },
      { _id: 1, ids: [1, 2, 3, 4] }, { _id: 2, ids: [1, 2, 3, 4] }, { _id: 3, ids: [1, 2, 3, 4] }, { _id: 4, ids: [1, 2, 3, 4] },
      { _id: 7, ids: [7, 8, 9, 10] }, { _id: 8, ids: [7, 8, 9, 10] }, { _id: 9, ids: [7, 8, 9, 10] }, { _id: 10, ids: [7, 8, 9, 10] },
    ]],
    ['null and missing inputs: ignored by $sum, $avg, $min and $push, kept by $first', 'edge', { partitionBy: '$g', sortBy: { _id: 1 }, output: {
      s: { $sum: '$v', window: { documents: [-1, 0] } }, a: { $avg: '$v', window: { documents: [-1, 0] } }, m: { $min: '$v', window: { documents: [-1, 0] } },
      p: { $push: '$v', window: { documents: [-1, 0] } }, f: { $first: '$v', window: { documents: [0, 0] } },
    } }, [
      { _id: 5, s: 5, a: 5, m: 5, p: [5], f: 5 }, { _id: 6, s: 11, a: 5.5, m: 5, p: [5, 6], f: 6 },
      { _id: 1, s: 10, a: 10, m: 10, p: [10], f: 10 }, { _id: 2, s: 10, a: 10, m: 10, p: [10, null], f: null }, { _id: 3, s: 0, a: null, m: null, p: [null] },
      { _id: 4, s: 40, a: 40, m: 40, p: [40], f: 40 },
      { _id: 7, s: 7, a: 7, m: 7, p: [7], f: 7 }, { _id: 8, s: 15, a: 7.5, m: 7, p: [7, 8], f: 8 }, { _id: 9, s: 17, a: 8.5, m: 8, p: [8, 9], f: 9 }, { _id: 10, s: 19, a: 9.5, m: 9, p: [9, 10], f: 10 },
    ]],
    ['empty windows: 0 for $sum, null for $avg/$min/$max/$first, [] for $push and $addToSet', 'cakeSales', { sortBy: { _id: 1 }, output: {
      s: { $sum: '$quantity', window: { documents: [-3, -2] } }, a: { $avg: '$quantity', window: { documents: [-3, -2] } }, x: { $max: '$quantity', window: { documents: [-3, -2] } },
      f: { $first: '$quantity', window: { documents: [-3, -2] } }, p: { $push: '$quantity', window: { documents: [-3, -2] } }, u: { $addToSet: '$quantity', window: { documents: [-3, -2] } },
    } }, [
      { _id: 0, s: 0, a: null, x: null, f: null, p: [], u: [] }, { _id: 1, s: 0, a: null, x: null, f: null, p: [], u: [] },
      { _id: 2, s: 120, a: 120, x: 120, f: 120, p: [120], u: [120] }, { _id: 3, s: 260, a: 130, x: 140, f: 120, p: [120, 140], u: [120, 140] },
      { _id: 4, s: 285, a: 142.5, x: 145, f: 140, p: [140, 145], u: [140, 145] }, { _id: 5, s: 249, a: 124.5, x: 145, f: 145, p: [145, 104], u: [104, 145] },
    ]],
    ['current and unbounded bounds; windows past the partition\'s end', 'cakeSales', { sortBy: { _id: 1 }, output: {
      rest: { $sum: '$quantity', window: { documents: ['current', 'unbounded'] } }, ahead: { $push: '$_id', window: { documents: [1, 2] } }, last: { $last: '$_id', window: { documents: [1, 'unbounded'] } },
    } }, [
      { _id: 0, rest: 805, ahead: [1, 2], last: 5 }, { _id: 1, rest: 685, ahead: [2, 3], last: 5 }, { _id: 2, rest: 545, ahead: [3, 4], last: 5 },
      { _id: 3, rest: 400, ahead: [4, 5], last: 5 }, { _id: 4, rest: 296, ahead: [5], last: 5 }, { _id: 5, rest: 134, ahead: [], last: null },
    ], 'mingo'],
    ['sliding $min and $max (the monotonic deque) and $stdDevPop', 'cakeSales', { sortBy: { _id: 1 }, output: {
      lo: { $min: '$quantity', window: { documents: [-1, 1] } }, hi: { $max: '$quantity', window: { documents: [-1, 1] } }, sd: { $stdDevPop: '$price', window: { documents: [0, 1] } },
    } }, [
      { _id: 0, lo: 120, hi: 140, sd: 0.5 }, { _id: 1, lo: 120, hi: 145, sd: 1 }, { _id: 2, lo: 104, hi: 145, sd: 0.5 },
      { _id: 3, lo: 104, hi: 162, sd: 14 }, { _id: 4, lo: 104, hi: 162, sd: 1 }, { _id: 5, lo: 134, hi: 162, sd: 0 },
    ], 'mingo'],
    ['ties in $rank and $denseRank (null and missing tie), $documentNumber counts on', 'ranks', { sortBy: { score: -1 }, output: { rank: { $rank: {} }, dense: { $denseRank: {} }, n: { $documentNumber: {} } } }, [
      { _id: 1, rank: 1, dense: 1, n: 1 }, { _id: 3, rank: 1, dense: 1, n: 2 }, { _id: 6, rank: 1, dense: 1, n: 3 },
      { _id: 2, rank: 4, dense: 2, n: 4 }, { _id: 5, rank: 4, dense: 2, n: 5 }, { _id: 4, rank: 6, dense: 3, n: 6 },
      { _id: 7, rank: 7, dense: 4, n: 7 }, { _id: 8, rank: 7, dense: 4, n: 8 },
    ]],
    ['mixed types in sortBy sort in BSON order (null, numbers, strings); a range window over numbers', 'edge', { partitionBy: '$g', sortBy: { x: 1 }, output: { near: { $push: '$_id', window: { documents: [-1, 1] } } } }, [
      { _id: 5, near: [5, 6] }, { _id: 6, near: [5, 6] },
      { _id: 1, near: [1, 2] }, { _id: 2, near: [1, 2, 3] }, { _id: 3, near: [2, 3, 4] }, { _id: 4, near: [3, 4] },
      { _id: 8, near: [8, 9] }, { _id: 9, near: [8, 9, 10] }, { _id: 10, near: [9, 10, 7] }, { _id: 7, near: [10, 7] },
    ], 'mingo'],
    ['range windows: "current" is the document itself, not its ties; numbers within [-1, 1]', 'numeric', { sortBy: { x: 1 }, output: { near: { $push: '$_id', window: { range: [-1, 1] } }, upTo: { $push: '$_id', window: { range: ['unbounded', 'current'] } }, upToValue: { $push: '$_id', window: { range: ['unbounded', 0] } } } }, [
      { _id: 1, near: [1, 2, 3], upTo: [1], upToValue: [1] }, { _id: 2, near: [1, 2, 3], upTo: [1, 2], upToValue: [1, 2, 3] },
      { _id: 3, near: [1, 2, 3], upTo: [1, 2, 3], upToValue: [1, 2, 3] }, { _id: 4, near: [4], upTo: [1, 2, 3, 4], upToValue: [1, 2, 3, 4] },
    ], 'mingo'],
    ['output fields at dot paths: documents made on the way, a scalar replaced', 'cakeSales', { partitionBy: '$state', sortBy: { _id: 1 }, output: { 'stats.total': { $sum: '$quantity' }, 'type.n': { $documentNumber: {} } } }, [
      { _id: 0, stats: { total: 427 }, type: { n: 1 } }, { _id: 2, stats: { total: 427 }, type: { n: 2 } }, { _id: 4, stats: { total: 427 }, type: { n: 3 } },
      { _id: 1, stats: { total: 378 }, type: { n: 1 } }, { _id: 3, stats: { total: 378 }, type: { n: 2 } }, { _id: 5, stats: { total: 378 }, type: { n: 3 } },
    ]],
    ['$addToSet in BSON order, $mergeObjects from the partition\'s start', 'cakeSales', { partitionBy: '$state', sortBy: { price: 1 }, output: {
      types: { $addToSet: '$type', window: { documents: [-1, 0] } }, merged: { $mergeObjects: { k: '$type' }, window: { documents: ['unbounded', 'current'] } },
    } }, [
      { _id: 2, types: ['vanilla'], merged: { k: 'vanilla' } }, { _id: 0, types: ['chocolate', 'vanilla'], merged: { k: 'chocolate' } }, { _id: 4, types: ['chocolate', 'strawberry'], merged: { k: 'strawberry' } },
      { _id: 3, types: ['vanilla'], merged: { k: 'vanilla' } }, { _id: 1, types: ['chocolate', 'vanilla'], merged: { k: 'chocolate' } }, { _id: 5, types: ['chocolate', 'strawberry'], merged: { k: 'strawberry' } },
    ]],
    ['an empty collection gives nothing', 'nothing', { sortBy: { a: 1 }, output: { n: { $documentNumber: {} } } }, []],
  ]);

  it('$covarianceSamp and $covariancePop over the partition, pairs of numbers only', async () => {
    const res = await h.aggregate([{ $setWindowFields: { partitionBy: '$state', sortBy: { price: 1 }, output: { samp: { $covarianceSamp: ['$price', '$quantity'] }, pop: { $covariancePop: ['$price', { $cond: [{ $eq: ['$_id', 5] }, 'x', '$quantity'] }] } } } }], 'cakeSales');
    expect(res.status, res.text).toBe(200);
    const got = res.body.documents.map((d: Doc) => [d['samp'], d['pop']]);
    [[274, 548 / 3], [274, 548 / 3], [274, 548 / 3], [127, 9], [127, 9], [127, 9]].forEach(([samp, pop], i) => {
      expect(got[i][0]).toBeCloseTo(samp!, 9);
      expect(got[i][1]).toBeCloseTo(pop!, 9);
    });
  });

  it('$linearFill interpolates between the numbers around a gap, by the sortBy value', async () => {
    const res = await h.aggregate([{ $match: { g: 'a' } }, { $setWindowFields: { sortBy: { _id: 1 }, output: { filled: { $linearFill: '$v' } } } }], 'edge');
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents.map((d: Doc) => d['filled'])).toEqual([10, 20, 30, 40]);
  });

  it('a range window over dates with a unit of days, [-1, 0]', async () => {
    const res = await h.aggregate([{ $setWindowFields: { sortBy: { time: 1 }, output: { lastTwoHours: { $push: '$_id', window: { range: [-1, 'current'], unit: 'hour' } }, day: { $count: {}, window: { range: [-1, 0], unit: 'day' } } } } }], 'hourly');
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents.map((d: Doc) => [d['lastTwoHours'], d['day']])).toEqual([[[0], 1], [[0, 1], 2], [[1, 2], 3], [[2, 3], 4], [[3, 4], 5], [[4, 5], 6]]);
  });

  it('runs in a $facet and after other stages', async () => {
    const res = await h.aggregate([{ $facet: { a: [{ $match: { state: 'CA' } }, { $setWindowFields: { sortBy: { quantity: 1 }, output: { n: { $documentNumber: {} } } } }, { $project: { _id: 1, n: 1 } }] } }], 'cakeSales');
    expect(res.body.documents).toEqual([{ a: [{ _id: 0, n: 1 }, { _id: 2, n: 2 }, { _id: 4, n: 3 }] }]);
  });
});

describe('$setWindowFields: errors when the documents are read', () => {
  it.each([
    ['a partition key that is an array', [{ $setWindowFields: { partitionBy: '$a', output: { n: { $count: {} } } } }], 'arrays', /An expression used to partition cannot evaluate to value of type array/],
    ['a numeric range over a string sortBy value', [{ $setWindowFields: { sortBy: { x: 1 }, output: { n: { $count: {}, window: { range: [-1, 1] } } } } }], 'edge', /Invalid range: Expected the sortBy field to be a number, but it was null/],
    ['a numeric range over dates', [{ $setWindowFields: { sortBy: { time: 1 }, output: { n: { $count: {}, window: { range: [-1, 1] } } } } }], 'hourly', /Invalid range: For windows that involve date or time ranges, a unit must be provided/],
    ['a time range over numbers', [{ $setWindowFields: { sortBy: { price: 1 }, output: { n: { $count: {}, window: { range: [-1, 1], unit: 'day' } } } } }], 'cakeSales', /Invalid range: Expected the sortBy field to be a Date, but it was int/],
    ['$linearFill over repeated sortBy values', [{ $setWindowFields: { sortBy: { price: 1 }, output: { q: { $linearFill: '$quantity' } } } }], 'cakeSales', /There can be no repeated values in the sort field/],
    ['$derivative with a unit over numbers', [{ $setWindowFields: { sortBy: { price: 1 }, output: { d: { $derivative: { input: '$quantity', unit: 'hour' }, window: { documents: [-1, 0] } } } } }], 'cakeSales', /\$derivative with 'unit' expects the sortBy field to be a Date/],
  ])('refuses %s', async (_name, pipeline, collection, message) => {
    if (collection === 'arrays') {
      const res = await h.aggregate([{ $limit: 1 }, { $set: { a: [1] } }, ...pipeline], 'edge');
      expectQueryError(res, '$setWindowFields', message);
      return;
    }
    expectQueryError(await h.aggregate(pipeline, collection), '$setWindowFields', message);
  });
});

describe('$setWindowFields: bad specifications (400 QUERY_ERROR when compiled)', () => {
  const swf = (spec: unknown) => [{ $setWindowFields: spec }];
  const out = (o: unknown, extra: Doc = { sortBy: { a: 1 } }) => swf({ ...extra, output: { f: o } });
  it.each([
    ['a spec that is not an object', swf(1), /the \$setWindowFields stage specification must be an object, found int/],
    ['an unknown field', swf({ output: {}, foo: 1 }), /BSON field '\$setWindowFields.foo' is an unknown field./],
    ['no output', swf({ sortBy: { a: 1 } }), /BSON field '\$setWindowFields.output' is missing but a required field/],
    ['a sortBy that is not an object', swf({ sortBy: 1, output: {} }), /BSON field '\$setWindowFields.sortBy' is the wrong type 'int', expected type 'object'/],
    ['a constant array partitionBy', swf({ partitionBy: [1], output: {} }), /An expression used to partition cannot evaluate to value of type array/],
    ['conflicting output paths', swf({ output: { a: { $count: {} }, 'a.b': { $count: {} } } }), /'output' specification contains two conflicting paths/],
    ['an output that is not an object', out(1), /The field 'f' must be an object/],
    ['no window function', out({ foo: 1 }), /Expected a \$-prefixed window function, foo/],
    ['an unknown window function', out({ $summ: '$a' }), /Unrecognized window function, \$summ/],
    ['two window functions', out({ $sum: '$a', $avg: '$a' }), /Cannot specify two functions in window function spec/],
    ['an unknown argument', out({ $sum: '$a', windows: {} }), /Window function found an unknown argument: windows/],
    ['a window that is not an object', out({ $sum: '$a', window: [1, 2] }), /'window' field must be an object/],
    ['documents and range', out({ $sum: '$a', window: { documents: [0, 1], range: [0, 1] } }), /Window bounds can specify either 'documents' or 'unit', not both./],
    ['unit without range', out({ $sum: '$a', window: { documents: [0, 1], unit: 'day' } }), /Window bounds can only specify 'unit' with range-based bounds./],
    ['bounds that are not a pair', out({ $sum: '$a', window: { documents: [0] } }), /Window bounds must be a 2-element array/],
    ['a bound that is a bad string', out({ $sum: '$a', window: { documents: ['unbounded', 'now'] } }), /Window bounds must be 'unbounded', 'current', or a number./],
    ['a fractional document bound', out({ $sum: '$a', window: { documents: [-1.5, 0] } }), /Numeric document-based bounds must be an integer/],
    ['inverted bounds', out({ $sum: '$a', window: { documents: [1, 'current'] } }), /Lower bound must not exceed upper bound: \[1, 0\]/],
    ['a bound that is not constant', out({ $sum: '$a', window: { documents: [{ $add: ['$a', 1] }, 0] } }), /Window bounds expression must be a constant./],
    ['a field path as a bound', out({ $sum: '$a', window: { documents: ['$a', 0] } }), /Window bounds must be 'unbounded', 'current', or a number./],
    ['document bounds without sortBy', out({ $sum: '$a', window: { documents: [-1, 0] } }, {}), /Document-based bounds require a sortBy/],
    ['a range bound that is not a number', out({ $sum: '$a', window: { range: [true, 1] } }), /Range-based bounds expression must be a number/],
    ['a fractional time range bound', out({ $sum: '$a', window: { range: [-1.5, 0], unit: 'day' } }), /With 'unit', range-based bounds must be an integer/],
    ['an unknown unit', out({ $sum: '$a', window: { range: [-1, 0], unit: 'fortnight' } }), /unknown time unit value: fortnight/],
    ['a range over two sortBy fields', out({ $sum: '$a', window: { range: [-1, 0] } }, { sortBy: { a: 1, b: 1 } }), /Range-based bounds require sortBy a single field/],
    ['a range over a descending sortBy', out({ $sum: '$a', window: { range: [-1, 0] } }, { sortBy: { a: -1 } }), /Range-based bounds require an ascending sortBy/],
    ['$count with an argument', out({ $count: 1 }), /\$count only accepts an empty object as input/],
    ['$rank with an argument', out({ $rank: 1 }), /\$rank must be specified with '\{\}' as the value/],
    ['$rank with a window', out({ $rank: {}, window: {} }), /Rank style window functions take no other arguments/],
    ['$denseRank over two sortBy fields', out({ $denseRank: {} }, { sortBy: { a: 1, b: 1 } }), /\$denseRank must be specified with a top level sortBy expression with exactly one element/],
    ['$documentNumber without sortBy', out({ $documentNumber: {} }, {}), /\$documentNumber must be specified with a top level sortBy expression with exactly one element/],
    ['$shift with a window', out({ $shift: { output: '$a', by: 1 }, window: {} }), /\$shift does not accept a 'window' field/],
    ['$shift without by', out({ $shift: { output: '$a' } }), /\$shift requires 'by' as an integer value./],
    ['$shift with a fractional by', out({ $shift: { output: '$a', by: 1.5 } }), /'\$shift:by' field must be an integer/],
    ['$shift with a default that is not constant', out({ $shift: { output: '$a', by: 1, default: '$b' } }), /'\$shift:default' expression must yield a constant value./],
    ['$shift without sortBy', out({ $shift: { output: '$a', by: 1 } }, {}), /'\$shift' requires a sortBy/],
    ['$derivative without a window', out({ $derivative: { input: '$a' } }), /\$derivative requires explicit window bounds/],
    ['$derivative with a month unit', out({ $derivative: { input: '$a', unit: 'month' }, window: { documents: [-1, 0] } }), /unit must be 'week' or smaller/],
    ['$integral without input', out({ $integral: { unit: 'hour' } }), /\$integral requires an 'input' expression/],
    ['$integral over two sortBy fields', out({ $integral: { input: '$a' } }, { sortBy: { a: 1, b: 1 } }), /\$integral requires a non-compound sortBy/],
    ['$expMovingAvg with a window', out({ $expMovingAvg: { input: '$a', N: 2 }, window: {} }), /\$expMovingAvg must have exactly one argument that is an object/],
    ['$expMovingAvg with N and alpha', out({ $expMovingAvg: { input: '$a', N: 2, alpha: 0.5 } }), /sub object must have exactly two fields/],
    ['$expMovingAvg with N of 0', out({ $expMovingAvg: { input: '$a', N: 0 } }), /'N' must be greater than zero. Got 0/],
    ['$expMovingAvg with alpha of 1', out({ $expMovingAvg: { input: '$a', alpha: 1 } }), /'alpha' must be between 0 and 1 \(exclusive\)/],
    ['$expMovingAvg without sortBy', out({ $expMovingAvg: { input: '$a', N: 2 } }, {}), /\$expMovingAvg requires an explicit 'sortBy'/],
    ['$locf with a window', out({ $locf: '$a', window: {} }), /'window' field is not allowed in \$locf/],
    ['$linearFill without sortBy', out({ $linearFill: '$a' }, {}), /\$linearFill must be specified with a top level sortBy expression with exactly one element/],
    ['$mergeObjects over a sliding window', out({ $mergeObjects: '$a', window: { documents: [-1, 0] } }), /Window function \$mergeObjects is not supported with a removable window/],
    ['$minMaxScaler without input (its own refusals: test/server/mql-min-max-scaler.test.ts)', out({ $minMaxScaler: { min: 0, max: 1 } }), /^BSON field 'root\.\$minMaxScaler\.input' is missing but a required field$/],
  ])('refuses %s', async (_name, pipeline, message) => {
    // A $match that matches nothing first: the refusal comes from compiling, before any document.
    expectQueryError(await h.aggregate([{ $match: { _id: 'none' } }, ...pipeline]), '$setWindowFields', message);
  });
});

describe('$setWindowFields: the blocking bound', () => {
  const run = async (pipeline: Doc[], docs: () => AsyncIterable<Doc[]>) => {
    const out: Doc[] = [];
    for await (const c of compilePipeline(pipeline).run(docs(), { lookup: async () => [], scan: docs, vars: undefined, memory: IN_MEMORY_ONLY })) out.push(...c);
    return out;
  };
  it('holds its input within the bound (40 documents of 2 MiB by estimate)', async () => {
    async function* big(): AsyncIterable<Doc[]> {
      for (let i = 0; i < 40; i++) yield [{ _id: i, s: 'x'.repeat(1 << 20) }];
    }
    await expect(run([{ $setWindowFields: { output: { n: { $count: {} } } } }], big)).rejects.toMatchObject({ code: 'QUERY_ERROR', message: expect.stringMatching(/\$setWindowFields holds more than/) });
  });
  it('computes a window shared by many documents once: a whole-partition $push over 20000 documents', async () => {
    async function* many(): AsyncIterable<Doc[]> {
      yield Array.from({ length: 20000 }, (_, i) => ({ _id: i }));
    }
    const out = await run([{ $setWindowFields: { output: { ids: { $push: '$_id' } } } }, { $match: { _id: { $in: [0, 19999] } } }], many);
    expect(out.map((d) => (d['ids'] as unknown[]).length)).toEqual([20000, 20000]);
    expect(await run([{ $setWindowFields: { sortBy: { _id: 1 }, output: { ids: { $push: '$_id', window: { documents: [-5, 5] } } } } }], many)).toHaveLength(20000);
  });
});
