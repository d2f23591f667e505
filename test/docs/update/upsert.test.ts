import { describe, expect, it } from 'vitest';
import { buildUpsertDocument, compileFilter, compileUpdate } from '../../../engine/docs/index.js';
import { NOW } from './applying.js';

function upserted(filter: unknown, update: unknown): unknown {
  return buildUpsertDocument(compileFilter(filter), compileUpdate(update), { now: NOW });
}

describe('the document an upsert inserts', () => {
  const cases: Array<[string, unknown, unknown, unknown]> = [
    ['equality fields of the filter, then the update', { name: 'Andy', rating: { $gt: 1 } }, { $set: { score: 1 } }, { name: 'Andy', score: 1 }],
    ['_id comes first', { item: 'x', _id: 5 }, { $inc: { qty: 1 } }, { _id: 5, item: 'x', qty: 1 }],
    ['dot paths build embedded documents', { 'a.b': 1, 'a.c': { $eq: 2 } }, { $set: { d: 1 } }, { a: { b: 1, c: 2 }, d: 1 }],
    ['$and members count', { $and: [{ a: 1 }, { b: { $in: [2] } }] }, { $set: { c: 3 } }, { a: 1, b: 2, c: 3 }],
    ['a single-member $or counts, a larger one does not', { $or: [{ a: 1 }], x: { $in: [1, 2] } }, { $set: { c: 3 } }, { a: 1, c: 3 }],
    ['$setOnInsert applies', { a: 1 }, { $setOnInsert: { created: true }, $set: { b: 2 } }, { a: 1, b: 2, created: true }],
    ['$setOnInsert may give the _id', { a: 1 }, { $setOnInsert: { _id: 'k1' } }, { _id: 'k1', a: 1 }],
    ['the update overrides a filter value', { a: 1 }, { $set: { a: 2 } }, { a: 2 }],
    ['null equality is kept', { a: null }, { $set: { b: 1 } }, { a: null, b: 1 }],
    ['$currentDate uses the given time', {}, { $currentDate: { at: true } }, { at: NOW }],
  ];
  for (const [name, filter, update, expected] of cases) it(name, () => expect(upserted(filter, update)).toStrictEqual(expected));

  const errors: Array<[string, unknown, unknown, RegExp]> = [
    ['a path matched twice', { a: 1, $and: [{ a: 1 }] }, { $set: { b: 1 } }, /path 'a' is matched twice/],
    ['a path inside another', { a: { b: 1 }, 'a.b': 1 }, { $set: { c: 1 } }, /both paths 'a' and 'a.b' are matched/],
    ['an update that changes the filtered _id', { _id: 1 }, { $set: { _id: 2 } }, /immutable field '_id'/],
    ['an update through a filter scalar', { a: 1 }, { $set: { 'a.b': 1 } }, /Cannot create field 'b' in element \{a: 1\}/],
  ];
  for (const [name, filter, update, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => upserted(filter, update)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});
