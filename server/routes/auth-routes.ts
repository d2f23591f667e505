import type { FastifyInstance } from 'fastify';
import { TetraError } from '../../engine/errors.js';
import { RateLimiter } from '../rate-limiter.js';
import { anyRouteErrors, authedErrors, bearer, errorRef, isoDate, nullableIsoDate } from '../schemas.js';
import { principalOf } from '../tetra-context.js';

const userSchema = { type: 'object', properties: { id: { type: 'string' }, email: { type: 'string' }, createdAt: isoDate } } as const;
const tenantSchema = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, createdAt: isoDate } } as const;
const keySchema = {
  type: 'object',
  properties: { id: { type: 'string' }, name: { type: ['string', 'null'] }, createdAt: isoDate, createdBy: { type: 'string' }, lastUsedAt: nullableIsoDate },
} as const;

/** POST /api/auth/signup: public, limited per client IP. */
export function signupRoute(app: FastifyInstance): void {
  const perMinute = app.tetra.config.signupRateLimit;
  const limiter = perMinute > 0 ? new RateLimiter({ capacity: perMinute, perSecond: perMinute / 60 }) : undefined;
  app.post(
    '/api/auth/signup',
    {
      schema: {
        summary: 'Create a user, its tenant and a first API key (shown once)',
        tags: ['auth'],
        body: {
          type: 'object',
          required: ['orgName', 'email'],
          additionalProperties: false,
          // Loose bounds on what arrives: the limits (200 characters of name, 254 of address)
          // apply after trimming, in the system store (docs/api.md).
          properties: { orgName: { type: 'string', minLength: 1, maxLength: 1024 }, email: { type: 'string', maxLength: 1024 } },
        },
        response: {
          201: { type: 'object', properties: { apiKey: { type: 'string' }, user: userSchema, tenant: tenantSchema } },
          ...anyRouteErrors,
          409: errorRef,
          429: errorRef,
        },
      },
      onRequest: async (request, reply) => {
        if (limiter === undefined) return;
        const taken = limiter.take(request.ip);
        if (!taken.allowed) {
          void reply.header('retry-after', String(taken.retryAfterSeconds));
          throw new TetraError('RATE_LIMITED', `too many signups from this address; retry in ${taken.retryAfterSeconds} s`);
        }
      },
    },
    async (request, reply) => {
      const body = request.body as { orgName: string; email: string };
      const { apiKey, user, tenant } = await app.tetra.system.signup({ orgName: body.orgName, email: body.email });
      return reply.code(201).send({ apiKey, user, tenant });
    },
  );
}

/** The API key routes (authenticated). */
export function keyRoutes(app: FastifyInstance): void {
  app.post(
    '/api/auth/keys',
    {
      schema: {
        summary: 'Create another API key for your tenant (shown once)',
        tags: ['auth'],
        security: bearer,
        body: { type: ['object', 'null'], additionalProperties: false, properties: { name: { type: 'string', minLength: 1, maxLength: 100 } } },
        response: { 201: { type: 'object', properties: { apiKey: { type: 'string' }, key: keySchema } }, ...authedErrors },
      },
    },
    async (request, reply) => {
      const name = (request.body as { name?: string } | undefined)?.name;
      const created = await app.tetra.system.createKey(principalOf(request), name);
      return reply.code(201).send(created);
    },
  );

  app.get(
    '/api/auth/keys',
    {
      schema: {
        summary: "List your tenant's API keys (never their secrets)",
        tags: ['auth'],
        security: bearer,
        response: { 200: { type: 'object', properties: { keys: { type: 'array', items: keySchema } } }, ...authedErrors },
      },
    },
    async (request) => {
      const keys = app.tetra.system.listKeys(principalOf(request).tenantId);
      await app.tetra.system.whenDurable();
      return { keys };
    },
  );

  app.delete(
    '/api/auth/keys/:keyId',
    {
      schema: {
        summary: 'Revoke an API key; requests with it get 401 at once',
        tags: ['auth'],
        security: bearer,
        params: { type: 'object', required: ['keyId'], properties: { keyId: { type: 'string', minLength: 1, maxLength: 64 } } },
        response: { 200: { type: 'object', properties: { keyId: { type: 'string' }, revoked: { type: 'boolean' } } }, 404: errorRef, ...authedErrors },
      },
    },
    async (request) => {
      const { keyId } = request.params as { keyId: string };
      await app.tetra.keys.revokeKey(principalOf(request).tenantId, keyId);
      return { keyId, revoked: true };
    },
  );
}
