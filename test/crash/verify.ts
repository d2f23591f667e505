import { cpSync, rmSync } from 'node:fs';
import { expect } from 'vitest';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';

export const key = (writer: number, seq: number) => Buffer.from(`w${writer}-${String(seq).padStart(7, '0')}`);

/** Parses the child's stdout into the highest acknowledged seq per writer. */
export function parseAcks(stdout: string): Map<number, number> {
  const acks = new Map<number, number>();
  for (const line of stdout.split('\n')) {
    const m = /^ack (\d+) (\d+)$/.exec(line);
    if (m) acks.set(Number(m[1]), Math.max(acks.get(Number(m[1])) ?? 0, Number(m[2])));
  }
  return acks;
}

/**
 * Opens a copy of `dir` (so the original sees only crashes) and checks: every acknowledged batch
 * is there; each writer's batches form a gap-free prefix 1..counter (nothing half-applied: trees
 * a, b, counter and tmp agree). Returns the counters.
 */
export async function verifyCrashedStore(dir: string, acked: Map<number, number>, deletion: 'none' | 'acked' | 'maybe' = 'none'): Promise<Map<number, number>> {
  const copy = `${dir}-verify`;
  rmSync(copy, { recursive: true, force: true });
  cpSync(dir, copy, { recursive: true });
  const store = await TenantStore.open(copy, { cache: new PageCache<TreeNode>(8 * 1024 * 1024), fsync: 'off', checkpointIntervalMs: 0 });
  const counters = new Map<number, number>();
  try {
    for (const [counterKey, v] of store.scan('counter')) counters.set(Number(counterKey.toString().slice(1)), Number(v.toString()));
    for (const [writer, seq] of acked) {
      expect(counters.get(writer) ?? 0, `writer ${writer}: counter below its acknowledged seq`).toBeGreaterThanOrEqual(seq);
    }
    for (const [writer, top] of counters) {
      const prefix = `w${writer}-`;
      const a = [...store.keys('a', { prefix: Buffer.from(prefix) })];
      const b = [...store.keys('b', { prefix: Buffer.from(prefix) })];
      // The 150-key delete batch is all-or-nothing: acknowledged -> gone; unacknowledged -> either.
      let first = 1;
      if (writer === 0 && deletion !== 'none') {
        const gone = !store.has('a', key(0, 1));
        if (deletion === 'acked') expect(gone, 'the acknowledged delete batch').toBe(true);
        if (gone) first = 151;
        for (let s = 1; s <= 150; s++) expect(store.has('a', key(0, s)), `delete batch applied by halves at ${s}`).toBe(!gone);
      }
      expect(a.length, `writer ${writer}: tree a holds ${first}..${top}`).toBe(top - first + 1);
      expect(b.length, `writer ${writer}: tree b holds 1..${top}`).toBe(top);
      for (let s = first; s <= top; s += Math.max(1, Math.floor(top / 50))) {
        const value = store.get('a', key(writer, s));
        expect(value?.toString(), `writer ${writer} seq ${s}`).toBe(`${key(writer, s).toString()}:`.repeat(1 + (s % 7)));
      }
      const tmp = [...store.keys('tmp', { prefix: Buffer.from(prefix) })].map((k) => k.toString());
      expect(tmp, `writer ${writer}: tmp holds only the latest batch`).toEqual([key(writer, top).toString()]);
      for (let s = 50; s <= top; s += 50) {
        const big = store.get('big', key(writer, s));
        expect(big?.length, `writer ${writer} big value ${s}`).toBe(20_000);
        expect(big?.[19_999]).toBe(s % 251);
      }
    }
  } finally {
    await store.close();
    rmSync(copy, { recursive: true, force: true });
  }
  return counters;
}
