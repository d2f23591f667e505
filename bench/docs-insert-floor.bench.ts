// Where the time of insertMany goes, in tetradb, against NeDB's whole insert, on the same
// documents in the same process. Issue 7 asks tetradb's insertMany to run at >= NeDB's rate; this
// probe sets the parts tetradb's insert is made of against the time NeDB takes for all of its own.
//
//   npm --prefix bench run docs-insert-floor -- [--size=100000 (at most 200000)] [--rounds=3]
//
// Every measure loads the same --size documents (bench/lib/documents.ts makeQueryDocument, made
// beforehand) in batches of 1000, each awaited as the documents benchmark awaits it, --rounds
// times into a fresh store or datastore; the median round's time per document is reported. The
// parts are tetradb's own steps, called as docsInsert calls them:
//   - prepareInsert: each document checked (documentFromJson) and encoded (msgpackr);
//   - encodeDocument alone, the encoding of the prepared documents;
//   - store.write of the batches' ops as docsInsert made them (captured from the whole run):
//     the WAL record, the B-tree puts of the document and its two index entries, the WAL append
//     and fdatasync, the checkpoints the load triggers; awaited until durable, as docsInsert is;
//   - walRecordFrame alone, building those records;
//   - the disk: a file appended with a record's size and fdatasynced, per batch.
// What remains of the whole (index keys, duplicate checks, building the ops) is the whole less
// prepareInsert and store.write. NeDB runs as the documents benchmark opens it (in memory, and
// file-backed), with its indexes on email and joined. The engine runs with the server's settings
// (loadConfig), as in the documents benchmark.
import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { encodeDocument } from '../engine/docs/doc-codec.js';
import { docsInsert, prepareInsert } from '../engine/docs/docs-model.js';
import type { Doc } from '../engine/docs/values.js';
import type { BatchOp } from '../engine/tenant/tenant-store.js';
import { walRecordFrame } from '../engine/tenant/wal-record.js';
import { applyHeapGrowth, loadConfig } from '../server/config.js';
import { openDocsEngine, openTetraTenant, tetraSettingsOf, type DocsEngineName } from './lib/docs-engines.js';
import { makeQueryDocument, type QueryDocument } from './lib/documents.js';
import { BATCH_DOCS, COLLECTION } from './lib/docs-workload.js';
import { flagValue, fmtShare, fmtUs, table } from './lib/report.js';

const SIZE = Number(flagValue(process.argv, 'size') ?? 100_000);
const ROUNDS = Number(flagValue(process.argv, 'rounds') ?? 3);
// The probe holds every document (as objects) and every batch's ops in memory, over a kilobyte
// a document beside the engine's own: at 1M documents over a gigabyte, which pushes the process
// past the engine's memory bound, so the memory governor shrinks the page cache to its floor and
// the load measures that instead (78.9 µs a document in such a run, against 41.8 in
// docs-load-probe's 1M load).
const MAX_SIZE = 200_000;
if (!(SIZE > 0 && SIZE <= MAX_SIZE)) {
  console.error(`--size must be 1..${MAX_SIZE}: the probe keeps every document and op in memory; for a 1M load see \`npm --prefix bench run docs-load-probe -- 1000000\``);
  process.exit(2);
}

const server = loadConfig(process.env, []);
applyHeapGrowth(server.heapGrowthPercent);
const settings = tetraSettingsOf(server);

const batches: QueryDocument[][] = [];
for (let from = 0; from < SIZE; from += BATCH_DOCS) {
  const batch: QueryDocument[] = [];
  for (let i = from; i < Math.min(SIZE, from + BATCH_DOCS); i++) batch.push(makeQueryDocument(i));
  batches.push(batch);
}

/** Median over ROUNDS of `round`'s time per document (µs); `round` returns its own milliseconds. */
async function median(round: () => Promise<number>): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    times.push((await round()) * 1000 / SIZE);
    // A turn of the event loop between rounds.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

/** Runs `load` on a fresh tetradb store under a new directory, removed after; returns load's milliseconds. */
async function onFreshStore(load: (store: Awaited<ReturnType<typeof openTetraTenant>>['store']) => Promise<number>): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'docs-insert-floor-'));
  const tenant = await openTetraTenant(dir, settings);
  try {
    return await load(tenant.store);
  } finally {
    await tenant.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

// ---- tetradb ----------------------------------------------------------------------------------
// The whole insert, its ops captured as the store applies them (a warm-up round first).
let captured: BatchOp[][] = [];
const whole = async (capture: boolean): Promise<number> =>
  onFreshStore(async (store) => {
    const ops: BatchOp[][] = [];
    // The batches of documents (the collection's creation is a batch of its own, before).
    if (capture) store.onWrite((_lsn, batch) => ops.push(batch.map((o) => ({ ...o }))));
    const t0 = performance.now();
    for (const batch of batches) await docsInsert(store, COLLECTION, batch).durable;
    const ms = performance.now() - t0;
    if (capture) captured = ops.filter((b) => b.length >= BATCH_DOCS);
    return ms;
  });
await whole(true);
const tetra = {
  whole: await median(() => whole(false)),
  prepare: await median(async () => {
    const t0 = performance.now();
    for (const batch of batches) prepareInsert(COLLECTION, batch);
    return performance.now() - t0;
  }),
  encode: await median(async () => {
    const docs = batches.map((batch) => prepareInsert(COLLECTION, batch).docs);
    const t0 = performance.now();
    for (const batch of docs) for (const doc of batch) encodeDocument(doc as Doc);
    return performance.now() - t0;
  }),
  storage: await median(() =>
    onFreshStore(async (store) => {
      const t0 = performance.now();
      for (const ops of captured) await store.write(ops);
      return performance.now() - t0;
    }),
  ),
  frame: await median(async () => {
    const t0 = performance.now();
    for (let i = 0; i < captured.length; i++) walRecordFrame(i + 1, captured[i]!);
    return performance.now() - t0;
  }),
};
const recordBytes = Math.round(captured.reduce((n, ops, i) => n + walRecordFrame(i + 1, ops).length, 0) / captured.length);
const disk = await median(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'docs-insert-floor-'));
  const fd = openSync(join(dir, 'log'), 'w');
  const record = Buffer.alloc(recordBytes, 0x5a);
  try {
    const t0 = performance.now();
    for (let i = 0; i < captured.length; i++) {
      writeSync(fd, record);
      fdatasyncSync(fd);
    }
    return performance.now() - t0;
  } finally {
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
});

// ---- NeDB ---------------------------------------------------------------------------------------
async function nedbLoad(name: DocsEngineName): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'docs-insert-floor-'));
  const engine = await openDocsEngine(name, dir, settings);
  try {
    const t0 = performance.now();
    for (const batch of batches) await engine.insertMany(batch);
    return performance.now() - t0;
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
await nedbLoad('nedb');
const nedb = await median(() => nedbLoad('nedb'));
const nedbFile = await median(() => nedbLoad('nedb-file'));

// ---- Report -----------------------------------------------------------------------------------
const rest = Math.max(0, tetra.whole - tetra.prepare - tetra.storage);
console.log(`# insertMany, part by part (${SIZE.toLocaleString('en-US')} documents in batches of ${BATCH_DOCS}, median of ${ROUNDS} rounds)\n`);
console.log(
  table(
    ['engine', 'part', 'per document', 'share of its insert'],
    [
      ['tetradb', 'docsInsert, each batch awaited until durable: the whole operation', fmtUs(tetra.whole), '100%'],
      ['tetradb', 'prepareInsert: each document checked and encoded', fmtUs(tetra.prepare), fmtShare(tetra.prepare, tetra.whole)],
      ['tetradb', '  of which the encoding (encodeDocument, msgpackr) alone', fmtUs(tetra.encode), fmtShare(tetra.encode, tetra.whole)],
      ['tetradb', "store.write of the batches' ops, awaited until durable: WAL record, three B-tree puts, WAL append + fdatasync, checkpoints", fmtUs(tetra.storage), fmtShare(tetra.storage, tetra.whole)],
      ['tetradb', '  of which building the WAL records (walRecordFrame) alone', fmtUs(tetra.frame), fmtShare(tetra.frame, tetra.whole)],
      ['tetradb', `  of which the disk alone: ${(recordBytes / 1024).toFixed(0)} KiB appended + fdatasync per batch`, fmtUs(disk), fmtShare(disk, tetra.whole)],
      ['tetradb', 'the rest: index keys, duplicate checks, the ops (the whole less the two above)', fmtUs(rest), fmtShare(rest, tetra.whole)],
      ['nedb', 'insertAsync, in memory: the whole operation', fmtUs(nedb), '100%'],
      ['nedb-file', 'insertAsync, file-backed (appended, no fsync): the whole operation', fmtUs(nedbFile), '100%'],
    ],
    2,
  ),
);
console.log('');
console.log(
  table(
    ['', 'per document', "NeDB's (in memory) insert time ÷ this"],
    [
      ["NeDB's insert (in memory): the issue's target for tetradb", fmtUs(nedb), '1.00x'],
      ["NeDB's insert (file-backed)", fmtUs(nedbFile), `${(nedb / nedbFile).toFixed(2)}x`],
      ["tetradb's insert now", fmtUs(tetra.whole), `${(nedb / tetra.whole).toFixed(2)}x`],
      ["tetradb's storage write alone (the ops made, the document encoded)", fmtUs(tetra.storage), `${(nedb / tetra.storage).toFixed(2)}x`],
      ["tetradb's check and encoding alone", fmtUs(tetra.prepare), `${(nedb / tetra.prepare).toFixed(2)}x`],
    ],
  ),
);
console.log(
  `\nThe target leaves ${fmtUs(nedb)} a document. tetradb's storage write of a document already encoded, with its index entries made, takes ${fmtUs(tetra.storage)} (${fmtShare(tetra.storage, nedb)} of it); checking and encoding it, ${fmtUs(tetra.prepare)} more (${fmtShare(tetra.prepare, nedb)}).`,
);
