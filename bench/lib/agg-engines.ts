// One adapter per engine of the aggregation benchmark (aggregate.bench.ts), behind the surface
// aggregate-worker.ts needs: load a collection, run a pipeline of lib/agg-workload.ts (MQL for
// tetradb and mingo, its SQL for PGlite and PostgreSQL), read a write's target back. Every engine
// holds the same documents (lib/documents.ts makeQueryDocument) and the 12 `cities`, with
// indexes on email, joined and cities.name where it has indexes.
import { join } from 'node:path';
import pg from 'pg';
import { docsAggregate, docsCreateIndex, docsInsert } from '../../engine/docs/index.js';
import { SPILL_DIR, SpillArea } from '../../engine/storage/index.js';
import { CITIES_COLLECTION, COLLECTION, MERGE_TARGET, OUT_TARGET, paramsFor, type AggCall, type AggPipeline, type Doc, type PipelineName, type SqlTables, type WriteTarget } from './agg-workload.js';
import { openTetraTenant, type TetraSettings } from './docs-engines.js';
import { postgresPssMiB } from './http-servers.js';

export type AggEngineName = 'tetradb' | 'mingo' | 'pglite' | 'postgres';
/** In the order they run at each size: the answers of the first one that answers a pipeline check the others'. */
export const AGG_ENGINES: readonly AggEngineName[] = ['tetradb', 'mingo', 'pglite', 'postgres'];

/** What the tables say about each engine: how its writes are kept, its indexes, how it answers. */
export const ENGINE_NOTES: Record<AggEngineName, string> = {
  tetradb:
    'docsInsert / docsAggregate over a TenantStore opened as the server opens a tenant; every insert awaited until durable (WAL fsync, group commit), and a $merge or $out resolves only once its writes are durable, as the route answers. Indexes on email, joined and cities.name; a leading $match goes to the query planner',
  mingo:
    "NOT durable, no storage: `aggregate(array, pipeline)` over a plain array (mingo is a query library: no indexes, every pipeline scans), $lookup through its collectionResolver. Its $merge and $out would only write into JavaScript arrays, so it has no rows for them",
  pglite:
    "PostgreSQL compiled to WebAssembly, in process (@electric-sql/pglite), file-backed; NOT durable: its Emscripten build answers fdatasync without syncing. Table `(id text PRIMARY KEY, doc jsonb)`, expression indexes on (doc->>'email'), ((doc->>'joined')::bigint) and cities' (doc->>'name'); VACUUM ANALYZE after the load",
  postgres:
    "the system's PostgreSQL server over a local TCP connection (node-postgres, one client), synchronous_commit on: every insert, $merge and $out transaction durable when it returns. Same tables and indexes as PGlite; VACUUM ANALYZE after the load. Its memory is the PSS of all its processes (shared buffers once), sampled from /proc; the server is shared with other work on this host",
};

/**
 * Answers an engine is known to get wrong, and why. The pipeline is still answered and checked:
 * while its answers differ it is reported with this reason instead of timed (and instead of
 * stopping the engine); once they agree, it is timed as any other.
 */
export const KNOWN_DIFFERENCES: Partial<Record<AggEngineName, Partial<Record<PipelineName, string>>>> = {
  mingo: {
    bucket: 'mingo puts a value equal to an inner boundary in the bucket below it (its $bucket uses findInsertIndex); MongoDB puts it in the bucket that boundary starts (docs/mql.md)',
  },
};

export interface AggBenchEngine {
  readonly name: AggEngineName;
  /** Inserts one batch into `collection`; done (durable where the engine is) when it resolves. */
  insertMany(collection: typeof COLLECTION | typeof CITIES_COLLECTION, docs: readonly Doc[]): Promise<void>;
  /** Whether it can run pipeline `p` at all (mingo has no storage to write into). */
  supports(p: AggPipeline): boolean;
  /** Runs one call of `p`: its answer (none for a write, done and durable where the engine is when it resolves). */
  run(p: AggPipeline, call: AggCall): Promise<Doc[]> | Doc[];
  /** Every document of a write pipeline's target. */
  readBack(target: WriteTarget): Promise<Doc[]>;
  /** After the load: what a user would do before querying (tetradb: checkpoint; PostgreSQL: VACUUM ANALYZE). */
  settle(): Promise<void>;
  /** Extra figures sampled with memory (tetradb: cache and dirty bytes; PostgreSQL: its server's PSS). */
  memoryExtra?(): Record<string, number>;
  close(): Promise<void>;
}

export interface AggEngineOptions {
  tetra: TetraSettings;
  /** The PostgreSQL server's connection string. */
  pgUrl: string;
}

/** Opens engine `name` with its files (if any) under `dir`, collections and indexes created. */
export async function openAggEngine(name: AggEngineName, dir: string, options: AggEngineOptions): Promise<AggBenchEngine> {
  switch (name) {
    case 'tetradb':
      return openTetra(dir, options.tetra);
    case 'mingo':
      return openMingo();
    case 'pglite':
      return openPglite(join(dir, 'pglite'));
    case 'postgres':
      return openPostgres(options.pgUrl);
    default: {
      const never: never = name;
      throw new Error(`unknown engine ${String(never)}`);
    }
  }
}

async function openTetra(dir: string, settings: TetraSettings): Promise<AggBenchEngine> {
  const tenant = await openTetraTenant(dir, settings);
  const store = tenant.store;
  // Queries past the blocking bound spill as the server's do (server/app.ts): a spill area in the
  // data directory, bounded per query.
  const spill = settings.mqlSpillBytes > 0 ? new SpillArea(join(dir, SPILL_DIR), settings.mqlSpillBytes) : undefined;
  await spill?.removeLeftovers();
  const memory = { maxBlockingBytes: settings.mqlBlockingBytes, spill };
  // $lookup reads the foreign collection with {name: {$in: [...]}}: indexed, as a MongoDB user would.
  await (await docsCreateIndex(store, CITIES_COLLECTION, { name: 1 })).durable;
  return {
    name: 'tetradb',
    async insertMany(collection, docs) {
      await docsInsert(store, collection, docs).durable;
    },
    supports: () => true,
    async run(_p, call) {
      return (await docsAggregate(store, COLLECTION, call.pipeline, { memory })).documents;
    },
    async readBack(target) {
      return (await docsAggregate(store, target, [], { memory })).documents;
    },
    async settle() {
      await store.checkpoint();
    },
    memoryExtra: tenant.memoryExtra,
    close: tenant.close,
  };
}

async function openMingo(): Promise<AggBenchEngine> {
  const { aggregate } = await import('mingo');
  const collections: Record<string, Doc[]> = { [COLLECTION]: [], [CITIES_COLLECTION]: [] };
  const options = { collectionResolver: (name: string) => collections[name] ?? [] };
  return {
    name: 'mingo',
    async insertMany(collection, docs) {
      const into = collections[collection]!;
      for (const d of docs) into.push(d);
    },
    supports: (p) => p.target === undefined && p.needsIndexes !== true,
    run(p, call) {
      if (p.target !== undefined) throw new Error('mingo has no storage: no $merge or $out');
      return aggregate(collections[COLLECTION]!, call.pipeline, options) as Doc[];
    },
    async readBack() {
      throw new Error('mingo has no storage: no $merge or $out');
    },
    async settle() {},
    async close() {},
  };
}

/** What the two PostgreSQL adapters need of their driver. */
interface SqlSession {
  query(text: string, params: readonly unknown[]): Promise<Doc[]>;
  /** Runs the statements in one transaction, each with the parameters it names. */
  transaction(statements: ReadonlyArray<{ text: string; params: unknown[] }>): Promise<void>;
  close(): Promise<void>;
}

/** The DDL of the SQL engines' tables: one JSONB document per row, keyed by its _id. */
function schema(t: SqlTables): string[] {
  const tables = [t.people, t.cities, t[MERGE_TARGET], t[OUT_TARGET]];
  return [
    ...tables.map((name) => `CREATE TABLE ${name} (id text PRIMARY KEY, doc jsonb NOT NULL)`),
    `CREATE INDEX ${t.people}_email ON ${t.people} ((doc->>'email'))`,
    `CREATE INDEX ${t.people}_joined ON ${t.people} (((doc->>'joined')::bigint))`,
    `CREATE INDEX ${t.cities}_name ON ${t.cities} ((doc->>'name'))`,
  ];
}

/** A multi-row INSERT of `rows` documents into `table` ($1, $2 per row: id, doc). */
function insertSql(table: string, rows: number): string {
  const values = Array.from({ length: rows }, (_, i) => `($${2 * i + 1}, $${2 * i + 2}::jsonb)`);
  return `INSERT INTO ${table} (id, doc) VALUES ${values.join(', ')}`;
}

/** The adapter over a PostgreSQL session: the pipelines' SQL, the same for PGlite and the server. */
async function sqlEngine(name: 'pglite' | 'postgres', session: SqlSession, t: SqlTables, extra?: () => Record<string, number>): Promise<AggBenchEngine> {
  for (const ddl of schema(t)) await session.query(ddl, []);
  const tableOf = { [COLLECTION]: t.people, [CITIES_COLLECTION]: t.cities };
  return {
    name,
    async insertMany(collection, docs) {
      const params: unknown[] = [];
      for (const d of docs) params.push(String(d['_id']), JSON.stringify(d));
      await session.query(insertSql(tableOf[collection], docs.length), params);
    },
    supports: () => true,
    async run(p, call) {
      const statements = p.sql(t);
      if (p.target === undefined) {
        // A row of the single column `doc` is that document; else the row is the answer document.
        const rows = await session.query(statements[0]!, paramsFor(statements[0]!, call.params));
        return rows.map((r) => (Object.keys(r).length === 1 && 'doc' in r ? (r['doc'] as Doc) : r));
      }
      // A single statement commits alone (autocommit); several in one transaction.
      if (statements.length === 1) await session.query(statements[0]!, paramsFor(statements[0]!, call.params));
      else await session.transaction(statements.map((text) => ({ text, params: paramsFor(text, call.params) })));
      return [];
    },
    async readBack(target) {
      return (await session.query(`SELECT doc FROM ${t[target]}`, [])).map((r) => r['doc'] as Doc);
    },
    async settle() {
      // What a PostgreSQL user runs after a bulk load: ANALYZE, or the planner knows nothing of it
      // (autovacuum may not have come by yet; PGlite runs none), and VACUUM, or the first reads set
      // every row's hint bits and write the pages back while they are timed.
      await session.query('VACUUM ANALYZE', []);
    },
    ...(extra === undefined ? {} : { memoryExtra: extra }),
    close: () => session.close(),
  };
}

const PLAIN_TABLES: SqlTables = { people: 'people', cities: 'cities', [MERGE_TARGET]: MERGE_TARGET, [OUT_TARGET]: OUT_TARGET };

async function openPglite(dataDir: string): Promise<AggBenchEngine> {
  const { PGlite } = await import('@electric-sql/pglite');
  const db = await PGlite.create(dataDir);
  return sqlEngine(
    'pglite',
    {
      query: async (text, params) => (await db.query<Doc>(text, params as unknown[])).rows,
      async transaction(statements) {
        await db.transaction(async (tx) => {
          for (const s of statements) await tx.query(s.text, s.params);
        });
      },
      close: () => db.close(),
    },
    PLAIN_TABLES,
  );
}

async function openPostgres(url: string): Promise<AggBenchEngine> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  // The server may be shared (other benchmarks, other runs): this worker's tables carry its pid,
  // and are dropped when it closes.
  const prefix = `aggbench_${process.pid}_`;
  const t: SqlTables = { people: `${prefix}people`, cities: `${prefix}cities`, [MERGE_TARGET]: `${prefix}${MERGE_TARGET}`, [OUT_TARGET]: `${prefix}${OUT_TARGET}` };
  const query = async (text: string, params: readonly unknown[]): Promise<Doc[]> => (await client.query<Doc>(text, params as unknown[])).rows;
  return sqlEngine(
    'postgres',
    {
      query,
      async transaction(statements) {
        await client.query('BEGIN');
        try {
          for (const s of statements) await client.query(s.text, s.params);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
      },
      async close() {
        try {
          await client.query(`DROP TABLE IF EXISTS ${Object.values(t).join(', ')}`);
        } finally {
          await client.end();
        }
      },
    },
    t,
    // The server's processes, as the benchmarks over HTTP measure them (NaN when /proc does not show them).
    () => ({ serverPssMiB: postgresPssMiB() }),
  );
}
