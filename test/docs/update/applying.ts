// Helpers for the update tests.
import { compileUpdate, type Doc } from '../../../engine/docs/index.js';

export const NOW = new Date('2024-03-01T12:00:00Z');

/** The document `update` produces from `doc` (an update, not an insert). */
export function updated(doc: Doc, update: unknown, isInsert = false): Doc {
  return compileUpdate(update).apply(doc, { isInsert, now: NOW }).doc;
}

/** Whether `update` changes `doc`. */
export function modifies(doc: Doc, update: unknown): boolean {
  return compileUpdate(update).apply(doc, { now: NOW }).modified;
}

/** A row of a table-driven update test. */
export interface UpdateCase {
  readonly name: string;
  readonly doc: Doc;
  readonly update: unknown;
  readonly expected: Doc;
}
