// Arrays (engine/sql/arrays.ts, functions/array-functions.ts): array columns, their text input and
// output, ARRAY[...] and ARRAY(SELECT ...), subscripts, comparison and order, the array operators
// (@>, <@, &&, ||, = ANY / ALL), the array functions, unnest in FROM, btree indexes and primary
// keys on arrays, and a restart. Each statement runs in tetradb over HTTP and in PostgreSQL (PGlite)
// with the same outcome (rows, or SQLSTATE, message, DETAIL and HINT).
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { afterRestart, alikeFull } from './pg-outcome.js';
import { http, serverForFile, type FileServer } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

const alike = (statements: string[], on: FileServer = file): Promise<string[]> => alikeFull(pg, on, statements);

const SETUP = [
  'DROP TABLE IF EXISTS arr',
  'CREATE TABLE arr (id int PRIMARY KEY, a int[], tags text[], v varchar(3)[], n numeric(5,2)[], b bigint ARRAY)',
  `INSERT INTO arr VALUES (1, '{1,2,3}', '{"a b",c,NULL}', '{ab}', '{1.234}', '{10}'), (2, ARRAY[4,5], ARRAY['x'], NULL, NULL, NULL), (3, '{}', '{}', '{}', '{}', '{}')`,
];

describe('arrays', () => {
  it('are columns of any element type, read from their text form and ARRAY[...], and shown as PostgreSQL shows them', async () => {
    const refused = await alike([
      ...SETUP,
      'SELECT * FROM arr ORDER BY id',
      'SELECT a::text, tags::text, v::text, n::text FROM arr ORDER BY id',
      "SELECT '{1,2}'::int[], '{a,\"b,c\"}'::text[], ARRAY[1,2]::text[], '{1, 2 , 3}'::int[], '{ \"x\" , y }'::text[], '{\"\",NULL,\"NULL\",null}'::text[]",
      "SELECT ARRAY['a', NULL, '', 'NULL', 'x\"y', 'b\\c', 'd e', '{']::text",
      "SELECT '{1,2}'::bigint[], '{t,f}'::boolean[], CAST('{f}' AS bool[]), '{2024-01-02}'::date[]::text, '{1.5,NaN,-Infinity}'::float8[]::text, '{\\\\x01}'::bytea[]::text",
      `SELECT '{"2024-01-01 10:00:00.123456"}'::timestamp(2)[]::text, '{"2024-01-01 10:00"}'::timestamptz[]::text, '{"2024-01-01 10:00:00.5"}'::timestamp(0) with time zone[]::text, '{1 day}'::interval[], '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'::uuid[], '{"{\\"a\\": 1}"}'::jsonb[], '{101,1}'::bit(3)[], '{101,1}'::bit varying(2)[], '{101}'::varbit[]`,
      'CREATE TABLE arr2 (a boolean[], b date[], c timestamptz[], d uuid[], e jsonb[], f timestamp(0)[], g bit(2)[], h int[3], i int[][])',
      `INSERT INTO arr2 VALUES ('{t}', '{2024-01-01}', '{"2024-01-01 00:00+00"}', '{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}', '{"[1]"}', '{"2024-01-01 00:00:00.7"}', '{10}', '{1,2,3,4}', '{5}')`,
      'SELECT a, b::text, c::text, d, e, f::text, g, h, i FROM arr2',
      "SELECT column_name, data_type, udt_name FROM information_schema.columns WHERE table_name IN ('arr', 'arr2') ORDER BY table_name, ordinal_position",
      'ALTER TABLE arr2 ALTER COLUMN a TYPE text[]',
      'SELECT a FROM arr2',
      'SELECT ARRAY[]::int[], ARRAY[]::text[] || $$a$$::text, ARRAY[]::int[] <@ ARRAY[1]',
      // An untyped literal beside an array is an array (PostgreSQL resolves it so): 22P02 here.
      'SELECT ARRAY[$$b$$] || $$a$$',
      'SELECT ARRAY[]',
      'DROP TABLE arr2',
      'SELECT ARRAY[1, 2.5], ARRAY[1, NULL], ARRAY[NULL, NULL], ARRAY[1,2]::int8[], ARRAY[$$1$$, $$2$$]::int[], ARRAY[1.5]::int[]',
      'SELECT pg_typeof(ARRAY[1]), pg_typeof(ARRAY[$$a$$]), pg_typeof($${1}$$::bigint[]), pg_typeof(ARRAY[1.5])',
      // Assignment: element modifiers per element, and assignment casts.
      "INSERT INTO arr (id, v, n) VALUES (4, '{abcd}', NULL)",
      "INSERT INTO arr (id, v) VALUES (4, ARRAY['ab', 'abcd'])",
      "SELECT ARRAY['abcd']::varchar(2)[], '{1.235}'::numeric(4,2)[]",
      "INSERT INTO arr (id, a) VALUES (5, '{1.5}')",
      "INSERT INTO arr (id, a, b) VALUES (5, ARRAY[7], ARRAY[1,2]) RETURNING a, b",
      'UPDATE arr SET a = a || 6, tags = tags || $${z}$$ WHERE id = 2 RETURNING a, tags',
      // Refused as PostgreSQL refuses them.
      "SELECT '{1,2'::int[]",
      "SELECT '1,2'::int[]",
      "SELECT '{1,x}'::int[]",
      "SELECT '{1,}'::int[]",
      "SELECT '{1} x'::int[]",
      "SELECT '{\"a}'::text[]",
      "SELECT ARRAY[1, 'a']",
      'SELECT ARRAY[1, true]',
      'SELECT ARRAY[1]::uuid[]',
    ]);
    expect(refused).toEqual(['22P02', '42P18', '22001', '22001', '22P02', '22P02', '22P02', '22P02', '22P02', '22P02', '22P02', '22P02', '42804', '42846']);
  });

  it('compare, order, group and join element by element, with NULL elements after values', async () => {
    await alike([
      ...SETUP,
      "INSERT INTO arr (id, a) VALUES (6, '{1,NULL}'), (7, '{1,2,3}'), (8, '{0,5,6,7}'), (9, NULL), (10, '{1,2}')",
      'SELECT ARRAY[1,2] = ARRAY[1,2], ARRAY[1,2] < ARRAY[1,3], ARRAY[1] = $${1}$$, ARRAY[1,NULL] = ARRAY[1,NULL], ARRAY[1] < ARRAY[1,0], ARRAY[1] = ARRAY[1::bigint]',
      'SELECT id, a FROM arr ORDER BY a, id',
      'SELECT id, a FROM arr ORDER BY a DESC NULLS LAST, id',
      'SELECT a, count(*) FROM arr GROUP BY a ORDER BY a',
      'SELECT DISTINCT tags FROM arr ORDER BY 1',
      'SELECT x.id, y.id FROM arr x JOIN arr y ON x.a = y.a AND x.id < y.id ORDER BY 1, 2',
      'SELECT max(a), min(a) FROM arr',
      'SELECT id FROM arr WHERE a = $${1,2,3}$$ ORDER BY 1',
      'SELECT id FROM arr WHERE a > $${1}$$ ORDER BY a, id',
      'SELECT id FROM arr WHERE a IS NOT DISTINCT FROM $${}$$',
      'SELECT array_agg(x) = ARRAY[1,2] FROM unnest(ARRAY[1,2]) x',
    ]);
  });

  it('take subscripts, the array operators, ANY / ALL and ARRAY(SELECT ...)', async () => {
    const refused = await alike([
      ...SETUP,
      'SELECT a, tags, a[1], a[5], tags[2], a[1][1], (ARRAY[1,2,3])[2], a[0], a[$$2$$] FROM arr ORDER BY id',
      'SELECT id FROM arr WHERE 2 = ANY(a)',
      "SELECT id FROM arr WHERE 'c' = ANY(tags)",
      'SELECT id FROM arr WHERE a @> ARRAY[1,2] ORDER BY 1',
      "SELECT id FROM arr WHERE a <@ '{1,2,3,4}' ORDER BY 1",
      'SELECT id FROM arr WHERE a && ARRAY[5,6] ORDER BY 1',
      'SELECT ARRAY[1,2] @> ARRAY[1], ARRAY[$$a$$] <@ ARRAY[$$a$$,$$b$$], ARRAY[1,NULL] @> ARRAY[NULL::int], ARRAY[1] && ARRAY[NULL::int], ARRAY[]::int[] <@ ARRAY[1]',
      "SELECT a || 9, 0 || a, a || ARRAY[7,8], a || '{10}', '{0}' || a FROM arr ORDER BY id",
      "SELECT '{1,2}'::int[] || '{3}'::int[], ARRAY[1] || ARRAY[2::bigint], ARRAY[1] || NULL::int[], NULL::int[] || 1, ARRAY[1] || NULL::int",
      "SELECT 1 = ANY('{1,2}'), 3 <> ALL(ARRAY[1,2]), 1 = ANY(ARRAY[NULL,2]), NULL = ANY(ARRAY[1]), 1 = ANY('{}'::int[]), 1 = ALL('{}'::int[]), 2 > ALL(ARRAY[1,NULL]), 0 > SOME(ARRAY[1,2]), 'b' = ANY(ARRAY['a','b'])",
      'SELECT ARRAY(SELECT id FROM arr ORDER BY id DESC), ARRAY(SELECT id FROM arr WHERE false), ARRAY(SELECT $$x$$)',
      'SELECT arr.id, ARRAY(SELECT x * 2 FROM unnest(arr.a) x) FROM arr ORDER BY 1',
      `SELECT ('{"a":{"b":[1,2]}}'::jsonb)['a']['b'][1], ('{"a":1}'::jsonb)['x'], to_jsonb(ARRAY[1,2]), to_jsonb(ARRAY['a',NULL])`,
      // Slices: bounds clamped to the array, an omitted one its end, a NULL one NULL.
      'SELECT a[2:3], a[2:], a[:2], a[:], a[3:10], a[0:1], a[5:6], a[3:2], a[1:2][1], a[id:id+1] FROM arr ORDER BY id',
      'SELECT (ARRAY[1,2,3])[1:2], a[1:NULL] FROM arr WHERE id = 1',
      // Assignment to an element: past the end the array grows with NULLs; several in one SET.
      'UPDATE arr SET a[2] = 20 WHERE id = 1 RETURNING a',
      'UPDATE arr SET a[6] = 6 WHERE id = 1 RETURNING a',
      'UPDATE arr SET a[1] = 7, a[2] = 8 WHERE id = 3 RETURNING a',
      "UPDATE arr SET tags[1] = 'z' WHERE id = 3 RETURNING tags",
      // Refused as PostgreSQL refuses them.
      "UPDATE arr SET a[1] = 'x' WHERE id = 1",
      'UPDATE arr SET id[1] = 1',
      "UPDATE arr SET a = '{1}', a[1] = 2",
      'SELECT id[1] FROM arr',
      'SELECT 1 = ANY(1)',
      'SELECT ARRAY[1] @> ARRAY[$$a$$::text]',
      'SELECT (1)[1]',
      'SELECT ARRAY(SELECT 1, 2)',
    ]);
    expect(refused).toEqual(['22P02', '42804', '42601', '42804', '42809', '42883', '42804', '42601']);
  });

  it('have the array functions, and unnest in FROM', async () => {
    const refused = await alike([
      ...SETUP,
      'SELECT array_length(a, 1), cardinality(a), array_upper(a, 1), array_lower(a, 1), array_ndims(a), array_dims(a), array_length(a, 2) FROM arr ORDER BY id',
      'SELECT array_append(a, 9), array_prepend(0, a), array_cat(a, ARRAY[7]), array_remove(a, 2), array_replace(a, 1, 10), array_position(a, 2), array_positions(ARRAY[1,2,1], 1) FROM arr ORDER BY id',
      "SELECT array_append(NULL::int[], 1), array_cat(NULL::int[], NULL::int[]), array_remove(ARRAY[1,NULL,2], NULL), array_position(ARRAY['a',NULL], NULL), array_position(ARRAY[1,2,1], 1, 2)",
      "SELECT array_to_string(tags, ','), array_to_string(tags, ',', '*'), array_to_string(a, '-') FROM arr ORDER BY id",
      "SELECT string_to_array('a,b,,c', ','), string_to_array('a,b,,c', ',', ''), string_to_array('abc', NULL), string_to_array('abc', ''), string_to_array('', ',')",
      'SELECT unnest FROM unnest(ARRAY[1,2])',
      'SELECT * FROM unnest(ARRAY[1,2], ARRAY[$$a$$,$$b$$,$$c$$]) AS u(x, y)',
      'SELECT arr.id, u.* FROM arr, unnest(arr.a, arr.tags) WITH ORDINALITY AS u(x, y, n) ORDER BY 1, 4',
      'SELECT * FROM generate_subscripts(ARRAY[$$a$$,$$b$$], 1, true)',
      "SELECT * FROM regexp_matches('a1b22', '\\d+', 'g')",
      'SELECT * FROM unnest(NULL::int[])',
      // Refused as PostgreSQL refuses them.
      "SELECT array_length('{1,2}', 1)",
      "SELECT array_append(ARRAY[1], 'x')",
      'SELECT array_length(1, 1)',
      'SELECT * FROM unnest(1)',
      'SELECT * FROM unnest(NULL)',
    ]);
    expect(refused).toEqual(['42804', '22P02', '42883', '42883', '42725']);
  });

  it('take btree indexes and primary keys, with DEFAULTs, and survive a restart', async () => {
    const setup = [
      "CREATE TABLE ka (a int[] PRIMARY KEY, note text DEFAULT 'n', t text[] NOT NULL DEFAULT ARRAY['z'], e int[] DEFAULT '{}')",
      "INSERT INTO ka (a) VALUES ('{1}'), ('{1,NULL}'), ('{}'), ('{0,5}'), ('{1,2}'), ('{2}')",
      'CREATE INDEX ka_t ON ka (t, a)',
    ];
    await afterRestart(pg, setup, async (after) => {
      const refused = await alike(
        [
          'SELECT * FROM ka ORDER BY a',
          "SELECT a FROM ka WHERE a = '{1,NULL}'",
          "SELECT a FROM ka WHERE a >= '{1}' AND a < '{2}' ORDER BY a",
          "SELECT a FROM ka WHERE t = '{z}' ORDER BY a DESC",
          "INSERT INTO ka (a) VALUES ('{1}')",
          "UPDATE ka SET t = ARRAY['y'] WHERE a = '{0,5}' RETURNING *",
          "SELECT a, t FROM ka WHERE t = ARRAY['y']",
          'SELECT column_name, data_type, udt_name FROM information_schema.columns WHERE table_name = $$ka$$ ORDER BY ordinal_position',
        ],
        after,
      );
      // key = ANY (array) reads each element's key (an index scan with = ANY, as PostgreSQL's).
      const anyRefused = await alike(
        [
          'CREATE TABLE anyk (id int PRIMARY KEY, s text)',
          'CREATE INDEX anyk_s ON anyk (s)',
          "INSERT INTO anyk SELECT g, 's' || g FROM generate_series(1, 500) g",
          'SELECT id FROM anyk WHERE id = ANY(ARRAY[5, 3, 5, NULL, 9999]) ORDER BY id',
          "SELECT id FROM anyk WHERE id = ANY('{7,8}') ORDER BY id",
          "SELECT id FROM anyk WHERE s = ANY(ARRAY['s4', 's40', 'zz']) ORDER BY id",
          'SELECT id FROM anyk WHERE id = ANY(ARRAY[2::bigint, 3]) ORDER BY id',
          'SELECT id FROM anyk WHERE id = ANY(NULL::int[])',
          "SELECT id FROM anyk WHERE id = ANY('{}'::int[])",
          'SELECT id FROM anyk WHERE id = ANY(ARRAY[3, 1, 2]) ORDER BY id DESC LIMIT 2',
        ],
        after,
      );
      expect(anyRefused).toEqual([]);
      for (const [sql, read] of [
        ['SELECT id FROM anyk WHERE id = ANY(ARRAY[5, 3])', /Primary Key Scan on anyk\s+\(Key: \(id\), 1 equal/],
        ["SELECT id FROM anyk WHERE s = ANY('{s4,s5}')", /Index Scan using anyk_s on anyk\s+\(Key: \(s\), 1 equal/],
      ] as const) {
        const res = await http(after.server.url, 'POST', '/api/sql/query', { json: { sql: `EXPLAIN ${sql}`, rowMode: 'array' }, apiKey: after.apiKey });
        expect((res.body.rows as string[][]).map((r) => r[0]).join('\n'), sql).toMatch(read);
      }
      const byParam = await http(after.server.url, 'POST', '/api/sql/query', { json: { sql: 'SELECT id FROM anyk WHERE id = ANY($1) ORDER BY id', params: [[4, 2, 99999]], rowMode: 'array' }, apiKey: after.apiKey });
      expect(byParam.body.rows).toEqual([[2], [4]]);
      expect(refused).toEqual(['23505']);
      const plan = await http(after.server.url, 'POST', '/api/sql/query', { json: { sql: "EXPLAIN SELECT a FROM ka WHERE a = '{1,NULL}'", rowMode: 'array' }, apiKey: after.apiKey });
      expect((plan.body.rows as string[][]).map((r) => r[0]).join('\n')).toMatch(/Primary Key Scan on ka\s+\(Key: \(a\), 1 equal/);
    });
  });
});
