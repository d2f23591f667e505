import type { FastifyRequest } from 'fastify';
import { fail } from '../engine/errors.js';
import type { KvExpiryService } from '../engine/kv/index.js';
import type { Principal, SystemStore } from '../engine/system/index.js';
import type { TenantRegistry, TenantStore } from '../engine/tenant/index.js';
import type { VectorService } from '../engine/vector/index.js';
import type { ServerConfig } from './config.js';
import type { VerifiedKeyCache } from './verified-key-cache.js';

/** What every route may reach: no globals, one context per app instance. */
export interface TetraContext {
  config: ServerConfig;
  system: SystemStore;
  /** How requests authenticate (SystemStore.authenticate behind a short cache) and keys are revoked. */
  keys: VerifiedKeyCache;
  registry: TenantRegistry;
  expiry: KvExpiryService;
  vectors: VectorService;
  /** The active embedder and why it was chosen (health reports it). */
  embedding: { id: string; kind: 'onnx' | 'fallback'; dims: number; reason: string };
  startedAt: number;
  version: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    tetra: TetraContext;
  }
  interface FastifyRequest {
    principal: Principal | undefined;
  }
}

/** The authenticated principal; the auth hook guarantees it on authenticated routes. */
export function principalOf(request: FastifyRequest): Principal {
  if (request.principal === undefined) fail('UNAUTHORIZED');
  return request.principal;
}

/**
 * Runs `fn` against the calling tenant's store, the only way a route reaches tenant data: the
 * tenant comes from the API key, never from the request.
 */
export function withTenant<T>(request: FastifyRequest, fn: (store: TenantStore) => T | Promise<T>): Promise<T> {
  const { tenantId } = principalOf(request);
  return request.server.tetra.registry.use(tenantId, fn);
}
