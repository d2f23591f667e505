/**
 * Differential fuzzing of the document model's secondary indexes: a query answered through an
 * index must give exactly the answer a collection scan gives. Two collections of one store hold
 * the same documents; `plain` has only `_id`, `indexed` a varied set of indexes (single-field
 * ascending and descending, compound with mixed directions, multikey over arrays and arrays of
 * documents, unique, long strings whose keys are shortened, dates). Random filters, sorts,
 * skips and limits run on both; random writes (insertMany, updateOne/updateMany, deleteOne/
 * deleteMany, upserts) go to both and must report the same outcome; midway, indexes are built
 * from existing data while writes run, and one is dropped.
 *
 * How answers are compared: the plain collection's full sorted answer is the reference. A sort
 * that does not fix the order (ties) admits several correct answers, so each returned document
 * must be the reference's document with that `_id`, and the i-th one must belong to the same
 * tie group as the reference's i-th one; without a sort, every document is one group (a set
 * comparison when nothing is cut off by skip or limit). The indexed side must have used IXSCAN
 * (and served some sorts from an index) often enough that the test cannot pass by never using
 * an index.
 *
 * Replay a failure (its message starts with the seed):
 *   TETRA_FUZZ_SEED=<seed> npx vitest run test/fuzz/docs-index.fuzz.test.ts
 * TETRA_FUZZ_ROUNDS scales the campaign; TETRA_FUZZ_DISCOVER=1 logs every difference (and
 * copies the indexed collection over the plain one after a write that diverged) instead of
 * failing at the first, to list distinct bugs.
 */

import { describe, expect, it } from 'vitest';
import {
  compileSort,
  docsCount,
  docsCreateIndex,
  docsDelete,
  docsDropIndex,
  docsFind,
  docsInsert,
  docsReplace,
  docsUpdate,
  type Doc,
  type Written,
} from '../../engine/docs/index.js';
// Internals, for one structural check: the index trees against the keys their documents make.
import { docsTree, indexTree, readCollection } from '../../engine/docs/catalog.js';
import { decodeDocument } from '../../engine/docs/doc-codec.js';
import { documentKeys, entryKey, idComponent } from '../../engine/docs/index-key.js';
import { compileFilter } from '../../engine/docs/query/compile-filter.js';
import { isTetraError } from '../../engine/errors.js';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { randomInt, seededRandom } from '../helpers/random.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';

const SEEDS = process.env.TETRA_FUZZ_SEED ? [Number(process.env.TETRA_FUZZ_SEED)] : [101, 202];
const ROUNDS = Number(process.env.TETRA_FUZZ_ROUNDS ?? 12);
const QUERIES_PER_ROUND = 40;
const DISCOVER = process.env.TETRA_FUZZ_DISCOVER === '1';
// Below one chunk of updateMany (256): a multi-document write that fails does so before its only
// batch, on both sides alike, whatever order the two plans visit the documents in.
const MAX_DOCS = 240;
const INITIAL_DOCS = 180;

const PLAIN = 'plain';
const INDEXED = 'indexed';

type Rand = () => number;

const makeDir = dirsRemovedAfterEach();

// ---------------------------------------------------------------------------------------------
// Value domains: small, so that filters match; every type the index keys order.

const DATES = ['2020-01-01T00:00:00Z', '2021-06-01T12:00:00.000Z', '1969-12-31T23:59:59.999Z', '2030-01-01T00:00:00+02:00'];
const date = (rand: Rand): Doc => (rand() < 0.8 ? { $date: pick(rand, DATES) } : { $date: Date.parse(pick(rand, DATES).replace('+02:00', 'Z')) });

// Strings past 200 characters are indexed by a 200-character prefix: these share prefixes and
// differ after them (and around the cut: an astral character straddling it, or just before it).
const X200 = 'x'.repeat(200);
const LONG_STRINGS = [
  `${X200}a`,
  `${X200}b${'c'.repeat(40)}`,
  `${X200}${'a'.repeat(60)}`,
  'x'.repeat(230),
  `${'x'.repeat(199)}w${'z'.repeat(20)}`,
  `${'x'.repeat(150)}y${'x'.repeat(80)}`,
  `${'x'.repeat(198)}\u{1F600}q`,
  `${'x'.repeat(199)}\u{1F600}q`,
  X200,
];

// -0 equals 0; 'a\u0000' sorts between 'a' and 'ab' (the key codec escapes NUL); U+FF61 sorts
// below U+1F600 by code point but above it in UTF-16 units.
const SCALARS: readonly unknown[] = [0, 1, 2, -1, 1.5, 3, -0, 1e21, 'a', 'b', 'ab', 'B', '', 'a\u0000', '\uFF61', '\u{1F600}', true, false, null];

function pick<T>(rand: Rand, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)]!;
}

function scalar(rand: Rand): unknown {
  const r = rand();
  if (r < 0.12) return date(rand);
  if (r < 0.17) return pick(rand, LONG_STRINGS);
  return pick(rand, SCALARS);
}

function arrayOf(rand: Rand, max: number, item: () => unknown): unknown[] {
  return Array.from({ length: randomInt(rand, 0, max) }, item);
}

/** `a`: anything, often an array (multikey), sometimes with nested arrays or documents. */
function aValue(rand: Rand): unknown {
  const r = rand();
  if (r < 0.4) return scalar(rand);
  if (r < 0.85) {
    return arrayOf(rand, 4, () => {
      const q = rand();
      if (q < 0.85) return scalar(rand);
      if (q < 0.93) return [pick(rand, SCALARS), pick(rand, SCALARS)];
      return { x: scalar(rand) }; // with a long string, a document whose key is shortened
    });
  }
  return { x: pick(rand, SCALARS) };
}

/** `b`: never an array (it shares compound indexes with multikey fields). */
function bValue(rand: Rand): unknown {
  return rand() < 0.85 ? (rand() < 0.9 ? pick(rand, SCALARS) : date(rand)) : { x: pick(rand, [1, 2, 'a']) };
}

/** `c`: mostly small numbers, never an array, so indexes led by it can give a sort order. */
function cValue(rand: Rand): unknown {
  return rand() < 0.8 ? randomInt(rand, -2, 5) : pick(rand, [null, 'c', true, 1.5]);
}

function eValue(rand: Rand): unknown {
  return rand() < 0.85 ? pick(rand, [0, 1, 2, 'a', 'b', null, true]) : rand() < 0.5 ? date(rand) : [1, 2];
}

/** `d`: a document, an array of documents (for `d.e` / `d.f` multikey paths) or a scalar. */
function dValue(rand: Rand): unknown {
  const sub = (): Doc => {
    const o: Doc = {};
    if (rand() < 0.75) o['e'] = eValue(rand);
    if (rand() < 0.5) o['f'] = eValue(rand);
    return o;
  };
  const r = rand();
  if (r < 0.35) return sub();
  if (r < 0.85) return arrayOf(rand, 3, () => (rand() < 0.85 ? sub() : pick(rand, SCALARS)));
  return pick(rand, SCALARS);
}

function sValue(rand: Rand): unknown {
  return rand() < 0.7 ? pick(rand, LONG_STRINGS) : pick(rand, ['x', 'xy', 'y', 1, null]);
}

function tValue(rand: Rand): unknown {
  const r = rand();
  if (r < 0.55) return date(rand);
  if (r < 0.8) return arrayOf(rand, 3, () => (rand() < 0.85 ? date(rand) : pick(rand, SCALARS)));
  return pick(rand, SCALARS);
}

const FIELD_VALUES: Record<string, (rand: Rand) => unknown> = {
  a: aValue,
  b: bValue,
  c: cValue,
  d: dValue,
  s: sValue,
  t: tValue,
};

/** Fresh values for the unique field `u` and for `_id`s (numbers and strings: mixed types). */
class Ids {
  #nextId = 0;
  #nextU = 0;

  // Now and then a string past the 200 characters an index key keeps: ids and unique values that
  // share their shortened key and must still be told apart.
  id(rand: Rand): number | string {
    const n = this.#nextId++;
    const r = rand();
    return r < 0.75 ? n : r < 0.9 ? `id-${n}` : `${'i'.repeat(205)}-${n}`;
  }

  u(rand: Rand): number | string {
    const n = this.#nextU++;
    const r = rand();
    return r < 0.75 ? n * 3 : r < 0.9 ? `u${n}` : `${'u'.repeat(205)}${n}`;
  }
}

function randomDoc(rand: Rand, ids: Ids): Doc {
  const doc: Doc = { _id: ids.id(rand), u: ids.u(rand) };
  for (const [field, gen] of Object.entries(FIELD_VALUES)) if (rand() < 0.85) doc[field] = gen(rand);
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Filters

const PATHS = ['a', 'a', 'a', 'b', 'b', 'c', 'c', 'c', 'd', 'd.e', 'd.e', 'd.f', 's', 's', 't', 't', 'u', '_id', 'a.0', 'a.x'];

/** An operand drawn from what `path` holds, so conditions match a fair share of documents. */
function operand(rand: Rand, path: string, ids: { known: Array<string | number>; us: Array<string | number> }): unknown {
  switch (path) {
    case '_id':
      return rand() < 0.9 && ids.known.length > 0 ? pick(rand, ids.known) : pick(rand, [5, 'id-7', 1000]);
    case 'u':
      return rand() < 0.9 && ids.us.length > 0 ? pick(rand, ids.us) : pick(rand, [0, 'u1', 2]);
    case 'a':
    case 'a.0':
    case 'a.x':
      return rand() < 0.85 ? scalar(rand) : aValue(rand);
    case 'd':
      return dValue(rand);
    case 'd.e':
    case 'd.f':
      return eValue(rand);
    default:
      return FIELD_VALUES[path]!(rand);
  }
}

/** Two operands of one type, for ranges with both ends (ascending, or empty when reversed). */
function rangePair(rand: Rand, path: string, ids: { known: Array<string | number>; us: Array<string | number> }): [unknown, unknown] {
  const kind = pick(rand, ['number', 'string', 'date', 'long', 'any']);
  switch (kind) {
    case 'number':
      return [randomInt(rand, -2, 3) - 0.5 * randomInt(rand, 0, 1), randomInt(rand, -1, 5)];
    case 'string':
      return [pick(rand, ['', 'a', 'ab']), pick(rand, ['b', 'c', 'x', 'y'])];
    case 'date':
      return [date(rand), date(rand)];
    case 'long':
      return [pick(rand, LONG_STRINGS), pick(rand, LONG_STRINGS)];
    default:
      return [operand(rand, path, ids), operand(rand, path, ids)];
  }
}

function fieldExpression(rand: Rand, path: string, ids: { known: Array<string | number>; us: Array<string | number> }): unknown {
  const v = (): unknown => operand(rand, path, ids);
  switch (randomInt(rand, 0, 21)) {
    case 0:
    case 1:
      return v(); // implicit equality (with arrays, documents and null too)
    case 2:
      return { $eq: v() };
    case 3:
      return { $ne: v() };
    case 4:
    case 5:
      return { [pick(rand, ['$gt', '$gte', '$lt', '$lte'])]: v() };
    case 6:
    case 7:
    case 20:
    case 21: {
      // Both ends on one path: over an array field, each end may hold for a different element.
      const [lo, hi] = rangePair(rand, path, ids);
      return { [pick(rand, ['$gt', '$gte'])]: lo, [pick(rand, ['$lt', '$lte'])]: hi };
    }
    case 8:
    case 9:
      return { $in: arrayOf(rand, 3, v) };
    case 10:
      return { $nin: arrayOf(rand, 3, v) };
    case 11:
      return { $exists: rand() < 0.5 };
    case 12:
      return { $not: { [pick(rand, ['$gt', '$lte', '$eq'])]: v() } };
    case 13:
      return { $not: { $in: [v(), v()] } };
    case 14:
      return { $elemMatch: { [pick(rand, ['$gt', '$gte'])]: pick(rand, [0, 1, 'a']), [pick(rand, ['$lt', '$lte'])]: pick(rand, [2, 3, 'b']) } };
    case 15:
      return { $elemMatch: { [pick(rand, ['e', 'f'])]: eValue(rand) } };
    case 16:
      return { $size: randomInt(rand, 0, 3) };
    case 17:
      return { $type: pick(rand, ['number', 'string', 'array', 'object', 'null', 'bool', 'date', 'int', 'double']) };
    case 18:
      return { $regex: pick(rand, ['^x', '^a', 'b$', 'y', '^xx+a', 'q$']), ...(rand() < 0.3 ? { $options: 'i' } : {}) };
    default:
      return { $eq: null };
  }
}

/**
 * An `$expr` equality (`$in`, comparison) of an indexed path with a value, which the planner reads as bounds
 * (query/expr-bounds.ts): with arrays, documents, null and dates among the values, and multikey,
 * sparse and partial indexes on the paths, the bounds must hold every document the `$expr` matches.
 * Not `_id`: the plain collection would read the same bounds, and compare nothing.
 */
function exprEquality(rand: Rand, ids: { known: Array<string | number>; us: Array<string | number> }): Doc {
  const one = (): Doc => {
    const path = pick(rand, ['a', 'b', 'c', 'd', 'd.e', 'd.f', 's', 't', 'u', 'a.x']);
    const field = `$${path}`;
    const value = (): unknown => ({ $literal: operand(rand, path, ids) });
    if (rand() < 0.25) return { $in: [field, { $literal: arrayOf(rand, 3, () => operand(rand, path, ids)) }] };
    // A comparison is a range over every type above or below the value (not on multikey indexes).
    const op = rand() < 0.4 ? '$eq' : pick(rand, ['$gt', '$gte', '$lt', '$lte']);
    return { [op]: rand() < 0.5 ? [field, value()] : [value(), field] };
  };
  return rand() < 0.25 ? { $and: [one(), one()] } : one();
}

function randomFilter(rand: Rand, ids: { known: Array<string | number>; us: Array<string | number> }, depth = 0): Doc {
  const filter: Doc = {};
  const n = randomInt(rand, 1, 3);
  for (let i = 0; i < n; i++) {
    const r = rand();
    if (depth === 0 && r < 0.06 && filter['$expr'] === undefined) {
      filter['$expr'] = exprEquality(rand, ids);
    } else if (depth === 0 && r < 0.14) {
      // The same path twice under $and: the planner merges both into one set of bounds.
      const path = pick(rand, ['a', 'c', 'd.e', 's', 't']);
      filter['$and'] = [{ [path]: fieldExpression(rand, path, ids) }, { [path]: fieldExpression(rand, path, ids) }];
    } else if (depth < 2 && r < 0.2) {
      filter[pick(rand, ['$and', '$or', '$nor'])] = Array.from({ length: randomInt(rand, 1, 3) }, () => randomFilter(rand, ids, depth + 1));
    } else {
      const path = pick(rand, PATHS);
      filter[path] = fieldExpression(rand, path, ids);
    }
  }
  return filter;
}

// Sorts an index can give (in either direction), and random ones.
const INDEX_SORTS: readonly Doc[] = [{ c: -1 }, { c: 1 }, { b: 1, c: -1 }, { b: -1, c: 1 }, { b: 1 }, { u: 1 }, { u: -1 }, { t: -1 }, { s: 1 }, { 'd.e': 1 }];
const SORT_PATHS = ['a', 'b', 'c', 'd.e', 'd.f', 's', 't', 'u', '_id'];

function randomSort(rand: Rand): Doc | undefined {
  const r = rand();
  if (r < 0.25) return undefined;
  let spec: Doc;
  if (r < 0.6) {
    spec = { ...pick(rand, INDEX_SORTS) };
  } else {
    spec = {};
    const n = randomInt(rand, 1, 3);
    for (let i = 0; i < n; i++) spec[pick(rand, SORT_PATHS)] = pick(rand, [1, -1]);
  }
  if (rand() < 0.35 && !Object.hasOwn(spec, '_id')) spec['_id'] = pick(rand, [1, -1]);
  return spec;
}

// ---------------------------------------------------------------------------------------------
// Writes

const UPDATE_PATHS = ['a', 'b', 'c', 'd.e', 'd.f', 's', 't'];

/** An update of indexed fields (never `u`, whose uniqueness the generators keep by construction). */
function randomUpdate(rand: Rand): Doc {
  const update: Doc = {};
  const taken = new Set<string>();
  const n = randomInt(rand, 1, 2);
  for (let i = 0; i < n; i++) {
    const path = pick(rand, UPDATE_PATHS);
    if (taken.has(path) || [...taken].some((t) => t.startsWith(`${path}.`) || path.startsWith(`${t}.`))) continue;
    taken.add(path);
    const op = pick(rand, ['$set', '$set', '$unset', '$inc', '$push', '$pull']);
    let value: unknown;
    switch (op) {
      case '$set':
        value = path === 'b' || path === 'c' ? FIELD_VALUES[path]!(rand) : path.startsWith('d.') ? eValue(rand) : FIELD_VALUES[path]!(rand);
        break;
      case '$unset':
        value = '';
        break;
      case '$inc':
        value = pick(rand, [1, -1, 2, 0.5]);
        break;
      case '$push':
        // b and c never become arrays (see their generators); a push to them would be refused
        // alike on both sides, but keep the generators' promise simple.
        if (path === 'b' || path === 'c') continue;
        value = rand() < 0.7 ? scalar(rand) : { $each: [scalar(rand), scalar(rand)] };
        break;
      default:
        value = rand() < 0.6 ? scalar(rand) : { [pick(rand, ['$gt', '$lte'])]: pick(rand, [0, 1, 'a']) };
    }
    ((update[op] ??= {}) as Doc)[path] = value;
  }
  if (Object.keys(update).length === 0) update['$set'] = { c: cValue(rand) };
  return update;
}

/** An update of elements of `a` (scalars), `d` (documents: `d.e`, `d.f`) or `t` (dates) by `$`, `$[]` or `$[x]`. */
function randomPositionalUpdate(rand: Rand, ids: { known: Array<string | number>; us: Array<string | number> }): { filter: Doc; update: Doc; arrayFilters: Doc[] | undefined } {
  const form = pick(rand, ['$', '$[]', '$[x]']);
  const field = pick(rand, ['a', 'd', 'd', 't']);
  const sub = field === 'd' ? `.${pick(rand, ['e', 'f'])}` : '';
  const value = (): unknown => (field === 'd' ? eValue(rand) : field === 't' ? date(rand) : scalar(rand));
  // Mostly documents where the field is an array: `$[]` and `$[x]` refuse the others (on both sides).
  let filter: Doc = rand() < 0.8 ? { [field]: { $type: 'array' } } : {};
  if (rand() < 0.3) filter = { $and: [filter, randomFilter(rand, ids)] };
  let arrayFilters: Doc[] | undefined;
  let path: string;
  if (form === '$') {
    // `$` takes its element from a condition on the array, so the filter has one.
    filter = { $and: [filter, { [field === 'd' ? `d${sub}` : field]: field === 'd' ? eValue(rand) : value() }] };
    path = `${field}.$${sub}`;
  } else if (form === '$[]') {
    path = `${field}.$[]${sub}`;
  } else {
    arrayFilters = [field === 'd' ? { [`x${sub}`]: eValue(rand) } : { x: value() }];
    path = `${field}.$[x]${sub}`;
  }
  const op = pick(rand, ['$set', '$set', '$unset', '$inc', '$max']);
  const update: Doc = { [op]: { [path]: op === '$inc' ? 1 : op === '$unset' ? '' : value() } };
  return { filter, update, arrayFilters };
}

// ---------------------------------------------------------------------------------------------
// Comparison

/** A canonical string of a stored value: Dates tagged, field order kept (BSON keeps it). */
function canon(v: unknown): string {
  return JSON.stringify(v, function (this: Record<string, unknown>, key: string) {
    const raw = this[key];
    return raw instanceof Date ? { $date: raw.getTime() } : raw;
  });
}

/** For messages: runs of one character are abbreviated (`x*200`), long texts cut. */
function show(v: unknown): string {
  const s = canon(v).replace(/(.)\1{19,}/gu, (run, c: string) => `${c}*${[...run].length}`);
  return s.length > 1500 ? `${s.slice(0, 1500)}...` : s;
}

function idOf(doc: Doc): string {
  return canon(doc['_id']);
}

type Outcome = { ok: true; value: unknown } | { ok: false; code: string; message: string };

async function outcomeOf(fn: () => Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: true, value: await fn() };
  } catch (err) {
    if (!isTetraError(err)) throw err; // a crash is never an acceptable answer
    return { ok: false, code: err.code, message: err.message };
  }
}

function sameOutcome(a: Outcome, b: Outcome): boolean {
  if (a.ok !== b.ok) return false;
  if (!a.ok || !b.ok) return !a.ok && !b.ok && a.code === b.code;
  return canon(a.value) === canon(b.value);
}

function describeOutcome(o: Outcome): string {
  const text = o.ok ? show(o.value) : `${o.code}: ${o.message}`;
  return text.length > 400 ? `${text.slice(0, 400)}...` : text;
}

/**
 * Every built index of `collection` holds exactly the entries its documents make, each naming
 * its document, and is flagged multikey / lossy when a document made it so: a stale entry is
 * invisible to queries (every candidate is filtered again), so the differential alone would
 * miss it. Returns what is wrong, or undefined.
 */
function indexEntriesMismatch(store: TenantStore, collection: string): string | undefined {
  const info = readCollection(store, collection);
  if (info === undefined) return `collection ${collection} is missing`;
  const docs = [...store.scan(docsTree(info))].map(([pk, raw]) => ({ pk: pk.toString('latin1'), doc: decodeDocument(raw) }));
  for (const index of info.indexes) {
    if ((index as { building?: boolean }).building === true) continue;
    const want = new Map<string, string>();
    // A sparse index holds the documents with one of its fields, a partial one those its filter matches.
    const spec = index.partialFilterExpression ?? (index.sparse === true ? { $or: index.fields.map((f) => ({ [f.path]: { $exists: true } })) } : undefined);
    const member = spec === undefined ? undefined : compileFilter(spec);
    for (const { pk, doc } of docs) {
      if (member !== undefined && !member.test(doc)) continue;
      const keys = documentKeys(doc, index.fields);
      if (keys.multikey && !index.multikey) return `index ${index.name} is not flagged multikey, but ${show(doc)} makes it so`;
      if (keys.lossy && !index.lossy) return `index ${index.name} is not flagged lossy, but ${show(doc)} makes it so`;
      // Ids are whole in keys; a unique entry carries the id only when its key shortens a value.
      const idPart = idComponent(doc['_id']).part;
      keys.entries.forEach((parts, e) => want.set(entryKey(parts, index.unique && keys.wholes[e] === undefined ? undefined : idPart).toString('latin1'), pk));
    }
    let entries = 0;
    for (const [key, value] of store.scan(indexTree(info, index))) {
      entries++;
      const pk = want.get(key.toString('latin1'));
      if (pk === undefined) return `index ${index.name} holds an entry no document makes (for ${show(documentNamed(value, docs))})`;
      if (pk !== value.toString('latin1')) return `index ${index.name} has an entry naming the wrong document`;
    }
    if (entries !== want.size) return `index ${index.name} holds ${entries} entries, its documents make ${want.size}`;
  }
  return undefined;
}

function documentNamed(pk: Buffer, docs: ReadonlyArray<{ pk: string; doc: Doc }>): unknown {
  return docs.find((d) => d.pk === pk.toString('latin1'))?.doc ?? 'a document that is gone';
}

interface Stats {
  queries: number;
  errors: number;
  matched: number;
  stages: Map<string, number>;
  sortedByIndex: number;
  writes: number;
  failedWrites: number;
  differences: string[];
  /** Index entries merged from their deltas into the index trees during the run. */
  merged: number;
}

// ---------------------------------------------------------------------------------------------

/**
 * The indexes of a run: `full` indexes hold every document; `sparse-partial` ones are sparse or
 * partial (on the same paths), which a plan may read only when the query implies they hold every
 * document it can match: a wrong implication shows as a missing answer.
 */
type Variant = 'full' | 'sparse-partial';

const INDEX_SETS: Record<Variant, { initial: Array<[Doc, Doc]>; late: Array<[Doc, Doc]> }> = {
  full: {
    initial: [
      [{ a: 1 }, {}],
      [{ c: -1 }, {}],
      [{ b: 1, c: -1 }, {}],
      [{ 'd.e': 1 }, {}],
      [{ 'd.e': -1, c: 1 }, {}],
      [{ u: 1 }, { unique: true }],
      [{ s: 1 }, {}],
      [{ t: -1 }, {}],
    ],
    late: [
      [{ b: -1 }, {}],
      [{ c: 1, a: -1 }, {}],
      [{ 'd.f': 1, b: 1 }, {}],
      [{ s: -1, c: 1 }, {}],
    ],
  },
  'sparse-partial': {
    initial: [
      [{ a: 1 }, { sparse: true }],
      [{ c: -1 }, { partialFilterExpression: { c: { $gte: 1 } } }],
      [{ b: 1, c: -1 }, { partialFilterExpression: { b: { $exists: true }, c: { $type: 'number' } } }],
      [{ 'd.e': 1 }, { sparse: true }],
      [{ 'd.e': -1, c: 1 }, { partialFilterExpression: { $or: [{ c: { $lt: 0 } }, { c: { $in: [2, 3] } }] } }],
      [{ u: 1 }, { unique: true, partialFilterExpression: { u: { $exists: true } } }],
      [{ s: 1 }, { partialFilterExpression: { s: { $type: 'string' } } }],
      [{ t: -1 }, { partialFilterExpression: { t: { $gt: { $date: '2000-01-01T00:00:00Z' } } } }],
    ],
    late: [
      [{ b: -1 }, { sparse: true }],
      [{ c: 1, a: -1 }, { partialFilterExpression: { a: { $exists: true } } }],
      [{ 'd.f': 1, b: 1 }, { sparse: true }],
      [{ s: -1, c: 1 }, { partialFilterExpression: { c: { $lte: 2 }, s: { $exists: true } } }],
    ],
  },
};

async function runSeed(seed: number, variant: Variant = 'full'): Promise<Stats> {
  const rand = seededRandom(seed);
  // Index deltas merged every few dozen entries (engine/storage/buffered-tree.ts): the indexes are read merged and unmerged.
  const store = await TenantStore.open(makeDir('docs-index-fuzz'), { cache: new PageCache<TreeNode>(16 * 1024 * 1024), fsync: 'off', checkpointIntervalMs: 0, deltaMergeMin: 16, bufferFromEntries: 24 });
  const stats: Stats = { queries: 0, errors: 0, matched: 0, stages: new Map(), sortedByIndex: 0, writes: 0, failedWrites: 0, differences: [], merged: 0 };
  const ids = new Ids();
  const live = { known: [] as Array<string | number>, us: [] as Array<string | number> };
  let step = 'setup';

  const differ = (message: string): void => {
    const full = `seed ${seed}, ${step}: ${message}`;
    if (!DISCOVER) throw new Error(full);
    stats.differences.push(full);
    console.log(full);
  };

  /** Refreshes the ids and unique keys queries draw from (from the plain side). */
  const refreshKnown = async (): Promise<void> => {
    const all = (await docsFind(store, PLAIN, { limit: 10_000, projection: { u: 1 } })).documents;
    live.known = all.map((d) => d['_id'] as string | number);
    live.us = all.map((d) => d['u'] as string | number).filter((u) => u !== undefined);
  };

  /** Discover mode only: after a diverging write, make plain a copy of indexed again. */
  const resync = async (): Promise<void> => {
    const docs = (await docsFind(store, INDEXED, { limit: 10_000 })).documents;
    await (await docsDelete(store, PLAIN, {}, { multi: true })).durable;
    if (docs.length > 0) await docsInsert(store, PLAIN, docs.map((d) => JSON.parse(canon(d)) as Doc)).durable;
  };

  /** Runs one write on both collections; both must answer alike. */
  const write = async (label: string, run: (collection: string) => Promise<Written<unknown>> | Written<unknown>): Promise<void> => {
    stats.writes++;
    const durable: Array<Promise<void>> = [];
    const on = (collection: string) =>
      outcomeOf(async () => {
        const w = await run(collection);
        durable.push(w.durable);
        return w.result;
      });
    const plain = await on(PLAIN);
    const indexed = await on(INDEXED);
    await Promise.all(durable);
    if (!plain.ok) stats.failedWrites++;
    if (!sameOutcome(plain, indexed)) {
      differ(`${label}: collection scan ${describeOutcome(plain)}, with indexes ${describeOutcome(indexed)}`);
      await resync();
    }
  };

  const query = async (): Promise<void> => {
    const filter = randomFilter(rand, live);
    const sortSpec = randomSort(rand);
    const skip = rand() < 0.75 ? 0 : randomInt(rand, 1, 20);
    const limit = pick(rand, [undefined, 1, 3, 10, 25, 10_000]);
    const what = `find ${show({ filter, sort: sortSpec, skip, limit })}`;
    stats.queries++;

    const reference = await outcomeOf(() => docsFind(store, PLAIN, { filter, sort: sortSpec, limit: 10_000, explain: true }));
    const plain = await outcomeOf(() => docsFind(store, PLAIN, { filter, sort: sortSpec, skip, limit }));
    const indexed = await outcomeOf(() => docsFind(store, INDEXED, { filter, sort: sortSpec, skip, limit, explain: true }));
    if (!reference.ok || !plain.ok || !indexed.ok) {
      // A refused query (a malformed $regex, say) must be refused alike.
      stats.errors++;
      if (reference.ok || plain.ok || indexed.ok || reference.code !== indexed.code) {
        differ(`${what}: collection scan ${describeOutcome(reference)}, with skip/limit ${describeOutcome(plain)}, with indexes ${describeOutcome(indexed)}`);
      }
      return;
    }
    const full = (reference.value as { documents: Doc[]; explain: Record<string, unknown> });
    const refPlan = (full.explain['plan'] as { stage: string }).stage;
    if (refPlan === 'IXSCAN') differ(`${what}: the plain collection used an index`);
    const sort = compileSort(sortSpec ?? {});
    // Tie groups of the reference: consecutive documents the sort cannot tell apart.
    const group = new Map<string, { doc: string; group: number }>();
    let g = 0;
    for (let i = 0; i < full.documents.length; i++) {
      const doc = full.documents[i]!;
      if (i > 0) {
        const c = sort.compare(full.documents[i - 1], doc);
        if (c > 0) differ(`${what}: the collection scan's answer is out of order at ${i}`);
        if (c !== 0) g++;
      }
      group.set(idOf(doc), { doc: canon(doc), group: g });
    }
    stats.matched += full.documents.length;
    const window = full.documents.slice(skip, skip + (limit ?? 100));

    const check = (side: string, docs: Doc[]): void => {
      if (docs.length !== window.length) {
        differ(`${what}: ${side} returned ${docs.length} documents, expected ${window.length} (of ${full.documents.length} matches)\n  ids ${show(docs.map((d) => d['_id']))}\n  expected ${show(window.map((d) => d['_id']))}`);
        return;
      }
      const seen = new Set<string>();
      for (let i = 0; i < docs.length; i++) {
        const id = idOf(docs[i]!);
        const ref = group.get(id);
        if (seen.has(id)) return differ(`${what}: ${side} returned _id ${id} twice`);
        seen.add(id);
        if (ref === undefined) return differ(`${what}: ${side} returned ${show(docs[i])}, which does not match (expected ids ${show(window.map((d) => d['_id']))})`);
        if (ref.doc !== canon(docs[i])) return differ(`${what}: ${side} returned ${show(docs[i])}, stored as ${ref.doc}`);
        const want = group.get(idOf(window[i]!))!.group;
        if (ref.group !== want) {
          return differ(`${what}: ${side} has _id ${id} at position ${i}, where the sort puts ${idOf(window[i]!)}\n  got ${show(docs.map((d) => d['_id']))}\n  expected ${show(window.map((d) => d['_id']))}`);
        }
      }
    };
    check('the collection scan with skip/limit', (plain.value as { documents: Doc[] }).documents);
    const answer = indexed.value as { documents: Doc[]; explain: Record<string, unknown> };
    const plan = answer.explain['plan'] as { stage: string; indexName?: string };
    stats.stages.set(plan.stage, (stats.stages.get(plan.stage) ?? 0) + 1);
    if (sortSpec !== undefined && answer.explain['inMemorySort'] === false && plan.stage === 'IXSCAN') stats.sortedByIndex++;
    const beforeDifferences = stats.differences.length;
    check(`the indexed collection (${plan.stage}${plan.indexName ? ` ${plan.indexName}` : ''}, in-memory sort ${String(answer.explain['inMemorySort'])})`, answer.documents);

    // Counting takes the same plans.
    if (stats.differences.length === beforeDifferences) {
      const expectedCount = Math.min(limit ?? Number.MAX_SAFE_INTEGER, Math.max(0, full.documents.length - skip));
      const countOptions = { filter, skip, ...(limit === undefined ? {} : { limit }) };
      const counts = [await docsCount(store, PLAIN, countOptions), await docsCount(store, INDEXED, countOptions)];
      if (counts[0] !== expectedCount || counts[1] !== expectedCount) differ(`count ${show(countOptions)}: collection scan ${counts[0]}, with indexes ${counts[1]}, expected ${expectedCount}`);
    }
  };

  const writeRound = async (): Promise<void> => {
    await refreshKnown();
    const ops = randomInt(rand, 3, 7);
    for (let i = 0; i < ops; i++) {
      const kind = pick(rand, ['insertMany', 'insertMany', 'updateOne', 'updateOne', 'moveUnique', 'updateMany', 'updateMany', 'positional', 'upsert', 'replaceOne', 'replaceOne', 'deleteOne', 'deleteMany']);
      step = `write ${kind}`;
      switch (kind) {
        case 'insertMany': {
          if (live.known.length >= MAX_DOCS) break;
          const docs = Array.from({ length: randomInt(rand, 1, 6) }, () => randomDoc(rand, ids));
          // Now and then a repeated _id: refused on both sides, all or nothing.
          if (rand() < 0.1 && live.known.length > 0) docs.push({ ...randomDoc(rand, ids), _id: pick(rand, live.known) });
          await write(`insertMany ${show(docs)}`, (c) => docsInsert(store, c, docs.map((d) => structuredClone(d))));
          break;
        }
        case 'updateOne': {
          // By _id (or by the unique u), so "the first match" is the same document on both sides.
          const by: Doc = rand() < 0.6 ? { _id: operand(rand, '_id', live) } : { u: operand(rand, 'u', live) };
          const filter = rand() < 0.5 ? by : { ...randomFilter(rand, live), ...by };
          const update = randomUpdate(rand);
          await write(`updateOne ${show(filter)} ${show(update)}`, (c) => docsUpdate(store, c, filter, update, { multi: false }));
          break;
        }
        case 'moveUnique': {
          const filter = { u: operand(rand, 'u', live) };
          const update = { $set: { u: ids.u(rand) } };
          await write(`updateOne ${show(filter)} ${show(update)}`, (c) => docsUpdate(store, c, filter, update, { multi: false }));
          break;
        }
        case 'updateMany': {
          const filter = randomFilter(rand, live);
          const update = randomUpdate(rand);
          await write(`updateMany ${show(filter)} ${show(update)}`, (c) => docsUpdate(store, c, filter, update, { multi: true }));
          break;
        }
        case 'positional': {
          // Array elements of the multikey fields changed in place: the index entries of the
          // elements changed must go and the new ones come, as the scan side sees them.
          const { filter, update, arrayFilters } = randomPositionalUpdate(rand, live);
          await write(`updateMany ${show(filter)} ${show(update)} arrayFilters ${arrayFilters === undefined ? 'none' : show(arrayFilters)}`, (c) => docsUpdate(store, c, filter, update, { multi: true, arrayFilters }));
          break;
        }
        case 'upsert': {
          if (live.known.length >= MAX_DOCS) break;
          const filter = { _id: ids.id(rand), u: ids.u(rand) };
          const update = randomUpdate(rand);
          await write(`upsert ${show(filter)} ${show(update)}`, (c) => docsUpdate(store, c, filter, update, { multi: false, upsert: true }));
          break;
        }
        case 'replaceOne': {
          // A whole new document (its unique u and indexed fields included) for the first match,
          // by _id or u as updateOne's; an upsert names its _id, so both sides insert the same one.
          const replacement = randomDoc(rand, ids);
          if (rand() < 0.85) delete replacement['_id'];
          const upsert = rand() < 0.3 && live.known.length < MAX_DOCS;
          const by: Doc = upsert ? { _id: ids.id(rand) } : rand() < 0.6 ? { _id: operand(rand, '_id', live) } : { u: operand(rand, 'u', live) };
          const filter = rand() < 0.5 ? by : { ...randomFilter(rand, live), ...by };
          await write(`replaceOne ${show(filter)} ${show(replacement)}${upsert ? ' upsert' : ''}`, (c) => docsReplace(store, c, filter, structuredClone(replacement), { upsert }));
          break;
        }
        case 'deleteOne': {
          // By _id or the unique u, so "the first match" is one document whatever the plan: the random
          // filter's own u (a range, say) must not replace the equality (it did: seed 9101 deleted
          // the first match in _id order on one side and in u order on the other).
          let filter: Doc;
          if (rand() < 0.5) filter = { _id: operand(rand, '_id', live) };
          else {
            const u = operand(rand, 'u', live);
            filter = { ...randomFilter(rand, live), u };
          }
          await write(`deleteOne ${show(filter)}`, (c) => docsDelete(store, c, filter, { multi: false }));
          break;
        }
        default: {
          const filter = randomFilter(rand, live);
          // Keep the collection populated: wide deletes are skipped (inserts add ~4 per round).
          const n = await docsCount(store, PLAIN, { filter }).catch(() => 0);
          if (n > 12) break;
          await write(`deleteMany ${show(filter)}`, (c) => docsDelete(store, c, filter, { multi: true }));
        }
      }
    }
    await refreshKnown();
  };

  try {
    // The first indexes exist before any data; writes maintain them.
    const initial = INDEX_SETS[variant].initial;
    for (const [keys, options] of initial) await (await docsCreateIndex(store, INDEXED, keys, options)).durable;
    step = 'initial insert';
    const docs = Array.from({ length: INITIAL_DOCS }, () => randomDoc(rand, ids));
    await write('initial insertMany', (c) => docsInsert(store, c, docs.map((d) => structuredClone(d))));
    await refreshKnown();

    // Built from data while a round of writes runs, at a third and at two thirds of the run.
    const late = [...INDEX_SETS[variant].late];
    for (let round = 0; round < ROUNDS; round++) {
      for (let q = 0; q < QUERIES_PER_ROUND; q++) {
        step = `round ${round} query ${q}`;
        await query();
      }
      if (round === Math.floor(ROUNDS / 3) || round === Math.floor((2 * ROUNDS) / 3)) {
        const builds = late.splice(0, 2).map(([keys, options]) => ({
          keys,
          outcome: outcomeOf(async () => {
            const w = await docsCreateIndex(store, INDEXED, keys, options);
            await w.durable;
            return w.result;
          }),
        }));
        await writeRound();
        step = `round ${round} index builds`;
        for (const b of builds) {
          const outcome = await b.outcome;
          if (!outcome.ok) differ(`createIndex ${show(b.keys)} over the data failed: ${describeOutcome(outcome)}`);
        }
      } else if (round === Math.floor(ROUNDS / 2)) {
        await docsDropIndex(store, INDEXED, 't_-1').durable;
        await writeRound();
      } else {
        await writeRound();
      }
      step = `round ${round} index entries`;
      const wrong = indexEntriesMismatch(store, INDEXED);
      if (wrong !== undefined) differ(wrong);
    }
    stats.merged = store.stats().mergedEntries;
    return stats;
  } finally {
    await store.close();
  }
}

describe('secondary indexes never change an answer', () => {
  for (const seed of SEEDS) {
    it(`queries agree with and without indexes, across writes and index builds (seed ${seed})`, async () => {
      const stats = await runSeed(seed);
      const summary = `seed ${seed}: ${stats.queries} queries (${stats.errors} refused alike, ${stats.matched} matches in all), plans ${show(Object.fromEntries(stats.stages))}, ${stats.sortedByIndex} sorts served by an index, ${stats.writes} writes (${stats.failedWrites} refused alike)`;
      if (DISCOVER || process.env.TETRA_FUZZ_VERBOSE) console.log(summary);
      expect(stats.differences, summary).toEqual([]);
      // The campaign exercised the indexes: a good share of the plans read one, some sorts came
      // from index order, and the filters matched documents.
      expect(stats.stages.get('IXSCAN') ?? 0, summary).toBeGreaterThan(stats.queries * 0.25);
      expect(stats.sortedByIndex, summary).toBeGreaterThan(10);
      expect(stats.matched, summary).toBeGreaterThan(stats.queries * 5);
      expect(stats.writes - stats.failedWrites, summary).toBeGreaterThan(ROUNDS * 2);
      // Queries read the indexes with entries both merged into them and still in their deltas.
      expect(stats.merged, summary).toBeGreaterThan(100);
    }, 120_000);
  }
});

describe('sparse and partial indexes never change an answer', () => {
  for (const seed of SEEDS) {
    it(`queries agree with and without sparse and partial indexes, across writes and index builds (seed ${seed})`, async () => {
      const stats = await runSeed(seed + 7, 'sparse-partial');
      const summary = `seed ${seed + 7}: ${stats.queries} queries (${stats.errors} refused alike, ${stats.matched} matches in all), plans ${show(Object.fromEntries(stats.stages))}, ${stats.sortedByIndex} sorts served by an index, ${stats.writes} writes (${stats.failedWrites} refused alike)`;
      if (DISCOVER || process.env.TETRA_FUZZ_VERBOSE) console.log(summary);
      expect(stats.differences, summary).toEqual([]);
      // Queries that imply an index's filter read it: enough of them that a planner never using
      // these indexes (or always using them) could not pass.
      expect(stats.stages.get('IXSCAN') ?? 0, summary).toBeGreaterThan(stats.queries * 0.1);
      expect(stats.stages.get('COLLSCAN') ?? 0, summary).toBeGreaterThan(stats.queries * 0.1);
      expect(stats.matched, summary).toBeGreaterThan(stats.queries * 5);
    }, 120_000);
  }
});
