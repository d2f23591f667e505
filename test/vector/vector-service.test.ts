import { rmSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Query } from 'mingo';
import { afterAll, describe, expect, it } from 'vitest';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { createFallbackEmbedder, loadEmbedder, VectorService, type Embedder } from '../../engine/vector/index.js';
import { seededRandom } from '../helpers/random.js';
import { tempDir } from '../helpers/temp-dir.js';
import { writeTinyModel } from './tiny-onnx-model.js';

const dirs: Array<{ remove(): void }> = [];
afterAll(() => dirs.forEach((d) => d.remove()));

function newDir(name: string): string {
  const d = tempDir(name);
  dirs.push(d);
  return d.path;
}

const cache = new PageCache<TreeNode>(64 * 1024 * 1024);
const open = (dir: string) => TenantStore.open(dir, { cache, fsync: 'batch', checkpointIntervalMs: 0 });

// Synthetic texts: ten topics of related words, so neighbours are meaningful to a lexical embedder.
const TOPICS = [
  'ocean wave tide coral reef fish sailor harbour',
  'mountain summit glacier ridge climber rope snow',
  'market stock bond yield investor price trade',
  'kitchen recipe oven flour butter sugar bake',
  'guitar chord melody rhythm drum singer stage',
  'planet orbit comet telescope galaxy star moon',
  'garden tulip soil seed compost rose bloom',
  'football goal striker referee league match pitch',
  'castle knight sword dragon tower king siege',
  'engine piston diesel gearbox wheel brake fuel',
].map((t) => t.split(' '));

function texts(count: number, seed: number): Array<{ id: string; text: string; metadata: Record<string, unknown> }> {
  const rand = seededRandom(seed);
  return Array.from({ length: count }, (_, i) => {
    const topic = Math.floor(rand() * TOPICS.length);
    const words = TOPICS[topic]!;
    const other = TOPICS[Math.floor(rand() * TOPICS.length)]!;
    const picked = Array.from({ length: 6 }, () => (rand() < 0.8 ? words : other)[Math.floor(rand() * 7)]!);
    return {
      id: `rec-${String(i).padStart(5, '0')}`,
      text: `${picked.join(' ')} ${i % 7 === 0 ? 'special' : ''} item ${i}`,
      metadata: { topic, n: i, even: i % 2 === 0, tags: i % 3 === 0 ? ['a', 'b'] : ['c'], ...(i % 11 === 0 ? { rare: true } : {}) },
    };
  });
}

async function load(service: VectorService, store: TenantStore, records: ReturnType<typeof texts>, namespace = ''): Promise<void> {
  for (let i = 0; i < records.length; i += 500) await service.upsert(store, records.slice(i, i + 500), namespace);
}

function ids(result: { matches: Array<{ id: string }> }): string[] {
  return result.matches.map((m) => m.id);
}

describe('vector service over a real store', () => {
  const records = texts(3000, 11);

  it('answers pending changes before the graph has them, then through the graph', async () => {
    const dir = newDir('vec-pending');
    const store = await open(dir);
    const service = new VectorService({ embedder: createFallbackEmbedder() });
    await load(service, store, records.slice(0, 1000));
    // Straight after the writes the graph lags: the answers must not.
    const before = await service.query(store, { query: 'ocean coral reef', topK: 10 });
    const exact = await service.query(store, { query: 'ocean coral reef', topK: 10, exact: true });
    expect(ids(before)).toEqual(ids(exact));
    await service.settle(store, '');
    expect((await service.status(store, ''))!.pending).toBe(0);
    const after = await service.query(store, { query: 'ocean coral reef', topK: 10 });
    expect(after.path).toBe('hnsw');
    expect(ids(after)).toEqual(ids(exact));
    await store.close();
  });

  it('makes writers wait while more than 4096 changes are pending for the graph', async () => {
    const dir = newDir('vec-backpressure');
    const store = await open(dir);
    const service = new VectorService({ embedder: createFallbackEmbedder() });
    const many = texts(6000, 3);
    // Six concurrent batches: the writes are durable long before the graph takes in 6000 inserts.
    await Promise.all(Array.from({ length: 6 }, (_, b) => service.upsert(store, many.slice(b * 1000, (b + 1) * 1000), '')));
    expect((await service.status(store, ''))!.pending).toBeLessThanOrEqual(4096);
    await service.settle(store, '');
    expect((await service.status(store, ''))!.graphNodes).toBe(6000);
    await store.close();
  });

  it('keeps recall against brute force, with filters of every selectivity', async () => {
    const dir = newDir('vec-recall');
    const store = await open(dir);
    const service = new VectorService({ embedder: createFallbackEmbedder() });
    await load(service, store, records);
    // Updates and deletes interleaved: replace 10%, delete 10%.
    await service.upsert(store, records.slice(0, 300).map((r) => ({ ...r, text: `${r.text} revised ${TOPICS[(r.metadata.topic as number + 1) % 10]!.join(' ')}` })), '');
    await service.delete(store, { ids: records.slice(300, 600).map((r) => r.id) });
    await service.settle(store, '');
    // 600 tombstones (300 deletes, 300 replaced) passed 10% of the graph: the applier cleaned up.
    const status = (await service.status(store, ''))!;
    expect(status.graphNodes).toBe(2700);
    expect(status.tombstones).toBeLessThan(270);
    const filters: Array<Record<string, unknown> | undefined> = [
      undefined,
      { even: true },
      { topic: { $in: [1, 2, 3] } },
      { n: { $gte: 2000 } },
      { tags: 'a', topic: { $ne: 4 } },
      { rare: true },
      { n: { $lt: 20 } },
      { $or: [{ topic: 9 }, { n: 5 }] },
      { topic: 42 },
    ];
    const live = new Map(records.map((r) => [r.id, r.metadata]));
    for (const r of records.slice(300, 600)) live.delete(r.id);
    const rand = seededRandom(5);
    for (const filter of filters) {
      let found = 0;
      let expected = 0;
      for (let q = 0; q < 15; q++) {
        const words = TOPICS[Math.floor(rand() * 10)]!;
        const query = `${words[Math.floor(rand() * 7)]} ${words[Math.floor(rand() * 7)]} item`;
        const approx = await service.query(store, { query, topK: 10, filter, includeText: false });
        const exact = await service.query(store, { query, topK: 10, filter, exact: true, includeText: false });
        // Every match satisfies the filter (mingo as the oracle) and exists.
        const oracle = filter === undefined ? undefined : new Query(filter);
        for (const m of approx.matches) {
          expect(live.has(m.id), m.id).toBe(true);
          if (oracle) expect(oracle.test(live.get(m.id)!), `${m.id} vs ${JSON.stringify(filter)}`).toBe(true);
        }
        // topK results whenever enough records match.
        const matching = [...live.values()].filter((md) => oracle?.test(md) ?? true).length;
        expect(approx.matches.length).toBe(Math.min(10, matching));
        const truth = new Set(ids(exact));
        expected += truth.size;
        found += ids(approx).filter((id) => truth.has(id)).length;
      }
      if (expected > 0) expect(found / expected, JSON.stringify(filter)).toBeGreaterThanOrEqual(0.9);
    }
    await store.close();
  });

  it('reopens from its graph file, rebuilds without one, and never re-embeds', async () => {
    const dir = newDir('vec-reopen');
    let store = await open(dir);
    const embedder = countingEmbedder(createFallbackEmbedder());
    let service = new VectorService({ embedder });
    await load(service, store, records.slice(0, 2000));
    await service.delete(store, { prefix: 'rec-000' }); // rec-00000..rec-00099
    await service.settle(store, '');
    const queries = ['mountain glacier snow', 'guitar melody drum', 'castle dragon king'];
    const answers = [];
    for (const query of queries) answers.push(ids(await service.query(store, { query, topK: 10 })));
    await store.close();
    expect(readdirSync(join(dir, 'derived'))).toContain('vec-1.bin');

    // 1. From the graph file.
    store = await open(dir);
    service = new VectorService({ embedder });
    const embedded = embedder.count;
    for (let i = 0; i < queries.length; i++) expect(ids(await service.query(store, { query: queries[i]!, topK: 10 }))).toEqual(answers[i]);
    const status = (await service.status(store, ''))!;
    expect(status.loadedFrom).toMatch(/^graph file/);
    expect(status.pending).toBe(0);
    expect(embedder.count - embedded).toBe(queries.length); // only the queries
    await store.close();

    // 2. A damaged graph file is ignored: rebuilt from the stored vectors.
    const file = join(dir, 'derived', 'vec-1.bin');
    writeFileSync(file, Buffer.from('not a graph'));
    store = await open(dir);
    service = new VectorService({ embedder });
    expect((await service.status(store, ''))!.loadedFrom).toMatch(/^rebuilt from the records/);
    // Queries are right even while the rebuild is under way...
    expect(ids(await service.query(store, { query: queries[0]!, topK: 10 }))).toEqual(answers[0]);
    await service.settle(store, '');
    // ...and after it.
    for (let i = 0; i < queries.length; i++) expect(ids(await service.query(store, { query: queries[i]!, topK: 10 }))).toEqual(answers[i]);
    await store.close();

    // 3. No graph file at all.
    rmSync(file);
    store = await open(dir);
    service = new VectorService({ embedder });
    await service.settle(store, '');
    for (let i = 0; i < queries.length; i++) expect(ids(await service.query(store, { query: queries[i]!, topK: 10 }))).toEqual(answers[i]);
    // Only the queries were embedded: 3 + (1 + 3) + 3.
    expect(embedder.count - embedded).toBe(queries.length * 3 + 1);
    await store.close();
  });

  it('re-embeds stored texts in the background when the embedder changes, never mixing spaces', async () => {
    const dir = newDir('vec-reembed');
    const modelDir = newDir('vec-tiny-model');
    writeTinyModel(modelDir, { dims: 384 });
    let store = await open(dir);
    let service = new VectorService({ embedder: createFallbackEmbedder() });
    const few = [
      { id: 'a', text: 'the quick brown fox' },
      { id: 'b', text: 'a lazy dog sat on the mat' },
      { id: 'c', text: 'hello world' },
    ];
    await service.upsert(store, few, 'ns');
    await store.close();

    const onnx = (await loadEmbedder({ modelDir })).embedder;
    expect(onnx.kind).toBe('onnx');
    try {
      store = await open(dir);
      service = new VectorService({ embedder: onnx });
      await service.settle(store, 'ns');
      for (const r of few) expect((await service.get(store, r.id, 'ns')).embedder).toBe(onnx.id);
      const [q] = await onnx.embed(['hello world']);
      const res = await service.query(store, { query: 'hello world', topK: 3, namespace: 'ns', includeText: false });
      expect(res.matches[0]!.id).toBe('c');
      expect(res.matches[0]!.score).toBeCloseTo(1, 5);
      expect(q!.length).toBe(384);
      await store.close();
    } finally {
      await onnx.close();
    }
  });

  it('holds its graphs within the memory budget: unloads idle namespaces, then refuses writes', async () => {
    const dir = newDir('vec-budget');
    const store = await open(dir);
    // Room for one namespace of a few hundred vectors (the graph allocates 1024 nodes at a time:
    // about 1.7 MB at 384 dimensions), not two.
    const service = new VectorService({ embedder: createFallbackEmbedder(), memoryBytes: 3_000_000 });
    await service.upsert(store, records.slice(0, 300), 'one');
    await service.settle(store, 'one');
    await service.upsert(store, records.slice(300, 600), 'two');
    await service.settle(store, 'two');
    // 'one' was unloaded to make room for 'two', and still answers (reloaded on use).
    expect(service.memoryUsed).toBeLessThanOrEqual(3_000_000);
    const one = await service.query(store, { query: 'item', topK: 500, namespace: 'one', exact: true });
    expect(one.matches).toHaveLength(300);
    // One namespace alone past the budget: refused, nothing written.
    const refused = await service.upsert(store, records.slice(600, 1600), 'two').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((refused as { code?: string }).code).toBe('QUOTA_EXCEEDED');
    expect(await service.get(store, records[700]!.id, 'two').catch((e: { code: string }) => e.code)).toBe('NOT_FOUND');
    await store.close();
  });

  it('never lets an accepted write take the graphs past the budget, at any moment of its indexing', async () => {
    // A write is admitted on an estimate of its peak: the queued vectors and the arena chunk the
    // graph allocates while the queue still holds them. Sampled every turn while it settles.
    for (const budget of [2_500_000, 3_200_000, 6_000_000]) {
      const dir = newDir('vec-budget-peak');
      const store = await open(dir);
      const service = new VectorService({ embedder: createFallbackEmbedder(), memoryBytes: budget });
      let peak = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          peak = Math.max(peak, service.memoryUsed);
          await new Promise((r) => setImmediate(r));
        }
      })();
      let accepted = 0;
      let refused = 0;
      for (const [from, count] of [[0, 700], [700, 1], [701, 400], [1101, 1000], [2101, 1000]] as Array<[number, number]>) {
        const done = await service.upsert(store, records.slice(from, from + count), 'peak').then(
          () => true,
          (err: { code?: string }) => {
            expect(err.code).toBe('QUOTA_EXCEEDED');
            return false;
          },
        );
        if (done) accepted++;
        else refused++;
        await service.settle(store, 'peak');
      }
      sampling = false;
      await sampler;
      expect(peak, `budget ${budget}`).toBeLessThanOrEqual(budget);
      expect(accepted, `budget ${budget}`).toBeGreaterThan(0);
      if (budget === 2_500_000) expect(refused).toBeGreaterThan(0);
      await store.close();
    }
  });

  it('keeps reads within the memory budget too: loading a namespace to query it unloads the least recently used', async () => {
    const dir = newDir('vec-budget-reads');
    let store = await open(dir);
    let service = new VectorService({ embedder: createFallbackEmbedder() });
    const names = ['r0', 'r1', 'r2', 'r3'];
    for (let i = 0; i < names.length; i++) {
      await service.upsert(store, records.slice(i * 200, i * 200 + 200), names[i]!);
      await service.settle(store, names[i]!);
    }
    await store.close(); // graph files for all four
    store = await open(dir);
    // Room for one such graph (about 1.7 MB at 384 dimensions), not two.
    service = new VectorService({ embedder: createFallbackEmbedder(), memoryBytes: 3_000_000 });
    for (const round of [0, 1]) {
      for (const name of names) {
        const res = await service.query(store, { query: 'item', topK: 500, namespace: name, exact: true });
        expect(res.matches, `${name} round ${round}`).toHaveLength(200);
        expect(service.memoryUsed, `after querying ${name}`).toBeLessThanOrEqual(3_000_000);
        expect((await service.namespaces(store)).filter((n) => n.loaded).map((n) => n.namespace)).toEqual([name]);
      }
    }
    await store.close();
  });

  it('reloads an unloaded namespace only after its last graph file is written, missing nothing', async () => {
    const dir = newDir('vec-unload');
    let store = await open(dir);
    let service = new VectorService({ embedder: createFallbackEmbedder(), memoryBytes: 3_000_000 });
    await service.upsert(store, records.slice(0, 300), 'one');
    await store.close(); // graph file of 'one'
    store = await open(dir);
    service = new VectorService({ embedder: createFallbackEmbedder(), memoryBytes: 3_000_000 });
    await service.upsert(store, records.slice(300, 400), 'one'); // log entries after the file
    await service.settle(store, 'one');
    await service.upsert(store, records.slice(400, 700), 'two'); // unloads 'one': new file, log pruned
    const again = await service.query(store, { query: 'item', topK: 10, namespace: 'one', includeText: false });
    expect(again.path).toBe('hnsw');
    await service.settle(store, 'one');
    const status = (await service.status(store, 'one'))!;
    expect(status.loadedFrom).toMatch(/^graph file/);
    expect(status.graphNodes).toBe(400);
    await store.close();
  });

  it('writes the graph file of a namespace unloaded right after a write, so it reloads from the file, not from its records', async () => {
    const dir = newDir('vec-unload-pending');
    const store = await open(dir);
    const service = new VectorService({ embedder: createFallbackEmbedder(), memoryBytes: 3_000_000 });
    await service.upsert(store, records.slice(0, 500), 'first'); // queued, not yet in the graph
    await service.upsert(store, records.slice(500, 800), 'second'); // unloads 'first' at once
    const res = await service.query(store, { query: 'item', topK: 600, namespace: 'first', exact: true });
    expect(res.matches).toHaveLength(500);
    const status = (await service.status(store, 'first'))!;
    expect(status.loadedFrom).toMatch(/^graph file/);
    expect(status.graphNodes).toBe(500);
    await store.close();
  });

  it('keeps each namespace in its own graph and file', async () => {
    const dir = newDir('vec-ns');
    let store = await open(dir);
    let service = new VectorService({ embedder: createFallbackEmbedder() });
    await service.upsert(store, records.slice(0, 50), 'left');
    await service.upsert(store, records.slice(50, 80), 'right');
    await store.close();
    expect(readdirSync(join(dir, 'derived')).sort()).toEqual(['vec-1.bin', 'vec-2.bin']);
    store = await open(dir);
    service = new VectorService({ embedder: createFallbackEmbedder() });
    const left = await service.query(store, { query: 'item', topK: 100, namespace: 'left' });
    const right = await service.query(store, { query: 'item', topK: 100, namespace: 'right' });
    expect(left.matches).toHaveLength(50);
    expect(right.matches).toHaveLength(30);
    expect(ids(right).every((id) => Number(id.slice(4)) >= 50)).toBe(true);
    await store.close();
  });
});

function countingEmbedder(inner: Embedder): Embedder & { count: number } {
  const counted = {
    id: inner.id,
    kind: inner.kind,
    dims: inner.dims,
    maxTokens: inner.maxTokens,
    count: 0,
    embed(texts: readonly string[]) {
      counted.count += texts.length;
      return inner.embed(texts);
    },
    close: () => inner.close(),
  };
  return counted;
}
