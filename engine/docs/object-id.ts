/**
 * Generated document ids: ObjectId-style 24 lowercase hex characters, time-ordered. Layout as
 * MongoDB's ObjectId: 4 bytes of seconds since the epoch (big-endian), 5 random bytes chosen once
 * per process, and a 3-byte counter that starts at a random value. Ids from one process sort by
 * creation time (within a second, by counter); tetradb stores them as strings, not as an
 * ObjectId type.
 */

import { randomBytes, randomInt } from 'node:crypto';

const PROCESS_RANDOM = randomBytes(5);
const COUNTER_MODULUS = 0x1000000;
let counter = randomInt(COUNTER_MODULUS);

/** A new 24-hex-character id; `nowMs` is for tests (default: the clock). */
export function newObjectId(nowMs: number = Date.now()): string {
  const b = Buffer.allocUnsafe(12);
  b.writeUInt32BE(Math.floor(nowMs / 1000) >>> 0, 0);
  PROCESS_RANDOM.copy(b, 4);
  counter = (counter + 1) % COUNTER_MODULUS;
  b.writeUIntBE(counter, 9, 3);
  return b.toString('hex');
}

/** True when `v` may be a document's `_id`: a string, a finite number or a boolean. */
export function isValidId(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}
