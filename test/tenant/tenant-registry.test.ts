import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isTetraError } from '../../engine/errors.js';
import { WalWriter } from '../../engine/storage/index.js';
import { TenantRegistry } from '../../engine/tenant/index.js';
import { tempDir } from '../helpers/temp-dir.js';

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

const k = (s: string) => Buffer.from(s);

describe('TenantRegistry', () => {
  it('gives each tenant its own directory and data', async () => {
    const dir = tempDir('registry');
    dirs.push(dir);
    const registry = new TenantRegistry({ dataDir: dir.path, maxOpen: 4, idleCloseMs: 0, checkpointIntervalMs: 0 });
    await registry.use('alice', (s) => s.write([{ op: 'put', tree: 'kv', key: k('same'), value: k('from alice') }]));
    await registry.use('bob', (s) => s.write([{ op: 'put', tree: 'kv', key: k('same'), value: k('from bob') }]));
    expect(await registry.use('alice', (s) => s.get('kv', k('same'))?.toString())).toBe('from alice');
    expect(await registry.use('bob', (s) => s.get('kv', k('same'))?.toString())).toBe('from bob');
    expect(existsSync(join(dir.path, 'tenants', 'alice', 'data.tdb'))).toBe(true);
    expect(existsSync(join(dir.path, 'tenants', 'bob', 'data.tdb'))).toBe(true);
    await registry.close();
  });

  it('keeps at most maxOpen stores open, closing the least recently used cleanly', async () => {
    const dir = tempDir('lru');
    dirs.push(dir);
    const registry = new TenantRegistry({ dataDir: dir.path, maxOpen: 3, idleCloseMs: 0, checkpointIntervalMs: 0 });
    for (let i = 0; i < 10; i++) {
      await registry.use(`t${i}`, (s) => s.write([{ op: 'put', tree: 'kv', key: k('n'), value: k(String(i)) }]));
      await new Promise((r) => setImmediate(r));
    }
    // Closing is asynchronous (checkpoint first); let it finish.
    await new Promise((r) => setTimeout(r, 200));
    expect(registry.openCount).toBeLessThanOrEqual(3);
    // Closed tenants reopen with their data.
    for (let i = 0; i < 10; i++) {
      expect(await registry.use(`t${i}`, (s) => s.get('kv', k('n'))?.toString())).toBe(String(i));
    }
    await registry.close();
  });

  it('closes the least recently used store: a use of the newest store keeps it newest, a use of an older one makes it newest', async () => {
    const dir = tempDir('lru-order');
    dirs.push(dir);
    const registry = new TenantRegistry({ dataDir: dir.path, maxOpen: 3, idleCloseMs: 0, checkpointIntervalMs: 0 });
    const put = (t: string) => registry.use(t, (s) => s.write([{ op: 'put', tree: 'kv', key: k('n'), value: k(t) }]));
    // useNow answers in the calling turn (not a promise) only from a store that is open.
    const isOpen = (t: string): boolean => !(registry.useNow(t, () => 1) instanceof Promise);
    for (const t of ['a', 'b', 'c']) await put(t);
    // c is the newest: used again (twice) it stays so; then a, the oldest, is used: order b, c, a.
    for (let i = 0; i < 2; i++) registry.useNow('c', (s) => s.get('kv', k('n')));
    registry.useNow('a', (s) => s.get('kv', k('n')));
    await put('d'); // past maxOpen: b goes
    await new Promise((r) => setTimeout(r, 200));
    expect(['a', 'c', 'd'].map(isOpen)).toEqual([true, true, true]);
    expect(registry.openCount).toBe(3);
    await registry.close();

    // A store opened after another was made newest is the newest itself: b made newest, c
    // opened, b used (it moves after c), a used: c is the least recently used and goes, not b.
    const second = new TenantRegistry({ dataDir: dir.path, maxOpen: 3, idleCloseMs: 0, checkpointIntervalMs: 0 });
    const put2 = (t: string) => second.use(t, (s) => s.write([{ op: 'put', tree: 'kv', key: k('m'), value: k(t) }]));
    await put2('a');
    await put2('b');
    second.useNow('b', (s) => s.get('kv', k('m')));
    await put2('c');
    second.useNow('b', (s) => s.get('kv', k('m')));
    second.useNow('a', (s) => s.get('kv', k('m')));
    await put2('d');
    await new Promise((r) => setTimeout(r, 200));
    expect(second.openCount).toBe(3);
    expect(second.useNow('b', () => 1)).toBe(1); // open: answered in this turn
    await second.close();
  });

  it('never closes a store while it is in use, and shares one open among concurrent users', async () => {
    const dir = tempDir('busy');
    dirs.push(dir);
    const registry = new TenantRegistry({ dataDir: dir.path, maxOpen: 1, idleCloseMs: 0, checkpointIntervalMs: 0 });
    const stores = await Promise.all(Array.from({ length: 5 }, () => registry.use('same', (s) => s)));
    expect(new Set(stores).size).toBe(1);
    let release: () => void = () => undefined;
    const held = registry.use('busy', async (s) => {
      await new Promise<void>((r) => (release = r));
      return s.write([{ op: 'put', tree: 'kv', key: k('late'), value: k('ok') }]);
    });
    await new Promise((r) => setTimeout(r, 20));
    await registry.use('other', (s) => s.count('kv'));
    await new Promise((r) => setTimeout(r, 50));
    release();
    await held; // would reject with UNAVAILABLE had the store been closed under it
    expect(await registry.use('busy', (s) => s.get('kv', k('late'))?.toString())).toBe('ok');
    await registry.close();
  });

  it('closes idle stores after idleCloseMs', async () => {
    const dir = tempDir('idle');
    dirs.push(dir);
    const registry = new TenantRegistry({ dataDir: dir.path, maxOpen: 10, idleCloseMs: 100, checkpointIntervalMs: 0 });
    await registry.use('sleepy', (s) => s.write([{ op: 'put', tree: 'kv', key: k('a'), value: k('b') }]));
    expect(registry.openCount).toBe(1);
    // Closing takes a checkpoint: on a loaded host it can run well past the idle time, so wait for
    // it (up to 10 s) rather than for a fixed 400 ms (this failed once in a CI run beside other work).
    const deadline = Date.now() + 10_000;
    while (registry.openCount > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(registry.openCount).toBe(0);
    expect(await registry.use('sleepy', (s) => s.get('kv', k('a'))?.toString())).toBe('b');
    await registry.close();
  });

  it.each(['', '../escape', 'a/b', 'x'.repeat(65), 'dot.dot'])('rejects the unsafe tenant id %j', async (id) => {
    const dir = tempDir('ids');
    dirs.push(dir);
    const registry = new TenantRegistry({ dataDir: dir.path, idleCloseMs: 0 });
    const err = await registry.use(id, () => 1).then(() => undefined, (e: unknown) => e);
    expect(isTetraError(err, 'VALIDATION_FAILED')).toBe(true);
    await registry.close();
  });

  it('refuses use after close with UNAVAILABLE', async () => {
    const dir = tempDir('closed');
    dirs.push(dir);
    const registry = new TenantRegistry({ dataDir: dir.path, idleCloseMs: 0 });
    await registry.use('a', (s) => s.write([{ op: 'put', tree: 'kv', key: k('a'), value: k('b') }]));
    await registry.close();
    await expect(registry.use('a', () => 1)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  });
});

describe('TenantRegistry after a store failure', () => {
  it('reopens a store that failed instead of refusing the tenant until a restart', async () => {
    const dir = tempDir('failed');
    dirs.push(dir);
    const registry = new TenantRegistry({ dataDir: dir.path, idleCloseMs: 0, checkpointIntervalMs: 0 });
    await registry.use('t', (s) => s.write([{ op: 'put', tree: 'kv', key: k('kept'), value: k('acknowledged') }]));
    // The next log write fails (a full disk, an I/O error): the store is failed from then on.
    const append = vi.spyOn(WalWriter.prototype, 'appendFrame').mockImplementationOnce(() => Promise.reject(new Error('EIO: simulated write failure')));
    const failed = await registry.use('t', (s) => s.write([{ op: 'put', tree: 'kv', key: k('lost'), value: k('never acknowledged') }])).catch((e: unknown) => e);
    append.mockRestore();
    expect(isTetraError(failed, 'UNAVAILABLE'), String(failed)).toBe(true);
    // The next use gets the store reopened from its files: the acknowledged write is there, the
    // failed one is not, and writes work again.
    expect(await registry.use('t', (s) => [s.failed, s.get('kv', k('kept'))?.toString(), s.get('kv', k('lost'))])).toEqual([false, 'acknowledged', undefined]);
    await registry.use('t', (s) => s.write([{ op: 'put', tree: 'kv', key: k('after'), value: k('ok') }]));
    expect(await registry.use('t', (s) => s.get('kv', k('after'))?.toString())).toBe('ok');
    await registry.close();
  });
});
