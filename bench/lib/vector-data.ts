// The data of the vector benchmark, derived from seeds alone so every worker process regenerates
// the same bytes instead of receiving them: clustered unit vectors (the in-process index
// comparison), distinct texts from topic vocabularies (what the fallback embedder turns into
// vectors for the VectorService and HTTP sections), and the recall arithmetic.
import { seededRandom } from './dataset.js';

export const DIMS = 384;
export const K = 10;
/** Clusters of the synthetic vector data. */
export const CLUSTERS = 100;
/**
 * Per-dimension noise around a cluster centre (a unit vector), before normalising: the noise's
 * norm is ~0.6, so points of one cluster have cosine ~0.75 to their centre and ~0.5 to each
 * other. The noise is isotropic in all 384 dimensions, the hard case for a graph index (real
 * embeddings have a much lower intrinsic dimension); test/vector/vector-data.ts uses the same.
 */
export const SPREAD = 0.6 / Math.sqrt(DIMS);
const DATA_SEED = 0x0ec7_0001;
const QUERY_SEED = 0x0ec7_0002;
const CENTRE_SEED = 0x0ec7_0003;

function gaussian(rand: () => number): number {
  const u = 1 - rand();
  const v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

function normaliseAt(a: Float32Array, off: number, dims: number): void {
  let s = 0;
  for (let d = 0; d < dims; d++) s += a[off + d]! * a[off + d]!;
  const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (let d = 0; d < dims; d++) a[off + d] = a[off + d]! * inv;
}

function centres(dims: number): Float32Array {
  const rand = seededRandom(CENTRE_SEED);
  const c = new Float32Array(CLUSTERS * dims);
  for (let i = 0; i < c.length; i++) c[i] = gaussian(rand);
  for (let i = 0; i < CLUSTERS; i++) normaliseAt(c, i * dims, dims);
  return c;
}

function clustered(count: number, dims: number, seed: number): Float32Array {
  const c = centres(dims);
  const rand = seededRandom(seed);
  const out = new Float32Array(count * dims);
  for (let i = 0; i < count; i++) {
    const co = Math.floor(rand() * CLUSTERS) * dims;
    const off = i * dims;
    for (let d = 0; d < dims; d++) out[off + d] = c[co + d]! + SPREAD * gaussian(rand);
    normaliseAt(out, off, dims);
  }
  return out;
}

/**
 * `count` data vectors, row-major in one Float32Array: vector i of a data set of N is the same
 * for every N >= i (a 10k set is the first 10k of the 100k set).
 */
export function dataVectors(count: number, dims = DIMS): Float32Array {
  return clustered(count, dims, DATA_SEED);
}

/** `count` query vectors from the same distribution, another stream (none is in the data). */
export function queryVectors(count: number, dims = DIMS): Float32Array {
  return clustered(count, dims, QUERY_SEED);
}

/** Row i of a row-major set, as a view. */
export function row(set: Float32Array, i: number, dims = DIMS): Float32Array {
  return set.subarray(i * dims, (i + 1) * dims);
}

/**
 * Mean recall@k of `found` (node numbers per query) against `truth` (the exact top k per query,
 * k ints per query, row-major): |found ∩ truth| / k, averaged over queries.
 */
export function recallAt(found: ArrayLike<number>[], truth: Int32Array, k = K): number {
  let hit = 0;
  for (let q = 0; q < found.length; q++) {
    const want = new Set(truth.subarray(q * k, (q + 1) * k));
    const f = found[q]!;
    for (let j = 0; j < Math.min(k, f.length); j++) if (want.has(f[j]!)) hit++;
  }
  return hit / (found.length * k);
}

/**
 * The exact top k of each query by dot product, the plainest loop there is (Float64 sums, no
 * unrolling): the check on the engine's exact() that the ground truth comes from.
 */
export function naiveTopK(data: Float32Array, count: number, query: Float32Array, k = K, dims = DIMS): number[] {
  const best: Array<{ i: number; s: number }> = [];
  for (let i = 0; i < count; i++) {
    let s = 0;
    const off = i * dims;
    for (let d = 0; d < dims; d++) s += data[off + d]! * query[d]!;
    if (best.length < k || s > best[best.length - 1]!.s) {
      best.push({ i, s });
      best.sort((a, b) => b.s - a.s);
      if (best.length > k) best.pop();
    }
  }
  return best.map((b) => b.i);
}

// ---- Texts (for the embedder) ---------------------------------------------------------------------

const TEXT_SEED = 0x7e47_0001;
const QUERY_TEXT_SEED = 0x7e47_0002;
const TOPICS = 200;
const WORDS_PER_TOPIC = 40;
const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'po', 'da', 'fi', 'gu', 'ha', 'je', 'bo', 'ce', 'xu', 'wy', 'qa'];

/** TOPICS x WORDS_PER_TOPIC distinct pseudo-words of 2-4 syllables. */
const VOCABULARY: string[][] = (() => {
  const rand = seededRandom(0x7e47_0000);
  const seen = new Set<string>();
  const topics: string[][] = [];
  for (let t = 0; t < TOPICS; t++) {
    const words: string[] = [];
    while (words.length < WORDS_PER_TOPIC) {
      const n = 2 + Math.floor(rand() * 3);
      let w = '';
      for (let s = 0; s < n; s++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)]!;
      if (seen.has(w)) continue;
      seen.add(w);
      words.push(w);
    }
    topics.push(words);
  }
  return topics;
})();

function textOf(rand: () => number, tag: string): string {
  const topic = VOCABULARY[Math.floor(rand() * TOPICS)]!;
  const n = 8 + Math.floor(rand() * 9);
  const words: string[] = [];
  for (let j = 0; j < n; j++) {
    // Mostly the topic's words, some from anywhere: neighbours share a topic, not a text.
    const from = rand() < 0.8 ? topic : VOCABULARY[Math.floor(rand() * TOPICS)]!;
    words.push(from[Math.floor(rand() * WORDS_PER_TOPIC)]!);
  }
  return `${words.join(' ')} ${tag}`;
}

/** The id of record i. */
export function recordId(i: number): string {
  return `rec-${String(i).padStart(8, '0')}`;
}

/**
 * Records from..to-1 (id, text, metadata): 8-16 words of one of 200 topics, and the record
 * number spelled as a word so every text (and vector) is distinct. Record i is the same
 * whatever range it is generated in (a seed per block of 1000).
 */
export function records(from: number, to: number): Array<{ id: string; text: string; metadata: { n: number; topic: number } }> {
  const out = [];
  const block = (b: number): (() => number) => seededRandom((TEXT_SEED ^ b) >>> 0);
  let rand = block(0);
  // From the start of from's block: record i depends only on its block's seed and position.
  for (let i = from - (from % 1000); i < to; i++) {
    if (i % 1000 === 0) rand = block(i / 1000);
    const text = textOf(rand, `n${i}`);
    if (i >= from) out.push({ id: recordId(i), text, metadata: { n: i, topic: i % 100 } });
  }
  return out;
}

/** `count` query texts (another stream: never a stored text). */
export function queryTexts(count: number): string[] {
  const rand = seededRandom(QUERY_TEXT_SEED);
  return Array.from({ length: count }, () => textOf(rand, '').trim());
}
