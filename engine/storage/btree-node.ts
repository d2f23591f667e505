import {
  BRANCH_CHILD_SIZE,
  BRANCH_ENTRY_FIXED,
  LEAF_ENTRY_FIXED,
  MAX_INLINE_ENTRY_BYTES,
  OVERFLOW_REF_SIZE,
  PAGE_COUNT_OFFSET,
  PAGE_HEADER_SIZE,
  PAGE_SIZE,
  PAGE_TYPE,
  PAGE_TYPE_OFFSET,
  VALUE_INLINE,
  VALUE_OVERFLOW,
} from './format.js';

/**
 * A key as held in memory: its bytes as a latin1 string (one char per byte, code = byte value).
 * V8 compares such strings natively by code unit, which is exactly unsigned byte order, and an
 * order of magnitude faster than comparing Buffers from JS or through Buffer.compare.
 */
export type NodeKey = string;

/** The in-memory form of key bytes. */
export function toNodeKey(bytes: Uint8Array): NodeKey {
  return Buffer.isBuffer(bytes) ? bytes.toString('latin1') : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** The bytes of an in-memory key. */
export function fromNodeKey(key: NodeKey): Buffer {
  return Buffer.from(key, 'latin1');
}

/** A value stored on overflow pages: `length` bytes starting at page `page`, contiguous. */
export interface OverflowRef {
  readonly page: number;
  readonly length: number;
}

/**
 * A value as readers see it. `string`: an inline value a writer handed to a dirty leaf, its bytes
 * as latin1 (one char per byte): a compact copy that costs ~24 bytes beyond its length and pins
 * no page or slab. `Buffer`: in a decoded (clean) leaf a view into its page; in a dirty leaf a
 * large value still waiting for its overflow pages (an exact-size copy). `OverflowRef`: a value
 * on overflow pages.
 */
export type StoredValue = string | Buffer | OverflowRef;

/**
 * A slot of a leaf's `values`: a StoredValue, or (dirty leaves only) a number: the offset of an
 * inline value's [u8 kind][u32 length] header inside the leaf's `packed` copy. A dirty copy of a
 * clean leaf inherits its values that way: one off-heap copy of the page's bytes instead of a
 * string per entry, so a copy-on-write after a checkpoint makes no garbage-collected objects the
 * young generation would have to move, and the copy pins no cached page.
 */
export type LeafValue = StoredValue | number;

/**
 * A slot of a dirty leaf's `keys`: a NodeKey a writer inserted, or a number: the offset of an
 * inherited key's bytes inside the leaf's `packed` copy (its u16 length is the two bytes before
 * it, as on the page). A copy-on-write of a clean leaf keeps its ~100 keys in the copied bytes
 * instead of making a string of each: the copy costs no garbage-collected objects but two arrays
 * of numbers, so the dirty budget holds about twice as many changed leaves.
 */
export type LeafKey = NodeKey | number;

/**
 * A child reference: a page id (the child is clean, on disk, immutable) or the child node itself
 * (dirty, in memory, owned by this parent until the next checkpoint writes it).
 */
export type ChildRef = number | TreeNode;

/**
 * Where a decoded leaf's entries lie in its page, and the heads its searches compare first: all
 * the leaf's keys share their first `prefix` bytes (those of its first and last key), and
 * `heads[i]` holds key i's next four bytes as a big-endian number (zeros past its end). A search
 * compares heads, which lie together in a few cache lines, and reads a key's bytes in the page
 * only when heads tie: a binary search over offsets and page bytes touched three or four cache
 * lines a step, each a miss when the page is not in the CPU's caches (most pages of a large
 * collection); see leafBound.
 */
export interface LeafSource {
  page: Buffer;
  keyOffsets: Uint16Array;
  valueOffsets: Uint16Array;
  prefix: number;
  heads: Uint32Array;
}

export interface LeafNode {
  kind: 'leaf';
  /** Page id once written (clean, or written by a checkpoint); 0 while dirty. */
  pageId: number;
  /**
   * The write epoch a dirty node was created in (-1 for nodes decoded from pages). Writers change
   * a node in place only while its epoch is the tree set's current one; a snapshot or checkpoint
   * capture starts a new epoch, which makes every existing node immutable (copy-on-write) at once.
   */
  gen: number;
  /**
   * Dirty leaves only: NodeKeys, or offsets into `packed` (LeafKey). A leaf decoded from a page
   * has no `keys` array (it is undefined): its keys stay in the page, searched and read there
   * (leafBound, leafKeyAt, leafKeyCount), so a cached leaf costs its page and two offset arrays,
   * not a string per key as well. Read keys through the leaf* functions, never this array.
   */
  keys: LeafKey[];
  values: LeafValue[];
  /** Encoded size in bytes, header included; the node splits when this passes PAGE_SIZE. */
  bytes: number;
  /**
   * Dirty leaves: the owned copy of the page this leaf (or the leaf it split from) was copied
   * from, which numeric `keys` and `values` point into; immutable, so clones and split halves
   * share it.
   */
  packed: Buffer | undefined;
  /**
   * Set on nodes decoded from a page (whose `keys` and `values` are then not built: use the
   * leaf* functions): where each key's bytes start in `page` and where its value starts (which is
   * where the key ends), so reads compare and hand out keys in place.
   */
  source?: LeafSource;
  /**
   * Dirty leaves: where the last new key went in (-1: none since the copy) and how many new keys
   * in a row went in just after the one before (at most one older key between), which splitLeaf
   * reads as an ascending run: see BTree's insert.
   */
  lastInsert: number;
  run: number;
}

/**
 * Value `i` of a leaf. Decoded leaves build their `values` array only when something needs all
 * of them (a copy-on-write, a merge): a Buffer view per entry costs ~90 bytes, more than the key,
 * so reads take the one value they need straight from the page.
 */
export function leafValueAt(leaf: LeafNode, i: number): StoredValue {
  const source = leaf.source;
  if (source !== undefined) return valueAt(source.page, source.valueOffsets[i]!);
  const value = leaf.values[i]!;
  return typeof value === 'number' ? valueAt(leaf.packed!, value) : value;
}

/**
 * Consecutive values of a tree read without a Buffer per value: value `i` is the bytes
 * `bufs[i][starts[i] .. starts[i] + lengths[i])`. Filled one leaf at a time by
 * TreeReader.valueRuns and reused: valid only until the next step of the scan that produced it.
 */
export class ValueRun {
  count = 0;
  readonly bufs: Buffer[] = [];
  readonly starts: number[] = [];
  readonly lengths: number[] = [];

  /** Appends one value's bytes. */
  push(buf: Buffer, start: number, length: number): void {
    const n = this.count++;
    this.bufs[n] = buf;
    this.starts[n] = start;
    this.lengths[n] = length;
  }
}

/**
 * Appends leaf value `i` to `run` (inline values as a span of their page or packed copy, no
 * allocation); `overflow` reads a value stored on overflow pages.
 */
export function pushLeafValue(run: ValueRun, leaf: LeafNode, i: number, overflow: (ref: OverflowRef) => Buffer): void {
  const source = leaf.source;
  let page: Buffer;
  let pos: number;
  if (source !== undefined) {
    page = source.page;
    pos = source.valueOffsets[i]!;
  } else {
    const value = leaf.values[i]!;
    if (typeof value !== 'number') {
      const b = typeof value === 'string' ? Buffer.from(value, 'latin1') : isOverflowRef(value) ? overflow(value) : value;
      run.push(b, 0, b.length);
      return;
    }
    page = leaf.packed!;
    pos = value;
  }
  const length = page.readUInt32LE(pos + 1);
  if (page[pos] === VALUE_OVERFLOW) {
    const b = overflow({ page: page.readUInt32LE(pos + 5), length });
    run.push(b, 0, b.length);
    return;
  }
  run.push(page, pos + 5, length);
}

/** The value whose [u8 kind][u32 length] starts at `pos` in `page`. */
function valueAt(page: Buffer, pos: number): StoredValue {
  const length = page.readUInt32LE(pos + 1);
  if (page[pos] === VALUE_OVERFLOW) return { page: page.readUInt32LE(pos + 5), length };
  return page.subarray(pos + 5, pos + 5 + length);
}

/** The bytes of leaf key `i`: a view into its page or `packed` copy when it has one, else a fresh Buffer. */
export function leafKeyBytes(leaf: LeafNode, i: number): Buffer {
  const source = leaf.source;
  if (source === undefined) {
    const key = leaf.keys[i]!;
    return typeof key === 'string' ? fromNodeKey(key) : leaf.packed!.subarray(key, key + leaf.packed!.readUInt16LE(key - 2));
  }
  return source.page.subarray(source.keyOffsets[i]!, source.valueOffsets[i]!);
}

/** The byte length of a dirty leaf's key slot (`packed`: the leaf's, for inherited keys). */
export function leafKeyLength(key: LeafKey, packed: Buffer | undefined): number {
  return typeof key === 'string' ? key.length : packed!.readUInt16LE(key - 2);
}

/** A dirty leaf's key slot as a NodeKey (an inherited key's string is made now). */
function dirtyKey(key: LeafKey, packed: Buffer | undefined): NodeKey {
  return typeof key === 'string' ? key : packed!.toString('latin1', key, key + packed!.readUInt16LE(key - 2));
}

/** Compares a dirty leaf's key slot with `key` as unsigned bytes. */
function compareDirtyKey(k: LeafKey, packed: Buffer | undefined, key: NodeKey): number {
  if (typeof k === 'string') return k < key ? -1 : k > key ? 1 : 0;
  return comparePageKey(packed!, k, k + packed!.readUInt16LE(k - 2), key);
}

/** Number of entries of a leaf, decoded or dirty. */
export function leafKeyCount(leaf: LeafNode): number {
  const source = leaf.source;
  return source === undefined ? leaf.keys.length : source.keyOffsets.length;
}

/** Leaf key `i` as a NodeKey (a decoded leaf makes the string on demand). */
export function leafKeyAt(leaf: LeafNode, i: number): NodeKey {
  const source = leaf.source;
  return source === undefined ? dirtyKey(leaf.keys[i]!, leaf.packed) : source.page.toString('latin1', source.keyOffsets[i]!, source.valueOffsets[i]!);
}

/** Every key of a leaf as NodeKeys, in a new array the caller may keep (inherited or decoded keys are made now). */
export function leafKeyList(leaf: LeafNode): NodeKey[] {
  const keys = new Array<NodeKey>(leafKeyCount(leaf));
  for (let i = 0; i < keys.length; i++) keys[i] = leafKeyAt(leaf, i);
  return keys;
}

// Compares the key bytes page[start, end) with `key` (one char per byte), as unsigned bytes.
function comparePageKey(page: Buffer, start: number, end: number, key: NodeKey): number {
  const n = end - start;
  const m = key.length;
  const common = n < m ? n : m;
  for (let i = 0; i < common; i++) {
    const d = page[start + i]! - key.charCodeAt(i);
    if (d !== 0) return d;
  }
  return n - m;
}

/** Index of the first key >= `key`. */
export function lowerBound(keys: NodeKey[], key: NodeKey): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first key > `key`. */
export function upperBound(keys: NodeKey[], key: NodeKey): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// leafBound for a dirty leaf: its keys are strings or offsets into `packed`. A string key takes
// one comparison a step (compareDirtyKey's three-way answer costs two when the key is not below).
function dirtyBound(keys: LeafKey[], packed: Buffer | undefined, key: NodeKey, upper: boolean): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const k = keys[mid]!;
    let before: boolean;
    if (typeof k === 'string') {
      before = upper ? k <= key : k < key;
    } else {
      const d = comparePageKey(packed!, k, k + packed!.readUInt16LE(k - 2), key);
      before = upper ? d <= 0 : d < 0;
    }
    if (before) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first key of `leaf` >= `key` (`upper`: > `key`). */
export function leafBound(leaf: LeafNode, key: NodeKey, upper: boolean): number {
  const source = leaf.source;
  if (source === undefined) return dirtyBound(leaf.keys, leaf.packed, key, upper);
  const limit = upper ? 0 : -1;
  const { page, keyOffsets, valueOffsets, prefix, heads } = source;
  const count = keyOffsets.length;
  if (count === 0) return 0;
  const m = key.length;
  // Against the prefix every key of the leaf shares: a key that differs there (or ends within it)
  // sorts before or after all of them.
  const first = keyOffsets[0]!;
  for (let i = 0; i < prefix; i++) {
    if (i === m) return 0;
    const d = page[first + i]! - key.charCodeAt(i);
    if (d !== 0) return d > 0 ? 0 : count;
  }
  const head = keyHead(key, prefix);
  // Every key between two keys that share their first p bytes with `key` shares them too, so a
  // comparison of bytes starts after the shorter of the prefixes `key` shares with the keys just
  // below and above the interval (keys of one leaf often share long prefixes: a collection's
  // time-ordered ids, an index's field value).
  let lo = 0;
  let hi = count;
  let sharedLo = prefix;
  let sharedHi = prefix;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const h = heads[mid]!;
    let d: number;
    let i = sharedLo < sharedHi ? sharedLo : sharedHi;
    if (h !== head) {
      d = h < head ? -1 : 1;
    } else {
      const start = keyOffsets[mid]!;
      const n = valueOffsets[mid]! - start;
      const common = n < m ? n : m;
      d = 0;
      for (; i < common; i++) {
        d = page[start + i]! - key.charCodeAt(i);
        if (d !== 0) break;
      }
      if (d === 0) d = n - m;
    }
    if (d <= limit) {
      lo = mid + 1;
      sharedLo = i;
    } else {
      hi = mid;
      sharedHi = i;
    }
  }
  return lo;
}

/** Bytes `at .. at + 4` of a key as a big-endian number, zeros past its end (see LeafSource). */
function keyHead(key: NodeKey, at: number): number {
  const m = key.length;
  return (
    ((at < m ? key.charCodeAt(at) : 0) * 0x1000000 +
      ((at + 1 < m ? key.charCodeAt(at + 1) : 0) << 16) +
      ((at + 2 < m ? key.charCodeAt(at + 2) : 0) << 8) +
      (at + 3 < m ? key.charCodeAt(at + 3) : 0))
  );
}

/** How many first bytes the page keys at `a .. aEnd` and `b .. bEnd` share. */
function sharedPrefix(page: Buffer, a: number, aEnd: number, b: number, bEnd: number): number {
  const n = Math.min(aEnd - a, bEnd - b);
  let i = 0;
  while (i < n && page[a + i] === page[b + i]) i++;
  return i;
}

/** keyHead of the page key at `start .. end`. */
function pageKeyHead(page: Buffer, start: number, end: number, at: number): number {
  const p = start + at;
  return (p < end ? page[p]! : 0) * 0x1000000 + ((p + 1 < end ? page[p + 1]! : 0) << 16) + ((p + 2 < end ? page[p + 2]! : 0) << 8) + (p + 3 < end ? page[p + 3]! : 0);
}

/** True when leaf key `i` exists and equals `key`. */
export function leafKeyIs(leaf: LeafNode, i: number, key: NodeKey): boolean {
  const source = leaf.source;
  if (source === undefined) {
    if (i >= leaf.keys.length) return false;
    const k = leaf.keys[i]!;
    return typeof k === 'string' ? k === key : compareDirtyKey(k, leaf.packed, key) === 0;
  }
  return i < source.keyOffsets.length && comparePageKey(source.page, source.keyOffsets[i]!, source.valueOffsets[i]!, key) === 0;
}

/** Compares leaf key `i` with `key`: negative, zero or positive as the leaf's key sorts before, with or after it. */
export function compareLeafKey(leaf: LeafNode, i: number, key: NodeKey): number {
  const source = leaf.source;
  if (source === undefined) return compareDirtyKey(leaf.keys[i]!, leaf.packed, key);
  return comparePageKey(source.page, source.keyOffsets[i]!, source.valueOffsets[i]!, key);
}

export interface BranchNode {
  kind: 'branch';
  pageId: number;
  gen: number;
  /** keys[i] is the smallest key of children[i + 1]. */
  keys: NodeKey[];
  children: ChildRef[];
  bytes: number;
  /**
   * Decoded (clean) branches: the keys' shared prefix and heads, as a decoded leaf's (LeafSource),
   * for branchBound; undefined on a dirty branch, whose keys change.
   */
  heads: { prefix: number; heads: Uint32Array } | undefined;
}

/**
 * upperBound over a branch's keys: the child whose subtree holds `key`. A decoded branch compares
 * heads first, which lie together in a few cache lines, and a key string only when heads tie
 * (each string is an object of its own, a cache miss away from the array that holds it).
 */
export function branchBound(node: BranchNode, key: NodeKey): number {
  const h = node.heads;
  const keys = node.keys;
  if (h === undefined) return upperBound(keys, key);
  const n = keys.length;
  if (n === 0) return 0;
  const { prefix, heads } = h;
  const first = keys[0]!;
  const m = key.length;
  for (let i = 0; i < prefix; i++) {
    if (i === m) return 0;
    const d = first.charCodeAt(i) - key.charCodeAt(i);
    if (d !== 0) return d > 0 ? 0 : n;
  }
  const head = keyHead(key, prefix);
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const x = heads[mid]!;
    if (x < head || (x === head && keys[mid]! <= key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export type TreeNode = LeafNode | BranchNode;

export function isOverflowRef(value: LeafValue): value is OverflowRef {
  return typeof value === 'object' && !(value instanceof Uint8Array);
}

/** Byte length of a value (strings hold one byte per char); `packed`: its leaf's, for offsets. */
export function valueLength(value: LeafValue, packed: Buffer | undefined): number {
  return typeof value === 'number' ? packed!.readUInt32LE(value + 1) : value.length;
}

/**
 * The owned form of a value a writer hands in: inline-sized values become latin1 strings, large
 * ones an exact-size copy (never a view that would pin the caller's buffer, a WAL segment or a
 * pooled slab).
 */
export function ownValue(keyLength: number, value: Uint8Array): string | Buffer {
  const bytes = Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  if (fitsInline(keyLength, bytes.length)) return bytes.toString('latin1');
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/** The bytes of an inline value or a pending large one (never an overflow reference). */
export function valueBytes(value: string | Buffer): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'latin1') : value;
}

// Heap estimates for dirty nodes, measured on Node 20 (x64, no pointer compression): a one-byte
// string costs ~24 bytes beyond its characters, an array slot 8 (plus growth slack), a node
// object and its two arrays ~256. Large pending values are Buffers (~200 bytes of objects).
const DIRTY_NODE_BYTES = 256;
const DIRTY_SLOT_BYTES = 16;
const DIRTY_STRING_BYTES = 24;
const DIRTY_ENTRY_BYTES = 64;
const DIRTY_BUFFER_BYTES = 200;

/**
 * Estimated heap held by one dirty leaf entry: its two array slots, and the strings or buffer it
 * owns (an inherited key's or value's bytes count with the slab its leaf's `packed` was carved from).
 */
export function dirtyEntryBytes(key: LeafKey, value: LeafValue): number {
  const keyHeld = typeof key === 'string' ? DIRTY_STRING_BYTES + key.length : 0;
  const valueHeld =
    typeof value === 'string' ? DIRTY_STRING_BYTES + value.length : typeof value === 'number' ? 0 : value instanceof Uint8Array ? value.length + DIRTY_BUFFER_BYTES : 32;
  return 2 * DIRTY_SLOT_BYTES + keyHeld + valueHeld;
}

/** Estimated heap held by one dirty branch entry (separator key and child slot). */
export function dirtyBranchEntryBytes(keyLength: number): number {
  return DIRTY_ENTRY_BYTES + keyLength;
}

/** Estimated heap held by a whole dirty node (its entries and its own objects). */
export function dirtyNodeBytes(node: TreeNode): number {
  let bytes = DIRTY_NODE_BYTES;
  // A leaf's copy of its page counts with the slab it was carved from (PageCopies).
  if (node.kind === 'leaf' && node.packed !== undefined) bytes += DIRTY_BUFFER_BYTES;
  if (node.kind === 'leaf') for (let i = 0; i < node.keys.length; i++) bytes += dirtyEntryBytes(node.keys[i]!, node.values[i]!);
  else for (const key of node.keys) bytes += dirtyBranchEntryBytes(key.length);
  return bytes;
}

/** Estimated heap of an empty dirty node (what a split adds besides the entries it moves). */
export const DIRTY_NODE_OVERHEAD = DIRTY_NODE_BYTES;

/** True when a key/value pair this size is stored inline in its leaf. */
export function fitsInline(keyLength: number, valueLength: number): boolean {
  return keyLength + valueLength <= MAX_INLINE_ENTRY_BYTES;
}

export function leafEntryBytes(keyLength: number, valueLen: number): number {
  return LEAF_ENTRY_FIXED + keyLength + (fitsInline(keyLength, valueLen) ? valueLen : OVERFLOW_REF_SIZE);
}

export function branchEntryBytes(keyLength: number): number {
  return BRANCH_ENTRY_FIXED + keyLength;
}

/**
 * A dirty leaf of epoch `gen`; values must be owned (see ownValue), overflow references, or
 * offsets into `packed`.
 */
export function newLeaf(keys: LeafKey[], values: LeafValue[], gen: number, packed?: Buffer): LeafNode {
  let bytes = PAGE_HEADER_SIZE;
  for (let i = 0; i < keys.length; i++) bytes += leafEntryBytes(leafKeyLength(keys[i]!, packed), valueLength(values[i]!, packed));
  return leafNode(0, gen, keys, values, bytes, packed, undefined);
}

export function newBranch(keys: NodeKey[], children: ChildRef[], gen: number): BranchNode {
  let bytes = PAGE_HEADER_SIZE + BRANCH_CHILD_SIZE;
  for (const key of keys) bytes += branchEntryBytes(key.length);
  return branchNode(0, gen, keys, children, bytes);
}

// Every leaf (and every branch) is built by one function with the same properties in the same
// order, so V8 gives them one hidden class and the hot paths stay monomorphic.
function leafNode(pageId: number, gen: number, keys: LeafKey[], values: LeafValue[], bytes: number, packed: Buffer | undefined, source: LeafNode['source'], lastInsert = -1, run = 0): LeafNode {
  return { kind: 'leaf', pageId, gen, keys, values, bytes, packed, source, lastInsert, run };
}

function branchNode(pageId: number, gen: number, keys: NodeKey[], children: ChildRef[], bytes: number): BranchNode {
  return { kind: 'branch', pageId, gen, keys, children, bytes, heads: undefined };
}

/**
 * All values of a leaf as strings, pending buffers or overflow references, free of any page or
 * `packed` copy: a decoded leaf's inline values, and a dirty leaf's inherited ones, are copied
 * out as latin1 strings (for a merge, which joins entries of two leaves, and for compaction).
 */
export function leafValues(leaf: LeafNode): StoredValue[] {
  const source = leaf.source;
  if (source === undefined) {
    const packed = leaf.packed;
    return leaf.values.map((v) => (typeof v === 'number' ? packed!.toString('latin1', v + 5, v + 5 + packed!.readUInt32LE(v + 1)) : v));
  }
  const values = new Array<StoredValue>(source.valueOffsets.length);
  for (let i = 0; i < values.length; i++) {
    const pos = source.valueOffsets[i]!;
    const length = source.page.readUInt32LE(pos + 1);
    values[i] = source.page[pos] === VALUE_OVERFLOW ? { page: source.page.readUInt32LE(pos + 5), length } : source.page.toString('latin1', pos + 5, pos + 5 + length);
  }
  return values;
}

// Copies of clean pages for dirty leaves are carved from slabs. Allocating an ArrayBuffer per copy
// was the slowest part of a write after a checkpoint (profiled in the stalls bench: ~58% of the
// writes that took over 8 ms, about 150 µs per 8 KiB allocation). A slab stays alive while any copy
// carved from it does, so each store has its own slabs and starts a new one at every checkpoint
// capture: a slab then holds copies of one store's one generation of dirty nodes, which are
// released together. Slabs shared by every store let a quiet tenant's few copies keep alive slabs
// filled by a busy tenant's long-released ones (measured: 150 rounds of one write to a quiet store
// and 500 to a busy, checkpointing one: 38 MiB more live memory, of which the cache and the
// budget counted 6.5; test/memory/memory-bound.test.ts). The budget counts a slab whole when it is allocated (its unused tail included), in
// the generation it belongs to; slabs grow from 16 KiB to 256 KiB within a generation, so a store
// that copies a page or two does not hold a large one.
// A dirty leaf copied again in a later epoch takes its own copy of `packed` in the current slab
// rather than sharing the old one, for the same reason.
const MIN_SLAB_BYTES = 16 * 1024;
const MAX_SLAB_BYTES = 256 * 1024;

/** Where one store's dirty leaves copy the bytes of the pages they were copied from (see above). */
export class PageCopies {
  #slab: Buffer = Buffer.alloc(0);
  #used = 0;
  #nextBytes = MIN_SLAB_BYTES;
  readonly #counted: (bytes: number) => void;

  /** `counted` is told the size of every slab allocated (the store adds it to its dirty bytes). */
  constructor(counted: (bytes: number) => void) {
    this.#counted = counted;
  }

  /** A copy of `page`'s first `bytes` bytes, carved from the current slab. */
  copy(page: Buffer, bytes: number): Buffer {
    if (this.#used + bytes > this.#slab.length) {
      const size = Math.max(this.#nextBytes, bytes);
      this.#slab = Buffer.allocUnsafeSlow(size);
      this.#used = 0;
      this.#nextBytes = Math.min(MAX_SLAB_BYTES, size * 2);
      this.#counted(size);
    }
    const copy = this.#slab.subarray(this.#used, this.#used + bytes);
    page.copy(copy, 0, 0, bytes);
    this.#used += bytes;
    return copy;
  }

  /** Starts a new generation: later copies never share a slab with earlier ones. */
  restart(): void {
    this.#slab = Buffer.alloc(0);
    this.#used = 0;
    this.#nextBytes = MIN_SLAB_BYTES;
  }
}

/**
 * A dirty copy of a node for epoch `gen` (copy-on-write): the arrays are copied, keys and owned
 * values shared (immutable), `packed` copied into the store's current slab (`copies`). A decoded
 * leaf's page is copied once, its used bytes, into the new leaf's `packed` (off-heap), and its keys
 * and values become offsets into it.
 */
export function cloneNode(node: TreeNode, gen: number, copies: PageCopies): TreeNode {
  if (node.kind === 'leaf') {
    const source = node.source;
    if (source === undefined) {
      const packed = node.packed === undefined ? undefined : copies.copy(node.packed, node.packed.length);
      return leafNode(0, gen, node.keys.slice(), node.values.slice(), node.bytes, packed, undefined, node.lastInsert, node.run);
    }
    const packed = copies.copy(source.page, node.bytes);
    const values = new Array<LeafValue>(source.valueOffsets.length);
    for (let i = 0; i < values.length; i++) {
      const pos = source.valueOffsets[i]!;
      values[i] = packed[pos] === VALUE_OVERFLOW ? { page: packed.readUInt32LE(pos + 5), length: packed.readUInt32LE(pos + 1) } : pos;
    }
    // Keys stay in the copy too: the copy has the page's layout, so the offsets carry over.
    const keys = new Array<LeafKey>(source.keyOffsets.length);
    for (let i = 0; i < keys.length; i++) keys[i] = source.keyOffsets[i]!;
    return leafNode(0, gen, keys, values, node.bytes, packed, undefined);
  }
  return branchNode(0, gen, node.keys.slice(), node.children.slice(), node.bytes);
}

/**
 * Adds a leaf's values to `stats`: their bytes (an overflow value by its length, not read) and the
 * overflow pages they take: those a value points at, and for a dirty leaf's large values the pages
 * they will take at the next checkpoint.
 */
export function addLeafValues(leaf: LeafNode, stats: { valueBytes: number; overflowPages: number }): void {
  const source = leaf.source;
  if (source !== undefined) {
    const { page, valueOffsets } = source;
    for (let i = 0; i < valueOffsets.length; i++) addPageValue(page, valueOffsets[i]!, stats);
    return;
  }
  for (const v of leaf.values) {
    if (typeof v === 'string') stats.valueBytes += v.length;
    else if (typeof v === 'number') addPageValue(leaf.packed!, v, stats);
    else {
      // A Buffer in a dirty leaf is a large value waiting for its overflow pages (see StoredValue).
      stats.valueBytes += v.length;
      stats.overflowPages += Math.ceil(v.length / (PAGE_SIZE - PAGE_HEADER_SIZE));
    }
  }
}

// addLeafValues for the value whose kind byte is at `pos` in a page (or a dirty leaf's packed copy).
function addPageValue(page: Buffer, pos: number, stats: { valueBytes: number; overflowPages: number }): void {
  const length = page.readUInt32LE(pos + 1);
  stats.valueBytes += length;
  if (page[pos] === VALUE_OVERFLOW) stats.overflowPages += Math.ceil(length / (PAGE_SIZE - PAGE_HEADER_SIZE));
}

/** Approximate memory held by a decoded node, for the page cache's byte budget. */
export function nodeMemoryBytes(node: TreeNode): number {
  // Estimated for Node 20: the page buffer and the node's own objects, plus per entry two 16-bit
  // offsets and a 32-bit head (with slack) for a leaf, whose keys and values stay in the page, or
  // ~60 bytes beyond its characters (string header, array slot, head) for a branch's decoded key.
  let bytes = PAGE_SIZE + 400;
  if (node.kind === 'leaf') return bytes + 12 * leafKeyCount(node);
  for (const key of node.keys) bytes += 60 + key.length;
  return bytes;
}

/**
 * Encodes a clean-ready node into `page` (PAGE_SIZE bytes, checksum left for the writer). Every
 * value must already be inline-sized bytes or an OverflowRef, every child a page id.
 */
export function encodeNode(node: TreeNode, page: Buffer, childId: (child: ChildRef | undefined) => number = requirePageId): void {
  page.fill(0, 0, PAGE_HEADER_SIZE);
  let pos = PAGE_HEADER_SIZE;
  if (node.kind === 'leaf') {
    page[PAGE_TYPE_OFFSET] = PAGE_TYPE.LEAF;
    page.writeUInt16LE(node.keys.length, PAGE_COUNT_OFFSET);
    const packed = node.packed;
    // Inherited entries (key and value both still the copied page's) that lie next to each other
    // in `packed` are copied as one span: a copy per entry cost more than the bytes it moved.
    let runStart = -1;
    let runEnd = -1;
    for (let i = 0; i < node.keys.length; i++) {
      const key = node.keys[i]!;
      const value = node.values[i]!;
      if (typeof key === 'number' && typeof value === 'number' && value === key + packed!.readUInt16LE(key - 2)) {
        const start = key - 2;
        const end = value + 5 + packed!.readUInt32LE(value + 1);
        if (start !== runEnd) {
          if (runStart >= 0) pos += packed!.copy(page, pos, runStart, runEnd);
          runStart = start;
        }
        runEnd = end;
        continue;
      }
      if (runStart >= 0) {
        pos += packed!.copy(page, pos, runStart, runEnd);
        runStart = -1;
        runEnd = -1;
      }
      if (typeof key === 'string') {
        page.writeUInt16LE(key.length, pos);
        pos += 2;
        pos += page.write(key, pos, 'latin1');
      } else {
        // An inherited key: its [u16 length][bytes] copied as they were on the old page.
        pos += packed!.copy(page, pos, key - 2, key + packed!.readUInt16LE(key - 2));
      }
      if (typeof value === 'number') {
        // An inherited value: its [kind][length][bytes] copied as they were on the old page.
        pos += packed!.copy(page, pos, value, value + 5 + packed!.readUInt32LE(value + 1));
      } else if (typeof value === 'string') {
        page[pos++] = VALUE_INLINE;
        page.writeUInt32LE(value.length, pos);
        pos += 4;
        pos += page.write(value, pos, 'latin1');
      } else if (isOverflowRef(value)) {
        page[pos++] = VALUE_OVERFLOW;
        page.writeUInt32LE(value.length, pos);
        page.writeUInt32LE(value.page, pos + 4);
        pos += 8;
      } else {
        page[pos++] = VALUE_INLINE;
        page.writeUInt32LE(value.length, pos);
        pos += 4;
        pos += value.copy(page, pos);
      }
    }
    if (runStart >= 0) pos += packed!.copy(page, pos, runStart, runEnd);
  } else {
    page[PAGE_TYPE_OFFSET] = PAGE_TYPE.BRANCH;
    page.writeUInt16LE(node.children.length, PAGE_COUNT_OFFSET);
    page.writeUInt32LE(childId(node.children[0]), pos);
    pos += 4;
    for (let i = 0; i < node.keys.length; i++) {
      const key = node.keys[i]!;
      page.writeUInt16LE(key.length, pos);
      pos += 2;
      pos += page.write(key, pos, 'latin1');
      page.writeUInt32LE(childId(node.children[i + 1]), pos);
      pos += 4;
    }
  }
  if (pos > PAGE_SIZE) throw new Error(`node overflowed its page (${pos} bytes)`);
  page.fill(0, pos);
}

function requirePageId(child: ChildRef | undefined): number {
  if (typeof child === 'number') return child;
  if (child !== undefined && child.pageId !== 0) return child.pageId;
  throw new Error('encodeNode: child not written yet');
}

/**
 * Decodes a leaf or branch page whose checksum was verified. A leaf keeps its keys and values in
 * `page` (offsets only), so a cached leaf costs one page buffer plus two small arrays; a branch
 * decodes its keys into strings. `knownKeys`: a branch's keys just encoded into `page`
 * (immutable once captured), shared instead of decoded again (leaves ignore it).
 */
export function decodeNode(page: Buffer, pageId: number, knownKeys?: readonly NodeKey[] | undefined): TreeNode {
  const type = page[PAGE_TYPE_OFFSET];
  const count = page.readUInt16LE(PAGE_COUNT_OFFSET);
  let pos = PAGE_HEADER_SIZE;
  if (type === PAGE_TYPE.LEAF) {
    // One allocation for the offsets and the heads: an ArrayBuffer is a malloc, and mallocs on the
    // main thread contend with V8's concurrent sweeper freeing the ones that died (see PageCopies).
    const memory = new ArrayBuffer(8 * count);
    const keyOffsets = new Uint16Array(memory, 0, count);
    const valueOffsets = new Uint16Array(memory, 2 * count, count);
    const heads = new Uint32Array(memory, 4 * count, count);
    for (let i = 0; i < count; i++) {
      const keyLength = page.readUInt16LE(pos);
      pos += 2;
      keyOffsets[i] = pos;
      pos += keyLength;
      valueOffsets[i] = pos;
      const kind = page[pos];
      pos += 5 + (kind === VALUE_OVERFLOW ? OVERFLOW_REF_SIZE : page.readUInt32LE(pos + 1));
    }
    const prefix = count === 0 ? 0 : sharedPrefix(page, keyOffsets[0]!, valueOffsets[0]!, keyOffsets[count - 1]!, valueOffsets[count - 1]!);
    for (let i = 0; i < count; i++) heads[i] = pageKeyHead(page, keyOffsets[i]!, valueOffsets[i]!, prefix);
    // Neither keys nor values are materialized: the leaf* functions read them from the page
    // (leafValues builds the values for the rare callers that need all of them).
    return leafNode(pageId, -1, undefined as unknown as NodeKey[], undefined as unknown as LeafValue[], pos, undefined, { page, keyOffsets, valueOffsets, prefix, heads });
  }
  if (type === PAGE_TYPE.BRANCH) {
    const children = new Array<ChildRef>(count);
    const keys = knownKeys === undefined ? new Array<NodeKey>(Math.max(0, count - 1)) : (knownKeys as NodeKey[]);
    children[0] = page.readUInt32LE(pos);
    pos += 4;
    for (let i = 1; i < count; i++) {
      const keyLength = page.readUInt16LE(pos);
      pos += 2;
      if (knownKeys === undefined) keys[i - 1] = page.toString('latin1', pos, pos + keyLength);
      pos += keyLength;
      children[i] = page.readUInt32LE(pos);
      pos += 4;
    }
    const node = branchNode(pageId, -1, keys, children, pos);
    if (keys.length > 0) {
      const last = keys[keys.length - 1]!;
      const first = keys[0]!;
      const n = Math.min(first.length, last.length);
      let prefix = 0;
      while (prefix < n && first.charCodeAt(prefix) === last.charCodeAt(prefix)) prefix++;
      const heads = new Uint32Array(keys.length);
      for (let i = 0; i < keys.length; i++) heads[i] = keyHead(keys[i]!, prefix);
      node.heads = { prefix, heads };
    }
    return node;
  }
  throw new Error(`page ${pageId} is not a tree page (type ${type})`);
}
