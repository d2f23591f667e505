// One statement (or a list run as one request) on tetradb over HTTP and on PostgreSQL (PGlite), as
// comparable outcomes: the rows of each statement as PostgreSQL's text, or the SQLSTATE and
// message of the first that fails. Shared by the differential HTTP suites of this folder.
import type { PGlite } from '@electric-sql/pglite';
import { http, type FileServer } from '../helpers/server.js';
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
