// Where the time of one find by indexed equality goes, in tetradb and in NeDB, on the same
// documents in the same process: the whole operation and each part of it timed alone. Issue 7
// asks tetradb's find by email to run at >= 5x in-memory NeDB's; this probe sets the parts such a
// find is made of against the time that target leaves a call.
//
//   npm --prefix bench run docs-floor -- [--size=100000] [--ms=1500] [--rounds=3]
//
// Each part runs in a closed loop over the same random picks as the documents benchmark
// (bench/lib/docs-workload.ts queryArgs 'find-email'), --rounds times for --ms each, and the
// median round's time per call is reported. tetradb's parts are the operation's own steps, called
// as it calls them (the same trees, keys and decoder): the index entry, the document's bytes by
// primary key, their decode, an async call. NeDB's are its AVL index lookup
// (`indexes.email.getMatching`) and its copy of the document (`model.deepCopy`), what its findAsync
// does before its cursor and executor. The engine runs with the server's settings (loadConfig), as
// in the documents benchmark; NeDB in memory, as it runs there. A part timed alone has the CPU's
// caches to itself (the index loop touches only index pages, the primary loop only the documents'
// pages), so the parts add up to less than the operation: together they share those caches.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { readCollection, docsTree, indexTree } from '../engine/docs/catalog.js';
import { decodeDocumentAt } from '../engine/docs/doc-codec.js';
import { directed, indexComponent } from '../engine/docs/index-key.js';
import { docsFind, docsInsert } from '../engine/docs/docs-model.js';
import { ValueRun } from '../engine/storage/btree-node.js';
import { keyPrefixRange } from '../engine/storage/key-codec.js';
import { applyHeapGrowth, loadConfig } from '../server/config.js';
import { openTetraTenant, tetraSettingsOf } from './lib/docs-engines.js';
import { makeQueryDocument, type QueryDocument } from './lib/documents.js';
import { COLLECTION, FIND_LIMIT, queryArgs } from './lib/docs-workload.js';
import { flagValue, fmtShare, fmtUs, table } from './lib/report.js';

const SIZE = Number(flagValue(process.argv, 'size') ?? 100_000);
const MS = Number(flagValue(process.argv, 'ms') ?? 1500);
const ROUNDS = Number(flagValue(process.argv, 'rounds') ?? 3);
const BATCH = 1000;

/** Median over rounds of the time per call (µs) of `call` over `n` picks, run for MS each. */
async function timed(n: number, call: (i: number) => unknown): Promise<number> {
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let calls = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < MS) {
      for (let k = 0; k < 1000; k++) {
        const out = call(calls++ % n);
        if (typeof (out as { then?: unknown } | undefined)?.then === "function") await out;
      }
    }
    rounds.push(((performance.now() - t0) * 1000) / calls);
    // A turn of the event loop between rounds, as between requests.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return rounds.sort((a, b) => a - b)[Math.floor(rounds.length / 2)]!;
}

const server = loadConfig(process.env, []);
applyHeapGrowth(server.heapGrowthPercent);
const settings = tetraSettingsOf(server);
const picks = queryArgs('find-email', SIZE).map((q) => (q as { email: string }).email);

// ---- tetradb ----------------------------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'docs-floor-'));
const tenant = await openTetraTenant(dir, settings);
const store = tenant.store;
for (let from = 0; from < SIZE; from += BATCH) {
  const docs: QueryDocument[] = [];
  for (let i = from; i < Math.min(SIZE, from + BATCH); i++) docs.push(makeQueryDocument(i));
  await docsInsert(store, COLLECTION, docs).durable;
}
await store.checkpoint();
const info = readCollection(store, COLLECTION)!;
const emailIndex = info.indexes.find((i) => i.fields.length === 1 && i.fields[0]!.path === 'email')!;
const primary = docsTree(info);
const emailTree = indexTree(info, emailIndex);
const ranges = picks.map((email) => {
  const { start, end } = keyPrefixRange([directed(indexComponent(email).part, 1)]);
  return end === undefined ? { gte: start } : { gte: start, lt: end };
});
// The primary keys the index gives for each pick (the index's values), found once beforehand.
const pks = ranges.map((range) => {
  const out: Buffer[] = [];
  store.valuesNow(emailTree, range, 16, out);
  if (out.length !== 1) throw new Error(`expected one entry per email, found ${out.length}`);
  return out[0]!;
});
const run = new ValueRun();
for (const pk of pks.slice(0, 10)) {
  if (!store.getInto(primary, pk, run)) throw new Error('a document the index names is missing');
}
const out: Buffer[] = [];

const tetra = {
  find: await timed(picks.length, (i) => docsFind(store, COLLECTION, { filter: { email: picks[i]! }, limit: FIND_LIMIT })),
  index: await timed(picks.length, (i) => {
    out.length = 0;
    store.valuesNow(emailTree, ranges[i]!, 16, out);
    return undefined;
  }),
  primary: await timed(picks.length, (i) => {
    store.getInto(primary, pks[i]!, run);
    return undefined;
  }),
  primaryAndDecode: await timed(picks.length, (i) => {
    store.getInto(primary, pks[i]!, run);
    decodeDocumentAt(run.bufs[0]!, run.starts[0]!, run.starts[0]! + run.lengths[0]!);
    return undefined;
  }),
  asyncCall: await timed(picks.length, (i) => (async () => i)()),
};
await tenant.close();
rmSync(dir, { recursive: true, force: true });

// ---- NeDB (in memory) -------------------------------------------------------------------------
// As the documents benchmark opens it (bench/lib/docs-engines.ts): inMemoryOnly, an index on
// email; its own parts are reached through the datastore.
const requireCjs = createRequire(import.meta.url);
const Datastore = requireCjs('@seald-io/nedb') as new (o: object) => {
  loadDatabaseAsync(): Promise<void>;
  ensureIndexAsync(o: object): Promise<void>;
  insertAsync(d: object[]): Promise<unknown>;
  findAsync(q: object): { limit(n: number): Promise<unknown[]> };
  indexes: Record<string, { getMatching(v: unknown): object[] }>;
};
const model = requireCjs('@seald-io/nedb/lib/model.js') as { deepCopy(o: unknown): unknown };
const raw = new Datastore({ inMemoryOnly: true });
await raw.loadDatabaseAsync();
await raw.ensureIndexAsync({ fieldName: 'email' });
for (let from = 0; from < SIZE; from += BATCH) {
  const docs: QueryDocument[] = [];
  for (let i = from; i < Math.min(SIZE, from + BATCH); i++) docs.push(makeQueryDocument(i));
  await raw.insertAsync(docs);
}
const found = picks.map((email) => raw.indexes.email!.getMatching(email)[0]!);
const nedbTimes = {
  find: await timed(picks.length, (i) => raw.findAsync({ email: picks[i]! }).limit(FIND_LIMIT)),
  index: await timed(picks.length, (i) => raw.indexes.email!.getMatching(picks[i]!)),
  copy: await timed(picks.length, (i) => model.deepCopy(found[i]!)),
};

// ---- Report -----------------------------------------------------------------------------------
const decode = Math.max(0, tetra.primaryAndDecode - tetra.primary);
const parts = tetra.index + tetra.primaryAndDecode + tetra.asyncCall;
const nedbParts = nedbTimes.index + nedbTimes.copy;
const budget = nedbTimes.find / 5;
console.log(`# Find by indexed equality, part by part (${SIZE.toLocaleString('en-US')} documents, median of ${ROUNDS} rounds of ${MS} ms)\n`);
console.log(
  table(
    ['engine', 'part', 'per call', 'share of its find'],
    [
      ['tetradb', "docsFind({email}) with the benchmark's limit: the whole operation", fmtUs(tetra.find), '100%'],
      ['tetradb', "the email index's entry: a B-tree seek and its value (the primary key)", fmtUs(tetra.index), fmtShare(tetra.index, tetra.find)],
      ['tetradb', 'the document by primary key: a B-tree descent to its bytes in the page', fmtUs(tetra.primary), fmtShare(tetra.primary, tetra.find)],
      ['tetradb', 'decoding those bytes into the document returned (msgpackr, in place)', fmtUs(decode), fmtShare(decode, tetra.find)],
      ['tetradb', 'an async call and its await', fmtUs(tetra.asyncCall), fmtShare(tetra.asyncCall, tetra.find)],
      ['nedb', 'findAsync({email}).limit(): the whole operation', fmtUs(nedbTimes.find), '100%'],
      ['nedb', 'its AVL index lookup (indexes.email.getMatching)', fmtUs(nedbTimes.index), fmtShare(nedbTimes.index, nedbTimes.find)],
      ['nedb', 'its copy of the document returned (model.deepCopy)', fmtUs(nedbTimes.copy), fmtShare(nedbTimes.copy, nedbTimes.find)],
    ],
    2,
  ),
);
console.log('');
console.log(
  table(
    ['', 'per call', "NeDB's find time ÷ this"],
    [
      ["NeDB's find (in memory)", fmtUs(nedbTimes.find), '1.00x'],
      ["the issue's target for tetradb: 5x NeDB's rate", fmtUs(budget), '5.00x'],
      ["tetradb's find now", fmtUs(tetra.find), `${(nedbTimes.find / tetra.find).toFixed(2)}x`],
      ["tetradb's parts as built now, each timed alone: index entry + document by key + decode + async call", fmtUs(parts), `${(nedbTimes.find / parts).toFixed(2)}x`],
      ['the decode of the returned document alone', fmtUs(decode), `${(nedbTimes.find / decode).toFixed(2)}x`],
      ["NeDB's own lookup and copy, without its cursor and executor", fmtUs(nedbParts), `${(nedbTimes.find / nedbParts).toFixed(2)}x`],
    ],
  ),
);
console.log(
  `\nThe target leaves ${fmtUs(budget)} a call. Decoding the one document returned takes ${fmtUs(decode)} (${fmtShare(decode, budget)} of it); NeDB's own index lookup and copy take ${fmtUs(nedbParts)} (${fmtShare(nedbParts, budget)}).`,
);
