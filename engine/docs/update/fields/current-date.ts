/**
 * $currentDate (manual: Fields): sets the field to the current date. The operand is a boolean
 * (MongoDB sets a date for either) or `{$type: "date"}`; `{$type: "timestamp"}` is refused
 * because the model has no timestamp type.
 */

import { isPlainObject } from '../../values.js';
import { action, updateError, type UpdateAction, type UpdateOperator } from '../operator.js';
import { setValue } from './set.js';

export const currentDateOperator: UpdateOperator = {
  kind: 'update',
  parse: (path, parts, operand): UpdateAction => {
    if (typeof operand !== 'boolean') {
      const type = isPlainObject(operand) && Object.keys(operand).length === 1 ? operand['$type'] : undefined;
      if (type === 'timestamp') updateError('$currentDate', path, "unsupported: $currentDate with {$type: 'timestamp'} (tetradb has no timestamp type; use 'date')");
      if (type !== 'date') {
        updateError('$currentDate', path, "The '$type' string field is required to be 'date' or 'timestamp': {$currentDate: {field : {$type: 'date'}}}");
      }
    }
    return action('$currentDate', path, parts, (doc, ctx) => setValue(doc, parts, new Date(ctx.now.getTime()), '$currentDate'));
  },
};
