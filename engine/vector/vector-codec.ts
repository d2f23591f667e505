/**
 * How the vector store lays out its data in a tenant's trees:
 *
 * - `vec.ns`: namespace name (UTF-8) -> msgpack NamespaceInfo (number, HNSW parameters, the
 *   change-log sequence the graph snapshot has pruned through).
 * - `vec.r.<number>`: record id (UTF-8) -> record (below), one tree per namespace.
 * - `vec.l.<number>`: change log, u64 big-endian sequence -> record id: every upsert and delete
 *   adds an entry in the same batch as the record. The graph snapshot (a derived file,
 *   `derived/vec-<number>.bin`) covers the log up to a sequence; on open the entries after it
 *   are applied to the loaded graph, and the entries it covers are deleted once it is durable.
 *
 * Record value: [u8 version = 1][u16 embedder id length][embedder id, UTF-8][u32 metadata
 * length][msgpack metadata, absent when 0][u32 text length][text, UTF-8][vector: dims x f32
 * little-endian]. The embedder id and the metadata come first, so a scan checks them without
 * touching the text or the vector (and skips the metadata when there is no filter).
 */

import { Packr } from 'msgpackr';

export const NAMESPACES_TREE = 'vec.ns';
export const recordsTree = (number: number): string => `vec.r.${number}`;
export const logTree = (number: number): string => `vec.l.${number}`;
export const graphFileName = (number: number): string => `vec-${number}`;

const RECORD_VERSION = 1;
const packr = new Packr({ useRecords: false, moreTypes: false });

export interface NamespaceInfo {
  /** Names this namespace's trees and graph file; never reused. */
  number: number;
  M: number;
  efConstruction: number;
  efSearch: number;
  /** Log entries up to this sequence were deleted after a graph snapshot covered them. */
  prunedThrough: number;
}

export function encodeNamespaceInfo(info: NamespaceInfo): Buffer {
  return packr.pack(info);
}

export function decodeNamespaceInfo(bytes: Uint8Array): NamespaceInfo {
  return packr.unpack(bytes) as NamespaceInfo;
}

export interface StoredRecord {
  embedder: string;
  metadata: Record<string, unknown> | undefined;
  text: string;
  vector: Float32Array;
}

/** Encoded size of a record's metadata (what the metadata limit counts). */
export function metadataBytes(metadata: Record<string, unknown>): number {
  return packr.pack(metadata).length;
}

export function encodeRecord(embedder: string, metadata: Record<string, unknown> | undefined, text: string, vector: Float32Array): Buffer {
  const embedderBytes = Buffer.from(embedder, 'utf8');
  const meta = metadata === undefined ? EMPTY : packr.pack(metadata);
  const textBytes = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(1 + 2 + embedderBytes.length + 4 + meta.length + 4 + textBytes.length + vector.byteLength);
  let at = out.writeUInt8(RECORD_VERSION, 0);
  at = out.writeUInt16LE(embedderBytes.length, at);
  at += embedderBytes.copy(out, at);
  at = out.writeUInt32LE(meta.length, at);
  at += meta.copy(out, at);
  at = out.writeUInt32LE(textBytes.length, at);
  at += textBytes.copy(out, at);
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).copy(out, at);
  return out;
}

const EMPTY = Buffer.alloc(0);

function checkVersion(bytes: Buffer): void {
  if (bytes[0] !== RECORD_VERSION) throw new Error(`vector record version ${bytes[0]} is not known`);
}

/** The id of the embedder that made a record's vector. */
export function recordEmbedder(bytes: Buffer): string {
  checkVersion(bytes);
  return bytes.toString('utf8', 3, 3 + bytes.readUInt16LE(1));
}

function metadataAt(bytes: Buffer): number {
  return 3 + bytes.readUInt16LE(1);
}

/** A record's metadata (undefined when it has none), without decoding its text or vector. */
export function recordMetadata(bytes: Buffer): Record<string, unknown> | undefined {
  checkVersion(bytes);
  const at = metadataAt(bytes);
  const length = bytes.readUInt32LE(at);
  return length === 0 ? undefined : (packr.unpack(bytes.subarray(at + 4, at + 4 + length)) as Record<string, unknown>);
}

function textAt(bytes: Buffer): number {
  const at = metadataAt(bytes);
  return at + 4 + bytes.readUInt32LE(at);
}

/** Where a record's vector starts (after its text). */
function vectorOffset(bytes: Buffer): number {
  const at = textAt(bytes);
  return at + 4 + bytes.readUInt32LE(at);
}

/** A copy of the record's vector (aligned, so dot products run on a Float32Array). */
export function decodeRecordVector(bytes: Buffer): Float32Array {
  const at = vectorOffset(bytes);
  const out = new Float32Array((bytes.length - at) / 4);
  Buffer.from(out.buffer).set(bytes.subarray(at));
  return out;
}

export function decodeRecord(bytes: Buffer): StoredRecord {
  checkVersion(bytes);
  const at = textAt(bytes);
  const text = bytes.toString('utf8', at + 4, at + 4 + bytes.readUInt32LE(at));
  return { embedder: recordEmbedder(bytes), metadata: recordMetadata(bytes), text, vector: decodeRecordVector(bytes) };
}

let scratch = new Float32Array(384);

/** Dot product of `query` with the vector stored in a record (copied to an aligned scratch first). */
export function recordDot(bytes: Buffer, query: Float32Array): number {
  const at = vectorOffset(bytes);
  const n = query.length;
  if (scratch.length < n) scratch = new Float32Array(n);
  const v = scratch;
  new Uint8Array(v.buffer, 0, n * 4).set(bytes.subarray(at, at + n * 4));
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += query[i]! * v[i]!;
    s1 += query[i + 1]! * v[i + 1]!;
    s2 += query[i + 2]! * v[i + 2]!;
    s3 += query[i + 3]! * v[i + 3]!;
  }
  for (; i < n; i++) s0 += query[i]! * v[i]!;
  return s0 + s1 + s2 + s3;
}

export function seqKey(seq: number): Buffer {
  const key = Buffer.allocUnsafe(8);
  key.writeBigUInt64BE(BigInt(seq));
  return key;
}

export function seqOfKey(key: Uint8Array): number {
  return Number(Buffer.from(key.buffer, key.byteOffset, key.byteLength).readBigUInt64BE(0));
}

export function idKey(id: string): Buffer {
  return Buffer.from(id, 'utf8');
}
