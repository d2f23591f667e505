import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { fail } from '../engine/errors.js';
import { DEFAULT_DIRTY_BYTES, FSYNC_MODES, MemoryGovernor, type FsyncMode, type PageCache } from '../engine/storage/index.js';
import { TENANT_STORE_DEFAULTS } from '../engine/tenant/index.js';

/** TETRA_HEAP_GROWTH_PERCENT's default (see docs/configuration.md, Memory). */
export const DEFAULT_HEAP_GROWTH_PERCENT = 0;

/** Everything the service can be told; see docs/configuration.md. */
export interface ServerConfig {
  port: number;
  host: string;
  dataDir: string;
  fsync: FsyncMode;
  bodyLimit: number;
  /** Requests per second per API key; 0 disables. */
  rateLimit: number;
  /** Signups per minute per client IP; 0 disables. */
  signupRateLimit: number;
  quotaBytes: number;
  cacheBytes: number;
  /** Bound on changed data not yet checkpointed, across all tenants (see docs/configuration.md). */
  dirtyBytes: number;
  /** A snapshot (a long read) open longer than this fails; 0 = no age limit. */
  snapshotMaxAgeMs: number;
  maxOpenTenants: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** pretty: readable lines (pino-pretty); json: one JSON object per line; auto: pretty on a terminal (resolved by main.ts). */
  logFormat: LogFormat;
  /** Requests slower than this many milliseconds are logged at warn; 0 disables. */
  slowRequestMs: number;
  /** A client must have sent its whole request (headers and body) within this; 0 = no bound. */
  requestTimeoutMs: number;
  /** A SQL statement running longer than this is cancelled (0: no limit). */
  sqlTimeLimitMs: number;
  /** A SQL result with more rows than this fails, asking for a LIMIT. */
  sqlMaxRows: number;
  /** Memory a SQL sort, hash join, GROUP BY or DISTINCT may hold. */
  sqlWorkBytes: number;
  /** A SQL result larger than this (JSON bytes, estimated) fails, asking for a LIMIT. */
  sqlMaxResultBytes: number;
  /** Changes one SQL transaction may hold in memory until it commits. */
  sqlTxnBytes: number;
  /** Estimated bytes one blocking aggregation stage ($sort, $group, ...) or a find's in-memory sort may hold. */
  mqlBlockingBytes: number;
  /** Bytes one query may write to spill files past mqlBlockingBytes (allowDiskUse); 0: no spilling. */
  mqlSpillBytes: number;
  /** A document query (find, aggregate, count, distinct, a change's search) running longer than this stops (0: no limit); a request's maxTimeMS may set a lower one. */
  mqlTimeLimitMs: number;
  /** Document cursors (a find with batchSize, an aggregate with cursor) open at once in the server. */
  mqlMaxCursors: number;
  /** Document cursors open at once per tenant. */
  mqlCursorsPerTenant: number;
  /** A cursor left this long without a getMore is closed (0: only its snapshot's age limit ends it). */
  mqlCursorTimeoutMs: number;
  /** Where queries spill; unset: `<dataDir>/spill`. */
  spillDir: string | undefined;
  /** External MongoDB for the aggregation stages DESIGN.md routes there (server/mongo-routing.ts); unset: every stage runs natively. */
  mongodbUri: string | undefined;
  /** Prefix of the MongoDB databases the mirror owns (`<prefix><tenantId>`, `<prefix>mirror`). */
  mongodbDbPrefix: string;
  /** How long a routed aggregation waits for the mirror and MongoDB before running natively. */
  mongodbTimeoutMs: number;
  /** Changes one tenant's mirror may queue while MongoDB is away; past it, the tenant is copied again once it is back. */
  mongodbQueueBytes: number;
  embeddingModelDir: string;
  /** Most texts per ONNX session run (concurrent requests are batched together). */
  embeddingBatchSize: number;
  /** ONNX Runtime intra-op threads (0: ORT's choice, the physical cores). */
  embeddingThreads: number;
  /** Memory the vector indexes (HNSW graphs) of all tenants may hold. */
  vectorMemoryBytes: number;
  /**
   * How far V8 lets the JavaScript heap grow past what a full collection left live before it
   * collects again, in percent (0: V8's own policy, up to 4x). See docs/configuration.md, Memory.
   */
  heapGrowthPercent: number;
  /**
   * How often the memory governor reads the RSS (0: no governor). It keeps the RSS growth since
   * start-up within cache + dirty budget + vector graphs in memory, by lowering the cache's and
   * the dirty budget's limits in force. See docs/configuration.md, Memory.
   */
  memoryCheckMs: number;
}

export type LogFormat = 'auto' | 'pretty' | 'json';

interface Setting {
  env: string;
  flag: string;
  kind: 'int' | 'string' | 'fsync' | 'log' | 'log-format';
  default: string | undefined;
  min?: number;
  max?: number;
}

/** Every setting: its environment variable, its CLI flag and its default. */
export const SETTINGS: Record<keyof ServerConfig, Setting> = {
  port: { env: 'PORT', flag: 'port', kind: 'int', default: '8080', min: 0, max: 65535 },
  host: { env: 'HOST', flag: 'host', kind: 'string', default: '127.0.0.1' },
  dataDir: { env: 'TETRA_DATA_DIR', flag: 'data-dir', kind: 'string', default: './data' },
  fsync: { env: 'TETRA_FSYNC', flag: 'fsync', kind: 'fsync', default: 'batch' },
  bodyLimit: { env: 'TETRA_BODY_LIMIT', flag: 'body-limit', kind: 'int', default: '1048576', min: 1024, max: 1024 * 1024 * 1024 },
  rateLimit: { env: 'TETRA_RATE_LIMIT', flag: 'rate-limit', kind: 'int', default: '1000', min: 0, max: 10_000_000 },
  signupRateLimit: { env: 'TETRA_SIGNUP_RATE_LIMIT', flag: 'signup-rate-limit', kind: 'int', default: '20', min: 0, max: 10_000_000 },
  quotaBytes: { env: 'TETRA_QUOTA_BYTES', flag: 'quota-bytes', kind: 'int', default: String(1024 * 1024 * 1024), min: 0, max: Number.MAX_SAFE_INTEGER },
  cacheBytes: { env: 'TETRA_CACHE_BYTES', flag: 'cache-bytes', kind: 'int', default: String(256 * 1024 * 1024), min: 1024 * 1024, max: Number.MAX_SAFE_INTEGER },
  dirtyBytes: { env: 'TETRA_DIRTY_BYTES', flag: 'dirty-bytes', kind: 'int', default: String(DEFAULT_DIRTY_BYTES), min: 1024 * 1024, max: Number.MAX_SAFE_INTEGER },
  snapshotMaxAgeMs: { env: 'TETRA_SNAPSHOT_MAX_MS', flag: 'snapshot-max-ms', kind: 'int', default: String(TENANT_STORE_DEFAULTS.snapshotMaxAgeMs), min: 0, max: 24 * 3_600_000 },
  maxOpenTenants: { env: 'TETRA_MAX_OPEN_TENANTS', flag: 'max-open-tenants', kind: 'int', default: '256', min: 1, max: 1_000_000 },
  logLevel: { env: 'TETRA_LOG_LEVEL', flag: 'log-level', kind: 'log', default: 'info' },
  logFormat: { env: 'TETRA_LOG_FORMAT', flag: 'log-format', kind: 'log-format', default: 'auto' },
  requestTimeoutMs: { env: 'TETRA_REQUEST_TIMEOUT_MS', flag: 'request-timeout-ms', kind: 'int', default: '30000', min: 0, max: 24 * 3_600_000 },
  slowRequestMs: { env: 'TETRA_SLOW_REQUEST_MS', flag: 'slow-request-ms', kind: 'int', default: '1000', min: 0, max: 3_600_000 },
  sqlTimeLimitMs: { env: 'TETRA_SQL_TIME_LIMIT_MS', flag: 'sql-time-limit-ms', kind: 'int', default: '30000', min: 0, max: 24 * 3_600_000 },
  sqlMaxRows: { env: 'TETRA_SQL_MAX_ROWS', flag: 'sql-max-rows', kind: 'int', default: '100000', min: 1, max: 100_000_000 },
  sqlMaxResultBytes: { env: 'TETRA_SQL_MAX_RESULT_BYTES', flag: 'sql-max-result-bytes', kind: 'int', default: String(32 * 1024 * 1024), min: 1024, max: Number.MAX_SAFE_INTEGER },
  sqlTxnBytes: { env: 'TETRA_SQL_TXN_BYTES', flag: 'sql-txn-bytes', kind: 'int', default: String(256 * 1024 * 1024), min: 1024 * 1024, max: Number.MAX_SAFE_INTEGER },
  sqlWorkBytes: { env: 'TETRA_SQL_WORK_BYTES', flag: 'sql-work-bytes', kind: 'int', default: String(64 * 1024 * 1024), min: 1024 * 1024, max: Number.MAX_SAFE_INTEGER },
  // 64 MiB, MongoDB's 100 MB scaled as the rest of the bounds are; at least 16 KiB (tests spill small data).
  mqlBlockingBytes: { env: 'TETRA_MQL_BLOCKING_BYTES', flag: 'mql-blocking-bytes', kind: 'int', default: String(64 * 1024 * 1024), min: 16 * 1024, max: Number.MAX_SAFE_INTEGER },
  // 4 GiB: four times the default tenant quota (TETRA_QUOTA_BYTES), room to sort or group the
  // largest collection a tenant holds, while a runaway query ($unwind of large arrays) cannot fill the disk.
  mqlSpillBytes: { env: 'TETRA_MQL_SPILL_BYTES', flag: 'mql-spill-bytes', kind: 'int', default: String(4 * 1024 * 1024 * 1024), min: 0, max: Number.MAX_SAFE_INTEGER },
  // No limit by default, as MongoDB (defaultMaxTimeMS unset); reads still end at TETRA_SNAPSHOT_MAX_MS.
  mqlTimeLimitMs: { env: 'TETRA_MQL_TIME_LIMIT_MS', flag: 'mql-time-limit-ms', kind: 'int', default: '0', min: 0, max: 24 * 3_600_000 },
  // MongoDB has no such bound; each idle cursor holds a snapshot and up to ~2 MiB (cursors.ts).
  mqlMaxCursors: { env: 'TETRA_MQL_MAX_CURSORS', flag: 'mql-max-cursors', kind: 'int', default: '1000', min: 1, max: 1_000_000 },
  mqlCursorsPerTenant: { env: 'TETRA_MQL_CURSORS_PER_TENANT', flag: 'mql-cursors-per-tenant', kind: 'int', default: '100', min: 1, max: 1_000_000 },
  // MongoDB's cursorTimeoutMillis (10 min); a cursor's snapshot still ends it at TETRA_SNAPSHOT_MAX_MS.
  mqlCursorTimeoutMs: { env: 'TETRA_MQL_CURSOR_TIMEOUT_MS', flag: 'mql-cursor-timeout-ms', kind: 'int', default: '600000', min: 0, max: 24 * 3_600_000 },
  spillDir: { env: 'TETRA_SPILL_DIR', flag: 'spill-dir', kind: 'string', default: undefined },
  mongodbUri: { env: 'TETRA_MONGODB_URI', flag: 'mongodb-uri', kind: 'string', default: undefined },
  mongodbDbPrefix: { env: 'TETRA_MONGODB_DB_PREFIX', flag: 'mongodb-db-prefix', kind: 'string', default: 'tetra_' },
  mongodbTimeoutMs: { env: 'TETRA_MONGODB_TIMEOUT_MS', flag: 'mongodb-timeout-ms', kind: 'int', default: '5000', min: 100, max: 600_000 },
  mongodbQueueBytes: { env: 'TETRA_MONGODB_QUEUE_BYTES', flag: 'mongodb-queue-bytes', kind: 'int', default: String(64 * 1024 * 1024), min: 64 * 1024, max: Number.MAX_SAFE_INTEGER },
  embeddingModelDir: { env: 'TETRA_EMBEDDING_MODEL_DIR', flag: 'embedding-model-dir', kind: 'string', default: './models/all-MiniLM-L6-v2' },
  embeddingBatchSize: { env: 'TETRA_EMBEDDING_BATCH', flag: 'embedding-batch', kind: 'int', default: '32', min: 1, max: 1024 },
  embeddingThreads: { env: 'TETRA_EMBEDDING_THREADS', flag: 'embedding-threads', kind: 'int', default: '0', min: 0, max: 256 },
  vectorMemoryBytes: { env: 'TETRA_VECTOR_MEMORY_BYTES', flag: 'vector-memory-bytes', kind: 'int', default: String(1024 * 1024 * 1024), min: 1024 * 1024, max: Number.MAX_SAFE_INTEGER },
  heapGrowthPercent: { env: 'TETRA_HEAP_GROWTH_PERCENT', flag: 'heap-growth-percent', kind: 'int', default: String(DEFAULT_HEAP_GROWTH_PERCENT), min: 0, max: 300 },
  memoryCheckMs: { env: 'TETRA_MEMORY_CHECK_MS', flag: 'memory-check-ms', kind: 'int', default: '100', min: 0, max: 60_000 },
};

/**
 * Apply the heap growth before the heap has grown: V8 reads the flag each time it sets the next
 * collection's limit, so setting it at start-up governs the whole run (measured in
 * docs/benchmarks.md, with and without).
 */
export function applyHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}

/**
 * The memory governor over `cache` as the service runs it (docs/configuration.md, Memory), or
 * undefined when TETRA_MEMORY_CHECK_MS is 0. `extraBytes`: memory accounted elsewhere that the
 * bound allows for (the vector graphs in memory). Stop it before closing the stores.
 */
export function startMemoryGovernor(
  cache: PageCache<unknown>,
  settings: Pick<ServerConfig, 'memoryCheckMs' | 'heapGrowthPercent'>,
  extraBytes?: () => number,
): MemoryGovernor | undefined {
  if (settings.memoryCheckMs <= 0) return undefined;
  return new MemoryGovernor(cache, { intervalMs: settings.memoryCheckMs, heapGrowthPercent: settings.heapGrowthPercent, ...(extraBytes === undefined ? {} : { extraBytes }) });
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const LOG_FORMATS: readonly LogFormat[] = ['auto', 'pretty', 'json'];

/**
 * Reads the configuration: a CLI flag wins over its environment variable, which wins over the
 * default.
 * @throws VALIDATION_FAILED naming the variable or flag and the accepted values
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, argv: string[] = process.argv.slice(2)): ServerConfig {
  const { values } = parseArgs({
    args: argv,
    options: Object.fromEntries(Object.values(SETTINGS).map((s) => [s.flag, { type: 'string' as const }])),
    strict: true,
    allowPositionals: false,
  });
  const config: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(SETTINGS)) {
    const fromFlag = values[setting.flag] as string | undefined;
    const raw = fromFlag ?? env[setting.env] ?? setting.default;
    const source = fromFlag !== undefined ? `--${setting.flag}` : env[setting.env] !== undefined ? setting.env : 'default';
    config[name] = parseSetting(setting, raw, source);
  }
  return config as unknown as ServerConfig;
}

function parseSetting(setting: Setting, raw: string | undefined, source: string): unknown {
  if (raw === undefined) return undefined;
  switch (setting.kind) {
    case 'string':
      if (raw.trim() === '') fail('VALIDATION_FAILED', `${source} must not be empty`);
      return raw;
    case 'int': {
      const n = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
      if (!Number.isSafeInteger(n) || n < (setting.min ?? 0) || n > (setting.max ?? Number.MAX_SAFE_INTEGER)) {
        fail('VALIDATION_FAILED', `${source} must be an integer between ${setting.min ?? 0} and ${setting.max ?? Number.MAX_SAFE_INTEGER}, got ${JSON.stringify(raw)}`);
      }
      return n;
    }
    case 'fsync':
      if (!FSYNC_MODES.includes(raw as FsyncMode)) fail('VALIDATION_FAILED', `${source} must be one of ${FSYNC_MODES.join(', ')}, got ${JSON.stringify(raw)}`);
      return raw;
    case 'log':
      if (!(LOG_LEVELS as readonly string[]).includes(raw)) fail('VALIDATION_FAILED', `${source} must be one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(raw)}`);
      return raw;
    case 'log-format':
      if (!(LOG_FORMATS as readonly string[]).includes(raw)) fail('VALIDATION_FAILED', `${source} must be one of ${LOG_FORMATS.join(', ')}, got ${JSON.stringify(raw)}`);
      return raw;
    default: {
      const never: never = setting.kind;
      throw new Error(`unhandled setting kind ${String(never)}`);
    }
  }
}

/** The log format to use: `auto` becomes pretty when stdout is a terminal, JSON lines otherwise. */
export function resolveLogFormat(format: LogFormat, stdoutIsTTY: boolean): 'pretty' | 'json' {
  if (format === 'auto') return stdoutIsTTY ? 'pretty' : 'json';
  return format;
}

/** The configuration with every default, for tests and embedding. */
export function defaultConfig(overrides: Partial<ServerConfig> = {}): ServerConfig {
  return { ...loadConfig({}, []), ...overrides };
}
