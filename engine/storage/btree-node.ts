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

/** A leaf value: bytes (inline, or large and not yet written), or a reference to overflow pages. */
export type LeafValue = Buffer | OverflowRef;

/**
 * A child reference: a page id (the child is clean, on disk, immutable) or the child node itself
 * (dirty, in memory, owned by this parent until the next checkpoint writes it).
 */
export type ChildRef = number | TreeNode;

export interface LeafNode {
  kind: 'leaf';
  /** Page id once written (clean, or frozen and written by a checkpoint); 0 before. */
  pageId: number;
  /** A dirty node captured by a checkpoint in progress: immutable from then on, like a page. */
  frozen?: boolean;
  keys: NodeKey[];
  values: LeafValue[];
  /** Encoded size in bytes, header included; the node splits when this passes PAGE_SIZE. */
  bytes: number;
  /**
   * Set on nodes decoded from a page (whose `values` is then not built: use leafValueAt or
   * leafValues): where each key's bytes start in `page`, so scans hand out
   * zero-copy views instead of re-encoding the key strings.
   */
  source?: { page: Buffer; keyOffsets: Uint16Array; valueOffsets: Uint16Array };
}

/**
 * Value `i` of a leaf. Decoded leaves build their `values` array only when something needs all
 * of them (a copy-on-write, a merge): a Buffer view per entry costs ~90 bytes, more than the key,
 * so reads take the one value they need straight from the page.
 */
export function leafValueAt(leaf: LeafNode, i: number): LeafValue {
  const source = leaf.source;
  return source === undefined ? leaf.values[i]! : valueAt(source.page, source.valueOffsets[i]!);
}

/** The value whose [u8 kind][u32 length] starts at `pos` in `page`. */
function valueAt(page: Buffer, pos: number): LeafValue {
  const length = page.readUInt32LE(pos + 1);
  if (page[pos] === VALUE_OVERFLOW) return { page: page.readUInt32LE(pos + 5), length };
  return page.subarray(pos + 5, pos + 5 + length);
}

/** The bytes of leaf key `i`: a view into its page when it has one, else a fresh Buffer. */
export function leafKeyBytes(leaf: LeafNode, i: number): Buffer {
  const source = leaf.source;
  if (source === undefined) return fromNodeKey(leaf.keys[i]!);
  const start = source.keyOffsets[i]!;
  return source.page.subarray(start, start + leaf.keys[i]!.length);
}

export interface BranchNode {
  kind: 'branch';
  pageId: number;
  frozen?: boolean;
  /** keys[i] is the smallest key of children[i + 1]. */
  keys: NodeKey[];
  children: ChildRef[];
  bytes: number;
}

export type TreeNode = LeafNode | BranchNode;

export function isOverflowRef(value: LeafValue): value is OverflowRef {
  return !(value instanceof Uint8Array);
}

export function valueLength(value: LeafValue): number {
  return isOverflowRef(value) ? value.length : value.length;
}

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

export function newLeaf(keys: NodeKey[], values: LeafValue[]): LeafNode {
  let bytes = PAGE_HEADER_SIZE;
  for (let i = 0; i < keys.length; i++) bytes += leafEntryBytes(keys[i]!.length, valueLength(values[i]!));
  return leafNode(0, keys, values, bytes, undefined);
}

export function newBranch(keys: NodeKey[], children: ChildRef[]): BranchNode {
  let bytes = PAGE_HEADER_SIZE + BRANCH_CHILD_SIZE;
  for (const key of keys) bytes += branchEntryBytes(key.length);
  return branchNode(0, keys, children, bytes);
}

// Every leaf (and every branch) is built by one function with the same properties in the same
// order, so V8 gives them one hidden class and the hot paths stay monomorphic.
function leafNode(pageId: number, keys: NodeKey[], values: LeafValue[], bytes: number, source: LeafNode['source']): LeafNode {
  return { kind: 'leaf', pageId, frozen: false, keys, values, bytes, source };
}

function branchNode(pageId: number, keys: NodeKey[], children: ChildRef[], bytes: number): BranchNode {
  return { kind: 'branch', pageId, frozen: false, keys, children, bytes };
}

/** All values of a leaf, built from its page when it was decoded. */
export function leafValues(leaf: LeafNode): LeafValue[] {
  return leaf.source === undefined ? leaf.values : leaf.keys.map((_, i) => leafValueAt(leaf, i));
}

/** A dirty copy of a clean node (copy-on-write); the arrays are copied, keys and values shared. */
export function cloneNode(node: TreeNode): TreeNode {
  if (node.kind === 'leaf') {
    // Read values one by one from a decoded page rather than make the cached node build (and
    // keep) its whole values array.
    const values = node.source === undefined ? node.values.slice() : leafValues(node);
    return leafNode(0, node.keys.slice(), values, node.bytes, undefined);
  }
  return branchNode(0, node.keys.slice(), node.children.slice(), node.bytes);
}

/** Approximate memory held by a decoded node, for the page cache's byte budget. */
export function nodeMemoryBytes(node: TreeNode): number {
  // Estimated for Node 20: a decoded key costs ~56 bytes beyond its characters (string header,
  // array slot, two offsets), on top of the page buffer and the node's own objects. Values are
  // not materialized in cached nodes (leafValueAt).
  let bytes = PAGE_SIZE + 400;
  for (const key of node.keys) bytes += 56 + key.length;
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
    for (let i = 0; i < node.keys.length; i++) {
      const key = node.keys[i]!;
      const value = node.values[i]!;
      page.writeUInt16LE(key.length, pos);
      pos += 2;
      pos += page.write(key, pos, 'latin1');
      if (isOverflowRef(value)) {
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
 * Decodes a leaf or branch page whose checksum was verified. Inline values are views into
 * `page`, so a cached node costs one page buffer plus its arrays and key strings.
 */
export function decodeNode(page: Buffer, pageId: number): TreeNode {
  const type = page[PAGE_TYPE_OFFSET];
  const count = page.readUInt16LE(PAGE_COUNT_OFFSET);
  let pos = PAGE_HEADER_SIZE;
  if (type === PAGE_TYPE.LEAF) {
    const keys = new Array<NodeKey>(count);
    const keyOffsets = new Uint16Array(count);
    const valueOffsets = new Uint16Array(count);
    for (let i = 0; i < count; i++) {
      const keyLength = page.readUInt16LE(pos);
      pos += 2;
      keyOffsets[i] = pos;
      keys[i] = page.toString('latin1', pos, pos + keyLength);
      pos += keyLength;
      valueOffsets[i] = pos;
      const kind = page[pos];
      pos += 5 + (kind === VALUE_OVERFLOW ? OVERFLOW_REF_SIZE : page.readUInt32LE(pos + 1));
    }
    // Values are not materialized: leafValueAt reads them from the page, leafValues builds the
    // array for the rare callers that need all of them.
    return leafNode(pageId, keys, undefined as unknown as LeafValue[], pos, { page, keyOffsets, valueOffsets });
  }
  if (type === PAGE_TYPE.BRANCH) {
    const children = new Array<ChildRef>(count);
    const keys = new Array<NodeKey>(Math.max(0, count - 1));
    children[0] = page.readUInt32LE(pos);
    pos += 4;
    for (let i = 1; i < count; i++) {
      const keyLength = page.readUInt16LE(pos);
      pos += 2;
      keys[i - 1] = page.toString('latin1', pos, pos + keyLength);
      pos += keyLength;
      children[i] = page.readUInt32LE(pos);
      pos += 4;
    }
    return branchNode(pageId, keys, children, pos);
  }
  throw new Error(`page ${pageId} is not a tree page (type ${type})`);
}
