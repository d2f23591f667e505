/**
 * $text (manual: Query Operators > Evaluation): `{$text: {$search: "coffee -shop", $language?,
 * $caseSensitive?, $diacriticSensitive?}}`, a search of the collection's text index (text/). Where
 * it may stand is checked once the whole filter is parsed (compile-filter.ts, checkTextPlacement):
 * at most one, at the top level or in a top-level `$and`; never inside `$elemMatch`.
 */

import { parseTextParams, TextSearch } from '../../text/index.js';
import { bsonTypeOf } from '../../values.js';
import type { TextNode } from '../filter-ast.js';
import { queryError, type TextOperator } from '../operator.js';

export const textOperator: TextOperator = {
  kind: 'text',
  parse(operand, ctx): TextNode {
    if (!ctx.exprAllowed) queryError('$text', '$text is not allowed in this context');
    return { kind: 'text', search: new TextSearch(parseTextParams(operand, bsonTypeOf)) };
  },
};
