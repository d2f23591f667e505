import { describe, expect, it } from 'vitest';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { runChild } from './child-process.js';
import { parseAcks, verifyCrashedStore } from './verify.js';

// Every step of a checkpoint and of a compaction, in the order they happen.
const FAILPOINTS = [
  'wal:after-write',
  'checkpoint:mid-pages',
  'checkpoint:after-pages',
  'checkpoint:after-pages-sync',
  'checkpoint:after-header',
  'checkpoint:after-header-sync',
  'checkpoint:after-wal-delete',
  'compact:mid-copy',
  'compact:after-copy',
  'compact:after-fsync',
  'compact:after-rename',
  'compact:after-dir-fsync',
];

describe('a crash at each step of checkpoint and compaction', () => {
  it.each(FAILPOINTS)('SIGKILL at %s loses nothing acknowledged and leaves an openable store', async (failpoint) => {
    const dir = tempDir('failpoint');
    try {
      const store = `${dir.path}/store`;
      // Phase 1 without a failpoint: 300 batches, closed cleanly.
      const first = runChild(['phase1', store, 'batch']);
      const firstExit = await first.exited;
      expect(first.stderr()).toBe('');
      expect(firstExit.code).toBe(0);
      expect(first.stdout()).toContain('closed');

      // Phase 2 with the failpoint armed: it must kill the process at that step.
      const second = runChild(['phase2', store, 'batch'], { TETRA_FAILPOINT: failpoint });
      const exit = await second.exited;
      expect(second.stderr()).toBe('');
      expect(exit.signal, `the failpoint ${failpoint} was never reached (stdout tail: ${second.stdout().slice(-200)})`).toBe('SIGKILL');
      expect(second.stdout()).not.toContain('maintenance-done');

      const acked = parseAcks(first.stdout() + second.stdout());
      const deleted = second.stdout().includes('deleted 1 150') ? 'acked' : 'maybe';
      await verifyCrashedStore(store, acked, deleted);

      // The store keeps working: recover, checkpoint, compact, reopen, still intact.
      const cache = new PageCache<TreeNode>(4 * 1024 * 1024);
      const reopened = await TenantStore.open(store, { cache, checkpointIntervalMs: 0 });
      const counter = Number(reopened.get('counter', Buffer.from('w0'))?.toString());
      await reopened.checkpoint();
      await reopened.compact();
      await reopened.close();
      const again = await TenantStore.open(store, { cache, checkpointIntervalMs: 0 });
      expect(Number(again.get('counter', Buffer.from('w0'))?.toString())).toBe(counter);
      await again.close();
      await verifyCrashedStore(store, acked, deleted);
    } finally {
      dir.remove();
    }
  });
});
