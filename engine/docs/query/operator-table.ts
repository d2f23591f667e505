/**
 * The one table of query operators, grouped as in the MongoDB manual. The parser looks every
 * `$name` up here; a name that is absent is an unknown operator, never ignored.
 */

import { allOperator } from './array/all.js';
import { elemMatchOperator } from './array/elem-match.js';
import { sizeOperator } from './array/size.js';
import { bitsAllClearOperator, bitsAllSetOperator, bitsAnyClearOperator, bitsAnySetOperator } from './bitwise/bits.js';
import { eqOperator, neOperator } from './comparison/eq.js';
import { inOperator, ninOperator } from './comparison/in.js';
import { gteOperator, gtOperator, lteOperator, ltOperator } from './comparison/range.js';
import { existsOperator } from './element/exists.js';
import { typeOperator } from './element/type.js';
import { exprOperator } from './evaluation/expr.js';
import { jsonSchemaOperator } from './evaluation/json-schema.js';
import { modOperator } from './evaluation/mod.js';
import { regexOperator } from './evaluation/regex.js';
import { textOperator } from './evaluation/text.js';
import type { FieldOpName } from './filter-ast.js';
import { andOperator, norOperator, orOperator } from './logical/and-or-nor.js';
import { notOperator } from './logical/not.js';
import { sampleRateOperator } from './miscellaneous/sample-rate.js';
import type { FieldOperator, QueryOperator, UnsupportedOperator } from './operator.js';

/** Operators that appear in the AST, typed per name so the compiler's dispatch is exhaustive. */
export const FIELD_OPERATORS: { readonly [K in FieldOpName]: FieldOperator<K> } = {
  // Comparison
  $eq: eqOperator,
  $ne: neOperator,
  $gt: gtOperator,
  $gte: gteOperator,
  $lt: ltOperator,
  $lte: lteOperator,
  $in: inOperator,
  $nin: ninOperator,
  // Logical (the field-level one)
  $not: notOperator,
  // Element
  $exists: existsOperator,
  $type: typeOperator,
  // Evaluation
  $regex: regexOperator,
  $mod: modOperator,
  // Array
  $size: sizeOperator,
  $elemMatch: elemMatchOperator,
  // Bitwise
  $bitsAllClear: bitsAllClearOperator,
  $bitsAllSet: bitsAllSetOperator,
  $bitsAnyClear: bitsAnyClearOperator,
  $bitsAnySet: bitsAnySetOperator,
};

function unsupported(where: 'top' | 'field', reason: string): UnsupportedOperator {
  return { kind: 'unsupported', where, reason };
}

const GEO = 'geospatial queries are not supported';

/** Every query operator MongoDB's manual lists, by name. */
export const QUERY_OPERATORS: Readonly<Record<string, QueryOperator>> = {
  ...FIELD_OPERATORS,
  // Array
  $all: allOperator,
  // Logical
  $and: andOperator,
  $or: orOperator,
  $nor: norOperator,
  // Miscellaneous
  $comment: { kind: 'ignored' },
  $sampleRate: sampleRateOperator,
  // Evaluation
  $where: unsupported('top', '$where is refused: tetradb never executes JavaScript from a query'),
  $expr: exprOperator,
  $jsonSchema: jsonSchemaOperator,
  $text: textOperator,
  // Geospatial
  $geoIntersects: unsupported('field', GEO),
  $geoWithin: unsupported('field', GEO),
  $near: unsupported('field', GEO),
  $nearSphere: unsupported('field', GEO),
  $within: unsupported('field', GEO),
  $box: unsupported('field', GEO),
  $center: unsupported('field', GEO),
  $centerSphere: unsupported('field', GEO),
  $geometry: unsupported('field', GEO),
  $maxDistance: unsupported('field', GEO),
  $minDistance: unsupported('field', GEO),
  $polygon: unsupported('field', GEO),
};

/** The table entry for `name`, read as an own property (a filter key "constructor" finds nothing). */
export function lookupOperator(name: string): QueryOperator | undefined {
  return Object.hasOwn(QUERY_OPERATORS, name) ? QUERY_OPERATORS[name] : undefined;
}
