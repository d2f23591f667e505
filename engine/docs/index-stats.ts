/**
 * How often each index was read (MongoDB's `$indexStats` accesses): per tenant store, per
 * collection and index, the operations whose plan read it since counting began in this process
 * (the first read or `$indexStats` after the store opened: counts live in memory only, as MongoDB's
 * restart with the server). An operation counts once per index its plan reads: a find, count,
 * distinct, aggregation read, an update's or delete's search, each `$lookup` read; the `_id_` index
 * when the plan reads `_id` keys (a find by `_id`, an `_id` range), not for a collection scan.
 */

import type { CollectionInfo, IndexInfo } from './catalog.js';
import type { Plan } from './query-planner.js';

export interface IndexAccesses {
  ops: number;
  readonly since: Date;
}

/** The `_id_` index's number here (secondary index ids start at 1). */
export const ID_INDEX_ID = 0;

const ACCESSES = new WeakMap<object, Map<number, Map<number, IndexAccesses>>>();

/** The counts of one index, made (from now) when there are none yet. `store`: the tenant's store. */
export function accessesOf(store: object, collectionId: number, indexId: number): IndexAccesses {
  let byCollection = ACCESSES.get(store);
  if (byCollection === undefined) ACCESSES.set(store, (byCollection = new Map()));
  let byIndex = byCollection.get(collectionId);
  if (byIndex === undefined) byCollection.set(collectionId, (byIndex = new Map()));
  let found = byIndex.get(indexId);
  if (found === undefined) byIndex.set(indexId, (found = { ops: 0, since: new Date() }));
  return found;
}

/** One operation read `index` (undefined: `_id_`) of `info`. */
export function countIndexRead(store: object, info: CollectionInfo, index: IndexInfo | undefined): void {
  accessesOf(store, info.id, index === undefined ? ID_INDEX_ID : index.id).ops++;
}

/** One operation runs `plan` over `info`: each index it reads counts once. */
export function countPlanReads(store: object, info: CollectionInfo, plan: Plan): void {
  switch (plan.kind) {
    case 'index':
      countIndexRead(store, info, plan.index);
      return;
    case 'primary':
      // A collection scan (one unbounded range) reads documents, not the `_id` index's keys.
      if (plan.points || plan.ranges.some((r) => r.gt !== undefined || r.gte !== undefined || r.lt !== undefined || r.lte !== undefined)) countIndexRead(store, info, undefined);
      return;
    case 'or': {
      const seen = new Set<number>();
      for (const child of plan.children) {
        const id = child.kind === 'index' ? child.index.id : ID_INDEX_ID;
        if (seen.has(id)) continue;
        seen.add(id);
        if (child.kind === 'index') countIndexRead(store, info, child.index);
        else countPlanReads(store, info, child);
      }
      return;
    }
    default:
      return;
  }
}
