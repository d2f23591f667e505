import { randomBytes } from 'node:crypto';
import { isArrayType, isEnumType, sqlFail, type EnumTypeName, type SqlTypeName } from './sql-types.js';

/**
 * Enum types (CREATE TYPE name AS ENUM (...)): their definitions, the process-wide registry that
 * maps an engine type name to its definition, and the labels' sort keys.
 *
 * A value of an enum type is its label's sort key, a string of base-36 digits read as a fraction
 * (`'i'` is 18/36): code point order of the keys is the labels' declared order, there is always a
 * key between two others (ALTER TYPE ... ADD VALUE BEFORE / AFTER takes one), and a label keeps
 * its key for good (RENAME VALUE changes only the label). So rows and index keys store the key,
 * compare and sort as text does, and never need rewriting when the type changes.
 *
 * The engine's type name of an enum is `enum:<id>` with a random id, new for every version of the
 * type (each ADD VALUE, RENAME VALUE and RENAME TO makes one and moves the catalog's columns to
 * it). A version is never changed once made, so the registry below can be process-wide: a
 * snapshot or a cached plan holding an old name keeps reading the old labels, a transaction that
 * fails leaves only an unused entry behind, and no tenant can reach another's types (names are
 * resolved through the tenant's own catalog; the ids are not guessable and never read from SQL).
 */

export interface EnumLabel {
  /** The label as written. */
  label: string;
  /** Its sort key: what rows, index keys and comparisons hold (see the file comment). */
  key: string;
  /** pg_enum.enumsortorder as PostgreSQL numbers it (a float4; shown only, never compared). */
  order: number;
}

/** One version of an enum type, as its catalog record keeps it. */
export interface EnumTypeDef {
  /** The catalog id (pg_type's oid here): the same for every version of the type. */
  id: number;
  name: string;
  /** The engine's type name of this version. */
  typeName: EnumTypeName;
  /** In sort order. */
  labels: EnumLabel[];
  /** COMMENT ON TYPE (not supported yet; kept for the record's shape). */
  comment?: string;
}

/** PostgreSQL's longest label (NAMEDATALEN - 1 bytes). */
const MAX_LABEL_BYTES = 63;

interface Entry {
  def: EnumTypeDef;
  keyOf: Map<string, string>;
  labelOf: Map<string, string>;
}

const REGISTRY = new Map<string, Entry>();

/** A fresh engine type name for a new version of an enum type. */
export function newEnumTypeName(): EnumTypeName {
  return `enum:${randomBytes(12).toString('base64url')}`;
}

/** Makes a version of an enum type known to the value model (idempotent: a reloaded catalog registers its types again). */
export function registerEnum(def: EnumTypeDef): void {
  if (REGISTRY.has(def.typeName)) return;
  const frozen: EnumTypeDef = Object.freeze({ ...def, labels: Object.freeze(def.labels.map((l) => Object.freeze({ ...l }))) as EnumLabel[] });
  REGISTRY.set(def.typeName, {
    def: frozen,
    keyOf: new Map(def.labels.map((l) => [l.label, l.key])),
    labelOf: new Map(def.labels.map((l) => [l.key, l.label])),
  });
}

function entry(t: EnumTypeName): Entry {
  return REGISTRY.get(t) ?? sqlFail('XX000', `internal: unknown enum type ${t}`);
}

/** The definition of an enum type's version. */
export function enumDef(t: EnumTypeName): EnumTypeDef {
  return entry(t).def;
}

/** A stored value's label. */
export function enumLabel(t: EnumTypeName, key: string): string {
  return entry(t).labelOf.get(key) ?? sqlFail('XX000', `internal: enum ${entry(t).def.name} has no label with key ${key}`);
}

/** The value of a label (enum_in). @throws SQL_ERROR 22P02 not one of the type's labels */
export function enumValue(t: EnumTypeName, label: string): string {
  const e = entry(t);
  return e.keyOf.get(label) ?? sqlFail('22P02', `invalid input value for enum ${quoteTypeName(e.def.name)}: "${label}"`);
}

/** The name an enum type is reported by in a result's columns and information_schema (unquoted). */
export function enumTypeName(t: EnumTypeName): string {
  return entry(t).def.name;
}

/** A type's name in a result's `columns`: an enum's own name (`Role`, `Role[]`), any other type's engine name. */
export function reportedTypeName(t: SqlTypeName): string {
  const array = isArrayType(t);
  const element = (array ? t.slice(0, -2) : t) as SqlTypeName;
  return isEnumType(element) ? `${entry(element).def.name}${array ? '[]' : ''}` : t;
}

/**
 * The name of a type as PostgreSQL's format_type writes it in messages: an enum's name, quoted
 * when it is not a plain lower-case identifier (`"Role"`), with `[]` for an array of one;
 * undefined for any other type.
 */
export function enumDisplay(t: SqlTypeName): string | undefined {
  const array = isArrayType(t);
  const element = (array ? t.slice(0, -2) : t) as SqlTypeName;
  if (!isEnumType(element)) return undefined;
  return `${quoteTypeName(entry(element).def.name)}${array ? '[]' : ''}`;
}

/** quote_identifier for a type name: quoted unless a plain lower-case identifier. */
export function quoteTypeName(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/**
 * A label as CREATE TYPE and ALTER TYPE check it.
 * @throws SQL_ERROR 42602 longer than 63 bytes
 */
export function checkLabel(label: string): string {
  if (Buffer.byteLength(label, 'utf8') > MAX_LABEL_BYTES) sqlFail('42602', `invalid enum label "${label}"`, `Labels must be ${MAX_LABEL_BYTES} bytes or less.`);
  return label;
}

// ---- sort keys ----------------------------------------------------------------------------------

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * A key strictly between `a` and `b` (`''` for the start, null for the end), both without
 * trailing zeros, `a` < `b`: the shortest fraction between them, as fractional indexing finds it.
 */
export function keyBetween(a: string, b: string | null): string {
  if (b !== null) {
    let n = 0;
    while ((a[n] ?? '0') === b[n]) n++;
    if (n > 0) return b.slice(0, n) + keyBetween(a.slice(n), b.slice(n));
  }
  const da = a === '' ? 0 : DIGITS.indexOf(a[0]!);
  const db = b === null ? DIGITS.length : DIGITS.indexOf(b[0]!);
  if (db - da > 1) return DIGITS[Math.round((da + db) / 2)]!;
  // Adjacent digits: b's first digit alone lies between when b goes on; else extend a.
  if (b !== null && b.length > 1) return b[0]!;
  return DIGITS[da]! + keyBetween(a.slice(1), null);
}

/** Keys for n labels of a new type, evenly spread (short, and with room on every side). */
export function initialKeys(n: number): string[] {
  let digits = 1;
  while (DIGITS.length ** (digits - 1) < n + 1) digits++;
  const span = DIGITS.length ** digits;
  return Array.from({ length: n }, (_, i) => Math.floor(((i + 1) * span) / (n + 1)).toString(36).padStart(digits, '0').replace(/0+$/, ''));
}

/**
 * The labels after ALTER TYPE ... ADD VALUE `label` [BEFORE | AFTER `neighbour`]: the new label
 * gets a key between its neighbours', and the enumsortorder PostgreSQL's AddEnumLabel gives it
 * (the neighbours' float4 midpoint, one past the last, one before the first; when the midpoint
 * cannot be told from a neighbour, every label is numbered 1, 2, ... again first, as
 * RenumberEnumType does).
 */
export function withLabel(labels: readonly EnumLabel[], label: string, place: { before?: string; after?: string }): EnumLabel[] {
  const out = labels.map((l) => ({ ...l }));
  let at = out.length;
  if (place.before !== undefined || place.after !== undefined) {
    const neighbour = (place.before ?? place.after)!;
    const i = out.findIndex((l) => l.label === neighbour);
    if (i < 0) sqlFail('22023', `"${neighbour}" is not an existing enum label`);
    at = place.before !== undefined ? i : i + 1;
  }
  const prev = out[at - 1];
  const next = out[at];
  const key = keyBetween(prev?.key ?? '', next?.key ?? null);
  let order: number;
  if (next === undefined) order = prev === undefined ? 1 : Math.fround(prev.order + 1);
  else if (prev === undefined) order = Math.fround(next.order - 1);
  else {
    order = Math.fround((prev.order + next.order) / 2);
    if (order === prev.order || order === next.order) {
      out.forEach((l, k) => (l.order = k + 1));
      order = Math.fround((out[at - 1]!.order + out[at]!.order) / 2);
    }
  }
  out.splice(at, 0, { label, key, order });
  return out;
}
