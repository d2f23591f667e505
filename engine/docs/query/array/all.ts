/**
 * $all (manual: Array). Rewritten as MongoDB does: `{tags: {$all: ["ssl", "security"]}}` is
 * `{$and: [{tags: "ssl"}, {tags: "security"}]}`, and `$all` of `$elemMatch` documents is the AND of
 * those `$elemMatch`es. An empty `$all` matches nothing.
 */

import { isPlainObject } from '../../values.js';
import type { FieldOp } from '../filter-ast.js';
import { queryError, type ExpandingOperator } from '../operator.js';

function isElemMatchMember(member: unknown): boolean {
  return isPlainObject(member) && Object.keys(member)[0] === '$elemMatch';
}

export const allOperator: ExpandingOperator = {
  kind: 'expands',
  parse: (operand, ctx): FieldOp[] => {
    if (!Array.isArray(operand)) queryError('$all', '$all needs an array');
    if (operand.length === 0) return [{ op: '$in', value: [] }];
    if (isElemMatchMember(operand[0])) {
      return operand.map((member) => {
        if (!isElemMatchMember(member) || Object.keys(member as object).length !== 1) {
          queryError('$all', '$all/$elemMatch has to be consistent');
        }
        const ops = ctx.parseOperators(member as Record<string, unknown>, '$all');
        return ops[0]!;
      });
    }
    return operand.map((member): FieldOp => {
      if (isPlainObject(member) && Object.keys(member)[0]?.startsWith('$')) queryError('$all', 'no $ expressions in $all');
      return { op: '$eq', value: member };
    });
  },
};
