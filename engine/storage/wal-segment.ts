import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { WAL_FILE_PREFIX, WAL_FILE_SUFFIX, WAL_MAGIC, WAL_SEGMENT_HEADER_SIZE, WAL_VERSION, WAL_FRAME_HEADER_SIZE } from './format.js';
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

export function encodeSegmentHeader(firstLsn: number): Buffer {
  const header = Buffer.alloc(WAL_SEGMENT_HEADER_SIZE);
  header.writeUInt32LE(WAL_MAGIC, 0);
  header.writeUInt16LE(WAL_VERSION, 4);
  header.writeDoubleLE(firstLsn, 8);
  return header;
}

/** The firstLsn a segment header records, or undefined when the header is not sound. */
export function decodeSegmentHeader(header: Buffer): number | undefined {
  if (header.length < WAL_SEGMENT_HEADER_SIZE) return undefined;
  if (header.readUInt32LE(0) !== WAL_MAGIC || header.readUInt16LE(4) !== WAL_VERSION) return undefined;
  return header.readDoubleLE(8);
}

/** One framed record: [u32 length][u32 xxhash32(length bytes ++ payload)][payload]. */
export function frameRecord(payload: Uint8Array): Buffer {
  const frame = Buffer.allocUnsafe(WAL_FRAME_HEADER_SIZE + payload.length);
  frame.writeUInt32LE(payload.length, 0);
  frame.set(payload, WAL_FRAME_HEADER_SIZE);
  // Put a copy of the length right before the payload so "length ++ payload" is one contiguous
  // run to hash, then overwrite that copy with the checksum.
  frame.writeUInt32LE(payload.length, 4);
  frame.writeUInt32LE(checksum32(frame.subarray(4)), 4);
  return frame;
}
