/**
 * One namespace's in-memory index: the HNSW graph over its records, the id <-> node maps, and
 * the changes not yet in the graph.
 *
 * The trees are the truth (DESIGN.md section 2: a derived structure never holds the only copy).
 * Every write puts its record and a change-log entry in one batch, then queues the id here; a
 * background applier brings the graph up to date a few milliseconds per event-loop turn. Until
 * then the id is *pending*: queries skip its graph node and score its stored vector directly,
 * so every query answers for the store as it is, never for a lagging graph.
 *
 * Records embedded by another embedder than the current one are *stale*: they are left out of
 * the graph and out of results (their vectors live in another space) until re-embedded.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import { Packr } from 'msgpackr';
import type { CompiledFilter } from '../docs/index.js';
import type { Snapshot, TenantStore } from '../tenant/index.js';
import { HnswIndex, type HnswHit } from './hnsw-index.js';
import { namespaceOp } from './vector-catalog.js';
import {
  decodeRecordVector,
  recordEmbedder,
  recordMetadata,
  graphFileName,
  idKey,
  logTree,
  recordDot,
  recordsTree,
  seqKey,
  seqOfKey,
  type NamespaceInfo,
} from './vector-codec.js';

const packr = new Packr({ useRecords: false, moreTypes: false });
/** Graph file payload: [u32 meta length][msgpack GraphMeta][the HNSW index's own serialization]. */
interface GraphMeta {
  v: 1;
  /** The change-log sequence the graph reflects: every entry up to it is applied. */
  seq: number;
  embedder: string;
  dims: number;
  /** No stale record was in the graph's namespace when it was written. */
  clean: boolean;
  /** Record id of each node; null for a free or deleted node. */
  ids: Array<string | null>;
}

/** The graph is cleaned up (tombstones repaired around and freed) past this share of tombstones. */
const CLEANUP_RATIO = 0.1;
/** Time the applier spends per event-loop turn before yielding. */
const APPLY_SLICE_MS = 8;
/** Records an exact scan reads per event-loop turn. */
const SCAN_CHUNK = 2048;
/** A filter estimated to match fewer records than this is answered by an exact scan. */
const SELECTIVE_MATCHES = 2000;
/** Nodes sampled to estimate a filter's selectivity. */
const SAMPLE = 256;

export interface ScoredId {
  id: string;
  score: number;
}

export interface NamespaceQuery {
  vector: Float32Array;
  topK: number;
  filter: CompiledFilter | undefined;
  exact: boolean;
  ef: number | undefined;
}

/** How a query was answered (for explain and tests). */
export type QueryPath = 'hnsw' | 'hnsw+filter' | 'exact' | 'exact:selective-filter' | 'exact:small';

interface QueueEntry {
  seq: number;
  id: string;
}

export class NamespaceIndex {
  readonly name: string;
  info: NamespaceInfo;
  readonly #store: TenantStore;
  readonly #embedder: string;
  readonly #dims: number;
  #graph: HnswIndex;
  #nodeIds: Array<string | undefined> = [];
  readonly #byId = new Map<string, number>();
  /** id -> the newest change-log sequence written for it and not yet applied to the graph. */
  readonly #pending = new Map<string, number>();
  #queue: QueueEntry[] = [];
  #queueHead = 0;
  readonly #stale = new Set<string>();
  #nextSeq: number;
  /** The sequence the newest durable graph file covers. */
  #snapshotSeq: number;
  #applier: Promise<void> | undefined;
  /** Called after every slice of the applier (writers waiting for the queue to shrink). */
  #sliceWaiters: Array<() => void> = [];
  #persisting: Promise<void> | undefined;
  /** Set while a graph file is being serialized: the applier waits (the graph must not change). */
  #paused: Promise<void> | undefined;
  #closed = false;
  /** How the graph was loaded, for the logs and health. */
  readonly loadedFrom: string;

  private constructor(store: TenantStore, name: string, info: NamespaceInfo, embedder: string, dims: number, graph: HnswIndex, nextSeq: number, snapshotSeq: number, loadedFrom: string) {
    this.#store = store;
    this.name = name;
    this.info = info;
    this.#embedder = embedder;
    this.#dims = dims;
    this.#graph = graph;
    this.#nextSeq = nextSeq;
    this.#snapshotSeq = snapshotSeq;
    this.loadedFrom = loadedFrom;
  }

  /**
   * Loads the namespace: its graph file when one is usable (then only the change-log entries after
   * it are queued), else an empty graph with every record queued (rebuilt from the stored vectors,
   * never re-embedded). Either way it answers queries at once; the graph catches up behind.
   */
  static async load(store: TenantStore, name: string, info: NamespaceInfo, embedder: string, dims: number): Promise<NamespaceIndex> {
    const log = logTree(info.number);
    let lastSeq = info.prunedThrough;
    for (const key of store.keys(log, { reverse: true })) {
      lastSeq = Math.max(lastSeq, seqOfKey(key));
      break;
    }
    // cleanupRatio 0: no cleanup inside delete(); the applier runs it in steps (see #apply).
    const params = { dims, M: info.M, efConstruction: info.efConstruction, efSearch: info.efSearch, cleanupRatio: 0 };
    const file = await store.readDerived(graphFileName(info.number));
    let loaded: { graph: HnswIndex; meta: GraphMeta } | undefined;
    let why: string;
    if ('payload' in file) {
      try {
        loaded = await parseGraphFile(file.payload);
        const { meta, graph } = loaded;
        if (meta.dims !== dims) why = `its vectors have ${meta.dims} dimensions, the embedder ${dims}`;
        else if (meta.seq < info.prunedThrough || meta.seq > lastSeq) why = `it covers change ${meta.seq}, the store's log is at ${info.prunedThrough}..${lastSeq}`;
        else if (graph.M !== info.M || graph.efConstruction !== info.efConstruction) why = 'its HNSW parameters differ from the namespace\'s';
        else why = '';
        if (why !== '') loaded = undefined;
      } catch (err) {
        loaded = undefined;
        why = `it is unreadable: ${(err as Error).message}`;
      }
    } else {
      why = file.missing;
    }

    // The store may have moved since the awaits above: everything below runs in one turn.
    if (loaded !== undefined) {
      const { graph, meta } = loaded;
      graph.efSearch = info.efSearch;
      graph.cleanupRatio = 0; // the applier cleans up, in steps (see #apply)
      const ns = new NamespaceIndex(store, name, info, embedder, dims, graph, lastSeq + 1, meta.seq, `graph file at change ${meta.seq}`);
      ns.#nodeIds = meta.ids.map((id) => id ?? undefined);
      for (let node = 0; node < ns.#nodeIds.length; node++) {
        const id = ns.#nodeIds[node];
        if (id !== undefined) ns.#byId.set(id, node);
      }
      for (const [key, value] of store.scan(log, { gt: seqKey(meta.seq) })) ns.#enqueue(seqOfKey(key), value.toString('utf8'));
      // A graph written under another embedder (or while records were stale): find the stale ones.
      if (meta.embedder !== embedder || !meta.clean) ns.#findStale();
      ns.#kick();
      return ns;
    }
    const ns = new NamespaceIndex(store, name, info, embedder, dims, new HnswIndex(params), lastSeq + 1, 0, `rebuilt from the records (no usable graph file: ${why})`);
    // Every record is pending, in key order, under the newest sequence: all of the log is covered
    // once they are applied.
    for (const key of store.keys(recordsTree(info.number))) ns.#enqueue(lastSeq, key.toString('utf8'));
    ns.#kick();
    return ns;
  }

  // ---- State -----------------------------------------------------------------------------------

  get liveCount(): number {
    return this.#store.count(recordsTree(this.info.number));
  }

  get pendingCount(): number {
    return this.#pending.size;
  }

  get staleIds(): ReadonlySet<string> {
    return this.#stale;
  }

  /**
   * Memory held: the graph, an estimate for the id maps (about 120 bytes an id), and what the
   * pending changes will take once in the graph (so the budget counts them before they land).
   */
  memoryBytes(): number {
    const perNode = this.#dims * 4 + (2 * this.info.M + 1) * 4 + 8 + 120;
    return this.#graph.memoryBytes() + this.#byId.size * 120 + this.#pending.size * perNode;
  }

  /**
   * Memory `count` more vectors may take at their peak: each its id map entry, its place in the
   * queue (the vector waits there until the graph takes it, as memoryBytes counts it), and the
   * vectors and level-0 links of the arena chunks they need (the graph allocates 1024 nodes at a
   * time, while the queue still holds what it takes). Measured against memoryBytes in
   * test/vector/vector-service.test.ts.
   */
  growthBytes(count: number): number {
    const perNode = this.#dims * 4 + (2 * this.info.M + 1) * 4;
    // The arena grows by whole chunks of 1024 nodes: the new chunks this write may need.
    const nodes = this.#graph.nodeLimit + this.#pending.size;
    const chunks = Math.ceil((nodes + count) / 1024) - Math.ceil(nodes / 1024);
    return count * (8 + 120) + count * (perNode + 8 + 120) + Math.max(chunks * 1024, count) * perNode;
  }

  get graph(): HnswIndex {
    return this.#graph;
  }

  /** The next change-log sequence; the caller writes its entry in the same batch. */
  takeSeq(): number {
    return this.#nextSeq++;
  }

  /** Records that a batch (already applied to the store) changed `id` under `seq`. */
  changed(seq: number, id: string): void {
    this.#enqueue(seq, id);
    this.#kick();
  }

  /**
   * Resolves once at most `limit` changes wait for the graph: writers wait here, so a burst of
   * upserts runs at the pace the graph takes them in rather than queueing without bound.
   */
  async pendingAtMost(limit: number): Promise<void> {
    while (this.#pending.size > limit && this.#applier !== undefined && !this.#closed) {
      await new Promise<void>((resolve) => this.#sliceWaiters.push(resolve));
    }
  }

  /** Resolves once every change queued so far is in the graph. */
  async settled(): Promise<void> {
    while (this.#applier !== undefined) await this.#applier;
  }

  close(): void {
    this.#closed = true;
  }

  #enqueue(seq: number, id: string): void {
    this.#pending.set(id, seq);
    this.#queue.push({ seq, id });
  }

  #kick(): void {
    if (this.#closed || this.#store.closed) return;
    if (this.#applier !== undefined || this.#queueHead >= this.#queue.length) return;
    this.#applier = this.#apply().finally(() => {
      this.#applier = undefined;
      // Changes queued after the last check of the loop below.
      this.#kick();
    });
  }

  async #apply(): Promise<void> {
    // Never inside the writer's turn: the write's caller goes on first.
    await nextTurn();
    const recs = recordsTree(this.info.number);
    while (!this.#closed && !this.#store.closed && this.#queueHead < this.#queue.length) {
      while (this.#paused !== undefined) await this.#paused;
      const until = performance.now() + APPLY_SLICE_MS;
      do {
        const entry = this.#queue[this.#queueHead++]!;
        // A newer change of the same id is queued: that one applies.
        if (this.#pending.get(entry.id) !== entry.seq) continue;
        this.#applyOne(entry.id, this.#store.get(recs, idKey(entry.id)));
        this.#pending.delete(entry.id);
      } while (this.#queueHead < this.#queue.length && performance.now() < until);
      if (this.#queueHead > 4096 && this.#queueHead * 2 > this.#queue.length) {
        this.#queue = this.#queue.slice(this.#queueHead);
        this.#queueHead = 0;
      }
      for (const wake of this.#sliceWaiters.splice(0)) wake();
      if (this.#needsCleanup()) await this.#cleanup();
      if (this.#queueHead < this.#queue.length) await nextTurn();
    }
    for (const wake of this.#sliceWaiters.splice(0)) wake();
    if (this.#queueHead >= this.#queue.length) {
      this.#queue = [];
      this.#queueHead = 0;
    }
  }

  /** Tombstones past 10% of the graph: time to repair their neighbours and free their slots. */
  #needsCleanup(): boolean {
    const g = this.#graph;
    return g.deletedCount > 0 && g.deletedCount > CLEANUP_RATIO * (g.liveCount + g.deletedCount);
  }

  /** HNSW cleanup a slice at a time, yielding between slices (and waiting out a graph file write). */
  async #cleanup(): Promise<void> {
    const steps = this.#graph.cleanupSteps();
    let until = performance.now() + APPLY_SLICE_MS;
    for (;;) {
      if (steps.next().done === true) return;
      if (performance.now() >= until) {
        await nextTurn();
        while (this.#paused !== undefined) await this.#paused;
        until = performance.now() + APPLY_SLICE_MS;
      }
    }
  }

  #applyOne(id: string, record: Buffer | undefined): void {
    const old = this.#byId.get(id);
    if (old !== undefined) {
      this.#graph.delete(old);
      this.#nodeIds[old] = undefined;
      this.#byId.delete(id);
    }
    this.#stale.delete(id);
    if (record === undefined) return;
    if (recordEmbedder(record) !== this.#embedder) {
      this.#stale.add(id);
      return;
    }
    const node = this.#graph.insert(decodeRecordVector(record));
    this.#nodeIds[node] = id;
    this.#byId.set(id, node);
  }

  #findStale(): void {
    for (const [key, value] of this.#store.scan(recordsTree(this.info.number))) {
      if (recordEmbedder(value) === this.#embedder) continue;
      const id = key.toString('utf8');
      this.#stale.add(id);
      // Out of the graph: its vector is in another space.
      const node = this.#byId.get(id);
      if (node !== undefined) {
        this.#graph.delete(node);
        this.#nodeIds[node] = undefined;
        this.#byId.delete(id);
      }
    }
  }

  // ---- Queries ---------------------------------------------------------------------------------

  /**
   * The topK records closest to the query vector (filtered by metadata), best first, with the
   * path taken. The graph path runs in one synchronous turn against the live store; exact scans
   * run on a snapshot and yield between chunks.
   */
  async query(q: NamespaceQuery): Promise<{ hits: ScoredId[]; path: QueryPath; reader: Pick<Snapshot, 'get'> | TenantStore; release: () => void }> {
    const live = this.#byId.size;
    if (q.exact || live + this.#pending.size <= Math.max(256, q.topK)) {
      const path = q.exact ? 'exact' : 'exact:small';
      // Without a filter, brute force runs over the graph's own vectors (the SIMD kernel), plus
      // the pending changes: one synchronous pass, ~50 ns a vector.
      if (q.filter === undefined) return { hits: this.#graphQuery(q, true), path, reader: this.#store, release: noop };
      return this.#exactScan(q, path);
    }
    if (q.filter !== undefined) {
      const estimate = this.#estimateMatches(q.filter);
      if (estimate < SELECTIVE_MATCHES) return this.#exactScan(q, 'exact:selective-filter');
      const hits = this.#graphQuery(q);
      // Fewer than topK through the graph although more records may match: scan instead.
      if (hits.length < q.topK && estimate >= hits.length + 1) return this.#exactScan(q, 'exact:selective-filter');
      return { hits, path: 'hnsw+filter', reader: this.#store, release: noop };
    }
    return { hits: this.#graphQuery(q), path: 'hnsw', reader: this.#store, release: noop };
  }

  #graphQuery(q: NamespaceQuery, exact = false): ScoredId[] {
    const recs = recordsTree(this.info.number);
    const store = this.#store;
    const nodeIds = this.#nodeIds;
    const pending = this.#pending;
    const filter = q.filter;
    let memo: Map<number, boolean> | undefined;
    const accept = (node: number): boolean => {
      const id = nodeIds[node];
      if (id === undefined || pending.has(id)) return false;
      if (filter === undefined) return true;
      memo ??= new Map();
      let ok = memo.get(node);
      if (ok === undefined) {
        const record = store.get(recs, idKey(id));
        ok = record !== undefined && filter.test(recordMetadata(record) ?? {});
        memo.set(node, ok);
      }
      return ok;
    };
    const needAccept = filter !== undefined || pending.size > 0;
    const found: HnswHit[] = exact
      ? this.#graph.exact(q.vector, q.topK, needAccept ? accept : undefined)
      : this.#graph.search(q.vector, q.topK, needAccept ? { ef: q.ef, accept } : { ef: q.ef });
    const hits: ScoredId[] = found.map((h) => ({ id: nodeIds[h.node]!, score: h.score }));
    if (pending.size === 0) return hits;
    // Pending changes: score what the store holds for them now.
    for (const id of pending.keys()) {
      const record = store.get(recs, idKey(id));
      if (record === undefined || recordEmbedder(record) !== this.#embedder) continue;
      if (filter !== undefined && !filter.test(recordMetadata(record) ?? {})) continue;
      hits.push({ id, score: recordDot(record, q.vector) });
    }
    hits.sort(byScore);
    if (hits.length > q.topK) hits.length = q.topK;
    return hits;
  }

  /** Matching records, estimated from a sample of graph nodes (pending ones counted as matching). */
  #estimateMatches(filter: CompiledFilter): number {
    const live = this.#byId.size;
    if (live === 0) return this.#pending.size;
    const recs = recordsTree(this.info.number);
    const n = this.#nodeIds.length;
    let sampled = 0;
    let matched = 0;
    // Deterministic stride over the node space: no randomness in query answers' paths.
    const step = Math.max(1, Math.floor(n / SAMPLE));
    for (let node = 0; node < n && sampled < SAMPLE; node += step) {
      const id = this.#nodeIds[node];
      if (id === undefined) continue;
      const record = this.#store.get(recs, idKey(id));
      if (record === undefined) continue;
      sampled++;
      if (filter.test(recordMetadata(record) ?? {})) matched++;
    }
    if (sampled === 0) return this.#pending.size;
    // Rounded up: one match in the sample stands for at least live/sampled records.
    return Math.ceil((matched / sampled) * live) + this.#pending.size;
  }

  async #exactScan(q: NamespaceQuery, path: QueryPath): Promise<{ hits: ScoredId[]; path: QueryPath; reader: Snapshot; release: () => void }> {
    const tree = recordsTree(this.info.number);
    const snapshot = this.#store.snapshot([tree]);
    try {
      const top: ScoredId[] = [];
      let worst = -Infinity;
      let n = 0;
      for (const [key, record] of snapshot.scan(tree)) {
        if (recordEmbedder(record) === this.#embedder && (q.filter === undefined || q.filter.test(recordMetadata(record) ?? {}))) {
          const score = recordDot(record, q.vector);
          if (top.length < q.topK || score > worst) {
            insertSorted(top, { id: key.toString('utf8'), score }, q.topK);
            worst = top.length === q.topK ? top[top.length - 1]!.score : -Infinity;
          }
        }
        if (++n % SCAN_CHUNK === 0) await nextTurn();
      }
      return { hits: top, path, reader: snapshot, release: () => snapshot.close() };
    } catch (err) {
      snapshot.close();
      throw err;
    }
  }

  // ---- Graph file --------------------------------------------------------------------------------

  /** Changes since the newest graph file. */
  get changesSinceSnapshot(): number {
    return this.#nextSeq - 1 - this.#snapshotSeq;
  }

  /**
   * Writes the graph to its file once it reflects every change so far and those changes are
   * durable, then deletes the log entries it covers. Nothing is written while changes are
   * still queued (the next checkpoint or close tries again).
   */
  persist(): Promise<void> {
    this.#persisting ??= this.#persist().finally(() => (this.#persisting = undefined));
    return this.#persisting;
  }

  async #persist(): Promise<void> {
    const store = this.#store;
    if (this.#closed || store.closed || this.#queueHead < this.#queue.length || this.#pending.size > 0) return;
    const seq = this.#nextSeq - 1;
    if (seq <= this.#snapshotSeq) return;
    const meta: GraphMeta = {
      v: 1,
      seq,
      embedder: this.#embedder,
      dims: this.#dims,
      clean: this.#stale.size === 0,
      ids: this.#nodeIds.map((id) => id ?? null),
    };
    const metaBytes = packr.pack(meta);
    const head = Buffer.allocUnsafe(4);
    head.writeUInt32LE(metaBytes.length);
    // Everything the file reflects was applied by now: lsn covers it.
    const lsn = store.lsn;
    // A large graph takes hundreds of milliseconds to copy and a copy as large as itself to hold:
    // it is serialized in steps and streamed to the file as it goes, yielding between steps,
    // with the applier paused so the graph stays as `meta` describes it. Queries go on meanwhile.
    let release!: () => void;
    this.#paused = new Promise<void>((resolve) => (release = resolve));
    const file = await store.openDerived(graphFileName(this.info.number));
    try {
      await file.write(head);
      await file.write(metaBytes);
      const steps = this.#graph.serializeSteps();
      for (;;) {
        const step = steps.next();
        for (const chunk of step.value) await file.write(chunk);
        if (step.done === true) break;
        if (this.#closed || store.closed) throw new Error('closed while writing the graph file');
      }
      // The file may only cover changes a crash cannot take away.
      await store.whenDurable(lsn);
      await file.commit();
    } catch (err) {
      await file.abort();
      throw err;
    } finally {
      this.#paused = undefined;
      release();
    }
    this.#snapshotSeq = seq;
    // The log entries the file covers are no longer needed.
    const log = logTree(this.info.number);
    const ops: Array<{ op: 'delete'; tree: string; key: Uint8Array }> = [];
    for (const key of store.keys(log, { lte: seqKey(seq) })) ops.push({ op: 'delete', tree: log, key });
    this.info = { ...this.info, prunedThrough: Math.max(this.info.prunedThrough, seq) };
    await store.write([...ops, namespaceOp(this.name, this.info)]);
  }
}

/** Parses a graph file, yielding to the event loop between steps (loading 100k vectors takes ~300 ms). */
async function parseGraphFile(payload: Buffer): Promise<{ graph: HnswIndex; meta: GraphMeta }> {
  if (payload.length < 4) throw new Error('graph file too short');
  const metaLength = payload.readUInt32LE(0);
  if (4 + metaLength > payload.length) throw new Error('graph file meta overruns the file');
  const meta = packr.unpack(payload.subarray(4, 4 + metaLength)) as GraphMeta;
  if (meta?.v !== 1 || !Array.isArray(meta.ids) || typeof meta.seq !== 'number') throw new Error('graph file meta is malformed');
  const steps = HnswIndex.deserializeSteps([payload.subarray(4 + metaLength)]);
  let until = performance.now() + APPLY_SLICE_MS;
  for (;;) {
    const step = steps.next();
    if (step.done === true) return { graph: step.value, meta };
    if (performance.now() >= until) {
      await nextTurn();
      until = performance.now() + APPLY_SLICE_MS;
    }
  }
}

function byScore(a: ScoredId, b: ScoredId): number {
  return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

function insertSorted(top: ScoredId[], hit: ScoredId, k: number): void {
  let i = top.length;
  while (i > 0 && byScore(top[i - 1]!, hit) > 0) i--;
  top.splice(i, 0, hit);
  if (top.length > k) top.length = k;
}

function noop(): void {}
