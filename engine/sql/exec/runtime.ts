import type { Collation } from '../collation.js';
import type { EvalContext } from '../compiled-expr.js';
import type { Catalog } from '../catalog.js';
import type { SqlReader } from '../store/sql-view.js';
import type { SqlSession } from '../session.js';
import { interruptOf, type ClientWatch, type Interrupt } from '../../interrupt.js';
import { sqlFail, type SqlTypeName, type SqlValue } from '../sql-types.js';

/** A row: values in the producing operator's column order. */
export type Row = SqlValue[];

/**
 * Yielded by an operator instead of a row when the statement has run for a while: every operator
 * passes it up unchanged and the driver gives the event loop a turn before pulling again. The
 * generators keep their state meanwhile, so a long scan, sort or aggregate never blocks the
 * process, and the snapshot it reads keeps it consistent.
 */
export const PAUSE = Symbol('pause');
export type Step = Row | typeof PAUSE;

/** An output column of a plan. `qualifier` is the table name or alias it can be referred by. */
export interface PlanColumn {
  name: string;
  type: SqlTypeName;
  qualifier: string | null;
  /** A column that `*` does not expand to (sort keys carried for ORDER BY). */
  hidden?: boolean;
  /** Set when an expression resolved a reference to it: base table scans decode only these. */
  used?: boolean;
  /**
   * A base table's column: `scan` is one object per table occurrence in FROM (shared by its
   * columns), `primaryKey` whether the column is in that table's primary key. GROUP BY reads
   * these for functional dependencies.
   */
  origin?: { scan: object; primaryKey: boolean };
  /**
   * The merged column of a USING / NATURAL join that is one input's column unchanged (the left
   * one, the right one of a RIGHT join, never a FULL join's COALESCE or a cast): PostgreSQL reads
   * them as one variable, so ORDER BY and GROUP BY match `id` with `l.id` (see scope.ts sameSlot).
   */
  sameAs?: PlanColumn;
  /** The collation of a text column (a table's declared one, or its expression's); absent: "default". */
  collation?: Collation;
}

/** One node of EXPLAIN output. */
export interface ExplainNode {
  node: string;
  detail?: string;
  children?: ExplainNode[];
}

/** A compiled query: columns known up front, rows produced by a generator. */
export interface Plan {
  readonly columns: PlanColumn[];
  rows(x: Exec): Generator<Step>;
  explain(): ExplainNode;
}

/** Limits and clock for one request. */
export interface ExecLimits {
  /** Statement time limit in ms (0: none). */
  timeLimitMs: number;
  /** Bytes of rows an operator may hold (sorts, hash tables, groups, materialised CTEs). */
  maxWorkBytes: number;
  /** The request's client, checked with the time limit: a statement whose client is gone stops. */
  client?: ClientWatch | undefined;
}

/** Between pauses the executor runs at most this long... */
const SLICE_MS = 8;
/** ...shared with the statements waiting for their next turn, down to this. */
const MIN_SLICE_MS = 1;

/**
 * Statements paused and waiting for their next turn, process-wide. Each resumed statement runs
 * one slice per event-loop turn, so with N of them new requests would wait N slices before their
 * sockets are read: the slice shrinks as N grows, keeping a turn near SLICE_MS in all.
 */
let waiting = 0;

/** The slice a statement runs now before pausing, in ms. */
export function sliceMs(): number {
  return Math.max(MIN_SLICE_MS, SLICE_MS / (1 + waiting));
}

/** Gives the event loop a turn between two slices of a statement. */
export async function pauseTurn(x: Exec, nextTurn: () => Promise<unknown>): Promise<void> {
  x.beforePause();
  waiting++;
  try {
    await nextTurn();
  } finally {
    waiting--;
  }
  x.resumed();
}

/** PostgreSQL's 57014 for a statement past the time limit. @throws SQL_ERROR */
function statementTimeout(timeLimitMs: number): never {
  sqlFail('57014', `canceling statement due to statement timeout (${timeLimitMs} ms)`);
}

/** PostgreSQL's 57014 for a statement cancelled (its client gone); nobody reads it but the log. @throws SQL_ERROR */
function clientCancel(): never {
  sqlFail('57014', 'canceling statement due to user request: the client closed its connection');
}

/** The state of one statement's execution. */
export class Exec {
  readonly reader: SqlReader;
  readonly catalog: Catalog;
  readonly statementTime: bigint;
  params: readonly SqlValue[];
  readonly limits: ExecLimits;
  /** Enclosing rows for correlated subqueries, innermost last. */
  readonly outer: Row[] = [];
  /** Results of uncorrelated subqueries and materialised CTEs, per plan node. */
  readonly memo = new Map<object, unknown>();
  /** The request's session (nextval's values, settings). */
  session: SqlSession | undefined;
  /**
   * Checks that run once the statement's rows are written (a foreign key's NO ACTION, which
   * PostgreSQL checks at the end of the statement): runAfterStatement.
   */
  readonly afterStatement: Array<() => void> = [];
  readonly #started = performance.now();
  #sliceStart = this.#started;
  #ticks = 0;
  /**
   * The statement's time limit (from its start) and its client (engine/interrupt.ts), made at the
   * first check: most statements end within their first 256 ticks and never need it.
   */
  #interrupt: Interrupt | undefined;

  /** Called synchronously before the driver gives up the event loop (a live reader pins a snapshot). */
  readonly beforePause: () => void;

  constructor(reader: SqlReader, catalog: Catalog, statementTime: bigint, params: readonly SqlValue[], limits: ExecLimits, beforePause: () => void = () => {}) {
    this.beforePause = beforePause;
    this.reader = reader;
    this.catalog = catalog;
    this.statementTime = statementTime;
    this.params = params;
    this.limits = limits;
  }

  /** A fresh evaluation context for one operator. */
  ctx(): EvalContext {
    return { statementTime: this.statementTime, params: this.params, row: undefined, outer: this.outer, exec: this };
  }

  /**
   * Synchronous runs in progress (runSync: a correlated subquery evaluated inside an expression),
   * where a PAUSE would be dropped: tick() holds it back for the first tick outside them.
   */
  syncRuns = 0;
  /** The slice is used up: the next tick outside a synchronous run pauses. */
  #due = false;

  /**
   * Called once per row by scans and loops: true when the current slice is used up (the caller
   * yields PAUSE). Checks the time limit every so often. A slice that ran out inside a synchronous
   * run makes the first tick after it true, so the operator evaluating the subquery pauses after
   * that evaluation, not (by the tick count) up to 256 evaluations later.
   * @throws SQL_ERROR 57014 when the statement ran past the time limit, or its client is gone
   */
  tick(): boolean {
    if ((++this.#ticks & 255) !== 0) return this.#due && this.syncRuns === 0;
    const limits = this.limits;
    (this.#interrupt ??= interruptOf({ timeLimitMs: limits.timeLimitMs, since: this.#started, timedOut: statementTimeout, client: limits.client, clientGone: clientCancel })).check();
    if (performance.now() - this.#sliceStart >= sliceMs()) this.#due = true;
    return this.#due && this.syncRuns === 0;
  }

  /** The driver resumed after a pause. */
  resumed(): void {
    this.#sliceStart = performance.now();
    this.#due = false;
  }

  /** @throws SQL_ERROR 54000 when an operator's rows pass the work memory bound */
  checkWork(bytes: number, what: string): void {
    if (bytes > this.limits.maxWorkBytes) {
      sqlFail('54000', `${what} needs more than ${this.limits.maxWorkBytes} bytes of memory (TETRA_SQL_WORK_BYTES); add a WHERE or LIMIT, or an index for the ORDER BY`);
    }
  }
}

/** Rough bytes of a row held in memory (for work bounds). */
export function rowBytes(row: Row): number {
  let n = 16 + row.length * 40;
  for (const v of row) {
    if (typeof v.value === 'string') n += v.value.length * 2;
    else if (Buffer.isBuffer(v.value)) n += v.value.length;
    else if (v.type === 'jsonb' && v.value !== null) n += 64;
  }
  return n;
}

/**
 * Runs a plan synchronously, for a correlated subquery inside an expression (evaluated once per
 * enclosing row, in the middle of an operator's row, so it cannot yield): no pause is taken, and
 * one that falls due is left to the first tick after it (see Exec.tick).
 */
export function* runSync(plan: Plan, x: Exec): Generator<Row> {
  x.syncRuns++;
  try {
    for (const step of plan.rows(x)) {
      if (step !== PAUSE) yield step;
    }
  } finally {
    x.syncRuns--;
  }
}
