// Enum types (CREATE TYPE ... AS ENUM, engine/sql/enum-types.ts, exec/type-ddl.ts): the
// statements, columns of enum types with their constraints and indexes, input checks, order
// (declared, also after ADD VALUE BEFORE / AFTER), casts and comparisons, the enum functions,
// arrays of enums and the catalogs. Each statement runs in tetradb over HTTP and in PostgreSQL
// (PGlite) with the same outcome (rows, or SQLSTATE, message, DETAIL and HINT); then a restart, a
// failed request, tenant isolation, parameters and a Prisma-shaped migration.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { afterRestart, alikeFull } from './pg-outcome.js';
import { http, serverForFile, signup, type FileServer } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

const alike = (statements: string[], on: FileServer = file): Promise<string[]> => alikeFull(pg, on, statements);

async function sql(on: FileServer, text: string, params?: unknown[]): Promise<{ status: number; body: any }> {
  const res = await http(on.server.url, 'POST', '/api/sql/query', { json: { sql: text, ...(params === undefined ? {} : { params }) }, apiKey: on.apiKey });
  return { status: res.status, body: res.body };
}

describe('enum types', () => {
  it('are created, dropped and altered as PostgreSQL does, with its errors', async () => {
    const refused = await alike([
      "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
      "CREATE TYPE mood AS ENUM ('x')",
      `CREATE TYPE long AS ENUM ('${'x'.repeat(64)}')`,
      `CREATE TYPE long63 AS ENUM ('${'x'.repeat(63)}')`,
      'CREATE TYPE empty AS ENUM ()',
      "CREATE TYPE \"Role\" AS ENUM ('USER', 'ADMIN')",
      "CREATE TYPE public.qualified AS ENUM ('a')",
      "CREATE TYPE other.x AS ENUM ('a')",
      "SELECT enum_range(NULL::mood)::text, enum_range(NULL::empty)::text, enum_range(NULL::\"Role\")::text, enum_range(NULL::public.qualified)::text",
      'DROP TYPE nope',
      'DROP TYPE IF EXISTS nope, long63',
      "SELECT 'x'::long63",
      // ADD VALUE, at the end or between two labels.
      "ALTER TYPE mood ADD VALUE 'ecstatic'",
      "ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok'",
      "ALTER TYPE mood ADD VALUE 'fine' AFTER 'ok'",
      "ALTER TYPE mood ADD VALUE 'down' BEFORE 'sad'",
      "ALTER TYPE mood ADD VALUE 'meh2' BEFORE 'ok'",
      "ALTER TYPE mood ADD VALUE 'meh3' BEFORE 'ok'",
      "ALTER TYPE mood ADD VALUE 'happy'",
      "ALTER TYPE mood ADD VALUE IF NOT EXISTS 'happy'",
      "ALTER TYPE mood ADD VALUE 'x' BEFORE 'nope'",
      "ALTER TYPE mood ADD VALUE 'x' AFTER 'nope'",
      `ALTER TYPE mood ADD VALUE '${'y'.repeat(64)}'`,
      "ALTER TYPE nope ADD VALUE 'x'",
      'SELECT enum_range(NULL::mood)::text',
      'SELECT enumlabel, enumsortorder FROM pg_enum ORDER BY enumtypid, enumsortorder',
      // RENAME VALUE and RENAME TO.
      "ALTER TYPE mood RENAME VALUE 'meh' TO 'blah'",
      "ALTER TYPE mood RENAME VALUE 'blah' TO 'happy'",
      "ALTER TYPE mood RENAME VALUE 'nope' TO 'x'",
      'ALTER TYPE empty RENAME TO vacant',
      'ALTER TYPE vacant RENAME TO "Role"',
      'ALTER TYPE nope RENAME TO x',
      "SELECT enum_range(NULL::mood)::text, enum_range(NULL::vacant)::text",
      'SELECT NULL::empty',
    ]);
    // A repeated label: PostgreSQL's unique index on pg_enum refuses it, naming the type's oid.
    const dup = "CREATE TYPE dup AS ENUM ('a', 'b', 'a')";
    const theirs = await pg.query(dup).then(() => undefined, (e: { code: string; message: string; detail: string }) => e);
    const ours = (await sql(file, dup)).body.error;
    expect([ours.details.sqlstate, ours.message, ours.details.detail.replace(/\(\d+, /, '(oid, ')]).toEqual([theirs!.code, theirs!.message, theirs!.detail.replace(/\(\d+, /, '(oid, ')]);
    expect(refused).toEqual(['42710', '42602', '3F000', '42704', '42704', '42710', '22023', '22023', '42602', '42704', '42710', '22023', '42710', '42704', '42704']);
  });

  it('type columns, checked on every write, ordered as declared, with constraints and indexes', async () => {
    const refused = await alike([
      "CREATE TYPE feeling AS ENUM ('sad', 'ok', 'happy')",
      "CREATE TABLE person (id int PRIMARY KEY, f feeling NOT NULL DEFAULT 'ok', g feeling UNIQUE, h feeling CHECK (h <> 'sad'), note text)",
      'CREATE INDEX person_f ON person (f)',
      "INSERT INTO person (id, f, g, h) VALUES (1, 'happy', 'sad', 'ok'), (2, 'sad', NULL, NULL), (3, DEFAULT, 'happy', 'happy'), (4, 'ok', 'ok', NULL)",
      'SELECT * FROM person ORDER BY id',
      "INSERT INTO person (id, f) VALUES (5, 'nope')",
      "INSERT INTO person (id, f) VALUES (5, NULL)",
      "INSERT INTO person (id, g) VALUES (5, 'sad')",
      "INSERT INTO person (id, h) VALUES (5, 'sad')",
      "INSERT INTO person (id, f) VALUES (5, 'ok'::text)",
      "UPDATE person SET f = 'nope' WHERE id = 1",
      "UPDATE person SET f = 'sad' WHERE id = 1 RETURNING id, f",
      'SELECT id, f FROM person ORDER BY f, id',
      'SELECT id, f FROM person ORDER BY f DESC, id',
      "SELECT id FROM person WHERE f = 'sad' ORDER BY id",
      "SELECT id FROM person WHERE f > 'sad' ORDER BY id",
      "SELECT id FROM person WHERE f BETWEEN 'ok' AND 'happy' ORDER BY id",
      "SELECT id FROM person WHERE f IN ('ok', 'happy') ORDER BY id",
      "SELECT id FROM person WHERE f = 'nope'",
      "SELECT id FROM person WHERE f = 'ok'::text",
      "SELECT id FROM person WHERE f::text = 'ok'",
      'SELECT id FROM person WHERE f = g ORDER BY id',
      'SELECT min(f), max(f), count(DISTINCT f), min(g), max(h) FROM person',
      'SELECT f, count(*) FROM person GROUP BY f ORDER BY f',
      'SELECT DISTINCT f FROM person ORDER BY f',
      "SELECT f::text, f || '!', 'happy'::feeling, CAST('sad' AS feeling), pg_typeof(f), f::varchar FROM person ORDER BY id",
      "SELECT 1::feeling",
      "SELECT 'x'::feeling",
      'SELECT note::feeling FROM person',
      "SELECT enum_first(f), enum_last(f), enum_range(f, NULL)::text, enum_range(NULL, f)::text, enum_range('happy'::feeling, 'sad')::text FROM person ORDER BY id",
      "SELECT enum_first('a')",
      'SELECT lower(f) FROM person',
      "SELECT COALESCE(g, 'ok'), CASE WHEN id > 2 THEN f ELSE 'sad' END, GREATEST(f, g), LEAST(f, 'ok') FROM person ORDER BY id",
      "SELECT 'happy'::feeling > 'sad', 'ok'::feeling = 'ok'::feeling",
      // A new label in the middle: the index keeps the declared order.
      "ALTER TYPE feeling ADD VALUE 'meh' BEFORE 'ok'",
      "ALTER TYPE feeling ADD VALUE 'great' AFTER 'happy'",
      "INSERT INTO person (id, f, g) VALUES (6, 'meh', 'meh'), (7, 'great', 'great')",
      'SELECT id, f FROM person ORDER BY f, id',
      "SELECT id FROM person WHERE f < 'ok' ORDER BY f, id",
      "SELECT id FROM person WHERE f >= 'meh' AND f <= 'happy' ORDER BY f DESC, id",
      "ALTER TYPE feeling RENAME VALUE 'meh' TO 'so-so'",
      'SELECT id, f, g FROM person ORDER BY id',
      "SELECT id FROM person WHERE f = 'so-so'",
      // ADD COLUMN of an enum type, and the catalogs.
      "ALTER TABLE person ADD COLUMN k feeling DEFAULT 'happy'",
      'SELECT id, k FROM person ORDER BY id',
      "SELECT column_name, data_type, udt_name, column_default, is_nullable FROM information_schema.columns WHERE table_name = 'person' ORDER BY ordinal_position",
      // The type's name is taken by it.
      'CREATE TABLE feeling (x int)',
      'CREATE VIEW feeling AS SELECT 1',
      "CREATE TYPE person AS ENUM ('a')",
      'DROP TYPE person',
      // Dropping it: refused while columns use it, CASCADE drops them.
      'DROP TYPE feeling',
      'DROP TYPE feeling RESTRICT',
      'CREATE VIEW person_view AS SELECT id, f FROM person',
      'DROP TYPE feeling',
      'DROP TYPE feeling CASCADE',
      'SELECT * FROM person ORDER BY id',
      "SELECT count(*) FROM information_schema.columns WHERE table_name = 'person'",
      "SELECT count(*) FROM information_schema.views WHERE table_name = 'person_view'",
      "SELECT 'ok'::feeling",
    ]);
    expect(refused).toEqual(['22P02', '23502', '23505', '23514', '42804', '22P02', '22P02', '42883', '42846', '22P02', '42883', '42883', '42710', '42710', '42710', '2BP01', '2BP01', '2BP01', '2BP01', '42704']);
  });

  it('make arrays: columns, literals, casts, subscripts, ANY and the array operators', async () => {
    const refused = await alike([
      "CREATE TYPE hue AS ENUM ('red', 'green', 'blue')",
      'CREATE TABLE paint (id int PRIMARY KEY, hs hue[], h hue)',
      "INSERT INTO paint VALUES (1, '{blue,red}', 'green'), (2, ARRAY['green']::hue[], 'red'), (3, '{}', NULL), (4, NULL, 'blue')",
      "INSERT INTO paint VALUES (5, '{pink}', NULL)",
      'SELECT id, hs::text AS t, hs[1], h FROM paint ORDER BY hs, id',
      "SELECT id FROM paint WHERE 'red' = ANY(hs) ORDER BY id",
      'SELECT id FROM paint WHERE h = ANY(hs) ORDER BY id',
      "SELECT id FROM paint WHERE hs @> ARRAY['blue']::hue[] ORDER BY id",
      "SELECT array_agg(h ORDER BY h)::text, ARRAY['red', 'blue']::hue[]::text, ('{green}'::hue[] || 'red'::hue)::text FROM paint",
      "SELECT column_name, data_type, udt_name FROM information_schema.columns WHERE table_name = 'paint' ORDER BY ordinal_position",
      'DROP TYPE hue',
      'DROP TYPE hue CASCADE',
      'SELECT * FROM paint ORDER BY id',
    ]);
    expect(refused).toEqual(['22P02', '2BP01']);
  });

  it('read a JSON string parameter as a label', async () => {
    await alike(["CREATE TYPE size AS ENUM ('s', 'm', 'l')", 'CREATE TABLE shirt (id int PRIMARY KEY, sz size NOT NULL)']);
    expect((await sql(file, 'INSERT INTO shirt VALUES ($1, $2), ($3, $4) RETURNING sz', [1, 'm', 2, 'l'])).body.rows).toEqual([{ sz: 'm' }, { sz: 'l' }]);
    const bad = await sql(file, 'INSERT INTO shirt VALUES ($1, $2)', [3, 'xl']);
    expect([bad.status, bad.body.error.details.sqlstate, bad.body.error.message]).toEqual([400, '22P02', 'invalid input value for enum size: "xl"']);
    const found = await sql(file, 'SELECT id, sz FROM shirt WHERE sz >= $1 ORDER BY sz DESC', ['m']);
    expect(found.body.rows).toEqual([{ id: 2, sz: 'l' }, { id: 1, sz: 'm' }]);
    expect(found.body.columns).toEqual([{ name: 'id', type: 'int4' }, { name: 'sz', type: 'size' }]);
    expect((await sql(file, 'SELECT $1::size AS s', ['s'])).body.rows).toEqual([{ s: 's' }]);
  });

  it('refuse to rename a type a stored expression names (kept by name here, by oid in PostgreSQL)', async () => {
    await alike(["CREATE TYPE shade AS ENUM ('light', 'dark')", 'CREATE TABLE wall (id int, c text)', "CREATE VIEW wall_v AS SELECT id, c::shade AS s FROM wall"]);
    const renamed = await sql(file, 'ALTER TYPE shade RENAME TO tone');
    expect([renamed.body.error.details.sqlstate, renamed.body.error.message]).toEqual(['0A000', 'unsupported: renaming type shade, which view wall_v names in a stored expression']);
    expect((await sql(file, 'DROP VIEW wall_v; ALTER TYPE shade RENAME TO tone; SELECT enum_last(NULL::tone) AS l')).body.rows).toEqual([{ l: 'dark' }]);
  });

  it('are undone with a request that fails, and are each tenant\'s own', async () => {
    const failed = await sql(file, "CREATE TYPE gone AS ENUM ('a'); CREATE TABLE gone_t (g gone); SELECT 1 / 0");
    expect(failed.status).toBe(400);
    expect((await sql(file, "SELECT 'a'::gone")).body.error.details.sqlstate).toBe('42704');
    expect((await sql(file, "CREATE TYPE gone AS ENUM ('b'); SELECT 'b'::gone AS g")).body.rows).toEqual([{ g: 'b' }]);
    // An ALTER TYPE that fails with its request leaves the labels as they were.
    expect((await sql(file, "ALTER TYPE gone ADD VALUE 'c'; SELECT 1 / 0")).status).toBe(400);
    expect((await sql(file, "SELECT 'c'::gone")).body.error.message).toBe('invalid input value for enum gone: "c"');
    // Another tenant has types of its own: the same name is free there, and this one's is unknown.
    const other = { server: file.server, apiKey: (await signup(file.server.url)).apiKey } as FileServer;
    expect((await sql(other, "SELECT 'b'::gone")).body.error).toMatchObject({ message: 'type "gone" does not exist' });
    expect((await sql(other, 'CREATE TABLE t (g gone)')).body.error.details.sqlstate).toBe('42704');
    expect((await sql(other, "CREATE TYPE gone AS ENUM ('z', 'y'); SELECT enum_range(NULL::gone) AS r")).body.rows).toEqual([{ r: ['z', 'y'] }]);
    expect((await sql(file, 'SELECT enum_range(NULL::gone) AS r')).body.rows).toEqual([{ r: ['b'] }]);
  });

  it('survive a restart with their data, and index order after labels were added between others', async () => {
    const setup = [
      "CREATE TYPE level AS ENUM ('low', 'high')",
      'CREATE TABLE task (id int PRIMARY KEY, lv level NOT NULL)',
      'CREATE INDEX task_lv ON task (lv)',
      "INSERT INTO task VALUES (1, 'high'), (2, 'low')",
      "ALTER TYPE level ADD VALUE 'mid' BEFORE 'high'",
      "ALTER TYPE level ADD VALUE 'mid-low' AFTER 'low'",
      "INSERT INTO task VALUES (3, 'mid'), (4, 'mid-low'), (5, 'high'), (6, 'low')",
      "ALTER TYPE level RENAME VALUE 'mid' TO 'medium'",
    ];
    await afterRestart(pg, setup, async (restarted) => {
      const refused = await alike(
        [
          'SELECT id, lv FROM task ORDER BY lv, id',
          "SELECT id FROM task WHERE lv > 'mid-low' ORDER BY lv DESC, id",
          "SELECT id FROM task WHERE lv BETWEEN 'low' AND 'medium' ORDER BY lv, id",
          'SELECT enum_range(NULL::level)::text',
          "INSERT INTO task VALUES (7, 'medium'), (8, 'mid')",
          "ALTER TYPE level ADD VALUE 'top'",
          "INSERT INTO task VALUES (7, 'top') RETURNING *",
          'SELECT lv, count(*) FROM task GROUP BY lv ORDER BY lv',
        ],
        restarted,
      );
      expect(refused).toEqual(['22P02']);
    });
  });

  it('run a Prisma-shaped migration: a quoted type, its default and an index, then inserts and selects', async () => {
    const migration = [
      'CREATE TYPE "Tier" AS ENUM (\'USER\', \'ADMIN\', \'OWNER\')',
      'CREATE TABLE "Member" ("id" SERIAL NOT NULL, "email" TEXT NOT NULL, "role" "Tier" NOT NULL DEFAULT \'USER\', "previous" "Tier"[], CONSTRAINT "Member_pkey" PRIMARY KEY ("id"))',
      'CREATE UNIQUE INDEX "Member_email_key" ON "Member"("email")',
      'CREATE INDEX "Member_role_idx" ON "Member"("role")',
    ];
    // One request, as a migration is applied.
    const applied = await sql(file, migration.map((s) => `${s};`).join('\n'));
    expect(applied.status, JSON.stringify(applied.body)).toBe(200);
    for (const s of migration) await pg.exec(s);
    const refused = await alike([
      'INSERT INTO "Member" ("email") VALUES (\'a@x.com\') RETURNING "id", "role"',
      'INSERT INTO "Member" ("email", "role", "previous") VALUES (\'b@x.com\', \'ADMIN\', \'{USER}\'), (\'c@x.com\', \'OWNER\', ARRAY[\'USER\', \'ADMIN\']::"Tier"[]) RETURNING "id", "role", "previous"::text',
      'INSERT INTO "Member" ("email", "role") VALUES (\'d@x.com\', \'admin\')',
      'SELECT "id", "email", "role" FROM "Member" WHERE "role" = \'ADMIN\'',
      'SELECT "role", count(*) FROM "Member" GROUP BY "role" ORDER BY "role" DESC',
      'UPDATE "Member" SET "role" = \'OWNER\' WHERE "email" = \'a@x.com\' RETURNING "id", "role"',
      'SELECT "email" FROM "Member" WHERE "role" IN (\'OWNER\', \'ADMIN\') ORDER BY "role", "email"',
      "SELECT column_name, data_type, udt_name, column_default FROM information_schema.columns WHERE table_name ILIKE 'member' AND column_name <> 'id' ORDER BY ordinal_position",
      'ALTER TYPE "Tier" ADD VALUE \'GUEST\' BEFORE \'USER\'',
      'SELECT enum_range(NULL::"Tier")::text, enum_first(NULL::"Tier")',
    ]);
    expect(refused).toEqual(['22P02']);
  });
});
