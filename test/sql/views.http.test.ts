// Views (engine/sql/exec/views.ts): CREATE [OR REPLACE] VIEW, reading views anywhere a table can
// be read, what depends on them (DROP TABLE / DROP VIEW / DROP COLUMN refused or CASCADE, ALTER
// COLUMN TYPE refused), renames carried into the queries that read what was renamed, ALTER VIEW,
// the catalogs that list them, writes through simple views (view-writes.ts), transactions and a
// restart. Each statement runs in tetradb over HTTP and in PostgreSQL (PGlite) with the same
// outcome (rows, or SQLSTATE, message, DETAIL and HINT).
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { afterRestart, alikeFull, oursOf } from './pg-outcome.js';
import { http, serverForFile, signup, type FileServer } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

/** Each statement on both, in order, with the same outcome; the SQLSTATEs of those refused. */
const alike = (statements: string[], on: FileServer = file): Promise<string[]> => alikeFull(pg, on, statements);

describe('views', () => {
  it('are read as their query, wherever a table can be read', async () => {
    const refused = await alike([
      'CREATE TABLE t (a int PRIMARY KEY, b text, c int)',
      'CREATE TABLE u (id int PRIMARY KEY, t_a int REFERENCES t (a), note varchar(20))',
      "INSERT INTO t VALUES (1, 'x', 10), (2, 'y', 20), (3, 'z', 30)",
      "INSERT INTO u VALUES (1, 1, 'one'), (2, 1, 'uno'), (3, 3, 'three')",
      'CREATE VIEW big AS SELECT * FROM t WHERE a > 1',
      'SELECT * FROM big ORDER BY a',
      'CREATE VIEW tu AS SELECT t.a, t.b, u.note FROM t JOIN u ON u.t_a = t.a',
      'SELECT * FROM tu ORDER BY a, note',
      'CREATE VIEW agg AS SELECT b, count(*) AS n, sum(c) AS total FROM t GROUP BY b',
      'SELECT * FROM agg ORDER BY b',
      'CREATE VIEW top2 AS SELECT a, c FROM t ORDER BY c DESC LIMIT 2',
      'SELECT * FROM top2',
      'SELECT * FROM top2 WHERE a > 2',
      'CREATE VIEW uu AS SELECT x.id, x.note, y.b FROM u x LEFT JOIN t y ON y.a = x.t_a',
      'SELECT * FROM uu ORDER BY id',
      'CREATE VIEW un AS SELECT a FROM t UNION SELECT c FROM t',
      'SELECT * FROM un ORDER BY 1',
      // Views of views, joins with tables and views, subqueries, CTEs, aliases.
      'CREATE VIEW tu2 (k, label) AS SELECT a, note FROM tu WHERE a < 3',
      'SELECT * FROM tu2 ORDER BY 1, 2',
      'SELECT v.k, w.total FROM tu2 v JOIN agg w ON w.b = (SELECT b FROM t WHERE a = v.k) ORDER BY 1, 2',
      'SELECT count(*) FROM tu JOIN agg ON agg.b = tu.b',
      'WITH q AS (SELECT * FROM tu) SELECT count(*) FROM q',
      'SELECT (SELECT count(*) FROM tu), EXISTS (SELECT 1 FROM agg WHERE n > 0)',
      'SELECT * FROM t WHERE a IN (SELECT a FROM tu) ORDER BY a',
      'SELECT big.a, big.b FROM big WHERE big.c = 20',
      'SELECT * FROM big b2 WHERE b2.a = 3',
      // Columns: names as the query gives them (?column? too), types, a column list, defaults of types.
      "CREATE VIEW sel AS SELECT 'lit' AS k, 1.5::numeric AS n, now() IS NOT NULL AS ok, NULL AS nothing, a + 1 FROM t WHERE a = 1",
      'CREATE VIEW twice AS SELECT 1 + 1, 2 * 3',
      'SELECT * FROM sel',
      'SELECT pg_typeof(k), pg_typeof(n), pg_typeof(nothing) FROM sel',
      'CREATE VIEW w1 AS SELECT * FROM (SELECT a, c FROM t) s WHERE s.c > 10',
      'SELECT * FROM w1 ORDER BY 1',
      'CREATE VIEW w2 AS SELECT s.*, 1 AS one FROM (SELECT a, c FROM t) s',
      'SELECT * FROM w2 ORDER BY 1',
      'CREATE VIEW j AS SELECT * FROM t JOIN u ON u.t_a = t.a',
      'SELECT * FROM j ORDER BY id',
      'CREATE VIEW j2 AS SELECT * FROM t NATURAL JOIN (SELECT 1 AS a) s',
      'SELECT * FROM j2',
      'CREATE VIEW j3 AS SELECT * FROM u JOIN (SELECT a AS t_a, b FROM t) s USING (t_a)',
      'SELECT * FROM j3 ORDER BY id',
      // `*` is written out when the view is made: a column added later is not one of its columns.
      'ALTER TABLE t ADD COLUMN d int DEFAULT 7',
      'SELECT * FROM big ORDER BY a',
      'SELECT * FROM w2 ORDER BY 1',
      // Refused as PostgreSQL refuses them.
      'CREATE VIEW big AS SELECT 1',
      'CREATE TABLE big (x int)',
      'CREATE VIEW t AS SELECT 1',
      'CREATE INDEX big ON t (a)',
      'CREATE SEQUENCE big',
      'CREATE VIEW v4 (x, y, z) AS SELECT a, b FROM t',
      'CREATE VIEW v5 AS SELECT a, a FROM t',
      'CREATE VIEW v6 AS SELECT *, a FROM t',
      'CREATE VIEW v7 AS SELECT $1',
      'CREATE VIEW v8 AS SELECT * FROM nope',
      'CREATE VIEW v10 AS SELECT nope FROM t',
      'CREATE VIEW other.v11 AS SELECT 1',
      'CREATE INDEX ON big (a)',
      'TRUNCATE big',
      'ALTER TABLE big ADD COLUMN z int',
      'ALTER TABLE big DROP COLUMN a',
    ]);
    expect(refused).toEqual(['42701', '42P07', '42P07', '42P07', '42P07', '42P07', '42601', '42701', '42701', '42P02', '42P01', '42703', '3F000', '42809', '42809', '42809', '42809']);
  });

  it('take a query\'s conditions into their own where that keeps the answer, so they reach the tables\' indexes', async () => {
    const refused = await alike([
      'CREATE TABLE pc (id int PRIMARY KEY, name text, region text)',
      'CREATE TABLE po (id int PRIMARY KEY, pc_id int, amount float8, status text)',
      'CREATE INDEX po_pc ON po (pc_id)',
      "INSERT INTO pc SELECT g, 'c' || g, 'r' || (g % 3) FROM generate_series(1, 50) g",
      "INSERT INTO po SELECT g, 1 + g % 50, g * 1.5, CASE WHEN g % 2 = 0 THEN 'paid' ELSE 'open' END FROM generate_series(1, 500) g",
      "CREATE VIEW paid AS SELECT o.id, o.amount, c.region FROM po o JOIN pc c ON c.id = o.pc_id WHERE o.status = 'paid'",
      'SELECT amount, region FROM paid WHERE id = 10',
      'SELECT amount, region FROM paid WHERE id = 11',
      "SELECT count(*) FROM paid WHERE region = 'r1' AND amount > 100",
      'SELECT p.id FROM paid p WHERE p.id BETWEEN 10 AND 14 ORDER BY 1',
      'SELECT * FROM paid v JOIN pc c ON c.region = v.region WHERE v.id = 20 ORDER BY c.id LIMIT 3',
      'SELECT (SELECT amount FROM paid WHERE id = o.id) FROM po o WHERE o.id < 5 ORDER BY o.id',
      'SELECT o.id FROM po o WHERE EXISTS (SELECT 1 FROM paid p WHERE p.id = o.id AND p.amount > 740) ORDER BY 1',
      'SELECT id FROM paid WHERE id IN (SELECT id FROM po WHERE amount < 6) ORDER BY 1',
      // Not taken in (the answer would change): a volatile column, aggregates, LIMIT, DISTINCT, UNION.
      'CREATE VIEW pr AS SELECT id, random() AS x FROM po',
      'SELECT count(*) FROM pr WHERE id = 1 AND x >= 0 AND x < 1',
      'CREATE VIEW pa AS SELECT pc_id, count(*) AS n FROM po GROUP BY pc_id',
      'SELECT * FROM pa WHERE pc_id = 3 AND n > 1',
      'CREATE VIEW pl AS SELECT id FROM po ORDER BY id LIMIT 5',
      'SELECT * FROM pl WHERE id > 2',
      'CREATE VIEW pd AS SELECT DISTINCT status FROM po',
      "SELECT * FROM pd WHERE status = 'paid'",
      'CREATE VIEW pu AS SELECT id FROM po WHERE id < 3 UNION ALL SELECT id FROM po WHERE id < 2',
      'SELECT * FROM pu WHERE id = 1',
    ]);
    expect(refused).toEqual([]);
    // The point lookup through the view reads the primary key, not the whole join.
    const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql: 'EXPLAIN SELECT amount, region FROM paid WHERE id = $1', params: [10] }, apiKey: file.apiKey });
    expect(JSON.stringify(res.body.rows)).toContain('Primary Key Scan on po');
  });

  it('OR REPLACE keeps what reads the view, and only adds columns at the end', async () => {
    const refused = await alike([
      'CREATE TABLE r (a int PRIMARY KEY, b text)',
      "INSERT INTO r VALUES (1, 'one'), (2, 'two')",
      'CREATE VIEW rv AS SELECT a, b FROM r',
      'CREATE VIEW rw AS SELECT a FROM rv',
      // Read before the replacement: plans made for the old query are not used after it.
      'SELECT * FROM rv',
      'SELECT * FROM rw WHERE a = 1',
      'CREATE OR REPLACE VIEW rv AS SELECT a, b, length(b) AS len FROM r WHERE a > 1',
      'SELECT * FROM rv',
      'SELECT * FROM rw',
      'SELECT * FROM rw WHERE a = 1',
      'CREATE OR REPLACE VIEW rv AS SELECT a FROM r',
      'CREATE OR REPLACE VIEW rv AS SELECT a AS z, b, length(b) AS len FROM r',
      'CREATE OR REPLACE VIEW rv AS SELECT a::bigint AS a, b, length(b) AS len FROM r',
      'CREATE OR REPLACE VIEW r AS SELECT 1',
      'CREATE OR REPLACE VIEW rnew AS SELECT 1 AS one',
      'SELECT * FROM rnew',
      // A view replaced by a query that reads itself: PostgreSQL takes it, and every read fails.
      'CREATE OR REPLACE VIEW rnew AS SELECT one FROM rnew',
      'SELECT * FROM rnew',
      'DROP VIEW rnew',
    ]);
    expect(refused).toEqual(['42P16', '42P16', '42P16', '42809', '42P17']);
  });

  it('refuses to drop what a view reads, or drops the views with it (CASCADE)', async () => {
    const refused = await alike([
      'CREATE TABLE d (a int PRIMARY KEY, b text, c int, spare int)',
      'CREATE TABLE dc (id int PRIMARY KEY, d_a int REFERENCES d (a))',
      "INSERT INTO d VALUES (1, 'x', 10, 0)",
      'CREATE VIEW dv AS SELECT a, b FROM d',
      'CREATE VIEW dw AS SELECT a FROM dv',
      'CREATE VIEW dx AS SELECT d.a, dc.id FROM d JOIN dc ON dc.d_a = d.a',
      'CREATE VIEW dcount AS SELECT count(*) FROM d',
      'DROP TABLE d',
      'DROP TABLE d, dc',
      'DROP VIEW dv, dcount',
      'DROP VIEW dv',
      'DROP VIEW dv RESTRICT',
      'DROP TABLE dv',
      'DROP VIEW d',
      'DROP VIEW nope',
      'DROP VIEW IF EXISTS nope, dcount',
      'SELECT * FROM dcount',
      // Columns: one a view reads cannot be dropped or change type; the others can.
      'ALTER TABLE d DROP COLUMN b',
      'ALTER TABLE d DROP COLUMN spare',
      'ALTER TABLE d ALTER COLUMN b TYPE varchar(10)',
      'ALTER TABLE d ALTER COLUMN c TYPE bigint',
      'SELECT * FROM dv',
      'ALTER TABLE d DROP COLUMN b CASCADE',
      'SELECT * FROM dv',
      'SELECT * FROM dw',
      'SELECT table_name FROM information_schema.views WHERE table_schema = $$public$$ ORDER BY 1',
      'DROP VIEW dx',
      'CREATE VIEW dv AS SELECT a FROM d',
      'CREATE VIEW dw AS SELECT a FROM dv',
      'DROP VIEW dv CASCADE',
      'SELECT * FROM dw',
      'CREATE VIEW dx AS SELECT d.a, dc.id FROM d JOIN dc ON dc.d_a = d.a',
      'DROP TABLE d CASCADE',
      'SELECT * FROM dx',
      "SELECT constraint_name FROM information_schema.table_constraints WHERE table_name = 'dc' AND constraint_type = 'FOREIGN KEY'",
      "INSERT INTO dc VALUES (1, 42) RETURNING *",
    ]);
    expect(refused).toEqual(['2BP01', '2BP01', '2BP01', '2BP01', '2BP01', '42809', '42809', '42P01', '42P01', '2BP01', '0A000', '42P01', '42P01', '42P01', '42P01']);
  });

  it('record the columns they read in aggregates, conditions and subqueries', async () => {
    const refused = await alike([
      'CREATE TABLE dep (a int PRIMARY KEY, b text, c int, d int, e int, spare int)',
      'CREATE TABLE dep2 (id int PRIMARY KEY, dep_a int, z int, spare int)',
      'CREATE VIEW dg AS SELECT b, count(*), sum(c) FROM dep GROUP BY b',
      'CREATE VIEW dg2 AS SELECT count(*) FROM dep WHERE d > 1',
      'CREATE VIEW dg3 AS SELECT max(e) FROM dep',
      'CREATE VIEW dg4 AS SELECT dep.a, (SELECT max(z) FROM dep2 WHERE dep2.dep_a = dep.a) FROM dep',
      'ALTER TABLE dep DROP COLUMN b',
      'ALTER TABLE dep DROP COLUMN c',
      'ALTER TABLE dep DROP COLUMN d',
      'ALTER TABLE dep DROP COLUMN e',
      'ALTER TABLE dep2 DROP COLUMN z',
      'ALTER TABLE dep2 DROP COLUMN dep_a',
      'ALTER TABLE dep DROP COLUMN spare',
      'ALTER TABLE dep2 DROP COLUMN spare',
      'ALTER TABLE dep2 DROP COLUMN z CASCADE',
      'SELECT * FROM dg4',
    ]);
    expect(refused).toEqual(['2BP01', '2BP01', '2BP01', '2BP01', '2BP01', '2BP01', '42P01']);
  });

  it('carries renames of tables, columns, views and view columns into the queries that read them', async () => {
    const refused = await alike([
      'CREATE TABLE rt (a int PRIMARY KEY, b text, c int)',
      'CREATE TABLE ru (id int PRIMARY KEY, rt_a int, note text)',
      "INSERT INTO rt VALUES (1, 'x', 10), (2, 'y', 20)",
      "INSERT INTO ru VALUES (1, 1, 'one'), (2, 2, 'two')",
      'CREATE VIEW r1 AS SELECT * FROM rt WHERE c > 5',
      'CREATE VIEW r2 AS SELECT x.id, x.note, y.b FROM ru x LEFT JOIN rt y ON y.a = x.rt_a',
      'CREATE VIEW r3 AS SELECT rt.b, ru.note FROM rt, ru WHERE ru.rt_a = rt.a',
      'CREATE VIEW r4 AS SELECT b, (SELECT count(*) FROM ru WHERE ru.rt_a = rt.a) AS n FROM rt',
      'CREATE VIEW r5 AS SELECT b AS bee FROM r1',
      'ALTER TABLE rt RENAME COLUMN b TO bb',
      'SELECT * FROM r1 ORDER BY a',
      'SELECT * FROM r2 ORDER BY id',
      'SELECT * FROM r3 ORDER BY 1',
      'SELECT * FROM r4 ORDER BY 1',
      'SELECT * FROM r5 ORDER BY 1',
      'ALTER TABLE rt RENAME TO rtt',
      'ALTER TABLE ru RENAME COLUMN note TO memo',
      'SELECT * FROM r1 ORDER BY a',
      'SELECT * FROM r2 ORDER BY id',
      'SELECT * FROM r3 ORDER BY 1',
      'SELECT * FROM r4 ORDER BY 1',
      'DROP TABLE rt',
      'DROP TABLE rtt',
      // Views renamed, by ALTER VIEW and by ALTER TABLE; their columns too.
      'ALTER VIEW r1 RENAME TO r1b',
      'SELECT * FROM r5 ORDER BY 1',
      // A view's columns keep the names they were made with (r1's b reads rt's bb).
      'ALTER TABLE r1b RENAME COLUMN bb TO b3',
      'ALTER TABLE r1b RENAME COLUMN b TO b3',
      'SELECT * FROM r1b ORDER BY a',
      'SELECT * FROM r5 ORDER BY 1',
      'ALTER VIEW r1b RENAME COLUMN b3 TO b4',
      'ALTER VIEW r1b RENAME COLUMN a TO c',
      'ALTER VIEW r1b RENAME COLUMN nope TO b5',
      'SELECT b4 FROM r1b ORDER BY 1',
      'ALTER TABLE IF EXISTS r1b RENAME TO r1',
      'SELECT * FROM r1 ORDER BY a',
      'ALTER VIEW r1 RENAME TO rtt',
      'ALTER VIEW rtt RENAME TO x',
      'ALTER VIEW nope RENAME TO n2',
      'ALTER VIEW IF EXISTS nope RENAME TO n2',
      'SELECT table_name FROM information_schema.views WHERE table_schema = $$public$$ ORDER BY 1',
    ]);
    expect(refused).toEqual(['42P01', '2BP01', '42703', '42701', '42703', '42P07', '42809', '42P01']);
  });

  it('WITH [CASCADED | LOCAL] CHECK OPTION: rows written through a view must pass its conditions', async () => {
    const refused = await alike([
      'CREATE TABLE ck (a int PRIMARY KEY, b text, c int DEFAULT 5)',
      'CREATE VIEW ckv AS SELECT a, b FROM ck WHERE a > 0 WITH CHECK OPTION',
      "INSERT INTO ckv VALUES (1, 'x')",
      "INSERT INTO ckv VALUES (-1, 'y')",
      'UPDATE ckv SET a = -a WHERE a = 1',
      // A view without the option over one with it: the one under it still checks.
      'CREATE VIEW ckw AS SELECT a, b FROM ckv WHERE a < 100',
      "INSERT INTO ckw VALUES (200, 'z')",
      "INSERT INTO ckw VALUES (-5, 'z')",
      'CREATE VIEW ckl AS SELECT a, b FROM ckv WHERE a < 100 WITH LOCAL CHECK OPTION',
      "INSERT INTO ckl VALUES (-5, 'z')",
      "INSERT INTO ckl VALUES (500, 'z')",
      // CASCADED checks the views under it, which have no option of their own; LOCAL does not.
      'CREATE VIEW ckn AS SELECT a FROM ck WHERE a > 0',
      'CREATE VIEW ckc AS SELECT a FROM ckn WHERE a < 10 WITH CASCADED CHECK OPTION',
      'INSERT INTO ckc VALUES (-1)',
      'INSERT INTO ckc VALUES (11)',
      'INSERT INTO ckc VALUES (7) RETURNING *',
      'CREATE VIEW ckloc AS SELECT a FROM ckn WHERE a < 10 WITH LOCAL CHECK OPTION',
      'INSERT INTO ckloc VALUES (-2)',
      // Innermost first; NULL fails as false does; ON CONFLICT DO UPDATE and UPDATE ... FROM are checked.
      'CREATE VIEW ck1 AS SELECT a, b FROM ck WHERE a > 0 WITH CHECK OPTION',
      'CREATE VIEW ck2 AS SELECT a, b FROM ck1 WHERE a > 10 WITH CHECK OPTION',
      "INSERT INTO ck2 VALUES (-5, 'x')",
      'CREATE VIEW ck5 AS SELECT x.a AS aa, x.b FROM ck x WHERE x.b <> $$no$$ WITH CHECK OPTION',
      "INSERT INTO ck5 VALUES (40, 'no')",
      'INSERT INTO ck5 VALUES (40, NULL)',
      "INSERT INTO ck5 VALUES (40, 'yes')",
      "UPDATE ck5 SET b = 'no' FROM ck y WHERE y.a = ck5.aa",
      "UPDATE ck5 SET b = 'ok' FROM ck y WHERE y.a = ck5.aa AND ck5.aa = 40 RETURNING *",
      "INSERT INTO ckv VALUES (2, 'q') ON CONFLICT (a) DO UPDATE SET a = -2 RETURNING *",
      "INSERT INTO ckv VALUES (2, 'q') ON CONFLICT (a) DO UPDATE SET a = -2",
      "INSERT INTO ckv VALUES (2, 'q') ON CONFLICT (a) DO UPDATE SET a = -20",
      "INSERT INTO ckv VALUES (1, 'dup')",
      'CREATE VIEW ckg AS SELECT a, count(*) FROM ck GROUP BY a WITH CHECK OPTION',
      'CREATE VIEW cknu AS SELECT a * 2 AS a2 FROM ck WITH CHECK OPTION',
      "SELECT table_name, check_option FROM information_schema.views WHERE table_name LIKE 'ck%' ORDER BY 1",
      'SELECT * FROM ck ORDER BY a',
    ]);
    // ckloc's -2 passes (LOCAL checks only its own condition), so the ON CONFLICT update to -2
    // breaks the primary key (23505) before the check option is tested, as in PostgreSQL.
    expect(refused).toEqual([...Array(11).fill('44000'), '23505', '44000', '23505', '0A000', '0A000']);
  });

  it('take comments (COMMENT ON VIEW, COMMENT ON COLUMN), read back by obj_description and col_description', async () => {
    const refused = await alike([
      'CREATE TABLE cmt (a int PRIMARY KEY, b text)',
      'CREATE VIEW cmv AS SELECT a, b FROM cmt',
      "COMMENT ON VIEW cmv IS 'the view'",
      "COMMENT ON COLUMN cmv.b IS 'the b'",
      "SELECT obj_description('cmv'::regclass, 'pg_class'), col_description('cmv'::regclass, 2), col_description('cmv'::regclass, 1)",
      "COMMENT ON VIEW cmt IS 'x'",
      "COMMENT ON TABLE cmv IS 'x'",
      "COMMENT ON VIEW nope IS 'x'",
      "COMMENT ON COLUMN cmv.nope IS 'x'",
      'CREATE OR REPLACE VIEW cmv AS SELECT a, b, a + 1 AS c FROM cmt',
      "SELECT obj_description('cmv'::regclass, 'pg_class'), col_description('cmv'::regclass, 2)",
      'ALTER VIEW cmv RENAME COLUMN b TO bb',
      "SELECT col_description('cmv'::regclass, 2)",
      'COMMENT ON VIEW cmv IS NULL',
      "SELECT obj_description('cmv'::regclass, 'pg_class')",
    ]);
    expect(refused).toEqual(['42809', '42809', '42P01', '42703']);
  });

  it('information_schema.view_table_usage and view_column_usage list what each view reads', async () => {
    const refused = await alike([
      'CREATE TABLE vt (a int PRIMARY KEY, b text, c int)',
      'CREATE TABLE vu (id int PRIMARY KEY, vt_a int)',
      'CREATE VIEW vv AS SELECT vt.a, vu.id FROM vt JOIN vu ON vu.vt_a = vt.a WHERE vt.c > 0',
      'CREATE VIEW vw AS SELECT a FROM vv',
      'CREATE VIEW vw2 AS SELECT count(*) FROM vv WHERE id > 1',
      'CREATE VIEW vw3 AS SELECT * FROM vv',
      'CREATE VIEW vw4 AS SELECT x.a FROM vv x JOIN vt ON vt.a = x.a WHERE x.id = 1',
      "SELECT view_name, table_name FROM information_schema.view_table_usage WHERE view_name LIKE 'v%' ORDER BY view_name, table_name",
      "SELECT view_name, table_name, column_name FROM information_schema.view_column_usage WHERE view_name LIKE 'v%' ORDER BY view_name, table_name, column_name",
      'ALTER VIEW vv RENAME COLUMN a TO aa',
      'ALTER TABLE vu RENAME COLUMN vt_a TO t_a',
      "SELECT view_name, table_name, column_name FROM information_schema.view_column_usage WHERE view_name LIKE 'v%' ORDER BY view_name, table_name, column_name",
    ]);
    expect(refused).toEqual([]);
  });

  it('are listed by information_schema.tables, .views and .columns, and pg_views', async () => {
    const refused = await alike([
      'CREATE TABLE ct (a int PRIMARY KEY, b text, c numeric, d bigint, e boolean, f timestamp)',
      'CREATE VIEW cv AS SELECT a, b, c, d, e, f, a::float8 AS g FROM ct',
      'CREATE VIEW cw (x) AS SELECT a FROM cv',
      "SELECT table_name, table_type FROM information_schema.tables WHERE table_name IN ('ct', 'cv', 'cw') ORDER BY 1",
      "SELECT table_name, column_name, ordinal_position, column_default, is_nullable, data_type, numeric_precision, numeric_scale, is_identity, is_generated FROM information_schema.columns WHERE table_name IN ('cv', 'cw') ORDER BY table_name, ordinal_position",
      "SELECT table_catalog IS NOT NULL, table_schema, table_name, check_option, is_trigger_updatable, is_trigger_deletable, is_trigger_insertable_into FROM information_schema.views WHERE table_name IN ('cv', 'cw') ORDER BY 1",
      "SELECT schemaname, viewname FROM pg_views WHERE viewname IN ('cv', 'cw') ORDER BY 2",
    ]);
    expect(refused).toEqual([]);
    // The definition as written (PostgreSQL prints its own rendering of the query: docs/sql.md).
    const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql: "SELECT definition FROM pg_views WHERE viewname = 'cw'" }, apiKey: file.apiKey });
    expect(res.body.rows).toEqual([{ definition: 'SELECT a FROM cv' }]);
  });

  it('are made and dropped within the request transaction, and survive a restart', async () => {
    // A view made by a request that fails afterwards is gone with it; DROP rolled back leaves it.
    expect(await oursOf(file, ['CREATE TABLE xt (a int)', 'CREATE VIEW xv AS SELECT a FROM xt', 'SELECT 1 / 0'])).toMatchObject({ sqlstate: '22012' });
    expect(await oursOf(file, ['SELECT * FROM xv'])).toMatchObject({ sqlstate: '42P01' });
    expect(await oursOf(file, ['CREATE TABLE xt (a int)', "INSERT INTO xt VALUES (1)", 'CREATE VIEW xv AS SELECT a FROM xt'])).toHaveProperty('rows');
    expect(await oursOf(file, ['BEGIN', 'DROP VIEW xv', 'ROLLBACK', 'SELECT * FROM xv'])).toEqual({ rows: [[], [], [], [['1']]] });
    expect(await oursOf(file, ['BEGIN', 'SAVEPOINT s', 'DROP TABLE xt CASCADE', 'ROLLBACK TO s', 'SELECT * FROM xv', 'COMMIT'])).toEqual({ rows: [[], [], [], [], [['1']], []] });
    // Another tenant sees none of them.
    const other = { server: file.server, apiKey: (await signup(file.server.url)).apiKey } as FileServer;
    expect(await oursOf(other, ['SELECT * FROM xv'])).toMatchObject({ sqlstate: '42P01' });
    expect(await oursOf(other, ["SELECT count(*) FROM information_schema.views WHERE table_schema = 'public'"])).toEqual({ rows: [[['0']]] });

    await afterRestart(
      pg,
      ['CREATE TABLE pt (a int PRIMARY KEY, b text)', "INSERT INTO pt VALUES (1, 'one'), (2, 'two')", 'CREATE VIEW pv (k, v) AS SELECT a, upper(b) FROM pt WHERE a > 1', 'CREATE VIEW pw AS SELECT * FROM pv'],
      async (after) => {
        const refused = await alike(['SELECT * FROM pw', "INSERT INTO pt VALUES (3, 'three')", 'SELECT * FROM pv ORDER BY k', 'DROP TABLE pt', 'ALTER TABLE pt RENAME COLUMN b TO bb', 'SELECT * FROM pw ORDER BY k', "SELECT viewname FROM pg_views WHERE viewname IN ('pv', 'pw') ORDER BY 1"], after);
        expect(refused).toEqual(['2BP01']);
      },
    );
  });

  it('take INSERT, UPDATE and DELETE through a simple view, as PostgreSQL\'s automatically updatable views', async () => {
    const refused = await alike([
      'CREATE TABLE acct (id serial PRIMARY KEY, "Name" text NOT NULL, email text UNIQUE, deleted boolean DEFAULT false, score int DEFAULT 0)',
      'CREATE VIEW live (who, mail, id) AS SELECT "Name", email, id FROM acct WHERE NOT deleted',
      "INSERT INTO live (who, mail) VALUES ('Ann', 'ann@x') RETURNING *",
      "INSERT INTO live VALUES ('Bob', 'bob@x') RETURNING id, who || '!' AS shout",
      "INSERT INTO live VALUES ('Cy', 'cy@x', 10), ('Di', 'di@x', DEFAULT) RETURNING *",
      'INSERT INTO live DEFAULT VALUES',
      "INSERT INTO live (who) VALUES ('Ed') RETURNING *",
      // A row the view does not show can be written through it (no CHECK OPTION), as in PostgreSQL.
      "UPDATE live SET who = 'Hid' WHERE id = 5 RETURNING *",
      'SELECT * FROM acct ORDER BY id',
      'UPDATE live SET mail = upper(mail) WHERE who IN (SELECT who FROM live WHERE id < 3) RETURNING *',
      "UPDATE live SET (who, mail) = ('Ann2', 'a2@x') WHERE id = 1 RETURNING *",
      'UPDATE live SET id = 100 WHERE id = 10 RETURNING id',
      "DELETE FROM live USING acct a2 WHERE a2.id = live.id AND a2.score = 0 AND live.who = 'Bob' RETURNING live.*, a2.score",
      "DELETE FROM live WHERE who = 'Di'",
      // ON CONFLICT names the view's columns; EXCLUDED is the view's row.
      "INSERT INTO live (who, mail) VALUES ('Zed', 'ann@x') ON CONFLICT (mail) DO UPDATE SET who = excluded.who || '+' RETURNING *",
      "INSERT INTO live (who, mail) VALUES ('Zed', 'a2@x') ON CONFLICT (mail) DO UPDATE SET who = live.who || excluded.who RETURNING *",
      "INSERT INTO live (who, mail) VALUES ('Q', 'q@x') ON CONFLICT (mail) WHERE mail LIKE 'q%' DO NOTHING RETURNING who",
      "INSERT INTO live (who, mail) VALUES ('Zed', 'ann@x') ON CONFLICT ON CONSTRAINT acct_email_key DO NOTHING",
      // A view of a view, down to the table; columns the view computes are read-only.
      'CREATE VIEW top (n, m) AS SELECT who, mail FROM live WHERE mail IS NOT NULL',
      "INSERT INTO top VALUES ('Nest', 'nest@x') RETURNING *",
      "UPDATE top SET m = 'n@x' WHERE n = 'Nest' RETURNING *",
      "DELETE FROM top WHERE n = 'Nest' RETURNING n, m",
      'CREATE VIEW calc AS SELECT x.id, x.score + 1 AS s1, x."Name" FROM acct x',
      "UPDATE calc SET \"Name\" = 'X' WHERE s1 = 1 AND id = 1 RETURNING *",
      "INSERT INTO calc (\"Name\") VALUES ('Calc') RETURNING *",
      "INSERT INTO calc (\"Name\", id) SELECT 'Sel' || id, id + 1000 FROM acct WHERE id < 3 RETURNING *",
      'INSERT INTO calc VALUES (7, 8)',
      'UPDATE calc SET s1 = 2',
      'DELETE FROM calc WHERE s1 > 100',
      "UPDATE calc AS c SET \"Name\" = upper(c.\"Name\") FROM acct a WHERE a.id = c.id AND c.id = 1 RETURNING c.*, a.score",
      "UPDATE calc SET \"Name\" = \"Name\" FROM acct a WHERE a.id = calc.id",
      'SELECT * FROM acct ORDER BY id',
      "INSERT INTO live (who, nope) VALUES ('a', 'b')",
      'UPDATE live SET nope = 1',
      "INSERT INTO live VALUES ('a', 'b', 1, 2)",
      'UPDATE live SET who = NULL WHERE id = 1',
      // Views that are not automatically updatable: 55000 with PostgreSQL's DETAIL and HINT.
      'CREATE VIEW nd AS SELECT DISTINCT score FROM acct',
      'INSERT INTO nd VALUES (1)',
      'CREATE VIEW ng AS SELECT score, count(*) FROM acct GROUP BY score',
      'UPDATE ng SET score = 1',
      'CREATE VIEW nh AS SELECT score FROM acct GROUP BY score HAVING count(*) > 1',
      'DELETE FROM nh',
      'CREATE VIEW nj AS SELECT a.id FROM acct a JOIN acct b USING (id)',
      'DELETE FROM nj',
      'CREATE VIEW nl AS SELECT id FROM acct LIMIT 1',
      'DELETE FROM nl',
      'CREATE VIEW nu AS SELECT id FROM acct UNION SELECT 1',
      'DELETE FROM nu',
      'CREATE VIEW nw AS WITH q AS (SELECT 1) SELECT id FROM acct',
      'DELETE FROM nw',
      'CREATE VIEW nc AS SELECT 1 AS one',
      'DELETE FROM nc',
      'CREATE VIEW na AS SELECT max(id) FROM acct',
      'DELETE FROM na',
      'CREATE VIEW nwin AS SELECT id, row_number() OVER () FROM acct',
      'UPDATE nwin SET id = 1',
      'CREATE VIEW n2 AS SELECT score * 2 AS s2 FROM acct',
      'INSERT INTO n2 VALUES (1)',
      'UPDATE n2 SET s2 = 1',
      'DELETE FROM n2 WHERE s2 = 2',
      "SELECT table_name, is_updatable, is_insertable_into FROM information_schema.views WHERE table_name IN ('live', 'top', 'calc', 'nd', 'ng', 'nj', 'nc', 'na', 'nwin', 'n2') ORDER BY 1",
      'SELECT * FROM acct ORDER BY id',
    ]);
    expect(refused).toEqual(['23502', '42704', '0A000', '0A000', '42702', '42703', '42703', '42601', '23502', '55000', '55000', '55000', '55000', '55000', '55000', '55000', '55000', '55000', '55000', '55000', '55000']);
  });

});
