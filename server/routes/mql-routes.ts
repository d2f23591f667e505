import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { fail } from '../../engine/errors.js';
import {
  allowDiskUseOf,
  batchSizeOf,
  cursorOfDocuments,
  DEFAULT_FIRST_BATCH,
  docsAggregateCursor,
  docsFindCursor,
  newCursorInterrupt,
  type Batch,
  type OpenedCursor,
  bulkWriteExpired,
  bulkWriteFailed,
  compileLet,
  DOCS_MODEL_LIMITS,
  MAX_BULK_OPERATIONS,
  prepareBulkWrite,
  docsCount,
  docsCreateIndex,
  docsCreateIndexes,
  docsDelete,
  docsDistinct,
  docsDropCollection,
  docsDropIndex,
  docsDropIndexes,
  docsFindNow,
  docsHintKeyPattern,
  docsFindOneAndDelete,
  docsFindOneAndReplace,
  docsFindOneAndUpdate,
  docsFindOne,
  docsInsert,
  docsInsertCost,
  docsListCollections,
  docsListIndexes,
  docsNextExpiry,
  docsCollMod,
  docsCreateCollection,
  docsEstimatedCount,
  docsRenameCollection,
  docsReplace,
  docsAggregate,
  docsUpdate,
  maxTimeMSOf,
  timeLimitOf,
  toJson,
  validateCollectionName,
  type FindAndModifyOutcome,
  type FindResult,
  type QueryGuard,
  type Written,
} from '../../engine/docs/index.js';
import type { TenantStore } from '../../engine/tenant/index.js';
import { aggregateExternally, pipelineRouting } from '../mongo-routing.js';
import { authedErrors, bearer, errorRef } from '../schemas.js';
import { clientWatch, principalOf, withTenant, withTenantNow, type RouteRequest } from '../tetra-context.js';

// Documents are free-form: no schema on them (Extended JSON dates in, the same out).
const anyObject = { type: 'object', additionalProperties: true } as const;
const collection = { type: 'string', description: 'collection name (created on first insert)' } as const;
const documents = { type: 'array', items: anyObject } as const;
const idValue = { type: ['string', 'number', 'boolean'] } as const;
// anyOf rather than a type list: Ajv's strict mode warns of union types at every start.
// No type: a non-boolean gets MongoDB's message from the model (QUERY_ERROR), not the schema's.
const allowDiskUse = { description: 'MongoDB\'s allowDiskUse (default true, as MongoDB 6.0+): a sort or $group past the memory bound spills to disk; false makes it fail instead' } as const;
// No type either: MongoDB's messages for a bad one come from the model.
const maxTimeMS = { description: "MongoDB's maxTimeMS: milliseconds the operation may run before it fails with `operation exceeded time limit` (a non-negative integer; 0: no limit of its own; the server's TETRA_MQL_TIME_LIMIT_MS, if lower, applies)" } as const;
const hint = { anyOf: [{ type: 'string' }, anyObject], description: 'MongoDB\'s hint: an index name, a key pattern such as {"email": 1}, or {"$natural": 1}' } as const;
// An update is a document of update operators or (MongoDB 4.2+) an array of pipeline stages.
const updateSpec = {
  anyOf: [anyObject, { type: 'array' }],
  description: 'update operators ({"$set": {...}}), or an array of pipeline stages ([{"$set": {...}}])',
} as const;
const written = { 409: errorRef, 507: errorRef, ...authedErrors } as const;
// No type: MongoDB's message for a `let` that is not an object comes from the model.
const letVariables = { description: "MongoDB's let (5.0+): variables the operation's $expr, computed projection or pipeline read as $$name; each value an expression evaluated once, before any document is read (it may not read a field)" } as const;
// No type here: the engine refuses a wrong one with MongoDB's message (a boolean, or a number read as one).
const bypassDocumentValidation = { description: "skip the collection's validator for this write (MongoDB's bypassDocumentValidation; every key of the tenant may)" } as const;
// For responses made of documents: fast-json-stringify walks every document against
// `additionalProperties: true` and costs more than JSON.stringify, which writes the same text for
// the plain JSON values toJson returns. The response schemas stay, for the OpenAPI document.
const plainJson = (): ((data: unknown) => string) => JSON.stringify;

function body<T>(request: RouteRequest): T {
  const b = request.body;
  if (b === undefined || b === null || typeof b !== 'object' || Array.isArray(b)) fail('VALIDATION_FAILED', 'the request body must be a JSON object');
  return b as T;
}

function checkQuota(store: TenantStore, quotaBytes: number, cost: number): void {
  const used = store.storageBytes;
  if (used + cost > quotaBytes) fail('QUOTA_EXCEEDED', `storage quota of ${quotaBytes} bytes exceeded (${used} used, this write needs ${cost})`, { quotaBytes, usedBytes: used });
}

/** The document routes: POST /api/mql/<operation>, Atlas Data API names and shapes. */
export function mqlRoutes(app: FastifyInstance): void {
  const { config, expiry, lane, mirror, memory, cursors } = app.tetra;

  /**
   * What stops a query of `request` besides its own maxTimeMS: the server's limit, and for reads
   * (`watch`) its client going away, as MongoDB kills the operation of a client that disconnected.
   */
  function guardOf(request: RouteRequest, watch: boolean): QueryGuard {
    return watch ? { timeLimitMs: config.mqlTimeLimitMs, client: clientWatch(request) } : { timeLimitMs: config.mqlTimeLimitMs };
  }

  // Stores whose closing closes their tenant's cursors (their snapshots go with the store).
  const watchedStores = new WeakSet<TenantStore>();

  /**
   * The first batch of a cursor opened in `store` by `open`: the cursor is known to the registry
   * (and named in the answer) until a batch finds it exhausted.
   */
  async function firstBatch(request: RouteRequest, store: TenantStore, batchSize: number, open: () => OpenedCursor | Promise<OpenedCursor>): Promise<Batch> {
    const { tenantId } = principalOf(request);
    const opened = await open();
    if (!watchedStores.has(store)) {
      watchedStores.add(store);
      store.onClose(() => cursors.closeTenant(tenantId, store));
    }
    return cursors.first(tenantId, store, opened.collection, opened.source, opened.interrupt, batchSize, guardOf(request, true));
  }

  const cursorId = { type: ['string', 'null'], description: 'the cursor, for getMore, while it may have more documents; null once it has none' } as const;
  const batchSize = { type: 'integer', description: 'open a cursor: at most this many documents now (0-10000; find default 101 with batchSize absent is not a cursor), the rest through getMore' } as const;

  /** Waits for durability, then wakes the expiry service when the collection has TTL indexes. */
  async function settle<T>(request: RouteRequest, store: TenantStore, name: string, write: Written<T>): Promise<T> {
    await write.durable;
    const next = docsNextExpiry(store, name);
    if (next !== null) expiry.schedule(principalOf(request).tenantId, next);
    return write.result;
  }

  const route = (
    path: string,
    summary: string,
    properties: Record<string, unknown>,
    required: string[],
    response: Record<number, unknown>,
    handler: (request: RouteRequest) => unknown,
    status = 200,
    documentsOut = false,
  ): void => {
    const bodySchema = { type: 'object', required, additionalProperties: false, properties };
    // Every document route is hot enough for the fast lane; its answers equal Fastify's (the
    // responses are plain JSON, which JSON.stringify writes as the serializers do).
    lane.add({ method: 'POST', path: `/api/mql/${path}`, body: bodySchema, status, handler });
    app.post(
      `/api/mql/${path}`,
      {
        ...(documentsOut ? { serializerCompiler: plainJson } : {}),
        schema: {
          summary,
          tags: ['documents'],
          security: bearer,
          body: bodySchema,
          response: { ...response, ...written },
        },
      },
      // The handler's promise is the reply (no async wrapper: one promise less per request); an
      // error sets its own status in sendError.
      (request, reply) => {
        void (reply as unknown as { code(n: number): unknown }).code(status);
        return handler(request);
      },
    );
  };

  route(
    'find',
    'Find documents: filter, projection, sort, skip, limit (default 100, max 10000); explain: true adds the plan',
    { collection, filter: anyObject, projection: anyObject, sort: anyObject, skip: { type: 'integer' }, limit: { type: 'integer' }, explain: { type: 'boolean' }, hint, allowDiskUse, maxTimeMS, let: letVariables, batchSize },
    ['collection'],
    { 200: { type: 'object', properties: { documents, explain: anyObject, cursorId } } },
    (request) => {
      const b = body<{ collection: string; explain?: boolean; batchSize?: unknown }>(request);
      if (b.batchSize !== undefined) {
        // A cursor: MongoDB's find, its limit 0 or absent for none, the rest through getMore.
        const size = batchSizeOf(b.batchSize, DEFAULT_FIRST_BATCH);
        return withTenant(request, async (store) => {
          const batch = await firstBatch(request, store, size, () => docsFindCursor(store, b.collection, b, { memory }));
          return { documents: batch.documents.map(toJson), cursorId: batch.cursorId };
        });
      }
      // A value when the find answered in this turn (docsFindNow, useNow): answered without a turn of the microtask queue.
      const result = withTenantNow(request, (store) => docsFindNow(store, b.collection, b, { memory, guard: guardOf(request, true) }));
      const shape = (r: FindResult): unknown => ({ documents: r.documents.map(toJson), ...(r.explain !== undefined ? { explain: r.explain } : {}) });
      return result instanceof Promise ? result.then(shape) : shape(result);
    },
    200,
    true,
  );

  route(
    'aggregate',
    'Run an aggregation pipeline ($match, $project, $addFields/$set, $unset, $group, $bucket, $sort, $skip, $limit, $count, $sortByCount, $unwind, $lookup, $graphLookup, $unionWith, $facet, $replaceRoot/$replaceWith, $redact, $setWindowFields, ...; a final $merge writes the output into a collection, a final $out replaces a collection with it). Without a collection, the pipeline must start with $documents',
    { collection: { ...collection, description: 'collection name; omitted only for a pipeline that starts with $documents' }, pipeline: { type: 'array', items: anyObject }, hint, bypassDocumentValidation, allowDiskUse, maxTimeMS, let: letVariables, cursor: { type: 'object', additionalProperties: false, properties: { batchSize }, description: 'open a cursor (MongoDB\'s cursor option): the first batchSize documents now (default 101), the rest through getMore' } },
    ['pipeline'],
    { 200: { type: 'object', properties: { documents, executedBy: { type: 'string', enum: ['native', 'external'] }, cursorId } } },
    async (request) => {
      const b = body<{ collection?: string; pipeline: unknown; hint?: unknown; bypassDocumentValidation?: unknown; allowDiskUse?: unknown; maxTimeMS?: unknown; let?: unknown; cursor?: { batchSize?: unknown } }>(request);
      const size = b.cursor === undefined ? undefined : batchSizeOf(b.cursor.batchSize, DEFAULT_FIRST_BATCH, 'cursor.batchSize');
      // Time limits count from here, through a wait for the external MongoDB and a native run after it.
      const since = performance.now();
      // A pipeline without a collection ($documents first) is never routed: the mirror answers collections.
      const routing = mirror === undefined || b.collection === undefined ? undefined : pipelineRouting(b.pipeline);
      const { tenantId } = principalOf(request);
      return withTenant(request, async (store) => {
        if (mirror !== undefined && routing?.external === true) {
          // The external MongoDB holds a mirror: a $merge or $out there would write to the mirror, never to tetradb.
          if (routing.writes !== undefined) {
            const stage = routing.writes;
            fail('QUERY_ERROR', `${stage} cannot be used in a pipeline that runs on the external MongoDB (one with $lookup, $facet, $graphLookup or $text): run the reading pipeline without ${stage}, or write its result with insertMany`, { stage });
          }
          // store.lsn: every write applied before this request, which the mirror must hold.
          // allowDiskUse as given (checked first: MongoDB's own refusal would name the mirror), so MongoDB spills or refuses alike.
          const allow = b.allowDiskUse === undefined ? undefined : allowDiskUseOf(b.allowDiskUse, 'aggregate');
          // maxTimeMS likewise, with the server's limit: the lower reaches MongoDB.
          const limit = timeLimitOf(maxTimeMSOf(b.maxTimeMS), config.mqlTimeLimitMs);
          // A `let` MongoDB would refuse is refused here first, with the message a native run gives.
          compileLet(b.let, 'aggregate');
          const external = await aggregateExternally(mirror, tenantId, validateCollectionName(b.collection), b.pipeline, store.lsn, config.mongodbTimeoutMs, docsHintKeyPattern(store, b.collection, b.hint), allow, limit, b.let);
          if (external !== undefined) {
            if (size === undefined) return { documents: external.map(toJson), executedBy: 'external' };
            // MongoDB's answer, whole, handed out in batches as a native cursor's.
            const name = validateCollectionName(b.collection);
            const batch = await firstBatch(request, store, size, () => cursorOfDocuments(name, external, newCursorInterrupt(0)));
            return { documents: batch.documents.map(toJson), cursorId: batch.cursorId, executedBy: 'external' };
          }
          request.server.log.warn({ tenantId, reqId: request.id }, 'aggregation routed to MongoDB ran natively: MongoDB did not answer in time');
        }
        // A $merge's or $out's batches count against the quota as inserts do; its target's TTL indexes wake the expiry service.
        const options = { hint: b.hint, bypassDocumentValidation: b.bypassDocumentValidation, allowDiskUse: b.allowDiskUse, maxTimeMS: b.maxTimeMS, let: b.let, guard: { ...guardOf(request, true), since }, memory, charge: (bytes: number) => checkQuota(store, config.quotaBytes, bytes) };
        if (size !== undefined) {
          let written: string | undefined;
          const batch = await firstBatch(request, store, size, async () => {
            const opened = await docsAggregateCursor(store, b.collection, b.pipeline, options);
            if ('written' in opened) {
              // A $merge or $out ran to its end: an exhausted cursor with no documents, as MongoDB's.
              written = opened.written;
              return cursorOfDocuments(opened.written, [], newCursorInterrupt(0));
            }
            return opened;
          });
          if (written !== undefined) {
            const next = docsNextExpiry(store, written);
            if (next !== null) expiry.schedule(tenantId, next);
          }
          return { documents: batch.documents.map(toJson), cursorId: batch.cursorId, executedBy: 'native' };
        }
        const result = await docsAggregate(store, b.collection, b.pipeline, options);
        if (result.written !== undefined) {
          const next = docsNextExpiry(store, result.written);
          if (next !== null) expiry.schedule(tenantId, next);
        }
        return { documents: result.documents.map(toJson), executedBy: 'native' };
      });
    },
    200,
    true,
  );

  route(
    'getMore',
    'The next batch of a cursor (a find with batchSize, an aggregate with cursor): at most batchSize documents (default: the batchSize it was opened with, or 101 when that was 0), and the cursor while it may have more',
    { collection: { ...collection, description: 'the collection the cursor reads (omitted for a collection-less aggregation)' }, cursorId: { type: 'string' }, batchSize: { type: 'integer' } },
    ['cursorId'],
    { 200: { type: 'object', properties: { documents, cursorId } }, 404: errorRef },
    (request) => {
      const b = body<{ collection?: unknown; cursorId: string; batchSize?: unknown }>(request);
      const name = b.collection === undefined ? null : validateCollectionName(b.collection);
      const size = b.batchSize === undefined ? undefined : batchSizeOf(b.batchSize, 0);
      // MongoDB's getMore takes a positive batchSize (its absence, the cursor's own).
      if (size === 0) fail('VALIDATION_FAILED', 'batchSize of getMore must be an integer between 1 and 10000', { field: 'batchSize' });
      const { tenantId } = principalOf(request);
      return withTenant(request, async (store) => {
        const batch = await cursors.getMore(tenantId, store, b.cursorId, name, size, guardOf(request, true));
        return { documents: batch.documents.map(toJson), cursorId: batch.cursorId };
      });
    },
    200,
    true,
  );

  route(
    'killCursors',
    "Close cursors before their end (MongoDB's killCursors): the ones killed and the ones this tenant does not have open",
    { collection: { ...collection, description: 'the collection the cursors read (omitted for collection-less aggregations)' }, cursors: { type: 'array', items: { type: 'string' }, maxItems: 10_000 } },
    ['cursors'],
    { 200: { type: 'object', properties: { cursorsKilled: { type: 'array', items: { type: 'string' } }, cursorsNotFound: { type: 'array', items: { type: 'string' } } } } },
    (request) => {
      const b = body<{ collection?: unknown; cursors: string[] }>(request);
      const name = b.collection === undefined ? null : validateCollectionName(b.collection);
      const { tenantId } = principalOf(request);
      return withTenant(request, () => cursors.kill(tenantId, b.cursors, name));
    },
  );

  route(
    'findOne',
    'The first matching document, or null',
    { collection, filter: anyObject, projection: anyObject, sort: anyObject, skip: { type: 'integer' }, hint, maxTimeMS, let: letVariables },
    ['collection'],
    { 200: { type: 'object', properties: { document: { type: ['object', 'null'], additionalProperties: true } } } },
    async (request) => {
      const b = body<{ collection: string; filter?: unknown }>(request);
      const doc = await withTenant(request, (store) => docsFindOne(store, b.collection, b, guardOf(request, true)));
      return { document: doc === null ? null : toJson(doc) };
    },
    200,
    true,
  );

  route(
    'countDocuments',
    'Count matching documents',
    { collection, filter: anyObject, skip: { type: 'integer' }, limit: { type: 'integer' }, hint, maxTimeMS },
    ['collection'],
    { 200: { type: 'object', properties: { count: { type: 'integer' } } } },
    async (request) => {
      const b = body<{ collection: string; filter?: unknown }>(request);
      return { count: await withTenant(request, (store) => docsCount(store, b.collection, b, guardOf(request, true))) };
    },
  );

  route(
    'insertOne',
    'Insert one document; _id is generated when absent',
    { collection, document: anyObject, bypassDocumentValidation, maxTimeMS },
    ['collection', 'document'],
    { 201: { type: 'object', properties: { insertedId: idValue } } },
    async (request) => {
      const b = body<{ collection: string; document: unknown; bypassDocumentValidation?: unknown; maxTimeMS?: unknown }>(request);
      return withTenant(request, async (store) => {
        checkQuota(store, config.quotaBytes, docsInsertCost([b.document]));
        const { insertedIds } = await settle(request, store, b.collection, docsInsert(store, b.collection, [b.document], 'document', b));
        return { insertedId: insertedIds[0] };
      });
    },
    201,
  );

  route(
    'insertMany',
    `Insert up to ${DOCS_MODEL_LIMITS.maxInsertMany} documents, all or nothing`,
    { collection, documents: { type: 'array', items: anyObject }, bypassDocumentValidation, maxTimeMS },
    ['collection', 'documents'],
    { 201: { type: 'object', properties: { insertedIds: { type: 'array', items: idValue } } } },
    async (request) => {
      const b = body<{ collection: string; documents: unknown[]; bypassDocumentValidation?: unknown; maxTimeMS?: unknown }>(request);
      return withTenant(request, async (store) => {
        checkQuota(store, config.quotaBytes, docsInsertCost(b.documents));
        return settle(request, store, b.collection, docsInsert(store, b.collection, b.documents, 'documents', b));
      });
    },
    201,
  );

  // What updateOne, updateMany and replaceOne answer.
  const updateOutcome = { 200: { type: 'object', properties: { matchedCount: { type: 'integer' }, modifiedCount: { type: 'integer' }, upsertedId: idValue } } };

  const updateRoute = (path: string, multi: boolean): void =>
    route(
      path,
      multi ? 'Update every matching document with update operators or a pipeline' : 'Update the first matching document with update operators or a pipeline',
      // updateOne takes a sort (MongoDB 8.0): the first match in that order is updated.
      { collection, filter: anyObject, update: updateSpec, upsert: { type: 'boolean' }, arrayFilters: { type: 'array', items: anyObject }, hint, bypassDocumentValidation, maxTimeMS, let: letVariables, ...(multi ? {} : { sort: anyObject }) },
      ['collection', 'filter', 'update'],
      updateOutcome,
      async (request) => {
        const b = body<{ collection: string; filter: unknown; update: unknown; upsert?: boolean; arrayFilters?: unknown[]; sort?: unknown; hint?: unknown; bypassDocumentValidation?: unknown; maxTimeMS?: unknown; let?: unknown }>(request);
        return withTenant(request, async (store) => {
          checkQuota(store, config.quotaBytes, docsInsertCost([b.update]));
          return settle(request, store, b.collection, await docsUpdate(store, b.collection, b.filter, b.update, { multi, upsert: b.upsert, arrayFilters: b.arrayFilters, sort: b.sort, hint: b.hint, bypassDocumentValidation: b.bypassDocumentValidation, maxTimeMS: b.maxTimeMS, let: b.let, guard: guardOf(request, false) }));
        });
      },
    );
  updateRoute('updateOne', false);
  updateRoute('updateMany', true);

  route(
    'replaceOne',
    'Replace the first matching document with a whole new document (its _id kept)',
    { collection, filter: anyObject, replacement: anyObject, upsert: { type: 'boolean' }, sort: anyObject, hint, bypassDocumentValidation, maxTimeMS, let: letVariables },
    ['collection', 'filter', 'replacement'],
    updateOutcome,
    async (request) => {
      const b = body<{ collection: string; filter: unknown; replacement: unknown; upsert?: boolean; sort?: unknown; hint?: unknown; bypassDocumentValidation?: unknown; maxTimeMS?: unknown; let?: unknown }>(request);
      return withTenant(request, async (store) => {
        checkQuota(store, config.quotaBytes, docsInsertCost([b.replacement]));
        return settle(request, store, b.collection, await docsReplace(store, b.collection, b.filter, b.replacement, { upsert: b.upsert, sort: b.sort, hint: b.hint, bypassDocumentValidation: b.bypassDocumentValidation, maxTimeMS: b.maxTimeMS, let: b.let, guard: guardOf(request, false) }));
      });
    },
  );

  // What findOneAndUpdate and findOneAndReplace answer.
  const findAndModifyOutcome = {
    200: {
      type: 'object',
      properties: { document: { type: ['object', 'null'], additionalProperties: true }, matchedCount: { type: 'integer' }, modifiedCount: { type: 'integer' }, upsertedId: idValue },
    },
  };
  const returnDocument = { type: 'string', enum: ['before', 'after'], description: 'the document before the change (default) or after it' } as const;
  type FindAndModifyBody = { collection: string; filter: unknown; update?: unknown; replacement?: unknown; sort?: unknown; projection?: unknown; upsert?: unknown; returnDocument?: unknown; arrayFilters?: unknown; hint?: unknown; bypassDocumentValidation?: unknown; maxTimeMS?: unknown; let?: unknown };
  /** findOneAndUpdate and findOneAndReplace: `field` (update or replacement) is what changes the document. */
  const findAndModifyRoute = (
    path: string,
    summary: string,
    field: 'update' | 'replacement',
    properties: Record<string, unknown>,
    modify: (store: TenantStore, b: FindAndModifyBody, guard: QueryGuard) => Promise<Written<FindAndModifyOutcome>>,
  ): void =>
    route(
      path,
      summary,
      { collection, filter: anyObject, [field]: field === 'update' ? updateSpec : anyObject, sort: anyObject, projection: anyObject, upsert: { type: 'boolean' }, returnDocument, hint, bypassDocumentValidation, maxTimeMS, let: letVariables, ...properties },
      ['collection', 'filter', field],
      findAndModifyOutcome,
      async (request) => {
        const b = body<FindAndModifyBody>(request);
        return withTenant(request, async (store) => {
          checkQuota(store, config.quotaBytes, docsInsertCost([b[field]]));
          const r = await settle(request, store, b.collection, await modify(store, b, guardOf(request, false)));
          return { ...r, document: toJson(r.document) };
        });
      },
      200,
      true,
    );
  findAndModifyRoute('findOneAndUpdate', 'Update the first matching document (in sort order) and return it, before or after the update', 'update', { arrayFilters: { type: 'array', items: anyObject } }, (store, b, guard) =>
    docsFindOneAndUpdate(store, b.collection, b.filter, b.update, { ...b, guard }),
  );
  findAndModifyRoute('findOneAndReplace', 'Replace the first matching document (in sort order) and return it, before or after the replacement', 'replacement', {}, (store, b, guard) =>
    docsFindOneAndReplace(store, b.collection, b.filter, b.replacement, { ...b, guard }),
  );

  route(
    'findOneAndDelete',
    'Delete the first matching document (in sort order) and return it',
    { collection, filter: anyObject, sort: anyObject, projection: anyObject, hint, maxTimeMS, let: letVariables },
    ['collection', 'filter'],
    { 200: { type: 'object', properties: { document: { type: ['object', 'null'], additionalProperties: true } } } },
    async (request) => {
      const b = body<{ collection: string; filter: unknown; sort?: unknown; projection?: unknown; hint?: unknown; maxTimeMS?: unknown; let?: unknown }>(request);
      return withTenant(request, async (store) => {
        const { document } = await settle(request, store, b.collection, await docsFindOneAndDelete(store, b.collection, b.filter, { ...b, guard: guardOf(request, false) }));
        return { document: toJson(document) };
      });
    },
    200,
    true,
  );

  route(
    'distinct',
    'The distinct values of a field among the matching documents, in BSON order',
    { collection, key: { type: 'string', description: 'a field name or dot path' }, filter: anyObject, hint, maxTimeMS },
    ['collection', 'key'],
    { 200: { type: 'object', properties: { values: { type: 'array' } } } },
    async (request) => {
      const b = body<{ collection: string; key: unknown; filter?: unknown }>(request);
      const values = await withTenant(request, (store) => docsDistinct(store, b.collection, b.key, b, guardOf(request, true)));
      return { values: values.map(toJson) };
    },
    200,
    true,
  );

  const deleteRoute = (path: string, multi: boolean): void =>
    route(
      path,
      multi ? 'Delete every matching document' : 'Delete the first matching document',
      { collection, filter: anyObject, hint, maxTimeMS, let: letVariables },
      ['collection', 'filter'],
      { 200: { type: 'object', properties: { deletedCount: { type: 'integer' } } } },
      async (request) => {
        const b = body<{ collection: string; filter: unknown; hint?: unknown; maxTimeMS?: unknown; let?: unknown }>(request);
        return withTenant(request, async (store) => settle(request, store, b.collection, await docsDelete(store, b.collection, b.filter, { multi, hint: b.hint, maxTimeMS: b.maxTimeMS, let: b.let, guard: guardOf(request, false) })));
      },
    );
  deleteRoute('deleteOne', false);
  deleteRoute('deleteMany', true);

  const bulkIds = { type: 'object', additionalProperties: idValue, description: 'the _id of each operation that inserted (upserted) one, keyed by its index' } as const;
  route(
    'bulkWrite',
    `Up to ${MAX_BULK_OPERATIONS} insertOne, updateOne, updateMany, replaceOne, deleteOne and deleteMany operations on one collection, applied in order (ordered: true stops at the first write error)`,
    { collection, operations: { type: 'array', items: anyObject }, ordered: { type: 'boolean' }, bypassDocumentValidation, maxTimeMS, let: letVariables },
    ['collection', 'operations'],
    {
      200: {
        type: 'object',
        properties: {
          insertedCount: { type: 'integer' },
          matchedCount: { type: 'integer' },
          modifiedCount: { type: 'integer' },
          deletedCount: { type: 'integer' },
          upsertedCount: { type: 'integer' },
          insertedIds: bulkIds,
          upsertedIds: bulkIds,
        },
      },
    },
    async (request) => {
      const b = body<{ collection: string; operations: unknown[]; ordered?: boolean; bypassDocumentValidation?: unknown; maxTimeMS?: unknown; let?: unknown }>(request);
      // Every operation is checked before the tenant's store is touched: bad input writes nothing.
      const bulk = prepareBulkWrite(b.collection, b.operations, b.ordered, b.bypassDocumentValidation, { maxTimeMS: b.maxTimeMS, let: b.let, guard: guardOf(request, false) });
      return withTenant(request, async (store) => {
        checkQuota(store, config.quotaBytes, docsInsertCost(b.operations));
        const written = await bulk.apply(store);
        // Durable and the expiry service woken first, whether it answers the result or its write errors.
        const result = await settle(request, store, b.collection, written);
        if (written.expired !== undefined) bulkWriteExpired(written);
        if (written.writeErrors.length > 0) bulkWriteFailed(written, b.operations.length, b.ordered !== false);
        return result;
      });
    },
  );

  route(
    'createIndex',
    'Create an index (ascending/descending fields, unique, expireAfterSeconds for TTL, sparse, partialFilterExpression; or a text index) and build it from the existing documents',
    {
      collection,
      keys: { type: 'object', additionalProperties: { anyOf: [{ type: 'integer' }, { type: 'string' }] }, description: 'e.g. {"age": 1, "name": -1}, or {"title": "text", "body": "text"} for a text index' },
      name: { type: 'string' },
      unique: { type: 'boolean' },
      expireAfterSeconds: { type: 'integer' },
      sparse: { type: 'boolean', description: 'index only documents that have at least one of the fields' },
      partialFilterExpression: { ...anyObject, description: 'index only documents this filter matches: equality, $exists: true, $gt, $gte, $lt, $lte, $type, $in, $and, $or' },
      weights: { description: 'a text index: the weight of each field, e.g. {"title": 10, "body": 1}' },
      default_language: { description: 'a text index: the language of documents without a language field (default "english"; "none": no stemming, no stop words)' },
      language_override: { description: 'a text index: the field naming a document\'s own language (default "language")' },
      textIndexVersion: { description: 'a text index: 3, the only version built' },
      hidden: { type: 'boolean', description: "MongoDB's hidden index: kept up to date (unique, TTL) but never read by a query until collMod unhides it" },
    },
    ['collection', 'keys'],
    { 200: { type: 'object', properties: { name: { type: 'string' }, created: { type: 'boolean' } } }, 404: errorRef },
    async (request) => {
      const b = body<{ collection: string; keys: unknown; name?: string; unique?: boolean; expireAfterSeconds?: number; sparse?: boolean; partialFilterExpression?: unknown; weights?: unknown; default_language?: unknown; language_override?: unknown; textIndexVersion?: unknown; hidden?: unknown }>(request);
      return withTenant(request, async (store) => settle(request, store, b.collection, await docsCreateIndex(store, b.collection, b.keys, b)));
    },
  );

  route(
    'dropIndex',
    'Drop an index by name or key pattern',
    { collection, index: { description: 'an index name, or a key pattern such as {"email": 1}' } },
    ['collection', 'index'],
    { 200: { type: 'object', properties: { dropped: { type: 'string' } } }, 404: errorRef },
    async (request) => {
      const b = body<{ collection: string; index: unknown }>(request);
      return withTenant(request, async (store) => settle(request, store, b.collection, docsDropIndex(store, b.collection, b.index)));
    },
  );

  route(
    'createIndexes',
    "Create several indexes at once (MongoDB's createIndexes), all or none: indexes is a list of {key, name?, unique?, expireAfterSeconds?, sparse?, partialFilterExpression?, hidden?, ...}",
    { collection, indexes: { type: 'array', items: anyObject, description: 'index specifications as MongoDB takes them: {"key": {"email": 1}, "unique": true}' } },
    ['collection', 'indexes'],
    { 200: { type: 'object', properties: { createdIndexes: { type: 'array', items: { type: 'string' } }, numIndexesBefore: { type: 'integer' }, numIndexesAfter: { type: 'integer' } } } },
    async (request) => {
      const b = body<{ collection: string; indexes: unknown }>(request);
      return withTenant(request, async (store) => settle(request, store, b.collection, await docsCreateIndexes(store, b.collection, b.indexes)));
    },
  );

  route(
    'dropIndexes',
    'Drop several indexes at once, all or none: "*" (every index but _id_), an index name or key pattern, or a list of names',
    { collection, index: { description: '"*", an index name, a key pattern, or a list of index names' } },
    ['collection', 'index'],
    { 200: { type: 'object', properties: { nIndexesWas: { type: 'integer' }, dropped: { type: 'array', items: { type: 'string' } } } }, 404: errorRef },
    async (request) => {
      const b = body<{ collection: string; index: unknown }>(request);
      return withTenant(request, async (store) => settle(request, store, b.collection, docsDropIndexes(store, b.collection, b.index)));
    },
  );

  route(
    'listIndexes',
    'The indexes of a collection, _id_ first',
    { collection },
    ['collection'],
    { 200: { type: 'object', properties: { indexes: { type: 'array', items: anyObject } } }, 404: errorRef },
    async (request) => {
      const b = body<{ collection: string }>(request);
      return { indexes: await withTenant(request, (store) => docsListIndexes(store, b.collection)) };
    },
  );

  route(
    'listCollections',
    'The collections with their document counts',
    {},
    [],
    { 200: { type: 'object', properties: { collections: { type: 'array', items: anyObject } } } },
    async (request) => ({ collections: await withTenant(request, (store) => docsListCollections(store)) }),
  );

  const validation = {
    validator: { ...anyObject, description: 'a query filter every document must match ($jsonSchema included); {} for none' },
    validationLevel: { type: 'string', enum: ['strict', 'moderate', 'off'] },
    validationAction: { type: 'string', enum: ['error', 'warn', 'errorAndLog'] },
  };
  route(
    'createCollection',
    'Create an empty collection, with schema validation (validator, validationLevel, validationAction) when asked',
    { collection, ...validation },
    ['collection'],
    { 200: { type: 'object', properties: { created: { type: 'boolean' } } } },
    async (request) => {
      const b = body<{ collection: string; validator?: unknown; validationLevel?: unknown; validationAction?: unknown }>(request);
      return withTenant(request, async (store) => settle(request, store, b.collection, docsCreateCollection(store, b.collection, b)));
    },
  );

  route(
    'collMod',
    "Change a collection's schema validation (what is given; documents already stored are not checked again), or one of its indexes: hide or unhide it, change its TTL (index: {name or keyPattern, hidden, expireAfterSeconds})",
    {
      collection,
      ...validation,
      index: { ...anyObject, description: 'the index to change, by name or keyPattern, and its new hidden and/or expireAfterSeconds (a plain single-field index becomes a TTL index)' },
    },
    ['collection'],
    {
      200: {
        type: 'object',
        properties: { modified: { type: 'boolean' }, hidden_old: { type: 'boolean' }, hidden_new: { type: 'boolean' }, expireAfterSeconds_old: { type: 'integer' }, expireAfterSeconds_new: { type: 'integer' } },
      },
      404: errorRef,
    },
    async (request) => {
      const b = body<{ collection: string; validator?: unknown; validationLevel?: unknown; validationAction?: unknown; index?: unknown }>(request);
      return withTenant(request, async (store) => settle(request, store, b.collection, docsCollMod(store, b.collection, b)));
    },
  );

  route(
    'renameCollection',
    'Rename a collection with its documents and indexes, atomically (dropTarget: drop a collection already named `to`)',
    { collection, to: { type: 'string', description: 'the new name' }, dropTarget: { type: 'boolean' } },
    ['collection', 'to'],
    { 200: { type: 'object', properties: { renamed: { type: 'boolean' } } }, 404: errorRef },
    async (request) => {
      const b = body<{ collection: string; to: string; dropTarget?: boolean }>(request);
      // The expiry service finds TTL indexes by collection: it learns of the new name.
      return withTenant(request, async (store) => settle(request, store, b.to, docsRenameCollection(store, b.collection, b.to, b)));
    },
  );

  route(
    'estimatedDocumentCount',
    "The number of documents in a collection, from its count (no filter; exact here, MongoDB's is from metadata)",
    { collection },
    ['collection'],
    { 200: { type: 'object', properties: { count: { type: 'integer' } } } },
    (request) => {
      const b = body<{ collection: string }>(request);
      return withTenantNow(request, (store) => ({ count: docsEstimatedCount(store, b.collection) }));
    },
  );

  route(
    'dropCollection',
    'Drop a collection with its documents and indexes',
    { collection },
    ['collection'],
    { 200: { type: 'object', properties: { dropped: { type: 'boolean' } } } },
    async (request) => {
      const b = body<{ collection: string }>(request);
      return withTenant(request, async (store) => settle(request, store, b.collection, docsDropCollection(store, b.collection)));
    },
  );
}
