import { liveColumns, SEQUENCE_TREE, type Catalog, type ColumnDef, type SequenceObject, type TableDef } from '../catalog.js';
import type { AstNode } from '../expression-eval.js';
import { columnSequence, sequenceParams, sequenceStateBytes, type SequenceStatement } from '../sequence-options.js';
import { findSequence, readState, relationExists, relationKind, relationNameOf, relationNoun, relationPlural, sequenceById, standaloneKey, type SequenceHandle } from '../sequences.js';
import type { TxnView } from '../store/sql-view.js';
import { sqlFail } from '../sql-types.js';

type Ast = AstNode & Record<string, any>;
type Statement<A extends SequenceStatement['action']> = Extract<SequenceStatement, { action: A }>;

/**
 * CREATE SEQUENCE [IF NOT EXISTS] name [options]: PostgreSQL's DefineSequence (a name taken by
 * any relation is 42P07, after the options are checked).
 */
export function createSequence(ast: Statement<'create'>, catalog: Catalog, view: TxnView): void {
  const name = relationNameOf(ast.name);
  if (ast.ifNotExists && relationExists(catalog, name)) return;
  const params = sequenceParams(ast.options, { type: 'int8' });
  if (relationExists(catalog, name)) sqlFail('42P07', `relation "${name}" already exists`);
  const seq: SequenceObject = { id: catalog.newId(), name, type: params.type, def: params.def };
  if (params.ownedBy !== undefined) setOwner(seq, params.ownedBy, catalog);
  catalog.saveSequence(view, seq);
}

/**
 * ALTER SEQUENCE [IF EXISTS] name options | RENAME TO new, of a standalone sequence or of a
 * serial or identity column's.
 */
export function alterSequence(ast: Statement<'alter'>, catalog: Catalog, view: TxnView): void {
  const name = relationNameOf(ast.name);
  const seq = findSequence(catalog, name);
  if (seq === undefined) {
    notSequence(catalog, name);
    if (ast.ifExists) return;
    sqlFail('42P01', `relation "${name}" does not exist`);
  }
  if (ast.renameTo !== undefined) {
    const to = ast.renameTo.toLowerCase();
    if (relationExists(catalog, to)) sqlFail('42P07', `relation "${to}" already exists`);
    if (seq.standalone !== undefined) {
      catalog.removeSequence(view, seq.name);
      catalog.saveSequence(view, { ...seq.standalone, name: to });
    } else {
      const { table, col } = seq.column!;
      col.sequence = { ...seq.def, name: to };
      catalog.save(view, table);
    }
    return;
  }
  const state = readState(view, seq) ?? { last: BigInt(seq.def.first), called: false };
  const params = sequenceParams(ast.options, { type: seq.type, def: seq.def, state });
  if (ast.options.some((o) => o.kind === 'restart')) view.put(SEQUENCE_TREE, seq.key, sequenceStateBytes(params.state!));
  if (seq.standalone !== undefined) {
    const altered: SequenceObject = { ...seq.standalone, type: params.type, def: params.def };
    if (params.ownedBy !== undefined) setOwner(altered, params.ownedBy, catalog);
    catalog.saveSequence(view, altered);
    return;
  }
  const { table, col } = seq.column!;
  if (params.type !== seq.type) sqlFail('0A000', `unsupported: changing the type of sequence "${seq.name}" of column ${col.name} of table ${table.name} (its type is the column's)`);
  if (params.ownedBy !== undefined) sqlFail('0A000', `unsupported: OWNED BY for sequence "${seq.name}", which belongs to column ${col.name} of table ${table.name}`);
  col.sequence = { ...params.def, name: seq.name };
  catalog.save(view, table);
}

/**
 * DROP SEQUENCE [IF EXISTS] a, b [CASCADE | RESTRICT]. Column defaults that call one depend on
 * it: 2BP01 naming them, or under CASCADE those defaults go too. A serial or identity column's
 * sequence goes only with its column.
 */
export function dropSequences(ast: Statement<'drop'>, catalog: Catalog, view: TxnView): void {
  for (const written of ast.names) {
    const name = relationNameOf(written);
    const seq = findSequence(catalog, name);
    if (seq === undefined) {
      notSequence(catalog, name, true);
      if (ast.ifExists) continue;
      sqlFail('42P01', `sequence "${name}" does not exist`);
    }
    if (seq.column !== undefined) {
      const { table, col } = seq.column;
      // An identity column's sequence is part of it; a serial's is what its default calls.
      if (col.identity !== undefined) {
        sqlFail('2BP01', `cannot drop sequence ${seq.name} because column ${col.name} of table ${table.name} requires it`, undefined, `You can drop column ${col.name} of table ${table.name} instead.`);
      }
      if (!ast.cascade) {
        sqlFail('2BP01', `cannot drop sequence ${seq.name} because other objects depend on it`, `default value for column ${col.name} of table ${table.name} depends on sequence ${seq.name}`, 'Use DROP ... CASCADE to drop the dependent objects too.');
      }
      // CASCADE: the column keeps its values and loses its default.
      delete col.serial;
      delete col.sequence;
      catalog.save(view, table);
      view.delete(SEQUENCE_TREE, seq.key);
      continue;
    }
    dropSequence(seq, catalog, view, ast.cascade, []);
  }
}

/**
 * Drops a standalone sequence; the column defaults that call it block the drop (2BP01) unless
 * `cascade`, which drops them; those of the tables in `going` (dropped with it) do not count.
 */
function dropSequence(seq: SequenceHandle, catalog: Catalog, view: TxnView, cascade: boolean, going: readonly TableDef[]): void {
  const id = seq.standalone!.id;
  const users = [...catalog.tables.values()]
    .filter((t) => !going.includes(t))
    .sort((a, b) => a.id - b.id)
    .flatMap((table) => liveColumns(table).filter((col) => col.default !== undefined && callsSequence(col.default, id)).map((col) => ({ table, col })));
  if (users.length > 0 && !cascade) {
    const lines = users.map(({ table, col }) => `default value for column ${col.name} of table ${table.name} depends on sequence ${seq.name}`);
    sqlFail('2BP01', `cannot drop sequence ${seq.name} because other objects depend on it`, lines.join('\n'), 'Use DROP ... CASCADE to drop the dependent objects too.');
  }
  for (const { table, col } of users) {
    delete col.default;
    catalog.save(view, table);
  }
  catalog.removeSequence(view, seq.name);
  view.delete(SEQUENCE_TREE, standaloneKey(seq.standalone!));
}

/**
 * The standalone sequences OWNED BY a column of `table` (all of them, or `column`'s), dropped with
 * it as PostgreSQL drops them: defaults of other tables that call one block it (2BP01).
 */
export function dropOwnedSequences(catalog: Catalog, view: TxnView, table: TableDef, column?: ColumnDef, going: readonly TableDef[] = [table]): void {
  for (const seq of [...catalog.sequences.values()]) {
    const owner = seq.ownedBy;
    if (owner === undefined || owner.table !== table.id || (column !== undefined && owner.column !== column.id)) continue;
    // The dropped column's own default goes with it.
    const exempt = column === undefined ? going : going.filter((t) => t !== table);
    if (column !== undefined && column.default !== undefined && callsSequence(column.default, seq.id)) delete column.default;
    dropSequence({ name: seq.name, def: seq.def, key: standaloneKey(seq), type: seq.type, standalone: seq }, catalog, view, false, exempt);
  }
}

/**
 * A serial column whose default is replaced or dropped: its sequence becomes a standalone one,
 * OWNED BY the column (as a serial's is in PostgreSQL), with its name, options and value.
 */
export function detachSerialSequence(table: TableDef, col: ColumnDef, catalog: Catalog, view: TxnView): void {
  const seq = columnSequence(table, col);
  const { name: _name, type, ...def } = seq.def;
  const standalone: SequenceObject = { id: catalog.newId(), name: seq.name, type: type ?? (col.type as SequenceObject['type']), def, ownedBy: { table: table.id, column: col.id } };
  const state = view.get(SEQUENCE_TREE, seq.key);
  if (state !== undefined) view.put(SEQUENCE_TREE, standaloneKey(standalone), state);
  view.delete(SEQUENCE_TREE, seq.key);
  delete col.serial;
  delete col.sequence;
  catalog.saveSequence(view, standalone);
}

/**
 * A relation of this name that is not a sequence: 42809, in DROP's words (`"t" is not a
 * sequence`, with a hint naming the right DROP), else in those of PostgreSQL 16+'s relation_open.
 */
function notSequence(catalog: Catalog, name: string, drop = false): void {
  const kind = relationKind(catalog, name);
  if (kind === undefined || kind === 'sequence') return;
  if (drop) sqlFail('42809', `"${name}" is not a sequence`, undefined, `Use DROP ${kind.toUpperCase()} to remove ${relationNoun(kind)}.`);
  sqlFail('42809', `cannot open relation "${name}"`, `This operation is not supported for ${relationPlural(kind)}.`);
}

/**
 * OWNED BY table.column | NONE (PostgreSQL's process_owned_by).
 * @throws SQL_ERROR 42601 not table.column, 42P01 no such table, 42703 no such column
 */
function setOwner(seq: SequenceObject, written: string, catalog: Catalog): void {
  if (written === 'none') {
    delete seq.ownedBy;
    return;
  }
  const parts = written.split('.');
  if (parts.length < 2) sqlFail('42601', 'invalid OWNED BY option', undefined, 'Specify OWNED BY table.column or OWNED BY NONE.');
  const column = parts.pop()!;
  const tableText = parts.join('.');
  const table = catalog.table(relationNameOf(tableText)) ?? sqlFail('42P01', `relation "${tableText}" does not exist`);
  const col = liveColumns(table).find((c) => c.name === column) ?? sqlFail('42703', `column "${column}" of relation "${table.name}" does not exist`);
  seq.ownedBy = { table: table.id, column: col.id };
}

/** The name of nextval's call node's sequence argument: a string literal, or one cast to regclass. */
function literalSequenceArgument(n: Ast): Ast | undefined {
  if (n.type !== 'function') return undefined;
  const parts = (n.name as { name?: { value?: unknown }[] } | undefined)?.name;
  if (parts?.length !== 1 || String(parts[0]!.value).toLowerCase() !== 'nextval') return undefined;
  let arg = (n.args as { value?: Ast[] } | undefined)?.value?.[0];
  if (arg?.type === 'cast' && String((arg.target as { dataType?: unknown }[] | undefined)?.[0]?.dataType).toUpperCase() === 'REGCLASS') arg = arg.expr as Ast;
  return arg?.type === 'single_quote_string' ? arg : undefined;
}

/** True when a stored default calls nextval of the sequence with id `id` (bound by bindSequenceCalls). */
export function callsSequence(node: unknown, id: number): boolean {
  if (node === null || typeof node !== 'object') return false;
  if (Array.isArray(node)) return node.some((n) => callsSequence(n, id));
  const n = node as Ast;
  if (n.tetraSequence === id) return true;
  return Object.keys(n).some((k) => k !== 'loc' && callsSequence(n[k], id));
}

/**
 * A DEFAULT as it is stored: each `nextval('s')` of a standalone sequence remembers the
 * sequence's id (PostgreSQL binds the regclass when the default is defined), so the default
 * follows a rename and DROP SEQUENCE finds it. Resolving the name now fails as PostgreSQL does.
 * @throws SQL_ERROR 42P01 / 42809 (resolveSequence's)
 */
export function bindSequenceCalls(node: AstNode, catalog: Catalog): AstNode {
  return JSON.parse(JSON.stringify(node), (_k, v: unknown) => {
    const n = v as Ast | null;
    if (n === null || typeof n !== 'object') return v;
    const arg = literalSequenceArgument(n);
    if (arg === undefined) return v;
    const text = String(arg.value).replace(/''/g, "'");
    const name = relationNameOf(text);
    const seq = findSequence(catalog, name);
    // Any relation is a regclass: a table's name fails only when the default is used.
    if (relationKind(catalog, name) === undefined) sqlFail('42P01', `relation "${text}" does not exist`);
    return seq?.standalone === undefined ? n : { ...n, tetraSequence: seq.standalone.id };
  }) as AstNode;
}

/** A stored default with each bound nextval call naming its sequence's current name (for evaluation and display). */
export function currentSequenceNames(node: AstNode, catalog: Catalog): AstNode {
  if (!JSON.stringify(node).includes('"tetraSequence"')) return node;
  return JSON.parse(JSON.stringify(node), (_k, v: unknown) => {
    const n = v as Ast | null;
    if (n === null || typeof n !== 'object' || typeof n.tetraSequence !== 'number') return v;
    const seq = sequenceById(catalog, n.tetraSequence);
    const name = seq?.name ?? `<dropped sequence ${n.tetraSequence}>`;
    return { ...n, args: { type: 'expr_list', value: [{ type: 'single_quote_string', value: name.replace(/'/g, "''") }] } };
  }) as AstNode;
}

/** `nextval('s'::regclass)` when a default is one call of a standalone sequence, as PostgreSQL shows it; else undefined. */
export function sequenceDefaultText(node: AstNode, catalog: Catalog): string | undefined {
  const n = node as Ast;
  if (typeof n.tetraSequence !== 'number') return undefined;
  const seq = sequenceById(catalog, n.tetraSequence);
  return seq === undefined ? undefined : `nextval('${seq.name.replace(/'/g, "''")}'::regclass)`;
}
