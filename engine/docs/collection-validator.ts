/**
 * Schema validation of a collection (MongoDB's `validator`, `validationLevel` and
 * `validationAction`, set by createCollection and collMod): a query filter, `$jsonSchema`
 * included, every document written to the collection must match.
 *
 * - `strict` (the default) checks every insert and every change; `moderate` checks inserts and
 *   changes of documents that matched before the change (documents stored before the rules, that
 *   break them, may still be changed); `off` checks nothing.
 * - `error` (the default) refuses the write: 400 VALIDATION_FAILED "Document failed validation",
 *   nothing of its batch written, with MongoDB's errInfo in the error's details
 *   (`failingDocumentId`, and `details`: why, validation-error.ts); `warn` writes it and reports
 *   the document with the same explanation to the store's warning listener (the service logs it,
 *   as MongoDB logs a warning); `errorAndLog` (MongoDB 8.1) refuses it as `error` does and reports it
 *   to the listener too.
 * - A rule that cannot be evaluated on a document (an `$expr` dividing by zero) refuses it, as
 *   MongoDB's validator does.
 * - Documents already stored are not checked when the rules change, as in MongoDB.
 * - An empty validator (`{}`) means no validation. `$rand` and `$sampleRate` are refused (a rule
 *   must give one answer per document), as are the operators no filter may hold (`$where`, ...).
 */

import { fail, isTetraError } from '../errors.js';
import type { TenantStore } from '../tenant/index.js';
import type { CollectionInfo } from './catalog.js';
import { toJson } from './ejson.js';
import { compileFilter, filterHasSample, filterIsVolatile, type CompiledFilter } from './query/compile-filter.js';
import { explainValidationFailure } from './validation-error.js';
import { isPlainObject, type Doc } from './values.js';

export const VALIDATION_LEVELS = ['strict', 'moderate', 'off'] as const;
export const VALIDATION_ACTIONS = ['error', 'warn', 'errorAndLog'] as const;
export type ValidationLevel = (typeof VALIDATION_LEVELS)[number];
export type ValidationAction = (typeof VALIDATION_ACTIONS)[number];

/** A collection's validation as its catalog entry keeps it: the filter as the client gave it. */
export interface CollectionValidator {
  readonly rules: Record<string, unknown>;
  readonly level: ValidationLevel;
  readonly action: ValidationAction;
}

/** The validation options of createCollection and collMod, as the client sends them. */
export interface ValidationOptions {
  validator?: unknown;
  validationLevel?: unknown;
  validationAction?: unknown;
}

/** A document a `warn` validator let through (or an `errorAndLog` one refused), with MongoDB's explanation of why it fails the rules. */
export interface ValidationWarning {
  readonly collection: string;
  readonly id: unknown;
  /** True for `warn` (the document was written), false for `errorAndLog` (it was refused). */
  readonly written: boolean;
  /** MongoDB's `errInfo.details` (validation-error.ts). */
  readonly details: Record<string, unknown>;
}

const warningListeners = new WeakMap<TenantStore, (warning: ValidationWarning) => void>();

/** Calls `listener` with each document a `warn` validator of `store`'s collections lets through. */
export function onValidationWarning(store: TenantStore, listener: (warning: ValidationWarning) => void): void {
  warningListeners.set(store, listener);
}

/**
 * The validation `options` give, over `current` (collMod changes only what it names; createCollection
 * has no current). Undefined when there is none: no rules, or empty ones.
 * @throws VALIDATION_FAILED for a level, action or validator of the wrong kind; QUERY_ERROR for rules that are not a valid filter, or use $rand or $sampleRate
 */
export function parseValidation(options: ValidationOptions, current: CollectionValidator | undefined): CollectionValidator | undefined {
  const { validator, validationLevel, validationAction } = options;
  if (validator !== undefined && !isPlainObject(validator)) fail('VALIDATION_FAILED', 'validator must be an object (a query filter)', { field: 'validator' });
  if (validationLevel !== undefined && !(VALIDATION_LEVELS as readonly unknown[]).includes(validationLevel)) {
    fail('VALIDATION_FAILED', `validationLevel must be one of ${VALIDATION_LEVELS.join(', ')}`, { field: 'validationLevel' });
  }
  if (validationAction !== undefined && !(VALIDATION_ACTIONS as readonly unknown[]).includes(validationAction)) {
    fail('VALIDATION_FAILED', `validationAction must be one of ${VALIDATION_ACTIONS.join(', ')}`, { field: 'validationAction' });
  }
  const rules = (validator as Record<string, unknown> | undefined) ?? current?.rules ?? {};
  checkRules(rules);
  const level = (validationLevel as ValidationLevel | undefined) ?? current?.level ?? 'strict';
  const action = (validationAction as ValidationAction | undefined) ?? current?.action ?? 'error';
  // A level or action given without rules is kept (as MongoDB keeps it) for rules set later.
  if (Object.keys(rules).length === 0 && validationLevel === undefined && validationAction === undefined && current === undefined) return undefined;
  return { rules, level, action };
}

function checkRules(rules: Record<string, unknown>): void {
  const filter = compiled(rules);
  if (filterIsVolatile(filter.ast) || filterHasSample(filter.ast)) {
    fail('QUERY_ERROR', 'a collection validator must not use $rand or $sampleRate: it must give one answer per document', { field: 'validator' });
  }
}

// Compiled rules by their object: a write reads the collection's cached catalog entry, whose
// rules stay the same object until the catalog changes (as index-membership.ts caches partial filters).
const compiledRules = new WeakMap<Record<string, unknown>, CompiledFilter>();

function compiled(rules: Record<string, unknown>): CompiledFilter {
  let filter = compiledRules.get(rules);
  if (filter === undefined) {
    filter = compileFilter(rules);
    compiledRules.set(rules, filter);
  }
  return filter;
}

/**
 * Checks a document about to be stored in `info` against its validator: `before` is the stored
 * document it replaces (a change), undefined for an insert; `bypass`: the write asked to skip
 * validation (bypassDocumentValidation), which checks nothing. The explanation (MongoDB's
 * `errInfo.details`) is made only for a document that fails.
 * @throws VALIDATION_FAILED "Document failed validation" when the rules refuse it and the action is `error`, with `failingDocumentId` and `details` as MongoDB's errInfo has them
 */
export function checkValidation(store: TenantStore, info: CollectionInfo, after: Doc, before: Doc | undefined, bypass = false): void {
  const validator = info.validator;
  if (bypass || validator === undefined || validator.level === 'off' || Object.keys(validator.rules).length === 0) return;
  const filter = compiled(validator.rules);
  if (passes(filter, after)) return;
  // moderate: a document that broke the rules before may go on breaking them.
  if (before !== undefined && validator.level === 'moderate' && !passes(filter, before)) return;
  const details = toJson(explainValidationFailure(validator.rules, after)) as Record<string, unknown>;
  if (validator.action !== 'error') warningListeners.get(store)?.({ collection: info.name, id: after['_id'], written: validator.action === 'warn', details });
  if (validator.action === 'warn') return;
  fail('VALIDATION_FAILED', 'Document failed validation', { collection: info.name, failingDocumentId: after['_id'] as string | number | boolean, details });
}

// A rule that cannot be evaluated on the document (an $expr dividing by zero) refuses it, as in
// MongoDB, whose validator turns the evaluation error into a validation failure.
function passes(filter: CompiledFilter, doc: Doc): boolean {
  try {
    return filter.test(doc);
  } catch (err) {
    if (isTetraError(err)) return false;
    throw err;
  }
}

// MongoDB's IDL type of bypassDocumentValidation (safeBool): a boolean, or a number read as one.
const SAFE_BOOL_TYPES = '[bool, long, int, decimal, double]';

/**
 * A write's `bypassDocumentValidation` option, as MongoDB reads it: absent is false, a number is
 * true unless 0. `command` is MongoDB's command the write is (insert, update, findAndModify,
 * bulkWrite, aggregate), which its message names.
 * @throws VALIDATION_FAILED with MongoDB's message for any other type
 */
export function bypassOption(value: unknown, command: string): boolean {
  if (value === undefined) return false;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  const type = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value === 'object' ? 'object' : typeof value;
  fail('VALIDATION_FAILED', `BSON field '${command}.bypassDocumentValidation' is the wrong type '${type}', expected types '${SAFE_BOOL_TYPES}'`, { field: 'bypassDocumentValidation' });
}

/** The validation options as listCollections shows them (MongoDB's `options`), or undefined. */
export function describeValidation(validator: CollectionValidator | undefined): Record<string, unknown> | undefined {
  if (validator === undefined) return undefined;
  return { validator: validator.rules, validationLevel: validator.level, validationAction: validator.action };
}
