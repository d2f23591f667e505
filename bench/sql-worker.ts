// One SQL engine at one data size, in a process of its own (forked by sql.bench.ts), so its RSS
// and garbage are its own: create the schema, load N orders and N/10 customers in batches of 1000,
// settle (ANALYZE where the engine has one), answer the sample queries (checked against the other
// engines by the parent), then time each query, batch inserts and durable single-row inserts.
// Memory is sampled every 250 ms throughout (no forced GC). Sends one SqlWorkerResult over IPC;
// an engine that cannot open or load in time sends its reason instead, never a partial table.
import { performance } from 'node:perf_hooks';
import { closedLoop, type LoopResult } from './lib/harness.js';
import { openSqlEngine, type SqlBenchEngine, type SqlEngineName } from './lib/sql-engines.js';
import { BATCH_ROWS, checkOf, customerCount, customerRow, orderRow, paramsOf, QUERIES, QUERY_NAMES, sampleQueries, type Order, type QueryName, type SampleCheck } from './lib/sql-workload.js';
import { startSampler } from './lib/sampler.js';
import { workerMain } from './lib/worker-main.js';
import { applyHeapGrowth, loadConfig } from '../server/config.js';

export interface SqlTask {
  engine: SqlEngineName;
  dir: string;
  orders: number;
  /** Time per measured operation (after a warm-up of a quarter of it). */
  seconds: number;
  /** The load gives up after this long (the engine is then reported as skipped, with why). */
  maxLoadSeconds: number;
  cacheBytes: number;
  /** Concurrent writers for the durable single-row insert rows. */
  writers: number[];
}

export type OpName = QueryName | 'batch' | `insert-${number}`;

export interface OpResult {
  op: OpName;
  /** Operations per second (a batch is one operation of 1000 rows). */
  hz: number;
  p50Us: number;
  p99Us: number;
  ops: number;
}

export type SqlWorkerResult =
  | {
      ok: true;
      engine: SqlEngineName;
      orders: number;
      loadSeconds: number;
      openMs: number;
      checks: SampleCheck[];
      ops: OpResult[];
      /** After the load: RSS and V8 heap, MiB. */
      loadedRssMiB: number;
      loadedHeapMiB: number;
      /** Peaks over the whole run (load, queries, inserts), sampled every 250 ms. */
      peakRssMiB: number;
      peakHeapMiB: number;
    }
  | { ok: false; engine: SqlEngineName; orders: number; reason: string };

const MiB = 2 ** 20;

async function load(engine: SqlBenchEngine, orders: number, deadline: number): Promise<void> {
  const customers = customerCount(orders);
  for (let from = 1; from <= customers; from += BATCH_ROWS) {
    const rows = [];
    for (let id = from; id < Math.min(customers + 1, from + BATCH_ROWS); id++) rows.push(customerRow(id));
    await engine.insertBatch('customers', rows);
  }
  for (let from = 1; from <= orders; from += BATCH_ROWS) {
    if (performance.now() > deadline) throw new Error(`load not done after its time limit: ${from - 1} of ${orders} orders loaded`);
    const rows: Order[] = [];
    for (let id = from; id < Math.min(orders + 1, from + BATCH_ROWS); id++) rows.push(orderRow(id, customers));
    await engine.insertBatch('orders', rows);
  }
}

async function measure(task: SqlTask, engine: SqlBenchEngine, op: OpName, run: (seq: number) => unknown): Promise<OpResult> {
  const timed = (seconds: number, warmupOps = 0): Promise<LoopResult> => closedLoop({ workers: 1, seconds, maxOps: 1_000_000, warmupOps }, run);
  await timed(task.seconds / 4);
  const r = await timed(task.seconds);
  return { op, hz: r.hz, p50Us: r.p50Us, p99Us: r.p99Us, ops: r.ops };
}

async function runTask(task: SqlTask): Promise<SqlWorkerResult> {
  const sampler = startSampler(250);
  const fail = (err: unknown): SqlWorkerResult => ({ ok: false, engine: task.engine, orders: task.orders, reason: err instanceof Error ? err.message : String(err) });
  let engine: SqlBenchEngine;
  // tetradb's process runs with the heap growth `npm start` sets (TETRA_HEAP_GROWTH_PERCENT or its
  // default), before its heap grows; the other engines with V8's own policy, as users run them.
  if (task.engine === 'tetradb') applyHeapGrowth(loadConfig(process.env, []).heapGrowthPercent);
  const t0 = performance.now();
  try {
    engine = await openSqlEngine(task.engine, task.dir, task.cacheBytes);
  } catch (err) {
    sampler.stop();
    return fail(err);
  }
  const openMs = performance.now() - t0;
  try {
    const started = performance.now();
    await load(engine, task.orders, started + task.maxLoadSeconds * 1000);
    await engine.settle();
    const loadSeconds = (performance.now() - started) / 1000;
    const loaded = process.memoryUsage();

    const checks: SampleCheck[] = [];
    for (const s of sampleQueries(task.orders)) checks.push(checkOf(s.label, await engine.query(QUERIES[s.name].sql, s.params), QUERIES[s.name].ordered));

    const ops: OpResult[] = [];
    for (const name of QUERY_NAMES) {
      const params = paramsOf(name, task.orders);
      const sql = QUERIES[name].sql;
      ops.push(await measure(task, engine, name, (i) => engine.query(sql, params(i))));
    }
    // Writes last, so every query ran on the same rows. New ids continue after the loaded ones.
    const customers = customerCount(task.orders);
    let next = task.orders + 1;
    ops.push(
      await measure(task, engine, 'batch', () => {
        const rows: Order[] = [];
        for (let k = 0; k < 1000; k++) rows.push(orderRow(next++, customers));
        return engine.insertBatch('orders', rows);
      }),
    );
    for (const writers of task.writers) {
      const one = (): unknown => engine.insertOne(orderRow(next++, customers));
      await closedLoop({ workers: writers, seconds: task.seconds / 4, maxOps: 1_000_000, yieldBeforeOp: engine.sync && writers > 1 }, one);
      const r = await closedLoop({ workers: writers, seconds: task.seconds, maxOps: 1_000_000, yieldBeforeOp: engine.sync && writers > 1 }, one);
      ops.push({ op: `insert-${writers}`, hz: r.hz, p50Us: r.p50Us, p99Us: r.p99Us, ops: r.ops });
    }
    const peaks = sampler.stop();
    return {
      ok: true,
      engine: task.engine,
      orders: task.orders,
      loadSeconds,
      openMs,
      checks,
      ops,
      loadedRssMiB: loaded.rss / MiB,
      loadedHeapMiB: loaded.heapUsed / MiB,
      peakRssMiB: peaks.peakRssMiB,
      peakHeapMiB: peaks.peakHeapMiB,
    };
  } catch (err) {
    sampler.stop();
    return fail(err);
  } finally {
    await engine.close().catch(() => undefined);
  }
}

workerMain(runTask);
