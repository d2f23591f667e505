import { expect } from 'vitest';
import { isTetraError, type TetraError } from '../../engine/errors.js';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore, type TenantStoreOptions } from '../../engine/tenant/index.js';

/** Options of the small stores the recovery suites build: an 8 MiB cache, group commit, no timer. */
export function storeOptions(cache = new PageCache<TreeNode>(8 * 1024 * 1024)): { cache: PageCache<TreeNode>; fsync: 'batch'; checkpointIntervalMs: number } {
  return { cache, fsync: 'batch', checkpointIntervalMs: 0 };
}

/** Key i of the recovery suites' tree 'a' (sorts in i order up to 9999). */
export const key = (i: number): Buffer => Buffer.from(`key-${String(i).padStart(4, '0')}`);

/** Value i: 1 to 5 repetitions, so records differ in size. */
export const value = (i: number): Buffer => Buffer.from(`value-${i}-`.repeat(1 + (i % 5)));

/** Opens the store in `dir` expecting a CORRUPTION refusal, and returns that error. */
export async function openRefused(dir: string, options: TenantStoreOptions): Promise<TetraError> {
  const err = await TenantStore.open(dir, options).then(
    async (store) => {
      await store.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(isTetraError(err, 'CORRUPTION'), `expected CORRUPTION, got ${String(err)}`).toBe(true);
  return err as TetraError;
}

/** Keys from..to in tree 'a', as one batch (one WAL record). */
export const puts = (from: number, to: number): Array<{ op: 'put'; tree: string; key: Buffer; value: Buffer }> =>
  Array.from({ length: to - from + 1 }, (_, i) => ({ op: 'put' as const, tree: 'a', key: key(from + i), value: value(from + i) }));

/**
 * A store in `dir` whose checkpoints all completed (lsn 1: keys 1..10, lsn 2: 11..20, lsn 3:
 * 21..30), the log deleted up to the last one: what every clean close leaves.
 */
export async function storeWithThreeCheckpoints(dir: string, options: TenantStoreOptions): Promise<string> {
  const store = await TenantStore.open(dir, options);
  await store.write(puts(1, 10));
  await store.checkpoint();
  await store.write(puts(11, 20));
  await store.checkpoint();
  await store.write(puts(21, 30));
  await store.close();
  return dir;
}
