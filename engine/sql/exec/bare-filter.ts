import { compareCodePoints, toWellFormedText } from '../../text-order.js';
import type { CompiledExpr, EvalContext } from '../compiled-expr.js';

/*
 * A scan's conditions tested on bare values (what decodeRowValues gives, no SqlValue per column):
 * the fused aggregate (scan-aggregate.ts) filters the rows it decodes this way when every
 * condition on its table is `column op operand` or `column IS [NOT] NULL`, the operand fixed for
 * the execution (a literal, a parameter, an uncorrelated subquery, casts of those). The planner
 * (select.ts, bareConditions) accepts only the column and comparison types for which the bare
 * test below is exactly the general comparison (expression-eval.ts `comparison`: both sides
 * coerced to resolveComparison's type, then compareValues); anything else keeps the general filter.
 */

/** How the bare values of a column compare with the operand, in the comparison's type. */
export type BareOrder =
  /** Numbers, bigints (also mixed: an int2/int4 column against an int8 operand), booleans, dates and timestamps: JS order. */
  | 'plain'
  /** float8 as compareValues orders it: NaN equal to NaN and above everything, -0 = 0. */
  | 'float'
  /** An int8 column compared as float8 (the cast PostgreSQL applies: Number of the bigint). */
  | 'int8-float'
  /** text in the C collation: code point order (UTF-8 byte order). */
  | 'text';

/** The comparisons a condition may make (`!=` is `<>`). */
export type BareCompare = '=' | '<>' | '<' | '<=' | '>' | '>=';

/** One condition of the conjunction. */
export interface BareCond {
  /** The column's slot in the scan's rows. */
  readonly slot: number;
  readonly op: BareCompare | 'null' | 'notnull';
  /** The operand, already coerced to the comparison's type (absent for the NULL tests). */
  readonly operand?: CompiledExpr;
  readonly order?: BareOrder;
  /** The first half of a BETWEEN: the next condition's operand is evaluated with this one's. */
  readonly withNext?: boolean;
}


function compareFloat(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) return 0;
  // One of them NaN: NaN is above every number and equal to itself.
  if (Number.isNaN(a)) return Number.isNaN(b) ? 0 : 1;
  return -1;
}

/** A comparison of one column with a fixed value: false, true, or null when the column is NULL. */
type Test = (v: unknown) => boolean | null;

function comparator(order: BareOrder): (v: unknown, w: unknown) => number {
  switch (order) {
    case 'plain':
      return (v, w) => ((v as number) < (w as number) ? -1 : (v as number) > (w as number) ? 1 : 0);
    case 'float':
      return (v, w) => compareFloat(v as number, w as number);
    case 'int8-float':
      return (v, w) => compareFloat(Number(v as bigint), w as number);
    case 'text':
      return (v, w) => compareCodePoints(v as string, w as string);
    default:
      return order satisfies never;
  }
}

/** The test of a comparison against the operand's value `w` (not NULL). */
function comparisonTest(op: BareCompare, order: BareOrder, w: unknown): Test {
  // Equality of plain values and strings needs no order; loose equality on purpose: an int2/int4
  // column's number against an int8 operand's bigint is exact (5 == 5n).
  if (order === 'text' || order === 'plain') {
    if (op === '=') return (v) => (v === null ? null : v == w);
    if (op === '<>') return (v) => (v === null ? null : v != w);
  }
  const cmp = comparator(order);
  switch (op) {
    case '=':
      return (v) => (v === null ? null : cmp(v, w) === 0);
    case '<>':
      return (v) => (v === null ? null : cmp(v, w) !== 0);
    case '<':
      return (v) => (v === null ? null : cmp(v, w) < 0);
    case '<=':
      return (v) => (v === null ? null : cmp(v, w) <= 0);
    case '>':
      return (v) => (v === null ? null : cmp(v, w) > 0);
    case '>=':
      return (v) => (v === null ? null : cmp(v, w) >= 0);
    default:
      return op satisfies never;
  }
}

/**
 * The conjunction's test over a row of bare values (`values` by slot), for one execution: each
 * operand is evaluated when its condition is first tested, and the conditions are tested in
 * order, stopping at the first that is not true (false or NULL), as the general filter runs a
 * WHERE's quals (quals.ts; so an operand that raises raises for the same rows, a subquery never
 * needed is never read).
 */
export function bareFilter(conds: readonly BareCond[], ctx: EvalContext): (values: readonly unknown[]) => boolean {
  const n = conds.length;
  const slots = Int32Array.from(conds, (c) => c.slot);
  const tests: (Test | undefined)[] = conds.map((c) => (c.op === 'null' ? (v: unknown) => v === null : c.op === 'notnull' ? (v: unknown) => v !== null : undefined));
  const testOf = (i: number): Test => {
    const c = conds[i]!;
    const value = c.operand!.evaluate(ctx).value;
    // The general comparison compares UTF-8 bytes, where a lone surrogate is U+FFFD; stored text is well-formed already.
    const w = c.order === 'text' && typeof value === 'string' ? toWellFormedText(value) : value;
    // A NULL operand: the comparison is NULL for every row.
    const t: Test = w === null ? () => null : comparisonTest(c.op as BareCompare, c.order!, w);
    tests[i] = t;
    if (c.withNext === true && tests[i + 1] === undefined) testOf(i + 1);
    return t;
  };
  if (n === 1) {
    const slot = slots[0]!;
    let t = tests[0];
    return (values) => (t ??= testOf(0))(values[slot]) === true;
  }
  return (values) => {
    for (let i = 0; i < n; i++) if ((tests[i] ?? testOf(i))(values[slots[i]!]) !== true) return false;
    return true;
  };
}
