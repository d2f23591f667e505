/**
 * $group (manual: $group, and the accumulator operators) and the stages built on it: $count and
 * $sortByCount. Groups are keyed by the `_id` expression's value (missing counts as null; values
 * equal in BSON terms, such as 1 and 1.0, are one group) and come out in the order their first
 * document came in. Accumulators: $sum, $avg, $min, $max, $first, $last, $push, $addToSet,
 * $count, $mergeObjects, $stdDevPop, $stdDevSamp.
 */

import { compareValues, isPlainObject, MISSING, setOwn, type Doc } from '../../values.js';
import { extremeOf } from '../expression/array.js';
import { isNullish, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { Scope } from '../expression/expression.js';
import { needsOf } from '../dependencies.js';
import { BlockingBudget, chunksOf, outputField, pushAll, stageError, type Stage } from '../stage.js';
import { groupKey, ValueSet } from '../value-key.js';

/** One accumulator's running state for one group. */
interface Accumulator {
  add(v: unknown): void;
  result(): unknown;
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

interface Field {
  readonly name: string;
  readonly make: AccumulatorFactory;
  readonly expr: Expr;
  /** True for accumulators that keep the values they take ($push, $addToSet...): they count against the bound. */
  readonly keeps: boolean;
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
      fields.push({ name, make: ACCUMULATORS['$sum']!('$sum'), expr: () => 1, keeps: false });
      continue;
    }
    const factory = Object.hasOwn(ACCUMULATORS, op) ? ACCUMULATORS[op] : undefined;
    if (factory === undefined) stageError(stage, `unknown group operator '${op}'`);
    fields.push({ name, make: factory(op), expr: compileExpression(acc[op], names), keeps: KEEPS_VALUES.has(op) });
  }
  const exprs = [spec['_id'], ...Object.keys(spec).filter((k) => k !== '_id').map((k) => Object.values(spec[k] as object)[0])];
  return {
    name: stage,
    reads: [],
    needs: needsOf(exprs, [], true),
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
            g = { id: idValue === MISSING ? null : idValue, accs: fields.map((f) => f.make()) };
            groups.set(key, g);
            budget.add(g.id);
          }
          for (let i = 0; i < fields.length; i++) {
            const f = fields[i]!;
            const v = f.expr(scope);
            g.accs[i]!.add(v);
            // A group holds every value of $push and the like, one value of the others.
            if (f.keeps || isNew) budget.add(v);
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
