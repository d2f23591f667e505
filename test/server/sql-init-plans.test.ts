// A statement whose uncorrelated subquery takes seconds (a triple cross join) must not hold the
// server: the subquery runs before the statement's rows, in slices (engine/sql/exec/init-plans.ts),
// so another tenant's requests are answered meanwhile. The server runs in this process, so a
// timer here also shows whether the event loop turned while the statement ran. Only orderings
// are asserted, never durations.
import { beforeAll, describe, expect, it } from 'vitest';
import { http, serverForFile, signup } from '../helpers/server.js';

// Generous: the statements run to their end, a few seconds each on a slow machine.
const file = serverForFile({ sqlTimeLimitMs: 600_000 });
let otherKey = '';

/** Rows of t: the triple cross join below counts ROWS ** 3 rows. */
const ROWS = 160;
const COUNT = ROWS ** 3;
const SLOW = '(SELECT count(*) FROM t a, t b, t c)';

const sql = (json: unknown, apiKey = file.apiKey) => http(file.server.url, 'POST', '/api/sql/query', { json, apiKey });

beforeAll(async () => {
  const res = await sql({ sql: `CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t SELECT g, g FROM generate_series(1, ${ROWS}) g; CREATE TABLE sink (id int, n bigint)` });
  expect(res.status, res.text).toBe(200);
  ({ apiKey: otherKey } = await signup(file.server.url, 'other'));
  // The other tenant's store is opened (and a key written) here, not during the race below.
  const put = await http(file.server.url, 'PUT', '/api/kv/before', { json: { value: 'b' }, apiKey: otherKey });
  expect(put.status, put.text).toBe(200);
}, 60_000);

/**
 * Sends `body`, and once it is on its way another tenant's health check and KV read: they must
 * complete before the slow statement does, and a 10 ms timer must keep firing meanwhile. The other
 * tenant also writes a key meanwhile, which must succeed; its answer waits for an fsync, whose
 * time is the disk's (seconds at times when other test files fsync too), so it is not raced.
 */
async function otherTenantServedDuring(body: unknown): Promise<any> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const order: string[] = [];
  try {
    const slow = sql(body).then((res) => {
      order.push('slow statement');
      return res;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const others = (async () => {
      const health = await http(file.server.url, 'GET', '/api/health', { apiKey: otherKey });
      expect(health.status, health.text).toBe(200);
      const get = await http(file.server.url, 'GET', '/api/kv/before', { apiKey: otherKey });
      expect(get.status, get.text).toBe(200);
      expect(get.body.value).toBe('b');
      order.push('other tenant');
    })();
    const write = http(file.server.url, 'PUT', '/api/kv/during', { json: { value: 'x' }, apiKey: otherKey });
    const [res, , put] = await Promise.all([slow, others, write]);
    expect(put.status, put.text).toBe(200);
    expect(order).toEqual(['other tenant', 'slow statement']);
    // Blocked, the loop would have fired the timer about once (when the statement ended).
    expect(ticks).toBeGreaterThan(5);
    expect(res.status, res.text).toBe(200);
    return res.body;
  } finally {
    clearInterval(timer);
  }
}

describe('a slow uncorrelated subquery does not hold the server', () => {
  it('in a SELECT list', async () => {
    const body = await otherTenantServedDuring({ sql: `SELECT ${SLOW} AS n` });
    expect(body.rows).toEqual([{ n: COUNT }]);
  });

  it('in a WHERE', async () => {
    const body = await otherTenantServedDuring({ sql: `SELECT id FROM t WHERE id * ${ROWS * ROWS} = ${SLOW}` });
    expect(body.rows).toEqual([{ id: ROWS }]);
  });

  it("in UPDATE's SET", async () => {
    const body = await otherTenantServedDuring({ sql: `UPDATE t SET v = ${SLOW} WHERE id = 1 RETURNING v` });
    expect(body.rows).toEqual([{ v: COUNT }]);
  });

  it("in DELETE's WHERE", async () => {
    const body = await otherTenantServedDuring({ sql: `DELETE FROM t WHERE id = ${SLOW} RETURNING id` });
    expect(body.rowCount).toBe(0);
  });

  it('in INSERT ... VALUES', async () => {
    const body = await otherTenantServedDuring({ sql: `INSERT INTO sink VALUES (1, ${SLOW}) RETURNING n` });
    expect(body.rows).toEqual([{ n: COUNT }]);
  });

  it('in INSERT ... SELECT', async () => {
    const body = await otherTenantServedDuring({ sql: `INSERT INTO sink SELECT 2, ${SLOW} RETURNING n` });
    expect(body.rows).toEqual([{ n: COUNT }]);
  });

  // Not subqueries of expressions: inputs the statement read without passing on their pauses.
  it('in a derived table of UPDATE ... FROM', async () => {
    const body = await otherTenantServedDuring({ sql: `UPDATE t SET v = s.n FROM (SELECT count(*) AS n FROM t a, t b, t c) s WHERE t.id = 2 RETURNING t.v` });
    expect(body.rows).toEqual([{ v: COUNT }]);
  });

  it('in a derived table of DELETE ... USING', async () => {
    const body = await otherTenantServedDuring({ sql: `DELETE FROM t USING (SELECT count(*) AS n FROM t a, t b, t c) s WHERE t.id = s.n RETURNING t.id` });
    expect(body.rowCount).toBe(0);
  });

  it('in the first term of WITH RECURSIVE', async () => {
    const body = await otherTenantServedDuring({ sql: `WITH RECURSIVE r(n) AS (SELECT count(*) FROM t a, t b, t c UNION ALL SELECT n + 1 FROM r WHERE n < ${COUNT + 1}) SELECT n FROM r` });
    expect(body.rows).toEqual([{ n: COUNT }, { n: COUNT + 1 }]);
  });

  it('in a statement of a transaction', async () => {
    const body = await otherTenantServedDuring({ statements: [{ sql: 'BEGIN' }, { sql: `SELECT id FROM t WHERE id * ${ROWS * ROWS} = ${SLOW}` }, { sql: 'COMMIT' }] });
    expect(body.results[1].rows).toEqual([{ id: ROWS }]);
  });

  // Correlated subqueries still run synchronously, once per outer row; the statement pauses
  // between two evaluations once its slice is used up (engine/sql/exec/runtime.ts Exec.tick).
  it('pauses between the evaluations of a correlated subquery', async () => {
    const body = await otherTenantServedDuring({ sql: 'SELECT sum((SELECT count(*) FROM t a, t b WHERE a.id > o.id - b.id)) AS s FROM t o' });
    let expected = 0;
    for (let o = 1; o <= ROWS; o++) for (let a = 1; a <= ROWS; a++) for (let b = 1; b <= ROWS; b++) if (a > o - b) expected++;
    expect(body.rows).toEqual([{ s: String(expected) }]);
  });
});

// The time limit ends a statement while its init plans run, even one no row would need (it is
// not an error of the subquery's data, kept for a first use that may never come).
const strict = serverForFile({ sqlTimeLimitMs: 300 });

describe('the statement time limit', () => {
  beforeAll(async () => {
    const res = await http(strict.server.url, 'POST', '/api/sql/query', { json: { sql: `CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t SELECT g FROM generate_series(1, ${ROWS}) g` }, apiKey: strict.apiKey });
    expect(res.status, res.text).toBe(200);
  });

  it.each([
    `SELECT CASE WHEN id < 0 THEN ${SLOW} END FROM t WHERE id = 1`,
    `UPDATE t SET id = ${SLOW} WHERE id < 0`,
  ])('ends %s in an init plan with 57014', async (text) => {
    const res = await http(strict.server.url, 'POST', '/api/sql/query', { json: { sql: text }, apiKey: strict.apiKey });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.details.sqlstate).toBe('57014');
  });
});
