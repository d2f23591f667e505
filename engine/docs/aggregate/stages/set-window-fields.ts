/**
 * $setWindowFields (manual: $setWindowFields, MongoDB 5.0+): `{partitionBy, sortBy, output}`.
 * As MongoDB does, the input is sorted by the partition key (missing as null; an array is an
 * error) and then by sortBy, documents that tie keeping their input order; each partition is a
 * run of equal keys, and every output field gets its window function's value
 * (window-functions.ts) on each document. Output fields may be dot paths: the documents on the
 * way are created, a value that is not a document replaced by one (MongoDB's setNestedField),
 * and a missing value removes the field. The input is held within the blocking bound (MongoDB's
 * $sort before the stage holds it too), and so are the computed values until they are passed on.
 */

import { compileSort } from '../../sort.js';
import { bsonTypeOf, compareValues, getOwn, isPlainObject, MISSING, setOwn, type Doc } from '../../values.js';
import { needsOf } from '../dependencies.js';
import { Scope, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { BlockingBudget, gather, stageError, type Stage } from '../stage.js';
import type { SortShape } from './window-bounds.js';
import { parseWindowFunction, type Partition, type WindowFunction } from './window-functions.js';

const STAGE = '$setWindowFields';
const CHUNK = 256;

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
      const budget = new BlockingBudget(STAGE);
      const docs = await gather(input, STAGE, budget);
      const n = docs.length;
      const keys = new Array<unknown>(n).fill(null);
      if (partitionBy !== undefined) {
        for (let i = 0; i < n; i++) {
          const k = partitionBy(Scope.of(docs[i]!, ctx.vars));
          if (Array.isArray(k)) stageError(STAGE, PARTITION_ARRAY);
          keys[i] = k === MISSING ? null : k;
        }
      }
      const sortKeys = sort === undefined ? undefined : docs.map((d) => sort.keyOf(d));
      const order = Array.from({ length: n }, (_, i) => i);
      if (partitionBy !== undefined || sort !== undefined) {
        order.sort((a, b) => compareValues(keys[a], keys[b]) || (sortKeys === undefined ? 0 : sort!.compareKeyed(sortKeys[a]!, sortKeys[b]!)) || a - b);
      }
      let pending: Doc[] = [];
      let pendingBytes = 0;
      for (let from = 0; from < n; ) {
        let to = from + 1;
        while (to < n && compareValues(keys[order[to]!], keys[order[from]!]) === 0) to++;
        const members = order.slice(from, to);
        const pdocs = members.map((i) => docs[i]!);
        const scopes = pdocs.map((d) => Scope.of(d, ctx.vars));
        const partition: Partition = {
          docs: pdocs,
          scopes,
          sortValues: sortField === undefined ? undefined : scopes.map((s) => sortField(s)),
          tiesPrevious: members.map((m, j) => j > 0 && sortKeys !== undefined && sort!.compareKeyed(sortKeys[members[j - 1]!]!, sortKeys[m]!) === 0),
        };
        const values = fields.map((f) => f.fn.compute(partition));
        for (let j = 0; j < pdocs.length; j++) {
          let out = pdocs[j]!;
          for (let f = 0; f < fields.length; f++) {
            const v = values[f]![j];
            // A value shared with the previous document is held once.
            if (j === 0 || typeof v !== 'object' || v !== values[f]![j - 1]) pendingBytes += budget.add(v);
            out = setPath(out, fields[f]!.parts, 0, v);
          }
          pending.push(out);
          if (pending.length >= CHUNK) {
            yield pending;
            budget.release(pendingBytes);
            pending = [];
            pendingBytes = 0;
          }
        }
        from = to;
      }
      if (pending.length > 0) yield pending;
    },
  };
}
