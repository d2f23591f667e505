// Shared by the aggregate and window differential tests: PostgreSQL's type names by OID, and
// tetradb values rendered as PostgreSQL's text output.
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll } from 'vitest';
import { toText, type NonNullSqlValue, type SqlTypeName, type SqlValue } from '../../engine/sql/index.js';

/** An in-process PostgreSQL for the test file: opened (and warmed) before its tests, closed after. */
export function usePglite(opened: (db: PGlite) => void): void {
  let db: PGlite | undefined;
  beforeAll(async () => {
    db = new PGlite();
    await db.query('SELECT 1');
    opened(db);
  }, 60_000);
  afterAll(async () => {
    await db?.close();
  });
}

export const PG_TYPE_NAMES: Record<number, string> = {
  16: 'boolean',
  17: 'bytea',
  20: 'int8',
  21: 'int2',
  23: 'int4',
  25: 'text',
  701: 'float8',
  1082: 'date',
  1114: 'timestamp',
  1184: 'timestamptz',
  1700: 'numeric',
  3802: 'jsonb',
  1000: 'boolean[]',
  1001: 'bytea[]',
  1005: 'int2[]',
  1007: 'int4[]',
  1009: 'text[]',
  1016: 'int8[]',
  1022: 'float8[]',
  1182: 'date[]',
  1115: 'timestamp[]',
  1231: 'numeric[]',
};

/** PGlite query options that keep every value as PostgreSQL's text output. */
export const RAW_TEXT = { rowMode: 'array' as const, parsers: Object.fromEntries(Object.keys(PG_TYPE_NAMES).map((oid) => [Number(oid), (x: string) => x])) };

/** A value as PostgreSQL's output function prints it (booleans t/f), NULL as null. */
export function pgText(v: SqlValue): string | null {
  if (v.value === null) return null;
  const nn = v as NonNullSqlValue;
  return nn.type === 'boolean' ? (nn.value ? 't' : 'f') : toText(nn);
}

/** A SQL literal of a value, typed, for VALUES lists. */
export function sqlLiteral(v: SqlValue, type: SqlTypeName): string {
  const t = type === 'float8' ? 'float8' : type;
  if (v.value === null) return `NULL::${t}`;
  return `'${String(pgText(v)).replace(/'/g, "''")}'::${t}`;
}

/**
 * A JS number as PostgreSQL 15 prints a float8 (extra_float_digits = 1: the shortest text that
 * reads back the same). Both use shortest round-trip digits; they differ only in layout:
 * PostgreSQL switches to exponent form when the decimal exponent is < -4 or >= 15 and writes the
 * exponent with a sign and at least two digits (1e+15, 1e-05). This is the one normalisation of
 * values: the digits themselves are compared as they are.
 */
export function pgFloat8(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mant, expText] = x.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  if (exp < -4 || exp >= 15) return `${mant}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
  return String(x);
}

/** A tetradb result value (JSON form, or rowMode 'array') as PostgreSQL's text output for a column of `type`. */
export function renderOurs(v: unknown, type: string): string | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v === 'number') return type === 'float8' || type === 'float4' ? pgFloat8(v) : String(v);
  if (typeof v === 'string' || typeof v === 'bigint') return String(v);
  return JSON.stringify(v);
}
