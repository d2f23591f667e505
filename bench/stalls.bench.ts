// Stalls under a mixed load: one tetradb tenant store preloaded with 500k keys (100-byte values),
// then for 30 s 16 writers (batches of 100 random overwrites and deletes, which make garbage),
// 8 point readers and one reader scanning 10,000 rows at a time on a snapshot in chunks of 256, with
// thresholds small enough that several checkpoints and a compaction run inside the window. The
// event loop's delay (monitorEventLoopDelay, 10 ms resolution) over the window is the figure;
// the target is p99 < 20 ms. Peer: better-sqlite3 (WAL, synchronous=FULL) under the same load.
// Each engine runs in a process of its own (stalls-worker.ts).
//
//   npm --prefix bench run stalls                    500k keys, 30 s window
//   npm --prefix bench run stalls -- --quick         100k keys, 10 s window
//   node --import ./lib/ts-register.mjs stalls.bench.ts [--quick] [--keys=N] [--seconds=S] [--writers=N] [--readers=N] [--scan-rows=N]
//        [--write-rate=N]   write batches/s offered by all writers together, on a schedule (open loop);
//                           default 0: each writer sends its next batch once the last is acknowledged
//
// tetradb runs with its default cache (256 MiB) and dirty budget, or TETRA_DIRTY_BYTES from the
// environment when set; SQLite gets the same cache.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { dirtyBudgetFromEnv, flagValue, fmtInt, fmtNum, fmtRatio, machineLine, MiB, runWorker, scratchDir, table } from './lib/report.js';
import type { StallsRow, StallsTask } from './stalls-worker.js';

const TARGET_P99_MS = 20;
const CACHE_BYTES = 256 * MiB;
const BATCH_OPS = 100;
const DELETE_SHARE = 0.2;
// Small maintenance thresholds, so the window sees several checkpoints and a compaction.
const CHECKPOINT_WAL_BYTES = 4 * MiB;
const COMPACT_MIN_BYTES = 1 * MiB;

interface Config {
  quick: boolean;
  keys: number;
  seconds: number;
  writers: number;
  readers: number;
  scanRows: number;
  /** Write batches per second offered by all writers together (open loop); 0: as fast as acknowledged. */
  writeRate: number;
}

function parseArgs(argv: string[]): Config {
  const quick = argv.includes('--quick');
  const value = (name: string): string | undefined => flagValue(argv, name);
  const config: Config = {
    quick,
    keys: Number(value('keys') ?? (quick ? 100_000 : 500_000)),
    seconds: Number(value('seconds') ?? (quick ? 10 : 30)),
    writers: Number(value('writers') ?? 16),
    readers: Number(value('readers') ?? 8),
    scanRows: Number(value('scan-rows') ?? 10_000),
    writeRate: Number(value('write-rate') ?? 0),
  };
  if (![config.keys, config.writers, config.readers].every((n) => Number.isInteger(n) && n > 0) || !(config.seconds > 0) || !(Number.isInteger(config.scanRows) && config.scanRows >= 0) || !(config.writeRate >= 0)) {
    throw new Error('usage: stalls.bench.ts [--quick] [--keys=N] [--seconds=S] [--writers=N] [--readers=N] [--scan-rows=N (0: whole tree)] [--write-rate=batches/s (0: closed loop)]');
  }
  return config;
}

const workerPath = fileURLToPath(new URL('./stalls-worker.ts', import.meta.url));

function render(rows: StallsRow[], config: Config, dirtyLabel: string): { text: string; checks: string[] } {
  const tetra = rows.find((r) => r.task.engine === 'tetradb');
  const rate = (r: StallsRow, n: number): number => n / r.windowSeconds;
  const text = table(
    [
      'engine',
      'event loop p50 / p99 / max ms',
      'idle baseline p99 / max ms',
      'GC pauses: count, total / max ms',
      'longest sync write() ms',
      'write batches/s (ops/s)',
      'vs tetradb',
      'batch ack p50 / p99 ms',
      'gets/s',
      'vs tetradb',
      'get p50 / p99 ms',
      'scan rows/s (scans done, expired)',
      'checkpoints / compactions',
      'page file MiB start / end',
      'peak RSS MiB',
      'dirty peak / budget MiB',
      'memory governor: cuts / readings, peak RSS growth / bound MiB',
    ],
    rows.map((r) => [
      r.task.label,
      `${fmtNum(r.window.loop.p50Ms)} / ${fmtNum(r.window.loop.p99Ms)} / ${fmtNum(r.window.loop.maxMs)}`,
      `${fmtNum(r.idleLoop.p99Ms)} / ${fmtNum(r.idleLoop.maxMs)}`,
      `${r.window.gc.count}, ${fmtInt(r.window.gc.totalMs)} / ${fmtNum(r.window.gc.maxMs)}`,
      fmtNum(r.writes.longestSyncMs),
      `${fmtInt(rate(r, r.writes.ops))} (${fmtInt(rate(r, r.writes.ops * r.task.batchOps))})${r.writes.refused > 0 ? `; ${fmtInt(r.writes.refused)} refused` : ''}`,
      tetra ? fmtRatio(r.writes.ops / r.windowSeconds / (tetra.writes.ops / tetra.windowSeconds)) : '-',
      `${fmtNum(r.writes.p50Ms, 2)} / ${fmtNum(r.writes.p99Ms, 2)}`,
      fmtInt(rate(r, r.reads.ops)),
      tetra ? fmtRatio(r.reads.ops / r.windowSeconds / (tetra.reads.ops / tetra.windowSeconds)) : '-',
      `${fmtNum(r.reads.p50Ms, 2)} / ${fmtNum(r.reads.p99Ms, 2)}`,
      `${fmtInt(rate(r, r.scans.rows))} (${r.scans.completed}, ${r.scans.expired})`,
      r.checkpoints !== undefined ? `${r.checkpoints} / ${r.compactions}` : 'automatic (not counted)',
      r.fileMiBStart !== undefined ? `${fmtInt(r.fileMiBStart)} / ${fmtInt(r.fileMiBEnd)}` : '-',
      fmtInt(r.window.peakRssMiB),
      r.dirtyLimitMiB !== undefined ? `${fmtNum(r.window.extraPeaks.dirtyMiB)} / ${fmtNum(r.dirtyLimitMiB, 0)}` : '-',
      r.governor !== undefined ? `${fmtInt(r.governor.cuts)} / ${fmtInt(r.governor.readings)}, ${fmtInt(r.governor.peakGrowthMiB)} / ${fmtInt(r.governor.boundMiB)}` : r.task.engine === 'tetradb' ? 'off (TETRA_MEMORY_CHECK_MS=0)' : '-',
    ]),
  );
  const checks: string[] = [];
  for (const r of rows) {
    const p99 = r.window.loop.p99Ms;
    const what = r.task.engine === 'tetradb' ? 'tetradb' : 'better-sqlite3 (peer, for reference)';
    checks.push(`${p99 < TARGET_P99_MS ? 'PASS' : 'FAIL'}  ${what}: event-loop delay p99 ${fmtNum(p99)} ms < ${TARGET_P99_MS} ms over the ${fmtNum(r.windowSeconds, 0)} s window (max ${fmtNum(r.window.loop.maxMs)} ms; idle baseline p99 ${fmtNum(r.idleLoop.p99Ms)} ms)`);
  }
  if (tetra?.checkpoints !== undefined) {
    checks.push(`${tetra.checkpoints >= 2 && tetra.compactions! >= 1 ? 'PASS' : 'FAIL'}  the window saw several checkpoints and a compaction: ${tetra.checkpoints} checkpoints, ${tetra.compactions} compactions`);
  }
  const notes = [
    `- ${fmtInt(config.keys)} keys preloaded (100-byte values); then ${config.seconds} s of ${config.writers} writers (batches of ${BATCH_OPS}: ${100 - DELETE_SHARE * 100}% overwrites with new 100-byte values, ${DELETE_SHARE * 100}% deletes, random keys), ${config.readers} point readers, 1 reader scanning ${config.scanRows > 0 ? `${fmtInt(config.scanRows)} rows from a random key` : 'the whole tree'} per scan, in a loop (chunks of 256, an event-loop turn between chunks; a scan expired by the engine is counted and retried). ${config.writeRate > 0 ? `Writes offered at ${fmtInt(config.writeRate)} batches/s in all (open loop: each writer starts its batches on a fixed schedule, at once when it is behind it).` : 'Writers send their next batch as soon as the last is acknowledged (closed loop: a faster engine gets more load).'}`,
    `- tetradb: TETRA defaults (cache 256 MiB, ${dirtyLabel}), checkpointWalBytes ${CHECKPOINT_WAL_BYTES / MiB} MiB and compactMinBytes ${COMPACT_MIN_BYTES / MiB} MiB (small, so maintenance runs in the window; defaults 32 MiB and 4 MiB), compaction at 50% garbage (default), the memory governor as npm start runs it (TETRA_MEMORY_CHECK_MS, default every 100 ms; 0: off). A get waits for the durability fence (TenantStore.whenDurable), as a server response does; a scan runs on snapshot().scanChunks().`,
    '- better-sqlite3: WAL, synchronous=FULL, cache 256 MiB; its calls are synchronous, so every writer and reader waits for one event-loop turn before each call; the scanner reads through a second connection (an open statement is a snapshot) 256 rows per turn. SQLite checkpoints its WAL itself (every 1000 pages) inside a commit.',
    `- Event-loop delay: monitorEventLoopDelay({ resolution: 10 }) over the window, as Node reports it (the 10 ms timer period included: an idle loop shows ~10 ms). "idle baseline" is the same measure over 2 s before the window with nothing running in the process: delay the machine alone adds.`,
  ];
  return { text: [...notes, '', text].join('\n'), checks };
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const dirty = dirtyBudgetFromEnv();
  const { root, cleanup } = scratchDir('tetradb-stallbench-');
  const started = Date.now();
  const header = machineLine();
  process.stderr.write(`tetradb stalls benchmark (${config.quick ? 'quick' : 'full'}): ${fmtInt(config.keys)} keys, ${config.seconds} s window; tetradb ${dirty.label}\n`);
  const rows: StallsRow[] = [];
  try {
    const base = {
      keys: config.keys,
      seconds: config.seconds,
      writers: config.writers,
      batchOps: BATCH_OPS,
      deleteShare: DELETE_SHARE,
      readers: config.readers,
      scanRows: config.scanRows,
      writeRate: config.writeRate,
      cacheBytes: CACHE_BYTES,
      checkpointWalBytes: CHECKPOINT_WAL_BYTES,
      compactMinBytes: COMPACT_MIN_BYTES,
    };
    const tasks: StallsTask[] = [
      { ...base, engine: 'tetradb', label: 'tetradb (TETRA defaults, small maintenance thresholds)', dir: join(root, 'tetradb'), ...(dirty.bytes !== undefined ? { dirtyBytes: dirty.bytes } : {}) },
      { ...base, engine: 'sqlite', label: 'better-sqlite3 (WAL, synchronous=FULL)', dir: join(root, 'sqlite') },
    ];
    for (const task of tasks) rows.push(await runWorker<StallsRow>(workerPath, task, task.label));
  } finally {
    cleanup();
  }
  const { text, checks } = render(rows, config, dirty.label);
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  process.stdout.write(
    [`## Event-loop stalls under a mixed load (${config.quick ? 'quick' : 'full'} run, ${minutes} min)\n`, header, text, '', '### Targets\n', '```', ...checks, '```', ''].join('\n'),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
