// KV over HTTP, side by side in one run: tetradb's PUT/GET /api/kv (durable, fsync=batch), a
// plain Fastify hello-world (the ceiling) and Fastify + Redis doing the same GET/PUT. Each server
// is its own process; autocannon drives it from this one. Prints req/s, p50/p99 and the ratios.
// Then "GET while writers run" (48 connections of GETs and 16 of PUTs at once, two autocannon
// instances) and a server memory table: 200,000 distinct 1 KiB PUTs from 32 clients while the
// server's RSS is sampled every 200 ms.
//
// tetradb runs as `npm start` runs it (server/config.ts defaults) apart from --rate-limit 0; the
// memory table adds a server with TETRA_CACHE_BYTES=33554432, labelled as such. TETRA_DIRTY_BYTES
// (and any other TETRA_* variable) in this process's environment is passed through to the servers.
//
//   npm --prefix bench run kv            full run (8 s per measurement)
//   npm --prefix bench run kv -- --quick 3 s per measurement, 50,000 keys for the memory load
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { freePort, rssMiB, startPeer, startTetra, stop } from './lib/http-servers.js';
import { loadResult, type LoadResult } from './lib/load-result.js';
import { machineLine } from './lib/report.js';

const quick = process.argv.includes('--quick');
const SECONDS = quick ? 3 : 8;
const CONNECTIONS = 64;
const KEYS = 10_000;
const VALUE = 'v'.repeat(100);
// "GET while writers run": readers and writers at once, on separate connections.
const MIXED_GET_CONNECTIONS = 48;
const MIXED_PUT_CONNECTIONS = 16;
// Server memory: distinct keys with 1 KiB values from 32 clients; RSS sampled every 200 ms.
const MEMORY_KEYS = quick ? 50_000 : 200_000;
const MEMORY_CONNECTIONS = 32;
const MEMORY_VALUE = 'm'.repeat(1024);
const MEMORY_SAMPLE_MS = 200;
/** The tuned configuration of the memory table: a 32 MiB page cache. */
const SMALL_CACHE_BYTES = 33_554_432;
/** Peak server RSS for the same 200,000-key load before the engine bounded its dirty memory. */
const PEAK_RSS_BEFORE_FIX_MIB = 590;
/**
 * Added to `npm start`'s command line: the default rate limit (1000 requests/s per API key) would
 * answer most requests 429; fsync=batch is the default too, spelled out because the rows name it.
 */
const TETRA_FLAGS = ['--rate-limit', '0', '--fsync', 'batch'];
const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/**
 * Which keys a run touches: the preloaded ones (GETs in a scattered order, or PUTs overwriting
 * them), or new keys (PUTs inserting, the durable path).
 */
type KeyChoice = 'preloaded' | 'new' | 'none';

function load(url: string, method: 'GET' | 'PUT', apiKey: string | undefined, keys: KeyChoice, connections = CONNECTIONS): Promise<LoadResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (apiKey) headers.authorization = `Bearer ${apiKey}`;
  let n = 0;
  const tag = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  return autocannon({
    url,
    connections,
    duration: SECONDS,
    headers,
    requests: [
      {
        method,
        setupRequest: (req: any) => {
          if (keys === 'none') return req;
          const key = keys === 'preloaded' ? `key-${(n++ * 7919) % KEYS}` : `new-${tag}-${n++}`;
          return { ...req, path: `/api/kv/${key}`, body: method === 'PUT' ? JSON.stringify({ value: VALUE }) : undefined };
        },
      },
    ],
  }).then(loadResult);
}

/** GETs of preloaded keys and PUTs overwriting them, from separate connections at the same time. */
async function mixed(url: string, apiKey: string): Promise<{ get: LoadResult; put: LoadResult }> {
  const [get, put] = await Promise.all([load(url, 'GET', apiKey, 'preloaded', MIXED_GET_CONNECTIONS), load(url, 'PUT', apiKey, 'preloaded', MIXED_PUT_CONNECTIONS)]);
  return { get, put };
}

interface MemoryResult {
  target: string;
  /** What was sampled: the tetradb process's VmRSS, or Redis's used_memory_rss. */
  what: string;
  baseMiB: number;
  peakMiB: number;
  endMiB: number;
  settledMiB: number;
  /** Fastify front of the Redis peer: its own process's RSS peak. */
  frontPeakMiB?: number;
  rps: number;
  p99: number;
  errors: number;
}

/**
 * PUTs MEMORY_KEYS distinct keys with 1 KiB values from MEMORY_CONNECTIONS clients while
 * `sample()` (MiB) runs every 200 ms; returns its value before, its peak during, right after,
 * and 5 s after the load.
 */
async function memoryLoad(url: string, apiKey: string, sample: () => Promise<number> | number, front?: () => number): Promise<Omit<MemoryResult, 'target' | 'what'>> {
  const baseMiB = await sample();
  let peakMiB = baseMiB;
  let frontPeakMiB = front?.() ?? Number.NaN;
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling.then(async () => {
      peakMiB = Math.max(peakMiB, await sample());
      if (front) frontPeakMiB = Math.max(frontPeakMiB, front());
    });
  }, MEMORY_SAMPLE_MS);
  let n = 0;
  const result = await autocannon({
    url,
    connections: MEMORY_CONNECTIONS,
    amount: MEMORY_KEYS,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    requests: [
      {
        method: 'PUT',
        setupRequest: (req: any) => ({ ...req, path: `/api/kv/mem-${String(n++).padStart(7, '0')}`, body: JSON.stringify({ value: MEMORY_VALUE }) }),
      },
    ],
  });
  clearInterval(timer);
  await sampling;
  const endMiB = await sample();
  peakMiB = Math.max(peakMiB, endMiB);
  await new Promise((r) => setTimeout(r, 5000));
  const settledMiB = await sample();
  return {
    baseMiB,
    peakMiB,
    endMiB,
    settledMiB,
    ...(front ? { frontPeakMiB } : {}),
    rps: result.requests.average,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts + result.non2xx,
  };
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

interface MixedRow {
  target: string;
  get: LoadResult;
  put: LoadResult;
  rss: number;
}

/** Redis with an append-only file fsynced on every write (durable like tetradb's PUT), and the Fastify front. */
async function startRedis(dir: string): Promise<{ redis: ChildProcess; front: ChildProcess; url: string; apiKey: string; client: Redis }> {
  const redisPort = await freePort();
  const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 500));
  const kvPort = await freePort();
  const apiKey = 'bench-key';
  const front = await startPeer(here('./servers/redis-kv-server.ts'), [String(kvPort), String(redisPort), apiKey]);
  const client = new Redis({ port: redisPort, host: '127.0.0.1' });
  return { redis, front, url: `http://127.0.0.1:${kvPort}`, apiKey, client };
}

async function redisRssMiB(client: Redis): Promise<number> {
  const m = /used_memory_rss:(\d+)/.exec(await client.info('memory'));
  return m ? Number(m[1]) / 2 ** 20 : NaN;
}

async function main(): Promise<void> {
  const machine = machineLine(); // the load average before this run adds its own
  const work = mkdtempSync(join(tmpdir(), 'tetra-kvbench-'));
  const children: ChildProcess[] = [];
  const clients: Redis[] = [];
  const rows: Row[] = [];
  const mixedRows: MixedRow[] = [];
  const memoryRows: MemoryResult[] = [];
  const hasRedis = spawnSync('redis-server', ['--version']).status === 0;
  try {
    // Plain Fastify.
    const helloPort = await freePort();
    const hello = await startPeer(here('./servers/hello-server.ts'), [String(helloPort)]);
    children.push(hello);
    const h = await load(`http://127.0.0.1:${helloPort}/hello`, 'GET', undefined, 'none');
    rows.push({ target: 'fastify hello-world', op: 'GET', ...h, rss: rssMiB(hello.pid) });
    await stop(hello);

    // tetradb, as npm start runs it.
    const tetra = await startTetra(join(work, 'tetra'), TETRA_FLAGS);
    children.push(tetra.child);
    await preload(tetra.url, tetra.apiKey);
    const tg = await load(tetra.url, 'GET', tetra.apiKey, 'preloaded');
    rows.push({ target: 'tetradb', op: 'GET /api/kv/:key', ...tg, rss: rssMiB(tetra.child.pid) });
    const tp = await load(tetra.url, 'PUT', tetra.apiKey, 'new');
    rows.push({ target: 'tetradb (fsync=batch)', op: 'PUT /api/kv/:key', ...tp, rss: rssMiB(tetra.child.pid) });
    mixedRows.push({ target: 'tetradb (fsync=batch)', ...(await mixed(tetra.url, tetra.apiKey)), rss: rssMiB(tetra.child.pid) });
    await stop(tetra.child);

    // Fastify + Redis (append-only file, fsync always: durable like tetradb's PUT).
    if (!hasRedis) {
      process.stdout.write('\nredis-server not found: install it (apt-get install -y redis-server) for the Redis rows.\n');
    } else {
      mkdirSync(join(work, 'redis'));
      const r = await startRedis(join(work, 'redis'));
      children.push(r.redis, r.front);
      clients.push(r.client);
      await preload(r.url, r.apiKey);
      const rg = await load(r.url, 'GET', r.apiKey, 'preloaded');
      rows.push({ target: 'fastify + redis', op: 'GET /api/kv/:key', ...rg, rss: rssMiB(r.front.pid) + rssMiB(r.redis.pid) });
      const rp = await load(r.url, 'PUT', r.apiKey, 'new');
      rows.push({ target: 'fastify + redis (aof always)', op: 'PUT /api/kv/:key', ...rp, rss: rssMiB(r.front.pid) + rssMiB(r.redis.pid) });
      mixedRows.push({ target: 'fastify + redis (aof always)', ...(await mixed(r.url, r.apiKey)), rss: rssMiB(r.front.pid) + rssMiB(r.redis.pid) });
      r.client.disconnect();
      await stop(r.front);
      await stop(r.redis);
    }

    // Server memory: fresh servers, the same 1 KiB PUTs.
    for (const [label, env] of [
      ['tetradb, npm start defaults (cache 256 MiB)', {}],
      ['tetradb, TETRA_CACHE_BYTES=33554432 (32 MiB cache)', { TETRA_CACHE_BYTES: String(SMALL_CACHE_BYTES) }],
    ] as const) {
      const t = await startTetra(join(work, `mem-${memoryRows.length}`), TETRA_FLAGS, env);
      children.push(t.child);
      const pid = t.child.pid;
      memoryRows.push({ target: label, what: 'server process VmRSS', ...(await memoryLoad(t.url, t.apiKey, () => rssMiB(pid))) });
      await stop(t.child);
    }
    if (hasRedis) {
      mkdirSync(join(work, 'redis-mem'));
      const r = await startRedis(join(work, 'redis-mem'));
      children.push(r.redis, r.front);
      clients.push(r.client);
      const frontPid = r.front.pid;
      memoryRows.push({ target: 'fastify + redis (aof always)', what: 'redis INFO used_memory_rss', ...(await memoryLoad(r.url, r.apiKey, () => redisRssMiB(r.client), () => rssMiB(frontPid))) });
      r.client.disconnect();
      await stop(r.front);
      await stop(r.redis);
    }
  } finally {
    for (const c of clients) c.disconnect();
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    rmSync(work, { recursive: true, force: true });
  }

  const helloRps = rows[0]!.rps;
  const redisGet = rows.find((r) => r.target === 'fastify + redis')?.rps;
  const redisPut = rows.find((r) => r.target.startsWith('fastify + redis (aof'))?.rps;
  const fmt = (n: number | undefined, d = 0) => (n !== undefined && Number.isFinite(n) ? n.toFixed(d) : '-');
  const tetraEnv = Object.entries(process.env).filter(([k]) => k.startsWith('TETRA_')).map(([k, v]) => `${k}=${v}`);
  process.stdout.write(`\nKV over HTTP: ${CONNECTIONS} connections, ${SECONDS} s per row, ${KEYS} preloaded keys, 100-byte values\n${machine}\n`);
  // TETRA_DIRTY_BYTES is passed through either way; whether the server applies it depends on its version.
  const serverReadsDirty = readFileSync(here('../server/config.ts'), 'utf8').includes('TETRA_DIRTY_BYTES');
  const dirty = process.env.TETRA_DIRTY_BYTES === undefined
    ? 'TETRA_DIRTY_BYTES unset: the 64 MiB default dirty budget'
    : `TETRA_DIRTY_BYTES=${process.env.TETRA_DIRTY_BYTES} passed to the servers${serverReadsDirty ? '' : ', but this server/config.ts does not read it yet: the 64 MiB default applies'}`;
  process.stdout.write(`tetradb: server/config.ts defaults (as npm start) with --rate-limit 0; TETRA_* in the environment: ${tetraEnv.length > 0 ? tetraEnv.join(' ') : 'none'}; ${dirty}\n\n`);
  process.stdout.write('| target | request | req/s | vs hello | vs redis | p50 ms | p99 ms | server RSS MB | errors |\n|---|---|---|---|---|---|---|---|---|\n');
  for (const r of rows) {
    const peer = r.op.startsWith('PUT') ? redisPut : r.op.startsWith('GET /api') ? redisGet : undefined;
    process.stdout.write(`| ${r.target} | ${r.op} | ${fmt(r.rps)} | ${fmt(r.rps / helloRps, 2)}x | ${peer ? `${fmt(r.rps / peer, 2)}x` : '-'} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${fmt(r.rss)} | ${r.errors + r.non2xx} |\n`);
  }

  process.stdout.write(`\nGET while writers run: ${MIXED_GET_CONNECTIONS} connections of GETs (preloaded keys) and ${MIXED_PUT_CONNECTIONS} of PUTs (overwriting the same keys) at once, ${SECONDS} s, two autocannon instances. A tetradb GET answers only once every write it could have seen is fsynced (the durability fence).\n\n`);
  process.stdout.write('| target | GET req/s | GET p50 ms | GET p99 ms | PUT req/s | PUT p50 ms | PUT p99 ms | total req/s | vs redis | server RSS MB | errors |\n|---|---|---|---|---|---|---|---|---|---|---|\n');
  const redisMixed = mixedRows.find((r) => r.target.startsWith('fastify + redis'));
  for (const r of mixedRows) {
    const total = r.get.rps + r.put.rps;
    const peer = redisMixed ? redisMixed.get.rps + redisMixed.put.rps : undefined;
    const errors = r.get.errors + r.get.non2xx + r.put.errors + r.put.non2xx;
    process.stdout.write(`| ${r.target} | ${fmt(r.get.rps)} | ${fmt(r.get.p50, 1)} | ${fmt(r.get.p99, 1)} | ${fmt(r.put.rps)} | ${fmt(r.put.p50, 1)} | ${fmt(r.put.p99, 1)} | ${fmt(total)} | ${peer ? `${fmt(total / peer, 2)}x` : '-'} | ${fmt(r.rss)} | ${errors} |\n`);
  }

  process.stdout.write(`\nServer memory: ${MEMORY_KEYS.toLocaleString('en-US')} PUTs of distinct keys with 1 KiB values from ${MEMORY_CONNECTIONS} connections, each server fresh; RSS sampled every ${MEMORY_SAMPLE_MS} ms (tetradb: /proc/<pid>/status VmRSS; Redis: INFO used_memory_rss, its Fastify front separately). Before the engine bounded its dirty memory, tetradb peaked at ${PEAK_RSS_BEFORE_FIX_MIB} MiB on the 200,000-key load with the 32 MiB cache.\n\n`);
  process.stdout.write('| target, settings | sampled | before MiB | peak during load MiB | right after MiB | 5 s later MiB | Fastify front peak MiB | PUT req/s | p99 ms | errors |\n|---|---|---|---|---|---|---|---|---|---|\n');
  for (const r of memoryRows) {
    process.stdout.write(`| ${r.target} | ${r.what} | ${fmt(r.baseMiB)} | ${fmt(r.peakMiB)} | ${fmt(r.endMiB)} | ${fmt(r.settledMiB)} | ${fmt(r.frontPeakMiB)} | ${fmt(r.rps)} | ${fmt(r.p99, 1)} | ${r.errors} |\n`);
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
