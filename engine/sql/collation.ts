import { sqlFail, type SqlTypeName } from './sql-types.js';
import type { CompiledExpr } from './compiled-expr.js';

/*
 * Collations, as far as tetradb has them. Text is ordered by code point everywhere, which is
 * PostgreSQL's order under "C", "POSIX" and "ucs_basic" (and under the database default of
 * PGlite, whose default is "C"), so these four are accepted, each a collation of its own as in
 * PostgreSQL's catalog: they differ in what PostgreSQL derives and checks (parse_collate.c), and
 * in case mapping, where "C", "POSIX" and "ucs_basic" map only ASCII letters (lower, upper,
 * initcap, ILIKE, case-insensitive regular expressions) and "default" maps every letter
 * (JavaScript's mappings; see docs/sql.md).
 *
 * Derivation is PostgreSQL's: a COLLATE clause is explicit; a column, a literal, a parameter, a
 * subquery's value are implicit (a column its declared collation, the rest "default"); an
 * operator or function with text operands takes theirs, an explicit one winning over implicit
 * ones and a non-default implicit one over "default"; two different explicit ones are 42P21 at
 * once; two different non-default implicit ones are a conflict, an error only where a collation is
 * needed (a comparison, lower(), ILIKE, a regular expression: 42P22 when it runs; a sort or group
 * key, a set operation: 42P21 at once).
 */

/** The collations tetradb accepts, by their names in PostgreSQL's catalog. */
export type CollationName = 'default' | 'C' | 'POSIX' | 'ucs_basic';

/** A text expression's collation and how it was derived (absent on an expression: "default", implicit). */
export type Collation =
  | { readonly name: CollationName; readonly strength: 'implicit' | 'explicit' }
  /** Two different non-default implicit collations met: no collation, an error where one is needed. */
  | { readonly name: CollationName; readonly strength: 'conflict'; readonly other: CollationName }
  /**
   * A column whose collation PostgreSQL could not determine (a UNION ALL of two conflicting ones,
   * read from a subquery): it takes no part in derivation, and fails where it alone decides.
   */
  | { readonly strength: 'indeterminate' };

const INDETERMINATE: Collation = { strength: 'indeterminate' };

const ACCEPTED: ReadonlySet<string> = new Set<CollationName>(['default', 'C', 'POSIX', 'ucs_basic']);

/**
 * The other collations PostgreSQL (PGlite, PostgreSQL 18) has in its catalog: their order or case
 * mapping is not tetradb's (a locale's, ICU's, or Unicode case mapping under code point order), so
 * they are refused as unsupported rather than as unknown.
 */
const REFUSED: ReadonlySet<string> = new Set(['en_US', 'en_US.utf8', 'C.utf8', 'unicode', 'und-x-icu', 'pg_c_utf8', 'pg_unicode_fast']);

/** Schemas PostgreSQL has: a collation qualified with another is 3F000. */
const SCHEMAS: ReadonlySet<string> = new Set(['pg_catalog', 'public', 'information_schema', 'pg_toast']);

/** One part of a collation's (qualified) name, as written. */
export interface NamePart {
  readonly value: string;
  readonly quoted: boolean;
}

/**
 * The collation a COLLATE clause names (`"C"`, `ucs_basic`, `pg_catalog."POSIX"`): unquoted parts
 * fold to lower case, so `COLLATE C` names "c", which does not exist, as in PostgreSQL.
 * @throws SQL_ERROR 42704 unknown collation, 0A000 one PostgreSQL has and tetradb does not, 3F000 unknown schema, 0A000 / 42601 too many dotted names
 */
export function resolveCollation(parts: readonly NamePart[]): CollationName {
  const names = parts.map((p) => (p.quoted ? p.value : p.value.toLowerCase()));
  const written = names.join('.');
  if (names.length > 3) sqlFail('42601', `improper qualified name (too many dotted names): ${written}`);
  if (names.length === 3) sqlFail('0A000', `cross-database references are not implemented: ${written}`);
  const [schema, name] = names.length === 2 ? [names[0]!, names[1]!] : [undefined, names[0]!];
  if (schema !== undefined && !SCHEMAS.has(schema)) sqlFail('3F000', `schema "${schema}" does not exist`);
  // Every collation lives in pg_catalog.
  if (schema === undefined || schema === 'pg_catalog') {
    if (ACCEPTED.has(name)) return name as CollationName;
    if (REFUSED.has(name)) sqlFail('0A000', `unsupported: collation "${name}" (text is ordered by code point: "C", "POSIX", "ucs_basic" and "default" are supported)`);
  }
  return sqlFail('42704', `collation "${written}" for encoding "UTF8" does not exist`);
}

/**
 * The name of a COLLATE clause as node-sql-parser reads it (after a column reference, in a
 * column definition or an index element): `{ collate: { name } }`, the name one identifier node
 * or a list of them (`pg_catalog."C"`).
 */
export function clauseNameParts(clause: unknown): NamePart[] {
  const name = (clause as { collate?: { name?: unknown } } | null)?.collate?.name;
  const list = (Array.isArray(name) ? name : [name]) as { type?: unknown; value?: unknown }[];
  return list.map((p) => ({ value: String(p?.value ?? ''), quoted: p?.type === 'double_quote_string' }));
}

/**
 * The name of a COLLATE marker call (sql-grammar-gaps.ts): the COLLATION_NAME node made after
 * parsing (`{ parts }`), or the column reference the parser read the pre-pass's name as (`"C"`,
 * `pg_catalog."C"`) where nothing made it one.
 */
export function markerNameParts(node: unknown): NamePart[] {
  const n = node as { parts?: NamePart[]; table?: unknown; column?: unknown };
  if (Array.isArray(n.parts)) return n.parts;
  const col = n.column as string | { expr?: { type?: unknown; value?: unknown } } | undefined;
  const last: NamePart = typeof col === 'string' ? { value: col, quoted: false } : { value: String(col?.expr?.value ?? ''), quoted: col?.expr?.type === 'double_quote_string' };
  const table = n.table as string | { value?: unknown } | null | undefined;
  if (table === null || table === undefined) return [last];
  return [{ value: typeof table === 'string' ? table : String(table.value ?? ''), quoted: false }, last];
}

/**
 * A column's collation from its definition's COLLATE clause, checked as PostgreSQL's
 * GetColumnDefCollation does (the name first, then the type); undefined for "default".
 * @throws SQL_ERROR what resolveCollation throws, 42804 a type without collations
 */
export function definedCollation(clause: unknown, type: SqlTypeName, display: string): CollationName | undefined {
  if (clause === null || clause === undefined) return undefined;
  const name = resolveCollation(clauseNameParts(clause));
  if (!isCollatable(type)) sqlFail('42804', `collations are not supported by type ${display}`);
  return name === 'default' ? undefined : name;
}

/** Whether values of the type have a collation (text, character(n), their arrays, untyped literals). */
export function isCollatable(type: SqlTypeName): boolean {
  return type === 'text' || type === 'bpchar' || type === 'unknown' || type === 'text[]' || type === 'bpchar[]';
}

/** Whether a collation maps only ASCII letters between cases (PostgreSQL's C ctype). */
export function asciiCaseOnly(c: Collation | undefined): boolean {
  return c !== undefined && (c.strength === 'implicit' || c.strength === 'explicit') && c.name !== 'default';
}

const DEFAULT: Collation = { name: 'default', strength: 'implicit' };

/**
 * The collation of an operator or function over `inputs` (their collations; undefined for an
 * input that is text of the default collation or not text at all, see `types`), as PostgreSQL's
 * merge_collation_state derives it. Undefined when it is "default", implicit.
 * @throws SQL_ERROR 42P21 two different explicit collations
 */
export function mergeCollations(inputs: readonly { type: SqlTypeName; collation?: Collation }[]): Collation | undefined {
  let acc: Collation | undefined;
  let indeterminate = false;
  for (const input of inputs) {
    if (!isCollatable(input.type)) continue;
    const c = input.collation ?? DEFAULT;
    if (c.strength === 'indeterminate') {
      indeterminate = true;
      continue;
    }
    acc = acc === undefined ? c : merge(acc, c);
  }
  if (acc === undefined) return indeterminate ? INDETERMINATE : undefined;
  return acc.strength === 'implicit' && acc.name === 'default' ? undefined : acc;
}

/** Strengths in PostgreSQL's order (CollateStrength): a stronger one overrides, equal ones merge. */
const RANK = { indeterminate: 0, implicit: 1, conflict: 2, explicit: 3 } as const;

function merge(acc: Collation, c: Collation): Collation {
  if (acc.strength === 'indeterminate' || c.strength === 'indeterminate') return acc.strength === 'indeterminate' ? c : acc;
  if (RANK[c.strength] !== RANK[acc.strength]) return RANK[c.strength] > RANK[acc.strength] ? c : acc;
  switch (c.strength) {
    case 'explicit':
      if (c.name !== acc.name) sqlFail('42P21', `collation mismatch between explicit collations "${acc.name}" and "${c.name}"`);
      return acc;
    case 'conflict':
      return acc;
    case 'implicit':
      if (acc.strength !== 'implicit') return acc;
      // A non-default implicit collation wins over "default"; two different non-default ones conflict.
      if (c.name === acc.name || c.name === 'default') return acc;
      if (acc.name === 'default') return c;
      return { name: acc.name, strength: 'conflict', other: c.name };
    default:
      return c satisfies never;
  }
}

/**
 * A collation needed by what runs (a comparison, lower()): the name, or the error PostgreSQL
 * raises when it runs on a conflict (42P22, naming `what`).
 */
export function neededCollation(c: Collation | undefined, what: string): () => void {
  if (c?.strength !== 'conflict' && c?.strength !== 'indeterminate') return () => undefined;
  return () => sqlFail('42P22', `could not determine which collation to use for ${what}`);
}

/**
 * `e`, failing where it runs on a non-null value when `c` is a conflict or indeterminate
 * (neededCollation's 42P22 naming `what`); `e` itself otherwise. A null needs no collation.
 */
export function collationChecked(e: CompiledExpr, c: Collation | undefined, what: string): CompiledExpr {
  if (c?.strength !== 'conflict' && c?.strength !== 'indeterminate') return e;
  const needed = neededCollation(c, what);
  return {
    type: e.type,
    evaluate(ctx) {
      const v = e.evaluate(ctx);
      if (v.value !== null) needed();
      return v;
    },
  };
}

/**
 * A sort or group key, or a set operation's column: PostgreSQL refuses a conflict of implicit
 * collations there at once (42P21), and an indeterminate one (42P22 naming `what`: "string
 * comparison" for a sort, "string hashing" for a grouping) when the statement runs.
 * @throws SQL_ERROR 42P21, 42P22
 */
export function checkKeyCollation(c: Collation | undefined, what = 'string comparison'): void {
  if (c?.strength === 'conflict') sqlFail('42P21', `collation mismatch between implicit collations "${c.name}" and "${c.other}"`);
  if (c?.strength === 'indeterminate') sqlFail('42P22', `could not determine which collation to use for ${what}`);
}

/** The collation a column's values carry when a query reads them (implicit). */
export function columnCollation(name: CollationName | undefined): Collation | undefined {
  return name === undefined || name === 'default' ? undefined : { name, strength: 'implicit' };
}

/** ASCII-only lower case (PostgreSQL's asc_tolower). */
export function asciiLower(s: string): string {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** ASCII-only upper case (PostgreSQL's asc_toupper). */
export function asciiUpper(s: string): string {
  return s.replace(/[a-z]+/g, (m) => m.toUpperCase());
}
