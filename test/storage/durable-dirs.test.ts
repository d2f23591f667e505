import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DATA_FILE, ensureDirDurable, PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantRegistry, TenantStore } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';

// A power cut cannot be simulated here, so this records what the engine asks the OS to make
// durable: every fsync, by the path its descriptor was opened with. A directory entry (a new
// tenant directory in tenants/, data.tdb in the tenant directory) survives a power cut only once
// the directory holding it was fsynced after the entry was made.

const fsyncs = vi.hoisted(() => ({ paths: [] as string[] }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const opened = new Map<number, string>();
  return {
    ...fs,
    openSync: (...args: Parameters<typeof fs.openSync>) => {
      const fd = fs.openSync(...args);
      opened.set(fd, resolve(String(args[0])));
      return fd;
    },
    fsyncSync: (fd: number) => {
      fsyncs.paths.push(opened.get(fd) ?? `fd ${fd}`);
      fs.fsyncSync(fd);
    },
  };
});

const dirs: Array<{ remove: () => void }> = [];
beforeEach(() => {
  fsyncs.paths.length = 0;
});
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

function newDir(label: string): string {
  const d = tempDir(label);
  dirs.push(d);
  return resolve(d.path);
}

const options = () => ({ cache: new PageCache<TreeNode>(4 * 1024 * 1024), checkpointIntervalMs: 0 });

describe('ensureDirDurable', () => {
  it('fsyncs the parent of every directory it creates, outermost first', () => {
    const root = newDir('durable');
    ensureDirDurable(join(root, 'a', 'b', 'c'));
    expect(fsyncs.paths).toEqual([root, join(root, 'a'), join(root, 'a', 'b')]);
  });

  it('fsyncs only the parents of the directories that were missing', () => {
    const root = newDir('durable-partial');
    mkdirSync(join(root, 'a'));
    ensureDirDurable(join(root, 'a', 'b', 'c'));
    expect(fsyncs.paths).toEqual([join(root, 'a'), join(root, 'a', 'b')]);
  });

  it('fsyncs nothing when the directory exists', () => {
    const root = newDir('durable-exists');
    ensureDirDurable(root);
    expect(fsyncs.paths).toEqual([]);
  });
});

describe('a new tenant', () => {
  it('is made durable in tenants/ before its data.tdb is created and fsynced into its directory', async () => {
    const dataDir = newDir('tenant-new');
    mkdirSync(join(dataDir, 'tenants'));
    const registry = new TenantRegistry({ dataDir, idleCloseMs: 0, ...options() });
    await registry.use('t1', (store) => store.write([{ op: 'put', tree: 'a', key: Buffer.from('k'), value: Buffer.from('v') }]));
    const tenants = join(dataDir, 'tenants');
    const tenant = join(tenants, 't1');
    const data = join(tenant, DATA_FILE);
    const at = (path: string) => fsyncs.paths.indexOf(path);
    expect(at(tenants), `tenants/ was fsynced (fsyncs: ${fsyncs.paths.join(', ')})`).toBeGreaterThanOrEqual(0);
    // data.tdb's header is synced under its temporary name, then the rename is made durable.
    expect(at(`${data}.new`)).toBeGreaterThan(at(tenants));
    expect(fsyncs.paths.indexOf(tenant, at(`${data}.new`))).toBeGreaterThan(at(`${data}.new`));
    await registry.close();
  });

  it('creates and fsyncs the data directory and tenants/ when they do not exist yet', async () => {
    const root = newDir('tenant-fresh');
    const dataDir = join(root, 'data');
    const store = await TenantStore.open(join(dataDir, 'tenants', 't1'), options());
    expect(fsyncs.paths.slice(0, 3)).toEqual([root, dataDir, join(dataDir, 'tenants')]);
    await store.close();
  });

  it('fsyncs no parent directory when an existing tenant opens', async () => {
    const dataDir = newDir('tenant-old');
    const tenant = join(dataDir, 'tenants', 't1');
    await (await TenantStore.open(tenant, options())).close();
    fsyncs.paths.length = 0;
    const store = await TenantStore.open(tenant, options());
    await store.close();
    expect(fsyncs.paths).not.toContain(join(dataDir, 'tenants'));
    expect(fsyncs.paths).not.toContain(dataDir);
  });
});
