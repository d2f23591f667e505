// FROM items that read the items before them: LATERAL subqueries and functions in FROM (set-returning
// functions, implicitly LATERAL when their arguments read earlier items, WITH ORDINALITY, a scalar
// function as a one-row relation), LateralJoinPlan in engine/sql/exec/lateral-join.ts and the
// functions in set-returning.ts. Each statement runs in tetradb over HTTP and in PostgreSQL (PGlite)
// with the same outcome (rows, or SQLSTATE, message, DETAIL and HINT).
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { alikeFull } from './pg-outcome.js';
import { http, serverForFile, type FileServer } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

/** Each statement on both, in order, with the same outcome; the SQLSTATEs of those refused. */
const alike = (statements: string[], on: FileServer = file): Promise<string[]> => alikeFull(pg, on, statements);

const SETUP = [
  'DROP TABLE IF EXISTS orders, customers',
  'CREATE TABLE customers (id int PRIMARY KEY, name text, doc jsonb, tags text)',
  'CREATE TABLE orders (id int PRIMARY KEY, customer_id int, total numeric(8,2))',
  'CREATE INDEX orders_customer ON orders (customer_id)',
  `INSERT INTO customers VALUES (1, 'ann', '[1, "x", null]', 'a,b'), (2, 'bob', '{"k": 1, "m": [2], "aa": true}', NULL), (3, 'cy', 'null', 'q'), (4, 'dee', '[3, 4]', 'x;y;')`,
  'INSERT INTO orders VALUES (10, 1, 5.00), (11, 1, 15.00), (12, 2, 7.50), (13, NULL, 3.00), (14, 1, 15.00)',
];

describe('LATERAL subqueries', () => {
  it('read the items before them, once per row, inner, cross and left', async () => {
    const refused = await alike([
      ...SETUP,
      // Top-N per group, the form LATERAL is used for most.
      'SELECT c.name, top.id, top.total FROM customers c, LATERAL (SELECT id, total FROM orders o WHERE o.customer_id = c.id ORDER BY total DESC, id LIMIT 2) top ORDER BY 1, 3 DESC, 2',
      'SELECT c.name, top.total FROM customers c LEFT JOIN LATERAL (SELECT total FROM orders o WHERE o.customer_id = c.id ORDER BY total DESC LIMIT 1) top ON true ORDER BY 1',
      'SELECT c.name, s.n, s.total FROM customers c CROSS JOIN LATERAL (SELECT count(*) AS n, sum(total) AS total FROM orders o WHERE o.customer_id = c.id) s ORDER BY 1',
      'SELECT c.id, l.* FROM customers c INNER JOIN LATERAL (SELECT c.tags AS t2) l ON l.t2 IS NOT NULL ORDER BY 1',
      // A LEFT join's ON condition reads the lateral row; conditions on it alone filter it.
      "SELECT c.id, l.* FROM customers c LEFT JOIN LATERAL (SELECT c.tags AS t2 WHERE c.id > 2) l ON l.t2 = 'q' ORDER BY 1",
      'SELECT c.id, l.v FROM customers c, LATERAL (SELECT c.id * 10 AS v) l WHERE l.v > 15 AND c.id < 4 ORDER BY 1',
      // Chains: each item reads the ones before it.
      'SELECT * FROM (SELECT 1 AS a) s, LATERAL (SELECT s.a + 1 AS b) l, LATERAL (SELECT l.b * 10 AS c, s.a AS d) m',
      'SELECT c.id, l.c2, o.id FROM customers c JOIN LATERAL (SELECT c.id AS c2) l ON true JOIN orders o ON o.customer_id = l.c2 ORDER BY 1, 3',
      'SELECT a.x, b.y FROM customers a2, LATERAL (SELECT a2.id AS x) a, LATERAL (SELECT a.x + a2.id AS y) b ORDER BY 1',
      'SELECT count(*) FROM customers x, LATERAL (SELECT x.id) y, customers z',
      // Set operations, CTEs, aggregates, subqueries inside; WITH around.
      'SELECT a, b.* FROM generate_series(1, 3) a, LATERAL (SELECT a AS x UNION ALL SELECT a * 2) b ORDER BY 1, 2',
      'WITH w AS (SELECT id FROM customers) SELECT w.id, l.n FROM w, LATERAL (SELECT count(*) AS n FROM orders WHERE orders.id - 9 <= w.id) l ORDER BY 1',
      'SELECT c.id, l.m FROM customers c, LATERAL (SELECT (SELECT max(total) FROM orders o WHERE o.customer_id = c.id) AS m) l ORDER BY 1',
      'SELECT c.id, l.n FROM customers c, LATERAL (SELECT count(*) AS n FROM orders o WHERE EXISTS (SELECT 1 WHERE o.customer_id = c.id)) l ORDER BY 1',
      // The row stack: a lateral item inside a correlated subquery, subqueries above a lateral join.
      'SELECT c.id, (SELECT sum(y.w) FROM customers u, LATERAL (SELECT u.id * c.id AS w) y) FROM customers c ORDER BY 1',
      'SELECT c.id, x.v, (SELECT x.v + c2.id FROM customers c2 WHERE c2.id = 1) FROM customers c, LATERAL (SELECT c.id * 10 AS v) x ORDER BY 1',
      'SELECT c.id, (SELECT max(y.w) FROM generate_series(1, c.id) g, LATERAL (SELECT g * 100 + c.id AS w) y) FROM customers c ORDER BY 1',
      // A lateral item that reads nothing before it is an ordinary derived table; LATERAL first in FROM too.
      'SELECT * FROM customers, LATERAL (SELECT 1 AS one) x ORDER BY 1',
      'SELECT * FROM LATERAL (SELECT 1 AS one) x',
      'SELECT count(*) FROM customers, LATERAL (SELECT 1) l WHERE false',
      // In UPDATE ... FROM.
      "UPDATE customers SET tags = l.v FROM customers c2, LATERAL (SELECT 'z' || c2.id AS v) l WHERE customers.id = c2.id AND c2.id = 3 RETURNING customers.id, customers.tags",
      // The whole row of a LATERAL item: counted, and as JSON (NULL where a LEFT join made it up).
      'SELECT c.id, count(x.*) FROM customers c LEFT JOIN LATERAL (SELECT o.id FROM orders o WHERE o.customer_id = c.id) x ON true GROUP BY c.id ORDER BY 1',
      'SELECT c.id, to_jsonb(x) FROM customers c LEFT JOIN LATERAL (SELECT c.id * 2 AS d WHERE c.id > 2) x ON true ORDER BY 1',
      // Refused as PostgreSQL refuses them.
      'SELECT * FROM customers c RIGHT JOIN LATERAL (SELECT c.id) x ON true',
      'SELECT * FROM customers c FULL JOIN LATERAL (SELECT c.id) x ON true',
      'SELECT * FROM customers c, (SELECT c.id) x',
      'SELECT * FROM customers c JOIN (SELECT c.id) x ON true',
      'SELECT * FROM customers c, (SELECT name) x',
      'SELECT * FROM customers c, LATERAL (SELECT zzzzzz) x',
      'SELECT * FROM customers c, LATERAL (SELECT q.id) x',
    ]);
    expect(refused).toEqual(['42P10', '42P10', '42P01', '42P01', '42703', '42703', '42P01']);
  });

  it('run once per outer row without holding the statement: many rows, with pauses', async () => {
    await alike([
      'SELECT count(*), sum(b) FROM generate_series(1, 3000) a, LATERAL generate_series(1, 100) b',
      'SELECT count(*) FROM generate_series(1, 2000) a, LATERAL (SELECT count(*) AS c FROM generate_series(1, a)) b WHERE b.c > 1000',
    ]);
  });

  it('show as a nested loop in EXPLAIN', async () => {
    await alike(SETUP);
    const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql: 'EXPLAIN SELECT * FROM customers c, LATERAL (SELECT c.id) x', rowMode: 'array' }, apiKey: file.apiKey });
    expect(res.status).toBe(200);
    expect((res.body.rows as string[][]).map((r) => r[0]).join('\n')).toMatch(/^Nested Loop \(inner\)/);
  });
});

describe('functions in FROM', () => {
  it('read jsonb documents as rows: jsonb_array_elements, jsonb_each, jsonb_object_keys and their text forms', async () => {
    const refused = await alike([
      ...SETUP,
      "SELECT c.id, e.* FROM customers c, jsonb_array_elements(c.doc) e WHERE jsonb_typeof(c.doc) = 'array' ORDER BY 1",
      "SELECT c.id, e.value FROM customers c, jsonb_array_elements_text(c.doc) e WHERE jsonb_typeof(c.doc) = 'array' ORDER BY 1",
      "SELECT c.id, e.key, e.value FROM customers c, jsonb_each(c.doc) e WHERE jsonb_typeof(c.doc) = 'object'",
      "SELECT c.id, e.* FROM customers c, jsonb_each_text(c.doc) AS e(k, v) WHERE jsonb_typeof(c.doc) = 'object'",
      "SELECT c.id, k FROM customers c, jsonb_object_keys(c.doc) k WHERE jsonb_typeof(c.doc) = 'object'",
      // The guard runs before the call when it reads nothing of the function's row, as PostgreSQL's one-time filter.
      "SELECT c.id, x.n FROM customers c, LATERAL (SELECT count(*) AS n FROM jsonb_array_elements(c.doc) e WHERE jsonb_typeof(c.doc) = 'array') x ORDER BY 1",
      `SELECT * FROM jsonb_array_elements_text('[1, "x", null, {"a": "b"}, [2]]')`,
      `SELECT * FROM json_array_elements('[{"a": 1}, 2]')`,
      `SELECT * FROM jsonb_each('{"b": 1, "a": [true], "ab": null}')`,
      `SELECT * FROM jsonb_each_text('{"b": 1, "a": [true], "ab": null}')`,
      `SELECT * FROM jsonb_object_keys('{"b": 1, "a": 2}')`,
      'SELECT * FROM jsonb_array_elements(NULL)',
      // Errors as PostgreSQL's.
      'SELECT c.id, e.* FROM customers c, jsonb_array_elements(c.doc) e ORDER BY 1',
      `SELECT * FROM jsonb_array_elements('1')`,
      'SELECT c.id, e.* FROM customers c, jsonb_each(c.doc) e ORDER BY 1',
      `SELECT * FROM jsonb_object_keys('[1]')`,
      `SELECT * FROM jsonb_object_keys('1')`,
      'SELECT * FROM jsonb_each(1)',
    ]);
    expect(refused).toEqual(['22023', '22023', '22023', '22023', '22023', '42883']);
  });

  it('split text and find matches: regexp_split_to_table, string_to_table, regexp_matches', async () => {
    await alike([
      ...SETUP,
      "SELECT c.id, p.* FROM customers c, regexp_split_to_table(c.tags, '[,;]') p ORDER BY 1, 2",
      "SELECT c.id, x.n FROM customers c, LATERAL (SELECT count(*) AS n FROM regexp_split_to_table(c.tags, '[,;]')) x ORDER BY 1",
      "SELECT c.id, x.v FROM customers c LEFT JOIN LATERAL (SELECT v FROM regexp_split_to_table(c.tags, '[,;]') v WHERE v > 'a' ORDER BY v DESC LIMIT 1) x ON true ORDER BY 1",
      "SELECT * FROM regexp_split_to_table('a,b;;c', '[,;]')",
      "SELECT * FROM regexp_split_to_table('hello world', '\\s*')",
      "SELECT * FROM regexp_split_to_table('abc', '')",
      "SELECT * FROM regexp_split_to_table('', ',')",
      "SELECT * FROM regexp_split_to_table('aXbxc', 'x', 'i')",
      "SELECT * FROM regexp_split_to_table('abc', '(b)')",
      "SELECT * FROM regexp_split_to_table('a,b', ',', 'g')",
      "SELECT * FROM string_to_table('a,b,,c', ',', '')",
      "SELECT * FROM string_to_table('a b', NULL)",
      "SELECT * FROM string_to_table('abc', '')",
      "SELECT * FROM string_to_table('', ',')",
      "SELECT * FROM regexp_matches('foobarbequebaz', '(bar)(beque)')",
      "SELECT * FROM regexp_matches('foobarbequebazilbarfbonk', '(b[^b]+)(b[^b]+)', 'g')",
      "SELECT * FROM regexp_matches('a1b22c', '(\\d)(\\d)?', 'g')",
      "SELECT * FROM regexp_matches('abc', '', 'g')",
      "SELECT * FROM regexp_matches('abc', 'x')",
    ]);
  });

  it('number their rows WITH ORDINALITY, name their columns as PostgreSQL, and take scalar functions as one row', async () => {
    const refused = await alike([
      ...SETUP,
      "SELECT c.id, u.v, u.n FROM customers c, regexp_split_to_table(c.tags, '[,;]') WITH ORDINALITY u(v, n) WHERE u.n > 1 ORDER BY 1, 3",
      "SELECT c.id, u.* FROM customers c, regexp_split_to_table(c.tags, '[,;]') WITH ORDINALITY AS u ORDER BY 1, 3",
      'SELECT * FROM generate_series(1, 2) WITH ORDINALITY',
      'SELECT * FROM generate_series(1, 2) WITH ORDINALITY AS g',
      `SELECT * FROM jsonb_each('{"a": 1}') WITH ORDINALITY`,
      `SELECT * FROM jsonb_each_text('{"a": 1}') WITH ORDINALITY AS e(a, b, c)`,
      `SELECT * FROM jsonb_each('{"a": 1}') AS x(k)`,
      'SELECT generate_series FROM generate_series(1, 2)',
      'SELECT g FROM generate_series(1, 2) g',
      "SELECT * FROM lower('ABC')",
      "SELECT * FROM lower('ABC') AS l",
      "SELECT * FROM lower('ABC') AS l(x)",
      'SELECT * FROM abs(-3) WITH ORDINALITY',
      'SELECT c.id, x FROM customers c, upper(c.name) x ORDER BY 1',
      // Set-returning functions reading set-returning functions, and in a correlated subquery.
      'SELECT * FROM generate_series(1, 3) g, LATERAL generate_series(1, g) h ORDER BY 1, 2',
      'SELECT a.g, b.h FROM generate_series(1, 3) a(g) LEFT JOIN LATERAL (SELECT h FROM generate_series(1, a.g) h WHERE h > 1) b ON b.h < 3 ORDER BY 1, 2',
      'SELECT g, (SELECT count(*) FROM generate_series(1, g)) FROM generate_series(1, 3) g',
      'SELECT * FROM (SELECT 1 AS a) s LEFT JOIN LATERAL generate_series(s.a, 3) g ON g > 1',
      "SELECT (SELECT string_agg(x.k, ',') FROM jsonb_object_keys(c.doc) x(k)) FROM customers c WHERE c.id = 2",
      // Refused as PostgreSQL refuses them.
      `SELECT * FROM jsonb_each('{"a": 1}') AS x(k, v, w)`,
      'SELECT * FROM generate_series(1, 2) AS g(a, b)',
      'SELECT * FROM customers c FULL JOIN LATERAL jsonb_array_elements(c.doc) x ON true',
      'SELECT * FROM nosuchfn(1)',
      'SELECT * FROM count(*)',
    ]);
    expect(refused).toEqual(['42P10', '42P10', '42P10', '42883', '42803']);
  });

  it('run in a select list as PostgreSQL 10 runs them: side by side, the rows of each input row, before DISTINCT, ORDER BY and LIMIT', async () => {
    const refused = await alike([
      'DROP TABLE IF EXISTS sl',
      'CREATE TABLE sl (id int PRIMARY KEY, a int[], j jsonb, s text)',
      `INSERT INTO sl VALUES (1, '{1,2,3}', '[1, "x"]', 'a,b'), (2, '{4}', '{"k": 1}', NULL), (3, '{}', '[]', 'q'), (4, NULL, '[5]', 'x;y')`,
      'SELECT id, unnest(a) FROM sl ORDER BY 1, 2',
      "SELECT id, unnest(a) AS v, unnest(ARRAY['x', 'y']) AS w FROM sl ORDER BY 1, 2",
      'SELECT unnest(ARRAY[1, 2, 3]), generate_series(1, 2)',
      'SELECT id, unnest(a) * 10 + 1 FROM sl WHERE id < 3 ORDER BY 1, 2',
      "SELECT id, jsonb_array_elements(j) FROM sl WHERE jsonb_typeof(j) = 'array' ORDER BY 1",
      "SELECT id, jsonb_object_keys(j) FROM sl WHERE jsonb_typeof(j) = 'object'",
      "SELECT id, regexp_split_to_table(s, '[,;]') FROM sl ORDER BY 1, 2",
      'SELECT generate_series(1, 3) AS g ORDER BY g DESC',
      'SELECT DISTINCT unnest(a) % 2 FROM sl ORDER BY 1',
      'SELECT unnest(array_agg(id ORDER BY id)) FROM sl',
      'SELECT s, unnest(array_agg(id)) FROM sl GROUP BY s ORDER BY 1, 2',
      'SELECT count(*) FROM (SELECT unnest(a) FROM sl) x',
      'SELECT id, unnest(a) FROM sl ORDER BY 1, 2 LIMIT 2',
      "SELECT regexp_matches('a1b22', '\\d+', 'g')",
      'SELECT row_number() OVER (), unnest(ARRAY[$$a$$, $$b$$])',
      "SELECT string_to_array('a,b', ',') AS x, unnest(string_to_array('a,b', ','))",
      // Refused as PostgreSQL refuses them.
      'SELECT id FROM sl WHERE unnest(a) > 1',
      'SELECT sum(unnest(a)) FROM sl',
      'SELECT * FROM generate_series(1, unnest(ARRAY[2]))',
      'SELECT CASE WHEN true THEN unnest(ARRAY[1, 2]) END',
      'SELECT coalesce(unnest(ARRAY[1, 2]), 0)',
      'SELECT count(*) FROM sl HAVING unnest(ARRAY[1]) > 0',
    ]);
    expect(refused).toEqual(['0A000', '0A000', '0A000', '0A000', '0A000', '0A000']);
  });
});
