/**
 * $jsonSchema (manual: Query Operators > Evaluation, MongoDB 3.6+): `{$jsonSchema: <schema>}`
 * matches the documents valid against a JSON Schema (draft 4 as MongoDB implements it), at the
 * top level of a filter, inside `$and`/`$or`/`$nor`, and in `$elemMatch`'s document form (where
 * the schema tests each element that is a document).
 *
 * The keywords and their meaning, as MongoDB's JSONSchemaParser gives them:
 * - `bsonType` (BSON type names and "number", as `$type` knows them) or `type` (JSON Schema's:
 *   object, array, string, number, boolean, null; "integer" is refused): the value's own type;
 *   an array is "array", never its elements. Numbers are typed by value (values.ts).
 * - Restrictions that test one type of value and let every other value through: numbers
 *   (`minimum`, `maximum` with draft 4's boolean `exclusiveMinimum`/`exclusiveMaximum`,
 *   `multipleOf`), strings (`minLength`/`maxLength` in code points, `pattern`: PCRE as `$regex`
 *   reads it, unanchored), arrays (`minItems`, `maxItems`, `uniqueItems`, `items` as one schema
 *   or one per position, `additionalItems` after positional items) and objects (`properties`,
 *   `required`, `patternProperties`, `additionalProperties`, `minProperties`, `maxProperties`,
 *   `dependencies` in schema and property-list forms).
 * - `allOf`, `anyOf`, `oneOf`, `not`, and `enum` (equality with objects compared whatever their
 *   field order, numbers by value; `uniqueItems` compares the same way: same-value.ts).
 * - `title` and `description` are checked to be strings and otherwise ignored.
 * Unlike a query path, nothing traverses arrays: `properties: {a: {bsonType: "int"}}` refuses
 * `a: [1]`. At the top level the value is the whole document, `_id` included (`enum`,
 * `minProperties`, `additionalProperties: false` see it).
 *
 * `$ref`, `$schema`, `default`, `definitions`, `format` and `id` are refused as in MongoDB, and so
 * are `encrypt`/`encryptMetadata` (no BinData here). The operator reads every field, so it never
 * uses an index; the other conditions of the filter still may.
 */

import type { JsonSchemaNode } from '../filter-ast.js';
import type { JsonSchemaOperator } from '../operator.js';
import { parseJsonSchema } from './json-schema-parse.js';

export const jsonSchemaOperator: JsonSchemaOperator = {
  kind: 'jsonSchema',
  parse: (operand, ctx): JsonSchemaNode => ({ kind: 'jsonSchema', schema: parseJsonSchema(operand, ctx.depth) }),
};
