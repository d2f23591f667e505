import { close, closeSync, existsSync, fdatasync, fstatSync, fsync, fsyncSync, ftruncateSync, mkdirSync, open, openSync, read, readSync, renameSync, unlinkSync, write, writeSync, writev } from 'node:fs';
import { promisify } from 'node:util';
import { dirname, resolve } from 'node:path';
import { fail } from '../errors.js';
import { checksum32 } from './checksum.js';
import { failpoint } from './failpoint.js';
import {
  CREATE_TEMP_SUFFIX,
  FORMAT_VERSION,
  HEADER_CATALOG_ROOT_OFFSET,
  HEADER_CHECKPOINT_LSN_OFFSET,
  HEADER_LIVE_PAGES_OFFSET,
  HEADER_MAGIC,
  HEADER_MAGIC_OFFSET,
  HEADER_PAGE_COUNT_OFFSET,
  HEADER_PAGE_SIZE_OFFSET,
  HEADER_VERSION_OFFSET,
  HEADER_WRITTEN_AT_OFFSET,
  PAGE_CHECKSUM_OFFSET,
  PAGE_SIZE,
  PAGE_TYPE,
  PAGE_TYPE_OFFSET,
} from './format.js';

const writeAsync = promisify(write);
const writevAsync = promisify(writev);
const readAsync = promisify(read);
const openAsync = promisify(open);
const fsyncAsync = promisify(fsync);
const closeAsync = promisify(close);
const fdatasyncAsync = promisify(fdatasync);

/** The state a header page records: everything needed to open the file at a checkpoint. */
export interface FileHeader {
  checkpointLsn: number;
  catalogRoot: number;
  pageCount: number;
  livePages: number;
  writtenAtMs: number;
}

/** Stamps the checksum of a filled page buffer (bytes 4..PAGE_SIZE). */
export function sealPage(page: Buffer): void {
  page.writeUInt32LE(checksum32(page.subarray(PAGE_CHECKSUM_OFFSET + 4, PAGE_SIZE)), PAGE_CHECKSUM_OFFSET);
}

function pageIsSound(page: Buffer): boolean {
  return page.readUInt32LE(PAGE_CHECKSUM_OFFSET) === checksum32(page.subarray(PAGE_CHECKSUM_OFFSET + 4, PAGE_SIZE));
}

export function encodeHeader(header: FileHeader): Buffer {
  const page = Buffer.alloc(PAGE_SIZE);
  page[PAGE_TYPE_OFFSET] = PAGE_TYPE.HEADER;
  page.writeUInt32LE(HEADER_MAGIC, HEADER_MAGIC_OFFSET);
  page.writeUInt16LE(FORMAT_VERSION, HEADER_VERSION_OFFSET);
  page.writeUInt16LE(PAGE_SIZE / 1024, HEADER_PAGE_SIZE_OFFSET);
  page.writeDoubleLE(header.checkpointLsn, HEADER_CHECKPOINT_LSN_OFFSET);
  page.writeUInt32LE(header.catalogRoot, HEADER_CATALOG_ROOT_OFFSET);
  page.writeUInt32LE(header.pageCount, HEADER_PAGE_COUNT_OFFSET);
  page.writeUInt32LE(header.livePages, HEADER_LIVE_PAGES_OFFSET);
  page.writeDoubleLE(header.writtenAtMs, HEADER_WRITTEN_AT_OFFSET);
  sealPage(page);
  return page;
}

function decodeHeader(page: Buffer, pageId: number): FileHeader | undefined {
  if (page[PAGE_TYPE_OFFSET] !== PAGE_TYPE.HEADER) return undefined;
  if (page.readUInt32LE(HEADER_MAGIC_OFFSET) !== HEADER_MAGIC) return undefined;
  if (!pageIsSound(page)) return undefined;
  const header: FileHeader = {
    checkpointLsn: page.readDoubleLE(HEADER_CHECKPOINT_LSN_OFFSET),
    catalogRoot: page.readUInt32LE(HEADER_CATALOG_ROOT_OFFSET),
    pageCount: page.readUInt32LE(HEADER_PAGE_COUNT_OFFSET),
    livePages: page.readUInt32LE(HEADER_LIVE_PAGES_OFFSET),
    writtenAtMs: page.readDoubleLE(HEADER_WRITTEN_AT_OFFSET),
  };
  // A header describes the file up to and including itself.
  if (header.pageCount !== pageId + 1) return undefined;
  if (page.readUInt16LE(HEADER_VERSION_OFFSET) !== FORMAT_VERSION) {
    fail('CORRUPTION', `page file format version ${page.readUInt16LE(HEADER_VERSION_OFFSET)} is not supported`);
  }
  return header;
}

/** fsync of a directory, so a created, renamed or deleted entry survives a crash. */
export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * fsyncDir on the thread pool: for maintenance that runs while requests are served (a directory
 * fsync waits for the file system's journal, which a concurrent checkpoint keeps busy).
 */
export async function fsyncDirAsync(dir: string): Promise<void> {
  const fd = await openAsync(dir, 'r');
  try {
    await fsyncAsync(fd);
  } finally {
    await closeAsync(fd);
  }
}

/**
 * mkdir -p whose result survives a crash: every directory it creates is fsynced into its parent
 * (a tenant directory that vanishes after a power cut would orphan an acknowledged signup).
 */
export function ensureDirDurable(dir: string): void {
  const first = mkdirSync(dir, { recursive: true });
  if (first === undefined) return;
  // Parents first: each new entry is made durable in the directory that holds it.
  const created: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    created.push(d);
    if (d === resolve(first) || dirname(d) === d) break;
  }
  for (const d of created.reverse()) fsyncDir(dirname(d));
  failpoint('mkdir:after-fsync');
}

/** What open found after the header it chose: bytes no header covers (a torn or damaged end). */
export interface PageFileTail {
  /** Offset of the first byte after the chosen header. */
  from: number;
  /** Offset of the file's last page: where the newest header was, if one was written. */
  lastPageOffset: number;
  bytes: number;
}

/**
 * An append-only file of checksummed pages. Reads are synchronous (pread, usually served by the
 * OS cache); appends are asynchronous. Callers make a page reachable only after its write has
 * completed (a checkpoint's pages become reachable with the header written after them).
 */
export class PageFile {
  readonly path: string;
  #fd: number;
  /** Pages in the file, including appends still in flight. */
  pageCount: number;

  private constructor(path: string, fd: number, pageCount: number) {
    this.path = path;
    this.#fd = fd;
    this.pageCount = pageCount;
  }

  /**
   * Opens (creating if absent) a page file at its last valid header. Bytes after that header are
   * left alone and reported as `tail`: the caller decides, once it knows whether the log still
   * covers them, to cut them (truncateTail) or to refuse to open. A new file appears atomically
   * (written and fsynced under a temporary name, then renamed), so a crash during creation
   * leaves either no file or a complete one; an empty file (left by older versions) is treated
   * as never created.
   * @throws CORRUPTION when no valid header exists
   */
  static open(path: string): { file: PageFile; header: FileHeader; tail: PageFileTail | undefined } {
    const temp = `${path}${CREATE_TEMP_SUFFIX}`;
    if (existsSync(temp)) {
      unlinkSync(temp);
      fsyncDir(dirname(path));
    }
    if (!existsSync(path) || fstatSizeOf(path) === 0) {
      const header: FileHeader = { checkpointLsn: 0, catalogRoot: 0, pageCount: 1, livePages: 1, writtenAtMs: Date.now() };
      const tfd = openSync(temp, 'w');
      try {
        writeFully(tfd, encodeHeader(header), 0);
        failpoint('create:before-sync');
        fsyncSync(tfd);
      } finally {
        closeSync(tfd);
      }
      renameSync(temp, path);
      failpoint('create:after-rename');
      fsyncDir(dirname(path));
      return { file: new PageFile(path, openSync(path, 'r+'), 1), header, tail: undefined };
    }
    const fd = openSync(path, 'r+');
    try {
      const size = fstatSync(fd).size;
      const page = Buffer.allocUnsafe(PAGE_SIZE);
      const lastPage = Math.floor(size / PAGE_SIZE) - 1;
      for (let id = lastPage; id >= 0; id--) {
        readFully(fd, page, id * PAGE_SIZE);
        const header = decodeHeader(page, id);
        if (header === undefined) continue;
        const from = (id + 1) * PAGE_SIZE;
        const tail = size === from ? undefined : { from, lastPageOffset: Math.max(from, lastPage * PAGE_SIZE), bytes: size - from };
        return { file: new PageFile(path, fd, id + 1), header, tail };
      }
      fail('CORRUPTION', `${path}: no valid header page in ${size} bytes (last page at offset ${Math.max(0, lastPage) * PAGE_SIZE})`, {
        file: path,
        offset: Math.max(0, lastPage) * PAGE_SIZE,
      });
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** Cuts the bytes after the open header (a torn checkpoint the log covers) and syncs. */
  truncateTail(): void {
    ftruncateSync(this.#fd, this.pageCount * PAGE_SIZE);
    fsyncSync(this.#fd);
  }

  /**
   * Reads `count` consecutive pages and verifies each checksum.
   * @throws CORRUPTION naming the file and page on a checksum mismatch
   */
  readPages(pageId: number, count: number): Buffer {
    if (pageId <= 0 || pageId + count > this.pageCount) {
      fail('CORRUPTION', `${this.path}: page ${pageId} (+${count}) is outside the file (${this.pageCount} pages)`, { file: this.path, page: pageId });
    }
    const bytes = Buffer.allocUnsafe(count * PAGE_SIZE);
    readFully(this.#fd, bytes, pageId * PAGE_SIZE);
    this.#verify(bytes, pageId, count);
    return bytes;
  }

  /**
   * readPages without blocking the event loop (for background work that reads many pages, like
   * compaction, whose reads may go to the disk).
   * @throws CORRUPTION naming the file and page on a checksum mismatch
   */
  async readPagesAsync(pageId: number, count: number): Promise<Buffer> {
    if (pageId <= 0 || pageId + count > this.pageCount) {
      fail('CORRUPTION', `${this.path}: page ${pageId} (+${count}) is outside the file (${this.pageCount} pages)`, { file: this.path, page: pageId });
    }
    const bytes = Buffer.allocUnsafe(count * PAGE_SIZE);
    for (let done = 0; done < bytes.length; ) {
      const { bytesRead } = await readAsync(this.#fd, bytes, done, bytes.length - done, pageId * PAGE_SIZE + done);
      if (bytesRead === 0) fail('CORRUPTION', `${this.path}: unexpected end of file at offset ${pageId * PAGE_SIZE + done}`, { file: this.path, page: pageId });
      done += bytesRead;
    }
    this.#verify(bytes, pageId, count);
    return bytes;
  }

  #verify(bytes: Buffer, pageId: number, count: number): void {
    for (let i = 0; i < count; i++) {
      const page = bytes.subarray(i * PAGE_SIZE, (i + 1) * PAGE_SIZE);
      if (!pageIsSound(page)) {
        fail('CORRUPTION', `${this.path}: checksum mismatch in page ${pageId + i} at offset ${(pageId + i) * PAGE_SIZE}`, {
          file: this.path,
          page: pageId + i,
        });
      }
    }
  }

  /** Reserves the next `count` page ids. */
  allocate(count: number): number {
    const first = this.pageCount;
    this.pageCount += count;
    return first;
  }

  /** Writes sealed pages at `firstPage` (from allocate); resolves when written, not synced. */
  async writePages(firstPage: number, bytes: Buffer): Promise<void> {
    for (let done = 0; done < bytes.length; ) {
      done += (await writeAsync(this.#fd, bytes, done, bytes.length - done, firstPage * PAGE_SIZE + done)).bytesWritten;
    }
  }

  /**
   * Writes sealed pages at `firstPage` (from allocate), consecutive, in one gathered write rather
   * than joined into one buffer first; resolves when written, not synced.
   */
  async writePageList(firstPage: number, pages: readonly Buffer[]): Promise<void> {
    await writeBuffersAt(this.#fd, pages, firstPage * PAGE_SIZE);
  }

  /** Resolves when everything written so far is on disk. */
  async sync(): Promise<void> {
    await fdatasyncAsync(this.#fd);
  }

  /** Size in bytes, in-flight appends included. */
  get bytes(): number {
    return this.pageCount * PAGE_SIZE;
  }

  /** Closes the file; reads fail from now on. The close itself runs on the thread pool. */
  close(): void {
    // Closing a file that was just written can wait for the disk: never on the event loop.
    if (this.#fd >= 0) close(this.#fd, () => undefined);
    this.#fd = -1;
  }
}

function fstatSizeOf(path: string): number {
  const fd = openSync(path, 'r');
  try {
    return fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
}

export function readFully(fd: number, buffer: Buffer, position: number): void {
  let done = 0;
  while (done < buffer.length) {
    const n = readSync(fd, buffer, done, buffer.length - done, position + done);
    if (n === 0) fail('CORRUPTION', `unexpected end of file at offset ${position + done}`);
    done += n;
  }
}

/**
 * Writes `buffers` one after another from `position` with writev (no joined copy), going on
 * after a short write from where it stopped.
 */
export async function writeBuffersAt(fd: number, buffers: readonly Buffer[], position: number): Promise<void> {
  let rest = buffers;
  let at = position;
  while (rest.length > 0) {
    let n = (await writevAsync(fd, rest as Buffer[], at)).bytesWritten;
    if (n === 0 && rest.some((b) => b.length > 0)) throw new Error(`writev at offset ${at} wrote nothing`);
    at += n;
    let i = 0;
    while (i < rest.length && n >= rest[i]!.length) n -= rest[i++]!.length;
    rest = i < rest.length && n > 0 ? [rest[i]!.subarray(n), ...rest.slice(i + 1)] : rest.slice(i);
  }
}

export function writeFully(fd: number, buffer: Buffer, position: number): void {
  let done = 0;
  while (done < buffer.length) {
    done += writeSync(fd, buffer, done, buffer.length - done, position + done);
  }
}
