// Servers for the HTTP benchmarks, each in a process of its own: a tetradb server started the way
// `npm start` starts it (server/start.mjs, configuration from flags and the environment), and the
// peers under bench/servers/, which print "ready" once listening. Plus the process-level figures
// the tables show (RSS of a process, PSS of PostgreSQL's processes).
import { spawn, type ChildProcess } from 'node:child_process';
import type pg from 'pg';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { TS_REGISTER } from './report.js';

const benchDir = fileURLToPath(new URL('..', import.meta.url));

/** A TCP port nobody listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a peer server (TypeScript under bench/, compiled as lib/ts-hooks.mjs does) and resolves once it prints "ready";
 * rejects with the first line it printed otherwise when it exits first.
 */
export async function startPeer(script: string, args: string[], env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', TS_REGISTER, script, ...args], { stdio: ['ignore', 'pipe', 'inherit'], cwd: benchDir, env: { ...process.env, ...env } });
  let said = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      said += c.toString();
      if (said.includes('ready')) resolve();
    });
    child.on('exit', (code) => reject(new Error(said.trim().split('\n')[0] || `${script} exited with ${code}`)));
  });
  return child;
}

/** Waits until `url` answers at all (any status). */
export async function waitHttp(url: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      await fetch(url);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${url} did not come up`);
}

/** VmRSS of a process in MiB (NaN when it is gone). */
export function rssMiB(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/**
 * Memory of every PostgreSQL process on the machine (comm "postgres"): the sum of their PSS, so
 * shared buffers count once however many backends map them. NaN when none is readable (PSS of
 * another user's process needs root).
 */
export function postgresPssMiB(): number {
  let kb = 0;
  let seen = 0;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/comm`, 'utf8').trim() !== 'postgres') continue;
      const m = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${name}/smaps_rollup`, 'utf8'));
      if (m === null) continue;
      kb += Number(m[1]);
      seen++;
    } catch {
      // Gone, or not ours to read.
    }
  }
  return seen > 0 ? kb / 1024 : NaN;
}

/** Sends SIGTERM and waits for the process to finish (a tetradb server checkpoints first). */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

export interface TetraServer {
  child: ChildProcess;
  url: string;
  apiKey: string;
}

/**
 * A tetradb server as `npm start` runs it (server/start.mjs: server/main.ts compiled by esbuild, server/config.ts defaults,
 * this process's environment), with `flags` added, on a free port and `dataDir`; signs up one
 * tenant and returns its API key. Its stdout (log lines) is discarded.
 */
export async function startTetra(dataDir: string, flags: string[] = [], env: Record<string, string> = {}): Promise<TetraServer> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('../../server/start.mjs', import.meta.url)), '--port', '0', '--data-dir', dataDir, ...flags], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    cwd: benchDir,
    env: { ...process.env, ...env },
  });
  const url = await tetraReady(child);
  const res = await fetch(`${url}/api/auth/signup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ orgName: 'bench', email: 'bench@example.com' }) });
  if (res.status !== 201) throw new Error(`signup answered ${res.status}: ${await res.text()}`);
  const { apiKey } = (await res.json()) as { apiKey: string };
  return { child, url, apiKey };
}

/**
 * The URL a tetradb child started with --port 0 and an IPC channel listens on (its ready message,
 * server/main.ts), the channel closed after. A port picked here and passed in could be taken by
 * another process before the child binds it, and the benchmark would then measure that process.
 */
export function tetraReady(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const onMessage = (message: unknown): void => {
      const ready = message as { tetradb?: unknown; url?: unknown } | null;
      if (ready?.tetradb !== 'ready' || typeof ready.url !== 'string') return;
      child.off('exit', onExit);
      child.off('message', onMessage);
      child.disconnect();
      resolve(ready.url);
    };
    const onExit = (code: number | null): void => reject(new Error(`tetradb exited with ${code} before it was ready`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Samples `sample()` (MiB) every `intervalMs` until stop(), which returns the peak (NaN samples skipped). */
export function peakSampler(sample: () => number, intervalMs = 250): { stop(): number } {
  let peak = Number.NaN;
  const take = (): void => {
    const v = sample();
    // NaN <= x is false: the first finite sample always replaces a NaN peak.
    if (Number.isFinite(v) && !(v <= peak)) peak = v;
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop(): number {
      clearInterval(timer);
      take();
      return peak;
    },
  };
}

const TICK_US = 1_000_000 / 100; // USER_HZ is 100 on Linux

/** utime + stime of a process so far, in µs (from /proc/<pid>/stat). */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

/** A server an HTTP benchmark measures: where it answers, its key, and its memory (MiB). */
export interface HttpTarget {
  name: string;
  url: string;
  apiKey: string;
  memory: () => number;
  /** How often memory is sampled during a row (PostgreSQL's, summed over its processes, costs more to read). */
  sampleMs: number;
}

/**
 * The end of an HTTP benchmark run, however it ends: the servers it started killed, the table it
 * made in PostgreSQL dropped and its client closed, then (after the children had time to exit)
 * its scratch directory removed.
 */
export async function endHttpRun(children: readonly ChildProcess[], pgRun: { client: pg.Client; table: string } | undefined, cleanup: () => void): Promise<void> {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  if (pgRun !== undefined) {
    await pgRun.client.query(`DROP TABLE IF EXISTS ${pgRun.table}`).catch(() => undefined);
    await pgRun.client.end().catch(() => undefined);
  }
  await new Promise((r) => setTimeout(r, 300));
  cleanup();
}

/** One JSON POST to a target, with its key: the status and the parsed answer. */
export async function postJson(target: HttpTarget, path: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(`${target.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.apiKey}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}
