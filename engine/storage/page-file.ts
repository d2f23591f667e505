import { closeSync, existsSync, fdatasync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, write, writeSync } from 'node:fs';
import { promisify } from 'node:util';
import { dirname } from 'node:path';
import { fail } from '../errors.js';
import { checksum32 } from './checksum.js';
import {
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
   * Opens (creating if absent) a page file and returns it with its last valid header. Bytes after
   * that header (a torn checkpoint) are cut off.
   * @throws CORRUPTION when no valid header exists
   */
  static open(path: string): { file: PageFile; header: FileHeader } {
    const created = !existsSync(path);
    const fd = openSync(path, created ? 'w+' : 'r+');
    try {
      if (created) {
        const header: FileHeader = { checkpointLsn: 0, catalogRoot: 0, pageCount: 1, livePages: 1, writtenAtMs: Date.now() };
        const page = encodeHeader(header);
        writeFully(fd, page, 0);
        fsyncSync(fd);
        fsyncDir(dirname(path));
        return { file: new PageFile(path, fd, 1), header };
      }
      const size = fstatSync(fd).size;
      const page = Buffer.allocUnsafe(PAGE_SIZE);
      for (let id = Math.floor(size / PAGE_SIZE) - 1; id >= 0; id--) {
        readFully(fd, page, id * PAGE_SIZE);
        const header = decodeHeader(page, id);
        if (header === undefined) continue;
        if (size !== (id + 1) * PAGE_SIZE) {
          ftruncateSync(fd, (id + 1) * PAGE_SIZE);
          fsyncSync(fd);
        }
        return { file: new PageFile(path, fd, id + 1), header };
      }
      fail('CORRUPTION', `${path}: no valid header page in ${size} bytes`, { file: path });
    } catch (err) {
      closeSync(fd);
      throw err;
    }
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
    for (let i = 0; i < count; i++) {
      const page = bytes.subarray(i * PAGE_SIZE, (i + 1) * PAGE_SIZE);
      if (!pageIsSound(page)) {
        fail('CORRUPTION', `${this.path}: checksum mismatch in page ${pageId + i} at offset ${(pageId + i) * PAGE_SIZE}`, {
          file: this.path,
          page: pageId + i,
        });
      }
    }
    return bytes;
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

  /** Resolves when everything written so far is on disk. */
  async sync(): Promise<void> {
    await fdatasyncAsync(this.#fd);
  }

  /** Size in bytes, in-flight appends included. */
  get bytes(): number {
    return this.pageCount * PAGE_SIZE;
  }

  close(): void {
    if (this.#fd >= 0) closeSync(this.#fd);
    this.#fd = -1;
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

export function writeFully(fd: number, buffer: Buffer, position: number): void {
  let done = 0;
  while (done < buffer.length) {
    done += writeSync(fd, buffer, done, buffer.length - done, position + done);
  }
}
