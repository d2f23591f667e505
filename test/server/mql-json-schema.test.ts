// $jsonSchema over HTTP on a real server: the manual's examples, MongoDB's jstests
// (jstests/core/json_schema/*.js) with their expected answers, every refusal with MongoDB's
// message (json_schema_parser.cpp), the operations that take a filter, the planner, partial
// indexes, and random schemas against equivalent plain filters and against mingo (whose
// $jsonSchema needs a validator: ajv, on the keywords where JSON Schema and MongoDB agree).
import { Ajv } from 'ajv';
import { Query } from 'mingo';
import { beforeAll, describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);
const seed = (documents: unknown[]): Promise<string> => file.seed(documents, 'js');
const all = (collection: string): Promise<any[]> => file.all(collection);

async function ids(collection: string, filter: unknown): Promise<unknown[]> {
  const res = await mql('find', { collection, filter, sort: { _id: 1 }, limit: 10000 });
  expect(res.status, res.text).toBe(200);
  return res.body.documents.map((d: { _id: unknown }) => d._id);
}

// MongoDB's assertSchemaMatch (jstests/libs/assert_schema_match.js): the document matches the
// schema exactly when `expected`, and its $nor form answers the opposite.
async function assertSchemaMatch(schema: unknown, doc: Record<string, unknown>, expected: boolean): Promise<void> {
  const c = await seed([doc]);
  const found = await ids(c, { $jsonSchema: schema });
  const notFound = await ids(c, { $nor: [{ $jsonSchema: schema }] });
  expect({ schema, doc, matches: found.length === 1 }).toEqual({ schema, doc, matches: expected });
  expect(notFound.length).toBe(expected ? 0 : 1);
}

type Case = readonly [schema: unknown, doc: Record<string, unknown>, expected: boolean];

function table(name: string, cases: readonly Case[]): void {
  it(`${name} (${cases.length} cases)`, async () => {
    for (const [schema, doc, expected] of cases) await assertSchemaMatch(schema, doc, expected);
  });
}

describe('the manual: query for and modify valid or invalid documents', () => {
  // Numbers are typed by value here (docs/mql.md, Types): 14, 21, 11 and 10 are ints, where the
  // manual's shell stores doubles, so journal, notebook and postcard fail `h`/`w: {bsonType:
  // "double"}` here and pass in MongoDB. Fractions (8.5, 22.85, 15.25) are doubles in both.
  const INVENTORY = [
    { _id: 1, item: 'journal', qty: 25, size: { h: 14, w: 21, uom: 'cm' }, instock: true },
    { _id: 2, item: 'notebook', qty: 50, size: { h: 8.5, w: 11, uom: 'in' }, instock: true },
    { _id: 3, item: 'paper', qty: 100, size: { h: 8.5, w: 11, uom: 'in' }, instock: 1 },
    { _id: 4, item: 'planner', qty: 75, size: { h: 22.85, w: 30, uom: 'cm' }, instock: 1 },
    { _id: 5, item: 'postcard', qty: 45, size: { h: 10, w: 15.25, uom: 'cm' }, instock: true },
    { _id: 6, item: 'apple', qty: 45, status: 'A', instock: true },
    { _id: 7, item: 'pears', qty: 50, status: 'A', instock: true },
  ];
  const myschema = {
    required: ['item', 'qty', 'instock'],
    properties: {
      item: { bsonType: 'string' },
      qty: { bsonType: 'int' },
      size: { bsonType: 'object', required: ['uom'], properties: { uom: { bsonType: 'string' }, h: { bsonType: 'double' }, w: { bsonType: 'double' } } },
      instock: { bsonType: 'bool' },
    },
  };
  const VALID = [6, 7];
  const INVALID = [1, 2, 3, 4, 5];

  it('find and $match give the valid documents', async () => {
    const c = await seed(INVENTORY);
    expect(await ids(c, { $jsonSchema: myschema })).toEqual(VALID);
    const agg = await mql('aggregate', { collection: c, pipeline: [{ $match: { $jsonSchema: myschema } }] });
    expect(agg.status, agg.text).toBe(200);
    expect(agg.body.documents.map((d: { _id: number }) => d._id)).toEqual(VALID);
  });

  it('$nor gives the invalid ones, and updateMany/deleteMany act on them', async () => {
    const c = await seed(INVENTORY);
    expect(await ids(c, { $nor: [{ $jsonSchema: myschema }] })).toEqual(INVALID);
    const upd = await mql('updateMany', { collection: c, filter: { $nor: [{ $jsonSchema: myschema }] }, update: { $set: { isValid: false } } });
    expect(upd.body).toMatchObject({ matchedCount: 5, modifiedCount: 5 });
    expect((await all(c)).filter((d) => d.isValid === false).map((d) => d._id)).toEqual(INVALID);
    const del = await mql('deleteMany', { collection: c, filter: { $nor: [{ $jsonSchema: myschema }] } });
    expect(del.body).toEqual({ deletedCount: 5 });
    expect((await all(c)).map((d) => d._id)).toEqual(VALID);
  });

  it('the $jsonSchema page\'s example schema (required, nested properties)', async () => {
    const schema = {
      required: ['name', 'major', 'gpa', 'address'],
      properties: {
        name: { bsonType: 'string', description: 'must be a string and is required' },
        address: { bsonType: 'object', required: ['zipcode'], properties: { street: { bsonType: 'string' }, zipcode: { bsonType: 'string' } } },
      },
    };
    const c = await seed([
      { _id: 1, name: 'Ada', major: 'Math', gpa: 3.5, address: { street: 'Main', zipcode: '10001' } },
      { _id: 2, name: 'Bo', major: 'Art', gpa: 3.1, address: { street: 'Elm' } },
      { _id: 3, name: 'Cy', major: 'Art', address: { zipcode: '1' } },
      { _id: 4, name: 7, major: 'Art', gpa: 2, address: { zipcode: '2' } },
      { _id: 5, name: 'Di', major: 'Art', gpa: 2, address: { zipcode: 2 } },
    ]);
    expect(await ids(c, { $jsonSchema: schema })).toEqual([1]);
  });
});

describe('MongoDB jstests: json_schema.js', () => {
  const NUMS = [
    { _id: 0, num: 3 },
    { _id: 1, num: -3 },
    { _id: 2, num: 2 },
    { _id: 3, num: -2 },
    { _id: 4, num: 2 ** 40 }, // NumberLong in the jstest: a long here by value
    { _id: 5, num: -(2 ** 40) },
    { _id: 6, num: {} },
    { _id: 7, num: 'str' },
    { _id: 8, num: 'string' },
    { _id: 9 },
  ];
  let c: string;
  beforeAll(async () => {
    c = await seed(NUMS);
  });
  const cases: ReadonlyArray<readonly [string, unknown, unknown[]]> = [
    ['the empty schema matches everything', {}, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ['type "object" matches every document', { type: 'object' }, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ['a top-level type other than object matches nothing', { type: 'string' }, []],
    ['top-level bsonType long', { bsonType: 'long' }, []],
    ['top-level bsonType objectId', { bsonType: 'objectId' }, []],
    ['type number: numbers or missing', { properties: { num: { type: 'number' } } }, [0, 1, 2, 3, 4, 5, 9]],
    ['maximum with type number', { properties: { num: { type: 'number', maximum: -1 } } }, [1, 3, 5, 9]],
    ['the same with a top-level type object', { type: 'object', properties: { num: { type: 'number', maximum: -1 } } }, [1, 3, 5, 9]],
    ['bsonType long', { properties: { num: { bsonType: 'long' } } }, [4, 5, 9]],
    ['maximum with bsonType long', { properties: { num: { bsonType: 'long', maximum: 0 } } }, [5, 9]],
    ['maximum alone only restricts numbers', { properties: { num: { maximum: 0 } } }, [1, 3, 5, 6, 7, 8, 9]],
    ['maximum has no effect beside type string', { properties: { num: { type: 'string', maximum: 0 } } }, [7, 8, 9]],
    ['maxLength 2', { properties: { num: { type: 'string', maxLength: 2 } } }, [9]],
    ['maxLength 3', { properties: { num: { type: 'string', maxLength: 3 } } }, [7, 9]],
    ['minLength 4', { properties: { num: { type: 'string', minLength: 4 } } }, [8, 9]],
    ['minLength 3', { properties: { num: { type: 'string', minLength: 3 } } }, [7, 8, 9]],
    ['pattern', { properties: { num: { type: 'string', pattern: 'ing' } } }, [8, 9]],
  ];
  for (const [name, schema, expected] of cases) {
    it(name, async () => {
      expect(await ids(c, { $jsonSchema: schema })).toEqual(expected);
    });
  }

  it('nested properties, and combined with other conditions under $or', async () => {
    const objs = await seed([
      { _id: 0, obj: 3 },
      { _id: 1, obj: { f1: { f3: 'str' }, f2: 'str' } },
      { _id: 2, obj: { f1: 'str', f2: 'str' } },
      { _id: 3, obj: { f1: 1, f2: 'str' } },
    ]);
    const schema = { properties: { obj: { properties: { f1: { type: 'object', properties: { f3: { type: 'string' } } }, f2: { type: 'string' } } } } };
    expect(await ids(objs, { $jsonSchema: schema })).toEqual([0, 1]);
    expect(await ids(objs, { $or: [{ 'obj.f1': 'str' }, { $jsonSchema: schema }] })).toEqual([0, 1, 2]);
  });

  it('type array and type number do not look into arrays', async () => {
    const arrs = await seed([{ _id: 0, arr: 3 }, { _id: 1, arr: [1, 'foo'] }, { _id: 2, arr: [{ a: 1 }, { b: 2 }] }, { _id: 3, arr: [] }, { _id: 4, arr: { a: [] } }]);
    expect(await ids(arrs, { $jsonSchema: { properties: { arr: { type: 'array' } } } })).toEqual([1, 2, 3]);
    expect(await ids(arrs, { $jsonSchema: { properties: { arr: { type: 'number' } } } })).toEqual([0]);
  });

  it('sibling predicates, $and and $or', async () => {
    const ab = await seed([{ _id: 1, a: 1, b: 1 }, { _id: 2, a: 2, b: 2 }]);
    expect(await ids(ab, { $jsonSchema: { properties: { a: { type: 'number' } }, required: ['a'] }, b: 1 })).toEqual([1]);
    expect(await ids(ab, { $or: [{ $jsonSchema: {}, a: 1 }, { b: 1 }] })).toEqual([1]);
    expect(await ids(ab, { $and: [{ $jsonSchema: {}, a: 1 }, { b: 1 }] })).toEqual([1]);
  });

  table('title and description are checked and ignored', [
    [{ description: 'test' }, {}, true],
    [{ title: 'insert title' }, {}, true],
    [{ properties: { a: { description: 'test' } } }, { a: {} }, true],
    [{ properties: { a: { title: "this is a's title" } } }, { a: {} }, true],
  ]);
});

describe('MongoDB jstests: the keyword files', () => {
  table('bsontype.js', [
    [{ properties: { num: { bsonType: 'double' } } }, { num: 3.5 }, true],
    [{ properties: { num: { bsonType: 'double' } } }, { num: 2 ** 40 }, false],
    [{ properties: { num: { bsonType: 'double' } } }, { num: 3 }, false],
    [{ properties: { num: { bsonType: 'double' } } }, { num: {} }, false],
    [{ properties: { num: { bsonType: 'double' } } }, { num: [3.5] }, false],
    [{ properties: { num: { bsonType: 'double' } } }, { foo: {} }, true],
    [{ properties: { str: { bsonType: 'string' } } }, { str: '' }, true],
    [{ properties: { str: { bsonType: 'string' } } }, { str: true }, false],
    [{ properties: { str: { bsonType: 'string' } } }, { str: [1, 'foo'] }, false],
    [{ properties: { str: { type: 'string' } } }, { str: '' }, true],
    [{ properties: { str: { type: 'string' } } }, { str: true }, false],
    [{ properties: { str: { type: 'string' } } }, { str: [1, 'foo'] }, false],
    [{ bsonType: 'object' }, {}, true],
    [{ properties: { obj: { bsonType: 'object' } } }, { obj: {} }, true],
    [{ properties: { obj: { bsonType: 'object' } } }, { obj: true }, false],
    [{ properties: { obj: { bsonType: 'object' } } }, { obj: [{}] }, false],
    [{ type: 'object' }, {}, true],
    [{ properties: { obj: { type: 'object' } } }, { obj: {} }, true],
    [{ properties: { obj: { type: 'object' } } }, { obj: [{}] }, false],
    [{ bsonType: 'array' }, { arr: [] }, false],
    [{ properties: { arr: { bsonType: 'array' } } }, { arr: [] }, true],
    [{ properties: { arr: { bsonType: 'array' } } }, { arr: {} }, false],
    [{ type: 'array' }, { arr: [] }, false],
    [{ properties: { arr: { type: 'array' } } }, { arr: [] }, true],
    [{ properties: { b: { bsonType: 'bool' } } }, { b: true }, true],
    [{ properties: { b: { bsonType: 'bool' } } }, { b: false }, true],
    [{ properties: { b: { bsonType: 'bool' } } }, { b: 1 }, false],
    [{ properties: { b: { type: 'boolean' } } }, { b: true }, true],
    [{ properties: { b: { type: 'boolean' } } }, { b: 1 }, false],
    [{ properties: { date: { bsonType: 'date' } } }, { date: { $date: '2024-01-01T00:00:00Z' } }, true],
    [{ properties: { date: { bsonType: 'date' } } }, { date: 1 }, false],
    [{ properties: { n: { bsonType: 'null' } }, required: ['n'] }, { n: null }, true],
    [{ properties: { n: { bsonType: 'null' } }, required: ['n'] }, {}, false],
    [{ properties: { n: { type: 'null' } }, required: ['n'] }, { n: null }, true],
    [{ properties: { n: { type: 'null' } }, required: ['n'] }, {}, false],
    [{ properties: { num: { bsonType: 'int' } } }, { num: 3 }, true],
    [{ properties: { num: { bsonType: 'int' } } }, { num: 2 ** 40 }, false],
    [{ properties: { num: { bsonType: 'int' } } }, { num: 3.5 }, false],
    [{ properties: { num: { bsonType: 'int' } } }, { foo: {} }, true],
    [{ properties: { num: { bsonType: 'long' } } }, { num: 2 ** 40 }, true],
    [{ properties: { num: { bsonType: 'long' } } }, { num: 3 }, false],
    [{ properties: { num: { bsonType: 'decimal' } } }, { num: 3 }, false],
    [{ properties: { o: { bsonType: 'objectId' } } }, { o: 1 }, false],
    [{ properties: { f: { type: ['number', 'string'] } } }, { f: 1 }, true],
    [{ properties: { f: { type: ['number', 'string'] } } }, { f: 'str' }, true],
    [{ properties: { f: { type: ['number', 'string'] } } }, {}, true],
    [{ properties: { f: { type: ['number', 'string'] } } }, { f: ['str', 1] }, false],
    [{ properties: { f: { type: ['number', 'string'] } } }, { f: {} }, false],
    [{ properties: { f: { bsonType: ['objectId', 'double'] } } }, { f: 1.5 }, true],
    [{ properties: { f: { bsonType: ['objectId', 'double'] } } }, { f: [1.5] }, false],
    [{ properties: { f: { bsonType: ['objectId', 'double'] } } }, { f: 1 }, false],
    [{ type: ['object', 'string'] }, {}, true],
    [{ type: ['object', 'string'] }, { foo: 1, bar: 1 }, true],
    [{ bsonType: ['object', 'double'] }, { foo: 1, bar: 1 }, true],
    [{ type: 'object', properties: { obj: { bsonType: 'object' } } }, { obj: {} }, true],
    [{ type: 'object', properties: { obj: { bsonType: 'object' } } }, { obj: [] }, false],
    [{ properties: { a: { bsonType: 'long' }, b: { type: 'null' } } }, { a: 2 ** 40, b: null }, true],
    [{ properties: { a: { bsonType: 'long' }, b: { type: 'null' } } }, { a: 2 ** 40 }, true],
    [{ properties: { a: { bsonType: 'long' }, b: { type: 'null' } } }, { b: null }, true],
    [{ properties: { a: { bsonType: 'long' }, b: { type: 'null' } } }, { a: 3, b: null }, false],
    [{ properties: { a: { bsonType: 'long' }, b: { type: 'null' } } }, { a: 2 ** 40, b: 3 }, false],
  ]);

  table('logical_keywords.js', [
    [{ properties: { foo: { allOf: [{ minimum: 1 }] } } }, { foo: 1 }, true],
    [{ properties: { foo: { allOf: [{ minimum: 1 }] } } }, { foo: 0 }, false],
    [{ properties: { foo: { allOf: [{ minimum: 1 }] } } }, { foo: 'string' }, true],
    [{ properties: { foo: { allOf: [{}] } } }, { foo: {} }, true],
    [{ properties: { foo: { allOf: [{}] } } }, {}, true],
    [{ properties: { foo: { allOf: [{ type: 'number' }, { minimum: 0 }] } } }, { foo: 0 }, true],
    [{ properties: { foo: { allOf: [{ type: 'number' }, { minimum: 0 }] } } }, { foo: 'string' }, false],
    [{ properties: { foo: { allOf: [{ type: 'number' }, { minimum: 0 }] } } }, { foo: [0] }, false],
    [{ allOf: [{}] }, {}, true],
    [{ allOf: [{ type: 'string' }] }, {}, false],
    [{ allOf: [{ properties: { foo: { type: 'string' } } }] }, { foo: 'str' }, true],
    [{ allOf: [{ properties: { foo: { type: 'string' } } }] }, { foo: 1 }, false],
    [{ properties: { foo: { type: 'number', allOf: [{ minimum: 1 }] } } }, { foo: 1 }, true],
    [{ properties: { foo: { type: 'number', allOf: [{ minimum: 1 }] } } }, { foo: 'str' }, false],
    [{ properties: { foo: { anyOf: [{ type: 'string' }, { type: 'number', minimum: 1 }] } } }, { foo: 'str' }, true],
    [{ properties: { foo: { anyOf: [{ type: 'string' }, { type: 'number', minimum: 1 }] } } }, { foo: 1 }, true],
    [{ properties: { foo: { anyOf: [{ type: 'string' }, { type: 'number', minimum: 1 }] } } }, { foo: 0 }, false],
    [{ properties: { foo: { anyOf: [{ type: 'string' }, { type: 'object' }] } } }, { foo: [{}] }, false],
    [{ anyOf: [{ properties: { foo: { type: 'string' } } }] }, {}, true],
    [{ anyOf: [{ properties: { foo: { type: 'string' } } }] }, { foo: 1 }, false],
    [{ properties: { foo: { oneOf: [{ minimum: 0 }, { maximum: 3 }] } } }, { foo: 4 }, true],
    [{ properties: { foo: { oneOf: [{ minimum: 0 }, { maximum: 3 }] } } }, { foo: 1 }, false],
    [{ properties: { foo: { oneOf: [{ minimum: 0 }, { maximum: 3 }] } } }, { foo: 'str' }, false],
    [{ properties: { foo: { oneOf: [{ type: 'string' }, { pattern: 'ing' }] } } }, { foo: 'str' }, true],
    [{ properties: { foo: { oneOf: [{ type: 'string' }, { pattern: 'ing' }] } } }, { foo: 'string' }, false],
    [{ oneOf: [{ properties: { foo: { type: 'string' } } }] }, { foo: 1 }, false],
    [{ oneOf: [{}, {}] }, {}, false],
    [{ properties: { foo: { type: 'number', oneOf: [{ minimum: 4 }] } } }, { foo: 4 }, true],
    [{ properties: { foo: { type: 'number', oneOf: [{ minimum: 4 }] } } }, {}, true],
    [{ properties: { foo: { type: 'number', oneOf: [{ minimum: 4 }] } } }, { foo: 'str' }, false],
    [{ properties: { foo: { not: { type: 'number' } } } }, {}, true],
    [{ properties: { foo: { not: { type: 'number' } } } }, { foo: 'str' }, true],
    [{ properties: { foo: { not: { type: 'number' } } } }, { foo: 1 }, false],
    [{ properties: { foo: { not: {} } } }, {}, true],
    [{ properties: { foo: { not: {} } } }, { foo: 1 }, false],
    [{ not: {} }, {}, false],
    [{ not: { properties: { foo: { type: 'string' } } } }, { foo: 1 }, true],
    [{ not: { properties: { foo: { type: 'string' } } } }, { foo: 'str' }, false],
    [{ not: { properties: { foo: { type: 'string' } } } }, {}, false],
    [{ properties: { foo: { type: 'string', not: { maxLength: 4 } } } }, {}, true],
    [{ properties: { foo: { type: 'string', not: { maxLength: 4 } } } }, { foo: 'string' }, true],
    [{ properties: { foo: { type: 'string', not: { maxLength: 4 } } } }, { foo: 'str' }, false],
    [{ properties: { foo: { type: 'string', not: { maxLength: 4 } } } }, { foo: 1 }, false],
    [{ properties: { a: { enum: ['str', 5] } } }, { a: 'str' }, true],
    [{ properties: { a: { enum: ['str', 5] } } }, { a: 5 }, true],
    [{ properties: { a: { enum: ['str', 5] } } }, {}, true],
    [{ properties: { a: { enum: ['str', 5] } } }, { a: ['str'] }, false],
    [{ properties: { a: { enum: [null] } } }, { a: null }, true],
    [{ properties: { a: { enum: [null] } } }, { a: 1 }, false],
    [{ properties: { a: { enum: [null] } }, required: ['a'] }, {}, false],
    [{ properties: { a: { enum: [[1, 2, '3']] } } }, { a: [1, 2, '3'] }, true],
    [{ properties: { a: { enum: [[1, 2, '3']] } } }, { a: [2, '3', 1] }, false],
    [{ properties: { a: { enum: [[]] } } }, { a: [] }, true],
    [{ properties: { a: { enum: [[]] } } }, { a: [1] }, false],
    [{ properties: { a: { enum: ['str', 1] } } }, { a: [1] }, false],
    [{ properties: { a: { enum: [{ name: 'tiny', size: 'large' }] } } }, { a: { name: 'tiny', size: 'large' } }, true],
    [{ properties: { a: { enum: [{ name: 'tiny', size: 'large' }] } } }, { a: { size: 'large', name: 'tiny' } }, true],
    [{ properties: { a: { enum: [{ name: 'tiny' }] } } }, { a: { size: 'large', name: 'tiny' } }, false],
    [{ enum: [{ _id: 0 }] }, { _id: 0 }, true],
    [{ enum: [{ _id: 0, a: 'str' }] }, { _id: 0, a: 'str' }, true],
    [{ enum: [{ a: 'str', _id: 0 }] }, { _id: 0, a: 'str' }, true],
    [{ enum: [{}] }, {}, false],
    [{ enum: [null] }, {}, false],
    [{ enum: [{ _id: 0, a: 'str' }] }, { _id: 0, a: 'str', b: 1 }, false],
    [{ enum: [1, 2] }, {}, false],
  ]);

  table('unique_items.js', [
    [{ uniqueItems: true }, {}, true],
    [{ uniqueItems: false }, {}, true],
    [{ properties: { a: { uniqueItems: true } } }, {}, true],
    [{ properties: { a: { uniqueItems: true } } }, { a: 'foo' }, true],
    [{ properties: { a: { uniqueItems: true } } }, { a: { foo: [1, 1], bar: [2, 2] } }, true],
    [{ properties: { a: { uniqueItems: true } } }, { a: [] }, true],
    [{ properties: { a: { uniqueItems: true } } }, { a: [1, 2, 3] }, true],
    [{ properties: { a: { uniqueItems: true } } }, { a: ['foo', 'FOO'] }, true],
    [{ properties: { a: { uniqueItems: true } } }, { a: [{}, '', [], null] }, true],
    [{ properties: { a: { uniqueItems: true } } }, { a: [[1, 2], [2, 1]] }, true],
    [{ properties: { a: { uniqueItems: true } } }, { a: [1, 1] }, false],
    [{ properties: { a: { uniqueItems: true } } }, { a: [1, 1.0] }, false],
    [{ properties: { a: { uniqueItems: true } } }, { a: ['foo', 'foo'] }, false],
    [{ properties: { a: { uniqueItems: true } } }, { a: [{ a: 1 }, { a: 1 }] }, false],
    [{ properties: { a: { uniqueItems: true } } }, { a: [[1, 2], [1, 2]] }, false],
    [{ properties: { a: { uniqueItems: true } } }, { a: [null, null] }, false],
    [{ properties: { a: { uniqueItems: true } } }, { a: [{ x: 1, y: 1 }, { y: 1, x: 1 }] }, false],
    [{ properties: { a: { uniqueItems: true } } }, { a: [{ x: [1, 2], y: 'a' }, { y: 'a', x: [1, 2] }] }, false],
    [{ properties: { a: { uniqueItems: false } } }, { a: [1, 1] }, true],
    [{ properties: { a: { uniqueItems: false } } }, { a: [{ x: 1, y: 1 }, { y: 1, x: 1 }] }, true],
  ]);

  table('items.js and additional_items.js', [
    [{ items: { type: 'number' } }, {}, true],
    [{ items: [{ type: 'number' }] }, {}, true],
    [{ properties: { a: { items: { minimum: 0 } } } }, {}, true],
    [{ properties: { a: { items: { minimum: 0 } } } }, { a: -1 }, true],
    [{ properties: { a: { items: [{ minimum: 0 }] } } }, { a: -1 }, true],
    [{ properties: { a: { items: { pattern: 'a+b' } } } }, { a: [] }, true],
    [{ properties: { a: { items: { pattern: 'a+b' } } } }, { a: [7] }, true],
    [{ properties: { a: { items: { pattern: 'a+b' } } } }, { a: [null] }, true],
    [{ properties: { a: { items: { pattern: 'a+b' } } } }, { a: ['cab', 'caab'] }, true],
    [{ properties: { a: { items: { pattern: 'a+b' } } } }, { a: ['cab', 'caab', 'b'] }, false],
    [{ properties: { a: { items: [{ multipleOf: 2 }] } } }, { a: [] }, true],
    [{ properties: { a: { items: [{ multipleOf: 2 }] } } }, { a: [2, 3] }, true],
    [{ properties: { a: { items: [{ multipleOf: 2 }] } } }, { a: [3] }, false],
    [{ properties: { a: { items: [{ maxLength: 1 }, { maxLength: 2 }] } } }, { a: ['1', '12', '123'] }, true],
    [{ properties: { a: { items: [{ maxLength: 1 }, { maxLength: 2 }] } } }, { a: ['12'] }, false],
    [{ properties: { a: { items: [{ maxLength: 1 }, { maxLength: 2 }] } } }, { a: ['1', '123'] }, false],
    [{ properties: { a: { items: [] } } }, { a: [1, 'foo', {}] }, true],
    [{ items: [{ type: 'number' }], additionalItems: false }, {}, true],
    [{ items: [{ type: 'number' }], additionalItems: { type: 'string' } }, {}, true],
    [{ properties: { a: { additionalItems: false } } }, { a: [1, 2, 3] }, true],
    [{ properties: { a: { additionalItems: { type: 'object' } } } }, { a: [1, 2, 3] }, true],
    [{ properties: { a: { items: {}, additionalItems: false } } }, { a: [1, 2, 3] }, true],
    [{ properties: { a: { items: [{ type: 'number' }, { type: 'string' }], additionalItems: false } } }, { a: [229, 'West 43rd'] }, true],
    [{ properties: { a: { items: [{ type: 'number' }, { type: 'string' }], additionalItems: false } } }, { a: [229, 'West 43rd', 'Street'] }, false],
    [{ properties: { a: { items: [{ type: 'number' }, { type: 'string' }], additionalItems: true } } }, { a: [229, 'West 43rd', 'Street'] }, true],
    [{ properties: { a: { items: [{ not: {} }], additionalItems: true } } }, { a: [] }, true],
    [{ properties: { a: { items: [{ type: 'number' }, { type: 'string' }], additionalItems: { type: 'object' } } } }, { a: [229, 'West 43rd', 'Street'] }, false],
    [{ properties: { a: { items: [{ type: 'number' }, { type: 'string' }], additionalItems: { type: 'object' } } } }, { a: [229, 'West 43rd', {}] }, true],
    [{ properties: { a: { items: [{ not: {} }], additionalItems: { not: {} } } } }, { a: [] }, true],
  ]);

  table('min_max_items.js and min_max_properties.js', [
    [{ minItems: 1 }, {}, true],
    [{ properties: { a: { minItems: 1 } } }, { a: [] }, false],
    [{ properties: { a: { minItems: 1 } } }, { a: ['x'] }, true],
    [{ properties: { a: { minItems: 1 } } }, { a: 1 }, true],
    [{ properties: { a: { maxItems: 1 } } }, { a: [1, 2] }, false],
    [{ properties: { a: { maxItems: 1 } } }, { a: [[1, 2]] }, true],
    [{ minProperties: 0 }, { a: 1 }, true],
    [{ maxProperties: 0 }, {}, false],
    [{ minProperties: 2 }, { _id: 0 }, false],
    [{ minProperties: 2 }, { _id: 0, a: 1 }, true],
    [{ maxProperties: 2 }, { _id: 0, a: 1 }, true],
    [{ maxProperties: 2 }, { _id: 0, a: 1, b: 2 }, false],
    [{ properties: { a: { maxProperties: 1 } } }, { a: 1 }, true],
    [{ properties: { a: { maxProperties: 1 } } }, { a: { b: 1, c: 1 } }, false],
    [{ properties: { a: { maxProperties: 0 } } }, { a: {} }, true],
    [{ properties: { a: { minProperties: 1 } } }, { a: {} }, false],
    [{ properties: { a: { minProperties: 1 } } }, { a: { b: 1 } }, true],
  ]);

  table('required.js, additional_properties.js and pattern_properties.js', [
    [{ required: ['a'] }, { a: null }, true],
    [{ required: ['a'] }, { b: 1 }, false],
    [{ required: ['a', 'b'] }, { a: 1 }, false],
    [{ properties: { obj: { required: ['a'] } } }, { obj: { a: 1 } }, true],
    [{ properties: { obj: { required: ['a'] } } }, { obj: {} }, false],
    [{ properties: { obj: { required: ['a'] } } }, { obj: [] }, true],
    [{ properties: { obj: { required: ['a'] } } }, {}, true],
    [{ properties: { _id: {}, a: {} }, additionalProperties: false }, { _id: 1 }, true],
    [{ properties: { _id: {}, a: {} }, additionalProperties: false }, { _id: 1, a: 1 }, true],
    [{ properties: { _id: {}, a: {} }, additionalProperties: false }, { _id: 1, b: 1 }, false],
    [{ properties: { _id: {}, a: {} }, additionalProperties: true }, { _id: 1, a: 1, b: 1 }, true],
    [{ properties: { _id: {}, a: {} }, additionalProperties: { type: 'number' } }, { _id: 1, b: 1 }, true],
    [{ properties: { _id: {}, a: {} }, additionalProperties: { type: 'number' } }, { _id: 1, b: 'str' }, false],
    [{ properties: { _id: {}, a: {} }, patternProperties: { '^b': { type: 'string' } }, additionalProperties: { type: 'number' } }, { _id: 1, a: 1, ba: 'str', other: 1 }, true],
    [{ properties: { _id: {}, a: {} }, patternProperties: { '^b': { type: 'string' } }, additionalProperties: { type: 'number' } }, { _id: 1, a: 1, ba: 'str', other: 'str' }, false],
    [{ properties: { _id: {}, a: {} }, patternProperties: { '^b': { type: 'string' } }, additionalProperties: { type: 'number' } }, { _id: 1, a: 1, ba: 1, other: 1 }, false],
    [{ properties: { _id: {}, a: {} }, patternProperties: { '^b': { type: 'string' } }, additionalProperties: false }, { _id: 1, a: 1, ba: 'str' }, true],
    [{ properties: { _id: {}, a: {} }, patternProperties: { '^b': { type: 'string' } }, additionalProperties: false }, { _id: 1, a: 1, ba: 'str', other: 1 }, false],
    [{ properties: { obj: { properties: { a: {} }, additionalProperties: false } } }, { obj: 1 }, true],
    [{ properties: { obj: { properties: { a: {} }, additionalProperties: false } } }, { obj: { a: 1, b: 1 } }, false],
    [{ properties: { obj: { properties: { a: {} }, additionalProperties: { type: 'number' } } } }, { obj: { a: 1, b: 'str' } }, false],
    [{ properties: { obj: { properties: { a: {} }, patternProperties: { '^b': { type: 'string' } }, additionalProperties: { type: 'number' } } } }, { obj: { a: 1, ba: 'str', c: 1 } }, true],
    [{ properties: { obj: { properties: { a: {} }, patternProperties: { '^b': { type: 'string' } }, additionalProperties: { type: 'number' } } } }, { obj: { a: 1, ba: 1, c: 1 } }, false],
    [{ patternProperties: { '^a': { type: 'number' }, '^b': { type: 'string' } } }, { c: 1 }, true],
    [{ patternProperties: { '^a': { type: 'number' }, '^b': { type: 'string' } } }, { a: 'str', ca: 1, cb: 1 }, false],
    [{ patternProperties: { '^a': { type: 'number' }, '^b': { type: 'string' } } }, { a: 1, b: 1, ca: 1, cb: 1 }, false],
    [{ patternProperties: { '^a': { type: 'number' }, '^b': { type: 'string' } } }, { a: 1, b: 'str', ca: 1, cb: 1 }, true],
    [{ properties: { obj: { patternProperties: { '^a': { type: 'number' }, '^b': { type: 'string' } } } } }, { obj: { ac: 'str', ca: 1, cb: 1 } }, false],
    [{ properties: { obj: { patternProperties: { '^a': { type: 'number' }, '^b': { type: 'string' } } } } }, { obj: { ac: 1, bc: 'str', ca: 1, cb: 1 } }, true],
    [{ properties: { aa: { type: 'number' } }, patternProperties: { '^a': { type: 'string' } } }, { aa: 1 }, false],
    [{ properties: { obj: { properties: { aa: { type: 'number' } }, patternProperties: { '^a': { type: 'string' } } } } }, { obj: { aa: 1 } }, false],
  ]);

  table('dependencies.js', [
    [{ dependencies: { foo: { required: ['bar'] } } }, {}, true],
    [{ dependencies: { foo: { required: ['bar'] } } }, { foo: 1, bar: 1 }, true],
    [{ dependencies: { foo: { required: ['bar'] } } }, { bar: 1 }, true],
    [{ dependencies: { foo: { required: ['bar'] } } }, { foo: 1 }, false],
    [{ dependencies: { foo: { required: ['bar'], properties: { baz: { type: 'string' } } } } }, { foo: 1, bar: 1, baz: 1 }, false],
    [{ dependencies: { foo: { required: ['bar'], properties: { baz: { type: 'string' } } } } }, { foo: 1, bar: 1, baz: 'str' }, true],
    [{ dependencies: { foo: ['bar', 'baz'] } }, { bar: 1 }, true],
    [{ dependencies: { foo: ['bar', 'baz'] } }, { foo: 1, bar: 1 }, false],
    [{ dependencies: { foo: ['bar', 'baz'] } }, { foo: 1, bar: 1, baz: 1 }, true],
    [{ properties: { obj: { dependencies: { foo: { required: ['bar'] } } } } }, { obj: 1 }, true],
    [{ properties: { obj: { dependencies: { foo: { required: ['bar'] } } } } }, { obj: { foo: 1 } }, false],
    [{ properties: { obj: { dependencies: { foo: { required: ['bar'] } } } } }, { obj: { foo: 1, bar: 1 } }, true],
    [{ properties: { obj: { dependencies: { foo: ['bar'] } } } }, { obj: { foo: 1 } }, false],
    [{ properties: { obj: { dependencies: { a: ['b'], c: { required: ['d'] } } } } }, { obj: { a: 1, b: 1, c: 1 } }, false],
    [{ properties: { obj: { dependencies: { a: ['b'], c: { required: ['d'] } } } } }, { obj: { a: 1, c: 0, d: 1 } }, false],
    [{ properties: { obj: { dependencies: { a: ['b'], c: { required: ['d'] } } } } }, { obj: { a: 1, b: 1, c: 1, d: 1 } }, true],
    [{ dependencies: {} }, {}, true],
  ]);

  table('scalar keywords: bounds, multipleOf (Decimal128), code points, PCRE patterns', [
    [{ properties: { n: { minimum: 5, exclusiveMinimum: true } } }, { n: 5 }, false],
    [{ properties: { n: { minimum: 5, exclusiveMinimum: false } } }, { n: 5 }, true],
    [{ properties: { n: { maximum: 5, exclusiveMaximum: true } } }, { n: 5 }, false],
    [{ properties: { n: { maximum: 5 } } }, { n: 5 }, true],
    [{ properties: { n: { maximum: 5 } } }, { n: [9] }, true],
    [{ properties: { n: { minimum: 5 } } }, { n: 'a' }, true],
    [{ properties: { n: { multipleOf: 0.1 } } }, { n: 0.3 }, true],
    [{ properties: { n: { multipleOf: 0.01 } } }, { n: 1.1 }, true],
    [{ properties: { n: { multipleOf: 0.1 } } }, { n: 0.35 }, false],
    [{ properties: { n: { multipleOf: 3 } } }, { n: -9 }, true],
    [{ properties: { n: { multipleOf: 3 } } }, { n: 10 }, false],
    [{ properties: { n: { multipleOf: 3 } } }, { n: 'x' }, true],
    [{ properties: { s: { maxLength: 2 } } }, { s: '😀😀' }, true],
    [{ properties: { s: { minLength: 3 } } }, { s: '😀😀' }, false],
    [{ properties: { s: { pattern: '^[[:alpha:]]+\\z' } } }, { s: 'abc' }, true],
    [{ properties: { s: { pattern: 'b' } } }, { s: 'abc' }, true],
    [{ properties: { s: { pattern: 'B' } } }, { s: 'abc' }, false],
    [{ properties: { s: { pattern: 'b' } } }, { s: ['abc'] }, true],
    [{ properties: { s: { type: 'string', pattern: 'b' } } }, { s: ['abc'] }, false],
  ]);
});

describe('where $jsonSchema may appear', () => {
  const DOCS = [
    { _id: 1, a: 1, tags: [{ k: 'x' }, { k: 1 }] },
    { _id: 2, a: 'one', tags: [{ k: 2 }] },
    { _id: 3, tags: [] },
  ];
  const schema = { properties: { a: { bsonType: 'int' } } };

  it('count, distinct, findOne, $not around a field, $elemMatch', async () => {
    const c = await seed(DOCS);
    expect((await mql('countDocuments', { collection: c, filter: { $jsonSchema: schema } })).body).toEqual({ count: 2 });
    expect((await mql('distinct', { collection: c, key: 'a', filter: { $jsonSchema: schema } })).body).toEqual({ values: [1] });
    expect((await mql('findOne', { collection: c, filter: { $jsonSchema: { required: ['a'], properties: { a: { type: 'string' } } } } })).body.document._id).toBe(2);
    // The document form of $elemMatch applies the schema to each element that is a document.
    expect(await ids(c, { tags: { $elemMatch: { $jsonSchema: { required: ['k'], properties: { k: { type: 'string' } } } } } })).toEqual([1]);
  });

  it('the write operations and findOneAnd*', async () => {
    const c = await seed(DOCS);
    expect((await mql('updateOne', { collection: c, filter: { $jsonSchema: { required: ['a'] }, a: 'one' }, update: { $set: { hit: 1 } } })).body).toMatchObject({ matchedCount: 1 });
    const fu = await mql('findOneAndUpdate', { collection: c, filter: { $jsonSchema: { not: { required: ['a'] } } }, update: { $set: { hit: 2 } }, returnDocument: 'after' });
    expect(fu.body.document).toMatchObject({ _id: 3, hit: 2 });
    const fr = await mql('findOneAndReplace', { collection: c, filter: { $jsonSchema: { required: ['hit'], properties: { hit: { minimum: 2 } } } }, replacement: { r: true } });
    expect(fr.body.document._id).toBe(3);
    const fd = await mql('findOneAndDelete', { collection: c, filter: { $jsonSchema: { properties: { hit: { maximum: 1 } }, required: ['hit'] } } });
    expect(fd.body.document._id).toBe(2);
    expect((await mql('deleteOne', { collection: c, filter: { $jsonSchema: { required: ['r'] } } })).body).toEqual({ deletedCount: 1 });
    expect((await all(c)).map((d) => d._id)).toEqual([1]);
  });

  it('an upsert takes no field from $jsonSchema', async () => {
    const c = await seed([{ _id: 1 }]);
    const res = await mql('updateOne', { collection: c, filter: { $jsonSchema: { required: ['zz'] }, k: 5 }, update: { $set: { v: 1 } }, upsert: true });
    expect(res.status, res.text).toBe(200);
    const upserted = (await all(c)).find((d) => d._id === res.body.upsertedId);
    expect(upserted).toMatchObject({ k: 5, v: 1 });
    expect(Object.keys(upserted).sort()).toEqual(['_id', 'k', 'v']);
  });

  it('is a top-level operator only, and not in arrayFilters', async () => {
    const c = await seed(DOCS);
    const field = await mql('find', { collection: c, filter: { a: { $jsonSchema: {} } } });
    expect(field.status).toBe(400);
    expect(field.body.error.message).toBe('unknown operator: $jsonSchema');
    const notField = await mql('find', { collection: c, filter: { a: { $not: { $jsonSchema: {} } } } });
    expect(notField.status).toBe(400);
    const af = await mql('updateMany', { collection: c, filter: {}, update: { $set: { 'tags.$[t].z': 1 } }, arrayFilters: [{ 't.k': 'x', $jsonSchema: {} }] });
    expect(af.status).toBe(400);
    expect(af.body.error.message).toBe('$jsonSchema is not allowed in the context of an array filter');
    expect(await all(c)).toEqual(DOCS);
  });
});

describe('indexes', () => {
  it('never uses an index for the schema; the other conditions still may', async () => {
    const c = await seed(Array.from({ length: 40 }, (_, i) => ({ _id: i, x: i % 10, y: i % 2 === 0 ? 'even' : i })));
    expect((await mql('createIndex', { collection: c, keys: { x: 1 } })).status).toBe(200);
    const explain = async (filter: unknown): Promise<{ stage: string; ids: unknown[] }> => {
      const res = await mql('find', { collection: c, filter, explain: true, sort: { _id: 1 } });
      expect(res.status, res.text).toBe(200);
      return { stage: res.body.explain.plan.stage, ids: res.body.documents.map((d: { _id: unknown }) => d._id) };
    };
    const schema = { properties: { y: { type: 'string' } } };
    expect(await explain({ $jsonSchema: { required: ['x'], properties: { x: { enum: [3] } } } })).toEqual({ stage: 'COLLSCAN', ids: [3, 13, 23, 33] });
    const both = await explain({ $jsonSchema: schema, x: 4 });
    expect(both).toEqual({ stage: 'IXSCAN', ids: [4, 14, 24, 34] });
    expect(await explain({ $jsonSchema: schema, x: 3 })).toEqual({ stage: 'IXSCAN', ids: [] });
  });

  it('is refused in a partial index filter, as MongoDB refuses it', async () => {
    const c = await seed([{ _id: 1, a: 1 }]);
    const res = await mql('createIndex', { collection: c, keys: { a: 1 }, partialFilterExpression: { $jsonSchema: { required: ['a'] } } });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_FAILED', message: 'Expression not supported in partial index: $jsonSchema' });
    expect((await mql('listIndexes', { collection: c })).body.indexes).toHaveLength(1);
  });
});

describe('refusals, with MongoDB\'s messages, changing nothing', () => {
  const refusals: ReadonlyArray<readonly [unknown, string]> = [
    ['foo', '$jsonSchema must be an object'],
    [[], '$jsonSchema must be an object'],
    [{ type: 3 }, "$jsonSchema keyword 'type' must be either a string or an array of strings"],
    [{ type: {} }, "$jsonSchema keyword 'type' must be either a string or an array of strings"],
    [{ type: 'integer' }, "$jsonSchema type 'integer' is not currently supported."],
    [{ properties: { n: { bsonType: ['int', 'integer'] } } }, "$jsonSchema type 'integer' is not currently supported."],
    [{ properties: { n: { type: 'double' } } }, 'Unknown type name alias: double'],
    [{ properties: { n: { bsonType: 'boolean' } } }, 'Unknown type name alias: boolean'],
    [{ properties: { n: { type: ['object', 'unknown'] } } }, 'Unknown type name alias: unknown'],
    [{ properties: { n: { bsonType: ['number', 2] } } }, "$jsonSchema keyword 'bsonType' array elements must be strings"],
    [{ properties: { n: { type: ['number', 'string', 'number'] } } }, "$jsonSchema keyword 'type' has duplicate value: number"],
    [{ properties: { n: { type: [] } } }, "$jsonSchema keyword 'type' must name at least one type"],
    [{ bsonType: 'string', type: 'string' }, "Cannot specify both $jsonSchema keywords 'type' and 'bsonType'"],
    [{ properties: 3 }, "$jsonSchema keyword 'properties' must be an object"],
    [{ properties: [] }, "$jsonSchema keyword 'properties' must be an object"],
    [{ properties: { num: 'number' } }, "Nested schema for $jsonSchema property 'num' must be an object"],
    [{ properties: { num: { maximum: '0' } } }, "$jsonSchema keyword 'maximum' must be a number"],
    [{ properties: { num: { minimum: {} } } }, "$jsonSchema keyword 'minimum' must be a number"],
    [{ properties: { num: { maximum: 1, exclusiveMaximum: 1 } } }, "$jsonSchema keyword 'exclusiveMaximum' must be a boolean"],
    [{ properties: { num: { exclusiveMinimum: true } } }, "$jsonSchema keyword 'minimum' must be a present if exclusiveMinimum is present"],
    [{ properties: { num: { exclusiveMaximum: false } } }, "$jsonSchema keyword 'maximum' must be a present if exclusiveMaximum is present"],
    [{ properties: { num: { maxLength: '0' } } }, 'Expected a number in: maxLength: "0"'],
    [{ properties: { num: { minLength: {} } } }, 'Expected a number in: minLength: {}'],
    [{ properties: { num: { minLength: 1.5 } } }, 'Expected an integer: minLength: 1.5'],
    [{ properties: { num: { maxItems: -1 } } }, 'Expected a non-negative number in: maxItems: -1'],
    [{ minProperties: 'x' }, 'Expected a number in: minProperties: "x"'],
    [{ properties: { num: { pattern: 0 } } }, "$jsonSchema keyword 'pattern' must be a string"],
    [{ properties: { num: { pattern: '(' } } }, 'Regular expression is invalid'],
    [{ properties: { num: { multipleOf: 'x' } } }, "$jsonSchema keyword 'multipleOf' must be a number"],
    [{ properties: { num: { multipleOf: 0 } } }, "$jsonSchema keyword 'multipleOf' must have a positive value"],
    [{ properties: { num: { multipleOf: -2 } } }, "$jsonSchema keyword 'multipleOf' must have a positive value"],
    [{ uniqueItems: 1 }, "$jsonSchema keyword 'uniqueItems' must be a boolean"],
    [{ uniqueItems: 'true' }, "$jsonSchema keyword 'uniqueItems' must be a boolean"],
    [{ items: 1 }, "$jsonSchema keyword 'items' must be an array or an object, not int"],
    [{ items: 'true' }, "$jsonSchema keyword 'items' must be an array or an object, not string"],
    [{ items: [{}, 1] }, "$jsonSchema keyword 'items' requires that each element of the array is an object, but found a int"],
    [{ additionalItems: 1 }, "$jsonSchema keyword 'additionalItems' must be either an object or a boolean, but got a int"],
    [{ required: 'a' }, "$jsonSchema keyword 'required' must be an array, but found an element of type string"],
    [{ required: ['a', 1] }, "$jsonSchema keyword 'required' must be an array of strings, but found an element of type: int"],
    [{ required: [] }, "$jsonSchema keyword 'required' cannot be an empty array"],
    [{ required: ['a', 'a'] }, "$jsonSchema keyword 'required' array cannot contain duplicate values"],
    [{ patternProperties: 1 }, "$jsonSchema keyword 'patternProperties' must be an object"],
    [{ patternProperties: { '^a': 1 } }, "$jsonSchema keyword 'patternProperties' has property '^a' which is not an object"],
    [{ patternProperties: { '(': {} } }, 'Invalid regular expression'],
    [{ additionalProperties: 'no' }, "$jsonSchema keyword 'additionalProperties' must be an object or a boolean"],
    [{ dependencies: 1 }, "$jsonSchema keyword 'dependencies' must be an object"],
    [{ dependencies: { a: 1 } }, "property 'a' in $jsonSchema keyword 'dependencies' must be either an object or an array"],
    [{ dependencies: { a: [] } }, "property 'a' in $jsonSchema keyword 'dependencies' cannot be an empty array"],
    [{ dependencies: { a: ['b', 2] } }, "array 'a' in $jsonSchema keyword 'dependencies' can only contain strings, but found element of type: int"],
    [{ dependencies: { a: ['b', 'b'] } }, "array 'a' in $jsonSchema keyword 'dependencies' contains duplicate element: b"],
    [{ properties: { foo: { allOf: { maximum: '0' } } } }, "$jsonSchema keyword 'allOf' must be an array"],
    [{ properties: { foo: { anyOf: [] } } }, "$jsonSchema keyword 'anyOf' must be a non-empty array"],
    [{ properties: { foo: { oneOf: [0] } } }, "$jsonSchema keyword 'oneOf' must be an array of objects, but found an element of type int"],
    [{ properties: { foo: { allOf: [{ invalid: '0' }] } } }, 'Unknown $jsonSchema keyword: invalid'],
    [{ properties: { foo: { not: [{}] } } }, "$jsonSchema keyword 'not' must be an object, but found an element of type array"],
    [{ properties: { foo: { not: { maximum: '0' } } } }, "$jsonSchema keyword 'maximum' must be a number"],
    [{ enum: 1 }, "$jsonSchema keyword 'enum' must be an array, but found an element of type int"],
    [{ enum: [] }, "$jsonSchema keyword 'enum' cannot be an empty array"],
    [{ enum: [{ a: 1, b: 2 }, { b: 2, a: 1 }] }, "$jsonSchema keyword 'enum' array cannot contain duplicate values."],
    [{ description: 1 }, "$jsonSchema keyword 'description' must be of type string"],
    [{ properties: { a: { title: null } } }, "$jsonSchema keyword 'title' must be of type string"],
    [{ default: { _id: 0 } }, "$jsonSchema keyword 'default' is not currently supported"],
    [{ definitions: { n: { type: 'number' } } }, "$jsonSchema keyword 'definitions' is not currently supported"],
    [{ format: 'email' }, "$jsonSchema keyword 'format' is not currently supported"],
    [{ id: 'someschema.json' }, "$jsonSchema keyword 'id' is not currently supported"],
    [{ properties: { a: { $ref: '#/definitions/positiveInt' } } }, "$jsonSchema keyword '$ref' is not currently supported"],
    [{ $schema: 'http://json-schema.org/draft-04/schema#' }, "$jsonSchema keyword '$schema' is not currently supported"],
    [{ properties: { a: { encrypt: {} } } }, "$jsonSchema keyword 'encrypt' is not supported"],
    [{ bogus: 1 }, 'Unknown $jsonSchema keyword: bogus'],
  ];

  it(`every refusal is a 400 QUERY_ERROR with MongoDB's message (${refusals.length} schemas)`, async () => {
    const c = await seed([{ _id: 1, num: 1 }]);
    for (const [schema, message] of refusals) {
      const res = await mql('find', { collection: c, filter: { $jsonSchema: schema } });
      expect(res.status, JSON.stringify(schema)).toBe(400);
      expect(res.body.error.code).toBe('QUERY_ERROR');
      expect(res.body.error.message.startsWith(message), `${JSON.stringify(schema)}: ${res.body.error.message}`).toBe(true);
    }
  });

  it('the operations that take a filter refuse a bad schema and change nothing', async () => {
    const doc = { _id: 1, num: 1 };
    const c = await seed([doc]);
    const bad = { $jsonSchema: { type: 'integer' } };
    const calls: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ['countDocuments', { filter: bad }],
      ['distinct', { key: 'num', filter: bad }],
      ['updateOne', { filter: bad, update: { $set: { x: 1 } } }],
      ['updateMany', { filter: { $or: [bad, { num: 1 }] }, update: { $set: { x: 1 } } }],
      ['replaceOne', { filter: bad, replacement: { x: 1 } }],
      ['deleteOne', { filter: bad }],
      ['deleteMany', { filter: { $nor: [bad] } }],
      ['findOneAndUpdate', { filter: bad, update: { $set: { x: 1 } } }],
      ['findOneAndDelete', { filter: bad }],
      ['aggregate', { pipeline: [{ $match: bad }] }],
    ];
    for (const [op, body] of calls) {
      const res = await mql(op, { collection: c, ...body });
      expect(res.status, op).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'QUERY_ERROR', message: "$jsonSchema type 'integer' is not currently supported." });
    }
    expect(await all(c)).toEqual([doc]);
  });

  it('top-level keywords with no effect are still checked, except what MongoDB never builds', async () => {
    const c = await seed([{ _id: 1 }]);
    expect((await mql('find', { collection: c, filter: { $jsonSchema: { maxLength: -1 } } })).status).toBe(400);
    expect((await mql('find', { collection: c, filter: { $jsonSchema: { items: [1] } } })).status).toBe(400);
    // MongoDB compiles a pattern only where it can meet a string: never at the top level.
    expect(await ids(c, { $jsonSchema: { pattern: '(' } })).toEqual([1]);
    expect(await ids(c, { $jsonSchema: { not: { pattern: '(' } } })).toEqual([]);
  });
});

// ---- Random schemas ----------------------------------------------------------------------------

/** A small deterministic generator (mulberry32), so a failure names a reproducible seed. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIELDS = ['a', 'b', 'c'];
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

function randomValue(r: () => number, depth = 0): unknown {
  const kind = Math.floor(r() * (depth > 1 ? 6 : 8));
  switch (kind) {
    case 0:
      return Math.floor(r() * 7) - 3;
    case 1:
      return pick(r, [0.5, -1.5, 2.25, 3.0000001]);
    case 2:
      return pick(r, ['', 'x', 'ab', 'abc', 'b😀']);
    case 3:
      return r() < 0.5;
    case 4:
      return null;
    case 5:
      return 2 ** 40 + Math.floor(r() * 3);
    case 6:
      return Array.from({ length: Math.floor(r() * 4) }, () => randomValue(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (const f of FIELDS) if (r() < 0.5) o[f] = randomValue(r, depth + 1);
      return o;
    }
  }
}

function randomDocs(r: () => number, n: number): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => {
    const doc: Record<string, unknown> = { _id: i };
    for (const f of FIELDS) if (r() < 0.75) doc[f] = randomValue(r);
    return doc;
  });
}

const BSON_TYPES = ['int', 'long', 'double', 'string', 'bool', 'null', 'array', 'object', 'number'];

// A schema on one field and a plain filter that matches exactly the same documents.
function randomEquivalence(r: () => number): [schema: unknown, filter: unknown] {
  const f = pick(r, FIELDS);
  const absent = { [f]: { $exists: false } };
  switch (Math.floor(r() * 6)) {
    case 0:
      return [{ required: [f] }, { [f]: { $exists: true } }];
    case 1: {
      // $type reads array elements too; `$not: {$type: "array"}` keeps only a field's own type.
      const t = pick(r, BSON_TYPES.filter((x) => x !== 'array'));
      return [{ properties: { [f]: { bsonType: t } } }, { $or: [absent, { $and: [{ [f]: { $type: t } }, { [f]: { $not: { $type: 'array' } } }] }] }];
    }
    case 2: {
      const n = Math.floor(r() * 5) - 2;
      // A number below n fails; anything that is not a number (an array of small numbers too) passes.
      return [{ properties: { [f]: { minimum: n } } }, { $nor: [{ [f]: { $lt: n, $not: { $type: 'array' } } }] }];
    }
    case 3: {
      const k = 1 + Math.floor(r() * 3);
      return [{ properties: { [f]: { minItems: k } } }, { $nor: [{ $expr: { $cond: [{ $isArray: `$${f}` }, { $lt: [{ $size: `$${f}` }, k] }, false] } }] }];
    }
    case 4: {
      const v = randomValue(r, 2);
      // The whole value equals v: $expr's $eq does not look into arrays as a query's equality does.
      return [{ required: [f], properties: { [f]: { enum: [v] } } }, { [f]: { $exists: true }, $expr: { $eq: [`$${f}`, { $literal: v }] } }];
    }
    default:
      // At most two code points: the regex reads code points ('u' mode), $expr checks the whole value is a string.
      return [{ properties: { [f]: { type: 'string', maxLength: 2 } } }, { $or: [absent, { [f]: { $not: { $regex: '^[\\s\\S]{3}' } }, $expr: { $eq: [{ $type: `$${f}` }, 'string'] } }] }];
  }
}

describe('random schemas', () => {
  it('200 schemas against equivalent plain filters', async () => {
    const r = rng(20261126);
    const docs = randomDocs(r, 60);
    const c = await seed(docs);
    let partial = 0; // schemas that keep some documents and drop others: the comparison says something
    for (let i = 0; i < 200; i++) {
      const [schema, filter] = randomEquivalence(r);
      const got = await ids(c, { $jsonSchema: schema });
      expect({ i, schema, ids: got }).toEqual({ i, schema, ids: await ids(c, filter) });
      if (got.length > 0 && got.length < docs.length) partial++;
    }
    expect(partial).toBeGreaterThan(100);
  });

  // Keywords where draft 4 (MongoDB) and ajv's draft 7 agree for JSON values: everything but
  // bsonType, the boolean exclusive bounds (numbers in draft 7), "integer", and patterns beyond
  // what PCRE and JavaScript read alike.
  function randomSchema(r: () => number, depth: number): Record<string, unknown> {
    const s: Record<string, unknown> = {};
    const n = 1 + Math.floor(r() * 2);
    for (let i = 0; i < n; i++) {
      switch (Math.floor(r() * (depth > 1 ? 12 : 17))) {
        case 0:
          s.type = r() < 0.5 ? pick(r, ['number', 'string', 'object', 'array', 'boolean', 'null']) : ['number', pick(r, ['string', 'null', 'array'])];
          break;
        case 1:
          s.minimum = Math.floor(r() * 5) - 2;
          break;
        case 2:
          s.maximum = Math.floor(r() * 5) - 1;
          break;
        case 3:
          s.multipleOf = pick(r, [2, 3, 0.5]);
          break;
        case 4:
          s.minLength = Math.floor(r() * 3);
          break;
        case 5:
          s.maxLength = Math.floor(r() * 3);
          break;
        case 6:
          s.pattern = pick(r, ['a', '^b', 'c$', 'x|y']);
          break;
        case 7:
          s.minItems = Math.floor(r() * 3);
          break;
        case 8:
          s.maxItems = Math.floor(r() * 3);
          break;
        case 9:
          s.uniqueItems = r() < 0.7;
          break;
        case 10:
          s.enum = [randomValue(r, 2), randomValue(r, 2)].filter((v, k, xs) => xs.findIndex((w) => JSON.stringify(w) === JSON.stringify(v)) === k);
          break;
        case 11:
          s.required = [pick(r, FIELDS)];
          break;
        case 12:
          s.properties = Object.fromEntries(FIELDS.filter(() => r() < 0.5).map((f) => [f, randomSchema(r, depth + 1)]));
          break;
        case 13:
          s.items = r() < 0.5 ? randomSchema(r, depth + 1) : [randomSchema(r, depth + 1)];
          if (Array.isArray(s.items) && r() < 0.5) s.additionalItems = r() < 0.5 ? false : randomSchema(r, depth + 1);
          break;
        case 14:
          s[pick(r, ['allOf', 'anyOf', 'oneOf'])] = [randomSchema(r, depth + 1), randomSchema(r, depth + 1)];
          break;
        case 15:
          s.not = randomSchema(r, depth + 1);
          break;
        default:
          if (r() < 0.5) s.patternProperties = { '^[ab]': randomSchema(r, depth + 1) };
          s.additionalProperties = r() < 0.5 ? r() < 0.5 : randomSchema(r, depth + 1);
          if (r() < 0.5) s.dependencies = { a: r() < 0.5 ? ['b'] : randomSchema(r, depth + 1) };
          if (r() < 0.5) s[r() < 0.5 ? 'minProperties' : 'maxProperties'] = Math.floor(r() * 4);
      }
    }
    return s;
  }

  it('300 schemas against mingo with ajv as its JSON Schema validator', async () => {
    const r = rng(7);
    const docs = randomDocs(r, 60);
    const c = await seed(docs);
    const ajv = new Ajv({ strict: false, allErrors: false });
    const jsonSchemaValidator = (schema: object) => {
      const validate = ajv.compile(schema);
      return (doc: object) => validate(doc) as boolean;
    };
    let partial = 0;
    for (let i = 0; i < 300; i++) {
      const schema = randomSchema(r, 0);
      const want = new Query({ $jsonSchema: schema }, { jsonSchemaValidator } as never)
        .find(structuredClone(docs))
        .all()
        .map((d) => (d as { _id: number })._id);
      expect({ i, schema, ids: await ids(c, { $jsonSchema: schema }) }).toEqual({ i, schema, ids: want });
      if (want.length > 0 && want.length < docs.length) partial++;
    }
    // Many random schemas keep every document (restrictions skip other types); enough do not.
    expect(partial).toBeGreaterThan(40);
  });
});
