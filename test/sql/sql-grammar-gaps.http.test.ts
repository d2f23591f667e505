// Parameter forms of the statement pre-pass rewrites (engine/sql/sql-grammar-gaps.ts) over HTTP:
// `$n::type` anywhere (the parser reads it only as a whole select item) and parameters in OFFSET
// expressions. The sqllogictest runner sends no parameters, so these are here; the rest of the
// rewrites are in test/sql/slt/gaps.slt. Every expected answer is PostgreSQL's (checked with
// PGlite, PostgreSQL 18, with the same parameters).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http, signup, startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer;
let apiKey: string;
beforeAll(async () => {
  server = await startServer();
  ({ apiKey } = await signup(server.url));
  const res = await query('CREATE TABLE p (id INT PRIMARY KEY, n NUMERIC(10,2), s TEXT)');
  expect(res.status, res.text).toBe(200);
});
afterAll(() => server.stop());

const query = (sql: string, params?: unknown[]) => http(server.url, 'POST', '/api/sql/query', { json: { sql, ...(params ? { params } : {}), rowMode: 'array' }, apiKey });

describe('parameter casts and OFFSET parameters', () => {
  // In order: the INSERTs make the rows the later statements read.
  const CASES: [sql: string, params: unknown[], columns: [string, string][], rows: unknown[][]][] = [
    ['INSERT INTO p VALUES ($1::int, $2::numeric(10,2), $3::text) RETURNING *', ['1', '2.345', '7'], [['id', 'int4'], ['n', 'numeric'], ['s', 'text']], [[1, '2.35', '7']]],
    ['INSERT INTO p VALUES ($1::int + 10, $2::numeric * 2, $3::int::text || $1::text) RETURNING *', ['1', '2.345', '7'], [['id', 'int4'], ['n', 'numeric'], ['s', 'text']], [[11, '4.69', '71']]],
    ['UPDATE p SET n = $1::numeric + $2::int WHERE id = $3::int RETURNING n', ['2.345', '7', '1'], [['n', 'numeric']], [['9.35']]],
    ['SELECT id FROM p WHERE id = $1::int OR id = $2::bigint - 1 ORDER BY id', ['1', 12], [['id', 'int4']], [[1], [11]]],
    // :: binds tighter than * and unary minus (the parser alone read 1 + $2::int as (1 + $2)::int).
    ['SELECT $1::int + $2::int AS s, 1 + $2::int * 2 AS t, -$1::int AS u', ['1', '7'], [['s', 'int4'], ['t', 'int4'], ['u', 'int4']], [[8, 15, -1]]],
    ['SELECT $1::int, $2::double precision', ['1', '2.5'], [['int4', 'int4'], ['float8', 'float8']], [[1, 2.5]]],
    ['SELECT $1::int ^ 2 AS p', [2], [['p', 'float8']], [[4]]],
    ['SELECT g FROM generate_series(1, 5) g ORDER BY g OFFSET $1 + 1', [2], [['g', 'int4']], [[4], [5]]],
    ['SELECT g FROM generate_series(1, 5) g ORDER BY g OFFSET $1::int * 2 LIMIT $2', [1, 2], [['g', 'int4']], [[3], [4]]],
    ['SELECT g FROM generate_series(1, 3) g ORDER BY g OFFSET $1::int + 1', [null], [['g', 'int4']], [[1], [2], [3]]],
    // ... in function arguments
    ['SELECT lower($1::text), coalesce($2::int, 0), coalesce($3::int, 0)', ['ABC', null, 5], [['lower', 'text'], ['coalesce', 'int4'], ['coalesce', 'int4']], [['abc', 0, 5]]],
    ['SELECT upper($1::text) || $2::text AS c, length($1::text), abs($3::int), round($4::numeric, 1)', ['a', 'b', -3, '1.26'], [['c', 'text'], ['length', 'int4'], ['abs', 'int4'], ['round', 'numeric']], [['Ab', 1, 3, '1.3']]],
    ['SELECT greatest($1::int, $2::int, 3), nullif($1::int, 1), count($2::int), lower($3::varchar(2))', [1, 7, 'ABC'], [['greatest', 'int4'], ['nullif', 'int4'], ['count', 'int8'], ['lower', 'text']], [[7, null, 1, 'ab']]],
    ['SELECT s FROM p WHERE lower($1::text) = s OR coalesce($2::int, 1) = id ORDER BY s', ['71', null], [['s', 'text']], [['7'], ['71']]],
    // Array casts: as PostgreSQL's, and a JSON array parameter read as an array where one is wanted.
    ['SELECT coalesce($1::int[], NULL) AS c', [null], [['c', 'int4[]']], [[null]]],
    ['SELECT $1::int[] AS a, $2::text[] AS b', ['{1,2}', ['x', null]], [['a', 'int4[]'], ['b', 'text[]']], [[[1, 2], ['x', null]]]],
    ['SELECT s FROM p WHERE id = ANY($1) ORDER BY s', [[1, 11, 99]], [['s', 'text']], [['7'], ['71']]],
  ];

  it.each(CASES)('%s', async (sql, params, columns, rows) => {
    const res = await query(sql, params);
    expect(res.status, res.text).toBe(200);
    expect(res.body.columns.map((c: { name: string; type: string }) => [c.name, c.type])).toEqual(columns);
    expect(res.body.rows).toEqual(rows);
  });

  it.each([
    ['SELECT lower($1::int)', [1], '42883'],
    ['SELECT coalesce($1::text, 5)', ['a'], '42804'],
  ])('refuses %s with %s', async (sql, params, sqlstate) => {
    const res = await query(sql, params);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.details.sqlstate).toBe(sqlstate);
  });

  it('refuses a negative OFFSET computed from a parameter with 2201X', async () => {
    const res = await query('SELECT g FROM generate_series(1, 5) g OFFSET $1 - 5', [2]);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.details.sqlstate).toBe('2201X');
  });
});

// The error paths the gaps closed this session opened, with PostgreSQL's SQLSTATE and message
// (checked with PGlite) unless noted; the slt files check the SQLSTATEs, these the whole HTTP answer.
describe('errors of closed grammar gaps', () => {
  beforeAll(async () => {
    const res = await query('CREATE TABLE ga (id INT, x INT); CREATE TABLE gb (id INT, y INT)');
    expect(res.status, res.text).toBe(200);
  });

  it.each([
    ["SELECT '1'::foo", '42704', 'type "foo" does not exist'],
    ['SELECT CAST(x AS nosuch) FROM ga', '42704', 'type "nosuch" does not exist'],
    ["SELECT foo '1'", '42704', 'type "foo" does not exist'],
    ["SELECT '1'::foo[]", '42704', 'type "foo[]" does not exist'],
    // PostgreSQL has these types; tetradb does not
    ["SELECT '(1,2)'::point", '0A000', 'unsupported: type point'],
    ['SELECT (SELECT * FROM ga)', '42601', 'subquery must return only one column'],
    ['SELECT * FROM (ga)', '42601', 'syntax error at or near ")"'],
    // PostgreSQL: XX000 "unsupported join alias expression"
    ['SELECT count(j.*) FROM (ga JOIN gb USING (id)) AS j', '0A000', 'unsupported: count(j.*) of a join alias'],
    // PostgreSQL's messages: column reference "id" is ambiguous; invalid reference to FROM-clause entry for table "ga"
    ['SELECT j.id FROM (ga JOIN gb ON ga.id = gb.id) AS j', '42702', 'column reference "j.id" is ambiguous'],
    ['SELECT ga.x FROM (ga JOIN gb USING (id)) AS j', '42P01', 'missing FROM-clause entry for table "ga"'],
    // AT TIME ZONE after any operand is pg_catalog.timezone(zone, operand), as PostgreSQL reads it
    ["SELECT x AT TIME ZONE 'UTC' FROM ga", '42883', 'function pg_catalog.timezone(unknown, integer) does not exist'],
  ])('%s is %s', async (sql, sqlstate, message) => {
    const res = await query(sql);
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.code).toBe('SQL_ERROR');
    expect(res.body.error.details.sqlstate).toBe(sqlstate);
    expect(res.body.error.message).toBe(message);
  });
});
