import { beforeAll, describe, expect, it } from 'vitest';
import { isTetraError, type ErrorCode } from '../../engine/errors.js';
import { HnswIndex, adaptiveEf, type HnswHit } from '../../engine/vector/hnsw-index.js';
import { seededRandom } from '../helpers/random.js';
import { clusteredSource, clusteredVectors, normalise, uniformSource, uniformVectors } from './vector-data.js';

type Accept = (node: number) => boolean;

/** Mean recall@k of search() against exact() over the queries (a query with no exact hits counts as 1). */
function recall(index: HnswIndex, queries: readonly Float32Array[], k: number, accept?: Accept): number {
  let sum = 0;
  for (const q of queries) {
    const truth = index.exact(q, k, accept);
    if (truth.length === 0) {
      sum += 1;
      continue;
    }
    const want = new Set(truth.map((h) => h.node));
    const got = index.search(q, k, accept === undefined ? undefined : { accept });
    let hit = 0;
    for (const h of got) if (want.has(h.node)) hit++;
    sum += hit / truth.length;
  }
  return sum / queries.length;
}

function build(vectors: readonly Float32Array[], options: Partial<ConstructorParameters<typeof HnswIndex>[0]> = {}): HnswIndex {
  const index = new HnswIndex({ dims: vectors[0]!.length, ...options });
  for (const v of vectors) index.insert(v);
  return index;
}

function expectCode(fn: () => unknown, code: ErrorCode, message: RegExp): void {
  let thrown: unknown;
  try {
    fn();
  } catch (err) {
    thrown = err;
  }
  expect(thrown, 'expected a throw').toBeInstanceOf(Error);
  expect(isTetraError(thrown, code), `expected ${code}, got ${String(thrown)}`).toBe(true);
  expect((thrown as Error).message).toMatch(message);
}

function expectBestFirst(hits: readonly HnswHit[]): void {
  for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.score).toBeGreaterThanOrEqual(hits[i]!.score);
}

// Recall figures are printed so a run shows the margin, not only pass / fail.
function report(what: string, value: number): void {
  console.log(`[hnsw] ${what}: ${value.toFixed(4)}`);
}

describe('HnswIndex: recall against exact search', () => {
  it('10k uniform random vectors (32 dims): recall@10 >= 0.95 with the default ef', () => {
    const index = build(uniformVectors(10_000, 32, 11));
    const r = recall(index, uniformVectors(150, 32, 12), 10);
    report('uniform 10k x 32 recall@10', r);
    expect(r).toBeGreaterThanOrEqual(0.95);
  });

  it('3k clustered vectors (384 dims): recall@10 >= 0.95 with the default ef', () => {
    const data = clusteredVectors(3_100, 384, 21);
    const index = build(data.slice(0, 3_000));
    const r = recall(index, data.slice(3_000), 10);
    report('clustered 3k x 384 recall@10', r);
    expect(r).toBeGreaterThanOrEqual(0.95);
  });
});

describe('HnswIndex: 10k clustered vectors (32 dims)', () => {
  const data = clusteredVectors(10_150, 32, 31);
  const queries = data.slice(10_000);
  let index: HnswIndex;
  // A label per node, for filters of known selectivity: label % 100 < percent.
  const labels: number[] = [];

  beforeAll(() => {
    index = build(data.slice(0, 10_000));
    const rand = seededRandom(32);
    for (let n = 0; n < index.nodeLimit; n++) labels[n] = Math.floor(rand() * 100);
  });

  it('recall@10 >= 0.95 with the default ef, and hits are best first with cosine scores', () => {
    const r = recall(index, queries, 10);
    report('clustered 10k x 32 recall@10', r);
    expect(r).toBeGreaterThanOrEqual(0.95);
    const q = queries[0]!;
    const hits = index.search(q, 10);
    expect(hits).toHaveLength(10);
    expectBestFirst(hits);
    expect(index.search(q, 10, { ef: 0 })).toEqual(hits);
    for (const h of hits) {
      const v = index.vector(h.node);
      let dot = 0;
      for (let d = 0; d < v.length; d++) dot += v[d]! * q[d]!;
      expect(h.score).toBeCloseTo(dot, 5);
    }
  });

  it.each([
    { percent: 50, minRecall: 0.9 },
    { percent: 10, minRecall: 0.9 },
    { percent: 1, minRecall: 0 },
  ])('filtered search at $percent% selectivity returns only accepted nodes, k of them', ({ percent, minRecall }) => {
    const accept: Accept = (n) => labels[n]! < percent;
    const accepted = labels.filter((l) => l < percent).length;
    expect(accepted).toBeGreaterThanOrEqual(10);
    for (const q of queries.slice(0, 50)) {
      const hits = index.search(q, 10, { accept });
      expect(hits).toHaveLength(10);
      expectBestFirst(hits);
      for (const h of hits) expect(accept(h.node)).toBe(true);
    }
    const r = recall(index, queries, 10, accept);
    report(`filtered ${percent}% recall@10`, r);
    expect(r).toBeGreaterThanOrEqual(minRecall);
    expect(index.estimateSelectivity(accept)).toBeCloseTo(percent / 100, 1);
  });

  it('a filter that accepts fewer than k nodes returns exactly those', () => {
    const few = new Set([3, 500, 9_999]);
    const hits = index.search(queries[1]!, 10, { accept: (n) => few.has(n) });
    expect(hits.map((h) => h.node).sort((a, b) => a - b)).toEqual([3, 500, 9_999]);
    expect(index.search(queries[1]!, 10, { accept: () => false })).toEqual([]);
  });

  it('serialize / deserialize round trip gives identical search results, in any chunk size', () => {
    for (const chunkBytes of [undefined, 4_096, 64]) {
      const chunks = index.serialize(chunkBytes);
      for (const c of chunks) expect(c.length).toBeLessThanOrEqual(chunkBytes ?? 1 << 20);
      const copy = HnswIndex.deserialize(chunks);
      expect(copy.liveCount).toBe(index.liveCount);
      expect(copy.M).toBe(index.M);
      expect(copy.efConstruction).toBe(index.efConstruction);
      for (const q of queries.slice(0, 40)) expect(copy.search(q, 10)).toEqual(index.search(q, 10));
    }
  });

  it('a truncated, padded or corrupted serialized form throws CORRUPTION', () => {
    const chunks = index.serialize(65_536);
    const last = chunks.length - 1;
    const cases: { name: string; input: Uint8Array[]; message: RegExp }[] = [
      { name: 'no chunks', input: [], message: /truncated/ },
      { name: 'last chunk missing', input: chunks.slice(0, last), message: /truncated/ },
      { name: 'last chunk cut short', input: [...chunks.slice(0, last), chunks[last]!.subarray(0, 10)], message: /truncated/ },
      { name: 'trailing bytes', input: [...chunks, new Uint8Array(3)], message: /trailing/ },
      { name: 'bad magic', input: [flip(chunks[0]!, 0), ...chunks.slice(1)], message: /magic/ },
      { name: 'bad version', input: [flip(chunks[0]!, 4), ...chunks.slice(1)], message: /version/ },
      { name: 'flipped payload byte', input: [chunks[0]!, flip(chunks[1]!, 1234), ...chunks.slice(2)], message: /checksum/ },
    ];
    for (const c of cases) expectCode(() => HnswIndex.deserialize(c.input), 'CORRUPTION', c.message);
  });
});

function flip(bytes: Uint8Array, at: number): Uint8Array {
  const copy = bytes.slice();
  copy[at] = copy[at]! ^ 0x5a;
  return copy;
}

describe('HnswIndex: deletes and updates', () => {
  it('20% deletes and 10% updates interleaved with 10k inserts keep recall; cleanup reclaims and reuses slots', () => {
    // Uniform data: the hardest of the two at 32 dims, so a poor repair would show.
    const dims = 32;
    const next = uniformSource(dims, 41);
    const rand = seededRandom(42);
    const index = new HnswIndex({ dims, cleanupRatio: 0 });
    // The caller's view: record id -> node, and node -> record id for the live ones.
    const nodeOf = new Map<number, number>();
    const ids: number[] = [];
    const deletedNodes = new Set<number>();
    let nextId = 0;
    const removeRandom = (): number => {
      const at = Math.floor(rand() * ids.length);
      const id = ids[at]!;
      ids[at] = ids[ids.length - 1]!;
      ids.pop();
      const node = nodeOf.get(id)!;
      nodeOf.delete(id);
      index.delete(node);
      deletedNodes.add(node);
      return id;
    };
    for (let i = 0; i < 10_000; i++) {
      const id = nextId++;
      nodeOf.set(id, index.insert(next()));
      ids.push(id);
      const roll = rand();
      if (roll < 0.2 && ids.length > 10) {
        removeRandom();
      } else if (roll < 0.3 && ids.length > 10) {
        // Upsert: same record id, new vector, new node.
        const updated = removeRandom();
        nodeOf.set(updated, index.insert(next()));
        ids.push(updated);
      }
    }
    expect(index.liveCount).toBe(ids.length);
    expect(index.deletedCount).toBe(deletedNodes.size);
    expect(deletedNodes.size / index.nodeLimit).toBeGreaterThan(0.25);
    for (const n of deletedNodes) expect(index.isLive(n)).toBe(false);

    const queries = Array.from({ length: 150 }, () => next());
    const before = recall(index, queries, 10);
    report(`recall@10 with ${deletedNodes.size} tombstones`, before);
    expect(before).toBeGreaterThanOrEqual(0.95);
    for (const q of queries) for (const h of index.search(q, 10)) expect(deletedNodes.has(h.node)).toBe(false);

    const limit = index.nodeLimit;
    expect(index.cleanup()).toBe(deletedNodes.size);
    expect(index.deletedCount).toBe(0);
    expect(index.liveCount).toBe(ids.length);
    const after = recall(index, queries, 10);
    report('recall@10 after cleanup', after);
    expect(after).toBeGreaterThanOrEqual(0.95);
    for (const q of queries) for (const h of index.search(q, 10)) expect(deletedNodes.has(h.node)).toBe(false);

    // Freed slots are reused before the index grows.
    const reused: number[] = [];
    for (let i = 0; i < 100; i++) reused.push(index.insert(next()));
    for (const n of reused) expect(deletedNodes.has(n)).toBe(true);
    expect(index.nodeLimit).toBe(limit);
    const again = recall(index, queries, 10);
    expect(again).toBeGreaterThanOrEqual(0.95);
  });

  it('with the default cleanupRatio, tombstones stay under 10% and recall holds through 30% deletes', () => {
    const data = uniformVectors(4_150, 24, 51);
    const index = build(data.slice(0, 4_000));
    const rand = seededRandom(52);
    const live = Array.from({ length: 4_000 }, (_, i) => i);
    let reclaimedSeen = false;
    for (let i = 0; i < 1_200; i++) {
      const at = Math.floor(rand() * live.length);
      const node = live[at]!;
      live[at] = live[live.length - 1]!;
      live.pop();
      const before = index.deletedCount;
      index.delete(node);
      if (index.deletedCount < before) reclaimedSeen = true;
      expect(index.deletedCount).toBeLessThanOrEqual(Math.ceil(0.1 * (index.liveCount + index.deletedCount)) + 1);
    }
    expect(reclaimedSeen).toBe(true);
    expect(index.liveCount).toBe(2_800);
    const r = recall(index, data.slice(4_000), 10);
    report('recall@10 after 30% deletes with automatic cleanup', r);
    expect(r).toBeGreaterThanOrEqual(0.95);
    for (const n of live) expect(index.isLive(n)).toBe(true);
  });

  it('deleting the entry point and almost everything else still finds what is left', () => {
    const data = uniformVectors(300, 8, 61);
    const index = build(data, { cleanupRatio: 0 });
    for (let n = 0; n < 299; n++) index.delete(n);
    expect(index.search(data[0]!, 5)).toEqual([{ node: 299, score: expect.any(Number) }]);
    index.delete(299);
    expect(index.search(data[0]!, 5)).toEqual([]);
    expect(index.cleanup()).toBe(300);
    expect(index.liveCount).toBe(0);
    expect(index.search(data[0]!, 5)).toEqual([]);
    const a = index.insert(data[1]!);
    const b = index.insert(data[2]!);
    expect(index.search(data[2]!, 2).map((h) => h.node)).toEqual([b, a]);
  });

  it('an insert after everything else was deleted (no cleanup yet) is found', () => {
    const data = uniformVectors(50, 8, 62);
    const index = build(data.slice(0, 40), { cleanupRatio: 0 });
    for (let n = 0; n < 40; n++) index.delete(n);
    const fresh = data.slice(40).map((v) => index.insert(v));
    expect(index.search(data[45]!, 10).map((h) => h.node).sort((x, y) => x - y)).toEqual(fresh);
    expect(index.cleanup()).toBe(40);
    expect(index.search(data[45]!, 10).map((h) => h.node).sort((x, y) => x - y)).toEqual(fresh);
  });

  it('delete of an unknown or deleted node throws NOT_FOUND', () => {
    const index = build(uniformVectors(5, 4, 63), { cleanupRatio: 0 });
    index.delete(2);
    expectCode(() => index.delete(2), 'NOT_FOUND', /not live/);
    expectCode(() => index.delete(5), 'NOT_FOUND', /not live/);
    expectCode(() => index.delete(-1), 'NOT_FOUND', /not live/);
    expectCode(() => index.delete(1.5), 'NOT_FOUND', /not live/);
  });
});

describe('HnswIndex: edge cases', () => {
  it('an empty index returns no hits', () => {
    const index = new HnswIndex({ dims: 3 });
    expect(index.search(normalise(new Float32Array([1, 2, 3])), 10)).toEqual([]);
    expect(index.exact(normalise(new Float32Array([1, 2, 3])), 10)).toEqual([]);
    expect(index.liveCount).toBe(0);
    expect(index.cleanup()).toBe(0);
    expect(HnswIndex.deserialize(index.serialize()).search(new Float32Array(3), 1)).toEqual([]);
  });

  it('k larger than the live count returns every live node, best first', () => {
    const data = uniformVectors(30, 6, 71);
    const index = build(data, { cleanupRatio: 0 });
    index.delete(7);
    const hits = index.search(data[0]!, 100);
    expect(hits).toHaveLength(29);
    expectBestFirst(hits);
    expect(hits.map((h) => h.node).sort((a, b) => a - b)).toEqual(data.map((_, i) => i).filter((i) => i !== 7));
    expect(hits[0]).toEqual({ node: 0, score: expect.closeTo(1, 5) });
  });

  it('a single node is found by any query', () => {
    const index = new HnswIndex({ dims: 2 });
    const node = index.insert(new Float32Array([1, 0]));
    expect(index.search(new Float32Array([0, 1]), 3)).toEqual([{ node, score: 0 }]);
    expect(index.search(new Float32Array([-1, 0]), 3)).toEqual([{ node, score: -1 }]);
  });

  it('many duplicates neither hide other vectors nor break the graph', () => {
    const data = uniformVectors(2_000, 16, 72);
    const index = new HnswIndex({ dims: 16 });
    const dup = data[0]!;
    const dupNodes = new Set<number>();
    for (let i = 0; i < data.length; i++) {
      index.insert(data[i]!);
      if (i % 10 === 0) dupNodes.add(index.insert(dup));
    }
    const hits = index.search(dup, 10);
    expect(hits).toHaveLength(10);
    for (const h of hits) expect(h.score).toBeCloseTo(1, 5);
    const r = recall(index, uniformVectors(100, 16, 73), 10);
    report('recall@10 with 200 duplicates', r);
    expect(r).toBeGreaterThanOrEqual(0.95);
  });

  it('a zero vector can be inserted and searched (score 0); the caller normalises', () => {
    const index = new HnswIndex({ dims: 4 });
    const zero = index.insert(new Float32Array(4));
    const x = index.insert(new Float32Array([1, 0, 0, 0]));
    const hits = index.search(new Float32Array([1, 0, 0, 0]), 5);
    expect(hits).toEqual([{ node: x, score: 1 }, { node: zero, score: 0 }]);
    expect(index.search(new Float32Array(4), 5).map((h) => h.score)).toEqual([0, 0]);
  });

  it('copies inserted vectors and rejects wrong dimensions or types', () => {
    const index = new HnswIndex({ dims: 3 });
    const v = new Float32Array([1, 0, 0]);
    const node = index.insert(v);
    v[0] = 0;
    expect(Array.from(index.vector(node))).toEqual([1, 0, 0]);
    expectCode(() => index.insert(new Float32Array(4)), 'VALIDATION_FAILED', /4 dimensions, the index has 3/);
    expectCode(() => index.search(new Float32Array(2), 1), 'VALIDATION_FAILED', /2 dimensions/);
    expectCode(() => index.exact(new Float32Array(2), 1), 'VALIDATION_FAILED', /2 dimensions/);
    expectCode(() => index.insert([1, 0, 0] as unknown as Float32Array), 'VALIDATION_FAILED', /Float32Array/);
    expectCode(() => index.search(new Float32Array(3), -1), 'VALIDATION_FAILED', /k must be/);
    expectCode(() => index.vector(9), 'NOT_FOUND', /no node 9/);
  });

  it.each([
    { options: { dims: 0 }, message: /dims/ },
    { options: { dims: 4, M: 1 }, message: /M must be/ },
    { options: { dims: 4, efConstruction: 0 }, message: /efConstruction/ },
    { options: { dims: 4, efSearch: -1 }, message: /efSearch/ },
    { options: { dims: 4, cleanupRatio: 2 }, message: /cleanupRatio/ },
  ])('rejects options $options', ({ options, message }) => {
    expectCode(() => new HnswIndex(options), 'VALIDATION_FAILED', message);
  });

  it('defaults: M 16, efConstruction 200, adaptive efSearch never below k', () => {
    const index = new HnswIndex({ dims: 4 });
    expect([index.M, index.efConstruction, index.efSearch]).toEqual([16, 200, 0]);
    expect(adaptiveEf(1)).toBe(100);
    expect(adaptiveEf(10)).toBe(100);
    expect(adaptiveEf(100)).toBe(200);
    expect(adaptiveEf(1_000)).toBe(1_024);
    expect(adaptiveEf(5_000)).toBe(5_000);
  });

  it('the same seed builds the same index; a deserialized index keeps building identically', () => {
    const data = uniformVectors(600, 8, 81);
    const a = build(data.slice(0, 500), { seed: 7 });
    const b = build(data.slice(0, 500), { seed: 7 });
    expect(a.serialize()).toEqual(b.serialize());
    const c = HnswIndex.deserialize(a.serialize());
    for (const v of data.slice(500)) {
      a.insert(v);
      c.insert(v);
    }
    expect(c.serialize()).toEqual(a.serialize());
  });
});

describe('HnswIndex: memory', () => {
  it('10k x 384 dims costs within 1.5x of hnswlib per vector', () => {
    // Memory does not depend on graph quality, so a cheap build (efConstruction 1) is enough.
    const dims = 384;
    const next = clusteredSource(dims, 91, 50);
    const index = new HnswIndex({ dims, efConstruction: 1 });
    for (let i = 0; i < 10_000; i++) index.insert(next());
    const hnswlibPerVector = 4 * dims + (2 * 16 + 1) * 4 + 8;
    const perVector = index.memoryBytes() / index.liveCount;
    report('bytes per vector at 10k x 384 (hnswlib 1676)', perVector);
    expect(perVector).toBeLessThanOrEqual(1.5 * hnswlibPerVector);
  });
});

describe('HnswIndex: the dot-product kernel', () => {
  it.each([
    { dims: 37, count: 1_500 },
    { dims: 384, count: 400 },
  ])('WebAssembly SIMD and the JavaScript twin build the same graph and return the same hits ($dims dims)', ({ dims, count }) => {
    const data = clusteredVectors(count + 20, dims, 101 + dims);
    const simd = build(data.slice(0, count), { seed: 3, cleanupRatio: 0 });
    const twin = build(data.slice(0, count), { seed: 3, cleanupRatio: 0, simd: false });
    expect([simd.simd, twin.simd]).toEqual([true, false]);
    for (let n = 0; n < count; n += 7) {
      simd.delete(n);
      twin.delete(n);
    }
    simd.cleanup();
    twin.cleanup();
    expect(twin.serialize()).toEqual(simd.serialize());
    const odd: Accept = (n) => n % 2 === 1;
    for (const q of data.slice(count)) {
      expect(twin.search(q, 10)).toEqual(simd.search(q, 10));
      expect(twin.search(q, 10, { accept: odd })).toEqual(simd.search(q, 10, { accept: odd }));
      const all = simd.exact(q, count);
      expect(twin.exact(q, count)).toEqual(all);
      // The filtered brute force (ids gathered) agrees with the unfiltered one (runs scored in place).
      expect(simd.exact(q, count, odd)).toEqual(all.filter((h) => odd(h.node)));
      // Float32 scores, held to a double-precision dot of the stored vectors.
      for (const h of all.slice(0, 20)) {
        const v = simd.vector(h.node);
        let dot = 0;
        for (let d = 0; d < dims; d++) dot += v[d]! * q[d]!;
        expect(Math.abs(h.score - dot)).toBeLessThanOrEqual(1e-5);
      }
    }
  });

  it('vector() returns a copy that outlives the memory growing under it; memoryBytes counts that memory', () => {
    const dims = 384;
    const data = uniformVectors(2_100, dims, 111);
    const index = new HnswIndex({ dims, efConstruction: 1 });
    index.insert(data[0]!);
    const first = index.vector(0);
    const before = index.memoryBytes();
    for (const v of data.slice(1)) index.insert(v);
    // 2100 vectors need a third arena chunk: 2 more chunks of 1024 x 1536 bytes (whole pages).
    expect(index.memoryBytes() - before).toBeGreaterThanOrEqual(2 * 1024 * 4 * dims);
    expect(Array.from(first)).toEqual(Array.from(data[0]!));
    expect(Array.from(index.vector(0))).toEqual(Array.from(data[0]!));
    expect(Array.from(index.vector(2_099))).toEqual(Array.from(data[2_099]!));
    expect(index.search(data[1_500]!, 1)[0]).toEqual({ node: 1_500, score: expect.closeTo(1, 5) });
  });

  it('an insert past the memory cap (maxMemoryBytes, 4 MiB here) throws QUOTA_EXCEEDED and leaves the index intact', () => {
    const dims = 384;
    const next = uniformSource(dims, 121);
    // 1536 bytes per vector: two chunks of 1024 (3 MiB) fit in 4 MiB with the scratch, a third does not.
    const index = new HnswIndex({ dims, efConstruction: 1, maxMemoryBytes: 4 * 1024 * 1024 });
    for (let i = 0; i < 2_048; i++) index.insert(next());
    let thrown: unknown;
    try {
      index.insert(next());
    } catch (err) {
      thrown = err;
    }
    expect(isTetraError(thrown, 'QUOTA_EXCEEDED'), String(thrown)).toBe(true);
    expect((thrown as Error).message).toMatch(/at most 2048 vectors \(4194304 bytes of WebAssembly memory\)/);
    expect(index.liveCount).toBe(2_048);
    expect(index.nodeLimit).toBe(2_048);
    expect(index.exact(index.vector(77), 1)[0]!.node).toBe(77);
    expect(index.search(index.vector(77), 1)).toHaveLength(1);
    // A freed slot is still usable.
    index.delete(5);
    index.cleanup();
    expect(index.insert(next())).toBe(5);
  });
});
