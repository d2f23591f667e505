import { createHash } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { TetraError } from '../../engine/errors.js';
import {
  DATA_FILE,
  HEADER_CATALOG_ROOT_OFFSET,
  HEADER_CHECKPOINT_LSN_OFFSET,
  HEADER_LIVE_PAGES_OFFSET,
  HEADER_MAGIC_OFFSET,
  HEADER_PAGE_COUNT_OFFSET,
  HEADER_VERSION_OFFSET,
  HEADER_WRITTEN_AT_OFFSET,
  PAGE_CHECKSUM_OFFSET,
  PAGE_SIZE,
  PAGE_TYPE_OFFSET,
  WalWriter,
} from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { key, openRefused, puts, storeOptions, storeWithThreeCheckpoints, value } from '../helpers/store-fixture.js';

// A bit flip in the newest checkpoint header of data.tdb. Open then falls back to the previous
// header; whether that is safe depends on the log: it must still hold every record after the
// previous checkpoint (so the fallback replays them), else open refuses and changes nothing.
// (test/storage/recovery.test.ts covers one refusal; this file covers every field and the replay
// case as a crash leaves it; manual-recovery.test.ts what an operator can do afterwards.)

const dirs: Array<{ remove: () => void }> = [];
const cases: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of cases.splice(0)) d.remove();
});

function newDir(label: string): string {
  const d = tempDir(label);
  dirs.push(d);
  return d.path;
}

const options = storeOptions();
const put = (i: number) => ({ op: 'put' as const, tree: 'a', key: key(i), value: value(i) });

/** Bytes of the header page to damage: every field, the checksum, and the zero padding. */
const HEADER_BYTES: Array<[string, number]> = [
  ['the checksum', PAGE_CHECKSUM_OFFSET + 1],
  ['the page type', PAGE_TYPE_OFFSET],
  ['the magic', HEADER_MAGIC_OFFSET],
  ['the format version', HEADER_VERSION_OFFSET],
  ['checkpointLsn', HEADER_CHECKPOINT_LSN_OFFSET + 6],
  ['catalogRoot', HEADER_CATALOG_ROOT_OFFSET],
  ['pageCount', HEADER_PAGE_COUNT_OFFSET],
  ['livePages', HEADER_LIVE_PAGES_OFFSET],
  ['writtenAt', HEADER_WRITTEN_AT_OFFSET + 5],
  ['the padding', PAGE_SIZE / 2],
  ['the last byte', PAGE_SIZE - 1],
];

/** Every file of `dir` with a digest of its bytes: equal exactly when the files are unchanged. */
function filesOf(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) files[f] = createHash('sha256').update(readFileSync(join(dir, f))).digest('hex');
  return files;
}

/** Flips every bit of the byte at offset `at` of data.tdb (flipping it again undoes it). */
function flip(dir: string, at: number): void {
  const path = join(dir, DATA_FILE);
  const bytes = readFileSync(path);
  bytes[at] = bytes[at]! ^ 0xff;
  writeFileSync(path, bytes);
}

function lastPageOffset(dir: string): number {
  return statSync(join(dir, DATA_FILE)).size - PAGE_SIZE;
}

const openError = (dir: string): Promise<TetraError> => openRefused(dir, options);

/** A store whose checkpoints all completed, keys 1..30 (what every clean close leaves). */
const completedStore = (): Promise<string> => storeWithThreeCheckpoints(newDir('completed'), options);

/**
 * What a crash leaves between "the newest checkpoint's header is durable" and "the log it made
 * redundant is deleted": the directory is copied at the moment the checkpoint of lsn 8 calls
 * deleteSegmentsThrough, so the log still holds records 5..8 (the previous checkpoint is at 4).
 * Record r puts keys 5r-4..5r.
 */
async function headerDurableLogKept(): Promise<string> {
  const live = newDir('kept-live');
  const crashed = newDir('kept-crashed');
  const store = await TenantStore.open(live, options);
  for (let r = 1; r <= 4; r++) await store.write(puts(5 * r - 4, 5 * r));
  await store.checkpoint();
  for (let r = 5; r <= 8; r++) await store.write(puts(5 * r - 4, 5 * r));
  const deleteSegmentsThrough = WalWriter.prototype.deleteSegmentsThrough;
  const spy = vi.spyOn(WalWriter.prototype, 'deleteSegmentsThrough').mockImplementation(function (this: WalWriter, lsn: number) {
    cpSync(live, crashed, { recursive: true });
    return deleteSegmentsThrough.call(this, lsn);
  });
  await store.checkpoint();
  expect(spy).toHaveBeenCalledTimes(1);
  spy.mockRestore();
  await store.close();
  return crashed;
}

// Each state is built once; every case works on its own copy.
const templates = { completed: '', kept: '' };
beforeAll(async () => {
  templates.completed = await completedStore();
  templates.kept = await headerDurableLogKept();
});
afterAll(() => {
  for (const d of dirs.splice(0)) d.remove();
});

function copyOf(template: string): string {
  const dir = tempDir('case');
  cases.push(dir);
  cpSync(template, dir.path, { recursive: true });
  return dir.path;
}

describe('a damaged newest header whose log was deleted', () => {
  it.each(HEADER_BYTES)('refuses to open when %s is damaged, naming data.tdb and the page, and changes nothing', async (_what, at) => {
    const dir = copyOf(templates.completed);
    const data = join(dir, DATA_FILE);
    const page = lastPageOffset(dir);
    flip(dir, page + at);
    const before = filesOf(dir);

    const err = await openError(dir);
    expect(err.message).toContain(`${data}: the newest checkpoint header (page at offset ${page}) is damaged`);
    expect(err.details).toEqual({ file: data, offset: page });
    expect(filesOf(dir), 'the refusal left every file as it was').toEqual(before);

    // Nothing was half repaired: a second attempt meets the same damage and says the same.
    const again = await openError(dir);
    expect(again.message).toBe(err.message);
    expect(filesOf(dir)).toEqual(before);

    // The acknowledged data is all still there: undo the damage and everything opens.
    flip(dir, page + at);
    const store = await TenantStore.open(dir, options);
    expect(store.count('a')).toBe(30);
    expect(store.get('a', key(30))?.toString()).toBe(value(30).toString());
    await store.close();
  });

  it('refuses when a compaction left the damaged header as the only one after the empty page 0', async () => {
    const dir = copyOf(templates.completed);
    const store = await TenantStore.open(dir, options);
    await store.compact();
    await store.close();
    const page = lastPageOffset(dir);
    flip(dir, page + HEADER_CHECKPOINT_LSN_OFFSET + 6);
    const before = filesOf(dir);
    const err = await openError(dir);
    expect(err.details).toEqual({ file: join(dir, DATA_FILE), offset: page });
    expect(err.message).toContain('(lsn 0)');
    expect(filesOf(dir)).toEqual(before);
  });
});

describe('a damaged newest header whose log is still there', () => {
  it.each(HEADER_BYTES)('falls back to the previous header when %s is damaged and replays every acknowledged write', async (_what, at) => {
    const dir = copyOf(templates.kept);
    const page = lastPageOffset(dir);
    flip(dir, page + at);

    const store = await TenantStore.open(dir, options);
    // The fallback to the checkpoint at lsn 4 replayed records 5..8 from the log.
    expect(store.recovered.records).toBe(4);
    expect(store.lsn).toBe(8);
    expect(store.count('a')).toBe(40);
    for (let i = 1; i <= 40; i++) expect(store.get('a', key(i))?.toString(), `key ${i}`).toBe(value(i).toString());
    await store.write([put(41)]);
    await store.close();

    // The damaged page is gone (cut before the replay checkpointed): the store reopens cleanly.
    const bytes = readFileSync(join(dir, DATA_FILE));
    expect(bytes.length).toBeGreaterThan(page);
    const reopened = await TenantStore.open(dir, options);
    expect(reopened.recovered.records).toBe(0);
    expect(reopened.count('a')).toBe(41);
    await reopened.close();
  });

  it('refuses, and changes nothing, when a record of that log is damaged too (the log is checked before the tail is cut)', async () => {
    const dir = copyOf(templates.kept);
    const page = lastPageOffset(dir);
    flip(dir, page + 20);
    const segment = readdirSync(dir).find((f) => f.startsWith('wal-') && parseInt(f.slice(4, 20), 16) <= 5 && readFileSync(join(dir, f)).length > 64)!;
    const walPath = join(dir, segment);
    const wal = readFileSync(walPath);
    // A byte inside the first record's payload: a later valid record vouches it was synced.
    wal[16 + 12 + 3] = wal[16 + 12 + 3]! ^ 0xff;
    writeFileSync(walPath, wal);
    const before = filesOf(dir);
    const err = await openError(dir);
    expect(err.message).toContain(segment);
    expect(filesOf(dir)).toEqual(before);
  });

  it('without damage opens at the newest header and replays nothing', async () => {
    // The control for the cases above: the fallback, not the crash state, makes them replay.
    const dir = copyOf(templates.kept);
    const store = await TenantStore.open(dir, options);
    expect(store.recovered.records).toBe(0);
    expect(store.count('a')).toBe(40);
    await store.close();
  });
});
