// Aggregate functions (count, sum, avg, min, max, string_agg, array_agg, bool_and/bool_or/every,
// stddev/variance): resolution of the overload from the argument types, and accumulators that
// fold rows one at a time. Pure: the executor owns grouping, ordering and memory limits.
import { checkFloat, compareValues, intervalSpan } from './operators.js';
import { castValue, typeDisplay } from './sql-cast.js';
import {
  arrayTypeOf,
  bpcharTrim,
  Decimal,
  isArrayType,
  isEnumType,
  jsonbText,
  makeInt,
  sqlFail,
  toJsonb,
  toText,
  type JsonValue,
  type NonNullSqlValue,
  type ScalarTypeName,
  type SqlTypeName,
  type SqlValue,
  NO_FUNCTION_HINT,
} from './sql-types.js';
import { decimalSqrtToScale } from './decimal.js';
import { sqlToJson } from './functions/json-functions.js';

/** The running state of one aggregate over one group (or one window frame). */
export interface Accumulator {
  /** Folds one row's arguments (already of the def's argTypes, or unknown literals). */
  add(args: readonly SqlValue[]): void;
  /** The aggregate over the rows added so far; does not consume the state (may be called again). */
  result(): SqlValue;
  /**
   * Takes out the earliest row still in (a window frame whose start moved on), given its arguments
   * again: PostgreSQL's inverse transition. False when the state cannot tell the result without
   * it (the caller folds the frame again). Only accumulators from AggregateDef.createMoving have it.
   */
  removeOldest?(args: readonly SqlValue[]): boolean;
  /** Approximate bytes held by growing state (DISTINCT sets, string_agg, array_agg); absent when constant. */
  readonly bytes?: number;
}

export interface AggregateDef {
  readonly name: string;
  readonly resultType: SqlTypeName;
  /** The types the arguments are read as (unknown literals are converted to these). */
  readonly argTypes: readonly SqlTypeName[];
  create(): Accumulator;
  /**
   * Accumulators with removeOldest, for window frames whose start moves; absent for aggregates
   * PostgreSQL gives no inverse (float sums and moments, which would round differently,
   * string_agg, array_agg, json aggregates). min/max have one here (a monotonic deque) though
   * PostgreSQL refolds them: the result is the same value.
   */
  createMoving?(): Accumulator;
  /** add() keeps no reference to the array it is given: the caller may reuse it. */
  readonly reusableArgs?: boolean;
}

export interface AggregateOptions {
  distinct: boolean;
  /** count(*): no arguments, every row counts. */
  star: boolean;
}

type Resolved = { resultType: SqlTypeName; argTypes: SqlTypeName[]; create: () => Accumulator; createMoving?: () => Accumulator };

/** Resolves one aggregate's overload; undefined when none matches (42883). */
type Resolver = (name: string, argTypes: readonly SqlTypeName[]) => Resolved | undefined;

const INTEGER: readonly SqlTypeName[] = ['int2', 'int4', 'int8'];
const EXACT: readonly SqlTypeName[] = [...INTEGER, 'numeric'];
/** Types with min/max in PostgreSQL (boolean and jsonb have none). */
const ORDERED: readonly SqlTypeName[] = [...EXACT, 'float8', 'text', 'bpchar', 'date', 'timestamp', 'timestamptz', 'time', 'timetz', 'bytea'];

function notUnique(name: string, argTypes: readonly SqlTypeName[]): never {
  return sqlFail('42725', `function ${name}(${argTypes.map((t) => typeDisplay(t)).join(', ')}) is not unique`);
}

/**
 * An aggregate of one argument whose overloads span several type categories: an unknown literal
 * cannot pick one, as in PostgreSQL (sum('1') is "not unique").
 */
function oneArg(pick: (t: SqlTypeName) => Resolved | undefined): Resolver {
  return (name, argTypes) => {
    if (argTypes.length !== 1) return undefined;
    if (argTypes[0] === 'unknown') return notUnique(name, argTypes);
    return pick(argTypes[0]!);
  };
}

const RESOLVERS: Record<string, Resolver> = {
  count: (_name, argTypes) =>
    argTypes.length === 1 ? moving({ resultType: 'int8', argTypes: [argTypes[0] === 'unknown' ? 'text' : argTypes[0]!], create: () => new CountAcc(false) }) : undefined,
  sum: oneArg((t) => {
    if (t === 'int2' || t === 'int4') return moving({ resultType: 'int8', argTypes: [t], create: () => new IntSumAcc('int8') });
    if (t === 'int8') return moving({ resultType: 'numeric', argTypes: [t], create: () => new IntSumAcc('numeric') });
    if (t === 'numeric') return moving({ resultType: 'numeric', argTypes: [t], create: () => new NumericSumAcc() });
    if (t === 'float8') return { resultType: 'float8', argTypes: [t], create: () => new FloatSumAcc() };
    return undefined;
  }),
  avg: oneArg((t) => {
    if (EXACT.includes(t)) return moving({ resultType: 'numeric', argTypes: [t], create: () => new NumericMomentsAcc('avg') });
    if (t === 'float8') return { resultType: 'float8', argTypes: [t], create: () => new FloatMomentsAcc('avg') };
    return undefined;
  }),
  min: minMax(-1),
  max: minMax(1),
  string_agg: (_name, argTypes) => {
    if (argTypes.length !== 2) return undefined;
    const [v, d] = argTypes as [SqlTypeName, SqlTypeName];
    const textish = (t: SqlTypeName): boolean => t === 'text' || t === 'bpchar' || t === 'unknown';
    const byteish = (t: SqlTypeName): boolean => t === 'bytea' || t === 'unknown';
    // Unknown literals prefer text (the preferred type of the string category).
    if (textish(v) && textish(d)) return { resultType: 'text', argTypes: ['text', 'text'], create: () => new StringAggAcc('text') };
    if (byteish(v) && byteish(d)) return { resultType: 'bytea', argTypes: ['bytea', 'bytea'], create: () => new StringAggAcc('bytea') };
    return undefined;
  },
  array_agg: oneArg((t) => {
    if (isArrayType(t)) return sqlFail('0A000', 'unsupported: array_agg of arrays (multidimensional arrays)');
    const element = t as ScalarTypeName;
    return { resultType: arrayTypeOf(element), argTypes: [element], create: () => new ArrayAggAcc(arrayTypeOf(element)) };
  }),
  jsonb_agg: jsonAgg(),
  json_agg: jsonAgg(),
  jsonb_object_agg: jsonObjectAgg(),
  json_object_agg: jsonObjectAgg(),
  bool_and: boolAgg(true),
  bool_or: boolAgg(false),
  every: boolAgg(true),
  stddev: moments('stddev_samp'),
  stddev_samp: moments('stddev_samp'),
  stddev_pop: moments('stddev_pop'),
  variance: moments('var_samp'),
  var_samp: moments('var_samp'),
  var_pop: moments('var_pop'),
};

/** An overload whose accumulator has removeOldest itself. */
function moving(r: Resolved): Resolved {
  return { ...r, createMoving: r.create };
}

function minMax(sign: 1 | -1): Resolver {
  return (_name, argTypes) => {
    if (argTypes.length !== 1) return undefined;
    // An unknown literal resolves as text (min/max have a string-category overload).
    const t = argTypes[0] === 'unknown' ? 'text' : argTypes[0]!;
    // Enums have min/max too (anyenum's), in their declared order.
    if (!ORDERED.includes(t) && !isArrayType(t) && !isEnumType(t)) return undefined;
    return { resultType: t, argTypes: [t], create: () => new MinMaxAcc(t, sign), createMoving: () => new MovingMinMaxAcc(t, sign) };
  };
}

/** jsonb_agg / json_agg (both build jsonb here): every input, NULLs as JSON null; NULL over no rows. */
function jsonAgg(): Resolver {
  return (_name, argTypes) => {
    if (argTypes.length !== 1) return undefined;
    const t = argTypes[0] === 'unknown' ? 'text' : argTypes[0]!;
    return { resultType: 'jsonb', argTypes: [t], create: () => new JsonAggAcc() };
  };
}

/** jsonb_object_agg(key, value): keys as text (a NULL key fails, 22004), later duplicates win. */
function jsonObjectAgg(): Resolver {
  return (_name, argTypes) => {
    if (argTypes.length !== 2) return undefined;
    const [k, v] = argTypes.map((t) => (t === 'unknown' ? 'text' : t)) as [SqlTypeName, SqlTypeName];
    return { resultType: 'jsonb', argTypes: [k, v], create: () => new JsonObjectAggAcc() };
  };
}

class JsonAggAcc implements Accumulator {
  readonly #items: JsonValue[] = [];
  #bytes = 0;

  get bytes(): number {
    return this.#bytes;
  }

  add(args: readonly SqlValue[]): void {
    const v = args[0]!;
    this.#items.push(v.value === null ? null : sqlToJson(v));
    this.#bytes += approxBytes(v);
  }

  result(): SqlValue {
    if (this.#items.length === 0) return { type: 'jsonb', value: null };
    return { type: 'jsonb', value: { json: [...this.#items] } };
  }
}

class JsonObjectAggAcc implements Accumulator {
  readonly #entries = new Map<string, JsonValue>();
  #bytes = 0;

  get bytes(): number {
    return this.#bytes;
  }

  add(args: readonly SqlValue[]): void {
    const [k, v] = args as [SqlValue, SqlValue];
    if (k.value === null) sqlFail('22004', 'field name must not be null');
    const key = toText(k as NonNullSqlValue);
    this.#entries.set(key, v.value === null ? null : sqlToJson(v));
    this.#bytes += key.length * 2 + approxBytes(v);
  }

  result(): SqlValue {
    if (this.#entries.size === 0) return { type: 'jsonb', value: null };
    return { type: 'jsonb', value: { json: toJsonb(Object.fromEntries(this.#entries)) } };
  }
}

function boolAgg(and: boolean): Resolver {
  return (_name, argTypes) =>
    argTypes.length === 1 && (argTypes[0] === 'boolean' || argTypes[0] === 'unknown')
      ? moving({ resultType: 'boolean', argTypes: ['boolean'], create: () => new BoolAcc(and) })
      : undefined;
}

type MomentKind = 'avg' | 'var_samp' | 'var_pop' | 'stddev_samp' | 'stddev_pop';

function moments(kind: MomentKind): Resolver {
  return oneArg((t) => {
    if (EXACT.includes(t)) return moving({ resultType: 'numeric', argTypes: [t], create: () => new NumericMomentsAcc(kind) });
    if (t === 'float8') return { resultType: 'float8', argTypes: [t], create: () => new FloatMomentsAcc(kind) };
    return undefined;
  });
}

/** True when `name` (any case) is an aggregate function known here. */
export function isAggregateName(name: string): boolean {
  return Object.hasOwn(RESOLVERS, name.toLowerCase());
}

/**
 * Resolves an aggregate call from its argument types, as PostgreSQL's function resolution does.
 * @throws SQL_ERROR 42883 unknown aggregate or argument types, 42725 ambiguous unknown literal,
 *   0A000 unsupported forms
 */
export function resolveAggregate(name: string, argTypes: readonly SqlTypeName[], options: AggregateOptions): AggregateDef {
  const lower = name.toLowerCase();
  if (options.star) {
    if (lower === 'count' && argTypes.length === 0) return { name: lower, resultType: 'int8', argTypes: [], create: () => new CountAcc(true), createMoving: () => new CountAcc(true), reusableArgs: true };
    return sqlFail('42809', `${lower}(*) specified, but ${lower} is not an aggregate function`);
  }
  const resolver = Object.hasOwn(RESOLVERS, lower) ? RESOLVERS[lower] : undefined;
  const resolved = resolver?.(lower, argTypes);
  if (resolved === undefined) return sqlFail('42883', `function ${lower}(${argTypes.map((t) => typeDisplay(t)).join(', ')}) does not exist`, undefined, NO_FUNCTION_HINT);
  const { resultType, create } = resolved;
  const coerceTo = resolved.argTypes;
  // Arguments already of the resolved types (the usual case) need no converting wrapper.
  const exact = coerceTo.length === argTypes.length && coerceTo.every((t, i) => t === argTypes[i]);
  const coerced = exact ? create : (): Accumulator => new CoercingAcc(create(), coerceTo);
  const createMoving = resolved.createMoving;
  const coercedMoving = createMoving === undefined || exact ? createMoving : (): Accumulator => new CoercingAcc(createMoving(), coerceTo);
  return {
    name: lower,
    resultType,
    argTypes: coerceTo,
    create: options.distinct ? () => new DistinctAcc(coerced, coerceTo) : coerced,
    ...(coercedMoving !== undefined && !options.distinct ? { createMoving: coercedMoving } : {}),
    // Only DISTINCT keeps argument arrays (to feed them later); every other accumulator reads them.
    reusableArgs: !options.distinct,
  };
}

// ---- accumulators -------------------------------------------------------------------------

/** Converts arguments that arrive with another type (unknown literals) to the resolved types. */
class CoercingAcc implements Accumulator {
  readonly #inner: Accumulator;
  readonly #types: readonly SqlTypeName[];

  constructor(inner: Accumulator, types: readonly SqlTypeName[]) {
    this.#inner = inner;
    this.#types = types;
  }

  get bytes(): number | undefined {
    return this.#inner.bytes;
  }

  add(args: readonly SqlValue[]): void {
    this.#inner.add(this.#coerce(args));
  }

  removeOldest(args: readonly SqlValue[]): boolean {
    return this.#inner.removeOldest!(this.#coerce(args));
  }

  #coerce(args: readonly SqlValue[]): readonly SqlValue[] {
    let out = args;
    for (let i = 0; i < this.#types.length; i++) {
      const t = this.#types[i]!;
      const a = args[i];
      if (a !== undefined && a.type !== t) {
        if (out === args) out = [...args];
        (out as SqlValue[])[i] = castValue(a, { type: t });
      }
    }
    return out;
  }

  result(): SqlValue {
    return this.#inner.result();
  }
}

class CountAcc implements Accumulator {
  readonly #star: boolean;
  #n = 0n;

  constructor(star: boolean) {
    this.#star = star;
  }

  add(args: readonly SqlValue[]): void {
    if (this.#star || args[0]!.value !== null) this.#n++;
  }

  removeOldest(args: readonly SqlValue[]): boolean {
    if (this.#star || args[0]!.value !== null) this.#n--;
    return true;
  }

  result(): SqlValue {
    return { type: 'int8', value: this.#n };
  }
}

/** sum over integers: exact in a bigint; int2/int4 give bigint (range-checked), int8 gives numeric. */
class IntSumAcc implements Accumulator {
  readonly #type: 'int8' | 'numeric';
  #sum: bigint | null = null;
  /** Non-NULL inputs in: the sum is NULL again when the last one leaves. */
  #n = 0;

  constructor(type: 'int8' | 'numeric') {
    this.#type = type;
  }

  add(args: readonly SqlValue[]): void {
    const v = args[0]!.value;
    if (v === null) return;
    this.#n++;
    this.#sum = (this.#sum ?? 0n) + BigInt(v as number | bigint);
  }

  removeOldest(args: readonly SqlValue[]): boolean {
    const v = args[0]!.value;
    if (v === null) return true;
    this.#sum = --this.#n === 0 ? null : this.#sum! - BigInt(v as number | bigint);
    return true;
  }

  result(): SqlValue {
    if (this.#sum === null) return { type: this.#type, value: null };
    if (this.#type === 'int8') return makeInt('int8', this.#sum);
    return { type: 'numeric', value: Decimal.fromBigInt(this.#sum) };
  }
}

class NumericSumAcc implements Accumulator {
  #sum: Decimal | null = null;
  readonly #scales = new ScaleCount();

  add(args: readonly SqlValue[]): void {
    const v = args[0]!.value as Decimal | null;
    if (v === null) return;
    this.#scales.add(v.scale);
    this.#sum = this.#sum === null ? v : this.#sum.add(v);
  }

  removeOldest(args: readonly SqlValue[]): boolean {
    const v = args[0]!.value as Decimal | null;
    if (v === null) return true;
    if (!this.#scales.remove(v.scale)) return false;
    this.#sum = this.#scales.n === 0 ? null : this.#sum!.sub(v);
    return true;
  }

  result(): SqlValue {
    return { type: 'numeric', value: this.#sum };
  }
}

/**
 * A numeric sum's scale is the largest of its inputs'. Taking out the last input of that scale
 * would need the largest of the rest, which is not kept: as PostgreSQL's do_numeric_discard, that
 * removal fails and the frame is folded again (unless nothing is left).
 */
class ScaleCount {
  n = 0;
  #max = 0;
  #atMax = 0;

  add(scale: number): void {
    this.n++;
    if (scale > this.#max) {
      this.#max = scale;
      this.#atMax = 1;
    } else if (scale === this.#max) this.#atMax++;
  }

  remove(scale: number): boolean {
    if (scale === this.#max) {
      if (this.#atMax > 1 || this.#max === 0) this.#atMax--;
      else if (this.n === 1) this.#max = this.#atMax = 0;
      else return false;
    }
    this.n--;
    return true;
  }
}

/** sum(float8) adds with float8pl: an infinite result from finite operands is an overflow error. */
class FloatSumAcc implements Accumulator {
  #sum: number | null = null;

  add(args: readonly SqlValue[]): void {
    const v = args[0]!.value as number | null;
    if (v === null) return;
    if (this.#sum === null) {
      this.#sum = v;
      return;
    }
    this.#sum = checkFloat(this.#sum + v, Number.isFinite(this.#sum) && Number.isFinite(v), false);
  }

  result(): SqlValue {
    return { type: 'float8', value: this.#sum };
  }
}

/**
 * avg / variance / stddev over integers and numeric: exact sums of x and x² (as PostgreSQL's
 * NumericAggState), finished with numeric_avg / numeric_stddev_internal's scale rules.
 */
class NumericMomentsAcc implements Accumulator {
  readonly #kind: MomentKind;
  #n = 0n;
  #sumX = new Decimal(0n, 0);
  #sumX2 = new Decimal(0n, 0);
  readonly #scales = new ScaleCount();

  constructor(kind: MomentKind) {
    this.#kind = kind;
  }

  add(args: readonly SqlValue[]): void {
    const a = args[0]!;
    if (a.value === null) return;
    const x = a.type === 'numeric' ? a.value : Decimal.fromBigInt(BigInt(a.value as number | bigint));
    this.#n++;
    this.#scales.add(x.scale);
    this.#sumX = this.#sumX.add(x);
    if (this.#kind !== 'avg') this.#sumX2 = this.#sumX2.add(x.mul(x));
  }

  removeOldest(args: readonly SqlValue[]): boolean {
    const a = args[0]!;
    if (a.value === null) return true;
    const x = a.type === 'numeric' ? a.value : Decimal.fromBigInt(BigInt(a.value as number | bigint));
    if (!this.#scales.remove(x.scale)) return false;
    this.#n--;
    if (this.#n === 0n) {
      this.#sumX = this.#sumX2 = new Decimal(0n, 0);
      return true;
    }
    this.#sumX = this.#sumX.sub(x);
    if (this.#kind !== 'avg') this.#sumX2 = this.#sumX2.sub(x.mul(x));
    return true;
  }

  result(): SqlValue {
    const n = this.#n;
    const sample = this.#kind === 'var_samp' || this.#kind === 'stddev_samp';
    if (n === 0n || (sample && n === 1n)) return { type: 'numeric', value: null };
    const vN = Decimal.fromBigInt(n);
    if (this.#kind === 'avg') return { type: 'numeric', value: this.#sumX.div(vN) };
    // (N·Σx² − (Σx)²) / (N·(N−1)) for samples, / N² for populations; the products are exact.
    const numerator = vN.mul(this.#sumX2).sub(this.#sumX.mul(this.#sumX));
    if (numerator.sign() <= 0) return { type: 'numeric', value: new Decimal(0n, 0) };
    const denominator = Decimal.fromBigInt(sample ? n * (n - 1n) : n * n);
    const variance = numerator.div(denominator);
    const isStddev = this.#kind === 'stddev_samp' || this.#kind === 'stddev_pop';
    return { type: 'numeric', value: isStddev ? decimalSqrtToScale(variance, variance.scale) : variance };
  }
}

/**
 * avg / variance / stddev over float8 with PostgreSQL's float8_accum (Youngs-Cramer): N, Σx and
 * Sxx = Σ(x − mean)² updated per row, overflow checked the same way, so the digits agree.
 */
class FloatMomentsAcc implements Accumulator {
  readonly #kind: MomentKind;
  #n = 0;
  #sx = 0;
  #sxx = 0;

  constructor(kind: MomentKind) {
    this.#kind = kind;
  }

  add(args: readonly SqlValue[]): void {
    const x = args[0]!.value as number | null;
    if (x === null) return;
    const prevN = this.#n;
    const prevSx = this.#sx;
    this.#n = prevN + 1;
    this.#sx = prevSx + x;
    if (prevN > 0) {
      const tmp = x * this.#n - this.#sx;
      this.#sxx += (tmp * tmp) / (this.#n * prevN);
      if (!Number.isFinite(this.#sx) || !Number.isFinite(this.#sxx)) {
        if (Number.isFinite(prevSx) && Number.isFinite(x)) sqlFail('22003', 'value out of range: overflow');
        this.#sxx = NaN;
      }
    } else if (!Number.isFinite(x)) {
      this.#sxx = NaN;
    }
  }

  result(): SqlValue {
    const n = this.#n;
    switch (this.#kind) {
      case 'avg':
        return { type: 'float8', value: n === 0 ? null : this.#sx / n };
      case 'var_pop':
        return { type: 'float8', value: n === 0 ? null : this.#sxx / n };
      case 'var_samp':
        return { type: 'float8', value: n <= 1 ? null : this.#sxx / (n - 1) };
      case 'stddev_pop':
        return { type: 'float8', value: n === 0 ? null : Math.sqrt(this.#sxx / n) };
      case 'stddev_samp':
        return { type: 'float8', value: n <= 1 ? null : Math.sqrt(this.#sxx / (n - 1)) };
      default: {
        const never: never = this.#kind;
        return never;
      }
    }
  }
}

/**
 * min/max keep the argument's type. On ties the newer value wins, as PostgreSQL's *_larger /
 * *_smaller transition functions (visible for numeric 1.0 vs 1.00).
 */
class MinMaxAcc implements Accumulator {
  readonly #type: SqlTypeName;
  readonly #sign: 1 | -1;
  #best: NonNullSqlValue | null = null;

  constructor(type: SqlTypeName, sign: 1 | -1) {
    this.#type = type;
    this.#sign = sign;
  }

  add(args: readonly SqlValue[]): void {
    const v = args[0]!;
    if (v.value === null) return;
    const nn = v as NonNullSqlValue;
    if (this.#best === null || compareValues(this.#best, nn) * this.#sign <= 0) this.#best = nn;
  }

  result(): SqlValue {
    return this.#best ?? { type: this.#type, value: null };
  }
}

/** bool_and / bool_or by counting non-NULL and true inputs (PostgreSQL's moving-aggregate state), so rows can leave. */
/**
 * min/max over a frame that slides forward: a deque of the values that can still become the
 * result, best first. A new value drops every worse-or-equal one behind it (the newer wins ties,
 * as in MinMaxAcc), and the front leaves when its row does, so each row enters and leaves once.
 */
class MovingMinMaxAcc implements Accumulator {
  readonly #type: SqlTypeName;
  readonly #sign: 1 | -1;
  readonly #values: NonNullSqlValue[] = [];
  readonly #rows: number[] = [];
  #head = 0;
  #added = 0;
  #removed = 0;

  constructor(type: SqlTypeName, sign: 1 | -1) {
    this.#type = type;
    this.#sign = sign;
  }

  add(args: readonly SqlValue[]): void {
    const row = this.#added++;
    const v = args[0]!;
    if (v.value === null) return;
    const nn = v as NonNullSqlValue;
    while (this.#values.length > this.#head && compareValues(this.#values[this.#values.length - 1]!, nn) * this.#sign <= 0) {
      this.#values.pop();
      this.#rows.pop();
    }
    this.#values.push(nn);
    this.#rows.push(row);
  }

  removeOldest(): boolean {
    const row = this.#removed++;
    if (this.#head < this.#rows.length && this.#rows[this.#head] === row) this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#values.length) {
      this.#values.splice(0, this.#head);
      this.#rows.splice(0, this.#head);
      this.#head = 0;
    }
    return true;
  }

  result(): SqlValue {
    return this.#head < this.#values.length ? this.#values[this.#head]! : { type: this.#type, value: null };
  }
}

class BoolAcc implements Accumulator {
  readonly #and: boolean;
  #n = 0;
  #trues = 0;

  constructor(and: boolean) {
    this.#and = and;
  }

  add(args: readonly SqlValue[]): void {
    const v = args[0]!.value as boolean | null;
    if (v === null) return;
    this.#n++;
    if (v) this.#trues++;
  }

  removeOldest(args: readonly SqlValue[]): boolean {
    const v = args[0]!.value as boolean | null;
    if (v === null) return true;
    this.#n--;
    if (v) this.#trues--;
    return true;
  }

  result(): SqlValue {
    if (this.#n === 0) return { type: 'boolean', value: null };
    return { type: 'boolean', value: this.#and ? this.#trues === this.#n : this.#trues > 0 };
  }
}

/**
 * string_agg: NULL values are skipped; each kept value is preceded by its own row's delimiter
 * (a NULL delimiter adds nothing), and the first kept row's delimiter is dropped.
 */
class StringAggAcc implements Accumulator {
  readonly #type: 'text' | 'bytea';
  readonly #parts: (string | Buffer)[] = [];
  #any = false;
  #bytes = 0;

  constructor(type: 'text' | 'bytea') {
    this.#type = type;
  }

  get bytes(): number {
    return this.#bytes;
  }

  add(args: readonly SqlValue[]): void {
    const v = args[0]!.value as string | Buffer | null;
    if (v === null) return;
    const d = args[1]!.value as string | Buffer | null;
    if (this.#any && d !== null) this.#push(d);
    this.#any = true;
    this.#push(v);
  }

  #push(p: string | Buffer): void {
    this.#parts.push(p);
    this.#bytes += (typeof p === 'string' ? p.length * 2 : p.length) + 16;
  }

  result(): SqlValue {
    if (!this.#any) return { type: this.#type, value: null };
    if (this.#type === 'text') return { type: 'text', value: (this.#parts as string[]).join('') };
    return { type: 'bytea', value: Buffer.concat(this.#parts as Buffer[]) };
  }
}

/** array_agg keeps NULL inputs as NULL elements; over no rows it is NULL, not an empty array. */
class ArrayAggAcc implements Accumulator {
  readonly #type: SqlTypeName;
  readonly #elements: SqlValue[] = [];
  #bytes = 0;

  constructor(type: SqlTypeName) {
    this.#type = type;
  }

  get bytes(): number {
    return this.#bytes;
  }

  add(args: readonly SqlValue[]): void {
    const v = args[0]!;
    this.#elements.push(v);
    this.#bytes += approxBytes(v);
  }

  result(): SqlValue {
    if (this.#elements.length === 0) return { type: this.#type, value: null };
    return { type: this.#type, value: [...this.#elements] } as SqlValue;
  }
}

/**
 * DISTINCT: keeps the first of each set of equal argument tuples (NULLs equal each other), then
 * feeds them to a fresh inner accumulator in ascending order (NULLs last), because PostgreSQL
 * sorts the input of a DISTINCT aggregate: array_agg(DISTINCT x) comes out sorted.
 */
class DistinctAcc implements Accumulator {
  readonly #create: () => Accumulator;
  readonly #types: readonly SqlTypeName[];
  readonly #seen = new Map<string, readonly SqlValue[]>();
  #bytes = 0;

  constructor(create: () => Accumulator, types: readonly SqlTypeName[]) {
    this.#create = create;
    this.#types = types;
  }

  get bytes(): number {
    return this.#bytes;
  }

  add(args: readonly SqlValue[]): void {
    // Convert first so '1' and 1 meet as the same value.
    const typed = args.map((a, i) => (this.#types[i] !== undefined && a.type !== this.#types[i] ? castValue(a, { type: this.#types[i]! }) : a));
    const key = typed.map(distinctKey).join('\u0001');
    if (this.#seen.has(key)) return;
    this.#seen.set(key, typed);
    this.#bytes += key.length * 2 + typed.reduce((s, v) => s + approxBytes(v), 48);
  }

  result(): SqlValue {
    const tuples = [...this.#seen.values()].sort(compareTuples);
    const acc = this.#create();
    for (const t of tuples) acc.add(t);
    return acc.result();
  }
}

function compareTuples(a: readonly SqlValue[], b: readonly SqlValue[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareNullsLast(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

/** Ascending order with NULLs last, as ORDER BY's default. */
export function compareNullsLast(a: SqlValue, b: SqlValue): number {
  if (a.value === null || b.value === null) return a.value === null ? (b.value === null ? 0 : 1) : -1;
  return compareValues(a as NonNullSqlValue, b as NonNullSqlValue);
}

/** A string equal for exactly the values SQL equality groups together (1.0 = 1.00, -0 = 0). */
export function distinctKey(v: SqlValue): string {
  if (v.value === null) return 'N';
  const nn = v as NonNullSqlValue;
  if (Array.isArray(nn.value)) return `[${nn.value.map(distinctKey).join(',')}]`;
  switch (nn.type) {
    case 'numeric': {
      let { unscaled, scale } = nn.value;
      while (scale > 0 && unscaled % 10n === 0n) {
        unscaled /= 10n;
        scale--;
      }
      return `n${unscaled}e${scale}`;
    }
    case 'float8':
      return `f${nn.value === 0 ? 0 : nn.value}`;
    case 'jsonb':
      return `j${jsonbText(nn.value.json)}`;
    case 'bytea':
      return `b${nn.value.toString('hex')}`;
    case 'bpchar':
      return `v${bpcharTrim(nn.value)}`;
    case 'interval':
      // '1 day' = '24 hours' in PostgreSQL: intervals group by their 30-day-month span.
      return `i${intervalSpan(nn.value)}`;
    case 'timetz':
      return `z${nn.value.time}:${nn.value.zone}`;
    default:
      return `v${String(nn.value)}`;
  }
}

/** A rough size of a value in memory, for the executor's memory bound. */
export function approxBytes(v: SqlValue): number {
  const x = v.value;
  if (x === null || typeof x === 'number' || typeof x === 'boolean') return 16;
  if (typeof x === 'bigint') return 24;
  if (typeof x === 'string') return 16 + x.length * 2;
  if (Buffer.isBuffer(x)) return 32 + x.length;
  if (x instanceof Decimal) return 48 + x.unscaled.toString(16).length / 2;
  if (Array.isArray(x)) return x.reduce((s, e) => s + approxBytes(e), 32);
  if (!('json' in x)) return 48;
  return 64 + jsonbText(x.json).length * 2;
}
