// The SQL features the main SQL benchmark's peers do not all have (SQLite, pg-mem and AlaSQL have no
// LATERAL and no arrays): LATERAL top-N per group, functions in FROM, set-returning functions in a
// select list, arrays (= ANY of a parameter, @> over a scan), enum types (an indexed equality, an
// order by declared order), tetradb against PGlite on the same
// data in the same run. Both engines in process, one after the other in this process (opened as
// bench/lib/sql-engines.ts opens them: tetradb as `npm start` opens a tenant). Answers are checked
// to be the same before anything is timed.
//
//   npm --prefix bench run sql-features -- [--orders=100000] [--seconds=2]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { closedLoop } from './lib/harness.js';
import { openSqlEngine, type SqlBenchEngine, type SqlEngineName } from './lib/sql-engines.js';
import { BATCH_ROWS, checkOf, customerCount, customerRow, orderRow, type Order } from './lib/sql-workload.js';
import { seededRandom } from './lib/dataset.js';

const arg = (name: string, fallback: number): number => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const ORDERS = arg('orders', 100_000);
const SECONDS = arg('seconds', 2);
const CUSTOMERS = customerCount(ORDERS);
const TAGGED = CUSTOMERS;
const TAGS = ['red', 'green', 'blue', 'cyan', 'gold', 'gray', 'pink', 'teal'];
/** The enum's labels, declared out of alphabetical order: ORDER BY must follow the declaration. */
const TIERS = ['free', 'pro', 'basic', 'enterprise'];

interface Op {
  name: string;
  sql: string;
  params: (i: number) => unknown[];
}

const rand = seededRandom(42);
const starts = Array.from({ length: 4096 }, () => 1 + Math.floor(rand() * (CUSTOMERS - 120)));
const OPS: Op[] = [
  {
    name: 'LATERAL: top 3 orders of each of 10 customers',
    sql: 'SELECT c.id, t.amount FROM customers c, LATERAL (SELECT o.amount FROM orders o WHERE o.customer_id = c.id ORDER BY o.amount DESC, o.id LIMIT 3) t WHERE c.id BETWEEN $1 AND $2',
    params: (i) => [starts[i % 4096]!, starts[i % 4096]! + 9],
  },
  {
    name: 'unnest(tags) in FROM over 100 rows',
    sql: 'SELECT t.id, u.tag FROM tagged t, unnest(t.tags) AS u(tag) WHERE t.id BETWEEN $1 AND $2',
    params: (i) => [starts[i % 4096]!, starts[i % 4096]! + 99],
  },
  {
    name: 'unnest(tags) in a select list over 100 rows',
    sql: 'SELECT id, unnest(tags) FROM tagged WHERE id BETWEEN $1 AND $2',
    params: (i) => [starts[i % 4096]!, starts[i % 4096]! + 99],
  },
  {
    name: "jsonb_array_elements(doc->'items') over 100 rows",
    sql: "SELECT t.id, e.value FROM tagged t, jsonb_array_elements(t.doc->'items') e WHERE t.id BETWEEN $1 AND $2",
    params: (i) => [starts[i % 4096]!, starts[i % 4096]! + 99],
  },
  {
    name: 'id = ANY($1), 10 ids in an array parameter',
    sql: 'SELECT id, tags FROM tagged WHERE id = ANY($1)',
    params: (i) => [Array.from({ length: 10 }, (_, k) => starts[(i + k * 7) % 4096]!)],
  },
  {
    name: 'enum: tier = $1 (indexed), count',
    sql: 'SELECT count(*) FROM tagged WHERE tier = $1',
    params: (i) => [TIERS[i % TIERS.length]!],
  },
  {
    name: 'enum: 100 rows ORDER BY tier (declared order), id',
    sql: 'SELECT id, tier FROM tagged WHERE id BETWEEN $1 AND $2 ORDER BY tier, id',
    params: (i) => [starts[i % 4096]!, starts[i % 4096]! + 99],
  },
  {
    name: `tags @> ARRAY[$1] (a scan of ${TAGGED.toLocaleString('en')} rows)`,
    sql: 'SELECT count(*) FROM tagged WHERE tags @> ARRAY[$1]::text[]',
    params: (i) => [TAGS[i % TAGS.length]!],
  },
];

function taggedRow(id: number): [number, string[], { items: number[] }, string] {
  const r = seededRandom(id * 7919);
  const tags = TAGS.filter(() => r() < 0.3);
  const items = Array.from({ length: 1 + Math.floor(r() * 5) }, () => Math.floor(r() * 1000));
  return [id, tags, { items }, TIERS[Math.floor(r() * TIERS.length)]!];
}

async function load(engine: SqlBenchEngine): Promise<void> {
  // openSqlEngine made the main benchmark's schema (lib/sql-workload.ts SCHEMA); the arrays' table is this one's.
  await engine.query(`CREATE TYPE tier AS ENUM (${TIERS.map((t) => `'${t}'`).join(', ')})`, []);
  await engine.query('CREATE TABLE tagged (id INTEGER PRIMARY KEY, tags TEXT[] NOT NULL, doc JSONB NOT NULL, tier tier NOT NULL)', []);
  await engine.query('CREATE INDEX tagged_tier ON tagged (tier)', []);
  for (let from = 1; from <= CUSTOMERS; from += BATCH_ROWS) {
    const rows = [];
    for (let id = from; id < Math.min(CUSTOMERS + 1, from + BATCH_ROWS); id++) rows.push(customerRow(id));
    await engine.insertBatch('customers', rows);
  }
  for (let from = 1; from <= ORDERS; from += BATCH_ROWS) {
    const rows: Order[] = [];
    for (let id = from; id < Math.min(ORDERS + 1, from + BATCH_ROWS); id++) rows.push(orderRow(id, CUSTOMERS));
    await engine.insertBatch('orders', rows);
  }
  for (let from = 1; from <= TAGGED; from += 500) {
    const rows = [];
    for (let id = from; id < Math.min(TAGGED + 1, from + 500); id++) rows.push(taggedRow(id));
    const values = rows.map((_, k) => `($${k * 4 + 1}, $${k * 4 + 2}, $${k * 4 + 3}, $${k * 4 + 4})`).join(', ');
    await engine.query(`INSERT INTO tagged VALUES ${values}`, rows.flatMap(([id, tags, doc, tier]) => [id, tags, engine.name === 'tetradb' ? doc : JSON.stringify(doc), tier]));
  }
  await engine.settle();
}

interface Row {
  op: string;
  engine: SqlEngineName;
  hz: number;
  p50Us: number;
  p99Us: number;
  rssMiB: number;
}

async function runEngine(name: SqlEngineName): Promise<{ rows: Row[]; checks: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), `tetradb-sqlfeat-${name}-`));
  const engine = await openSqlEngine(name, dir, 64 * 2 ** 20);
  try {
    await load(engine);
    const checks: string[] = [];
    for (const op of OPS) for (let i = 0; i < 4; i++) checks.push(`${op.name} #${i}: ${JSON.stringify(checkOf(op.name, await engine.query(op.sql, op.params(i)), false))}`);
    const rows: Row[] = [];
    for (const op of OPS) {
      const run = (seq: number): unknown => engine.query(op.sql, op.params(seq));
      await closedLoop({ workers: 1, seconds: SECONDS / 4, maxOps: 1_000_000 }, run);
      const r = await closedLoop({ workers: 1, seconds: SECONDS, maxOps: 1_000_000 }, run);
      rows.push({ op: op.name, engine: name, hz: r.hz, p50Us: r.p50Us, p99Us: r.p99Us, rssMiB: process.memoryUsage().rss / 2 ** 20 });
    }
    return { rows, checks };
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

const fmt = (us: number): string => (us >= 1000 ? `${(us / 1000).toFixed(2)} ms` : `${us.toFixed(1)} µs`);

const tetra = await runEngine('tetradb');
const pglite = await runEngine('pglite');
const differ = tetra.checks.filter((c, i) => c.replace(/"first":"[^"]*",?/, '') !== pglite.checks[i]!.replace(/"first":"[^"]*",?/, ''));
if (differ.length > 0) throw new Error(`tetradb and PGlite answer differently:\n  ${differ.join('\n  ')}\n  vs\n  ${pglite.checks.filter((_, i) => differ.includes(tetra.checks[i]!)).join('\n  ')}`);
console.log(`\n## SQL features, ${ORDERS.toLocaleString('en')} orders, ${CUSTOMERS.toLocaleString('en')} customers and tagged rows (answers checked equal)\n`);
console.log('| operation | engine | ops/s | tetradb / engine | p50 | p99 | process RSS MiB |');
console.log('|---|---|---:|---:|---:|---:|---:|');
for (const op of OPS) {
  const t = tetra.rows.find((r) => r.op === op.name)!;
  for (const r of [t, pglite.rows.find((x) => x.op === op.name)!]) {
    console.log(`| ${op.name} | ${r.engine} | ${Math.round(r.hz).toLocaleString('en')} | ${(t.hz / r.hz).toFixed(2)}x | ${fmt(r.p50Us)} | ${fmt(r.p99Us)} | ${Math.round(r.rssMiB)} |`);
  }
}
