/**
 * $bit (manual: Update Operators > Bitwise): `{$bit: {field: {and|or|xor: <integer>}}}`, several
 * operations on one field applied in the order written, as MongoDB's BitNode applies its list.
 * Operands and the field must be integers (BSON int or long); a missing field starts from 0, so
 * it is created. The operations are 64-bit two's complement, as MongoDB's SafeNum computes them.
 * tetradb's integers reach 2^53 - 1 in magnitude (values.ts: a larger one is a double), as in the
 * aggregation bitwise operators; results of such operands are exact (the one outside that range,
 * -2^53, is stored exactly and then types as a double).
 */

import { bsonTypeOf, describeValue, getOwn, isPlainObject, MISSING } from '../../values.js';
import { action, updateError, type UpdateAction, type UpdateOperator } from '../operator.js';
import { locate, readChild, writeChild } from '../update-path.js';

const OPERATIONS: Readonly<Record<string, (a: bigint, b: bigint) => bigint>> = {
  and: (a, b) => a & b,
  or: (a, b) => a | b,
  xor: (a, b) => a ^ b,
};

const FORMAT = '{$bit: {field: {and/or/xor: #}}';

const isInteger = (v: unknown): v is number => {
  const type = bsonTypeOf(v);
  return type === 'int' || type === 'long';
};

export const bitOperator: UpdateOperator = {
  kind: 'update',
  parse: (path, parts, operand): UpdateAction => {
    if (!isPlainObject(operand)) {
      updateError('$bit', path, `The $bit modifier is not compatible with a ${bsonTypeOf(operand)}. You must pass in an embedded document: ${FORMAT}`);
    }
    const ops: Array<{ fn: (a: bigint, b: bigint) => bigint; operand: bigint }> = [];
    for (const name of Object.keys(operand)) {
      const v = operand[name];
      const shown = `{${name}: ${describeValue(v)}}`;
      const fn = Object.hasOwn(OPERATIONS, name) ? OPERATIONS[name] : undefined;
      if (fn === undefined) updateError('$bit', path, `The $bit modifier only supports 'and', 'or', and 'xor', not '${name}' which is an unknown operator: ${shown}`);
      if (!isInteger(v)) updateError('$bit', path, `The $bit modifier field must be an Integer(32/64 bit); a '${bsonTypeOf(v)}' is not supported here: ${shown}`);
      ops.push({ fn, operand: BigInt(v) });
    }
    if (ops.length === 0) updateError('$bit', path, `You must pass in at least one bitwise operation. The format is: ${FORMAT}`);
    return action('$bit', path, parts, (doc) => {
      const at = locate(doc, parts, true, '$bit')!;
      const old = readChild(at.container, at.key);
      if (old !== MISSING && !isInteger(old)) {
        const id = getOwn(doc, '_id');
        const idText = id === MISSING ? '' : `_id: ${describeValue(id)}`;
        updateError('$bit', path, `Cannot apply $bit to a value of non-integral type.${idText} has the field ${parts[parts.length - 1]} of non-integer type ${bsonTypeOf(old)}`);
      }
      let value = old === MISSING ? 0n : BigInt(old);
      for (const op of ops) value = BigInt.asIntN(64, op.fn(value, op.operand));
      const result = Number(value);
      if (old === result) return false;
      writeChild(at.container, at.key, result, '$bit');
      return true;
    });
  },
};
