import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, unlinkSync } from 'node:fs';
import { fail } from '../errors.js';
import { checksum32Parts } from './checksum.js';
import { WAL_FRAME_CHECKSUM_OFFSET, WAL_FRAME_HASHED_FROM, WAL_FRAME_HEADER_SIZE, WAL_FRAME_LENGTH_OFFSET, WAL_FRAME_SYNCED_OFFSET, WAL_MAX_RECORD_BYTES, WAL_SEGMENT_HEADER_SIZE, WAL_V1_FRAME_HEADER_SIZE, WAL_VERSION_1 } from './format.js';
import { fsyncDir, readFully } from './page-file.js';
import { decodeSegmentHeader, frameHeaderSize, listSegments, type SegmentInfo } from './wal-segment.js';

export interface WalTail {
  path: string;
  firstLsn: number;
  size: number;
  /** Lsn of the segment's last record (firstLsn - 1 when it holds none). */
  lastLsn: number;
  /** The segment's format version; the writer only appends to a WAL_VERSION segment. */
  version: number;
}

/** What recovery learned about the log, for the writer to continue from. */
export interface WalRecovery {
  /** Lsn of the last valid record (or checkpointLsn when the log holds nothing newer). */
  lastLsn: number;
  /** Segments that remain, oldest first. */
  segments: SegmentInfo[];
  /** The last segment, its valid length and its last record's lsn; undefined if none. */
  tail: WalTail | undefined;
  /** Bytes of log after the checkpoint (replayed). */
  replayedBytes: number;
  replayedRecords: number;
}

/**
 * Scans the log in `dir`, calling `onRecord` for every record with lsn > checkpointLsn in order
 * (awaiting it when it returns a promise, so the caller can checkpoint or yield mid-replay).
 * A bad frame in the last segment that no later valid frame declares synced is an unsynced write
 * (a torn tail, or a group whose pages landed out of order in a power cut): nothing from it on
 * was acknowledged, so the file is cut there and whatever valid frames follow are dropped. A bad
 * frame in synced data, a gap in lsns, or a log that starts after the checkpoint is corruption.
 * @throws CORRUPTION naming the file and byte offset
 */
export async function recoverWal(
  dir: string,
  checkpointLsn: number,
  onRecord: (lsn: number, payload: Buffer) => void | Promise<void>,
  lsnOf: (payload: Buffer) => number,
): Promise<WalRecovery> {
  let segments = listSegments(dir);
  // A segment created by a rotation that crashed before its header was durable holds nothing.
  while (segments.length > 0) {
    const last = segments[segments.length - 1]!;
    const fd = openSync(last.path, 'r');
    const size = fstatSync(fd).size;
    let sound = false;
    if (size >= WAL_SEGMENT_HEADER_SIZE) {
      const header = Buffer.allocUnsafe(WAL_SEGMENT_HEADER_SIZE);
      readFully(fd, header, 0);
      sound = decodeSegmentHeader(header)?.firstLsn === last.firstLsn;
    }
    closeSync(fd);
    if (sound || size > WAL_SEGMENT_HEADER_SIZE) break;
    unlinkSync(last.path);
    fsyncDir(dir);
    segments = segments.slice(0, -1);
  }

  // Segments wholly covered by the checkpoint are skipped (the checkpoint deletes them later).
  let first = 0;
  while (first + 1 < segments.length && segments[first + 1]!.firstLsn <= checkpointLsn + 1) first++;
  const live = segments.slice(first);
  if (live.length > 0 && live[0]!.firstLsn > checkpointLsn + 1) {
    fail('CORRUPTION', `${live[0]!.path}: the log starts at lsn ${live[0]!.firstLsn} but the page file's checkpoint is at lsn ${checkpointLsn}; records in between are missing`, {
      file: live[0]!.path,
      offset: 0,
    });
  }

  let expected = live.length > 0 ? live[0]!.firstLsn : checkpointLsn + 1;
  let replayedBytes = 0;
  let replayedRecords = 0;
  let tail: WalRecovery['tail'];
  for (let s = 0; s < live.length; s++) {
    const segment = live[s]!;
    const isLast = s === live.length - 1;
    const fd = openSync(segment.path, 'r+');
    try {
      const size = fstatSync(fd).size;
      const bytes = Buffer.allocUnsafe(size);
      readFully(fd, bytes, 0);
      const header = decodeSegmentHeader(bytes);
      if (header === undefined || header.firstLsn !== segment.firstLsn) {
        fail('CORRUPTION', `${segment.path}: bad segment header at offset 0`, { file: segment.path, offset: 0 });
      }
      if (segment.firstLsn !== expected) {
        fail('CORRUPTION', `${segment.path}: expected the segment to start at lsn ${expected}, found ${segment.firstLsn}`, { file: segment.path, offset: 0 });
      }
      // Each segment has one layout: a version 1 segment can precede a version 2 one.
      const frameHeader = frameHeaderSize(header.version);
      let pos = WAL_SEGMENT_HEADER_SIZE;
      while (pos < size) {
        const length = frameAt(bytes, pos, frameHeader);
        if (length < 0) {
          const damage = syncedDamage(bytes, pos, header.version, isLast);
          if (damage !== undefined) {
            fail('CORRUPTION', `${segment.path}: corrupt WAL record at offset ${pos} ${damage}; refusing to open rather than drop committed data`, {
              file: segment.path,
              offset: pos,
            });
          }
          // Never synced, so never acknowledged: a torn tail, or a group whose pages landed out
          // of order. Valid frames after the cut are dropped too: replaying past a missing record
          // would break lsn continuity and could apply half of what was written together.
          ftruncateSync(fd, pos);
          fsyncSync(fd);
          break;
        }
        const payload = bytes.subarray(pos + frameHeader, pos + frameHeader + length);
        let lsn: number;
        try {
          lsn = lsnOf(payload);
        } catch (err) {
          fail('CORRUPTION', `${segment.path}: undecodable WAL record at offset ${pos}`, { file: segment.path, offset: pos }, err);
        }
        if (lsn !== expected) {
          fail('CORRUPTION', `${segment.path}: WAL record at offset ${pos} has lsn ${lsn}, expected ${expected}`, { file: segment.path, offset: pos });
        }
        if (lsn > checkpointLsn) {
          const applied = onRecord(lsn, payload);
          if (applied !== undefined) await applied;
          replayedBytes += frameHeader + length;
          replayedRecords++;
        }
        expected++;
        pos += frameHeader + length;
      }
      if (isLast) tail = { path: segment.path, firstLsn: segment.firstLsn, size: Math.min(pos, size), lastLsn: expected - 1, version: header.version };
    } finally {
      closeSync(fd);
    }
  }
  return { lastLsn: Math.max(expected - 1, checkpointLsn), segments, tail, replayedBytes, replayedRecords };
}

/**
 * Payload length of a sound frame at `pos` in a segment whose frames have `frameHeader` bytes
 * before the payload, or -1.
 */
function frameAt(bytes: Buffer, pos: number, frameHeader: number): number {
  if (bytes.length - pos < frameHeader) return -1;
  const length = bytes.readUInt32LE(pos + WAL_FRAME_LENGTH_OFFSET);
  const end = pos + frameHeader + length;
  if (length === 0 || length > WAL_MAX_RECORD_BYTES || end > bytes.length) return -1;
  // The length field ends where the checksum starts.
  const sum = checksum32Parts(bytes.subarray(pos, pos + WAL_FRAME_CHECKSUM_OFFSET), bytes.subarray(pos + WAL_FRAME_HASHED_FROM, end));
  return sum === bytes.readUInt32LE(pos + WAL_FRAME_CHECKSUM_OFFSET) ? length : -1;
}

/**
 * Why the bad frame at `hole` must have been synced (so its loss is damage to acknowledged data),
 * or undefined when it may be a write that never completed its fdatasync.
 */
function syncedDamage(bytes: Buffer, hole: number, version: number, isLast: boolean): string | undefined {
  // The writer fsyncs a segment before it starts the next one.
  if (!isLast) return 'in a closed segment (all of it was synced before the next one began)';
  if (version === WAL_VERSION_1) {
    // Version 1 frames do not say what was synced: any valid frame after the hole is suspect.
    return validFrameAfter(bytes, hole + 1) ? 'followed by valid records' : undefined;
  }
  // Resynchronise byte by byte past each bad region, hop frame to frame through good ones. A
  // frame written after an fdatasync covering the hole had completed proves the hole was durable.
  for (let p = hole + 1; p + WAL_FRAME_HEADER_SIZE < bytes.length; ) {
    const length = frameAt(bytes, p, WAL_FRAME_HEADER_SIZE);
    if (length < 0) {
      p++;
      continue;
    }
    const synced = bytes.readUInt32LE(p + WAL_FRAME_SYNCED_OFFSET);
    if (synced > hole) return `although the valid record at byte ${p} was written after the log was synced through byte ${synced}`;
    p += WAL_FRAME_HEADER_SIZE + length;
  }
  return undefined;
}

/** True when a sound version 1 frame starts at any byte offset from `from` on. */
function validFrameAfter(bytes: Buffer, from: number): boolean {
  for (let p = from; p + WAL_V1_FRAME_HEADER_SIZE < bytes.length; p++) {
    if (frameAt(bytes, p, WAL_V1_FRAME_HEADER_SIZE) >= 0) return true;
  }
  return false;
}
