import { describe, expect, it } from 'vitest';
import { compileUpdate, type Doc } from '../../../engine/docs/index.js';
import { json } from '../query/matching.js';
import { modifies, NOW, updated, type UpdateCase } from './applying.js';

// The manual's $set example document (products).
const product = {
  _id: 100,
  quantity: 250,
  instock: true,
  reorder: false,
  details: { model: '14QQ', make: 'Clothes Corp' },
  tags: ['apparel', 'clothing'],
  ratings: [{ by: 'Customer007', rating: 4 }],
};

function run(cases: readonly UpdateCase[]): void {
  for (const c of cases) it(c.name, () => expect(updated(c.doc, c.update)).toStrictEqual(c.expected));
}

describe('$set (manual examples)', () => {
  run([
    {
      name: 'top-level fields',
      doc: product,
      update: { $set: { quantity: 500, details: { model: '2600', make: 'Fashionaires' }, tags: ['coats', 'outerwear', 'clothing'] } },
      expected: { ...product, quantity: 500, details: { model: '2600', make: 'Fashionaires' }, tags: ['coats', 'outerwear', 'clothing'] },
    },
    { name: 'a field in an embedded document', doc: product, update: { $set: { 'details.make': 'Kustom Kidz' } }, expected: { ...product, details: { model: '14QQ', make: 'Kustom Kidz' } } },
    {
      name: 'array elements by index',
      doc: product,
      update: { $set: { 'tags.1': 'rain gear', 'ratings.0.rating': 2 } },
      expected: { ...product, tags: ['apparel', 'rain gear'], ratings: [{ by: 'Customer007', rating: 2 }] },
    },
    { name: 'creates missing embedded documents', doc: { _id: 1 }, update: { $set: { 'a.b.c': 1 } }, expected: { _id: 1, a: { b: { c: 1 } } } },
    { name: 'pads an array with nulls up to the index', doc: { _id: 1, a: [1] }, update: { $set: { 'a.3': 4 } }, expected: { _id: 1, a: [1, null, null, 4] } },
    { name: 'creates a document past the end of an array', doc: { _id: 1, a: [] }, update: { $set: { 'a.1.b': 2 } }, expected: { _id: 1, a: [null, { b: 2 }] } },
    { name: 'a numeric field of a document is a field name', doc: { _id: 1, a: {} }, update: { $set: { 'a.0': 1 } }, expected: { _id: 1, a: { '0': 1 } } },
    { name: 'new fields are created in path order (MongoDB 5+)', doc: { _id: 1 }, update: { $set: { c: 1, b: 1, 'a.10': 1, 'a.9': 1 } }, expected: { _id: 1, a: { '9': 1, '10': 1 }, b: 1, c: 1 } },
    { name: 'Extended JSON dates', doc: { _id: 1 }, update: { $set: { at: { $date: '2024-01-02T03:04:05Z' } } }, expected: { _id: 1, at: new Date('2024-01-02T03:04:05Z') } },
  ]);

  it('lists new fields in path order', () => expect(Object.keys(updated({ _id: 1 }, { $set: { z: 1, m: 1, a: 1 } }))).toEqual(['_id', 'a', 'm', 'z']));
  it('setting an equal value is not a modification', () => expect(modifies(product, { $set: { quantity: 250, 'details.model': '14QQ' } })).toBe(false));
  it('setting a different value is', () => expect(modifies(product, { $set: { quantity: 251 } })).toBe(true));
  it('never changes its input', () => {
    const doc = structuredClone(product);
    updated(doc, { $set: { 'details.make': 'x', 'tags.5': 'y' }, $unset: { quantity: '' } });
    expect(doc).toStrictEqual(product);
  });
  it('copies the operand, so two documents never share a value', () => {
    const update = compileUpdate({ $set: { list: [1] } });
    const first = update.apply({ _id: 1 }).doc;
    const second = update.apply({ _id: 2 }).doc;
    (first['list'] as number[]).push(2);
    expect(second['list']).toEqual([1]);
  });

  const errors: Array<[string, Doc, unknown, RegExp]> = [
    ['through a number', { a: 1 }, { $set: { 'a.b': 1 } }, /Cannot create field 'b' in element \{a: 1\}/],
    ['through null', { a: null }, { $set: { 'a.b': 1 } }, /Cannot create field 'b' in element \{a: null\}/],
    ['a named field of an array', { a: [1, 2] }, { $set: { 'a.b': 1 } }, /Cannot create field 'b' in element \{a: \[1,2\]\}/],
    ['a huge index', { a: [] }, { $set: { 'a.2000000': 1 } }, /can't backfill/],
  ];
  for (const [name, doc, update, message] of errors) {
    it(`refuses to set ${name}`, () => {
      expect(() => updated(doc, update)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});

describe('$unset (manual examples)', () => {
  run([
    { name: 'removes fields', doc: product, update: { $unset: { quantity: '', instock: '' } }, expected: { _id: 100, reorder: false, details: product.details, tags: product.tags, ratings: product.ratings } },
    { name: 'an array element becomes null', doc: { _id: 1, a: [1, 2, 3] }, update: { $unset: { 'a.1': 1 } }, expected: { _id: 1, a: [1, null, 3] } },
    { name: 'an embedded field', doc: { _id: 1, a: { b: 1, c: 2 } }, update: { $unset: { 'a.b': true } }, expected: { _id: 1, a: { c: 2 } } },
  ]);
  it('a missing field is a no-op', () => expect(modifies({ _id: 1 }, { $unset: { a: '', 'b.c': '', 'd.0': '' } })).toBe(false));
  it('a path through a scalar is a no-op', () => expect(modifies({ _id: 1, a: 5 }, { $unset: { 'a.b': '' } })).toBe(false));
});

describe('$inc and $mul (manual examples)', () => {
  const doc = { _id: 1, sku: 'abc123', quantity: 10, metrics: { orders: 2, ratings: 3.5 } };
  run([
    { name: '$inc several fields', doc, update: { $inc: { quantity: -2, 'metrics.orders': 1 } }, expected: { ...doc, quantity: 8, metrics: { orders: 3, ratings: 3.5 } } },
    { name: '$inc creates a missing field', doc, update: { $inc: { 'metrics.views': 5 } }, expected: { ...doc, metrics: { orders: 2, ratings: 3.5, views: 5 } } },
    { name: '$mul', doc: { _id: 1, price: 10.99, qty: 25 }, update: { $mul: { price: 1.25, qty: 2 } }, expected: { _id: 1, price: 13.7375, qty: 50 } },
    { name: '$mul creates a missing field with 0', doc: { _id: 2, item: 'Unknown' }, update: { $mul: { price: 100 } }, expected: { _id: 2, item: 'Unknown', price: 0 } },
  ]);
  it('$inc by 0 is not a modification', () => expect(modifies(doc, { $inc: { quantity: 0 } })).toBe(false));

  const errors: Array<[string, Doc, unknown, RegExp]> = [
    ['$inc of a string', { a: 'x' }, { $inc: { a: 1 } }, /Cannot apply \$inc to a value of non-numeric type/],
    ['$mul of null', { a: null }, { $mul: { a: 2 } }, /Cannot apply \$mul to a value of non-numeric type/],
    ['$inc by a string', {}, { $inc: { a: '1' } }, /Cannot increment with non-numeric argument/],
    ['$mul by null', {}, { $mul: { a: null } }, /Cannot multiply with non-numeric argument/],
    ['an overflow', { a: 1e308 }, { $mul: { a: 10 } }, /not a finite number/],
  ];
  for (const [name, doc, update, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => updated(doc, update)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});

describe('$min and $max (manual examples)', () => {
  const scores = { _id: 1, highScore: 800, lowScore: 200 };
  run([
    { name: '$min lowers', doc: scores, update: { $min: { lowScore: 150 } }, expected: { ...scores, lowScore: 150 } },
    { name: '$min keeps a lower value', doc: scores, update: { $min: { lowScore: 250 } }, expected: scores },
    { name: '$max raises', doc: scores, update: { $max: { highScore: 950 } }, expected: { ...scores, highScore: 950 } },
    { name: '$max keeps a higher value', doc: scores, update: { $max: { highScore: 700 } }, expected: scores },
    {
      name: 'dates',
      doc: { _id: 1, dateEntered: new Date('2023-10-01T05:00:00Z') },
      update: { $min: { dateEntered: { $date: '2023-09-25T00:00:00Z' } } },
      expected: { _id: 1, dateEntered: new Date('2023-09-25T00:00:00Z') },
    },
    { name: 'a missing field is set', doc: { _id: 1 }, update: { $max: { a: 5 } }, expected: { _id: 1, a: 5 } },
    { name: 'across types in BSON order: null < numbers', doc: { _id: 1, a: 5 }, update: { $min: { a: null } }, expected: { _id: 1, a: null } },
    { name: 'across types in BSON order: strings > numbers', doc: { _id: 1, a: 5 }, update: { $max: { a: 'x' } }, expected: { _id: 1, a: 'x' } },
  ]);
});

describe('$rename (manual examples)', () => {
  const student = { _id: 1, alias: ['The American Cincinnatus'], mobile: '555-555-5555', nmae: { first: 'george', last: 'washington' } };
  run([
    { name: 'a field', doc: student, update: { $rename: { nmae: 'name' } }, expected: { _id: 1, alias: student.alias, mobile: student.mobile, name: student.nmae } },
    { name: 'a field in an embedded document', doc: { _id: 1, name: { first: 'a', last: 'b' } }, update: { $rename: { 'name.first': 'name.fname' } }, expected: { _id: 1, name: { last: 'b', fname: 'a' } } },
    { name: 'into a new embedded document', doc: { _id: 1, a: 1 }, update: { $rename: { a: 'b.c' } }, expected: { _id: 1, b: { c: 1 } } },
    { name: 'over an existing field', doc: { _id: 1, a: 1, b: 2 }, update: { $rename: { a: 'b' } }, expected: { _id: 1, b: 1 } },
    { name: 'a missing field is a no-op', doc: { _id: 1, a: 1 }, update: { $rename: { wife: 'spouse' } }, expected: { _id: 1, a: 1 } },
  ]);

  const errors: Array<[string, Doc, unknown, RegExp]> = [
    ['a source inside an array', { a: [{ b: 1 }] }, { $rename: { 'a.b': 'c' } }, /source field cannot be an array element/],
    ['a destination inside an array', { a: 1, c: [] }, { $rename: { a: 'c.d' } }, /destination field cannot be an array element/],
    ['a non-string destination', {}, { $rename: { a: 1 } }, /The 'to' field for \$rename must be a string/],
    ['the same path', {}, { $rename: { a: 'a' } }, /must differ/],
    ['a destination inside the source', {}, { $rename: { a: 'a.b' } }, /must not be on the same path/],
    ['a positional destination', {}, { $rename: { a: 'b.$' } }, /The destination field for \$rename may not be dynamic: b.\$/],
    ['a positional source', {}, { $rename: { 'a.$[]': 'b' } }, /The source field for \$rename may not be dynamic: a.\$\[\]/],
  ];
  for (const [name, doc, update, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => updated(doc, update)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});

describe('$currentDate and $setOnInsert', () => {
  run([
    { name: '$currentDate: true', doc: { _id: 1 }, update: { $currentDate: { lastModified: true } }, expected: { _id: 1, lastModified: NOW } },
    { name: "$currentDate with {$type: 'date'}", doc: { _id: 1 }, update: { $currentDate: { 'audit.at': { $type: 'date' } } }, expected: { _id: 1, audit: { at: NOW } } },
    { name: '$setOnInsert does nothing on an update', doc: { _id: 1 }, update: { $setOnInsert: { defaultQty: 100 } }, expected: { _id: 1 } },
  ]);
  it('$setOnInsert applies on an insert', () => expect(updated({ _id: 1 }, { $setOnInsert: { defaultQty: 100 } }, true)).toStrictEqual({ _id: 1, defaultQty: 100 }));
  it("refuses {$type: 'timestamp'}", () => {
    expect(() => compileUpdate({ $currentDate: { t: { $type: 'timestamp' } } })).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(/unsupported/) }));
  });
  it('refuses another operand', () => {
    expect(() => compileUpdate({ $currentDate: { t: 'now' } })).toThrow(expect.objectContaining({ code: 'QUERY_ERROR' }));
  });
});

describe('prototype safety', () => {
  it('stores a "__proto__" field as data and never touches Object.prototype', () => {
    const out = updated({ _id: 1 }, json('{"$set": {"__proto__": {"polluted": true}, "a.__proto__.b": 1}}'));
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['_id', '__proto__', 'a']);
    expect(JSON.stringify(out)).toBe('{"_id":1,"__proto__":{"polluted":true},"a":{"__proto__":{"b":1}}}');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(({} as Record<string, unknown>)['b']).toBeUndefined();
  });

  it('$inc and $unset on "constructor" read own fields only', () => {
    expect(updated({ _id: 1 }, { $inc: { constructor: 1 } })).toStrictEqual(json('{"_id": 1, "constructor": 1}'));
    expect(modifies({ _id: 1 }, { $unset: { constructor: '', __proto__: '' } })).toBe(false);
  });

  it('$rename moves a "__proto__" field', () => {
    expect(JSON.stringify(updated(json('{"_id": 1, "__proto__": 5}'), { $rename: { ['__proto__']: 'x' } }))).toBe('{"_id":1,"x":5}');
  });
});
