// The data every engine gets: the same keys and values, from a fixed seed, so a run compares
// engines on identical bytes. Keys are 16-byte zero-padded decimal ids (they sort like the ids);
// values are ~100 random bytes cut from a seeded pool.

import { seededRandom } from '../../test/helpers/random.js';

export { seededRandom };

export const KEY_BYTES = 16;
export const VALUE_BYTES = 100;

const POOL_BYTES = 1 << 20;
const SEED = 0x7e7a_db;

const pool = (() => {
  const rand = seededRandom(SEED);
  const bytes = Buffer.allocUnsafe(POOL_BYTES);
  for (let i = 0; i < POOL_BYTES; i++) bytes[i] = (rand() * 256) | 0;
  return bytes;
})();

/** The key of id `i`: 16 ASCII digits. */
export function keyOf(i: number): Buffer {
  return Buffer.from(String(i).padStart(KEY_BYTES, '0'), 'latin1');
}

/**
 * The value of id `i`: a fresh copy (callers hand it to a store that may keep it), so no engine
 * benefits from values sharing one buffer.
 */
export function valueOf(i: number): Buffer {
  const offset = (i * 7919) % (POOL_BYTES - VALUE_BYTES);
  return Buffer.from(pool.subarray(offset, offset + VALUE_BYTES));
}

/** `count` ids drawn uniformly from [0, size), the same sequence for every engine. */
export function randomIds(size: number, count: number, seed = SEED + size): number[] {
  const rand = seededRandom(seed);
  const ids = new Array<number>(count);
  for (let i = 0; i < count; i++) ids[i] = Math.floor(rand() * size);
  return ids;
}
