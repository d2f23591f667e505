// What a $group costs per group, in memory and spilled past the query's memory bound (docs/benchmarks.md,
// "Run of 2026-11-27, session 34: spilled $group").
//
//   npm --prefix bench run group-spill-probe -- [--sizes=100000,1000000] [--groups=10000,100000,1000000]
//        [--bounds=8,default] [--accs=sum,mix] [--reps=5] [--dir=PATH] [--check]
//
// A TenantStore opened as the server opens a tenant (bench/lib/docs-engines.ts openTetraTenant,
// server/config.ts as `npm start` reads it) with a spill area in its data directory, as
// bench/lib/agg-engines.ts opens it. Documents: makeQueryDocument(i) and three group fields
// g10000, g100000, g1000000 (`k<(i * 7919) mod G>`: each value as often as any other, spread over
// the input, so a spilled group's partial states lie in many runs). Each pipeline is
// `[{$group: {_id: "$g<G>", ...accumulators}}, {$count: "groups"}]` (the answer is one document;
// the groups are still made, merged and output), with G distinct groups at most (G, or the
// collection's size when smaller). Accumulators: `sum` ({total: {$sum: "$n"}}, group-email's) or
// `mix` ($sum of 1, $avg of age, $first of name, $push of age, $addToSet of city).
// Bounds: MiB per blocking stage (`default`: TETRA_MQL_BLOCKING_BYTES as the server reads it).
//
// For each: one warm-up call, then --reps calls; the median CPU time of the process per call
// (user + system: the thread pool's reads and writes of spill files included), wall time, the
// bytes written to spill files per call, and the CPU per group beyond a one-group call of the
// same accumulators (`_id: null`: the same fields read, the same expressions evaluated).
// --dir: the store's directory, kept; loaded once (reuse it to compare two versions of the code on
// the same data). --check: each spilled answer is compared, as a set of groups, with the answer of
// an unbounded call (the same pipeline without $count).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { docsAggregate, docsCount, docsInsert } from '../engine/docs/index.js';
import { SPILL_DIR, SpillArea, type SpillSpace } from '../engine/storage/index.js';
import { loadConfig } from '../server/config.js';
import { makeQueryDocument } from './lib/documents.js';
import { openTetraTenant, tetraSettingsOf } from './lib/docs-engines.js';
import { flagValue, fmtCount, fmtNum, MiB, table } from './lib/report.js';

type Doc = Record<string, unknown>;

const argv = process.argv.slice(2);
const list = (name: string, fallback: string): string[] => (flagValue(argv, name) ?? fallback).split(',').filter(Boolean);
const sizes = list('sizes', '100000,1000000').map(Number);
const groupCounts = list('groups', '10000,100000,1000000').map(Number);
const server = loadConfig(process.env, []);
const settings = tetraSettingsOf(server);
const bounds = list('bounds', '8,default').map((b) => (b === 'default' ? settings.mqlBlockingBytes : Math.round(Number(b) * MiB)));
const accNames = list('accs', 'sum,mix');
const reps = Number(flagValue(argv, 'reps') ?? 5);
const check = argv.includes('--check');
const keepDir = flagValue(argv, 'dir');
if (![...sizes, ...groupCounts, ...bounds, reps].every((n) => Number.isInteger(n) && n > 0)) throw new Error('usage: group-spill-probe.ts [--sizes=N,N] [--groups=N,N] [--bounds=MiB|default,...] [--accs=sum,mix] [--reps=N] [--dir=PATH] [--check]');

const ACCUMULATORS: Record<string, Doc> = {
  sum: { total: { $sum: '$n' } },
  mix: { n: { $sum: 1 }, avgAge: { $avg: '$profile.age' }, first: { $first: '$name' }, ages: { $push: '$profile.age' }, cities: { $addToSet: '$profile.city' } },
};
for (const a of accNames) if (ACCUMULATORS[a] === undefined) throw new Error(`unknown --accs ${a} (sum, mix)`);

/** The group fields every document carries, one per group count asked for. */
const GROUP_FIELDS = [10_000, 100_000, 1_000_000];
for (const g of groupCounts) if (!GROUP_FIELDS.includes(g)) throw new Error(`--groups takes ${GROUP_FIELDS.join(', ')}`);

function probeDocument(i: number): Doc {
  const d: Doc = { ...makeQueryDocument(i) };
  for (const g of GROUP_FIELDS) d[`g${g}`] = `k${(i * 7919) % g}`;
  return d;
}

/** A spill area that counts the bytes its queries write (SpillSpace.charge sees every record). */
class CountingSpillArea extends SpillArea {
  written = 0;

  override begin(): SpillSpace {
    const space = super.begin();
    const charge = space.charge.bind(space);
    space.charge = (n: number): void => {
      if (n > 0) this.written += n;
      charge(n);
    };
    return space;
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** CPU milliseconds of the process (all its threads) since `from`. */
const cpuMs = (from: NodeJS.CpuUsage): number => {
  const u = process.cpuUsage(from);
  return (u.user + u.system) / 1000;
};

interface Timed {
  cpuMs: number;
  wallMs: number;
  spillBytes: number;
  docs: Doc[];
}

async function main(): Promise<void> {
  const rows: string[][] = [];
  for (const size of sizes) {
    const dir = keepDir === undefined ? mkdtempSync(join(tmpdir(), 'group-spill-probe-')) : join(keepDir, String(size));
    mkdirSync(dir, { recursive: true });
    const tenant = await openTetraTenant(dir, settings);
    const store = tenant.store;
    const spill = new CountingSpillArea(join(dir, SPILL_DIR), settings.mqlSpillBytes);
    await spill.removeLeftovers();
    try {
      const have = await docsCount(store, 'people', {});
      if (have !== size) {
        if (have !== 0) throw new Error(`${dir} holds ${have} documents, not ${size}: use another --dir`);
        const t = performance.now();
        for (let i = 0; i < size; i += 1000) {
          const batch: Doc[] = [];
          for (let j = i; j < Math.min(size, i + 1000); j++) batch.push(probeDocument(j));
          await docsInsert(store, 'people', batch).durable;
        }
        await store.checkpoint();
        process.stderr.write(`loaded ${fmtCount(size)} documents in ${fmtNum((performance.now() - t) / 1000)} s\n`);
      }
      const run = async (pipeline: Doc[], maxBlockingBytes: number): Promise<Timed> => {
        const before = spill.written;
        const cpu = process.cpuUsage();
        const t = performance.now();
        const docs = (await docsAggregate(store, 'people', pipeline, { memory: { maxBlockingBytes, spill } })).documents as Doc[];
        return { cpuMs: cpuMs(cpu), wallMs: performance.now() - t, spillBytes: spill.written - before, docs };
      };
      const timed = async (pipeline: Doc[], maxBlockingBytes: number): Promise<{ cpu: number; wall: number; spill: number; docs: Doc[] }> => {
        let last = await run(pipeline, maxBlockingBytes); // warm-up
        const cpu: number[] = [];
        const wall: number[] = [];
        for (let r = 0; r < reps; r++) {
          last = await run(pipeline, maxBlockingBytes);
          cpu.push(last.cpuMs);
          wall.push(last.wallMs);
        }
        return { cpu: median(cpu), wall: median(wall), spill: last.spillBytes, docs: last.docs };
      };
      for (const accs of accNames) {
        const acc = ACCUMULATORS[accs]!;
        const one = await timed([{ $group: { _id: null, ...acc } }, { $count: 'groups' }], settings.mqlBlockingBytes);
        for (const g of groupCounts) {
          // Past the collection's size a group count gives the same groups as the smallest one past it: run once.
          if (g > size && groupCounts.some((h) => h >= size && h < g)) continue;
          const groups = Math.min(g, size);
          const group = { $group: { _id: `$g${g}`, ...acc } };
          let unbounded: Doc[] | undefined;
          for (const bound of bounds) {
            const x = await timed([group, { $count: 'groups' }], bound);
            const got = (x.docs[0]?.['groups'] as number | undefined) ?? 0;
            if (got !== groups) throw new Error(`${accs}, ${groups} groups, bound ${bound}: ${got} groups came out`);
            let checked = '-';
            if (check && x.spill > 0) {
              unbounded ??= (await run([group], Number.MAX_SAFE_INTEGER)).docs;
              const spilled = (await run([group], bound)).docs;
              checked = sameGroups(spilled, unbounded) ? 'same' : 'DIFFERENT';
              if (checked !== 'same') process.exitCode = 1;
            }
            rows.push([
              fmtCount(size),
              fmtCount(groups),
              accs,
              bound === settings.mqlBlockingBytes ? `${fmtNum(bound / MiB, 0)} MiB (default)` : `${fmtNum(bound / MiB, 0)} MiB`,
              fmtNum(x.cpu, 0),
              fmtNum(x.wall, 0),
              fmtNum(one.cpu, 0),
              fmtNum(((x.cpu - one.cpu) * 1000) / groups, 2),
              x.spill === 0 ? '0' : fmtNum(x.spill / MiB, 1),
              checked,
            ]);
            process.stderr.write(`  ${rows.at(-1)!.join(' | ')}\n`);
          }
        }
      }
    } finally {
      await tenant.close();
      if (keepDir === undefined) rmSync(dir, { recursive: true, force: true });
    }
  }
  process.stdout.write(`$group per group, ${reps} calls each after a warm-up, medians; node ${process.version}\n\n`);
  process.stdout.write(
    table(['documents', 'groups', 'accumulators', 'bound', 'CPU ms a call', 'wall ms', 'one-group CPU ms', 'µs CPU a group beyond one group', 'spilled MiB a call', 'vs unbounded'], rows, 4),
  );
  process.stdout.write('\n');
}

/** Two answers of the same $group hold the same groups (in any order). */
function sameGroups(a: Doc[], b: Doc[]): boolean {
  if (a.length !== b.length) return false;
  const key = (d: Doc): string => JSON.stringify(d['_id']);
  const byKey = new Map(b.map((d) => [key(d), JSON.stringify(d)]));
  return a.every((d) => byKey.get(key(d)) === JSON.stringify(d));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
