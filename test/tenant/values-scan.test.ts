import { afterEach, describe, expect, it } from 'vitest';
import type { ValueRun } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { key, puts, storeOptions, value } from '../helpers/store-fixture.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';

const newDir = dirsRemovedAfterEach();
let store: TenantStore | undefined;
afterEach(async () => {
  if (store !== undefined && !store.closed) await store.close();
});
/** The store the running test opened. */
const current = (): TenantStore => store!;

// Ranges of every kind over keys 0..2999: bounds open and closed, both directions, a prefix, limits.
const ranges = [{}, { gte: key(10), lt: key(2500) }, { gt: key(10), lte: key(2500), reverse: true }, { prefix: Buffer.from('key-1') }, { limit: 7 }, { gte: key(2999), reverse: true, limit: 3 }];

describe('values(): a scan without keys', () => {
  it('yields exactly the values scan() yields, for every range and direction, live and on a snapshot, before and after a checkpoint', async () => {
    store = await TenantStore.open(newDir('values-scan'), storeOptions());
    await store.write(puts(0, 3000));
    for (const phase of ['dirty', 'checkpointed']) {
      if (phase === 'checkpointed') await store.checkpoint();
      const snapshot = store.snapshot();
      for (const r of ranges) {
        const expected = [...store.scan('a', r)].map(([, v]) => v.toString('hex'));
        expect(expected.length, `${phase} ${JSON.stringify(r)}`).toBeGreaterThan(0);
        expect([...store.values('a', r)].map((v) => v.toString('hex')), `${phase} live ${JSON.stringify(r)}`).toEqual(expected);
        expect([...snapshot.values('a', r)].map((v) => v.toString('hex')), `${phase} snapshot ${JSON.stringify(r)}`).toEqual(expected);
      }
      snapshot.close();
    }
    expect([...store.values('a', { gte: key(5), lt: key(6) })]).toEqual([value(5)]);
    expect([...store.values('missing')]).toEqual([]);
  });
});

/** The values of one run, as hex. */
const runHex = (run: ValueRun): string[] => Array.from({ length: run.count }, (_, i) => run.bufs[i]!.toString('hex', run.starts[i]!, run.starts[i]! + run.lengths[i]!));

/** The values of a valueRuns() scan, as hex, checking each run's spans on the way. */
function runValues(runs: Iterable<ValueRun>): string[] {
  const out: string[] = [];
  for (const run of runs) {
    expect(run.count).toBeGreaterThan(0);
    out.push(...runHex(run));
  }
  return out;
}

/**
 * A store holding keys 0..2999 of tree 'a', with four values on overflow pages, taken through
 * three phases: every leaf dirty, every leaf clean (checkpointed), and a few keys of each leaf
 * rewritten after the checkpoint (copied-on-write leaves). `check` runs in each phase.
 */
async function overPhases(dir: string, check: (phase: string) => void | Promise<void>): Promise<void> {
  store = await TenantStore.open(newDir(dir), storeOptions());
  await store.write(puts(0, 3000));
  // Values stored on overflow pages (past the inline limit), among the inline ones.
  const big = (i: number): Buffer => Buffer.alloc(9000 + i, i % 251);
  await store.write([10, 11, 1500, 2999].map((i) => ({ op: 'put' as const, tree: 'a', key: key(i), value: big(i) })));
  for (const phase of ['dirty', 'checkpointed', 'rewritten after a checkpoint']) {
    if (phase === 'checkpointed') await store.checkpoint();
    // Copy-on-write leaves: a few keys rewritten in each leaf since the checkpoint.
    if (phase === 'rewritten after a checkpoint') await store.write(Array.from({ length: 60 }, (_, k) => ({ op: 'put' as const, tree: 'a', key: key(k * 50 + 3), value: Buffer.from(`rewritten-${k}`) })));
    await check(phase);
  }
}

describe('valueRuns(): values a leaf at a time, without a Buffer per value', () => {
  it('yields exactly the values scan() yields, for every range and direction, over clean, dirty and copied-on-write leaves and overflow values', async () => {
    await overPhases('value-runs', (phase) => {
      const store = current();
      const snapshot = store.snapshot();
      for (const r of ranges) {
        const expected = [...store.scan('a', r)].map(([, v]) => v.toString('hex'));
        expect(expected.length, `${phase} ${JSON.stringify(r)}`).toBeGreaterThan(0);
        expect(runValues(store.valueRuns('a', r)), `${phase} live ${JSON.stringify(r)}`).toEqual(expected);
        expect(runValues(snapshot.valueRuns('a', r)), `${phase} snapshot ${JSON.stringify(r)}`).toEqual(expected);
      }
      // A full scan comes a leaf at a time: several runs, none larger than a leaf holds.
      let runs = 0;
      for (const run of store.valueRuns('a')) {
        runs++;
        expect(run.count).toBeLessThan(1000);
      }
      expect(runs, phase).toBeGreaterThan(3);
      snapshot.close();
    });
    expect(runValues(current().valueRuns('missing'))).toEqual([]);
  });

  it('reads the snapshot it started on while writes land between its runs', async () => {
    store = await TenantStore.open(newDir('value-runs-isolated'), storeOptions());
    await store.write(puts(0, 3000));
    await store.checkpoint();
    const expected = [...store.values('a')].map((v) => v.toString('hex'));
    const out: string[] = [];
    let k = 0;
    for (const run of store.valueRuns('a')) {
      out.push(...runHex(run));
      await store.write([{ op: 'put', tree: 'a', key: key(k++ * 7), value: Buffer.from('changed') }, { op: 'delete', tree: 'a', key: key(2999 - k) }]);
    }
    expect(k).toBeGreaterThan(3);
    expect(out).toEqual(expected);
  });
});

describe('scanNow(): a live scan without a snapshot, for reads within one turn', () => {
  it('yields exactly what scan() yields, for every range and direction, before and after a checkpoint', async () => {
    store = await TenantStore.open(newDir('scan-now'), storeOptions());
    await store.write(puts(0, 3000));
    for (const phase of ['dirty', 'checkpointed']) {
      if (phase === 'checkpointed') await store.checkpoint();
      for (const r of ranges) {
        const hex = (entries: Iterable<[Buffer, Buffer]>): string[] => [...entries].map(([k, v]) => `${k.toString('hex')}=${v.toString('hex')}`);
        expect(hex(store.scanNow('a', r)), `${phase} ${JSON.stringify(r)}`).toEqual(hex(store.scan('a', r)));
      }
    }
    expect([...store.scanNow('missing')]).toEqual([]);
  });

  it('refuses to step on after a write, instead of walking a tree that changed under it', async () => {
    store = await TenantStore.open(newDir('scan-now-write'), storeOptions());
    await store.write(puts(0, 100));
    const entries = store.scanNow('a');
    expect(entries.next().done).toBe(false);
    await store.write(puts(100, 101));
    expect(() => entries.next()).toThrow(/stepped after a write/);
  });
});

describe('valuesNow(): a short read into an array, in one call', () => {
  it('takes exactly what scan() yields, up to max, and says whether the range holds more, over clean, dirty and copied leaves and overflow values', async () => {
    await overPhases('values-now', (phase) => {
      const store = current();
      for (const r of ranges) {
        const expected = [...store.scan('a', r)].map(([, v]) => v.toString('hex'));
        // Fewer than the range holds, exactly as many, more; and none.
        for (const max of [0, 1, 5, expected.length - 1, expected.length, expected.length + 10]) {
          if (max < 0) continue;
          const out: Buffer[] = [];
          const more = store.valuesNow('a', r, max, out);
          const label = `${phase} ${JSON.stringify(r)} max ${max}`;
          expect(out.map((v) => v.toString('hex')), label).toEqual(expected.slice(0, max));
          expect(more, label).toBe(max < expected.length);
        }
      }
      // Appends to what the array already holds.
      const out = [Buffer.from('x')];
      expect(store.valuesNow('a', { gte: key(5), lt: key(7) }, 10, out)).toBe(false);
      expect(out).toEqual([Buffer.from('x'), value(5), value(6)]);
    });
    const none: Buffer[] = [];
    expect(current().valuesNow('missing', {}, 10, none)).toBe(false);
    expect(none).toEqual([]);
  });
});
