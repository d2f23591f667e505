import { fail } from '../errors.js';
import { DirtyBudget } from './dirty-budget.js';

export interface PageCacheOptions {
  /** Bound on dirty (changed, not yet checkpointed) memory across every store sharing this cache. */
  dirtyBytes?: number;
  /** File ids available (ids of open files are never reused); a small value lets tests force the wrap. */
  maxFileIds?: number;
}

/**
 * Default dirty budget when none is configured. 128 MiB: with 64 MiB, a table with one randomly
 * keyed index fell from ~30k to ~5k inserted rows/s once it passed ~400k rows (every checkpoint
 * rewrote most of the index's leaves for a few keys each); 128 MiB holds it at ~25k past 800k.
 */
export const DEFAULT_DIRTY_BYTES = 128 * 1024 * 1024;
/** An eviction pass frees this share of the cache (1/64: 4 MiB of 256) below its bound. */
const EVICT_SLACK = 64;
/** Cache keys are fileId * 2^32 + pageId, so ids stay below 2^20 to keep keys exact in a double. */
const MAX_FILE_IDS = 2 ** 20;

/** A cached page: its decoded value, its estimated bytes, and whether it was read since the last eviction pass. */
interface CacheEntry<T> {
  value: T;
  bytes: number;
  used: boolean;
}

/**
 * A bounded LRU of decoded, clean (on-disk) pages, shared by every open page file in the process
 * so TETRA_CACHE_BYTES bounds memory however many tenants are open. Dirty pages are never here:
 * they belong to their tree until the next checkpoint writes them, and count against `dirty`, the
 * budget every store sharing this cache shares too. Pages scans read wait on probation (see
 * #scanned).
 */
export class PageCache<T> {
  readonly #maxBytes: number;
  /**
   * The bound in force: maxBytes, or less while the memory governor (memory-governor.ts) has
   * lowered it because the process's RSS passed what the configuration allows.
   */
  #limit: number;
  #bytes = 0;
  // Map iteration order is insertion order. A hit only sets `used` (no Map mutation on the read
  // path); eviction gives used entries a second chance by moving them to the end (CLOCK-style
  // approximation of LRU).
  readonly #entries = new Map<number, CacheEntry<T>>();
  /**
   * Pages a scan read (setScanned), on probation: evicted first, oldest first, and moved to
   * `#entries` when read again. A scan through more data than the cache churns only these, so it
   * never pushes out the pages other readers use (the idea of 2Q; PostgreSQL gives a large
   * sequential scan a small ring of buffers for the same reason).
   */
  readonly #scanned = new Map<number, CacheEntry<T>>();
  #nextFileId = 1;
  readonly #maxFileIds: number;
  /** Ids of files that are open: a new file never gets one of these, however long they live. */
  readonly #liveFileIds = new Set<number>();
  readonly dirty: DirtyBudget;
  hits = 0;
  misses = 0;

  constructor(maxBytes: number, options: PageCacheOptions = {}) {
    this.#maxBytes = Math.max(0, maxBytes);
    this.#limit = this.#maxBytes;
    this.#maxFileIds = Math.min(MAX_FILE_IDS, Math.max(2, options.maxFileIds ?? MAX_FILE_IDS));
    this.dirty = new DirtyBudget(options.dirtyBytes ?? DEFAULT_DIRTY_BYTES);
  }

  /**
   * An id for a newly opened file, unused by every file still open (ids wrap, skipping live ones);
   * cache keys are fileId * 2^32 + pageId. Release it with releaseFileId when the file closes.
   * @throws UNAVAILABLE when every id is taken by an open file
   */
  allocateFileId(): number {
    for (let tries = 1; tries < this.#maxFileIds; tries++) {
      const id = this.#nextFileId;
      this.#nextFileId = id + 1 >= this.#maxFileIds ? 1 : id + 1;
      if (!this.#liveFileIds.has(id)) {
        this.#liveFileIds.add(id);
        return id;
      }
    }
    fail('UNAVAILABLE', `too many page files open at once (${this.#maxFileIds - 1})`);
  }

  /** Drops every page of a closed file and makes its id available again. */
  releaseFileId(fileId: number): void {
    this.purgeFile(fileId);
    this.#liveFileIds.delete(fileId);
  }

  /** Ids of the files open now (for tests and diagnostics). */
  get openFileIds(): number {
    return this.#liveFileIds.size;
  }

  static key(fileId: number, pageId: number): number {
    return fileId * 0x1_0000_0000 + pageId;
  }

  get(key: number): T | undefined {
    let entry = this.#entries.get(key);
    if (entry === undefined) {
      entry = this.#scanned.get(key);
      if (entry === undefined) {
        this.misses++;
        return undefined;
      }
      // Read again after the scan that cached it: it joins the cache proper.
      this.#scanned.delete(key);
      this.#entries.set(key, entry);
    }
    this.hits++;
    entry.used = true;
    return entry.value;
  }

  /** True when `key` is cached; unlike get, counts as neither a hit nor a use. */
  has(key: number): boolean {
    return this.#entries.has(key) || this.#scanned.has(key);
  }

  set(key: number, value: T, bytes: number): void {
    this.#put(this.#entries, key, value, bytes);
  }

  /** set for a page a scan read: on probation until read again (see #scanned). */
  setScanned(key: number, value: T, bytes: number): void {
    this.#put(this.#scanned, key, value, bytes);
  }

  #put(into: Map<number, CacheEntry<T>>, key: number, value: T, bytes: number): void {
    const old = this.#entries.get(key) ?? this.#scanned.get(key);
    if (old !== undefined) {
      this.#bytes -= old.bytes;
      this.#entries.delete(key);
      this.#scanned.delete(key);
    }
    if (bytes > this.#limit) return;
    into.set(key, { value, bytes, used: false });
    this.#bytes += bytes;
    if (this.#bytes > this.#limit) this.#evict();
  }

  /** Drops every page of one file (on close, or after compaction replaced it). */
  purgeFile(fileId: number): void {
    const lo = PageCache.key(fileId, 0);
    const hi = PageCache.key(fileId + 1, 0);
    for (const map of [this.#entries, this.#scanned]) {
      for (const [key, entry] of map) {
        if (key >= lo && key < hi) {
          map.delete(key);
          this.#bytes -= entry.bytes;
        }
      }
    }
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** The configured bound (TETRA_CACHE_BYTES). */
  get maxBytes(): number {
    return this.#maxBytes;
  }

  /** The bound in force now: maxBytes unless the memory governor lowered it. */
  get limit(): number {
    return this.#limit;
  }

  /** Sets the bound in force (clamped to 0..maxBytes), evicting down to it at once. */
  setLimit(bytes: number): void {
    this.#limit = Math.max(0, Math.min(this.#maxBytes, Math.floor(bytes)));
    if (this.#bytes > this.#limit) this.#evict();
  }

  get size(): number {
    return this.#entries.size + this.#scanned.size;
  }

  #evict(): void {
    // Down to a little below the bound, so that a run of inserts into a full cache starts an
    // eviction pass once per ~1/64 of the cache rather than once per insert: each pass iterates
    // the Map from its head, over the holes the passes before it left there (V8 compacts them
    // only when it rehashes), which made one eviction cost up to a pass over the whole cache
    // (3.7% of a 1M-document load's CPU, in checkpoints caching the pages they wrote).
    const target = this.#limit - Math.floor(this.#limit / EVICT_SLACK);
    // Pages scans read and nobody read again go first, oldest first.
    for (const [key, entry] of this.#scanned) {
      if (this.#bytes <= target) return;
      this.#scanned.delete(key);
      this.#bytes -= entry.bytes;
    }
    // Bounded: each entry gets at most one second chance per eviction pass.
    let chances = this.#entries.size;
    for (const [key, entry] of this.#entries) {
      if (this.#bytes <= target) break;
      this.#entries.delete(key);
      if (entry.used && chances-- > 0) {
        entry.used = false;
        this.#entries.set(key, entry);
        continue;
      }
      this.#bytes -= entry.bytes;
    }
  }
}
