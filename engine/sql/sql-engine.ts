import { setImmediate as nextTurn } from 'node:timers/promises';
import { reportedTypeName } from './enum-types.js';
import { runTypeStatement } from './exec/type-ddl.js';
import type { TypeStatement } from './type-statements.js';
import nodeSqlParser from 'node-sql-parser';
import { TetraError } from '../errors.js';
import type { BatchOp, TenantStore } from '../tenant/index.js';
import { Catalog, SEQUENCE_TREE } from './catalog.js';
import type { AstNode } from './expression-eval.js';
import { unsupported } from './expression-eval.js';
import { paramsFromJson } from './sql-params.js';
import { restoreLiterals } from './sql-literals.js';
import { prepareStatements, type LockingClause, type Prepared as PreparedText } from './sql-rewrite.js';
import { isAggregateName } from './aggregates.js';
import { COLLATE_MARKER, COLLATION_NAME } from './sql-grammar-gaps.js';
import { clauseNameParts, markerNameParts, type NamePart } from './collation.js';
import type { SqlColumn, SqlOptions, SqlOutcome, SqlResult, SqlStatementInput } from './sql-api.js';
import { LiveReader, SnapshotReader, TxnView, type SqlReader } from './store/sql-view.js';
import { sqlFail, toText, type NonNullSqlValue, type SqlValue } from './sql-types.js';
import { toJsValue } from './select-expressions.js';
import { alterTable, createIndex, createTable, createTableAs, dropIndex, dropTables, truncateTables } from './exec/ddl.js';
import { deleteRows, insert, update, type DmlResult } from './exec/dml.js';
import { shownName, SqlSession, type SettingStatement } from './session.js';
import type { IdentityChange, SequenceStatement } from './sequence-options.js';
import { relationNameOf, sequenceKeyExists } from './sequences.js';
import { alterIdentity } from './exec/identity-ddl.js';
import { applyComment, type CommentStatement } from './comments.js';
import { alterSequence, createSequence, dropSequences } from './exec/sequence-ddl.js';
import { Exec, PAUSE, pauseTurn, type ExecLimits, type ExplainNode, type Plan, type PlanColumn, type Row, type Step } from './exec/runtime.js';
import { functionName, planQuery, type PlanEnv } from './exec/select.js';
import { InitPlanned, InitPlans } from './exec/init-plans.js';
import { alterView, createView, dropViews, type AlterViewStatement, type CreateViewStatement } from './exec/views.js';
import { writeThroughViews } from './exec/view-writes.js';

const { Parser } = nodeSqlParser;
const parser = new Parser();

/** Defaults for SqlOptions (the server passes its configuration). */
export const SQL_DEFAULTS = {
  rowMode: 'object' as 'object' | 'array',
  timeLimitMs: 30_000,
  maxRows: 100_000,
  maxResultBytes: 32 * 1024 * 1024,
  maxWorkBytes: 64 * 1024 * 1024,
  maxTxnBytes: 256 * 1024 * 1024,
};

/** Distinct statement texts whose parse (and plans) each tenant keeps. */
const PARSE_CACHE_ENTRIES = 256;

type Ast = AstNode & Record<string, any>;

interface Parsed {
  statements: Ast[];
  explain: boolean;
  /** TenantSql.uses when last parsed or looked up: the least recent is evicted. */
  used: number;
}

interface TenantSql {
  catalog: Catalog | undefined;
  parsed: Map<string, Parsed>;
  /** Lookups of `parsed` so far (a clock for its eviction). */
  uses: number;
  /** Read plans by statement text + parameter types, valid for one catalog version. */
  plans: Map<string, { version: number; plan: Plan }>;
  /** The tail of the writer queue: one write transaction at a time per tenant. */
  writer: Promise<void>;
}

const tenants = new WeakMap<TenantStore, TenantSql>();

function stateOf(store: TenantStore): TenantSql {
  let s = tenants.get(store);
  if (s === undefined) {
    s = { catalog: undefined, parsed: new Map(), uses: 0, plans: new Map(), writer: Promise.resolve() };
    tenants.set(store, s);
  }
  return s;
}

function catalogOf(s: TenantSql, reader: SqlReader): Catalog {
  s.catalog ??= Catalog.load(reader, 1);
  return s.catalog;
}

/** Parses (once per distinct text) into statements. @throws SQL_ERROR 42601 */
function parse(s: TenantSql, sql: string): Parsed {
  const cached = s.parsed.get(sql);
  if (cached !== undefined) {
    // Marked rather than moved to the end of the map (a delete and a set on every hit).
    cached.used = ++s.uses;
    return cached;
  }
  let text = sql;
  let explain = false;
  const m = /^\s*EXPLAIN\s+(ANALYZE\s+)?/i.exec(text);
  if (m !== null) {
    if (m[1] !== undefined) unsupported('EXPLAIN ANALYZE');
    explain = true;
    text = text.slice(m[0].length);
  }
  const statements: Ast[] = [];
  const base = sql.length - text.length;
  for (const prepared of prepareStatements(text)) statements.push(...parsePrepared(prepared, base));
  if (statements.length === 0) sqlFail('42601', 'empty query');
  if (explain && statements.length !== 1) unsupported('EXPLAIN of several statements');
  const parsed = { statements, explain, used: ++s.uses };
  if (s.parsed.size >= PARSE_CACHE_ENTRIES) {
    // The least recently used goes: a scan of the entries, rare next to the parse it follows.
    let oldest: string | undefined;
    let oldestUse = Infinity;
    for (const [text, p] of s.parsed) {
      if (p.used < oldestUse) {
        oldestUse = p.used;
        oldest = text;
      }
    }
    s.parsed.delete(oldest!);
  }
  s.parsed.set(sql, parsed);
  return parsed;
}

/** The statements of one prepared statement (sql-rewrite.ts); `base`: where the request's text starts. @throws SQL_ERROR 42601 */
function parsePrepared(prepared: PreparedText, base: number): Ast[] {
  if ('ast' in prepared) {
    const built = prepared.ast as Ast;
    if (built.type === 'create_view') {
      // The view's query, prepared on its own: one query.
      const st = built as unknown as CreateViewStatement;
      const query = parsePrepared(st.query as PreparedText, base);
      if (query.length !== 1 || query[0]!.type !== 'select') sqlFail('42601', 'syntax error: CREATE VIEW ... AS needs one query');
      st.ast = query[0]!;
    }
    return [built];
  }
  let ast: unknown;
  try {
    ast = parser.astify(prepared.text, { database: 'PostgreSQL' });
  } catch (err) {
    const e = err as { message: string; location?: { start?: { offset?: number } } };
    const at = e.location?.start?.offset;
    // Positions are 1-based in the request's text (unknown for a statement rewritten first).
    const position = at === undefined || prepared.offset < 0 ? undefined : at + 1 + prepared.offset + base;
    throw new TetraError('SQL_ERROR', `syntax error: ${e.message.split('\n')[0]}`, position === undefined ? { sqlstate: '42601' } : { sqlstate: '42601', position });
  }
  if (prepared.literals !== undefined) restoreLiterals(ast, prepared.literals);
  const statements: Ast[] = [];
  for (const a of Array.isArray(ast) ? ast : [ast]) {
    if (a === null || a === undefined) continue;
    const statement = mendParse(a) as Ast;
    if (prepared.locking !== undefined) {
      if (statement.type !== 'select') sqlFail('42601', 'syntax error at or near "FOR"');
      checkLocking(statement, prepared.locking);
    }
    statements.push(statement);
  }
  return statements;
}

/**
 * Mends misreadings of node-sql-parser, once per parse, in place (and refuses `col AT TIME ZONE
 * z`, which the parser keeps on the column reference and nothing reads: 0A000; a COLLATE after
 * a column reference becomes the call the pre-pass makes of every other one):
 * - a select item that is a parameter cast (`SELECT $1::int AS a`) comes as the cast node itself,
 *   with `as` on it, instead of {type: 'expr', expr, as}; readers that unwrap `item.expr` would
 *   then take the parameter and drop the cast: it is wrapped;
 * - a subquery `(SELECT (x) ...)` whose select list starts with a parenthesised expression and
 *   that has no FROM comes as a call of a function named SELECT (`(SELECT (SELECT 1))`, `(SELECT
 *   (g.k))`, `EXISTS (SELECT (1))`): it becomes the scalar subquery `(SELECT x)`. SELECT is a
 *   reserved word in PostgreSQL, so no function has that name; what the parser leaves outside the
 *   call (`(SELECT (a) + b)` as `select(a) + b`) then reads `(SELECT a) + b`, the same value,
 *   since a subquery without FROM gives exactly one row.
 */
/**
 * A SELECT's locking clauses, checked as PostgreSQL's CheckSelectLocking and transformLockingClause
 * check them (0A000 beside UNION / INTERSECT / EXCEPT, DISTINCT, GROUP BY, HAVING, aggregates and
 * window functions; 42P01 for an OF name not in FROM). They lock nothing: a request is one
 * transaction and writing requests run one at a time per tenant.
 * @throws SQL_ERROR 0A000, 42P01
 */
function checkLocking(ast: Ast, clauses: LockingClause[]): void {
  for (const c of clauses) {
    const refuse = (what: string): never => sqlFail('0A000', `${c.strength} is not allowed with ${what}`);
    if (ast._next) refuse('UNION/INTERSECT/EXCEPT');
    if ((ast.distinct as { type?: unknown } | null | undefined)?.type) refuse('DISTINCT clause');
    const group = ast.groupby as { columns?: unknown[] } | unknown[] | null | undefined;
    if (group && (Array.isArray(group) ? group.length > 0 : (group.columns?.length ?? 0) > 0)) refuse('GROUP BY clause');
    if (ast.having) refuse('HAVING clause');
    const calls = { aggregate: false, window: false };
    const walk = (n: unknown): void => {
      if (n === null || typeof n !== 'object') return;
      if (Array.isArray(n)) {
        for (const x of n) walk(x);
        return;
      }
      const o = n as Ast;
      // A subquery's calls are its own.
      if (o.ast !== undefined || o.type === 'select') return;
      if (o.type === 'window_func' || ((o.type === 'aggr_func' || o.type === 'function') && o.over)) calls.window = true;
      else if (o.type === 'aggr_func' || (o.type === 'function' && isAggregateName(functionName(o)))) calls.aggregate = true;
      for (const k of Object.keys(o)) if (k !== 'loc') walk(o[k]);
    };
    walk([ast.columns, ast.orderby]);
    if (calls.aggregate) refuse('aggregate functions');
    if (calls.window) refuse('window functions');
    const names = new Set<string>();
    const collect = (items: unknown): void => {
      for (const f of (Array.isArray(items) ? items : []) as Ast[]) {
        if (f.as) names.add(String(f.as).toLowerCase());
        else if (f.table) names.add(String(f.table).toLowerCase());
        if (f.expr?.ast !== undefined && f.as) names.add(String(f.as).toLowerCase());
      }
    };
    collect(ast.from);
    for (const name of c.of) if (!names.has(name)) sqlFail('42P01', `relation "${name}" in ${c.strength} clause not found in FROM clause`);
  }
}

function mendParse(node: unknown): unknown {
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) node[i] = mendParse(node[i]);
    return node;
  }
  if (node === null || typeof node !== 'object') return node;
  const o = node as Record<string, unknown>;
  // `col AT TIME ZONE z`: the parser keeps the clause on the column reference, where nothing reads it.
  if (o.type === 'column_ref' && JSON.stringify(o.options ?? null).toLowerCase().includes('"at time zone"')) unsupported('AT TIME ZONE');
  // `f() AT TIME ZONE z` the pre-pass did not rewrite: the parser keeps it as a suffix nothing reads.
  if (o.type === 'function' && JSON.stringify(o.suffix ?? null).toLowerCase().includes('"at time zone"')) unsupported('AT TIME ZONE');
  if (o.type === 'column_ref' && o.collate !== null && o.collate !== undefined) {
    // `col COLLATE name`, which the parser reads itself, as the marker call the pre-pass makes of
    // every other operand (sql-grammar-gaps.ts rewriteCollate).
    const { collate, ...ref } = o;
    return collateCall({ ...ref, collate: null }, clauseNameParts(collate));
  }
  if (o.type === 'function' && isCollateCall(o)) {
    const args = (o.args as { value: unknown[] }).value;
    return collateCall(mendParse(args[0]), markerNameParts(args[1]));
  }
  const select = selectCallArgument(o);
  if (select !== undefined) {
    const columns = [{ type: 'expr', expr: mendParse(select), as: null }];
    const sub = { type: 'select', with: null, options: null, distinct: { type: null }, columns, into: { position: null }, from: null, where: null, groupby: null, having: null, orderby: null, limit: { seperator: '', value: [] }, window: null };
    return { tableList: [], columnList: [], ast: sub, ...(o.parentheses === true ? { parentheses: true } : {}) };
  }
  for (const [k, v] of Object.entries(o)) {
    if (k === 'index_columns' && Array.isArray(v)) {
      // An index element's own COLLATE stays where CREATE INDEX reads it.
      o[k] = v.map((item: unknown) => {
        const i = item as Record<string, unknown>;
        const collate = i.collate;
        const mended = mendParse({ ...i, collate: null }) as Record<string, unknown>;
        return { ...mended, collate };
      });
    } else if (k === 'columns' && Array.isArray(v)) {
      o[k] = v.map((item: unknown) => {
        const i = item as Record<string, unknown> | null;
        if (i === null || typeof i !== 'object' || i.type !== 'cast' || !('as' in i)) return mendParse(item);
        const { as, ...cast } = i;
        return { type: 'expr', expr: mendParse(cast), as };
      });
    } else {
      o[k] = mendParse(v);
    }
  }
  return node;
}

/** The marker call `x COLLATE name` stands for, its name as a COLLATION_NAME node. */
function collateCall(operand: unknown, parts: NamePart[]): Record<string, unknown> {
  return { type: 'function', name: { name: [{ type: 'default', value: COLLATE_MARKER }] }, args: { type: 'expr_list', value: [operand, { type: COLLATION_NAME, parts }] } };
}

function isCollateCall(o: Record<string, unknown>): boolean {
  const parts = (o.name as { name?: { value?: unknown }[] } | undefined)?.name;
  return parts?.length === 1 && parts[0]!.value === COLLATE_MARKER;
}

/** The argument of a call of a function named SELECT (unquoted, one argument): see mendParse. */
function selectCallArgument(o: Record<string, unknown>): unknown {
  if (o.type !== 'function' || (o.over !== undefined && o.over !== null)) return undefined;
  const parts = (o.name as { name?: { type?: unknown; value?: unknown }[] } | undefined)?.name;
  if (parts?.length !== 1 || parts[0]!.type !== 'default' || String(parts[0]!.value).toUpperCase() !== 'SELECT') return undefined;
  const args = (o.args as { type?: unknown; value?: unknown } | undefined)?.value;
  return Array.isArray(args) && args.length === 1 ? args[0] : undefined;
}

/** SELECTs that call nextval or setval, which write (memo per parsed statement). */
const SEQUENCE_WRITERS = new WeakMap<Ast, boolean>();

function writesSequence(a: Ast): boolean {
  let writes = SEQUENCE_WRITERS.get(a);
  if (writes === undefined) {
    const visit = (node: unknown): boolean => {
      if (node === null || typeof node !== 'object') return false;
      if (Array.isArray(node)) return node.some(visit);
      const n = node as Ast;
      if (n.type === 'function') {
        const name = String((n.name as { name?: { value?: unknown }[] } | undefined)?.name?.[0]?.value ?? '').toLowerCase();
        if (name === 'nextval' || name === 'setval') return true;
      }
      return Object.values(n).some(visit);
    };
    writes = visit(a);
    SEQUENCE_WRITERS.set(a, writes);
  }
  return writes;
}

function isRead(a: Ast): boolean {
  // A SELECT that calls nextval or setval runs as a writing request (one writer at a time, committed).
  if (a.type === 'select') return !writesSequence(a);
  if (a.type === 'setting') return true;
  if (a.type !== 'transaction') return false;
  // Savepoints need the transaction's state (ROLLBACK TO a name never set is 3B001): a request
  // using them runs as a writing one, even when it writes nothing.
  const action = String((a.expr as Ast | undefined)?.action?.value ?? '').toUpperCase();
  return action !== 'SAVEPOINT' && action !== 'ROLLBACK TO' && action !== 'RELEASE';
}

/** A request parsed and ready to run. */
interface Prepared {
  s: TenantSql;
  opts: typeof SQL_DEFAULTS & SqlOptions;
  work: { ast: Ast; explain: boolean; params: SqlValue[]; text: string }[];
  statementTime: bigint;
  limits: ExecLimits;
  readOnly: boolean;
  /** PostgreSQL's session state, for this request. */
  session: SqlSession;
}

function prepare(store: TenantStore, inputs: readonly SqlStatementInput[], options: SqlOptions): Prepared {
  const s = stateOf(store);
  // A literal of one shape rather than a spread of two objects: made once per request.
  const opts: typeof SQL_DEFAULTS & SqlOptions = {
    rowMode: options.rowMode ?? SQL_DEFAULTS.rowMode,
    timeLimitMs: options.timeLimitMs ?? SQL_DEFAULTS.timeLimitMs,
    maxRows: options.maxRows ?? SQL_DEFAULTS.maxRows,
    maxResultBytes: options.maxResultBytes ?? SQL_DEFAULTS.maxResultBytes,
    maxWorkBytes: options.maxWorkBytes ?? SQL_DEFAULTS.maxWorkBytes,
    maxTxnBytes: options.maxTxnBytes ?? SQL_DEFAULTS.maxTxnBytes,
    now: options.now,
  };
  const work: Prepared['work'] = [];
  // Plans are cached per statement: its text, and its place among the text's statements.
  for (const input of inputs) {
    if (typeof input.sql !== 'string' || input.sql.trim() === '') sqlFail('42601', 'empty query');
    const parsed = parse(s, input.sql);
    const params = paramsFromJson(input.params ?? []);
    if (parsed.statements.length > 1 && params.length > 0) sqlFail('42601', 'cannot insert multiple commands into a prepared statement (params need a single statement)');
    for (let i = 0; i < parsed.statements.length; i++) work.push({ ast: parsed.statements[i]!, explain: parsed.explain, params, text: i === 0 ? input.sql : `${input.sql}\u0000#${i}` });
  }
  // Microseconds; a Number while exact (any date within ~285 years of 1970), else through bigint.
  const ms = opts.now === undefined ? Date.now() : opts.now.getTime();
  const statementTime = Number.isSafeInteger(ms * 1000) ? BigInt(ms * 1000) : BigInt(ms) * 1000n;
  const limits = { timeLimitMs: opts.timeLimitMs, maxWorkBytes: opts.maxWorkBytes, client: options.client };
  const readOnly = work.every((w) => w.explain || isRead(w.ast));
  return { s, opts, work, statementTime, limits, readOnly, session: new SqlSession(undefined, limits) };
}

/**
 * Runs a request: one or more statement inputs, in order, as one atomic transaction.
 * Read-only requests run on one snapshot without waiting for anyone; requests that write run
 * one at a time per tenant over a transaction view, committed as one atomic batch.
 *
 * A single SELECT that finishes within its first slice (a point or short range read) is answered
 * in the calling turn, as a value rather than a promise: no turns of the microtask queue. Errors
 * always come as a rejected promise, never thrown.
 * @throws SQL_ERROR with details.sqlstate (and position for syntax errors); nothing is changed
 */
export function sqlExecute(store: TenantStore, inputs: readonly SqlStatementInput[], options: SqlOptions = {}): SqlOutcome | Promise<SqlOutcome> {
  let p: Prepared;
  try {
    p = prepare(store, inputs, options);
    const w = p.work[0]!;
    if (p.work.length === 1 && !w.explain && w.ast.type === 'select' && p.readOnly) {
      const reader = new LiveReader(store);
      let closeNow = true;
      try {
        const x = new Exec(reader, catalogOf(p.s, reader), p.statementTime, w.params, p.limits, () => reader.pin());
        x.session = p.session;
        const result = selectStatement(w.ast, w.text, x, undefined, p.s, p.opts);
        if (!(result instanceof Promise)) return { results: [result], durable: undefined };
        // Paused: the reader pinned a snapshot, released once the statement is done.
        closeNow = false;
        return result.then((r) => ({ results: [r], durable: undefined })).finally(() => reader.close());
      } finally {
        if (closeNow) reader.close();
      }
    }
  } catch (err) {
    return Promise.reject(err);
  }
  return runPrepared(store, p);
}

/** True when a statement's AST holds a query below its top (a subquery, or INSERT's SELECT). */
function hasSubquery(ast: Ast): boolean {
  const visit = (node: unknown, top: boolean): boolean => {
    if (Array.isArray(node)) return node.some((n) => visit(n, false));
    if (node === null || typeof node !== 'object') return false;
    if (!top && (node as Ast).type === 'select') return true;
    return Object.values(node).some((v) => visit(v, false));
  };
  return visit(ast, true);
}

async function runPrepared(store: TenantStore, p: Prepared): Promise<SqlOutcome> {
  const { s, opts, work, statementTime, limits, readOnly } = p;
  if (readOnly && work.length === 1) {
    const reader = new LiveReader(store);
    try {
      const catalog = catalogOf(s, reader);
      const w = work[0]!;
      const x = new Exec(reader, catalog, statementTime, w.params, limits, () => reader.pin());
      x.session = p.session;
      return { results: [await runStatement(w.ast, w.explain, w.text, x, undefined, s, opts)], durable: undefined };
    } finally {
      reader.close();
    }
  }
  if (readOnly) {
    const snapshot = store.snapshot();
    try {
      const reader = new SnapshotReader(snapshot);
      const catalog = catalogOf(s, reader);
      const results: SqlResult[] = [];
      for (const w of work) {
        const x = new Exec(reader, catalog, statementTime, w.params, limits);
        x.session = p.session;
        results.push(await runStatement(w.ast, w.explain, w.text, x, undefined, s, opts));
      }
      return { results, durable: undefined };
    } finally {
      snapshot.close();
    }
  }
  // One writer at a time per tenant.
  const previous = s.writer;
  let release!: () => void;
  s.writer = new Promise<void>((r) => (release = r));
  await previous;
  try {
    const view = new TxnView(store, opts.maxTxnBytes);
    const base = catalogOf(s, view);
    const txn: Txn = { view, catalog: base, changedCatalog: false, savepoint: undefined, owned: false, savepoints: [], session: p.session };
    p.session.view = view;
    const results: SqlResult[] = [];
    for (const w of work) {
      const x = new Exec(view, txn.catalog, statementTime, w.params, limits);
      x.session = txn.session;
      results.push(await runStatement(w.ast, w.explain, w.text, x, txn, s, opts));
    }
    const ops = view.batch();
    let durable: Promise<void> | undefined;
    if (ops.length > 0) {
      const written = store.write(ops);
      // Applied synchronously: later readers see the new catalog together with the new rows.
      if (txn.changedCatalog) {
        s.catalog = txn.catalog;
        s.catalog.version = base.version + 1 + Math.random();
        s.plans.clear();
        s.parsed.clear();
      }
      durable = written.then(() => undefined);
    }
    return { results, durable };
  } catch (err) {
    keepSequenceAdvances(store, s, p.session);
    throw err;
  } finally {
    release();
  }
}

/**
 * A failed request writes nothing, except what its nextval and setval calls left: PostgreSQL
 * never undoes those, so a value a failed INSERT took is not given again. Written on their own, in
 * the writer's turn, for the sequences the committed catalog still has; not awaited (the request
 * fails anyway, and a later request reads them at once).
 */
function keepSequenceAdvances(store: TenantStore, s: TenantSql, session: SqlSession): void {
  if (s.catalog === undefined) return;
  const ops: BatchOp[] = sequenceAdvances(session, s.catalog).map(([key, value]) => ({ op: 'put', tree: SEQUENCE_TREE, key, value }));
  if (ops.length === 0) return;
  try {
    store.write(ops).catch(() => undefined);
  } catch {
    // A store that refuses writes (failed, closed) refuses these too; the request's own error stands.
  }
}

/** After a ROLLBACK: the states nextval and setval left go back into the transaction (they are never undone). */
function restoreSequenceAdvances(txn: Txn): void {
  for (const [key, state] of sequenceAdvances(txn.session, txn.catalog)) txn.view.put(SEQUENCE_TREE, key, state);
}

/** The states the session's nextval and setval left, for the sequences `catalog` has: [key, state]. */
function sequenceAdvances(session: SqlSession, catalog: Catalog): [Buffer, Buffer][] {
  const out: [Buffer, Buffer][] = [];
  for (const [k, state] of session.advanced()) {
    const key = Buffer.from(k, 'latin1');
    if (sequenceKeyExists(catalog, key)) out.push([key, state]);
  }
  return out;
}

interface SavedState {
  state: ReturnType<TxnView['save']>;
  catalog: Catalog;
  changed: boolean;
}

interface Txn {
  view: TxnView;
  catalog: Catalog;
  changedCatalog: boolean;
  savepoint: SavedState | undefined;
  /** The catalog object is this transaction's own copy (DDL may change it in place). */
  owned: boolean;
  /** SAVEPOINT name ... ROLLBACK TO name / RELEASE name, innermost last. */
  savepoints: (SavedState & { name: string })[];
  /** The request's session: what it drew from sequences (currval, lastval), its settings. */
  session: SqlSession;
}

/** Pulls a generator to completion, giving the event loop a turn at every PAUSE. */
async function drive<T>(gen: Generator<Step, T>, x: Exec): Promise<T> {
  for (;;) {
    const r = gen.next();
    if (r.done === true) return r.value;
    if (r.value === PAUSE) await pauseTurn(x, nextTurn);
  }
}

/**
 * A SELECT's result: planned (or its plan taken from the cache), its rows pulled in this turn
 * until the first PAUSE; only a statement that pauses continues asynchronously.
 */
function selectStatement(ast: Ast, text: string, x: Exec, txn: Txn | undefined, s: TenantSql, opts: typeof SQL_DEFAULTS & SqlOptions): SqlResult | Promise<SqlResult> {
  let plan: Plan;
  const params = x.params;
  const key = params.length === 0 ? text : params.length === 1 ? `${text}\u0000${params[0]!.type}` : `${text}\u0000${params.map((p) => p.type).join(',')}`;
  const cached = txn === undefined ? s.plans.get(key) : undefined;
  if (cached !== undefined && cached.version === x.catalog.version) plan = cached.plan;
  else {
    // The init plans travel with the cached plan: each run materialises them in its own memo.
    const initPlans = new InitPlans();
    plan = planQuery(ast, { catalog: x.catalog, params, parent: undefined, ctes: new Map(), initPlans });
    if (initPlans.size > 0) plan = new InitPlanned(plan, initPlans);
    if (txn === undefined) {
      s.plans.set(key, { version: x.catalog.version, plan });
      if (s.plans.size > PARSE_CACHE_ENTRIES) s.plans.delete(s.plans.keys().next().value as string);
    }
  }
  const rows: Row[] = [];
  const gen = plan.rows(x);
  const done = (): SqlResult => finishShaped('SELECT', shapeOf(plan), rows, rows.length, opts);
  return pull(gen, rows, opts.maxRows) ? done() : collectRest(gen, rows, x, opts.maxRows).then(done);
}

/** Pulls rows into `rows` until the generator ends (true) or pauses (false). */
function pull(gen: Generator<Step>, rows: Row[], maxRows: number): boolean {
  for (;;) {
    const r = gen.next();
    if (r.done === true) return true;
    if (r.value === PAUSE) return false;
    rows.push(r.value);
    if (rows.length > maxRows) sqlFail('54000', `the result has more than ${maxRows} rows (TETRA_SQL_MAX_ROWS); add a LIMIT or narrow the WHERE`);
  }
}

/** The rest of a paused generator's rows, a turn of the event loop between slices. */
async function collectRest(gen: Generator<Step>, rows: Row[], x: Exec, maxRows: number): Promise<void> {
  do await pauseTurn(x, nextTurn);
  while (!pull(gen, rows, maxRows));
}

function mutableCatalog(txn: Txn): Catalog {
  // Copy on first change after the start or a savepoint: saved states keep their catalog.
  if (!txn.owned) {
    txn.catalog = txn.catalog.clone();
    txn.owned = true;
  }
  txn.changedCatalog = true;
  return txn.catalog;
}

async function runStatement(ast: Ast, explain: boolean, text: string, x: Exec, txn: Txn | undefined, s: TenantSql, opts: typeof SQL_DEFAULTS & SqlOptions): Promise<SqlResult> {
  // DML materialises its init plans itself, once it is planned (see dml.ts); EXPLAIN runs nothing.
  const envOf = (initPlans?: InitPlans): PlanEnv => ({ catalog: x.catalog, params: x.params, parent: undefined, ctes: new Map(), ...(initPlans === undefined ? {} : { initPlans }) });
  if (explain) {
    if (ast.type !== 'select') unsupported(`EXPLAIN ${String(ast.type).toUpperCase()} (EXPLAIN shows query plans)`);
    const plan = planQuery(ast, envOf());
    const lines: string[] = [];
    const walk = (n: ExplainNode, depth: number): void => {
      lines.push(`${depth === 0 ? '' : `${'  '.repeat(depth)}->  `}${n.node}${n.detail ? `  (${n.detail})` : ''}`);
      for (const c of n.children ?? []) walk(c, depth + 1);
    };
    walk(plan.explain(), 0);
    return finish('EXPLAIN', [{ name: 'QUERY PLAN', type: 'text', qualifier: null }], lines.map((l) => [{ type: 'text', value: l }]), lines.length, opts);
  }
  switch (ast.type) {
    case 'select':
      return selectStatement(ast, text, x, txn, s, opts);
    case 'transaction': {
      const action = String(ast.expr?.action?.value ?? '').toUpperCase();
      if (txn === undefined) return finish(action === 'START' ? 'BEGIN' : action, [], [], 0, opts);
      const save = (): SavedState => ({ state: txn.view.save(), catalog: txn.catalog, changed: txn.changedCatalog });
      const restore = (to: SavedState): void => {
        txn.view.restore(to.state);
        txn.catalog = to.catalog;
        txn.changedCatalog = to.changed;
        txn.owned = false;
        restoreSequenceAdvances(txn);
      };
      const named = (): number => {
        const name = String(ast.expr?.savepoint);
        const at = txn.savepoints.map((p) => p.name).lastIndexOf(name);
        if (at < 0) sqlFail('3B001', `savepoint "${name}" does not exist`);
        return at;
      };
      if (action === 'SAVEPOINT') {
        // A catalog changed later must not change the saved one: DDL clones before changing.
        txn.savepoints.push({ name: String(ast.expr?.savepoint), ...save() });
        txn.owned = false;
        return finish('SAVEPOINT', [], [], 0, opts);
      }
      if (action === 'RELEASE') {
        txn.savepoints.length = named();
        return finish('RELEASE', [], [], 0, opts);
      }
      if (action === 'ROLLBACK TO') {
        const at = named();
        const p = txn.savepoints[at]!;
        restore(p);
        // The savepoint stays (a later ROLLBACK TO it works again); later ones go.
        txn.savepoints.length = at + 1;
        txn.savepoints[at] = { name: p.name, ...save() };
        txn.owned = false;
        return finish('ROLLBACK', [], [], 0, opts);
      }
      if (action === 'BEGIN' || action === 'START') {
        txn.savepoint = save();
        txn.owned = false;
        return finish('BEGIN', [], [], 0, opts);
      }
      if (action === 'COMMIT' || action === 'END') {
        txn.savepoint = undefined;
        return finish('COMMIT', [], [], 0, opts);
      }
      if (action === 'ROLLBACK' || action === 'ABORT') {
        if (txn.savepoint !== undefined) restore(txn.savepoint);
        else {
          txn.view.restore(new TxnView(undefined as never).save());
          txn.catalog = s.catalog!;
          txn.changedCatalog = false;
          txn.owned = false;
          restoreSequenceAdvances(txn);
        }
        txn.savepoint = undefined;
        txn.savepoints.length = 0;
        return finish('ROLLBACK', [], [], 0, opts);
      }
      return unsupported(`transaction statement ${action}`);
    }
  }
  if (ast.type === 'setting') return settingStatement(ast as unknown as SettingStatement, x.session!, opts);
  if (txn === undefined) return sqlFail('XX000', 'internal: a write outside a transaction');
  const view = txn.view;
  switch (ast.type) {
    case 'insert':
    case 'update':
    case 'delete': {
      const run = ast.type === 'insert' ? insert : ast.type === 'update' ? update : deleteRows;
      // A write through a view is the same write on what the view reads (view-writes.ts).
      ast = writeThroughViews(ast, txn.catalog);
      // A statement with a query inside it (a subquery anywhere, INSERT ... SELECT) reads the
      // tables as they were when it started, as in PostgreSQL, not the rows it has already
      // written: `UPDATE t SET v = (SELECT sum(v) FROM t t2 WHERE t2.k < t.k)` sums the old
      // values, and a subquery in RETURNING sees the table before the statement. Writes and the
      // constraint checks still go through the live view.
      let xs = x;
      if (hasSubquery(ast)) {
        xs = new Exec(view.statementView(), x.catalog, x.statementTime, x.params, x.limits);
        xs.session = txn.session;
      }
      const r: DmlResult = await drive(run(ast, envOf(new InitPlans()), view, xs), xs);
      return finish(ast.type.toUpperCase(), r.columns, r.rows ?? [], r.rows === undefined ? r.count : r.rows.length, opts);
    }
    case 'create': {
      const catalog = mutableCatalog(txn);
      const kw = String(ast.keyword).toLowerCase();
      if (kw === 'table' && (ast.query_expr !== null && ast.query_expr !== undefined)) {
        // CREATE TABLE ... AS query: the table of the query's columns, then INSERT ... query.
        const made = createTableAs(ast, planQuery(ast.query_expr as Ast, envOf()).columns, catalog, view);
        if (made === undefined) return finish('CREATE TABLE AS', [], [], 0, opts);
        const xs = new Exec(view.statementView(), catalog, x.statementTime, x.params, x.limits);
        xs.session = txn.session;
        const r: DmlResult = await drive(insert(made, { catalog, params: x.params, parent: undefined, ctes: new Map(), initPlans: new InitPlans() }, view, xs), xs);
        return finish('SELECT', [], [], r.count, opts);
      }
      if (kw === 'table') {
        createTable(ast, catalog, view);
        return finish('CREATE TABLE', [], [], 0, opts);
      }
      if (kw === 'index') {
        const xi = new Exec(view, catalog, x.statementTime, x.params, x.limits);
        xi.session = txn.session;
        await drive(createIndex(ast, catalog, view, xi), xi);
        return finish('CREATE INDEX', [], [], 0, opts);
      }
      return unsupported(`CREATE ${kw.toUpperCase()}`);
    }
    case 'create_view': {
      createView(ast as unknown as CreateViewStatement, mutableCatalog(txn), view);
      return finish('CREATE VIEW', [], [], 0, opts);
    }
    case 'alter_view': {
      alterView(ast as unknown as AlterViewStatement, mutableCatalog(txn), view);
      return finish('ALTER VIEW', [], [], 0, opts);
    }
    case 'drop': {
      const catalog = mutableCatalog(txn);
      const kw = String(ast.keyword).toLowerCase();
      if (kw === 'view') {
        dropViews(ast, catalog, view);
        return finish('DROP VIEW', [], [], 0, opts);
      }
      if (kw === 'table') {
        dropTables(ast, catalog, view);
        return finish('DROP TABLE', [], [], 0, opts);
      }
      if (kw === 'index') {
        dropIndex(ast, catalog, view);
        return finish('DROP INDEX', [], [], 0, opts);
      }
      return unsupported(`DROP ${kw.toUpperCase()}`);
    }
    case 'truncate': {
      truncateTables(ast, txn.catalog, view);
      return finish('TRUNCATE TABLE', [], [], 0, opts);
    }
    case 'sequence': {
      const catalog = mutableCatalog(txn);
      const statement = ast as unknown as SequenceStatement;
      if (statement.action === 'create') createSequence(statement, catalog, view);
      else if (statement.action === 'alter') alterSequence(statement, catalog, view);
      else dropSequences(statement, catalog, view);
      return finish(`${String(ast.action).toUpperCase()} SEQUENCE`, [], [], 0, opts);
    }
    case 'enum_type':
      return finish(runTypeStatement(ast as unknown as TypeStatement, mutableCatalog(txn), view), [], [], 0, opts);
    case 'comment_on': {
      applyComment(ast as unknown as CommentStatement, mutableCatalog(txn), view);
      return finish('COMMENT', [], [], 0, opts);
    }
    case 'identity_alter': {
      // ALTER TABLE t ALTER c ADD GENERATED ... AS IDENTITY / SET GENERATED / DROP IDENTITY
      const a = ast as unknown as { table: string; ifExists: boolean; column: string; change: IdentityChange };
      const name = relationNameOf(a.table);
      if (txn.catalog.table(name) === undefined && a.ifExists) return finish('ALTER TABLE', [], [], 0, opts);
      const catalog = mutableCatalog(txn);
      alterIdentity(catalog.mustTable(name), a.column, a.change, catalog, view);
      return finish('ALTER TABLE', [], [], 0, opts);
    }
    case 'alter': {
      const catalog = mutableCatalog(txn);
      // Driven with its own Exec: a pause resumes the slice of the Exec that ticks.
      const xa = new Exec(view, catalog, x.statementTime, x.params, x.limits);
      xa.session = txn.session;
      await drive(alterTable(ast, catalog, view, xa), xa);
      return finish('ALTER TABLE', [], [], 0, opts);
    }
    default:
      return unsupported(`${String(ast.type).toUpperCase()} statements`);
  }
}

/** SET / RESET / SHOW on the request's session. */
function settingStatement(st: SettingStatement, session: SqlSession, opts: typeof SQL_DEFAULTS & SqlOptions): SqlResult {
  if (st.action === 'show') {
    const value = session.show(st.name)!;
    return finish('SHOW', [{ name: shownName(st.name), type: 'text', qualifier: null }], [[{ type: 'text', value }]], 1, opts);
  }
  if (st.action === 'reset') {
    if (st.name === undefined) session.resetAll();
    else session.set(st.name, undefined);
    return finish('RESET', [], [], 0, opts);
  }
  session.set(st.name, st.items);
  return finish('SET', [], [], 0, opts);
}

/** JSON form of a value: toJsValue's, with int8 outside the safe range, bytea and non-finite floats as text. */
export function jsonValue(v: SqlValue): unknown {
  if (v.value === null) return null;
  if (Array.isArray(v.value)) return (v.value as SqlValue[]).map(jsonValue);
  if (v.type === 'bytea' || (v.type === 'float8' && !Number.isFinite(v.value))) return toText(v as NonNullSqlValue);
  const js = toJsValue(v);
  return typeof js === 'bigint' ? js.toString() : js;
}

/** What a result needs of its columns: their names, and the `columns` it reports. */
interface ResultShape {
  names: string[];
  /** Frozen: results of one cached plan share it. */
  columns: readonly SqlColumn[];
}

function shapeFor(columns: readonly PlanColumn[]): ResultShape {
  return { names: columns.map((c) => c.name), columns: Object.freeze(columns.map((c) => Object.freeze({ name: c.name, type: reportedTypeName(c.type) }))) as SqlColumn[] };
}

// A cached plan's shape, made once: a repeated SELECT does not rebuild its column list per call.
const SHAPES = new WeakMap<Plan, ResultShape>();

function shapeOf(plan: Plan): ResultShape {
  let shape = SHAPES.get(plan);
  if (shape === undefined) {
    shape = shapeFor(plan.columns.filter((c) => !c.hidden));
    SHAPES.set(plan, shape);
  }
  return shape;
}

function finish(command: string, columns: PlanColumn[], rows: Row[], rowCount: number, opts: typeof SQL_DEFAULTS & SqlOptions): SqlResult {
  return finishShaped(command, shapeFor(columns), rows, rowCount, opts);
}

function finishShaped(command: string, shape: ResultShape, rows: Row[], rowCount: number, opts: typeof SQL_DEFAULTS & SqlOptions): SqlResult {
  let bytes = 0;
  const names = shape.names;
  const n = names.length;
  const arrays = opts.rowMode === 'array';
  const out = new Array<unknown>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    const values = new Array<unknown>(n);
    bytes += 16;
    for (let i = 0; i < n; i++) {
      const v = jsonValue(row[i]!);
      values[i] = v;
      bytes += typeof v === 'string' ? v.length + 2 : v !== null && typeof v === 'object' ? JSON.stringify(v).length : 8;
    }
    if (bytes > opts.maxResultBytes) sqlFail('54000', `the result is larger than ${opts.maxResultBytes} bytes (TETRA_SQL_MAX_RESULT_BYTES); add a LIMIT or select fewer columns`);
    if (arrays) out[r] = values;
    else {
      const o: Record<string, unknown> = {};
      for (let i = 0; i < n; i++) o[names[i]!] = values[i];
      out[r] = o;
    }
  }
  return { command, columns: shape.columns as SqlColumn[], rows: out, rowCount };
}
