// The fast lane (server/fast-lane.ts) against Fastify itself: every lane route's requests, good
// and bad, are sent through both paths and must get the same status, body and headers. A request
// with a Content-Length goes to the lane; the same request sent chunked goes to Fastify (the lane
// never takes a chunked body). Two tenants start empty and get the same sequence, one through
// each path, so writes compare too. `lane.taken` proves which path answered.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, signup, startServer, type HttpResult, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let laneKey: string;
let fastifyKey: string;
beforeAll(async () => {
  server = await startServer({ rateLimit: 100_000 });
  ({ apiKey: laneKey } = await signup(server.url, 'lane'));
  ({ apiKey: fastifyKey } = await signup(server.url, 'fastify'));
});
afterAll(() => server.stop());

const taken = (): number => server.app.tetra.lane.taken;

interface Case {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** A JSON value, or raw text when `raw` is set. */
  body?: unknown;
  raw?: string;
}

// Generated values differ between the tenants: ObjectId-style ids, expiry times, ttl seconds.
function normalise(value: unknown): unknown {
  if (typeof value === 'string') {
    if (/^[0-9a-f]{24}$/.test(value)) return '<objectid>';
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/.test(value)) return '<time>';
    return value;
  }
  if (Array.isArray(value)) return value.map(normalise);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, k === 'ttl' && typeof v === 'number' ? '<ttl>' : normalise(v)]));
  }
  return value;
}

async function send(c: Case, apiKey: string, viaFastify: boolean, requestId: string): Promise<HttpResult> {
  const headers: Record<string, string> = { 'x-request-id': requestId };
  const text = c.raw ?? (c.body === undefined ? undefined : JSON.stringify(c.body));
  // Without a body, a percent-escape in the path (the last character's, the same key once
  // decoded) sends it to Fastify.
  const escaped = (path: string): string => `${path.slice(0, -1)}%${path.charCodeAt(path.length - 1).toString(16).toUpperCase()}`;
  if (text === undefined) return http(server.url, c.method, viaFastify ? escaped(c.path) : c.path, { apiKey, headers });
  if (viaFastify) headers['transfer-encoding'] = 'chunked';
  return http(server.url, c.method, c.path, { raw: text, contentType: 'application/json', apiKey, headers });
}

/** Sends `c` through the lane and through Fastify; both answers must be the same. */
async function same(c: Case): Promise<HttpResult> {
  const before = taken();
  const viaLane = await send(c, laneKey, false, `lane-${before}`);
  expect(taken(), `${c.method} ${c.path} ${c.raw ?? JSON.stringify(c.body)} should go through the lane`).toBe(before + 1);
  const viaFastify = await send(c, fastifyKey, true, `lane-${before}`);
  expect(taken(), 'a chunked request (or one with a percent-escape) should go through Fastify').toBe(before + 1);
  const label = `${c.method} ${c.path} ${c.raw ?? JSON.stringify(c.body)}`;
  expect(viaLane.status, label).toBe(viaFastify.status);
  expect(normalise(viaLane.body), label).toEqual(normalise(viaFastify.body));
  for (const h of ['content-type', 'x-request-id', 'ratelimit-limit', 'www-authenticate']) {
    expect(viaLane.headers.get(h), `${label}: ${h}`).toBe(viaFastify.headers.get(h));
  }
  expect(viaLane.headers.has('ratelimit-remaining'), label).toBe(true);
  expect(viaFastify.headers.has('ratelimit-remaining'), label).toBe(true);
  return viaLane;
}

const mql = (op: string, body: unknown): Case => ({ method: 'POST', path: `/api/mql/${op}`, body });
const sql = (body: unknown): Case => ({ method: 'POST', path: '/api/sql/query', body });

describe('fast lane: the same answers as Fastify', () => {
  it('documents: writes, reads, indexes and their errors', async () => {
    const cases: Array<[Case, number]> = [
      [mql('insertOne', { collection: 'people', document: { _id: 'ada', name: 'Ada', age: 36, tags: ['math'] } }), 201],
      [mql('insertOne', { collection: 'people', document: { name: 'Anon', age: 20 } }), 201],
      [mql('insertMany', { collection: 'people', documents: [{ _id: 'grace', name: 'Grace', age: 45 }, { _id: 7, name: 'Linus', age: 28, since: { $date: '1991-08-25T00:00:00Z' } }] }), 201],
      [mql('insertOne', { collection: 'people', document: { _id: 'ada' } }), 409],
      [mql('insertMany', { collection: 'people', documents: [{ _id: 'new' }, { _id: 'grace' }] }), 409],
      [mql('insertOne', { collection: 'people', document: { _id: null } }), 400],
      [mql('insertOne', { collection: '$bad', document: {} }), 400],
      [mql('insertOne', { collection: 'people', document: { __proto__: { polluted: 1 }, constructor: 'x', _id: 'proto' } }), 201],
      [mql('find', { collection: 'people', filter: { _id: 'ada' } }), 200],
      [mql('find', { collection: 'people', filter: { age: { $gte: 28 } }, sort: { age: -1 }, projection: { name: 1, _id: 0 }, limit: 2 }), 200],
      [mql('find', { collection: 'people', filter: { _id: 'proto' } }), 200],
      [mql('find', { collection: 'people', filter: { age: { $gt: 1 } }, explain: true }), 200],
      [mql('find', { collection: 'missing' }), 200],
      [mql('find', { collection: 'people', filter: { age: { $foo: 1 } } }), 400],
      [mql('find', { collection: 'people', limit: 'ten' }), 400],
      [mql('find', { collection: 'people', limit: 0 }), 400],
      [mql('find', { collection: 'people', unknownField: 1 }), 400],
      [mql('find', { filter: {} }), 400],
      [mql('find', { collection: 'people', filter: { $where: 'true' } }), 400],
      [mql('findOne', { collection: 'people', filter: { name: 'Grace' } }), 200],
      [mql('findOne', { collection: 'people', filter: { name: 'Nobody' } }), 200],
      [mql('countDocuments', { collection: 'people', filter: { age: { $lt: 40 } } }), 200],
      [mql('updateOne', { collection: 'people', filter: { _id: 'ada' }, update: { $inc: { age: 1 }, $push: { tags: 'logic' } } }), 200],
      [mql('updateOne', { collection: 'people', filter: { _id: 'ada' }, update: { name: 'replacement' } }), 400],
      [mql('updateOne', { collection: 'people', filter: { _id: 'zed' }, update: { $set: { age: 1 } }, upsert: true }), 200],
      [mql('updateMany', { collection: 'people', filter: {}, update: { $set: { active: true } } }), 200],
      [mql('createIndex', { collection: 'people', keys: { age: 1 } }), 200],
      [mql('createIndex', { collection: 'people', keys: { name: 1 }, unique: true }), 409],
      [mql('createIndex', { collection: 'people', keys: { age: -1, name: 1 }, unique: true }), 200],
      [mql('insertOne', { collection: 'people', document: { name: 'Ada', age: 37 } }), 409],
      [mql('listIndexes', { collection: 'people' }), 200],
      [mql('find', { collection: 'people', filter: { age: { $in: [28, 37] } }, explain: true }), 200],
      [mql('dropIndex', { collection: 'people', index: 'age_1' }), 200],
      [mql('dropIndex', { collection: 'people', index: 'age_1' }), 404],
      [mql('listCollections', {}), 200],
      [mql('deleteOne', { collection: 'people', filter: { _id: 7 } }), 200],
      [mql('deleteMany', { collection: 'people', filter: { active: true } }), 200],
      [mql('dropCollection', { collection: 'people' }), 200],
    ];
    for (const [c, status] of cases) {
      const res = await same(c);
      expect(res.status, `${c.path} ${JSON.stringify(c.body)}: ${res.text}`).toBe(status);
    }
  });

  it('SQL: statements, parameters, transactions and errors', async () => {
    const cases: Array<[Case, number]> = [
      [sql({ sql: 'CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL, amount numeric(10,2), created timestamptz DEFAULT now())' }), 200],
      [sql({ sql: 'INSERT INTO t (id, name, amount) VALUES ($1, $2, $3), (2, $4, NULL) RETURNING id, name, amount', params: [1, 'one', '1.50', 'two'] }), 200],
      [sql({ sql: 'SELECT id, name, amount FROM t WHERE id = $1', params: [1] }), 200],
      [sql({ sql: 'SELECT id, name FROM t ORDER BY id', rowMode: 'array' }), 200],
      [sql({ sql: 'SELECT 9007199254740993::bigint AS big, 1/3::numeric AS third, NULL::text AS nothing' }), 200],
      [sql({ statements: [{ sql: 'INSERT INTO t (id, name) VALUES (3, $1)', params: ['three'] }, { sql: 'SELECT count(*) FROM t' }] }), 200],
      [sql({ sql: 'INSERT INTO t (id, name) VALUES (1, $1)', params: ['dup'] }), 400],
      [sql({ sql: 'SELEC 1' }), 400],
      [sql({ sql: 'SELECT 1/0' }), 400],
      [sql({ sql: 'SELECT * FROM nowhere' }), 400],
      [sql({ sql: 'SELECT 1', statements: [{ sql: 'SELECT 2' }] }), 400],
      [sql({}), 400],
      [sql({ sql: 'SELECT $1::int', params: ['x'] }), 400],
      [sql({ sql: 'SELECT 1', rowMode: 'columns' }), 400],
      [sql({ statements: [] }), 400],
      [sql({ sql: 42 }), 400],
      [sql({ sql: "BEGIN; INSERT INTO t (id, name) VALUES (4, 'four'); ROLLBACK" }), 200],
      [sql({ sql: 'SELECT count(*) AS n FROM t' }), 200],
      [sql({ sql: 'EXPLAIN SELECT * FROM t WHERE id = 1' }), 200],
    ];
    for (const [c, status] of cases) {
      const res = await same(c);
      expect(res.status, `${JSON.stringify(c.body)}: ${res.text}`).toBe(status);
    }
  });

  it('key-value: put, get, delete and their errors', async () => {
    const cases: Array<[Case, number]> = [
      [{ method: 'PUT', path: '/api/kv/greeting', body: { value: 'hello' } }, 200],
      [{ method: 'PUT', path: '/api/kv/user/1:name', body: { value: 'ann', ttl: 600 } }, 200],
      [{ method: 'PUT', path: '/api/kv/short', body: { value: 'soon', ttl: 0.5 } }, 200],
      [{ method: 'GET', path: '/api/kv/greeting' }, 200],
      [{ method: 'GET', path: '/api/kv/user/1:name' }, 200],
      [{ method: 'GET', path: '/api/kv/absent' }, 404],
      [{ method: 'PUT', path: '/api/kv/bad', body: { value: 5 } }, 400],
      [{ method: 'PUT', path: '/api/kv/bad', body: { value: 'x', ttl: -1 } }, 400],
      [{ method: 'PUT', path: '/api/kv/bad', body: { value: 'x', ttl: 'soon' } }, 400],
      [{ method: 'PUT', path: '/api/kv/bad', body: { ttl: 5 } }, 400],
      [{ method: 'PUT', path: '/api/kv/bad', body: { value: 'x', extra: true } }, 400],
      [{ method: 'PUT', path: `/api/kv/${'k'.repeat(600)}`, body: { value: 'x' } }, 400],
      [{ method: 'DELETE', path: '/api/kv/greeting' }, 200],
      [{ method: 'DELETE', path: '/api/kv/greeting' }, 404],
      [{ method: 'GET', path: '/api/kv/greeting' }, 404],
    ];
    for (const [c, status] of cases) {
      const res = await same(c);
      expect(res.status, `${c.method} ${c.path}: ${res.text}`).toBe(status);
    }
  });

  it('bodies that are not what the route takes: bad JSON, blank, not an object', async () => {
    for (const raw of ['{"collection": ', '  ', '[1, 2]', '"people"', 'null', '{"collection": "people", "filter": {"a": 1}} trailing']) {
      for (const c of [
        { method: 'POST', path: '/api/mql/find', raw } as Case,
        { method: 'POST', path: '/api/sql/query', raw } as Case,
        { method: 'PUT', path: '/api/kv/k', raw } as Case,
      ]) {
        const res = await same(c);
        expect(res.status, `${c.path} ${JSON.stringify(raw)}: ${res.text}`).toBe(400);
        expect(['INVALID_JSON', 'VALIDATION_FAILED']).toContain(res.body.error.code);
      }
    }
  });
});

describe('fast lane: bodies in pieces', () => {
  it('takes a body sent in two writes that split a multi-byte character, and reads it whole', async () => {
    const before = taken();
    const doc = { _id: 'split', word: 'na\u00efve \u2603 \u{1F600}' };
    const bytes = Buffer.from(JSON.stringify({ collection: 'pieces', document: doc }), 'utf8');
    // Cut inside the 4-byte emoji: neither half decodes to it alone.
    const cut = bytes.indexOf(Buffer.from('\u{1F600}', 'utf8')) + 2;
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () => {
        socket.write(`POST /api/mql/insertOne HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${laneKey}\r\ncontent-type: application/json\r\ncontent-length: ${bytes.length}\r\nconnection: close\r\n\r\n`);
        socket.write(bytes.subarray(0, cut));
        setTimeout(() => socket.write(bytes.subarray(cut)), 50);
      });
      let text = '';
      socket.setEncoding('utf8').on('data', (c: string) => (text += c));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 201 Created');
    expect(taken()).toBe(before + 1);
    const found = await http(server.url, 'POST', '/api/mql/find', { json: { collection: 'pieces', filter: { _id: 'split' } }, apiKey: laneKey });
    expect(found.body).toEqual({ documents: [doc] });
  });
});

describe('fast lane: what it leaves to Fastify', () => {
  const body = JSON.stringify({ collection: 'people' });
  const cases: Array<[string, { method: string; path: string; raw?: string; contentType?: string; apiKey?: string; headers?: Record<string, string> }, number]> = [
    ['no key', { method: 'POST', path: '/api/mql/find', raw: body, contentType: 'application/json', apiKey: '' }, 401],
    ['a wrong key', { method: 'POST', path: '/api/mql/find', raw: body, contentType: 'application/json', apiKey: 'tetra_0000000000000000_nope' }, 401],
    ['another content type', { method: 'POST', path: '/api/mql/find', raw: body, contentType: 'text/plain' }, 415],
    ['an empty body', { method: 'POST', path: '/api/mql/find', raw: '', contentType: 'application/json' }, 400],
    ['a percent-escaped key', { method: 'GET', path: '/api/kv/a%2Fb' }, 404],
    ['a query string', { method: 'GET', path: '/api/kv/greeting?x=1' }, 400],
    ['an unknown route', { method: 'POST', path: '/api/mql/aggregateX', raw: body, contentType: 'application/json' }, 404],
    ['a GET with a body', { method: 'GET', path: '/api/kv/greeting', raw: '{}', contentType: 'application/json', headers: { 'content-length': '2' } }, 404],
  ];
  it.each(cases)('%s', async (_label, c, status) => {
    const before = taken();
    const apiKey = c.apiKey === '' ? undefined : (c.apiKey ?? laneKey);
    const res = await http(server.url, c.method, c.path, { raw: c.raw, contentType: c.contentType, apiKey, headers: c.headers });
    expect(res.status, res.text).toBe(status);
    expect(taken()).toBe(before);
    if (status === 401) expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('Expect: 100-continue goes to Fastify, which answers after the body', async () => {
    const before = taken();
    const { port } = new URL(server.url);
    const text = JSON.stringify({ collection: 'people' });
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let got = '';
      socket.setEncoding('utf8');
      socket.on('error', reject);
      socket.on('data', (chunk: string) => {
        got += chunk;
        if (got.startsWith('HTTP/1.1 100') && !got.includes('\r\n\r\nHTTP/1.1')) {
          if (got.endsWith('\r\n\r\n')) socket.write(text);
          return;
        }
        const end = got.indexOf('\r\n\r\n', got.lastIndexOf('HTTP/1.1'));
        if (end >= 0 && got.includes('"documents"')) {
          socket.destroy();
          resolve(got);
        }
      });
      socket.write(`POST /api/mql/find HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${laneKey}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nexpect: 100-continue\r\n\r\n`);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 100 Continue/);
    expect(answer).toMatch(/HTTP\/1\.1 200 OK/);
    expect(taken()).toBe(before);
  });

  it('a body over the limit: Fastify answers 413', async () => {
    const before = taken();
    const res = await http(server.url, 'POST', '/api/mql/find', { raw: JSON.stringify({ collection: 'x', filter: { a: 'x'.repeat(server.app.tetra.config.bodyLimit) } }), contentType: 'application/json', apiKey: laneKey });
    expect(res.status).toBe(413);
    expect(taken()).toBe(before);
  });
});

describe('fast lane: rate limits', () => {
  it('answers within the limit and leaves the 429 (with Retry-After) to Fastify', async () => {
    const limited = await startServer({ rateLimit: 3 });
    try {
      const { apiKey } = await signup(limited.url);
      const statuses: number[] = [];
      const before = limited.app.tetra.lane.taken;
      let retryAfter: string | null = null;
      for (let i = 0; i < 6; i++) {
        const res = await http(limited.url, 'POST', '/api/mql/find', { json: { collection: 'c' }, apiKey });
        statuses.push(res.status);
        expect(res.headers.get('ratelimit-limit')).toBe('3');
        if (res.status === 429) retryAfter = res.headers.get('retry-after');
      }
      expect(statuses.slice(0, 3)).toEqual([200, 200, 200]);
      expect(statuses).toContain(429);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      // The three allowed ones (and any allowed again after a refill) went through the lane.
      expect(limited.app.tetra.lane.taken - before).toBe(statuses.filter((s) => s === 200).length);
    } finally {
      await limited.stop();
    }
  });
});

describe('fast lane: request timeout', () => {
  it('closes a connection whose body stops arriving, answering 408, and forgets the lane request', async () => {
    const own = await startServer({ requestTimeoutMs: 500 });
    const { apiKey } = await signup(own.url);
    const lane = own.app.tetra.lane;
    const before = lane.taken;
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(own.url).port), '127.0.0.1', () => {
        socket.write(`POST /api/mql/find HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"collection":`);
      });
      let text = '';
      socket.setEncoding('utf8').on('data', (c: string) => (text += c));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    const waited = Date.now() - started;
    expect(lane.taken).toBe(before + 1);
    expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error: { code: 'REQUEST_TIMEOUT', message: 'the request did not arrive in time' } });
    expect(answer.slice(0, answer.indexOf('\r\n\r\n'))).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
    expect(waited).toBeGreaterThanOrEqual(450);
    for (let i = 0; i < 100 && lane.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(lane.inFlight).toBe(0);
    // The server goes on answering.
    expect((await http(own.url, 'POST', '/api/mql/find', { json: { collection: 'c' }, apiKey })).status).toBe(200);
    await own.stop();
  });

  it.each([
    ['malformed HTTP', 'NONSENSE\r\n\r\n', 'HTTP/1.1 400 Bad Request', 'VALIDATION_FAILED'],
    ['headers over the limit', `GET /api/health HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`, 'HTTP/1.1 431 Request Header Fields Too Large', 'HEADERS_TOO_LARGE'],
  ])('answers %s with the service error body, then closes', async (_what, raw, statusLine, code) => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(new URL(server.url).port), '127.0.0.1', () => socket.write(raw));
      let text = '';
      socket.setEncoding('utf8').on('data', (c: string) => (text += c));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer.split('\r\n')[0]).toBe(statusLine);
    expect((JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: { code: string } }).error.code).toBe(code);
    // Every answer carries a request id (DESIGN.md, Errors), these too.
    expect(answer.slice(0, answer.indexOf('\r\n\r\n'))).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/i);
  });
});

describe('fast lane: shutdown', () => {
  it('forgets a request whose client left in the middle of its body, so close() does not wait for it', async () => {
    const own = await startServer();
    const { apiKey } = await signup(own.url);
    const lane = own.app.tetra.lane;
    const before = lane.taken;
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(new URL(own.url).port), '127.0.0.1', () => {
        socket.write(`POST /api/mql/find HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${apiKey}\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"collection":`);
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 100);
      });
      socket.on('error', reject);
    });
    expect(lane.taken).toBe(before + 1);
    for (let i = 0; i < 100 && lane.inFlight > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(lane.inFlight).toBe(0);
    await own.stop();
  });

  it('finishes a request it took before the stores close', async () => {
    const own = await startServer();
    const { apiKey } = await signup(own.url);
    // A durable write in flight while close() starts: it must be answered, and be there after.
    const lane = own.app.tetra.lane;
    const write = http(own.url, 'POST', '/api/mql/insertMany', { json: { collection: 'c', documents: Array.from({ length: 2000 }, (_, i) => ({ _id: i, pad: 'x'.repeat(200) })) }, apiKey });
    // Close once the lane has taken it (before that the connection is idle, and closing drops it).
    while (lane.inFlight === 0) await new Promise((r) => setImmediate(r));
    const closing = own.stop({ keepData: true });
    const res = await write;
    await closing;
    expect(res.status, res.text).toBe(201);
    expect(lane.inFlight).toBe(0);
    const again = await startServer({ dataDir: own.dataDir });
    try {
      const count = await http(again.url, 'POST', '/api/mql/countDocuments', { json: { collection: 'c' }, apiKey });
      expect(count.body.count).toBe(res.status === 201 ? 2000 : 0);
    } finally {
      await again.stop();
    }
  });
});

describe('requests that arrive while the server closes', () => {
  it('get the service own 503 UNAVAILABLE body, not Fastify’s, with Connection: close', async () => {
    const own = await startServer();
    const { apiKey } = await signup(own.url);
    const lane = own.app.tetra.lane;
    const socket = connect(Number(new URL(own.url).port), '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    let received = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // A slow request keeps the connection busy, so closing does not drop it; the second request
    // comes on the same connection once the close has begun.
    const body = JSON.stringify({ collection: 'c', documents: Array.from({ length: 2000 }, (_, i) => ({ _id: i, pad: 'x'.repeat(200) })) });
    socket.write(`POST /api/mql/insertMany HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    while (lane.inFlight === 0) await new Promise((r) => setImmediate(r));
    const closing = own.stop({ keepData: true });
    socket.write(`GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n`);
    await ended;
    await closing;
    const responses = received.split(/(?=HTTP\/1\.1 )/);
    expect(responses.length, received).toBe(2);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 201 /);
    const [head, text] = responses[1]!.split('\r\n\r\n') as [string, string];
    expect(head).toMatch(/^HTTP\/1\.1 503 /);
    expect(head.toLowerCase()).toContain('connection: close');
    expect(head.toLowerCase()).toContain('content-type: application/json');
    expect(JSON.parse(text)).toStrictEqual({ error: { code: 'UNAVAILABLE', message: expect.stringContaining('shutting down') } });
  });
});
