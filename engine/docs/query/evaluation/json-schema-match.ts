/**
 * The test a parsed `$jsonSchema` schema (filter-ast.ts's JsonSchema) makes of one value: the
 * document itself at the top, a field's value or an array element below. Each keyword that is
 * about one type (json-schema.ts lists them) tests only values of that type and lets every other
 * value through, as JSON Schema says; `type`/`bsonType` is what excludes the others.
 */

import { bsonTypeOf, getOwn, isPlainObject, MISSING, type Doc } from '../../values.js';
import { rangeSingle } from '../comparison/range.js';
import { hasTypeIn } from '../element/type.js';
import type { JsonSchema, SchemaBound } from '../filter-ast.js';
import { isMultipleOf } from './decimal-multiple.js';
import { compilePcre } from './pcre.js';
import { sameValueKey } from './same-value.js';

type Test = (value: unknown) => boolean;

/** The four kinds of value that restriction keywords are about. */
type Kind = 'number' | 'string' | 'array' | 'object';

function kindOf(v: unknown): Kind | undefined {
  switch (bsonTypeOf(v)) {
    case 'int':
    case 'long':
    case 'double':
      return 'number';
    case 'string':
      return 'string';
    case 'array':
      return 'array';
    case 'object':
      return 'object';
    default:
      return undefined;
  }
}

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

// A pattern is compiled on its first string: at the top level a schema only ever meets the
// document, and MongoDB does not check a top-level pattern, so one that does not compile is fine.
function patternTest(pattern: string): Test {
  let re: RegExp | undefined;
  return (v) => (re ??= compilePcre(pattern, '')).test(v as string);
}

function boundTest(bound: SchemaBound, lower: boolean): Test {
  const name = lower ? (bound.exclusive ? '$gt' : '$gte') : bound.exclusive ? '$lt' : '$lte';
  return rangeSingle(name, bound.value);
}

function numberTests(schema: JsonSchema): Test[] {
  const tests: Test[] = [];
  if (schema.multipleOf !== undefined) {
    const divisor = schema.multipleOf;
    tests.push((v) => isMultipleOf(v as number, divisor));
  }
  if (schema.maximum !== undefined) tests.push(boundTest(schema.maximum, false));
  if (schema.minimum !== undefined) tests.push(boundTest(schema.minimum, true));
  return tests;
}

function stringTests(schema: JsonSchema): Test[] {
  const tests: Test[] = [];
  if (schema.pattern !== undefined) tests.push(patternTest(schema.pattern));
  const { minLength, maxLength } = schema;
  if (maxLength !== undefined) tests.push((v) => codePoints(v as string) <= maxLength);
  if (minLength !== undefined) tests.push((v) => codePoints(v as string) >= minLength);
  return tests;
}

function arrayTests(schema: JsonSchema): Test[] {
  const tests: Test[] = [];
  const { minItems, maxItems, items, additionalItems } = schema;
  if (minItems !== undefined) tests.push((v) => (v as unknown[]).length >= minItems);
  if (maxItems !== undefined) tests.push((v) => (v as unknown[]).length <= maxItems);
  if (schema.uniqueItems === true) {
    tests.push((v) => {
      const seen = new Set<string>();
      for (const el of v as unknown[]) {
        const key = sameValueKey(el);
        if (seen.has(key)) return false;
        seen.add(key);
      }
      return true;
    });
  }
  if (Array.isArray(items)) {
    const positional = (items as readonly JsonSchema[]).map(compileJsonSchema);
    tests.push((v) => positional.every((test, i) => i >= (v as unknown[]).length || test((v as unknown[])[i])));
    // additionalItems only means something after a list of positional schemas.
    if (additionalItems === false) tests.push((v) => (v as unknown[]).length <= positional.length);
    else if (additionalItems !== undefined && additionalItems !== true) {
      const rest = compileJsonSchema(additionalItems);
      tests.push((v) => (v as unknown[]).every((el, i) => i < positional.length || rest(el)));
    }
  } else if (items !== undefined) {
    const each = compileJsonSchema(items as JsonSchema);
    tests.push((v) => (v as unknown[]).every(each));
  }
  return tests;
}

// patternProperties and additionalProperties: each field matching a pattern meets that pattern's
// schema (whether or not `properties` names it); a field neither named nor matched meets
// additionalProperties.
function allowedPropertiesTest(schema: JsonSchema): Test | undefined {
  const { patternProperties, additionalProperties } = schema;
  if (patternProperties === undefined && additionalProperties === undefined) return undefined;
  const patterns = (patternProperties ?? []).map(([pattern, nested]) => [compilePcre(pattern, ''), compileJsonSchema(nested)] as const);
  const named = new Set((schema.properties ?? []).map(([name]) => name));
  const otherwise: Test | undefined =
    additionalProperties === undefined || additionalProperties === true ? undefined : additionalProperties === false ? () => false : compileJsonSchema(additionalProperties);
  return (v) => {
    const obj = v as Doc;
    for (const key of Object.keys(obj)) {
      const value = obj[key];
      let other = true;
      for (const [re, test] of patterns) {
        if (!re.test(key)) continue;
        other = false;
        if (!test(value)) return false;
      }
      if (other && otherwise !== undefined && !named.has(key) && !otherwise(value)) return false;
    }
    return true;
  };
}

const has = (obj: Doc, name: string): boolean => getOwn(obj, name) !== MISSING;

function objectTests(schema: JsonSchema): Test[] {
  const tests: Test[] = [];
  const { required, properties, minProperties, maxProperties, dependencies } = schema;
  if (properties !== undefined) {
    // A property the object lacks is fine here; `required` is what asks for it.
    const each = properties.map(([name, nested]) => [name, compileJsonSchema(nested)] as const);
    tests.push((v) => each.every(([name, test]) => {
      const value = getOwn(v as Doc, name);
      return value === MISSING || test(value);
    }));
  }
  const allowed = allowedPropertiesTest(schema);
  if (allowed !== undefined) tests.push(allowed);
  if (required !== undefined) tests.push((v) => required.every((name) => has(v as Doc, name)));
  if (minProperties !== undefined) tests.push((v) => Object.keys(v as Doc).length >= minProperties);
  if (maxProperties !== undefined) tests.push((v) => Object.keys(v as Doc).length <= maxProperties);
  for (const [name, dependency] of dependencies ?? []) {
    const then: Test = Array.isArray(dependency)
      ? (v) => (dependency as readonly string[]).every((other) => has(v as Doc, other))
      : compileJsonSchema(dependency as JsonSchema);
    tests.push((v) => !has(v as Doc, name) || then(v));
  }
  return tests;
}

function logicalTests(schema: JsonSchema): Test[] {
  const tests: Test[] = [];
  if (schema.allOf !== undefined) {
    const all = schema.allOf.map(compileJsonSchema);
    tests.push((v) => all.every((t) => t(v)));
  }
  if (schema.anyOf !== undefined) {
    const any = schema.anyOf.map(compileJsonSchema);
    tests.push((v) => any.some((t) => t(v)));
  }
  if (schema.oneOf !== undefined) {
    const one = schema.oneOf.map(compileJsonSchema);
    tests.push((v) => {
      let n = 0;
      for (const t of one) if (t(v) && ++n > 1) return false;
      return n === 1;
    });
  }
  if (schema.not !== undefined) {
    const not = compileJsonSchema(schema.not);
    tests.push((v) => !not(v));
  }
  if (schema.enum !== undefined) {
    const members = new Set(schema.enum.map(sameValueKey));
    tests.push((v) => members.has(sameValueKey(v)));
  }
  return tests;
}

const all = (tests: readonly Test[]): Test | undefined => (tests.length === 0 ? undefined : tests.length === 1 ? tests[0] : (v) => tests.every((t) => t(v)));

/** The test of a present value (a document, a field's value, an element) against `schema`. */
export function compileJsonSchema(schema: JsonSchema): Test {
  const byKind: Partial<Record<Kind, Test>> = {
    number: all(numberTests(schema)),
    string: all(stringTests(schema)),
    array: all(arrayTests(schema)),
    object: all(objectTests(schema)),
  };
  const tests: Test[] = [];
  if (schema.types !== undefined) tests.push(hasTypeIn(schema.types));
  if (Object.values(byKind).some((t) => t !== undefined)) {
    tests.push((v) => {
      const kind = kindOf(v);
      const test = kind === undefined ? undefined : byKind[kind];
      return test === undefined || test(v);
    });
  }
  tests.push(...logicalTests(schema));
  return all(tests) ?? (() => true);
}

/** The predicate of `{$jsonSchema: schema}` over whole documents. */
export function compileDocumentSchema(schema: JsonSchema): (doc: Doc) => boolean {
  const test = compileJsonSchema(schema);
  return (doc) => isPlainObject(doc) && test(doc);
}
