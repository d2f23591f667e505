// Subqueries inside expressions, uncorrelated (run before the statement's rows as init plans,
// engine/sql/exec/init-plans.ts) and correlated, in every place a statement compiles
// expressions: each statement runs in tetradb over HTTP and in PostgreSQL (PGlite, in process)
// on the same data, and the answers must be the same: rows as PostgreSQL's text, or the same
// SQLSTATE. Writes run inside a transaction that is rolled back, and report the table after them.
import type { PGlite } from '@electric-sql/pglite';
import { beforeAll, describe, expect, it } from 'vitest';
import { http, serverForFile } from '../helpers/server.js';
import { RAW_TEXT, renderOurs, usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

const SETUP = [
  'CREATE TABLE t (id int PRIMARY KEY, g int, v int)',
  'INSERT INTO t VALUES (1, 1, 10), (2, 1, 20), (3, 2, NULL), (4, 2, 40), (5, 3, 50), (6, 3, 60)',
  'CREATE TABLE u (id int PRIMARY KEY, t_id int, w int)',
  'INSERT INTO u VALUES (1, 1, 5), (2, 1, 15), (3, 2, 25), (4, 4, 35), (5, NULL, 45), (6, 9, NULL)',
  'CREATE TABLE e (id int PRIMARY KEY, v int)',
  'CREATE TABLE z (id int PRIMARY KEY, v int)',
  'INSERT INTO z VALUES (1, 0), (2, 0)',
];

type Outcome = { rows: (string | null)[][][] } | { sqlstate: string };

beforeAll(async () => {
  const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql: SETUP.join('; ') }, apiKey: file.apiKey });
  expect(res.status, res.text).toBe(200);
  for (const s of SETUP) await pg.exec(s);
}, 60_000);

/** Each statement's rows as PostgreSQL's text, or the SQLSTATE of the first that fails. */
function oursOf(body: any, status: number): Outcome {
  if (status !== 200) return { sqlstate: body.error.details?.sqlstate ?? body.error.code };
  const results: any[] = body.results ?? [body];
  return { rows: results.map((r) => r.rows.map((row: unknown[]) => row.map((v, i) => renderOurs(v, r.columns[i].type)))) };
}

async function theirs(statements: string[]): Promise<Outcome> {
  const rows: (string | null)[][][] = [];
  try {
    for (const s of statements) rows.push(((await pg.query(s, [], RAW_TEXT)).rows as (string | null)[][]));
    return { rows };
  } catch (err) {
    await pg.exec('ROLLBACK').catch(() => undefined);
    return { sqlstate: (err as { code: string }).code };
  }
}

/** A SELECT alone (the single-statement path, whose plan is cached): run twice, same answer. */
async function compareQuery(sql: string): Promise<void> {
  const expected = await theirs([sql]);
  for (let run = 0; run < 2; run++) {
    const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql, rowMode: 'array' }, apiKey: file.apiKey });
    expect(oursOf(res.body, res.status), `run ${run + 1}: ${res.text.slice(0, 300)}`).toEqual(expected);
  }
}

/** A write (or several statements) in a transaction: its result, the tables after it, rolled back. */
async function compareWrite(statements: string[]): Promise<void> {
  const after = ['SELECT * FROM t ORDER BY id', 'SELECT * FROM u ORDER BY id'];
  const expected = await theirs(['BEGIN', ...statements, ...after, 'ROLLBACK']);
  const res = await http(file.server.url, 'POST', '/api/sql/query', {
    json: { statements: ['BEGIN', ...statements, ...after, 'ROLLBACK'].map((sql) => ({ sql })), rowMode: 'array' },
    apiKey: file.apiKey,
  });
  expect(oursOf(res.body, res.status), res.text.slice(0, 300)).toEqual(expected);
}

describe('subqueries in SELECT, as PostgreSQL answers them', () => {
  it.each([
    // uncorrelated, in each clause
    'SELECT id FROM t WHERE v > (SELECT avg(v) FROM t) ORDER BY id',
    'SELECT id, (SELECT max(w) FROM u) AS m, (SELECT count(*) FROM e) AS n FROM t ORDER BY id',
    'SELECT g, count(*) FROM t GROUP BY g HAVING count(*) >= (SELECT count(*) FROM z) ORDER BY g',
    'SELECT g, sum(v) + (SELECT min(w) FROM u) AS s FROM t GROUP BY g ORDER BY g',
    'SELECT id FROM t ORDER BY abs(coalesce(v, 0) - (SELECT avg(w) FROM u)), id',
    'SELECT t.id, u.id FROM t JOIN u ON u.t_id = t.id AND u.w > (SELECT min(w) FROM u) ORDER BY 1, 2',
    'SELECT t.id, u.id FROM t LEFT JOIN u ON u.t_id = t.id AND u.w < (SELECT avg(w) FROM u) ORDER BY 1, 2',
    'WITH c AS (SELECT id FROM t WHERE v >= (SELECT avg(v) FROM t)) SELECT count(*), (SELECT max(id) FROM c) FROM c',
    'SELECT id FROM t WHERE v > (SELECT avg(v) FROM t) UNION SELECT id FROM u WHERE w < (SELECT avg(w) FROM u) ORDER BY 1',
    'SELECT id FROM t WHERE v < (SELECT avg(v) FROM t) EXCEPT SELECT t_id FROM u WHERE w > (SELECT min(w) FROM u) ORDER BY 1',
    'SELECT id FROM t ORDER BY id LIMIT (SELECT count(*) FROM z) OFFSET (SELECT count(*) FROM z WHERE v > 0)',
    'SELECT * FROM (SELECT id, v FROM t WHERE v > (SELECT min(v) FROM t)) s WHERE s.v < (SELECT max(v) FROM t) ORDER BY id',
    'SELECT id FROM t WHERE EXISTS (SELECT 1 FROM e) ORDER BY id',
    'SELECT id FROM t WHERE NOT EXISTS (SELECT 1 FROM e) AND EXISTS (SELECT 1 FROM z) ORDER BY id',
    'SELECT id FROM t WHERE v IN (SELECT w + 5 FROM u) ORDER BY id',
    'SELECT id FROM t WHERE id NOT IN (SELECT t_id FROM u) ORDER BY id',
    'SELECT id FROM t WHERE id NOT IN (SELECT t_id FROM u WHERE t_id IS NOT NULL) ORDER BY id',
    'SELECT id, v > ALL (SELECT w FROM u WHERE w IS NOT NULL) AS a, v = ANY (SELECT w + 5 FROM u) AS b FROM t ORDER BY id',
    'SELECT id, v < ALL (SELECT w FROM u) AS a FROM t ORDER BY id',
    // empty results and NULLs
    'SELECT id, (SELECT v FROM e) AS x, (SELECT v FROM t WHERE id = 3) AS y FROM t ORDER BY id',
    'SELECT id FROM t WHERE v > (SELECT w FROM u WHERE w > 1000) ORDER BY id',
    'SELECT id FROM e WHERE v > (SELECT avg(v) FROM t)',
    // nested: uncorrelated inside uncorrelated, inside correlated
    'SELECT id FROM t WHERE v > (SELECT avg(v) FROM t WHERE v < (SELECT max(v) FROM t)) ORDER BY id',
    'SELECT id, (SELECT count(*) FROM u WHERE u.t_id = t.id) AS n FROM t ORDER BY id',
    'SELECT id, (SELECT count(*) FROM u WHERE u.t_id = t.id AND u.w > (SELECT avg(w) FROM u)) AS n FROM t ORDER BY id',
    // a subquery that reads nothing of its parent but an outer-outer row is correlated
    'SELECT id, (SELECT count(*) FROM u WHERE u.w < (SELECT t.v)) AS n FROM t ORDER BY id',
    'SELECT id FROM t WHERE EXISTS (SELECT 1 FROM u WHERE EXISTS (SELECT 1 FROM z WHERE z.id = t.id)) ORDER BY id',
    'SELECT id, (SELECT max(x) FROM (SELECT (SELECT t.v + u.w) AS x FROM u) s) AS m FROM t ORDER BY id',
    'SELECT id, (SELECT sum(w) FROM u WHERE w IN (SELECT w FROM u u2 WHERE u2.t_id = t.id)) AS s FROM t ORDER BY id',
    // errors: a subquery that is never needed raises nothing; a needed one raises PostgreSQL's
    'SELECT CASE WHEN false THEN (SELECT 1 / v FROM z LIMIT 1) END',
    'SELECT id FROM e WHERE v > (SELECT 1 / v FROM z LIMIT 1)',
    'SELECT id FROM t WHERE v > (SELECT 1 / v FROM z LIMIT 1)',
    'SELECT id FROM t WHERE id > 100 AND v > (SELECT v FROM z) ORDER BY id',
    'SELECT id FROM t WHERE v > (SELECT v FROM z)',
    'SELECT id FROM t WHERE id = 1 OR v > (SELECT v FROM z)',
    'SELECT coalesce(1, (SELECT v FROM z))',
    'SELECT id FROM e WHERE id IN (SELECT 1 / v FROM z)',
    'SELECT id FROM t WHERE id IN (SELECT 1 / v FROM z)',
    'SELECT id, CASE WHEN v IS NULL THEN (SELECT 1 / v FROM z LIMIT 1) ELSE (SELECT count(*) FROM u) END FROM t WHERE v IS NOT NULL ORDER BY id',
    'SELECT id, CASE WHEN v IS NULL THEN (SELECT 1 / v FROM z LIMIT 1) ELSE (SELECT count(*) FROM u) END FROM t ORDER BY id',
    'SELECT id FROM t WHERE v > (SELECT avg(v) FROM t WHERE v > (SELECT v FROM z))',
    'SELECT id FROM t WHERE v > 100 AND v > (SELECT avg(v) FROM t WHERE v > (SELECT v FROM z))',
    'SELECT id FROM e ORDER BY (SELECT v FROM z)',
    'SELECT id FROM t ORDER BY (SELECT v FROM z)',
    'SELECT id FROM t LIMIT (SELECT v FROM z)',
    'SELECT id, (SELECT w FROM u WHERE u.t_id = t.id) FROM t ORDER BY id',
    'SELECT id, (SELECT w FROM u WHERE u.t_id = t.id) FROM t WHERE id > 2 ORDER BY id',
    // a recursive reference inside a subquery of an expression
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < (SELECT max(n) + 2 FROM r) AND n < 10) SELECT * FROM r',
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < (SELECT max(v) / 10 FROM t)) SELECT * FROM r',
  ])('%s', async (sql) => {
    await compareQuery(sql);
  });
});

describe('subqueries in writes, reading the table they change', () => {
  it.each([
    ['UPDATE t SET v = (SELECT max(v) FROM t) + id WHERE id <= 3 RETURNING id, v'],
    ['UPDATE t SET v = 0 WHERE v > (SELECT avg(v) FROM t) RETURNING id'],
    ['UPDATE t SET v = (SELECT sum(v) FROM t t2 WHERE t2.id < t.id) RETURNING id, v'],
    ['UPDATE t SET (g, v) = (SELECT min(g), max(v) FROM t) WHERE id = 1 RETURNING *'],
    ['UPDATE t SET v = u.w FROM u WHERE u.t_id = t.id AND u.w > (SELECT min(w) FROM u) RETURNING t.id, t.v'],
    ['UPDATE t SET v = (SELECT count(*) FROM t) WHERE id IN (SELECT t_id FROM u) RETURNING id, v, (SELECT max(v) FROM t) AS before'],
    ['UPDATE t SET v = (SELECT v FROM z) WHERE id > 100'],
    ['UPDATE t SET v = (SELECT v FROM z) WHERE id = 1'],
    ['UPDATE t SET v = CASE WHEN id > 100 THEN (SELECT 1 / v FROM z LIMIT 1) ELSE v END RETURNING id, v'],
    ['DELETE FROM t WHERE v < (SELECT avg(v) FROM t) RETURNING id'],
    ['DELETE FROM t WHERE v = (SELECT max(v) FROM t)'],
    ['DELETE FROM t USING u WHERE u.t_id = t.id AND u.w > (SELECT avg(w) FROM u) RETURNING t.id, u.w'],
    ['DELETE FROM t USING u WHERE u.t_id = t.id AND u.w > (SELECT avg(w) FROM u)'],
    ['DELETE FROM e WHERE v = (SELECT 1 / v FROM z LIMIT 1)'],
    ['DELETE FROM t WHERE v = (SELECT 1 / v FROM z LIMIT 1)'],
    ['INSERT INTO t VALUES (100, (SELECT max(g) FROM t), (SELECT count(*) FROM t)) RETURNING *'],
    ['INSERT INTO t SELECT id + 100, g, (SELECT count(*) FROM t) FROM t WHERE v > (SELECT avg(v) FROM t) RETURNING *'],
    ['INSERT INTO t SELECT * FROM e WHERE v > (SELECT 1 / v FROM z LIMIT 1)'],
    ['INSERT INTO t VALUES (100, 1, (SELECT 1 / v FROM z LIMIT 1))'],
    ['INSERT INTO t VALUES (100, 1, (SELECT v FROM z))'],
    ['INSERT INTO t VALUES (1, 0, 0), (7, 0, 0) ON CONFLICT (id) DO UPDATE SET v = (SELECT max(v) FROM t) WHERE t.v < (SELECT max(v) FROM t) RETURNING *'],
    ['INSERT INTO t VALUES (6, 0, 0) ON CONFLICT (id) DO UPDATE SET v = (SELECT max(v) FROM t) WHERE t.v < (SELECT max(v) FROM t) RETURNING *'],
    ['INSERT INTO t VALUES (7, 0, 0) ON CONFLICT (id) DO UPDATE SET v = (SELECT v FROM z) RETURNING *'],
    ['INSERT INTO t VALUES (1, 0, 0) ON CONFLICT (id) DO UPDATE SET v = (SELECT v FROM z) RETURNING *'],
    // several statements: each reads what the earlier ones wrote, not what it writes itself
    ['UPDATE t SET v = v + 1000 WHERE id = 1', 'SELECT id, v FROM t WHERE v > (SELECT avg(v) FROM t) ORDER BY id'],
    ['DELETE FROM t WHERE v = (SELECT max(v) FROM t)', 'UPDATE t SET v = (SELECT max(v) FROM t) WHERE id = 1 RETURNING v', 'SELECT count(*) FROM t WHERE v = (SELECT max(v) FROM t)'],
    ['SAVEPOINT s', 'DELETE FROM u WHERE w > (SELECT avg(w) FROM u)', 'ROLLBACK TO s', 'SELECT count(*) FROM u WHERE w > (SELECT avg(w) FROM u)'],
  ])('%s', async (...statements) => {
    await compareWrite(statements);
  });
});

describe('a cached plan', () => {
  it('computes its init plans again at each run', async () => {
    // The same SELECT text before and after a committed change of what its subquery reads.
    const steps = ['CREATE TABLE c (id int PRIMARY KEY, v int)', 'INSERT INTO c VALUES (1, 1), (2, 2)', 'SELECT id FROM c WHERE v >= (SELECT max(v) FROM c)', 'INSERT INTO c VALUES (3, 3)', 'SELECT id FROM c WHERE v >= (SELECT max(v) FROM c)', 'UPDATE c SET v = 0 WHERE id = 3', 'SELECT id FROM c WHERE v >= (SELECT max(v) FROM c)'];
    for (const sql of steps) {
      const expected = await theirs([sql]);
      const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql, rowMode: 'array' }, apiKey: file.apiKey });
      expect(oursOf(res.body, res.status), `${sql}: ${res.text.slice(0, 300)}`).toEqual(expected);
    }
  });
});
