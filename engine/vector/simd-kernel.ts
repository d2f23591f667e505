/**
 * The dot-product kernel of the HNSW index: a WebAssembly module with 128-bit SIMD, encoded by
 * hand below (no toolchain, no dependency), plus a portable JavaScript twin for runtimes that
 * lack WebAssembly SIMD. Both read vectors straight out of one linear memory that the index
 * owns, and both compute every score with the same float32 operations in the same order, so
 * they return bit-identical scores and an index builds the same graph on either.
 *
 * Why: a 384-dim dot product over Float32Array costs V8 ~600 ns (each element widened to
 * double, bounds-checked); the SIMD loop below does it with 96 f32x4 multiply-adds in ~45 ns
 * (dotMany; ~65 ns for a lone dot() call). The twin keeps float32 rounding with Math.fround
 * and costs ~1.1 us: a fallback and a reference, not a fast path.
 *
 * Vector layout the kernel assumes: each vector is `len` bytes, len a multiple of 16 (the dims
 * padded with zero floats up to a multiple of 4), 16-byte aligned. Addresses are byte offsets
 * into the memory.
 *
 *   dot(a, b, len) -> f32                          a . b
 *   dotMany(q, ids, count, base, len, out)         out[i] = q . vec(base + ids[i] * len), i < count
 *   dotRange(q, first, count, len, out)            out[i] = q . vec(first + i * len),     i < count
 *
 * ids is an i32 array and out an f32 array in the memory (4-byte aligned). Summation order
 * (both implementations): four f32x4 accumulators A0..A3 take the products of floats
 * [16j, 16j+4), [16j+4, 16j+8), ... of each 64-byte block j; the 16-byte blocks left after
 * the last full 64-byte block go into A0; then S = (A0 + A1) + (A2 + A3) lane-wise and the
 * result is (S0 + S1) + (S2 + S3). Every add and multiply rounds to float32 (no fused
 * multiply-add in WebAssembly SIMD).
 */

/** Bytes of one WebAssembly page; memory grows in whole pages. */
export const WASM_PAGE_BYTES = 65_536;
/** Pages of a 32-bit WebAssembly memory at most: 4 GiB. */
export const MAX_WASM_PAGES = 65_536;

/** The memory the kernel reads: a WebAssembly.Memory, or a plain stand-in without WebAssembly. */
export interface KernelMemory {
  /** The current buffer; a grow() detaches it (every view on it becomes empty). */
  readonly buffer: ArrayBuffer;
  /** Adds delta pages; returns the old size in pages. */
  grow(delta: number): number;
}

/** The three kernel functions over one memory; addresses and lengths are in bytes (see above). */
export interface DotKernel {
  /** True when the WebAssembly SIMD module runs; false for the JavaScript twin. */
  readonly simd: boolean;
  readonly memory: KernelMemory;
  /** a . b over len bytes. */
  dot(a: number, b: number, len: number): number;
  /** out[i] = q . the vector at base + ids[i] * len, for i < count. */
  dotMany(q: number, ids: number, count: number, base: number, len: number, out: number): void;
  /** out[i] = q . the vector at first + i * len, for i < count. */
  dotRange(q: number, first: number, count: number, len: number, out: number): void;
}

// ---- the minimal slice of the WebAssembly JS API used here ---------------------------------
// The project's tsconfig has no DOM lib, so WebAssembly is not declared; this is what we use.

interface WasmApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: Record<string, Record<string, unknown>>) => { exports: Record<string, unknown> };
  Memory: new (descriptor: { initial: number; maximum?: number }) => KernelMemory;
}

const wasmApi = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

// ---- binary encoding -------------------------------------------------------------------------
// Named after the WebAssembly core spec (binary format, section 5) and its fixed-width SIMD
// chapter: plain opcodes are one byte; SIMD ones are the 0xFD prefix then a u32 LEB128.

const OP_BLOCK = 0x02;
const OP_LOOP = 0x03;
const OP_END = 0x0b;
const OP_BR_IF = 0x0d;
const OP_LOCAL_GET = 0x20;
const OP_LOCAL_SET = 0x21;
const OP_LOCAL_TEE = 0x22;
const OP_I32_LOAD = 0x28;
const OP_F32_STORE = 0x38;
const OP_I32_CONST = 0x41;
const OP_I32_LT_U = 0x49;
const OP_I32_GE_U = 0x4f;
const OP_I32_ADD = 0x6a;
const OP_I32_MUL = 0x6c;
const OP_I32_AND = 0x71;
const OP_I32_SHL = 0x74;
const OP_F32_ADD = 0x92;
const OP_SIMD_PREFIX = 0xfd;
const SIMD_V128_LOAD = 0;
const SIMD_V128_CONST = 12;
const SIMD_F32X4_EXTRACT_LANE = 31;
const SIMD_F32X4_ADD = 228;
const SIMD_F32X4_MUL = 230;

const BLOCKTYPE_EMPTY = 0x40;
const TYPE_I32 = 0x7f;
const TYPE_F32 = 0x7d;
const TYPE_V128 = 0x7b;
const TYPE_FUNC = 0x60;
const IMPORT_MEMORY = 0x02;
const EXPORT_FUNC = 0x00;
const LIMITS_MIN_ONLY = 0x00;

const SECTION_TYPE = 1;
const SECTION_IMPORT = 2;
const SECTION_FUNCTION = 3;
const SECTION_EXPORT = 7;
const SECTION_CODE = 10;

// memarg alignment is log2 of the byte alignment; a hint only, never a trap.
const ALIGN_4 = 2;
const ALIGN_16 = 4;

/** Unsigned LEB128. */
function uleb(value: number): number[] {
  const out: number[] = [];
  let v = value >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
}

/** Signed LEB128 of a 32-bit integer. */
function sleb(value: number): number[] {
  const out: number[] = [];
  let v = value | 0;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    const done = (v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0);
    out.push(done ? byte : byte | 0x80);
    if (done) return out;
  }
}

function name(s: string): number[] {
  const bytes = Array.from(new TextEncoder().encode(s));
  return [...uleb(bytes.length), ...bytes];
}

/** A vector of encoded items: count, then the items. */
function vec(items: number[][]): number[] {
  return [...uleb(items.length), ...items.flat()];
}

function section(id: number, payload: number[]): number[] {
  return [id, ...uleb(payload.length), ...payload];
}

/** Instruction builder for one function body. */
class Body {
  readonly bytes: number[] = [];
  op(...b: number[]): this {
    this.bytes.push(...b);
    return this;
  }
  get(local: number): this {
    return this.op(OP_LOCAL_GET, ...uleb(local));
  }
  set(local: number): this {
    return this.op(OP_LOCAL_SET, ...uleb(local));
  }
  tee(local: number): this {
    return this.op(OP_LOCAL_TEE, ...uleb(local));
  }
  i32(value: number): this {
    return this.op(OP_I32_CONST, ...sleb(value));
  }
  simd(sub: number, ...imm: number[]): this {
    return this.op(OP_SIMD_PREFIX, ...uleb(sub), ...imm);
  }
  /** local += by (i32). */
  bump(local: number, by: number): this {
    return this.get(local).i32(by).op(OP_I32_ADD).set(local);
  }
  /** acc = f32x4.add(acc, f32x4.mul(v128.load(pa + offset), v128.load(pb + offset))). */
  mulAdd(acc: number, pa: number, pb: number, offset: number): this {
    this.get(acc);
    this.get(pa).simd(SIMD_V128_LOAD, ALIGN_16, ...uleb(offset));
    this.get(pb).simd(SIMD_V128_LOAD, ALIGN_16, ...uleb(offset));
    return this.simd(SIMD_F32X4_MUL).simd(SIMD_F32X4_ADD).set(acc);
  }
}

/** Locals one inlined dot product needs: the two cursors, the length, scratch and 4 accumulators. */
interface DotLocals {
  pa: number;
  pb: number;
  len: number;
  end: number;
  end64: number;
  acc: readonly [number, number, number, number];
}

/**
 * Emits pa . pb over len bytes, leaving the f32 on the stack; advances pa and pb. Inlined in
 * every export rather than called, so the batched loops pay no call per vector.
 */
function emitDot(f: Body, l: DotLocals): void {
  const [a0, a1, a2, a3] = l.acc;
  f.simd(SIMD_V128_CONST, ...new Array<number>(16).fill(0)).tee(a0).tee(a1).tee(a2).set(a3);
  // end = pa + len; end64 = pa + (len & ~63): the 64-byte blocks, then the 16-byte rest.
  f.get(l.pa).get(l.len).op(OP_I32_ADD).set(l.end);
  f.get(l.pa).get(l.len).i32(-64).op(OP_I32_AND).op(OP_I32_ADD).set(l.end64);
  // block { if pa >= end64 break; loop { 4 multiply-adds; pa += 64; pb += 64; while pa < end64 } }
  f.op(OP_BLOCK, BLOCKTYPE_EMPTY).get(l.pa).get(l.end64).op(OP_I32_GE_U, OP_BR_IF, 0);
  f.op(OP_LOOP, BLOCKTYPE_EMPTY);
  for (let k = 0; k < 4; k++) f.mulAdd(l.acc[k]!, l.pa, l.pb, 16 * k);
  f.bump(l.pa, 64).bump(l.pb, 64);
  f.get(l.pa).get(l.end64).op(OP_I32_LT_U, OP_BR_IF, 0);
  f.op(OP_END, OP_END);
  // The same shape for the 16-byte blocks, into A0.
  f.op(OP_BLOCK, BLOCKTYPE_EMPTY).get(l.pa).get(l.end).op(OP_I32_GE_U, OP_BR_IF, 0);
  f.op(OP_LOOP, BLOCKTYPE_EMPTY);
  f.mulAdd(a0, l.pa, l.pb, 0);
  f.bump(l.pa, 16).bump(l.pb, 16);
  f.get(l.pa).get(l.end).op(OP_I32_LT_U, OP_BR_IF, 0);
  f.op(OP_END, OP_END);
  // S = (A0 + A1) + (A2 + A3); result = (S0 + S1) + (S2 + S3).
  f.get(a0).get(a1).simd(SIMD_F32X4_ADD).get(a2).get(a3).simd(SIMD_F32X4_ADD).simd(SIMD_F32X4_ADD).set(a0);
  f.get(a0).simd(SIMD_F32X4_EXTRACT_LANE, 0).get(a0).simd(SIMD_F32X4_EXTRACT_LANE, 1).op(OP_F32_ADD);
  f.get(a0).simd(SIMD_F32X4_EXTRACT_LANE, 2).get(a0).simd(SIMD_F32X4_EXTRACT_LANE, 3).op(OP_F32_ADD);
  f.op(OP_F32_ADD);
}

/** A function body: local declarations (i32s then v128s), code, end. */
function funcBody(i32Locals: number, v128Locals: number, code: Body): number[] {
  const locals = vec([
    [...uleb(i32Locals), TYPE_I32],
    [...uleb(v128Locals), TYPE_V128],
  ]);
  const body = [...locals, ...code.bytes, OP_END];
  return [...uleb(body.length), ...body];
}

/**
 * The module's bytes. Layout:
 *   type     0: (i32 i32 i32) -> f32              dot
 *            1: (i32 i32 i32 i32 i32 i32) -> ()   dotMany
 *            2: (i32 i32 i32 i32 i32) -> ()       dotRange
 *   import   env.memory: memory, min 0 pages (the index creates and grows it)
 *   function 0, 1, 2 of types 0, 1, 2
 *   export   "dot", "dotMany", "dotRange"
 *   code     the three bodies, each with the dot loop inlined
 */
export function kernelModuleBytes(): Uint8Array {
  // dot(a 0, b 1, len 2) -> f32; locals: end 3, end64 4, A0..A3 5..8.
  const dot = new Body();
  emitDot(dot, { pa: 0, pb: 1, len: 2, end: 3, end64: 4, acc: [5, 6, 7, 8] });

  // dotMany(q 0, ids 1, count 2, base 3, len 4, out 5); locals: pa 6, pb 7, end 8, end64 9,
  // idsEnd 10, A0..A3 11..14.
  const many = new Body();
  many.get(1).get(2).i32(2).op(OP_I32_SHL).op(OP_I32_ADD).set(10);
  many.op(OP_BLOCK, BLOCKTYPE_EMPTY).get(1).get(10).op(OP_I32_GE_U, OP_BR_IF, 0);
  many.op(OP_LOOP, BLOCKTYPE_EMPTY);
  many.get(0).set(6);
  many.get(3).get(1).op(OP_I32_LOAD, ALIGN_4, 0).get(4).op(OP_I32_MUL).op(OP_I32_ADD).set(7);
  many.get(5);
  emitDot(many, { pa: 6, pb: 7, len: 4, end: 8, end64: 9, acc: [11, 12, 13, 14] });
  many.op(OP_F32_STORE, ALIGN_4, 0);
  many.bump(1, 4).bump(5, 4);
  many.get(1).get(10).op(OP_I32_LT_U, OP_BR_IF, 0);
  many.op(OP_END, OP_END);

  // dotRange(q 0, first 1, count 2, len 3, out 4); locals: pa 5, pb 6, end 7, end64 8,
  // outEnd 9, A0..A3 10..13.
  const range = new Body();
  range.get(4).get(2).i32(2).op(OP_I32_SHL).op(OP_I32_ADD).set(9);
  range.op(OP_BLOCK, BLOCKTYPE_EMPTY).get(4).get(9).op(OP_I32_GE_U, OP_BR_IF, 0);
  range.op(OP_LOOP, BLOCKTYPE_EMPTY);
  range.get(0).set(5);
  range.get(1).set(6);
  range.get(4);
  emitDot(range, { pa: 5, pb: 6, len: 3, end: 7, end64: 8, acc: [10, 11, 12, 13] });
  range.op(OP_F32_STORE, ALIGN_4, 0);
  range.get(1).get(3).op(OP_I32_ADD).set(1);
  range.bump(4, 4);
  range.get(4).get(9).op(OP_I32_LT_U, OP_BR_IF, 0);
  range.op(OP_END, OP_END);

  // A function type: TYPE_FUNC, then the vectors of parameter and result types (all i32 params).
  const funcType = (params: number, results: number[]): number[] => [
    TYPE_FUNC,
    ...vec(new Array<number[]>(params).fill([TYPE_I32])),
    ...vec(results.map((r) => [r])),
  ];
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, // "\0asm"
    0x01, 0x00, 0x00, 0x00, // version 1
    ...section(SECTION_TYPE, vec([funcType(3, [TYPE_F32]), funcType(6, []), funcType(5, [])])),
    ...section(SECTION_IMPORT, vec([[...name('env'), ...name('memory'), IMPORT_MEMORY, LIMITS_MIN_ONLY, ...uleb(0)]])),
    ...section(SECTION_FUNCTION, vec([uleb(0), uleb(1), uleb(2)])),
    ...section(
      SECTION_EXPORT,
      vec([
        [...name('dot'), EXPORT_FUNC, ...uleb(0)],
        [...name('dotMany'), EXPORT_FUNC, ...uleb(1)],
        [...name('dotRange'), EXPORT_FUNC, ...uleb(2)],
      ]),
    ),
    ...section(SECTION_CODE, vec([funcBody(2, 4, dot), funcBody(5, 4, many), funcBody(5, 4, range)])),
  ];
  return new Uint8Array(bytes);
}

// ---- instantiation ---------------------------------------------------------------------------

let compiled: object | null | undefined;

/** The compiled module, or null when this runtime has no WebAssembly or rejects SIMD. */
function simdModule(): object | null {
  if (compiled === undefined) {
    const bytes = kernelModuleBytes();
    compiled = wasmApi !== undefined && wasmApi.validate(bytes) ? new wasmApi.Module(bytes) : null;
  }
  return compiled;
}

/** True when this runtime runs the WebAssembly SIMD kernel. */
export function simdAvailable(): boolean {
  return simdModule() !== null;
}

/**
 * A plain ArrayBuffer behind the KernelMemory interface, for runtimes without WebAssembly
 * (node --jitless): grow() copies into a bigger buffer, as a WebAssembly.Memory may.
 */
class ArrayMemory implements KernelMemory {
  #buffer: ArrayBuffer;
  constructor(pages: number) {
    this.#buffer = new ArrayBuffer(pages * WASM_PAGE_BYTES);
  }
  get buffer(): ArrayBuffer {
    return this.#buffer;
  }
  grow(delta: number): number {
    const old = this.#buffer.byteLength / WASM_PAGE_BYTES;
    if (old + delta > MAX_WASM_PAGES) throw new RangeError('memory would exceed 4 GiB');
    const next = new ArrayBuffer((old + delta) * WASM_PAGE_BYTES);
    new Uint8Array(next).set(new Uint8Array(this.#buffer));
    this.#buffer = next;
    return old;
  }
}

function newMemory(pages: number): KernelMemory {
  return wasmApi !== undefined ? new wasmApi.Memory({ initial: pages, maximum: MAX_WASM_PAGES }) : new ArrayMemory(pages);
}

/**
 * A kernel over a fresh memory of initialPages pages: the WebAssembly SIMD one when available
 * and `simd` is not false, else the JavaScript twin (same results, bit for bit, slower).
 */
export function createDotKernel(initialPages: number, simd = true): DotKernel {
  const memory = newMemory(initialPages);
  const module = simd ? simdModule() : null;
  if (module !== null) {
    const e = new wasmApi!.Instance(module, { env: { memory } }).exports;
    return {
      simd: true,
      memory,
      dot: e['dot'] as DotKernel['dot'],
      dotMany: e['dotMany'] as DotKernel['dotMany'],
      dotRange: e['dotRange'] as DotKernel['dotRange'],
    };
  }
  return jsKernel(memory);
}

// ---- the JavaScript twin -------------------------------------------------------------------

const fround = Math.fround;

/**
 * a . b over len bytes in the kernel's exact float32 order: 16 lane accumulators (A0..A3 x 4
 * lanes), the 16-byte tail into A0, then the same pairwise reduction.
 */
function jsDot(f: Float32Array, a: number, b: number, len: number): number {
  let i = a >>> 2;
  let j = b >>> 2;
  const end = i + (len >>> 2);
  const end16 = i + ((len & ~63) >>> 2);
  let x0 = 0, x1 = 0, x2 = 0, x3 = 0, y0 = 0, y1 = 0, y2 = 0, y3 = 0;
  let z0 = 0, z1 = 0, z2 = 0, z3 = 0, w0 = 0, w1 = 0, w2 = 0, w3 = 0;
  for (; i < end16; i += 16, j += 16) {
    x0 = fround(x0 + fround(f[i]! * f[j]!));
    x1 = fround(x1 + fround(f[i + 1]! * f[j + 1]!));
    x2 = fround(x2 + fround(f[i + 2]! * f[j + 2]!));
    x3 = fround(x3 + fround(f[i + 3]! * f[j + 3]!));
    y0 = fround(y0 + fround(f[i + 4]! * f[j + 4]!));
    y1 = fround(y1 + fround(f[i + 5]! * f[j + 5]!));
    y2 = fround(y2 + fround(f[i + 6]! * f[j + 6]!));
    y3 = fround(y3 + fround(f[i + 7]! * f[j + 7]!));
    z0 = fround(z0 + fround(f[i + 8]! * f[j + 8]!));
    z1 = fround(z1 + fround(f[i + 9]! * f[j + 9]!));
    z2 = fround(z2 + fround(f[i + 10]! * f[j + 10]!));
    z3 = fround(z3 + fround(f[i + 11]! * f[j + 11]!));
    w0 = fround(w0 + fround(f[i + 12]! * f[j + 12]!));
    w1 = fround(w1 + fround(f[i + 13]! * f[j + 13]!));
    w2 = fround(w2 + fround(f[i + 14]! * f[j + 14]!));
    w3 = fround(w3 + fround(f[i + 15]! * f[j + 15]!));
  }
  for (; i < end; i += 4, j += 4) {
    x0 = fround(x0 + fround(f[i]! * f[j]!));
    x1 = fround(x1 + fround(f[i + 1]! * f[j + 1]!));
    x2 = fround(x2 + fround(f[i + 2]! * f[j + 2]!));
    x3 = fround(x3 + fround(f[i + 3]! * f[j + 3]!));
  }
  const s0 = fround(fround(x0 + y0) + fround(z0 + w0));
  const s1 = fround(fround(x1 + y1) + fround(z1 + w1));
  const s2 = fround(fround(x2 + y2) + fround(z2 + w2));
  const s3 = fround(fround(x3 + y3) + fround(z3 + w3));
  return fround(fround(s0 + s1) + fround(s2 + s3));
}

function jsKernel(memory: KernelMemory): DotKernel {
  // Views are rebuilt whenever a grow() has replaced the buffer.
  let buffer = memory.buffer;
  let f32 = new Float32Array(buffer);
  let i32 = new Int32Array(buffer);
  const views = (): void => {
    if (memory.buffer !== buffer) {
      buffer = memory.buffer;
      f32 = new Float32Array(buffer);
      i32 = new Int32Array(buffer);
    }
  };
  return {
    simd: false,
    memory,
    dot(a, b, len) {
      views();
      return jsDot(f32, a, b, len);
    },
    dotMany(q, ids, count, base, len, out) {
      views();
      const at = ids >>> 2;
      const o = out >>> 2;
      for (let i = 0; i < count; i++) f32[o + i] = jsDot(f32, q, base + i32[at + i]! * len, len);
    },
    dotRange(q, first, count, len, out) {
      views();
      const o = out >>> 2;
      for (let i = 0; i < count; i++) f32[o + i] = jsDot(f32, q, first + i * len, len);
    },
  };
}
