/**
 * $sample (manual: $sample): `size` documents of the input chosen at random, without replacement,
 * in random order. A reservoir (Algorithm R) holds at most `size` documents at a time, counted
 * against the blocking bound; fewer documents than `size` are all returned, shuffled.
 */

import { isPlainObject, type Doc } from '../../values.js';
import { PASS_THROUGH } from '../dependencies.js';
import { BlockingBudget, chunksOf, stageError, type Stage } from '../stage.js';

/** A random integer in [0, n). */
const below = (n: number): number => Math.floor(Math.random() * n);

export function sampleStage(spec: unknown): Stage {
  const stage = '$sample';
  if (!isPlainObject(spec)) stageError(stage, 'the $sample stage specification must be an object');
  let size: number | undefined;
  for (const [k, v] of Object.entries(spec)) {
    if (k !== 'size') stageError(stage, `unrecognized option to $sample: ${k}`);
    if (typeof v !== 'number' || Number.isNaN(v)) stageError(stage, 'size argument to $sample must be a number');
    size = Math.trunc(v);
    if (size < 0) stageError(stage, 'size argument to $sample must not be negative');
  }
  if (size === undefined) stageError(stage, '$sample stage must specify a size');
  const n = size;
  return {
    name: stage,
    reads: [],
    needs: PASS_THROUGH,
    async *run(input, ctx) {
      const budget = new BlockingBudget(stage, ctx.memory);
      const reservoir: Doc[] = [];
      const sizes: number[] = [];
      let seen = 0;
      for await (const chunk of input) {
        for (const doc of chunk) {
          seen++;
          if (n === 0) continue;
          if (reservoir.length < n) {
            sizes.push(budget.add(doc));
            reservoir.push(doc);
            continue;
          }
          // The seen-th document replaces a held one with probability n / seen.
          const j = below(seen);
          if (j < n) {
            budget.release(sizes[j]!);
            sizes[j] = budget.add(doc);
            reservoir[j] = doc;
          }
        }
      }
      // The reservoir keeps early documents in input order: shuffle (Fisher-Yates).
      for (let i = reservoir.length - 1; i > 0; i--) {
        const j = below(i + 1);
        [reservoir[i], reservoir[j]] = [reservoir[j]!, reservoir[i]!];
      }
      yield* chunksOf(reservoir);
    },
  };
}
