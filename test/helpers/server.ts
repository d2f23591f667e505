import { buildApp } from '../../server/app.js';
import { defaultConfig, type ServerConfig } from '../../server/config.js';
import { tempDir } from './temp-dir.js';
import type { FastifyInstance } from 'fastify';
import { request } from 'node:http';
import { afterAll, beforeAll, expect } from 'vitest';

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  dataDir: string;
  /** Stops the server (graceful close) and, unless keepData, deletes its data directory. */
  stop: (options?: { keepData?: boolean }) => Promise<void>;
}

/** Starts the real service on a free port of 127.0.0.1 with a temp data dir. */
export async function startServer(overrides: Partial<ServerConfig> = {}): Promise<RunningServer> {
  const dir = overrides.dataDir === undefined ? tempDir('server') : undefined;
  const config = defaultConfig({ port: 0, host: '127.0.0.1', logLevel: 'silent', dataDir: dir?.path ?? overrides.dataDir!, ...overrides });
  const app = await buildApp(config);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (address === null || typeof address === 'string') throw new Error('server did not bind a TCP port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    app,
    dataDir: config.dataDir,
    stop: async (options = {}) => {
      await app.close();
      if (!options.keepData) dir?.remove();
    },
  };
}

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** One HTTP request; JSON bodies are sent as application/json unless `raw` is given. */
export async function http<T = any>(
  base: string,
  method: string,
  path: string,
  options: { json?: unknown; raw?: string | Buffer; contentType?: string; apiKey?: string; headers?: Record<string, string> } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | Buffer | undefined;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] = options.contentType ?? 'application/json';
  } else if (options.raw !== undefined) {
    body = options.raw;
    if (options.contentType !== undefined) headers['content-type'] = options.contentType;
  }
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
  // node:http sends the path verbatim; fetch would resolve "%2E" and ".." segments first.
  const { status, responseHeaders, text } = await new Promise<{ status: number; responseHeaders: Headers; text: string }>((resolve, reject) => {
    const url = new URL(base);
    const req = request({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
        resolve({ status: res.statusCode ?? 0, responseHeaders: h, text: Buffer.concat(chunks).toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status, headers: responseHeaders, body: parsed as T, text };
}

let signupCounter = 0;
/** Signs up a fresh user and returns its API key and tenant id. */
export async function signup(base: string, label = 'org'): Promise<{ apiKey: string; tenantId: string; userId: string }> {
  const email = `${label}-${process.pid}-${++signupCounter}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const res = await http(base, 'POST', '/api/auth/signup', { json: { orgName: `${label} inc`, email } });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
  return { apiKey: res.body.apiKey, tenantId: res.body.tenant.id, userId: res.body.user.id };
}

/** A test file's server and tenant (see serverForFile); valid once the file's tests run. */
export interface FileServer {
  readonly server: RunningServer;
  readonly apiKey: string;
  /** POST /api/mql/<op> with `json`, as the tenant. */
  mql<T = any>(op: string, json: unknown): Promise<HttpResult<T>>;
  /** A new collection (`<prefix><n>`) holding `documents`: its name. */
  seed(documents: unknown[], prefix?: string): Promise<string>;
  /** Every document of `collection`, in `_id` order. */
  all(collection: string): Promise<any[]>;
  /** The documents `pipeline` outputs over `collection` (the answer must be 200). */
  aggregate(collection: string, pipeline: unknown[]): Promise<any[]>;
  /** Creates an index (the answer must be 200). */
  createIndex(collection: string, keys: Record<string, 1 | -1 | 'text'>, options?: Record<string, unknown>): Promise<void>;
  /** listIndexes of `collection` (the answer must be 200). */
  indexes(collection: string): Promise<any[]>;
  /** The names listCollections gives. */
  collectionNames(): Promise<string[]>;
  /** Sends `op` with `json` and requires the error: its status, code, and a message containing `message`. */
  refuses(op: string, json: unknown, status: number, code: string, message: string): Promise<void>;
}

/**
 * The real service for the tests of one file, with one tenant signed up: started before them and
 * stopped after them (it registers vitest's beforeAll and afterAll, so call it at the top level).
 */
export function serverForFile(overrides: Partial<ServerConfig> = {}): FileServer {
  let server: RunningServer | undefined;
  let apiKey = '';
  let collections = 0;
  beforeAll(async () => {
    server = await startServer(overrides);
    ({ apiKey } = await signup(server.url));
  });
  afterAll(() => server?.stop());
  return {
    get server(): RunningServer {
      if (server === undefined) throw new Error('the file server is used before its tests run');
      return server;
    },
    get apiKey(): string {
      return apiKey;
    },
    mql(op, json) {
      return http(this.server.url, 'POST', `/api/mql/${op}`, { json, apiKey });
    },
    async seed(documents, prefix = 'c') {
      const collection = `${prefix}${++collections}`;
      const res = await this.mql('insertMany', { collection, documents });
      expect(res.status, res.text).toBe(201);
      return collection;
    },
    async all(collection) {
      const res = await this.mql('find', { collection, sort: { _id: 1 } });
      expect(res.status, res.text).toBe(200);
      return res.body.documents;
    },
    async aggregate(collection, pipeline) {
      const res = await this.mql('aggregate', { collection, pipeline });
      expect(res.status, res.text).toBe(200);
      return res.body.documents;
    },
    async createIndex(collection, keys, options = {}) {
      const res = await this.mql('createIndex', { collection, keys, ...options });
      expect(res.status, res.text).toBe(200);
    },
    async indexes(collection) {
      const res = await this.mql('listIndexes', { collection });
      expect(res.status, res.text).toBe(200);
      return res.body.indexes;
    },
    async collectionNames() {
      const res = await this.mql('listCollections', {});
      expect(res.status, res.text).toBe(200);
      return res.body.collections.map((c: { name: string }) => c.name);
    },
    async refuses(op, json, status, code, message) {
      const res = await this.mql(op, json);
      expect(res.status, `${op} ${JSON.stringify(json).slice(0, 300)}: ${res.text}`).toBe(status);
      expect(res.body.error.code).toBe(code);
      expect(res.body.error.message).toContain(message);
    },
  };
}
