// The SQL benchmark's schema, data, statements and result checks, written once for every engine
// (bench/sql.bench.ts, bench/sql-worker.ts, bench/servers/pg-sql-server.ts's clients). Statements
// are PostgreSQL text with $1..$n; engines whose placeholder is `?` (SQLite, AlaSQL) get
// toQuestionMarks(), valid because every statement here uses its parameters once, in order.
//
// Types: `amount` is DOUBLE PRECISION, not NUMERIC(10,2): SQLite and AlaSQL have no exact decimal,
// pg-mem computes NUMERIC in floating point anyway, and PostgreSQL drivers return NUMERIC as
// strings, so every engine would add a different conversion. Amounts are whole cents (x / 100),
// so a sum over a million of them is within 1e-6 of a whole cent on every engine, and results
// compare after rounding to cents. Timestamps are written and passed as 'YYYY-MM-DD HH:MM:SS'
// text (SQLite and AlaSQL store that text, which sorts like the time it names).
import { seededRandom } from './dataset.js';

/** Customers per order: the customers table has N / CUSTOMER_RATIO rows. */
export const CUSTOMER_RATIO = 10;
export const BATCH_ROWS = 1000;
/** Seconds between consecutive orders' created_at (plus up to as many again of jitter). */
const ORDER_SPACING_S = 30;
/** Width of a range query's window: about 100 orders. */
export const RANGE_WIDTH_S = 100 * ORDER_SPACING_S;
const EPOCH_MS = Date.UTC(2024, 0, 1);
const SEED = 0x5e1_ec7;
const STATUSES = ['paid', 'paid', 'paid', 'shipped', 'shipped', 'open', 'cancelled', 'refunded'] as const;
const REGIONS = ['eu-west', 'eu-central', 'us-east', 'us-west', 'ap-south', 'ap-east', 'sa-east', 'af-south'] as const;

/** The DDL, run in this order on an empty database (PostgreSQL spelling; every engine takes it). */
export const SCHEMA: readonly string[] = [
  'CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, region TEXT NOT NULL, created DATE NOT NULL)',
  'CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, amount DOUBLE PRECISION NOT NULL, status TEXT NOT NULL, created_at TIMESTAMP NOT NULL)',
  'CREATE INDEX orders_customer ON orders(customer_id)',
  'CREATE INDEX orders_created ON orders(created_at)',
  // An index on an expression (case-insensitive lookups): tetradb, SQLite and PostgreSQL use it.
  'CREATE INDEX customers_name_lower ON customers (lower(name))',
  // A view over a join: read through it, every engine plans the join with the view's conditions and the query's.
  "CREATE VIEW paid_orders AS SELECT o.id, o.customer_id, o.amount, c.region FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.status = 'paid'",
];

export type Customer = [id: number, name: string, region: string, created: string];
export type Order = [id: number, customerId: number, amount: number, status: string, createdAt: string];

export function customerCount(orders: number): number {
  return Math.max(1, Math.floor(orders / CUSTOMER_RATIO));
}

/** 'YYYY-MM-DD HH:MM:SS' of a UTC time in ms. */
function timestampText(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

/** Customer `id` (1-based), the same on every engine. */
export function customerRow(id: number): Customer {
  const rand = seededRandom(SEED ^ (id * 2654435761));
  const region = REGIONS[Math.floor(rand() * REGIONS.length)]!;
  const created = new Date(EPOCH_MS - (1 + Math.floor(rand() * 1500)) * 86_400_000).toISOString().slice(0, 10);
  return [id, `customer ${id}`, region, created];
}

/**
 * Order `id` (1-based) of a data set whose customers number `customers`. created_at grows with
 * the id (orders arrive over time) and never repeats, so ORDER BY created_at has no ties.
 */
export function orderRow(id: number, customers: number): Order {
  const rand = seededRandom(SEED + id);
  const customerId = 1 + Math.floor(rand() * customers);
  const amount = Math.floor(rand() * 100_000) / 100;
  const status = STATUSES[Math.floor(rand() * STATUSES.length)]!;
  const createdAt = timestampText(EPOCH_MS + (id * ORDER_SPACING_S + Math.floor(rand() * ORDER_SPACING_S)) * 1000);
  return [id, customerId, amount, status, createdAt];
}

/** A multi-row INSERT of `rows` rows into `table` with `columns` columns: `($1, $2), ($3, $4)`. */
export function multiRowInsert(table: 'orders' | 'customers', rows: number): string {
  const columns = table === 'orders' ? 5 : 4;
  const tuples: string[] = [];
  for (let r = 0; r < rows; r++) tuples.push(`(${Array.from({ length: columns }, (_, c) => `$${r * columns + c + 1}`).join(', ')})`);
  return `INSERT INTO ${table} VALUES ${tuples.join(', ')}`;
}

export const INSERT_ORDER = 'INSERT INTO orders VALUES ($1, $2, $3, $4, $5)';
export const INSERT_CUSTOMER = 'INSERT INTO customers VALUES ($1, $2, $3, $4)';

/** $1..$n -> ? (every statement here uses each parameter once, in order). */
export function toQuestionMarks(sql: string): string {
  return sql.replace(/\$\d+/g, '?');
}

// ---- The measured statements ------------------------------------------------------------------

export type QueryName = 'point' | 'range' | 'group' | 'join' | 'join-agg' | 'subquery' | 'expr' | 'view' | 'view-join';

export interface QuerySpec {
  label: string;
  sql: string;
  /** The result's row order is part of the answer (ORDER BY), so checks compare in order. */
  ordered: boolean;
}

export const QUERIES: Record<QueryName, QuerySpec> = {
  point: { label: 'point select by primary key', sql: 'SELECT * FROM orders WHERE id = $1', ordered: true },
  range: { label: 'indexed range, ~100 rows', sql: 'SELECT id, amount FROM orders WHERE created_at >= $1 AND created_at < $2 ORDER BY created_at LIMIT 100', ordered: true },
  group: { label: 'group-by aggregate (full scan)', sql: 'SELECT status, count(*), sum(amount) FROM orders GROUP BY status', ordered: false },
  join: { label: 'join, one customer (~10 rows)', sql: 'SELECT c.name, o.amount FROM orders o JOIN customers c ON c.id = o.customer_id WHERE o.customer_id = $1', ordered: false },
  'join-agg': { label: 'join + group-by, all rows (hash join)', sql: 'SELECT c.region, count(*) FROM orders o JOIN customers c ON c.id = o.customer_id GROUP BY c.region', ordered: false },
  // An uncorrelated scalar subquery (PostgreSQL's InitPlan): two full scans, the first feeding the second's filter.
  subquery: { label: 'scalar subquery in WHERE (two full scans)', sql: 'SELECT count(*), sum(amount) FROM orders WHERE amount > (SELECT avg(amount) FROM orders)', ordered: false },
  expr: { label: 'lookup on an expression index, lower(name) = $1', sql: 'SELECT id, region FROM customers WHERE lower(name) = $1', ordered: false },
  view: { label: 'point select through a view (a join with a condition)', sql: 'SELECT amount, region FROM paid_orders WHERE id = $1', ordered: false },
  // The view joined to a table: the join's key has to reach the view's index (orders_customer).
  'view-join': { label: 'a table joined to the view, one customer (~3 rows)', sql: 'SELECT c.name, p.amount FROM customers c JOIN paid_orders p ON p.customer_id = c.id WHERE c.id = $1', ordered: false },
};

export const QUERY_NAMES = Object.keys(QUERIES) as QueryName[];

/**
 * The `i`-th parameters of query `name` over a data set of `orders` orders: a generator cycling
 * through a fixed random sequence, the same for every engine.
 */
export function paramsOf(name: QueryName, orders: number, count = 4096, seed = 1): (i: number) => unknown[] {
  const rand = seededRandom(SEED * 31 + seed);
  const customers = customerCount(orders);
  const picks: unknown[][] = [];
  for (let k = 0; k < count; k++) {
    switch (name) {
      case 'point':
      case 'view':
        picks.push([1 + Math.floor(rand() * orders)]);
        break;
      case 'range': {
        // Windows that lie inside the loaded orders' times, so each finds ~100 rows.
        const span = Math.max(1, orders * ORDER_SPACING_S - RANGE_WIDTH_S);
        const from = EPOCH_MS + (ORDER_SPACING_S + Math.floor(rand() * span)) * 1000;
        picks.push([timestampText(from), timestampText(from + RANGE_WIDTH_S * 1000)]);
        break;
      }
      case 'group':
      case 'join-agg':
      case 'subquery':
        picks.push([]);
        break;
      case 'join':
      case 'view-join':
        picks.push([1 + Math.floor(rand() * customers)]);
        break;
      case 'expr':
        picks.push([`customer ${1 + Math.floor(rand() * customers)}`]);
        break;
      default: {
        const never: never = name;
        throw new Error(`unknown query ${String(never)}`);
      }
    }
  }
  return (i) => picks[i % count]!;
}

// ---- Result checks ----------------------------------------------------------------------------

/** What the engines must agree on for one sample query: the row count and a checksum. */
export interface SampleCheck {
  label: string;
  rows: number;
  checksum: string;
  /** The first row, canonical, for the message when engines disagree. */
  first: string;
}

/**
 * A value as every engine should agree on it: numbers (and numeric strings) to two decimals,
 * timestamps as 'YYYY-MM-DD HH:MM:SS' whatever the driver made of them (Date, ISO text).
 */
function canonicalValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (v instanceof Date) return v.toISOString().slice(0, 19).replace('T', ' ');
  if (typeof v === 'number' || typeof v === 'bigint') return Number(v).toFixed(2);
  if (typeof v === 'string') {
    if (/^-?\d+(\.\d+)?$/.test(v)) return Number(v).toFixed(2);
    if (/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}/.test(v)) return v.slice(0, 19).replace('T', ' ');
    return v;
  }
  return JSON.stringify(v);
}

/** A row's values in column order, canonical (object rows keep their columns' order). */
export function canonicalRow(row: unknown): string {
  const values = Array.isArray(row) ? row : Object.values(row as Record<string, unknown>);
  return values.map(canonicalValue).join('|');
}

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Count and checksum of a result; unordered results are sorted first. */
export function checkOf(label: string, rows: readonly unknown[], ordered: boolean): SampleCheck {
  const lines = rows.map(canonicalRow);
  if (!ordered) lines.sort();
  let h = 0x811c9dc5;
  for (const line of lines) h = Math.imul(h ^ fnv1a(line), 0x01000193) >>> 0;
  return { label, rows: rows.length, checksum: h.toString(16).padStart(8, '0'), first: lines[0] ?? '(none)' };
}

/** The sample every engine answers before measuring: a few calls of every query. */
export function sampleQueries(orders: number): Array<{ label: string; name: QueryName; params: unknown[] }> {
  const out: Array<{ label: string; name: QueryName; params: unknown[] }> = [];
  const per: Record<QueryName, number> = { point: 8, range: 4, group: 1, join: 4, 'join-agg': 1, subquery: 1, expr: 4, view: 8, 'view-join': 4 };
  for (const name of QUERY_NAMES) {
    const params = paramsOf(name, orders, per[name], 99);
    for (let i = 0; i < per[name]; i++) out.push({ label: `${name} ${JSON.stringify(params(i))}`, name, params: params(i) });
  }
  return out;
}

/**
 * Compares an engine's sample checks with the reference's; throws naming every disagreement
 * (the benchmark must not time engines that answer differently).
 */
export function compareChecks(engine: string, checks: readonly SampleCheck[], reference: string, expected: readonly SampleCheck[]): void {
  const bad: string[] = [];
  for (const e of expected) {
    const got = checks.find((c) => c.label === e.label);
    if (got === undefined) bad.push(`${e.label}: no answer`);
    else if (got.rows !== e.rows || got.checksum !== e.checksum) bad.push(`${e.label}: ${got.rows} rows, checksum ${got.checksum}, first ${got.first} vs ${reference}'s ${e.rows} rows, ${e.checksum}, first ${e.first}`);
  }
  if (bad.length > 0) throw new Error(`results differ: ${engine} vs ${reference}:\n  ${bad.join('\n  ')}`);
}
