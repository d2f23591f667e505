/**
 * $sample (manual: $sample): `size` documents of the input chosen at random, without replacement,
 * in random order. In memory, a reservoir (Algorithm R) holds at most `size` documents, counted
 * against the blocking bound; fewer documents than `size` are all returned, shuffled.
 *
 * Past the bound, it becomes what MongoDB builds over any input it cannot sample through a random
 * cursor (document_source_sample): each document has a random key and a sort keeps the `size`
 * smallest, in key order, through the spilling sorter (external-sort.ts, with a keep of `size`:
 * it writes runs of its best to spill files; allowDiskUse false fails with MongoDB's sort message).
 * The reservoir's documents go first, with the keys the smallest of `seen` uniform keys would have
 * (keysOfSmallest), so the sample is exactly as uniform as if every document had had a key from
 * the start: the reservoir is a uniform choice of the documents seen, the documents it left out
 * could not have been among the smallest, and the later ones draw their keys afresh.
 */

import { DocSorter, sortRefusal, type KeyedOrder } from '../../external-sort.js';
import { carryTextScore } from '../../text/index.js';
import { isPlainObject, type Doc } from '../../values.js';
import { PASS_THROUGH } from '../dependencies.js';
import { approxBytes, BlockingBudget, chunksOf, stageError, type QueryMemory, type Stage } from '../stage.js';

const STAGE = '$sample';

/** A random integer in [0, n). */
const below = (n: number): number => Math.floor(Math.random() * n);

/** Shuffles `xs` in place (Fisher-Yates). */
function shuffle<T>(xs: T[]): void {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = below(i + 1);
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
}

/** A document with its random key (MongoDB's randVal metadata): a field, so a spilled one keeps it. */
interface Keyed extends Doc {
  readonly r: number;
  readonly d: Doc;
}

const BY_RANDOM_KEY: KeyedOrder<number> = {
  keyOf: (doc) => (doc as Keyed).r,
  compareKeyed: (a, b) => a - b,
};

/** `doc` with its key; its text score goes along (a spilled holder carries it: external-sort.ts). */
function keyed(doc: Doc, r: number): Keyed {
  return carryTextScore(doc, { r, d: doc });
}

/** The document of a holder, with the holder's text score (a spilled document was decoded apart from it). */
function unkeyed(holder: Doc): Doc {
  return carryTextScore(holder, (holder as Keyed).d);
}

/**
 * The `count` smallest of `seen` independent uniform keys in (0, 1), ascending: the k-th smallest
 * of `seen` exponential variables is the sum of E_i / (seen - i) for i < k (Rényi's
 * representation, E_i standard exponential), and 1 - e^-x maps them to uniform ones in order.
 */
function keysOfSmallest(count: number, seen: number): number[] {
  const keys: number[] = [];
  let x = 0;
  for (let i = 0; i < count; i++) {
    x += -Math.log1p(-Math.random()) / (seen - i);
    keys.push(-Math.expm1(-x));
  }
  return keys;
}

export function sampleStage(spec: unknown): Stage {
  if (!isPlainObject(spec)) stageError(STAGE, 'the $sample stage specification must be an object');
  let size: number | undefined;
  for (const [k, v] of Object.entries(spec)) {
    if (k !== 'size') stageError(STAGE, `unrecognized option to $sample: ${k}`);
    if (typeof v !== 'number' || Number.isNaN(v)) stageError(STAGE, 'size argument to $sample must be a number');
    size = Math.trunc(v);
    if (size < 0) stageError(STAGE, 'size argument to $sample must not be negative');
  }
  if (size === undefined) stageError(STAGE, '$sample stage must specify a size');
  const n = size;

  /** The sorter the reservoir becomes past the bound: its documents in, with the keys they would have. */
  async function sorterOf(reservoir: Doc[], seen: number, memory: QueryMemory): Promise<DocSorter<number>> {
    const sorter = new DocSorter(BY_RANDOM_KEY, { memory, keep: n, refuse: sortRefusal(STAGE) });
    // Which of the smallest keys each has is a uniform permutation: the reservoir's order is not.
    shuffle(reservoir);
    const keys = keysOfSmallest(reservoir.length, seen);
    for (let i = 0; i < reservoir.length; i++) {
      const spilled = sorter.add(keyed(reservoir[i]!, keys[i]!));
      if (spilled !== undefined) await spilled;
    }
    return sorter;
  }

  return {
    name: STAGE,
    reads: [],
    needs: PASS_THROUGH,
    async *run(input, ctx) {
      const budget = new BlockingBudget(STAGE, ctx.memory);
      const reservoir: Doc[] = [];
      const sizes: number[] = [];
      let sorter: DocSorter<number> | undefined;
      let seen = 0;
      for await (const chunk of input) {
        if (n === 0) continue;
        for (const doc of chunk) {
          seen++;
          if (sorter !== undefined) {
            const spilled = sorter.add(keyed(doc, Math.random()));
            if (spilled !== undefined) await spilled;
            continue;
          }
          if (reservoir.length < n) {
            const bytes = approxBytes(doc);
            budget.count(bytes);
            sizes.push(bytes);
            reservoir.push(doc);
          } else {
            // The seen-th document replaces a held one with probability n / seen.
            const j = below(seen);
            if (j >= n) continue;
            const bytes = approxBytes(doc);
            budget.count(bytes - sizes[j]!);
            sizes[j] = bytes;
            reservoir[j] = doc;
          }
          if (!budget.over) continue;
          // The documents kept pass the bound: the sort by random key takes over (it refuses
          // when it may not spill).
          sorter = await sorterOf(reservoir, seen, ctx.memory);
          reservoir.length = 0;
          sizes.length = 0;
          budget.release(budget.bytes);
        }
      }
      if (sorter === undefined) {
        // The reservoir keeps early documents in input order.
        shuffle(reservoir);
        yield* chunksOf(reservoir);
        return;
      }
      for await (const chunk of sorter.sorted()) yield chunk.map(unkeyed);
    },
  };
}
