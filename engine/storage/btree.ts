import {
  branchEntryBytes,
  cloneNode,
  isOverflowRef,
  leafKeyBytes,
  leafValueAt,
  leafValues,
  toNodeKey,
  leafEntryBytes,
  newBranch,
  newLeaf,
  valueLength,
  type BranchNode,
  type ChildRef,
  type LeafNode,
  type LeafValue,
  type NodeKey,
  type OverflowRef,
  type TreeNode,
} from './btree-node.js';
import { BRANCH_CHILD_SIZE, NO_PAGE, PAGE_HEADER_SIZE, PAGE_SIZE } from './format.js';

/** Where a tree gets its clean pages and reports the ones it stops using. */
export interface NodeStore {
  /** The decoded clean node at `pageId` (from the cache or the file). */
  load(pageId: number): TreeNode;
  /** Reads a value stored on overflow pages. */
  readOverflow(ref: OverflowRef): Buffer;
  /** Counts `pages` on-disk pages as garbage once the next checkpoint lands. */
  retire(pages: number): void;
}

/** Bounds of a scan; at most one lower and one upper bound. Keys compare as unsigned bytes. */
export interface ScanRange {
  gt?: Uint8Array;
  gte?: Uint8Array;
  lt?: Uint8Array;
  lte?: Uint8Array;
  reverse?: boolean;
  limit?: number;
}

export type Entry = [key: Buffer, value: Buffer];

// Nodes smaller than this after a delete try to merge with a sibling.
const MERGE_THRESHOLD = PAGE_SIZE / 4;

interface Split {
  key: NodeKey;
  right: TreeNode;
}

/** Index of the first key >= `key`. */
function lowerBound(keys: NodeKey[], key: NodeKey): number {
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
function upperBound(keys: NodeKey[], key: NodeKey): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! <= key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function isEmpty(node: TreeNode): boolean {
  return node.kind === 'leaf' ? node.keys.length === 0 : node.children.length === 0;
}

/**
 * One copy-on-write B+tree. Clean nodes (on disk) are never modified: a write copies the path
 * from the root to its leaf into dirty nodes, which the next checkpoint appends to the page file.
 * Mutations apply synchronously; durability is the tenant store's business (WAL).
 */
export class BTree {
  readonly #store: NodeStore;
  /** Page id of a clean root, the dirty root node, or NO_PAGE for an empty tree. */
  root: ChildRef;
  /** Number of keys, kept exact so count() without bounds is O(1). */
  count: number;
  /** Bumped on every mutation; live iterators re-seek when it changes under them. */
  version = 0;

  constructor(store: NodeStore, root: ChildRef, count: number) {
    this.#store = store;
    this.root = root;
    this.count = count;
  }

  /** True when the tree has changes the next checkpoint must write. */
  get dirty(): boolean {
    return typeof this.root !== 'number';
  }

  #node(ref: ChildRef): TreeNode {
    return typeof ref === 'number' ? this.#store.load(ref) : ref;
  }

  /** A dirty node for `ref`, copying it if it is clean or frozen by a running checkpoint. */
  #mutable(ref: ChildRef): TreeNode {
    if (typeof ref !== 'number') {
      if (ref.frozen !== true) return ref;
      this.#store.retire(1); // the checkpoint writes it; this copy supersedes that page
      return cloneNode(ref);
    }
    const copy = cloneNode(this.#store.load(ref));
    this.#store.retire(1);
    return copy;
  }

  #readValue(value: LeafValue): Buffer {
    return isOverflowRef(value) ? this.#store.readOverflow(value) : value;
  }

  #retireValue(value: LeafValue): void {
    if (isOverflowRef(value)) this.#store.retire(overflowPages(value.length));
  }

  /** The value stored under `key`, or undefined. */
  get(bytes: Uint8Array): Buffer | undefined {
    if (this.root === NO_PAGE) return undefined;
    const key = toNodeKey(bytes);
    let node = this.#node(this.root);
    while (node.kind === 'branch') node = this.#node(node.children[upperBound(node.keys, key)]!);
    const i = lowerBound(node.keys, key);
    if (i < node.keys.length && node.keys[i] === key) return this.#readValue(leafValueAt(node, i));
    return undefined;
  }

  has(bytes: Uint8Array): boolean {
    if (this.root === NO_PAGE) return false;
    return this.#has(toNodeKey(bytes));
  }

  #has(key: NodeKey): boolean {
    if (this.root === NO_PAGE) return false;
    let node = this.#node(this.root);
    while (node.kind === 'branch') node = this.#node(node.children[upperBound(node.keys, key)]!);
    const i = lowerBound(node.keys, key);
    return i < node.keys.length && node.keys[i] === key;
  }

  /** Inserts or replaces; returns true when the key was new. The caller validated sizes. */
  put(bytes: Uint8Array, value: Buffer): boolean {
    const key = toNodeKey(bytes);
    this.version++;
    if (this.root === NO_PAGE) {
      this.root = newLeaf([key], [value]);
      this.count = 1;
      return true;
    }
    const root = this.#mutable(this.root);
    const before = this.count;
    const split = this.#insert(root, key, value);
    this.root = split ? newBranch([split.key], [root, split.right]) : root;
    return this.count > before;
  }

  #insert(node: TreeNode, key: NodeKey, value: Buffer): Split | undefined {
    if (node.kind === 'leaf') {
      const i = lowerBound(node.keys, key);
      if (i < node.keys.length && node.keys[i] === key) {
        const old = node.values[i]!;
        this.#retireValue(old);
        node.bytes += leafEntryBytes(key.length, value.length) - leafEntryBytes(key.length, valueLength(old));
        node.values[i] = value;
      } else {
        node.keys.splice(i, 0, key);
        node.values.splice(i, 0, value);
        node.bytes += leafEntryBytes(key.length, value.length);
        this.count++;
      }
      return node.bytes > PAGE_SIZE ? splitLeaf(node, i === node.keys.length - 1) : undefined;
    }
    const i = upperBound(node.keys, key);
    const child = this.#mutable(node.children[i]!);
    node.children[i] = child;
    const split = this.#insert(child, key, value);
    if (!split) return undefined;
    node.keys.splice(i, 0, split.key);
    node.children.splice(i + 1, 0, split.right);
    node.bytes += branchEntryBytes(split.key.length);
    return node.bytes > PAGE_SIZE ? splitBranch(node) : undefined;
  }

  /** Removes `key`; returns true when it was there. Absent keys copy nothing. */
  delete(bytes: Uint8Array): boolean {
    const key = toNodeKey(bytes);
    if (!this.#has(key)) return false;
    this.version++;
    const root = this.#mutable(this.root);
    this.#remove(root, key);
    this.count--;
    let next: ChildRef = root;
    // Collapse a root that lost its keys or has a single child.
    for (;;) {
      const node = this.#node(next);
      if (isEmpty(node)) {
        if (persisted(next)) this.#store.retire(1);
        next = NO_PAGE;
        break;
      }
      if (node.kind === 'branch' && node.children.length === 1) {
        if (persisted(next)) this.#store.retire(1);
        next = node.children[0]!;
        continue;
      }
      break;
    }
    this.root = next;
    return true;
  }

  #remove(node: TreeNode, key: NodeKey): void {
    if (node.kind === 'leaf') {
      const i = lowerBound(node.keys, key);
      const value = node.values[i]!;
      this.#retireValue(value);
      node.bytes -= leafEntryBytes(node.keys[i]!.length, valueLength(value));
      node.keys.splice(i, 1);
      node.values.splice(i, 1);
      return;
    }
    const i = upperBound(node.keys, key);
    const child = this.#mutable(node.children[i]!);
    node.children[i] = child;
    this.#remove(child, key);
    if (isEmpty(child)) {
      removeChild(node, i);
      return;
    }
    if (child.bytes < MERGE_THRESHOLD && node.children.length > 1) this.#mergeWithSibling(node, i);
  }

  /** Merges child i with a neighbour when both fit in one page. */
  #mergeWithSibling(parent: BranchNode, i: number): void {
    const leftIndex = i > 0 ? i - 1 : i;
    const left = this.#node(parent.children[leftIndex]!);
    const right = this.#node(parent.children[leftIndex + 1]!);
    const separator = parent.keys[leftIndex]!;
    const merged =
      left.kind === 'leaf'
        ? left.bytes + right.bytes - PAGE_HEADER_SIZE
        : left.bytes + right.bytes - PAGE_HEADER_SIZE - BRANCH_CHILD_SIZE + branchEntryBytes(separator.length);
    if (merged > PAGE_SIZE) return;
    const target = this.#mutable(parent.children[leftIndex]!);
    if (persisted(parent.children[leftIndex + 1]!)) this.#store.retire(1);
    if (target.kind === 'leaf' && right.kind === 'leaf') {
      target.keys.push(...right.keys);
      target.values.push(...leafValues(right));
    } else if (target.kind === 'branch' && right.kind === 'branch') {
      target.keys.push(separator, ...right.keys);
      target.children.push(...right.children);
    } else {
      throw new Error('B+tree invariant broken: siblings of different kinds');
    }
    target.bytes = merged;
    parent.children[leftIndex] = target;
    removeChild(parent, leftIndex + 1);
  }

  /** Entries in key order (or reverse) within `range`. Safe against writes between steps. */
  *scan(range: ScanRange = {}): Generator<Entry> {
    for (const [leaf, i] of this.#walk(range)) yield [leafKeyBytes(leaf, i), this.#readValue(leafValueAt(leaf, i))];
  }

  /** Keys only: no overflow reads. */
  *keys(range: ScanRange = {}): Generator<Buffer> {
    for (const [leaf, i] of this.#walk(range)) yield leafKeyBytes(leaf, i);
  }

  /** Number of keys within `range` (O(1) without bounds). */
  countRange(range: ScanRange = {}): number {
    if (range.gt === undefined && range.gte === undefined && range.lt === undefined && range.lte === undefined) {
      return range.limit === undefined ? this.count : Math.min(this.count, range.limit);
    }
    let n = 0;
    for (const _ of this.#walk(range)) n++;
    return n;
  }

  /** Yields (leaf, index) pairs; the pair is only valid until the next step. */
  *#walk(range: ScanRange): Generator<[LeafNode, number]> {
    const reverse = range.reverse === true;
    let limit = range.limit ?? Infinity;
    if (limit <= 0 || this.root === NO_PAGE) return;
    // Lower/upper bound checks on the far end of the walk.
    const stopBytes = reverse ? (range.gte ?? range.gt) : (range.lte ?? range.lt);
    const stopKey = stopBytes === undefined ? undefined : toNodeKey(stopBytes);
    const stopInclusive = reverse ? range.gte !== undefined : range.lte !== undefined;

    const seekBytes = reverse ? (range.lte ?? range.lt) : (range.gte ?? range.gt);
    let seekKey: NodeKey | undefined = seekBytes === undefined ? undefined : toNodeKey(seekBytes);
    let seekInclusive = reverse ? range.lte !== undefined : range.gte !== undefined;
    let version = this.version;
    let stack = this.#seek(seekKey, seekInclusive, reverse);

    while (stack.length > 0) {
      if (version !== this.version) {
        // The tree changed under us: find our place again from the last key we returned.
        version = this.version;
        stack = this.#seek(seekKey, seekInclusive, reverse);
        if (stack.length === 0) return;
      }
      const top = stack[stack.length - 1]!;
      const leaf = top.node as LeafNode;
      const key = leaf.keys[top.index]!;
      if (stopKey !== undefined) {
        const c = key < stopKey ? -1 : key > stopKey ? 1 : 0;
        if (reverse ? c < 0 || (c === 0 && !stopInclusive) : c > 0 || (c === 0 && !stopInclusive)) return;
      }
      const index = top.index;
      seekKey = key;
      seekInclusive = false;
      this.#advance(stack, reverse);
      yield [leaf, index];
      if (--limit <= 0) return;
    }
  }

  /** A path from the root to the first entry at/after (or at/before, reversed) `key`. */
  #seek(key: NodeKey | undefined, inclusive: boolean, reverse: boolean): Array<{ node: TreeNode; index: number }> {
    const stack: Array<{ node: TreeNode; index: number }> = [];
    if (this.root === NO_PAGE) return stack;
    let node = this.#node(this.root);
    for (;;) {
      let index: number;
      if (node.kind === 'branch') {
        if (key === undefined) index = reverse ? node.children.length - 1 : 0;
        else if (reverse && !inclusive) index = lowerBound(node.keys, key);
        else index = upperBound(node.keys, key);
        stack.push({ node, index });
        node = this.#node(node.children[index]!);
        continue;
      }
      if (key === undefined) index = reverse ? node.keys.length - 1 : 0;
      else if (reverse) index = (inclusive ? upperBound(node.keys, key) : lowerBound(node.keys, key)) - 1;
      else index = inclusive ? lowerBound(node.keys, key) : upperBound(node.keys, key);
      stack.push({ node, index });
      break;
    }
    if (!this.#valid(stack)) this.#advance(stack, reverse, true);
    return stack;
  }

  #valid(stack: Array<{ node: TreeNode; index: number }>): boolean {
    const top = stack[stack.length - 1];
    return top !== undefined && top.index >= 0 && top.index < (top.node as LeafNode).keys.length;
  }

  /** Moves to the next (previous) entry; empties the stack at the end. */
  #advance(stack: Array<{ node: TreeNode; index: number }>, reverse: boolean, positioned = false): void {
    const step = reverse ? -1 : 1;
    const top = stack[stack.length - 1]!;
    if (!positioned) top.index += step;
    if (this.#valid(stack)) return;
    // Climb until a branch has another child in our direction, then descend to its edge leaf.
    stack.pop();
    while (stack.length > 0) {
      const frame = stack[stack.length - 1]!;
      const branch = frame.node as BranchNode;
      frame.index += step;
      if (frame.index < 0 || frame.index >= branch.children.length) {
        stack.pop();
        continue;
      }
      let node = this.#node(branch.children[frame.index]!);
      while (node.kind === 'branch') {
        const index = reverse ? node.children.length - 1 : 0;
        stack.push({ node, index });
        node = this.#node(node.children[index]!);
      }
      stack.push({ node, index: reverse ? node.keys.length - 1 : 0 });
      if (this.#valid(stack)) return;
      stack.pop(); // an empty leaf cannot exist in a well-formed tree; keep climbing anyway
    }
  }

  /** Calls `visit` for every clean page reachable from the root (for dropping and compaction). */
  forEachPage(visit: (pageId: number, node: TreeNode) => void): void {
    const walk = (ref: ChildRef): void => {
      const node = this.#node(ref);
      if (typeof ref === 'number') visit(ref, node);
      if (node.kind === 'branch') for (const child of node.children) walk(child);
    };
    if (this.root !== NO_PAGE) walk(this.root);
  }
}

/** True when `ref` is, or is about to be, a page on disk (so replacing it makes garbage). */
function persisted(ref: ChildRef): boolean {
  return typeof ref === 'number' || ref.frozen === true;
}

/** Pages an overflow value of `length` bytes occupies. */
export function overflowPages(length: number): number {
  return Math.ceil(length / (PAGE_SIZE - PAGE_HEADER_SIZE));
}

function removeChild(node: BranchNode, i: number): void {
  const keyIndex = i > 0 ? i - 1 : 0;
  if (node.keys.length > 0) {
    node.bytes -= branchEntryBytes(node.keys[keyIndex]!.length);
    node.keys.splice(keyIndex, 1);
  } else {
    node.bytes -= 4;
  }
  node.children.splice(i, 1);
}

/**
 * Splits an over-full leaf by bytes. After an append at the right edge the new entry alone moves
 * right (the rest fitted before it came), so ascending inserts leave full pages, not half-full.
 */
function splitLeaf(node: LeafNode, appended: boolean): Split {
  const n = node.keys.length;
  let at = n - 1;
  if (!appended) at = balancedSplit(node.keys.map((k, i) => leafEntryBytes(k.length, valueLength(node.values[i]!))), 0);
  const right = newLeaf(node.keys.splice(at), node.values.splice(at));
  node.bytes -= right.bytes - PAGE_HEADER_SIZE;
  return { key: right.keys[0]!, right };
}

/** The separator at the byte middle moves up; each side keeps at least one child. */
function splitBranch(node: BranchNode): Split {
  const m = balancedSplit(node.keys.map((k) => branchEntryBytes(k.length)), 1) - 1;
  const key = node.keys[m]!;
  const right = newBranch(node.keys.splice(m + 1), node.children.splice(m + 1));
  node.keys.pop();
  node.bytes = newBranch(node.keys, node.children).bytes;
  return { key, right };
}

/** The index in [min, sizes.length - 1] that splits `sizes` into the most even two byte sums. */
function balancedSplit(sizes: number[], min: number): number {
  let total = 0;
  for (const s of sizes) total += s;
  let best = Math.max(1, min);
  let bestDiff = Infinity;
  let left = 0;
  for (let i = 0; i < sizes.length; i++) {
    if (i >= Math.max(1, min)) {
      const diff = Math.abs(total - 2 * left);
      if (diff < bestDiff) {
        bestDiff = diff;
        best = i;
      }
    }
    left += sizes[i]!;
  }
  return best;
}
