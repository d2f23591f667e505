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

/** Converts anything thrown while handling a request into a TetraError. */
export function toTetraError(err: unknown): TetraError {
  if (isTetraError(err)) return err;
  const e = err as FastifyError & { validation?: AjvIssue[]; validationContext?: string };
  if (Array.isArray(e.validation) && e.validation.length > 0) {
    const { message, field } = describeValidation(e.validation[0]!, e.validationContext);
    return new TetraError('VALIDATION_FAILED', message, { field, in: e.validationContext ?? 'body' });
  }
  const mapped = e.code !== undefined ? FASTIFY_CODES[e.code] : undefined;
  if (mapped !== undefined) {
    const message = mapped === 'PAYLOAD_TOO_LARGE' ? 'request body is larger than the configured limit' : ERROR_CODES[mapped].message;
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

/** Sends the error envelope with the catalogued status; logs what the client never sees. */
export function sendError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const tetra = toTetraError(err);
  if (tetra.status >= 500) request.log.error({ err: tetra.cause ?? tetra }, tetra.message);
  const body: ErrorBody = { error: { code: tetra.code, message: tetra.message } };
  if (tetra.details !== undefined) body.error.details = tetra.details;
  if (tetra.code === 'UNAUTHORIZED') void reply.header('www-authenticate', 'Bearer');
  return reply.code(tetra.status).type('application/json; charset=utf-8').send(body);
}
