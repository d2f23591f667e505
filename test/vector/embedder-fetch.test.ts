import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fetchModel, MODEL_FILES } from '../../engine/vector/embedder/index.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';

const newDir = dirsRemovedAfterEach();

/** Fake model files keyed by their path in the model repo. */
const REMOTE: Record<string, Buffer> = Object.fromEntries(
  MODEL_FILES.map((f, i) => [f.remotePath, Buffer.from(`fake ${f.name} `.repeat(100 + i * 50))]),
);
const BROKEN_BODY = 'broken/';

describe('fetchModel against a local HTTP server', () => {
  let server: Server;
  let base: string;
  let requests: string[] = [];
  /** Remote paths answered with 404, or (under BROKEN_BODY) cut off mid-body. */
  let missing = new Set<string>();
  let truncated = new Set<string>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname).replace(/^\/repo\/resolve\/main\//, '');
      requests.push(path);
      const body = REMOTE[path];
      if (body === undefined || missing.has(path)) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
        return;
      }
      if (truncated.has(path)) {
        // Promise the whole file, send half, drop the connection.
        res.writeHead(200, { 'content-length': String(body.length) });
        res.write(body.subarray(0, body.length >> 1), () => res.destroy());
        return;
      }
      res.writeHead(200, { 'content-length': String(body.length) }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/repo/resolve/main/`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    requests = [];
    missing = new Set();
    truncated = new Set();
  });

  const partFiles = (dir: string): string[] => readdirSync(dir).filter((f) => f.includes('.part'));

  it('writes every file under its local name, model.onnx from onnx/model.onnx', async () => {
    const dir = join(newDir('fetch-ok'), 'models', 'all-MiniLM-L6-v2');
    const lines: string[] = [];
    await fetchModel({ modelDir: dir, baseUrl: base, log: (l) => lines.push(l) });
    for (const f of MODEL_FILES) expect(readFileSync(join(dir, f.name))).toEqual(REMOTE[f.remotePath]);
    expect(requests).toContain('onnx/model.onnx');
    expect(readdirSync(dir).sort()).toEqual(MODEL_FILES.map((f) => f.name).sort());
    expect(lines).toHaveLength(MODEL_FILES.length);
    expect(lines[0]).toMatch(/^model\.onnx: .* from http:\/\/127\.0\.0\.1:\d+\/repo\/resolve\/main\/onnx\/model\.onnx$/);
  });

  it('keeps files already present with a non-zero size, and refetches empty ones', async () => {
    const dir = newDir('fetch-skip');
    writeFileSync(join(dir, 'model.onnx'), 'my own model');
    writeFileSync(join(dir, 'vocab.txt'), '');
    const lines: string[] = [];
    await fetchModel({ modelDir: dir, baseUrl: base.slice(0, -1), log: (l) => lines.push(l) }); // no trailing slash: still a directory
    expect(readFileSync(join(dir, 'model.onnx'), 'utf8')).toBe('my own model');
    expect(readFileSync(join(dir, 'vocab.txt'))).toEqual(REMOTE['vocab.txt']);
    expect(requests).not.toContain('onnx/model.onnx');
    expect(lines).toContain('model.onnx: already present, kept');
    requests = [];
    await fetchModel({ modelDir: dir, baseUrl: base });
    expect(requests).toEqual([]);
  });

  it('names each failed file (404), fetches the others, and leaves no partial file', async () => {
    const dir = newDir('fetch-404');
    missing.add('vocab.txt');
    missing.add('onnx/model.onnx');
    const error = await fetchModel({ modelDir: dir, baseUrl: base }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(Error);
    const message = (error as Error).message;
    expect(message).toMatch(/could not fetch 2 of \d+ model files/);
    expect(message).toMatch(/model\.onnx: HTTP 404 .*onnx\/model\.onnx/);
    expect(message).toMatch(/vocab\.txt: HTTP 404 .*vocab\.txt/);
    expect(existsSync(join(dir, 'model.onnx'))).toBe(false);
    expect(existsSync(join(dir, 'vocab.txt'))).toBe(false);
    expect(readFileSync(join(dir, 'tokenizer.json'))).toEqual(REMOTE['tokenizer.json']);
    expect(partFiles(dir)).toEqual([]);
  });

  it('drops a download cut off mid-body instead of keeping half a file', async () => {
    const dir = newDir('fetch-cut');
    truncated.add('onnx/model.onnx');
    await expect(fetchModel({ modelDir: dir, baseUrl: base })).rejects.toThrow(/model\.onnx: /);
    expect(existsSync(join(dir, 'model.onnx'))).toBe(false);
    expect(partFiles(dir)).toEqual([]);
    // The next run completes what is missing.
    truncated.clear();
    await fetchModel({ modelDir: dir, baseUrl: base });
    expect(readFileSync(join(dir, 'model.onnx'))).toEqual(REMOTE['onnx/model.onnx']);
  });

  it('reports an unreachable server per file', async () => {
    const dir = newDir('fetch-down');
    await expect(fetchModel({ modelDir: dir, baseUrl: 'http://127.0.0.1:9/' })).rejects.toThrow(/model\.onnx: cannot reach http:\/\/127\.0\.0\.1:9\/onnx\/model\.onnx/);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('runs as `npm run model:fetch` (server/model-fetch.ts) with --dir and TETRA_MODEL_BASE_URL', async () => {
    const dir = join(newDir('fetch-cli'), 'm');
    const run = (args: string[], env: Record<string, string>) =>
      new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, ['--import', 'tsx', 'server/model-fetch.ts', ...args], { env: { ...process.env, ...env }, cwd: process.cwd() });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.stderr.on('data', (d: Buffer) => (err += d.toString()));
        child.on('close', (code) => resolve({ code, out, err }));
      });
    const ok = await run(['--dir', dir], { TETRA_MODEL_BASE_URL: base });
    expect(ok.code).toBe(0);
    expect(ok.out).toContain(`into ${dir}`);
    expect(readFileSync(join(dir, 'config.json'))).toEqual(REMOTE['config.json']);
    missing.add('special_tokens_map.json');
    const failed = await run(['--base-url', base], { TETRA_EMBEDDING_MODEL_DIR: join(dir, 'other') });
    expect(failed.code).toBe(1);
    expect(failed.err).toMatch(/model:fetch failed: .*special_tokens_map\.json: HTTP 404/s);
    expect(existsSync(join(dir, 'other', 'special_tokens_map.json'))).toBe(false);
  });
});
