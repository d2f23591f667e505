/**
 * $set (manual: Update Operators > Fields): writes the value at the path, creating missing
 * objects on the way and padding arrays with nulls up to an index (`a.2` on `[1]` gives
 * `[1, null, <value>]`). Setting an equal value changes nothing.
 */

import { cloneValue, valuesEqual, type Doc } from '../../values.js';
import { action, storable, type UpdateAction, type UpdateOperator } from '../operator.js';
import { locate, readChild, writeChild } from '../update-path.js';

/** Writes a copy of `value` at `parts`, creating the way; true when the stored value changed. @throws QUERY_ERROR */
export function setValue(doc: Doc, parts: readonly string[], value: unknown, operator: string): boolean {
  const at = locate(doc, parts, true, operator)!;
  if (valuesEqual(readChild(at.container, at.key), value)) return false;
  writeChild(at.container, at.key, cloneValue(value), operator);
  return true;
}

export const setOperator: UpdateOperator = {
  kind: 'update',
  parse: (path, parts, operand): UpdateAction => {
    const value = storable(operand, path);
    return action('$set', path, parts, (doc) => setValue(doc, parts, value, '$set'));
  },
};
