/**
 * Differential fuzzing of the MQL core against mingo, an independent in-memory implementation
 * used as an oracle only. Random documents (nested objects, arrays, nulls, missing fields, mixed
 * types over a small value domain so that matches happen) meet random filters, sorts,
 * projections and updates; both sides must agree.
 *
 * Where mingo departs from MongoDB's documented behaviour, the case is excused by a named rule
 * below (each listed in docs/mql.md, "Where the mingo oracle differs from MongoDB"), never by
 * dropping the comparison wholesale: for filters, each condition a rule covers becomes "unknown"
 * and the filter is re-evaluated in three-valued logic with our results for all other conditions;
 * a difference is excused only when the unknown conditions decide it. Every excusal is counted.
 *
 * Replay a failure (its message starts with the seed):
 *   TETRA_FUZZ_SEED=<seed> npx vitest run test/fuzz/mql.fuzz.test.ts
 * TETRA_FUZZ_VERBOSE=1 prints how often each rule excused a difference; TETRA_FUZZ_DISCOVER=1
 * logs unexplained differences instead of failing (for writing new rules); TETRA_FUZZ_DOCS and
 * TETRA_FUZZ_FILTERS scale the filter campaign.
 */

import { Query, find, update as mingoUpdate, updateMany as mingoUpdateMany } from 'mingo';
import { hashCode } from 'mingo/util';
import { describe, expect, it } from 'vitest';
import {
  collectValues,
  compileFilter,
  compileProjection,
  compileSort,
  compileUpdate,
  isPlainObject,
  MISSING,
  sortDocuments,
  typeBracket,
  type Doc,
} from '../../engine/docs/index.js';
import { isTetraError } from '../../engine/errors.js';
import { randomInt, seededRandom } from '../helpers/random.js';

const SEEDS = process.env.TETRA_FUZZ_SEED ? [Number(process.env.TETRA_FUZZ_SEED)] : [11, 22];
const DOCS = Number(process.env.TETRA_FUZZ_DOCS ?? 1500);
const FILTERS = Number(process.env.TETRA_FUZZ_FILTERS ?? 250);

type Rand = () => number;

// ---------------------------------------------------------------------------------------------
// Generators

const D1 = new Date(Date.UTC(2020, 0, 1));
const D2 = new Date(Date.UTC(2021, 5, 1));
const SCALARS: readonly unknown[] = [0, 1, 2, -1, 1.5, 'a', 'b', 'ab', 'B', true, false, null, D1, D2];
const FIELDS = ['a', 'b', 'c'];
const SUBFIELDS = ['b', 'c'];
const PATHS = ['a', 'b', 'c', 'a.b', 'a.c', 'b.c', 'a.b.c', 'a.0', 'a.1', 'a.0.b', 'b.0'];

function pick<T>(rand: Rand, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)]!;
}

function randomValue(rand: Rand, depth: number): unknown {
  const r = rand();
  if (depth >= 3 || r < 0.55) return pick(rand, SCALARS);
  if (r < 0.8) return Array.from({ length: randomInt(rand, 0, 3) }, () => randomValue(rand, depth + 1));
  return randomObject(rand, depth + 1);
}

function randomObject(rand: Rand, depth: number): Doc {
  const o: Doc = {};
  for (const k of SUBFIELDS) if (rand() < 0.6) o[k] = randomValue(rand, depth);
  return o;
}

function randomDoc(rand: Rand, id: number): Doc {
  const d: Doc = { _id: id };
  for (const k of FIELDS) if (rand() < 0.75) d[k] = randomValue(rand, 1);
  return d;
}

/** Documents for updates: mostly objects and arrays of scalars where the update paths lead. */
function randomUpdateDoc(rand: Rand, id: number): Doc {
  const d: Doc = { _id: id };
  for (const k of FIELDS) {
    const r = rand();
    if (r < 0.15) continue;
    if (r < 0.55) d[k] = randomObject(rand, 2);
    else if (r < 0.8) d[k] = Array.from({ length: randomInt(rand, 0, 3) }, () => pick(rand, SCALARS));
    else d[k] = pick(rand, SCALARS);
  }
  return d;
}

function operand(rand: Rand): unknown {
  return rand() < 0.85 ? pick(rand, SCALARS) : randomValue(rand, 2);
}

const BIT_MASKS: readonly unknown[] = [0, 1, 2, 3, 5, 35, 50, [], [0], [1, 5], [0, 2]];

function fieldExpression(rand: Rand, depth: number): unknown {
  switch (randomInt(rand, 0, 19)) {
    case 19:
      return { [pick(rand, ['$bitsAllSet', '$bitsAnySet', '$bitsAllClear', '$bitsAnyClear'])]: pick(rand, BIT_MASKS) };
    case 0:
      return operand(rand);
    case 1:
      return { $eq: operand(rand) };
    case 2:
      return { $ne: operand(rand) };
    case 3:
      return { [pick(rand, ['$gt', '$gte', '$lt', '$lte'])]: operand(rand) };
    case 4:
      return { $gt: pick(rand, SCALARS), $lt: pick(rand, SCALARS) };
    case 5:
      return { $in: Array.from({ length: randomInt(rand, 0, 3) }, () => operand(rand)) };
    case 6:
      return { $nin: Array.from({ length: randomInt(rand, 0, 3) }, () => operand(rand)) };
    case 7:
      return { $exists: rand() < 0.5 };
    case 8:
      return { $type: pick(rand, ['number', 'string', 'array', 'object', 'null', 'bool', 'date', 'int', 'double', 2, 8]) };
    case 9:
      return { $regex: pick(rand, ['^a', 'b', 'A', '^ab$', 'a|B']), ...(rand() < 0.4 ? { $options: 'i' } : {}) };
    case 10:
      return { $mod: [pick(rand, [2, 3]), pick(rand, [0, 1])] };
    case 11:
      return { $size: randomInt(rand, 0, 3) };
    case 12:
      return { $all: Array.from({ length: randomInt(rand, 1, 2) }, () => pick(rand, SCALARS)) };
    case 13:
      return { $elemMatch: { [pick(rand, ['$gt', '$gte', '$lt', '$eq', '$ne'])]: pick(rand, SCALARS) } };
    case 14:
      return { $elemMatch: { [pick(rand, SUBFIELDS)]: depth < 2 ? fieldExpression(rand, depth + 1) : pick(rand, SCALARS) } };
    case 15:
      return { $not: { [pick(rand, ['$gt', '$lt', '$eq'])]: pick(rand, SCALARS) } };
    case 16:
      return { $not: { $in: [pick(rand, SCALARS), pick(rand, SCALARS)] } };
    case 17:
      return { $all: [{ $elemMatch: { [pick(rand, SUBFIELDS)]: pick(rand, SCALARS) } }] };
    default:
      return { $not: { $regex: pick(rand, ['^a', 'b']) } };
  }
}

function randomFilter(rand: Rand, depth: number): Doc {
  const f: Doc = {};
  const n = randomInt(rand, 1, 2);
  for (let i = 0; i < n; i++) {
    if (depth < 2 && rand() < 0.15) {
      f[pick(rand, ['$and', '$or', '$nor'])] = Array.from({ length: randomInt(rand, 1, 3) }, () => randomFilter(rand, depth + 1));
    } else {
      f[pick(rand, PATHS)] = fieldExpression(rand, 0);
    }
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
// Facts about a document along a path, for the rules.

/** What MongoDB's traversal meets on the way along `path` (non-leaf components). */
interface PathFacts {
  /** An array is traversed before the end of the path. */
  crossesArray: boolean;
  /** An array directly inside an array, or an array picked by an index, is met on the way or at the end. */
  nestedArray: boolean;
  /** An index component applies to an array whose elements include documents (MongoDB also reads their field "0"). */
  indexOverDocuments: boolean;
}

function pathFacts(doc: unknown, parts: readonly string[]): PathFacts {
  const facts: PathFacts = { crossesArray: false, nestedArray: false, indexOverDocuments: false };
  const walk = (v: unknown, i: number, viaIndex: boolean): void => {
    if (Array.isArray(v)) {
      if (viaIndex) facts.nestedArray = true;
      if (i >= parts.length) {
        if (v.some(Array.isArray)) facts.nestedArray = true;
        return;
      }
      facts.crossesArray = true;
      const part = parts[i]!;
      const isIndex = /^\d+$/.test(part);
      if (isIndex && v.some(isPlainObject)) facts.indexOverDocuments = true;
      for (const el of v) {
        if (Array.isArray(el)) facts.nestedArray = true;
        if (isPlainObject(el)) walk(el[part], i + 1, false);
      }
      if (isIndex && Number(part) < v.length) walk(v[Number(part)], i + 1, true);
      return;
    }
    if (i >= parts.length || !isPlainObject(v)) return;
    walk(v[parts[i]!], i + 1, false);
  };
  walk(doc, 0, false);
  return facts;
}

// ---------------------------------------------------------------------------------------------
// Rules: named cases where mingo departs from the MongoDB manual (docs/mql.md lists each).

interface Leaf {
  readonly path: string;
  readonly parts: readonly string[];
  readonly op: string;
  readonly operand: unknown;
}

function mentionsNull(v: unknown): boolean {
  if (v === null) return true;
  if (Array.isArray(v)) return v.some(mentionsNull);
  if (isPlainObject(v)) return Object.values(v).some(mentionsNull);
  return false;
}

function isContainer(v: unknown): boolean {
  return Array.isArray(v) || isPlainObject(v);
}

function valuesAt(doc: Doc, parts: readonly string[]): unknown[] {
  return collectValues(doc, parts, 'traverse');
}

const BITS_OPS = ['$bitsAllSet', '$bitsAnySet', '$bitsAllClear', '$bitsAnyClear'];

const FILTER_RULES: ReadonlyArray<{ name: string; applies: (leaf: Leaf, doc: Doc) => boolean }> = [
  {
    // The bitwise operators match only numbers that are 64-bit integers in MongoDB (an array
    // through its elements); mingo applies JavaScript's 32-bit & to whatever it finds, so a
    // string, a fraction, a missing field or a whole array (also the array of values a path
    // through documents collects) reads as 0 or truncated.
    name: 'bits-on-non-integers',
    applies: (leaf, doc) => {
      if (!BITS_OPS.includes(leaf.op)) return false;
      const values = valuesAt(doc, leaf.parts);
      return values.length === 0 || values.some((v) => !Number.isInteger(v)) || pathFacts(doc, leaf.parts).crossesArray;
    },
  },
  {
    // MongoDB does not enter an array nested in an array implicitly, and hands an element picked
    // by an index ("a.0") to the operator as is; mingo flattens nested arrays along the path.
    name: 'nested-arrays-on-path',
    applies: (leaf, doc) => pathFacts(doc, leaf.parts).nestedArray,
  },
  {
    // MongoDB's "a.0" over an array of documents also reads each document's field "0", which is
    // missing (so it matches null, $exists: false, $ne ...); mingo only indexes the array.
    name: 'index-over-documents',
    applies: (leaf, doc) => pathFacts(doc, leaf.parts).indexOverDocuments,
  },
  {
    // Null equality ($eq/$in/$gte/$lte/$all with null) through an array of documents: MongoDB
    // counts each document without the field as missing, hence null; mingo skips them.
    name: 'null-through-array',
    applies: (leaf, doc) => mentionsNull(leaf.operand) && pathFacts(doc, leaf.parts).crossesArray,
  },
  {
    // {$gte: null} and {$lte: null} match a missing field in MongoDB (null and missing compare
    // equal); mingo's comparisons never match missing.
    name: 'range-null-missing',
    applies: (leaf, doc) => ['$gte', '$lte', '$not'].includes(leaf.op) && mentionsNull(leaf.operand) && valuesAt(doc, leaf.parts).includes(MISSING),
  },
  {
    // Range comparisons of arrays and documents: MongoDB compares BSON-wise (element by element,
    // field by field in order); mingo sorts array elements and object keys first.
    name: 'container-ordering',
    applies: (leaf, doc) =>
      ['$gt', '$gte', '$lt', '$lte', '$not', '$elemMatch'].includes(leaf.op) &&
      (isContainer(leaf.operand) || valuesAt(doc, leaf.parts).some(isContainer)),
  },
  {
    // $in/$nin with an array member: MongoDB compares each member with the elements of an array
    // field and with the whole array ({c: {$in: [[1]]}} matches {c: [1]}); mingo only with the
    // elements.
    name: 'in-array-member-vs-whole-array',
    applies: (leaf, doc) =>
      ['$in', '$nin', '$not'].includes(leaf.op) && mentionsArray(leaf.operand) && (leaf.operand as unknown[]).some(Array.isArray) && valuesAt(doc, leaf.parts).some(Array.isArray),
  },
  {
    // $mod matches numbers only in MongoDB, truncating doubles first (1.5 counts as 1); mingo
    // applies % to anything (null % 2 === 0) and does not truncate.
    name: 'mod-non-integers',
    applies: (leaf, doc) => leaf.op === '$mod' && valuesAt(doc, leaf.parts).some((v) => !Number.isInteger(v)),
  },
  {
    // $type in MongoDB looks at each element of an array field as well as the array, and types
    // JSON numbers by value (1 is "int", 1.5 "double"); mingo tests the value as a whole with JS
    // type checks.
    name: 'type-of-array-elements-and-numbers',
    applies: (leaf, doc) => leaf.op === '$type' && valuesAt(doc, leaf.parts).some((v) => Array.isArray(v) || typeof v === 'number'),
  },
  {
    // $all on a field that is not an array: MongoDB's $all is an AND of equalities, so {a: 1}
    // matches {$all: [1]}; mingo requires an array.
    name: 'all-on-non-array',
    applies: (leaf, doc) => leaf.op === '$all' && valuesAt(doc, leaf.parts).some((v) => !Array.isArray(v)),
  },
  {
    // An array operator ($size, $elemMatch, $all) or $type on a path through an array of
    // documents: MongoDB applies it to each value reached; mingo applies it to the array of the
    // values it collected (so {"a.c": {$size: 0}} matches {a: [1]} in mingo).
    // Equality with an array operand is affected the same way ({"a.b": []} matches {a: [1]}).
    name: 'array-operator-on-collected-values',
    applies: (leaf, doc) =>
      (['$size', '$elemMatch', '$all', '$type', '$not'].includes(leaf.op) || (['$eq', '$ne', '$in', '$nin'].includes(leaf.op) && mentionsArray(leaf.operand))) &&
      pathFacts(doc, leaf.parts).crossesArray,
  },
  {
    // $elemMatch's document form reads an element that is an array as a document with keys
    // "0", "1", ... in MongoDB; mingo skips such elements or flattens them.
    name: 'elem-match-array-elements',
    applies: (leaf, doc) => (leaf.op === '$elemMatch' || leaf.op === '$all') && valuesAt(doc, leaf.parts).some((v) => Array.isArray(v) && v.some(Array.isArray)),
  },
];

function mentionsArray(v: unknown): boolean {
  return Array.isArray(v);
}

// ---------------------------------------------------------------------------------------------
// Three-valued re-evaluation of a filter with rule-covered conditions unknown.

type Tri = boolean | 'unknown';

function triAnd(xs: readonly Tri[]): Tri {
  if (xs.includes(false)) return false;
  return xs.includes('unknown') ? 'unknown' : true;
}

function triOr(xs: readonly Tri[]): Tri {
  if (xs.includes(true)) return true;
  return xs.includes('unknown') ? 'unknown' : false;
}

function triNot(x: Tri): Tri {
  return x === 'unknown' ? x : !x;
}

function evalFilter(filter: Doc, doc: Doc, used: Set<string>): Tri {
  const parts: Tri[] = [];
  for (const key of Object.keys(filter)) {
    const v = filter[key];
    if (key === '$and') parts.push(triAnd((v as Doc[]).map((f) => evalFilter(f, doc, used))));
    else if (key === '$or') parts.push(triOr((v as Doc[]).map((f) => evalFilter(f, doc, used))));
    else if (key === '$nor') parts.push(triNot(triOr((v as Doc[]).map((f) => evalFilter(f, doc, used)))));
    else parts.push(evalField(key, v, doc, used));
  }
  return triAnd(parts);
}

function evalField(path: string, expr: unknown, doc: Doc, used: Set<string>): Tri {
  const isOps = isPlainObject(expr) && Object.keys(expr)[0]?.startsWith('$');
  const ops: Array<[string, unknown]> = isOps ? Object.entries(expr as Doc).filter(([k]) => k !== '$options') : [['$eq', expr]];
  return triAnd(
    ops.map(([op, value]) => {
      const single = op === '$regex' ? { $regex: value, ...(Object.hasOwn(expr as Doc, '$options') ? { $options: (expr as Doc)['$options'] } : {}) } : { [op]: value };
      const leaf: Leaf = { path, parts: path.split('.'), op, operand: value };
      const rules = FILTER_RULES.filter((r) => r.applies(leaf, doc));
      if (rules.length > 0) {
        for (const r of rules) used.add(r.name);
        return 'unknown';
      }
      return compileFilter({ [path]: single }).test(doc);
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Comparison helpers

/** Deep equality that ignores field order (mingo builds some documents in another order). */
function sameContent(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => sameContent(x, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined).sort();
    const kb = Object.keys(b).filter((k) => b[k] !== undefined).sort();
    return ka.length === kb.length && ka.every((k, i) => k === kb[i] && sameContent(a[k], b[k]));
  }
  return Object.is(a, b) || (typeof a === 'number' && a === b);
}

function show(v: unknown): string {
  return JSON.stringify(v);
}

class Tally {
  readonly counts = new Map<string, number>();

  add(names: Iterable<string>): void {
    for (const n of names) this.counts.set(n, (this.counts.get(n) ?? 0) + 1);
  }
}

// ---------------------------------------------------------------------------------------------
// Sort, projection and update generators and rules

function randomSort(rand: Rand): Doc {
  const spec: Doc = {};
  const n = randomInt(rand, 1, 2);
  for (let i = 0; i < n; i++) spec[pick(rand, ['a', 'b', 'c', 'a.b', 'b.c'])] = pick(rand, [1, -1]);
  return spec;
}

function randomProjection(rand: Rand): Doc {
  const spec: Doc = {};
  const include = rand() < 0.5 ? 1 : 0;
  const n = randomInt(rand, 1, 3);
  const taken: string[] = [];
  for (let i = 0; i < n; i++) {
    const path = pick(rand, ['a', 'b', 'c', 'a.b', 'a.c', 'b.c', 'a.b.c']);
    // Path collisions are errors in MongoDB 4.4+; keep the projection valid.
    if (taken.some((t) => t === path || t.startsWith(`${path}.`) || path.startsWith(`${t}.`))) continue;
    taken.push(path);
    spec[path] = include;
  }
  if (rand() < 0.3) spec['_id'] = 0;
  // Projection operators, in inclusion projections only: mingo takes a $slice alone as an
  // inclusion and refuses one beside exclusions, where MongoDB returns every other field (the
  // manual's $slice examples). $elemMatch on documents only: mingo's projection $elemMatch
  // refuses operators on scalar elements (`{$elemMatch: {$gt: 0}}`), which MongoDB's accepts.
  // test/docs/projection.test.ts covers both against the manual.
  if (include === 1 && rand() < 0.4) {
    const field = pick(rand, ['a', 'b', 'c'].filter((f) => !taken.some((t) => t === f || t.startsWith(`${f}.`))));
    if (field !== undefined) {
      spec[field] =
        rand() < 0.6
          ? { $slice: pick(rand, [1, 2, -1, -2, 0, [1, 1], [-2, 1], [0, 5], [5, 1]]) }
          : { $elemMatch: pick(rand, [{ c: 1 }, { b: { $gte: 1 } }, { b: 'a', c: { $ne: 1 } }, { b: { $in: [1, 'a'] } }]) };
    }
  }
  return spec;
}

const UPDATE_PATHS = ['a', 'b', 'c', 'd', 'a.b', 'a.c', 'b.c', 'd.e'];

function randomUpdate(rand: Rand): Doc {
  const update: Doc = {};
  const taken: string[] = [];
  const n = randomInt(rand, 1, 3);
  for (let i = 0; i < n; i++) {
    const path = pick(rand, UPDATE_PATHS);
    if (taken.some((t) => t === path || t.startsWith(`${path}.`) || path.startsWith(`${t}.`))) continue;
    taken.push(path);
    const op = pick(rand, ['$set', '$unset', '$inc', '$mul', '$min', '$max', '$push', '$addToSet', '$pop', '$pull', '$rename', '$bit']);
    let value: unknown;
    switch (op) {
      case '$bit':
        // One operation per field: mingo refuses several (MongoDB applies them in order).
        value = { [pick(rand, ['and', 'or', 'xor'])]: pick(rand, [0, 1, 5, 12, -1, -8]) };
        break;
      case '$inc':
      case '$mul':
        value = pick(rand, [1, 2, -1, 0.5]);
        break;
      case '$pop':
        value = pick(rand, [1, -1]);
        break;
      case '$push':
        value = rand() < 0.5 ? pick(rand, SCALARS) : { $each: [pick(rand, SCALARS), pick(rand, SCALARS)], ...(rand() < 0.5 ? { $slice: pick(rand, [2, -2, 0]) } : {}) };
        break;
      case '$addToSet':
        value = rand() < 0.5 ? pick(rand, SCALARS) : { $each: [pick(rand, SCALARS), pick(rand, SCALARS)] };
        break;
      case '$pull':
        if (rand() < 0.5) value = pick(rand, SCALARS);
        else if (rand() < 0.5) value = { $in: [pick(rand, SCALARS), pick(rand, SCALARS)] };
        else value = { [pick(rand, ['$gt', '$lt', '$gte'])]: pick(rand, SCALARS) };
        break;
      case '$rename': {
        const to = pick(rand, ['x', 'y', 'z.w']);
        if (taken.some((t) => t === to || t.startsWith(`${to}.`) || to.startsWith(`${t}.`))) continue;
        taken.push(to);
        value = to;
        break;
      }
      default:
        value = pick(rand, SCALARS);
    }
    const group = (update[op] ??= {}) as Doc;
    group[path] = value;
  }
  return update;
}

/** True when the values at `path` are scalars reached without passing through an array. */
function isSortPlain(doc: Doc, path: string): boolean {
  const parts = path.split('.');
  return !pathFacts(doc, parts).crossesArray && collectValues(doc, parts, 'no-traversal').every((v) => !isContainer(v));
}

const PROJECTION_RULES: ReadonlyArray<{ name: string; applies: (spec: Doc, doc: Doc, theirs: Doc | Error) => boolean }> = [
  {
    // The $elemMatch projection's document form matches only elements that are documents (or
    // arrays) in MongoDB, as the query operator does; mingo also matches scalar elements
    // (`{$elemMatch: {c: 1}}` picks the element 1).
    name: 'elem-match-projection-scalar-elements',
    applies: (spec, doc) =>
      Object.entries(spec).some(([field, v]) => isPlainObject(v) && Object.hasOwn(v, '$elemMatch') && Array.isArray(doc[field]) && (doc[field] as unknown[]).some((el) => !isContainer(el))),
  },
  {
    // mingo throws a TypeError excluding a dotted path through a null ("a.b": 0 on {a: null});
    // MongoDB returns the document unchanged there.
    name: 'exclusion-through-null-crashes-mingo',
    applies: (_spec, _doc, theirs) => theirs instanceof TypeError,
  },
];

// MongoDB's errors for updates that do not fit the document; mingo applies what it can and
// silently skips the rest.
const TYPE_ERRORS = [
  'Cannot create field',
  'must be an array but is of type',
  'contains an element of non-array type',
  'Cannot apply $inc to a value of non-numeric type',
  'Cannot apply $mul to a value of non-numeric type',
  'Cannot apply $bit to a value of non-integral type',
  'Cannot apply $pull to a non-array value',
  'Cannot apply $addToSet to non-array field',
  'cannot be an array element',
];

function modifierOn(spec: Doc, op: string, clause: string): boolean {
  const group = spec[op];
  return isPlainObject(group) && Object.values(group).some((v) => isPlainObject(v) && Object.hasOwn(v, clause));
}

const UPDATE_RULES: ReadonlyArray<{ name: string; applies: (spec: Doc, doc: Doc, ours: Doc | Error) => boolean }> = [
  {
    // MongoDB refuses an update that does not fit the document ("Cannot create field 'b' in
    // element {a: 1}", $push to a non-array, $inc of a string, $rename through an array ...);
    // mingo skips those operations (or overwrites a null on the way) and applies the rest.
    name: 'update-type-errors-ignored',
    applies: (_spec, _doc, ours) => ours instanceof Error && TYPE_ERRORS.some((m) => ours.message.includes(m)),
  },
  {
    // $min/$max comparing with an array or a document: MongoDB uses BSON order (an array sorts
    // above every scalar but booleans and dates, documents field by field); mingo compares arrays
    // by their elements.
    name: 'min-max-with-containers',
    applies: (spec, doc) =>
      ['$min', '$max'].some((op) => isPlainObject(spec[op]) && Object.entries(spec[op]).some(([path, v]) => isContainer(v) || collectValues(doc, path.split('.'), 'no-traversal').some(isContainer))),
  },
  {
    // $pull of a value from an array holding arrays: MongoDB removes elements equal to the value
    // (an inner array [1, 2] is not equal to 1); mingo also removes inner arrays containing it.
    name: 'pull-value-from-nested-arrays',
    applies: (spec, doc) =>
      isPlainObject(spec['$pull']) && Object.keys(spec['$pull']).some((path) => collectValues(doc, path.split('.'), 'no-traversal').some((v) => Array.isArray(v) && v.some(Array.isArray))),
  },
  {
    // $push with $each and $slice/$sort/$position on a missing field: MongoDB creates the array
    // and applies the modifiers; mingo stores $each as is.
    name: 'push-modifiers-on-missing-field',
    applies: (spec) => modifierOn(spec, '$push', '$slice'),
  },
  {
    // $addToSet to an array that already holds duplicates: MongoDB leaves the existing elements
    // alone and appends what is new; mingo de-duplicates the whole array, and when the length
    // comes out unchanged it drops the update.
    name: 'add-to-set-existing-duplicates',
    applies: (spec, doc) =>
      isPlainObject(spec['$addToSet']) &&
      Object.keys(spec['$addToSet']).some((path) =>
        collectValues(doc, path.split('.'), 'no-traversal').some((v) => Array.isArray(v) && v.some((x, i) => v.findIndex((y) => sameContent(x, y)) !== i)),
      ),
  },
  {
    // $addToSet with $each on a missing field: MongoDB adds each distinct value once; mingo
    // stores $each as is, duplicates included.
    name: 'add-to-set-duplicates-on-missing-field',
    applies: (spec) => modifierOn(spec, '$addToSet', '$each'),
  },
];

/** The document as our engine has it before stage `i` of `pipeline` (undefined when an earlier stage fails). */
function beforeStage(pipeline: Doc[], i: number, doc: Doc): Doc | undefined {
  try {
    return compileUpdate(pipeline.slice(0, i)).apply(doc, { now: D1 }).doc;
  } catch {
    return undefined;
  }
}

/** Our value of an aggregation expression on `doc` (MISSING when it is missing). */
function ourValue(doc: Doc, expr: unknown): unknown {
  const out = compileUpdate([{ $replaceWith: { v: expr } }]).apply(doc, { now: D1 }).doc;
  return Object.hasOwn(out, 'v') ? out['v'] : MISSING;
}

/** The fields of each $set/$addFields stage with the document before it. */
function* setStages(pipeline: Doc[], doc: Doc): Generator<{ fields: Doc; before: Doc }> {
  for (let i = 0; i < pipeline.length; i++) {
    const stage = pipeline[i]!;
    const fields = stage['$set'] ?? stage['$addFields'];
    if (!isPlainObject(fields)) continue;
    const before = beforeStage(pipeline, i, doc);
    if (before !== undefined) yield { fields, before };
  }
}

/**
 * Arrays with JavaScript's undefined (mingo's missing) as null, MongoDB's value for a missing
 * element. mingo can return a document that contains itself: that part becomes a marker no value
 * equals.
 */
function nullInArrays(v: unknown, seen = new Set<unknown>()): unknown {
  if (!Array.isArray(v) && !isPlainObject(v)) return v;
  if (seen.has(v)) return Symbol('cycle');
  seen.add(v);
  const out = Array.isArray(v) ? v.map((x) => (x === undefined ? null : nullInArrays(x, seen))) : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, nullInArrays(x, seen)]));
  seen.delete(v);
  return out;
}

/** The field paths ("a.b") and $$ROOT an expression reads. */
function fieldPaths(expr: unknown): string[] {
  if (typeof expr === 'string') return expr === '$$ROOT' ? [expr] : expr.startsWith('$') && !expr.startsWith('$$') ? [expr.slice(1)] : [];
  if (Array.isArray(expr)) return expr.flatMap(fieldPaths);
  if (isPlainObject(expr) && !Object.hasOwn(expr, '$literal')) return Object.values(expr).flatMap(fieldPaths);
  return [];
}

function hasCycle(v: unknown, seen = new Set<unknown>()): boolean {
  if (!Array.isArray(v) && !isPlainObject(v)) return false;
  if (seen.has(v)) return true;
  seen.add(v);
  const found = (Array.isArray(v) ? v : Object.values(v)).some((x) => hasCycle(x, seen));
  seen.delete(v);
  return found;
}

const PIPELINE_UPDATE_RULES: ReadonlyArray<{ name: string; applies: (pipeline: Doc[], doc: Doc, ours: Doc | Error, theirs: Doc | Error) => boolean }> = [
  {
    // mingo's stages change shallow copies in place, and a $set of "a.b" after a $replaceWith
    // of $$ROOT merged with `a` can leave a document that contains itself (or recurse forever).
    name: 'mingo-self-containing-result',
    applies: (_p, _d, _o, theirs) => hasCycle(theirs) || (theirs instanceof Error && theirs.message.includes('Maximum call stack')),
  },
  {
    // MongoDB computes every field of a $set/$addFields on the stage's input; mingo sets them one
    // by one, so a field reading a path another one writes sees the new value.
    name: 'add-fields-reads-its-input',
    applies: (pipeline) =>
      pipeline.some((stage) => {
        const fields = stage['$set'] ?? stage['$addFields'];
        if (!isPlainObject(fields)) return false;
        const written = Object.keys(fields).map((p) => p.split('.')[0]);
        return Object.values(fields).some((expr) => fieldPaths(expr).some((p) => p === '$$ROOT' || written.includes(p.split('.')[0])));
      }),
  },
  {
    // $set of "a.b" to a missing value: MongoDB still makes `a` a document (`{a: {}}`); mingo
    // leaves the document alone.
    name: 'add-fields-missing-value-makes-parent',
    applies: (pipeline, doc) => {
      for (const { fields, before } of setStages(pipeline, doc)) {
        for (const [path, expr] of Object.entries(fields)) if (path.includes('.') && ourValue(before, expr) === MISSING) return true;
      }
      return false;
    },
  },
  {
    // mingo copies documents shallowly: a $set (or a $replaceWith merge) of one field's document
    // or array into another place, then a change inside either one, changes both in mingo.
    name: 'mingo-shared-copies',
    applies: (pipeline, doc) => {
      let copied = false;
      for (let i = 0; i < pipeline.length; i++) {
        const stage = pipeline[i]!;
        const changesInside = Object.keys(stage['$set'] ?? stage['$addFields'] ?? {}).some((p) => p.includes('.')) || Object.hasOwn(stage, '$unset') || Object.hasOwn(stage, '$project');
        if (copied && changesInside) return true;
        const exprs = Object.hasOwn(stage, '$replaceWith') ? [stage['$replaceWith']] : Object.values((stage['$set'] ?? stage['$addFields'] ?? {}) as Doc);
        const before = exprs.length > 0 ? beforeStage(pipeline, i, doc) : undefined;
        if (before === undefined) continue;
        for (const expr of exprs) {
          for (const p of fieldPaths(expr)) {
            const v = ourValue(before, p === "$$ROOT" ? p : `$${p}`);
            if (isPlainObject(v) || Array.isArray(v)) copied = true;
          }
        }
      }
      return false;
    },
  },
  {
    // An array expression's missing element is null in MongoDB (["$nope", 1] is [null, 1]);
    // mingo leaves JavaScript's undefined there.
    name: 'missing-array-element-is-null',
    applies: (_p, _d, ours, theirs) => !(ours instanceof Error) && !(theirs instanceof Error) && sameContent(ours, nullInArrays(theirs)),
  },
  {
    // $mergeObjects of a value that is not a document (nor null) is an error in MongoDB
    // ("$mergeObjects requires object inputs"); mingo merges an array's or a string's indexes.
    name: 'merge-objects-non-document',
    applies: (_p, _d, ours) => ours instanceof Error && ours.message.startsWith('$mergeObjects requires a document input'),
  },
  {
    // $set/$addFields of "a.b" where `a` is not a document: MongoDB makes it one (a scalar or
    // null becomes {b: ...}, each element of an array gets the field: jstests
    // projection_semantics.js); mingo leaves such a value alone.
    name: 'add-fields-through-non-document',
    applies: (pipeline, doc) => {
      for (const { fields, before } of setStages(pipeline, doc)) {
        for (const path of Object.keys(fields)) {
          if (!path.includes('.')) continue;
          const top = before[path.split('.')[0]!];
          if (top !== undefined && (!isPlainObject(top) || Array.isArray(top))) return true;
        }
      }
      return false;
    },
  },
  {
    // Aggregation comparisons ($gt, $lt, $eq) of values of different types follow BSON order in
    // MongoDB (a document is above every number; missing is below null); mingo compares them
    // otherwise.
    name: 'expression-comparison-across-types',
    applies: (pipeline, doc) => {
      for (const { fields, before } of setStages(pipeline, doc)) {
        for (const expr of Object.values(fields)) {
          if (!isPlainObject(expr) || !Array.isArray(expr['$cond'])) continue;
          const test = expr['$cond'][0] as Doc;
          const [field, operand] = Object.values(test)[0] as [string, unknown];
          const value = ourValue(before, field);
          if (value === MISSING || value === null || operand === null || typeBracket(value) !== typeBracket(operand)) return true;
        }
      }
      return false;
    },
  },
  {
    // mingo's updateMany writes a document back only when its hashCode changed, and its hashCode
    // collides: `{a: {b: "a", c: {b: "a", c: 1.5}}}` and `{a: 1.5}` hash alike, so a $set of `a`
    // to 1.5 leaves the document as it was. MongoDB sets it.
    name: 'mingo-update-hash-collision',
    applies: (_p, doc, ours, theirs) => !(ours instanceof Error) && !(theirs instanceof Error) && sameContent(theirs, doc) && !sameContent(ours, doc) && hashCode(ours) === hashCode(doc),
  },
];

// ---------------------------------------------------------------------------------------------
// Positional updates: `$`, `$[]`, `$[<identifier>]` with arrayFilters

const POS_SCALARS: readonly unknown[] = [0, 1, 2, 5, -1, 'a', 'b', null, true];

/** Documents with arrays where positional paths lead: `a` of documents or scalars, `b` of scalars. */
function randomPositionalDoc(rand: Rand, id: number): Doc {
  const d: Doc = { _id: id };
  const r = rand();
  if (r < 0.6) {
    d['a'] = Array.from({ length: randomInt(rand, 0, 4) }, () => {
      const e: Doc = {};
      if (rand() < 0.85) e['k'] = pick(rand, POS_SCALARS);
      if (rand() < 0.75) e['v'] = pick(rand, [0, 1, 2, 5, -1, 'a']);
      if (rand() < 0.5) e['s'] = Array.from({ length: randomInt(rand, 0, 3) }, () => pick(rand, [0, 1, 2, 5]));
      return rand() < 0.9 ? e : pick(rand, POS_SCALARS);
    });
  } else if (r < 0.85) d['a'] = Array.from({ length: randomInt(rand, 0, 4) }, () => pick(rand, POS_SCALARS));
  else if (r < 0.93) d['a'] = pick(rand, POS_SCALARS);
  if (rand() < 0.8) d['b'] = Array.from({ length: randomInt(rand, 0, 4) }, () => pick(rand, [0, 1, 2, 5, -1]));
  return d;
}

/**
 * A filter with one positive condition on `a` (what `$` takes its element from), sometimes with
 * `_id`; mostly built from one of the document's own elements, so that most filters match.
 */
function randomPositionalFilter(rand: Rand, doc: Doc): Doc {
  const f: Doc = {};
  if (rand() < 0.3) f['_id'] = doc['_id'];
  const a = doc['a'];
  const el = Array.isArray(a) && a.length > 0 && rand() < 0.75 ? pick(rand, a) : MISSING;
  // No null conditions: `{"a.k": null}` also matches an element without `k` in MongoDB, so `$`
  // may stand for it; mingo's null matches only an explicit null inside arrays.
  const NOT_NULL = POS_SCALARS.filter((v) => v !== null);
  const own = isPlainObject(el) && Object.hasOwn(el, 'k') ? el['k'] : null;
  const k = own !== null ? own : pick(rand, NOT_NULL);
  switch (randomInt(rand, 0, 4)) {
    case 0:
      f['a.k'] = k;
      break;
    case 1:
      f['a.v'] = { [pick(rand, ['$gt', '$gte', '$lt', '$lte'])]: pick(rand, [0, 1, 2]) };
      break;
    case 2:
      f['a'] = el !== MISSING && el !== null && !isPlainObject(el) ? el : pick(rand, NOT_NULL);
      break;
    case 3:
      f['a'] = { $elemMatch: { k, v: { $gte: pick(rand, [0, 1]) } } };
      break;
    default:
      f['a.k'] = { $in: [k, pick(rand, NOT_NULL)] };
  }
  return f;
}

const POSITIONAL_PATHS = ['a.$', 'a.$.k', 'a.$.v', 'a.$.s.$[]', 'a.$[]', 'a.$[].v', 'a.$[].k', 'a.$[x]', 'a.$[x].v', 'a.$[].s.$[]', 'a.$[x].s.$[y]', 'b.$[]', 'b.$[y]'];

/** One positional path under one operator, its array filters, and sometimes a $set of another field. */
function randomPositionalUpdate(rand: Rand): { update: Doc; arrayFilters: Doc[] } {
  const path = pick(rand, POSITIONAL_PATHS);
  const op = pick(rand, ['$set', '$inc', '$mul', '$min', '$max', '$unset', '$push', '$addToSet', '$pull', '$pop']);
  let value: unknown;
  switch (op) {
    case '$inc':
    case '$mul':
      value = pick(rand, [1, 2, -1]);
      break;
    case '$pop':
      value = pick(rand, [1, -1]);
      break;
    case '$pull':
      value = rand() < 0.5 ? pick(rand, [0, 1, 5]) : { $gte: pick(rand, [1, 2]) };
      break;
    default:
      value = pick(rand, [0, 1, 2, 5, 'a', null]);
  }
  const update: Doc = { [op]: { [path]: value } };
  if (rand() < 0.3) update[op === '$set' ? '$inc' : '$set'] = { c: 1 };
  const arrayFilters: Doc[] = [];
  if (path.includes('$[x]')) {
    // No null under an element's field: `{"x.k": null}` matches a scalar element in MongoDB (the
    // path through it is missing); mingo wraps the element in an array and does not.
    const k = pick(rand, POS_SCALARS.filter((v) => v !== null));
    arrayFilters.push(pick(rand, [{ 'x.k': k }, { 'x.v': { $gte: pick(rand, [0, 1, 2]) } }, { x: pick(rand, POS_SCALARS) }, { 'x.k': { $in: ['a', 1] } }]));
  }
  // No logical operators in array filters: mingo files `{$or: [...]}` under the name "$or" and
  // fails (test/docs/update/positional.test.ts covers them against the manual).
  if (path.includes('$[y]')) arrayFilters.push(pick(rand, [{ y: { $gt: pick(rand, [0, 1, 2]) } }, { y: pick(rand, [0, 1, 5]) }, { y: { $in: [0, 5] } }]));
  return { update, arrayFilters };
}

// MongoDB's refusals of array updates that do not fit the document (`$[]` or `$[<id>]` on a
// missing field or a non-array, `$` where the filter matched a field that is not an array); mingo
// skips those operations silently and applies the rest.
const ARRAY_UPDATE_ERRORS = ['must exist in the document in order to apply array updates', 'Cannot apply array updates to non-array element'];
const positionalWithoutArray = (doc: Doc, ours: Doc | Error): boolean =>
  ours instanceof Error && ours.message.startsWith('The positional operator did not find the match') && !Array.isArray(doc['a']);
// `$` from `{a: {$elemMatch: {...}}}` stands for the first element the $elemMatch matches in
// MongoDB; with a scalar element before it (`[0, {k: 0}]`) mingo finds no position (the document
// stays as it was) or takes the scalar's.
const positionalElemMatchPastScalar = (filter: Doc, doc: Doc, ours: Doc | Error, theirs: Doc | Error): boolean => {
  const a = doc['a'];
  const cond = filter['a'];
  if (!Array.isArray(a) || !isPlainObject(cond) || !('$elemMatch' in cond) || theirs instanceof Error) return false;
  const first = a.findIndex((el) => isPlainObject(el) && new Query({ a: cond }).test({ a: [el] }));
  return first > 0 && !(ours instanceof Error) && a.slice(0, first).some((el) => !isPlainObject(el) && !Array.isArray(el));
};

// ---------------------------------------------------------------------------------------------
// Pipeline-style updates: $set/$addFields, $unset, $project, $replaceWith

// Stages write mostly where expressions do not read, so that most pipelines compare whole.
const PIPELINE_PATHS = ['a', 'b', 'c', 'd', 'a.b', 'a.c', 'b.c'];
const PIPELINE_WRITTEN = ['a', 'd', 'e', 'e.f', 'a.c', 'b.c'];

function freePath(rand: Rand, taken: string[], paths: readonly string[] = PIPELINE_PATHS): string | undefined {
  const path = pick(rand, paths);
  if (taken.some((t) => t === path || t.startsWith(`${path}.`) || path.startsWith(`${t}.`))) return undefined;
  taken.push(path);
  return path;
}

function randomPipelineExpression(rand: Rand): unknown {
  const field = `$${pick(rand, ['a', 'b', 'c', 'a.b', 'b.c'])}`;
  switch (randomInt(rand, 0, 6)) {
    case 0:
      return pick(rand, SCALARS);
    case 1:
      return field;
    case 2:
      return { $ifNull: [field, pick(rand, SCALARS)] };
    case 3:
      return { $cond: [{ [pick(rand, ['$gt', '$lt', '$eq'])]: [field, pick(rand, SCALARS)] }, 'yes', 'no'] };
    case 4:
      return { $literal: randomValue(rand, 2) };
    default:
      return [field, pick(rand, SCALARS)];
  }
}

/** One to three stages; paths within a stage never overlap (MongoDB refuses that). */
function randomPipeline(rand: Rand): Doc[] {
  const stages: Doc[] = [];
  const n = randomInt(rand, 1, 3);
  for (let i = 0; i < n; i++) {
    const taken: string[] = [];
    const paths = (from?: readonly string[]) => Array.from({ length: randomInt(rand, 1, 2) }, () => freePath(rand, taken, from)).filter((p): p is string => p !== undefined);
    switch (randomInt(rand, 0, 5)) {
      case 0:
      case 1:
        stages.push({ [pick(rand, ['$set', '$addFields'])]: Object.fromEntries(paths(PIPELINE_WRITTEN).map((p) => [p, randomPipelineExpression(rand)])) });
        break;
      case 2:
        stages.push({ $unset: paths() });
        break;
      case 3: {
        const include = rand() < 0.5 ? 1 : 0;
        stages.push({ $project: Object.fromEntries(paths().map((p) => [p, include])) });
        break;
      }
      default:
        stages.push({ $replaceWith: pick(rand, [{ $mergeObjects: [{ z: pick(rand, SCALARS) }, '$$ROOT'] }, { $mergeObjects: ['$$ROOT', '$a'] }]) });
    }
  }
  return stages;
}

// ---------------------------------------------------------------------------------------------

describe('MQL core against the mingo oracle', () => {
  for (const seed of SEEDS) {
    it(`filters agree (seed ${seed})`, () => {
      const rand = seededRandom(seed);
      const docs = Array.from({ length: DOCS }, (_, i) => randomDoc(rand, i));
      const tally = new Tally();
      let compared = 0;
      let matched = 0;
      const shown = new Set<number>();
      for (let q = 0; q < FILTERS; q++) {
        const filter = randomFilter(rand, 0);
        const ours = compileFilter(filter);
        const theirs = new Query(filter);
        for (const doc of docs) {
          compared++;
          const a = ours.test(doc);
          const b = theirs.test(doc);
          if (a) matched++;
          if (a === b) continue;
          const used = new Set<string>();
          const expected = evalFilter(filter, doc, used);
          if (expected === 'unknown') {
            tally.add(used);
            continue;
          }
          const message = `seed ${seed}: filter ${show(filter)} on ${show(doc)}: tetradb ${a}, mingo ${b}, rules ${[...used].join(',') || 'none'}`;
          if (process.env.TETRA_FUZZ_DISCOVER) {
            if (!shown.has(q)) console.log(message);
            shown.add(q);
            tally.add(['UNEXPLAINED']);
            continue;
          }
          throw new Error(message);
        }
      }
      expect(compared).toBe(DOCS * FILTERS);
      // The value domain is small on purpose: a fair share of the pairs must match.
      expect(matched / compared).toBeGreaterThan(0.05);
      if (process.env.TETRA_FUZZ_VERBOSE) console.log(`filter excusals (seed ${seed}): ${show(Object.fromEntries(tally.counts))}`);
    });

    it(`sorts agree (seed ${seed})`, () => {
      const rand = seededRandom(seed + 1);
      const docs = Array.from({ length: 300 }, (_, i) => randomDoc(rand, i));
      for (let q = 0; q < 60; q++) {
        const spec = randomSort(rand);
        const sort = compileSort(spec);
        const ours = sortDocuments(docs, sort);
        const theirs = find(docs, {}).sort(spec as Record<string, 1 | -1>).all() as Doc[];
        expect(ours.map((d) => d['_id']).sort()).toEqual(theirs.map((d) => d['_id']).sort());
        // Rule sort-arrays-and-documents: documents with an array or an embedded document on a
        // sort path are left out (MongoDB sorts arrays by their min ascending / max descending
        // and compares documents field by field in order; mingo does neither). The others must
        // appear in mingo's output in an order consistent with ours.
        const plain = theirs.filter((d) => sort.keys.every((k) => isSortPlain(d, k.path)));
        for (let i = 1; i < plain.length; i++) {
          const c = sort.compare(plain[i - 1], plain[i]);
          if (c > 0) throw new Error(`seed ${seed}: sort ${show(spec)}: mingo puts ${show(plain[i - 1])} before ${show(plain[i])}`);
        }
        for (let i = 1; i < ours.length; i++) expect(sort.compare(ours[i - 1], ours[i])).toBeLessThanOrEqual(0);
      }
    });

    it(`projections agree (seed ${seed})`, () => {
      const rand = seededRandom(seed + 2);
      const docs = Array.from({ length: 300 }, (_, i) => randomDoc(rand, i));
      const tally = new Tally();
      for (let q = 0; q < 30; q++) {
        const spec = randomProjection(rand);
        const projection = compileProjection(spec);
        for (const doc of docs) {
          const ours = projection.apply(doc);
          let theirs: Doc | Error;
          try {
            theirs = find([doc], {}, spec).all()[0] as Doc;
          } catch (err) {
            theirs = err as Error;
          }
          if (!(theirs instanceof Error) && sameContent(ours, theirs)) continue;
          const rules = PROJECTION_RULES.filter((r) => r.applies(spec, doc, theirs)).map((r) => r.name);
          if (rules.length > 0) {
            tally.add(rules);
            continue;
          }
          const message = `seed ${seed}: projection ${show(spec)} on ${show(doc)}: tetradb ${show(ours)}, mingo ${theirs instanceof Error ? theirs.message : show(theirs)}`;
          if (process.env.TETRA_FUZZ_DISCOVER) {
            console.log(message);
            continue;
          }
          throw new Error(message);
        }
      }
      if (process.env.TETRA_FUZZ_VERBOSE) console.log(`projection excusals (seed ${seed}): ${show(Object.fromEntries(tally.counts))}`);
    });

    it(`updates agree (seed ${seed})`, () => {
      const rand = seededRandom(seed + 3);
      const tally = new Tally();
      let applied = 0;
      for (let q = 0; q < 2500; q++) {
        const doc = randomUpdateDoc(rand, q);
        const spec = randomUpdate(rand);
        let ours: Doc | Error;
        try {
          ours = compileUpdate(spec).apply(doc, { now: D1 }).doc;
          applied++;
        } catch (err) {
          // Every refusal must be a catalogued error, never a crash.
          if (!isTetraError(err)) throw new Error(`seed ${seed}: update ${show(spec)} on ${show(doc)} crashed: ${String(err)}`);
          ours = err;
        }
        let theirs: Doc | Error = structuredClone(doc);
        try {
          mingoUpdate(theirs, structuredClone(spec));
        } catch (err) {
          theirs = err as Error;
        }
        const agree = ours instanceof Error ? theirs instanceof Error : !(theirs instanceof Error) && sameContent(ours, theirs);
        if (agree) continue;
        const rules = UPDATE_RULES.filter((r) => r.applies(spec, doc, ours)).map((r) => r.name);
        if (rules.length > 0) {
          tally.add(rules);
          continue;
        }
        const describe = (x: Doc | Error) => (x instanceof Error ? `error ${x.message}` : show(x));
        const message = `seed ${seed}: update ${show(spec)} on ${show(doc)}: tetradb ${describe(ours)}, mingo ${describe(theirs)}`;
        if (process.env.TETRA_FUZZ_DISCOVER) {
          console.log(message);
          continue;
        }
        throw new Error(message);
      }
      expect(applied).toBeGreaterThan(800);
      if (process.env.TETRA_FUZZ_VERBOSE) console.log(`update excusals (seed ${seed}): ${show(Object.fromEntries(tally.counts))}`);
    });

    it(`pipeline-style updates agree (seed ${seed})`, () => {
      const rand = seededRandom(seed + 5);
      const tally = new Tally();
      let applied = 0;
      let changed = 0;
      let agreed = 0;
      for (let q = 0; q < 2500; q++) {
        const doc = randomUpdateDoc(rand, q);
        const pipeline = randomPipeline(rand);
        let ours: Doc | Error;
        try {
          const result = compileUpdate(pipeline).apply(doc, { now: D1 });
          ours = result.doc;
          applied++;
          if (result.modified) changed++;
        } catch (err) {
          if (!isTetraError(err)) throw new Error(`seed ${seed}: pipeline ${show(pipeline)} on ${show(doc)} crashed: ${String(err)}`);
          ours = err;
        }
        const docs = [structuredClone(doc)];
        let theirs: Doc | Error;
        try {
          // updateMany: mingo's updateOne fails its own bookkeeping after most $replaceWith stages.
          mingoUpdateMany(docs, {}, structuredClone(pipeline) as never);
          theirs = docs[0]!;
        } catch (err) {
          theirs = err as Error;
        }
        const agree = ours instanceof Error ? theirs instanceof Error : !(theirs instanceof Error) && sameContent(ours, theirs);
        if (agree) {
          agreed++;
          continue;
        }
        const rules = PIPELINE_UPDATE_RULES.filter((r) => r.applies(pipeline, doc, ours, theirs)).map((r) => r.name);
        if (rules.length > 0) {
          tally.add(rules);
          continue;
        }
        const describe = (x: Doc | Error) => (x instanceof Error ? `error ${x.message}` : show(x));
        const message = `seed ${seed}: pipeline ${show(pipeline)} on ${show(doc)}: tetradb ${describe(ours)}, mingo ${describe(theirs)}`;
        if (process.env.TETRA_FUZZ_DISCOVER) {
          console.log(message);
          continue;
        }
        throw new Error(message);
      }
      expect(applied).toBeGreaterThan(1500);
      expect(changed).toBeGreaterThan(1000);
      // The rules excuse a minority: most pipelines are compared whole.
      expect(agreed).toBeGreaterThan(1250);
      if (process.env.TETRA_FUZZ_VERBOSE) console.log(`pipeline update excusals (seed ${seed}): ${show(Object.fromEntries(tally.counts))}; applied ${applied}, changed ${changed}, agreed ${agreed}`);
    });

    it(`positional updates agree (seed ${seed})`, () => {
      const rand = seededRandom(seed + 4);
      const tally = new Tally();
      let applied = 0;
      let changed = 0;
      for (let q = 0; q < 4000; q++) {
        const doc = randomPositionalDoc(rand, q);
        const filter = randomPositionalFilter(rand, doc);
        const { update, arrayFilters } = randomPositionalUpdate(rand);
        const compiled = compileFilter(filter);
        // Only documents both sides match: the filter campaign above compares matching itself.
        if (!compiled.test(doc) || !new Query(filter).test(doc)) continue;
        let ours: Doc | Error;
        try {
          const result = compileUpdate(update, { filter: compiled.ast, arrayFilters }).apply(doc, { now: D1 });
          ours = result.doc;
          applied++;
          if (result.modified) changed++;
        } catch (err) {
          if (!isTetraError(err)) throw new Error(`seed ${seed}: positional update ${show(update)} ${show(arrayFilters)} on ${show(doc)} crashed: ${String(err)}`);
          ours = err;
        }
        let theirs: Doc | Error = structuredClone(doc);
        try {
          mingoUpdate(theirs, structuredClone(update), structuredClone(arrayFilters), structuredClone(filter));
        } catch (err) {
          theirs = err as Error;
        }
        const agree = ours instanceof Error ? theirs instanceof Error : !(theirs instanceof Error) && sameContent(ours, theirs);
        if (agree) continue;
        const rules = [
          ...UPDATE_RULES.filter((r) => r.applies(update, doc, ours)).map((r) => r.name),
          // MongoDB refuses `$[]`/`$[<id>]` on a missing or non-array field; mingo skips the update.
          ...(ours instanceof Error && ARRAY_UPDATE_ERRORS.some((m) => ours.message.includes(m)) ? ['array-update-on-non-array-ignored'] : []),
          ...(positionalWithoutArray(doc, ours) ? ['positional-on-non-array-ignored'] : []),
          ...(positionalElemMatchPastScalar(filter, doc, ours, theirs) ? ['positional-elem-match-past-scalar'] : []),
        ];
        if (rules.length > 0) {
          tally.add(rules);
          continue;
        }
        const describe = (x: Doc | Error) => (x instanceof Error ? `error ${x.message}` : show(x));
        const message = `seed ${seed}: positional update ${show(update)} arrayFilters ${show(arrayFilters)} filter ${show(filter)} on ${show(doc)}: tetradb ${describe(ours)}, mingo ${describe(theirs)}`;
        if (process.env.TETRA_FUZZ_DISCOVER) {
          console.log(message);
          continue;
        }
        throw new Error(message);
      }
      expect(applied).toBeGreaterThan(350);
      expect(changed).toBeGreaterThan(200);
      if (process.env.TETRA_FUZZ_VERBOSE) console.log(`positional update excusals (seed ${seed}): ${show(Object.fromEntries(tally.counts))}; applied ${applied}, changed ${changed}`);
    });
  }
});
