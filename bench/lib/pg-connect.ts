// Reaching the system's PostgreSQL, the peer of the benchmarks that run one (documents and SQL over
// HTTP, aggregation in process): its default address, a URL safe to print, and a client only when
// its commits are durable, as tetradb's are.
import pg from 'pg';

/** The role and database docs/benchmarks.md has the benchmarks create. */
export const DEFAULT_PG_URL = 'postgres://tetrabench:tetrabench@127.0.0.1:5432/tetrabench';

/** Where the URL points, without its password. */
export function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}

/** A client when PostgreSQL answers with synchronous_commit on, and its settings in a line; else why not. */
export async function connectPg(url: string): Promise<{ client: pg.Client; settings: string } | { reason: string }> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    const show = async (name: string): Promise<string> => (await client.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name]!;
    const commit = await show('synchronous_commit');
    if (commit !== 'on') {
      await client.end();
      return { reason: `synchronous_commit is ${commit}, not on: its inserts would not be durable when acknowledged` };
    }
    const settings = `PostgreSQL ${await show('server_version')}: synchronous_commit=${commit}, fsync=${await show('fsync')}, wal_sync_method=${await show('wal_sync_method')}, shared_buffers=${await show('shared_buffers')}, commit_delay=${await show('commit_delay')}`;
    return { client, settings };
  } catch (err) {
    await client.end().catch(() => undefined);
    return { reason: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * connectPg for a benchmark whose PostgreSQL rows are optional: the client and its settings, or
 * (`skipped`) why its Fastify + PostgreSQL rows are skipped (also written to stderr), with what to
 * do about it. One shape either way, so a caller takes all three fields at once.
 */
export async function connectPgOrSkip(url: string): Promise<{ client?: pg.Client; settings?: string; skipped?: string }> {
  const conn = await connectPg(url);
  if (!('reason' in conn)) return conn;
  const skipped = `PostgreSQL not reachable at ${redact(url)} (${conn.reason}): skipping the Fastify + PostgreSQL rows. Start it (pg_ctlcluster 15 main start) and create the role and database (docs/benchmarks.md), or point --pg-url / DATABASE_URL at one.`;
  process.stderr.write(`  ${skipped}\n`);
  return { skipped };
}
