import xxhash from 'xxhash-wasm';
import { CHECKSUM_SEED } from './format.js';

type Hasher = Awaited<ReturnType<typeof xxhash>>;

let hasher: Hasher | undefined;
let loading: Promise<Hasher> | undefined;

/** Loads the xxhash WebAssembly module once; every opener awaits it before touching files. */
export async function initChecksum(): Promise<void> {
  if (hasher) return;
  loading ??= xxhash();
  hasher = await loading;
}

/** xxhash32 of `bytes` with the format's seed; initChecksum() must have resolved. */
export function checksum32(bytes: Uint8Array): number {
  if (!hasher) throw new Error('checksum32 called before initChecksum()');
  return hasher.h32Raw(bytes, CHECKSUM_SEED) >>> 0;
}

/** xxhash32 over the concatenation of `a` and `b`, without copying them together. */
export function checksum32Parts(a: Uint8Array, b: Uint8Array): number {
  if (!hasher) throw new Error('checksum32Parts called before initChecksum()');
  return hasher.create32(CHECKSUM_SEED).update(a).update(b).digest() >>> 0;
}

/** A streaming xxhash32 (same seed): update() with each piece, digest() once at the end. */
export function checksum32Stream(): { update(bytes: Uint8Array): void; digest(): number } {
  if (!hasher) throw new Error('checksum32Stream called before initChecksum()');
  const h = hasher.create32(CHECKSUM_SEED);
  return {
    update(bytes) {
      h.update(bytes);
    },
    digest: () => h.digest() >>> 0,
  };
}
