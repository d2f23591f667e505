import { randomUUID } from 'node:crypto';
import { IncomingMessage, type ServerResponse } from 'node:http';
import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Principal } from '../engine/system/index.js';
import type { ErrorBody } from './error-handler.js';
import { retryAfterOf, toTetraError } from './error-handler.js';
import { JsonText, parseJsonBody } from './json-body.js';
import type { RouteRequest } from './tetra-context.js';

// The fast lane: the hot data routes (documents, SQL, key-value) answered straight from Node's
// request event, with the same handlers, validation schemas, errors and headers as their Fastify
// routes, but without Fastify's per-request pipeline (routing, hooks, content-type parsing,
// reply object, serializer), which cost more server CPU than the whole engine work of a point
// read (docs/architecture.md, "The HTTP path"). It takes only requests it can answer exactly as
// Fastify would: an ordinary JSON request with a Content-Length within the body limit, a valid
// key under its rate limit, a path without percent-escapes or a query string. Everything else
// (bad or missing keys, 429s, oversized or chunked bodies, Expect, other content types, shutdown)
// goes to Fastify untouched, before a byte of the body is read, and gets Fastify's answer.
// test/server/fast-lane.test.ts sends every lane route's requests both ways and requires the
// same status, body and headers.
//
// Answers are written at the end of the event-loop turn (setImmediate), all of a turn's together,
// not each as its handler returns. Writing one makes the kernel deliver it to the client at once,
// and a client waiting in epoll is woken for each: on this VM a wake-up (an interrupt to another
// core) cost more than the write, and under load it came once per request. Written together, a
// turn's answers wake a client once: at 32 connections this cut server CPU per point read by a
// quarter (docs/architecture.md, "The HTTP path"). An answer waits at most for the requests that
// arrived in the same turn; a lone request waits for nothing but the rest of its turn.

/** One route served by the lane as well as by Fastify. */
export interface LaneRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** An exact path, or a prefix ending in '/*' whose remainder is params['*']. */
  path: string;
  /** The JSON schema of the body (routes that take one), as given to Fastify. */
  body?: object;
  /** The status of a successful answer. */
  status: number;
  handler: (request: RouteRequest) => unknown;
}

/** What the lane needs of the app it stands in front of. */
export interface LaneContext {
  app: FastifyInstance;
  bodyLimit: number;
  /** The principal of a Bearer key, or undefined when the key is missing, malformed or invalid. */
  authenticate(authorization: string | undefined): Principal | undefined;
  /** Takes a rate-limit token: the headers to send, or undefined when the request is over the limit. */
  rateLimit(principal: Principal): Record<string, string> | undefined;
  /** x-request-id of a request: the client's when well-formed, else a new one. */
  requestId(given: string | string[] | undefined): string;
  /** Called once per answered request, as Fastify's onResponse hook is. */
  onResponse(log: () => FastifyBaseLogger, method: string, url: string, statusCode: number, elapsedMs: number): void;
}

interface Compiled extends LaneRoute {
  validate: ValidateFunction | undefined;
}

// The params of an exact route (none), shared: handlers only read them.
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
// Characters a path segment may hold without escaping (RFC 3986 pchar less '%'), and '/': a
// wildcard tail made of these is taken as it is by Fastify's router too, so both agree on the key.
const PLAIN_TAIL = /^[A-Za-z0-9\-._~!$&'()*+,;=:@/]+$/;
const JSON_TYPE = /^application\/json\s*(;\s*charset=utf-8\s*)?$/i;

/** The request object handlers see: the fields of a FastifyRequest they use. */
class LaneRequest implements RouteRequest {
  constructor(
    readonly id: string,
    readonly server: FastifyInstance,
    readonly principal: Principal,
    readonly params: Record<string, string>,
    public body: unknown,
    readonly socket: { readonly destroyed: boolean },
  ) {}
}

/**
 * The server's request class (createServer's `IncomingMessage` option): a request whose body the
 * lane reads gets each chunk handed over as Node's HTTP parser pushes it, instead of through the
 * stream's 'data' events (a resume, a nextTick, a flow and an emit per request). Every other
 * request, and every other use of the stream, is an IncomingMessage as usual.
 */
export class LaneIncomingMessage extends IncomingMessage {
  /** Set by the lane on a request it took: receives the body's chunks. */
  laneBody: ((chunk: Buffer) => void) | undefined = undefined;

  /** Set with laneBody: called if the request is destroyed (its client gone) before the body is complete. */
  laneGone: (() => void) | undefined = undefined;

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    const gone = this.laneGone;
    if (gone !== undefined) {
      this.laneGone = undefined;
      gone();
    }
    super._destroy(err, callback);
  }

  override push(chunk: unknown, encoding?: BufferEncoding): boolean {
    if (chunk !== null && this.laneBody !== undefined) {
      this.laneBody(chunk as Buffer);
      return true;
    }
    return super.push(chunk, encoding);
  }
}

/** One request the lane took, from its headers to its answer. */
class LaneCall {
  readonly started = performance.now();
  /** Content-Length of the body (routes that take one). */
  expected = 0;
  received = 0;
  first: Buffer | undefined = undefined;
  chunks: Buffer[] | undefined = undefined;
  handlerRan = false;
  settled = false;
  /** The answer, set when it is ready and written by the turn's flush. */
  status = 0;
  text = '';

  constructor(
    readonly res: ServerResponse,
    readonly route: Compiled,
    readonly request: LaneRequest,
    readonly method: string,
    readonly url: string,
    public limitHeaders: Record<string, string>,
  ) {}
}

export class FastLane {
  readonly #context: LaneContext;
  readonly #exact = new Map<string, Compiled>();
  readonly #prefixes: Array<{ method: string; prefix: string; route: Compiled }> = [];
  // Same options as Fastify's validator compiler (@fastify/ajv-compiler's defaults with the app's
  // customOptions), so the first error Ajv reports, and hence the message, is the same.
  readonly #ajv = new Ajv({ coerceTypes: false, useDefaults: true, removeAdditional: false, allErrors: false, addUsedSchema: false });
  #closing = false;
  #inFlight = 0;
  #taken = 0;
  /** Answers ready this turn, in the order they became ready; written by #flush. */
  #ready: LaneCall[] = [];
  readonly #flush = (): void => this.#writeReady();
  #drained: (() => void) | undefined;

  constructor(context: LaneContext) {
    this.#context = context;
  }

  /** Adds a route; its Fastify twin is registered by the caller with the same handler and schema. */
  add(route: LaneRoute): void {
    const compiled: Compiled = { ...route, validate: route.body === undefined ? undefined : this.#ajv.compile(route.body) };
    if (route.path.endsWith('/*')) this.#prefixes.push({ method: route.method, prefix: route.path.slice(0, -1), route: compiled });
    else this.#exact.set(`${route.method} ${route.path}`, compiled);
  }

  /** Requests the lane has taken since start (the rest went to Fastify). */
  get taken(): number {
    return this.#taken;
  }

  /** Requests taken and not yet settled. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** From now on every request goes to Fastify (which answers 503 while closing). */
  close(): void {
    this.#closing = true;
  }

  /** Resolves once no request taken by the lane is still being answered. */
  drained(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.#drained;
      this.#drained = () => {
        previous?.();
        resolve();
      };
    });
  }

  /**
   * Answers the request and returns true, or returns false having touched nothing. Only requests
   * of the server's LaneIncomingMessage class can be taken (the lane reads their bodies through it).
   */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.#closing || !(req instanceof LaneIncomingMessage)) return false;
    const method = req.method!;
    const url = req.url!;
    if (url.includes('?') || url.includes('%')) return false;
    let route = this.#exact.get(`${method} ${url}`);
    let params = NO_PARAMS;
    if (route === undefined) {
      for (const p of this.#prefixes) {
        if (p.method !== method || !url.startsWith(p.prefix)) continue;
        const tail = url.slice(p.prefix.length);
        if (!PLAIN_TAIL.test(tail)) return false;
        route = p.route;
        params = { '*': tail };
        break;
      }
      if (route === undefined) return false;
    }
    const headers = req.headers;
    if (headers.expect !== undefined || headers['transfer-encoding'] !== undefined) return false;
    const length = headers['content-length'];
    if (route.validate !== undefined) {
      if (length === undefined || !/^[1-9][0-9]{0,15}$/.test(length) || Number(length) > this.#context.bodyLimit) return false;
      if (!JSON_TYPE.test(headers['content-type'] ?? '')) return false;
    } else if (length !== undefined && length !== '0') {
      return false;
    }
    const principal = this.#context.authenticate(headers.authorization);
    if (principal === undefined) return false;
    const limitHeaders = this.#context.rateLimit(principal);
    if (limitHeaders === undefined) return false;

    // Taken: from here on the lane answers.
    this.#inFlight++;
    this.#taken++;
    const request = new LaneRequest(this.#context.requestId(headers['x-request-id']), this.#context.app, principal, params, undefined, req.socket);
    const call = new LaneCall(res, route, request, method, url, limitHeaders);
    if (route.validate === undefined) {
      req.resume();
      this.#run(call);
      return true;
    }
    // The body is complete once Content-Length bytes have arrived (Node's parser delivers no more
    // than that): it is answered then, not a 'end' event later (one nextTick and emit less).
    call.expected = Number(length);
    // A taken request counts as in flight until its handler has settled, or until its connection
    // closes before the body was complete (a client gone in the middle of its body): shutdown
    // waits for exactly these. Node destroys such a request (and reports it aborted).
    req.laneBody = (chunk) => this.#onData(call, chunk);
    req.laneGone = () => {
      if (!call.handlerRan) this.#settle(call, undefined);
    };
    return true;
  }

  #onData(call: LaneCall, chunk: Buffer): void {
    call.received += chunk.length;
    if (call.first === undefined) call.first = chunk;
    else (call.chunks ??= [call.first]).push(chunk);
    if (call.received < call.expected) return;
    // Decoded whole, so a character split across chunks stays one character.
    const text = call.chunks === undefined ? call.first.toString('utf8') : Buffer.concat(call.chunks, call.received).toString('utf8');
    const request = call.request;
    try {
      request.body = parseJsonBody(text);
    } catch (err) {
      this.#fail(call, err);
      return;
    }
    const validate = call.route.validate!;
    if (!validate(request.body)) {
      this.#fail(call, Object.assign(new Error('validation'), { validation: validate.errors ?? [], validationContext: 'body' }));
      return;
    }
    this.#run(call);
  }

  #run(call: LaneCall): void {
    call.handlerRan = true;
    let result: unknown;
    try {
      result = call.route.handler(call.request);
    } catch (err) {
      this.#fail(call, err);
      return;
    }
    if (result instanceof Promise) {
      result.then(
        (value) => this.#answer(call, call.route.status, value),
        (err: unknown) => this.#fail(call, err),
      );
    } else this.#answer(call, call.route.status, result);
  }

  #answer(call: LaneCall, status: number, payload: unknown): void {
    call.status = status;
    call.text = payload instanceof JsonText ? payload.text : JSON.stringify(payload);
    if (this.#ready.push(call) === 1) setImmediate(this.#flush);
  }

  /** Writes the turn's answers (see the top of the file), each settled once written. */
  #writeReady(): void {
    const ready = this.#ready;
    this.#ready = [];
    for (const call of ready) {
      const text = call.text;
      const headers: Record<string, string | number> = { 'x-request-id': call.request.id, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) };
      const limit = call.limitHeaders;
      for (const name in limit) headers[name] = limit[name]!;
      try {
        call.res.writeHead(call.status, headers);
        call.res.end(text);
      } catch (err) {
        // Nothing here throws for the headers the lane makes; should it, the other answers of the
        // turn are still written, and this request is settled rather than left in flight.
        this.#logger(call.request.id).error({ err }, 'writing an answer failed');
        call.res.destroy();
      }
      this.#settle(call, call.status);
    }
  }

  #fail(call: LaneCall, err: unknown): void {
    const tetra = toTetraError(err);
    if (tetra.status >= 500) this.#logger(call.request.id).error({ err: tetra.cause ?? tetra }, tetra.message);
    const body: ErrorBody = { error: { code: tetra.code, message: tetra.message } };
    if (tetra.details !== undefined) body.error.details = tetra.details;
    const retryAfter = retryAfterOf(tetra);
    if (retryAfter !== undefined) call.limitHeaders = { ...call.limitHeaders, 'retry-after': retryAfter };
    this.#answer(call, tetra.status, body);
  }

  /** Settles a taken request once: answered with `status`, or gone before its handler ran (undefined). */
  #settle(call: LaneCall, status: number | undefined): void {
    if (call.settled) return;
    call.settled = true;
    if (status !== undefined) {
      const id = call.request.id;
      this.#context.onResponse(() => this.#logger(id), call.method, call.url, status, performance.now() - call.started);
    }
    this.#inFlight--;
    if (this.#inFlight === 0 && this.#drained !== undefined) {
      const drained = this.#drained;
      this.#drained = undefined;
      drained();
    }
  }

  #logger(id: string): FastifyBaseLogger {
    return this.#context.app.log.child({ reqId: id });
  }

}
