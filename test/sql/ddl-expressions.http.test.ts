// What a table definition's expressions may hold (engine/sql/exec/expression-kinds.ts): CHECK,
// DEFAULT, generation expressions, index expressions and predicates, each statement run in tetradb
// over HTTP and in PostgreSQL (PGlite) with the same answer: rows, or the same SQLSTATE and
// message. A refused statement changes nothing: the catalog is compared after it.
import type { PGlite } from '@electric-sql/pglite';
import { beforeAll, describe, expect, it } from 'vitest';
import { http, serverForFile } from '../helpers/server.js';
import { alikeFull, oursFull, oursOf, theirsFull, theirsOf } from './pg-outcome.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

const SETUP = ['CREATE TABLE q (id int PRIMARY KEY, v int, x int, s text)', "INSERT INTO q VALUES (1, NULL, 0, 'a'), (2, 10, 1, '5')", 'CREATE TABLE a1 (id int)', 'INSERT INTO a1 VALUES (1)'];

beforeAll(async () => {
  expect(await oursOf(file, SETUP)).toMatchObject({ rows: expect.any(Array) });
  for (const s of SETUP) await pg.exec(s);
}, 60_000);

/** The tenant's tables and columns, as information_schema lists them. */
const CATALOG = 'SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = \'public\' ORDER BY table_name, ordinal_position';

async function compare(sql: string): Promise<void> {
  const before = await oursOf(file, [CATALOG]);
  const expected = await theirsOf(pg, [sql]);
  const ours = await oursOf(file, [sql]);
  expect(ours, sql).toEqual(expected);
  if ('sqlstate' in ours) {
    // Refused: nothing changed, on either side.
    expect(await oursOf(file, [CATALOG])).toEqual(before);
    expect(await theirsOf(pg, [CATALOG])).toEqual(before);
  }
}

describe('CHECK constraints', () => {
  it.each([
    // subqueries of every form, wherever they are
    'CREATE TABLE c1 (v int CHECK (v > (SELECT 1)))',
    'CREATE TABLE c2 (v int, CHECK (v > (SELECT max(v) FROM q)))',
    'CREATE TABLE c3 (v int CHECK (EXISTS (SELECT 1)))',
    'CREATE TABLE c4 (v int CHECK (NOT EXISTS (SELECT 1)))',
    'CREATE TABLE c5 (v int CHECK (v IN (SELECT 1)))',
    'CREATE TABLE c6 (v int CHECK (v = ANY (SELECT 1)))',
    'CREATE TABLE c7 (v int, CHECK (v > 0 AND (SELECT true)))',
    // aggregates, window functions, set-returning functions
    'CREATE TABLE c8 (v int CHECK (max(v) > 0))',
    'CREATE TABLE c9 (v int CHECK (count(*) > 0))',
    'CREATE TABLE c10 (v int CHECK (bool_and(v > 0)))',
    'CREATE TABLE c11 (v int CHECK (row_number() OVER () > 0))',
    'CREATE TABLE c12 (v int CHECK (sum(v) OVER () > 0))',
    'CREATE TABLE c13 (v int CHECK (generate_series(1, 2) > 0))',
    "CREATE TABLE c14 (v text CHECK (regexp_matches(v, 'a') IS NOT NULL))",
    // what comes first: a call's arguments are read before the call, a subquery before its operands
    'CREATE TABLE c15 (v int CHECK (w > (SELECT 1)))',
    'CREATE TABLE c16 (v int CHECK (w IN (SELECT 1)))',
    'CREATE TABLE c17 (v int CHECK (max(w) > 0))',
    'CREATE TABLE c18 (v int CHECK (max((SELECT 1)) > 0))',
    'CREATE TABLE c19 (v int CHECK (nosuch(v) > (SELECT 1)))',
    // names, parameters and types, checked when the constraint is defined
    'CREATE TABLE c20 (v int CHECK (q.v > 0))',
    'CREATE TABLE c21 (v int CHECK (v > 0 AND w > 0))',
    'CREATE TABLE c22 (v int, CHECK (v > 0), CHECK (w > 0))',
    'CREATE TABLE c23 (v int CHECK (v > $1))',
    'CREATE TABLE c24 (v int CHECK (v + 1))',
    "CREATE TABLE c25 (v int CHECK ('abc'))",
    "CREATE TABLE c26 (v int CHECK (v > 'abc'))",
    // accepted
    'CREATE TABLE c27 (v int CHECK (c27.v > 0))',
    'CREATE TABLE c28 (v int CHECK (NULL))',
    'CREATE TABLE c29 (v int CHECK (v IS DISTINCT FROM 0))',
    "CREATE TABLE c30 (v int CHECK (now() > '2000-01-01'))",
  ])('%s', async (sql) => {
    await compare(sql);
  });

  it('is still evaluated as an expression: its AND goes on after a NULL (a CHECK passes on NULL)', async () => {
    await compare('CREATE TABLE c31 (v int, x int, CHECK (v > 5 AND 1 / x = 1))');
    for (const sql of ['INSERT INTO c31 VALUES (NULL, 0)', 'INSERT INTO c31 VALUES (NULL, 1) RETURNING *', 'INSERT INTO c31 VALUES (1, 1)', 'SELECT * FROM c31']) {
      expect(await oursOf(file, [sql]), sql).toEqual(await theirsOf(pg, [sql]));
    }
  });
});

describe('DEFAULT expressions', () => {
  it.each([
    'CREATE TABLE d1 (v int DEFAULT (SELECT 1))',
    'CREATE TABLE d2 (v int DEFAULT 1 + (SELECT 1))',
    'CREATE TABLE d3 (v int DEFAULT (SELECT max(v) FROM q))',
    'CREATE TABLE d4 (v boolean DEFAULT EXISTS (SELECT 1))',
    'CREATE TABLE d5 (v int DEFAULT max(1))',
    'CREATE TABLE d6 (v int DEFAULT (1 + count(*)))',
    'CREATE TABLE d7 (v int DEFAULT row_number() OVER ())',
    'CREATE TABLE d8 (v int DEFAULT generate_series(1, 2))',
    "CREATE TABLE d9 (v int DEFAULT jsonb_array_elements('[1]'))",
    'CREATE TABLE d10 (v int DEFAULT v)',
    'CREATE TABLE d11 (v int DEFAULT (SELECT 1) + w)',
    'CREATE TABLE d12 (v int DEFAULT w + (SELECT 1))',
    'CREATE TABLE d13 (v int DEFAULT $1)',
    // the default's type against the column's, and a literal read now
    "CREATE TABLE d14 (v int DEFAULT 'abc')",
    'CREATE TABLE d15 (v int DEFAULT true)',
    'CREATE TABLE d16 (v int DEFAULT 1 IS DISTINCT FROM 2)',
    "CREATE TABLE d17 (v int DEFAULT 1 + 'x')",
    // two defaults for one column (the parser kept the last)
    'CREATE TABLE d18 (v int DEFAULT 1 CHECK (v > 0) DEFAULT 2)',
    // accepted
    'CREATE TABLE d19 (v numeric DEFAULT 1, t text DEFAULT 1, b boolean DEFAULT NULL, ts timestamp DEFAULT now())',
    // ALTER TABLE ... ADD COLUMN ... DEFAULT
    'ALTER TABLE a1 ADD COLUMN v int DEFAULT (SELECT 1)',
    'ALTER TABLE a1 ADD COLUMN w int DEFAULT max(1)',
    'ALTER TABLE a1 ADD COLUMN w int DEFAULT id',
    "ALTER TABLE a1 ADD COLUMN w int DEFAULT 'x'",
    'ALTER TABLE a1 ADD COLUMN w int DEFAULT 7',
  ])('%s', async (sql) => {
    await compare(sql);
  });

  it('an accepted default is what INSERT and ADD COLUMN use', async () => {
    for (const sql of ['INSERT INTO d19 DEFAULT VALUES', 'SELECT v, t, b, ts IS NOT NULL FROM d19', 'SELECT * FROM a1']) {
      expect(await oursOf(file, [sql]), sql).toEqual(await theirsOf(pg, [sql]));
    }
  });
});

describe('generation expressions and index expressions', () => {
  it.each([
    'CREATE TABLE g1 (v int, w int GENERATED ALWAYS AS (v + (SELECT 1)) STORED)',
    'CREATE TABLE g2 (v int, w int GENERATED ALWAYS AS (max(v)) STORED)',
    'CREATE TABLE g3 (v int, w int GENERATED ALWAYS AS (row_number() OVER ()) STORED)',
    'CREATE TABLE g4 (v int, w int GENERATED ALWAYS AS (generate_series(1, v)) STORED)',
    'CREATE TABLE g5 (v int, w int GENERATED ALWAYS AS (nosuch + 1) STORED)',
    'CREATE TABLE g6 (v int, w int DEFAULT 1 GENERATED ALWAYS AS (v) STORED)',
    'CREATE INDEX i1 ON q ((v + (SELECT 1)))',
    'CREATE INDEX i2 ON q ((max(v)))',
    'CREATE INDEX i3 ON q ((row_number() OVER ()))',
    'CREATE INDEX i4 ON q ((generate_series(1, v)))',
    'CREATE INDEX i5 ON q (v) WHERE v > (SELECT 1)',
    'CREATE INDEX i6 ON q (v) WHERE EXISTS (SELECT 1)',
    'CREATE INDEX i7 ON q (v) WHERE max(v) > 0',
    'CREATE INDEX i8 ON q (v) WHERE row_number() OVER () > 0',
    'CREATE INDEX i9 ON q (v) WHERE generate_series(1, v) > 0',
  ])('%s', async (sql) => {
    await compare(sql);
  });
});

// The names PostgreSQL gives unnamed CHECKs (after the one column an expression reads, wherever it
// is written), its duplicate-key DETAIL and its VALUES length rule, seen through the messages of
// the statements that break them. Each statement is compared in order: later ones see the tables
// the earlier ones made.
describe('names and messages of constraints', () => {
  const statements = [
    'CREATE TABLE n1 (a int, b int, CHECK (a > 0), CHECK (a < b), CHECK (true), c int CHECK (b > 0), d int CHECK (c > d))',
    'INSERT INTO n1 VALUES (0, 5, 1, 0)',
    'INSERT INTO n1 VALUES (1, 0, 1, 0)',
    'INSERT INTO n1 VALUES (2, 1, 1, 0)',
    'INSERT INTO n1 VALUES (1, 5, 0, 0)',
    'INSERT INTO n1 VALUES (1, 5, 1, 2)',
    'INSERT INTO n1 VALUES (1, 5, 1, 0)',
    'CREATE TABLE n2 (a int CHECK (a > 0), CHECK (a < 10), CHECK (a <> 5))',
    'INSERT INTO n2 VALUES (5)',
    'INSERT INTO n2 VALUES (12)',
    'CREATE TABLE n3 (id int PRIMARY KEY, u text UNIQUE)',
    "INSERT INTO n3 VALUES (1, 'x')",
    "INSERT INTO n3 VALUES (1, 'y')",
    "INSERT INTO n3 VALUES (2, 'x')",
    "INSERT INTO n3 VALUES (3, 'z'), (4)",
    "INSERT INTO n3 VALUES (3), (4, 'w')",
    "INSERT INTO n3 VALUES (3, 'z', 1)",
    "INSERT INTO n3 VALUES (3, 'z', 1), (4)",
    "INSERT INTO n3 VALUES (3), (4, 'w', 1)",
    "INSERT INTO n3 VALUES (3, 'z'), (4, 'w')",
    // a column list against the rows
    "INSERT INTO n3 (id) VALUES (5, 'v')",
    'INSERT INTO n3 (id, u) VALUES (5)',
    "INSERT INTO n3 (id, u) VALUES (5, 'v'), (6)",
    "INSERT INTO n3 (id) VALUES (5), (6, 'v')",
    "INSERT INTO n3 (id) VALUES (5, 'v'), (6, 'w')",
    'INSERT INTO n3 (id, u) VALUES (5), (6)',
    "INSERT INTO n3 AS t (id) VALUES ((SELECT 5), 'v') ON CONFLICT DO NOTHING",
    "INSERT INTO n3 (id, u) VALUES (5, (SELECT max(u) FROM n3 WHERE id IN (1, 2))), (6, 'v, w') RETURNING *",
    "INSERT INTO n3 (id) VALUES (7) RETURNING *",
    'SELECT id, u FROM n3 ORDER BY id',
  ];
  it('gives PostgreSQL\'s names and messages, statement by statement', async () => {
    for (const sql of statements) await compare(sql);
  });

  it("gives a duplicate key PostgreSQL's DETAIL", async () => {
    for (const sql of ["INSERT INTO n3 VALUES (1, 'q')", "INSERT INTO n3 VALUES (9, 'x')"]) {
      const ours = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql }, apiKey: file.apiKey });
      const theirs = await pg.query(sql).then(
        () => undefined,
        (err: { code: string; detail?: string }) => ({ sqlstate: err.code, detail: err.detail }),
      );
      expect(theirs, sql).toMatchObject({ sqlstate: '23505' });
      expect({ sqlstate: ours.body.error?.details?.sqlstate, detail: ours.body.error?.details?.detail }, sql).toEqual(theirs);
    }
  });
});

/** Each statement on both, in order, with the same outcome; the SQLSTATEs of those refused. */
const refusalsAlike = (statements: string[]): Promise<string[]> => alikeFull(pg, file, statements);

describe('the failing row of a NOT NULL or CHECK violation', () => {
  const long = 'a'.repeat(100);
  const statements = [
    // every live column in table order, by its output function; a dropped column is not shown,
    // an added one comes last, generated ones are there
    "CREATE TABLE fr (id int PRIMARY KEY, b boolean, t text, n numeric(8,2), f float8, d date, ts timestamp, tz timestamptz, j jsonb, bt bytea, iv interval, c char(5), gone int, nn int NOT NULL DEFAULT 0, g int GENERATED ALWAYS AS (id * 2) STORED, CHECK (f IS NULL OR f < 100), CONSTRAINT short_t CHECK (length(t) < 90))",
    'ALTER TABLE fr DROP COLUMN gone',
    "ALTER TABLE fr ADD COLUMN late text DEFAULT 'x'",
    'INSERT INTO fr (id, nn) VALUES (1, 1)',
    "INSERT INTO fr (id, b, t, n, f, d, ts, tz, j, bt, iv, c, nn) VALUES (2, true, 'hi, there', 3.5, 0.1, '2024-02-29', '2024-01-02 03:04:05.5', '2024-01-02 03:04:05+00', '{\"a\": [1, \"x\"], \"b\": null}', '\\xdead', '1 day 2 hours', 'ab', NULL)",
    'INSERT INTO fr (id, b, nn) VALUES (3, false, NULL)',
    'INSERT INTO fr (id, f, nn) VALUES (4, 150, 1)',
    'INSERT INTO fr (id, f, nn) VALUES (5, -1e300, NULL)',
    // values clipped to 64 bytes of UTF-8, whole characters, then "..."
    `INSERT INTO fr (id, t, nn) VALUES (6, '${'b'.repeat(64)}', NULL)`,
    `INSERT INTO fr (id, t, nn) VALUES (7, '${'b'.repeat(65)}', NULL)`,
    `INSERT INTO fr (id, t, nn) VALUES (8, '${'é'.repeat(40)}', NULL)`,
    `INSERT INTO fr (id, t, nn) VALUES (9, '${'€'.repeat(30)}', NULL)`,
    `INSERT INTO fr (id, t, nn) VALUES (10, 'x${'😀'.repeat(20)}', NULL)`,
    `INSERT INTO fr (id, t, nn) VALUES (11, '${long}', 1)`,
    // updates and ON CONFLICT DO UPDATE show the new row
    'UPDATE fr SET nn = NULL WHERE id = 1',
    'UPDATE fr SET f = 1000, t = NULL WHERE id = 1',
    'INSERT INTO fr (id, nn) VALUES (1, 5) ON CONFLICT (id) DO UPDATE SET f = 500',
    "UPDATE fr SET late = 'y', nn = NULL WHERE id = 1",
  ];
  it("gives PostgreSQL's DETAIL", async () => {
    const refused = await refusalsAlike(statements);
    // Refused by the checks, every one of them (not by a typo).
    const [nn, check] = ['23502', '23514'];
    expect(refused).toEqual([nn, nn, check, nn, nn, nn, nn, nn, nn, check, nn, check, check, nn]);
  });
});

describe('ALTER TABLE DROP COLUMN: what depends on the column', () => {
  const statements = [
    'CREATE TABLE dp (id int PRIMARY KEY, a int UNIQUE, b int GENERATED ALWAYS AS (a * 2) STORED UNIQUE, c int GENERATED ALWAYS AS (a + id) STORED, e int CHECK (e > 0), f int, CHECK (f > e))',
    'CREATE TABLE dr (x int REFERENCES dp (a), y int REFERENCES dp (b), z int)',
    'CREATE TABLE ds (x int, CONSTRAINT my_fk FOREIGN KEY (x) REFERENCES dp (a))',
    "INSERT INTO dp (id, a, e, f) VALUES (1, 1, 1, 2), (2, 2, 1, 2)",
    'INSERT INTO dr VALUES (1, 2, 0)',
    // refused, naming every dependent (those of its generated columns too), with or without RESTRICT
    'ALTER TABLE dp DROP COLUMN a',
    'ALTER TABLE dp DROP COLUMN a RESTRICT',
    'ALTER TABLE dp DROP a',
    'ALTER TABLE dp DROP COLUMN b',
    // a column only CHECKs and nothing else depend on goes with them
    'ALTER TABLE dp DROP COLUMN e',
    'INSERT INTO dp (id, a, f) VALUES (3, 3, -5) RETURNING id, a, b, c, f',
    // CASCADE: the generated columns and the foreign keys go too
    'ALTER TABLE dp DROP COLUMN IF EXISTS nosuch CASCADE',
    'ALTER TABLE dp DROP COLUMN nosuch CASCADE',
    'ALTER TABLE dp DROP COLUMN a CASCADE, DROP COLUMN f RESTRICT',
    'SELECT * FROM dp ORDER BY id',
    'INSERT INTO dr VALUES (99, 99, 1)',
    'INSERT INTO ds VALUES (99)',
    'SELECT * FROM dr ORDER BY x',
    // a foreign key of the table to itself
    'CREATE TABLE dt (k int PRIMARY KEY, id int UNIQUE, parent int REFERENCES dt (id))',
    'ALTER TABLE dt DROP COLUMN id',
    'ALTER TABLE dt DROP COLUMN parent',
    'ALTER TABLE dt DROP COLUMN id',
    "SELECT table_name, column_name FROM information_schema.columns WHERE table_name IN ('dp', 'dr', 'ds', 'dt') ORDER BY table_name, ordinal_position",
  ];
  it("drops them under CASCADE, else refuses with PostgreSQL's DETAIL and HINT", async () => {
    const refused = await refusalsAlike(statements);
    expect(refused).toEqual(['2BP01', '2BP01', '2BP01', '2BP01', '42703', '2BP01']);
  });
});

describe('TRUNCATE', () => {
  const statements = [
    'CREATE TABLE tp (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v int UNIQUE)',
    'CREATE TABLE tc (x int REFERENCES tp (id), id serial PRIMARY KEY, w text)',
    'CREATE TABLE tg (y int REFERENCES tc (id))',
    'CREATE TABLE tq (id int GENERATED BY DEFAULT AS IDENTITY (START 10 RESTART 20 INCREMENT 5) PRIMARY KEY, s int REFERENCES tq (id))',
    'INSERT INTO tp (v) VALUES (1), (2)',
    "INSERT INTO tc (x, w) VALUES (1, 'a'), (2, 'b')",
    'INSERT INTO tg VALUES (1)',
    'INSERT INTO tq (s) VALUES (NULL), (NULL) RETURNING *',
    // a table other tables reference: with them, or by CASCADE
    'TRUNCATE tp',
    'TRUNCATE tp, tc',
    'TRUNCATE tp RESTRICT',
    'TRUNCATE nosuch',
    'TRUNCATE tp, nosuch CASCADE',
    'SELECT count(*) FROM tp',
    'TRUNCATE tg',
    'SELECT count(*) FROM tg',
    // CONTINUE IDENTITY (the default) goes on from where the sequences were
    'TRUNCATE TABLE ONLY tp, tc, tg CONTINUE IDENTITY',
    'SELECT count(*) FROM tc',
    'INSERT INTO tp (v) VALUES (1) RETURNING *',
    "INSERT INTO tc (x, w) VALUES (3, 'c') RETURNING *",
    // the unique index is empty too
    'INSERT INTO tp (v) VALUES (2), (3) RETURNING *',
    // RESTART IDENTITY CASCADE: every table reached, every sequence at its START
    'TRUNCATE tp RESTART IDENTITY CASCADE',
    'SELECT (SELECT count(*) FROM tp), (SELECT count(*) FROM tc), (SELECT count(*) FROM tg)',
    'INSERT INTO tp (v) VALUES (1) RETURNING *',
    "INSERT INTO tc (x, w) VALUES (1, 'd') RETURNING *",
    // a table referencing itself; a RESTART given at creation was for the first value only
    'TRUNCATE tq RESTART IDENTITY',
    'INSERT INTO tq (s) VALUES (NULL) RETURNING *',
  ];
  it('empties the tables as PostgreSQL does, and refuses what it refuses', async () => {
    const refused = await refusalsAlike(statements);
    expect(refused).toEqual(['0A000', '0A000', '0A000', '42P01', '42P01']);
    // A request that truncates and then fails is undone whole: the rows are all there.
    const counts = 'SELECT (SELECT count(*) FROM tp), (SELECT count(*) FROM tc), (SELECT count(*) FROM tq)';
    const before = await oursFull(file, counts);
    expect(before).toEqual(await theirsFull(pg, counts));
    expect(before).not.toEqual({ rows: '[[0,0,0]]' });
    expect(await oursOf(file, ['TRUNCATE tp, tq RESTART IDENTITY CASCADE', 'SELECT 1 / 0'])).toMatchObject({ sqlstate: '22012' });
    expect(await oursFull(file, counts)).toEqual(before);
    await refusalsAlike(['INSERT INTO tq (s) VALUES (NULL) RETURNING *', "INSERT INTO tc (x, w) VALUES (1, 'e') RETURNING *"]);
    // Truncated and written again in one request: the new rows only.
    const again = ['TRUNCATE tq RESTART IDENTITY', 'INSERT INTO tq (s) VALUES (NULL), (NULL) RETURNING id', 'SELECT id FROM tq ORDER BY id'];
    expect(await oursOf(file, again)).toEqual(await theirsOf(pg, again));
  });
});
