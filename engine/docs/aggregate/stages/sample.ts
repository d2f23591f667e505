/**
 * $sample (manual: $sample): `size` documents of the input chosen at random, without replacement,
 * in random order. As MongoDB builds it over any input it cannot sample through a random cursor
 * (document_source_sample): each document gets a random key and a sort keeps the `size` smallest,
 * in key order. The sort is the spilling one (external-sort.ts, with a keep of `size`): it holds
 * at most about twice `size` documents, dropping as it goes those that can no longer be among the
 * smallest, and past the blocking bound writes runs of its best to spill files (allowDiskUse;
 * allowDiskUse false fails with MongoDB's sort message). Fewer documents than `size` are all
 * returned, shuffled.
 */

import { DocSorter, sortRefusal, type KeyedOrder } from '../../external-sort.js';
import { carryTextScore } from '../../text/index.js';
import { isPlainObject, type Doc } from '../../values.js';
import { PASS_THROUGH } from '../dependencies.js';
import { approxBytes, stageError, type Stage } from '../stage.js';

const STAGE = '$sample';

/** A document with its random key (MongoDB's randVal metadata): a field, so a spilled one keeps it. */
interface Keyed extends Doc {
  readonly r: number;
  readonly d: Doc;
}

/** What the key and its holder cost besides the document (approxBytes of `{r, d}` less `d`'s). */
const KEY_BYTES = 16 + (16 + 2 + 8) + (16 + 2);

const BY_RANDOM_KEY: KeyedOrder<number> = {
  keyOf: (doc) => (doc as Keyed).r,
  compareKeyed: (a, b) => a - b,
};

/** `doc` with a random key; its text score goes along (a spilled holder carries it: external-sort.ts). */
function keyed(doc: Doc): Keyed {
  return carryTextScore(doc, { r: Math.random(), d: doc });
}

/** The document of a holder, with the holder's text score (a spilled document was decoded apart from it). */
function unkeyed(holder: Doc): Doc {
  return carryTextScore(holder, (holder as Keyed).d);
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
  return {
    name: STAGE,
    reads: [],
    needs: PASS_THROUGH,
    async *run(input, ctx) {
      const sorter = new DocSorter(BY_RANDOM_KEY, { memory: ctx.memory, keep: n, refuse: sortRefusal(STAGE) });
      for await (const chunk of input) {
        if (n === 0) continue;
        for (const doc of chunk) {
          const spilled = sorter.add(keyed(doc), approxBytes(doc) + KEY_BYTES);
          if (spilled !== undefined) await spilled;
        }
      }
      for await (const chunk of sorter.sorted()) yield chunk.map(unkeyed);
    },
  };
}
