/**
 * $rename (manual: Fields): `{$rename: {old: "new"}}` moves the value to the new path (removing
 * whatever was there) and removes the old field. A missing source does nothing. Neither path may
 * pass through an array (MongoDB: "The source field cannot be an array element"), and the two
 * may not be equal or one inside the other.
 */

import { getOwn, isPlainObject, MISSING, type Doc } from '../../values.js';
import { updateError, type UpdateAction, type UpdateOperator } from '../operator.js';
import { cannotCreate, removeChild } from '../update-path.js';
import { setValue } from './set.js';

/** Checks a path component the same way compile-update checks operator paths. */
export type PathChecker = (path: string) => string[];

function isPrefix(shorter: readonly string[], longer: readonly string[]): boolean {
  return shorter.length <= longer.length && shorter.every((p, i) => p === longer[i]);
}

// Reads the source through objects only; an array on the way is an error, absence is MISSING.
function readSource(doc: Doc, parts: readonly string[], path: string): { container: Doc; value: unknown } | undefined {
  let container: Doc = doc;
  for (let i = 0; i < parts.length; i++) {
    const v = getOwn(container, parts[i]!);
    if (v === MISSING) return undefined;
    if (i === parts.length - 1) return { container, value: v };
    if (Array.isArray(v)) {
      updateError('$rename', path, `The source field cannot be an array element, '${path}' has an array field called '${parts[i]}'`);
    }
    if (!isPlainObject(v)) return undefined;
    container = v;
  }
  return undefined;
}

// The destination may not pass through an array either; checked before anything is changed.
function checkDestination(doc: Doc, parts: readonly string[], path: string): void {
  let container: Doc = doc;
  for (let i = 0; i < parts.length - 1; i++) {
    const v = getOwn(container, parts[i]!);
    if (v === MISSING) return;
    if (Array.isArray(v)) {
      updateError('$rename', path, `The destination field cannot be an array element, '${path}' has an array field called '${parts[i]}'`);
    }
    if (!isPlainObject(v)) cannotCreate('$rename', parts[i + 1]!, parts[i]!, v);
    container = v;
  }
}

/** $rename needs compile-update's path checks for its destination, hence a factory. */
export function renameOperator(checkPath: PathChecker): UpdateOperator {
  return {
    kind: 'update',
    parse: (path, parts, operand): UpdateAction => {
      if (typeof operand !== 'string') updateError('$rename', path, `The 'to' field for $rename must be a string: ${path}: ${JSON.stringify(operand)}`);
      const to = checkPath(operand);
      if (operand === path) updateError('$rename', path, `The source and target field for $rename must differ: ${path}: "${operand}"`);
      if (isPrefix(parts, to) || isPrefix(to, parts)) {
        updateError('$rename', path, `The source and target field for $rename must not be on the same path: ${path}: "${operand}"`);
      }
      return {
        operator: '$rename',
        path: operand,
        parts: to,
        alsoChanges: [path],
        apply: (doc) => {
          const source = readSource(doc, parts, path);
          if (source === undefined) return false;
          checkDestination(doc, to, operand);
          removeChild(source.container, parts[parts.length - 1]!);
          setValue(doc, to, source.value, '$rename');
          return true;
        },
      };
    },
  };
}
