// Vector search, side by side in one run (the vector issue). Five parts, each a table:
//
//  index   In process: tetradb's HnswIndex and hnswlib-node (the C++ hnswlib behind N-API) on the
//          same seeded clustered 384-dim unit vectors (bench/lib/vector-data.ts: 100 gaussian
//          clusters), M 16 and efConstruction 200 for both, each library and size in a forked
//          worker (bench/vector-index-worker.ts). Build time, memory per vector, then an ef sweep
//          on the same queries (drawn from the same distribution, none in the data): recall@10
//          against exact ground truth (tetradb's brute force, checked against a plain loop, which
//          is also timed as the brute-force row), single-threaded QPS and latency. QPS at recall
//          0.90 / 0.95 / 0.99 is interpolated (log-QPS, linear in recall) between the two swept ef
//          that bracket it. With the all-MiniLM-L6-v2 files in ./models, the same on real MiniLM
//          vectors of generated texts.
//  reopen  N records through VectorService on a real TenantStore (the fallback embedder), settled,
//          the store closed (which writes the graph file); then a fresh process times
//          TenantStore.open + the first query answered (bench/vector-service-worker.ts) and checks
//          the graph came from the file. When the http part ran first with at least N records, its
//          tenant (the server stopped with SIGTERM, which closes the store the same way) is
//          reopened instead of building a second store of the same records.
//  memory  (--million or --memory-records=N) N records loaded through VectorService in a child
//          process with a vector memory budget; RSS sampled every second against the bound.
//  http    The server as `npm start` runs it (fallback embedder, --rate-limit 0): N records
//          through POST /api/vector/upsertMany (1000 per call), wait for the graph, then autocannon
//          POST /api/vector/query with a few hundred distinct query texts, topK 10, next to a
//          Fastify hello-world in the same run.
//  embed   Embedding throughput: the fallback embedder one text per call and 32 per call; the
//          ONNX model the same way when its files are in ./models/all-MiniLM-L6-v2.
//
//   npm --prefix bench run vector                 10k and 100k in process, 100k for reopen and HTTP
//                                                 (about 10 minutes on 2 cores)
//   npm --prefix bench run vector -- --quick      10k everywhere, fewer queries, short HTTP rows
//   npm --prefix bench run vector -- --parts=memory --million [--memory-max-seconds=S]
//                                                 the memory part alone, 1M records (20+ minutes)
//   node --import ./lib/ts-register.mjs vector.bench.ts [--quick] [--parts=index,reopen,memory,http,embed]
//        [--sizes=10000,100000] [--queries=N] [--efs=10,20,...] [--reopen-records=N]
//        [--million | --memory-records=N] [--memory-max-seconds=S] [--vector-memory-bytes=B] [--http-records=N]
//        [--http-seconds=S] [--rounds=N] [--connections=N]
//
// The machine is shared: numbers drift with other work on it. Each library runs in its own
// process one after the other (tetradb first: its brute force is the ground truth).
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { freePort, peakSampler, rssMiB, startPeer, startTetra, stop } from './lib/http-servers.js';
import { loadResult, type LoadResult } from './lib/load-result.js';
import type { SamplerResult } from './lib/sampler.js';
import { flagValue, fmtCount, fmtInt, fmtNum, fmtRatio, machineLine, MiB, runWorker, scratchDir, table } from './lib/report.js';
import { CLUSTERS, DIMS, K, queryTexts, records } from './lib/vector-data.js';
import type { IndexLib, IndexResult, IndexTask, SweepPoint } from './vector-index-worker.js';
import type { BuildResult, EmbedResult, MemoryResult, ReopenResult, ServiceTask } from './vector-service-worker.js';

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const MODEL_DIR = fileURLToPath(new URL('../models/all-MiniLM-L6-v2', import.meta.url));
const M = 16;
const EF_CONSTRUCTION = 200;
const TARGET_RECALLS = [0.9, 0.95, 0.99];
const LIBS: IndexLib[] = ['tetradb', 'hnswlib-node'];
const PARTS = ['index', 'reopen', 'memory', 'http', 'embed'] as const;
type Part = (typeof PARTS)[number];

interface Config {
  quick: boolean;
  parts: Part[];
  sizes: number[];
  queries: number;
  efs: number[];
  reopenRecords: number;
  memoryRecords: number;
  /** The memory part stops loading after this long (it then says how many records it loaded). */
  memoryMaxSeconds: number;
  vectorMemoryBytes: number;
  httpRecords: number;
  httpSeconds: number;
  warmupSeconds: number;
  rounds: number;
  connections: number;
}

function parseArgs(argv: string[]): Config {
  const quick = argv.includes('--quick');
  const value = (name: string): string | undefined => flagValue(argv, name);
  const ints = (s: string): number[] => s.split(',').map(Number);
  const memoryRecords = Number(value('memory-records') ?? (argv.includes('--million') ? 1_000_000 : 0));
  const config: Config = {
    quick,
    parts: (value('parts')?.split(',') as Part[] | undefined) ?? PARTS.filter((p) => p !== 'memory' || memoryRecords > 0),
    sizes: ints(value('sizes') ?? (quick ? '10000' : '10000,100000')),
    queries: Number(value('queries') ?? (quick ? 200 : 500)),
    efs: ints(value('efs') ?? '10,16,24,32,48,64,96,128,192,256,384,512,768'),
    reopenRecords: Number(value('reopen-records') ?? (quick ? 10_000 : 100_000)),
    memoryRecords: memoryRecords > 0 ? memoryRecords : quick ? 20_000 : 300_000,
    memoryMaxSeconds: Number(value('memory-max-seconds') ?? (quick ? 120 : 1800)),
    vectorMemoryBytes: Number(value('vector-memory-bytes') ?? 2.5 * 2 ** 30),
    httpRecords: Number(value('http-records') ?? (quick ? 10_000 : 100_000)),
    httpSeconds: Number(value('http-seconds') ?? (quick ? 3 : 10)),
    warmupSeconds: quick ? 1 : 3,
    rounds: Number(value('rounds') ?? (quick ? 1 : 3)),
    connections: Number(value('connections') ?? 16),
  };
  const positive = (n: number): boolean => Number.isInteger(n) && n > 0;
  if (
    !config.parts.every((p) => PARTS.includes(p)) ||
    ![...config.sizes, ...config.efs, config.queries, config.reopenRecords, config.memoryRecords, config.memoryMaxSeconds, config.httpRecords, config.rounds, config.connections, config.vectorMemoryBytes].every(positive) ||
    !(config.httpSeconds > 0)
  ) {
    throw new Error(
      'usage: vector.bench.ts [--quick] [--parts=index,reopen,memory,http,embed] [--sizes=N,N] [--queries=N] [--efs=N,N] [--reopen-records=N] [--million | --memory-records=N] [--memory-max-seconds=S] [--vector-memory-bytes=B] [--http-records=N] [--http-seconds=S] [--rounds=N] [--connections=N]',
    );
  }
  config.efs.sort((a, b) => a - b);
  return config;
}

// ---- Part 1: the index in process ---------------------------------------------------------------

interface IndexRun {
  dataset: string;
  size: number;
  results: Partial<Record<IndexLib, IndexResult>>;
  failures: string[];
}

/** The QPS (and ef) at exactly `target` recall, interpolated between the bracketing sweep points. */
function atRecall(sweep: SweepPoint[], target: number): { qps: number; ef: number; note: string } | { missed: string } {
  const i = sweep.findIndex((p) => p.recall >= target);
  if (i < 0) {
    const best = sweep.reduce((a, b) => (b.recall > a.recall ? b : a));
    return { missed: `not reached (best ${best.recall.toFixed(4)} at ef ${best.ef})` };
  }
  const hi = sweep[i]!;
  if (i === 0) return { qps: hi.qps, ef: hi.ef, note: `already ${hi.recall.toFixed(3)} at the smallest ef` };
  const lo = sweep[i - 1]!;
  const f = hi.recall === lo.recall ? 1 : (target - lo.recall) / (hi.recall - lo.recall);
  return { qps: Math.exp(Math.log(lo.qps) + f * (Math.log(hi.qps) - Math.log(lo.qps))), ef: lo.ef + f * (hi.ef - lo.ef), note: `between ef ${lo.ef} and ${hi.ef}` };
}

async function runIndexPart(config: Config, root: string): Promise<IndexRun[]> {
  const datasets: Array<{ name: string; spec: IndexTask['dataset'] }> = [{ name: `clustered (${CLUSTERS} gaussian clusters, seeded)`, spec: { kind: 'clustered' } }];
  const minilm = await miniLmDataset(config, root);
  if (minilm !== undefined) datasets.push(minilm);
  const runs: IndexRun[] = [];
  for (const ds of datasets) {
    for (const size of config.sizes) {
      const run: IndexRun = { dataset: ds.name, size, results: {}, failures: [] };
      runs.push(run);
      const truthPath = join(root, `truth-${runs.length}.bin`);
      for (const lib of LIBS) {
        if (lib !== 'tetradb' && run.results.tetradb === undefined) {
          run.failures.push(`${lib}: skipped (no ground truth: tetradb's worker failed)`);
          continue;
        }
        const task: IndexTask = { lib, dir: join(root, `${lib}-${size}-${runs.length}`), size, queries: config.queries, efs: config.efs, M, efConstruction: EF_CONSTRUCTION, truthPath, dataset: ds.spec };
        try {
          run.results[lib] = await runWorker<IndexResult>(here('./vector-index-worker.ts'), task, `${lib}, ${fmtCount(size)} vectors (${ds.spec.kind})`, ['--expose-gc']);
        } catch (err) {
          run.failures.push(`${lib}: ${err instanceof Error ? err.message : String(err)}`);
        }
      }
    }
  }
  return runs;
}

/** Real MiniLM vectors of the benchmark's texts when the model is present (else undefined). */
async function miniLmDataset(config: Config, root: string): Promise<{ name: string; spec: IndexTask['dataset'] } | undefined> {
  if (!existsSync(join(MODEL_DIR, 'model.onnx'))) return undefined;
  const { loadEmbedder } = await import('../engine/vector/index.js');
  const choice = await loadEmbedder({ modelDir: MODEL_DIR });
  if (choice.embedder.kind !== 'onnx') return undefined;
  const n = Math.max(...config.sizes);
  process.stderr.write(`  embedding ${fmtInt(n)} texts with ${choice.embedder.id} for the MiniLM data set...\n`);
  const data = new Float32Array(n * DIMS);
  for (let from = 0; from < n; from += 256) {
    const vs = await choice.embedder.embed(records(from, Math.min(n, from + 256)).map((r) => r.text));
    vs.forEach((v, i) => data.set(v, (from + i) * DIMS));
  }
  const qs = new Float32Array(config.queries * DIMS);
  (await choice.embedder.embed(queryTexts(config.queries))).forEach((v, i) => qs.set(v, i * DIMS));
  await choice.embedder.close();
  const dataPath = join(root, 'minilm-data.f32');
  const queryPath = join(root, 'minilm-queries.f32');
  writeFileSync(dataPath, data);
  writeFileSync(queryPath, qs);
  return { name: `MiniLM (${choice.embedder.id}) of generated texts`, spec: { kind: 'file', dataPath, queryPath } };
}

function renderIndex(config: Config, runs: IndexRun[]): string[] {
  const out: string[] = [];
  out.push('### 1. In-process index: tetradb HnswIndex vs hnswlib-node\n');
  out.push(
    `Same vectors for both (${DIMS} dims, unit length), M ${M}, efConstruction ${EF_CONSTRUCTION}, inserted one at a time; ${fmtInt(config.queries)} queries per ef (after 20 untimed), single-threaded in the worker, recall@${K} against exact ground truth. hnswlib-node ${hnswlibVersion()} ('ip' space; built by node-gyp from source with its binding.gyp, no -march flags, so SSE rather than AVX kernels); it takes plain arrays, so each call converts ${DIMS} numbers (the query arrays are made before timing, the data arrays during the build). "memory, reported" is tetradb's memoryBytes() and, for hnswlib-node, its documented layout (hnswalg.h: vector + level-0 links + label + linkLists_ pointer + element level + a std::mutex per element + upper levels + label map); "RSS growth" is the worker's RSS after the build minus before it and "JS heap + external growth" the same for V8's heap plus its external memory (ArrayBuffers and WebAssembly memories), full GCs around both; the input vectors were allocated before. RSS can shrink as V8 returns the data generator's garbage pages, so for tetradb, whose index is typed arrays and a WebAssembly memory, the second column is the measured one, and for hnswlib-node, whose index is C++ malloc, the first.\n`,
  );
  if (!existsSync(join(MODEL_DIR, 'model.onnx'))) out.push(`MiniLM vectors: skipped: model not present (${MODEL_DIR}/model.onnx; \`npm run model:fetch\`).\n`);
  for (const r of runs) for (const f of r.failures) out.push(`- ${r.dataset}, ${fmtCount(r.size)}: **${f}**`);

  out.push('#### Build and memory\n');
  const rows: string[][] = [];
  for (const r of runs) {
    for (const lib of LIBS) {
      const x = r.results[lib];
      if (x === undefined) continue;
      rows.push([
        r.dataset.split(' ')[0]!,
        fmtCount(r.size),
        lib,
        fmtNum(x.buildSeconds, 1),
        fmtInt(r.size / x.buildSeconds),
        fmtInt(x.reportedBytes / r.size),
        fmtInt(x.rssDeltaBytes / r.size),
        fmtInt(x.heapDeltaBytes / r.size),
        fmtNum(x.savedBytes / MiB, 1),
        fmtInt(x.saveMs),
        fmtInt(x.loadMs),
        `${x.loadedRecallBefore.toFixed(4)} / ${x.loadedRecall.toFixed(4)}`,
      ]);
    }
  }
  out.push(table(['data', 'vectors', 'library', 'build s', 'inserts/s', 'memory/vector, reported B', 'RSS growth/vector B', 'JS heap + external growth/vector B', 'saved index MiB', 'save ms', 'load ms (same process)', 'recall at mid ef before / after load'], rows, 3));
  out.push('');

  for (const r of runs) {
    const t = r.results.tetradb;
    const h = r.results['hnswlib-node'];
    if (t === undefined) continue;
    out.push(`#### ef sweep: ${r.dataset}, ${fmtCount(r.size)} vectors\n`);
    out.push(
      table(
        ['ef', 'tetradb recall@10', 'tetradb QPS', 'p50 µs', 'p99 µs', 'hnswlib recall@10', 'hnswlib QPS', 'p50 µs', 'p99 µs', 'QPS tetradb / hnswlib'],
        config.efs.map((ef) => {
          const a = t.sweep.find((p) => p.ef === ef);
          const b = h?.sweep.find((p) => p.ef === ef);
          return [String(ef), fmtNum(a?.recall, 4), fmtInt(a?.qps), fmtInt(a?.p50Us), fmtInt(a?.p99Us), fmtNum(b?.recall, 4), fmtInt(b?.qps), fmtInt(b?.p50Us), fmtInt(b?.p99Us), fmtRatio(a !== undefined && b !== undefined ? a.qps / b.qps : undefined)];
        }),
      ),
    );
    out.push('');
  }

  out.push('#### QPS at equal recall, and against brute force\n');
  const eq: string[][] = [];
  for (const r of runs) {
    const t = r.results.tetradb;
    const h = r.results['hnswlib-node'];
    if (t === undefined) continue;
    for (const target of TARGET_RECALLS) {
      const a = atRecall(t.sweep, target);
      const b = h === undefined ? undefined : atRecall(h.sweep, target);
      const cell = (x: typeof a | undefined): [string, string] => (x === undefined ? ['-', '-'] : 'missed' in x ? [x.missed, '-'] : [`~${fmtInt(x.ef)}`, fmtInt(x.qps)]);
      const ratio = a !== undefined && b !== undefined && 'qps' in a && 'qps' in b ? a.qps / b.qps : undefined;
      const vsBrute = 'qps' in a && t.bruteQps !== undefined ? a.qps / t.bruteQps : undefined;
      eq.push([r.dataset.split(' ')[0]!, fmtCount(r.size), target.toFixed(2), ...cell(a), ...cell(b), fmtRatio(ratio), fmtInt(t.bruteQps), fmtRatio(vsBrute)]);
    }
  }
  out.push(table(['data', 'vectors', 'recall@10', 'tetradb ef', 'tetradb QPS', 'hnswlib ef', 'hnswlib QPS', 'tetradb / hnswlib', 'tetradb brute force QPS', 'tetradb HNSW / brute force'], eq, 1));
  out.push('');
  return out;
}

function hnswlibVersion(): string {
  try {
    return (JSON.parse(readFileSync(here('./node_modules/hnswlib-node/package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '(version unknown)';
  }
}


// ---- Part 4: over HTTP ---------------------------------------------------------------------------

const QUERY_BODIES = 300;
const HELLO = 'fastify hello-world';

interface HttpRound extends LoadResult {
  memMiB: number;
}

interface HttpPart {
  records: number;
  loadSeconds: number;
  /** From the last upsertMany's answer to the graph holding every record (pending 0). */
  catchUpSeconds: number;
  loadRssMiB: number;
  /** Recall@10 of the default query (adaptive ef) against exact: true, over a sample. */
  recall: number;
  recallQueries: number;
  path: string;
  rows: Record<'hello' | 'query', HttpRound[]>;
  /** The tenant's directory (the reopen part reuses it once the server has stopped). */
  tenantDir: string | undefined;
}

async function postJson(url: string, apiKey: string, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, body: JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = text;
  try {
    json = JSON.parse(text);
  } catch {
    // Not JSON: kept as text for the error message.
  }
  return { status: res.status, json };
}

/** A tenant directory under the server's data directory: the one holding a vector graph file. */
function findTenantDir(dir: string): string | undefined {
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    if (!name.isDirectory()) continue;
    const sub = join(dir, name.name);
    if (name.name === 'derived' && readdirSync(sub).some((f) => /^vec-.*\.bin$/.test(f))) return dir;
    const found = findTenantDir(sub);
    if (found !== undefined) return found;
  }
  return undefined;
}

async function runHttpPart(config: Config, root: string, children: ChildProcess[]): Promise<HttpPart> {
  const helloPort = await freePort();
  const hello = await startPeer(here('./servers/hello-server.ts'), [String(helloPort)]);
  children.push(hello);
  const dataDir = join(root, 'http-data');
  // No model directory: the fallback embedder, whatever ./models holds.
  const tetra = await startTetra(dataDir, ['--rate-limit', '0'], { TETRA_EMBEDDING_MODEL_DIR: join(root, 'no-model') });
  children.push(tetra.child);
  const { url, apiKey } = tetra;

  process.stderr.write(`  http: loading ${fmtInt(config.httpRecords)} records through upsertMany...\n`);
  const loadSampler = peakSampler(() => rssMiB(tetra.child.pid), 500);
  const t0 = performance.now();
  for (let from = 0; from < config.httpRecords; from += 1000) {
    const batch = records(from, Math.min(config.httpRecords, from + 1000));
    const r = await postJson(url, apiKey, '/api/vector/upsertMany', { vectors: batch });
    if (r.status !== 200 || r.json.upserted !== batch.length) throw new Error(`upsertMany answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
  }
  const loadSeconds = (performance.now() - t0) / 1000;
  // The graph is built behind the writes; queries meanwhile score pending records one by one.
  for (;;) {
    const r = await postJson(url, apiKey, '/api/vector/namespaces', {});
    const ns = (r.json.namespaces as Array<{ namespace: string; pending: number }> | undefined)?.find((n) => n.namespace === '');
    if (r.status !== 200 || ns === undefined) throw new Error(`namespaces answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
    if (ns.pending === 0) break;
    await new Promise((res) => setTimeout(res, 1000));
  }
  const catchUpSeconds = (performance.now() - t0) / 1000 - loadSeconds;
  const loadRssMiB = loadSampler.stop();

  // Recall of what a client gets by default, against exact: true, on a sample of the queries.
  const texts = queryTexts(QUERY_BODIES);
  const sample = texts.slice(0, config.quick ? 10 : 20);
  let hits = 0;
  let path = '';
  for (const q of sample) {
    const a = await postJson(url, apiKey, '/api/vector/query', { query: q, topK: K, includeText: false, includeMetadata: false, explain: true });
    const b = await postJson(url, apiKey, '/api/vector/query', { query: q, topK: K, includeText: false, includeMetadata: false, exact: true });
    if (a.status !== 200 || b.status !== 200) throw new Error(`query answered ${a.status} / ${b.status}: ${JSON.stringify(a.json).slice(0, 200)}`);
    path = a.json.explain?.path ?? '?';
    const want = new Set((b.json.matches as Array<{ id: string }>).map((m) => m.id));
    hits += (a.json.matches as Array<{ id: string }>).filter((m) => want.has(m.id)).length;
  }

  const bodies = texts.map((q) => JSON.stringify({ query: q, topK: K }));
  const drive = async (kind: 'hello' | 'query', seconds: number): Promise<HttpRound> => {
    const pid = kind === 'hello' ? hello.pid : tetra.child.pid;
    const sampler = peakSampler(() => rssMiB(pid), 250);
    let i = 0;
    const result = await autocannon({
      url: kind === 'hello' ? `http://127.0.0.1:${helloPort}` : url,
      connections: config.connections,
      duration: seconds,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      requests: [kind === 'hello' ? { method: 'GET', path: '/hello' } : { method: 'POST', path: '/api/vector/query', setupRequest: (req: any) => ({ ...req, body: bodies[i++ % bodies.length] }) }],
    });
    return { ...loadResult(result), memMiB: sampler.stop() };
  };
  await drive('hello', config.warmupSeconds);
  await drive('query', config.warmupSeconds);
  const rows: HttpPart['rows'] = { hello: [], query: [] };
  for (let round = 0; round < config.rounds; round++) {
    process.stderr.write(`  http: round ${round + 1} of ${config.rounds}\n`);
    rows.hello.push(await drive('hello', config.httpSeconds));
    rows.query.push(await drive('query', config.httpSeconds));
  }
  // SIGTERM: the server closes its stores, which writes the graph file.
  await stop(tetra.child);
  await stop(hello);
  return { records: config.httpRecords, loadSeconds, catchUpSeconds, loadRssMiB, recall: hits / (sample.length * K), recallQueries: sample.length, path, rows, tenantDir: findTenantDir(dataDir) };
}

function medianRound(rounds: HttpRound[]): HttpRound {
  const sorted = [...rounds].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

function renderHttp(config: Config, h: HttpPart): string[] {
  const out: string[] = [];
  out.push(`### 4. Over HTTP: ${fmtInt(h.records)} records, fallback embedder\n`);
  out.push(
    `The server as \`npm start\` runs it (server/start.mjs: server/main.ts compiled by esbuild, server/config.ts defaults: cache 256 MiB, fsync=batch, vector memory ${fmtInt(2 ** 30 / MiB)} MiB unless TETRA_VECTOR_MEMORY_BYTES says otherwise), except --rate-limit 0, a free port, a fresh data directory and TETRA_EMBEDDING_MODEL_DIR pointing at no model (the fallback embedder). Records: 8-16 words from one of 200 topic vocabularies plus the record number (bench/lib/vector-data.ts), metadata {n, topic}, loaded through POST /api/vector/upsertMany, ${1000} per call, one call at a time; each answer means durable, the graph is built behind. Queries: ${QUERY_BODIES} distinct query texts (another stream of the same generator) cycled by autocannon, {query, topK: ${K}} (text and metadata included in answers, the defaults), ${config.connections} connections, ${config.httpSeconds} s per row after a ${config.warmupSeconds} s warm-up; ${config.rounds > 1 ? `${config.rounds} rounds (hello-world then query in each), the median round shown` : 'one round'}. Queries ran once the graph held every record (POST /api/vector/namespaces: pending 0).\n`,
  );
  out.push(
    table(
      ['step', 'records', 'seconds', 'records/s', 'server RSS peak MiB'],
      [
        ['upsertMany (acknowledged, durable)', fmtInt(h.records), fmtNum(h.loadSeconds, 1), fmtInt(h.records / h.loadSeconds), fmtInt(h.loadRssMiB)],
        ['graph caught up (after the last upsertMany)', fmtInt(h.records), fmtNum(h.catchUpSeconds, 1), fmtInt(h.records / (h.loadSeconds + h.catchUpSeconds)) + ' (overall)', '-'],
      ],
    ),
  );
  out.push('');
  const hello = medianRound(h.rows.hello);
  const rowsOut = (['hello', 'query'] as const).map((k) => {
    const m = medianRound(h.rows[k]);
    const rps = h.rows[k].map((x) => x.rps);
    return [
      k === 'hello' ? `${HELLO}: GET /hello` : 'tetradb: POST /api/vector/query',
      fmtInt(m.rps),
      `${fmtInt(Math.min(...rps))}-${fmtInt(Math.max(...rps))}`,
      fmtRatio(m.rps / hello.rps),
      fmtNum(m.p50, 1),
      fmtNum(m.p99, 1),
      `${h.rows[k].reduce((s, x) => s + x.errors, 0)} / ${h.rows[k].reduce((s, x) => s + x.non2xx, 0)}`,
      fmtInt(Math.max(...h.rows[k].map((x) => x.memMiB))),
    ];
  });
  out.push(table(['target', 'req/s', 'rounds min-max', 'vs hello', 'p50 ms', 'p99 ms', 'errors / non-2xx', 'server RSS peak MiB'], rowsOut));
  out.push('');
  out.push(`Recall@10 of the default query (path ${h.path}, adaptive ef) against exact: true over HTTP, ${h.recallQueries} queries: ${h.recall.toFixed(3)}.\n`);
  return out;
}

// ---- Part 2: reopen -----------------------------------------------------------------------------

interface ReopenPart {
  source: string;
  build?: BuildResult;
  reopen: ReopenResult;
  /** From fork to the answer: Node and the engine's modules loading, plus open and query. */
  processMs: number;
}

async function runReopenPart(config: Config, root: string, fromHttp: { dir: string; records: number } | undefined): Promise<ReopenPart> {
  let storeDir: string;
  let build: BuildResult | undefined;
  let source: string;
  if (fromHttp !== undefined) {
    storeDir = fromHttp.dir;
    source = `the HTTP part's tenant (${fmtInt(fromHttp.records)} records through upsertMany, server stopped with SIGTERM: its close wrote the graph file)`;
  } else {
    storeDir = join(root, 'reopen-store');
    const task: ServiceTask = { phase: 'build', dir: join(root, 'reopen-build'), storeDir, records: config.reopenRecords };
    build = await runWorker<BuildResult>(here('./vector-service-worker.ts'), task, `VectorService build, ${fmtCount(config.reopenRecords)} records`);
    source = `${fmtInt(config.reopenRecords)} records through VectorService.upsert (1000 per call), settled, store closed (writes the graph file)`;
  }
  const t0 = performance.now();
  const reopen = await runWorker<ReopenResult>(here('./vector-service-worker.ts'), { phase: 'reopen', dir: join(root, 'reopen-scratch'), storeDir, queries: 20 } satisfies ServiceTask, 'reopen in a fresh process');
  const processMs = performance.now() - t0;
  return { source, ...(build === undefined ? {} : { build }), reopen, processMs };
}

function renderReopen(r: ReopenPart): string[] {
  const out: string[] = [];
  out.push('### 2. Reopen\n');
  out.push(`Store: ${r.source}. Then a fresh process (bench/vector-service-worker.ts): TenantStore.open (page cache 256 MiB) + new VectorService (fallback embedder) + the first query (topK 10) answered.\n`);
  if (r.build !== undefined) {
    const b = r.build;
    out.push(table(['build step', 'seconds', 'records/s'], [['upsert (durable)', fmtNum(b.upsertSeconds, 1), fmtInt(b.records / b.upsertSeconds)], ['settle (graph catches up)', fmtNum(b.settleSeconds, 1), '-'], ['close (writes the graph file)', fmtNum(b.closeSeconds, 2), '-']]));
    out.push('');
  }
  const x = r.reopen;
  out.push(
    table(
      ['open ms', 'first query ms', 'open + first query s', 'graph loaded from', 'pending after open', 'next queries, median ms', 'graph file MiB', 'fork to answer (Node + modules) s'],
      [[fmtInt(x.openMs), fmtInt(x.firstQueryMs), fmtNum((x.openMs + x.firstQueryMs) / 1000, 2), x.loadedFrom, fmtInt(x.pending), fmtNum(x.nextQueryMs, 2), fmtNum(x.graphFileBytes / MiB, 1), fmtNum(r.processMs / 1000, 2)]],
    ),
  );
  out.push('');
  return out;
}

// ---- Part 3: memory while loading ---------------------------------------------------------------

async function runMemoryPart(config: Config, root: string): Promise<MemoryResult> {
  const task: ServiceTask = { phase: 'memory', dir: join(root, 'memory'), records: config.memoryRecords, vectorMemoryBytes: config.vectorMemoryBytes, maxSeconds: config.memoryMaxSeconds, catchUpSeconds: config.quick ? 60 : 300 };
  return runWorker<MemoryResult>(here('./vector-service-worker.ts'), task, `memory: ${fmtCount(config.memoryRecords)} records through VectorService`);
}

function renderMemory(config: Config, m: MemoryResult): string[] {
  const out: string[] = [];
  const bound = (m.cacheBytes + m.dirtyBytes + config.vectorMemoryBytes) / MiB;
  out.push(`### 3. Memory while loading ${fmtInt(m.records)} records through VectorService\n`);
  out.push(
    `One process (bench/vector-service-worker.ts): a TenantStore (page cache ${fmtInt(m.cacheBytes / MiB)} MiB, the server's default; dirty budget ${fmtInt(m.dirtyBytes / MiB)} MiB, the engine's default), VectorService with memoryBytes ${fmtInt(config.vectorMemoryBytes / MiB)} MiB and the fallback embedder; upsert 1000 records per call, each awaited; RSS sampled every second without forced GC, during the load and then while the graph catches up (at most ${config.quick ? 60 : 300} s). Bound = RSS after open (Node, the engine's code) + cache + dirty budget + vector memory budget.${m.error !== undefined ? ` **The load stopped with: ${m.error}**` : ''}\n`,
  );
  const row = (name: string, s: SamplerResult): string[] => [name, fmtInt(s.peakRssMiB), fmtInt(s.peakHeapMiB), fmtInt(s.peakBuffersMiB), fmtNum(s.extraPeaks.vectorMiB, 0), fmtNum(s.loop.p99Ms, 0), fmtNum(s.loop.maxMs, 0)];
  out.push(
    table(
      ['phase', 'peak RSS MiB', 'peak heap MiB', 'peak ArrayBuffers MiB', 'vector memory (service) peak MiB', 'event loop p99 ms', 'max ms'],
      [row(`load: ${fmtInt(m.loaded)} records in ${fmtNum(m.loadSeconds, 0)} s (${fmtInt(m.loaded / m.loadSeconds)}/s)`, m.load), row(`graph catch-up: ${fmtNum(m.catchUpSeconds, 0)} s, ${fmtInt(m.pendingAtEnd)} still pending at the end`, m.catchUp)],
    ),
  );
  out.push('');
  const peak = Math.max(m.load.peakRssMiB, m.catchUp.peakRssMiB);
  out.push(`Peak RSS ${fmtInt(peak)} MiB against the bound ${fmtInt(m.baseRssMiB)} (after open) + ${fmtInt(bound)} = ${fmtInt(m.baseRssMiB + bound)} MiB: ${peak <= m.baseRssMiB + bound ? 'within' : '**over**'}.\n`);
  return out;
}

// ---- Part 5: embedding throughput ---------------------------------------------------------------

function renderEmbed(e: EmbedResult): string[] {
  return [
    '### 5. Embedding throughput\n',
    `Texts from the records' generator (8-16 words), in one process; batch = texts per embed() call, each awaited. ONNX model: ${e.onnx}.\n`,
    table(['embedder', 'texts per call', 'texts', 'sentences/s'], e.rows.map((r) => [r.embedder, String(r.batch), fmtInt(r.texts), fmtInt(r.textsPerSecond)])),
    '',
  ];
}

// ---- Targets ------------------------------------------------------------------------------------

function renderTargets(index: IndexRun[] | undefined, reopen: ReopenPart | undefined, memory: MemoryResult | undefined, config: Config): string[] {
  const lines: string[] = [];
  const check = (ok: boolean | undefined, text: string): void => void lines.push(`${ok === undefined ? 'n/a ' : ok ? 'PASS' : 'FAIL'}  ${text}`);
  const big = index?.filter((r) => r.dataset.startsWith('clustered')).sort((a, b) => b.size - a.size)[0];
  const t = big?.results.tetradb;
  const h = big?.results['hnswlib-node'];
  const at = t === undefined ? undefined : atRecall(t.sweep, 0.95);
  const ht = h === undefined ? undefined : atRecall(h.sweep, 0.95);
  const size = big === undefined ? '-' : fmtCount(big.size);
  if (at !== undefined && 'missed' in at) check(false, `recall@10 >= 0.95 at ${size}: ${at.missed}`);
  else {
    const ratio = at !== undefined && ht !== undefined && 'qps' in ht ? at.qps / ht.qps : undefined;
    check(ratio === undefined ? undefined : ratio >= 0.25, `recall@10 0.95 at >= 25% of hnswlib-node's QPS at equal recall, ${size} (${fmtRatio(ratio)}: ${fmtInt(at?.qps)} vs ${ht !== undefined && 'qps' in ht ? fmtInt(ht.qps) : '-'} QPS)`);
    const vsBrute = at !== undefined && t?.bruteQps !== undefined ? at.qps / t.bruteQps : undefined;
    check(vsBrute === undefined ? undefined : vsBrute >= 10, `>= 10x our brute force at recall 0.95, ${size} (${fmtRatio(vsBrute)}: ${fmtInt(at?.qps)} vs ${fmtInt(t?.bruteQps)} QPS)`);
  }
  const mem = t !== undefined && h !== undefined ? t.reportedBytes / h.reportedBytes : undefined;
  const memMeasured = t !== undefined && h !== undefined ? t.heapDeltaBytes / h.rssDeltaBytes : undefined;
  check(mem === undefined ? undefined : mem <= 1.5, `memory per vector within 1.5x of hnswlib-node's, ${size} (reported: ${fmtRatio(mem)}, ${fmtInt((t?.reportedBytes ?? NaN) / (big?.size ?? 1))} vs ${fmtInt((h?.reportedBytes ?? NaN) / (big?.size ?? 1))} B; measured, tetradb heap + external growth vs hnswlib-node RSS growth: ${fmtRatio(memMeasured)})`);
  if (reopen !== undefined) {
    const s = (reopen.reopen.openMs + reopen.reopen.firstQueryMs) / 1000;
    const fromFile = reopen.reopen.loadedFrom.startsWith('graph file');
    check(fromFile && s <= 2, `reopen of ${reopen.build?.records !== undefined ? fmtCount(reopen.build.records) : fmtCount(config.httpRecords)} vectors <= 2 s (${fmtNum(s, 2)} s open + first query; graph loaded from: ${reopen.reopen.loadedFrom})`);
  } else check(undefined, 'reopen <= 2 s (part not run)');
  if (memory !== undefined) {
    const bound = memory.baseRssMiB + (memory.cacheBytes + memory.dirtyBytes + config.vectorMemoryBytes) / MiB;
    const peak = Math.max(memory.load.peakRssMiB, memory.catchUp.peakRssMiB);
    check(peak <= bound && memory.error === undefined, `memory bound holds while ${fmtCount(memory.loaded)} of ${fmtCount(memory.records)} vectors load (peak RSS ${fmtInt(peak)} MiB, bound ${fmtInt(bound)} MiB${memory.error !== undefined ? `; load failed: ${memory.error}` : ''})`);
  } else check(undefined, 'memory bound while 1M vectors load (part not run: --million)');
  return ['### Targets\n', '```', ...lines, '```', ''];
}

// ---- Main ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const machine = machineLine();
  const { root, cleanup } = scratchDir('tetradb-vectorbench-');
  const children: ChildProcess[] = [];
  const out: string[] = [];
  let index: IndexRun[] | undefined;
  let http: HttpPart | undefined;
  let reopen: ReopenPart | undefined;
  let memoryResult: MemoryResult | undefined;
  process.stderr.write(`tetradb vector search (${config.quick ? 'quick' : 'full'}): parts ${config.parts.join(', ')}\n`);
  const attempt = async (part: string, fn: () => Promise<void>): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      process.stderr.write(`  ${part} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      out.push(`### ${part}: failed\n`, `\`${err instanceof Error ? err.message : String(err)}\`\n`);
    }
  };
  try {
    if (config.parts.includes('index')) {
      await attempt('1. In-process index', async () => {
        index = await runIndexPart(config, root);
        out.push(...renderIndex(config, index));
      });
    }
    if (config.parts.includes('http')) {
      await attempt('4. Over HTTP', async () => {
        http = await runHttpPart(config, root, children);
      });
    }
    if (config.parts.includes('reopen')) {
      await attempt('2. Reopen', async () => {
        // The HTTP part's tenant holds the same kind of records: reopening it saves a second build.
        const fromHttp = http?.tenantDir !== undefined && http.records >= config.reopenRecords ? { dir: http.tenantDir, records: http.records } : undefined;
        reopen = await runReopenPart(config, root, fromHttp);
        out.push(...renderReopen(reopen));
      });
    }
    if (config.parts.includes('memory')) {
      await attempt('3. Memory while loading', async () => {
        memoryResult = await runMemoryPart(config, root);
        out.push(...renderMemory(config, memoryResult));
      });
    } else if (!process.argv.some((a) => a.startsWith('--parts='))) {
      out.push('### 3. Memory while loading\n', `Not run (it loads 1M records: \`npm --prefix bench run vector -- --parts=memory --million\`, or \`--memory-records=N\`).\n`);
    }
    if (http !== undefined) out.push(...renderHttp(config, http));
    if (config.parts.includes('embed')) {
      await attempt('5. Embedding throughput', async () => {
        const e = await runWorker<EmbedResult>(here('./vector-service-worker.ts'), { phase: 'embed', dir: join(root, 'embed'), modelDir: MODEL_DIR, texts: config.quick ? 5000 : 20000 } satisfies ServiceTask, 'embedding throughput');
        out.push(...renderEmbed(e));
      });
    }
    out.push(...renderTargets(index, reopen, memoryResult, config));
  } finally {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    cleanup();
  }
  const head = [`## Vector search (${config.quick ? 'quick' : 'full'} run, ${fmtNum((Date.now() - started) / 60_000)} min)\n`, machine, ''];
  process.stdout.write([...head, ...out].join('\n') + '\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
