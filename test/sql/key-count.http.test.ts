// count(*) counted in the keys of a read (engine/sql/exec/scan-aggregate.ts KeyCountPlan,
// select.ts exactKeys): when every condition on a lone table is an equality or IN list of a key column its
// index or primary key fixes, of a type whose key bytes are equal exactly when the values are, the
// rows are counted without reading one. Each count runs in tetradb over HTTP and in PostgreSQL
// (PGlite) with the same answer, over the shapes that count so (equalities, IN lists with repeats
// and NULLs, = ANY) and those that must not (ranges, other conditions, numeric and bpchar keys,
// expression and partial indexes), and inside a
// request whose own writes the count must see. EXPLAIN shows which way each one went.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { alikeFull } from './pg-outcome.js';
import { http, serverForFile } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

const query = (sql: string, params: unknown[] = []) => http(file.server.url, 'POST', '/api/sql/query', { json: { sql, params }, apiKey: file.apiKey });

async function plan(sql: string): Promise<string> {
  const res = await query(`EXPLAIN ${sql}`);
  expect(res.status, res.text).toBe(200);
  return res.body.rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
}

const KEYED = 'counted in the keys of its read';

describe('count(*) in the keys of a read', () => {
  it('answers as PostgreSQL, keyed where every condition is an exact key equality', async () => {
    const refused = await alikeFull(pg, file, [
      "CREATE TYPE tier AS ENUM ('free', 'pro', 'team')",
      'CREATE TABLE k (id int PRIMARY KEY, s text NOT NULL, g int, b boolean, d date, ts timestamptz, u uuid, t tier, n numeric(6,2), c char(4), e text)',
      'CREATE INDEX k_s ON k (s)',
      'CREATE INDEX k_sg ON k (s, g)',
      'CREATE INDEX k_b ON k (b)',
      'CREATE INDEX k_d ON k (d)',
      'CREATE INDEX k_ts ON k (ts)',
      'CREATE INDEX k_u ON k (u)',
      'CREATE INDEX k_t ON k (t)',
      'CREATE INDEX k_n ON k (n)',
      'CREATE INDEX k_c ON k (c)',
      'CREATE INDEX k_lower ON k (lower(e))',
      'CREATE INDEX k_part ON k (g) WHERE b',
      "INSERT INTO k SELECT i, CASE i % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE 'c' END, i % 5, i % 2 = 0, DATE '2024-01-01' + (i % 4), TIMESTAMPTZ '2024-01-01 00:00:00+00' + (i % 3) * INTERVAL '1 hour', CASE WHEN i % 2 = 0 THEN '00000000-0000-0000-0000-000000000001'::uuid END, (CASE i % 3 WHEN 0 THEN 'free' WHEN 1 THEN 'pro' ELSE 'team' END)::tier, (i % 4) * 1.5, CASE WHEN i % 2 = 0 THEN 'ab' ELSE 'ab  ' END, CASE WHEN i % 2 = 0 THEN 'MiXed' ELSE 'other' END FROM generate_series(1, 600) i",
      "INSERT INTO k (id, s) VALUES (1001, 'a ')",
      "SELECT count(*) FROM k WHERE s = 'a'",
      "SELECT count(*) FROM k WHERE 'b' = s",
      "SELECT count(*) FROM k WHERE s = 'a' AND g = 3",
      "SELECT count(*) FROM k WHERE s = 'zz'",
      'SELECT count(*) FROM k WHERE b = true',
      "SELECT count(*) FROM k WHERE d = '2024-01-03'",
      "SELECT count(*) FROM k WHERE ts = '2024-01-01 01:00:00+00'",
      "SELECT count(*) FROM k WHERE u = '00000000-0000-0000-0000-000000000001'",
      "SELECT count(*) FROM k WHERE t = 'pro'",
      'SELECT count(*) FROM k WHERE id = 7',
      'SELECT count(*) FROM k WHERE id = 7000',
      "SELECT count(*) FROM k WHERE s IN ('a', 'b', 'a')",
      "SELECT count(*) FROM k WHERE s IN ('a', NULL, 'zz')",
      "SELECT count(*) FROM k WHERE s = ANY ('{a,c}')",
      "SELECT count(*) FROM k WHERE s IN ('a', 'c') AND g IN (1, 2, 2)",
      'SELECT count(*) FROM k WHERE id IN (1, 2, 3, 7000)',
      // Not so: a range, another condition, numeric and bpchar keys, an expression index, a partial index.
      "SELECT count(*) FROM k WHERE s > 'a'",
      "SELECT count(*) FROM k WHERE s = 'a' AND id > 300",
      'SELECT count(*) FROM k WHERE n = 1.5',
      'SELECT count(*) FROM k WHERE n = 1.50',
      "SELECT count(*) FROM k WHERE c = 'ab'",
      "SELECT count(*) FROM k WHERE lower(e) = 'mixed'",
      'SELECT count(*) FROM k WHERE g = 2 AND b',
      // Other aggregates, GROUP BY and count of a column read rows as before.
      "SELECT count(g) FROM k WHERE s = 'a'",
      "SELECT count(*), max(id) FROM k WHERE s = 'a'",
      "SELECT s, count(*) FROM k WHERE s = 'a' GROUP BY s",
    ]);
    expect(refused).toEqual([]);
    for (const sql of ["SELECT count(*) FROM k WHERE s IN ('a', 'b', 'a')", "SELECT count(*) FROM k WHERE s = ANY ('{a,c}')", "SELECT count(*) FROM k WHERE s IN ('a', 'c') AND g IN (1, 2, 2)", 'SELECT count(*) FROM k WHERE id IN (1, 2, 3, 7000)', "SELECT count(*) FROM k WHERE s = 'a'", "SELECT count(*) FROM k WHERE s = 'a' AND g = 3", 'SELECT count(*) FROM k WHERE b = true', "SELECT count(*) FROM k WHERE t = 'pro'", 'SELECT count(*) FROM k WHERE id = 7', "SELECT count(*) FROM k WHERE u = '00000000-0000-0000-0000-000000000001'"]) {
      expect(await plan(sql), sql).toContain(KEYED);
    }
    for (const sql of ["SELECT count(*) FROM k WHERE s > 'a'", "SELECT count(*) FROM k WHERE s = 'a' AND id > 300", 'SELECT count(*) FROM k WHERE n = 1.5', "SELECT count(*) FROM k WHERE c = 'ab'", "SELECT count(*) FROM k WHERE lower(e) = 'mixed'", 'SELECT count(*) FROM k WHERE g = 2 AND b', "SELECT count(g) FROM k WHERE s = 'a'"]) {
      expect(await plan(sql), sql).not.toContain(KEYED);
    }
  });

  it("counts a request's own writes, and a NULL parameter's nothing", async () => {
    expect((await query('CREATE TABLE w (id int PRIMARY KEY, s text)')).status).toBe(200);
    expect((await query('CREATE INDEX w_s ON w (s)')).status).toBe(200);
    expect((await query("INSERT INTO w SELECT i, CASE WHEN i % 2 = 0 THEN 'x' ELSE 'y' END FROM generate_series(1, 100) i")).status).toBe(200);
    const inRequest = await query("INSERT INTO w VALUES (101, 'x'), (102, 'x'); DELETE FROM w WHERE id IN (2, 4, 6); UPDATE w SET s = 'y' WHERE id = 8; SELECT count(*) FROM w WHERE s = 'x'");
    expect(inRequest.status, inRequest.text).toBe(200);
    expect(inRequest.body.rows).toEqual([{ count: 50 + 2 - 3 - 1 }]);
    const undone = await query("INSERT INTO w VALUES (103, 'x'); SELECT count(*) FROM w WHERE s = 'x'; SELECT 1 / 0");
    expect(undone.status).toBe(400);
    expect((await query('SELECT count(*) FROM w WHERE s = $1', ['x'])).body.rows).toEqual([{ count: 48 }]);
    expect((await query('SELECT count(*) FROM w WHERE s = $1', [null])).body.rows).toEqual([{ count: 0 }]);
  });
});
