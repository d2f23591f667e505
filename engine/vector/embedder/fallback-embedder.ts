import type { Embedder } from './embedder.js';

/*
 * The built-in fallback: a lexical embedding that needs no model files. Texts are NFKC-normalised
 * and lower-cased, split into word tokens (runs of letters, marks and digits), and each word
 * contributes itself (weight 1) and its character 3-grams with boundary markers, "<word>" (weight
 * 0.5 each). Every feature is hashed (FNV-1a 32-bit over UTF-16 code units, which is the same on
 * every platform) into one of 384 buckets with a sign taken from a second mix of the hash, so
 * collisions cancel on average instead of piling up. Counts are damped (1 + ln tf) and the vector
 * is L2-normalised, so cosine similarity rewards shared words and shared morphology ("index",
 * "indexing", "indexes") and is blind to everything else. Changing any of this changes the
 * vectors: bump FALLBACK_EMBEDDER_ID with it, so stored records are re-embedded.
 */

export const FALLBACK_EMBEDDER_ID = 'fallback:hashed-ngrams-v1';
export const FALLBACK_DIMS = 384;
/** Words read per text; the rest is ignored (it bounds the cost of one embedding). */
export const FALLBACK_MAX_TOKENS = 8192;

const WORD_WEIGHT = 1;
const NGRAM_WEIGHT = 0.5;
const NGRAM = 3;
const WORD_PATTERN = /[\p{L}\p{M}\p{N}]+/gu;

/** The embedding of a text with no words (empty, blank or punctuation only): the constant unit vector. */
const EMPTY_TEXT_VECTOR = new Float32Array(FALLBACK_DIMS).fill(1 / Math.sqrt(FALLBACK_DIMS));

/** The built-in lexical embedder: deterministic, 384 dims, no model files, no background work. */
export function createFallbackEmbedder(): Embedder {
  return {
    id: FALLBACK_EMBEDDER_ID,
    kind: 'fallback',
    dims: FALLBACK_DIMS,
    maxTokens: FALLBACK_MAX_TOKENS,
    embed: async (texts) => texts.map(fallbackEmbedding),
    close: async () => {},
  };
}

/** The fallback embedding of one text. */
export function fallbackEmbedding(text: string): Float32Array {
  // Feature -> occurrences; 'w:' marks a word, 'g:' a character n-gram.
  const counts = new Map<string, number>();
  const add = (feature: string): void => {
    counts.set(feature, (counts.get(feature) ?? 0) + 1);
  };
  let words = 0;
  for (const match of text.normalize('NFKC').toLowerCase().matchAll(WORD_PATTERN)) {
    if (words++ >= FALLBACK_MAX_TOKENS) break;
    const word = match[0];
    add(`w:${word}`);
    const marked = `<${word}>`;
    const chars = Array.from(marked); // code points, so an astral character is one character
    for (let i = 0; i + NGRAM <= chars.length; i++) add(`g:${chars.slice(i, i + NGRAM).join('')}`);
  }
  if (counts.size === 0) return EMPTY_TEXT_VECTOR.slice();

  const v = new Float32Array(FALLBACK_DIMS);
  for (const [feature, count] of counts) {
    const h = fnv1a(feature);
    const sign = (mix32(h) & 1) === 0 ? 1 : -1;
    const kindWeight = feature.startsWith('w:') ? WORD_WEIGHT : NGRAM_WEIGHT;
    v[h % FALLBACK_DIMS]! += sign * kindWeight * (1 + Math.log(count));
  }
  let squares = 0;
  for (const x of v) squares += x * x;
  // All features can cancel out in their buckets; fall back to the constant vector then too.
  if (squares === 0) return EMPTY_TEXT_VECTOR.slice();
  const scale = 1 / Math.sqrt(squares);
  for (let i = 0; i < v.length; i++) v[i]! *= scale;
  return v;
}

/** FNV-1a, 32 bits, over UTF-16 code units; returns an unsigned integer. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** murmur3's fmix32 finaliser: decorrelates the sign bit from the bucket index. */
function mix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
