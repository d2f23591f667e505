// Peer: Fastify + PostgreSQL (node-postgres) serving the route the SQL benchmark uses, in the
// request and response shape of tetradb's POST /api/sql/query: {sql, params} -> {command,
// columns, rows, rowCount}. What a user would otherwise build: any statement goes straight to
// PostgreSQL through a pool, as a named prepared statement (node-postgres prepares it once per
// pooled connection), with synchronous_commit on (an INSERT is durable when answered).
//
//   node --import tsx servers/pg-sql-server.ts <port> <apiKey> <poolSize>
//   (connection from PG* environment variables or DATABASE_URL)
//
// The bearer check hashes the header (SHA-256) and compares it in constant time with one fixed
// key's hash: like tetradb's SHA-256 of the key, minus its tenant lookup (slightly in the peer's
// favour). Timestamps and
// dates come back as PostgreSQL's text (not Date objects in this process's time zone) and int8 as
// a number when it is safe, as tetradb's JSON carries them. Prints "ready" when listening, or
// "pg-unavailable: <reason>" and exits 3 when PostgreSQL cannot be used.
import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify from 'fastify';
import pg from 'pg';

const [port, apiKey, poolSize] = process.argv.slice(2) as [string, string, string];

const OID = { int8: 20, date: 1082, timestamp: 1114, timestamptz: 1184 } as const;
const TYPE_NAMES: Record<number, string> = { 16: 'boolean', 20: 'int8', 21: 'int2', 23: 'int4', 25: 'text', 700: 'float4', 701: 'float8', 1043: 'varchar', 1082: 'date', 1114: 'timestamp', 1184: 'timestamptz', 1700: 'numeric', 3802: 'jsonb' };
const asText = (s: string): string => s;
pg.types.setTypeParser(OID.date, asText);
pg.types.setTypeParser(OID.timestamp, asText);
pg.types.setTypeParser(OID.timestamptz, asText);
pg.types.setTypeParser(OID.int8, (s: string) => {
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : s;
});

const pool = new pg.Pool({
  ...(process.env.DATABASE_URL ? { connectionString: process.env.DATABASE_URL } : {}),
  max: Number(poolSize),
  connectionTimeoutMillis: 5000,
});

try {
  const commit = (await pool.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]!.synchronous_commit;
  if (commit !== 'on') throw new Error(`synchronous_commit is ${commit}: inserts would not be durable when acknowledged`);
} catch (err) {
  process.stdout.write(`pg-unavailable: ${err instanceof Error ? err.message : String(err)}\n`);
  await pool.end().catch(() => undefined);
  process.exit(3);
}

// One name per distinct statement text: the benchmark sends a handful of shapes.
const names = new Map<string, string>();
const nameOf = (sql: string): string => {
  let name = names.get(sql);
  if (name === undefined) names.set(sql, (name = `s${names.size}`));
  return name;
};

const expected = createHash('sha256').update(`Bearer ${apiKey}`).digest();
const app = Fastify({ logger: false, bodyLimit: 16 * 1024 * 1024 });
app.addHook('onRequest', async (request, reply) => {
  const got = createHash('sha256').update(request.headers.authorization ?? '').digest();
  if (!timingSafeEqual(got, expected)) return reply.code(401).send({ error: { code: 'UNAUTHORIZED', message: 'invalid API key' } });
});
app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, _request, reply) => {
  const status = err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : err.code !== undefined && /^[0-9A-Z]{5}$/.test(err.code) ? 400 : 500;
  return reply.code(status).send({ error: { code: status === 500 ? 'INTERNAL' : 'SQL_ERROR', message: err.message, ...(err.code !== undefined ? { sqlstate: err.code } : {}) } });
});

const anyValue = {} as const;
app.post(
  '/api/sql/query',
  {
    schema: {
      body: { type: 'object', required: ['sql'], additionalProperties: false, properties: { sql: { type: 'string' }, params: { type: 'array', items: anyValue } } },
      response: {
        200: {
          type: 'object',
          properties: {
            command: { type: 'string' },
            columns: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, type: { type: 'string' } } } },
            rows: { type: 'array', items: anyValue },
            rowCount: { type: 'integer' },
          },
        },
      },
    },
  },
  async (request) => {
    const { sql, params } = request.body as { sql: string; params?: unknown[] };
    // Statements with parameters are prepared (named); DDL and parameterless text go as they are.
    const result = params !== undefined && params.length > 0 ? await pool.query({ name: nameOf(sql), text: sql, values: params }) : await pool.query(sql);
    return {
      command: result.command,
      columns: result.fields.map((f) => ({ name: f.name, type: TYPE_NAMES[f.dataTypeID] ?? String(f.dataTypeID) })),
      rows: result.rows,
      rowCount: result.command === 'SELECT' ? result.rows.length : (result.rowCount ?? 0),
    };
  },
);

process.on('SIGTERM', () => {
  void app.close().then(() => pool.end()).then(() => process.exit(0));
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.stdout.write('ready\n');
