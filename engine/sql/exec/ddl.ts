import { Catalog, indexTree, liveColumns, primaryKeyName, rowTree, SEQUENCE_TREE, type CheckDef, type ColumnDef, type ForeignKeyDef, type IndexDef, type TableDef } from '../catalog.js';
import { refuseTypeName } from './type-ddl.js';
import { arrayElementNode, arrayTarget, castTargetOf, compileExpression, unsupported, type AstNode, type TypeLookup } from '../expression-eval.js';
import { encodeKeyTuple, encodeRow, keyable, storedOf } from '../store/sql-codec.js';
import type { TxnView } from '../store/sql-view.js';
import { castValue, typeDisplay, type CastTarget } from '../sql-cast.js';
import { elementTypeOf, isArrayType, sqlFail, type ScalarTypeName, type SqlTypeName, type SqlValue } from '../sql-types.js';
import { TableReader } from './access.js';
import { assignable, assignValue, indexEntry, indexEntryKey, keyText, TableWriter, writeIndexEntries } from './dml.js';
import { restrictedEnv } from './expression-kinds.js';
import { bindIndexKeys, columnRefs, indexKeyFunction, indexKeyText, indexKeyValues, indexUsesColumn, tableColumns } from './index-keys.js';
import { figureColumnName } from './column-names.js';
import { compilePredicate, functionName } from './select.js';
import { hasMutableCall, hasVolatile } from './quals.js';
import { bindSequenceCalls, detachSerialSequence, dropOwnedSequences } from './sequence-ddl.js';
import { freeSequenceName, relationExists, relationKind, relationNoun, sequenceNames, standaloneKey } from '../sequences.js';
import { CASCADE_HINT, dependentViews, dropBehaviour, dropDependentViews, refuseRetypeUnderView, renameColumnInViews, renameInView, renameTableInViews, tableTarget } from './views.js';
import { PAUSE, type Exec, type PlanColumn, type Step } from './runtime.js';
import { columnName, tableName } from './scope.js';
import { PRIMARY_KEY_MARKER } from '../sql-rewrite.js';
import { DROP_CASCADE_MARKER, DROP_IF_EXISTS_MARKER, GENERATED_MARKER, QUOTED_NAME_MARKER, UNBOUNDED_BPCHAR, IDENTITY_ALWAYS_MARKER, IDENTITY_BY_DEFAULT_MARKER } from '../sql-grammar-gaps.js';
import { columnSequence, decodeSequenceOptions, defaultSequence, identitySequence, lastValueBytes, nextSequenceValue, rowIdSequence, sequenceParams, sequenceStateBytes, type SequenceDef, type SequenceType } from '../sequence-options.js';
import { canCoerce } from '../type-resolution.js';
import { definedCollation } from '../collation.js';
import type { CompiledExpr } from '../compiled-expr.js';

type Ast = AstNode & Record<string, any>;

/** The catalog's enum types by name, for the types of its columns (castTargetOf). */
export function typeLookup(catalog: Catalog): TypeLookup {
  return (name) => catalog.types.get(name);
}

/** A declared column type: the stored type, PostgreSQL's name for it, modifiers, serial. */
export function columnType(def: Ast, types?: TypeLookup): { target: CastTarget; declared: string; serial: boolean } {
  const element = arrayElementNode(def as unknown as { dataType: string });
  if (element !== undefined) {
    const of = columnType(element as unknown as Ast, types);
    if (of.serial) sqlFail('42601', 'syntax error: array of serial is not implemented');
    return { target: arrayTarget(of.target), declared: `${of.declared}[]`, serial: false };
  }
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
      const target = castTargetOf(def as unknown as { dataType: string }, types);
      let declared = typeDisplay(target.type);
      if (target.type === 'bpchar') declared = target.maxLength === undefined ? 'bpchar' : `character(${target.maxLength})`;
      else if (target.type === 'bit' || target.type === 'varbit') declared = target.maxLength === undefined ? typeDisplay(target.type) : `${typeDisplay(target.type)}(${target.maxLength})`;
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

/** The ids of the live columns `names` of `table`; `missing` is the error for one it has not. */
function idsOf(table: TableDef, names: string[], missing: (name: string) => never): number[] {
  return names.map((n) => (liveColumns(table).find((x) => x.name === n) ?? missing(n)).id);
}

function uniqueName(base: string, taken: Set<string>): string {
  let name = base;
  for (let i = 1; taken.has(name); i++) name = `${base}${i}`;
  taken.add(name);
  return name;
}

/** A PRIMARY KEY or UNIQUE, a CHECK, a FOREIGN KEY, as CREATE TABLE or ALTER TABLE ... ADD writes it. */
type KeySpec = { kind: 'pk' | 'unique'; cols: string[]; name?: string };
type CheckSpec = { node: Ast; name?: string };
type FkSpec = { cols: string[]; ref: Ast; name?: string };

/** The names of a table's constraints: its primary key, unique constraints, CHECKs and foreign keys. */
function constraintNames(t: TableDef): string[] {
  return [...(t.primaryKey.length > 0 ? [primaryKeyName(t)] : []), ...t.indexes.filter((i) => i.constraint !== undefined).map((i) => i.name), ...t.checks.map((c) => c.name), ...t.foreignKeys.map((f) => f.name)];
}

/**
 * The names a table's new constraints take, as PostgreSQL gives and checks them: a key's (its
 * index's) is a relation's, unique among the schema's tables and indexes (42P07 when given,
 * ChooseRelationName when chosen), any other's is unique among the schema's constraints when
 * chosen (ChooseConstraintName), and any given one among the table's own (42710). A chosen name is
 * the base, else the base numbered 1, 2, ... past the names in use.
 */
class ConstraintNamer {
  readonly #relations = new Set<string>();
  readonly #constraints = new Set<string>();
  readonly #own: Set<string>;
  readonly #checks = new Set<string>();
  readonly #table: string;

  constructor(table: TableDef, catalog: Catalog) {
    this.#table = table.name;
    this.#own = new Set(constraintNames(table));
    this.#relations.add(table.name);
    for (const t of [...catalog.tables.values(), table]) {
      this.#relations.add(t.name);
      for (const i of t.indexes) this.#relations.add(i.name);
      if (t.primaryKey.length > 0) this.#relations.add(primaryKeyName(t));
      for (const n of constraintNames(t)) this.#constraints.add(n);
    }
    // Sequences and views are relations too (a key's index cannot take their names).
    for (const name of sequenceNames(catalog)) this.#relations.add(name);
    for (const name of catalog.views.keys()) this.#relations.add(name);
  }

  /** A PRIMARY KEY's or UNIQUE's name. @throws SQL_ERROR 42P07, 42710 a given name in use */
  key(given: string | undefined, base: string): string {
    if (given !== undefined && this.#relations.has(given)) sqlFail('42P07', `relation "${given}" already exists`);
    const name = given ?? uniqueName(base, new Set([...this.#relations, ...this.#own]));
    this.#relations.add(name);
    return this.#claim(name, given !== undefined);
  }

  /** A CHECK's or FOREIGN KEY's name. @throws SQL_ERROR 42710 a given name in use */
  other(given: string | undefined, base: string): string {
    return this.#claim(given ?? uniqueName(base, new Set([...this.#constraints, ...this.#own])), given !== undefined);
  }

  /**
   * A CHECK's name; CREATE TABLE's CHECKs are named among themselves first, with their own
   * message for a given name twice (AddRelationNewConstraints).
   * @throws SQL_ERROR 42710 a given name in use
   */
  check(given: string | undefined, base: string, creating: boolean): string {
    if (creating && given !== undefined && this.#checks.has(given)) sqlFail('42710', `check constraint "${given}" already exists`);
    const name = this.other(given, base);
    this.#checks.add(name);
    return name;
  }

  #claim(name: string, given: boolean): string {
    if (given && this.#own.has(name)) sqlFail('42710', `constraint "${name}" for relation "${this.#table}" already exists`);
    this.#own.add(name);
    this.#constraints.add(name);
    return name;
  }
}

/**
 * A PRIMARY KEY or UNIQUE of CREATE TABLE or ALTER TABLE ... ADD, checked and named as
 * PostgreSQL's: a primary key becomes the table's (its columns NOT NULL), a unique constraint an
 * index of the table (returned, to be built from the rows by the caller if any).
 * @throws SQL_ERROR 42703 unknown column, 42701 a column twice, 42804 a type with no B-tree order, 42P16 a second primary key, 42P07 / 42710 (ConstraintNamer)
 */
function addKey(table: TableDef, p: KeySpec, names: ConstraintNamer, catalog: Catalog): IndexDef | undefined {
  const what = p.kind === 'pk' ? 'primary key' : 'unique';
  const ids = idsOf(table, p.cols, (n) => sqlFail('42703', `column "${n}" named in key does not exist`));
  ids.forEach((id, i) => {
    if (ids.indexOf(id) !== i) sqlFail('42701', `column "${p.cols[i]!}" appears twice in ${what} constraint`);
  });
  for (const id of ids) if (!keyable(table.columns[id]!.type)) sqlFail('42804', `data type ${table.columns[id]!.declared} has no default operator class for access method "btree"`);
  if (p.kind === 'pk') {
    if (table.primaryKey.length > 0) sqlFail('42P16', `multiple primary keys for table "${table.name}" are not allowed`);
    const name = names.key(p.name, `${table.name}_pkey`);
    table.primaryKey = ids;
    if (name !== `${table.name}_pkey`) table.primaryKeyName = name;
    for (const id of ids) table.columns[id]!.notNull = true;
    return undefined;
  }
  const index: IndexDef = { id: catalog.newId(), name: names.key(p.name, `${table.name}_${p.cols.join('_')}_key`), columns: ids, unique: true, constraint: 'unique' };
  table.indexes.push(index);
  return index;
}

/**
 * A FOREIGN KEY of CREATE TABLE or ALTER TABLE ... ADD, checked and named as PostgreSQL's (the
 * referenced columns: those given, else the referenced table's primary key, a key of it either way).
 * @throws SQL_ERROR 42703 unknown column, 42P01 unknown table, 42830 no matching key, 42601 SET NULL of a generated column, 0A000 an unsupported action, 42710 (ConstraintNamer)
 */
function foreignKey(table: TableDef, f: FkSpec, names: ConstraintNamer, catalog: Catalog): ForeignKeyDef {
  const actions = fkActions(f.ref);
  const refName = tableName(((f.ref.table as Ast[])[0] as Ast).table);
  const target = refName === table.name ? table : catalog.mustTable(refName);
  const missing = (n: string): never => sqlFail('42703', `column "${n}" referenced in foreign key constraint does not exist`);
  const cols = idsOf(table, f.cols, missing);
  const named = Array.isArray(f.ref.definition) ? refColumns(f.ref.definition as Ast[]).filter((c) => c !== PRIMARY_KEY_MARKER) : [];
  const refCols = named.length > 0 ? idsOf(target, named, missing) : target.primaryKey;
  if (refCols.length === 0) sqlFail('42830', `there is no primary key for referenced table "${refName}"`);
  if (refCols.length !== cols.length) sqlFail('42830', 'number of referencing and referenced columns for foreign key disagree');
  // MATCH FULL / PARTIAL differ from MATCH SIMPLE only over several columns, some NULL.
  const match = String(f.ref.match ?? '').toLowerCase();
  if (cols.length > 1 && (match === 'match full' || match === 'match partial')) unsupported(`${match.toUpperCase()} (foreign keys are MATCH SIMPLE)`);
  if (referencedKey(target, refCols) === undefined) sqlFail('42830', `there is no unique constraint matching given keys for referenced table "${refName}"`);
  const name = names.other(f.name, `${table.name}_${f.cols.join('_')}_fkey`);
  cols.forEach((id, i) => {
    const a = table.columns[id]!;
    const b = target.columns[refCols[i]!]!;
    if (!foreignKeyComparable(a.type, b.type)) {
      sqlFail('42804', `foreign key constraint "${name}" cannot be implemented`, `Key columns "${a.name}" of the referencing table and "${b.name}" of the referenced table are of incompatible types: ${typeWithoutModifiers(a.declared)} and ${typeWithoutModifiers(b.declared)}.`);
    }
  });
  // An action that writes the referencing columns cannot write a generated one (PostgreSQL
  // refuses it here; ON DELETE CASCADE deletes rows).
  if (cols.some((id) => table.columns[id]!.generated !== undefined)) {
    if (actions.onUpdate !== undefined && actions.onUpdate !== 'restrict') sqlFail('42601', 'invalid ON UPDATE action for foreign key constraint containing generated column');
    if (actions.onDelete === 'set null' || actions.onDelete === 'set default') sqlFail('42601', 'invalid ON DELETE action for foreign key constraint containing generated column');
  }
  // ON DELETE SET NULL over a NOT NULL column is accepted and fails at delete time (23502), as in PostgreSQL.
  return { name, columns: cols, refTable: refName, refColumns: refCols, ...actions };
}

/**
 * The key of `target` a foreign key to its columns `refCols` rests on (PostgreSQL's dependency of
 * the foreign key on that key's index): its primary key if those are its columns, else its first
 * unique index over them.
 */
export function referencedKey(target: TableDef, refCols: number[]): { name: string; index: IndexDef | undefined } | undefined {
  if (target.primaryKey.length > 0 && sameSet(refCols, target.primaryKey)) return { name: primaryKeyName(target), index: undefined };
  const index = target.indexes.find((i) => i.unique && i.predicate === undefined && sameSet(i.columns, refCols));
  return index === undefined ? undefined : { name: index.name, index };
}

/** ON DELETE and ON UPDATE: NO ACTION (absent), RESTRICT, CASCADE, SET NULL, SET DEFAULT. */
function fkActions(ref: Ast): Pick<ForeignKeyDef, 'onDelete' | 'onUpdate'> {
  const out: Pick<ForeignKeyDef, 'onDelete' | 'onUpdate'> = {};
  for (const a of (ref.on_action ?? []) as Ast[]) {
    const v = String(a.value?.value ?? a.value ?? '').toLowerCase();
    const on = String(a.type ?? '').toLowerCase();
    if (v === '' || v === 'no action') continue;
    if ((on === 'on delete' || on === 'on update') && (v === 'cascade' || v === 'set null' || v === 'set default' || v === 'restrict')) out[on === 'on delete' ? 'onDelete' : 'onUpdate'] = v;
    else unsupported(`${on.toUpperCase()} ${v.toUpperCase()}`);
  }
  return out;
}

/** A constraint's name as written: folded to lower case unless it was quoted (QUOTED_NAME_MARKER, sql-grammar-gaps.ts). */
function constraintName(written: string): string {
  return written.startsWith(QUOTED_NAME_MARKER) ? written.slice(QUOTED_NAME_MARKER.length) : written.toLowerCase();
}

/** A column's constraints (CREATE TABLE's, or ALTER TABLE ... ADD COLUMN's), onto the lists of their kinds. */
function columnConstraints(d: Ast, column: string, keys: KeySpec[], checks: CheckSpec[], fks: FkSpec[]): void {
  // `CONSTRAINT name` before a column's constraint names it (the parser keeps one such name).
  const written = (d.constraint as Ast | undefined)?.constraint;
  let name = typeof written === 'string' && written !== '' ? constraintName(written) : undefined;
  const take = (): { name?: string } => {
    const out = name === undefined ? {} : { name };
    name = undefined;
    return out;
  };
  if (d.primary_key) keys.push({ kind: 'pk', cols: [column], ...take() });
  if (d.unique) keys.push({ kind: 'unique', cols: [column], ...take() });
  if (d.check) for (const c of (d.check as Ast).definition as Ast[]) checks.push({ node: c, ...take() });
  if (d.reference_definition) fks.push({ cols: [column], ref: d.reference_definition as Ast, ...take() });
}

/** A table constraint (CREATE TABLE's, or ALTER TABLE ... ADD [CONSTRAINT name] ...'s), onto the list of its kind. */
function readConstraint(d: Ast, keys: KeySpec[], checks: CheckSpec[], fks: FkSpec[]): void {
  const type = String(d.constraint_type).toLowerCase();
  const name = d.constraint ? constraintName(String(d.constraint)) : undefined;
  if (type === 'primary key') keys.push({ kind: 'pk', cols: refColumns(d.definition as Ast[]), name });
  else if (type === 'unique' || type === 'unique key' || type === 'unique index') keys.push({ kind: 'unique', cols: refColumns(d.definition as Ast[]), name });
  else if (type === 'check') for (const c of d.definition as Ast[]) checks.push({ node: c, name });
  else if (type === 'foreign key') fks.push({ cols: refColumns(d.definition as Ast[]), ref: d.reference_definition as Ast, name });
  else unsupported(`constraint ${type}`);
}

/** CREATE TABLE. */
/** The declared type a column of CREATE TABLE ... AS takes for a query column of type `t` (modifiers are not known, see docs/sql.md). */
function declaredTypeOf(t: SqlTypeName): Ast {
  if (isArrayType(t)) return { ...declaredTypeOf(elementTypeOf(t)), array: { dimension: 1 } } as Ast;
  const names: Record<ScalarTypeName, string> = {
    unknown: 'TEXT', boolean: 'BOOLEAN', int2: 'SMALLINT', int4: 'INTEGER', int8: 'BIGINT', numeric: 'NUMERIC', float8: 'DOUBLE PRECISION', text: 'TEXT',
    bpchar: 'CHAR', bit: 'BIT VARYING', varbit: 'BIT VARYING', date: 'DATE', timestamp: 'TIMESTAMP', timestamptz: 'TIMESTAMPTZ', time: 'TIME', timetz: 'TIME', jsonb: 'JSONB', bytea: 'BYTEA', uuid: 'UUID', interval: 'INTERVAL',
  };
  if (t === 'timetz') return { dataType: 'TIME', suffix: ['WITH', 'TIME', 'ZONE'] } as unknown as Ast;
  return (t === 'bpchar' ? { dataType: 'CHAR', length: UNBOUNDED_BPCHAR } : { dataType: names[t as ScalarTypeName] }) as unknown as Ast;
}

/**
 * CREATE TABLE name [(column names)] AS query: the table, with the query's columns (its names, or
 * those given first; its types), made here; the rows are the caller's INSERT, which this returns
 * (undefined under IF NOT EXISTS when the name is taken, as PostgreSQL skips it).
 * @throws SQL_ERROR 42P07 the name is taken, 42701 two columns of one name, 42601 more names than columns
 */
export function createTableAs(ast: Ast, columns: readonly PlanColumn[], catalog: Catalog, view: TxnView): Ast | undefined {
  const target = (ast.table as Ast[])[0]!;
  // `CREATE TABLE t (a, b) AS ...` arrives as a call t(a, b).
  const listed = target.expr?.type === 'function' ? ((target.expr.args?.value ?? []) as Ast[]).map((a) => columnName(a)) : undefined;
  const name = listed !== undefined ? functionName(target.expr as Ast) : tableName(target.table);
  const visible = columns.filter((c) => !c.hidden);
  if (listed !== undefined && listed.length > visible.length) sqlFail('42601', 'too many column names were specified');
  const defs = visible.map((c, i) => ({ column: { type: 'column_ref', table: null, column: { expr: { type: 'double_quote_string', value: listed?.[i] ?? c.name } } }, definition: declaredTypeOf(c.type), resource: 'column' }));
  const made = createTable({ ...ast, table: [{ db: null, table: name, as: null }], query_expr: null, as: null, create_definitions: defs } as Ast, catalog, view);
  if (made === 'exists') return undefined;
  return { type: 'insert', table: [{ db: null, table: name, as: null }], columns: null, values: ast.query_expr, partition: null, prefix: 'into', returning: null } as Ast;
}

export function createTable(ast: Ast, catalog: Catalog, view: TxnView): 'created' | 'exists' {
  const raw = (ast.table as Ast[] | null)?.[0]?.table;
  if (raw === undefined || raw === null || raw === '') sqlFail('42601', 'syntax error: CREATE TABLE needs a table name');
  const name = tableName(raw);
  if (relationExists(catalog, name)) {
    if (ast.if_not_exists) return 'exists';
    sqlFail('42P07', `relation "${name}" already exists`);
  }
  refuseTypeName(catalog, name, true);
  if (ast.query_expr || ast.as) unsupported('CREATE TABLE ... AS');
  const table: TableDef = { id: catalog.newId(), name, columns: [], primaryKey: [], indexes: [], checks: [], foreignKeys: [] };
  const pending: KeySpec[] = [];
  const checks: CheckSpec[] = [];
  const fks: FkSpec[] = [];
  for (const d of (ast.create_definitions ?? []) as Ast[]) {
    if (d.resource === 'column') {
      const cname = columnName(d.column as Ast);
      if (table.columns.some((c) => c.name === cname)) sqlFail('42701', `column "${cname}" specified more than once`);
      const col = columnDef(d, table, catalog);
      table.columns.push(col);
      columnConstraints(d, cname, pending, checks, fks);
      continue;
    }
    if (d.resource === 'constraint') {
      readConstraint(d, pending, checks, fks);
      continue;
    }
    unsupported(`table element ${String(d.resource)}`);
  }
  nameNewSequences(table.columns, table, catalog);
  const names = new ConstraintNamer(table, catalog);
  for (const p of pending) addKey(table, p, names, catalog);
  table.checks = checks.map((c): CheckDef => ({ name: names.check(c.name, checkName(name, c.node), true), expr: c.node }));
  // DEFAULT and generation expressions in column order, then CHECKs, as PostgreSQL's
  // AddRelationNewConstraints reads them (before the foreign keys, added after the table).
  for (const c of table.columns) {
    if (c.default !== undefined) checkDefault(c, catalog);
    if (c.generated !== undefined) checkGeneration(c, table, catalog);
  }
  for (const c of table.checks) {
    checkCheck(c.expr, table, catalog);
    c.expr = unqualified(c.expr);
  }
  for (const f of fks) table.foreignKeys.push(foreignKey(table, f, names, catalog));
  catalog.save(view, table);
  return 'created';
}

/**
 * A column of CREATE TABLE or ALTER TABLE ADD COLUMN, from its definition: type, NOT NULL,
 * COLLATE, and what fills it when no value is given (a DEFAULT, an identity's sequence, a
 * generation expression). The expressions are checked by the caller, once all columns exist.
 * @throws SQL_ERROR 22023 an identity column not of an integer type, 42804 / 42704 (columnType, definedCollation)
 */
function columnDef(d: Ast, table: TableDef, catalog: Catalog): ColumnDef {
  const { target, declared, serial: serialType } = columnType(d.definition as Ast, typeLookup(catalog));
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
  else if (!assignable(e.type, col.type)) sqlFail('42804', `column "${col.name}" is of type ${col.declared} but default expression is of type ${typeDisplay(e.type) ?? e.type}`, undefined, 'You will need to rewrite or cast the expression.');
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
  else if (!assignable(e.type, col.type)) sqlFail('42804', `column "${col.name}" is of type ${col.declared} but default expression is of type ${typeDisplay(e.type) ?? e.type}`, undefined, 'You will need to rewrite or cast the expression.');
  return e;
}

/**
 * A CHECK constraint, checked as PostgreSQL checks it when it is defined: what it may hold
 * (restrictedEnv), the columns it names (the table's only), and a boolean result.
 * @throws SQL_ERROR 0A000, 42803, 42P20 (restrictedEnv), 42703 unknown column, 42P01 another table, 42804 not boolean
 */
function checkCheck(node: AstNode, table: TableDef, catalog: Catalog): CompiledExpr {
  return compilePredicate(node, restrictedEnv('check', catalog, tableColumns(table)), 'CHECK');
}

/** DROP TABLE [IF EXISTS] a, b. */
export function dropTables(ast: Ast, catalog: Catalog, view: TxnView): number {
  const behaviour = dropBehaviour((ast.name ?? []) as Ast[]);
  const tables: TableDef[] = [];
  for (const n of behaviour.names) {
    const name = tableName(n.table);
    const t = catalog.table(name);
    if (t === undefined) {
      const kind = relationKind(catalog, name);
      if (kind !== undefined) sqlFail('42809', `"${name}" is not a table`, undefined, `Use DROP ${kind.toUpperCase()} to remove ${relationNoun(kind)}.`);
      if (ast.prefix && String(ast.prefix).toUpperCase().includes('IF EXISTS')) continue;
      sqlFail('42P01', `table "${name}" does not exist`);
    }
    if (!tables.includes(t)) tables.push(t);
  }
  // What depends on them, unless dropped with them: other tables' foreign keys (CASCADE drops the
  // constraint) and views (CASCADE drops them), checked for all of them at once as PostgreSQL does.
  const fks: Array<{ other: TableDef; fk: ForeignKeyDef; table: TableDef }> = [];
  const byId = [...catalog.tables.values()].sort((a, b) => a.id - b.id);
  for (const t of tables) {
    for (const other of byId) {
      if (tables.includes(other)) continue;
      for (const fk of other.foreignKeys) if (fk.refTable === t.name) fks.push({ other, fk, table: t });
    }
  }
  const lines = fks.map(({ other, fk, table }) => `constraint ${fk.name} on table ${other.name} depends on table ${table.name}`);
  dropDependentViews(catalog, view, tables.length === 1 ? `table ${tables[0]!.name}` : undefined, tables.map((t) => tableTarget(t)), behaviour.cascade, lines);
  for (const { other, fk } of fks) {
    other.foreignKeys = other.foreignKeys.filter((f) => f !== fk);
    catalog.save(view, other);
  }
  for (const t of tables) {
    view.dropTree(rowTree(t));
    for (const ix of t.indexes) view.dropTree(indexTree(ix));
    for (const c of t.columns) if (c.serial) view.delete(SEQUENCE_TREE, columnSequence(t, c).key);
    view.delete(SEQUENCE_TREE, rowIdSequence(t).key);
    // Sequences OWNED BY its columns go with it (defaults of tables dropped with it do not hold them).
    dropOwnedSequences(catalog, view, t, undefined, tables);
    catalog.remove(view, t.name);
  }
  return tables.length;
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
    if (catalog.view(tableName(n.table)) !== undefined) sqlFail('42809', `"${tableName(n.table)}" is not a table`);
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
  if (catalog.view(tname) !== undefined) sqlFail('42809', `cannot create index on relation "${tname}"`, 'This operation is not supported for views.');
  const table = catalog.mustTable(tname);
  // Each key part: a column, or an expression over the table's columns (its name in the
  // index's default name as PostgreSQL's FigureIndexColname gives it).
  const parts = ((ast.index_columns ?? []) as Ast[]).map((c): { column: string } | { expr: Ast; name: string } => {
    if (c.order_by && String(c.order_by).toLowerCase() === 'desc') unsupported('DESC index columns (an ascending index serves both directions)');
    if (c.type !== 'column_ref') {
      // PostgreSQL's refusals of what an index expression may hold come first.
      const e = compileExpression(c, restrictedEnv('index expression', catalog, tableColumns(table)));
      if (hasMutableCall(c)) sqlFail('42P17', 'functions in index expression must be marked IMMUTABLE');
      if (!keyable(e.type)) sqlFail('42804', `data type ${typeDisplay(e.type) ?? e.type} has no default operator class for access method "btree"`);
      if (c.collate) definedCollation(c.collate, e.type, typeDisplay(e.type) ?? e.type);
      const { collate: _c, opclass: _o, order_by: _b, nulls: _n, ...expr } = c;
      const figured = figureColumnName(expr as AstNode);
      return { expr: unqualified(expr as AstNode) as Ast, name: figured === '?column?' ? 'expr' : figured };
    }
    // An element's COLLATE: every collation tetradb accepts orders as the column does.
    if (c.collate) {
      const col = liveColumns(table).find((x) => x.name === columnName(c)) ?? sqlFail('42703', `column "${columnName(c)}" does not exist`);
      definedCollation(c.collate, col.type, col.declared);
    }
    return { column: columnName(c) };
  });
  // A partial index: its predicate checked as PostgreSQL checks it (what it may hold, a boolean,
  // immutable functions only).
  if (ast.where) {
    compilePredicate(ast.where as Ast, restrictedEnv('index predicate', catalog, tableColumns(table)), 'WHERE');
    if (hasMutableCall(ast.where)) sqlFail('42P17', 'functions in index predicate must be marked IMMUTABLE');
  }
  const ids = parts.map((p) => ('column' in p ? idsOf(table, [p.column], (n) => sqlFail('42703', `column "${n}" named in the index does not exist`))[0]! : -1));
  for (const id of ids) if (id >= 0 && !keyable(table.columns[id]!.type)) sqlFail('42804', `data type ${table.columns[id]!.declared} has no default operator class for access method "btree"`);
  let name: string;
  if (ast.index) {
    name = String(ast.index).toLowerCase();
    if (relationExists(catalog, name)) {
      if (ast.if_not_exists) return 'exists';
      sqlFail('42P07', `relation "${name}" already exists`);
    }
  } else {
    // PostgreSQL's ChooseRelationName: the default name, numbered past the names taken.
    const base = `${tname}_${parts.map((p) => ('column' in p ? p.column : p.name)).join('_')}_idx`;
    name = base;
    for (let i = 1; relationExists(catalog, name); i++) name = `${base}${i}`;
  }
  const index: IndexDef = { id: catalog.newId(), name, columns: ids, unique: String(ast.index_type ?? '').toLowerCase() === 'unique' };
  if (parts.some((p) => 'expr' in p)) index.expressions = parts.map((p) => ('expr' in p ? (p.expr as AstNode) : null));
  if (ast.where) index.predicate = unqualified(ast.where as AstNode);
  // (buildIndex's bindIndexKeys sets its expressionTypes.)
  yield* buildIndex(index, table, catalog, view, x);
  table.indexes.push(index);
  catalog.save(view, table);
  return 'created';
}

/**
 * A unique key's duplicates, as PostgreSQL's index build reports them: its sort stops at the first
 * two equal keys it compares, which for rows read in order (a presorted run, or the insertion sort
 * of a small input) is the first key met a second time; that one, with its values for the DETAIL.
 */
class Duplicates {
  readonly #seen = new Set<string>();
  #first: SqlValue[] | undefined;

  add(key: Buffer, values: () => SqlValue[]): void {
    const id = key.toString('latin1');
    if (!this.#seen.has(id)) this.#seen.add(id);
    else this.#first ??= values();
  }

  /** @throws SQL_ERROR 23505 when a key was met twice */
  check(table: TableDef, ids: number[], index: string): void {
    if (this.#first !== undefined) sqlFail('23505', `could not create unique index "${index}"`, `Key ${keyText(table, ids, this.#first)} is duplicated.`);
  }

  /** check, for an index's key (its expressions named as PostgreSQL names them). */
  checkIndex(table: TableDef, index: IndexDef): void {
    if (this.#first !== undefined) sqlFail('23505', `could not create unique index "${index.name}"`, `Key ${indexKeyText(table, index, this.#first)} is duplicated.`);
  }
}

/**
 * The entries of a new index of `table` (not yet among its indexes), from its rows in this
 * transaction: CREATE INDEX, and ALTER TABLE ... ADD UNIQUE.
 * @throws SQL_ERROR 23505 a unique index over a duplicated key (Duplicates)
 */
function* buildIndex(index: IndexDef, table: TableDef, catalog: Catalog, view: TxnView, x: Exec): Generator<Step, void> {
  const reader = new TableReader(table);
  const duplicates = new Duplicates();
  bindIndexKeys(table, catalog, [index]);
  for (const [key, value] of view.scan(rowTree(table))) {
    const physical = reader.physical(value);
    const entry = indexEntry(index, physical, key);
    if (entry?.uniqueKey !== undefined) duplicates.add(entry.uniqueKey, () => entry.values);
    writeIndexEntries(view, [index], physical, key, 'put');
    if (x.tick()) yield PAUSE;
  }
  duplicates.checkIndex(table, index);
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
export function dropColumn(table: TableDef, col: ColumnDef, cascade: boolean, catalog: Catalog, view: TxnView): void {
  if (table.primaryKey.includes(col.id)) unsupported('dropping a primary key column');
  const generated = liveColumns(table).filter((c) => c !== col && c.generated !== undefined && columnRefs(c.generated).includes(col.name));
  // The foreign keys to a column (not those from it, which go with it), tables in creation order.
  const referencing = (target: ColumnDef): { other: TableDef; fk: ForeignKeyDef }[] =>
    [...catalog.tables.values()]
      .sort((x, y) => x.id - y.id)
      .flatMap((other) => other.foreignKeys.filter((f) => f.refTable === table.name && f.refColumns.includes(target.id) && !(other === table && f.columns.includes(target.id))).map((fk) => ({ other, fk })));
  const fkLine = ({ other, fk }: { other: TableDef; fk: ForeignKeyDef }, target: ColumnDef): string => `constraint ${fk.name} on table ${other.name} depends on column ${target.name} of table ${table.name}`;
  const direct = referencing(col);
  const readers = dependentViews(catalog, [tableTarget(table, col.id)]);
  if (!cascade && (generated.length > 0 || direct.length > 0 || readers.length > 0 || generated.some((g) => dependentViews(catalog, [tableTarget(table, g.id)]).length > 0))) {
    const lines: string[] = [];
    for (const g of generated) {
      lines.push(`column ${g.name} of table ${table.name} depends on column ${col.name} of table ${table.name}`);
      for (const r of referencing(g)) lines.push(fkLine(r, g));
      for (const v of dependentViews(catalog, [tableTarget(table, g.id)])) lines.push(v.line);
    }
    for (const r of direct) lines.push(fkLine(r, col));
    for (const v of readers) lines.push(v.line);
    sqlFail('2BP01', `cannot drop column ${col.name} of table ${table.name} because other objects depend on it`, lines.join('\n'), CASCADE_HINT);
  }
  for (const { view: v } of readers) catalog.removeView(view, v.name);
  for (const { other, fk } of direct) {
    other.foreignKeys = other.foreignKeys.filter((f) => f !== fk);
    if (other !== table) catalog.save(view, other);
  }
  dropOwnedSequences(catalog, view, table, col);
  col.dropped = true;
  // Its indexes, those on expressions that read it too (PostgreSQL drops them with it).
  for (const ix of table.indexes.filter((i) => indexUsesColumn(i, col.id, col.name))) view.dropTree(indexTree(ix));
  table.indexes = table.indexes.filter((i) => !indexUsesColumn(i, col.id, col.name));
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

/**
 * What an ALTER TABLE statement checks of the table's rows once all its actions are applied, as
 * PostgreSQL's phase 3 does (after the indexes it builds on the way): the columns made NOT NULL
 * and the CHECKs added, row by row in that order, then the foreign keys added.
 */
interface RowChecks {
  notNull: ColumnDef[];
  /** Names of the CHECKs added (compiled at the end, over the columns the table then has). */
  checks: string[];
  foreignKeys: boolean;
}

/**
 * The rows of `table` against what the statement added (RowChecks).
 * @throws SQL_ERROR 23502 a NULL in a NOT NULL column, 23514 a row a CHECK refuses, 23503 a missing referenced key
 */
function* checkRows(table: TableDef, pending: RowChecks, catalog: Catalog, view: TxnView, x: Exec): Generator<Step, void> {
  // What a later action of the statement took back (DROP NOT NULL, DROP CONSTRAINT, DROP COLUMN) is not checked.
  const notNull = pending.notNull.filter((c) => c.notNull && c.dropped !== true);
  const checks = table.checks.filter((c) => pending.checks.includes(c.name)).map((c) => ({ name: c.name, expr: checkCheck(c.expr, table, catalog) }));
  const foreignKeys = pending.foreignKeys && table.foreignKeys.length > 0;
  if (notNull.length === 0 && checks.length === 0 && !foreignKeys) return;
  const reader = new TableReader(table);
  const ctx = x.ctx();
  const writer = foreignKeys ? new TableWriter(table, catalog, view, { catalog, params: [], parent: undefined, ctes: new Map() }) : undefined;
  for (const [, value] of view.scan(rowTree(table))) {
    const physical = reader.physical(value);
    for (const c of notNull) if (physical[c.id]!.value === null) sqlFail('23502', `column "${c.name}" of relation "${table.name}" contains null values`);
    if (checks.length > 0) ctx.row = reader.toLive(physical);
    for (const c of checks) if (c.expr.evaluate(ctx).value === false) sqlFail('23514', `check constraint "${c.name}" of relation "${table.name}" is violated by some row`);
    writer?.validateReferences(physical);
    if (x.tick()) yield PAUSE;
  }
}

/**
 * The rows of `table` written again under its primary key as it now is (a new one, or none: new
 * hidden row ids), and its indexes' entries with them: ADD PRIMARY KEY's and DROP CONSTRAINT
 * <primary key>'s rewrite of the table. Rows with a NULL in a new key are left to checkRows.
 * @throws SQL_ERROR 23505 a duplicated new key (Duplicates)
 */
function* rekeyRows(table: TableDef, catalog: Catalog, view: TxnView, x: Exec): Generator<Step, void> {
  const reader = new TableReader(table);
  const rows: [Buffer, SqlValue[]][] = [];
  const duplicates = new Duplicates();
  const pk = table.primaryKey;
  for (const [key, value] of view.scan(rowTree(table))) {
    const physical = reader.physical(value);
    rows.push([key, physical]);
    const values = pk.map((id) => physical[id]!);
    if (pk.length > 0 && values.every((v) => v.value !== null)) duplicates.add(encodeKeyTuple(values), () => values);
    if (x.tick()) yield PAUSE;
  }
  duplicates.check(table, pk, primaryKeyName(table));
  const writer = new TableWriter(table, catalog, view, { catalog, params: [], parent: undefined, ctes: new Map() });
  // Every old key goes before any new one is written: a new key may be an old one's bytes.
  for (const [key, physical] of rows) {
    view.delete(rowTree(table), key);
    writeIndexEntries(view, table.indexes, physical, key, 'delete');
  }
  for (const [, physical] of rows) {
    const key = writer.keyOf(physical);
    view.put(rowTree(table), key, encodeRow(physical));
    writeIndexEntries(view, table.indexes, physical, key, 'put');
    if (x.tick()) yield PAUSE;
  }
}

/**
 * ALTER TABLE ... ALTER [COLUMN] c SET DEFAULT expr / DROP DEFAULT / SET NOT NULL / DROP NOT NULL,
 * with PostgreSQL's refusals (identity and generated columns, primary key columns). The rows a
 * SET NOT NULL is checked against are checked at the end of the statement (RowChecks).
 * @throws SQL_ERROR 42703 unknown column, 42601 an identity or generated column, 42P16 a primary key column, as checkDefault
 */
function alterColumn(table: TableDef, e: Ast, catalog: Catalog, view: TxnView, pending: RowChecks): void {
  const cname = columnName(e.column as Ast);
  const col = liveColumns(table).find((c) => c.name === cname) ?? sqlFail('42703', `column "${cname}" of relation "${table.name}" does not exist`);
  // The parser reads SET / DROP DEFAULT, SET / DROP NOT NULL and [SET DATA] TYPE here.
  const change = e.default_val ? String((e.default_val as Ast).type).toLowerCase() : e.nullable ? `${String(e.nullable.action).toLowerCase()} not null` : 'type';
  const kind = (what: string): string => `column "${col.name}" of relation "${table.name}" is ${what}`;
  switch (change) {
    case 'set default':
    case 'drop default': {
      const set = change === 'set default';
      if (col.identity !== undefined) sqlFail('42601', kind('an identity column'), undefined, set ? undefined : 'Use ALTER TABLE ... ALTER COLUMN ... DROP IDENTITY instead.');
      if (col.generated !== undefined) sqlFail('42601', kind('a generated column'), undefined, `Use ALTER TABLE ... ALTER COLUMN ... ${set ? 'SET' : 'DROP'} EXPRESSION instead.`);
      // A serial's default is its sequence's nextval: the sequence stays, OWNED BY the column.
      if (col.serial) detachSerialSequence(table, col, catalog, view);
      if (!set) delete col.default;
      else {
        col.default = (e.default_val as Ast).value as Ast;
        checkDefault(col, catalog);
        // A NULL constant is no default, as PostgreSQL keeps none for it (information_schema shows NULL).
        if (col.default.type === 'null') delete col.default;
      }
      return;
    }
    case 'set not null':
      if (!col.notNull) {
        col.notNull = true;
        pending.notNull.push(col);
      }
      return;
    case 'drop not null':
      if (col.identity !== undefined) sqlFail('42601', kind('an identity column'));
      if (table.primaryKey.includes(col.id)) sqlFail('42P16', `column "${col.name}" is in a primary key`);
      col.notNull = false;
      return;
    default:
      unsupported(`ALTER TABLE ... ALTER COLUMN ... ${change.toUpperCase()} (a column's type cannot be changed)`);
  }
}

/** A type as PostgreSQL's format_type_be names it in messages: the declared name without its modifiers. */
function typeWithoutModifiers(declared: string): string {
  return declared.replace(/\(.*\)$/, '');
}

/**
 * ALTER TABLE ... ALTER [COLUMN] c [SET DATA] TYPE t [COLLATE name] [USING expr], as PostgreSQL's
 * ATPrepAlterColumnType, ATExecAlterColumnType and table rewrite do it:
 * - checked first, before any row is read: the column is altered once in the statement, no
 *   generated column reads it, a generated column takes no USING, an identity column stays an
 *   integer, the COLLATE fits the type; the USING expression (over the row as it is, restricted
 *   as a transform expression: no subquery, aggregate, window or set-returning function), or
 *   without one the column itself, must have an assignment cast to the new type (42804 with
 *   PostgreSQL's HINT); the DEFAULT must too. Then the CHECKs that read the column are compiled
 *   again over the new type (42883 when an operator or function no longer applies) and the
 *   foreign keys on either side of it must still compare (42804);
 * - then every row is rewritten: the USING value (or the old one) assigned to the new type
 *   (22P02, 22001, 22003 as an INSERT's), a generated column's stored value cast, not computed
 *   again; the indexes over the column (all of them when it is in the primary key, whose row
 *   keys change) are written again, a unique one refusing a duplicate (23505, could not create
 *   unique index). The CHECKs over the column and the table's foreign keys are checked against
 *   the rows at the end of the statement (RowChecks), and the rows of tables whose foreign keys
 *   reference the column now.
 * A serial column's sequence keeps its type (PostgreSQL's stays integer); an identity column's
 * follows the column's, its bounds with it when they were the old type's.
 * Not PostgreSQL's: a USING expression sees the row as the statement's earlier actions left it
 * (PostgreSQL's sees the row before the statement), and the rows are held in memory while they
 * are rewritten, as ADD COLUMN's and ADD PRIMARY KEY's rewrites hold them.
 * @throws SQL_ERROR 42703, 0A000, 42611, 22023, 42804, 42704, 42883, 42803, 22P02, 22001, 22003, 23505, 23503
 */
function* alterColumnType(table: TableDef, e: Ast, catalog: Catalog, view: TxnView, x: Exec, pending: RowChecks, typed: Map<number, SqlTypeName>): Generator<Step, void> {
  const cname = columnName(e.column as Ast);
  const col = liveColumns(table).find((c) => c.name === cname) ?? sqlFail('42703', `column "${cname}" of relation "${table.name}" does not exist`);
  // Checked as PostgreSQL's first pass checks every action, on the table as the statement found
  // it; a second change of the column fails after those checks.
  const twice = typed.get(col.id);
  const was = twice ?? col.type;
  if (twice === undefined) typed.set(col.id, col.type);
  const { target, declared, serial } = columnType(e.definition as Ast, typeLookup(catalog));
  if (serial) sqlFail('42704', `type "${String((e.definition as Ast).dataType).toLowerCase()}" does not exist`);
  const to = target.type;
  const toName = typeWithoutModifiers(declared);
  const collation = definedCollation(e.collate, to, toName);
  if (col.generated !== undefined && e.using) sqlFail('42611', 'cannot specify USING when altering type of generated column', `Column "${col.name}" is a generated column.`);
  if (col.identity !== undefined && !['int2', 'int4', 'int8'].includes(to)) sqlFail('22023', 'identity column type must be smallint, integer, or bigint');
  // The new column as assignments see it (its name, type and modifiers).
  const next: ColumnDef = { ...col, type: to, declared, target };
  // The value each row takes: the USING expression over the row as it is, or the column.
  const using = e.using ? compileExpression(e.using as Ast, restrictedEnv('transform', catalog, tableColumns(table))) : undefined;
  if (using !== undefined) {
    if (using.type !== 'unknown' && !assignable(using.type, to)) sqlFail('42804', `result of USING clause for column "${col.name}" cannot be cast automatically to type ${toName}`, undefined, 'You might need to add an explicit cast.');
  } else if (!assignable(was, to)) {
    sqlFail('42804', `column "${col.name}" cannot be cast automatically to type ${toName}`, undefined, `You might need to specify "USING ${col.name}::${declared}".`);
  }
  if (twice !== undefined) sqlFail('0A000', `cannot alter type of column "${col.name}" twice`);
  refuseRetypeUnderView(catalog, table, col.id);
  // A constant USING (a literal) is converted once, before any row, as PostgreSQL folds it.
  const constant = using !== undefined && using.type === 'unknown' && columnRefs(e.using).length === 0 ? assignValue(using.evaluate(x.ctx()), next) : undefined;
  // The DEFAULT as PostgreSQL keeps it, already of the old type (a serial's: nextval, bigint).
  if (col.default !== undefined || col.serial) {
    let from: string = col.serial && col.identity === undefined ? 'int8' : col.type;
    if (col.default !== undefined) {
      const d = compileExpression(bindSequenceCalls(col.default, catalog), restrictedEnv('default', catalog, []));
      if (d.type !== 'unknown') from = d.type;
    }
    if (col.identity === undefined && !assignable(from as SqlTypeName, to)) sqlFail('42804', `default for column "${col.name}" cannot be cast automatically to type ${toName}`);
  }
  const user = liveColumns(table).find((c) => c !== col && c.generated !== undefined && columnRefs(c.generated).includes(col.name));
  if (user !== undefined) sqlFail('0A000', 'cannot alter type of a column used by a generated column', `Column "${col.name}" is used by generated column "${user.name}".`);
  const inIndex = table.primaryKey.includes(col.id) || table.indexes.some((i) => i.columns.includes(col.id));
  // The index entries as they are now, to remove them: the indexes' expressions as compiled over the old type.
  bindIndexKeys(table, catalog);
  const oldKeys = new Map(table.indexes.map((ix) => [ix, indexKeyFunction(ix)]));
  if (inIndex && !keyable(to)) sqlFail('42804', `data type ${toName} has no default operator class for access method "btree"`);

  // The table as it was, to read its rows; then the column of its new type.
  const reader = new TableReader(table);
  const oldType = col.type;
  if (col.serial && col.identity === undefined) col.sequence = { ...(col.sequence ?? defaultSequence(col.type)), type: col.sequence?.type ?? (col.type as 'int2' | 'int4' | 'int8') };
  if (col.identity !== undefined) {
    const sequence = identityOfType(col, to as SequenceType);
    if (sequence === undefined) delete col.sequence;
    else col.sequence = sequence;
  }
  col.type = to;
  col.declared = declared;
  col.target = target;
  if (collation !== undefined) col.collation = collation;
  else delete col.collation;
  col.missing = storedOf({ type: to, value: null } as SqlValue);
  // The CHECKs over the column, compiled over its new type now and checked against the rows at the end.
  for (const c of table.checks) {
    if (!columnRefs(c.expr).includes(col.name)) continue;
    c.expr = typedLiterals(c.expr, col.name, oldType);
    checkCheck(c.expr, table, catalog);
    if (!pending.checks.includes(c.name)) pending.checks.push(c.name);
  }
  // The foreign keys on either side of the column must still compare their columns.
  const referencing = [...catalog.tables.values()].sort((a, b) => a.id - b.id).filter((t) => t.foreignKeys.some((f) => f.refTable === table.name && f.refColumns.includes(col.id)));
  const pairs: { fk: ForeignKeyDef; child: TableDef; parent: TableDef }[] = [];
  for (const f of table.foreignKeys) if (f.columns.includes(col.id)) pairs.push({ fk: f, child: table, parent: f.refTable === table.name ? table : catalog.mustTable(f.refTable) });
  for (const t of referencing) for (const f of t.foreignKeys) if (f.refTable === table.name && f.refColumns.includes(col.id) && !pairs.some((p) => p.fk === f)) pairs.push({ fk: f, child: t, parent: table });
  for (const { fk, child, parent } of pairs) {
    fk.columns.forEach((id, i) => {
      const a = child.columns[id]!;
      const b = parent.columns[fk.refColumns[i]!]!;
      if (!foreignKeyComparable(a.type, b.type)) {
        sqlFail('42804', `foreign key constraint "${fk.name}" cannot be implemented`, `Key columns "${a.name}" of the referencing table and "${b.name}" of the referenced table are of incompatible types: ${typeWithoutModifiers(a.declared)} and ${typeWithoutModifiers(b.declared)}.`);
      }
    });
  }
  if (pairs.some((p) => p.child === table)) pending.foreignKeys = true;
  // The expressions of the indexes that read the column, compiled over its new type (42883 when
  // an operator or function no longer applies, as PostgreSQL's rebuild finds).
  bindIndexKeys(table, catalog);

  // The rows, read as they were and converted; then written again with the indexes over the column.
  const ctx = x.ctx();
  const rows: [Buffer, SqlValue[], SqlValue[]][] = [];
  for (const [key, value] of view.scan(rowTree(table))) {
    const before = reader.physical(value);
    const after = before.slice();
    let v: SqlValue;
    if (constant !== undefined) v = constant;
    else if (using !== undefined) {
      ctx.row = reader.toLive(before);
      v = using.evaluate(ctx);
    } else v = before[col.id]!;
    after[col.id] = assignValue(v, next);
    rows.push([key, before, after]);
    if (x.tick()) yield PAUSE;
  }
  const rekey = table.primaryKey.includes(col.id);
  const indexes = rekey ? table.indexes : table.indexes.filter((i) => indexUsesColumn(i, col.id, col.name));
  const writer = new TableWriter(table, catalog, view, { catalog, params: [], parent: undefined, ctes: new Map() });
  // Every old entry goes before any new one is written: a new key may be an old one's bytes.
  for (const [key, before] of rows) {
    if (rekey) view.delete(rowTree(table), key);
    for (const ix of indexes) {
      const values = oldKeys.get(ix)!(before);
      if (values !== undefined) view.delete(indexTree(ix), indexEntryKey(ix, values, key));
    }
  }
  const keys = rekey ? new Duplicates() : undefined;
  const unique = new Map(indexes.filter((i) => i.unique).map((i) => [i, new Duplicates()]));
  for (const [oldKey, , after] of rows) {
    const key = rekey ? writer.keyOf(after) : oldKey;
    if (keys !== undefined) {
      const values = table.primaryKey.map((id) => after[id]!);
      keys.add(encodeKeyTuple(values), () => values);
    }
    view.put(rowTree(table), key, encodeRow(after));
    for (const [ix, dup] of unique) {
      const entry = indexEntry(ix, after, key);
      if (entry?.uniqueKey !== undefined) dup.add(entry.uniqueKey, () => entry.values);
    }
    writeIndexEntries(view, indexes, after, key, 'put');
    if (x.tick()) yield PAUSE;
  }
  keys?.check(table, table.primaryKey, primaryKeyName(table));
  for (const [ix, dup] of unique) dup.checkIndex(table, ix);
  catalog.save(view, table);
  // The rows of the tables whose foreign keys reference the column, against its new values.
  for (const child of referencing) {
    if (child === table) {
      pending.foreignKeys = true;
      continue;
    }
    const childReader = new TableReader(child);
    const childWriter = new TableWriter(child, catalog, view, { catalog, params: [], parent: undefined, ctes: new Map() });
    for (const [, value] of view.scan(rowTree(child))) {
      childWriter.validateReferences(childReader.physical(value));
      if (x.tick()) yield PAUSE;
    }
  }
}

/**
 * Whether a foreign key column of type `fk` can reference a key column of type `pk`, as
 * PostgreSQL's ATAddForeignKeyConstraint decides it: the key's B-tree operator family compares
 * the two types (the integers with each other, the date and time types with each other, text
 * with varchar), or `fk` converts to `pk` implicitly.
 */
function foreignKeyComparable(fk: SqlTypeName, pk: SqlTypeName): boolean {
  const family = (t: SqlTypeName): string => (t === 'int2' || t === 'int4' || t === 'int8' ? 'integer' : t === 'date' || t === 'timestamp' || t === 'timestamptz' ? 'datetime' : t);
  return family(fk) === family(pk) || canCoerce(fk, pk);
}

/**
 * A CHECK's expression with the string literals compared with column `name` cast to `type`, the
 * column's type when the CHECK was made: PostgreSQL keeps a CHECK with its literals converted to
 * the types they were resolved to (`b <> ''` is kept as `b <> ''::text`), so after the column's
 * type changes they keep theirs (and `b <> ''` over an integer b fails with 42883, as there).
 * Literals compared with the column directly, or in an IN list or BETWEEN bounds beside it;
 * numbers too when they were converted (`a > 0` over a numeric `a` is kept as `a > 0::numeric`).
 */
function typedLiterals(node: AstNode, name: string, type: SqlTypeName): AstNode {
  const dataType = LITERAL_TYPES[type];
  if (dataType === undefined) return node;
  const isColumn = (n: Ast | undefined): boolean => n?.type === 'column_ref' && columnName(n) === name;
  const isString = (n: Ast | undefined): boolean => n?.type === 'single_quote_string' || n?.type === 'string';
  const cast = (n: Ast): Ast => ({ type: 'cast', keyword: 'cast', symbol: '::', expr: n, target: [{ dataType }] });
  // A number PostgreSQL converted to the column's type: one compared with a numeric or double
  // precision column that is not already of that type (no cross-type operator took it as it is).
  const converted = (n: Ast): boolean => {
    if (n?.type !== 'number' || (type !== 'numeric' && type !== 'float8')) return false;
    const v = Number(n.value);
    const natural = Number.isInteger(v) && Math.abs(v) <= 2 ** 31 ? 'int4' : Number.isSafeInteger(v) ? 'int8' : 'numeric';
    return natural !== type;
  };
  const pinned = (n: Ast): Ast => (isString(n) || converted(n) ? cast(n) : n);
  const castAll = (n: Ast): Ast => {
    if (n?.type === 'expr_list' && Array.isArray(n.value)) return { ...n, value: n.value.map(pinned) };
    return pinned(n);
  };
  const walk = (n: unknown): unknown => {
    if (n === null || typeof n !== 'object') return n;
    if (Array.isArray(n)) return n.map(walk);
    const o = n as Ast;
    const out = {} as Ast;
    for (const k of Object.keys(o)) out[k] = walk(o[k]);
    if (o.type === 'binary_expr') {
      if (isColumn(o.left)) out.right = castAll(out.right);
      if (isColumn(o.right)) out.left = castAll(out.left);
    }
    return out;
  };
  return walk(node) as AstNode;
}

/** The type names a literal's cast takes (castTargetOf reads them), by stored type. */
const LITERAL_TYPES: Partial<Record<SqlTypeName, string>> = {
  int2: 'SMALLINT', int4: 'INT', int8: 'BIGINT', numeric: 'NUMERIC', float8: 'DOUBLE PRECISION', text: 'TEXT', boolean: 'BOOLEAN',
  date: 'DATE', timestamp: 'TIMESTAMP', timestamptz: 'TIMESTAMPTZ', time: 'TIME', timetz: 'TIME', jsonb: 'JSONB', bytea: 'BYTEA', interval: 'INTERVAL',
};

/**
 * An identity column's sequence once the column is of type `to`: PostgreSQL's ALTER SEQUENCE ...
 * AS (sequenceParams), whose bounds that were the old type's become the new type's; a bound of its
 * own must fit. Undefined when the sequence has the type's defaults (they follow the column).
 * @throws SQL_ERROR 22023 a MINVALUE or MAXVALUE out of the new type's range
 */
function identityOfType(col: ColumnDef, to: SequenceType): SequenceDef | undefined {
  if (col.sequence === undefined) return undefined;
  return sequenceParams([{ kind: 'as', name: to }], { type: col.type as SequenceType, def: col.sequence }).def;
}

/**
 * ALTER TABLE ... ADD [CONSTRAINT name] PRIMARY KEY | UNIQUE | CHECK | FOREIGN KEY, and those of
 * ADD COLUMN's column, checked and named as CREATE TABLE's (addKey, checkCheck, foreignKey): a unique constraint's index is built
 * from the rows now (23505 on a duplicate), a primary key rewrites the rows under it (rekeyRows);
 * the rows are checked against NOT NULL, CHECKs and foreign keys at the end of the statement.
 * @throws SQL_ERROR as addKey, foreignKey, checkCheck and rekeyRows; 42703 a primary key's unknown column
 */
function* addConstraints(table: TableDef, keys: KeySpec[], checks: CheckSpec[], fks: FkSpec[], catalog: Catalog, view: TxnView, x: Exec, pending: RowChecks): Generator<Step, void> {
  const names = new ConstraintNamer(table, catalog);
  for (const p of keys) {
    if (p.kind === 'pk') {
      // PostgreSQL makes the columns NOT NULL first, which names an unknown one so.
      for (const n of p.cols) if (!liveColumns(table).some((c) => c.name === n)) sqlFail('42703', `column "${n}" of relation "${table.name}" does not exist`);
      addKey(table, p, names, catalog);
      for (const id of table.primaryKey) if (!pending.notNull.includes(table.columns[id]!)) pending.notNull.push(table.columns[id]!);
      yield* rekeyRows(table, catalog, view, x);
    } else yield* buildIndex(addKey(table, p, names, catalog)!, table, catalog, view, x);
  }
  for (const c of checks) {
    const check: CheckDef = { name: names.check(c.name, checkName(table.name, c.node), false), expr: c.node };
    checkCheck(check.expr, table, catalog);
    check.expr = unqualified(check.expr);
    pending.checks.push(check.name);
    table.checks.push(check);
  }
  for (const f of fks) {
    table.foreignKeys.push(foreignKey(table, f, names, catalog));
    pending.foreignKeys = true;
  }
  catalog.save(view, table);
}

/**
 * ALTER TABLE ... DROP CONSTRAINT [IF EXISTS] name [CASCADE | RESTRICT]. A primary key or unique
 * constraint another table's foreign key rests on is 2BP01 naming them (PostgreSQL's DETAIL and
 * HINT), or drops them under CASCADE. Dropping the primary key keys the rows by hidden row ids
 * again (rekeyRows); its columns stay NOT NULL, as in PostgreSQL.
 * @throws SQL_ERROR 42704 no such constraint, 2BP01 dependent foreign keys without CASCADE
 */
function* dropConstraint(table: TableDef, written: string, catalog: Catalog, view: TxnView, x: Exec): Generator<Step, void> {
  // IF EXISTS and CASCADE arrive as prefixes of the name (sql-grammar-gaps.ts, rewriteDropBehavior).
  let rest = written;
  const ifExists = rest.startsWith(DROP_IF_EXISTS_MARKER);
  if (ifExists) rest = rest.slice(DROP_IF_EXISTS_MARKER.length);
  const cascade = rest.startsWith(DROP_CASCADE_MARKER);
  if (cascade) rest = rest.slice(DROP_CASCADE_MARKER.length);
  const name = constraintName(rest);
  const check = table.checks.find((c) => c.name === name);
  const fk = table.foreignKeys.find((f) => f.name === name);
  const index = table.indexes.find((i) => i.constraint !== undefined && i.name === name);
  const primary = table.primaryKey.length > 0 && primaryKeyName(table) === name;
  if (check !== undefined || fk !== undefined) {
    table.checks = table.checks.filter((c) => c !== check);
    table.foreignKeys = table.foreignKeys.filter((f) => f !== fk);
    catalog.save(view, table);
    return;
  }
  if (index === undefined && !primary) {
    if (ifExists) return;
    sqlFail('42704', `constraint "${name}" of relation "${table.name}" does not exist`);
  }
  // The foreign keys resting on this key, tables in creation order.
  const dependents = [...catalog.tables.values()]
    .sort((a, b) => a.id - b.id)
    .flatMap((other) => other.foreignKeys.filter((f) => f.refTable === table.name && referencedKey(table, f.refColumns)?.name === name).map((f) => ({ other, fk: f })));
  if (dependents.length > 0 && !cascade) {
    const lines = dependents.map((r) => `constraint ${r.fk.name} on table ${r.other.name} depends on index ${name}`);
    sqlFail('2BP01', `cannot drop constraint ${name} on table ${table.name} because other objects depend on it`, lines.join('\n'), 'Use DROP ... CASCADE to drop the dependent objects too.');
  }
  for (const { other, fk: f } of dependents) {
    other.foreignKeys = other.foreignKeys.filter((g) => g !== f);
    if (other !== table) catalog.save(view, other);
  }
  if (index !== undefined) {
    view.dropTree(indexTree(index));
    table.indexes = table.indexes.filter((i) => i !== index);
  } else {
    table.primaryKey = [];
    delete table.primaryKeyName;
    yield* rekeyRows(table, catalog, view, x);
  }
  catalog.save(view, table);
}

/**
 * ALTER TABLE [IF EXISTS] [ONLY] t action, ...: ADD / DROP / RENAME / ALTER COLUMN, ADD / DROP
 * CONSTRAINT, RENAME TO, applied in order; the rows are checked against what they added at the
 * end (RowChecks). All or nothing: the request's transaction holds every change.
 * @throws SQL_ERROR 42P01 an unknown table, 3F000 a schema other than public (without IF EXISTS); as each action
 */
export function* alterTable(ast: Ast, catalog: Catalog, view: TxnView, x: Exec): Generator<Step, void> {
  const name = tableName((ast.table as Ast[])[0]!.table);
  const schema = (ast.table as Ast[])[0]!.db as string | null | undefined;
  if (ast.if_exists && ((catalog.table(name) === undefined && catalog.view(name) === undefined) || (schema && schema !== 'public'))) return;
  if (schema && schema !== 'public') sqlFail('3F000', `schema "${schema}" does not exist`);
  const viewDef = catalog.view(name);
  if (viewDef !== undefined) {
    // PostgreSQL takes ALTER TABLE's renames for a view too; its other actions are not for views.
    for (const e of (ast.expr ?? []) as Ast[]) {
      const action = String(e.action).toLowerCase();
      const resource = String(e.resource).toLowerCase();
      if (action === 'rename' && resource === 'table') renameInView(viewDef, undefined, tableName(e.table), catalog, view);
      else if (action === 'rename' && resource === 'column') {
        const from = typeof e.old_column === 'string' ? e.old_column : columnName(e.old_column ?? e.column);
        const to = typeof e.new_column === 'string' ? e.new_column : columnName(e.column ?? e.new_column);
        renameInView(viewDef, from, to, catalog, view);
      } else {
        sqlFail('42809', `ALTER action ${[action, resource === 'constraint' || resource === 'column' ? resource : ''].join(' ').trim().toUpperCase()} cannot be performed on relation "${name}"`, 'This operation is not supported for views.');
      }
    }
    return;
  }
  const table = catalog.mustTable(name);
  const pending: RowChecks = { notNull: [], checks: [], foreignKeys: false };
  // The columns whose type the statement changes (each once, as in PostgreSQL), and their types before.
  const typed = new Map<number, SqlTypeName>();
  for (const e of (ast.expr ?? []) as Ast[]) {
    const action = String(e.action).toLowerCase();
    const resource = String(e.resource).toLowerCase();
    if (action === 'rename' && resource === 'table') {
      const to = tableName(e.table);
      if (relationExists(catalog, to)) sqlFail('42P07', `relation "${to}" already exists`);
      refuseTypeName(catalog, to, false);
      catalog.remove(view, table.name);
      for (const other of catalog.tables.values()) {
        let changed = false;
        for (const f of other.foreignKeys) if (f.refTable === table.name) ((f.refTable = to), (changed = true));
        if (changed) catalog.save(view, other);
      }
      for (const f of table.foreignKeys) if (f.refTable === table.name) f.refTable = to;
      // A sequence keeps the name it was made with, as PostgreSQL's (its own object) does, and so
      // does the primary key (its index).
      for (const c of liveColumns(table)) if (c.serial) nameSequence(table, c);
      if (table.primaryKey.length > 0) table.primaryKeyName = primaryKeyName(table);
      const from = table.name;
      table.name = to;
      catalog.save(view, table);
      renameTableInViews(catalog, view, table, from);
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
      for (const c of table.checks) c.expr = renameColumnRefs(c.expr, from, to);
      for (const ix of table.indexes) {
        if (ix.expressions !== undefined) ix.expressions = ix.expressions.map((e) => (e === null ? null : renameColumnRefs(e, from, to)));
        if (ix.predicate !== undefined) ix.predicate = renameColumnRefs(ix.predicate, from, to);
      }
      catalog.save(view, table);
      renameColumnInViews(catalog, view, table, col.id, from);
      continue;
    }
    if (action === 'add' && resource === 'column') {
      const cname = columnName(e.column as Ast);
      if (liveColumns(table).some((c) => c.name === cname)) {
        if (e.if_not_exists) continue;
        sqlFail('42701', `column "${cname}" of relation "${table.name}" already exists`);
      }
      const col = columnDef(e, table, catalog);
      if (col.serial) {
        nameNewSequences([col], table, catalog);
        yield* addSequenceColumn(col, table, catalog, view, x);
      } else if (col.generated !== undefined) yield* addGeneratedColumn(col, table, catalog, view, x);
      else if (col.default !== undefined && hasVolatile(col.default)) {
        // A volatile default (nextval, random()) is evaluated for each existing row, as
        // PostgreSQL's table rewrite does.
        yield* addVolatileDefaultColumn(col, table, catalog, view, x);
      } else {
        // Existing rows take the default's value (evaluated once), as PostgreSQL does.
        let missing: SqlValue = { type: col.type, value: null } as SqlValue;
        if (col.default !== undefined) missing = assignValue(checkDefault(col, catalog).evaluate(x.ctx()), col);
        if (col.notNull && missing.value === null) {
          for (const _ of view.scan(rowTree(table), { limit: 1 })) sqlFail('23502', `column "${cname}" of relation "${table.name}" contains null values`);
        }
        col.missing = storedOf(missing);
        table.columns.push(col);
        catalog.save(view, table);
      }
      // Its constraints, as ADD CONSTRAINT's (PRIMARY KEY, UNIQUE, CHECK, REFERENCES).
      const keys: KeySpec[] = [];
      const checks: CheckSpec[] = [];
      const fks: FkSpec[] = [];
      columnConstraints(e, cname, keys, checks, fks);
      if (keys.length + checks.length + fks.length > 0) yield* addConstraints(table, keys, checks, fks, catalog, view, x, pending);
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
    if (action === 'alter' && resource === 'column' && e.definition && !e.default_val && !e.nullable) {
      yield* alterColumnType(table, e, catalog, view, x, pending, typed);
      continue;
    }
    if (action === 'alter' && resource === 'column') {
      alterColumn(table, e, catalog, view, pending);
      catalog.save(view, table);
      continue;
    }
    if (action === 'add' && resource === 'constraint') {
      const keys: KeySpec[] = [];
      const checks: CheckSpec[] = [];
      const fks: FkSpec[] = [];
      readConstraint(e.create_definitions as Ast, keys, checks, fks);
      yield* addConstraints(table, keys, checks, fks, catalog, view, x, pending);
      continue;
    }
    if (action === 'drop' && resource === 'constraint') {
      yield* dropConstraint(table, String(e.constraint), catalog, view, x);
      continue;
    }
    unsupported(`ALTER TABLE ${action.toUpperCase()} ${resource.toUpperCase()}`);
  }
  yield* checkRows(table, pending, catalog, view, x);
}
