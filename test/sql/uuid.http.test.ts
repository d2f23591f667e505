// The uuid type (engine/sql/sql-cast.ts parseUuid, sql-codec.ts, system-functions.ts gen_random_uuid):
// input in every form PostgreSQL's uuid_in reads and its refusals, output, casts, comparison and
// order, keys and indexes, defaults from gen_random_uuid(), parameters, and a restart. Each
// statement runs in tetradb over HTTP and in PostgreSQL (PGlite) with the same outcome (rows as
// PostgreSQL's text, or SQLSTATE, message, DETAIL and HINT).
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { afterRestart, alikeFull } from './pg-outcome.js';
import { http, serverForFile, type FileServer } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

/** Each statement on both, in order, with the same outcome; the SQLSTATEs of those refused. */
const alike = (statements: string[], on: FileServer = file): Promise<string[]> => alikeFull(pg, on, statements);

const U1 = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11';
const U2 = '00000000-0000-0000-0000-000000000001';

describe('uuid', () => {
  it('reads what uuid_in reads, refuses the rest, and prints the canonical form', async () => {
    const inputs = [
      U1,
      U1.toUpperCase(),
      `{${U1}}`,
      U1.replace(/-/g, ''),
      'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11',
      'a0eebc99-9c0b4ef8-bb6d-6bb9bd380a11',
      // refused
      'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1',
      `${U1}-`,
      `-${U1}`,
      'a0eebc99--9c0b-4ef8-bb6d-6bb9bd380a11',
      ` ${U1}`,
      `{${U1}`,
      'a0eeb-c999c0b4ef8bb6d6bb9bd380a11',
      'g0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
      '',
    ];
    const refused = await alike(inputs.map((s) => `SELECT '${s}'::uuid, CAST('${s}' AS uuid)::text, uuid '${s}'`));
    expect(refused).toHaveLength(9);
    expect(new Set(refused)).toEqual(new Set(['22P02']));
  });

  it('casts, compares and orders as PostgreSQL', async () => {
    const refused = await alike([
      `SELECT '${U1}'::uuid = '${U1.toUpperCase()}', '${U1}'::uuid < '${U2}', '${U2}'::uuid < '${U1}'::uuid, '${U1}'::uuid <> '${U2}'::uuid`,
      `SELECT '${U1}'::uuid = '${U1}'::text`,
      `SELECT '${U1}'::uuid::text || '!', length('${U1}'::uuid::text), md5('a')::uuid`,
      'SELECT 1::uuid',
      `SELECT '${U1}'::uuid::bytea`,
      `SELECT min('${U1}'::uuid)`,
      `SELECT pg_typeof('${U1}'::uuid), pg_typeof(gen_random_uuid())`,
      'SELECT length(gen_random_uuid()::text), gen_random_uuid() <> gen_random_uuid(), substr(gen_random_uuid()::text, 15, 1)',
      `SELECT jsonb_build_object('id', '${U1}'::uuid)::text, jsonb_build_array('${U1}'::uuid)::text`,
    ]);
    expect(refused).toEqual(['42883', '42846', '42846', '42883']);
  });

  it('keys, indexes, defaults, foreign keys and ALTER COLUMN TYPE', async () => {
    const refused = await alike([
      'CREATE TABLE acc (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), ext uuid UNIQUE, n int)',
      'CREATE TABLE ev (id int PRIMARY KEY, acc uuid NOT NULL REFERENCES acc ON DELETE CASCADE)',
      'CREATE INDEX acc_n ON acc (n, ext)',
      `INSERT INTO acc (id, ext, n) VALUES ('${U1}', '${U2}', 1), ('${U2}', NULL, 2), ('ffffffff-ffff-ffff-ffff-ffffffffffff', '${U1}', 1)`,
      `INSERT INTO acc (ext, n) VALUES ('${U2.toUpperCase()}', 3)`,
      "INSERT INTO acc (ext, n) VALUES ('not-a-uuid', 3)",
      'INSERT INTO acc (n) VALUES (9) RETURNING length(id::text), ext',
      `INSERT INTO ev VALUES (1, '${U1}'), (2, '{${U2}}')`,
      "INSERT INTO ev VALUES (3, 'eeeeeeee-0000-0000-0000-000000000000')",
      'SELECT id, ext, n FROM acc WHERE n < 9 ORDER BY id',
      'SELECT id, ext FROM acc WHERE n = 1 ORDER BY ext DESC',
      `SELECT n FROM acc WHERE id IN ('${U2}', '${U1}') ORDER BY n`,
      `SELECT n FROM acc WHERE id > '${U2}' AND n < 9 ORDER BY id`,
      'SELECT a.n, e.id FROM ev e JOIN acc a ON a.id = e.acc ORDER BY e.id',
      'SELECT count(DISTINCT ext), count(*) FROM acc',
      'SELECT ext, count(*) FROM acc WHERE n < 9 GROUP BY ext ORDER BY ext NULLS FIRST',
      `DELETE FROM acc WHERE id = '${U1}'`,
      'SELECT * FROM ev ORDER BY id',
      'ALTER TABLE acc ALTER COLUMN ext TYPE text',
      'ALTER TABLE acc ALTER COLUMN ext TYPE uuid',
      'ALTER TABLE acc ALTER COLUMN ext TYPE uuid USING ext::uuid',
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'acc' ORDER BY ordinal_position",
    ]);
    expect(refused).toEqual(['23505', '22P02', '23503', '42804']);
  });

  it('binds a parameter to a uuid, and keeps uuid rows and keys across a restart', async () => {
    const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql: 'SELECT n FROM acc WHERE id = $1', params: [U2.toUpperCase()] }, apiKey: file.apiKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body.rows).toEqual([{ n: 2 }]);
    expect(res.body.columns).toEqual([{ name: 'n', type: 'int4' }]);
    await afterRestart(pg, ['CREATE TABLE ru (id uuid PRIMARY KEY, v text)', `INSERT INTO ru VALUES ('${U1}', 'a'), ('${U2}', 'b')`], async (after) => {
      await alike(['SELECT * FROM ru ORDER BY id', `SELECT v FROM ru WHERE id = '${U1.toUpperCase()}'`, `INSERT INTO ru VALUES ('${U1}', 'c')`], after);
    });
  });
});
