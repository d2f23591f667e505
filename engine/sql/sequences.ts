/**
 * Sequences as statements and functions see them: the standalone ones (CREATE SEQUENCE) and those
 * of serial and identity columns, found by name as PostgreSQL's regclass finds a relation;
 * nextval, currval, setval and lastval over their state in SEQUENCE_TREE; and what one request
 * (PostgreSQL's session, for currval and lastval) has drawn.
 */

import { SEQUENCE_TREE, liveColumns, primaryKeyName, type Catalog, type ColumnDef, type SequenceObject, type TableDef } from './catalog.js';
import type { EvalContext } from './compiled-expr.js';
import { noFunction, strict, type FunctionDef } from './functions/function-def.js';
import { columnSequence, nextFromState, sequenceStateBytes, sequenceStateOf, type SequenceDef, type SequenceState, type TableSequence } from './sequence-options.js';
import type { SqlReader, TxnView } from './store/sql-view.js';
import type { SqlSession } from './session.js';
import { sqlFail } from './sql-types.js';

/** A sequence by what it belongs to: its own catalog record, or a serial or identity column. */
export interface SequenceHandle {
  name: string;
  def: SequenceDef;
  /** Its state's key in SEQUENCE_TREE. */
  key: Buffer;
  type: 'int2' | 'int4' | 'int8';
  standalone?: SequenceObject;
  column?: { table: TableDef; col: ColumnDef };
}

/** The SEQUENCE_TREE key of a standalone sequence's state. */
export function standaloneKey(seq: SequenceObject): Buffer {
  return Buffer.from(`s.${seq.id}`);
}

export function standaloneHandle(seq: SequenceObject): SequenceHandle {
  return { name: seq.name, def: seq.def, key: standaloneKey(seq), type: seq.type, standalone: seq };
}

/** The sequence named `name`: a standalone one, else a serial or identity column's. */
export function findSequence(catalog: Catalog, name: string): SequenceHandle | undefined {
  const seq = catalog.sequences.get(name);
  if (seq !== undefined) return standaloneHandle(seq);
  for (const table of catalog.tables.values()) {
    for (const col of liveColumns(table)) {
      if (!col.serial) continue;
      const s = columnSequence(table, col);
      if (s.name === name) return { ...s, type: s.def.type ?? (col.type as SequenceHandle['type']), column: { table, col } };
    }
  }
  return undefined;
}

/** The sequence with id `id` (a column default's binding, see bindSequenceCalls). */
export function sequenceById(catalog: Catalog, id: number): SequenceObject | undefined {
  for (const seq of catalog.sequences.values()) if (seq.id === id) return seq;
  return undefined;
}

/** The names of every sequence: the standalone ones and those of serial and identity columns. */
export function sequenceNames(catalog: Catalog): string[] {
  const names = [...catalog.sequences.keys()];
  for (const table of catalog.tables.values()) for (const col of liveColumns(table)) if (col.serial) names.push(columnSequence(table, col).name);
  return names;
}

/**
 * True when a table, a view, an index (a primary key's included) or a sequence (a column's
 * included) has this name: relations share one namespace.
 */
export function relationExists(catalog: Catalog, name: string): boolean {
  if (relationKind(catalog, name) !== undefined) return true;
  for (const t of catalog.tables.values()) if (t.primaryKey.length > 0 && primaryKeyName(t) === name) return true;
  return false;
}

export type RelationKind = 'table' | 'view' | 'index' | 'sequence';

/** `a table`, `an index`, ... as PostgreSQL's messages name a relation of that kind. */
export function relationNoun(kind: RelationKind): string {
  return kind === 'index' ? 'an index' : `a ${kind}`;
}

/** `tables`, `indexes`, ... as PostgreSQL's "This operation is not supported for ..." names them. */
export function relationPlural(kind: RelationKind): string {
  return kind === 'index' ? 'indexes' : `${kind}s`;
}

/** What the relation `name` is: a table, a view, an index (not a primary key's) or a sequence (a column's included). */
export function relationKind(catalog: Catalog, name: string): RelationKind | undefined {
  if (catalog.table(name) !== undefined) return 'table';
  if (catalog.view(name) !== undefined) return 'view';
  if (catalog.findIndex(name) !== undefined) return 'index';
  if (findSequence(catalog, name) !== undefined) return 'sequence';
  return undefined;
}

/**
 * A name a serial or identity column's sequence may take: `base`, or `base1`, `base2`, ... when a
 * relation has it already (PostgreSQL's ChooseRelationName).
 */
export function freeSequenceName(catalog: Catalog, base: string, alsoTaken: ReadonlySet<string> = new Set()): string {
  let name = base;
  for (let i = 1; relationExists(catalog, name) || alsoTaken.has(name); i++) name = `${base}${i}`;
  return name;
}

/**
 * A relation name as regclass reads it from text: `name`, `schema.name`, double-quoted parts
 * (folded to lower case like every name here), schema `public` only.
 * @throws SQL_ERROR 42602 invalid name syntax, 3F000 another schema, 42P01 too many parts
 */
export function relationNameOf(text: string): string {
  const parts: string[] = [];
  let i = 0;
  for (;;) {
    let part = '';
    if (text[i] === '"') {
      for (i++; ; i++) {
        if (i >= text.length) sqlFail('42602', 'invalid name syntax');
        if (text[i] === '"') {
          if (text[i + 1] !== '"') break;
          i++;
        }
        part += text[i];
      }
      i++;
    } else {
      while (i < text.length && text[i] !== '.') part += text[i++];
      part = part.trim();
    }
    if (part === '') sqlFail('42602', 'invalid name syntax');
    parts.push(part.toLowerCase());
    if (i >= text.length) break;
    if (text[i] !== '.') sqlFail('42602', 'invalid name syntax');
    i++;
  }
  if (parts.length > 3) sqlFail('42601', `improper relation name (too many dotted names): ${text}`);
  if (parts.length === 3) sqlFail('0A000', `cross-database references are not implemented: ${text}`);
  if (parts.length === 2 && parts[0] !== 'public') {
    if (parts[0] === 'pg_catalog' || parts[0] === 'information_schema') sqlFail('42P01', `relation "${text}" does not exist`);
    sqlFail('3F000', `schema "${parts[0]}" does not exist`);
  }
  return parts[parts.length - 1]!;
}

/**
 * The sequence `text` names (nextval's argument).
 * @throws SQL_ERROR 42P01 no such relation, 42809 a relation that is not a sequence
 */
export function resolveSequence(catalog: Catalog, text: string): SequenceHandle {
  const name = relationNameOf(text);
  const found = findSequence(catalog, name);
  if (found !== undefined) return found;
  const kind = relationKind(catalog, name);
  // PostgreSQL 16+'s words (15 said `"t" is not a sequence`).
  if (kind !== undefined) sqlFail('42809', `cannot open relation "${name}"`, `This operation is not supported for ${relationPlural(kind)}.`);
  return sqlFail('42P01', `relation "${text}" does not exist`);
}

export function readState(reader: SqlReader, seq: TableSequence): SequenceState | undefined {
  return sequenceStateOf(reader.get(SEQUENCE_TREE, seq.key));
}

/** nextval: the next value, which becomes the state. @throws SQL_ERROR 2200H past a bound without CYCLE */
export function drawNext(view: TxnView, seq: TableSequence): bigint {
  const next = nextFromState(seq.def, readState(view, seq), seq.name);
  view.put(SEQUENCE_TREE, seq.key, sequenceStateBytes({ last: next, called: true }));
  return next;
}

/** What evaluating a sequence function needs of the executor (ctx.exec, an Exec). */
interface SequenceHost {
  readonly catalog: Catalog;
  readonly session?: SqlSession;
}

function hostOf(ctx: EvalContext): SequenceHost {
  const host = ctx.exec as SequenceHost | undefined;
  // Only the executor evaluates these (a constant fold never does: they are volatile).
  if (host === undefined) return sqlFail('XX000', 'internal: a sequence function evaluated outside a statement');
  return host;
}

function writableView(host: SequenceHost, fn: string): TxnView {
  const view = host.session?.view;
  if (view === undefined) return sqlFail('25006', `cannot execute ${fn}() in a read-only transaction`);
  return view;
}

const int8 = (value: bigint): { type: 'int8'; value: bigint } => ({ type: 'int8', value });

/** The executor a sequence function runs in, and the sequence `name` (its regclass argument) names. */
function sequenceCall(name: string, ctx: EvalContext): { host: SequenceHost; seq: SequenceHandle } {
  const host = hostOf(ctx);
  return { host, seq: resolveSequence(host.catalog, name) };
}

/** nextval(regclass): the sequence's next value, int8. */
const nextval: FunctionDef = strict({
  args: ['text'],
  returns: 'int8',
  impl(args, ctx) {
    const { host, seq } = sequenceCall(args[0]!.value as string, ctx);
    const value = drawNext(writableView(host, 'nextval'), seq);
    host.session!.drew(seq.key, value);
    return int8(value);
  },
});

/** currval(regclass): what nextval last returned for it in this request. */
const currval: FunctionDef = strict({
  args: ['text'],
  returns: 'int8',
  impl(args, ctx) {
    const { host, seq } = sequenceCall(args[0]!.value as string, ctx);
    const value = host.session?.current(seq.key);
    if (value === undefined) sqlFail('55000', `currval of sequence "${seq.name}" is not yet defined in this session`);
    return int8(value);
  },
});

/** lastval(): what nextval last returned in this request, whichever sequence. */
const lastval: FunctionDef = {
  compile(name, args) {
    if (args.length !== 0) return noFunction(name, args);
    return {
      type: 'int8',
      evaluate(ctx) {
        const host = hostOf(ctx);
        const last = host.session?.last();
        if (last === undefined) return sqlFail('55000', 'lastval is not yet defined in this session');
        // Its sequence dropped since: PostgreSQL says the same.
        if (!sequenceKeyExists(host.catalog, last.key)) return sqlFail('55000', 'lastval is not yet defined in this session');
        return int8(last.value);
      },
    };
  },
};

/** True when a sequence of `catalog` keeps its state at `key`. */
export function sequenceKeyExists(catalog: Catalog, key: Buffer): boolean {
  for (const seq of catalog.sequences.values()) if (standaloneKey(seq).equals(key)) return true;
  for (const table of catalog.tables.values()) for (const col of liveColumns(table)) if (col.serial && columnSequence(table, col).key.equals(key)) return true;
  return false;
}

/**
 * setval(regclass, bigint [, boolean]): sets the state; with `false` the next nextval returns the
 * value itself. Returns the value.
 * @throws SQL_ERROR 22003 a value outside the sequence's bounds
 */
function setvalImpl(name: string, value: bigint, called: boolean, ctx: EvalContext): { type: 'int8'; value: bigint } {
  const { host, seq } = sequenceCall(name, ctx);
  const view = writableView(host, 'setval');
  const min = BigInt(seq.def.min);
  const max = BigInt(seq.def.max);
  if (value < min || value > max) sqlFail('22003', `setval: value ${value} is out of bounds for sequence "${seq.name}" (${min}..${max})`);
  view.put(SEQUENCE_TREE, seq.key, sequenceStateBytes({ last: value, called }));
  host.session!.setTo(seq.key, { last: value, called });
  return int8(value);
}

const setval: FunctionDef = strict(
  { args: ['text', 'int8'], returns: 'int8', impl: (a, ctx) => setvalImpl(a[0]!.value as string, BigInt(a[1]!.value as bigint | number), true, ctx) },
  { args: ['text', 'int8', 'boolean'], returns: 'int8', impl: (a, ctx) => setvalImpl(a[0]!.value as string, BigInt(a[1]!.value as bigint | number), a[2]!.value as boolean, ctx) },
);

/**
 * pg_get_serial_sequence(table, column): the qualified name of the sequence a serial or identity
 * column (or an OWNED BY column) uses, else NULL.
 * @throws SQL_ERROR 42P01 no such table, 42703 no such column
 */
const pgGetSerialSequence: FunctionDef = strict({
  args: ['text', 'text'],
  returns: 'text',
  impl(args, ctx) {
    const [tableText, columnText] = [args[0]!, args[1]!];
    const host = hostOf(ctx);
    const tname = relationNameOf(tableText.value as string);
    const table = host.catalog.table(tname) ?? sqlFail('42P01', `relation "${tableText.value as string}" does not exist`);
    // The column argument is a name as written, not an identifier list: quotes keep their case.
    const raw = columnText.value as string;
    const cname = raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? raw.slice(1, -1).replace(/""/g, '"') : raw.toLowerCase();
    const col = liveColumns(table).find((c) => c.name === cname) ?? sqlFail('42703', `column "${cname}" of relation "${table.name}" does not exist`);
    if (col.serial) return { type: 'text', value: `public.${columnSequence(table, col).name}` };
    for (const seq of host.catalog.sequences.values()) {
      if (seq.ownedBy?.table === table.id && seq.ownedBy.column === col.id) return { type: 'text', value: `public.${seq.name}` };
    }
    return { type: 'text', value: null };
  },
});

/** The sequence functions by name (functions/function-table.ts registers them). */
export const SEQUENCE_FUNCTIONS: Record<string, FunctionDef> = {
  nextval,
  currval,
  lastval,
  setval,
  pg_get_serial_sequence: pgGetSerialSequence,
};

/** Names of functions whose first argument is a regclass: `'s'::regclass` reads as the text. */
export const REGCLASS_ARGUMENT_FUNCTIONS: ReadonlySet<string> = new Set(['nextval', 'currval', 'setval', 'obj_description', 'col_description']);
