/**
 * $group (manual: $group, and the accumulator operators) and the stages built on it: $count and
 * $sortByCount. Groups are keyed by the `_id` expression's value (missing counts as null; values
 * equal in BSON terms, such as 1 and 1.0, are one group) and come out in the order their first
 * document came in; or, when the groups passed the memory bound and were spilled (allowDiskUse),
 * in the order of their keys (GroupRuns): MongoDB gives $group's output no order. Accumulators: $sum, $avg, $min, $max, $first, $last, $push, $addToSet,
 * $count, $mergeObjects, $stdDevPop, $stdDevSamp; the N accumulators $firstN, $lastN, $minN,
 * $maxN, $top, $bottom, $topN, $bottomN (expression/accumulator-n.ts), whose `n` is an expression
 * of the group key, evaluated once per group on the `_id` as the document (MongoDB's
 * initializer: `n: {$cond: [{$eq: ["$st", "CA"]}, 10, 4]}` with `_id: {st: "$state"}`); and
 * $percentile, $median (expression/percentile.ts).
 */

import { compareValues, isPlainObject, MISSING, setOwn, type Doc } from '../../values.js';
import { isBottom, isSingle, nAccumulator, parseNInput, parseTopBottom, topBottomN, validateN } from '../expression/accumulator-n.js';
import { extremeOf } from '../expression/array.js';
import { countsForPercentile, parsePercentile, percentileResult } from '../expression/percentile.js';
import { isNullish, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { Scope } from '../expression/expression.js';
import { needsOf } from '../dependencies.js';
import { approxBytes, BlockingBudget, chunksOf, outputField, pushAll, stageError, type DocStream, type Stage } from '../stage.js';
import { decodeDocument, encodeDocument } from '../../doc-codec.js';
import { DocSorter, mergeRuns, refuseSort, writeRun } from '../../external-sort.js';
import { compileSort } from '../../sort.js';
import type { SpillFile, SpillRun, SpillSpace } from '../../../storage/index.js';
import { groupKey, ValueSet } from '../value-key.js';

/**
 * One accumulator's running state for one group; `bytes`: what it holds, when it says. state()
 * and merge() let a group spilled in stretches of the input (see spilling below) be put back
 * together: merge takes the state of the same group from a later stretch.
 */
interface Accumulator {
  add(v: unknown): void;
  result(): unknown;
  readonly bytes?: number;
  /** The partial state as plain data (no MISSING: a spill record holds it). */
  state(): unknown;
  merge(state: unknown): void;
}

type AccumulatorFactory = () => Accumulator;

// A value that may be MISSING as plain data: [] for MISSING, [v] otherwise.
const maybe = (v: unknown): unknown[] => (v === MISSING ? [] : [v]);
const unmaybe = (s: unknown): unknown => ((s as unknown[]).length === 0 ? MISSING : (s as unknown[])[0]);

// $min/$max: null and missing ignored; null when nothing was left.
function extreme(sign: 1 | -1): AccumulatorFactory {
  return () => {
    let best: unknown = MISSING;
    const add = (v: unknown): void => {
      if (!isNullish(v)) best = extremeOf(best === MISSING ? [v] : [best, v], sign);
    };
    return {
      add,
      result: () => (best === MISSING ? null : best),
      state: () => maybe(best),
      merge: (s) => add(unmaybe(s)),
    };
  };
}

/** Values kept in a list ($push, and the moments' and percentiles' inputs): merged by concatenation, in input order. */
function listState(values: unknown[]): Pick<Accumulator, 'state' | 'merge'> {
  return { state: () => values, merge: (s) => pushAll(values, s as unknown[]) };
}

const ACCUMULATORS: Record<string, (name: string) => AccumulatorFactory> = {
  $sum: () => () => {
    let total = 0;
    return {
      add: (v) => void (typeof v === 'number' && (total += v)),
      result: () => total,
      state: () => total,
      merge: (s) => void (total += s as number),
    };
  },
  $avg: () => () => {
    let total = 0;
    let n = 0;
    return {
      add: (v) => {
        if (typeof v !== 'number') return;
        total += v;
        n++;
      },
      result: () => (n === 0 ? null : total / n),
      state: () => [total, n],
      merge: (s) => {
        const [t, c] = s as [number, number];
        total += t;
        n += c;
      },
    };
  },
  $min: () => extreme(-1),
  $max: () => extreme(1),
  $first: () => () => {
    let first: unknown = MISSING;
    let set = false;
    return {
      add: (v) => {
        if (set) return;
        set = true;
        first = v;
      },
      result: () => (first === MISSING ? null : first),
      // [] before any input; [[]] or [[v]] after: a later stretch's first never replaces an earlier one's.
      state: () => (set ? [maybe(first)] : []),
      merge: (s) => {
        if (set || (s as unknown[]).length === 0) return;
        set = true;
        first = unmaybe((s as unknown[])[0]);
      },
    };
  },
  $last: () => () => {
    let last: unknown = MISSING;
    // A stretch's group saw at least one document: its last is the later one.
    return { add: (v) => void (last = v), result: () => (last === MISSING ? null : last), state: () => maybe(last), merge: (s) => void (last = unmaybe(s)) };
  },
  $push: () => () => {
    const out: unknown[] = [];
    return { add: (v) => void (v !== MISSING && out.push(v)), result: () => out, ...listState(out) };
  },
  $addToSet: () => () => {
    const out = new ValueSet();
    // The set across stretches: a value seen in an earlier one is not added again.
    return {
      add: (v) => void (v !== MISSING && out.add(v)),
      result: () => out.values,
      state: () => out.values,
      merge: (s) => {
        for (const v of s as unknown[]) out.add(v);
      },
    };
  },
  $mergeObjects: (name) => () => {
    const out: Doc = {};
    return {
      add: (v) => {
        if (isNullish(v)) return;
        if (!isPlainObject(v)) stageError('$group', `${name} requires object inputs`);
        for (const [k, x] of Object.entries(v)) setOwn(out, k, x);
      },
      result: () => out,
      // Merged in input order: a later stretch's fields win, as a later document's do.
      state: () => out,
      merge: (s) => {
        for (const [k, x] of Object.entries(s as Doc)) setOwn(out, k, x);
      },
    };
  },
  $stdDevPop: () => stdDev(false),
  $stdDevSamp: () => stdDev(true),
};

function stdDev(sample: boolean): AccumulatorFactory {
  return () => {
    const values: number[] = [];
    return {
      add: (v) => void (typeof v === 'number' && values.push(v)),
      result: () => {
        const n = values.length;
        if (n === 0 || (sample && n === 1)) return null;
        const mean = values.reduce((a, b) => a + b, 0) / n;
        const sq = values.reduce((a, b) => a + (b - mean) ** 2, 0);
        return Math.sqrt(sq / (sample ? n - 1 : n));
      },
      // The values themselves, not running moments: the result is computed as without spilling.
      ...listState(values),
    };
  };
}

/** A compiled accumulator of a group specification. */
interface Compiled {
  /** A new state for a group, given the scope of its key (the `_id` as the document). */
  readonly make: (idScope: Scope) => Accumulator;
  /** The value each document gives it. */
  readonly expr: Expr;
  /** True for accumulators that keep the values they take ($push, $addToSet...): they count against the bound. */
  readonly keeps: boolean;
  /** The fields it reads besides those of its expressions (a sortBy's). */
  readonly paths: readonly string[];
}

interface Field extends Compiled {
  readonly name: string;
}

/** What a number held costs (approxBytes of a number). */
const NUMBER_BYTES = 8;

/** The N accumulators and the percentiles, each state bounded or counted by its `bytes`. */
function compileNAccumulator(op: string, arg: unknown, names: ReadonlySet<string>): Compiled | undefined {
  if (op === '$firstN' || op === '$lastN' || op === '$minN' || op === '$maxN') {
    const spec = parseNInput(arg, op);
    const n = compileExpression(spec.n, names);
    return { make: (idScope) => nAccumulator(op, validateN(n(idScope), op)), expr: compileExpression(spec.input, names), keeps: false, paths: [] };
  }
  if (op === '$top' || op === '$bottom' || op === '$topN' || op === '$bottomN') {
    const spec = parseTopBottom(arg, op);
    const n = compileExpression(spec.n, names);
    const output = compileExpression(spec.output, names);
    const { sort } = spec;
    return {
      make: (idScope) => topBottomN(validateN(n(idScope), op), isBottom(op), isSingle(op), sort),
      expr: (scope) => ({ key: sort.keyOf(scope.get('CURRENT')), out: output(scope) }),
      keeps: false,
      paths: sort.keys.map((k) => k.path),
    };
  }
  if (op === '$percentile' || op === '$median') {
    const spec = parsePercentile(arg, op, (e) => compileExpression(e, names));
    const make = (): Accumulator => {
      const values: number[] = [];
      return {
        add: (v) => void (countsForPercentile(v) && values.push(v)),
        result: () => percentileResult(spec, values),
        get bytes() {
          return values.length * NUMBER_BYTES;
        },
        ...listState(values),
      };
    };
    return { make, expr: compileExpression(spec.input, names), keeps: false, paths: [] };
  }
  return undefined;
}

const KEEPS_VALUES = new Set(['$push', '$addToSet', '$mergeObjects', '$stdDevPop', '$stdDevSamp']);

/** `keyOf`: the group key of a document instead of the `_id` expression ($bucket's range). */
export function groupStage(spec: unknown, names: ReadonlySet<string>, keyOf?: Expr): Stage {
  const stage = '$group';
  if (!isPlainObject(spec)) stageError(stage, 'a group specification must be an object');
  if (!Object.hasOwn(spec, '_id')) stageError(stage, "a group specification must include an _id");
  const id = keyOf ?? compileExpression(spec['_id'], names);
  const fields: Field[] = [];
  for (const key of Object.keys(spec)) {
    if (key === '_id') continue;
    const name = outputField(stage, key, 'field name');
    const acc = spec[key];
    if (!isPlainObject(acc) || Object.keys(acc).length !== 1) stageError(stage, `The field '${name}' must be an accumulator object`);
    const op = Object.keys(acc)[0]!;
    if (op === '$count') {
      if (!isPlainObject(acc[op]) || Object.keys(acc[op]).length > 0) stageError(stage, '$count takes no arguments, i.e. $count: {}');
      fields.push({ name, make: ACCUMULATORS['$sum']!('$sum'), expr: () => 1, keeps: false, paths: [] });
      continue;
    }
    const n = compileNAccumulator(op, acc[op], names);
    if (n !== undefined) {
      fields.push({ name, ...n });
      continue;
    }
    const factory = Object.hasOwn(ACCUMULATORS, op) ? ACCUMULATORS[op] : undefined;
    if (factory === undefined) stageError(stage, `unknown group operator '${op}'`);
    const make = factory(op);
    fields.push({ name, make: () => make(), expr: compileExpression(acc[op], names), keeps: KEEPS_VALUES.has(op), paths: [] });
  }
  const exprs = [spec['_id'], ...Object.keys(spec).filter((k) => k !== '_id').map((k) => Object.values(spec[k] as object)[0])];
  return {
    name: stage,
    reads: [],
    needs: needsOf(exprs, fields.flatMap((f) => f.paths), true),
    async *run(input, ctx) {
      const memory = ctx.memory;
      let groups = new Map<string, Group>();
      // Typed, so that refuse() (never) narrows what follows it.
      const budget: BlockingBudget = new BlockingBudget(stage, memory);
      let spilled: GroupRuns | undefined;
      for await (const chunk of input) {
        for (const doc of chunk) {
          const scope = Scope.of(doc, ctx.vars);
          const idValue = id(scope);
          const key = groupKey(idValue);
          let g = groups.get(key);
          const isNew = g === undefined;
          if (g === undefined) {
            const groupId = idValue === MISSING ? null : idValue;
            g = { id: groupId, accs: fields.map((f) => f.make(idScopeOf(groupId, ctx.vars))) };
            groups.set(key, g);
            budget.count(approxBytes(g.id));
          }
          for (let i = 0; i < fields.length; i++) {
            const f = fields[i]!;
            const v = f.expr(scope);
            const acc = g.accs[i]!;
            const before = acc.bytes;
            acc.add(v);
            // The N accumulators and percentiles say what they hold (at most n values for the
            // N ones); a group holds every value of $push and the like, one value of the others.
            if (before !== undefined) budget.count(acc.bytes! - before);
            else if (f.keeps || isNew) budget.count(approxBytes(v));
          }
          if (!budget.over) continue;
          // Past the bound: the groups so far go to disk as a run, ordered by key (allowDiskUse).
          if (!memory.allowDiskUse) refuseGroup();
          // One group past the bound by itself cannot be helped by spilling (nor can a run without a spill area).
          if (groups.size <= 1 || memory.spill === undefined) budget.refuse();
          spilled ??= new GroupRuns(memory.spill);
          await spilled.write(groups);
          groups = new Map();
          budget.release(budget.bytes);
        }
      }
      if (spilled === undefined) {
        const out: Doc[] = [];
        for (const g of groups.values()) out.push(groupResult(g));
        yield* chunksOf(out);
        return;
      }
      try {
        await spilled.write(groups);
        groups = new Map();
        yield* mergedGroups(spilled, budget, ctx.vars);
      } finally {
        await spilled.remove();
      }
    },
  };

  function groupResult(g: Group): Doc {
    const doc: Doc = { _id: g.id };
    fields.forEach((f, i) => setOwn(doc, f.name, g.accs[i]!.result()));
    return doc;
  }

  /** The groups of the runs, each put back together from its partial states (runs in input order). */
  async function* mergedGroups(runs: GroupRuns, budget: BlockingBudget, vars: Scope | undefined): DocStream {
    let out: Doc[] = [];
    let current: { key: string; group: Group; kept: number } | undefined;
    for await (const rec of runs.merged(budget.limit)) {
      if (current === undefined || rec.key !== current.key) {
        if (current !== undefined) out.push(groupResult(current.group));
        if (out.length >= OUT_CHUNK) {
          yield out;
          out = [];
        }
        current = { key: rec.key, group: { id: rec.id, accs: fields.map((f) => f.make(idScopeOf(rec.id, vars))) }, kept: approxBytes(rec.id) };
      }
      const { group } = current;
      let held = current.kept;
      for (let i = 0; i < fields.length; i++) {
        const acc = group.accs[i]!;
        acc.merge(rec.states[i]);
        if (acc.bytes !== undefined) held += acc.bytes;
        else if (fields[i]!.keeps) current.kept += approxBytes(rec.states[i]);
      }
      // One group is put together in memory: past the bound by itself, it fails as without spilling.
      if (Math.max(held, current.kept) > budget.limit) budget.refuse();
    }
    if (current !== undefined) out.push(groupResult(current.group));
    if (out.length > 0) yield out;
  }
}

/** A group being accumulated: its `_id` and one state per accumulator. */
interface Group {
  readonly id: unknown;
  readonly accs: Accumulator[];
}

/** Output documents per chunk. */
const OUT_CHUNK = 256;

/** The scope of a group's key (the `_id` as the document): the N accumulators' `n` reads it. */
function idScopeOf(groupId: unknown, vars: Scope | undefined): Scope {
  return Scope.of(isPlainObject(groupId) ? groupId : {}, vars);
}

/** MongoDB's message for a $group past its bound without allowDiskUse (code 292). @throws QUERY_ERROR */
function refuseGroup(): never {
  stageError('$group', "Exceeded memory limit for $group, but didn't allow external sort. Pass allowDiskUse:true to opt in.");
}

/**
 * A $group's spilled runs: each run holds the partial groups of one stretch of the input, ordered
 * by group key (groupKey, compared as strings), one record per group: `{k: key, i: _id, s:
 * [state of each accumulator]}` (encodeDocument). Merging the runs by key meets each group's
 * partial states in input order (equal keys: the earlier run first).
 */
class GroupRuns {
  readonly #space: SpillSpace;
  #file: SpillFile | undefined;
  readonly #runs: SpillRun[] = [];

  constructor(space: SpillSpace) {
    this.#space = space;
  }

  async write(groups: ReadonlyMap<string, Group>): Promise<void> {
    if (groups.size === 0) return;
    const keys = [...groups.keys()].sort();
    this.#file ??= await this.#space.create();
    this.#runs.push(await writeRun(this.#file, (function* () {
      for (const k of keys) {
        const g = groups.get(k)!;
        yield encodeDocument({ k, i: g.id, s: g.accs.map((a) => a.state()) });
      }
    })()));
  }

  merged(memoryBytes: number): AsyncGenerator<{ key: string; id: unknown; states: unknown[] }> {
    return mergeRuns(this.#file!, this.#runs, (rec) => {
      const d = decodeDocument(rec);
      const key = d['k'] as string;
      return { item: { key, id: d['i'], states: d['s'] as unknown[] }, key };
    }, (a, b) => (a < b ? -1 : a > b ? 1 : 0), memoryBytes);
  }

  remove(): Promise<void> {
    return this.#file?.remove() ?? Promise.resolve();
  }
}

export function countStage(spec: unknown): Stage {
  const name = outputField('$count', spec, 'field name');
  return {
    name: '$count',
    reads: [],
    needs: needsOf([], [], true),
    async *run(input) {
      let n = 0;
      for await (const chunk of input) n += chunk.length;
      if (n > 0) yield [{ [name]: n }];
    },
  };
}

/** $sortByCount's order: the largest groups first (ties as the groups came). */
const BY_COUNT = compileSort({ count: -1 });

/** $sortByCount: groups by the expression and counts, the largest groups first (ties by first seen). */
export function sortByCountStage(spec: unknown, names: ReadonlySet<string>): Stage {
  if (isPlainObject(spec) && !Object.keys(spec)[0]?.startsWith('$')) stageError('$sortByCount', 'the $sortByCount field must be specified as a string starting with $ or as an operator expression');
  const group = groupStage({ _id: spec, count: { $sum: 1 } }, names);
  return {
    name: '$sortByCount',
    reads: [],
    needs: group.needs,
    async *run(input, ctx) {
      // The groups sorted as $sort does: past the bound, spilled (allowDiskUse), as the groups were.
      const sorter = new DocSorter(BY_COUNT, { memory: ctx.memory, refuse: (memory) => (memory.allowDiskUse ? new BlockingBudget('$sortByCount', memory).refuse() : refuseSort(memory, '$sortByCount')) });
      for await (const chunk of group.run(input, ctx)) {
        for (const d of chunk) {
          const spilled = sorter.add(d);
          if (spilled !== undefined) await spilled;
        }
      }
      yield* sorter.sorted();
    },
  };
}
