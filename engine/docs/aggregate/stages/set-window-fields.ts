/**
 * $setWindowFields (manual: $setWindowFields, MongoDB 5.0+): `{partitionBy, sortBy, output}`.
 * As MongoDB does, the input is sorted by the partition key (missing as null; an array is an
 * error) and then by sortBy, documents that tie keeping their input order; each partition is a
 * run of equal keys, and every output field gets its window function's value
 * (window-functions.ts) on each document. Output fields may be dot paths: the documents on the
 * way are created, a value that is not a document replaced by one (MongoDB's setNestedField),
 * and a missing value removes the field. As MongoDB 6.0+ does, past the blocking bound the sort
 * spills (allowDiskUse, external-sort.ts) and so does a partition: the sorted documents are read
 * one partition at a time, each only as far ahead as its windows reach, held in memory while
 * they fit and written to a spill file past the bound, from where the window functions read them
 * back by position (window-partition.ts). What is counted against the bound: the sort's documents
 * not yet handed over, the partition's held documents, the window functions' state, and what is
 * not yet passed on (a chunk of at most CHUNK documents and an eighth of the bound); state past
 * the bound once the documents are on disk fails with MongoDB's 5414201 message.
 */

import { compileSort } from '../../sort.js';
import { bsonTypeOf, compareValues, getOwn, isPlainObject, MISSING, setOwn, type Doc } from '../../values.js';
import { needsOf } from '../dependencies.js';
import { Scope, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { DocSorter, sortRefusal, type KeyedOrder } from '../../external-sort.js';
import { approxBytes, stageError, type Stage } from '../stage.js';
import type { SortShape } from './window-bounds.js';
import { parseWindowFunction, type WindowFunction } from './window-functions.js';
import { PartitionCache, SortedPartitions, WindowMemory } from './window-partition.js';

const STAGE = '$setWindowFields';
/** Documents passed on per chunk (at most). */
const CHUNK = 256;
/** Documents read from the sort at a time: a chunk is held beside the partition, uncounted, until read into it. */
const INPUT_CHUNK = 32;

function idlType(v: unknown): string {
  return bsonTypeOf(v);
}

// Sets `value` at `parts` of a copy of `target`, making documents on the way.
function setPath(target: Doc, parts: readonly string[], i: number, value: unknown): Doc {
  const out: Doc = { ...target };
  const key = parts[i]!;
  if (i === parts.length - 1) {
    if (value === MISSING) delete out[key];
    else setOwn(out, key, value);
    return out;
  }
  const child = getOwn(out, key);
  setOwn(out, key, setPath(isPlainObject(child) ? child : {}, parts, i + 1, value));
  return out;
}

function outputPath(path: string): string[] {
  const parts = path.split('.');
  for (const part of parts) {
    if (part === '') stageError(STAGE, `FieldPath field names may not be empty strings ('${path}')`);
    if (part.startsWith('$')) stageError(STAGE, `FieldPath field names may not start with '$' ('${path}')`);
  }
  return parts;
}

/** A document's place in the stage's order: its partition key, then its sortBy keys. */
interface WindowKey {
  readonly partition: unknown;
  readonly sort: unknown[] | undefined;
}

const PARTITION_ARRAY = 'An expression used to partition cannot evaluate to value of type array';

/** @throws QUERY_ERROR for a malformed specification, with MongoDB's message */
export function setWindowFieldsStage(spec: unknown, names: ReadonlySet<string>): Stage {
  if (!isPlainObject(spec)) stageError(STAGE, `the $setWindowFields stage specification must be an object, found ${idlType(spec)}`);
  for (const k of Object.keys(spec)) {
    if (k !== 'partitionBy' && k !== 'sortBy' && k !== 'output') stageError(STAGE, `BSON field '$setWindowFields.${k}' is an unknown field.`);
  }
  if (!Object.hasOwn(spec, 'output')) stageError(STAGE, "BSON field '$setWindowFields.output' is missing but a required field");
  const output = spec['output'];
  if (!isPlainObject(output)) stageError(STAGE, `BSON field '$setWindowFields.output' is the wrong type '${idlType(output)}', expected type 'object'`);
  const hasSort = Object.hasOwn(spec, 'sortBy');
  if (hasSort && !isPlainObject(spec['sortBy'])) stageError(STAGE, `BSON field '$setWindowFields.sortBy' is the wrong type '${idlType(spec['sortBy'])}', expected type 'object'`);
  const sort = hasSort ? compileSort(spec['sortBy']) : undefined;
  const sortShape: SortShape = { fields: sort?.keys.length, ascending: sort?.keys[0]?.direction === 1 };
  let partitionBy: Expr | undefined;
  if (Object.hasOwn(spec, 'partitionBy')) {
    if (Array.isArray(spec['partitionBy'])) stageError(STAGE, PARTITION_ARRAY);
    partitionBy = compileExpression(spec['partitionBy'], names);
  }
  const fields: Array<{ parts: string[]; fn: WindowFunction }> = [];
  const paths: string[] = [];
  for (const [path, fnSpec] of Object.entries(output)) {
    if (paths.some((p) => p === path || p.startsWith(`${path}.`) || path.startsWith(`${p}.`))) stageError(STAGE, "$setWindowFields 'output' specification contains two conflicting paths");
    paths.push(path);
    const parts = outputPath(path);
    fields.push({ parts, fn: parseWindowFunction(path, fnSpec, sortShape, names) });
  }
  const sortField = sort !== undefined && sort.keys.length === 1 ? compileExpression(`$${sort.keys[0]!.path}`) : undefined;
  return {
    name: STAGE,
    reads: [],
    needs: needsOf([spec['partitionBy'] ?? null, ...Object.values(output)], [...(sort?.keys.map((k) => k.path) ?? []), ...fields.flatMap((f) => f.fn.paths ?? [])], false),
    async *run(input, ctx) {
      const memory = ctx.memory;
      const partitionOf = (doc: Doc): unknown => {
        if (partitionBy === undefined) return null;
        const k = partitionBy(Scope.of(doc, ctx.vars));
        if (Array.isArray(k)) stageError(STAGE, PARTITION_ARRAY);
        return k === MISSING ? null : k;
      };
      // By partition, then sortBy, then input order; past the bound sorted runs spill (allowDiskUse).
      const order: KeyedOrder<WindowKey> = {
        keyOf: (doc) => ({ partition: partitionOf(doc), sort: sort?.keyOf(doc) }),
        compareKeyed: (a, b) => compareValues(a.partition, b.partition) || (sort === undefined ? 0 : sort.compareKeyed(a.sort!, b.sort!)),
      };
      const sorter = new DocSorter(order, { memory, refuse: sortRefusal(STAGE) });
      for await (const chunk of input) {
        for (const doc of chunk) {
          const spilled = sorter.add(doc);
          if (spilled !== undefined) await spilled;
        }
      }
      // The sort lets go of the documents it hands out (it holds the rest, spilled past the bound);
      // the partition holds them from there, spilling past the bound.
      const partitions = new SortedPartitions(sorter, INPUT_CHUNK, partitionOf);
      const held = new WindowMemory(memory.maxBlockingBytes, partitions);
      const options = { memory: held, spill: memory.spill, interrupt: memory.interrupt, vars: ctx.vars, sortField, sort };
      // What is passed on a chunk at a time: within an eighth of the bound (values shared by neighbours once).
      const chunkBytes = memory.maxBlockingBytes / 8;
      let pending: Doc[] = [];
      try {
        while (await partitions.start()) {
          const part = new PartitionCache(partitions, options);
          try {
            const execs = fields.map((f) => f.fn.open(part));
            held.states = execs;
            const previous = new Array<unknown>(execs.length);
            const reader = part.cursor();
            for (let i = 0; ; i++) {
              let current = reader.at(i);
              while (current === undefined) {
                await reader.fetch(i);
                current = reader.at(i);
              }
              if (current === null) break;
              let out = current.doc;
              for (let f = 0; f < execs.length; f++) {
                const exec = execs[f]!;
                let wait = exec.step(i, current);
                while (wait !== undefined) {
                  await wait;
                  wait = exec.step(i, current);
                }
                const v = exec.value;
                // A value shared with the previous document is held once.
                if (i === 0 || typeof v !== 'object' || v !== previous[f]) held.pending += approxBytes(v);
                previous[f] = v;
                out = setPath(out, fields[f]!.parts, 0, v);
              }
              held.pending += current.bytes;
              pending.push(out);
              reader.advance(i + 1);
              if (pending.length >= CHUNK || held.pending > chunkBytes) {
                yield pending;
                pending = [];
                held.pending = 0;
              }
              const wait = part.tick();
              if (wait !== undefined) await wait;
            }
          } finally {
            held.states = [];
            await part.close();
          }
        }
        if (pending.length > 0) yield pending;
      } finally {
        await partitions.close();
      }
    },
  };
}
