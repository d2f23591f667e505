/**
 * Why a document failed its collection's validator, as MongoDB 5.0+ explains it in a write
 * error's `errInfo.details` (doc_validation_error.cpp): an object naming the operator or schema
 * keyword that refused the document (`operatorName`), the rule as written (`specifiedAs`), a
 * `reason` and the values it saw (`consideredValue`, or `consideredValues` when a path reached
 * several), nested for `$and`/`$or`/`$nor`/`$not` (`clausesNotSatisfied`, `clausesSatisfied`,
 * `details`) and for `$jsonSchema` (`schemaRulesNotSatisfied`, `propertiesNotSatisfied`, ...).
 *
 * The explanation is made from the validator as the client wrote it, clause by clause in the
 * shape MongoDB's parser gives it: a filter document of several conditions is an implicit
 * `$and` (one condition is itself), `$ne`/`$nin`/`$exists: false` explain the negated test
 * (`comparison succeeded`), and under `$not` or `$nor` the reasons read the other way. Whether a
 * part matches is asked of the filter compiler (and of the `$jsonSchema` test for subschemas),
 * so an explanation never disagrees with the verdict. It is only ever made for a document that
 * failed: the passing path does none of this.
 */

import { isTetraError } from '../errors.js';
import { Scope } from './aggregate/expression/expression.js';
import { compileExpression } from './aggregate/expression/operator-table.js';
import { fromJson } from './ejson.js';
import { collectValues, parsePath, type LeafArrays } from './path.js';
import { compileFilter } from './query/compile-filter.js';
import { rangeSingle } from './query/comparison/range.js';
import { hasTypeIn, typeAliasOf, type BsonTypeAlias } from './query/element/type.js';
import { isMultipleOf } from './query/evaluation/decimal-multiple.js';
import { compileJsonSchema } from './query/evaluation/json-schema-match.js';
import { parseJsonSchema } from './query/evaluation/json-schema-parse.js';
import { compilePcre } from './query/evaluation/pcre.js';
import { sameValueKey } from './query/evaluation/same-value.js';
import { bsonTypeOf, getOwn, isPlainObject, MISSING, type Doc } from './values.js';

/** MongoDB's internalQueryMaxDocValidationErrorConsideredValues default: values shown per path. */
const MAX_CONSIDERED_VALUES = 10;

/** One explanation object (MongoDB's BSONObj of error details). */
type Explanation = Record<string, unknown>;

/**
 * A validator clause as MongoDB's parser builds its tree: a logical node, a `$not`, one operator
 * on one path, an `$expr` or a `$jsonSchema`. `test` says whether the document matches it.
 */
type Clause =
  | { readonly kind: 'logical'; readonly name: '$and' | '$or' | '$nor'; readonly children: readonly Clause[]; readonly test: Test }
  | { readonly kind: 'not'; readonly inner: Clause; readonly test: Test }
  | { readonly kind: 'leaf'; readonly path: string; readonly op: string; readonly operand: unknown; readonly spec: Doc; readonly test: Test }
  | { readonly kind: 'expr'; readonly spec: Doc; readonly test: Test }
  | { readonly kind: 'schema'; readonly schema: Doc; readonly spec: Doc; readonly test: Test };

type Test = (value: unknown) => boolean;

/** A test of the document against a filter written as `filter`; a filter that throws (an `$expr` dividing by zero) does not match, as in MongoDB's validator. */
function filterTest(filter: Doc): Test {
  const compiled = compileFilter(filter);
  return (doc) => {
    try {
      return compiled.test(doc as Doc);
    } catch (err) {
      if (isTetraError(err)) return false;
      throw err;
    }
  };
}

// ---- Query operators -------------------------------------------------------------------------

/** The clauses of one filter document, in the order written, each field's operators one by one. */
function clausesOf(filter: Doc): Clause[] {
  const out: Clause[] = [];
  for (const key of Object.keys(filter)) {
    const value = filter[key];
    if (key === '$and' || key === '$or' || key === '$nor') {
      const children = (value as Doc[]).map((member) => collapse(clausesOf(member)));
      out.push({ kind: 'logical', name: key, children, test: filterTest({ [key]: value }) });
    } else if (key === '$expr') {
      out.push({ kind: 'expr', spec: { $expr: value }, test: filterTest({ $expr: value }) });
    } else if (key === '$jsonSchema') {
      out.push({ kind: 'schema', schema: value as Doc, spec: { $jsonSchema: value }, test: filterTest({ $jsonSchema: value }) });
    } else if (key.startsWith('$')) {
      continue; // $comment: no part in matching
    } else if (isOperatorExpression(value)) {
      out.push(...fieldClauses(key, value));
    } else {
      out.push(leaf(key, '$eq', value, { [key]: value }));
    }
  }
  return out;
}

function isOperatorExpression(value: unknown): value is Doc {
  if (!isPlainObject(value)) return false;
  const [first] = Object.keys(value);
  return first !== undefined && first.startsWith('$');
}

function leaf(path: string, op: string, operand: unknown, spec: Doc): Clause {
  return { kind: 'leaf', path, op, operand, spec, test: filterTest(spec) };
}

/** The clauses of `{path: {$op: ..., ...}}`: one per operator, `$regex` with its `$options`. */
function fieldClauses(path: string, expr: Doc): Clause[] {
  const out: Clause[] = [];
  for (const op of Object.keys(expr)) {
    const operand = expr[op];
    if (op === '$options') continue;
    if (op === '$regex') {
      const regex: Doc = Object.hasOwn(expr, '$options') ? { $regex: operand, $options: expr['$options'] } : { $regex: operand };
      out.push(leaf(path, op, operand, { [path]: regex }));
    } else if (op === '$not') {
      const inner = collapse(fieldClauses(path, operand as Doc));
      out.push({ kind: 'not', inner, test: filterTest({ [path]: { $not: operand } }) });
    } else {
      out.push(leaf(path, op, operand, { [path]: { [op]: operand } }));
    }
  }
  return out;
}

/** Several clauses are an implicit `$and`; one clause is itself (MongoDB's parser drops the AND). */
function collapse(clauses: Clause[]): Clause {
  if (clauses.length === 1) return clauses[0]!;
  return { kind: 'logical', name: '$and', children: clauses, test: (doc) => clauses.every((c) => c.test(doc)) };
}

/**
 * The explanation of `clause` for `doc`: why it failed, or (`inverted`, under `$not` or `$nor`)
 * why it matched.
 */
function explainClause(clause: Clause, doc: Doc, inverted: boolean): Explanation {
  switch (clause.kind) {
    case 'logical':
      return explainLogical(clause, doc, inverted);
    case 'not':
      return { operatorName: '$not', details: explainClause(clause.inner, doc, !inverted) };
    case 'leaf':
      return explainLeaf(clause, doc, inverted);
    case 'expr':
      return explainExpr(clause.spec, doc, inverted);
    case 'schema':
      return inverted ? { operatorName: '$jsonSchema', reason: 'schema matched' } : explainDocumentSchema(clause.schema, clause.spec, doc);
    default: {
      const never: never = clause;
      throw new Error(`unhandled validator clause ${JSON.stringify(never)}`);
    }
  }
}

/**
 * `$and` names the clauses that failed (inverted: all of them, which all matched); `$or` all of
 * them (inverted: those that matched); `$nor` those that matched (inverted: all, which all failed).
 */
function explainLogical(clause: Clause & { kind: 'logical' }, doc: Doc, inverted: boolean): Explanation {
  const childInverted = clause.name === '$nor' ? !inverted : inverted;
  const pick = (child: Clause): boolean => {
    if (clause.name === '$and') return inverted || !child.test(doc);
    if (clause.name === '$or') return !inverted || child.test(doc);
    return inverted || child.test(doc);
  };
  const listed: Explanation[] = [];
  clause.children.forEach((child, index) => {
    if (pick(child)) listed.push({ index, details: explainClause(child, doc, childInverted) });
  });
  return { operatorName: clause.name, [childInverted ? 'clausesSatisfied' : 'clausesNotSatisfied']: listed };
}

/** How an operator reads its path, explains itself, and which types it tests. */
interface LeafRule {
  readonly reasons: readonly [normal: string, inverted: string];
  readonly leaf: LeafArrays;
  /** The types at least one value must have, sorted as MongoDB lists them; absent: any type. */
  readonly expected?: readonly string[];
}

const COMPARISON: LeafRule = { reasons: ['comparison failed', 'comparison succeeded'], leaf: 'traverse-omit-array' };
const IN: LeafRule = { reasons: ['no matching value found in array', 'matching value found in array'], leaf: 'traverse-omit-array' };
const NUMBERS = ['decimal', 'double', 'int', 'long'];
const BITS: LeafRule = { reasons: ['bitwise operator failed to match', 'bitwise operator matched successfully'], leaf: 'traverse-omit-array', expected: ['binData', ...NUMBERS] };
const ARRAY = ['array'];

const LEAF_RULES: Readonly<Record<string, LeafRule>> = {
  $eq: COMPARISON,
  $ne: COMPARISON,
  $gt: COMPARISON,
  $gte: COMPARISON,
  $lt: COMPARISON,
  $lte: COMPARISON,
  $in: IN,
  $nin: IN,
  $regex: { reasons: ['regular expression did not match', 'regular expression did match'], leaf: 'traverse-omit-array', expected: ['regex', 'string', 'symbol'] },
  $mod: { reasons: ['$mod did not evaluate to expected remainder', '$mod did evaluate to expected remainder'], leaf: 'traverse-omit-array', expected: NUMBERS },
  $bitsAllClear: BITS,
  $bitsAllSet: BITS,
  $bitsAnyClear: BITS,
  $bitsAnySet: BITS,
  $size: { reasons: ['array length was not equal to given size', 'array length was equal to given size'], leaf: 'no-traversal', expected: ARRAY },
  $elemMatch: { reasons: ['array did not satisfy the child predicate', 'array did satisfy the child predicate'], leaf: 'no-traversal', expected: ARRAY },
  $all: { reasons: ['array did not contain all specified values', 'array did contain all specified values'], leaf: 'no-traversal' },
  $type: { reasons: ['type did not match', 'type did match'], leaf: 'traverse-omit-array' },
};

// MongoDB parses these as a NOT of the positive test, tagged with the operator's name: their
// explanation is the positive test's, read the other way ($ne: "comparison succeeded").
function negates(op: string, operand: unknown): boolean {
  return op === '$ne' || op === '$nin' || (op === '$exists' && operand === false);
}

/** The values a path reaches (MISSING left out), and whether the path exists at all. */
function valuesAt(doc: Doc, path: string, leaf: LeafArrays): { values: unknown[]; exists: boolean } {
  const parts = parsePath(path);
  const values = collectValues(doc, parts, leaf).filter((v) => v !== MISSING);
  const exists = values.length > 0 || collectValues(doc, parts, 'traverse').some((v) => v !== MISSING);
  return { values, exists };
}

function explainLeaf(clause: Clause & { kind: 'leaf' }, doc: Doc, inverted: boolean): Explanation {
  const { op, operand, path } = clause;
  const reverse = negates(op, operand) ? !inverted : inverted;
  const out: Explanation = { operatorName: op, specifiedAs: clause.spec };
  if (op === '$exists') {
    out['reason'] = reverse ? 'path does exist' : 'path does not exist';
    return out;
  }
  if (op === '$all' && Array.isArray(operand) && operand.length === 0) {
    out['reason'] = 'expression always evaluates to false';
    return out;
  }
  const rule = LEAF_RULES[op] ?? COMPARISON;
  const { values, exists } = valuesAt(doc, path, rule.leaf);
  if (!exists) {
    out['reason'] = 'field was missing';
    return out;
  }
  if (rule.expected !== undefined && !values.some((v) => rule.expected!.includes(bsonTypeOf(v)))) {
    out['reason'] = 'type did not match';
    Object.assign(out, consideredTypes(values));
    if (rule.expected.length === 1) out['expectedType'] = rule.expected[0];
    else out['expectedTypes'] = [...rule.expected];
  } else {
    out['reason'] = rule.reasons[reverse ? 1 : 0];
  }
  Object.assign(out, consideredValues(values));
  if (op === '$type' && out['consideredType'] === undefined && out['consideredTypes'] === undefined) Object.assign(out, consideredTypes(values));
  return out;
}

/** `consideredValue` for one value, else `consideredValues` (at most MAX_CONSIDERED_VALUES, then `consideredValuesTruncated`). */
function consideredValues(values: readonly unknown[]): Explanation {
  if (values.length === 1) return { consideredValue: values[0] };
  if (values.length <= MAX_CONSIDERED_VALUES) return { consideredValues: [...values] };
  return { consideredValues: values.slice(0, MAX_CONSIDERED_VALUES), consideredValuesTruncated: true };
}

/** `consideredType` when the values have one type, else `consideredTypes` (sorted); nothing for no values. */
function consideredTypes(values: readonly unknown[]): Explanation {
  if (values.length === 0) return {};
  const types = [...new Set(values.map(bsonTypeOf))].sort();
  return types.length === 1 ? { consideredType: types[0] } : { consideredTypes: types };
}

/** `$expr`: the expression's value on the document, or why it could not be computed. */
function explainExpr(spec: Doc, doc: Doc, inverted: boolean): Explanation {
  const out: Explanation = { operatorName: '$expr', specifiedAs: spec };
  try {
    const value = compileExpression(spec['$expr'])(Scope.of(doc, new Scope(new Map([['NOW', new Date()]]))));
    out['reason'] = inverted ? 'expression did match' : 'expression did not match';
    out['expressionResult'] = value === undefined || value === MISSING ? null : value;
  } catch (err) {
    if (!isTetraError(err)) throw err;
    out['reason'] = 'failed to evaluate aggregation expression';
    out['details'] = { code: err.code, errmsg: err.message };
  }
  return out;
}

// ---- $jsonSchema ------------------------------------------------------------------------------

const schemaTests = new WeakMap<Doc, Test>();

/** Whether `value` is valid against the (sub)schema written as `schema`. */
function schemaAccepts(schema: Doc, value: unknown): boolean {
  let test = schemaTests.get(schema);
  if (test === undefined) {
    test = compileJsonSchema(parseJsonSchema(schema, 1));
    schemaTests.set(schema, test);
  }
  return test(value);
}

/** A schema's `title` and `description`, which MongoDB repeats next to the errors of the schema. */
function annotations(schema: Doc): Explanation {
  const out: Explanation = {};
  if (typeof schema['title'] === 'string') out['title'] = schema['title'];
  if (typeof schema['description'] === 'string') out['description'] = schema['description'];
  return out;
}

type Kind = 'number' | 'string' | 'array' | 'object' | undefined;

function kindOf(v: unknown): Kind {
  const t = bsonTypeOf(v);
  if (t === 'int' || t === 'long' || t === 'double') return 'number';
  return t === 'string' || t === 'array' || t === 'object' ? t : undefined;
}

/** The schema's types from `bsonType` or `type`, with the keyword that gave them. */
function typeKeyword(schema: Doc): { name: 'bsonType' | 'type'; types: BsonTypeAlias[] } | undefined {
  const name = Object.hasOwn(schema, 'bsonType') ? 'bsonType' : Object.hasOwn(schema, 'type') ? 'type' : undefined;
  if (name === undefined) return undefined;
  const given = schema[name];
  const names = (Array.isArray(given) ? given : [given]) as string[];
  const jsonTypes: Record<string, BsonTypeAlias> = { boolean: 'bool' };
  const types = names.map((n) => (name === 'type' ? (jsonTypes[n] ?? (n as BsonTypeAlias)) : (typeAliasOf(n) ?? (n as BsonTypeAlias))));
  return { name, types };
}

/** `{$jsonSchema: schema}` refusing the whole document. */
function explainDocumentSchema(schema: Doc, spec: Doc, doc: Doc): Explanation {
  const type = typeKeyword(schema);
  // A top-level type without "object" matches no document (MongoDB: always false).
  if (type !== undefined && !hasTypeIn(type.types)({})) {
    return { operatorName: '$jsonSchema', specifiedAs: spec, reason: 'expression always evaluates to false' };
  }
  return { operatorName: '$jsonSchema', ...annotations(schema), schemaRulesNotSatisfied: schemaErrors(schema, doc, true) };
}

/**
 * The errors of a present value against a (sub)schema, keyword by keyword in MongoDB's order:
 * the number and string keywords, the array ones, the object ones, the logical ones, then the
 * type (which the document itself, `top`, is never checked against). A keyword about one kind of
 * value explains only values of that kind; the type keyword explains the others.
 */
function schemaErrors(schema: Doc, value: unknown, top = false): Explanation[] {
  const out: Explanation[] = [];
  const kind = kindOf(value);
  if (kind === 'number') out.push(...numberErrors(schema, value as number));
  if (kind === 'string') out.push(...stringErrors(schema, value as string));
  if (kind === 'array') out.push(...arrayErrors(schema, value as unknown[]));
  if (kind === 'object') out.push(...objectErrors(schema, value as Doc));
  out.push(...logicalErrors(schema, value));
  const type = typeKeyword(schema);
  if (!top && type !== undefined && !hasTypeIn(type.types)(value)) {
    out.push({ operatorName: type.name, specifiedAs: { [type.name]: schema[type.name] }, reason: 'type did not match', consideredValue: value, consideredType: bsonTypeOf(value) });
  }
  return out;
}

function keywordError(name: string, schema: Doc, reason: string, extra: Explanation = {}): Explanation {
  return { operatorName: name, specifiedAs: { [name]: schema[name] }, reason, ...extra };
}

function numberErrors(schema: Doc, value: number): Explanation[] {
  const out: Explanation[] = [];
  const bound = (name: 'maximum' | 'minimum', flag: string, inclusive: '$lte' | '$gte', exclusive: '$lt' | '$gt'): void => {
    if (!Object.hasOwn(schema, name)) return;
    const strict = schema[flag] === true;
    if (rangeSingle(strict ? exclusive : inclusive, schema[name])(value)) return;
    const specifiedAs: Doc = { [name]: schema[name] };
    if (Object.hasOwn(schema, flag)) specifiedAs[flag] = schema[flag];
    out.push({ operatorName: name, specifiedAs, reason: 'comparison failed', consideredValue: value });
  };
  bound('maximum', 'exclusiveMaximum', '$lte', '$lt');
  bound('minimum', 'exclusiveMinimum', '$gte', '$gt');
  if (Object.hasOwn(schema, 'multipleOf') && !isMultipleOf(value, schema['multipleOf'] as number)) {
    out.push(keywordError('multipleOf', schema, 'considered value is not a multiple of the specified value', { consideredValue: value }));
  }
  return out;
}

function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

function stringErrors(schema: Doc, value: string): Explanation[] {
  const out: Explanation[] = [];
  const length = codePoints(value);
  const lengthReason = 'specified string length was not satisfied';
  if (Object.hasOwn(schema, 'maxLength') && length > (schema['maxLength'] as number)) out.push(keywordError('maxLength', schema, lengthReason, { consideredValue: value }));
  if (Object.hasOwn(schema, 'minLength') && length < (schema['minLength'] as number)) out.push(keywordError('minLength', schema, lengthReason, { consideredValue: value }));
  if (typeof schema['pattern'] === 'string' && !compilePcre(schema['pattern'], '').test(value)) {
    out.push(keywordError('pattern', schema, 'regular expression did not match', { consideredValue: value }));
  }
  return out;
}

function arrayErrors(schema: Doc, value: unknown[]): Explanation[] {
  const out: Explanation[] = [];
  const items = schema['items'];
  if (Array.isArray(items)) {
    const failing: Explanation[] = [];
    (items as Doc[]).forEach((sub, i) => {
      if (i < value.length && !schemaAccepts(sub, value[i])) failing.push({ itemIndex: i, details: schemaErrors(sub, value[i]) });
    });
    if (failing.length > 0) out.push({ operatorName: 'items', details: failing });
    const additional = schema['additionalItems'];
    if (additional === false && value.length > items.length) {
      out.push(keywordError('additionalItems', schema, 'found additional items', { additionalItems: value.slice(items.length) }));
    } else if (isPlainObject(additional)) {
      const at = value.findIndex((el, i) => i >= items.length && !schemaAccepts(additional, el));
      if (at >= 0) out.push({ operatorName: 'additionalItems', ...annotations(additional), reason: 'At least one additional item did not match the sub-schema', itemIndex: at, details: schemaErrors(additional, value[at]) });
    }
  } else if (isPlainObject(items)) {
    const at = value.findIndex((el) => !schemaAccepts(items, el));
    if (at >= 0) out.push({ operatorName: 'items', ...annotations(items), reason: 'At least one item did not match the sub-schema', itemIndex: at, details: schemaErrors(items, value[at]) });
  }
  const lengthReason = 'array did not match specified length';
  if (Object.hasOwn(schema, 'maxItems') && value.length > (schema['maxItems'] as number)) out.push(keywordError('maxItems', schema, lengthReason, { consideredValue: value, numberOfItems: value.length }));
  if (Object.hasOwn(schema, 'minItems') && value.length < (schema['minItems'] as number)) out.push(keywordError('minItems', schema, lengthReason, { consideredValue: value, numberOfItems: value.length }));
  if (schema['uniqueItems'] === true) {
    const seen = new Set<string>();
    const duplicate = value.find((el) => {
      const key = sameValueKey(el);
      if (seen.has(key)) return true;
      seen.add(key);
      return false;
    });
    if (seen.size < value.length) out.push(keywordError('uniqueItems', schema, 'found a duplicate item', { consideredValue: value, duplicatedValue: duplicate }));
  }
  return out;
}

function objectErrors(schema: Doc, value: Doc): Explanation[] {
  const out: Explanation[] = [];
  const properties = isPlainObject(schema['properties']) ? (schema['properties'] as Record<string, Doc>) : {};
  const failing: Explanation[] = [];
  for (const name of Object.keys(properties)) {
    const sub = properties[name]!;
    const v = getOwn(value, name);
    if (v === MISSING || schemaAccepts(sub, v)) continue;
    const details = schemaErrors(sub, v);
    if (details.length > 0) failing.push({ propertyName: name, ...annotations(sub), details });
  }
  if (failing.length > 0) out.push({ operatorName: 'properties', propertiesNotSatisfied: failing });
  out.push(...allowedPropertiesErrors(schema, value, properties));
  if (Array.isArray(schema['required'])) {
    const missing = (schema['required'] as string[]).filter((name) => getOwn(value, name) === MISSING);
    if (missing.length > 0) out.push({ operatorName: 'required', specifiedAs: { required: schema['required'] }, missingProperties: missing });
  }
  const count = Object.keys(value).length;
  const countReason = 'specified number of properties was not satisfied';
  if (Object.hasOwn(schema, 'minProperties') && count < (schema['minProperties'] as number)) out.push(keywordError('minProperties', schema, countReason, { numberOfProperties: count }));
  if (Object.hasOwn(schema, 'maxProperties') && count > (schema['maxProperties'] as number)) out.push(keywordError('maxProperties', schema, countReason, { numberOfProperties: count }));
  if (isPlainObject(schema['dependencies'])) {
    const dependencies = schema['dependencies'];
    const failingDependencies: Explanation[] = [];
    for (const name of Object.keys(dependencies)) {
      if (getOwn(value, name) === MISSING) continue;
      const dependency = dependencies[name];
      if (Array.isArray(dependency)) {
        const missing = (dependency as string[]).filter((other) => getOwn(value, other) === MISSING);
        if (missing.length > 0) failingDependencies.push({ conditionalProperty: name, missingProperties: missing });
      } else if (!schemaAccepts(dependency as Doc, value)) {
        failingDependencies.push({ conditionalProperty: name, details: schemaErrors(dependency as Doc, value) });
      }
    }
    if (failingDependencies.length > 0) out.push({ operatorName: 'dependencies', failingDependencies });
  }
  return out;
}

/** additionalProperties, then patternProperties (MongoDB tests them together, and reports them in this order). */
function allowedPropertiesErrors(schema: Doc, value: Doc, properties: Record<string, Doc>): Explanation[] {
  const patterns = isPlainObject(schema['patternProperties'])
    ? Object.entries(schema['patternProperties'] as Record<string, Doc>).map(([pattern, sub]) => ({ pattern, re: compilePcre(pattern, ''), sub }))
    : [];
  const additional = schema['additionalProperties'];
  const out: Explanation[] = [];
  const others = Object.keys(value).filter((name) => !Object.hasOwn(properties, name) && !patterns.some((p) => p.re.test(name)));
  if (additional === false && others.length > 0) {
    out.push({ operatorName: 'additionalProperties', specifiedAs: { additionalProperties: false }, additionalProperties: others });
  } else if (isPlainObject(additional)) {
    const name = others.find((n) => !schemaAccepts(additional, value[n]));
    if (name !== undefined) {
      out.push({ operatorName: 'additionalProperties', ...annotations(additional), reason: 'at least one additional property did not match the subschema', failingProperty: name, details: schemaErrors(additional, value[name]) });
    }
  }
  const failing: Explanation[] = [];
  for (const { pattern, re, sub } of patterns) {
    const name = Object.keys(value).find((n) => re.test(n) && !schemaAccepts(sub, value[n]));
    if (name !== undefined) failing.push({ propertyName: name, ...annotations(sub), regexMatched: pattern, details: schemaErrors(sub, value[name]) });
  }
  if (failing.length > 0) out.push({ operatorName: 'patternProperties', details: failing });
  return out;
}

function logicalErrors(schema: Doc, value: unknown): Explanation[] {
  const out: Explanation[] = [];
  const subschemas = (name: string): Doc[] => (Array.isArray(schema[name]) ? (schema[name] as Doc[]) : []);
  const listed = (subs: Doc[], pick: (sub: Doc) => boolean): Explanation[] =>
    subs.flatMap((sub, index) => (pick(sub) ? [{ index, ...annotations(sub), details: schemaErrors(sub, value) }] : []));
  if (Object.hasOwn(schema, 'allOf')) {
    const failing = listed(subschemas('allOf'), (sub) => !schemaAccepts(sub, value));
    if (failing.length > 0) out.push({ operatorName: 'allOf', schemasNotSatisfied: failing });
  }
  if (Object.hasOwn(schema, 'anyOf')) {
    const subs = subschemas('anyOf');
    if (!subs.some((sub) => schemaAccepts(sub, value))) out.push({ operatorName: 'anyOf', schemasNotSatisfied: listed(subs, () => true) });
  }
  if (Object.hasOwn(schema, 'oneOf')) {
    const subs = subschemas('oneOf');
    const matching = subs.flatMap((sub, i) => (schemaAccepts(sub, value) ? [i] : []));
    if (matching.length === 0) out.push({ operatorName: 'oneOf', schemasNotSatisfied: listed(subs, () => true) });
    else if (matching.length > 1) out.push({ operatorName: 'oneOf', reason: 'more than one subschema matched', matchingSchemaIndexes: matching });
  }
  if (isPlainObject(schema['not']) && schemaAccepts(schema['not'], value)) out.push({ operatorName: 'not', reason: 'child expression matched' });
  if (Array.isArray(schema['enum'])) {
    const members = new Set((schema['enum'] as unknown[]).map(sameValueKey));
    if (!members.has(sameValueKey(value))) out.push(keywordError('enum', schema, 'value was not found in enum', { consideredValue: value }));
  }
  return out;
}

// ---- The error ----------------------------------------------------------------------------------

/**
 * MongoDB's `errInfo.details` for a document `doc` that the validator `rules` (as the client
 * wrote them) refused. Should explaining fail, MongoDB's note says so instead.
 */
export function explainValidationFailure(rules: Record<string, unknown>, doc: Doc): Record<string, unknown> {
  try {
    const converted = fromJson(rules, { code: 'QUERY_ERROR' }) as Doc;
    return explainClause(collapse(clausesOf(converted)), doc, false);
  } catch (err) {
    if (!isTetraError(err)) throw err;
    return { note: 'failed to generate document validation error', details: { code: err.code, errmsg: err.message } };
  }
}
