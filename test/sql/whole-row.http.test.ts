// Whole rows as JSON (engine/sql/exec/select.ts wholeRowJson): row_to_json(t), to_json(t),
// to_jsonb(t.*), json_agg(t), jsonb_agg(x) over a table, a subquery's alias, a correlated
// subquery's item and the NULL row of an outer join. json is jsonb here, so json results are
// compared as jsonb (keys in jsonb's order; docs/sql.md). Each statement runs in tetradb over HTTP
// and in PostgreSQL (PGlite) with the same outcome.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { alikeFull } from './pg-outcome.js';
import { serverForFile } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

describe('whole rows', () => {
  it('are JSON objects of their columns in row_to_json, to_json, to_jsonb, json_agg and jsonb_agg', async () => {
    const refused = await alikeFull(pg, file, [
      'CREATE TABLE wr (id int PRIMARY KEY, name text, tags text[], price numeric(6,2), ts timestamp, doc jsonb)',
      'CREATE TABLE wu (id int PRIMARY KEY, wr_id int, note text)',
      `INSERT INTO wr VALUES (1, 'a', '{x,y}', 1.50, '2024-01-01 10:00', '{"k": 1}'), (2, NULL, NULL, NULL, NULL, NULL)`,
      "INSERT INTO wu VALUES (10, 1, 'n1'), (11, 1, 'n2'), (12, 3, 'n3')",
      'SELECT row_to_json(wr)::jsonb FROM wr ORDER BY id',
      'SELECT to_jsonb(wr.*) FROM wr ORDER BY id',
      'SELECT to_json(wr)::jsonb FROM wr WHERE id = 1',
      'SELECT json_agg(wr)::jsonb FROM wr',
      'SELECT jsonb_agg(x) FROM (SELECT id, name FROM wr ORDER BY id) x',
      'SELECT wr.id, (SELECT jsonb_agg(wu) FROM wu WHERE wu.wr_id = wr.id) FROM wr ORDER BY 1',
      'SELECT wu.id, to_jsonb(wr) FROM wu LEFT JOIN wr ON wr.id = wu.wr_id ORDER BY 1',
      'SELECT jsonb_agg(wr) FROM wr WHERE false',
      'SELECT c.id, jsonb_agg(o) FROM wr c JOIN wu o ON o.wr_id = c.id GROUP BY c.id',
      'SELECT row_to_json(s)::jsonb FROM (SELECT 1 AS a, $$x$$ AS b) s',
      // json_agg / jsonb_agg with ORDER BY inside the call (the parser reads none; a pre-pass rewrite).
      'SELECT jsonb_agg(name ORDER BY name) FROM wr',
      'SELECT jsonb_agg(wu ORDER BY wu.id DESC) FROM wu',
      'SELECT json_agg(x ORDER BY x.id)::jsonb FROM (SELECT id, name FROM wr) x',
      "SELECT coalesce(jsonb_agg(note ORDER BY note), '[]') FROM wu WHERE false",
      'SELECT wr.id, (SELECT jsonb_agg(wu ORDER BY wu.id) FROM wu WHERE wu.wr_id = wr.id) AS notes FROM wr ORDER BY 1',
      // A column of that name is the column.
      'SELECT to_jsonb(name) FROM wr ORDER BY id',
      'SELECT to_jsonb(s.name) FROM (SELECT name FROM wr) s ORDER BY 1',
      // Refused as PostgreSQL refuses them.
      'SELECT row_to_json(z) FROM wr',
      'SELECT row_to_json(name) FROM wr',
      'SELECT to_jsonb(z.*) FROM wr',
    ]);
    expect(refused).toEqual(['42703', '42883', '42P01']);
  });
});
