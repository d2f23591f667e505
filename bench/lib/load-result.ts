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

/**
 * autocannon options for reads of fixed bodies: connection k cycles through its own slice of
 * `bodies`, each request built once before the run, as a static request (the hello-world's GET)
 * is. A `setupRequest` that makes each body as it goes instead costs the load generator, which
 * shares the two cores with the server, a request build per request (8-18% more finds per second
 * without it in one probe; no difference in a later full SQL run, docs/benchmarks.md). The slices
 * are disjoint, so connections do not ask for the same keys in step. Needs pipelining 1
 * (autocannon's own rule for per-client requests).
 *
 * With `fill`, the bodies are templates of requests that must differ on every send (ids that are
 * new each time): each send is made from its prebuilt template by `fill`, a string substitution
 * rather than a body build. (autocannon's own idReplacement would do this, but the Content-Length
 * it announces assumes ids of 33 characters, and the ids hyperid 3 makes are 24 to 30.)
 */
export function pooledRequests(
  method: 'POST' | 'PUT' | 'GET',
  path: string,
  headers: Record<string, string>,
  bodies: readonly string[],
  connections: number,
  fill?: (template: string) => string,
): Pick<autocannon.Options, 'requests' | 'setupClient'> {
  const per = Math.max(1, Math.floor(bodies.length / connections));
  let next = 0;
  const request = (body: string): autocannon.Request =>
    fill === undefined ? { method, path, headers, body } : { method, path, headers, body, setupRequest: (req) => ({ ...req, body: fill(body) }) };
  const slice = (k: number): autocannon.Request[] => Array.from({ length: per }, (_, j) => request(bodies[(k * per + j) % bodies.length]!));
  return {
    requests: slice(0),
    setupClient: (client) => {
      (client as unknown as { setRequests(requests: unknown[]): void }).setRequests(slice(next++ % connections));
    },
  };
}
