/**
 * $graphLookup (manual: $graphLookup): a recursive search of another collection of the same
 * tenant, on the pipeline's snapshot. From the values of `startWith`, each round finds the
 * documents whose `connectToField` equals one of the values (query equality, so an array field
 * matches by element; an index on it serves the find), keeps those not met before (by `_id`),
 * and takes their `connectFromField` values as the next round's. `maxDepth` bounds the rounds
 * (0: the first only), `depthField` records each document's round, `restrictSearchWithMatch`
 * filters every round. The documents found go in the array `as`, in the order they were met.
 * They are held within the blocking bound, which MongoDB's $graphLookup never spills past
 * (allowDiskUse is ignored): past it, MongoDB's "$graphLookup reached maximum memory consumption".
 */

import { validateCollectionName } from '../../catalog.js';
import { compileFilter } from '../../query/compile-filter.js';
import { collectValues } from '../../path.js';
import { isPlainObject, MISSING, setOwn, type Doc } from '../../values.js';
import { needsOf } from '../dependencies.js';
import { compileExpression } from '../expression/operator-table.js';
import { groupKey } from '../value-key.js';
import { Scope } from '../expression/expression.js';
import { approxBytes, BlockingBudget, outputField, stageError, type Stage } from '../stage.js';

const OPTIONS = ['from', 'startWith', 'connectFromField', 'connectToField', 'as', 'maxDepth', 'depthField', 'restrictSearchWithMatch'];

function fieldPath(stage: string, v: unknown, what: string): string {
  if (typeof v !== 'string' || v === '' || v.startsWith('$')) stageError(stage, `$graphLookup's '${what}' must be a field path that does not start with '$'`);
  return v;
}

/** MongoDB's message past the bound (code 40099; it never spills: SERVER-23980). @throws QUERY_ERROR */
function refuseGraphLookup(): never {
  stageError('$graphLookup', '$graphLookup reached maximum memory consumption');
}

export function graphLookupStage(spec: unknown, names: ReadonlySet<string>): Stage {
  const stage = '$graphLookup';
  if (!isPlainObject(spec)) stageError(stage, 'the $graphLookup specification must be an object');
  for (const k of Object.keys(spec)) if (!OPTIONS.includes(k)) stageError(stage, `unknown argument to $graphLookup: ${k}`);
  for (const k of ['from', 'startWith', 'connectFromField', 'connectToField', 'as']) if (!Object.hasOwn(spec, k)) stageError(stage, `$graphLookup requires '${k}'`);
  const from = validateCollectionName(spec['from']);
  const startWith = compileExpression(spec['startWith'], names);
  const connectFrom = fieldPath(stage, spec['connectFromField'], 'connectFromField').split('.');
  const connectTo = fieldPath(stage, spec['connectToField'], 'connectToField');
  const as = outputField(stage, spec['as'], "'as'");
  const depthField = spec['depthField'] === undefined ? undefined : outputField(stage, spec['depthField'], "'depthField'");
  const maxDepth = spec['maxDepth'] ?? Infinity;
  if (maxDepth !== Infinity && (typeof maxDepth !== 'number' || !Number.isInteger(maxDepth) || maxDepth < 0)) stageError(stage, "$graphLookup's 'maxDepth' must be a non-negative integer");
  const restrict = spec['restrictSearchWithMatch'];
  if (restrict !== undefined && !isPlainObject(restrict)) stageError(stage, "$graphLookup's 'restrictSearchWithMatch' must be an object");
  // Validated now, before any document is read.
  compileFilter(restrict ?? {});
  return {
    name: stage,
    reads: [from],
    needs: needsOf([spec['startWith']], [], false),
    async *run(input, ctx) {
      for await (const chunk of input) {
        const out: Doc[] = [];
        for (const doc of chunk) {
          const budget = new BlockingBudget(stage, ctx.memory);
          const found: Doc[] = [];
          const seenDocs = new Set<string>();
          const seenValues = new Set<string>();
          const start = startWith(Scope.of(doc, ctx.vars));
          let values = (Array.isArray(start) ? start : [start]).filter((v) => v !== MISSING);
          for (let depth = 0; values.length > 0 && depth <= maxDepth; depth++) {
            const fresh = values.filter((v) => {
              const k = groupKey(v);
              if (seenValues.has(k)) return false;
              seenValues.add(k);
              return true;
            });
            if (fresh.length === 0) break;
            const filter: Doc = { [connectTo]: { $in: fresh } };
            const matches = await ctx.lookup(from, restrict === undefined ? filter : { $and: [filter, restrict] }, undefined, refuseGraphLookup);
            const next: unknown[] = [];
            for (const m of matches) {
              const id = groupKey(m['_id']);
              if (seenDocs.has(id)) continue;
              seenDocs.add(id);
              const hit: Doc = depthField === undefined ? m : { ...m, [depthField]: depth };
              budget.count(approxBytes(hit));
              if (budget.over) refuseGraphLookup();
              found.push(hit);
              for (const v of collectValues(m, connectFrom, 'traverse-omit-array')) if (v !== MISSING) next.push(v);
            }
            values = next;
          }
          const withAs: Doc = { ...doc };
          setOwn(withAs, as, found);
          out.push(withAs);
        }
        yield out;
      }
    },
  };
}
