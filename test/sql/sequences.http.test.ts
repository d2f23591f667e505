// Sequences of their own (CREATE / ALTER / DROP SEQUENCE) and the sequence functions (nextval,
// currval, setval, lastval, pg_get_serial_sequence), over serial and identity columns' sequences
// too: each statement runs in tetradb over HTTP and in PostgreSQL (PGlite) with the same answer,
// rows or the same SQLSTATE and message (and DETAIL and HINT where PostgreSQL gives them).
// PostgreSQL keeps currval and lastval per session, tetradb per request: the statements that read
// them run in one request with the nextval they follow.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { serverForFile, type FileServer } from '../helpers/server.js';
import { afterRestart, oursFull, oursOf, theirsFull, theirsOf } from './pg-outcome.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

async function same(sql: string | string[], on: FileServer = file): Promise<void> {
  const statements = typeof sql === 'string' ? [sql] : sql;
  expect(await oursOf(on, statements), statements.join('; ')).toEqual(await theirsOf(pg, statements));
}

/** A statement that fails in both, with the same SQLSTATE, message, DETAIL and HINT. */
async function sameError(sql: string): Promise<void> {
  const theirs = await theirsFull(pg, sql);
  expect('sqlstate' in theirs, `${sql} fails in PostgreSQL`).toBe(true);
  expect(await oursFull(file, sql), sql).toEqual(theirs);
}

describe('sequences', () => {
  it('CREATE SEQUENCE, nextval, setval and ALTER SEQUENCE count as PostgreSQL does', async () => {
    for (const sql of [
      'CREATE SEQUENCE s1',
      "SELECT nextval('s1'), nextval('s1')",
      "SELECT nextval('public.s1'::regclass), nextval('S1')",
      'CREATE SEQUENCE IF NOT EXISTS s1 START 100',
      "SELECT nextval('s1')",
      // pg_dump's form, and setval with and without is_called
      'CREATE SEQUENCE public.s2 AS integer START WITH 10 INCREMENT BY 5 NO MINVALUE NO MAXVALUE CACHE 1',
      "SELECT nextval('s2')",
      "SELECT setval('s2', 100)",
      "SELECT nextval('s2')",
      "SELECT pg_catalog.setval('public.s2', 7, false)",
      "SELECT nextval('s2'), nextval('s2')",
      // descending with CYCLE; a bound without
      'CREATE SEQUENCE s3 AS smallint INCREMENT -1 MINVALUE -2 MAXVALUE 0 CYCLE',
      "SELECT nextval('s3'), nextval('s3'), nextval('s3'), nextval('s3')",
      'CREATE SEQUENCE s4 MAXVALUE 2',
      "SELECT nextval('s4'), nextval('s4')",
      "SELECT nextval('s4')",
      // ALTER SEQUENCE: RESTART, INCREMENT, START (which moves no value), a wider type, a rename
      'ALTER SEQUENCE s1 RESTART WITH 50',
      "SELECT nextval('s1')",
      'ALTER SEQUENCE s1 INCREMENT BY 10 START WITH 1000',
      "SELECT nextval('s1')",
      'ALTER SEQUENCE s1 RESTART',
      "SELECT nextval('s1')",
      "SELECT setval('s2', 3000000000)",
      'ALTER SEQUENCE s2 AS bigint',
      "SELECT setval('s2', 3000000000), nextval('s2')",
      'ALTER SEQUENCE s2 AS integer',
      'ALTER SEQUENCE s2 AS integer RESTART 1',
      "SELECT nextval('s2')",
      'ALTER SEQUENCE s1 RENAME TO s1b',
      "SELECT nextval('s1b')",
      "SELECT nextval('s1')",
      'ALTER SEQUENCE IF EXISTS nope RESTART',
      // currval and lastval within the request that drew
      'CREATE SEQUENCE s5 START 3',
    ]) {
      await same(sql);
    }
    await same(["SELECT nextval('s5')", "SELECT nextval('s1b')", "SELECT currval('s5'), currval('s1b'), lastval()", "SELECT setval('s5', 40)", "SELECT currval('s5'), lastval()"]);
    // DROP SEQUENCE
    for (const sql of ['DROP SEQUENCE s4', "SELECT nextval('s4')", 'DROP SEQUENCE IF EXISTS s4, nope', 'DROP SEQUENCE s3, s5 RESTRICT', "SELECT nextval('s3')"]) await same(sql);
  });

  it('column defaults call nextval, follow renames, and hold DROP SEQUENCE back', async () => {
    for (const sql of [
      'CREATE SEQUENCE d1 START 5',
      "CREATE TABLE dt (id int DEFAULT nextval('d1'::regclass) PRIMARY KEY, v text)",
      "INSERT INTO dt (v) VALUES ('a'), ('b') RETURNING *",
      'ALTER SEQUENCE d1 RENAME TO d2',
      "INSERT INTO dt (v) VALUES ('c') RETURNING *",
      "SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'dt' ORDER BY ordinal_position",
    ]) {
      await same(sql);
    }
    await sameError('DROP SEQUENCE d2');
    for (const sql of ['DROP SEQUENCE d2 CASCADE', "INSERT INTO dt (id, v) VALUES (1, 'd') RETURNING *", "SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'dt' ORDER BY ordinal_position"]) {
      await same(sql);
    }
    // A volatile default added to existing rows is evaluated for each of them.
    for (const sql of [
      'CREATE TABLE av (k int PRIMARY KEY)',
      'INSERT INTO av VALUES (1), (2), (3)',
      'CREATE SEQUENCE av_seq START 10 INCREMENT 10',
      "ALTER TABLE av ADD COLUMN n int DEFAULT nextval('av_seq')",
      'SELECT * FROM av ORDER BY k',
      // OWNED BY: the sequence goes with its column or table
      'CREATE SEQUENCE ow_seq OWNED BY av.n',
      "SELECT pg_get_serial_sequence('av', 'n'), pg_get_serial_sequence('av', 'k')",
      'ALTER TABLE av DROP COLUMN n',
      "SELECT nextval('ow_seq')",
      'CREATE TABLE ow (id int, v int)',
      'CREATE SEQUENCE ow2_seq OWNED BY public.ow.id',
      'DROP TABLE ow',
      "SELECT nextval('ow2_seq')",
      'CREATE TABLE ow3 (id int)',
      'CREATE SEQUENCE ow3_seq OWNED BY ow3.id',
      'ALTER SEQUENCE ow3_seq OWNED BY NONE',
      'DROP TABLE ow3',
      "SELECT nextval('ow3_seq')",
      "SELECT nextval('av_seq')",
    ]) {
      await same(sql);
    }
  });

  it("a serial column's sequence is one of them: by name, setval, RESTART, currval, TRUNCATE", async () => {
    for (const sql of [
      'CREATE TABLE sr (id serial PRIMARY KEY, v text)',
      "INSERT INTO sr (v) VALUES ('a') RETURNING id",
      "SELECT pg_get_serial_sequence('sr', 'id'), pg_get_serial_sequence('public.sr', 'v')",
      "SELECT setval('sr_id_seq', 10)",
      "INSERT INTO sr (v) VALUES ('b') RETURNING id",
      'ALTER SEQUENCE sr_id_seq RESTART WITH 100 INCREMENT 2',
      "INSERT INTO sr (v) VALUES ('c'), ('d') RETURNING id",
      "SELECT nextval('sr_id_seq')",
      'TRUNCATE sr RESTART IDENTITY',
      "INSERT INTO sr (v) VALUES ('e') RETURNING id",
      // an identity column's too
      'CREATE TABLE si (id int GENERATED ALWAYS AS IDENTITY (START 7), v text)',
      "SELECT setval('si_id_seq', 20, false)",
      "INSERT INTO si (v) VALUES ('a') RETURNING id",
      // a new serial whose sequence name is taken gets the next free one
      'CREATE SEQUENCE sn_id_seq',
      'CREATE TABLE sn (id serial, v int)',
      "SELECT pg_get_serial_sequence('sn', 'id')",
      'INSERT INTO sn (v) VALUES (1) RETURNING id',
      "SELECT nextval('sn_id_seq'), nextval('sn_id_seq1')",
    ]) {
      await same(sql);
    }
    await same(["INSERT INTO sr (v) VALUES ('f')", "SELECT currval('sr_id_seq'), lastval()"]);
    // A serial's sequence is what its default calls; an identity's is part of its column.
    await sameError('DROP SEQUENCE sr_id_seq');
    await sameError('DROP SEQUENCE si_id_seq CASCADE');
    for (const sql of [
      'DROP SEQUENCE sr_id_seq CASCADE',
      "SELECT column_name, column_default, is_nullable FROM information_schema.columns WHERE table_name = 'sr' ORDER BY ordinal_position",
      "INSERT INTO sr (id, v) VALUES (500, 'g') RETURNING *",
      "SELECT pg_get_serial_sequence('sr', 'id')",
      "SELECT nextval('sr_id_seq')",
    ]) {
      await same(sql);
    }
    await sameError("INSERT INTO sr (v) VALUES ('h')");
  });

  it('refuses what PostgreSQL refuses, with its messages', async () => {
    for (const sql of ['CREATE TABLE ex (id int)', 'CREATE SEQUENCE ex_fresh START 5', "SELECT setval('ex_fresh', 5, false)", "SELECT setval('ex_fresh', 5, NULL), nextval(NULL)"]) await same(sql);
    for (const sql of [
      'CREATE SEQUENCE e1 INCREMENT 0',
      'CREATE SEQUENCE e1 MINVALUE 5 MAXVALUE 1',
      'CREATE SEQUENCE e1 AS text',
      'CREATE SEQUENCE e1 AS nosuchtype',
      'CREATE SEQUENCE e1 START 0',
      'CREATE SEQUENCE e1 AS smallint MAXVALUE 40000',
      'CREATE SEQUENCE e1 SEQUENCE NAME x',
      'CREATE SEQUENCE e1 INCREMENT 1 INCREMENT 2',
      'CREATE SEQUENCE e1 CACHE 0',
      'CREATE SEQUENCE e1 START 5 RESTART 3 MINVALUE 4',
      'CREATE SEQUENCE e1 OWNED BY nope.id',
      'CREATE SEQUENCE e1 OWNED BY ex',
      'CREATE SEQUENCE e1 OWNED BY ex.nope',
      'CREATE SEQUENCE nosuchschema.e1',
      "SELECT nextval('nope')",
      "SELECT nextval('ex')",
      "SELECT currval('ex_fresh')",
      "SELECT setval('ex_fresh', 0)",
      "SELECT pg_get_serial_sequence('nope', 'id')",
      "SELECT pg_get_serial_sequence('ex', 'nope')",
      'CREATE SEQUENCE ex',
      'CREATE TABLE ex_fresh (x int)',
      'CREATE INDEX ex_fresh ON ex (id)',
      'ALTER SEQUENCE nope RESTART',
      'ALTER SEQUENCE ex RESTART',
      'ALTER SEQUENCE ex_fresh RESTART WITH 0',
      'ALTER SEQUENCE ex_fresh MAXVALUE 3',
      'ALTER SEQUENCE ex_fresh RENAME TO ex',
      'DROP SEQUENCE nope',
      'DROP SEQUENCE ex',
      'DROP SEQUENCE ex_fresh, nope',
      "CREATE TABLE ey (id int DEFAULT nextval('nope'))",
    ]) {
      await sameError(sql);
    }
    // A table's name is a regclass too: the default fails when it is used.
    for (const sql of ["CREATE TABLE ez (id int DEFAULT nextval('ex'), v int)", 'INSERT INTO ez (v) VALUES (1)', 'INSERT INTO ez (id, v) VALUES (1, 1)', 'DROP TABLE ez']) await same(sql);
    // Nothing was created or dropped by the refusals.
    await same("SELECT table_name FROM information_schema.tables WHERE table_name IN ('ey', 'e1') ORDER BY 1");
    await same("SELECT nextval('ex_fresh')");
  });

  it('reads currval and lastval of the request only, and gives back what a failed request drew', async () => {
    const post = async (sql: string | string[]) => oursOf(file, typeof sql === 'string' ? [sql] : sql);
    await post('CREATE SEQUENCE ses');
    expect(await post("SELECT currval('ses')")).toEqual({ sqlstate: '55000', message: 'currval of sequence "ses" is not yet defined in this session' });
    expect(await post('SELECT lastval()')).toEqual({ sqlstate: '55000', message: 'lastval is not yet defined in this session' });
    expect(await post(["SELECT nextval('ses')", "SELECT currval('ses')"])).toEqual({ rows: [[['1']], [['1']]] });
    // A request that fails writes nothing, its nextval included (PostgreSQL's nextval is never undone).
    expect(await post(["SELECT nextval('ses')", 'SELECT 1/0'])).toMatchObject({ sqlstate: '22012' });
    expect(await post(['BEGIN', "SELECT nextval('ses')", 'ROLLBACK', "SELECT nextval('ses')"])).toEqual({ rows: [[], [['2']], [], [['2']]] });
    // A SELECT that draws is a write: later requests see it.
    expect(await post("SELECT nextval('ses')")).toEqual({ rows: [[['3']]] });
  });

  it('keeps sequences, their values, owners and bound defaults across a restart', async () => {
    const setup = [
      'CREATE SEQUENCE rs START 5 INCREMENT 5 MAXVALUE 100',
      "SELECT nextval('rs')",
      "CREATE TABLE rt (id int DEFAULT nextval('rs'), v int)",
      'INSERT INTO rt (v) VALUES (1)',
      'CREATE SEQUENCE rs_owned OWNED BY rt.v',
      "SELECT setval('rs_owned', 9, false)",
      'ALTER SEQUENCE rs RENAME TO rs2',
    ];
    await afterRestart(pg, setup, async (after) => {
      for (const sql of [
        "SELECT nextval('rs2'), nextval('rs_owned')",
        'INSERT INTO rt (v) VALUES (2) RETURNING *',
        "SELECT column_default FROM information_schema.columns WHERE table_name = 'rt' ORDER BY ordinal_position",
        "SELECT pg_get_serial_sequence('rt', 'v')",
        'ALTER SEQUENCE rs2 MAXVALUE 20',
        "SELECT nextval('rs2')",
        "SELECT nextval('rs2')",
      ]) {
        await same(sql, after);
      }
    });
  });
});
