// One statement (or a list run as one request) on tetradb over HTTP and on PostgreSQL (PGlite), as
// comparable outcomes: the rows of each statement as PostgreSQL's text, or the SQLSTATE and
// message of the first that fails. Shared by the differential HTTP suites of this folder.
import { rmSync } from 'node:fs';
import type { PGlite } from '@electric-sql/pglite';
import { expect } from 'vitest';
import { http, signup, startServer, type FileServer } from '../helpers/server.js';
import { RAW_TEXT, renderOurs } from './sql-pg-support.js';

export type Outcome = { rows: (string | null)[][][] } | { sqlstate: string; message: string };

/** The statements on tetradb, as one request (one transaction). */
export async function oursOf(file: FileServer, statements: string[]): Promise<Outcome> {
  const res = await http(file.server.url, 'POST', '/api/sql/query', {
    json: statements.length === 1 ? { sql: statements[0], rowMode: 'array' } : { statements: statements.map((sql) => ({ sql })), rowMode: 'array' },
    apiKey: file.apiKey,
  });
  const body = res.body;
  if (res.status !== 200) return { sqlstate: body.error.details?.sqlstate ?? body.error.code, message: body.error.message };
  const results: any[] = body.results ?? [body];
  return { rows: results.map((r) => r.rows.map((row: unknown[]) => row.map((v, i) => renderOurs(v, r.columns[i].type)))) };
}

/**
 * The statements on PostgreSQL, one after the other (autocommit unless they open a transaction,
 * which a failure rolls back).
 */
export async function theirsOf(pg: PGlite, statements: string[]): Promise<Outcome> {
  const rows: (string | null)[][][] = [];
  try {
    for (const s of statements) rows.push((await pg.query(s, [], RAW_TEXT)).rows as (string | null)[][]);
    return { rows };
  } catch (err) {
    await pg.exec('ROLLBACK').catch(() => undefined);
    const e = err as { code: string; message: string };
    return { sqlstate: e.code, message: e.message };
  }
}

/** A statement's outcome with everything PostgreSQL reports: its rows, or its error with DETAIL and HINT. */
export type FullOutcome = { rows: string } | { sqlstate: string; message: string; detail?: string; hint?: string };

/** `sql` on tetradb (rows as arrays, in JSON). */
export async function oursFull(file: FileServer, sql: string): Promise<FullOutcome> {
  const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql, rowMode: 'array' }, apiKey: file.apiKey });
  const error = res.body.error as { message: string; details?: { sqlstate?: string; detail?: string; hint?: string } } | undefined;
  if (error === undefined) return { rows: JSON.stringify(res.body.rows) };
  return { sqlstate: error.details?.sqlstate ?? '', message: error.message, detail: error.details?.detail, hint: error.details?.hint };
}

/** `sql` on PostgreSQL (rows as arrays, in JSON). */
export async function theirsFull(pg: PGlite, sql: string): Promise<FullOutcome> {
  return pg.query(sql, [], { rowMode: 'array' }).then(
    (r) => ({ rows: JSON.stringify(r.rows) }),
    (err: { code: string; message: string; detail?: string; hint?: string }) => ({ sqlstate: err.code, message: err.message, detail: err.detail, hint: err.hint }),
  );
}

/**
 * Each statement on tetradb (`on`) and on PostgreSQL, in order, with the same full outcome (rows,
 * or SQLSTATE, message, DETAIL and HINT); the SQLSTATEs of the statements PostgreSQL refused.
 */
export async function alikeFull(pg: PGlite, on: FileServer, statements: string[]): Promise<string[]> {
  const refused: string[] = [];
  for (const sql of statements) {
    const theirs = await theirsFull(pg, sql);
    expect(await oursFull(on, sql), sql).toEqual(theirs);
    if ('sqlstate' in theirs) refused.push(theirs.sqlstate);
  }
  return refused;
}

/** `sql` fails on PostgreSQL, and on tetradb with the same SQLSTATE, message, DETAIL and HINT. */
export async function expectSameFailure(pg: PGlite, file: FileServer, sql: string): Promise<void> {
  const theirs = await theirsFull(pg, sql);
  expect('sqlstate' in theirs, `${sql} fails in PostgreSQL`).toBe(true);
  expect(await oursFull(file, sql), sql).toEqual(theirs);
}

/**
 * Runs `setup` on a server of its own and on `pg`, stops that server, starts another on the same
 * data directory, and hands it to `check` (the data directory is removed after).
 */
export async function afterRestart(pg: PGlite, setup: string[], check: (after: FileServer) => Promise<void>): Promise<void> {
  const first = await startServer();
  const { apiKey } = await signup(first.url);
  const before = { server: { url: first.url }, apiKey } as FileServer;
  const outcome = await oursOf(before, setup);
  if (!('rows' in outcome)) throw new Error(`setup failed: ${JSON.stringify(outcome)}`);
  for (const s of setup) await pg.exec(s);
  await first.stop({ keepData: true });
  const second = await startServer({ dataDir: first.dataDir });
  try {
    await check({ server: { url: second.url }, apiKey } as FileServer);
  } finally {
    await second.stop();
    rmSync(first.dataDir, { recursive: true, force: true });
  }
}
