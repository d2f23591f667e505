import { cpSync, readdirSync, readFileSync, statSync, truncateSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isTetraError, type TetraError } from '../../engine/errors.js';
import { DATA_FILE, PAGE_SIZE, PageCache, WAL_FRAME_HEADER_SIZE, WAL_SEGMENT_HEADER_SIZE, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { openRefused } from '../helpers/store-fixture.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

const cache = new PageCache<TreeNode>(8 * 1024 * 1024);
const options = { cache, fsync: 'batch' as const, checkpointIntervalMs: 0 };
const key = (i: number) => Buffer.from(`key-${String(i).padStart(4, '0')}`);
const value = (i: number) => Buffer.from(`value-${i}-`.repeat(1 + (i % 5)));

/** A store with `n` batches in its WAL only (never checkpointed), copied as a crash would leave it. */
async function crashedStore(n: number): Promise<{ dir: string; wal: string; recordStarts: number[] }> {
  const live = tempDir('live');
  const copy = tempDir('crashed');
  dirs.push(live, copy);
  const store = await TenantStore.open(live.path, options);
  for (let i = 1; i <= n; i++) {
    await store.write([
      { op: 'put', tree: 'a', key: key(i), value: value(i) },
      { op: 'put', tree: 'b', key: key(i), value: value(i) },
    ]);
  }
  // Copy while open: the files are exactly what a SIGKILL right now would leave behind.
  cpSync(live.path, copy.path, { recursive: true });
  await store.close();
  const wal = readdirSync(copy.path).find((f) => f.startsWith('wal-'))!;
  const bytes = readFileSync(join(copy.path, wal));
  const recordStarts: number[] = [];
  for (let pos = WAL_SEGMENT_HEADER_SIZE; pos < bytes.length; pos += WAL_FRAME_HEADER_SIZE + bytes.readUInt32LE(pos)) recordStarts.push(pos);
  expect(recordStarts.length).toBe(n);
  return { dir: copy.path, wal: join(copy.path, wal), recordStarts };
}

function snapshot(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const f of readdirSync(dir)) files.set(f, readFileSync(join(dir, f)));
  return files;
}

function restore(dir: string, files: Map<string, Buffer>): void {
  for (const f of readdirSync(dir)) if (!files.has(f)) writeFileSync(join(dir, f), '');
  for (const [f, b] of files) writeFileSync(join(dir, f), b);
}

async function openExpectingCorruption(dir: string, file: string, offset: number): Promise<void> {
  const { message } = await openRefused(dir, options);
  expect(message).toContain(file);
  expect(message).toContain(`offset ${offset}`);
}

describe('WAL recovery', () => {
  it('replays every acknowledged batch after a crash', async () => {
    const { dir } = await crashedStore(25);
    const store = await TenantStore.open(dir, options);
    expect(store.recovered.records).toBe(25);
    for (let i = 1; i <= 25; i++) {
      expect(store.get('a', key(i))?.toString()).toBe(value(i).toString());
      expect(store.get('b', key(i))?.toString()).toBe(value(i).toString());
    }
    await store.close();
  });

  it('cuts a torn last record at every byte offset and keeps everything before it', async () => {
    const n = 12;
    const { dir, wal, recordStarts } = await crashedStore(n);
    const files = snapshot(dir);
    const last = recordStarts[n - 1]!;
    const end = statSync(wal).size;
    for (let cut = last; cut < end; cut++) {
      restore(dir, files);
      truncateSync(wal, cut);
      const store = await TenantStore.open(dir, options);
      try {
        expect(store.count('a'), `cut at ${cut}`).toBe(n - 1);
        expect(store.get('a', key(n)), `cut at ${cut}`).toBeUndefined();
        expect(store.get('b', key(n - 1))?.toString()).toBe(value(n - 1).toString());
        // The log is usable afterwards: a new write lands and survives another crash-free reopen.
        await store.write([{ op: 'put', tree: 'a', key: key(999), value: value(999) }]);
      } finally {
        await store.close();
      }
      const again = await TenantStore.open(dir, options);
      expect(again.count('a')).toBe(n);
      expect(again.get('a', key(999))?.toString()).toBe(value(999).toString());
      await again.close();
    }
  });

  it('treats zeros or garbage after the last record as a torn tail', async () => {
    const { dir, wal } = await crashedStore(5);
    appendFileSync(wal, Buffer.alloc(3000));
    appendFileSync(wal, Buffer.from([7, 0, 0, 0, 1, 2, 3]));
    const store = await TenantStore.open(dir, options);
    expect(store.count('a')).toBe(5);
    await store.close();
  });

  it.each([
    ['the length field', 0],
    ['the checksum', 5],
    ['the payload', WAL_FRAME_HEADER_SIZE + 3],
  ])('refuses to open when a bit flips in %s of a middle record, naming file and offset', async (_what, delta) => {
    const { dir, wal, recordStarts } = await crashedStore(10);
    const bytes = readFileSync(wal);
    const at = recordStarts[4]! + delta;
    bytes[at] = bytes[at]! ^ 0x10;
    writeFileSync(wal, bytes);
    await openExpectingCorruption(dir, wal, recordStarts[4]!);
    // Nothing was changed by the failed open: the same error again, file intact.
    expect(readFileSync(wal).equals(bytes)).toBe(true);
    await openExpectingCorruption(dir, wal, recordStarts[4]!);
  });

  it('resumes the log after a checkpoint that became durable before the records it covers', async () => {
    // The header of checkpoint 15 reached the disk, the log only up to record 10: a legal crash
    // state (the checkpoint holds 11..15). The log must resume at 16 without a gap.
    const live = tempDir('ahead');
    dirs.push(live);
    const store = await TenantStore.open(live.path, options);
    for (let i = 1; i <= 10; i++) await store.write([{ op: 'put', tree: 'a', key: key(i), value: value(i) }]);
    const firstWal = readdirSync(live.path).find((f) => f.startsWith('wal-'))!;
    const shortLog = readFileSync(join(live.path, firstWal));
    for (let i = 11; i <= 15; i++) await store.write([{ op: 'put', tree: 'a', key: key(i), value: value(i) }]);
    await store.checkpoint();
    const crashed = tempDir('ahead-crashed');
    dirs.push(crashed);
    cpSync(live.path, crashed.path, { recursive: true });
    await store.close();
    for (const f of readdirSync(crashed.path)) if (f.startsWith('wal-')) writeFileSync(join(crashed.path, f), '');
    writeFileSync(join(crashed.path, firstWal), shortLog);

    const resumed = await TenantStore.open(crashed.path, options);
    expect(resumed.count('a')).toBe(15);
    await resumed.write([{ op: 'put', tree: 'a', key: key(16), value: value(16) }]);
    const again = tempDir('ahead-again');
    dirs.push(again);
    cpSync(crashed.path, again.path, { recursive: true }); // crash again, before any checkpoint
    await resumed.close();
    const reopened = await TenantStore.open(again.path, options);
    expect(reopened.count('a')).toBe(16);
    expect(reopened.get('a', key(16))?.toString()).toBe(value(16).toString());
    await reopened.close();
  });

  it('opens a hot copy taken log first, page file second (docs/operations.md)', async () => {
    const live = tempDir('hot');
    const copy = tempDir('hot-copy');
    dirs.push(live, copy);
    const store = await TenantStore.open(live.path, options);
    for (let i = 1; i <= 20; i++) await store.write([{ op: 'put', tree: 'a', key: key(i), value: value(i) }]);
    await store.checkpoint();
    for (let i = 21; i <= 40; i++) await store.write([{ op: 'put', tree: 'a', key: key(i), value: value(i) }]);
    for (const f of readdirSync(live.path)) if (f.startsWith('wal-')) cpSync(join(live.path, f), join(copy.path, f));
    // Meanwhile the store moves on: more writes and a checkpoint that deletes the old log.
    for (let i = 41; i <= 60; i++) await store.write([{ op: 'put', tree: 'a', key: key(i), value: value(i) }]);
    await store.checkpoint();
    cpSync(join(live.path, DATA_FILE), join(copy.path, DATA_FILE));
    await store.close();
    const restored = await TenantStore.open(copy.path, options);
    expect(restored.count('a')).toBe(60);
    await restored.write([{ op: 'put', tree: 'a', key: key(61), value: value(61) }]);
    await restored.close();
    const again = await TenantStore.open(copy.path, options);
    expect(again.count('a')).toBe(61);
    await again.close();
  });

  it('refuses to open when the log no longer reaches back to the checkpoint', async () => {
    const live = tempDir('gap');
    dirs.push(live);
    const store = await TenantStore.open(live.path, options);
    await store.write([{ op: 'put', tree: 'a', key: key(1), value: value(1) }]);
    await store.checkpoint(); // header 1
    await store.write([{ op: 'put', tree: 'a', key: key(2), value: value(2) }]);
    await store.checkpoint(); // header 2; the log before it is deleted
    await store.write([{ op: 'put', tree: 'a', key: key(3), value: value(3) }]);
    await store.close(); // header 3
    // Damage the newest header: the file falls back to header 2's state, which the log cannot
    // bring forward (it starts after header 3) -> corruption, not silently lost writes.
    const data = join(live.path, DATA_FILE);
    const bytes = readFileSync(data);
    bytes[bytes.length - PAGE_SIZE + 20] = bytes[bytes.length - PAGE_SIZE + 20]! ^ 0xff;
    writeFileSync(data, bytes);
    const err = await TenantStore.open(live.path, options).then(() => undefined, (e: unknown) => e);
    expect(isTetraError(err, 'CORRUPTION'), String(err)).toBe(true);
    expect((err as Error).message).toContain(`${data}: the newest checkpoint header (page at offset ${bytes.length - PAGE_SIZE}) is damaged`);
    expect((err as TetraError).details).toEqual({ file: data, offset: bytes.length - PAGE_SIZE });
    // Refusing changed nothing: the damaged file is left exactly as it was, for recovery by hand.
    expect(readFileSync(data).equals(bytes)).toBe(true);
  });

  it('reports a damaged tree page as CORRUPTION naming the file and page', async () => {
    const live = tempDir('page');
    dirs.push(live);
    const store = await TenantStore.open(live.path, options);
    await store.write(Array.from({ length: 400 }, (_, i) => ({ op: 'put' as const, tree: 'a', key: key(i), value: value(i) })));
    await store.close();
    const data = join(live.path, DATA_FILE);
    const bytes = readFileSync(data);
    bytes[PAGE_SIZE + 100] = bytes[PAGE_SIZE + 100]! ^ 0x01; // page 1 is the first leaf written
    writeFileSync(data, bytes);
    const fresh = new PageCache<TreeNode>(1024 * 1024);
    const reopened = await TenantStore.open(live.path, { ...options, cache: fresh });
    let err: unknown;
    try {
      for (const _ of reopened.scan('a')) {
        // reading every leaf reaches the damaged one
      }
    } catch (e) {
      err = e;
    }
    expect(isTetraError(err, 'CORRUPTION'), String(err)).toBe(true);
    expect((err as Error).message).toContain(`${data}: checksum mismatch in page 1`);
    await reopened.close().catch(() => undefined);
  });
});
