// CPU per call of $setWindowFields pipelines whose partitions fit in memory, this checkout against
// another commit's: a probe for changes to the window functions' in-memory path (the spilling
// partition of 2026-12, which made every window function work document after document).
//
// Each version runs in its own child processes (a temporary git worktree of the base commit,
// sharing this checkout's node_modules), alternating, so JIT and memory layout are each its own;
// a child compiles each pipeline once, runs it over the same generated documents in process
// (compilePipeline over an in-memory stream, the default 64 MiB bound: nothing spills), warms up,
// then reports the median CPU time (user + system) of its calls. The table gives, per pipeline,
// the median over the children of each version and their ratio. Timings are the host's: compare
// the ratio, not the milliseconds, and repeat a run before believing a change of a few percent.
//
//   npm --prefix bench run window-probe -- --base=<commit> [--docs=100000] [--calls=7] [--processes=3] [--pipelines=a,b]
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { checkoutBase, repoRoot } from './lib/base-checkout.js';
import { flagValue } from './lib/report.js';

type Doc = Record<string, unknown>;

/** The pipelines: each a $setWindowFields family over the generated documents. */
const PIPELINES: Record<string, Doc[]> = {
  // The sort alone ($setWindowFields sorts by partition and sortBy first): what the others cost beyond it.
  sort: [{ $sort: { g: 1, k: 1 } }],
  // 50 partitions of 2,000: ranks, a running sum, a $push of neighbours (the aggregate bench's).
  ranks: [{ $setWindowFields: { partitionBy: '$g', sortBy: { k: 1 }, output: { rank: { $rank: {} }, running: { $sum: '$n', window: { documents: ['unbounded', 'current'] } }, around: { $push: '$_id', window: { documents: [-1, 1] } } } } }],
  // One partition: sliding windows of 101 documents.
  sliding: [{ $setWindowFields: { sortBy: { _id: 1 }, output: { avg: { $avg: '$n', window: { documents: [-50, 50] } }, lo: { $min: '$n', window: { documents: [-50, 50] } }, sd: { $stdDevPop: '$n', window: { documents: [-50, 0] } } } } }],
  // Range windows over a numeric sortBy, 10 partitions.
  range: [{ $setWindowFields: { partitionBy: '$small', sortBy: { t: 1 }, output: { near: { $sum: '$n', window: { range: [-100, 100] } }, count: { $count: {}, window: { range: [-50, 0] } }, first: { $first: '$_id', window: { range: [-20, 20] } } } } }],
  // Whole-partition values (computed once per partition), 50 partitions.
  whole: [{ $setWindowFields: { partitionBy: '$g', output: { total: { $sum: '$n' }, top: { $max: '$n' } } } }],
  // $fill: locf and linear over one partition.
  fill: [{ $fill: { sortBy: { _id: 1 }, output: { m: { method: 'locf' }, n2: { method: 'linear' } } } }],
  // N functions and a percentile over sliding windows, 10 partitions.
  nfunctions: [{ $setWindowFields: { partitionBy: '$small', sortBy: { _id: 1 }, output: { top: { $maxN: { input: '$n', n: 3 }, window: { documents: [-20, 0] } }, med: { $median: { input: '$n', method: 'approximate' }, window: { documents: [-10, 10] } }, shifted: { $shift: { output: '$n', by: -1, default: 0 } } } } }],
};

/** The documents: `count` of them, as the same seed makes them in every child. */
function documents(count: number): Doc[] {
  let seed = 42;
  const rand = (): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  return Array.from({ length: count }, (_, i) => {
    const d: Doc = { _id: i, g: `g${i % 50}`, small: `s${i % 10}`, k: Math.floor(rand() * 1000), n: Math.floor(rand() * 2000) - 1000, t: Math.floor(rand() * 100_000), text: `document ${i}` };
    if (rand() < 0.7) d['m'] = Math.floor(rand() * 100);
    if (rand() < 0.5) d['n2'] = Math.floor(rand() * 100);
    return d;
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// ---- Child: one version ------------------------------------------------------------------------

async function child(root: string, args: string[]): Promise<void> {
  const { compilePipeline, IN_MEMORY_ONLY } = (await import(pathToFileURL(join(root, 'engine/docs/index.ts')).href)) as typeof import('../engine/docs/index.js');
  const docs = documents(Number(flagValue(args, 'docs') ?? 100_000));
  const calls = Number(flagValue(args, 'calls') ?? 7);
  const names = (flagValue(args, 'pipelines') ?? Object.keys(PIPELINES).join(',')).split(',');
  async function* input(): AsyncIterable<Doc[]> {
    for (let i = 0; i < docs.length; i += 256) yield docs.slice(i, i + 256);
  }
  const out: Record<string, number> = {};
  for (const name of names) {
    const pipeline = compilePipeline(PIPELINES[name]);
    const once = async (): Promise<number> => {
      const before = process.cpuUsage();
      let n = 0;
      for await (const chunk of pipeline.run(input(), { lookup: async () => [], scan: input, vars: undefined, memory: IN_MEMORY_ONLY })) n += chunk.length;
      const used = process.cpuUsage(before);
      if (n !== docs.length) throw new Error(`${name} gave ${n} documents`);
      return (used.user + used.system) / 1000;
    };
    await once();
    await once();
    const times: number[] = [];
    for (let c = 0; c < calls; c++) times.push(await once());
    out[name] = median(times);
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

// ---- Parent: the two versions, alternating ------------------------------------------------------

function runChild(root: string, args: string[]): Promise<Record<string, number>> {
  const proc = spawn(process.execPath, ['--import', join(repoRoot, 'bench/lib/ts-register.mjs'), fileURLToPath(import.meta.url), `--child=${root}`, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let result: Record<string, number> | undefined;
    createInterface({ input: proc.stdout }).on('line', (line) => {
      result = JSON.parse(line) as Record<string, number>;
    });
    proc.on('exit', (code) => (code === 0 && result !== undefined ? resolve(result) : reject(new Error(`child for ${root} exited ${code}`))));
  });
}

async function parent(args: string[]): Promise<void> {
  const base = flagValue(args, 'base');
  if (base === undefined) throw new Error('--base=<commit> is required');
  const processes = Number(flagValue(args, 'processes') ?? 3);
  const passed = args.filter((a) => !a.startsWith('--base=') && !a.startsWith('--processes='));
  const checkout = checkoutBase(base, 'tetra-window-probe-');
  try {
    const runs: [Array<Record<string, number>>, Array<Record<string, number>>] = [[], []];
    for (let p = 0; p < processes; p++) {
      runs[0].push(await runChild(checkout.root, passed));
      runs[1].push(await runChild(repoRoot, passed));
    }
    console.log(`$setWindowFields in memory, CPU ms per call (median of ${processes} processes each): ${checkout.describe()}`);
    console.log(`${'pipeline'.padEnd(12)} ${checkout.labels[0].padStart(24)} ${checkout.labels[1].padStart(36)}  ratio`);
    for (const name of Object.keys(runs[1][0]!)) {
      const a = median(runs[0].map((r) => r[name]!));
      const b = median(runs[1].map((r) => r[name]!));
      console.log(`${name.padEnd(12)} ${a.toFixed(1).padStart(24)} ${b.toFixed(1).padStart(36)}  ${(b / a).toFixed(2)}x`);
    }
  } finally {
    checkout.remove();
  }
}

const childRoot = flagValue(process.argv.slice(2), 'child');
if (childRoot !== undefined) await child(childRoot, process.argv.slice(2));
else await parent(process.argv.slice(2));
