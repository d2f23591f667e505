import { crc32 } from 'node:zlib';
import { fail } from '../errors.js';

/**
 * The serialized form of an HnswIndex, as named constants in one place (mirrors the habit of
 * engine/storage/format.ts; the index is stored by its owner as opaque values, so this layout
 * is private to engine/vector). All numbers are little-endian.
 *
 *   header   HEADER_BYTES: magic, version, the fields at the HEADER_* offsets below
 *   levels   nodeCount bytes (u8, top layer of each node slot)
 *   flags    nodeCount bytes (u8: 0 live, 1 tombstone, 2 free slot)
 *   padding  zero bytes up to a multiple of 4
 *   vectors  nodeCount * dims f32
 *   links0   nodeCount * (2M + 1) i32: count, then up to 2M neighbour node numbers
 *   free     freeCount i32: the free list, top of the stack last
 *   upper    for each non-free slot with level > 0, in node order: level * (M + 1) i32
 *            (layer l at (l - 1) * (M + 1): count, then up to M neighbours)
 *   trailer  u32 CRC-32 of every byte before it
 *
 * The byte stream is cut into chunks of at most chunkBytes; chunk boundaries carry no meaning.
 */
export const FORMAT_MAGIC = 0x534e4854; // "THNS" read as little-endian u32
export const FORMAT_VERSION = 1;
export const HEADER_BYTES = 64;
export const TRAILER_BYTES = 4;
export const MIN_CHUNK_BYTES = 64;
export const DEFAULT_CHUNK_BYTES = 1 << 20;

export const HEADER_MAGIC = 0;
export const HEADER_VERSION = 4;
export const HEADER_DIMS = 8;
export const HEADER_M = 12;
export const HEADER_EF_CONSTRUCTION = 16;
export const HEADER_EF_SEARCH = 20;
export const HEADER_RNG_STATE = 24;
export const HEADER_NODE_COUNT = 28;
export const HEADER_LIVE = 32;
export const HEADER_DELETED = 36;
export const HEADER_ENTRY = 40; // i32, -1 when empty
export const HEADER_MAX_LEVEL = 44; // i32, -1 when empty
export const HEADER_FREE_COUNT = 48;
export const HEADER_UPPER_INTS = 52;
export const HEADER_CLEANUP_RATIO = 56; // f64

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** Fails unless the platform is little-endian (typed arrays are copied as raw bytes). */
export function assertLittleEndian(): void {
  if (!LITTLE_ENDIAN) fail('INTERNAL', 'hnsw index: serialization needs a little-endian platform');
}

/** Bytes of a typed array (or its first `length` elements) as a Uint8Array view. */
export function bytesOf(arr: Float32Array | Int32Array | Uint8Array, length = arr.length): Uint8Array {
  return new Uint8Array(arr.buffer, arr.byteOffset, length * arr.BYTES_PER_ELEMENT);
}

/**
 * Writes a byte stream of known total length into chunks of at most chunkBytes, allocated as
 * they are needed. take() hands over the chunks filled so far (and forgets them), so a caller
 * streaming them to a file never holds more than a chunk or two.
 */
export class ChunkWriter {
  #filled: Uint8Array[] = [];
  #current: Uint8Array | undefined;
  #pos = 0;
  #left: number;
  readonly #chunkBytes: number;
  /** CRC-32 of the chunks filled so far (computed as each fills, so finish() has little left). */
  #crc = 0;
  readonly #scratch = new DataView(new ArrayBuffer(8));

  constructor(totalBytes: number, chunkBytes: number) {
    this.#left = totalBytes;
    this.#chunkBytes = chunkBytes;
  }

  write(bytes: Uint8Array): void {
    let off = 0;
    while (off < bytes.length) {
      if (this.#current === undefined) {
        if (this.#left <= 0) fail('INTERNAL', 'hnsw index: serializer wrote past its computed length');
        this.#current = new Uint8Array(Math.min(this.#left, this.#chunkBytes));
        this.#left -= this.#current.length;
      }
      const chunk = this.#current;
      const n = Math.min(bytes.length - off, chunk.length - this.#pos);
      chunk.set(bytes.subarray(off, off + n), this.#pos);
      off += n;
      this.#pos += n;
      if (this.#pos === chunk.length) {
        this.#crc = crc32(chunk, this.#crc);
        this.#filled.push(chunk);
        this.#current = undefined;
        this.#pos = 0;
      }
    }
  }

  /** The chunks filled since the last take(). */
  take(): Uint8Array[] {
    const out = this.#filled;
    this.#filled = [];
    return out;
  }

  u32(value: number): void {
    this.#scratch.setUint32(0, value >>> 0, true);
    this.write(new Uint8Array(this.#scratch.buffer, 0, 4));
  }

  zeros(n: number): void {
    if (n > 0) this.write(new Uint8Array(n));
  }

  /** Appends the CRC-32 of everything written so far and returns the chunks not yet taken; the stream must then be complete. */
  finish(): Uint8Array[] {
    let crc = this.#crc;
    if (this.#current !== undefined && this.#pos > 0) crc = crc32(this.#current.subarray(0, this.#pos), crc);
    this.u32(crc);
    if (this.#current !== undefined || this.#left !== 0) {
      fail('INTERNAL', 'hnsw index: serializer wrote less than its computed length');
    }
    return this.take();
  }
}

const CRC_STEP_BYTES = 1 << 20;

/** Reads a byte stream spread over chunks; every read past the end fails as CORRUPTION. */
export class ChunkReader {
  readonly #chunks: readonly Uint8Array[];
  readonly totalBytes: number;
  #chunk = 0;
  #pos = 0;
  #read = 0;
  readonly #scratch = new Uint8Array(8);
  readonly #view = new DataView(this.#scratch.buffer);

  constructor(chunks: readonly Uint8Array[]) {
    if (!Array.isArray(chunks)) fail('CORRUPTION', 'hnsw index: serialized form must be an array of Uint8Array chunks');
    let total = 0;
    for (const c of chunks) {
      if (!(c instanceof Uint8Array)) fail('CORRUPTION', 'hnsw index: serialized form must be an array of Uint8Array chunks');
      total += c.length;
    }
    this.#chunks = chunks;
    this.totalBytes = total;
  }

  get position(): number {
    return this.#read;
  }

  /** CRC-32 of the first `length` bytes of the stream (independent of the read cursor). */
  crcOfPrefix(length: number): number {
    const steps = this.crcOfPrefixSteps(length);
    for (;;) {
      const step = steps.next();
      if (step.done === true) return step.value;
    }
  }

  /** crcOfPrefix() a megabyte per step. */
  *crcOfPrefixSteps(length: number): Generator<void, number> {
    let crc = 0;
    let left = length;
    for (const c of this.#chunks) {
      for (let at = 0; at < c.length && left > 0; at += CRC_STEP_BYTES) {
        const n = Math.min(left, c.length - at, CRC_STEP_BYTES);
        crc = crc32(c.subarray(at, at + n), crc);
        left -= n;
        yield;
      }
      if (left <= 0) break;
    }
    return crc >>> 0;
  }

  read(into: Uint8Array): void {
    let off = 0;
    while (off < into.length) {
      const chunk = this.#chunks[this.#chunk];
      if (chunk === undefined) {
        fail('CORRUPTION', `hnsw index: serialized form is truncated (needed ${this.#read + into.length - off} more bytes than the ${this.totalBytes} given)`);
      }
      const n = Math.min(into.length - off, chunk.length - this.#pos);
      into.set(chunk.subarray(this.#pos, this.#pos + n), off);
      off += n;
      this.#pos += n;
      this.#read += n;
      if (this.#pos === chunk.length) {
        this.#chunk++;
        this.#pos = 0;
      }
    }
  }

  u32(): number {
    this.read(this.#scratch.subarray(0, 4));
    return this.#view.getUint32(0, true);
  }

  skip(n: number): void {
    if (n > 0) this.read(new Uint8Array(n));
  }
}
