import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import { fail, TetraError } from '../errors.js';
import {
  DATA_FILE,
  FSYNC_MODES,
  initChecksum,
  MAX_KEY_BYTES,
  MAX_TREE_NAME_BYTES,
  MAX_VALUE_BYTES,
  OP,
  PageCache,
  prefixUpperBound,
  recoverWal,
  TreeSet,
  WalWriter,
  failpoint,
  type Entry,
  type FsyncMode,
  type ScanRange,
  type TreeNode,
} from '../storage/index.js';

/** One operation of an atomic batch. Keys and values are owned by the store once passed in. */
export type BatchOp =
  | { op: 'put'; tree: string; key: Uint8Array; value: Uint8Array }
  | { op: 'delete'; tree: string; key: Uint8Array }
  | { op: 'dropTree'; tree: string };

/** A scan range, optionally restricted to keys that start with `prefix`. */
export interface StoreScanRange extends ScanRange {
  prefix?: Uint8Array;
}

export interface TenantStoreOptions {
  /** Shared page cache (one per process bounds memory across tenants). */
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
}

export const TENANT_STORE_DEFAULTS = {
  fsync: 'batch' as FsyncMode,
  walSegmentBytes: 64 * 1024 * 1024,
  checkpointWalBytes: 32 * 1024 * 1024,
  checkpointIntervalMs: 60_000,
  compactGarbageRatio: 0.5,
  compactMinBytes: 4 * 1024 * 1024,
};

interface WalRecord {
  lsn: number;
  ops: Array<{ op: number; tree: string; key?: Buffer; value?: Buffer }>;
}

const packr = new Packr({ useRecords: false });

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * One tenant's database: named B+trees in a page file plus a write-ahead log, in one directory.
 * Reads are synchronous. write() applies a batch atomically and at once (later reads see it) and
 * resolves when the batch is durable in the configured fsync mode.
 */
export class TenantStore {
  readonly dir: string;
  readonly #options: Required<Omit<TenantStoreOptions, 'cache'>>;
  readonly #trees: TreeSet;
  readonly #wal: WalWriter;
  #lsn: number;
  #durableLsn: number;
  #closed = false;
  #broken: TetraError | undefined;
  #maintenance: Promise<void> = Promise.resolve();
  #checkpointQueued = false;
  #timer: NodeJS.Timeout | undefined;
  #lastCheckpointAt = Date.now();
  readonly recovered: { records: number; bytes: number };

  private constructor(dir: string, options: Required<Omit<TenantStoreOptions, 'cache'>>, trees: TreeSet, wal: WalWriter, lsn: number, recovered: { records: number; bytes: number }) {
    this.dir = dir;
    this.#options = options;
    this.#trees = trees;
    this.#wal = wal;
    this.#lsn = lsn;
    this.#durableLsn = lsn;
    this.recovered = recovered;
    if (options.checkpointIntervalMs > 0) {
      this.#timer = setInterval(() => this.#checkpointIfDue(), Math.max(50, Math.min(options.checkpointIntervalMs, 5_000)));
      this.#timer.unref();
    }
  }

  /**
   * Opens (creating if needed) the store in `dir`: the page file at its last valid header, then
   * every WAL record after it replayed.
   * @throws CORRUPTION naming the file and offset when the log or page file is damaged
   * @throws VALIDATION_FAILED for bad options
   */
  static async open(dir: string, options: TenantStoreOptions): Promise<TenantStore> {
    const opts = { ...TENANT_STORE_DEFAULTS, ...stripUndefined(options) };
    delete (opts as Partial<TenantStoreOptions>).cache;
    if (!FSYNC_MODES.includes(opts.fsync)) fail('VALIDATION_FAILED', `fsync must be one of ${FSYNC_MODES.join(', ')}`);
    await initChecksum();
    mkdirSync(dir, { recursive: true });
    const trees = TreeSet.open(join(dir, DATA_FILE), options.cache);
    try {
      let decoded: WalRecord | undefined;
      const recovery = recoverWal(
        dir,
        trees.header.checkpointLsn,
        () => applyOps(trees, decoded!.ops),
        (payload) => {
          decoded = packr.unpack(payload) as WalRecord;
          if (typeof decoded?.lsn !== 'number' || !Array.isArray(decoded.ops)) throw new Error('not a WAL record');
          return decoded.lsn;
        },
      );
      const wal = WalWriter.open(dir, { fsync: opts.fsync, segmentBytes: opts.walSegmentBytes }, recovery.segments, recovery.tail, recovery.lastLsn + 1);
      const store = new TenantStore(dir, opts, trees, wal, recovery.lastLsn, { records: recovery.replayedRecords, bytes: recovery.replayedBytes });
      // Fold what was replayed into the page file so the next open is instant and the WAL
      // buffers the replayed keys point into can be freed.
      if (recovery.replayedRecords > 0) await store.checkpoint();
      return store;
    } catch (err) {
      trees.close();
      throw err;
    }
  }

  // ---- Reads ----------------------------------------------------------------------------------

  /** The value under `key` in `tree`, or undefined. */
  get(tree: string, key: Uint8Array): Buffer | undefined {
    this.#assertOpen();
    return this.#trees.tree(tree)?.get(key);
  }

  has(tree: string, key: Uint8Array): boolean {
    this.#assertOpen();
    return this.#trees.tree(tree)?.has(key) ?? false;
  }

  /** Entries of `tree` within `range`, in key order (or reversed). */
  *scan(tree: string, range: StoreScanRange = {}): Generator<Entry> {
    this.#assertOpen();
    const t = this.#trees.tree(tree);
    if (t === undefined) return;
    yield* t.scan(withPrefix(range));
  }

  /** Keys of `tree` within `range` (values are not read). */
  *keys(tree: string, range: StoreScanRange = {}): Generator<Buffer> {
    this.#assertOpen();
    const t = this.#trees.tree(tree);
    if (t === undefined) return;
    yield* t.keys(withPrefix(range));
  }

  /** Number of keys in `tree` within `range`; O(1) without bounds. */
  count(tree: string, range: StoreScanRange = {}): number {
    this.#assertOpen();
    return this.#trees.tree(tree)?.countRange(withPrefix(range)) ?? 0;
  }

  /** Names of the trees that hold keys. */
  treeNames(): string[] {
    this.#assertOpen();
    return this.#trees.names();
  }

  // ---- Writes ---------------------------------------------------------------------------------

  /**
   * Applies `ops` as one atomic batch: validated first (a bad op changes nothing), applied to the
   * trees synchronously, then logged. Resolves with the batch's lsn once durable.
   * @throws VALIDATION_FAILED for a bad tree name, key or value size (nothing applied)
   * @throws UNAVAILABLE when the store is closed or failed
   */
  write(ops: readonly BatchOp[]): Promise<{ lsn: number }> {
    try {
      this.#assertOpen();
      validateOps(ops);
    } catch (err) {
      return Promise.reject(err);
    }
    if (ops.length === 0) return Promise.resolve({ lsn: this.#lsn });
    const lsn = this.#lsn + 1;
    const record: WalRecord = {
      lsn,
      ops: ops.map((o) =>
        o.op === 'dropTree'
          ? { op: OP.DROP_TREE, tree: o.tree }
          : o.op === 'put'
            ? { op: OP.PUT, tree: o.tree, key: asBuffer(o.key), value: asBuffer(o.value) }
            : { op: OP.DELETE, tree: o.tree, key: asBuffer(o.key) },
      ),
    };
    const payload = packr.pack(record);
    try {
      applyOps(this.#trees, record.ops);
    } catch (err) {
      // Half-applied in memory: nothing is logged, and the store refuses work until reopened.
      this.#break(err);
      return Promise.reject(this.#broken);
    }
    this.#lsn = lsn;
    const durable = this.#wal.append(lsn, payload).then(
      () => {
        if (lsn > this.#durableLsn) this.#durableLsn = lsn;
        return { lsn };
      },
      (err: unknown) => {
        this.#break(err);
        throw this.#broken;
      },
    );
    if (this.#wal.bytesSinceCheckpoint >= this.#options.checkpointWalBytes) this.#scheduleCheckpoint();
    return durable;
  }

  // ---- Maintenance ----------------------------------------------------------------------------

  /** Writes all changes to the page file and deletes the WAL they came from. */
  checkpoint(): Promise<void> {
    return this.#exclusive(async () => {
      if (this.#broken) throw this.#broken;
      this.#lastCheckpointAt = Date.now();
      if (!this.#trees.hasChanges && this.#trees.header.checkpointLsn === this.#lsn) return;
      const lsn = this.#lsn;
      const rotated = this.#wal.rotate(lsn + 1);
      const written = this.#trees.checkpoint(lsn);
      await Promise.all([rotated, written]);
      this.#wal.deleteSegmentsThrough(lsn);
      failpoint('checkpoint:after-wal-delete');
      if (this.#trees.garbageRatio >= this.#options.compactGarbageRatio && this.#trees.fileBytes >= this.#options.compactMinBytes) {
        await this.#trees.compact();
      }
    });
  }

  /** Rewrites the page file without garbage now, whatever the ratio (after a checkpoint). */
  compact(): Promise<{ beforeBytes: number; afterBytes: number }> {
    return this.#exclusive(async () => {
      if (this.#broken) throw this.#broken;
      return this.#trees.compact();
    });
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
      });
  }

  #checkpointIfDue(): void {
    if (this.#closed || this.#broken) return;
    if (Date.now() - this.#lastCheckpointAt < this.#options.checkpointIntervalMs) return;
    if (this.#trees.hasChanges || this.#trees.header.checkpointLsn !== this.#lsn) this.#scheduleCheckpoint();
  }

  #break(err: unknown): void {
    if (this.#broken) return;
    const reason = err instanceof Error ? err.message : String(err);
    this.#broken = err instanceof TetraError && err.code === 'CORRUPTION'
      ? err
      : new TetraError('UNAVAILABLE', `tenant store failed and must be reopened: ${reason}`, undefined, { cause: err });
  }

  #assertOpen(): void {
    if (this.#closed) fail('UNAVAILABLE', 'tenant store is closed');
    if (this.#broken) throw this.#broken;
  }

  /** Sizes and positions, for health, quotas and benchmarks. */
  stats(): { lsn: number; durableLsn: number; checkpointLsn: number; pageFileBytes: number; walBytes: number; storageBytes: number; garbageRatio: number; trees: number } {
    const pageFileBytes = this.#trees.fileBytes;
    const walBytes = this.#wal.totalBytes;
    return {
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

  /** Stops taking writes, waits for in-flight ones, checkpoints and closes the files. */
  async close(): Promise<void> {
    if (this.#closed) return;
    if (this.#timer) clearInterval(this.#timer);
    await this.#wal.drain();
    let checkpointError: unknown;
    if (!this.#broken) await this.checkpoint().catch((err: unknown) => (checkpointError = err));
    await this.#maintenance;
    this.#closed = true;
    await this.#wal.close();
    this.#trees.close();
    if (checkpointError !== undefined) throw checkpointError;
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function withPrefix(range: StoreScanRange): ScanRange {
  if (range.prefix === undefined) return range;
  const { prefix, ...rest } = range;
  const upper = prefixUpperBound(prefix);
  const lower = rest.gt !== undefined || rest.gte !== undefined ? rest : { ...rest, gte: prefix };
  const bounded: ScanRange = { ...lower };
  if (upper !== undefined && rest.lt === undefined && rest.lte === undefined) bounded.lt = upper;
  // Explicit bounds narrower than the prefix still apply; wider ones are clipped to it.
  if (bounded.gt !== undefined && Buffer.compare(bounded.gt, prefix) < 0) {
    delete bounded.gt;
    bounded.gte = prefix;
  }
  if (bounded.gte !== undefined && Buffer.compare(bounded.gte, prefix) < 0) bounded.gte = prefix;
  if (upper !== undefined) {
    if (bounded.lt !== undefined && Buffer.compare(bounded.lt, upper) > 0) bounded.lt = upper;
    if (bounded.lte !== undefined && Buffer.compare(bounded.lte, upper) >= 0) {
      delete bounded.lte;
      bounded.lt = upper;
    }
  }
  return bounded;
}

function validateOps(ops: readonly BatchOp[]): void {
  if (!Array.isArray(ops)) fail('VALIDATION_FAILED', 'ops must be an array');
  for (let i = 0; i < ops.length; i++) {
    const o = ops[i]!;
    if (typeof o.tree !== 'string' || o.tree.length === 0 || Buffer.byteLength(o.tree) > MAX_TREE_NAME_BYTES) {
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

function applyOps(trees: TreeSet, ops: WalRecord['ops']): void {
  for (const o of ops) {
    switch (o.op) {
      case OP.PUT:
        trees.writable(o.tree).put(o.key!, o.value!);
        break;
      case OP.DELETE:
        if (trees.tree(o.tree)?.delete(o.key!)) trees.writable(o.tree);
        break;
      case OP.DROP_TREE:
        trees.drop(o.tree);
        break;
      default:
        fail('CORRUPTION', `unknown operation ${o.op} in WAL record`);
    }
  }
}
