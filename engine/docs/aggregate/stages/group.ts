/**
 * $group (manual: $group, and the accumulator operators) and the stages built on it: $count and
 * $sortByCount. Groups are keyed by the `_id` expression's value (missing counts as null; values
 * equal in BSON terms, such as 1 and 1.0, are one group) and come out in the order their first
 * document came in. Accumulators: $sum, $avg, $min, $max, $first, $last, $push, $addToSet,
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
import { BlockingBudget, chunksOf, outputField, pushAll, stageError, type Stage } from '../stage.js';
import { groupKey, ValueSet } from '../value-key.js';

/** One accumulator's running state for one group; `bytes`: what it holds, when it says. */
interface Accumulator {
  add(v: unknown): void;
  result(): unknown;
  readonly bytes?: number;
}

type AccumulatorFactory = () => Accumulator;

// $min/$max: null and missing ignored; null when nothing was left.
function extreme(sign: 1 | -1): AccumulatorFactory {
  return () => {
    let best: unknown = MISSING;
    return {
      add: (v) => {
        if (!isNullish(v)) best = extremeOf(best === MISSING ? [v] : [best, v], sign);
      },
      result: () => (best === MISSING ? null : best),
    };
  };
}

const ACCUMULATORS: Record<string, (name: string) => AccumulatorFactory> = {
  $sum: () => () => {
    let total = 0;
    return { add: (v) => void (typeof v === 'number' && (total += v)), result: () => total };
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
    };
  },
  $last: () => () => {
    let last: unknown = MISSING;
    return { add: (v) => void (last = v), result: () => (last === MISSING ? null : last) };
  },
  $push: () => () => {
    const out: unknown[] = [];
    return { add: (v) => void (v !== MISSING && out.push(v)), result: () => out };
  },
  $addToSet: () => () => {
    const out = new ValueSet();
    return { add: (v) => void (v !== MISSING && out.add(v)), result: () => out.values };
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
      const groups = new Map<string, { id: unknown; accs: Accumulator[] }>();
      const budget = new BlockingBudget(stage);
      for await (const chunk of input) {
        for (const doc of chunk) {
          const scope = Scope.of(doc, ctx.vars);
          const idValue = id(scope);
          const key = groupKey(idValue);
          let g = groups.get(key);
          const isNew = g === undefined;
          if (g === undefined) {
            const groupId = idValue === MISSING ? null : idValue;
            const idScope = Scope.of(isPlainObject(groupId) ? groupId : {}, ctx.vars);
            g = { id: groupId, accs: fields.map((f) => f.make(idScope)) };
            groups.set(key, g);
            budget.add(g.id);
          }
          for (let i = 0; i < fields.length; i++) {
            const f = fields[i]!;
            const v = f.expr(scope);
            const acc = g.accs[i]!;
            const before = acc.bytes;
            acc.add(v);
            // The N accumulators and percentiles say what they hold (at most n values for the
            // N ones); a group holds every value of $push and the like, one value of the others.
            if (before !== undefined) budget.addBytes(acc.bytes! - before);
            else if (f.keeps || isNew) budget.add(v);
          }
        }
      }
      const out: Doc[] = [];
      for (const g of groups.values()) {
        const doc: Doc = { _id: g.id };
        fields.forEach((f, i) => setOwn(doc, f.name, g.accs[i]!.result()));
        out.push(doc);
      }
      yield* chunksOf(out);
    },
  };
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

/** $sortByCount: groups by the expression and counts, the largest groups first (ties by first seen). */
export function sortByCountStage(spec: unknown, names: ReadonlySet<string>): Stage {
  if (isPlainObject(spec) && !Object.keys(spec)[0]?.startsWith('$')) stageError('$sortByCount', 'the $sortByCount field must be specified as a string starting with $ or as an operator expression');
  const group = groupStage({ _id: spec, count: { $sum: 1 } }, names);
  return {
    name: '$sortByCount',
    reads: [],
    needs: group.needs,
    async *run(input, ctx) {
      const out: Doc[] = [];
      for await (const chunk of group.run(input, ctx)) pushAll(out, chunk);
      out.sort((a, b) => compareValues(b['count'], a['count']));
      yield* chunksOf(out);
    },
  };
}
