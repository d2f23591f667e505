// One tenant's long scans against another tenant's point reads: two tenant stores sharing one
// page cache, as the server opens them. Tenant A has a small hot collection and reads documents by
// _id from it; tenant B has a collection a few times the cache and runs collection scans (an
// unindexed filter that matches nothing, so every scan reads the whole collection). A's reads are
// timed alone, then while B scans. Before scans were bounded in the cache (docs/architecture.md,
// Memory), each of B's scans pushed A's pages out and A read them from the file again.
//
//   npm --prefix bench run scan-isolation [-- --cache-mib=32 --scanned-docs=300000 --hot-docs=20000 --seconds=4]
//
// The cache is smaller than the default 256 MiB (TETRA_CACHE_BYTES) so that the scanned
// collection (~110 MiB of pages) is several times the cache within a short load; the dirty budget, fsync and the
// memory governor are `npm start`'s (server/config.ts; TETRA_* in the environment apply).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { docsCreateIndex, docsFind, docsInsert } from '../engine/docs/index.js';
import { PageCache, type TreeNode } from '../engine/storage/index.js';
import { TenantStore } from '../engine/tenant/index.js';
import { loadConfig, startMemoryGovernor } from '../server/config.js';
import { docId, makeQueryDocument } from './lib/documents.js';
import { flagValue, fmtInt, machineLine, table } from './lib/report.js';
import { startSampler, type SamplerResult } from './lib/sampler.js';

const argv = process.argv.slice(2);
const cacheMiB = Number(flagValue(argv, 'cache-mib') ?? 32);
const scannedDocs = Number(flagValue(argv, 'scanned-docs') ?? 300_000);
const hotDocs = Number(flagValue(argv, 'hot-docs') ?? 20_000);
const seconds = Number(flagValue(argv, 'seconds') ?? 4);
const server = loadConfig(process.env, []);
const MiB = 2 ** 20;

const root = mkdtempSync(join(tmpdir(), 'scan-isolation-'));
const cache = new PageCache<TreeNode>(cacheMiB * MiB, { dirtyBytes: server.dirtyBytes });
const open = (name: string): Promise<TenantStore> => TenantStore.open(join(root, name), { cache, fsync: server.fsync, snapshotMaxAgeMs: server.snapshotMaxAgeMs });
const hot = await open('hot');
const scanned = await open('scanned');

async function load(store: TenantStore, count: number): Promise<void> {
  await (await docsCreateIndex(store, 'people', { email: 1 })).durable;
  for (let from = 0; from < count; from += 1000) {
    const docs = [];
    for (let i = from; i < Math.min(count, from + 1000); i++) docs.push(makeQueryDocument(i));
    await docsInsert(store, 'people', docs).durable;
  }
  await store.checkpoint();
}

const loadStart = performance.now();
await load(hot, hotDocs);
await load(scanned, scannedDocs);
const loadSeconds = (performance.now() - loadStart) / 1000;
const governor = startMemoryGovernor(cache, server);

/**
 * Reads of tenant A for `ms`, one at a time, each after an event-loop turn (as requests arrive
 * between the chunks of B's scan): ops/s, p50/p99 in µs, cache misses per 1000 reads, and the
 * process's memory and event-loop delay sampled while they ran (every 50 ms).
 */
async function hotReads(ms: number, seed: number): Promise<{ ops: number; p50: number; p99: number; missesPerK: number; sampled: SamplerResult }> {
  const sampler = startSampler(50);
  const latencies: number[] = [];
  const missesBefore = cache.misses;
  let i = seed;
  const end = performance.now() + ms;
  while (performance.now() < end) {
    i = (i * 1_103_515_245 + 12_345) % 2_147_483_648;
    await new Promise((resolve) => setImmediate(resolve));
    const t = performance.now();
    const { documents } = await docsFind(hot, 'people', { filter: { _id: docId(i % hotDocs) } });
    latencies.push((performance.now() - t) * 1000);
    if (documents.length !== 1) throw new Error(`hot document ${i % hotDocs} not found`);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { ops: latencies.length / (ms / 1000), p50: at(0.5), p99: at(0.99), missesPerK: ((cache.misses - missesBefore) * 1000) / latencies.length, sampled: sampler.stop() };
}

// Warm A's pages: every hot document read once, then a short timed pass.
for (let i = 0; i < hotDocs; i++) await docsFind(hot, 'people', { filter: { _id: docId(i) } });
await hotReads(500, 1);
const alone = await hotReads(seconds * 1000, 2);

/** Collection scans of tenant B, back to back, until `stop()`; resolves when the last one ends. */
function scanLoop(): { stop: () => Promise<{ scans: number; msEach: number }> } {
  let scanning = true;
  let scans = 0;
  let ms = 0;
  const loop = (async () => {
    while (scanning) {
      const t = performance.now();
      // `n` has no index and no document has a negative one: a scan of the whole collection.
      const { documents } = await docsFind(scanned, 'people', { filter: { n: { $lt: 0 } } });
      if (documents.length !== 0) throw new Error('the scan matched documents');
      ms += performance.now() - t;
      scans++;
    }
  })();
  return {
    stop: async () => {
      scanning = false;
      await loop;
      return { scans, msEach: ms / Math.max(1, scans) };
    },
  };
}

// A reads while B scans (misses are not A's alone here: the cache counts B's too).
const concurrent = scanLoop();
const during = await hotReads(seconds * 1000, 3);
const duringScans = await concurrent.stop();
await hotReads(seconds * 1000, 4); // A's pages back in the cache
// A idle while B scans: does A find its pages when it comes back?
const whileIdle = scanLoop();
await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const idleScans = await whileIdle.stop();
const back = await hotReads(1000, 5);
const afterThat = await hotReads(seconds * 1000, 6);

governor?.stop();
await hot.close();
await scanned.close();
rmSync(root, { recursive: true, force: true });

const us = (v: number): string => (v >= 1000 ? `${(v / 1000).toFixed(2)} ms` : `${v.toFixed(1)} µs`);
const row = (what: string, r: typeof alone, misses = true): string[] => [
  what,
  fmtInt(r.ops),
  (r.ops / alone.ops).toFixed(2) + 'x',
  us(r.p50),
  us(r.p99),
  misses ? r.missesPerK.toFixed(1) : '-',
  `${r.sampled.loop.p99Ms.toFixed(1)} / ${r.sampled.loop.maxMs.toFixed(1)}`,
  `${r.sampled.peakRssMiB.toFixed(0)} / ${r.sampled.peakHeapMiB.toFixed(0)}`,
];
console.log(`## One tenant's scans against another's point reads (${((performance.now() - loadStart) / 60_000).toFixed(1)} min)\n`);
console.log(`- ${machineLine()}`);
console.log(
  `- One PageCache of ${cacheMiB} MiB for both tenants (smaller than the 256 MiB default, so the scanned collection is several times the cache), dirty budget ${server.dirtyBytes / MiB} MiB, fsync ${server.fsync}, the memory governor as npm start runs it. Tenant A: ${fmtInt(hotDocs)} documents, find by _id (one caller, awaited, an event-loop turn before each). Tenant B: ${fmtInt(scannedDocs)} documents (lib/documents.ts makeQueryDocument, ~330 bytes each), collection scans of an unindexed filter that matches nothing, back to back. Load ${loadSeconds.toFixed(1)} s.\n`,
);
console.log(
  table(
    ['tenant A, find by _id', 'finds/s', 'of alone', 'p50', 'p99', 'cache misses per 1000 finds', 'event loop p99 / max ms', 'peak RSS / heap MiB'],
    [
      row('alone', alone),
      row(`while tenant B scans (${duringScans.scans} scans, ${duringScans.msEach.toFixed(0)} ms each; misses are B's too)`, during, false),
      row(`first second back, after ${seconds} s idle while B scanned (${idleScans.scans} scans)`, back),
      row(`the ${seconds} s after that`, afterThat),
    ],
  ),
);
