// Child process for the memory-bound suite: a quiet tenant and a busy one share the page cache and
// the dirty budget. Each round the quiet one changes one random key (a copied leaf it keeps until a
// checkpoint it never takes) and the busy one 500, then checkpoints (its copies released). Prints,
// as a JSON line, how much the live heap and buffers grew after a forced GC, and how much of it the
// cache and the budget count.
// Usage: node --expose-gc --import tsx quiet-tenant-child.ts <dir> <rounds>
import { PageCache, encodeKey, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';

const [dir, roundsArg] = process.argv.slice(2) as [string, string];
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

async function main(): Promise<void> {
  const MiB = 1024 * 1024;
  const keys = 20_000;
  const value = Buffer.alloc(100, 0x61);
  const cache = new PageCache<TreeNode>(64 * MiB, { dirtyBytes: 64 * MiB });
  const quiet = await TenantStore.open(`${dir}/quiet`, { cache, checkpointIntervalMs: 0, fsync: 'off' });
  const busy = await TenantStore.open(`${dir}/busy`, { cache, checkpointIntervalMs: 0, fsync: 'off' });
  const put = (store: TenantStore, ids: number[]): Promise<unknown> =>
    store.write(ids.map((i) => ({ op: 'put' as const, tree: 't', key: encodeKey([(i * 2654435761) % 4294967296]), value })));
  for (let i = 0; i < keys; i += 1000) {
    const ids = Array.from({ length: 1000 }, (_, j) => i + j);
    await put(quiet, ids);
    await put(busy, ids);
  }
  await quiet.checkpoint();
  await busy.checkpoint();
  let seed = 1;
  const random = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % keys;
  // One round first, so the baseline holds the code paths' own lazily compiled state.
  await put(quiet, [random()]);
  await put(busy, Array.from({ length: 500 }, random));
  await busy.checkpoint();
  gc!();
  gc!();
  const before = { memory: process.memoryUsage(), cache: cache.bytes, dirty: cache.dirty.bytes };
  for (let round = 0; round < Number(roundsArg); round++) {
    await put(quiet, [random()]);
    await put(busy, Array.from({ length: 500 }, random));
    await busy.checkpoint();
  }
  gc!();
  gc!();
  const after = process.memoryUsage();
  process.stdout.write(
    `${JSON.stringify({
      liveGrowth: after.heapUsed + after.arrayBuffers - (before.memory.heapUsed + before.memory.arrayBuffers),
      buffersGrowth: after.arrayBuffers - before.memory.arrayBuffers,
      countedGrowth: cache.bytes - before.cache + (cache.dirty.bytes - before.dirty),
      quietPending: quiet.stats().pendingBytes,
    })}\n`,
  );
  await quiet.close();
  await busy.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`quiet-tenant-child failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
