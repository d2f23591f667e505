// Server CPU per request on the hot HTTP routes, next to a Fastify hello-world in the same run.
//
// Throughput over loopback on two cores is shared between the load generator and the server, so
// req/s ratios move with whatever else runs. CPU time the server process spends per request
// (utime + stime from /proc/<pid>/stat over a timed autocannon run, divided by the requests it
// answered) is a steadier figure of what a route costs; both are printed.
//
//   npm --prefix bench run http-cpu [-- --seconds=S --connections=N --rounds=N --routes=a,b]
//
// Two hello-world routes that busy-wait 10 and 20 µs per request calibrate the ratios: on this
// machine, any route doing that much CPU work per request reaches only those fractions of the
// hello-world, whatever serves it.
//
// tetradb runs as `npm start` runs it, except --rate-limit 0 (the default 1000 requests/s per key
// would answer most requests 429), on a free port and a fresh data directory.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { cpuMicros, freePort, rssMiB, startPeer, startTetra, stop } from './lib/http-servers.js';
import { flagValue } from './lib/report.js';

interface Config {
  seconds: number;
  connections: number;
  rounds: number;
  routes: string[] | undefined;
}

function parseArgs(argv: string[]): Config {
  const value = (name: string): string | undefined => flagValue(argv, name);
  return {
    seconds: Number(value('seconds') ?? 5),
    connections: Number(value('connections') ?? 32),
    rounds: Number(value('rounds') ?? 3),
    routes: value('routes')?.split(','),
  };
}


interface Probe {
  name: string;
  target: 'hello' | 'tetra';
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: unknown;
}

interface Measured {
  reqPerSec: number;
  cpuUsPerReq: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function measure(pid: number, url: string, probe: Probe, headers: Record<string, string>, seconds: number, connections: number): Promise<Measured> {
  const body = probe.body === undefined ? undefined : JSON.stringify(probe.body);
  const opts = {
    url: url + probe.path,
    method: probe.method,
    connections,
    duration: seconds,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body }),
  };
  await autocannon({ ...opts, duration: 1 }); // warm-up
  const before = cpuMicros(pid);
  const result = await autocannon(opts);
  const used = cpuMicros(pid) - before;
  const answered = result.requests.total;
  return { reqPerSec: result.requests.average, cpuUsPerReq: used / Math.max(1, answered), p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const dataDir = mkdtempSync(join(tmpdir(), 'tetra-http-cpu-'));
  const helloPort = await freePort();
  const hello = await startPeer('servers/hello-server.ts', [String(helloPort)]);
  const tetra = await startTetra(dataDir, ['--rate-limit', '0']);
  try {
    const auth = { authorization: `Bearer ${tetra.apiKey}` };
    const post = async (path: string, body: unknown): Promise<unknown> => {
      const res = await fetch(tetra.url + path, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
      return res.json();
    };
    // A small data set: the probes measure the request path, not the engine at scale.
    const docs = Array.from({ length: 1000 }, (_, i) => ({ _id: `p${i}`, name: `person ${i}`, email: `p${i}@example.com`, age: 20 + (i % 50) }));
    await post('/api/mql/insertMany', { collection: 'people', documents: docs });
    await post('/api/mql/createIndex', { collection: 'people', keys: { email: 1 } });
    await post('/api/sql/query', { sql: 'CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL, n integer)' });
    await post('/api/sql/query', { statements: Array.from({ length: 10 }, (_, b) => ({ sql: `INSERT INTO t SELECT g, 'name ' || g, g % 7 FROM generate_series(${b * 100 + 1}, ${b * 100 + 100}) g` })) });
    await fetch(`${tetra.url}/api/kv/greeting`, { method: 'PUT', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ value: 'hello world' }) });

    const probes: Probe[] = [
      { name: 'hello-world GET /hello', target: 'hello', method: 'GET', path: '/hello' },
      { name: 'hello-world POST /echo (JSON body)', target: 'hello', method: 'POST', path: '/echo', body: { sql: 'SELECT * FROM t WHERE id = $1', params: [42] } },
      { name: 'hello-world + 10 µs of work', target: 'hello', method: 'GET', path: '/work/10' },
      { name: 'hello-world + 20 µs of work', target: 'hello', method: 'GET', path: '/work/20' },
      { name: 'kv GET', target: 'tetra', method: 'GET', path: '/api/kv/greeting' },
      { name: 'mql find by _id', target: 'tetra', method: 'POST', path: '/api/mql/find', body: { collection: 'people', filter: { _id: 'p42' } } },
      { name: 'mql find by email (indexed)', target: 'tetra', method: 'POST', path: '/api/mql/find', body: { collection: 'people', filter: { email: 'p42@example.com' } } },
      { name: 'sql point select', target: 'tetra', method: 'POST', path: '/api/sql/query', body: { sql: 'SELECT * FROM t WHERE id = $1', params: [42] } },
      { name: 'mql insertOne (durable)', target: 'tetra', method: 'POST', path: '/api/mql/insertOne', body: { collection: 'log', document: { level: 'info', msg: 'hello' } } },
    ].filter((p) => config.routes === undefined || p.name.startsWith('hello-world GET') || config.routes.some((r) => p.name.includes(r))) as Probe[];

    const results = new Map<string, Measured[]>();
    for (let round = 0; round < config.rounds; round++) {
      for (const probe of probes) {
        const pid = probe.target === 'hello' ? hello.pid! : tetra.child.pid!;
        const url = probe.target === 'hello' ? `http://127.0.0.1:${helloPort}` : tetra.url;
        const m = await measure(pid, url, probe, probe.target === 'hello' ? {} : auth, config.seconds, config.connections);
        results.set(probe.name, [...(results.get(probe.name) ?? []), m]);
        process.stderr.write(`round ${round + 1} ${probe.name}: ${Math.round(m.reqPerSec)} req/s, ${m.cpuUsPerReq.toFixed(0)} µs CPU/req\n`);
      }
    }
    const helloRps = median(results.get(probes[0]!.name)!.map((m) => m.reqPerSec));
    const helloCpu = median(results.get(probes[0]!.name)!.map((m) => m.cpuUsPerReq));
    process.stdout.write(`\n${config.connections} connections, ${config.rounds} rounds of ${config.seconds} s, medians; tetradb as npm start runs it except --rate-limit 0\n\n`);
    process.stdout.write('| request | req/s | vs hello (req/s) | server CPU µs/req | vs hello (CPU) | p50 ms | p99 ms | non-2xx | server RSS MiB |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n');
    for (const probe of probes) {
      const ms = results.get(probe.name)!;
      const rps = median(ms.map((m) => m.reqPerSec));
      const cpu = median(ms.map((m) => m.cpuUsPerReq));
      const rss = rssMiB(probe.target === 'hello' ? hello.pid : tetra.child.pid);
      process.stdout.write(
        `| ${probe.name} | ${Math.round(rps).toLocaleString('en-US')} | ${(rps / helloRps).toFixed(2)}x | ${cpu.toFixed(0)} | ${(helloCpu / cpu).toFixed(2)}x | ${median(ms.map((m) => m.p50))} | ${median(ms.map((m) => m.p99))} | ${ms.reduce((a, m) => a + m.non2xx, 0)} | ${rss.toFixed(0)} |\n`,
      );
    }
  } finally {
    await stop(tetra.child);
    await stop(hello);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
