import { TYPE_DISPLAY } from './sql-cast.js';
import { isArrayValue, makeInt, NUMERIC_RANK, sqlFail, jsonbText, type NonNullSqlValue, type SqlTypeName, type SqlValue } from './sql-types.js';

export type ArithOp = '+' | '-' | '*' | '/' | '%';

export function noOperator(op: string, l: SqlTypeName, r: SqlTypeName): never {
  return sqlFail('42883', `operator does not exist: ${TYPE_DISPLAY[l]} ${op} ${TYPE_DISPLAY[r]}`);
}

/**
 * The operand and result types of an arithmetic operator, as PostgreSQL resolves them.
 * @throws SQL_ERROR 42883 no such operator, 42725 not unique (unknown op unknown)
 */
export function resolveArith(op: ArithOp, l: SqlTypeName, r: SqlTypeName): { left: SqlTypeName; right: SqlTypeName; result: SqlTypeName } {
  if (l === 'unknown' && r === 'unknown') sqlFail('42725', `operator is not unique: unknown ${op} unknown`);
  if (l === 'unknown') l = r === 'date' && op === '-' ? 'date' : r;
  if (r === 'unknown') r = l === 'date' ? (op === '-' ? 'date' : 'int4') : l;
  // PostgreSQL has date - date (int), date +/- integer (date), integer + date (date).
  if (l === 'date' && r === 'date' && op === '-') return { left: l, right: r, result: 'int4' };
  if (l === 'date' && (r === 'int4' || r === 'int2') && (op === '+' || op === '-')) return { left: l, right: 'int4', result: 'date' };
  if ((l === 'int4' || l === 'int2') && r === 'date' && op === '+') return { left: 'int4', right: r, result: 'date' };
  const nl = NUMERIC_RANK[l];
  const nr = NUMERIC_RANK[r];
  if (nl === undefined || nr === undefined) return noOperator(op, l, r);
  const t = nl >= nr ? l : r;
  if (op === '%' && t === 'float8') return noOperator(op, l, r);
  return { left: t, right: t, result: t };
}

/** Applies an arithmetic operator to two non-null values already coerced to the resolved types. */
export function applyArith(op: ArithOp, a: NonNullSqlValue, b: NonNullSqlValue, result: SqlTypeName): SqlValue {
  if (result === 'date') {
    if (a.type === 'date' && b.type === 'date') return { type: 'int4', value: a.value - b.value };
    if (a.type === 'date' && b.type === 'int4') return { type: 'date', value: op === '+' ? a.value + b.value : a.value - b.value };
    if (a.type === 'int4' && b.type === 'date') return { type: 'date', value: a.value + b.value };
  }
  if (result === 'int4' && a.type === 'date' && b.type === 'date') return { type: 'int4', value: a.value - b.value };
  if ((a.type === 'int2' || a.type === 'int4' || a.type === 'int8') && a.type === b.type) {
    const x = BigInt(a.value);
    const y = BigInt(b.value);
    if ((op === '/' || op === '%') && y === 0n) sqlFail('22012', 'division by zero');
    const v = op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : op === '/' ? x / y : x % y;
    return makeInt(a.type, v);
  }
  if (a.type === 'numeric' && b.type === 'numeric') {
    const x = a.value;
    const y = b.value;
    return { type: 'numeric', value: op === '+' ? x.add(y) : op === '-' ? x.sub(y) : op === '*' ? x.mul(y) : op === '/' ? x.div(y) : x.mod(y) };
  }
  if (a.type === 'float8' && b.type === 'float8') {
    const x = a.value;
    const y = b.value;
    if (op === '/' && y === 0) sqlFail('22012', 'division by zero');
    const v = op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : x / y;
    // Underflow is a zero result from non-zero operands (PostgreSQL's float8_mul/div checks).
    const underflow = op === '*' ? x !== 0 && y !== 0 : op === '/' ? x !== 0 && Number.isFinite(y) : false;
    return { type: 'float8', value: checkFloat(v, Number.isFinite(x) && Number.isFinite(y), underflow) };
  }
  return noOperator(op, a.type, b.type);
}

/** PostgreSQL's float8 overflow / underflow checks. */
export function checkFloat(v: number, inputsFinite: boolean, zeroIsUnderflow: boolean): number {
  if (!Number.isFinite(v) && !Number.isNaN(v) && inputsFinite) sqlFail('22003', 'value out of range: overflow');
  if (v === 0 && zeroIsUnderflow) sqlFail('22003', 'value out of range: underflow');
  return v;
}

/** Negation with overflow checks. */
export function negate(v: NonNullSqlValue): SqlValue {
  switch (v.type) {
    case 'int2':
    case 'int4':
    case 'int8':
      return makeInt(v.type, -BigInt(v.value));
    case 'numeric':
      return { type: 'numeric', value: v.value.neg() };
    case 'float8':
      return { type: 'float8', value: -v.value };
    default:
      return sqlFail('42883', `operator does not exist: - ${TYPE_DISPLAY[v.type]}`);
  }
}

/** The common type two operands of a comparison are compared in. @throws SQL_ERROR 42883 */
export function resolveComparison(op: string, l: SqlTypeName, r: SqlTypeName): SqlTypeName {
  if (l === 'unknown' && r === 'unknown') return 'text';
  if (l === 'unknown') return r;
  if (r === 'unknown') return l;
  if (l === r) return l;
  const nl = NUMERIC_RANK[l];
  const nr = NUMERIC_RANK[r];
  if (nl !== undefined && nr !== undefined) return nl >= nr ? l : r;
  const times: SqlTypeName[] = ['date', 'timestamp', 'timestamptz'];
  if (times.includes(l) && times.includes(r)) return times.indexOf(l) >= times.indexOf(r) ? l : r;
  return noOperator(op, l, r);
}

/**
 * PostgreSQL's array_cmp for one dimension: element by element, a NULL element equal to another
 * NULL and greater than any value; on a common prefix the shorter array is smaller.
 */
function compareArrays(a: readonly SqlValue[], b: readonly SqlValue[]): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.value === null || y.value === null) {
      if (x.value === null && y.value === null) continue;
      return x.value === null ? 1 : -1;
    }
    const c = compareValues(x as NonNullSqlValue, y as NonNullSqlValue);
    if (c !== 0) return c;
  }
  return a.length - b.length < 0 ? -1 : a.length > b.length ? 1 : 0;
}

/** Total order of two non-null values of the same type (NaN sorts last, arrays element-wise, as PostgreSQL). */
export function compareValues(a: NonNullSqlValue, b: NonNullSqlValue): number {
  if (a.type === 'float8' && b.type === 'float8') {
    if (Number.isNaN(a.value)) return Number.isNaN(b.value) ? 0 : 1;
    if (Number.isNaN(b.value)) return -1;
    return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  }
  if (a.type === 'numeric' && b.type === 'numeric') return a.value.cmp(b.value);
  if ((a.type === 'text' || a.type === 'unknown') && (b.type === 'text' || b.type === 'unknown')) {
    // The C collation: byte order of UTF-8.
    return Buffer.compare(Buffer.from(a.value, 'utf8'), Buffer.from(b.value, 'utf8'));
  }
  if (a.type === 'bytea' && b.type === 'bytea') return Buffer.compare(a.value, b.value);
  if (a.type === 'jsonb' && b.type === 'jsonb') {
    // Only equality is exact here; ordering of jsonb is refused by the caller.
    return jsonbText(a.value.json) === jsonbText(b.value.json) ? 0 : 1;
  }
  if (isArrayValue(a) && isArrayValue(b) && a.type === b.type) return compareArrays(a.value, b.value);
  if (a.type === b.type) {
    const x = a.value as number | bigint | boolean;
    const y = b.value as number | bigint | boolean;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return sqlFail('XX000', `internal: comparing ${a.type} with ${b.type}`);
}

