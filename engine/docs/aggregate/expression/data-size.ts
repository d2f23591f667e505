/**
 * Data size operators (manual: $binarySize, $bsonSize). `$binarySize` of a string is its length in
 * UTF-8 bytes (there is no BinData type). `$bsonSize` of a document is the size of its BSON
 * encoding, each value typed as tetradb types it (docs/mql.md, Types): an integer in the int32
 * range is an int32, another integer up to 2^53 - 1 in magnitude an int64, any other number a
 * double, a date a BSON date. A null or missing argument gives null for both.
 */

import { bsonTypeOf, isPlainObject, type Doc } from '../../values.js';
import { exprError, isNullish, unary, type ExprOperator } from './expression.js';

// BSON's layout (bsonspec.org): a document is an int32 length, its elements and a 0 byte; an
// element is a type byte, the name as a NUL-terminated string, then the value.
const DOC_FRAME_BYTES = 4 + 1;
const TYPE_BYTE = 1;
const CSTRING_NUL = 1;
/** A string value: an int32 length, the UTF-8 bytes, a NUL. */
const STRING_FRAME_BYTES = 4 + 1;
const INT32_BYTES = 4;
const INT64_BYTES = 8;
const DOUBLE_BYTES = 8;
const DATE_BYTES = 8;
const BOOL_BYTES = 1;
const NULL_BYTES = 0;

/** The bytes of a value's BSON encoding after its element's type byte and name. */
function valueSize(v: unknown): number {
  if (typeof v === 'string') return STRING_FRAME_BYTES + Buffer.byteLength(v, 'utf8');
  if (Array.isArray(v)) {
    // An array is a document whose field names are the indexes "0", "1", ...
    let size = DOC_FRAME_BYTES;
    for (let i = 0; i < v.length; i++) size += TYPE_BYTE + String(i).length + CSTRING_NUL + valueSize(v[i]);
    return size;
  }
  if (isPlainObject(v)) return documentSize(v);
  switch (bsonTypeOf(v)) {
    case 'int':
      return INT32_BYTES;
    case 'long':
      return INT64_BYTES;
    case 'double':
      return DOUBLE_BYTES;
    case 'date':
      return DATE_BYTES;
    case 'bool':
      return BOOL_BYTES;
    default:
      return NULL_BYTES;
  }
}

/** The size in bytes of a document's BSON encoding, with tetradb's number typing. */
export function documentSize(doc: Doc): number {
  let size = DOC_FRAME_BYTES;
  for (const [k, v] of Object.entries(doc)) size += TYPE_BYTE + Buffer.byteLength(k, 'utf8') + CSTRING_NUL + valueSize(v);
  return size;
}

export const dataSizeOperators: Record<string, ExprOperator> = {
  $binarySize: unary((v, name) => {
    if (isNullish(v)) return null;
    if (typeof v !== 'string') exprError(name, `$binarySize requires a string or BinData argument, found: ${bsonTypeOf(v)}`);
    return Buffer.byteLength(v, 'utf8');
  }),
  $bsonSize: unary((v, name) => {
    if (isNullish(v)) return null;
    if (!isPlainObject(v)) exprError(name, `$bsonSize requires a document input, found: ${bsonTypeOf(v)}`);
    return documentSize(v);
  }),
};
