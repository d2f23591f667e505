/**
 * $meta (manual: Aggregation Operators > Text Search): `{$meta: "textScore"}` is the text score a
 * leading `$match` with `$text` gave the document (text/text-score.ts), carried through the
 * stages that keep a document's metadata. A document without one (no `$text`, or after a `$group`)
 * is MongoDB's error. The other metadata names ("searchScore", "indexKey", ...) are refused by name.
 */

import { checkMetaName, textScoreOf } from '../../text/index.js';
import type { ExprTableEntry } from './expression.js';
import { MISSING } from '../../values.js';

export const metaOperators: Readonly<Record<string, ExprTableEntry>> = {
  $meta: {
    kind: 'expression',
    compile(args) {
      checkMetaName(args);
      // Missing for a match only another clause of a `$text` query's `$or` matched (MongoDB's ExpressionMeta).
      return (scope) => textScoreOf(scope.get('ROOT')) ?? MISSING;
    },
  },
};
