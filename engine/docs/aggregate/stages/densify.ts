/**
 * $densify (manual: $densify, MongoDB 5.1+): `{field, partitionByFields, range: {step, unit,
 * bounds}}` adds a document for every step of `field` missing from a sequence, as MongoDB builds
 * it (document_source_densify): a $sort first (by the partition fields and the field; by the field
 * alone for "full" bounds, whose partitions all span the collection's range), then one pass over
 * the sorted documents that keeps, per partition, only the next value on the step grid.
 *
 * The grid starts at the lower bound for explicit bounds, at the collection's minimum for "full"
 * and at each partition's minimum for "partition"; values are stepped one at a time (numbers by
 * addition, dates by $dateAdd's calendar arithmetic in UTC, so 2021-01-31 + 1 month is
 * 2021-02-28 and the next 2021-03-28). A document on the grid takes the place of the generated
 * one; documents off the grid, duplicates and values outside explicit bounds pass unchanged, as
 * do documents whose field is null or missing (the sort puts them first). Generated documents
 * carry only the partition fields (as `{<path>: "$<path>"}` evaluates) and the field. Explicit
 * bounds are filled to the upper bound, and "full" partitions to the collection's maximum, once
 * the input is exhausted (MongoDB's order: those documents come last, by partition).
 *
 * The sort spills past the blocking bound (allowDiskUse; external-sort.ts). The pass holds one
 * grid position per partition (with the partition fields), counted against the bound as MongoDB's
 * partition table is (internalDocumentSourceDensifyMaxMemoryBytes: past it, MongoDB's `$densify
 * exceeded memory limit`), with the sorted input too when it did not spill; with "partition"
 * bounds only the partitions of the current place in the sort (the others are done). What it
 * generates streams out a chunk at a time. At most AGGREGATE_LIMITS.maxDensifyDocs documents are
 * generated (MongoDB's default).
 */

import { DocSorter, sortRefusal } from '../../external-sort.js';
import { compileSort, type CompiledSort } from '../../sort.js';
import { bsonTypeOf, cloneValue, compareValues, getOwn, isPlainObject, MISSING, setOwn, type Doc } from '../../values.js';
import { withPath } from '../../path.js';
import { needsOf } from '../dependencies.js';
import { addUnits, isTimeUnit, type TimeUnit } from '../expression/date-units.js';
import { isIntegral64, Scope, type Expr } from '../expression/expression.js';
import { compileExpression } from '../expression/operator-table.js';
import { groupKey } from '../value-key.js';
import { AGGREGATE_LIMITS, approxBytes, BlockingBudget, stageError, type Stage, type StageContext } from '../stage.js';

const STAGE = '$densify';
const CHUNK = 256;

/** A value of the densified field: a number, or a date when the range has a unit. */
type Point = number | Date;

type Bounds = { readonly kind: 'full' } | { readonly kind: 'partition' } | { readonly kind: 'explicit'; readonly lower: Point; readonly upper: Point };

interface DensifySpec {
  readonly field: string;
  readonly partitions: readonly string[];
  readonly step: number;
  readonly unit: TimeUnit | undefined;
  readonly bounds: Bounds;
}

// ---------------------------------------------------------------------------------------------
// The specification, checked in MongoDB's order: the IDL parser's (fields in the order written,
// types as met, required fields once an object is read), then the range's rules
// (RangeStatement::parse), then the field paths.

function wrongType(path: string, v: unknown, expected: string): never {
  stageError(STAGE, `BSON field '${path}' is the wrong type '${bsonTypeOf(v)}', expected ${expected}`);
}

function unknownField(path: string): never {
  stageError(STAGE, `BSON field '${path}' is an unknown field.`);
}

function missingField(path: string): never {
  stageError(STAGE, `BSON field '${path}' is missing but a required field`);
}

interface RawRange {
  readonly step: number;
  readonly unit: string | undefined;
  readonly bounds: unknown;
}

function parseRangeFields(range: unknown): RawRange {
  if (!isPlainObject(range)) wrongType('$densify.range', range, "type 'object'");
  let step: number | undefined;
  let unit: string | undefined;
  let hasBounds = false;
  for (const [k, v] of Object.entries(range)) {
    if (k === 'step') {
      if (typeof v !== 'number') wrongType('$densify.range.step', v, "types '[int, decimal, double, long]'");
      step = v;
    } else if (k === 'unit') {
      if (typeof v !== 'string') wrongType('$densify.range.unit', v, "type 'string'");
      unit = v;
    } else if (k === 'bounds') {
      hasBounds = true;
    } else {
      unknownField(`$densify.range.${k}`);
    }
  }
  if (step === undefined) missingField('$densify.range.step');
  if (!hasBounds) missingField('$densify.range.bounds');
  return { step, unit, bounds: range['bounds'] };
}

const BOTH_OF_A_KIND = 'A bounding array must contain either both dates or both numeric types';

function parseBounds(bounds: unknown, unit: TimeUnit | undefined): Bounds {
  if (typeof bounds === 'string') {
    if (bounds === 'full' || bounds === 'partition') return { kind: bounds };
    stageError(STAGE, "Bounds string must either be 'full' or 'partition'");
  }
  if (!Array.isArray(bounds)) {
    stageError(STAGE, "The bounds in a range statement must be the string 'full', 'partition', or an ascending array of two numbers or two dates");
  }
  if (bounds.length !== 2) stageError(STAGE, 'A bounding array in a range statement must have exactly two elements');
  const [lower, upper] = bounds as [unknown, unknown];
  // BSON order: a number before a date is ascending, so [1, date] gets past this check.
  if (compareValues(lower, upper) > 0) stageError(STAGE, 'A bounding array must be an ascending array of either two dates or two numbers');
  if (typeof lower === 'number') {
    if (unit !== undefined) stageError(STAGE, 'Numeric bounds may not have unit parameter');
    if (typeof upper !== 'number') stageError(STAGE, BOTH_OF_A_KIND);
    // MongoDB also wants the bounds and the step of one numeric type (5876900); a JSON number has
    // none (mongosh sends all three as doubles), so there is nothing to check here.
    return { kind: 'explicit', lower, upper };
  }
  if (lower instanceof Date) {
    if (!(upper instanceof Date)) stageError(STAGE, BOTH_OF_A_KIND);
    if (unit === undefined) stageError(STAGE, 'A bounding array of dates must specify a unit');
    return { kind: 'explicit', lower, upper };
  }
  stageError(STAGE, 'Explicit bounds must be numeric or dates');
}

/** A field path as MongoDB's FieldPath takes it. @throws QUERY_ERROR */
function fieldPath(path: string): string {
  if (path === '') stageError(STAGE, 'FieldPath cannot be constructed with empty string');
  for (const part of path.split('.')) {
    if (part === '') stageError(STAGE, 'FieldPath field names may not be empty strings.');
    if (part.startsWith('$')) stageError(STAGE, "FieldPath field names may not start with '$'. Consider using $getField or $setField.");
    if (part.includes('\0')) stageError(STAGE, "FieldPath field names may not contain '\\0'.");
  }
  return path;
}

/** True when `path` is `prefix` or lies inside it. */
function within(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}.`);
}

function parseSpec(spec: unknown): DensifySpec {
  if (!isPlainObject(spec)) stageError(STAGE, `The $densify stage specification must be an object, found ${bsonTypeOf(spec)}`);
  let field: string | undefined;
  let partitionFields: string[] = [];
  let range: RawRange | undefined;
  for (const [k, v] of Object.entries(spec)) {
    if (k === 'field') {
      if (typeof v !== 'string') wrongType('$densify.field', v, "type 'string'");
      field = v;
    } else if (k === 'partitionByFields') {
      if (!Array.isArray(v)) wrongType('$densify.partitionByFields', v, "type 'array'");
      v.forEach((p, i) => {
        if (typeof p !== 'string') wrongType(`$densify.partitionByFields.${i}`, p, "type 'string'");
      });
      partitionFields = v as string[];
    } else if (k === 'range') {
      range = parseRangeFields(v);
    } else {
      unknownField(`$densify.${k}`);
    }
  }
  if (field === undefined) missingField('$densify.field');
  if (range === undefined) missingField('$densify.range');

  const { step } = range;
  // NaN is not greater than 0 either.
  if (!(step > 0)) stageError(STAGE, 'The step parameter in a range statement must be a strictly positive numeric value');
  let unit: TimeUnit | undefined;
  if (range.unit !== undefined) {
    if (!isIntegral64(step)) stageError(STAGE, 'The step parameter in a range statement must be a whole number when densifying a date range');
    if (!isTimeUnit(range.unit)) stageError(STAGE, `unknown time unit value: ${range.unit}`);
    unit = range.unit;
  }
  const bounds = parseBounds(range.bounds, unit);

  const partitions = partitionFields.map(fieldPath);
  fieldPath(field);
  for (const p of partitions) {
    if (within(p, field)) stageError(STAGE, "BSON field '$densify.partitionByFields' contains the field that is being densified");
    if (within(field, p)) stageError(STAGE, "The field that is being densified contains the BSON field '$densify.partitionByFields'");
  }
  if (bounds.kind === 'partition' && partitions.length === 0) {
    stageError(STAGE, "One cannot specify the bounds as 'partition' without specifying a non-empty array of partitionByFields. You may have meant to specify 'full' bounds.");
  }
  return { field, partitions, step, unit, bounds };
}

// ---------------------------------------------------------------------------------------------
// The pass over the sorted documents.

/** The value at a dot path through embedded documents only (MongoDB's getNestedField): an array on the way reads as missing. */
function nestedValue(doc: Doc, parts: readonly string[]): unknown {
  let cur: unknown = doc;
  for (const part of parts) {
    if (!isPlainObject(cur)) return MISSING;
    cur = getOwn(cur, part);
  }
  return cur;
}

/** Where the next generated value of a partition goes. */
interface PartitionState {
  /** The partition fields generated documents carry. */
  readonly fields: Doc;
  /** The next value on the grid not yet generated or met. */
  next: Point;
  /** What it costs to hold, counted against the bound. */
  readonly bytes: number;
}

/** Builds the document of partition fields: `{a: "$a", x: {y: "$x.y"}}` evaluated, as MongoDB's partition expression. */
function partitionTemplate(paths: readonly string[]): (doc: Doc, vars: Scope | undefined) => Doc {
  const fields = paths.map((p) => ({ parts: p.split('.'), expr: compileExpression(`$${p}`) as Expr }));
  return (doc, vars) => {
    const out: Doc = {};
    const scope = Scope.of(doc, vars);
    for (const { parts, expr } of fields) {
      let into = out;
      // The documents on the way are part of the expression, so they exist even when the value is missing.
      for (let i = 0; i < parts.length - 1; i++) {
        let child = getOwn(into, parts[i]!);
        if (!isPlainObject(child)) {
          child = {};
          setOwn(into, parts[i]!, child);
        }
        into = child as Doc;
      }
      const v = expr(scope);
      if (v !== MISSING) setOwn(into, parts[parts.length - 1]!, v);
    }
    return out;
  };
}

/** One run of the stage over its sorted input: hand it each document, then ask for the rest. */
class DensifyRun {
  readonly #spec: DensifySpec;
  readonly #fieldParts: string[];
  readonly #partitionOf: ((doc: Doc, vars: Scope | undefined) => Doc) | undefined;
  readonly #vars: Scope | undefined;
  readonly #budget: BlockingBudget;
  /**
   * "partition" bounds: the partition fields' place in the sort. The input comes sorted by it, so
   * once it changes, the partitions met before are done and are dropped (partitions whose fields
   * sort as equals, such as a missing field and null, may interleave: they are kept together).
   */
  readonly #partitionSort: CompiledSort | undefined;
  #partitionSortKey: unknown[] = [];
  // Partitions in first-seen order: explicit and "full" bounds fill them in this order at the end.
  readonly #partitions = new Map<string, PartitionState>();
  #generated = 0;
  /** The first and the latest value met ("full" bounds: the collection's minimum and maximum). */
  #min: Point | undefined;
  #max: Point | undefined;

  constructor(spec: DensifySpec, ctx: StageContext, budget: BlockingBudget) {
    this.#spec = spec;
    this.#budget = budget;
    this.#fieldParts = spec.field.split('.');
    this.#partitionOf = spec.partitions.length > 0 ? partitionTemplate(spec.partitions) : undefined;
    this.#vars = ctx.vars;
    this.#partitionSort = spec.bounds.kind === 'partition' ? compileSort(Object.fromEntries(spec.partitions.map((p) => [p, 1]))) : undefined;
  }

  /** The documents to output for the next input document: the values it skips over, then it. */
  *accept(doc: Doc): Generator<Doc> {
    const value = this.#valueOf(doc);
    if (value === MISSING) {
      yield doc;
      return;
    }
    this.#min ??= value;
    this.#max = value;
    const state = this.#stateOf(doc, value);
    const bounds = this.#spec.bounds;
    yield* this.#fill(state, value, bounds.kind === 'explicit' ? bounds.upper : undefined);
    if (compareValues(value, state.next) === 0) state.next = this.#step(state.next);
    yield doc;
  }

  /** The documents generated once the input is exhausted. */
  *finish(): Generator<Doc> {
    const bounds = this.#spec.bounds;
    if (bounds.kind === 'explicit') {
      // With no value met there is no partition yet: MongoDB fills the range once, without partition fields.
      if (this.#partitions.size === 0) yield* this.#fill({ fields: {}, next: bounds.lower, bytes: 0 }, bounds.upper, undefined);
      for (const state of this.#partitions.values()) yield* this.#fill(state, bounds.upper, undefined);
    } else if (bounds.kind === 'full' && this.#max !== undefined) {
      // Every partition reaches the collection's maximum, included when it is on the grid.
      const max = this.#max;
      for (const state of this.#partitions.values()) {
        yield* this.#fill(state, max, undefined);
        if (compareValues(state.next, max) === 0) {
          yield this.#generate(state.fields, max);
          state.next = this.#step(max);
        }
      }
    }
  }

  /** The field's value, MISSING for null and missing (passed through). @throws QUERY_ERROR for any other type, or one not matching the unit */
  #valueOf(doc: Doc): Point | typeof MISSING {
    const v = nestedValue(doc, this.#fieldParts);
    if (v === MISSING || v === null) return MISSING;
    if (typeof v !== 'number' && !(v instanceof Date)) stageError(STAGE, 'Densify field type must be numeric or a date');
    if (this.#spec.unit === undefined && v instanceof Date) stageError(STAGE, 'Encountered date densify value in collection when step does not have a date unit.');
    if (this.#spec.unit !== undefined && typeof v === 'number') stageError(STAGE, 'Encountered numeric densify value in collection when step has a date unit.');
    return v;
  }

  #stateOf(doc: Doc, value: Point): PartitionState {
    if (this.#partitionSort !== undefined) this.#dropFinished(this.#partitionSort, doc);
    const fields = this.#partitionOf === undefined ? {} : this.#partitionOf(doc, this.#vars);
    const key = this.#partitionOf === undefined ? '' : groupKey(fields);
    let state = this.#partitions.get(key);
    if (state === undefined) {
      const bounds = this.#spec.bounds;
      const start = bounds.kind === 'explicit' ? bounds.lower : bounds.kind === 'full' ? this.#min! : value;
      state = { fields, next: start, bytes: approxBytes(fields) + approxBytes(start) };
      this.#hold(state.bytes);
      this.#partitions.set(key, state);
    }
    return state;
  }

  /** "partition" bounds: drops the partitions met so far when `doc`'s partition fields sort after theirs. */
  #dropFinished(sort: CompiledSort, doc: Doc): void {
    const key = sort.keyOf(doc);
    if (this.#partitions.size > 0 && sort.compareKeyed(this.#partitionSortKey, key) !== 0) {
      for (const state of this.#partitions.values()) this.#budget.release(state.bytes);
      this.#partitions.clear();
    }
    this.#partitionSortKey = key;
  }

  /** Counts `bytes` more of the partition table. @throws QUERY_ERROR past the bound, with MongoDB's message */
  #hold(bytes: number): void {
    this.#budget.count(bytes);
    if (this.#budget.over) stageError(STAGE, `$densify exceeded memory limit of ${this.#budget.limit}`);
  }

  /** Generates the partition's grid values below `to` (and below `limit`), advancing it. */
  *#fill(state: PartitionState, to: Point, limit: Point | undefined): Generator<Doc> {
    while (compareValues(state.next, to) < 0 && (limit === undefined || compareValues(state.next, limit) < 0)) {
      yield this.#generate(state.fields, state.next);
      state.next = this.#step(state.next);
    }
  }

  #generate(fields: Doc, value: Point): Doc {
    if (++this.#generated > AGGREGATE_LIMITS.maxDensifyDocs) {
      stageError(
        STAGE,
        `Generated ${this.#generated} documents in $densify, which is over the limit of ${AGGREGATE_LIMITS.maxDensifyDocs}. ` +
          "tetradb's limit is fixed (MongoDB's internalQueryMaxAllowedDensifyDocs): densify a narrower range or with a larger step",
      );
    }
    return withPath(cloneValue(fields), this.#fieldParts, value instanceof Date ? new Date(value.getTime()) : value);
  }

  #step(v: Point): Point {
    const { step, unit } = this.#spec;
    return v instanceof Date ? addUnits(v, unit!, step, STAGE) : v + step;
  }
}

/** @throws QUERY_ERROR for a malformed specification, with MongoDB's message */
export function densifyStage(spec: unknown): Stage {
  const densify = parseSpec(spec);
  const sortBy: Doc = {};
  if (densify.bounds.kind !== 'full') for (const p of densify.partitions) sortBy[p] = 1;
  sortBy[densify.field] = 1;
  const sort = compileSort(sortBy);
  return {
    name: STAGE,
    reads: [],
    needs: needsOf([], [densify.field, ...densify.partitions], false),
    async *run(input, ctx) {
      // The whole input, in the order $densify walks it (MongoDB's $sort before the stage); past
      // the bound, through spill files (allowDiskUse).
      const sorter = new DocSorter(sort, { memory: ctx.memory, refuse: sortRefusal(STAGE) });
      for await (const chunk of input) {
        for (const doc of chunk) {
          const spilled = sorter.add(doc);
          if (spilled !== undefined) await spilled;
        }
      }
      // In memory, the sorted input counts with the partition table; spilled, the table alone.
      const budget = new BlockingBudget(STAGE, ctx.memory);
      if (!sorter.spilled) budget.count(sorter.bytes);
      const pass = new DensifyRun(densify, ctx, budget);
      let out: Doc[] = [];
      const emit = function* (docs: Iterable<Doc>): Generator<Doc[]> {
        for (const d of docs) {
          out.push(d);
          if (out.length >= CHUNK) {
            yield out;
            out = [];
          }
        }
      };
      for await (const chunk of sorter.sorted()) {
        for (const doc of chunk) yield* emit(pass.accept(doc));
      }
      yield* emit(pass.finish());
      if (out.length > 0) yield out;
    },
  };
}
