// COLLATE (engine/sql/collation.ts): "C", "POSIX", "ucs_basic" and "default" on expressions,
// columns and index elements, with PostgreSQL's derivation, errors and case mapping. Each statement
// runs in tetradb over HTTP and in PostgreSQL (PGlite) on the same data: the same rows, or the same
// SQLSTATE and message. A refused definition changes nothing: the catalog is compared after it.
import type { PGlite } from '@electric-sql/pglite';
import { beforeAll, describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';
import { oursOf, theirsOf } from './pg-outcome.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

const SETUP = [
  'CREATE TABLE t (id int PRIMARY KEY, a text, b text, n int)',
  "INSERT INTO t VALUES (1, 'É', 'é', 1), (2, 'a', 'B', 2), (3, NULL, 'x', 3), (4, 'Éa', 'b', 4)",
  // One column per collation tetradb accepts, and two that conflict (c, p).
  'CREATE TABLE tc (id int PRIMARY KEY, c text COLLATE "C", p varchar(10) COLLATE "POSIX", u char(3) COLLATE ucs_basic, d text COLLATE pg_catalog."default")',
  "INSERT INTO tc VALUES (1, 'É', 'É', 'É', 'É'), (2, 'b', 'B', 'a', 'A')",
];

beforeAll(async () => {
  expect(await oursOf(file, SETUP)).toMatchObject({ rows: expect.any(Array) });
  for (const s of SETUP) await pg.exec(s);
}, 60_000);

const CATALOG = "SELECT table_name, column_name, data_type, collation_schema, collation_name FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position";

async function compare(sql: string): Promise<void> {
  const before = await oursOf(file, [CATALOG]);
  const ours = await oursOf(file, [sql]);
  expect(ours, sql).toEqual(await theirsOf(pg, [sql]));
  if ('sqlstate' in ours) expect(await oursOf(file, [CATALOG]), `${sql} changed the catalog`).toEqual(before);
  expect(await oursOf(file, [CATALOG])).toEqual(await theirsOf(pg, [CATALOG]));
}

describe('COLLATE is accepted where it is PostgreSQL\'s code point order', () => {
  it.each([
    'SELECT a FROM t ORDER BY a COLLATE "C"',
    'SELECT a FROM t ORDER BY a COLLATE "POSIX" DESC NULLS LAST, id',
    'SELECT id FROM t WHERE a < b COLLATE "C" ORDER BY id',
    'SELECT id FROM t WHERE a COLLATE ucs_basic >= \'a\' ORDER BY id',
    'SELECT a COLLATE pg_catalog."C", a COLLATE "pg_catalog"."POSIX", a COLLATE pg_catalog.ucs_basic, a COLLATE "default" FROM t ORDER BY id',
    "SELECT 'a' COLLATE \"C\", NULL COLLATE \"C\", 'x'::char(3) COLLATE \"C\", 1::text COLLATE \"C\", $$d$$ COLLATE \"C\"",
    "SELECT ('1' COLLATE \"C\")::int, '2' COLLATE \"C\"::int",
    'SELECT (a || \'x\') COLLATE "C", lower(a) COLLATE "C", CASE WHEN a IS NULL THEN \'z\' ELSE a END COLLATE "C" FROM t ORDER BY 1',
    'SELECT a COLLATE "C" COLLATE "POSIX" FROM t ORDER BY id',
    'SELECT a COLLATE "C", count(*) FROM t GROUP BY a COLLATE "C" ORDER BY 1',
    'SELECT DISTINCT a COLLATE "C" FROM t ORDER BY 1',
    'SELECT DISTINCT ON (a COLLATE "C") a FROM t ORDER BY a COLLATE "C"',
    'SELECT id, row_number() OVER (PARTITION BY a COLLATE "C" ORDER BY b COLLATE "POSIX") FROM t ORDER BY id',
    'SELECT min(a COLLATE "C"), max(b) COLLATE "POSIX", string_agg(a, \',\' ORDER BY a COLLATE "C") FROM t',
    'SELECT a FROM t WHERE a COLLATE "C" IN (\'a\', \'Éa\') AND b COLLATE "POSIX" BETWEEN \'A\' AND \'z\' ORDER BY a',
    'SELECT id FROM t WHERE a IS DISTINCT FROM b COLLATE "C" ORDER BY id',
    'SELECT a COLLATE "C" FROM t UNION SELECT b FROM t ORDER BY 1',
    'WITH w AS (SELECT a COLLATE "C" AS x FROM t) SELECT x, x COLLATE "POSIX" FROM w ORDER BY 1',
    'SELECT s.x FROM (SELECT a COLLATE "C" AS x FROM t) s WHERE s.x < \'b\' COLLATE "POSIX" ORDER BY 1',
    // a column's collation is implicit: an explicit one wins, "default" loses to it
    'SELECT c < \'b\', c || d, c < d FROM tc ORDER BY id',
    'SELECT c COLLATE "POSIX" = p, c < p COLLATE "C" FROM tc ORDER BY id',
    'SELECT * FROM tc WHERE c COLLATE "default" = p ORDER BY id',
    // the output column is named after the operand
    'SELECT a COLLATE "C", lower(a) COLLATE "C", (a) COLLATE "C" FROM t WHERE id = 1',
  ])('%s', async (sql) => {
    await compare(sql);
  });
});

describe('case mapping follows the collation: ASCII letters only under "C", "POSIX", "ucs_basic"', () => {
  it.each([
    'SELECT lower(a COLLATE "C"), upper(b COLLATE "POSIX"), initcap(a COLLATE ucs_basic), lower(a COLLATE "default"), initcap(a) FROM t ORDER BY id',
    "SELECT lower('ÀÉÎ' COLLATE \"C\"), upper('àéî ß' COLLATE \"POSIX\"), initcap('élan vital' COLLATE ucs_basic), initcap('élan vital')",
    'SELECT lower(c), lower(p), lower(u), lower(d), upper(c), initcap(c) FROM tc ORDER BY id',
    // the derivation carries the collation through functions, CASE, COALESCE, subqueries, aggregates
    'SELECT lower(a COLLATE "C" || \'É\'), lower(coalesce(a COLLATE "C", \'x\')), lower(CASE WHEN true THEN a COLLATE "C" END) FROM t ORDER BY id',
    'SELECT lower(x) FROM (SELECT a COLLATE "C" AS x FROM t) s ORDER BY 1',
    'SELECT lower(x) FROM (SELECT a COLLATE "C" FROM t UNION SELECT b FROM t) s(x) ORDER BY 1',
    "SELECT lower(x) FROM (VALUES ('É' COLLATE \"C\"), ('À')) v(x) ORDER BY 1",
    'SELECT lower(min(a COLLATE "C")), lower(string_agg(a COLLATE "C", \',\' ORDER BY id)), lower(max(c)) FROM t, tc',
    'SELECT lower((SELECT c FROM tc WHERE id = 1)), lower((SELECT c FROM tc WHERE id = 1) COLLATE "default")',
    // ILIKE, ~*, regexp_replace, regexp_match
    "SELECT 'ÉcoleA' COLLATE \"C\" ILIKE 'écolea', 'ÉcoleA' ILIKE 'écolea', 'ÉCOLE' COLLATE \"C\" ILIKE 'École', 'É' COLLATE \"C\" NOT ILIKE 'é', 'É' COLLATE \"C\" ~~* 'é'",
    "SELECT 'aA%' COLLATE \"C\" ILIKE 'AA\\%', 'ab' COLLATE \"C\" ILIKE 'Ab' ESCAPE 'a', 'b' COLLATE \"C\" ILIKE 'Ab' ESCAPE 'a', 'a%' COLLATE \"C\" ILIKE 'aA%' ESCAPE 'A'",
    'SELECT c ILIKE \'é\', c ~* \'é\', d ~* \'é\', u ~* \'^A\' FROM tc ORDER BY id',
    "SELECT 'É' COLLATE \"C\" ~* 'é', 'E' COLLATE \"C\" ~* 'e', 'é' COLLATE \"C\" ~* 'É', 'É' COLLATE \"C\" !~* 'é'",
    "SELECT 'ABC' COLLATE \"C\" ~* '^[a-c]+$', 'abc' COLLATE \"C\" ~* '^[A-C]+$', 'Z' COLLATE \"C\" ~* '[^z]', '[' COLLATE \"C\" ~* '[Z-a]', 'A' COLLATE \"C\" ~* '[Z-a]', 'Ü' COLLATE \"C\" ~* '[ü-ü]'",
    "SELECT 'Ab' COLLATE \"C\" ~* '\\x61\\u0042', 'a{2}' COLLATE \"C\" ~* 'A{2}', 'aa' COLLATE \"C\" ~* 'A{2}', 'AB' COLLATE \"C\" ~* '(?:a)b', 'tab\tX' COLLATE \"C\" ~* '\\tx'",
    "SELECT regexp_replace('ÉEeé' COLLATE \"C\", 'e', 'x', 'gi'), regexp_replace('ÉEeé' COLLATE \"C\", 'é', 'x', 'gi'), regexp_replace('ÉEeé', 'é', 'x', 'gi')",
    "SELECT regexp_match('FooBAR' COLLATE \"C\", 'o+b', 'i')::text, regexp_match('FÖÖ' COLLATE \"C\", 'ö+', 'i')::text, regexp_match('FÖÖ', 'ö+', 'i')::text",
  ])('%s', async (sql) => {
    await compare(sql);
  });
});

describe('PostgreSQL\'s errors', () => {
  it.each([
    // a type without collations, checked before the name
    'SELECT 1 COLLATE "C"',
    'SELECT -n COLLATE "C" FROM t',
    'SELECT n COLLATE "xx" FROM t',
    'SELECT n FROM t ORDER BY n COLLATE "C"',
    "SELECT jsonb_build_object('a', 1) COLLATE \"C\"",
    // names: unquoted ones fold to lower case; schemas; too many parts
    'SELECT a COLLATE "xx" FROM t',
    'SELECT a COLLATE C FROM t',
    'SELECT a COLLATE posix FROM t',
    'SELECT a COLLATE "c" FROM t',
    'SELECT a COLLATE public."C" FROM t',
    'SELECT a COLLATE pg_catalog."xx" FROM t',
    'SELECT a COLLATE nosuch."C" FROM t',
    'SELECT a COLLATE x.y.z FROM t',
    "SELECT 'a' COLLATE a.b.c.d",
    // two explicit collations, wherever they meet
    'SELECT a COLLATE "C" < b COLLATE "POSIX" FROM t',
    'SELECT a COLLATE "C" || b COLLATE "POSIX" FROM t',
    "SELECT 'a' COLLATE \"default\" < 'b' COLLATE \"C\"",
    'SELECT greatest(a COLLATE "C", b COLLATE "POSIX") FROM t',
    'SELECT lower(a COLLATE "C") < b COLLATE "ucs_basic" FROM t',
    'SELECT a COLLATE "C" FROM t UNION SELECT b COLLATE "POSIX" FROM t',
    // two implicit ones: an error where a collation is needed (when it runs, or in a sort key)
    'SELECT c < p FROM tc',
    'SELECT c = p FROM tc',
    'SELECT c || p FROM tc ORDER BY id',
    'SELECT lower(c || p) FROM tc',
    'SELECT (c || p) ILIKE \'x\' FROM tc',
    'SELECT (c || p) ~ \'x\' FROM tc',
    'SELECT c || p FROM tc ORDER BY 1',
    'SELECT DISTINCT c || p FROM tc',
    'SELECT c FROM tc UNION SELECT p FROM tc',
    'SELECT c FROM tc UNION ALL SELECT p FROM tc',
    'SELECT c FROM tc UNION ALL SELECT p FROM tc ORDER BY 1',
    // a column made of such a conflict has no collation: it fails where it alone decides one
    'SELECT x FROM (SELECT c FROM tc UNION ALL SELECT p FROM tc) s(x) ORDER BY 1',
    'SELECT lower(x) FROM (SELECT c FROM tc UNION ALL SELECT p FROM tc) s(x)',
    'SELECT x FROM (SELECT c FROM tc UNION ALL SELECT p FROM tc) s(x) GROUP BY 1',
    'SELECT DISTINCT x FROM (SELECT c FROM tc UNION ALL SELECT p FROM tc) s(x)',
    "SELECT x || 'a', x < 'b', x COLLATE \"C\" FROM (SELECT c FROM tc UNION ALL SELECT p FROM tc) s(x) ORDER BY 1, 2, 3",
    'SELECT c < p FROM tc WHERE false',
    // joined on columns of two collations: the join compares
    'SELECT a.id FROM tc a JOIN tc b ON a.c = b.p',
    'SELECT a.id FROM tc a JOIN tc b ON a.c = b.p COLLATE "C" ORDER BY 1',
    'SELECT lower(k) FROM (SELECT c AS k FROM tc) x JOIN (SELECT p AS k FROM tc) y USING (k)',
    'SELECT lower(k) FROM (SELECT c AS k FROM tc) x FULL JOIN (SELECT p AS k FROM tc) y USING (k)',
    // COLLATE default is a syntax error (a reserved word)
    "SELECT 'a' COLLATE default",
  ])('%s', async (sql) => {
    const ours = await oursOf(file, [sql]);
    const theirs = await theirsOf(pg, [sql]);
    // Syntax errors: the SQLSTATE only (the parser words its message otherwise).
    if ('sqlstate' in theirs && theirs.sqlstate === '42601') expect(ours).toMatchObject({ sqlstate: '42601' });
    else expect(ours, sql).toEqual(theirs);
  });
});

describe('column and index collations', () => {
  it.each([
    'CREATE TABLE k1 (s text COLLATE "C" NOT NULL DEFAULT \'a\', v varchar(5) COLLATE "POSIX", w char(2) COLLATE ucs_basic PRIMARY KEY, x text COLLATE "default")',
    'CREATE TABLE k2 (s text DEFAULT \'e\' COLLATE "C", CHECK (s COLLATE "POSIX" > \'a\'), m text DEFAULT (\'x\' COLLATE "POSIX"))',
    'CREATE TABLE k3 (n int COLLATE "C")',
    'CREATE TABLE k4 (n text COLLATE "xx")',
    'CREATE TABLE k5 (n int COLLATE "xx")',
    'CREATE TABLE k6 (n text COLLATE C)',
    'CREATE TABLE k7 (n text COLLATE nosuch."C")',
    'ALTER TABLE k1 ADD COLUMN f text COLLATE "C"',
    'ALTER TABLE k1 ADD COLUMN g int COLLATE "C"',
    'ALTER TABLE k1 ADD COLUMN g text COLLATE "xx"',
    'CREATE INDEX k1s ON k1 (s COLLATE "POSIX")',
    'CREATE INDEX k1n ON t (n COLLATE "C")',
    'CREATE INDEX k1x ON k1 (s COLLATE "xx")',
    "INSERT INTO k1 VALUES ('É', 'É', 'É', 'É', 'É') RETURNING lower(s), lower(v), lower(w), lower(x), lower(f)",
    "UPDATE k1 SET x = lower(s) || lower(x) RETURNING x",
    'SELECT s < v, lower(s || x) FROM k1',
    "INSERT INTO k2 DEFAULT VALUES RETURNING lower(s || 'É'), lower(m || 'É')",
  ])('%s', async (sql) => {
    await compare(sql);
  });
});

// Collations PostgreSQL's catalog has and tetradb does not: their order or case mapping is not
// tetradb's (PGlite's "en_US" happens to order by code point; a glibc one does not).
describe('other collations PostgreSQL has are refused as unsupported', () => {
  it.each([
    ['SELECT a FROM t ORDER BY a COLLATE "en_US"', 'en_US'],
    ['SELECT lower(a COLLATE "C.utf8") FROM t', 'C.utf8'],
    ['SELECT a COLLATE pg_catalog.pg_c_utf8 FROM t', 'pg_c_utf8'],
    ['SELECT a COLLATE "und-x-icu" FROM t', 'und-x-icu'],
    ['CREATE TABLE r1 (s text COLLATE "en_US")', 'en_US'],
  ])('%s', async (sql, name) => {
    const before = await oursOf(file, [CATALOG]);
    expect(await oursOf(file, [sql])).toEqual({ sqlstate: '0A000', message: `unsupported: collation "${name}" (text is ordered by code point: "C", "POSIX", "ucs_basic" and "default" are supported)` });
    expect(await oursOf(file, [CATALOG])).toEqual(before);
  });

  it('a back reference in a case-insensitive regular expression under "C" (PostgreSQL matches it across ASCII cases)', async () => {
    expect(await oursOf(file, ["SELECT 'abAb' COLLATE \"C\" ~* '(a)b\\1'"])).toEqual({
      sqlstate: '0A000',
      message: 'unsupported: a back reference in a case-insensitive regular expression under collation "C", "POSIX" or "ucs_basic"',
    });
  });
});
