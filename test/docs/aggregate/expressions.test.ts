// Aggregation expression operators, laid out as the manual's families, with the null and missing
// behaviours MongoDB documents (several of which mingo, the fuzz oracle, does not share).
import { describe, expect, it } from 'vitest';
import { compileExpression, EXPRESSION_OPERATOR_NAMES, type Doc } from '../../../engine/docs/index.js';
import { Scope } from '../../../engine/docs/aggregate/expression/expression.js';
import { readFileSync } from 'node:fs';

const D = new Date('2024-03-09T17:45:30.250Z');
const doc: Doc = { _id: 1, a: 5, b: [1, 2, 3], s: 'Hello', n: null, d: D, o: { x: 1, y: [{ z: 1 }, { z: 2 }, 3] }, items: [{ q: 2, p: 3 }, { q: 1, p: 10 }] };

function value(expr: unknown, input: Doc = doc): unknown {
  const v = compileExpression(expr)(Scope.of(input));
  return typeof v === 'symbol' ? 'MISSING' : v;
}

function table(cases: Array<[string, unknown, unknown]>): void {
  for (const [name, expr, expected] of cases) it(name, () => expect(value(expr)).toStrictEqual(expected));
}

function refuses(name: string, expr: unknown, message: RegExp): void {
  it(`refuses ${name}`, () => expect(() => value(expr)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) })));
}

describe('field paths, variables and literals', () => {
  table([
    ['a field', '$a', 5],
    ['a nested field', '$o.x', 1],
    ['through an array of documents: the values, scalars left out', '$o.y.z', [1, 2]],
    ['a missing field', '$nope', 'MISSING'],
    ['$$ROOT', '$$ROOT.s', 'Hello'],
    ['$$CURRENT', '$$CURRENT.a', 5],
    ['$$REMOVE', '$$REMOVE', 'MISSING'],
    ['a literal string', 'plain', 'plain'],
    ['$literal keeps a $ string', { $literal: '$a' }, '$a'],
    ['an array of expressions: missing becomes null', ['$a', '$nope'], [5, null]],
    ['an object of expressions: missing is left out', { x: '$a', y: '$nope' }, { x: 5 }],
  ]);
  it('$$NOW is the instant the scope binds (one per operation), else the time of reading', () => {
    const now = new Date('2020-01-01T00:00:00Z');
    const scope = Scope.of(doc, new Scope(new Map([['NOW', now]])));
    expect(compileExpression('$$NOW')(scope)).toBe(now);
    expect(compileExpression({ $add: ['$$NOW', 1] })(scope)).toEqual(new Date(now.getTime() + 1));
    const read = value('$$NOW') as Date;
    expect(Math.abs(read.getTime() - Date.now())).toBeLessThan(5_000);
  });
  refuses('an unknown operator', { $nope: 1 }, /Unrecognized expression '\$nope'/);
  refuses('two operators in one object', { $add: [1], $sum: [1] }, /exactly one field/);
  refuses('an undefined variable', '$$nope', /Use of undefined variable: nope/);
  refuses('JavaScript', { $function: {} }, /unsupported: the \$function expression operator is not supported \(JavaScript is never executed\)/);
  refuses('a bare $', '$', /not a valid FieldPath/);
});

describe('arithmetic', () => {
  table([
    ['$add', { $add: ['$a', 2, 0.5] }, 7.5],
    ['$add of a date and milliseconds', { $add: ['$d', 1000] }, new Date(D.getTime() + 1000)],
    ['$add with null', { $add: ['$a', '$n'] }, null],
    ['$add with missing', { $add: ['$a', '$nope'] }, null],
    ['$subtract', { $subtract: ['$a', 7] }, -2],
    ['$subtract of two dates is milliseconds', { $subtract: ['$d', { $literal: new Date(D.getTime() - 60_000) }] }, 60_000],
    ['$multiply', { $multiply: ['$a', 3] }, 15],
    ['$divide', { $divide: ['$a', 2] }, 2.5],
    ['$mod', { $mod: ['$a', 3] }, 2],
    ['$abs', { $abs: -4 }, 4],
    ['$ceil / $floor', [{ $ceil: 1.2 }, { $floor: 1.8 }], [2, 1]],
    ['$round half to even', [{ $round: [2.5, 0] }, { $round: [3.5, 0] }, { $round: [1.234, 2] }], [2, 4, 1.23]],
    ['$trunc', { $trunc: [-1.79, 1] }, -1.7],
    ['$sqrt / $pow', [{ $sqrt: 16 }, { $pow: [2, 10] }], [4, 1024]],
  ]);
  refuses('$add of a string', { $add: ['$s', 1] }, /\$add only supports numeric or date types, not string/);
  refuses('$divide by zero', { $divide: [1, 0] }, /can't \$divide by zero/);
  refuses('$sqrt of a negative', { $sqrt: -1 }, /greater than or equal to 0/);
  refuses('$add with the wrong arity? no: $divide with one argument', { $divide: [1] }, /takes 2 arguments/);
});

describe('comparison and boolean', () => {
  table([
    ['$eq across types is false', { $eq: ['$a', '5'] }, false],
    ['$gt in BSON order: a string is above any number', { $gt: ['$s', 1000] }, true],
    ['$lt: null is below numbers', { $lt: ['$n', 0] }, true],
    ['$lt: missing is below null', { $lt: ['$nope', '$n'] }, true],
    ['$eq: missing is not null', { $eq: ['$nope', null] }, false],
    ['$cmp', [{ $cmp: [1, 2] }, { $cmp: [2, 2] }, { $cmp: ['b', 'a'] }], [-1, 0, 1]],
    ['$and: 0, null and missing are false', [{ $and: [1, 'x', []] }, { $and: [1, 0] }, { $and: ['$nope'] }], [true, false, false]],
    ['$or', { $or: ['$n', '$a'] }, true],
    ['$not', { $not: ['$n'] }, true],
  ]);
});

describe('conditional', () => {
  table([
    ['$cond, array form', { $cond: [{ $gte: ['$a', 5] }, 'big', 'small'] }, 'big'],
    ['$cond, object form', { $cond: { if: '$n', then: 1, else: 2 } }, 2],
    ['$ifNull: missing and null are replaced', [{ $ifNull: ['$nope', 'x'] }, { $ifNull: ['$n', 'y'] }, { $ifNull: ['$a', 'z'] }], ['x', 'y', 5]],
    ['$ifNull with several', { $ifNull: ['$nope', '$n', '$s', 'last'] }, 'Hello'],
    ['$switch', { $switch: { branches: [{ case: { $lt: ['$a', 3] }, then: 'low' }, { case: { $lt: ['$a', 8] }, then: 'mid' }], default: 'high' } }, 'mid'],
  ]);
  refuses('a $switch with no match and no default', { $switch: { branches: [{ case: false, then: 1 }] } }, /could not find a matching branch/);
  refuses('a $cond without else', { $cond: { if: true, then: 1 } }, /Missing 'else' parameter to \$cond/);
});

describe('strings', () => {
  table([
    ['$concat', { $concat: ['$s', ', ', 'world'] }, 'Hello, world'],
    ['$concat with null is null', { $concat: ['$s', '$n'] }, null],
    ['$toUpper / $toLower', [{ $toUpper: '$s' }, { $toLower: '$s' }], ['HELLO', 'hello']],
    ['$toUpper of null and missing is ""', [{ $toUpper: '$n' }, { $toLower: '$nope' }], ['', '']],
    ['$toUpper of a number', { $toUpper: 5 }, '5'],
    ['$strLenCP counts code points', { $strLenCP: 'héllo😀' }, 6],
    ['$substrCP', { $substrCP: ['$s', 1, 3] }, 'ell'],
    ['$split', { $split: ['a,b,,c', ','] }, ['a', 'b', '', 'c']],
    ['$indexOfCP', [{ $indexOfCP: ['$s', 'l'] }, { $indexOfCP: ['$s', 'l', 3] }, { $indexOfCP: ['$s', 'x'] }], [2, 3, -1]],
    ['$trim / $ltrim / $rtrim', [{ $trim: { input: '  x  ' } }, { $ltrim: { input: 'xxay', chars: 'x' } }, { $rtrim: { input: 'ayy', chars: 'y' } }], ['x', 'ay', 'a']],
    ['$replaceOne / $replaceAll', [{ $replaceOne: { input: 'a-b-c', find: '-', replacement: '+' } }, { $replaceAll: { input: 'a-b-c', find: '-', replacement: '+' } }], ['a+b-c', 'a+b+c']],
    ['$regexMatch', [{ $regexMatch: { input: '$s', regex: '^h', options: 'i' } }, { $regexMatch: { input: '$s', regex: 'z' } }], [true, false]],
    ['$strcasecmp', { $strcasecmp: ['abc', 'ABC'] }, 0],
  ]);
  refuses('$concat of a number', { $concat: ['a', 1] }, /\$concat only supports strings, not int/);
  refuses('$strLenCP of missing', { $strLenCP: '$nope' }, /requires a string argument, found: missing/);
});

describe('arrays and sets', () => {
  table([
    ['$size', { $size: '$b' }, 3],
    ['$arrayElemAt, negative from the end, out of range missing', [{ $arrayElemAt: ['$b', -1] }, { $arrayElemAt: ['$b', 7] }], [3, null]],
    ['$first / $last', [{ $first: '$b' }, { $last: '$b' }, { $first: '$nope' }], [1, 3, null]],
    ['$in', [{ $in: [2, '$b'] }, { $in: [9, '$b'] }], [true, false]],
    ['$concatArrays', { $concatArrays: ['$b', [4], []] }, [1, 2, 3, 4]],
    ['$concatArrays with missing is null', { $concatArrays: ['$b', '$nope'] }, null],
    ['$slice', [{ $slice: ['$b', 2] }, { $slice: ['$b', -2] }, { $slice: ['$b', 1, 1] }], [[1, 2], [2, 3], [2]]],
    ['$range', [{ $range: [0, 5, 2] }, { $range: [3, 0, -1] }], [[0, 2, 4], [3, 2, 1]]],
    ['$indexOfArray', { $indexOfArray: ['$b', 2] }, 1],
    ['$reverseArray', { $reverseArray: '$b' }, [3, 2, 1]],
    ['$isArray', [{ $isArray: ['$b'] }, { $isArray: ['$a'] }], [true, false]],
    ['$map', { $map: { input: '$items', as: 'it', in: { $multiply: ['$$it.q', '$$it.p'] } } }, [6, 10]],
    ['$filter with $$this and a limit', { $filter: { input: '$b', cond: { $gte: ['$$this', 2] }, limit: 1 } }, [2]],
    ['$reduce', { $reduce: { input: '$b', initialValue: 10, in: { $add: ['$$value', '$$this'] } } }, 16],
    ['$sum / $avg / $max / $min over an array', [{ $sum: '$b' }, { $avg: '$b' }, { $max: '$b' }, { $min: '$b' }], [6, 2, 3, 1]],
    ['$sum of missing is 0, $max of missing null', [{ $sum: '$nope' }, { $max: '$nope' }], [0, null]],
    ['$sum over several arguments ignores non-numbers', { $sum: ['$a', '$s', 1] }, 6],
    ['$setUnion / $setIntersection / $setDifference', [{ $setUnion: [[1, 2], [2, 3]] }, { $setIntersection: [[1, 2], [2, 3]] }, { $setDifference: [[1, 2], [2, 3]] }], [[1, 2, 3], [2], [1]]],
    ['$setEquals / $setIsSubset', [{ $setEquals: [[1, 2], [2, 1, 1]] }, { $setIsSubset: [[1], [1, 2]] }], [true, true]],
    ['$allElementsTrue / $anyElementTrue', [{ $allElementsTrue: [[1, true, 'x']] }, { $anyElementTrue: [[0, null, false]] }], [true, false]],
  ]);
  refuses('$size of missing', { $size: '$nope' }, /The argument to \$size must be an array. Type of argument: missing/);
  refuses('$in without an array', { $in: [1, '$a'] }, /\$in requires an array as a second argument, found: int/);
  refuses('a $map variable that is not defined', { $map: { input: '$b', as: 'x', in: '$$y' } }, /Use of undefined variable: y/);
});

describe('types and conversions', () => {
  table([
    ['$type', [{ $type: '$a' }, { $type: '$s' }, { $type: '$n' }, { $type: '$nope' }, { $type: '$b' }, { $type: 1.5 }, { $type: '$d' }], ['int', 'string', 'null', 'missing', 'array', 'double', 'date']],
    ['$toString', [{ $toString: '$a' }, { $toString: true }, { $toString: '$n' }], ['5', 'true', null]],
    ['$toInt / $toLong / $toDouble', [{ $toInt: '42' }, { $toInt: 4.9 }, { $toLong: true }, { $toDouble: '2.5' }], [42, 4, 1, 2.5]],
    ['$toBool', [{ $toBool: 0 }, { $toBool: 'false' }, { $toBool: '$n' }], [false, true, null]],
    ['$toDate', { $toDate: '2024-03-09T17:45:30.250Z' }, D],
    ['$convert with onError and onNull', [{ $convert: { input: 'x', to: 'int', onError: -1 } }, { $convert: { input: '$nope', to: 'int', onNull: 0 } }], [-1, 0]],
    ['$isNumber', [{ $isNumber: '$a' }, { $isNumber: '$s' }], [true, false]],
  ]);
  refuses('$toInt of a word', { $toInt: 'x' }, /Failed to parse number 'x'/);
  refuses('$toInt past int32', { $toInt: 2 ** 40 }, /overflow/);
});

describe('dates (UTC)', () => {
  table([
    ['the parts', [{ $year: '$d' }, { $month: '$d' }, { $dayOfMonth: '$d' }, { $hour: '$d' }, { $minute: '$d' }, { $second: '$d' }, { $millisecond: '$d' }], [2024, 3, 9, 17, 45, 30, 250]],
    ['$dayOfWeek (Sunday 1) and $isoDayOfWeek, $dayOfYear', [{ $dayOfWeek: '$d' }, { $isoDayOfWeek: '$d' }, { $dayOfYear: '$d' }], [7, 6, 69]],
    ['the {date, timezone: UTC} form', { $year: { date: '$d', timezone: 'UTC' } }, 2024],
    ['of null or missing', [{ $year: '$nope' }, { $month: '$n' }], [null, null]],
    ['$dateToString', [{ $dateToString: { date: '$d', format: '%Y-%m-%d %H:%M:%S.%L %j %w %u %%' } }, { $dateToString: { date: '$d' } }], ['2024-03-09 17:45:30.250 069 7 6 %', '2024-03-09T17:45:30.250Z']],
    ['$dateToString onNull', { $dateToString: { date: '$nope', onNull: 'never' } }, 'never'],
  ]);
  refuses('an unknown time zone', { $hour: { date: '$d', timezone: 'Europe/Pariss' } }, /unrecognized time zone identifier: "Europe\/Pariss"/);
  refuses('a part of a string', { $year: '$s' }, /can't convert from BSON type string to Date/);
});

describe('objects and variables', () => {
  table([
    ['$mergeObjects: later fields win, null ignored', { $mergeObjects: [{ a: 1, b: 2 }, '$n', { b: 3 }] }, { a: 1, b: 3 }],
    ['$objectToArray / $arrayToObject', [{ $objectToArray: { x: 1 } }, { $arrayToObject: [[['k', 1]]] }, { $arrayToObject: { $literal: [{ k: 'a', v: 2 }] } }], [[{ k: 'x', v: 1 }], { k: 1 }, { a: 2 }]],
    ['$getField', { $getField: { field: 'x', input: '$o' } }, 1],
    ['$let', { $let: { vars: { t: { $add: ['$a', 1] } }, in: { $multiply: ['$$t', 2] } } }, 12],
  ]);
  it('keeps a "__proto__" key from $arrayToObject as data', () => {
    const out = value({ $arrayToObject: { $literal: [['__proto__', { polluted: true }]] } }) as Doc;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(({} as Doc)['polluted']).toBeUndefined();
  });
  refuses('a variable name that starts with a capital', { $let: { vars: { T: 1 }, in: '$$T' } }, /starts with an invalid character for a user variable name/);
});

describe('the documentation', () => {
  it('lists every expression operator in docs/mql.md', () => {
    const docs = readFileSync(new URL('../../../docs/mql.md', import.meta.url), 'utf8');
    const missing = EXPRESSION_OPERATOR_NAMES.filter((name) => !docs.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});

describe('dates as MongoDB reads and writes them (manual: $toDate, $dateToString, $add)', () => {
  table([
    ['$toDate of a date alone: midnight UTC', { $toDate: '2018-03-20' }, new Date('2018-03-20T00:00:00Z')],
    ['$toDate with a time and no offset: UTC', { $toDate: '2018-03-20T11:00:06' }, new Date('2018-03-20T11:00:06Z')],
    ['$toDate with a space and an offset', { $toDate: '2018-03-20 11:00:06 +0500' }, new Date('2018-03-20T06:00:06Z')],
    ['$toDate with a fraction and Z', { $toDate: '2018-03-20 11:00:06.575Z' }, new Date('2018-03-20T11:00:06.575Z')],
    ['$convert to date with onError keeps a readable date', { $convert: { input: '2024-01-01', to: 'date', onError: 'bad' } }, new Date('2024-01-01T00:00:00Z')],
    ['$convert to date with onError for an unreadable one', { $convert: { input: '01/02/2024', to: 'date', onError: 'bad' } }, 'bad'],
  ]);
  refuses('$toDate of an impossible day', { $toDate: '2024-02-30' }, /Error parsing date string/);
  refuses('$toDate of a number past the date range', { $toDate: 1e20 }, /date overflow/);
  refuses('$add of a date and a number past the range', { $add: ['$d', 1e20] }, /date overflow in \$add/);
  refuses('$subtract taking a date past the range', { $subtract: ['$d', 1e20] }, /date overflow/);
  refuses('$dateToString %Y of a year past 9999', { $dateToString: { date: { $toDate: 1e15 }, format: '%Y' } }, /only defined on year 0-9999/);
  refuses('$dateToString %Y of a year before 0', { $dateToString: { date: { $toDate: -1e14 }, format: '%Y-%m-%d' } }, /only defined on year 0-9999/);
  refuses('$pow of 0 to a negative exponent', { $pow: [0, -1] }, /\$pow cannot take a base of 0 and a negative exponent/);
  table([['$toString of -0 keeps the sign', { $toString: { $multiply: [-1, 0] } }, '-0']]);
});
