// Memory and stalls under sustained writes: tetradb's TenantStore loading N keys (100-byte
// values, durable batches of 1000 rows, ascending and then scrambled order) next to
// better-sqlite3 (WAL, synchronous=FULL) and LevelDB (classic-level, sync batches) on the same
// data in the same run. Every load runs in a process of its own (memory-worker.ts) that samples
// RSS, heap and Buffer memory every 250 ms without forcing GC, and the event loop's delay
// (perf_hooks.monitorEventLoopDelay, 10 ms resolution). Tables on stdout, progress on stderr.
//
//   npm --prefix bench run memory                     1M and 10M keys; random order capped at 1M keys;
//                                                     any one load stops after 240 s (about 20 minutes)
//   npm --prefix bench run memory -- --quick          100k and 1M keys; random capped at 250k; 60 s (about 3 minutes)
//   node --import ./lib/ts-register.mjs memory.bench.ts [--quick] [--sizes=1000000,10000000] [--random-cap=N] [--max-seconds=S]
//                                     [--engines=tetradb,sqlite-full,leveldb]
//
// TETRA_DIRTY_BYTES in the environment sets tetradb's dirty budget (as it does the server's);
// unset, the engine's default (64 MiB) applies.
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EngineName } from './lib/engines.js';
import { dirtyBudgetFromEnv, flagValue, fmtCount, fmtInt, fmtNum, fmtRatio, machineLine, MiB, runWorker, scratchDir, table } from './lib/report.js';
import type { LoadOrder, MemoryRow, MemoryTask } from './memory-worker.js';

/** The bounded configuration under test: a 32 MiB page cache (and 32 MiB for each peer's cache). */
const SMALL_CACHE_BYTES = 32 * MiB;
/** tetradb's defaults (TETRA_CACHE_BYTES unset), shown as a row of its own. */
const DEFAULT_CACHE_BYTES = 256 * MiB;

interface Config {
  quick: boolean;
  sizes: number[];
  /** Random-order loads use min(size, randomCap) keys: a scrambled B+tree load is far slower. */
  randomCap: number;
  /** Any one load stops after this long, and its row says how far it got. */
  maxSeconds: number;
  /** Engines to run (default: all); tetradb's two rows both count as tetradb. */
  engines: EngineName[];
}

function parseArgs(argv: string[]): Config {
  const quick = argv.includes('--quick');
  const value = (name: string): string | undefined => flagValue(argv, name);
  const config: Config = {
    quick,
    sizes: (value('sizes') ?? (quick ? '100000,1000000' : '1000000,10000000')).split(',').map(Number),
    randomCap: Number(value('random-cap') ?? (quick ? 250_000 : 1_000_000)),
    maxSeconds: Number(value('max-seconds') ?? (quick ? 60 : 240)),
    engines: (value('engines') ?? 'tetradb,sqlite-full,leveldb').split(',') as EngineName[],
  };
  const known: EngineName[] = ['tetradb', 'sqlite-full', 'leveldb'];
  if (config.sizes.some((s) => !Number.isInteger(s) || s <= 0) || !(config.randomCap > 0) || !(config.maxSeconds > 0) || config.engines.some((e) => !known.includes(e))) {
    throw new Error('usage: memory.bench.ts [--quick] [--sizes=N,N,...] [--random-cap=N] [--max-seconds=S] [--engines=tetradb,sqlite-full,leveldb]');
  }
  return config;
}

interface Variant {
  engine: EngineName;
  label: string;
  cacheBytes: number;
  /** Applies the dirty budget from TETRA_DIRTY_BYTES (tetradb rows only). */
  tetra: boolean;
}

const workerPath = fileURLToPath(new URL('./memory-worker.ts', import.meta.url));

function variants(dirtyLabel: string): Variant[] {
  const dirty = dirtyLabel.replace(/^dirty budget /, 'dirty ').replace(/ \(.*\)$/, '');
  return [
    { engine: 'tetradb', label: `tetradb, cache 32 MiB, ${dirty}`, cacheBytes: SMALL_CACHE_BYTES, tetra: true },
    { engine: 'tetradb', label: `tetradb, TETRA defaults (cache 256 MiB, ${dirty})`, cacheBytes: DEFAULT_CACHE_BYTES, tetra: true },
    { engine: 'sqlite-full', label: 'better-sqlite3, WAL, synchronous=FULL, cache 32 MiB', cacheBytes: SMALL_CACHE_BYTES, tetra: false },
    { engine: 'leveldb', label: 'LevelDB (classic-level), sync batches, cache 32 MiB', cacheBytes: SMALL_CACHE_BYTES, tetra: false },
  ];
}

function render(size: number, rows: MemoryRow[], config: Config): string {
  const out: string[] = [];
  const randomKeys = Math.min(size, config.randomCap);
  const capNote = randomKeys < size
    ? ` **Random order capped at ${fmtInt(randomKeys)} keys** (--random-cap=${config.randomCap}${config.sizes.includes(randomKeys) ? `: the same runs as in the ${fmtInt(randomKeys)}-key table` : ''}): a scrambled load into a B+tree with a bounded dirty budget rewrites a large part of the tree at every checkpoint, so ${fmtInt(size)} keys in random order would take far longer than the time allowed per run (--max-seconds=${config.maxSeconds}).`
    : '';
  out.push(`### ${fmtInt(size)} keys\n`);
  out.push(`Batches of 1,000 rows, each a durable transaction, one writer.${capNote}\n`);
  const base = (order: LoadOrder): MemoryRow | undefined => rows.find((r) => r.task.order === order && r.task.engine === 'tetradb' && r.task.cacheBytes === SMALL_CACHE_BYTES);
  out.push(
    table(
      ['engine, settings', 'order', 'keys loaded', 'keys/s', 'vs tetradb 32 MiB', 'peak RSS MiB', 'RSS vs tetradb', 'RSS at end MiB', 'peak heap / buffers MiB', 'event loop p50 / p99 / max ms', 'GC pauses total / max ms', 'dirty peak / budget MiB', 'files MiB: end of load / after close', 'close s'],
      rows.map((r) => {
        const b = base(r.task.order);
        const rate = r.loaded / r.loadSeconds;
        const cut = r.loaded < r.task.size ? ` (stopped at ${config.maxSeconds} s of ${fmtInt(r.task.size)})` : r.task.size < size ? ' (cap)' : '';
        return [
          r.task.label,
          r.task.order,
          `${fmtInt(r.loaded)}${cut}`,
          fmtInt(rate),
          b ? fmtRatio(rate / (b.loaded / b.loadSeconds)) : '-',
          fmtInt(r.peakRssMiB),
          b ? fmtRatio(r.peakRssMiB / b.peakRssMiB) : '-',
          fmtInt(r.endRssMiB),
          `${fmtInt(r.peakHeapMiB)} / ${fmtInt(r.peakBuffersMiB)}`,
          `${fmtNum(r.loop.p50Ms)} / ${fmtNum(r.loop.p99Ms)} / ${fmtNum(r.loop.maxMs)}`,
          `${fmtInt(r.gc.totalMs)} / ${fmtNum(r.gc.maxMs)}`,
          r.dirtyLimitMiB !== undefined ? `${fmtNum(r.extraPeaks.dirtyMiB)} / ${fmtNum(r.dirtyLimitMiB, 0)}` : '-',
          `${fmtInt(r.filesEndOfLoadMiB)} / ${fmtInt(r.filesAfterCloseMiB)}`,
          fmtNum(r.closeSeconds, 2),
        ];
      }),
      2,
    ),
  );
  return out.join('\n');
}

async function main(): Promise<void> {
  const config = parseArgs(process.argv.slice(2));
  const dirty = dirtyBudgetFromEnv();
  const { root, cleanup } = scratchDir('tetradb-membench-');
  const started = Date.now();
  const header = machineLine();
  process.stderr.write(`tetradb memory benchmark (${config.quick ? 'quick' : 'full'}): sizes ${config.sizes.map(fmtCount).join(', ')}, random order capped at ${fmtCount(config.randomCap)}; tetradb ${dirty.label}\n`);
  const sections: string[] = [];
  const results = new Map<number, MemoryRow[]>();
  try {
    // A capped random-order load can be the same for several sizes: it runs once and its rows
    // appear in each of their tables.
    const done = new Map<string, MemoryRow>();
    let n = 0;
    for (const size of config.sizes) {
      const rows: MemoryRow[] = [];
      for (const order of ['ascending', 'random'] as const) {
        const keys = order === 'random' ? Math.min(size, config.randomCap) : size;
        for (const v of variants(dirty.label).filter((x) => config.engines.includes(x.engine))) {
          const id = `${v.label}|${order}|${keys}`;
          let row = done.get(id);
          if (row === undefined) {
            const task: MemoryTask = {
              engine: v.engine,
              label: v.label,
              dir: join(root, `run-${n++}`),
              size: keys,
              order,
              cacheBytes: v.cacheBytes,
              ...(v.tetra && dirty.bytes !== undefined ? { dirtyBytes: dirty.bytes } : {}),
              maxSeconds: config.maxSeconds,
            };
            row = await runWorker<MemoryRow>(workerPath, task, `${v.label}: ${fmtCount(keys)} keys, ${order}`);
            done.set(id, row);
          }
          rows.push(row);
        }
      }
      results.set(size, rows);
      sections.push(render(size, rows, config));
    }
  } finally {
    cleanup();
  }

  // Memory is bounded by configuration, never by data size: once the bounded tetradb row has
  // filled its budgets (dirty budget at least half used, which starts checkpoints), its peak RSS
  // should not grow with the number of keys. Reported, not asserted.
  const checks: string[] = [];
  const largest = Math.max(...config.sizes);
  for (const order of ['ascending', 'random'] as const) {
    const bounded = config.sizes
      .map((size) => results.get(size)?.find((r) => r.task.order === order && r.task.engine === 'tetradb' && r.task.cacheBytes === SMALL_CACHE_BYTES))
      .filter((r): r is MemoryRow => r !== undefined && r.dirtyLimitMiB !== undefined && r.extraPeaks.dirtyMiB! >= r.dirtyLimitMiB / 2)
      .sort((x, y) => x.task.size - y.task.size);
    const a = bounded[0];
    const b = bounded[bounded.length - 1];
    if (a && b && a.task.size !== b.task.size) {
      const ok = b.peakRssMiB <= a.peakRssMiB * 1.25 + 16;
      checks.push(`${ok ? 'PASS' : 'FAIL'}  tetradb (cache 32 MiB) peak RSS does not grow with data (${order}): ${fmtInt(a.peakRssMiB)} MiB at ${fmtInt(a.task.size)} keys, ${fmtInt(b.peakRssMiB)} MiB at ${fmtInt(b.task.size)} keys (allowed: +25% + 16 MiB)`);
    } else {
      checks.push(`n/a   tetradb (cache 32 MiB) peak RSS vs data size (${order}): fewer than two distinct sizes (up to ${fmtInt(largest)} keys) filled half the dirty budget`);
    }
  }
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  process.stdout.write(
    [
      `## tetradb memory under sustained writes (${config.quick ? 'quick' : 'full'} run, ${minutes} min)\n`,
      header,
      `- tetradb: ${dirty.label}; memory sampled every 250 ms without forced GC; event-loop delay from monitorEventLoopDelay (resolution 10 ms: values include the 10 ms timer period, so an idle loop shows ~10 ms)`,
      '- Each load runs in its own process; "RSS at end" is the last sample, right after the last batch was acknowledged, before close. better-sqlite3 commits synchronously: the loader yields one event-loop turn between its batches.\n',
      ...sections.flatMap((s) => [s, '']),
      ...(checks.length > 0 ? ['### Checks\n', '```', ...checks, '```', ''] : []),
    ].join('\n'),
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
