import { ValueRun } from '../../storage/index.js';
import type { BatchOp, Snapshot, StoreScanRange, TenantStore } from '../../tenant/index.js';
import { sqlFail } from '../sql-types.js';

type Entry = [key: Buffer, value: Buffer];

/** What statements read through: a snapshot (read-only requests) or a transaction's view. */
export interface SqlReader {
  get(tree: string, key: Uint8Array): Buffer | undefined;
  scan(tree: string, range?: StoreScanRange): Generator<Entry>;
  /** Values only, in key order (full-table scans that need no keys). */
  values(tree: string, range?: StoreScanRange): IterableIterator<Buffer>;
  /** Values a leaf at a time (each run valid until the next step): full scans without a Buffer per row. */
  valueRuns(tree: string, range?: StoreScanRange): Iterator<ValueRun>;
  /** Keys in a tree (an estimate inside a transaction: pending changes are not counted). */
  count(tree: string): number;
}

/** A read-only request's view: one snapshot of the SQL trees for every statement. */
export class SnapshotReader implements SqlReader {
  readonly #snapshot: Snapshot;

  constructor(snapshot: Snapshot) {
    this.#snapshot = snapshot;
  }

  get(tree: string, key: Uint8Array): Buffer | undefined {
    return this.#snapshot.get(tree, key);
  }

  scan(tree: string, range: StoreScanRange = {}): Generator<Entry> {
    return this.#snapshot.scan(tree, range);
  }

  values(tree: string, range: StoreScanRange = {}): IterableIterator<Buffer> {
    return this.#snapshot.values(tree, range);
  }

  valueRuns(tree: string, range: StoreScanRange = {}): Iterator<ValueRun> {
    return this.#snapshot.valueRuns(tree, range);
  }

  count(tree: string): number {
    return this.#snapshot.count(tree);
  }
}

/**
 * A one-statement read's view: it reads the live store for as long as the statement runs without
 * giving up the event loop (no write can interleave with synchronous code, and each live scan
 * pins its own snapshot as it starts), and pins a snapshot of the store at the first pause, before
 * anything else runs. So a point query costs no snapshot, and a long one is still consistent.
 */
export class LiveReader implements SqlReader {
  readonly #store: TenantStore;
  #snapshot: Snapshot | undefined;

  constructor(store: TenantStore) {
    this.#store = store;
  }

  /** Call synchronously before yielding to the event loop. */
  pin(): void {
    this.#snapshot ??= this.#store.snapshot();
  }

  get(tree: string, key: Uint8Array): Buffer | undefined {
    return this.#snapshot === undefined ? this.#store.get(tree, key) : this.#snapshot.get(tree, key);
  }

  scan(tree: string, range: StoreScanRange = {}): Generator<Entry> {
    return this.#snapshot === undefined ? this.#store.scan(tree, range) : this.#snapshot.scan(tree, range);
  }

  values(tree: string, range: StoreScanRange = {}): IterableIterator<Buffer> {
    return this.#snapshot === undefined ? this.#store.values(tree, range) : this.#snapshot.values(tree, range);
  }

  valueRuns(tree: string, range: StoreScanRange = {}): Iterator<ValueRun> {
    return this.#snapshot === undefined ? this.#store.valueRuns(tree, range) : this.#snapshot.valueRuns(tree, range);
  }

  count(tree: string): number {
    return this.#snapshot === undefined ? this.#store.count(tree) : this.#snapshot.count(tree);
  }

  close(): void {
    this.#snapshot?.close();
  }
}

/** A pending change of one key: the new value, or null for a delete. */
interface Pending {
  key: Buffer;
  value: Buffer | null;
}

/** One tree's pending changes: by key (hex), with a sorted view built on demand for scans. */
class TreeOverlay {
  readonly byKey = new Map<string, Pending>();
  #sorted: Pending[] | undefined;
  dropped = false;

  set(key: Buffer, value: Buffer | null): void {
    this.byKey.set(key.toString('latin1'), { key, value });
    this.#sorted = undefined;
  }

  sorted(): Pending[] {
    this.#sorted ??= [...this.byKey.values()].sort((a, b) => Buffer.compare(a.key, b.key));
    return this.#sorted;
  }
}

/**
 * A write transaction's view: the live store (the tenant's SQL writer runs alone, so nothing else
 * changes the SQL trees meanwhile) overlaid with the transaction's own pending writes, which
 * become one atomic batch at commit. Savepoints (BEGIN ... ROLLBACK inside a request) copy the
 * overlay.
 */
export class TxnView implements SqlReader {
  readonly #store: TenantStore;
  #trees = new Map<string, TreeOverlay>();
  #ops = 0;

  readonly #maxBytes: number;
  #bytes = 0;

  /** `maxBytes`: pending changes a transaction may hold before it fails (54000); they all live in memory until commit. */
  constructor(store: TenantStore, maxBytes = Infinity) {
    this.#store = store;
    this.#maxBytes = maxBytes;
  }

  /** Bytes of pending changes (keys and values). */
  get pendingBytes(): number {
    return this.#bytes;
  }

  #count(bytes: number): void {
    this.#bytes += bytes;
    if (this.#bytes > this.#maxBytes) {
      sqlFail('54000', `the transaction changes more than ${this.#maxBytes} bytes (TETRA_SQL_TXN_BYTES); split it into smaller transactions`);
    }
  }

  get changes(): number {
    return this.#ops;
  }

  get(tree: string, key: Uint8Array): Buffer | undefined {
    const o = this.#trees.get(tree);
    if (o !== undefined) {
      const p = o.byKey.get(Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString('latin1'));
      if (p !== undefined) return p.value ?? undefined;
      if (o.dropped) return undefined;
    }
    return this.#store.get(tree, key);
  }

  *scan(tree: string, range: StoreScanRange = {}): Generator<Entry> {
    const o = this.#trees.get(tree);
    if (o === undefined) {
      yield* this.#store.scan(tree, range);
      return;
    }
    const reverse = range.reverse === true;
    const pending = o.sorted().filter((p) => inRange(p.key, range));
    if (reverse) pending.reverse();
    const base = o.dropped ? [][Symbol.iterator]() : this.#store.scan(tree, { ...range, limit: undefined });
    let limit = range.limit ?? Infinity;
    let b = base.next();
    let i = 0;
    while (limit > 0) {
      const p = pending[i];
      if (b.done === true && p === undefined) return;
      let c: number;
      if (b.done === true) c = 1;
      else if (p === undefined) c = -1;
      else c = Buffer.compare(b.value[0], p.key) * (reverse ? -1 : 1);
      if (c < 0) {
        yield b.value as Entry;
        b = base.next();
        limit--;
      } else {
        if (c === 0) b = base.next();
        i++;
        if (p!.value !== null) {
          yield [p!.key, p!.value];
          limit--;
        }
      }
    }
    base.return?.(undefined);
  }

  count(tree: string): number {
    return this.#store.count(tree);
  }

  valueRuns(tree: string, range: StoreScanRange = {}): Iterator<ValueRun> {
    if (!this.#trees.has(tree)) return this.#store.valueRuns(tree, range);
    // Pending changes to merge: runs of up to 256 merged values.
    return (function* (view: TxnView) {
      const run = new ValueRun();
      for (const [, value] of view.scan(tree, range)) {
        run.push(value, 0, value.length);
        if (run.count === 256) {
          yield run;
          run.count = 0;
        }
      }
      if (run.count > 0) yield run;
    })(this);
  }

  values(tree: string, range: StoreScanRange = {}): IterableIterator<Buffer> {
    if (!this.#trees.has(tree)) return this.#store.values(tree, range);
    return (function* (view: TxnView) {
      for (const [, value] of view.scan(tree, range)) yield value;
    })(this);
  }

  put(tree: string, key: Buffer, value: Buffer): void {
    this.#count(key.length + value.length + 64);
    this.#overlay(tree).set(key, value);
    this.#ops++;
  }

  delete(tree: string, key: Buffer): void {
    this.#count(key.length + 64);
    this.#overlay(tree).set(key, null);
    this.#ops++;
  }

  /** Drops a whole tree (DROP TABLE / DROP INDEX). */
  dropTree(tree: string): void {
    const o = new TreeOverlay();
    o.dropped = true;
    this.#trees.set(tree, o);
    this.#ops++;
  }

  #overlay(tree: string): TreeOverlay {
    let o = this.#trees.get(tree);
    if (o === undefined) {
      o = new TreeOverlay();
      this.#trees.set(tree, o);
    }
    return o;
  }

  /**
   * A read-only view of the transaction as it is now, which the writes that follow do not change:
   * what an INSERT, UPDATE or DELETE reads through (its subqueries, RETURNING, INSERT ... SELECT),
   * as PostgreSQL's statements read the snapshot taken when they start. Costs a copy of the
   * pending changes (nothing in a one-statement transaction).
   */
  statementView(): TxnView {
    const view = new TxnView(this.#store, this.#maxBytes);
    view.#trees = this.save();
    return view;
  }

  /** A copy of the pending state, to return to with restore() (a rolled-back block). */
  save(): Map<string, TreeOverlay> {
    const copy = new Map<string, TreeOverlay>();
    for (const [name, o] of this.#trees) {
      const c = new TreeOverlay();
      c.dropped = o.dropped;
      for (const [k, p] of o.byKey) c.byKey.set(k, p);
      copy.set(name, c);
    }
    return copy;
  }

  restore(saved: Map<string, TreeOverlay>): void {
    this.#trees = saved;
    this.#ops++;
  }

  /** The batch that commits the transaction: drops first, then every pending put and delete. */
  batch(): BatchOp[] {
    const ops: BatchOp[] = [];
    for (const [tree, o] of this.#trees) {
      if (o.dropped) ops.push({ op: 'dropTree', tree });
      // Each key appears once per tree, so the order within the batch does not matter: no sort.
      for (const p of o.byKey.values()) {
        if (p.value !== null) ops.push({ op: 'put', tree, key: p.key, value: p.value });
        else if (!o.dropped) ops.push({ op: 'delete', tree, key: p.key });
      }
    }
    return ops;
  }
}

function inRange(key: Buffer, r: StoreScanRange): boolean {
  if (r.prefix !== undefined && (key.length < r.prefix.length || Buffer.compare(key.subarray(0, r.prefix.length), r.prefix) !== 0)) return false;
  if (r.gt !== undefined && Buffer.compare(key, r.gt) <= 0) return false;
  if (r.gte !== undefined && Buffer.compare(key, r.gte) < 0) return false;
  if (r.lt !== undefined && Buffer.compare(key, r.lt) >= 0) return false;
  if (r.lte !== undefined && Buffer.compare(key, r.lte) > 0) return false;
  return true;
}
