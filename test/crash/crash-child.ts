// Child process for the crash suites. It writes batches, prints "ack <writer> <seq>" for each
// acknowledged one, and is SIGKILLed by its parent (or by an armed failpoint) at any moment.
// Usage: node --import tsx crash-child.ts <mode> <dir> <fsync> [writers]
//        node --import tsx crash-child.ts tenants <dataDir> <fsync> <writer ids, comma-separated> <batches>
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantRegistry, TenantStore } from '../../engine/tenant/index.js';
import { batchFor } from './batches.js';

const [mode, dir, fsync, writersArg, batchesArg] = process.argv.slice(2) as [string, string, 'batch' | 'always' | 'off', string | undefined, string | undefined];

// Small thresholds so checkpoints, segment rotations and compactions all happen mid-run.
const SMALL_THRESHOLDS = {
  walSegmentBytes: 64 * 1024,
  checkpointWalBytes: 128 * 1024,
  checkpointIntervalMs: 200,
  compactGarbageRatio: 0.3,
  compactMinBytes: 64 * 1024,
  // Trees b, tmp (a put and a delete every batch) and big (overflow values) buffer their writes
  // in deltas merged every few hundred entries, so merges run mid-run too; verify.ts reopens
  // the store without this option, as any later open may.
  bufferedTrees: (tree: string) => tree === 'b' || tree === 'tmp' || tree === 'big',
  deltaMergeMin: 200,
  bufferFromEntries: 100,
};

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

/**
 * Mode 'tenants': one registry over the data directory `dir`; for each writer id w in turn,
 * tenant `t<w>` (created on first use) gets `batches` more batches of writer w, so each tenant's
 * directory verifies like a single-writer store. Used to crash while a tenant is being created
 * next to tenants that hold acknowledged data.
 */
async function tenants(cache: PageCache<TreeNode>): Promise<void> {
  const registry = new TenantRegistry({ dataDir: dir, cache, fsync, idleCloseMs: 0, ...SMALL_THRESHOLDS });
  say('ready');
  const batches = Number(batchesArg ?? 50);
  for (const w of (writersArg ?? '0').split(',').map(Number)) {
    await registry.use(`t${w}`, async (store) => {
      let seq = Number(store.get('counter', Buffer.from(`w${w}`))?.toString() ?? 0);
      for (let i = 0; i < batches; i++) {
        seq++;
        await store.write(batchFor(w, seq));
        say(`ack ${w} ${seq}`);
      }
    });
  }
  await registry.close();
  say('closed');
}

async function main(): Promise<void> {
  const cache = new PageCache<TreeNode>(4 * 1024 * 1024);
  if (mode === 'tenants') return tenants(cache);
  const store = await TenantStore.open(dir, { cache, fsync, ...SMALL_THRESHOLDS });
  say('ready');
  if (mode === 'writer') {
    const writers = Number(writersArg ?? 8);
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        let seq = Number(store.get('counter', Buffer.from(`w${w}`))?.toString() ?? 0);
        for (;;) {
          seq++;
          await store.write(batchFor(w, seq));
          say(`ack ${w} ${seq}`);
        }
      }),
    );
  } else if (mode === 'phase1') {
    for (let seq = 1; seq <= 300; seq++) {
      await store.write(batchFor(0, seq));
      say(`ack 0 ${seq}`);
    }
    await store.close();
    say('closed');
  } else if (mode === 'phase2') {
    // Overwrites and deletes make garbage, then a checkpoint and a compaction run while
    // writes continue; the armed failpoint kills the process somewhere inside them.
    let seq = Number(store.get('counter', Buffer.from('w0'))?.toString() ?? 0);
    const pending: Array<Promise<unknown>> = [];
    for (let i = 0; i < 200; i++) {
      seq++;
      await store.write(batchFor(0, seq));
      say(`ack 0 ${seq}`);
    }
    await store.write(Array.from({ length: 150 }, (_, i) => ({ op: 'delete' as const, tree: 'a', key: Buffer.from(`w0-${String(i + 1).padStart(7, '0')}`) })));
    say('deleted 1 150');
    const maintenance = store.checkpoint().then(() => store.compact());
    for (let i = 0; i < 50; i++) {
      seq++;
      const s = seq;
      pending.push(store.write(batchFor(0, s)).then(() => say(`ack 0 ${s}`)));
    }
    await Promise.all([maintenance, ...pending]);
    await store.checkpoint();
    say('maintenance-done');
    await store.close();
    say('closed');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`crash-child failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(3);
});
