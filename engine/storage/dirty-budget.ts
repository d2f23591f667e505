/**
 * The process-wide bound on memory that is not clean cache: dirty B+tree nodes not yet captured
 * by a checkpoint, nodes a running checkpoint is writing, nodes kept for open snapshots after
 * their checkpoint, and WAL records waiting for their fsync. Every tenant store sharing a
 * PageCache shares its budget, so memory is bounded by configuration however many are open.
 *
 * Past half the limit the owner with the most pending changes is asked to checkpoint; at the
 * limit writes are acknowledged only once a checkpoint has made room again (backpressure); past
 * twice the limit (writers that never wait for their acknowledgements) writes are refused.
 */
export interface DirtyOwner {
  /** Changes not yet captured by a checkpoint, in estimated bytes. */
  readonly pendingBytes: number;
  /** Bytes kept only because open snapshots may still read them. */
  readonly pinnedBytes: number;
  /** Starts a checkpoint unless one is running or queued. */
  relieve(): void;
  /** Expires the oldest snapshot that pins memory. */
  shed(): void;
}

/** A checkpoint is requested once this share of the limit is in use. */
const CHECKPOINT_AT = 0.5;
/** Writes are refused (UNAVAILABLE) past this multiple of the limit. */
const REFUSE_AT = 2;

export class DirtyBudget {
  readonly limit: number;
  #bytes = 0;
  readonly #owners = new Set<DirtyOwner>();
  #waiters: Array<() => void> = [];
  #checkQueued = false;

  constructor(limit: number) {
    this.limit = Math.max(1, limit);
  }

  /** Estimated bytes in use now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** True at or past the limit: acknowledgements wait for room(). */
  get full(): boolean {
    return this.#bytes >= this.limit;
  }

  /** True past twice the limit: new writes are refused until checkpoints catch up. */
  get exhausted(): boolean {
    return this.#bytes >= this.limit * REFUSE_AT;
  }

  register(owner: DirtyOwner): void {
    this.#owners.add(owner);
  }

  unregister(owner: DirtyOwner): void {
    this.#owners.delete(owner);
  }

  /** Records a change of `delta` estimated bytes (negative when memory was released). */
  add(delta: number): void {
    this.#bytes += delta;
    if (delta > 0) {
      if (this.#bytes >= this.limit * CHECKPOINT_AT && !this.#checkQueued) {
        this.#checkQueued = true;
        setImmediate(() => this.#check());
      }
    } else if (this.#bytes < this.limit && this.#waiters.length > 0) {
      for (const wake of this.#waiters.splice(0)) wake();
    }
  }

  /** Undefined while below the limit, else a promise that resolves once usage is below it. */
  room(): Promise<void> | undefined {
    if (this.#bytes < this.limit) return undefined;
    if (!this.#checkQueued) {
      this.#checkQueued = true;
      setImmediate(() => this.#check());
    }
    return new Promise<void>((resolve) => this.#waiters.push(resolve));
  }

  /** Asks the owners holding the most to make room (a checkpoint, or expiring a snapshot). */
  #check(): void {
    this.#checkQueued = false;
    if (this.#bytes < this.limit * CHECKPOINT_AT) return;
    let pending: DirtyOwner | undefined;
    let pinned: DirtyOwner | undefined;
    for (const owner of this.#owners) {
      if (owner.pendingBytes > 0) {
        // Every owner holding a fair share checkpoints, the largest one always.
        if (owner.pendingBytes >= this.limit / 8) owner.relieve();
        if (pending === undefined || owner.pendingBytes > pending.pendingBytes) pending = owner;
      }
      if (owner.pinnedBytes > 0 && (pinned === undefined || owner.pinnedBytes > pinned.pinnedBytes)) pinned = owner;
    }
    pending?.relieve();
    // Snapshots give way only when they are what keeps usage at the limit.
    if (this.#bytes >= this.limit && pinned !== undefined && pinned.pinnedBytes >= this.limit * (1 - CHECKPOINT_AT)) pinned.shed();
    if (this.#bytes >= this.limit && this.#waiters.length > 0 && !this.#checkQueued) {
      // Still full: look again soon (a checkpoint finishing calls add() with a negative delta).
      this.#checkQueued = true;
      setTimeout(() => this.#check(), 10).unref();
    }
  }
}
