// The workload of the in-process documents benchmark (docs.bench.ts): the operations, their
// arguments at each size (seeded, so every engine gets the same sequence), and the sample every
// engine answers before it is timed. The documents are lib/documents.ts makeQueryDocument(i).
import { seededRandom } from './dataset.js';
import { docEmail, docId, JOINED_SPAN_MS, JOINED_START_MS, makeQueryDocument, randomDocNumbers, type QueryDocument } from './documents.js';
import { checkOf, type SampleCheck } from './sql-workload.js';

export const COLLECTION = 'people';
export const BATCH_DOCS = 1000;
/** Fields with a secondary index in every engine that has indexes. */
export const INDEXED_FIELDS = ['email', 'joined'] as const;
/** Documents the indexed range query matches, on average, at any size. */
export const RANGE_DOCS = 100;
/** Documents the unindexed scan matches, exactly. */
export const SCAN_DOCS = 10;
/**
 * The limit of the multi-document finds: above what any of them matches, so no engine stops
 * early (tetradb's default of 100 would cut the range query short).
 */
export const FIND_LIMIT = 1000;
/** Arguments drawn per operation, cycled through by the timed loops. */
const PICKS = 65_536;
const CITIES = ['Amsterdam', 'Berlin', 'Cairo', 'Dublin', 'Helsinki', 'Lisbon', 'Montreal', 'Nairobi', 'Osaka', 'Porto', 'Santiago', 'Vienna'];

export type QueryName = 'find-id' | 'find-email' | 'find-range' | 'scan';
export type OpName = 'insertMany' | QueryName | `update-${number}` | 'replace' | 'positional' | 'aggregate';
export const QUERY_NAMES: readonly QueryName[] = ['find-id', 'find-email', 'find-range', 'scan'];

/** One call's arguments; every engine turns them into its own fastest idiomatic query. */
export type QueryArgs =
  | { name: 'find-id'; id: string }
  | { name: 'find-email'; email: string }
  /** `joined` between lo and hi, both included. */
  | { name: 'find-range'; lo: number; hi: number }
  /** `n` (no index anywhere) between lo and hi, both included. */
  | { name: 'scan'; lo: number; hi: number };

/** The MQL filter of a query, as tetradb, NeDB and mingo take it. */
export function mqlFilter(q: QueryArgs): Record<string, unknown> {
  switch (q.name) {
    case 'find-id':
      return { _id: q.id };
    case 'find-email':
      return { email: q.email };
    case 'find-range':
      return { joined: { $gte: q.lo, $lte: q.hi } };
    case 'scan':
      return { n: { $gte: q.lo, $lte: q.hi } };
    default: {
      const never: never = q;
      throw new Error(`unknown query ${JSON.stringify(never)}`);
    }
  }
}

/** The update of updateOne: a nested $set and an $inc, neither on an indexed field. */
export function mqlUpdate(city: string): Record<string, unknown> {
  return { $set: { 'profile.city': city }, $inc: { logins: 1 } };
}

export const OP_LABELS: Record<QueryName | 'insertMany', string> = {
  insertMany: `insertMany, batches of ${BATCH_DOCS} (docs/s)`,
  'find-id': 'find by _id',
  'find-email': 'find by email (indexed equality)',
  'find-range': `find joined in a range (indexed, ~${RANGE_DOCS} docs)`,
  scan: `find n in a range (unindexed scan, ${SCAN_DOCS} docs)`,
};

export function opLabel(op: OpName): string {
  if (op === 'replace') return 'replaceOne by _id (the whole document, city and logins changed), 1 caller';
  if (op === 'aggregate') return `aggregate: $match joined in a range (~${RANGE_DOCS * GROUP_RANGE_FACTOR} docs, indexed) + $group by city ($sum, $avg; peers without pipelines: find + reduce in JS)`;
  if (op === 'positional') return 'updateOne by _id, tags.$[t] with arrayFilters (peers without them: read, change, write back), 1 caller';
  if (op.startsWith('update-')) {
    const callers = Number(op.slice('update-'.length));
    return `updateOne by _id ($set + $inc), ${callers} caller${callers === 1 ? '' : 's'}`;
  }
  return OP_LABELS[op as QueryName | 'insertMany'];
}

/** The width of `joined` ranges that hold RANGE_DOCS of `size` documents on average. */
function rangeWidth(size: number): number {
  return Math.max(1, Math.round((JOINED_SPAN_MS * RANGE_DOCS) / size));
}

/** `count` calls of query `name` over `size` loaded documents, from `seed`. */
export function queryArgs(name: QueryName, size: number, count = PICKS, seed = 1): QueryArgs[] {
  switch (name) {
    case 'find-id':
      return randomDocNumbers(size, count, seed * 7 + size).map((i) => ({ name, id: docId(i) }));
    case 'find-email':
      return randomDocNumbers(size, count, seed * 11 + size).map((i) => ({ name, email: docEmail(i) }));
    case 'find-range': {
      const rand = seededRandom(seed * 13 + size);
      const width = rangeWidth(size);
      return Array.from({ length: count }, () => {
        const lo = JOINED_START_MS + Math.floor(rand() * (JOINED_SPAN_MS - width));
        return { name, lo, hi: lo + width - 1 };
      });
    }
    case 'scan':
      return randomDocNumbers(Math.max(1, size - SCAN_DOCS + 1), count, seed * 17 + size).map((lo) => ({ name, lo, hi: lo + SCAN_DOCS - 1 }));
    default: {
      const never: never = name;
      throw new Error(`unknown query ${String(never)}`);
    }
  }
}

/** `count` updates: the `_id` of a loaded document and the city it is set to. */
export function updateArgs(size: number, count = PICKS, seed = 5): Array<{ id: string; city: string }> {
  return randomDocNumbers(size, count, seed * 19 + size).map((i, k) => ({ id: docId(i), city: CITIES[k % CITIES.length]! }));
}

/**
 * `count` replacements: the `_id` of a loaded document and the document that replaces it (the
 * same fields, `_id` left out, with the changes updateArgs makes: another city, one more login),
 * so the indexed fields keep their values.
 */
export function replaceArgs(size: number, count = 4096, seed = 7): Array<{ id: string; doc: Omit<QueryDocument, '_id'> }> {
  return randomDocNumbers(size, count, seed * 23 + size).map((i, k) => {
    const { _id: _omitted, ...doc } = makeQueryDocument(i);
    return { id: docId(i), doc: { ...doc, profile: { ...doc.profile, city: CITIES[k % CITIES.length]! }, logins: doc.logins + 1 } };
  });
}

/** The tags of the benchmark documents (lib/documents.ts draws 2-4 of them per document). */
const TAGS = ['admin', 'beta', 'billing', 'churn-risk', 'enterprise', 'free', 'mobile', 'newsletter', 'partner', 'pro', 'support', 'trial', 'vip', 'web'];

/**
 * `count` positional updates: the `_id` of a loaded document and a tag every other tag of it
 * becomes (`{$set: {"tags.$[t]": tag}}` with arrayFilters `[{t: {$ne: tag}}]`). The tag changes
 * from one call to the next, so a repeated document is changed again, never left as it was.
 */
export function positionalArgs(size: number, count = PICKS, seed = 9): Array<{ id: string; tag: string }> {
  return randomDocNumbers(size, count, seed * 29 + size).map((i, k) => ({ id: docId(i), tag: TAGS[k % TAGS.length]! }));
}

/** The MQL update and arrayFilters of a positional update (tetradb and mingo take them as they are). */
export function positionalUpdate(tag: string): { update: Record<string, unknown>; arrayFilters: Array<Record<string, unknown>> } {
  return { update: { $set: { 'tags.$[t]': tag } }, arrayFilters: [{ t: { $ne: tag } }] };
}

/** How many times wider than the range query the aggregation's range is. */
const GROUP_RANGE_FACTOR = 10;

/** One aggregation call: `joined` between lo and hi, both included. */
export interface GroupArgs {
  lo: number;
  hi: number;
}

/** One group of the aggregation's answer. */
export interface CityGroup {
  _id: string;
  n: number;
  avgAge: number;
  logins: number;
}

/** `count` aggregation calls over `size` loaded documents. */
export function aggregateArgs(size: number, count = PICKS, seed = 3): GroupArgs[] {
  const rand = seededRandom(seed * 31 + size);
  const width = Math.min(JOINED_SPAN_MS, rangeWidth(size) * GROUP_RANGE_FACTOR);
  return Array.from({ length: count }, () => {
    const lo = JOINED_START_MS + Math.floor(rand() * (JOINED_SPAN_MS - width));
    return { lo, hi: lo + width - 1 };
  });
}

/** The aggregation as a pipeline (tetradb and mingo run it as it is). */
export function mqlAggregate(a: GroupArgs): Array<Record<string, unknown>> {
  return [{ $match: { joined: { $gte: a.lo, $lte: a.hi } } }, { $group: { _id: '$profile.city', n: { $sum: 1 }, avgAge: { $avg: '$profile.age' }, logins: { $sum: '$logins' } } }];
}

/** The same answer computed in JavaScript from the matching documents (for engines without pipelines). */
export function groupByCity(docs: ReadonlyArray<Pick<QueryDocument, 'profile' | 'logins'>>): CityGroup[] {
  const groups = new Map<string, { n: number; age: number; logins: number }>();
  for (const d of docs) {
    const g = groups.get(d.profile.city) ?? { n: 0, age: 0, logins: 0 };
    g.n++;
    g.age += d.profile.age;
    g.logins += d.logins;
    groups.set(d.profile.city, g);
  }
  return [...groups].map(([city, g]) => ({ _id: city, n: g.n, avgAge: g.age / g.n, logins: g.logins }));
}

/** Count and checksum of an aggregation's groups (in any order). */
export function checkOfGroups(a: GroupArgs, groups: readonly CityGroup[]): SampleCheck {
  return checkOf(`aggregate ${JSON.stringify(a)}`, groups.map((g) => [g._id, g.n, g.avgAge.toFixed(6), g.logins]), false);
}

/** The sample every engine answers before it is timed: a few calls of every query. */
export function sampleQueries(size: number): QueryArgs[] {
  const per: Record<QueryName, number> = { 'find-id': 8, 'find-email': 8, 'find-range': 6, scan: 3 };
  return QUERY_NAMES.flatMap((name) => queryArgs(name, size, per[name], 99));
}

/** Count and checksum of the `_id`s a query returned (in any order). */
export function checkOfDocs(q: QueryArgs, docs: ReadonlyArray<{ _id?: unknown }>): SampleCheck {
  return checkOf(`${q.name} ${JSON.stringify(q)}`, docs.map((d) => [String(d._id)]), false);
}
