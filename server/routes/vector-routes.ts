import type { FastifyInstance, FastifyRequest } from 'fastify';
import { fail } from '../../engine/errors.js';
import type { TenantStore } from '../../engine/tenant/index.js';
import { validateVectorId, VECTOR_LIMITS, type VectorService } from '../../engine/vector/index.js';
import { authedErrors, bearer, errorRef } from '../schemas.js';
import { withTenant } from '../tetra-context.js';

const anyObject = { type: 'object', additionalProperties: true } as const;
const namespace = { type: 'string', description: `0-${VECTOR_LIMITS.maxNamespaceBytes} bytes; '' (the default) when omitted` } as const;
const id = { type: 'string', description: `1-${VECTOR_LIMITS.maxIdBytes} bytes of UTF-8` } as const;
const record = {
  type: 'object',
  required: ['id', 'text'],
  additionalProperties: false,
  properties: {
    id,
    text: { type: 'string', description: `non-empty, at most ${VECTOR_LIMITS.maxTextBytes} bytes; embedded (the model reads its first 256 tokens)` },
    metadata: { ...anyObject, description: `at most ${VECTOR_LIMITS.maxMetadataBytes} bytes encoded; filterable with MQL operators` },
  },
} as const;
const match = {
  type: 'object',
  properties: { id: { type: 'string' }, score: { type: 'number' }, text: { type: 'string' }, metadata: anyObject },
} as const;
const idParam = {
  type: 'object',
  required: ['*'],
  properties: { '*': { type: 'string', description: 'the record id, URL-encoded (slashes allowed)' } },
} as const;
const nsQuery = { type: 'object', additionalProperties: false, properties: { namespace } } as const;

function body<T>(request: FastifyRequest): T {
  const b = request.body;
  if (b === undefined || b === null || typeof b !== 'object' || Array.isArray(b)) fail('VALIDATION_FAILED', 'the request body must be a JSON object');
  return b as T;
}

/** The vector routes: upsert, upsertMany, query, GET/DELETE by id, delete by ids/filter/prefix, list, namespaces. */
export function vectorRoutes(app: FastifyInstance, vectors: VectorService): void {
  const { config } = app.tetra;
  const quota = (store: TenantStore) => (cost: number) => {
    const used = store.storageBytes;
    if (used + cost > config.quotaBytes) fail('QUOTA_EXCEEDED', `storage quota of ${config.quotaBytes} bytes exceeded (${used} used, this write needs ${cost})`, { quotaBytes: config.quotaBytes, usedBytes: used });
  };

  app.post(
    '/api/vector/upsert',
    {
      schema: {
        summary: 'Embed a text and store it under an id (replacing any record with that id)',
        tags: ['vector'],
        security: bearer,
        body: { ...record, properties: { ...record.properties, namespace } },
        response: { 200: { type: 'object', properties: { id: { type: 'string' }, upserted: { type: 'boolean' } } }, 507: errorRef, ...authedErrors },
      },
    },
    async (request) => {
      const b = body<{ id: unknown; text: unknown; metadata?: unknown; namespace?: unknown }>(request);
      await withTenant(request, (store) => vectors.upsert(store, [b], b.namespace, quota(store)));
      return { id: b.id as string, upserted: true };
    },
  );

  app.post(
    '/api/vector/upsertMany',
    {
      schema: {
        summary: `Embed and store up to ${VECTOR_LIMITS.maxUpsertMany} records in one atomic batch`,
        tags: ['vector'],
        security: bearer,
        body: {
          type: 'object',
          required: ['vectors'],
          additionalProperties: false,
          properties: { vectors: { type: 'array', items: record }, namespace },
        },
        response: { 200: { type: 'object', properties: { upserted: { type: 'integer' } } }, 507: errorRef, ...authedErrors },
      },
    },
    async (request) => {
      const b = body<{ vectors: unknown[]; namespace?: unknown }>(request);
      return withTenant(request, (store) => vectors.upsert(store, b.vectors as never, b.namespace, quota(store), true));
    },
  );

  app.post(
    '/api/vector/query',
    {
      schema: {
        summary: 'The topK records most similar to a text (or a vector), best first; score = cosine similarity',
        tags: ['vector'],
        security: bearer,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            query: { type: 'string', description: 'text to embed and search for' },
            vector: { type: 'array', items: { type: 'number' }, description: 'or a vector of the embedder\'s dimensions (normalised here)' },
            topK: { type: 'integer', description: `1-${VECTOR_LIMITS.maxTopK}, default ${VECTOR_LIMITS.defaultTopK}` },
            filter: { ...anyObject, description: 'an MQL filter over metadata (the documents matcher)' },
            namespace,
            includeText: { type: 'boolean', description: 'default true' },
            includeMetadata: { type: 'boolean', description: 'default true' },
            exact: { type: 'boolean', description: 'brute force instead of the HNSW graph' },
            efSearch: { type: 'integer', description: 'candidate list size for this query (default: the namespace\'s, adaptive to topK)' },
            explain: { type: 'boolean', description: 'add how the query was answered' },
          },
        },
        response: {
          200: { type: 'object', properties: { matches: { type: 'array', items: match }, explain: anyObject } },
          ...authedErrors,
        },
      },
    },
    async (request) => {
      const b = body<Record<string, unknown>>(request);
      const result = await withTenant(request, (store) => vectors.query(store, b));
      return b['explain'] === true ? { matches: result.matches, explain: { path: result.path } } : { matches: result.matches };
    },
  );

  app.post(
    '/api/vector/delete',
    {
      schema: {
        summary: 'Delete records by ids, by metadata filter or by id prefix (exactly one)',
        tags: ['vector'],
        security: bearer,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { ids: { type: 'array', items: { type: 'string' } }, filter: anyObject, prefix: { type: 'string' }, namespace },
        },
        response: { 200: { type: 'object', properties: { deleted: { type: 'integer' } } }, ...authedErrors },
      },
    },
    async (request) => {
      const b = body<Record<string, unknown>>(request);
      return withTenant(request, (store) => vectors.delete(store, b));
    },
  );

  app.post(
    '/api/vector/namespaces',
    {
      schema: {
        summary: 'Your namespaces with their record counts and HNSW parameters',
        tags: ['vector'],
        security: bearer,
        body: { type: ['object', 'null'], additionalProperties: false, properties: {} },
        response: {
          200: {
            type: 'object',
            properties: {
              namespaces: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: {
                    namespace: { type: 'string' },
                    count: { type: 'integer' },
                    M: { type: 'integer' },
                    efConstruction: { type: 'integer' },
                    efSearch: { type: 'integer' },
                    loaded: { type: 'boolean', description: 'whether its graph is in memory (pending and stale are counted only then)' },
                    pending: { type: 'integer', description: 'changes not yet in the graph (queries score them directly)' },
                    stale: { type: 'integer', description: 'records waiting to be re-embedded by the current embedder' },
                  },
                },
              },
            },
          },
          ...authedErrors,
        },
      },
    },
    async (request) => ({ namespaces: await withTenant(request, (store) => vectors.namespaces(store)) }),
  );

  app.post(
    '/api/vector/configure',
    {
      schema: {
        summary: 'Set a namespace\'s HNSW parameters (M and efConstruction only while it is empty), creating it if needed',
        tags: ['vector'],
        security: bearer,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { namespace, M: { type: 'integer' }, efConstruction: { type: 'integer' }, efSearch: { type: 'integer', description: '0 = adaptive to topK' } },
        },
        response: {
          200: { type: 'object', properties: { namespace: { type: 'string' }, M: { type: 'integer' }, efConstruction: { type: 'integer' }, efSearch: { type: 'integer' } } },
          409: errorRef,
          ...authedErrors,
        },
      },
    },
    async (request) => {
      const b = body<Record<string, unknown>>(request);
      return withTenant(request, (store) => vectors.configure(store, b));
    },
  );

  app.get(
    '/api/vector',
    {
      schema: {
        summary: 'List record ids in id order, optionally by prefix, a page at a time',
        tags: ['vector'],
        security: bearer,
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            prefix: { type: 'string' },
            cursor: { type: 'string', description: 'cursor of the previous page' },
            limit: { type: 'string', pattern: '^[0-9]+$', description: `1-${VECTOR_LIMITS.maxListLimit}, default ${VECTOR_LIMITS.defaultListLimit}` },
            namespace,
          },
        },
        response: { 200: { type: 'object', properties: { ids: { type: 'array', items: { type: 'string' } }, cursor: { type: ['string', 'null'] } } }, ...authedErrors },
      },
    },
    async (request) => {
      const q = request.query as { prefix?: string; cursor?: string; limit?: string; namespace?: string };
      const input = { ...q, limit: q.limit === undefined ? undefined : Number(q.limit) };
      return withTenant(request, (store) => vectors.list(store, input));
    },
  );

  app.get(
    '/api/vector/*',
    {
      schema: {
        summary: 'One record: its text and metadata',
        tags: ['vector'],
        security: bearer,
        params: idParam,
        querystring: nsQuery,
        response: {
          200: { type: 'object', properties: { id: { type: 'string' }, namespace: { type: 'string' }, text: { type: 'string' }, metadata: anyObject, embedder: { type: 'string' } } },
          404: errorRef,
          ...authedErrors,
        },
      },
    },
    async (request) => {
      const recordId = (request.params as { '*': string })['*'];
      const ns = (request.query as { namespace?: string }).namespace;
      return withTenant(request, (store) => vectors.get(store, recordId, ns));
    },
  );

  app.delete(
    '/api/vector/*',
    {
      schema: {
        summary: 'Delete one record (deleted: false when there was none)',
        tags: ['vector'],
        security: bearer,
        params: idParam,
        querystring: nsQuery,
        response: { 200: { type: 'object', properties: { id: { type: 'string' }, deleted: { type: 'boolean' } } }, ...authedErrors },
      },
    },
    async (request) => {
      // Checked here so an empty or overlong id is named as the path's `id`, not as `ids[0]`.
      const recordId = validateVectorId((request.params as { '*': string })['*']);
      const ns = (request.query as { namespace?: string }).namespace;
      const { deleted } = await withTenant(request, (store) => vectors.delete(store, { ids: [recordId], namespace: ns }));
      return { id: recordId, deleted: deleted === 1 };
    },
  );
}
