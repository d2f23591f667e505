// One engine, one suite, in a process of its own (forked by storage.bench.ts), so its RSS is its
// own and one engine's garbage never lands in another's timings. Reports rows over IPC.
import { rmSync } from 'node:fs';
import { keyOf, randomIds, valueOf } from './lib/dataset.js';
import { openEngine, type BenchEngine, type EngineName } from './lib/engines.js';
import { benchmarkSync, closedLoop, memory, sampleSync, timed, type Latency, type MemorySample } from './lib/harness.js';

export type Task =
  | { suite: 'commit'; engine: EngineName; dir: string; writers: number[]; seconds: number; maxOps: number; cacheBytes: number }
  | { suite: 'read'; engine: EngineName; dir: string; size: number; seconds: number; cacheBytes: number; keep: boolean }
  | { suite: 'reopen'; engine: EngineName; dir: string; size: number; cacheBytes: number; label: string };

/** One line of a result table. `hz` is operations (or rows, as `unit` says) per second. */
export interface Row {
  suite: Task['suite'];
  engine: string;
  op: string;
  size: number;
  hz: number;
  unit: 'ops' | 'rows' | 'commits' | 'ms';
  rmePct?: number;
  p50Us?: number;
  p99Us?: number;
  rssMiB: number;
  heapMiB: number;
  buffersMiB: number;
  extra?: Record<string, number>;
}

const BATCH_ROWS = 1000;
const GET_KEYS = 1 << 16;
const SCAN_ROWS = 100;

async function runCommit(task: Extract<Task, { suite: 'commit' }>): Promise<Row[]> {
  const engine = await openEngine(task.engine, task.dir, { cacheBytes: task.cacheBytes });
  const rows: Row[] = [];
  let next = 0;
  try {
    for (const writers of task.writers) {
      const result = await closedLoop(
        { workers: writers, seconds: task.seconds, maxOps: task.maxOps, warmupOps: 20, yieldBeforeOp: engine.syncCommit && writers > 1 },
        () => {
          const id = next++;
          return engine.commit(keyOf(id), valueOf(id));
        },
      );
      rows.push({
        suite: 'commit',
        engine: task.engine,
        op: `commit, ${writers} writer${writers === 1 ? '' : 's'}`,
        size: writers,
        hz: result.hz,
        unit: 'commits',
        p50Us: result.p50Us,
        p99Us: result.p99Us,
        ...memory(),
      });
    }
  } finally {
    await engine.close();
  }
  return rows;
}

async function runRead(task: Extract<Task, { suite: 'read' }>): Promise<Row[]> {
  const rows: Row[] = [];
  const row = (op: string, hz: number, unit: Row['unit'], lat: Partial<Latency> & { rmePct?: number }, mem: MemorySample, extra?: Record<string, number>): void => {
    rows.push({ suite: 'read', engine: task.engine, op, size: task.size, hz, unit, rmePct: lat.rmePct, p50Us: lat.p50Us, p99Us: lat.p99Us, ...mem, ...(extra ? { extra } : {}) });
  };
  const engine = await openEngine(task.engine, task.dir, { cacheBytes: task.cacheBytes });
  try {
    // Bulk load: ascending ids, 1000 rows per durable transaction.
    const load = await closedLoop({ workers: 1, seconds: Infinity, maxOps: Math.ceil(task.size / BATCH_ROWS) }, (batch) => {
      const rowsOfBatch: Array<[Buffer, Buffer]> = [];
      const end = Math.min(task.size, (batch + 1) * BATCH_ROWS);
      for (let id = batch * BATCH_ROWS; id < end; id++) rowsOfBatch.push([keyOf(id), valueOf(id)]);
      return engine.load(rowsOfBatch);
    });
    const settle = await timed(() => engine.settle());
    row(`bulk load, ${BATCH_ROWS} rows/txn`, task.size / (load.seconds + settle.ms / 1000), 'rows', load, memory(), { settleMs: settle.ms });

    verify(engine, task.size);
    const ids = randomIds(task.size, GET_KEYS);
    const keys = ids.map(keyOf);
    const mask = GET_KEYS - 1;

    // Warm: every page once (a full scan), then the keys the get benchmark will ask for.
    await engine.scanAll();
    for (const key of keys) engine.get(key);

    let i = 0;
    const get = (): void => {
      engine.get(keys[i++ & mask]!);
    };
    const getHz = benchmarkSync(`${task.engine} get ${task.size}`, get, task.seconds);
    row(engine.name === 'leveldb' ? 'get (getSync)' : 'get', getHz.hz, 'ops', { ...sampleSync(get, 50_000, task.seconds / 2), rmePct: getHz.rmePct }, memory(), engine.stats());

    if (engine.getAsync !== undefined) {
      const getAsync = engine.getAsync.bind(engine);
      const result = await closedLoop({ workers: 1, seconds: task.seconds, maxOps: 1_000_000, warmupOps: 100 }, () => getAsync(keys[i++ & mask]!));
      row('get (async)', result.hz, 'ops', result, memory());
    }

    const scan = engine.scan.bind(engine);
    if (engine.name === 'leveldb') {
      const result = await closedLoop({ workers: 1, seconds: task.seconds, maxOps: 1_000_000, warmupOps: 100 }, () => scan(keys[i++ & mask]!, SCAN_ROWS));
      row(`scan ${SCAN_ROWS} from random key (async)`, result.hz * SCAN_ROWS, 'rows', result, memory());
    } else {
      const scanOnce = (): void => {
        scan(keys[i++ & mask]!, SCAN_ROWS);
      };
      const hz = benchmarkSync(`${task.engine} scan ${task.size}`, scanOnce, task.seconds);
      row(`scan ${SCAN_ROWS} from random key`, hz.hz * SCAN_ROWS, 'rows', { ...sampleSync(scanOnce, 20_000, task.seconds / 2), rmePct: hz.rmePct }, memory(), engine.stats());
    }

    // Full scans last, when the code paths are as warm as for the other reads: best of three.
    let best = Infinity;
    for (let pass = 0; pass < 3; pass++) best = Math.min(best, (await timed(() => engine.scanAll())).ms);
    row('scan all', task.size / (best / 1000), 'rows', {}, memory());
  } finally {
    await engine.close();
    if (!task.keep) rmSync(task.dir, { recursive: true, force: true });
  }
  return rows;
}

async function runReopen(task: Extract<Task, { suite: 'reopen' }>): Promise<Row[]> {
  const before = memory();
  const firstKey = keyOf(Math.floor(task.size / 2));
  const open = await timed(() => openEngine(task.engine, task.dir, { cacheBytes: task.cacheBytes }));
  const engine: BenchEngine = open.value;
  const rows: Row[] = [];
  try {
    const first = await timed(() => engine.get(firstKey));
    if (first.value === undefined) throw new Error(`${task.engine}: key missing after reopen`);
    const opened = memory();
    rows.push({
      suite: 'reopen',
      engine: task.label,
      op: 'reopen + first get',
      size: task.size,
      hz: open.ms + first.ms,
      unit: 'ms',
      ...opened,
      extra: { openMs: open.ms, firstGetMs: first.ms, baseRssMiB: before.rssMiB },
    });
    // A working pass over everything: a full scan and 65536 random gets, with the cache
    // occupancy checked all along (the adapter records its peak).
    await engine.scanAll();
    for (const id of randomIds(task.size, GET_KEYS)) engine.get(keyOf(id));
    verify(engine, task.size);
    rows.push({
      suite: 'reopen',
      engine: task.label,
      op: 'after full scan + 64k gets',
      size: task.size,
      hz: Number.NaN,
      unit: 'ms',
      ...memory(),
      extra: { ...engine.stats(), baseRssMiB: before.rssMiB },
    });
  } finally {
    await engine.close();
  }
  return rows;
}

/** Spot-checks that the engine holds exactly the dataset's bytes. */
function verify(engine: BenchEngine, size: number): void {
  for (const id of randomIds(size, 100, 12345)) {
    const value = engine.get(keyOf(id));
    if (value === undefined || !value.equals(valueOf(id))) throw new Error(`${engine.name}: wrong value for id ${id}`);
  }
  if (engine.get(keyOf(size)) !== undefined) throw new Error(`${engine.name}: unexpected key ${size}`);
}

async function main(): Promise<void> {
  const task = JSON.parse(process.argv[2] ?? '') as Task;
  let rows: Row[];
  switch (task.suite) {
    case 'commit':
      rows = await runCommit(task);
      break;
    case 'read':
      rows = await runRead(task);
      break;
    case 'reopen':
      rows = await runReopen(task);
      break;
    default: {
      const never: never = task;
      throw new Error(`unknown suite ${JSON.stringify(never)}`);
    }
  }
  process.send!(rows, () => process.exit(0));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
