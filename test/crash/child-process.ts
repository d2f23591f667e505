import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CHILD = fileURLToPath(new URL('./crash-child.ts', import.meta.url));

export interface ChildRun {
  stdout: () => string;
  stderr: () => string;
  ready: Promise<void>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill: () => void;
}

/** Spawns the crash child with tsx; `env` adds variables (e.g. TETRA_FAILPOINT). */
export function runChild(args: string[], env: Record<string, string> = {}): ChildRun {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
    if (out.startsWith('ready\n') || out.includes('\nready\n')) onReady();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      onReady();
      resolve({ code, signal });
    }),
  );
  return { stdout: () => out, stderr: () => err, ready, exited, kill: () => child.kill('SIGKILL') };
}
