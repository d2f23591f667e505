import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KvExpiryService, kvGet, kvList, kvPut, scheduleAllTenants } from '../../engine/kv/index.js';
import { TenantRegistry, type TenantStore } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function newDataDir(): string {
  const dir = tempDir('kv-expiry');
  cleanups.push(dir.remove);
  return dir.path;
}

function newRegistry(dataDir: string): TenantRegistry {
  const registry = new TenantRegistry({ dataDir, idleCloseMs: 0, checkpointIntervalMs: 0 });
  cleanups.push(() => registry.close());
  return registry;
}

function newService(registry: TenantRegistry, options: ConstructorParameters<typeof KvExpiryService>[1] = {}): KvExpiryService {
  const service = new KvExpiryService(registry, { tickMs: 20, ...options });
  cleanups.push(() => service.stop());
  return service;
}

/** Polls `check` until it holds; gives up (returning false) after a generous deadline. */
async function eventually(check: () => Promise<boolean>, giveUpMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + giveUpMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

const counts = (registry: TenantRegistry, tenantId: string) =>
  registry.use(tenantId, (s: TenantStore) => ({ kv: s.count('kv'), expiry: s.count('kv-expiry') }));

/** Puts `expiring` keys with `ttl` and `kept` keys without; returns the earliest expiry. */
async function fill(registry: TenantRegistry, tenantId: string, expiring: number, kept: number, ttl: number): Promise<number> {
  return registry.use(tenantId, async (store) => {
    let earliest = Infinity;
    const writes: Array<Promise<void>> = [];
    for (let i = 0; i < expiring; i++) {
      const put = kvPut(store, `session/${i}`, `s${i}`, ttl);
      writes.push(put.durable);
      earliest = Math.min(earliest, put.expiresAtMs!);
    }
    for (let i = 0; i < kept; i++) writes.push(kvPut(store, `user/${i}`, `u${i}`, null).durable);
    await Promise.all(writes);
    return earliest;
  });
}

describe('KvExpiryService', () => {
  it('deletes expired keys nobody reads, across two tenants, in bounded batches', async () => {
    const registry = newRegistry(newDataDir());
    const errors: unknown[] = [];
    const service = newService(registry, { batchSize: 7, onError: (err) => errors.push(err) });
    service.start();
    const alpha = await fill(registry, 'alpha', 40, 5, 0.2);
    const beta = await fill(registry, 'beta', 9, 3, 0.2);
    // A later wake-up after an earlier one is ignored; the earlier one is kept.
    service.schedule('alpha', alpha + 60_000);
    service.schedule('alpha', alpha);
    service.schedule('beta', beta);
    service.schedule('beta', beta + 60_000);

    const swept = await eventually(async () => {
      const [a, b] = [await counts(registry, 'alpha'), await counts(registry, 'beta')];
      return a.kv === 5 && a.expiry === 0 && b.kv === 3 && b.expiry === 0;
    });
    expect(swept).toBe(true);
    expect(errors).toEqual([]);
    expect(await registry.use('alpha', (s) => kvList(s, {}).items.map((i) => i.key))).toEqual(['user/0', 'user/1', 'user/2', 'user/3', 'user/4']);
  });

  it('picks up pending expirations after a restart with scheduleAllTenants', async () => {
    const dataDir = newDataDir();
    const before = new TenantRegistry({ dataDir, idleCloseMs: 0, checkpointIntervalMs: 0 });
    await fill(before, 'alpha', 12, 2, 0.3);
    await fill(before, 'beta', 4, 1, 0.3);
    await before.use('gamma', (s) => kvPut(s, 'far', 'v', 3600).durable);
    await before.use('empty', (s) => kvPut(s, 'plain', 'v', null).durable);
    await before.close();

    const registry = newRegistry(dataDir);
    const errors: unknown[] = [];
    const service = newService(registry, { batchSize: 5, onError: (err) => errors.push(err) });
    await scheduleAllTenants(service, registry, ['alpha', 'beta', 'gamma', 'empty']);
    service.start();
    const swept = await eventually(async () => {
      const [a, b] = [await counts(registry, 'alpha'), await counts(registry, 'beta')];
      return a.kv === 2 && a.expiry === 0 && b.kv === 1 && b.expiry === 0;
    });
    expect(swept).toBe(true);
    expect(await counts(registry, 'gamma')).toEqual({ kv: 1, expiry: 1 });
    expect(await registry.use('gamma', (s) => kvGet(s, 'far')?.value)).toBe('v');
    expect(await counts(registry, 'empty')).toEqual({ kv: 1, expiry: 0 });
    expect(errors).toEqual([]);
  });

  it('reports a tenant that cannot be opened through onError and still sweeps the others', async () => {
    const dataDir = newDataDir();
    const broken = join(dataDir, 'tenants', 'broken');
    mkdirSync(broken, { recursive: true });
    writeFileSync(join(broken, 'data.tdb'), Buffer.alloc(8192, 0xab));
    const registry = newRegistry(dataDir);
    const errors: Array<{ err: unknown; tenantId: string }> = [];
    const service = newService(registry, { onError: (err, tenantId) => errors.push({ err, tenantId }) });
    await fill(registry, 'fine', 3, 1, 0.1);
    await scheduleAllTenants(service, registry, ['broken', 'fine']);
    service.start();
    expect(await eventually(async () => errors.length > 0 && (await counts(registry, 'fine')).kv === 1)).toBe(true);
    expect(errors[0]).toMatchObject({ tenantId: 'broken', err: { code: 'CORRUPTION' } });
  });

  it('refuses an unusable tenant id and bad options', () => {
    const registry = newRegistry(newDataDir());
    const service = newService(registry);
    expect(() => service.schedule('../escape', Date.now())).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => service.schedule('ok', NaN)).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => new KvExpiryService(registry, { tickMs: 0 })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
    expect(() => new KvExpiryService(registry, { batchSize: 1.5 })).toThrow(expect.objectContaining({ code: 'VALIDATION_FAILED' }));
  });

  it('stop() waits for sweeps in flight, after which the registry closes cleanly', async () => {
    const registry = newRegistry(newDataDir());
    const service = newService(registry, { tickMs: 5, batchSize: 1 });
    service.start();
    service.schedule('alpha', await fill(registry, 'alpha', 50, 0, 0.01));
    await eventually(async () => (await counts(registry, 'alpha')).kv < 50);
    await service.stop();
    await registry.close();
  });
});
