// Helpers for the query tests: which documents of a collection a filter matches.
import { compileFilter, type Doc } from '../../../engine/docs/index.js';

/** The `_id`s of the documents `filter` matches, in collection order. */
export function ids(docs: readonly Doc[], filter: unknown): unknown[] {
  const { test } = compileFilter(filter);
  return docs.filter((d) => test(d)).map((d) => d['_id']);
}

/** A row of a table-driven query test. */
export interface MatchCase {
  readonly name: string;
  readonly filter: unknown;
  readonly expected: readonly unknown[];
}

/** Parses JSON so that keys such as "__proto__" are own properties, as they are in a request body. */
export function json<T = Doc>(text: string): T {
  return JSON.parse(text) as T;
}
