/**
 * Bitwise operators (manual: $bitAnd, $bitOr, $bitXor, $bitNot) over int and long operands, in
 * 64-bit two's complement as MongoDB computes them. tetradb's numbers carry no int/long tag: an
 * operand is an integer of at most 2^53 - 1 in magnitude (values.ts's int and long); anything
 * else, fractions, -0 and larger integers (which are doubles here), is refused as MongoDB refuses
 * doubles. Results of such operands stay within [-2^53, 2^53 - 1] and are exact. Null or missing
 * gives null.
 */

import { bsonTypeOf } from '../../values.js';
import { compileArgs, exprError, isNullish, unary, type ExprOperator } from './expression.js';

function operand(v: unknown, name: string): bigint {
  const type = bsonTypeOf(v);
  if (type !== 'int' && type !== 'long') exprError(name, `${name} only supports int and long operands.`);
  return BigInt(v as number);
}

function bitwise(identity: bigint, fold: (a: bigint, b: bigint) => bigint): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      const parts = compileArgs(args, ctx, name, 0, Infinity);
      return (scope) => {
        let acc = identity;
        for (const e of parts) {
          const v = e(scope);
          if (isNullish(v)) return null;
          acc = fold(acc, operand(v, name));
        }
        return Number(BigInt.asIntN(64, acc));
      };
    },
  };
}

export const bitwiseOperators: Record<string, ExprOperator> = {
  $bitAnd: bitwise(-1n, (a, b) => a & b),
  $bitOr: bitwise(0n, (a, b) => a | b),
  $bitXor: bitwise(0n, (a, b) => a ^ b),
  $bitNot: unary((v, name) => (isNullish(v) ? null : Number(~operand(v, name)))),
};
