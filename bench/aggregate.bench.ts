// Aggregation in process, side by side in one run: tetradb's pipelines (engine/docs docsAggregate
// over a TenantStore opened as `npm start` opens a tenant) against mingo's over a plain array and
// the same answers in SQL over a JSONB table in PGlite (in process) and in the system's PostgreSQL
// (skipped with a message when it cannot be reached). Eleven pipelines (lib/agg-workload.ts): $match
// on an indexed range + $group, a full $group with $addToSet, a top-k $sort + $limit, $unwind +
// $group, $setWindowFields, $lookup + $group, $bucket, $merge and $out (durable writes; mingo has
// no storage, so none), and two that hold state in proportion to the collection (a $group with a
// group per document, a $sort of half the documents past a $skip): past tetradb's 64 MiB blocking
// bound (about 1M documents) they spill to disk, as PostgreSQL's past its work_mem. Every engine holds the same documents (lib/documents.ts
// makeQueryDocument) loaded in batches of 1000. Each engine and size runs in a forked worker
// (aggregate-worker.ts) so RSS and GC are its own; every engine answers a sample of every pipeline
// first, checked against the engines that ran before it (a difference stops that engine, with the
// answers side by side), then each pipeline runs for N seconds from one caller.
//
//   npm --prefix bench run aggregate                 10k and 100k documents, 2 s per pipeline
//   npm --prefix bench run aggregate -- --quick      10k documents, 0.5 s per pipeline
//   node --import ./lib/ts-register.mjs aggregate.bench.ts [--quick] [--sizes=10000,100000,1000000]
//        [--engines=tetradb,mingo,pglite,postgres] [--pipelines=a,b] [--seconds=S] [--max-load-seconds=S] [--max-call-seconds=S] [--pg-url=URL]
//
// tetradb's settings come from server/config.ts as `npm start` reads them (TETRA_* in the
// environment apply). PostgreSQL: DATABASE_URL or --pg-url, default
// postgres://tetrabench:tetrabench@127.0.0.1:5432/tetrabench (docs/benchmarks.md creates it).
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../server/config.js';
import type { AggTask, AggWorkerResult, ExpectedCheck, PipelineResult } from './aggregate-worker.js';
import { AGG_ENGINES, ENGINE_NOTES, type AggEngineName } from './lib/agg-engines.js';
import { MERGE_TARGET, OUT_TARGET, PIPELINES, pipelineOf, PIPELINE_NAMES, type PipelineName, type SqlTables } from './lib/agg-workload.js';
import { tetraSettingsOf, type TetraSettings } from './lib/docs-engines.js';
import { connectPg, DEFAULT_PG_URL, redact } from './lib/pg-connect.js';
import { flagValue, fmtCount, fmtInt, fmtNum, fmtRatio, fmtUs, growthTable, machineLine, MiB, packageVersion, runWorker, scratchDir, table } from './lib/report.js';

const here = (p: string): string => fileURLToPath(new URL(p, import.meta.url));

interface Config {
  quick: boolean;
  sizes: number[];
  engines: AggEngineName[];
  seconds: number;
  maxLoadSeconds: number;
  /** A pipeline whose one call would take longer than this at the next size (extrapolated) is skipped there. */
  maxCallSeconds: number;
  /** An engine whose RSS would pass this at the next size (extrapolated) is skipped there. */
  maxRssMiB: number;
  pgUrl: string;
  tetra: TetraSettings;
  /** The pipelines to run (--pipelines; default all). */
  pipelines: PipelineName[];
}

function parseArgs(argv: string[]): Config {
  const quick = argv.includes('--quick');
  const value = (name: string): string | undefined => flagValue(argv, name);
  // What `npm start` would run with: its defaults, overridden by TETRA_* as the server reads them.
  const server = loadConfig(process.env, []);
  const config: Config = {
    quick,
    sizes: (value('sizes') ?? (quick ? '10000' : '10000,100000')).split(',').map(Number),
    engines: (value('engines')?.split(',') ?? [...AGG_ENGINES]) as AggEngineName[],
    seconds: Number(value('seconds') ?? (quick ? 0.5 : 2)),
    maxLoadSeconds: Number(value('max-load-seconds') ?? (quick ? 60 : 240)),
    maxCallSeconds: Number(value('max-call-seconds') ?? 5),
    maxRssMiB: Math.floor(totalmem() / MiB / 2),
    pgUrl: value('pg-url') ?? process.env.DATABASE_URL ?? DEFAULT_PG_URL,
    tetra: tetraSettingsOf(server),
    pipelines: (value('pipelines')?.split(',') ?? [...PIPELINE_NAMES]) as PipelineName[],
  };
  const positive = (n: number): boolean => Number.isInteger(n) && n > 0;
  if (!config.sizes.every(positive) || !config.engines.every((e) => AGG_ENGINES.includes(e)) || !config.pipelines.every((p) => PIPELINE_NAMES.includes(p)) || !(config.seconds > 0) || !(config.maxLoadSeconds > 0) || !(config.maxCallSeconds > 0)) {
    throw new Error(`usage: aggregate.bench.ts [--quick] [--sizes=N,N] [--engines=${AGG_ENGINES.join(',')}] [--pipelines=${PIPELINE_NAMES.join(',')}] [--seconds=S] [--max-load-seconds=S] [--max-call-seconds=S] [--pg-url=URL]`);
  }
  // tetradb first: every peer's answers are then checked against it (and against each other).
  config.engines.sort((a, b) => AGG_ENGINES.indexOf(a) - AGG_ENGINES.indexOf(b));
  return config;
}

/** The pipelines --pipelines leaves out, as skipped. */
function notChosen(config: Config): Partial<Record<PipelineName, string>> {
  return Object.fromEntries(PIPELINE_NAMES.filter((p) => !config.pipelines.includes(p)).map((p) => [p, 'not chosen (--pipelines)']));
}

/** Why `engine` should not run at `size`, judged from its figures at the previous size, if any. */
function skipReason(config: Config, previous: AggWorkerResult | undefined, size: number): string | undefined {
  if (previous === undefined) return undefined;
  if (!previous.ok) return `${previous.reason.startsWith('skipped') ? 'skipped' : 'failed'} at ${fmtCount(previous.size)} documents`;
  const scale = size / previous.size;
  const loadSeconds = previous.loadSeconds * scale;
  if (loadSeconds > config.maxLoadSeconds) return `loading would take ~${fmtInt(loadSeconds)} s at its ${fmtCount(previous.size)}-document rate, over the ${config.maxLoadSeconds} s limit (--max-load-seconds)`;
  const rss = previous.peakRssMiB * scale;
  if (rss > config.maxRssMiB) return `its RSS would reach ~${fmtInt(rss)} MiB (${fmtInt(previous.peakRssMiB)} MiB at ${fmtCount(previous.size)}), over half the machine's memory`;
  return undefined;
}

/**
 * The pipelines `engine` should not run at `size`: those whose one call (p50) at the previous size,
 * scaled by the sizes' ratio, would pass --max-call-seconds. Growth can be worse than linear
 * (mingo's window is quadratic): this only keeps a run from taking hours, it predicts nothing.
 */
function slowPipelines(config: Config, previous: AggWorkerResult | undefined, size: number): Partial<Record<PipelineName, string>> {
  const skip: Partial<Record<PipelineName, string>> = {};
  if (previous?.ok !== true) return skip;
  for (const p of previous.pipelines) {
    if (!p.ok) continue;
    const seconds = (p.p50Us / 1e6) * (size / previous.size);
    if (seconds > config.maxCallSeconds) skip[p.pipeline] = `one call would take ~${fmtNum(seconds, 0)} s or more (${fmtUs(p.p50Us)} at ${fmtCount(previous.size)}), over --max-call-seconds=${config.maxCallSeconds}`;
  }
  return skip;
}

async function runAll(config: Config, root: string): Promise<AggWorkerResult[]> {
  const results: AggWorkerResult[] = [];
  for (const size of config.sizes) {
    // The answers of the engines that ran at this size: each next engine is checked against them.
    const expected: ExpectedCheck[] = [];
    for (const engine of config.engines) {
      const previous = [...results].reverse().find((r) => r.engine === engine);
      const skip = skipReason(config, previous, size);
      if (skip !== undefined) {
        process.stderr.write(`  ${engine} ${fmtCount(size)}: skipped: ${skip}\n`);
        results.push({ ok: false, engine, size, reason: `skipped: ${skip}` });
        continue;
      }
      const task: AggTask = { engine, dir: join(root, `${engine}-${size}`), size, seconds: config.seconds, maxLoadSeconds: config.maxLoadSeconds, tetra: config.tetra, pgUrl: config.pgUrl, expected, skip: { ...notChosen(config), ...slowPipelines(config, previous, size) } };
      let result: AggWorkerResult;
      try {
        result = await runWorker<AggWorkerResult>(here('./aggregate-worker.ts'), task, `${engine}, ${fmtCount(size)} documents`);
      } catch (err) {
        result = { ok: false, engine, size, reason: `worker failed: ${err instanceof Error ? err.message : String(err)}` };
      }
      // Timings of different answers mean nothing: that engine stops (skipReason keeps it out of the next sizes).
      if (!result.ok) process.stderr.write(`    ${engine}: n/a: ${result.reason}\n`);
      else expected.push(...result.checks);
      results.push(result);
    }
  }
  return results;
}

// ---- Output -------------------------------------------------------------------------------------

function versions(pgSettings: string | undefined): string {
  return `mingo ${packageVersion('mingo')}, @electric-sql/pglite ${packageVersion('@electric-sql/pglite')}, pg ${packageVersion('pg')}${pgSettings === undefined ? '' : `; ${pgSettings}`}`;
}

/** A reason as one Markdown table cell (a difference names each answer on a line of its own, its rows' values between bars). */
function oneLine(reason: string): string {
  return reason
    .replace(/:\s*\n\s*/g, ': ')
    .replace(/\s*\n\s*/g, '; ')
    .replaceAll('|', '\\|');
}

/** A pipeline's SQL as the tables name it (PostgreSQL's carry a per-worker prefix besides). */
const SHOWN_TABLES: SqlTables = { people: 'people', cities: 'cities', [MERGE_TARGET]: MERGE_TARGET, [OUT_TARGET]: OUT_TARGET };

function render(config: Config, results: AggWorkerResult[], minutes: number, machine: string, pgNote: string): string {
  const out: string[] = [];
  const find = (engine: AggEngineName, size: number): AggWorkerResult | undefined => results.find((r) => r.engine === engine && r.size === size);
  const pipelineOfRun = (engine: AggEngineName, size: number, p: PipelineName): PipelineResult | undefined => {
    const r = find(engine, size);
    return r?.ok === true ? r.pipelines.find((x) => x.pipeline === p) : undefined;
  };
  const hzOf = (engine: AggEngineName, size: number, p: PipelineName): number | undefined => {
    const x = pipelineOfRun(engine, size, p);
    return x?.ok === true ? x.hz : undefined;
  };
  const serverPss = (extra: Record<string, number>): string => (extra['serverPssMiB'] !== undefined && Number.isFinite(extra['serverPssMiB']) ? `; server PSS ${fmtInt(extra['serverPssMiB'])}` : '');
  const tetraEnv = Object.entries(process.env).filter(([k]) => k.startsWith('TETRA_')).map(([k, v]) => `${k}=${v}`);

  out.push(`# Aggregation in process (${config.quick ? 'quick' : 'full'} run, ${fmtNum(minutes)} min)\n`);
  out.push(machine);
  out.push(`- ${versions(undefined)}`);
  out.push(`- ${pgNote}`);
  out.push(
    `- tetradb: a TenantStore as the server opens a tenant, with server/config.ts's values (\`npm start\`): page cache ${fmtNum(config.tetra.cacheBytes / MiB, 0)} MiB, dirty budget ${fmtNum(config.tetra.dirtyBytes / MiB, 0)} MiB, fsync=${config.tetra.fsync}; TETRA_* in the environment: ${tetraEnv.length > 0 ? tetraEnv.join(' ') : 'none'}.`,
  );
  out.push(
    `- Data: bench/lib/documents.ts makeQueryDocument (~330 bytes of JSON, the same in every engine) and 12 \`cities\` ({_id, name, country}); loaded in batches of 1000, each awaited. Each engine and size in a forked worker (bench/aggregate-worker.ts). Every engine answered a sample of every pipeline first, checked against the engines before it at that size (tetradb first); then each pipeline ran for ${config.seconds} s from one caller in a closed loop (letting the event loop turn every 5 ms, so timers run as between requests) after a warm-up of ${config.seconds / 4} s (a call that outlasts them is still one call: the slowest rows time a handful, so their p99 is their slowest). Memory sampled every 250 ms without forced GC. "tetradb ÷ engine" divides tetradb's ops/s by this row's: above 1, tetradb is faster.`,
  );
  out.push('- Engines:');
  for (const engine of config.engines) out.push(`  - ${engine}: ${ENGINE_NOTES[engine]}.`);
  out.push('');

  out.push('## Load\n');
  out.push(
    table(
      ['engine', 'documents', 'open', 'load s', 'docs/s', 'settle s', 'RSS / heap after load MiB', 'run peak RSS / heap MiB'],
      results.map((r) => {
        if (!r.ok) return [r.engine, fmtCount(r.size), `n/a: ${oneLine(r.reason)}`, '-', '-', '-', '-', '-'];
        return [r.engine, fmtCount(r.size), fmtUs(r.openMs * 1000), fmtNum(r.loadSeconds, 2), fmtInt(r.loadDocsPerSecond), fmtNum(r.settleSeconds, 2), `${fmtInt(r.loadedRssMiB)} / ${fmtInt(r.loadedHeapMiB)}`, `${fmtInt(r.peakRssMiB)} / ${fmtInt(r.peakHeapMiB)}${serverPss(r.extraPeaks)}`];
      }),
      2,
    ),
  );
  out.push('');
  out.push('settle: tetradb checkpoints; PGlite and PostgreSQL VACUUM ANALYZE; mingo has nothing to do. PostgreSQL\'s server PSS is all its processes\' (the server is shared with other work on the host).\n');

  for (const size of config.sizes) {
    out.push(`## ${fmtCount(size)} documents\n`);
    const rows: string[][] = [];
    // Pipelines left out with --pipelines get no rows.
    for (const p of PIPELINES.filter((x) => config.pipelines.includes(x.name))) {
      for (const engine of config.engines) {
        const r = find(engine, size);
        if (r === undefined) continue;
        if (!r.ok) {
          rows.push([p.label, engine, `n/a: ${r.reason.startsWith('results differ') ? 'results differ (see the load table)' : oneLine(r.reason)}`, '-', '-', '-', '-', '-']);
          continue;
        }
        const x = pipelineOfRun(engine, size, p.name)!;
        if (!x.ok) {
          rows.push([p.label, engine, `n/a: ${x.reason}`, '-', '-', '-', '-', '-']);
          continue;
        }
        const t = hzOf('tetradb', size, p.name);
        rows.push([p.label, engine, fmtNum(x.hz, x.hz < 100 ? 1 : 0), fmtRatio(t === undefined ? undefined : t / x.hz), fmtUs(x.p50Us), fmtUs(x.p99Us), fmtInt(x.ops), `${fmtInt(x.peakRssMiB)} / ${fmtInt(x.peakHeapMiB)}${serverPss(x.extraPeaks)}`]);
      }
    }
    out.push(table(['pipeline', 'engine', 'ops/s', 'tetradb ÷ engine', 'p50', 'p99', 'calls timed', 'peak RSS / heap MiB while timed'], rows, 2));
    out.push('');
  }

  if (config.sizes.length > 1) {
    out.push('## Growth with size (ops/s at each size, same pipelines)\n');
    out.push(
      growthTable({
        ops: PIPELINE_NAMES.filter((name) => config.pipelines.includes(name)),
        engines: config.engines,
        sizes: config.sizes,
        hz: hzOf,
        cell: (engine, s, p) => {
          const r = find(engine, s);
          if (r === undefined) return '-';
          if (!r.ok) return r.reason.startsWith('skipped') ? 'skipped' : 'n/a';
          const hz = hzOf(engine, s, p);
          return hz === undefined ? 'n/a' : fmtNum(hz, hz < 100 ? 1 : 0);
        },
        opLabel: (p) => p,
        opHeader: 'pipeline',
        sizeHeader: (s) => fmtCount(s),
      }),
    );
    out.push('');
  }

  out.push('## The pipelines and their SQL\n');
  for (const name of PIPELINE_NAMES.filter((x) => config.pipelines.includes(x))) {
    const p = pipelineOf(name);
    const call = p.calls(config.sizes[0]!, 1, 1)[0]!;
    out.push(`- **${name}**: ${p.label}`);
    out.push(`  - MQL: \`${JSON.stringify(call.pipeline)}\``);
    out.push(`  - SQL: \`${p.sql(SHOWN_TABLES).join('; ')}\`${call.params.length > 0 ? ` with ${JSON.stringify(call.params)}` : ''}`);
  }
  out.push('');
  return out.join('\n');
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const machine = machineLine(); // the load average before this run adds its own
  let pgNote = `PostgreSQL server: not in --engines`;
  if (config.engines.includes('postgres')) {
    const conn = await connectPg(config.pgUrl);
    if ('reason' in conn) {
      pgNote = `PostgreSQL not reachable at ${redact(config.pgUrl)} (${conn.reason}): no postgres rows. Start it (pg_ctlcluster 15 main start) and create the role and database (docs/benchmarks.md), or point --pg-url / DATABASE_URL at one`;
      process.stderr.write(`${pgNote}\n`);
      config.engines = config.engines.filter((e) => e !== 'postgres');
    } else {
      pgNote = `PostgreSQL server at ${redact(config.pgUrl)}: ${conn.settings}`;
      await conn.client.end();
    }
  }
  const { root, cleanup } = scratchDir('tetradb-aggbench-');
  process.stderr.write(`tetradb aggregation in process (${config.quick ? 'quick' : 'full'}): ${config.sizes.map(fmtCount).join(', ')} documents; ${config.engines.join(', ')}\n`);
  let results: AggWorkerResult[];
  try {
    results = await runAll(config, root);
  } finally {
    await new Promise((r) => setTimeout(r, 300));
    cleanup();
  }
  process.stdout.write(render(config, results, (Date.now() - started) / 60_000, machine, pgNote));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
