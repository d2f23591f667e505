/**
 * The shape every update operator file implements. An operator parses one `path: operand`
 * pair of its operand document into an action, validating the operand with MongoDB's messages;
 * applying the action changes a private copy of the document and reports whether it changed.
 */

import { fail } from '../../errors.js';
import { checkStorable } from '../validate.js';
import type { Doc } from '../values.js';

/** What an action may depend on when applied. */
export interface ApplyContext {
  /** True when the update runs on the document an upsert inserts ($setOnInsert applies). */
  readonly isInsert: boolean;
  /** The time $currentDate writes. */
  readonly now: Date;
}

/** One operator on one path, parsed and validated. */
export interface UpdateAction {
  readonly operator: string;
  /** The path written (for $rename, the destination). */
  readonly path: string;
  readonly parts: readonly string[];
  /** Further paths the action changes ($rename's source); they take part in conflict checks. */
  readonly alsoChanges: readonly string[];
  /** Applies the action to `doc` (a private copy, changed in place); true when it changed it. */
  apply(doc: Doc, ctx: ApplyContext): boolean;
}

/** An update operator: parses `{path: operand}` members of its operand document. */
export interface UpdateOperator {
  readonly kind: 'update';
  parse(path: string, parts: readonly string[], operand: unknown): UpdateAction;
}

/** An update operator MongoDB has and tetradb does not. */
export interface UnsupportedUpdateOperator {
  readonly kind: 'unsupported';
  readonly reason: string;
}

/** Throws QUERY_ERROR naming the operator and path. @throws QUERY_ERROR */
export function updateError(operator: string, path: string, message: string): never {
  fail('QUERY_ERROR', message, { operator, path });
}

/** Checks a value an operator will store: field names and nesting as validateDocument. @throws VALIDATION_FAILED */
export function storable(value: unknown, path: string): unknown {
  checkStorable(value, path);
  return value;
}

/** An action with no further changed paths. */
export function action(operator: string, path: string, parts: readonly string[], apply: UpdateAction['apply']): UpdateAction {
  return { operator, path, parts, alsoChanges: [], apply };
}
