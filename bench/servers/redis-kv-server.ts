// Peer: Fastify + Redis (ioredis) serving the same GET/PUT shapes as tetradb's KV routes, with
// the same bearer-key check (an in-memory lookup), so the comparison is the store, not the HTTP.
import Fastify from 'fastify';
import { Redis } from 'ioredis';

const [port, redisPort, apiKey] = process.argv.slice(2) as [string, string, string];
const redis = new Redis({ port: Number(redisPort), host: '127.0.0.1', lazyConnect: false });
const app = Fastify({ logger: false });

app.addHook('onRequest', async (request, reply) => {
  if (request.headers.authorization !== `Bearer ${apiKey}`) return reply.code(401).send({ error: { code: 'UNAUTHORIZED' } });
});
app.put<{ Params: { '*': string }; Body: { value: string; ttl?: number } }>(
  '/api/kv/*',
  { schema: { body: { type: 'object', required: ['value'], properties: { value: { type: 'string' }, ttl: { type: ['number', 'null'] } } } } },
  async (request) => {
    const key = request.params['*'];
    const { value, ttl } = request.body;
    if (ttl) await redis.set(key, value, 'PX', Math.ceil(ttl * 1000));
    else await redis.set(key, value);
    return { key, expiresAt: ttl ? new Date(Date.now() + ttl * 1000).toISOString() : null };
  },
);
app.get<{ Params: { '*': string } }>('/api/kv/*', async (request, reply) => {
  const key = request.params['*'];
  const [value, pttl] = await redis.multi().get(key).pttl(key).exec().then((r) => r!.map(([, v]) => v) as [string | null, number]);
  if (value === null) return reply.code(404).send({ error: { code: 'NOT_FOUND', message: 'key not found' } });
  return { key, value, ttl: pttl > 0 ? pttl / 1000 : null, expiresAt: pttl > 0 ? new Date(Date.now() + pttl).toISOString() : null };
});
await app.listen({ port: Number(port), host: '127.0.0.1' });
process.stdout.write('ready\n');
