// ALTER TABLE ... ALTER [COLUMN] c [SET DATA] TYPE t [COLLATE name] [USING expr] (engine/sql/exec/ddl.ts
// alterColumnType). Each statement runs in tetradb over HTTP and in PostgreSQL (PGlite) with the
// same outcome: its rows, or its SQLSTATE, message, DETAIL and HINT. What is checked: the
// conversions and their refusals (no assignment cast, bad values, lengths, USING's restrictions),
// defaults, CHECKs, generated and identity columns, the indexes and keys rebuilt under the new type
// (unique ones refusing duplicates), foreign keys on both sides, a refused statement changing
// nothing (in a transaction too), and the new type surviving a restart.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { afterRestart, alikeFull, oursOf } from './pg-outcome.js';
import { serverForFile, type FileServer } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

/** Each statement on both, in order, with the same outcome; the SQLSTATEs of those refused. */
const alike = (statements: string[], on: FileServer = file): Promise<string[]> => alikeFull(pg, on, statements);

const TYPES = (table: string): string =>
  `SELECT column_name, data_type, character_maximum_length, numeric_precision, numeric_scale, column_default FROM information_schema.columns WHERE table_name = '${table}' ORDER BY ordinal_position`;

describe('ALTER COLUMN ... TYPE: conversions', () => {
  it('converts by assignment casts, or by USING; refuses what has no assignment cast, with PostgreSQL\'s hint', async () => {
    const refused = await alike([
      'CREATE TABLE c (id int PRIMARY KEY, n int, s text, v varchar(10), d numeric(5,2), b boolean, f float8)',
      "INSERT INTO c VALUES (1, 1, '10', 'abc', 1.25, true, 2.5), (2, 2, 'x', 'abcdefgh', 2.5, false, -1.5), (3, NULL, NULL, NULL, NULL, NULL, NULL)",
      // no assignment cast: text -> integer, boolean -> integer
      'ALTER TABLE c ALTER COLUMN s TYPE int',
      'ALTER TABLE c ALTER COLUMN b TYPE integer',
      'ALTER TABLE c ALTER COLUMN v TYPE numeric(4,1)',
      // a value the cast refuses, a value too long, a number out of range
      'ALTER TABLE c ALTER COLUMN s TYPE int USING s::int',
      'ALTER TABLE c ALTER COLUMN v TYPE varchar(3)',
      'ALTER TABLE c ALTER COLUMN d TYPE numeric(2,1)',
      'ALTER TABLE c ALTER COLUMN f TYPE int2 USING f * 100000',
      'SELECT * FROM c ORDER BY id',
      TYPES('c'),
      // assignment casts: numeric -> int rounds, int -> text, float -> int rounds half to even
      'ALTER TABLE c ALTER COLUMN d TYPE int',
      'ALTER TABLE c ALTER COLUMN n SET DATA TYPE text',
      'ALTER TABLE c ALTER f TYPE int',
      'ALTER TABLE c ALTER COLUMN v TYPE varchar(8)',
      'ALTER TABLE c ALTER COLUMN v TYPE character(9)',
      'SELECT * FROM c ORDER BY id',
      TYPES('c'),
      // USING: over the row, any expression PostgreSQL allows there
      'ALTER TABLE c ALTER COLUMN s TYPE int USING length(s) + id',
      'ALTER TABLE c ALTER COLUMN b TYPE int USING b::int',
      "ALTER TABLE c ALTER COLUMN n TYPE bigint USING coalesce(n, '0')::bigint * 10",
      'SELECT * FROM c ORDER BY id',
      TYPES('c'),
      // constants: a literal is converted once, before the rows
      "ALTER TABLE c ALTER COLUMN s TYPE text USING 'a'",
      "ALTER TABLE c ALTER COLUMN s TYPE int USING '5'",
      "ALTER TABLE c ALTER COLUMN s TYPE int USING 'x'",
      'ALTER TABLE c ALTER COLUMN s TYPE int USING 5.7',
      'ALTER TABLE c ALTER COLUMN s TYPE int USING true',
      'SELECT id, s FROM c ORDER BY id',
    ]);
    expect(refused).toEqual(['42804', '42804', '42804', '22P02', '22001', '22003', '22P02', '42804']);
  });

  it('refuses what PostgreSQL refuses before reading a row', async () => {
    const refused = await alike([
      'CREATE TABLE r (id serial PRIMARY KEY, n int, s text, g int GENERATED ALWAYS AS (n * 2) STORED)',
      "INSERT INTO r (n, s) VALUES (1, 'a')",
      'ALTER TABLE r ALTER COLUMN nope TYPE int',
      'ALTER TABLE r ALTER COLUMN s TYPE nosuchtype',
      'ALTER TABLE r ALTER COLUMN s TYPE serial',
      'ALTER TABLE r ALTER COLUMN s TYPE int USING nope',
      'ALTER TABLE r ALTER COLUMN s TYPE int USING (SELECT 1)',
      'ALTER TABLE r ALTER COLUMN s TYPE int USING count(*)',
      'ALTER TABLE r ALTER COLUMN s TYPE int USING row_number() OVER ()',
      'ALTER TABLE r ALTER COLUMN s TYPE bigint USING length(s), ALTER COLUMN s TYPE int',
      // generated columns: one read by another cannot change; one itself takes no USING
      'ALTER TABLE r ALTER COLUMN n TYPE bigint',
      'ALTER TABLE r ALTER COLUMN g TYPE text USING g::text',
      // COLLATE
      'ALTER TABLE r ALTER COLUMN s TYPE varchar(5) COLLATE "nope"',
      'ALTER TABLE r ALTER COLUMN n TYPE int COLLATE "C"',
      'ALTER TABLE r ALTER COLUMN id TYPE boolean',
      'SELECT * FROM r',
      TYPES('r'),
    ]);
    expect(refused).toEqual(['42703', '42704', '42704', '42703', '0A000', '42803', '42P20', '42804', '0A000', '42611', '42704', '42804', '42804']);
  });
});

describe('ALTER COLUMN ... TYPE: what depends on the column', () => {
  it('casts a generated column\'s stored values; keeps a serial\'s sequence; moves an identity\'s with it', async () => {
    const refused = await alike([
      'CREATE TABLE g (n numeric, g int GENERATED ALWAYS AS (n * 2.5) STORED)',
      'INSERT INTO g (n) VALUES (1), (2)',
      'ALTER TABLE g ALTER COLUMN g TYPE numeric',
      'SELECT * FROM g ORDER BY n',
      'INSERT INTO g (n) VALUES (3) RETURNING *',
      'CREATE TABLE s (id serial PRIMARY KEY, t text)',
      "INSERT INTO s (t) VALUES ('a') RETURNING *",
      'ALTER TABLE s ALTER COLUMN id TYPE bigint',
      "INSERT INTO s (t) VALUES ('b') RETURNING *",
      'ALTER TABLE s ALTER COLUMN id TYPE text',
      "INSERT INTO s (t) VALUES ('c') RETURNING *",
      'SELECT * FROM s ORDER BY id',
      "SELECT sequence_name, data_type, maximum_value FROM information_schema.sequences WHERE sequence_name = 's_id_seq'",
      TYPES('s'),
      'CREATE TABLE i (id int GENERATED ALWAYS AS IDENTITY, t text)',
      "INSERT INTO i (t) VALUES ('a') RETURNING *",
      'ALTER TABLE i ALTER COLUMN id TYPE text',
      'ALTER TABLE i ALTER COLUMN id TYPE bigint',
      "INSERT INTO i (t) VALUES ('b') RETURNING *",
      'CREATE TABLE i2 (id int GENERATED BY DEFAULT AS IDENTITY (MAXVALUE 100000), t text)',
      'ALTER TABLE i2 ALTER COLUMN id TYPE smallint',
      'ALTER TABLE i2 ALTER COLUMN id TYPE bigint',
      "INSERT INTO i2 (t) VALUES ('a') RETURNING *",
      TYPES('i2'),
    ]);
    expect(refused).toEqual(['22023', '22023']);
  });

  it('checks a DEFAULT can follow, compiles the CHECKs again and checks the rows against them', async () => {
    const refused = await alike([
      "CREATE TABLE d (a text DEFAULT 'x', b int DEFAULT 5, c timestamptz DEFAULT now(), e numeric(5,2) DEFAULT 1.5)",
      'ALTER TABLE d ALTER COLUMN a TYPE int USING 1',
      'ALTER TABLE d ALTER COLUMN c TYPE int USING 1',
      'ALTER TABLE d ALTER COLUMN b TYPE text',
      'ALTER TABLE d ALTER COLUMN c TYPE date',
      'ALTER TABLE d ALTER COLUMN e TYPE int',
      'INSERT INTO d DEFAULT VALUES RETURNING a, b, c = current_date, e',
      TYPES('d'),
      "CREATE TABLE k (a int CHECK (a > 0), b text CHECK (b <> ''), c text CHECK (length(c) > 0))",
      "INSERT INTO k VALUES (1, 'x', 'y'), (2, 'yy', 'zz')",
      'ALTER TABLE k ALTER COLUMN b TYPE int USING length(b)',
      'ALTER TABLE k ALTER COLUMN c TYPE int USING 1',
      'ALTER TABLE k ALTER COLUMN a TYPE int USING a - 1',
      'ALTER TABLE k ALTER COLUMN a TYPE numeric USING a + 0.5',
      'ALTER TABLE k ALTER COLUMN a TYPE text',
      'ALTER TABLE k ALTER COLUMN c TYPE varchar(3)',
      "INSERT INTO k VALUES (1, 'x', '')",
      'SELECT * FROM k ORDER BY a',
    ]);
    expect(refused).toEqual(['42804', '42804', '42883', '42883', '23514', '42883', '23514']);
  });

  it('rebuilds the indexes and keys over the column, refusing duplicates the conversion makes', async () => {
    const refused = await alike([
      'CREATE TABLE u (a int UNIQUE, x numeric, y numeric)',
      'CREATE INDEX u_y ON u (y)',
      'INSERT INTO u VALUES (1, 1.2, 5.5), (2, 1.4, 6.5), (3, 2.6, NULL)',
      'ALTER TABLE u ALTER COLUMN x TYPE int',
      'CREATE UNIQUE INDEX ux ON u (x)',
      'ALTER TABLE u ALTER COLUMN a TYPE text USING \'same\'',
      'ALTER TABLE u ALTER COLUMN a TYPE text USING a::text || \'!\'',
      'ALTER TABLE u ALTER COLUMN y TYPE int',
      'SELECT * FROM u WHERE a = \'2!\'',
      'SELECT a, y FROM u WHERE y = 6',
      'SELECT a, y FROM u WHERE y > 5 ORDER BY y',
      "INSERT INTO u VALUES ('2!', 0, 0)",
      'CREATE TABLE pk (id numeric PRIMARY KEY, v int)',
      'CREATE INDEX pk_v ON pk (v)',
      'INSERT INTO pk VALUES (1.1, 1), (1.4, 2), (2.5, 3)',
      'ALTER TABLE pk ALTER COLUMN id TYPE int',
      'ALTER TABLE pk ALTER COLUMN id TYPE text',
      "SELECT * FROM pk WHERE id = '1.4'",
      'SELECT * FROM pk WHERE v = 3',
      'SELECT * FROM pk ORDER BY id',
      "INSERT INTO pk VALUES ('1.4', 9)",
      "ALTER TABLE pk ALTER COLUMN id TYPE numeric(3,1) USING id::numeric * 2",
      'SELECT * FROM pk ORDER BY id',
      'SELECT * FROM pk WHERE id = 5',
    ]);
    expect(refused).toEqual(['23505', '23505', '23505', '23505', '23505']);
  });

  it('keeps foreign keys on both sides comparable, and checks the rows against a changed key', async () => {
    const refused = await alike([
      'CREATE TABLE p (id int PRIMARY KEY)',
      // as CREATE TABLE checks them: the key's operator family, or an implicit conversion
      'CREATE TABLE ch (pid text REFERENCES p)',
      'CREATE TABLE ch (pid numeric REFERENCES p)',
      'CREATE TABLE ch2 (pid smallint REFERENCES p)',
      'CREATE TABLE pn (id numeric PRIMARY KEY)',
      'CREATE TABLE ch3 (pid int REFERENCES pn, qid float8 REFERENCES pn)',
      'CREATE TABLE ch (pid int REFERENCES p)',
      'INSERT INTO p VALUES (1), (2)',
      'INSERT INTO ch VALUES (1), (2)',
      'ALTER TABLE ch ALTER COLUMN pid TYPE text',
      'ALTER TABLE p ALTER COLUMN id TYPE text',
      'ALTER TABLE ch ALTER COLUMN pid TYPE bigint',
      'ALTER TABLE p ALTER COLUMN id TYPE bigint',
      'ALTER TABLE p ALTER COLUMN id TYPE bigint USING id * 10',
      'ALTER TABLE ch ALTER COLUMN pid TYPE numeric USING pid + 0.5',
      'ALTER TABLE ch ALTER COLUMN pid TYPE numeric',
      'INSERT INTO ch VALUES (2.0)',
      'INSERT INTO ch VALUES (2.5)',
      'SELECT * FROM ch ORDER BY pid',
    ]);
    expect(refused).toEqual(['42804', '42804', '42804', '42804', '42804', '23503', '42804', '42804', '23503']);
  });
});

describe('ALTER COLUMN ... TYPE: all or nothing, and durable', () => {
  it('a refused statement changes nothing; in a transaction, a later failure takes the change back', async () => {
    await alike([
      'CREATE TABLE t1 (id int PRIMARY KEY, v text)',
      'CREATE INDEX t1_v ON t1 (v)',
      "INSERT INTO t1 VALUES (1, '1'), (2, 'two')",
      'ALTER TABLE t1 ALTER COLUMN v TYPE int USING v::int, ADD COLUMN w int',
      'SELECT * FROM t1 ORDER BY id',
      "SELECT * FROM t1 WHERE v = 'two'",
      TYPES('t1'),
    ]);
    // One request, one transaction: the ALTER succeeds, the statement after it fails.
    const res = await oursOf(file, ["UPDATE t1 SET v = '2' WHERE id = 2", 'ALTER TABLE t1 ALTER COLUMN v TYPE int USING v::int', 'SELECT 1 / 0']);
    expect(res).toMatchObject({ sqlstate: '22012' });
    await alike(['SELECT * FROM t1 ORDER BY id', "SELECT * FROM t1 WHERE v = 'two'", TYPES('t1')]);
  });

  it('the new type, the rewritten rows and indexes survive a restart', async () => {
    await afterRestart(
      pg,
      [
        'CREATE TABLE dur (id numeric PRIMARY KEY, v text UNIQUE, n int)',
        'CREATE INDEX dur_n ON dur (n)',
        "INSERT INTO dur VALUES (1.2, '10', 1), (2.6, '20', 2)",
        'ALTER TABLE dur ALTER COLUMN id TYPE int, ALTER COLUMN v TYPE int USING v::int, ALTER COLUMN n TYPE varchar(3)',
      ],
      async (after) => {
        await alike(
          [
            'SELECT * FROM dur ORDER BY id',
            'SELECT * FROM dur WHERE id = 3',
            'SELECT * FROM dur WHERE v = 10',
            "SELECT * FROM dur WHERE n = '2'",
            "INSERT INTO dur VALUES (1, 30, '3')",
            "INSERT INTO dur VALUES (4, 10, '3')",
            "INSERT INTO dur VALUES (4, 40, 'long')",
            TYPES('dur'),
          ],
          after,
        );
      },
    );
  });
});

describe('ALTER COLUMN ... TYPE: every pair of types', () => {
  // Each type's column holds a few values (NULL among them); it is changed to every other type,
  // without USING and with `USING c::type`, each change from a fresh copy. Same outcome required:
  // the refusal (SQLSTATE, message, HINT), or the rows and the column's type after.
  const TYPES_AND_VALUES: Array<[string, string[]]> = [
    ['smallint', ['1', '-7', '300']],
    ['integer', ['0', '42', '-70000']],
    ['bigint', ['5', '9000000000']],
    ['numeric(6,2)', ['1.25', '2.5', '-3.75']],
    ['double precision', ['1.5', '-2.5', '1e10']],
    // (no text that is not JSON: PostgreSQL's DETAIL of a JSON syntax error is not given, docs/sql.md)
    ['text', ["'12'", "'[1]'", "'true'"]],
    ['varchar(4)', ["'1'", "'2.5'"]],
    ['boolean', ['true', 'false']],
    ['date', ["'2024-02-29'"]],
    ['timestamptz', ["'2024-02-29 10:00:00+00'"]],
    ['jsonb', [`'{"a": 1}'`, "'[1, 2]'", "'3'"]],
  ];
  it('converts or refuses as PostgreSQL', async () => {
    let n = 0;
    for (const [from, values] of TYPES_AND_VALUES) {
      for (const [to] of TYPES_AND_VALUES) {
        if (to === from) continue;
        for (const using of [false, true]) {
          const t = `pair${n++}`;
          const setup = [`CREATE TABLE ${t} (id int PRIMARY KEY, c ${from})`, `INSERT INTO ${t} VALUES ${[...values, 'NULL'].map((v, i) => `(${i}, ${v})`).join(', ')}`];
          await alike([
            ...setup,
            `ALTER TABLE ${t} ALTER COLUMN c TYPE ${to}${using ? ` USING c::${to}` : ''}`,
            `SELECT id, c::text FROM ${t} ORDER BY id`,
            `SELECT data_type, character_maximum_length, numeric_precision, numeric_scale FROM information_schema.columns WHERE table_name = '${t}' AND column_name = 'c'`,
            `DROP TABLE ${t}`,
          ]);
        }
      }
    }
  }, 120_000);
});
