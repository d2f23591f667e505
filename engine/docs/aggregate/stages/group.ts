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
import { countsForPercentile, parsePercentile, percentileResult } from '../expression/percentile.js';
import { isNullish, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { Scope } from '../expression/expression.js';
import { needsOf } from '../dependencies.js';
import { approxBytes, BlockingBudget, chunksOf, outputField, pushAll, stageError, type DocStream, type Stage } from '../stage.js';
import { DocSorter, refuseSort } from '../../external-sort.js';
import { compileSort } from '../../sort.js';
import type { ValueWriter } from '../../spill-value-codec.js';
import { GroupRuns } from './group-runs.js';
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

// The accumulators every group makes one of are classes: one small object per group (a $group by
// a unique key makes one per document), where object literals of closures cost five functions
// and a context each (~250 bytes against ~30).

/** $sum (and $count): non-numbers ignored. */
class SumState implements Accumulator {
  total = 0;
  add(v: unknown): void {
    if (typeof v === 'number') this.total += v;
  }
  result(): unknown {
    return this.total;
  }
  state(): unknown {
    return this.total;
  }
  merge(s: unknown): void {
    this.total += s as number;
  }
}

/** $avg: non-numbers ignored; null when nothing was left. */
class AvgState implements Accumulator {
  total = 0;
  n = 0;
  add(v: unknown): void {
    if (typeof v !== 'number') return;
    this.total += v;
    this.n++;
  }
  result(): unknown {
    return this.n === 0 ? null : this.total / this.n;
  }
  state(): unknown {
    return [this.total, this.n];
  }
  merge(s: unknown): void {
    const [t, c] = s as [number, number];
    this.total += t;
    this.n += c;
  }
}

/** $min / $max (`sign` -1 / 1) in BSON order: null and missing ignored; null when nothing was left; ties keep the first. */
class ExtremeState implements Accumulator {
  best: unknown = MISSING;
  constructor(readonly sign: 1 | -1) {}
  add(v: unknown): void {
    if (isNullish(v)) return;
    if (this.best === MISSING || this.sign * compareValues(v, this.best) > 0) this.best = v;
  }
  result(): unknown {
    return this.best === MISSING ? null : this.best;
  }
  state(): unknown {
    return maybe(this.best);
  }
  merge(s: unknown): void {
    this.add(unmaybe(s));
  }
}

/** $first: the first document's value (missing as null). */
class FirstState implements Accumulator {
  first: unknown = MISSING;
  set = false;
  add(v: unknown): void {
    if (this.set) return;
    this.set = true;
    this.first = v;
  }
  result(): unknown {
    return this.first === MISSING ? null : this.first;
  }
  // [] before any input; [[]] or [[v]] after: a later stretch's first never replaces an earlier one's.
  state(): unknown {
    return this.set ? [maybe(this.first)] : [];
  }
  merge(s: unknown): void {
    if (this.set || (s as unknown[]).length === 0) return;
    this.set = true;
    this.first = unmaybe((s as unknown[])[0]);
  }
}

/** $last: the last document's value (missing as null). A stretch's group saw at least one document: its last is the later one. */
class LastState implements Accumulator {
  last: unknown = MISSING;
  add(v: unknown): void {
    this.last = v;
  }
  result(): unknown {
    return this.last === MISSING ? null : this.last;
  }
  state(): unknown {
    return maybe(this.last);
  }
  merge(s: unknown): void {
    this.last = unmaybe(s);
  }
}

/** Values kept in a list ($push, and the moments' and percentiles' inputs): merged by concatenation, in input order. */
function listState(values: unknown[]): Pick<Accumulator, 'state' | 'merge'> {
  return { state: () => values, merge: (s) => pushAll(values, s as unknown[]) };
}

/** $push: every value but missing, in input order. */
class PushState implements Accumulator {
  readonly values: unknown[] = [];
  add(v: unknown): void {
    if (v !== MISSING) this.values.push(v);
  }
  result(): unknown {
    return this.values;
  }
  state(): unknown {
    return this.values;
  }
  merge(s: unknown): void {
    pushAll(this.values, s as unknown[]);
  }
}

/** $addToSet: distinct values but missing, first occurrences in order; a set across stretches too. */
class AddToSetState implements Accumulator {
  readonly set = new ValueSet();
  add(v: unknown): void {
    if (v !== MISSING) this.set.add(v);
  }
  result(): unknown {
    return this.set.values;
  }
  state(): unknown {
    return this.set.values;
  }
  merge(s: unknown): void {
    for (const v of s as unknown[]) this.set.add(v);
  }
}

/** $mergeObjects: later documents' fields win; merged in input order across stretches too. */
class MergeObjectsState implements Accumulator {
  readonly out: Doc = {};
  constructor(readonly name: string) {}
  add(v: unknown): void {
    if (isNullish(v)) return;
    if (!isPlainObject(v)) stageError('$group', `${this.name} requires object inputs`);
    for (const [k, x] of Object.entries(v)) setOwn(this.out, k, x);
  }
  result(): unknown {
    return this.out;
  }
  state(): unknown {
    return this.out;
  }
  merge(s: unknown): void {
    for (const [k, x] of Object.entries(s as Doc)) setOwn(this.out, k, x);
  }
}

/** $stdDevPop / $stdDevSamp: the values themselves, not running moments, so the result is computed as without spilling. */
class StdDevState implements Accumulator {
  readonly values: number[] = [];
  constructor(readonly sample: boolean) {}
  add(v: unknown): void {
    if (typeof v === 'number') this.values.push(v);
  }
  result(): unknown {
    const values = this.values;
    const n = values.length;
    if (n === 0 || (this.sample && n === 1)) return null;
    const mean = values.reduce((a, b) => a + b, 0) / n;
    const sq = values.reduce((a, b) => a + (b - mean) ** 2, 0);
    return Math.sqrt(sq / (this.sample ? n - 1 : n));
  }
  state(): unknown {
    return this.values;
  }
  merge(s: unknown): void {
    pushAll(this.values, s as unknown[]);
  }
}

const ACCUMULATORS: Record<string, (name: string) => AccumulatorFactory> = {
  $sum: () => () => new SumState(),
  $avg: () => () => new AvgState(),
  $min: () => () => new ExtremeState(-1),
  $max: () => () => new ExtremeState(1),
  $first: () => () => new FirstState(),
  $last: () => () => new LastState(),
  $push: () => () => new PushState(),
  $addToSet: () => () => new AddToSetState(),
  $mergeObjects: (name) => () => new MergeObjectsState(name),
  $stdDevPop: () => () => new StdDevState(false),
  $stdDevSamp: () => () => new StdDevState(true),
};

/** A compiled accumulator of a group specification. */
interface Compiled {
  /** A new state for a group, given the scope of its key (the `_id` as the document) when readsId says it reads it. */
  readonly make: (idScope: Scope) => Accumulator;
  /** True for the N accumulators, whose `n` is evaluated on the group's key. */
  readonly readsId?: boolean;
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
    return { make: (idScope) => nAccumulator(op, validateN(n(idScope), op)), readsId: true, expr: compileExpression(spec.input, names), keeps: false, paths: [] };
  }
  if (op === '$top' || op === '$bottom' || op === '$topN' || op === '$bottomN') {
    const spec = parseTopBottom(arg, op);
    const n = compileExpression(spec.n, names);
    const output = compileExpression(spec.output, names);
    const { sort } = spec;
    return {
      make: (idScope) => topBottomN(validateN(n(idScope), op), isBottom(op), isSingle(op), sort),
      readsId: true,
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
  const readsId = fields.some((f) => f.readsId === true);
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
            g = { id: groupId, accs: newStates(groupId, ctx.vars) };
            groups.set(key, g);
            budget.count(approxBytes(g.id) + GROUP_BYTES + fields.length * ACCUMULATOR_BYTES);
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
          spilled ??= new GroupRuns(memory.spill, memory.maxBlockingBytes);
          await spilled.write(groups, writeStates);
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
        await spilled.write(groups, writeStates);
        groups = new Map();
        yield* mergedGroups(spilled, budget, ctx.vars);
      } finally {
        await spilled.remove();
      }
    },
  };

  /** A new group's accumulators; the scope of its key is made only for those that read it (most read none). */
  function newStates(id: unknown, vars: Scope | undefined): Accumulator[] {
    const idScope = readsId ? idScopeOf(id, vars) : NO_ID_SCOPE;
    // map() sizes the array: pushed, each group's took room for 17 states.
    return fields.map((f) => f.make(idScope));
  }

  function groupResult(g: Group): Doc {
    const doc: Doc = { _id: g.id };
    fields.forEach((f, i) => setOwn(doc, f.name, g.accs[i]!.result()));
    return doc;
  }

  /** The groups of the runs, each put back together from its partial states (runs in input order). */
  async function* mergedGroups(runs: GroupRuns, budget: BlockingBudget, vars: Scope | undefined): DocStream {
    let out: Doc[] = [];
    let key: string | undefined;
    let group: Group | undefined;
    let kept = 0;
    const merge = runs.merge(budget.limit);
    for (;;) {
      const more = merge.next();
      if (more === false || (more !== true && !(await more))) break;
      if (merge.key !== key) {
        if (group !== undefined) {
          out.push(groupResult(group));
          if (out.length >= OUT_CHUNK) {
            yield out;
            out = [];
          }
        }
        key = merge.key;
        const id = merge.id();
        group = { id, accs: newStates(id, vars) };
        kept = approxBytes(id);
      } else merge.id();
      const r = merge.reader;
      let held = kept;
      for (let i = 0; i < fields.length; i++) {
        const acc = group!.accs[i]!;
        const state = r.value();
        acc.merge(state);
        if (acc.bytes !== undefined) held += acc.bytes;
        else if (fields[i]!.keeps) kept += approxBytes(state);
      }
      // One group is put together in memory: past the bound by itself, it fails as without spilling.
      if (Math.max(held, kept) > budget.limit) budget.refuse();
    }
    if (group !== undefined) out.push(groupResult(group));
    if (out.length > 0) yield out;
  }
}

/** Writes a group's partial states to its spill record (GroupRuns). */
function writeStates(w: ValueWriter, g: Group): void {
  for (const acc of g.accs) w.value(acc.state());
}

/** A group being accumulated: its `_id` and one state per accumulator. */
interface Group {
  readonly id: unknown;
  readonly accs: Accumulator[];
}

/**
 * What a group costs in memory besides its key's value and what its accumulators keep: its map
 * entry and key, its record, its scope and the array of its states (~410 bytes measured for a
 * group of one $sum by a string key, of which the key's value is ~40), and each state object. A
 * $group by a unique key makes one per document: counted at ~60 bytes a group, 64 MiB of
 * estimate held ~400 MiB before it spilled.
 */
const GROUP_BYTES = 320;
const ACCUMULATOR_BYTES = 32;

/** Output documents per chunk. */
const OUT_CHUNK = 256;

/** What the accumulators that do not read their group's key are given for its scope. */
const NO_ID_SCOPE = Scope.of({});

/** The scope of a group's key (the `_id` as the document): the N accumulators' `n` reads it. */
function idScopeOf(groupId: unknown, vars: Scope | undefined): Scope {
  return Scope.of(isPlainObject(groupId) ? groupId : {}, vars);
}

/** MongoDB's message for a $group past its bound without allowDiskUse (code 292). @throws QUERY_ERROR */
function refuseGroup(): never {
  stageError('$group', "Exceeded memory limit for $group, but didn't allow external sort. Pass allowDiskUse:true to opt in.");
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
