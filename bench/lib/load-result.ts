// What the HTTP benchmarks keep of one autocannon run, read the same way for every table so the
// rows of kv-http and docs-http mean the same thing.
import type autocannon from 'autocannon';

export interface LoadResult {
  /** Mean requests per second. */
  rps: number;
  /** Latency percentiles in ms. */
  p50: number;
  p99: number;
  /** Requests that got no answer: connection errors and timeouts. */
  errors: number;
  /** Answers with a status outside 2xx (kept apart: the server answered, but refused). */
  non2xx: number;
}

/** The figures of `result` the tables show. */
export function loadResult(result: autocannon.Result): LoadResult {
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors + result.timeouts, non2xx: result.non2xx };
}
