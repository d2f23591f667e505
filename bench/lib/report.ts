// Shared by the memory and stalls benchmarks: running a worker script in a process of its own,
// Markdown tables, number formats and a one-paragraph description of the machine and settings.
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_DIRTY_BYTES } from '../../engine/storage/index.js';

/** The value of a `--name=value` command-line flag, or undefined when absent. */
export function flagValue(argv: readonly string[], name: string): string | undefined {
  return argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** The --import that runs the benchmarks' TypeScript as npm start runs the service's (lib/ts-hooks.mjs). */
export const TS_REGISTER = fileURLToPath(new URL('./ts-register.mjs', import.meta.url));

export const MiB = 2 ** 20;

/**
 * A scratch directory for one benchmark run and its cleanup, which also runs on Ctrl-C (the
 * workers' data lives below it).
 */
export function scratchDir(prefix: string): { root: string; cleanup: () => void } {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const cleanup = (): void => rmSync(root, { recursive: true, force: true });
  process.once('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  return { root, cleanup };
}

/**
 * Runs `script` (TypeScript, compiled as npm start compiles it: lib/ts-hooks.mjs) in a fresh process with `task` as its argument and
 * returns the one message it sends. No --expose-gc unless `nodeFlags` adds it: nothing forces a
 * collection, so memory is what an operator would see.
 */
export function runWorker<R>(script: string, task: unknown, label: string, nodeFlags: string[] = []): Promise<R> {
  process.stderr.write(`  running ${label}...\n`);
  return new Promise((resolve, reject) => {
    const child = fork(script, [JSON.stringify(task)], {
      cwd: fileURLToPath(new URL('..', import.meta.url)),
      execArgv: [...nodeFlags, '--import', TS_REGISTER],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: R | undefined;
    const interrupt = (): void => void child.kill('SIGKILL');
    process.once('SIGINT', interrupt);
    child.on('message', (message) => (result = message as R));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      process.off('SIGINT', interrupt);
      if (result !== undefined && code === 0) resolve(result);
      else reject(new Error(`${label} failed (exit ${code ?? signal})`));
    });
  });
}

/** A Markdown table; the first `textColumns` columns align left, the rest right. */
export function table(header: string[], rows: string[][], textColumns = 1): string {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, i) => (i < textColumns ? '---' : '---:')).join('|')}|`];
  for (const r of rows) lines.push(`| ${r.join(' | ')} |`);
  return lines.join('\n');
}

export function fmtInt(n: number | undefined): string {
  return n !== undefined && Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-';
}

export function fmtNum(n: number | undefined, digits = 1): string {
  return n !== undefined && Number.isFinite(n) ? n.toFixed(digits) : '-';
}

export function fmtRatio(n: number | undefined): string {
  return n !== undefined && Number.isFinite(n) ? `${n.toFixed(2)}x` : '-';
}

/** A duration in microseconds, in the unit that suits it: "8.25 µs", "412.0 µs", "3.10 ms", "1.20 s". */
export function fmtUs(us: number | undefined): string {
  if (us === undefined || !Number.isFinite(us)) return '-';
  if (us < 1000) return `${us.toFixed(us < 10 ? 2 : 1)} µs`;
  if (us < 1e6) return `${(us / 1000).toFixed(2)} ms`;
  return `${(us / 1e6).toFixed(2)} s`;
}

/** `part` as a whole percentage of `whole`: "23%". */
export function fmtShare(part: number, whole: number): string {
  return `${((100 * part) / whole).toFixed(0)}%`;
}

/** The installed version of one of bench/'s packages, or "?". */
export function packageVersion(pkg: string): string {
  // Read from node_modules directly: some packages' "exports" hide their package.json.
  try {
    return (JSON.parse(readFileSync(fileURLToPath(new URL(`../node_modules/${pkg}/package.json`, import.meta.url)), 'utf8')) as { version: string }).version;
  } catch {
    return '?';
  }
}

/** 1000000 -> "1M", 100000 -> "100k". */
export function fmtCount(n: number): string {
  if (n >= 1e6 && n % 1e5 === 0) return `${n / 1e6}M`;
  if (n >= 1e3 && n % 1e2 === 0) return `${n / 1e3}k`;
  return fmtInt(n);
}

/**
 * The dirty budget the benchmarks give tetradb: TETRA_DIRTY_BYTES from the environment when set
 * (the server's setting of the same name), else undefined (the engine's default), with a label.
 */
export function dirtyBudgetFromEnv(): { bytes: number | undefined; label: string } {
  const raw = process.env.TETRA_DIRTY_BYTES;
  if (raw === undefined || raw.trim() === '') return { bytes: undefined, label: `dirty budget ${DEFAULT_DIRTY_BYTES / MiB} MiB (engine default; TETRA_DIRTY_BYTES unset)` };
  const bytes = Number(raw);
  if (!Number.isSafeInteger(bytes) || bytes <= 0) throw new Error(`TETRA_DIRTY_BYTES must be a positive integer, got ${JSON.stringify(raw)}`);
  return { bytes, label: `dirty budget ${fmtNum(bytes / MiB)} MiB (TETRA_DIRTY_BYTES=${raw})` };
}

/** CPU, memory, kernel, Node, the load average now (other work shares the cores and disk) and the engine's commit. */
export function machineLine(): string {
  return [
    `- ${cpus()[0]?.model ?? 'unknown CPU'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, Linux ${release()}, Node ${process.version}; load average (1 min) ${loadavg()[0]!.toFixed(2)}`,
    `- tetradb engine: ${engineVersion()}`,
  ].join('\n');
}

/** The commit the engine was built from, and any engine files changed since (uncommitted work). */
export function engineVersion(): string {
  try {
    const repo = fileURLToPath(new URL('../..', import.meta.url));
    const head = execFileSync('git', ['-C', repo, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['-C', repo, 'status', '--porcelain', '--', 'engine'], { encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => l.slice(3));
    return `commit ${head}${dirty.length > 0 ? ` plus uncommitted changes to ${dirty.join(', ')}` : ''}`;
  } catch {
    return 'unknown (not a git checkout)';
  }
}

/** What growthTable needs of a run: the operations, engines and sizes, and how to read them. */
export interface GrowthTableInput<Op, Engine> {
  ops: readonly Op[];
  engines: readonly Engine[];
  sizes: readonly number[];
  /** ops/s of an operation, undefined when that engine has no figure at that size. */
  hz(engine: Engine, size: number, op: Op): number | undefined;
  /** The cell of an engine at a size: its ops/s, or why it has none ('-', 'skipped', 'n/a'). */
  cell(engine: Engine, size: number, op: Op): string;
  opLabel(op: Op): string;
  /** Headers of the first column and of each size's column. */
  opHeader: string;
  sizeHeader(size: number): string;
}

/** The "growth with size" table: ops/s of each operation and engine at each size, and the cost of the largest size against the smallest. */
export function growthTable<Op, Engine extends string>(g: GrowthTableInput<Op, Engine>): string {
  const first = g.sizes[0]!;
  const last = g.sizes[g.sizes.length - 1]!;
  const rows: string[][] = [];
  for (const op of g.ops) {
    for (const engine of g.engines) {
      const a = g.hz(engine, first, op);
      const b = g.hz(engine, last, op);
      rows.push([g.opLabel(op), engine, ...g.sizes.map((s) => g.cell(engine, s, op)), a !== undefined && b !== undefined ? fmtRatio(a / b) : '-']);
    }
  }
  return table([g.opHeader, 'engine', ...g.sizes.map((s) => g.sizeHeader(s)), `cost ${fmtCount(last)} / ${fmtCount(first)}`], rows, 2);
}
