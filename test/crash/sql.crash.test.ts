import { afterAll, describe, expect, it } from 'vitest';
import { http, signup } from '../helpers/server.js';
import { spawnServer, type ServerProcess } from '../helpers/server-process.js';
import { tempDir } from '../helpers/temp-dir.js';
import { killOnFailure } from './kill-on-failure.js';

// SQL under SIGKILL, over HTTP against the real server process: writers run multi-statement
// transactions (an insert into two tables that must appear together) and concurrent counter
// updates while the process is killed mid-load. After each restart: every acknowledged
// transaction is there, none is there in part, and every counter holds at least its acknowledged
// increments and at most the ones sent. TETRA_CRASH_CAMPAIGN=1 kills more often.
const CAMPAIGN = process.env.TETRA_CRASH_CAMPAIGN === '1';
const KILLS = Number(process.env.TETRA_SQL_CRASH_KILLS ?? (CAMPAIGN ? 15 : 2));
const WRITERS = 6;
const COUNTERS = 5;

const dir = tempDir('sql-crash');
afterAll(() => dir.remove());

describe('SQL under SIGKILL', () => {
  it(`keeps every acknowledged transaction, and no partial one, over ${KILLS} kills`, async () => {
    let apiKey = '';
    const sql = (server: ServerProcess, text: string, params?: unknown[]) => http(server.url, 'POST', '/api/sql/query', { json: { sql: text, ...(params ? { params } : {}) }, apiKey });
    /** Orders by id: true once acknowledged; sent-but-unacknowledged ones may or may not exist. */
    const orders = new Map<number, boolean>();
    const acked = new Array<number>(COUNTERS).fill(0);
    const sent = new Array<number>(COUNTERS).fill(0);
    let nextId = 1;

    let server = await spawnServer(dir.path);
    await killOnFailure(server, async () => {
      ({ apiKey } = await signup(server.url));
      const created = await sql(server, `CREATE TABLE orders (id int PRIMARY KEY, amount numeric(10,2) NOT NULL); CREATE TABLE lines (order_id int PRIMARY KEY REFERENCES orders(id), note text); CREATE TABLE counters (id int PRIMARY KEY, n int NOT NULL); INSERT INTO counters SELECT k, 0 FROM (WITH RECURSIVE s(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM s WHERE k < ${COUNTERS - 1}) SELECT k FROM s) q`);
      expect(created.status, created.text).toBe(200);
    });

    for (let kill = 0; kill <= KILLS; kill++) {
      const label = `after kill ${kill}`;
      if (kill > 0) {
        // Verify what the restarted server holds.
        await killOnFailure(server, async () => {
          const o = await sql(server, 'SELECT o.id, l.note FROM orders o LEFT JOIN lines l ON l.order_id = o.id ORDER BY o.id');
          expect(o.status, o.text).toBe(200);
          const present = new Map<number, string | null>((o.body.rows as { id: number; note: string | null }[]).map((r) => [r.id, r.note]));
          for (const [id, ack] of orders) {
            if (ack) expect(present.has(id), `${label}: acknowledged order ${id} is missing`).toBe(true);
            if (present.has(id)) expect(present.get(id), `${label}: order ${id} without its line (a partial transaction)`).toBe(`line ${id}`);
            else orders.delete(id);
          }
          for (const id of present.keys()) expect(orders.has(id), `${label}: order ${id} was never sent`).toBe(true);
          const orphan = await sql(server, 'SELECT count(*) AS n FROM lines l WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.id = l.order_id)');
          expect(orphan.body.rows, `${label}: lines without orders`).toEqual([{ n: 0 }]);
          const c = await sql(server, 'SELECT id, n FROM counters ORDER BY id');
          for (const row of c.body.rows as { id: number; n: number }[]) {
            expect(row.n, `${label}: counter ${row.id} lost acknowledged increments`).toBeGreaterThanOrEqual(acked[row.id]!);
            expect(row.n, `${label}: counter ${row.id} has increments never sent`).toBeLessThanOrEqual(sent[row.id]!);
            acked[row.id] = row.n;
            sent[row.id] = row.n;
          }
          for (const id of orders.keys()) orders.set(id, true);
        });
      }
      if (kill === KILLS) break;
      // Load, then kill mid-flight.
      let stop = false;
      const writer = async (w: number): Promise<void> => {
        while (!stop) {
          if (w % 2 === 0) {
            const id = nextId++;
            orders.set(id, false);
            const res = await sql(server, `INSERT INTO orders VALUES (${id}, ${id}.25); INSERT INTO lines VALUES (${id}, 'line ${id}')`).catch(() => undefined);
            if (res?.status === 200) orders.set(id, true);
            else if (res !== undefined) expect.fail(`order ${id}: ${res.text}`);
          } else {
            const k = (w + nextId) % COUNTERS;
            sent[k]!++;
            const res = await sql(server, 'UPDATE counters SET n = n + 1 WHERE id = $1', [k]).catch(() => undefined);
            if (res?.status === 200) acked[k]!++;
          }
        }
      };
      const running = Array.from({ length: WRITERS }, (_, w) => writer(w));
      await new Promise((r) => setTimeout(r, 600 + kill * 150));
      server.child.kill('SIGKILL');
      await server.exited;
      stop = true;
      await Promise.all(running);
      server = await spawnServer(dir.path);
    }
    expect([...orders.values()].filter(Boolean).length).toBeGreaterThan(10);
    server.child.kill('SIGKILL');
    await server.exited;
  }, 180_000);
});
