import { describe, expect, it } from 'vitest';
import { createFallbackEmbedder, FALLBACK_DIMS, FALLBACK_EMBEDDER_ID } from '../../engine/vector/embedder/index.js';

const cosine = (a: Float32Array, b: Float32Array): number => a.reduce((s, x, i) => s + x * b[i]!, 0);
const norm = (v: Float32Array): number => Math.sqrt(cosine(v, v));

describe('fallback embedder', () => {
  const embedder = createFallbackEmbedder();

  it('describes itself', () => {
    expect(embedder.id).toBe(FALLBACK_EMBEDDER_ID);
    expect(embedder.id).toBe('fallback:hashed-ngrams-v1');
    expect(embedder.kind).toBe('fallback');
    expect(embedder.dims).toBe(384);
    expect(FALLBACK_DIMS).toBe(384);
    expect(embedder.maxTokens).toBeGreaterThan(0);
  });

  it('gives unit vectors of 384 dims, in input order', async () => {
    const texts = ['The quick brown fox', 'jumps over the lazy dog', 'ünïcödé text, 中文 too', 'x'];
    const vectors = await embedder.embed(texts);
    expect(vectors).toHaveLength(texts.length);
    for (const v of vectors) {
      expect(v).toBeInstanceOf(Float32Array);
      expect(v.length).toBe(384);
      expect(norm(v)).toBeCloseTo(1, 5);
    }
    const one = await embedder.embed([texts[2]!]);
    expect(Array.from(one[0]!)).toEqual(Array.from(vectors[2]!));
  });

  it('is deterministic: the same vector from a fresh instance, and a pinned fingerprint', async () => {
    const [a] = await embedder.embed(['Vector databases index embeddings']);
    const [b] = await createFallbackEmbedder().embed(['Vector databases index embeddings']);
    expect(Array.from(a!)).toEqual(Array.from(b!));
    // Pinned so a change to hashing or weighting is noticed (and FALLBACK_EMBEDDER_ID bumped with it).
    const nonZero = Array.from(a!).flatMap((x, i) => (x === 0 ? [] : [i]));
    expect(nonZero.slice(0, 6)).toMatchInlineSnapshot(`
      [
        3,
        13,
        15,
        24,
        65,
        93,
      ]
    `);
    expect(a![nonZero[0]!]).toMatchInlineSnapshot(`-0.28867512941360474`);
  });

  it('normalises case and Unicode compatibility forms (NFKC)', async () => {
    const [a, b, c] = await embedder.embed(['HELLO World', 'hello world', 'ｈｅｌｌｏ　ｗｏｒｌｄ']);
    expect(cosine(a!, b!)).toBeCloseTo(1, 6);
    expect(cosine(b!, c!)).toBeCloseTo(1, 6);
  });

  it('ignores punctuation and spacing around words', async () => {
    const [a, b] = await embedder.embed(['hello, world!', '  hello   world ']);
    expect(cosine(a!, b!)).toBeCloseTo(1, 6);
  });

  it('scores texts sharing words or morphology above unrelated texts', async () => {
    const [query, sameWords, morphology, unrelated, unrelated2] = await embedder.embed([
      'indexing vectors in a database',
      'a database of vectors',
      'the indexer indexes vectorized data',
      'my grandmother bakes apple pie',
      'football results from the weekend',
    ]);
    const sims = {
      sameWords: cosine(query!, sameWords!),
      morphology: cosine(query!, morphology!),
      unrelated: cosine(query!, unrelated!),
      unrelated2: cosine(query!, unrelated2!),
    };
    expect(sims.sameWords).toBeGreaterThan(sims.unrelated + 0.2);
    expect(sims.sameWords).toBeGreaterThan(sims.unrelated2 + 0.2);
    expect(sims.morphology).toBeGreaterThan(sims.unrelated + 0.1);
    expect(sims.morphology).toBeGreaterThan(sims.unrelated2 + 0.1);
  });

  it('ranks a typo closer than an unrelated word (character n-grams)', async () => {
    const [word, typo, other] = await embedder.embed(['embedding', 'embeding', 'tomato']);
    expect(cosine(word!, typo!)).toBeGreaterThan(cosine(word!, other!) + 0.3);
  });

  it('gives texts without words one fixed unit vector, equal for all of them', async () => {
    const vectors = await embedder.embed(['', '   ', '\n\t', '?!.,;']);
    const expected = 1 / Math.sqrt(384);
    for (const v of vectors) {
      expect(v.length).toBe(384);
      expect(norm(v)).toBeCloseTo(1, 6);
      expect(v.every((x) => Math.abs(x - expected) < 1e-7)).toBe(true);
    }
    // It is a copy: a caller scaling it cannot change the next one.
    vectors[0]!.fill(0);
    const [again] = await embedder.embed(['']);
    expect(again![0]).toBeCloseTo(expected, 7);
  });

  it('embeds an empty list to an empty list, and close() is harmless', async () => {
    expect(await embedder.embed([])).toEqual([]);
    await embedder.close();
    await embedder.close();
  });
});
