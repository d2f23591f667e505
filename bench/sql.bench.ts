// SQL, side by side in one run (issue 8). The same schema and data on every engine
// (bench/lib/sql-workload.ts: customers N/10 rows, orders N rows with indexes on customer_id and
// created_at, from a seeded generator) and the same parameterised statements: point select by
// primary key, indexed range (~100 rows), group-by aggregate, two-table join (one customer, and
// an unfiltered join + group-by), batch insert (1000 rows per statement) and durable single-row
// insert (1 and 16 writers).
//
// In process: tetradb (sqlExecute over a TenantStore), better-sqlite3, PGlite, pg-mem and AlaSQL,
// each engine and size in a forked worker (bench/sql-worker.ts) so RSS and GC are its own. Over
// HTTP (autocannon): tetradb's POST /api/sql/query (the server as `npm start` runs it, with
// --rate-limit 0), a Fastify hello-world, and Fastify + node-postgres in front of the local
// PostgreSQL (bench/servers/pg-sql-server.ts) answering the same statements on the same route.
// Every engine answers a sample of every query first; counts and checksums must agree with the
// reference (better-sqlite3), or the run stops: timings of different answers mean nothing.
//
//   npm --prefix bench run sql                  100k then 1M rows in process (2 s per operation),
//                                               100k rows over HTTP, 3 rounds of 5 s per row
//   npm --prefix bench run sql -- --quick       10k rows, short timings (about 3 minutes)
//   node --import ./lib/ts-register.mjs sql.bench.ts [--quick] [--sizes=100000,1000000] [--seconds=S] [--engines=a,b]
//        [--max-load-seconds=S] [--http-rows=N (0: no HTTP part)] [--http-seconds=S] [--rounds=N]
//        [--connections=N] [--pg-url=postgres://...] [--pg-pool=N] [--no-inprocess]
//
// Until tetradb's SQL API exists (engine/sql sqlExecute, POST /api/sql/query), its rows print as
// "n/a: <why>" and every peer is still measured.
import type { ChildProcess } from 'node:child_process';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { freePort, peakSampler, postgresPssMiB, rssMiB, startPeer, startTetra, stop, type HttpTarget } from './lib/http-servers.js';
import { loadResult, pooledRequests, type LoadResult } from './lib/load-result.js';
import { connectPg, DEFAULT_PG_URL, redact } from './lib/pg-connect.js';
import { flagValue, fmtCount, fmtInt, fmtNum, fmtRatio, fmtUs, growthTable, machineLine, MiB, packageVersion, runWorker, scratchDir, table } from './lib/report.js';
import { ENGINE_NOTES, openSqlEngine, SQL_ENGINES, type SqlEngineName } from './lib/sql-engines.js';
import {
  BATCH_ROWS,
  checkOf,
  compareChecks,
  customerCount,
  customerRow,
  multiRowInsert,
  INSERT_ORDER,
  orderRow,
  paramsOf,
  QUERIES,
  QUERY_NAMES,
  sampleQueries,
  SCHEMA,
  type QueryName,
  type SampleCheck,
} from './lib/sql-workload.js';
import type { OpName, OpResult, SqlTask, SqlWorkerResult } from './sql-worker.js';

const CACHE_BYTES = 256 * MiB; // npm start's page cache; SQLite gets the same budget
const WRITERS = [1, 16];
const PG_NAME = 'fastify + postgresql';
const HELLO_NAME = 'fastify hello-world';
/** Read bodies per HTTP row: paramsOf's 4096 picks, split among the connections. */
const READ_BODIES = 4096;
const REFERENCE: SqlEngineName = 'sqlite';
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

interface Config {
  quick: boolean;
  sizes: number[];
  engines: SqlEngineName[];
  seconds: number;
  maxLoadSeconds: number;
  /** An engine whose RSS would pass this at the next size (extrapolated) is skipped there. */
  maxRssMiB: number;
  inprocess: boolean;
  httpRows: number;
  httpSeconds: number;
  warmupSeconds: number;
  rounds: number;
  connections: number;
  pgUrl: string;
  pgPool: number;
}

function parseArgs(argv: string[]): Config {
  const quick = argv.includes('--quick');
  const value = (name: string): string | undefined => flagValue(argv, name);
  const config: Config = {
    quick,
    sizes: (value('sizes') ?? (quick ? '10000' : '100000,1000000')).split(',').map(Number),
    engines: (value('engines')?.split(',') ?? [...SQL_ENGINES]) as SqlEngineName[],
    seconds: Number(value('seconds') ?? (quick ? 0.5 : 2)),
    maxLoadSeconds: Number(value('max-load-seconds') ?? (quick ? 60 : 300)),
    maxRssMiB: Math.floor(totalmem() / MiB / 2),
    inprocess: !argv.includes('--no-inprocess'),
    httpRows: Number(value('http-rows') ?? (quick ? 10_000 : 100_000)),
    httpSeconds: Number(value('http-seconds') ?? (quick ? 2 : 5)),
    warmupSeconds: quick ? 1 : 2,
    rounds: Number(value('rounds') ?? (quick ? 1 : 3)),
    connections: Number(value('connections') ?? 32),
    pgUrl: value('pg-url') ?? process.env.DATABASE_URL ?? DEFAULT_PG_URL,
    pgPool: Number(value('pg-pool') ?? 16),
  };
  const positive = (n: number): boolean => Number.isInteger(n) && n > 0;
  if (
    !config.sizes.every(positive) ||
    !config.engines.every((e) => SQL_ENGINES.includes(e)) ||
    !(config.seconds > 0) ||
    !(config.maxLoadSeconds > 0) ||
    !(Number.isInteger(config.httpRows) && config.httpRows >= 0) ||
    !(config.httpSeconds > 0) ||
    ![config.rounds, config.connections, config.pgPool].every(positive)
  ) {
    throw new Error(`usage: sql.bench.ts [--quick] [--sizes=N,N] [--engines=${SQL_ENGINES.join(',')}] [--seconds=S] [--max-load-seconds=S] [--http-rows=N] [--http-seconds=S] [--rounds=N] [--connections=N] [--pg-url=URL] [--pg-pool=N] [--no-inprocess]`);
  }
  // The reference answers first, so every other engine is checked as soon as it is measured.
  config.engines.sort((a, b) => (a === REFERENCE ? -1 : b === REFERENCE ? 1 : SQL_ENGINES.indexOf(a) - SQL_ENGINES.indexOf(b)));
  return config;
}

function opLabel(op: OpName): string {
  if (op === 'batch') return `batch insert, ${BATCH_ROWS} rows (ops = batches)`;
  if (op.startsWith('insert-')) {
    const writers = Number(op.slice('insert-'.length));
    return `single-row insert, ${writers} writer${writers === 1 ? '' : 's'}`;
  }
  return QUERIES[op as QueryName].label;
}
const OPS: OpName[] = [...QUERY_NAMES, 'batch', ...WRITERS.map((w) => `insert-${w}` as const)];

// ---- In process ---------------------------------------------------------------------------------

/** Why `engine` should not run at `size`, judged from its figures at the previous size, if any. */
function skipReason(config: Config, previous: SqlWorkerResult | undefined, size: number): string | undefined {
  if (previous === undefined) return undefined;
  if (!previous.ok) return `failed at ${fmtCount(previous.orders)} rows (${previous.reason})`;
  const scale = size / previous.orders;
  const loadSeconds = previous.loadSeconds * scale;
  if (loadSeconds > config.maxLoadSeconds) return `loading would take ~${fmtInt(loadSeconds)} s at its ${fmtCount(previous.orders)}-row rate (${fmtInt(previous.orders / previous.loadSeconds)} rows/s), over the ${config.maxLoadSeconds} s limit (--max-load-seconds)`;
  const rss = previous.peakRssMiB * scale;
  if (rss > config.maxRssMiB) return `its RSS would reach ~${fmtInt(rss)} MiB (${fmtInt(previous.peakRssMiB)} MiB at ${fmtCount(previous.orders)} rows), over half the machine's memory (${fmtInt(config.maxRssMiB)} MiB)`;
  return undefined;
}

async function runInProcess(config: Config, root: string): Promise<SqlWorkerResult[]> {
  const results: SqlWorkerResult[] = [];
  for (const size of config.sizes) {
    let reference: SampleCheck[] | undefined;
    for (const engine of config.engines) {
      const previous = [...results].reverse().find((r) => r.engine === engine);
      const skip = skipReason(config, previous, size);
      if (skip !== undefined && engine !== 'tetradb') {
        process.stderr.write(`  ${engine} ${fmtCount(size)}: skipped: ${skip}\n`);
        results.push({ ok: false, engine, orders: size, reason: `skipped: ${skip}` });
        continue;
      }
      const task: SqlTask = { engine, dir: join(root, `${engine}-${size}`), orders: size, seconds: config.seconds, maxLoadSeconds: config.maxLoadSeconds, cacheBytes: CACHE_BYTES, writers: WRITERS };
      let result: SqlWorkerResult;
      try {
        result = await runWorker<SqlWorkerResult>(here('./sql-worker.ts'), task, `${engine}, ${fmtCount(size)} rows`);
      } catch (err) {
        result = { ok: false, engine, orders: size, reason: `worker failed: ${err instanceof Error ? err.message : String(err)}` };
      }
      if (!result.ok) process.stderr.write(`    ${engine}: n/a: ${result.reason}\n`);
      else if (engine === REFERENCE) reference = result.checks;
      else if (reference !== undefined) compareChecks(engine, result.checks, REFERENCE, reference);
      results.push(result);
    }
  }
  return results;
}

// ---- Over HTTP ----------------------------------------------------------------------------------

type HttpWorkload = 'point' | 'range' | 'group' | 'join' | 'insert';
const HTTP_WORKLOADS: HttpWorkload[] = ['point', 'range', 'group', 'join', 'insert'];
const HTTP_LABELS: Record<HttpWorkload, string> = {
  point: QUERIES.point.label,
  range: QUERIES.range.label,
  group: QUERIES.group.label,
  join: QUERIES.join.label,
  insert: 'durable single-row INSERT',
};

interface RoundResult extends LoadResult {
  memMiB: number;
}

interface Target extends HttpTarget {
  /** The next new order id its insert rows use (ids never repeat across warm-up and rounds). */
  nextId: number;
}

interface HttpRow {
  target: string;
  workload: HttpWorkload | 'hello';
  rounds: RoundResult[];
}

interface HttpResults {
  rows: HttpRow[];
  loads: Array<{ target: string; seconds: number; memMiB: number }>;
  /** Targets that could not be measured, with why. */
  unavailable: Array<{ target: string; reason: string }>;
  pgSettings: string | undefined;
}

async function post(target: Target, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${target.url}/api/sql/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

async function sql(target: Target, statement: string, params: unknown[] = []): Promise<any> {
  const r = await post(target, { sql: statement, params });
  if (r.status !== 200) throw new Error(`POST /api/sql/query answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
  return r.json;
}

/** Creates the schema and loads the rows through the route, 1000 rows per request; returns seconds. */
async function loadOverHttp(target: Target, orders: number): Promise<number> {
  const t0 = performance.now();
  for (const ddl of SCHEMA) await sql(target, ddl);
  const customers = customerCount(orders);
  for (let from = 1; from <= customers; from += BATCH_ROWS) {
    const rows = [];
    for (let id = from; id < Math.min(customers + 1, from + BATCH_ROWS); id++) rows.push(customerRow(id));
    await sql(target, multiRowInsert('customers', rows.length), rows.flat());
  }
  for (let from = 1; from <= orders; from += BATCH_ROWS) {
    const rows = [];
    for (let id = from; id < Math.min(orders + 1, from + BATCH_ROWS); id++) rows.push(orderRow(id, customers));
    await sql(target, multiRowInsert('orders', rows.length), rows.flat());
  }
  return (performance.now() - t0) / 1000;
}

async function checksOverHttp(target: Target, orders: number): Promise<SampleCheck[]> {
  const checks: SampleCheck[] = [];
  for (const s of sampleQueries(orders)) checks.push(checkOf(s.label, (await sql(target, QUERIES[s.name].sql, s.params)).rows, QUERIES[s.name].ordered));
  return checks;
}

/** The reference answers at `orders` rows: better-sqlite3 in memory, in this process. */
async function referenceChecks(orders: number): Promise<SampleCheck[]> {
  const db = await openSqlEngine('sqlite', ':memory:', CACHE_BYTES);
  try {
    const customers = customerCount(orders);
    for (let from = 1; from <= customers; from += BATCH_ROWS) await db.insertBatch('customers', Array.from({ length: Math.min(BATCH_ROWS, customers + 1 - from) }, (_, k) => customerRow(from + k)));
    for (let from = 1; from <= orders; from += BATCH_ROWS) await db.insertBatch('orders', Array.from({ length: Math.min(BATCH_ROWS, orders + 1 - from) }, (_, k) => orderRow(from + k, customers)));
    const checks: SampleCheck[] = [];
    for (const s of sampleQueries(orders)) checks.push(checkOf(s.label, await db.query(QUERIES[s.name].sql, s.params), QUERIES[s.name].ordered));
    return checks;
  } finally {
    await db.close();
  }
}

function bodyMaker(workload: HttpWorkload, target: Target, orders: number): () => string {
  if (workload === 'insert') {
    const customers = customerCount(orders);
    return () => JSON.stringify({ sql: INSERT_ORDER, params: orderRow(target.nextId++, customers) });
  }
  const params = paramsOf(workload, orders);
  const text = QUERIES[workload].sql;
  let i = 0;
  return () => JSON.stringify({ sql: text, params: params(i++) });
}

async function drive(config: Config, target: Target, workload: HttpWorkload | 'hello', seconds: number): Promise<RoundResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (target.apiKey !== '') headers.authorization = `Bearer ${target.apiKey}`;
  const next = workload === 'hello' ? undefined : bodyMaker(workload, target, config.httpRows);
  // Reads cycle through prebuilt requests (pooledRequests), as the hello-world's static GET does;
  // inserts need a new body each (unique ids), made as they go, for both stores alike.
  const requests =
    next === undefined
      ? { requests: [{ method: 'GET' as const, path: '/hello' }] }
      : workload === 'insert'
        ? { requests: [{ method: 'POST' as const, path: '/api/sql/query', setupRequest: (req: any) => ({ ...req, body: next() }) }] }
        : pooledRequests('POST', '/api/sql/query', headers, Array.from({ length: READ_BODIES }, next), config.connections);
  const sampler = peakSampler(target.memory, target.sampleMs);
  const result = await autocannon({ url: target.url, connections: config.connections, duration: seconds, headers, ...requests });
  return { ...loadResult(result), memMiB: sampler.stop() };
}

async function runHttp(config: Config, root: string): Promise<HttpResults> {
  const out: HttpResults = { rows: [], loads: [], unavailable: [], pgSettings: undefined };
  const children: ChildProcess[] = [];
  let pgClient: pg.Client | undefined;
  const dropTables = async (): Promise<void> => {
    await pgClient?.query('DROP TABLE IF EXISTS orders, customers');
  };
  try {
    process.stderr.write(`  reference answers (better-sqlite3 in memory, ${fmtCount(config.httpRows)} rows)...\n`);
    const reference = await referenceChecks(config.httpRows);
    const helloPort = await freePort();
    const hello = await startPeer(here('./servers/hello-server.ts'), [String(helloPort)]);
    children.push(hello);
    const helloTarget: Target = { name: HELLO_NAME, url: `http://127.0.0.1:${helloPort}`, apiKey: '', memory: () => rssMiB(hello.pid), sampleMs: 250, nextId: 0 };
    const stores: Target[] = [];

    const tetra = await startTetra(join(root, 'http-tetra'), ['--rate-limit', '0']);
    children.push(tetra.child);
    const tetraTarget: Target = { name: 'tetradb', url: tetra.url, apiKey: tetra.apiKey, memory: () => rssMiB(tetra.child.pid), sampleMs: 250, nextId: config.httpRows + 1 };
    const pgConn = await connectPg(config.pgUrl);
    let pgTarget: Target | undefined;
    if ('reason' in pgConn) {
      out.unavailable.push({ target: PG_NAME, reason: `PostgreSQL not reachable at ${redact(config.pgUrl)} (${pgConn.reason}); start it (pg_ctlcluster 15 main start) or point --pg-url / DATABASE_URL at one` });
    } else {
      pgClient = pgConn.client;
      out.pgSettings = pgConn.settings;
      await dropTables();
      const port = await freePort();
      const front = await startPeer(here('./servers/pg-sql-server.ts'), [String(port), 'bench-key', String(config.pgPool)], { DATABASE_URL: config.pgUrl });
      children.push(front);
      pgTarget = { name: PG_NAME, url: `http://127.0.0.1:${port}`, apiKey: 'bench-key', memory: () => rssMiB(front.pid) + postgresPssMiB(), sampleMs: 1000, nextId: config.httpRows + 1 };
    }
    for (const target of pgTarget === undefined ? [tetraTarget] : [tetraTarget, pgTarget]) {
      process.stderr.write(`  ${target.name}: loading ${fmtCount(config.httpRows)} orders over HTTP...\n`);
      try {
        const seconds = await loadOverHttp(target, config.httpRows);
        if (target === pgTarget) await pgClient!.query('ANALYZE orders, customers'); // autovacuum would, a little later
        out.loads.push({ target: target.name, seconds, memMiB: target.memory() });
        compareChecks(`${target.name} over HTTP`, await checksOverHttp(target, config.httpRows), `${REFERENCE} (in memory)`, reference);
        stores.push(target);
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        if (reason.startsWith('results differ')) throw err;
        out.unavailable.push({ target: target.name, reason });
        process.stderr.write(`    ${target.name}: n/a: ${reason}\n`);
      }
    }

    const rowOf = (target: string, workload: HttpRow['workload']): HttpRow => {
      let row = out.rows.find((x) => x.target === target && x.workload === workload);
      if (row === undefined) out.rows.push((row = { target, workload, rounds: [] }));
      return row;
    };
    await drive(config, helloTarget, 'hello', config.warmupSeconds);
    for (const t of stores) for (const w of HTTP_WORKLOADS) await drive(config, t, w, config.warmupSeconds);
    for (let round = 0; round < config.rounds; round++) {
      process.stderr.write(`  HTTP round ${round + 1} of ${config.rounds}\n`);
      rowOf(helloTarget.name, 'hello').rounds.push(await drive(config, helloTarget, 'hello', config.httpSeconds));
      const order = round % 2 === 0 ? stores : [...stores].reverse();
      for (const w of HTTP_WORKLOADS) for (const t of order) rowOf(t.name, w).rounds.push(await drive(config, t, w, config.httpSeconds));
    }
    for (const c of children) await stop(c);
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    if (pgClient !== undefined) {
      await dropTables().catch(() => undefined);
      await pgClient.end().catch(() => undefined);
    }
  }
  return out;
}

// ---- Output -------------------------------------------------------------------------------------

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

function versions(): string {
  const version = packageVersion;
  return `better-sqlite3 ${version('better-sqlite3')}, @electric-sql/pglite ${version('@electric-sql/pglite')}, pg-mem ${version('pg-mem')}, alasql ${version('alasql')}, pg ${version('pg')}, autocannon ${version('autocannon')}`;
}

function renderInProcess(config: Config, results: SqlWorkerResult[], out: string[], checks: string[]): void {
  const check = (ok: boolean | undefined, text: string): void => void checks.push(`${ok === undefined ? 'n/a ' : ok ? 'PASS' : 'FAIL'}  ${text}`);
  const find = (engine: SqlEngineName, size: number): SqlWorkerResult | undefined => results.find((r) => r.engine === engine && r.orders === size);
  const opOf = (engine: SqlEngineName, size: number, op: OpName): OpResult | undefined => {
    const r = find(engine, size);
    return r?.ok === true ? r.ops.find((o) => o.op === op) : undefined;
  };

  out.push('## In process\n');
  out.push(`Each engine and size in a forked worker (bench/sql-worker.ts): schema, load of N orders + N/10 customers in batches of ${BATCH_ROWS}, then ANALYZE (SQLite, PGlite) or a checkpoint (tetradb) in the load time, the sample queries checked against ${REFERENCE}, then each operation from one caller for ${config.seconds} s after a warm-up of ${config.seconds / 4} s (writes after every query). ops/s, p50 and p99 per call. "vs tetradb" and "vs SQLite" divide this row's ops/s by theirs.\n`);
  for (const engine of config.engines) out.push(`- ${engine}: single-row inserts ${ENGINE_NOTES[engine].durable}; batch insert: ${ENGINE_NOTES[engine].batch}.`);
  out.push('');
  out.push(
    table(
      ['engine', 'rows', 'open', 'load s', 'load rows/s (orders + customers)', 'RSS / heap after load MiB', 'peak RSS / heap MiB'],
      results.map((r) => {
        if (!r.ok) return [r.engine, fmtCount(r.orders), `n/a: ${r.reason}`, '-', '-', '-', '-'];
        return [r.engine, fmtCount(r.orders), fmtUs(r.openMs * 1000), fmtNum(r.loadSeconds, 2), fmtInt((r.orders * 1.1) / r.loadSeconds), `${fmtInt(r.loadedRssMiB)} / ${fmtInt(r.loadedHeapMiB)}`, `${fmtInt(r.peakRssMiB)} / ${fmtInt(r.peakHeapMiB)}`];
      }),
      2,
    ),
  );
  out.push('');
  for (const size of config.sizes) {
    out.push(`### ${fmtCount(size)} orders, ${fmtCount(customerCount(size))} customers\n`);
    const rows: string[][] = [];
    for (const op of OPS) {
      for (const engine of config.engines) {
        const r = find(engine, size);
        if (r === undefined) continue;
        if (!r.ok) {
          rows.push([opLabel(op), engine, `n/a: ${r.reason}`, '-', '-', '-', '-', '-']);
          continue;
        }
        const o = r.ops.find((x) => x.op === op)!;
        const mem = `${fmtInt(r.peakRssMiB)} / ${fmtInt(r.peakHeapMiB)}`;
        rows.push([opLabel(op), engine, fmtInt(o.hz), fmtRatio(o.hz / (opOf('tetradb', size, op)?.hz ?? NaN)), fmtRatio(o.hz / (opOf('sqlite', size, op)?.hz ?? NaN)), fmtUs(o.p50Us), fmtUs(o.p99Us), mem]);
      }
    }
    out.push(table(['op', 'engine', 'ops/s', 'vs tetradb', 'vs SQLite', 'p50', 'p99', 'worker peak RSS / heap MiB'], rows, 2));
    out.push('');
  }
  if (config.sizes.length > 1) {
    out.push('### Growth with size (ops/s at each size, same operations)\n');
    out.push(
      growthTable({
        ops: OPS,
        engines: config.engines,
        sizes: config.sizes,
        hz: (engine, s, op) => opOf(engine, s, op)?.hz,
        cell: (engine, s, op) => {
          const r = find(engine, s);
          return r === undefined ? '-' : r.ok ? fmtInt(opOf(engine, s, op)?.hz) : 'n/a';
        },
        opLabel,
        opHeader: 'op',
        sizeHeader: (s) => `${fmtCount(s)} rows`,
      }),
    );
    out.push('');
  }

  for (const size of config.sizes) {
    const tetra = find('tetradb', size);
    for (const op of OPS) {
      const t = opOf('tetradb', size, op);
      const peers = (['pglite', 'pg-mem', 'alasql'] as const).filter((e) => config.engines.includes(e));
      const parts = peers.map((e) => {
        const p = find(e, size);
        if (p === undefined || !p.ok) return { e, ok: undefined, text: `${e} ${p === undefined ? 'not run' : p.reason.startsWith('skipped') ? 'skipped' : 'n/a'}` };
        const x = t === undefined ? undefined : t.hz / p.ops.find((o) => o.op === op)!.hz;
        return { e, ok: x === undefined ? undefined : x > 1, text: `${e} ${x === undefined ? '-' : fmtRatio(x)}` };
      });
      const measured = parts.filter((p) => p.ok !== undefined);
      const ok = t === undefined || measured.length === 0 ? undefined : measured.every((p) => p.ok === true);
      const why = t === undefined ? `tetradb n/a${tetra !== undefined && !tetra.ok ? `: ${tetra.reason}` : ''}` : parts.map((p) => p.text).join(', ');
      // The target names queries; writes are compared too, but pg-mem and AlaSQL do not persist
      // anything, so a durable engine behind them there is reported, not judged.
      if ((QUERY_NAMES as readonly string[]).includes(op)) check(ok, `${fmtCount(size)} rows, ${opLabel(op)}: tetradb ahead of PGlite, pg-mem and AlaSQL (${why})`);
      else checks.push(`info  ${fmtCount(size)} rows, ${opLabel(op)}: tetradb vs PGlite, pg-mem, AlaSQL (${why}; not a target: none of the three is durable: pg-mem and AlaSQL are in memory only, PGlite's fdatasync is a no-op)`);
    }
    for (const op of ['point', 'batch'] as const) {
      const t = opOf('tetradb', size, op);
      const s = opOf('sqlite', size, op);
      const x = t !== undefined && s !== undefined ? t.hz / s.hz : undefined;
      check(x === undefined ? undefined : x >= 1 / 3, `${fmtCount(size)} rows, ${opLabel(op)}: tetradb within 3x of SQLite (>= 0.33x; ${x === undefined ? (t === undefined ? 'tetradb n/a' : 'SQLite n/a') : fmtRatio(x)})`);
    }
  }
}

function renderHttp(config: Config, r: HttpResults, out: string[], checks: string[]): void {
  const check = (ok: boolean | undefined, text: string): void => void checks.push(`${ok === undefined ? 'n/a ' : ok ? 'PASS' : 'FAIL'}  ${text}`);
  const find = (target: string, workload: HttpRow['workload']): HttpRow | undefined => r.rows.find((x) => x.target === target && x.workload === workload && x.rounds.length > 0);
  const ratio = (row: HttpRow | undefined, other: HttpRow | undefined): number | undefined =>
    row === undefined || other === undefined || row.rounds.length !== other.rounds.length ? undefined : median(row.rounds.map((x, i) => x.rps / other.rounds[i]!.rps));
  const hello = find(HELLO_NAME, 'hello');
  const tetraEnv = Object.entries(process.env).filter(([k]) => k.startsWith('TETRA_')).map(([k, v]) => `${k}=${v}`);

  out.push(`## Over HTTP (${fmtCount(config.httpRows)} orders)\n`);
  out.push(`- autocannon in this process: ${config.connections} connections, ${config.httpSeconds} s per row after a ${config.warmupSeconds} s warm-up per server and workload; ${config.rounds} round${config.rounds > 1 ? 's, stores alternating; a row shows its median round, ratios are medians of same-round ratios' : ''}. Bodies are \`{sql, params}\` with the statements of the in-process part; reads cycle through ${READ_BODIES} prebuilt requests split among the connections (as the hello-world's static GET is prebuilt), the inserts are new orders (ids after the loaded ones). Data loaded through the same route, 1000 rows per request; the sample queries are checked against better-sqlite3 before the runs.`);
  out.push(`- tetradb: the server as \`npm start\` runs it (server/config.ts defaults: fsync=batch, cache 256 MiB) **except --rate-limit 0** (the default 1000 requests/s per key would answer most requests 429). TETRA_* in the environment: ${tetraEnv.length > 0 ? tetraEnv.join(' ') : 'none'}.`);
  if (r.pgSettings !== undefined) out.push(`- ${PG_NAME}: ${r.pgSettings}; Fastify 5 + node-postgres (pool of ${config.pgPool}, named prepared statements) on the same route and body shape; bearer check: SHA-256 of the header and a constant-time compare with one fixed key (no tenant lookup); ANALYZE after the load.`);
  for (const u of r.unavailable) out.push(`- **${u.target}: n/a: ${u.reason}**`);
  out.push('');
  if (r.loads.length > 0) {
    out.push(table(['target', 'load seconds', 'rows/s (orders + customers)', 'server memory after MiB'], r.loads.map((l) => [l.target, fmtNum(l.seconds, 2), fmtInt((config.httpRows * 1.1) / l.seconds), fmtInt(l.memMiB)])));
    out.push('');
  }
  const rows = r.rows.filter((row) => row.rounds.length > 0).map((row) => {
    const m = [...row.rounds].sort((a, b) => a.rps - b.rps)[Math.floor((row.rounds.length - 1) / 2)]!;
    const mem = Math.max(...row.rounds.map((x) => x.memMiB));
    return [
      row.target,
      row.workload === 'hello' ? 'GET /hello' : HTTP_LABELS[row.workload],
      fmtInt(m.rps),
      fmtRatio(ratio(row, find('tetradb', row.workload))),
      fmtRatio(ratio(row, hello)),
      row.workload === 'hello' ? '-' : fmtRatio(ratio(row, find(PG_NAME, row.workload))),
      fmtNum(m.p50),
      fmtNum(m.p99),
      `${row.rounds.reduce((s, x) => s + x.errors, 0)} / ${row.rounds.reduce((s, x) => s + x.non2xx, 0)}`,
      row.target === PG_NAME ? `${fmtInt(mem)} (front + postgres PSS)` : fmtInt(mem),
    ];
  });
  for (const u of r.unavailable) rows.push([u.target, 'all', `n/a: ${u.reason}`, '-', '-', '-', '-', '-', '-', '-']);
  out.push(table(['target', 'request', 'req/s', 'vs tetradb', 'vs hello', 'vs fastify+pg', 'p50 ms', 'p99 ms', 'errors / non-2xx', 'server memory peak MiB'], rows, 2));
  out.push('');
  const target = (workload: HttpWorkload, peerName: string, peer: HttpRow | undefined, min: number): void => {
    const x = ratio(find('tetradb', workload), peer);
    const why = x !== undefined ? fmtRatio(x) : find('tetradb', workload) === undefined ? 'tetradb n/a' : `${peerName} n/a`;
    check(x === undefined ? undefined : x >= min, `HTTP ${HTTP_LABELS[workload]} >= ${min}x ${peerName} (${why})`);
  };
  target('point', 'hello-world', hello, 0.5);
  target('point', 'Fastify+PostgreSQL', find(PG_NAME, 'point'), 1);
  target('insert', 'Fastify+PostgreSQL', find(PG_NAME, 'insert'), 1);
  const errors = r.rows.filter((x) => x.rounds.some((y) => y.errors + y.non2xx > 0));
  if (errors.length > 0) checks.push(`note  HTTP rows with errors or non-2xx answers: ${errors.map((x) => `${x.target} ${x.workload}`).join(', ')}`);
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const machine = machineLine();
  const { root, cleanup } = scratchDir('tetradb-sqlbench-');
  process.stderr.write(`tetradb SQL benchmark (${config.quick ? 'quick' : 'full'}): in process ${config.inprocess ? config.sizes.map(fmtCount).join(', ') : 'off'}; HTTP ${config.httpRows > 0 ? fmtCount(config.httpRows) : 'off'}\n`);
  let inprocess: SqlWorkerResult[] = [];
  let http: HttpResults | undefined;
  try {
    if (config.inprocess) inprocess = await runInProcess(config, root);
    if (config.httpRows > 0) http = await runHttp(config, root);
  } finally {
    await new Promise((r) => setTimeout(r, 300));
    cleanup();
  }
  const out: string[] = [];
  const checks: string[] = [];
  out.push(`# SQL (${config.quick ? 'quick' : 'full'} run, ${fmtNum((Date.now() - started) / 60_000)} min)\n`);
  out.push(machine);
  out.push(`- ${versions()}`);
  out.push(`- Schema (lib/sql-workload.ts): customers(id INTEGER PRIMARY KEY, name TEXT, region TEXT, created DATE), orders(id INTEGER PRIMARY KEY, customer_id INTEGER, amount DOUBLE PRECISION, status TEXT, created_at TIMESTAMP), indexes orders(customer_id), orders(created_at). amount is DOUBLE PRECISION on every engine (whole cents): SQLite and AlaSQL have no exact NUMERIC. Every engine measured answered the sample queries (${sampleQueries(config.sizes[0]!).length} calls: 8 point, 4 range, 4 join, both aggregates) with the same row counts and checksums as better-sqlite3 (the run stops otherwise).`);
  out.push('');
  if (config.inprocess) renderInProcess(config, inprocess, out, checks);
  if (http !== undefined) renderHttp(config, http, out, checks);
  out.push('## Targets\n', '```', ...checks, '```', '');
  process.stdout.write(out.join('\n'));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
