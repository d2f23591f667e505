// Value rendering for sqllogictest results, defined once for every target.
//
// A target hands back JS values in the shape of tetradb's HTTP contract (POST /api/sql/query
// with rowMode "array"): numbers, strings, booleans, null, and objects/arrays for json/jsonb.
// int8 outside the safe integer range and numeric arrive as strings, dates and timestamps as
// PostgreSQL's text forms, float NaN/Infinity as the strings PostgreSQL prints. This file turns
// such a value plus the column's reported type into the text PostgreSQL itself would print, so
// a .slt file holds PostgreSQL's output and both targets are compared against it alike.
//
// Subtleties:
// - float4/float8 numbers are printed as PostgreSQL does (shortest round-trip digits, fixed
//   notation for decimal exponents -4..14 (float8) or -4..5 (float4), else `1e+15`, `1.5e-05`).
//   JS's String() would print `1000000000000000` and `1e-7` instead.
// - json and jsonb are both printed in jsonb's text form: keys ordered as jsonb orders them
//   (shorter first, then bytewise), `": "` and `", "` separators. A json (not jsonb) column
//   therefore loses PostgreSQL's verbatim input text; JSON numbers lose trailing zeros
//   (`1.50` prints `1.5`), because a JSON response cannot carry them.
// - Arrays (typname `_int4`, or `int4[]`) are printed in PostgreSQL's array literal form `{1,2}`.
// - Strings are printed verbatim, except that the empty string prints `(empty)` and a tab,
//   newline, carriage return or other control character is escaped (`\t`, `\n`, `\r`, `\u0001`)
//   so one row stays one line. NULL prints `NULL` (so a text 'NULL' is ambiguous).

/** The type names we know, under PostgreSQL's internal spelling (pg_type.typname). */
const TYPE_ALIASES: Record<string, string> = {
  integer: 'int4',
  int: 'int4',
  bigint: 'int8',
  smallint: 'int2',
  real: 'float4',
  float: 'float8',
  'double precision': 'float8',
  boolean: 'bool',
  decimal: 'numeric',
  'character varying': 'varchar',
  character: 'bpchar',
  char: 'bpchar',
  'timestamp without time zone': 'timestamp',
  'timestamp with time zone': 'timestamptz',
  'time without time zone': 'time',
  'time with time zone': 'timetz',
};

/** A reported column type in PostgreSQL's typname spelling: `INTEGER` -> int4, `varchar(10)` -> varchar, `int4[]` -> _int4. */
export function canonicalTypeName(type: string): string {
  let t = type.trim().toLowerCase().replace(/\s+/g, ' ');
  let array = false;
  if (t.endsWith('[]')) {
    array = true;
    t = t.slice(0, -2).trim();
  }
  t = t.replace(/\s*\([^)]*\)/, '');
  t = TYPE_ALIASES[t] ?? t;
  return array ? `_${t}` : t;
}

/** The sqllogictest type letter a reported type must be declared with, or undefined when we do not check it. */
export function typeLetter(type: string): string | undefined {
  const t = canonicalTypeName(type);
  if (t.startsWith('_')) return 'T';
  switch (t) {
    case 'int2':
    case 'int4':
    case 'int8':
      return 'I';
    case 'float4':
    case 'float8':
    case 'numeric':
      return 'R';
    case 'text':
    case 'varchar':
    case 'bpchar':
    case 'name':
    case 'unknown':
    case 'bytea':
    case 'uuid':
      return 'T';
    case 'bool':
      return 'B';
    case 'date':
    case 'time':
    case 'timetz':
    case 'timestamp':
    case 'timestamptz':
    case 'interval':
      return 'D';
    case 'json':
    case 'jsonb':
      return 'J';
    default:
      return undefined;
  }
}

/** Renders one result value as PostgreSQL's text output (see the file comment for the rules). */
export function renderValue(value: unknown, type: string): string {
  if (value === null || value === undefined) return 'NULL';
  const t = canonicalTypeName(type);
  if (t === 'json' || t === 'jsonb') return escapeControl(jsonbText(value));
  if (Array.isArray(value)) return escapeControl(arrayText(value, t.startsWith('_') ? t.slice(1) : 'unknown'));
  return scalarText(value, t);
}

function scalarText(value: unknown, t: string): string {
  switch (typeof value) {
    case 'boolean':
      return value ? 't' : 'f';
    case 'number':
      if (t === 'float4') return floatText(value, 'float4');
      if (t === 'float8' || !Number.isInteger(value)) return floatText(value, 'float8');
      return String(value);
    case 'bigint':
      return String(value);
    case 'string':
      return value === '' ? '(empty)' : escapeControl(value);
    case 'object':
      return escapeControl(jsonbText(value));
    default:
      return escapeControl(String(value));
  }
}

function escapeControl(text: string): string {
  return text.replace(/[\u0000-\u001f]/g, (c) => (c === '\t' ? '\\t' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/** PostgreSQL's float4out/float8out with the default extra_float_digits = 1 (shortest exact output). */
export function floatText(value: number, kind: 'float4' | 'float8'): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const sign = value < 0 ? '-' : '';
  const { digits, exponent } = shortestDigits(Math.abs(value), kind);
  // Thresholds as in PostgreSQL's ryu d2s.c / f2s.c: fixed notation like printf's %g would choose.
  const fixedBelow = kind === 'float8' ? 15 : 6;
  if (exponent >= -4 && exponent < fixedBelow) {
    if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
    const whole = digits.slice(0, exponent + 1).padEnd(exponent + 1, '0');
    const fraction = digits.slice(exponent + 1);
    return fraction === '' ? `${sign}${whole}` : `${sign}${whole}.${fraction}`;
  }
  const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${mantissa}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

/** The shortest decimal digits that read back as the same float4/float8, and the decimal exponent of the first. */
function shortestDigits(value: number, kind: 'float4' | 'float8'): { digits: string; exponent: number } {
  let shortest = value;
  if (kind === 'float4') {
    const single = Math.fround(value);
    for (let precision = 1; precision <= 9; precision++) {
      const candidate = Number(single.toPrecision(precision));
      if (Math.fround(candidate) === single) {
        shortest = candidate;
        break;
      }
    }
  }
  // toExponential() without an argument prints as many digits as needed to identify the double.
  const match = /^(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(shortest.toExponential());
  if (match === null) throw new Error(`cannot format float ${value}`);
  return { digits: (match[1]! + (match[2] ?? '')).replace(/0+$/, '') || '0', exponent: Number(match[3]) };
}

/** A JSON number as jsonb prints it (numeric text: never exponent notation). */
function jsonNumberText(value: number): string {
  if (!Number.isFinite(value)) throw new Error(`JSON cannot hold ${value}`);
  const plain = String(value);
  if (!plain.includes('e')) return plain;
  const sign = value < 0 ? '-' : '';
  const { digits, exponent } = shortestDigits(Math.abs(value), 'float8');
  if (exponent < 0) return `${sign}0.${'0'.repeat(-exponent - 1)}${digits}`;
  return `${sign}${digits.padEnd(exponent + 1, '0')}`;
}

const utf8 = new TextEncoder();

/** jsonb's key order: shorter keys (in UTF-8 bytes) first, equal lengths bytewise. */
function compareJsonbKeys(a: string, b: string): number {
  const x = utf8.encode(a);
  const y = utf8.encode(b);
  if (x.length !== y.length) return x.length - y.length;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return 0;
}

/** jsonb's text output of a parsed JSON value: `{"a": 1, "b": [1, 2]}`. */
export function jsonbText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'boolean':
      return String(value);
    case 'number':
      return jsonNumberText(value);
    case 'bigint':
      return String(value);
    case 'string':
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) return `[${value.map(jsonbText).join(', ')}]`;
      const record = value as Record<string, unknown>;
      const keys = Object.keys(record).sort(compareJsonbKeys);
      return `{${keys.map((k) => `${JSON.stringify(k)}: ${jsonbText(record[k])}`).join(', ')}}`;
    }
    default:
      throw new Error(`not a JSON value: ${String(value)}`);
  }
}

/** PostgreSQL's array literal output: `{1,2,NULL}`, `{"a b",c}`, `{{1,2},{3,4}}`. */
function arrayText(values: unknown[], elementType: string): string {
  const items = values.map((v) => {
    if (v === null || v === undefined) return 'NULL';
    if (Array.isArray(v)) return arrayText(v, elementType);
    const text = elementType === 'json' || elementType === 'jsonb' ? jsonbText(v) : scalarText(v, elementType);
    const raw = typeof v === 'string' ? v : text;
    const needsQuotes = raw === '' || /^null$/i.test(raw) || /[{}",\\\s]/.test(raw);
    return needsQuotes ? `"${raw.replace(/["\\]/g, (c) => `\\${c}`)}"` : raw;
  });
  return `{${items.join(',')}}`;
}
