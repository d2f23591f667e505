// Clauses ORMs and drivers write that the parser cannot read, or that were read and dropped:
// - a SELECT's locking clause (FOR UPDATE | NO KEY UPDATE | SHARE | KEY SHARE [OF t] [NOWAIT |
//   SKIP LOCKED], sql-rewrite.ts takeLocking, sql-engine.ts checkLocking): accepted at the end of
//   a statement with PostgreSQL's refusals, and without effect on the rows (a request is one
//   transaction, and writing requests run one at a time per tenant);
// - ON CONFLICT ON CONSTRAINT name (sql-rewrite.ts rewriteConflictConstraint, dml.ts insert);
// - CONSTRAINT name before a column's constraint (ddl.ts columnConstraints).
// Each statement runs in tetradb over HTTP and in PostgreSQL (PGlite) with the same outcome.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { alikeFull, oursOf } from './pg-outcome.js';
import { serverForFile } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

/** Each statement on both, in order, with the same outcome; the SQLSTATEs of those refused. */
const alike = (statements: string[]): Promise<string[]> => alikeFull(pg, file, statements);

describe('locking clauses', () => {
  it('are read at the end of a SELECT, with PostgreSQL\'s refusals', async () => {
    const refused = await alike([
      'CREATE TABLE jobs (id int PRIMARY KEY, state text, n int)',
      "INSERT INTO jobs VALUES (1, 'new', 1), (2, 'new', 2), (3, 'done', 3)",
      "SELECT * FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
      'SELECT * FROM jobs WHERE id = 2 FOR NO KEY UPDATE NOWAIT',
      'SELECT id FROM jobs FOR SHARE OF jobs',
      'SELECT j.id FROM jobs j JOIN jobs k ON k.id = j.id FOR KEY SHARE OF j, k FOR UPDATE OF k',
      'select id from jobs for update',
      'SELECT 1 FOR UPDATE',
      'SELECT count(*) FROM jobs FOR UPDATE',
      'SELECT state FROM jobs GROUP BY state FOR SHARE',
      'SELECT DISTINCT state FROM jobs FOR NO KEY UPDATE',
      'SELECT id FROM jobs HAVING true FOR KEY SHARE',
      'SELECT id, rank() OVER (ORDER BY n) FROM jobs FOR UPDATE',
      'SELECT id FROM jobs UNION SELECT n FROM jobs FOR UPDATE',
      'SELECT * FROM jobs FOR UPDATE OF nope',
      'SELECT * FROM jobs j FOR UPDATE OF jobs',
      'SELECT id, (SELECT count(*) FROM jobs) FROM jobs WHERE id = 1 FOR UPDATE',
    ]);
    expect(refused).toEqual(['0A000', '0A000', '0A000', '0A000', '0A000', '0A000', '42P01', '42P01']);
  });

  it('the usual queue pattern in one request: pick a row FOR UPDATE, then change it', async () => {
    const res = await oursOf(file, [
      "SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED",
      "UPDATE jobs SET state = 'taken' WHERE id = 1 RETURNING id, state",
    ]);
    expect(res).toEqual({ rows: [[['1']], [['1', 'taken']]] });
  });
});

describe('ON CONFLICT ON CONSTRAINT', () => {
  it('names the primary key or a unique constraint as the arbiter, with PostgreSQL\'s refusals', async () => {
    const refused = await alike([
      'CREATE TABLE oc (id int PRIMARY KEY, e text CONSTRAINT oc_e_uq UNIQUE, n int CHECK (n > 0))',
      "INSERT INTO oc VALUES (1, 'a', 1) ON CONFLICT ON CONSTRAINT oc_pkey DO NOTHING RETURNING id",
      "INSERT INTO oc VALUES (1, 'b', 1) ON CONFLICT ON CONSTRAINT oc_pkey DO UPDATE SET e = excluded.e RETURNING *",
      "INSERT INTO oc VALUES (2, 'b', 1) ON CONFLICT ON CONSTRAINT oc_e_uq DO UPDATE SET n = oc.n + 1 RETURNING *",
      "INSERT INTO oc VALUES (2, 'z', 5) ON CONFLICT ON CONSTRAINT OC_E_UQ DO NOTHING RETURNING *",
      "INSERT INTO oc VALUES (3, 'c', 1) ON CONFLICT ON CONSTRAINT nope DO NOTHING",
      "INSERT INTO oc VALUES (3, 'c', 1) ON CONFLICT ON CONSTRAINT oc_n_check DO NOTHING",
      'CREATE UNIQUE INDEX oc_n_idx ON oc (n)',
      "INSERT INTO oc VALUES (3, 'c', 1) ON CONFLICT ON CONSTRAINT oc_n_idx DO NOTHING",
      'SELECT * FROM oc ORDER BY id',
    ]);
    expect(refused).toEqual(['42704', '42809', '42704']);
  });
});

describe('a column constraint\'s name', () => {
  it('CONSTRAINT name before a column\'s PRIMARY KEY, UNIQUE, CHECK or REFERENCES names it', async () => {
    const refused = await alike([
      'CREATE TABLE cn (id int CONSTRAINT my_pk PRIMARY KEY, e text CONSTRAINT cn_e_uq UNIQUE, n int CONSTRAINT pos CHECK (n > 0), r int CONSTRAINT fk REFERENCES cn (id))',
      "INSERT INTO cn VALUES (1, 'a', 0, NULL)",
      "INSERT INTO cn VALUES (1, 'a', 1, 5)",
      "INSERT INTO cn VALUES (1, 'a', 1, NULL)",
      "INSERT INTO cn VALUES (1, 'b', 1, NULL)",
      "INSERT INTO cn VALUES (2, 'a', 1, NULL)",
      'ALTER TABLE cn ADD COLUMN z int CONSTRAINT z_uq UNIQUE',
      "INSERT INTO cn VALUES (3, 'c', 1, NULL, 1), (4, 'd', 1, NULL, 1)",
      "INSERT INTO cn VALUES (2, 'a', 1, NULL, 2) ON CONFLICT ON CONSTRAINT cn_e_uq DO UPDATE SET z = 9 RETURNING *",
      'ALTER TABLE cn DROP CONSTRAINT pos',
      "INSERT INTO cn VALUES (5, 'e', -1, NULL, 5) RETURNING id",
    ]);
    expect(refused).toEqual(['23514', '23503', '23505', '23505', '23505']);
  });
});

describe('generate_series over numeric and time', () => {
  it('steps numbers, timestamps and dates as PostgreSQL, refusing a zero step and signatures it has not', async () => {
    const refused = await alike([
      "SELECT pg_typeof(g), g::text FROM generate_series('2024-01-30'::date, '2024-03-01'::date, '1 month') g",
      "SELECT g::text FROM generate_series('2024-01-30 10:00'::timestamp, '2024-01-31', '6 hours') g",
      "SELECT g::text FROM generate_series('2024-01-01'::timestamptz, '2024-01-02', interval '12 hours') g",
      "SELECT g::text FROM generate_series('2024-01-03'::timestamp, '2024-01-01', '-1 day') g",
      "SELECT g::text FROM generate_series('2024-01-01', '2024-01-02', '1 day'::interval) g",
      "SELECT count(*) FROM generate_series('2024-01-01'::timestamp, '2023-01-01', '1 day') g",
      'SELECT g FROM generate_series(1.5, 3, 0.5) g',
      'SELECT g FROM generate_series(1, 2.5) g',
      'SELECT g FROM generate_series(3.0, 1, -0.75) g',
      "SELECT d::date::text, count(o.od) FROM generate_series('2024-01-01'::date, '2024-01-03', '1 day') d LEFT JOIN (VALUES ('2024-01-02'::date), ('2024-01-02')) o(od) ON o.od = d::date GROUP BY 1 ORDER BY 1",
      "SELECT g FROM generate_series('2024-01-01'::timestamp, '2024-01-02', '0 days') g",
      'SELECT g FROM generate_series(1.0, 2, 0) g',
      "SELECT g FROM generate_series('2024-01-01'::timestamp, '2024-01-02') g",
      'SELECT g FROM generate_series(1.5::float8, 3, 1) g',
      "SELECT g FROM generate_series(now(), now() + interval '1 day', NULL) g",
    ]);
    expect(refused).toEqual(['22023', '22023', '42883', '42883']);
  });
});

describe('to_jsonb and to_json', () => {
  it('give a value as JSON', async () => {
    const refused = await alike([
      "SELECT to_jsonb(1)::text, to_jsonb('a'::text)::text, to_jsonb(NULL::int)::text, to_jsonb(1.5)::text, to_jsonb(true)::text, to_jsonb('{\"a\": [1, {\"b\": null}]}'::jsonb)::text",
      "SELECT to_jsonb('2024-01-01'::date)::text, to_jsonb('2024-01-01 10:00'::timestamp)::text, to_jsonb('x\"y'::text)::text, to_jsonb(-0.5::float8)::text",
      "SELECT to_jsonb(x) ->> 'k' FROM (VALUES ('{\"k\": \"v\"}'::jsonb)) t(x)",
      "SELECT to_json(2)::text, to_json('a'::text)::text",
      "SELECT to_jsonb('x')",
      'SELECT to_jsonb(1, 2)',
    ]);
    expect(refused).toEqual(['42804', '42883']);
  });
});

describe('information_schema: constraints', () => {
  it('table_constraints, key_column_usage and referential_constraints list the keys, CHECKs and foreign keys as PostgreSQL does', async () => {
    const TC = "SELECT constraint_schema, constraint_name, table_schema, table_name, constraint_type, is_deferrable, initially_deferred, enforced, nulls_distinct FROM information_schema.table_constraints WHERE table_name IN ('isp', 'isc') AND constraint_name NOT LIKE '%not_null' ORDER BY table_name, constraint_name";
    const KCU = "SELECT constraint_name, table_name, column_name, ordinal_position, position_in_unique_constraint FROM information_schema.key_column_usage WHERE table_name IN ('isp', 'isc') ORDER BY table_name, constraint_name, ordinal_position";
    const RC = "SELECT constraint_name, unique_constraint_schema, unique_constraint_name, match_option, update_rule, delete_rule FROM information_schema.referential_constraints WHERE constraint_name LIKE 'isc%' ORDER BY constraint_name";
    await alike([
      'CREATE TABLE isp (id int PRIMARY KEY, code text UNIQUE, x int, y int, n int CHECK (n > 0), UNIQUE (y, x))',
      'CREATE TABLE isc (id int, pid int REFERENCES isp ON DELETE CASCADE ON UPDATE SET NULL, a int, b int, pc text CONSTRAINT isc_code_fk REFERENCES isp (code) ON DELETE RESTRICT, CONSTRAINT isc_pk PRIMARY KEY (id, a), UNIQUE (b, a), CONSTRAINT isc_xy FOREIGN KEY (a, b) REFERENCES isp (x, y))',
      'CREATE UNIQUE INDEX isp_n ON isp (n)',
      TC,
      KCU,
      RC,
      'ALTER TABLE isc DROP CONSTRAINT isc_code_fk',
      'ALTER TABLE isp RENAME TO isp',
      TC,
      RC,
    ]);
  });
});

describe('pg_indexes', () => {
  it('lists every index with its definition as pg_get_indexdef writes it', async () => {
    await alike([
      'CREATE TABLE pgi (id int PRIMARY KEY, a int, b text, live boolean, g int, "Odd Name" int, UNIQUE (a, g))',
      'CREATE INDEX pgi_lower ON pgi (lower(b))',
      'CREATE INDEX pgi_sum ON pgi ((a + g), id)',
      'CREATE INDEX pgi_live_a ON pgi (a) WHERE live',
      'CREATE UNIQUE INDEX pgi_live_b ON pgi (lower(b)) WHERE live AND a > 5',
      'CREATE INDEX ON pgi ("Odd Name")',
      'CREATE INDEX pgi_n ON pgi (b) WHERE b IS NOT NULL',
      'CREATE TABLE pgi_nokey (x int)',
      "SELECT schemaname, tablename, indexname, tablespace, indexdef FROM pg_indexes WHERE tablename LIKE 'pgi%' ORDER BY indexname",
      "SELECT indexname FROM pg_catalog.pg_indexes WHERE tablename = 'pgi' AND indexdef LIKE '%UNIQUE%' ORDER BY 1",
    ]);
  });
});

describe('42883 for a prefix operator', () => {
  it('has PostgreSQL\'s HINT', async () => {
    expect(await alike(["SELECT - 'a'::text", "SELECT ~ 'a'::text", 'SELECT - true'])).toEqual(['42883', '42883', '42883']);
  });
});

describe('DELETE ... USING', () => {
  it('resolves a condition\'s names over the target and the USING items at once: one both have is ambiguous, and nothing is deleted', async () => {
    // Without RETURNING the pre-pass makes USING a WHERE EXISTS subquery, inside which an
    // unqualified name would be the USING item's: `u1.id = id` was true for every row, and the
    // DELETE emptied the table where PostgreSQL refuses it (42702).
    const refused = await alike([
      'CREATE TABLE du_t (id int PRIMARY KEY, v int)',
      'CREATE TABLE du_u (id int PRIMARY KEY, w int)',
      'INSERT INTO du_t VALUES (1, 1), (2, 2), (3, 3)',
      'INSERT INTO du_u VALUES (1, 10), (3, 30)',
      'DELETE FROM du_t USING du_u WHERE du_u.id = id',
      'DELETE FROM du_t x USING du_u WHERE du_u.id = id AND w > 0',
      'SELECT * FROM du_t ORDER BY id',
      'DELETE FROM du_t USING du_u WHERE du_u.id = du_t.id AND w = 10',
      'DELETE FROM du_t USING du_u WHERE du_u.w = v',
      'DELETE FROM du_t x USING du_u u WHERE u.id = x.id AND (SELECT count(*) FROM du_u WHERE id = 3) = 1',
      'SELECT * FROM du_t ORDER BY id',
    ]);
    expect(refused).toEqual(['42702', '42702']);
  });
});
