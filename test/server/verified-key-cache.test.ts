import { afterEach, describe, expect, it, vi } from 'vitest';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { SystemStore } from '../../engine/system/index.js';
import { VerifiedKeyCache } from '../../server/verified-key-cache.js';
import { tempDir } from '../helpers/temp-dir.js';

const cache = new PageCache<TreeNode>(4 * 1024 * 1024);
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function fresh(): Promise<{ system: SystemStore; apiKey: string; tenantId: string; keyId: string }> {
  const dir = tempDir('verified-keys');
  cleanup.push(() => dir.remove());
  const system = await SystemStore.open({ dir: dir.path, cache });
  cleanup.push(() => system.close());
  const { apiKey, tenant, key } = await system.signup({ orgName: 'Acme', email: 'ann@example.com' });
  return { system, apiKey, tenantId: tenant.id, keyId: key.id };
}

/** The same key with one character of its secret changed. */
function tampered(apiKey: string): string {
  const last = apiKey.at(-1) === 'A' ? 'B' : 'A';
  return apiKey.slice(0, -1) + last;
}

describe('VerifiedKeyCache', () => {
  it('answers a key seen within the TTL without asking SystemStore, and asks again after it', async () => {
    const { system, apiKey, tenantId, keyId } = await fresh();
    const keys = new VerifiedKeyCache(system, { ttlMs: 1000 });
    const spy = vi.spyOn(system, 'authenticate');
    expect(keys.authenticate(apiKey, 0)).toEqual({ tenantId, userId: expect.any(String), keyId });
    expect(keys.authenticate(apiKey, 999)).toEqual({ tenantId, userId: expect.any(String), keyId });
    expect(spy).toHaveBeenCalledTimes(1);
    expect(keys.authenticate(apiKey, 1000)?.keyId).toBe(keyId);
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it.each([
    ['a wrong secret for a remembered key id', (k: string) => tampered(k)],
    ['a shorter key', (k: string) => k.slice(0, -1)],
    ['a longer key', (k: string) => `${k}x`],
    ['the key id alone', (k: string) => k.slice(0, 22)],
    ['an empty string', () => ''],
  ])('refuses %s, and keeps accepting the real key', async (_what, change) => {
    const { system, apiKey } = await fresh();
    const keys = new VerifiedKeyCache(system);
    expect(keys.authenticate(apiKey)).toBeDefined();
    expect(keys.authenticate(change(apiKey))).toBeUndefined();
    expect(keys.authenticate(apiKey)).toBeDefined();
  });

  it('refuses a remembered key from the moment revokeKey is called', async () => {
    const { system, apiKey, tenantId, keyId } = await fresh();
    const keys = new VerifiedKeyCache(system, { ttlMs: 60_000 });
    expect(keys.authenticate(apiKey)).toBeDefined();
    const revoking = keys.revokeKey(tenantId, keyId);
    expect(keys.authenticate(apiKey)).toBeUndefined();
    await revoking;
    expect(keys.authenticate(apiKey)).toBeUndefined();
  });

  it('refuses a key revoked behind its back once the TTL has passed', async () => {
    const { system, apiKey, tenantId, keyId } = await fresh();
    const keys = new VerifiedKeyCache(system, { ttlMs: 1000 });
    expect(keys.authenticate(apiKey, 0)).toBeDefined();
    await system.revokeKey(tenantId, keyId);
    expect(keys.authenticate(apiKey, 1000)).toBeUndefined();
    expect(keys.authenticate(apiKey, 1001)).toBeUndefined();
  });

  it('passes on NOT_FOUND from revokeKey', async () => {
    const { system, tenantId } = await fresh();
    const keys = new VerifiedKeyCache(system);
    await expect(keys.revokeKey(tenantId, '0123456789abcdef')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('stays within maxEntries, still authenticating every key', async () => {
    const { system, apiKey } = await fresh();
    const principal = system.authenticate(apiKey)!;
    const others = [];
    for (let i = 0; i < 3; i++) others.push((await system.createKey(principal)).apiKey);
    const keys = new VerifiedKeyCache(system, { maxEntries: 2 });
    const spy = vi.spyOn(system, 'authenticate');
    for (const k of [apiKey, ...others, apiKey, ...others]) expect(keys.authenticate(k)).toBeDefined();
    // Four keys through a cache of two, least recently verified dropped first: every one is a miss.
    expect(spy).toHaveBeenCalledTimes(8);
    // The two most recent stay.
    expect(keys.authenticate(others[2]!)).toBeDefined();
    expect(keys.authenticate(others[1]!)).toBeDefined();
    expect(spy).toHaveBeenCalledTimes(8);
  });
});
