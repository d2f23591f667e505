import type { ClientWatch } from '../interrupt.js';
import type { SqlTypeName } from './sql-types.js';

/** One statement (or several, separated by semicolons, when there are no params) to run. */
export interface SqlStatementInput {
  sql: string;
  /** $1..$n as JSON values; never interpolated into the SQL text. */
  params?: readonly unknown[];
}

/** How a request runs; every field has a default (SQL_DEFAULTS). */
export interface SqlOptions {
  /** 'object' (default): rows are {column: value}; 'array': rows are value arrays in column order. */
  rowMode?: 'object' | 'array';
  /** A statement running longer than this is cancelled (SQL_ERROR 57014); 0 disables. */
  timeLimitMs?: number;
  /** A result with more rows than this fails with SQL_ERROR 54000 asking for LIMIT. */
  maxRows?: number;
  /** A result larger than this many bytes (JSON, estimated) fails the same way. */
  maxResultBytes?: number;
  /** Rows a sort, hash join, aggregate or DISTINCT may hold in memory before failing (54000). */
  maxWorkBytes?: number;
  /** Bytes of changes one transaction may hold (they stay in memory until it commits) before failing (54000). */
  maxTxnBytes?: number;
  /** The statement clock for now()/current_timestamp (default: the real clock at the start). */
  now?: Date;
  /** The client the request runs for: once it is gone, the statement is cancelled (57014) at its next check, as PostgreSQL cancels a backend whose client left. */
  client?: ClientWatch;
}

/** An output column: its name (alias or PostgreSQL's default name) and PostgreSQL type name. */
export interface SqlColumn {
  name: string;
  type: SqlTypeName | string;
}

/** What one statement returns, as JSON would carry it. */
export interface SqlResult {
  /** SELECT, INSERT, UPDATE, DELETE, CREATE TABLE, ..., as PostgreSQL's command tag. */
  command: string;
  /** Frozen (a cached statement's calls share one list): copy it to change it. */
  columns: SqlColumn[];
  /** Objects or arrays (rowMode); int8 outside the safe range and numeric are strings. */
  rows: unknown[];
  /** Rows returned (SELECT, RETURNING) or affected (INSERT/UPDATE/DELETE without RETURNING). */
  rowCount: number;
}

/** The results of a request, and when its writes are durable (wait before answering). */
export interface SqlOutcome {
  results: SqlResult[];
  durable: Promise<void> | undefined;
}
