import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqlExecute } from '../../engine/sql/index.js';
import { http, signup, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let apiKey: string;
let otherKey: string;
beforeAll(async () => {
  server = await startServer();
  ({ apiKey } = await signup(server.url));
  ({ apiKey: otherKey } = await signup(server.url));
});
afterAll(() => server.stop());

const sql = <T = any>(json: unknown, key = apiKey) => http<T>(server.url, 'POST', '/api/sql/query', { json, apiKey: key });

async function ok(text: string, params?: unknown[], key = apiKey): Promise<any> {
  const res = await sql({ sql: text, ...(params ? { params } : {}) }, key);
  expect(res.status, res.text).toBe(200);
  return res.body;
}

async function sqlError(text: string, sqlstate: string, params?: unknown[]): Promise<any> {
  const res = await sql({ sql: text, ...(params ? { params } : {}) });
  expect(res.status, res.text).toBe(400);
  expect(res.body.error.code).toBe('SQL_ERROR');
  expect(res.body.error.details.sqlstate, res.body.error.message).toBe(sqlstate);
  return res.body.error;
}

describe('SQL over HTTP', () => {
  it('creates, inserts with RETURNING and selects with parameters', async () => {
    await ok('CREATE TABLE accounts (id serial PRIMARY KEY, owner text NOT NULL, balance numeric(12,2) DEFAULT 0 CHECK (balance >= 0), opened date, big bigint)');
    const ins = await ok("INSERT INTO accounts (owner, balance, opened, big) VALUES ('ada', 10.5, '2024-01-02', 9007199254740993), ('bob', 3, NULL, 1) RETURNING id, owner, balance");
    expect(ins).toEqual({ command: 'INSERT', columns: [{ name: 'id', type: 'int4' }, { name: 'owner', type: 'text' }, { name: 'balance', type: 'numeric' }], rows: [{ id: 1, owner: 'ada', balance: '10.50' }, { id: 2, owner: 'bob', balance: '3.00' }], rowCount: 2 });
    const sel = await ok('SELECT owner, opened, big FROM accounts WHERE id = $1', [1]);
    // Integers outside the safe JS range come back as strings.
    expect(sel.rows).toEqual([{ owner: 'ada', opened: '2024-01-02', big: '9007199254740993' }]);
    const arr = await sql({ sql: 'SELECT id, owner FROM accounts ORDER BY id DESC', rowMode: 'array' });
    expect(arr.body.rows).toEqual([
      [2, 'bob'],
      [1, 'ada'],
    ]);
  });

  it('answers joins, aggregates, subqueries, CTEs, set operations and window functions', async () => {
    await ok('CREATE TABLE depts (id int PRIMARY KEY, name text UNIQUE); CREATE TABLE emps (id int PRIMARY KEY, dept int REFERENCES depts(id), salary int, boss int)');
    await ok("INSERT INTO depts VALUES (1, 'eng'), (2, 'ops'), (3, 'empty'); INSERT INTO emps VALUES (1, 1, 100, NULL), (2, 1, 80, 1), (3, 2, 70, 1), (4, NULL, 50, 3)");
    expect((await ok('SELECT d.name, count(e.id) AS n, sum(e.salary) AS total FROM depts d LEFT JOIN emps e ON e.dept = d.id GROUP BY d.name HAVING count(e.id) >= 0 ORDER BY n DESC, d.name')).rows).toEqual([
      { name: 'eng', n: 2, total: 180 },
      { name: 'ops', n: 1, total: 70 },
      { name: 'empty', n: 0, total: null },
    ]);
    expect((await ok('SELECT id FROM emps e WHERE salary > (SELECT avg(salary) FROM emps) ORDER BY id')).rows).toEqual([{ id: 1 }, { id: 2 }]);
    expect((await ok('SELECT name FROM depts d WHERE NOT EXISTS (SELECT 1 FROM emps e WHERE e.dept = d.id)')).rows).toEqual([{ name: 'empty' }]);
    expect((await ok('WITH RECURSIVE chain(id, depth) AS (SELECT id, 0 FROM emps WHERE boss IS NULL UNION ALL SELECT e.id, c.depth + 1 FROM emps e JOIN chain c ON e.boss = c.id) SELECT id, depth FROM chain ORDER BY id')).rows).toEqual([
      { id: 1, depth: 0 },
      { id: 2, depth: 1 },
      { id: 3, depth: 1 },
      { id: 4, depth: 2 },
    ]);
    expect((await ok('SELECT dept FROM emps UNION SELECT id FROM depts ORDER BY 1 NULLS FIRST')).rows.map((r: any) => r.dept)).toEqual([null, 1, 2, 3]);
    expect((await ok('SELECT id, rank() OVER (ORDER BY salary DESC) AS r, sum(salary) OVER (PARTITION BY dept ORDER BY id) AS running FROM emps ORDER BY id')).rows).toEqual([
      { id: 1, r: 1, running: 100 },
      { id: 2, r: 2, running: 180 },
      { id: 3, r: 3, running: 70 },
      { id: 4, r: 4, running: 50 },
    ]);
    const plan = await ok('EXPLAIN SELECT * FROM emps WHERE id = 3');
    expect(plan.columns).toEqual([{ name: 'QUERY PLAN', type: 'text' }]);
    expect(plan.rows[0]['QUERY PLAN']).toMatch(/Primary Key Scan on emps/);
  });

  it('runs several statements as one transaction: all or nothing', async () => {
    await ok('CREATE TABLE ledger (id int PRIMARY KEY, amount int NOT NULL)');
    const failed = await sql({ sql: 'INSERT INTO ledger VALUES (1, 10); INSERT INTO ledger VALUES (2, NULL)' });
    expect(failed.status).toBe(400);
    expect(failed.body.error.details.sqlstate).toBe('23502');
    expect((await ok('SELECT count(*) AS n FROM ledger')).rows).toEqual([{ n: 0 }]);
    await ok('BEGIN; INSERT INTO ledger VALUES (1, 10); ROLLBACK');
    expect((await ok('SELECT count(*) AS n FROM ledger')).rows).toEqual([{ n: 0 }]);
    const batch = await sql({ statements: [{ sql: 'INSERT INTO ledger VALUES ($1, $2)', params: [1, 5] }, { sql: 'UPDATE ledger SET amount = amount * 2 RETURNING amount' }] });
    expect(batch.status, batch.text).toBe(200);
    expect(batch.body.results.map((r: any) => r.rowCount)).toEqual([1, 1]);
    expect(batch.body.results[1].rows).toEqual([{ amount: 10 }]);
  });

  it('never loses a concurrent update', async () => {
    await ok('CREATE TABLE counter (id int PRIMARY KEY, n int); INSERT INTO counter VALUES (1, 0)');
    await Promise.all(Array.from({ length: 40 }, () => ok('UPDATE counter SET n = n + 1 WHERE id = 1')));
    expect((await ok('SELECT n FROM counter')).rows).toEqual([{ n: 40 }]);
  });

  it('refuses an index row past the key limit with 54000, naming the index, and changes nothing', async () => {
    const long = 'w'.repeat(3000);
    await ok('CREATE TABLE wide (id text PRIMARY KEY, tag text UNIQUE, note text)');
    await ok("INSERT INTO wide VALUES ('a', 't', 'n')");
    const pk = await sqlError('INSERT INTO wide VALUES ($1, NULL, NULL)', '54000', [long]);
    expect(pk.message).toMatch(/^index row size \d+ exceeds maximum 2048 for index "wide_pkey"$/);
    const uq = await sqlError("UPDATE wide SET tag = $1 WHERE id = 'a'", '54000', [long]);
    expect(uq.message).toMatch(/for index "wide_tag_key"$/);
    await ok("INSERT INTO wide VALUES ('b', NULL, $1)", [long]);
    await sqlError('CREATE INDEX wide_note ON wide (note)', '54000');
    expect((await ok('SELECT id, tag FROM wide ORDER BY id')).rows).toEqual([{ id: 'a', tag: 't' }, { id: 'b', tag: null }]);
    await sqlError('DROP INDEX wide_note', '42704');
  });

  it('maps errors to SQL_ERROR with PostgreSQL SQLSTATEs and changes nothing', async () => {
    await ok('CREATE TABLE uniq (id int PRIMARY KEY, email text UNIQUE, parent int REFERENCES uniq(id), qty int CHECK (qty > 0))');
    await ok("INSERT INTO uniq VALUES (1, 'a@x', NULL, 1)");
    const dup = await sqlError("INSERT INTO uniq VALUES (2, 'a@x', NULL, 1)", '23505');
    expect(dup.message).toBe('duplicate key value violates unique constraint "uniq_email_key"');
    await sqlError("INSERT INTO uniq VALUES (1, 'b@x', NULL, 1)", '23505');
    await sqlError("INSERT INTO uniq VALUES (3, 'c@x', 99, 1)", '23503');
    await sqlError("INSERT INTO uniq VALUES (4, 'd@x', NULL, 0)", '23514');
    await sqlError('SELECT * FROM missing', '42P01');
    await sqlError('SELECT nope FROM uniq', '42703');
    await sqlError('SELECT 1 / 0', '22012');
    await sqlError('CREATE TABLE uniq (x int)', '42P07');
    const syntax = await sqlError('SELEC 1', '42601');
    expect(syntax.details.position).toBeGreaterThan(0);
    await sqlError('SELECT $1 + 1; SELECT 2', '42601', [1]);
    expect((await ok('SELECT count(*) AS n FROM uniq')).rows).toEqual([{ n: 1 }]);
    const bad = await sql({ sql: 'SELECT 1', statements: [{ sql: 'SELECT 2' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('VALIDATION_FAILED');
  });

  it('stores character(n) blank-padded, reports it as bpchar, and refuses too long values with 22001, changing nothing', async () => {
    await ok('CREATE TABLE fixed (code char(3) PRIMARY KEY, tag character(2) UNIQUE, label bpchar)');
    await ok("INSERT INTO fixed VALUES ('a', 'x', 'l  '), ('bc  ', 'y ', 'm')");
    const sel = await ok('SELECT code, tag, label, code = $1 AS hit FROM fixed ORDER BY code', ['a']);
    expect(sel.columns).toEqual([{ name: 'code', type: 'bpchar' }, { name: 'tag', type: 'bpchar' }, { name: 'label', type: 'bpchar' }, { name: 'hit', type: 'boolean' }]);
    expect(sel.rows).toEqual([
      { code: 'a  ', tag: 'x ', label: 'l  ', hit: true },
      { code: 'bc ', tag: 'y ', label: 'm', hit: false },
    ]);
    const long = await sqlError("INSERT INTO fixed VALUES ('abcd', 'z', NULL)", '22001');
    expect(long.message).toBe('value too long for type character(3)');
    const update = await sqlError("UPDATE fixed SET tag = 'xyz' WHERE code = 'a'", '22001');
    expect(update.message).toBe('value too long for type character(2)');
    const dup = await sqlError("INSERT INTO fixed VALUES ('bc', 'q', NULL)", '23505');
    expect(dup.message).toBe('duplicate key value violates unique constraint "fixed_pkey"');
    await sqlError("INSERT INTO fixed VALUES ('d', 'x   ', NULL)", '23505');
    const zero = await sqlError("SELECT 'a'::char(0)", '22023');
    expect(zero.message).toBe('length for type char must be at least 1');
    expect((await ok("SELECT count(*) AS n, string_agg(code || tag, ',' ORDER BY code) AS s FROM fixed")).rows).toEqual([{ n: 2, s: 'ax,bcy' }]);
  });

  it('stores bit strings, reports bit / varbit, and refuses a wrong length with 22026 or 22001, changing nothing', async () => {
    await ok('CREATE TABLE flags (id int PRIMARY KEY, b bit(4), v varbit(3))');
    await ok("INSERT INTO flags VALUES (1, B'0101', X'')");
    const sel = await ok("SELECT b, v, b & B'0110' AS m, ~b AS n, 6 # 3 AS x FROM flags");
    expect(sel.columns).toEqual([{ name: 'b', type: 'bit' }, { name: 'v', type: 'varbit' }, { name: 'm', type: 'bit' }, { name: 'n', type: 'bit' }, { name: 'x', type: 'int4' }]);
    expect(sel.rows).toEqual([{ b: '0101', v: '', m: '0100', n: '1010', x: 5 }]);
    const length = await sqlError("INSERT INTO flags VALUES (2, B'01', NULL)", '22026');
    expect(length.message).toBe('bit string length 2 does not match type bit(4)');
    const long = await sqlError("UPDATE flags SET v = B'1111'", '22001');
    expect(long.message).toBe('bit string too long for type bit varying(3)');
    const and = await sqlError("SELECT B'01' & B'011'", '22026');
    expect(and.message).toBe('cannot AND bit strings of different sizes');
    expect((await ok('SELECT id, b, v FROM flags')).rows).toEqual([{ id: 1, b: '0101', v: '' }]);
  });

  it('refuses results past the row bound instead of truncating them', async () => {
    await ok('CREATE TABLE many (i int PRIMARY KEY)');
    await ok('INSERT INTO many SELECT k FROM (WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM s WHERE k < 3000) SELECT k FROM s) q');
    expect((await ok('SELECT count(*) AS n FROM many')).rows).toEqual([{ n: 3000 }]);
    const stopped = await startServer({ sqlMaxRows: 100, sqlMaxResultBytes: 4096 });
    try {
      const { apiKey: key } = await signup(stopped.url);
      await http(stopped.url, 'POST', '/api/sql/query', { json: { sql: 'CREATE TABLE t (i int); INSERT INTO t SELECT 1 FROM (WITH RECURSIVE s(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM s WHERE k < 150) SELECT k FROM s) q' }, apiKey: key });
      const res = await http(stopped.url, 'POST', '/api/sql/query', { json: { sql: 'SELECT * FROM t' }, apiKey: key });
      expect(res.status).toBe(400);
      expect(res.body.error.details.sqlstate).toBe('54000');
      expect(res.body.error.message).toMatch(/LIMIT/);
      const limited = await http(stopped.url, 'POST', '/api/sql/query', { json: { sql: 'SELECT * FROM t LIMIT 10' }, apiKey: key });
      expect(limited.body.rowCount).toBe(10);
      // The byte bound: 90 rows fit the row bound but not 4 KiB.
      const wide = await http(stopped.url, 'POST', '/api/sql/query', { json: { sql: "SELECT i, repeat('x', 100) AS pad FROM t LIMIT 90" }, apiKey: key });
      expect(wide.status, wide.text).toBe(400);
      expect(wide.body.error.details.sqlstate).toBe('54000');
      expect(wide.body.error.message).toMatch(/LIMIT/);
    } finally {
      await stopped.stop();
    }
  });

  it('keeps tenants apart', async () => {
    await ok("CREATE TABLE private (v text); INSERT INTO private VALUES ('secret')");
    await sqlError('SELECT * FROM nothing_here', '42P01');
    const other = await sql({ sql: 'SELECT * FROM private' }, otherKey);
    expect(other.status).toBe(400);
    expect(other.body.error.details.sqlstate).toBe('42P01');
    await ok('CREATE TABLE private (v text)', undefined, otherKey);
    expect((await ok('SELECT count(*) AS n FROM private', undefined, otherKey)).rows).toEqual([{ n: 0 }]);
  });
});

describe('SQL answers as text', () => {
  it('each answer is exactly JSON.stringify of the result sqlExecute gives in process, through the lane and through Fastify', async () => {
    // The route writes a single statement's result by hand, with the column list's JSON cached
    // (server/routes/sql-routes.ts, resultJson): it must not differ from the plain serialisation
    // by a byte, for any value type, any command, and repeated calls of a cached statement.
    const { apiKey: key, tenantId } = await signup(server.url, 'text');
    await ok('CREATE TABLE v (id int PRIMARY KEY, big bigint, n numeric, f double precision, t text, b bytea, j jsonb, d date, ts timestamptz, ok boolean)', undefined, key);
    await ok(
      "INSERT INTO v VALUES (1, 9007199254740993, 12.50, 'NaN', 'quote \" back\\slash \u2028 é 😀', '\\x00ff', '{\"a\": [1, null, \"x\"]}', '2024-02-29', '2024-01-01 10:00:00+00', true), (2, NULL, -0.001, -0.0, '', NULL, 'null', NULL, NULL, false)",
      undefined,
      key,
    );
    const statements: Array<[string, unknown[]?]> = [
      ['SELECT * FROM v ORDER BY id'],
      ['SELECT * FROM v WHERE id = $1', [1]],
      ['SELECT * FROM v WHERE id = $1', [2]],
      ['SELECT * FROM v WHERE id = $1', [3]],
      ['SELECT id, f * 2 AS twice, j -> $1 AS a FROM v ORDER BY id', ['a']],
      ['SELECT count(*), sum(n), string_agg(t, $1), array_agg(id ORDER BY id) FROM v', [',']],
    ];
    const inProcess = async (text: string, params?: unknown[]): Promise<string> =>
      server.app.tetra.registry.use(tenantId, async (store) => {
        const o = await sqlExecute(store, [{ sql: text, ...(params ? { params } : {}) }]);
        return JSON.stringify(o.results[o.results.length - 1]);
      });
    for (const [text, params] of statements) {
      const want = await inProcess(text, params);
      for (let i = 0; i < 2; i++) {
        const lane = await sql({ sql: text, ...(params ? { params } : {}) }, key);
        expect(lane.status, lane.text).toBe(200);
        expect(lane.text, text).toBe(want);
      }
      // Chunked: Fastify answers it (the lane never takes a chunked body).
      const taken = server.app.tetra.lane.taken;
      const viaFastify = await http(server.url, 'POST', '/api/sql/query', { raw: JSON.stringify({ sql: text, ...(params ? { params } : {}) }), contentType: 'application/json', apiKey: key, headers: { 'transfer-encoding': 'chunked' } });
      expect(viaFastify.status, viaFastify.text).toBe(200);
      expect(viaFastify.text, text).toBe(want);
      expect(viaFastify.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(server.app.tetra.lane.taken).toBe(taken);
    }
    // Writes and DDL: the command and rowCount of an answer that has no rows.
    const update = await sql({ sql: 'UPDATE v SET ok = NOT ok WHERE id > $1', params: [0] }, key);
    expect(update.text).toBe(JSON.stringify({ command: 'UPDATE', columns: [], rows: [], rowCount: 2 }));
    const returning = await sql({ sql: "INSERT INTO v (id, t) VALUES (3, 'x') RETURNING id, t" }, key);
    expect(returning.text).toBe(JSON.stringify({ command: 'INSERT', columns: [{ name: 'id', type: 'int4' }, { name: 't', type: 'text' }], rows: [{ id: 3, t: 'x' }], rowCount: 1 }));
  });
});
