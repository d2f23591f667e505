import { createHash } from 'node:crypto';
import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTetraError, type TetraError } from '../../engine/errors.js';
import { DATA_FILE, HEADER_CHECKPOINT_LSN_OFFSET, PAGE_SIZE, PAGE_TYPE, PAGE_TYPE_OFFSET, PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';
import { runChild } from './child-process.js';
import { parseAcks, verifyCrashedStore } from './verify.js';

// A crash during a checkpoint, and then a bit flip in the header that checkpoint had just made
// durable: what open does depends on whether the log the checkpoint made redundant was deleted.

const options = () => ({ cache: new PageCache<TreeNode>(8 * 1024 * 1024), checkpointIntervalMs: 0 });

/** Damages the last page of data.tdb, checking first that it is a header; returns its offset. */
function damageNewestHeader(dir: string): number {
  const path = join(dir, DATA_FILE);
  const bytes = readFileSync(path);
  const page = bytes.length - PAGE_SIZE;
  expect(bytes[page + PAGE_TYPE_OFFSET], 'the last page is the header the killed checkpoint wrote').toBe(PAGE_TYPE.HEADER);
  bytes[page + HEADER_CHECKPOINT_LSN_OFFSET + 6] = bytes[page + HEADER_CHECKPOINT_LSN_OFFSET + 6]! ^ 0xff;
  writeFileSync(path, bytes);
  return page;
}

function digests(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const f of readdirSync(dir).sort()) files[f] = createHash('sha256').update(readFileSync(join(dir, f))).digest('hex');
  return files;
}

describe('a crash in a checkpoint, then a damaged newest header', () => {
  // Phase 1 once, without a failpoint: 300 batches, closed cleanly.
  const base = tempDir('header-base');
  let phase1 = '';
  beforeAll(async () => {
    const first = runChild(['phase1', `${base.path}/store`, 'batch']);
    expect((await first.exited).code, first.stderr()).toBe(0);
    phase1 = first.stdout();
  });
  afterAll(() => base.remove());

  /** Phase 2 on a copy of phase 1, killed at `failpoint`; returns the store and what was acked. */
  async function killedAt(failpoint: string, root: string): Promise<{ store: string; acked: Map<number, number>; deleted: 'acked' | 'maybe' }> {
    const store = join(root, 'store');
    cpSync(`${base.path}/store`, store, { recursive: true });
    const child = runChild(['phase2', store, 'batch'], { TETRA_FAILPOINT: failpoint });
    const exit = await child.exited;
    expect(child.stderr()).toBe('');
    expect(exit.signal, `the failpoint ${failpoint} was never reached`).toBe('SIGKILL');
    const deleted = child.stdout().includes('deleted 1 150') ? 'acked' : 'maybe';
    return { store, acked: parseAcks(phase1 + child.stdout()), deleted };
  }

  it('after the header was synced but before the old log was deleted: falls back, replays, loses nothing', async () => {
    const root = tempDir('header-kept');
    try {
      const { store, acked, deleted } = await killedAt('checkpoint:after-header-sync', root.path);
      const intact = join(root.path, 'intact');
      cpSync(store, intact, { recursive: true });
      damageNewestHeader(store);

      await verifyCrashedStore(store, acked, deleted);
      // The control: undamaged, the store opens at the new header; damaged, at the previous one,
      // so it replays more of the log to reach the same state.
      const atNewest = await TenantStore.open(intact, options());
      const atPrevious = await TenantStore.open(store, options());
      expect(atPrevious.recovered.records).toBeGreaterThan(atNewest.recovered.records);
      expect(atPrevious.lsn).toBe(atNewest.lsn);
      expect(atPrevious.get('counter', Buffer.from('w0'))?.toString()).toBe(atNewest.get('counter', Buffer.from('w0'))?.toString());
      await atNewest.close();
      await atPrevious.close();
      await verifyCrashedStore(store, acked, deleted);
    } finally {
      root.remove();
    }
  });

  it('after the old log was deleted: refuses to open, naming data.tdb and the page, and changes nothing', async () => {
    const root = tempDir('header-gone');
    try {
      const { store, acked, deleted } = await killedAt('checkpoint:after-wal-delete', root.path);
      const intact = join(root.path, 'intact');
      cpSync(store, intact, { recursive: true });
      const page = damageNewestHeader(store);
      const before = digests(store);
      for (let attempt = 1; attempt <= 2; attempt++) {
        const err = await TenantStore.open(store, options()).then(() => undefined, (e: unknown) => e);
        expect(isTetraError(err, 'CORRUPTION'), `attempt ${attempt}: ${String(err)}`).toBe(true);
        expect((err as TetraError).details).toEqual({ file: join(store, DATA_FILE), offset: page });
        expect(digests(store), `attempt ${attempt} changed nothing`).toEqual(before);
      }
      // Undamaged, the same crash state holds every acknowledged write.
      await verifyCrashedStore(intact, acked, deleted);
    } finally {
      root.remove();
    }
  });
});
