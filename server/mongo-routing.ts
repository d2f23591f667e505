// Aggregation routing (DESIGN.md, Documents): with TETRA_MONGODB_URI set, a pipeline using
// `$lookup`, `$facet`, `$graphLookup` or `$text` (at any depth: in `$facet`'s, `$lookup`'s and
// `$unionWith`'s pipelines too) runs on the external MongoDB, over the mirror of the tenant's
// collections (server/mongo-mirror.ts), and answers `executedBy: "external"`.
//
// - Checked here first (checkRouted): only stages that read the tenant's own database (no
//   `$out`, `$merge`, diagnostic stages, or `from`/`coll` naming another database) and no
//   JavaScript, so a tenant never reaches another's data. MongoDB checks the rest, with its own
//   (larger) set of operators.
// - A pipeline with a `$merge` or `$out` is refused when it would be routed: MongoDB holds only a mirror.
// - Read-your-writes: it runs once the mirror holds every write applied before the request
//   arrived (MongoMirror.caughtUp), within the timeout.
// - MongoDB away, or the mirror not caught up in time: the pipeline runs natively
//   (`executedBy: "native"`), `$text` included (through tetradb's own text index). A query error
//   from MongoDB (a `$text` without a text index there) is 400 QUERY_ERROR with MongoDB's message.
// - The mirror makes tetradb's text index on MongoDB as a text index (mongo-mirror.ts).
// Types only: the driver is loaded with the mirror, when TETRA_MONGODB_URI is set (server/app.ts).
import type { Document } from 'mongodb';
import { fail, isTetraError } from '../engine/errors.js';
import { AGGREGATE_LIMITS, fromJson, isPlainObject, setOwn, timeLimitExceeded, type Doc } from '../engine/docs/index.js';
import { approxBytes } from '../engine/docs/aggregate/stage.js';
import type { MongoMirror } from './mongo-mirror.js';

const ROUTED_STAGES = new Set(['$lookup', '$facet', '$graphLookup']);
/** The stages that write a pipeline's output into a collection (the last stage only). */
const WRITING_STAGES = ['$merge', '$out'] as const;
type WritingStage = (typeof WRITING_STAGES)[number];

export interface Routing {
  /** Some stage is one DESIGN.md routes to MongoDB. */
  readonly external: boolean;
  /** A `$text` search (routed with the rest; natively answered when MongoDB is away). */
  readonly text: boolean;
  /**
   * The writing stage (`$merge`, `$out`) it ends with: writes must not go to MongoDB (it holds a
   * mirror), so the pipeline is refused when routed. Undefined when it writes nothing.
   */
  readonly writes: WritingStage | undefined;
}

/** Which of the routed stages a pipeline uses, at any depth. */
export function pipelineRouting(pipeline: unknown): Routing {
  let external = false;
  let text = false;
  const walkFilter = (f: unknown): void => {
    if (Array.isArray(f)) for (const x of f) walkFilter(x);
    else if (isPlainObject(f)) {
      for (const [k, v] of Object.entries(f)) {
        if (k === '$text') text = true;
        else walkFilter(v);
      }
    }
  };
  const walk = (stages: unknown): void => {
    if (!Array.isArray(stages)) return;
    for (const stage of stages) {
      if (!isPlainObject(stage)) continue;
      for (const [name, spec] of Object.entries(stage)) {
        if (ROUTED_STAGES.has(name)) external = true;
        if (name === '$match') walkFilter(spec);
        if (name === '$facet' && isPlainObject(spec)) for (const sub of Object.values(spec)) walk(sub);
        if ((name === '$lookup' || name === '$unionWith') && isPlainObject(spec)) walk(spec.pipeline);
      }
    }
  };
  walk(pipeline);
  let writes: WritingStage | undefined;
  if (Array.isArray(pipeline)) {
    for (const stage of pipeline) if (isPlainObject(stage)) writes ??= WRITING_STAGES.find((name) => Object.hasOwn(stage, name));
  }
  return { external: external || text, text, writes };
}

const TEXT_OPTIONS: Record<string, 'string' | 'boolean'> = { $search: 'string', $language: 'string', $caseSensitive: 'boolean', $diacriticSensitive: 'boolean' };

function checkText(spec: unknown): void {
  if (!isPlainObject(spec)) fail('QUERY_ERROR', '$text needs an object: {$search: "<terms>"}');
  if (typeof spec.$search !== 'string') fail('QUERY_ERROR', '$text needs a $search string');
  for (const [k, v] of Object.entries(spec)) {
    const type = TEXT_OPTIONS[k];
    if (type === undefined) fail('QUERY_ERROR', `unknown $text option ${k}`, { operator: k });
    if (typeof v !== type) fail('QUERY_ERROR', `$text's ${k} must be a ${type}`, { operator: k });
  }
}

// Stages that read only the pipeline's own database and write nothing: what a routed pipeline
// may hold, at any depth. The rest ($out, $merge, $currentOp, $collStats, $indexStats,
// $listSessions, $changeStream, $planCacheStats, ...) is refused by name.
const ALLOWED_STAGES = new Set([
  '$addFields', '$bucket', '$bucketAuto', '$count', '$densify', '$documents', '$facet', '$fill', '$geoNear', '$graphLookup', '$group', '$limit',
  '$lookup', '$match', '$project', '$redact', '$replaceRoot', '$replaceWith', '$sample', '$set', '$setWindowFields', '$skip', '$sort',
  '$sortByCount', '$unionWith', '$unset', '$unwind',
]);
const JAVASCRIPT = new Set(['$function', '$accumulator', '$where']);

/**
 * Checks a pipeline bound for MongoDB: only stages that read the tenant's own database, every
 * `from`/`coll` a collection name of it, no JavaScript. MongoDB checks the rest itself (its
 * operators are more than the native ones: `$geoNear`, `$toDecimal`, ... work when routed).
 * @throws QUERY_ERROR naming what is refused
 */
function checkRouted(stages: unknown, where = 'pipeline'): void {
  if (!Array.isArray(stages)) fail('QUERY_ERROR', `${where} must be an array of stages`);
  for (const stage of stages) {
    if (!isPlainObject(stage) || Object.keys(stage).length !== 1) fail('QUERY_ERROR', `each stage of ${where} must be an object with one stage name`);
    const [name, spec] = Object.entries(stage)[0]!;
    if (!ALLOWED_STAGES.has(name)) fail('QUERY_ERROR', `${name} is not allowed in a pipeline run on the external MongoDB (stages there may only read the tenant's collections)`, { stage: name });
    const collectionName = (v: unknown, field: string): void => {
      if (typeof v !== 'string' || v.length === 0) fail('QUERY_ERROR', `${name}.${field} must be a collection name (another database cannot be read)`, { stage: name });
    };
    if (name === '$lookup' && isPlainObject(spec)) {
      if (spec.from !== undefined || spec.pipeline === undefined) collectionName(spec.from, 'from');
      if (spec.pipeline !== undefined) checkRouted(spec.pipeline, '$lookup.pipeline');
    } else if (name === '$graphLookup' && isPlainObject(spec)) {
      collectionName(spec.from, 'from');
    } else if (name === '$unionWith') {
      if (typeof spec === 'string') collectionName(spec, 'coll');
      else if (isPlainObject(spec)) {
        if (spec.coll !== undefined || spec.pipeline === undefined) collectionName(spec.coll, 'coll');
        if (spec.pipeline !== undefined) checkRouted(spec.pipeline, '$unionWith.pipeline');
      }
    } else if (name === '$facet' && isPlainObject(spec)) {
      for (const [facet, sub] of Object.entries(spec)) checkRouted(sub, `$facet.${facet}`);
    } else if (name === '$match') {
      checkTextIn(spec);
    }
  }
}

function checkTextIn(filter: unknown): void {
  if (Array.isArray(filter)) for (const x of filter) checkTextIn(x);
  else if (isPlainObject(filter)) for (const [k, v] of Object.entries(filter)) k === '$text' ? checkText(v) : checkTextIn(v);
}

function checkNoJavaScript(v: unknown): void {
  if (Array.isArray(v)) for (const x of v) checkNoJavaScript(x);
  else if (isPlainObject(v)) {
    for (const [k, x] of Object.entries(v)) {
      if (JAVASCRIPT.has(k)) fail('QUERY_ERROR', `${k} is refused: no JavaScript runs on the service's behalf`, { operator: k });
      checkNoJavaScript(x);
    }
  }
}

/** A value from MongoDB as the document model holds values (numbers, strings, Dates, plain objects and arrays). */
export function fromBson(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof Date) return v;
  if (Array.isArray(v)) return v.map(fromBson);
  const bsonType = (v as { _bsontype?: string })._bsontype;
  switch (bsonType) {
    case undefined:
      break;
    case 'ObjectId':
      return (v as { toHexString(): string }).toHexString();
    case 'Long':
    case 'Int32':
    case 'Double':
    case 'Decimal128':
    case 'Timestamp':
      return Number(String(v));
    case 'Binary':
      return Buffer.from((v as { buffer: Uint8Array }).buffer).toString('base64');
    case 'BSONRegExp':
      return (v as { pattern: string }).pattern;
    default:
      return String(v);
  }
  if (v instanceof RegExp) return v.source;
  const out: Doc = {};
  for (const [k, x] of Object.entries(v as Doc)) setOwn(out, k, fromBson(x));
  return out;
}

/**
 * Runs `pipeline` on the tenant's mirror when it holds everything up to `lsn`; undefined when
 * MongoDB cannot answer in time (the caller runs it natively, or refuses a `$text`). `hint`: a key
 * pattern (the mirror names its indexes its own way, so a name is turned into its pattern first).
 * `letSpec`: the request's `let`, checked natively first (compileLet), handed to MongoDB as it is.
 * @throws QUERY_ERROR for a pipeline the native compiler refuses, or MongoDB's query errors
 */
export async function aggregateExternally(
  mirror: MongoMirror,
  tenantId: string,
  collection: string,
  pipeline: unknown,
  lsn: number,
  timeoutMs: number,
  hint?: Record<string, 1 | -1>,
  allowDiskUse?: boolean,
  maxTimeMS = 0,
  letSpec?: unknown,
): Promise<Doc[] | undefined> {
  checkRouted(pipeline);
  checkNoJavaScript(pipeline);
  // MongoDB just failed to answer: do not make every request wait for it (one tries again after a while).
  if (mirror.away) return undefined;
  const started = Date.now();
  if (!(await mirror.caughtUp(tenantId, lsn, timeoutMs))) return undefined;
  const stages = fromJson(pipeline, { code: 'QUERY_ERROR' }) as Document[];
  // The request's own limit, when it is the lower, is MongoDB's to enforce: its expiry is the request's answer, not a sign MongoDB is away.
  const elapsed = Date.now() - started;
  const left = Math.max(1, timeoutMs - elapsed);
  const own = maxTimeMS > 0 && maxTimeMS - elapsed <= left;
  try {
    const cursor = mirror.db(tenantId).collection(collection).aggregate(stages, { maxTimeMS: own ? Math.max(1, maxTimeMS - elapsed) : left, ...(hint !== undefined ? { hint } : {}), ...(allowDiskUse !== undefined ? { allowDiskUse } : {}), ...(letSpec !== undefined ? { let: fromJson(letSpec, { code: 'QUERY_ERROR' }) as Document } : {}) });
    const documents: Doc[] = [];
    let bytes = 0;
    try {
      for await (const d of cursor) {
        const doc = fromBson(d) as Doc;
        bytes += approxBytes(doc);
        if (bytes > AGGREGATE_LIMITS.maxResultBytes) {
          fail('QUERY_ERROR', `the result exceeds ${AGGREGATE_LIMITS.maxResultBytes} bytes: add a $limit, $match earlier or $project fewer fields`, { limit: AGGREGATE_LIMITS.maxResultBytes });
        }
        documents.push(doc);
      }
    } finally {
      await cursor.close().catch(() => undefined);
    }
    return documents;
  } catch (err) {
    const { MongoServerError } = await import('mongodb');
    if (own && err instanceof MongoServerError && err.code === 50) timeLimitExceeded(maxTimeMS);
    // MongoDB refused the query itself (not a connection, a time limit or an election): say why.
    if (err instanceof MongoServerError && err.code !== 50 && !err.hasErrorLabel('RetryableWriteError') && !err.hasErrorLabel('ResumableChangeStreamError')) {
      fail('QUERY_ERROR', `the external MongoDB refused the pipeline: ${err.message}`, { mongoCode: err.code ?? null });
    }
    if (isTetraError(err)) throw err;
    mirror.noteAway();
    return undefined;
  }
}
