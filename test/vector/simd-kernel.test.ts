import { describe, expect, it } from 'vitest';
import {
  WASM_PAGE_BYTES,
  createDotKernel,
  kernelModuleBytes,
  simdAvailable,
  type DotKernel,
} from '../../engine/vector/simd-kernel.js';
import { seededRandom } from '../helpers/random.js';
import { normalise } from './vector-data.js';

const wasm = (globalThis as unknown as { WebAssembly: { validate(bytes: Uint8Array): boolean } }).WebAssembly;

/** Bytes of one stored vector of dims floats: padded to a multiple of 4 floats, as the index stores them. */
function vlenOf(dims: number): number {
  return 16 * Math.ceil(dims / 4);
}

/**
 * Writes count random unit vectors of dims floats (zero padding after each, as the index
 * stores them) from byte address at; returns them.
 */
function fill(kernel: DotKernel, at: number, count: number, dims: number, seed: number): Float32Array[] {
  const rand = seededRandom(seed);
  const f32 = new Float32Array(kernel.memory.buffer);
  const out: Float32Array[] = [];
  for (let i = 0; i < count; i++) {
    const v = new Float32Array(dims);
    for (let d = 0; d < dims; d++) v[d] = rand() * 2 - 1;
    normalise(v);
    f32.set(v, (at + i * vlenOf(dims)) >>> 2);
    out.push(v);
  }
  return out;
}

/** The dot product in double precision, the reference the float32 kernels are held to. */
function reference(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

// Lengths around every boundary of the kernel's loops: 4-float blocks (the padding), 16-float
// blocks (the unrolled loop) and the 384 of MiniLM.
const DIMS = [1, 2, 3, 4, 5, 7, 8, 12, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 384, 385, 1536];

describe('simd-kernel: the module', () => {
  it('validates, and this runtime (Node 20+) runs the SIMD kernel', () => {
    expect(wasm.validate(kernelModuleBytes())).toBe(true);
    expect(simdAvailable()).toBe(true);
    expect(createDotKernel(1).simd).toBe(true);
    expect(createDotKernel(1, false).simd).toBe(false);
  });

  it('starts with the number of pages asked for', () => {
    expect(createDotKernel(3).memory.buffer.byteLength).toBe(3 * WASM_PAGE_BYTES);
    expect(createDotKernel(3, false).memory.buffer.byteLength).toBe(3 * WASM_PAGE_BYTES);
  });
});

describe.each([
  { kind: 'WebAssembly SIMD', simd: true },
  { kind: 'JavaScript twin', simd: false },
])('simd-kernel: $kind', ({ simd }) => {
  it.each(DIMS)('dot, dotMany and dotRange at %i dims match a double-precision dot within 1e-5', (dims) => {
    const kernel = createDotKernel(Math.ceil((64 * vlenOf(dims) + 8192) / WASM_PAGE_BYTES), simd);
    const len = vlenOf(dims);
    const base = 8192;
    const vectors = fill(kernel, base, 64, dims, dims);
    const f32 = new Float32Array(kernel.memory.buffer);
    const i32 = new Int32Array(kernel.memory.buffer);
    for (let i = 0; i < 64; i++) {
      expect(kernel.dot(base, base + i * len, len)).toBeCloseTo(reference(vectors[0]!, vectors[i]!), 5);
    }
    // dotMany: ids in any order, repeats allowed; scores land at out in the same order.
    const ids = [5, 63, 0, 5, 17, 40];
    i32.set(ids, 0);
    kernel.dotMany(base + 3 * len, 0, ids.length, base, len, 4096);
    for (let i = 0; i < ids.length; i++) {
      expect(f32[1024 + i]).toBeCloseTo(reference(vectors[3]!, vectors[ids[i]!]!), 5);
    }
    kernel.dotRange(base + 7 * len, base + 10 * len, 20, len, 4096);
    for (let i = 0; i < 20; i++) expect(f32[1024 + i]).toBeCloseTo(reference(vectors[7]!, vectors[10 + i]!), 5);
  });

  it('count 0 writes nothing; zero vectors score 0; exact small integers stay exact', () => {
    const kernel = createDotKernel(1, simd);
    const f32 = new Float32Array(kernel.memory.buffer);
    f32.fill(-7, 1024, 1040);
    kernel.dotMany(0, 0, 0, 0, 16, 4096);
    kernel.dotRange(0, 0, 0, 16, 4096);
    expect(Array.from(f32.subarray(1024, 1040))).toEqual(new Array<number>(16).fill(-7));
    // 20 floats (len 80): a 64-byte block and a 16-byte one.
    const a = Float32Array.from({ length: 20 }, (_, i) => i - 10);
    const b = Float32Array.from({ length: 20 }, (_, i) => (i % 3) - 1);
    f32.set(a, 2048);
    f32.set(b, 2048 + 20);
    expect(kernel.dot(8192, 8192 + 80, 80)).toBe(reference(a, b));
    expect(kernel.dot(8192, 12288, 80)).toBe(0);
  });

  it('reads vectors the memory grew to hold', () => {
    const kernel = createDotKernel(1, simd);
    const len = vlenOf(384);
    const [q] = fill(kernel, 0, 1, 384, 1);
    kernel.memory.grow(2);
    const far = 2 * WASM_PAGE_BYTES + 512;
    const [v] = fill(kernel, far, 1, 384, 2);
    expect(kernel.dot(0, far, len)).toBeCloseTo(reference(q!, v!), 5);
    new Int32Array(kernel.memory.buffer)[1000] = 0;
    kernel.dotMany(0, 4000, 1, far, len, 4096);
    expect(new Float32Array(kernel.memory.buffer)[1024]).toBe(kernel.dot(0, far, len));
  });
});

describe('simd-kernel: the JavaScript twin', () => {
  it.each(DIMS)('returns the SIMD kernel scores bit for bit at %i dims', (dims) => {
    const len = vlenOf(dims);
    const pages = Math.ceil((64 * len + 8192) / WASM_PAGE_BYTES);
    const simd = createDotKernel(pages, true);
    const twin = createDotKernel(pages, false);
    fill(simd, 8192, 64, dims, 100 + dims);
    fill(twin, 8192, 64, dims, 100 + dims);
    for (const kernel of [simd, twin]) kernel.dotRange(8192, 8192, 64, len, 0);
    const a = new Float32Array(simd.memory.buffer, 0, 64);
    const b = new Float32Array(twin.memory.buffer, 0, 64);
    expect(Array.from(b)).toEqual(Array.from(a));
    for (let i = 0; i < 64; i++) expect(twin.dot(8192 + i * len, 8192, len)).toBe(simd.dot(8192 + i * len, 8192, len));
  });
});
