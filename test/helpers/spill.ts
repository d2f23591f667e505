// What the spilling tests share (test/server/mql-spill.test.ts, mql-spill-stages.test.ts): their
// documents, seeding one collection on several servers, and watching a server's spill files.
import { existsSync, mkdirSync, readdirSync, watch } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { randomInt, seededRandom } from './random.js';
import type { FileServer } from './server.js';

/** The folder `server` spills into (its data directory's `spill`, the default). */
export const spillDir = (server: FileServer): string => join(server.server.dataDir, 'spill');

/** The spill files `server` holds now. */
export const spillFiles = (server: FileServer): string[] => (existsSync(spillDir(server)) ? readdirSync(spillDir(server)).filter((n) => n.endsWith('.spill')) : []);

/** Documents whose estimated size is about 200 bytes each, with ties, missing and mixed-type keys. */
export function makeSpillDocs(n: number, seed: number): Record<string, unknown>[] {
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  return Array.from({ length: n }, (_, i) => {
    const d: Record<string, unknown> = { _id: i, k: randomInt(rand, 0, 50), g: `g${randomInt(rand, 0, 400)}`, small: `s${i % 7}`, text: `doc ${i} ${'x'.repeat(randomInt(rand, 10, 60))}` };
    if (rand() < 0.9) d['v'] = pick([1, 2, 3.5, -4, 'x', 'y', null, 10, 20]);
    if (rand() < 0.8) d['n'] = randomInt(rand, -1000, 1000);
    if (rand() < 0.7) d['o'] = { a: randomInt(rand, 0, 5), [`f${i % 4}`]: i };
    return d;
  });
}

/** Seeds `docs` on each of `servers` (in batches under the body limit): the collection's name, the same on each. */
export async function seedOn(servers: readonly FileServer[], docs: Record<string, unknown>[], prefix: string): Promise<string> {
  let name = '';
  for (const server of servers) {
    const c = await server.seed(docs.slice(0, 500), prefix);
    for (let i = 500; i < docs.length; i += 500) {
      const res = await server.mql('insertMany', { collection: c, documents: docs.slice(i, i + 500) });
      expect(res.status, res.text).toBe(201);
    }
    if (name !== '' && name !== c) throw new Error('the servers named the collection differently');
    name = c;
  }
  return name;
}

/** Runs `fn`, recording the spill files of `server` created meanwhile (inotify through fs.watch). */
export async function watchingSpills<T>(server: FileServer, fn: () => Promise<T>): Promise<{ result: T; created: string[] }> {
  mkdirSync(spillDir(server), { recursive: true });
  const created = new Set<string>();
  const watcher = watch(spillDir(server), (_event, name) => {
    if (name !== null && name.endsWith('.spill')) created.add(name);
  });
  try {
    const result = await fn();
    // Events are delivered on the loop: give the last ones a turn.
    await new Promise((r) => setTimeout(r, 20));
    return { result, created: [...created] };
  } finally {
    watcher.close();
  }
}
