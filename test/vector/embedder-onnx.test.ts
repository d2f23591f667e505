import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOnnxEmbedder, loadEmbedder, type OnnxEmbedder } from '../../engine/vector/embedder/index.js';
import { dirsRemovedAfterEach, tempDir } from '../helpers/temp-dir.js';
import { minilmStyleTokenizerJson, TINY_VOCAB, tinyReferenceEmbedding, writeTinyModel, type TinyModel } from './tiny-onnx-model.js';

const newDir = dirsRemovedAfterEach();
const cosine = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * b[i]!, 0);
const maxAbsDiff = (a: Float32Array, b: Float32Array): number => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);
const ids = (tokens: string): number[] => tokens.split(' ').map((t) => TINY_VOCAB.indexOf(t));

/** Texts with their hand-derived token ids in the tiny vocab. */
const TEXTS: ReadonlyArray<{ text: string; tokens: string }> = [
  { text: 'hello world', tokens: '[CLS] hello world [SEP]' },
  { text: 'The quick brown fox jumps over the lazy dog.', tokens: '[CLS] the quick brown fox jumps over the lazy dog . [SEP]' },
  { text: 'Café naïve!', tokens: '[CLS] cafe naive ! [SEP]' },
  { text: 'unbelievable playing', tokens: '[CLS] un ##believ ##able play ##ing [SEP]' },
  { text: 'xyzzy cat', tokens: '[CLS] [UNK] cat [SEP]' },
  { text: '中文', tokens: '[CLS] 中 文 [SEP]' },
  { text: '', tokens: '[CLS] [SEP]' },
];

describe('ONNX embedder on a tiny model (tokenizer -> session -> pooling -> normalisation)', () => {
  const dir = tempDir('onnx-tiny');
  let model: TinyModel;
  let embedder: OnnxEmbedder;

  beforeAll(async () => {
    model = writeTinyModel(dir.path);
    embedder = await createOnnxEmbedder({ modelDir: dir.path, batchSize: 8, intraOpThreads: 1, modelName: 'tiny' });
  });
  afterAll(async () => {
    await embedder?.close();
    dir.remove();
  });

  it('reports what the model gives', () => {
    expect(embedder.kind).toBe('onnx');
    expect(embedder.dims).toBe(model.dims);
    expect(embedder.maxTokens).toBe(256);
    expect(embedder.id).toMatch(/^onnx:tiny:[0-9a-f]{12}$/);
  });

  it.each(TEXTS)('matches the plain-JS reference for "$text"', async ({ text, tokens }) => {
    const [v] = await embedder.embed([text]);
    const expected = tinyReferenceEmbedding(model, ids(tokens));
    expect(v!.length).toBe(model.dims);
    expect(cosine(v!, expected)).toBeGreaterThanOrEqual(0.9999);
    expect(maxAbsDiff(v!, expected)).toBeLessThan(1e-5);
    expect(Math.hypot(...v!)).toBeCloseTo(1, 5);
  });

  it('gives the same vectors in one batch as one by one: padding never leaks into a vector', async () => {
    const texts = TEXTS.map((t) => t.text);
    const batched = await embedder.embed(texts);
    for (let i = 0; i < texts.length; i++) {
      const [single] = await embedder.embed([texts[i]!]);
      expect(maxAbsDiff(batched[i]!, single!)).toBeLessThan(1e-6);
    }
    // The [PAD] row is far from every word: an unmasked mean would move 'hello world' a long way.
    const [alone] = await embedder.embed(['hello world']);
    const [padded] = (await embedder.embed(['hello world', 'the '.repeat(100)])).slice(0, 1);
    expect(maxAbsDiff(alone!, padded!)).toBeLessThan(1e-6);
  });

  it('truncates at maxTokens: words past the cut do not change the vector', async () => {
    const long = `dog ${'the '.repeat(300)}`;
    const [a, b] = await embedder.embed([`${long} cat`, `${long} fox mat`]);
    expect(maxAbsDiff(a!, b!)).toBe(0);
    const expected = tinyReferenceEmbedding(model, [...ids('[CLS] dog'), ...new Array<number>(253).fill(TINY_VOCAB.indexOf('the')), TINY_VOCAB.indexOf('[SEP]')]);
    expect(cosine(a!, expected)).toBeGreaterThanOrEqual(0.9999);
  });

  it('coalesces 50 concurrent calls into few session runs, each caller getting its own results', async () => {
    const texts = Array.from({ length: 50 }, (_, i) => TEXTS[i % TEXTS.length]!.text + (i % 3 === 0 ? ' cat' : ''));
    const singles = new Map<string, Float32Array>();
    for (const t of new Set(texts)) singles.set(t, (await embedder.embed([t]))[0]!);
    const before = embedder.runCount;
    const results = await Promise.all(texts.map((t) => embedder.embed([t])));
    const runs = embedder.runCount - before;
    expect(runs).toBeLessThanOrEqual(Math.ceil(50 / 8));
    results.forEach((r, i) => {
      expect(r).toHaveLength(1);
      expect(maxAbsDiff(r[0]!, singles.get(texts[i]!)!)).toBeLessThan(1e-6);
    });
  });

  it('splits one large call into batches and keeps input order', async () => {
    const texts = Array.from({ length: 37 }, (_, i) => (i % 2 === 0 ? 'the cat sat on a mat' : `hello ${'world '.repeat(i)}`));
    const before = embedder.runCount;
    const vectors = await embedder.embed(texts);
    expect(embedder.runCount - before).toBe(Math.ceil(37 / 8));
    for (const i of [0, 1, 2, 35, 36]) {
      const [single] = await embedder.embed([texts[i]!]);
      expect(maxAbsDiff(vectors[i]!, single!)).toBeLessThan(1e-6);
    }
    expect(await embedder.embed([])).toEqual([]);
  });
});

describe('ONNX embedder: memory', () => {
  it('gives back what a run takes: large batches leave no arena resident (no budget counts it)', async () => {
    // 1024 dimensions, batches of 32 x 256 tokens: each run's tensors are tens of MiB. ONNX
    // Runtime's default CPU arena kept ~300 MiB resident after such runs (the memory governor then
    // cut the page cache for it); the embedder turns the arena off.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const dir = newDir('onnx-memory');
    writeTinyModel(dir, { dims: 1024 });
    const big = await createOnnxEmbedder({ modelDir: dir, batchSize: 32, intraOpThreads: 1 });
    try {
      gc();
      const before = process.memoryUsage().rss;
      const long = Array.from({ length: 32 }, (_, i) => `the quick brown fox jumps over the lazy dog ${i} `.repeat(40));
      for (let r = 0; r < 3; r++) expect(await big.embed(long)).toHaveLength(32);
      gc();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const grown = (process.memoryUsage().rss - before) / 2 ** 20;
      expect(grown).toBeLessThan(150);
    } finally {
      await big.close();
    }
  });
});

describe('ONNX embedder: loading', () => {
  it('gives the same vectors from a vocab.txt-only directory as from tokenizer.json', async () => {
    const full = newDir('onnx-full');
    writeTinyModel(full);
    const vocabOnly = newDir('onnx-vocab');
    for (const f of ['model.onnx', 'vocab.txt']) copyFileSync(join(full, f), join(vocabOnly, f));
    const a = await createOnnxEmbedder({ modelDir: full, modelName: 'tiny' });
    const b = await createOnnxEmbedder({ modelDir: vocabOnly, modelName: 'tiny' });
    try {
      expect(b.id).toBe(a.id); // same model bytes, same name
      const texts = TEXTS.map((t) => t.text);
      const [va, vb] = [await a.embed(texts), await b.embed(texts)];
      va.forEach((v, i) => expect(maxAbsDiff(v, vb[i]!)).toBe(0));
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('derives the id from the model bytes (and a given name), never from the directory', async () => {
    const one = newDir('onnx-id1');
    const two = newDir('onnx-id2');
    writeTinyModel(one, { seed: 1 });
    writeTinyModel(two, { seed: 2 });
    const a = await createOnnxEmbedder({ modelDir: one, modelName: 'tiny' });
    const b = await createOnnxEmbedder({ modelDir: two, modelName: 'tiny' });
    const c = await createOnnxEmbedder({ modelDir: one });
    try {
      expect(a.id).not.toBe(b.id);
      expect(c.id).toMatch(/^onnx:[0-9a-f]{12}$/);
      expect(c.id.split(':')[1]).toBe(a.id.split(':')[2]);
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]);
    }
  });

  it("takes maxTokens from sentence_bert_config.json, options first, capped by config.json's positions", async () => {
    const dir = newDir('onnx-maxlen');
    const model = writeTinyModel(dir, { extraFiles: { 'sentence_bert_config.json': { max_seq_length: 5, do_lower_case: false } } });
    const fromFile = await createOnnxEmbedder({ modelDir: dir });
    const fromOption = await createOnnxEmbedder({ modelDir: dir, maxTokens: 7 });
    const capped = await createOnnxEmbedder({ modelDir: dir, maxTokens: 4096 });
    try {
      expect(fromFile.maxTokens).toBe(5);
      expect(fromOption.maxTokens).toBe(7);
      expect(capped.maxTokens).toBe(512);
      const [v] = await fromFile.embed(['the quick brown fox jumps over']);
      expect(cosine(v!, tinyReferenceEmbedding(model, ids('[CLS] the quick brown [SEP]')))).toBeGreaterThanOrEqual(0.9999);
    } finally {
      await Promise.all([fromFile.close(), fromOption.close(), capped.close()]);
    }
  });

  it("uses a pooled 'sentence_embedding' output directly (normalised only)", async () => {
    const dir = newDir('onnx-pooled');
    const model = writeTinyModel(dir, { output: 'sentence_embedding' });
    const embedder = await createOnnxEmbedder({ modelDir: dir });
    try {
      for (const { text, tokens } of TEXTS.slice(0, 3)) {
        const [v] = await embedder.embed([text]);
        expect(cosine(v!, tinyReferenceEmbedding(model, ids(tokens)))).toBeGreaterThanOrEqual(0.9999);
      }
    } finally {
      await embedder.close();
    }
  });

  it('rejects only the callers of a failing batch, and keeps serving', async () => {
    // The tokenizer knows a word the model has no row for: ORT's Gather fails on its id.
    const dir = newDir('onnx-failing');
    writeTinyModel(dir);
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(minilmStyleTokenizerJson([...TINY_VOCAB, 'boom'])));
    const embedder = await createOnnxEmbedder({ modelDir: dir, batchSize: 1 });
    try {
      const [ok1, bad, ok2] = await Promise.allSettled([embedder.embed(['hello']), embedder.embed(['boom']), embedder.embed(['world', 'cat'])]);
      expect(ok1.status).toBe('fulfilled');
      expect(ok2.status).toBe('fulfilled');
      expect(bad.status).toBe('rejected');
      expect((bad as PromiseRejectedResult).reason).toBeInstanceOf(Error);
      expect(String((bad as PromiseRejectedResult).reason.message)).toMatch(/onnxruntime run failed/);
      expect(await embedder.embed(['hello'])).toHaveLength(1);
    } finally {
      await embedder.close();
    }
  });

  it('rejects calls after close(), and close() is idempotent', async () => {
    const dir = newDir('onnx-close');
    writeTinyModel(dir);
    const embedder = await createOnnxEmbedder({ modelDir: dir });
    const inFlight = embedder.embed(['hello world']);
    await embedder.close();
    await embedder.close();
    await expect(inFlight).resolves.toHaveLength(1);
    await expect(embedder.embed(['hello'])).rejects.toThrow(/closed/);
  });

  it('fails clearly when files are missing or invalid', async () => {
    await expect(createOnnxEmbedder({ modelDir: join(newDir('onnx-missing'), 'nope') })).rejects.toThrow(/no model\.onnx in /);
    const noTokenizer = newDir('onnx-notok');
    writeTinyModel(noTokenizer, { tokenizerJson: false });
    const { rmSync } = await import('node:fs');
    rmSync(join(noTokenizer, 'vocab.txt'));
    await expect(createOnnxEmbedder({ modelDir: noTokenizer })).rejects.toThrow(/no tokenizer\.json or vocab\.txt in /);
    const garbage = newDir('onnx-garbage');
    writeTinyModel(garbage);
    writeFileSync(join(garbage, 'model.onnx'), 'this is not a model');
    await expect(createOnnxEmbedder({ modelDir: garbage })).rejects.toThrow(/onnxruntime cannot load .*model\.onnx/);
    const empty = newDir('onnx-empty');
    writeFileSync(join(empty, 'model.onnx'), '');
    await expect(createOnnxEmbedder({ modelDir: empty })).rejects.toThrow(/model\.onnx is empty/);
    const dir = newDir('onnx-badbatch');
    writeTinyModel(dir);
    await expect(createOnnxEmbedder({ modelDir: dir, batchSize: 0 })).rejects.toThrow(/batchSize/);
  });
});

describe('loadEmbedder', () => {
  it('picks the fallback with a clear reason when the directory is missing or empty', async () => {
    const missing = join(newDir('load-missing'), 'models', 'all-MiniLM-L6-v2');
    const empty = newDir('load-empty');
    mkdirSync(join(empty, 'sub'));
    for (const modelDir of [missing, empty]) {
      const choice = await loadEmbedder({ modelDir });
      expect(choice.embedder.kind).toBe('fallback');
      expect(choice.embedder.id).toBe('fallback:hashed-ngrams-v1');
      expect(choice.reason).toContain(`no model.onnx in ${modelDir}`);
      expect(choice.reason).toContain('fallback');
      await choice.embedder.close();
    }
  });

  it('picks the ONNX embedder when the model files are present', async () => {
    const dir = newDir('load-tiny');
    writeTinyModel(dir);
    const choice = await loadEmbedder({ modelDir: dir, batchSize: 4 });
    try {
      expect(choice.embedder.kind).toBe('onnx');
      expect(choice.reason).toContain(`model files found in ${dir}`);
      expect(choice.reason).toContain(choice.embedder.id);
      expect(await choice.embedder.embed(['hello'])).toHaveLength(1);
    } finally {
      await choice.embedder.close();
    }
  });

  it('refuses, saying why, when model.onnx is there but cannot be loaded (no silent switch to the fallback)', async () => {
    const dir = newDir('load-broken');
    writeTinyModel(dir);
    writeFileSync(join(dir, 'model.onnx'), 'garbage');
    await expect(loadEmbedder({ modelDir: dir })).rejects.toThrow(/cannot be loaded \(onnxruntime cannot load .*\); fix or remove .*model\.onnx/);
  });
});
