import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, signup, startServer, type RunningServer } from '../helpers/server.js';
import { tempDir } from '../helpers/temp-dir.js';

// An empty model directory: the fallback embedder, whatever ./models holds on this machine.
const models = tempDir('no-model');
let server: RunningServer;
let apiKey: string;
let otherKey: string;

const call = (method: string, path: string, json?: unknown, key = apiKey) => http(server.url, method, path, { ...(json === undefined ? {} : { json }), apiKey: key });

beforeAll(async () => {
  server = await startServer({ embeddingModelDir: models.path, rateLimit: 0 });
  ({ apiKey } = await signup(server.url, 'vec'));
  ({ apiKey: otherKey } = await signup(server.url, 'vec2'));
});
afterAll(async () => {
  await server.stop();
  models.remove();
});

const animals = [
  { id: 'fox', text: 'the quick brown fox jumps over the fence', metadata: { kind: 'animal', legs: 4, tags: ['wild', 'fast'] } },
  { id: 'dog', text: 'a lazy dog sleeps in the sun all afternoon', metadata: { kind: 'animal', legs: 4, tags: ['pet'] } },
  { id: 'hen', text: 'the hen lays eggs in the barn', metadata: { kind: 'animal', legs: 2 } },
  { id: 'stocks', text: 'stock markets fell sharply as interest rates rose', metadata: { kind: 'finance' } },
  { id: 'bonds', text: 'bond yields climbed after the central bank decision', metadata: { kind: 'finance', region: null } },
  { id: 'doc/1', text: 'foxes are quick and clever wild animals', metadata: { kind: 'animal', legs: 4 } },
];

describe('vector endpoints', () => {
  it('reports the active embedder in /api/health', async () => {
    const res = await call('GET', '/api/health');
    expect(res.status).toBe(200);
    expect(res.body.embedding).toMatchObject({ model: 'fallback:hashed-ngrams-v1', kind: 'fallback', dimensions: 384 });
    expect(res.body.embedding.reason).toContain('fallback');
  });

  it('upserts, then finds the closest texts best first with cosine scores', async () => {
    const one = await call('POST', '/api/vector/upsert', { ...animals[0] });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ id: 'fox', upserted: true });
    const many = await call('POST', '/api/vector/upsertMany', { vectors: animals.slice(1) });
    expect(many.body).toEqual({ upserted: animals.length - 1 });

    const res = await call('POST', '/api/vector/query', { query: 'quick fox', topK: 3 });
    expect(res.status).toBe(200);
    const { matches } = res.body as { matches: Array<{ id: string; score: number; text: string; metadata: unknown }> };
    expect(matches).toHaveLength(3);
    expect(matches[0]!.id).toBe('fox');
    expect(matches.map((m) => m.id)).toContain('doc/1');
    for (let i = 1; i < matches.length; i++) expect(matches[i - 1]!.score).toBeGreaterThanOrEqual(matches[i]!.score);
    expect(matches[0]!.score).toBeLessThanOrEqual(1.000001);
    expect(matches[0]).toMatchObject({ text: animals[0]!.text, metadata: animals[0]!.metadata });
  });

  it('answers the same through the graph and by brute force', async () => {
    const approx = await call('POST', '/api/vector/query', { query: 'central bank interest rates', topK: 6 });
    const exact = await call('POST', '/api/vector/query', { query: 'central bank interest rates', topK: 6, exact: true, explain: true });
    expect(exact.body.explain).toEqual({ path: 'exact' });
    expect(approx.body.matches.map((m: { id: string }) => m.id)).toEqual(exact.body.matches.map((m: { id: string }) => m.id));
  });

  it('leaves out text and metadata on request, and takes a vector instead of a text', async () => {
    const res = await call('POST', '/api/vector/query', { query: 'eggs in the barn', topK: 1, includeText: false, includeMetadata: false });
    expect(res.body.matches).toEqual([{ id: 'hen', score: expect.any(Number) }]);
    const vector = Array.from({ length: 384 }, (_, i) => (i === 7 ? 1 : 0));
    const byVector = await call('POST', '/api/vector/query', { vector, topK: 2, includeText: false });
    expect(byVector.status).toBe(200);
    expect(byVector.body.matches).toHaveLength(2);
    const bad = await call('POST', '/api/vector/query', { vector: [1, 2, 3] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('filters on metadata with the MQL operators', async () => {
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ kind: 'finance' }, ['bonds', 'stocks']],
      [{ legs: { $lt: 4 } }, ['hen']],
      [{ tags: 'pet' }, ['dog']],
      [{ $or: [{ legs: 2 }, { kind: 'finance' }] }, ['bonds', 'hen', 'stocks']],
      [{ region: null }, ['bonds', 'doc/1', 'dog', 'fox', 'hen', 'stocks']],
      [{ region: { $exists: true } }, ['bonds']],
      [{ kind: { $in: ['plant'] } }, []],
      [{ tags: { $all: ['wild', 'fast'] } }, ['fox']],
    ];
    for (const [filter, expected] of cases) {
      const res = await call('POST', '/api/vector/query', { query: 'animals and markets', topK: 10, filter, includeText: false });
      expect(res.status, JSON.stringify(filter)).toBe(200);
      expect(res.body.matches.map((m: { id: string }) => m.id).sort(), JSON.stringify(filter)).toEqual(expected);
    }
  });

  it('refuses unknown operators, $where and bad filters', async () => {
    for (const filter of [{ $where: 'true' }, { a: { $near: 1 } }, { $and: 5 }]) {
      const res = await call('POST', '/api/vector/query', { query: 'x', filter });
      expect(res.status, JSON.stringify(filter)).toBe(400);
      expect(res.body.error.code).toBe('QUERY_ERROR');
    }
    const res = await call('POST', '/api/vector/query', { query: 'x', filter: [1] });
    expect(res.status).toBe(400);
  });

  it('gets, lists with a cursor and a prefix, and deletes one record', async () => {
    const got = await call('GET', '/api/vector/doc/1');
    expect(got.body).toEqual({ id: 'doc/1', namespace: '', text: animals[5]!.text, metadata: animals[5]!.metadata, embedder: 'fallback:hashed-ngrams-v1' });
    expect((await call('GET', '/api/vector/nope')).status).toBe(404);

    const pages: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page = await call('GET', `/api/vector?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      pages.push(...page.body.ids);
      cursor = page.body.cursor;
    }
    expect(pages).toEqual(['bonds', 'doc/1', 'dog', 'fox', 'hen', 'stocks']);
    expect((await call('GET', '/api/vector?prefix=do')).body).toEqual({ ids: ['doc/1', 'dog'], cursor: null });
    expect((await call('GET', '/api/vector?cursor=%%%')).status).toBe(400);
    expect((await call('GET', '/api/vector?limit=0')).status).toBe(400);

    expect((await call('DELETE', '/api/vector/hen')).body).toEqual({ id: 'hen', deleted: true });
    expect((await call('DELETE', '/api/vector/hen')).body).toEqual({ id: 'hen', deleted: false });
    const after = await call('POST', '/api/vector/query', { query: 'eggs in the barn', topK: 10, includeText: false });
    expect(after.body.matches.map((m: { id: string }) => m.id)).not.toContain('hen');
    expect((await call('GET', '/api/vector/hen')).status).toBe(404);
  });

  it('replaces a record on upsert with the same id', async () => {
    await call('POST', '/api/vector/upsert', { id: 'fox', text: 'a red fox in the snow', metadata: { kind: 'animal', legs: 4, v: 2 } });
    const got = await call('GET', '/api/vector/fox');
    expect(got.body.text).toBe('a red fox in the snow');
    const res = await call('POST', '/api/vector/query', { query: 'red fox snow', topK: 10, includeText: false });
    expect(res.body.matches.filter((m: { id: string }) => m.id === 'fox')).toHaveLength(1);
    expect(res.body.matches[0]).toMatchObject({ id: 'fox', metadata: { v: 2 } });
  });

  it('deletes by ids, by filter and by prefix (exactly one)', async () => {
    await call('POST', '/api/vector/upsertMany', {
      namespace: 'del',
      vectors: Array.from({ length: 30 }, (_, i) => ({ id: `${i % 3 === 0 ? 'tmp/' : 'keep/'}${i}`, text: `note number ${i} about topic ${i % 5}`, metadata: { topic: i % 5 } })),
    });
    const del = (json: unknown) => call('POST', '/api/vector/delete', { namespace: 'del', ...(json as object) });
    expect((await del({ prefix: 'tmp/' })).body).toEqual({ deleted: 10 });
    expect((await del({ filter: { topic: { $in: [1, 2] } } })).body.deleted).toBe(8);
    expect((await del({ ids: ['keep/4', 'keep/5', 'missing'] })).body).toEqual({ deleted: 2 });
    const left = await call('GET', '/api/vector?namespace=del&limit=100');
    expect(left.body.ids).toHaveLength(10);
    for (const id of left.body.ids as string[]) {
      expect(id.startsWith('keep/')).toBe(true);
      expect([0, 3, 4]).toContain(Number(id.slice(5)) % 5);
    }
    for (const bad of [{}, { ids: ['a'], prefix: 'b' }, { ids: [] }, { prefix: '' }, { filter: { $bad: 1 } }]) {
      const res = await del(bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    expect((await call('GET', '/api/vector?namespace=del&limit=100')).body.ids).toHaveLength(10);
  });

  it('keeps namespaces and tenants apart', async () => {
    await call('POST', '/api/vector/upsert', { id: 'fox', text: 'fox in the other namespace', namespace: 'other' });
    const inOther = await call('POST', '/api/vector/query', { query: 'fox', topK: 10, namespace: 'other' });
    expect(inOther.body.matches.map((m: { id: string }) => m.id)).toEqual(['fox']);
    expect((await call('GET', '/api/vector/fox?namespace=other')).body.text).toBe('fox in the other namespace');
    expect((await call('GET', '/api/vector/fox')).body.text).toBe('a red fox in the snow');

    const stranger = await call('POST', '/api/vector/query', { query: 'fox', topK: 10 }, otherKey);
    expect(stranger.body.matches).toEqual([]);
    expect((await call('GET', '/api/vector/fox', undefined, otherKey)).status).toBe(404);
    expect((await call('GET', '/api/vector', undefined, otherKey)).body.ids).toEqual([]);
    expect((await call('POST', '/api/vector/delete', { prefix: 'f' }, otherKey)).body).toEqual({ deleted: 0 });
    expect((await call('GET', '/api/vector/fox')).status).toBe(200);

    const list = await call('POST', '/api/vector/namespaces', {});
    const names = (list.body.namespaces as Array<{ namespace: string; count: number }>).map((n) => [n.namespace, n.count]);
    expect(names).toEqual(expect.arrayContaining([['', 5], ['other', 1], ['del', 10]]));
  });

  it('configures HNSW parameters: efSearch any time, M only while empty', async () => {
    const fresh = await call('POST', '/api/vector/configure', { namespace: 'tuned', M: 8, efConstruction: 64, efSearch: 40 });
    expect(fresh.body).toEqual({ namespace: 'tuned', M: 8, efConstruction: 64, efSearch: 40 });
    await call('POST', '/api/vector/upsert', { namespace: 'tuned', id: 'x', text: 'something' });
    const conflict = await call('POST', '/api/vector/configure', { namespace: 'tuned', M: 12 });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('CONFLICT');
    expect((await call('POST', '/api/vector/configure', { namespace: 'tuned', efSearch: 100 })).body.efSearch).toBe(100);
    expect((await call('POST', '/api/vector/configure', { namespace: 'tuned', M: 1000 })).status).toBe(400);
    // A query's efSearch: 0 is the namespace's own setting, as configure's 0 is adaptive.
    for (const efSearch of [0, 1, 4000]) {
      const res = await call('POST', '/api/vector/query', { namespace: 'tuned', query: 'something', topK: 1, efSearch });
      expect(res.status, res.text).toBe(200);
      expect(res.body.matches.map((m: { id: string }) => m.id)).toEqual(['x']);
    }
    for (const efSearch of [-1, 4001, 1.5]) expect((await call('POST', '/api/vector/query', { namespace: 'tuned', query: 'x', efSearch })).status).toBe(400);
  });

  it('validates input and changes nothing on bad input', async () => {
    const bad: Array<[string, unknown]> = [
      ['/api/vector/upsert', { id: '', text: 'x' }],
      ['/api/vector/upsert', { id: 'x'.repeat(513), text: 'x' }],
      ['/api/vector/upsert', { id: 'a', text: '' }],
      ['/api/vector/upsert', { id: 'a', text: '   ' }],
      ['/api/vector/upsert', { id: 'a', text: 'x'.repeat(64 * 1024 + 1) }],
      ['/api/vector/upsert', { id: 'a', text: 'x', metadata: [1] }],
      ['/api/vector/upsert', { id: 'a', text: 'x', metadata: { $bad: 1 } }],
      ['/api/vector/upsert', { id: 'a', text: 'x', metadata: { big: 'y'.repeat(41 * 1024) } }],
      ['/api/vector/upsert', { id: 'a', text: 'x', namespace: 'x'.repeat(65) }],
      ['/api/vector/upsert', { id: 'a', text: 'x', metadata: JSON.parse('{"nested": {"__proto__": {"polluted": true}}}') }],
      ['/api/vector/upsert', { id: 'a', text: 'x', extra: 1 }],
      ['/api/vector/upsert', { id: 5, text: 'x' }],
      ['/api/vector/upsertMany', { vectors: [] }],
      ['/api/vector/upsertMany', { vectors: [{ id: 'ok', text: 'fine' }, { id: 'bad', text: '' }] }],
      ['/api/vector/upsertMany', { vectors: Array.from({ length: 1001 }, (_, i) => ({ id: `m${i}`, text: 't' })) }],
      ['/api/vector/query', { query: 'x', topK: 0 }],
      ['/api/vector/query', { query: 'x', topK: 1001 }],
      ['/api/vector/query', { query: 'x', topK: 1.5 }],
      ['/api/vector/query', {}],
      ['/api/vector/query', { query: 'x', exact: 'yes' }],
    ];
    for (const [path, json] of bad) {
      const res = await call('POST', path, json);
      expect(res.status, `${path} ${JSON.stringify(json).slice(0, 80)}`).toBe(400);
      expect(['VALIDATION_FAILED', 'QUERY_ERROR']).toContain(res.body.error.code);
    }
    // The valid first record of the refused batch was not written.
    expect((await call('GET', '/api/vector/ok')).status).toBe(404);
    expect((await call('GET', '/api/vector/a')).status).toBe(404);
  });

  it('names the field at fault as the request has it', async () => {
    const cases: Array<[string, string, unknown, string]> = [
      // upsertMany names its records vectors[i], a batch of one included.
      ['POST', '/api/vector/upsertMany', { vectors: [{ id: '', text: 'x' }] }, 'vectors[0].id'],
      ['POST', '/api/vector/upsertMany', { vectors: [{ id: 'a', text: 'x', metadata: { big: 'y'.repeat(41 * 1024) } }] }, 'vectors[0].metadata'],
      ['POST', '/api/vector/upsertMany', { vectors: [{ id: 'a', text: 'x' }, { id: 'b', text: '' }] }, 'vectors[1].text'],
      ['POST', '/api/vector/upsert', { id: '', text: 'x' }, 'id'],
      ['DELETE', `/api/vector/${'x'.repeat(513)}`, undefined, 'id'],
      ['DELETE', '/api/vector/', undefined, 'id'],
    ];
    for (const [method, path, json, field] of cases) {
      const res = await call(method, path, json);
      expect(res.status, `${method} ${path.slice(0, 40)} ${res.text}`).toBe(400);
      expect(res.body.error.details?.field, res.text).toBe(field);
    }
    // Listing the namespaces takes no fields.
    expect((await call('POST', '/api/vector/namespaces', { x: 1 })).status).toBe(400);
    expect((await call('POST', '/api/vector/namespaces', {})).status).toBe(200);
    expect((await call('POST', '/api/vector/namespaces')).status).toBe(200);
  });

  it('needs an API key', async () => {
    const res = await http(server.url, 'POST', '/api/vector/query', { json: { query: 'x' } });
    expect(res.status).toBe(401);
  });
});
