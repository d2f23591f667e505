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
