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
});
