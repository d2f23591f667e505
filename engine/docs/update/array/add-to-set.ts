/**
 * $addToSet (manual: Array): appends each value (one, or the members of `{$each: [...]}`) that
 * the array does not already hold, by BSON equality (so an embedded document must match field
 * for field, in order). A missing field becomes an array; a non-array field is an error.
 */

import { cloneValue, isPlainObject, MISSING, valuesEqual } from '../../values.js';
import { action, storable, updateError, type UpdateAction, type UpdateOperator } from '../operator.js';
import { locate, readChild, typeName, writeChild } from '../update-path.js';

function values(operand: unknown, path: string): readonly unknown[] {
  if (!isPlainObject(operand) || Object.keys(operand)[0] !== '$each') return [storable(operand, path)];
  const extra = Object.keys(operand).filter((k) => k !== '$each');
  if (extra.length > 0) updateError('$addToSet', path, `Found unexpected fields after $each in $addToSet: ${extra.join(', ')}`);
  const each = operand['$each'];
  if (!Array.isArray(each)) {
    updateError('$addToSet', path, `The argument to $each in $addToSet must be an array but it was of type ${typeName(each)}`);
  }
  return storable(each, path) as unknown[];
}

export const addToSetOperator: UpdateOperator = {
  kind: 'update',
  parse: (path, parts, operand): UpdateAction => {
    const additions = values(operand, path);
    return action('$addToSet', path, parts, (doc) => {
      const at = locate(doc, parts, true, '$addToSet')!;
      const old = readChild(at.container, at.key);
      if (old !== MISSING && !Array.isArray(old)) {
        updateError('$addToSet', path, `Cannot apply $addToSet to non-array field. Field named '${path}' has non-array type ${typeName(old)}`);
      }
      const next = old === MISSING ? [] : [...old];
      for (const v of additions) if (!next.some((x) => valuesEqual(x, v))) next.push(cloneValue(v));
      if (old !== MISSING && next.length === old.length) return false;
      writeChild(at.container, at.key, next, '$addToSet');
      return true;
    });
  },
};
