import { liveColumns, primaryKeyName, type Catalog, type TableDef } from '../catalog.js';
import { referencedKey } from './ddl.js';
import type { AstNode } from '../expression-eval.js';
import { unsupported } from '../expression-eval.js';
import { elementTypeOf, isArrayType, isEnumType, type SqlTypeName, type SqlValue } from '../sql-types.js';
import { enumTypeName } from '../enum-types.js';

/** PostgreSQL's internal name of a type (pg_type.typname: int4, varchar, _int4 for integer[]), as information_schema's udt_name gives it. */
function udtName(type: SqlTypeName, declared: string): string {
  if (isArrayType(type)) return `_${udtName(elementTypeOf(type), declared.replace(/\[\]$/, ''))}`;
  if (isEnumType(type)) return enumTypeName(type);
  if (type === 'text') return declared.startsWith('character varying') ? 'varchar' : 'text';
  if (type === 'boolean') return 'bool';
  return type;
}
import { typeDisplay } from '../sql-cast.js';

/** information_schema's datetime_precision: fractional digits of the time types (6 unless declared), 0 for date. */
function datetimePrecision(type: SqlTypeName, fractionDigits: number | undefined): number | null {
  if (type === 'date') return 0;
  return ['timestamp', 'timestamptz', 'time', 'timetz', 'interval'].includes(type) ? (fractionDigits ?? 6) : null;
}
import { viewUpdatability } from './view-writes.js';
import { columnSequence, TYPE_NAMES } from '../sequence-options.js';
import type { Exec, ExplainNode, Plan, PlanColumn, Step } from './runtime.js';
import { defaultText, expressionSqlText } from './default-text.js';
import { findSequence, readState, standaloneHandle, type SequenceHandle } from '../sequences.js';

const text = (v: string | null): SqlValue => ({ type: 'text', value: v }) as SqlValue;
const int = (v: number | null): SqlValue => ({ type: 'int4', value: v }) as SqlValue;

/** information_schema.tables and .columns over the tenant's catalog (schema 'public'). */
export function informationSchemaPlan(name: string, catalog: Catalog): Plan {
  if (name === 'tables') {
    const columns: PlanColumn[] = ['table_catalog', 'table_schema', 'table_name', 'table_type'].map((n) => ({ name: n, type: 'text', qualifier: null }));
    return new RowsPlan(columns, () =>
      [...[...catalog.tables.values()].map((t) => ({ name: t.name, type: 'BASE TABLE' })), ...[...catalog.views.values()].map((v) => ({ name: v.name, type: 'VIEW' }))]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map((r) => [text('tetradb'), text('public'), text(r.name), text(r.type)]),
    );
  }
  if (name === 'views') {
    const names = ['table_catalog', 'table_schema', 'table_name', 'view_definition', 'check_option', 'is_updatable', 'is_insertable_into', 'is_trigger_updatable', 'is_trigger_deletable', 'is_trigger_insertable_into'];
    const columns: PlanColumn[] = names.map((n) => ({ name: n, type: 'text', qualifier: null }));
    const yes = (b: boolean): SqlValue => text(b ? 'YES' : 'NO');
    return new RowsPlan(columns, () =>
      [...catalog.views.values()]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map((v) => {
          const { insertable, updatable } = viewUpdatability(v, catalog);
          return [text('tetradb'), text('public'), text(v.name), text(v.definition), text(v.checkOption?.toUpperCase() ?? 'NONE'), yes(updatable), yes(insertable), text('NO'), text('NO'), text('NO')];
        }),
    );
  }
  if (name === 'columns') {
    const names = ['table_catalog', 'table_schema', 'table_name', 'column_name', 'ordinal_position', 'column_default', 'is_nullable', 'data_type', 'character_maximum_length', 'numeric_precision', 'numeric_scale', 'datetime_precision', 'collation_catalog', 'collation_schema', 'collation_name', 'udt_name', 'is_identity', 'identity_generation', 'identity_start', 'identity_increment', 'identity_maximum', 'identity_minimum', 'identity_cycle', 'is_generated'];
    const columns: PlanColumn[] = names.map((n) => ({ name: n, type: n === 'ordinal_position' || n.startsWith('numeric_') || n.startsWith('character_') || n === 'datetime_precision' ? 'int4' : 'text', qualifier: null }));
    return new RowsPlan(columns, () => {
      const rows: SqlValue[][] = [];
      const relations = [...[...catalog.tables.values()].map((t) => ({ name: t.name, table: t, view: undefined })), ...[...catalog.views.values()].map((v) => ({ name: v.name, table: undefined, view: v }))];
      for (const { table: t, view: v } of relations.sort((a, b) => (a.name < b.name ? -1 : 1))) {
        if (v !== undefined) {
          // A view's columns: their names and types (their types' modifiers are not kept).
          v.columns.forEach((c, i) => {
            const precision = c.type === 'int2' ? 16 : c.type === 'int4' ? 32 : c.type === 'int8' ? 64 : c.type === 'float8' ? 53 : null;
            const scale = c.type === 'int2' || c.type === 'int4' || c.type === 'int8' ? 0 : null;
            rows.push([text('tetradb'), text('public'), text(v.name), text(c.name), int(i + 1), text(null), text('YES'), text(isArrayType(c.type) ? 'ARRAY' : isEnumType(c.type) ? 'USER-DEFINED' : (typeDisplay(c.type) ?? c.type)), int(null), int(precision), int(scale), int(datetimePrecision(c.type, undefined)), text(null), text(null), text(null), text(udtName(c.type, typeDisplay(c.type) ?? c.type)), text('NO'), text(null), text(null), text(null), text(null), text(null), text('NO'), text('NEVER')]);
          });
          continue;
        }
        liveColumns(t!).forEach((c, i) => {
          const notNull = c.notNull || t.primaryKey.includes(c.id);
          const sequence = c.serial ? columnSequence(t, c) : undefined;
          const seq = c.identity === undefined ? undefined : sequence!.def;
          rows.push([
            text('tetradb'),
            text('public'),
            text(t.name),
            text(c.name),
            int(i + 1),
            // An identity column's sequence is not its default (PostgreSQL lists none).
            text(sequence !== undefined && c.identity === undefined ? `nextval('${sequence.name}'::regclass)` : c.default !== undefined ? defaultText(c.default, c, catalog) : null),
            text(notNull ? 'NO' : 'YES'),
            text(isArrayType(c.type) ? 'ARRAY' : c.type === 'bpchar' ? 'character' : isEnumType(c.type) ? 'USER-DEFINED' : c.declared.replace(/\(.*\)$/, '')),
            int(c.target.maxLength ?? null),
            int(c.target.precision ?? (c.type === 'int2' ? 16 : c.type === 'int4' ? 32 : c.type === 'int8' ? 64 : c.type === 'float8' ? 53 : null)),
            int(c.target.scale ?? (c.type === 'int2' || c.type === 'int4' || c.type === 'int8' ? 0 : null)),
            int(datetimePrecision(c.type, c.target.fractionDigits)),
            // A COLLATE other than "default", as PostgreSQL lists it (NULL for the default).
            text(c.collation === undefined ? null : 'tetradb'),
            text(c.collation === undefined ? null : 'pg_catalog'),
            text(c.collation ?? null),
            text(udtName(c.type, c.declared)),
            text(c.identity === undefined ? 'NO' : 'YES'),
            text(c.identity?.toUpperCase() ?? null),
            // The identity's sequence (NULL for other columns, whose identity_cycle is NO).
            text(seq?.start ?? null),
            text(seq?.increment ?? null),
            text(seq?.max ?? null),
            text(seq?.min ?? null),
            text(seq?.cycle === true ? 'YES' : 'NO'),
            text(c.generated === undefined ? 'NEVER' : 'ALWAYS'),
          ]);
        });
      }
      return rows;
    });
  }
  if (name === 'view_table_usage' || name === 'view_column_usage') {
    // What each view reads directly (views.ts records it by id when the view is made): the tables
    // and views, and (view_column_usage) their columns.
    const withColumns = name === 'view_column_usage';
    const names = ['view_catalog', 'view_schema', 'view_name', 'table_catalog', 'table_schema', 'table_name', ...(withColumns ? ['column_name'] : [])];
    const columns: PlanColumn[] = names.map((n) => ({ name: n, type: 'text', qualifier: null }));
    return new RowsPlan(columns, () => {
      const tables = new Map([...catalog.tables.values()].map((t) => [t.id, t]));
      const views = new Map([...catalog.views.values()].map((v) => [v.id, v]));
      const rows: SqlValue[][] = [];
      for (const v of [...catalog.views.values()].sort((a, b) => (a.name < b.name ? -1 : 1))) {
        const row = (relation: string, column?: string): SqlValue[] => [text('tetradb'), text('public'), text(v.name), text('tetradb'), text('public'), text(relation), ...(withColumns ? [text(column!)] : [])];
        for (const u of v.uses.tables) {
          const t = tables.get(u.table);
          if (t === undefined) continue;
          if (!withColumns) rows.push(row(t.name));
          else for (const id of u.columns) rows.push(row(t.name, t.columns.find((c) => c.id === id)!.name));
        }
        for (const id of v.uses.views) {
          const r = views.get(id);
          if (r === undefined) continue;
          if (!withColumns) rows.push(row(r.name));
          else for (const i of v.uses.viewColumns?.find((c) => c.view === id)?.columns ?? []) rows.push(row(r.name, r.columns[i]!.name));
        }
      }
      return rows;
    });
  }
  if (name === 'sequences') {
    const names = ['sequence_catalog', 'sequence_schema', 'sequence_name', 'data_type', 'numeric_precision', 'numeric_precision_radix', 'numeric_scale', 'start_value', 'minimum_value', 'maximum_value', 'increment', 'cycle_option'];
    const columns: PlanColumn[] = names.map((n) => ({ name: n, type: n.startsWith('numeric_') ? 'int4' : 'text', qualifier: null }));
    return new RowsPlan(columns, () =>
      allSequences(catalog)
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map((q) => [
          text('tetradb'),
          text('public'),
          text(q.name),
          text(TYPE_NAMES[q.type]),
          int(q.type === 'int2' ? 16 : q.type === 'int4' ? 32 : 64),
          int(2),
          int(0),
          text(q.def.start),
          text(q.def.min),
          text(q.def.max),
          text(q.def.increment),
          text(q.def.cycle ? 'YES' : 'NO'),
        ]),
    );
  }
  if (name === 'table_constraints') {
    const names = ['constraint_catalog', 'constraint_schema', 'constraint_name', 'table_catalog', 'table_schema', 'table_name', 'constraint_type', 'is_deferrable', 'initially_deferred', 'enforced', 'nulls_distinct'];
    const columns: PlanColumn[] = names.map((n) => ({ name: n, type: 'text', qualifier: null }));
    return new RowsPlan(columns, () =>
      constraintsOf(catalog).map((c) => [
        ...constraintOf(c),
        text(c.type),
        text('NO'),
        text('NO'),
        text('YES'),
        text(c.type === 'UNIQUE' ? 'YES' : null),
      ]),
    );
  }
  if (name === 'key_column_usage') {
    const names = ['constraint_catalog', 'constraint_schema', 'constraint_name', 'table_catalog', 'table_schema', 'table_name', 'column_name', 'ordinal_position', 'position_in_unique_constraint'];
    const columns: PlanColumn[] = names.map((n) => ({ name: n, type: n.startsWith('ordinal') || n.startsWith('position') ? 'int4' : 'text', qualifier: null }));
    return new RowsPlan(columns, () =>
      constraintsOf(catalog)
        .filter((c) => c.type !== 'CHECK')
        .flatMap((c) =>
          c.columns.map((id, i) => [
            ...constraintOf(c),
            text(c.table.columns[id]!.name),
            int(i + 1),
            int(c.referenced === undefined ? null : c.referenced[i]!),
          ]),
        ),
    );
  }
  if (name === 'referential_constraints') {
    const names = ['constraint_catalog', 'constraint_schema', 'constraint_name', 'unique_constraint_catalog', 'unique_constraint_schema', 'unique_constraint_name', 'match_option', 'update_rule', 'delete_rule'];
    const columns: PlanColumn[] = names.map((n) => ({ name: n, type: 'text', qualifier: null }));
    const rule = (action: string | undefined): string => (action === undefined ? 'NO ACTION' : action.toUpperCase());
    return new RowsPlan(columns, () =>
      [...catalog.tables.values()]
        .sort((a, b) => a.id - b.id)
        .flatMap((t) =>
          t.foreignKeys.map((fk) => {
            const target = catalog.table(fk.refTable);
            const key = target === undefined ? undefined : referencedKey(target, fk.refColumns);
            return [text('tetradb'), text('public'), text(fk.name), text('tetradb'), text('public'), text(key?.name ?? null), text('NONE'), text(rule(fk.onUpdate)), text(rule(fk.onDelete))];
          }),
        ),
    );
  }
  return unsupported(`information_schema.${name} (tables, columns, views, view_table_usage, view_column_usage, sequences, table_constraints, key_column_usage and referential_constraints are available)`);
}

/** An identifier as PostgreSQL's quote_identifier writes it: bare when lower-case and plain, else quoted. */
function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/**
 * pg_catalog's relations tetradb has: pg_indexes (schemaname, tablename, indexname, tablespace,
 * indexdef, the definition as pg_get_indexdef writes it: primary keys, unique constraints and
 * indexes, on columns and expressions, partial ones with their WHERE).
 */
export function pgCatalogPlan(name: string, catalog: Catalog): Plan | undefined {
  if (name === 'pg_views') {
    // definition: the query as written (PostgreSQL prints its own rendering of the stored query).
    const columns: PlanColumn[] = ['schemaname', 'viewname', 'viewowner', 'definition'].map((n) => ({ name: n, type: 'text', qualifier: null }));
    return new RowsPlan(columns, () => [...catalog.views.values()].sort((a, b) => a.id - b.id).map((v) => [text('public'), text(v.name), text('tetradb'), text(v.definition)]));
  }
  if (name === 'pg_enum') {
    // The labels of the tenant's enum types (enumtypid: the type's catalog id; no oid column, as
    // labels have no ids here), in each type's order.
    const columns: PlanColumn[] = [
      { name: 'enumtypid', type: 'int8', qualifier: null },
      { name: 'enumsortorder', type: 'float8', qualifier: null },
      { name: 'enumlabel', type: 'text', qualifier: null },
    ];
    return new RowsPlan(columns, () =>
      [...catalog.types.values()]
        .sort((a, b) => a.id - b.id)
        .flatMap((t) => t.labels.map((l): SqlValue[] => [{ type: 'int8', value: BigInt(t.id) }, { type: 'float8', value: l.order }, text(l.label)])),
    );
  }
  if (name !== 'pg_indexes') return undefined;
  const columns: PlanColumn[] = ['schemaname', 'tablename', 'indexname', 'tablespace', 'indexdef'].map((n) => ({ name: n, type: 'text', qualifier: null }));
  return new RowsPlan(columns, () => {
    const rows: SqlValue[][] = [];
    for (const t of [...catalog.tables.values()].sort((a, b) => a.id - b.id)) {
      const def = (index: string, unique: boolean, keys: string[], where: AstNode | undefined): SqlValue[] => [
        text('public'),
        text(t.name),
        text(index),
        text(null),
        text(`CREATE ${unique ? 'UNIQUE ' : ''}INDEX ${quoteIdent(index)} ON public.${quoteIdent(t.name)} USING btree (${keys.join(', ')})${where === undefined ? '' : ` WHERE ${expressionSqlText(where)}`}`),
      ];
      if (t.primaryKey.length > 0) rows.push(def(primaryKeyName(t), true, t.primaryKey.map((id) => quoteIdent(t.columns[id]!.name)), undefined));
      for (const ix of t.indexes) {
        const keys = ix.columns.map((id, k) => {
          const e = ix.expressions?.[k];
          if (e === null || e === undefined) return quoteIdent(t.columns[id]!.name);
          // A call stands as it is; any other expression in parentheses (pg_get_indexdef).
          const written = expressionSqlText(e);
          return (e as { type?: string }).type === 'function' ? written : `(${written})`;
        });
        rows.push(def(ix.name, ix.unique, keys, ix.predicate));
      }
    }
    return rows;
  });
}

/** A table's constraint as information_schema lists it (NOT NULLs are not named, and not listed). */
interface ConstraintRow {
  table: TableDef;
  name: string;
  type: 'PRIMARY KEY' | 'UNIQUE' | 'FOREIGN KEY' | 'CHECK';
  /** Column ids, in the constraint's order (none for a CHECK). */
  columns: number[];
  /** A foreign key's: each column's position in the referenced key (1-based). */
  referenced?: number[];
}

/** The first six columns of table_constraints and key_column_usage: the constraint's and its table's catalog, schema and name. */
function constraintOf(c: ConstraintRow): SqlValue[] {
  return [text('tetradb'), text('public'), text(c.name), text('tetradb'), text('public'), text(c.table.name)];
}

/** Every table's primary key, unique constraints, foreign keys and CHECKs, tables in creation order. */
function constraintsOf(catalog: Catalog): ConstraintRow[] {
  const out: ConstraintRow[] = [];
  for (const t of [...catalog.tables.values()].sort((a, b) => a.id - b.id)) {
    if (t.primaryKey.length > 0) out.push({ table: t, name: primaryKeyName(t), type: 'PRIMARY KEY', columns: t.primaryKey });
    for (const ix of t.indexes) if (ix.constraint === 'unique') out.push({ table: t, name: ix.name, type: 'UNIQUE', columns: ix.columns });
    for (const fk of t.foreignKeys) {
      const target = catalog.table(fk.refTable);
      const key = target === undefined ? undefined : referencedKey(target, fk.refColumns);
      const keyColumns = key === undefined ? undefined : key.index === undefined ? target!.primaryKey : key.index.columns;
      out.push({ table: t, name: fk.name, type: 'FOREIGN KEY', columns: fk.columns, referenced: fk.refColumns.map((c) => (keyColumns?.indexOf(c) ?? -1) + 1) });
    }
    for (const c of t.checks) out.push({ table: t, name: c.name, type: 'CHECK', columns: [] });
  }
  return out;
}

/** The sequences information_schema lists: the standalone ones and serial columns' (not identity columns', as PostgreSQL). */
function allSequences(catalog: Catalog): SequenceHandle[] {
  const out: SequenceHandle[] = [...catalog.sequences.values()].map(standaloneHandle);
  for (const t of catalog.tables.values()) for (const c of liveColumns(t)) if (c.serial && c.identity === undefined) out.push(findSequence(catalog, columnSequence(t, c).name)!);
  return out;
}

/**
 * `SELECT ... FROM s` of a sequence: its one row, last_value, log_cnt and is_called, as of the
 * statement (log_cnt is always 0: no values are logged ahead).
 */
export function sequenceRelationPlan(seq: SequenceHandle, alias: string): Plan {
  const columns: PlanColumn[] = [
    { name: 'last_value', type: 'int8', qualifier: alias },
    { name: 'log_cnt', type: 'int8', qualifier: alias },
    { name: 'is_called', type: 'boolean', qualifier: alias },
  ];
  return new RowsPlan(columns, (x) => {
    const state = readState(x.reader, seq) ?? { last: BigInt(seq.def.first), called: false };
    return [[{ type: 'int8', value: state.last } as SqlValue, { type: 'int8', value: 0n } as SqlValue, { type: 'boolean', value: state.called } as SqlValue]];
  });
}

class RowsPlan implements Plan {
  constructor(
    readonly columns: PlanColumn[],
    private readonly make: (x: Exec) => SqlValue[][],
  ) {}

  *rows(x: Exec): Generator<Step> {
    yield* this.make(x);
  }

  explain(): ExplainNode {
    return { node: 'Catalog Scan' };
  }
}
