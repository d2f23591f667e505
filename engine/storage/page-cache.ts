/**
 * A bounded LRU of decoded, clean (on-disk) pages, shared by every open page file in the process
 * so TETRA_CACHE_BYTES bounds memory however many tenants are open. Dirty pages are never here:
 * they belong to their tree until the next checkpoint writes them.
 */
export class PageCache<T> {
  readonly #maxBytes: number;
  #bytes = 0;
  // Map iteration order is insertion order. A hit only sets `used` (no Map mutation on the read
  // path); eviction gives used entries a second chance by moving them to the end (CLOCK-style
  // approximation of LRU).
  readonly #entries = new Map<number, { value: T; bytes: number; used: boolean }>();
  #nextFileId = 1;
  hits = 0;
  misses = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = Math.max(0, maxBytes);
  }

  /** A fresh id for a newly opened file; cache keys are fileId * 2^32 + pageId. */
  allocateFileId(): number {
    const id = this.#nextFileId++;
    if (id >= 2 ** 20) this.#nextFileId = 1; // ids wrap long after old files were purged
    return id;
  }

  static key(fileId: number, pageId: number): number {
    return fileId * 0x1_0000_0000 + pageId;
  }

  get(key: number): T | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    entry.used = true;
    return entry.value;
  }

  set(key: number, value: T, bytes: number): void {
    const old = this.#entries.get(key);
    if (old !== undefined) {
      this.#bytes -= old.bytes;
      this.#entries.delete(key);
    }
    if (bytes > this.#maxBytes) return;
    this.#entries.set(key, { value, bytes, used: false });
    this.#bytes += bytes;
    if (this.#bytes > this.#maxBytes) this.#evict();
  }

  /** Drops every page of one file (on close, or after compaction replaced it). */
  purgeFile(fileId: number): void {
    const lo = PageCache.key(fileId, 0);
    const hi = PageCache.key(fileId + 1, 0);
    for (const [key, entry] of this.#entries) {
      if (key >= lo && key < hi) {
        this.#entries.delete(key);
        this.#bytes -= entry.bytes;
      }
    }
  }

  get bytes(): number {
    return this.#bytes;
  }

  get maxBytes(): number {
    return this.#maxBytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  #evict(): void {
    // Bounded: each entry gets at most one second chance per eviction pass.
    let chances = this.#entries.size;
    for (const [key, entry] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
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
