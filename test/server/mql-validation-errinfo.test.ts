// Schema validation's explanation over HTTP on a real server: a refused write's
// error.details.details is MongoDB's errInfo.details. The expected explanations are MongoDB's,
// taken from the manual ("Schema Validation"), jstests/core/doc_validation/doc_validation_error.js
// and the unit tests src/mongo/db/matcher/doc_validation_error_test.cpp and
// doc_validation_error_json_schema_test.cpp (where a shell number was a double, the input here is
// a fraction, since tetradb types numbers by value).
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/app.js';
import { defaultConfig } from '../../server/config.js';
import { http, serverForFile, signup } from '../helpers/server.js';
import { tempDir } from '../helpers/temp-dir.js';
import { STUDENTS_SCHEMA } from '../helpers/validation-examples.js';

const file = serverForFile();
const mql = file.mql.bind(file);
let made = 0;
const fresh = (prefix: string): string => `${prefix}${++made}`;

/** Creates a collection with `validator`, inserts `document` and returns the refusal's error. */
async function refusal(validator: Record<string, unknown>, document: Record<string, unknown>): Promise<any> {
  const c = fresh('e');
  const created = await mql('createCollection', { collection: c, validator });
  expect(created.status, created.text).toBe(200);
  const res = await mql('insertOne', { collection: c, document: { _id: 1, ...document } });
  expect(res.status, res.text).toBe(400);
  expect(res.body.error.code).toBe('VALIDATION_FAILED');
  expect(res.body.error.message).toBe('Document failed validation');
  expect(res.body.error.details.failingDocumentId).toBe(1);
  return res.body.error;
}

type Case = [name: string, validator: Record<string, unknown>, document: Record<string, unknown>, expected: Record<string, unknown>];


describe('the manual and the jstests', () => {
  const cases: Case[] = [
    [
      "the manual's students (View the Rejected Document)",
      STUDENTS_SCHEMA,
      { name: 'Alice', year: 2019, major: 'History', gpa: 3, address: { city: 'NYC', street: '33rd Street' } },
      {
        operatorName: '$jsonSchema',
        title: 'Student Object Validation',
        schemaRulesNotSatisfied: [
          {
            operatorName: 'properties',
            propertiesNotSatisfied: [
              {
                propertyName: 'gpa',
                description: "'gpa' must be a double if the field exists",
                details: [{ operatorName: 'bsonType', specifiedAs: { bsonType: ['double'] }, reason: 'type did not match', consideredValue: 3, consideredType: 'int' }],
              },
            ],
          },
        ],
      },
    ],
    [
      'Students collection (doc_validation_error.js)',
      {
        $jsonSchema: {
          bsonType: 'object',
          required: ['name', 'year', 'major', 'address'],
          properties: {
            name: { bsonType: 'string', description: 'must be a string and is required' },
            year: { bsonType: 'int', minimum: 2017, maximum: 3017, description: 'must be an integer in [ 2017, 3017 ] and is required' },
            major: { enum: ['Math', 'English', 'Computer Science', 'History', null], description: 'can only be one of the enum values and is required' },
            gpa: { bsonType: ['double'], description: 'must be a double if the field exists' },
            address: {
              bsonType: 'object',
              required: ['city'],
              properties: {
                street: { bsonType: 'string', description: 'must be a string if the field exists' },
                city: { bsonType: 'string', description: 'must be a string and is required' },
              },
            },
          },
        },
      },
      { year: 2020, major: 'Software Engineering', gpa: 5.5, address: { city: 'NYC', street: 5 } },
      {
        operatorName: '$jsonSchema',
        schemaRulesNotSatisfied: [
          {
            operatorName: 'properties',
            propertiesNotSatisfied: [
              {
                propertyName: 'major',
                description: 'can only be one of the enum values and is required',
                details: [{ operatorName: 'enum', specifiedAs: { enum: ['Math', 'English', 'Computer Science', 'History', null] }, reason: 'value was not found in enum', consideredValue: 'Software Engineering' }],
              },
              {
                propertyName: 'address',
                details: [
                  {
                    operatorName: 'properties',
                    propertiesNotSatisfied: [
                      {
                        propertyName: 'street',
                        description: 'must be a string if the field exists',
                        details: [{ operatorName: 'bsonType', specifiedAs: { bsonType: 'string' }, reason: 'type did not match', consideredValue: 5, consideredType: 'int' }],
                      },
                    ],
                  },
                ],
              },
            ],
          },
          { operatorName: 'required', specifiedAs: { required: ['name', 'year', 'major', 'address'] }, missingProperties: ['name'] },
        ],
      },
    ],
    [
      'Contacts (doc_validation_error.js)',
      { $or: [{ phone: { $type: 'string' } }, { email: { $regex: '@mongodb\\.com$' } }, { status: { $in: ['Unknown', 'Incomplete'] } }] },
      { email: 'info@mongodb.co' },
      {
        operatorName: '$or',
        clausesNotSatisfied: [
          { index: 0, details: { operatorName: '$type', specifiedAs: { phone: { $type: 'string' } }, reason: 'field was missing' } },
          { index: 1, details: { operatorName: '$regex', specifiedAs: { email: { $regex: '@mongodb\\.com$' } }, reason: 'regular expression did not match', consideredValue: 'info@mongodb.co' } },
          { index: 2, details: { operatorName: '$in', specifiedAs: { status: { $in: ['Unknown', 'Incomplete'] } }, reason: 'field was missing' } },
        ],
      },
    ],
    [
      'Duplicate check in an array ($expr, doc_validation_error.js)',
      { $expr: { $eq: [{ $size: '$a.b' }, { $size: { $setUnion: '$a.b' } }] } },
      { a: [{ b: 1 }, { b: 1 }] },
      { operatorName: '$expr', specifiedAs: { $expr: { $eq: [{ $size: '$a.b' }, { $size: { $setUnion: '$a.b' } }] } }, reason: 'expression did not match', expressionResult: false },
    ],
    [
      'array of enums: uniqueItems (doc_validation_error.js)',
      { $jsonSchema: { properties: { values: { bsonType: 'array', items: { bsonType: 'string', enum: ['one', 'two', 'three'] }, minItems: 1, uniqueItems: true } } } },
      { values: ['two', 'two'] },
      {
        operatorName: '$jsonSchema',
        schemaRulesNotSatisfied: [
          {
            operatorName: 'properties',
            propertiesNotSatisfied: [
              { propertyName: 'values', details: [{ operatorName: 'uniqueItems', specifiedAs: { uniqueItems: true }, reason: 'found a duplicate item', consideredValue: ['two', 'two'], duplicatedValue: 'two' }] },
            ],
          },
        ],
      },
    ],
  ];
  it.each(cases)('%s', async (_name, validator, document, expected) => {
    expect((await refusal(validator, document)).details.details).toEqual(expected);
  });
});

// doc_validation_error_test.cpp: one case per operator family, `a` the path.
describe('query operators', () => {
  const leaf = (op: string, specifiedAs: unknown, rest: Record<string, unknown>) => ({ operatorName: op, specifiedAs, ...rest });
  const cases: Case[] = [
    ['$eq', { a: { $eq: 2 } }, { a: 1 }, leaf('$eq', { a: { $eq: 2 } }, { reason: 'comparison failed', consideredValue: 1 })],
    ['implicit $eq', { a: 2 }, { a: 1 }, leaf('$eq', { a: 2 }, { reason: 'comparison failed', consideredValue: 1 })],
    ['$eq missing path', { a: { $eq: 2 } }, { b: 1 }, leaf('$eq', { a: { $eq: 2 } }, { reason: 'field was missing' })],
    ['$eq through an array', { a: { $eq: 2 } }, { a: [3, 4, 5] }, leaf('$eq', { a: { $eq: 2 } }, { reason: 'comparison failed', consideredValues: [3, 4, 5] })],
    ['$eq through nested arrays', { 'a.b': { $eq: 0 } }, { a: [{ b: [1, 2] }, { b: [3, 4] }] }, leaf('$eq', { 'a.b': { $eq: 0 } }, { reason: 'comparison failed', consideredValues: [1, 2, 3, 4] })],
    ['$eq empty array', { a: { $eq: [1, 2] } }, { a: [] }, leaf('$eq', { a: { $eq: [1, 2] } }, { reason: 'comparison failed', consideredValues: [] })],
    ['$ne', { a: { $ne: 2 } }, { a: 2 }, leaf('$ne', { a: { $ne: 2 } }, { reason: 'comparison succeeded', consideredValue: 2 })],
    ['$gt', { a: { $gt: 3 } }, { a: 0 }, leaf('$gt', { a: { $gt: 3 } }, { reason: 'comparison failed', consideredValue: 0 })],
    ['$gte', { a: { $gte: 3 } }, { a: [0, 1, 2] }, leaf('$gte', { a: { $gte: 3 } }, { reason: 'comparison failed', consideredValues: [0, 1, 2] })],
    ['$lt', { a: { $lt: 0 } }, { a: 1 }, leaf('$lt', { a: { $lt: 0 } }, { reason: 'comparison failed', consideredValue: 1 })],
    ['$lte', { a: { $lte: 0 } }, { b: 1 }, leaf('$lte', { a: { $lte: 0 } }, { reason: 'field was missing' })],
    ['$in', { a: { $in: [1, 2, 3] } }, { a: 4 }, leaf('$in', { a: { $in: [1, 2, 3] } }, { reason: 'no matching value found in array', consideredValue: 4 })],
    ['$nin', { a: { $nin: [1, 2, 3] } }, { a: 3 }, leaf('$nin', { a: { $nin: [1, 2, 3] } }, { reason: 'matching value found in array', consideredValue: 3 })],
    ['$exists', { a: { $exists: true } }, { b: 1 }, leaf('$exists', { a: { $exists: true } }, { reason: 'path does not exist' })],
    ['$exists: false', { a: { $exists: false } }, { a: 1 }, leaf('$exists', { a: { $exists: false } }, { reason: 'path does exist' })],
    ['$type', { a: { $type: 'int' } }, { a: 'one' }, leaf('$type', { a: { $type: 'int' } }, { reason: 'type did not match', consideredValue: 'one', consideredType: 'string' })],
    ['$type through an array', { a: { $type: 'double' } }, { a: ['x', 'y', 'z'] }, leaf('$type', { a: { $type: 'double' } }, { reason: 'type did not match', consideredValues: ['x', 'y', 'z'], consideredType: 'string' })],
    ['$mod', { a: { $mod: [2, 1] } }, { a: 2 }, leaf('$mod', { a: { $mod: [2, 1] } }, { reason: '$mod did not evaluate to expected remainder', consideredValue: 2 })],
    [
      '$mod of a string',
      { a: { $mod: [2, 1] } },
      { a: 'two' },
      leaf('$mod', { a: { $mod: [2, 1] } }, { reason: 'type did not match', consideredType: 'string', expectedTypes: ['decimal', 'double', 'int', 'long'], consideredValue: 'two' }),
    ],
    ['$regex', { a: { $regex: 'myRegex', $options: '' } }, { a: 'one' }, leaf('$regex', { a: { $regex: 'myRegex', $options: '' } }, { reason: 'regular expression did not match', consideredValue: 'one' })],
    [
      '$regex of a number',
      { a: { $regex: 'myRegex' } },
      { a: 1 },
      leaf('$regex', { a: { $regex: 'myRegex' } }, { reason: 'type did not match', consideredType: 'int', expectedTypes: ['regex', 'string', 'symbol'], consideredValue: 1 }),
    ],
    ['$bitsAllClear', { a: { $bitsAllClear: 2 } }, { a: 7 }, leaf('$bitsAllClear', { a: { $bitsAllClear: 2 } }, { reason: 'bitwise operator failed to match', consideredValue: 7 })],
    ['$bitsAnySet positions', { a: { $bitsAnySet: [1, 0] } }, { a: 0 }, leaf('$bitsAnySet', { a: { $bitsAnySet: [1, 0] } }, { reason: 'bitwise operator failed to match', consideredValue: 0 })],
    [
      '$bitsAnyClear of a string',
      { a: { $bitsAnyClear: 3 } },
      { a: 'someString' },
      leaf('$bitsAnyClear', { a: { $bitsAnyClear: 3 } }, { reason: 'type did not match', consideredType: 'string', expectedTypes: ['binData', 'decimal', 'double', 'int', 'long'], consideredValue: 'someString' }),
    ],
    ['$size', { a: { $size: 2 } }, { a: [1, 2, 3] }, leaf('$size', { a: { $size: 2 } }, { reason: 'array length was not equal to given size', consideredValue: [1, 2, 3] })],
    ['$size of a number', { a: { $size: 2 } }, { a: 3 }, leaf('$size', { a: { $size: 2 } }, { reason: 'type did not match', consideredType: 'int', expectedType: 'array', consideredValue: 3 })],
    ['$all', { a: { $all: [1, 2, 3] } }, { a: [1, 2, 4] }, leaf('$all', { a: { $all: [1, 2, 3] } }, { reason: 'array did not contain all specified values', consideredValue: [1, 2, 4] })],
    ['$all: []', { a: { $all: [] } }, { a: [1, 2, 3] }, leaf('$all', { a: { $all: [] } }, { reason: 'expression always evaluates to false' })],
    [
      '$elemMatch',
      { a: { $elemMatch: { $gt: 0, $lt: 10 } } },
      { a: [10, 11, 12] },
      leaf('$elemMatch', { a: { $elemMatch: { $gt: 0, $lt: 10 } } }, { reason: 'array did not satisfy the child predicate', consideredValue: [10, 11, 12] }),
    ],
    [
      '$elemMatch of a string',
      { a: { $elemMatch: { b: { $gt: 0 }, c: { $lt: 0 } } } },
      { a: 'foo' },
      leaf('$elemMatch', { a: { $elemMatch: { b: { $gt: 0 }, c: { $lt: 0 } } } }, { reason: 'type did not match', consideredType: 'string', expectedType: 'array', consideredValue: 'foo' }),
    ],
    ['$expr numeric result', { $expr: 0 }, { a: 1 }, { operatorName: '$expr', specifiedAs: { $expr: 0 }, reason: 'expression did not match', expressionResult: 0 }],
    [
      'implicit $and of one field',
      { a: { $gt: 0, $lt: 10 } },
      { a: 11 },
      { operatorName: '$and', clausesNotSatisfied: [{ index: 1, details: leaf('$lt', { a: { $lt: 10 } }, { reason: 'comparison failed', consideredValue: 11 }) }] },
    ],
    [
      '$and',
      { $and: [{ a: { $lt: 10 } }, { a: { $gt: 20 } }] },
      { a: 15 },
      {
        operatorName: '$and',
        clausesNotSatisfied: [
          { index: 0, details: leaf('$lt', { a: { $lt: 10 } }, { reason: 'comparison failed', consideredValue: 15 }) },
          { index: 1, details: leaf('$gt', { a: { $gt: 20 } }, { reason: 'comparison failed', consideredValue: 15 }) },
        ],
      },
    ],
    [
      'nested $and reports only the failing one',
      { $and: [{ $and: [{ a: 1 }] }, { $and: [{ b: 1 }] }] },
      { a: 1, b: 2 },
      { operatorName: '$and', clausesNotSatisfied: [{ index: 1, details: { operatorName: '$and', clausesNotSatisfied: [{ index: 0, details: leaf('$eq', { b: 1 }, { reason: 'comparison failed', consideredValue: 2 }) }] } }] },
    ],
    [
      '$nor',
      { $nor: [{ a: { $gt: 10 } }, { b: { $lt: 10 } }] },
      { a: 9, b: 9 },
      { operatorName: '$nor', clausesSatisfied: [{ index: 1, details: leaf('$lt', { b: { $lt: 10 } }, { reason: 'comparison succeeded', consideredValue: 9 }) }] },
    ],
    ['$not', { a: { $not: { $lt: 10 } } }, { a: 9 }, { operatorName: '$not', details: leaf('$lt', { a: { $lt: 10 } }, { reason: 'comparison succeeded', consideredValue: 9 }) }],
    [
      '$not over an implicit $and',
      { a: { $not: { $lt: 20, $gt: 5 } } },
      { a: 10 },
      {
        operatorName: '$not',
        details: {
          operatorName: '$and',
          clausesSatisfied: [
            { index: 0, details: leaf('$lt', { a: { $lt: 20 } }, { reason: 'comparison succeeded', consideredValue: 10 }) },
            { index: 1, details: leaf('$gt', { a: { $gt: 5 } }, { reason: 'comparison succeeded', consideredValue: 10 }) },
          ],
        },
      },
    ],
    [
      '$nor over $not',
      { $and: [{ $or: [{ price: { $lt: 20 } }] }, { $nor: [{ qty: { $gt: 30 } }, { qty: { $not: { $lt: 20 } } }] }] },
      { price: 10, qty: 25 },
      {
        operatorName: '$and',
        clausesNotSatisfied: [
          {
            index: 1,
            details: { operatorName: '$nor', clausesSatisfied: [{ index: 1, details: { operatorName: '$not', details: leaf('$lt', { qty: { $lt: 20 } }, { reason: 'comparison failed', consideredValue: 25 }) } }] },
          },
        ],
      },
    ],
    [
      '$nor over $expr',
      { $nor: [{ $expr: { $eq: ['$a', '$b'] } }] },
      { a: 1, b: 1 },
      { operatorName: '$nor', clausesSatisfied: [{ index: 0, details: { operatorName: '$expr', specifiedAs: { $expr: { $eq: ['$a', '$b'] } }, reason: 'expression did match', expressionResult: true } }] },
    ],
    [
      'considered values past ten are truncated',
      { a: { $lt: 0 } },
      { a: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] },
      leaf('$lt', { a: { $lt: 0 } }, { reason: 'comparison failed', consideredValues: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], consideredValuesTruncated: true }),
    ],
  ];
  it.each(cases)('%s', async (_name, validator, document, expected) => {
    expect((await refusal(validator, document)).details.details).toEqual(expected);
  });

  it('an $expr that cannot be evaluated refuses the document and says why', async () => {
    const error = await refusal({ $expr: { $divide: [10, '$zero'] } }, { zero: 0 });
    expect(error.details.details).toMatchObject({ operatorName: '$expr', specifiedAs: { $expr: { $divide: [10, '$zero'] } }, reason: 'failed to evaluate aggregation expression', details: { code: 'QUERY_ERROR' } });
    expect(error.details.details.details.errmsg).toContain('divide by zero');
  });
});

// doc_validation_error_json_schema_test.cpp, a case per keyword (a property `a` unless said).
describe('$jsonSchema keywords', () => {
  const schema = (a: Record<string, unknown>) => ({ $jsonSchema: { properties: { a } } });
  const onA = (details: unknown[]) => ({ operatorName: '$jsonSchema', schemaRulesNotSatisfied: [{ operatorName: 'properties', propertiesNotSatisfied: [{ propertyName: 'a', details }] }] });
  const top = (rules: unknown[]) => ({ operatorName: '$jsonSchema', schemaRulesNotSatisfied: rules });
  const cases: Case[] = [
    ['type', schema({ type: 'string' }), { a: { b: 1 } }, onA([{ operatorName: 'type', specifiedAs: { type: 'string' }, reason: 'type did not match', consideredValue: { b: 1 }, consideredType: 'object' }])],
    ['type, no array traversal', schema({ type: 'string' }), { a: ['Mihai', 'was', 'here'] }, onA([{ operatorName: 'type', specifiedAs: { type: 'string' }, reason: 'type did not match', consideredValue: ['Mihai', 'was', 'here'], consideredType: 'array' }])],
    ['bsonType', schema({ bsonType: 'double' }), { a: { b: 1 } }, onA([{ operatorName: 'bsonType', specifiedAs: { bsonType: 'double' }, reason: 'type did not match', consideredValue: { b: 1 }, consideredType: 'object' }])],
    ['type over a keyword of another type', schema({ type: 'string', minimum: 5 }), { a: 6 }, onA([{ operatorName: 'type', specifiedAs: { type: 'string' }, reason: 'type did not match', consideredValue: 6, consideredType: 'int' }])],
    ['minimum', schema({ minimum: 1, exclusiveMinimum: true }), { a: 1 }, onA([{ operatorName: 'minimum', specifiedAs: { minimum: 1, exclusiveMinimum: true }, reason: 'comparison failed', consideredValue: 1 }])],
    ['maximum', schema({ maximum: 1, exclusiveMaximum: true }), { a: 1 }, onA([{ operatorName: 'maximum', specifiedAs: { maximum: 1, exclusiveMaximum: true }, reason: 'comparison failed', consideredValue: 1 }])],
    [
      'maximum before minimum',
      schema({ minimum: 10, maximum: -10 }),
      { a: 5 },
      onA([
        { operatorName: 'maximum', specifiedAs: { maximum: -10 }, reason: 'comparison failed', consideredValue: 5 },
        { operatorName: 'minimum', specifiedAs: { minimum: 10 }, reason: 'comparison failed', consideredValue: 5 },
      ]),
    ],
    ['multipleOf', schema({ type: 'number', multipleOf: 2.1 }), { a: 1.1 }, onA([{ operatorName: 'multipleOf', specifiedAs: { multipleOf: 2.1 }, reason: 'considered value is not a multiple of the specified value', consideredValue: 1.1 }])],
    ['minLength', schema({ type: 'string', minLength: 4 }), { a: 'foo' }, onA([{ operatorName: 'minLength', specifiedAs: { minLength: 4 }, reason: 'specified string length was not satisfied', consideredValue: 'foo' }])],
    ['maxLength', schema({ maxLength: 4 }), { a: 'foo, bar, baz' }, onA([{ operatorName: 'maxLength', specifiedAs: { maxLength: 4 }, reason: 'specified string length was not satisfied', consideredValue: 'foo, bar, baz' }])],
    ['pattern', schema({ type: 'string', pattern: '^S' }), { a: 'slow' }, onA([{ operatorName: 'pattern', specifiedAs: { pattern: '^S' }, reason: 'regular expression did not match', consideredValue: 'slow' }])],
    ['enum', schema({ enum: [1, 2, 3] }), { a: 0 }, onA([{ operatorName: 'enum', specifiedAs: { enum: [1, 2, 3] }, reason: 'value was not found in enum', consideredValue: 0 }])],
    ['not', schema({ not: {} }), { a: 'foo' }, onA([{ operatorName: 'not', reason: 'child expression matched' }])],
    [
      'allOf',
      schema({ allOf: [{ minimum: 1 }, { maximum: 3 }] }),
      { a: 4 },
      onA([{ operatorName: 'allOf', schemasNotSatisfied: [{ index: 1, details: [{ operatorName: 'maximum', specifiedAs: { maximum: 3 }, reason: 'comparison failed', consideredValue: 4 }] }] }]),
    ],
    [
      'anyOf',
      schema({ anyOf: [{ type: 'string' }, { maximum: 3 }] }),
      { a: 4 },
      onA([
        {
          operatorName: 'anyOf',
          schemasNotSatisfied: [
            { index: 0, details: [{ operatorName: 'type', specifiedAs: { type: 'string' }, reason: 'type did not match', consideredValue: 4, consideredType: 'int' }] },
            { index: 1, details: [{ operatorName: 'maximum', specifiedAs: { maximum: 3 }, reason: 'comparison failed', consideredValue: 4 }] },
          ],
        },
      ]),
    ],
    ['oneOf, two match', schema({ oneOf: [{ minimum: 1 }, { maximum: 3 }] }), { a: 2 }, onA([{ operatorName: 'oneOf', reason: 'more than one subschema matched', matchingSchemaIndexes: [0, 1] }])],
    [
      'oneOf, none match',
      schema({ oneOf: [{ minimum: 4 }, { maximum: 1 }, { bsonType: 'int' }] }),
      { a: 2.1 },
      onA([
        {
          operatorName: 'oneOf',
          schemasNotSatisfied: [
            { index: 0, details: [{ operatorName: 'minimum', specifiedAs: { minimum: 4 }, reason: 'comparison failed', consideredValue: 2.1 }] },
            { index: 1, details: [{ operatorName: 'maximum', specifiedAs: { maximum: 1 }, reason: 'comparison failed', consideredValue: 2.1 }] },
            { index: 2, details: [{ operatorName: 'bsonType', specifiedAs: { bsonType: 'int' }, reason: 'type did not match', consideredValue: 2.1, consideredType: 'double' }] },
          ],
        },
      ]),
    ],
    [
      'items (component.json, doc_validation_error.js)',
      schema({ type: 'array', items: { type: 'string' } }),
      { a: [1.5, 2.5] },
      onA([{ operatorName: 'items', reason: 'At least one item did not match the sub-schema', itemIndex: 0, details: [{ operatorName: 'type', specifiedAs: { type: 'string' }, reason: 'type did not match', consideredValue: 1.5, consideredType: 'double' }] }]),
    ],
    [
      'items by position',
      schema({ items: [{ type: 'string' }, { minimum: 5 }] }),
      { a: ['x', 3] },
      onA([{ operatorName: 'items', details: [{ itemIndex: 1, details: [{ operatorName: 'minimum', specifiedAs: { minimum: 5 }, reason: 'comparison failed', consideredValue: 3 }] }] }]),
    ],
    ['additionalItems: false', schema({ items: [{}], additionalItems: false }), { a: [1, 2, 3] }, onA([{ operatorName: 'additionalItems', specifiedAs: { additionalItems: false }, reason: 'found additional items', additionalItems: [2, 3] }])],
    [
      'additionalItems: a schema',
      schema({ items: [{}], additionalItems: { type: 'string' } }),
      { a: [1, 'x', 3] },
      onA([{ operatorName: 'additionalItems', reason: 'At least one additional item did not match the sub-schema', itemIndex: 2, details: [{ operatorName: 'type', specifiedAs: { type: 'string' }, reason: 'type did not match', consideredValue: 3, consideredType: 'int' }] }]),
    ],
    ['minItems', schema({ minItems: 2 }), { a: [1] }, onA([{ operatorName: 'minItems', specifiedAs: { minItems: 2 }, reason: 'array did not match specified length', consideredValue: [1], numberOfItems: 1 }])],
    ['maxItems', schema({ maxItems: 1 }), { a: [1, 2] }, onA([{ operatorName: 'maxItems', specifiedAs: { maxItems: 1 }, reason: 'array did not match specified length', consideredValue: [1, 2], numberOfItems: 2 }])],
    ['required', { $jsonSchema: { required: ['a', 'b'] } }, { a: 1 }, top([{ operatorName: 'required', specifiedAs: { required: ['a', 'b'] }, missingProperties: ['b'] }])],
    ['minProperties', { $jsonSchema: { minProperties: 3 } }, { a: 1 }, top([{ operatorName: 'minProperties', specifiedAs: { minProperties: 3 }, reason: 'specified number of properties was not satisfied', numberOfProperties: 2 }])],
    ['maxProperties', { $jsonSchema: { maxProperties: 1 } }, { a: 1 }, top([{ operatorName: 'maxProperties', specifiedAs: { maxProperties: 1 }, reason: 'specified number of properties was not satisfied', numberOfProperties: 2 }])],
    [
      'additionalProperties: false',
      { $jsonSchema: { properties: { _id: {}, a: {} }, additionalProperties: false } },
      { a: 1, b: 2, c: 3 },
      top([{ operatorName: 'additionalProperties', specifiedAs: { additionalProperties: false }, additionalProperties: ['b', 'c'] }]),
    ],
    [
      'additionalProperties: a schema',
      { $jsonSchema: { properties: { _id: {} }, additionalProperties: { type: 'string' } } },
      { a: 'x', b: 2 },
      top([{ operatorName: 'additionalProperties', reason: 'at least one additional property did not match the subschema', failingProperty: 'b', details: [{ operatorName: 'type', specifiedAs: { type: 'string' }, reason: 'type did not match', consideredValue: 2, consideredType: 'int' }] }]),
    ],
    [
      'patternProperties',
      { $jsonSchema: { patternProperties: { '^s_': { type: 'string' } } } },
      { s_a: 'x', s_b: 2 },
      top([{ operatorName: 'patternProperties', details: [{ propertyName: 's_b', regexMatched: '^s_', details: [{ operatorName: 'type', specifiedAs: { type: 'string' }, reason: 'type did not match', consideredValue: 2, consideredType: 'int' }] }] }]),
    ],
    [
      'dependencies',
      { $jsonSchema: { dependencies: { a: ['b', 'c'], d: { required: ['e'] } } } },
      { a: 1, c: 1, d: 1 },
      top([
        {
          operatorName: 'dependencies',
          failingDependencies: [
            { conditionalProperty: 'a', missingProperties: ['b'] },
            { conditionalProperty: 'd', details: [{ operatorName: 'required', specifiedAs: { required: ['e'] }, missingProperties: ['e'] }] },
          ],
        },
      ]),
    ],
    ['a top-level type without object', { $jsonSchema: { type: 'number' } }, { a: 1 }, { operatorName: '$jsonSchema', specifiedAs: { $jsonSchema: { type: 'number' } }, reason: 'expression always evaluates to false' }],
    ['$jsonSchema under $nor', { $nor: [{ $jsonSchema: { minimum: 1 } }] }, { a: 2 }, { operatorName: '$nor', clausesSatisfied: [{ index: 0, details: { operatorName: '$jsonSchema', reason: 'schema matched' } }] }],
  ];
  it.each(cases)('%s', async (_name, validator, document, expected) => {
    expect((await refusal(validator, document)).details.details).toEqual(expected);
  });
});

describe('where the explanation appears', () => {
  const rules = { $jsonSchema: { required: ['qty'], properties: { qty: { bsonType: 'int', minimum: 0 } } } };
  const belowZero = {
    operatorName: '$jsonSchema',
    schemaRulesNotSatisfied: [{ operatorName: 'properties', propertiesNotSatisfied: [{ propertyName: 'qty', details: [{ operatorName: 'minimum', specifiedAs: { minimum: 0 }, reason: 'comparison failed', consideredValue: -1 }] }] }],
  };
  const missing = { operatorName: '$jsonSchema', schemaRulesNotSatisfied: [{ operatorName: 'required', specifiedAs: { required: ['qty'] }, missingProperties: ['qty'] }] };
  async function seeded(): Promise<string> {
    const c = fresh('w');
    expect((await mql('createCollection', { collection: c, validator: rules })).status).toBe(200);
    expect((await mql('insertMany', { collection: c, documents: [{ _id: 1, qty: 5 }, { _id: 2, qty: 7 }] })).status).toBe(201);
    return c;
  }

  it('updates, replacements, upserts, findOneAnd*, $merge and $out', async () => {
    const c = await seeded();
    const writes: Array<[string, Record<string, unknown>, unknown, unknown]> = [
      ['updateOne', { filter: { _id: 1 }, update: { $set: { qty: -1 } } }, 1, belowZero],
      ['updateMany', { filter: { _id: 2 }, update: { $set: { qty: -1 } } }, 2, belowZero],
      ['replaceOne', { filter: { _id: 2 }, replacement: { name: 'x' } }, 2, missing],
      ['updateOne', { filter: { _id: 9 }, update: { $set: { qty: -1 } }, upsert: true }, 9, belowZero],
      ['findOneAndUpdate', { filter: { _id: 1 }, update: { $unset: { qty: '' } } }, 1, missing],
      ['findOneAndReplace', { filter: { _id: 1 }, replacement: { qty: -1 } }, 1, belowZero],
    ];
    for (const [op, body, id, details] of writes) {
      const res = await mql(op, { collection: c, ...body });
      expect(res.status, `${op}: ${res.text}`).toBe(400);
      expect(res.body.error.details, op).toEqual({ collection: c, failingDocumentId: id, details });
    }
    const src = await file.seed([{ _id: 4, qty: -1 }], 'src');
    for (const stage of [{ $merge: { into: c } }, { $out: c }]) {
      const res = await mql('aggregate', { collection: src, pipeline: [stage] });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.details).toMatchObject({ failingDocumentId: 4, details: belowZero });
    }
  });

  it("bulkWrite: each write error carries its document's explanation", async () => {
    const c = await seeded();
    const res = await mql('bulkWrite', { collection: c, ordered: false, operations: [{ insertOne: { document: { _id: 3 } } }, { updateOne: { filter: { _id: 1 }, update: { $set: { qty: -1 } } } }] });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.details.writeErrors).toEqual([
      { index: 0, code: 'VALIDATION_FAILED', message: 'Document failed validation', details: { collection: c, failingDocumentId: 3, details: missing } },
      { index: 1, code: 'VALIDATION_FAILED', message: 'Document failed validation', details: { collection: c, failingDocumentId: 1, details: belowZero } },
    ]);
  });
});

describe('bypassDocumentValidation', () => {
  const rules = { a: { $exists: true } };
  async function guarded(): Promise<string> {
    const c = fresh('b');
    expect((await mql('createCollection', { collection: c, validator: rules })).status).toBe(200);
    expect((await mql('insertOne', { collection: c, document: { _id: 1, a: 1 } })).status).toBe(201);
    return c;
  }
  // Each write breaks the rules: refused without the option (or with false), done with it.
  const writes: Array<[string, (c: string) => Record<string, unknown>, (c: string) => Promise<void>]> = [
    ['insertOne', (c) => ({ collection: c, document: { _id: 2 } }), async (c) => expect(await file.all(c)).toContainEqual({ _id: 2 })],
    ['insertMany', (c) => ({ collection: c, documents: [{ _id: 2 }, { _id: 3 }] }), async (c) => expect(await file.all(c)).toHaveLength(3)],
    ['updateOne', (c) => ({ collection: c, filter: { _id: 1 }, update: { $unset: { a: '' } } }), async (c) => expect(await file.all(c)).toEqual([{ _id: 1 }])],
    ['updateOne', (c) => ({ collection: c, filter: { _id: 5 }, update: { $set: { b: 1 } }, upsert: true }), async (c) => expect(await file.all(c)).toContainEqual({ _id: 5, b: 1 })],
    ['updateMany', (c) => ({ collection: c, filter: {}, update: { $unset: { a: '' } } }), async (c) => expect(await file.all(c)).toEqual([{ _id: 1 }])],
    ['replaceOne', (c) => ({ collection: c, filter: { _id: 1 }, replacement: { b: 2 } }), async (c) => expect(await file.all(c)).toEqual([{ _id: 1, b: 2 }])],
    ['replaceOne', (c) => ({ collection: c, filter: { _id: 6 }, replacement: { b: 2 }, upsert: true }), async (c) => expect(await file.all(c)).toContainEqual({ _id: 6, b: 2 })],
    ['findOneAndUpdate', (c) => ({ collection: c, filter: { _id: 1 }, update: [{ $set: { a: '$$REMOVE' } }] }), async (c) => expect(await file.all(c)).toEqual([{ _id: 1 }])],
    ['findOneAndReplace', (c) => ({ collection: c, filter: { _id: 1 }, replacement: {} }), async (c) => expect(await file.all(c)).toEqual([{ _id: 1 }])],
    ['bulkWrite', (c) => ({ collection: c, operations: [{ insertOne: { document: { _id: 2 } } }, { updateOne: { filter: { _id: 1 }, update: { $unset: { a: '' } } } }] }), async (c) => expect(await file.all(c)).toEqual([{ _id: 1 }, { _id: 2 }])],
  ];

  it.each(writes)('%s', async (op, body, check) => {
    const c = await guarded();
    for (const off of [{}, { bypassDocumentValidation: false }]) {
      const refused = await mql(op, { ...body(c), ...off });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error.code).toBe('VALIDATION_FAILED');
      expect(JSON.stringify(refused.body.error)).toContain('Document failed validation');
    }
    expect(await file.all(c)).toEqual([{ _id: 1, a: 1 }]);
    const done = await mql(op, { ...body(c), bypassDocumentValidation: true });
    expect(done.status, done.text).toBeLessThan(300);
    await check(c);
    // The rules stay: the next write without the option is held to them.
    const after = await mql('insertOne', { collection: c, document: { _id: 99 } });
    expect(after.status, after.text).toBe(400);
  });

  it('aggregate: $out and $merge into a validated collection', async () => {
    for (const stage of [(c: string) => ({ $out: c }), (c: string) => ({ $merge: { into: c } })]) {
      const c = await guarded();
      const src = await file.seed([{ _id: 7, b: 1 }], 'src');
      const refused = await mql('aggregate', { collection: src, pipeline: [stage(c)], bypassDocumentValidation: false });
      expect(refused.status, refused.text).toBe(400);
      expect(refused.body.error.message).toBe('Document failed validation');
      const done = await mql('aggregate', { collection: src, pipeline: [stage(c)], bypassDocumentValidation: true });
      expect(done.status, done.text).toBe(200);
      expect(await file.all(c)).toContainEqual({ _id: 7, b: 1 });
      // $out keeps the rules with the collection.
      expect((await mql('insertOne', { collection: c, document: { _id: 8 } })).status).toBe(400);
    }
  });

  it('a number is read as a boolean, as MongoDB does', async () => {
    const c = await guarded();
    expect((await mql('insertOne', { collection: c, document: { _id: 2 }, bypassDocumentValidation: 0 })).status).toBe(400);
    expect((await mql('insertOne', { collection: c, document: { _id: 2 }, bypassDocumentValidation: 1 })).status).toBe(201);
  });

  it('refuses any other type with MongoDB\'s message, writing nothing', async () => {
    const c = await guarded();
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['insertOne', { document: { _id: 2, a: 1 }, bypassDocumentValidation: 'yes' }, "BSON field 'insert.bypassDocumentValidation' is the wrong type 'string', expected types '[bool, long, int, decimal, double]'"],
      ['insertMany', { documents: [{ _id: 2, a: 1 }], bypassDocumentValidation: null }, "BSON field 'insert.bypassDocumentValidation' is the wrong type 'null'"],
      ['updateOne', { filter: {}, update: { $set: { a: 2 } }, bypassDocumentValidation: {} }, "BSON field 'update.bypassDocumentValidation' is the wrong type 'object'"],
      ['updateMany', { filter: {}, update: { $set: { a: 2 } }, bypassDocumentValidation: 'true' }, "BSON field 'update.bypassDocumentValidation' is the wrong type 'string'"],
      ['replaceOne', { filter: {}, replacement: { a: 2 }, bypassDocumentValidation: [] }, "BSON field 'update.bypassDocumentValidation' is the wrong type 'array'"],
      ['findOneAndUpdate', { filter: {}, update: { $set: { a: 2 } }, bypassDocumentValidation: 'x' }, "BSON field 'findAndModify.bypassDocumentValidation' is the wrong type 'string'"],
      ['findOneAndReplace', { filter: {}, replacement: { a: 2 }, bypassDocumentValidation: 'x' }, "BSON field 'findAndModify.bypassDocumentValidation' is the wrong type 'string'"],
      ['bulkWrite', { operations: [{ insertOne: { document: { _id: 2, a: 1 } } }], bypassDocumentValidation: 'x' }, "BSON field 'bulkWrite.bypassDocumentValidation' is the wrong type 'string'"],
    ];
    for (const [op, body, message] of cases) await file.refuses(op, { collection: c, ...body }, 400, 'VALIDATION_FAILED', message);
    const src = await file.seed([{ _id: 3, a: 1 }], 'src');
    await file.refuses('aggregate', { collection: src, pipeline: [{ $merge: { into: c } }], bypassDocumentValidation: 'x' }, 400, 'VALIDATION_FAILED', "BSON field 'aggregate.bypassDocumentValidation' is the wrong type 'string'");
    expect(await file.all(c)).toEqual([{ _id: 1, a: 1 }]);
  });
});

describe('validationAction warn and errorAndLog: the log line carries the explanation', () => {
  const dir = tempDir('validation-log');
  const lines: Array<Record<string, any>> = [];
  let close = async (): Promise<void> => undefined;
  afterAll(async () => {
    await close();
    dir.remove();
  });

  it('warn writes and logs; errorAndLog refuses and logs; listCollections shows the action', async () => {
    const app = await buildApp(defaultConfig({ port: 0, dataDir: dir.path }), { logStream: { write: (line) => lines.push(JSON.parse(line)) } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    close = () => app.close();
    const address = app.server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP port');
    const url = `http://127.0.0.1:${address.port}`;
    const { apiKey, tenantId } = await signup(url);
    const call = (op: string, json: unknown) => http(url, 'POST', `/api/mql/${op}`, { apiKey, json });
    const explained = { operatorName: '$exists', specifiedAs: { a: { $exists: true } }, reason: 'path does not exist' };

    expect((await call('createCollection', { collection: 'warned', validator: { a: { $exists: true } }, validationAction: 'warn' })).status).toBe(200);
    expect((await call('insertOne', { collection: 'warned', document: { _id: 1 } })).status).toBe(201);
    expect((await call('createCollection', { collection: 'logged', validator: { a: { $exists: true } }, validationAction: 'errorAndLog' })).status).toBe(200);
    const refused = await call('insertOne', { collection: 'logged', document: { _id: 2 } });
    expect(refused.status, refused.text).toBe(400);
    expect(refused.body.error.details).toEqual({ collection: 'logged', failingDocumentId: 2, details: explained });
    expect((await call('find', { collection: 'logged' })).body.documents).toEqual([]);

    const logged = lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('document failed validation'));
    expect(logged).toMatchObject([
      { level: 40, tenantId, collection: 'warned', _id: 1, errInfo: { failingDocumentId: 1, details: explained }, msg: 'document failed validation (validationAction: warn), written' },
      { level: 40, tenantId, collection: 'logged', _id: 2, errInfo: { failingDocumentId: 2, details: explained }, msg: 'document failed validation (validationAction: errorAndLog), refused' },
    ]);
    const listed = (await call('listCollections', {})).body.collections.find((c: { name: string }) => c.name === 'logged');
    expect(listed.options).toEqual({ validator: { a: { $exists: true } }, validationLevel: 'strict', validationAction: 'errorAndLog' });
  });
});
