/**
 * The shapes every query operator file implements, and the small helpers they share. An
 * operator parses its operand into FieldOps (validating it, with MongoDB's messages) and
 * compiles a FieldOp into two predicates mirroring MongoDB's MatchExpression: `matches` over all
 * values a path reaches in a document, `single` over one value (used inside $elemMatch).
 */

import { fail } from '../../errors.js';
import type { LeafArrays } from '../path.js';
import { describeValue, type Doc } from '../values.js';
import type { FieldOp, FieldOpName, FieldOpOf, FilterNode } from './filter-ast.js';

/** The values at one path of one document, collected lazily once per leaf-array behaviour. */
export interface Subject {
  values(leaf: LeafArrays): readonly unknown[];
}

/** A compiled condition: over a path's values (`matches`) and over one value (`single`). */
export interface CompiledOp {
  readonly matches: (subject: Subject) => boolean;
  readonly single: (value: unknown) => boolean;
}

/** What an operator's parser may call back into: nested operator expressions and filters. */
export interface ParseContext {
  /** Nesting depth of the operand being parsed (bounded by DOCS_LIMITS.maxFilterDepth). */
  readonly depth: number;
  /** Parses `{$gt: 1, $lt: 5}`-style operator expressions one level deeper. */
  parseOperators(expr: Doc, operator: string): FieldOp[];
  /** Parses a whole filter document one level deeper (the root of $elemMatch's document form). */
  parseFilter(filter: unknown, operator: string): FilterNode;
  /** False inside $elemMatch, where MongoDB refuses `$expr` and `$sampleRate` (top-level operators). */
  readonly exprAllowed: boolean;
  /** The user variables `$expr` may read (a `$lookup` pipeline's `let`). */
  readonly names: ReadonlySet<string>;
}

/** What an operator's compiler may call back into. */
export interface CompileContext {
  compileOps(ops: readonly FieldOp[]): CompiledOp[];
  compileFilter(node: FilterNode): (doc: Doc) => boolean;
}

/** The variables an `$expr` reads at test time (aggregate/expression's Scope). */
export type FilterVars = import('../aggregate/expression/expression.js').Scope;

/** A field-level operator that appears in the AST as itself. */
export interface FieldOperator<K extends FieldOpName> {
  readonly kind: 'field';
  parse(operand: unknown, ctx: ParseContext): FieldOpOf<K>;
  compile(op: FieldOpOf<K>, ctx: CompileContext): CompiledOp;
}

/** A field-level operator MongoDB rewrites into other conditions ($all). */
export interface ExpandingOperator {
  readonly kind: 'expands';
  parse(operand: unknown, ctx: ParseContext): FieldOp[];
}

/** A top-level operator combining sub-filters ($and, $or, $nor). */
export interface LogicalOperator {
  readonly kind: 'logical';
  parse(operand: unknown, ctx: ParseContext): FilterNode;
}

/** `$expr`: an aggregation expression over the whole document. */
export interface ExprOperator {
  readonly kind: 'expr';
  parse(operand: unknown, ctx: ParseContext): FilterNode;
}

/** `$sampleRate`: a random sample of the documents, at the top level of a filter. */
export interface SampleRateOperator {
  readonly kind: 'sampleRate';
  parse(operand: unknown, ctx: ParseContext): FilterNode;
}

/** `$jsonSchema`: a JSON Schema the whole document must be valid against. */
export interface JsonSchemaOperator {
  readonly kind: 'jsonSchema';
  parse(operand: unknown, ctx: ParseContext): FilterNode;
}

/** `$text`: a search of the collection's text index, at the top level of a filter. */
export interface TextOperator {
  readonly kind: 'text';
  parse(operand: unknown, ctx: ParseContext): FilterNode;
}

/** A top-level operator with no effect on matching ($comment). */
export interface IgnoredOperator {
  readonly kind: 'ignored';
}

/** An operator MongoDB has and tetradb does not; `where` says where MongoDB accepts it. */
export interface UnsupportedOperator {
  readonly kind: 'unsupported';
  readonly where: 'top' | 'field';
  readonly reason: string;
}

/** Any FieldOperator, as the parser sees it (the compiler uses the precisely typed table). */
export interface AnyFieldOperator {
  readonly kind: 'field';
  parse(operand: unknown, ctx: ParseContext): FieldOp;
}

export type QueryOperator =
  | AnyFieldOperator
  | ExpandingOperator
  | LogicalOperator
  | ExprOperator
  | SampleRateOperator
  | JsonSchemaOperator
  | TextOperator
  | IgnoredOperator
  | UnsupportedOperator;

/** Throws QUERY_ERROR naming the operator. @throws QUERY_ERROR */
export function queryError(operator: string, message: string, details: Record<string, unknown> = {}): never {
  fail('QUERY_ERROR', message, { operator, ...details });
}

/** A condition true when some value at the path (with arrays presented per `leaf`) passes `single`. */
export function anyValue(leaf: LeafArrays, single: (value: unknown) => boolean): CompiledOp {
  return { matches: (subject) => subject.values(leaf).some(single), single };
}

/** The negation of a condition, field-wide and per value ($ne, $nin, $not, $exists: false). */
export function negate(inner: CompiledOp): CompiledOp {
  return { matches: (subject) => !inner.matches(subject), single: (value) => !inner.single(value) };
}

const INT64_LIMIT = 2 ** 63;
const INT32_MAX = 2 ** 31 - 1;

/**
 * A non-negative integer from a number, as MongoDB's parseIntegerElementToNonNegativeLong reads
 * it (an integral double counts), with its messages naming the element `name: value`; `max` bounds
 * it (2^31 - 1 for an int, 2^63 for a long).
 * @throws QUERY_ERROR naming `operator`
 */
export function nonNegativeInteger(v: unknown, name: string, operator: string, max = INT64_LIMIT, prefix = ''): number {
  const fail = (message: string): never => queryError(operator, `${prefix}${message}`);
  const shown = (x: unknown): string => `${name}: ${describeValue(x)}`;
  if (typeof v !== 'number') fail(`Expected a number in: ${shown(v)}`);
  const n = v as number;
  if (!Number.isInteger(n)) fail(`Expected an integer: ${shown(n)}`);
  if (n >= INT64_LIMIT || n < -INT64_LIMIT) fail(`Cannot represent as a 64-bit integer: ${shown(n)}`);
  if (max === INT32_MAX && (n > INT32_MAX || n < -INT32_MAX - 1)) fail(`Cannot represent ${shown(n)} in an int`);
  if (n < 0) fail(`Expected a non-negative number in: ${shown(n)}`);
  return n + 0;
}
