// CREATE TABLE ... AS query (engine/sql/exec/ddl.ts createTableAs): the table of the query's
// columns (names, or those given; types), filled with its rows in the same transaction, as
// PostgreSQL makes it. Each statement runs in tetradb over HTTP and in PostgreSQL (PGlite) with the
// same outcome; then a failed request leaves no table behind, and the table survives a restart.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { afterRestart, alikeFull } from './pg-outcome.js';
import { http, serverForFile } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

describe('CREATE TABLE ... AS', () => {
  it("makes a table of the query's columns and rows", async () => {
    const refused = await alikeFull(pg, file, [
      'CREATE TABLE src (id int PRIMARY KEY, name text, price numeric(6,2), tags text[], ok boolean, c char(3))',
      "INSERT INTO src VALUES (1, 'a', 1.5, '{x}', true, 'ab'), (2, 'b', NULL, NULL, false, NULL)",
      "CREATE TABLE t2 AS SELECT id, name, price * 2 AS p2, tags, ok, c, 'lit' AS l, 1 + 1 AS two FROM src WHERE id > 0",
      'SELECT * FROM t2 ORDER BY id',
      "SELECT column_name, data_type, is_nullable FROM information_schema.columns WHERE table_name = 't2' ORDER BY ordinal_position",
      'CREATE TABLE t3 (x, y) AS SELECT id, name FROM src',
      'SELECT * FROM t3 ORDER BY x',
      'CREATE TABLE t6 AS SELECT * FROM src WHERE false',
      'SELECT count(*) FROM t6',
      'CREATE TABLE t7 AS SELECT g, g * 2 AS d FROM generate_series(1, 1000) g',
      'SELECT count(*), sum(d) FROM t7',
      // A table like any other afterwards: no key, so duplicates go in.
      'INSERT INTO t7 VALUES (1, 2) RETURNING *',
      'CREATE TABLE IF NOT EXISTS t3 AS SELECT 1',
      'SELECT count(*) FROM t3',
      // Refused as PostgreSQL refuses them.
      'CREATE TABLE t3 AS SELECT 1',
      'CREATE TABLE t4 (a, b, c) AS SELECT 1, 2',
      'CREATE TABLE t5 AS SELECT 1 AS a, 2 AS a',
    ]);
    expect(refused).toEqual(['42P07', '42601', '42701']);
  });

  it('is undone with the request that fails, and kept across a restart', async () => {
    const failed = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql: 'CREATE TABLE gone AS SELECT 1 AS a; SELECT 1 / 0' }, apiKey: file.apiKey });
    expect(failed.status).toBe(400);
    const after = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql: 'SELECT count(*) FROM gone' }, apiKey: file.apiKey });
    expect(after.body.error.details.sqlstate).toBe('42P01');
    await afterRestart(pg, ['CREATE TABLE kept AS SELECT g AS n FROM generate_series(1, 5) g'], async (restarted) => {
      const refused = await alikeFull(pg, restarted, ['SELECT sum(n), count(*) FROM kept', 'INSERT INTO kept VALUES (6)', 'SELECT max(n) FROM kept']);
      expect(refused).toEqual([]);
    });
  });
});
