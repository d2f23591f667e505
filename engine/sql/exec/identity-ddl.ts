import { liveColumns, SEQUENCE_TREE, type Catalog, type TableDef } from '../catalog.js';
import { columnSequence, sequenceParams, sequenceStateBytes, sequenceStateOf, type IdentityChange } from '../sequence-options.js';
import { freeSequenceName, relationExists, relationNameOf } from '../sequences.js';
import type { TxnView } from '../store/sql-view.js';
import { sqlFail } from '../sql-types.js';

/**
 * `ALTER TABLE t ALTER [COLUMN] c ADD GENERATED ... AS IDENTITY [(options)]`, `SET GENERATED
 * ...` / `SET <option>` / `RESTART`, `DROP IDENTITY [IF EXISTS]`, as PostgreSQL's
 * ATExecAddIdentity, ATExecSetIdentity and ATExecDropIdentity (pg_dump adds identities this way).
 * The existing rows keep their values; a new identity's sequence starts at its START.
 * @throws SQL_ERROR 42703 no such column, 22023 not an integer type, 55000 nullable / already an
 * identity / has a default / not an identity, 42P07 a SEQUENCE NAME taken, the options' errors
 */
export function alterIdentity(table: TableDef, columnName: string, change: IdentityChange, catalog: Catalog, view: TxnView): void {
  const col = liveColumns(table).find((c) => c.name === columnName) ?? sqlFail('42703', `column "${columnName}" of relation "${table.name}" does not exist`);
  const what = `column "${col.name}" of relation "${table.name}"`;
  if (change.kind === 'add') {
    if (col.type !== 'int2' && col.type !== 'int4' && col.type !== 'int8') sqlFail('22023', 'identity column type must be smallint, integer, or bigint');
    const params = sequenceParams(change.options, { type: col.type }, true);
    if (params.ownedBy !== undefined && params.ownedBy !== 'none') sqlFail('0A000', "unsupported: OWNED BY in an identity column's sequence options (the sequence belongs to its column)");
    if (!col.notNull && !table.primaryKey.includes(col.id)) sqlFail('55000', `${what} must be declared NOT NULL before identity can be added`);
    if (col.identity !== undefined) sqlFail('55000', `${what} is already an identity column`);
    if (col.serial || col.default !== undefined || col.generated !== undefined) sqlFail('55000', `${what} already has a default value`);
    const def = params.def;
    if (params.name !== undefined) {
      def.name = relationNameOf(params.name);
      if (relationExists(catalog, def.name)) sqlFail('42P07', `relation "${def.name}" already exists`);
    } else {
      def.name = freeSequenceName(catalog, `${table.name}_${col.name}_seq`);
    }
    col.serial = true;
    col.identity = change.generation;
    col.sequence = def;
    // A state left by an earlier identity of the same column (DROP IDENTITY removes it) must not carry over.
    view.delete(SEQUENCE_TREE, columnSequence(table, col).key);
    catalog.save(view, table);
    return;
  }
  if (col.identity === undefined) {
    if (change.kind === 'drop' && change.ifExists) return;
    sqlFail('55000', `${what} is not an identity column`);
  }
  const seq = columnSequence(table, col);
  if (change.kind === 'drop') {
    delete col.identity;
    delete col.serial;
    delete col.sequence;
    view.delete(SEQUENCE_TREE, seq.key);
    catalog.save(view, table);
    return;
  }
  if (change.generation !== undefined) col.identity = change.generation;
  if (change.options.length > 0) {
    const state = sequenceStateOf(view.get(SEQUENCE_TREE, seq.key)) ?? { last: BigInt(seq.def.first), called: false };
    const params = sequenceParams(change.options, { type: col.type as 'int2' | 'int4' | 'int8', def: seq.def, state }, true);
    if (change.options.some((o) => o.kind === 'restart')) view.put(SEQUENCE_TREE, seq.key, sequenceStateBytes(params.state!));
    col.sequence = { ...params.def, name: seq.name };
  }
  catalog.save(view, table);
}
