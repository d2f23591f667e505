import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/app.js';
import { defaultConfig, resolveLogFormat, type ServerConfig } from '../../server/config.js';
import { spawnServer } from '../helpers/server-process.js';
import { http, signup } from '../helpers/server.js';
import { tempDir } from '../helpers/temp-dir.js';

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  [field: string]: unknown;
}

const DEBUG = 20;
const WARN = 40;
const ERROR = 50;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/**
 * The real service on a free port, its log lines captured, with two extra routes: one that
 * takes `slowMs` and one that throws a plain Error (a bug: 500).
 */
async function start(overrides: Partial<ServerConfig>, slowMs = 0): Promise<{ url: string; lines: LogLine[]; app: FastifyInstance }> {
  const dir = tempDir('logging');
  const lines: LogLine[] = [];
  const config = defaultConfig({ port: 0, dataDir: dir.path, ...overrides });
  const app = await buildApp(config, { logStream: { write: (line) => lines.push(JSON.parse(line) as LogLine) } });
  app.get('/test/slow', async () => {
    await new Promise((r) => setTimeout(r, slowMs));
    return { slept: slowMs };
  });
  app.get('/test/boom', async () => {
    throw new Error('boom: a bug');
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP port');
  cleanups.push(async () => {
    await app.close();
    dir.remove();
  });
  return { url: `http://127.0.0.1:${address.port}`, lines, app };
}

const ofRequest = (lines: LogLine[], reqId: string): LogLine[] => lines.filter((l) => l.reqId === reqId);

describe('logging', () => {
  it('writes nothing per request at the default level (info)', async () => {
    const { url, lines } = await start({});
    const { apiKey } = await signup(url);
    const before = lines.length;
    expect((await http(url, 'PUT', '/api/kv/a', { json: { value: 'v' }, apiKey })).status).toBe(200);
    expect((await http(url, 'GET', '/api/kv/a', { apiKey })).status).toBe(200);
    expect((await http(url, 'GET', '/api/kv/missing', { apiKey })).status).toBe(404);
    expect((await http(url, 'GET', '/api/kv/a', { apiKey: 'tetra_bad_key' })).status).toBe(401);
    expect(lines.slice(before)).toEqual([]);
  });

  it('writes exactly one access line per request at debug', async () => {
    const { url, lines } = await start({ logLevel: 'debug' });
    const { apiKey } = await signup(url);
    const put = await http(url, 'PUT', '/api/kv/a%62', { json: { value: 'v' }, apiKey, headers: { 'x-request-id': 'log-put-1' } });
    expect(put.status).toBe(200);
    const missing = await http(url, 'GET', '/api/kv/nothing', { apiKey, headers: { 'x-request-id': 'log-get-1' } });
    expect(missing.status).toBe(404);
    expect(ofRequest(lines, 'log-put-1')).toEqual([
      { level: DEBUG, time: expect.any(Number), pid: process.pid, hostname: expect.any(String), reqId: 'log-put-1', msg: 'request completed', method: 'PUT', url: '/api/kv/a%62', statusCode: 200, responseTime: expect.any(Number) },
    ]);
    expect(ofRequest(lines, 'log-get-1')).toMatchObject([{ level: DEBUG, msg: 'request completed', method: 'GET', url: '/api/kv/nothing', statusCode: 404 }]);
    expect(ofRequest(lines, 'log-put-1')[0]!.responseTime).toBeGreaterThanOrEqual(0);
  });

  it('writes a warn line for a request slower than TETRA_SLOW_REQUEST_MS, at info', async () => {
    const { url, lines } = await start({ slowRequestMs: 50 }, 150);
    const res = await http(url, 'GET', '/test/slow', { headers: { 'x-request-id': 'log-slow-1' } });
    expect(res.status).toBe(200);
    const logged = ofRequest(lines, 'log-slow-1');
    expect(logged).toMatchObject([{ level: WARN, msg: 'slow request', method: 'GET', url: '/test/slow', statusCode: 200, slowRequestMs: 50 }]);
    expect(logged[0]!.responseTime).toBeGreaterThanOrEqual(150);
  });

  it('writes no slow-request line when TETRA_SLOW_REQUEST_MS is 0', async () => {
    const { url, lines } = await start({ slowRequestMs: 0 }, 100);
    expect((await http(url, 'GET', '/test/slow', { headers: { 'x-request-id': 'log-slow-2' } })).status).toBe(200);
    expect(ofRequest(lines, 'log-slow-2')).toEqual([]);
  });

  it('writes an error line for a 500, with the error the client never sees', async () => {
    const { url, lines } = await start({});
    const res = await http(url, 'GET', '/test/boom', { headers: { 'x-request-id': 'log-boom-1' } });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: { code: 'INTERNAL', message: 'internal error' } });
    const logged = ofRequest(lines, 'log-boom-1');
    expect(logged).toMatchObject([{ level: ERROR, err: { message: 'boom: a bug', stack: expect.stringContaining('logging.test.ts') } }]);
  });

  it('picks pretty lines on a terminal and JSON lines otherwise, unless told', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });
});

describe('logging of the real process (npm start)', () => {
  let lastUrl = '';
  async function run(env: Record<string, string>, args: string[] = []): Promise<string> {
    const dir = tempDir('logging-process');
    try {
      const server = await spawnServer(dir.path, args, env);
      lastUrl = server.url;
      try {
        const { apiKey } = await signup(server.url);
        expect((await http(server.url, 'PUT', '/api/kv/a', { json: { value: 'v' }, apiKey, headers: { 'x-request-id': 'proc-put-1' } })).status).toBe(200);
        expect((await http(server.url, 'GET', '/api/kv/a', { apiKey, headers: { 'x-request-id': 'proc-get-1' } })).status).toBe(200);
      } finally {
        server.child.kill('SIGTERM');
        expect((await server.exited).code).toBe(0);
      }
      return server.output();
    } finally {
      dir.remove();
    }
  }

  it('writes JSON lines to a stdout that is not a terminal: start-up and shutdown, no access lines at info', async () => {
    const output = await run({ TETRA_LOG_LEVEL: 'info' });
    const lines = output.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine);
    expect(lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['tetradb ready', 'shutting down: finishing in-flight requests, then checkpointing']));
    // Started with --port 0 (spawnServer): the ready line names the port the process took, the
    // one its IPC ready message gave the harness, which the requests above went to.
    expect(lastUrl).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    expect(lines.find((l) => l.msg === 'tetradb ready')).toMatchObject({ url: lastUrl });
    expect(lines.filter((l) => l.reqId !== undefined)).toEqual([]);
  });

  it('writes one JSON access line per request at debug', async () => {
    const output = await run({ TETRA_LOG_LEVEL: 'debug' });
    const lines = output.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LogLine);
    expect(ofRequest(lines, 'proc-put-1')).toMatchObject([{ level: DEBUG, msg: 'request completed', method: 'PUT', url: '/api/kv/a', statusCode: 200 }]);
    expect(ofRequest(lines, 'proc-get-1')).toMatchObject([{ level: DEBUG, msg: 'request completed', method: 'GET', statusCode: 200 }]);
  });

  it('writes readable lines with --log-format pretty', async () => {
    const output = await run({ TETRA_LOG_LEVEL: 'info' }, ['--log-format', 'pretty']);
    expect(output).toMatch(/INFO.*tetradb ready/);
    expect(() => JSON.parse(output.split('\n')[0]!)).toThrow();
  });
});
