/**
 * Validation of everything a caller hands the key-value model. Each check names its field and
 * runs before anything is read or written, so a bad request changes nothing.
 */

import { fail } from '../errors.js';
import { decodeCursor } from './kv-codec.js';
import { KV_LIMITS } from './kv-limits.js';

// String.prototype.isWellFormed is in Node 20 but in the ES2024 lib, newer than ours.
interface WellFormedCheck {
  isWellFormed(): boolean;
}

const MS_PER_SECOND = 1000;

function invalid(field: string, message: string): never {
  fail('VALIDATION_FAILED', `${field} ${message}`, { field });
}

// A lone surrogate has no UTF-8 form: Buffer would store U+FFFD and the string would not round-trip.
function isWellFormed(s: string): boolean {
  return (s as unknown as WellFormedCheck).isWellFormed();
}

/** `s` when it is a well-formed string of min..max UTF-8 bytes. @throws VALIDATION_FAILED */
function utf8String(field: string, s: unknown, min: number, max: number, what: string): string {
  if (typeof s !== 'string') invalid(field, `must be ${what}`);
  // A UTF-16 unit is at least one UTF-8 byte: an over-long string is rejected without measuring it.
  if (s.length > max) invalid(field, `must be ${what}`);
  const bytes = Buffer.byteLength(s, 'utf8');
  if (bytes < min || bytes > max) invalid(field, `must be ${what}`);
  if (bytes !== s.length && !isWellFormed(s)) invalid(field, 'must not contain a lone UTF-16 surrogate');
  return s;
}

/** A key: a string of 1..512 UTF-8 bytes. @throws VALIDATION_FAILED */
export function validateKey(key: unknown): string {
  return utf8String('key', key, 1, KV_LIMITS.maxKeyBytes, `a string of 1 to ${KV_LIMITS.maxKeyBytes} UTF-8 bytes`);
}

/** A value: a string of at most 1 MiB in UTF-8. @throws VALIDATION_FAILED */
export function validateValue(value: unknown): string {
  return utf8String('value', value, 0, KV_LIMITS.maxValueBytes, `a string of at most ${KV_LIMITS.maxValueBytes} UTF-8 bytes`);
}

/**
 * A ttl in seconds turned into whole milliseconds (undefined/null: no expiry). Rounded up, so a
 * key lives at least as long as asked and its ISO expiresAt is exact. @throws VALIDATION_FAILED
 */
export function validateTtl(ttl: unknown): number | null {
  if (ttl === undefined || ttl === null) return null;
  if (typeof ttl !== 'number' || !Number.isFinite(ttl) || ttl <= 0 || ttl > KV_LIMITS.maxTtlSeconds) {
    invalid('ttl', `must be a number of seconds greater than 0 and at most ${KV_LIMITS.maxTtlSeconds}`);
  }
  const ms = ttl * MS_PER_SECOND;
  // The product is within half an ulp of the true one, so a result a few ulps from an integer is
  // that integer (1.1 * 1000 = 1100.0000000000002 means 1100 ms, not 1101).
  const nearest = Math.round(ms);
  const whole = Math.abs(ms - nearest) <= 4 * Number.EPSILON * ms ? nearest : Math.ceil(ms);
  return Math.max(1, whole);
}

/** A list prefix: a string of at most 512 UTF-8 bytes; undefined/null/'' means all keys. @throws VALIDATION_FAILED */
export function validatePrefix(prefix: unknown): string {
  if (prefix === undefined || prefix === null) return '';
  return utf8String('prefix', prefix, 0, KV_LIMITS.maxKeyBytes, `a string of at most ${KV_LIMITS.maxKeyBytes} UTF-8 bytes`);
}

/**
 * A list cursor from a previous page, as the key bytes to continue after; undefined/null/''
 * start at the beginning (an empty query parameter is the same as none). @throws VALIDATION_FAILED
 */
export function validateCursor(cursor: unknown): Buffer | undefined {
  if (cursor === undefined || cursor === null || cursor === '') return undefined;
  const bytes = typeof cursor === 'string' ? decodeCursor(cursor, KV_LIMITS.maxKeyBytes) : undefined;
  if (bytes === undefined) invalid('cursor', 'must be a nextCursor returned by a previous list');
  return bytes;
}

/**
 * A page size: an integer 1..1000, default 100. A string of decimal digits is accepted too, since
 * it usually comes from a query string. @throws VALIDATION_FAILED
 */
export function validateLimit(limit: unknown): number {
  if (limit === undefined || limit === null) return KV_LIMITS.defaultListLimit;
  const n = typeof limit === 'string' && /^[0-9]{1,7}$/.test(limit) ? Number(limit) : limit;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > KV_LIMITS.maxListLimit) {
    invalid('limit', `must be an integer between 1 and ${KV_LIMITS.maxListLimit}`);
  }
  return n;
}
