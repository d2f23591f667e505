/**
 * $unset (manual: Fields): removes the field (the operand's value is ignored). Unsetting a path
 * that does not exist does nothing; an array element is set to null rather than removed, so the
 * positions of the others do not shift.
 */

import { MISSING } from '../../values.js';
import { action, type UpdateAction, type UpdateOperator } from '../operator.js';
import { locate, readChild, removeChild } from '../update-path.js';

export const unsetOperator: UpdateOperator = {
  kind: 'update',
  parse: (path, parts): UpdateAction =>
    action('$unset', path, parts, (doc) => {
      const at = locate(doc, parts, false, '$unset');
      if (at === undefined) return false;
      const old = readChild(at.container, at.key);
      if (old === MISSING || (Array.isArray(at.container) && old === null)) return false;
      removeChild(at.container, at.key);
      return true;
    }),
};
