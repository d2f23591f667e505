import { afterEach, describe, expect, it } from 'vitest';
import { KV_LIMITS, kvDelete, kvExpireDue, kvGet, kvList, kvNextExpiry, kvPut, kvPutCost } from '../../engine/kv/index.js';
import { decodeKey, encodeKey, PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: Array<{ remove: () => void }> = [];
const stores: TenantStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) if (!s.closed) await s.close();
  for (const d of dirs.splice(0)) d.remove();
});
const cache = new PageCache<TreeNode>(16 * 1024 * 1024);

async function openStore(path?: string): Promise<{ store: TenantStore; path: string }> {
  let dir = path;
  if (dir === undefined) {
    const d = tempDir('kv');
    dirs.push(d);
    dir = d.path;
  }
  const store = await TenantStore.open(dir, { cache, checkpointIntervalMs: 0 });
  stores.push(store);
  return { store, path: dir };
}

const T = Date.UTC(2030, 0, 1); // a fixed "now"; every read and write below passes it explicitly
const MIB = 1024 * 1024;
const iso = (ms: number) => new Date(ms).toISOString();

/** Every tree as hex pairs plus the lsn: equal snapshots mean nothing was written. */
function snapshot(store: TenantStore): unknown {
  const tree = (name: string) => [...store.scan(name)].map(([k, v]) => [k.toString('hex'), v.toString('hex')]);
  return { kv: tree('kv'), value: tree('kv-value'), expiry: tree('kv-expiry'), lsn: store.stats().lsn };
}

/**
 * The trees agree: each record with an expiry has exactly its kv-expiry entry, each record with
 * a separate value ([u8 version][u8 flags][f64 expiresAt], flag 1) exactly its kv-value entry.
 */
function expectConsistent(store: TenantStore): void {
  const expiries: string[] = [];
  const external: string[] = [];
  for (const [key, record] of store.scan('kv')) {
    const at = record.readDoubleLE(2);
    if (!Number.isNaN(at)) expiries.push(`${at}|${key.toString('utf8')}`);
    if (record[1] === 1) external.push(key.toString('hex'));
  }
  const indexed = [...store.keys('kv-expiry')].map((k) => {
    const [at, key] = decodeKey(k);
    return `${String(at)}|${String(key)}`;
  });
  expect(indexed.sort()).toEqual(expiries.sort());
  expect([...store.keys('kv-value')].map((k) => k.toString('hex'))).toEqual(external);
}

async function put(store: TenantStore, key: string, value: string, ttl?: number | null, now = T): Promise<void> {
  await kvPut(store, key, value, ttl, now).durable;
}

describe('kv validation', () => {
  const badKeys: Array<[string, unknown]> = [
    ['undefined', undefined],
    ['null', null],
    ['a number', 42],
    ['an object', { k: 1 }],
    ['the empty string', ''],
    ['513 ASCII bytes', 'k'.repeat(513)],
    ['514 bytes of 2-byte characters', 'é'.repeat(257)],
    ['a lone high surrogate', 'a\ud800b'],
    ['a lone low surrogate', '\udc00'],
  ];
  const badValues: Array<[string, unknown]> = [
    ['undefined', undefined],
    ['null', null],
    ['a number', 7],
    ['an array', ['v']],
    ['1 MiB + 1 bytes', 'v'.repeat(MIB + 1)],
    ['over 1 MiB in 3-byte characters', '€'.repeat(MIB / 3 + 1)],
    ['a lone surrogate', '\ud83d'],
  ];
  const badTtls: Array<[string, unknown]> = [
    ['zero', 0],
    ['negative', -1],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['a numeric string', '10'],
    ['a boolean', true],
    ['an object', {}],
    ['over the maximum', KV_LIMITS.maxTtlSeconds + 1],
  ];

  it.each(badKeys)('kvPut rejects a key that is %s, naming key, and changes nothing', async (_what, key) => {
    const { store } = await openStore();
    await put(store, 'existing', 'v', 10);
    const before = snapshot(store);
    expect(() => kvPut(store, key, 'v', 5, T)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', details: { field: 'key' } }));
    expect(snapshot(store)).toEqual(before);
  });

  it.each(badValues)('kvPut rejects a value that is %s, naming value, and changes nothing', async (_what, value) => {
    const { store } = await openStore();
    await put(store, 'existing', 'v', 10);
    const before = snapshot(store);
    expect(() => kvPut(store, 'existing', value, null, T)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', details: { field: 'value' } }));
    expect(snapshot(store)).toEqual(before);
  });

  it.each(badTtls)('kvPut rejects a ttl that is %s, naming ttl, and changes nothing', async (_what, ttl) => {
    const { store } = await openStore();
    await put(store, 'existing', 'v', 10);
    const before = snapshot(store);
    expect(() => kvPut(store, 'existing', 'new', ttl, T)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', details: { field: 'ttl' } }));
    expect(snapshot(store)).toEqual(before);
  });

  it.each(badKeys)('kvGet and kvDelete reject a key that is %s', async (_what, key) => {
    const { store } = await openStore();
    await put(store, 'existing', 'v', 10);
    const before = snapshot(store);
    expect(() => kvGet(store, key, T)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', details: { field: 'key' } }));
    expect(() => kvDelete(store, key, T)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', details: { field: 'key' } }));
    expect(snapshot(store)).toEqual(before);
  });

  const badListOptions: Array<[string, string, Record<string, unknown>]> = [
    ['prefix', 'a number', { prefix: 1 }],
    ['prefix', 'over 512 bytes', { prefix: 'p'.repeat(513) }],
    ['prefix', 'a lone surrogate', { prefix: '\ud800' }],
    ['cursor', 'a number', { cursor: 5 }],
    ['cursor', 'not base64url', { cursor: 'a+b/c=' }],
    ['cursor', 'not canonical base64url', { cursor: 'QR' }],
    ['cursor', 'over 512 bytes', { cursor: Buffer.alloc(513, 0x61).toString('base64url') }],
    ['cursor', 'not UTF-8', { cursor: Buffer.from([0xff, 0xfe]).toString('base64url') }],
    ['limit', 'zero', { limit: 0 }],
    ['limit', 'over 1000', { limit: 1001 }],
    ['limit', 'fractional', { limit: 2.5 }],
    ['limit', 'negative', { limit: -3 }],
    ['limit', 'a non-numeric string', { limit: '10a' }],
    ['limit', 'a boolean', { limit: true }],
    ['limit', 'NaN', { limit: NaN }],
  ];
  it.each(badListOptions)('kvList rejects a %s that is %s', async (field, _what, opts) => {
    const { store } = await openStore();
    await put(store, 'existing', 'v');
    expect(() => kvList(store, opts, T)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED', details: { field } }));
  });

  it('accepts limit as a string of digits and an empty cursor as none', async () => {
    const { store } = await openStore();
    await put(store, 'a', '1');
    await put(store, 'b', '2');
    expect(kvList(store, { limit: '1', cursor: '' }, T)).toMatchObject({ items: [{ key: 'a' }], nextCursor: expect.any(String) });
  });

  it('kvExpireDue rejects a batch size that is not a positive integer', async () => {
    const { store } = await openStore();
    expect(() => kvExpireDue(store, T, 0)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => kvExpireDue(store, T, 1.5)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });
});

describe('kv put, get and delete', () => {
  const keys: Array<[string, string]> = [
    ['slashes', 'users/42/profile'],
    ['spaces', '  padded key with spaces  '],
    ['unicode', 'ключ/🔑/日本'],
    ['a NUL character', 'nul\u0000inside'],
    ['512 ASCII bytes', 'k'.repeat(512)],
    ['512 bytes of 2-byte characters', 'é'.repeat(256)],
    ['512 bytes of 4-byte characters', '🔑'.repeat(128)],
  ];
  it.each(keys)('round-trips a key with %s, with and without a ttl', async (_what, key) => {
    const { store } = await openStore();
    const res = kvPut(store, key, `value of ${key}`, null, T);
    expect(res.result).toEqual({ key, expiresAt: null });
    expect(res.expiresAtMs).toBeNull();
    await res.durable;
    expect(kvGet(store, key, T)).toEqual({ key, value: `value of ${key}`, ttl: null, expiresAt: null });

    await put(store, key, 'with ttl', 60);
    expect(kvGet(store, key, T)).toEqual({ key, value: 'with ttl', ttl: 60, expiresAt: iso(T + 60_000) });
    expect(kvList(store, {}, T).items).toEqual([{ key, expiresAt: iso(T + 60_000) }]);
    expectConsistent(store);

    const del = kvDelete(store, key, T);
    expect(del.deleted).toBe(true);
    await del.durable;
    expect(kvGet(store, key, T)).toBeUndefined();
    expect(store.count('kv')).toBe(0);
    expect(store.count('kv-expiry')).toBe(0);
  });

  it.each([
    ['the empty value', ''],
    ['a 1 MiB ASCII value', 'x'.repeat(MIB)],
    ['a 1 MiB value of 4-byte characters', '🔑'.repeat(MIB / 4)],
    ['a value with NUL and unicode', 'a\u0000b é 🔑'],
  ])('round-trips %s', async (_what, value) => {
    const { store } = await openStore();
    await put(store, 'k', value);
    expect(kvGet(store, 'k', T)?.value).toBe(value);
  });

  it('reports a missing key as undefined and its delete as not deleted', async () => {
    const { store } = await openStore();
    expect(kvGet(store, 'nothing', T)).toBeUndefined();
    const del = kvDelete(store, 'nothing', T);
    expect(del.deleted).toBe(false);
    await del.durable;
    expect(store.stats().lsn).toBe(0);
  });

  it('kvPutCost counts the UTF-8 bytes of key and value plus a fixed overhead', () => {
    const base = kvPutCost('', '');
    expect(base).toBeGreaterThan(0);
    expect(kvPutCost('ab', 'é')).toBe(base + 2 + 2);
    expect(kvPutCost('k', 'x'.repeat(2048))).toBe(base + 1 + 2048);
    // A large value is stored apart, under a second copy of its key.
    expect(kvPutCost('k', 'x'.repeat(MIB))).toBeGreaterThan(base + 1 + MIB);
  });

  it('moves a value between its record and the separate value tree as it grows and shrinks', async () => {
    const { store } = await openStore();
    const big = 'b'.repeat(5000);
    const sizes = ['small', big, 'x'.repeat(2048), 'y'.repeat(2049), '', big + 'z'];
    for (const value of sizes) {
      await put(store, 'k', value, value.length % 2 === 0 ? 30 : null);
      expect(kvGet(store, 'k', T)?.value).toBe(value);
      expectConsistent(store);
    }
    expect(store.count('kv-value')).toBe(1);
    await kvDelete(store, 'k', T).durable;
    expect(store.count('kv')).toBe(0);
    expect(store.count('kv-value')).toBe(0);
    expect(store.count('kv-expiry')).toBe(0);
  });
});

describe('kv expiry as the reader sees it', () => {
  it('expires a fractional ttl exactly to the millisecond', async () => {
    const { store } = await openStore();
    const res = kvPut(store, 'k', 'v', 1.5, T);
    expect(res.expiresAtMs).toBe(T + 1500);
    expect(res.result.expiresAt).toBe(iso(T + 1500));
    await res.durable;
    expect(kvGet(store, 'k', T)?.ttl).toBe(1.5);
    expect(kvGet(store, 'k', T + 1000)?.ttl).toBe(0.5);
    expect(kvGet(store, 'k', T + 1499)).toEqual({ key: 'k', value: 'v', ttl: 0.001, expiresAt: iso(T + 1500) });
    expect(kvGet(store, 'k', T + 1500)).toBeUndefined();
    expect(kvList(store, {}, T + 1499).items).toHaveLength(1);
    expect(kvList(store, {}, T + 1500).items).toHaveLength(0);
    // Expired but not swept: the record is still there, and invisible.
    expect(store.count('kv')).toBe(1);
  });

  it.each([
    [1.1, 1100],
    [0.001, 1],
    [0.0001, 1], // rounded up to a whole millisecond, never to zero
    [2.0005, 2001],
    [KV_LIMITS.maxTtlSeconds, KV_LIMITS.maxTtlSeconds * 1000],
  ])('turns ttl %s s into %s ms', async (ttl, ms) => {
    const { store } = await openStore();
    const res = kvPut(store, 'k', 'v', ttl, T);
    expect(res.expiresAtMs).toBe(T + ms);
    await res.durable;
  });

  it('replacing a ttl moves the expiry entry; the old time no longer expires the key', async () => {
    const { store } = await openStore();
    await put(store, 'k', 'v1', 10);
    await put(store, 'k', 'v2', 100);
    expect(store.count('kv-expiry')).toBe(1);
    expectConsistent(store);
    expect(kvGet(store, 'k', T + 20_000)).toMatchObject({ value: 'v2', ttl: 80, expiresAt: iso(T + 100_000) });
    expect(kvExpireDue(store, T + 20_000, 10).deleted).toBe(0);
    expect(kvGet(store, 'k', T + 20_000)?.value).toBe('v2');
    // Same ttl at the same time: one entry, not two.
    await put(store, 'k', 'v3', 100);
    expect(store.count('kv-expiry')).toBe(1);
    expectConsistent(store);
  });

  it('a put without ttl removes an existing expiry', async () => {
    const { store } = await openStore();
    await put(store, 'k', 'v1', 10);
    await put(store, 'k', 'v2', undefined);
    expect(store.count('kv-expiry')).toBe(0);
    expect(kvGet(store, 'k', T + 10 ** 9)).toEqual({ key: 'k', value: 'v2', ttl: null, expiresAt: null });
    expect(kvNextExpiry(store)).toBeNull();
  });

  it('a put over an expired, unswept key starts afresh', async () => {
    const { store } = await openStore();
    await put(store, 'k', 'old', 1);
    await put(store, 'k', 'new', null, T + 5_000);
    expect(kvGet(store, 'k', T + 5_000)?.value).toBe('new');
    expectConsistent(store);
    expect(store.count('kv-expiry')).toBe(0);
  });

  it('deleting an expired key reports false but removes it from both trees', async () => {
    const { store } = await openStore();
    await put(store, 'k', 'v', 1);
    const del = kvDelete(store, 'k', T + 1_000);
    expect(del.deleted).toBe(false);
    await del.durable;
    expect(store.count('kv')).toBe(0);
    expect(store.count('kv-expiry')).toBe(0);
  });

  it('keeps absolute expiry times across close and reopen', async () => {
    const { store, path } = await openStore();
    await put(store, 'short', 'v', 2);
    await put(store, 'long', 'v', 3600);
    await put(store, 'forever', 'v');
    await store.close();
    const { store: again } = await openStore(path);
    expect(kvNextExpiry(again)).toBe(T + 2_000);
    expect(kvGet(again, 'short', T + 1_000)).toMatchObject({ ttl: 1, expiresAt: iso(T + 2_000) });
    expect(kvGet(again, 'short', T + 2_000)).toBeUndefined();
    const sweep = kvExpireDue(again, T + 2_000, 10);
    expect(sweep).toMatchObject({ deleted: 1, nextExpiryMs: T + 3_600_000 });
    await sweep.durable;
    expect(kvList(again, {}, T + 2_000).items.map((i) => i.key)).toEqual(['forever', 'long']);
    expectConsistent(again);
  });
});

describe('kvList', () => {
  async function listAll(store: TenantStore, opts: { prefix?: string; limit?: number }, now = T): Promise<{ keys: string[]; pages: number[] }> {
    const keys: string[] = [];
    const pages: number[] = [];
    let cursor: string | null | undefined;
    do {
      const page = kvList(store, { ...opts, cursor }, now);
      keys.push(...page.items.map((i) => i.key));
      pages.push(page.items.length);
      cursor = page.nextCursor;
      expect(pages.length).toBeLessThan(10_000);
    } while (cursor !== null);
    return { keys, pages };
  }

  it('pages through a prefix in order, each page continuing after the last', async () => {
    const { store } = await openStore();
    const users = Array.from({ length: 95 }, (_, i) => `user/${String(i).padStart(3, '0')}`);
    await Promise.all([...users, 'use', 'user', 'users/x', 'a', 'zzz'].map((k) => kvPut(store, k, k, null, T).durable));
    const { keys, pages } = await listAll(store, { prefix: 'user/', limit: 20 });
    expect(keys).toEqual(users);
    expect(pages).toEqual([20, 20, 20, 20, 15]);
    const all = await listAll(store, {});
    expect(all.keys).toEqual(['a', 'use', 'user', ...users, 'users/x', 'zzz']);
    expect(all.pages).toEqual([100]);
  });

  it('orders keys by UTF-8 bytes, not UTF-16 units', async () => {
    const { store } = await openStore();
    const keys = ['b', 'Z', '🔑', '\uffff', 'é', 'a'];
    for (const k of keys) await put(store, k, 'v');
    expect(kvList(store, {}, T).items.map((i) => i.key)).toEqual(['Z', 'a', 'b', 'é', '\uffff', '🔑']);
  });

  it('ends with a null cursor when the last page is exactly full', async () => {
    const { store } = await openStore();
    for (const k of ['a', 'b', 'c']) await put(store, k, 'v');
    expect(kvList(store, { limit: 3 }, T).nextCursor).toBeNull();
    const first = kvList(store, { limit: 2 }, T);
    expect(first.items.map((i) => i.key)).toEqual(['a', 'b']);
    expect(kvList(store, { limit: 2, cursor: first.nextCursor }, T)).toEqual({ items: [{ key: 'c', expiresAt: null }], nextCursor: null });
  });

  it('skips expired keys without counting them toward the limit', async () => {
    const { store } = await openStore();
    const live: string[] = [];
    for (let i = 0; i < 30; i++) {
      const key = `k${String(i).padStart(2, '0')}`;
      const expiring = i % 3 === 1;
      await put(store, key, 'v', expiring ? 1 : 100);
      if (!expiring) live.push(key);
    }
    // A full page followed by nothing but expired keys is the last page.
    await put(store, 'z1', 'v', 1);
    await put(store, 'z2', 'v', 1);
    const { keys, pages } = await listAll(store, { limit: 7 }, T + 1_000);
    expect(keys).toEqual(live);
    expect(pages).toEqual([7, 7, 6]);
    // Before they expire, all of them are listed.
    expect((await listAll(store, { limit: 7 }, T + 999)).keys).toHaveLength(32);
    const page = kvList(store, { prefix: 'k0', limit: 100 }, T + 1_000);
    expect(page.items).toEqual(live.filter((k) => k.startsWith('k0')).map((key) => ({ key, expiresAt: iso(T + 100_000) })));
  });

  it('continues after a cursor whose key was deleted meanwhile', async () => {
    const { store } = await openStore();
    for (const k of ['a', 'b', 'c', 'd']) await put(store, k, 'v');
    const first = kvList(store, { limit: 2 }, T);
    await kvDelete(store, 'b', T).durable;
    expect(kvList(store, { limit: 2, cursor: first.nextCursor }, T).items.map((i) => i.key)).toEqual(['c', 'd']);
  });

  it('gets past a long run of expired keys in bounded pages', async () => {
    const { store } = await openStore();
    const expired = Array.from({ length: 12_000 }, (_, i) => `e${String(i).padStart(5, '0')}`);
    await Promise.all(expired.map((k) => kvPut(store, k, '', 1, T).durable));
    for (const k of ['f1', 'f2', 'f3']) await put(store, k, 'v');
    const { keys, pages } = await listAll(store, { limit: 2 }, T + 1_000);
    expect(keys).toEqual(['f1', 'f2', 'f3']);
    // The scan stopped at its budget at least once, returning an empty page with a cursor.
    expect(pages[0]).toBe(0);
  });
});

describe('kvExpireDue', () => {
  it('deletes only due keys, in bounded batches, keeping both trees consistent', async () => {
    const { store } = await openStore();
    for (let i = 1; i <= 25; i++) await put(store, `due${i}`, 'v', i / 1000); // T+1 .. T+25 ms
    for (let i = 0; i < 5; i++) await put(store, `keep${i}`, 'v');
    for (let i = 0; i < 5; i++) await put(store, `later${i}`, 'v', 3600);
    const now = T + 10;
    let deleted = 0;
    let rounds = 0;
    for (;;) {
      const sweep = kvExpireDue(store, now, 4);
      await sweep.durable;
      expect(sweep.deleted).toBeLessThanOrEqual(4);
      deleted += sweep.deleted;
      rounds++;
      expectConsistent(store);
      if (sweep.nextExpiryMs === null || sweep.nextExpiryMs > now) {
        expect(sweep.nextExpiryMs).toBe(T + 11);
        break;
      }
    }
    expect(deleted).toBe(10);
    expect(rounds).toBe(3);
    expect(kvGet(store, 'due10', now)).toBeUndefined();
    expect(kvGet(store, 'due11', now)?.value).toBe('v');
    expect(store.count('kv')).toBe(15 + 10);
    expect(store.count('kv-expiry')).toBe(15 + 5);
    expect(kvNextExpiry(store)).toBe(T + 11);
  });

  it('does nothing when nothing is due and reports the next expiry', async () => {
    const { store } = await openStore();
    expect(kvNextExpiry(store)).toBeNull();
    const empty = kvExpireDue(store, T, 10);
    expect(empty).toMatchObject({ deleted: 0, nextExpiryMs: null });
    await empty.durable;
    await put(store, 'k', 'v', 5);
    const none = kvExpireDue(store, T + 4_999, 10);
    expect(none).toMatchObject({ deleted: 0, nextExpiryMs: T + 5_000 });
    await none.durable;
    expect(store.stats().lsn).toBe(1);
    expect(kvExpireDue(store, T + 5_000, 10)).toMatchObject({ deleted: 1, nextExpiryMs: null });
  });

  it('drops stale expiry entries without touching the records they no longer match', async () => {
    const { store } = await openStore();
    await put(store, 'k', 'v', 100);
    await put(store, 'plain', 'v');
    // Entries no put would leave: one for a key that does not exist, one for a live key at a
    // time its record does not carry, one for a key without expiry.
    await store.write([
      { op: 'put', tree: 'kv-expiry', key: encodeKey([T - 5, 'ghost']), value: new Uint8Array(0) },
      { op: 'put', tree: 'kv-expiry', key: encodeKey([T + 1, 'k']), value: new Uint8Array(0) },
      { op: 'put', tree: 'kv-expiry', key: encodeKey([T + 2, 'plain']), value: new Uint8Array(0) },
    ]);
    const sweep = kvExpireDue(store, T + 10, 10);
    expect(sweep).toMatchObject({ deleted: 0, nextExpiryMs: T + 100_000 });
    await sweep.durable;
    expect(kvGet(store, 'k', T + 10)?.value).toBe('v');
    expect(kvGet(store, 'plain', T + 10)?.value).toBe('v');
    expectConsistent(store);
  });

  it('sweeps a large value together with its record', async () => {
    const { store } = await openStore();
    await put(store, 'big', 'v'.repeat(MIB), 1);
    await put(store, 'big-kept', 'v'.repeat(MIB));
    const sweep = kvExpireDue(store, T + 1_000, 10);
    expect(sweep).toMatchObject({ deleted: 1, nextExpiryMs: null });
    await sweep.durable;
    expect(store.count('kv-value')).toBe(1);
    expect(kvGet(store, 'big-kept', T)?.value).toHaveLength(MIB);
    expectConsistent(store);
  });

  it('sweeps keys with NUL characters and unicode by their exact key', async () => {
    const { store } = await openStore();
    const keys = ['a\u0000', 'a', 'a\u0000b', '🔑/x'];
    for (const k of keys) await put(store, k, 'v', 1);
    await put(store, 'a\u0000\u0000', 'v');
    const sweep = kvExpireDue(store, T + 1_000, 100);
    expect(sweep.deleted).toBe(4);
    await sweep.durable;
    expect(kvList(store, {}, T).items.map((i) => i.key)).toEqual(['a\u0000\u0000']);
    expectConsistent(store);
  });
});
