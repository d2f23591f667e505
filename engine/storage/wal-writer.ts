import { close, closeSync, fdatasync, fdatasyncSync, fsync, fsyncSync, open, openSync, statSync, unlink, write } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { WAL_INLINE_FSYNC_MAX_MICROS, WAL_SEGMENT_HEADER_SIZE, WAL_SYNC_WRITE_MAX_BYTES, WAL_VERSION } from './format.js';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { fail } from '../errors.js';
import { failpoint } from './failpoint.js';
import { fsyncDir, fsyncDirAsync, writeFully } from './page-file.js';
import { allocFrame, encodeSegmentHeader, sealFrame, segmentName, type SegmentInfo } from './wal-segment.js';
import type { WalTail } from './wal-reader.js';

const writeAsync = promisify(write);
const openAsync = promisify(open);
const closeAsync = promisify(close);
const unlinkAsync = promisify(unlink);
/** Groups written and awaiting their fsync at once (see #flushLoop). */
const WAL_MAX_GROUPS_IN_FLIGHT = 2;
/** A queue at least this long is split into two groups when nothing is in flight. */
const WAL_SPLIT_GROUP_MIN = 8;
const fdatasyncAsync = promisify(fdatasync);
const fsyncAsync = promisify(fsync);

/**
 * When an append resolves. `batch`: after an fsync shared with every record that arrived while
 * the previous fsync was in flight (group commit). `always`: after an fsync of that record alone.
 * `off`: once the OS has the bytes (survives a process crash, not a power loss).
 */
export type FsyncMode = 'batch' | 'always' | 'off';

export const FSYNC_MODES: readonly FsyncMode[] = ['batch', 'always', 'off'];

interface Waiter {
  lsn: number;
  /** From allocFrame, sealed when its group forms; undefined marks a rotation to a new segment at lsn. */
  frame: Buffer | undefined;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface WalWriterOptions {
  fsync: FsyncMode;
  segmentBytes: number;
}

/**
 * Appends framed records to the current segment. Appends are ordered by call; each returns a
 * promise that resolves when the record is durable in the configured mode.
 */
export class WalWriter {
  readonly #dir: string;
  readonly #options: WalWriterOptions;
  #fd: number;
  #segment: SegmentInfo;
  #size: number;
  /**
   * Offset in the current segment up to which an fdatasync has completed: what the frames of the
   * next group declare as syncedThrough. Only the header in mode 'off', which never syncs.
   */
  #synced: number;
  #queue: Waiter[] = [];
  #flushing = false;
  #failed: unknown;
  #closed = false;
  /** Closed segments, oldest first (the current one excluded). */
  #older: SegmentInfo[];
  /** Log bytes written since the last checkpoint's rotation (size rotations do not reset it). */
  bytesSinceCheckpoint = 0;
  /** Bytes of the closed segments still on disk. */
  #olderBytes: number;
  #drained: Array<() => void> = [];
  #lastGroupSize = 0;
  /** Recent fsync duration (EWMA, µs); starts pessimistic so a slow disk never syncs inline. */
  #fsyncMicros = WAL_INLINE_FSYNC_MAX_MICROS;

  private constructor(dir: string, options: WalWriterOptions, fd: number, segment: SegmentInfo, size: number, synced: number, older: SegmentInfo[]) {
    this.#dir = dir;
    this.#options = options;
    this.#fd = fd;
    this.#segment = segment;
    this.#size = size;
    this.#synced = synced;
    this.#older = older;
    this.#olderBytes = older.reduce((sum, s) => sum + statSync(s.path).size, 0);
  }

  /**
   * Opens for appending after recovery: continues `tail` when its last record is nextLsn - 1 and
   * it has the current format, else starts a segment at nextLsn. (A checkpoint can become durable
   * before the log records it covers were written; the log then resumes after the checkpoint in a
   * new segment, never with a gap inside one. A segment holds frames of one version only.)
   * @throws UNAVAILABLE when the tail cannot be synced or a new segment cannot be created
   */
  static open(dir: string, options: WalWriterOptions, segments: SegmentInfo[], tail: WalTail | undefined, nextLsn: number): WalWriter {
    if (tail !== undefined && tail.lastLsn === nextLsn - 1 && tail.version === WAL_VERSION) {
      const fd = openSync(tail.path, 'r+');
      // What recovery read may have been only in the OS cache (the last process died before its
      // fdatasync); sync it so the frames appended next may declare it durable. A tail of just a
      // header (the usual state after a clean close) was synced when it was created.
      const synced = options.fsync === 'off' ? WAL_SEGMENT_HEADER_SIZE : tail.size;
      if (synced > WAL_SEGMENT_HEADER_SIZE) syncOrFail(fd, tail.path);
      const older = segments.filter((s) => s.path !== tail.path);
      return new WalWriter(dir, options, fd, { path: tail.path, firstLsn: tail.firstLsn }, tail.size, synced, older);
    }
    if (tail !== undefined && tail.size > WAL_SEGMENT_HEADER_SIZE) {
      // The tail becomes a closed segment, and a closed segment is wholly synced (recovery calls
      // any bad frame in one corruption), as after a rotation.
      const fd = openSync(tail.path, 'r+');
      syncOrFail(fd, tail.path);
      closeSync(fd);
    }
    const { fd, segment, size } = createSegment(dir, nextLsn);
    // An empty tail of an older version that starts at nextLsn has the new segment's name: it
    // was just replaced, so it is not an older segment (deleting that would delete the log).
    const older = segments.filter((s) => s.path !== segment.path);
    return new WalWriter(dir, options, fd, segment, size, size, older);
  }

  /** Appends one record; resolves when it is durable in the configured mode. */
  append(lsn: number, payload: Uint8Array): Promise<void> {
    return this.appendFrame(lsn, allocFrame(payload));
  }

  /**
   * Appends one record already laid out in its frame (as allocFrame lays it out: length and
   * payload in place, the rest sealed here); resolves when it is durable in the configured mode.
   */
  appendFrame(lsn: number, frame: Buffer): Promise<void> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    if (this.#closed) return Promise.reject(new Error('WAL is closed'));
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ lsn, frame, resolve, reject });
      if (!this.#flushing) void this.#flushLoop();
    });
  }

  /**
   * Starts a new segment at `nextLsn` once every record queued before this call is written.
   * Resolves when the new segment exists durably.
   */
  rotate(nextLsn: number): Promise<void> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ lsn: nextLsn, frame: undefined, resolve, reject });
      if (!this.#flushing) void this.#flushLoop();
    });
  }

  /** Deletes closed segments all of whose records have lsn <= `lsn`. */
  async deleteSegmentsThrough(lsn: number): Promise<number> {
    let deleted = 0;
    // Off the event loop: unlinking a large file and fsyncing the directory wait for the disk.
    while (this.#older.length > 0) {
      const next = this.#older[1] ?? this.#segment;
      if (next.firstLsn - 1 > lsn) break;
      const oldest = this.#older.shift()!;
      this.#olderBytes -= statSync(oldest.path).size;
      await unlinkAsync(oldest.path);
      deleted++;
    }
    if (deleted > 0) await fsyncDirAsync(this.#dir);
    return deleted;
  }

  /** Bytes of every segment on disk. */
  get totalBytes(): number {
    return this.#olderBytes + this.#size;
  }

  async #flushLoop(): Promise<void> {
    this.#flushing = true;
    // Groups written and being fsynced, oldest first. Two may be in flight: while one group's
    // fsync runs, the writers released before it prepare and write the next, so the CPU and
    // the disk work at the same time. An fsync covers everything written before it started, so
    // acknowledging in order is always safe.
    const inflight: Array<{ group: Waiter[]; synced: Promise<void> }> = [];
    let group: Waiter[] = [];
    try {
      for (;;) {
        while (this.#queue.length > 0 && inflight.length < WAL_MAX_GROUPS_IN_FLIGHT) {
          const head = this.#queue[0]!;
          const rotate = head.frame === undefined || this.#size >= this.#options.segmentBytes;
          // A rotation closes the segment: everything before it must be durable first.
          if (rotate && inflight.length > 0) break;
          if (head.frame === undefined) {
            group = this.#queue.splice(0, 1);
            await this.#rotateNow(head.lsn);
            this.bytesSinceCheckpoint = 0;
            head.resolve();
            group = [];
            continue;
          }
          if (rotate) await this.#rotateNow(head.lsn);
          // Group: everything queued up to the next rotation marker ('always': one record).
          let n = 1;
          if (this.#options.fsync !== 'always') {
            while (n < this.#queue.length && this.#queue[n]!.frame !== undefined) n++;
            // With nothing in flight, split a crowd into two groups: the first half's writers
            // are released (and prepare their next records) while the second half's fsync runs,
            // so the main thread and the disk stay busy at the same time.
            if (inflight.length === 0 && n >= WAL_SPLIT_GROUP_MIN) n = Math.ceil(n / 2);
          }
          group = this.#queue.splice(0, n);
          // Stamped here rather than in append(): the later a frame is sealed, the more of the
          // log it can vouch for as synced, which is what lets recovery tell damaged synced data
          // from a group that never finished its fdatasync.
          const synced = this.#synced;
          for (const waiter of group) sealFrame(waiter.frame!, synced);
          const bytes = group.length === 1 ? group[0]!.frame! : Buffer.concat(group.map((w) => w.frame!));
          if (bytes.length <= WAL_SYNC_WRITE_MAX_BYTES) {
            // A small write only copies into the OS page cache: doing it inline saves a
            // thread-pool round trip on every commit.
            writeFully(this.#fd, bytes, this.#size);
          } else {
            for (let done = 0; done < bytes.length; ) {
              done += (await writeAsync(this.#fd, bytes, done, bytes.length - done, this.#size + done)).bytesWritten;
            }
          }
          this.#size += bytes.length;
          this.bytesSinceCheckpoint += bytes.length;
          failpoint('wal:after-write');
          if (this.#options.fsync === 'off') {
            for (const waiter of group) waiter.resolve();
          } else {
            const synced = this.#sync(group.length, inflight.length === 0);
            synced.catch(() => undefined); // observed below, in order
            inflight.push({ group, synced });
          }
          group = [];
        }
        const oldest = inflight.shift();
        if (oldest === undefined) {
          if (this.#queue.length === 0) break;
          continue;
        }
        group = oldest.group;
        await oldest.synced;
        for (const waiter of group) waiter.resolve();
        group = [];
        // No yield here: with two groups in flight, starting the next group at once from what
        // is queued keeps the disk busy while the writers just released do their CPU work
        // (measured: ~10% more commits/s at 64 writers than waiting a turn to fill the group).
      }
    } catch (err) {
      // A failed write or fsync leaves the log's state unknown: fail this and every later append.
      this.#failed ??= err;
      const pending = [...group, ...inflight.flatMap((g) => g.group), ...this.#queue.splice(0)];
      for (const waiter of pending) waiter.reject(err);
    } finally {
      this.#flushing = false;
      for (const resolve of this.#drained.splice(0)) resolve();
    }
  }

  /**
   * fdatasync, inline when a lone writer is committing on a fast disk (a thread-pool round trip
   * costs about as much as the fsync there), else on the thread pool so the event loop keeps
   * serving while the disk works. A second writer arriving makes the next group larger than one,
   * which moves it back to the thread pool.
   */
  async #sync(groupSize: number, alone: boolean): Promise<void> {
    const inline = alone && groupSize === 1 && this.#lastGroupSize <= 1 && this.#queue.length === 0 && this.#fsyncMicros < WAL_INLINE_FSYNC_MAX_MICROS;
    this.#lastGroupSize = groupSize;
    // Durable once the fdatasync returns: what was written before it was issued. A group written
    // while it runs on the thread pool may or may not be covered, so it is not counted.
    const through = this.#size;
    const started = performance.now();
    if (inline) fdatasyncSync(this.#fd);
    else await fdatasyncAsync(this.#fd);
    // Two groups may be in flight and their syncs finish in either order; a rotation only runs
    // when none is, so this is always the same segment.
    this.#synced = Math.max(this.#synced, through);
    // Exponentially weighted: a slow disk stops inline syncs within a few commits.
    const micros = (performance.now() - started) * 1000;
    this.#fsyncMicros = this.#fsyncMicros * 0.8 + micros * 0.2;
  }

  async #rotateNow(firstLsn: number): Promise<void> {
    if (firstLsn === this.#segment.firstLsn && this.#size <= WAL_SEGMENT_HEADER_SIZE) return;
    // The old segment's records were all fsynced by their own groups ('off' never fsyncs).
    if (this.#options.fsync === 'off') await fsyncAsync(this.#fd);
    const { fd, segment, size } = await createSegmentAsync(this.#dir, firstLsn);
    await closeAsync(this.#fd);
    this.#older.push(this.#segment);
    this.#olderBytes += this.#size;
    this.#fd = fd;
    this.#segment = segment;
    this.#size = size;
    this.#synced = size; // createSegment fsynced the header
  }

  /** Resolves when every queued append has been written (and synced per mode). */
  async drain(): Promise<void> {
    if (!this.#flushing) return;
    await new Promise<void>((resolve) => this.#drained.push(resolve));
    if (this.#queue.length > 0) await this.drain();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.drain();
    if (this.#fd >= 0) {
      if (this.#failed === undefined) fsyncSync(this.#fd);
      closeSync(this.#fd);
      this.#fd = -1;
    }
  }
}

/** fdatasync of a segment being opened; closes `fd` when that fails. */
function syncOrFail(fd: number, path: string): void {
  try {
    fdatasyncSync(fd);
  } catch (err) {
    closeSync(fd);
    fail('UNAVAILABLE', `cannot sync WAL segment ${path}: ${(err as Error).message}`, undefined, err);
  }
}

/** createSegment on the thread pool, for rotations while requests are served. */
async function createSegmentAsync(dir: string, firstLsn: number): Promise<{ fd: number; segment: SegmentInfo; size: number }> {
  const path = join(dir, segmentName(firstLsn));
  const fd = await openAsync(path, 'w+');
  const header = encodeSegmentHeader(firstLsn);
  try {
    for (let done = 0; done < header.length; ) done += (await writeAsync(fd, header, done, header.length - done, done)).bytesWritten;
    await fsyncAsync(fd);
    await fsyncDirAsync(dir);
  } catch (err) {
    closeSync(fd);
    fail('UNAVAILABLE', `cannot create WAL segment ${path}: ${(err as Error).message}`, undefined, err);
  }
  return { fd, segment: { path, firstLsn }, size: header.length };
}

function createSegment(dir: string, firstLsn: number): { fd: number; segment: SegmentInfo; size: number } {
  const path = join(dir, segmentName(firstLsn));
  const fd = openSync(path, 'w+');
  const header = encodeSegmentHeader(firstLsn);
  try {
    writeFully(fd, header, 0);
    fsyncSync(fd);
    fsyncDir(dir);
  } catch (err) {
    closeSync(fd);
    fail('UNAVAILABLE', `cannot create WAL segment ${path}: ${(err as Error).message}`, undefined, err);
  }
  return { fd, segment: { path, firstLsn }, size: header.length };
}
