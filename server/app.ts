import { randomUUID } from 'node:crypto';
import { createServer, STATUS_CODES, type ServerOptions } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifySwagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { refusal, TetraError } from '../engine/errors.js';
import { CursorRegistry, docsExpiry, dropTemporaryCollections, onValidationWarning, upgradeIdKeys } from '../engine/docs/index.js';
import { KvExpiryService, scheduleAllTenants } from '../engine/kv/index.js';
import { PageCache, SPILL_DIR, SpillArea, type TreeNode } from '../engine/storage/index.js';
import { SystemStore, type Principal } from '../engine/system/index.js';
import { TenantRegistry } from '../engine/tenant/index.js';
import { loadEmbedder, VectorService } from '../engine/vector/index.js';
import { startMemoryGovernor, type ServerConfig } from './config.js';
import { sendError } from './error-handler.js';
import { FastLane, LaneIncomingMessage } from './fast-lane.js';
import { parseJsonBody } from './json-body.js';
import { lazyChildLogger } from './lazy-request-logger.js';
import { RateLimiter } from './rate-limiter.js';
import { keyRoutes, signupRoute } from './routes/auth-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { kvRoutes } from './routes/kv-routes.js';
import { mqlRoutes } from './routes/mql-routes.js';
import { sqlRoutes } from './routes/sql-routes.js';
import { vectorRoutes } from './routes/vector-routes.js';
import { bearer, errorSchema } from './schemas.js';
import type { TetraContext } from './tetra-context.js';
import { VerifiedKeyCache } from './verified-key-cache.js';

/** tetradb's version from its package.json: the nearest one above this file (source, or a build under dist/). */
function packageVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version: string };
      if (pkg.name === 'tetradb') return pkg.version;
    } catch {
      // none here
    }
    if (dir.pathname === '/') throw new Error('package.json of tetradb not found');
  }
}
const VERSION = packageVersion();
const REQUEST_ID = /^[\w.:-]{1,128}$/;
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

// pino's numbers for its levels; silent is above them all.
const LEVEL_RANK: Record<ServerConfig['logLevel'], number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** What buildApp takes besides the configuration. */
export interface BuildOptions {
  /** Where log lines go instead of stdout (JSON lines; logFormat is then ignored); for tests. */
  logStream?: { write(line: string): void };
}

/** Fastify's logger option: pino at the configured level, pretty or JSON lines, or none. */
function loggerOptions(config: ServerConfig, options: BuildOptions): FastifyServerOptions['logger'] {
  if (config.logLevel === 'silent') return false;
  if (options.logStream !== undefined) return { level: config.logLevel, stream: options.logStream };
  if (config.logFormat === 'pretty') {
    return { level: config.logLevel, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname', singleLine: true } } };
  }
  // 'json', and 'auto' when nobody resolved it (main.ts does, from stdout): pino's JSON lines.
  return { level: config.logLevel };
}

/**
 * Builds a complete tetradb service: opens the system store and the tenant registry under
 * config.dataDir and returns a Fastify instance ready to listen. Closing the instance (app.close)
 * finishes in-flight requests, then checkpoints and closes every store. No global state: tests
 * build many.
 */
export async function buildApp(config: ServerConfig, options: BuildOptions = {}): Promise<FastifyInstance> {
  // One cache and one dirty budget for every store: memory is bounded by these two settings.
  const cache = new PageCache<TreeNode>(config.cacheBytes, { dirtyBytes: config.dirtyBytes });
  const system = await SystemStore.open({ dir: join(config.dataDir, 'system'), cache, fsync: config.fsync });
  // Queries past their memory bound spill here (allowDiskUse); what a killed process left is
  // removed before any query runs. Off when TETRA_MQL_SPILL_BYTES is 0.
  const spill = config.mqlSpillBytes > 0 ? new SpillArea(config.spillDir ?? join(config.dataDir, SPILL_DIR), config.mqlSpillBytes) : undefined;
  const leftovers = (await spill?.removeLeftovers()) ?? 0;
  // With TETRA_MONGODB_URI: every tenant's collections mirrored there as its store opens.
  // (The driver is loaded only then: importing it costs ~250 ms and ~20 MiB.)
  const mirror =
    config.mongodbUri === undefined
      ? undefined
      : new (await import('./mongo-mirror.js')).MongoMirror({ uri: config.mongodbUri, dbPrefix: config.mongodbDbPrefix, timeoutMs: config.mongodbTimeoutMs, maxQueueBytes: config.mongodbQueueBytes, log: { warn: (o, m) => app.log.warn(o, m), info: (o, m) => app.log.info(o, m) } });
  const registry = new TenantRegistry({
    dataDir: config.dataDir,
    cache,
    fsync: config.fsync,
    maxOpen: config.maxOpenTenants,
    snapshotMaxAgeMs: config.snapshotMaxAgeMs,
    // Stored data written by earlier versions is brought up to date before a request reads it.
    prepare: async (store, tenantId) => {
      await upgradeIdKeys(store);
      // A $out cut short by a crash left its hidden collection (its target is as it was): dropped.
      await dropTemporaryCollections(store);
      // A collection's validationAction "warn" lets a failing document through: logged, as MongoDB logs it.
      onValidationWarning(store, ({ collection, id, written, details }) =>
        app.log.warn({ tenantId, collection, _id: id, errInfo: { failingDocumentId: id, details } }, written ? 'document failed validation (validationAction: warn), written' : 'document failed validation (validationAction: errorAndLog), refused'),
      );
      mirror?.attach(tenantId, store);
    },
  });

  // The embedder: all-MiniLM-L6-v2 when its files are in the model directory, else the fallback.
  const embedding = await loadEmbedder({
    modelDir: config.embeddingModelDir,
    batchSize: config.embeddingBatchSize,
    ...(config.embeddingThreads > 0 ? { intraOpThreads: config.embeddingThreads } : {}),
  });

  const requestId = (given: string | string[] | undefined): string => (typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID());
  // The hot data routes are answered by the fast lane when it can take the request, by Fastify
  // otherwise (server/fast-lane.ts). The server is made as Fastify makes its own.
  let lane: FastLane | undefined;
  const app = Fastify({
    serverFactory: (handler, factoryOptions) => {
      // Fastify's options after its defaults: what it sets on a server it makes itself.
      const opts = factoryOptions as unknown as { http?: ServerOptions; keepAliveTimeout: number; requestTimeout: number; connectionTimeout: number; maxRequestsPerSocket: number };
      // A request's headers and body must arrive within requestTimeout (a client trickling a body
      // would otherwise hold its connection, and a lane request, for ever). Node checks the open
      // connections every connectionsCheckingInterval: a tenth of the timeout keeps the cut-off
      // within 10% of it.
      const timeout = opts.requestTimeout;
      const checking = timeout > 0 ? { connectionsCheckingInterval: Math.max(50, Math.min(30_000, Math.floor(timeout / 10))), headersTimeout: Math.min(60_000, timeout) } : {};
      const server = createServer({ ...opts.http, ...checking, IncomingMessage: LaneIncomingMessage }, (req, res) => {
        if (lane === undefined || !lane.handle(req, res)) handler(req, res);
      });
      server.keepAliveTimeout = opts.keepAliveTimeout;
      server.requestTimeout = opts.requestTimeout;
      server.setTimeout(opts.connectionTimeout);
      if (opts.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = opts.maxRequestsPerSocket;
      return server;
    },
    logger: loggerOptions(config, options),
    // Fastify's own request logging writes two info lines per request; the onResponse hook
    // below writes one, at debug.
    logController: new LogController({ disableRequestLogging: true }),
    // request.log is made on first use: most requests never log.
    childLoggerFactory: lazyChildLogger,
    bodyLimit: config.bodyLimit,
    requestTimeout: config.requestTimeoutMs,
    genReqId: (req) => requestId(req.headers['x-request-id']),
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    // Errors Node's HTTP parser raises before a request exists (a request that did not arrive
    // in time, oversized headers, malformed HTTP) get the service's error body too, then the
    // connection closes (as Fastify's own handler does). No request exists: the id is a new one.
    clientErrorHandler: (err: NodeJS.ErrnoException, socket) => {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const code = err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : err.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : 'VALIDATION_FAILED';
      const tetra = new TetraError(code, code === 'VALIDATION_FAILED' ? 'malformed HTTP request' : undefined);
      const body = JSON.stringify({ error: { code: tetra.code, message: tetra.message } });
      if (socket.writable) {
        socket.write(`HTTP/1.1 ${tetra.status} ${STATUS_CODES[tetra.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nX-Request-Id: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`);
      }
      socket.destroy(err);
    },
    // The router's own refusals (a path that is not valid percent-encoding, a parameter past
    // maxParamLength) come before any hook: the service's error body and request id, not Fastify's.
    frameworkErrors: (err, request, reply) => {
      void reply.header('x-request-id', request.id);
      sendError(err, request, reply);
    },
    forceCloseConnections: 'idle',
    // Requests that arrive while closing are refused by the onRequest hook below, with the
    // service's error body (Fastify's own 503 has a body of its own shape).
    return503OnClosing: false,
  });

  // Everything but signup requires a key: the same check on both paths (Fastify's hook, the lane).
  const limiter = config.rateLimit > 0 ? new RateLimiter({ capacity: config.rateLimit, perSecond: config.rateLimit }) : undefined;
  /** The principal, or why the key is refused (no error object: the lane only needs to know). */
  const principalOf = (authorization: string | undefined): Principal | string => {
    const match = BEARER.exec(authorization ?? '');
    if (match === null) return 'missing or malformed Authorization header; expected "Bearer <apiKey>"';
    return keys.authenticate(match[1]!) ?? 'invalid or revoked API key';
  };
  /** @throws UNAUTHORIZED */
  const authenticate = (authorization: string | undefined): Principal => {
    const principal = principalOf(authorization);
    if (typeof principal === 'string') throw refusal('UNAUTHORIZED', principal);
    return principal;
  };
  /** Takes a token: the RateLimit-* headers, and whether the request may go on. */
  const rateLimit = (principal: Principal): { headers: Record<string, string>; allowed: boolean; retryAfterSeconds: number } => {
    if (limiter === undefined) return { headers: {}, allowed: true, retryAfterSeconds: 0 };
    const taken = limiter.take(principal.keyId);
    const headers = { 'ratelimit-limit': String(limiter.capacity), 'ratelimit-remaining': String(taken.remaining), 'ratelimit-reset': String(taken.resetSeconds) };
    return { headers, allowed: taken.allowed, retryAfterSeconds: taken.retryAfterSeconds };
  };
  // One access line per request at debug, a warn line for a slow one: the default level (info)
  // costs a comparison per request, no formatting. Decided once: the level never changes.
  const accessLines = LEVEL_RANK[config.logLevel] <= LEVEL_RANK.debug;
  const slowMs = LEVEL_RANK[config.logLevel] <= LEVEL_RANK.warn ? config.slowRequestMs : 0;
  const onResponse = (log: () => FastifyBaseLogger, method: string, url: string, statusCode: number, elapsed: number): void => {
    const slow = slowMs > 0 && elapsed >= slowMs;
    if (!accessLines && !slow) return;
    // The logger carries the reqId.
    const line = { method, url, statusCode, responseTime: Math.round(elapsed * 100) / 100 };
    if (slow) log().warn({ ...line, slowRequestMs: slowMs }, 'slow request');
    else log().debug(line, 'request completed');
  };

  const expiry = new KvExpiryService(registry, { sweepers: [docsExpiry], onError: (err, tenantId) => app.log.error({ err, tenantId }, 'active expiry failed') });
  const keys = new VerifiedKeyCache(system);
  const vectors = new VectorService({ embedder: embedding.embedder, memoryBytes: config.vectorMemoryBytes, onError: (err, what) => app.log.error({ err }, `${what} failed`) });
  // Started once the stores are open and the embedding model loaded: the RSS growth it bounds is
  // what the data brings, within cache + dirty budget + the vector graphs loaded (docs/configuration.md, Memory).
  // The MongoDB mirror's queue is within its own configured bound, counted like the vector graphs.
  const governor = startMemoryGovernor(cache, config, () => vectors.memoryUsed + (mirror?.queuedBytes ?? 0));
  lane = new FastLane({
    app,
    bodyLimit: config.bodyLimit,
    authenticate: (authorization) => {
      try {
        const principal = principalOf(authorization);
        return typeof principal === 'string' ? undefined : principal;
      } catch {
        return undefined; // Fastify answers it (UNAVAILABLE once the system store closed)
      }
    },
    rateLimit: (principal) => {
      const limited = rateLimit(principal);
      // Over the limit: Fastify answers the 429 (its own take() takes nothing from an empty bucket).
      return limited.allowed ? limited.headers : undefined;
    },
    requestId,
    onResponse,
  });
  const tetra: TetraContext = {
    config,
    lane,
    system,
    keys,
    registry,
    mirror,
    expiry,
    memory: { maxBlockingBytes: config.mqlBlockingBytes, spill },
    cursors: new CursorRegistry({ maxOpen: config.mqlMaxCursors, maxPerTenant: config.mqlCursorsPerTenant, idleMs: config.mqlCursorTimeoutMs }),
    vectors,
    embedding: { id: embedding.embedder.id, kind: embedding.embedder.kind, dims: embedding.embedder.dims, reason: embedding.reason },
    startedAt: Date.now(),
    version: VERSION,
  };
  app.decorate('tetra', tetra);
  app.decorateRequest('principal', undefined);

  // JSON only: drop the default parsers (text/plain included) so anything else is 415, and treat
  // an empty JSON body as no body (curl -X DELETE -H 'content-type: application/json').
  // '__proto__' and 'constructor' keys are kept as plain data (JSON.parse makes them own
  // properties): the document model stores them as fields, and no route merges a body into an
  // object (which is what could turn them into prototype changes).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    let value: unknown;
    try {
      value = parseJsonBody(body as string);
    } catch (err) {
      return done(err as Error, undefined);
    }
    return done(null, value);
  });

  // Hooks on the path of every request are callback hooks: an async one costs a promise and a
  // microtask turn per request.
  let closing = false;
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id);
    // Fastify adds Connection: close to every answer while closing.
    if (closing) return done(new TetraError('UNAVAILABLE', 'the server is shutting down: retry on another instance or after restart'));
    done();
  });
  if (accessLines || slowMs > 0) {
    // A callback hook, not an async one: no promise per request.
    app.addHook('onResponse', (request, reply, done) => {
      onResponse(() => request.log, request.method, request.url, reply.statusCode, reply.elapsedTime);
      done();
    });
  }
  app.setErrorHandler((err, request, reply) => sendError(err, request, reply));
  app.setNotFoundHandler((request, reply) => sendError(new TetraError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`), request, reply));
  app.addSchema(errorSchema);

  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'tetradb', version: VERSION, description: 'SQL, documents, key-value and vector search over one HTTP/JSON API.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'tetra_<keyId>_<secret>' } } },
    },
  });

  signupRoute(app);

  // The hook runs before the body is read.
  await app.register(async (authed) => {
    authed.addHook('onRequest', (request, reply, done) => {
      let principal: Principal;
      try {
        principal = authenticate(request.headers.authorization);
      } catch (err) {
        return done(err as Error);
      }
      request.principal = principal;
      const limited = rateLimit(principal);
      void reply.headers(limited.headers);
      if (!limited.allowed) {
        void reply.header('retry-after', String(limited.retryAfterSeconds));
        return done(refusal('RATE_LIMITED', `rate limit of ${limiter!.capacity} requests per second exceeded; retry in ${limited.retryAfterSeconds} s`));
      }
      done();
    });
    keyRoutes(authed);
    healthRoutes(authed);
    kvRoutes(authed);
    mqlRoutes(authed);
    sqlRoutes(authed);
    vectorRoutes(authed, vectors);
    authed.get(
      '/api/openapi.json',
      { schema: { summary: 'This document', tags: ['meta'], security: bearer, hide: true } },
      async () => app.swagger(),
    );
  });

  app.addHook('onReady', async () => {
    if (leftovers > 0) app.log.warn({ dir: spill!.dir, files: leftovers }, 'removed spill files left by a previous process');
    app.log.info({ embedder: embedding.embedder.id, dims: embedding.embedder.dims }, `embedder: ${embedding.reason}`);
    expiry.start();
    // Pick up expirations persisted before this start, without delaying readiness.
    void scheduleAllTenants(expiry, registry, system.listTenantIds()).catch((err: unknown) => app.log.error({ err }, 'expiry start-up sweep failed'));
  });
  // The lane hands new requests to Fastify (503 while closing) and finishes its own first.
  app.addHook('preClose', async () => {
    closing = true;
    lane!.close();
  });
  app.addHook('onClose', async () => {
    governor?.stop();
    await lane!.drained();
    await expiry.stop();
    await tetra.cursors.close();
    await registry.close();
    await mirror?.close();
    await system.close();
    await embedding.embedder.close();
  });
  return app;
}
