/**
 * Spill files: where a query's blocking work goes when it passes its memory bound (MongoDB's
 * allowDiskUse). Bytes only: the document model decides what a record holds and in what order
 * (engine/docs/external-sort.ts). One SpillArea per process (a directory of its own, never
 * inside a tenant's store), one SpillSpace per query, whose files are deleted when the query
 * ends, fails or is abandoned; files a dead process left are deleted at start-up
 * (removeLeftovers). Layout: format.ts (SPILL_*) and docs/storage-format.md.
 */

import { mkdir, open, readdir, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { fail } from '../errors.js';
import {
  SPILL_FILE_PREFIX,
  SPILL_FILE_SUFFIX,
  SPILL_READ_BUFFER_MAX_BYTES,
  SPILL_READ_BUFFER_MIN_BYTES,
  SPILL_RECORD_HEADER_SIZE,
  SPILL_WRITE_BUFFER_BYTES,
} from './format.js';

/** True for the name of a spill file (a leftover when found at start-up). */
export function isSpillFileName(name: string): boolean {
  return name.startsWith(SPILL_FILE_PREFIX) && name.endsWith(SPILL_FILE_SUFFIX);
}

/** True when spill file `name` carries the id of another process that is running (kill(pid, 0): EPERM is alive too). */
function ownedByAnother(name: string): boolean {
  const pid = Number(name.slice(SPILL_FILE_PREFIX.length).split('-')[0]);
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The spill directory of one process, and the bound on what one query may write there. */
export class SpillArea {
  readonly dir: string;
  /** Bytes one query's spill files may hold at once; past it the query fails (QUERY_ERROR). */
  readonly maxQueryBytes: number;
  #queries = 0;

  constructor(dir: string, maxQueryBytes: number) {
    this.dir = dir;
    this.maxQueryBytes = maxQueryBytes;
  }

  /**
   * Creates the directory and deletes the spill files in it that no live process owns: call once
   * at start-up, before any query runs. The default directory is inside this process's data
   * directory, so every file there is a dead process's; a TETRA_SPILL_DIR shared by several
   * servers also holds live ones' files, named by their process ids, which stay.
   * Resolves with how many were deleted.
   */
  async removeLeftovers(): Promise<number> {
    await mkdir(this.dir, { recursive: true });
    let removed = 0;
    for (const name of await readdir(this.dir)) {
      if (!isSpillFileName(name) || ownedByAnother(name)) continue;
      await rm(join(this.dir, name), { force: true });
      removed++;
    }
    return removed;
  }

  /** A new query's spill space (no file exists until it creates one). */
  begin(): SpillSpace {
    return new SpillSpace(this, ++this.#queries);
  }
}

/** One query's spill files and the bytes they hold. Close it when the query is over, however it ends. */
export class SpillSpace {
  readonly #area: SpillArea;
  readonly #query: number;
  /** Made with its first file: every find and aggregation begins a space, and most never spill. */
  #files: Set<SpillFile> | undefined;
  #created = 0;
  #bytes = 0;
  #closed = false;

  constructor(area: SpillArea, query: number) {
    this.#area = area;
    this.#query = query;
  }

  /** Bytes its files hold now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** A new empty spill file of this query. */
  async create(): Promise<SpillFile> {
    if (this.#closed) throw new Error('spill space used after its query ended');
    const path = join(this.#area.dir, `${SPILL_FILE_PREFIX}${process.pid}-${this.#query}-${++this.#created}${SPILL_FILE_SUFFIX}`);
    // The directory may have been removed since start-up (an operator cleaning up): made again.
    await mkdir(this.#area.dir, { recursive: true });
    const fh = await open(path, 'w+');
    const file = new SpillFile(this, path, fh);
    (this.#files ??= new Set()).add(file);
    return file;
  }

  /** Counts `n` more bytes written (fewer when negative). @throws QUERY_ERROR past the area's bound */
  charge(n: number): void {
    this.#bytes += n;
    const max = this.#area.maxQueryBytes;
    if (n > 0 && this.#bytes > max) {
      fail('QUERY_ERROR', `the query spilled more than ${max} bytes to disk (TETRA_MQL_SPILL_BYTES): filter earlier ($match), project fewer fields, or group by fewer keys`, { limit: max });
    }
  }

  /** Forgets a file removed by its owner. */
  forget(file: SpillFile): void {
    this.#files?.delete(file);
  }

  /** Deletes every file of the query; later creates fail. Never rejects. */
  async close(): Promise<void> {
    this.#closed = true;
    const files = [...(this.#files ?? [])];
    this.#files = undefined;
    await Promise.all(files.map((f) => f.remove()));
  }
}

/** A run of records written one after another: bytes [start, end) of its file. */
export interface SpillRun {
  readonly start: number;
  readonly end: number;
  readonly records: number;
}

/** An append-only file of runs of length-prefixed records, read back run by run. */
export class SpillFile {
  readonly path: string;
  readonly #space: SpillSpace;
  #fh: FileHandle | undefined;
  #buf: Buffer | undefined;
  #used = 0;
  /** Bytes on disk (flushed). */
  #flushed = 0;
  #runStart = 0;
  #records = 0;

  constructor(space: SpillSpace, path: string, fh: FileHandle) {
    this.#space = space;
    this.path = path;
    this.#fh = fh;
  }

  /** Appends a record to the current run: a promise only when the write buffer went to disk. @throws QUERY_ERROR past the query's spill bound */
  append(payload: Uint8Array): void | Promise<void> {
    const size = SPILL_RECORD_HEADER_SIZE + payload.length;
    this.#space.charge(size);
    this.#records++;
    this.#buf ??= Buffer.allocUnsafe(SPILL_WRITE_BUFFER_BYTES);
    if (this.#used + size <= this.#buf.length) {
      this.#put(payload);
      return undefined;
    }
    return this.#appendAfterFlush(payload, size);
  }

  async #appendAfterFlush(payload: Uint8Array, size: number): Promise<void> {
    await this.#flush();
    if (size <= this.#buf!.length) {
      this.#put(payload);
      return;
    }
    // A record larger than the buffer goes out on its own.
    const header = Buffer.allocUnsafe(SPILL_RECORD_HEADER_SIZE);
    header.writeUInt32LE(payload.length, 0);
    await this.#write(header);
    await this.#write(payload);
  }

  #put(payload: Uint8Array): void {
    const buf = this.#buf!;
    buf.writeUInt32LE(payload.length, this.#used);
    buf.set(payload, this.#used + SPILL_RECORD_HEADER_SIZE);
    this.#used += SPILL_RECORD_HEADER_SIZE + payload.length;
  }

  async #write(bytes: Uint8Array): Promise<void> {
    const fh = this.#open();
    let done = 0;
    while (done < bytes.length) {
      const { bytesWritten } = await fh.write(bytes, done, bytes.length - done, this.#flushed);
      done += bytesWritten;
      this.#flushed += bytesWritten;
    }
  }

  async #flush(): Promise<void> {
    if (this.#used === 0) return;
    const used = this.#used;
    this.#used = 0;
    await this.#write(this.#buf!.subarray(0, used));
  }

  /** Ends the current run (what was appended since the last one) and starts the next. */
  async endRun(): Promise<SpillRun> {
    await this.#flush();
    const run = { start: this.#runStart, end: this.#flushed, records: this.#records };
    this.#runStart = this.#flushed;
    this.#records = 0;
    return run;
  }

  /** A reader of `run` holding about `bufferBytes` (within the SPILL_READ_BUFFER_* bounds). */
  reader(run: SpillRun, bufferBytes: number): SpillRunReader {
    const size = Math.max(SPILL_READ_BUFFER_MIN_BYTES, Math.min(SPILL_READ_BUFFER_MAX_BYTES, Math.floor(bufferBytes)));
    return new SpillRunReader(this.#open(), run, size);
  }

  #open(): FileHandle {
    if (this.#fh === undefined) throw new Error(`spill file ${this.path} used after it was removed`);
    return this.#fh;
  }

  /** Closes and deletes the file (its bytes no longer count against the query's bound). Never rejects. */
  async remove(): Promise<void> {
    const fh = this.#fh;
    if (fh === undefined) return;
    this.#fh = undefined;
    this.#buf = undefined;
    this.#space.forget(this);
    this.#space.charge(-(this.#flushed + this.#used));
    await fh.close().catch(() => undefined);
    await rm(this.path, { force: true }).catch(() => undefined);
  }
}

/** Reads one run's records in order through a bounded buffer. */
export class SpillRunReader {
  readonly #fh: FileHandle;
  /** The file offset of the next byte to read into the buffer. */
  #pos: number;
  readonly #end: number;
  #buf: Buffer;
  #at = 0;
  #len = 0;

  constructor(fh: FileHandle, run: SpillRun, bufferBytes: number) {
    this.#fh = fh;
    this.#pos = run.start;
    this.#end = run.end;
    this.#buf = Buffer.allocUnsafe(Math.min(bufferBytes, Math.max(run.end - run.start, SPILL_RECORD_HEADER_SIZE)));
  }

  /**
   * The next record's payload, valid until the next call (it lies in the reader's buffer), or
   * undefined past the run's end; a promise only when the buffer had to be refilled.
   */
  next(): Buffer | undefined | Promise<Buffer | undefined> {
    const ready = this.#ready();
    if (ready !== false) return ready;
    return this.#fillThenNext();
  }

  // The record at the buffer's head when it is whole in the buffer; undefined at the end; false when a read is needed.
  #ready(): Buffer | undefined | false {
    const avail = this.#len - this.#at;
    if (avail === 0 && this.#pos >= this.#end) return undefined;
    if (avail < SPILL_RECORD_HEADER_SIZE) return false;
    const length = this.#buf.readUInt32LE(this.#at);
    if (avail < SPILL_RECORD_HEADER_SIZE + length) return false;
    const start = this.#at + SPILL_RECORD_HEADER_SIZE;
    this.#at = start + length;
    return this.#buf.subarray(start, start + length);
  }

  async #fillThenNext(): Promise<Buffer | undefined> {
    for (;;) {
      const avail = this.#len - this.#at;
      // What the head record needs, when its length is known: a larger buffer for a large record.
      const need = avail >= SPILL_RECORD_HEADER_SIZE ? SPILL_RECORD_HEADER_SIZE + this.#buf.readUInt32LE(this.#at) : SPILL_RECORD_HEADER_SIZE;
      const next = need > this.#buf.length ? Buffer.allocUnsafe(need) : this.#buf;
      this.#buf.copy(next, 0, this.#at, this.#len);
      this.#buf = next;
      this.#at = 0;
      this.#len = avail;
      const want = Math.min(this.#buf.length - this.#len, this.#end - this.#pos);
      if (want <= 0) throw new Error('spill run ends inside a record');
      const { bytesRead } = await this.#fh.read(this.#buf, this.#len, want, this.#pos);
      if (bytesRead === 0) throw new Error('spill file is shorter than its runs');
      this.#pos += bytesRead;
      this.#len += bytesRead;
      const ready = this.#ready();
      if (ready !== false) return ready;
    }
  }
}
