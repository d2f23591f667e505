// Default output column names (engine/sql/exec/column-names.ts) against PostgreSQL (PGlite):
// rows come back keyed by these names over HTTP, and the slt runner compares values and types
// only, so the names are checked here, statement by statement.
import type { PGlite } from '@electric-sql/pglite';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateSelectExpressions, sqlExecute } from '../../engine/sql/index.js';
import { PageCache } from '../../engine/storage/index.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { storeOptions } from '../helpers/store-fixture.js';
import { tempDir } from '../helpers/temp-dir.js';
import { usePglite } from './sql-pg-support.js';

let pg: PGlite;
usePglite((db) => {
  pg = db;
});

const SETUP = [
  'CREATE TABLE t (id INT PRIMARY KEY, a INT, s TEXT, d DATE, j JSONB)',
  "INSERT INTO t VALUES (1, 10, 'Ab', '2024-01-02', '{\"k\": 1}')",
  'CREATE TABLE u (id INT PRIMARY KEY, v INT)',
  'INSERT INTO u VALUES (1, 100)',
];

// Unaliased items: columns, functions (and the grammar's special forms), casts, typed literals,
// CASE, subqueries, operators.
const EXPRESSIONS = [
  'a', 't.a', '(a)', 'lower(s)', 'upper(lower(s))', 'length(s)', 'char_length(s)', 'coalesce(a, 1)', 'nullif(a, 1)', 'greatest(a, 2)', 'least(a, 2)',
  'CASE WHEN a > 1 THEN 1 END', 'CASE WHEN a > 1 THEN 1 ELSE a END', 'CASE WHEN a > 1 THEN a ELSE 1::int END', 'CASE a WHEN 1 THEN s ELSE lower(s) END',
  'extract(year FROM d)', "date '2024-01-01'", "interval '1 day'", "interval '1' day", "timestamp '2024-01-01'", "timestamptz '2024-01-01 00:00+00'",
  "trim(leading 'x' FROM s)", "trim(trailing 'x' FROM s)", "trim(both 'x' FROM s)", 'trim(s)', 'btrim(s)', 'ltrim(s)', 'rtrim(s)',
  'a::int', 'a::text', 'a::bigint', 'a::int8', 'a::float8', 'a::double precision', 'a::numeric(5,2)', 'CAST(a AS smallint)', '(a)::text', 'upper(s)::text', 'd::timestamp',
  '1::int', '1::integer', '1::bigint', '1::smallint', "'x'::text", "'1'::int::text", "CAST('x' AS varchar)", "'1.5'::decimal", "'t'::boolean", "'1'::float", "'1'::numeric",
  "'2024-01-01'::date", "'1 day'::interval", "'{}'::jsonb", "'2024-01-01'::timestamp with time zone",
  'a + 1', '-a', 'NOT true', '(NOT (a > 13))', "COALESCE(s, 'zz')", 'a IS NULL', 'a IS DISTINCT FROM 1', 'a BETWEEN 1 AND 2', 'a BETWEEN SYMMETRIC 1 AND 2', "s LIKE 'a%'", 'a IN (1, 2)', "s || 'x'", "j->'k'", "j->>'k'",
  '1', "'x'", 'true', 'NULL', '$$x$$',
  '(SELECT 1)', '(SELECT v FROM u)', '(SELECT v AS w FROM u)', '(SELECT lower(s) FROM t)', 'EXISTS (SELECT 1)', 'NOT EXISTS (SELECT 1)', 'a IN (SELECT v FROM u)',
  'now()', 'current_date', 'current_timestamp', "date_trunc('day', d)", "substring(s, 1, 2)", "position('b' IN s)", 'round(a::numeric, 1)', 'abs(a)', 'mod(a, 3)', 'pg_catalog.lower(s)',
  "jsonb_build_object('a', 1)",
];

const AGGREGATES = ['count(*)', 'count(a)', 'sum(a)', 'sum(DISTINCT a)', "string_agg(s, ',')", 'bool_and(a > 1)', 'max(a)::text', 'row_number() OVER ()', 'sum(a) OVER ()', 'cume_dist() OVER (ORDER BY a)', 'rank() OVER (ORDER BY a)'];

const STATEMENTS = [
  ...EXPRESSIONS.map((e) => `SELECT ${e} FROM t`),
  ...AGGREGATES.map((e) => `SELECT ${e} FROM t`),
  `SELECT ${EXPRESSIONS.slice(0, 12).join(', ')} FROM t`,
  'SELECT * FROM (SELECT lower(s), a::text, coalesce(a, 1), a + 1 FROM t) x',
  'WITH c AS (SELECT lower(s), length(s), CASE WHEN true THEN 1 END, extract(day FROM d) FROM t) SELECT * FROM c',
  'SELECT x.lower FROM (SELECT lower(s) FROM t) x',
  'SELECT lower(s) FROM t UNION SELECT upper(s) FROM t',
  ...EXPRESSIONS.filter((e) => !e.includes('SELECT')).map((e) => `UPDATE t SET a = a RETURNING ${e}`),
  "INSERT INTO u VALUES (5, 5) RETURNING v::text, lower('A'), coalesce(v, 1), id + 1, CASE WHEN v > 1 THEN v END",
  "DELETE FROM u WHERE id = 5 RETURNING length('x'), v::int, *",
  // Forms the statement pre-pass rewrites (sql-grammar-gaps.ts): operators stay ?column?.
  'SELECT 2 ^ 3',
  'SELECT to_hex(255)',
  "SELECT a ^ 2, (a ^ 2)::text, s ~~ 'A%', s !~~* 'a%', to_hex(a), count(*) FROM t GROUP BY (), a, s",
  'SELECT "a\\b" FROM (SELECT 1 AS "a\\b") x',
  // A scalar subquery with `*` is named by the column the `*` stands for.
  'SELECT (SELECT * FROM (SELECT v FROM u) x WHERE false), ((SELECT x.* FROM (SELECT v FROM u) x)), (SELECT DISTINCT * FROM (SELECT a FROM t) x)',
  'SELECT CASE WHEN true THEN 1 ELSE (SELECT * FROM (SELECT v FROM u) x) END',
  'UPDATE t SET a = a RETURNING (SELECT * FROM (SELECT v FROM u) x), (SELECT * FROM (SELECT t.s) x)',
];

async function pgNames(sql: string): Promise<string[]> {
  await pg.exec('BEGIN');
  try {
    return (await pg.query(sql)).fields.map((f) => f.name);
  } finally {
    await pg.exec('ROLLBACK');
  }
}

describe('default output column names match PostgreSQL', () => {
  let store: TenantStore;
  beforeAll(async () => {
    const dir = tempDir('column-names');
    store = await TenantStore.open(dir.path, storeOptions(new PageCache(16 << 20)));
    for (const sql of SETUP) {
      await pg.exec(sql);
      await (await sqlExecute(store, [{ sql }])).durable;
    }
    return async () => {
      await store.close();
      dir.remove();
    };
  });

  it.each(STATEMENTS)('%s', async (sql) => {
    const outcome = await sqlExecute(store, [{ sql: `BEGIN; ${sql}; ROLLBACK` }], { rowMode: 'array' });
    const ours = outcome.results[1]!.columns.map((c) => c.name);
    expect(ours).toEqual(await pgNames(sql));
  });

  // Only the parser's own forms: the statement pre-pass (timestamptz literals) is not applied there.
  it.each(EXPRESSIONS.filter((e) => !/\b(SELECT|FROM|IN)\b|\b[ajsd]\b|\bt\.|timestamptz/.test(e)))('SELECT %s without FROM (evaluateSelectExpressions)', async (expr) => {
    const sql = `SELECT ${expr}`;
    expect(evaluateSelectExpressions(sql).columns.map((c) => c.name)).toEqual(await pgNames(sql));
  });
});
