// Storage benchmark: tetradb's TenantStore side by side with better-sqlite3 (WAL, synchronous
// FULL and NORMAL) and LevelDB (classic-level), on the same data in the same run. Each engine and
// suite runs in its own forked process (storage-worker.ts); this file plans the runs, prints the
// tables (Markdown, on stdout; progress goes to stderr) and the target checks.
//
//   npm run bench                      # from the repo root: full run (10k, 100k, 1M keys)
//   npm --prefix bench run quick       # smoke run: 10k and 100k keys, shorter timings
//   node --import ./lib/ts-register.mjs storage.bench.ts [--quick] [--sizes=10000,100000] [--seconds=2] [--rounds=3] [--json=out.json]
import { execFileSync, fork } from 'node:child_process';
import { closeSync, fdatasyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { EngineName } from './lib/engines.js';
import { engineVersion, flagValue, fmtUs } from './lib/report.js';
import type { Row, Task } from './storage-worker.js';

const MiB = 2 ** 20;
const CACHE_BYTES = 256 * MiB; // tetradb's default page cache; SQLite and LevelDB get the same budget
// The bound check needs a cache smaller than the data: 32 MiB against ~125 MiB of pages at 1M
// keys; the quick run's largest set (100k keys, ~13 MiB of pages) gets 4 MiB instead.
const SMALL_CACHE_BYTES = 32 * MiB;
const QUICK_SMALL_CACHE_BYTES = 4 * MiB;
const WRITERS = [1, 16, 64];
const COMMIT_ENGINES: EngineName[] = ['tetradb', 'sqlite-full', 'sqlite-normal', 'leveldb'];
// Reads do not depend on SQLite's synchronous setting: one SQLite database serves the read suite.
const READ_ENGINES: EngineName[] = ['tetradb', 'sqlite-full', 'leveldb'];

interface Config {
  quick: boolean;
  sizes: number[];
  commitSeconds: number;
  /** The commit suite runs this many times, engines interleaved; rows show the median round. */
  rounds: number;
  readSeconds: number;
  json: string | undefined;
}

function parseArgs(argv: string[]): Config {
  const quick = argv.includes('--quick');
  const value = (name: string): string | undefined => flagValue(argv, name);
  const seconds = value('seconds');
  const config: Config = {
    quick,
    sizes: (value('sizes') ?? (quick ? '10000,100000' : '10000,100000,1000000')).split(',').map(Number),
    commitSeconds: seconds !== undefined ? Number(seconds) : quick ? 1 : 1.5,
    rounds: Number(value('rounds') ?? (quick ? 1 : 3)),
    readSeconds: seconds !== undefined ? Number(seconds) / 2 : quick ? 0.5 : 1.5,
    json: value('json'),
  };
  if (config.sizes.some((s) => !Number.isInteger(s) || s <= 0) || !(config.commitSeconds > 0) || !Number.isInteger(config.rounds) || config.rounds < 1) {
    throw new Error('usage: storage.bench.ts [--quick] [--sizes=N,N,...] [--seconds=S] [--rounds=N] [--json=FILE]');
  }
  return config;
}

const workerPath = fileURLToPath(new URL('./storage-worker.ts', import.meta.url));

/** Runs one task in a fresh process and returns its rows. */
function runWorker(task: Task): Promise<Row[]> {
  const label = `${task.suite} ${'label' in task ? task.label : task.engine}${'size' in task ? ` ${task.size.toLocaleString('en-US')} keys` : ''}`;
  process.stderr.write(`  running ${label}...\n`);
  return new Promise((resolve, reject) => {
    const child = fork(workerPath, [JSON.stringify(task)], {
      execArgv: [...process.execArgv, '--expose-gc'],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let rows: Row[] | undefined;
    child.on('message', (message) => (rows = message as Row[]));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (rows !== undefined && code === 0) resolve(rows);
      else reject(new Error(`${label} failed (exit ${code ?? signal})`));
    });
  });
}

// ---- Formatting -------------------------------------------------------------------------------

function fmtInt(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-';
}

function fmtMem(row: Row): string {
  return `${row.rssMiB.toFixed(0)} / ${row.heapMiB.toFixed(0)}`;
}

function fmtRatio(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '-' : `${value.toFixed(2)}x`;
}

/** A Markdown table; text columns align left, figures right. */
function table(header: string[], rows: string[][]): string {
  const text = new Set(['engine', 'op', 'note']);
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((h) => (text.has(h) ? '---' : '---:')).join('|')}|`];
  for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
  return lines.join('\n');
}

/** The operation a row measures, without the variant in parentheses: rows compare on this. */
function baseOp(op: string): string {
  return op.replace(/ \(.*\)$/, '');
}

function note(row: Row): string {
  if (row.suite === 'commit') {
    if (row.engine === 'sqlite-normal') return 'not durable: WAL fsynced only at checkpoints';
    if (row.engine.startsWith('sqlite') && row.size > 1) return 'synchronous API: commits run one at a time';
    if (row.engine === 'leveldb' && row.size > 1) return `at most ${process.env.UV_THREADPOOL_SIZE ?? 4} puts in flight (libuv pool)`;
  }
  if (row.op.endsWith('(async)')) return 'one await per call';
  if (row.op.startsWith('bulk load') && row.extra?.settleMs !== undefined) return `incl. ${fmtUs(row.extra.settleMs * 1000)} checkpoint/settle`;
  if (row.op === 'scan all') return 'best of 3 passes';
  return '';
}

function renderTables(rows: Row[], config: Config): { text: string; checks: string[] } {
  const out: string[] = [];
  const tetra = (suite: Row['suite'], op: string, size: number): Row | undefined =>
    rows.find((r) => r.suite === suite && r.engine === 'tetradb' && baseOp(r.op) === baseOp(op) && r.size === size);

  const commits = rows.filter((r) => r.suite === 'commit');
  out.push(`### Durable commits (one 16-byte key + 100-byte value per commit; median of ${config.rounds} round${config.rounds === 1 ? '' : 's'}, ${config.commitSeconds} s each)\n`);
  out.push(
    table(
      ['engine', 'op', 'commits/s', 'vs tetradb', 'p50', 'p99', 'RSS / heap MiB', 'note'],
      WRITERS.flatMap((w) =>
        commits
          .filter((r) => r.size === w)
          .map((r) => {
            const range = (r.extra?.rounds ?? 1) > 1 ? `rounds ${fmtInt(r.extra!.minHz!)}-${fmtInt(r.extra!.maxHz!)}` : '';
            const why = note(r);
            return [r.engine, r.op, fmtInt(r.hz), fmtRatio(r.hz / (tetra('commit', r.op, r.size)?.hz ?? NaN)), fmtUs(r.p50Us), fmtUs(r.p99Us), fmtMem(r), [range, why].filter((x) => x !== '').join('; ')];
          }),
      ),
    ),
  );

  const reads = rows.filter((r) => r.suite === 'read');
  out.push('\n### Reads, warm (ops/s for gets, rows/s for scans and loads)\n');
  out.push(
    table(
      ['engine', 'op', 'keys', 'ops or rows/s', 'vs tetradb', 'p50', 'p99', 'RSS / heap MiB', 'note'],
      config.sizes.flatMap((size) =>
        reads
          .filter((r) => r.size === size)
          .sort((a, b) => opOrder(a.op) - opOrder(b.op) || READ_ENGINES.indexOf(a.engine as EngineName) - READ_ENGINES.indexOf(b.engine as EngineName))
          .map((r) => [
            r.engine,
            r.op,
            fmtInt(size),
            fmtInt(r.hz),
            fmtRatio(r.hz / (tetra('read', r.op, size)?.hz ?? NaN)),
            r.op === 'scan all' ? '-' : fmtUs(r.p50Us),
            fmtUs(r.p99Us),
            fmtMem(r),
            note(r) + (r.rmePct !== undefined ? `${note(r) ? '; ' : ''}±${r.rmePct.toFixed(1)}%` : ''),
          ]),
      ),
    ),
  );

  const reopens = rows.filter((r) => r.suite === 'reopen');
  const opened = reopens.filter((r) => r.op === 'reopen + first get');
  out.push(`\n### Reopen and memory at ${fmtInt(Math.max(...config.sizes))} keys (each engine in a fresh process)\n`);
  out.push(
    table(
      ['engine', 'open', 'first get', 'RSS before open', 'RSS after open', 'after full scan + 64k gets: RSS / heap / buffers MiB', 'cache bytes (peak) / bound'],
      opened.map((r) => {
        const after = reopens.find((a) => a.engine === r.engine && a.op !== r.op)!;
        const cache = after.extra?.cacheMaxBytes !== undefined
          ? `${(after.extra.cacheBytes! / MiB).toFixed(1)} (${(after.extra.cachePeakBytes! / MiB).toFixed(1)}) / ${(after.extra.cacheMaxBytes / MiB).toFixed(0)} MiB`
          : 'own cache: ' + (CACHE_BYTES / MiB).toFixed(0) + ' MiB budget';
        return [
          r.engine,
          fmtUs(r.extra!.openMs! * 1000),
          fmtUs(r.extra!.firstGetMs! * 1000),
          `${r.extra!.baseRssMiB!.toFixed(0)} MiB`,
          `${r.rssMiB.toFixed(0)} MiB`,
          `${fmtMem(after)} / ${after.buffersMiB.toFixed(0)}`,
          cache,
        ];
      }),
    ),
  );

  // ---- Targets (reported, never asserted: benchmarks are code, not tests) ----
  const checks: string[] = [];
  const check = (ok: boolean, what: string, detail: string): void => {
    checks.push(`${ok ? 'PASS' : 'FAIL'}  ${what}: ${detail}`);
  };
  const one = tetra('commit', 'commit, 1 writer', 1);
  const many = tetra('commit', 'commit, 64 writers', 64);
  const sqliteOne = rows.find((r) => r.suite === 'commit' && r.engine === 'sqlite-full' && r.size === 1);
  if (one && many) {
    check(many.hz >= 10 * one.hz, 'tetradb 64 writers >= 10x its single-writer commits/s', `${fmtInt(many.hz)} vs ${fmtInt(one.hz)} (${(many.hz / one.hz).toFixed(1)}x)`);
  }
  if (one && sqliteOne) {
    check(one.hz >= 0.5 * sqliteOne.hz, 'tetradb single-writer >= 50% of SQLite synchronous=FULL', `${fmtInt(one.hz)} vs ${fmtInt(sqliteOne.hz)} (${((100 * one.hz) / sqliteOne.hz).toFixed(0)}%)`);
  }
  for (const size of config.sizes) {
    const t = tetra('read', 'get', size);
    const s = reads.find((r) => r.engine === 'sqlite-full' && r.op === 'get' && r.size === size);
    if (t && s) check(t.hz >= s.hz, `tetradb point get >= better-sqlite3 get at ${fmtInt(size)} keys`, `${fmtInt(t.hz)} vs ${fmtInt(s.hz)} ops/s (${(t.hz / s.hz).toFixed(2)}x)`);
  }
  for (const r of reopens.filter((x) => x.extra?.cacheMaxBytes !== undefined)) {
    const peak = r.extra!.cachePeakBytes!;
    const max = r.extra!.cacheMaxBytes!;
    check(peak <= max, `page cache bound holds (${r.engine})`, `peak ${(peak / MiB).toFixed(1)} MiB <= bound ${(max / MiB).toFixed(0)} MiB; RSS ${r.rssMiB.toFixed(0)} MiB`);
  }
  out.push('\n### Targets\n');
  out.push('```\n' + checks.join('\n') + '\n```');
  return { text: out.join('\n'), checks };
}

function opOrder(op: string): number {
  const order = ['bulk load', 'get', 'scan 100', 'scan all'];
  const i = order.findIndex((o) => op.startsWith(o));
  return (i < 0 ? order.length : i) * 10 + (op.includes('(async)') ? 1 : 0);
}

/** One row per (engine, op): the median of the rounds' rates, percentiles and memory. */
function medianRounds(all: Row[]): Row[] {
  const groups = new Map<string, Row[]>();
  for (const r of all) {
    const key = `${r.engine}\u0000${r.op}`;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const median = (xs: Array<number | undefined>): number | undefined => {
    const v = xs.filter((x): x is number => x !== undefined).sort((a, b) => a - b);
    return v.length === 0 ? undefined : v.length % 2 === 1 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1]! + v[v.length / 2]!) / 2;
  };
  return [...groups.values()].map((rs) => ({
    ...rs[0]!,
    hz: median(rs.map((r) => r.hz))!,
    p50Us: median(rs.map((r) => r.p50Us)),
    p99Us: median(rs.map((r) => r.p99Us)),
    rssMiB: median(rs.map((r) => r.rssMiB))!,
    heapMiB: median(rs.map((r) => r.heapMiB))!,
    extra: { rounds: rs.length, minHz: Math.min(...rs.map((r) => r.hz)), maxHz: Math.max(...rs.map((r) => r.hz)) },
  }));
}

/**
 * The disk's own commit latency: p50 of 200 appends of 150 bytes, each followed by fdatasync, in
 * `dir`. Printed at the start and the end of a run, so a reader sees whether the disk changed.
 */
function fsyncProbe(dir: string): number {
  const fd = openSync(join(dir, 'fsync-probe'), 'w');
  const bytes = Buffer.alloc(150, 0x5a);
  const times: number[] = [];
  try {
    for (let i = 0; i < 200; i++) {
      const t0 = performance.now();
      writeSync(fd, bytes, 0, bytes.length, i * bytes.length);
      fdatasyncSync(fd);
      times.push((performance.now() - t0) * 1000);
    }
  } finally {
    closeSync(fd);
    rmSync(join(dir, 'fsync-probe'), { force: true });
  }
  return times.sort((a, b) => a - b)[times.length >> 1]!;
}

// ---- Machine ------------------------------------------------------------------------------------

function machine(dir: string): string {
  const require = createRequire(import.meta.url);
  const version = (pkg: string): string => (JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { version: string }).version;
  let fs = 'unknown';
  try {
    const line = execFileSync('df', ['-T', dir], { encoding: 'utf8' }).trim().split('\n')[1] ?? '';
    const [device, type] = line.split(/\s+/);
    fs = `${type} on ${device}`;
  } catch {
    // df missing: leave unknown
  }
  const db = new Database(':memory:');
  const sqlite = (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  db.close();
  return [
    `- CPU: ${cpus()[0]?.model ?? 'unknown'}, ${cpus().length} cores; RAM ${(totalmem() / 2 ** 30).toFixed(0)} GiB; Linux ${release()}`,
    `- Disk: ${fs} (temp dir ${tmpdir()})`,
    `- tetradb engine: ${engineVersion()}`,
    `- Node ${process.version}; better-sqlite3 ${version('better-sqlite3')} (SQLite ${sqlite}); classic-level ${version('classic-level')}; benchmark ${version('benchmark')}`,
  ].join('\n');
}

// ---- Main ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const root = mkdtempSync(join(tmpdir(), 'tetradb-bench-'));
  const cleanup = (): void => rmSync(root, { recursive: true, force: true });
  process.on('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  const started = Date.now();
  const loadStart = loadavg()[0]!;
  const fsyncStart = fsyncProbe(root);
  const rows: Row[] = [];
  let fsyncEnd = Number.NaN;
  const info = machine(root);
  process.stderr.write(`tetradb storage benchmark (${config.quick ? 'quick' : 'full'}): sizes ${config.sizes.join(', ')}\n${info}\n`);
  try {
    // Commit rates follow the disk, which other work may share: rounds with the engines
    // interleaved spread that over every engine alike, and the median round is reported.
    const rounds: Row[][] = [];
    for (let round = 0; round < config.rounds; round++) {
      for (const engine of COMMIT_ENGINES) {
        const dir = join(root, `commit-${engine}-${round}`);
        mkdirSync(dir);
        rounds.push(await runWorker({ suite: 'commit', engine, dir, writers: WRITERS, seconds: config.commitSeconds, maxOps: 500_000, cacheBytes: CACHE_BYTES }));
        rmSync(dir, { recursive: true, force: true });
      }
    }
    rows.push(...medianRounds(rounds.flat()));
    const largest = Math.max(...config.sizes);
    for (const size of config.sizes) {
      for (const engine of READ_ENGINES) {
        const dir = join(root, `read-${engine}-${size}`);
        mkdirSync(dir);
        rows.push(...(await runWorker({ suite: 'read', engine, dir, size, seconds: config.readSeconds, cacheBytes: CACHE_BYTES, keep: size === largest })));
      }
    }
    const reopen = (engine: EngineName, cacheBytes: number, label: string): Promise<Row[]> =>
      runWorker({ suite: 'reopen', engine, dir: join(root, `read-${engine}-${largest}`), size: largest, cacheBytes, label });
    rows.push(...(await reopen('tetradb', CACHE_BYTES, 'tetradb')));
    const small = config.quick ? QUICK_SMALL_CACHE_BYTES : SMALL_CACHE_BYTES;
    rows.push(...(await reopen('tetradb', small, `tetradb, ${small / MiB} MiB cache`)));
    rows.push(...(await reopen('sqlite-full', CACHE_BYTES, 'sqlite')));
    rows.push(...(await reopen('leveldb', CACHE_BYTES, 'leveldb')));
    fsyncEnd = fsyncProbe(root);
  } finally {
    cleanup();
  }
  const { text } = renderTables(rows, config);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const fsyncs = `- Disk commit latency (150-byte append + fdatasync, p50 of 200): ${fmtUs(fsyncStart)} at start, ${fmtUs(fsyncEnd)} at end`;
  const load = `- Load average (1 min) at start ${loadStart.toFixed(2)}, at end ${loadavg()[0]!.toFixed(2)}: anything above 0 is other work sharing the ${cpus().length} cores and the disk`;
  process.stdout.write(`## tetradb storage benchmark (${config.quick ? 'quick' : 'full'} run, ${minutes} min)\n\n${info}\n${fsyncs}\n${load}\n\n${text}\n`);
  if (config.json !== undefined) writeFileSync(config.json, JSON.stringify({ config, machine: info, rows }, null, 2));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
