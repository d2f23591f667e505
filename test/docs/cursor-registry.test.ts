// The cursor registry (engine/docs/cursors.ts) on sources made here: batches cut by size, a source
// closed exactly once however its cursor ends (exhausted, failed, killed, killed during a batch,
// its tenant closed, timed out), one getMore at a time, the per-tenant and process bounds, and a
// cursor's maxTimeMS counted over the time its batches run, not the time between them.
import { afterEach, describe, expect, it } from 'vitest';
import { CursorInterrupt, CursorRegistry, type CursorSource } from '../../engine/docs/cursors.js';
import { isTetraError } from '../../engine/errors.js';
import type { Doc } from '../../engine/docs/values.js';

const timedOut = (ms: number): never => {
  throw new Error(`timed out after ${ms}`);
};
const gone = (): never => {
  throw new Error('client gone');
};

interface Probe {
  source: CursorSource;
  closed: number;
  /** Chunks handed out so far. */
  pulled: number;
}

/** A source of `n` documents `{_id: i}` in chunks of `chunk`; `onChunk` runs before each chunk is handed out. */
function probe(n: number, chunk: number, onChunk: (i: number) => void | Promise<void> = () => undefined): Probe {
  const p: Probe = { closed: 0, pulled: 0, source: undefined as unknown as CursorSource };
  async function* batches(): AsyncGenerator<Doc[]> {
    for (let i = 0; i < n; i += chunk) {
      await onChunk(i);
      p.pulled++;
      yield Array.from({ length: Math.min(chunk, n - i) }, (_, k) => ({ _id: i + k }));
    }
  }
  p.source = {
    batches: batches(),
    close: async () => {
      p.closed++;
    },
  };
  return p;
}

const interrupt = (maxTimeMS = 0): CursorInterrupt => new CursorInterrupt(maxTimeMS, timedOut, gone);
const ids = (docs: Doc[]): unknown[] => docs.map((d) => d['_id']);
const owner = {};

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return isTetraError(err) ? err.code : String(err);
  }
  return 'no error';
}

let registry: CursorRegistry;
afterEach(async () => {
  await registry?.close();
});

describe('CursorRegistry', () => {
  it('hands out batches of the size asked, across chunks, and closes the source once when exhausted', async () => {
    registry = new CursorRegistry({ maxOpen: 10, maxPerTenant: 10, idleMs: 0 });
    const p = probe(10, 4);
    const first = await registry.first('t', owner, 'c', p.source, interrupt(), 3, {});
    expect(ids(first.documents)).toEqual([0, 1, 2]);
    expect(first.cursorId).not.toBeNull();
    const id = first.cursorId!;
    expect(ids((await registry.getMore('t', owner, id, 'c', 5, {})).documents)).toEqual([3, 4, 5, 6, 7]);
    expect(p.closed).toBe(0);
    // The cursor's own batch size when getMore names none: the source ends within it, so no id.
    expect(await registry.getMore('t', owner, id, 'c', undefined, {})).toEqual({ documents: [{ _id: 8 }, { _id: 9 }], cursorId: null });
    expect(p.closed).toBe(1);
    expect(registry.count()).toBe(0);
    expect(await code(registry.getMore('t', owner, id, 'c', 1, {}))).toBe('NOT_FOUND');
  });

  it('keeps a cursor whose batch ended exactly at the end open, until a batch finds nothing more', async () => {
    registry = new CursorRegistry({ maxOpen: 10, maxPerTenant: 10, idleMs: 0 });
    const p = probe(6, 3);
    const first = await registry.first('t', owner, 'c', p.source, interrupt(), 6, {});
    expect(first.documents).toHaveLength(6);
    expect(first.cursorId).not.toBeNull();
    expect(await registry.getMore('t', owner, first.cursorId!, 'c', 6, {})).toEqual({ documents: [], cursorId: null });
    expect(p.closed).toBe(1);
  });

  it('answers a cursor that ends within its first batch with no id', async () => {
    registry = new CursorRegistry({ maxOpen: 10, maxPerTenant: 10, idleMs: 0 });
    const p = probe(5, 2);
    expect(await registry.first('t', owner, 'c', p.source, interrupt(), 101, {})).toEqual({ documents: [0, 1, 2, 3, 4].map((i) => ({ _id: i })), cursorId: null });
    expect(p.closed).toBe(1);
    expect(registry.count('t')).toBe(0);
  });

  it('knows a cursor to its tenant and collection alone', async () => {
    registry = new CursorRegistry({ maxOpen: 10, maxPerTenant: 10, idleMs: 0 });
    const p = probe(10, 10);
    const { cursorId } = await registry.first('t', owner, 'c', p.source, interrupt(), 1, {});
    expect(await code(registry.getMore('other', owner, cursorId!, 'c', 1, {}))).toBe('NOT_FOUND');
    expect(await code(registry.getMore('t', owner, cursorId!, 'd', 1, {}))).toBe('VALIDATION_FAILED');
    expect(await registry.kill('other', [cursorId!], 'c')).toEqual({ cursorsKilled: [], cursorsNotFound: [cursorId] });
    expect(await registry.kill('t', [cursorId!], 'd')).toEqual({ cursorsKilled: [], cursorsNotFound: [cursorId] });
    expect(ids((await registry.getMore('t', owner, cursorId!, 'c', 2, {})).documents)).toEqual([1, 2]);
    // Its store closed and opened again: another owner.
    expect(await code(registry.getMore('t', {}, cursorId!, 'c', 1, {}))).toBe('NOT_FOUND');
    expect(p.closed).toBe(1);
  });

  it('refuses a second getMore while one runs, and fails the one running when the cursor is killed under it', async () => {
    registry = new CursorRegistry({ maxOpen: 10, maxPerTenant: 10, idleMs: 0 });
    let release: (() => void) | undefined;
    const p = probe(100, 10, (i) => (i >= 20 ? new Promise<void>((r) => (release = r)) : undefined));
    const { cursorId } = await registry.first('t', owner, 'c', p.source, interrupt(), 10, {});
    const running = registry.getMore('t', owner, cursorId!, 'c', 15, {});
    await new Promise((r) => setTimeout(r, 10));
    expect(release).toBeDefined();
    expect(await code(registry.getMore('t', owner, cursorId!, 'c', 1, {}))).toBe('CONFLICT');
    expect(await registry.kill('t', [cursorId!], 'c')).toEqual({ cursorsKilled: [cursorId], cursorsNotFound: [] });
    // Not closed under the running batch: closed once it returns.
    expect(p.closed).toBe(0);
    release!();
    // Not an end of its documents: the getMore that was reading fails, as MongoDB's CursorKilled.
    await expect(running).rejects.toThrow(`cursor id ${cursorId} was killed while this getMore ran`);
    expect(p.closed).toBe(1);
  });

  it('closes the source of a cursor whose read fails, and maps the error', async () => {
    registry = new CursorRegistry({ maxOpen: 10, maxPerTenant: 10, idleMs: 0 });
    const p = probe(100, 10, (i) => {
      if (i === 30) throw new RangeError('too big');
    });
    const source: CursorSource = { ...p.source, mapError: (err) => new Error(`mapped: ${(err as Error).message}`) };
    const { cursorId } = await registry.first('t', owner, 'c', source, interrupt(), 25, {});
    await expect(registry.getMore('t', owner, cursorId!, 'c', 25, {})).rejects.toThrow('mapped: too big');
    expect(p.closed).toBe(1);
    expect(await code(registry.getMore('t', owner, cursorId!, 'c', 1, {}))).toBe('NOT_FOUND');
  });

  it('bounds cursors per tenant and in all; a closed tenant and a killed cursor make room', async () => {
    registry = new CursorRegistry({ maxOpen: 3, maxPerTenant: 2, idleMs: 0 });
    const a1 = await registry.first('a', owner, 'c', probe(5, 5).source, interrupt(), 1, {});
    await registry.first('a', owner, 'c', probe(5, 5).source, interrupt(), 1, {});
    expect(() => registry.assertRoom('a')).toThrow(/this tenant holds 2/);
    registry.assertRoom('b');
    const b = probe(5, 5);
    await registry.first('b', owner, 'c', b.source, interrupt(), 1, {});
    expect(() => registry.assertRoom('c')).toThrow(/too many open cursors in the server/);
    await registry.closeTenant('b', owner);
    expect(b.closed).toBe(1);
    registry.assertRoom('c');
    await registry.kill('a', [a1.cursorId!], 'c');
    registry.assertRoom('a');
    expect(registry.count('a')).toBe(1);
  });

  it('refuses a cursor past the bound after its first batch, closing its source; one that ends there needs no room', async () => {
    registry = new CursorRegistry({ maxOpen: 10, maxPerTenant: 1, idleMs: 0 });
    await registry.first('t', owner, 'c', probe(5, 5).source, interrupt(), 1, {});
    const over = probe(5, 5);
    expect(await code(registry.first('t', owner, 'c', over.source, interrupt(), 1, {}))).toBe('RATE_LIMITED');
    expect(over.closed).toBe(1);
    const small = probe(5, 5);
    expect((await registry.first('t', owner, 'c', small.source, interrupt(), 6, {})).cursorId).toBeNull();
    expect(small.closed).toBe(1);
    expect(registry.count('t')).toBe(1);
  });

  it('closes a cursor left idle past its time', async () => {
    registry = new CursorRegistry({ maxOpen: 10, maxPerTenant: 10, idleMs: 150 });
    const p = probe(10, 10);
    const { cursorId } = await registry.first('t', owner, 'c', p.source, interrupt(), 1, {});
    await new Promise((r) => setTimeout(r, 500));
    expect(p.closed).toBe(1);
    expect(await code(registry.getMore('t', owner, cursorId!, 'c', 1, {}))).toBe('NOT_FOUND');
  });

  it("counts maxTimeMS over its batches' work, not the time between them", async () => {
    registry = new CursorRegistry({ maxOpen: 10, maxPerTenant: 10, idleMs: 0 });
    const busy = (ms: number): void => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    // Each chunk costs 40 ms of work; the cursor may work 100 ms in all.
    const p = probe(100, 10, () => busy(40));
    const { cursorId } = await registry.first('t', owner, 'c', p.source, interrupt(100), 10, {});
    // Idle time does not count.
    await new Promise((r) => setTimeout(r, 150));
    expect((await registry.getMore('t', owner, cursorId!, 'c', 10, {})).documents).toHaveLength(10);
    // The third chunk's check sees 80 ms used and lets it run; the fourth passes 100 ms.
    expect((await registry.getMore('t', owner, cursorId!, 'c', 10, {})).documents).toHaveLength(10);
    await expect(registry.getMore('t', owner, cursorId!, 'c', 10, {})).rejects.toThrow('timed out after 100');
    expect(p.closed).toBe(1);
  });
});
