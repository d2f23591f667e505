// Peer: the plainest Fastify app, the ceiling any Fastify service can reach on this machine.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));
// The same with a fixed amount of CPU work per request (a busy wait of :us microseconds): what a
// route doing that much work can reach at best on this machine, the yardstick for "x of hello".
app.get('/work/:us', async (request) => {
  const end = performance.now() + Number((request.params as { us: string }).us) / 1000;
  while (performance.now() < end);
  return { hello: 'world' };
});
// A POST with a JSON body to parse: what a POST route costs Fastify before any work.
app.post('/echo', async (request) => ({ got: Object.keys(request.body as object).length }));
await app.listen({ port: Number(process.argv[2]), host: '127.0.0.1' });
process.stdout.write('ready\n');
