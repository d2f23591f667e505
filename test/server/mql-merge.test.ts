// The $merge stage over HTTP on a real server: the manual's examples ($merge page: an on-demand
// materialized view, only inserting new data, merging results from several collections; monthly
// totals as the on-demand materialized views page makes them), every whenMatched/whenNotMatched
// mode (MongoDB's jstests/aggregation/sources/merge/all_modes.js), `on` with and without its
// unique index, the targets (the source itself, a new collection), a failure midway, refusals
// with MongoDB's messages, and a restart. Expected answers are the manual's, or worked by hand.
import { describe, expect, it } from 'vitest';
import { http, signup, startServer, serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const all = (collection: string): Promise<any[]> => file.all(collection);
const createIndex = file.createIndex.bind(file);
const collectionNames = file.collectionNames.bind(file);
const refused = (collection: string, pipeline: unknown[], status: number, code: string, message: string): Promise<void> => file.refuses('aggregate', { collection, pipeline }, status, code, message);
let names = 0;
/** A fresh collection name (nothing in it yet). */
const fresh = (prefix = 'm'): string => `${prefix}${++names}`;

async function seed(documents: unknown[], prefix = 'src'): Promise<string> {
  return file.seed(documents, prefix);
}

async function insert(collection: string, documents: unknown[]): Promise<void> {
  const res = await mql('insertMany', { collection, documents });
  expect(res.status, res.text).toBe(201);
}

/** Runs a pipeline that ends in $merge: MongoDB answers no documents. */
async function merge(collection: string, pipeline: unknown[]): Promise<void> {
  const res = await mql('aggregate', { collection, pipeline });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({ documents: [], executedBy: 'native' });
}

const SALARIES = [
  { _id: 1, employee: 'Ant', dept: 'A', salary: 100000, fiscal_year: 2017 },
  { _id: 2, employee: 'Bee', dept: 'A', salary: 120000, fiscal_year: 2017 },
  { _id: 3, employee: 'Cat', dept: 'Z', salary: 115000, fiscal_year: 2017 },
  { _id: 4, employee: 'Ant', dept: 'A', salary: 115000, fiscal_year: 2018 },
  { _id: 5, employee: 'Bee', dept: 'Z', salary: 145000, fiscal_year: 2018 },
  { _id: 6, employee: 'Cat', dept: 'Z', salary: 135000, fiscal_year: 2018 },
  { _id: 7, employee: 'Gecko', dept: 'A', salary: 100000, fiscal_year: 2018 },
  { _id: 8, employee: 'Ant', dept: 'A', salary: 125000, fiscal_year: 2019 },
  { _id: 9, employee: 'Bee', dept: 'Z', salary: 160000, fiscal_year: 2019 },
  { _id: 10, employee: 'Cat', dept: 'Z', salary: 150000, fiscal_year: 2019 },
];
const NEW_SALARIES = [
  { _id: 11, employee: 'Wren', dept: 'Z', salary: 100000, fiscal_year: 2019 },
  { _id: 12, employee: 'Zebra', dept: 'A', salary: 150000, fiscal_year: 2019 },
  { _id: 13, employee: 'headcount1', dept: 'Z', salary: 120000, fiscal_year: 2020 },
  { _id: 14, employee: 'headcount2', dept: 'Z', salary: 120000, fiscal_year: 2020 },
];

describe('$merge: the manual', () => {
  it('an on-demand materialized view: the budgets, then refreshed from the new salaries (a string _id for the manual\'s {fiscal_year, dept})', async () => {
    const salaries = await seed(SALARIES);
    const budgets = fresh('budgets');
    // The manual groups by {fiscal_year, dept}; tetradb's _id is a string, a number or a boolean.
    const byYearAndDept = { $concat: [{ $toString: '$fiscal_year' }, '-', '$dept'] };
    await merge(salaries, [
      { $group: { _id: byYearAndDept, salaries: { $sum: '$salary' } } },
      { $merge: { into: budgets, on: '_id', whenMatched: 'replace', whenNotMatched: 'insert' } },
    ]);
    expect(await all(budgets)).toEqual([
      { _id: '2017-A', salaries: 220000 },
      { _id: '2017-Z', salaries: 115000 },
      { _id: '2018-A', salaries: 215000 },
      { _id: '2018-Z', salaries: 280000 },
      { _id: '2019-A', salaries: 125000 },
      { _id: '2019-Z', salaries: 310000 },
    ]);
    await insert(salaries, NEW_SALARIES);
    await merge(salaries, [
      { $match: { fiscal_year: { $gte: 2019 } } },
      { $group: { _id: byYearAndDept, salaries: { $sum: '$salary' } } },
      { $merge: { into: { coll: budgets }, on: '_id', whenMatched: 'replace', whenNotMatched: 'insert' } },
    ]);
    expect(await all(budgets)).toEqual([
      { _id: '2017-A', salaries: 220000 },
      { _id: '2017-Z', salaries: 115000 },
      { _id: '2018-A', salaries: 215000 },
      { _id: '2018-Z', salaries: 280000 },
      { _id: '2019-A', salaries: 275000 },
      { _id: '2019-Z', salaries: 410000 },
      { _id: '2020-Z', salaries: 240000 },
    ]);
  });

  it('the manual\'s own pipeline: its document _id and its other database are refused, clearly, and nothing is written', async () => {
    const salaries = await seed(SALARIES);
    const budgets = fresh('budgets');
    await refused(salaries, [
      { $group: { _id: { fiscal_year: '$fiscal_year', dept: '$dept' }, salaries: { $sum: '$salary' } } },
      { $merge: { into: budgets } },
    ], 400, 'VALIDATION_FAILED', '$merge cannot write a document whose _id is {');
    await refused(salaries, [{ $merge: { into: { db: 'reporting', coll: budgets } } }], 400, 'QUERY_ERROR', "$merge cannot write to another database (into.db: \"reporting\"): tetradb has one database per tenant");
    expect(await collectionNames()).not.toContain(budgets);
  });

  it('only inserts new data: on [dept, fiscal_year] with its unique index, whenMatched "fail"; run again, the duplicate key error', async () => {
    const salaries = await seed([...SALARIES, ...NEW_SALARIES]);
    const archive = fresh('orgArchive');
    await insert(archive, [
      { _id: 'x1', employees: ['Ant', 'Gecko'], dept: 'A', fiscal_year: 2018 },
      { employees: ['Bee', 'Cat'], dept: 'Z', fiscal_year: 2018 },
      { employees: ['Ant', 'Bee'], dept: 'A', fiscal_year: 2017 },
      { employees: ['Cat'], dept: 'Z', fiscal_year: 2017 },
    ]);
    await createIndex(archive, { fiscal_year: 1, dept: 1 }, { unique: true });
    const pipeline = [
      { $match: { fiscal_year: 2019 } },
      { $group: { _id: { fiscal_year: '$fiscal_year', dept: '$dept' }, employees: { $push: '$employee' } } },
      { $project: { _id: 0, dept: '$_id.dept', fiscal_year: '$_id.fiscal_year', employees: 1 } },
      { $merge: { into: archive, on: ['dept', 'fiscal_year'], whenMatched: 'fail' } },
    ];
    await merge(salaries, pipeline);
    const strip = (docs: any[]) => docs.map(({ _id, ...rest }) => rest).sort((a, b) => a.fiscal_year - b.fiscal_year || a.dept.localeCompare(b.dept));
    const after = await all(archive);
    expect(strip(after)).toEqual([
      { employees: ['Ant', 'Bee'], dept: 'A', fiscal_year: 2017 },
      { employees: ['Cat'], dept: 'Z', fiscal_year: 2017 },
      { employees: ['Ant', 'Gecko'], dept: 'A', fiscal_year: 2018 },
      { employees: ['Bee', 'Cat'], dept: 'Z', fiscal_year: 2018 },
      { employees: ['Ant', 'Zebra'], dept: 'A', fiscal_year: 2019 },
      { employees: ['Bee', 'Cat', 'Wren'], dept: 'Z', fiscal_year: 2019 },
    ]);
    // The inserted documents got an _id (an ObjectId, as MongoDB generates).
    for (const d of after) expect(d._id).toBeDefined();
    const again = await mql('aggregate', { collection: salaries, pipeline });
    expect(again.status, again.text).toBe(409);
    expect(again.body.error.code).toBe('DUPLICATE_KEY');
    expect(again.body.error.message).toMatch(/^E11000 duplicate key error collection: orgArchive\d+ index: fiscal_year_1_dept_1 dup key: /);
    expect(await all(archive)).toEqual(after);
  });

  it('merges results from several collections: whenMatched "merge" adds the second\'s fields to the first\'s', async () => {
    const orders = await seed([
      { _id: 1, quarter: '2019Q1', region: 'A', qty: 200, reportDate: { $date: '2019-04-01T00:00:00Z' } },
      { _id: 2, quarter: '2019Q1', region: 'B', qty: 300, reportDate: { $date: '2019-04-01T00:00:00Z' } },
      { _id: 3, quarter: '2019Q1', region: 'C', qty: 700, reportDate: { $date: '2019-04-01T00:00:00Z' } },
      { _id: 4, quarter: '2019Q2', region: 'B', qty: 300, reportDate: { $date: '2019-07-01T00:00:00Z' } },
      { _id: 5, quarter: '2019Q2', region: 'C', qty: 1000, reportDate: { $date: '2019-07-01T00:00:00Z' } },
      { _id: 6, quarter: '2019Q2', region: 'A', qty: 400, reportDate: { $date: '2019-07-01T00:00:00Z' } },
    ]);
    const sales = await seed([
      { _id: 1, quarter: '2019Q1', region: 'A', qty: 400, reportDate: { $date: '2019-04-02T00:00:00Z' } },
      { _id: 2, quarter: '2019Q1', region: 'B', qty: 550, reportDate: { $date: '2019-04-02T00:00:00Z' } },
      { _id: 3, quarter: '2019Q1', region: 'C', qty: 1000, reportDate: { $date: '2019-04-05T00:00:00Z' } },
      { _id: 4, quarter: '2019Q2', region: 'B', qty: 500, reportDate: { $date: '2019-07-02T00:00:00Z' } },
    ]);
    const report = fresh('quarterlyreport');
    await merge(orders, [
      { $group: { _id: '$quarter', purchased: { $sum: '$qty' } } },
      { $merge: { into: report, on: '_id', whenMatched: 'merge', whenNotMatched: 'insert' } },
    ]);
    expect(await all(report)).toEqual([{ _id: '2019Q1', purchased: 1200 }, { _id: '2019Q2', purchased: 1700 }]);
    await merge(sales, [
      { $group: { _id: '$quarter', sales: { $sum: '$qty' } } },
      { $merge: { into: report, on: '_id', whenMatched: 'merge', whenNotMatched: 'insert' } },
    ]);
    const docs = await all(report);
    expect(docs).toEqual([{ _id: '2019Q1', sales: 1950, purchased: 1200 }, { _id: '2019Q2', sales: 500, purchased: 1700 }]);
    // As $set: the existing fields keep their place, new ones come last.
    expect(Object.keys(docs[0])).toEqual(['_id', 'purchased', 'sales']);
  });

  it('monthly totals ($dateToString as the _id, {$merge: "coll"}), refreshed from the latest sales only', async () => {
    const bakes = await seed([
      { _id: 1, date: { $date: '2018-12-01T00:00:00Z' }, item: 'Cake - Chocolate', quantity: 2, amount: 60 },
      { _id: 2, date: { $date: '2018-12-02T00:00:00Z' }, item: 'Cake - Peanut Butter', quantity: 5, amount: 90 },
      { _id: 3, date: { $date: '2018-12-04T00:00:00Z' }, item: 'Cookies', quantity: 20, amount: 80 },
      { _id: 4, date: { $date: '2019-01-25T00:00:00Z' }, item: 'Cake - Chocolate', quantity: 2, amount: 60 },
      { _id: 5, date: { $date: '2019-01-25T00:00:00Z' }, item: 'Pie - Key Lime', quantity: 1, amount: 20 },
    ]);
    const monthly = fresh('monthlybakesales');
    const totals = (since: string) => [
      { $match: { date: { $gte: { $date: since } } } },
      { $group: { _id: { $dateToString: { format: '%Y-%m', date: '$date' } }, sales_quantity: { $sum: '$quantity' }, sales_amount: { $sum: '$amount' } } },
      { $merge: monthly },
    ];
    await merge(bakes, totals('2018-01-01T00:00:00Z'));
    expect(await all(monthly)).toEqual([
      { _id: '2018-12', sales_quantity: 27, sales_amount: 230 },
      { _id: '2019-01', sales_quantity: 3, sales_amount: 80 },
    ]);
    await insert(bakes, [
      { _id: 6, date: { $date: '2019-01-28T00:00:00Z' }, item: 'Cake - Chocolate', quantity: 3, amount: 90 },
      { _id: 7, date: { $date: '2019-02-03T00:00:00Z' }, item: 'Cookies', quantity: 10, amount: 40 },
    ]);
    await merge(bakes, totals('2019-01-01T00:00:00Z'));
    expect(await all(monthly)).toEqual([
      { _id: '2018-12', sales_quantity: 27, sales_amount: 230 },
      { _id: '2019-01', sales_quantity: 6, sales_amount: 170 },
      { _id: '2019-02', sales_quantity: 10, sales_amount: 40 },
    ]);
  });
});

// all_modes.js: the same source for every mode, a target overlapping it on _id 1.
const SOURCE = [
  { _id: 1, a: 1, b: 'a' },
  { _id: 2, a: 2, b: 'b' },
  { _id: 3, a: 3, b: 'c' },
];
const TARGET = [
  { _id: 1, c: 'x', a: 10 },
  { _id: 4, a: 40 },
];

async function modeRun(whenMatched: string, whenNotMatched: string): Promise<{ status: number; body: any; target: any[] }> {
  const source = await seed(SOURCE);
  const target = fresh('t');
  await insert(target, TARGET);
  const res = await mql('aggregate', { collection: source, pipeline: [{ $merge: { into: target, whenMatched, whenNotMatched } }] });
  return { status: res.status, body: res.body, target: await all(target) };
}

describe('$merge: whenMatched and whenNotMatched', () => {
  const noMatch = '$merge could not find a matching document in the target collection for at least one document in the source collection';
  it.each([
    ['replace', 'insert', [{ _id: 1, a: 1, b: 'a' }, { _id: 2, a: 2, b: 'b' }, { _id: 3, a: 3, b: 'c' }, { _id: 4, a: 40 }]],
    ['replace', 'discard', [{ _id: 1, a: 1, b: 'a' }, { _id: 4, a: 40 }]],
    ['merge', 'insert', [{ _id: 1, c: 'x', a: 1, b: 'a' }, { _id: 2, a: 2, b: 'b' }, { _id: 3, a: 3, b: 'c' }, { _id: 4, a: 40 }]],
    ['merge', 'discard', [{ _id: 1, c: 'x', a: 1, b: 'a' }, { _id: 4, a: 40 }]],
    ['keepExisting', 'insert', [{ _id: 1, c: 'x', a: 10 }, { _id: 2, a: 2, b: 'b' }, { _id: 3, a: 3, b: 'c' }, { _id: 4, a: 40 }]],
  ])('whenMatched %s, whenNotMatched %s', async (whenMatched, whenNotMatched, expected) => {
    const { status, body, target } = await modeRun(whenMatched, whenNotMatched);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(target).toEqual(expected);
    // Field order too: replace is the output's, merge keeps the existing fields' places.
    expect(target.map((d) => Object.keys(d))).toEqual(expected.map((d) => Object.keys(d)));
  });

  it('whenNotMatched "fail": MongoDB\'s error, and the batch holding the unmatched document writes nothing', async () => {
    for (const whenMatched of ['replace', 'merge']) {
      const { status, body, target } = await modeRun(whenMatched, 'fail');
      expect(status).toBe(400);
      expect(body.error).toMatchObject({ code: 'QUERY_ERROR', message: noMatch });
      expect(target).toEqual(TARGET);
    }
  });

  it('whenNotMatched "fail" with every document matched: they are replaced / merged', async () => {
    const source = await seed([{ _id: 1, a: 2 }, { _id: 4, z: 1 }]);
    const target = fresh('t');
    await insert(target, TARGET);
    await merge(source, [{ $merge: { into: target, whenMatched: 'merge', whenNotMatched: 'fail' } }]);
    expect(await all(target)).toEqual([{ _id: 1, c: 'x', a: 2 }, { _id: 4, a: 40, z: 1 }]);
  });

  it('whenMatched "fail": a duplicate key error on _id; without a match, a plain insert', async () => {
    const { status, body, target } = await modeRun('fail', 'insert');
    expect(status).toBe(409);
    expect(body.error.code).toBe('DUPLICATE_KEY');
    expect(body.error.message).toMatch(/^E11000 duplicate key error collection: t\d+ index: _id_ dup key: \{ _id: 1 \}$/);
    expect(target).toEqual(TARGET);
    const source = await seed([{ _id: 7, a: 7 }]);
    const into = fresh('t');
    await insert(into, TARGET);
    await merge(source, [{ $merge: { into, whenMatched: 'fail' } }]);
    expect(await all(into)).toEqual([...TARGET, { _id: 7, a: 7 }]);
  });

  it.each([
    ['keepExisting', 'fail'],
    ['keepExisting', 'discard'],
    ['fail', 'fail'],
    ['fail', 'discard'],
  ])('refuses whenMatched %s with whenNotMatched %s, as MongoDB does', async (whenMatched, whenNotMatched) => {
    const { status, body, target } = await modeRun(whenMatched, whenNotMatched);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'QUERY_ERROR', message: `Combination of $merge modes 'whenMatched: ${whenMatched}' and 'whenNotMatched: ${whenNotMatched}' is not supported` });
    expect(target).toEqual(TARGET);
  });

  it('the defaults are replace and insert; documents without _id get one', async () => {
    const source = await seed([{ _id: 1, v: 'new' }, { _id: 2, v: 'two' }]);
    const target = fresh('t');
    await insert(target, [{ _id: 1, v: 'old', w: 1 }]);
    await merge(source, [{ $merge: { into: target } }]);
    expect(await all(target)).toEqual([{ _id: 1, v: 'new' }, { _id: 2, v: 'two' }]);
    await merge(source, [{ $project: { _id: 0, v: 1 } }, { $merge: target }]);
    const docs = await all(target);
    expect(docs).toHaveLength(4);
    expect(docs.filter((d) => d._id !== 1 && d._id !== 2).map((d) => d.v).sort()).toEqual(['new', 'two']);
  });
});

describe('$merge: whenMatched pipeline', () => {
  it('the manual: monthly vote totals, the new day\'s votes added with $$new', async () => {
    const votes = await seed([
      { date: { $date: '2019-05-01T00:00:00Z' }, thumbsup: 1, thumbsdown: 1 },
      { date: { $date: '2019-05-02T00:00:00Z' }, thumbsup: 3, thumbsdown: 1 },
      { date: { $date: '2019-05-03T00:00:00Z' }, thumbsup: 1, thumbsdown: 1 },
      { date: { $date: '2019-05-04T00:00:00Z' }, thumbsup: 2, thumbsdown: 2 },
      { date: { $date: '2019-05-05T00:00:00Z' }, thumbsup: 6, thumbsdown: 10 },
      { date: { $date: '2019-05-06T00:00:00Z' }, thumbsup: 13, thumbsdown: 16 },
    ]);
    const totals = fresh('monthlytotals');
    await insert(totals, [{ _id: '2019-05', thumbsup: 26, thumbsdown: 31 }]);
    await insert(votes, [{ date: { $date: '2019-05-07T00:00:00Z' }, thumbsup: 14, thumbsdown: 10 }]);
    await merge(votes, [
      { $match: { date: { $gte: { $date: '2019-05-07T00:00:00Z' }, $lt: { $date: '2019-05-08T00:00:00Z' } } } },
      { $project: { _id: { $dateToString: { format: '%Y-%m', date: '$date' } }, thumbsup: 1, thumbsdown: 1 } },
      {
        $merge: {
          into: totals,
          on: '_id',
          whenMatched: [{ $addFields: { thumbsup: { $add: ['$thumbsup', '$$new.thumbsup'] }, thumbsdown: { $add: ['$thumbsdown', '$$new.thumbsdown'] } } }],
          whenNotMatched: 'insert',
        },
      },
    ]);
    expect(await all(totals)).toEqual([{ _id: '2019-05', thumbsup: 40, thumbsdown: 41 }]);
  });

  it('the manual: let variables ({year: "2020"}) read as $$year, into the source collection', async () => {
    const cakes = await seed([{ _id: 1, flavor: 'chocolate', salesTotal: 1580, salesTrend: 'up' }]);
    await merge(cakes, [{ $merge: { into: cakes, let: { year: '2020' }, whenMatched: [{ $addFields: { salesYear: '$$year' } }] } }]);
    expect(await all(cakes)).toEqual([{ _id: 1, flavor: 'chocolate', salesTotal: 1580, salesTrend: 'up', salesYear: '2020' }]);
  });

  it('let variables are expressions of the output document; unmatched ones are inserted as they are, discarded, or refused', async () => {
    const source = await seed([{ _id: 1, n: 5 }, { _id: 2, n: 7 }]);
    const whenMatched = [{ $set: { total: { $add: ['$total', '$$add'] }, last: '$$new.n' } }];
    for (const [whenNotMatched, status, expected] of [
      ['insert', 200, [{ _id: 1, total: 15, last: 5 }, { _id: 2, n: 7 }]],
      ['discard', 200, [{ _id: 1, total: 15, last: 5 }]],
      ['fail', 400, [{ _id: 1, total: 10 }]],
    ] as const) {
      const target = fresh('t');
      await insert(target, [{ _id: 1, total: 10 }]);
      const res = await mql('aggregate', { collection: source, pipeline: [{ $merge: { into: target, let: { add: '$n', new: '$$ROOT' }, whenMatched, whenNotMatched } }] });
      expect(res.status, res.text).toBe(status);
      expect(await all(target)).toEqual(expected);
    }
  });

  it('the pipeline changes the matched document only: an _id it alters is refused; $$NOW is the aggregate\'s', async () => {
    const source = await seed([{ _id: 1, v: 1 }]);
    const target = fresh('t');
    await insert(target, [{ _id: 1, v: 0 }]);
    await refused(source, [{ $merge: { into: target, whenMatched: [{ $set: { _id: 2 } }] } }], 400, 'QUERY_ERROR', "After applying the update, the (immutable) field '_id' was found to have been altered to _id: 2");
    await merge(source, [{ $set: { at: '$$NOW' } }, { $merge: { into: target, whenMatched: [{ $set: { seen: '$$NOW', same: { $eq: ['$$NOW', '$$new.at'] } } }, { $unset: 'v' }] } }]);
    const [doc] = await all(target);
    expect(doc).toMatchObject({ _id: 1, same: true });
    expect(Object.keys(doc)).toEqual(['_id', 'seen', 'same']);
  });
});

describe('$merge: on', () => {
  it('on a field with a unique index: matched documents keep their _id, others are inserted with a new one', async () => {
    const source = await seed([{ _id: 'a', k: 1, v: 'new' }, { _id: 'b', k: 5, v: 'five' }]);
    const target = fresh('t');
    await insert(target, [{ _id: 't1', k: 1, v: 'old' }, { _id: 't2', k: 2, v: 'two' }]);
    await createIndex(target, { k: 1 }, { unique: true });
    await merge(source, [{ $project: { _id: 0, k: 1, v: 1 } }, { $merge: { into: target, on: 'k' } }]);
    const docs = await all(target);
    expect(docs.filter((d) => d._id === 't1' || d._id === 't2')).toEqual([{ _id: 't1', k: 1, v: 'new' }, { _id: 't2', k: 2, v: 'two' }]);
    const inserted = docs.filter((d) => d._id !== 't1' && d._id !== 't2');
    expect(inserted).toEqual([{ _id: expect.stringMatching(/^[0-9a-f]{24}$/), k: 5, v: 'five' }]);
  });

  it('on several fields (dotted too), in any order of the index\'s; matched by the output\'s values', async () => {
    const source = await seed([{ _id: 1, x: { y: 1 }, z: 'a', v: 1 }, { _id: 2, x: { y: 2 }, z: 'a', v: 2 }]);
    const target = fresh('t');
    await insert(target, [{ _id: 't1', x: { y: 1 }, z: 'a', v: 0 }, { _id: 't2', x: { y: 1 }, z: 'b', v: 0 }]);
    await createIndex(target, { z: 1, 'x.y': -1 }, { unique: true });
    await merge(source, [{ $unset: '_id' }, { $merge: { into: target, on: ['x.y', 'z'], whenMatched: 'merge', whenNotMatched: 'discard' } }]);
    expect(await all(target)).toEqual([{ _id: 't1', x: { y: 1 }, z: 'a', v: 1 }, { _id: 't2', x: { y: 1 }, z: 'b', v: 0 }]);
  });

  it('without a unique index on exactly those fields (or without the target): MongoDB\'s error, before anything is read or written', async () => {
    const source = await seed([{ _id: 1, k: 1, j: 1 }]);
    const target = fresh('t');
    const message = 'Cannot find index to verify that join fields will be unique';
    await refused(source, [{ $merge: { into: target, on: 'k' } }], 400, 'QUERY_ERROR', message);
    await insert(target, [{ _id: 9, k: 9 }]);
    await refused(source, [{ $merge: { into: target, on: 'k' } }], 400, 'QUERY_ERROR', message);
    await createIndex(target, { k: 1 });
    await refused(source, [{ $merge: { into: target, on: 'k' } }], 400, 'QUERY_ERROR', message);
    await createIndex(target, { k: 1, j: 1 }, { unique: true });
    await refused(source, [{ $merge: { into: target, on: 'k' } }], 400, 'QUERY_ERROR', message);
    await createIndex(target, { j: 1 }, { unique: true, partialFilterExpression: { j: { $gt: 0 } } });
    await refused(source, [{ $merge: { into: target, on: 'j' } }], 400, 'QUERY_ERROR', message);
    await refused(source, [{ $merge: { into: target, on: ['k', 'j', 'x'] } }], 400, 'QUERY_ERROR', message);
    expect(await all(target)).toEqual([{ _id: 9, k: 9 }]);
    await merge(source, [{ $merge: { into: target, on: ['j', 'k'] } }]);
    expect(await all(target)).toEqual([{ _id: 1, k: 1, j: 1 }, { _id: 9, k: 9 }]);
  });

  it('an output document whose on field is missing, null or an array: MongoDB\'s error', async () => {
    const target = fresh('t');
    await insert(target, [{ _id: 0, k: 0 }]);
    await createIndex(target, { k: 1 }, { unique: true });
    for (const k of [undefined, null, [1, 2]]) {
      const source = await seed([{ _id: 1, ...(k === undefined ? {} : { k }) }]);
      await refused(source, [{ $merge: { into: target, on: 'k' } }], 400, 'QUERY_ERROR', "$merge write error: 'on' field cannot be missing, null, undefined or an array");
    }
    expect(await all(target)).toEqual([{ _id: 0, k: 0 }]);
  });

  it('an output document whose _id differs from the document its on fields matched: refused', async () => {
    const source = await seed([{ _id: 'other', k: 1 }]);
    const target = fresh('t');
    await insert(target, [{ _id: 't1', k: 1 }]);
    await createIndex(target, { k: 1 }, { unique: true });
    await refused(source, [{ $merge: { into: target, on: 'k' } }], 400, 'QUERY_ERROR', '$merge failed to update the matching document, did you attempt to modify the _id or the shard key?');
    expect(await all(target)).toEqual([{ _id: 't1', k: 1 }]);
  });

  it('refuses a bad on: duplicate, empty, $-prefixed, of the wrong type', async () => {
    const source = await seed([{ _id: 1 }]);
    await refused(source, [{ $merge: { into: 'x', on: ['a', 'a'] } }], 400, 'QUERY_ERROR', "Found a duplicate field 'a'");
    await refused(source, [{ $merge: { into: 'x', on: '' } }], 400, 'QUERY_ERROR', 'FieldPath cannot be constructed with empty string');
    await refused(source, [{ $merge: { into: 'x', on: '$a' } }], 400, 'QUERY_ERROR', "FieldPath field names may not start with '$'");
    await refused(source, [{ $merge: { into: 'x', on: 1 } }], 400, 'QUERY_ERROR', "BSON field '$merge.on' is the wrong type 'int'");
  });

  it('several output documents matching one another within a batch: each sees the one before', async () => {
    const source = await seed([{ _id: 1, k: 'same', n: 1 }, { _id: 2, k: 'same', n: 2 }, { _id: 3, k: 'same', n: 3 }]);
    const target = fresh('t');
    await createIndex(target, { k: 1 }, { unique: true });
    await merge(source, [{ $project: { _id: 0, k: 1, n: 1 } }, { $merge: { into: target, on: 'k', whenMatched: 'merge' } }]);
    const docs = await all(target);
    expect(docs).toHaveLength(1);
    expect(docs[0]).toMatchObject({ k: 'same', n: 3 });
    // The unique index holds the one document, found by its key.
    expect((await mql('find', { collection: target, filter: { k: 'same' } })).body.documents).toEqual(docs);
  });
});

describe('$merge: targets, streaming, failures', () => {
  it('into the source collection: the pipeline reads a snapshot, so each document is changed once', async () => {
    const c = await seed([{ _id: 1, n: 1 }, { _id: 2, n: 2 }, { _id: 3, n: 3 }]);
    await merge(c, [{ $set: { n: { $add: ['$n', 10] } } }, { $merge: c }]);
    expect(await all(c)).toEqual([{ _id: 1, n: 11 }, { _id: 2, n: 12 }, { _id: 3, n: 13 }]);
    // New documents in it: not read again by the same pipeline.
    await merge(c, [{ $set: { _id: { $add: ['$_id', 100] } } }, { $merge: c }]);
    expect((await all(c)).map((d) => d._id)).toEqual([1, 2, 3, 101, 102, 103]);
  });

  it('into a new collection: created, with the documents; its indexes work afterwards', async () => {
    const source = await seed([{ _id: 1, g: 'x' }, { _id: 2, g: 'y' }, { _id: 3, g: 'x' }]);
    const target = fresh('created');
    expect(await collectionNames()).not.toContain(target);
    await merge(source, [{ $group: { _id: '$g', n: { $sum: 1 } } }, { $merge: { into: { coll: target } } }]);
    expect(await collectionNames()).toContain(target);
    expect(await all(target)).toEqual([{ _id: 'x', n: 2 }, { _id: 'y', n: 1 }]);
    await createIndex(target, { n: 1 });
    expect((await mql('find', { collection: target, filter: { n: 2 } })).body.documents).toEqual([{ _id: 'x', n: 2 }]);
  });

  it('maintains the target\'s indexes: a replaced document leaves its old key, as the index-served finds show', async () => {
    const source = await seed([{ _id: 1, k: 'b' }]);
    const target = fresh('t');
    await insert(target, [{ _id: 1, k: 'a' }]);
    await createIndex(target, { k: 1 });
    await merge(source, [{ $merge: target }]);
    expect((await mql('find', { collection: target, filter: { k: 'a' } })).body.documents).toEqual([]);
    expect((await mql('find', { collection: target, filter: { k: 'b' } })).body.documents).toEqual([{ _id: 1, k: 'b' }]);
  });

  it('a unique index violated midway through a large output: the batches written before stay, the answer is the error', async () => {
    const source = await seed(Array.from({ length: 1200 }, (_, i) => ({ _id: i, k: i })));
    const target = fresh('t');
    await insert(target, [{ _id: 'x', k: 1000 }]);
    await createIndex(target, { k: 1 }, { unique: true });
    const res = await mql('aggregate', { collection: source, pipeline: [{ $sort: { _id: 1 } }, { $merge: target }] });
    expect(res.status, res.text).toBe(409);
    expect(res.body.error.code).toBe('DUPLICATE_KEY');
    expect(res.body.error.message).toContain('dup key: {"k":1000}');
    const docs = await all(target);
    const written = docs.filter((d) => d._id !== 'x').map((d) => d._id);
    // A prefix of the output, in batches: some, but not the batch holding k 1000 nor any after it.
    expect(written.length).toBeGreaterThan(0);
    expect(written.length).toBeLessThan(1000);
    expect(written).toEqual(Array.from({ length: written.length }, (_, i) => i));
  });

  it('one large chunk of output (an $unwind of one array) is still written in batches: those before the violation stay', async () => {
    const source = await seed(Array.from({ length: 1200 }, (_, i) => ({ _id: i, k: i })));
    const target = fresh('t');
    await insert(target, [{ _id: 'x', k: 1000 }]);
    await createIndex(target, { k: 1 }, { unique: true });
    const pipeline = [{ $sort: { _id: 1 } }, { $group: { _id: null, d: { $push: '$$ROOT' } } }, { $unwind: '$d' }, { $replaceWith: '$d' }, { $merge: target }];
    const res = await mql('aggregate', { collection: source, pipeline });
    expect(res.status, res.text).toBe(409);
    const written = (await all(target)).filter((d) => d._id !== 'x').map((d) => d._id);
    expect(written.length).toBeGreaterThan(0);
    expect(written.length).toBeLessThan(1000);
    expect(written).toEqual(Array.from({ length: written.length }, (_, i) => i));
  });

  it('a document tetradb cannot store (past the size limit): refused, its batch not written', async () => {
    const source = await seed([{ _id: 1, s: 'x'.repeat(1000) }]);
    const target = fresh('t');
    const res = await mql('aggregate', {
      collection: source,
      pipeline: [{ $set: { big: { $reduce: { input: { $range: [0, 11] }, initialValue: '$s', in: { $concat: ['$$value', '$$value'] } } } } }, { $merge: target }],
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(await collectionNames()).not.toContain(target);
  });
});

describe('$merge: TTL indexes and the storage quota', () => {
  it('documents it writes with a past date into a collection with a TTL index expire, as inserted ones do', async () => {
    const past = new Date(Date.now() - 60_000).toISOString();
    const source = await seed([{ _id: 'old', at: { $date: past } }, { _id: 'keep' }]);
    const target = fresh('ttl');
    await insert(target, [{ _id: 'far', at: { $date: new Date(Date.now() + 3_600_000).toISOString() } }]);
    await createIndex(target, { at: 1 }, { expireAfterSeconds: 1 });
    await merge(source, [{ $merge: target }]);
    const deadline = Date.now() + 5000;
    let ids: unknown[] = [];
    while (Date.now() < deadline) {
      ids = (await all(target)).map((d) => d._id);
      if (ids.length === 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(ids).toEqual(['far', 'keep']);
  });

  it('a tenant past its quota: 507 QUOTA_EXCEEDED, the batch not written', async () => {
    const server = await startServer({ quotaBytes: 200 * 1024, bodyLimit: 2 * 1024 * 1024 });
    try {
      const { apiKey } = await signup(server.url);
      const call = (op: string, json: unknown) => http(server.url, 'POST', `/api/mql/${op}`, { json, apiKey });
      expect((await call('insertMany', { collection: 's', documents: [{ _id: 1, s: 'x'.repeat(50_000) }] })).status).toBe(201);
      const res = await call('aggregate', { collection: 's', pipeline: [{ $set: { s: { $concat: ['$s', '$s', '$s', '$s', '$s'] } } }, { $merge: 'big' }] });
      expect(res.status, res.text).toBe(507);
      expect(res.body.error.code).toBe('QUOTA_EXCEEDED');
      expect((await call('listCollections', {})).body.collections.map((c: { name: string }) => c.name)).toEqual(['s']);
    } finally {
      await server.stop();
    }
  });
});

describe('$merge: refusals (nothing written)', () => {
  it.each([
    [[{ $merge: 'x' }, { $match: {} }], '$merge can only be the final stage in the pipeline'],
    [[{ $facet: { a: [{ $merge: 'x' }] } }], '$merge is not allowed to be used within a $facet stage'],
    [[{ $lookup: { from: 'y', pipeline: [{ $merge: 'x' }], as: 'z' } }], "$merge is not allowed within a $lookup's sub-pipeline"],
    [[{ $unionWith: { coll: 'y', pipeline: [{ $merge: 'x' }] } }], "$merge is not allowed within a $unionWith's sub-pipeline"],
    [[{ $facet: { a: [{ $lookup: { from: 'y', pipeline: [{ $merge: 'x' }], as: 'z' } }] } }], "$merge is not allowed within a $lookup's sub-pipeline"],
    [[{ $merge: 1 }], '$merge only supports a string or object argument, not int'],
    [[{ $merge: { into: 'x', foo: 1 } }], "BSON field '$merge.foo' is an unknown field."],
    [[{ $merge: { on: '_id' } }], "BSON field '$merge.into' is missing but a required field"],
    [[{ $merge: { into: 'x', whenMatched: 'update' } }], "Enumeration value 'update' for field 'whenMatched' is not a valid value."],
    [[{ $merge: { into: 'x', whenNotMatched: 'skip' } }], "Enumeration value 'skip' for field 'whenNotMatched' is not a valid value."],
    [[{ $merge: { into: 'x', whenMatched: [{ $match: {} }] } }], '$match is not allowed to be used within an update'],
    [[{ $merge: { into: 'x', whenMatched: [{ $inc: { a: 1 } }] } }], "Unrecognized pipeline stage name: '$inc'"],
    [[{ $merge: { into: 'x', whenMatched: [{ $set: { a: '$$other' } }] } }], 'Use of undefined variable: other'],
    [[{ $merge: { into: 'x', whenMatched: [{ $set: { a: '$$new.a' } }], whenNotMatched: 'discard', let: { b: 1 } } }], 'Use of undefined variable: new'],
    [[{ $merge: { into: 'x', whenMatched: [], let: { new: '$a' } } }], "'let' may not define a value for the reserved 'new' variable other than '$$ROOT'"],
    [[{ $merge: { into: 'x', whenMatched: [], let: 1 } }], "BSON field '$merge.let' is the wrong type 'int', expected type 'object'"],
    [[{ $merge: { into: 'x', let: { a: 1 } } }], "Cannot use 'let' variables with 'whenMatched: replace' mode"],
    [[{ $merge: { into: 'x', whenMatched: 'merge', let: { a: 1 } } }], "Cannot use 'let' variables with 'whenMatched: merge' mode"],
    [[{ $merge: { into: { db: 'other', coll: 'x' } } }], '$merge cannot write to another database'],
    [[{ $merge: { into: { coll: 'x', foo: 1 } } }], "BSON field '$merge.into.foo' is an unknown field."],
    [[{ $merge: { into: 5 } }], "BSON field '$merge.into' is the wrong type 'int'"],
    [[{ $merge: 'x' }, { $out: 'y' }], '$merge can only be the final stage in the pipeline'],
  ])('%j: %s', async (pipeline, message) => {
    const source = await seed([{ _id: 1 }]);
    await refused(source, pipeline, 400, 'QUERY_ERROR', message);
    expect(await collectionNames()).not.toContain('x');
  });

  it('a pipeline-style update still refuses $merge as a stage', async () => {
    const c = await seed([{ _id: 1 }]);
    const res = await mql('updateOne', { collection: c, filter: {}, update: [{ $merge: 'x' }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('$merge is not allowed to be used within an update');
  });
});

describe('$merge across a restart', () => {
  it('the merged documents are durable once the aggregate answers', async () => {
    const first = await startServer();
    const { apiKey } = await signup(first.url);
    const call = (base: string, op: string, json: unknown) => http(base, 'POST', `/api/mql/${op}`, { json, apiKey });
    await call(first.url, 'insertMany', { collection: 's', documents: Array.from({ length: 700 }, (_, i) => ({ _id: i, g: i % 7 })) });
    const res = await call(first.url, 'aggregate', { collection: 's', pipeline: [{ $set: { h: { $multiply: ['$g', 2] } } }, { $merge: 'r' }] });
    expect(res.status, res.text).toBe(200);
    await first.stop({ keepData: true });
    const second = await startServer({ dataDir: first.dataDir });
    try {
      const count = await call(second.url, 'countDocuments', { collection: 'r' });
      expect(count.body).toEqual({ count: 700 });
      const some = await call(second.url, 'find', { collection: 'r', filter: { _id: { $in: [0, 699] } }, sort: { _id: 1 } });
      expect(some.body.documents).toEqual([{ _id: 0, g: 0, h: 0 }, { _id: 699, g: 699 % 7, h: (699 % 7) * 2 }]);
    } finally {
      await second.stop();
    }
  });
});

describe('$merge and a crash', () => {
  it('an acknowledged $merge is all there after a SIGKILL right after its answer and a restart', async () => {
    const { spawnServer } = await import('../helpers/server-process.js');
    const { tempDir } = await import('../helpers/temp-dir.js');
    const dir = tempDir('merge-crash');
    try {
      const server = await spawnServer(dir.path, ['--rate-limit', '0']);
      const { apiKey } = await signup(server.url, 'merge-crash');
      const call = (op: string, json: unknown) => http(server.url, 'POST', `/api/mql/${op}`, { json, apiKey });
      const documents = Array.from({ length: 1000 }, (_, i) => ({ _id: i, n: i, pad: 'x'.repeat(200) }));
      expect((await call('insertMany', { collection: 'source', documents })).status).toBe(201);
      // Four batches of 256 into a new collection; the process is killed as soon as the answer is in.
      const merged = await call('aggregate', { collection: 'source', pipeline: [{ $set: { twice: { $multiply: ['$n', 2] } } }, { $merge: 'target' }] });
      server.child.kill('SIGKILL');
      expect(merged.status, merged.text).toBe(200);
      expect(merged.body.documents).toEqual([]);
      expect((await server.exited).signal).toBe('SIGKILL');
      const again = await spawnServer(dir.path, ['--rate-limit', '0']);
      try {
        const count = await http(again.url, 'POST', '/api/mql/countDocuments', { json: { collection: 'target', filter: { twice: { $gte: 0 } } }, apiKey });
        expect(count.body.count).toBe(1000);
      } finally {
        again.child.kill('SIGTERM');
        await again.exited;
      }
    } finally {
      dir.remove();
    }
  });
});
