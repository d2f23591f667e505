import { liveColumns, type Catalog, type ColumnDef, type TableDef } from '../catalog.js';
import { checkLabel, initialKeys, newEnumTypeName, quoteTypeName, withLabel, type EnumTypeDef } from '../enum-types.js';
import type { TxnView } from '../store/sql-view.js';
import { userTypeRef } from '../expression-eval.js';
import { isArrayType, sqlFail, type SqlTypeName } from '../sql-types.js';
import type { TypeStatement } from '../type-statements.js';
import type { CastTarget } from '../sql-cast.js';
import { dropColumn } from './ddl.js';
import { CASCADE_HINT, dependentViews, tableTarget } from './views.js';

/**
 * CREATE TYPE ... AS ENUM, ALTER TYPE and DROP TYPE over the catalog, with PostgreSQL's checks and
 * messages. Types share PostgreSQL's type namespace with tables and views (each has a row type):
 * a name taken by one is 42710 for the others.
 * @throws SQL_ERROR 42710, 42704, 42602, 23505, 22023, 2BP01, 42809
 * @returns the command tag
 */
export function runTypeStatement(st: TypeStatement, catalog: Catalog, view: TxnView): string {
  switch (st.action) {
    case 'create':
      createEnum(st.name, st.labels, catalog, view);
      return 'CREATE TYPE';
    case 'drop':
      dropTypes(st.names, st.ifExists, st.cascade, catalog, view);
      return 'DROP TYPE';
    case 'add_value': {
      const def = enumNamed(catalog, st.name);
      checkLabel(st.label);
      if (def.labels.some((l) => l.label === st.label)) {
        if (st.ifNotExists) return 'ALTER TYPE';
        sqlFail('42710', `enum label "${st.label}" already exists`);
      }
      replaceType(def, { ...def, labels: withLabel(def.labels, st.label, st) }, catalog, view);
      return 'ALTER TYPE';
    }
    case 'rename_value': {
      const def = enumNamed(catalog, st.name);
      checkLabel(st.to);
      if (!def.labels.some((l) => l.label === st.from)) sqlFail('22023', `"${st.from}" is not an existing enum label`);
      if (def.labels.some((l) => l.label === st.to)) sqlFail('42710', `enum label "${st.to}" already exists`);
      replaceType(def, { ...def, labels: def.labels.map((l) => (l.label === st.from ? { ...l, label: st.to } : { ...l })) }, catalog, view);
      return 'ALTER TYPE';
    }
    case 'rename': {
      const def = catalog.types.get(st.name);
      if (def === undefined) {
        if (catalog.tables.has(st.name) || catalog.views.has(st.name)) {
          sqlFail('42809', `${st.name} is a table's row type`, undefined, 'Use ALTER TABLE instead.');
        }
        sqlFail('42704', `type "${st.name}" does not exist`);
      }
      if (st.to !== st.name) refuseTypeName(catalog, st.to, false);
      refuseRenameOfNamed(def.name, catalog);
      catalog.removeType(view, def.name);
      replaceType(def, { ...def, name: st.to }, catalog, view);
      return 'ALTER TYPE';
    }
    default: {
      const never: never = st;
      return never;
    }
  }
}

/**
 * 42710 when `name` is a type's (an enum's, or a table's or view's row type), as PostgreSQL refuses
 * a new type or relation of that name; `relation`: the new object is a table or view (PostgreSQL
 * adds a HINT then).
 * @throws SQL_ERROR 42710
 */
export function refuseTypeName(catalog: Catalog, name: string, relation: boolean): void {
  if (catalog.types.has(name) || (!relation && (catalog.tables.has(name) || catalog.views.has(name)))) {
    sqlFail('42710', `type "${name}" already exists`, undefined, relation ? "A relation has an associated type of the same name, so you must use a name that doesn't conflict with any existing type." : undefined);
  }
}

/**
 * Stored expressions (a view's query, a DEFAULT, a CHECK, a generation expression, an index's
 * expressions and predicate) keep a cast to a type by its name, where PostgreSQL binds it by oid:
 * renaming a type one of them names is refused rather than leave it naming a type that is gone.
 * @throws SQL_ERROR 0A000
 */
function refuseRenameOfNamed(name: string, catalog: Catalog): void {
  const names = (node: unknown): boolean => {
    if (node === null || typeof node !== 'object') return false;
    const ref = 'dataType' in node ? userTypeRef(node as { dataType: string }) : undefined;
    if (ref?.name === name) return true;
    return Object.values(node).some(names);
  };
  const holders: string[] = [];
  for (const v of catalog.views.values()) if (names(v.query)) holders.push(`view ${v.name}`);
  for (const t of catalog.tables.values()) {
    const exprs = [...t.columns.flatMap((c) => [c.default, c.generated]), ...t.checks.map((c) => c.expr), ...t.indexes.flatMap((i) => [...(i.expressions ?? []), i.predicate])];
    if (exprs.some(names)) holders.push(`table ${t.name}`);
  }
  if (holders.length > 0) {
    sqlFail('0A000', `unsupported: renaming type ${quoteTypeName(name)}, which ${holders.join(', ')} names in a stored expression`, undefined, 'Drop and create those objects again after the rename.');
  }
}

function createEnum(name: string, labels: readonly string[], catalog: Catalog, view: TxnView): void {
  refuseTypeName(catalog, name, false);
  const id = catalog.newId();
  const seen = new Set<string>();
  for (const label of labels) {
    checkLabel(label);
    // PostgreSQL's unique index on pg_enum (enumtypid, enumlabel) is what refuses a repeated label.
    if (seen.has(label)) sqlFail('23505', 'duplicate key value violates unique constraint "pg_enum_typid_label_index"', `Key (enumtypid, enumlabel)=(${id}, ${label}) already exists.`);
    seen.add(label);
  }
  const keys = initialKeys(labels.length);
  catalog.saveType(view, { id, name, typeName: newEnumTypeName(), labels: labels.map((label, i) => ({ label, key: keys[i]!, order: i + 1 })) });
}

/** The enum type `name`. @throws SQL_ERROR 42704 none, 42809 a table's or view's row type */
function enumNamed(catalog: Catalog, name: string): EnumTypeDef {
  const def = catalog.types.get(name);
  if (def !== undefined) return def;
  if (catalog.tables.has(name) || catalog.views.has(name)) sqlFail('42809', `${quoteTypeName(name)} is not an enum`);
  return sqlFail('42704', `type "${name}" does not exist`);
}

/** Whether a column (or view column) is of the type, or an array of it. */
function ofType(type: SqlTypeName, def: EnumTypeDef): boolean {
  return type === def.typeName || type === `${def.typeName}[]`;
}

/**
 * Makes `next` the current version of the type `old` was: a new engine type name, which every
 * column, view column and index expression of the old one's takes (their stored values are sort
 * keys, which do not change).
 */
function replaceType(old: EnumTypeDef, next: EnumTypeDef, catalog: Catalog, view: TxnView): void {
  const def: EnumTypeDef = { ...next, typeName: newEnumTypeName() };
  catalog.saveType(view, def);
  const retype = (t: SqlTypeName): SqlTypeName => (t === old.typeName ? def.typeName : t === `${old.typeName}[]` ? (`${def.typeName}[]` as SqlTypeName) : t);
  const retarget = (t: CastTarget): CastTarget => ({ ...t, type: retype(t.type), ...(t.element === undefined ? {} : { element: retarget(t.element) }) });
  for (const table of catalog.tables.values()) {
    let changed = false;
    for (const c of table.columns) {
      if (!ofType(c.type, old)) continue;
      c.type = retype(c.type);
      c.target = retarget(c.target);
      c.declared = `${quoteTypeName(def.name)}${isArrayType(c.type) ? '[]' : ''}`;
      changed = true;
    }
    for (const ix of table.indexes) {
      if (ix.expressionTypes?.some((t) => t !== null && ofType(t, old))) {
        ix.expressionTypes = ix.expressionTypes.map((t) => (t === null ? null : retype(t)));
        changed = true;
      }
    }
    if (changed) catalog.save(view, table);
  }
  for (const v of catalog.views.values()) {
    if (!v.columns.some((c) => ofType(c.type, old))) continue;
    v.columns = v.columns.map((c) => ({ ...c, type: retype(c.type) }));
    catalog.saveView(view, v);
  }
}

/**
 * DROP TYPE: refused (2BP01, PostgreSQL's DETAIL and HINT) while a column is of the type, unless
 * CASCADE, which drops those columns (and what depends on them, as DROP COLUMN ... CASCADE).
 */
function dropTypes(names: readonly string[], ifExists: boolean, cascade: boolean, catalog: Catalog, view: TxnView): void {
  const defs: EnumTypeDef[] = [];
  for (const name of names) {
    const def = catalog.types.get(name);
    if (def !== undefined) {
      if (!defs.includes(def)) defs.push(def);
      continue;
    }
    const relation = catalog.tables.has(name) ? 'table' : catalog.views.has(name) ? 'view' : undefined;
    if (relation !== undefined) sqlFail('2BP01', `cannot drop type ${quoteTypeName(name)} because ${relation} ${name} requires it`, undefined, `You can drop ${relation} ${name} instead.`);
    if (!ifExists) sqlFail('42704', `type "${name}" does not exist`);
  }
  const dependents: Array<{ table: TableDef; column: ColumnDef; def: EnumTypeDef }> = [];
  for (const table of [...catalog.tables.values()].sort((a, b) => a.id - b.id)) {
    for (const column of liveColumns(table)) {
      const def = defs.find((d) => ofType(column.type, d));
      if (def !== undefined) dependents.push({ table, column, def });
    }
  }
  if (dependents.length > 0 && !cascade) {
    const lines: string[] = [];
    // PostgreSQL lists the latest dependency first, those on the array type (`mood[]`) before.
    const latestFirst = [...dependents].reverse();
    for (const { table, column, def } of [...latestFirst.filter((d) => isArrayType(d.column.type)), ...latestFirst.filter((d) => !isArrayType(d.column.type))]) {
      lines.push(`column ${column.name} of table ${table.name} depends on type ${quoteTypeName(def.name)}${isArrayType(column.type) ? '[]' : ''}`);
      for (const v of dependentViews(catalog, [tableTarget(table, column.id)])) lines.push(v.line);
    }
    const what = defs.length === 1 ? `cannot drop type ${quoteTypeName(defs[0]!.name)} because other objects depend on it` : 'cannot drop desired object(s) because other objects depend on them';
    sqlFail('2BP01', what, lines.join('\n'), CASCADE_HINT);
  }
  for (const { table, column } of dependents) {
    const live = catalog.tables.get(table.name);
    const col = live?.columns.find((c) => c.id === column.id && c.dropped !== true);
    if (live !== undefined && col !== undefined) dropColumn(live, col, true, catalog, view);
  }
  for (const def of defs) catalog.removeType(view, def.name);
}
