import { PageCache, type TreeNode } from '../../engine/storage/index.js';

/** Options of the small stores the recovery suites build: an 8 MiB cache, group commit, no timer. */
export function storeOptions(cache = new PageCache<TreeNode>(8 * 1024 * 1024)): { cache: PageCache<TreeNode>; fsync: 'batch'; checkpointIntervalMs: number } {
  return { cache, fsync: 'batch', checkpointIntervalMs: 0 };
}

/** Key i of the recovery suites' tree 'a' (sorts in i order up to 9999). */
export const key = (i: number): Buffer => Buffer.from(`key-${String(i).padStart(4, '0')}`);

/** Value i: 1 to 5 repetitions, so records differ in size. */
export const value = (i: number): Buffer => Buffer.from(`value-${i}-`.repeat(1 + (i % 5)));
