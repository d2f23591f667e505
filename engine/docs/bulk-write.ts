/**
 * bulkWrite, as MongoDB's collection.bulkWrite: insertOne, updateOne, updateMany, replaceOne,
 * deleteOne and deleteMany operations on one collection, sent together, applied in order.
 *
 * Every operation is checked and compiled before any is applied (the shape, the collection
 * name, each document, filter, update, replacement, sort and hint), so bad input fails the
 * request with nothing written, naming the operation. What can only fail while applying (a
 * duplicate key, an update the document does not admit, a result past the size limit) is a write
 * error of that operation, as in MongoDB: `ordered` (the default) stops at the first one and
 * applies nothing after it; unordered goes on with the others. Each operation is atomic as its
 * endpoint is (one document at a time for updateMany and deleteMany, see docs-model.ts); the
 * request as a whole is not one transaction, as in MongoDB.
 *
 * Consecutive insertOne operations are written as one batch; should that batch fail (all or
 * nothing), they are written again one by one, so the failing one is named and the others are
 * applied as they would have been alone.
 *
 * `maxTimeMS` is the whole request's, as MongoDB's on the command: the operations share one
 * deadline, looked at before each operation and inside an update's or delete's search. Past it
 * the request stops, ordered or not (MongoDB fails the whole batch on an interruption rather
 * than reporting a write error), keeping what was applied.
 */

import { fail, isTetraError, type ErrorCode } from '../errors.js';
import { interruptOf, UNINTERRUPTED, type Interrupt } from '../interrupt.js';
import { bypassOption } from './collection-validator.js';
import { compileLet, type LetOptions, type LetVariables } from './let-variables.js';
import type { TenantStore } from '../tenant/index.js';
import {
  insertPrepared,
  prepareDelete,
  prepareInsert,
  prepareReplace,
  prepareUpdate,
  maxTimeMSOf,
  timeLimitExceeded,
  timeLimitOf,
  type ChangeRun,
  type DeleteRun,
  type PreparedChange,
  type PreparedInsert,
  type TimeOptions,
  type WriteOptions,
} from './docs-model.js';
import { isPlainObject } from './values.js';

/** Operations per bulkWrite (MongoDB's maxWriteBatchSize is 100,000; tetradb's insertMany takes 10,000). */
export const MAX_BULK_OPERATIONS = 10_000;

type Id = string | number | boolean;

/** The operation kinds, with the fields each takes (MongoDB's driver models). */
const OPERATIONS = {
  insertOne: { required: ['document'], optional: [] },
  updateOne: { required: ['filter', 'update'], optional: ['upsert', 'arrayFilters', 'hint', 'sort'] },
  updateMany: { required: ['filter', 'update'], optional: ['upsert', 'arrayFilters', 'hint'] },
  replaceOne: { required: ['filter', 'replacement'], optional: ['upsert', 'hint', 'sort'] },
  deleteOne: { required: ['filter'], optional: ['hint'] },
  deleteMany: { required: ['filter'], optional: ['hint'] },
} as const satisfies Record<string, { required: readonly string[]; optional: readonly string[] }>;

type OperationKind = keyof typeof OPERATIONS;
const KINDS = Object.keys(OPERATIONS) as OperationKind[];

/** An operation checked and compiled, ready to apply. */
type Prepared =
  | { readonly kind: 'insertOne'; readonly insert: PreparedInsert }
  | { readonly kind: 'updateOne' | 'updateMany' | 'replaceOne'; readonly change: PreparedChange<ChangeRun> }
  | { readonly kind: 'deleteOne' | 'deleteMany'; readonly change: PreparedChange<DeleteRun> };

/** What a bulkWrite applied: MongoDB's BulkWriteResult (ids keyed by the operation's index). */
export interface BulkWriteResult {
  insertedCount: number;
  matchedCount: number;
  modifiedCount: number;
  deletedCount: number;
  upsertedCount: number;
  insertedIds: Record<number, Id>;
  upsertedIds: Record<number, Id>;
}

/** An operation that failed while applying: its index, and the error its endpoint would have answered. */
export interface BulkWriteError {
  index: number;
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** A bulkWrite's outcome: what was applied, the write errors (empty when all applied), and when it is all durable. */
export interface BulkWritten {
  readonly result: BulkWriteResult;
  readonly writeErrors: BulkWriteError[];
  readonly durable: Promise<void>;
  /**
   * Set when the request's time limit passed: the operation it stopped at. The operations after it
   * were not applied; it was not, unless an updateMany or deleteMany had applied chunks before
   * (which stay, as when that operation runs alone); `result` counts the operations before it.
   */
  readonly expired?: { readonly index: number; readonly maxTimeMS: number };
}

/**
 * Checks and compiles every operation of a bulkWrite on `collection`; nothing is applied.
 * `bypassDocumentValidation` (MongoDB's option of the whole request) skips the collection's
 * validator for every operation.
 * @throws VALIDATION_FAILED / QUERY_ERROR for a bad option, operation, document, filter, update, sort or hint, naming `operations.<i>`
 */
export function prepareBulkWrite(collection: unknown, operations: unknown, ordered: unknown, bypassDocumentValidation?: unknown, time: TimeOptions & LetOptions = {}): { apply(store: TenantStore): Promise<BulkWritten> } {
  const timeLimitMs = timeLimitOf(maxTimeMSOf(time.maxTimeMS), time.guard?.timeLimitMs);
  const bypass = bypassOption(bypassDocumentValidation, 'bulkWrite');
  // The request's `let`, evaluated once: every operation's filters and pipelines read the same values.
  const variables = compileLet(time.let, 'bulkWrite');
  if (ordered !== undefined && typeof ordered !== 'boolean') fail('VALIDATION_FAILED', 'ordered must be a boolean', { field: 'ordered' });
  if (!Array.isArray(operations)) fail('VALIDATION_FAILED', 'operations must be an array', { field: 'operations' });
  if (operations.length === 0) fail('VALIDATION_FAILED', 'operations must not be empty', { field: 'operations' });
  if (operations.length > MAX_BULK_OPERATIONS) fail('VALIDATION_FAILED', `at most ${MAX_BULK_OPERATIONS} operations per bulkWrite`, { field: 'operations', limit: MAX_BULK_OPERATIONS });
  // One deadline for the whole request, from when it is prepared; every update and delete looks
  // at it in its search. Its error is told from the operations' own by identity.
  const deadline: Deadline = { interrupt: UNINTERRUPTED, passed: undefined };
  if (timeLimitMs > 0) {
    deadline.interrupt = interruptOf({
      timeLimitMs,
      timedOut: (ms) => {
        try {
          timeLimitExceeded(ms);
        } catch (err) {
          deadline.passed = err;
          throw err;
        }
      },
      // Changes whose client goes away finish (docs/mql.md, Time limits): no client is watched.
      clientGone: () => {
        throw new Error('a bulkWrite watches no client');
      },
    });
  }
  const prepared = operations.map((op, i) => prepareOperation(collection, op, i, bypass, deadline.interrupt, variables));
  return {
    apply: (store) => {
      // Hints need the collection's indexes: checked before anything is applied, as bad input.
      prepared.forEach((op, i) => {
        if (op.kind !== 'insertOne') named(op.kind, i, () => op.change.checkHint(store));
      });
      return applyOperations(store, prepared, ordered !== false, deadline, timeLimitMs);
    },
  };
}

/** A bulkWrite's time limit: what its operations consult, and the error it threw once passed. */
interface Deadline {
  interrupt: Interrupt;
  passed: unknown;
}

function prepareOperation(collection: unknown, op: unknown, index: number, bypass: boolean, interrupt: Interrupt, variables: LetVariables | undefined): Prepared {
  const at = `operations.${index}`;
  if (!isPlainObject(op)) fail('VALIDATION_FAILED', `${at} must be an object`, { field: at, index });
  const keys = Object.keys(op);
  const kind = keys[0] as OperationKind;
  if (keys.length !== 1 || !Object.hasOwn(OPERATIONS, kind)) {
    fail('VALIDATION_FAILED', `${at} must have exactly one of ${KINDS.join(', ')} (found ${keys.length === 0 ? 'none' : keys.join(', ')})`, { field: at, index });
  }
  const args = op[kind];
  const where = `${at}.${kind}`;
  if (!isPlainObject(args)) fail('VALIDATION_FAILED', `${where} must be an object`, { field: where, index });
  const { required, optional } = OPERATIONS[kind];
  for (const field of required) if (args[field] === undefined) fail('VALIDATION_FAILED', `${where}.${field} is required`, { field: `${where}.${field}`, index });
  for (const field of Object.keys(args)) {
    if (!(required as readonly string[]).includes(field) && !(optional as readonly string[]).includes(field)) {
      fail('VALIDATION_FAILED', `${where} has an unknown field ${JSON.stringify(field)} (it takes ${[...required, ...optional].join(', ')})`, { field: `${where}.${field}`, index });
    }
  }
  return named(kind, index, () => compileOperation(collection, kind, args, { bypassDocumentValidation: bypass }, interrupt, variables));
}

/** Runs an endpoint's own check of operation `index`, its error named by where the operation stands in the request. */
function named<T>(kind: OperationKind, index: number, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!isTetraError(err)) throw err;
    const where = `operations.${index}.${kind}`;
    const field = typeof err.details?.field === 'string' ? `${where}.${err.details.field}` : where;
    fail(err.code, `${where}: ${err.message}`, { ...err.details, field, index });
  }
}

function compileOperation(collection: unknown, kind: OperationKind, args: Record<string, unknown>, write: WriteOptions, interrupt: Interrupt, variables: LetVariables | undefined): Prepared {
  switch (kind) {
    case 'insertOne':
      return { kind, insert: prepareInsert(collection, [args.document], 'document', write) };
    case 'updateOne':
    case 'updateMany':
      return { kind, change: prepareUpdate(collection, args.filter, args.update, { multi: kind === 'updateMany', upsert: args.upsert, arrayFilters: args.arrayFilters, sort: args.sort, hint: args.hint, ...write, interrupt, variables }) };
    case 'replaceOne':
      return { kind, change: prepareReplace(collection, args.filter, args.replacement, { upsert: args.upsert, sort: args.sort, hint: args.hint, ...write, interrupt, variables }) };
    case 'deleteOne':
    case 'deleteMany':
      return { kind, change: prepareDelete(collection, args.filter, kind === 'deleteMany', undefined, args.hint, { interrupt, variables }) };
    default: {
      const never: never = kind;
      throw new Error(`unknown bulkWrite operation ${String(never)}`);
    }
  }
}

async function applyOperations(store: TenantStore, ops: readonly Prepared[], ordered: boolean, deadline: Deadline, timeLimitMs: number): Promise<BulkWritten> {
  const result: BulkWriteResult = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0, insertedIds: {}, upsertedIds: {} };
  const writeErrors: BulkWriteError[] = [];
  const durable: Array<Promise<void>> = [];
  const failed = (index: number, err: unknown): void => {
    if (!isTetraError(err)) throw err;
    writeErrors.push({ index, code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) });
  };
  let expired: BulkWritten['expired'];
  // Past the deadline, before an operation or within one's search: the request stops there.
  const passed = (index: number, err: unknown): boolean => {
    if (deadline.passed === undefined || err !== deadline.passed) return false;
    expired = { index, maxTimeMS: timeLimitMs };
    return true;
  };
  for (let i = 0; i < ops.length && !(ordered && writeErrors.length > 0); ) {
    const op = ops[i]!;
    // Not before the first: nothing has run yet, and an insert has no later point to stop at.
    try {
      if (i > 0) deadline.interrupt.check();
    } catch (err) {
      if (passed(i, err)) break;
      throw err;
    }
    if (op.kind === 'insertOne') {
      let end = i + 1;
      while (end < ops.length && ops[end]!.kind === 'insertOne') end++;
      insertRun(store, ops.slice(i, end) as Array<Prepared & { kind: 'insertOne' }>, i, ordered, result, durable, failed);
      i = end;
      continue;
    }
    try {
      switch (op.kind) {
        case 'deleteOne':
        case 'deleteMany': {
          const run = await op.change.run(store);
          result.deletedCount += run.deletedCount;
          durable.push(run.durable);
          break;
        }
        default: {
          const { outcome, durable: written } = await op.change.run(store);
          result.matchedCount += outcome.matchedCount;
          result.modifiedCount += outcome.modifiedCount;
          if (outcome.upsertedId !== undefined) {
            result.upsertedCount++;
            result.upsertedIds[i] = outcome.upsertedId;
          }
          durable.push(written);
        }
      }
    } catch (err) {
      if (passed(i, err)) break;
      failed(i, err);
    }
    i++;
  }
  return { result, writeErrors, durable: Promise.all(durable).then(() => undefined), ...(expired === undefined ? {} : { expired }) };
}

/**
 * Consecutive insertOne operations (`first` is the index of the first): one batch, or, when that
 * batch fails, one by one (ordered: up to the first failure).
 */
function insertRun(
  store: TenantStore,
  ops: ReadonlyArray<Prepared & { kind: 'insertOne' }>,
  first: number,
  ordered: boolean,
  result: BulkWriteResult,
  durable: Array<Promise<void>>,
  failed: (index: number, err: unknown) => void,
): void {
  const inserted = (k: number, id: Id): void => {
    result.insertedCount++;
    result.insertedIds[first + k] = id;
  };
  if (ops.length > 1) {
    const batch: PreparedInsert = { name: ops[0]!.insert.name, docs: ops.flatMap((o) => o.insert.docs), encoded: ops.flatMap((o) => o.insert.encoded), bypass: ops[0]!.insert.bypass };
    try {
      const written = insertPrepared(store, batch);
      written.result.insertedIds.forEach((id, k) => inserted(k, id));
      durable.push(written.durable);
      return;
    } catch (err) {
      if (!isTetraError(err)) throw err;
      // Nothing of the batch was written: one by one below names the failing operation.
    }
  }
  for (let k = 0; k < ops.length; k++) {
    try {
      const written = insertPrepared(store, ops[k]!.insert);
      inserted(k, written.result.insertedIds[0]!);
      durable.push(written.durable);
    } catch (err) {
      failed(first + k, err);
      if (ordered) return;
    }
  }
}

/**
 * The error a bulkWrite with write errors answers with, once what it applied is durable: the
 * first write error's code (so its status), a message saying what was and was not applied, and
 * in `details` the write errors and the result, as MongoDB's BulkWriteError carries them.
 * @throws always: the first write error's code
 */
/**
 * The error a bulkWrite past its time limit answers with, once what it applied is durable:
 * MongoDB's MaxTimeMSExpired words, and in `details` where it stopped, the write errors before
 * and the result of the operations it applied.
 * @throws always: QUERY_ERROR
 */
export function bulkWriteExpired(written: BulkWritten): never {
  const { expired } = written;
  if (expired === undefined) throw new Error('bulkWriteExpired called on a bulkWrite that did not expire');
  fail('QUERY_ERROR', 'operation exceeded time limit', { maxTimeMS: expired.maxTimeMS, index: expired.index, writeErrors: written.writeErrors, result: written.result });
}

export function bulkWriteFailed(written: BulkWritten, operations: number, ordered: boolean): never {
  const [first] = written.writeErrors;
  if (first === undefined) throw new Error('bulkWriteFailed called without write errors');
  const message = ordered
    ? `bulkWrite stopped at operations.${first.index}: ${first.message}; the ${first.index} operation${first.index === 1 ? '' : 's'} before it ${first.index === 1 ? 'was' : 'were'} applied, none after it`
    : `bulkWrite: ${written.writeErrors.length} of ${operations} operations failed, the others were applied; operations.${first.index}: ${first.message}`;
  fail(first.code, message, { writeErrors: written.writeErrors, result: written.result });
}
