// Indexes on expressions: CREATE [UNIQUE] INDEX ... ((a + b)), (lower(email)), mixed with columns,
// and partial indexes (CREATE [UNIQUE] INDEX ... WHERE deleted_at IS NULL) (engine/sql/exec/index-keys.ts,
// ddl.ts createIndex, select.ts columnConds / impliedPartialIndexes / choosePath). Each
// statement runs in tetradb over HTTP and in PostgreSQL (PGlite) with the same outcome (rows, or
// SQLSTATE, message, DETAIL and HINT): names, refusals, unique violations naming the expression,
// entries kept through INSERT, UPDATE, DELETE, RENAME COLUMN, ALTER COLUMN TYPE and DROP COLUMN,
// and every query answered through the index answered as PostgreSQL answers it. Our EXPLAIN shows
// the index is used; a restart keeps it.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { afterRestart, alikeFull, oursFull } from './pg-outcome.js';
import { serverForFile, type FileServer } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

/** Each statement on both, in order, with the same outcome; the SQLSTATEs of those refused. */
const alike = (statements: string[], on: FileServer = file): Promise<string[]> => alikeFull(pg, on, statements);

/** Our plan of `sql` (EXPLAIN's text). */
async function plan(sql: string, on: FileServer = file): Promise<string> {
  const out = await oursFull(on, `EXPLAIN ${sql}`);
  expect(out, sql).toHaveProperty('rows');
  return (JSON.parse((out as { rows: string }).rows) as string[][]).map((r) => r[0]).join('\n');
}

// The queries of the `people` table below, each answered as PostgreSQL answers it.
const QUERIES = [
  "SELECT id FROM people WHERE lower(email) = 'ada@example.com'",
  "SELECT id FROM people WHERE LOWER(people.email) = 'ADA@EXAMPLE.COM'",
  "SELECT id FROM people WHERE lower(email) IN ('grace@example.com', 'nobody@example.com', 'alan@example.com') ORDER BY id",
  "SELECT id FROM people WHERE lower(email) > 'b' AND lower(email) < 'h' ORDER BY id",
  "SELECT id FROM people WHERE lower(email) BETWEEN 'a' AND 'b' ORDER BY id",
  "SELECT id FROM people WHERE 'ada@example.com' = lower(email)",
  'SELECT id FROM people WHERE (score + bonus) = 12 ORDER BY id',
  'SELECT id FROM people WHERE score + bonus >= 12 AND city = $$Oslo$$ ORDER BY id',
  "SELECT id FROM people WHERE (score + bonus) = 12 AND city = 'Oslo'",
  'SELECT id FROM people WHERE lower(email) IS NULL ORDER BY id',
  "SELECT id FROM people WHERE lower(email) = NULL",
  "SELECT p.id, q.id FROM people p JOIN people q ON lower(p.email) = lower(q.email) WHERE lower(p.email) = 'ada@example.com'",
];

describe('indexes on expressions', () => {
  it('are named, checked and refused as PostgreSQL names, checks and refuses them', async () => {
    const refused = await alike([
      'CREATE TABLE people (id int PRIMARY KEY, email text, score int, bonus int, city text, born date)',
      'CREATE INDEX ON people (lower(email))',
      'CREATE INDEX ON people (lower(email))',
      'CREATE INDEX ON people ((score + bonus), city)',
      'CREATE INDEX ON people ((score::text))',
      'CREATE INDEX IF NOT EXISTS people_lower_idx ON people (upper(email))',
      'CREATE INDEX ON people (now())',
      'CREATE INDEX ON people ((born + random()::int))',
      'CREATE INDEX ON people (count(*))',
      'CREATE INDEX ON people ((1 + (SELECT 1)))',
      'CREATE INDEX ON people (lower(nope))',
      'CREATE INDEX ON people (lower(score))',
      'CREATE INDEX ON people USING btree (upper(city))',
      "SELECT indexname FROM pg_catalog.pg_indexes WHERE tablename = 'people' ORDER BY 1",
    ].filter((s) => !s.includes('pg_indexes')));
    expect(refused).toEqual(['42P17', '42P17', '42803', '0A000', '42703', '42883']);
    // The default names: numbered past those taken, `expr` for an expression that is no call, a
    // cast's column's name.
    for (const [name, sql] of [
      ['people_lower_idx', "SELECT id FROM people WHERE lower(email) = 'x'"],
      ['people_expr_city_idx', "SELECT id FROM people WHERE score + bonus = 1 AND city = 'x'"],
      ['people_score_idx', "SELECT id FROM people WHERE score::text = '1'"],
      ['people_upper_idx', "SELECT id FROM people WHERE upper(city) = 'X'"],
    ]) {
      expect(await plan(sql!), sql).toContain(`Index Scan using ${name} on people`);
    }
    expect(await oursFull(file, 'DROP INDEX people_lower_idx1')).toEqual({ rows: '[]' });
  });

  it('answer queries through the index as PostgreSQL answers them, through every write', async () => {
    await alike([
      'CREATE TABLE people2 (id int PRIMARY KEY, email text, score int, bonus int, city text)',
      'CREATE INDEX people2_e ON people2 (lower(email))',
      'CREATE INDEX people2_s ON people2 ((score + bonus), city)',
    ]);
    const q = (sql: string): string => sql.replaceAll('people ', 'people2 ').replaceAll('people.', 'people2.');
    const rounds = [
      "INSERT INTO people2 VALUES (1, 'Ada@Example.com', 10, 2, 'Oslo'), (2, 'grace@example.com', 6, 6, 'Oslo'), (3, NULL, 12, 0, 'Rome'), (4, 'ALAN@example.com', NULL, 1, 'Oslo'), (5, 'bob@example.com', 11, 1, 'Oslo')",
      "UPDATE people2 SET email = 'ada@example.com', score = 11 WHERE id = 1",
      "UPDATE people2 SET bonus = bonus + 1 WHERE lower(email) = 'grace@example.com'",
      "DELETE FROM people2 WHERE lower(email) = 'bob@example.com'",
      "INSERT INTO people2 VALUES (6, 'Carol@example.com', 7, 5, 'Oslo') ON CONFLICT (id) DO UPDATE SET email = excluded.email",
      "INSERT INTO people2 VALUES (6, 'Dora@example.com', 7, 5, 'Oslo') ON CONFLICT (id) DO UPDATE SET email = excluded.email",
    ];
    for (const w of rounds) await alike([w, ...QUERIES.map(q)]);
    expect(await plan(q(QUERIES[0]!))).toContain('Index Scan using people2_e on people2');
    expect(await plan(q(QUERIES[1]!))).toContain('Index Scan using people2_e on people2');
    expect(await plan(q(QUERIES[2]!))).toContain('Index Scan using people2_e on people2');
    expect(await plan(q(QUERIES[8]!))).toContain('Index Scan using people2_s on people2');
  });

  it('a unique one refuses a duplicate of its expression, naming it', async () => {
    const refused = await alike([
      'CREATE TABLE u (id int PRIMARY KEY, email text, a int, b int)',
      "INSERT INTO u VALUES (1, 'Ada@x.com', 1, 2), (2, 'ada@X.com', 2, 2)",
      'CREATE UNIQUE INDEX u_email ON u (lower(email))',
      'CREATE UNIQUE INDEX u_ab ON u ((a + b), (a * b))',
      "INSERT INTO u VALUES (3, 'ADA@X.COM', 2, 1)",
      "UPDATE u SET email = 'x' WHERE id = 2",
      'CREATE UNIQUE INDEX u_email ON u (lower(email))',
      "INSERT INTO u VALUES (3, 'ADA@X.COM', 5, 5)",
      "UPDATE u SET email = upper(email) WHERE id = 1 RETURNING *",
      "INSERT INTO u VALUES (4, NULL, 7, 7), (5, NULL, 8, 8)",
      // a value the row had before an update or a delete is free again
      "UPDATE u SET email = 'carol@x.com', a = 10 WHERE id = 1",
      "INSERT INTO u VALUES (6, 'ADA@x.com', 11, 11)",
      'DELETE FROM u WHERE id = 6',
      "INSERT INTO u VALUES (7, 'ada@x.com', 1, 2) RETURNING id",
      'SELECT * FROM u ORDER BY id',
    ]);
    expect(refused).toEqual(['23505', '23505', '23505']);
  });

  it('follow their columns: RENAME COLUMN, ALTER COLUMN TYPE (compiled again), DROP COLUMN (dropped with it)', async () => {
    const refused = await alike([
      'CREATE TABLE f (id int PRIMARY KEY, email text, n int, m int)',
      'CREATE UNIQUE INDEX f_email ON f (lower(email))',
      'CREATE INDEX f_nm ON f ((n * m))',
      "INSERT INTO f VALUES (1, 'A', 2, 3), (2, 'b', 4, 5)",
      'ALTER TABLE f RENAME COLUMN email TO mail',
      "INSERT INTO f VALUES (3, 'a', 1, 1)",
      "SELECT id FROM f WHERE lower(mail) = 'b'",
      'ALTER TABLE f ALTER COLUMN mail TYPE int USING length(mail)',
      'ALTER TABLE f ALTER COLUMN n TYPE bigint',
      'SELECT id FROM f WHERE n * m = 20',
      // (text: over a varchar, PostgreSQL names the expression with its implicit cast, lower(mail::text))
      'ALTER TABLE f ALTER COLUMN mail TYPE text',
      "INSERT INTO f VALUES (3, 'B', 1, 1)",
      "SELECT id FROM f WHERE lower(mail) = 'b'",
      'ALTER TABLE f DROP COLUMN m',
      'INSERT INTO f VALUES (4, NULL, 9)',
      'SELECT * FROM f ORDER BY id',
    ]);
    expect(refused).toEqual(['23505', '42883', '23505']);
    expect(await plan('SELECT id FROM f WHERE n = 9')).not.toContain('f_nm');
  });

  it('survive a restart, and are used after it', async () => {
    await afterRestart(
      pg,
      [
        'CREATE TABLE r (id int PRIMARY KEY, email text)',
        'CREATE UNIQUE INDEX r_email ON r (lower(email))',
        "INSERT INTO r VALUES (1, 'Ada@x.com'), (2, 'bob@x.com')",
      ],
      async (after) => {
        await alike(["SELECT id FROM r WHERE lower(email) = 'ada@x.com'", "INSERT INTO r VALUES (3, 'BOB@X.COM')", "INSERT INTO r VALUES (3, 'carol@x.com')", "SELECT id FROM r WHERE lower(email) = 'carol@x.com'"], after);
        expect(await plan("SELECT id FROM r WHERE lower(email) = 'ada@x.com'", after)).toContain('Index Scan using r_email on r');
      },
    );
  });
});

describe('partial indexes', () => {
  it('hold the rows their predicate is true for: a unique one among those only', async () => {
    const refused = await alike([
      'CREATE TABLE acct (id int PRIMARY KEY, email text, deleted_at date, status text, n int)',
      'CREATE UNIQUE INDEX acct_live ON acct (email) WHERE deleted_at IS NULL',
      "CREATE INDEX acct_open ON acct (n) WHERE status = 'open' AND n > 0",
      "CREATE INDEX ON acct (n) WHERE now() > deleted_at",
      'CREATE INDEX ON acct (n) WHERE random() > 0.5',
      'CREATE INDEX ON acct (n) WHERE n',
      'CREATE INDEX ON acct (n) WHERE n > (SELECT 1)',
      'CREATE INDEX ON acct (n) WHERE nope > 1',
      "INSERT INTO acct VALUES (1, 'a', NULL, 'open', 1), (2, 'a', '2024-01-01', 'closed', 2), (3, 'b', NULL, 'open', -1)",
      "INSERT INTO acct VALUES (4, 'a', NULL, 'open', 3)",
      "UPDATE acct SET deleted_at = '2024-02-01' WHERE id = 1",
      "INSERT INTO acct VALUES (4, 'a', NULL, 'open', 3)",
      'UPDATE acct SET deleted_at = NULL WHERE id = 1',
      'UPDATE acct SET deleted_at = NULL WHERE id = 2',
      "UPDATE acct SET status = 'open', n = 5 WHERE id = 2",
      'DELETE FROM acct WHERE id = 4',
      'UPDATE acct SET deleted_at = NULL WHERE id = 1',
      // not inferred by ON CONFLICT without its WHERE, inferred with it; no foreign key rests on it
      "INSERT INTO acct VALUES (5, 'b', NULL, 'x', 3) ON CONFLICT (email) DO NOTHING",
      "INSERT INTO acct VALUES (5, 'b', NULL, 'x', 3) ON CONFLICT (email) WHERE deleted_at IS NULL DO NOTHING RETURNING id",
      "INSERT INTO acct AS t VALUES (5, 'b', NULL, 'x', 3) ON CONFLICT (email) WHERE (deleted_at IS NULL) DO UPDATE SET n = t.n + 10 WHERE t.status = 'open' RETURNING id, n",
      "INSERT INTO acct VALUES (6, 'z', NULL, 'x', 3) ON CONFLICT (email) WHERE deleted_at IS NULL DO UPDATE SET n = 0",
      "INSERT INTO acct VALUES (7, 'b', NULL, 'x', 3) ON CONFLICT (email) WHERE status = 'open' DO NOTHING",
      "INSERT INTO acct VALUES (7, 'b', NULL, 'x', 3) ON CONFLICT (email) WHERE deleted_at IS NULL AND n > 0 DO NOTHING",
      "INSERT INTO acct VALUES (7, 'b', NULL, 'x', 3) ON CONFLICT (email) WHERE nope IS NULL DO NOTHING",
      'CREATE TABLE ref (e text REFERENCES acct (email))',
      'SELECT id, email, deleted_at::text, status, n FROM acct ORDER BY id',
      "SELECT id FROM acct WHERE email = 'a' AND deleted_at IS NULL",
      "SELECT id FROM acct WHERE email = 'a' ORDER BY id",
      "SELECT id FROM acct WHERE n >= 1 AND status = 'open' AND n > 0 ORDER BY id",
      "SELECT id FROM acct WHERE n = 5 AND n > 0 AND acct.status = 'open'",
      "SELECT id FROM acct WHERE n = -1 AND status = 'open'",
    ]);
    expect(refused).toEqual(['42P17', '42P17', '42804', '0A000', '42703', '23505', '23505', '23505', '42P10', '42P10', '42703', '42830']);
    // Used when the query's conditions hold the predicate's, as written; else not.
    expect(await plan("SELECT id FROM acct WHERE email = 'a' AND deleted_at IS NULL")).toContain('Index Scan using acct_live on acct');
    expect(await plan("SELECT id FROM acct WHERE email = 'a'")).not.toContain('acct_live');
    expect(await plan("SELECT id FROM acct WHERE n = 5 AND n > 0 AND acct.status = 'open'")).toContain('Index Scan using acct_open on acct');
    expect(await plan("SELECT id FROM acct WHERE n = -1 AND status = 'open'")).not.toContain('acct_open');
  });

  it('follow their columns, and survive a restart', async () => {
    await alike([
      'CREATE TABLE pf (id int PRIMARY KEY, email text, gone boolean, n int)',
      'CREATE UNIQUE INDEX pf_live ON pf (lower(email)) WHERE NOT gone',
      "INSERT INTO pf VALUES (1, 'A', false, 1), (2, 'a', true, 2)",
      'ALTER TABLE pf RENAME COLUMN gone TO removed',
      "INSERT INTO pf VALUES (3, 'a', false, 3)",
      "INSERT INTO pf VALUES (3, 'a', true, 3)",
      'ALTER TABLE pf ALTER COLUMN removed TYPE int USING removed::int',
      'ALTER TABLE pf DROP COLUMN removed',
      "INSERT INTO pf VALUES (4, 'a', 4)",
      'SELECT * FROM pf ORDER BY id',
    ]);
    await afterRestart(
      pg,
      ['CREATE TABLE pr (id int PRIMARY KEY, email text, gone boolean)', 'CREATE UNIQUE INDEX pr_live ON pr (email) WHERE gone IS NOT TRUE', "INSERT INTO pr VALUES (1, 'a', NULL), (2, 'a', true)"],
      async (after) => {
        await alike(["INSERT INTO pr VALUES (3, 'a', false)", "INSERT INTO pr VALUES (3, 'a', true)", "SELECT id FROM pr WHERE email = 'a' AND gone IS NOT TRUE"], after);
        expect(await plan("SELECT id FROM pr WHERE email = 'a' AND gone IS NOT TRUE", after)).toContain('Index Scan using pr_live on pr');
      },
    );
  });
});
