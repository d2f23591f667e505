import { indexTree, liveColumns, primaryKeyName, rowTree, type Catalog, type ColumnDef, type ForeignKeyDef, type IndexDef, type TableDef } from '../catalog.js';
import { checkUsingNames, viewChecksOf, type ViewCheck } from './view-writes.js';
import type { CompiledExpr } from '../compiled-expr.js';
import { compileExpression, unsupported, type AstNode, type CompileEnv } from '../expression-eval.js';
import { assignBits, isBitType, type BitType } from '../bit-string.js';
import { castValue, fitBpchar, typeDisplay } from '../sql-cast.js';
import { MAX_KEY_BYTES } from '../../storage/index.js';
import { encodeKeyTuple, encodeRow } from '../store/sql-codec.js';
import type { TxnView } from '../store/sql-view.js';
import { bpcharTrim, elementTypeOf, isArrayType, NUMERIC_RANK, outputText, sqlFail, toText, type NonNullSqlValue, type SqlTypeName, type SqlValue } from '../sql-types.js';
import { prefixEnd, readStored, TableReader, type StoredRow } from './access.js';
import { PAUSE, type Exec, type Plan, type PlanColumn, type Row, type Step } from './runtime.js';
import { ALL_COLUMNS_MARKER, CONFLICT_CONSTRAINT_MARKER, CONFLICT_WHERE_MARKER, USING_MARKER } from '../sql-rewrite.js';
import { OVERRIDING_SYSTEM_MARKER, OVERRIDING_USER_MARKER, ROW_ASSIGN } from '../sql-grammar-gaps.js';
import { figureColumnName } from './column-names.js';
import { columnName, columnQualifier, Scope, tableName } from './scope.js';
import { restrictedEnv } from './expression-kinds.js';
import { bindIndexKeys, impliedPartialIndexes, indexKeyText, indexKeyValues } from './index-keys.js';
import { columnCollation } from '../collation.js';
import { canCoerce, coerce } from '../type-resolution.js';
import { compileQuals, qualList } from './quals.js';
import { compilePredicate, exprEnv, planFrom, planQuery, rowSubquery, starNamer, tableAccess, type PlanEnv } from './select.js';
import { compareCodePoints } from '../../text-order.js';
import { currentSequenceNames } from './sequence-ddl.js';
import { columnSequence, rowIdSequence, type TableSequence } from '../sequence-options.js';
import { drawNext } from '../sequences.js';

type Ast = AstNode & Record<string, any>;

/** What a DML statement produced: affected count and RETURNING rows. */
export interface DmlResult {
  count: number;
  columns: PlanColumn[];
  rows: Row[] | undefined;
}

const TIMES: SqlTypeName[] = ['date', 'timestamp', 'timestamptz'];

/**
 * PostgreSQL's assignment conversion of a value into a column: implicit and assignment casts
 * (numbers to numbers, times to times, anything to text or bpchar, string literals to anything),
 * then the column's modifiers (varchar(n) and character(n) fail past n unless only spaces are
 * cut, character(n) pads to n, numeric(p,s) and timestamp(p) round).
 * @throws SQL_ERROR 42804 for a type with no assignment cast, 22001 value too long
 */
export function assignValue(v: SqlValue, col: ColumnDef): SqlValue {
  const to = col.type;
  if (v.value === null) return { type: to, value: null } as SqlValue;
  const from = v.type;
  if (isBitType(to)) return assignBitValue(v, col, to);
  if (isArrayType(to) && assignable(from, to)) {
    // Each element as a column of the element type would take it (varchar(3)[]: 22001 past 3).
    const array = from === to ? v : castValue(v, { type: to });
    const element: ColumnDef = { ...col, type: elementTypeOf(to), target: col.target.element ?? { type: elementTypeOf(to) }, declared: col.declared.replace(/\[\]$/, '') };
    if (col.target.element === undefined) return array;
    return { type: to, value: (array.value as SqlValue[]).map((e) => assignValue(e, element)) } as SqlValue;
  }
  if (!assignable(from, to)) sqlFail('42804', `column "${col.name}" is of type ${col.declared} but expression is of type ${typeDisplay(from) ?? from}`, undefined, 'You will need to rewrite or cast the expression.');
  const maxLength = col.target.maxLength;
  if ((to === 'text' || to === 'bpchar') && maxLength !== undefined) {
    // A bpchar loses its padding on the way to text, and keeps it on the way to another bpchar.
    const text = from === 'text' || from === 'unknown' || (from === 'bpchar' && to === 'bpchar') ? (v.value as string) : from === 'bpchar' ? bpcharTrim(v.value as string) : toText(v as NonNullSqlValue);
    const chars = [...text];
    if (chars.length > maxLength && !chars.slice(maxLength).every((c) => c === ' ')) sqlFail('22001', `value too long for type ${col.declared}`);
    // Trailing spaces beyond the length are cut silently, as PostgreSQL does; character(n) pads.
    if (to === 'bpchar') return { type: 'bpchar', value: fitBpchar(chars, maxLength) };
    return { type: 'text', value: chars.length > maxLength ? chars.slice(0, maxLength).join('') : text };
  }
  const out = from === to && col.target.scale === undefined && col.target.fractionDigits === undefined ? v : castValue(v, col.target);
  return out;
}

/**
 * A value into a bit(n) / bit varying(n) column: only bit strings and literals are assigned
 * (PostgreSQL has no assignment cast from integers or text), then checked against the length.
 * @throws SQL_ERROR 42804 another type, 22026 bit(n) of another length, 22001 bit varying(n) too long
 */
function assignBitValue(v: SqlValue, col: ColumnDef, to: BitType): SqlValue {
  if (v.type !== 'unknown' && !isBitType(v.type)) sqlFail('42804', `column "${col.name}" is of type ${col.declared} but expression is of type ${typeDisplay(v.type)}`, undefined, 'You will need to rewrite or cast the expression.');
  const bits = castValue(v, { type: to }).value as string;
  return { type: to, value: col.target.maxLength === undefined ? bits : assignBits(bits, to, col.target.maxLength) };
}

/** Whether a value of type `from` has an assignment conversion into a column of type `to` (see assignValue). */
export function assignable(from: SqlTypeName, to: SqlTypeName): boolean {
  if (isBitType(to)) return from === 'unknown' || isBitType(from);
  // Arrays: element by element; a JSON array (a parameter sent as one) too.
  if (isArrayType(to)) return from === to || from === 'unknown' || from === 'jsonb' || (isArrayType(from) && assignable(elementTypeOf(from), elementTypeOf(to)));
  return from === to || from === 'unknown' || to === 'text' || to === 'bpchar' || (NUMERIC_RANK[from] !== undefined && NUMERIC_RANK[to] !== undefined) || (TIMES.includes(from) && TIMES.includes(to)) || TIME_OF_DAY_ASSIGNMENTS[to]?.includes(from) === true;
}

/** PostgreSQL's implicit and assignment casts into the time-of-day types and from time to interval. */
const TIME_OF_DAY_ASSIGNMENTS: Partial<Record<SqlTypeName, readonly SqlTypeName[]>> = {
  time: ['timetz', 'timestamp', 'timestamptz', 'interval'],
  timetz: ['time', 'timestamptz'],
  interval: ['time'],
};

/** The index entry of a row: key = index columns ++ primary key; uniqueKey when unique and no NULL. */
export function indexEntry(index: IndexDef, physical: SqlValue[], pk: Buffer): { key: Buffer; uniqueKey: Buffer | undefined; values: SqlValue[] } | undefined {
  const values = indexKeyValues(index, physical);
  // A partial index holds no entry for a row its predicate is not true for.
  if (values === undefined) return undefined;
  const prefix = encodeKeyTuple(values);
  const uniqueKey = index.unique && values.every((v) => v.value !== null) ? prefix : undefined;
  return { key: checkedKey(Buffer.concat([prefix, pk]), index.name), uniqueKey, values };
}

/** The tree key of `index`'s entry with key values `values` for the row keyed `pk`. */
export function indexEntryKey(index: IndexDef, values: SqlValue[], pk: Buffer): Buffer {
  return checkedKey(Buffer.concat([encodeKeyTuple(values), pk]), index.name);
}

/**
 * `key` when it fits a tree key, else PostgreSQL's error for an index row past its B-tree's
 * limit (54000; PostgreSQL's limit is 2704 bytes after compression, ours MAX_KEY_BYTES).
 */
function checkedKey(key: Buffer, index: string): Buffer {
  if (key.length > MAX_KEY_BYTES) sqlFail('54000', `index row size ${key.length} exceeds maximum ${MAX_KEY_BYTES} for index "${index}"`);
  return key;
}

export function writeIndexEntries(view: TxnView, indexes: IndexDef[], physical: SqlValue[], pk: Buffer, op: 'put' | 'delete'): void {
  for (const ix of indexes) {
    const entry = indexEntry(ix, physical, pk);
    if (entry === undefined) continue;
    const { key } = entry;
    if (op === 'put') view.put(indexTree(ix), key, pk);
    else view.delete(indexTree(ix), key);
  }
}

/** A unique violation's DETAIL: the key's columns of `physical`, as keyText writes them. */
function duplicateKey(table: TableDef, ids: number[], physical: SqlValue[]): string {
  return `Key ${keyText(table, ids, ids.map((id) => physical[id]!))} already exists.`;
}

/** Per-table state for writing rows: reader, compiled CHECKs, defaults. */
export class TableWriter {
  readonly table: TableDef;
  readonly reader: TableReader;
  readonly live: ColumnDef[];
  readonly #checks: { name: string; expr: CompiledExpr }[];
  readonly #generated: { col: ColumnDef; expr: CompiledExpr }[];
  readonly #defaults: (CompiledExpr | undefined)[];
  readonly #catalog: Catalog;
  readonly #view: TxnView;
  readonly #env: PlanEnv;

  constructor(table: TableDef, catalog: Catalog, view: TxnView, env: PlanEnv) {
    this.#env = env;
    this.table = table;
    this.reader = new TableReader(table);
    this.live = liveColumns(table);
    this.#catalog = catalog;
    this.#view = view;
    bindIndexKeys(table, catalog);
    const scope = new Scope(this.live.map((c) => ({ name: c.name, type: c.type, qualifier: table.name, collation: columnCollation(c.collation) })), undefined);
    const cenv = exprEnv({ ...env, parent: undefined }, scope, undefined, 'check constraints');
    // Tested in name order, as PostgreSQL's relcache sorts a table's CHECKs (CheckConstraintFetch):
    // the one a row breaks first, and so the one named in the error, is the first by name.
    this.#checks = table.checks.map((c) => ({ name: c.name, expr: compileExpression(c.expr, cenv) })).sort((a, b) => compareCodePoints(a.name, b.name));
    const genv = exprEnv({ ...env, parent: undefined }, scope, undefined, 'column generation expressions');
    this.#generated = this.live.filter((c) => c.generated !== undefined).map((c) => ({ col: c, expr: compileExpression(c.generated!, genv) }));
    const denv = restrictedEnv('default', catalog, []);
    // A nextval default reads its sequence by its current name (sequence-ddl.ts bindSequenceCalls).
    this.#defaults = table.columns.map((c) => (c.default !== undefined ? compileExpression(currentSequenceNames(c.default, catalog), denv) : undefined));
  }

  /**
   * A new row version's stored generated columns, computed from its other columns (after the
   * given values and defaults, before any constraint is tested, as PostgreSQL's
   * ExecComputeStoredGenerated).
   */
  computeGenerated(physical: SqlValue[], x: Exec): void {
    if (this.#generated.length === 0) return;
    const ctx = x.ctx();
    ctx.row = this.reader.toLive(physical);
    for (const g of this.#generated) physical[g.col.id] = assignValue(g.expr.evaluate(ctx), g.col);
  }

  /** The default of a physical column (serials draw from their sequence; a generated column's is computed later). */
  defaultOf(col: ColumnDef, x: Exec): SqlValue {
    if (col.serial) {
      const seq = columnSequence(this.table, col);
      const value = this.#nextval(seq, col.type);
      // currval('t_id_seq') and lastval() see it, as after PostgreSQL's nextval default.
      x.session?.drew(seq.key, BigInt(value.value as number | bigint));
      return value;
    }
    const d = this.#defaults[col.id];
    if (d === undefined) return { type: col.type, value: null } as SqlValue;
    return assignValue(d.evaluate(x.ctx()), col);
  }

  /** The next value of `seq`, which becomes its last, as a value of `type`. */
  #nextval(seq: TableSequence, type: SqlTypeName): SqlValue {
    return castValue({ type: 'int8', value: drawNext(this.#view, seq) }, { type });
  }

  /** The primary key bytes of a row (a new hidden row id for tables without one). */
  keyOf(physical: SqlValue[]): Buffer {
    if (this.table.primaryKey.length === 0) return encodeKeyTuple([this.#nextval(rowIdSequence(this.table), 'int8')]);
    return checkedKey(encodeKeyTuple(this.table.primaryKey.map((id) => physical[id]!)), primaryKeyName(this.table));
  }

  /** NOT NULL, CHECK and FOREIGN KEY checks of a new row version. */
  validate(physical: SqlValue[], x: Exec): void {
    this.validateRow(physical, x);
    this.validateReferences(physical);
  }

  /** NOT NULL and CHECK: what PostgreSQL tests of a proposed row before ON CONFLICT looks for a conflict. */
  validateRow(physical: SqlValue[], x: Exec): void {
    for (const c of this.live) {
      if (c.notNull && physical[c.id]!.value === null) sqlFail('23502', `null value in column "${c.name}" of relation "${this.table.name}" violates not-null constraint`, this.#failingRow(physical));
    }
    if (this.#checks.length > 0) {
      const ctx = x.ctx();
      ctx.row = this.reader.toLive(physical);
      for (const c of this.#checks) {
        if (c.expr.evaluate(ctx).value === false) sqlFail('23514', `new row for relation "${this.table.name}" violates check constraint "${c.name}"`, this.#failingRow(physical));
      }
    }
  }

  /**
   * The DETAIL of a NOT NULL or CHECK violation, as PostgreSQL's ExecBuildSlotValueDescription
   * writes it: every live column in table order, by its type's output function, `null` for a
   * NULL, each clipped to 64 bytes of UTF-8 (whole characters) with `...` after.
   */
  #failingRow(physical: SqlValue[]): string {
    const parts = this.live.map((c) => {
      const v = physical[c.id]!;
      return v.value === null ? 'null' : clipOutput(outputText(v as NonNullSqlValue));
    });
    return `Failing row contains (${parts.join(', ')}).`;
  }

  /**
   * The CHECK OPTIONs of the views a statement writes through (view-writes.ts), compiled over
   * this table's columns named as the statement names it (`alias`); a row is then tested by checkViews.
   */
  bindViewChecks(checks: readonly ViewCheck[], alias: string): void {
    if (checks.length === 0) return;
    const scope = new Scope(this.live.map((c) => ({ name: c.name, type: c.type, qualifier: alias, collation: columnCollation(c.collation) })), undefined);
    const cenv = exprEnv({ ...this.#env, parent: undefined }, scope, undefined, 'WHERE');
    this.#viewChecks = checks.map((c) => ({ view: c.view, expr: compileExpression(c.expr, cenv) }));
  }

  /**
   * A written row against the CHECK OPTIONs of the views the statement writes through, innermost
   * first: each condition must be true (not false, not NULL), as PostgreSQL's ExecWithCheckOptions.
   * @throws SQL_ERROR 44000 naming the view, with the row in PostgreSQL's DETAIL
   */
  checkViews(physical: SqlValue[], x: Exec): void {
    if (this.#viewChecks.length === 0) return;
    const ctx = x.ctx();
    ctx.row = this.reader.toLive(physical);
    for (const c of this.#viewChecks) {
      if (c.expr.evaluate(ctx).value !== true) sqlFail('44000', `new row violates check option for view "${c.view}"`, this.#failingRow(physical));
    }
  }

  #viewChecks: { view: string; expr: CompiledExpr }[] = [];

  /** Foreign keys: tested for a row that is written (after ON CONFLICT decided it is). */
  validateReferences(physical: SqlValue[]): void {
    for (const fk of this.table.foreignKeys) {
      const values = fk.columns.map((id) => physical[id]!);
      if (values.some((v) => v.value === null)) continue;
      const target = this.#catalog.mustTable(fk.refTable);
      const cast = values.map((v, i) => assignValue(v, target.columns[fk.refColumns[i]!]!));
      if (!this.#referencedExists(target, fk.refColumns, cast, physical)) {
        sqlFail('23503', `insert or update on table "${this.table.name}" violates foreign key constraint "${fk.name}"`, `Key ${keyText(this.table, fk.columns, values)} is not present in table "${fk.refTable}".`);
      }
    }
  }

  #referencedExists(target: TableDef, cols: number[], values: SqlValue[], self: SqlValue[] | undefined): boolean {
    if (self !== undefined && target === this.table && cols.every((c, i) => self[c]!.value !== null && encodeKeyTuple([self[c]!]).equals(encodeKeyTuple([values[i]!])))) return true;
    const byPk = target.primaryKey.length === cols.length && target.primaryKey.every((c) => cols.includes(c));
    if (byPk) return this.#view.get(rowTree(target), encodeKeyTuple(target.primaryKey.map((c) => values[cols.indexOf(c)]!))) !== undefined;
    const ix = target.indexes.find((i) => i.unique && i.predicate === undefined && i.columns.length === cols.length && i.columns.every((c) => cols.includes(c)))!;
    const prefix = encodeKeyTuple(ix.columns.map((c) => values[cols.indexOf(c)]!));
    for (const _ of this.#view.scan(indexTree(ix), { gte: prefix, lt: prefixEnd(prefix), limit: 1 })) return true;
    return false;
  }

  /** 23505 when a unique constraint already holds this row's key (other than at `ownKey`). */
  checkUnique(physical: SqlValue[], key: Buffer, ownKey: Buffer | undefined): void {
    if (this.table.primaryKey.length > 0 && (ownKey === undefined || !ownKey.equals(key)) && this.#view.get(rowTree(this.table), key) !== undefined) {
      sqlFail('23505', `duplicate key value violates unique constraint "${primaryKeyName(this.table)}"`, duplicateKey(this.table, this.table.primaryKey, physical));
    }
    for (const ix of this.table.indexes) {
      if (!ix.unique) continue;
      const entry = indexEntry(ix, physical, key);
      const uniqueKey = entry?.uniqueKey;
      if (uniqueKey === undefined) continue;
      for (const [, pk] of this.#view.scan(indexTree(ix), { gte: uniqueKey, lt: prefixEnd(uniqueKey) })) {
        if (ownKey !== undefined && pk.equals(ownKey)) continue;
        sqlFail('23505', `duplicate key value violates unique constraint "${ix.name}"`, `Key ${indexKeyText(this.table, ix, entry!.values)} already exists.`);
      }
    }
  }

  /** The conflicting row's key for ON CONFLICT: by the given constraint columns, or any. */
  conflictKey(physical: SqlValue[], key: Buffer, target: number[] | undefined, partial?: Set<IndexDef>): Buffer | undefined {
    const matches = (cols: number[]): boolean => target === undefined || (cols.length === target.length && cols.every((c) => target.includes(c)));
    if (this.table.primaryKey.length > 0 && matches(this.table.primaryKey) && this.#view.get(rowTree(this.table), key) !== undefined) return key;
    for (const ix of this.table.indexes) {
      // A partial index only when ON CONFLICT's WHERE inferred it (`partial`).
      if (!ix.unique || (ix.predicate !== undefined && partial?.has(ix) !== true) || !matches(ix.columns)) continue;
      const uniqueKey = indexEntry(ix, physical, key)?.uniqueKey;
      if (uniqueKey === undefined) continue;
      for (const [, pk] of this.#view.scan(indexTree(ix), { gte: uniqueKey, lt: prefixEnd(uniqueKey), limit: 1 })) return pk;
    }
    return undefined;
  }

  insert(physical: SqlValue[], key: Buffer): void {
    this.#view.put(rowTree(this.table), key, encodeRow(physical));
    writeIndexEntries(this.#view, this.table.indexes, physical, key, 'put');
  }

  remove(physical: SqlValue[], key: Buffer, x: Exec, env?: PlanEnv): void {
    const actions = this.#checkReferenced(physical, undefined, x);
    this.#view.delete(rowTree(this.table), key);
    writeIndexEntries(this.#view, this.table.indexes, physical, key, 'delete');
    this.#referentialActions(actions, physical, undefined, x, env ?? this.#env);
  }

  update(oldPhysical: SqlValue[], oldKey: Buffer, physical: SqlValue[], x: Exec, env?: PlanEnv): void {
    const actions = this.#checkReferenced(oldPhysical, physical, x);
    const key = this.table.primaryKey.length === 0 ? oldKey : this.keyOf(physical);
    this.checkUnique(physical, key, oldKey);
    if (!key.equals(oldKey)) this.#view.delete(rowTree(this.table), oldKey);
    writeIndexEntries(this.#view, this.table.indexes, oldPhysical, oldKey, 'delete');
    this.insert(physical, key);
    this.#referentialActions(actions, oldPhysical, physical, x, env ?? this.#env);
  }

  /**
   * A referenced key disappears (delete, or an update of the key): at the end of the statement
   * (Exec.afterStatement), as PostgreSQL's RI triggers check them, RESTRICT fails if rows still
   * reference it (23001), NO ACTION too unless a row holds the key again (23503); the
   * foreign keys with an action for it are returned, to act once the row is written
   * (#referentialActions).
   */
  #checkReferenced(old: SqlValue[], next: SqlValue[] | undefined, x: Exec): { other: TableDef; fk: ForeignKeyDef }[] {
    const actions: { other: TableDef; fk: ForeignKeyDef }[] = [];
    for (const other of this.#catalog.tables.values()) {
      for (const fk of other.foreignKeys) {
        if (fk.refTable !== this.table.name) continue;
        const oldValues = fk.refColumns.map((id) => old[id]!);
        if (oldValues.some((v) => v.value === null)) continue;
        if (next !== undefined && fk.refColumns.every((id) => encodeKeyTuple([next[id]!]).equals(encodeKeyTuple([old[id]!])))) continue;
        const action = next === undefined ? fk.onDelete : fk.onUpdate;
        if (action !== undefined && action !== 'restrict') {
          actions.push({ other, fk });
          continue;
        }
        // Once the statement's rows are written, as PostgreSQL's RI triggers run: rows still
        // referencing the key fail it, unless (NO ACTION) a row holds the key again.
        x.afterStatement.push(() => {
          if (action === 'restrict') {
            if (this.#referencing(other, fk.columns, oldValues, x, 1).length > 0) {
              sqlFail('23001', `update or delete on table "${this.table.name}" violates RESTRICT setting of foreign key constraint "${fk.name}" on table "${other.name}"`, `Key ${keyText(this.table, fk.refColumns, oldValues)} is referenced from table "${other.name}".`);
            }
            return;
          }
          if (this.#referencedExists(this.table, fk.refColumns, oldValues, undefined)) return;
          if (this.#referencing(other, fk.columns, oldValues, x, 1).length > 0) {
            sqlFail('23503', `update or delete on table "${this.table.name}" violates foreign key constraint "${fk.name}" on table "${other.name}"`, `Key ${keyText(this.table, fk.refColumns, oldValues)} is still referenced from table "${other.name}".`);
          }
        });
      }
    }
    return actions;
  }

  /**
   * The referential actions of a deleted row (`next` undefined) or an updated key, once the row is
   * written: the rows referencing the old key are deleted (ON DELETE CASCADE), take the new key
   * (ON UPDATE CASCADE), NULLs (SET NULL) or their columns' defaults (SET DEFAULT, which must
   * reference a row in turn: 23503), each through its own table's writer, so that its constraints
   * and actions apply.
   */
  #referentialActions(actions: { other: TableDef; fk: ForeignKeyDef }[], old: SqlValue[], next: SqlValue[] | undefined, x: Exec, env: PlanEnv): void {
    for (const { other, fk } of actions) {
      const action = next === undefined ? fk.onDelete! : fk.onUpdate!;
      const rows = this.#referencing(other, fk.columns, fk.refColumns.map((id) => old[id]!), x, Infinity);
      if (rows.length === 0) continue;
      const writer = other === this.table ? this : new TableWriter(other, this.#catalog, this.#view, env);
      for (const r of rows) {
        const current = this.#view.get(rowTree(other), r.key);
        if (current === undefined) continue;
        const physical = writer.reader.physical(current);
        if (action === 'cascade' && next === undefined) {
          writer.remove(physical, r.key, x, env);
          continue;
        }
        const changed = physical.slice();
        fk.columns.forEach((c, k) => {
          const col = other.columns[c]!;
          changed[c] = action === 'cascade' ? assignValue(next![fk.refColumns[k]!]!, col) : action === 'set null' ? ({ type: col.type, value: null } as SqlValue) : writer.defaultOf(col, x);
        });
        writer.computeGenerated(changed, x);
        writer.validate(changed, x);
        writer.update(physical, r.key, changed, x, env);
      }
    }
  }

  /** Rows of `table` whose `cols` equal `values` (at most `limit`). */
  #referencing(table: TableDef, cols: number[], values: SqlValue[], x: Exec, limit: number): StoredRow[] {
    const cast = values.map((v, i) => assignValue(v, table.columns[cols[i]!]!));
    const out: StoredRow[] = [];
    const reader = new TableReader(table);
    const ix = table.indexes.find((i) => i.predicate === undefined && cols.every((c, k) => i.columns[k] === c));
    const prefix = encodeKeyTuple(cast);
    if (ix !== undefined) {
      for (const [, pk] of this.#view.scan(indexTree(ix), { gte: prefix, lt: prefixEnd(prefix) })) {
        const bytes = this.#view.get(rowTree(table), pk);
        if (bytes !== undefined) out.push({ key: pk, physical: reader.physical(bytes) });
        if (out.length >= limit) break;
      }
      return out;
    }
    if (table.primaryKey.length >= cols.length && cols.every((c, k) => table.primaryKey[k] === c)) {
      for (const [key, value] of this.#view.scan(rowTree(table), { gte: prefix, lt: prefixEnd(prefix) })) {
        out.push({ key, physical: reader.physical(value) });
        if (out.length >= limit) break;
      }
      return out;
    }
    for (const [key, value] of this.#view.scan(rowTree(table))) {
      const p = reader.physical(value);
      if (encodeKeyTuple(cols.map((c) => p[c]!)).equals(prefix)) out.push({ key, physical: p });
      if (out.length >= limit) break;
      x.tick();
    }
    return out;
  }
}

/**
 * The RETURNING list over the target's live columns followed by `extra` (the FROM / USING items'
 * columns, which `*` includes, as in PostgreSQL).
 */
function returning(ast: Ast, writer: TableWriter, env: PlanEnv, alias: string, extra: PlanColumn[] = []): { exprs: CompiledExpr[]; columns: PlanColumn[] } | undefined {
  const r = ast.returning as Ast | null | undefined;
  if (!r) return undefined;
  const cols: PlanColumn[] = [...writer.live.map((c) => ({ name: c.name, type: c.type, qualifier: alias, collation: columnCollation(c.collation) })), ...extra];
  const scope = new Scope(cols, env.parent);
  const cenv = exprEnv(env, scope, undefined, 'RETURNING');
  const exprs: CompiledExpr[] = [];
  const columns: PlanColumn[] = [];
  for (const item of r.columns as Ast[]) {
    const node = (item.expr ?? item) as Ast;
    if (node.type === 'column_ref' && columnName(node) === '*') {
      const q = columnQualifier(node);
      let any = false;
      cols.forEach((c, i) => {
        // As in SELECT: `t.*` includes t's columns a USING join merged (hidden from a bare `*`).
        if (q === null ? c.hidden : c.qualifier !== q) return;
        any = true;
        c.used = true; // as a resolved reference would: the scan then decodes it
        exprs.push({ type: c.type, evaluate: (ctx) => ctx.row![i]! });
        columns.push({ name: c.name, type: c.type, qualifier: null });
      });
      if (!any && q !== null) sqlFail('42P01', `missing FROM-clause entry for table "${q}"`);
      continue;
    }
    const e = compileExpression(node, cenv);
    exprs.push(e);
    columns.push({ name: typeof item.as === 'string' ? item.as : figureColumnName(node, starNamer(env, scope)), type: e.type === 'unknown' ? 'text' : e.type, qualifier: null });
  }
  return { exprs, columns };
}

/** One `col = value` of a SET list; no expression for DEFAULT. */
interface Assignment {
  col: ColumnDef;
  expr: CompiledExpr | undefined;
  /** An assignment to an element of the column (`SET a[i] = v`); several of one column are one. */
  element?: boolean;
}

/**
 * A SET list's assignments (UPDATE and ON CONFLICT DO UPDATE), in list order. The pre-pass
 * writes `SET (a, b) = (SELECT ...)` as `a = ROW_ASSIGN((SELECT ...)), b = ROW_ASSIGN()`
 * (sql-grammar-gaps.ts): the subquery runs once per row, when the first of its columns is
 * assigned, and the others read that row, so the assignments must be evaluated in list order.
 * @throws SQL_ERROR 42703 unknown column, 42601 a column assigned twice or a subquery whose
 * column count differs from the list's
 */
function assignments(items: Ast[], writer: TableWriter, cenv: CompileEnv, env: PlanEnv, scope: Scope): Assignment[] {
  const out: Assignment[] = [];
  let row: SqlValue[] = [];
  for (let i = 0; i < items.length; i++) {
    const s = items[i]!;
    const col = writer.live.find((l) => l.name === columnName(s)) ?? sqlFail('42703', `column "${columnName(s)}" of relation "${writer.table.name}" does not exist`);
    const value = s.value as Ast;
    const isDefault = value.type === 'column_ref' && String((value.column as Ast)?.expr?.value ?? '').toUpperCase() === 'DEFAULT';
    if (Array.isArray(s.array_index) && s.array_index.length > 0) {
      // SET a[i] = v: the column's array with element i replaced; several of one column apply in order.
      const earlier = out.findIndex((o) => o.col === col && o.element === true);
      const before = earlier >= 0 ? out[earlier]!.expr! : currentValue(col, scope);
      const expr = elementAssignment(col, before, s.array_index as Ast[], compileExpression(value, cenv), cenv);
      if (earlier >= 0) out[earlier] = { col, expr, element: true };
      else out.push({ col, expr, element: true });
      continue;
    }
    if (!isRowAssign(value)) {
      out.push({ col, expr: isDefault ? undefined : compileExpression(value, cenv) });
      continue;
    }
    let width = 1;
    while (isRowAssign(items[i + width]?.value as Ast | undefined) && (items[i + width]!.value as Ast).args.value.length === 0) width++;
    const sub = rowSubquery(value.args.value[0] as Ast, env, scope);
    if (sub.types.length !== width) sqlFail('42601', 'number of columns does not match number of values');
    for (let k = 0; k < width; k++) {
      const c = k === 0 ? col : (writer.live.find((l) => l.name === columnName(items[i + k]!)) ?? sqlFail('42703', `column "${columnName(items[i + k]!)}" of relation "${writer.table.name}" does not exist`));
      const type = sub.types[k]!;
      const expr: CompiledExpr =
        k === 0
          ? {
              type,
              evaluate: (ctx) => {
                row = sub.evaluate(ctx);
                return row[0]!;
              },
            }
          : { type, evaluate: () => row[k]! };
      out.push({ col: c, expr });
    }
    i += width - 1;
  }
  checkSingleAssignments(out);
  return out;
}

/** The target row's value of column `col` (the first of that name in the statement's scope: the target's columns come first). */
function currentValue(col: ColumnDef, scope: Scope): CompiledExpr {
  const slot = scope.columns.findIndex((c) => c.name === col.name && c.hidden !== true);
  if (slot < 0) return sqlFail('XX000', `internal: column "${col.name}" not in the target row`);
  scope.columns[slot]!.used = true;
  return { type: col.type, evaluate: (ctx) => ctx.row![slot]! };
}

/**
 * `col[i] = v`: `before` (the column's value, or an earlier element assignment's result) with
 * element i set to v, coerced to the element type; past the end the array grows with NULLs (a NULL
 * array is an empty one), as PostgreSQL's does from its lower bound 1.
 * @throws SQL_ERROR 42804 a column that is not an array, 22004 a NULL subscript, 0A000 a subscript below 1 or a slice
 */
function elementAssignment(col: ColumnDef, before: CompiledExpr, subs: Ast[], value: CompiledExpr, cenv: CompileEnv): CompiledExpr {
  if (!isArrayType(col.type)) sqlFail('42804', `cannot subscript type ${col.declared} because it does not support subscripting`);
  if (subs.length !== 1) unsupported('assignment to an element of a multidimensional array');
  const index = compileExpression(subs[0]!.index as Ast, cenv);
  if (!canCoerce(index.type, 'int4')) sqlFail('42804', 'array subscript must have type integer');
  const i = coerce(index, 'int4');
  const element = elementTypeOf(col.type);
  if (!assignable(value.type, element)) sqlFail('42804', `subscripted assignment to "${col.name}" requires type ${typeDisplay(element)} but expression is of type ${typeDisplay(value.type) ?? value.type}`);
  const type = col.type;
  return {
    type,
    evaluate(ctx) {
      const old = (before.evaluate(ctx).value as SqlValue[] | null) ?? [];
      const at = i.evaluate(ctx).value as number | null;
      if (at === null) sqlFail('22004', 'array subscript in assignment must not be null');
      if (at < 1) unsupported('array subscripts below 1 (arrays here start at 1)');
      const v = castValue(value.evaluate(ctx), { type: element });
      const next = old.slice();
      while (next.length < at - 1) next.push({ type: element, value: null } as SqlValue);
      next[at - 1] = v;
      return { type, value: next } as SqlValue;
    },
  };
}

function isRowAssign(value: Ast | undefined): value is Ast {
  if (value?.type !== 'function') return false;
  const parts = (value.name?.name ?? []) as { value: unknown }[];
  return parts.length === 1 && parts[0]!.value === ROW_ASSIGN;
}

/** PostgreSQL refuses SET a = 1, a = 2 (in UPDATE and ON CONFLICT DO UPDATE). */
function checkSingleAssignments(sets: ReadonlyArray<{ col: ColumnDef }>): void {
  for (let i = 0; i < sets.length; i++) {
    if (sets.findIndex((s) => s.col === sets[i]!.col) !== i) sqlFail('42601', `multiple assignments to same column "${sets[i]!.col.name}"`);
  }
}

/** INSERT INTO t [(cols)] VALUES ... | SELECT ... [ON CONFLICT ...] [RETURNING ...]. */
/**
 * ON CONFLICT's WHERE (an index predicate, see CONFLICT_WHERE_MARKER): the predicate, and the
 * statement without it in RETURNING. The AST may be a cached parse: it is copied, not changed.
 */
function conflictWhere(ast: Ast): { ast: Ast; where: Ast | undefined } {
  const r = ast.returning as Ast | null | undefined;
  const items = (r?.columns ?? []) as Ast[];
  const at = items.findIndex((item) => item.as === CONFLICT_WHERE_MARKER || (item.as as Ast | undefined)?.value === CONFLICT_WHERE_MARKER);
  if (at < 0) return { ast, where: undefined };
  const rest = items.filter((_, i) => i !== at);
  return { ast: { ...ast, returning: rest.length === 0 ? null : { ...r, columns: rest } } as Ast, where: items[at]!.expr as Ast };
}

export function* insert(statement: Ast, env: PlanEnv, view: TxnView, x: Exec): Generator<Step, DmlResult> {
  const { ast, where: conflictPredicate } = conflictWhere(statement);
  const tref = (ast.table as Ast[])[0]!;
  const table = env.catalog.mustTable(tableName(tref.table));
  const alias = tref.as ? tableName(tref.as) : table.name;
  const overriding = overridingOf(ast);
  const writer = new TableWriter(table, env.catalog, view, env);
  const names = ((Array.isArray(ast.columns) ? ast.columns : []) as unknown[]).map((c) =>
    typeof c === 'string' ? c.toLowerCase() : columnName({ type: 'column_ref', column: { expr: c } } as unknown as Ast),
  );
  // A list made only of the marker is the pre-pass standing in for no list (see sql-rewrite.ts).
  const targetCols: ColumnDef[] = names.length > 0 && !names.every((n) => n === ALL_COLUMNS_MARKER)
    ? names.map((name) => writer.live.find((l) => l.name === name) ?? sqlFail('42703', `column "${name}" of relation "${table.name}" does not exist`))
    : writer.live;
  for (let i = 0; i < targetCols.length; i++) {
    if (targetCols.indexOf(targetCols[i]!) !== i) sqlFail('42701', `column "${targetCols[i]!.name}" specified more than once`);
  }
  const ret = returning(ast, writer, env, alias);
  writer.bindViewChecks(viewChecksOf(statement), alias);
  // The source rows: VALUES lists (with DEFAULT) or a query.
  const values = ast.values as Ast;
  let source: Iterable<Step> = [];
  let selectPlan: Plan | undefined;
  let defaultMarks: boolean[][] | undefined;
  if (values?.type === 'values') {
    const scope = new Scope([], env.parent);
    const cenv = exprEnv(env, scope, undefined, 'VALUES');
    const rowsAst = values.values as Ast[];
    defaultMarks = [];
    const exprRows = rowsAst.map((r) => {
      const items = r.value as Ast[];
      // Row by row, as PostgreSQL's transformInsertStmt: its length against the first row's, then against the columns.
      if (items.length !== (rowsAst[0]!.value as Ast[]).length) sqlFail('42601', 'VALUES lists must all be the same length');
      if (items.length > targetCols.length) sqlFail('42601', 'INSERT has more expressions than target columns');
      const marks: boolean[] = [];
      const compiled = items.map((it) => {
        const isDefault = it.type === 'column_ref' && String((it.column as Ast)?.expr?.value ?? '').toUpperCase() === 'DEFAULT' && (it.column as Ast)?.expr?.type !== 'double_quote_string';
        marks.push(isDefault);
        return isDefault ? undefined : compileExpression(it, cenv);
      });
      defaultMarks!.push(marks);
      return compiled;
    });
    source = (function* () {
      const ctx = x.ctx();
      for (const r of exprRows) yield r.map((e) => (e === undefined ? ({ type: 'unknown', value: null } as SqlValue) : e.evaluate(ctx)));
    })();
  } else if (values?.type === 'select') {
    const plan: Plan = planQuery(values, env);
    if (plan.columns.filter((c) => !c.hidden).length > targetCols.length) sqlFail('42601', 'INSERT has more expressions than target columns');
    selectPlan = plan;
  } else return unsupported('INSERT without VALUES or SELECT');

  const conflict = ast.conflict as Ast | null | undefined;
  let conflictTarget: number[] | undefined;
  let conflictPartial: Set<IndexDef> | undefined;
  let doUpdate: { sets: Assignment[]; where: CompiledExpr | undefined } | undefined;
  if (conflict) {
    const t = conflict.target as Ast | null;
    const constraint = ((t?.expr ?? []) as Ast[]).map((c) => columnName(c)).find((n) => n.startsWith(CONFLICT_CONSTRAINT_MARKER));
    if (constraint !== undefined) {
      // ON CONFLICT ON CONSTRAINT name: the primary key's or a unique constraint's columns.
      const name = constraint.slice(CONFLICT_CONSTRAINT_MARKER.length);
      const index = table.indexes.find((i) => i.constraint === 'unique' && i.name === name);
      if (table.primaryKey.length > 0 && primaryKeyName(table) === name) conflictTarget = table.primaryKey;
      else if (index !== undefined) conflictTarget = index.columns;
      else if (table.checks.some((c) => c.name === name) || table.foreignKeys.some((f) => f.name === name)) sqlFail('42809', 'constraint in ON CONFLICT clause has no associated index');
      else sqlFail('42704', `constraint "${name}" for table "${table.name}" does not exist`);
    } else if (t) {
      conflictTarget = ((t.expr ?? []) as Ast[]).map((c) => (writer.live.find((l) => l.name === columnName(c)) ?? sqlFail('42703', `column "${columnName(c)}" does not exist`)).id);
      const isKey = (cols: number[]): boolean => cols.length === conflictTarget!.length && cols.every((c) => conflictTarget!.includes(c));
      // ON CONFLICT (cols) WHERE predicate: checked as an index predicate; the partial unique
      // indexes over cols whose predicate it holds (each conjunct, written alike) are inferred too.
      if (conflictPredicate !== undefined) {
        compilePredicate(conflictPredicate, restrictedEnv('index predicate', env.catalog, writer.live.map((c) => ({ name: c.name, type: c.type, qualifier: alias, collation: columnCollation(c.collation) }))), 'WHERE');
        const nameOf = (ref: AstNode): string | undefined => {
          const n = columnName(ref as Ast);
          return writer.live.some((c) => c.name === n) ? n : undefined;
        };
        conflictPartial = impliedPartialIndexes(
          table.indexes.filter((i) => i.unique && isKey(i.columns)),
          [conflictPredicate],
          nameOf,
        );
      }
      if (!isKey(table.primaryKey) && !table.indexes.some((i) => i.unique && (i.predicate === undefined || conflictPartial?.has(i) === true) && isKey(i.columns))) sqlFail('42P10', 'there is no unique or exclusion constraint matching the ON CONFLICT specification');
    }
    const action = conflict.action?.expr as Ast;
    if (action?.type === 'update') {
      if (conflictTarget === undefined) sqlFail('42601', 'ON CONFLICT DO UPDATE requires inference specification or constraint name');
      const cols = [...writer.live.map((c) => ({ name: c.name, type: c.type, qualifier: alias, collation: columnCollation(c.collation) })), ...writer.live.map((c) => ({ name: c.name, type: c.type, qualifier: 'excluded', collation: columnCollation(c.collation) }))];
      const cenv = exprEnv(env, new Scope(cols, env.parent), undefined, 'ON CONFLICT DO UPDATE');
      const sets = assignments((action.set ?? []) as Ast[], writer, cenv, env, new Scope(cols, env.parent));
      doUpdate = { sets, where: action.where ? compileQuals(qualList(action.where as Ast, 'WHERE'), cenv, 'WHERE') : undefined };
    } else if (!(action?.type === 'origin' && String(action.value).toLowerCase() === 'nothing')) unsupported('this ON CONFLICT action');
  }
  // PostgreSQL's rewriter, after the statement is analysed: the INSERT's columns, then DO UPDATE's.
  const takesDefault = insertDefaults(writer, targetCols, defaultMarks, overriding);
  if (doUpdate !== undefined) checkUpdatedColumns(writer, doUpdate.sets);

  // Everything is planned: the uncorrelated subqueries run now, pausing as they go.
  yield* initPlansOf(env, x);
  // The query reads the state before this statement's inserts.
  if (selectPlan !== undefined) source = yield* allRows(selectPlan, x);

  let count = 0;
  const out: Row[] = [];
  const ctx = x.ctx();
  const touched = new Set<string>();
  let rowIndex = 0;
  for (const step of source) {
    if (step === PAUSE) {
      yield step;
      continue;
    }
    const marks = defaultMarks?.[rowIndex];
    rowIndex++;
    const physical: SqlValue[] = table.columns.map((c) => ({ type: c.type, value: null }) as SqlValue);
    const given = new Set<number>();
    targetCols.forEach((c, i) => {
      if (i < step.length && marks?.[i] !== true && !takesDefault[i]) {
        physical[c.id] = assignValue(step[i]!, c);
        given.add(c.id);
      }
    });
    for (const c of writer.live) if (!given.has(c.id)) physical[c.id] = writer.defaultOf(c, x);
    writer.computeGenerated(physical, x);
    const key = writer.keyOf(physical);
    // As PostgreSQL: the proposed row's NOT NULL and CHECK constraints hold before ON CONFLICT
    // looks for a conflict (a row DO NOTHING skips must still be a valid row).
    writer.validateRow(physical, x);
    if (conflict) {
      const existing = writer.conflictKey(physical, key, conflictTarget, conflictPartial);
      if (existing !== undefined) {
        if (doUpdate === undefined) continue;
        const id = existing.toString('latin1');
        if (touched.has(id)) sqlFail('21000', 'ON CONFLICT DO UPDATE command cannot affect row a second time');
        const oldPhysical = writer.reader.physical(view.get(rowTree(table), existing)!);
        ctx.row = [...writer.reader.toLive(oldPhysical), ...writer.reader.toLive(physical)];
        if (doUpdate.where !== undefined && doUpdate.where.evaluate(ctx).value !== true) continue;
        const next = oldPhysical.slice();
        for (const s of doUpdate.sets) next[s.col.id] = s.expr === undefined ? writer.defaultOf(s.col, x) : assignValue(s.expr.evaluate(ctx), s.col);
        writer.computeGenerated(next, x);
        writer.validate(next, x);
        writer.update(oldPhysical, existing, next, x);
        writer.checkViews(next, x);
        touched.add((table.primaryKey.length === 0 ? existing : writer.keyOf(next)).toString('latin1'));
        count++;
        if (ret !== undefined) out.push(project(ret.exprs, writer.reader.toLive(next), x));
        continue;
      }
    }
    writer.validateReferences(physical);
    writer.checkUnique(physical, key, undefined);
    writer.insert(physical, key);
    writer.checkViews(physical, x);
    touched.add(key.toString('latin1'));
    count++;
    if (ret !== undefined) out.push(project(ret.exprs, writer.reader.toLive(physical), x));
    if (x.tick()) yield PAUSE;
  }
  runAfterStatement(x);
  return { count, columns: ret?.columns ?? [], rows: ret === undefined ? undefined : out };
}

/**
 * INSERT's OVERRIDING clause, which the pre-pass writes as a PARTITION list of one marker
 * (sql-grammar-gaps.ts); a PARTITION list of anything else is not PostgreSQL.
 * @throws SQL_ERROR 42601 a PARTITION list
 */
function overridingOf(ast: Ast): 'system' | 'user' | undefined {
  const partition = ast.partition as unknown[] | null | undefined;
  if (partition === null || partition === undefined) return undefined;
  if (partition.length === 1 && partition[0] === OVERRIDING_SYSTEM_MARKER) return 'system';
  if (partition.length === 1 && partition[0] === OVERRIDING_USER_MARKER) return 'user';
  return sqlFail('42601', 'syntax error at or near "PARTITION"');
}

/**
 * Which of an INSERT's target columns take their default whatever the statement gives, with
 * PostgreSQL's refusals (rewriteTargetListIU, in column order): a given value, or a VALUES list
 * column that is not DEFAULT in every row (a query's column always counts as given), is refused
 * for a generated column, and for an identity column GENERATED ALWAYS unless OVERRIDING SYSTEM
 * VALUE; OVERRIDING USER VALUE makes every identity column take its sequence's next value.
 * @throws SQL_ERROR 428C9
 */
function insertDefaults(writer: TableWriter, targetCols: ColumnDef[], defaultMarks: boolean[][] | undefined, overriding: 'system' | 'user' | undefined): boolean[] {
  const takesDefault = targetCols.map(() => false);
  for (const c of writer.live) {
    const i = targetCols.indexOf(c);
    if (i < 0) continue;
    if (c.identity !== undefined && overriding === 'user') {
      takesDefault[i] = true;
      continue;
    }
    // A row shorter than the column list leaves the rest to their defaults.
    const onlyDefault = defaultMarks !== undefined && defaultMarks.every((m) => i >= m.length || m[i] === true);
    if (c.identity === 'always' && overriding !== 'system' && !onlyDefault) {
      sqlFail('428C9', `cannot insert a non-DEFAULT value into column "${c.name}"`, `Column "${c.name}" is an identity column defined as GENERATED ALWAYS.`, 'Use OVERRIDING SYSTEM VALUE to override.');
    }
    if (c.generated !== undefined && !onlyDefault) sqlFail('428C9', `cannot insert a non-DEFAULT value into column "${c.name}"`, `Column "${c.name}" is a generated column.`);
  }
  return takesDefault;
}

/**
 * PostgreSQL's refusals of an UPDATE's (or DO UPDATE's) SET list, in column order: an identity
 * column GENERATED ALWAYS or a generated column may only be set to DEFAULT.
 * @throws SQL_ERROR 428C9
 */
function checkUpdatedColumns(writer: TableWriter, sets: Assignment[]): void {
  for (const c of writer.live) {
    if (!sets.some((s) => s.col === c && s.expr !== undefined)) continue;
    if (c.identity === 'always') sqlFail('428C9', `column "${c.name}" can only be updated to DEFAULT`, `Column "${c.name}" is an identity column defined as GENERATED ALWAYS.`);
    if (c.generated !== undefined) sqlFail('428C9', `column "${c.name}" can only be updated to DEFAULT`, `Column "${c.name}" is a generated column.`);
  }
}

function project(exprs: CompiledExpr[], row: Row, x: Exec): Row {
  const ctx = x.ctx();
  ctx.row = row;
  return exprs.map((e) => e.evaluate(ctx));
}

/**
 * The rows a WHERE selects from the target table, read before any change (no Halloween problem).
 * The scan is planned here, the last of the statement's planning: the init plans then run
 * before the first row is read.
 */
function* targetRows(table: TableDef, alias: string, where: Ast | null, env: PlanEnv, x: Exec, fromScope: PlanColumn[] | undefined): Generator<Step, StoredRow[]> {
  const scan = tableAccess(table, alias, fromScope === undefined ? qualList(where, 'WHERE') : [], env);
  yield* initPlansOf(env, x);
  const out: StoredRow[] = [];
  const filter = scan.filterExpr;
  const ctx = x.ctx();
  for (const s of readStored(scan.reader, scan.path, x)) {
    if (s === PAUSE) {
      yield s;
      continue;
    }
    if (filter !== undefined) {
      ctx.row = scan.reader.toLive(s.physical);
      if (filter.evaluate(ctx).value !== true) continue;
    }
    out.push(s);
    x.checkWork(out.length * 200, 'UPDATE/DELETE');
  }
  return out;
}

/** The rows of a plan (an INSERT's query, a FROM / USING list), pausing as they come. */
function* allRows(plan: Plan, x: Exec): Generator<Step, Row[]> {
  const rows: Row[] = [];
  for (const s of plan.rows(x)) {
    if (s === PAUSE) yield s;
    else rows.push(s);
  }
  return rows;
}

/** Runs the statement's uncorrelated subqueries (select.ts subPlan), once it is all planned. */
function* initPlansOf(env: PlanEnv, x: Exec): Generator<Step> {
  if (env.initPlans !== undefined) yield* env.initPlans.materialise(x);
}

/** UPDATE t SET ... [FROM ...] [WHERE ...] [RETURNING ...]. */
export function* update(ast: Ast, env: PlanEnv, view: TxnView, x: Exec): Generator<Step, DmlResult> {
  const tref = (ast.table as Ast[])[0]!;
  const table = env.catalog.mustTable(tableName(tref.table));
  const alias = tref.as ? tableName(tref.as) : table.name;
  const writer = new TableWriter(table, env.catalog, view, env);
  const own = writer.live.map((c) => ({ name: c.name, type: c.type, qualifier: alias, collation: columnCollation(c.collation) }));
  let fromPlan: Plan | undefined;
  if (Array.isArray(ast.from) && ast.from.length > 0) {
    // The FROM items keep their names and aliases (SET and WHERE refer to them qualified).
    fromPlan = planFrom(ast.from as Ast[], null, env).plan;
  }
  const cols = [...own, ...(fromPlan?.columns ?? [])];
  const scope = new Scope(cols, env.parent);
  const cenv = exprEnv(env, scope, undefined, 'UPDATE');
  const sets = assignments((ast.set ?? []) as Ast[], writer, cenv, env, scope);
  const where = ast.where ? compileQuals(qualList(ast.where as Ast, 'WHERE'), cenv, 'WHERE') : undefined;
  const ret = returning(ast, writer, env, alias, fromPlan?.columns);
  writer.bindViewChecks(viewChecksOf(ast), alias);
  checkUpdatedColumns(writer, sets);
  const candidates = yield* targetRows(table, alias, ast.where as Ast | null, env, x, fromPlan?.columns);
  const fromRows: Row[] = fromPlan === undefined ? [[]] : yield* allRows(fromPlan, x);
  const ctx = x.ctx();
  let count = 0;
  const out: Row[] = [];
  const done = new Set<string>();
  for (const c of candidates) {
    const live = writer.reader.toLive(c.physical);
    for (const fr of fromRows) {
      ctx.row = fromPlan === undefined ? live : live.concat(fr);
      if (where !== undefined && where.evaluate(ctx).value !== true) continue;
      const id = c.key.toString('latin1');
      if (done.has(id)) break;
      done.add(id);
      // The stored row may have changed since it was read (an earlier row's update of a key).
      const current = view.get(rowTree(table), c.key);
      if (current === undefined) break;
      const old = writer.reader.physical(current);
      ctx.row = fromPlan === undefined ? writer.reader.toLive(old) : writer.reader.toLive(old).concat(fr);
      const next = old.slice();
      for (const s of sets) next[s.col.id] = s.expr === undefined ? writer.defaultOf(s.col, x) : assignValue(s.expr.evaluate(ctx), s.col);
      writer.computeGenerated(next, x);
      writer.validate(next, x);
      writer.update(old, c.key, next, x);
      writer.checkViews(next, x);
      count++;
      if (ret !== undefined) out.push(project(ret.exprs, fromPlan === undefined ? writer.reader.toLive(next) : writer.reader.toLive(next).concat(fr), x));
      break;
    }
    if (x.tick()) yield PAUSE;
  }
  runAfterStatement(x);
  return { count, columns: ret?.columns ?? [], rows: ret === undefined ? undefined : out };
}

/** The checks the statement left for its end (Exec.afterStatement), in the order they were left. */
function runAfterStatement(x: Exec): void {
  for (const check of x.afterStatement.splice(0)) check();
}

/** DELETE FROM t [USING ...] [WHERE ...] [RETURNING ...]. */
export function* deleteRows(ast: Ast, env: PlanEnv, view: TxnView, x: Exec): Generator<Step, DmlResult> {
  const items = (ast.from ?? ast.table) as Ast[];
  const tref = items[0]!;
  // USING reaches here as `t, <marker>, items` only with RETURNING (sql-rewrite.ts; without it
  // the pre-pass makes it a WHERE EXISTS, whose names checkUsingNames checks); a plain `DELETE
  // FROM t, u` is PostgreSQL's syntax error.
  const usingItems = items.length > 1 && items[1]!.table === USING_MARKER ? items.slice(2) : undefined;
  if (items.length > 1 && usingItems === undefined) sqlFail('42601', 'syntax error at or near ","');
  const table = env.catalog.mustTable(tableName(tref.table));
  checkUsingNames(ast, liveColumns(table).map((c) => c.name), env.catalog);
  const alias = tref.as ? tableName(tref.as) : table.name;
  const writer = new TableWriter(table, env.catalog, view, env);
  const usingPlan = usingItems === undefined ? undefined : planFrom(usingItems, null, env).plan;
  const ret = returning(ast, writer, env, alias, usingPlan?.columns);
  let where: CompiledExpr | undefined;
  if (usingPlan !== undefined && ast.where) {
    const own = writer.live.map((c) => ({ name: c.name, type: c.type, qualifier: alias, collation: columnCollation(c.collation) }));
    const scope = new Scope([...own, ...usingPlan.columns], env.parent);
    where = compileQuals(qualList(ast.where as Ast, 'WHERE'), exprEnv(env, scope, undefined, 'WHERE'), 'WHERE');
  }
  const candidates = yield* targetRows(table, alias, ast.where as Ast | null, env, x, usingPlan?.columns);
  const usingRows = usingPlan === undefined ? undefined : yield* allRows(usingPlan, x);
  const ctx = x.ctx();
  let count = 0;
  const out: Row[] = [];
  for (const c of candidates) {
    const live = writer.reader.toLive(c.physical);
    let row: Row | undefined = live;
    if (usingRows !== undefined) {
      // Deleted once, with the first matching USING row (as UPDATE ... FROM).
      row = undefined;
      for (const ur of usingRows) {
        ctx.row = live.concat(ur);
        if (where === undefined || where.evaluate(ctx).value === true) {
          row = ctx.row;
          break;
        }
      }
      if (row === undefined) continue;
    }
    writer.remove(c.physical, c.key, x);
    count++;
    if (ret !== undefined) out.push(project(ret.exprs, row, x));
    if (x.tick()) yield PAUSE;
  }
  runAfterStatement(x);
  return { count, columns: ret?.columns ?? [], rows: ret === undefined ? undefined : out };
}

/**
 * `(a, b)=(1, x)`: columns `ids` of `table` with `values`, by their output functions (booleans
 * t/f), as the DETAIL of a unique or foreign key violation names a key.
 */
export function keyText(table: TableDef, ids: readonly number[], values: readonly SqlValue[]): string {
  return `(${ids.map((id) => table.columns[id]!.name).join(', ')})=(${values.map((v) => (v.value === null ? 'null' : outputText(v as NonNullSqlValue))).join(', ')})`;
}

/** How many bytes of a value a failing row's DETAIL shows (PostgreSQL's maxfieldlen). */
const FAILING_ROW_FIELD_BYTES = 64;

/** `s` cut to at most FAILING_ROW_FIELD_BYTES of UTF-8 without splitting a character (pg_mbcliplen), `...` after a cut. */
function clipOutput(s: string): string {
  if (s.length * 3 <= FAILING_ROW_FIELD_BYTES || Buffer.byteLength(s, 'utf8') <= FAILING_ROW_FIELD_BYTES) return s;
  let bytes = 0;
  let end = 0;
  while (end < s.length) {
    const c = s.codePointAt(end)!;
    const n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (bytes + n > FAILING_ROW_FIELD_BYTES) break;
    bytes += n;
    end += c >= 0x10000 ? 2 : 1;
  }
  return `${s.slice(0, end)}...`;
}
