/**
 * $setOnInsert (manual: Fields): $set, applied only when the update builds the document an
 * upsert inserts; on an existing document it does nothing (its paths still count for conflicts).
 */

import { action, storable, type UpdateAction, type UpdateOperator } from '../operator.js';
import { setValue } from './set.js';

export const setOnInsertOperator: UpdateOperator = {
  kind: 'update',
  parse: (path, parts, operand): UpdateAction => {
    const value = storable(operand, path);
    return action('$setOnInsert', path, parts, (doc, ctx) => ctx.isInsert && setValue(doc, parts, value, '$setOnInsert'));
  },
};
