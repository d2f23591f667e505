// The bitwise operators over HTTP on a real server: the $bit update operator and the query
// operators $bitsAllSet, $bitsAnySet, $bitsAllClear, $bitsAnyClear, with the MongoDB manual's
// examples and MongoDB's (bit_node.cpp, expression_parser.cpp) messages for bad input.
import { beforeAll, describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';

const file = serverForFile();
const mql = file.mql.bind(file);

const seed = (documents: unknown[]): Promise<string> => file.seed(documents, 'b');
const all = (collection: string): Promise<any[]> => file.all(collection);

describe('$bit', () => {
  // name, stored document, $bit operand, the document after, modified
  const cases: ReadonlyArray<readonly [string, unknown, unknown, unknown, boolean?]> = [
    ['and (the manual: 13 and 10 is 8)', { _id: 1, expdata: 13 }, { expdata: { and: 10 } }, { _id: 1, expdata: 8 }],
    ['or (the manual: 3 or 5 is 7)', { _id: 2, expdata: 3 }, { expdata: { or: 5 } }, { _id: 2, expdata: 7 }],
    ['xor (the manual: 1 xor 5 is 4)', { _id: 3, expdata: 1 }, { expdata: { xor: 5 } }, { _id: 3, expdata: 4 }],
    ['several operations on one field, in the order written', { _id: 1, a: 13 }, { a: { or: 2, xor: 1 } }, { _id: 1, a: 14 }],
    ['a result equal to the value is no modification', { _id: 1, a: 13 }, { a: { and: 12, or: 1 } }, { _id: 1, a: 13 }, false],
    ['a missing field starts from 0, so it is created', { _id: 1 }, { a: { or: 5 }, b: { and: 5 }, 'c.d': { xor: 3 } }, { _id: 1, a: 5, b: 0, c: { d: 3 } }],
    ['negative numbers are 64-bit two\'s complement', { _id: 1, a: 7, b: 5, c: 3 }, { a: { and: -2 }, b: { xor: -1 }, c: { or: -8 } }, { _id: 1, a: 6, b: -6, c: -5 }],
    ['integers up to 2^53 - 1 in magnitude are exact', { _id: 1, a: 2 ** 53 - 1, b: 2 ** 53 - 1 }, { a: { and: 2 ** 32 + 1 }, b: { xor: -(2 ** 53 - 1) } }, { _id: 1, a: 2 ** 32 + 1, b: -2 }],
    ['an array element by index', { _id: 1, a: [1, 2, 3] }, { 'a.1': { xor: 1 } }, { _id: 1, a: [1, 3, 3] }],
    ['every array element with $[]', { _id: 1, flags: [1, 2, 3] }, { 'flags.$[]': { or: 4 } }, { _id: 1, flags: [5, 6, 7] }],
  ];
  for (const [name, doc, operand, expected, modified = true] of cases) {
    it(name, async () => {
      const c = await seed([doc]);
      const res = await mql('updateOne', { collection: c, filter: { _id: (doc as { _id: unknown })._id }, update: { $bit: operand } });
      expect(res.body).toEqual({ matchedCount: 1, modifiedCount: modified ? 1 : 0 });
      expect(await all(c)).toEqual([expected]);
    });
  }

  it('upserts: the field starts from 0 on the new document', async () => {
    const c = await seed([{ _id: 'other' }]);
    expect((await mql('updateOne', { collection: c, filter: { _id: 9 }, update: { $bit: { x: { or: 5 } } }, upsert: true })).body).toEqual({ matchedCount: 0, modifiedCount: 0, upsertedId: 9 });
    expect((await mql('findOne', { collection: c, filter: { _id: 9 } })).body.document).toEqual({ _id: 9, x: 5 });
  });

  const refusals: ReadonlyArray<readonly [string, unknown, unknown, RegExp]> = [
    ['a field that is a string', { _id: 1, a: 'x' }, { a: { and: 1 } }, /^Cannot apply \$bit to a value of non-integral type\._id: 1 has the field a of non-integer type string$/],
    ['a field that is a double', { _id: 1, a: 1.5 }, { a: { or: 1 } }, /non-integral type\._id: 1 has the field a of non-integer type double$/],
    ['a field that is an array', { _id: 1, a: [1] }, { a: { or: 1 } }, /of non-integer type array$/],
    ['a field past 2^53 (a double here)', { _id: 1, a: 2 ** 60 }, { a: { or: 1 } }, /of non-integer type double$/],
    ['an operand that is a double', { _id: 1, a: 1 }, { a: { and: 1.5 } }, /^The \$bit modifier field must be an Integer\(32\/64 bit\); a 'double' is not supported here: \{and: 1\.5\}$/],
    ['an operand that is a string', { _id: 1, a: 1 }, { a: { or: '1' } }, /a 'string' is not supported here: \{or: "1"\}/],
    ['an unknown operation', { _id: 1, a: 1 }, { a: { nand: 1 } }, /^The \$bit modifier only supports 'and', 'or', and 'xor', not 'nand' which is an unknown operator: \{nand: 1\}$/],
    ['no operation', { _id: 1, a: 1 }, { a: {} }, /^You must pass in at least one bitwise operation\. The format is: \{\$bit: \{field: \{and\/or\/xor: #\}\}$/],
    ['an operand that is not a document', { _id: 1, a: 1 }, { a: 5 }, /^The \$bit modifier is not compatible with a int\. You must pass in an embedded document: \{\$bit: \{field: \{and\/or\/xor: #\}\}$/],
    ['_id', { _id: 1, a: 1 }, { _id: { or: 2 } }, /^Performing an update on the path '_id' would modify the immutable field '_id'$/],
    ['a path through a scalar', { _id: 1, a: 1 }, { 'a.b': { or: 2 } }, /Cannot create field 'b' in element \{a: 1\}/],
  ];
  for (const [name, doc, operand, message] of refusals) {
    it(`refuses ${name}, changing nothing`, async () => {
      const c = await seed([doc]);
      for (const op of ['updateOne', 'updateMany', 'findOneAndUpdate']) {
        const res = await mql(op, { collection: c, filter: { _id: 1 }, update: { $bit: operand, $set: { touched: true } } });
        expect(res.status, res.text).toBe(400);
        expect(res.body.error.code).toBe('QUERY_ERROR');
        expect(res.body.error.message).toMatch(message);
      }
      expect(await all(c)).toEqual([doc]);
    });
  }
});

describe('$bitsAllSet, $bitsAnySet, $bitsAllClear, $bitsAnyClear', () => {
  // The manual's collection, without its fourth document (a BinData value has no JSON form here).
  const MANUAL = [
    { _id: 1, a: 54, binaryValueofA: '00110110' },
    { _id: 2, a: 20, binaryValueofA: '00010100' },
    { _id: 3, a: 20.0, binaryValueofA: '00010100' },
  ];
  let c: string;
  beforeAll(async () => {
    c = await seed([...MANUAL, { _id: 4, a: -5 }, { _id: 5, a: 'text' }, { _id: 6, a: [2, 54] }]);
  });
  const found = async (filter: unknown): Promise<unknown[]> => {
    const res = await mql('find', { collection: c, filter, projection: { _id: 1 } });
    expect(res.status, res.text).toBe(200);
    return res.body.documents.map((d: { _id: unknown }) => d._id);
  };

  const cases: ReadonlyArray<readonly [string, unknown, unknown[]]> = [
    ['$bitsAllSet with positions (the manual)', { a: { $bitsAllSet: [1, 5] }, _id: { $lte: 3 } }, [1]],
    ['$bitsAllSet with a bitmask (the manual)', { a: { $bitsAllSet: 50 }, _id: { $lte: 3 } }, [1]],
    ['$bitsAnySet with positions (the manual)', { a: { $bitsAnySet: [1, 5] }, _id: { $lte: 3 } }, [1]],
    ['$bitsAnySet with a bitmask (the manual)', { a: { $bitsAnySet: 35 }, _id: { $lte: 3 } }, [1]],
    ['$bitsAllClear with positions (the manual)', { a: { $bitsAllClear: [1, 5] }, _id: { $lte: 3 } }, [2, 3]],
    ['$bitsAllClear with a bitmask (the manual)', { a: { $bitsAllClear: 35 }, _id: { $lte: 3 } }, [2, 3]],
    ['$bitsAnyClear with positions (the manual)', { a: { $bitsAnyClear: [1, 5] }, _id: { $lte: 3 } }, [2, 3]],
    ['$bitsAnyClear with a bitmask (the manual)', { a: { $bitsAnyClear: 35 }, _id: { $lte: 3 } }, [1, 2, 3]],
    ['sign extension (the manual): bit 200 of a negative number is set', { a: { $bitsAllSet: [200] } }, [4]],
    ['a string never matches, even clear bits; an array matches through its elements', { a: { $bitsAllClear: [0] } }, [1, 2, 3, 6]],
    ['inside $elemMatch, on each element', { a: { $elemMatch: { $bitsAllSet: [1, 2, 4, 5] } } }, [6]],
  ];
  for (const [name, filter, expected] of cases) it(name, async () => expect(await found(filter)).toEqual(expected));

  it('answers the same through an index on the field, in counts, updates and aggregations', async () => {
    expect((await mql('createIndex', { collection: c, keys: { a: 1 } })).status).toBe(200);
    expect(await found({ a: { $bitsAnySet: 35 } })).toEqual([1, 4, 6]);
    expect((await mql('countDocuments', { collection: c, filter: { a: { $bitsAllClear: [1, 5] } } })).body).toEqual({ count: 2 });
    const agg = await mql('aggregate', { collection: c, pipeline: [{ $match: { a: { $bitsAllSet: 50 } } }, { $project: { _id: 1 } }] });
    expect(agg.body.documents).toEqual([{ _id: 1 }, { _id: 4 }, { _id: 6 }]);
    expect((await mql('updateMany', { collection: c, filter: { a: { $bitsAnyClear: [0] } }, update: { $set: { even: true } } })).body).toEqual({ matchedCount: 4, modifiedCount: 4 });
    expect(await found({ even: true })).toEqual([1, 2, 3, 6]);
  });

  const refusals: ReadonlyArray<readonly [string, unknown, RegExp]> = [
    ['a negative bitmask', { a: { $bitsAllSet: -1 } }, /^Expected a non-negative number in: \$bitsAllSet: -1$/],
    ['a fractional bitmask', { a: { $bitsAnySet: 1.5 } }, /^Expected an integer: \$bitsAnySet: 1\.5$/],
    ['a string bitmask', { a: { $bitsAllClear: 'x' } }, /^\$bitsAllClear takes an Array, a number, or a BinData but received: \$bitsAllClear: "x"$/],
    ['a negative bit position', { a: { $bitsAnyClear: [-1] } }, /^Failed to parse bit position\. Expected a non-negative number in: 0: -1$/],
    ['a BinData bitmask in Extended JSON', { a: { $bitsAllSet: { $binary: { base64: 'Zg==', subType: '00' } } } }, /^\$bitsAllSet with a BinData bitmask is not supported: tetradb has no binary type/],
  ];
  for (const [name, filter, message] of refusals) {
    it(`refuses ${name} (400 QUERY_ERROR), and an update with it changes nothing`, async () => {
      const res = await mql('find', { collection: c, filter });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('QUERY_ERROR');
      expect(res.body.error.message).toMatch(message);
      const before = await all(c);
      const upd = await mql('updateMany', { collection: c, filter, update: { $set: { touched: true } } });
      expect(upd.status).toBe(400);
      expect(await all(c)).toEqual(before);
    });
  }
});
