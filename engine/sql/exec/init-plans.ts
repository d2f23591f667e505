import { isTetraError } from '../../errors.js';
import { PAUSE, type Exec, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';

/**
 * What evaluating an init plan raised (see InitPlans.materialise): kept in Exec.memo in place of
 * its rows and thrown where the subquery is first needed.
 */
class Failed {
  constructor(readonly error: unknown) {}
}

interface Entry {
  /** The plans of one subquery (planned once per place it is compiled in: see register). */
  plans: Plan[];
  /** Rows the subquery's use reads at most: 2 for a scalar or row subquery, 1 for EXISTS. */
  limit: number;
  node: object;
  ctes: object;
}

/**
 * The uncorrelated subqueries inside a statement's expressions (PostgreSQL's InitPlans): they read
 * nothing of any enclosing row, so each gives one result per statement, kept in Exec.memo. They
 * are run before the statement's own rows, through the generator protocol: a long one pauses like
 * any operator instead of holding the event loop while an expression waits for it, which is
 * synchronous. A statement's plan carries its set, so a cached plan materialises them again at
 * every run (memo is per Exec).
 *
 * PostgreSQL runs an InitPlan only when a row first needs it; these run whether or not one does.
 * What that can change is kept out of sight: an error of the subquery's own evaluation (a
 * division by zero, 21000 of a scalar subquery inside it) is kept and raised at the first use,
 * so a subquery that is never needed raises nothing, as in PostgreSQL. Only its time (and its
 * share of the statement time limit) is spent in vain.
 */
export class InitPlans {
  readonly #entries: Entry[] = [];

  get size(): number {
    return this.#entries.length;
  }

  /**
   * Registers an uncorrelated subquery's plan, `limit` rows of which its use reads. A subquery
   * compiled twice (a WHERE both pushed down to a scan and kept above it, a parenthesised join
   * planned again with its conditions) comes as one AST node planned twice with the same CTEs in
   * sight: reading nothing of its surroundings, both plans give the same rows, computed once.
   */
  register(node: object, ctes: object, plan: Plan, limit: number): void {
    const same = this.#entries.find((e) => e.node === node && e.ctes === ctes && e.limit === limit);
    if (same !== undefined) same.plans.push(plan);
    else this.#entries.push({ plans: [plan], limit, node, ctes });
  }

  /**
   * Runs every registered subquery not yet in `x.memo` and stores its rows (or what it raised)
   * there, yielding PAUSE as its operators do. Inner ones were registered first (a subquery's own
   * subqueries are planned while it is), so an outer one finds them computed.
   * @throws SQL_ERROR 57014 (the statement time limit) and any error that is not the evaluation
   * of a subquery's rows (internal errors, resources): they end the statement at once
   */
  *materialise(x: Exec): Generator<Step> {
    for (const entry of this.#entries) {
      if (x.memo.has(entry.plans[0]!)) continue;
      let result: Row[] | Failed;
      const rows: Row[] = [];
      // An uncorrelated plan reads no enclosing row; the level is pushed as subRows pushes it.
      x.outer.push([]);
      try {
        for (const step of entry.plans[0]!.rows(x)) {
          if (step === PAUSE) {
            yield PAUSE;
            continue;
          }
          rows.push(step);
          if (rows.length >= entry.limit) break;
        }
        result = rows;
      } catch (err) {
        if (!deferrable(err)) throw err;
        result = new Failed(err);
      } finally {
        x.outer.pop();
      }
      for (const p of entry.plans) x.memo.set(p, result);
    }
  }
}

/**
 * An error a subquery's evaluation raises about its data, which PostgreSQL raises only where the
 * subquery is needed: any SQL error but a cancel (class 57: the time limit), a lack of resources
 * (53), a lost connection (08) or an internal one (XX).
 */
function deferrable(err: unknown): boolean {
  if (!isTetraError(err, 'SQL_ERROR')) return false;
  const state = String(err.details?.sqlstate ?? 'XX000');
  return !['57', '53', '08', 'XX'].includes(state.slice(0, 2));
}

/**
 * The rows of an uncorrelated subquery this statement materialised, or undefined when it has not.
 * @throws what the subquery's evaluation raised, when it failed
 */
export function memoisedRows(x: Exec, plan: Plan): Row[] | undefined {
  const m = x.memo.get(plan) as Row[] | Failed | undefined;
  if (m instanceof Failed) throw m.error;
  return m;
}

/** A statement's query with the init plans of its expressions, materialised before its rows. */
export class InitPlanned implements Plan {
  constructor(
    readonly input: Plan,
    readonly inits: InitPlans,
  ) {}

  get columns(): PlanColumn[] {
    return this.input.columns;
  }

  *rows(x: Exec): Generator<Step> {
    yield* this.inits.materialise(x);
    yield* this.input.rows(x);
  }

  explain(): ExplainNode {
    return this.input.explain();
  }
}
