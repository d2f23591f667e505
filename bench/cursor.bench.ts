// Reading many documents through the HTTP API page by page, the way a user exports or iterates a
// collection: tetradb's MQL cursors (find with batchSize, then getMore until the cursor id is null)
// against what a user without cursors does on tetradb (skip/limit paging, keyset paging) and
// against the issue's peer, Fastify + PostgreSQL 15 JSONB (bench/servers/pg-docs-server.ts), paging
// by key through its findPage route. One client, one request at a time, as an export runs.
//
// For each size (--sizes, default 10k and 100k; 1M by flag) both stores get the same documents
// (bench/lib/documents.ts makeQueryDocument, ~330 bytes of JSON) through insertMany in batches of
// 1000, fresh servers and a fresh collection per size, an index on `joined` in both (tetradb
// createIndex {joined: 1}; PostgreSQL ((doc->>'joined')::bigint)). Two reads:
//   all    the whole collection in _id order;
//   range  joined in the first half of its span (~half the collection, through the index) sorted
//          by {name: 1, _id: 1}: name has 256 values and no index, so each store sorts (tetradb in
//          memory up to its 64 MiB bound, spilling past it; PostgreSQL in work_mem or on disk), and
//          _id breaks the ties so keyset paging has a total order to page by.
// Methods, each page --batch documents (default 1000):
//   tetradb cursor      find {filter, sort, batchSize} then getMore {cursorId, batchSize} until null;
//   tetradb skip/limit  find {filter, sort, skip: k * batch, limit: batch} until a short page:
//                       page k reads and drops k * batch documents first, O(n^2) in all;
//   tetradb keyset      find {filter + (sort key > last page's last), sort, limit: batch}: all is
//                       {_id: {$gt: last}}, range is {$or: [{name: {$gt: n}}, {name: n, _id: {$gt: id}}]}
//                       ANDed with the joined range;
//   fastify + pg keyset POST /api/mql/findPage: WHERE id > $1 ORDER BY id LIMIT $2, and for range
//                       the same joined range with (name, id) > ($3, $4) ORDER BY name, id (COLLATE "C").
// Every method's read is capped at --cap-seconds (default 60): one that has not finished by then
// stops after the page in flight and its row reports what it read in that time (documents/s).
//
// Correctness first: before any timing, each method reads once (a warm-up, capped at
// --check-seconds) and its answer is checked; the timed read's answer is checked again after its
// timer stops. A check compares every document read with the generator's (deep equality, key
// order aside: PostgreSQL's JSONB reorders keys) and the _id sequence with the expected one (a
// prefix of it for a capped read), and the sha256 of the _id sequence across the methods that read
// everything; any difference throws before a table is printed.
//
// Each method's timed read runs --rounds times (default 3; the order of the methods alternating by
// round; a capped read once only) and its row shows the round with the median documents/s. Per read:
// wall time, documents/s, pages (requests), the first page's latency (a cursor's first batch of
// the range shape carries the whole sort) and per-page p50/p99 (request sent to answer parsed, in
// this process), and server memory at its start and its peak while it ran: tetradb VmRSS
// sampled every 250 ms; the peer "front + postgres" = Fastify VmRSS + PSS of every PostgreSQL
// process, every second. The servers live through all the reads of a size, so a read's start is
// what the reads before it left (RSS seldom shrinks).
//
//   npm --prefix bench run cursor
//   node --import ./lib/ts-register.mjs cursor.bench.ts [--sizes=10000,100000] [--batch=1000]
//        [--cap-seconds=60] [--check-seconds=15] [--rounds=3] [--pg-url=postgres://...]
//
// PostgreSQL: DATABASE_URL or --pg-url, default postgres://tetrabench:tetrabench@127.0.0.1:5432/tetrabench
// (docs/benchmarks.md). When it cannot be reached its rows are skipped with a message; the rest runs.
// tetradb runs as `npm start` runs it, except --rate-limit 0, a free port and a fresh data directory.
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import type pg from 'pg';
import { byCodePoint } from './lib/code-points.js';
import { docId, JOINED_SPAN_MS, JOINED_START_MS, makeQueryDocument, type QueryDocument } from './lib/documents.js';
import { endHttpRun, freePort, peakSampler, postgresPssMiB, rssMiB, startPeer, startTetra, stop, postJson, type HttpTarget } from './lib/http-servers.js';
import { connectPgOrSkip, DEFAULT_PG_URL } from './lib/pg-connect.js';
import { flagValue, fmtCount, fmtInt, fmtNum, fmtRatio, machineLine, scratchDir, table } from './lib/report.js';

const COLLECTION = 'people';
const LOAD_BATCH = 1000;
const PG_POOL = 4;
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

interface Config {
  sizes: number[];
  batch: number;
  capSeconds: number;
  checkSeconds: number;
  rounds: number;
  pgUrl: string;
}

function parseArgs(argv: string[]): Config {
  const value = (name: string): string | undefined => flagValue(argv, name);
  const config: Config = {
    sizes: (value('sizes') ?? '10000,100000').split(',').map(Number),
    batch: Number(value('batch') ?? 1000),
    capSeconds: Number(value('cap-seconds') ?? 60),
    checkSeconds: Number(value('check-seconds') ?? 15),
    rounds: Number(value('rounds') ?? 3),
    pgUrl: value('pg-url') ?? process.env.DATABASE_URL ?? DEFAULT_PG_URL,
  };
  const ok =
    config.sizes.length > 0 &&
    config.sizes.every((n) => Number.isInteger(n) && n > 0) &&
    Number.isInteger(config.batch) &&
    config.batch >= 1 &&
    config.batch <= 10_000 &&
    config.capSeconds > 0 &&
    config.checkSeconds > 0 &&
    Number.isInteger(config.rounds) &&
    config.rounds >= 1;
  if (!ok) throw new Error('usage: cursor.bench.ts [--sizes=N,N,...] [--batch=1..10000] [--cap-seconds=S] [--check-seconds=S] [--rounds=N] [--pg-url=URL]');
  return config;
}

// ---- Reads ---------------------------------------------------------------------------------------

type Shape = 'all' | 'range';
type Method = 'cursor' | 'skip' | 'keyset' | 'pg-keyset';
const SHAPES: Record<Shape, string> = {
  all: 'whole collection, _id order',
  range: 'joined in first half of span (indexed), sort {name: 1, _id: 1}',
};
const METHODS: Record<Method, string> = {
  cursor: 'tetradb cursor',
  skip: 'tetradb skip/limit',
  keyset: 'tetradb keyset',
  'pg-keyset': 'fastify + pg keyset',
};

/** The `joined` range of the range shape: the first half of the generator's span (~half the documents). */
const RANGE = { gte: JOINED_START_MS, lt: JOINED_START_MS + JOINED_SPAN_MS / 2 };
const RANGE_FILTER = { joined: { $gte: RANGE.gte, $lt: RANGE.lt } };
const SORTS: Record<Shape, Doc> = { all: { _id: 1 }, range: { name: 1, _id: 1 } };

type Doc = Record<string, unknown>;

type Target = HttpTarget;

const post = postJson;

/** One page answered: its documents, and whether the read is over. */
interface Page {
  documents: Doc[];
  done: boolean;
}

/**
 * A paged read as a user writes it: `next()` asks for the next page from what the pages before
 * it said (a cursor id, a page number, the last key); `abandon()` frees what a read left open.
 */
interface Reader {
  next(): Promise<Page>;
  abandon(): Promise<void>;
}

function answer(target: Target, what: string, r: { status: number; json: any }): Doc[] {
  if (r.status !== 200 || !Array.isArray(r.json.documents)) throw new Error(`${target.name}: ${what} answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
  return r.json.documents as Doc[];
}

/** The filter after the last document of a page in the shape's sort order. */
function keysetFilter(shape: Shape, last: Doc): Doc {
  if (shape === 'all') return { _id: { $gt: last['_id'] } };
  return { ...RANGE_FILTER, $or: [{ name: { $gt: last['name'] } }, { name: last['name'], _id: { $gt: last['_id'] } }] };
}

function reader(method: Method, shape: Shape, target: Target, batch: number): Reader {
  const filter = shape === 'all' ? {} : RANGE_FILTER;
  const sort = SORTS[shape];
  switch (method) {
    case 'cursor': {
      let cursorId: string | null | undefined;
      return {
        async next() {
          const r =
            cursorId === undefined
              ? await post(target, '/api/mql/find', { collection: COLLECTION, filter, sort, batchSize: batch })
              : await post(target, '/api/mql/getMore', { collection: COLLECTION, cursorId, batchSize: batch });
          const documents = answer(target, cursorId === undefined ? 'find with batchSize' : 'getMore', r);
          cursorId = r.json.cursorId as string | null;
          if (cursorId !== null && typeof cursorId !== 'string') throw new Error(`${target.name}: cursorId ${JSON.stringify(cursorId)}`);
          return { documents, done: cursorId === null };
        },
        async abandon() {
          if (typeof cursorId !== 'string') return;
          const r = await post(target, '/api/mql/killCursors', { collection: COLLECTION, cursors: [cursorId] });
          if (r.status !== 200 || r.json.cursorsKilled?.[0] !== cursorId) throw new Error(`${target.name}: killCursors answered ${r.status}: ${JSON.stringify(r.json)}`);
        },
      };
    }
    case 'skip': {
      let page = 0;
      return {
        async next() {
          const documents = answer(target, 'find skip/limit', await post(target, '/api/mql/find', { collection: COLLECTION, filter, sort, skip: page++ * batch, limit: batch }));
          return { documents, done: documents.length < batch };
        },
        abandon: () => Promise.resolve(),
      };
    }
    case 'keyset': {
      let last: Doc | undefined;
      return {
        async next() {
          const f = last === undefined ? filter : keysetFilter(shape, last);
          const documents = answer(target, 'find keyset', await post(target, '/api/mql/find', { collection: COLLECTION, filter: f, sort, limit: batch }));
          last = documents[documents.length - 1];
          return { documents, done: documents.length < batch };
        },
        abandon: () => Promise.resolve(),
      };
    }
    case 'pg-keyset': {
      let last: Doc | undefined;
      return {
        async next() {
          const after = last === undefined ? {} : { after: shape === 'all' ? { id: last['_id'] } : { id: last['_id'], name: last['name'] } };
          const joined = shape === 'all' ? {} : { joined: RANGE };
          const documents = answer(target, 'findPage', await post(target, '/api/mql/findPage', { collection: COLLECTION, limit: batch, ...after, ...joined }));
          last = documents[documents.length - 1];
          return { documents, done: documents.length < batch };
        },
        abandon: () => Promise.resolve(),
      };
    }
    default: {
      const never: never = method;
      throw new Error(`unknown method ${String(never)}`);
    }
  }
}

interface Run {
  documents: Doc[];
  seconds: number;
  pages: number;
  /** Per-page latencies, ms. */
  latencies: number[];
  /** Whether the read reached its end before the cap. */
  complete: boolean;
  /** Server memory when the read began, and its peak while it ran (MiB). */
  startMiB: number;
  memMiB: number;
}

/** Reads pages until the end or until `capSeconds` have passed (the page in flight is kept). */
async function read(method: Method, shape: Shape, target: Target, batch: number, capSeconds: number): Promise<Run> {
  const r = reader(method, shape, target, batch);
  const documents: Doc[] = [];
  const latencies: number[] = [];
  const startMiB = target.memory();
  const sampler = peakSampler(target.memory, target.sampleMs);
  const t0 = performance.now();
  let complete = false;
  for (;;) {
    const p0 = performance.now();
    const page = await r.next();
    const p1 = performance.now();
    latencies.push(p1 - p0);
    for (const d of page.documents) documents.push(d);
    if (page.done) {
      complete = true;
      break;
    }
    if (p1 - t0 > capSeconds * 1000) break;
  }
  const seconds = (performance.now() - t0) / 1000;
  const memMiB = sampler.stop();
  if (!complete) await r.abandon();
  return { documents, seconds, pages: latencies.length, latencies, complete, startMiB, memMiB };
}

// ---- Expected answers and checks -----------------------------------------------------------------

/** The document numbers each shape must answer, in order, for `size` loaded documents. */
function expectedOrder(size: number): Record<Shape, number[]> {
  const all = Array.from({ length: size }, (_, i) => i);
  const docs = all.map((i) => makeQueryDocument(i));
  const range = docs
    .filter((d) => d.joined >= RANGE.gte && d.joined < RANGE.lt)
    .sort((a, b) => byCodePoint(a.name, b.name) || byCodePoint(a._id, b._id))
    .map((d) => d.n);
  // docId pads the number to 9 digits: _id order is number order.
  return { all, range };
}

function sha256(ids: readonly unknown[]): string {
  return createHash('sha256').update(ids.join('\n')).digest('hex');
}

/**
 * Throws unless the run's documents are the expected ones in the expected order (all of them when
 * complete, a prefix when capped), each equal to the generator's.
 */
function check(what: string, run: Run, expected: readonly number[]): void {
  const got = run.documents;
  if (run.complete ? got.length !== expected.length : got.length > expected.length) {
    throw new Error(`${what}: read ${got.length} documents${run.complete ? ' to its end' : ' (capped)'}, expected ${run.complete ? '' : 'at most '}${expected.length}`);
  }
  for (let k = 0; k < got.length; k++) {
    const n = expected[k]!;
    const want: QueryDocument = makeQueryDocument(n);
    if (!isDeepStrictEqual(got[k], want)) {
      throw new Error(`${what}: document ${k} is ${JSON.stringify(got[k]).slice(0, 300)}, expected ${docId(n)}: ${JSON.stringify(want).slice(0, 300)}`);
    }
  }
}

// ---- Main ----------------------------------------------------------------------------------------

/** A timed read, checked, its documents dropped. */
interface Timed extends Omit<Run, 'documents'> {
  /** Documents it returned. */
  count: number;
  /** sha256 of its _id sequence when it read to the end. */
  hash: string | undefined;
}

interface Row {
  method: Method;
  shape: Shape;
  size: number;
  expected: number;
  /** One timed read per round (a capped read is not repeated). */
  runs: Timed[];
}

const rateOf = (t: Timed): number => t.count / t.seconds;

/** The round with the median documents/s (the lower middle one of an even count). */
function medianRun(row: Row): Timed {
  const sorted = [...row.runs].sort((a, b) => rateOf(a) - rateOf(b));
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** Loads documents 0..size-1 through insertMany, LOAD_BATCH at a time; returns seconds. */
async function load(target: Target, size: number): Promise<number> {
  const t0 = performance.now();
  for (let start = 0; start < size; start += LOAD_BATCH) {
    const documents = [];
    for (let i = start; i < Math.min(size, start + LOAD_BATCH); i++) documents.push(makeQueryDocument(i));
    const r = await post(target, '/api/mql/insertMany', { collection: COLLECTION, documents });
    if (r.status !== 201 || r.json.insertedIds?.length !== documents.length) throw new Error(`${target.name}: insertMany answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
  }
  return (performance.now() - t0) / 1000;
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const machine = machineLine();
  const { root, cleanup } = scratchDir('tetradb-cursorbench-');
  const rows: Row[] = [];
  const notes: string[] = [];
  const children: ChildProcess[] = [];
  let pgClient: pg.Client | undefined;
  let pgSettings: string | undefined;
  let pgSkipped: string | undefined;
  process.stderr.write(`tetradb cursors over HTTP: sizes ${config.sizes.map(fmtCount).join(', ')}, pages of ${config.batch}, reads capped at ${config.capSeconds} s\n`);
  try {
    ({ client: pgClient, settings: pgSettings, skipped: pgSkipped } = await connectPgOrSkip(config.pgUrl));

    for (const size of config.sizes) {
      const expected = expectedOrder(size);
      const tetra = await startTetra(join(root, `tetra-${size}`), ['--rate-limit', '0']);
      children.push(tetra.child);
      const tetraTarget: Target = { name: 'tetradb', url: tetra.url, apiKey: tetra.apiKey, memory: () => rssMiB(tetra.child.pid), sampleMs: 250 };
      const index = await post(tetraTarget, '/api/mql/createIndex', { collection: COLLECTION, keys: { joined: 1 } });
      if (index.status !== 200) throw new Error(`createIndex {joined: 1} answered ${index.status}: ${JSON.stringify(index.json)}`);
      process.stderr.write(`  ${fmtCount(size)}: tetradb loading...\n`);
      const tetraLoad = await load(tetraTarget, size);
      const tetraAfterLoad = tetraTarget.memory();

      let pgTarget: Target | undefined;
      let front: ChildProcess | undefined;
      let pgLoad = NaN;
      if (pgClient !== undefined) {
        const port = await freePort();
        const apiKey = 'bench-key';
        front = await startPeer(here('./servers/pg-docs-server.ts'), [String(port), apiKey, COLLECTION, String(PG_POOL)], { DATABASE_URL: config.pgUrl });
        children.push(front);
        const pid = front.pid;
        pgTarget = { name: 'fastify + postgresql', url: `http://127.0.0.1:${port}`, apiKey, memory: () => rssMiB(pid) + postgresPssMiB(), sampleMs: 1000 };
        await pgClient.query(`CREATE INDEX ${COLLECTION}_joined ON ${COLLECTION} (((doc->>'joined')::bigint))`);
        process.stderr.write(`  ${fmtCount(size)}: postgresql loading...\n`);
        pgLoad = await load(pgTarget, size);
        // What autovacuum would do in time: statistics for the planner, the visibility map set.
        await pgClient.query(`VACUUM ANALYZE ${COLLECTION}`);
      }
      notes.push(
        `- ${fmtCount(size)}: loaded in ${fmtNum(tetraLoad, 1)} s (tetradb, RSS after ${fmtInt(tetraAfterLoad)} MiB)${pgTarget !== undefined ? `, ${fmtNum(pgLoad, 1)} s (PostgreSQL, then VACUUM ANALYZE; front + postgres after ${fmtInt(pgTarget.memory())} MiB)` : ''}; range shape: ${fmtInt(expected.range.length)} documents.`,
      );

      // Plans, once per size: what each store reads for the first page of each shape.
      for (const shape of ['all', 'range'] as Shape[]) {
        const filter = shape === 'all' ? {} : RANGE_FILTER;
        const first = await post(tetraTarget, '/api/mql/find', { collection: COLLECTION, filter, sort: SORTS[shape], limit: config.batch, explain: true });
        const next = await post(tetraTarget, '/api/mql/find', { collection: COLLECTION, filter: keysetFilter(shape, makeQueryDocument(expected[shape][config.batch - 1] ?? 0) as unknown as Doc), sort: SORTS[shape], limit: config.batch, explain: true });
        const line = (e: any): string => `${JSON.stringify(e?.plan)} (in-memory sort ${e?.inMemorySort}, keys ${e?.keysExamined}, docs ${e?.docsExamined})`;
        const middle = Math.floor(expected[shape].length / 2 / config.batch) * config.batch;
        const skipped = await post(tetraTarget, '/api/mql/find', { collection: COLLECTION, filter, sort: SORTS[shape], skip: middle, limit: config.batch, explain: true });
        notes.push(`- ${fmtCount(size)} ${shape}: tetradb plan, first page: ${line(first.json.explain)}; keyset page 2: ${line(next.json.explain)}; skip ${fmtInt(middle)}: ${line(skipped.json.explain)}`);
      }
      if (pgClient !== undefined) {
        const lastAll = makeQueryDocument(expected.all[config.batch - 1] ?? 0);
        const lastRange = makeQueryDocument(expected.range[config.batch - 1] ?? 0);
        const explain = async (sql: string, values: unknown[]): Promise<string> => (await pgClient!.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, values)).rows.map((r) => r['QUERY PLAN'].trim()).join(' / ');
        notes.push(`- ${fmtCount(size)} all: PostgreSQL plan, keyset page 2: ${await explain(`SELECT doc FROM ${COLLECTION} WHERE id > $1 ORDER BY id LIMIT $2`, [lastAll._id, config.batch])}`);
        notes.push(
          `- ${fmtCount(size)} range: PostgreSQL plan, keyset page 2: ${await explain(
            `SELECT doc FROM ${COLLECTION} WHERE (doc->>'joined')::bigint >= $1 AND (doc->>'joined')::bigint < $2 AND ((doc->>'name') COLLATE "C", id COLLATE "C") > ($3::text COLLATE "C", $4::text COLLATE "C") ORDER BY (doc->>'name') COLLATE "C", id COLLATE "C" LIMIT $5`,
            [RANGE.gte, RANGE.lt, lastRange.name, lastRange._id, config.batch],
          )}`,
        );
      }

      const methods: Method[] = pgTarget === undefined ? ['cursor', 'skip', 'keyset'] : ['cursor', 'skip', 'keyset', 'pg-keyset'];
      const targetOf = (m: Method): Target => (m === 'pg-keyset' ? pgTarget! : tetraTarget);
      for (const shape of ['all', 'range'] as Shape[]) {
        // Correctness before timing (and a warm-up): every method once, its answer checked.
        for (const method of methods) {
          const what = `${METHODS[method]}, ${shape}, ${fmtCount(size)} (check)`;
          process.stderr.write(`  ${what}\n`);
          check(what, await read(method, shape, targetOf(method), config.batch, Math.min(config.checkSeconds, config.capSeconds)), expected[shape]);
        }
        const shapeRows = methods.map((method): Row => ({ method, shape, size, expected: expected[shape].length, runs: [] }));
        rows.push(...shapeRows);
        for (let round = 0; round < config.rounds; round++) {
          // The order alternates by round, so no method always runs first (or right after a slow one).
          for (const row of round % 2 === 0 ? shapeRows : [...shapeRows].reverse()) {
            if (row.runs.some((t) => !t.complete)) continue;
            const what = `${METHODS[row.method]}, ${shape}, ${fmtCount(size)}, round ${round + 1}`;
            process.stderr.write(`  ${what}\n`);
            const { documents, ...run } = await read(row.method, shape, targetOf(row.method), config.batch, config.capSeconds);
            check(what, { documents, ...run }, expected[shape]);
            row.runs.push({ ...run, count: documents.length, hash: run.complete ? sha256(documents.map((d) => d['_id'])) : undefined });
          }
        }
        const hashes = new Set(shapeRows.flatMap((r) => r.runs.map((t) => t.hash)).filter((h) => h !== undefined));
        if (hashes.size > 1) throw new Error(`${fmtCount(size)} ${shape}: the methods that read to the end answered different _id sequences (${[...hashes].join(', ')})`);
        notes.push(`- ${fmtCount(size)} ${shape}: sha256 of the _id sequence, alike for every method that read to the end: ${[...hashes][0]?.slice(0, 16) ?? '-'}`);
      }
      await stop(tetra.child);
      if (front !== undefined) await stop(front);
      if (pgClient !== undefined) await pgClient.query(`DROP TABLE IF EXISTS ${COLLECTION}`);
    }
  } finally {
    await endHttpRun(children, pgClient === undefined ? undefined : { client: pgClient, table: COLLECTION }, cleanup);
  }
  process.stdout.write(render(config, { machine, rows, notes, pgSettings, pgSkipped, minutes: (Date.now() - started) / 60_000 }));
}

function percentile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function render(config: Config, r: { machine: string; rows: Row[]; notes: string[]; pgSettings: string | undefined; pgSkipped: string | undefined; minutes: number }): string {
  const out: string[] = [];
  out.push(`## Reading a collection page by page over HTTP: tetradb cursors, skip/limit, keyset, Fastify + PostgreSQL\n`);
  out.push(r.machine);
  out.push(`- Run took ${fmtNum(r.minutes, 1)} min. Pages of ${config.batch} documents, one request at a time from this process; each read capped at ${config.capSeconds} s (a capped row shows what it read in that time, in its one round); ${config.rounds} rounds, a row showing its median round (documents/s) and the range over rounds; p99 of a read of few pages is its slowest page; before the timed reads every method read once (capped at ${Math.min(config.checkSeconds, config.capSeconds)} s) and was checked, and every timed read was checked again: each document equal to the generator's, in the expected order.`);
  out.push(`- Shapes: all = ${SHAPES.all}; range = ${SHAPES.range} (\`${JSON.stringify(RANGE_FILTER)}\`).`);
  out.push(`- tetradb: the server as \`npm start\` runs it, except --rate-limit 0, a free port and a fresh data directory; index {joined: 1}.`);
  if (r.pgSettings !== undefined) out.push(`- Fastify + PostgreSQL: ${r.pgSettings}; pool of ${PG_POOL}; table \`${COLLECTION} (id text primary key, doc jsonb)\` with the docs bench's indexes and \`(((doc->>'joined')::bigint))\`; findPage is keyset paging (servers/pg-docs-server.ts).`);
  if (r.pgSkipped !== undefined) out.push(`- **${r.pgSkipped}**`);
  out.push(`- Server memory: peak while the read ran (and at its start, after the reads before it on the same servers): tetradb VmRSS (every 250 ms); the peer Fastify VmRSS + PSS of every PostgreSQL process (every second).`);
  out.push(...r.notes);
  out.push('');
  for (const shape of ['all', 'range'] as Shape[]) {
    out.push(`### ${shape}: ${SHAPES[shape]}\n`);
    const rows = r.rows.filter((x) => x.shape === shape);
    out.push(
      table(
        ['method', 'size', 'documents read', 'seconds', 'documents/s', 'rounds min-max', 'vs cursor', 'pages', 'first page ms', 'p50 ms / page', 'p99 ms / page', 'server memory peak (at start) MiB'],
        rows.map((x) => {
          const cursor = r.rows.find((c) => c.method === 'cursor' && c.shape === shape && c.size === x.size);
          const m = medianRun(x);
          const rates = x.runs.map(rateOf);
          return [
            METHODS[x.method],
            fmtCount(x.size),
            m.complete ? fmtInt(m.count) : `${fmtInt(m.count)} of ${fmtInt(x.expected)} (capped)`,
            fmtNum(m.seconds, 2),
            fmtInt(rateOf(m)),
            rates.length > 1 ? `${fmtInt(Math.min(...rates))}-${fmtInt(Math.max(...rates))}` : '-',
            fmtRatio(cursor === undefined ? undefined : rateOf(m) / rateOf(medianRun(cursor))),
            fmtInt(m.pages),
            fmtNum(m.latencies[0], 1),
            fmtNum(percentile(m.latencies, 50), 2),
            fmtNum(percentile(m.latencies, 99), 2),
            `${fmtInt(m.memMiB)} (${fmtInt(m.startMiB)})${x.method === 'pg-keyset' ? ' front + postgres' : ''}`,
          ];
        }),
        2,
      ),
    );
    out.push('');
  }
  return out.join('\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
