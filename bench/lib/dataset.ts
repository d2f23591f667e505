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

/**
 * A fixed pseudo-random permutation of [0, size): `scrambled(size)(i)` is the id loaded i-th in
 * "random order". Every id comes exactly once, so a random-order load ends with the same rows as
 * an ascending one, without a table of `size` ids in memory (which would count in the RSS being
 * measured). A 4-round Feistel network on the next even power of two, cycle-walking back into
 * range (fewer than 4 steps per id on average).
 */
export function scrambled(size: number, seed = SEED): (i: number) => number {
  let bits = Math.max(2, Math.ceil(Math.log2(Math.max(2, size))));
  if (bits % 2 === 1) bits++;
  const half = bits / 2;
  const mask = (1 << half) - 1;
  const rand = seededRandom(seed);
  const keys = [0, 1, 2, 3].map(() => (rand() * 2 ** 32) >>> 0);
  const round = (x: number, k: number): number => {
    let h = Math.imul(x ^ k, 0x9e3779b1);
    h ^= h >>> 15;
    h = Math.imul(h, 0x85ebca77);
    h ^= h >>> 13;
    return h & mask;
  };
  const permute = (x: number): number => {
    let left = x >>> half;
    let right = x & mask;
    for (const k of keys) {
      const next = left ^ round(right, k);
      left = right;
      right = next;
    }
    return ((left << half) | right) >>> 0;
  };
  return (i: number): number => {
    let x = permute(i);
    while (x >= size) x = permute(x);
    return x;
  };
}
