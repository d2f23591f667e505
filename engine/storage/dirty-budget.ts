/**
 * The process-wide bound on memory that is not clean cache: dirty B+tree nodes not yet captured
 * by a checkpoint, nodes a running checkpoint is writing, nodes kept for open snapshots after
 * their checkpoint, and WAL records waiting for their fsync. Every tenant store sharing a
 * PageCache shares its budget, so memory is bounded by configuration however many are open.
 *
 * Past half the limit the owner with the most pending changes is asked to checkpoint; at the
 * limit writes are acknowledged only once a checkpoint has made room again (backpressure); past
 * twice the configured limit (writers that never wait for their acknowledgements) writes are
 * refused. The memory governor may lower the limit in force for a while (setLimit).
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
/** Writes are refused (UNAVAILABLE) past this multiple of the configured limit. */
const REFUSE_AT = 2;
/** Past the checkpoint threshold, owners are asked again each time usage grows by this share of the limit. */
const RECHECK_STEP = 1 / 32;

export class DirtyBudget {
  /** The configured limit (TETRA_DIRTY_BYTES). */
  readonly configured: number;
  /** The limit in force: `configured`, or less while the memory governor has lowered it. */
  #limit: number;
  #bytes = 0;
  readonly #owners = new Set<DirtyOwner>();
  #waiters: Array<() => void> = [];
  /** Usage at which add() next asks the owners to make room. */
  #nextCheckAt: number;
  #retryQueued = false;

  constructor(limit: number) {
    this.configured = Math.max(1, limit);
    this.#limit = this.configured;
    this.#nextCheckAt = this.#limit * CHECKPOINT_AT;
  }

  /** The limit in force: checkpoints start at half of it, acknowledgements wait at it. */
  get limit(): number {
    return this.#limit;
  }

  /**
   * Sets the limit in force (clamped to 1..configured). Lowering it starts checkpoints at once
   * when usage passes the new threshold; raising it wakes writers waiting for room. Refusal
   * (`exhausted`) stays at twice the configured limit: it guards against clients that never
   * wait, which a temporarily lower limit does not change.
   */
  setLimit(bytes: number): void {
    this.#limit = Math.max(1, Math.min(this.configured, Math.floor(bytes)));
    this.#nextCheckAt = Math.max(this.#limit * CHECKPOINT_AT, Math.min(this.#nextCheckAt, this.#bytes + this.#limit * RECHECK_STEP));
    if (this.#bytes >= this.#limit * CHECKPOINT_AT) this.#check();
    if (this.#bytes < this.#limit && this.#waiters.length > 0) for (const wake of this.#waiters.splice(0)) wake();
  }

  /** Estimated bytes in use now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** True at or past the limit: acknowledgements wait for room(). */
  get full(): boolean {
    return this.#bytes >= this.#limit;
  }

  /** True past twice the limit: new writes are refused until checkpoints catch up. */
  get exhausted(): boolean {
    return this.#bytes >= this.configured * REFUSE_AT;
  }

  register(owner: DirtyOwner): void {
    this.#owners.add(owner);
  }

  unregister(owner: DirtyOwner): void {
    this.#owners.delete(owner);
  }

  /**
   * Records a change of `delta` estimated bytes (negative when memory was released). Crossing
   * the checkpoint threshold asks the owners to make room at once, synchronously: a writer
   * whose acknowledgements resolve without returning to the event loop (fsync off, or inline
   * fsyncs) must still trigger checkpoints.
   */
  add(delta: number): void {
    this.#bytes += delta;
    if (delta > 0) {
      if (this.#bytes >= this.#nextCheckAt) this.#check();
    } else {
      if (this.#bytes < this.#nextCheckAt - this.#limit * RECHECK_STEP) this.#nextCheckAt = Math.max(this.#limit * CHECKPOINT_AT, this.#bytes + this.#limit * RECHECK_STEP);
      if (this.#bytes < this.#limit && this.#waiters.length > 0) for (const wake of this.#waiters.splice(0)) wake();
    }
  }

  /** Undefined while below the limit, else a promise that resolves once usage is below it. */
  room(): Promise<void> | undefined {
    if (this.#bytes < this.#limit) return undefined;
    const room = new Promise<void>((resolve) => this.#waiters.push(resolve));
    // With a waiter registered, the check keeps looking until something makes room.
    this.#check();
    return room;
  }

  /** Asks the owners holding the most to make room (a checkpoint, or expiring a snapshot). */
  #check(): void {
    this.#nextCheckAt = Math.max(this.#limit * CHECKPOINT_AT, this.#bytes + this.#limit * RECHECK_STEP);
    if (this.#bytes < this.#limit * CHECKPOINT_AT) return;
    let pending: DirtyOwner | undefined;
    let pinned: DirtyOwner | undefined;
    for (const owner of this.#owners) {
      if (owner.pendingBytes > 0) {
        // Every owner holding a fair share checkpoints, the largest one always.
        if (owner.pendingBytes >= this.#limit / 8) owner.relieve();
        if (pending === undefined || owner.pendingBytes > pending.pendingBytes) pending = owner;
      }
      if (owner.pinnedBytes > 0 && (pinned === undefined || owner.pinnedBytes > pinned.pinnedBytes)) pinned = owner;
    }
    pending?.relieve();
    // Snapshots give way only when they are what keeps usage at the limit.
    if (this.#bytes >= this.#limit && pinned !== undefined && pinned.pinnedBytes >= this.#limit * (1 - CHECKPOINT_AT)) pinned.shed();
    if (this.#bytes >= this.#limit && this.#waiters.length > 0 && !this.#retryQueued) {
      // Still full with writers waiting: look again soon, in case what pins memory changed.
      this.#retryQueued = true;
      // Not unref'd: writers are waiting on it, which is work the process still has to do.
      setTimeout(() => {
        this.#retryQueued = false;
        if (this.#waiters.length > 0) this.#check();
      }, 10);
    }
  }
}
