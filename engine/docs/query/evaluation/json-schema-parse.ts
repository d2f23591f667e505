/**
 * The parser of `$jsonSchema` schemas (json-schema.ts says what they match): checks every keyword
 * as MongoDB's JSONSchemaParser does, in its order and with its messages, and returns the schema
 * as a JsonSchema (filter-ast.ts). A schema is checked whole, even where a keyword has no effect
 * (a `minimum` at the top level), so a bad schema is refused whatever the documents.
 */

import { DOCS_LIMITS } from '../../limits.js';
import { bsonTypeOf, isPlainObject, type Doc } from '../../values.js';
import { typeAliasOf } from '../element/type.js';
import type { BsonTypeAlias, JsonSchema, SchemaBound } from '../filter-ast.js';
import { nonNegativeInteger, queryError } from '../operator.js';
import { compilePcre } from './pcre.js';
import { sameValueKey } from './same-value.js';

const OPERATOR = '$jsonSchema';

function invalid(message: string): never {
  queryError(OPERATOR, message);
}

// The keywords MongoDB implements (draft 4 plus `bsonType`), and those it names and refuses.
const KEYWORDS = new Set([
  'additionalItems', 'additionalProperties', 'allOf', 'anyOf', 'bsonType', 'dependencies', 'description', 'enum',
  'exclusiveMaximum', 'exclusiveMinimum', 'items', 'maxItems', 'maxLength', 'maxProperties', 'maximum', 'minItems',
  'minLength', 'minProperties', 'minimum', 'multipleOf', 'not', 'oneOf', 'pattern', 'patternProperties', 'properties',
  'required', 'title', 'type', 'uniqueItems',
]);
const UNSUPPORTED = new Set(['$ref', '$schema', 'default', 'definitions', 'format', 'id']);
// MongoDB's client-side field level encryption keywords: they test BinData subtypes, which this
// model cannot hold, so they are refused rather than accepted to match nothing.
const ENCRYPTION = new Set(['encrypt', 'encryptMetadata']);

// JSON Schema's type names, as MongoDB maps them onto BSON types ("number" is every numeric type).
const JSON_TYPES: ReadonlyMap<string, BsonTypeAlias> = new Map<string, BsonTypeAlias>([
  ['array', 'array'],
  ['boolean', 'bool'],
  ['null', 'null'],
  ['number', 'number'],
  ['object', 'object'],
  ['string', 'string'],
]);
// The one JSON Schema type MongoDB refuses by name (for `bsonType` too).
const INTEGER = 'integer';

/** Where a schema applies: `top` for the document itself (and the subschemas read at its level). */
type Level = 'top' | 'nested';

/** A typed view of a schema object: each keyword's value, or undefined when the schema lacks it. */
class Keywords {
  readonly #schema: Doc;

  constructor(schema: Doc) {
    this.#schema = schema;
  }

  has(name: string): boolean {
    return Object.hasOwn(this.#schema, name);
  }

  get(name: string): unknown {
    return this.has(name) ? this.#schema[name] : undefined;
  }
}

// MongoDB's messages name a value's BSON type ("found an element of type string").
const typeName = (v: unknown): string => bsonTypeOf(v);

function parseTypes(keyword: 'type' | 'bsonType', value: unknown, lookup: (name: string) => BsonTypeAlias | undefined): BsonTypeAlias[] {
  if (typeof value !== 'string' && !Array.isArray(value)) invalid(`$jsonSchema keyword '${keyword}' must be either a string or an array of strings`);
  const names = new Set<string>();
  for (const name of typeof value === 'string' ? [value] : (value as unknown[])) {
    if (typeof name !== 'string') invalid(`$jsonSchema keyword '${keyword}' array elements must be strings`);
    if (name === INTEGER) invalid(`$jsonSchema type '${INTEGER}' is not currently supported.`);
    if (names.has(name)) invalid(`$jsonSchema keyword '${keyword}' has duplicate value: ${name}`);
    names.add(name);
  }
  // MongoDB resolves the names from an ordered set, so the first unknown one in sorted order is named.
  const types = [...names].sort().map((name) => lookup(name) ?? invalid(`Unknown type name alias: ${name}`));
  if (types.length === 0) invalid(`$jsonSchema keyword '${keyword}' must name at least one type`);
  return types;
}

function parseBound(kw: Keywords, name: 'minimum' | 'maximum', exclusiveName: 'exclusiveMinimum' | 'exclusiveMaximum'): SchemaBound | undefined {
  if (!kw.has(name)) {
    if (kw.has(exclusiveName)) invalid(`$jsonSchema keyword '${name}' must be a present if ${exclusiveName} is present`);
    return undefined;
  }
  let exclusive = false;
  if (kw.has(exclusiveName)) {
    const flag = kw.get(exclusiveName);
    if (typeof flag !== 'boolean') invalid(`$jsonSchema keyword '${exclusiveName}' must be a boolean`);
    exclusive = flag;
  }
  const value = kw.get(name);
  if (typeof value !== 'number') invalid(`$jsonSchema keyword '${name}' must be a number`);
  return { value, exclusive };
}

function parseMultipleOf(value: unknown, level: Level): number {
  if (typeof value !== 'number') invalid(`$jsonSchema keyword 'multipleOf' must be a number`);
  if (value <= 0) invalid(`$jsonSchema keyword 'multipleOf' must have a positive value`);
  // MongoDB checks the divisor when it builds the test, which it skips at the top level.
  if (level === 'nested' && Number.isNaN(value)) invalid('divisor cannot be NaN');
  if (level === 'nested' && !Number.isFinite(value)) invalid('divisor cannot be infinite');
  return value;
}

function parseScalarKeywords(kw: Keywords, level: Level, out: Record<string, unknown>): void {
  if (kw.has('pattern')) {
    const pattern = kw.get('pattern');
    if (typeof pattern !== 'string') invalid(`$jsonSchema keyword 'pattern' must be a string`);
    if (level === 'nested') compilePcre(pattern, ''); // an invalid pattern fails here, as $regex's does
    out.pattern = pattern;
  }
  if (kw.has('maxLength')) out.maxLength = nonNegativeInteger(kw.get('maxLength'), 'maxLength', OPERATOR);
  if (kw.has('minLength')) out.minLength = nonNegativeInteger(kw.get('minLength'), 'minLength', OPERATOR);
  if (kw.has('multipleOf')) out.multipleOf = parseMultipleOf(kw.get('multipleOf'), level);
  const maximum = parseBound(kw, 'maximum', 'exclusiveMaximum');
  if (maximum !== undefined) out.maximum = maximum;
  const minimum = parseBound(kw, 'minimum', 'exclusiveMinimum');
  if (minimum !== undefined) out.minimum = minimum;
}

function parseArrayKeywords(kw: Keywords, depth: number, out: Record<string, unknown>): void {
  if (kw.has('minItems')) out.minItems = nonNegativeInteger(kw.get('minItems'), 'minItems', OPERATOR);
  if (kw.has('maxItems')) out.maxItems = nonNegativeInteger(kw.get('maxItems'), 'maxItems', OPERATOR);
  if (kw.has('uniqueItems')) {
    const unique = kw.get('uniqueItems');
    if (typeof unique !== 'boolean') invalid(`$jsonSchema keyword 'uniqueItems' must be a boolean`);
    out.uniqueItems = unique;
  }
  if (kw.has('items')) {
    const items = kw.get('items');
    if (Array.isArray(items)) {
      out.items = items.map((item) => {
        if (!isPlainObject(item)) invalid(`$jsonSchema keyword 'items' requires that each element of the array is an object, but found a ${typeName(item)}`);
        return parseSchema(item, 'nested', depth + 1);
      });
    } else if (isPlainObject(items)) {
      out.items = parseSchema(items, 'nested', depth + 1);
    } else {
      invalid(`$jsonSchema keyword 'items' must be an array or an object, not ${typeName(items)}`);
    }
  }
  if (kw.has('additionalItems')) {
    const additional = kw.get('additionalItems');
    if (typeof additional === 'boolean') out.additionalItems = additional;
    else if (isPlainObject(additional)) out.additionalItems = parseSchema(additional, 'nested', depth + 1);
    else invalid(`$jsonSchema keyword 'additionalItems' must be either an object or a boolean, but got a ${typeName(additional)}`);
  }
}

function parseRequired(value: unknown): string[] {
  if (!Array.isArray(value)) invalid(`$jsonSchema keyword 'required' must be an array, but found an element of type ${typeName(value)}`);
  for (const name of value) {
    if (typeof name !== 'string') invalid(`$jsonSchema keyword 'required' must be an array of strings, but found an element of type: ${typeName(name)}`);
  }
  if (value.length === 0) invalid(`$jsonSchema keyword 'required' cannot be an empty array`);
  const names = value as string[];
  if (new Set(names).size !== names.length) invalid(`$jsonSchema keyword 'required' array cannot contain duplicate values`);
  return names;
}

function parseProperties(value: unknown, depth: number): [string, JsonSchema][] {
  if (!isPlainObject(value)) invalid(`$jsonSchema keyword 'properties' must be an object`);
  return Object.keys(value).map((name) => {
    const nested = value[name];
    if (!isPlainObject(nested)) invalid(`Nested schema for $jsonSchema property '${name}' must be an object`);
    return [name, parseSchema(nested, 'nested', depth + 1)];
  });
}

function parsePatternProperties(value: unknown, depth: number): [string, JsonSchema][] {
  if (!isPlainObject(value)) invalid(`$jsonSchema keyword 'patternProperties' must be an object`);
  return Object.keys(value).map((pattern) => {
    const nested = value[pattern];
    if (!isPlainObject(nested)) invalid(`$jsonSchema keyword 'patternProperties' has property '${pattern}' which is not an object`);
    return [pattern, parseSchema(nested, 'nested', depth + 1)];
  });
}

// MongoDB compiles the patterns of patternProperties after the schemas, with its own message.
function checkPropertyPattern(pattern: string): void {
  try {
    compilePcre(pattern, '');
  } catch (err) {
    const reason = err instanceof Error ? err.message.replace(/^Regular expression is invalid: /, '') : String(err);
    invalid(`Invalid regular expression: ${reason}`);
  }
}

function parseDependency(name: string, value: unknown, level: Level, depth: number): JsonSchema | string[] {
  // A schema dependency applies to the object itself, so it is read at the object's level.
  if (isPlainObject(value)) return parseSchema(value, level, depth + 1);
  if (!Array.isArray(value)) invalid(`property '${name}' in $jsonSchema keyword 'dependencies' must be either an object or an array`);
  if (value.length === 0) invalid(`property '${name}' in $jsonSchema keyword 'dependencies' cannot be an empty array`);
  const names = new Set<string>();
  for (const member of value) {
    if (typeof member !== 'string') invalid(`array '${name}' in $jsonSchema keyword 'dependencies' can only contain strings, but found element of type: ${typeName(member)}`);
    if (names.has(member)) invalid(`array '${name}' in $jsonSchema keyword 'dependencies' contains duplicate element: ${member}`);
    names.add(member);
  }
  return [...names];
}

function parseObjectKeywords(kw: Keywords, level: Level, depth: number, out: Record<string, unknown>): void {
  if (kw.has('required')) out.required = parseRequired(kw.get('required'));
  if (kw.has('properties')) out.properties = parseProperties(kw.get('properties'), depth);
  if (kw.has('patternProperties') || kw.has('additionalProperties')) {
    let patterns: [string, JsonSchema][] = [];
    if (kw.has('patternProperties')) out.patternProperties = patterns = parsePatternProperties(kw.get('patternProperties'), depth);
    if (kw.has('additionalProperties')) {
      const additional = kw.get('additionalProperties');
      if (typeof additional === 'boolean') out.additionalProperties = additional;
      else if (isPlainObject(additional)) out.additionalProperties = parseSchema(additional, 'nested', depth + 1);
      else invalid(`$jsonSchema keyword 'additionalProperties' must be an object or a boolean`);
    }
    for (const [pattern] of patterns) checkPropertyPattern(pattern);
  }
  if (kw.has('minProperties')) out.minProperties = nonNegativeInteger(kw.get('minProperties'), 'minProperties', OPERATOR);
  if (kw.has('maxProperties')) out.maxProperties = nonNegativeInteger(kw.get('maxProperties'), 'maxProperties', OPERATOR);
  if (kw.has('dependencies')) {
    const dependencies = kw.get('dependencies');
    if (!isPlainObject(dependencies)) invalid(`$jsonSchema keyword 'dependencies' must be an object`);
    out.dependencies = Object.keys(dependencies).map((name) => [name, parseDependency(name, dependencies[name], level, depth)]);
  }
}

function parseSchemaList(keyword: 'allOf' | 'anyOf' | 'oneOf', value: unknown, level: Level, depth: number): JsonSchema[] {
  if (!Array.isArray(value)) invalid(`$jsonSchema keyword '${keyword}' must be an array`);
  if (value.length === 0) invalid(`$jsonSchema keyword '${keyword}' must be a non-empty array`);
  return value.map((member) => {
    if (!isPlainObject(member)) invalid(`$jsonSchema keyword '${keyword}' must be an array of objects, but found an element of type ${typeName(member)}`);
    return parseSchema(member, level, depth + 1);
  });
}

function parseEnum(value: unknown): unknown[] {
  if (!Array.isArray(value)) invalid(`$jsonSchema keyword 'enum' must be an array, but found an element of type ${typeName(value)}`);
  if (value.length === 0) invalid(`$jsonSchema keyword 'enum' cannot be an empty array`);
  // Duplicates as MongoDB tells them: objects equal whatever their field order, numbers by value.
  const seen = new Set<string>();
  for (const member of value) {
    const key = sameValueKey(member);
    if (seen.has(key)) invalid(`$jsonSchema keyword 'enum' array cannot contain duplicate values.`);
    seen.add(key);
  }
  return value;
}

// The logical keywords read their subschemas at the level of the schema that holds them.
function parseLogicalKeywords(kw: Keywords, level: Level, depth: number, out: Record<string, unknown>): void {
  if (kw.has('allOf')) out.allOf = parseSchemaList('allOf', kw.get('allOf'), level, depth);
  if (kw.has('anyOf')) out.anyOf = parseSchemaList('anyOf', kw.get('anyOf'), level, depth);
  if (kw.has('oneOf')) out.oneOf = parseSchemaList('oneOf', kw.get('oneOf'), level, depth);
  if (kw.has('not')) {
    const not = kw.get('not');
    if (!isPlainObject(not)) invalid(`$jsonSchema keyword 'not' must be an object, but found an element of type ${typeName(not)}`);
    out.not = parseSchema(not, level, depth + 1);
  }
  if (kw.has('enum')) out.enum = parseEnum(kw.get('enum'));
}

function checkKeywordNames(schema: Doc): void {
  for (const key of Object.keys(schema)) {
    if (KEYWORDS.has(key)) continue;
    if (UNSUPPORTED.has(key)) invalid(`$jsonSchema keyword '${key}' is not currently supported`);
    if (ENCRYPTION.has(key)) invalid(`$jsonSchema keyword '${key}' is not supported: encrypted fields need BinData, which tetradb does not have`);
    invalid(`Unknown $jsonSchema keyword: ${key}`);
  }
}

function parseSchema(schema: Doc, level: Level, depth: number): JsonSchema {
  if (depth > DOCS_LIMITS.maxFilterDepth) {
    queryError(OPERATOR, `filter exceeds the maximum nesting depth of ${DOCS_LIMITS.maxFilterDepth}`, { limit: DOCS_LIMITS.maxFilterDepth });
  }
  checkKeywordNames(schema);
  const kw = new Keywords(schema);
  for (const name of ['description', 'title']) {
    if (kw.has(name) && typeof kw.get(name) !== 'string') invalid(`$jsonSchema keyword '${name}' must be of type string`);
  }
  const out: Record<string, unknown> = {};
  if (kw.has('type') && kw.has('bsonType')) invalid(`Cannot specify both $jsonSchema keywords 'type' and 'bsonType'`);
  if (kw.has('type')) out.types = parseTypes('type', kw.get('type'), (name) => JSON_TYPES.get(name));
  if (kw.has('bsonType')) out.types = parseTypes('bsonType', kw.get('bsonType'), typeAliasOf);
  parseScalarKeywords(kw, level, out);
  parseArrayKeywords(kw, depth, out);
  parseObjectKeywords(kw, level, depth, out);
  parseLogicalKeywords(kw, level, depth, out);
  return out as JsonSchema;
}

/**
 * The schema of `{$jsonSchema: operand}`, checked whole; `depth` is the filter nesting it sits at.
 * @throws QUERY_ERROR with MongoDB's message for anything malformed or unsupported
 */
export function parseJsonSchema(operand: unknown, depth: number): JsonSchema {
  if (!isPlainObject(operand)) invalid('$jsonSchema must be an object');
  return parseSchema(operand, 'top', depth);
}
