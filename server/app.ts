import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifySwagger from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import { TetraError } from '../engine/errors.js';
import { KvExpiryService, scheduleAllTenants } from '../engine/kv/index.js';
import { PageCache, type TreeNode } from '../engine/storage/index.js';
import { SystemStore } from '../engine/system/index.js';
import { TenantRegistry } from '../engine/tenant/index.js';
import type { ServerConfig } from './config.js';
import { sendError } from './error-handler.js';
import { RateLimiter } from './rate-limiter.js';
import { keyRoutes, signupRoute } from './routes/auth-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import { kvRoutes } from './routes/kv-routes.js';
import { bearer, errorSchema } from './schemas.js';
import type { TetraContext } from './tetra-context.js';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const REQUEST_ID = /^[\w.:-]{1,128}$/;
const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * Builds a complete tetradb service: opens the system store and the tenant registry under
 * config.dataDir and returns a Fastify instance ready to listen. Closing the instance (app.close)
 * finishes in-flight requests, then checkpoints and closes every store. No global state: tests
 * build many.
 */
export async function buildApp(config: ServerConfig): Promise<FastifyInstance> {
  const cache = new PageCache<TreeNode>(config.cacheBytes);
  const system = await SystemStore.open({ dir: join(config.dataDir, 'system'), cache, fsync: config.fsync });
  const registry = new TenantRegistry({ dataDir: config.dataDir, cache, fsync: config.fsync, maxOpen: config.maxOpenTenants });

  const app = Fastify({
    logger: config.logLevel === 'silent' ? false : { level: config.logLevel },
    bodyLimit: config.bodyLimit,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false } },
    forceCloseConnections: 'idle',
    return503OnClosing: true,
  });

  const expiry = new KvExpiryService(registry, { onError: (err, tenantId) => app.log.error({ err, tenantId }, 'active expiry failed') });
  const tetra: TetraContext = { config, system, registry, expiry, startedAt: Date.now(), version: VERSION };
  app.decorate('tetra', tetra);
  app.decorateRequest('principal', undefined);

  // JSON only: drop the default parsers (text/plain included) so anything else is 415, and treat
  // an empty JSON body as no body (curl -X DELETE -H 'content-type: application/json').
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    json(request, body as string, (err: Error | null, value: unknown) => {
      if (err) return done(new TetraError('INVALID_JSON', `request body is not valid JSON: ${err.message}`), undefined);
      return done(null, value);
    });
  });

  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
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

  // Everything else requires a key. The hook runs before the body is read.
  const limiter = config.rateLimit > 0 ? new RateLimiter({ capacity: config.rateLimit, perSecond: config.rateLimit }) : undefined;
  await app.register(async (authed) => {
    authed.addHook('onRequest', async (request, reply) => {
      const match = BEARER.exec(request.headers.authorization ?? '');
      if (match === null) throw new TetraError('UNAUTHORIZED', 'missing or malformed Authorization header; expected "Bearer <apiKey>"');
      const principal = system.authenticate(match[1]!);
      if (principal === undefined) throw new TetraError('UNAUTHORIZED', 'invalid or revoked API key');
      request.principal = principal;
      if (limiter === undefined) return;
      const taken = limiter.take(principal.keyId);
      void reply.header('ratelimit-limit', String(limiter.capacity));
      void reply.header('ratelimit-remaining', String(taken.remaining));
      void reply.header('ratelimit-reset', String(taken.resetSeconds));
      if (!taken.allowed) {
        void reply.header('retry-after', String(taken.retryAfterSeconds));
        throw new TetraError('RATE_LIMITED', `rate limit of ${limiter.capacity} requests per second exceeded; retry in ${taken.retryAfterSeconds} s`);
      }
    });
    keyRoutes(authed);
    healthRoutes(authed);
    kvRoutes(authed);
    authed.get(
      '/api/openapi.json',
      { schema: { summary: 'This document', tags: ['meta'], security: bearer, hide: true } },
      async () => app.swagger(),
    );
  });

  app.addHook('onReady', async () => {
    expiry.start();
    // Pick up expirations persisted before this start, without delaying readiness.
    void scheduleAllTenants(expiry, registry, system.listTenantIds()).catch((err: unknown) => app.log.error({ err }, 'expiry start-up sweep failed'));
  });
  app.addHook('onClose', async () => {
    await expiry.stop();
    await registry.close();
    await system.close();
  });
  return app;
}
