// sqllogictest files for the SQL model (test/sql/slt/*.slt), one vitest test per file and target.
// PostgreSQL (PGlite) is the oracle and tetradb runs the same files over HTTP (TETRA_SLT_TETRADB=0 skips it).
// Authoring: TETRA_SLT_RECORD=1 [TETRA_SLT_FILE=joins.slt] npx vitest run test/sql/slt.test.ts
// rewrites the expected rows from PostgreSQL; review every recorded result before committing.
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatFailures, parseSlt, recordSltFile, runSlt, runSltFile, type SltFailure } from './slt/runner.js';
import { floatText, jsonbText, renderValue } from './slt/render.js';
import { SqlStateError, openPostgresTarget, openTetradbTarget, preparePostgresTemplate, type PostgresTemplate, type SltResult, type SltTarget } from './slt/targets.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const SLT_DIR = join(dirname(fileURLToPath(import.meta.url)), 'slt');
const ONLY_FILE = process.env.TETRA_SLT_FILE;
const FILES = readdirSync(SLT_DIR)
  .filter((f) => f.endsWith('.slt') && (ONLY_FILE === undefined || f === ONLY_FILE))
  .sort();
const RECORD = process.env.TETRA_SLT_RECORD === '1';

/** A target that answers from a table: SQL text -> result or SQLSTATE error. */
function fakeTarget(answers: Record<string, SltResult | SqlStateError>): SltTarget {
  return {
    name: 'tetradb',
    exec: async (sql) => {
      const answer = answers[sql];
      if (answer === undefined) throw new Error(`fake target has no answer for ${sql}`);
      if (answer instanceof SqlStateError) throw answer;
      return answer;
    },
    close: async () => {},
  };
}

const ints = (...values: number[][]): SltResult => ({ columns: values[0]!.map((_, i) => ({ name: `c${i}`, type: 'int4' })), rows: values });

describe('slt parser', () => {
  it.each([
    ['unknown record type', 'statement ok\nSELECT 1\n\nselect 2\n', 4, /unknown record type "select"/],
    ['bad type letters', 'query X\nSELECT 1\n----\n1\n', 1, /types made of I R T B D J/],
    ['unknown sort mode', 'query I sorted\nSELECT 1\n', 1, /unknown sort mode "sorted"/],
    ['statement error without SQLSTATE', '\n\nstatement error\nSELECT 1/0\n', 3, /5-character SQLSTATE/],
    ['results after a statement', 'statement ok\nSELECT 1\n----\n1\n', 3, /only "query <types>" records have results/],
    ['record without SQL', 'query I\n\n', 1, /query record without SQL/],
    ['dangling skipif', 'skipif postgresql\n\nstatement ok\nSELECT 1\n', 1, /followed directly/],
    ['unknown target', 'onlyif sqlite\nstatement ok\nSELECT 1\n', 1, /target one of postgresql, tetradb/],
  ])('rejects %s with its line number', (_name, text, line, message) => {
    expect(() => parseSlt(text, 'bad.slt')).toThrow(message);
    expect(() => parseSlt(text, 'bad.slt')).toThrow(`bad.slt:${line}:`);
  });

  it('parses records, conditions, comments and multi-line SQL', () => {
    const records = parseSlt('# c\nskipif tetradb\nquery IT rowsort lbl\nSELECT 1,\n  2\n----\n1\tx\n\nstatement error 22012\nSELECT 1/0\n\nhalt\n', 'ok.slt');
    expect(records).toMatchObject([
      { kind: 'query', line: 3, conditions: [{ kind: 'skipif', target: 'tetradb' }], sql: 'SELECT 1,\n  2', expect: { kind: 'rows', types: 'IT', sort: 'rowsort', label: 'lbl', rows: ['1\tx'] } },
      { kind: 'statement', line: 9, sql: 'SELECT 1/0', expect: { kind: 'error', sqlstate: '22012' } },
      { kind: 'halt', line: 12 },
    ]);
  });
});

describe('slt runner', () => {
  const target = fakeTarget({
    'SELECT unordered': ints([2, 20], [1, 10]),
    'SELECT unordered ORDER BY 1': ints([2, 20], [1, 10]),
    'SELECT 1/0': new SqlStateError('22012', 'division by zero'),
    'SELECT numeric': { columns: [{ name: 'n', type: 'numeric' }], rows: [['1.50']] },
  });
  const run = async (text: string): Promise<SltFailure[]> => (await runSlt(parseSlt(text, 't.slt'), target, 't.slt')).failures;

  it('rowsort compares sorted rows, nosort compares in order', async () => {
    expect(await run('query II rowsort\nSELECT unordered\n----\n1\t10\n2\t20\n')).toEqual([]);
    const failures = await run('query II\nSELECT unordered ORDER BY 1\n----\n1\t10\n2\t20\n');
    expect(failures).toMatchObject([{ line: 1, message: 'result mismatch', expected: ['1\t10', '2\t20'], actual: ['2\t20', '1\t10'] }]);
    expect(formatFailures(failures)).toContain('t.slt:1: result mismatch');
  });

  it('fails a deliberately wrong expectation with file:line and a diff', async () => {
    const failures = await run('statement ok\nSELECT 1/0\n\nquery II rowsort\nSELECT unordered\n----\n1\t10\n2\t21\n');
    expect(failures.map((f) => [f.line, f.message])).toEqual([
      [1, 'expected success, got error 22012: division by zero'],
      [4, 'result mismatch'],
    ]);
    expect(formatFailures(failures)).toContain('t.slt:4: result mismatch\n    | SELECT unordered\n    rows (- expected, + actual):\n      1\t10\n    - 2\t21\n    + 2\t20');
  });

  it('checks SQLSTATEs, type letters, ORDER BY and labels', async () => {
    expect(await run('statement error 22012\nSELECT 1/0\n\nquery error 22012\nSELECT 1/0\n')).toEqual([]);
    expect((await run('statement error 23505\nSELECT 1/0\n'))[0]?.message).toBe('expected error 23505, got error 22012: division by zero');
    expect((await run('statement error 22012\nSELECT numeric\n'))[0]?.message).toBe('expected error 22012, but the statement succeeded');
    expect((await run('query I\nSELECT numeric\n----\n1.50\n'))[0]?.message).toBe('column 1 (n) is numeric, type letter R, declared I');
    expect((await run('query III\nSELECT numeric\n----\n1.50\n'))[0]?.message).toMatch(/^expected 3 column\(s\) \(III\), got 1/);
    expect((await run('query II\nSELECT unordered\n----\n2\t20\n1\t10\n'))[0]?.message).toMatch(/needs ORDER BY/);
    expect((await run('query II rowsort a\nSELECT unordered\n----\n1\t10\n2\t20\n\nquery R nosort a\nSELECT numeric\n----\n1.50\n'))[0]?.message).toBe(
      'result differs from label "a" first seen at line 1',
    );
  });

  it('honours skipif, onlyif and halt', async () => {
    const result = await runSlt(parseSlt('skipif tetradb\nstatement ok\nSELECT nothing\n\nonlyif postgresql\nhalt\n\nonlyif tetradb\nstatement ok\nSELECT unordered\n\nhalt\n\nstatement ok\nSELECT nothing\n', 't.slt'), target, 't.slt');
    expect(result).toMatchObject({ failures: [], executed: 1, skipped: 2 });
  });
});

describe('slt value rendering', () => {
  it.each([
    [null, 'int4', 'NULL'],
    ['', 'text', '(empty)'],
    ['a\tb\nc', 'text', 'a\\tb\\nc'],
    [true, 'bool', 't'],
    [42, 'int8', '42'],
    ['9223372036854775807', 'int8', '9223372036854775807'],
    ['1.50', 'numeric', '1.50'],
    [1e15, 'float8', '1e+15'],
    [123456789012345, 'float8', '123456789012345'],
    [0.0001, 'float8', '0.0001'],
    [0.00001, 'float8', '1e-05'],
    [0.1 + 0.2, 'double precision', '0.30000000000000004'],
    [Math.fround(0.1), 'float4', '0.1'],
    [1234567, 'real', '1.234567e+06'],
    [-0, 'float8', '-0'],
    [{ b: [1, 2], a: { c: null }, aa: 'x' }, 'jsonb', '{"a": {"c": null}, "b": [1, 2], "aa": "x"}'],
    ['x', 'jsonb', '"x"'],
    [[1, null, 3], '_int4', '{1,NULL,3}'],
    [['a b', '', 'NULL', 'c"d'], 'text[]', '{"a b","","NULL","c\\"d"}'],
  ])('renders %j of type %s as %s', (value, type, text) => {
    expect(renderValue(value, type)).toBe(text);
  });

  it('prints jsonb numbers without exponents and floats like float8out', () => {
    expect(jsonbText({ n: 1e21, m: 1e-7 })).toBe('{"m": 0.0000001, "n": 1000000000000000000000}');
    expect(floatText(-1.5e-300, 'float8')).toBe('-1.5e-300');
  });
});

describe('sqllogictest files against PostgreSQL (PGlite)', () => {
  let template: PostgresTemplate;
  beforeAll(async () => {
    template = await preparePostgresTemplate();
  });

  it('fails a wrong expectation on a real database', async () => {
    const target = await openPostgresTarget(template);
    try {
      const { failures } = await runSlt(parseSlt('query RT\nSELECT 1.50::numeric(10,2), NULL::text\n----\n1.5\tNULL\n', 'pg.slt'), target, 'pg.slt');
      expect(failures).toMatchObject([{ line: 1, message: 'result mismatch', expected: ['1.5\tNULL'], actual: ['1.50\tNULL'] }]);
    } finally {
      await target.close();
    }
  });

  for (const file of FILES) {
    it(file, async () => {
      const target = await openPostgresTarget(template);
      try {
        const path = join(SLT_DIR, file);
        if (RECORD) {
          const remaining = await recordSltFile(path, target);
          if (remaining.length > 0) expect.fail(`recorded, but:\n${formatFailures(remaining)}`);
          return;
        }
        const { failures, executed } = await runSltFile(path, target);
        if (failures.length > 0) expect.fail(`${failures.length} failing record(s)\n\n${formatFailures(failures)}`);
        expect(executed).toBeGreaterThan(0);
      } finally {
        await target.close();
      }
    });
  }
});

describe.runIf(process.env.TETRA_SLT_TETRADB !== '0')('sqllogictest files against tetradb (HTTP)', () => {
  let server: RunningServer;
  beforeAll(async () => {
    // A tenant per file: more files than the default 20 signups a minute allow from one address.
    server = await startServer({ signupRateLimit: 0 });
  });
  afterAll(() => server.stop());

  for (const file of FILES) {
    it(file, async () => {
      // One tenant per file: each file starts from an empty schema namespace.
      const target = await openTetradbTarget(server.url);
      try {
        const { failures, executed } = await runSltFile(join(SLT_DIR, file), target);
        if (failures.length > 0) expect.fail(`${failures.length} failing record(s)\n\n${formatFailures(failures)}`);
        expect(executed).toBeGreaterThan(0);
      } finally {
        await target.close();
      }
    });
  }
});
