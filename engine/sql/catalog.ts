import type { CollationName } from './collation.js';
import { registerEnum, type EnumTypeDef } from './enum-types.js';
import type { AstNode } from './expression-eval.js';
import type { CastTarget } from './sql-cast.js';
import type { SequenceDef } from './sequence-options.js';
import { metaPackr } from './store/sql-codec.js';
import type { SqlReader, TxnView } from './store/sql-view.js';
import { sqlFail, type SqlTypeName } from './sql-types.js';

/**
 * The SQL catalog of one tenant: its tables with their columns, constraints and indexes. Kept in
 * the tree `sql.catalog` (one record per table, keyed by name, plus `\0meta` with the id
 * counter), loaded once per store and cached; a transaction that changes it works on a copy,
 * which replaces the cached one when it commits.
 *
 * Physical layout per table (ids never reused):
 *   sql.r.<tableId>    primary key (or hidden row id) -> row (values in physical column order)
 *   sql.i.<indexId>    index columns ++ primary key -> primary key
 *   sql.seq            "<tableId>.<columnId>" -> last value of a serial column / "<tableId>.rowid"
 *                      / "s.<sequenceId>" -> state of a standalone sequence (CREATE SEQUENCE)
 *
 * Standalone sequences are records of `sql.catalog` too, keyed `\0seq.<name>` (after `\0meta`,
 * before every table name, which cannot start with NUL), and so are views, keyed `\0view.<name>`,
 * and enum types (CREATE TYPE ... AS ENUM), keyed `\0type.<name>`.
 */

export const CATALOG_TREE = 'sql.catalog';
export const SEQUENCE_TREE = 'sql.seq';
const META_KEY = Buffer.from('\0meta');
const SEQUENCE_KEY_PREFIX = '\0seq.';
const VIEW_KEY_PREFIX = '\0view.';
const TYPE_KEY_PREFIX = '\0type.';

export interface ColumnDef {
  /** Stable id: the row slot is the column's index in TableDef.columns (dropped ones stay). */
  id: number;
  name: string;
  type: SqlTypeName;
  /** The declared type as PostgreSQL names it (integer, character varying(20), numeric(10,2)). */
  declared: string;
  /** Modifiers applied on assignment (varchar length, numeric precision and scale). */
  target: CastTarget;
  notNull: boolean;
  /** DEFAULT expression (node-sql-parser AST), or a serial's sequence. */
  default?: AstNode;
  /** The column draws its default from its sequence (serial types and identity columns). */
  serial?: boolean;
  /**
   * An identity column: ALWAYS refuses given values unless the INSERT says OVERRIDING SYSTEM
   * VALUE; both take the sequence under OVERRIDING USER VALUE. Absent: not an identity column
   * (catalogs written before this was kept hold BY DEFAULT identity columns as plain serials).
   */
  identity?: 'always' | 'by default';
  /** An identity column's sequence options (absent: the defaults for its type, defaultSequence). */
  sequence?: SequenceDef;
  /** A stored generated column's expression (node-sql-parser AST over the table's columns). */
  generated?: AstNode;
  dropped?: boolean;
  /** Value (stored form) for rows written before the column was added. */
  missing?: unknown;
  /** A text column's COLLATE other than "default" (absent: "default"). */
  collation?: CollationName;
  /** COMMENT ON COLUMN. */
  comment?: string;
}

export interface IndexDef {
  id: number;
  name: string;
  /** Column ids of the key parts; -1 for a part that is an expression (see `expressions`). */
  columns: number[];
  /**
   * An index on expressions (CREATE INDEX ... (lower(email))): each key part's expression
   * (node-sql-parser AST over the table's columns, stored unqualified), null for a column part.
   * Absent: every part is a column.
   */
  expressions?: (AstNode | null)[];
  /** The expressions' result types (null for column parts), set with `expressions`: the planner's key types. */
  expressionTypes?: (SqlTypeName | null)[];
  /**
   * A partial index's predicate (CREATE INDEX ... WHERE; AST over the table's columns, stored
   * unqualified): only the rows it holds true for have entries. Absent: every row.
   */
  predicate?: AstNode;
  unique: boolean;
  /** The index backs a PRIMARY KEY or UNIQUE constraint (dropped with it, not by DROP INDEX). */
  constraint?: 'primary' | 'unique';
  /** COMMENT ON INDEX. */
  comment?: string;
}

export interface CheckDef {
  name: string;
  expr: AstNode;
}

export interface ForeignKeyDef {
  name: string;
  columns: number[];
  refTable: string;
  refColumns: number[];
  /** What deleting a referenced row does (absent: NO ACTION, checked at once). */
  onDelete?: 'cascade' | 'set null' | 'set default' | 'restrict';
  /** What updating a referenced key does (absent: NO ACTION, checked at once; RESTRICT, checked at once with its own SQLSTATE). */
  onUpdate?: 'cascade' | 'set null' | 'set default' | 'restrict';
}

export interface TableDef {
  id: number;
  name: string;
  columns: ColumnDef[];
  /** Column ids of the primary key; empty: rows are keyed by a hidden row id. */
  primaryKey: number[];
  /** The primary key constraint's name when it is not `<table>_pkey` (see primaryKeyName). */
  primaryKeyName?: string;
  indexes: IndexDef[];
  checks: CheckDef[];
  foreignKeys: ForeignKeyDef[];
  /** COMMENT ON TABLE. */
  comment?: string;
}

/**
 * A sequence of its own (CREATE SEQUENCE), as opposed to the one a serial or identity column
 * keeps in its ColumnDef.
 */
export interface SequenceObject {
  id: number;
  name: string;
  /** Its data type (AS): the bounds its MINVALUE and MAXVALUE default to and must lie within. */
  type: 'int2' | 'int4' | 'int8';
  def: SequenceDef;
  /** OWNED BY table.column: dropped with that column or its table. */
  ownedBy?: { table: number; column: number };
  /** COMMENT ON SEQUENCE. */
  comment?: string;
}

/**
 * A view (CREATE VIEW): its query, stored as the parser's AST with the `*` of its select list
 * written out (a column added to a table later is not one of its columns, as in PostgreSQL),
 * and planned as a subquery in FROM wherever it is read. Its columns' names and types are fixed
 * when it is created (ALTER VIEW ... RENAME COLUMN renames them). `uses` are the relations its
 * query reads directly, by id: the tables with the columns it reads of each, and other views;
 * DROP and ALTER TABLE check them (2BP01), and renames carry new names into `query`.
 */
export interface ViewDef {
  id: number;
  name: string;
  query: AstNode;
  /** The query as written (pg_views.definition, information_schema.views.view_definition). */
  definition: string;
  /** Its columns (`comment`: COMMENT ON COLUMN). */
  columns: Array<{ name: string; type: SqlTypeName; comment?: string }>;
  uses: {
    tables: Array<{ table: number; columns: number[] }>;
    views: number[];
    /** The columns it reads of each view it reads, by position (absent in views made before they were recorded). */
    viewColumns?: Array<{ view: number; columns: number[] }>;
  };
  /** WITH [CASCADED | LOCAL] CHECK OPTION (absent: none): rows written through the view must pass its WHERE. */
  checkOption?: 'cascaded' | 'local';
  /** COMMENT ON VIEW. */
  comment?: string;
}

export class Catalog {
  readonly tables: Map<string, TableDef>;
  /** Standalone sequences by name. */
  readonly sequences: Map<string, SequenceObject>;
  /** Views by name. */
  readonly views: Map<string, ViewDef>;
  /** Enum types by name (their current versions). */
  readonly types: Map<string, EnumTypeDef>;
  nextId: number;
  /** Bumped by every change; compiled plans remember the version they were planned against. */
  version: number;

  constructor(
    tables: Map<string, TableDef>,
    nextId: number,
    version: number,
    sequences: Map<string, SequenceObject> = new Map(),
    views: Map<string, ViewDef> = new Map(),
    types: Map<string, EnumTypeDef> = new Map(),
  ) {
    this.tables = tables;
    this.sequences = sequences;
    this.views = views;
    this.types = types;
    this.nextId = nextId;
    this.version = version;
  }

  static load(reader: SqlReader, version: number): Catalog {
    const tables = new Map<string, TableDef>();
    const sequences = new Map<string, SequenceObject>();
    const views = new Map<string, ViewDef>();
    const types = new Map<string, EnumTypeDef>();
    let nextId = 1;
    for (const [key, value] of reader.scan(CATALOG_TREE)) {
      if (key.equals(META_KEY)) nextId = (metaPackr.unpack(value) as { nextId: number }).nextId;
      else if (key[0] === 0 && key.toString('utf8', 0, TYPE_KEY_PREFIX.length) === TYPE_KEY_PREFIX) {
        const t = metaPackr.unpack(value) as EnumTypeDef;
        registerEnum(t);
        types.set(t.name, t);
      } else if (key[0] === 0 && key.toString('utf8', 0, VIEW_KEY_PREFIX.length) === VIEW_KEY_PREFIX) {
        const v = metaPackr.unpack(value) as ViewDef;
        views.set(v.name, v);
      } else if (key[0] === 0) {
        const seq = metaPackr.unpack(value) as SequenceObject;
        sequences.set(seq.name, seq);
      } else {
        const def = metaPackr.unpack(value) as TableDef;
        tables.set(def.name, def);
      }
    }
    return new Catalog(tables, nextId, version, sequences, views, types);
  }

  /** A deep copy for a transaction to change. */
  clone(): Catalog {
    return new Catalog(
      new Map([...this.tables].map(([k, v]) => [k, structuredClone(v)])),
      this.nextId,
      this.version,
      new Map([...this.sequences].map(([k, v]) => [k, structuredClone(v)])),
      new Map([...this.views].map(([k, v]) => [k, structuredClone(v)])),
      new Map([...this.types].map(([k, v]) => [k, structuredClone(v)])),
    );
  }

  /** Writes an enum type's record (and the id counter) into the transaction, and registers its version. */
  saveType(view: TxnView, def: EnumTypeDef): void {
    registerEnum(def);
    this.types.set(def.name, def);
    view.put(CATALOG_TREE, Buffer.from(TYPE_KEY_PREFIX + def.name, 'utf8'), metaPackr.pack(def));
    this.#saveMeta(view);
  }

  removeType(view: TxnView, name: string): void {
    this.types.delete(name);
    view.delete(CATALOG_TREE, Buffer.from(TYPE_KEY_PREFIX + name, 'utf8'));
    this.#saveMeta(view);
  }

  view(name: string): ViewDef | undefined {
    return this.views.get(name);
  }

  /** Writes a view's record (and the id counter) into the transaction. */
  saveView(view: TxnView, def: ViewDef): void {
    this.views.set(def.name, def);
    view.put(CATALOG_TREE, Buffer.from(VIEW_KEY_PREFIX + def.name, 'utf8'), metaPackr.pack(def));
    this.#saveMeta(view);
  }

  removeView(view: TxnView, name: string): void {
    this.views.delete(name);
    view.delete(CATALOG_TREE, Buffer.from(VIEW_KEY_PREFIX + name, 'utf8'));
    this.#saveMeta(view);
  }

  table(name: string): TableDef | undefined {
    return this.tables.get(name);
  }

  /** @throws SQL_ERROR 42P01 */
  mustTable(name: string): TableDef {
    const t = this.tables.get(name);
    if (t === undefined) sqlFail('42P01', `relation "${name}" does not exist`);
    return t;
  }

  newId(): number {
    return this.nextId++;
  }

  /** Writes a table's record (and the id counter) into the transaction. */
  save(view: TxnView, def: TableDef): void {
    this.tables.set(def.name, def);
    view.put(CATALOG_TREE, Buffer.from(def.name, 'utf8'), metaPackr.pack(def));
    this.#saveMeta(view);
  }

  remove(view: TxnView, name: string): void {
    this.tables.delete(name);
    view.delete(CATALOG_TREE, Buffer.from(name, 'utf8'));
    this.#saveMeta(view);
  }

  /** Writes a standalone sequence's record (and the id counter) into the transaction. */
  saveSequence(view: TxnView, seq: SequenceObject): void {
    this.sequences.set(seq.name, seq);
    view.put(CATALOG_TREE, Buffer.from(SEQUENCE_KEY_PREFIX + seq.name, 'utf8'), metaPackr.pack(seq));
    this.#saveMeta(view);
  }

  removeSequence(view: TxnView, name: string): void {
    this.sequences.delete(name);
    view.delete(CATALOG_TREE, Buffer.from(SEQUENCE_KEY_PREFIX + name, 'utf8'));
    this.#saveMeta(view);
  }

  #saveMeta(view: TxnView): void {
    view.put(CATALOG_TREE, META_KEY, metaPackr.pack({ nextId: this.nextId }));
    this.version++;
  }

  /** The index whose name is `name`, with its table. */
  findIndex(name: string): { table: TableDef; index: IndexDef } | undefined {
    for (const table of this.tables.values()) {
      const index = table.indexes.find((i) => i.name === name);
      if (index !== undefined) return { table, index };
    }
    return undefined;
  }
}

export const rowTree = (t: TableDef): string => `sql.r.${t.id}`;
export const indexTree = (i: IndexDef): string => `sql.i.${i.id}`;

/**
 * The name of a table's primary key constraint: the one it was given or chosen (ALTER TABLE ...
 * ADD [CONSTRAINT name] PRIMARY KEY keeps it, as PostgreSQL's index keeps its name), else
 * `<table>_pkey`.
 */
export function primaryKeyName(t: TableDef): string {
  return t.primaryKeyName ?? `${t.name}_pkey`;
}

/** Live (not dropped) columns in declaration order. */
export function liveColumns(t: TableDef): ColumnDef[] {
  return t.columns.filter((c) => c.dropped !== true);
}

export function columnById(t: TableDef, id: number): ColumnDef {
  return t.columns.find((c) => c.id === id)!;
}

/** Physical slot of a column id. */
export function slotOf(t: TableDef, id: number): number {
  return t.columns.findIndex((c) => c.id === id);
}
