// How long one evaluation of a correlated subquery holds the event loop (docs/sql.md, "Known
// differences from PostgreSQL", subqueries): an uncorrelated subquery runs before the statement's
// rows, in slices, but a correlated one runs once per outer row inside an expression's
// evaluation, which is synchronous. This measures the longest gap between turns of the event
// loop (a 1 ms timer in the same process) while statements whose correlated subquery scans a
// table without an index run, next to the same work as an uncorrelated subquery, and as a plain
// scan, which both pause.
//
//   npm --prefix bench run sql-subquery-stall-probe -- [rows=100000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { sqlExecute } from '../engine/sql/index.js';
import { PageCache, type TreeNode } from '../engine/storage/index.js';
import { TenantStore } from '../engine/tenant/index.js';

const rows = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(join(tmpdir(), 'tetra-subquery-probe-'));
const store = await TenantStore.open(dir, { cache: new PageCache<TreeNode>(256 * 1024 * 1024), fsync: 'off', checkpointIntervalMs: 0 });

async function sql(text: string): Promise<unknown[]> {
  const out = await sqlExecute(store, [{ sql: text }], { timeLimitMs: 0, maxRows: 1_000_000 });
  await out.durable;
  return out.results[0]!.rows;
}

await sql('CREATE TABLE big (id int PRIMARY KEY, k int, v int)');
for (let start = 1; start <= rows; start += 10_000) {
  await sql(`INSERT INTO big SELECT g, g % 1000, g % 97 FROM generate_series(${start}, ${Math.min(rows, start + 9_999)}) g`);
}
await sql('CREATE TABLE outer5 (id int PRIMARY KEY)');
await sql('INSERT INTO outer5 SELECT g FROM generate_series(1, 5) g');
await sql('CREATE TABLE outer50 (id int PRIMARY KEY)');
await sql('INSERT INTO outer50 SELECT g FROM generate_series(1, 50) g');

/** Runs `text` while a 1 ms timer measures the gaps between event-loop turns. */
async function probe(label: string, text: string): Promise<void> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  const t0 = performance.now();
  const result = await sql(text);
  const total = performance.now() - t0;
  clearInterval(timer);
  longest = Math.max(longest, performance.now() - last);
  console.log(`| ${label} | ${total.toFixed(0)} | ${longest.toFixed(0)} | ${String(JSON.stringify(result[0] ?? null)).slice(0, 40)} |`);
}

console.log(`big: ${rows} rows, no index on k or v; times in ms\n`);
console.log('| statement | total | longest event-loop stall | first row |');
console.log('|---|---|---|---|');
await probe('plain scan: count(*) FROM big WHERE v = 3', 'SELECT count(*) FROM big WHERE v = 3');
await probe('uncorrelated: 5 rows, (SELECT count(*) FROM big WHERE v = 3)', 'SELECT id, (SELECT count(*) FROM big WHERE v = 3) FROM outer5');
await probe('correlated: 5 rows, each (SELECT count(*) FROM big WHERE v = o.id)', 'SELECT id, (SELECT count(*) FROM big WHERE v = o.id) FROM outer5 o');
await probe('correlated: 50 rows, each (SELECT count(*) FROM big WHERE v = o.id)', 'SELECT id, (SELECT count(*) FROM big WHERE v = o.id) FROM outer50 o');
await probe('correlated: 1 row, (SELECT max(id) FROM big WHERE v = o.id)', 'SELECT id, (SELECT max(id) FROM big WHERE v = o.id) FROM outer5 o WHERE id = 1');
await probe('correlated EXISTS, no row matches (whole scan)', 'SELECT id FROM outer5 o WHERE EXISTS (SELECT 1 FROM big WHERE v = o.id + 1000)');
await probe('correlated, sorted: (SELECT id FROM big WHERE v = o.id ORDER BY k DESC LIMIT 1)', 'SELECT id, (SELECT id FROM big WHERE v = o.id ORDER BY k DESC, id LIMIT 1) FROM outer5 o WHERE id = 1');

await store.close();
rmSync(dir, { recursive: true, force: true });
