/**
 * A batch's WAL record, written straight into its frame: the MessagePack bytes msgpackr's pack()
 * gives for `{lsn, ops: [{op, tree, key?, value?}]}` (numeric op codes, keys and values as bin),
 * which recovery decodes with msgpackr. Building that object for every batch and packing it
 * cost a tenth of a bulk insert (a map walk per op, the tree name encoded again per op), and the
 * payload was then copied once more into its frame.
 *
 * Maps are written as msgpackr writes plain objects (map16, whatever their size), so the bytes
 * are msgpackr's own; test/storage/wal-record.test.ts holds the two equal.
 */

import { Packr } from 'msgpackr';
import { allocFrame, OP, WAL_FRAME_HEADER_SIZE, WAL_FRAME_LENGTH_OFFSET } from '../storage/index.js';
import type { BatchOp } from './tenant-store.js';

const packr = new Packr({ useRecords: false });

const CODE = { put: OP.PUT, delete: OP.DELETE, dropTree: OP.DROP_TREE } as const;

// Field names as msgpackr writes them (fixstr).
const LSN = Buffer.from([0xa3, 0x6c, 0x73, 0x6e]);
const OPS = Buffer.from([0xa3, 0x6f, 0x70, 0x73]);
const OP_NAME = Buffer.from([0xa2, 0x6f, 0x70]);
const TREE = Buffer.from([0xa4, 0x74, 0x72, 0x65, 0x65]);
const KEY = Buffer.from([0xa3, 0x6b, 0x65, 0x79]);
const VALUE = Buffer.from([0xa5, 0x76, 0x61, 0x6c, 0x75, 0x65]);

// A tenant writes to a few trees: their names are encoded once, not once per op.
const NAMES = new Map<string, Buffer>();
const MAX_CACHED_NAMES = 4096;

function encodedName(tree: string): Buffer {
  let bytes = NAMES.get(tree);
  if (bytes === undefined) {
    const utf8 = Buffer.from(tree, 'utf8');
    const n = utf8.length;
    const header = n < 0x20 ? [0xa0 | n] : n < 0x100 ? [0xd9, n] : n < 0x10000 ? [0xda, n >> 8, n & 0xff] : [0xdb, n >>> 24, (n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff];
    bytes = Buffer.concat([Buffer.from(header), utf8]);
    if (NAMES.size >= MAX_CACHED_NAMES) NAMES.clear();
    NAMES.set(tree, bytes);
  }
  return bytes;
}

function binHeaderSize(n: number): number {
  return n < 0x100 ? 2 : n < 0x10000 ? 3 : 5;
}

function arrayHeaderSize(n: number): number {
  return n < 0x10 ? 1 : n < 0x10000 ? 3 : 5;
}

function uintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x100 ? 2 : v < 0x10000 ? 3 : 5;
}

/**
 * The frame (header to be sealed by the WAL writer, payload in place) of the record of batch
 * `lsn`. The caller validated the ops.
 */
export function walRecordFrame(lsn: number, ops: readonly BatchOp[]): Buffer {
  // An lsn past 32 bits (never reached in practice) goes through msgpackr, which picks its encoding.
  if (!(lsn >>> 0 === lsn)) return allocFrame(packr.pack({ lsn, ops: ops.map(recordOp) }));
  let size = 3 + LSN.length + uintSize(lsn) + OPS.length + arrayHeaderSize(ops.length);
  for (const o of ops) {
    size += 3 + OP_NAME.length + 1 + TREE.length + encodedName(o.tree).length;
    if (o.op === 'dropTree') continue;
    size += KEY.length + binHeaderSize(o.key.length) + o.key.length;
    if (o.op === 'put') size += VALUE.length + binHeaderSize(o.value.length) + o.value.length;
  }
  const frame = Buffer.allocUnsafe(WAL_FRAME_HEADER_SIZE + size);
  frame.writeUInt32LE(size, WAL_FRAME_LENGTH_OFFSET);
  let p = WAL_FRAME_HEADER_SIZE;
  const put = (bytes: Uint8Array): void => {
    const n = bytes.length;
    // TypedArray.set costs more than a short loop for the few bytes of names and keys.
    if (n > 48) frame.set(bytes, p);
    else for (let i = 0; i < n; i++) frame[p + i] = bytes[i]!;
    p += n;
  };
  const map16 = (n: number): void => {
    frame[p++] = 0xde;
    frame[p++] = 0;
    frame[p++] = n;
  };
  // A tag and a 16- or 32-bit big-endian length or value: the wide forms of every header here.
  const wide = (n: number, tag16: number, tag32: number): void => {
    if (n < 0x10000) {
      frame[p++] = tag16;
      frame.writeUInt16BE(n, p);
      p += 2;
    } else {
      frame[p++] = tag32;
      frame.writeUInt32BE(n, p);
      p += 4;
    }
  };
  const bin = (bytes: Uint8Array): void => {
    const n = bytes.length;
    if (n < 0x100) {
      frame[p++] = 0xc4;
      frame[p++] = n;
    } else {
      wide(n, 0xc5, 0xc6);
    }
    put(bytes);
  };
  map16(2);
  put(LSN);
  if (lsn < 0x80) {
    frame[p++] = lsn;
  } else if (lsn < 0x100) {
    frame[p++] = 0xcc;
    frame[p++] = lsn;
  } else {
    wide(lsn, 0xcd, 0xce);
  }
  put(OPS);
  const n = ops.length;
  if (n < 0x10) frame[p++] = 0x90 | n;
  else wide(n, 0xdc, 0xdd);
  for (const o of ops) {
    map16(o.op === 'put' ? 4 : o.op === 'delete' ? 3 : 2);
    put(OP_NAME);
    frame[p++] = CODE[o.op];
    put(TREE);
    put(encodedName(o.tree));
    if (o.op === 'dropTree') continue;
    put(KEY);
    bin(o.key);
    if (o.op === 'put') {
      put(VALUE);
      bin(o.value);
    }
  }
  return frame;
}

/** An op as the record object holds it (what recovery decodes). */
export function recordOp(o: BatchOp): { op: number; tree: string; key?: Buffer; value?: Buffer } {
  return o.op === 'dropTree'
    ? { op: OP.DROP_TREE, tree: o.tree }
    : o.op === 'put'
      ? { op: OP.PUT, tree: o.tree, key: asBuffer(o.key), value: asBuffer(o.value) }
      : { op: OP.DELETE, tree: o.tree, key: asBuffer(o.key) };
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
