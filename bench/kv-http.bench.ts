// KV over HTTP, side by side in one run: tetradb's PUT/GET /api/kv (durable, fsync=batch), a
// plain Fastify hello-world (the ceiling) and Fastify + Redis doing the same GET/PUT. Each server
// is its own process; autocannon drives it from this one. Prints req/s, p50/p99 and the ratios.
//
//   npm --prefix bench run kv            full run (8 s per measurement)
//   npm --prefix bench run kv -- --quick 3 s per measurement
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const quick = process.argv.includes('--quick');
const SECONDS = quick ? 3 : 8;
const CONNECTIONS = 64;
const KEYS = 10_000;
const VALUE = 'v'.repeat(100);
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function startNode(script: string, args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'inherit'], cwd: here('.') });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => c.toString().includes('ready') && resolve());
    child.on('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return child;
}

async function waitHttp(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${url} did not come up`);
}

function rssMb(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

async function load(url: string, method: 'GET' | 'PUT', apiKey: string | undefined, keyed: boolean): Promise<{ rps: number; p50: number; p99: number; errors: number; non2xx: number }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  let n = 0;
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: SECONDS,
    headers,
    requests: [
      {
        method,
        setupRequest: (req: any) => {
          if (!keyed) return req;
          // GETs hit the preloaded keys; PUTs write new keys (inserts, the durable path).
          const key = method === 'GET' ? `key-${(n++ * 7919) % KEYS}` : `new-${process.pid}-${n++}`;
          return { ...req, path: `/api/kv/${key}`, body: method === 'PUT' ? JSON.stringify({ value: VALUE }) : undefined };
        },
      },
    ],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts, non2xx: result.non2xx };
}

async function preload(base: string, apiKey: string): Promise<void> {
  for (let i = 0; i < KEYS; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, KEYS - i) }, (_, j) =>
        fetch(`${base}/api/kv/key-${i + j}`, { method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, body: JSON.stringify({ value: VALUE }) }).then((r) => {
          if (!r.ok) throw new Error(`preload PUT ${r.status}`);
        }),
      ),
    );
  }
}

interface Row {
  target: string;
  op: string;
  rps: number;
  p50: number;
  p99: number;
  rss: number;
  errors: number;
  non2xx: number;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'tetra-kvbench-'));
  const children: ChildProcess[] = [];
  const rows: Row[] = [];
  try {
    // Plain Fastify.
    const helloPort = await freePort();
    const hello = await startNode(here('./servers/hello-server.ts'), [String(helloPort)]);
    children.push(hello);
    const h = await load(`http://127.0.0.1:${helloPort}/hello`, 'GET', undefined, false);
    rows.push({ target: 'fastify hello-world', op: 'GET', ...h, rss: rssMb(hello.pid) });
    hello.kill();

    // tetradb.
    const tetraPort = await freePort();
    const tetra = spawn(process.execPath, ['--import', 'tsx', here('../server/main.ts'), '--port', String(tetraPort), '--data-dir', join(work, 'tetra'), '--rate-limit', '0', '--log-level', 'warn', '--fsync', 'batch'], { stdio: ['ignore', 'ignore', 'inherit'] });
    children.push(tetra);
    const tetraUrl = `http://127.0.0.1:${tetraPort}`;
    await waitHttp(`${tetraUrl}/api/nothing`);
    const signup = (await (await fetch(`${tetraUrl}/api/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ orgName: 'bench', email: 'bench@example.com' }) })).json()) as { apiKey: string };
    await preload(tetraUrl, signup.apiKey);
    const tg = await load(tetraUrl, 'GET', signup.apiKey, true);
    rows.push({ target: 'tetradb', op: 'GET /api/kv/:key', ...tg, rss: rssMb(tetra.pid) });
    const tp = await load(tetraUrl, 'PUT', signup.apiKey, true);
    rows.push({ target: 'tetradb (fsync=batch)', op: 'PUT /api/kv/:key', ...tp, rss: rssMb(tetra.pid) });
    tetra.kill('SIGTERM');

    // Fastify + Redis (append-only file, fsync always: durable like tetradb's PUT).
    const hasRedis = spawnSync('redis-server', ['--version']).status === 0;
    if (!hasRedis) {
      process.stdout.write('\nredis-server not found: install it (apt-get install -y redis-server) for the Redis rows.\n');
    } else {
      const redisPort = await freePort();
      const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', work], { stdio: 'ignore' });
      children.push(redis);
      await new Promise((r) => setTimeout(r, 500));
      const kvPort = await freePort();
      const apiKey = 'bench-key';
      const rk = await startNode(here('./servers/redis-kv-server.ts'), [String(kvPort), String(redisPort), apiKey]);
      children.push(rk);
      const rkUrl = `http://127.0.0.1:${kvPort}`;
      await preload(rkUrl, apiKey);
      const rg = await load(rkUrl, 'GET', apiKey, true);
      rows.push({ target: 'fastify + redis', op: 'GET /api/kv/:key', ...rg, rss: rssMb(rk.pid) + rssMb(redis.pid) });
      const rp = await load(rkUrl, 'PUT', apiKey, true);
      rows.push({ target: 'fastify + redis (aof always)', op: 'PUT /api/kv/:key', ...rp, rss: rssMb(rk.pid) + rssMb(redis.pid) });
      rk.kill();
      redis.kill();
    }
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    rmSync(work, { recursive: true, force: true });
  }

  const helloRps = rows[0]!.rps;
  const redisGet = rows.find((r) => r.target === 'fastify + redis')?.rps;
  const redisPut = rows.find((r) => r.target.startsWith('fastify + redis (aof'))?.rps;
  const fmt = (n: number, d = 0) => (Number.isFinite(n) ? n.toFixed(d) : '-');
  process.stdout.write(`\nKV over HTTP: ${CONNECTIONS} connections, ${SECONDS} s per row, ${KEYS} preloaded keys, 100-byte values\n\n`);
  process.stdout.write('| target | request | req/s | vs hello | vs redis | p50 ms | p99 ms | server RSS MB | errors |\n|---|---|---|---|---|---|---|---|---|\n');
  for (const r of rows) {
    const peer = r.op.startsWith('PUT') ? redisPut : r.op.startsWith('GET /api') ? redisGet : undefined;
    process.stdout.write(`| ${r.target} | ${r.op} | ${fmt(r.rps)} | ${fmt(r.rps / helloRps, 2)}x | ${peer ? `${fmt(r.rps / peer, 2)}x` : '-'} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.rss)} | ${r.errors + r.non2xx} |\n`);
  }
  const tGet = rows.find((r) => r.op.startsWith('GET /api') && r.target === 'tetradb')!.rps;
  const tPut = rows.find((r) => r.op.startsWith('PUT') && r.target.startsWith('tetradb'))!.rps;
  const check = (ok: boolean, text: string) => process.stdout.write(`${ok ? 'PASS' : 'FAIL'}  ${text}\n`);
  process.stdout.write('\n');
  check(tGet >= 0.5 * helloRps, `KV GET >= 0.5x hello-world (${fmt(tGet / helloRps, 2)}x)`);
  if (redisGet) check(tGet >= redisGet, `KV GET >= 1x Fastify+Redis GET (${fmt(tGet / redisGet, 2)}x)`);
  check(tPut >= 0.3 * helloRps, `durable PUT >= 0.3x hello-world (${fmt(tPut / helloRps, 2)}x)`);
}

await main();
