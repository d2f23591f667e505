import { closeSync, openSync, renameSync, unlinkSync, existsSync, fsyncSync, write } from 'node:fs';
import { promisify } from 'node:util';
import { dirname, join } from 'node:path';
import { fail } from '../errors.js';
import { BTree, overflowPages, type NodeStore } from './btree.js';
import {
  cloneNode,
  decodeNode,
  encodeNode,
  fitsInline,
  isOverflowRef,
  leafValues,
  nodeMemoryBytes,
  type ChildRef,
  type LeafNode,
  type OverflowRef,
  type TreeNode,
} from './btree-node.js';
import { failpoint, failpointArmed } from './failpoint.js';
import {
  CATALOG_ENTRY_BYTES,
  CHECKPOINT_CHUNK_BYTES,
  COMPACT_CHUNK_BYTES,
  COMPACT_TEMP_FILE,
  NO_PAGE,
  PAGE_HEADER_SIZE,
  PAGE_PAYLOAD,
  PAGE_SIZE,
  PAGE_TYPE,
  PAGE_TYPE_OFFSET,
} from './format.js';
import { PageCache } from './page-cache.js';
import { encodeHeader, fsyncDir, PageFile, sealPage, type FileHeader } from './page-file.js';

const writeAsync = promisify(write);

/** Marks every unwritten dirty node under `ref` frozen: from now on writes copy it. */
function freeze(ref: ChildRef): void {
  if (typeof ref === 'number' || ref.pageId !== 0 || ref.frozen === true) return;
  ref.frozen = true;
  if (ref.kind === 'branch') for (const child of ref.children) freeze(child);
}

/** Appends pages for a serialization pass and hands out their ids. */
interface PageSink {
  next: number;
  pages: Buffer[];
}

/**
 * The named B+trees of one page file, with the catalog that maps names to roots. Mutations are
 * in memory (dirty nodes) until checkpoint() appends them, followed by a new header page.
 */
export class TreeSet implements NodeStore {
  #file: PageFile;
  #fileId: number;
  readonly #cache: PageCache<TreeNode>;
  #catalog: BTree;
  readonly #trees = new Map<string, BTree>();
  /** Trees changed since the last checkpoint (including dropped ones). */
  readonly #touched = new Set<string>();
  /** On-disk pages superseded since the last checkpoint. */
  #retired = 0;
  /** The last durable header. */
  header: FileHeader;

  private constructor(file: PageFile, header: FileHeader, cache: PageCache<TreeNode>) {
    this.#file = file;
    this.#cache = cache;
    this.#fileId = cache.allocateFileId();
    this.header = header;
    this.#catalog = new BTree(this, header.catalogRoot, 0);
    this.#loadCatalog();
  }

  /**
   * Opens the page file at `path` (created if absent) at its last valid header. A compaction
   * temp file left by a crash is removed.
   * @throws CORRUPTION when the file has no valid header or a catalog page is damaged
   */
  static open(path: string, cache: PageCache<TreeNode>): TreeSet {
    const temp = join(dirname(path), COMPACT_TEMP_FILE);
    if (existsSync(temp)) {
      unlinkSync(temp);
      fsyncDir(dirname(path));
    }
    const { file, header } = PageFile.open(path);
    try {
      return new TreeSet(file, header, cache);
    } catch (err) {
      file.close();
      throw err;
    }
  }

  #loadCatalog(): void {
    this.#trees.clear();
    for (const [name, entry] of this.#catalog.scan()) {
      this.#trees.set(name.toString('utf8'), new BTree(this, entry.readUInt32LE(0), entry.readDoubleLE(4)));
    }
    this.#catalog.count = this.#trees.size;
  }

  // ---- NodeStore --------------------------------------------------------------------------

  load(pageId: number): TreeNode {
    const key = PageCache.key(this.#fileId, pageId);
    const cached = this.#cache.get(key);
    if (cached !== undefined) return cached;
    const page = this.#file.readPages(pageId, 1);
    const type = page[PAGE_TYPE_OFFSET];
    if (type !== PAGE_TYPE.LEAF && type !== PAGE_TYPE.BRANCH) {
      fail('CORRUPTION', `${this.#file.path}: page ${pageId} is not a tree page (type ${type})`, { file: this.#file.path, page: pageId });
    }
    const node = decodeNode(page, pageId);
    this.#cache.set(key, node, nodeMemoryBytes(node));
    return node;
  }

  readOverflow(ref: OverflowRef): Buffer {
    const count = overflowPages(ref.length);
    const bytes = this.#file.readPages(ref.page, count);
    const value = Buffer.allocUnsafe(ref.length);
    for (let i = 0, done = 0; i < count; i++) {
      const page = bytes.subarray(i * PAGE_SIZE, (i + 1) * PAGE_SIZE);
      if (page[PAGE_TYPE_OFFSET] !== PAGE_TYPE.OVERFLOW) {
        fail('CORRUPTION', `${this.#file.path}: page ${ref.page + i} is not an overflow page`, { file: this.#file.path, page: ref.page + i });
      }
      done += page.copy(value, done, PAGE_HEADER_SIZE, PAGE_HEADER_SIZE + Math.min(PAGE_PAYLOAD, ref.length - done));
    }
    return value;
  }

  retire(pages: number): void {
    this.#retired += pages;
  }

  // ---- Trees --------------------------------------------------------------------------------

  /** The tree called `name`, or undefined when it has never been written. */
  tree(name: string): BTree | undefined {
    return this.#trees.get(name);
  }

  /** The tree called `name`, created empty if needed; marks it changed (callers are writing). */
  writable(name: string): BTree {
    let tree = this.#trees.get(name);
    if (tree === undefined) {
      tree = new BTree(this, NO_PAGE, 0);
      this.#trees.set(name, tree);
    }
    this.#touched.add(name);
    return tree;
  }

  /** Removes a tree and all its keys; returns false when it did not exist. */
  drop(name: string): boolean {
    const tree = this.#trees.get(name);
    if (tree === undefined) return false;
    tree.forEachPage((_id, node) => {
      this.#retired++;
      if (node.kind === 'leaf') for (const v of leafValues(node)) if (isOverflowRef(v)) this.#retired += overflowPages(v.length);
    });
    tree.version++;
    this.#trees.delete(name);
    this.#touched.add(name);
    return true;
  }

  /** Names of trees that hold at least one key, sorted. */
  names(): string[] {
    return [...this.#trees].filter(([, t]) => t.count > 0).map(([n]) => n).sort();
  }

  get hasChanges(): boolean {
    return this.#touched.size > 0;
  }

  // ---- Checkpoint -----------------------------------------------------------------------------

  /**
   * Writes every dirty node and a new header recording `lsn`. The state is captured when this is
   * called: dirty nodes are frozen (a write that reaches one copies it, as it would a clean page),
   * so serialization yields to the event loop between chunks while writes go on. Resolves when
   * the header is durable (pages fsynced, then header fsynced).
   */
  async checkpoint(lsn: number): Promise<void> {
    // Capture, synchronously: what the header at `lsn` will describe.
    const captured: Array<{ name: string; tree: BTree; root: ChildRef; count: number }> = [];
    const emptied: string[] = [];
    for (const name of this.#touched) {
      const tree = this.#trees.get(name);
      if (tree === undefined || tree.count === 0) {
        if (tree !== undefined) this.#trees.delete(name);
        emptied.push(name);
        continue;
      }
      freeze(tree.root);
      captured.push({ name, tree, root: tree.root, count: tree.count });
    }
    this.#touched.clear();
    const retired = this.#retired;
    this.#retired = 0;

    // Serialize children first, writing a chunk at a time.
    const first = this.#file.pageCount;
    const sink: PageSink = { next: first, pages: [] };
    let flushed = first;
    const flush = async (): Promise<void> => {
      if (sink.pages.length === 0) return;
      const bytes = Buffer.concat(sink.pages);
      sink.pages = [];
      const at = this.#file.allocate(bytes.length / PAGE_SIZE);
      if (at !== flushed) throw new Error('checkpoint: page allocation raced');
      flushed += bytes.length / PAGE_SIZE;
      if (failpointArmed('checkpoint:mid-pages')) {
        // A torn checkpoint: half a chunk reaches the file, then the process dies.
        await this.#file.writePages(at, bytes.subarray(0, Math.max(PAGE_SIZE / 2, Math.floor(bytes.length / 2))));
        failpoint('checkpoint:mid-pages');
      }
      await this.#file.writePages(at, bytes);
    };
    const roots = new Map<string, number>();
    for (const { name, root } of captured) {
      roots.set(name, typeof root === 'number' ? root : await this.#writeNode(root, sink, flush));
    }
    // The catalog changes only here, under the caller's exclusion: no need to freeze it.
    for (const { name, count } of captured) {
      const nameKey = Buffer.from(name, 'utf8');
      const entry = catalogEntry(roots.get(name)!, count);
      const old = this.#catalog.get(nameKey);
      if (old === undefined || !old.equals(entry)) this.#catalog.put(nameKey, entry);
    }
    for (const name of emptied) this.#catalog.delete(Buffer.from(name, 'utf8'));
    if (typeof this.#catalog.root !== 'number') this.#catalog.root = await this.#writeNode(this.#catalog.root, sink, flush);
    await flush();
    const pagesWritten = flushed - first;
    if (pagesWritten > 0) {
      failpoint('checkpoint:after-pages');
      await this.#file.sync();
      failpoint('checkpoint:after-pages-sync');
    }
    const headerId = this.#file.allocate(1);
    const header: FileHeader = {
      checkpointLsn: lsn,
      catalogRoot: this.#catalog.root as number,
      pageCount: headerId + 1,
      // The previous header and every retired page become garbage; the new pages are live.
      livePages: this.header.livePages - retired + pagesWritten,
      writtenAtMs: Date.now(),
    };
    await this.#file.writePages(headerId, encodeHeader(header));
    failpoint('checkpoint:after-header');
    await this.#file.sync();
    failpoint('checkpoint:after-header-sync');
    this.header = header;
    // Trees nobody wrote meanwhile now point at their pages; the others keep their dirty roots
    // (which reach the frozen, now written, nodes until the next checkpoint).
    for (const { name, tree, root } of captured) {
      if (tree.root === root && this.#trees.get(name) === tree) tree.root = roots.get(name)!;
    }
  }

  /**
   * Appends `node` and its unwritten descendants to `sink`, children first, and returns its page
   * id. Frozen nodes are never modified (readers may be inside them): child ids and overflow
   * references go into the encoded page only.
   */
  async #writeNode(node: TreeNode, sink: PageSink, flush: () => Promise<void>): Promise<number> {
    if (node.pageId !== 0) return node.pageId; // written by an earlier checkpoint
    let encoded: TreeNode = node;
    if (node.kind === 'leaf') {
      for (let i = 0; i < node.values.length; i++) {
        const value = node.values[i]!;
        if (!isOverflowRef(value) && !fitsInline(node.keys[i]!.length, value.length)) {
          if (encoded === node) encoded = { ...node, values: node.values.slice() };
          (encoded as LeafNode).values[i] = { page: sink.next, length: value.length };
          appendOverflow(value, sink);
        }
      }
    } else {
      const children: ChildRef[] = new Array<ChildRef>(node.children.length);
      for (let i = 0; i < node.children.length; i++) {
        const child = node.children[i]!;
        children[i] = typeof child === 'number' ? child : await this.#writeNode(child, sink, flush);
      }
      encoded = { ...node, children };
    }
    const { id, page } = appendNode(encoded, sink);
    node.pageId = id;
    // Cache the page as if read back: the decoded copy references only its page, not the
    // caller's or the WAL's buffers the dirty node's keys and values came from. Nothing reaches
    // this id before the header that makes it reachable is written.
    const clean = decodeNode(page, id);
    this.#cache.set(PageCache.key(this.#fileId, id), clean, nodeMemoryBytes(clean));
    if (sink.pages.length * PAGE_SIZE >= CHECKPOINT_CHUNK_BYTES) await flush();
    return id;
  }

  // ---- Compaction -----------------------------------------------------------------------------

  /** Share of the file that no tree references any more, as of the last checkpoint. */
  get garbageRatio(): number {
    const total = this.header.pageCount;
    return total <= 1 ? 0 : Math.max(0, (total - this.header.livePages) / total);
  }

  get fileBytes(): number {
    return this.#file.bytes;
  }

  /**
   * Rewrites the pages reachable from the last durable header into a new file and swaps it in:
   * write -> fsync -> rename -> fsync(dir). Writes may continue meanwhile; their dirty nodes are
   * re-pointed at the new page ids at the swap. The caller must not checkpoint concurrently.
   */
  async compact(): Promise<{ beforeBytes: number; afterBytes: number }> {
    const path = this.#file.path;
    const temp = join(dirname(path), COMPACT_TEMP_FILE);
    const beforeBytes = this.#file.bytes;
    const header = this.header;
    const fd = openSync(temp, 'w+');
    const mapping = new Map<number, number>();
    const sink: PageSink = { next: 1, pages: [] };
    let written = 0;
    const flush = async (): Promise<void> => {
      if (sink.pages.length === 0) return;
      const bytes = Buffer.concat(sink.pages);
      sink.pages = [];
      for (let done = 0; done < bytes.length; ) {
        done += (await writeAsync(fd, bytes, done, bytes.length - done, written + done)).bytesWritten;
      }
      written += bytes.length;
    };
    try {
      // Page 0 of every file is a header: the empty state.
      sink.pages.push(encodeHeader({ checkpointLsn: 0, catalogRoot: NO_PAGE, pageCount: 1, livePages: 1, writtenAtMs: Date.now() }));

      const copy = async (pageId: number): Promise<number> => {
        const node = cloneNode(decodeNode(this.#file.readPages(pageId, 1), pageId));
        if (node.kind === 'branch') {
          for (let i = 0; i < node.children.length; i++) node.children[i] = await copy(node.children[i] as number);
        } else {
          for (let i = 0; i < node.values.length; i++) {
            const value = node.values[i]!;
            if (isOverflowRef(value)) {
              const moved = { page: sink.next, length: value.length };
              mapping.set(value.page, moved.page);
              appendOverflow(this.readOverflow(value), sink);
              node.values[i] = moved;
            }
          }
        }
        const { id } = appendNode(node, sink);
        mapping.set(pageId, id);
        if (sink.pages.length * PAGE_SIZE >= COMPACT_CHUNK_BYTES) await flush();
        return id;
      };

      // The durable catalog, re-pointed at the copied roots, becomes a fresh catalog tree.
      const durableCatalog = new BTree(this, header.catalogRoot, 0);
      const catalog = new BTree(this, NO_PAGE, 0);
      for (const [name, entry] of [...durableCatalog.scan()]) {
        const root = entry.readUInt32LE(0);
        const moved = root === NO_PAGE ? NO_PAGE : await copy(root);
        catalog.put(name, catalogEntry(moved, entry.readDoubleLE(4)));
        failpoint('compact:mid-copy');
      }
      const catalogRoot = typeof catalog.root === 'number' ? catalog.root : this.#writeDetached(catalog.root, sink);
      const newHeader: FileHeader = {
        checkpointLsn: header.checkpointLsn,
        catalogRoot,
        pageCount: sink.next + 1,
        livePages: sink.next + 1 - 1, // every page but the empty header at page 0
        writtenAtMs: Date.now(),
      };
      sink.pages.push(encodeHeader(newHeader));
      sink.next++;
      await flush();
      failpoint('compact:after-copy');
      fsyncSync(fd);
      failpoint('compact:after-fsync');
      closeSync(fd);
      renameSync(temp, path);
      failpoint('compact:after-rename');
      fsyncDir(dirname(path));
      failpoint('compact:after-dir-fsync');
      this.#swap(mapping, newHeader);
    } catch (err) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
      if (existsSync(temp)) unlinkSync(temp);
      throw err;
    }
    return { beforeBytes, afterBytes: this.#file.bytes };
  }

  /** Serializes a detached dirty tree into `sink` without caching it under this file's id. */
  #writeDetached(node: TreeNode, sink: PageSink): number {
    if (node.kind === 'branch') {
      for (let i = 0; i < node.children.length; i++) {
        const child = node.children[i]!;
        if (typeof child !== 'number') node.children[i] = this.#writeDetached(child, sink);
      }
    }
    return appendNode(node, sink).id;
  }

  /** Points in-memory state at the compacted file. Synchronous: no reader sees a mix. */
  #swap(mapping: Map<number, number>, header: FileHeader): void {
    const remap = (ref: ChildRef): ChildRef => {
      // A node written by the last checkpoint (frozen, still referenced by a newer copy) is
      // that page now: refer to its new id.
      const id = typeof ref === 'number' ? ref : ref.pageId;
      if (id !== 0 || ref === NO_PAGE) {
        if (id === NO_PAGE) return ref;
        const moved = mapping.get(id);
        if (moved === undefined) throw new Error(`compaction: page ${id} is referenced but was not copied`);
        return moved;
      }
      if (typeof ref === 'number') return ref;
      if (ref.kind === 'branch') {
        for (let i = 0; i < ref.children.length; i++) ref.children[i] = remap(ref.children[i]!);
      } else {
        for (let i = 0; i < ref.values.length; i++) {
          const value = ref.values[i]!;
          if (isOverflowRef(value)) {
            const moved = mapping.get(value.page);
            if (moved === undefined) throw new Error(`compaction: overflow page ${value.page} was not copied`);
            ref.values[i] = { page: moved, length: value.length };
          }
        }
      }
      return ref;
    };
    const roots = new Map<string, ChildRef>();
    for (const [name, tree] of this.#trees) roots.set(name, remap(tree.root));
    const { file, header: opened } = PageFile.open(this.#file.path);
    if (opened.pageCount !== header.pageCount) {
      file.close();
      throw new Error('compaction: the renamed file does not end at its header');
    }
    const oldFileId = this.#fileId;
    this.#file.close();
    this.#file = file;
    this.#fileId = this.#cache.allocateFileId();
    this.#cache.purgeFile(oldFileId);
    this.header = header;
    this.#catalog = new BTree(this, header.catalogRoot, this.#catalog.count);
    for (const [name, tree] of this.#trees) {
      tree.root = roots.get(name)!;
      tree.version++;
    }
  }

  close(): void {
    this.#file.close();
    this.#cache.purgeFile(this.#fileId);
  }
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
