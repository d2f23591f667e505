/**
 * $out (manual: $out): the specification of the pipeline's last stage, which replaces a
 * collection of the tenant with the pipeline's output. Parsed here, with MongoDB's messages; the
 * writes and the swap are the document model's (docs-model.ts, outStream).
 *
 * `{$out: "coll"}` or `{$out: {coll}}`: the target as $merge takes its `into` (targetCollection),
 * a `db` refused (one database per tenant). MongoDB's `timeseries` option is refused: tetradb has
 * no time series collections.
 */

import { bsonTypeOf, isPlainObject } from '../../values.js';
import { stageError } from '../stage.js';
import { targetCollection } from './merge.js';

const STAGE = '$out';

/** A parsed $out. */
export interface OutSpec {
  /** The collection the output replaces (of the same tenant; created when missing). */
  readonly into: string;
}

/** Parses a $out specification. @throws QUERY_ERROR with MongoDB's message for a bad one */
export function parseOut(spec: unknown): OutSpec {
  if (typeof spec !== 'string' && !isPlainObject(spec)) stageError(STAGE, `$out only supports a string or object argument, but found ${bsonTypeOf(spec)}`);
  if (isPlainObject(spec) && Object.hasOwn(spec, 'timeseries')) {
    stageError(STAGE, "unsupported: $out's timeseries option is not supported (tetradb has no time series collections)");
  }
  return { into: targetCollection(STAGE, undefined, spec) };
}
