import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Entry, TreePageStats, TreeSnapshot, ValueRun } from '../storage/index.js';
import { withPrefix, type StoreScanRange } from './scan-range.js';

/** Entries per chunk of scanChunks unless told otherwise. */
const DEFAULT_CHUNK = 256;

/**
 * A consistent read-only view of all of a tenant's trees at one lsn: every read sees exactly the
 * batches up to `lsn`, whatever is written meanwhile. Taking one costs O(number of trees).
 * Close it when done: an open snapshot keeps the nodes and files it reads alive. One held past
 * the store's snapshot age limit, or while the dirty budget is full of memory only it still
 * needs, expires: its reads then fail with UNAVAILABLE (never a wrong answer).
 *
 * What a snapshot returns may include batches not yet durable; before it leaves the engine the
 * caller waits for TenantStore.whenDurable(snapshot.lsn) (TenantRegistry.use does this).
 */
export class Snapshot {
  /** The last batch this snapshot sees. */
  readonly lsn: number;
  readonly #trees: TreeSnapshot;

  /** @internal built by TenantStore.snapshot */
  constructor(trees: TreeSnapshot, lsn: number) {
    this.#trees = trees;
    this.lsn = lsn;
  }

  /** @throws UNAVAILABLE when closed or expired */
  get(tree: string, key: Uint8Array): Buffer | undefined {
    return this.#trees.tree(tree)?.get(key);
  }

  /** get() in place (TreeReader.getInto): the value becomes `run`'s only entry; false when there is none. @throws UNAVAILABLE when closed or expired */
  getInto(tree: string, key: Uint8Array, run: ValueRun): boolean {
    run.count = 0;
    return this.#trees.tree(tree)?.getInto(key, run) ?? false;
  }

  /** @throws UNAVAILABLE when closed or expired */
  has(tree: string, key: Uint8Array): boolean {
    return this.#trees.tree(tree)?.has(key) ?? false;
  }

  /** Entries of `tree` within `range`, in key order (or reversed). @throws UNAVAILABLE when closed or expired */
  *scan(tree: string, range: StoreScanRange = {}): Generator<Entry> {
    const t = this.#trees.tree(tree);
    if (t !== undefined) yield* t.scan(withPrefix(range));
  }

  /** Values of `tree` within `range`, in key order. @throws UNAVAILABLE when closed or expired */
  values(tree: string, range: StoreScanRange = {}): IterableIterator<Buffer> {
    const t = this.#trees.tree(tree);
    return t === undefined ? [][Symbol.iterator]() : t.values(withPrefix(range));
  }

  /**
   * Values of `tree` within `range`, a leaf at a time (see TreeReader.valueRuns: each run is
   * valid until the next step). @throws UNAVAILABLE when closed or expired
   */
  *valueRuns(tree: string, range: StoreScanRange = {}): Generator<ValueRun> {
    const t = this.#trees.tree(tree);
    if (t !== undefined) yield* t.valueRuns(withPrefix(range));
  }

  /** Keys of `tree` within `range`. @throws UNAVAILABLE when closed or expired */
  *keys(tree: string, range: StoreScanRange = {}): Generator<Buffer> {
    const t = this.#trees.tree(tree);
    if (t !== undefined) yield* t.keys(withPrefix(range));
  }

  /**
   * Adds the pages of `tree` (its delta's too, when buffered) to `stats`, pausing after every
   * `every` pages (TreeReader.pageStatsSteps). @throws UNAVAILABLE when closed or expired
   */
  *pageStatsSteps(tree: string, stats: TreePageStats, every: number): Generator<void> {
    const t = this.#trees.tree(tree);
    if (t !== undefined) yield* t.pageStatsSteps(stats, every);
  }

  /** Number of keys in `tree` within `range`; O(1) without bounds. @throws UNAVAILABLE when closed or expired */
  count(tree: string, range: StoreScanRange = {}): number {
    return this.#trees.tree(tree)?.countRange(withPrefix(range)) ?? 0;
  }

  /** Names of the trees that held keys. @throws UNAVAILABLE when closed or expired */
  treeNames(): string[] {
    return this.#trees.names();
  }

  /**
   * The entries of a scan in chunks of up to `chunkSize`, yielding to the event loop between
   * chunks, so a long read neither blocks other requests nor sees later writes.
   * @throws UNAVAILABLE when the snapshot is closed or expires while the scan runs
   */
  async *scanChunks(tree: string, range: StoreScanRange = {}, chunkSize = DEFAULT_CHUNK): AsyncGenerator<Entry[]> {
    let chunk: Entry[] = [];
    for (const entry of this.scan(tree, range)) {
      chunk.push(entry);
      if (chunk.length >= chunkSize) {
        yield chunk;
        chunk = [];
        await nextTurn();
      }
    }
    if (chunk.length > 0) yield chunk;
  }

  get closed(): boolean {
    return this.#trees.closed;
  }

  /** Releases what the snapshot holds (idempotent). */
  close(): void {
    this.#trees.close();
  }
}
