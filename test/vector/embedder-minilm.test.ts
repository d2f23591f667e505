import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOnnxEmbedder, DEFAULT_MODEL_DIR, loadWordPieceTokenizer, type OnnxEmbedder } from '../../engine/vector/embedder/index.js';

/*
 * The real all-MiniLM-L6-v2 against published reference outputs (test/vector/fixtures/
 * minilm-reference.json names each source). Runs only where the model files are present
 * (`npm run model:fetch`, or TETRA_EMBEDDING_MODEL_DIR pointing at them); nothing downloads here.
 */

interface Reference {
  vectors: Array<{ text: string; firstDims: number[]; maxAbsDiff: number; source: string }>;
  similarities: Array<{ texts: string[]; cosine: number[][]; maxAbsDiff: number; source: string }>;
  tokenIds: Array<{ text: string; ids: number[] }>;
}

const reference = JSON.parse(readFileSync(new URL('./fixtures/minilm-reference.json', import.meta.url), 'utf8')) as Reference;
const modelDir = process.env['TETRA_EMBEDDING_MODEL_DIR'] ?? DEFAULT_MODEL_DIR;
const present = existsSync(join(modelDir, 'model.onnx'));
const title = present
  ? `all-MiniLM-L6-v2 from ${modelDir} matches published reference outputs`
  : `all-MiniLM-L6-v2 reference check (skipped: no model.onnx in ${modelDir}; run \`npm run model:fetch\` or set TETRA_EMBEDDING_MODEL_DIR)`;

const dot = (a: ArrayLike<number>, b: ArrayLike<number>, n = a.length): number => {
  let s = 0;
  for (let i = 0; i < n; i++) s += a[i]! * b[i]!;
  return s;
};

describe.skipIf(!present)(title, () => {
  let embedder: OnnxEmbedder;
  beforeAll(async () => {
    embedder = await createOnnxEmbedder({ modelDir });
  });
  afterAll(async () => {
    await embedder?.close();
  });

  it('is 384-dimensional with a 256-token limit', () => {
    expect(embedder.dims).toBe(384);
    expect(embedder.maxTokens).toBe(256);
    expect(embedder.id).toMatch(/^onnx:.+:[0-9a-f]{12}$/);
  });

  it.each(reference.tokenIds)('tokenizes "$text" to the bert-base-uncased ids', async ({ text, ids }) => {
    const tokenizer = await loadWordPieceTokenizer(modelDir);
    expect(tokenizer.encode(text, 256)).toEqual(ids);
  });

  it.each(reference.vectors)('embeds "$text" as published', async ({ text, firstDims, maxAbsDiff }) => {
    const [v] = await embedder.embed([text]);
    const head = Array.from(v!.subarray(0, firstDims.length));
    const cosine = dot(head, firstDims) / Math.sqrt(dot(head, head) * dot(firstDims, firstDims));
    expect(cosine).toBeGreaterThanOrEqual(0.999);
    head.forEach((x, i) => expect(Math.abs(x - firstDims[i]!)).toBeLessThanOrEqual(maxAbsDiff));
  });

  it.each(reference.similarities)('gives the published pairwise similarities', async ({ texts, cosine, maxAbsDiff }) => {
    const vectors = await embedder.embed(texts);
    for (let i = 0; i < texts.length; i++) {
      for (let j = 0; j < texts.length; j++) {
        expect(Math.abs(dot(vectors[i]!, vectors[j]!) - cosine[i]![j]!)).toBeLessThanOrEqual(maxAbsDiff);
      }
    }
  });

  it('gives a text the same vector alone and in a padded batch', async () => {
    const [alone] = await embedder.embed(['hello world']);
    const [batched] = await embedder.embed(['hello world', 'a much longer sentence that forces padding of the first one in this batch']);
    expect(dot(alone!, batched!)).toBeGreaterThanOrEqual(0.99999);
  });
});
