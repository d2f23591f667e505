import { describe, expect, it } from 'vitest';
import { prepareStatements } from '../../engine/sql/sql-rewrite.js';

const texts = (sql: string): string[] => prepareStatements(sql).map((p) => ('text' in p ? p.text : `AST:${String((p.ast as { type: string }).type)}`));

describe('the SQL pre-pass', () => {
  it('splits statements on top-level semicolons only', () => {
    expect(texts("SELECT 'a;b'; SELECT \"x;y\" FROM t; -- c;\nSELECT $$d;e$$ /* f; */; SELECT (1); ")).toEqual([
      "SELECT 'a;b'",
      'SELECT "x;y" FROM t',
      '-- c;\nSELECT $$d;e$$ /* f; */'.replace(/^-- c;\n/, ''),
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
    expect(texts('DELETE FROM t USING u WHERE u.id = t.id')).toEqual(['DELETE FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id)']);
    expect(texts('SELECT a + 1 IS NOT DISTINCT FROM b, c FROM t')).toEqual(['SELECT __tetra_is_not_distinct_from__((a + 1), (b)), c FROM t']);
    expect(texts("SELECT E'it\\'s\\n' AS s")).toEqual(["SELECT 'it''s\n' AS s"]);
    expect(texts('SELECT x FROM a INTERSECT ALL SELECT x FROM b')[0]).toMatch(/INTERSECT\s+SELECT '__tetra_set_all__' AS __tetra_set_all__, x FROM b/);
  });
});
