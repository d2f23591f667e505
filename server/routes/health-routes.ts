import type { FastifyInstance } from 'fastify';
import { authedErrors, bearer } from '../schemas.js';
import { withTenant } from '../tetra-context.js';

/** GET /api/health: liveness plus the caller's tenant (auth required, as the spec says). */
export function healthRoutes(app: FastifyInstance): void {
  app.get(
    '/api/health',
    {
      schema: {
        summary: 'Service status and your tenant',
        tags: ['health'],
        security: bearer,
        response: {
          200: {
            type: 'object',
            properties: {
              status: { type: 'string', enum: ['ok'] },
              version: { type: 'string' },
              uptimeSeconds: { type: 'number' },
              embedding: {
                type: 'object',
                description: 'The embedder of the vector store: all-MiniLM-L6-v2 through ONNX when its files are present, else the built-in lexical fallback.',
                properties: {
                  model: { type: 'string', description: 'the embedder id stored with each record' },
                  kind: { type: 'string', enum: ['onnx', 'fallback'] },
                  dimensions: { type: 'integer' },
                  reason: { type: 'string', description: 'why this embedder is active' },
                },
              },
              tenant: { type: 'object', properties: { id: { type: 'string' }, storageBytes: { type: 'integer' } } },
              mongodb: {
                type: 'object',
                description: 'The external MongoDB of aggregation routing (TETRA_MONGODB_URI), and the mirror of your collections there.',
                properties: {
                  configured: { type: 'boolean' },
                  mirror: {
                    type: 'object',
                    nullable: true,
                    properties: {
                      state: { type: 'string', enum: ['starting', 'copying', 'shipping', 'live', 'retrying', 'stopped'] },
                      mirroredLsn: { type: 'integer', description: 'the last batch of yours MongoDB holds (-1: not yet copied)' },
                      queuedBatches: { type: 'integer', description: 'batches of yours waiting to be sent' },
                    },
                  },
                },
              },
            },
          },
          ...authedErrors,
        },
      },
    },
    async (request) => {
      const { tetra } = app;
      const tenant = await withTenant(request, (store) => ({ id: request.principal!.tenantId, storageBytes: store.storageBytes }));
      const mirror = tetra.mirror?.status(tenant.id);
      return {
        status: 'ok',
        version: tetra.version,
        uptimeSeconds: Math.round((Date.now() - tetra.startedAt) / 100) / 10,
        embedding: { model: tetra.embedding.id, kind: tetra.embedding.kind, dimensions: tetra.embedding.dims, reason: tetra.embedding.reason },
        tenant,
        mongodb: tetra.mirror === undefined ? { configured: false } : { configured: true, mirror: mirror === undefined ? null : { state: mirror.state, mirroredLsn: mirror.appliedLsn, queuedBatches: mirror.queued } },
      };
    },
  );
}
