import type { FastifyInstance } from 'fastify';
import { fail } from '../../engine/errors.js';
import { sqlExecute, type SqlColumn, type SqlOptions, type SqlOutcome, type SqlResult } from '../../engine/sql/index.js';
import { fastifyAnswer, JsonText } from '../json-body.js';
import { authedErrors, bearer } from '../schemas.js';
import { clientWatch, withTenantNow, type RouteRequest } from '../tetra-context.js';

const params = { type: 'array', description: '$1..$n values (JSON); never interpolated into the SQL text' } as const;
// Documented shape of one result (responses are serialised as they are: rows vary by query).
export const SQL_RESULT_SCHEMA = {
  type: 'object',
  properties: {
    command: { type: 'string' },
    columns: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, type: { type: 'string' } } } },
    rows: { type: 'array' },
    rowCount: { type: 'integer' },
  },
} as const;

// The JSON of a frozen column list: a cached SELECT reports the same frozen list on every call
// (engine/sql, finishShaped), so it is serialised once, not once per answer.
const COLUMNS_JSON = new WeakMap<readonly SqlColumn[], string>();

/** JSON.stringify(result), with a frozen column list's JSON made once. */
function resultJson(r: SqlResult): JsonText {
  let columns = COLUMNS_JSON.get(r.columns);
  if (columns === undefined) {
    columns = JSON.stringify(r.columns);
    if (Object.isFrozen(r.columns)) COLUMNS_JSON.set(r.columns, columns);
  }
  // The keys in the order finishShaped makes them, as JSON.stringify(r) would write them.
  return new JsonText(`{"command":${JSON.stringify(r.command)},"columns":${columns},"rows":${JSON.stringify(r.rows)},"rowCount":${JSON.stringify(r.rowCount)}}`);
}

interface QueryBody {
  sql?: unknown;
  params?: unknown[];
  statements?: { sql: string; params?: unknown[] }[];
  rowMode?: 'object' | 'array';
}

/** POST /api/sql/query: one statement, several (one transaction), or a batch of statements. */
export function sqlRoutes(app: FastifyInstance): void {
  const { config } = app.tetra;
  const options = (rowMode: SqlOptions['rowMode'], request: RouteRequest): SqlOptions => ({
    rowMode: rowMode ?? 'object',
    client: clientWatch(request),
    timeLimitMs: config.sqlTimeLimitMs,
    maxRows: config.sqlMaxRows,
    maxResultBytes: config.sqlMaxResultBytes,
    maxWorkBytes: config.sqlWorkBytes,
    maxTxnBytes: config.sqlTxnBytes,
  });
  const queryBody = {
    type: 'object',
    additionalProperties: false,
    properties: {
      sql: { type: 'string' },
      params,
      rowMode: { type: 'string', enum: ['object', 'array'] },
      statements: {
        type: 'array',
        minItems: 1,
        maxItems: 1000,
        items: { type: 'object', required: ['sql'], additionalProperties: false, properties: { sql: { type: 'string' }, params } },
      },
    },
  };
  // Not async: a read answered in this turn (sqlExecute and useNow hand back values) is returned
  // as a value, and both the lane and Fastify answer it without a turn of the microtask queue.
  const query = (request: RouteRequest): unknown => {
    const b = request.body as QueryBody;
    const hasSql = b.sql !== undefined;
    if (hasSql === (b.statements !== undefined)) fail('VALIDATION_FAILED', 'give either sql (with optional params) or statements');
    if (b.statements !== undefined && b.params !== undefined) fail('VALIDATION_FAILED', 'params go inside each of statements');
    const inputs = hasSql ? [{ sql: b.sql as string, params: b.params }] : b.statements!;
    const results = (o: SqlOutcome): SqlResult[] | Promise<SqlResult[]> => (o.durable === undefined ? o.results : o.durable.then(() => o.results));
    const outcome = withTenantNow(request, (store) => {
      const o = sqlExecute(store, inputs, options(b.rowMode, request));
      return o instanceof Promise ? o.then(results) : results(o);
    });
    const shape = (r: SqlResult[]): unknown => (hasSql ? resultJson(r[r.length - 1] as SqlResult) : { results: r });
    return outcome instanceof Promise ? outcome.then(shape) : shape(outcome);
  };
  app.tetra.lane.add({ method: 'POST', path: '/api/sql/query', body: queryBody, status: 200, handler: query });
  app.post(
    '/api/sql/query',
    {
      schema: {
        summary: 'Run SQL (PostgreSQL dialect): several statements in `sql`, or `statements`, run as one transaction',
        tags: ['sql'],
        security: bearer,
        body: queryBody,
        response: {
          ...authedErrors,
        },
      },
    },
    (request, reply) => {
      const out = query(request);
      return out instanceof Promise ? out.then((v) => fastifyAnswer(v, reply)) : fastifyAnswer(out, reply);
    },
  );
}
