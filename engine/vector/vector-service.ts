/**
 * The vector store over tenants' stores: records with text, metadata and an embedding, one HNSW
 * graph per namespace, filtered search, deletes by id, filter or prefix, listing, and the
 * background work (graph snapshots at checkpoints, re-embedding after an embedder change).
 *
 * One VectorService per process holds the embedder; per-tenant state hangs off each open
 * TenantStore and goes when the store closes (after a last graph snapshot).
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import { fail } from '../errors.js';
import { compileFilter, fromJson, toJson, validateFields, type CompiledFilter } from '../docs/index.js';
import type { BatchOp, Snapshot, TenantStore } from '../tenant/index.js';
import {
  createNamespaceOps,
  hnswSettings,
  listNamespaces,
  namespaceOp,
  readNamespace,
  validateNamespace,
  type HnswSettings,
} from './vector-catalog.js';
import { decodeRecord, encodeRecord, idKey, metadataBytes, recordMetadata, logTree, recordsTree, seqKey, type NamespaceInfo } from './vector-codec.js';
import { VECTOR_LIMITS } from './vector-limits.js';
import { NamespaceIndex, type QueryPath } from './vector-namespace.js';

/** What the vector store needs of an embedder (engine/vector/embedder provides two). */
export interface TextEmbedder {
  readonly id: string;
  readonly dims: number;
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

export interface VectorServiceOptions {
  embedder: TextEmbedder;
  /** Called when background work fails (re-embedding, graph snapshots); never throws. */
  onError?: (err: unknown, what: string) => void;
  /** A graph snapshot is written at a checkpoint once this share of the namespace changed... */
  snapshotChangeRatio?: number;
  /** ...and at least this many changes. */
  snapshotMinChanges?: number;
  /** Memory all loaded graphs may hold (default 1 GiB); idle namespaces are unloaded to make room. */
  memoryBytes?: number;
}

export interface VectorInput {
  id: unknown;
  text: unknown;
  metadata?: unknown;
}

export interface QueryInput {
  query?: unknown;
  vector?: unknown;
  topK?: unknown;
  filter?: unknown;
  namespace?: unknown;
  includeText?: unknown;
  includeMetadata?: unknown;
  exact?: unknown;
  efSearch?: unknown;
}

export interface VectorMatch {
  id: string;
  score: number;
  text?: string;
  metadata?: unknown;
}

export interface DeleteInput {
  ids?: unknown;
  filter?: unknown;
  prefix?: unknown;
  namespace?: unknown;
}

interface TenantVectors {
  namespaces: Map<string, Promise<NamespaceIndex>>;
  reembedding: Set<string>;
  /** Namespaces unloaded whose last graph file is still being written: a reload waits for it. */
  unloading: Map<string, Promise<void>>;
}

const DELETE_CHUNK = 512;
/** Writers wait while more changes than this wait for a namespace's graph (queries score those directly). */
const MAX_PENDING = 4096;
const REEMBED_BATCH = 32;

function text(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.trim() === '') fail('VALIDATION_FAILED', `${field} must be a non-empty string`, { field });
  if (Buffer.byteLength(value) > VECTOR_LIMITS.maxTextBytes) fail('VALIDATION_FAILED', `${field} must be at most ${VECTOR_LIMITS.maxTextBytes} bytes`, { field, limit: VECTOR_LIMITS.maxTextBytes });
  if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed()) fail('VALIDATION_FAILED', `${field} must not contain lone surrogates`, { field });
  return value;
}

/** @throws VALIDATION_FAILED */
export function validateVectorId(value: unknown, field = 'id'): string {
  if (typeof value !== 'string' || value.length === 0) fail('VALIDATION_FAILED', `${field} must be a non-empty string`, { field });
  if (Buffer.byteLength(value) > VECTOR_LIMITS.maxIdBytes) fail('VALIDATION_FAILED', `${field} must be at most ${VECTOR_LIMITS.maxIdBytes} bytes`, { field, limit: VECTOR_LIMITS.maxIdBytes });
  if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed()) fail('VALIDATION_FAILED', `${field} must not contain lone surrogates`, { field });
  return value;
}

/** A "__proto__" key anywhere in a value (the record codec cannot keep it as plain data). */
function protoKeyPath(value: unknown, path: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = protoKeyPath(value[i], `${path}.${i}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return `${path}.${key}`;
    const found = protoKeyPath((value as Record<string, unknown>)[key], `${path}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

function metadataOf(value: unknown, field: string): Record<string, unknown> | undefined {
  if (value === undefined || value === null) return undefined;
  const doc = fromJson(value, { code: 'VALIDATION_FAILED' });
  try {
    validateFields(doc, VECTOR_LIMITS.maxMetadataDepth);
  } catch (err) {
    fail('VALIDATION_FAILED', `${field} ${(err as Error).message}`, { field });
  }
  const proto = protoKeyPath(doc, field);
  if (proto !== undefined) fail('VALIDATION_FAILED', `${field}: a field may not be named __proto__ (at ${proto})`, { field });
  return doc as Record<string, unknown>;
}

function bool(value: unknown, field: string, fallback: boolean): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'boolean') fail('VALIDATION_FAILED', `${field} must be a boolean`, { field });
  return value;
}

function integer(value: unknown, field: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) fail('VALIDATION_FAILED', `${field} must be an integer between ${min} and ${max}`, { field });
  return value;
}

function filterOf(value: unknown): CompiledFilter | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) fail('QUERY_ERROR', 'filter must be an object (an MQL filter over metadata)', { field: 'filter' });
  if (Object.keys(value).length === 0) return undefined;
  return compileFilter(value);
}

function normalised(values: readonly number[], dims: number): Float32Array {
  const v = new Float32Array(dims);
  let sum = 0;
  for (let i = 0; i < dims; i++) {
    const x = values[i]!;
    v[i] = x;
    sum += x * x;
  }
  if (sum === 0) fail('VALIDATION_FAILED', 'vector must not be all zeros', { field: 'vector' });
  const scale = 1 / Math.sqrt(sum);
  for (let i = 0; i < dims; i++) v[i]! *= scale;
  return v;
}

async function durable(store: TenantStore): Promise<void> {
  await store.whenDurable(store.lsn);
}

/** Queued vectors an unload puts in the graph before writing its file (more: the log covers them). */
const UNLOAD_SETTLE_MAX = 10_000;

export class VectorService {
  readonly embedder: TextEmbedder;
  readonly #tenants = new WeakMap<TenantStore, TenantVectors>();
  readonly #onError: (err: unknown, what: string) => void;
  readonly #ratio: number;
  readonly #minChanges: number;
  readonly #memoryBytes: number;
  /** Every loaded namespace of every open store, least recently used first. */
  readonly #loaded = new Map<NamespaceIndex, { store: TenantStore }>();

  constructor(options: VectorServiceOptions) {
    this.embedder = options.embedder;
    this.#memoryBytes = options.memoryBytes ?? 1024 * 1024 * 1024;
    this.#onError = options.onError ?? (() => undefined);
    this.#ratio = options.snapshotChangeRatio ?? 0.1;
    this.#minChanges = options.snapshotMinChanges ?? 1000;
  }

  // ---- Namespaces ------------------------------------------------------------------------------

  #tenant(store: TenantStore): TenantVectors {
    let t = this.#tenants.get(store);
    if (t === undefined) {
      const tenant: TenantVectors = { namespaces: new Map(), reembedding: new Set(), unloading: new Map() };
      t = tenant;
      this.#tenants.set(store, tenant);
      store.onCheckpoint(() => {
        for (const loading of tenant.namespaces.values()) {
          void loading
            .then((ns) => {
              if (ns.changesSinceSnapshot >= Math.max(this.#minChanges, this.#ratio * ns.graph.liveCount)) return ns.persist();
              return undefined;
            })
            .catch((err: unknown) => this.#onError(err, 'vector graph snapshot'));
        }
      });
      store.onClose(async () => {
        await Promise.all(tenant.unloading.values());
        for (const loading of tenant.namespaces.values()) {
          const ns = await loading.catch(() => undefined);
          if (ns === undefined) continue;
          // A short queue is worth applying so the file covers it; a long one is caught up
          // from the log on the next open instead of holding the close up.
          if (ns.pendingCount <= UNLOAD_SETTLE_MAX) {
            await ns.settled();
            await ns.persist().catch((err: unknown) => this.#onError(err, 'vector graph snapshot'));
          }
          ns.close();
          this.#loaded.delete(ns);
        }
        tenant.namespaces.clear();
      });
    }
    return t;
  }

  /** The loaded namespace, or undefined when it does not exist (and `create` is false). */
  async #namespace(store: TenantStore, name: string, create: HnswSettings | false): Promise<NamespaceIndex | undefined> {
    const tenant = this.#tenant(store);
    const loading = tenant.namespaces.get(name);
    if (loading !== undefined) return loading;
    // Its previous instance is still writing its graph file (and pruning the log that file
    // covers): loading meanwhile could read the old file and miss the pruned changes.
    const unloading = tenant.unloading.get(name);
    if (unloading !== undefined) {
      await unloading;
      return this.#namespace(store, name, create);
    }
    let info = readNamespace(store, name);
    if (info === undefined) {
      if (create === false) return undefined;
      const created = createNamespaceOps(store, name, hnswSettings(create));
      info = created.info;
      const write = store.write(created.ops);
      const load = write.then(() => this.#track(store, NamespaceIndex.load(store, name, created.info, this.embedder.id, this.embedder.dims)));
      tenant.namespaces.set(name, load);
      load.catch(() => tenant.namespaces.delete(name));
      return load;
    }
    const load = this.#track(store, NamespaceIndex.load(store, name, info, this.embedder.id, this.embedder.dims));
    tenant.namespaces.set(name, load);
    load.then(
      (ns) => {
        if (ns.staleIds.size > 0) this.#startReembed(store, ns);
      },
      () => tenant.namespaces.delete(name),
    );
    return load;
  }

  async #track(store: TenantStore, loading: Promise<NamespaceIndex>): Promise<NamespaceIndex> {
    const ns = await loading;
    this.#loaded.set(ns, { store });
    // Every load is within the budget, a read's as much as a write's: the least recently used
    // other namespaces make room. A read is never refused for it (a namespace larger than the
    // budget on its own stays loaded while used; writes to it are refused, see #makeRoom).
    this.#evict(ns, 0);
    return ns;
  }

  /** Marks a namespace as just used (the memory budget unloads the least recently used). */
  #touch(ns: NamespaceIndex): void {
    const entry = this.#loaded.get(ns);
    if (entry === undefined) return;
    this.#loaded.delete(ns);
    this.#loaded.set(ns, entry);
  }

  /** Bytes the loaded graphs hold. */
  get memoryUsed(): number {
    let sum = 0;
    for (const ns of this.#loaded.keys()) sum += ns.memoryBytes();
    return sum;
  }

  /**
   * Makes room for `bytes` more graph memory: unloads the least recently used other namespaces
   * (they reload from their graph files on next use).
   * @throws QUOTA_EXCEEDED when even that is not enough
   */
  #makeRoom(keep: NamespaceIndex, bytes: number): void {
    const used = this.#evict(keep, bytes);
    if (used + bytes > this.#memoryBytes) {
      fail(
        'QUOTA_EXCEEDED',
        `the vector indexes' memory budget of ${this.#memoryBytes} bytes (TETRA_VECTOR_MEMORY_BYTES) is full: ${used} bytes in use, this write needs about ${bytes} more`,
        { memoryBytes: this.#memoryBytes, usedBytes: used },
      );
    }
  }

  /**
   * Unloads the least recently used namespaces other than `keep` until the loaded graphs and
   * `bytes` more fit in the budget, or only `keep` is left; returns the bytes then in use.
   */
  #evict(keep: NamespaceIndex, bytes: number): number {
    let used = this.memoryUsed;
    if (used + bytes <= this.#memoryBytes) return used;
    for (const [ns, { store }] of [...this.#loaded]) {
      if (used + bytes <= this.#memoryBytes) break;
      if (ns === keep) continue;
      used -= ns.memoryBytes();
      this.#unload(store, ns);
    }
    return used;
  }

  #unload(store: TenantStore, ns: NamespaceIndex): void {
    this.#loaded.delete(ns);
    const tenant = this.#tenants.get(store);
    // Written in the background; the log covers whatever it does not. Vectors still queued are
    // put in the graph first (as at close): a file written only once the queue is empty, so
    // without this a namespace unloaded right after a write had none, and was rebuilt from all
    // its records at its next use.
    const done = (ns.pendingCount <= UNLOAD_SETTLE_MAX ? ns.settled() : Promise.resolve())
      .then(() => ns.persist())
      .catch((err: unknown) => this.#onError(err, 'vector graph snapshot'))
      .finally(() => {
        ns.close();
        if (tenant?.unloading.get(ns.name) === done) tenant.unloading.delete(ns.name);
      });
    if (tenant !== undefined) {
      tenant.namespaces.delete(ns.name);
      tenant.unloading.set(ns.name, done);
    }
  }

  /**
   * Namespaces with their record counts and HNSW parameters; pending and stale counts for the
   * ones whose graph is loaded (listing does not load graphs).
   */
  async namespaces(store: TenantStore): Promise<Array<{ namespace: string; count: number; M: number; efConstruction: number; efSearch: number; loaded: boolean; pending: number; stale: number }>> {
    const tenant = this.#tenant(store);
    const out = [];
    for (const { name, info } of listNamespaces(store)) {
      const ns = await tenant.namespaces.get(name)?.catch(() => undefined);
      out.push({
        namespace: name,
        count: store.count(recordsTree(info.number)),
        M: info.M,
        efConstruction: info.efConstruction,
        efSearch: ns?.info.efSearch ?? info.efSearch,
        loaded: ns !== undefined,
        pending: ns?.pendingCount ?? 0,
        stale: ns?.staleIds.size ?? 0,
      });
    }
    await durable(store);
    return out;
  }

  /**
   * Sets a namespace's HNSW parameters, creating it if needed. M and efConstruction shape the
   * graph: they can change only while the namespace is empty; efSearch any time.
   * @throws VALIDATION_FAILED for bad values; CONFLICT for M/efConstruction on a non-empty namespace
   */
  async configure(store: TenantStore, input: HnswSettings & { namespace?: unknown }): Promise<{ namespace: string; M: number; efConstruction: number; efSearch: number }> {
    const name = validateNamespace(input.namespace);
    hnswSettings(input); // validate before anything is created
    const ns = (await this.#namespace(store, name, input))!;
    const wanted = hnswSettings(input, ns.info);
    if (wanted.M !== ns.info.M || wanted.efConstruction !== ns.info.efConstruction) {
      if (ns.liveCount > 0 || ns.graph.liveCount > 0) {
        fail('CONFLICT', `M and efConstruction of namespace ${JSON.stringify(name)} can change only while it is empty (it holds ${ns.liveCount} records)`);
      }
      // Empty: a fresh graph with the new shape.
      await this.#reset(store, name, { ...ns.info, ...wanted });
    } else if (wanted.efSearch !== ns.info.efSearch) {
      ns.info = { ...ns.info, efSearch: wanted.efSearch };
      ns.graph.efSearch = wanted.efSearch;
      await store.write([namespaceOp(name, ns.info)]);
    }
    const now = (await this.#namespace(store, name, false))!;
    return { namespace: name, M: now.info.M, efConstruction: now.info.efConstruction, efSearch: now.info.efSearch };
  }

  async #reset(store: TenantStore, name: string, info: NamespaceInfo): Promise<void> {
    const tenant = this.#tenant(store);
    const old = await tenant.namespaces.get(name);
    old?.close();
    tenant.namespaces.delete(name);
    await store.write([namespaceOp(name, info)]);
    if (old !== undefined) this.#loaded.delete(old);
    tenant.namespaces.set(name, this.#track(store, NamespaceIndex.load(store, name, info, this.embedder.id, this.embedder.dims)));
  }

  // ---- Writes ----------------------------------------------------------------------------------

  /**
   * Embeds and stores records (replacing any with the same id), all in one atomic batch; resolves
   * once durable. Later duplicates of an id in one call win. `many`: the records came as the
   * `vectors` array of upsertMany, and errors name them `vectors[i]` (default: when there are
   * several).
   * @throws VALIDATION_FAILED for bad input (nothing written)
   */
  async upsert(store: TenantStore, items: readonly VectorInput[], namespace: unknown, quota?: (bytes: number) => void, many = items.length > 1): Promise<{ upserted: number }> {
    const name = validateNamespace(namespace);
    if (!Array.isArray(items) || items.length === 0) fail('VALIDATION_FAILED', 'vectors must be a non-empty array', { field: 'vectors' });
    if (items.length > VECTOR_LIMITS.maxUpsertMany) fail('VALIDATION_FAILED', `at most ${VECTOR_LIMITS.maxUpsertMany} vectors per request`, { field: 'vectors', limit: VECTOR_LIMITS.maxUpsertMany });
    const checked = items.map((item, i) => {
      const at = many ? `vectors[${i}].` : '';
      if (item === null || typeof item !== 'object' || Array.isArray(item)) fail('VALIDATION_FAILED', `${many ? `vectors[${i}]` : 'the body'} must be an object`);
      return { id: validateVectorId(item.id, `${at}id`), text: text(item.text, `${at}text`), metadata: metadataOf(item.metadata, `${at}metadata`) };
    });
    checked.forEach((c, i) => {
      if (c.metadata !== undefined && metadataBytes(c.metadata) > VECTOR_LIMITS.maxMetadataBytes) {
        fail('VALIDATION_FAILED', `${many ? `vectors[${i}].` : ''}metadata must be at most ${VECTOR_LIMITS.maxMetadataBytes} bytes encoded`, { field: `${many ? `vectors[${i}].` : ''}metadata`, limit: VECTOR_LIMITS.maxMetadataBytes });
      }
    });
    const vectors = await this.embedder.embed(checked.map((c) => c.text));
    const ns = (await this.#namespace(store, name, {}))!;
    this.#touch(ns);
    this.#makeRoom(ns, ns.growthBytes(checked.length));
    // One turn from here to the write: the sequence numbers follow the batch order.
    const recs = recordsTree(ns.info.number);
    const log = logTree(ns.info.number);
    const ops: BatchOp[] = [];
    const seqs: Array<{ seq: number; id: string }> = [];
    let bytes = 0;
    for (let i = 0; i < checked.length; i++) {
      const c = checked[i]!;
      const value = encodeRecord(this.embedder.id, c.metadata, c.text, vectors[i]!);
      const key = idKey(c.id);
      const seq = ns.takeSeq();
      ops.push({ op: 'put', tree: recs, key, value }, { op: 'put', tree: log, key: seqKey(seq), value: key });
      seqs.push({ seq, id: c.id });
      bytes += key.length + value.length + 16;
    }
    quota?.(bytes);
    const written = store.write(ops);
    for (const s of seqs) ns.changed(s.seq, s.id);
    await written;
    await ns.pendingAtMost(MAX_PENDING);
    return { upserted: checked.length };
  }

  /** Deletes records by id; resolves once durable. */
  async deleteIds(store: TenantStore, ids: readonly string[], namespace: string): Promise<{ deleted: number }> {
    const ns = await this.#namespace(store, namespace, false);
    if (ns === undefined) return { deleted: 0 };
    const recs = recordsTree(ns.info.number);
    const log = logTree(ns.info.number);
    const ops: BatchOp[] = [];
    const changed: Array<{ seq: number; id: string }> = [];
    for (const id of new Set(ids)) {
      const key = idKey(id);
      if (!store.has(recs, key)) continue;
      const seq = ns.takeSeq();
      ops.push({ op: 'delete', tree: recs, key }, { op: 'put', tree: log, key: seqKey(seq), value: key });
      changed.push({ seq, id });
    }
    if (ops.length === 0) {
      await durable(store);
      return { deleted: 0 };
    }
    const written = store.write(ops);
    for (const c of changed) ns.changed(c.seq, c.id);
    await written;
    return { deleted: changed.length };
  }

  /**
   * Deletes by ids, by metadata filter or by id prefix (exactly one). A filter or prefix delete
   * finds candidates on a snapshot, then deletes them a chunk per turn, re-checking each against
   * the live record (as MongoDB's deleteMany: every record atomically, not the whole operation).
   * @throws VALIDATION_FAILED / QUERY_ERROR for bad input
   */
  async delete(store: TenantStore, input: DeleteInput): Promise<{ deleted: number }> {
    const name = validateNamespace(input.namespace);
    const given = (['ids', 'filter', 'prefix'] as const).filter((k) => input[k] !== undefined && input[k] !== null);
    if (given.length !== 1) fail('VALIDATION_FAILED', 'give exactly one of ids, filter or prefix');
    if (input.ids !== undefined && input.ids !== null) {
      if (!Array.isArray(input.ids) || input.ids.length === 0) fail('VALIDATION_FAILED', 'ids must be a non-empty array of strings', { field: 'ids' });
      if (input.ids.length > VECTOR_LIMITS.maxDeleteIds) fail('VALIDATION_FAILED', `at most ${VECTOR_LIMITS.maxDeleteIds} ids per request`, { field: 'ids' });
      const ids = input.ids.map((id, i) => validateVectorId(id, `ids[${i}]`));
      return this.deleteIds(store, ids, name);
    }
    let filter: CompiledFilter | undefined;
    let prefix: Buffer | undefined;
    if (input.filter !== undefined && input.filter !== null) {
      if (typeof input.filter !== 'object' || Array.isArray(input.filter)) fail('QUERY_ERROR', 'filter must be an object (an MQL filter over metadata)', { field: 'filter' });
      filter = compileFilter(input.filter);
    } else {
      if (typeof input.prefix !== 'string' || input.prefix === '') fail('VALIDATION_FAILED', 'prefix must be a non-empty string', { field: 'prefix' });
      prefix = idKey(validateVectorId(input.prefix, 'prefix'));
    }
    const ns = await this.#namespace(store, name, false);
    if (ns === undefined) return { deleted: 0 };
    const recs = recordsTree(ns.info.number);
    const candidates: string[] = [];
    const snapshot = store.snapshot([recs]);
    try {
      let n = 0;
      for (const [key, value] of snapshot.scan(recs, prefix === undefined ? {} : { prefix })) {
        if (filter === undefined || filter.test(recordMetadata(value) ?? {})) candidates.push(key.toString('utf8'));
        if (++n % 2048 === 0) await nextTurn();
      }
    } finally {
      snapshot.close();
    }
    let deleted = 0;
    const writes: Array<Promise<unknown>> = [];
    for (let i = 0; i < candidates.length; i += DELETE_CHUNK) {
      const ops: BatchOp[] = [];
      const changed: Array<{ seq: number; id: string }> = [];
      for (const id of candidates.slice(i, i + DELETE_CHUNK)) {
        const key = idKey(id);
        const live = store.get(recs, key);
        if (live === undefined) continue;
        if (filter !== undefined && !filter.test(recordMetadata(live) ?? {})) continue;
        const seq = ns.takeSeq();
        ops.push({ op: 'delete', tree: recs, key }, { op: 'put', tree: logTree(ns.info.number), key: seqKey(seq), value: key });
        changed.push({ seq, id });
      }
      if (ops.length > 0) {
        writes.push(store.write(ops));
        for (const c of changed) ns.changed(c.seq, c.id);
        deleted += changed.length;
      }
      await nextTurn();
    }
    await Promise.all(writes);
    await durable(store);
    return { deleted };
  }

  // ---- Reads -----------------------------------------------------------------------------------

  /**
   * The topK records most similar to `query` (text, embedded) or `vector` (given), best first,
   * score = cosine similarity. @throws VALIDATION_FAILED / QUERY_ERROR for bad input
   */
  async query(store: TenantStore, input: QueryInput): Promise<{ matches: VectorMatch[]; path: QueryPath | 'empty' }> {
    const name = validateNamespace(input.namespace);
    const topK = integer(input.topK, 'topK', 1, VECTOR_LIMITS.maxTopK, VECTOR_LIMITS.defaultTopK);
    const includeText = bool(input.includeText, 'includeText', true);
    const includeMetadata = bool(input.includeMetadata, 'includeMetadata', true);
    const exact = bool(input.exact, 'exact', false);
    const ef = input.efSearch === undefined || input.efSearch === null ? undefined : integer(input.efSearch, 'efSearch', 0, 4000, 0);
    const filter = filterOf(input.filter);
    let vector: Float32Array;
    if (input.vector !== undefined && input.vector !== null) {
      if (input.query !== undefined && input.query !== null) fail('VALIDATION_FAILED', 'give query or vector, not both');
      const dims = this.embedder.dims;
      if (!Array.isArray(input.vector) || input.vector.length !== dims || !input.vector.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        fail('VALIDATION_FAILED', `vector must be an array of ${dims} finite numbers`, { field: 'vector' });
      }
      vector = normalised(input.vector as number[], dims);
    } else {
      vector = (await this.embedder.embed([text(input.query, 'query')]))[0]!;
    }
    const ns = await this.#namespace(store, name, false);
    if (ns === undefined) {
      await durable(store);
      return { matches: [], path: 'empty' };
    }
    this.#touch(ns);
    const answer = await ns.query({ vector, topK, filter, exact, ef: ef === 0 ? undefined : ef });
    let matches: VectorMatch[];
    try {
      const recs = recordsTree(ns.info.number);
      const reader = answer.reader as Pick<Snapshot, 'get'>;
      matches = [];
      for (const hit of answer.hits) {
        const bytes = reader.get(recs, idKey(hit.id));
        if (bytes === undefined) continue;
        const m: VectorMatch = { id: hit.id, score: hit.score };
        if (includeText || includeMetadata) {
          const record = decodeRecord(bytes);
          if (includeText) m.text = record.text;
          if (includeMetadata) m.metadata = record.metadata === undefined ? {} : toJson(record.metadata);
        }
        matches.push(m);
      }
    } finally {
      answer.release();
    }
    await durable(store);
    return { matches, path: answer.path };
  }

  /** One record. @throws NOT_FOUND */
  async get(store: TenantStore, id: string, namespace: unknown): Promise<{ id: string; namespace: string; text: string; metadata: unknown; embedder: string }> {
    const name = validateNamespace(namespace);
    validateVectorId(id);
    const info = readNamespace(store, name);
    const bytes = info === undefined ? undefined : store.get(recordsTree(info.number), idKey(id));
    if (bytes === undefined) fail('NOT_FOUND', `no vector record ${JSON.stringify(id)} in namespace ${JSON.stringify(name)}`);
    const record = decodeRecord(bytes);
    return { id, namespace: name, text: record.text, metadata: record.metadata === undefined ? {} : toJson(record.metadata), embedder: record.embedder };
  }

  /** Record ids in id order, from after `cursor`, optionally starting with `prefix`. */
  list(store: TenantStore, input: { prefix?: unknown; cursor?: unknown; limit?: unknown; namespace?: unknown }): { ids: string[]; cursor: string | null } {
    const name = validateNamespace(input.namespace);
    const limit = integer(input.limit, 'limit', 1, VECTOR_LIMITS.maxListLimit, VECTOR_LIMITS.defaultListLimit);
    const prefix = input.prefix === undefined || input.prefix === '' ? undefined : validateVectorId(input.prefix, 'prefix');
    let after: Buffer | undefined;
    if (input.cursor !== undefined && input.cursor !== '') {
      if (typeof input.cursor !== 'string') fail('VALIDATION_FAILED', 'cursor must be a string from a previous listing', { field: 'cursor' });
      after = Buffer.from(input.cursor, 'base64url');
      if (after.length === 0 || after.toString('base64url') !== input.cursor) fail('VALIDATION_FAILED', 'cursor is not one this service returned', { field: 'cursor' });
    }
    const info = readNamespace(store, name);
    if (info === undefined) return { ids: [], cursor: null };
    const ids: string[] = [];
    let last: Buffer | undefined;
    let more = false;
    const range = { ...(prefix === undefined ? {} : { prefix: idKey(prefix) }), ...(after === undefined ? {} : { gt: after }) };
    for (const key of store.keys(recordsTree(info.number), range)) {
      if (ids.length === limit) {
        more = true;
        break;
      }
      ids.push(key.toString('utf8'));
      last = key;
    }
    return { ids, cursor: more && last !== undefined ? last.toString('base64url') : null };
  }

  // ---- Re-embedding ------------------------------------------------------------------------------

  #startReembed(store: TenantStore, ns: NamespaceIndex): void {
    const tenant = this.#tenant(store);
    if (tenant.reembedding.has(ns.name)) return;
    tenant.reembedding.add(ns.name);
    void this.#reembed(store, ns)
      .catch((err: unknown) => {
        if (!store.closed) this.#onError(err, `re-embedding namespace ${JSON.stringify(ns.name)}`);
      })
      .finally(() => tenant.reembedding.delete(ns.name));
  }

  /** Re-embeds the texts of records another embedder made, a batch at a time. */
  async #reembed(store: TenantStore, ns: NamespaceIndex): Promise<void> {
    const recs = recordsTree(ns.info.number);
    while (!store.closed && ns.staleIds.size > 0) {
      const batch: Array<{ id: string; bytes: Buffer; text: string; metadata: Record<string, unknown> | undefined }> = [];
      for (const id of ns.staleIds) {
        const bytes = store.get(recs, idKey(id));
        if (bytes !== undefined) {
          const r = decodeRecord(bytes);
          batch.push({ id, bytes, text: r.text, metadata: r.metadata });
        }
        if (batch.length === REEMBED_BATCH) break;
      }
      if (batch.length === 0) {
        // Every stale id left is being deleted: the applier clears them.
        await ns.settled();
        break;
      }
      const vectors = await this.embedder.embed(batch.map((b) => b.text));
      if (store.closed) return;
      const ops: BatchOp[] = [];
      const changed: Array<{ seq: number; id: string }> = [];
      for (let i = 0; i < batch.length; i++) {
        const b = batch[i]!;
        const key = idKey(b.id);
        // Changed meanwhile (rewritten by a client, already current): leave it.
        if (!store.get(recs, key)?.equals(b.bytes)) continue;
        const seq = ns.takeSeq();
        ops.push({ op: 'put', tree: recs, key, value: encodeRecord(this.embedder.id, b.metadata, b.text, vectors[i]!) }, { op: 'put', tree: logTree(ns.info.number), key: seqKey(seq), value: key });
        changed.push({ seq, id: b.id });
      }
      if (ops.length > 0) {
        const written = store.write(ops);
        for (const c of changed) ns.changed(c.seq, c.id);
        await written;
      }
      await ns.settled();
    }
  }

  /** For tests and health: how far a namespace's graph and re-embedding are. */
  async status(store: TenantStore, namespace: unknown): Promise<{ pending: number; stale: number; tombstones: number; graphNodes: number; loadedFrom: string } | undefined> {
    const ns = await this.#namespace(store, validateNamespace(namespace), false);
    if (ns === undefined) return undefined;
    return { pending: ns.pendingCount, stale: ns.staleIds.size, tombstones: ns.graph.deletedCount, graphNodes: ns.graph.liveCount, loadedFrom: ns.loadedFrom };
  }

  /** Waits until a namespace's graph holds every change and no record is stale (tests, benchmarks). */
  async settle(store: TenantStore, namespace: unknown): Promise<void> {
    const ns = await this.#namespace(store, validateNamespace(namespace), false);
    if (ns === undefined) return;
    for (;;) {
      await ns.settled();
      if (ns.staleIds.size === 0 && ns.pendingCount === 0) return;
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}
