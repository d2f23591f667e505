// Peer: Fastify + PostgreSQL (node-postgres) serving the document routes the benchmark uses, in
// the same request and response shapes as tetradb's POST /api/mql/* and with the same bearer-key
// check (an in-memory comparison), so the comparison is the store, not the HTTP. Documents are
// JSONB rows of `<table> (id text primary key, doc jsonb)` with an expression index on
// (doc->>'email') and a partial one on (city, id) of the documents aged 65 and over
// (lib/docs-http-shapes.ts); the table is created fresh at start-up. Inserts commit with the server's
// synchronous_commit (on by default: durable when acknowledged, like tetradb's).
//
//   node --import tsx servers/pg-docs-server.ts <port> <apiKey> <table> <poolSize>
//   (connection from PG* environment variables or DATABASE_URL)
//
// Filters it understands: {} , {_id: <string>}, {email: <string>}, without projection, sort or
// skip; besides, find takes the benchmark's find-computed (by email, COMPUTED_PROJECTION) and
// find-partial ({"profile.city": <string>, "profile.age": {$gte: 65}}, sort {_id: 1}) shapes;
// anything else is a 400. The aggregate, findOneAndUpdate, updateOne and distinct routes take the
// benchmark's one request shape each, bulkWrite the benchmark's four operation shapes; findPage
// (the peer's own route, not tetradb's) is keyset paging for the cursor benchmark. Prints
// "ready" when listening, or "pg-unavailable: <reason>" and exits 3 when PostgreSQL cannot be used.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import Fastify from 'fastify';
import pg from 'pg';
import { byCodePoint } from '../lib/code-points.js';
import { COMPUTED_PROJECTION, SCORE_PIPELINE, GOLD_SCORE, SENIOR_FILTER, seniorByCitySql, seniorIndexSql } from '../lib/docs-http-shapes.js';

const [port, apiKey, table, poolSize] = process.argv.slice(2) as [string, string, string, string];
if (!/^[a-z_][a-z0-9_]*$/.test(table ?? '')) throw new Error(`table name must be a plain identifier, got ${table}`);

const pool = new pg.Pool({
  ...(process.env.DATABASE_URL ? { connectionString: process.env.DATABASE_URL } : {}),
  max: Number(poolSize),
  connectionTimeoutMillis: 5000,
});

try {
  const client = await pool.connect();
  try {
    const commit = (await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit;
    if (commit !== 'on') throw new Error(`synchronous_commit is ${commit}: inserts would not be durable when acknowledged`);
    await client.query(`DROP TABLE IF EXISTS ${table}`);
    await client.query(`CREATE TABLE ${table} (id text PRIMARY KEY, doc jsonb NOT NULL)`);
    await client.query(`CREATE INDEX ${table}_email ON ${table} ((doc->>'email'))`);
    await client.query(seniorIndexSql(table));
  } finally {
    client.release();
  }
} catch (err) {
  process.stdout.write(`pg-unavailable: ${err instanceof Error ? err.message : String(err)}\n`);
  await pool.end().catch(() => undefined);
  process.exit(3);
}

// Named statements: node-postgres prepares each once per pooled connection.
const FIND_BY_ID = { name: 'find-id', text: `SELECT doc FROM ${table} WHERE id = $1 LIMIT $2` };
const FIND_BY_EMAIL = { name: 'find-email', text: `SELECT doc FROM ${table} WHERE doc->>'email' = $1 LIMIT $2` };
const FIND_ALL = { name: 'find-all', text: `SELECT doc FROM ${table} ORDER BY id LIMIT $1` };
const INSERT_ONE = { name: 'insert-one', text: `INSERT INTO ${table} (id, doc) VALUES ($1, $2::jsonb)` };
// find-partial: the seniors of one city in id order, through the partial index (city, id).
const FIND_SENIORS_BY_CITY = { name: 'find-seniors-by-city', text: seniorByCitySql(table) };
// find-computed as its user would write it in SQL: COMPUTED_PROJECTION's fields built from the
// JSONB (floor of a numeric is a numeric: 40, as MongoDB's double 40 is in JSON).
const FIND_COMPUTED_BY_EMAIL = {
  name: 'find-computed-by-email',
  text: `SELECT jsonb_build_object('email', doc->'email', 'label', (doc->>'name') || ' (' || (doc->'profile'->>'city') || ')', 'decade', floor((doc->'profile'->>'age')::numeric / 10) * 10) AS doc FROM ${table} WHERE doc->>'email' = $1 LIMIT $2`,
};

type Doc = Record<string, unknown>;
const anyObject = { type: 'object', additionalProperties: true } as const;
const errorBody = { type: 'object', properties: { error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' } } } } } as const;

function badRequest(message: string): Error & { statusCode: number } {
  return Object.assign(new Error(message), { statusCode: 400 });
}

/** The document's _id (generated when absent, as MongoDB and tetradb do) and its JSON text. */
function prepare(doc: Doc): { id: string; json: string } {
  if (doc._id === undefined) doc = { _id: randomUUID().replace(/-/g, '').slice(0, 24), ...doc };
  if (typeof doc._id !== 'string') throw badRequest('this peer stores string _ids only');
  return { id: doc._id, json: JSON.stringify(doc) };
}

/** Whether `filter` is find-partial's: one city's documents of SENIOR_AGE and over. */
function seniorsOfCity(filter: Doc): filter is { 'profile.city': string } {
  const keys = Object.keys(filter);
  return keys.length === 2 && typeof filter['profile.city'] === 'string' && isDeepStrictEqual(filter['profile.age'], SENIOR_FILTER['profile.age']);
}

async function find(b: Doc, limit: number): Promise<Doc[]> {
  const filter = b.filter as Doc | undefined;
  const keys = Object.keys(filter ?? {});
  if (b.skip !== undefined && b.skip !== 0) throw badRequest('this peer does not skip');
  if (b.projection !== undefined || b.sort !== undefined) {
    let result;
    if (b.sort === undefined && isDeepStrictEqual(b.projection, COMPUTED_PROJECTION) && keys.length === 1 && typeof filter!.email === 'string') {
      result = await pool.query<{ doc: Doc }>({ ...FIND_COMPUTED_BY_EMAIL, values: [filter!.email, limit] });
    } else if (b.projection === undefined && isDeepStrictEqual(b.sort, { _id: 1 }) && filter !== undefined && seniorsOfCity(filter)) {
      result = await pool.query<{ doc: Doc }>({ ...FIND_SENIORS_BY_CITY, values: [filter['profile.city'], limit] });
    } else {
      throw badRequest('this peer supports a projection or sort in the benchmark\'s find-computed and find-partial shapes only');
    }
    return result.rows.map((r) => r.doc);
  }
  let result;
  if (keys.length === 0) result = await pool.query<{ doc: Doc }>({ ...FIND_ALL, values: [limit] });
  else if (keys.length === 1 && keys[0] === '_id' && typeof filter!._id === 'string') result = await pool.query<{ doc: Doc }>({ ...FIND_BY_ID, values: [filter!._id, limit] });
  else if (keys.length === 1 && keys[0] === 'email' && typeof filter!.email === 'string') result = await pool.query<{ doc: Doc }>({ ...FIND_BY_EMAIL, values: [filter!.email, limit] });
  else throw badRequest('this peer supports the filters {}, {_id: string} and {email: string} only');
  return result.rows.map((r) => r.doc);
}

function duplicate(err: unknown): boolean {
  return (err as { code?: string }).code === '23505';
}

const app = Fastify({ logger: false });
app.addHook('onRequest', async (request, reply) => {
  if (request.headers.authorization !== `Bearer ${apiKey}`) return reply.code(401).send({ error: { code: 'UNAUTHORIZED', message: 'invalid API key' } });
});
app.setErrorHandler((err: Error & { statusCode?: number }, _request, reply) => {
  if (duplicate(err)) return reply.code(409).send({ error: { code: 'DUPLICATE_KEY', message: err.message } });
  const status = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
  return reply.code(status).send({ error: { code: status === 500 ? 'INTERNAL' : 'VALIDATION_FAILED', message: err.message } });
});

const route = (path: string, properties: Record<string, unknown>, required: string[], response: Record<number, unknown>, handler: (body: Doc) => Promise<unknown>, status = 200): void => {
  app.post(
    `/api/mql/${path}`,
    { schema: { body: { type: 'object', required, additionalProperties: false, properties }, response: { ...response, '4xx': errorBody, '5xx': errorBody } } },
    async (request, reply) => {
      const body = request.body as Doc;
      if (body.collection !== table) throw Object.assign(new Error(`no collection ${String(body.collection)}`), { statusCode: 404 });
      const result = await handler(body);
      void reply.code(status);
      return result;
    },
  );
};
const collection = { type: 'string' } as const;
const idValue = { type: ['string', 'number', 'boolean'] } as const;

route(
  'find',
  { collection, filter: anyObject, projection: anyObject, sort: anyObject, skip: { type: 'integer' }, limit: { type: 'integer' } },
  ['collection'],
  { 200: { type: 'object', properties: { documents: { type: 'array', items: anyObject } } } },
  async (b) => ({ documents: await find(b, typeof b.limit === 'number' ? b.limit : 100) }),
);
route(
  'findOne',
  { collection, filter: anyObject, projection: anyObject, sort: anyObject, skip: { type: 'integer' } },
  ['collection'],
  { 200: { type: 'object', properties: { document: { type: ['object', 'null'], additionalProperties: true } } } },
  async (b) => ({ document: (await find(b, 1))[0] ?? null }),
);
route(
  'insertOne',
  { collection, document: anyObject },
  ['collection', 'document'],
  { 201: { type: 'object', properties: { insertedId: idValue } } },
  async (b) => {
    const { id, json } = prepare(b.document as Doc);
    await pool.query({ ...INSERT_ONE, values: [id, json] });
    return { insertedId: id };
  },
  201,
);
route(
  'insertMany',
  { collection, documents: { type: 'array', items: anyObject } },
  ['collection', 'documents'],
  { 201: { type: 'object', properties: { insertedIds: { type: 'array', items: idValue } } } },
  async (b) => {
    // One multi-row INSERT: one statement, one transaction, all or nothing (like tetradb's batch).
    const docs = (b.documents as Doc[]).map(prepare);
    if (docs.length === 0) throw badRequest('documents must not be empty');
    const values: string[] = [];
    const rows = docs.map((d, i) => {
      values.push(d.id, d.json);
      return `($${2 * i + 1}, $${2 * i + 2}::jsonb)`;
    });
    await pool.query(`INSERT INTO ${table} (id, doc) VALUES ${rows.join(', ')}`, values);
    return { insertedIds: docs.map((d) => d.id) };
  },
  201,
);

// The one aggregation the benchmark sends, as its user would write it in SQL: the documents of one
// age (no index on it, as in tetradb) counted and their logins-free fields grouped by city.
const AGGREGATE_BY_AGE = { name: 'aggregate-by-age', text: `SELECT doc->'profile'->>'city' AS _id, count(*)::int AS n, avg((doc->>'n')::bigint)::float8 AS "avgN" FROM ${table} WHERE doc->'profile'->'age' = $1::jsonb GROUP BY 1` };

route(
  'aggregate',
  { collection, pipeline: { type: 'array', items: anyObject } },
  ['collection', 'pipeline'],
  { 200: { type: 'object', properties: { documents: { type: 'array', items: anyObject } } } },
  async (b) => {
    // [{$match: {'profile.age': <number>}}, {$group: {_id: '$profile.city', n: {$sum: 1}, avgN: {$avg: '$n'}}}] only.
    const [match, group] = b.pipeline as Doc[];
    const age = (match?.$match as Doc | undefined)?.['profile.age'];
    if (typeof age !== 'number' || group?.$group === undefined) throw badRequest('this peer supports the benchmark pipeline only');
    const result = await pool.query<Doc>({ ...AGGREGATE_BY_AGE, values: [JSON.stringify(age)] });
    return { documents: result.rows };
  },
);

// findOneAndUpdate as its user would write it in SQL: one UPDATE ... RETURNING by the indexed email,
// autocommit (durable when acknowledged, as tetradb's answer is). The benchmark's update only:
// {$inc: {logins: 1}} with returnDocument "after". $inc of an absent field sets it to the increment
// (MongoDB's rule), hence the COALESCE. Emails are unique in the benchmark's data, so the WHERE
// matches one row at most, as findOneAndUpdate changes one document at most.
const INC_LOGINS_BY_EMAIL = {
  name: 'inc-logins-by-email',
  text: `UPDATE ${table} SET doc = jsonb_set(doc, '{logins}', to_jsonb(COALESCE((doc->>'logins')::bigint, 0) + 1)) WHERE doc->>'email' = $1 RETURNING doc`,
};

route(
  'findOneAndUpdate',
  { collection, filter: anyObject, update: anyObject, sort: anyObject, projection: anyObject, upsert: { type: 'boolean' }, returnDocument: { type: 'string', enum: ['before', 'after'] } },
  ['collection', 'filter', 'update'],
  { 200: { type: 'object', properties: { document: { type: ['object', 'null'], additionalProperties: true }, matchedCount: { type: 'integer' }, modifiedCount: { type: 'integer' } } } },
  async (b) => {
    const filter = b.filter as Doc;
    const inc = (b.update as Doc).$inc as Doc | undefined;
    const benchmarkShape =
      Object.keys(filter).length === 1 && typeof filter.email === 'string' &&
      Object.keys(b.update as Doc).length === 1 && inc !== undefined && Object.keys(inc).length === 1 && inc.logins === 1 &&
      b.returnDocument === 'after' && b.sort === undefined && b.projection === undefined && b.upsert !== true;
    if (!benchmarkShape) throw badRequest('this peer supports {filter: {email: string}, update: {$inc: {logins: 1}}, returnDocument: "after"} only');
    const result = await pool.query<{ doc: Doc }>({ ...INC_LOGINS_BY_EMAIL, values: [filter.email] });
    const doc = result.rows[0]?.doc;
    return doc === undefined ? { document: null, matchedCount: 0, modifiedCount: 0 } : { document: doc, matchedCount: 1, modifiedCount: 1 };
  },
);

// A pipeline-style updateOne as its user would write it in SQL: one UPDATE by the indexed email,
// autocommit (durable when acknowledged), the JSONB merged with the two computed fields.
// SCORE_PIPELINE only: score = ($ifNull(score, 0) + profile.age), then level from the new score,
// which SQL cannot read back within one SET, so the sum is written twice. ->> gives NULL for a
// missing field and for a JSON null alike, as $ifNull treats both.
const SCORE_BY_EMAIL = (() => {
  const score = `(COALESCE((doc->>'score')::numeric, 0) + (doc->'profile'->>'age')::numeric)`;
  return {
    name: 'score-by-email',
    text: `UPDATE ${table} SET doc = doc || jsonb_build_object('score', ${score}, 'level', CASE WHEN ${score} >= ${GOLD_SCORE} THEN 'gold' ELSE 'basic' END) WHERE doc->>'email' = $1`,
  };
})();

route(
  'updateOne',
  { collection, filter: anyObject, update: { type: 'array', items: anyObject }, sort: anyObject, upsert: { type: 'boolean' } },
  ['collection', 'filter', 'update'],
  { 200: { type: 'object', properties: { matchedCount: { type: 'integer' }, modifiedCount: { type: 'integer' } } } },
  async (b) => {
    const filter = b.filter as Doc;
    const benchmarkShape = Object.keys(filter).length === 1 && typeof filter.email === 'string' && isDeepStrictEqual(b.update, SCORE_PIPELINE) && b.sort === undefined && b.upsert !== true;
    if (!benchmarkShape) throw badRequest('this peer supports {filter: {email: string}, update: SCORE_PIPELINE} only');
    // Emails are unique in the benchmark's data: one row at most, as updateOne changes one
    // document at most; the score always grows, so a matched row is a modified one.
    const result = await pool.query({ ...SCORE_BY_EMAIL, values: [filter.email] });
    const n = result.rowCount ?? 0;
    return { matchedCount: n, modifiedCount: n };
  },
);

// distinct as its user would write it in SQL: the cities of one age (no index on it, as in
// tetradb). SQL NULL is a document without the field, which contributes nothing in tetradb too.
const DISTINCT_CITY_BY_AGE = {
  name: 'distinct-city-by-age',
  text: `SELECT DISTINCT doc->'profile'->'city' AS v FROM ${table} WHERE (doc->'profile'->>'age')::int = $1 AND doc->'profile'->'city' IS NOT NULL`,
};


route(
  'distinct',
  { collection, key: { type: 'string' }, filter: anyObject },
  ['collection', 'key'],
  { 200: { type: 'object', properties: { values: { type: 'array' } } } },
  async (b) => {
    // {key: "profile.city", filter: {"profile.age": <integer>}} only.
    const filter = (b.filter ?? {}) as Doc;
    const age = filter['profile.age'];
    if (b.key !== 'profile.city' || Object.keys(filter).length !== 1 || typeof age !== 'number' || !Number.isInteger(age)) {
      throw badRequest('this peer supports {key: "profile.city", filter: {"profile.age": <integer>}} only');
    }
    const result = await pool.query<{ v: unknown }>({ ...DISTINCT_CITY_BY_AGE, values: [age] });
    const values = result.rows.map((r) => r.v);
    // Every city in the data is a string; sorting in SQL would use the database's collation.
    if (!values.every((v): v is string => typeof v === 'string')) throw new Error('this peer sorts string values only');
    return { values: values.sort(byCodePoint) };
  },
);

// bulkWrite as its user would write it in SQL: ONE transaction on one pooled connection (BEGIN,
// autocommit off; COMMIT waits for the WAL flush with synchronous_commit on, so the answer is
// durable, as tetradb's is), one statement per operation, in order, each a named prepared
// statement like the single-operation routes' (insertOne is INSERT_ONE). The benchmark's shapes
// only: insertOne of a document; updateOne by email with {$set: {<top-level fields>}, $inc:
// {logins: 1}} (the $set merged with ||, the $inc as findOneAndUpdate's); replaceOne by _id (the
// replacement under the row's _id); deleteOne by _id. Every operation is checked before BEGIN, so
// bad input writes nothing, as in tetradb. Where this differs from tetradb and MongoDB, in cases
// the benchmark never sends: a failing operation (a duplicate key) rolls the whole request back,
// where they keep the operations before it; a replacement equal to the document counts as
// modified; ordered: false is refused.
const BULK_UPDATE_BY_EMAIL = {
  name: 'bulk-update-by-email',
  text: `UPDATE ${table} SET doc = jsonb_set(doc || $2::jsonb, '{logins}', to_jsonb(COALESCE((doc->>'logins')::bigint, 0) + 1)) WHERE doc->>'email' = $1`,
};
const REPLACE_BY_ID = { name: 'replace-by-id', text: `UPDATE ${table} SET doc = jsonb_build_object('_id', id) || $2::jsonb WHERE id = $1` };
const DELETE_BY_ID = { name: 'delete-by-id', text: `DELETE FROM ${table} WHERE id = $1` };

/** One bulkWrite operation as its statement: what it counts as, its insert's _id. */
interface BulkStep {
  kind: 'insert' | 'update' | 'delete';
  insertedId?: string;
  query: { name: string; text: string; values: unknown[] };
}

const isObject = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);
const onlyKeys = (v: Doc, ...keys: string[]): boolean => Object.keys(v).length === keys.length && keys.every((k) => Object.hasOwn(v, k));
/** A top-level field name $set may merge with ||: no path, no operator, not one the update sets otherwise. */
const plainField = (k: string): boolean => !k.includes('.') && !k.startsWith('$') && k !== '_id' && k !== 'logins';

/** Operation `index` of a bulkWrite as its statement. @throws 400 for any shape but the benchmark's */
function bulkStep(op: unknown, index: number): BulkStep {
  const refuse = (): never => {
    throw badRequest(`operations.${index}: this peer supports insertOne {document}, updateOne {filter: {email: string}, update: {$set: {<field>: value}, $inc: {logins: 1}}}, replaceOne {filter: {_id: string}, replacement} and deleteOne {filter: {_id: string}} only`);
  };
  if (!isObject(op) || Object.keys(op).length !== 1) return refuse();
  const [kind, args] = Object.entries(op)[0]!;
  if (!isObject(args)) return refuse();
  const filter = args.filter;
  switch (kind) {
    case 'insertOne': {
      if (!onlyKeys(args, 'document') || !isObject(args.document)) return refuse();
      const { id, json } = prepare(args.document);
      return { kind: 'insert', insertedId: id, query: { ...INSERT_ONE, values: [id, json] } };
    }
    case 'updateOne': {
      const update = args.update;
      if (!onlyKeys(args, 'filter', 'update') || !isObject(filter) || !onlyKeys(filter, 'email') || typeof filter.email !== 'string') return refuse();
      if (!isObject(update) || !onlyKeys(update, '$set', '$inc') || !isDeepStrictEqual(update.$inc, { logins: 1 })) return refuse();
      const set = update.$set;
      if (!isObject(set) || Object.keys(set).length === 0 || !Object.keys(set).every(plainField)) return refuse();
      return { kind: 'update', query: { ...BULK_UPDATE_BY_EMAIL, values: [filter.email, JSON.stringify(set)] } };
    }
    case 'replaceOne': {
      const replacement = args.replacement;
      if (!onlyKeys(args, 'filter', 'replacement') || !isObject(filter) || !onlyKeys(filter, '_id') || typeof filter._id !== 'string') return refuse();
      if (!isObject(replacement) || Object.keys(replacement).some((k) => k.startsWith('$')) || (replacement._id !== undefined && replacement._id !== filter._id)) return refuse();
      const { _id, ...rest } = replacement;
      return { kind: 'update', query: { ...REPLACE_BY_ID, values: [filter._id, JSON.stringify(rest)] } };
    }
    case 'deleteOne':
      if (!onlyKeys(args, 'filter') || !isObject(filter) || !onlyKeys(filter, '_id') || typeof filter._id !== 'string') return refuse();
      return { kind: 'delete', query: { ...DELETE_BY_ID, values: [filter._id] } };
    default:
      return refuse();
  }
}

const counts = { type: 'integer' } as const;
const bulkIds = { type: 'object', additionalProperties: idValue } as const;
route(
  'bulkWrite',
  { collection, operations: { type: 'array', items: anyObject, minItems: 1, maxItems: 10_000 }, ordered: { type: 'boolean' } },
  ['collection', 'operations'],
  { 200: { type: 'object', properties: { insertedCount: counts, matchedCount: counts, modifiedCount: counts, deletedCount: counts, upsertedCount: counts, insertedIds: bulkIds, upsertedIds: bulkIds } } },
  async (b) => {
    if (b.ordered === false) throw badRequest('this peer runs ordered bulkWrites only');
    const steps = (b.operations as unknown[]).map(bulkStep);
    const result = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0, upsertedCount: 0, insertedIds: {} as Record<string, string>, upsertedIds: {} };
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query('BEGIN');
      for (const [i, step] of steps.entries()) {
        const n = (await client.query(step.query)).rowCount ?? 0;
        if (step.kind === 'insert') {
          result.insertedCount += n;
          result.insertedIds[String(i)] = step.insertedId!;
        } else if (step.kind === 'update') {
          // Emails and _ids are unique in the benchmark's data: one row at most, as updateOne and
          // replaceOne change one document at most; the $inc (and the replacement's lastBatch) always
          // changes it, so a matched row is a modified one.
          result.matchedCount += n;
          result.modifiedCount += n;
        } else {
          result.deletedCount += n;
        }
      }
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      // A connection that could not roll back is closed rather than given to the next request.
      client.release(broken);
    }
  },
);

// Paging as its user would build it over SQL (the cursor benchmark's peer, bench/cursor.bench.ts):
// keyset paging, each page one statement on a pooled connection, no state kept between requests.
// Without `joined`: the collection in id order through the primary key (WHERE id > $1 ORDER BY id
// LIMIT $2). With `joined` {gte, lt}: the documents of that range through the expression index the
// benchmark creates on ((doc->>'joined')::bigint), sorted by (name, id) with the last page's
// (name, id) as the key, both by code point (COLLATE "C"), the order tetradb's sort gives strings.
// A server-side cursor (DECLARE ... CURSOR in a transaction held across requests) would pin a pooled
// connection per reader and needs its own expiry; keyset paging is what a stateless service does.
const PAGE_FIRST = { name: 'page-first', text: `SELECT doc FROM ${table} ORDER BY id LIMIT $1` };
const PAGE_AFTER = { name: 'page-after', text: `SELECT doc FROM ${table} WHERE id > $1 ORDER BY id LIMIT $2` };
const JOINED = `(doc->>'joined')::bigint`;
const NAME_ID = `(doc->>'name') COLLATE "C", id COLLATE "C"`;
const RANGE_FIRST = { name: 'range-first', text: `SELECT doc FROM ${table} WHERE ${JOINED} >= $1 AND ${JOINED} < $2 ORDER BY ${NAME_ID} LIMIT $3` };
const RANGE_AFTER = {
  name: 'range-after',
  text: `SELECT doc FROM ${table} WHERE ${JOINED} >= $1 AND ${JOINED} < $2 AND ((doc->>'name') COLLATE "C", id COLLATE "C") > ($3::text COLLATE "C", $4::text COLLATE "C") ORDER BY ${NAME_ID} LIMIT $5`,
};

route(
  'findPage',
  {
    collection,
    limit: { type: 'integer', minimum: 1, maximum: 10_000 },
    after: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string' }, name: { type: 'string' } } },
    joined: { type: 'object', additionalProperties: false, required: ['gte', 'lt'], properties: { gte: { type: 'integer' }, lt: { type: 'integer' } } },
  },
  ['collection', 'limit'],
  { 200: { type: 'object', properties: { documents: { type: 'array', items: anyObject } } } },
  async (b) => {
    const limit = b.limit as number;
    const after = b.after as { id: string; name?: string } | undefined;
    const joined = b.joined as { gte: number; lt: number } | undefined;
    let query: { name: string; text: string; values: unknown[] };
    if (joined === undefined) {
      query = after === undefined ? { ...PAGE_FIRST, values: [limit] } : { ...PAGE_AFTER, values: [after.id, limit] };
    } else if (after === undefined) {
      query = { ...RANGE_FIRST, values: [joined.gte, joined.lt, limit] };
    } else {
      if (after.name === undefined) throw badRequest('after.name is required with joined: the range is paged by (name, id)');
      query = { ...RANGE_AFTER, values: [joined.gte, joined.lt, after.name, after.id, limit] };
    }
    const result = await pool.query<{ doc: Doc }>(query);
    return { documents: result.rows.map((r) => r.doc) };
  },
);

process.on('SIGTERM', () => {
  void app.close().then(() => pool.end()).then(() => process.exit(0));
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.stdout.write('ready\n');
