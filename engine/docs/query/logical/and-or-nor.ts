/**
 * $and, $or, $nor (manual: Logical): each takes a nonempty array of filters. Several keys in one
 * filter document are already an implicit $and; the compiler flattens explicit ones into it.
 */

import { isPlainObject } from '../../values.js';
import type { FilterNode } from '../filter-ast.js';
import { queryError, type LogicalOperator } from '../operator.js';

function logical(name: '$and' | '$or' | '$nor'): LogicalOperator {
  const kind = name === '$and' ? 'and' : name === '$or' ? 'or' : 'nor';
  return {
    kind: 'logical',
    parse: (operand, ctx): FilterNode => {
      if (!Array.isArray(operand) || operand.length === 0) queryError(name, `${name} must be a nonempty array`);
      const children = operand.map((member) => {
        if (!isPlainObject(member)) queryError(name, `${name} entries need to be full objects`);
        return ctx.parseFilter(member, name);
      });
      return { kind, children };
    },
  };
}

export const andOperator = logical('$and');
export const orOperator = logical('$or');
export const norOperator = logical('$nor');
