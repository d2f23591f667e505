// Many tenants loading at once over HTTP: the server's RSS growth against the configured bound
// (cache + dirty budget), with the memory governor off (TETRA_MEMORY_CHECK_MS=0) and as `npm
// start` runs it, then finds by _id spread over every tenant. The governor is process-wide, so it
// governs all tenants together; this shows it does, and what it costs a read mix afterwards.
//
//   npm --prefix bench run tenants-memory [-- --tenants=64 --docs=20000 --find-seconds=5]
//
// The server runs as `npm start` runs it except --rate-limit 0 and --signup-rate-limit 0 (the
// bench signs up every tenant from one address and sends more than 1000 requests/s per key).
// Each tenant gets an index on email and loads its documents in batches of 500 through
// insertMany; all tenants load at once. RSS is read from /proc every 50 ms.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../server/config.js';
import { docId, makeDocument } from './lib/documents.js';
import { peakSampler, rssMiB, startTetra, stop } from './lib/http-servers.js';
import { flagValue, fmtInt, table } from './lib/report.js';

const BATCH = 500;
const CONNECTIONS = 32;

const argv = process.argv.slice(2);
const tenants = Number(flagValue(argv, 'tenants') ?? 64);
const docs = Number(flagValue(argv, 'docs') ?? 20_000);
const findSeconds = Number(flagValue(argv, 'find-seconds') ?? 5);
const server = loadConfig(process.env, []);
const boundMiB = (server.cacheBytes + server.dirtyBytes) / 2 ** 20;

async function post(url: string, path: string, body: unknown, key?: string): Promise<any> {
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

interface Row {
  mode: string;
  loadSeconds: number;
  baseMiB: number;
  peakMiB: number;
  afterMiB: number;
  findsPerSecond: number;
  findPeakMiB: number;
}

async function run(mode: 'off' | 'on'): Promise<Row> {
  const dir = mkdtempSync(join(tmpdir(), 'tenants-memory-'));
  const flags = ['--rate-limit', '0', '--signup-rate-limit', '0', ...(mode === 'off' ? ['--memory-check-ms', '0'] : [])];
  const tetra = await startTetra(dir, flags);
  try {
    const keys: string[] = [];
    for (let t = 0; t < tenants; t++) {
      const { apiKey } = await post(tetra.url, '/api/auth/signup', { orgName: `t${t}`, email: `t${t}@example.com` });
      await post(tetra.url, '/api/mql/createIndex', { collection: 'people', keys: { email: 1 } }, apiKey);
      keys.push(apiKey);
    }
    const pid = tetra.child.pid;
    const baseMiB = rssMiB(pid);
    const loadPeak = peakSampler(() => rssMiB(pid), 50);
    const t0 = performance.now();
    await Promise.all(
      keys.map(async (key, t) => {
        for (let from = 0; from < docs; from += BATCH) {
          const documents = [];
          for (let i = from; i < Math.min(docs, from + BATCH); i++) documents.push(makeDocument(t * docs + i));
          await post(tetra.url, '/api/mql/insertMany', { collection: 'people', documents }, key);
        }
      }),
    );
    const loadSeconds = (performance.now() - t0) / 1000;
    const peakMiB = loadPeak.stop();
    const afterMiB = rssMiB(pid);
    // Finds by _id over every tenant, CONNECTIONS at a time.
    const findPeak = peakSampler(() => rssMiB(pid), 50);
    let done = 0;
    let seed = 1;
    const until = performance.now() + findSeconds * 1000;
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async () => {
        while (performance.now() < until) {
          seed = (seed * 1103515245 + 12345) % 2 ** 31;
          const t = seed % tenants;
          const r = await post(tetra.url, '/api/mql/find', { collection: 'people', filter: { _id: docId(t * docs + (seed >> 8) % docs) } }, keys[t]);
          if (r.documents.length !== 1) throw new Error('a find by _id found nothing');
          done++;
        }
      }),
    );
    return { mode, loadSeconds, baseMiB, peakMiB, afterMiB, findsPerSecond: done / findSeconds, findPeakMiB: findPeak.stop() };
  } finally {
    await stop(tetra.child);
    rmSync(dir, { recursive: true, force: true });
  }
}

const rows: Row[] = [];
for (const mode of ['off', 'on'] as const) {
  process.stderr.write(`  governor ${mode}: ${tenants} tenants x ${docs} documents...\n`);
  rows.push(await run(mode));
}
console.log(`\n# ${tenants} tenants loading ${fmtInt(docs)} documents each at once over HTTP (${fmtInt(tenants * docs)} in all), then ${findSeconds} s of finds by _id over every tenant\n`);
console.log(`- the server as \`npm start\` runs it except --rate-limit 0 --signup-rate-limit 0; cache ${server.cacheBytes / 2 ** 20} MiB + dirty budget ${server.dirtyBytes / 2 ** 20} MiB = bound ${boundMiB} MiB; RSS read from /proc every 50 ms; growth = peak - RSS after the tenants were created\n`);
console.log(
  table(
    ['memory governor', 'load s', 'docs/s', 'RSS after sign-ups MiB', 'load peak RSS MiB', 'growth MiB', 'of the bound', 'RSS after load MiB', 'finds/s', 'peak RSS during finds MiB'],
    rows.map((r) => [
      r.mode === 'off' ? 'off (TETRA_MEMORY_CHECK_MS=0)' : `on (every ${server.memoryCheckMs} ms)`,
      r.loadSeconds.toFixed(1),
      fmtInt((tenants * docs) / r.loadSeconds),
      fmtInt(r.baseMiB),
      fmtInt(r.peakMiB),
      fmtInt(r.peakMiB - r.baseMiB),
      `${((r.peakMiB - r.baseMiB) / boundMiB).toFixed(2)}x`,
      fmtInt(r.afterMiB),
      fmtInt(r.findsPerSecond),
      fmtInt(r.findPeakMiB),
    ]),
  ),
);
