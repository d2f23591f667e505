// $densify over HTTP on a real server: the manual's examples (time series, the full range and
// each partition's range) in the manual's order, MongoDB's own jstests (partitions.js,
// doc_on_bound.js, explicit_range.js, mixed_units.js, generated_limit.js, parse_util.js), the
// semantics around them (nulls, duplicates, dot paths, values outside explicit bounds, calendar
// steps), every refusal with MongoDB's message, a randomized comparison with a model of the
// manual's definition and with mingo where mingo agrees, and the blocking bound.
import { aggregate } from 'mingo';
import { describe, expect, it } from 'vitest';
import { compilePipeline, fromJson, IN_MEMORY_ONLY, toJson, type Doc } from '../../../../engine/docs/index.js';
import { expectQueryError } from '../../../helpers/aggregate-cases.js';
import { serverForFile } from '../../../helpers/server.js';

const file = serverForFile();
const seed = (documents: unknown[]): Promise<string> => (documents.length === 0 ? Promise.resolve(`empty${Math.random().toString(36).slice(2)}`) : file.seed(documents, 'd'));
const pipelineOn = (collection: string, pipeline: unknown[]) => file.mql('aggregate', { collection, pipeline });

/** The documents `pipeline` gives over a fresh collection of `docs` (Extended JSON both ways). */
async function run(docs: unknown[], pipeline: unknown[]): Promise<any[]> {
  const res = await pipelineOn(await seed(docs), pipeline);
  expect(res.status, res.text).toBe(200);
  return res.body.documents;
}

/** `$densify` over `docs` with their `_id`s projected away first, as MongoDB's jstests do. */
const densify = (docs: unknown[], spec: unknown, after: unknown[] = []) => run(docs, [{ $project: { _id: 0 } }, { $densify: spec }, ...after]);

const date = (iso: string) => ({ $date: iso });
const isoDay = (y: number, m: number, d: number) => date(new Date(Date.UTC(y, m, d)).toISOString());

// Documents as comparable strings, field order aside (generated documents put the partition fields first).
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canonical((v as Doc)[k])]));
  return v;
}
const bag = (docs: unknown[]): string[] => docs.map((d) => JSON.stringify(canonical(d))).sort();
const expectSameDocs = (actual: unknown[], expected: unknown[]) => expect(bag(actual)).toEqual(bag(expected));

describe('$densify: the manual', () => {
  it('densifies time series data: hourly between explicit bounds, documents past them unchanged', async () => {
    const metadata = { sensorId: 5578, type: 'temperature' };
    const weather = [0, 4, 8, 12].map((h, i) => ({ _id: i + 1, metadata, timestamp: date(`2021-05-18T${String(h).padStart(2, '0')}:00:00.000Z`), temp: [12, 11, 11, 12][i] }));
    const out = await run(weather, [{ $densify: { field: 'timestamp', range: { step: 1, unit: 'hour', bounds: [date('2021-05-18T00:00:00.000Z'), date('2021-05-18T08:00:00.000Z')] } } }]);
    const at = (h: number) => ({ timestamp: date(`2021-05-18T0${h}:00:00.000Z`) });
    expect(out).toEqual([weather[0], at(1), at(2), at(3), weather[1], at(5), at(6), at(7), weather[2], weather[3]]);
  });

  const coffee = [
    { _id: 1, altitude: 600, variety: 'Arabica Typica', score: 68.3 },
    { _id: 2, altitude: 750, variety: 'Arabica Typica', score: 69.5 },
    { _id: 3, altitude: 950, variety: 'Arabica Typica', score: 70.5 },
    { _id: 4, altitude: 1250, variety: 'Gesha', score: 88.15 },
    { _id: 5, altitude: 1700, variety: 'Gesha', score: 95.5, price: 1029 },
  ];
  const gen = (variety: string, altitude: number) => ({ variety, altitude });

  it('densifies the full range of values for each partition, in the manual\'s order', async () => {
    const out = await run(coffee, [{ $densify: { field: 'altitude', partitionByFields: ['variety'], range: { bounds: 'full', step: 200 } } }]);
    // Generated documents carry the partition fields first, then the field (JSON key order is kept).
    expect(out.map((d) => JSON.stringify(d))).toEqual([
      coffee[0], coffee[1], gen('Arabica Typica', 800), coffee[2],
      gen('Gesha', 600), gen('Gesha', 800), gen('Gesha', 1000), gen('Gesha', 1200), coffee[3], gen('Gesha', 1400), gen('Gesha', 1600), coffee[4],
      gen('Arabica Typica', 1000), gen('Arabica Typica', 1200), gen('Arabica Typica', 1400), gen('Arabica Typica', 1600),
    ].map((d) => JSON.stringify(d)));
  });

  it('densifies values within each partition, in the manual\'s order', async () => {
    const out = await run(coffee, [{ $densify: { field: 'altitude', partitionByFields: ['variety'], range: { bounds: 'partition', step: 200 } } }]);
    expect(out).toEqual([coffee[0], coffee[1], gen('Arabica Typica', 800), coffee[2], coffee[3], gen('Gesha', 1450), gen('Gesha', 1650), coffee[4]]);
  });
});

describe('$densify: MongoDB\'s jstests (partitions.js)', () => {
  const twoByTwo = [{ val: 0, partition: 0 }, { val: 2, partition: 0 }, { val: 0, partition: 1 }, { val: 2, partition: 1 }];
  it('testOne: two documents in each of two partitions', async () => {
    expectSameDocs(await densify(twoByTwo, { field: 'val', partitionByFields: ['partition'], range: { step: 1, bounds: 'partition' } }), [...twoByTwo, { val: 1, partition: 0 }, { val: 1, partition: 1 }]);
  });
  it('testTwo: the same, partitions interleaved', async () => {
    const docs = [twoByTwo[0], twoByTwo[2], twoByTwo[3], twoByTwo[1]];
    expectSameDocs(await densify(docs, { field: 'val', partitionByFields: ['partition'], range: { step: 1, bounds: 'partition' } }), [...docs, { val: 1, partition: 0 }, { val: 1, partition: 1 }]);
  });
  it('testOneDates: days', async () => {
    const docs = [isoDay(2021, 0, 1), isoDay(2021, 0, 3)].flatMap((val) => [0, 1].map((partition) => ({ val, partition })));
    expectSameDocs(await densify(docs, { field: 'val', partitionByFields: ['partition'], range: { step: 1, unit: 'day', bounds: 'partition' } }), [...docs, { val: isoDay(2021, 0, 2), partition: 0 }, { val: isoDay(2021, 0, 2), partition: 1 }]);
  });
  it('testThree: two larger partitions, interleaved', async () => {
    const docs: Doc[] = [];
    const expected: Doc[] = [];
    for (let i = 0; i < 20; i++) {
      if (i % 4 === 2) docs.push({ val: i, part: 0 });
      if (i % 5 === 0) docs.push({ val: i, part: 1 });
      if (i >= 2 && i <= 18) expected.push({ val: i, part: 0 });
      if (i <= 15) expected.push({ val: i, part: 1 });
    }
    expectSameDocs(await densify(docs, { field: 'val', partitionByFields: ['part'], range: { step: 1, bounds: 'partition' } }), expected);
  });
  it('testFour: five small partitions', async () => {
    const docs: Doc[] = [];
    const expected: Doc[] = [];
    for (let part = 0; part < 5; part++) {
      docs.push({ val: 0, part }, { val: 10, part });
      for (let v = 0; v <= 10; v++) expected.push({ val: v, part });
      for (let v = 1; v < 10; v++) if (part > 0 && v % part === 0) docs.push({ val: v, part });
    }
    expectSameDocs(await densify(docs, { field: 'val', partitionByFields: ['part'], range: { step: 1, bounds: 'partition' } }), expected);
  });
  it('testFive: one partition needs no densifying', async () => {
    const docs = [{ val: 0, partition: 0 }, { val: 2, partition: 0 }, { val: 123, partition: 1 }];
    expectSameDocs(await densify(docs, { field: 'val', partitionByFields: ['partition'], range: { step: 1, bounds: 'partition' } }), [...docs, { val: 1, partition: 0 }]);
  });
  for (const step of [1, 3]) {
    it(`fullTestOne and testFive(multiple partition fields), step ${step}`, async () => {
      const values = (extra: Doc) => {
        const docs: Doc[] = [{ val: 0, ...extra }];
        const expected: Doc[] = [{ val: 0, ...extra }];
        for (let v = 1; v < 11; v++) {
          if (v % 2 === 0) {
            docs.push({ val: v, ...extra });
            expected.push({ val: v, ...extra });
          } else if (v % step === 0) expected.push({ val: v, ...extra });
        }
        docs.push({ val: 11, ...extra });
        expected.push({ val: 11, ...extra });
        return { docs, expected };
      };
      const one = values({});
      expectSameDocs(await densify(one.docs, { field: 'val', range: { step, bounds: 'full' } }), one.expected);
      const parts = [0, 1].flatMap((partA) => [0, 1].map((partB) => values({ partA, partB })));
      expectSameDocs(await densify(parts.flatMap((p) => p.docs), { field: 'val', partitionByFields: ['partA', 'partB'], range: { step, bounds: 'partition' } }), parts.flatMap((p) => p.expected));
    });
  }
  it('fullTestTwo: full bounds fill every partition to the maximum, included when on the step', async () => {
    const expected = [0, 2, 4, 6, 8, 10].flatMap((val) => [0, 1, 2].map((part) => ({ val, part })));
    const out = await densify([{ val: 0, part: 0 }, { val: 0, part: 1 }, { val: 10, part: 2 }], { field: 'val', range: { step: 2, bounds: 'full' }, partitionByFields: ['part'] }, [{ $sort: { val: 1, part: 1 } }]);
    expect(out).toEqual(expected);
  });
  it('fullTestTwoDates: years', async () => {
    const expected = [0, 2, 4, 6, 8, 10].flatMap((y) => [0, 1, 2, 3].map((part) => ({ val: isoDay(2021 + y, 0, 1), part })));
    const docs = [[2021, 0], [2021, 1], [2031, 2], [2025, 3]].map(([y, part]) => ({ val: isoDay(y!, 0, 1), part }));
    const out = await densify(docs, { field: 'val', range: { step: 2, unit: 'year', bounds: 'full' }, partitionByFields: ['part'] }, [{ $sort: { val: 1, part: 1 } }]);
    expect(out).toEqual(expected);
  });
  it('fullTestThree: an off-step document in a partition', async () => {
    const expected = [{ val: 5, part: 1 }, ...[0, 2, 4, 6, 8, 10].flatMap((val) => [0, 1, 2].map((part) => ({ val, part })))];
    const docs = [{ val: 0, part: 0 }, { val: 4, part: 0 }, { val: 0, part: 1 }, { val: 5, part: 1 }, { val: 10, part: 2 }];
    expectSameDocs(await densify(docs, { field: 'val', range: { step: 2, bounds: 'full' }, partitionByFields: ['part'] }), expected);
  });
  it('fullTestFour: negative numbers', async () => {
    const docs = [{ val: -10, part: 0 }, { val: 10, part: 0 }, { val: -2, part: 1 }];
    const expected = [...docs, { val: -10, part: 1 }, ...[-7, -4, -1, 2, 5, 8].flatMap((val) => [0, 1].map((part) => ({ val, part })))];
    expectSameDocs(await densify(docs, { field: 'val', range: { step: 3, bounds: 'full' }, partitionByFields: ['part'] }), expected);
  });
  it('rangeTestOne: two partitions with no document in the range', async () => {
    const docs = [{ val: 0, partition: 0 }, { val: 4, partition: 1 }];
    expectSameDocs(await densify(docs, { field: 'val', partitionByFields: ['partition'], range: { step: 1, bounds: [2, 3] } }), [...docs, { val: 2, partition: 0 }, { val: 2, partition: 1 }]);
  });
  it('rangeTestTwo: three partitions placed differently against the range', async () => {
    const docs = [{ val: 0, part: 0 }, { val: 5, part: 1 }, { val: 10, part: 2 }];
    expectSameDocs(await densify(docs, { field: 'val', range: { step: 2, bounds: [4, 8] }, partitionByFields: ['part'] }), [...docs, ...[4, 6].flatMap((val) => [0, 1, 2].map((part) => ({ val, part })))]);
  });
  it('rangeTestThree: an upper bound off the step from the lower bound', async () => {
    const docs = [{ val: 0, partition: 0 }, { val: 10, partition: 1 }];
    expectSameDocs(await densify(docs, { field: 'val', partitionByFields: ['partition'], range: { step: 2, bounds: [2, 5] } }), [...docs, ...[2, 4].flatMap((val) => [0, 1].map((partition) => ({ val, partition })))]);
  });
  it('rangeTestTwoDates: months', async () => {
    const docs = [[0, 0], [5, 1], [10, 2]].map(([m, part]) => ({ val: isoDay(2021, m!, 1), part }));
    const out = await densify(docs, { field: 'val', range: { step: 2, unit: 'month', bounds: [isoDay(2021, 4, 1), isoDay(2021, 8, 1)] }, partitionByFields: ['part'] });
    expectSameDocs(out, [...docs, ...[4, 6].flatMap((m) => [0, 1, 2].map((part) => ({ val: isoDay(2021, m, 1), part })))]);
  });
});

describe('$densify: MongoDB\'s jstests (doc_on_bound.js)', () => {
  const t = (day: number, hour = 0, second = 0) => date(`2023-09-${day}T${String(hour).padStart(2, '0')}:00:${String(second).padStart(2, '0')}.000Z`);
  const orig = (day: number, hour = 0, second = 0) => ({ time: t(day, hour, second), orig: true });
  const gen = (day: number, hour: number) => ({ time: t(day, hour) });
  const quarterDays = (from: number, to: number) => [6, 12, 18].flatMap((h) => Array.from({ length: to - from + 1 }, (_, i) => gen(from + i, h)));
  const after = [{ $sort: { time: 1 } }, { $project: { _id: 0, time: 1, orig: 1 } }];
  const bounds = [t(13), t(16)];

  it('a document before the explicit range and one on its lower bound (partitioned)', async () => {
    const docs = [12, 13, 14, 15].map((d) => ({ key: 1, ...orig(d) }));
    expectSameDocs(await run(docs, [{ $densify: { field: 'time', partitionByFields: ['key'], range: { step: 6, unit: 'hour', bounds } } }, ...after]), [orig(12), orig(13), orig(14), orig(15), ...quarterDays(13, 15)]);
  });
  it('the same without partitions, and an off-step document', async () => {
    const docs = [{ key: 1, ...orig(12) }, { key: 1, ...orig(13) }, { key: 2, ...orig(13, 0, 10) }, { key: 1, ...orig(14) }, { key: 1, ...orig(15) }];
    expectSameDocs(await run(docs, [{ $densify: { field: 'time', range: { step: 6, unit: 'hour', bounds } } }, ...after]), [orig(12), orig(13), orig(13, 0, 10), orig(14), orig(15), ...quarterDays(13, 15)]);
  });
  it('full bounds with documents on and off the step of the minimum', async () => {
    const docs = [{ key: 1, ...orig(12) }, { key: 2, ...orig(12, 4) }, { key: 1, ...orig(13) }, { key: 1, ...orig(14) }, { key: 1, ...orig(15) }, { key: 2, ...orig(15, 18) }];
    const out = await run(docs, [{ $densify: { field: 'time', partitionByFields: ['key'], range: { step: 6, unit: 'hour', bounds: 'full' } } }, ...after]);
    // key 1 is generated from 12T06 to 15T18 (the maximum, on its step), key 2 from 12T00 to 15T12.
    const key1 = [...quarterDays(12, 15).filter((g) => g.time.$date !== t(15, 18).$date), gen(15, 18)];
    const key2 = [gen(12, 0), ...quarterDays(12, 15).filter((g) => g.time.$date !== t(15, 18).$date), ...[13, 14, 15].map((d) => gen(d, 0))];
    expectSameDocs(out, [...docs.map(({ time, orig: o }) => ({ time, orig: o })), ...key1, ...key2]);
  });
  it('full bounds without partitions', async () => {
    const docs = [13, 14, 15].map((d) => ({ key: 1, ...orig(d) }));
    expectSameDocs(await run(docs, [{ $densify: { field: 'time', partitionByFields: ['key'], range: { step: 6, unit: 'hour', bounds: 'full' } } }, ...after]), [orig(13), orig(14), orig(15), ...quarterDays(13, 14)]);
  });
});

// A model of the manual's definition, for explicit bounds without partitions (MongoDB's
// densify_in_js.js does the same): every value of the grid from the lower bound that lies in
// [lower, upper) and that no document holds is generated.
type Unit = 'day' | 'month' | undefined;
const addStep = (v: number, step: number, unit: Unit): number => {
  if (unit === undefined) return v + step;
  const d = new Date(v);
  if (unit === 'day') d.setUTCDate(d.getUTCDate() + step);
  else d.setUTCMonth(d.getUTCMonth() + step);
  return d.getTime();
};
function explicitModel(values: number[], lower: number, upper: number, step: number, unit: Unit): number[] {
  const held = new Set(values);
  const out: number[] = [];
  for (let v = lower; v < upper; v = addStep(v, step, unit)) if (!held.has(v)) out.push(v);
  return out;
}

describe('$densify: MongoDB\'s jstests (explicit_range.js, against its model)', () => {
  const units: Unit[] = [undefined, 'day', 'month'];
  for (const unit of units) {
    it(`explicit ranges over ${unit ?? 'numbers'}, steps 1, 3 and 7`, async () => {
      const base = unit === undefined ? 0 : Date.UTC(2021, 0, 1);
      const at = (n: number) => addStep(base, n, unit);
      const wire = (v: number) => (unit === undefined ? v : { $date: new Date(v).toISOString() });
      const offsets = (min: number, max: number, pred: (i: number) => boolean) => Array.from({ length: max - min }, (_, i) => min + i).filter(pred);
      const onStep = (min: number, max: number, step: number) => offsets(min, max, (i) => (i - min) % step === 0);
      const scenarios: Array<[number[], number, number]> = [
        [[], 0, 10],
        [[0, 30], 10, 25],
        ...([12, 11, 10] as const).map((hi): [number[], number, number] => [onStep(2, 11, 2), 1, hi]),
        ...([-1, 0, -2] as const).map((hi): [number[], number, number] => [onStep(-20, -1, 2), -10, hi]),
        [onStep(0, 10, 3), 5, 15],
        [onStep(20, 30, 2), 10, 25],
        [onStep(20, 30, 2), 10, 35],
        [offsets(0, 25, (i) => i % 3 === 0 || i % 7 === 0), 10, 20],
      ];
      for (const step of [1, 3, 7]) {
        for (const [docOffsets, lo, hi] of scenarios) {
          const values = docOffsets.map(at);
          // Nulls and missing fields pass through as they are (the last scenario of the jstest).
          const docs = [...values.map((v) => ({ val: wire(v) })), { val: null }, { blah: 1 }];
          const out = await densify(docs, { field: 'val', range: { step, bounds: [wire(at(lo)), wire(at(hi))], ...(unit === undefined ? {} : { unit }) } });
          expectSameDocs(out, [...docs, ...explicitModel(values, at(lo), at(hi), step, unit).map((v) => ({ val: wire(v) }))]);
        }
      }
    }, 60_000);
  }

  it('generates nothing before the range (a month from the 31st)', async () => {
    const out = await densify([{ date: date('2022-10-29T23:00:00.000Z') }], { field: 'date', range: { step: 1, unit: 'month', bounds: [date('2022-10-31T23:00:00.000Z'), date('2022-11-30T23:00:00.000Z')] } });
    expect(out).toEqual([{ date: date('2022-10-29T23:00:00.000Z') }, { date: date('2022-10-31T23:00:00.000Z') }]);
  });
});

describe('$densify: semantics', () => {
  it('passes documents whose field is null or missing unchanged, first (where the sort puts them)', async () => {
    const out = await run([{ _id: 1, v: 3 }, { _id: 2, v: null }, { _id: 3 }, { _id: 4, v: 0 }], [{ $densify: { field: 'v', range: { step: 1, bounds: 'full' } } }]);
    expect(out).toEqual([{ _id: 2, v: null }, { _id: 3 }, { _id: 4, v: 0 }, { v: 1 }, { v: 2 }, { _id: 1, v: 3 }]);
  });

  it('keeps several documents with one value and generates it for none of them', async () => {
    const out = await run([{ _id: 1, v: 2 }, { _id: 2, v: 0 }, { _id: 3, v: 2 }, { _id: 4, v: 0 }], [{ $densify: { field: 'v', range: { step: 1, bounds: [0, 4] } } }]);
    expect(out).toEqual([{ _id: 2, v: 0 }, { _id: 4, v: 0 }, { v: 1 }, { _id: 1, v: 2 }, { _id: 3, v: 2 }, { v: 3 }]);
  });

  it('sorts by the partition fields, then the field; explicit ranges are completed after the input', async () => {
    const out = await run([{ _id: 1, p: 'b', v: 1 }, { _id: 2, p: 'a', v: 2 }, { _id: 3, p: 'b', v: 0 }], [{ $densify: { field: 'v', partitionByFields: ['p'], range: { step: 1, bounds: [0, 4] } } }]);
    expect(out).toEqual([
      { p: 'a', v: 0 }, { p: 'a', v: 1 }, { _id: 2, p: 'a', v: 2 },
      { _id: 3, p: 'b', v: 0 }, { _id: 1, p: 'b', v: 1 },
      { p: 'a', v: 3 }, { p: 'b', v: 2 }, { p: 'b', v: 3 },
    ]);
  });

  it('reads dot paths through embedded documents and gives generated documents the same shape', async () => {
    const docs = [{ _id: 1, m: { sensor: 'x', site: { id: 7 } }, r: { t: 0 } }, { _id: 2, m: { sensor: 'x', site: { id: 7 } }, r: { t: 3 } }];
    const out = await run(docs, [{ $densify: { field: 'r.t', partitionByFields: ['m.sensor', 'm.site.id'], range: { step: 1, bounds: 'partition' } } }]);
    expect(out).toEqual([docs[0], { m: { sensor: 'x', site: { id: 7 } }, r: { t: 1 } }, { m: { sensor: 'x', site: { id: 7 } }, r: { t: 2 } }, docs[1]]);
  });

  it('tells a missing partition field from a null one, as MongoDB\'s partition expression does', async () => {
    const out = await run([{ _id: 1, v: 0 }, { _id: 2, v: 2 }, { _id: 3, p: null, v: 0 }, { _id: 4, p: null, v: 2 }], [{ $densify: { field: 'v', partitionByFields: ['p'], range: { step: 1, bounds: 'partition' } } }]);
    expectSameDocs(out, [{ _id: 1, v: 0 }, { _id: 2, v: 2 }, { _id: 3, p: null, v: 0 }, { _id: 4, p: null, v: 2 }, { v: 1 }, { p: null, v: 1 }]);
  });

  it('a partition of one document generates nothing with "partition" bounds', async () => {
    expect(await run([{ _id: 1, p: 'a', v: 5 }, { _id: 2, p: 'b', v: 1 }, { _id: 3, p: 'b', v: 3 }], [{ $densify: { field: 'v', partitionByFields: ['p'], range: { step: 1, bounds: 'partition' } } }]))
      .toEqual([{ _id: 1, p: 'a', v: 5 }, { _id: 2, p: 'b', v: 1 }, { p: 'b', v: 2 }, { _id: 3, p: 'b', v: 3 }]);
  });

  it('fills the explicit range of a partition whose values all lie outside it, on the lower bound\'s step', async () => {
    // a: below, within one step of the lower bound; b: above the range; c: both.
    const docs = [{ _id: 1, p: 'a', v: 1 }, { _id: 2, p: 'b', v: 9 }, { _id: 3, p: 'c', v: -5 }, { _id: 4, p: 'c', v: 20 }];
    const out = await run(docs, [{ $densify: { field: 'v', partitionByFields: ['p'], range: { step: 2, bounds: [2, 7] } } }]);
    expectSameDocs(out, [...docs, ...['a', 'b', 'c'].flatMap((p) => [2, 4, 6].map((v) => ({ p, v })))]);
  });

  it('fills an explicit range over an empty collection, and one where no document has the field, without partition fields', async () => {
    expect(await run([], [{ $densify: { field: 'v', partitionByFields: ['p'], range: { step: 5, bounds: [0, 12] } } }])).toEqual([{ v: 0 }, { v: 5 }, { v: 10 }]);
    expect(await run([{ _id: 1, p: 'a' }], [{ $densify: { field: 'v', partitionByFields: ['p'], range: { step: 5, bounds: [0, 12] } } }])).toEqual([{ _id: 1, p: 'a' }, { v: 0 }, { v: 5 }, { v: 10 }]);
    expect(await run([], [{ $densify: { field: 'v', range: { step: 5, bounds: 'full' } } }])).toEqual([]);
  });

  it('steps months one at a time with $dateAdd\'s arithmetic: the 31st becomes the 28th and stays there', async () => {
    const out = await run([{ _id: 1, t: date('2021-01-31T00:00:00Z') }, { _id: 2, t: date('2021-05-28T00:00:00Z') }], [{ $densify: { field: 't', range: { step: 1, unit: 'month', bounds: 'full' } } }]);
    expect(out.map((d) => d['t'].$date)).toEqual(['2021-01-31', '2021-02-28', '2021-03-28', '2021-04-28', '2021-05-28'].map((d) => `${d}T00:00:00.000Z`));
    expect(out.map((d) => d['_id'])).toEqual([1, undefined, undefined, undefined, 2]);
  });

  it('steps quarters and weeks, and fractional numeric steps by repeated addition', async () => {
    const q = await run([{ _id: 1, t: date('2021-01-15T00:00:00Z') }, { _id: 2, t: date('2022-01-01T00:00:00Z') }], [{ $densify: { field: 't', range: { step: 1, unit: 'quarter', bounds: 'full' } } }]);
    expect(q.map((d) => d['t'].$date.slice(0, 10))).toEqual(['2021-01-15', '2021-04-15', '2021-07-15', '2021-10-15', '2022-01-01']);
    const w = await run([], [{ $densify: { field: 't', range: { step: 2, unit: 'week', bounds: [date('2021-01-01T00:00:00Z'), date('2021-02-01T00:00:00Z')] } } }]);
    expect(w.map((d) => d['t'].$date.slice(0, 10))).toEqual(['2021-01-01', '2021-01-15', '2021-01-29']);
    const f = await run([{ _id: 1, x: 0 }, { _id: 2, x: 0.5 }], [{ $densify: { field: 'x', range: { step: 0.1, bounds: 'full' } } }]);
    let v = 0;
    const expected: number[] = [];
    for (; v < 0.5; v += 0.1) expected.push(v);
    expect(f.map((d) => d['x'])).toEqual([...expected, 0.5]);
  });

  it('streams: a $limit after it ends the generation early, within the limit on generated documents', async () => {
    const out = await run([], [{ $densify: { field: 'v', range: { step: 1, bounds: [0, 400_000] } } }, { $limit: 3 }]);
    expect(out).toEqual([{ v: 0 }, { v: 1 }, { v: 2 }]);
  });
});

describe('$densify: refusals', () => {
  const range = (r: Doc) => ({ field: 'a', range: r });
  it.each([
    // parse_util.js, in its order
    ['no bounds', { field: 'a', range: { step: 1 } }, /^BSON field '\$densify.range.bounds' is missing but a required field$/],
    ['no field', { range: { step: 1, bounds: 'full' } }, /^BSON field '\$densify.field' is missing but a required field$/],
    ['no step', { field: 'a', range: { bounds: 'full' } }, /^BSON field '\$densify.range.step' is missing but a required field$/],
    ['a field that is not a string', { field: 1.5, range: { step: 1, bounds: 'full' } }, /^BSON field '\$densify.field' is the wrong type 'double', expected type 'string'$/],
    ['a step that is not a number', range({ step: 'invalid', bounds: 'full' }), /^BSON field '\$densify.range.step' is the wrong type 'string', expected types '\[int, decimal, double, long\]'$/],
    ['partitionByFields that is not an array', { field: 'a', partitionByFields: 'incorrect', range: { step: 1, bounds: 'full' } }, /^BSON field '\$densify.partitionByFields' is the wrong type 'string', expected type 'array'$/],
    ['partitionByFields holding the field', { field: 'a', partitionByFields: ['a'], range: { step: 1, bounds: 'full' } }, /^BSON field '\$densify.partitionByFields' contains the field that is being densified$/],
    ['a field inside a partition field', { field: 'a.b', partitionByFields: ['a'], range: { step: 1, bounds: 'full' } }, /^The field that is being densified contains the BSON field '\$densify.partitionByFields'$/],
    ['a partition field inside the field', { field: 'a', partitionByFields: ['a.b'], range: { step: 1, bounds: 'full' } }, /^BSON field '\$densify.partitionByFields' contains the field that is being densified$/],
    ['a unit that is not a string', range({ step: 1, bounds: [date('2020-01-01T00:00:00Z'), date('2020-01-02T00:00:00Z')], unit: 1000 }), /^BSON field '\$densify.range.unit' is the wrong type 'int', expected type 'string'$/],
    ['one bound', range({ step: 1, bounds: [date('2020-01-01T00:00:00Z')], unit: 'second' }), /^A bounding array in a range statement must have exactly two elements$/],
    ['three bounds', range({ step: 1, bounds: [0, 1, 2] }), /^A bounding array in a range statement must have exactly two elements$/],
    ['a negative step', range({ step: -1, bounds: [0, 1] }), /^The step parameter in a range statement must be a strictly positive numeric value$/],
    ['a zero step', range({ step: 0, bounds: 'full' }), /^The step parameter in a range statement must be a strictly positive numeric value$/],
    ['a field path expression', { field: '$a', range: { step: 1, bounds: [0, 1] } }, /^FieldPath field names may not start with '\$'. Consider using \$getField or \$setField.$/],
    ['a partition field path expression', { field: 'a', partitionByFields: ['$b'], range: { step: 1, bounds: [0, 1] } }, /^FieldPath field names may not start with '\$'. Consider using \$getField or \$setField.$/],
    ['partition bounds with no partitionByFields', { field: 'a', partitionByFields: [], range: { step: 1, bounds: 'partition' } }, /^One cannot specify the bounds as 'partition' without specifying a non-empty array of partitionByFields. You may have meant to specify 'full' bounds.$/],
    ['partition bounds without partitionByFields', range({ step: 1, bounds: 'partition' }), /^One cannot specify the bounds as 'partition'/],
    ['descending numeric bounds', range({ step: 1, bounds: [2, 1] }), /^A bounding array must be an ascending array of either two dates or two numbers$/],
    ['descending date bounds', range({ step: 1, bounds: [date('2020-01-01T00:00:00Z'), date('2019-01-01T00:00:00Z')], unit: 'second' }), /^A bounding array must be an ascending array of either two dates or two numbers$/],
    ['a unit with numeric bounds', range({ step: 1, bounds: [1, 2], unit: 'second' }), /^Numeric bounds may not have unit parameter$/],
    ['a number and a date', range({ step: 1, bounds: [1, date('2020-01-01T00:00:00Z')] }), /^A bounding array must contain either both dates or both numeric types$/],
    ['a date and a number (not ascending in BSON order)', range({ step: 1, bounds: [date('2020-01-01T00:00:00Z'), 1], unit: 'second' }), /^A bounding array must be an ascending array of either two dates or two numbers$/],
    ['a fractional step for dates', range({ step: 1.1, bounds: [date('2020-01-01T00:00:00Z'), date('2020-01-03T00:00:00Z')], unit: 'second' }), /^The step parameter in a range statement must be a whole number when densifying a date range$/],
    // document_source_densify.cpp's other rules
    ['a spec that is not an object', 1, /^The \$densify stage specification must be an object, found int$/],
    ['an unknown field', { field: 'a', range: { step: 1, bounds: 'full' }, foo: 1 }, /^BSON field '\$densify.foo' is an unknown field.$/],
    ['an unknown range field', range({ step: 1, bounds: 'full', foo: 1 }), /^BSON field '\$densify.range.foo' is an unknown field.$/],
    ['a range that is not an object', { field: 'a', range: 'full' }, /^BSON field '\$densify.range' is the wrong type 'string', expected type 'object'$/],
    ['a partition field that is not a string', { field: 'a', partitionByFields: ['b', 2], range: { step: 1, bounds: 'full' } }, /^BSON field '\$densify.partitionByFields.1' is the wrong type 'int', expected type 'string'$/],
    ['an unknown unit', range({ step: 1, bounds: 'full', unit: 'fortnight' }), /^unknown time unit value: fortnight$/],
    ['a bounds string other than full or partition', range({ step: 1, bounds: 'all' }), /^Bounds string must either be 'full' or 'partition'$/],
    ['bounds of another type', range({ step: 1, bounds: 5 }), /^The bounds in a range statement must be the string 'full', 'partition', or an ascending array of two numbers or two dates$/],
    ['bounds of strings', range({ step: 1, bounds: ['a', 'b'] }), /^Explicit bounds must be numeric or dates$/],
    ['date bounds without a unit', range({ step: 1, bounds: [date('2020-01-01T00:00:00Z'), date('2020-01-02T00:00:00Z')] }), /^A bounding array of dates must specify a unit$/],
    ['a date and a string', range({ step: 1, bounds: [date('2020-01-01T00:00:00Z'), 'z'], unit: 'day' }), /^A bounding array must be an ascending array of either two dates or two numbers$/],
    ['an empty field', { field: '', range: { step: 1, bounds: 'full' } }, /^FieldPath cannot be constructed with empty string$/],
    ['an empty field name in a path', { field: 'a..b', range: { step: 1, bounds: 'full' } }, /^FieldPath field names may not be empty strings.$/],
  ])('refuses %s, before reading a document', async (_name, spec, message) => {
    const c = await seed([{ _id: 1, a: 'not a number' }]);
    expectQueryError(await pipelineOn(c, [{ $densify: spec }]), '$densify', message);
  });

  // mixed_units.js: the value's type against the step's unit, whichever comes first
  const dates = ['2021-01-01', '2021-01-03', '2021-01-05'].map((d) => ({ val: date(`${d}T00:00:00Z`) }));
  it.each([
    ['numbers with a date unit', [{ val: 1 }, { val: 3 }, { val: 5 }], 'day', /^Encountered numeric densify value in collection when step has a date unit.$/],
    ['dates without a unit', dates, undefined, /^Encountered date densify value in collection when step does not have a date unit.$/],
    ['a number, then dates, without a unit', [{ val: 1 }, ...dates], undefined, /^Encountered date densify value in collection when step does not have a date unit.$/],
    ['a number, then dates, with a unit', [{ val: 1 }, ...dates], 'day', /^Encountered numeric densify value in collection when step has a date unit.$/],
    ['dates, then a number, without a unit', [dates[0], dates[1], { val: 1 }, dates[2]], undefined, /^Encountered date densify value in collection when step does not have a date unit.$/],
    ['dates, then a number, with a unit', [dates[0], dates[1], { val: 1 }, dates[2]], 'day', /^Encountered numeric densify value in collection when step has a date unit.$/],
    ['a string', [{ val: 1 }, { val: 'x' }], undefined, /^Densify field type must be numeric or a date$/],
    ['an array', [{ val: [1, 2] }], undefined, /^Densify field type must be numeric or a date$/],
  ])('refuses %s, when read', async (_name, docs, unit, message) => {
    const c = await seed(docs);
    expectQueryError(await pipelineOn(c, [{ $densify: { field: 'val', range: { step: 1, bounds: 'full', ...(unit === undefined ? {} : { unit }) } } }]), '$densify', message);
  });
});

describe('$densify: the limit on generated documents (generated_limit.js, at the default 500,000)', () => {
  const LIMIT = 500_000;
  const count = async (docs: unknown[], spec: unknown) => pipelineOn(await seed(docs), [{ $densify: spec }, { $count: 'n' }]);
  const overLimit = new RegExp(`^Generated ${LIMIT + 1} documents in \\$densify, which is over the limit of ${LIMIT}\\.`);

  it('generates exactly the limit, and refuses one more', async () => {
    expect((await count([], { field: 'val', range: { step: 1, bounds: [0, LIMIT] } })).body.documents).toEqual([{ n: LIMIT }]);
    expectQueryError(await count([], { field: 'val', range: { step: 1, bounds: [0, LIMIT + 1] } }), '$densify', overLimit);
  }, 60_000);

  it('counts across partitions, and not the documents already there', async () => {
    const half = LIMIT / 2;
    expectQueryError(await count([0, 1].flatMap((part) => [{ val: 0, part }, { val: half + 2, part }]), { field: 'val', partitionByFields: ['part'], range: { step: 1, bounds: 'partition' } }), '$densify', overLimit);
    expect((await count([{ val: 0 }, { val: LIMIT + 1 }], { field: 'val', range: { step: 1, bounds: 'full' } })).body.documents).toEqual([{ n: LIMIT + 2 }]);
    expectQueryError(await count([{ val: 0 }, { val: LIMIT + 2 }], { field: 'val', range: { step: 1, bounds: 'full' } }), '$densify', overLimit);
  }, 60_000);
});

// A model of the manual's definition over integers: per partition, the grid from the lower bound
// (explicit), the collection's minimum (full, up to its maximum included) or the partition's
// minimum (partition, up to its maximum); every grid value no document of the partition holds is
// generated, with the partition's field.
interface RandomCase {
  readonly docs: Doc[];
  readonly spec: { field: 'v'; partitionByFields?: string[]; range: { step: number; bounds: 'full' | 'partition' | [number, number] } };
}
function model({ docs, spec }: RandomCase): Doc[] {
  const { step, bounds } = spec.range;
  const partitioned = spec.partitionByFields !== undefined;
  const withValue = docs.filter((d) => typeof d['v'] === 'number');
  const values = withValue.map((d) => d['v'] as number);
  const groups = new Map<string, { fields: Doc; values: number[] }>();
  for (const d of withValue) {
    const fields: Doc = partitioned && Object.hasOwn(d, 'p') ? { p: d['p'] } : {};
    const key = JSON.stringify(fields);
    if (!groups.has(key)) groups.set(key, { fields, values: [] });
    groups.get(key)!.values.push(d['v'] as number);
  }
  if (Array.isArray(bounds) && groups.size === 0) groups.set('{}', { fields: {}, values: [] });
  const out: Doc[] = [...docs];
  for (const { fields, values: own } of groups.values()) {
    const [from, to, inclusive] = Array.isArray(bounds) ? [bounds[0], bounds[1], false] : bounds === 'full' ? [Math.min(...values), Math.max(...values), true] : [Math.min(...own), Math.max(...own), true];
    for (let v = from; inclusive ? v <= to : v < to; v += step) if (!own.includes(v)) out.push({ ...fields, v });
  }
  return out;
}

function randomCase(rand: () => number): RandomCase {
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const partitioned = rand() < 0.6;
  const docs: Doc[] = Array.from({ length: int(0, 12) }, (_, i) => {
    const d: Doc = { _id: i };
    const r = rand();
    if (r < 0.85) d['v'] = int(-15, 30);
    else if (r < 0.92) d['v'] = null;
    if (partitioned) d['p'] = ['a', 'b', 'c'][int(0, 2)];
    return d;
  });
  const kind = rand();
  const lo = int(-10, 20);
  const bounds = kind < 0.35 ? 'full' : kind < 0.6 && partitioned ? 'partition' : ([lo, lo + int(0, 20)] as [number, number]);
  return { docs, spec: { field: 'v', ...(partitioned ? { partitionByFields: ['p'] } : {}), range: { step: int(1, 6), bounds } } };
}

// mingo's $densify agrees with MongoDB where every partition's values are strings and the input
// needs no filling after its last document: "full" without partitions, "partition", and explicit
// bounds when each partition reaches the upper bound (mingo neither completes an explicit range
// nor fills "full" partitions up to the maximum, and refuses equal bounds; docs/mql.md, the mingo
// section).
function mingoAgrees({ docs, spec }: RandomCase): boolean {
  const { bounds, step } = spec.range;
  if (bounds === 'partition') return true;
  const partitions = new Map<unknown, number[]>();
  for (const d of docs) if (typeof d['v'] === 'number') partitions.set(d['p'], [...(partitions.get(d['p']) ?? []), d['v'] as number]);
  if (bounds === 'full') return spec.partitionByFields === undefined;
  // mingo refuses equal bounds ("must be ordered lower then upper"); MongoDB takes them.
  if (bounds[0] === bounds[1]) return false;
  // The grid position after a partition's values must reach the upper bound.
  return partitions.size > 0 && [...partitions.values()].every((vs) => {
    let next = bounds[0];
    for (const v of [...vs].sort((a, b) => a - b)) {
      while (next < v && next < bounds[1]) next += step;
      if (next === v) next += step;
    }
    return next >= bounds[1];
  });
}

describe('$densify: randomized, against the model and mingo', () => {
  it('200 random collections and specifications', async () => {
    let seedValue = 20240611;
    const rand = () => ((seedValue = (seedValue * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    let mingoCompared = 0;
    for (let i = 0; i < 200; i++) {
      const c = randomCase(rand);
      const label = JSON.stringify(c);
      const out = await run(c.docs, [{ $densify: c.spec }]);
      expect(bag(out), label).toEqual(bag(model(c)));
      if (mingoAgrees(c)) {
        mingoCompared++;
        const theirs = aggregate(fromJson(structuredClone(c.docs)) as Doc[], [{ $densify: c.spec }]) as Doc[];
        expect(bag(theirs.map((d) => toJson(d))), `mingo: ${label}`).toEqual(bag(out));
      }
    }
    expect(mingoCompared).toBeGreaterThan(60);
  }, 120_000);
});

describe('$densify: the blocking bound', () => {
  const runInProcess = async (pipeline: Doc[], docs: () => AsyncIterable<Doc[]>) => {
    let n = 0;
    for await (const c of compilePipeline(pipeline).run(docs(), { lookup: async () => [], scan: docs, vars: undefined, memory: IN_MEMORY_ONLY })) n += c.length;
    return n;
  };
  // 20 documents of 2 MiB by estimate: 40 MiB of input, under the bound.
  async function* big(): AsyncIterable<Doc[]> {
    for (let i = 0; i < 20; i++) yield [{ _id: i, p: `${i}${'x'.repeat(1 << 20)}`, v: i }];
  }
  it('holds the input it sorts and the partitions it keeps within the bound', async () => {
    expect(await runInProcess([{ $densify: { field: 'v', range: { step: 0.5, bounds: 'full' } } }], big)).toBe(39);
    // Each partition's fields are held too: 40 MiB more, past the bound (MongoDB's message for its partition table).
    await expect(runInProcess([{ $densify: { field: 'v', partitionByFields: ['p'], range: { step: 0.5, bounds: 'full' } } }], big)).rejects.toMatchObject({ code: 'QUERY_ERROR', message: '$densify exceeded memory limit of 67108864' });
    // "partition" bounds hold only the partitions of the current place in the sort: 2 MiB more.
    expect(await runInProcess([{ $densify: { field: 'v', partitionByFields: ['p'], range: { step: 0.5, bounds: 'partition' } } }], big)).toBe(20);
    async function* bigger(): AsyncIterable<Doc[]> {
      yield* big();
      yield* big();
    }
    await expect(runInProcess([{ $densify: { field: 'v', range: { step: 1, bounds: 'full' } } }], bigger)).rejects.toMatchObject({ code: 'QUERY_ERROR', message: expect.stringMatching(/^\$densify holds more than/) });
  });
});
