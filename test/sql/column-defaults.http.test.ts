// information_schema.columns.column_default shows a column's default as PostgreSQL prints it
// (engine/sql/exec/default-text.ts): what schema tools and ORMs read back (Prisma's and
// Drizzle's introspection among them). Each table is made in tetradb over HTTP and in PostgreSQL
// (PGlite), and the defaults must read the same, after CREATE TABLE, ALTER COLUMN SET DEFAULT,
// ADD COLUMN and a restart. The defaults must still fill the rows they did.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';
import { afterRestart, oursFull, theirsFull } from './pg-outcome.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

// Constants as ruleutils prints them: bare when they read back as the same type, else quoted and
// typed; a literal given to the column typed as the column; calls, value functions, operators.
const COLUMNS = [
  'a int DEFAULT 0',
  'b int DEFAULT -1',
  'c bigint DEFAULT 5',
  'd bigint DEFAULT -5',
  'e numeric DEFAULT 1.5',
  'f numeric DEFAULT -2.5',
  'g float8 DEFAULT 0.5',
  "h text DEFAULT 'x'",
  "i varchar(10) DEFAULT 'it''s'",
  "j char(3) DEFAULT 'ab'",
  'k boolean DEFAULT true',
  "l date DEFAULT '2020-1-1'",
  'm timestamptz DEFAULT now()',
  'n timestamp DEFAULT CURRENT_TIMESTAMP',
  'o date DEFAULT CURRENT_DATE',
  `p jsonb DEFAULT '{"b":1,"a":[1,2]}'`,
  'r int DEFAULT 1+2',
  "s text DEFAULT 'a' || 'b'",
  "u int DEFAULT '7'",
  'v text DEFAULT NULL',
  'w int2 DEFAULT 3',
  'y numeric(10,2) DEFAULT 0',
  "z bytea DEFAULT '\\x00'",
  "ab text DEFAULT lower('ABC')",
  'ac int DEFAULT (2 * 3)',
  "ae timestamptz DEFAULT now() + interval '1 day'",
  'af float8 DEFAULT 1e20',
  'ag int8 DEFAULT 3000000000',
  "ah text DEFAULT ''::text",
  "ai varchar DEFAULT 'v'::character varying",
  "an int8 DEFAULT '12'",
  "ao float8 DEFAULT '0.25'",
  "ap timestamptz DEFAULT '2020-01-01 10:00:00+02'",
  "aq boolean DEFAULT 'yes'",
  'ar int DEFAULT -(3)',
  'au int DEFAULT 5::bigint',
  'b2 int DEFAULT 5::int',
  'b3 numeric DEFAULT 2.50',
  'b4 text DEFAULT (1 + 2)::text',
  'b5 date DEFAULT now()::date',
  "av interval DEFAULT '90 minutes'",
  'ax int DEFAULT abs(-4)',
  'b7 int8 DEFAULT -7::bigint',
];

const DEFAULTS = (table: string): string => `SELECT column_name, column_default FROM information_schema.columns WHERE table_name = '${table}' ORDER BY ordinal_position`;

async function alike(statements: string[]): Promise<void> {
  for (const sql of statements) expect(await oursFull(file, sql), sql).toEqual(await theirsFull(pg, sql));
}

describe('column_default', () => {
  it('reads as PostgreSQL prints each default, and the defaults fill the row', async () => {
    await alike([`CREATE TABLE cd (id int, ${COLUMNS.join(', ')})`, DEFAULTS('cd')]);
    // The row the defaults make, as text (the clock's columns left out).
    const fixed = COLUMNS.map((c) => c.split(' ')[0]!).filter((c) => !['m', 'n', 'o', 'ae', 'b5'].includes(c));
    await alike(['INSERT INTO cd (id) VALUES (1)', `SELECT ${fixed.map((c) => `${c}::text`).join(', ')} FROM cd`]);
  });

  it('follows ALTER COLUMN SET / DROP DEFAULT and ADD COLUMN, and a restart', async () => {
    await alike([
      'CREATE TABLE ce (id int, t text, n numeric)',
      "ALTER TABLE ce ALTER COLUMN t SET DEFAULT 'x' || 'y', ALTER n SET DEFAULT -1.25",
      "ALTER TABLE ce ADD COLUMN d date DEFAULT '2021-02-03', ADD COLUMN q int DEFAULT 2 * 21",
      DEFAULTS('ce'),
      'ALTER TABLE ce ALTER COLUMN t DROP DEFAULT, ALTER n SET DEFAULT NULL',
      DEFAULTS('ce'),
    ]);
    const setup = [`CREATE TABLE cr (id int, ${COLUMNS.slice(0, 12).join(', ')})`];
    await afterRestart(pg, setup, async (after) => {
      expect(await oursFull(after, DEFAULTS('cr'))).toEqual(await theirsFull(pg, DEFAULTS('cr')));
    });
  });
});

// The SQL value functions without parentheses (sql-grammar-gaps.ts rewriteValueFunctions): the
// parser read `current_user` as nothing and `localtimestamp` as a column. The role and database
// are tetradb's own names (docs/sql.md), so those are compared by how they relate.
describe('SQL value functions', () => {
  it('answer as PostgreSQL, and serve as defaults', async () => {
    await alike([
      'SELECT current_schema, current_schema(), current_user = session_user, current_role = current_user, current_catalog = current_database(), localtimestamp IS NOT NULL, pg_typeof(localtimestamp)',
      "SELECT current_user IS NOT NULL AND length(current_user) > 0, current_database() <> ''",
      'CREATE TABLE vf (id int, a text DEFAULT current_user, b timestamp DEFAULT LOCALTIMESTAMP, c text DEFAULT current_schema, d text DEFAULT current_catalog)',
      DEFAULTS('vf'),
      'INSERT INTO vf (id) VALUES (1)',
      'SELECT a = current_user, b IS NOT NULL, c, d = current_database() FROM vf',
    ]);
  });
});

