import { describe, expect, it } from 'vitest';
import { compileFilter } from '../../../engine/docs/index.js';
import { ids, type MatchCase } from './matching.js';

// The manual's $regex examples (products).
const products = [
  { _id: 100, sku: 'abc123', description: 'Single line description.' },
  { _id: 101, sku: 'abc789', description: 'First line\nSecond line' },
  { _id: 102, sku: 'xyz456', description: 'Many spaces before     line' },
  { _id: 103, sku: 'xyz789', description: 'Multiple\nline description' },
  { _id: 104, sku: 'Abc789', description: 'SKU is mixed case' },
  { _id: 105, sku: ['abc', 'zz1'], description: 'an array of strings' },
  { _id: 106, sku: 789, description: 'a number' },
];

describe('$regex (manual examples)', () => {
  const cases: MatchCase[] = [
    { name: 'ends with', filter: { sku: { $regex: '789$' } }, expected: [101, 103, 104] },
    { name: 'case-insensitive', filter: { sku: { $regex: '^ABC', $options: 'i' } }, expected: [100, 101, 104, 105] },
    { name: 'string elements of arrays', filter: { sku: { $regex: '^zz' } }, expected: [105] },
    { name: 'numbers never match', filter: { sku: { $regex: '7' } }, expected: [101, 103, 104] },
    { name: 'm: ^ matches after a newline', filter: { description: { $regex: '^S', $options: 'm' } }, expected: [100, 101, 104] },
    { name: 'without m, ^ is the start of the string', filter: { description: { $regex: '^S' } }, expected: [100, 104] },
    { name: 'x: whitespace and comments in the pattern are ignored', filter: { description: { $regex: 'abc #category code\n123', $options: 'x' } }, expected: [] },
    { name: 'x on a pattern that matches', filter: { sku: { $regex: ' abc # prefix\n 1 2 3', $options: 'x' } }, expected: [100] },
    { name: 's: dot matches a newline', filter: { description: { $regex: 'm.*line', $options: 'si' } }, expected: [102, 103] },
    { name: 'without s, dot stops at a newline', filter: { description: { $regex: 'm.*line', $options: 'i' } }, expected: [102] },
    { name: '$not with $regex', filter: { sku: { $not: { $regex: '^abc' } } }, expected: [102, 103, 104, 106] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(products, c.filter)).toEqual(c.expected));
});

describe('PCRE patterns', () => {
  const one = (pattern: string, options: string, subject: string): boolean => compileFilter({ s: { $regex: pattern, $options: options } }).test({ s: subject });
  const cases: Array<[string, string, string, boolean]> = [
    // pattern, options, subject, matches
    ['abc$', '', 'abc\n', true], // PCRE: $ also matches before a final newline
    ['abc$', '', 'abc\nx', false],
    ['^b$', 'm', 'a\nb\nc', true],
    ['a.c', '', 'a\rc', true], // PCRE's dot only excludes \n
    ['a.c', '', 'a\nc', false],
    ['\\Aab', '', 'ab', true],
    ['ab\\z', '', 'ab\n', false],
    ['ab\\Z', '', 'ab\n', true],
    ['\\Qa.b\\E', '', 'a.b', true],
    ['\\Qa.b\\E', '', 'axb', false],
    ['[[:digit:]]+', '', 'x42', true],
    ['[]a]', '', ']', true],
    ['a{', '', 'a{', true],
    ['x{2}', '', 'xx', true],
    ['(?i)abc', '', 'ABC', true],
    ['(?P<n>a)(?P=n)', '', 'aa', true],
    ['\\x{41}', '', 'A', true],
    ['\\-\\_', '', '-_', true],
    ['\\s', '', '\u00a0', false], // \s is ASCII whitespace, as in PCRE
    ['^.$', '', '😀', true], // a code point, not a UTF-16 unit
    ['é', 'i', 'É', true],
    ['a # comment\n b', 'x', 'ab', true],
    ['[ ]', 'x', ' ', true], // x leaves classes alone
  ];
  for (const [pattern, options, subject, expected] of cases) {
    it(`/${pattern}/${options} on ${JSON.stringify(subject)} -> ${expected}`, () => expect(one(pattern, options, subject)).toBe(expected));
  }

  const errors: Array<[string, unknown, RegExp]> = [
    ['an unbalanced pattern', { a: { $regex: '(' } }, /Regular expression is invalid/],
    ['a possessive quantifier', { a: { $regex: 'a++' } }, /Regular expression is invalid/],
    ['an atomic group', { a: { $regex: '(?>a)' } }, /Regular expression is invalid/],
    ['an unsupported escape', { a: { $regex: '\\G' } }, /unsupported escape \\G/],
    ['a NUL in the pattern', { a: { $regex: 'a\0' } }, /embedded null byte/],
    ['an unknown option', { a: { $regex: 'a', $options: 'g' } }, /invalid flag in regex options: g/],
    ['a non-string pattern', { a: { $regex: 5 } }, /\$regex has to be a string/],
    ['a non-string option', { a: { $regex: 'a', $options: 1 } }, /\$options has to be a string/],
    ['$options without $regex', { a: { $options: 'i' } }, /\$options needs a \$regex/],
  ];
  for (const [name, filter, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});

// The manual's $mod examples (inventory).
const inventory = [
  { _id: 1, item: 'abc123', qty: 0 },
  { _id: 2, item: 'xyz123', qty: 5 },
  { _id: 3, item: 'ijk123', qty: 12 },
  { _id: 4, item: 'neg', qty: -12 },
  { _id: 5, item: 'frac', qty: 12.9 },
  { _id: 6, item: 'text', qty: '12' },
  { _id: 7, item: 'none', qty: null },
];

describe('$mod (manual examples)', () => {
  const cases: MatchCase[] = [
    { name: 'divisible by 4', filter: { qty: { $mod: [4, 0] } }, expected: [1, 3, 4, 5] },
    { name: 'operands are truncated toward zero', filter: { qty: { $mod: [4.5, 0.9] } }, expected: [1, 3, 4, 5] },
    { name: 'the remainder has the sign of the dividend', filter: { qty: { $mod: [5, -2] } }, expected: [4] },
    { name: 'a negative divisor', filter: { qty: { $mod: [-5, 0] } }, expected: [1, 2] },
  ];
  for (const c of cases) it(c.name, () => expect(ids(inventory, c.filter)).toEqual(c.expected));

  const errors: Array<[string, unknown, RegExp]> = [
    ['a non-array', { qty: { $mod: 4 } }, /malformed mod, needs to be an array/],
    ['one element', { qty: { $mod: [4] } }, /malformed mod, not enough elements/],
    ['three elements', { qty: { $mod: [4, 1, 2] } }, /malformed mod, too many elements/],
    ['a string divisor', { qty: { $mod: ['4', 0] } }, /malformed mod, divisor not a number/],
    ['a string remainder', { qty: { $mod: [4, '0'] } }, /malformed mod, remainder not a number/],
    ['a zero divisor', { qty: { $mod: [0, 0] } }, /divisor cannot be 0/],
    ['a fraction that truncates to zero', { qty: { $mod: [0.5, 0] } }, /divisor cannot be 0/],
  ];
  for (const [name, filter, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }
});

describe('$expr (manual examples)', () => {
  const monthlyBudget = [
    { _id: 1, category: 'food', budget: 400, spent: 450 },
    { _id: 2, category: 'drinks', budget: 100, spent: 150 },
    { _id: 3, category: 'clothes', budget: 100, spent: 50 },
    { _id: 4, category: 'misc', budget: 500, spent: 300 },
    { _id: 5, category: 'travel', budget: 200, spent: 650 },
  ];
  const cases: Array<[string, unknown, number[]]> = [
    ['compares two fields of a document', { $expr: { $gt: ['$spent', '$budget'] } }, [1, 2, 5]],
    ['with a conditional', { $expr: { $lt: [{ $cond: { if: { $gte: ['$budget', 300] }, then: { $multiply: ['$budget', 0.5] }, else: { $multiply: ['$budget', 0.75] } } }, '$spent'] } }, [1, 2, 4, 5]],
    ['beside field conditions', { category: { $ne: 'food' }, $expr: { $gt: ['$spent', '$budget'] } }, [2, 5]],
    ['inside $or', { $or: [{ _id: 3 }, { $expr: { $eq: ['$spent', 650] } }] }, [3, 5]],
    ['a value that is not a boolean is truthy or not', { $expr: { $subtract: ['$spent', 450] } }, [2, 3, 4, 5]],
    ['$$ROOT', { $expr: { $eq: ['$$ROOT.category', 'misc'] } }, [4]],
  ];
  for (const [name, filter, expected] of cases) it(name, () => expect(ids(monthlyBudget, filter)).toEqual(expected));
  const errors: Array<[string, unknown, RegExp]> = [
    ['inside $elemMatch', { a: { $elemMatch: { $expr: { $eq: ['$b', 1] } } } }, /\$expr can only be applied to the top-level document/],
    ['an unknown expression operator', { $expr: { $nope: 1 } }, /Unrecognized expression '\$nope'/],
    ['an undefined variable', { $expr: { $eq: ['$$x', 1] } }, /Use of undefined variable: x/],
  ];
  for (const [name, filter, message] of errors) {
    it(`refuses ${name}`, () => expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) })));
  }
});

describe('unsupported and unknown operators are never ignored', () => {
  const errors: Array<[string, unknown, RegExp]> = [
    ['$where (JavaScript is never executed)', { $where: 'this.a > 1' }, /unsupported operator: \$where .*never executes JavaScript/],
    ['$text', { $text: { $search: 'x' } }, /\$text is not allowed in this context/],
    ['$jsonSchema with the JSON Schema type "integer" (MongoDB refuses it)', { $jsonSchema: { type: 'integer' } }, /^\$jsonSchema type 'integer' is not currently supported\.$/],
    ['$near', { loc: { $near: [0, 0] } }, /unsupported operator: \$near/],
    ['$geoWithin', { loc: { $geoWithin: {} } }, /unsupported operator: \$geoWithin/],
    ['a BinData bitmask (no binary type here)', { a: { $bitsAllSet: { $binary: { base64: 'Zg==', subType: '00' } } } }, /\$bitsAllSet with a BinData bitmask is not supported/],
    ['an unknown field operator', { a: { $foo: 1 } }, /unknown operator: \$foo/],
    ['a field name mixed into an operator expression', { a: { $gt: 1, b: 2 } }, /unknown operator: b/],
  ];
  for (const [name, filter, message] of errors) {
    it(`refuses ${name}`, () => {
      expect(() => compileFilter(filter)).toThrow(expect.objectContaining({ code: 'QUERY_ERROR', message: expect.stringMatching(message) }));
    });
  }

  it('names the operator in details', () => {
    expect(() => compileFilter({ $where: 'x' })).toThrow(expect.objectContaining({ details: expect.objectContaining({ operator: '$where' }) }));
  });
});
