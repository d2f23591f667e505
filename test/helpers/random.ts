/** mulberry32: a small seeded PRNG so every failing run can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomInt(rand: () => number, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}

export function randomBytes(rand: () => number, length: number, alphabet = 256): Buffer {
  const b = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) b[i] = Math.floor(rand() * alphabet);
  return b;
}
