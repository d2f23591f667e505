/**
 * $min and $max (manual: Fields): write the operand when it is less (greater) than the current
 * value in BSON comparison order (so across types, e.g. null < numbers < strings), or when the
 * field is missing.
 */

import { cloneValue, compareValues, MISSING } from '../../values.js';
import { action, storable, type UpdateAction, type UpdateOperator } from '../operator.js';
import { locate, readChild, writeChild } from '../update-path.js';

function bound(name: '$min' | '$max'): UpdateOperator {
  return {
    kind: 'update',
    parse: (path, parts, operand): UpdateAction => {
      const value = storable(operand, path);
      return action(name, path, parts, (doc) => {
        const at = locate(doc, parts, true, name)!;
        const old = readChild(at.container, at.key);
        if (old !== MISSING) {
          const c = compareValues(value, old);
          if (name === '$min' ? c >= 0 : c <= 0) return false;
        }
        writeChild(at.container, at.key, cloneValue(value), name);
        return true;
      });
    },
  };
}

export const minOperator = bound('$min');
export const maxOperator = bound('$max');
