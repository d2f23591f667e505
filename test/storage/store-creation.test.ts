import { createHash } from 'node:crypto';
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTetraError } from '../../engine/errors.js';
import { CREATE_TEMP_SUFFIX, DATA_FILE, PAGE_SIZE } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';
import { key, storeOptions } from '../helpers/store-fixture.js';

// What earlier crashes during creation left behind, and what open makes of it. The crash steps
// themselves (SIGKILL at each creation failpoint) are in test/crash/creation.crash.test.ts.

const newDir = dirsRemovedAfterEach();

const options = storeOptions();
const TEMP = `${DATA_FILE}${CREATE_TEMP_SUFFIX}`;
const value = (i: number) => Buffer.from(`value-${i}`);
const puts = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => ({ op: 'put' as const, tree: 'a', key: key(from + i), value: value(from + i) }));

function digests(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) files[f] = createHash('sha256').update(readFileSync(join(dir, f))).digest('hex');
  return files;
}

/** Opens `dir`, checks it is empty, writes, closes, reopens and reads back. */
async function opensAsNewStore(dir: string): Promise<void> {
  const store = await TenantStore.open(dir, options);
  expect(store.treeNames()).toEqual([]);
  expect(store.lsn).toBe(0);
  await store.write(puts(1, 5));
  await store.close();
  const again = await TenantStore.open(dir, options);
  expect(again.count('a')).toBe(5);
  expect(again.get('a', key(5))?.toString()).toBe(value(5).toString());
  await again.close();
  expect(statSync(join(dir, DATA_FILE)).size % PAGE_SIZE).toBe(0);
  expect(existsSync(join(dir, TEMP))).toBe(false);
}

describe('creating a store', () => {
  it('opens an existing zero-length data.tdb (left by older versions) as a new store', async () => {
    const dir = newDir('legacy-empty');
    writeFileSync(join(dir, DATA_FILE), '');
    await opensAsNewStore(dir);
  });

  it('replays the log into a zero-length data.tdb whose log starts at lsn 1', async () => {
    // An older version died after acknowledging writes but before data.tdb's first header was
    // durable: the log holds everything from the first record.
    const live = newDir('legacy-log-live');
    const crashed = newDir('legacy-log-crashed');
    const writer = await TenantStore.open(live, options);
    await writer.write(puts(1, 3));
    await writer.write(puts(4, 6));
    cpSync(live, crashed, { recursive: true }); // no checkpoint yet: the log starts at lsn 1
    await writer.close();
    writeFileSync(join(crashed, DATA_FILE), '');
    const recovered = await TenantStore.open(crashed, options);
    expect(recovered.recovered.records).toBe(2);
    expect(recovered.count('a')).toBe(6);
    await recovered.close();
  });

  it('refuses a zero-length data.tdb whose log starts later, instead of opening it empty', async () => {
    // data.tdb lost its contents but the log shows checkpoints happened: treating the file as
    // new would silently drop everything checkpointed, so the log gap is reported.
    const dir = newDir('emptied');
    const store = await TenantStore.open(dir, options);
    await store.write(puts(1, 5));
    await store.checkpoint();
    await store.write(puts(6, 10));
    await store.close();
    writeFileSync(join(dir, DATA_FILE), '');
    const err = await TenantStore.open(dir, options).then(() => undefined, (e: unknown) => e);
    expect(isTetraError(err, 'CORRUPTION'), String(err)).toBe(true);
    expect((err as Error).message).toMatch(/the log starts at lsn 3 but the page file's checkpoint is at lsn 0/);
  });

  it.each([
    ['complete', (b: Buffer) => b],
    ['empty', () => Buffer.alloc(0)],
    ['half written', (b: Buffer) => b.subarray(0, PAGE_SIZE / 2)],
  ])('removes a leftover %s data.tdb.new in a directory without data.tdb and creates the store', async (_what, shape) => {
    // Shapes a crash before the temp file's fsync or before its rename reached the disk can leave.
    const template = newDir('temp-template');
    await (await TenantStore.open(template, options)).close();
    const header = readFileSync(join(template, DATA_FILE));
    const dir = newDir('temp-left');
    writeFileSync(join(dir, TEMP), shape(header));
    await opensAsNewStore(dir);
  });

  it('removes a leftover data.tdb.new next to an existing store and keeps the store as it was', async () => {
    const dir = newDir('temp-beside');
    const store = await TenantStore.open(dir, options);
    await store.write(puts(1, 10));
    await store.close();
    const before = digests(dir);
    writeFileSync(join(dir, TEMP), Buffer.alloc(PAGE_SIZE, 0xab));
    const reopened = await TenantStore.open(dir, options);
    expect(existsSync(join(dir, TEMP))).toBe(false);
    expect(reopened.count('a')).toBe(10);
    await reopened.close();
    expect(digests(dir)).toEqual(before);
  });

  it('creates every missing parent directory of a new store', async () => {
    const root = newDir('nested');
    const dir = join(root, 'data', 'tenants', 't1');
    await opensAsNewStore(dir);
    expect(readdirSync(dir).filter((f) => f.startsWith(DATA_FILE))).toEqual([DATA_FILE]);
  });
});
