// The MongoDB mirror: with TETRA_MONGODB_URI set, every tenant's collections are copied to a
// database of their own on that MongoDB and kept in step with each write, so the aggregation
// stages DESIGN.md routes there ($lookup, $facet, $graphLookup, $text) can run on it
// (server/mongo-routing.ts).
//
// - From the write-ahead log's batches: TenantStore.onWrite hands each batch over as it is
//   applied; the mirror keeps the document changes (a put is a replace-or-insert by `_id`, a
//   delete a delete, a dropped collection a drop) in a queue, and ships them once they are durable
//   (TenantStore.whenDurable): MongoDB never holds a write a crash can still take away.
// - A $out writes into a hidden temporary collection, which the mirror ignores, then swaps it in
//   for its target in one batch (the target's name put with the hidden collection's id, the hidden
//   name deleted): the mirror ships that as a `recopy` of the target, which empties the mirrored
//   collection (deleteMany: its MongoDB-side indexes stay) and copies the collection's documents
//   from the live store. Until that is done a routed read that does not wait for it (one that
//   arrived before the $out's answer) may see the mirrored target part old, part new. A
//   renameCollection (the old name deleted, the new one put with the same id) ships likewise: a
//   drop of the old name, then a recopy under the new one.
// - What MongoDB holds is recorded as an lsn (database `<prefix>mirror`, collection `tenants`,
//   one document per tenant). When a tenant's store opens and that lsn is not the store's, or the
//   queue passed its bound while MongoDB was away, the mirror copies the tenant's collections again:
//   chunk by chunk from the live store (each chunk sent once durable), replaying every change
//   queued since the copy began, which converges on the store's state (changes are by `_id`).
// - MongoDB away: shipping is retried with a growing pause (up to RETRY_MAX_MS); writes are never
//   held up by it. Routed aggregations wait (up to the timeout) for the mirror to hold what the
//   store held when they arrived, or run natively (mongo-routing.ts).
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient, MongoServerError, type Collection, type Db, type Document } from 'mongodb';
import { CATALOG_TREE, decodeCollectionInfo, docsTree, isCollectionKey, isTemporaryCollection, listCollectionInfos, readCollection, type CollectionInfo, type IndexInfo } from '../engine/docs/catalog.js';
import { describeTextIndex, textKeyFields } from '../engine/docs/text/index.js';
import { decodeDocument } from '../engine/docs/doc-codec.js';
import { fromJson } from '../engine/docs/ejson.js';
import { decodeKey } from '../engine/storage/index.js';
import type { BatchOp, TenantStore } from '../engine/tenant/index.js';

/** Changes queued (all tenants) beyond this many bytes: the tenant adding to it is dropped and copied again once MongoDB is back. */
const DEFAULT_MAX_QUEUE_BYTES = 64 * 1024 * 1024;
/** Documents per insertMany while copying, and changes per bulkWrite while shipping. */
const CHUNK = 1000;
const RETRY_MIN_MS = 200;
const RETRY_MAX_MS = 10_000;
/** How long a closing store waits for its queue to reach MongoDB before it lets go (the next open copies what is missing). */
const CLOSE_DRAIN_MS = 2000;
/** After MongoDB failed to answer, routed aggregations go native at once for this long (then one tries again). */
const AWAY_MS = 2000;
/** A mirrored write command's documents, at most (MongoDB takes 16 MiB of BSON a command). */
const MAX_COMMAND_BYTES = 8 * 1024 * 1024;
/** MongoDB: a database name is at most 63 bytes. */
const MAX_DB_NAME = 63;

export interface MongoMirrorOptions {
  uri: string;
  /** Prefix of the databases the mirror owns: `<prefix><tenantId>` per tenant, `<prefix>mirror` for its bookkeeping. */
  dbPrefix: string;
  /** Bound on a MongoDB operation (server selection, each command). */
  timeoutMs: number;
  maxQueueBytes?: number;
  log: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

type Change =
  | { kind: 'put'; coll: string; raw: Buffer }
  | { kind: 'delete'; coll: string; id: unknown }
  | { kind: 'drop'; coll: string }
  /** The collection's documents replaced wholesale (a $out's swap): copied again from the store. */
  | { kind: 'recopy'; coll: string }
  | { kind: 'createIndex'; coll: string; index: IndexSpec }
  | { kind: 'dropIndex'; coll: string; name: string };

/**
 * A tetradb index as the mirror makes it on MongoDB: its keys, named `tetra_<name>`, never unique
 * or TTL; a text index with its weights and languages (`options`).
 */
interface IndexSpec {
  readonly name: string;
  readonly key: Record<string, 1 | -1 | 'text'>;
  readonly options?: Document;
}

/**
 * The index a tetradb index is on MongoDB. Plain indexes only: the mirror's documents already
 * satisfy tetradb's unique indexes (a unique one there could only make a mirrored write fail),
 * and a TTL index there would delete documents on its own. A text index is MongoDB's text index
 * over the same fields (every one it weighs, or `$**`, between the same prefix and suffix fields),
 * with the same weights, languages and partial filter, so a routed `$text` finds and scores what a
 * native one does.
 */
function indexSpec(ix: IndexInfo): IndexSpec {
  const name = `${MIRROR_INDEX_PREFIX}${ix.name}`;
  if (ix.text === undefined) return { name, key: Object.fromEntries(ix.fields.map((f) => [f.path, f.direction])) };
  const shown = describeTextIndex(ix.text);
  const weights = shown['weights'] as Record<string, number>;
  const textFields: Array<[string, 'text']> = ix.text.wildcard ? [['$**', 'text']] : Object.keys(weights).map((path): [string, 'text'] => [path, 'text']);
  // A compound text index keeps its prefix and suffix fields around the text ones, and a partial
  // one its filter: a routed $text then needs (and is narrowed by) the same conditions there.
  const { prefix, suffix } = textKeyFields(ix.fields);
  const key = Object.fromEntries([...prefix.map((f): [string, 1 | -1] => [f.path, f.direction]), ...textFields, ...suffix.map((f): [string, 1 | -1] => [f.path, f.direction])]);
  const options: Document = { weights, default_language: shown['default_language'], language_override: shown['language_override'] };
  if (ix.partialFilterExpression !== undefined) options['partialFilterExpression'] = fromJson(ix.partialFilterExpression);
  return { name, key, options };
}

/** The indexes of a collection to make on the MongoDB side, by name. */
function indexSpecs(info: CollectionInfo): Map<string, IndexSpec> {
  // A hidden index is not there for queries, routed ones included: hiding drops its copy, unhiding makes it again.
  return new Map(info.indexes.filter((ix) => ix.hidden !== true).map((ix) => [ix.name, indexSpec(ix)]));
}

/** Indexes the mirror made carry this prefix: a copy drops those tetradb no longer has, and leaves the operator's own. */
const MIRROR_INDEX_PREFIX = 'tetra_';

/** MongoDB refused an index because one like it exists (a name or options taken by the operator's own): keep theirs. */
function isIndexConflict(err: unknown): boolean {
  return err instanceof MongoServerError && (err.code === 85 || err.code === 86 || err.codeName === 'IndexOptionsConflict' || err.codeName === 'IndexKeySpecsConflict');
}

interface Entry {
  readonly lsn: number;
  readonly changes: Change[];
  readonly bytes: number;
}

/** What MongoDB's `_id` of a stored document key is: the key's one component, `[bracket, id]` (ids are exact). */
function idOfKey(key: Uint8Array): unknown {
  const part = decodeKey(key)[0] as unknown[];
  return part[1];
}

function isNamespaceNotFound(err: unknown): boolean {
  return err instanceof MongoServerError && (err.code === 26 || err.codeName === 'NamespaceNotFound');
}

/**
 * One `update` command of upserting replacements (`put`) or `delete` command, ordered. Raw
 * commands rather than the driver's bulkWrite, whose per-operation checks cost more than the
 * documents' encoding. @throws when MongoDB refuses a statement
 */
async function writeCommand(db: Db, coll: string, kind: 'put' | 'delete', statements: Document[]): Promise<void> {
  const reply = await db.command(kind === 'put' ? { update: coll, updates: statements, ordered: true } : { delete: coll, deletes: statements, ordered: true });
  const errors = reply.writeErrors as Array<{ errmsg?: string }> | undefined;
  if (errors !== undefined && errors.length > 0) throw new Error(`MongoDB refused a mirrored ${kind} in ${coll}: ${errors[0]!.errmsg ?? 'write error'}`);
}

/** The statement of an `update` command that puts `doc` in place of the document with its `_id`. */
function upsertStatement(doc: Document): Document {
  return { q: { _id: doc._id }, u: doc, upsert: true };
}

export class MongoMirror {
  readonly client: MongoClient;
  readonly #options: MongoMirrorOptions;
  readonly #tenants = new Map<string, TenantMirror>();
  #closed = false;
  /** Bytes of changes all tenants' mirrors hold, waiting to be sent (bounded by maxQueueBytes). */
  queuedBytes = 0;
  /** Until when (ms since the epoch) MongoDB counts as away after a failed call: routed aggregations run natively at once. */
  #awayUntil = 0;

  /** Records that MongoDB did not answer: for AWAY_MS, routed aggregations do not wait for it. */
  noteAway(): void {
    this.#awayUntil = Date.now() + AWAY_MS;
  }

  get away(): boolean {
    return Date.now() < this.#awayUntil;
  }

  /** What MongoDB holds of each tenant: the lsn of the last batch mirrored. */
  readonly stateCollection: Collection<{ _id: string; lsn: number }>;

  constructor(options: MongoMirrorOptions) {
    this.#options = options;
    this.client = new MongoClient(options.uri, {
      serverSelectionTimeoutMS: options.timeoutMs,
      connectTimeoutMS: options.timeoutMs,
      socketTimeoutMS: Math.max(options.timeoutMs * 6, 30_000),
    });
    this.stateCollection = this.client.db(`${options.dbPrefix}mirror`).collection('tenants');
  }

  /** The database holding `tenantId`'s collections. */
  dbName(tenantId: string): string {
    const name = `${this.#options.dbPrefix}${tenantId}`;
    if (Buffer.byteLength(name) <= MAX_DB_NAME) return name;
    return `${this.#options.dbPrefix}h${createHash('sha256').update(tenantId).digest('hex').slice(0, 40)}`;
  }

  readonly #dbs = new Map<string, Db>();

  db(tenantId: string): Db {
    let db = this.#dbs.get(tenantId);
    if (db === undefined) {
      if (this.#dbs.size >= 10_000) this.#dbs.clear();
      db = this.client.db(this.dbName(tenantId));
      this.#dbs.set(tenantId, db);
    }
    return db;
  }


  get options(): MongoMirrorOptions {
    return this.#options;
  }

  /** Starts mirroring a store that just opened (the registry's prepare hook). */
  attach(tenantId: string, store: TenantStore): void {
    if (this.#closed) return;
    this.#tenants.get(tenantId)?.stop();
    this.#tenants.set(tenantId, new TenantMirror(this, tenantId, store, () => this.#tenants.get(tenantId)?.store === store && this.#tenants.delete(tenantId)));
  }

  /**
   * True once MongoDB holds every batch up to `lsn` of the tenant (false after `timeoutMs`, or
   * when the tenant is not being mirrored).
   */
  caughtUp(tenantId: string, lsn: number, timeoutMs: number): Promise<boolean> {
    const t = this.#tenants.get(tenantId);
    return t === undefined ? Promise.resolve(false) : t.caughtUp(lsn, timeoutMs);
  }

  /** What the mirror of one tenant is doing (tests, health). */
  status(tenantId: string): { state: string; appliedLsn: number; queued: number } | undefined {
    return this.#tenants.get(tenantId)?.status();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#tenants.values()) t.stop();
    this.#tenants.clear();
    await this.client.close().catch(() => undefined);
  }
}

class TenantMirror {
  readonly store: TenantStore;
  readonly #mirror: MongoMirror;
  readonly #tenantId: string;
  readonly #onStop: () => void;
  readonly #offWrite: () => void;
  readonly #offClose: () => void;
  /** Collection trees (`docs.N`) to names, kept from the catalog's changes. */
  readonly #names = new Map<string, string>();
  /** Each collection's indexes as last seen in the catalog (to mirror their creation and removal). */
  readonly #indexes = new Map<string, Map<string, IndexSpec>>();
  #queue: Entry[] = [];
  #queuedBytes = 0;
  /** The lsn MongoDB holds everything up to. */
  #applied = -1;
  /** A copy is needed or running (at start, after the queue overflowed); MongoDB is current only once it is done. */
  #copy = true;
  /** Times the queue overflowed: a copy that saw one start meanwhile is not enough. */
  #overflows = 0;
  #stopped = false;
  #wake: (() => void) | undefined;
  #waiters: Array<{ lsn: number; resolve: (ok: boolean) => void }> = [];
  #state = 'starting';
  /** The store's lsn when the mirror attached: what MongoDB must hold to need no copy. */
  readonly #openLsn: number;

  constructor(mirror: MongoMirror, tenantId: string, store: TenantStore, onStop: () => void) {
    this.#mirror = mirror;
    this.#tenantId = tenantId;
    this.store = store;
    this.#onStop = onStop;
    this.#openLsn = store.lsn;
    this.#loadNames();
    this.#offWrite = store.onWrite((lsn, ops) => this.#onBatch(lsn, ops));
    this.#offClose = store.onClose(() => this.#drainThenStop());
    void this.#run();
  }

  status(): { state: string; appliedLsn: number; queued: number } {
    return { state: this.#state, appliedLsn: this.#applied, queued: this.#queue.length };
  }

  #loadNames(): void {
    for (const info of listCollectionInfos(this.store)) {
      this.#names.set(docsTree(info), info.name);
      this.#indexes.set(info.name, indexSpecs(info));
    }
  }

  // ---- Capture (synchronous, inside the store's write) --------------------------------------

  #onBatch(lsn: number, ops: readonly BatchOp[]): void {
    if (this.#stopped) return;
    const changes: Change[] = [];
    let bytes = 64;
    // A collection whose entry moves to another name in this batch holds documents MongoDB does
    // not have under that name: a $out's swap (its hidden collection's name deleted, the target's
    // put with its id) or a renameCollection (the old name deleted, the new one put with its id).
    let swap = false;
    const moved = new Set<string>();
    for (const op of ops) {
      if (op.tree !== CATALOG_TREE || op.op !== 'delete' || !isCollectionKey(op.key)) continue;
      if (isTemporaryCollection(op.key)) swap = true;
      const name = Buffer.from(op.key).toString('utf8');
      for (const [tree, n] of this.#names) if (n === name) moved.add(tree);
    }
    // The catalog first: a batch that creates a collection puts its entry and its documents.
    for (const op of ops) {
      if (op.tree !== CATALOG_TREE || op.op === 'dropTree' || !isCollectionKey(op.key)) continue;
      // A $out's hidden collection is never mirrored: its documents reach MongoDB as its target's.
      if (isTemporaryCollection(op.key)) continue;
      if (op.op === 'put') {
        const info = decodeCollectionInfo(op.value);
        if (swap || moved.has(docsTree(info))) {
          for (const [tree, n] of this.#names) if (n === info.name) this.#names.delete(tree);
          changes.push({ kind: 'recopy', coll: info.name });
        }
        this.#names.set(docsTree(info), info.name);
        const before = this.#indexes.get(info.name) ?? new Map<string, IndexSpec>();
        const now = indexSpecs(info);
        for (const [name, index] of before) if (!now.has(name)) changes.push({ kind: 'dropIndex', coll: info.name, name: index.name });
        for (const [name, index] of now) if (!before.has(name)) changes.push({ kind: 'createIndex', coll: info.name, index });
        this.#indexes.set(info.name, now);
      } else if (op.op === 'delete') {
        const name = Buffer.from(op.key).toString('utf8');
        changes.push({ kind: 'drop', coll: name });
        this.#indexes.delete(name);
        for (const [tree, n] of this.#names) if (n === name) this.#names.delete(tree);
      }
    }
    for (const op of ops) {
      if (op.tree === CATALOG_TREE) continue;
      const coll = this.#names.get(op.tree);
      if (coll === undefined) continue; // an index tree, or not a document tree
      if (op.op === 'put') {
        const raw = Buffer.from(op.value); // the caller may reuse its buffers
        changes.push({ kind: 'put', coll, raw });
        bytes += raw.length + 32;
      } else if (op.op === 'delete') {
        changes.push({ kind: 'delete', coll, id: idOfKey(op.key) });
        bytes += op.key.length + 32;
      }
    }
    if (changes.length === 0) return;
    if (this.#mirror.queuedBytes + bytes > (this.#mirror.options.maxQueueBytes ?? DEFAULT_MAX_QUEUE_BYTES)) {
      // MongoDB has been away too long to keep every change (the bound is all tenants'): copy
      // this tenant again once it is back.
      this.#queue = [];
      this.#setQueued(0);
      this.#copy = true;
      this.#overflows++;
    }
    this.#queue.push({ lsn, changes, bytes });
    this.#setQueued(this.#queuedBytes + bytes);
    this.#wake?.();
  }

  // ---- Shipping -------------------------------------------------------------------------------

  async #run(): Promise<void> {
    let pause = RETRY_MIN_MS;
    while (!this.#stopped) {
      try {
        if (this.#copy) {
          this.#state = 'copying';
          await this.#copyAll();
        } else if (this.#queue.length > 0) {
          this.#state = 'shipping';
          await this.#ship();
        } else {
          this.#state = 'live';
          await new Promise<void>((resolve) => (this.#wake = resolve));
          this.#wake = undefined;
          continue;
        }
        pause = RETRY_MIN_MS;
      } catch (err) {
        if (this.#stopped || this.store.closed || this.store.failed) break;
        this.#state = 'retrying';
        this.#mirror.noteAway();
        this.#mirror.options.log.warn({ err, tenantId: this.#tenantId }, 'MongoDB mirror: shipping failed, retrying');
        await sleep(pause);
        pause = Math.min(RETRY_MAX_MS, pause * 2);
      }
    }
    this.stop();
  }

  /** The tenant's collections copied whole, then the changes queued meanwhile shipped. */
  async #copyAll(): Promise<void> {
    const state = this.#applied < 0 ? await this.#mirror.stateCollection.findOne({ _id: this.#tenantId }) : undefined;
    if (state?.lsn === this.#openLsn) {
      // MongoDB holds exactly what the store held when it opened: ship what came since (after
      // making sure of the indexes: a mirror written before they were mirrored has none).
      const db = this.#mirror.db(this.#tenantId);
      for (const info of listCollectionInfos(this.store)) await this.#ensureIndexes(db, info, false);
      this.#copy = false;
      this.#setApplied(this.#openLsn);
      return;
    }
    const startLsn = this.store.lsn;
    const overflows = this.#overflows;
    this.#mirror.options.log.info({ tenantId: this.#tenantId, lsn: startLsn, mirrored: state?.lsn ?? null }, 'MongoDB mirror: copying the tenant');
    // Changes from here on are queued and replayed after the copy; earlier ones are in it.
    this.#queue = this.#queue.filter((e) => e.lsn > startLsn);
    this.#setQueued(this.#queue.reduce((n, e) => n + e.bytes, 0));
    const db = this.#mirror.db(this.#tenantId);
    const infos = listCollectionInfos(this.store);
    const wanted = new Set(infos.map((i) => i.name));
    for (const c of await db.listCollections({}, { nameOnly: true }).toArray()) {
      if (!wanted.has(c.name) && !c.name.startsWith('system.')) await this.#applyCollectionChange(db, { kind: 'drop', coll: c.name });
    }
    for (const info of infos) {
      if (!(await this.#copyCollection(db, info))) return;
    }
    await this.store.whenDurable(startLsn);
    await this.#mirror.stateCollection.updateOne({ _id: this.#tenantId }, { $set: { lsn: startLsn } }, { upsert: true });
    if (this.#overflows !== overflows) return; // the queue overflowed meanwhile: copy again
    this.#copy = false;
    this.#setApplied(startLsn);
  }

  /**
   * Replaces the mirrored collection's documents with the store's live ones, chunk by chunk (each
   * sent once durable); the changes queued after them are replayed later and converge (by `_id`).
   * False when the mirror stopped meanwhile.
   */
  async #copyCollection(db: Db, info: CollectionInfo): Promise<boolean> {
    // deleteMany, not drop: indexes made on the MongoDB side (a text index) stay.
    await db.collection(info.name).deleteMany({});
    await this.#ensureIndexes(db, info, true);
    const tree = docsTree(info);
    let after: Buffer | undefined;
    for (;;) {
      if (this.#stopped) return false;
      // One chunk read in one turn, at one lsn; sent only once that lsn is durable.
      const chunk: Document[] = [];
      let bytes = 0;
      const readAt = this.store.lsn;
      // The collection as it is now (a later $out may have swapped it again): its tree by name.
      const live = readCollection(this.store, info.name);
      if (live === undefined || live.id !== info.id) return true;
      for (const [key, raw] of this.store.scan(tree, after === undefined ? {} : { gt: after })) {
        // A document may already be there (copied, then written and replayed): replace by _id.
        chunk.push(upsertStatement(decodeDocument(raw)));
        bytes += raw.length + 64;
        after = Buffer.from(key);
        if (chunk.length >= CHUNK || bytes >= MAX_COMMAND_BYTES) break;
      }
      if (chunk.length === 0) return true;
      await this.store.whenDurable(readAt);
      await writeCommand(db, info.name, 'put', chunk);
    }
  }

  /** Ships the queue's head (up to CHUNK changes) once durable, in order, then records its lsn. */
  async #ship(): Promise<void> {
    const batch: Entry[] = [];
    let changes = 0;
    for (const e of this.#queue) {
      if (batch.length > 0 && changes + e.changes.length > CHUNK) break;
      batch.push(e);
      changes += e.changes.length;
    }
    const last = batch[batch.length - 1]!.lsn;
    await this.store.whenDurable(last);
    const db = this.#mirror.db(this.#tenantId);
    // Runs of puts and of deletes, in order, per collection (writeCommand); a drop on its own.
    let run: { coll: string; kind: 'put' | 'delete'; statements: Document[]; bytes: number } | undefined;
    const flush = async (): Promise<void> => {
      if (run === undefined) return;
      const { coll, kind, statements } = run;
      run = undefined;
      await writeCommand(db, coll, kind, statements);
    };
    for (const e of batch) {
      for (const c of e.changes) {
        if (c.kind === 'drop' || c.kind === 'createIndex' || c.kind === 'dropIndex') {
          await flush();
          await this.#applyCollectionChange(db, c);
          continue;
        }
        if (c.kind === 'recopy') {
          await flush();
          // Gone since (dropped: its drop follows in the queue): nothing to copy.
          const info = readCollection(this.store, c.coll);
          if (info !== undefined && !(await this.#copyCollection(db, info))) return;
          continue;
        }
        const bytes = c.kind === 'put' ? c.raw.length + 64 : 64;
        if (run !== undefined && (run.coll !== c.coll || run.kind !== c.kind || run.bytes + bytes > MAX_COMMAND_BYTES)) await flush();
        run ??= { coll: c.coll, kind: c.kind, statements: [], bytes: 0 };
        run.bytes += bytes;
        if (c.kind === 'put') {
          run.statements.push(upsertStatement(decodeDocument(c.raw)));
        } else {
          run.statements.push({ q: { _id: c.id }, limit: 1 });
        }
      }
    }
    await flush();
    await this.#mirror.stateCollection.updateOne({ _id: this.#tenantId }, { $set: { lsn: last } }, { upsert: true });
    if (this.#copy) return; // dropped meanwhile: the copy decides
    const shipped = new Set(batch);
    this.#queue = this.#queue.filter((e) => !shipped.has(e));
    this.#setQueued(this.#queuedBytes - batch.reduce((n, e) => n + e.bytes, 0));
    this.#setApplied(last);
  }

  /**
   * The collection's tetradb indexes made on the MongoDB side; `dropStale`: also drop the ones the
   * mirror made (`tetra_` names) that tetradb no longer has, leaving the operator's own.
   */
  async #ensureIndexes(db: Db, info: CollectionInfo, dropStale: boolean): Promise<void> {
    const specs = indexSpecs(info);
    if (dropStale) {
      const wanted = new Set([...specs.values()].map((i) => i.name));
      for (const existing of await db.collection(info.name).listIndexes().toArray().catch((err: unknown) => (isNamespaceNotFound(err) ? [] : Promise.reject(err)))) {
        const name = String(existing.name);
        if (name.startsWith(MIRROR_INDEX_PREFIX) && !wanted.has(name)) await this.#applyCollectionChange(db, { kind: 'dropIndex', coll: info.name, name });
      }
    }
    for (const index of specs.values()) await this.#applyCollectionChange(db, { kind: 'createIndex', coll: info.name, index });
  }

  /** A drop, or an index made or dropped, on the MongoDB side (what is already so is no error). */
  async #applyCollectionChange(db: Db, c: Change & { kind: 'drop' | 'createIndex' | 'dropIndex' }): Promise<void> {
    const coll = db.collection(c.coll);
    const missingOk = (err: unknown): Promise<void> | undefined => (isNamespaceNotFound(err) || (err instanceof MongoServerError && err.code === 27) ? undefined : Promise.reject(err));
    if (c.kind === 'drop') await coll.drop().then(() => undefined, missingOk);
    else if (c.kind === 'dropIndex') await coll.dropIndex(c.name).then(() => undefined, missingOk);
    else await coll.createIndex(c.index.key, { ...c.index.options, name: c.index.name }).then(() => undefined, (err: unknown) => (isIndexConflict(err) ? undefined : Promise.reject(err)));
  }

  #setQueued(bytes: number): void {
    this.#mirror.queuedBytes += bytes - this.#queuedBytes;
    this.#queuedBytes = bytes;
  }

  #setApplied(lsn: number): void {
    this.#applied = Math.max(this.#applied, lsn);
    if (this.#waiters.length === 0) return;
    const still: Array<{ lsn: number; resolve: (ok: boolean) => void }> = [];
    for (const w of this.#waiters) {
      if (this.#holds(w.lsn)) w.resolve(true);
      else still.push(w);
    }
    this.#waiters = still;
  }

  /**
   * MongoDB holds every document change up to `lsn`: the first copy is done, none is running,
   * and nothing at or before `lsn` waits in the queue.
   */
  #holds(lsn: number): boolean {
    return !this.#copy && this.#applied >= 0 && (this.#queue.length === 0 || this.#queue[0]!.lsn > lsn);
  }

  caughtUp(lsn: number, timeoutMs: number): Promise<boolean> {
    if (this.#holds(lsn)) return Promise.resolve(true);
    if (this.#stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = { lsn, resolve };
      this.#waiters.push(waiter);
      setTimeout(() => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) {
          this.#waiters.splice(i, 1);
          resolve(false);
        }
      }, timeoutMs).unref();
    });
  }

  async #drainThenStop(): Promise<void> {
    const deadline = Date.now() + CLOSE_DRAIN_MS;
    // Only while shipping goes on: with MongoDB away, a closing store does not wait for it.
    while (this.#queue.length > 0 && !this.#copy && !this.#stopped && this.#state !== 'retrying' && Date.now() < deadline) await sleep(20);
    this.stop();
  }

  stop(): void {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#state = 'stopped';
    this.#offWrite();
    this.#offClose();
    this.#queue = [];
    this.#setQueued(0);
    this.#wake?.();
    for (const w of this.#waiters.splice(0)) w.resolve(false);
    this.#onStop();
  }
}
