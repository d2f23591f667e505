// Child process for the memory-bound suite: bulk-loads keys through the engine and prints, as
// JSON lines, the live heap and buffer memory after a forced GC, sampled as the load goes on.
// Usage: node --expose-gc --import tsx bulk-load-child.ts <dir> <keys> <valueBytes> <batch> <cacheBytes> <dirtyBytes> <ascending|random>
import { PageCache, encodeKey, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';

const [dir, keysArg, valueArg, batchArg, cacheArg, dirtyArg, order] = process.argv.slice(2) as [string, string, string, string, string, string, string];
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

function sample(label: string, extra: Record<string, unknown> = {}): void {
  gc!();
  gc!();
  const m = process.memoryUsage();
  process.stdout.write(`${JSON.stringify({ label, heapUsed: m.heapUsed, arrayBuffers: m.arrayBuffers, external: m.external, rss: m.rss, ...extra })}\n`);
}

async function main(): Promise<void> {
  const keys = Number(keysArg);
  const valueBytes = Number(valueArg);
  const batch = Number(batchArg);
  const value = Buffer.alloc(valueBytes, 0x61);
  // The baseline is taken after the same code paths ran once on a throwaway store (writes, a
  // checkpoint, a close), so it holds what the process keeps whatever the data: the bytecode
  // and feedback V8 compiles lazily on first use, module-level buffers. Measured: ~1 MiB that
  // would otherwise count as data.
  const warm = await TenantStore.open(`${dir}-warm`, { cache: new PageCache<TreeNode>(Number(cacheArg), { dirtyBytes: Number(dirtyArg) }), checkpointIntervalMs: 0 });
  for (let i = 0; i < 2000; i += batch) {
    await warm.write(Array.from({ length: batch }, (_, j) => ({ op: 'put' as const, tree: 'bulk', key: encodeKey([i + j]), value })));
  }
  await warm.checkpoint();
  warm.get('bulk', encodeKey([0]));
  await warm.close();
  const cache = new PageCache<TreeNode>(Number(cacheArg), { dirtyBytes: Number(dirtyArg) });
  const store = await TenantStore.open(dir, { cache, checkpointIntervalMs: 0 });
  sample('baseline');
  const every = Math.max(batch, Math.floor(keys / 8 / batch) * batch);
  // Ascending keys keep the right edge of the tree dirty through every checkpoint; scrambled
  // ones keep dirtying leaves all over the tree.
  const scramble = order === 'random' ? (i: number): number => (i * 2654435761) % 4294967296 : (i: number): number => i;
  for (let done = 0; done < keys; done += batch) {
    const ops = [];
    for (let i = done; i < Math.min(keys, done + batch); i++) {
      ops.push({ op: 'put' as const, tree: 'bulk', key: encodeKey([scramble(i)]), value });
    }
    await store.write(ops);
    if ((done + batch) % every === 0) sample('load', { keys: done + batch, dirty: cache.dirty.bytes, cache: cache.bytes, ...store.stats() });
  }
  sample('loaded', { dirty: cache.dirty.bytes, cache: cache.bytes, ...store.stats() });
  await store.close();
  sample('closed', { dirty: cache.dirty.bytes, cache: cache.bytes });
  // Everything loaded is there after a reopen.
  const reopened = await TenantStore.open(dir, { cache, checkpointIntervalMs: 0 });
  const last = encodeKey([scramble(keys - 1)]);
  process.stdout.write(`${JSON.stringify({ label: 'reopened', count: reopened.count('bulk'), lastValue: reopened.get('bulk', last)?.length ?? null })}\n`);
  await reopened.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`bulk-load-child failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(3);
});
