import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, renameSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isTetraError, type TetraError } from '../../engine/errors.js';
import { DATA_FILE, HEADER_CHECKPOINT_LSN_OFFSET, listSegments, PAGE_SIZE, WAL_FRAME_HEADER_SIZE } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';
import { key, openRefused, puts, storeOptions, storeWithThreeCheckpoints, value } from '../helpers/store-fixture.js';

// The last-resort steps of docs/operations.md ("Recovering from a damaged store"), followed
// literally: the store refuses, the operator cuts the files back as documented, and the store
// then opens at the older state it promises, and keeps working.

const newDir = dirsRemovedAfterEach();

const options = storeOptions();

/** The header-finding command as docs/operations.md prints it. */
const FIND_HEADER = (() => {
  const doc = readFileSync(fileURLToPath(new URL('../../docs/operations.md', import.meta.url)), 'utf8');
  const match = /node -e '([^']+)' "\$OFFSET"/.exec(doc);
  if (match === null) throw new Error('docs/operations.md no longer shows the header-finding command');
  return match[1]!;
})();

/** Runs the documented command in `dir`; returns [length to truncate data.tdb to, checkpoint lsn]. */
function findHeader(dir: string, offset: number): [number, number] {
  const out = execFileSync(process.execPath, ['-e', FIND_HEADER, String(offset)], { cwd: dir, encoding: 'utf8' }).trim();
  const [length, lsn] = out.split(' ').map(Number);
  return [length!, lsn!];
}

/** Moves the named WAL segments into a directory aside. */
function moveAside(dir: string, names: string[]): void {
  const aside = newDir('aside');
  for (const name of names) renameSync(join(dir, name), join(aside, name));
}

const refusal = (dir: string): Promise<TetraError> => openRefused(dir, options);

/** Opens at the state holding exactly keys 1..n, writes one more, reopens. */
async function opensWith(dir: string, n: number, lsn: number): Promise<void> {
  const store = await TenantStore.open(dir, options);
  expect(store.lsn).toBe(lsn);
  expect(store.count('a')).toBe(n);
  for (let i = 1; i <= n; i++) expect(store.get('a', key(i))?.toString(), `key ${i}`).toBe(value(i).toString());
  await store.write(puts(1000, 1000));
  await store.close();
  const again = await TenantStore.open(dir, options);
  expect(again.count('a')).toBe(n + 1);
  expect(again.lsn).toBe(lsn + 1);
  await again.close();
}

function flipByte(path: string, at: number): void {
  const bytes = readFileSync(path);
  bytes[at] = bytes[at]! ^ 0xff;
  writeFileSync(path, bytes);
}

const walFiles = (dir: string) => readdirSync(dir).filter((f) => f.startsWith('wal-'));

/** Three checkpoints (lsn 1: keys 1..10, lsn 2: 11..20, lsn 3: 21..30), the log deleted up to the last. */
const checkpointedStore = (): Promise<string> => storeWithThreeCheckpoints(newDir('manual'), options);

describe('going back to an older checkpoint by hand (docs/operations.md)', () => {
  it('after a damaged newest header: cut data.tdb at the previous header, move the log aside', async () => {
    const dir = await checkpointedStore();
    const data = join(dir, DATA_FILE);
    const damaged = readFileSync(data).length - PAGE_SIZE;
    flipByte(data, damaged + HEADER_CHECKPOINT_LSN_OFFSET);
    expect((await refusal(dir)).details).toEqual({ file: data, offset: damaged });

    const [length, lsn] = findHeader(dir, damaged);
    expect(lsn).toBe(2);
    truncateSync(data, length);
    moveAside(dir, walFiles(dir));
    await opensWith(dir, 20, 2);
  });

  it('repeats the step when the previous header is damaged too', async () => {
    const dir = await checkpointedStore();
    const data = join(dir, DATA_FILE);
    const newest = readFileSync(data).length - PAGE_SIZE;
    const [, previousLsn] = findHeader(dir, newest);
    expect(previousLsn).toBe(2);
    const previous = findHeader(dir, newest)[0] - PAGE_SIZE;
    flipByte(data, newest + HEADER_CHECKPOINT_LSN_OFFSET);
    flipByte(data, previous + HEADER_CHECKPOINT_LSN_OFFSET);

    expect((await refusal(dir)).details).toEqual({ file: data, offset: newest });
    truncateSync(data, findHeader(dir, newest)[0]);
    moveAside(dir, walFiles(dir));
    // That header is the damaged one: the store refuses again, naming it.
    expect((await refusal(dir)).details).toEqual({ file: data, offset: previous });
    const [length, lsn] = findHeader(dir, previous);
    expect(lsn).toBe(1);
    truncateSync(data, length);
    await opensWith(dir, 10, 1);
  });

  it('after a damaged tree page: cut data.tdb at the header before that page', async () => {
    const dir = await checkpointedStore();
    const data = join(dir, DATA_FILE);
    // The first page the last checkpoint (lsn 3) wrote, right after the header of lsn 2, is tree
    // a's rewritten leaf: the newest trees refer to it, the checkpoint at lsn 2 cannot.
    const [afterPreviousHeader] = findHeader(dir, readFileSync(data).length - PAGE_SIZE);
    flipByte(data, afterPreviousHeader + 100);
    const store = await TenantStore.open(dir, options);
    let err: unknown;
    try {
      for (const _ of store.scan('a')) {
        // reading every leaf reaches the damaged one
      }
    } catch (e) {
      err = e;
    }
    await store.close();
    expect(isTetraError(err, 'CORRUPTION'), String(err)).toBe(true);
    const offset = Number(/at offset (\d+)/.exec((err as Error).message)?.[1]);
    expect(offset).toBe(afterPreviousHeader);

    const [length, lsn] = findHeader(dir, offset);
    expect(lsn).toBe(2);
    truncateSync(data, length);
    moveAside(dir, walFiles(dir));
    await opensWith(dir, 20, 2);
  });
});

describe('keeping the log up to a damaged record by hand (docs/operations.md)', () => {
  it('cuts the named segment at the named offset and moves the later segments aside', async () => {
    // Never checkpointed, several segments: a crash copy whose whole state is in the log.
    const live = newDir('wal-live');
    const dir = newDir('wal-crashed');
    const store = await TenantStore.open(live, { ...options, walSegmentBytes: 2048 });
    for (let r = 0; r < 30; r++) await store.write(puts(5 * r + 1, 5 * r + 5));
    cpSync(live, dir, { recursive: true });
    await store.close();
    const segments = listSegments(dir);
    expect(segments.length).toBeGreaterThan(3);

    // A byte of the third record's payload in the second segment, a closed one.
    const damaged = segments[1]!;
    const bytes = readFileSync(damaged.path);
    let at = 16;
    for (let i = 0; i < 2; i++) at += WAL_FRAME_HEADER_SIZE + bytes.readUInt32LE(at);
    flipByte(damaged.path, at + WAL_FRAME_HEADER_SIZE + 10);
    const err = await refusal(dir);
    expect(err.details).toEqual({ file: damaged.path, offset: at });
    expect(err.message).toContain('in a closed segment');

    truncateSync(damaged.path, at);
    moveAside(dir, segments.slice(2).map((s) => s.path.slice(dir.length + 1)));
    // Records before the damaged one (lsn damaged.firstLsn + 2) are kept: keys of records 1..lsn-1.
    const kept = damaged.firstLsn + 1;
    await opensWith(dir, 5 * kept, kept);
  });
});
