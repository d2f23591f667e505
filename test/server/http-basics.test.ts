import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, signup, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let apiKey: string;
beforeAll(async () => {
  server = await startServer({ bodyLimit: 64 * 1024 });
  ({ apiKey } = await signup(server.url));
});
afterAll(() => server.stop());

function expectEnvelope(res: { status: number; body: any; text: string; headers: Headers }, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body?.error?.code, res.text).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.text).not.toMatch(/\bat .*\.(ts|js):\d+/); // never a stack trace
  expect(res.text).not.toContain('FST_');
  expect(res.headers.get('x-request-id')).toBeTruthy();
}

describe('the HTTP envelope', () => {
  it('answers a path that is not valid percent-encoding with 400 VALIDATION_FAILED in the envelope, on every route', async () => {
    for (const [method, path] of [['GET', '/api/kv/%ZZ'], ['GET', '/api/kv/%C3'], ['PUT', '/api/kv/a%ZZ'], ['GET', '/api/vector/%ZZ'], ['POST', '/api/mql/find%ZZ'], ['GET', '/api/nope/%ZZ']] as const) {
      for (const key of [apiKey, undefined]) {
        const res = await http(server.url, method, path, { apiKey: key, ...(method === 'GET' ? {} : { json: { value: 'v' } }) });
        expectEnvelope(res, 400, 'VALIDATION_FAILED');
        expect(res.body.error.message).toContain('percent-encoded');
      }
    }
  });

  it('answers unknown routes with 404 NOT_FOUND in the error envelope', async () => {
    expectEnvelope(await http(server.url, 'GET', '/api/nope'), 404, 'NOT_FOUND');
    expectEnvelope(await http(server.url, 'POST', '/api/kv/x/y', { json: {}, apiKey }), 404, 'NOT_FOUND');
  });

  it('puts an x-request-id on every response, echoing a sane one the client sent', async () => {
    const given = await http(server.url, 'GET', '/api/health', { apiKey, headers: { 'x-request-id': 'trace-123' } });
    expect(given.headers.get('x-request-id')).toBe('trace-123');
    const generated = await http(server.url, 'GET', '/api/health', { apiKey, headers: { 'x-request-id': 'bad id with spaces' } });
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const unauthorized = await http(server.url, 'GET', '/api/health');
    expect(unauthorized.headers.get('x-request-id')).toBeTruthy();
  });

  const bad: Array<[string, { raw?: string; contentType?: string; json?: unknown }, number, string]> = [
    ['malformed JSON', { raw: '{"value": ', contentType: 'application/json' }, 400, 'INVALID_JSON'],
    ['a JSON body that is not an object', { raw: '"just a string"', contentType: 'application/json' }, 400, 'VALIDATION_FAILED'],
    ['text/plain', { raw: 'value=1', contentType: 'text/plain' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['form encoding', { raw: 'value=1', contentType: 'application/x-www-form-urlencoded' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['a body over the limit', { json: { value: 'x'.repeat(70 * 1024) } }, 413, 'PAYLOAD_TOO_LARGE'],
    ['a wrong field type', { json: { value: 42 } }, 400, 'VALIDATION_FAILED'],
    ['a missing field', { json: { ttl: 5 } }, 400, 'VALIDATION_FAILED'],
    ['an unknown field', { json: { value: 'v', tll: 5 } }, 400, 'VALIDATION_FAILED'],
    // "__proto__" is kept as a plain field (the document model stores it as data); here it is an unknown field.
    ['a __proto__ key', { raw: '{"value":"v","__proto__":{"x":1}}', contentType: 'application/json' }, 400, 'VALIDATION_FAILED'],
  ];
  it.each(bad)('rejects %s with the right status and code, changing nothing', async (_what, request, status, code) => {
    const res = await http(server.url, 'PUT', '/api/kv/unchanged', { ...request, apiKey });
    expectEnvelope(res, status, code);
    expect((await http(server.url, 'GET', '/api/kv/unchanged', { apiKey })).status).toBe(404);
  });

  it('names the offending field in validation messages', async () => {
    const wrongType = await http(server.url, 'PUT', '/api/kv/k', { json: { value: 42 }, apiKey });
    expect(wrongType.body.error.message).toMatch(/^value /);
    expect(wrongType.body.error.details).toMatchObject({ field: 'value' });
    const missing = await http(server.url, 'PUT', '/api/kv/k', { json: { ttl: 5 }, apiKey });
    expect(missing.body.error.message).toBe('value is required');
    const unknown = await http(server.url, 'PUT', '/api/kv/k', { json: { value: 'v', tll: 5 }, apiKey });
    expect(unknown.body.error.message).toBe('tll is not an accepted field');
  });

  it('serves an OpenAPI document of every route (auth required)', async () => {
    expectEnvelope(await http(server.url, 'GET', '/api/openapi.json'), 401, 'UNAUTHORIZED');
    const res = await http(server.url, 'GET', '/api/openapi.json', { apiKey });
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\./);
    const paths = Object.keys(res.body.paths).sort();
    const vector = ['/api/vector', '/api/vector/{*}', ...['upsert', 'upsertMany', 'query', 'delete', 'namespaces', 'configure'].map((op) => `/api/vector/${op}`)];
    const mql = ['find', 'findOne', 'aggregate', 'countDocuments', 'insertOne', 'insertMany', 'updateOne', 'updateMany', 'replaceOne', 'deleteOne', 'deleteMany', 'findOneAndUpdate', 'findOneAndReplace', 'findOneAndDelete', 'distinct', 'bulkWrite', 'createIndex', 'createIndexes', 'dropIndex', 'dropIndexes', 'getMore', 'killCursors', 'listIndexes', 'listCollections', 'createCollection', 'collMod', 'renameCollection', 'estimatedDocumentCount', 'dropCollection'];
    expect(paths).toEqual(['/api/auth/keys', '/api/auth/keys/{keyId}', '/api/auth/signup', '/api/health', '/api/kv', '/api/kv/{*}', ...mql.map((op) => `/api/mql/${op}`), '/api/sql/query', ...vector].sort());
    expect(res.body.paths['/api/mql/find'].post.requestBody.content['application/json'].schema.required).toEqual(['collection']);
    expect(Object.keys(res.body.paths['/api/kv/{*}'])).toEqual(expect.arrayContaining(['put', 'get', 'delete']));
    expect(res.body.paths['/api/kv/{*}'].put.requestBody.content['application/json'].schema.required).toEqual(['value']);
    expect(res.body.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    // Every operation lists the errors any request can get, and the authenticated ones 401 and 429.
    for (const [path, item] of Object.entries(res.body.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
      for (const [method, op] of Object.entries(item)) {
        const statuses = Object.keys(op.responses);
        expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['400', '408', '413', '415', '429', '500', '503']));
        if (path !== '/api/auth/signup') expect(statuses, `${method} ${path}`).toContain('401');
      }
    }
  });

  it('reports health for the calling tenant', async () => {
    const res = await http(server.url, 'GET', '/api/health', { apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', version: expect.any(String), embedding: { kind: expect.stringMatching(/^(onnx|fallback)$/), dimensions: expect.any(Number) } });
    expect(res.body.embedding.model).toMatch(/^(onnx|fallback):/);
    expect(res.body.uptimeSeconds).toBeGreaterThanOrEqual(0);
    expect(res.body.tenant.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(res.body.tenant.storageBytes).toBeGreaterThan(0);
  });
});
