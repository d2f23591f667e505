/**
 * $type (manual: Element). Accepts BSON type names, numeric codes, the alias "number", or an
 * array of them; matches when some value at the path (an array field: an element, or the array
 * itself for "array") has one of the types. JSON numbers are typed by value: see values.ts.
 */

import { bsonTypeOf } from '../../values.js';
import type { TypeOp } from '../filter-ast.js';
import { anyValue, queryError, type FieldOperator } from '../operator.js';

// MongoDB's type codes. Types this model cannot hold are accepted and simply never match.
const TYPE_CODES = new Map<string, number>([
  ['double', 1],
  ['string', 2],
  ['object', 3],
  ['array', 4],
  ['binData', 5],
  ['undefined', 6],
  ['objectId', 7],
  ['bool', 8],
  ['date', 9],
  ['null', 10],
  ['regex', 11],
  ['dbPointer', 12],
  ['javascript', 13],
  ['symbol', 14],
  ['javascriptWithScope', 15],
  ['int', 16],
  ['timestamp', 17],
  ['long', 18],
  ['decimal', 19],
  ['minKey', -1],
  ['maxKey', 127],
]);
const NAMES_BY_CODE = new Map([...TYPE_CODES].map(([name, code]) => [code, name]));

/** A type name $type accepts: a BSON type name or the alias "number". */
export type BsonTypeAlias =
  | 'double' | 'string' | 'object' | 'array' | 'binData' | 'undefined' | 'objectId' | 'bool' | 'date' | 'null'
  | 'regex' | 'dbPointer' | 'javascript' | 'symbol' | 'javascriptWithScope' | 'int' | 'timestamp' | 'long'
  | 'decimal' | 'minKey' | 'maxKey' | 'number';

const NUMERIC = new Set(['int', 'long', 'double', 'decimal']);

/** The type `name` stands for ($type's names, also $jsonSchema's `bsonType`), or undefined for an unknown name. */
export function typeAliasOf(name: string): BsonTypeAlias | undefined {
  return name === 'number' || TYPE_CODES.has(name) ? (name as BsonTypeAlias) : undefined;
}

/** A predicate true when a value itself (an array as a whole, never its elements) has one of the types. */
export function hasTypeIn(types: readonly BsonTypeAlias[]): (value: unknown) => boolean {
  const wanted = new Set<string>(types);
  const anyNumber = wanted.has('number');
  return (v) => {
    const t = bsonTypeOf(v);
    return wanted.has(t) || (anyNumber && NUMERIC.has(t));
  };
}

function alias(member: unknown): BsonTypeAlias {
  if (typeof member === 'string') {
    const name = typeAliasOf(member);
    if (name !== undefined) return name;
    queryError('$type', `Unknown type name alias: ${member}`, { type: member });
  }
  if (typeof member === 'number') {
    const name = Number.isInteger(member) ? NAMES_BY_CODE.get(member) : undefined;
    if (name === undefined) queryError('$type', `Invalid numerical type code: ${member}`, { type: member });
    return name as BsonTypeAlias;
  }
  queryError('$type', 'type must be represented as a number or a string');
}

export const typeOperator: FieldOperator<'$type'> = {
  kind: 'field',
  parse: (operand): TypeOp => ({ op: '$type', value: Array.isArray(operand) ? operand.map(alias) : [alias(operand)] }),
  compile: (op) => anyValue('traverse', hasTypeIn(op.value)),
};
