// The engines a .slt file runs against. Both return rows as JS values in the shape of tetradb's
// HTTP contract (see render.ts), so the runner renders them once and alike.
import { PGlite, protocol, types as pgTypes } from '@electric-sql/pglite';
import { renderValue } from './render.js';
import { http, signup } from '../../helpers/server.js';

export type TargetName = 'postgresql' | 'tetradb';
export const TARGET_NAMES: readonly TargetName[] = ['postgresql', 'tetradb'];

export interface SltColumn {
  name: string;
  type: string;
}

export interface SltResult {
  columns: SltColumn[];
  rows: unknown[][];
}

/** Runs one request (possibly several `;`-separated statements) and describes the last statement's result. */
export interface SltTarget {
  readonly name: TargetName;
  /** @throws SqlStateError when the database rejects the SQL; any other Error is a harness failure. */
  exec(sql: string): Promise<SltResult>;
  close(): Promise<void>;
}

/** A database error: the SQL was rejected with this SQLSTATE. */
export class SqlStateError extends Error {
  readonly sqlstate: string;
  constructor(sqlstate: string, message: string) {
    super(message);
    this.name = 'SqlStateError';
    this.sqlstate = sqlstate;
  }
}

// ---------------------------------------------------------------------------------------------
// postgresql: PGlite in process, spoken to over the simple-query protocol, exactly like psql.
// One request is one simple-query message, so several statements run as one implicit
// transaction (unless they BEGIN/COMMIT themselves) and every value arrives as PostgreSQL's text
// output; readyForQuery tells us the transaction state afterwards.

/** An initialised PGlite data directory; a fresh instance loads it in about a second instead of running initdb. */
export interface PostgresTemplate {
  dataDir: Blob;
}

/** Runs initdb once and keeps the data directory for openPostgresTarget. */
export async function preparePostgresTemplate(): Promise<PostgresTemplate> {
  const db = new PGlite();
  try {
    await db.waitReady;
    return { dataDir: await db.dumpDataDir('none') };
  } finally {
    await db.close();
  }
}

interface PgType {
  name: string;
  element: number;
  isArray: boolean;
}

/** A fresh PostgreSQL (PGlite) instance, from the template when one is given. */
export async function openPostgresTarget(template?: PostgresTemplate): Promise<SltTarget> {
  const db = template === undefined ? new PGlite() : new PGlite({ loadDataDir: template.dataDir });
  await db.waitReady;
  const target = new PostgresTarget(db);
  // Pinned so expected timestamptz output does not depend on the machine running the tests.
  await target.exec("SET TimeZone = 'UTC'; SET DateStyle = 'ISO, MDY'; SET IntervalStyle = 'postgres'");
  return target;
}

class PostgresTarget implements SltTarget {
  readonly name = 'postgresql';
  readonly #db: PGlite;
  #types = new Map<number, PgType>();

  constructor(db: PGlite) {
    this.#db = db;
  }

  async exec(sql: string): Promise<SltResult> {
    const { error, columns, rows, status } = await this.#simpleQuery(sql);
    if (error !== undefined) {
      // tetradb runs a request atomically, so a failed request leaves no transaction behind.
      if (status !== 'I') await this.#simpleQuery('ROLLBACK');
      throw new SqlStateError(error.code ?? 'XX000', error.message);
    }
    if (status !== 'I') {
      await this.#simpleQuery('ROLLBACK');
      throw new Error('the request left a transaction open (BEGIN without COMMIT/ROLLBACK); tetradb requests are stateless, so a record must end its own transaction');
    }
    const typed: { name: string; oid: number; type: PgType }[] = [];
    for (const c of columns) typed.push({ ...c, type: await this.#type(c.oid) });
    return {
      columns: typed.map((c) => ({ name: c.name, type: c.type.name })),
      rows: rows.map((row) => row.map((text, i) => this.#toContractValue(text, typed[i]!.oid, typed[i]!.type.name))),
    };
  }

  async close(): Promise<void> {
    await this.#db.close();
  }

  async #simpleQuery(sql: string) {
    const { messages } = await this.#db.execProtocol(protocol.serialize.query(sql), { throwOnError: false });
    // Each statement's result runs from its RowDescription (absent for commands without rows)
    // to its CommandComplete; only the last statement's result is reported.
    let current: { columns: { name: string; oid: number }[]; rows: (string | null)[][] } = { columns: [], rows: [] };
    let last = current;
    let error: InstanceType<typeof protocol.messages.DatabaseError> | undefined;
    let status = 'I';
    for (const m of messages) {
      if (m instanceof protocol.messages.RowDescriptionMessage) {
        current.columns = m.fields.map((f) => ({ name: f.name, oid: f.dataTypeID }));
      } else if (m instanceof protocol.messages.DataRowMessage) {
        current.rows.push(m.fields);
      } else if (m instanceof protocol.messages.CommandCompleteMessage) {
        last = current;
        current = { columns: [], rows: [] };
      } else if (m instanceof protocol.messages.DatabaseError) {
        error = m;
      } else if (m instanceof protocol.messages.ReadyForQueryMessage) {
        status = m.status;
      }
    }
    const { columns, rows } = last;
    return { error, columns, rows, status };
  }

  async #type(oid: number): Promise<PgType> {
    let type = this.#types.get(oid);
    if (type === undefined) {
      // Loaded lazily and reloaded on a miss, so types created by a test (enums, domains) resolve too.
      const { rows } = await this.#simpleQuery('SELECT oid, typname, typelem, typcategory FROM pg_type');
      this.#types = new Map(rows.map((r) => [Number(r[0]), { name: r[1]!, element: Number(r[2]), isArray: r[3] === 'A' }]));
      type = this.#types.get(oid) ?? { name: `oid${oid}`, element: 0, isArray: false };
    }
    return type;
  }

  /** PostgreSQL's text output -> the value tetradb's JSON contract carries for it. */
  #toContractValue(text: string | null, oid: number, typeName: string): unknown {
    if (text === null) return null;
    const value = this.#convert(text, oid);
    // The renderer must reproduce PostgreSQL's own text from the contract value, or the .slt
    // file would hold something PostgreSQL never printed. json keeps its input text verbatim,
    // which no JSON response can, so json alone is exempt (rendered in jsonb form).
    if (typeName !== 'json' && renderValue(value, typeName) !== renderValue(text, 'text')) {
      throw new Error(
        `a ${typeName} value does not survive tetradb's JSON contract: PostgreSQL prints ${JSON.stringify(text)}, the contract value renders as ${JSON.stringify(renderValue(value, typeName))}; change the query (e.g. cast to text)`,
      );
    }
    return value;
  }

  #convert(text: string, oid: number): unknown {
    const type = this.#types.get(oid);
    if (type === undefined) return text;
    if (type.isArray) {
      const element = this.#types.get(type.element);
      if (element === undefined || !['int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'bool', 'text', 'varchar', 'bpchar', 'date', 'timestamp', 'timestamptz'].includes(element.name)) return text;
      return pgTypes.arrayParser(text, (item: string) => this.#convert(item, type.element), oid);
    }
    switch (type.name) {
      case 'int2':
      case 'int4':
        return Number(text);
      case 'int8':
        return Number.isSafeInteger(Number(text)) ? Number(text) : text;
      case 'float4':
      case 'float8':
        return /^-?(NaN|Infinity)$/.test(text) ? text : Number(text);
      case 'bool':
        return text === 't';
      case 'json':
      case 'jsonb':
        return JSON.parse(text);
      default:
        // numeric, text, dates and timestamps travel as PostgreSQL's text.
        return text;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// tetradb: the real server over HTTP, one tenant per target.

/** A fresh tenant on a running tetradb server (see test/helpers/server.ts startServer). */
export async function openTetradbTarget(baseUrl: string): Promise<SltTarget> {
  const { apiKey } = await signup(baseUrl, 'slt');
  return new TetradbTarget(baseUrl, apiKey);
}

interface SqlResponse {
  columns?: SltColumn[];
  rows?: unknown[][];
  error?: { code: string; message: string; details?: { sqlstate?: string; position?: number } };
}

class TetradbTarget implements SltTarget {
  readonly name = 'tetradb';
  readonly #baseUrl: string;
  readonly #apiKey: string;

  constructor(baseUrl: string, apiKey: string) {
    this.#baseUrl = baseUrl;
    this.#apiKey = apiKey;
  }

  async exec(sql: string): Promise<SltResult> {
    const res = await http<SqlResponse>(this.#baseUrl, 'POST', '/api/sql/query', { json: { sql, rowMode: 'array' }, apiKey: this.#apiKey });
    const body = res.body;
    if (res.status === 400 && body?.error?.code === 'SQL_ERROR' && typeof body.error.details?.sqlstate === 'string') {
      const position = body.error.details.position === undefined ? '' : ` (at ${body.error.details.position})`;
      throw new SqlStateError(body.error.details.sqlstate, `${body.error.message}${position}`);
    }
    if (res.status !== 200 || body === undefined || !Array.isArray(body.columns) || !Array.isArray(body.rows)) {
      throw new Error(`POST /api/sql/query answered ${res.status}: ${res.text.slice(0, 500)}`);
    }
    return { columns: body.columns, rows: body.rows };
  }

  async close(): Promise<void> {
    // The tenant dies with the server; the suite stops the server.
  }
}
