// Documents over HTTP, side by side in one run: tetradb's POST /api/mql/* (the server as `npm start`
// runs it), a plain Fastify hello-world (the ceiling) and Fastify + PostgreSQL 15 storing the same
// documents as JSONB (bench/servers/pg-docs-server.ts). Both stores get the same N documents
// (~300 bytes of JSON: _id, email, n, name, tags, profile {age, city}, bio), loaded through
// insertMany in batches of 1000 (the peer: one multi-row INSERT per batch), with an index on
// `email` created first (tetradb createIndex {email: 1}; PostgreSQL ((doc->>'email'))) and a
// partial one on the city (and _id) of the documents aged 65 and over. Then, with autocannon from
// this process, the same connections and duration for every row: find by _id (random loaded ids),
// find by email (random loaded emails), find by email with a computed projection, find of the
// first 20 seniors of a city by _id through the partial index, durable insertOne of new
// documents, durable findOneAndUpdate by email ($inc, the document returned), durable updateOne
// by email with a pipeline-style update computing from the document, with a few callers
// (scans of an unindexed field) an aggregation and a distinct, and last a durable bulkWrite of 100
// mixed operations per request (the peer: one transaction of 100 statements). Prints req/s, ratios, p50/p99, errors and
// server memory, then the issue's targets as PASS/FAIL lines. Last, a memory section: N documents
// loaded into a TenantStore through docsInsert in a worker process (docs-memory-worker.ts), peak
// RSS and heap against the configured bound (cache + dirty budget).
//
//   npm --prefix bench run docs                  100k documents, 3 rounds of 10 s per row, 1M documents
//                                                for the memory section
//   npm --prefix bench run docs -- --quick       10k documents, 1 round of 3 s per row, 100k for memory
//   node --import ./lib/ts-register.mjs docs-http.bench.ts [--quick] [--docs=N] [--seconds=S] [--rounds=N] [--connections=N]
//        [--memory-docs=N (0: no memory section)] [--pg-url=postgres://...] [--pg-pool=N]
//
// The machine is shared and its speed drifts within minutes: every server runs throughout, the
// rows of a round run back to back, and ratios compare results of the same round.
//
// PostgreSQL: DATABASE_URL or --pg-url, default postgres://tetrabench:tetrabench@127.0.0.1:5432/tetrabench
// (docs/benchmarks.md says how to create it). When it cannot be reached the PostgreSQL rows are
// skipped with a message; the rest runs. TETRA_* variables in this environment reach the server.
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { DEFAULT_DIRTY_BYTES } from '../engine/storage/index.js';
import type { DocsMemoryRow, DocsMemoryTask } from './docs-memory-worker.js';
import { seededRandom } from './lib/dataset.js';
import { dirBytes } from './lib/dir-bytes.js';
import { byCodePoint } from './lib/code-points.js';
import { COMPUTED_PROJECTION, GOLD_SCORE, PARTIAL_LIMIT, SCORE_PIPELINE, SENIOR_AGE, SENIOR_FILTER, SENIOR_INDEX, seniorByCitySql } from './lib/docs-http-shapes.js';
import { docEmail, docId, makeDocument, randomDocNumbers } from './lib/documents.js';
import { endHttpRun, freePort, peakSampler, postgresPssMiB, rssMiB, startPeer, startTetra, stop, postJson, type HttpTarget } from './lib/http-servers.js';
import { loadResult, pooledRequests, type LoadResult } from './lib/load-result.js';
import { connectPgOrSkip, DEFAULT_PG_URL } from './lib/pg-connect.js';
import { dirtyBudgetFromEnv, flagValue, fmtCount, fmtInt, fmtNum, fmtRatio, machineLine, MiB, runWorker, scratchDir, table } from './lib/report.js';

const COLLECTION = 'people';
const LOAD_BATCH = 1000;
/** Random picks cycled through by the find workloads (the same sequence for every target). */
const PICKS = 65_536;
/** Documents compared field by field against the generator on each target before the runs. */
const SPOT_CHECKS = 25;
const PG_NAME = 'fastify + postgresql';
/** Callers of the scan rows, aggregate and distinct (the others use --connections). */
const AGGREGATE_CONNECTIONS = 4;
/** Documents each store changes through findOneAndUpdate, and ages it answers distinct for, before the runs. */
const MODIFY_CHECKS = 5;
const DISTINCT_CHECK_AGES = [18, 40, 77];
/** Documents each store updates SCORE_UPDATES times through update-pipeline before the runs. */
const SCORE_CHECKS = 3;
const SCORE_UPDATES = 3;
/** Documents read through find-computed, and cities through find-partial, on each store before the runs. */
const COMPUTED_CHECKS = 5;
const PARTIAL_CHECKS = 4;
/**
 * A bulk-write request is BULK_BLOCKS blocks, each: BULK_BLOCK.inserts insertOne of new documents,
 * BULK_BLOCK.updates updateOne by email of loaded ones, a replaceOne by _id of a loaded one and a
 * deleteOne by _id of the block's first insert (see bulkPlan).
 */
const BULK_BLOCKS = 10;
const BULK_BLOCK = { inserts: 4, updates: 4, replaces: 1, deletes: 1 } as const;
const BULK_OPERATIONS = BULK_BLOCKS * (BULK_BLOCK.inserts + BULK_BLOCK.updates + BULK_BLOCK.replaces + BULK_BLOCK.deletes);
/** Loaded documents one bulk-write request updates or replaces, each once. */
const BULK_TARGETS = BULK_BLOCKS * (BULK_BLOCK.updates + BULK_BLOCK.replaces);
/** Most prebuilt bulk-write bodies a row cycles through (~21 KB each). */
const BULK_BODIES = 1024;
/** Stands, in a prebuilt bulk-write body, for a sequence number new at each send (pooledRequests' fill). */
const BULK_SEQ = '{{seq}}';
/** bulkWrites each store applies, and is checked on, before the runs. */
const BULK_CHECKS = 2;
const SERVER_CACHE_BYTES = 256 * MiB;
const SMALL_CACHE_BYTES = 32 * MiB;
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

interface Config {
  quick: boolean;
  docs: number;
  seconds: number;
  warmupSeconds: number;
  /** Every row runs this many times, targets interleaved; tables show the median round. */
  rounds: number;
  connections: number;
  memoryDocs: number;
  memoryMaxSeconds: number;
  pgUrl: string;
  pgPool: number;
}

function parseArgs(argv: string[]): Config {
  const quick = argv.includes('--quick');
  const value = (name: string): string | undefined => flagValue(argv, name);
  const config: Config = {
    quick,
    docs: Number(value('docs') ?? (quick ? 10_000 : 100_000)),
    seconds: Number(value('seconds') ?? (quick ? 3 : 10)),
    warmupSeconds: quick ? 2 : 3,
    rounds: Number(value('rounds') ?? (quick ? 1 : 3)),
    connections: Number(value('connections') ?? 32),
    memoryDocs: Number(value('memory-docs') ?? (quick ? 100_000 : 1_000_000)),
    memoryMaxSeconds: quick ? 60 : 300,
    pgUrl: value('pg-url') ?? process.env.DATABASE_URL ?? DEFAULT_PG_URL,
    pgPool: Number(value('pg-pool') ?? 16),
  };
  if (![config.docs, config.rounds, config.connections, config.pgPool].every((n) => Number.isInteger(n) && n > 0) || config.docs < BULK_TARGETS || !(config.seconds > 0) || !(Number.isInteger(config.memoryDocs) && config.memoryDocs >= 0)) {
    throw new Error(`usage: docs-http.bench.ts [--quick] [--docs=N (>= ${BULK_TARGETS})] [--seconds=S] [--rounds=N] [--connections=N] [--memory-docs=N] [--pg-url=URL] [--pg-pool=N]`);
  }
  return config;
}

// ---- Workloads ----------------------------------------------------------------------------------

type Workload = 'find-id' | 'find-email' | 'find-computed' | 'find-partial' | 'insert' | 'find-and-modify' | 'update-pipeline' | 'aggregate' | 'distinct' | 'bulk-write';
/** The workloads a run executes, in this order. */
const WORKLOADS: Record<Workload, string> = {
  'find-id': 'find by _id',
  'find-email': 'find by email (indexed)',
  'find-computed': 'find by email (indexed), computed projection (email, label $concat, decade $floor/$divide/$multiply)',
  'find-partial': `find-partial: profile.city = c and profile.age >= ${SENIOR_AGE} (partial index), sort _id, limit ${PARTIAL_LIMIT}`,
  insert: 'insertOne (durable)',
  'find-and-modify': 'findOneAndUpdate by email (indexed), $inc logins, returnDocument after (durable)',
  'update-pipeline': 'update-pipeline: updateOne by email (indexed), [$set score += profile.age, $set level from score] (durable)',
  aggregate: 'aggregate: $match profile.age (no index, ~1/60 of the documents) + $group by city ($sum, $avg), 4 callers',
  distinct: 'distinct profile.city where profile.age (no index, ~1/60 of the documents), 4 callers',
  // Last: each request adds documents (as insert does), which the rows after it would scan.
  'bulk-write': `bulk-write: bulkWrite of ${BULK_OPERATIONS} operations, ordered (${BULK_BLOCKS} x [${BULK_BLOCK.inserts} insertOne, ${BULK_BLOCK.updates} updateOne by email $set + $inc, replaceOne by _id, deleteOne by _id of an insert]) (durable)`,
};
/** The route each workload posts to (under /api/mql/). */
const ROUTES: Record<Workload, string> = {
  'find-id': 'find',
  'find-email': 'find',
  'find-computed': 'find',
  'find-partial': 'find',
  insert: 'insertOne',
  'find-and-modify': 'findOneAndUpdate',
  'update-pipeline': 'updateOne',
  aggregate: 'aggregate',
  distinct: 'distinct',
  'bulk-write': 'bulkWrite',
};
/** The workloads that scan ~every document per request: AGGREGATE_CONNECTIONS callers, a long timeout. */
const SCANS: ReadonlySet<Workload> = new Set<Workload>(['aggregate', 'distinct']);

/** The aggregation of the `aggregate` workload for one age (18-77 in the data). */
function aggregatePipeline(age: number): Doc[] {
  return [{ $match: { 'profile.age': age } }, { $group: { _id: '$profile.city', n: { $sum: 1 }, avgN: { $avg: '$n' } } }];
}

/**
 * The findOneAndUpdate of the `find-and-modify` workload for the document with `email`: a
 * counter bump that returns the document as changed. makeDocument has no `logins` (nor any counter: `n` is the
 * document's number, which the aggregation averages, and `profile.age` is what the scan rows
 * match), so the first bump of a document creates it at 1 (MongoDB's $inc rule; the peer's
 * COALESCE), each later one adds 1. An $inc always changes the document, so every request is a
 * durable write on both stores (a $set to a value the document already holds would be a no-op
 * that tetradb answers without writing).
 */
function findAndModifyRequest(email: string): Doc {
  return { collection: COLLECTION, filter: { email }, update: { $inc: { logins: 1 } }, returnDocument: 'after' };
}

/** The find of the `find-computed` workload for the document with `email` (COMPUTED_PROJECTION). */
function computedRequest(email: string): Doc {
  return { collection: COLLECTION, filter: { email }, projection: COMPUTED_PROJECTION };
}

/**
 * The find of the `find-partial` workload for one city: its first PARTIAL_LIMIT documents aged
 * SENIOR_AGE and over, by _id. The query repeats the partial index's filter, so it implies it
 * and may read it; the index's second field, _id, can give the order (as the peer's (city, id)
 * can), so a store need not sort the city's seniors. An index on {"profile.city": 1} alone would
 * not: tetradb would then read and sort every senior of the city where PostgreSQL stops at 20.
 */
function partialRequest(city: string): Doc {
  return { collection: COLLECTION, filter: { 'profile.city': city, ...SENIOR_FILTER }, sort: { _id: 1 }, limit: PARTIAL_LIMIT };
}

/** The updateOne of the `update-pipeline` workload for the document with `email` (SCORE_PIPELINE). */
function scoreRequest(email: string): Doc {
  return { collection: COLLECTION, filter: { email }, update: SCORE_PIPELINE };
}

/** How many bulk-write bodies there are for `docs` loaded documents: each needs BULK_TARGETS of its own. */
function bulkBodies(docs: number): number {
  return Math.min(BULK_BODIES, Math.floor(docs / BULK_TARGETS));
}

/** One bulk-write request, and what it must answer and leave behind. */
interface BulkPlan {
  operations: Doc[];
  /** The answer both stores must give (tetradb's BulkWriteResult). */
  result: Doc;
  /** The inserted documents that stay, and the _ids of those deleted again. */
  kept: Doc[];
  deleted: string[];
  /** Loaded documents updated ($set lastBatch, $inc logins), and those replaced with their replacement. */
  updated: number[];
  replaced: Array<{ n: number; replacement: Doc }>;
}

/**
 * Bulk-write body `body` of `bodies`, `seq` standing for what makes its inserts new (BULK_SEQ in
 * the prebuilt templates, a number per send). Its updates and replacements go to BULK_TARGETS
 * loaded documents no other body touches (the numbers congruent to `body` modulo `bodies`, in a
 * seeded order), so concurrent requests never write the same document: the peer's transactions
 * then never wait on each other's row locks nor deadlock, and both stores do the same work. Each
 * update changes the document ($inc) and each replacement carries `seq`, so every one counts as
 * modified; each delete removes a document inserted earlier in the same request, so the counts
 * are the same at every send: BULK_OPERATIONS operations, all of them applied.
 */
function bulkPlan(docs: number, body: number, bodies: number, seq: string): BulkPlan {
  const own = Array.from({ length: Math.ceil((docs - body) / bodies) }, (_, m) => body + m * bodies);
  const rand = seededRandom(0xb01c ^ Math.imul(body + 1, 0x9e3779b1));
  for (let k = own.length - 1; k > 0; k--) {
    const r = Math.floor(rand() * (k + 1));
    [own[k], own[r]] = [own[r]!, own[k]!];
  }
  const targets = own.slice(0, BULK_TARGETS);
  const plan: BulkPlan = { operations: [], result: {}, kept: [], deleted: [], updated: [], replaced: [] };
  const insertedIds: Record<string, string> = {};
  let inserts = 0;
  let next = 0;
  for (let b = 0; b < BULK_BLOCKS; b++) {
    const blockInserts: Doc[] = [];
    for (let k = 0; k < BULK_BLOCK.inserts; k++, inserts++) {
      const id = `bulk-${seq}-${inserts}`;
      const document = makeDocument(docs + body * BULK_BLOCKS * BULK_BLOCK.inserts + inserts, id, `${id}@example.com`) as unknown as Doc;
      insertedIds[String(plan.operations.length)] = id;
      plan.operations.push({ insertOne: { document } });
      blockInserts.push(document);
    }
    for (let k = 0; k < BULK_BLOCK.updates; k++) {
      const n = targets[next++]!;
      plan.operations.push({ updateOne: { filter: { email: docEmail(n) }, update: { $set: { lastBatch: seq }, $inc: { logins: 1 } } } });
      plan.updated.push(n);
    }
    for (let k = 0; k < BULK_BLOCK.replaces; k++) {
      const n = targets[next++]!;
      const { _id, ...rest } = makeDocument(n);
      const replacement = { ...rest, lastBatch: seq };
      plan.operations.push({ replaceOne: { filter: { _id }, replacement } });
      plan.replaced.push({ n, replacement });
    }
    for (let k = 0; k < BULK_BLOCK.deletes; k++) {
      const id = blockInserts[k]!['_id'] as string;
      plan.operations.push({ deleteOne: { filter: { _id: id } } });
      plan.deleted.push(id);
    }
    plan.kept.push(...blockInserts.slice(BULK_BLOCK.deletes));
  }
  const matched = plan.updated.length + plan.replaced.length;
  plan.result = { insertedCount: inserts, matchedCount: matched, modifiedCount: matched, deletedCount: plan.deleted.length, upsertedCount: 0, insertedIds, upsertedIds: {} };
  return plan;
}

/** The bulkWrite request of a plan. */
function bulkRequest(plan: BulkPlan): Doc {
  return { collection: COLLECTION, ordered: true, operations: plan.operations };
}

/** The distinct of the `distinct` workload for one age (18-77 in the data). */
function distinctRequest(age: number): Doc {
  return { collection: COLLECTION, key: 'profile.city', filter: { 'profile.age': age } };
}

type Doc = Record<string, unknown>;

interface RoundResult extends LoadResult {
  /** Peak server memory while the row ran, MiB (tetradb: VmRSS; the peer: Fastify VmRSS + PostgreSQL PSS). */
  memMiB: number;
}

/** A target under test: where it listens and how its memory is read. */
type Target = HttpTarget;

/** The body of the `i`-th request of a workload; `tag` keeps inserted ids unique across runs. */
function bodyMaker(workload: Workload, docs: number, tag: string): () => string {
  const picks = randomDocNumbers(docs, PICKS);
  let i = 0;
  switch (workload) {
    case 'find-id':
      return () => JSON.stringify({ collection: COLLECTION, filter: { _id: docId(picks[i++ % PICKS]!) } });
    case 'find-email':
      return () => JSON.stringify({ collection: COLLECTION, filter: { email: docEmail(picks[i++ % PICKS]!) } });
    case 'find-computed':
      return () => JSON.stringify(computedRequest(docEmail(picks[i++ % PICKS]!)));
    case 'find-partial':
      // The city of a random loaded document: the cities weighted as the data has them.
      return () => JSON.stringify(partialRequest(makeDocument(picks[i++ % PICKS]!).profile.city));
    case 'insert':
      return () => {
        const n = i++;
        return JSON.stringify({ collection: COLLECTION, document: makeDocument(docs + n, `ins-${tag}-${n}`, `ins-${tag}-${n}@example.com`) });
      };
    case 'find-and-modify':
      return () => JSON.stringify(findAndModifyRequest(docEmail(picks[i++ % PICKS]!)));
    case 'update-pipeline':
      return () => JSON.stringify(scoreRequest(docEmail(picks[i++ % PICKS]!)));
    case 'aggregate':
      return () => JSON.stringify({ collection: COLLECTION, pipeline: aggregatePipeline(18 + (picks[i++ % PICKS]! % 60)) });
    case 'distinct':
      return () => JSON.stringify(distinctRequest(18 + (picks[i++ % PICKS]! % 60)));
    case 'bulk-write':
      // Templates: drive fills BULK_SEQ at each send.
      return () => JSON.stringify(bulkRequest(bulkPlan(docs, i++ % bulkBodies(docs), bulkBodies(docs), BULK_SEQ)));
    default: {
      const never: never = workload;
      throw new Error(`unknown workload ${String(never)}`);
    }
  }
}

async function drive(config: Config, target: Target, workload: Workload | 'hello', seconds: number): Promise<RoundResult> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (target.apiKey !== '') headers.authorization = `Bearer ${target.apiKey}`;
  const tag = `${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const next = workload === 'hello' ? undefined : bodyMaker(workload, config.docs, tag);
  const path = workload === 'hello' ? '/hello' : `/api/mql/${ROUTES[workload]}`;
  // Finds (and the other requests that may repeat: findOneAndUpdate bumps a counter each time,
  // the pipeline update adds the age to the score each time)
  // cycle through prebuilt requests (pooledRequests), as the hello-world's static GET does;
  // inserts need a new body each (unique ids), made as they go, for both stores alike. A
  // bulk-write body (~21 KB) is prebuilt as a template whose inserted ids are filled in at each
  // send with a number new in this run (`tag` new at every call, so warm-up and rounds differ too).
  let sent = 0;
  const requests =
    next === undefined
      ? { requests: [{ method: 'GET' as const, path }] }
      : workload === 'insert'
        ? { requests: [{ method: 'POST' as const, path, setupRequest: (req: any) => ({ ...req, body: next() }) }] }
        : workload === 'bulk-write'
          ? pooledRequests('POST', path, headers, Array.from({ length: bulkBodies(config.docs) }, next), config.connections, (t) => t.replaceAll(BULK_SEQ, `${tag}-${sent++}`))
          : pooledRequests('POST', path, headers, Array.from({ length: PICKS }, next), config.connections);
  const sampler = peakSampler(target.memory, target.sampleMs);
  // An aggregation (and a distinct) scans every document: with every connection on it at once, an
  // answer takes longer than the row (each store interleaves the scans), so its row runs
  // AGGREGATE_CONNECTIONS callers, an analytics load, and waits up to a minute for an answer, on
  // both stores.
  const scan = workload !== 'hello' && SCANS.has(workload);
  const connections = scan ? Math.min(config.connections, AGGREGATE_CONNECTIONS) : config.connections;
  const result = await autocannon({ url: target.url, connections, duration: seconds, headers, ...(scan ? { timeout: 60 } : {}), ...requests });
  return { ...loadResult(result), memMiB: sampler.stop() };
}

const post = postJson;

/** Loads the N documents through insertMany, one batch of 1000 at a time; returns seconds. */
async function loadDocuments(target: Target, docs: number): Promise<number> {
  const t0 = performance.now();
  for (let start = 0; start < docs; start += LOAD_BATCH) {
    const batch = [];
    for (let i = start; i < Math.min(docs, start + LOAD_BATCH); i++) batch.push(makeDocument(i));
    const r = await post(target, '/api/mql/insertMany', { collection: COLLECTION, documents: batch });
    if (r.status !== 201 || r.json.insertedIds?.length !== batch.length) throw new Error(`${target.name}: insertMany answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
  }
  return (performance.now() - t0) / 1000;
}

/**
 * Both find shapes on random loaded documents must return exactly that document, as the
 * generator makes it: the rows then measure real answers, not empty results.
 */
async function spotCheck(target: Target, docs: number): Promise<void> {
  for (const i of randomDocNumbers(docs, SPOT_CHECKS, 42)) {
    for (const filter of [{ _id: docId(i) }, { email: docEmail(i) }]) {
      const r = await post(target, '/api/mql/find', { collection: COLLECTION, filter });
      if (r.status !== 200 || r.json.documents?.length !== 1 || !isDeepStrictEqual(r.json.documents[0], makeDocument(i))) {
        throw new Error(`${target.name}: find ${JSON.stringify(filter)} answered ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
      }
    }
  }
}

/** The aggregation's answer for a few ages, groups sorted by city: equal on every store before any timing. */
async function aggregateAnswers(target: Target): Promise<string> {
  const out: unknown[] = [];
  for (const age of [18, 40, 77]) {
    const r = await post(target, '/api/mql/aggregate', { collection: COLLECTION, pipeline: aggregatePipeline(age) });
    if (r.status !== 200) throw new Error(`${target.name}: aggregate answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
    const groups = (r.json.documents as Doc[]).map((g) => [g['_id'], g['n'], Number(g['avgN']).toFixed(6)]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    out.push(groups);
  }
  return JSON.stringify(out);
}

/**
 * findOneAndUpdate on a few loaded documents, and on an email no document has: each answer must
 * be the document as it was read just before with `logins` one higher (created at 1), counts 1 (0
 * and null for the miss), and a find afterwards must return the document as answered. Returns the
 * answers, which must be equal on every store (before any timing, as all are changed alike).
 */
async function findAndModifyAnswers(target: Target, docs: number): Promise<unknown[]> {
  const picks = [...new Set(randomDocNumbers(docs, MODIFY_CHECKS, 43))];
  const out: unknown[] = [];
  for (const i of picks) {
    const read = await post(target, '/api/mql/find', { collection: COLLECTION, filter: { email: docEmail(i) } });
    const before = read.json.documents?.[0] as Doc | undefined;
    if (read.status !== 200 || before === undefined) throw new Error(`${target.name}: find by email ${docEmail(i)} answered ${read.status} ${JSON.stringify(read.json).slice(0, 300)}`);
    const expected = { ...before, logins: (typeof before['logins'] === 'number' ? before['logins'] : 0) + 1 };
    const r = await post(target, '/api/mql/findOneAndUpdate', findAndModifyRequest(docEmail(i)));
    if (r.status !== 200 || r.json.matchedCount !== 1 || r.json.modifiedCount !== 1 || !isDeepStrictEqual(r.json.document, expected)) {
      throw new Error(`${target.name}: findOneAndUpdate of ${docEmail(i)} answered ${r.status} ${JSON.stringify(r.json).slice(0, 300)}, expected the document with logins ${expected.logins}`);
    }
    const after = await post(target, '/api/mql/find', { collection: COLLECTION, filter: { email: docEmail(i) } });
    if (after.status !== 200 || after.json.documents?.length !== 1 || !isDeepStrictEqual(after.json.documents[0], expected)) {
      throw new Error(`${target.name}: after findOneAndUpdate, find ${docEmail(i)} answered ${after.status} ${JSON.stringify(after.json).slice(0, 300)}`);
    }
    out.push(r.json);
  }
  const miss = await post(target, '/api/mql/findOneAndUpdate', findAndModifyRequest('nobody@example.com'));
  if (miss.status !== 200 || miss.json.document !== null || miss.json.matchedCount !== 0 || miss.json.modifiedCount !== 0) {
    throw new Error(`${target.name}: findOneAndUpdate of an absent email answered ${miss.status} ${JSON.stringify(miss.json).slice(0, 300)}`);
  }
  out.push(miss.json);
  return out;
}


/** The cities of the loaded documents of each of DISTINCT_CHECK_AGES, by code point, as the generator makes them. */
function expectedDistinct(docs: number): Map<number, string[]> {
  const cities = new Map(DISTINCT_CHECK_AGES.map((age) => [age, new Set<string>()]));
  for (let i = 0; i < docs; i++) {
    const d = makeDocument(i);
    cities.get(d.profile.age)?.add(d.profile.city);
  }
  return new Map([...cities].map(([age, set]) => [age, [...set].sort(byCodePoint)]));
}

/**
 * distinct's answer for a few ages, in the order the store gives (BSON order, the order is part
 * of the answer): each must equal what the generator says the loaded documents hold (the checks
 * before it change no city or age); returned to be compared across stores too.
 */
async function distinctAnswers(target: Target, expectedByAge: Map<number, string[]>): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [age, expected] of expectedByAge) {
    const r = await post(target, '/api/mql/distinct', distinctRequest(age));
    if (r.status !== 200 || !isDeepStrictEqual(r.json.values, expected)) {
      throw new Error(`${target.name}: distinct profile.city for age ${age} answered ${r.status} ${JSON.stringify(r.json).slice(0, 300)}, expected ${JSON.stringify(expected)}`);
    }
    out.push(r.json.values);
  }
  return out;
}

/**
 * find-computed on a few loaded documents: each answer must be the generator's email, "name
 * (city)" and the decade of the age, nothing else (no _id); returned to be compared across stores.
 */
async function computedAnswers(target: Target, docs: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const i of new Set(randomDocNumbers(docs, COMPUTED_CHECKS, 45))) {
    const d = makeDocument(i);
    const expected = { email: d.email, label: `${d.name} (${d.profile.city})`, decade: Math.floor(d.profile.age / 10) * 10 };
    const r = await post(target, '/api/mql/find', computedRequest(d.email));
    if (r.status !== 200 || r.json.documents?.length !== 1 || !isDeepStrictEqual(r.json.documents[0], expected)) {
      throw new Error(`${target.name}: find-computed of ${d.email} answered ${r.status} ${JSON.stringify(r.json).slice(0, 300)}, expected ${JSON.stringify(expected)}`);
    }
    out.push(r.json.documents);
  }
  return out;
}

/** The cities find-partial is checked on: those of a few random loaded documents. */
function partialCheckCities(docs: number): string[] {
  return [...new Set(randomDocNumbers(docs, PARTIAL_CHECKS, 46).map((i) => makeDocument(i).profile.city))];
}

/** For each of `cities`, the numbers of its first PARTIAL_LIMIT loaded documents aged SENIOR_AGE and over, in _id order (docId pads the number, so that is number order). */
function expectedSeniors(docs: number, cities: readonly string[]): Map<string, number[]> {
  const out = new Map(cities.map((c) => [c, [] as number[]]));
  for (let i = 0; i < docs; i++) {
    const d = makeDocument(i);
    const list = d.profile.age >= SENIOR_AGE ? out.get(d.profile.city) : undefined;
    if (list !== undefined && list.length < PARTIAL_LIMIT) list.push(i);
  }
  return out;
}

/**
 * find-partial for a few cities: each answer must be exactly the generator's documents, in _id
 * order (nothing has changed any document yet); returned to be compared across stores too.
 */
async function partialAnswers(target: Target, expectedByCity: Map<string, number[]>): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const [city, numbers] of expectedByCity) {
    const r = await post(target, '/api/mql/find', partialRequest(city));
    if (r.status !== 200 || !isDeepStrictEqual(r.json.documents, numbers.map((i) => makeDocument(i)))) {
      throw new Error(`${target.name}: find-partial for ${city} answered ${r.status} ${JSON.stringify(r.json).slice(0, 300)}, expected the documents ${numbers.map((i) => docId(i)).join(', ')}`);
    }
    out.push(r.json.documents);
  }
  return out;
}

/**
 * update-pipeline on a few loaded documents, SCORE_UPDATES times each, and on an email no
 * document has: each update must answer matched 1 and modified 1 (the miss 0 and 0), and a find
 * after each must return the document as read before with score = k x profile.age and the level
 * that score gives (so the second stage saw the first's result). Returns the documents found
 * last, which must be equal on every store (before any timing, as all are changed alike).
 */
async function scoreAnswers(target: Target, docs: number): Promise<unknown[]> {
  const out: unknown[] = [];
  const findByEmail = async (email: string): Promise<Doc> => {
    const r = await post(target, '/api/mql/find', { collection: COLLECTION, filter: { email } });
    if (r.status !== 200 || r.json.documents?.length !== 1) throw new Error(`${target.name}: find by email ${email} answered ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    return r.json.documents[0] as Doc;
  };
  for (const i of new Set(randomDocNumbers(docs, SCORE_CHECKS, 44))) {
    const email = docEmail(i);
    const before = await findByEmail(email);
    const age = (before['profile'] as { age: number }).age;
    let after: Doc = before;
    for (let k = 1; k <= SCORE_UPDATES; k++) {
      const r = await post(target, '/api/mql/updateOne', scoreRequest(email));
      if (r.status !== 200 || r.json.matchedCount !== 1 || r.json.modifiedCount !== 1) throw new Error(`${target.name}: update-pipeline of ${email} answered ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
      const score = (typeof before['score'] === 'number' ? before['score'] : 0) + k * age;
      const expected = { ...before, score, level: score >= GOLD_SCORE ? 'gold' : 'basic' };
      after = await findByEmail(email);
      if (!isDeepStrictEqual(after, expected)) throw new Error(`${target.name}: after update-pipeline ${k} of ${email}, find answered ${JSON.stringify(after).slice(0, 300)}, expected score ${score}, level ${expected.level}`);
    }
    out.push(after);
  }
  const miss = await post(target, '/api/mql/updateOne', scoreRequest('nobody@example.com'));
  if (miss.status !== 200 || miss.json.matchedCount !== 0 || miss.json.modifiedCount !== 0) {
    throw new Error(`${target.name}: update-pipeline of an absent email answered ${miss.status} ${JSON.stringify(miss.json).slice(0, 300)}`);
  }
  out.push(miss.json);
  return out;
}

/**
 * bulk-write on BULK_CHECKS bodies, each sent once with its own `seq`: the answer must be the
 * plan's counts and inserted ids exactly, and a find by _id afterwards must show every change:
 * each kept insert as generated, each deleted one gone, each updated document as read just before
 * with lastBatch set and logins one higher (created at 1), each replaced one its replacement under
 * its _id. Returns the answers and the documents found, which must be equal on every store.
 */
async function bulkWriteAnswers(target: Target, docs: number): Promise<unknown[]> {
  const out: unknown[] = [];
  const findById = async (id: string): Promise<Doc[]> => {
    const r = await post(target, '/api/mql/find', { collection: COLLECTION, filter: { _id: id } });
    if (r.status !== 200 || !Array.isArray(r.json.documents)) throw new Error(`${target.name}: find by _id ${id} answered ${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
    return r.json.documents as Doc[];
  };
  for (let body = 0; body < BULK_CHECKS; body++) {
    const seq = `check-${body}`;
    const plan = bulkPlan(docs, body, bulkBodies(docs), seq);
    const expected = new Map<string, Doc | undefined>();
    for (const n of plan.updated) {
      const [before] = await findById(docId(n));
      if (before === undefined) throw new Error(`${target.name}: find by _id ${docId(n)} found nothing before bulk-write`);
      expected.set(docId(n), { ...before, lastBatch: seq, logins: (typeof before['logins'] === 'number' ? before['logins'] : 0) + 1 });
    }
    for (const { n, replacement } of plan.replaced) expected.set(docId(n), { _id: docId(n), ...replacement });
    for (const d of plan.kept) expected.set(d['_id'] as string, d);
    for (const id of plan.deleted) expected.set(id, undefined);
    const r = await post(target, '/api/mql/bulkWrite', bulkRequest(plan));
    if (r.status !== 200 || !isDeepStrictEqual(r.json, plan.result)) {
      throw new Error(`${target.name}: bulk-write ${seq} answered ${r.status} ${JSON.stringify(r.json).slice(0, 500)}, expected ${JSON.stringify(plan.result).slice(0, 300)}`);
    }
    const found: unknown[] = [];
    for (const [id, doc] of expected) {
      const after = await findById(id);
      if (!isDeepStrictEqual(after, doc === undefined ? [] : [doc])) {
        throw new Error(`${target.name}: after bulk-write ${seq}, find by _id ${id} answered ${JSON.stringify(after).slice(0, 300)}, expected ${doc === undefined ? 'nothing (deleted)' : JSON.stringify(doc).slice(0, 300)}`);
      }
      found.push(after);
    }
    out.push(r.json, found);
  }
  return out;
}

interface Row {
  target: string;
  workload: Workload | 'hello';
  /** One result per round, in round order. */
  rounds: RoundResult[];
}

interface LoadRow {
  target: string;
  seconds: number;
  memMiB: number;
  disk: string;
}

// ---- Main ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const machine = machineLine(); // the load average before this run adds its own
  const dirty = dirtyBudgetFromEnv();
  const { root, cleanup } = scratchDir('tetradb-docsbench-');
  const children: ChildProcess[] = [];
  const rows: Row[] = [];
  const loads: LoadRow[] = [];
  const notes: string[] = [];
  /** Whether each store's find-partial plan reads its partial index (printed with the targets). */
  const planChecks: PlanCheck[] = [];
  const memoryRows: DocsMemoryRow[] = [];
  let pgSettings: string | undefined;
  let pgSkipped: string | undefined;
  let pgClient: pg.Client | undefined;
  process.stderr.write(`tetradb documents over HTTP (${config.quick ? 'quick' : 'full'}): ${fmtInt(config.docs)} documents, ${config.connections} connections, ${config.seconds} s per row\n`);
  try {
    // Every server runs from the start, so the rows of one round run minutes apart at most: the
    // machine is shared and its speed drifts. A server nobody calls costs next to nothing.
    const helloPort = await freePort();
    const hello = await startPeer(here('./servers/hello-server.ts'), [String(helloPort)]);
    children.push(hello);
    const helloTarget: Target = { name: 'fastify hello-world', url: `http://127.0.0.1:${helloPort}`, apiKey: '', memory: () => rssMiB(hello.pid), sampleMs: 250 };

    // tetradb, as npm start runs it (the rate limiter off: see the notes).
    const dataDir = join(root, 'tetra');
    const tetra = await startTetra(dataDir, ['--rate-limit', '0']);
    children.push(tetra.child);
    const tetraTarget: Target = { name: 'tetradb', url: tetra.url, apiKey: tetra.apiKey, memory: () => rssMiB(tetra.child.pid), sampleMs: 250 };
    // The partial index is created before the load too, so the load maintains it (as the peer's).
    for (const spec of [{ keys: { email: 1 } }, { keys: { 'profile.city': 1, _id: 1 }, name: SENIOR_INDEX, partialFilterExpression: SENIOR_FILTER }]) {
      const index = await post(tetraTarget, '/api/mql/createIndex', { collection: COLLECTION, ...spec });
      if (index.status !== 200) throw new Error(`createIndex ${JSON.stringify(spec)} answered ${index.status}: ${JSON.stringify(index.json)}`);
    }
    process.stderr.write(`  tetradb: loading ${fmtInt(config.docs)} documents...\n`);
    const tetraLoad = await loadDocuments(tetraTarget, config.docs);
    loads.push({ target: tetraTarget.name, seconds: tetraLoad, memMiB: tetraTarget.memory(), disk: `${fmtInt(dirBytes(dataDir) / MiB)} (data dir: page files + WAL)` });
    await spotCheck(tetraTarget, config.docs);
    const explain = await post(tetraTarget, '/api/mql/find', { collection: COLLECTION, filter: { email: docEmail(1) }, explain: true });
    notes.push(`- tetradb plan for find by email: ${JSON.stringify(explain.json.explain?.plan)} (keys examined ${explain.json.explain?.keysExamined}, docs examined ${explain.json.explain?.docsExamined})`);
    const partialCity = makeDocument(1).profile.city;
    const partialExplain = (await post(tetraTarget, '/api/mql/find', { ...partialRequest(partialCity), explain: true })).json.explain;
    const partialPlan = partialExplain?.plan;
    planChecks.push({ ok: partialPlan?.indexName === SENIOR_INDEX && partialPlan?.isPartial === true && partialPlan?.sortedByPlan === true, text: `find-partial: tetradb reads its partial index ${SENIOR_INDEX} in _id order (explain)` });
    notes.push(`- tetradb plan for find-partial (${partialCity}): ${JSON.stringify(partialPlan)} (in-memory sort ${partialExplain?.inMemorySort}, keys examined ${partialExplain?.keysExamined}, docs examined ${partialExplain?.docsExamined}, returned ${partialExplain?.nReturned})`);

    // Fastify + PostgreSQL, when there is one.
    let pgTarget: Target | undefined;
    ({ client: pgClient, settings: pgSettings, skipped: pgSkipped } = await connectPgOrSkip(config.pgUrl));
    if (pgClient !== undefined) {
      const port = await freePort();
      const apiKey = 'bench-key';
      const front = await startPeer(here('./servers/pg-docs-server.ts'), [String(port), apiKey, COLLECTION, String(config.pgPool)], { DATABASE_URL: config.pgUrl });
      children.push(front);
      pgTarget = { name: PG_NAME, url: `http://127.0.0.1:${port}`, apiKey, memory: () => rssMiB(front.pid) + postgresPssMiB(), sampleMs: 1000 };
      process.stderr.write(`  ${PG_NAME}: loading ${fmtInt(config.docs)} documents...\n`);
      const pgLoad = await loadDocuments(pgTarget, config.docs);
      const t0 = performance.now();
      await pgClient.query(`ANALYZE ${COLLECTION}`);
      const analyzeSeconds = (performance.now() - t0) / 1000;
      const size = Number((await pgClient.query<{ n: string }>(`SELECT pg_total_relation_size('${COLLECTION}') AS n`)).rows[0]!.n);
      loads.push({ target: pgTarget.name, seconds: pgLoad, memMiB: pgTarget.memory(), disk: `${fmtInt(size / MiB)} (pg_total_relation_size: table, TOAST, indexes; WAL not counted)` });
      await spotCheck(pgTarget, config.docs);
      const ours = await aggregateAnswers(tetraTarget);
      const theirs = await aggregateAnswers(pgTarget);
      if (ours !== theirs) throw new Error(`the aggregation answers differ: tetradb ${ours.slice(0, 300)}, PostgreSQL ${theirs.slice(0, 300)}`);
      const plan = await pgClient.query<{ 'QUERY PLAN': string }>(`EXPLAIN SELECT doc FROM ${COLLECTION} WHERE doc->>'email' = $1 LIMIT 100`, [docEmail(1)]);
      notes.push(`- PostgreSQL plan for find by email: ${plan.rows.map((r) => r['QUERY PLAN'].trim()).join(' / ')} (ANALYZE after the load took ${fmtNum(analyzeSeconds, 2)} s, not in the load time)`);
      const pgPartial = (await pgClient.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${seniorByCitySql(COLLECTION)}`, [partialCity, PARTIAL_LIMIT])).rows.map((r) => r['QUERY PLAN'].trim());
      // "Index Scan using <index>" (in id order) or "Bitmap Index Scan on <index>" (then a sort of
      // the matches), as the planner's costs decide: either reads the partial index.
      const pgIndex = new RegExp(`\\b(using|on) ${COLLECTION}_${SENIOR_INDEX}\\b`);
      planChecks.push({ ok: pgPartial.some((line) => pgIndex.test(line)), text: `find-partial: PostgreSQL reads its partial index ${COLLECTION}_${SENIOR_INDEX} (EXPLAIN)` });
      notes.push(`- PostgreSQL plan for find-partial (${partialCity}): ${pgPartial.join(' / ')}`);
    }

    // find-computed, find-partial, findOneAndUpdate, update-pipeline, distinct and bulk-write answer
    // alike on every store (and as the generator says) before any timing. The finds come first,
    // while every document is still as generated; the updates then change `logins`, `score` and
    // `level` of a few documents, which distinct does not read; bulk-write comes last, as its
    // inserts add documents distinct would see.
    const stores = pgTarget === undefined ? [tetraTarget] : [tetraTarget, pgTarget];
    const computed = await Promise.all(stores.map((t) => computedAnswers(t, config.docs)));
    const expectedPartial = expectedSeniors(config.docs, partialCheckCities(config.docs));
    const partial = await Promise.all(stores.map((t) => partialAnswers(t, expectedPartial)));
    const modified = await Promise.all(stores.map((t) => findAndModifyAnswers(t, config.docs)));
    const scored = await Promise.all(stores.map((t) => scoreAnswers(t, config.docs)));
    const expectedCities = expectedDistinct(config.docs);
    const distinct = await Promise.all(stores.map((t) => distinctAnswers(t, expectedCities)));
    const bulk = await Promise.all(stores.map((t) => bulkWriteAnswers(t, config.docs)));
    for (const [what, answers] of [['find-computed', computed], ['find-partial', partial], ['findOneAndUpdate', modified], ['update-pipeline', scored], ['distinct', distinct], ['bulk-write', bulk]] as const) {
      if (answers.length > 1 && !isDeepStrictEqual(answers[0], answers[1])) {
        throw new Error(`the ${what} answers differ: tetradb ${JSON.stringify(answers[0]).slice(0, 300)}, PostgreSQL ${JSON.stringify(answers[1]).slice(0, 300)}`);
      }
    }

    // Warm-up, then the rounds: hello-world, then each workload on each store, the stores'
    // order alternating from round to round.
    await drive(config, helloTarget, 'hello', config.warmupSeconds);
    for (const t of stores) for (const w of Object.keys(WORKLOADS) as Workload[]) await drive(config, t, w, config.warmupSeconds);
    const rowOf = (target: string, workload: Row['workload']): Row => {
      let row = rows.find((x) => x.target === target && x.workload === workload);
      if (row === undefined) rows.push((row = { target, workload, rounds: [] }));
      return row;
    };
    for (const t of [helloTarget, ...stores]) for (const w of t === helloTarget ? (['hello'] as const) : (Object.keys(WORKLOADS) as Workload[])) rowOf(t.name, w);
    for (let round = 0; round < config.rounds; round++) {
      process.stderr.write(`  round ${round + 1} of ${config.rounds}\n`);
      rowOf(helloTarget.name, 'hello').rounds.push(await drive(config, helloTarget, 'hello', config.seconds));
      const order = round % 2 === 0 ? stores : [...stores].reverse();
      for (const w of Object.keys(WORKLOADS) as Workload[]) {
        for (const t of order) rowOf(t.name, w).rounds.push(await drive(config, t, w, config.seconds));
      }
    }
    for (const c of children) await stop(c);
    if (pgClient !== undefined) await pgClient.query(`DROP TABLE IF EXISTS ${COLLECTION}`);

    // Memory: the engine alone, loading documents in a worker process.
    if (config.memoryDocs > 0) {
      const dirtyBytes = dirty.bytes ?? DEFAULT_DIRTY_BYTES;
      const dirtyLabel = `dirty ${fmtNum(dirtyBytes / MiB, 0)} MiB`;
      const variants: Array<Omit<DocsMemoryTask, 'dir' | 'size' | 'maxSeconds'>> = [
        { label: `tetradb, npm start defaults (cache 256 MiB, ${dirtyLabel})`, cacheBytes: SERVER_CACHE_BYTES, dirtyBytes },
        { label: `tetradb, cache 32 MiB (TETRA_CACHE_BYTES=${SMALL_CACHE_BYTES}), ${dirtyLabel}`, cacheBytes: SMALL_CACHE_BYTES, dirtyBytes },
      ];
      for (const [i, v] of variants.entries()) {
        const task: DocsMemoryTask = { ...v, dir: join(root, `memory-${i}`), size: config.memoryDocs, maxSeconds: config.memoryMaxSeconds };
        memoryRows.push(await runWorker<DocsMemoryRow>(here('./docs-memory-worker.ts'), task, `${v.label}: ${fmtCount(config.memoryDocs)} documents`));
      }
    }
  } finally {
    await endHttpRun(children, pgClient === undefined ? undefined : { client: pgClient, table: COLLECTION }, cleanup);
  }
  process.stdout.write(render(config, { machine, rows, loads, notes, planChecks, memoryRows, pgSettings, pgSkipped, minutes: (Date.now() - started) / 60_000 }));
}

// ---- Output -------------------------------------------------------------------------------------

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

/** The lower median: the middle value of an odd count, the lower of the two middle ones otherwise. */
function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** The round with the median req/s (its latencies come with it). */
function medianRound(row: Row): RoundResult {
  const sorted = [...row.rounds].sort((a, b) => a.rps - b.rps);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
}

/** The median over rounds of row's req/s against the same round's `other`. */
function ratio(row: Row | undefined, other: Row | undefined): number | undefined {
  if (row === undefined || other === undefined || row.rounds.length === 0 || row.rounds.length !== other.rounds.length) return undefined;
  return median(row.rounds.map((x, i) => x.rps / other.rounds[i]!.rps));
}

interface PlanCheck {
  ok: boolean;
  text: string;
}

interface Results {
  machine: string;
  rows: Row[];
  loads: LoadRow[];
  notes: string[];
  planChecks: PlanCheck[];
  memoryRows: DocsMemoryRow[];
  pgSettings: string | undefined;
  pgSkipped: string | undefined;
  minutes: number;
}

function render(config: Config, r: Results): string {
  const out: string[] = [];
  const find = (target: string, workload: Row['workload']): Row | undefined => r.rows.find((x) => x.target === target && x.workload === workload && x.rounds.length > 0);
  const hello = find('fastify hello-world', 'hello');
  const avgBytes = randomDocNumbers(config.docs, 1000, 7).reduce((s, i) => s + JSON.stringify(makeDocument(i)).length, 0) / 1000;
  const tetraEnv = Object.entries(process.env).filter(([k]) => k.startsWith('TETRA_')).map(([k, v]) => `${k}=${v}`);

  out.push(`## Documents over HTTP (${config.quick ? 'quick' : 'full'} run, ${fmtNum(r.minutes)} min)\n`);
  out.push(r.machine);
  out.push(`- ${fmtInt(config.docs)} documents of ~${fmtInt(avgBytes)} bytes of JSON ({_id: "doc-000000042", email (unique), n, name, tags [2-4], profile {age, city}, bio}), the same in both stores, loaded through insertMany in batches of ${LOAD_BATCH}, one batch at a time, after the indexes were created: \`email\`, and find-partial's partial index on the city and _id of the documents aged ${SENIOR_AGE} and over (tetradb \`{"profile.city": 1, "_id": 1}\` with partialFilterExpression \`${JSON.stringify(SENIOR_FILTER)}\`).`);
  out.push(`- autocannon in this process: ${config.connections} connections, ${config.seconds} s per row, after a warm-up of ${config.warmupSeconds} s per server and workload (not reported; the warm-up inserts count in the stores' sizes). ${config.rounds > 1 ? `${config.rounds} rounds, every server running throughout: each round runs hello-world, then each workload on both stores (their order alternating by round); a row shows its median round (req/s, p50, p99), the min-max over rounds, errors and peak memory over all rounds, and ratios are the median of the per-round ratios (each against the same round's peer).` : 'One round: hello-world, then each workload on both stores, every server running throughout.'} Finds pick from ${fmtInt(PICKS)} random loaded documents (the same for both stores), each connection cycling through its own slice of them in prebuilt requests (as the hello-world's static GET is prebuilt); the finds by _id and by email return one document each. Inserts are new documents with unique _id and email. find-computed picks by email the same way and projects \`${JSON.stringify(COMPUTED_PROJECTION)}\` (no _id, a label and the decade of the age computed from the document). find-partial asks for the first ${PARTIAL_LIMIT} documents by _id of the city of a random loaded document among those aged ${SENIOR_AGE} and over (~13/60 of the documents, ~1/12 of those per city), a query that implies the partial index's filter; the index's second field can give the _id order on both stores (tetradb's planner takes it; PostgreSQL's chooses by cost between an ordered index scan and a bitmap scan of the index then a sort: its plan is shown below). findOneAndUpdate picks by email the same way (prebuilt too) and bumps \`logins\`, which the generated documents lack: a document's first bump creates it at 1, as $inc does in MongoDB. update-pipeline picks by email the same way and sends updateOne with the pipeline \`${JSON.stringify(SCORE_PIPELINE)}\`: \`score\` grows by the age at each update (the first creates it), \`level\` is computed from the new score by the second stage; every update changes the document, so every one is a durable write. The scan rows (aggregate, distinct) pick an age 18-77 the same way. bulk-write (the last row, as its inserts grow the collection) sends one ordered bulkWrite of ${BULK_OPERATIONS} operations per request, ${BULK_BLOCKS} blocks of ${BULK_BLOCK.inserts} insertOne of new documents (unique _id and email), ${BULK_BLOCK.updates} updateOne by email of loaded documents (\`{$set: {lastBatch: <request>}, $inc: {logins: 1}}\`), a replaceOne by _id of a loaded document (the generated document with \`lastBatch\`) and a deleteOne by _id of the block's first insert: answered insertedCount ${BULK_BLOCKS * BULK_BLOCK.inserts}, matched and modified ${BULK_TARGETS}, deleted ${BULK_BLOCKS * BULK_BLOCK.deletes} (net +${BULK_BLOCKS * (BULK_BLOCK.inserts - BULK_BLOCK.deletes)} documents a request); its ${fmtInt(bulkBodies(config.docs))} bodies are prebuilt (~${fmtInt(JSON.stringify(bulkRequest(bulkPlan(config.docs, 0, bulkBodies(config.docs), BULK_SEQ))).length / 1024)} KB each), the inserted ids filled in with a number new at each send, and each body updates and replaces ${BULK_TARGETS} loaded documents of its own, so no two connections write the same document (the peer's transactions never wait on each other's row locks); its req/s shows the operations per second too (${BULK_OPERATIONS} x). Before the runs, ${SPOT_CHECKS} random documents are read back by _id and by email from each store and compared with the generator; ${COMPUTED_CHECKS} are read through find-computed and must answer the generator's email, "name (city)" and decade; find-partial must answer, for the cities of ${PARTIAL_CHECKS} random documents, exactly the generator's first ${PARTIAL_LIMIT} seniors of the city by _id; ${MODIFY_CHECKS} are changed through findOneAndUpdate on each store (the answer must be the document just read with logins + 1, counts 1, and a find must then return it; an absent email must answer null and 0), ${SCORE_CHECKS} are updated ${SCORE_UPDATES} times through update-pipeline (each answering matched 1, modified 1, a find after each returning the document with score = k x age and the level that gives; an absent email must answer 0 and 0), distinct must answer the generator's cities for ages ${DISTINCT_CHECK_AGES.join(', ')}, and ${BULK_CHECKS} bulk-writes must answer exactly their counts and inserted ids, a find by _id afterwards showing every change (kept inserts as generated, deleted ones gone, updates and replacements applied)${r.pgSettings !== undefined ? '; the two stores answered these alike' : ''}.`);
  out.push(
    `- tetradb: the server as \`npm start\` runs it (server/start.mjs: server/main.ts compiled by esbuild, server/config.ts defaults: fsync=batch, cache 256 MiB, log level info, log lines on stdout, which the bench discards), **except --rate-limit 0** (the default 1000 requests/s per API key would answer most requests 429) and a free port and fresh data directory. TETRA_* in the environment: ${tetraEnv.length > 0 ? tetraEnv.join(' ') : 'none'}. A response leaves only once the writes it could have seen are durable.`,
  );
  if (r.pgSettings !== undefined) {
    out.push(`- Fastify + PostgreSQL: ${r.pgSettings}; a Fastify 5 server with node-postgres (pool of ${config.pgPool} connections, named prepared statements), the same JSON body schemas and bearer check as tetradb's routes; table \`${COLLECTION} (id text primary key, doc jsonb)\`, index \`((doc->>'email'))\`; finds are \`SELECT doc ... WHERE id = $1 LIMIT 100\` and \`... WHERE doc->>'email' = $1 LIMIT 100\`, insertOne one \`INSERT\` (autocommit), insertMany one multi-row \`INSERT\`, the aggregation \`SELECT doc->'profile'->>'city', count(*), avg((doc->>'n')::bigint) ... WHERE doc->'profile'->'age' = $1::jsonb GROUP BY 1\` (no index on the age, as in tetradb; the answers were checked equal on three ages before timing); findOneAndUpdate one \`UPDATE ... SET doc = jsonb_set(doc, '{logins}', to_jsonb(COALESCE((doc->>'logins')::bigint, 0) + 1)) WHERE doc->>'email' = $1 RETURNING doc\` (autocommit), distinct \`SELECT DISTINCT doc->'profile'->'city' ... WHERE (doc->'profile'->>'age')::int = $1\`, sorted by code point in the Fastify process (BSON order, as tetradb answers); find-computed \`SELECT jsonb_build_object('email', doc->'email', 'label', (doc->>'name') || ' (' || (doc->'profile'->>'city') || ')', 'decade', floor((doc->'profile'->>'age')::numeric / 10) * 10) ... WHERE doc->>'email' = $1\`; find-partial \`${seniorByCitySql(COLLECTION)}\` through the partial expression index \`((doc->'profile'->>'city'), id) WHERE (doc->'profile'->>'age')::int >= ${SENIOR_AGE}\`, created with the email index before the load (the age a literal in both, so the planner can prove the predicate); update-pipeline one \`UPDATE ... SET doc = doc || jsonb_build_object('score', COALESCE((doc->>'score')::numeric, 0) + (doc->'profile'->>'age')::numeric, 'level', CASE WHEN <the same sum> >= ${GOLD_SCORE} THEN 'gold' ELSE 'basic' END) WHERE doc->>'email' = $1\` (autocommit); bulkWrite ONE transaction on one pooled connection (\`BEGIN\`, autocommit off, then ${BULK_OPERATIONS} statements one at a time in order, each a round trip, then \`COMMIT\`, which waits for the WAL flush as synchronous_commit and fsync above say): insertOne the \`INSERT\` above, updateOne \`UPDATE ... SET doc = jsonb_set(doc || $2::jsonb, '{logins}', to_jsonb(COALESCE((doc->>'logins')::bigint, 0) + 1)) WHERE doc->>'email' = $1\`, replaceOne \`UPDATE ... SET doc = jsonb_build_object('_id', id) || $2::jsonb WHERE id = $1\`, deleteOne \`DELETE ... WHERE id = $1\`, each a named prepared statement, the counts from the statements' row counts (all or nothing: a failing operation would roll the whole request back, where tetradb keeps the operations before it, as MongoDB does; the benchmark sends none).`);
  }
  if (r.pgSkipped !== undefined) out.push(`- **${r.pgSkipped}**`);
  out.push(`- Server memory: peak while the row ran: tetradb VmRSS, sampled every 250 ms; the peer "front + postgres" = Fastify process VmRSS + the PSS of every PostgreSQL process (shared buffers counted once), sampled every second (reading ~20 processes' smaps costs the client some CPU).`);
  out.push(...r.notes);
  out.push('');

  out.push('### Load\n');
  out.push(
    table(
      ['target', 'documents', 'seconds', 'docs/s', 'server memory after MiB', 'on disk MiB'],
      r.loads.map((l) => [l.target, fmtInt(config.docs), fmtNum(l.seconds, 2), fmtInt(config.docs / l.seconds), fmtInt(l.memMiB), l.disk]),
    ),
  );
  out.push('');

  out.push('### Requests\n');
  const multi = config.rounds > 1;
  out.push(
    table(
      ['target', 'request', 'req/s', ...(multi ? ['rounds min-max'] : []), 'vs hello', 'vs fastify+pg', 'p50 ms', 'p99 ms', 'errors / non-2xx', 'server memory peak MiB'],
      r.rows
        .filter((row) => row.rounds.length > 0)
        .map((row) => {
          const m = medianRound(row);
          const rps = row.rounds.map((x) => x.rps);
          const request = row.workload === 'hello' ? 'GET /hello' : `${WORKLOADS[row.workload]}: POST /api/mql/${ROUTES[row.workload]}`;
          const memMiB = Math.max(...row.rounds.map((x) => x.memMiB));
          // A bulk-write request is BULK_OPERATIONS writes: its operations per second are shown
          // with its requests, and a ratio to the hello-world's empty GETs would mean nothing.
          const bulk = row.workload === 'bulk-write';
          return [
            row.target,
            request,
            bulk ? `${fmtInt(m.rps)} (${fmtInt(m.rps * BULK_OPERATIONS)} ops/s)` : fmtInt(m.rps),
            ...(multi ? [`${fmtInt(Math.min(...rps))}-${fmtInt(Math.max(...rps))}`] : []),
            bulk ? '-' : fmtRatio(ratio(row, hello)),
            row.workload === 'hello' ? '-' : fmtRatio(ratio(row, find(PG_NAME, row.workload))),
            fmtNum(m.p50),
            fmtNum(m.p99),
            `${sum(row.rounds.map((x) => x.errors))} / ${sum(row.rounds.map((x) => x.non2xx))}`,
            row.target === PG_NAME ? `${fmtInt(memMiB)} (front + postgres)` : fmtInt(memMiB),
          ];
        }),
      2,
    ),
  );
  out.push('');

  if (r.memoryRows.length > 0) {
    out.push(`### Memory: ${fmtInt(config.memoryDocs)} documents into one TenantStore\n`);
    out.push(
      `The engine alone in a process of its own (bench/docs-memory-worker.ts): TenantStore (fsync=batch, store defaults) with one PageCache and the memory governor as server/app.ts starts it (TETRA_MEMORY_CHECK_MS, default 100 ms; since 2026-11-26), createIndex {email: 1}, then docsInsert of the same generated documents in batches of ${LOAD_BATCH}, each awaited until durable, one at a time (as the insertMany route does). RSS, V8 heap and Buffer memory sampled every 250 ms without forced GC (so peaks include garbage V8 has not collected yet); "after full GC at end" is measured once, after the load with the store still open, after two full collections. "after open" is RSS once the store is open and the index created (Node and the engine's code); the bound is cache + dirty budget, the memory the configuration allows the engine's data. Any one load stops after ${config.memoryMaxSeconds} s.\n`,
    );
    out.push(
      table(
        ['settings', 'documents loaded', 'docs/s', 'RSS after open MiB', 'peak RSS MiB', 'peak RSS - after open MiB', 'bound: cache + dirty MiB', 'growth vs bound', 'peak heap / buffers MiB', 'after full GC at end: RSS / heap / buffers MiB', 'cache peak / max MiB', 'dirty peak / budget MiB', 'RSS at end MiB', 'event loop p99 / max ms', 'files MiB end of load / after close'],
        r.memoryRows.map((m) => {
          const bound = (m.task.cacheBytes + m.task.dirtyBytes) / MiB;
          const growth = m.peakRssMiB - m.baseRssMiB;
          return [
            m.task.label,
            `${fmtInt(m.loaded)}${m.loaded < m.task.size ? ` (stopped at ${m.task.maxSeconds} s)` : ''}`,
            fmtInt(m.loaded / m.loadSeconds),
            fmtInt(m.baseRssMiB),
            fmtInt(m.peakRssMiB),
            fmtInt(growth),
            fmtInt(bound),
            fmtRatio(growth / bound),
            `${fmtInt(m.peakHeapMiB)} / ${fmtInt(m.peakBuffersMiB)}`,
            `${fmtInt(m.liveRssMiB)} / ${fmtInt(m.liveHeapMiB)} / ${fmtInt(m.liveBuffersMiB)}`,
            `${fmtNum(m.extraPeaks.cacheMiB)} / ${fmtInt(m.task.cacheBytes / MiB)}`,
            `${fmtNum(m.extraPeaks.dirtyMiB)} / ${fmtInt(m.task.dirtyBytes / MiB)}`,
            fmtInt(m.endRssMiB),
            `${fmtNum(m.loop.p99Ms)} / ${fmtNum(m.loop.maxMs)}`,
            `${fmtInt(m.filesEndOfLoadMiB)} / ${fmtInt(m.filesAfterCloseMiB)}`,
          ];
        }),
      ),
    );
    out.push('');
  }

  const checks: string[] = [];
  const check = (ok: boolean | undefined, text: string): void => void checks.push(`${ok === undefined ? 'n/a ' : ok ? 'PASS' : 'FAIL'}  ${text}`);
  const target = (workload: Workload, peerName: string, peer: Row | undefined, min: number): void => {
    const x = ratio(find('tetradb', workload), peer);
    const why = x !== undefined ? fmtRatio(x) : peer === undefined && r.pgSkipped !== undefined ? 'PostgreSQL skipped' : 'no result';
    check(x === undefined ? undefined : x >= min, `${WORKLOADS[workload]} >= ${min}x ${peerName} (${why})`);
  };
  target('find-id', 'hello-world', hello, 0.5);
  target('find-id', 'Fastify+PostgreSQL', find(PG_NAME, 'find-id'), 1);
  target('find-email', 'Fastify+PostgreSQL', find(PG_NAME, 'find-email'), 1);
  target('insert', 'Fastify+PostgreSQL', find(PG_NAME, 'insert'), 1);
  for (const p of r.planChecks) check(p.ok, p.text);
  const errors = r.rows.filter((x) => x.rounds.some((y) => y.errors + y.non2xx > 0));
  if (errors.length > 0) checks.push(`note  rows with errors or non-2xx answers: ${errors.map((x) => `${x.target} ${x.workload}`).join(', ')}`);
  out.push('### Targets\n', '```', ...checks, '```', '');

  if (r.memoryRows.length > 0) {
    const lines = r.memoryRows.map((m) => {
      const bound = (m.task.cacheBytes + m.task.dirtyBytes) / MiB;
      const growth = m.peakRssMiB - m.baseRssMiB;
      return `${growth <= bound ? 'within' : 'OVER  '}  ${m.task.label}: peak RSS ${fmtInt(m.peakRssMiB)} MiB = ${fmtInt(m.baseRssMiB)} after open + ${fmtInt(growth)}, bound ${fmtInt(bound)} MiB; peak heap ${fmtInt(m.peakHeapMiB)} MiB; after full GC at end: RSS ${fmtInt(m.liveRssMiB)} MiB, heap ${fmtInt(m.liveHeapMiB)} MiB, buffers ${fmtInt(m.liveBuffersMiB)} MiB`;
    });
    out.push('### Memory against the configured bound (reported, not an issue target)\n', '```', ...lines, '```', '');
  }
  return out.join('\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
