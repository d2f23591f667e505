/**
 * $unwind: a document per element of the array at a path (`"$sizes"` or `{path,
 * includeArrayIndex, preserveNullAndEmptyArrays}`). A value that is not an array counts as a
 * one-element array; null, missing and an empty array give no document, unless preserved (the
 * document as it is, an empty array's field removed, the index null).
 */

import { isPlainObject, MISSING, type Doc } from '../../values.js';
import { needsOf } from '../dependencies.js';
import { withPath } from '../../path.js';
import { outputField, stageError, streaming, type Stage } from '../stage.js';
import { carryTextScore } from '../../text/index.js';

export function unwindStage(spec: unknown): Stage {
  const stage = '$unwind';
  const options = typeof spec === 'string' ? { path: spec } : spec;
  if (!isPlainObject(options)) stageError(stage, 'expected either a string or an object as specification for $unwind stage');
  for (const k of Object.keys(options)) if (!['path', 'includeArrayIndex', 'preserveNullAndEmptyArrays'].includes(k)) stageError(stage, `unrecognized option to $unwind stage: ${k}`);
  const path = options['path'];
  if (typeof path !== 'string' || !path.startsWith('$') || path.length < 2) stageError(stage, "$unwind's path must be a string starting with '$'");
  const parts = path.slice(1).split('.');
  if (parts.some((p) => p === '' || p.startsWith('$'))) stageError(stage, `$unwind's path is not a valid field path: '${path}'`);
  const indexField = options['includeArrayIndex'] === undefined ? undefined : outputField(stage, options['includeArrayIndex'], 'includeArrayIndex');
  const preserve = options['preserveNullAndEmptyArrays'] ?? false;
  if (typeof preserve !== 'boolean') stageError(stage, 'preserveNullAndEmptyArrays must be a boolean');
  return streaming(stage, needsOf([], [parts.join('.')], false), (chunk) => {
    const out: Doc[] = [];
    for (const doc of chunk) {
      // Through objects only: the path names one place (through arrays $unwind sees nothing).
      let v: unknown = doc;
      for (const p of parts) v = isPlainObject(v) ? (Object.hasOwn(v, p) ? v[p] : MISSING) : MISSING;
      const emit = (value: unknown, index: number | null): void => {
        let d = withPath(doc, parts, value);
        if (indexField !== undefined) d = { ...d, [indexField]: index };
        out.push(carryTextScore(doc, d));
      };
      if (Array.isArray(v)) {
        if (v.length === 0) {
          if (preserve) emit(MISSING, null);
        } else v.forEach((el, i) => emit(el, i));
      } else if (v === null || v === MISSING || v === undefined) {
        if (preserve) emit(v === null ? null : MISSING, null);
      } else emit(v, null);
    }
    return out;
  });
}

