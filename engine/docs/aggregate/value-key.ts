// Keys of values for hashing, so that grouping and set operations cost a map lookup per value
// rather than a comparison with every value kept ($addToSet and the set operators compared every
// pair: 40k values took 2.5-5 s, 200k values 53-164 s, on the event loop).
import { MISSING } from '../values.js';

/** The key of a value: values equal in BSON terms (valuesEqual) share one, others never do. */
export function groupKey(v: unknown): string {
  // Scalars without a JSON round trip (the common keys); the tags keep the types apart.
  if (typeof v === 'string') return `s${v}`;
  if (typeof v === 'number') return Number.isNaN(v) ? 'nNaN' : `n${Object.is(v, -0) ? 0 : v}`;
  if (typeof v === 'boolean') return v ? 'T' : 'F';
  if (v === null || v === MISSING) return 'N';
  return 'j' + JSON.stringify(v === MISSING ? null : v, function (this: Record<string, unknown>, key: string) {
    const raw = this[key];
    if (raw instanceof Date) return { $date: raw.getTime() };
    if (typeof raw === 'number') return Object.is(raw, -0) ? 0 : Number.isNaN(raw) ? { $nan: 1 } : raw;
    return raw;
  });
}

/** Distinct values by groupKey, in first-seen order. */
export class ValueSet {
  readonly #keys = new Set<string>();
  readonly values: unknown[] = [];

  /** Adds `v` unless an equal value is there; true when it was added. */
  add(v: unknown): boolean {
    const key = groupKey(v);
    if (this.#keys.has(key)) return false;
    this.#keys.add(key);
    this.values.push(v);
    return true;
  }

  has(v: unknown): boolean {
    return this.#keys.has(groupKey(v));
  }

  get size(): number {
    return this.values.length;
  }
}
