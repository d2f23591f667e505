/**
 * Find projections that compute fields (MongoDB 4.4+; manual: "Project Fields to Return from
 * Query", "Projection" in db.collection.find): field paths, expressions, literals, nested and dot
 * paths, `$$NOW`, on find, findOne and the findOneAnd* operations. mingo (a dev dependency, an
 * oracle only) answers the same projections over the same documents.
 */
import { Query } from 'mingo';
import { beforeAll, describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

// The manual's inventory documents, and a few with missing, null and array fields.
const INVENTORY = [
  { _id: 1, item: 'journal', status: 'A', size: { h: 14, w: 21, uom: 'cm' }, instock: [{ warehouse: 'A', qty: 5 }], tags: ['blank', 'red'] },
  { _id: 2, item: 'notebook', status: 'A', size: { h: 8.5, w: 11, uom: 'in' }, instock: [{ warehouse: 'C', qty: 5 }], tags: ['red'] },
  { _id: 3, item: 'paper', status: 'D', size: { h: 8.5, w: 11, uom: 'in' }, instock: [{ warehouse: 'A', qty: 60 }, { warehouse: 'B', qty: 15 }] },
  { _id: 4, item: 'planner', status: 'D', size: { h: 22.85, w: 30, uom: 'cm' }, instock: [], tags: [] },
  { _id: 5, item: 'postcard', status: 'A', size: null, instock: [{ warehouse: 'B', qty: 15 }, { warehouse: 'C', qty: 35 }] },
  { _id: 6, item: null },
];

beforeAll(async () => {
  const res = await mql('insertMany', { collection: 'inventory', documents: INVENTORY });
  expect(res.status, res.text).toBe(201);
});

describe('computed find projections', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['a field path renames a field', { _id: 0, name: '$item', status: 1 }],
    ['an expression beside inclusions', { item: 1, area: { $multiply: ['$size.h', '$size.w'] } }],
    ['a string literal and an array of paths', { kind: 'stock', pair: ['$item', '$status'] }],
    ['$literal keeps a number from being an inclusion', { one: { $literal: 1 }, item: 1 }],
    ['a nested computed field', { size: { area: { $multiply: ['$size.h', '$size.w'] }, uom: 1 } }],
    ['a dot path computed field', { 'size.label': { $concat: ['$item', '-', '$status'] } }],
    ['a conditional', { _id: 0, item: 1, big: { $cond: [{ $gte: [{ $size: { $ifNull: ['$instock', []] } }, 2] }, 'yes', 'no'] } }],
    // ($ifNull: mingo's $sum refuses a missing operand, where MongoDB's sums nothing.)
    ['array expressions', { total: { $sum: { $ifNull: ['$instock.qty', []] } }, first: { $arrayElemAt: ['$instock.warehouse', 0] } }],
    ['_id computed', { _id: { $toString: '$_id' }, item: 1 }],
  ];
  for (const [what, projection] of cases) {
    it(`${what}: mingo's answer`, async () => {
      const res = await mql('find', { collection: 'inventory', filter: {}, projection, sort: { _id: 1 } });
      expect(res.status, res.text).toBe(200);
      const want = new Query({}).find(structuredClone(INVENTORY), projection).all();
      expect(res.body.documents).toEqual(want);
    });
  }

  it('the manual example: status and a computed field, and the filter applies first', async () => {
    const res = await mql('find', { collection: 'inventory', filter: { status: 'A', 'size.uom': 'in' }, projection: { _id: 0, item: 1, status: { $switch: { branches: [{ case: { $eq: ['$status', 'A'] }, then: 'Available' }], default: 'No status' } } } });
    expect(res.body.documents).toEqual([{ item: 'notebook', status: 'Available' }]);
  });

  it('works on findOne, by _id, and on the findOneAnd* operations', async () => {
    expect((await mql('findOne', { collection: 'inventory', filter: { _id: 2 }, projection: { _id: 0, label: { $toUpper: '$item' } } })).body.document).toEqual({ label: 'NOTEBOOK' });
    expect((await mql('find', { collection: 'inventory', filter: { _id: 3 }, projection: { n: { $size: '$instock' } } })).body.documents).toEqual([{ _id: 3, n: 2 }]);
    const updated = await mql('findOneAndUpdate', { collection: 'inventory', filter: { _id: 1 }, update: { $inc: { 'size.h': 1 } }, returnDocument: 'after', projection: { _id: 0, h: '$size.h' } });
    expect(updated.body.document).toEqual({ h: 15 });
    const deleted = await mql('findOneAndDelete', { collection: 'inventory', filter: { _id: 6 }, projection: { gone: { $ifNull: ['$item', 'nothing'] } } });
    expect(deleted.body.document).toEqual({ _id: 6, gone: 'nothing' });
    expect((await mql('insertOne', { collection: 'inventory', document: INVENTORY[5] })).status).toBe(201);
  });

  it('$$NOW is one instant for the whole request', async () => {
    const res = await mql('find', { collection: 'inventory', filter: {}, projection: { _id: 0, at: '$$NOW' } });
    const stamps = new Set(res.body.documents.map((d: { at: { $date: string } }) => d.at.$date));
    expect(res.body.documents.length).toBe(INVENTORY.length);
    expect(stamps.size).toBe(1);
    expect(Math.abs(Date.parse([...stamps][0] as string) - Date.now())).toBeLessThan(60_000);
  });

  it('refuses what MongoDB refuses, and what tetradb does not combine, with QUERY_ERROR', async () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ item: 0, x: '$status' }, /Cannot use expression other than \$meta in exclusion projection/],
      [{ x: { $nope: 1 } }, /\$nope/],
      [{ x: '$' }, /path/i],
      [{ x: '$status', tags: { $slice: 1 } }, /cannot also use \$slice, \$elemMatch/],
      [{ x: '$status', instock: { $elemMatch: { qty: 5 } } }, /cannot also use/],
    ];
    for (const [projection, message] of bad) {
      const res = await mql('find', { collection: 'inventory', filter: {}, projection });
      expect(res.status, `${JSON.stringify(projection)}: ${res.text}`).toBe(400);
      expect(res.body.error.code).toBe('QUERY_ERROR');
      expect(res.body.error.message, JSON.stringify(projection)).toMatch(message);
    }
    // A positional projection beside a computed field.
    const positional = await mql('find', { collection: 'inventory', filter: { 'instock.qty': 5 }, projection: { 'instock.$': 1, x: '$item' } });
    expect(positional.status, positional.text).toBe(400);
    expect(positional.body.error.message).toMatch(/positional/);
  });
});
