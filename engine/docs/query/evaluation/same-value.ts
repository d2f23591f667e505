/**
 * Equality as MongoDB's $jsonSchema tells it (UnorderedFieldsBSONElementComparator, used by
 * `enum` and `uniqueItems`): numbers by value (1 and 1.0 are one value, NaN equals NaN), strings
 * by code units (no collation), arrays element by element, and embedded documents by their
 * fields whatever their order (`{x: 1, y: 1}` equals `{y: 1, x: 1}`).
 */

import { isPlainObject } from '../../values.js';

/** A string that two values share exactly when they are equal in the sense above. */
export function sameValueKey(v: unknown): string {
  switch (typeof v) {
    case 'number':
      // `${n}` is the shortest text that reads back as n: one text per number; -0 is 0.
      return Object.is(v, -0) ? 'n0' : `n${v}`;
    case 'string':
      return `s${JSON.stringify(v)}`;
    case 'boolean':
      return v ? 'bt' : 'bf';
    default:
      if (v === null) return 'z';
      if (Array.isArray(v)) return `a[${v.map(sameValueKey).join(',')}]`;
      if (v instanceof Date) return `d${v.getTime()}`;
      if (isPlainObject(v)) {
        const fields = Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${sameValueKey(v[k])}`);
        return `o{${fields.join(',')}}`;
      }
      return `?${String(v)}`;
  }
}
