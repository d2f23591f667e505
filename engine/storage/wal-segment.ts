import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  WAL_FILE_PREFIX,
  WAL_FILE_SUFFIX,
  WAL_FIRST_LSN_OFFSET,
  WAL_FRAME_CHECKSUM_OFFSET,
  WAL_FRAME_HEADER_SIZE,
  WAL_FRAME_LENGTH_OFFSET,
  WAL_FRAME_SYNCED_OFFSET,
  WAL_MAGIC,
  WAL_MAGIC_OFFSET,
  WAL_MAX_SYNCED_OFFSET,
  WAL_SEGMENT_HEADER_SIZE,
  WAL_V1_FRAME_HEADER_SIZE,
  WAL_VERSION,
  WAL_VERSION_1,
  WAL_VERSION_OFFSET,
} from './format.js';
import { checksum32 } from './checksum.js';

export interface SegmentInfo {
  path: string;
  firstLsn: number;
}

/** File name of the segment whose first record has `firstLsn`: 16 hex digits sort in lsn order. */
export function segmentName(firstLsn: number): string {
  return `${WAL_FILE_PREFIX}${firstLsn.toString(16).padStart(16, '0')}${WAL_FILE_SUFFIX}`;
}

/** The WAL segments in `dir`, oldest first. */
export function listSegments(dir: string): SegmentInfo[] {
  const pattern = new RegExp(`^${WAL_FILE_PREFIX}([0-9a-f]{16})${WAL_FILE_SUFFIX.replace('.', '\\.')}$`);
  const segments: SegmentInfo[] = [];
  for (const name of readdirSync(dir)) {
    const match = pattern.exec(name);
    if (match) segments.push({ path: join(dir, name), firstLsn: parseInt(match[1]!, 16) });
  }
  return segments.sort((a, b) => a.firstLsn - b.firstLsn);
}

/** Header of a new segment; always the current WAL_VERSION (version 1 is only ever read). */
export function encodeSegmentHeader(firstLsn: number): Buffer {
  const header = Buffer.alloc(WAL_SEGMENT_HEADER_SIZE);
  header.writeUInt32LE(WAL_MAGIC, WAL_MAGIC_OFFSET);
  header.writeUInt16LE(WAL_VERSION, WAL_VERSION_OFFSET);
  header.writeDoubleLE(firstLsn, WAL_FIRST_LSN_OFFSET);
  return header;
}

export interface SegmentHeader {
  firstLsn: number;
  /** WAL_VERSION or WAL_VERSION_1: decides the frame layout of the whole segment. */
  version: number;
}

/** What a segment header records, or undefined when it is not sound or of an unknown version. */
export function decodeSegmentHeader(header: Buffer): SegmentHeader | undefined {
  if (header.length < WAL_SEGMENT_HEADER_SIZE || header.readUInt32LE(WAL_MAGIC_OFFSET) !== WAL_MAGIC) return undefined;
  const version = header.readUInt16LE(WAL_VERSION_OFFSET);
  if (version !== WAL_VERSION && version !== WAL_VERSION_1) return undefined;
  return { firstLsn: header.readDoubleLE(WAL_FIRST_LSN_OFFSET), version };
}

/** Bytes of frame before the payload in a segment of `version`. */
export function frameHeaderSize(version: number): number {
  return version === WAL_VERSION_1 ? WAL_V1_FRAME_HEADER_SIZE : WAL_FRAME_HEADER_SIZE;
}

/**
 * A version 2 frame with its length and payload in place; sealFrame must fill syncedThrough and
 * the checksum before it is written. Split in two so the writer can stamp syncedThrough when it
 * forms a group (as late, hence as fresh, as possible) while append() does the copying.
 */
export function allocFrame(payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(WAL_FRAME_HEADER_SIZE + payload.length);
  frame.writeUInt32LE(payload.length, WAL_FRAME_LENGTH_OFFSET);
  frame.set(payload, WAL_FRAME_HEADER_SIZE);
  return frame;
}

/** Stamps `syncedThrough` into a frame from allocFrame and checksums it (once per frame). */
export function sealFrame(frame: Buffer, syncedThrough: number): void {
  // Segments rotate long before 4 GiB; should one get there, claiming less than was synced only
  // weakens recovery's corruption check (it never makes a sound log fail), so clamp rather than
  // fail every later append with a RangeError.
  frame.writeUInt32LE(Math.min(syncedThrough, WAL_MAX_SYNCED_OFFSET), WAL_FRAME_SYNCED_OFFSET);
  // Put a copy of the length in the checksum slot so "length ++ syncedThrough ++ payload" is one
  // contiguous run to hash, then overwrite that copy with the checksum.
  frame.writeUInt32LE(frame.length - WAL_FRAME_HEADER_SIZE, WAL_FRAME_CHECKSUM_OFFSET);
  frame.writeUInt32LE(checksum32(frame.subarray(WAL_FRAME_CHECKSUM_OFFSET)), WAL_FRAME_CHECKSUM_OFFSET);
}

/** One complete version 2 frame (see WAL_FRAME_HEADER_SIZE for the layout). */
export function frameRecord(payload: Uint8Array, syncedThrough: number): Buffer {
  const frame = allocFrame(payload);
  sealFrame(frame, syncedThrough);
  return frame;
}
