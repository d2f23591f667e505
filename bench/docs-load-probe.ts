// The documents benchmark's tetradb load alone, reported as it goes: where a large load spends its
// time and memory (docs/benchmarks.md, "Night of 2026-11-25: where a 1M-document load spends its time").
//
//   npm --prefix bench run docs-load-probe -- [documents=1000000] [--indexes=email,joined]
//        [--live] [--gc-after-checkpoint]
//
// A TenantStore opened as the server opens a tenant (server/config.ts as `npm start` reads it:
// cache, dirty budget, fsync, heap growth; TETRA_* in the environment apply), the indexes created,
// then makeQueryDocument documents inserted in batches of 1000, each awaited until durable, as
// docs.bench.ts loads them. Every 100k documents: documents/s and CPU per document over the last
// 100k, RSS above the RSS after open, cache and dirty bytes, checkpoints so far, the page file's
// size and garbage, and how long a compaction has run. At the end: the peak RSS and what the heap
// and buffers held at that moment.
// --live: a full collection (twice) before each report, which shows what is live but changes
//   when V8 collects, so the peak of such a run is not the peak of a normal one.
// --gc-after-checkpoint: a full collection after every checkpoint (an experiment: it pauses the
//   event loop for as long as the collection takes).
// PROBE_REPORT_EVERY=N in the environment: report every N documents instead of 100k.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { docsCreateIndex, docsInsert } from '../engine/docs/index.js';
import { PageCache, type TreeNode } from '../engine/storage/index.js';
import { TenantStore } from '../engine/tenant/index.js';
import { applyHeapGrowth, loadConfig, startMemoryGovernor } from '../server/config.js';
import { makeQueryDocument } from './lib/documents.js';
import { flagValue } from './lib/report.js';

const MiB = 2 ** 20;
const BATCH = 1000;
const REPORT_EVERY = Number(process.env.PROBE_REPORT_EVERY ?? 100_000);
const argv = process.argv.slice(2);
const size = Number(argv.find((a) => !a.startsWith('--')) ?? 1_000_000);
const indexes = (flagValue(argv, 'indexes') ?? 'email,joined').split(',').filter(Boolean);
const live = argv.includes('--live');
const gcAfterCheckpoint = argv.includes('--gc-after-checkpoint');

const server = loadConfig(process.env, []);
applyHeapGrowth(server.heapGrowthPercent);
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const dir = mkdtempSync(join(tmpdir(), 'docs-load-probe-'));
const cache = new PageCache<TreeNode>(server.cacheBytes, { dirtyBytes: server.dirtyBytes });
const store = await TenantStore.open(dir, { cache, fsync: server.fsync, snapshotMaxAgeMs: server.snapshotMaxAgeMs });
for (const field of indexes) await (await docsCreateIndex(store, 'people', { [field]: 1 })).durable;
console.log(`${size} documents, indexes ${indexes.join(', ') || 'none'}; cache ${server.cacheBytes / MiB} MiB, dirty budget ${server.dirtyBytes / MiB} MiB, fsync ${server.fsync}, heap growth ${server.heapGrowthPercent}%`);

let checkpoints = 0;
let gcMs = 0;
store.onCheckpoint(() => {
  checkpoints++;
  if (gcAfterCheckpoint) {
    const t = performance.now();
    gc();
    gcMs += performance.now() - t;
  }
});
let compactingMs = 0;
const compactionWatch = setInterval(() => {
  if (store.stats().compacting) compactingMs += 100;
}, 100);

const mib = (bytes: number): string => (bytes / MiB).toFixed(0);
// As server/app.ts starts it once the stores are open (TETRA_MEMORY_CHECK_MS=0: none).
const governor = startMemoryGovernor(cache, server);
const base = process.memoryUsage();
// Between batches too: a spike inside a checkpoint or compaction is missed by the batch-end samples.
let spike = 0;
let atSpike = '';
const spikeWatch = setInterval(() => {
  const m = process.memoryUsage();
  if (m.rss - base.rss > spike) {
    spike = m.rss - base.rss;
    atSpike = `heap ${mib(m.heapTotal)} committed / ${mib(m.heapUsed)} used, buffers ${mib(m.arrayBuffers)}, external ${mib(m.external)}, cache ${mib(cache.bytes)}, dirty ${mib(cache.dirty.bytes)} MiB, compacting ${store.stats().compacting}`;
  }
}, 20);
let peak = 0;
let atPeak = '';
const start = performance.now();
let lastAt = start;
let lastCpu = process.cpuUsage();
for (let from = 0; from < size; from += BATCH) {
  const docs = [];
  for (let i = from; i < Math.min(size, from + BATCH); i++) docs.push(makeQueryDocument(i));
  await docsInsert(store, 'people', docs).durable;
  const m = process.memoryUsage();
  if (m.rss - base.rss > peak) {
    peak = m.rss - base.rss;
    atPeak = `heap ${mib(m.heapTotal)} committed / ${mib(m.heapUsed)} used, buffers ${mib(m.arrayBuffers)}, cache ${mib(cache.bytes)}, dirty ${mib(cache.dirty.bytes)} MiB`;
  }
  const done = Math.min(size, from + BATCH);
  if (done % REPORT_EVERY !== 0 && done !== size) continue;
  let liveNote = '';
  if (live) {
    gc();
    gc();
    const l = process.memoryUsage();
    liveNote = `; live: heap ${mib(l.heapUsed)}, buffers ${mib(l.arrayBuffers)}, RSS +${mib(l.rss - base.rss)} MiB`;
  }
  const now = performance.now();
  const cpu = process.cpuUsage(lastCpu);
  const docsSince = done % REPORT_EVERY === 0 ? REPORT_EVERY : done % REPORT_EVERY;
  const stats = store.stats();
  console.log(
    `${done.toLocaleString('en-US')}: ${Math.round(docsSince / ((now - lastAt) / 1000)).toLocaleString('en-US')} docs/s, ${((cpu.user + cpu.system) / docsSince).toFixed(1)} µs CPU/doc, ` +
      `RSS +${mib(m.rss - base.rss)} MiB, cache ${mib(cache.bytes)} (limit ${mib(cache.limit)}), dirty ${mib(cache.dirty.bytes)} (limit ${mib(cache.dirty.limit)}) MiB, cache hits ${cache.hits} misses ${cache.misses}, ` +
      `checkpoints ${checkpoints}, file ${mib(stats.pageFileBytes)} MiB (garbage ${stats.garbageRatio.toFixed(2)}), compacting ${(compactingMs / 1000).toFixed(1)} s${liveNote}`,
  );
  lastAt = now;
  lastCpu = process.cpuUsage();
}
const seconds = (performance.now() - start) / 1000;
clearInterval(compactionWatch);
clearInterval(spikeWatch);
console.log(`loaded in ${seconds.toFixed(1)} s: ${Math.round(size / seconds).toLocaleString('en-US')} docs/s; peak RSS ${mib(peak)} MiB above open (${atPeak})${gcAfterCheckpoint ? `; forced collections ${gcMs.toFixed(0)} ms` : ''}`);
console.log(`peak RSS sampled every 20 ms: ${mib(spike)} MiB above open (${atSpike})`);
if (governor !== undefined) {
  const idle = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  for (let t = 0; t < 3; t++) {
    await idle(1000);
    const m = process.memoryUsage();
    const g = governor.state;
    console.log(`idle ${t + 1} s after the load: RSS +${mib(m.rss - base.rss)} MiB (heap ${mib(m.heapTotal)} committed / ${mib(m.heapUsed)} used, external ${mib(m.external)}); governor: growth ${mib(g.growthBytes)}, free ${mib(g.freeBytes)}, pending ${mib(g.pendingBytes)}, readings ${g.readings}, cache ${mib(cache.bytes)} (limit ${mib(g.cacheLimitBytes)}), dirty limit ${mib(g.dirtyLimitBytes)}, heap growth held: ${g.tightHeap}`);
  }
  const g = governor.state;
  console.log(`memory governor (every ${server.memoryCheckMs} ms): peak growth at its readings ${mib(g.peakGrowthBytes)} MiB against a bound of ${mib(g.boundBytes)}; ${g.cuts} cuts in ${g.readings} readings; cache limit ${mib(g.cacheLimitBytes)}, dirty limit ${mib(g.dirtyLimitBytes)} MiB, heap growth held: ${g.tightHeap}`);
  governor.stop();
}
await store.close();
rmSync(dir, { recursive: true, force: true });
