import { TetraError } from '../engine/errors.js';

/**
 * A request body as the service reads it, on every path (Fastify's content-type parser and the
 * fast lane): blank text is no body; '__proto__' and 'constructor' keys stay plain own
 * properties (JSON.parse makes them so, and no route merges a body into another object).
 * @throws INVALID_JSON naming what JSON.parse found wrong
 */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new TetraError('INVALID_JSON', `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * An answer a handler has already serialised, because it can do so more cheaply than
 * JSON.stringify of the whole value (a SQL result's column list is the same for every call of a
 * cached statement, and is serialised once). `text` must be exactly what JSON.stringify of the
 * answer would give. The fast lane writes it as it is; a Fastify route hands it to `fastifyAnswer`.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** A handler's value as a Fastify route returns it: a JsonText is sent as its JSON text. */
export function fastifyAnswer(value: unknown, reply: { type(contentType: string): unknown }): unknown {
  if (!(value instanceof JsonText)) return value;
  reply.type('application/json; charset=utf-8');
  return value.text;
}
