import { describe, expect, it } from 'vitest';
import { compileUpdate } from '../../../engine/docs/index.js';
import { modifies, updated } from './applying.js';

function refusal(update: unknown, message: RegExp, code = 'QUERY_ERROR'): void {
  expect(() => compileUpdate(update)).toThrow(expect.objectContaining({ code, message: expect.stringMatching(message) }));
}

describe('compileUpdate validates the whole update up front', () => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['a replacement document', { a: 1 }, /replacement documents are not supported by updateOne\/updateMany; use update operators such as \$set/],
    ['operators mixed with fields', { $set: { a: 1 }, b: 2 }, /replacement documents are not supported/],
    ['an empty update', {}, /at least one update operator/],
    ['a value that is neither a document nor a pipeline', 'text', /update must be an object of update operators, such as \{"\$set": \{"a": 1\}\}, or an array of pipeline stages/],
    ['a pipeline with a stage an update does not allow', [{ $set: { a: 1 } }, { $sort: { a: 1 } }], /^\$sort is not allowed to be used within an update$/],
    ['an unknown operator', { $foo: { a: 1 } }, /unknown update operator: \$foo/],
    ['$bit of a double', { $bit: { a: { and: 1.5 } } }, /The \$bit modifier field must be an Integer\(32\/64 bit\)/],
    ['a non-document operand', { $set: 5 }, /Modifiers operate on fields but we found type number instead/],
    ['an empty path', { $set: { '': 1 } }, /An empty update path is not valid/],
    ['an empty component', { $set: { 'a..b': 1 } }, /The update path 'a..b' contains an empty field name/],
    ['a positional operator first in the path', { $set: { '$.b': 1 } }, /Cannot have a positional element \('\$'\) in the first position in path '\$.b'/],
    ['two $ in one path', { $inc: { 'a.$.b.$': 1 } }, /Too many positional \(i.e. '\$'\) elements found in path 'a.\$.b.\$'/],
    ['an array filter identifier without its filter', { $inc: { 'a.$[x].b': 1 } }, /No array filter found for identifier 'x' in path 'a.\$\[x\].b'/],
    ['a $-prefixed field', { $set: { $x: 1 } }, /The dollar \(\$\) prefixed field '\$x' in '\$x' is not allowed/],
    ['the same path twice', { $set: { a: 1 }, $inc: { a: 1 } }, /Updating the path 'a' would create a conflict at 'a'/],
    ['a path inside another', { $set: { 'a.b': 1 }, $unset: { a: '' } }, /Updating the path 'a.b' would create a conflict at 'a'/],
    ['a rename onto an updated path', { $rename: { x: 'a' }, $set: { 'a.b': 1 } }, /Updating the path 'a.b' would create a conflict at 'a'/],
    ['a rename from an updated path', { $rename: { a: 'z' }, $inc: { a: 1 } }, /would create a conflict at 'a'/],
    ['$inc of _id', { $inc: { _id: 1 } }, /Performing an update on the path '_id' would modify the immutable field '_id'/],
    ['$unset of _id', { $unset: { _id: '' } }, /immutable field '_id'/],
    ['$set of a path inside _id', { $set: { '_id.a': 1 } }, /Performing an update on the path '_id.a' would modify the immutable field '_id'/],
    ['$rename to _id', { $rename: { a: '_id' } }, /immutable field '_id'/],
    ['$set of _id to an invalid id', { $set: { _id: { a: 1 } } }, /_id must be a string, a number or a boolean/],
    ['a malformed $date', { $set: { a: { $date: 'yesterday' } } }, /\$date must be an ISO-8601 date-time/],
  ];
  for (const [name, update, message] of cases) it(`refuses ${name}`, () => refusal(update, message));

  it('names the conflicting paths in details', () => {
    expect(() => compileUpdate({ $set: { 'a.b.c': 1, 'a.b': 2 } })).toThrow(expect.objectContaining({ details: { path: 'a.b.c', conflictsWith: 'a.b' } }));
  });

  it('accepts sibling paths and an empty operand', () => {
    expect(compileUpdate({ $set: { 'a.b': 1, 'a.c': 2, ab: 3 }, $unset: {} }).paths).toEqual(['a.b', 'a.c', 'ab']);
  });

  const storage: Array<[string, unknown, RegExp]> = [
    ['a field name with a dot', { $set: { a: { 'b.c': 1 } } }, /field name 'b.c' must not contain '.'/],
    ['a field name with a $', { $push: { a: { $each: [{ $x: 1 }] } } }, /field name '\$x' must not start with '\$'/],
    ['a $ field name in $addToSet', { $addToSet: { a: { $slice: 1 } } }, /field name '\$slice' must not start with '\$'/],
  ];
  for (const [name, update, message] of storage) it(`refuses to store ${name}`, () => refusal(update, message, 'VALIDATION_FAILED'));
});

describe('_id is immutable', () => {
  it('$set of _id to the same value is a no-op (as in MongoDB)', () => {
    expect(modifies({ _id: 7, a: 1 }, { $set: { _id: 7 } })).toBe(false);
    expect(updated({ _id: 7, a: 1 }, { $set: { _id: 7, a: 2 } })).toStrictEqual({ _id: 7, a: 2 });
  });

  it('$set of _id to another value is refused when applied', () => {
    expect(() => updated({ _id: 7 }, { $set: { _id: 8 } })).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(/immutable field '_id'/) }));
  });

  it('numbers are equal by value, so 7 and 7.0 are the same _id', () => expect(modifies({ _id: 7 }, { $set: { _id: 7.0 } })).toBe(false));
});

describe('errors found while applying change nothing', () => {
  it('an update that fails on a document leaves it as it was', () => {
    const doc = { _id: 1, a: 1, b: 'x' };
    const update = compileUpdate({ $inc: { a: 1, b: 1 } });
    expect(() => update.apply(doc)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR' }));
    expect(doc).toStrictEqual({ _id: 1, a: 1, b: 'x' });
  });
});
