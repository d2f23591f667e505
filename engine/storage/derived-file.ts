import { open, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { checksum32, checksum32Stream } from './checksum.js';
import {
  DERIVED_CHECKSUM_OFFSET,
  DERIVED_DIR,
  DERIVED_FILE_SUFFIX,
  DERIVED_HEADER_SIZE,
  DERIVED_LENGTH_OFFSET,
  DERIVED_MAGIC,
  DERIVED_TEMP_SUFFIX,
  DERIVED_VERSION,
} from './format.js';
import { ensureDirDurable, fsyncDirAsync } from './page-file.js';

const NAME = /^[A-Za-z0-9_.-]{1,200}$/;

function pathOf(dir: string, name: string): string {
  if (!NAME.test(name) || name.startsWith('.')) throw new Error(`derived file name ${JSON.stringify(name)} must be 1-200 characters of A-Z, a-z, 0-9, _, . or -`);
  return join(dir, DERIVED_DIR, name + DERIVED_FILE_SUFFIX);
}

/**
 * Replaces the derived file `name` in `dir` with `chunks` (concatenated), atomically: a temp file
 * is written and fsynced, renamed over the old one, and the directory fsynced. Resolves once the
 * new file is durable; a crash before that leaves the old file (or none).
 */
export async function writeDerivedFile(dir: string, name: string, chunks: readonly Uint8Array[]): Promise<void> {
  const file = await openDerivedWriter(dir, name);
  try {
    for (const chunk of chunks) await file.write(chunk);
    await file.commit();
  } catch (err) {
    await file.abort();
    throw err;
  }
}

/** A derived file written a chunk at a time (see openDerivedWriter). */
export interface DerivedWriter {
  /** Appends payload bytes (the caller may reuse or drop `chunk` once this resolves). */
  write(chunk: Uint8Array): Promise<void>;
  /** Completes the header, fsyncs, renames over the old file and fsyncs the directory. */
  commit(): Promise<void>;
  /** Drops the temp file; the old file (if any) stays. */
  abort(): Promise<void>;
}

/**
 * Starts replacing derived file `name` with a payload streamed in chunks (for payloads too large
 * to hold twice in memory): the temp file gets a placeholder header, the chunks, then at commit
 * the real header; until commit's rename the old file stays in place.
 */
export async function openDerivedWriter(dir: string, name: string): Promise<DerivedWriter> {
  const path = pathOf(dir, name);
  ensureDirDurable(join(dir, DERIVED_DIR));
  const temp = path + DERIVED_TEMP_SUFFIX;
  const fd = await open(temp, 'w');
  const hash = checksum32Stream();
  let length = 0;
  let closed = false;
  await fd.write(Buffer.alloc(DERIVED_HEADER_SIZE), 0, DERIVED_HEADER_SIZE, 0);
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await fd.close();
  };
  return {
    async write(chunk) {
      let at = 0;
      while (at < chunk.byteLength) {
        const { bytesWritten } = await fd.write(chunk, at, chunk.byteLength - at, DERIVED_HEADER_SIZE + length + at);
        at += bytesWritten;
      }
      hash.update(chunk);
      length += chunk.byteLength;
    },
    async commit() {
      const header = Buffer.alloc(DERIVED_HEADER_SIZE);
      header.writeUInt32LE(DERIVED_MAGIC, 0);
      header.writeUInt16LE(DERIVED_VERSION, 4);
      header.writeDoubleLE(length, DERIVED_LENGTH_OFFSET);
      header.writeUInt32LE(hash.digest(), DERIVED_CHECKSUM_OFFSET);
      try {
        await fd.write(header, 0, DERIVED_HEADER_SIZE, 0);
        await fd.sync();
      } finally {
        await close();
      }
      await rename(temp, path);
      await fsyncDirAsync(join(dir, DERIVED_DIR));
    },
    async abort() {
      await close();
      await rm(temp, { force: true });
    },
  };
}

/** The payload of derived file `name`, or why there is none usable (missing, short, damaged). */
export async function readDerivedFile(dir: string, name: string): Promise<{ payload: Buffer } | { missing: string }> {
  const path = pathOf(dir, name);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { missing: `${path} does not exist` };
    throw err;
  }
  if (bytes.length < DERIVED_HEADER_SIZE) return { missing: `${path} is shorter than its header` };
  if (bytes.readUInt32LE(0) !== DERIVED_MAGIC || bytes.readUInt16LE(4) !== DERIVED_VERSION) return { missing: `${path} has an unknown magic or version` };
  const length = bytes.readDoubleLE(DERIVED_LENGTH_OFFSET);
  if (length !== bytes.length - DERIVED_HEADER_SIZE) return { missing: `${path} holds ${bytes.length - DERIVED_HEADER_SIZE} payload bytes, its header says ${length}` };
  const payload = bytes.subarray(DERIVED_HEADER_SIZE);
  if (checksum32(payload) !== bytes.readUInt32LE(DERIVED_CHECKSUM_OFFSET)) return { missing: `${path} fails its checksum` };
  return { payload };
}

/** Deletes derived file `name` (no error when it does not exist). */
export async function removeDerivedFile(dir: string, name: string): Promise<void> {
  await rm(pathOf(dir, name), { force: true });
}
