import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/temp-dir.js';

const CHILD = fileURLToPath(new URL('./bulk-load-child.ts', import.meta.url));
const QUIET_CHILD = fileURLToPath(new URL('./quiet-tenant-child.ts', import.meta.url));
const MiB = 1024 * 1024;

interface Sample {
  label: string;
  heapUsed: number;
  arrayBuffers: number;
  keys?: number;
  dirty?: number;
  count?: number;
  lastValue?: number | null;
}

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

/** Runs `script` with `args` in a process of its own (so the heap is the engine's alone) and returns its stdout lines. */
async function runChild(script: string, args: string[]): Promise<string[]> {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  expect(err, 'child stderr').toBe('');
  expect(code).toBe(0);
  return out.trim().split('\n');
}

/** Runs the bulk load in its own process and returns its samples. */
async function bulkLoad(keys: number, batch: number, order: 'ascending' | 'random', cacheBytes: number, dirtyBytes: number): Promise<Sample[]> {
  const dir = tempDir('memory');
  dirs.push(dir);
  const lines = await runChild(CHILD, [`${dir.path}/store`, String(keys), '100', String(batch), String(cacheBytes), String(dirtyBytes), order]);
  return lines.map((line) => JSON.parse(line) as Sample);
}

/**
 * The live heap and buffers after a forced GC, above what the process held before the store had
 * any data, must stay within the page cache plus the dirty budget however many keys are loaded.
 */
function expectWithinBound(samples: Sample[], cacheBytes: number, dirtyBytes: number, keys: number): void {
  const live = (s: Sample): number => s.heapUsed + s.arrayBuffers;
  const baseline = live(samples.find((s) => s.label === 'baseline')!);
  const during = samples.filter((s) => s.label === 'load' || s.label === 'loaded');
  expect(during.length).toBeGreaterThanOrEqual(8);
  for (const s of during) {
    const used = live(s) - baseline;
    expect(used, `after ${s.keys ?? keys} keys: ${(used / MiB).toFixed(1)} MiB live above the baseline, bound ${(cacheBytes + dirtyBytes) / MiB} MiB`).toBeLessThanOrEqual(cacheBytes + dirtyBytes);
    expect(s.dirty!).toBeLessThanOrEqual(dirtyBytes * 1.25);
  }
  const reopened = samples.find((s) => s.label === 'reopened')!;
  expect(reopened.count).toBe(keys);
  expect(reopened.lastValue).toBe(100);
}

describe('memory is bounded by configuration, not by data', () => {
  it('2,000,000 ascending keys in batches of 1,000 through a 32 MiB cache and a 64 MiB dirty budget', async () => {
    // Ascending keys keep the tree's right edge (and its root) dirty through every checkpoint:
    // the written nodes must still be released while writes continue.
    const samples = await bulkLoad(2_000_000, 1000, 'ascending', 32 * MiB, 64 * MiB);
    expectWithinBound(samples, 32 * MiB, 64 * MiB, 2_000_000);
  }, 240_000);

  it('100,000 random keys in batches of 100 through a 4 MiB cache and an 8 MiB dirty budget', async () => {
    // Random keys dirty leaves all over a tree larger than the budget: dirty leaves must own
    // compact copies of their entries, not pin the pages they were copied from. Batches of 100:
    // a batch applies atomically, so it may take the budget past its limit by the leaves it
    // copies (about 10 KiB per random key), and 1,000 random keys would be more than this
    // whole 8 MiB budget.
    const samples = await bulkLoad(100_000, 100, 'random', 4 * MiB, 8 * MiB);
    expectWithinBound(samples, 4 * MiB, 8 * MiB, 100_000);
  }, 240_000);

  it('a quiet tenant beside a busy one: the few pages the quiet one copied keep alive no more memory than is counted', async () => {
    // Copies of pages are carved from slabs, and a slab lives while any copy in it does. Slabs
    // shared by every store let each of the quiet tenant's copies (held until a checkpoint it never
    // takes) keep alive a slab the busy tenant filled and released: 150 rounds grew live memory
    // by 38 MiB while the cache and the budget counted 6.5.
    const dir = tempDir('memory-quiet');
    dirs.push(dir);
    const [line] = await runChild(QUIET_CHILD, [dir.path, '150']);
    const result = JSON.parse(line!) as { liveGrowth: number; buffersGrowth: number; countedGrowth: number; quietPending: number };
    // The quiet tenant did keep its copies (about a page each).
    expect(result.quietPending).toBeGreaterThan(100 * 4096);
    expect(result.liveGrowth, `live grew ${(result.liveGrowth / MiB).toFixed(1)} MiB, counted ${(result.countedGrowth / MiB).toFixed(1)} MiB`).toBeLessThanOrEqual(result.countedGrowth + MiB);
  }, 120_000);
});
