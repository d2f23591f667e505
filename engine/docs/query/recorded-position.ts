/**
 * The position a filter records while matching a document, as MongoDB's matcher records its
 * "elemMatchKey": what the positional `$` of updates and of projections stands for.
 */

import { getOwn, isPlainObject, setOwn, type Doc } from '../values.js';
import { compileFilterAst } from './compile-filter.js';
import type { AndNode, FieldOpName, FilterNode } from './filter-ast.js';

/** The position `$` stands for in one document, or undefined when the filter recorded none. */
export type PositionFinder = (doc: Doc) => number | undefined;

// Conditions that hold of a field, not of an element: MongoDB takes no position from them.
const PLACELESS: ReadonlySet<FieldOpName> = new Set(['$ne', '$nin', '$not', '$size']);

/** One condition that can record a position: its path, and its test on a document. */
interface Recorder {
  readonly parts: readonly string[];
  readonly test: (doc: Doc) => boolean;
}

// A top-level `$or` records a position only when all its members are positive conditions on
// one path (MongoDB rewrites it to an `$in`); otherwise none of its members does.
function orRecorder(node: FilterNode): Recorder | undefined {
  if (node.kind !== 'or') return undefined;
  const paths = new Set<string>();
  for (const c of node.children) {
    if (c.kind !== 'field' || c.ops.some((op) => PLACELESS.has(op.op))) return undefined;
    paths.add(c.path);
  }
  if (paths.size !== 1) return undefined;
  return { parts: [...paths][0]!.split('.'), test: compileFilterAst({ kind: 'and', children: [node] }) };
}

/**
 * What `$` stands for, as MongoDB's matcher records it: each top-level condition of the filter
 * (`$and` members included, in order; conditions on one path at that path's first place) that
 * matches through an array records the position, in the first array on its path, of the first
 * element it matches (tested on a document holding that element alone in the array); the last
 * one recorded wins. Negations, `$size`, `$nor` and `$or` over several paths record nothing; a
 * whole-array equality records nothing either. The position is then used in whichever array
 * the `$` follows, as in MongoDB (parallel arrays: filter `{x: 92}`, update `y.$`).
 */
export function positionFinder(filter: AndNode | undefined): PositionFinder {
  const recorders: Recorder[] = [];
  for (const c of filter?.children ?? []) {
    if (c.kind === 'field') {
      const parts = c.path.split('.');
      for (const op of c.ops) {
        if (!PLACELESS.has(op.op)) recorders.push({ parts, test: compileFilterAst({ kind: 'and', children: [{ kind: 'field', path: c.path, ops: [op] }] }) });
      }
      continue;
    }
    const or = orRecorder(c);
    if (or !== undefined) recorders.push(or);
  }
  if (recorders.length === 0) return () => undefined;
  return (doc) => {
    let position: number | undefined;
    for (const r of recorders) {
      const at = firstArray(doc, r.parts);
      if (at === undefined) continue;
      for (let i = 0; i < at.array.length; i++) {
        if (r.test(alone(at.prefix, at.array[i]))) {
          position = i;
          break;
        }
      }
    }
    return position;
  };
}

/** The first array on a path through objects (its prefix and value), or undefined when none. */
export function firstArray(doc: Doc, parts: readonly string[]): { prefix: readonly string[]; array: readonly unknown[] } | undefined {
  let cur: unknown = doc;
  for (let j = 0; j < parts.length; j++) {
    if (!isPlainObject(cur)) return undefined;
    const v = getOwn(cur, parts[j]!);
    if (Array.isArray(v)) return { prefix: parts.slice(0, j + 1), array: v };
    cur = v;
  }
  return undefined;
}

// A document holding only `[element]` at `parts`: the condition reads nothing else.
function alone(parts: readonly string[], element: unknown): Doc {
  let value: unknown = [element];
  for (let i = parts.length - 1; i >= 0; i--) {
    const o: Doc = {};
    setOwn(o, parts[i]!, value);
    value = o;
  }
  return value as Doc;
}
