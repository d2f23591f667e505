import { compareCodePoints, toWellFormedText } from '../text-order.js';
import { roundHalfEven, typeDisplay } from './sql-cast.js';
import { bpcharTrim, isArrayValue, makeInt, NUMERIC_RANK, sqlFail, jsonbText, type Interval, type NonNullSqlValue, type SqlTypeName, type SqlValue, type TimeTz } from './sql-types.js';
import { addDays, addInterval, checkTimestamp, DAYS_PER_MONTH, MICROS_PER_DAY, negateInterval } from './functions/calendar.js';

export type ArithOp = '+' | '-' | '*' | '/' | '%';

/** PostgreSQL's 42883 for a prefix operator over `t`, with its HINT. */
export function noPrefixOperator(op: string, t: SqlTypeName): never {
  return sqlFail('42883', `operator does not exist: ${op} ${typeDisplay(t)}`, undefined, 'No operator matches the given name and argument type. You might need to add an explicit type cast.');
}

export function noOperator(op: string, l: SqlTypeName, r: SqlTypeName): never {
  return sqlFail('42883', `operator does not exist: ${typeDisplay(l)} ${op} ${typeDisplay(r)}`, undefined, 'No operator matches the given name and argument types. You might need to add explicit type casts.');
}

/**
 * The operand and result types of an arithmetic operator, as PostgreSQL resolves them.
 * @throws SQL_ERROR 42883 no such operator, 42725 not unique (unknown op unknown)
 */
export function resolveArith(op: ArithOp, l: SqlTypeName, r: SqlTypeName): { left: SqlTypeName; right: SqlTypeName; result: SqlTypeName } {
  if (l === 'unknown' && r === 'unknown') sqlFail('42725', `operator is not unique: unknown ${op} unknown`);
  if (l === 'unknown') l = r === 'date' && op === '-' ? 'date' : r;
  if (r === 'unknown') r = unknownRightOperand(op, l);
  const time = resolveTimeArith(op, l, r);
  if (time !== null) return time;
  const interval = resolveIntervalArith(op, l, r);
  if (interval !== null) return interval;
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

/** The type an unknown right operand takes (PostgreSQL picks the only candidate operator). */
function unknownRightOperand(op: ArithOp, l: SqlTypeName): SqlTypeName {
  if (l === 'date') return op === '-' ? 'date' : 'int4';
  if ((l === 'timestamp' || l === 'timestamptz' || l === 'time' || l === 'timetz') && op === '+') return 'interval';
  if (l === 'timetz' && op === '-') return 'interval';
  if (l === 'interval' && (op === '*' || op === '/')) return 'float8';
  return l;
}

/**
 * The operators of the time-of-day types, as PostgreSQL's catalogue has them: time +/- interval
 * (time), time - time (interval), timetz +/- interval (timetz), date + time / time + date / date -
 * time (timestamp), date + timetz / timetz + date (timestamptz). Otherwise a time converts to an
 * interval, its implicit cast (`time * 2` is an interval); null when no time is involved.
 * @throws SQL_ERROR 42883 no such operator, 42725 time + time (two candidates, as PostgreSQL)
 */
function resolveTimeArith(op: ArithOp, l: SqlTypeName, r: SqlTypeName): { left: SqlTypeName; right: SqlTypeName; result: SqlTypeName } | null {
  const isTime = (t: SqlTypeName): boolean => t === 'time' || t === 'timetz';
  if (!isTime(l) && !isTime(r)) return null;
  const same = { left: l, right: r };
  if (isTime(l) && r === 'interval' && (op === '+' || op === '-')) return { ...same, result: l };
  if (l === 'interval' && isTime(r) && op === '+') return { ...same, result: r };
  if (l === 'time' && r === 'time' && op === '-') return { ...same, result: 'interval' };
  if (l === 'time' && r === 'time' && op === '+') sqlFail('42725', 'operator is not unique: time without time zone + time without time zone', undefined, 'Could not choose a best candidate operator. You might need to add explicit type casts.');
  if (l === 'date' && isTime(r) && (op === '+' || (op === '-' && r === 'time'))) return { ...same, result: r === 'time' ? 'timestamp' : 'timestamptz' };
  if (isTime(l) && r === 'date' && op === '+') return { ...same, result: l === 'time' ? 'timestamp' : 'timestamptz' };
  // A time is an interval otherwise (time -> interval is implicit; timetz has no such cast).
  if (l === 'time' && NUMERIC_RANK[r] !== undefined && (op === '*' || op === '/')) return { left: 'interval', right: 'float8', result: 'interval' };
  if (r === 'time' && NUMERIC_RANK[l] !== undefined && op === '*') return { left: 'float8', right: 'interval', result: 'interval' };
  return noOperator(op, l, r);
}

const TIMESTAMPS: readonly SqlTypeName[] = ['date', 'timestamp', 'timestamptz'];

/** Date/time and interval arithmetic, as PostgreSQL's operator catalogue has it; null when not. */
function resolveIntervalArith(op: ArithOp, l: SqlTypeName, r: SqlTypeName): { left: SqlTypeName; right: SqlTypeName; result: SqlTypeName } | null {
  const lt = TIMESTAMPS.indexOf(l);
  const rt = TIMESTAMPS.indexOf(r);
  // date - date is integer (handled by the caller); any other time - time is an interval.
  if (lt >= 0 && rt >= 0 && op === '-' && !(l === 'date' && r === 'date')) {
    const t = TIMESTAMPS[Math.max(lt, rt, 1)]!;
    return { left: t, right: t, result: 'interval' };
  }
  // A date plus an interval is a timestamp (without time zone).
  const asTs = (t: SqlTypeName): SqlTypeName => (t === 'date' ? 'timestamp' : t);
  if (lt >= 0 && r === 'interval' && (op === '+' || op === '-')) return { left: asTs(l), right: r, result: asTs(l) };
  if (l === 'interval' && rt >= 0 && op === '+') return { left: l, right: asTs(r), result: asTs(r) };
  if (l === 'interval' && r === 'interval' && (op === '+' || op === '-')) return { left: l, right: r, result: 'interval' };
  if (l === 'interval' && NUMERIC_RANK[r] !== undefined && (op === '*' || op === '/')) return { left: l, right: 'float8', result: 'interval' };
  if (NUMERIC_RANK[l] !== undefined && r === 'interval' && op === '*') return { left: 'float8', right: r, result: 'interval' };
  if (l === 'interval' || r === 'interval') return noOperator(op, l, r);
  return null;
}

/** An interval's span with 30-day months, as PostgreSQL compares intervals. */
export function intervalSpan(iv: Interval): bigint {
  return (BigInt(iv.months) * BigInt(DAYS_PER_MONTH) + BigInt(iv.days)) * MICROS_PER_DAY + iv.micros;
}

function checkInterval(months: number, days: number, micros: bigint): SqlValue {
  if (!Number.isFinite(months) || !Number.isFinite(days) || Math.abs(months) > 2147483647 || Math.abs(days) > 2147483647) {
    sqlFail('22008', 'interval out of range');
  }
  return { type: 'interval', value: { months: months + 0, days: days + 0, micros } };
}

/**
 * interval * factor and interval / factor as PostgreSQL's interval_mul / interval_div: each
 * field is scaled and truncated, and the fractions cascade down (a fraction of a month becomes
 * 30-day days, of a day 24-hour time), rounded to microseconds (TSROUND) on the way.
 */
function intervalScale(iv: Interval, factor: number, divide: boolean): SqlValue {
  if (Number.isNaN(factor)) sqlFail('22008', 'interval out of range');
  const scale = (x: number): number => (divide ? x / factor : x * factor);
  const tsround = (x: number): number => roundHalfEven(x * 1e6) / 1e6;
  const months = Math.trunc(scale(iv.months));
  let days = Math.trunc(scale(iv.days));
  const monthRemainderDays = tsround((scale(iv.months) - months) * DAYS_PER_MONTH);
  let secRemainder = tsround((scale(iv.days) - days + monthRemainderDays - Math.trunc(monthRemainderDays)) * 86400);
  if (Math.abs(secRemainder) >= 86400) {
    days += Math.trunc(secRemainder / 86400);
    secRemainder -= Math.trunc(secRemainder / 86400) * 86400;
  }
  days += Math.trunc(monthRemainderDays);
  const micros = roundHalfEven(scale(Number(iv.micros)) + secRemainder * 1e6);
  if (!Number.isFinite(micros)) sqlFail('22008', 'interval out of range');
  return checkInterval(months, days, BigInt(micros));
}

function intervalArith(op: ArithOp, a: NonNullSqlValue, b: NonNullSqlValue, result: SqlTypeName): SqlValue | null {
  const isTs = (v: NonNullSqlValue): v is { type: 'timestamp' | 'timestamptz'; value: bigint } => v.type === 'timestamp' || v.type === 'timestamptz';
  if (isTs(a) && isTs(b) && op === '-') {
    // timestamp_mi: the difference justified into days and time (never months).
    const diff = a.value - b.value;
    return checkInterval(0, Number(diff / MICROS_PER_DAY), diff % MICROS_PER_DAY);
  }
  if (isTs(a) && b.type === 'interval') {
    return { type: a.type, value: addInterval(a.value, op === '-' ? negateInterval(b.value) : b.value) };
  }
  if (a.type === 'interval' && isTs(b)) return { type: b.type, value: addInterval(b.value, a.value) };
  if (a.type === 'interval' && b.type === 'interval') {
    const s = op === '-' ? negateInterval(b.value) : b.value;
    return checkInterval(a.value.months + s.months, a.value.days + s.days, a.value.micros + s.micros);
  }
  if (a.type === 'interval' && b.type === 'float8') {
    if (op === '/' && b.value === 0) sqlFail('22012', 'division by zero');
    return intervalScale(a.value, b.value, op === '/');
  }
  if (a.type === 'float8' && b.type === 'interval') return intervalScale(b.value, a.value, false);
  if (result === 'interval') return noOperator(op, a.type, b.type);
  return null;
}

/** time_pl_interval: the interval's time part only, wrapped into a day (24:00:00 + 0 is 00:00:00, as PostgreSQL). */
function timePlus(time: bigint, micros: bigint): bigint {
  let t = (time + micros) % MICROS_PER_DAY;
  if (t < 0n) t += MICROS_PER_DAY;
  return t;
}

/** The time-of-day operators (resolveTimeArith); null for other operands. @throws SQL_ERROR 22008 timestamp out of range */
function timeArith(op: ArithOp, a: NonNullSqlValue, b: NonNullSqlValue): SqlValue | null {
  const sign = op === '-' ? -1n : 1n;
  if (a.type === 'time' && b.type === 'interval') return { type: 'time', value: timePlus(a.value, sign * b.value.micros) };
  if (a.type === 'interval' && b.type === 'time') return { type: 'time', value: timePlus(b.value, a.value.micros) };
  if (a.type === 'timetz' && b.type === 'interval') return { type: 'timetz', value: { time: timePlus(a.value.time, sign * b.value.micros), zone: a.value.zone } };
  if (a.type === 'interval' && b.type === 'timetz') return { type: 'timetz', value: { time: timePlus(b.value.time, a.value.micros), zone: b.value.zone } };
  if (a.type === 'time' && b.type === 'time') return { type: 'interval', value: { months: 0, days: 0, micros: a.value - b.value } };
  const date = a.type === 'date' ? a : b.type === 'date' ? b : undefined;
  const time = a.type === 'time' || a.type === 'timetz' ? a : b.type === 'time' || b.type === 'timetz' ? b : undefined;
  if (date !== undefined && time !== undefined) {
    const day = BigInt(date.value as number) * MICROS_PER_DAY;
    if (time.type === 'time') return { type: 'timestamp', value: checkTimestamp(op === '-' ? day - time.value : day + time.value) };
    const tz = time.value as TimeTz;
    return { type: 'timestamptz', value: checkTimestamp(day + tz.time + BigInt(tz.zone) * 1_000_000n) };
  }
  return null;
}

/** Applies an arithmetic operator to two non-null values already coerced to the resolved types. */
export function applyArith(op: ArithOp, a: NonNullSqlValue, b: NonNullSqlValue, result: SqlTypeName): SqlValue {
  if (result === 'time' || result === 'timetz' || ((result === 'timestamp' || result === 'timestamptz' || result === 'interval') && (a.type === 'time' || a.type === 'timetz' || b.type === 'time' || b.type === 'timetz'))) {
    const t = timeArith(op, a, b);
    if (t !== null) return t;
  }
  if (result === 'interval' || result === 'timestamp' || result === 'timestamptz') {
    const r = intervalArith(op, a, b, result);
    if (r !== null) return r;
  }
  if (result === 'date') {
    if (a.type === 'date' && b.type === 'date') return { type: 'int4', value: a.value - b.value };
    if (a.type === 'date' && b.type === 'int4') return { type: 'date', value: addDays(a.value, op === '+' ? b.value : -b.value) };
    if (a.type === 'int4' && b.type === 'date') return { type: 'date', value: addDays(b.value, a.value) };
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
    case 'interval':
      return { type: 'interval', value: negateInterval(v.value) };
    case 'time':
      // Through its implicit cast to interval, as PostgreSQL finds no other - for it.
      return { type: 'interval', value: negateInterval({ months: 0, days: 0, micros: v.value }) };
    default:
      return noPrefixOperator('-', v.type);
  }
}

/** The common type two operands of a comparison are compared in. @throws SQL_ERROR 42883 */
export function resolveComparison(op: string, l: SqlTypeName, r: SqlTypeName): SqlTypeName {
  if (l === 'unknown' && r === 'unknown') return 'text';
  if (l === 'unknown') return r;
  if (r === 'unknown') return l;
  if (l === r) return l;
  // bpchar beside text compares as text (PostgreSQL prefers text=text: the bpchar loses its padding).
  if ((l === 'bpchar' && r === 'text') || (l === 'text' && r === 'bpchar')) return 'text';
  if ((l === 'bit' && r === 'varbit') || (l === 'varbit' && r === 'bit')) return 'varbit';
  const nl = NUMERIC_RANK[l];
  const nr = NUMERIC_RANK[r];
  if (nl !== undefined && nr !== undefined) return nl >= nr ? l : r;
  const times: SqlTypeName[] = ['date', 'timestamp', 'timestamptz'];
  if (times.includes(l) && times.includes(r)) return times.indexOf(l) >= times.indexOf(r) ? l : r;
  // time converts to timetz (in the session's zone, UTC) and to interval implicitly.
  if ((l === 'time' && r === 'timetz') || (l === 'timetz' && r === 'time')) return 'timetz';
  if ((l === 'time' && r === 'interval') || (l === 'interval' && r === 'time')) return 'interval';
  // Arrays of two element types have no operator (int4[] = int8[] is 42883, as in PostgreSQL).
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

/** timetz_cmp: by the UTC time (time + zone, not wrapped into a day), then by zone (seconds west, ascending). */
export function compareTimetz(a: TimeTz, b: TimeTz): number {
  const x = a.time + BigInt(a.zone) * 1_000_000n;
  const y = b.time + BigInt(b.zone) * 1_000_000n;
  if (x !== y) return x < y ? -1 : 1;
  return a.zone < b.zone ? -1 : a.zone > b.zone ? 1 : 0;
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
    // The C collation: byte order of UTF-8, which is code point order once a lone surrogate is the U+FFFD it encodes as.
    return compareCodePoints(toWellFormedText(a.value), toWellFormedText(b.value));
  }
  if (a.type === 'bytea' && b.type === 'bytea') return Buffer.compare(a.value, b.value);
  if ((a.type === 'bit' || a.type === 'varbit') && (b.type === 'bit' || b.type === 'varbit')) {
    // bitcmp: bit by bit from the left, a prefix first; the string order of 0s and 1s.
    return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  }
  if (a.type === 'bpchar' && b.type === 'bpchar') {
    // bpcharcmp: trailing spaces are insignificant ('a' = 'a  '), the rest in the C collation.
    return Buffer.compare(Buffer.from(bpcharTrim(a.value), 'utf8'), Buffer.from(bpcharTrim(b.value), 'utf8'));
  }
  if (a.type === 'interval' && b.type === 'interval') {
    const x = intervalSpan(a.value);
    const y = intervalSpan(b.value);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.type === 'jsonb' && b.type === 'jsonb') {
    // Only equality is exact here; ordering of jsonb is refused by the caller.
    return jsonbText(a.value.json) === jsonbText(b.value.json) ? 0 : 1;
  }
  if (isArrayValue(a) && isArrayValue(b) && a.type === b.type) return compareArrays(a.value, b.value);
  if (a.type === 'timetz' && b.type === 'timetz') return compareTimetz(a.value, b.value);
  if (a.type === b.type) {
    const x = a.value as number | bigint | boolean;
    const y = b.value as number | bigint | boolean;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return sqlFail('XX000', `internal: comparing ${a.type} with ${b.type}`);
}

