// Aggregation routing (DESIGN.md, Documents): with TETRA_MONGODB_URI set, a pipeline using
// `$lookup`, `$facet`, `$graphLookup` or `$text` (at any depth: in `$facet`'s, `$lookup`'s and
// `$unionWith`'s pipelines too) runs on the external MongoDB, over the mirror of the tenant's
// collections (server/mongo-mirror.ts), and answers `executedBy: "external"`.
//
// - Validated here first, as a native pipeline (with `$text` and `{$meta: "textScore"}` set
//   aside): unknown or refused stages and operators, JavaScript, `$out`/`$merge` and any other
//   database than the tenant's are refused the same way with or without MongoDB.
// - Read-your-writes: it runs once the mirror holds every write applied before the request
//   arrived (MongoMirror.caughtUp), within the timeout.
// - MongoDB away, or the mirror not caught up in time: the pipeline runs natively
//   (`executedBy: "native"`), except one with `$text`, which only MongoDB can answer: 503
//   UNAVAILABLE. A query error from MongoDB (a `$text` without a text index there) is 400
//   QUERY_ERROR with MongoDB's message.
import { MongoServerError, type Document } from 'mongodb';
import { fail, isTetraError } from '../engine/errors.js';
import { AGGREGATE_LIMITS, compilePipeline, fromJson, isPlainObject, setOwn, type Doc } from '../engine/docs/index.js';
import { approxBytes } from '../engine/docs/aggregate/stage.js';
import type { MongoMirror } from './mongo-mirror.js';

const ROUTED_STAGES = new Set(['$lookup', '$facet', '$graphLookup']);

export interface Routing {
  /** Some stage is one DESIGN.md routes to MongoDB. */
  readonly external: boolean;
  /** A `$text` search: only MongoDB can answer it. */
  readonly text: boolean;
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
  return { external: external || text, text };
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

const isTextScore = (v: unknown): boolean => isPlainObject(v) && Object.keys(v).length === 1 && v.$meta === 'textScore';

/**
 * The pipeline with what only MongoDB has set aside, for the native compiler to validate the
 * rest: `$text` conditions checked and dropped, `{$meta: "textScore"}` a literal (a sort key on
 * it, a direction).
 */
function withoutText(v: unknown, inSort = false): unknown {
  if (Array.isArray(v)) return v.map((x) => withoutText(x));
  if (!isPlainObject(v)) return v;
  if (isTextScore(v)) return inSort ? -1 : { $literal: 0 };
  const out: Doc = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === '$text') {
      checkText(x);
      continue;
    }
    setOwn(out, k, withoutText(x, k === '$sort'));
  }
  return out;
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

export interface ExternalOutcome {
  readonly documents: Doc[];
  readonly executedBy: 'external' | 'native';
}

/**
 * Runs `pipeline` on the tenant's mirror when it holds everything up to `lsn`; undefined when
 * MongoDB cannot answer in time (the caller runs it natively, or refuses a `$text`).
 * @throws QUERY_ERROR for a pipeline the native compiler refuses, or MongoDB's query errors
 */
export async function aggregateExternally(mirror: MongoMirror, tenantId: string, collection: string, pipeline: unknown, lsn: number, timeoutMs: number): Promise<Doc[] | undefined> {
  if (!Array.isArray(pipeline)) fail('QUERY_ERROR', 'pipeline must be an array of stages');
  compilePipeline(fromJson(withoutText(pipeline), { code: 'QUERY_ERROR' }));
  const started = Date.now();
  if (!(await mirror.caughtUp(tenantId, lsn, timeoutMs))) return undefined;
  const stages = fromJson(pipeline, { code: 'QUERY_ERROR' }) as Document[];
  try {
    const cursor = mirror.db(tenantId).collection(collection).aggregate(stages, { maxTimeMS: Math.max(1, timeoutMs - (Date.now() - started)) });
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
    // MongoDB refused the query itself (not a connection, a time limit or an election): say why.
    if (err instanceof MongoServerError && err.code !== 50 && !err.hasErrorLabel('RetryableWriteError') && !err.hasErrorLabel('ResumableChangeStreamError')) {
      fail('QUERY_ERROR', `the external MongoDB refused the pipeline: ${err.message}`, { mongoCode: err.code ?? null });
    }
    if (isTetraError(err)) throw err;
    return undefined;
  }
}
