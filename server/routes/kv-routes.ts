import type { FastifyInstance } from 'fastify';
import { fail } from '../../engine/errors.js';
import { KV_LIMITS, kvDelete, kvGet, kvList, kvPut, kvPutCost } from '../../engine/kv/index.js';
import type { TenantStore } from '../../engine/tenant/index.js';
import { authedErrors, bearer, errorRef, nullableIsoDate } from '../schemas.js';
import { principalOf, withTenant, type RouteRequest } from '../tetra-context.js';

const keyParam = {
  type: 'object',
  required: ['*'],
  properties: { '*': { type: 'string', description: `the key, URL-encoded (any UTF-8 up to ${KV_LIMITS.maxKeyBytes} bytes; slashes allowed)` } },
} as const;

function keyOf(request: RouteRequest): string {
  return (request.params as { '*': string })['*'];
}

/** Refuses a write that would take the tenant past its quota; nothing is written. */
function checkQuota(store: TenantStore, quotaBytes: number, cost: number): void {
  const used = store.storageBytes;
  if (used + cost > quotaBytes) {
    fail('QUOTA_EXCEEDED', `storage quota of ${quotaBytes} bytes exceeded (${used} used, this write needs ${cost})`, { quotaBytes, usedBytes: used });
  }
}

/** The key-value routes: PUT/GET/DELETE /api/kv/{key}, GET /api/kv. */
// A key's routes take no query parameters: `?ttl=60` on a PUT is refused rather than ignored
// (ttl goes in the body), as the list route refuses parameters it does not know.
const noQuery = { type: 'object', additionalProperties: false, properties: {} } as const;

export function kvRoutes(app: FastifyInstance): void {
  const { config, expiry, lane } = app.tetra;
  // PUT, GET and DELETE of one key are the hot routes: the fast lane serves them too (keys
  // without percent-escapes; the rest go through Fastify, which decodes them).
  const putBody = {
    type: 'object',
    required: ['value'],
    additionalProperties: false,
    properties: {
      value: { type: 'string', description: `up to ${KV_LIMITS.maxValueBytes} bytes of UTF-8` },
      ttl: { type: ['number', 'null'], description: `seconds, > 0, fractions allowed, at most ${KV_LIMITS.maxTtlSeconds}; omitted or null: no expiry` },
    },
  } as const;
  const put = async (request: RouteRequest): Promise<unknown> => {
    const { value, ttl } = request.body as { value: string; ttl?: number | null };
    const key = keyOf(request);
    const { tenantId } = principalOf(request);
    return withTenant(request, async (store) => {
      checkQuota(store, config.quotaBytes, kvPutCost(key, value));
      const written = kvPut(store, key, value, ttl ?? null);
      await written.durable;
      if (written.expiresAtMs !== null) expiry.schedule(tenantId, written.expiresAtMs);
      return written.result;
    });
  };
  const get = async (request: RouteRequest): Promise<unknown> => {
    const key = keyOf(request);
    const entry = await withTenant(request, (store) => kvGet(store, key));
    if (entry === undefined) fail('NOT_FOUND', 'key not found', { key });
    return entry;
  };
  const remove = async (request: RouteRequest): Promise<unknown> => {
    const key = keyOf(request);
    const deleted = await withTenant(request, async (store) => {
      const result = kvDelete(store, key);
      await result.durable;
      return result.deleted;
    });
    if (!deleted) fail('NOT_FOUND', 'key not found', { key });
    return { key, deleted: true };
  };
  lane.add({ method: 'PUT', path: '/api/kv/*', body: putBody, status: 200, handler: put });
  lane.add({ method: 'GET', path: '/api/kv/*', status: 200, handler: get });
  lane.add({ method: 'DELETE', path: '/api/kv/*', status: 200, handler: remove });

  app.put(
    '/api/kv/*',
    {
      schema: {
        summary: 'Store a string value, optionally expiring after ttl seconds',
        tags: ['kv'],
        security: bearer,
        params: keyParam,
        querystring: noQuery,
        body: putBody,
        response: { 200: { type: 'object', properties: { key: { type: 'string' }, expiresAt: nullableIsoDate } }, 507: errorRef, ...authedErrors },
      },
    },
    put,
  );

  app.get(
    '/api/kv/*',
    {
      schema: {
        summary: 'Read a value; missing or expired keys are 404',
        tags: ['kv'],
        security: bearer,
        params: keyParam,
        querystring: noQuery,
        response: {
          200: {
            type: 'object',
            properties: { key: { type: 'string' }, value: { type: 'string' }, ttl: { type: ['number', 'null'] }, expiresAt: nullableIsoDate },
          },
          404: errorRef,
          ...authedErrors,
        },
      },
    },
    get,
  );

  app.delete(
    '/api/kv/*',
    {
      schema: {
        summary: 'Delete a key; missing or expired keys are 404',
        tags: ['kv'],
        security: bearer,
        params: keyParam,
        querystring: noQuery,
        response: { 200: { type: 'object', properties: { key: { type: 'string' }, deleted: { type: 'boolean' } } }, 404: errorRef, ...authedErrors },
      },
    },
    remove,
  );

  app.get(
    '/api/kv',
    {
      schema: {
        summary: 'List keys in key order, by prefix, a page at a time',
        tags: ['kv'],
        security: bearer,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            prefix: { type: 'string' },
            cursor: { type: 'string', description: 'nextCursor of the previous page' },
            limit: { type: 'string', pattern: '^[0-9]+$', description: `1-${KV_LIMITS.maxListLimit}, default ${KV_LIMITS.defaultListLimit}` },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              items: { type: 'array', items: { type: 'object', properties: { key: { type: 'string' }, expiresAt: nullableIsoDate } } },
              nextCursor: { type: ['string', 'null'] },
            },
          },
          ...authedErrors,
        },
      },
    },
    async (request) => {
      const query = request.query as { prefix?: string; cursor?: string; limit?: string };
      const limit = query.limit === undefined ? undefined : Number(query.limit);
      return withTenant(request, (store) => kvList(store, { prefix: query.prefix, cursor: query.cursor, limit }));
    },
  );
}
