import { close, closeSync, fdatasync, openSync, rename, unlinkSync, existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import { fail } from '../errors.js';
import { BTree, overflowPages, TreeReader, type NodeSource, type NodeStore } from './btree.js';
import {
  cloneNode,
  PageCopies,
  decodeNode,
  dirtyNodeBytes,
  encodeNode,
  fitsInline,
  isOverflowRef,
  leafKeyLength,
  leafKeyList,
  leafValues,
  nodeMemoryBytes,
  type ChildRef,
  type LeafNode,
  type OverflowRef,
  type TreeNode,
  type NodeKey,
} from './btree-node.js';
import { failpoint, failpointArmed } from './failpoint.js';
import {
  CATALOG_ENTRY_BYTES,
  CHECKPOINT_CHUNK_BYTES,
  CHECKPOINT_CHUNK_MS,
  COMPACT_CHUNK_BYTES,
  COMPACT_TEMP_FILE,
  NO_PAGE,
  PAGE_HEADER_SIZE,
  PAGE_PAYLOAD,
  PAGE_SIZE,
  PAGE_TYPE,
  PAGE_TYPE_OFFSET,
  VALUE_OVERFLOW,
} from './format.js';
import type { DirtyBudget } from './dirty-budget.js';
import { PageCache } from './page-cache.js';
import { deltaName, deltaPutEntry, DELTA_PUT, DELTA_TOMBSTONE, isDeltaName, MergedReader, treeNames, type TreeView } from './buffered-tree.js';
import { encodeHeader, fsyncDir, fsyncDirAsync, PageFile, sealPage, writeBuffersAt, type FileHeader, type PageFileTail } from './page-file.js';

const fdatasyncAsync = promisify(fdatasync);
const closeAsync = promisify(close);
const renameAsync = promisify(rename);

export interface TreeSetOptions {
  /**
   * Trees whose writes go to a delta first (buffered-tree.ts): randomly keyed ones, whose
   * checkpoints would otherwise rewrite most of their leaves. Default: none.
   */
  buffered?: (name: string) => boolean;
  /** A delta is merged once it holds an eighth of its main tree's entries and at least this many (default 4096). */
  mergeMin?: number;
  /** A buffered tree buffers its writes once it holds this many entries; before, they go to it directly (default BUFFER_FROM). */
  bufferFrom?: number;
}

/** A buffered tree's delta is merged once it holds this share of the main tree's entries... */
const MERGE_DELTA_SHARE = 1 / 8;
/** ...and at least this many (TreeSetOptions.mergeMin). */
export const MERGE_DELTA_MIN = 4096;
/**
 * Entries from which a buffered tree buffers its writes (TreeSetOptions.bufferFrom): ~2.5k leaves
 * of ~80-byte entries, about what a checkpoint writes between two of them at full load anyway.
 */
export const BUFFER_FROM = 200_000;

/** A checkpoint or compaction holds one chunk being encoded and one being written. */
const IO_CHUNKS_IN_MEMORY = 2;
/** Children of a branch a compaction reads ahead at once (a window per level of the tree). */
const COMPACT_READ_AHEAD_PAGES = 64;
/** What a compaction holds: its chunks, and a read-ahead window for each of up to 6 levels. */
const COMPACT_MEMORY_BYTES = IO_CHUNKS_IN_MEMORY * COMPACT_CHUNK_BYTES + 6 * COMPACT_READ_AHEAD_PAGES * PAGE_SIZE;

/** Appends pages for a serialization pass and hands out their ids. */
interface PageSink {
  next: number;
  pages: Buffer[];
  /** When encoding of the current chunk started (performance.now()). */
  startedAt: number;
}

/**
 * One page file as readers see it, with its id in the shared cache. Reference-counted: the tree
 * set holds one reference while the file is current, every open snapshot one more, so a file
 * replaced by compaction stays readable (and its cache id reserved) until the last snapshot
 * that reads it closes.
 */
class PageSource implements NodeSource {
  readonly file: PageFile;
  readonly fileId: number;
  readonly #cache: PageCache<TreeNode>;
  #refs = 1;

  /** `fileId` from cache.allocateFileId(), when the caller reserved one in advance. */
  constructor(file: PageFile, cache: PageCache<TreeNode>, fileId: number = cache.allocateFileId()) {
    this.file = file;
    this.#cache = cache;
    this.fileId = fileId;
  }

  load(pageId: number): TreeNode {
    return this.#load(pageId, false);
  }

  /**
   * load for a scan (see NodeSource.scanLoad): a leaf read from the file enters the cache on
   * probation (PageCache.setScanned), so scans through more than the cache push out only what
   * scans read; branches are cached as load caches them.
   */
  scanLoad(pageId: number): TreeNode {
    return this.#load(pageId, true);
  }

  #load(pageId: number, scanning: boolean): TreeNode {
    const key = PageCache.key(this.fileId, pageId);
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const node = this.#read(pageId);
    if (scanning && node.kind === 'leaf') this.#cache.setScanned(key, node, nodeMemoryBytes(node));
    else this.#cache.set(key, node, nodeMemoryBytes(node));
    return node;
  }

  /** load without caching a page that was not cached (see NodeStore.loadToCopy). */
  loadToCopy(pageId: number): TreeNode {
    return this.#cache.get(PageCache.key(this.fileId, pageId)) ?? this.#read(pageId);
  }

  #read(pageId: number): TreeNode {
    const page = this.file.readPages(pageId, 1);
    const type = page[PAGE_TYPE_OFFSET];
    if (type !== PAGE_TYPE.LEAF && type !== PAGE_TYPE.BRANCH) {
      fail('CORRUPTION', `${this.file.path}: page ${pageId} is not a tree page (type ${type})`, { file: this.file.path, page: pageId });
    }
    return decodeNode(page, pageId);
  }

  /**
   * Caches a page written by this process as if read back: the clean copy owns the page and
   * shares a written branch's keys (immutable since its capture).
   */
  remember(pageId: number, page: Buffer, keys: readonly NodeKey[] | undefined): void {
    const clean = decodeNode(page, pageId, keys);
    this.#cache.set(PageCache.key(this.fileId, pageId), clean, nodeMemoryBytes(clean));
  }

  readOverflow(ref: OverflowRef): Buffer {
    return overflowValue(this.file, ref, this.file.readPages(ref.page, overflowPages(ref.length)));
  }

  acquire(): void {
    this.#refs++;
  }

  release(): void {
    if (--this.#refs > 0) return;
    this.file.close();
    this.#cache.releaseFileId(this.fileId);
  }
}

/**
 * A read-only view of some or all trees of a tree set, pinned at one state. Taking one is O(1)
 * in the data size: it keeps the roots of that moment, and the next write while it is open
 * starts a new write epoch (every existing dirty node becomes copy-on-write). Reads fail with UNAVAILABLE once it is closed or expired.
 */
export class TreeSnapshot implements NodeSource {
  /** Checkpoints completed when it was taken (see TreeSet.#held). */
  readonly seq: number;
  readonly openedAt: number;
  #set: TreeSet | undefined;
  #source: PageSource | undefined;
  #roots: Map<string, { root: ChildRef; count: number }> | undefined;
  readonly #readers = new Map<string, SnapshotReader>();
  #ended: string | undefined;

  /** @internal built by TreeSet.snapshot */
  constructor(set: TreeSet, source: PageSource, roots: Map<string, { root: ChildRef; count: number }>, seq: number) {
    this.#set = set;
    this.#source = source;
    this.#roots = roots;
    this.seq = seq;
    this.openedAt = Date.now();
  }

  /** Throws the reason this snapshot can no longer be read, if it cannot. @throws UNAVAILABLE */
  check(): void {
    if (this.#ended !== undefined) fail('UNAVAILABLE', this.#ended);
  }

  load(pageId: number): TreeNode {
    this.check();
    return this.#source!.load(pageId);
  }

  scanLoad(pageId: number): TreeNode {
    this.check();
    return this.#source!.scanLoad(pageId);
  }

  readOverflow(ref: OverflowRef): Buffer {
    this.check();
    return this.#source!.readOverflow(ref);
  }

  /**
   * The tree called `name` as of this snapshot (with its delta over it when it is buffered), or
   * undefined when it held no keys. @throws UNAVAILABLE
   */
  tree(name: string): TreeView | undefined {
    this.check();
    const delta = this.#reader(deltaName(name));
    const main = this.#reader(name);
    return delta === undefined ? main : new MergedReader(main, delta);
  }

  #reader(name: string): TreeReader | undefined {
    let reader = this.#readers.get(name);
    if (reader === undefined) {
      const entry = this.#roots!.get(name);
      if (entry === undefined) return undefined;
      reader = new SnapshotReader(this, entry.root, entry.count);
      this.#readers.set(name, reader);
    }
    return reader;
  }

  /** Names of the trees that held keys, sorted. @throws UNAVAILABLE */
  names(): string[] {
    this.check();
    const roots = this.#roots!;
    return treeNames(roots.keys(), (n) => roots.get(n)?.count ?? 0, (n) => this.tree(n));
  }

  get closed(): boolean {
    return this.#ended !== undefined;
  }

  /** Releases the snapshot (idempotent). */
  close(): void {
    this.#end('snapshot is closed');
  }

  /** @internal ends the snapshot with `reason` (expiry under memory pressure or age). */
  expire(reason: string): void {
    this.#end(reason);
  }

  #end(reason: string): void {
    if (this.#ended !== undefined) return;
    this.#ended = reason;
    // Drop every reference at once: the memory is released even if a caller keeps this object.
    for (const reader of this.#readers.values()) reader.root = NO_PAGE;
    this.#readers.clear();
    this.#roots = undefined;
    const set = this.#set;
    const source = this.#source;
    this.#set = undefined;
    this.#source = undefined;
    source?.release();
    set?.snapshotEnded(this);
  }
}

/** A TreeReader that fails cleanly once its snapshot has ended. */
class SnapshotReader extends TreeReader {
  readonly #snapshot: TreeSnapshot;

  constructor(snapshot: TreeSnapshot, root: ChildRef, count: number) {
    super(snapshot, root, count);
    this.#snapshot = snapshot;
  }

  protected override check(): void {
    this.#snapshot.check();
  }
}

/**
 * The named B+trees of one page file, with the catalog that maps names to roots. Mutations are
 * in memory (dirty nodes) until checkpoint() appends them, followed by a new header page.
 *
 * Memory: every dirty node is counted (estimated bytes) against the cache's dirty budget from
 * its creation until the checkpoint that writes it has completed; after that the live trees
 * point at the written pages (page ids) instead of the nodes, so they are released, unless open
 * snapshots may still read them, in which case they stay counted until those snapshots close.
 */
export class TreeSet implements NodeStore {
  #source: PageSource;
  readonly #cache: PageCache<TreeNode>;
  readonly #budget: DirtyBudget;
  #catalog: BTree;
  readonly #trees = new Map<string, BTree>();
  /** Trees changed since the last checkpoint (including dropped ones). */
  readonly #touched = new Set<string>();
  /** On-disk pages superseded since the last checkpoint. */
  #retired = 0;
  /** A compaction draft is open (its temporary file in use). */
  #compacting = false;
  /** Garbage pages the last compaction of this process left in its new file. */
  #garbageLeftByCompaction = 0;
  /** The last durable header. */
  header: FileHeader;
  /** Bytes after the header open chose (see PageFile.open); cleared once cut. */
  tail: PageFileTail | undefined;

  /** Writers change nodes of this epoch in place; a snapshot or a checkpoint capture starts a new one. */
  #epoch = 1;
  /** True once a node of the current epoch was created or changed (a new snapshot must then start a new epoch). */
  #epochUsed = false;
  /**
   * Open snapshots taken while nodes of the current epoch existed, which those nodes are shared
   * with: the next write starts a new epoch first (see `epoch`). Starting it lazily, rather than
   * when the snapshot is taken, means a snapshot closed before the next write (a point query, a
   * read within one turn) makes no writer copy anything.
   */
  readonly #unseparated = new Set<TreeSnapshot>();
  /** While a checkpoint runs: dirty nodes with an older epoch are the ones it writes. 0 otherwise. */
  #captureEpoch = 0;
  /** Estimated bytes of dirty nodes not yet captured by a checkpoint. */
  #pendingBytes = 0;
  /** Estimated bytes captured by the running checkpoint. */
  #capturedBytes = 0;
  /** Checkpoints completed since open. */
  #checkpointSeq = 0;
  /** Bytes of completed checkpoints still reachable from snapshots opened before they completed. */
  readonly #held: Array<{ seq: number; bytes: number }> = [];
  #heldBytes = 0;
  readonly #snapshots = new Set<TreeSnapshot>();
  /** Which trees new writes buffer in a delta (see buffered-tree.ts). */
  readonly #buffered: (name: string) => boolean;
  readonly #mergeMin: number;
  readonly #bufferFrom: number;
  /** Buffered trees whose delta has grown past its share of the main tree: merge them. */
  readonly #mergeDue = new Set<string>();
  /** How many of #trees are deltas: none (most stores), and reads look no further than the tree itself. */
  #deltaTrees = 0;
  readonly #bufferedNames = new Map<string, boolean>();

  private constructor(file: PageFile, header: FileHeader, tail: PageFileTail | undefined, cache: PageCache<TreeNode>, options: TreeSetOptions) {
    this.#cache = cache;
    this.#buffered = options.buffered ?? (() => false);
    this.#mergeMin = Math.max(1, options.mergeMin ?? MERGE_DELTA_MIN);
    this.#bufferFrom = Math.max(0, options.bufferFrom ?? BUFFER_FROM);
    this.#budget = cache.dirty;
    this.#source = new PageSource(file, cache);
    this.header = header;
    this.tail = tail;
    this.#catalog = new BTree(this.#catalogStore, header.catalogRoot, 0);
    this.#loadCatalog();
  }

  /**
   * This store's slabs for its dirty leaves' page copies, counted in its dirty bytes as they are
   * allocated; a new slab from each checkpoint capture on (see PageCopies).
   */
  readonly copies = new PageCopies((bytes) => this.dirtied(bytes));
  readonly #catalogCopies = new PageCopies(() => undefined);

  /**
   * The catalog's view of this store: the same pages and epochs, but its nodes are not counted
   * against the budget (it changes only inside a checkpoint, which writes it at once).
   */
  readonly #catalogStore: NodeStore = {
    load: (pageId) => this.load(pageId),
    loadToCopy: (pageId) => this.loadToCopy(pageId),
    readOverflow: (ref) => this.readOverflow(ref),
    get epoch() {
      return 0;
    },
    captured: () => false,
    retire: (pages) => this.retire(pages),
    dirtied: () => undefined,
    // Slabs of its own, dropped once each checkpoint has written the catalog: its copies live no
    // longer than that, so no slab of them outlives the checkpoint (nor counts against the budget).
    copies: this.#catalogCopies,
  };

  /**
   * Opens the page file at `path` (created if absent) at its last valid header. A compaction
   * temp file left by a crash is removed. Bytes after the header are kept (see `tail`).
   * @throws CORRUPTION when the file has no valid header or a catalog page is damaged
   */
  static open(path: string, cache: PageCache<TreeNode>, options: TreeSetOptions = {}): TreeSet {
    const temp = join(dirname(path), COMPACT_TEMP_FILE);
    if (existsSync(temp)) {
      unlinkSync(temp);
      fsyncDir(dirname(path));
    }
    const { file, header, tail } = PageFile.open(path);
    try {
      return new TreeSet(file, header, tail, cache, options);
    } catch (err) {
      file.close();
      throw err;
    }
  }

  /** Cuts the bytes after the header (the log covers them; see PageFile.truncateTail). */
  truncateTail(): void {
    if (this.tail === undefined) return;
    this.#source.file.truncateTail();
    this.tail = undefined;
  }

  #loadCatalog(): void {
    this.#trees.clear();
    this.#deltaTrees = 0;
    for (const [name, entry] of this.#catalog.scan()) {
      const treeName = name.toString('utf8');
      this.#trees.set(treeName, new BTree(this, entry.readUInt32LE(0), entry.readDoubleLE(4)));
      if (isDeltaName(treeName)) this.#deltaTrees++;
    }
    this.#catalog.count = this.#trees.size;
  }

  // ---- NodeStore --------------------------------------------------------------------------

  load(pageId: number): TreeNode {
    return this.#source.load(pageId);
  }

  loadToCopy(pageId: number): TreeNode {
    return this.#source.loadToCopy(pageId);
  }

  scanLoad(pageId: number): TreeNode {
    return this.#source.scanLoad(pageId);
  }

  readOverflow(ref: OverflowRef): Buffer {
    return this.#source.readOverflow(ref);
  }

  /** The epoch writers create and change nodes in; reading it separates open snapshots from writers. */
  get epoch(): number {
    if (this.#unseparated.size > 0) this.#newEpoch();
    return this.#epoch;
  }

  captured(node: TreeNode): boolean {
    return node.pageId === 0 && node.gen < this.#captureEpoch;
  }

  retire(pages: number): void {
    this.#retired += pages;
  }

  dirtied(bytes: number): void {
    this.#epochUsed = true;
    this.#pendingBytes += bytes;
    this.#budget.add(bytes);
  }

  /** Makes every existing dirty node copy-on-write, when any was made since the last time. */
  #newEpoch(): void {
    this.#unseparated.clear();
    if (!this.#epochUsed) return;
    this.#epoch++;
    this.#epochUsed = false;
  }

  // ---- Memory -------------------------------------------------------------------------------

  /** Estimated bytes of changes no checkpoint has captured yet. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** Estimated bytes kept only for open snapshots. */
  get pinnedBytes(): number {
    return this.#heldBytes;
  }

  // ---- Snapshots ----------------------------------------------------------------------------

  /**
   * A read-only view of the trees as they are now (all of them, or only `names`); close it when
   * done. O(number of trees), not of their size.
   */
  snapshot(names?: readonly string[]): TreeSnapshot {
    const roots = new Map<string, { root: ChildRef; count: number }>();
    if (names === undefined) {
      for (const [name, tree] of this.#trees) if (tree.count > 0) roots.set(name, { root: tree.root, count: tree.count });
    } else {
      for (const name of names) {
        for (const n of [name, deltaName(name)]) {
          const tree = this.#trees.get(n);
          if (tree !== undefined && tree.count > 0) roots.set(n, { root: tree.root, count: tree.count });
        }
      }
    }
    this.#source.acquire();
    const snapshot = new TreeSnapshot(this, this.#source, roots, this.#checkpointSeq);
    this.#snapshots.add(snapshot);
    if (this.#epochUsed) this.#unseparated.add(snapshot);
    return snapshot;
  }

  /** @internal called by a snapshot that closed or expired. */
  snapshotEnded(snapshot: TreeSnapshot): void {
    if (!this.#snapshots.delete(snapshot)) return;
    this.#unseparated.delete(snapshot);
    this.#releaseHeld();
  }

  /** How many snapshots are open. */
  get openSnapshots(): number {
    return this.#snapshots.size;
  }

  /** Expires the oldest snapshot that keeps checkpointed memory alive; false when none does. */
  expireOldestPinning(reason: string): boolean {
    const heldSeq = this.#held[this.#held.length - 1]?.seq;
    if (heldSeq === undefined) return false;
    let oldest: TreeSnapshot | undefined;
    for (const s of this.#snapshots) if (s.seq < heldSeq && (oldest === undefined || s.seq < oldest.seq)) oldest = s;
    oldest?.expire(reason);
    return oldest !== undefined;
  }

  /** Expires snapshots opened before `before` (ms since the epoch); returns how many. */
  expireOlderThan(before: number, reason: string): number {
    let n = 0;
    for (const s of [...this.#snapshots]) {
      if (s.openedAt < before) {
        s.expire(reason);
        n++;
      }
    }
    return n;
  }

  /** Releases checkpointed generations no open snapshot can reach any more. */
  #releaseHeld(): void {
    let oldest = Infinity;
    for (const s of this.#snapshots) if (s.seq < oldest) oldest = s.seq;
    // Generation g stays while a snapshot taken before it completed (s.seq < g.seq) is open.
    while (this.#held.length > 0 && this.#held[0]!.seq <= oldest) {
      const { bytes } = this.#held.shift()!;
      this.#heldBytes -= bytes;
      this.#budget.add(-bytes);
    }
  }

  // ---- Trees --------------------------------------------------------------------------------

  /** The live tree called `name` itself (a buffered tree's main tree alone), or undefined when it has never been written. */
  tree(name: string): BTree | undefined {
    return this.#trees.get(name);
  }

  /**
   * The live tree called `name` as readers see it (a buffered tree with its delta over it), or
   * undefined. Point reads, and ranged reads within one turn: dirty nodes change in place.
   */
  reader(name: string): TreeView | undefined {
    if (this.#deltaTrees === 0) return this.#trees.get(name);
    const delta = this.#trees.get(deltaName(name));
    const main = this.#trees.get(name);
    return delta === undefined || delta.count === 0 ? main : new MergedReader(main, delta);
  }

  /** A number that changes whenever what reader(name) reads changes (0 while neither tree exists). */
  version(name: string): number {
    // Versions only grow (each change takes the next of a process-wide count), so their sum does too.
    return (this.#trees.get(name)?.version ?? 0) + (this.#trees.get(deltaName(name))?.version ?? 0);
  }

  /** Puts `value` under `key` in tree `name`: into its delta when the tree is buffered (#bufferInto). */
  put(name: string, key: Uint8Array, value: Uint8Array): void {
    const delta = this.#bufferInto(name);
    if (delta === undefined) {
      this.writable(name).put(key, value);
      this.#unbuffer(name, key);
      return;
    }
    delta.put(key, deltaPutEntry(value));
    this.#checkDelta(name, delta);
  }

  /** Deletes `key` from tree `name`: a tombstone in its delta when the tree is buffered (#bufferInto). */
  delete(name: string, key: Uint8Array): void {
    const delta = this.#bufferInto(name);
    if (delta === undefined) {
      // Absent keys copy nothing, and leave the tree untouched.
      if (this.#trees.get(name)?.delete(key) === true) this.#touched.add(name);
      this.#unbuffer(name, key);
      return;
    }
    // With nothing under the delta, a delete needs no tombstone.
    if ((this.#trees.get(name)?.count ?? 0) === 0) delta.delete(key);
    else delta.put(key, DELTA_TOMBSTONE);
    this.#checkDelta(name, delta);
  }

  /**
   * The writable delta of `name` when its writes are buffered: it is a buffered tree, and large.
   * A smaller tree takes its writes directly: its leaves are few enough that checkpoints rewrite
   * them about once each however the writes arrive, and a delta would only move every entry twice.
   */
  #bufferInto(name: string): BTree | undefined {
    if (!this.#isBuffered(name) || (this.#trees.get(name)?.count ?? 0) < this.#bufferFrom) return undefined;
    return this.writable(deltaName(name));
  }

  /** The `buffered` option's answer for `name`, asked once per name. */
  #isBuffered(name: string): boolean {
    let buffered = this.#bufferedNames.get(name);
    if (buffered === undefined) {
      buffered = this.#buffered(name);
      this.#bufferedNames.set(name, buffered);
    }
    return buffered;
  }

  /** After a direct write: a delta entry for `key` (from when the tree was buffered) must not override it. */
  #unbuffer(name: string, key: Uint8Array): void {
    if (this.#deltaTrees === 0) return;
    const delta = this.#trees.get(deltaName(name));
    if (delta !== undefined && delta.count > 0 && delta.delete(key)) this.#touched.add(deltaName(name));
  }

  #checkDelta(name: string, delta: BTree): void {
    if (delta.count >= this.#mergeThreshold(name)) this.#mergeDue.add(name);
  }

  /** Delta entries at which tree `name` is due to be merged. */
  #mergeThreshold(name: string): number {
    return Math.max(this.#mergeMin, (this.#trees.get(name)?.count ?? 0) * MERGE_DELTA_SHARE);
  }

  /**
   * How many times its merge threshold tree `name`'s delta holds: past 1 a merge is due, and a
   * merge that writers outpace (a delta still growing while a pass runs) takes larger chunks.
   */
  mergeBacklog(name: string): number {
    return (this.#trees.get(deltaName(name))?.count ?? 0) / this.#mergeThreshold(name);
  }

  /** Entries the buffered trees' deltas hold now (puts and tombstones). */
  get deltaEntries(): number {
    let n = 0;
    for (const [name, tree] of this.#trees) if (isDeltaName(name)) n += tree.count;
    return n;
  }

  /** Delta entries merges have moved into their main trees since open. */
  mergedEntries = 0;

  /** Buffered trees whose delta is due to be merged (see mergeChunk). */
  get mergeDue(): ReadonlySet<string> {
    return this.#mergeDue;
  }

  /**
   * Moves up to `max` of tree `name`'s delta entries after key `after` (from the first when
   * undefined) into its main tree, synchronously: readers see the same entries before and after.
   * Returns the last key moved, or undefined once the delta holds nothing after `after` (the pass
   * is over; the tree stays due if writers refilled the delta past its threshold meanwhile). Not
   * logged: see buffered-tree.ts.
   */
  mergeChunk(name: string, after: Buffer | undefined, max: number): Buffer | undefined {
    const deltaTree = this.#trees.get(deltaName(name));
    const moved: Array<[Buffer, Buffer]> = [];
    if (deltaTree !== undefined) {
      // Copied out first: the deletes below change the delta's dirty leaves in place.
      for (const [key, value] of deltaTree.scan(after === undefined ? { limit: max } : { gt: after, limit: max })) moved.push([Buffer.from(key), Buffer.from(value)]);
    }
    if (moved.length === 0) {
      this.#mergeDue.delete(name);
      return undefined;
    }
    const main = this.writable(name);
    const delta = this.writable(deltaName(name));
    for (const [key, value] of moved) {
      if (value[0] === DELTA_PUT) main.put(key, value.subarray(1));
      else main.delete(key);
      delta.delete(key);
    }
    this.mergedEntries += moved.length;
    if (moved.length < max) {
      // The pass is over. Writers may have refilled the delta behind it: still due, it starts again.
      if (delta.count < this.#mergeThreshold(name)) this.#mergeDue.delete(name);
      return undefined;
    }
    return moved[moved.length - 1]![0];
  }

  /** The tree called `name`, created empty if needed; marks it changed (callers are writing). */
  writable(name: string): BTree {
    let tree = this.#trees.get(name);
    if (tree === undefined) {
      tree = new BTree(this, NO_PAGE, 0);
      this.#trees.set(name, tree);
      if (isDeltaName(name)) this.#deltaTrees++;
    }
    this.#touched.add(name);
    return tree;
  }

  /** Removes a tree and all its keys (a buffered tree's delta too); returns false when it did not exist. */
  drop(name: string): boolean {
    const delta = isDeltaName(name) ? false : this.drop(deltaName(name));
    this.#mergeDue.delete(name);
    this.#bufferedNames.delete(name);
    return this.#dropOne(name) || delta;
  }

  #dropOne(name: string): boolean {
    const tree = this.#trees.get(name);
    if (tree === undefined) return false;
    tree.forEachPage((_id, node) => {
      this.#retired++;
      if (node.kind === 'leaf') for (const v of leafValues(node)) if (isOverflowRef(v)) this.#retired += overflowPages(v.length);
    });
    this.#trees.delete(name);
    if (isDeltaName(name)) this.#deltaTrees--;
    this.#touched.add(name);
    return true;
  }

  /** Names of trees that hold at least one key, sorted (a buffered tree's delta is part of it, not a tree). */
  names(): string[] {
    return treeNames(this.#trees.keys(), (n) => this.#trees.get(n)?.count ?? 0, (n) => this.reader(n));
  }

  get hasChanges(): boolean {
    return this.#touched.size > 0;
  }

  // ---- Checkpoint -----------------------------------------------------------------------------

  /**
   * Writes every dirty node and a new header recording `lsn`. The state is captured when this is
   * called by starting a new epoch: from then on a write that reaches a captured node copies it,
   * as it would a clean page, so serialization yields to the event loop between chunks while
   * writes go on. Resolves when the header is durable (pages fsynced, then header fsynced); the
   * live trees then refer to the written pages by id, which releases the captured nodes.
   */
  async checkpoint(lsn: number): Promise<void> {
    // Capture, synchronously: what the header at `lsn` will describe.
    this.#newEpoch();
    this.#captureEpoch = this.#epoch;
    // Copies made from here on belong to the next generation: they never share its slabs.
    this.copies.restart();
    const capturedBytes = this.#pendingBytes;
    this.#capturedBytes = capturedBytes;
    this.#pendingBytes = 0;
    const captured: Array<{ name: string; tree: BTree; root: ChildRef; count: number }> = [];
    const emptied: string[] = [];
    for (const name of this.#touched) {
      const tree = this.#trees.get(name);
      if (tree === undefined || tree.count === 0) {
        if (tree !== undefined) {
          this.#trees.delete(name);
          if (isDeltaName(name)) this.#deltaTrees--;
        }
        emptied.push(name);
        continue;
      }
      captured.push({ name, tree, root: tree.root, count: tree.count });
    }
    this.#touched.clear();
    const retired = this.#retired;
    this.#retired = 0;

    // Serialize children first, writing a chunk at a time.
    const first = this.#source.file.pageCount;
    const sink: PageSink = { next: first, pages: [], startedAt: performance.now() };
    let flushed = first;
    const flush = async (): Promise<void> => {
      if (sink.pages.length === 0) return;
      // Every sink entry is one page; written as they are (writev), not joined into a copy.
      const pages = sink.pages;
      sink.pages = [];
      const file = this.#source.file;
      const at = file.allocate(pages.length);
      if (at !== flushed) throw new Error('checkpoint: page allocation raced');
      flushed += pages.length;
      if (failpointArmed('checkpoint:mid-pages')) {
        // A torn checkpoint: half a chunk reaches the file, then the process dies.
        const bytes = Buffer.concat(pages);
        await file.writePages(at, bytes.subarray(0, Math.max(PAGE_SIZE / 2, Math.floor(bytes.length / 2))));
        failpoint('checkpoint:mid-pages');
      }
      await file.writePageList(at, pages);
      sink.startedAt = performance.now();
    };
    // Large values written to overflow pages here: live copies of their leaves point at the pages afterwards.
    const overflowed = new Map<Buffer, OverflowRef>();
    const roots = new Map<string, number>();
    // A chunk being encoded and the one being written are in memory meanwhile.
    this.#budget.add(IO_CHUNKS_IN_MEMORY * CHECKPOINT_CHUNK_BYTES);
    try {
      for (const { name, root } of captured) {
        roots.set(name, typeof root === 'number' ? root : await this.#writeNode(root, sink, flush, overflowed));
      }
      // The catalog changes only here, under the caller's exclusion, and is written at once.
      for (const { name, count } of captured) {
        const nameKey = Buffer.from(name, 'utf8');
        const entry = catalogEntry(roots.get(name)!, count);
        const old = this.#catalog.get(nameKey);
        if (old === undefined || !old.equals(entry)) this.#catalog.put(nameKey, entry);
      }
      for (const name of emptied) this.#catalog.delete(Buffer.from(name, 'utf8'));
      if (typeof this.#catalog.root !== 'number') this.#catalog.root = await this.#writeNode(this.#catalog.root, sink, flush, overflowed);
      this.#catalogCopies.restart();
      await flush();
      const file = this.#source.file;
      const pagesWritten = flushed - first;
      if (pagesWritten > 0) {
        failpoint('checkpoint:after-pages');
        await file.sync();
        failpoint('checkpoint:after-pages-sync');
      }
      const headerId = file.allocate(1);
      const header: FileHeader = {
        checkpointLsn: lsn,
        catalogRoot: this.#catalog.root as number,
        pageCount: headerId + 1,
        // The previous header and every retired page become garbage; the new pages are live.
        livePages: this.header.livePages - retired + pagesWritten,
        writtenAtMs: Date.now(),
      };
      await file.writePages(headerId, encodeHeader(header));
      failpoint('checkpoint:after-header');
      await file.sync();
      failpoint('checkpoint:after-header-sync');
      this.header = header;
    } finally {
      this.#captureEpoch = 0;
      this.#budget.add(-IO_CHUNKS_IN_MEMORY * CHECKPOINT_CHUNK_BYTES);
    }
    // The pages are durable and reachable: trees nobody wrote meanwhile now are those pages; the
    // others get every reference to a written node replaced by its page id, so nothing live
    // keeps the captured nodes.
    for (const { name, tree, root } of captured) {
      if (this.#trees.get(name) !== tree) continue;
      if (tree.root === root) tree.root = roots.get(name)!;
      else if (typeof tree.root !== 'number') tree.root = release(tree.root, overflowed);
    }
    this.#checkpointSeq++;
    this.#capturedBytes = 0;
    if (this.#snapshots.size === 0) {
      this.#budget.add(-capturedBytes);
    } else {
      // Snapshots open now may still read the captured nodes: keep them counted until they close.
      this.#held.push({ seq: this.#checkpointSeq, bytes: capturedBytes });
      this.#heldBytes += capturedBytes;
    }
  }

  /**
   * Appends `node` and its unwritten descendants to `sink`, children first, and returns its page
   * id. Captured nodes are never modified (snapshots and readers may be inside them): child ids
   * and overflow references go into the encoded page only.
   */
  async #writeNode(node: TreeNode, sink: PageSink, flush: () => Promise<void>, overflowed: Map<Buffer, OverflowRef>): Promise<number> {
    if (node.pageId !== 0) return node.pageId; // written by an earlier checkpoint
    let encoded: TreeNode = node;
    if (node.kind === 'leaf') {
      for (let i = 0; i < node.values.length; i++) {
        const value = node.values[i]!;
        if (value instanceof Uint8Array && !fitsInline(leafKeyLength(node.keys[i]!, node.packed), value.length)) {
          if (encoded === node) encoded = { ...node, values: node.values.slice() };
          const ref = { page: sink.next, length: value.length };
          (encoded as LeafNode).values[i] = ref;
          overflowed.set(value, ref);
          appendOverflow(value, sink);
        }
      }
    } else {
      const children: ChildRef[] = new Array<ChildRef>(node.children.length);
      for (let i = 0; i < node.children.length; i++) {
        const child = node.children[i]!;
        children[i] = typeof child === 'number' ? child : await this.#writeNode(child, sink, flush, overflowed);
      }
      encoded = { ...node, children };
    }
    const { id, page } = appendNode(encoded, sink);
    node.pageId = id;
    // Nothing reaches this id before the header that makes it reachable is written.
    this.#source.remember(id, page, node.kind === 'branch' ? node.keys : undefined);
    if (sink.pages.length * PAGE_SIZE >= CHECKPOINT_CHUNK_BYTES || performance.now() - sink.startedAt >= CHECKPOINT_CHUNK_MS) await flush();
    return id;
  }

  // ---- Compaction -----------------------------------------------------------------------------

  /** Share of the file that no tree references any more, as of the last checkpoint. */
  get garbageRatio(): number {
    const total = this.header.pageCount;
    return total <= 1 ? 0 : Math.max(0, (total - this.header.livePages) / total);
  }

  /**
   * Share of the file that became garbage since the last compaction: a compaction that ran
   * beside checkpoints leaves the pages they superseded during its copy as garbage in the new
   * file, which compacting again at once would only leave again (a loop under steady churn).
   */
  get newGarbageRatio(): number {
    const total = this.header.pageCount;
    return total <= 1 ? 0 : Math.max(0, (total - this.header.livePages - this.#garbageLeftByCompaction) / total);
  }

  get fileBytes(): number {
    return this.#source.file.bytes;
  }

  /**
   * Rewrites the pages reachable from the last durable header into a new file and swaps it in:
   * write -> fsync -> rename -> fsync(dir). Writes may continue meanwhile; at the swap the live
   * trees are re-pointed at the new page ids. Open snapshots keep reading the old file, which
   * stays open until the last of them closes. The caller must not checkpoint concurrently.
   */
  async compact(): Promise<{ beforeBytes: number; afterBytes: number }> {
    return this.compactFinish(await this.compactCopy());
  }

  /**
   * The first part of a compaction: copies the pages reachable from the last durable header into
   * the new file. Checkpoints may run meanwhile (they append to the old file); compactFinish,
   * which no checkpoint may overlap, copies what they wrote and swaps the files. Until then the
   * draft holds the new file open: finish or abandon it.
   */
  async compactCopy(signal: { cancelled: boolean } = { cancelled: false }): Promise<CompactionDraft> {
    // Both would write the same temporary file.
    if (this.#compacting) throw new Error('compaction: another compaction of this file is still running');
    this.#compacting = true;
    const source = this.#source;
    const path = source.file.path;
    const temp = join(dirname(path), COMPACT_TEMP_FILE);
    const fd = openSync(temp, 'w+');
    // Keep the file open even if a concurrent close() releases the tree set meanwhile.
    source.acquire();
    this.#budget.add(COMPACT_MEMORY_BYTES);
    const draft: CompactionDraft = {
      source,
      path,
      temp,
      beforeBytes: source.file.bytes,
      fd,
      fdOpen: true,
      mapping: new Map(),
      subtreePages: new Map(),
      // Page 0 of every file is a header: the empty state.
      sink: { next: 1, pages: [encodeHeader({ checkpointLsn: 0, catalogRoot: NO_PAGE, pageCount: 1, livePages: 1, writtenAtMs: Date.now() })], startedAt: performance.now() },
      written: 0,
      // The new file's cache id is reserved before anything is written: once the rename has
      // happened, the swap must not be able to fail.
      newFileId: this.#cache.allocateFileId(),
      released: false,
      signal,
      finishing: false,
    };
    try {
      await this.#copyAndSync(draft);
      return draft;
    } catch (err) {
      this.compactAbandon(draft);
      throw err;
    }
  }

  /**
   * Between compactCopy and compactFinish, alongside checkpoints too: copies what checkpoints
   * wrote since the copy (or the last catch-up), so the exclusive finish has less left to copy
   * (a copy of a 1M-document file takes seconds, and the checkpoints meanwhile rewrite tens of
   * MiB of index pages).
   */
  async compactCatchUp(draft: CompactionDraft): Promise<void> {
    try {
      await this.#copyAndSync(draft);
    } catch (err) {
      this.compactAbandon(draft);
      throw err;
    }
  }

  /**
   * The second part of a compaction, which no checkpoint may overlap: copies what checkpoints
   * wrote since compactCopy (pages already copied are not read again), writes the catalog and
   * header of the last durable state, and swaps the new file in.
   */
  async compactFinish(draft: CompactionDraft): Promise<{ beforeBytes: number; afterBytes: number }> {
    draft.finishing = true;
    try {
      const header = this.header;
      const { entries, livePages } = await this.#copyTrees(draft, header);
      const sink = draft.sink;
      const catalogFrom = sink.next;
      const catalogRoot = writeCatalog(entries, sink);
      const newHeader: FileHeader = {
        checkpointLsn: header.checkpointLsn,
        catalogRoot,
        pageCount: sink.next + 1,
        // What the trees reach, the catalog and this header (pages a checkpoint superseded
        // after compactCopy copied them are garbage already).
        livePages: livePages + (sink.next - catalogFrom) + 1,
        writtenAtMs: Date.now(),
      };
      sink.pages.push(encodeHeader(newHeader));
      sink.next++;
      await this.#flushCompaction(draft);
      failpoint('compact:after-copy');
      // The whole new file goes to disk here: on the thread pool, never on the event loop.
      await fdatasyncAsync(draft.fd);
      failpoint('compact:after-fsync');
      draft.fdOpen = false;
      await closeAsync(draft.fd);
      await renameAsync(draft.temp, draft.path);
      failpoint('compact:after-rename');
      await fsyncDirAsync(dirname(draft.path));
      failpoint('compact:after-dir-fsync');
      this.#swap(draft.mapping, newHeader, draft.newFileId!);
      draft.newFileId = undefined;
      this.#garbageLeftByCompaction = newHeader.pageCount - newHeader.livePages;
    } catch (err) {
      this.compactAbandon(draft);
      throw err;
    }
    this.compactAbandon(draft);
    return { beforeBytes: draft.beforeBytes, afterBytes: this.#source.file.bytes };
  }

  /** Releases what a compaction draft holds and removes its unfinished file (once; a finished one is only released). */
  compactAbandon(draft: CompactionDraft): void {
    if (draft.released) return;
    draft.released = true;
    this.#compacting = false;
    if (draft.fdOpen) {
      draft.fdOpen = false;
      closeSync(draft.fd);
    }
    if (draft.newFileId !== undefined) {
      // Not swapped in: the new file is not the data file.
      if (existsSync(draft.temp)) unlinkSync(draft.temp);
      this.#cache.releaseFileId(draft.newFileId);
      draft.newFileId = undefined;
    }
    draft.source.release();
    this.#budget.add(-COMPACT_MEMORY_BYTES);
  }

  /** Copies every tree `header`'s catalog names; the catalog entries re-pointed, and the pages they reach. */
  async #copyTrees(draft: CompactionDraft, header: FileHeader): Promise<{ entries: Array<{ name: Buffer; root: number; count: number }>; livePages: number }> {
    // The durable catalog, re-pointed at the copied roots, becomes a fresh catalog tree.
    const durableCatalog = new TreeReader(draft.source, header.catalogRoot, 0);
    const entries: Array<{ name: Buffer; root: number; count: number }> = [];
    let livePages = 0;
    for (const [name, entry] of durableCatalog.scan()) {
      const root = entry.readUInt32LE(0);
      const copied = root === NO_PAGE ? NO_PAGE : await this.#copyPage(draft, root);
      if (root !== NO_PAGE) livePages += draft.subtreePages.get(root)!;
      entries.push({ name: Buffer.from(name), root: copied, count: entry.readDoubleLE(4) });
      failpoint('compact:mid-copy');
    }
    return { entries, livePages };
  }

  /** Copies what the newest durable header reaches and is not copied yet, and syncs it (so a finish syncs only what it adds). */
  async #copyAndSync(draft: CompactionDraft): Promise<void> {
    await this.#copyTrees(draft, this.header);
    await this.#flushCompaction(draft);
    await fdatasyncAsync(draft.fd);
  }

  async #flushCompaction(draft: CompactionDraft): Promise<void> {
    const sink = draft.sink;
    if (sink.pages.length === 0) return;
    const pages = sink.pages;
    sink.pages = [];
    await writeBuffersAt(draft.fd, pages, draft.written);
    for (const page of pages) draft.written += page.length;
  }

  /**
   * Copies page `pageId` of the old file and what it reaches into the new one, once (a page
   * copied before, by this pass or compactCopy's, is not read again); returns its new id.
   * Compaction reads every live page, mostly not in the OS cache: off the event loop.
   */
  async #copyPage(draft: CompactionDraft, pageId: number, readAlready?: Buffer): Promise<number> {
    const known = draft.mapping.get(pageId);
    if (known !== undefined) return known;
    if (draft.signal.cancelled && !draft.finishing) throw new Error('compaction cancelled');
    const { source, sink, mapping } = draft;
    const page = readAlready ?? (await source.file.readPagesAsync(pageId, 1));
    const node = decodeNode(page, pageId);
    let pages = 1;
    if (node.kind === 'branch') {
      const children = new Array<ChildRef>(node.children.length);
      // Children are read ahead a window at a time, in runs of consecutive page ids (one read
      // per run, the runs in flight together): a read per page, each awaited in turn, made
      // compacting a 1M-document file take 6-8 s.
      for (let w = 0; w < node.children.length; w += COMPACT_READ_AHEAD_PAGES) {
        const ids = node.children.slice(w, w + COMPACT_READ_AHEAD_PAGES) as number[];
        const read = await readAhead(source.file, ids.filter((id) => !mapping.has(id)));
        for (let i = 0; i < ids.length; i++) {
          children[w + i] = await this.#copyPage(draft, ids[i]!, read.get(ids[i]!));
          pages += draft.subtreePages.get(ids[i]!)!;
        }
      }
      const written = appendNode({ ...node, children }, sink);
      mapping.set(pageId, written.id);
      this.#carryOver(draft, pageId, written.id, written.page, node.keys);
    } else if (!leafHasOverflow(node)) {
      // A leaf refers to no page: its bytes move as they are.
      sink.pages.push(page);
      mapping.set(pageId, sink.next);
      this.#carryOver(draft, pageId, sink.next++, page, undefined);
    } else {
      const values = leafValues(node);
      for (let i = 0; i < values.length; i++) {
        const value = values[i]!;
        if (isOverflowRef(value)) {
          const moved = { page: sink.next, length: value.length };
          mapping.set(value.page, moved.page);
          appendOverflow(await readOverflowAsync(source.file, value), sink);
          values[i] = moved;
          pages += overflowPages(value.length);
        }
      }
      const written = appendNode({ ...node, keys: leafKeyList(node), values, source: undefined }, sink);
      mapping.set(pageId, written.id);
      this.#carryOver(draft, pageId, written.id, written.page, undefined);
    }
    draft.subtreePages.set(pageId, pages);
    if (sink.pages.length * PAGE_SIZE >= COMPACT_CHUNK_BYTES) await this.#flushCompaction(draft);
    return mapping.get(pageId)!;
  }

  /**
   * A page cached from the old file is cached from the new one too, so the pages readers use
   * need not be read and decoded again after the swap (and only those: a compaction of a large
   * file must not flush the cache). Dropped with the id if the compaction fails.
   */
  #carryOver(draft: CompactionDraft, oldId: number, newId: number, page: Buffer, keys: readonly NodeKey[] | undefined): void {
    if (!this.#cache.has(PageCache.key(draft.source.fileId, oldId))) return;
    // A page read as part of a run is a view of the run's buffer: cached, it takes its own copy.
    const clean = decodeNode(page.byteLength === page.buffer.byteLength ? page : Buffer.from(page), newId, keys);
    this.#cache.set(PageCache.key(draft.newFileId!, newId), clean, nodeMemoryBytes(clean));
  }

  /**
   * Points the live trees at the compacted file. Synchronous: no reader sees a mix. Dirty nodes
   * of the current epoch are re-pointed in place; older ones may be shared with snapshots that
   * still read the old file, so they are copied instead.
   */
  #swap(mapping: Map<number, number>, header: FileHeader, fileId: number): void {
    // Re-pointing nodes in place: open snapshots must not share them.
    const epoch = this.epoch;
    const moved = (id: number): number => {
      const to = mapping.get(id);
      if (to === undefined) throw new Error(`compaction: page ${id} is referenced but was not copied`);
      return to;
    };
    const remap = (ref: ChildRef): ChildRef => {
      if (typeof ref === 'number') return ref === NO_PAGE ? ref : moved(ref);
      // A node the last checkpoint wrote is that page now.
      if (ref.pageId !== 0) return moved(ref.pageId);
      // A leaf refers to no page unless it holds overflow references: most stay as they are.
      if (ref.kind === 'leaf' && !ref.values.some(isOverflowRef)) return ref;
      let node = ref;
      if (node.gen !== epoch) {
        node = cloneNode(node, epoch, this.copies);
        this.dirtied(dirtyNodeBytes(node));
      }
      if (node.kind === 'branch') {
        for (let i = 0; i < node.children.length; i++) node.children[i] = remap(node.children[i]!);
      } else {
        for (let i = 0; i < node.values.length; i++) {
          const value = node.values[i]!;
          if (isOverflowRef(value)) node.values[i] = { page: moved(value.page), length: value.length };
        }
      }
      return node;
    };
    const roots = new Map<string, ChildRef>();
    for (const [name, tree] of this.#trees) roots.set(name, remap(tree.root));
    const { file, header: opened } = PageFile.open(this.#source.file.path);
    if (opened.pageCount !== header.pageCount) {
      file.close();
      throw new Error('compaction: the renamed file does not end at its header');
    }
    const old = this.#source;
    this.#source = new PageSource(file, this.#cache, fileId);
    old.release();
    this.header = header;
    this.#catalog = new BTree(this.#catalogStore, header.catalogRoot, this.#catalog.count);
    for (const [name, tree] of this.#trees) tree.root = roots.get(name)!;
  }

  /** Ends every snapshot and closes the file (once no snapshot reads it). */
  close(): void {
    for (const s of [...this.#snapshots]) s.expire('the tenant store was closed');
    this.#budget.add(-(this.#pendingBytes + this.#capturedBytes + this.#heldBytes));
    this.#pendingBytes = 0;
    this.#capturedBytes = 0;
    this.#heldBytes = 0;
    this.#held.length = 0;
    this.#source.release();
  }
}

/**
 * Replaces, under a dirty node, every reference to a node a checkpoint has written by its page
 * id, and every large value it wrote to overflow pages by their reference, so the written nodes
 * and values are no longer held by the live tree. Walks only dirty nodes. Changing a node shared
 * with a snapshot this way is safe: the page holds exactly what the node did.
 */
function release(node: TreeNode, overflowed: Map<Buffer, OverflowRef>): ChildRef {
  if (node.pageId !== 0) return node.pageId;
  if (node.kind === 'branch') {
    for (let i = 0; i < node.children.length; i++) {
      const child = node.children[i]!;
      if (typeof child !== 'number') node.children[i] = release(child, overflowed);
    }
  } else if (overflowed.size > 0) {
    for (let i = 0; i < node.values.length; i++) {
      const value = node.values[i]!;
      if (value instanceof Uint8Array) {
        const ref = overflowed.get(value as Buffer);
        if (ref !== undefined) node.values[i] = ref;
      }
    }
  }
  return node;
}

/** An overflow value read without blocking the event loop (see PageSource.readOverflow). */
async function readOverflowAsync(file: PageFile, ref: OverflowRef): Promise<Buffer> {
  return overflowValue(file, ref, await file.readPagesAsync(ref.page, overflowPages(ref.length)));
}

/** The value of `ref` from its overflow pages' bytes (checksums already verified). */
function overflowValue(file: PageFile, ref: OverflowRef, bytes: Buffer): Buffer {
  const count = bytes.length / PAGE_SIZE;
  const value = Buffer.allocUnsafe(ref.length);
  for (let i = 0, done = 0; i < count; i++) {
    const page = bytes.subarray(i * PAGE_SIZE, (i + 1) * PAGE_SIZE);
    if (page[PAGE_TYPE_OFFSET] !== PAGE_TYPE.OVERFLOW) {
      fail('CORRUPTION', `${file.path}: page ${ref.page + i} is not an overflow page`, { file: file.path, page: ref.page + i });
    }
    done += page.copy(value, done, PAGE_HEADER_SIZE, PAGE_HEADER_SIZE + Math.min(PAGE_PAYLOAD, ref.length - done));
  }
  return value;
}

function leafHasOverflow(node: LeafNode): boolean {
  const source = node.source!;
  for (let i = 0; i < source.valueOffsets.length; i++) if (source.page[source.valueOffsets[i]!] === VALUE_OVERFLOW) return true;
  return false;
}

/** Writes a catalog of `entries` as a fresh tree into `sink` and returns its root page id. */
/** A compaction between TreeSet.compactCopy and compactFinish (or compactAbandon). */
export interface CompactionDraft {
  readonly source: PageSource;
  readonly path: string;
  readonly temp: string;
  readonly beforeBytes: number;
  readonly fd: number;
  fdOpen: boolean;
  /** Old page id -> new page id, for every page copied (overflow pages included). */
  readonly mapping: Map<number, number>;
  /** Old page id -> pages its subtree occupies (itself, its descendants, their overflow pages). */
  readonly subtreePages: Map<number, number>;
  readonly sink: PageSink;
  written: number;
  /** The new file's cache id until the swap consumes it. */
  newFileId: number | undefined;
  released: boolean;
  /** Set by the owner to stop the copy (it then fails, and the draft is abandoned); the finish, once begun, goes on. */
  readonly signal: { cancelled: boolean };
  finishing: boolean;
}

/** Pages `ids` of `file`, read in runs of consecutive ids with the runs in flight together. */
async function readAhead(file: PageFile, ids: readonly number[]): Promise<Map<number, Buffer>> {
  const sorted = [...ids].sort((a, b) => a - b);
  const pages = new Map<number, Buffer>();
  const reads: Array<Promise<void>> = [];
  for (let k = 0; k < sorted.length; ) {
    let end = k + 1;
    while (end < sorted.length && sorted[end]! === sorted[end - 1]! + 1) end++;
    const first = sorted[k]!;
    const count = end - k;
    reads.push(
      file.readPagesAsync(first, count).then((bytes) => {
        for (let j = 0; j < count; j++) pages.set(first + j, count === 1 ? bytes : bytes.subarray(j * PAGE_SIZE, (j + 1) * PAGE_SIZE));
      }),
    );
    k = end;
  }
  await Promise.all(reads);
  return pages;
}

function writeCatalog(entries: Array<{ name: Buffer; root: number; count: number }>, sink: PageSink): number {
  if (entries.length === 0) return NO_PAGE;
  // A throwaway store: nodes of one epoch, no accounting, nothing on disk to read.
  const detached: NodeStore = {
    epoch: 1,
    load: () => {
      throw new Error('detached catalog has no pages');
    },
    loadToCopy: () => {
      throw new Error('detached catalog has no pages');
    },
    readOverflow: () => {
      throw new Error('detached catalog has no pages');
    },
    captured: () => false,
    retire: () => undefined,
    dirtied: () => undefined,
    copies: new PageCopies(() => undefined),
  };
  const catalog = new BTree(detached, NO_PAGE, 0);
  for (const { name, root, count } of entries) catalog.put(name, catalogEntry(root, count));
  const write = (node: TreeNode): number => {
    if (node.kind === 'branch') {
      for (let i = 0; i < node.children.length; i++) {
        const child = node.children[i]!;
        if (typeof child !== 'number') node.children[i] = write(child);
      }
    }
    return appendNode(node, sink).id;
  };
  return write(catalog.root as TreeNode);
}

function catalogEntry(root: number, count: number): Buffer {
  const entry = Buffer.allocUnsafe(CATALOG_ENTRY_BYTES);
  entry.writeUInt32LE(root, 0);
  entry.writeDoubleLE(count, 4);
  return entry;
}

/** Encodes and seals `node` (its children already page ids) as the sink's next page. */
function appendNode(node: TreeNode, sink: PageSink): { id: number; page: Buffer } {
  const page = Buffer.allocUnsafe(PAGE_SIZE);
  encodeNode(node, page);
  sealPage(page);
  sink.pages.push(page);
  return { id: sink.next++, page };
}

function appendOverflow(value: Buffer, sink: PageSink): void {
  for (let done = 0; done < value.length; done += PAGE_PAYLOAD) {
    const page = Buffer.alloc(PAGE_SIZE);
    page[PAGE_TYPE_OFFSET] = PAGE_TYPE.OVERFLOW;
    value.copy(page, PAGE_HEADER_SIZE, done, Math.min(value.length, done + PAGE_PAYLOAD));
    sealPage(page);
    sink.pages.push(page);
    sink.next++;
  }
}
