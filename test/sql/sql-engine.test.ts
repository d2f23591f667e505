import { afterEach, describe, expect, it } from 'vitest';
import { sqlExecute, type SqlOptions } from '../../engine/sql/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { TetraError } from '../../engine/errors.js';
import { storeOptions } from '../helpers/store-fixture.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';

const newDir = dirsRemovedAfterEach();
let open: TenantStore[] = [];
afterEach(async () => {
  for (const s of open) if (!s.closed) await s.close();
  open = [];
});

async function fresh(): Promise<TenantStore> {
  const store = await TenantStore.open(newDir('sql-engine'), storeOptions(new (await import('../../engine/storage/index.js')).PageCache(64 << 20)));
  open.push(store);
  return store;
}

async function q(store: TenantStore, sql: string, params?: unknown[], options?: SqlOptions): Promise<unknown[]> {
  const o = await sqlExecute(store, [{ sql, ...(params ? { params } : {}) }], { rowMode: 'array', ...options });
  await o.durable;
  return o.results[o.results.length - 1]!.rows;
}

async function sqlstateOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(TetraError);
    return String((err as TetraError).details?.['sqlstate']);
  }
  return 'no error';
}

const series = (n: number): string => `SELECT k FROM generate_series(1, ${n}) AS k`;

describe('SQL execution', () => {
  it('a long read yields to the event loop and sees one state while writes commit meanwhile', async () => {
    const store = await fresh();
    await q(store, `CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t SELECT k, k FROM (${series(60_000)}) s`);
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const read = q(store, 'SELECT count(*), sum(v) FROM t a WHERE EXISTS (SELECT 1 FROM t b WHERE b.id = a.id)');
    // Writers commit while the read runs; none of their rows may show up in it.
    const writes = (async () => {
      for (let i = 0; i < 20; i++) await q(store, 'INSERT INTO t VALUES ($1, 1)', [100_000 + i]);
    })();
    const [rows] = await Promise.all([read, writes]);
    clearInterval(ticker);
    expect(rows).toEqual([[60_000, (60_000 * 60_001) / 2]]);
    expect(turns).toBeGreaterThan(0);
    expect(await q(store, 'SELECT count(*) FROM t')).toEqual([[60_020]]);
  });

  it('cancels a statement past the time limit (57014) and bounds sorts and hash tables (54000)', async () => {
    const store = await fresh();
    await q(store, `CREATE TABLE t (id int PRIMARY KEY, s text); INSERT INTO t SELECT k, repeat('x', 100) FROM (${series(20_000)}) q`.replace("repeat('x', 100)", "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx' || k"));
    expect(await sqlstateOf(q(store, 'SELECT count(*) FROM t a, t b WHERE a.id + b.id = 3', [], { timeLimitMs: 50 }))).toBe('57014');
    expect(await sqlstateOf(q(store, 'SELECT * FROM t ORDER BY s DESC', [], { maxWorkBytes: 1024 * 1024 }))).toBe('54000');
    expect(await sqlstateOf(q(store, 'SELECT s, count(*) FROM t GROUP BY s', [], { maxWorkBytes: 1024 * 1024 }))).toBe('54000');
    // A transaction's pending changes are bounded too, and a refused one changes nothing.
    expect(await sqlstateOf(q(store, `INSERT INTO t SELECT k + 100000, 'y' FROM (${series(20_000)}) s`, [], { maxTxnBytes: 1024 * 1024 }))).toBe('54000');
    expect(await q(store, 'SELECT count(*) FROM t')).toEqual([[20_000]]);
    // Under the same bound, a top-k sort and an index-backed read still answer.
    expect(await q(store, 'SELECT id FROM t ORDER BY s DESC LIMIT 2', [], { maxWorkBytes: 1024 * 1024 })).toEqual([[9999], [9998]]);
    expect(await q(store, 'SELECT count(*) FROM t WHERE id BETWEEN 10 AND 19', [], { maxWorkBytes: 1024 * 1024 })).toEqual([[10]]);
  });

  it('keeps what was committed across a reopen, and DDL with it', async () => {
    const dir = newDir('sql-reopen');
    let store = await TenantStore.open(dir, storeOptions());
    await q(store, "CREATE TABLE t (id serial PRIMARY KEY, name text UNIQUE); CREATE INDEX t_name ON t (name); INSERT INTO t (name) VALUES ('a'), ('b')");
    await q(store, 'ALTER TABLE t ADD COLUMN n int DEFAULT 7');
    await store.close();
    store = await TenantStore.open(dir, storeOptions());
    open.push(store);
    expect(await q(store, 'SELECT id, name, n FROM t ORDER BY id')).toEqual([
      [1, 'a', 7],
      [2, 'b', 7],
    ]);
    expect(await q(store, "INSERT INTO t (name) VALUES ('c') RETURNING id")).toEqual([[3]]);
    expect(await sqlstateOf(q(store, "INSERT INTO t (name) VALUES ('a')"))).toBe('23505');
  });
});

describe('parameter casts as select items', () => {
  // node-sql-parser hands `SELECT $1::int` over as a bare cast node; the cast must not be lost
  // (it was: the parameter came back uncast, as text). Expected answers are PostgreSQL's.
  it('casts, names and types the item as PostgreSQL does', async () => {
    const store = await fresh();
    const result = async (sql: string, params: unknown[]) => {
      const o = await sqlExecute(store, [{ sql, params }], { rowMode: 'array' });
      return o.results[0]!;
    };
    const one = await result('SELECT $1::int', ['5']);
    expect(one.columns).toEqual([{ name: 'int4', type: 'int4' }]);
    expect(one.rows).toEqual([[5]]);
    expect(await sqlstateOf(result('SELECT $1::int', ['x']))).toBe('22P02');
    const aliased = await result('SELECT $1::int AS a, 2 AS b ORDER BY a', ['7']);
    expect(aliased.columns).toEqual([{ name: 'a', type: 'int4' }, { name: 'b', type: 'int4' }]);
    expect(aliased.rows).toEqual([[7, 2]]);
    await q(store, "CREATE TABLE t (id int PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'x'), (2, 'y')");
    expect((await result('SELECT $1::bigint AS n, v FROM t ORDER BY id', ['9007199254740993'])).rows).toEqual([['9007199254740993', 'x'], ['9007199254740993', 'y']]);
  });
});
