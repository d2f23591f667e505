import { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ERROR_CODES, isTetraError, TetraError, type ErrorCode } from '../engine/errors.js';

/** The one error envelope of every response. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

// Fastify's own errors that reach us, by their code; anything else 4xx is bad input.
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'VALIDATION_FAILED',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_JSON',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_JSON',
  // Raised by the router before a route is found (through Fastify's frameworkErrors option).
  FST_ERR_BAD_URL: 'VALIDATION_FAILED',
  FST_ERR_MAX_PARAM_LENGTH: 'VALIDATION_FAILED',
};

const FASTIFY_MESSAGES: Record<string, string> = {
  FST_ERR_BAD_URL: 'the URL path is not valid percent-encoded UTF-8',
  FST_ERR_MAX_PARAM_LENGTH: 'a URL path parameter is too long',
};

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** "value must be string" from an Ajv issue: the field by its dotted path, then the problem. */
function describeValidation(issue: AjvIssue, context: string | undefined): { message: string; field: string } {
  const path = issue.instancePath.replace(/^\//, '').replace(/\//g, '.');
  let field = path;
  let problem = issue.message ?? 'is invalid';
  if (issue.keyword === 'required') {
    field = [path, String(issue.params.missingProperty)].filter(Boolean).join('.');
    problem = 'is required';
  } else if (issue.keyword === 'additionalProperties') {
    field = [path, String(issue.params.additionalProperty)].filter(Boolean).join('.');
    problem = 'is not an accepted field';
  }
  if (field === '') field = context ?? 'body';
  return { message: `${field} ${problem}`, field };
}

/**
 * The issue to report: the first, except that a value matching no branch of an `anyOf` of types
 * ("update": an object or an array) is told as one issue naming every type, not as the first
 * branch's "must be object".
 */
function reportedIssue(issues: readonly AjvIssue[]): AjvIssue {
  const first = issues[0]!;
  const anyOf = issues.find((i) => i.keyword === 'anyOf' && i.instancePath === first.instancePath);
  if (anyOf === undefined) return first;
  const branches = issues.filter((i) => i !== anyOf && i.instancePath === first.instancePath);
  if (!branches.every((i) => i.keyword === 'type')) return first;
  const types = [...new Set(branches.flatMap((i) => String(i.params.type).split(',')))];
  return { ...first, message: `must be ${types.join(' or ')}` };
}

/** Converts anything thrown while handling a request into a TetraError. */
export function toTetraError(err: unknown): TetraError {
  if (isTetraError(err)) return err;
  const e = err as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (Array.isArray(e.validation) && e.validation.length > 0) {
    const { message, field } = describeValidation(reportedIssue(e.validation), e.validationContext);
    return new TetraError('VALIDATION_FAILED', message, { field, in: e.validationContext ?? 'body' });
  }
  const mapped = e.code !== undefined ? FASTIFY_CODES[e.code] : undefined;
  if (mapped !== undefined) {
    const message = mapped === 'PAYLOAD_TOO_LARGE' ? 'request body is larger than the configured limit' : (FASTIFY_MESSAGES[e.code] ?? ERROR_CODES[mapped].message);
    return new TetraError(mapped, message);
  }
  if (e instanceof SyntaxError) return new TetraError('INVALID_JSON', 'request body is not valid JSON');
  const status = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (status === 404) return new TetraError('NOT_FOUND');
  if (status === 413) return new TetraError('PAYLOAD_TOO_LARGE');
  if (status === 415) return new TetraError('UNSUPPORTED_MEDIA_TYPE');
  if (status >= 400 && status < 500) return new TetraError('VALIDATION_FAILED', 'the request is malformed');
  return new TetraError('INTERNAL', 'internal error', undefined, { cause: err });
}

/** The Retry-After of a RATE_LIMITED error that says when to retry (`details.retryAfterSeconds`). */
export function retryAfterOf(tetra: TetraError): string | undefined {
  const seconds = tetra.code === 'RATE_LIMITED' ? tetra.details?.retryAfterSeconds : undefined;
  return typeof seconds === 'number' ? String(seconds) : undefined;
}

/** Sends the error envelope with the catalogued status; logs what the client never sees. */
export function sendError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const tetra = toTetraError(err);
  if (tetra.status >= 500) request.log.error({ err: tetra.cause ?? tetra }, tetra.message);
  const body: ErrorBody = { error: { code: tetra.code, message: tetra.message } };
  if (tetra.details !== undefined) body.error.details = tetra.details;
  if (tetra.code === 'UNAUTHORIZED') void reply.header('www-authenticate', 'Bearer');
  const retryAfter = retryAfterOf(tetra);
  if (retryAfter !== undefined) void reply.header('retry-after', retryAfter);
  closeWithoutLosingResponse(request, reply);
  return reply.code(tetra.status).type('application/json; charset=utf-8').send(body);
}

// Bounds on what a connection may still send after an early error response before it is
// dropped: LINGER_MAX_MS in all, LINGER_IDLE_MS without data, LINGER_BODY_LIMITS times the
// route's body limit.
const LINGER_MAX_MS = 10_000;
const LINGER_IDLE_MS = 2_000;
const LINGER_BODY_LIMITS = 8;

/**
 * Lets an error response sent while the request body is still arriving (413 on its
 * content-length, 401 or 429 from the auth hook, 415, ...) reach the client.
 *
 * A body of known length within the limit, on a connection that stays open, needs nothing:
 * Node reads and drops it before the next request. Any other body (chunked, or over the limit)
 * could only be skipped by reading it in full, so the connection is closed instead. Node ends a
 * `Connection: close` response with socket.destroySoon(): FIN, then close once the response is
 * flushed. Closing a socket with request bytes unread, or still on their way, makes the kernel
 * answer with a RST, and a client still uploading then sees a write fail (EPIPE, ECONNRESET) or
 * loses the response from its receive buffer before reading it: a reset instead of the 413. So
 * this closes in stages (RFC 9112, 9.6): half-close after the response, read and drop the rest of
 * the body until it ends or the client closes, within the LINGER_* bounds, and only then close.
 */
function closeWithoutLosingResponse(request: FastifyRequest, reply: FastifyReply): void {
  const raw = request.raw;
  const socket = raw.socket;
  if (raw.complete || !(socket instanceof Socket)) return;
  const chunked = raw.headers['transfer-encoding'] !== undefined;
  const length = Number(raw.headers['content-length'] ?? 0);
  if (!chunked && !(length > 0)) return;
  const limit = request.routeOptions.bodyLimit;
  if (chunked || length > limit) void reply.header('connection', 'close');
  const closing = reply.raw.shouldKeepAlive === false || /\bclose\b/i.test(String(reply.getHeader('connection') ?? ''));
  if (!closing) return;

  let dropped = 0;
  // Reading the body here also keeps Node from dumping it; the chunks go nowhere.
  raw.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > LINGER_BODY_LIMITS * limit) socket.destroy();
  });
  const destroySoon = socket.destroySoon;
  // Node calls this when the response has finished, because it says Connection: close.
  socket.destroySoon = function lingeringClose(): void {
    socket.destroySoon = destroySoon;
    if (raw.complete) return destroySoon.call(socket);
    socket.end();
    const deadline = setTimeout(() => socket.destroy(), LINGER_MAX_MS);
    socket.setTimeout(LINGER_IDLE_MS, () => socket.destroy());
    socket.once('close', () => clearTimeout(deadline));
    // The body's last byte is read: nothing more is due, so closing sends no RST.
    raw.once('end', () => destroySoon.call(socket));
  };
}
