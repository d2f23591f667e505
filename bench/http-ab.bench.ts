// Server CPU per request of this checkout against another commit's, side by side in one run.
//
// The machine's speed drifts within seconds (a shared host): a route measured in one run and
// again in another can differ by half, which hides a change of a few µs. Here both servers run
// throughout, next to a Fastify hello-world, and the rows alternate in many short rounds: each
// round measures every row once, so noise hits both versions alike, and the medians (and minima)
// over rounds compare them. Server CPU per request is utime + stime of the server process over
// the row, divided by the requests it answered (as http-cpu.bench.ts measures it).
//
//   npm --prefix bench run http-ab -- --base=<commit> [--routes=find,sql,kv,email] [--rounds=10]
//        [--seconds=2] [--connections=32]
//
// The base commit is checked out into a temporary git worktree (removed afterwards) sharing this
// checkout's node_modules; both servers run as `npm start` runs them, except --rate-limit 0, each
// on a free port and a fresh data directory, with http-cpu's small data set (1,000 documents with
// an index on email, a 1,000-row table, one key-value pair).
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { checkoutBase, repoRoot } from './lib/base-checkout.js';
import { cpuMicros, freePort, startPeer, stop } from './lib/http-servers.js';
import { flagValue } from './lib/report.js';

interface Config {
  base: string;
  routes: string[];
  rounds: number;
  seconds: number;
  connections: number;
}

function parseArgs(argv: string[]): Config {
  const value = (name: string): string | undefined => flagValue(argv, name);
  const base = value('base');
  if (base === undefined) throw new Error('give --base=<commit> to compare this checkout with');
  return {
    base,
    routes: (value('routes') ?? 'find,sql').split(','),
    rounds: Number(value('rounds') ?? 10),
    seconds: Number(value('seconds') ?? 2),
    connections: Number(value('connections') ?? 32),
  };
}

interface Server {
  label: string;
  child: ChildProcess;
  url: string;
  apiKey: string;
}

/** Starts the server of the checkout at `root` as `npm start` does, signs up and loads the data set. */
async function startServer(label: string, root: string, dataDir: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(root, 'server/start.mjs'), '--port', String(port), '--data-dir', dataDir, '--rate-limit', '0'], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      await fetch(`${url}/api/health`);
      break;
    } catch {
      if (i > 300) throw new Error(`${label}: the server did not start`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const signup = await fetch(`${url}/api/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ orgName: 'bench', email: 'bench@example.com' }) });
  const { apiKey } = (await signup.json()) as { apiKey: string };
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const post = async (path: string, body: unknown): Promise<void> => {
    const res = await fetch(url + path, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${label}: ${path} answered ${res.status}: ${await res.text()}`);
  };
  await post('/api/mql/insertMany', { collection: 'people', documents: Array.from({ length: 1000 }, (_, i) => ({ _id: `p${i}`, name: `person ${i}`, email: `p${i}@example.com`, age: 20 + (i % 50) })) });
  await post('/api/mql/createIndex', { collection: 'people', keys: { email: 1 } });
  await post('/api/sql/query', { sql: 'CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL, n integer)' });
  await post('/api/sql/query', { sql: "INSERT INTO t SELECT g, 'name ' || g, g % 7 FROM generate_series(1, 1000) g" });
  const put = await fetch(`${url}/api/kv/greeting`, { method: 'PUT', headers, body: JSON.stringify({ value: 'hello world' }) });
  if (put.status >= 300) throw new Error(`${label}: PUT /api/kv/greeting answered ${put.status}`);
  return { label, child, url, apiKey };
}

const ROUTES: Record<string, { method: 'GET' | 'POST'; path: string; body?: unknown }> = {
  find: { method: 'POST', path: '/api/mql/find', body: { collection: 'people', filter: { _id: 'p42' } } },
  email: { method: 'POST', path: '/api/mql/find', body: { collection: 'people', filter: { email: 'p42@example.com' } } },
  sql: { method: 'POST', path: '/api/sql/query', body: { sql: 'SELECT * FROM t WHERE id = $1', params: [42] } },
  kv: { method: 'GET', path: '/api/kv/greeting' },
};

interface Row {
  name: string;
  pid: number;
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  for (const r of config.routes) if (ROUTES[r] === undefined) throw new Error(`unknown route ${r} (one of ${Object.keys(ROUTES).join(', ')})`);
  const base = checkoutBase(config.base, 'tetra-http-ab-');
  const helloPort = await freePort();
  const hello = await startPeer('servers/hello-server.ts', [String(helloPort)]);
  const servers: Server[] = [];
  try {
    servers.push(await startServer(base.labels[0], base.root, join(base.work, 'data-base')));
    servers.push(await startServer(base.labels[1], repoRoot, join(base.work, 'data-head')));
    const helloUrl = `http://127.0.0.1:${helloPort}`;
    const rows: Row[] = [
      { name: 'hello-world GET /hello', pid: hello.pid!, url: `${helloUrl}/hello`, method: 'GET', headers: {} },
      { name: 'hello-world POST /echo', pid: hello.pid!, url: `${helloUrl}/echo`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ROUTES.sql!.body) },
    ];
    for (const route of config.routes) {
      const r = ROUTES[route]!;
      for (const s of servers) {
        rows.push({
          name: `${route}: ${s.label}`,
          pid: s.child.pid!,
          url: s.url + r.path,
          method: r.method,
          headers: { authorization: `Bearer ${s.apiKey}`, ...(r.body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) }),
        });
      }
    }
    const cpu = new Map<string, number[]>();
    const rps = new Map<string, number[]>();
    for (let round = 0; round < config.rounds; round++) {
      // Alternating order: neither version always runs right after the hello-world.
      const order = round % 2 === 0 ? rows : [...rows.slice(0, 2), ...rows.slice(2).reverse()];
      for (const row of order) {
        const opts = { url: row.url, method: row.method, connections: config.connections, duration: config.seconds, headers: row.headers, ...(row.body === undefined ? {} : { body: row.body }) };
        if (round === 0) await autocannon({ ...opts, duration: 1 }); // warm-up
        const before = cpuMicros(row.pid);
        const result = await autocannon(opts);
        const used = cpuMicros(row.pid) - before;
        if (result.non2xx > 0) throw new Error(`${row.name}: ${result.non2xx} answers were not 2xx`);
        cpu.set(row.name, [...(cpu.get(row.name) ?? []), used / Math.max(1, result.requests.total)]);
        rps.set(row.name, [...(rps.get(row.name) ?? []), result.requests.average]);
      }
      process.stderr.write(`round ${round + 1} of ${config.rounds}\n`);
    }
    process.stdout.write(`\n${base.describe()}; ${config.rounds} rounds of ${config.seconds} s, ${config.connections} connections; tetradb as npm start runs it except --rate-limit 0\n\n`);
    process.stdout.write('| row | server CPU µs/req, median | min | max | req/s, median |\n|---|---:|---:|---:|---:|\n');
    for (const row of rows) {
      const xs = cpu.get(row.name)!;
      process.stdout.write(`| ${row.name} | ${median(xs).toFixed(1)} | ${Math.min(...xs).toFixed(1)} | ${Math.max(...xs).toFixed(1)} | ${Math.round(median(rps.get(row.name)!)).toLocaleString('en-US')} |\n`);
    }
  } finally {
    for (const s of servers) await stop(s.child);
    await stop(hello);
    base.remove();
  }
}

await main();
