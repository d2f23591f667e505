// Time per request of this checkout against another commit's, with server and client in one
// process: a steadier comparison than http-ab for changes of a few percent.
//
// http-ab runs autocannon and the server in two processes on two cores; how the kernel schedules
// and wakes them moves a round's figure by more than such a change. Here each version runs the
// real service (buildApp, listening on loopback, `npm start`'s configuration except
// --rate-limit 0) and a minimal HTTP client in ONE thread: 32 keep-alive connections, each
// sending its next prebuilt request as the previous answer completes. Wall time per answered
// request is then server + client + kernel on one core, with nothing to wait for. The two
// versions run in two child processes, in alternating slices (500 ms by default), and the per-
// round ratios' median compares them. Both children are replaced by fresh ones several times
// (--processes) so that one process's JIT or memory layout does not bias a whole run. The client's and the kernel's share is the same in both,
// so a change's share of the server's own cost is larger than the ratio shows.
//
//   npm --prefix bench run inproc-ab -- --base=<commit> [--routes=sql,find,kv,update] [--rounds=24] [--ms=500] [--processes=4]
//
// Resolution: about +-5% between runs. Comparing a change with its own parent three times on
// 2026-11-25 gave 0.91x, 1.04x and 1.04x for the SQL point select, though 14 to 18 of 20 rounds
// agreed within each run: treat a ratio within 0.95-1.05 as no change, and repeat a run before
// believing one outside it.
//
// The base commit is checked out into a temporary git worktree (removed afterwards) sharing this
// checkout's node_modules. Data: a 20,000-row table (4 columns, a timestamp among them), 20,000
// documents (an index on email), one key; reads pick ids at random from a fixed sequence; `update`
// is a durable updateOne by _id ($inc of an unindexed field).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkoutBase, repoRoot } from './lib/base-checkout.js';
import { flagValue } from './lib/report.js';

const ROUTE_NAMES = ['sql', 'find', 'kv', 'update'] as const;
type RouteName = (typeof ROUTE_NAMES)[number];
const ROWS = 20_000;
const CONNECTIONS = 32;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// ---- Child: one version's service and the client ----------------------------------------------

async function child(root: string): Promise<void> {
  const { buildApp } = (await import(pathToFileURL(join(root, 'server/app.ts')).href)) as typeof import('../server/app.js');
  const { loadConfig } = (await import(pathToFileURL(join(root, 'server/config.ts')).href)) as typeof import('../server/config.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'tetra-inproc-ab-'));
  const config = loadConfig({}, ['--data-dir', dataDir, '--rate-limit', '0', '--port', '0']);
  // Info level as npm start has it; the lines go nowhere (stdout is the parent's channel).
  const app = await buildApp(config, { logStream: { write() {} } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const url = `http://127.0.0.1:${port}`;
  const signup = await fetch(`${url}/api/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ orgName: 'bench', email: 'bench@example.com' }) });
  const { apiKey } = (await signup.json()) as { apiKey: string };
  const send = async (method: string, path: string, body: unknown): Promise<void> => {
    const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  };
  await send('POST', '/api/sql/query', { sql: 'CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL, n integer, created_at timestamp)' });
  await send('POST', '/api/sql/query', { sql: `INSERT INTO t SELECT g, 'name ' || g, g % 7, timestamp '2024-01-01' + g * interval '1 minute' FROM generate_series(1, ${ROWS}) g` });
  for (let s = 0; s < ROWS; s += 1000) {
    await send('POST', '/api/mql/insertMany', { collection: 'people', documents: Array.from({ length: 1000 }, (_, i) => ({ _id: `p${s + i}`, name: `person ${s + i}`, email: `p${s + i}@example.com`, age: (s + i) % 90 })) });
  }
  await send('POST', '/api/mql/createIndex', { collection: 'people', keys: { email: 1 } });
  await send('PUT', '/api/kv/greeting', { value: 'hello world' });

  let seed = 7;
  const random = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const request = (route: RouteName): Buffer => {
    const head = `host: 127.0.0.1:${port}\r\nauthorization: Bearer ${apiKey}\r\n`;
    if (route === 'kv') return Buffer.from(`GET /api/kv/greeting HTTP/1.1\r\n${head}\r\n`);
    const id = Math.floor(random() * ROWS);
    const [path, body] =
      route === 'sql'
        ? ['/api/sql/query', { sql: 'SELECT * FROM t WHERE id = $1', params: [id + 1] }]
        : route === 'update'
          ? ['/api/mql/updateOne', { collection: 'people', filter: { _id: `p${id}` }, update: { $inc: { age: 1 } } }]
          : ['/api/mql/find', { collection: 'people', filter: { _id: `p${id}` } }];
    const text = JSON.stringify(body);
    return Buffer.from(`POST ${path} HTTP/1.1\r\n${head}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
  };
  const pools = Object.fromEntries(ROUTE_NAMES.map((r) => [r, Array.from({ length: 4096 }, () => request(r))])) as Record<RouteName, Buffer[]>;
  const sockets = await Promise.all(
    Array.from({ length: CONNECTIONS }, () => new Promise<Socket>((resolve) => {
      const s = connect(port, '127.0.0.1', () => resolve(s));
      s.setNoDelay(true);
    })),
  );

  /** Runs `route` for `ms` on every connection; nanoseconds of wall time per answered request. */
  const slice = async (route: RouteName, ms: number): Promise<number> => {
    const pool = pools[route];
    let answered = 0;
    let next = 0;
    let stopping = false;
    let open = sockets.length;
    const t0 = process.hrtime.bigint();
    await new Promise<void>((resolve, reject) => {
      for (const s of sockets) {
        let pending: Buffer = Buffer.alloc(0);
        const onData = (chunk: Buffer): void => {
          pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
          for (;;) {
            const end = pending.indexOf('\r\n\r\n');
            if (end < 0) return;
            const head = pending.toString('latin1', 0, end);
            const length = /\r\ncontent-length: (\d+)/i.exec(head);
            if (!head.startsWith('HTTP/1.1 200') || length === null) {
              s.off('data', onData);
              reject(new Error(`${route}: ${head}`));
              return;
            }
            const total = end + 4 + Number(length[1]);
            if (pending.length < total) return;
            pending = pending.subarray(total);
            answered++;
            if (stopping) {
              s.off('data', onData);
              if (--open === 0) resolve();
              return;
            }
            s.write(pool[next++ & 4095]!);
          }
        };
        s.on('data', onData);
        s.write(pool[next++ & 4095]!);
      }
      setTimeout(() => (stopping = true), ms);
    });
    return Number(process.hrtime.bigint() - t0) / answered;
  };

  for (const r of ROUTE_NAMES) await slice(r, 1000); // warm-up
  process.stdout.write('ready\n');
  for await (const line of createInterface({ input: process.stdin })) {
    const [route, ms] = line.split(' ');
    process.stdout.write(`${await slice(route as RouteName, Number(ms))}\n`);
  }
  for (const s of sockets) s.destroy();
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
}

// ---- Parent: the worktree, the two children, the alternation ----------------------------------

interface Version {
  label: string;
  ask(line: string): Promise<string>;
  end(): void;
}

function startVersion(label: string, root: string): Version {
  const proc = spawn(process.execPath, ['--import', join(repoRoot, 'bench/lib/ts-register.mjs'), fileURLToPath(import.meta.url), `--child=${root}`], { stdio: ['pipe', 'pipe', 'inherit'] });
  const waiting: Array<(line: string) => void> = [];
  createInterface({ input: proc.stdout! }).on('line', (line) => waiting.shift()?.(line));
  const next = (): Promise<string> => new Promise((resolve) => waiting.push(resolve));
  const ready = next();
  return {
    label,
    ask: async (line) => {
      await ready;
      const answer = next();
      proc.stdin!.write(`${line}\n`);
      return answer;
    },
    end: () => proc.stdin!.end(),
  };
}

async function parent(argv: string[]): Promise<void> {
  const baseRev = flagValue(argv, 'base');
  if (baseRev === undefined) throw new Error('give --base=<commit> to compare this checkout with');
  const routes = (flagValue(argv, 'routes') ?? 'sql,find,kv,update').split(',') as RouteName[];
  for (const r of routes) if (!ROUTE_NAMES.includes(r)) throw new Error(`unknown route ${r} (one of ${ROUTE_NAMES.join(', ')})`);
  const rounds = Number(flagValue(argv, 'rounds') ?? 24);
  const ms = Number(flagValue(argv, 'ms') ?? 500);
  const processes = Number(flagValue(argv, 'processes') ?? 4);
  const base = checkoutBase(baseRev, 'tetra-inproc-ab-');
  const labels = base.labels;
  const roots = [base.root, repoRoot];
  let versions: Version[] = [];
  const stopVersions = async (): Promise<void> => {
    for (const v of versions) v.end();
    versions = [];
    await new Promise((r) => setTimeout(r, 500));
  };
  try {
    const times = new Map<string, number[]>();
    for (let round = 0; round < rounds; round++) {
      // Fresh processes every rounds/processes rounds: a process's JIT and memory layout bias all
      // its slices alike, which alternation alone does not cancel.
      if (round % Math.ceil(rounds / processes) === 0) {
        await stopVersions();
        versions = labels.map((label, i) => startVersion(label, roots[i]!));
      }
      for (const route of routes) {
        // Alternating order: neither version always runs first.
        for (const v of round % 2 === 0 ? versions : [...versions].reverse()) {
          const ns = Number(await v.ask(`${route} ${ms}`));
          times.set(`${route} ${v.label}`, [...(times.get(`${route} ${v.label}`) ?? []), ns]);
        }
      }
      process.stderr.write(`round ${round + 1} of ${rounds}\n`);
    }
    process.stdout.write(`\n${base.describe()}; server and client in one process, ${CONNECTIONS} connections, ${rounds} rounds of ${ms} ms per version and route, ${processes} process pairs\n\n`);
    process.stdout.write('| route | base µs/req, median | min | this checkout µs/req, median | min | this / base, median of rounds | rounds where this is faster |\n|---|---:|---:|---:|---:|---:|---:|\n');
    for (const route of routes) {
      const a = times.get(`${route} ${labels[0]}`)!;
      const b = times.get(`${route} ${labels[1]}`)!;
      const ratios = b.map((x, i) => x / a[i]!);
      const us = (x: number): string => (x / 1000).toFixed(1);
      process.stdout.write(`| ${route} | ${us(median(a))} | ${us(Math.min(...a))} | ${us(median(b))} | ${us(Math.min(...b))} | ${median(ratios).toFixed(3)} | ${ratios.filter((r) => r < 1).length} of ${rounds} |\n`);
    }
  } finally {
    await stopVersions();
    base.remove();
  }
}

const childRoot = flagValue(process.argv.slice(2), 'child');
if (childRoot !== undefined) await child(childRoot);
else await parent(process.argv.slice(2));
