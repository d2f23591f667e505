import { prefixUpperBound, type ScanRange } from '../storage/index.js';

/** A scan range, optionally restricted to keys that start with `prefix`. */
export interface StoreScanRange extends ScanRange {
  prefix?: Uint8Array;
}

/** The plain range a prefixed one stands for: explicit bounds narrower than the prefix still apply, wider ones are clipped to it. */
export function withPrefix(range: StoreScanRange): ScanRange {
  if (range.prefix === undefined) return range;
  const { prefix, ...rest } = range;
  const upper = prefixUpperBound(prefix);
  const lower = rest.gt !== undefined || rest.gte !== undefined ? rest : { ...rest, gte: prefix };
  const bounded: ScanRange = { ...lower };
  if (upper !== undefined && rest.lt === undefined && rest.lte === undefined) bounded.lt = upper;
  if (bounded.gt !== undefined && Buffer.compare(bounded.gt, prefix) < 0) {
    delete bounded.gt;
    bounded.gte = prefix;
  }
  if (bounded.gte !== undefined && Buffer.compare(bounded.gte, prefix) < 0) bounded.gte = prefix;
  if (upper !== undefined) {
    if (bounded.lt !== undefined && Buffer.compare(bounded.lt, upper) > 0) bounded.lt = upper;
    if (bounded.lte !== undefined && Buffer.compare(bounded.lte, upper) >= 0) {
      delete bounded.lte;
      bounded.lt = upper;
    }
  }
  return bounded;
}
