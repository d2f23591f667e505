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
 * Record value: [u8 version = 1][u32 header length][msgpack header {e: embedder id, m?: metadata}]
 * [u32 text length][text, UTF-8][vector: dims x f32 little-endian]. Metadata comes first so a
 * filter reads it without touching the text or the vector.
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
  const header = packr.pack(metadata === undefined ? { e: embedder } : { e: embedder, m: metadata });
  const textBytes = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(1 + 4 + header.length + 4 + textBytes.length + vector.byteLength);
  let at = out.writeUInt8(RECORD_VERSION, 0);
  at = out.writeUInt32LE(header.length, at);
  at += header.copy(out, at);
  at = out.writeUInt32LE(textBytes.length, at);
  at += textBytes.copy(out, at);
  Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).copy(out, at);
  return out;
}

function headerOf(bytes: Buffer): { e: string; m?: Record<string, unknown> } {
  if (bytes[0] !== RECORD_VERSION) throw new Error(`vector record version ${bytes[0]} is not known`);
  const length = bytes.readUInt32LE(1);
  return packr.unpack(bytes.subarray(5, 5 + length)) as { e: string; m?: Record<string, unknown> };
}

/** The metadata and embedder id of a record, without decoding its text or vector. */
export function decodeRecordHeader(bytes: Buffer): { embedder: string; metadata: Record<string, unknown> | undefined } {
  const h = headerOf(bytes);
  return { embedder: h.e, metadata: h.m };
}

/** Where a record's vector starts (after its text). */
function vectorOffset(bytes: Buffer): number {
  const textAt = 5 + bytes.readUInt32LE(1);
  return textAt + 4 + bytes.readUInt32LE(textAt);
}

/** A copy of the record's vector (aligned, so dot products run on a Float32Array). */
export function decodeRecordVector(bytes: Buffer): Float32Array {
  const at = vectorOffset(bytes);
  const out = new Float32Array((bytes.length - at) / 4);
  Buffer.from(out.buffer).set(bytes.subarray(at));
  return out;
}

export function decodeRecord(bytes: Buffer): StoredRecord {
  const h = headerOf(bytes);
  const textAt = 5 + bytes.readUInt32LE(1);
  const textLength = bytes.readUInt32LE(textAt);
  const text = bytes.toString('utf8', textAt + 4, textAt + 4 + textLength);
  return { embedder: h.e, metadata: h.m, text, vector: decodeRecordVector(bytes) };
}

/** Dot product of `query` with the vector stored in a record, read in place. */
export function recordDot(bytes: Buffer, query: Float32Array): number {
  const at = vectorOffset(bytes);
  let sum = 0;
  for (let i = 0, o = at; i < query.length; i++, o += 4) sum += query[i]! * bytes.readFloatLE(o);
  return sum;
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
