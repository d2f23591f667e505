import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

// The memory governor (engine/storage/memory-governor.ts) against the real server: a load over
// HTTP that, without the governor, takes the process's RSS well past what the configuration
// gives the engine (cache + dirty budget) must, with it, keep the RSS growth within that bound.
// RSS is read from /proc every 20 ms, more often than the governor reads it.

const MiB = 1024 * 1024;
const CACHE = 160 * MiB;
const DIRTY = 32 * MiB;
const BOUND = CACHE + DIRTY;
const DOCS = 200_000;
const BATCH = 1000;
const PAGE = 4096;

const servers: ServerProcess[] = [];
const dirs: Array<{ remove: () => void }> = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill('SIGKILL');
    await s.exited;
  }
  for (const d of dirs.splice(0)) d.remove();
});

function rssBytes(pid: number): number {
  // statm: size resident shared ... in pages.
  return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * PAGE;
}

async function post(server: ServerProcess, path: string, body: unknown, key?: string): Promise<any> {
  // A request that fails says what the server said and whether it is still running: the
  // server's output is otherwise lost with the process.
  const res = await fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { authorization: `Bearer ${key}` }) },
    body: JSON.stringify(body),
  }).catch((err: Error) => {
    const state = server.child.exitCode !== null || server.child.signalCode !== null ? `exited (${server.child.exitCode ?? server.child.signalCode})` : 'still running';
    throw new Error(`${path} failed: ${err.message} (${String((err as { cause?: unknown }).cause ?? '')}); the server is ${state}; its output:\n${server.output()}`);
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

/** Loads DOCS documents (an indexed random key, ~900 bytes each) into a fresh server; returns its peak RSS growth and what it holds after. */
async function load(memoryCheckMs: number): Promise<{ peakGrowth: number; count: number }> {
  const dir = tempDir('rss-bound');
  dirs.push(dir);
  const server = await spawnServer(dir.path, ['--cache-bytes', String(CACHE), '--dirty-bytes', String(DIRTY), '--rate-limit', '0', '--memory-check-ms', String(memoryCheckMs)]);
  servers.push(server);
  const pid = server.child.pid!;
  const { apiKey } = await post(server, '/api/auth/signup', { orgName: 'RSS', email: `rss-${memoryCheckMs}@example.com` });
  await post(server, '/api/mql/createIndex', { collection: 'items', keys: { k: 1 } }, apiKey);
  const base = rssBytes(pid);
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, 20);
  try {
    let seed = 12345;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
    for (let from = 0; from < DOCS; from += BATCH) {
      const documents = [];
      for (let i = from; i < from + BATCH; i++) documents.push({ _id: i, k: random().toString(16).padStart(8, '0'), pad: `${i} ${'x'.repeat(880)}` });
      await post(server, '/api/mql/insertMany', { collection: 'items', documents }, apiKey);
    }
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, rssBytes(pid));
  const { count } = await post(server, '/api/mql/countDocuments', { collection: 'items', filter: {} }, apiKey);
  return { peakGrowth: peak - base, count };
}

describe.runIf(process.platform === 'linux')('the memory governor bounds the RSS growth by cache + dirty budget', () => {
  it(`${DOCS.toLocaleString('en-US')} documents over HTTP: past the bound without it, within it with it`, async () => {
    const without = await load(0);
    expect(without.count).toBe(DOCS);
    // The load must be one that needs the governor, or the second half proves nothing.
    expect(without.peakGrowth, `without the governor: ${(without.peakGrowth / MiB).toFixed(0)} MiB against ${BOUND / MiB}`).toBeGreaterThan(BOUND);

    const governed = await load(100);
    console.info(`RSS growth loading ${DOCS} documents: ${(without.peakGrowth / MiB).toFixed(0)} MiB without the governor, ${(governed.peakGrowth / MiB).toFixed(0)} with it; bound ${BOUND / MiB} MiB`);
    expect(governed.count).toBe(DOCS);
    expect(governed.peakGrowth, `with the governor: ${(governed.peakGrowth / MiB).toFixed(0)} MiB against ${BOUND / MiB} (without: ${(without.peakGrowth / MiB).toFixed(0)})`).toBeLessThanOrEqual(BOUND);
  }, 180_000);
});
