// A sqllogictest runner for tetradb's SQL model, checked against PostgreSQL (PGlite).
//
// FORMAT. A .slt file is a sequence of records separated by blank lines. A record ends at the
// first blank line (so SQL inside a record cannot contain one). Lines starting with `#` are
// comments when they stand outside a record (between records, or before a record's first
// line); inside a record every line is content.
//
//   statement ok
//   <SQL, one or more lines; may hold several `;`-separated statements, sent as ONE request>
//
//   statement error <SQLSTATE>
//   <SQL>                              must fail with exactly this 5-character SQLSTATE
//
//   query <types> [nosort|rowsort|valuesort] [label]
//   <SQL>
//   ----
//   <expected rows>
//
//   query error <SQLSTATE>
//   <SQL>
//
//   skipif <target>                    lines directly before a record: skip it on that target,
//   onlyif <target>                    or run it only there (targets: postgresql, tetradb)
//
//   halt                               stop the file here (honours skipif/onlyif)
//
// <types> has one letter per result column: I integer (int2/int4/int8), R float4/float8/numeric,
// T text-like (text, varchar, char(n), bytea, arrays), B boolean, D date/time/timestamp/
// interval, J json/jsonb. The column count must match, and each letter must match the column's
// reported type (so the letters assert result types, e.g. that avg(int) is numeric); types the
// runner does not know are not checked.
//
// Expected rows: one row per line, values separated by a single TAB. Values are PostgreSQL's
// text output: NULL for null, `(empty)` for the empty string, `t`/`f` for booleans, numbers as
// PostgreSQL prints them (`1.50` for numeric(10,2), `0.30000000000000004` for float8); see
// render.ts for the one place that defines rendering. A query whose result is empty may omit
// `----`. Sorting: `nosort` (default) compares rows in order, and a multi-row nosort query must
// contain ORDER BY (a cheap guard against results that depend on storage order); `rowsort`
// sorts rendered rows (expected and actual) as strings; `valuesort` sorts all values
// individually, ignoring row boundaries. A label makes every query with the same label in the
// file produce the same rows.
//
// SEMANTICS a file can rely on (both targets): one record is one request; a request with several
// statements runs them in order as one transaction (PostgreSQL's simple-query protocol does the
// same implicitly), so when one fails none of them has any effect; a record may BEGIN and COMMIT
// or ROLLBACK inside itself but must not leave a transaction open, since HTTP requests are
// stateless. A `query` reports the last statement's result.
//
// RECORD MODE (authoring only): recordSltFile rewrites every query's expected rows from a target
// (PostgreSQL is the oracle). Every recorded result must still be reviewed by a person.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { typeLetter, renderValue } from './render.js';
import { SqlStateError, TARGET_NAMES, type SltResult, type SltTarget, type TargetName } from './targets.js';

export type SortMode = 'nosort' | 'rowsort' | 'valuesort';
const SORT_MODES: readonly string[] = ['nosort', 'rowsort', 'valuesort'];
const TYPE_LETTERS = /^[IRTBDJ]+$/;
const SQLSTATE = /^[0-9A-Z]{5}$/;

export interface Condition {
  kind: 'skipif' | 'onlyif';
  target: TargetName;
}

export type Expectation =
  | { kind: 'ok' }
  | { kind: 'error'; sqlstate: string }
  | { kind: 'rows'; types: string; sort: SortMode; label: string | undefined; rows: string[] };

export type SltRecord =
  | { kind: 'statement' | 'query'; line: number; conditions: Condition[]; sql: string; expect: Expectation; resultStart: number; end: number }
  | { kind: 'halt'; line: number; conditions: Condition[] };

/** A malformed .slt file: the message names file:line. */
export class SltParseError extends Error {
  constructor(file: string, line: number, message: string) {
    super(`${file}:${line}: ${message}`);
    this.name = 'SltParseError';
  }
}

/**
 * Parses a .slt file into records; line numbers are 1-based, `resultStart`/`end` are 0-based line
 * indexes (the first line after the SQL, and one past the record's last line).
 * @throws SltParseError on a malformed record.
 */
export function parseSlt(text: string, file: string): SltRecord[] {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const records: SltRecord[] = [];
  let conditions: Condition[] = [];
  let conditionLine = 0;
  let i = 0;
  const fail = (index: number, message: string): never => {
    throw new SltParseError(file, index + 1, message);
  };
  const isBlank = (index: number) => index >= lines.length || lines[index]!.trim() === '';

  while (i < lines.length) {
    const line = lines[i]!;
    if (line.trim() === '') {
      if (conditions.length > 0) fail(conditionLine, 'skipif/onlyif must be followed directly by the record it applies to');
      i++;
      continue;
    }
    if (line.startsWith('#')) {
      i++;
      continue;
    }
    const words = line.trim().split(/\s+/);
    const head = words[0]!;
    const start = i;
    if (head === 'skipif' || head === 'onlyif') {
      const target = words[1];
      if (words.length !== 2 || !TARGET_NAMES.includes(target as TargetName)) fail(i, `expected "${head} <target>" with target one of ${TARGET_NAMES.join(', ')}`);
      if (conditions.length === 0) conditionLine = i;
      conditions.push({ kind: head, target: target as TargetName });
      i++;
      continue;
    }
    if (head === 'halt') {
      if (words.length !== 1) fail(i, 'halt takes no arguments');
      records.push({ kind: 'halt', line: i + 1, conditions });
      conditions = [];
      i++;
      continue;
    }
    if (head !== 'statement' && head !== 'query') fail(i, `unknown record type "${head}" (expected statement, query, skipif, onlyif or halt)`);

    let expect: Expectation;
    if (head === 'statement' && words[1] === 'ok' && words.length === 2) {
      expect = { kind: 'ok' };
    } else if (words[1] === 'error') {
      const sqlstate = words[2];
      if (words.length !== 3 || sqlstate === undefined || !SQLSTATE.test(sqlstate)) fail(i, `expected "${head} error <SQLSTATE>" with a 5-character SQLSTATE such as 23505`);
      expect = { kind: 'error', sqlstate: sqlstate! };
    } else if (head === 'statement') {
      return fail(i, 'expected "statement ok" or "statement error <SQLSTATE>"');
    } else {
      const [, types, sort = 'nosort', label, ...extra] = words;
      if (types === undefined || !TYPE_LETTERS.test(types)) fail(i, 'expected "query <types> [nosort|rowsort|valuesort] [label]" with types made of I R T B D J');
      if (!SORT_MODES.includes(sort)) fail(i, `unknown sort mode "${sort}" (expected nosort, rowsort or valuesort)`);
      if (extra.length > 0) fail(i, `unexpected "${extra.join(' ')}" after the label`);
      expect = { kind: 'rows', types: types!, sort: sort as SortMode, label, rows: [] };
    }

    i++;
    const sqlLines: string[] = [];
    while (!isBlank(i) && lines[i] !== '----') sqlLines.push(lines[i++]!);
    if (sqlLines.length === 0) fail(start, `${head} record without SQL`);
    const resultStart = i;
    if (lines[i] === '----') {
      if (expect.kind !== 'rows') fail(i, `"----" in a ${head === 'statement' ? 'statement' : 'query error'} record: only "query <types>" records have results`);
      i++;
      while (!isBlank(i)) (expect as { rows: string[] }).rows.push(lines[i++]!);
    }
    records.push({ kind: head as 'statement' | 'query', line: start + 1, conditions, sql: sqlLines.join('\n'), expect, resultStart, end: i });
    conditions = [];
  }
  if (conditions.length > 0) fail(conditionLine, 'skipif/onlyif at the end of the file applies to no record');
  return records;
}

export interface SltFailure {
  file: string;
  line: number;
  sql: string;
  message: string;
  /** Expected and actual rendered rows, when the failure is a result mismatch. */
  expected?: string[];
  actual?: string[];
}

export interface SltRunResult {
  failures: SltFailure[];
  executed: number;
  skipped: number;
  /** Query records' actual rendered rows (in expected-file order), by record index; for record mode. */
  actualRows: Map<number, string[]>;
}

function applies(conditions: Condition[], target: TargetName): boolean {
  return conditions.every((c) => (c.kind === 'skipif' ? c.target !== target : c.target === target));
}

function describeError(error: unknown): string {
  if (error instanceof SqlStateError) return `error ${error.sqlstate}: ${error.message}`;
  return `harness error: ${error instanceof Error ? error.message : String(error)}`;
}

/** Renders a result's rows as the lines a .slt file holds. */
export function renderRows(result: SltResult): string[] {
  return result.rows.map((row) => row.map((value, c) => renderValue(value, result.columns[c]?.type ?? 'unknown')).join('\t'));
}

function sortedForCompare(rows: string[], sort: SortMode): string[] {
  if (sort === 'rowsort') return [...rows].sort();
  if (sort === 'valuesort') return rows.flatMap((r) => r.split('\t')).sort();
  return rows;
}

/** Runs parsed records against a target and returns every failure (it does not stop at the first). */
export async function runSlt(records: SltRecord[], target: SltTarget, file: string): Promise<SltRunResult> {
  const failures: SltFailure[] = [];
  const actualRows = new Map<number, string[]>();
  const labels = new Map<string, { line: number; rows: string[] }>();
  let executed = 0;
  let skipped = 0;

  for (const [index, record] of records.entries()) {
    if (!applies(record.conditions, target.name)) {
      skipped++;
      continue;
    }
    if (record.kind === 'halt') break;
    executed++;
    const fail = (message: string, extra: Partial<SltFailure> = {}) => failures.push({ file, line: record.line, sql: record.sql, message, ...extra });
    let result: SltResult | undefined;
    let error: unknown;
    try {
      result = await target.exec(record.sql);
    } catch (e) {
      error = e;
    }
    const expect = record.expect;

    if (expect.kind === 'error') {
      if (result !== undefined) fail(`expected error ${expect.sqlstate}, but the ${record.kind} succeeded`);
      else if (!(error instanceof SqlStateError) || error.sqlstate !== expect.sqlstate) fail(`expected error ${expect.sqlstate}, got ${describeError(error)}`);
      continue;
    }
    if (result === undefined) {
      fail(`expected ${expect.kind === 'ok' ? 'success' : 'rows'}, got ${describeError(error)}`);
      continue;
    }
    if (expect.kind === 'ok') continue;

    const problems: string[] = [];
    if (result.columns.length !== expect.types.length) {
      problems.push(`expected ${expect.types.length} column(s) (${expect.types}), got ${result.columns.length}: ${result.columns.map((c) => `${c.name} ${c.type}`).join(', ')}`);
    } else {
      result.columns.forEach((column, c) => {
        const letter = typeLetter(column.type);
        if (letter !== undefined && letter !== expect.types[c]) problems.push(`column ${c + 1} (${column.name}) is ${column.type}, type letter ${letter}, declared ${expect.types[c]}`);
      });
    }
    const rendered = renderRows(result);
    actualRows.set(index, sortedForCompare(rendered, expect.sort === 'valuesort' ? 'rowsort' : expect.sort));
    if (expect.sort === 'nosort' && rendered.length > 1 && !/\border\s+by\b/i.test(record.sql)) {
      problems.push('a multi-row nosort query needs ORDER BY (or rowsort), or its row order depends on storage');
    }
    const expected = sortedForCompare(expect.rows, expect.sort);
    const actual = sortedForCompare(rendered, expect.sort);
    if (expected.join('\n') !== actual.join('\n')) problems.push('result mismatch');
    if (expect.label !== undefined) {
      const first = labels.get(expect.label);
      if (first === undefined) labels.set(expect.label, { line: record.line, rows: actual });
      else if (first.rows.join('\n') !== actual.join('\n')) problems.push(`result differs from label "${expect.label}" first seen at line ${first.line}`);
    }
    if (problems.length > 0) fail(problems.join('; '), { expected, actual });
  }
  return { failures, executed, skipped, actualRows };
}

/**
 * Reads, parses and runs one .slt file against a target.
 * @throws SltParseError when the file is malformed.
 */
export async function runSltFile(path: string, target: SltTarget): Promise<SltRunResult> {
  const file = basename(path);
  return runSlt(parseSlt(readFileSync(path, 'utf8'), file), target, file);
}

/**
 * Authoring aid: runs the file and rewrites every applicable query's expected rows with what the
 * target returned (sorted for rowsort/valuesort). Returns the failures that remain (statements,
 * errors, type letters, missing ORDER BY, labels), which recording cannot and must not fix.
 */
export async function recordSltFile(path: string, target: SltTarget): Promise<SltFailure[]> {
  const text = readFileSync(path, 'utf8');
  const file = basename(path);
  const records = parseSlt(text, file);
  const { failures, actualRows } = await runSlt(records, target, file);
  const lines = text.split('\n');
  // Bottom-up, so earlier line indexes stay valid while later records change length.
  for (const [index, record] of [...records.entries()].reverse()) {
    const rows = actualRows.get(index);
    if (rows === undefined || record.kind === 'halt') continue;
    lines.splice(record.resultStart, record.end - record.resultStart, '----', ...rows);
  }
  writeFileSync(path, lines.join('\n'));
  return failures.filter((f) => f.message !== 'result mismatch');
}

/** Line diff (longest common subsequence): ` ` both, `-` expected only, `+` actual only. */
export function diffLines(expected: string[], actual: string[]): string[] {
  const n = expected.length;
  const m = actual.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let a = n - 1; a >= 0; a--) {
    for (let b = m - 1; b >= 0; b--) lcs[a]![b] = expected[a] === actual[b] ? lcs[a + 1]![b + 1]! + 1 : Math.max(lcs[a + 1]![b]!, lcs[a]![b + 1]!);
  }
  const out: string[] = [];
  let a = 0;
  let b = 0;
  while (a < n || b < m) {
    if (a < n && b < m && expected[a] === actual[b]) {
      out.push(`  ${expected[a++]}`);
      b++;
    } else if (a < n && (b === m || lcs[a + 1]![b]! >= lcs[a]![b + 1]!)) out.push(`- ${expected[a++]}`);
    else out.push(`+ ${actual[b++]}`);
  }
  return out;
}

/** A readable report: file:line, the message, the SQL, and a diff of expected (-) and actual (+) rows. */
export function formatFailures(failures: SltFailure[]): string {
  return failures
    .map((f) => {
      const parts = [`${f.file}:${f.line}: ${f.message}`, ...f.sql.split('\n').map((l) => `    | ${l}`)];
      if (f.expected !== undefined && f.actual !== undefined) parts.push('    rows (- expected, + actual):', ...diffLines(f.expected, f.actual).map((l) => `    ${l}`));
      return parts.join('\n');
    })
    .join('\n\n');
}
