// One adapter per SQL engine of the in-process benchmark, each used the way its own docs
// recommend, behind the surface sql-worker.ts needs: run a statement with parameters, insert a
// batch, insert one row durably. Every adapter runs the same statements (lib/sql-workload.ts).
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { loadConfig, startMemoryGovernor } from '../../server/config.js';
import { TenantStore } from '../../engine/tenant/index.js';
import type { SqlOptions, SqlOutcome, SqlStatementInput } from '../../engine/sql/sql-api.js';
import { INSERT_ORDER, multiRowInsert, SCHEMA, toQuestionMarks, type Customer, type Order } from './sql-workload.js';

export type SqlEngineName = 'tetradb' | 'sqlite' | 'pglite' | 'pg-mem' | 'alasql';
export const SQL_ENGINES: readonly SqlEngineName[] = ['tetradb', 'sqlite', 'pglite', 'pg-mem', 'alasql'];

/** What the tables say about an engine: how it commits and how its batches are written. */
export const ENGINE_NOTES: Record<SqlEngineName, { durable: string; batch: string }> = {
  tetradb: { durable: 'durable: awaits SqlOutcome.durable (fsync=batch, group commit)', batch: 'one multi-row INSERT of 1000 rows' },
  sqlite: { durable: 'durable: WAL, synchronous=FULL', batch: 'transaction of 1000 prepared single-row INSERTs (its fast path)' },
  pglite: { durable: 'NOT durable: file-backed dataDir, but its Emscripten build answers fdatasync without syncing (___syscall_fdatasync returns 0, PostgreSQL\'s WAL sync method here) and its NODEFS has no fsync', batch: 'one multi-row INSERT of 1000 rows' },
  'pg-mem': { durable: 'NOT durable: in memory only', batch: 'one multi-row INSERT of 1000 rows' },
  alasql: { durable: 'NOT durable: in memory only', batch: 'one multi-row INSERT of 1000 rows' },
};

export interface SqlBenchEngine {
  readonly name: SqlEngineName;
  /** Runs one statement; resolves to its rows (objects in column order) once it is done. */
  query(sql: string, params: readonly unknown[]): unknown[] | Promise<unknown[]>;
  /** Inserts the rows in one statement or transaction, done (durable where the engine is) when it resolves. */
  insertBatch(table: 'orders' | 'customers', rows: ReadonlyArray<Order | Customer>): void | Promise<void>;
  /** One order in its own transaction, done (durable where the engine is) when it resolves. */
  insertOne(row: Order): void | Promise<void>;
  /** Whether calls block the thread (their latency includes waiting for the ones ahead). */
  readonly sync: boolean;
  /** After the load: what a user would run before querying (ANALYZE), if anything. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

type SqlExecute = (store: TenantStore, statements: readonly SqlStatementInput[], options?: SqlOptions) => Promise<SqlOutcome>;

/** Opens engine `name` with its files (if any) under `dir`, schema created. @throws when tetradb's SQL API is not there yet */
export async function openSqlEngine(name: SqlEngineName, dir: string, cacheBytes: number): Promise<SqlBenchEngine> {
  let engine: SqlBenchEngine;
  switch (name) {
    case 'tetradb':
      engine = await openTetra(dir, cacheBytes);
      break;
    case 'sqlite':
      engine = openSqlite(dir === ':memory:' ? dir : join(dir, 'bench.sqlite'), cacheBytes);
      break;
    case 'pglite':
      engine = await openPglite(join(dir, 'pglite'));
      break;
    case 'pg-mem':
      engine = await openPgMem();
      break;
    case 'alasql':
      engine = await openAlasql();
      break;
    default: {
      const never: never = name;
      throw new Error(`unknown engine ${String(never)}`);
    }
  }
  for (const ddl of SCHEMA) await engine.query(ddl, []);
  return engine;
}

/** Flattens rows into one parameter list ($1.. in row order). */
function flat(rows: ReadonlyArray<Order | Customer>): unknown[] {
  const values: unknown[] = [];
  for (const r of rows) values.push(...r);
  return values;
}

async function openTetra(dir: string, cacheBytes: number): Promise<SqlBenchEngine> {
  // Imported at run time: the lead is writing engine/sql's sqlExecute; until it is exported the
  // tetradb rows say why they are missing instead of the benchmark failing to start.
  const sqlModule = (await import('../../engine/sql/index.js')) as unknown as { sqlExecute?: SqlExecute };
  const sqlExecute = sqlModule.sqlExecute;
  if (typeof sqlExecute !== 'function') throw new Error('sqlExecute is not exported by engine/sql/index.ts yet');
  // As the server opens a tenant: one PageCache (npm start default size and dirty budget),
  // fsync=batch, the store's defaults.
  const cache = new PageCache<TreeNode>(cacheBytes);
  const store = await TenantStore.open(dir, { fsync: 'batch', cache });
  // The memory governor as server/app.ts starts it (TETRA_MEMORY_CHECK_MS, TETRA_HEAP_GROWTH_PERCENT).
  const governor = startMemoryGovernor(cache, loadConfig(process.env, []));
  const run = async (statement: SqlStatementInput): Promise<unknown[]> => {
    const outcome = await sqlExecute(store, [statement]);
    if (outcome.durable !== undefined) await outcome.durable;
    return outcome.results[0]?.rows ?? [];
  };
  return {
    name: 'tetradb',
    sync: false,
    query: (sql, params) => run({ sql, params }),
    async insertBatch(table, rows) {
      await run({ sql: multiRowInsert(table, rows.length), params: flat(rows) });
    },
    async insertOne(row) {
      await run({ sql: INSERT_ORDER, params: row });
    },
    async settle() {
      await store.checkpoint();
    },
    async close() {
      governor?.stop();
      await store.close();
    },
  };
}

function openSqlite(file: string, cacheBytes: number): SqlBenchEngine {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  // Negative cache_size is in KiB: the memory budget tetradb's page cache gets.
  db.pragma(`cache_size = -${Math.floor(cacheBytes / 1024)}`);
  const statements = new Map<string, Database.Statement>();
  const prepared = (sql: string): Database.Statement => {
    let s = statements.get(sql);
    if (s === undefined) statements.set(sql, (s = db.prepare(toQuestionMarks(sql))));
    return s;
  };
  const insertMany = (table: 'orders' | 'customers') => {
    const insert = db.prepare(`INSERT INTO ${table} VALUES (${table === 'orders' ? '?, ?, ?, ?, ?' : '?, ?, ?, ?'})`);
    return db.transaction((rows: ReadonlyArray<Order | Customer>) => {
      for (const r of rows) insert.run(...r);
    });
  };
  let batch: Partial<Record<'orders' | 'customers', (rows: ReadonlyArray<Order | Customer>) => void>> = {};
  return {
    name: 'sqlite',
    sync: true,
    query(sql, params) {
      const s = prepared(sql);
      if (s.reader) return s.all(...params);
      s.run(...params);
      return [];
    },
    insertBatch(table, rows) {
      (batch[table] ??= insertMany(table))(rows);
    },
    insertOne(row) {
      prepared(INSERT_ORDER).run(...row);
    },
    async settle() {
      db.exec('ANALYZE');
      db.pragma('wal_checkpoint(TRUNCATE)');
    },
    async close() {
      batch = {};
      db.close();
    },
  };
}

async function openPglite(dataDir: string): Promise<SqlBenchEngine> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(dataDir);
  return {
    name: 'pglite',
    sync: false,
    async query(sql, params) {
      return (await db.query(sql, params as unknown[])).rows;
    },
    async insertBatch(table, rows) {
      await db.query(multiRowInsert(table, rows.length), flat(rows));
    },
    async insertOne(row) {
      await db.query(INSERT_ORDER, row);
    },
    async settle() {
      // Autovacuum's ANALYZE does not run inside PGlite: the planner would know nothing of the load.
      await db.exec('ANALYZE');
    },
    async close() {
      await db.close();
    },
  };
}

async function openPgMem(): Promise<SqlBenchEngine> {
  const { newDb } = await import('pg-mem');
  // Through its node-postgres adapter: what code written for `pg` runs against in tests.
  const { Client } = newDb().adapters.createPg();
  const client = new Client();
  await client.connect();
  return {
    name: 'pg-mem',
    sync: false,
    async query(sql, params) {
      return (await client.query(sql, params as unknown[])).rows as unknown[];
    },
    async insertBatch(table, rows) {
      await client.query(multiRowInsert(table, rows.length), flat(rows));
    },
    async insertOne(row) {
      await client.query(INSERT_ORDER, row);
    },
    async settle() {},
    async close() {
      await client.end();
    },
  };
}

async function openAlasql(): Promise<SqlBenchEngine> {
  const { default: alasql } = await import('alasql');
  const db = new alasql.Database();
  const exec = (sql: string, params: readonly unknown[]): unknown => db.exec(toQuestionMarks(sql), params as unknown[]);
  return {
    name: 'alasql',
    sync: true,
    query(sql, params) {
      const result = exec(sql, params);
      return Array.isArray(result) ? result : [];
    },
    insertBatch(table, rows) {
      exec(multiRowInsert(table, rows.length), flat(rows));
    },
    insertOne(row) {
      exec(INSERT_ORDER, row);
    },
    async settle() {},
    async close() {},
  };
}
