import { afterEach, describe, expect, it } from 'vitest';
import { sqlExecute, type SqlOptions } from '../../engine/sql/index.js';
import { sliceMs } from '../../engine/sql/exec/runtime.js';
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

  it('a parameter cast once per execution never leaks into another execution of the cached plan, even two running at once', async () => {
    const store = await fresh();
    const minute = (k: number): string => new Date(Date.UTC(2024, 0, 1) + k * 60_000).toISOString().slice(0, 19).replace('T', ' ');
    const day = (k: number): string => new Date(Date.UTC(2024, 0, 1) + k * 86_400_000).toISOString().slice(0, 10);
    await q(store, 'CREATE TABLE t (id int PRIMARY KEY, ts timestamp, d date)');
    for (let from = 1; from <= 40_000; from += 4000) {
      const ids = Array.from({ length: 4000 }, (_, i) => from + i);
      await q(store, `INSERT INTO t VALUES ${ids.map((k) => `(${k}, '${minute(k)}', '${day(k)}')`).join(', ')}`);
    }
    // Unknown-typed text parameters compared with typed columns: cast to the column's type.
    const range = 'SELECT count(*), min(id), max(id) FROM t WHERE ts >= $1 AND ts < $2 AND d >= $3';
    const expected = (from: number, to: number, day: number): unknown[][] => {
      const lo = Math.max(from, day);
      const hi = to - 1;
      return [[Math.max(0, hi - lo + 1), lo <= hi ? lo : null, lo <= hi ? hi : null]];
    };
    for (const [a, b, c] of [[10, 20, 0], [100, 30_000, 5_000], [30_000, 39_999, 1], [5, 5, 0]] as const) {
      expect(await q(store, range, [minute(a), minute(b), day(c)]), `${a}..${b} from day ${c}`).toEqual(expected(a, b, c));
    }
    // Two long executions of the same statement at once (each pauses mid-scan), different parameters.
    const [x, y] = await Promise.all([q(store, range, [minute(1), minute(39_000), day(2)]), q(store, range, [minute(20_000), minute(40_001), day(30_000)])]);
    expect(x).toEqual(expected(1, 39_000, 2));
    expect(y).toEqual(expected(20_000, 40_001, 30_000));
    // A parameter that does not cast still fails, every time.
    for (let i = 0; i < 2; i++) expect(await sqlstateOf(q(store, range, ['not a time', minute(2), day(0)]))).toBe('22007');
  });

  it('a cached SELECT reports its columns through one frozen list: no caller can change what the next call reports', async () => {
    const store = await fresh();
    await q(store, 'CREATE TABLE t (id int PRIMARY KEY, name text)');
    await q(store, "INSERT INTO t VALUES (1, 'a'), (2, 'b')");
    const run = async (id: number) => (await sqlExecute(store, [{ sql: 'SELECT id, name AS who FROM t WHERE id = $1', params: [id] }])).results[0]!;
    const first = await run(1);
    expect(first.columns).toEqual([{ name: 'id', type: 'int4' }, { name: 'who', type: 'text' }]);
    expect(() => first.columns.push({ name: 'x', type: 'text' })).toThrow(TypeError);
    expect(() => {
      first.columns[0]!.name = 'changed';
    }).toThrow(TypeError);
    const second = await run(2);
    expect(second.columns).toEqual([{ name: 'id', type: 'int4' }, { name: 'who', type: 'text' }]);
    expect(second.rows).toEqual([{ id: 2, who: 'b' }]);
    // Rows stay each call's own.
    (first.rows[0] as Record<string, unknown>).who = 'changed';
    expect((await run(1)).rows).toEqual([{ id: 1, who: 'a' }]);
  });

  it('types an integer parameter int4 within int4 range and int8 past it, at both edges', async () => {
    const store = await fresh();
    const typeOf = async (v: number): Promise<[string, unknown]> => {
      const r = (await sqlExecute(store, [{ sql: 'SELECT $1 + 0 AS v', params: [v] }])).results[0]!;
      return [r.columns[0]!.type, (r.rows[0] as { v: unknown }).v];
    };
    expect(await typeOf(-2_147_483_649)).toEqual(['int8', -2_147_483_649]);
    expect(await typeOf(-2_147_483_648)).toEqual(['int4', -2_147_483_648]);
    expect(await typeOf(2_147_483_647)).toEqual(['int4', 2_147_483_647]);
    expect(await typeOf(2_147_483_648)).toEqual(['int8', 2_147_483_648]);
    expect(await typeOf(-0)).toEqual(['int4', 0]);
    // int4 arithmetic overflows as PostgreSQL's does; the same value as int8 does not.
    expect(await sqlstateOf(Promise.resolve(sqlExecute(store, [{ sql: 'SELECT $1 + 1', params: [2_147_483_647] }])))).toBe('22003');
  });

  it('takes window frame offsets from parameters, computed per execution of the cached plan', async () => {
    const store = await fresh();
    await q(store, 'CREATE TABLE w (id INT PRIMARY KEY, v INT, d DATE); INSERT INTO w VALUES (1, 10, \'2024-01-01\'), (2, 20, \'2024-01-02\'), (3, 30, \'2024-01-04\'), (4, 40, \'2024-01-05\')');
    const rows = 'SELECT id, sum(v) OVER (ORDER BY id ROWS BETWEEN $1 PRECEDING AND $2 FOLLOWING) FROM w ORDER BY id';
    expect(await q(store, rows, [1, 0])).toEqual([[1, 10], [2, 30], [3, 50], [4, 70]]);
    expect(await q(store, rows, [0, 1])).toEqual([[1, 30], [2, 50], [3, 70], [4, 40]]);
    expect(await q(store, 'SELECT id, count(*) OVER (ORDER BY v RANGE BETWEEN $1 PRECEDING AND CURRENT ROW) FROM w ORDER BY id', [15])).toEqual([[1, 1], [2, 2], [3, 2], [4, 2]]);
    expect(await q(store, 'SELECT id, count(*) OVER (ORDER BY d RANGE BETWEEN $1 PRECEDING AND CURRENT ROW) FROM w ORDER BY id', ['1 day'])).toEqual([[1, 1], [2, 2], [3, 1], [4, 2]]);
    expect(await sqlstateOf(q(store, rows, [null, 0]))).toBe('22004');
    expect(await sqlstateOf(q(store, rows, [0, -1]))).toBe('22013');
  });

  it('binds parameters next to protected literals, from the parse cache too', async () => {
    const store = await fresh();
    await q(store, 'CREATE TABLE lit (id INT PRIMARY KEY, s TEXT, n NUMERIC)');
    const insert = "INSERT INTO lit VALUES ($1, 'C:\\new\\' || $2, CAST($3 AS numeric) + 0.00000000000000000001)";
    await q(store, insert, [1, 'a\\b', 1]);
    await q(store, insert, [2, "it's", '-9007199254740993']);
    const select = "SELECT id, s, n, $1 || 'x\\y' FROM lit WHERE s LIKE 'C:\\\\new%' ORDER BY id";
    for (let i = 0; i < 2; i++) {
      expect(await q(store, select, ['\\'])).toEqual([
        [1, 'C:\\new\\a\\b', '1.00000000000000000001', '\\x\\y'],
        [2, "C:\\new\\it's", '-9007199254740992.99999999999999999999', '\\x\\y'],
      ]);
    }
  });

  it('shares the slice among statements waiting for a turn, and gives it back whole when they end, however they end', async () => {
    const store = await fresh();
    await q(store, `CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t SELECT k, k % 10 FROM (${series(60_000)}) s`);
    expect(sliceMs()).toBe(8);
    // Sampled from the event loop while 8 long statements take turns: with 7 others waiting, a
    // statement's slice is 1 ms; between them it never drops below that.
    const seen = new Set<number>();
    let sampling = true;
    const sample = (): void => {
      seen.add(sliceMs());
      if (sampling) setImmediate(sample);
    };
    setImmediate(sample);
    const long = 'SELECT v, count(*), sum(id) FROM t a WHERE EXISTS (SELECT 1 FROM t b WHERE b.id = a.id) GROUP BY v';
    const results = await Promise.all(Array.from({ length: 8 }, () => q(store, long)));
    sampling = false;
    for (const r of results) expect(r).toHaveLength(10);
    expect(Math.min(...seen)).toBe(1);
    expect(sliceMs()).toBe(8);
    // Statements that fail while others wait (time limit, memory bound) release their place too.
    const failing = await Promise.all([
      sqlstateOf(q(store, 'SELECT count(*) FROM t a, t b WHERE a.id + b.id = 3', [], { timeLimitMs: 50 })),
      sqlstateOf(q(store, 'SELECT * FROM t a, t b ORDER BY a.v, b.v', [], { maxWorkBytes: 1024 * 1024 })),
      q(store, long),
    ]);
    expect(failing.slice(0, 2)).toEqual(['57014', '54000']);
    expect(sliceMs()).toBe(8);
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
