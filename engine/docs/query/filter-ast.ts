/**
 * The compiled form of an MQL filter: small immutable nodes a query planner can read.
 *
 * - The root is always an `and` node. Nested `$and`s are flattened into their parent `and`, and
 *   conditions on the same path in one `and` are merged into one field node (exact, because each
 *   condition of a field node is evaluated on its own). So the root's field children are the
 *   top-level AND-ed paths, each with its list of conditions, each path once.
 * - `$all` is rewritten as MongoDB does: `{a: {$all: [1, 2]}}` becomes two `$eq` conditions,
 *   `$all` of `$elemMatch`es becomes those `$elemMatch`es, and an empty `$all` (which matches
 *   nothing) becomes `$in: []`.
 * - `$ne`, `$nin` and `$not` are negations of the whole field: `{a: {$ne: 1}}` matches when no
 *   value at `a` equals 1, including when `a` is missing.
 * - Operand values are as the client wrote them after Extended JSON conversion (Dates are Date).
 */

import type { BsonTypeAlias } from './element/type.js';
import type { TextSearch } from '../text/index.js';

export type { BsonTypeAlias };

/** A filter node: a boolean combination, the conditions on one dot path, an `$expr`, a `$sampleRate` or a `$jsonSchema`. */
export type FilterNode = AndNode | OrNode | NorNode | FieldNode | ExprNode | SampleRateNode | JsonSchemaNode | TextNode;

/** All children match (an empty `and` matches every document). */
export interface AndNode {
  readonly kind: 'and';
  readonly children: readonly FilterNode[];
}

/** At least one child matches. */
export interface OrNode {
  readonly kind: 'or';
  readonly children: readonly FilterNode[];
}

/** No child matches. */
export interface NorNode {
  readonly kind: 'nor';
  readonly children: readonly FilterNode[];
}

/** `{$expr: <aggregation expression>}`: true when the expression's value on the document is truthy. */
export interface ExprNode {
  readonly kind: 'expr';
  /** The expression as written. */
  readonly spec: unknown;
  /** The field paths it reads, or 'all' (it reads `$$ROOT`, `$$CURRENT` or `$getField`). */
  readonly fields: readonly string[] | 'all';
  /** User variables it may read (a `$lookup` pipeline's `let`), given when the filter was compiled. */
  readonly names: readonly string[];
}

/** `{$sampleRate: <rate>}`: a document matches with probability `rate`, in [0, 1]. */
export interface SampleRateNode {
  readonly kind: 'sampleRate';
  readonly rate: number;
}

/**
 * `{$text: {$search, ...}}`: a text search of the collection's text index. At most one per filter,
 * a child of the root (a top-level `$and`'s are flattened into it). Its search is bound to the
 * collection's text index when the query is planned (the one part of a node that changes).
 */
export interface TextNode {
  readonly kind: 'text';
  readonly search: TextSearch;
}

/** `{$jsonSchema: <schema>}`: the whole document is valid against the schema. It reads every field. */
export interface JsonSchemaNode {
  readonly kind: 'jsonSchema';
  readonly schema: JsonSchema;
}

/**
 * A parsed `$jsonSchema` schema (draft 4 with MongoDB's `bsonType`), keyword by keyword, each
 * present only when the schema has it. Objects of names keep the order the client wrote them in.
 * See query/evaluation/json-schema.ts for what each keyword means.
 */
export interface JsonSchema {
  /** From `type` or `bsonType`, with JSON Schema's names already mapped to BSON ones. */
  readonly types?: readonly BsonTypeAlias[];
  readonly minimum?: SchemaBound;
  readonly maximum?: SchemaBound;
  readonly multipleOf?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly uniqueItems?: boolean;
  readonly items?: JsonSchema | readonly JsonSchema[];
  readonly additionalItems?: boolean | JsonSchema;
  readonly required?: readonly string[];
  readonly properties?: readonly (readonly [string, JsonSchema])[];
  readonly patternProperties?: readonly (readonly [string, JsonSchema])[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly minProperties?: number;
  readonly maxProperties?: number;
  /** A schema the object must also match, or names it must also have, when it has the key. */
  readonly dependencies?: readonly (readonly [string, JsonSchema | readonly string[]])[];
  readonly allOf?: readonly JsonSchema[];
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly not?: JsonSchema;
  readonly enum?: readonly unknown[];
}

/** `minimum`/`maximum` with its draft-4 `exclusiveMinimum`/`exclusiveMaximum` flag. */
export interface SchemaBound {
  readonly value: number;
  readonly exclusive: boolean;
}

/** Every condition in `ops` holds for the values at `path` (a dot path such as "a.b.0"). */
export interface FieldNode {
  readonly kind: 'field';
  readonly path: string;
  readonly ops: readonly FieldOp[];
}

/** One condition on a path. Every variant has the operator name in `op` and its operand in `value`. */
export type FieldOp =
  | ComparisonOp
  | InOp
  | ExistsOp
  | TypeOp
  | RegexOp
  | ModOp
  | SizeOp
  | BitsOp
  | ElemMatchOp
  | NotOp;

export interface ComparisonOp {
  readonly op: '$eq' | '$ne' | '$gt' | '$gte' | '$lt' | '$lte';
  readonly value: unknown;
}

export interface InOp {
  readonly op: '$in' | '$nin';
  readonly value: readonly unknown[];
}

export interface ExistsOp {
  readonly op: '$exists';
  readonly value: boolean;
}

/** Type names after alias resolution: numeric codes become names; 'number' stays 'number'. */
export interface TypeOp {
  readonly op: '$type';
  readonly value: readonly BsonTypeAlias[];
}

export interface RegexOp {
  readonly op: '$regex';
  /** The pattern as written (PCRE syntax; see docs/mql.md for what is accepted). */
  readonly value: string;
  /** Flags from $options, a subset of "imsx". */
  readonly options: string;
}

/** `[divisor, remainder]`, both integers (doubles truncated toward zero as MongoDB does). */
export interface ModOp {
  readonly op: '$mod';
  readonly value: readonly [number, number];
}

export interface SizeOp {
  readonly op: '$size';
  readonly value: number;
}

/** The bit positions tested (from a bitmask's set bits or a list), ascending, each once. */
export interface BitsOp {
  readonly op: '$bitsAllSet' | '$bitsAnySet' | '$bitsAllClear' | '$bitsAnyClear';
  readonly value: readonly number[];
}

/** `value` form: conditions on each element (`{$elemMatch: {$gte: 80}}`); `document` form: a filter on each element. */
export type ElemMatchSpec =
  | { readonly form: 'value'; readonly ops: readonly FieldOp[] }
  | { readonly form: 'document'; readonly filter: FilterNode };

export interface ElemMatchOp {
  readonly op: '$elemMatch';
  readonly value: ElemMatchSpec;
}

/** Matches when the conditions in `value`, taken together, do not match. */
export interface NotOp {
  readonly op: '$not';
  readonly value: readonly FieldOp[];
}

/** The operator names that can appear in a FieldOp. */
export type FieldOpName = FieldOp['op'];

/** The FieldOp variant that carries operator `K` (ComparisonOp for '$gt', InOp for '$nin', ...). */
export type FieldOpOf<K extends FieldOpName> = FieldOp extends infer T ? (T extends { readonly op: infer O } ? (K extends O ? T : never) : never) : never;
