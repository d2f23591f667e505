import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, signup, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ signupRateLimit: 0 });
});
afterAll(() => server.stop());

describe('signup', () => {
  it('creates a user, a tenant and a key shown once', async () => {
    const res = await http(server.url, 'POST', '/api/auth/signup', { json: { orgName: 'Acme', email: '  Ann.Smith@Example.COM ' } });
    expect(res.status).toBe(201);
    expect(res.body.apiKey).toMatch(/^tetra_[0-9a-f]{16}_[A-Za-z0-9_-]{22,}$/);
    expect(res.body.user).toMatchObject({ id: expect.any(String), email: 'ann.smith@example.com', createdAt: expect.any(String) });
    expect(res.body.tenant).toMatchObject({ id: expect.any(String), name: 'Acme', createdAt: expect.any(String) });
    expect(new Date(res.body.user.createdAt).toISOString()).toBe(res.body.user.createdAt);
    // The key works at once.
    expect((await http(server.url, 'GET', '/api/health', { apiKey: res.body.apiKey })).status).toBe(200);
  });

  it('refuses an email already registered, whatever its case, with 409 CONFLICT', async () => {
    await http(server.url, 'POST', '/api/auth/signup', { json: { orgName: 'One', email: 'dup@example.com' } });
    const again = await http(server.url, 'POST', '/api/auth/signup', { json: { orgName: 'Two', email: 'DUP@example.com' } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
  });

  it('gives exactly one 201 when the same email signs up concurrently', async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, () => http(server.url, 'POST', '/api/auth/signup', { json: { orgName: 'Race', email: 'race@example.com' } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(7);
  });

  const invalid: Array<[string, unknown]> = [
    ['no body', undefined],
    ['a missing email', { orgName: 'Acme' }],
    ['a missing orgName', { email: 'a@example.com' }],
    ['an email without @', { orgName: 'Acme', email: 'not-an-email' }],
    ['an email with a space', { orgName: 'Acme', email: 'a b@example.com' }],
    ['an email without a domain dot', { orgName: 'Acme', email: 'a@localhost' }],
    ['an empty orgName', { orgName: '', email: 'a@example.com' }],
    ['a blank orgName', { orgName: '   ', email: 'a@example.com' }],
    ['an orgName of 201 characters', { orgName: 'x'.repeat(201), email: 'a@example.com' }],
    ['a numeric orgName', { orgName: 5, email: 'a@example.com' }],
    ['an extra field', { orgName: 'Acme', email: 'a@example.com', admin: true }],
  ];
  it.each(invalid)('rejects %s with 400 VALIDATION_FAILED naming the field', async (_what, body) => {
    const res = await http(server.url, 'POST', '/api/auth/signup', body === undefined ? { raw: '', contentType: 'application/json' } : { json: body });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('VALIDATION_FAILED');
    expect(res.body.error.message).toMatch(/orgName|email|admin|body/);
  });

  it('accepts an orgName of exactly 200 characters', async () => {
    const res = await http(server.url, 'POST', '/api/auth/signup', { json: { orgName: 'y'.repeat(200), email: 'long@example.com' } });
    expect(res.status).toBe(201);
  });

  it('counts the limits after trimming (docs/api.md): 200 characters of name and a 254-character address within spaces', async () => {
    const local = 'l'.repeat(64);
    const email = `${local}@${'d'.repeat(60)}.${'e'.repeat(60)}.${'f'.repeat(60)}.${'g'.repeat(3)}`;
    expect(email.length).toBeLessThanOrEqual(254);
    const res = await http(server.url, 'POST', '/api/auth/signup', { json: { orgName: `  ${'z'.repeat(200)}  `, email: `   ${email}   ` } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.tenant.name).toBe('z'.repeat(200));
    expect(res.body.user.email).toBe(email);
  });
});

describe('API keys', () => {
  const unauthorized: Array<[string, Record<string, string>]> = [
    ['no Authorization header', {}],
    ['a Basic scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['Bearer without a key', { authorization: 'Bearer ' }],
    ['a malformed key', { authorization: 'Bearer not-a-key' }],
    ['an unknown key', { authorization: 'Bearer tetra_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }],
  ];
  it.each(unauthorized)('answers %s with 401 UNAUTHORIZED and WWW-Authenticate: Bearer', async (_what, headers) => {
    for (const [method, path] of [['GET', '/api/health'], ['GET', '/api/kv/x'], ['GET', '/api/auth/keys']] as const) {
      const res = await http(server.url, method, path, { headers });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
    }
  });

  it('rejects a tampered secret of a real key', async () => {
    const { apiKey } = await signup(server.url);
    const last = apiKey.at(-1) === 'A' ? 'B' : 'A';
    const res = await http(server.url, 'GET', '/api/health', { apiKey: apiKey.slice(0, -1) + last });
    expect(res.status).toBe(401);
  });

  it('creates, lists (without secrets) and revokes keys; a revoked key gets 401 at once', async () => {
    const { apiKey } = await signup(server.url, 'keys');
    const created = await http(server.url, 'POST', '/api/auth/keys', { json: { name: 'ci' }, apiKey });
    expect(created.status).toBe(201);
    expect(created.body.apiKey).toMatch(/^tetra_/);
    expect(created.body.key).toMatchObject({ id: expect.any(String), name: 'ci' });
    const second = created.body.apiKey as string;
    expect((await http(server.url, 'GET', '/api/health', { apiKey: second })).status).toBe(200);

    const list = await http(server.url, 'GET', '/api/auth/keys', { apiKey });
    expect(list.status).toBe(200);
    expect(list.body.keys).toHaveLength(2);
    // The secret is everything after tetra_<keyId>_ (base64url: it may contain '_' itself).
    const secret = (key: string): string => key.slice('tetra_'.length + 16 + 1);
    expect(secret(second)).toHaveLength(43);
    expect(list.text).not.toContain(secret(second));
    expect(list.text).not.toContain(secret(apiKey));

    const revoke = await http(server.url, 'DELETE', `/api/auth/keys/${created.body.key.id}`, { apiKey });
    expect(revoke.status).toBe(200);
    expect(revoke.body).toEqual({ keyId: created.body.key.id, revoked: true });
    const after = await http(server.url, 'GET', '/api/health', { apiKey: second });
    expect(after.status).toBe(401);
    expect((await http(server.url, 'GET', '/api/health', { apiKey })).status).toBe(200);
    expect((await http(server.url, 'DELETE', `/api/auth/keys/${created.body.key.id}`, { apiKey })).status).toBe(404);
  });

  it("cannot revoke another tenant's key (404) and that key keeps working", async () => {
    const a = await signup(server.url, 'a');
    const b = await signup(server.url, 'b');
    const bKeys = await http(server.url, 'GET', '/api/auth/keys', { apiKey: b.apiKey });
    const bKeyId = bKeys.body.keys[0].id as string;
    const res = await http(server.url, 'DELETE', `/api/auth/keys/${bKeyId}`, { apiKey: a.apiKey });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
    expect((await http(server.url, 'GET', '/api/health', { apiKey: b.apiKey })).status).toBe(200);
  });

  it('rejects a bad key name with VALIDATION_FAILED', async () => {
    const { apiKey } = await signup(server.url);
    const res = await http(server.url, 'POST', '/api/auth/keys', { json: { name: 'x'.repeat(101) }, apiKey });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^name /);
  });

  it('keeps users, keys and revocations across a restart', async () => {
    const dataServer = await startServer({ signupRateLimit: 0 });
    const { apiKey } = await signup(dataServer.url);
    const extra = await http(dataServer.url, 'POST', '/api/auth/keys', { json: {}, apiKey });
    await http(dataServer.url, 'DELETE', `/api/auth/keys/${extra.body.key.id}`, { apiKey });
    await dataServer.stop({ keepData: true });
    const restarted = await startServer({ dataDir: dataServer.dataDir, signupRateLimit: 0 });
    try {
      expect((await http(restarted.url, 'GET', '/api/health', { apiKey })).status).toBe(200);
      expect((await http(restarted.url, 'GET', '/api/health', { apiKey: extra.body.apiKey })).status).toBe(401);
    } finally {
      await restarted.stop();
    }
  });
});
