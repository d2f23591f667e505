import { cpSync, existsSync, readdirSync, renameSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DATA_FILE, PAGE_SIZE, PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { batchFor } from './batches.js';
import { runChild } from './child-process.js';
import { CREATION_STEPS, LEFT_BEHIND, TEMP_FILE, creationFiles, type CreationStep } from './creation-steps.js';
import { key, verifyCrashedStore } from './verify.js';

/**
 * States a power cut at the same step could leave instead (a SIGKILL keeps what the OS had
 * cached): an unsynced temp file may be empty or partial; a rename whose directory was not yet
 * fsynced may be lost, leaving the complete (fsynced) temp file under its temporary name.
 */
const POWER_CUT_VARIANTS: Record<CreationStep, Array<[string, (dir: string) => void]>> = {
  'mkdir:after-fsync': [],
  'create:before-sync': [
    ['an empty temp file', (d) => truncateSync(join(d, TEMP_FILE), 0)],
    ['half a temp file', (d) => truncateSync(join(d, TEMP_FILE), PAGE_SIZE / 2)],
  ],
  'create:after-rename': [['the rename lost', (d) => renameSync(join(d, DATA_FILE), join(d, TEMP_FILE))]],
};

/** Opens the store in `dir` (as the next start would), writes `n` batches, closes, reopens, reads. */
async function openWriteReopen(dir: string, n: number): Promise<void> {
  const cache = new PageCache<TreeNode>(4 * 1024 * 1024);
  const store = await TenantStore.open(dir, { cache, checkpointIntervalMs: 0 });
  expect(store.treeNames()).toEqual([]);
  expect(existsSync(join(dir, TEMP_FILE)), 'the temp file is removed on open').toBe(false);
  for (let seq = 1; seq <= n; seq++) await store.write(batchFor(0, seq));
  await store.close();
  const again = await TenantStore.open(dir, { cache, checkpointIntervalMs: 0 });
  expect(again.count('a')).toBe(n);
  expect(again.get('counter', Buffer.from('w0'))?.toString()).toBe(String(n));
  expect(again.get('a', key(0, n))?.toString()).toBe(`${key(0, n).toString()}:`.repeat(1 + (n % 7)));
  await again.close();
  expect(readdirSync(dir).filter((f) => f.startsWith(DATA_FILE))).toEqual([DATA_FILE]);
}

describe('a crash at each step of creating a store', () => {
  it.each(CREATION_STEPS)('SIGKILL at %s leaves a directory that opens as a new store', async (step) => {
    const root = tempDir('create');
    try {
      // A directory nothing has created yet, two levels deep: open makes both.
      const store = join(root.path, 'tenants', 't0');
      const child = runChild(['phase1', store, 'batch'], { TETRA_FAILPOINT: step });
      const exit = await child.exited;
      expect(child.stderr()).toBe('');
      expect(exit.signal, `the failpoint ${step} was never reached (stdout: ${child.stdout().slice(-200)})`).toBe('SIGKILL');
      // Killed inside TenantStore.open: nothing was written, so nothing was acknowledged.
      expect(child.stdout()).toBe('');
      expect(creationFiles(store)).toEqual(LEFT_BEHIND[step]);

      for (const [what, damage] of POWER_CUT_VARIANTS[step]) {
        const variant = join(root.path, `variant-${what.replaceAll(' ', '-')}`);
        cpSync(store, variant, { recursive: true });
        damage(variant);
        await expect(openWriteReopen(variant, 20), `${step}, then ${what}`).resolves.toBeUndefined();
      }

      // The very directory the child left: the store opens, works, and survives a reopen.
      await openWriteReopen(store, 60);
      await verifyCrashedStore(store, new Map([[0, 60]]));
    } finally {
      root.remove();
    }
  });
});
