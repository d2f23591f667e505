/**
 * When a running query stops before its end: the time limit it was given passed (MongoDB's
 * `maxTimeMS`, a server-wide default), or the client that asked for it closed its connection (as
 * MongoDB kills the operation of a client that disconnected, so its work and its memory go).
 * JavaScript runs one thing at a time, so a deadline can only be noticed where the query looks:
 * long operations call check() at each chunk, where they give up the event loop anyway.
 */

import { performance } from 'node:perf_hooks';

/** What a long operation consults at each chunk. */
export interface Interrupt {
  /** Returns when the operation may go on; throws the reason it must stop. */
  check(): void;
}

/** An operation nothing stops (the engine used as a library, and the one-turn paths). */
export const UNINTERRUPTED: Interrupt = { check() {} };

/** The client an operation runs for. */
export interface ClientWatch {
  /** True once the client is gone (its connection closed). */
  gone(): boolean;
  /** Called once, when an operation stops because the client is gone (the server logs it). */
  abandoned(): void;
}

export interface InterruptOptions {
  /** Milliseconds the operation may run; 0 or undefined: no limit. */
  readonly timeLimitMs?: number;
  /** When the operation started (performance.now()), if before now: the limit counts from then. */
  readonly since?: number;
  /** Throws the error of a time limit passed (each model has its own words for it). */
  readonly timedOut: (timeLimitMs: number) => never;
  readonly client?: ClientWatch;
  /** Throws the error of a client gone (nobody reads it: it ends the operation). */
  readonly clientGone: () => never;
}

/** An Interrupt with a deadline and a client to watch, or UNINTERRUPTED when it has neither. */
export function interruptOf(options: InterruptOptions): Interrupt {
  const limit = options.timeLimitMs ?? 0;
  const client = options.client;
  if (limit <= 0 && client === undefined) return UNINTERRUPTED;
  const deadline = limit > 0 ? (options.since ?? performance.now()) + limit : Infinity;
  return {
    check() {
      if (client !== undefined && client.gone()) {
        client.abandoned();
        options.clientGone();
      }
      if (performance.now() > deadline) options.timedOut(limit);
    },
  };
}
