// One adapter per engine of the in-process documents benchmark, each used the way its own docs
// recommend and with the fastest lookup it offers for each query, behind the surface
// docs-worker.ts needs. Every engine holds the same documents (lib/documents.ts
// makeQueryDocument) with indexes on email and joined where it has indexes.
import { join } from 'node:path';
import { docsAggregate, docsCreateIndex, docsFind, docsInsert, docsReplace, docsUpdate } from '../../engine/docs/index.js';
import { PageCache, type FsyncMode, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { startMemoryGovernor } from '../../server/config.js';
import type { QueryDocument } from './documents.js';
import { COLLECTION, FIND_LIMIT, groupByCity, INDEXED_FIELDS, mqlAggregate, mqlFilter, mqlUpdate, positionalUpdate, type CityGroup, type GroupArgs, type QueryArgs } from './docs-workload.js';

export type DocsEngineName = 'tetradb' | 'lokijs' | 'nedb' | 'nedb-file' | 'mingo';
export const DOCS_ENGINES: readonly DocsEngineName[] = ['mingo', 'lokijs', 'tetradb', 'nedb', 'nedb-file'];

/** What the tables say about each engine: how its writes are kept and how it answers. */
export const ENGINE_NOTES: Record<DocsEngineName, string> = {
  tetradb:
    'docsInsert / docsFind / docsUpdate over a TenantStore opened as the server opens a tenant; every write awaited until durable (`Written.durable`: WAL fsync, group commit), as the routes answer only then',
  lokijs:
    'NOT durable: in memory (no persistence adapter, no autosave). `unique: [_id]` (hash map, `by()`), binary indexes on email and joined; adaptive indexes off during the load, built once at its end (`ensureAllIndexes`: the settle column) and on again for the updates (`configureOptions`)',
  nedb: 'NOT durable: `inMemoryOnly` datastore; `ensureIndex` on email and joined (AVL trees), _id always indexed; `findAsync` / `findOneAsync` / `updateAsync`, results are copies',
  'nedb-file':
    'file-backed datastore: each write appended to its file before the call resolves, without fsync (survives a process crash, not a power loss); otherwise as nedb',
  mingo: 'NOT durable: a plain array; `find(array, filter)` and `updateOne(array, ...)` scan it on every call (mingo is a query library, it has no indexes); insertMany is `push`',
};

/** tetradb's settings, from server/config.ts (what `npm start` runs with). */
export interface TetraSettings {
  cacheBytes: number;
  dirtyBytes: number;
  fsync: FsyncMode;
  snapshotMaxAgeMs: number;
  /** The memory governor's reading interval (0: none), and the heap growth it restores. */
  memoryCheckMs: number;
  heapGrowthPercent: number;
  /** What one query may hold in memory, and spill to disk past it (allowDiskUse). */
  mqlBlockingBytes: number;
  mqlSpillBytes: number;
}

/** The settings a server started by `npm start` would take from `server` (loadConfig's answer). */
export function tetraSettingsOf(server: TetraSettings): TetraSettings {
  const { cacheBytes, dirtyBytes, fsync, snapshotMaxAgeMs, memoryCheckMs, heapGrowthPercent, mqlBlockingBytes, mqlSpillBytes } = server;
  return { cacheBytes, dirtyBytes, fsync, snapshotMaxAgeMs, memoryCheckMs, heapGrowthPercent, mqlBlockingBytes, mqlSpillBytes };
}

type Docs = ReadonlyArray<{ _id?: unknown }>;

export interface DocsBenchEngine {
  readonly name: DocsEngineName;
  /** Whether calls block the thread (Loki, mingo): timed with benchmark.js rather than a closed loop. */
  readonly sync: boolean;
  /** Inserts one batch; done (durable where the engine is) when it returns or resolves. */
  insertMany(docs: QueryDocument[]): void | Promise<void>;
  /** The documents a query matches (up to FIND_LIMIT). */
  find(q: QueryArgs): Docs | Promise<Docs>;
  /** updateOne by _id: profile.city set, logins incremented; done (durable where the engine is) on return. */
  updateById(id: string, city: string): void | Promise<void>;
  /** replaceOne by _id: the document replaced by `doc` (its _id kept); done (durable where the engine is) on return. */
  replaceById(id: string, doc: Omit<QueryDocument, '_id'>): void | Promise<void>;
  /** updateOne by _id: every tag other than `tag` becomes `tag` (positionalUpdate); done (durable where the engine is) on return. */
  retagById(id: string, tag: string): void | Promise<void>;
  /** The aggregation of mqlAggregate: a pipeline where the engine has them, else a find and a reduce in JavaScript. */
  aggregate(a: GroupArgs): CityGroup[] | Promise<CityGroup[]>;
  /** After the load: what a user would do before querying (tetradb: checkpoint; Loki: build its indexes). */
  settle(): Promise<void>;
  /** Extra figures sampled with memory (tetradb: cache and dirty bytes in use). */
  memoryExtra?(): Record<string, number>;
  close(): Promise<void>;
}

const MiB = 2 ** 20;

/** Opens engine `name` with its files (if any) under `dir`, collection and indexes created. */
export async function openDocsEngine(name: DocsEngineName, dir: string, tetra: TetraSettings): Promise<DocsBenchEngine> {
  switch (name) {
    case 'tetradb':
      return openTetra(dir, tetra);
    case 'lokijs':
      return openLoki();
    case 'nedb':
      return openNedb(undefined);
    case 'nedb-file':
      return openNedb(join(dir, 'people.db'));
    case 'mingo':
      return openMingo();
    default: {
      const never: never = name;
      throw new Error(`unknown engine ${String(never)}`);
    }
  }
}

/** A tenant's store as `npm start` opens it, the memory governor running, and what closes both. */
export interface TetraTenant {
  readonly store: TenantStore;
  /** Its page cache's bytes in use and dirty bytes, in MiB (sampled with memory). */
  memoryExtra(): Record<string, number>;
  close(): Promise<void>;
}

/**
 * Opens a TenantStore under `dir` as server/app.ts and the tenant registry open a tenant: one
 * PageCache with the cache size and dirty budget, the configured fsync mode and snapshot age, the
 * store's other defaults; then the memory governor, as server/app.ts starts it once the stores are
 * open. The people collection gets its indexes on INDEXED_FIELDS.
 */
export async function openTetraTenant(dir: string, settings: TetraSettings): Promise<TetraTenant> {
  const cache = new PageCache<TreeNode>(settings.cacheBytes, { dirtyBytes: settings.dirtyBytes });
  const store = await TenantStore.open(dir, { cache, fsync: settings.fsync, snapshotMaxAgeMs: settings.snapshotMaxAgeMs });
  for (const field of INDEXED_FIELDS) await (await docsCreateIndex(store, COLLECTION, { [field]: 1 })).durable;
  const governor = startMemoryGovernor(cache, settings);
  return {
    store,
    memoryExtra: () => ({ dirtyMiB: cache.dirty.bytes / MiB, cacheMiB: cache.bytes / MiB }),
    async close() {
      governor?.stop();
      await store.close();
    },
  };
}

async function openTetra(dir: string, settings: TetraSettings): Promise<DocsBenchEngine> {
  const tenant = await openTetraTenant(dir, settings);
  const store = tenant.store;
  return {
    name: 'tetradb',
    sync: false,
    async insertMany(docs) {
      await docsInsert(store, COLLECTION, docs).durable;
    },
    async find(q) {
      // By _id as a user sends it (no limit: the IDHACK path); the others with the common limit.
      const options = q.name === 'find-id' ? { filter: mqlFilter(q) } : { filter: mqlFilter(q), limit: FIND_LIMIT };
      return (await docsFind(store, COLLECTION, options)).documents;
    },
    async updateById(id, city) {
      const written = await docsUpdate(store, COLLECTION, { _id: id }, mqlUpdate(city), { multi: false });
      await written.durable;
    },
    async replaceById(id, doc) {
      const written = await docsReplace(store, COLLECTION, { _id: id }, doc, {});
      await written.durable;
    },
    async retagById(id, tag) {
      const { update, arrayFilters } = positionalUpdate(tag);
      const written = await docsUpdate(store, COLLECTION, { _id: id }, update, { multi: false, arrayFilters });
      await written.durable;
    },
    async aggregate(a) {
      return (await docsAggregate(store, COLLECTION, mqlAggregate(a))).documents as unknown as CityGroup[];
    },
    async settle() {
      await store.checkpoint();
    },
    memoryExtra: tenant.memoryExtra,
    close: tenant.close,
  };
}

async function openLoki(): Promise<DocsBenchEngine> {
  const { default: Loki } = await import('lokijs');
  const db = new Loki('bench.db');
  // Adaptive binary indexes keep each index sorted on every insert with an array splice (O(n) per
  // document, minutes at 1M): for the load they are off and built once at its end (settle), then
  // turned back on before anything is timed.
  const coll = db.addCollection<QueryDocument>(COLLECTION, { unique: ['_id'], indices: [...INDEXED_FIELDS], adaptiveBinaryIndices: false });
  return {
    name: 'lokijs',
    sync: true,
    insertMany(docs) {
      coll.insert(docs);
    },
    find(q) {
      switch (q.name) {
        case 'find-id': {
          const doc = coll.by('_id', q.id);
          return doc === undefined ? [] : [doc];
        }
        case 'find-email':
          return coll.find({ email: q.email });
        // Loki reads one operator per field: $between is its (inclusive, indexed) range.
        case 'find-range':
          return coll.find({ joined: { $between: [q.lo, q.hi] } });
        case 'scan':
          return coll.find({ n: { $between: [q.lo, q.hi] } });
        default: {
          const never: never = q;
          throw new Error(`unknown query ${JSON.stringify(never)}`);
        }
      }
    },
    updateById(id, city) {
      const doc = coll.by('_id', id);
      if (doc === undefined) throw new Error(`lokijs: no document ${id}`);
      doc.profile.city = city;
      doc.logins++;
      coll.update(doc);
    },
    replaceById(id, doc) {
      // Loki updates the object it holds (found by its $loki): a replacement is a new object with the old one's $loki and meta.
      const old = coll.by('_id', id) as (QueryDocument & { $loki: number; meta: unknown }) | undefined;
      if (old === undefined) throw new Error(`lokijs: no document ${id}`);
      coll.update({ ...doc, _id: id, $loki: old.$loki, meta: old.meta } as QueryDocument);
    },
    retagById(id, tag) {
      // Loki has no positional operators: the held object's array is changed and updated.
      const doc = coll.by('_id', id);
      if (doc === undefined) throw new Error(`lokijs: no document ${id}`);
      doc.tags = doc.tags.map(() => tag);
      coll.update(doc);
    },
    aggregate(a) {
      return groupByCity(coll.find({ joined: { $between: [a.lo, a.hi] } }));
    },
    async settle() {
      // Built first: configureOptions alone sets the flag and then skips the dirty indexes (its
      // ensureIndex returns early once adaptive is on), leaving them empty in lokijs 1.5.12.
      coll.ensureAllIndexes(true);
      coll.configureOptions({ adaptiveBinaryIndices: true });
    },
    async close() {
      db.close();
    },
  };
}

async function openNedb(filename: string | undefined): Promise<DocsBenchEngine> {
  // A CommonJS module whose typings say `export default`: under NodeNext the class is the
  // typings' default of the module's default.
  const nedb = await import('@seald-io/nedb');
  const Datastore = nedb.default as unknown as typeof nedb.default.default;
  const db = new Datastore<QueryDocument>(filename === undefined ? { inMemoryOnly: true } : { filename });
  await db.loadDatabaseAsync();
  for (const field of INDEXED_FIELDS) await db.ensureIndexAsync({ fieldName: field });
  return {
    name: filename === undefined ? 'nedb' : 'nedb-file',
    sync: false,
    async insertMany(docs) {
      await db.insertAsync(docs);
    },
    async find(q) {
      if (q.name === 'find-id') {
        const doc = await db.findOneAsync({ _id: q.id });
        return doc === null ? [] : [doc];
      }
      return db.findAsync(mqlFilter(q)).limit(FIND_LIMIT);
    },
    async updateById(id, city) {
      await db.updateAsync({ _id: id }, mqlUpdate(city), {});
    },
    async replaceById(id, doc) {
      // An update without operators replaces the document, its _id kept.
      await db.updateAsync({ _id: id }, { ...doc }, {});
    },
    async retagById(id, tag) {
      // NeDB has no positional operators: read the document, change its array, $set it back.
      const doc = await db.findOneAsync({ _id: id });
      if (doc === null) throw new Error(`nedb: no document ${id}`);
      await db.updateAsync({ _id: id }, { $set: { tags: doc.tags.map(() => tag) } }, {});
    },
    async aggregate(a) {
      return groupByCity(await db.findAsync({ joined: { $gte: a.lo, $lte: a.hi } }));
    },
    async settle() {},
    async close() {},
  };
}

async function openMingo(): Promise<DocsBenchEngine> {
  const { aggregate, find, updateOne } = await import('mingo');
  const docs: QueryDocument[] = [];
  return {
    name: 'mingo',
    sync: true,
    insertMany(batch) {
      for (const d of batch) docs.push(d);
    },
    find(q) {
      // find by _id is a findOne: the cursor stops at the first match.
      const cursor = find(docs, mqlFilter(q));
      return (q.name === 'find-id' ? cursor.limit(1) : cursor.limit(FIND_LIMIT)).all() as Docs;
    },
    updateById(id, city) {
      updateOne(docs as unknown as Array<Record<string, unknown>>, { _id: id }, mqlUpdate(city));
    },
    replaceById(id, doc) {
      // mingo has no replaceOne: the first match of the same filter, found as its updateOne finds it, is swapped.
      const i = docs.findIndex((d) => d._id === id);
      if (i < 0) throw new Error(`mingo: no document ${id}`);
      docs[i] = { ...doc, _id: id };
    },
    retagById(id, tag) {
      const { update, arrayFilters } = positionalUpdate(tag);
      updateOne(docs as unknown as Array<Record<string, unknown>>, { _id: id }, update, { arrayFilters });
    },
    aggregate(a) {
      return aggregate(docs, mqlAggregate(a)) as unknown as CityGroup[];
    },
    async settle() {},
    async close() {},
  };
}
