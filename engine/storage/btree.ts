import {
  branchEntryBytes,
  cloneNode,
  PageCopies,
  DIRTY_NODE_OVERHEAD,
  dirtyBranchEntryBytes,
  dirtyEntryBytes,
  dirtyNodeBytes,
  compareLeafKey,
  isOverflowRef,
  leafBound,
  lowerBound,
  upperBound,
  branchBound,
  addLeafValues,
  leafKeyAt,
  leafKeyBytes,
  leafKeyLength,
  leafKeyCount,
  leafKeyIs,
  leafKeyList,
  leafValueAt,
  leafValues,
  ownValue,
  toNodeKey,
  leafEntryBytes,
  newBranch,
  newLeaf,
  valueLength,
  pushLeafValue,
  ValueRun,
  type BranchNode,
  type ChildRef,
  type LeafNode,
  type LeafValue,
  type StoredValue,
  type NodeKey,
  type OverflowRef,
  type TreeNode,
} from './btree-node.js';
import { BRANCH_CHILD_SIZE, NO_PAGE, PAGE_HEADER_SIZE, PAGE_SIZE } from './format.js';

/** Where a tree reads its clean pages. */
export interface NodeSource {
  /** The decoded clean node at `pageId` (from the cache or the file). */
  load(pageId: number): TreeNode;
  /**
   * load for the pages a scan moves on to: what it reads from the file enters the cache on
   * probation (PageCache.setScanned), so one long scan cannot flush what other readers (other
   * tenants) keep reading. Sources without it load as usual.
   */
  scanLoad?(pageId: number): TreeNode;
  /** Reads a value stored on overflow pages. */
  readOverflow(ref: OverflowRef): Buffer;
}

/** What a writable tree needs besides pages: the write epoch and the accounting of its changes. */
export interface NodeStore extends NodeSource {
  /** Nodes of this epoch may change in place; older ones are shared with a snapshot or a checkpoint. */
  readonly epoch: number;
  /** True when a running checkpoint is writing this dirty node (so replacing it makes garbage). */
  captured(node: TreeNode): boolean;
  /** Counts `pages` on-disk pages as garbage once the next checkpoint lands. */
  retire(pages: number): void;
  /** Dirty memory grew (or shrank) by about `bytes`. */
  dirtied(bytes: number): void;
  /**
   * The clean node at `pageId` for a copy-on-write: from the cache when it is there, else read
   * and decoded without entering the cache. The copy replaces it in the live tree, which never
   * reads that page again; cached, it would only push out pages that are still read.
   */
  loadToCopy(pageId: number): TreeNode;
  /** Where copies of pages for this store's dirty leaves are carved from (counted as it allocates). */
  readonly copies: PageCopies;
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

function isEmpty(node: TreeNode): boolean {
  return node.kind === 'leaf' ? leafKeyCount(node) === 0 : node.children.length === 0;
}

/**
 * Read-only access to one state of a B+tree: a root that never changes under the reader. Clean
 * nodes are immutable pages; dirty nodes reachable from a reader's root belong to an older epoch
 * than any writer's (see NodeStore.epoch), so writers copy them instead of changing them.
 */
export class TreeReader {
  protected readonly source: NodeSource;
  /** Page id of a clean root, a dirty root node, or NO_PAGE for an empty tree. */
  root: ChildRef;
  /** Number of keys, kept exact so count() without bounds is O(1). */
  count: number;

  constructor(source: NodeSource, root: ChildRef, count: number) {
    this.source = source;
    this.root = root;
    this.count = count;
  }

  protected node(ref: ChildRef): TreeNode {
    return typeof ref === 'number' ? this.source.load(ref) : ref;
  }

  /** Throws when this view may no longer be read (a snapshot that ended); see SnapshotReader. */
  protected check(): void {}

  protected readValue(value: StoredValue): Buffer {
    if (typeof value === 'string') return Buffer.from(value, 'latin1');
    return isOverflowRef(value) ? this.source.readOverflow(value) : value;
  }

  /**
   * get() in place: the value's bytes (a span of its page, with no Buffer made for it, when the
   * leaf is clean) become `run`'s only entry. False, and `run` empty, when `key` is absent.
   */
  getInto(bytes: Uint8Array, run: ValueRun): boolean {
    this.check();
    run.count = 0;
    if (this.root === NO_PAGE) return false;
    const key = toNodeKey(bytes);
    const leaf = this.#leafFor(key);
    const i = leafBound(leaf, key, false);
    if (!leafKeyIs(leaf, i, key)) return false;
    pushLeafValue(run, leaf, i, this.#overflow);
    return true;
  }

  readonly #overflow = (ref: OverflowRef): Buffer => this.source.readOverflow(ref);

  /** The leaf where `key` is or would be (the tree is not empty). */
  #leafFor(key: NodeKey): LeafNode {
    let node = this.node(this.root);
    while (node.kind === 'branch') node = this.node(node.children[branchBound(node, key)]!);
    return node;
  }

  /** The value stored under `key`, or undefined. */
  get(bytes: Uint8Array): Buffer | undefined {
    this.check();
    if (this.root === NO_PAGE) return undefined;
    const key = toNodeKey(bytes);
    const leaf = this.#leafFor(key);
    const i = leafBound(leaf, key, false);
    return leafKeyIs(leaf, i, key) ? this.readValue(leafValueAt(leaf, i)) : undefined;
  }

  has(bytes: Uint8Array): boolean {
    return this.hasKey(toNodeKey(bytes));
  }

  protected hasKey(key: NodeKey): boolean {
    this.check();
    if (this.root === NO_PAGE) return false;
    const leaf = this.#leafFor(key);
    return leafKeyIs(leaf, leafBound(leaf, key, false), key);
  }

  /** Entries in key order (or reverse) within `range`, from the root this reader holds. */
  *scan(range: ScanRange = {}): Generator<Entry> {
    yield* this.#walk(range, (leaf, i) => [leafKeyBytes(leaf, i), this.readValue(leafValueAt(leaf, i))]);
  }

  /** Values only, in key order (or reverse): no key bytes are materialised. */
  *values(range: ScanRange = {}): Generator<Buffer> {
    yield* this.#walk(range, (leaf, i) => this.readValue(leafValueAt(leaf, i)));
  }

  /**
   * Values in key order (or reverse) within `range`, a leaf at a time: the run handed out is
   * reused, valid until the next step. Full-table SQL scans read rows this way, decoding each
   * straight from its page instead of making a Buffer per row.
   */
  *valueRuns(range: ScanRange = {}): Generator<ValueRun> {
    this.check();
    const start = this.#start(range);
    if (start === undefined) return;
    const { reverse, stopKey, stopInclusive, stack } = start;
    let limit = start.limit;
    const run = new ValueRun();
    const step = reverse ? -1 : 1;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const leaf = top.node as LeafNode;
      const end = reverse ? -1 : leafKeyCount(leaf);
      run.count = 0;
      let stopped = false;
      for (let i = top.index; i !== end; i += step) {
        if (stopKey !== undefined && pastStop(compareLeafKey(leaf, i, stopKey), stopInclusive, reverse)) {
          stopped = true;
          break;
        }
        pushLeafValue(run, leaf, i, this.#overflow);
        if (--limit <= 0) {
          stopped = true;
          break;
        }
      }
      if (run.count > 0) yield run;
      if (stopped) return;
      this.check();
      // On to the next leaf: from this leaf's last entry in the walk's direction.
      top.index = end - step;
      this.#advance(stack, reverse);
    }
  }

  /**
   * Values within `range` in key order (or reverse), at most `max` of them, appended to `out`: a
   * synchronous read without an iterator, for short reads done within one turn. True when the
   * range holds more entries than were taken.
   */
  collectValues(range: ScanRange, max: number, out: Buffer[]): boolean {
    this.check();
    const start = this.#start(range);
    if (start === undefined) return false;
    const { reverse, stopKey, stopInclusive, stack } = start;
    let limit = start.limit;
    let taken = 0;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const leaf = top.node as LeafNode;
      if (stopKey !== undefined && pastStop(compareLeafKey(leaf, top.index, stopKey), stopInclusive, reverse)) return false;
      if (taken >= max) return true;
      out.push(this.readValue(leafValueAt(leaf, top.index)));
      taken++;
      if (--limit <= 0) return false;
      this.#advance(stack, reverse);
    }
    return false;
  }

  /** Keys only: no overflow reads. */
  *keys(range: ScanRange = {}): Generator<Buffer> {
    yield* this.#walk(range, leafKeyBytes);
  }

  /** Number of keys within `range` (O(1) without bounds). */
  countRange(range: ScanRange = {}): number {
    this.check();
    if (range.gt === undefined && range.gte === undefined && range.lt === undefined && range.lte === undefined) {
      return range.limit === undefined ? this.count : Math.min(this.count, range.limit);
    }
    const start = this.#start(range);
    if (start === undefined) return 0;
    const { reverse, stopKey, stopInclusive, stack } = start;
    let n = 0;
    while (stack.length > 0 && n < start.limit) {
      const top = stack[stack.length - 1]!;
      if (stopKey !== undefined && pastStop(compareLeafKey(top.node as LeafNode, top.index, stopKey), stopInclusive, reverse)) break;
      this.#advance(stack, reverse);
      n++;
    }
    return n;
  }

  /**
   * Yields `read(leaf, i)` for every entry within `range`, in order. One generator and no pair
   * per entry: scans run on every read path (the stalls bench allocated ~13% of its bytes in the
   * [leaf, index] pairs a generator of pairs made).
   */
  *#walk<T>(range: ScanRange, read: (leaf: LeafNode, i: number) => T): Generator<T> {
    this.check();
    const start = this.#start(range);
    if (start === undefined) return;
    const { reverse, stopKey, stopInclusive, stack } = start;
    let limit = start.limit;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const leaf = top.node as LeafNode;
      if (stopKey !== undefined && pastStop(compareLeafKey(leaf, top.index, stopKey), stopInclusive, reverse)) return;
      const index = top.index;
      this.#advance(stack, reverse);
      yield read(leaf, index);
      if (--limit <= 0) return;
      this.check();
    }
  }

  /**
   * Where a walk of `range` starts (a path to its first entry) and the bound on its far end;
   * undefined when it yields nothing.
   */
  #start(range: ScanRange): { reverse: boolean; limit: number; stopKey: NodeKey | undefined; stopInclusive: boolean; stack: Array<{ node: TreeNode; index: number }> } | undefined {
    const reverse = range.reverse === true;
    const limit = range.limit ?? Infinity;
    if (limit <= 0 || this.root === NO_PAGE) return undefined;
    const stopBytes = reverse ? (range.gte ?? range.gt) : (range.lte ?? range.lt);
    const seekBytes = reverse ? (range.lte ?? range.lt) : (range.gte ?? range.gt);
    const seekKey: NodeKey | undefined = seekBytes === undefined ? undefined : toNodeKey(seekBytes);
    const seekInclusive = reverse ? range.lte !== undefined : range.gte !== undefined;
    return {
      reverse,
      limit,
      stopKey: stopBytes === undefined ? undefined : toNodeKey(stopBytes),
      stopInclusive: reverse ? range.gte !== undefined : range.lte !== undefined,
      stack: this.#seek(this.root, seekKey, seekInclusive, reverse),
    };
  }

  /** A path from `root` to the first entry at/after (or at/before, reversed) `key`. */
  #seek(root: ChildRef, key: NodeKey | undefined, inclusive: boolean, reverse: boolean): Array<{ node: TreeNode; index: number }> {
    const stack: Array<{ node: TreeNode; index: number }> = [];
    let node = this.node(root);
    for (;;) {
      let index: number;
      if (node.kind === 'branch') {
        if (key === undefined) index = reverse ? node.children.length - 1 : 0;
        else if (reverse && !inclusive) index = lowerBound(node.keys, key);
        else index = branchBound(node, key);
        stack.push({ node, index });
        node = this.node(node.children[index]!);
        continue;
      }
      if (key === undefined) index = reverse ? leafKeyCount(node) - 1 : 0;
      else if (reverse) index = leafBound(node, key, inclusive) - 1;
      else index = leafBound(node, key, !inclusive);
      stack.push({ node, index });
      break;
    }
    if (!valid(stack)) this.#advance(stack, reverse, true);
    return stack;
  }

  /** Moves to the next (previous) entry; empties the stack at the end. */
  #advance(stack: Array<{ node: TreeNode; index: number }>, reverse: boolean, positioned = false): void {
    const step = reverse ? -1 : 1;
    const top = stack[stack.length - 1]!;
    if (!positioned) top.index += step;
    if (valid(stack)) return;
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
      let node = this.#scanNode(branch.children[frame.index]!);
      while (node.kind === 'branch') {
        const index = reverse ? node.children.length - 1 : 0;
        stack.push({ node, index });
        node = this.#scanNode(node.children[index]!);
      }
      stack.push({ node, index: reverse ? leafKeyCount(node) - 1 : 0 });
      if (valid(stack)) return;
      stack.pop(); // an empty leaf cannot exist in a well-formed tree; keep climbing anyway
    }
  }

  /** The node a scan moves on to (see NodeSource.scanLoad). */
  #scanNode(ref: ChildRef): TreeNode {
    if (typeof ref !== 'number') return ref;
    const source = this.source;
    return source.scanLoad === undefined ? source.load(ref) : source.scanLoad(ref);
  }

  /**
   * The tree's pages, clean and dirty, and the bytes their entries take as encoded (headers
   * included): how full its pages are. Reads every page (as a scan: the pages it caches are the
   * first to go), so it is for diagnostics and tests, not for a request's path.
   */
  pageStats(): TreePageStats {
    return pageStatsOf(this);
  }

  /**
   * pageStats a step at a time: adds this tree's pages to `stats`, pausing (a `yield`) after
   * every `every` pages, so a caller can let the event loop turn between steps while it counts a
   * large tree (pages not cached are read as a scan reads them).
   */
  *pageStatsSteps(stats: TreePageStats, every: number): Generator<void> {
    this.check();
    if (this.root === NO_PAGE) return;
    const stack: ChildRef[] = [this.root];
    let pages = 0;
    while (stack.length > 0) {
      const node = this.#scanNode(stack.pop()!);
      if (node.kind === 'leaf') {
        stats.leaves++;
        stats.leafBytes += node.bytes;
        addLeafValues(node, stats);
      } else {
        stats.branches++;
        stats.branchBytes += node.bytes;
        for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
      }
      if (++pages >= every) {
        pages = 0;
        yield;
        this.check();
      }
    }
  }

  /** Calls `visit` for every clean page reachable from the root (for dropping and compaction). */
  forEachPage(visit: (pageId: number, node: TreeNode) => void): void {
    const walk = (ref: ChildRef): void => {
      const node = this.node(ref);
      if (typeof ref === 'number') visit(ref, node);
      if (node.kind === 'branch') for (const child of node.children) walk(child);
    };
    if (this.root !== NO_PAGE) walk(this.root);
  }
}

function valid(stack: Array<{ node: TreeNode; index: number }>): boolean {
  const top = stack[stack.length - 1];
  return top !== undefined && top.index >= 0 && top.index < leafKeyCount(top.node as LeafNode);
}

/** What TreeReader.pageStats counts. */
export interface TreePageStats {
  leaves: number;
  branches: number;
  /** Encoded bytes of the leaves (each at most PAGE_SIZE): leafBytes / (leaves * PAGE_SIZE) is how full they are. */
  leafBytes: number;
  branchBytes: number;
  /** Pages of the values too large for a leaf (see addLeafValues). */
  overflowPages: number;
  /** Bytes of the values, those on overflow pages included. */
  valueBytes: number;
}

/** Page statistics with nothing counted yet, for pageStatsSteps to add to. */
export function emptyPageStats(): TreePageStats {
  return { leaves: 0, branches: 0, leafBytes: 0, branchBytes: 0, overflowPages: 0, valueBytes: 0 };
}

/** All of `view`'s page statistics at once: its pageStatsSteps run to the end. */
export function pageStatsOf(view: { pageStatsSteps(stats: TreePageStats, every: number): Generator<void> }): TreePageStats {
  const stats = emptyPageStats();
  for (const _ of view.pageStatsSteps(stats, Infinity));
  return stats;
}

/** Counts changes to every tree of the process: a tree's `version` is taken from it. */
let treeChanges = 0;

/**
 * One copy-on-write B+tree, writable. Clean nodes (on disk) are never modified: a write copies the
 * path from the root to its leaf into dirty nodes of the current epoch, which the next checkpoint
 * appends to the page file. Dirty nodes of an older epoch are shared with a snapshot or a
 * running checkpoint and are copied the same way. Mutations apply synchronously; durability is
 * the tenant store's business (WAL). Reads of the live tree are point reads (get/has); ranged
 * reads go through a TreeReader on a pinned root (TreeSet.reader), because dirty nodes of the
 * current epoch change in place.
 */
export class BTree extends TreeReader {
  readonly #store: NodeStore;
  /**
   * Changes with every put and delete, and differs from that of every other tree object ever
   * made: two equal versions read at different times mean the same tree, unchanged between.
   */
  version = ++treeChanges;

  constructor(store: NodeStore, root: ChildRef, count: number) {
    super(store, root, count);
    this.#store = store;
  }

  /** True when the tree has changes the next checkpoint must write. */
  get dirty(): boolean {
    return typeof this.root !== 'number';
  }

  /** A node writers may change: `ref` itself when it is of the current epoch, else a copy. */
  #mutable(ref: ChildRef): TreeNode {
    const store = this.#store;
    let copy: TreeNode;
    if (typeof ref !== 'number') {
      if (ref.gen === store.epoch && ref.pageId === 0) return ref;
      // Written, or being written by a checkpoint: this copy turns that page into garbage.
      if (ref.pageId !== 0 || store.captured(ref)) store.retire(1);
      copy = cloneNode(ref, store.epoch, store.copies);
    } else {
      copy = cloneNode(store.loadToCopy(ref), store.epoch, store.copies);
      store.retire(1);
    }
    store.dirtied(dirtyNodeBytes(copy));
    return copy;
  }

  #persisted(ref: ChildRef): boolean {
    return typeof ref === 'number' || ref.pageId !== 0 || this.#store.captured(ref);
  }

  #retireValue(value: LeafValue): void {
    if (isOverflowRef(value)) this.#store.retire(overflowPages(value.length));
  }

  /** Inserts or replaces; returns true when the key was new. The caller validated sizes. */
  put(bytes: Uint8Array, value: Uint8Array): boolean {
    this.version = ++treeChanges;
    const key = toNodeKey(bytes);
    const owned = ownValue(key.length, value);
    if (this.root === NO_PAGE) {
      const leaf = newLeaf([key], [owned], this.#store.epoch);
      this.#store.dirtied(dirtyNodeBytes(leaf));
      this.root = leaf;
      this.count = 1;
      return true;
    }
    const root = this.#mutable(this.root);
    const before = this.count;
    const split = this.#insert(root, key, owned, true, true);
    if (split) {
      this.root = newBranch([split.key], [root, split.right], this.#store.epoch);
      this.#store.dirtied(dirtyNodeBytes(this.root));
    } else {
      this.root = root;
    }
    return this.count > before;
  }

  /** `leftmost`, `rightmost`: `node` is its level's first, last node (every step took the first, last child). */
  #insert(node: TreeNode, key: NodeKey, value: StoredValue, leftmost: boolean, rightmost: boolean): Split | undefined {
    if (node.kind === 'leaf') {
      const i = leafBound(node, key, false);
      if (leafKeyIs(node, i, key)) {
        const old = node.values[i]!;
        this.#retireValue(old);
        node.bytes += leafEntryBytes(key.length, value.length) - leafEntryBytes(key.length, valueLength(old, node.packed));
        this.#store.dirtied(dirtyEntryBytes(node.keys[i]!, value) - dirtyEntryBytes(node.keys[i]!, old));
        node.values[i] = value;
      } else {
        if (i === node.keys.length) {
          // Past the last key (ascending ids, time-ordered keys): push, which splice is not.
          node.keys.push(key);
          node.values.push(value);
        } else {
          node.keys.splice(i, 0, key);
          node.values.splice(i, 0, value);
        }
        node.bytes += leafEntryBytes(key.length, value.length);
        this.#store.dirtied(dirtyEntryBytes(key, value));
        this.count++;
        // An ascending run: the new key went in just after the last new key, with at most one
        // older key between (a compound index's (user, time) entries of one user arrive in the
        // middle of the tree, now and then past an older entry).
        const last = node.lastInsert;
        node.run = last >= 0 && i > last && i <= last + 2 ? node.run + 1 : 0;
        node.lastInsert = i;
      }
      if (node.bytes <= PAGE_SIZE) return undefined;
      this.#store.dirtied(DIRTY_NODE_OVERHEAD);
      return splitLeaf(node, i, leftmost, rightmost, this.#store.epoch);
    }
    const i = upperBound(node.keys, key);
    const child = this.#mutable(node.children[i]!);
    node.children[i] = child;
    const split = this.#insert(child, key, value, leftmost && i === 0, rightmost && i === node.children.length - 1);
    if (!split) return undefined;
    node.keys.splice(i, 0, split.key);
    node.children.splice(i + 1, 0, split.right);
    node.bytes += branchEntryBytes(split.key.length);
    this.#store.dirtied(dirtyBranchEntryBytes(split.key.length));
    if (node.bytes <= PAGE_SIZE) return undefined;
    this.#store.dirtied(DIRTY_NODE_OVERHEAD);
    return splitBranch(node, this.#store.epoch);
  }

  /** Removes `key`; returns true when it was there. Absent keys copy nothing. */
  delete(bytes: Uint8Array): boolean {
    this.version = ++treeChanges;
    const key = toNodeKey(bytes);
    if (!this.hasKey(key)) return false;
    const root = this.#mutable(this.root);
    this.#remove(root, key);
    this.count--;
    let next: ChildRef = root;
    // Collapse a root that lost its keys or has a single child.
    for (;;) {
      const node = this.node(next);
      if (isEmpty(node)) {
        if (this.#persisted(next)) this.#store.retire(1);
        next = NO_PAGE;
        break;
      }
      if (node.kind === 'branch' && node.children.length === 1) {
        if (this.#persisted(next)) this.#store.retire(1);
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
      const i = leafBound(node, key, false);
      const value = node.values[i]!;
      this.#retireValue(value);
      node.bytes -= leafEntryBytes(key.length, valueLength(value, node.packed));
      this.#store.dirtied(-dirtyEntryBytes(node.keys[i]!, value));
      node.keys.splice(i, 1);
      node.values.splice(i, 1);
      node.lastInsert = -1;
      node.run = 0;
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
    const left = this.node(parent.children[leftIndex]!);
    const right = this.node(parent.children[leftIndex + 1]!);
    const separator = parent.keys[leftIndex]!;
    const merged =
      left.kind === 'leaf'
        ? left.bytes + right.bytes - PAGE_HEADER_SIZE
        : left.bytes + right.bytes - PAGE_HEADER_SIZE - BRANCH_CHILD_SIZE + branchEntryBytes(separator.length);
    if (merged > PAGE_SIZE) return;
    const target = this.#mutable(parent.children[leftIndex]!);
    if (this.#persisted(parent.children[leftIndex + 1]!)) this.#store.retire(1);
    if (target.kind === 'leaf' && right.kind === 'leaf') {
      const values = leafValues(right);
      const keys = leafKeyList(right);
      target.keys.push(...keys);
      target.values.push(...values);
      for (let k = 0; k < values.length; k++) this.#store.dirtied(dirtyEntryBytes(keys[k]!, values[k]!));
    } else if (target.kind === 'branch' && right.kind === 'branch') {
      target.keys.push(separator, ...right.keys);
      target.children.push(...right.children);
      for (const k of right.keys) this.#store.dirtied(dirtyBranchEntryBytes(k.length));
    } else {
      throw new Error('B+tree invariant broken: siblings of different kinds');
    }
    target.bytes = merged;
    parent.children[leftIndex] = target;
    removeChild(parent, leftIndex + 1);
  }
}

/** Whether a key that compares `c` with a walk's far bound lies beyond it (in the walk's direction). */
function pastStop(c: number, inclusive: boolean, reverse: boolean): boolean {
  return reverse ? c < 0 || (c === 0 && !inclusive) : c > 0 || (c === 0 && !inclusive);
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

/** New keys in a row that splitLeaf takes for an ascending run inside a leaf (see BTree's insert). */
const RUN_MIN = 3;

/**
 * Splits an over-full leaf, where the new entry (index `i`) went in, so that the keys that come
 * next find room:
 * - appended at the tree's right edge, or at a leaf's end after the entry before it: the new
 *   entry alone moves right (the rest fitted before it came), so ascending inserts leave full
 *   pages, not half-full ones; and the mirror image at the tree's left edge, where a descending
 *   index on an ascending field (`{createdAt: -1}`) inserts: the new entry alone stays left;
 * - inside a leaf, at the end of an ascending run (RUN_MIN new keys or more, each just after the
 *   one before): the new entry ends the left half, which the run goes on filling from its end,
 *   and the older keys after it move right (as PostgreSQL splits after the new tuple for
 *   "localized monotonically increasing insertions"); split in the middle, every split left a
 *   half-full page behind the run;
 * - otherwise at the byte middle. Random inserts fill such pages to ~69% over time.
 * A lone entry at the end of a leaf that is not the tree's last takes the byte middle too: moved
 * alone to the right, a run of descending keys landing there would make a page per key.
 */
function splitLeaf(node: LeafNode, i: number, leftmost: boolean, rightmost: boolean, gen: number): Split {
  const n = node.keys.length;
  let at: number;
  if (i === n - 1 && (rightmost || node.run > 0)) at = n - 1;
  else if (i === 0 && leftmost) at = 1;
  else {
    const sizes = node.keys.map((k, j) => leafEntryBytes(leafKeyLength(k, node.packed), valueLength(node.values[j]!, node.packed)));
    at = node.run >= RUN_MIN && i < n - 1 && PAGE_HEADER_SIZE + sum(sizes, 0, i + 1) <= PAGE_SIZE ? i + 1 : balancedSplit(sizes, 0);
  }
  const right = newLeaf(node.keys.splice(at), node.values.splice(at), gen, node.packed);
  node.bytes -= right.bytes - PAGE_HEADER_SIZE;
  // The run goes on in the half that holds the new entry.
  if (i >= at) {
    right.lastInsert = i - at;
    right.run = node.run;
    node.lastInsert = -1;
    node.run = 0;
  }
  return { key: leafKeyAt(right, 0), right };
}

function sum(sizes: readonly number[], from: number, to: number): number {
  let total = 0;
  for (let j = from; j < to; j++) total += sizes[j]!;
  return total;
}

/** The separator at the byte middle moves up; each side keeps at least one child. */
function splitBranch(node: BranchNode, gen: number): Split {
  const m = balancedSplit(node.keys.map((k) => branchEntryBytes(k.length)), 1) - 1;
  const key = node.keys[m]!;
  const right = newBranch(node.keys.splice(m + 1), node.children.splice(m + 1), gen);
  node.keys.pop();
  node.bytes = newBranch(node.keys, node.children, gen).bytes;
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
