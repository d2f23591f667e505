import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantRegistry } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { batchFor } from './batches.js';
import { runChild } from './child-process.js';
import { CREATION_STEPS, LEFT_BEHIND, creationFiles } from './creation-steps.js';
import { parseAcks, verifyCrashedStore } from './verify.js';

/** The acknowledgements of one writer (tenant t<w> holds writer w's batches only). */
const only = (acks: Map<number, number>, writer: number) => new Map([...acks].filter(([w]) => w === writer));

describe('a crash while the registry creates a tenant next to a tenant holding data', () => {
  // One clean run that creates tenant t0 in a fresh data directory, shared by the cases below
  // (each works on its own copy).
  const base = tempDir('registry-base');
  beforeAll(async () => {
    const first = runChild(['tenants', base.path, 'batch', '0', '120']);
    expect((await first.exited).code, first.stderr()).toBe(0);
    expect(first.stdout()).toContain('closed');
    expect(parseAcks(first.stdout()).get(0)).toBe(120);
  });
  afterAll(() => base.remove());

  it.each(CREATION_STEPS)('SIGKILL at %s loses nothing acknowledged, and the new tenant opens on restart', async (step) => {
    const root = tempDir('registry');
    try {
      const dataDir = join(root.path, 'data');
      cpSync(base.path, dataDir, { recursive: true });
      const t0 = join(dataDir, 'tenants', 't0');
      const t1 = join(dataDir, 'tenants', 't1');

      // t0 exists, so opening it reaches none of the creation steps (its 40 batches are
      // acknowledged); creating t1 reaches them all.
      const crashed = runChild(['tenants', dataDir, 'batch', '0,1', '40'], { TETRA_FAILPOINT: step });
      const exit = await crashed.exited;
      expect(crashed.stderr()).toBe('');
      expect(exit.signal, `the failpoint ${step} was never reached (stdout tail: ${crashed.stdout().slice(-200)})`).toBe('SIGKILL');
      const acked = parseAcks(crashed.stdout());
      expect(acked).toEqual(new Map([[0, 160]]));
      expect(existsSync(t1), 'the tenant directory was created (and fsynced into tenants/)').toBe(true);
      expect(creationFiles(t1)).toEqual(LEFT_BEHIND[step]);
      await verifyCrashedStore(t0, only(acked, 0));
      await verifyCrashedStore(t1, only(acked, 1));

      // Restart: a registry opens both tenants; the new one works and survives a reopen.
      const cache = new PageCache<TreeNode>(4 * 1024 * 1024);
      const registry = new TenantRegistry({ dataDir, cache, idleCloseMs: 0, checkpointIntervalMs: 0 });
      await registry.use('t1', async (store) => {
        expect(store.treeNames()).toEqual([]);
        for (let seq = 1; seq <= 30; seq++) await store.write(batchFor(1, seq));
      });
      expect(await registry.use('t0', (store) => store.get('counter', Buffer.from('w0'))?.toString())).toBe('160');
      await registry.close();
      const reopened = new TenantRegistry({ dataDir, cache, idleCloseMs: 0, checkpointIntervalMs: 0 });
      expect(await reopened.use('t1', (store) => store.count('a'))).toBe(30);
      await reopened.close();

      // With both directories in place the directory failpoint is not reached: a writer armed
      // with it runs to the end.
      const after = runChild(['tenants', dataDir, 'batch', '0,1', '40'], { TETRA_FAILPOINT: 'mkdir:after-fsync' });
      const afterExit = await after.exited;
      expect(after.stderr()).toBe('');
      expect(afterExit.code, 'no directory is created for tenants that exist').toBe(0);
      const final = parseAcks(after.stdout());
      expect(final).toEqual(new Map([[0, 200], [1, 70]]));
      await verifyCrashedStore(t0, only(final, 0));
      await verifyCrashedStore(t1, only(final, 1));
    } finally {
      root.remove();
    }
  });

  it('reaches the directory failpoint when a first tenant creates the data directory itself', async () => {
    const root = tempDir('registry-fresh');
    try {
      const dataDir = join(root.path, 'data');
      const crashed = runChild(['tenants', dataDir, 'batch', '0', '10'], { TETRA_FAILPOINT: 'mkdir:after-fsync' });
      expect((await crashed.exited).signal, crashed.stderr()).toBe('SIGKILL');
      expect(parseAcks(crashed.stdout()).size).toBe(0);
      // data/, data/tenants/ and data/tenants/t0 were all made before the kill.
      const t0 = join(dataDir, 'tenants', 't0');
      expect(creationFiles(t0)).toEqual(LEFT_BEHIND['mkdir:after-fsync']);
      const registry = new TenantRegistry({ dataDir, cache: new PageCache<TreeNode>(4 * 1024 * 1024), idleCloseMs: 0, checkpointIntervalMs: 0 });
      await registry.use('t0', async (store) => {
        for (let seq = 1; seq <= 10; seq++) await store.write(batchFor(0, seq));
      });
      await registry.close();
      await verifyCrashedStore(t0, new Map([[0, 10]]));
    } finally {
      root.remove();
    }
  });
});
