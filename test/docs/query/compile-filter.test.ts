import { describe, expect, it } from 'vitest';
import { compileFilter, parseFilter, topLevelConditions } from '../../../engine/docs/index.js';
import { ids, json, type MatchCase } from './matching.js';

describe('the filter AST', () => {
  it('is an and node of field nodes with their conditions', () => {
    expect(compileFilter({ 'a.b': { $gte: 1, $lt: 5 }, c: 'x' }).ast).toEqual({
      kind: 'and',
      children: [
        { kind: 'field', path: 'a.b', ops: [{ op: '$gte', value: 1 }, { op: '$lt', value: 5 }] },
        { kind: 'field', path: 'c', ops: [{ op: '$eq', value: 'x' }] },
      ],
    });
  });

  it('flattens $and and merges conditions on one path', () => {
    const ast = parseFilter({ a: { $gt: 1 }, $and: [{ a: { $lt: 9 } }, { $and: [{ b: 2 }, { a: { $ne: 5 } }] }] });
    expect(ast).toEqual({
      kind: 'and',
      children: [
        { kind: 'field', path: 'a', ops: [{ op: '$gt', value: 1 }, { op: '$lt', value: 9 }, { op: '$ne', value: 5 }] },
        { kind: 'field', path: 'b', ops: [{ op: '$eq', value: 2 }] },
      ],
    });
  });

  it('keeps $or and $nor as nodes, a single-condition branch as that condition', () => {
    expect(parseFilter({ $or: [{ a: 1 }, { b: 2, c: 3 }], $nor: [{ d: 4 }] })).toEqual({
      kind: 'and',
      children: [
        {
          kind: 'or',
          children: [
            { kind: 'field', path: 'a', ops: [{ op: '$eq', value: 1 }] },
            { kind: 'and', children: [{ kind: 'field', path: 'b', ops: [{ op: '$eq', value: 2 }] }, { kind: 'field', path: 'c', ops: [{ op: '$eq', value: 3 }] }] },
          ],
        },
        { kind: 'nor', children: [{ kind: 'field', path: 'd', ops: [{ op: '$eq', value: 4 }] }] },
      ],
    });
  });

  it('puts $not, $regex, $type, $mod in field nodes in normalised form', () => {
    expect(parseFilter({ a: { $not: { $regex: '^x', $options: 'i' } }, b: { $type: [2, 'number'] }, c: { $mod: [4.7, -0.5] } }).children).toEqual([
      { kind: 'field', path: 'a', ops: [{ op: '$not', value: [{ op: '$regex', value: '^x', options: 'i' }] }] },
      { kind: 'field', path: 'b', ops: [{ op: '$type', value: ['string', 'number'] }] },
      { kind: 'field', path: 'c', ops: [{ op: '$mod', value: [4, 0] }] },
    ]);
  });

  it('converts Extended JSON dates in operands', () => {
    const ast = parseFilter({ at: { $gte: { $date: '2024-05-01T00:00:00Z' } } });
    const op = ast.children[0];
    expect(op?.kind === 'field' && op.ops[0]?.value).toEqual(new Date('2024-05-01T00:00:00Z'));
  });

  it('gives planners the conditions per top-level path', () => {
    const conditions = topLevelConditions(parseFilter({ a: { $gt: 1 }, $and: [{ a: { $lt: 5 } }], $or: [{ b: 1 }, { c: 1 }] }));
    expect([...conditions]).toEqual([['a', [{ op: '$gt', value: 1 }, { op: '$lt', value: 5 }]]]);
  });

  it('treats a document whose first key is not an operator as a literal', () => {
    expect(parseFilter({ a: { b: 1, $gt: 2 } }).children).toEqual([{ kind: 'field', path: 'a', ops: [{ op: '$eq', value: { b: 1, $gt: 2 } }] }]);
  });
});

describe('dot paths (MongoDB traversal rules)', () => {
  const docs = [
    { _id: 1, a: [{ b: 1 }, { b: 2 }] },
    { _id: 2, a: [{ b: [1, 3] }] },
    { _id: 3, a: [[{ b: 1 }]] },
    { _id: 4, a: { b: 1 } },
    { _id: 5, a: [5, { '0': 7 }] },
    { _id: 6, a: [[1, 2]] },
    { _id: 7, a: [{}] },
    { _id: 8, a: 4 },
    { _id: 9, a: [] },
  ];
  const cases: MatchCase[] = [
    { name: 'a field of the documents in an array', filter: { 'a.b': 1 }, expected: [1, 2, 4] },
    { name: 'arrays nested in arrays are not entered implicitly', filter: { 'a.b': { $exists: true } }, expected: [1, 2, 4] },
    { name: 'an index picks an element', filter: { 'a.0': 5 }, expected: [5] },
    { name: 'an index also reads a field of that name in document elements', filter: { 'a.0': 7 }, expected: [5] },
    { name: 'an element picked by an index is not expanded', filter: { 'a.0': 1 }, expected: [] },
    { name: 'but compares whole', filter: { 'a.0': [1, 2] }, expected: [6] },
    { name: 'an index then a field', filter: { 'a.1.b': 2 }, expected: [1] },
    { name: 'an index into a nested array then a field', filter: { 'a.0.b': 1 }, expected: [1, 2, 3] },
    { name: 'null: missing in a document of the array counts', filter: { 'a.b': null }, expected: [5, 7, 8] },
    { name: 'null: non-document elements and empty arrays yield nothing', filter: { 'a.b': { $ne: null } }, expected: [1, 2, 3, 4, 6, 9] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(docs, c.filter)).toEqual(c.expected));
});

describe('prototype safety', () => {
  it('a filter on constructor or __proto__ never sees Object.prototype', () => {
    const docs = [{ _id: 1 }, json('{"_id": 2, "constructor": 1}'), json('{"_id": 3, "__proto__": {"x": 1}}')];
    expect(ids(docs, { constructor: { $exists: true } })).toEqual([2]);
    expect(ids(docs, json('{"__proto__": {"$exists": true}}'))).toEqual([3]);
    expect(ids(docs, json('{"__proto__.x": 1}'))).toEqual([3]);
    expect(ids(docs, { 'constructor.name': 'Object' })).toEqual([]);
    expect(ids(docs, { toString: null })).toEqual([1, 2, 3]);
    expect(ids(docs, { hasOwnProperty: { $exists: true } })).toEqual([]);
  });

  it('an operator named like an Object.prototype member is unknown', () => {
    expect(() => compileFilter({ a: { $constructor: 1 } })).toThrow(expect.objectContaining({ code: 'QUERY_ERROR' }));
    expect(() => compileFilter(json('{"a": {"$__proto__": 1}}'))).toThrow(expect.objectContaining({ code: 'QUERY_ERROR' }));
  });

  it('compiling and matching leave Object.prototype alone', () => {
    const filter = json('{"__proto__": {"polluted": 1}, "a": {"$in": [{"__proto__": {"polluted": 2}}]}}');
    const { test } = compileFilter(filter);
    test(json('{"a": {"__proto__": {"polluted": 2}}}'));
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(test(json('{"__proto__": {"polluted": 1}, "a": [{"__proto__": {"polluted": 2}}]}'))).toBe(true);
  });
});

describe('$$NOW in $expr', () => {
  it('is one instant per compiled filter (one request), as in MongoDB', async () => {
    // A date just after the compile: later in the same request, $$NOW must still be before it.
    const filter = compileFilter({ $expr: { $gt: ['$$NOW', '$t'] } });
    const doc = { t: new Date(Date.now() + 40) };
    expect(filter.test(doc)).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(filter.test(doc)).toBe(false);
    // A filter compiled now reads the later instant.
    expect(compileFilter({ $expr: { $gt: ['$$NOW', '$t'] } }).test(doc)).toBe(true);
  });

  it('has no fields: $$NOW.x is missing', () => {
    expect(compileFilter({ $expr: { $eq: [{ $type: '$$NOW.x' }, 'missing'] } }).test({})).toBe(true);
    expect(compileFilter({ $expr: { $eq: [{ $type: '$$NOW' }, 'date'] } }).test({})).toBe(true);
  });
});
