import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { http, signup, type HttpResult } from '../helpers/server.js';
import { spawnServer } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';

const dir = tempDir('vector-crash');
const models = tempDir('vector-crash-models'); // empty: the fallback embedder
afterAll(() => {
  dir.remove();
  models.remove();
});

const WORDS = 'amber basalt cobalt dune ember fjord garnet heron iris jade kelp lumen mica nectar onyx pearl quartz raven slate topaz umber violet willow xenon yarrow zinc'.split(' ');

/** A text unique to (round, client, i): its own vector is its own nearest neighbour. */
function textOf(id: string): string {
  let h = 0;
  for (const c of id) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  const words = Array.from({ length: 5 }, (_, k) => WORDS[(h >>> (k * 5)) % WORDS.length]);
  return `${words.join(' ')} ${id}`;
}

describe('the vector store under SIGKILL', () => {
  it('keeps every acknowledged upsert and delete, and its graph answers for them after restarts', async () => {
    const args = ['--rate-limit', '0', '--embedding-model-dir', models.path];
    // id -> true (acknowledged upsert), false (acknowledged delete), undefined-ish 'either' (answer lost).
    const acked = new Map<string, boolean | 'either'>();
    let apiKey = '';
    // Round 0 and 2 end in SIGKILL; round 1 stops cleanly (writing the graph file), so the last
    // start loads a graph file and catches up from the change log.
    for (let round = 0; round < 3; round++) {
      const server = await spawnServer(dir.path, args);
      if (round === 0) ({ apiKey } = await signup(server.url, 'vcrash'));
      let stop = false;
      const clients = Array.from({ length: 8 }, async (_, c) => {
        for (let i = 0; !stop; i++) {
          try {
            if (i % 4 === 3) {
              const batch = Array.from({ length: 20 }, (_, k) => `r${round}-c${c}-b${i}-${k}`);
              for (const id of batch) acked.set(id, 'either');
              const res = await http(server.url, 'POST', '/api/vector/upsertMany', { json: { vectors: batch.map((id) => ({ id, text: textOf(id), metadata: { round, c } })) }, apiKey });
              if (res.status === 200) for (const id of batch) acked.set(id, true);
            } else {
              const id = `r${round}-c${c}-${i}`;
              acked.set(id, 'either');
              const res = await http(server.url, 'POST', '/api/vector/upsert', { json: { id, text: textOf(id), metadata: { round, c } }, apiKey });
              if (res.status === 200) acked.set(id, true);
              if (i % 5 === 4) {
                const victim = `r${round}-c${c}-${i - 2}`;
                if (acked.get(victim) === true) {
                  acked.set(victim, 'either');
                  const del = await http(server.url, 'DELETE', `/api/vector/${victim}`, { apiKey });
                  if (del.status === 200 && del.body.deleted === true) acked.set(victim, false);
                }
              }
            }
          } catch {
            return; // the connection died with the process
          }
        }
      });
      await new Promise((r) => setTimeout(r, 700 + round * 200));
      if (round === 1) {
        stop = true;
        await Promise.all(clients);
        server.child.kill('SIGTERM');
        expect((await server.exited).code, server.output()).toBe(0);
        const tenants = readdirSync(join(dir.path, 'tenants'));
        expect(readdirSync(join(dir.path, 'tenants', tenants[0]!, 'derived'))).toEqual(['vec-1.bin']);
      } else {
        server.child.kill('SIGKILL');
        stop = true;
        await Promise.all(clients);
        expect((await server.exited).signal).toBe('SIGKILL');
      }
    }
    const upserted = [...acked].filter(([, v]) => v === true).map(([id]) => id);
    expect(upserted.length).toBeGreaterThan(100);

    const server = await spawnServer(dir.path, args);
    try {
      const wrong: string[] = [];
      const listed = new Set<string>();
      for (let cursor: string | null = ''; cursor !== null; ) {
        const page: HttpResult<{ ids: string[]; cursor: string | null }> = await http(server.url, 'GET', `/api/vector?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { apiKey });
        for (const id of page.body.ids as string[]) listed.add(id);
        cursor = page.body.cursor;
      }
      for (const [id, state] of acked) {
        if (state === true && !listed.has(id)) wrong.push(`${id}: acknowledged upsert missing`);
        if (state === false && listed.has(id)) wrong.push(`${id}: acknowledged delete undone`);
      }
      for (const id of listed) if (!acked.has(id)) wrong.push(`${id}: never written`);
      expect(wrong).toEqual([]);

      // Every surviving record is its own nearest neighbour, through the graph (pending changes
      // included) and by brute force; a sample keeps the test short.
      const sample = [...listed].filter((_, i) => i % 7 === 0);
      for (const exact of [false, true]) {
        for (const id of sample) {
          const res = await http(server.url, 'POST', '/api/vector/query', { json: { query: textOf(id), topK: 1, exact, includeText: false }, apiKey });
          expect(res.body.matches[0]?.id, `${id} exact=${exact}`).toBe(id);
        }
      }
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
