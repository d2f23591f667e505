import type { FastifyBaseLogger } from 'fastify';

// pino's types, as Fastify's logger interface names them (pino is Fastify's dependency, not ours).
type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildLoggerOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;

type LogMethod = (...args: unknown[]) => void;

/**
 * request.log, made real on first use. Fastify gives every request a pino child carrying its
 * reqId; making one (bindings serialised, a new prototype chain) is a measurable part of a short
 * request, and at the default level (info) almost no request logs anything. This stands in for
 * the child and makes it only when a line is written, so the lines are the same as before.
 */
export class LazyRequestLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildLoggerOptions;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  /** The real child logger (made once). */
  get #log(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#log.level = level;
  }

  fatal(...args: unknown[]): void {
    (this.#log.fatal as LogMethod)(...args);
  }

  error(...args: unknown[]): void {
    (this.#log.error as LogMethod)(...args);
  }

  warn(...args: unknown[]): void {
    (this.#log.warn as LogMethod)(...args);
  }

  info(...args: unknown[]): void {
    (this.#log.info as LogMethod)(...args);
  }

  debug(...args: unknown[]): void {
    (this.#log.debug as LogMethod)(...args);
  }

  trace(...args: unknown[]): void {
    (this.#log.trace as LogMethod)(...args);
  }

  silent(...args: unknown[]): void {
    (this.#log.silent as LogMethod)(...args);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#log.child(bindings, options);
  }
}

/** Fastify's childLoggerFactory: a LazyRequestLogger in place of a pino child per request. */
export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new LazyRequestLogger(logger, bindings, options) as unknown as FastifyBaseLogger;
}
