// What the MongoDB mirror (TETRA_MONGODB_URI, server/mongo-mirror.ts) costs the writes of the
// service as `npm start` runs it: the same durable insertMany load over HTTP against the server
// without a MongoDB and with one, side by side in one run, plus how far behind the mirror runs.
//
//   npm --prefix bench run mongo-mirror -- [--docs=100000] [--callers=8] [--batch=100]
//
// The MongoDB is the routing tests' stand-in in sink mode (bench/servers/mongo-sink-server.ts),
// in a process of its own: it acknowledges and counts, so what is measured is tetradb's side
// (capture, queue, shipping, the driver). No MongoDB server can be had on the machine this was
// written on; against a real one, shipping also waits for MongoDB's own writes, which the
// mirror does off the write path (acknowledgements never wait for it).
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { MongoClient } from 'mongodb';
import { makeDocument } from './lib/documents.js';
import { cpuMicros, freePort, peakSampler, rssMiB, startPeer, startTetra, stop } from './lib/http-servers.js';
import { flagValue, fmtInt, fmtNum, fmtRatio, machineLine, scratchDir, table } from './lib/report.js';

const argv = process.argv.slice(2);
const DOCS = Number(flagValue(argv, 'docs') ?? 100_000);
const CALLERS = Number(flagValue(argv, 'callers') ?? 8);
const BATCH = Number(flagValue(argv, 'batch') ?? 100);

interface Result {
  label: string;
  docsPerSec: number;
  p50: number;
  p99: number;
  rssPeak: number;
  cpuUsPerDoc: number;
  /** After the last acknowledgement: until the MongoDB side counted every document (ms). */
  drainMs?: number;
}

async function run(label: string, mongoUri: string | undefined): Promise<Result> {
  const dir = scratchDir('mongo-mirror-');
  const server = await startTetra(dir.root, [], mongoUri === undefined ? {} : { TETRA_MONGODB_URI: mongoUri });
  try {
    const post = async (body: unknown): Promise<void> => {
      const res = await fetch(`${server.url}/api/mql/insertMany`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${server.apiKey}` }, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`insertMany answered ${res.status}: ${await res.text()}`);
    };
    // Warm-up: the tenant open, the JIT, the mirror's first copy (an empty tenant).
    await post({ collection: 'warm', documents: [{ _id: 'w' }] });
    const latencies: number[] = [];
    let next = 0;
    const cpu0 = cpuMicros(server.child.pid!);
    const rss = peakSampler(() => rssMiB(server.child.pid));
    const start = performance.now();
    await Promise.all(
      Array.from({ length: CALLERS }, async () => {
        for (;;) {
          const first = next;
          next += BATCH;
          if (first >= DOCS) return;
          const documents = Array.from({ length: Math.min(BATCH, DOCS - first) }, (_, i) => makeDocument(first + i));
          const t = performance.now();
          await post({ collection: 'people', documents });
          latencies.push(performance.now() - t);
        }
      }),
    );
    const elapsed = performance.now() - start;
    let drainMs: number | undefined;
    if (mongoUri !== undefined) {
      const client = new MongoClient(mongoUri);
      const tenants = await client.db('tetra_mirror').collection('tenants').find({}).toArray();
      const tenantDb = `tetra_${String(tenants[0]?._id)}`;
      for (;;) {
        const n = await client.db(tenantDb).collection('people').estimatedDocumentCount();
        if (n >= DOCS) break;
        if (performance.now() - start - elapsed > 120_000) throw new Error(`the mirror holds ${n} of ${DOCS} documents after 2 minutes`);
        await new Promise((r) => setTimeout(r, 20));
      }
      drainMs = performance.now() - start - elapsed;
      await client.close();
    }
    const cpu = cpuMicros(server.child.pid!) - cpu0;
    const rssPeak = rss.stop();
    latencies.sort((a, b) => a - b);
    return {
      label,
      docsPerSec: (DOCS / elapsed) * 1000,
      p50: latencies[Math.floor(latencies.length * 0.5)]!,
      p99: latencies[Math.floor(latencies.length * 0.99)]!,
      rssPeak,
      cpuUsPerDoc: cpu / DOCS,
      drainMs,
    };
  } finally {
    await stop(server.child);
    dir.cleanup();
  }
}

console.log(`# MongoDB mirror: durable insertMany over HTTP, ${fmtInt(DOCS)} documents, ${CALLERS} callers, batches of ${BATCH}`);
console.log(machineLine());
const port = await freePort();
const sink: ChildProcess = await startPeer('servers/mongo-sink-server.ts', [String(port)]);
const uri = `mongodb://127.0.0.1:${port}/?directConnection=true`;
try {
  // Alternating order, twice, so neither configuration always runs on a warmer host.
  const results: Result[] = [];
  for (const round of [0, 1]) {
    const pair = round === 0 ? [['without MongoDB', undefined], ['mirrored to MongoDB', uri]] : [['mirrored to MongoDB', uri], ['without MongoDB', undefined]];
    for (const [label, u] of pair as Array<[string, string | undefined]>) results.push(await run(`${label} (run ${round + 1})`, u));
  }
  const base = results.filter((r) => r.label.startsWith('without'));
  const baseRate = base.reduce((n, r) => n + r.docsPerSec, 0) / base.length;
  console.log(
    table(
      ['configuration', 'docs/s', 'of without', 'p50 ms', 'p99 ms', 'server RSS peak MiB', 'server CPU µs/doc', 'mirror drained after last ack'],
      results.map((r) => [r.label, fmtInt(r.docsPerSec), fmtRatio(r.docsPerSec / baseRate), fmtNum(r.p50, 2), fmtNum(r.p99, 2), fmtInt(r.rssPeak), fmtNum(r.cpuUsPerDoc, 1), r.drainMs === undefined ? '-' : `${fmtInt(r.drainMs)} ms`]),
    ),
  );
} finally {
  await stop(sink);
}
