import { afterEach, describe, expect, it } from 'vitest';
import { http, signup, startServer, type RunningServer } from '../helpers/server.js';

const servers: RunningServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});
async function start(overrides: Parameters<typeof startServer>[0]): Promise<RunningServer> {
  const s = await startServer(overrides);
  servers.push(s);
  return s;
}

describe('rate limiting per API key', () => {
  it('sends RateLimit headers and answers 429 with Retry-After once the bucket is empty', async () => {
    const server = await start({ rateLimit: 5 });
    const { apiKey } = await signup(server.url);
    const other = await signup(server.url);
    const results = [];
    for (let i = 0; i < 8; i++) results.push(await http(server.url, 'GET', '/api/kv/x', { apiKey }));
    expect(results[0]!.headers.get('ratelimit-limit')).toBe('5');
    expect(Number(results[0]!.headers.get('ratelimit-remaining'))).toBe(4);
    const limited = results.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThanOrEqual(2);
    expect(limited[0]!.body.error.code).toBe('RATE_LIMITED');
    expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited[0]!.headers.get('ratelimit-remaining')).toBe('0');
    // Another key has its own bucket.
    expect((await http(server.url, 'GET', '/api/kv/x', { apiKey: other.apiKey })).status).toBe(404);
    // The bucket refills.
    await new Promise((r) => setTimeout(r, 450));
    expect((await http(server.url, 'GET', '/api/kv/x', { apiKey })).status).toBe(404);
  });

  it('is off with a limit of 0', async () => {
    const server = await start({ rateLimit: 0 });
    const { apiKey } = await signup(server.url);
    const statuses = await Promise.all(Array.from({ length: 50 }, () => http(server.url, 'GET', '/api/kv/x', { apiKey }).then((r) => r.status)));
    expect(new Set(statuses)).toEqual(new Set([404]));
  });

  it('limits signups per client address', async () => {
    const server = await start({ signupRateLimit: 3 });
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      statuses.push((await http(server.url, 'POST', '/api/auth/signup', { json: { orgName: 'o', email: `ip${i}@example.com` } })).status);
    }
    expect(statuses.slice(0, 3)).toEqual([201, 201, 201]);
    expect(statuses.slice(3)).toEqual([429, 429]);
  });
});

describe('storage quota per tenant', () => {
  it('answers 507 QUOTA_EXCEEDED and writes nothing once a tenant is full; others are unaffected', async () => {
    const server = await start({ quotaBytes: 200 * 1024, bodyLimit: 2 * 1024 * 1024 });
    const full = await signup(server.url, 'full');
    const other = await signup(server.url, 'other');
    let status = 200;
    let i = 0;
    for (; i < 100 && status === 200; i++) {
      status = (await http(server.url, 'PUT', `/api/kv/k${i}`, { json: { value: 'v'.repeat(20_000) }, apiKey: full.apiKey })).status;
    }
    expect(status).toBe(507);
    const rejected = `k${i - 1}`;
    expect((await http(server.url, 'GET', `/api/kv/${rejected}`, { apiKey: full.apiKey })).status).toBe(404);
    const again = await http(server.url, 'PUT', '/api/kv/more', { json: { value: 'v'.repeat(50_000) }, apiKey: full.apiKey });
    expect(again.status).toBe(507);
    expect(again.body.error.code).toBe('QUOTA_EXCEEDED');
    // Reads and deletes still work for the full tenant; the other tenant writes freely.
    expect((await http(server.url, 'GET', '/api/kv/k0', { apiKey: full.apiKey })).status).toBe(200);
    expect((await http(server.url, 'DELETE', '/api/kv/k0', { apiKey: full.apiKey })).status).toBe(200);
    expect((await http(server.url, 'PUT', '/api/kv/k0', { json: { value: 'v'.repeat(20_000) }, apiKey: other.apiKey })).status).toBe(200);
  });
});
