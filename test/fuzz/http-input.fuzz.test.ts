/**
 * Bad input over HTTP, at random: every request answers with the error envelope and a catalogued
 * code at its status (never 500, never a stack trace), and a refused request changes nothing.
 *
 * The real server on a real port, one tenant. Bodies are built near the shapes each endpoint takes
 * (filters, updates, pipelines, documents, SQL, KV values and vectors) from a vocabulary of
 * MongoDB operators, stages, field names and awkward values (`$`-strings, dotted and empty names,
 * `__proto__`, NUL, huge and negative numbers, Extended JSON, deep nesting), and then mutated: a
 * field given a random value, dropped, or an unknown one added. Most are refused; many are valid,
 * which is the point: they walk the compilers, planners and executors with what no hand-written
 * test thought of.
 *
 * "Changes nothing": before every write that MongoDB applies as one unit (insertOne, insertMany,
 * updateOne, replaceOne, deleteOne, the findOneAnd* ones, index and collection commands), the
 * collection's documents, indexes and the collection list are read; after a 4xx they must be
 * the same. A refused SQL request (one transaction) must leave its table as it was. updateMany,
 * deleteMany, bulkWrite and aggregations with $merge keep what they applied before a write
 * error, as MongoDB does, so only their status is checked. At the end the server restarts on the
 * same data and serves the same documents.
 *
 * TETRA_FUZZ_SEED replays one seed; TETRA_FUZZ_REQUESTS sets the requests per seed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../engine/errors.js';
import { randomInt, seededRandom } from '../helpers/random.js';
import { http, signup, startServer, type HttpResult, type RunningServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp-dir.js';

const SEEDS = process.env.TETRA_FUZZ_SEED ? [Number(process.env.TETRA_FUZZ_SEED)] : [5, 6];
const REQUESTS = Number(process.env.TETRA_FUZZ_REQUESTS ?? 700);
const COLLECTION = 'c';
const TABLE = 't';

type Rand = () => number;
type Doc = Record<string, unknown>;

const pick = <T>(rand: Rand, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

// ---- Vocabulary ---------------------------------------------------------------------------------

const QUERY_OPS = ['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists', '$type', '$size', '$all', '$elemMatch', '$regex', '$options', '$not', '$mod', '$bitsAllSet', '$bitsAnyClear', '$jsonSchema', '$where', '$text', '$comment', '$sampleRate', '$geoWithin', '$nope'];
const LOGICAL = ['$and', '$or', '$nor', '$expr'];
const UPDATE_OPS = ['$set', '$unset', '$inc', '$mul', '$min', '$max', '$rename', '$push', '$pull', '$pullAll', '$addToSet', '$pop', '$currentDate', '$setOnInsert', '$bit', '$each', '$slice', '$position', '$sort', '$nope'];
const STAGES = ['$match', '$group', '$project', '$addFields', '$set', '$unset', '$sort', '$limit', '$skip', '$unwind', '$lookup', '$facet', '$bucket', '$bucketAuto', '$sortByCount', '$count', '$replaceWith', '$replaceRoot', '$sample', '$unionWith', '$graphLookup', '$setWindowFields', '$densify', '$fill', '$redact', '$documents', '$merge', '$out', '$search', '$geoNear', '$nope'];
const EXPR_OPS = ['$add', '$subtract', '$multiply', '$divide', '$mod', '$concat', '$substrCP', '$toUpper', '$cond', '$ifNull', '$switch', '$map', '$filter', '$reduce', '$let', '$literal', '$arrayElemAt', '$size', '$toInt', '$convert', '$dateAdd', '$dateToString', '$regexFind', '$sum', '$avg', '$first', '$last', '$push', '$addToSet', '$max', '$topN', '$median', '$percentile', '$getField', '$setField', '$rand', '$meta', '$function', '$accumulator'];
const FIELDS = ['a', 'b', 'c.d', 'a.0', 'a.b.c', '_id', 'u', 'tags', 'n', '', '__proto__', 'constructor', 'a.$', 'a.$[]', 'a.$[x]', '$**', 'a..b', '.a', 'x\u0000y', 'é'];
const STRINGS = ['', 'a', 'b', '$a', '$$ROOT', '$$NOW', '$$REMOVE', '$$nope', 'a.b', '$', '\u0000', 'x'.repeat(3000), '2024-01-01T00:00:00Z', 'text', 'i', 'mx', '^a', '(', 'string', 'number', 'object', 'array', 'ascending', '1'];
/**
 * TTLs (KV) and expireAfterSeconds (TTL indexes) that are refused or outlast the run: a key or a
 * document expiring meanwhile would change what the checks compare.
 */
const LASTING = [-1, 'x', null, true, 1e308, 86_400, 2 ** 31, 2 ** 53 + 2, {}, [60]];
const NUMBERS = [0, -0, 1, -1, 2, 1.5, -7.25, 1e308, -1e308, 2 ** 31, 2 ** 53 + 2, 1e-320, 100000, 10001, 17];

function randomScalar(rand: Rand): unknown {
  switch (randomInt(rand, 0, 7)) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2:
    case 3:
      return pick(rand, NUMBERS);
    case 4:
      return { $date: pick(rand, ['2024-01-01T00:00:00Z', 1e15, 'not a date', -1]) };
    case 5:
      return { [pick(rand, ['$numberDouble', '$numberInt', '$numberLong', '$oid', '$regularExpression', '$undefined', '$minKey'])]: pick(rand, ['NaN', 'Infinity', '12', 'x', 1, { pattern: 'a', options: 'i' }]) };
    default:
      return pick(rand, STRINGS);
  }
}

/** Any JSON value, built from the vocabulary, up to `depth` levels of containers. */
function randomValue(rand: Rand, depth = 3): unknown {
  const r = rand();
  if (depth <= 0 || r < 0.45) return randomScalar(rand);
  if (r < 0.6) return Array.from({ length: randomInt(rand, 0, 4) }, () => randomValue(rand, depth - 1));
  const keys = [...QUERY_OPS, ...LOGICAL, ...UPDATE_OPS, ...STAGES, ...EXPR_OPS, ...FIELDS];
  const out: Doc = {};
  for (let i = randomInt(rand, 0, 3); i > 0; i--) Object.defineProperty(out, pick(rand, keys), { value: randomValue(rand, depth - 1), enumerable: true, writable: true, configurable: true });
  return out;
}

/** A filter near what MongoDB accepts: fields with values or operator documents, sometimes logical operators. */
function randomFilter(rand: Rand, depth = 2): Doc {
  const f: Doc = {};
  // A text search (the collection has a text index now and then: createIndex draws "text" keys).
  if (rand() < 0.08) f['$text'] = rand() < 0.8 ? { $search: pick(rand, ['a', 'text n1', '"n 1" -b', '-a', '', 'é']), ...(rand() < 0.3 ? { $language: pick(rand, ['none', 'fr', 'xx']) } : {}), ...(rand() < 0.2 ? { $caseSensitive: randomScalar(rand) } : {}) } : randomValue(rand, 1);
  for (let i = randomInt(rand, 0, 3); i > 0; i--) {
    const r = rand();
    if (r < 0.15 && depth > 0) {
      const op = pick(rand, LOGICAL);
      Object.defineProperty(f, op, { value: op === '$expr' ? randomExpression(rand, 2) : Array.from({ length: randomInt(rand, 0, 3) }, () => randomFilter(rand, depth - 1)), enumerable: true, writable: true, configurable: true });
    } else if (r < 0.55) {
      const ops: Doc = {};
      for (let j = randomInt(rand, 1, 2); j > 0; j--) ops[pick(rand, QUERY_OPS)] = rand() < 0.7 ? randomScalarOrList(rand) : randomValue(rand, 2);
      Object.defineProperty(f, pick(rand, FIELDS), { value: ops, enumerable: true, writable: true, configurable: true });
    } else {
      Object.defineProperty(f, pick(rand, FIELDS), { value: rand() < 0.8 ? randomScalar(rand) : randomValue(rand, 2), enumerable: true, writable: true, configurable: true });
    }
  }
  return f;
}

function randomScalarOrList(rand: Rand): unknown {
  return rand() < 0.3 ? Array.from({ length: randomInt(rand, 0, 3) }, () => randomScalar(rand)) : randomScalar(rand);
}

/** An aggregation expression: a field path, a literal, or an operator over expressions. */
function randomExpression(rand: Rand, depth: number): unknown {
  const r = rand();
  if (depth <= 0 || r < 0.3) return rand() < 0.5 ? `$${pick(rand, FIELDS)}` : randomScalar(rand);
  if (r < 0.4) return randomValue(rand, 2);
  const op = pick(rand, EXPR_OPS);
  const args = Array.from({ length: randomInt(rand, 0, 3) }, () => randomExpression(rand, depth - 1));
  return { [op]: rand() < 0.7 ? args : (args[0] ?? null) };
}

function randomUpdate(rand: Rand): unknown {
  if (rand() < 0.15) return Array.from({ length: randomInt(rand, 0, 2) }, () => randomStage(rand, 1));
  const u: Doc = {};
  for (let i = randomInt(rand, 0, 3); i > 0; i--) {
    const fields: Doc = {};
    for (let j = randomInt(rand, 0, 2); j > 0; j--) {
      Object.defineProperty(fields, pick(rand, FIELDS), { value: rand() < 0.6 ? randomScalar(rand) : randomValue(rand, 2), enumerable: true, writable: true, configurable: true });
    }
    u[pick(rand, UPDATE_OPS)] = rand() < 0.9 ? fields : randomValue(rand, 1);
  }
  return u;
}

function randomStage(rand: Rand, depth: number): Doc {
  const name = pick(rand, STAGES);
  let arg: unknown;
  switch (name) {
    case '$match':
      arg = randomFilter(rand);
      break;
    case '$group':
      arg = { _id: randomExpression(rand, 1), n: { [pick(rand, ['$sum', '$avg', '$push', '$first', '$topN', '$median', '$count', '$nope'])]: randomExpression(rand, 1) } };
      break;
    case '$project':
    case '$addFields':
    case '$set':
      arg = { [pick(rand, FIELDS)]: rand() < 0.3 ? pick(rand, [0, 1, true]) : randomExpression(rand, 2) };
      break;
    case '$sort':
      arg = { [pick(rand, FIELDS)]: pick(rand, [1, -1, 0, 'x', { $meta: 'textScore' }]) };
      break;
    case '$limit':
    case '$skip':
    case '$sample':
      arg = name === '$sample' ? { size: randomScalar(rand) } : randomScalar(rand);
      break;
    case '$lookup':
    case '$unionWith':
    case '$facet':
      arg = rand() < 0.5 && depth > 0 ? { from: pick(rand, [COLLECTION, 'other', '']), localField: pick(rand, FIELDS), foreignField: pick(rand, FIELDS), as: pick(rand, FIELDS), pipeline: [randomStage(rand, depth - 1)], coll: COLLECTION, out: [randomStage(rand, depth - 1)] } : randomValue(rand, 2);
      break;
    case '$merge':
    case '$out':
      // Written into collections of their own (never the checked one): a $merge that fails part-way keeps what it wrote.
      arg = rand() < 0.5 ? pick(rand, ['mergeTarget', '', '$x', 'system.x']) : { into: pick(rand, ['mergeTarget', '']), on: pick(rand, ['_id', 'a', ['a', 'b']]), whenMatched: pick(rand, ['merge', 'replace', 'fail', 'keepExisting', [{ $set: { z: 1 } }], 'x']), whenNotMatched: pick(rand, ['insert', 'discard', 'fail', 'x']) };
      break;
    default:
      arg = rand() < 0.5 ? randomExpression(rand, 2) : randomValue(rand, 2);
  }
  return { [name]: arg };
}

function randomDocument(rand: Rand): unknown {
  if (rand() < 0.1) return randomValue(rand, 2);
  const d: Doc = {};
  if (rand() < 0.6) d['_id'] = rand() < 0.7 ? randomInt(rand, 0, 60) : randomScalar(rand);
  for (let i = randomInt(rand, 0, 4); i > 0; i--) {
    Object.defineProperty(d, pick(rand, FIELDS), { value: rand() < 0.7 ? randomScalar(rand) : randomValue(rand, 3), enumerable: true, writable: true, configurable: true });
  }
  if (rand() < 0.3) d['u'] = randomInt(rand, 0, 30); // a unique index on u: duplicates happen
  return d;
}

// ---- Requests ----------------------------------------------------------------------------------

/** How a refusal of the endpoint is checked: nothing may change, or (partial writes) only the status. */
type Check = 'read' | 'unit' | 'partial';

interface Request {
  method: string;
  path: string;
  json?: unknown;
  raw?: string;
  check: Check;
}

const MQL_OPS: ReadonlyArray<[op: string, check: Check, body: (rand: Rand) => Doc]> = [
  ['find', 'read', (r) => ({ filter: randomFilter(r), sort: maybe(r, () => ({ [pick(r, FIELDS)]: pick(r, [1, -1, 0, 'x']) })), projection: maybe(r, () => ({ [pick(r, FIELDS)]: rand01(r) ? pick(r, [0, 1]) : randomExpression(r, 1) })), limit: maybe(r, () => randomScalar(r)), skip: maybe(r, () => randomScalar(r)), hint: maybe(r, () => pick(r, ['a_1', '_id_', { a: 1 }, 'nope', 3])), explain: maybe(r, () => pick(r, [true, 1])) })],
  ['findOne', 'read', (r) => ({ filter: randomFilter(r) })],
  ['countDocuments', 'read', (r) => ({ filter: randomFilter(r), limit: maybe(r, () => randomScalar(r)) })],
  ['distinct', 'read', (r) => ({ key: pick(r, FIELDS), filter: maybe(r, () => randomFilter(r)) })],
  ['aggregate', 'partial', (r) => ({ pipeline: Array.from({ length: randomInt(r, 0, 3) }, () => randomStage(r, 1)) })],
  ['insertOne', 'unit', (r) => ({ document: randomDocument(r) })],
  ['insertMany', 'unit', (r) => ({ documents: Array.from({ length: randomInt(r, 0, 4) }, () => randomDocument(r)), ordered: maybe(r, () => randomScalar(r)) })],
  ['updateOne', 'unit', (r) => ({ filter: randomFilter(r), update: randomUpdate(r), upsert: maybe(r, () => pick(r, [true, false, 1])), arrayFilters: maybe(r, () => [randomFilter(r)]) })],
  ['updateMany', 'partial', (r) => ({ filter: randomFilter(r), update: randomUpdate(r), upsert: maybe(r, () => pick(r, [true, false])) })],
  ['replaceOne', 'unit', (r) => ({ filter: randomFilter(r), replacement: randomDocument(r), upsert: maybe(r, () => pick(r, [true, false])) })],
  ['deleteOne', 'unit', (r) => ({ filter: randomFilter(r) })],
  ['deleteMany', 'partial', (r) => ({ filter: rand01(r) ? { [pick(r, FIELDS)]: randomScalar(r) } : randomFilter(r) })],
  ['findOneAndUpdate', 'unit', (r) => ({ filter: randomFilter(r), update: randomUpdate(r), returnDocument: maybe(r, () => pick(r, ['after', 'before', 'x'])), sort: maybe(r, () => ({ [pick(r, FIELDS)]: pick(r, [1, -1]) })), projection: maybe(r, () => ({ [pick(r, FIELDS)]: 1 })) })],
  ['findOneAndReplace', 'unit', (r) => ({ filter: randomFilter(r), replacement: randomDocument(r) })],
  ['findOneAndDelete', 'unit', (r) => ({ filter: randomFilter(r) })],
  ['bulkWrite', 'partial', (r) => ({ operations: Array.from({ length: randomInt(r, 0, 3) }, () => ({ [pick(r, ['insertOne', 'updateOne', 'updateMany', 'replaceOne', 'deleteOne', 'deleteMany', 'nope'])]: { document: randomDocument(r), filter: randomFilter(r), update: randomUpdate(r), replacement: randomDocument(r) } })), ordered: maybe(r, () => pick(r, [true, false, 'x'])) })],
  ['createIndex', 'unit', (r) => ({ keys: r() < 0.6 ? Object.fromEntries(Array.from({ length: randomInt(r, 1, 3) }, () => [pick(r, FIELDS), pick(r, [1, -1, 'text', 'text', 0, 'hashed', 2])])) : randomValue(r, 2), unique: maybe(r, () => pick(r, [true, false, 1])), sparse: maybe(r, () => true), expireAfterSeconds: maybe(r, () => pick(r, LASTING)), partialFilterExpression: maybe(r, () => randomFilter(r, 1)), name: maybe(r, () => randomScalar(r)) })],
  ['dropIndex', 'unit', (r) => ({ index: rand01(r) ? pick(r, ['a_1', '_id_', 'u_1', '*', 'nope']) : randomValue(r, 1) })],
  ['listIndexes', 'read', () => ({})],
  ['estimatedDocumentCount', 'read', () => ({})],
  ['collMod', 'unit', (r) => ({ validator: maybe(r, () => randomFilter(r, 1)), validationLevel: maybe(r, () => pick(r, ['strict', 'moderate', 'off', 'x'])), validationAction: maybe(r, () => pick(r, ['error', 'warn', 'x'])) })],
  ['renameCollection', 'unit', (r) => ({ to: pick(r, ['', '$x', 'system.y', COLLECTION, 'a'.repeat(300)]), dropTarget: maybe(r, () => randomScalar(r)) })],
];

const maybe = <T>(rand: Rand, make: () => T): T | undefined => (rand() < 0.4 ? make() : undefined);
const rand01 = (rand: Rand): boolean => rand() < 0.5;

/** Mutates a body: a field given a random value, dropped, or an unknown field added; sometimes the whole body replaced. */
function mutate(rand: Rand, body: Doc): unknown {
  const r = rand();
  if (r < 0.03) return randomValue(rand, 2);
  const out: Doc = { ...body };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  if (r < 0.15) {
    const keys = Object.keys(out);
    if (keys.length > 0) out[pick(rand, keys)] = randomValue(rand, 2);
  } else if (r < 0.22) {
    const keys = Object.keys(out);
    if (keys.length > 0) delete out[pick(rand, keys)];
  } else if (r < 0.27) {
    out[pick(rand, ['nope', 'filter ', 'Filter', '$where', '__proto__', 'bypassDocumentValidation', 'allowDiskUse', 'let', 'collation', 'comment'])] = randomScalar(rand);
  }
  return out;
}

const SQL_PIECES = ['SELECT', 'INSERT INTO t VALUES', 'UPDATE t SET', 'DELETE FROM t', 'CREATE TABLE', 'DROP TABLE t', 'BEGIN;', 'COMMIT;', 'ROLLBACK;', 'WHERE', 'id', 'v', '*', 'FROM t', '(', ')', ',', ';', '1', "'x'", 'NULL', '=', '+', '/', '0', '1e400', "'2024-01-01'::date", '::int', 'ORDER BY', 'GROUP BY', 'LIMIT', '-1', '$1', 'RETURNING *', 'SAVEPOINT s;', 'ROLLBACK TO s;', 'ON CONFLICT (id) DO NOTHING', 'count(*)', 'sum(v)', 'OVER ()', 'pg_sleep(1)', 'generate_series(1, 1000000)', 'CROSS JOIN t t2'];

function randomSql(rand: Rand): Doc {
  const r = rand();
  let sql: string;
  if (r < 0.3) {
    // Mostly well-formed statements on the table, some with a failure after a change (one transaction: nothing may stay).
    const id = randomInt(rand, 0, 40);
    sql = pick(rand, [
      `INSERT INTO t VALUES (${id}, ${pick(rand, ["'a'", 'NULL', "'b'", '1'])})`,
      `UPDATE t SET v = ${pick(rand, ["'z'", 'NULL', '1/0', "v || 'x'"])} WHERE id ${pick(rand, ['=', '<', '>'])} ${id}`,
      `DELETE FROM t WHERE id = ${id}; SELECT 1/0`,
      `INSERT INTO t VALUES (${id}, 'q'); INSERT INTO t VALUES (${id}, 'q')`,
      `BEGIN; DELETE FROM t; ROLLBACK; SELECT count(*) FROM t`,
      `UPDATE t SET id = id + ${randomInt(rand, 0, 3)}`,
    ]);
  } else {
    sql = Array.from({ length: randomInt(rand, 1, 8) }, () => pick(rand, SQL_PIECES)).join(' ');
  }
  const body: Doc = { sql };
  if (rand() < 0.2) body['params'] = rand() < 0.5 ? [randomScalar(rand)] : randomValue(rand, 1);
  return body;
}

function randomRequest(rand: Rand): Request {
  const r = rand();
  if (r < 0.72) {
    const [op, check, make] = pick(rand, MQL_OPS);
    const body = { collection: rand() < 0.93 ? COLLECTION : randomScalar(rand), ...make(rand) };
    return { method: 'POST', path: `/api/mql/${op}`, json: mutate(rand, body), check };
  }
  if (r < 0.84) return { method: 'POST', path: '/api/sql/query', json: mutate(rand, randomSql(rand)), check: 'unit' };
  if (r < 0.92) {
    const key = rand() < 0.8 ? `k${randomInt(rand, 0, 9)}` : encodeURIComponent(String(randomScalar(rand))).slice(0, 2000) || '%00';
    if (rand() < 0.6) return { method: 'PUT', path: `/api/kv/${key}`, json: mutate(rand, { value: rand() < 0.7 ? 'v' : randomScalar(rand), ttl: maybe(rand, () => pick(rand, LASTING)) }), check: 'unit' };
    return { method: pick(rand, ['GET', 'DELETE']), path: `/api/kv/${key}`, check: 'unit' };
  }
  if (r < 0.97) {
    const op = pick(rand, ['upsert', 'query', 'delete', 'upsertMany']);
    const body: Doc =
      op === 'query'
        ? { query: rand() < 0.7 ? 'text' : randomScalar(rand), topK: maybe(rand, () => randomScalar(rand)), filter: maybe(rand, () => randomFilter(rand, 1)) }
        : op === 'upsertMany'
          ? { items: Array.from({ length: randomInt(rand, 0, 2) }, () => ({ id: randomScalar(rand), text: 'some text', metadata: maybe(rand, () => randomValue(rand, 2)) })) }
          : { id: rand() < 0.7 ? `v${randomInt(rand, 0, 5)}` : randomScalar(rand), text: rand() < 0.7 ? 'hello world' : randomScalar(rand), metadata: maybe(rand, () => randomValue(rand, 2)) };
    return { method: 'POST', path: `/api/vector/${op}`, json: mutate(rand, body), check: 'partial' };
  }
  // Not JSON at all, or JSON of the wrong kind.
  return { method: 'POST', path: `/api/mql/${pick(rand, MQL_OPS)[0]}`, raw: pick(rand, ['{', '', 'null', '[]', '"x"', '{"collection": "c", "filter": {"a": 1}, "filter": 2}', '{"collection":"c","filter":{"$where":"1"}}', '\u0000']), check: 'unit' };
}

// ---- The run -----------------------------------------------------------------------------------

const dataDir = tempDir('http-input-fuzz');
const models = tempDir('no-model'); // the fallback embedder, whatever ./models holds
let server: RunningServer;
let apiKey = '';

beforeAll(async () => {
  server = await startServer({ dataDir: dataDir.path, embeddingModelDir: models.path, rateLimit: 0 });
  ({ apiKey } = await signup(server.url));
});
afterAll(async () => {
  await server?.stop({ keepData: true });
  dataDir.remove();
  models.remove();
});

const send = (req: Request): Promise<HttpResult> => http(server.url, req.method, req.path, { ...(req.json !== undefined ? { json: req.json } : {}), ...(req.raw !== undefined ? { raw: req.raw, contentType: 'application/json' } : {}), apiKey });

/** What a refused write must leave as it was: the collection's documents and indexes, the collection list, the SQL table, the KV keys. */
async function state(): Promise<string> {
  const mql = (op: string, body: Doc) => http(server.url, 'POST', `/api/mql/${op}`, { json: body, apiKey });
  const docs = await mql('find', { collection: COLLECTION, sort: { _id: 1 }, limit: 10000 });
  const indexes = await mql('listIndexes', { collection: COLLECTION });
  const collections = await mql('listCollections', {});
  const rows = await http(server.url, 'POST', '/api/sql/query', { json: { sql: `SELECT * FROM ${TABLE} ORDER BY id` }, apiKey });
  const kv = await Promise.all(Array.from({ length: 10 }, (_, i) => http(server.url, 'GET', `/api/kv/k${i}`, { apiKey })));
  return JSON.stringify([docs.body, indexes.body, collections.body?.collections?.map((c: Doc) => c['name']).sort(), rows.body?.rows, kv.map((r) => [r.status, r.body?.value])]);
}

describe('bad input over HTTP', () => {
  for (const seed of SEEDS) {
    it(`every answer is an envelope with a catalogued code, and a refused write changes nothing (seed ${seed})`, async () => {
      const rand = seededRandom(seed);
      const setup = await http(server.url, 'POST', '/api/sql/query', { json: { sql: `CREATE TABLE IF NOT EXISTS ${TABLE} (id int PRIMARY KEY, v text)` }, apiKey });
      expect(setup.status, setup.text).toBe(200);
      const seedDocs = Array.from({ length: 30 }, (_, i) => ({ _id: i, a: i % 5, b: [i, { c: i % 3 }], u: 100 + i, n: `n${i}` }));
      // The collection afresh: an earlier seed's requests may have left a validator, indexes or a rename behind.
      const reseed = async (): Promise<void> => {
        await http(server.url, 'POST', '/api/mql/dropCollection', { json: { collection: COLLECTION }, apiKey });
        const seeded = await http(server.url, 'POST', '/api/mql/insertMany', { json: { collection: COLLECTION, documents: seedDocs }, apiKey });
        expect(seeded.status, seeded.text).toBe(201);
        const indexed = await http(server.url, 'POST', '/api/mql/createIndex', { json: { collection: COLLECTION, keys: { u: 1 }, unique: true }, apiKey });
        expect(indexed.status, indexed.text).toBe(200);
      };
      await reseed();
      const statuses = new Map<number, number>();
      for (let i = 0; i < REQUESTS; i++) {
        const req = randomRequest(rand);
        const before = req.check === 'unit' ? await state() : undefined;
        const res = await send(req);
        const what = `seed ${seed}, request ${i}: ${req.method} ${req.path} ${req.raw ?? JSON.stringify(req.json)?.slice(0, 800)}\n-> ${res.status} ${res.text.slice(0, 600)}`;
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(res.status, what).not.toBe(500);
        expect(res.text, what).not.toMatch(/\bat .*\.(ts|js):\d+/);
        if (res.status >= 400) {
          const code = res.body?.error?.code as keyof typeof ERROR_CODES | undefined;
          expect(code !== undefined && Object.hasOwn(ERROR_CODES, code), what).toBe(true);
          // A bulkWrite answers the status of its first write error; everything else the status of its code.
          if (!req.path.endsWith('/bulkWrite')) expect(ERROR_CODES[code!].status, what).toBe(res.status);
          expect(typeof res.body.error.message, what).toBe('string');
          if (before !== undefined && res.status < 500) {
            const after = await state();
            if (after !== before) {
              let at = 0;
              while (at < before.length && before[at] === after[at]) at++;
              expect.fail(`${what}\nchanged what it refused to change, from character ${at}:\n  before ...${before.slice(Math.max(0, at - 150), at + 150)}\n  after  ...${after.slice(Math.max(0, at - 150), at + 150)}`);
            }
          }
        }
        // Keep the collection from emptying or growing without bound.
        if (i % 50 === 49) {
          const count = await http(server.url, 'POST', '/api/mql/countDocuments', { json: { collection: COLLECTION }, apiKey });
          if (count.status === 200 && (count.body.count < 10 || count.body.count > 400)) await reseed();
        }
      }
      // Many requests were refused and many were served: the generators reach both sides.
      const refused = [...statuses].filter(([s]) => s >= 400).reduce((n, [, c]) => n + c, 0);
      expect(refused, JSON.stringify([...statuses])).toBeGreaterThan(REQUESTS * 0.2);
      expect(REQUESTS - refused, JSON.stringify([...statuses])).toBeGreaterThan(REQUESTS * 0.1);
      const health = await http(server.url, 'GET', '/api/health', { apiKey });
      expect(health.status, health.text).toBe(200);
    });
  }

  it('restarts on the same data and serves what it served before', async () => {
    const before = await state();
    await server.stop({ keepData: true });
    server = await startServer({ dataDir: dataDir.path, embeddingModelDir: models.path, rateLimit: 0 });
    expect(await state()).toBe(before);
  });
});
