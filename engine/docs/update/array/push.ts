/**
 * $push (manual: Update Operators > Array) with the $each, $position, $sort and $slice
 * modifiers. A missing field becomes an array; a non-array field is an error. The modifiers
 * apply in MongoDB's order whatever their order in the operand: insert at $position (default:
 * the end; negative counts from the end), then $sort (1/-1 on whole elements, or a sort
 * specification for document elements), then $slice (first n, or last n when negative).
 */

import { compileSort } from '../../sort.js';
import { cloneValue, compareValues, isPlainObject, MISSING, valuesEqual } from '../../values.js';
import { action, storable, updateError, type UpdateAction, type UpdateOperator } from '../operator.js';
import { locate, readChild, typeName, writeChild } from '../update-path.js';

const CLAUSES = new Set(['$each', '$slice', '$sort', '$position']);

interface PushSpec {
  readonly each: readonly unknown[];
  readonly position: number | undefined;
  readonly slice: number | undefined;
  readonly sort: ((a: unknown, b: unknown) => number) | undefined;
}

function wholeNumber(value: unknown, clause: string, path: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    updateError('$push', path, `The value for ${clause} must be an integer value but was given type: ${typeName(value)}`);
  }
  return value;
}

function parseSort(spec: unknown, path: string): (a: unknown, b: unknown) => number {
  if (spec === 1 || spec === -1) return (a, b) => spec * compareValues(a, b);
  if (isPlainObject(spec) && Object.keys(spec).length > 0) {
    const sort = compileSort(spec);
    return (a, b) => sort.compare(a, b);
  }
  updateError('$push', path, 'The $sort is invalid: use 1/-1 to sort the whole element, or {field:1/-1} to sort embedded fields');
}

function parseSpec(operand: unknown, path: string): PushSpec {
  if (!isPlainObject(operand) || !Object.hasOwn(operand, '$each')) {
    return { each: [storable(operand, path)], position: undefined, slice: undefined, sort: undefined };
  }
  for (const key of Object.keys(operand)) {
    if (!CLAUSES.has(key)) updateError('$push', path, `Unrecognized clause in $push: ${key}`);
  }
  const each = operand['$each'];
  if (!Array.isArray(each)) {
    updateError('$push', path, `The argument to $each in $push must be an array but it was of type: ${typeName(each)}`);
  }
  storable(each, path);
  return {
    each,
    position: Object.hasOwn(operand, '$position') ? wholeNumber(operand['$position'], '$position', path) : undefined,
    slice: Object.hasOwn(operand, '$slice') ? wholeNumber(operand['$slice'], '$slice', path) : undefined,
    sort: Object.hasOwn(operand, '$sort') ? parseSort(operand['$sort'], path) : undefined,
  };
}

export const pushOperator: UpdateOperator = {
  kind: 'update',
  parse: (path, parts, operand): UpdateAction => {
    const spec = parseSpec(operand, path);
    return action('$push', path, parts, (doc) => {
      const at = locate(doc, parts, true, '$push')!;
      const old = readChild(at.container, at.key);
      if (old !== MISSING && !Array.isArray(old)) {
        updateError('$push', path, `The field '${path}' must be an array but is of type ${typeName(old)}`);
      }
      const current = old === MISSING ? [] : old;
      const n = current.length;
      const pos = spec.position === undefined ? n : spec.position < 0 ? Math.max(0, n + spec.position) : Math.min(spec.position, n);
      let next = [...current.slice(0, pos), ...spec.each.map(cloneValue), ...current.slice(pos)];
      if (spec.sort !== undefined) next.sort(spec.sort);
      if (spec.slice !== undefined) next = spec.slice >= 0 ? next.slice(0, spec.slice) : next.slice(Math.max(0, next.length + spec.slice));
      if (old !== MISSING && valuesEqual(old, next)) return false;
      writeChild(at.container, at.key, next, '$push');
      return true;
    });
  },
};
