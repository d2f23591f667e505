// Documents (MQL) in process, side by side in one run (issue 7): tetradb's document model
// (engine/docs: docsInsert, docsFind, docsUpdate over a TenantStore opened as `npm start` opens a
// tenant) against LokiJS (binary indexes), NeDB (@seald-io/nedb, in memory and file-backed) and
// mingo over a plain array. Every engine gets the same documents (lib/documents.ts
// makeQueryDocument: ~330 bytes of JSON, _id string, email, n, name, tags, profile {age, city},
// bio, joined, logins) with indexes on email and joined where it has indexes, loaded through
// insertMany in batches of 1000; then find by _id, by email (indexed equality), joined in a range
// (indexed, ~100 documents), n in a range (no index: a scan, 10 documents), and updateOne by _id
// ($set + $inc) from 1 and 16 callers (lib/docs-workload.ts). Each engine and size runs in a
// forked worker (docs-worker.ts) so RSS and GC are its own. Every engine answers a sample of
// every query first, checked against the reference (mingo, which scans: no index to get wrong);
// a difference stops the run before that engine is timed.
//
//   npm --prefix bench run docs-inprocess                 10k, 100k and 1M documents, 2 s per operation
//   npm --prefix bench run docs-inprocess -- --quick      10k documents, 0.5 s per operation
//   node --import ./lib/ts-register.mjs docs.bench.ts [--quick] [--sizes=10000,100000] [--engines=tetradb,lokijs,...]
//        [--seconds=S] [--max-load-seconds=S] [--warm-docs=N]
//
// Before its timed load, each engine loads --warm-docs other documents (default 10,000; 0: none)
// into a throwaway instance of itself, deleted before the timed one opens: the load is then timed
// on compiled code, as in a running server and as every timed query is (each after a warm-up).
// The first thousand documents of a cold process cost several times the next (JIT compilation),
// which at 10k decided most of the load's rate.
//
// tetradb's settings come from server/config.ts as `npm start` reads them (defaults: 256 MiB page
// cache, 64 MiB dirty budget, fsync=batch; TETRA_* in the environment apply, as they would there).
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../server/config.js';
import type { DocsTask, DocsWorkerResult, OpResult } from './docs-worker.js';
import { DOCS_ENGINES, ENGINE_NOTES, tetraSettingsOf, type DocsEngineName, type TetraSettings } from './lib/docs-engines.js';
import { FIND_LIMIT, INDEXED_FIELDS, opLabel, QUERY_NAMES, RANGE_DOCS, SCAN_DOCS, type OpName } from './lib/docs-workload.js';
import { flagValue, fmtCount, fmtInt, fmtNum, fmtRatio, fmtUs, growthTable, machineLine, MiB, packageVersion, runWorker, scratchDir, table } from './lib/report.js';
import type { SampleCheck } from './lib/sql-workload.js';

const REFERENCE: DocsEngineName = 'mingo';
const UPDATE_CALLERS = [1, 16];
const OPS: OpName[] = ['insertMany', ...QUERY_NAMES, 'aggregate', ...UPDATE_CALLERS.map((c) => `update-${c}` as const), 'replace', 'positional'];
const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

interface Config {
  quick: boolean;
  sizes: number[];
  engines: DocsEngineName[];
  seconds: number;
  maxLoadSeconds: number;
  warmDocs: number;
  /** An engine whose RSS would pass this at the next size (extrapolated) is skipped there. */
  maxRssMiB: number;
  tetra: TetraSettings;
}

function parseArgs(argv: string[]): Config {
  const quick = argv.includes('--quick');
  const value = (name: string): string | undefined => flagValue(argv, name);
  // What `npm start` would run with: its defaults, overridden by TETRA_* as the server reads them.
  const server = loadConfig(process.env, []);
  const config: Config = {
    quick,
    sizes: (value('sizes') ?? (quick ? '10000' : '10000,100000,1000000')).split(',').map(Number),
    engines: (value('engines')?.split(',') ?? [...DOCS_ENGINES]) as DocsEngineName[],
    seconds: Number(value('seconds') ?? (quick ? 0.5 : 2)),
    maxLoadSeconds: Number(value('max-load-seconds') ?? (quick ? 60 : 240)),
    warmDocs: Number(value('warm-docs') ?? 10_000),
    maxRssMiB: Math.floor(totalmem() / MiB / 2),
    tetra: tetraSettingsOf(server),
  };
  const positive = (n: number): boolean => Number.isInteger(n) && n > 0;
  if (!config.sizes.every(positive) || !config.engines.every((e) => DOCS_ENGINES.includes(e)) || !(config.seconds > 0) || !(config.maxLoadSeconds > 0) || !(Number.isInteger(config.warmDocs) && config.warmDocs >= 0)) {
    throw new Error(`usage: docs.bench.ts [--quick] [--sizes=N,N] [--engines=${DOCS_ENGINES.join(',')}] [--seconds=S] [--max-load-seconds=S] [--warm-docs=N]`);
  }
  // The reference answers first, so every other engine is checked before it is timed.
  config.engines.sort((a, b) => (a === REFERENCE ? -1 : b === REFERENCE ? 1 : DOCS_ENGINES.indexOf(a) - DOCS_ENGINES.indexOf(b)));
  return config;
}

/** Why `engine` should not run at `size`, judged from its figures at the previous size, if any. */
function skipReason(config: Config, previous: DocsWorkerResult | undefined, size: number): string | undefined {
  if (previous === undefined) return undefined;
  if (!previous.ok) return `${previous.reason.startsWith('skipped') ? 'skipped' : 'failed'} at ${fmtCount(previous.size)} documents`;
  const scale = size / previous.size;
  const loadSeconds = previous.loadSeconds * scale;
  if (loadSeconds > config.maxLoadSeconds) {
    return `loading would take ~${fmtInt(loadSeconds)} s at its ${fmtCount(previous.size)}-document rate (${fmtInt(previous.size / previous.loadSeconds)} docs/s), over the ${config.maxLoadSeconds} s limit (--max-load-seconds)`;
  }
  const rss = previous.peakRssMiB * scale;
  if (rss > config.maxRssMiB) return `its RSS would reach ~${fmtInt(rss)} MiB (${fmtInt(previous.peakRssMiB)} MiB at ${fmtCount(previous.size)}), over half the machine's memory (${fmtInt(config.maxRssMiB)} MiB)`;
  return undefined;
}

async function runAll(config: Config, root: string): Promise<DocsWorkerResult[]> {
  const results: DocsWorkerResult[] = [];
  for (const size of config.sizes) {
    let expected: { engine: DocsEngineName; checks: SampleCheck[] } | undefined;
    for (const engine of config.engines) {
      const previous = [...results].reverse().find((r) => r.engine === engine);
      const skip = skipReason(config, previous, size);
      if (skip !== undefined && engine !== 'tetradb') {
        process.stderr.write(`  ${engine} ${fmtCount(size)}: skipped: ${skip}\n`);
        results.push({ ok: false, engine, size, reason: `skipped: ${skip}` });
        continue;
      }
      const task: DocsTask = {
        engine,
        dir: join(root, `${engine}-${size}`),
        size,
        seconds: config.seconds,
        maxLoadSeconds: config.maxLoadSeconds,
        warmDocs: config.warmDocs,
        tetra: config.tetra,
        updateCallers: UPDATE_CALLERS,
        ...(expected === undefined ? {} : { expected }),
      };
      let result: DocsWorkerResult;
      try {
        result = await runWorker<DocsWorkerResult>(here('./docs-worker.ts'), task, `${engine}, ${fmtCount(size)} documents`);
      } catch (err) {
        result = { ok: false, engine, size, reason: `worker failed: ${err instanceof Error ? err.message : String(err)}` };
      }
      // Timings of different answers mean nothing: stop.
      if (!result.ok && result.reason.startsWith('results differ')) throw new Error(result.reason);
      if (!result.ok) process.stderr.write(`    ${engine}: n/a: ${result.reason}\n`);
      else expected ??= { engine, checks: result.checks };
      results.push(result);
    }
  }
  return results;
}

// ---- Output -------------------------------------------------------------------------------------

function versions(): string {
  const version = packageVersion;
  return `lokijs ${version('lokijs')}, @seald-io/nedb ${version('@seald-io/nedb')}, mingo ${version('mingo')}, benchmark ${version('benchmark')}`;
}

function render(config: Config, results: DocsWorkerResult[], minutes: number, machine: string): string {
  const out: string[] = [];
  const find = (engine: DocsEngineName, size: number): DocsWorkerResult | undefined => results.find((r) => r.engine === engine && r.size === size);
  const opOf = (engine: DocsEngineName, size: number, op: OpName): OpResult | undefined => {
    const r = find(engine, size);
    return r?.ok === true ? r.ops.find((o) => o.op === op) : undefined;
  };
  const mem = (r: DocsWorkerResult & { ok: true }): string => `${fmtInt(r.peakRssMiB)} / ${fmtInt(r.peakHeapMiB)}`;
  const tetraEnv = Object.entries(process.env).filter(([k]) => k.startsWith('TETRA_')).map(([k, v]) => `${k}=${v}`);
  const boundMiB = (config.tetra.cacheBytes + config.tetra.dirtyBytes) / MiB;

  out.push(`# Documents in process (${config.quick ? 'quick' : 'full'} run, ${fmtNum(minutes)} min)\n`);
  out.push(machine);
  out.push(`- ${versions()}`);
  out.push(
    `- tetradb: a TenantStore as the server opens a tenant, with server/config.ts's values (\`npm start\`): page cache ${fmtNum(config.tetra.cacheBytes / MiB, 0)} MiB, dirty budget ${fmtNum(config.tetra.dirtyBytes / MiB, 0)} MiB, fsync=${config.tetra.fsync}, snapshot max age ${config.tetra.snapshotMaxAgeMs} ms; TETRA_* in the environment: ${tetraEnv.length > 0 ? tetraEnv.join(' ') : 'none'}. The engine's TypeScript is compiled per file by esbuild without keepNames (bench/lib/ts-hooks.mjs), as npm start compiles it.`,
  );
  out.push(
    `- Data (bench/lib/documents.ts makeQueryDocument): ~330 bytes of JSON per document, the same in every engine; indexes on ${INDEXED_FIELDS.join(' and ')} in every engine that has them. Multi-document finds ask for up to ${FIND_LIMIT} documents; the range query's window holds ${RANGE_DOCS} documents on average at every size, the scan's exactly ${SCAN_DOCS}.`,
  );
  out.push(
    `- Each engine and size in a forked worker (bench/docs-worker.ts): ${config.warmDocs > 0 ? `a warm-up load of ${fmtCount(config.warmDocs)} other documents into a throwaway instance of the engine (deleted before the timed one opens), then ` : 'no warm-up (a cold load: --warm-docs=0), then '}load through insertMany (batches of 1000, each awaited: the insertMany row is that load, docs/s and per-batch p50/p99), settle, the sample queries checked against ${REFERENCE} (every engine measured answered them with the same ids), then each operation for ${config.seconds} s: asynchronous engines (tetradb, NeDB) in a closed loop (letting the event loop turn every 5 ms, so timers run as between requests) after a warm-up of ${config.seconds / 4} s, synchronous ones (LokiJS, mingo) with benchmark.js plus a pass timing calls one by one for p50/p99; the 16-caller updates run as 16 concurrent closed-loop callers (for the synchronous engines each yields a turn before its call). Memory sampled every 250 ms without forced GC. "tetradb ÷ engine" divides tetradb's ops/s by this row's: above 1, tetradb is faster.`,
  );
  out.push('- Durability:');
  for (const engine of config.engines) out.push(`  - ${engine}: ${ENGINE_NOTES[engine]}.`);
  out.push('');

  out.push('## Load\n');
  out.push(
    table(
      ['engine', 'documents', 'open', 'insertMany s', 'docs/s', 'settle s', 'RSS after open MiB', 'load peak RSS / heap MiB', 'RSS / heap after load MiB', 'run peak RSS / heap MiB'],
      results.map((r) => {
        if (!r.ok) return [r.engine, fmtCount(r.size), `n/a: ${r.reason}`, '-', '-', '-', '-', '-', '-', '-'];
        const ins = r.ops.find((o) => o.op === 'insertMany')!;
        return [
          r.engine,
          fmtCount(r.size),
          fmtUs(r.openMs * 1000),
          fmtNum(r.size / ins.hz, 2),
          fmtInt(ins.hz),
          fmtNum(r.settleSeconds, 2),
          fmtInt(r.openRssMiB),
          `${fmtInt(r.loadPeakRssMiB)} / ${fmtInt(r.loadPeakHeapMiB)}`,
          `${fmtInt(r.loadedRssMiB)} / ${fmtInt(r.loadedHeapMiB)}`,
          mem(r),
        ];
      }),
      2,
    ),
  );
  out.push('');
  out.push('settle: tetradb checkpoints; LokiJS builds its binary indexes (adaptive indexes were off during the load); the others have nothing to do. Not counted in docs/s.\n');

  for (const size of config.sizes) {
    out.push(`## ${fmtCount(size)} documents\n`);
    const rows: string[][] = [];
    for (const op of OPS) {
      for (const engine of config.engines) {
        const r = find(engine, size);
        if (r === undefined) continue;
        if (!r.ok) {
          rows.push([opLabel(op), engine, `n/a: ${r.reason}`, '-', '-', '-', '-']);
          continue;
        }
        const o = r.ops.find((x) => x.op === op)!;
        const t = opOf('tetradb', size, op);
        rows.push([opLabel(op), engine, fmtInt(o.hz), fmtRatio(t === undefined ? undefined : t.hz / o.hz), fmtUs(o.p50Us), fmtUs(o.p99Us), mem(r)]);
      }
    }
    out.push(table(['operation', 'engine', 'ops/s', 'tetradb ÷ engine', 'p50', 'p99', 'worker peak RSS / heap MiB'], rows, 2));
    out.push('');
  }

  if (config.sizes.length > 1) {
    out.push('## Growth with size (ops/s at each size, same operations)\n');
    out.push(
      growthTable({
        ops: OPS,
        engines: config.engines,
        sizes: config.sizes,
        hz: (engine, s, op) => opOf(engine, s, op)?.hz,
        cell: (engine, s, op) => {
          const r = find(engine, s);
          return r === undefined ? '-' : r.ok ? fmtInt(opOf(engine, s, op)?.hz) : r.reason.startsWith('skipped') ? 'skipped' : 'n/a';
        },
        opLabel,
        opHeader: 'operation',
        sizeHeader: (s) => fmtCount(s),
      }),
    );
    out.push('');
  }

  out.push('## Targets\n');
  const targets: string[][] = [];
  const verdict = (x: number | undefined, min: number): string => (x === undefined ? 'n/a' : x >= min ? 'PASS' : 'FAIL');
  for (const size of config.sizes) {
    /** `info`: shown next to the targets, not one of the issue's. */
    const ratioTarget = (op: OpName, peer: DocsEngineName, min: number, what: string, info = false): void => {
      const t = opOf('tetradb', size, op);
      const p = opOf(peer, size, op);
      const x = t !== undefined && p !== undefined ? t.hz / p.hz : undefined;
      const missing = t === undefined ? 'tetradb n/a' : p === undefined ? `${peer} ${find(peer, size)?.ok === false ? 'n/a' : 'not run'}` : undefined;
      targets.push([fmtCount(size), what, fmtInt(t?.hz), fmtInt(p?.hz), missing ?? fmtRatio(x), info ? `(${min}x)` : `>= ${min}x`, info ? 'info' : verdict(x, min)]);
    };
    ratioTarget('find-email', 'lokijs', 0.5, 'find by indexed equality: tetradb / LokiJS');
    ratioTarget('find-email', 'nedb', 5, 'find by indexed equality: tetradb / NeDB (in memory)');
    ratioTarget('insertMany', 'nedb', 1, 'insertMany docs/s: tetradb / NeDB (in memory)');
    if (config.engines.includes('nedb-file')) ratioTarget('insertMany', 'nedb-file', 1, 'insertMany docs/s: tetradb / NeDB file-backed (not in the issue)', true);
    const t = find('tetradb', size);
    if (t?.ok === true) {
      const growth = t.loadPeakRssMiB - t.openRssMiB;
      targets.push([
        fmtCount(size),
        `tetradb RSS while loading: peak ${fmtInt(t.loadPeakRssMiB)} MiB - ${fmtInt(t.openRssMiB)} after open, against cache + dirty budget${size === 1_000_000 ? '' : ' (the issue asks at 1M)'}`,
        `${fmtInt(growth)} MiB`,
        `${fmtInt(boundMiB)} MiB`,
        fmtRatio(growth / boundMiB),
        '<= 1x',
        growth <= boundMiB ? 'PASS' : 'FAIL',
      ]);
    }
  }
  out.push(table(['documents', 'target', 'tetradb', 'peer / bound', 'ratio', 'required', 'result'], targets, 2));
  out.push('');
  return out.join('\n');
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const machine = machineLine();
  const { root, cleanup } = scratchDir('tetradb-docsbench-');
  process.stderr.write(`tetradb documents in process (${config.quick ? 'quick' : 'full'}): ${config.sizes.map(fmtCount).join(', ')} documents; ${config.engines.join(', ')}\n`);
  let results: DocsWorkerResult[];
  try {
    results = await runAll(config, root);
  } finally {
    await new Promise((r) => setTimeout(r, 300));
    cleanup();
  }
  process.stdout.write(render(config, results, (Date.now() - started) / 60_000, machine));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
