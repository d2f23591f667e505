import { describe, expect, it } from 'vitest';
import { restoreLiterals } from '../../engine/sql/sql-literals.js';
import { prepareStatements } from '../../engine/sql/sql-rewrite.js';

const texts = (sql: string): string[] => prepareStatements(sql).map((p) => ('text' in p ? p.text : `AST:${String((p.ast as { type: string }).type)}`));

describe('the SQL pre-pass', () => {
  it('splits statements on top-level semicolons only', () => {
    expect(texts("SELECT 'a;b'; SELECT \"x;y\" FROM t; -- c;\nSELECT $$d;e$$ /* f; */; SELECT (1); ")).toEqual([
      "SELECT 'a;b'",
      'SELECT "x;y" FROM t',
      // (a dollar-quoted string becomes a plain one: the parser cannot read it)
      "SELECT 'd;e' /* f; */",
      'SELECT (1)',
    ]);
  });

  it('never rewrites inside strings, quoted identifiers or comments', () => {
    const sql = "SELECT 'x INTERSECT ALL y', \"FETCH FIRST 1 ROWS ONLY\" /* IS DISTINCT FROM */ FROM t";
    expect(texts(sql)).toEqual([sql]);
  });

  it('builds ASTs for statements the parser has no grammar for', () => {
    expect(texts('SAVEPOINT a; ROLLBACK TO SAVEPOINT a; RELEASE a; ALTER TABLE t RENAME COLUMN x TO y; INSERT INTO t DEFAULT VALUES')).toEqual([
      'AST:transaction',
      'AST:transaction',
      'AST:transaction',
      'AST:alter',
      'AST:insert',
    ]);
  });

  it('rewrites forms the parser cannot read into ones it can, keeping their meaning', () => {
    expect(texts('SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY')).toEqual(['SELECT a FROM t ORDER BY a LIMIT 3']);
    expect(texts('DELETE FROM t RETURNING id')).toEqual(['DELETE FROM t WHERE TRUE RETURNING id']);
    expect(texts('DELETE FROM t USING u WHERE u.id = t.id')).toEqual(['DELETE FROM t WHERE EXISTS (SELECT 1 AS __tetra_using__ FROM u WHERE u.id = t.id)']);
    expect(texts('SELECT a + 1 IS NOT DISTINCT FROM b, c FROM t')).toEqual(['SELECT __tetra_is_not_distinct_from__((a + 1), (b)), c FROM t']);
    expect(texts("SELECT E'it\\'s\\n' AS s")).toEqual(["SELECT 'it''s\n' AS s"]);
    expect(texts('SELECT x FROM a INTERSECT ALL SELECT x FROM b')[0]).toMatch(/INTERSECT\s+SELECT '__tetra_set_all__' AS __tetra_set_all__, x FROM b/);
  });

  it('leaves every window frame and base window name as the marker at the end of the ORDER BY list', () => {
    expect(texts('SELECT sum(x) OVER (PARTITION BY g ORDER BY x RANGE BETWEEN $1 PRECEDING AND 1 + 1 FOLLOWING EXCLUDE TIES) FROM t')).toEqual([
      "SELECT sum(x) OVER (PARTITION BY g ORDER BY x, __tetra_window__(NULL, 'range', 'preceding', ($1), 'following', (1 + 1), 'ties')) FROM t",
    ]);
    expect(texts('SELECT sum(x) OVER (w ROWS 2 PRECEDING), sum(x) OVER (w) FROM t WINDOW w AS (ORDER BY rows)')).toEqual([
      "SELECT sum(x) OVER (ORDER BY __tetra_window__('w', 'rows', 'preceding', (2), 'current row', NULL, 'no others')), sum(x) OVER (ORDER BY __tetra_window__('w', NULL, NULL, NULL, NULL, NULL, NULL)) FROM t WINDOW w AS (ORDER BY rows)",
    ]);
    // A column named rows is a column; the frame is the last ROWS the rest reads as one.
    expect(texts('SELECT sum(x) OVER (ORDER BY rows GROUPS CURRENT ROW) FROM t')).toEqual([
      "SELECT sum(x) OVER (ORDER BY rows, __tetra_window__(NULL, 'groups', 'current row', NULL, 'current row', NULL, 'no others')) FROM t",
    ]);
  });

  it('moves a WINDOW clause after the ORDER BY / LIMIT / OFFSET the parser would drop', () => {
    expect(texts('SELECT sum(x) OVER w FROM t WINDOW w AS (ORDER BY x) ORDER BY x LIMIT 2 + 1')).toEqual(['SELECT sum(x) OVER w FROM t ORDER BY x LIMIT (SELECT 2 + 1) WINDOW w AS (ORDER BY x)']);
    expect(texts('SELECT * FROM (SELECT x FROM t WINDOW w AS (ORDER BY x) OFFSET 1) s')).toEqual(['SELECT * FROM (SELECT x FROM t OFFSET 1 WINDOW w AS (ORDER BY x)) s']);
  });

  it.each([
    ['ROWS UNBOUNDED FOLLOWING', 'frame start cannot be UNBOUNDED FOLLOWING'],
    ['ROWS 1 FOLLOWING', 'frame starting from following row cannot end with current row'],
    ['ROWS BETWEEN CURRENT ROW AND UNBOUNDED PRECEDING', 'frame end cannot be UNBOUNDED PRECEDING'],
    ['RANGE BETWEEN CURRENT ROW AND 1 PRECEDING', 'frame starting from current row cannot have preceding rows'],
    ['GROUPS BETWEEN 1 FOLLOWING AND CURRENT ROW', 'frame starting from following row cannot have preceding rows'],
  ])('refuses the frame %s as PostgreSQL grammar does (42P20)', (frame, message) => {
    expect(() => prepareStatements(`SELECT sum(x) OVER (ORDER BY x ${frame}) FROM t`)).toThrow(message);
  });
});

describe('literals the parser would misread', () => {
  const one = (sql: string): { text: string; literals: Record<string, string> } => {
    const [p] = prepareStatements(sql);
    if (p === undefined || !('text' in p)) throw new Error('expected a text statement');
    return { text: p.text, literals: Object.fromEntries(p.literals ?? []) };
  };

  it.each([
    // [source, text for the parser, values put back]
    ["SELECT 'a\\nb'", "SELECT '__tetra_literal:0'", { '__tetra_literal:0': 'a\\nb' }],
    ["SELECT 'a\\', 'it''s\\'", "SELECT '__tetra_literal:0', '__tetra_literal:1'", { '__tetra_literal:0': 'a\\', '__tetra_literal:1': "it''s\\" }],
    ["SELECT E'a\\\\nb'", "SELECT '__tetra_literal:0'", { '__tetra_literal:0': 'a\\nb' }],
    ["SELECT $$it's\\$$", "SELECT '__tetra_literal:0'", { '__tetra_literal:0': "it''s\\" }],
    ["SELECT U&'d\\0061t''a'", "SELECT 'dat''a'", {}],
    // a prefix the statement already holds is lengthened until it is unique
    ["SELECT '__tetra_literal', '\\'", "SELECT '__tetra_literal', '__tetra_literal_:0'", { '__tetra_literal_:0': '\\' }],
  ])('%s', (sql, text, literals) => {
    expect(one(sql)).toEqual({ text, literals });
  });

  it.each([
    // integers beyond 2^53 and casts of signed numbers: the sign becomes a unary minus
    ['SELECT -9007199254740993, -1, 2-9007199254740993', 'SELECT - 9007199254740993, -1, 2- 9007199254740993'],
    ['SELECT -2147483648::int4, -0.0::float8, - 1::int', 'SELECT - 2147483648::int4, - 0.0::float8, - 1::int'],
    // decimals longer than a double: an exponent keeps the parser's hands off the digits
    ['SELECT 1.00000000000000000001, -0.30000000000000000001, 1.5, 1e-5', 'SELECT 1.00000000000000000001e0, -0.30000000000000000001e0, 1.5, 1e-5'],
    ['SELECT 1., 1.e5, .5', 'SELECT 1e0, 1e5, .5'],
  ])('%s', (sql, text) => {
    expect(one(sql)).toEqual({ text, literals: {} });
  });

  it('leaves statements without such literals untouched, and unterminated strings to the parser', () => {
    for (const sql of ["SELECT 'it''s', $1, 1.5, -1 FROM t", "SELECT 'a\\"]) expect(one(sql)).toEqual({ text: sql, literals: {} });
  });

  it('puts values back wherever the parser left a marker, and only exact markers', () => {
    const ast = { a: '__tetra_literal:0', b: [{ value: '__tetra_literal:1' }, 'x__tetra_literal:0'], c: null };
    restoreLiterals(ast, new Map([['__tetra_literal:0', 'a\\b'], ['__tetra_literal:1', 'c']]));
    expect(ast).toEqual({ a: 'a\\b', b: [{ value: 'c' }, 'x__tetra_literal:0'], c: null });
  });

  it.each([["SELECT U&'\\zz'"], ["SELECT U&'\\D83D'"], ["SELECT U&'\\0000'"], ["SELECT U&'!0061' UESCAPE '+'"]])('refuses the malformed Unicode string %s', (sql) => {
    expect(() => prepareStatements(sql)).toThrow(expect.objectContaining({ details: expect.objectContaining({ sqlstate: '42601' }) }));
  });

  // Found by the HTTP input fuzz: a LIMIT with nothing before its clause ends crashed the pre-pass (500).
  it.each([["SELECT 1 FROM t LIMIT ) '2024-01-01'::date"], ['SELECT $1 LIMIT LIMIT $1 1'], ['FROM t id LIMIT ) 0 / sum(v)']])('leaves the empty LIMIT of %s for the parser to refuse', (sql) => {
    expect(() => texts(sql)).not.toThrow();
  });
});
