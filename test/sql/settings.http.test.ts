// Run-time settings (SET, SHOW, RESET, set_config, current_setting): each list runs in tetradb
// over HTTP as one request (a request is tetradb's session) and in PostgreSQL (PGlite) one
// statement after the other in its session, with the same rows or the same SQLSTATE and message.
// statement_timeout bounds the request's later statements.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';
import { expectSameFailure, oursFull, oursOf, theirsOf } from './pg-outcome.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

/** The statements as one request here, one after the other there, from default settings. */
async function same(statements: string[]): Promise<void> {
  await pg.exec('RESET ALL');
  expect(await oursOf(file, statements), statements.join('; ')).toEqual(await theirsOf(pg, statements));
}

const sameError = (sql: string): Promise<void> => expectSameFailure(pg, file, sql);

describe('settings', () => {
  it('SET, SHOW and RESET as PostgreSQL: values, units, displays', async () => {
    await same([
      'SET statement_timeout = 5000',
      'SHOW statement_timeout',
      "SET statement_timeout TO '90s'",
      'SHOW statement_timeout',
      "SET SESSION statement_timeout = '1.5s'",
      'SHOW statement_timeout',
      "SET lock_timeout = '1min'",
      'SHOW lock_timeout',
      "SELECT current_setting('statement_timeout'), current_setting('nope', true), current_setting('lock_timeout', false)",
      'RESET statement_timeout',
      'SHOW statement_timeout',
      'RESET ALL',
      'SHOW lock_timeout',
    ]);
    await same([
      "SET client_encoding = 'UTF8'",
      'SET standard_conforming_strings = on',
      'SET check_function_bodies = false',
      'SET xmloption = content',
      'SET client_min_messages = warning',
      'SET row_security = off',
      "SET default_tablespace = ''",
      'SET default_table_access_method = heap',
      "SET application_name = 'my app'",
      'SET extra_float_digits = 3',
      'SET TIME ZONE UTC',
      'SET synchronous_commit TO off',
      'SELECT current_setting(x) FROM (VALUES (\'client_encoding\'), (\'standard_conforming_strings\'), (\'check_function_bodies\'), (\'client_min_messages\'), (\'row_security\'), (\'default_tablespace\'), (\'application_name\'), (\'extra_float_digits\'), (\'synchronous_commit\')) v(x)',
      'SHOW TIME ZONE',
      'SHOW datestyle',
      'SHOW IntervalStyle',
      'SHOW bytea_output',
    ]);
    // search_path: set and shown (its default is PostgreSQL's, `"$user", public`; PGlite's is `public`)
    await same(["SELECT pg_catalog.set_config('search_path', '', false)", 'SHOW search_path', 'SET search_path = public, pg_catalog', 'SHOW search_path', 'SET search_path TO "$user", public', 'SHOW search_path']);
    // custom (dotted) settings, an application's
    await same(["SET myapp.user_id = '42'", 'SHOW myapp.user_id', "SELECT current_setting('myapp.user_id')", "SELECT set_config('myapp.user_id', '7', false)", 'RESET myapp.user_id', "SELECT current_setting('myapp.user_id')"]);
  });

  it('refuses what PostgreSQL refuses, with its messages', async () => {
    for (const sql of [
      "SET statement_timeout = 'abc'",
      "SET statement_timeout = '5 parsecs'",
      'SET statement_timeout = -1',
      'SET statement_timeout = 5000, 6000',
      'SET standard_conforming_strings = maybe',
      'SET client_min_messages = loud',
      'SET nope = 1',
      'SHOW nope',
      "SELECT current_setting('nope')",
      'SHOW myapp.never_set',
    ]) {
      await sameError(sql);
    }
  });

  it('refuses the values tetradb cannot honour, and SET ROLE / SET TRANSACTION', async () => {
    for (const sql of [
      'SET standard_conforming_strings = off',
      "SET client_encoding = 'LATIN1'",
      'SET search_path = myschema, public',
      "SET TIME ZONE 'Europe/Paris'",
      'SET bytea_output = escape',
      'SET extra_float_digits = 0',
      'SET ROLE admin',
      'SET TRANSACTION ISOLATION LEVEL READ COMMITTED',
      'SHOW ALL',
    ]) {
      const ours = await oursFull(file, sql);
      expect(ours, sql).toMatchObject({ sqlstate: '0A000' });
      expect((ours as { message: string }).message, sql).toMatch(/^unsupported: /);
    }
  });

  it('statement_timeout bounds the statements after it, within the request only', async () => {
    const slow = 'SELECT count(*) FROM generate_series(1, 200000000)';
    const outcome = await oursOf(file, ['SET statement_timeout = 50', slow]);
    expect(outcome).toMatchObject({ sqlstate: '57014' });
    // The next request starts from the defaults again.
    expect(await oursOf(file, ['SHOW statement_timeout'])).toEqual({ rows: [[['0']]] });
    expect(await oursOf(file, ["SET statement_timeout = '1h'", 'SELECT 1'])).toEqual({ rows: [[], [['1']]] });
    // SET LOCAL lasts for the request too (PostgreSQL: until the transaction ends; a request is one).
    expect(await oursOf(file, ['SET LOCAL statement_timeout = 50', slow])).toMatchObject({ sqlstate: '57014' });
  });
});
