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
  nodeMemoryBytes,
  type ChildRef,
  type OverflowRef,
  type TreeNode,
} from './btree-node.js';
import { failpoint, failpointArmed } from './failpoint.js';
import {
  CATALOG_ENTRY_BYTES,
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
      if (node.kind === 'leaf') for (const v of node.values) if (isOverflowRef(v)) this.#retired += overflowPages(v.length);
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
   * Writes every dirty node and a new header recording `lsn`. The in-memory state is captured
   * synchronously when this is called; writes that follow go to a new generation of dirty nodes.
   * Resolves when the header is durable (pages fsynced, then header fsynced).
   */
  async checkpoint(lsn: number): Promise<void> {
    const sink: PageSink = { next: this.#file.pageCount, pages: [] };
    for (const name of this.#touched) {
      const nameKey = Buffer.from(name, 'utf8');
      const tree = this.#trees.get(name);
      if (tree === undefined || tree.count === 0) {
        if (tree !== undefined) this.#trees.delete(name);
        this.#catalog.delete(nameKey);
        continue;
      }
      if (typeof tree.root !== 'number') tree.root = this.#writeNode(tree.root, sink);
      const entry = catalogEntry(tree.root, tree.count);
      const old = this.#catalog.get(nameKey);
      if (old === undefined || !old.equals(entry)) this.#catalog.put(nameKey, entry);
    }
    this.#touched.clear();
    if (typeof this.#catalog.root !== 'number') this.#catalog.root = this.#writeNode(this.#catalog.root, sink);

    const pagesWritten = sink.pages.length;
    const first = this.#file.allocate(pagesWritten + 1);
    if (first + pagesWritten !== sink.next) throw new Error('checkpoint: page allocation raced');
    const header: FileHeader = {
      checkpointLsn: lsn,
      catalogRoot: this.#catalog.root as number,
      pageCount: first + pagesWritten + 1,
      // The previous header and every retired page become garbage; the new pages are live.
      livePages: this.header.livePages - this.#retired + pagesWritten,
      writtenAtMs: Date.now(),
    };
    this.#retired = 0;

    if (pagesWritten > 0) {
      const bytes = Buffer.concat(sink.pages);
      if (failpointArmed('checkpoint:mid-pages')) {
        await this.#file.writePages(first, bytes.subarray(0, Math.floor(pagesWritten / 2) * PAGE_SIZE + PAGE_SIZE / 2));
        failpoint('checkpoint:mid-pages');
      }
      await this.#file.writePages(first, bytes);
      failpoint('checkpoint:after-pages');
      await this.#file.sync();
      failpoint('checkpoint:after-pages-sync');
    }
    await this.#file.writePages(first + pagesWritten, encodeHeader(header));
    failpoint('checkpoint:after-header');
    await this.#file.sync();
    failpoint('checkpoint:after-header-sync');
    this.header = header;
  }

  /** Appends `node` and its dirty descendants to `sink` (children first); returns its page id. */
  #writeNode(node: TreeNode, sink: PageSink): number {
    if (node.kind === 'leaf') {
      for (let i = 0; i < node.values.length; i++) {
        const value = node.values[i]!;
        if (!isOverflowRef(value) && !fitsInline(node.keys[i]!.length, value.length)) {
          node.values[i] = { page: sink.next, length: value.length };
          appendOverflow(value, sink);
        }
      }
    } else {
      for (let i = 0; i < node.children.length; i++) {
        const child = node.children[i]!;
        if (typeof child !== 'number') node.children[i] = this.#writeNode(child, sink);
      }
    }
    const page = Buffer.allocUnsafe(PAGE_SIZE);
    encodeNode(node, page);
    sealPage(page);
    const id = sink.next++;
    sink.pages.push(page);
    node.pageId = id;
    // Cache the page as if read back: the decoded copy references only its page, not the
    // caller's or the WAL's buffers the dirty node's keys and values came from.
    const clean = decodeNode(page, id);
    this.#cache.set(PageCache.key(this.#fileId, id), clean, nodeMemoryBytes(clean));
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
        const page = Buffer.allocUnsafe(PAGE_SIZE);
        encodeNode(node, page);
        sealPage(page);
        const id = sink.next++;
        sink.pages.push(page);
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
    const page = Buffer.allocUnsafe(PAGE_SIZE);
    encodeNode(node, page);
    sealPage(page);
    sink.pages.push(page);
    return sink.next++;
  }

  /** Points in-memory state at the compacted file. Synchronous: no reader sees a mix. */
  #swap(mapping: Map<number, number>, header: FileHeader): void {
    const remap = (ref: ChildRef): ChildRef => {
      if (typeof ref === 'number') {
        if (ref === NO_PAGE) return ref;
        const moved = mapping.get(ref);
        if (moved === undefined) throw new Error(`compaction: page ${ref} is referenced but was not copied`);
        return moved;
      }
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
