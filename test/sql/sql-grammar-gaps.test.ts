// The text the pre-pass hands the parser for the forms of engine/sql/sql-grammar-gaps.ts; what
// they evaluate to is checked against PostgreSQL in test/sql/slt/gaps.slt.
import { describe, expect, it } from 'vitest';
import { prepareStatements } from '../../engine/sql/sql-rewrite.js';

const text = (sql: string): string => {
  const [p] = prepareStatements(sql);
  if (p === undefined || !('text' in p)) throw new Error('expected a text statement');
  return p.text;
};

describe('grammar gaps rewritten before parsing', () => {
  it.each([
    // ^: left-associative, above * and /, below unary minus and ::
    ['SELECT 2 ^ 3 ^ 2', 'SELECT __tetra_power__((__tetra_power__((2), (3))), (2))'],
    ['SELECT 2 * -3 ^ 2 + 1', 'SELECT 2 * __tetra_power__((-3), (2)) + 1'],
    ['SELECT 1 - x::float8 ^ t.y[1] FROM t', 'SELECT 1 - __tetra_power__((x::float8), (t.y[1])) FROM t'],
    ['SELECT power(2, 3) ^ (1 + 1)', 'SELECT __tetra_power__((power(2, 3)), ((1 + 1)))'],
    ['SELECT x::double precision ^ -$1', 'SELECT __tetra_power__((x::double precision), (-$1))'],
    // `^-` is one (unknown) operator in PostgreSQL: refused by the planner with the operand types
    ['SELECT 2^-1', "SELECT __tetra_operator__('^-', (2), (1))"],
    // ~~ and its forms, with the operands of a named operator (|| is the same level)
    ["SELECT s ~~ 'a' || '%' FROM t", "SELECT ((s) LIKE ('a')) || '%' FROM t"],
    ["SELECT a || b !~~* c = true", 'SELECT ((a || b) NOT ILIKE (c)) = true'],
    ["SELECT NOT s ~~* 'x' AND s !~~ 'y' || 'z'", "SELECT NOT ((s) ILIKE ('x')) AND ((s) NOT LIKE ('y')) || 'z'"],
    ["SELECT CASE WHEN a THEN b END ~~ c + 1", 'SELECT ((CASE WHEN a THEN b END) LIKE (c + 1))'],
    ["SELECT left(s, 1) ~~ right(s, 1), left(s, 1) ^ 2", 'SELECT ((left(s, 1)) LIKE (right(s, 1))), __tetra_power__((left(s, 1)), (2))'],
    // GROUP BY ()
    ['SELECT count(*) FROM t GROUP BY () ORDER BY 1', 'SELECT count(*) FROM t HAVING TRUE ORDER BY 1'],
    ['SELECT count(*) FROM t GROUP BY () HAVING count(*) > 1', 'SELECT count(*) FROM t HAVING count(*) > 1'],
    ['SELECT a FROM t GROUP BY (), a, ()', 'SELECT a FROM t GROUP BY a'],
    // SET (a, b) = ...
    ['UPDATE t SET (a, b) = (1, b + 1), c = 2 WHERE id = 1', 'UPDATE t SET a = 1, b = b + 1, c = 2 WHERE id = 1'],
    ['UPDATE t SET c = 0, (a, b) = ROW(1, DEFAULT)', 'UPDATE t SET c = 0, a = 1, b = DEFAULT'],
    ['UPDATE t SET (a, b) = (SELECT x, y FROM u) RETURNING a', 'UPDATE t SET a = __tetra_row_assign__((SELECT x, y FROM u)), b = __tetra_row_assign__() RETURNING a'],
    ['INSERT INTO t VALUES (1) ON CONFLICT (id) DO UPDATE SET (a, b) = (2, 3)', 'INSERT INTO t (__tetra_all_columns__) VALUES (1) ON CONFLICT (id) DO UPDATE SET a = 2, b = 3'],
    // OFFSET <expression>, with the LIMIT beside it on either side
    ['SELECT a FROM t OFFSET 1 + 1', 'SELECT a FROM t LIMIT (SELECT NULL AS __tetra_limit__, 1 + 1 AS __tetra_offset__)'],
    ['SELECT a FROM t LIMIT 2 OFFSET $1 * 2', 'SELECT a FROM t LIMIT (SELECT 2 AS __tetra_limit__, $1 * 2 AS __tetra_offset__)'],
    ['SELECT a FROM t OFFSET (1) LIMIT ALL', 'SELECT a FROM t LIMIT (SELECT NULL AS __tetra_limit__, (1) AS __tetra_offset__)'],
    ['SELECT a FROM t LIMIT 1 OFFSET 2', 'SELECT a FROM t LIMIT 1 OFFSET 2'],
    // OFFSET first (the parser drops a LIMIT after it), FETCH, ROWS
    ['SELECT a FROM t OFFSET 1 LIMIT 2', 'SELECT a FROM t LIMIT (SELECT 2 AS __tetra_limit__, 1 AS __tetra_offset__)'],
    ['SELECT a FROM t OFFSET 2 ROWS FETCH NEXT ROW ONLY', 'SELECT a FROM t LIMIT (SELECT 1 AS __tetra_limit__, 2 AS __tetra_offset__)'],
    ['SELECT a FROM t FETCH FIRST $1 ROWS ONLY OFFSET 2 * 2', 'SELECT a FROM t LIMIT (SELECT $1 AS __tetra_limit__, 2 * 2 AS __tetra_offset__)'],
    // NATURAL JOIN wherever it stands
    ['SELECT * FROM t x NATURAL JOIN u', 'SELECT * FROM t x JOIN u USING (__tetra_natural__)'],
    ['SELECT * FROM t NATURAL LEFT OUTER JOIN u AS y (a, b) WHERE true', 'SELECT * FROM t LEFT OUTER JOIN u AS y (a, b) USING (__tetra_natural__) WHERE true'],
    ['SELECT * FROM t AS x NATURAL JOIN (SELECT 1 AS a) s, v', 'SELECT * FROM t AS x JOIN (SELECT 1 AS a) s USING (__tetra_natural__), v'],
    // $n::type
    ['INSERT INTO t VALUES ($1::int, $2::numeric(10,2))', 'INSERT INTO t VALUES (($1)::int, ($2)::numeric(10,2))'],
    ['SELECT 1 + $1::int', 'SELECT 1 + ($1)::int'],
    // type 'string': a cast of the string (date, timestamp and interval ones are the parser's)
    ["SELECT numeric '2', double precision '1.5' * 2", "SELECT CAST('2' AS numeric), CAST('1.5' AS double precision) * 2"],
    ["SELECT varchar(2) 'abc' || timestamp with time zone '2020-01-01'", "SELECT CAST('abc' AS varchar(2)) || CAST('2020-01-01' AS timestamp with time zone)"],
    ["SELECT int '2' ^ 2, date '2020-01-01'", "SELECT __tetra_power__((CAST('2' AS int)), (2)), date '2020-01-01'"],
    // a column named like a type, a qualified or cast type: left alone
    // dec is decimal where a cast's type is read; a name elsewhere. timestamp(p) '...' is a cast; timestamp '...' the parser reads.
    ["SELECT dec '1', dec::dec, CAST(dec AS dec(5, 2)), (SELECT 1 AS dec) FROM t", "SELECT CAST('1' AS decimal), dec::decimal, CAST(dec AS decimal(5, 2)), (SELECT 1 AS dec) FROM t"],
    ["SELECT timestamp(3) '2020-01-01', timestamp (2) with time zone 'x', timestamp 'y'", "SELECT CAST('2020-01-01' AS timestamp(3)), CAST('x' AS timestamp (2) with time zone), timestamp 'y'"],
    // A scalar subquery with a wide select list (`*`, several items) becomes the marked query.
    ['SELECT (SELECT * FROM t), (SELECT t.* FROM t) + 1', 'SELECT (SELECT __tetra_query__ FROM (SELECT * FROM t) AS __tetra_query__), (SELECT __tetra_query__ FROM (SELECT t.* FROM t) AS __tetra_query__) + 1'],
    ['SELECT CASE WHEN true THEN (SELECT a, b FROM t) END', 'SELECT CASE WHEN true THEN (SELECT __tetra_query__ FROM (SELECT a, b FROM t) AS __tetra_query__) END'],
    ['SELECT (SELECT 2 * 3 FROM t), (SELECT f(a, b) FROM t)', 'SELECT (SELECT 2 * 3 FROM t), (SELECT f(a, b) FROM t)'],
    ['SELECT * FROM (SELECT * FROM t) s WHERE a IN (SELECT * FROM u) AND EXISTS (SELECT *, 1 FROM u)', 'SELECT * FROM (SELECT * FROM t) s WHERE a IN (SELECT * FROM u) AND EXISTS (SELECT *, 1 FROM u)'],
    ['WITH RECURSIVE w (i, a) AS (SELECT 1, 2 UNION ALL SELECT i + 1, a FROM w WHERE i < 3) SELECT * FROM w', 'WITH RECURSIVE w (i, a) AS (SELECT 1, 2 UNION ALL SELECT i + 1, a FROM w WHERE i < 3) SELECT * FROM w'],
    ["SELECT int, t.text FROM t WHERE text = 'a'", "SELECT int, t.text FROM t WHERE text = 'a'"],
    // character(n) is char(n) (the parser reads it as varchar(n)), bpchar char(<unbounded>), char varying varchar
    ["SELECT x::character(3), CAST(x AS character), character(2) 'ab', x::character varying(2)", "SELECT x::char(3), CAST(x AS char), CAST('ab' AS char(2)), x::character varying(2)"],
    ["SELECT x::bpchar, bpchar 'a', x::bpchar(4), x::char varying(2), character, t.bpchar FROM t", "SELECT x::char(10485761), CAST('a' AS char(10485761)), x::char(4), x::varchar(2), character, t.bpchar FROM t"],
    ['CREATE TABLE t (character character(2), bpchar bpchar, c char varying)', 'CREATE TABLE t (character char(2), bpchar char(10485761), c varchar)'],
    ['ALTER TABLE t ADD COLUMN c character(2)', 'ALTER TABLE t ADD COLUMN c char(2)'],
    ['ALTER TABLE t ADD c bpchar NOT NULL', 'ALTER TABLE t ADD c char(10485761) NOT NULL'],
    // bit strings: B'...' / X'...' literals, varbit, and the bitwise operators at the level of ||
    ["SELECT B'0101', x'1F', t.b 'x', x::varbit(3) FROM t", "SELECT __tetra_bit_literal__('b0101'), __tetra_bit_literal__('x1F'), t.b 'x', x::bit varying(3) FROM t"],
    ['SELECT a & b | c, 1 + 2 << 1 = 6, ~a # b', "SELECT __tetra_bit_operator__('|', (__tetra_bit_operator__('&', (a), (b))), (c)), __tetra_bit_operator__('<<', (1 + 2), (1)) = 6, __tetra_bit_operator__('#', (__tetra_bit_operator__('~', (a))), (b))"],
    ["SELECT j #>> '{a}', a ~ b, a <> b, a >= b FROM t", "SELECT j #>> '{a}', a ~ b, a <> b, a >= b FROM t"],
    // COLLATE: above binary operators, below unary minus, :: and subscripts; in PARTITION BY the
    // parser reads a column's (and the planner makes it the same call)
    ['SELECT \'a\' COLLATE "C" || b COLLATE "POSIX", -x COLLATE "C", x::text COLLATE pg_catalog."C"', 'SELECT __tetra_collate__((\'a\'), "C") || __tetra_collate__((b), "POSIX"), __tetra_collate__((-x), "C"), __tetra_collate__((x::text), pg_catalog."C")'],
    ['SELECT lower(s) COLLATE "C" FROM t ORDER BY t.s COLLATE "C", (s) COLLATE ucs_basic', 'SELECT __tetra_collate__((lower(s)), "C") FROM t ORDER BY __tetra_collate__((t.s), "C"), __tetra_collate__(((s)), ucs_basic)'],
    ['SELECT s COLLATE "C" COLLATE "POSIX", 2 ^ s COLLATE "C" FROM t', 'SELECT __tetra_collate__((__tetra_collate__((s), "C")), "POSIX"), __tetra_power__((2), (__tetra_collate__((s), "C"))) FROM t'],
    ['SELECT rank() OVER (PARTITION BY a COLLATE "C", t.b COLLATE "POSIX" ORDER BY c COLLATE "C") FROM t', 'SELECT rank() OVER (PARTITION BY a COLLATE "C", t.b COLLATE "POSIX" ORDER BY __tetra_collate__((c), "C")) FROM t'],
    // a column's and an index element's COLLATE are the parser's; inside CHECK (...) it is an expression's
    ['CREATE TABLE t (s text COLLATE "C" DEFAULT \'a\' COLLATE "POSIX", CHECK (\'b\' COLLATE "C" > s))', 'CREATE TABLE t (s text COLLATE "C" DEFAULT \'a\' COLLATE "POSIX", CHECK (__tetra_collate__((\'b\'), "C") > s))'],
    ['ALTER TABLE t ADD COLUMN s text COLLATE "C"', 'ALTER TABLE t ADD COLUMN s text COLLATE "C"'],
    ['CREATE INDEX i ON t (s COLLATE "C") WHERE \'x\' COLLATE "C" < s', 'CREATE INDEX i ON t (s COLLATE "C") WHERE __tetra_collate__((\'x\'), "C") < s'],
    ['SELECT \'COLLATE "C"\', "collate" FROM t -- x COLLATE "C"', 'SELECT \'COLLATE "C"\', "collate" FROM t -- x COLLATE "C"'],
    // GENERATED ALWAYS AS (expr) STORED and AS IDENTITY: marker defaults the planner reads
    ['CREATE TABLE t (v int, w int GENERATED ALWAYS AS (v * 2) STORED NOT NULL)', 'CREATE TABLE t (v int, w int DEFAULT __tetra_generated__((v * 2)) NOT NULL)'],
    ['CREATE TABLE t (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v int)', 'CREATE TABLE t (id int DEFAULT __tetra_identity_always__() PRIMARY KEY, v int)'],
    ['ALTER TABLE t ADD COLUMN w int GENERATED ALWAYS AS (v) STORED', 'ALTER TABLE t ADD COLUMN w int DEFAULT __tetra_generated__((v))'],
    // OVERRIDING ... VALUE: a PARTITION list of one marker, before the column list
    ['INSERT INTO t (a, b) OVERRIDING SYSTEM VALUE VALUES (1, 2)', 'INSERT INTO t PARTITION (__tetra_overriding_system__) (a, b) VALUES (1, 2)'],
    ['INSERT INTO t OVERRIDING USER VALUE SELECT 1, 2 RETURNING a', 'INSERT INTO t PARTITION (__tetra_overriding_user__) (SELECT 1, 2) RETURNING a'],
    // ALTER TABLE ... DROP CONSTRAINT [IF EXISTS] c [CASCADE | RESTRICT]; a constraint's quoted name
    ['ALTER TABLE t DROP CONSTRAINT IF EXISTS c CASCADE, DROP CONSTRAINT d RESTRICT', 'ALTER TABLE t DROP CONSTRAINT "__tetra_if_exists__:__tetra_cascade__:c", DROP CONSTRAINT d'],
    ['ALTER TABLE ONLY t DROP CONSTRAINT IF EXISTS "C"', 'ALTER TABLE ONLY t DROP CONSTRAINT "__tetra_if_exists__:__tetra_quoted__:C"'],
    ['ALTER TABLE t ADD CONSTRAINT "T_pkey" PRIMARY KEY (id)', 'ALTER TABLE t ADD CONSTRAINT "__tetra_quoted__:T_pkey" PRIMARY KEY (id)'],
  ])('%s', (sql, expected) => {
    expect(text(sql)).toBe(expected);
  });

  it.each([
    ['UPDATE t SET (a, b) = (1, 2, 3)', '42601'],
    ['UPDATE t SET (a, b) = ROW(1)', '42601'],
    ['UPDATE t SET (a, b) = (1)', '0A000'],
    ['UPDATE t SET (a) = (1)', '0A000'],
    ['SELECT a FROM t OFFSET 1 + 1 ROWS', '42601'],
    // past PostgreSQL's longest character(n); the length standing for bpchar is never a written one
    ["SELECT 'a'::char(10485761)", '22023'],
    ['CREATE TABLE t (c character(10485761))', '22023'],
    // a collation's name of three parts is a cross-database reference, of four a bad name
    ['SELECT s COLLATE a.b.c FROM t', '0A000'],
    ["SELECT 'x' COLLATE a.b.c.d", '42601'],
    ['CREATE TABLE t (id int GENERATED ALWAYS AS IDENTITY NULL)', '42601'],
    ['CREATE TABLE t (id int GENERATED ALWAYS AS IDENTITY GENERATED BY DEFAULT AS IDENTITY)', '42601'],
    ['CREATE TABLE t (v int, w int GENERATED ALWAYS AS (v))', '42601'],
    ['CREATE TABLE t (v int, w int GENERATED ALWAYS AS (v) VIRTUAL)', '42601'],
    ['CREATE TABLE t (v int, w int GENERATED BY DEFAULT AS (v) STORED)', '42601'],
    ['CREATE TABLE t (v int DEFAULT 1 DEFAULT 2)', '42601'],
    ['CREATE TABLE t (v int, w int DEFAULT 1 GENERATED ALWAYS AS (v) STORED)', '42601'],
  ])('refuses %s with %s', (sql, sqlstate) => {
    expect(() => prepareStatements(sql)).toThrow(expect.objectContaining({ code: 'SQL_ERROR', details: expect.objectContaining({ sqlstate }) }));
  });
});
