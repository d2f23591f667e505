/**
 * $pop (manual: Array): `1` removes the last element, `-1` the first. A missing field or an
 * empty array is left alone; a non-array field is an error.
 */

import { describeValue, MISSING } from '../../values.js';
import { action, updateError, type UpdateAction, type UpdateOperator } from '../operator.js';
import { locate, readChild, typeName, writeChild } from '../update-path.js';

export const popOperator: UpdateOperator = {
  kind: 'update',
  parse: (path, parts, operand): UpdateAction => {
    if (operand !== 1 && operand !== -1) updateError('$pop', path, `$pop expects 1 or -1, found: ${describeValue(operand)}`);
    return action('$pop', path, parts, (doc) => {
      const at = locate(doc, parts, false, '$pop');
      if (at === undefined) return false;
      const old = readChild(at.container, at.key);
      if (old === MISSING) return false;
      if (!Array.isArray(old)) updateError('$pop', path, `Path '${path}' contains an element of non-array type '${typeName(old)}'`);
      if (old.length === 0) return false;
      writeChild(at.container, at.key, operand === 1 ? old.slice(0, -1) : old.slice(1), '$pop');
      return true;
    });
  },
};
