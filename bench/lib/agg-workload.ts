// The workload of the aggregation benchmark (aggregate.bench.ts): thirteen pipelines over the
// documents of the other document benchmarks (lib/documents.ts makeQueryDocument), each written
// twice: in MQL, which tetradb and mingo run as it is, and in SQL over a JSONB table, which PGlite
// and PostgreSQL run. The SQL is what a PostgreSQL user would write for the same answer (GROUP BY,
// a window function, jsonb_array_elements_text for $unwind, a join for $lookup, INSERT ... ON
// CONFLICT for $merge, TRUNCATE + INSERT ... SELECT for $out). Every answer is reduced to rows of
// the same values in the same order (`row`), so any two engines' answers compare as checksums.
import { CITIES, docId, JOINED_SPAN_MS, JOINED_START_MS, randomDocNumbers } from './documents.js';
import { aggregateArgs, COLLECTION, mqlAggregate } from './docs-workload.js';
import { checkOf, type SampleCheck } from './sql-workload.js';

/** A document or result row, as every engine hands it back (JSON values). */
export type Doc = Record<string, unknown>;

export const CITIES_COLLECTION = 'cities';
/** The collections the write pipelines replace or merge into. */
export const MERGE_TARGET = 'city_totals';
export const OUT_TARGET = 'recent';
export type WriteTarget = typeof MERGE_TARGET | typeof OUT_TARGET;

/** The country of each city of `profile.city` (Lisbon and Porto share one, so the join's $group merges two cities). */
const COUNTRIES: Record<string, string> = {
  Amsterdam: 'Netherlands',
  Berlin: 'Germany',
  Cairo: 'Egypt',
  Dublin: 'Ireland',
  Helsinki: 'Finland',
  Lisbon: 'Portugal',
  Montreal: 'Canada',
  Nairobi: 'Kenya',
  Osaka: 'Japan',
  Porto: 'Portugal',
  Santiago: 'Chile',
  Vienna: 'Austria',
};

/** The `cities` collection $lookup joins: one document per city, `name` the joined field. */
export function cityDocuments(): Doc[] {
  return CITIES.map((name) => {
    const country = COUNTRIES[name];
    if (country === undefined) throw new Error(`no country for ${name}: COUNTRIES must cover lib/documents.ts CITIES`);
    return { _id: `city-${name.toLowerCase()}`, name, country };
  });
}

/** The lower bounds of $bucket's age buckets, and the last bucket's upper bound (ages are 18 to 77). */
const AGE_BOUNDARIES = [18, 25, 35, 45, 55, 65, 78];
/** How many documents the top-k pipeline keeps. */
const TOP_K = 10;
/** How many documents the window pipeline's $match keeps (its answer stays small at any size). */
const WINDOW_IDS = 8;
/** The share of the documents the $out pipeline writes: the last 1% of the `joined` span. */
const OUT_SHARE = 0.01;

export type PipelineName = 'match-group' | 'group-age' | 'top-k' | 'unwind-group' | 'window' | 'lookup' | 'lookup-let' | 'lookup-self' | 'lookup-range' | 'bucket' | 'merge' | 'out' | 'group-email' | 'sort-half';
export const PIPELINE_NAMES: readonly PipelineName[] = ['match-group', 'group-age', 'top-k', 'unwind-group', 'window', 'lookup', 'lookup-let', 'lookup-self', 'lookup-range', 'bucket', 'merge', 'out', 'group-email', 'sort-half'];

/** The SQL engines' tables, by role (the shared PostgreSQL server's names carry a per-run prefix). */
export interface SqlTables {
  people: string;
  cities: string;
  [MERGE_TARGET]: string;
  [OUT_TARGET]: string;
}

/** One call of a pipeline: the MQL pipeline and the parameters of its SQL ($1, $2, ...). */
export interface AggCall {
  pipeline: Doc[];
  params: unknown[];
}

export interface AggPipeline {
  name: PipelineName;
  /** What the tables call it. */
  label: string;
  /** The collection a write pipeline replaces or merges into: its answer is that collection read back. */
  target?: WriteTarget;
  /** Whether the answer's order is part of it ($sort); else rows compare as a set. */
  ordered: boolean;
  /**
   * It needs an index to finish: an engine that scans for every input document (mingo) would
   * take minutes a call at 100k documents, so it does not run it.
   */
  needsIndexes?: true;
  /** `count` calls over `size` loaded documents, drawn from `seed` (the same sequence for every engine). */
  calls(size: number, count: number, seed: number): AggCall[];
  /**
   * The SQL: one SELECT for a read (a row with the single column `doc` stands for that document);
   * for a write, the statements of one transaction. Each statement takes the call's parameters it names.
   */
  sql(t: SqlTables): string[];
  /** The values of one answer document that every engine must agree on, in order. */
  row(doc: Doc): unknown[];
}

// Fields of the JSONB column `doc`, typed as the documents hold them.
const CITY = "doc->'profile'->>'city'";
const AGE = "(doc->'profile'->>'age')::int";
const N = "(doc->>'n')::int";
const JOINED = "(doc->>'joined')::bigint";
/** lookup-range's window: about this many sign-ups after each input document's. */
const RANGE_NEIGHBOURS = 10;
const LOGINS = "(doc->>'logins')::int";

/** The value at a dot path; an array as its elements sorted (sets such as $addToSet's have no order). */
function at(doc: Doc, path: string): unknown {
  let v: unknown = doc;
  for (const part of path.split('.')) v = v !== null && typeof v === 'object' ? (v as Doc)[part] : undefined;
  return Array.isArray(v) ? v.map(String).sort().join(',') : v;
}

const fields =
  (...paths: string[]) =>
  (doc: Doc): unknown[] =>
    paths.map((p) => at(doc, p));

/** A pipeline that takes no parameters: the same call every time. */
const fixed = (pipeline: Doc[]) => (): AggCall[] => [{ pipeline, params: [] }];

/** The `joined` value from which the $out pipeline's documents are taken. */
function outCutoff(): number {
  return JOINED_START_MS + Math.floor(JOINED_SPAN_MS * (1 - OUT_SHARE));
}

/** The $bucket of a number in SQL: the lower bound of the bucket holding it. */
function bucketSql(value: string): string {
  const whens = AGE_BOUNDARIES.slice(1).map((upper, i) => `WHEN ${value} < ${upper} THEN ${AGE_BOUNDARIES[i]}`);
  return `CASE ${whens.join(' ')} END`;
}

/** The `lookup` pipelines' answer in SQL: people joined to their city, grouped by country. */
const citiesJoinSql = (t: SqlTables): string[] => [
  `SELECT c.doc->>'country' AS "_id", count(*) AS n, avg((p.doc->'profile'->>'age')::int) AS "avgAge" FROM ${t.people} p JOIN ${t.cities} c ON c.doc->>'name' = p.doc->'profile'->>'city' GROUP BY 1`,
];

const SMALL_STATE: readonly AggPipeline[] = [
  {
    name: 'match-group',
    label: '$match joined in a range (indexed, ~1,000 docs) + $group by city ($sum, $avg)',
    ordered: false,
    // The documents benchmark's aggregation (lib/docs-workload.ts), as it is.
    calls: (size, count, seed) => aggregateArgs(size, count, seed).map((a) => ({ pipeline: mqlAggregate(a), params: [a.lo, a.hi] })),
    sql: (t) => [`SELECT ${CITY} AS "_id", count(*) AS n, avg(${AGE}) AS "avgAge", sum(${LOGINS}) AS logins FROM ${t.people} WHERE ${JOINED} BETWEEN $1 AND $2 GROUP BY 1`],
    row: fields('_id', 'n', 'avgAge', 'logins'),
  },
  {
    name: 'group-age',
    label: '$group all by profile.age ($sum, $max, $addToSet of city)',
    ordered: false,
    calls: fixed([{ $group: { _id: '$profile.age', n: { $sum: 1 }, maxN: { $max: '$n' }, cities: { $addToSet: '$profile.city' } } }]),
    sql: (t) => [`SELECT ${AGE} AS "_id", count(*) AS n, max(${N}) AS "maxN", array_agg(DISTINCT ${CITY}) AS cities FROM ${t.people} GROUP BY 1`],
    row: fields('_id', 'n', 'maxN', 'cities'),
  },
  {
    name: 'top-k',
    label: `$sort by profile.age desc, n (no index) + $limit ${TOP_K}`,
    ordered: true,
    calls: fixed([{ $sort: { 'profile.age': -1, n: 1 } }, { $limit: TOP_K }]),
    sql: (t) => [`SELECT doc FROM ${t.people} ORDER BY ${AGE} DESC, ${N} LIMIT ${TOP_K}`],
    row: fields('_id', 'n', 'profile.age'),
  },
  {
    name: 'unwind-group',
    label: '$unwind tags + $group by tag ($sum)',
    ordered: false,
    calls: fixed([{ $unwind: '$tags' }, { $group: { _id: '$tags', n: { $sum: 1 }, ages: { $sum: '$profile.age' } } }]),
    sql: (t) => [`SELECT tag AS "_id", count(*) AS n, sum(${AGE}) AS ages FROM ${t.people} CROSS JOIN LATERAL jsonb_array_elements_text(doc->'tags') AS tag GROUP BY 1`],
    row: fields('_id', 'n', 'ages'),
  },
  {
    name: 'window',
    label: `$setWindowFields running $sum per city by n, then $match ${WINDOW_IDS} _ids`,
    ordered: false,
    calls: (size, count, seed) => {
      const picks = randomDocNumbers(size, count * WINDOW_IDS, seed * 41 + size);
      return Array.from({ length: count }, (_, k) => {
        const ids = picks.slice(k * WINDOW_IDS, (k + 1) * WINDOW_IDS).map(docId);
        return {
          pipeline: [
            { $setWindowFields: { partitionBy: '$profile.city', sortBy: { n: 1 }, output: { running: { $sum: '$profile.age', window: { documents: ['unbounded', 'current'] } } } } },
            { $match: { _id: { $in: ids } } },
            { $project: { running: 1 } },
          ],
          params: [ids],
        };
      });
    },
    // The id filter stays outside the window's subquery: PostgreSQL cannot push it below a
    // window over other rows, so the window runs over every row, as the pipeline's does.
    sql: (t) => [
      `SELECT "_id", running FROM (SELECT id AS "_id", sum(${AGE}) OVER (PARTITION BY ${CITY} ORDER BY ${N} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running FROM ${t.people}) w WHERE "_id" = ANY($1)`,
    ],
    row: fields('_id', 'running'),
  },
  {
    name: 'lookup',
    label: '$lookup cities by name (12 docs, indexed) + $unwind + $group by country',
    ordered: false,
    calls: fixed([
      { $lookup: { from: CITIES_COLLECTION, localField: 'profile.city', foreignField: 'name', as: 'city' } },
      { $unwind: '$city' },
      { $group: { _id: '$city.country', n: { $sum: 1 }, avgAge: { $avg: '$profile.age' } } },
    ]),
    sql: citiesJoinSql,
    row: fields('_id', 'n', 'avgAge'),
  },
  {
    // The 3.6-style $lookup (let + pipeline + $expr), which MongoDB 5.0+ reads through the foreign
    // index: the same answer as 'lookup'.
    name: 'lookup-let',
    label: '$lookup cities with let + pipeline ($expr $eq on the indexed name) + $unwind + $group by country',
    ordered: false,
    calls: fixed([
      { $lookup: { from: CITIES_COLLECTION, let: { city: '$profile.city' }, pipeline: [{ $match: { $expr: { $eq: ['$name', '$$city'] } } }], as: 'city' } },
      { $unwind: '$city' },
      { $group: { _id: '$city.country', n: { $sum: 1 }, avgAge: { $avg: '$profile.age' } } },
    ]),
    sql: citiesJoinSql,
    row: fields('_id', 'n', 'avgAge'),
  },
  {
    // A self-join through let + $expr into the whole collection: one index read per input document
    // (a scan of the collection for each before tetradb planned $expr equalities).
    name: 'lookup-self',
    label: '$match joined in a range (~1,000 docs) + $lookup people by email with let + $expr (indexed) + $unwind + $group',
    ordered: false,
    needsIndexes: true,
    calls: (size, count, seed) =>
      aggregateArgs(size, count, seed).map((a) => ({
        pipeline: [
          { $match: { joined: { $gte: a.lo, $lte: a.hi } } },
          { $lookup: { from: COLLECTION, let: { e: '$email' }, pipeline: [{ $match: { $expr: { $eq: ['$email', '$$e'] } } }, { $project: { _id: 0, n: 1 } }], as: 'same' } },
          { $unwind: '$same' },
          { $group: { _id: null, n: { $sum: 1 }, total: { $sum: '$same.n' } } },
        ],
        params: [a.lo, a.hi],
      })),
    sql: (t) => [
      `SELECT NULL AS "_id", count(*) AS n, sum((q.doc->>'n')::int) AS total FROM ${t.people} p JOIN ${t.people} q ON q.doc->>'email' = p.doc->>'email' WHERE ${JOINED.replace('doc', 'p.doc')} BETWEEN $1 AND $2`,
    ],
    row: fields('_id', 'n', 'total'),
  },
  {
    // A window self-join through let + $expr comparisons: for each input document, the people who
    // joined in the RANGE_NEIGHBOURS-document window after it, one range of the joined index each
    // (a scan of the collection for each before tetradb planned $expr ranges).
    name: 'lookup-range',
    label: `$match joined in a range (~1,000 docs) + $lookup people who joined within the next ~${RANGE_NEIGHBOURS} sign-ups (let + $expr $gte/$lt on the indexed joined) + $unwind + $group`,
    ordered: false,
    needsIndexes: true,
    calls: (size, count, seed) => {
      const window = Math.max(1, Math.floor((JOINED_SPAN_MS / size) * RANGE_NEIGHBOURS));
      return aggregateArgs(size, count, seed).map((a) => ({
        pipeline: [
          { $match: { joined: { $gte: a.lo, $lte: a.hi } } },
          {
            $lookup: {
              from: COLLECTION,
              let: { j: '$joined' },
              pipeline: [{ $match: { $expr: { $and: [{ $gte: ['$joined', '$$j'] }, { $lt: ['$joined', { $add: ['$$j', window] }] }] } } }, { $project: { _id: 0, n: 1 } }],
              as: 'near',
            },
          },
          { $unwind: '$near' },
          { $group: { _id: null, n: { $sum: 1 }, total: { $sum: '$near.n' } } },
        ],
        params: [a.lo, a.hi, window],
      }));
    },
    sql: (t) => [
      `SELECT NULL AS "_id", count(*) AS n, sum((q.doc->>'n')::int) AS total FROM ${t.people} p JOIN ${t.people} q ON ${JOINED.replace('doc', 'q.doc')} >= ${JOINED.replace('doc', 'p.doc')} AND ${JOINED.replace('doc', 'q.doc')} < ${JOINED.replace('doc', 'p.doc')} + $3 WHERE ${JOINED.replace('doc', 'p.doc')} BETWEEN $1 AND $2`,
    ],
    row: fields('_id', 'n', 'total'),
  },
  {
    name: 'bucket',
    label: `$bucket by profile.age (${AGE_BOUNDARIES.length - 1} buckets, counts)`,
    ordered: false,
    calls: fixed([{ $bucket: { groupBy: '$profile.age', boundaries: AGE_BOUNDARIES, output: { n: { $sum: 1 } } } }]),
    sql: (t) => [`SELECT ${bucketSql(AGE)} AS "_id", count(*) AS n FROM ${t.people} GROUP BY 1`],
    row: fields('_id', 'n'),
  },
  {
    name: 'merge',
    label: `$group by city + $merge into ${MERGE_TARGET} (whenMatched replace), durable`,
    target: MERGE_TARGET,
    ordered: false,
    calls: fixed([
      { $group: { _id: '$profile.city', n: { $sum: 1 }, avgAge: { $avg: '$profile.age' } } },
      { $merge: { into: MERGE_TARGET, on: '_id', whenMatched: 'replace', whenNotMatched: 'insert' } },
    ]),
    sql: (t) => [
      `INSERT INTO ${t[MERGE_TARGET]} (id, doc) SELECT ${CITY}, jsonb_build_object('_id', ${CITY}, 'n', count(*), 'avgAge', avg(${AGE})) FROM ${t.people} GROUP BY ${CITY} ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc`,
    ],
    row: fields('_id', 'n', 'avgAge'),
  },
  {
    name: 'out',
    label: `$match the last ${OUT_SHARE * 100}% of joined (indexed) + $out into ${OUT_TARGET}, durable`,
    target: OUT_TARGET,
    ordered: false,
    calls: () => [{ pipeline: [{ $match: { joined: { $gte: outCutoff() } } }, { $out: OUT_TARGET }], params: [outCutoff()] }],
    sql: (t) => [`TRUNCATE ${t[OUT_TARGET]}`, `INSERT INTO ${t[OUT_TARGET]} (id, doc) SELECT id, doc FROM ${t.people} WHERE ${JOINED} >= $1`],
    row: fields('_id', 'n', 'joined'),
  },
];

/**
 * The two pipelines that hold state proportional to the collection (a group per document, half
 * the documents sorted): past tetradb's 64 MiB blocking bound (about 1M documents here) they
 * spill to disk (allowDiskUse, MongoDB 6's default), as PostgreSQL's hash aggregate and sort
 * spill past its work_mem.
 */
const LARGE_STATE: readonly AggPipeline[] = [
  {
    name: 'group-email',
    label: '$group by email (a group per document, $sum of n) + $sort by the sum + $limit 5',
    ordered: true,
    calls: fixed([{ $group: { _id: '$email', total: { $sum: '$n' } } }, { $sort: { total: -1 } }, { $limit: 5 }]),
    sql: (t) => [`SELECT doc->>'email' AS "_id", sum(${N}) AS total FROM ${t.people} GROUP BY 1 ORDER BY 2 DESC LIMIT 5`],
    row: fields('_id', 'total'),
  },
  {
    name: 'sort-half',
    label: '$sort by profile.age, n desc (no index) + $skip half the documents + $limit 5',
    ordered: true,
    calls: (size) => [{ pipeline: [{ $sort: { 'profile.age': 1, n: -1 } }, { $skip: Math.floor(size / 2) }, { $limit: 5 }], params: [Math.floor(size / 2)] }],
    sql: (t) => [`SELECT doc FROM ${t.people} ORDER BY ${AGE}, ${N} DESC OFFSET $1 LIMIT 5`],
    row: fields('_id', 'n', 'profile.age'),
  },
];

export const PIPELINES: readonly AggPipeline[] = [...SMALL_STATE, ...LARGE_STATE];

export function pipelineOf(name: PipelineName): AggPipeline {
  const p = PIPELINES.find((x) => x.name === name);
  if (p === undefined) throw new Error(`unknown pipeline ${name}`);
  return p;
}

/** The parameters statement `text` names ($1 to $k: the first k of `params`). */
export function paramsFor(text: string, params: readonly unknown[]): unknown[] {
  let k = 0;
  for (const m of text.matchAll(/\$(\d+)/g)) k = Math.max(k, Number(m[1]));
  return params.slice(0, k);
}

/** Calls of each pipeline in the sample every engine answers before it is timed. */
const SAMPLE_CALLS: Partial<Record<PipelineName, number>> = { 'match-group': 3, window: 2 };
/** Calls drawn per pipeline, cycled through by the timed loop. */
export const TIMED_CALLS = 64;
export const SAMPLE_SEED = 99;

/** The sample calls of pipeline `p` at `size`, each with the label its check carries. */
export function sampleCalls(p: AggPipeline, size: number): Array<{ label: string; call: AggCall }> {
  return p.calls(size, SAMPLE_CALLS[p.name] ?? 1, SAMPLE_SEED).map((call) => ({ label: `${p.name} ${JSON.stringify(call.params)}`, call }));
}

/** Count and checksum of an answer (of a write: its target read back). */
export function checkOfAnswer(p: AggPipeline, label: string, docs: readonly Doc[]): SampleCheck {
  return checkOf(label, docs.map(p.row), p.ordered);
}

export { COLLECTION };
