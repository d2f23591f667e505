import { afterEach, describe, expect, it } from 'vitest';
import { TenantStore } from '../../engine/tenant/index.js';
import { key, puts, storeOptions, value } from '../helpers/store-fixture.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';

const newDir = dirsRemovedAfterEach();
let store: TenantStore | undefined;
afterEach(async () => {
  if (store !== undefined && !store.closed) await store.close();
});

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
