/**
 * $pull and $pullAll (manual: Array). $pull removes every element matching a condition, read as
 * MongoDB reads it: an operator expression (`{$gte: 6}`) is applied to each element as to a field
 * value (an array element matches through its own elements); any other document is a filter on
 * each element that is a document (`{score: 8, item: "B"}` removes documents with those values,
 * whatever their other fields); anything else is compared for equality. $pullAll removes the
 * elements equal to any of the listed values.
 */

import { compileFilter, compileValueMatcher } from '../../query/compile-filter.js';
import { lookupOperator } from '../../query/operator-table.js';
import { compareValues, isPlainObject, MISSING } from '../../values.js';
import { action, updateError, type UpdateAction, type UpdateOperator } from '../operator.js';
import { locate, readChild, typeName, writeChild } from '../update-path.js';

// An operator that takes a path ($gt, $in, $regex ...) starts an operator expression; $and and
// other top-level operators start a filter.
function isPathOperator(name: string): boolean {
  if (name === '$options') return true;
  const entry = lookupOperator(name);
  return entry !== undefined && (entry.kind === 'field' || entry.kind === 'expands' || (entry.kind === 'unsupported' && entry.where === 'field'));
}

function elementMatcher(operand: unknown): (el: unknown) => boolean {
  if (isPlainObject(operand)) {
    const first = Object.keys(operand)[0];
    if (first !== undefined && isPathOperator(first)) return compileValueMatcher(operand);
    const filter = compileFilter(operand);
    return (el) => isPlainObject(el) && filter.test(el);
  }
  return (el) => compareValues(el, operand) === 0;
}

function removing(name: '$pull' | '$pullAll', path: string, parts: readonly string[], matches: (el: unknown) => boolean): UpdateAction {
  return action(name, path, parts, (doc) => {
    const at = locate(doc, parts, false, name);
    if (at === undefined) return false;
    const old = readChild(at.container, at.key);
    if (old === MISSING) return false;
    if (!Array.isArray(old)) updateError(name, path, `Cannot apply ${name} to a non-array value: the field '${path}' has type ${typeName(old)}`);
    const next = old.filter((el) => !matches(el));
    if (next.length === old.length) return false;
    writeChild(at.container, at.key, next, name);
    return true;
  });
}

export const pullOperator: UpdateOperator = {
  kind: 'update',
  parse: (path, parts, operand): UpdateAction => removing('$pull', path, parts, elementMatcher(operand)),
};

export const pullAllOperator: UpdateOperator = {
  kind: 'update',
  parse: (path, parts, operand): UpdateAction => {
    if (!Array.isArray(operand)) updateError('$pullAll', path, `$pullAll requires an array argument but was given a ${typeName(operand)}`);
    return removing('$pullAll', path, parts, (el) => operand.some((v) => compareValues(el, v) === 0));
  },
};
