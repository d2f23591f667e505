/**
 * String operators that count UTF-8 bytes (manual: $substrBytes, $substr, $strLenBytes,
 * $indexOfBytes), as MongoDB does: a byte range that starts or ends inside a character is an
 * error, never half a character. `$substr` is MongoDB's deprecated alias of `$substrBytes`.
 */

import { bsonTypeOf } from '../../values.js';
import { compileArgs, exprError, isNullish, unary, type ExprOperator } from './expression.js';
import { coerceToString } from './string.js';

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

/** True when byte `i` of `bytes` continues a character (10xxxxxx). */
const continues = (bytes: Buffer, i: number): boolean => i < bytes.length && (bytes[i]! & 0xc0) === 0x80;

const substrBytes: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const [s, start, count] = compileArgs(args, ctx, name, 3);
    return (scope) => {
      const bytes = utf8(coerceToString(s!(scope), name));
      const from = start!(scope);
      const n = count!(scope);
      if (typeof from !== 'number') exprError(name, `${name}: starting index must be a numeric type (is BSON type ${bsonTypeOf(from)})`);
      if (typeof n !== 'number') exprError(name, `${name}: length must be a numeric type (is BSON type ${bsonTypeOf(n)})`);
      const lower = Math.trunc(from);
      if (!(lower >= 0)) exprError(name, `${name}: starting index must be non-negative (got: ${lower})`);
      // A negative length means the rest of the string.
      const upper = n < 0 ? bytes.length : Math.min(bytes.length, lower + Math.trunc(n));
      if (continues(bytes, lower)) exprError(name, `${name}: Invalid range, starting index is a UTF-8 continuation byte.`);
      if (continues(bytes, upper)) exprError(name, `${name}: Invalid range, ending index is in the middle of a UTF-8 character.`);
      return lower >= bytes.length ? '' : bytes.subarray(lower, upper).toString('utf8');
    };
  },
};

function byteIndex(v: unknown, name: string, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) exprError(name, `${name} requires an integral ${what}, found a value of type: ${bsonTypeOf(v)}, with value: ${String(v)}`);
  if (v < 0) exprError(name, `${name} requires a nonnegative ${what}, found: ${v}`);
  return v;
}

const indexOfBytes: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const [s, sub, start, end] = compileArgs(args, ctx, name, 2, 4);
    return (scope) => {
      const text = s!(scope);
      if (isNullish(text)) return null;
      if (typeof text !== 'string') exprError(name, `${name} requires a string as the first argument, found: ${bsonTypeOf(text)}`);
      const token = sub!(scope);
      if (typeof token !== 'string') exprError(name, `${name} requires a string as the second argument, found: ${bsonTypeOf(token)}`);
      const bytes = utf8(text);
      const from = start === undefined ? 0 : byteIndex(start(scope), name, 'starting index');
      const to = end === undefined ? bytes.length : Math.min(bytes.length, byteIndex(end(scope), name, 'ending index'));
      if (from > bytes.length || to < from) return -1;
      const at = bytes.subarray(0, to).indexOf(utf8(token), from);
      return at;
    };
  },
};

export const stringBytesOperators: Record<string, ExprOperator> = {
  $substrBytes: substrBytes,
  $substr: substrBytes,
  $strLenBytes: unary((v, name) => {
    if (typeof v !== 'string') exprError(name, `${name} requires a string argument, found: ${bsonTypeOf(v)}`);
    return Buffer.byteLength(v, 'utf8');
  }),
  $indexOfBytes: indexOfBytes,
};
