import { Catalog, indexTree, liveColumns, rowTree, SEQUENCE_TREE, type CheckDef, type ColumnDef, type ForeignKeyDef, type IndexDef, type TableDef } from '../catalog.js';
import { castTargetOf, compileExpression, unsupported, type AstNode } from '../expression-eval.js';
import { encodeRow, keyable, storedOf } from '../store/sql-codec.js';
import type { TxnView } from '../store/sql-view.js';
import { castValue, TYPE_DISPLAY, type CastTarget } from '../sql-cast.js';
import { sqlFail, type SqlValue } from '../sql-types.js';
import { TableReader } from './access.js';
import { assignable, assignValue, indexEntry, writeIndexEntries } from './dml.js';
import { restrictedEnv } from './expression-kinds.js';
import { compilePredicate, functionName } from './select.js';
import { hasMutableCall, hasVolatile } from './quals.js';
import { bindSequenceCalls, dropOwnedSequences } from './sequence-ddl.js';
import { freeSequenceName, relationExists, standaloneKey } from '../sequences.js';
import { PAUSE, type Exec, type Step } from './runtime.js';
import { columnName, tableName, type Scope } from './scope.js';
import { PRIMARY_KEY_MARKER } from '../sql-rewrite.js';
import { DROP_CASCADE_MARKER, GENERATED_MARKER, IDENTITY_ALWAYS_MARKER, IDENTITY_BY_DEFAULT_MARKER } from '../sql-grammar-gaps.js';
import { columnSequence, decodeSequenceOptions, identitySequence, lastValueBytes, nextSequenceValue, rowIdSequence, sequenceStateBytes } from '../sequence-options.js';
import { columnCollation, definedCollation } from '../collation.js';
import type { CompiledExpr } from '../compiled-expr.js';

type Ast = AstNode & Record<string, any>;

/** A declared column type: the stored type, PostgreSQL's name for it, modifiers, serial. */
export function columnType(def: Ast): { target: CastTarget; declared: string; serial: boolean } {
  const name = String(def.dataType).toUpperCase();
  switch (name) {
    case 'SERIAL':
    case 'SERIAL4':
      return { target: { type: 'int4' }, declared: 'integer', serial: true };
    case 'BIGSERIAL':
    case 'SERIAL8':
      return { target: { type: 'int8' }, declared: 'bigint', serial: true };
    case 'SMALLSERIAL':
      return { target: { type: 'int2' }, declared: 'smallint', serial: true };
    case 'REAL':
    case 'FLOAT4':
      return { target: { type: 'float8' }, declared: 'double precision', serial: false };
    case 'JSON':
      return { target: { type: 'jsonb' }, declared: 'jsonb', serial: false };
    case 'INT2':
      return { target: { type: 'int2' }, declared: 'smallint', serial: false };
    case 'INT4':
      return { target: { type: 'int4' }, declared: 'integer', serial: false };
    case 'INT8':
      return { target: { type: 'int8' }, declared: 'bigint', serial: false };
    case 'FLOAT8':
      return { target: { type: 'float8' }, declared: 'double precision', serial: false };
    default: {
      const target = castTargetOf(def as unknown as { dataType: string });
      let declared = TYPE_DISPLAY[target.type];
      if (target.type === 'bpchar') declared = target.maxLength === undefined ? 'bpchar' : `character(${target.maxLength})`;
      else if (target.type === 'bit' || target.type === 'varbit') declared = target.maxLength === undefined ? TYPE_DISPLAY[target.type] : `${TYPE_DISPLAY[target.type]}(${target.maxLength})`;
      else if (target.maxLength !== undefined) declared = `character varying(${target.maxLength})`;
      else if (name === 'VARCHAR' || name === 'CHARACTER VARYING') declared = 'character varying';
      if (target.precision !== undefined) declared = `numeric(${target.precision},${target.scale ?? 0})`;
      return { target, declared, serial: false };
    }
  }
}

function refColumns(nodes: Ast[]): string[] {
  return nodes.map((n) => columnName(n));
}

function idsOf(table: TableDef, names: string[], what: string): number[] {
  return names.map((n) => {
    const c = liveColumns(table).find((x) => x.name === n);
    if (c === undefined) sqlFail('42703', `column "${n}" named in ${what} does not exist`);
    return c.id;
  });
}

function uniqueName(base: string, taken: Set<string>): string {
  let name = base;
  for (let i = 1; taken.has(name); i++) name = `${base}${i}`;
  taken.add(name);
  return name;
}

/** ON DELETE NO ACTION / RESTRICT / CASCADE / SET NULL; ON UPDATE NO ACTION / RESTRICT. */
function fkActions(ref: Ast): Pick<ForeignKeyDef, 'onDelete'> {
  let onDelete: ForeignKeyDef['onDelete'];
  for (const a of (ref.on_action ?? []) as Ast[]) {
    const v = String(a.value?.value ?? a.value ?? '').toLowerCase();
    const on = String(a.type ?? '').toLowerCase();
    if (v === '' || v === 'no action' || v === 'restrict') continue;
    if (on === 'on delete' && (v === 'cascade' || v === 'set null')) onDelete = v;
    else unsupported(`${on.toUpperCase()} ${v.toUpperCase()} (ON DELETE supports CASCADE and SET NULL; ON UPDATE only NO ACTION / RESTRICT)`);
  }
  return onDelete === undefined ? {} : { onDelete };
}

/** CREATE TABLE. */
export function createTable(ast: Ast, catalog: Catalog, view: TxnView): 'created' | 'exists' {
  const raw = (ast.table as Ast[] | null)?.[0]?.table;
  if (raw === undefined || raw === null || raw === '') sqlFail('42601', 'syntax error: CREATE TABLE needs a table name');
  const name = tableName(raw);
  if (relationExists(catalog, name)) {
    if (ast.if_not_exists) return 'exists';
    sqlFail('42P07', `relation "${name}" already exists`);
  }
  if (ast.query_expr || ast.as) unsupported('CREATE TABLE ... AS');
  const table: TableDef = { id: catalog.newId(), name, columns: [], primaryKey: [], indexes: [], checks: [], foreignKeys: [] };
  const pending: { kind: 'pk' | 'unique'; cols: string[]; name?: string }[] = [];
  const checks: { node: Ast; name?: string }[] = [];
  const fks: { cols: string[]; ref: Ast; name?: string }[] = [];
  for (const d of (ast.create_definitions ?? []) as Ast[]) {
    if (d.resource === 'column') {
      const cname = columnName(d.column as Ast);
      if (table.columns.some((c) => c.name === cname)) sqlFail('42701', `column "${cname}" specified more than once`);
      const col = columnDef(d, table);
      table.columns.push(col);
      if (d.primary_key) pending.push({ kind: 'pk', cols: [cname] });
      if (d.unique) pending.push({ kind: 'unique', cols: [cname] });
      if (d.check) for (const c of (d.check as Ast).definition as Ast[]) checks.push({ node: c });
      if (d.reference_definition) fks.push({ cols: [cname], ref: d.reference_definition as Ast });
      continue;
    }
    if (d.resource === 'constraint') {
      const type = String(d.constraint_type).toLowerCase();
      const cname = d.constraint ? String(d.constraint) : undefined;
      if (type === 'primary key') pending.push({ kind: 'pk', cols: refColumns(d.definition as Ast[]), name: cname });
      else if (type === 'unique' || type === 'unique key' || type === 'unique index') pending.push({ kind: 'unique', cols: refColumns(d.definition as Ast[]), name: cname });
      else if (type === 'check') for (const c of d.definition as Ast[]) checks.push({ node: c, name: cname });
      else if (type === 'foreign key') fks.push({ cols: refColumns(d.definition as Ast[]), ref: d.reference_definition as Ast, name: cname });
      else unsupported(`constraint ${type}`);
      continue;
    }
    unsupported(`table element ${String(d.resource)}`);
  }
  nameNewSequences(table.columns, table, catalog);
  const taken = new Set<string>([...catalog.tables.values()].flatMap((t) => t.indexes.map((i) => i.name)));
  for (const p of pending) {
    const ids = idsOf(table, p.cols, p.kind === 'pk' ? 'PRIMARY KEY' : 'UNIQUE');
    for (const id of ids) if (!keyable(table.columns[id]!.type)) sqlFail('42804', `data type ${table.columns[id]!.declared} has no default operator class for access method "btree"`);
    if (p.kind === 'pk') {
      if (table.primaryKey.length > 0) sqlFail('42P16', `multiple primary keys for table "${name}" are not allowed`);
      table.primaryKey = ids;
      for (const id of ids) table.columns[id]!.notNull = true;
    } else {
      const index: IndexDef = { id: catalog.newId(), name: uniqueName(p.name ?? `${name}_${p.cols.join('_')}_key`, taken), columns: ids, unique: true, constraint: 'unique' };
      table.indexes.push(index);
    }
  }
  const checkNames = new Set<string>();
  table.checks = checks.map((c): CheckDef => ({ name: uniqueName(c.name ?? checkName(name, c.node), checkNames), expr: c.node }));
  // DEFAULT and generation expressions in column order, then CHECKs, as PostgreSQL's
  // AddRelationNewConstraints reads them (before the foreign keys, added after the table).
  for (const c of table.columns) {
    if (c.default !== undefined) checkDefault(c, catalog);
    if (c.generated !== undefined) checkGeneration(c, table, catalog);
  }
  for (const c of table.checks) checkCheck(c.expr, table, catalog);
  const fkNames = new Set<string>();
  for (const f of fks) {
    const actions = fkActions(f.ref);
    const refName = tableName(((f.ref.table as Ast[])[0] as Ast).table);
    const target = refName === name ? table : catalog.mustTable(refName);
    const cols = idsOf(table, f.cols, 'FOREIGN KEY');
    const named = Array.isArray(f.ref.definition) ? refColumns(f.ref.definition as Ast[]).filter((c) => c !== PRIMARY_KEY_MARKER) : [];
    const refCols = named.length > 0 ? idsOf(target, named, 'REFERENCES') : target.primaryKey;
    if (refCols.length === 0) sqlFail('42830', `there is no primary key for referenced table "${refName}"`);
    if (refCols.length !== cols.length) sqlFail('42830', 'number of referencing and referenced columns for foreign key disagree');
    const isKey = sameSet(refCols, target.primaryKey) || target.indexes.some((i) => i.unique && sameSet(i.columns, refCols));
    if (!isKey) sqlFail('42830', `there is no unique constraint matching given keys for referenced table "${refName}"`);
    // SET NULL would write a generated column (PostgreSQL refuses it here; CASCADE deletes rows).
    if (actions.onDelete === 'set null' && cols.some((id) => table.columns[id]!.generated !== undefined)) sqlFail('42601', 'invalid ON DELETE action for foreign key constraint containing generated column');
    const fk: ForeignKeyDef = { name: uniqueName(f.name ?? `${name}_${f.cols.join('_')}_fkey`, fkNames), columns: cols, refTable: refName, refColumns: refCols, ...actions };
    // ON DELETE SET NULL over a NOT NULL column is accepted and fails at delete time (23502), as in PostgreSQL.
    table.foreignKeys.push(fk);
  }
  catalog.save(view, table);
  return 'created';
}

/**
 * A column of CREATE TABLE or ALTER TABLE ADD COLUMN, from its definition: type, NOT NULL,
 * COLLATE, and what fills it when no value is given (a DEFAULT, an identity's sequence, a
 * generation expression). The expressions are checked by the caller, once all columns exist.
 * @throws SQL_ERROR 22023 an identity column not of an integer type, 42804 / 42704 (columnType, definedCollation)
 */
function columnDef(d: Ast, table: TableDef): ColumnDef {
  const { target, declared, serial: serialType } = columnType(d.definition as Ast);
  const value = d.default_val ? ((d.default_val as Ast).value as Ast) : undefined;
  const marker = value?.type === 'function' ? functionName(value) : undefined;
  // GENERATED ALWAYS AS IDENTITY and GENERATED ALWAYS AS (expr) arrive as DEFAULT <marker>(...)
  // (sql-grammar-gaps.ts); the parser reads BY DEFAULT AS IDENTITY itself.
  const identity = marker === IDENTITY_ALWAYS_MARKER ? 'always' : marker === IDENTITY_BY_DEFAULT_MARKER || d.generated_by_default ? 'by default' : undefined;
  if (identity !== undefined && !['int2', 'int4', 'int8'].includes(target.type)) sqlFail('22023', `identity column type must be smallint, integer, or bigint`);
  // Its sequence options, checked against the column's type (see sequence-options.ts).
  const written = identity === undefined || marker === undefined ? undefined : ((value!.args as Ast | undefined)?.value as Ast[] | undefined)?.[0];
  const sequence = written === undefined ? undefined : identitySequence(decodeSequenceOptions(written.value as string), target.type as 'int2' | 'int4' | 'int8');
  // An identity column is a serial for all that fills it: the next value of its sequence when
  // none is given, a given value kept (and the sequence not moved).
  const serial = serialType || identity !== undefined;
  const col: ColumnDef = { id: table.columns.length, name: columnName(d.column as Ast), type: target.type, declared, target, notNull: d.nullable?.type === 'not null' || serial };
  const collation = definedCollation(d.collate, target.type, declared);
  if (collation !== undefined) col.collation = collation;
  if (serial) col.serial = true;
  if (identity !== undefined) col.identity = identity;
  if (sequence !== undefined) col.sequence = sequence;
  if (marker === GENERATED_MARKER) col.generated = (value!.args as Ast).value[0] as Ast;
  else if (value !== undefined && identity === undefined) col.default = value;
  return col;
}

/**
 * A generation expression, checked as PostgreSQL's cookDefault checks it: what it may hold
 * (restrictedEnv; the table's columns only), no generated column among those (itself included),
 * only immutable functions, then its type against the column's (a literal is converted now).
 * The stored expression names its columns unqualified and quoted, so that renaming the table
 * leaves it valid and renaming a column is a change of its names (renameColumnRefs).
 * @throws SQL_ERROR 0A000, 42803, 42P20 (restrictedEnv), 42703 unknown column, 42P17 a generated
 * column or a mutable function in it, 42804 no assignment conversion, 22P02 bad literal
 */
function checkGeneration(col: ColumnDef, table: TableDef, catalog: Catalog): CompiledExpr {
  const e = compileExpression(col.generated!, restrictedEnv('generated', catalog, tableColumns(table)));
  for (const name of columnRefs(col.generated!)) {
    if (liveColumns(table).some((c) => c.name === name && c.generated !== undefined)) {
      sqlFail('42P17', `cannot use generated column "${name}" in column generation expression`, 'A generated column cannot reference another generated column.');
    }
  }
  if (hasMutableCall(col.generated)) sqlFail('42P17', 'generation expression is not immutable');
  if (e.type === 'unknown') assignValue(e.evaluate({ statementTime: 0n }), col);
  else if (!assignable(e.type, col.type)) sqlFail('42804', `column "${col.name}" is of type ${col.declared} but default expression is of type ${TYPE_DISPLAY[e.type] ?? e.type}`, undefined, 'You will need to rewrite or cast the expression.');
  col.generated = unqualified(col.generated!);
  return e;
}

/**
 * The name PostgreSQL gives an unnamed CHECK (AddRelationNewConstraints): `<table>_<column>_check`
 * when its expression reads exactly one column, whether written on a column or on the table, else
 * `<table>_check`.
 */
function checkName(table: string, expr: Ast): string {
  const columns = new Set(columnRefs(expr));
  return columns.size === 1 ? `${table}_${[...columns][0]!}_check` : `${table}_check`;
}

/** The column names an expression's column references name, in the order they appear. */
function columnRefs(node: unknown, out: string[] = []): string[] {
  if (node === null || typeof node !== 'object') return out;
  if (Array.isArray(node)) {
    for (const n of node) columnRefs(n, out);
    return out;
  }
  const n = node as Ast;
  if (n.type === 'column_ref') out.push(columnName(n));
  else for (const k of Object.keys(n)) if (k !== 'loc') columnRefs(n[k], out);
  return out;
}

/** A copy of an expression whose column references are bare quoted names. */
function unqualified(node: AstNode): AstNode {
  return JSON.parse(JSON.stringify(node), (_k, v: unknown) => {
    const n = v as Ast | null;
    if (n === null || typeof n !== 'object' || n.type !== 'column_ref') return v;
    return { type: 'column_ref', table: null, column: { expr: { type: 'double_quote_string', value: columnName(n) } } };
  }) as AstNode;
}

/** An expression (stored by unqualified) with its references to column `from` renamed `to`. */
function renameColumnRefs(node: AstNode, from: string, to: string): AstNode {
  return JSON.parse(JSON.stringify(node), (_k, v: unknown) => {
    const n = v as Ast | null;
    if (n === null || typeof n !== 'object' || n.type !== 'column_ref' || columnName(n) !== from) return v;
    return { ...n, column: { expr: { type: 'double_quote_string', value: to } } };
  }) as AstNode;
}

function sameSet(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x) => b.includes(x));
}

/** A table's columns as the scope of its CHECK, generation and index expressions. */
function tableColumns(table: TableDef): Scope['columns'] {
  return liveColumns(table).map((c) => ({ name: c.name, type: c.type, qualifier: table.name, collation: columnCollation(c.collation) }));
}

/**
 * A column's DEFAULT, checked as PostgreSQL checks it when the column is defined: what the
 * expression may hold (restrictedEnv), then its type against the column's (a literal is
 * converted now, so bad input fails here).
 * @throws SQL_ERROR 0A000, 42803, 42P20 (restrictedEnv), 42804 no assignment conversion, 22P02 bad literal
 */
function checkDefault(col: ColumnDef, catalog: Catalog): CompiledExpr {
  col.default = bindSequenceCalls(col.default!, catalog);
  const e = compileExpression(col.default, restrictedEnv('default', catalog, []));
  if (e.type === 'unknown') assignValue(e.evaluate({ statementTime: 0n }), col);
  else if (!assignable(e.type, col.type)) sqlFail('42804', `column "${col.name}" is of type ${col.declared} but default expression is of type ${TYPE_DISPLAY[e.type] ?? e.type}`, undefined, 'You will need to rewrite or cast the expression.');
  return e;
}

/**
 * A CHECK constraint, checked as PostgreSQL checks it when it is defined: what it may hold
 * (restrictedEnv), the columns it names (the table's only), and a boolean result.
 * @throws SQL_ERROR 0A000, 42803, 42P20 (restrictedEnv), 42703 unknown column, 42P01 another table, 42804 not boolean
 */
function checkCheck(node: AstNode, table: TableDef, catalog: Catalog): void {
  compilePredicate(node, restrictedEnv('check', catalog, tableColumns(table)), 'CHECK');
}

/** DROP TABLE [IF EXISTS] a, b. */
export function dropTables(ast: Ast, catalog: Catalog, view: TxnView): number {
  let dropped = 0;
  const names = ((ast.name ?? []) as Ast[]).map((n) => tableName(n.table));
  for (const name of names) {
    const t = catalog.table(name);
    if (t === undefined) {
      if (ast.prefix && String(ast.prefix).toUpperCase().includes('IF EXISTS')) continue;
      sqlFail('42P01', `table "${name}" does not exist`);
    }
    for (const other of catalog.tables.values()) {
      if (other.name !== name && !names.includes(other.name) && other.foreignKeys.some((f) => f.refTable === name)) {
        sqlFail('2BP01', `cannot drop table ${name} because other objects depend on it (constraint ${other.foreignKeys.find((f) => f.refTable === name)!.name} on table ${other.name})`);
      }
    }
    view.dropTree(rowTree(t));
    for (const ix of t.indexes) view.dropTree(indexTree(ix));
    for (const c of t.columns) if (c.serial) view.delete(SEQUENCE_TREE, columnSequence(t, c).key);
    view.delete(SEQUENCE_TREE, rowIdSequence(t).key);
    // Sequences OWNED BY its columns go with it (defaults of tables dropped with it do not hold them).
    dropOwnedSequences(catalog, view, t, undefined, names.map((n) => catalog.table(n)).filter((x): x is TableDef => x !== undefined));
    catalog.remove(view, name);
    dropped++;
  }
  return dropped;
}

/**
 * TRUNCATE [TABLE] [ONLY] a, b [RESTART IDENTITY | CONTINUE IDENTITY] [CASCADE | RESTRICT]: every
 * row and index entry of the tables goes, as PostgreSQL's. A table another table's foreign key
 * references must be truncated with it: listed, or added by CASCADE (and so on, from those).
 * RESTART IDENTITY starts their serial and identity sequences again at their START.
 * @throws SQL_ERROR 42P01 an unknown table, 0A000 a referencing table left out without CASCADE
 */
export function truncateTables(ast: Ast, catalog: Catalog, view: TxnView): void {
  const options = ((ast.suffix ?? []) as Ast[]).map((o) => String(o.value).toUpperCase());
  const cascade = options.includes('CASCADE');
  const restart = options.includes('RESTART IDENTITY');
  const tables: TableDef[] = [];
  for (const n of (ast.name ?? []) as Ast[]) {
    const t = catalog.table(tableName(n.table)) ?? sqlFail('42P01', `relation "${tableName(n.table)}" does not exist`);
    if (!tables.includes(t)) tables.push(t);
  }
  // The tables whose foreign keys reference one being truncated, in creation order.
  const all = [...catalog.tables.values()].sort((a, b) => a.id - b.id);
  for (let i = 0; i < tables.length; i++) {
    const target = tables[i]!;
    for (const other of all) {
      if (tables.includes(other) || !other.foreignKeys.some((f) => f.refTable === target.name)) continue;
      if (!cascade) sqlFail('0A000', 'cannot truncate a table referenced in a foreign key constraint', `Table "${other.name}" references "${target.name}".`, `Truncate table "${other.name}" at the same time, or use TRUNCATE ... CASCADE.`);
      tables.push(other);
    }
  }
  for (const t of tables) {
    view.dropTree(rowTree(t));
    for (const ix of t.indexes) view.dropTree(indexTree(ix));
    if (!restart) continue;
    // The next value is START again (a RESTART given at creation was for the first one only), for
    // the serial and identity columns and the sequences OWNED BY the table's columns.
    for (const c of liveColumns(t)) {
      if (!c.serial) continue;
      const { def, key } = columnSequence(t, c);
      view.put(SEQUENCE_TREE, key, sequenceStateBytes({ last: BigInt(def.start), called: false }));
    }
    for (const seq of catalog.sequences.values()) {
      if (seq.ownedBy?.table === t.id) view.put(SEQUENCE_TREE, standaloneKey(seq), sequenceStateBytes({ last: BigInt(seq.def.start), called: false }));
    }
  }
}

/** CREATE [UNIQUE] INDEX name ON t (cols): built from the rows in the same transaction. */
export function* createIndex(ast: Ast, catalog: Catalog, view: TxnView, x: Exec): Generator<Step, 'created' | 'exists'> {
  const tname = tableName((ast.table as Ast).table);
  const table = catalog.mustTable(tname);
  const cols = ((ast.index_columns ?? []) as Ast[]).map((c) => {
    if (c.type !== 'column_ref') {
      // PostgreSQL's refusals of what an index expression may hold come first.
      compileExpression(c, restrictedEnv('index expression', catalog, tableColumns(table)));
      unsupported('index on an expression');
    }
    if (c.order_by && String(c.order_by).toLowerCase() === 'desc') unsupported('DESC index columns (an ascending index serves both directions)');
    // An element's COLLATE: every collation tetradb accepts orders as the column does.
    if (c.collate) {
      const col = liveColumns(table).find((x) => x.name === columnName(c)) ?? sqlFail('42703', `column "${columnName(c)}" does not exist`);
      definedCollation(c.collate, col.type, col.declared);
    }
    return columnName(c);
  });
  if (ast.where) {
    compilePredicate(ast.where as Ast, restrictedEnv('index predicate', catalog, tableColumns(table)), 'WHERE');
    unsupported('partial indexes (CREATE INDEX ... WHERE)');
  }
  const ids = idsOf(table, cols, 'the index');
  for (const id of ids) if (!keyable(table.columns[id]!.type)) sqlFail('42804', `data type ${table.columns[id]!.declared} has no default operator class for access method "btree"`);
  const name = ast.index ? String(ast.index).toLowerCase() : `${tname}_${cols.join('_')}_idx`;
  if (relationExists(catalog, name)) {
    if (ast.if_not_exists) return 'exists';
    sqlFail('42P07', `relation "${name}" already exists`);
  }
  const index: IndexDef = { id: catalog.newId(), name, columns: ids, unique: String(ast.index_type ?? '').toLowerCase() === 'unique' };
  const reader = new TableReader(table);
  const seen = new Set<string>();
  for (const [key, value] of view.scan(rowTree(table))) {
    const physical = reader.physical(value);
    if (index.unique) {
      const entry = indexEntry(index, physical, key);
      if (entry.uniqueKey !== undefined) {
        const id = entry.uniqueKey.toString('latin1');
        if (seen.has(id)) sqlFail('23505', `could not create unique index "${name}": key is duplicated`);
        seen.add(id);
      }
    }
    writeIndexEntries(view, [index], physical, key, 'put');
    if (x.tick()) yield PAUSE;
  }
  table.indexes.push(index);
  catalog.save(view, table);
  return 'created';
}

/** DROP INDEX [IF EXISTS] name. */
export function dropIndex(ast: Ast, catalog: Catalog, view: TxnView): boolean {
  const name = columnName(ast.name as Ast);
  const found = catalog.findIndex(name);
  if (found === undefined) {
    if (ast.prefix && String(ast.prefix).toUpperCase().includes('IF EXISTS')) return false;
    sqlFail('42704', `index "${name}" does not exist`);
  }
  if (found.index.constraint !== undefined) sqlFail('2BP01', `cannot drop index ${name} because constraint ${name} on table ${found.table.name} requires it`);
  found.table.indexes = found.table.indexes.filter((i) => i !== found.index);
  view.dropTree(indexTree(found.index));
  catalog.save(view, found.table);
  return true;
}

/**
 * ALTER TABLE ... ADD COLUMN ... GENERATED ALWAYS AS (expr) STORED: the expression checked, then
 * computed for every existing row and written into it (PostgreSQL rewrites the table too).
 * @throws SQL_ERROR as checkGeneration; 23502 a NOT NULL column computed NULL for a row
 */
function* addGeneratedColumn(col: ColumnDef, table: TableDef, catalog: Catalog, view: TxnView, x: Exec): Generator<Step, void> {
  table.columns.push(col);
  const expr = checkGeneration(col, table, catalog);
  const reader = new TableReader(table);
  const ctx = x.ctx();
  yield* fillNewColumn(col, table, catalog, view, x, (physical) => {
    ctx.row = reader.toLive(physical);
    const value = assignValue(expr.evaluate(ctx), col);
    if (col.notNull && value.value === null) sqlFail('23502', `column "${col.name}" of relation "${table.name}" contains null values`);
    return value;
  });
}

/**
 * ADD COLUMN of a serial type or an identity column: every existing row takes the next value of
 * the column's new sequence, as PostgreSQL's table rewrite gives it, in the order the rows are
 * read (primary key order here; PostgreSQL's is the heap's).
 * @throws SQL_ERROR 2200H when the rows outnumber the sequence
 */
function* addSequenceColumn(col: ColumnDef, table: TableDef, catalog: Catalog, view: TxnView, x: Exec): Generator<Step, void> {
  table.columns.push(col);
  const { def, name, key } = columnSequence(table, col);
  let last: bigint | undefined;
  yield* fillNewColumn(col, table, catalog, view, x, () => {
    last = nextSequenceValue(def, last, name);
    return castValue({ type: 'int8', value: last }, { type: col.type });
  });
  if (last !== undefined) view.put(SEQUENCE_TREE, key, lastValueBytes(last));
}

/**
 * ADD COLUMN with a volatile DEFAULT: evaluated for each existing row, in the order the rows are
 * read (primary key order here; PostgreSQL's is the heap's).
 * @throws SQL_ERROR as checkDefault; 23502 a NOT NULL column whose default gave NULL
 */
function* addVolatileDefaultColumn(col: ColumnDef, table: TableDef, catalog: Catalog, view: TxnView, x: Exec): Generator<Step, void> {
  const expr = checkDefault(col, catalog);
  table.columns.push(col);
  const ctx = x.ctx();
  yield* fillNewColumn(col, table, catalog, view, x, () => {
    const value = assignValue(expr.evaluate(ctx), col);
    if (col.notNull && value.value === null) sqlFail('23502', `column "${col.name}" of relation "${table.name}" contains null values`);
    return value;
  });
}

/**
 * The new column `col` (already the table's last) given `valueOf` each existing row, in the
 * order the rows are read, then the table saved: ADD COLUMN's rewrite of the table.
 */
function* fillNewColumn(col: ColumnDef, table: TableDef, catalog: Catalog, view: TxnView, x: Exec, valueOf: (physical: SqlValue[]) => SqlValue): Generator<Step, void> {
  col.missing = storedOf({ type: col.type, value: null } as SqlValue);
  const reader = new TableReader(table);
  // Read first, written after: the scan does not meet its own writes.
  const rows: [Buffer, SqlValue[]][] = [];
  for (const [key, value] of view.scan(rowTree(table))) {
    const physical = reader.physical(value);
    physical[col.id] = valueOf(physical);
    rows.push([key, physical]);
    if (x.tick()) yield PAUSE;
  }
  for (const [key, physical] of rows) view.put(rowTree(table), key, encodeRow(physical));
  catalog.save(view, table);
}

/**
 * DROP COLUMN: its indexes, CHECKs and this table's foreign keys from it go with it, as in
 * PostgreSQL. What depends on it otherwise (generated columns that read it, foreign keys to it or
 * to those generated columns, this table's own included) is dropped too under CASCADE, else the
 * drop is 2BP01 naming them all in its DETAIL.
 * @throws SQL_ERROR 2BP01 dependents without CASCADE, 0A000 a primary key column
 */
function dropColumn(table: TableDef, col: ColumnDef, cascade: boolean, catalog: Catalog, view: TxnView): void {
  if (table.primaryKey.includes(col.id)) unsupported('dropping a primary key column');
  const generated = liveColumns(table).filter((c) => c !== col && c.generated !== undefined && columnRefs(c.generated).includes(col.name));
  // The foreign keys to a column (not those from it, which go with it), tables in creation order.
  const referencing = (target: ColumnDef): { other: TableDef; fk: ForeignKeyDef }[] =>
    [...catalog.tables.values()]
      .sort((x, y) => x.id - y.id)
      .flatMap((other) => other.foreignKeys.filter((f) => f.refTable === table.name && f.refColumns.includes(target.id) && !(other === table && f.columns.includes(target.id))).map((fk) => ({ other, fk })));
  const fkLine = ({ other, fk }: { other: TableDef; fk: ForeignKeyDef }, target: ColumnDef): string => `constraint ${fk.name} on table ${other.name} depends on column ${target.name} of table ${table.name}`;
  const direct = referencing(col);
  if (!cascade && (generated.length > 0 || direct.length > 0)) {
    const lines: string[] = [];
    for (const g of generated) {
      lines.push(`column ${g.name} of table ${table.name} depends on column ${col.name} of table ${table.name}`);
      for (const r of referencing(g)) lines.push(fkLine(r, g));
    }
    for (const r of direct) lines.push(fkLine(r, col));
    sqlFail('2BP01', `cannot drop column ${col.name} of table ${table.name} because other objects depend on it`, lines.join('\n'), 'Use DROP ... CASCADE to drop the dependent objects too.');
  }
  for (const { other, fk } of direct) {
    other.foreignKeys = other.foreignKeys.filter((f) => f !== fk);
    if (other !== table) catalog.save(view, other);
  }
  dropOwnedSequences(catalog, view, table, col);
  col.dropped = true;
  for (const ix of table.indexes.filter((i) => i.columns.includes(col.id))) view.dropTree(indexTree(ix));
  table.indexes = table.indexes.filter((i) => !i.columns.includes(col.id));
  table.foreignKeys = table.foreignKeys.filter((f) => !f.columns.includes(col.id));
  table.checks = table.checks.filter((c) => !JSON.stringify(c.expr).includes(`"value":"${col.name}"`));
  catalog.save(view, table);
  // CASCADE: the generated columns that read it, and what depends on them (none of them reads
  // another generated column).
  for (const g of generated) dropColumn(table, g, true, catalog, view);
}

/** Fixes the name of a serial or identity column's sequence before its table or column is renamed (unless it has one already). */
function nameSequence(table: TableDef, col: ColumnDef): void {
  const { def, name } = columnSequence(table, col);
  col.sequence = { ...def, name };
}

/**
 * Serial and identity columns whose sequence would take a relation's name (a table, index or
 * sequence, or another new column's sequence) get `<name>1`, `<name>2`, ... as PostgreSQL's
 * ChooseRelationName gives them.
 */
function nameNewSequences(columns: readonly ColumnDef[], table: TableDef, catalog: Catalog): void {
  const taken = new Set<string>();
  for (const c of columns) {
    if (!c.serial) continue;
    const { def, name } = columnSequence(table, c);
    if (def.name === undefined) {
      const free = freeSequenceName(catalog, name, taken);
      if (free !== name) c.sequence = { ...def, name: free };
      taken.add(free);
    } else taken.add(name);
  }
}

/** ALTER TABLE: ADD / DROP / RENAME COLUMN, RENAME TO. */
export function* alterTable(ast: Ast, catalog: Catalog, view: TxnView, x: Exec): Generator<Step, void> {
  const name = tableName((ast.table as Ast[])[0]!.table);
  let table = catalog.mustTable(name);
  for (const e of (ast.expr ?? []) as Ast[]) {
    const action = String(e.action).toLowerCase();
    const resource = String(e.resource).toLowerCase();
    if (action === 'rename' && resource === 'table') {
      const to = tableName(e.table);
      if (catalog.table(to) !== undefined) sqlFail('42P07', `relation "${to}" already exists`);
      catalog.remove(view, table.name);
      for (const other of catalog.tables.values()) {
        let changed = false;
        for (const f of other.foreignKeys) if (f.refTable === table.name) ((f.refTable = to), (changed = true));
        if (changed) catalog.save(view, other);
      }
      for (const f of table.foreignKeys) if (f.refTable === table.name) f.refTable = to;
      // A sequence keeps the name it was made with, as PostgreSQL's (its own object) does.
      for (const c of liveColumns(table)) if (c.serial) nameSequence(table, c);
      table.name = to;
      catalog.save(view, table);
      continue;
    }
    if (action === 'rename' && resource === 'column') {
      const from = typeof e.old_column === 'string' ? e.old_column : columnName(e.old_column ?? e.column);
      const to = typeof e.new_column === 'string' ? e.new_column : columnName(e.column ?? e.new_column);
      const col = liveColumns(table).find((c) => c.name === from) ?? sqlFail('42703', `column "${from}" does not exist`);
      if (liveColumns(table).some((c) => c.name === to)) sqlFail('42701', `column "${to}" of relation "${table.name}" already exists`);
      if (col.serial) nameSequence(table, col);
      col.name = to;
      for (const c of liveColumns(table)) if (c.generated !== undefined) c.generated = renameColumnRefs(c.generated, from, to);
      catalog.save(view, table);
      continue;
    }
    if (action === 'add' && resource === 'column') {
      const cname = columnName(e.column as Ast);
      if (liveColumns(table).some((c) => c.name === cname)) {
        if (e.if_not_exists) continue;
        sqlFail('42701', `column "${cname}" of relation "${table.name}" already exists`);
      }
      if (e.primary_key || e.unique || e.reference_definition || e.check) unsupported('constraints in ALTER TABLE ADD COLUMN (add the column, then CREATE UNIQUE INDEX)');
      const col = columnDef(e, table);
      if (col.serial) {
        nameNewSequences([col], table, catalog);
        yield* addSequenceColumn(col, table, catalog, view, x);
        continue;
      }
      if (col.generated !== undefined) {
        yield* addGeneratedColumn(col, table, catalog, view, x);
        continue;
      }
      if (col.default !== undefined && hasVolatile(col.default)) {
        // A volatile default (nextval, random()) is evaluated for each existing row, as
        // PostgreSQL's table rewrite does.
        yield* addVolatileDefaultColumn(col, table, catalog, view, x);
        continue;
      }
      // Existing rows take the default's value (evaluated once), as PostgreSQL does.
      let missing: SqlValue = { type: col.type, value: null } as SqlValue;
      if (col.default !== undefined) missing = assignValue(checkDefault(col, catalog).evaluate(x.ctx()), col);
      if (col.notNull && missing.value === null) {
        for (const _ of view.scan(rowTree(table), { limit: 1 })) sqlFail('23502', `column "${cname}" of relation "${table.name}" contains null values`);
      }
      col.missing = storedOf(missing);
      table.columns.push(col);
      catalog.save(view, table);
      continue;
    }
    if (action === 'drop' && resource === 'column') {
      const written = columnName(e.column as Ast);
      // `DROP COLUMN a CASCADE` arrives as a marked name (sql-grammar-gaps.ts, rewriteDropBehavior).
      const cascade = written.startsWith(DROP_CASCADE_MARKER);
      const cname = cascade ? written.slice(DROP_CASCADE_MARKER.length) : written;
      const col = liveColumns(table).find((c) => c.name === cname);
      if (col === undefined) {
        if (e.if_exists) continue;
        sqlFail('42703', `column "${cname}" of relation "${table.name}" does not exist`);
      }
      dropColumn(table, col, cascade, catalog, view);
      continue;
    }
    unsupported(`ALTER TABLE ${action.toUpperCase()} ${resource.toUpperCase()}`);
  }
}
