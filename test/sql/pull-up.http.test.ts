// Views and subqueries in FROM reach their tables' indexes: a query's conditions on a subquery go
// into its WHERE (as they do for views), and a join's key values go into a view's or subquery's
// query when it is joined (a parameterised plan run once per row of a small outer side,
// ParameterisedJoinPlan in engine/sql/exec/lookup-join.ts; PostgreSQL gets there by pulling the
// subquery up into the join). Each answer is compared with PostgreSQL (PGlite); EXPLAIN shows the
// plan used, so a regression to reading the whole view fails here, not only in the benchmark.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { alikeFull } from './pg-outcome.js';
import { http, serverForFile } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

const alike = (statements: string[]): Promise<string[]> => alikeFull(pg, file, statements);

/** tetradb's EXPLAIN of `sql`, one line per node. */
async function explain(sql: string): Promise<string> {
  const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql: `EXPLAIN ${sql}`, rowMode: 'array' }, apiKey: file.apiKey });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.rows as string[][]).map((r) => r[0]).join('\n');
}

const SETUP = [
  'CREATE TABLE customers (id int PRIMARY KEY, name text, city text, code varchar(10))',
  'CREATE TABLE orders (id int PRIMARY KEY, customer_id int, status text, total numeric(10,2), big_customer bigint)',
  'CREATE INDEX orders_customer ON orders (customer_id)',
  'CREATE INDEX orders_big ON orders (big_customer)',
  "INSERT INTO customers SELECT g, 'c' || g, 'city' || (g % 7), 'k' || (g % 5) FROM generate_series(1, 2000) g",
  "INSERT INTO customers VALUES (2001, 'nobody', NULL, NULL)",
  "INSERT INTO orders SELECT g, CASE WHEN g % 97 = 0 THEN NULL ELSE (g % 2000) + 1 END, CASE WHEN g % 3 = 0 THEN 'paid' ELSE 'open' END, g % 100, (g % 2000) + 1 FROM generate_series(1, 4000) g",
  "CREATE VIEW paid_orders AS SELECT o.id, o.customer_id, c.name, o.total FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.status = 'paid'",
  'CREATE VIEW order_counts AS SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id',
  "CREATE VIEW big_paid AS SELECT * FROM paid_orders WHERE total > 50",
];

describe('views and subqueries in FROM', () => {
  it('take a join\'s keys into their query and read them by index while the outer side is small', async () => {
    await alike([
      ...SETUP,
      'SELECT c.id, p.id, p.total FROM customers c JOIN paid_orders p ON p.customer_id = c.id WHERE c.id = 5 ORDER BY 2',
      'SELECT c.id, p.id, p.name FROM customers c LEFT JOIN paid_orders p ON p.customer_id = c.id WHERE c.id IN (5, 6, 7, 2001) ORDER BY 1, 2',
      // A key of another type than the column (bigint against int), in both directions.
      'SELECT o.id, p.id FROM orders o JOIN paid_orders p ON p.customer_id = o.big_customer WHERE o.id = 12 ORDER BY 2',
      'SELECT c.id, s.id FROM customers c JOIN (SELECT id, big_customer FROM orders) s ON s.big_customer = c.id WHERE c.id = 9 ORDER BY 2',
      // Other join conditions are tested on the joined row; conditions on the view alone go in too.
      'SELECT c.id, p.id FROM customers c JOIN paid_orders p ON p.customer_id = c.id AND p.total > c.id WHERE c.id < 4 ORDER BY 1, 2',
      'SELECT c.id, p.id FROM customers c LEFT JOIN paid_orders p ON p.customer_id = c.id AND p.total > 90 WHERE c.id < 4 ORDER BY 1, 2',
      'SELECT c.id, p.id FROM customers c JOIN paid_orders p ON p.customer_id = c.id WHERE c.id < 4 AND p.total < 30 ORDER BY 1, 2',
      // A view of a view, a subquery with `*` and its own WHERE, a subquery inside a correlated subquery.
      'SELECT c.id, b.id FROM customers c JOIN big_paid b ON b.customer_id = c.id WHERE c.id = 17 ORDER BY 2',
      "SELECT c.id, s.id FROM customers c JOIN (SELECT * FROM orders WHERE status = 'open') s ON s.customer_id = c.id WHERE c.id = 5 ORDER BY 2",
      'SELECT c.id, (SELECT count(*) FROM customers c2 JOIN (SELECT * FROM orders o WHERE o.total > c.id) s ON s.customer_id = c2.id WHERE c2.id = c.id) FROM customers c WHERE c.id < 6 ORDER BY 1',
      // A NULL key matches nothing; a LEFT join keeps the row.
      'SELECT o.id, p.id FROM orders o LEFT JOIN paid_orders p ON p.customer_id = o.customer_id WHERE o.id IN (97, 194) ORDER BY 1, 2',
      // A large outer side hashes the whole view instead: same answers.
      'SELECT count(*), sum(p.total) FROM customers c JOIN paid_orders p ON p.customer_id = c.id WHERE c.id > 100',
      'SELECT count(*), sum(p.total) FROM customers c LEFT JOIN paid_orders p ON p.customer_id = c.id',
      // A grouped view takes keys on its grouping columns (rows of a group share the key).
      'SELECT c.id, x.n FROM customers c JOIN order_counts x ON x.customer_id = c.id WHERE c.id = 9',
      'SELECT c.id, x.n FROM customers c LEFT JOIN order_counts x ON x.customer_id = c.id WHERE c.id IN (9, 2001) ORDER BY 1',
      // Shapes that keep the keys out (LIMIT, a key on an aggregate) are joined whole.
      'SELECT c.id, x.id FROM customers c JOIN (SELECT id, customer_id FROM orders ORDER BY id LIMIT 10) x ON x.customer_id = c.id ORDER BY 1, 2',
      'SELECT c.id, x.customer_id FROM customers c JOIN order_counts x ON x.n = c.id WHERE c.id = 2 ORDER BY 2 LIMIT 3',
    ]);
    expect(await explain('SELECT c.id, x.n FROM customers c JOIN order_counts x ON x.customer_id = c.id WHERE c.id = 9')).toMatch(/x by its parameterised plan[^]*Index Scan using orders_customer/);
    expect(await explain('SELECT c.id, p.id FROM customers c JOIN paid_orders p ON p.customer_id = c.id WHERE c.id = 5')).toMatch(/Lookup Join \(inner\)\s+\(p by its parameterised plan[^]*Index Scan using orders_customer on orders/);
    expect(await explain('SELECT c.id, s.id FROM customers c LEFT JOIN (SELECT * FROM orders) s ON s.customer_id = c.id WHERE c.id = 5')).toMatch(/Lookup Join \(left\)\s+\(s by its parameterised plan[^]*Index Scan using orders_customer/);
    // Without an index on the key the view is joined whole (a lookup would scan once per row).
    expect(await explain('SELECT c.id, p.id FROM customers c JOIN paid_orders p ON p.total = c.id WHERE c.id = 5')).not.toMatch(/parameterised/);
  });

  it('take conditions on a subquery into its WHERE, so they reach its tables\' keys', async () => {
    await alike([
      'SELECT * FROM (SELECT id, customer_id FROM orders) s WHERE s.id = 7',
      'SELECT * FROM (SELECT * FROM orders) s WHERE s.id = 7',
      'SELECT * FROM (SELECT o.id AS oid, c.name FROM orders o JOIN customers c ON c.id = o.customer_id) s (x, y) WHERE s.x BETWEEN 5 AND 8 ORDER BY 1',
      'SELECT s.n FROM (SELECT id + 1 AS n FROM orders) s WHERE s.n = 8',
      // Shapes that keep them out, and volatile columns, filter the subquery's rows instead.
      'SELECT * FROM (SELECT customer_id, count(*) AS n FROM orders GROUP BY customer_id) s WHERE s.customer_id = 3',
      'SELECT * FROM (SELECT DISTINCT status FROM orders) s WHERE s.status = $$paid$$',
      'SELECT count(*) FROM (SELECT id, random() AS r FROM orders) s WHERE s.r < 2',
      'SELECT * FROM (SELECT id FROM orders ORDER BY id DESC LIMIT 3) s WHERE s.id > 3998 ORDER BY 1',
      // Grouped and DISTINCT subqueries take conditions on their grouping (distinct) columns; the
      // other conditions filter their rows, each condition on its own.
      'SELECT * FROM order_counts WHERE customer_id = 9',
      'SELECT * FROM order_counts WHERE n > 1 AND customer_id < 4 ORDER BY 1',
      "SELECT * FROM (SELECT status, customer_id % 7 AS bucket, count(*) AS n FROM orders GROUP BY 1, 2 HAVING count(*) > 1) s WHERE status = 'paid' AND bucket = 3 AND n > 2",
      'SELECT * FROM (SELECT lower(status) AS ls, count(*) FROM orders GROUP BY ls) s WHERE ls = $$open$$',
      'SELECT * FROM (SELECT DISTINCT customer_id, status FROM orders) s WHERE customer_id = 5 ORDER BY 2',
      'SELECT * FROM (SELECT DISTINCT count(*) AS c FROM orders) s WHERE c > 0',
      'SELECT * FROM (SELECT count(*) AS c FROM orders HAVING count(*) > 0) s WHERE c > 1',
      'SELECT * FROM (SELECT DISTINCT ON (customer_id) customer_id, id FROM orders ORDER BY customer_id, id DESC) s WHERE customer_id = 4',
      'SELECT * FROM (SELECT customer_id, sum(total) OVER (PARTITION BY customer_id) AS t FROM orders) s WHERE customer_id = 4 ORDER BY 2',
    ]);
    expect(await explain('SELECT * FROM order_counts WHERE n > 1 AND customer_id < 4')).toMatch(/Filter[^]*Index Scan using orders_customer on orders\s+\(Key: \(customer_id\), range/);
    expect(await explain('SELECT * FROM (SELECT * FROM orders) s WHERE s.id = 7')).toMatch(/Primary Key Scan on orders\s+\(Key: \(id\), 1 equal/);
  });
});
