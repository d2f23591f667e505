import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, unlinkSync } from 'node:fs';
import { fail } from '../errors.js';
import { checksum32Parts } from './checksum.js';
import { WAL_FRAME_HEADER_SIZE, WAL_MAX_RECORD_BYTES, WAL_SEGMENT_HEADER_SIZE } from './format.js';
import { fsyncDir, readFully } from './page-file.js';
import { decodeSegmentHeader, listSegments, type SegmentInfo } from './wal-segment.js';

export interface WalTail {
  path: string;
  firstLsn: number;
  size: number;
  /** Lsn of the segment's last record (firstLsn - 1 when it holds none). */
  lastLsn: number;
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
 * Scans the log in `dir`, calling `onRecord` for every record with lsn > checkpointLsn in order.
 * A bad frame with nothing valid after it is a torn write and is cut off; a bad frame followed by
 * a valid one, a gap in lsns, or a log that starts after the checkpoint is corruption.
 * @throws CORRUPTION naming the file and byte offset
 */
export function recoverWal(dir: string, checkpointLsn: number, onRecord: (lsn: number, payload: Buffer) => void, lsnOf: (payload: Buffer) => number): WalRecovery {
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
      sound = decodeSegmentHeader(header) === last.firstLsn;
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
      const headerLsn = decodeSegmentHeader(bytes);
      if (headerLsn !== segment.firstLsn) {
        fail('CORRUPTION', `${segment.path}: bad segment header at offset 0`, { file: segment.path, offset: 0 });
      }
      if (segment.firstLsn !== expected) {
        fail('CORRUPTION', `${segment.path}: expected the segment to start at lsn ${expected}, found ${segment.firstLsn}`, { file: segment.path, offset: 0 });
      }
      let pos = WAL_SEGMENT_HEADER_SIZE;
      while (pos < size) {
        const length = frameAt(bytes, pos);
        if (length < 0) {
          if (!isLast || validFrameAfter(bytes, pos + 1)) {
            fail('CORRUPTION', `${segment.path}: corrupt WAL record at offset ${pos} followed by valid records; refusing to open rather than drop committed data`, {
              file: segment.path,
              offset: pos,
            });
          }
          // Torn tail: the write of this record never completed, so it was never acknowledged.
          ftruncateSync(fd, pos);
          fsyncSync(fd);
          break;
        }
        const payload = bytes.subarray(pos + WAL_FRAME_HEADER_SIZE, pos + WAL_FRAME_HEADER_SIZE + length);
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
          onRecord(lsn, payload);
          replayedBytes += WAL_FRAME_HEADER_SIZE + length;
          replayedRecords++;
        }
        expected++;
        pos += WAL_FRAME_HEADER_SIZE + length;
      }
      if (isLast) tail = { path: segment.path, firstLsn: segment.firstLsn, size: Math.min(pos, size), lastLsn: expected - 1 };
    } finally {
      closeSync(fd);
    }
  }
  return { lastLsn: Math.max(expected - 1, checkpointLsn), segments, tail, replayedBytes, replayedRecords };
}

/** Payload length of a sound frame at `pos`, or -1. */
function frameAt(bytes: Buffer, pos: number): number {
  if (bytes.length - pos < WAL_FRAME_HEADER_SIZE) return -1;
  const length = bytes.readUInt32LE(pos);
  if (length === 0 || length > WAL_MAX_RECORD_BYTES || pos + WAL_FRAME_HEADER_SIZE + length > bytes.length) return -1;
  const sum = checksum32Parts(bytes.subarray(pos, pos + 4), bytes.subarray(pos + WAL_FRAME_HEADER_SIZE, pos + WAL_FRAME_HEADER_SIZE + length));
  return sum === bytes.readUInt32LE(pos + 4) ? length : -1;
}

function validFrameAfter(bytes: Buffer, from: number): boolean {
  for (let p = from; p + WAL_FRAME_HEADER_SIZE < bytes.length; p++) {
    if (frameAt(bytes, p) >= 0) return true;
  }
  return false;
}
