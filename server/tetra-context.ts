import type { FastifyInstance } from 'fastify';
import { fail } from '../engine/errors.js';
import type { ClientWatch } from '../engine/interrupt.js';
import type { CursorRegistry, MemorySettings } from '../engine/docs/index.js';
import type { KvExpiryService } from '../engine/kv/index.js';
import type { Principal, SystemStore } from '../engine/system/index.js';
import type { TenantRegistry, TenantStore } from '../engine/tenant/index.js';
import type { VectorService } from '../engine/vector/index.js';
import type { MongoMirror } from './mongo-mirror.js';
import type { ServerConfig } from './config.js';
import type { FastLane } from './fast-lane.js';
import type { VerifiedKeyCache } from './verified-key-cache.js';

/** What every route may reach: no globals, one context per app instance. */
export interface TetraContext {
  config: ServerConfig;
  system: SystemStore;
  /** How requests authenticate (SystemStore.authenticate behind a short cache) and keys are revoked. */
  keys: VerifiedKeyCache;
  /** The hot routes' second way in (server/fast-lane.ts): routes add themselves to it. */
  lane: FastLane;
  registry: TenantRegistry;
  /** The MongoDB mirror, when TETRA_MONGODB_URI is set (server/mongo-mirror.ts). */
  mirror: MongoMirror | undefined;
  expiry: KvExpiryService;
  /** What one query may hold in memory, and the spill area past it (docs: allowDiskUse). */
  memory: MemorySettings;
  /** Open document cursors (engine/docs/cursors.ts). */
  cursors: CursorRegistry;
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

/**
 * What a route handler may read of its request: a FastifyRequest has it, and so has the fast
 * lane's request, so one handler serves both paths.
 */
export interface RouteRequest {
  readonly id: string;
  readonly server: FastifyInstance;
  readonly principal: Principal | undefined;
  readonly params: unknown;
  readonly body: unknown;
  /** The request's connection: destroyed once its client is gone (long queries stop then). */
  readonly socket: { readonly destroyed: boolean };
}

/**
 * The client of `request`, as long queries watch it: gone once its connection is closed (a
 * client that gave up, timed out or crashed); the query that stops then is logged at info.
 */
export function clientWatch(request: RouteRequest): ClientWatch {
  return {
    gone: () => request.socket.destroyed,
    abandoned() {
      request.server.log.info({ reqId: request.id, tenantId: request.principal?.tenantId }, 'query stopped: its client closed the connection');
    },
  };
}

/** The authenticated principal; the auth hook guarantees it on authenticated routes. */
export function principalOf(request: RouteRequest): Principal {
  if (request.principal === undefined) fail('UNAUTHORIZED');
  return request.principal;
}

/**
 * Runs `fn` against the calling tenant's store, the only way a route reaches tenant data: the
 * tenant comes from the API key, never from the request.
 */
export function withTenant<T>(request: RouteRequest, fn: (store: TenantStore) => T | Promise<T>): Promise<T> {
  const { tenantId } = principalOf(request);
  return request.server.tetra.registry.use(tenantId, fn);
}

/**
 * withTenant for the hot read routes: the value itself when the store answers in this turn
 * (TenantRegistry.useNow), so the route can answer without a turn of the microtask queue.
 */
export function withTenantNow<T>(request: RouteRequest, fn: (store: TenantStore) => T | Promise<T>): T | Promise<T> {
  const { tenantId } = principalOf(request);
  return request.server.tetra.registry.useNow(tenantId, fn);
}
