import { statSync } from 'node:fs';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Packr } from 'msgpackr';
import { fail, TetraError } from '../errors.js';
import {
  DATA_FILE,
  ensureDirDurable,
  FSYNC_MODES,
  initChecksum,
  openDerivedWriter,
  readDerivedFile,
  type DerivedWriter,
  listSegments,
  MAX_KEY_BYTES,
  MAX_TREE_NAME_BYTES,
  MAX_VALUE_BYTES,
  OP,
  ackPacer,
  PageCache,
  recoverWal,
  TreeSet,
  WalWriter,
  WAL_SEGMENT_HEADER_SIZE,
  MERGE_DELTA_MIN,
  BUFFER_FROM,
  failpoint,
  type DirtyOwner,
  type Entry,
  type FsyncMode,
  type TreeNode,
  type TreePageStats,
  type TreeView,
  type ValueRun,
} from '../storage/index.js';
import { withPrefix, type StoreScanRange } from './scan-range.js';
import { Snapshot } from './tenant-snapshot.js';
import { walRecordFrame } from './wal-record.js';

export type { StoreScanRange } from './scan-range.js';

/** One operation of an atomic batch. Keys and values are copied by the store. */
export type BatchOp =
  | { op: 'put'; tree: string; key: Uint8Array; value: Uint8Array }
  | { op: 'delete'; tree: string; key: Uint8Array }
  | { op: 'dropTree'; tree: string };

export interface TenantStoreOptions {
  /** Shared page cache (one per process bounds memory across tenants), with the dirty budget. */
  cache: PageCache<TreeNode>;
  fsync?: FsyncMode;
  /** WAL segment size before rotating. */
  walSegmentBytes?: number;
  /** Checkpoint when this much WAL accumulated since the last one. */
  checkpointWalBytes?: number;
  /** Checkpoint at least this often while there are changes (0 disables the timer). */
  checkpointIntervalMs?: number;
  /** Compact after a checkpoint when this share of the file is garbage... */
  compactGarbageRatio?: number;
  /** ...and the file is at least this large. */
  compactMinBytes?: number;
  /** A snapshot (or scan) open longer than this expires: its reads fail with UNAVAILABLE. 0: never. */
  snapshotMaxAgeMs?: number;
  /**
   * Trees whose writes are buffered in a delta and merged later (engine/storage/buffered-tree.ts).
   * Default: the documents model's secondary indexes, which are randomly keyed.
   */
  bufferedTrees?: (tree: string) => boolean;
  /** A buffered tree's delta is merged once it holds an eighth of the tree's entries and at least this many. */
  deltaMergeMin?: number;
  /** A buffered tree buffers its writes once it holds this many entries (smaller ones take them directly). */
  bufferFromEntries?: number;
}

/**
 * The documents model's secondary index trees (engine/docs/catalog.ts indexTree:
 * `docs.<collection id>.<index id>`): their keys arrive in the order of a field's values, random
 * for most fields, so their writes are buffered.
 */
export function isSecondaryIndexTree(tree: string): boolean {
  return /^docs\.\d+\.\d+$/.test(tree);
}

export const TENANT_STORE_DEFAULTS = {
  fsync: 'batch' as FsyncMode,
  walSegmentBytes: 64 * 1024 * 1024,
  checkpointWalBytes: 32 * 1024 * 1024,
  checkpointIntervalMs: 60_000,
  compactGarbageRatio: 0.5,
  compactMinBytes: 4 * 1024 * 1024,
  snapshotMaxAgeMs: 5 * 60_000,
  bufferedTrees: isSecondaryIndexTree,
  deltaMergeMin: MERGE_DELTA_MIN,
  bufferFromEntries: BUFFER_FROM,
};

interface WalRecord {
  lsn: number;
  ops: Array<{ op: number; tree: string; key?: Buffer; value?: Buffer }>;
}

interface DurableWaiter {
  lsn: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

const packr = new Packr({ useRecords: false });

/** Records replayed between two yields to the event loop while a store opens. */
const REPLAY_YIELD_RECORDS = 1024;

/** Delta entries a merge moves into their main tree per event-loop turn (a few milliseconds). */
const MERGE_CHUNK = 1024;

/**
 * One tenant's database: named B+trees in a page file plus a write-ahead log, in one directory.
 *
 * write() applies a batch atomically and at once (later reads see it, so check-then-write in one
 * turn is atomic) and resolves when the batch is durable in the configured fsync mode. Reads are
 * synchronous and see applied batches, durable or not: whatever a read returns must not leave
 * the engine before whenDurable() says the batches it could have seen are durable
 * (TenantRegistry.use does this for every caller). Ranged reads run on snapshots.
 */
export class TenantStore implements DirtyOwner {
  readonly dir: string;
  readonly #options: Required<Omit<TenantStoreOptions, 'cache'>>;
  readonly #cache: PageCache<TreeNode>;
  readonly #trees: TreeSet;
  readonly #wal: WalWriter;
  #lsn: number;
  #durableLsn: number;
  #durableWaiters: DurableWaiter[] = [];
  #newestSnapshotLsn = 0;
  /** Changes with every applied batch and every merge chunk: what scanNow's live reads check. */
  #changes = 0;
  /** The running merge of buffered trees' deltas, if any. */
  #merging: Promise<void> | undefined;
  #closed = false;
  #broken: TetraError | undefined;
  /** Settles (rejects) when the store breaks, so nothing waits on it forever. */
  readonly #brokenSignal: Promise<never>;
  #signalBroken: (err: unknown) => void = () => undefined;
  #maintenance: Promise<void> = Promise.resolve();
  /** A compaction started by a checkpoint, until it finished, failed or was cancelled. */
  #compaction: { readonly signal: { cancelled: boolean }; readonly done: Promise<void> } | undefined;
  #checkpointQueued = false;
  #timer: NodeJS.Timeout | undefined;
  #lastCheckpointAt = Date.now();
  #closing: Promise<void> | undefined;
  /** Wakes a merge waiting for room in the dirty budget when the store closes. */
  #wakeMerge: (() => void) | undefined;
  readonly #checkpointListeners = new Set<() => void>();
  readonly #closeListeners = new Set<() => Promise<void>>();
  readonly #writeListeners = new Set<(lsn: number, ops: readonly BatchOp[]) => void>();
  readonly recovered: { records: number; bytes: number };

  private constructor(dir: string, options: Required<Omit<TenantStoreOptions, 'cache'>>, cache: PageCache<TreeNode>, trees: TreeSet, wal: WalWriter, lsn: number, recovered: { records: number; bytes: number }) {
    this.dir = dir;
    this.#options = options;
    this.#cache = cache;
    this.#trees = trees;
    this.#wal = wal;
    this.#lsn = lsn;
    this.#durableLsn = lsn;
    this.recovered = recovered;
    this.#brokenSignal = new Promise<never>((_, reject) => (this.#signalBroken = reject));
    this.#brokenSignal.catch(() => undefined);
    const tick = [options.checkpointIntervalMs, options.snapshotMaxAgeMs].filter((ms) => ms > 0);
    if (tick.length > 0) {
      this.#timer = setInterval(() => this.#tick(), Math.max(50, Math.min(...tick, 5_000)));
      this.#timer.unref();
    }
    cache.dirty.register(this);
  }

  /**
   * Opens (creating if needed) the store in `dir`: the page file at its last valid header, then
   * every WAL record after it replayed (yielding to the event loop as it goes, and checkpointing
   * whenever the replayed changes fill half the dirty budget).
   * @throws CORRUPTION naming the file and offset when the log or page file is damaged
   * @throws VALIDATION_FAILED for bad options
   */
  static async open(dir: string, options: TenantStoreOptions): Promise<TenantStore> {
    const opts = { ...TENANT_STORE_DEFAULTS, ...stripUndefined(options) };
    delete (opts as Partial<TenantStoreOptions>).cache;
    if (!FSYNC_MODES.includes(opts.fsync)) fail('VALIDATION_FAILED', `fsync must be one of ${FSYNC_MODES.join(', ')}`);
    await initChecksum();
    ensureDirDurable(dir);
    const path = join(dir, DATA_FILE);
    const trees = TreeSet.open(path, options.cache, { buffered: opts.bufferedTrees, mergeMin: opts.deltaMergeMin, bufferFrom: opts.bufferFromEntries });
    try {
      let decoded: WalRecord | undefined;
      const lsnOf = (payload: Buffer): number => {
        decoded = packr.unpack(payload) as WalRecord;
        if (typeof decoded?.lsn !== 'number' || !Array.isArray(decoded.ops)) throw new Error('not a WAL record');
        return decoded.lsn;
      };
      const segments = listSegments(dir);
      const tail = trees.tail;
      if (tail !== undefined) {
        // Bytes after the newest valid header: a checkpoint torn by a crash, whose records the
        // log still holds (its segments are deleted only after its header is durable), or a
        // damaged newest header whose log is gone. Cut them only in the first case.
        const first = segments[0];
        if (first === undefined || first.firstLsn > trees.header.checkpointLsn + 1) {
          fail(
            'CORRUPTION',
            `${path}: the newest checkpoint header (page at offset ${tail.lastPageOffset}) is damaged and the write-ahead log no longer holds the records after the previous checkpoint (lsn ${trees.header.checkpointLsn}); refusing to open rather than lose acknowledged data (see docs/operations.md)`,
            { file: path, offset: tail.lastPageOffset },
          );
        }
      }
      if (tail !== undefined || segments.some((s) => statSync(s.path).size > WAL_SEGMENT_HEADER_SIZE)) {
        // Read the whole log once before changing anything: neither cutting the page file's tail
        // nor a checkpoint in the middle of the replay may happen for a log that then turns out
        // to be damaged (the refusal must leave the files as they were).
        await recoverWal(dir, trees.header.checkpointLsn, () => undefined, lsnOf);
      }
      trees.truncateTail();
      const replayCheckpointBytes = options.cache.dirty.limit / 2;
      let sinceYield = 0;
      const recovery = await recoverWal(
        dir,
        trees.header.checkpointLsn,
        (lsn) => {
          applyOps(trees, decoded!.ops);
          decoded = undefined;
          // Replaying a long log must stay within the dirty budget and not block other tenants.
          if (trees.pendingBytes >= replayCheckpointBytes) return trees.checkpoint(lsn);
          if (++sinceYield >= REPLAY_YIELD_RECORDS) {
            sinceYield = 0;
            return nextTurn();
          }
          return undefined;
        },
        lsnOf,
      );
      const wal = WalWriter.open(dir, { fsync: opts.fsync, segmentBytes: opts.walSegmentBytes }, recovery.segments, recovery.tail, recovery.lastLsn + 1);
      const store = new TenantStore(dir, opts, options.cache, trees, wal, recovery.lastLsn, { records: recovery.replayedRecords, bytes: recovery.replayedBytes });
      // Fold what was replayed into the page file so the next open is instant.
      if (recovery.replayedRecords > 0) await store.checkpoint();
      store.#mergeDeltas();
      return store;
    } catch (err) {
      trees.close();
      throw err;
    }
  }

  // ---- Reads ----------------------------------------------------------------------------------

  /** get() in place (BTree.getInto): the value becomes `run`'s only entry; false when there is none. */
  getInto(tree: string, key: Uint8Array, run: ValueRun): boolean {
    this.#assertOpen();
    run.count = 0;
    return this.#trees.reader(tree)?.getInto(key, run) ?? false;
  }

  /** The value under `key` in `tree`, or undefined. */
  get(tree: string, key: Uint8Array): Buffer | undefined {
    this.#assertOpen();
    return this.#trees.reader(tree)?.get(key);
  }

  /**
   * A number that changes whenever the live tree changes, never the same for two different
   * states (0 while the tree does not exist): a reader may keep what it derived from a tree for
   * as long as its version stays the same.
   */
  treeVersion(tree: string): number {
    this.#assertOpen();
    return this.#trees.version(tree);
  }

  /** How many pages `tree` takes and how full they are (TreeReader.pageStats); undefined when it does not exist. */
  pageStats(tree: string): TreePageStats | undefined {
    this.#assertOpen();
    return this.#trees.reader(tree)?.pageStats();
  }

  has(tree: string, key: Uint8Array): boolean {
    this.#assertOpen();
    return this.#trees.reader(tree)?.has(key) ?? false;
  }

  /**
   * Entries of `tree` within `range`, in key order (or reversed), as of the first step: the scan
   * runs on a snapshot of the tree, so writes made while it is consumed never show up in it.
   * Consume it promptly (it expires with the snapshot age limit); for long reads use snapshot().
   */
  scan(tree: string, range: StoreScanRange = {}): Generator<Entry> {
    return this.#onSnapshot(tree, (t) => t.scan(withPrefix(range)));
  }

  /**
   * Entries of `tree` within `range`, read from the live tree without taking a snapshot: for a
   * short read that is consumed (or abandoned) within the current event-loop turn, when no write
   * can come in between. Cheaper than scan() by the snapshot it does not take.
   * @throws Error when stepped after a write to this store: a read across turns must use scan()
   */
  *scanNow(tree: string, range: StoreScanRange = {}): Generator<Entry> {
    this.#assertOpen();
    const t = this.#trees.reader(tree);
    if (t === undefined) return;
    const changes = this.#changes;
    const entries = t.scan(withPrefix(range));
    for (;;) {
      if (this.#changes !== changes) throw new Error(`TenantStore.scanNow(${tree}) stepped after a write: a read across event-loop turns must use scan() or snapshot()`);
      const next = entries.next();
      if (next.done === true) return;
      yield next.value;
    }
  }

  /**
   * Values of `tree` within `range` in key order (or reversed), at most `max`, appended to `out`,
   * read from the live tree in this call (synchronous: nothing can write meanwhile). True when the
   * range holds more than were taken. For short reads; longer ones go through a snapshot.
   */
  valuesNow(tree: string, range: StoreScanRange, max: number, out: Buffer[]): boolean {
    this.#assertOpen();
    return this.#trees.reader(tree)?.collectValues(withPrefix(range), max, out) ?? false;
  }

  /**
   * Values of `tree` within `range` in key order (keys are not materialised), on a snapshot like
   * scan(). A plain iterator rather than a generator (one call per value instead of a delegated
   * resume, which full-table SQL scans feel): it takes its snapshot at the first next() and
   * releases it at the end or on return().
   */
  values(tree: string, range: StoreScanRange = {}): IterableIterator<Buffer> {
    let snapshot: ReturnType<TreeSet['snapshot']> | undefined;
    let inner: Iterator<Buffer> | undefined;
    let done = false;
    const finish = (): void => {
      done = true;
      snapshot?.close();
      snapshot = undefined;
    };
    const it: IterableIterator<Buffer> = {
      next: (): IteratorResult<Buffer> => {
        if (done) return { done: true, value: undefined };
        try {
          if (inner === undefined) {
            this.#assertOpen();
            snapshot = this.#trees.snapshot([tree]);
            const t = snapshot.tree(tree);
            if (t === undefined) {
              finish();
              return { done: true, value: undefined };
            }
            inner = t.values(withPrefix(range));
          }
          const r = inner.next();
          if (r.done === true) finish();
          return r;
        } catch (err) {
          finish();
          throw err;
        }
      },
      return: (): IteratorResult<Buffer> => {
        inner?.return?.();
        finish();
        return { done: true, value: undefined };
      },
      [Symbol.iterator]: () => it,
    };
    return it;
  }

  /**
   * Values of `tree` within `range`, a leaf at a time, on a snapshot like scan(): each run is
   * valid until the next step (see TreeReader.valueRuns).
   */
  valueRuns(tree: string, range: StoreScanRange = {}): Generator<ValueRun> {
    return this.#onSnapshot(tree, (t) => t.valueRuns(withPrefix(range)));
  }

  /** Keys of `tree` within `range` (values are not read), on a snapshot like scan(). */
  keys(tree: string, range: StoreScanRange = {}): Generator<Buffer> {
    return this.#onSnapshot(tree, (t) => t.keys(withPrefix(range)));
  }

  /** Runs `read` over one tree on a snapshot of it, released when the generator ends. */
  *#onSnapshot<T>(tree: string, read: (t: TreeView) => Iterable<T>): Generator<T> {
    this.#assertOpen();
    const snapshot = this.#trees.snapshot([tree]);
    try {
      const t = snapshot.tree(tree);
      if (t !== undefined) yield* read(t);
    } finally {
      snapshot.close();
    }
  }

  /** Number of keys in `tree` within `range`; O(1) without bounds. */
  count(tree: string, range: StoreScanRange = {}): number {
    this.#assertOpen();
    // Synchronous from start to end: nothing can change the tree meanwhile.
    return this.#trees.reader(tree)?.countRange(withPrefix(range)) ?? 0;
  }

  /** Names of the trees that hold keys. */
  treeNames(): string[] {
    this.#assertOpen();
    return this.#trees.names();
  }

  /**
   * A consistent view of every tree (or only of `trees`: cheaper when a tenant has many) at the
   * current lsn, for reads that take a while or span several trees; close it when done.
   * @throws UNAVAILABLE when the store is closed or failed
   */
  snapshot(trees?: readonly string[]): Snapshot {
    this.#assertOpen();
    const snapshot = new Snapshot(this.#trees.snapshot(trees), this.#lsn);
    this.#newestSnapshotLsn = this.#lsn;
    return snapshot;
  }

  /** Lsn of the last applied batch (durable or not). */
  get lsn(): number {
    return this.#lsn;
  }

  /** Lsn of the newest snapshot() taken (0 before any). */
  get newestSnapshotLsn(): number {
    return this.#newestSnapshotLsn;
  }

  /**
   * Undefined when every batch up to `lsn` (default: every applied batch) is durable, else a
   * promise that resolves when it is. A response that shows what a read saw waits for this, so
   * no client is ever shown a write that a crash could still take away.
   */
  whenDurable(lsn: number = this.#lsn): Promise<void> | undefined {
    if (lsn <= this.#durableLsn) return undefined;
    if (this.#broken) return Promise.reject(this.#broken);
    return new Promise<void>((resolve, reject) => this.#durableWaiters.push({ lsn, resolve, reject }));
  }

  #advanceDurable(lsn: number): void {
    if (lsn <= this.#durableLsn) return;
    this.#durableLsn = lsn;
    if (this.#durableWaiters.length === 0) return;
    const waiting: DurableWaiter[] = [];
    for (const w of this.#durableWaiters) {
      if (w.lsn <= lsn) w.resolve();
      else waiting.push(w);
    }
    this.#durableWaiters = waiting;
  }

  // ---- Writes ---------------------------------------------------------------------------------

  /**
   * Applies `ops` as one atomic batch: validated first (a bad op changes nothing), applied to the
   * trees synchronously, then logged. Resolves with the batch's lsn once durable and, while the
   * dirty budget is full, once checkpoints have made room again (backpressure on writers); the
   * process-wide ackPacer then hands acknowledgements out a few per event-loop turn, so the
   * writers a group commit releases together do not all run their next batch in one turn.
   * @throws VALIDATION_FAILED for a bad tree name, key or value size (nothing applied)
   * @throws UNAVAILABLE when the store is closed or failed, or when writers outrun the dirty
   *   budget by twice its size without waiting for their acknowledgements (nothing applied)
   */
  write(ops: readonly BatchOp[]): Promise<{ lsn: number }> {
    const budget = this.#cache.dirty;
    try {
      this.#assertOpen();
      validateOps(ops);
      if (budget.exhausted) {
        fail('UNAVAILABLE', `write refused: ${budget.bytes} bytes of changes are waiting for checkpoints (dirty budget ${budget.configured}); retry shortly`);
      }
    } catch (err) {
      return Promise.reject(err);
    }
    if (ops.length === 0) return Promise.resolve({ lsn: this.#lsn });
    const lsn = this.#lsn + 1;
    const frame = walRecordFrame(lsn, ops);
    try {
      applyBatch(this.#trees, ops);
    } catch (err) {
      // Half-applied in memory: nothing is logged, and the store refuses work until reopened.
      this.#break(err);
      return Promise.reject(this.#broken);
    }
    this.#lsn = lsn;
    this.#changes++;
    if (this.#trees.mergeDue.size > 0) this.#mergeDeltas();
    for (const listener of this.#writeListeners) {
      try {
        listener(lsn, ops);
      } catch {
        // A listener's failure is its own (it keeps a derived copy): the batch stands.
      }
    }
    // The record waits in the log's queue until its fsync: it counts against the budget meanwhile.
    const queued = frame.length;
    budget.add(queued);
    const durable = this.#wal.appendFrame(lsn, frame).then(
      () => {
        budget.add(-queued);
        this.#advanceDurable(lsn);
        const room = budget.room();
        return room === undefined ? ackPacer.pass().then(() => ({ lsn })) : Promise.race([room, this.#brokenSignal]).then(() => ackPacer.pass()).then(() => ({ lsn }));
      },
      (err: unknown) => {
        budget.add(-queued);
        this.#break(err);
        throw this.#broken;
      },
    );
    if (this.#wal.bytesSinceCheckpoint >= this.#options.checkpointWalBytes) this.#scheduleCheckpoint();
    return durable;
  }

  // ---- Memory (DirtyOwner) ----------------------------------------------------------------------

  /** Estimated bytes of changes no checkpoint has captured yet. */
  get pendingBytes(): number {
    return this.#closed ? 0 : this.#trees.pendingBytes;
  }

  /** Estimated bytes kept only because open snapshots may read them. */
  get pinnedBytes(): number {
    return this.#closed ? 0 : this.#trees.pinnedBytes;
  }

  /** Called by the dirty budget: start a checkpoint. */
  relieve(): void {
    if (!this.#broken) this.#scheduleCheckpoint();
  }

  /** Called by the dirty budget: the oldest snapshot pinning checkpointed memory expires. */
  shed(): void {
    if (this.#closed) return;
    this.#trees.expireOldestPinning(
      `snapshot expired: it kept ${this.#trees.pinnedBytes} bytes of superseded data alive while the dirty budget (${this.#cache.dirty.limit} bytes) was full; retry the read`,
    );
  }

  // ---- Maintenance ----------------------------------------------------------------------------

  /** Writes all changes to the page file and deletes the WAL they came from. */
  checkpoint(): Promise<void> {
    const done = this.#exclusive(async () => {
      if (this.#broken) throw this.#broken;
      this.#lastCheckpointAt = Date.now();
      if (!this.#trees.hasChanges && this.#trees.header.checkpointLsn === this.#lsn) return;
      const lsn = this.#lsn;
      const rotated = this.#wal.rotate(lsn + 1);
      const written = this.#trees.checkpoint(lsn);
      await Promise.all([rotated, written]);
      await this.#wal.deleteSegmentsThrough(lsn);
      failpoint('checkpoint:after-wal-delete');
      if (this.#trees.newGarbageRatio >= this.#options.compactGarbageRatio && this.#trees.fileBytes >= this.#options.compactMinBytes) {
        this.#startCompaction();
      }
    });
    if (this.#checkpointListeners.size === 0) return done;
    return done.then(() => {
      if (this.#closing !== undefined) return;
      for (const listener of this.#checkpointListeners) listener();
    });
  }

  // ---- Derived structures ---------------------------------------------------------------------

  /**
   * Calls `listener` after every checkpoint (not while the store closes): derived structures
   * (the vector index) snapshot themselves then. Returns a function that removes it.
   */
  onCheckpoint(listener: () => void): () => void {
    this.#checkpointListeners.add(listener);
    return () => this.#checkpointListeners.delete(listener);
  }

  /**
   * Calls `listener` with every batch as it is applied, in lsn order, before it is durable (see
   * whenDurable): for copies kept elsewhere (the MongoDB mirror). It must not keep `ops`' buffers,
   * which the caller may reuse; what it throws is ignored.
   */
  onWrite(listener: (lsn: number, ops: readonly BatchOp[]) => void): () => void {
    this.#writeListeners.add(listener);
    return () => this.#writeListeners.delete(listener);
  }

  /** Awaits `listener` when close() begins, while the store still takes writes. */
  onClose(listener: () => Promise<void>): () => void {
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  /** Starts replacing this tenant's derived file `name` with a payload written chunk by chunk. */
  openDerived(name: string): Promise<DerivedWriter> {
    this.#assertOpen();
    return openDerivedWriter(this.dir, name);
  }

  /** This tenant's derived file `name`, or why there is no usable one. */
  readDerived(name: string): Promise<{ payload: Buffer } | { missing: string }> {
    this.#assertOpen();
    return readDerivedFile(this.dir, name);
  }

  /** Rewrites the page file without garbage now, whatever the ratio (after a checkpoint). */
  async compact(): Promise<{ beforeBytes: number; afterBytes: number }> {
    // One compaction at a time: one started by a checkpoint finishes first.
    while (this.#compaction !== undefined) await this.#compaction.done;
    return this.#exclusive(async () => {
      if (this.#broken) throw this.#broken;
      return this.#trees.compact();
    });
  }

  /**
   * Compacts alongside writes and checkpoints: the copy runs outside the maintenance queue (a
   * compaction of a large file takes seconds, and checkpoints held off that long left writers
   * waiting for the dirty budget), only the finish (copying what checkpoints wrote meanwhile,
   * then the swap) is exclusive. A close cancels the copy.
   */
  #startCompaction(): void {
    if (this.#compaction !== undefined || this.#closing !== undefined || this.#broken) return;
    const signal = { cancelled: false };
    const run = async (): Promise<void> => {
      const draft = await this.#trees.compactCopy(signal);
      // Once over what the checkpoints of the copy wrote: more rounds did not converge at 1M
      // documents (each took seconds, and the checkpoints meanwhile rewrote as many index
      // pages again), and every page they copy that a later checkpoint supersedes is garbage in
      // the new file.
      await this.#trees.compactCatchUp(draft);
      await this.#exclusive(async () => {
        if (signal.cancelled || this.#broken || this.#closing !== undefined) {
          this.#trees.compactAbandon(draft);
          return;
        }
        await this.#trees.compactFinish(draft);
      });
    };
    const done = run()
      .catch((err: unknown) => {
        // A failed copy fails the store as a failed checkpoint does (the finish's errors are
        // recorded by #exclusive already); a cancelled one was asked for.
        if (!signal.cancelled) this.#break(err);
      })
      .finally(() => {
        this.#compaction = undefined;
      });
    this.#compaction = { signal, done };
  }

  /**
   * Starts merging the deltas of buffered trees that are due (TreeSet.mergeDue) unless a merge
   * runs: a chunk per event-loop turn, each waiting while the dirty budget is full (a merge
   * dirties the main tree's leaves, as writes do), until none is due or the store closes.
   */
  #mergeDeltas(): void {
    if (this.#merging !== undefined || this.#trees.mergeDue.size === 0 || this.#closing !== undefined || this.#closed || this.#broken) return;
    this.#merging = this.#runMerges()
      .catch((err: unknown) => this.#break(err))
      .finally(() => {
        this.#merging = undefined;
      });
  }

  async #runMerges(): Promise<void> {
    const budget = this.#cache.dirty;
    const stopped = (): boolean => this.#closing !== undefined || this.#closed || this.#broken !== undefined;
    for (;;) {
      const name = this.#trees.mergeDue.values().next().value;
      if (name === undefined) return;
      let after: Buffer | undefined;
      do {
        await nextTurn();
        for (let room = budget.room(); room !== undefined && !stopped(); room = budget.room()) {
          await Promise.race([room, this.#brokenSignal, new Promise<void>((resolve) => (this.#wakeMerge = resolve))]);
          this.#wakeMerge = undefined;
        }
        if (stopped()) return;
        // Writers that outpace the merge (the delta past twice its threshold) get larger chunks.
        after = this.#trees.mergeChunk(name, after, this.#trees.mergeBacklog(name) > 2 ? 4 * MERGE_CHUNK : MERGE_CHUNK);
        this.#changes++;
      } while (after !== undefined);
    }
  }

  #exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#maintenance.then(task);
    this.#maintenance = run.then(
      () => undefined,
      (err: unknown) => this.#break(err),
    );
    return run;
  }

  #scheduleCheckpoint(): void {
    if (this.#checkpointQueued || this.#closed) return;
    this.#checkpointQueued = true;
    void this.checkpoint()
      .catch(() => undefined) // recorded by #exclusive; the next write reports it
      .finally(() => {
        this.#checkpointQueued = false;
        // Writers may be waiting for room that changes made during this checkpoint still
        // take: the next checkpoint starts at once.
        if (this.#cache.dirty.full && this.#trees.pendingBytes > 0 && !this.#closed && !this.#broken) this.#scheduleCheckpoint();
      });
  }

  #tick(): void {
    this.#checkpointIfDue();
    const maxAge = this.#options.snapshotMaxAgeMs;
    if (maxAge > 0 && !this.#closed && this.#trees.openSnapshots > 0) {
      this.#trees.expireOlderThan(Date.now() - maxAge, `snapshot expired: open for more than ${maxAge} ms (the store's snapshot age limit); retry the read`);
    }
  }

  #checkpointIfDue(): void {
    if (this.#closed || this.#broken || this.#options.checkpointIntervalMs <= 0) return;
    if (Date.now() - this.#lastCheckpointAt < this.#options.checkpointIntervalMs) return;
    if (this.#trees.hasChanges || this.#trees.header.checkpointLsn !== this.#lsn) this.#scheduleCheckpoint();
  }

  #break(err: unknown): void {
    if (this.#broken) return;
    const reason = err instanceof Error ? err.message : String(err);
    this.#broken = err instanceof TetraError && err.code === 'CORRUPTION'
      ? err
      : new TetraError('UNAVAILABLE', `tenant store failed and must be reopened: ${reason}`, undefined, { cause: err });
    this.#signalBroken(this.#broken);
    for (const w of this.#durableWaiters.splice(0)) w.reject(this.#broken);
  }

  #assertOpen(): void {
    if (this.#closed) fail('UNAVAILABLE', 'tenant store is closed');
    if (this.#broken) throw this.#broken;
  }

  /** Sizes and positions, for health, quotas and benchmarks. */
  stats(): {
    lsn: number;
    durableLsn: number;
    checkpointLsn: number;
    pageFileBytes: number;
    walBytes: number;
    storageBytes: number;
    garbageRatio: number;
    trees: number;
    pendingBytes: number;
    pinnedBytes: number;
    openSnapshots: number;
    /** A compaction a checkpoint started is still running. */
    compacting: boolean;
    /** Entries buffered trees' deltas hold, not yet merged (engine/storage/buffered-tree.ts). */
    deltaEntries: number;
    /** Delta entries merged into their trees since open. */
    mergedEntries: number;
  } {
    const pageFileBytes = this.#trees.fileBytes;
    const walBytes = this.#wal.totalBytes;
    return {
      pendingBytes: this.#trees.pendingBytes,
      pinnedBytes: this.#trees.pinnedBytes,
      openSnapshots: this.#trees.openSnapshots,
      compacting: this.#compaction !== undefined,
      deltaEntries: this.#trees.deltaEntries,
      mergedEntries: this.#trees.mergedEntries,
      lsn: this.#lsn,
      durableLsn: this.#durableLsn,
      checkpointLsn: this.#trees.header.checkpointLsn,
      pageFileBytes,
      walBytes,
      storageBytes: pageFileBytes + walBytes,
      garbageRatio: this.#trees.garbageRatio,
      trees: this.#trees.names().length,
    };
  }

  /** Bytes this tenant occupies on disk (page file + WAL), cheap enough for every write. */
  get storageBytes(): number {
    return this.#trees.fileBytes + this.#wal.totalBytes;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** True once a write, fsync or checkpoint failed: the store refuses work until reopened. */
  get failed(): boolean {
    return this.#broken !== undefined;
  }

  /** Stops taking writes, waits for in-flight ones, checkpoints and closes the files. */
  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closing ??= this.#close();
    this.#wakeMerge?.();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    for (const listener of [...this.#closeListeners]) {
      if (this.#broken) break;
      await listener().catch(() => undefined); // a derived snapshot is an optimisation only
    }
    await this.#wal.drain();
    if (this.#compaction !== undefined) {
      this.#compaction.signal.cancelled = true;
      await this.#compaction.done;
    }
    let checkpointError: unknown;
    if (!this.#broken) await this.checkpoint().catch((err: unknown) => (checkpointError = err));
    await this.#maintenance;
    this.#closed = true;
    await this.#wal.close();
    this.#cache.dirty.unregister(this);
    this.#trees.close();
    // Everything applied was drained to the log above (or the store had failed).
    for (const w of this.#durableWaiters.splice(0)) (this.#broken ? w.reject(this.#broken) : w.resolve());
    if (checkpointError !== undefined) throw checkpointError;
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function validateOps(ops: readonly BatchOp[]): void {
  if (!Array.isArray(ops)) fail('VALIDATION_FAILED', 'ops must be an array');
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i]!;
    // A string of n UTF-16 units is at most 3n bytes of UTF-8: most names need no count.
    if (typeof o.tree !== 'string' || o.tree.length === 0 || (o.tree.length * 3 > MAX_TREE_NAME_BYTES && Buffer.byteLength(o.tree) > MAX_TREE_NAME_BYTES)) {
      fail('VALIDATION_FAILED', `ops[${i}].tree must be a name of 1 to ${MAX_TREE_NAME_BYTES} bytes`);
    }
    if (o.op === 'dropTree') continue;
    if (o.op !== 'put' && o.op !== 'delete') fail('VALIDATION_FAILED', `ops[${i}].op must be put, delete or dropTree`);
    if (!(o.key instanceof Uint8Array) || o.key.length > MAX_KEY_BYTES) {
      fail('VALIDATION_FAILED', `ops[${i}].key must be at most ${MAX_KEY_BYTES} bytes`);
    }
    if (o.op === 'put' && (!(o.value instanceof Uint8Array) || o.value.length > MAX_VALUE_BYTES)) {
      fail('VALIDATION_FAILED', `ops[${i}].value must be at most ${MAX_VALUE_BYTES} bytes`);
    }
  }
}

/** Applies a logged record's ops (recovery). */
function applyOps(trees: TreeSet, ops: WalRecord['ops']): void {
  for (const o of ops) {
    switch (o.op) {
      case OP.PUT:
        trees.put(o.tree, o.key!, o.value!);
        break;
      case OP.DELETE:
        trees.delete(o.tree, o.key!);
        break;
      case OP.DROP_TREE:
        trees.drop(o.tree);
        break;
      default:
        fail('CORRUPTION', `unknown operation ${o.op} in WAL record`);
    }
  }
}

/** Applies a validated batch: what applyOps does with its record. */
function applyBatch(trees: TreeSet, ops: readonly BatchOp[]): void {
  for (const o of ops) {
    if (o.op === 'put') trees.put(o.tree, o.key, o.value);
    else if (o.op === 'delete') trees.delete(o.tree, o.key);
    else trees.drop(o.tree);
  }
}
