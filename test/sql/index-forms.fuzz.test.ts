// Indexes on expressions and partial indexes under random writes, against PostgreSQL (PGlite):
// seeded random INSERT, UPDATE (of the indexed columns, the predicate's column and the key) and
// DELETE statements run on both, with the same outcome required (rows or error); every few
// statements, queries the indexes answer (and that tetradb's EXPLAIN shows they do) must give
// PostgreSQL's rows. A stale or missing entry shows as a wrong row, a missing row, or a unique
// violation PostgreSQL does not raise. TETRA_FUZZ_STEPS / TETRA_FUZZ_SEED lengthen or replay a run.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../helpers/random.js';
import { serverForFile } from '../helpers/server.js';
import { alikeFull, oursFull } from './pg-outcome.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

const STEPS = Number(process.env.TETRA_FUZZ_STEPS ?? 240);
const SEED = Number(process.env.TETRA_FUZZ_SEED ?? 40);

describe('indexes on expressions and partial indexes under random writes', () => {
  it(`answer as PostgreSQL after every write (${STEPS} steps, seed ${SEED})`, async () => {
    const rand = seededRandom(SEED);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const int = (n: number): number => Math.floor(rand() * n);
    const NAMES = ['Ada', 'ada', 'ADA', 'Bob', 'bob', 'Cy', 'cy', 'Dee', 'eve', 'EVE'];
    const name = (): string => (rand() < 0.1 ? 'NULL' : `'${pick(NAMES)}'`);
    const flag = (): string => pick(['true', 'false', 'NULL']);
    await alikeFull(pg, file, [
      'CREATE TABLE fz (id int PRIMARY KEY, a int, b text, live boolean, g int)',
      'CREATE INDEX fz_lower ON fz (lower(b))',
      'CREATE INDEX fz_sum ON fz ((a + g), id)',
      'CREATE INDEX fz_live_a ON fz (a) WHERE live',
      'CREATE UNIQUE INDEX fz_live_b ON fz (lower(b)) WHERE live AND a > 5',
    ]);
    const queries = (): string[] => [
      `SELECT id FROM fz WHERE lower(b) = '${pick(NAMES).toLowerCase()}' ORDER BY id`,
      `SELECT id FROM fz WHERE lower(b) IN ('ada', 'cy') ORDER BY id`,
      `SELECT id FROM fz WHERE a + g = ${int(20)} ORDER BY id`,
      `SELECT id FROM fz WHERE a + g BETWEEN ${int(10)} AND ${10 + int(10)} ORDER BY id`,
      `SELECT id FROM fz WHERE a = ${int(10)} AND live ORDER BY id`,
      `SELECT id FROM fz WHERE live AND a > 5 AND lower(b) = '${pick(NAMES).toLowerCase()}' ORDER BY id`,
      'SELECT count(*) FROM fz',
    ];
    // The plans the queries above take: each through its index.
    const plans = [
      ["SELECT id FROM fz WHERE lower(b) = 'ada'", 'fz_lower'],
      ['SELECT id FROM fz WHERE a + g = 3', 'fz_sum'],
      ['SELECT id FROM fz WHERE a = 3 AND live', 'fz_live_a'],
    ] as const;
    for (const [sql, index] of plans) {
      const out = await oursFull(file, `EXPLAIN ${sql}`);
      expect(JSON.stringify(out), sql).toContain(`Index Scan using ${index}`);
    }
    let refusedCount = 0;
    for (let step = 0; step < STEPS; step++) {
      const id = 1 + int(40);
      let sql: string;
      const r = rand();
      if (r < 0.4) sql = `INSERT INTO fz VALUES (${id}, ${int(10)}, ${name()}, ${flag()}, ${int(10)})`;
      else if (r < 0.55) sql = `UPDATE fz SET b = ${name()} WHERE id = ${id}`;
      else if (r < 0.65) sql = `UPDATE fz SET live = ${flag()}, a = ${int(10)} WHERE id = ${id}`;
      else if (r < 0.72) sql = `UPDATE fz SET g = g + 1 WHERE lower(b) = '${pick(NAMES).toLowerCase()}'`;
      else if (r < 0.78) sql = `UPDATE fz SET id = ${41 + int(40)} WHERE id = ${id}`;
      else if (r < 0.9) sql = `DELETE FROM fz WHERE id = ${id}`;
      else sql = `DELETE FROM fz WHERE a + g = ${int(20)} AND live IS NOT TRUE`;
      refusedCount += (await alikeFull(pg, file, [sql])).length;
      if (step % 4 === 3) await alikeFull(pg, file, queries());
    }
    await alikeFull(pg, file, ['SELECT * FROM fz ORDER BY id']);
    // The run met duplicates and refusals, not only quiet inserts.
    expect(refusedCount).toBeGreaterThan(5);
  }, 120_000);
});
