import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, signup, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let apiKey: string;
beforeAll(async () => {
  server = await startServer({ bodyLimit: 2 * 1024 * 1024 });
  ({ apiKey } = await signup(server.url));
});
afterAll(() => server.stop());

// Dots are percent-encoded too: many HTTP clients resolve the keys "." and ".." as path
// segments before sending (the test client sends paths verbatim).
const path = (key: string) => `/api/kv/${encodeURIComponent(key).replace(/\./g, '%2E')}`;

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

describe('key-value over HTTP', () => {
  it.each(['simple', 'with/slashes/in/it', 'with spaces and ünïcödé 🚀', 'k'.repeat(512), '?#%&=', '.', '..'])('round-trips the key %j', async (key) => {
    const put = await http(server.url, 'PUT', path(key), { json: { value: `value of ${key}` }, apiKey });
    expect(put.status, put.text).toBe(200);
    expect(put.body).toEqual({ key, expiresAt: null });
    const get = await http(server.url, 'GET', path(key), { apiKey });
    expect(get.body).toEqual({ key, value: `value of ${key}`, ttl: null, expiresAt: null });
    const del = await http(server.url, 'DELETE', path(key), { apiKey });
    expect(del.body).toEqual({ key, deleted: true });
    expect((await http(server.url, 'GET', path(key), { apiKey })).status).toBe(404);
    expect((await http(server.url, 'DELETE', path(key), { apiKey })).status).toBe(404);
  });

  it('accepts unencoded slashes in the path too', async () => {
    await http(server.url, 'PUT', '/api/kv/a/b/c', { json: { value: 'v' }, apiKey });
    expect((await http(server.url, 'GET', path('a/b/c'), { apiKey })).body.value).toBe('v');
  });

  it('stores the empty string and a value of exactly 1 MiB', async () => {
    expect((await http(server.url, 'PUT', path('empty'), { json: { value: '' }, apiKey })).status).toBe(200);
    expect((await http(server.url, 'GET', path('empty'), { apiKey })).body.value).toBe('');
    const big = 'b'.repeat(1024 * 1024);
    expect((await http(server.url, 'PUT', path('big'), { json: { value: big }, apiKey })).status).toBe(200);
    expect((await http(server.url, 'GET', path('big'), { apiKey })).body.value).toBe(big);
  });

  const invalid: Array<[string, string, unknown]> = [
    ['a key over 512 bytes', 'k'.repeat(513), { value: 'v' }],
    ['a key of 171 three-byte characters (513 bytes)', '€'.repeat(171), { value: 'v' }],
    ['a value over 1 MiB', 'v', { value: 'x'.repeat(1024 * 1024 + 1) }],
    ['a zero ttl', 'v', { value: 'x', ttl: 0 }],
    ['a negative ttl', 'v', { value: 'x', ttl: -1 }],
    ['a ttl over the maximum', 'v', { value: 'x', ttl: 10 * 365 * 24 * 3600 + 1 }],
    ['a string ttl', 'v', { value: 'x', ttl: '10' }],
  ];
  it.each(invalid)('rejects %s with 400 VALIDATION_FAILED and writes nothing', async (_what, key, body) => {
    const res = await http(server.url, 'PUT', path(key), { json: body, apiKey });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect((await http(server.url, 'GET', path(key), { apiKey })).status).toBe(Buffer.byteLength(key) > 512 ? 400 : 404);
  });

  it('refuses query parameters on a key (a ttl given as ?ttl=60 is not silently ignored), writing nothing', async () => {
    for (const method of ['PUT', 'GET', 'DELETE'] as const) {
      const res = await http(server.url, method, `${path('q')}?ttl=60`, { ...(method === 'PUT' ? { json: { value: 'v' } } : {}), apiKey });
      expect(res.status, `${method} ${res.text}`).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_FAILED');
      expect(res.body.error.message).toContain('ttl');
    }
    expect((await http(server.url, 'GET', path('q'), { apiKey })).status).toBe(404);
  });

  it('rejects an empty key', async () => {
    const res = await http(server.url, 'PUT', '/api/kv/', { json: { value: 'v' }, apiKey });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('expires a key exactly for readers: fractional ttl, remaining ttl, gone after', async () => {
    const put = await http(server.url, 'PUT', path('short'), { json: { value: 'soon', ttl: 0.4 }, apiKey });
    const expiresAt = Date.parse(put.body.expiresAt);
    expect(expiresAt).toBeGreaterThan(Date.now());
    const get = await http(server.url, 'GET', path('short'), { apiKey });
    if (get.status === 200) {
      expect(get.body.ttl).toBeGreaterThan(0);
      expect(get.body.ttl).toBeLessThanOrEqual(0.4);
      expect(get.body.expiresAt).toBe(put.body.expiresAt);
    }
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 20));
    expect((await http(server.url, 'GET', path('short'), { apiKey })).status).toBe(404);
    const list = await http(server.url, 'GET', '/api/kv?prefix=short', { apiKey });
    expect(list.body.items).toEqual([]);
  });

  it('a PUT without ttl removes an expiry; a PUT with ttl sets one', async () => {
    await http(server.url, 'PUT', path('sticky'), { json: { value: 'a', ttl: 0.3 }, apiKey });
    await http(server.url, 'PUT', path('sticky'), { json: { value: 'b' }, apiKey });
    await new Promise((r) => setTimeout(r, 400));
    expect((await http(server.url, 'GET', path('sticky'), { apiKey })).body).toMatchObject({ value: 'b', ttl: null, expiresAt: null });
  });

  it('removes expired keys actively, without anyone reading them', async () => {
    const own = await signup(server.url, 'active');
    // A ttl long enough for the 21 writes to land first on a loaded machine (0.2 s was not).
    for (let i = 0; i < 20; i++) await http(server.url, 'PUT', path(`temp-${i}`), { json: { value: 'x', ttl: 1.5 }, apiKey: own.apiKey });
    await http(server.url, 'PUT', path('keeper'), { json: { value: 'x' }, apiKey: own.apiKey });
    const count = () => server.app.tetra.registry.use(own.tenantId, (store) => store.count('kv'));
    expect(await count()).toBe(21);
    expect(await waitFor(async () => (await count()) === 1, 10_000)).toBe(true);
  });

  it('lists keys in order with prefix and cursor pagination', async () => {
    const own = await signup(server.url, 'list');
    const keys = Array.from({ length: 25 }, (_, i) => `user:${String(i).padStart(2, '0')}`);
    for (const k of [...keys, 'other:1', 'usex']) await http(server.url, 'PUT', path(k), { json: { value: k }, apiKey: own.apiKey });
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const q: string = `/api/kv?prefix=${encodeURIComponent('user:')}&limit=10${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page = await http(server.url, 'GET', q, { apiKey: own.apiKey });
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.items.map((i: { key: string }) => i.key));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(seen).toEqual(keys);
    expect(pages).toBe(3);
    const all = await http(server.url, 'GET', '/api/kv', { apiKey: own.apiKey });
    expect(all.body.items.map((i: { key: string }) => i.key)).toEqual(['other:1', ...keys, 'usex']);
  });

  it.each([['limit=0'], ['limit=1001'], ['limit=abc'], ['cursor=%%%'], ['bogus=1']])('rejects the list query %s with VALIDATION_FAILED', async (query) => {
    const res = await http(server.url, 'GET', `/api/kv?${query}`, { apiKey });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('keeps tenants apart: same key names, separate values, no listing across', async () => {
    const a = await signup(server.url, 'iso-a');
    const b = await signup(server.url, 'iso-b');
    await http(server.url, 'PUT', path('shared-name'), { json: { value: 'A' }, apiKey: a.apiKey });
    await http(server.url, 'PUT', path('shared-name'), { json: { value: 'B' }, apiKey: b.apiKey });
    await http(server.url, 'PUT', path('only-a'), { json: { value: 'A' }, apiKey: a.apiKey });
    expect((await http(server.url, 'GET', path('shared-name'), { apiKey: a.apiKey })).body.value).toBe('A');
    expect((await http(server.url, 'GET', path('shared-name'), { apiKey: b.apiKey })).body.value).toBe('B');
    expect((await http(server.url, 'GET', path('only-a'), { apiKey: b.apiKey })).status).toBe(404);
    expect((await http(server.url, 'DELETE', path('only-a'), { apiKey: b.apiKey })).status).toBe(404);
    const listB = await http(server.url, 'GET', '/api/kv', { apiKey: b.apiKey });
    expect(listB.body.items.map((i: { key: string }) => i.key)).toEqual(['shared-name']);
    expect((await http(server.url, 'GET', path('only-a'), { apiKey: a.apiKey })).body.value).toBe('A');
  });
});

describe('key-value across a restart', () => {
  it('keeps values and absolute expiry; keys that expired while down are gone', async () => {
    const first = await startServer();
    const { apiKey: key } = await signup(first.url);
    await http(first.url, 'PUT', path('durable'), { json: { value: 'stays' }, apiKey: key });
    const long = await http(first.url, 'PUT', path('long'), { json: { value: 'later', ttl: 3600 }, apiKey: key });
    await http(first.url, 'PUT', path('brief'), { json: { value: 'gone', ttl: 0.3 }, apiKey: key });
    await first.stop({ keepData: true });
    await new Promise((r) => setTimeout(r, 400));
    const second = await startServer({ dataDir: first.dataDir });
    try {
      expect((await http(second.url, 'GET', path('durable'), { apiKey: key })).body.value).toBe('stays');
      const got = await http(second.url, 'GET', path('long'), { apiKey: key });
      expect(got.body.expiresAt).toBe(long.body.expiresAt);
      expect(got.body.ttl).toBeLessThan(3600);
      expect((await http(second.url, 'GET', path('brief'), { apiKey: key })).status).toBe(404);
      const tenantId = (await http(second.url, 'GET', '/api/health', { apiKey: key })).body.tenant.id as string;
      // The start-up sweep deletes it from storage too, without a read of that key.
      const gone = async () => (await second.app.tetra.registry.use(tenantId, (s) => s.count('kv'))) === 2;
      expect(await waitFor(gone)).toBe(true);
    } finally {
      await second.stop();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});
