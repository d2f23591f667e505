// WHERE, JOIN ... ON, HAVING and the WHERE of UPDATE, DELETE and ON CONFLICT as PostgreSQL runs
// them (engine/sql/exec/quals.ts): an implicit-AND list of quals, cheapest first, stopped at the
// first that is not true, so an operand that would raise after a NULL is never evaluated; inside
// an expression (select list, CASE, FILTER, CHECK) AND still goes on after a NULL. Each statement
// runs in tetradb over HTTP and in PostgreSQL (PGlite) on the same data: the same rows, or the
// same SQLSTATE and message. Writes run in a transaction that is rolled back, and report the
// tables after them.
import type { PGlite } from '@electric-sql/pglite';
import { beforeAll, describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';
import { oursOf, theirsOf } from './pg-outcome.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

// Row 1 has v NULL and x 0: `v > 5` is NULL there, `1 / x` raises.
const SETUP = [
  'CREATE TABLE q (id int PRIMARY KEY, v int, x int, s text)',
  "INSERT INTO q VALUES (1, NULL, 0, 'a'), (2, 10, 1, '5'), (3, 7, 2, 'zz'), (4, 3, 0, '7')",
  'CREATE TABLE u (id int PRIMARY KEY, q_id int, w int)',
  'INSERT INTO u VALUES (1, 1, 5), (2, 2, NULL), (3, 3, 0), (4, 9, 1)',
];

beforeAll(async () => {
  expect(await oursOf(file, SETUP)).toMatchObject({ rows: expect.any(Array) });
  for (const s of SETUP) await pg.exec(s);
}, 60_000);

async function compare(sql: string): Promise<void> {
  expect(await oursOf(file, [sql]), sql).toEqual(await theirsOf(pg, [sql]));
}

/** A write in a transaction: its result and the tables after it, rolled back on both sides. */
async function compareWrite(statements: string[]): Promise<void> {
  const all = ['BEGIN', ...statements, 'SELECT * FROM q ORDER BY id', 'SELECT * FROM u ORDER BY id', 'ROLLBACK'];
  expect(await oursOf(file, all), statements.join('; ')).toEqual(await theirsOf(pg, all));
}

describe('WHERE stops at the first qual that is not true', () => {
  it.each([
    'SELECT id FROM q WHERE v > 5 AND 1/x = 1 ORDER BY id',
    'SELECT count(*) FROM q WHERE v > 5 AND 1/x = 1',
    'SELECT id FROM q WHERE x IS NOT DISTINCT FROM NULL AND 1/x = 1 ORDER BY id',
    "SELECT id FROM q WHERE v > 5 AND s::int > 0 ORDER BY id",
    // parenthesised ANDs are one list; NOT over OR is an AND; OR false is dropped; BETWEEN is two quals
    'SELECT id FROM q WHERE (v > 5 AND 1/x = 1) ORDER BY id',
    'SELECT id FROM q WHERE (v > 5 AND x > -1) AND 1/x = 1 ORDER BY id',
    'SELECT id FROM q WHERE NOT (v <= 5 OR 1/x <> 1) ORDER BY id',
    'SELECT id FROM q WHERE NOT (v IS NULL OR 1/x = 0) ORDER BY id',
    'SELECT id FROM q WHERE NOT NOT (v > 5 AND 1/x = 1) ORDER BY id',
    'SELECT id FROM q WHERE v > 5 AND 1/x = 1 OR false ORDER BY id',
    'SELECT id FROM q WHERE v BETWEEN 5 AND 100/x ORDER BY id',
    // constants are tested first, before any column is read
    'SELECT id FROM q WHERE 1/x = 1 AND false ORDER BY id',
    'SELECT id FROM q WHERE v > 5 AND NULL AND 1/x = 1 ORDER BY id',
    'SELECT q.id, u.id FROM q, u WHERE 1/u.w = 1 AND false ORDER BY 1, 2',
    // what stays an expression: NOT over AND, OR, and the operands of CASE
    'SELECT id FROM q WHERE NOT (v <= 5 AND 1/x = 1) ORDER BY id',
    'SELECT id FROM q WHERE v > 5 AND (1/x = 1 OR v > 100) ORDER BY id',
    'SELECT id FROM q WHERE (v > 5) IS NOT FALSE AND 1/x = 1 ORDER BY id',
    'SELECT id FROM q WHERE v > 5 AND CASE WHEN x = 0 THEN 1/x ELSE 1 END = 1 ORDER BY id',
    // subqueries: their own WHERE, a derived table's, a CTE's, IN (SELECT ...)
    'SELECT id FROM q WHERE id IN (SELECT q_id FROM u WHERE w > 0 AND 10/w > 1) ORDER BY id',
    'WITH c AS (SELECT * FROM q WHERE v > 5 AND 1/x = 1) SELECT id FROM c ORDER BY id',
    'SELECT id FROM (SELECT * FROM q WHERE v > 5) s WHERE 1/x = 1 ORDER BY id',
    'SELECT * FROM (SELECT id, 1/x AS r FROM q) s WHERE id > 1 AND r > 0 ORDER BY id',
    'SELECT id, (SELECT count(*) FROM u WHERE u.w > q.v AND 10/u.w > 0) FROM q WHERE v IS NOT NULL ORDER BY id',
  ])('%s', async (sql) => {
    await compare(sql);
  });
});

describe('quals run cheapest first, the written order kept between equals', () => {
  it.each([
    'SELECT id FROM q WHERE 1/x = 1 AND v > 5 ORDER BY id',
    'SELECT id FROM q WHERE 10/x > 0 AND v > 5 ORDER BY id',
    'SELECT id FROM q WHERE 1/x = 1 AND v IS NOT NULL ORDER BY id',
    'SELECT id FROM q WHERE s::int > 0 AND v > 5 ORDER BY id',
    'SELECT id FROM q WHERE s::int > 0 AND v IS NOT NULL AND v < 5 ORDER BY id',
    'SELECT id FROM q WHERE 10/x > 1 AND v + 0 > 5 ORDER BY id',
    'SELECT id FROM q WHERE v + 0 > 5 AND 10/x > 1 ORDER BY id',
    'SELECT id FROM q WHERE 1/x = 1 AND v IN (10, 7, 3) ORDER BY id',
    'SELECT id FROM q WHERE coalesce(v, 0) > 5 AND 1/x = 1 ORDER BY id',
    'SELECT id FROM q WHERE lower(s) = s AND 1/x >= 0 ORDER BY id',
    // COLLATE costs nothing
    'SELECT id FROM q WHERE 1/x = 1 AND s COLLATE "C" > \'b\' ORDER BY id',
    'SELECT id FROM q WHERE 1/x = 1 AND v > (SELECT min(w) FROM u) ORDER BY id',
    'SELECT id FROM q WHERE v > (SELECT min(w) FROM u) AND 1/x = 1 ORDER BY id',
    'SELECT id FROM q WHERE 1/x = 1 AND (SELECT w FROM u WHERE u.q_id = q.id) IS NULL ORDER BY id',
    'SELECT id FROM q WHERE EXISTS (SELECT 1 FROM u WHERE u.q_id = q.id AND 1/u.w > 0) AND v > 100 ORDER BY id',
    'SELECT id FROM q WHERE (SELECT w FROM u WHERE u.q_id = q.id) > 0 AND v > 100 ORDER BY id',
  ])('%s', async (sql) => {
    await compare(sql);
  });
});

describe('JOIN ... ON and joined WHERE conditions', () => {
  it.each([
    'SELECT q.id, u.id FROM q JOIN u ON u.q_id = q.id AND q.v > 5 AND 1/u.w >= 0 ORDER BY 1, 2',
    'SELECT a.id, b.id FROM q a JOIN q b ON a.id = b.id AND b.v > 5 AND 1/b.x = 1 ORDER BY 1, 2',
    'SELECT q.id, u.id FROM q LEFT JOIN u ON u.q_id = q.id AND u.w > 1 AND 10/u.w >= 0 ORDER BY 1, 2',
    'SELECT q.id, u.id FROM q LEFT JOIN u ON u.q_id = q.id AND 10/u.w >= 0 AND u.w > 1 ORDER BY 1, 2',
    'SELECT q.id, u.id FROM q, u WHERE u.q_id = q.id AND u.w IS NOT NULL AND 10/u.w >= 0 ORDER BY 1, 2',
    'SELECT q.id, u.id FROM q, u WHERE u.q_id = q.id AND 10/u.w >= 0 AND u.w > 0 ORDER BY 1, 2',
    // an ON condition of one side is a scan's, evaluated for every row of it (both raise)
    'SELECT a.id, b.id FROM q a JOIN q b ON a.v > 5 AND 1/b.x = 1 ORDER BY 1, 2',
    'SELECT a.id, b.id FROM q a LEFT JOIN q b ON a.v > 5 AND 1/b.x = 1 ORDER BY 1, 2',
  ])('%s', async (sql) => {
    await compare(sql);
  });
});

describe('HAVING: its quals without aggregates move to WHERE, the others stop at a NULL', () => {
  it.each([
    'SELECT x, count(*) FROM q GROUP BY x HAVING max(v) > 5 AND 1/x = 1 ORDER BY x',
    'SELECT x, count(*) FROM q GROUP BY x HAVING 1/x = 1 AND max(v) > 5 ORDER BY x',
    'SELECT x, count(*) FROM q GROUP BY x HAVING count(*) > 5 AND 1/x = 1',
    'SELECT x, count(*) FROM q GROUP BY x HAVING 1/x = 1 ORDER BY x',
    'SELECT x, count(*) FROM q GROUP BY x HAVING x > 0 AND count(*) = 1 ORDER BY x',
    'SELECT x, count(*) FROM q GROUP BY x HAVING min(v) > 5 AND 1/min(x) = 1 ORDER BY x',
    'SELECT x, count(*) FROM q GROUP BY x HAVING 1/min(x) = 1 AND count(*) > 1',
    'SELECT x, count(*) FROM q GROUP BY x HAVING count(*) > 1 AND 1/min(x) = 1',
    'SELECT count(*) FROM q HAVING 1/min(x) = 1',
    'SELECT x, count(*) FROM q GROUP BY x HAVING v > 0',
    'SELECT x, count(*) FROM q GROUP BY x HAVING x > 0 AND v > 0',
  ])('%s', async (sql) => {
    await compare(sql);
  });
});

describe('inside an expression AND goes on after a NULL', () => {
  it.each([
    'SELECT id, v > 5 AND 1/x = 1 FROM q ORDER BY id',
    'SELECT id, CASE WHEN v > 5 AND 1/x = 1 THEN 1 END FROM q ORDER BY id',
    'SELECT id, count(*) FILTER (WHERE v > 5 AND 1/x = 1) FROM q GROUP BY id ORDER BY id',
    'SELECT id, 5 BETWEEN 10 AND 1/x FROM q ORDER BY id',
    'SELECT id, v BETWEEN 1 AND 1/x FROM q ORDER BY id',
    'SELECT id, 5 NOT BETWEEN 10 AND 1/x FROM q ORDER BY id',
    'SELECT id FROM q WHERE (v > 5 AND 1/x = 1) IS NOT NULL ORDER BY id',
  ])('%s', async (sql) => {
    await compare(sql);
  });
});

describe('a condition that is not boolean', () => {
  it.each([
    'SELECT id FROM q WHERE 1 AND true',
    'SELECT id FROM q WHERE 1',
    'SELECT id FROM q WHERE NOT (1 OR true)',
    "SELECT id FROM q WHERE v > 5 AND 'x'",
    'SELECT x, count(*) FROM q GROUP BY x HAVING 1',
    'SELECT q.id FROM q JOIN u ON 1',
  ])('%s', async (sql) => {
    await compare(sql);
  });
});

describe('the WHERE of UPDATE, DELETE and ON CONFLICT', () => {
  it.each([
    ["UPDATE q SET s = 'u' WHERE v > 5 AND 1/x = 1 RETURNING id"],
    ["UPDATE q SET s = 'u' WHERE 1/x = 1 AND v > 5 RETURNING id"],
    ["UPDATE q SET s = 'u' WHERE v > 5 AND 1/x = 1 AND false"],
    ['DELETE FROM q WHERE v > 5 AND 1/x >= 0'],
    ['DELETE FROM q WHERE NOT (v <= 5 OR 1/x < 0)'],
    ['UPDATE q SET v = u.w FROM u WHERE u.q_id = q.id AND u.w > 0 AND 10/u.w > 1 RETURNING q.id, q.v'],
    ['DELETE FROM q USING u WHERE u.q_id = q.id AND u.w > 0 AND 10/u.w > 1 RETURNING q.id'],
    ['DELETE FROM q USING u WHERE u.q_id = q.id AND u.w IS NOT NULL AND 10/u.w > 1 RETURNING q.id'],
    ["INSERT INTO q VALUES (1, 0, 0, 'c') ON CONFLICT (id) DO UPDATE SET s = 'conflict' WHERE q.v > 5 AND 1/q.x = 1 RETURNING *"],
    ["INSERT INTO q VALUES (4, 0, 0, 'c') ON CONFLICT (id) DO UPDATE SET s = 'conflict' WHERE q.v > 5 AND 1/q.x = 1 RETURNING *"],
    ["INSERT INTO q VALUES (2, 0, 0, 'c') ON CONFLICT (id) DO UPDATE SET s = 'conflict' WHERE q.v > 5 AND 1/q.x = 1 RETURNING *"],
    ["INSERT INTO q VALUES (2, 0, 0, 'c') ON CONFLICT (id) DO UPDATE SET s = 'conflict' WHERE 1"],
  ])('%s', async (...statements) => {
    await compareWrite(statements);
  });
});
