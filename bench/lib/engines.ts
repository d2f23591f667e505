// One adapter per engine under test, each used the way its own docs recommend, behind the small
// surface the benchmark needs. Every adapter stores the same rows: key -> value, bytes to bytes.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ClassicLevel } from 'classic-level';
import { TenantStore, type TenantStoreOptions } from '../../engine/tenant/index.js';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';

export type EngineName = 'tetradb' | 'sqlite-full' | 'sqlite-normal' | 'leveldb';

export interface OpenOptions {
  /** Memory budget for the engine's own cache of pages/blocks (same number for every engine). */
  cacheBytes: number;
  /** tetradb only: the dirty budget (PageCache `dirtyBytes`); absent means the engine's default. */
  dirtyBytes?: number;
  /** tetradb only: store options beyond the cache (checkpoint and compaction thresholds). */
  tetra?: Omit<TenantStoreOptions, 'cache'>;
}

export interface BenchEngine {
  readonly name: EngineName;
  /** Whether commit() blocks the thread (SQLite) or overlaps with other commits (a promise). */
  readonly syncCommit: boolean;
  /** One row in its own transaction, resolving when durable (sqlite-normal: when committed). */
  commit(key: Buffer, value: Buffer): Promise<void> | void;
  /** Many rows in one transaction, durable when it resolves. */
  load(rows: ReadonlyArray<readonly [Buffer, Buffer]>): Promise<void>;
  /** Makes the loaded data the engine's steady state (tetradb: checkpoint; SQLite: WAL checkpoint). */
  settle(): Promise<void>;
  get(key: Buffer): Buffer | undefined;
  /** Only engines whose reads are asynchronous by nature (LevelDB) have these. */
  getAsync?(key: Buffer): Promise<Buffer | undefined>;
  /** Reads up to `limit` rows from `start` on, touching every value; returns the rows read. */
  scan(start: Buffer, limit: number): number | Promise<number>;
  /** Every row in key order; returns the rows read. */
  scanAll(): number | Promise<number>;
  /** Engine-specific figures worth printing (cache occupancy and so on). */
  stats(): Record<string, number>;
  close(): Promise<void>;
}

const TREE = 'kv';

/** Bytes read by scans, kept so the reads cannot be optimised away. */
export let bytesRead = 0;

function consumed(rows: number, bytes: number): number {
  bytesRead += bytes;
  return rows;
}

/** Opens (creating) engine `name` with its files under `dir`. */
export async function openEngine(name: EngineName, dir: string, options: OpenOptions): Promise<BenchEngine> {
  switch (name) {
    case 'tetradb':
      return openTetra(dir, options);
    case 'sqlite-full':
      return openSqlite(name, dir, 'FULL', options);
    case 'sqlite-normal':
      return openSqlite(name, dir, 'NORMAL', options);
    case 'leveldb':
      return openLevel(dir, options);
    default: {
      const never: never = name;
      throw new Error(`unknown engine ${String(never)}`);
    }
  }
}

async function openTetra(dir: string, options: OpenOptions): Promise<BenchEngine> {
  const cache = new PageCache<TreeNode>(options.cacheBytes, options.dirtyBytes === undefined ? {} : { dirtyBytes: options.dirtyBytes });
  const store = await TenantStore.open(dir, { fsync: 'batch', ...options.tetra, cache });
  let peakCacheBytes = 0;
  const notePeak = (): void => {
    if (cache.bytes > peakCacheBytes) peakCacheBytes = cache.bytes;
  };
  return {
    name: 'tetradb',
    syncCommit: false,
    async commit(key, value) {
      await store.write([{ op: 'put', tree: TREE, key, value }]);
    },
    async load(rows) {
      await store.write(rows.map(([key, value]) => ({ op: 'put' as const, tree: TREE, key, value })));
      notePeak();
    },
    async settle() {
      await store.checkpoint();
      notePeak();
    },
    get(key) {
      return store.get(TREE, key);
    },
    scan(start, limit) {
      let rows = 0;
      let bytes = 0;
      for (const [, value] of store.scan(TREE, { gte: start, limit })) {
        rows++;
        bytes += value.length;
      }
      notePeak();
      return consumed(rows, bytes);
    },
    scanAll() {
      let rows = 0;
      let bytes = 0;
      for (const [, value] of store.scan(TREE)) {
        rows++;
        bytes += value.length;
        if ((rows & 1023) === 0) notePeak();
      }
      notePeak();
      return consumed(rows, bytes);
    },
    stats() {
      notePeak();
      const s = store.stats();
      return {
        cacheBytes: cache.bytes,
        cacheMaxBytes: cache.maxBytes,
        cachePeakBytes: peakCacheBytes,
        cachePages: cache.size,
        cacheHits: cache.hits,
        cacheMisses: cache.misses,
        pageFileBytes: s.pageFileBytes,
        walBytes: s.walBytes,
        dirtyBytes: cache.dirty.bytes,
        dirtyLimit: cache.dirty.limit,
        checkpointLsn: s.checkpointLsn,
      };
    },
    async close() {
      await store.close();
    },
  };
}

function openSqlite(name: 'sqlite-full' | 'sqlite-normal', dir: string, synchronous: 'FULL' | 'NORMAL', options: OpenOptions): BenchEngine {
  const db = new Database(join(dir, 'kv.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  // Negative cache_size is in KiB: the same memory budget tetradb's page cache gets.
  db.pragma(`cache_size = -${Math.floor(options.cacheBytes / 1024)}`);
  db.exec('CREATE TABLE IF NOT EXISTS kv (k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID');
  const put = db.prepare<[Buffer, Buffer]>('INSERT OR REPLACE INTO kv (k, v) VALUES (?, ?)');
  const get = db.prepare<[Buffer], Buffer>('SELECT v FROM kv WHERE k = ?').pluck();
  const range = db.prepare<[Buffer, number], [Buffer, Buffer]>('SELECT k, v FROM kv WHERE k >= ? ORDER BY k LIMIT ?').raw();
  const all = db.prepare<[], [Buffer, Buffer]>('SELECT k, v FROM kv ORDER BY k').raw();
  const loadMany = db.transaction((rows: ReadonlyArray<readonly [Buffer, Buffer]>) => {
    for (const [k, v] of rows) put.run(k, v);
  });
  return {
    name,
    syncCommit: true,
    commit(key, value) {
      put.run(key, value);
    },
    async load(rows) {
      loadMany(rows);
    },
    async settle() {
      db.pragma('wal_checkpoint(TRUNCATE)');
    },
    get(key) {
      return get.get(key);
    },
    scan(start, limit) {
      let bytes = 0;
      const rows = range.all(start, limit);
      for (const row of rows) bytes += row[1].length;
      return consumed(rows.length, bytes);
    },
    scanAll() {
      // iterate(), not all(): a million rows should stream, as tetradb's and LevelDB's do.
      let rows = 0;
      let bytes = 0;
      for (const row of all.iterate()) {
        rows++;
        bytes += row[1].length;
      }
      return consumed(rows, bytes);
    },
    stats() {
      return {};
    },
    async close() {
      db.close();
    },
  };
}

async function openLevel(dir: string, options: OpenOptions): Promise<BenchEngine> {
  const db = new ClassicLevel<Buffer, Buffer>(join(dir, 'level'), {
    keyEncoding: 'buffer',
    valueEncoding: 'buffer',
    cacheSize: options.cacheBytes,
  });
  await db.open();
  const sync = { sync: true };
  return {
    name: 'leveldb',
    syncCommit: false,
    async commit(key, value) {
      await db.put(key, value, sync);
    },
    async load(rows) {
      await db.batch(
        rows.map(([key, value]) => ({ type: 'put' as const, key, value })),
        sync,
      );
    },
    async settle() {
      // LevelDB compacts in the background on its own schedule; nothing to force.
    },
    get(key) {
      return db.getSync(key);
    },
    getAsync(key) {
      return db.get(key);
    },
    async scan(start, limit) {
      const it = db.iterator({ gte: start, limit });
      try {
        const entries = await it.nextv(limit);
        let bytes = 0;
        for (const [, value] of entries) bytes += value.length;
        return consumed(entries.length, bytes);
      } finally {
        await it.close();
      }
    },
    async scanAll() {
      const it = db.iterator();
      let rows = 0;
      let bytes = 0;
      try {
        for (;;) {
          const entries = await it.nextv(1000);
          if (entries.length === 0) break;
          rows += entries.length;
          for (const [, value] of entries) bytes += value.length;
        }
      } finally {
        await it.close();
      }
      return consumed(rows, bytes);
    },
    stats() {
      return {};
    },
    async close() {
      await db.close();
    },
  };
}
