import { describe, expect, it } from 'vitest';
import { Decimal } from '../../engine/sql/decimal.js';
import { compareValues } from '../../engine/sql/operators.js';
import { decodeRow, encodeKeyTuple, encodeRow } from '../../engine/sql/store/sql-codec.js';
import type { NonNullSqlValue, SqlTypeName, SqlValue } from '../../engine/sql/sql-types.js';
import { randomInt, seededRandom } from '../helpers/random.js';

const rand = seededRandom(7);

/** Random non-null values of one type, with the edge cases of its encoding. */
function samples(type: SqlTypeName): SqlValue[] {
  const out: SqlValue[] = [];
  const push = (value: unknown): void => void out.push({ type, value } as SqlValue);
  switch (type) {
    case 'int4':
      for (const v of [-2147483648, -65536, -1, 0, 1, 255, 256, 2147483647]) push(v);
      for (let i = 0; i < 200; i++) push(randomInt(rand, -2147483648, 2147483647));
      break;
    case 'int8':
      for (const v of [-9223372036854775808n, -(2n ** 53n) - 1n, -(2n ** 53n), -4294967296n, -1n, 0n, 1n, 4294967296n, 2n ** 53n, 2n ** 53n + 1n, 9223372036854775807n]) push(v);
      for (let i = 0; i < 200; i++) push(BigInt(randomInt(rand, -1e15, 1e15)) * BigInt(randomInt(rand, -9000, 9000)));
      break;
    case 'float8':
      for (const v of [-Infinity, -1e308, -1.5, -0, 0, 5e-324, 1e-10, 1, 1.5, 1e308, Infinity, NaN]) push(v);
      for (let i = 0; i < 200; i++) push((rand() - 0.5) * 10 ** randomInt(rand, -20, 20));
      break;
    case 'numeric':
      for (const t of ['-1000', '-10.5', '-10.50', '-1', '-0.001', '0', '0.00', '0.001', '0.01', '0.1', '1', '1.0', '1.5', '9.99', '10', '10.5', '100', '12345678901234567890.123']) push(Decimal.parse(t));
      for (let i = 0; i < 200; i++) push(new Decimal(BigInt(randomInt(rand, -1e9, 1e9)), randomInt(rand, 0, 6)));
      break;
    case 'text':
      for (const v of ['', '\0', 'a', 'a\0', 'a\0b', 'ab', 'b', 'é', '日本', '\u{1F600}']) push(v);
      for (let i = 0; i < 200; i++) push(Array.from({ length: randomInt(rand, 0, 6) }, () => String.fromCodePoint(randomInt(rand, 0, 3) === 0 ? 0 : randomInt(rand, 32, 0x2fff))).join(''));
      break;
    case 'boolean':
      push(false);
      push(true);
      break;
    case 'timestamp':
      for (let i = 0; i < 100; i++) push(BigInt(randomInt(rand, -4e15, 4e15)));
      break;
    case 'bytea':
      for (let i = 0; i < 100; i++) push(Buffer.from(Array.from({ length: randomInt(rand, 0, 5) }, () => randomInt(rand, 0, 255))));
      break;
    default:
      throw new Error(type);
  }
  return out;
}

const TYPES: SqlTypeName[] = ['int4', 'int8', 'float8', 'numeric', 'text', 'boolean', 'timestamp', 'bytea'];
const NULL = (type: SqlTypeName): SqlValue => ({ type, value: null }) as SqlValue;

/** PostgreSQL's ascending order with NULLs last. */
function sqlOrder(a: SqlValue, b: SqlValue): number {
  if (a.value === null || b.value === null) return (a.value === null ? 1 : 0) - (b.value === null ? 1 : 0);
  const c = compareValues(a as NonNullSqlValue, b as NonNullSqlValue);
  return Math.sign(c);
}

describe('SQL key encoding', () => {
  for (const type of TYPES) {
    it(`orders ${type} keys as PostgreSQL orders the values (NULLs last)`, () => {
      const values = [...samples(type), NULL(type)];
      for (let i = 0; i < values.length; i++) {
        for (let j = 0; j < values.length; j += 7) {
          const a = values[i]!;
          const b = values[j]!;
          const byKey = Math.sign(Buffer.compare(encodeKeyTuple([a]), encodeKeyTuple([b])));
          expect(byKey, `${type}: ${String(a.value)} vs ${String(b.value)}`).toBe(sqlOrder(a, b));
        }
      }
    });
  }

  it('orders tuples element by element, a shorter prefix first', () => {
    const a = encodeKeyTuple([{ type: 'text', value: 'a' }, { type: 'int4', value: 5 }]);
    const b = encodeKeyTuple([{ type: 'text', value: 'a\0' }, { type: 'int4', value: 1 }]);
    const prefix = encodeKeyTuple([{ type: 'text', value: 'a' }]);
    expect(Buffer.compare(a, b)).toBeLessThan(0);
    expect(a.subarray(0, prefix.length).equals(prefix)).toBe(true);
  });

  it('encodes integers of every width alike, so int2/int4/int8 keys compare across types', () => {
    for (const n of [-2147483648, -70000, -1, 0, 1, 70000, 2147483647]) {
      const k = encodeKeyTuple([{ type: 'int4', value: n }]);
      expect(encodeKeyTuple([{ type: 'int8', value: BigInt(n) }]).equals(k)).toBe(true);
    }
  });
});

describe('SQL row encoding', () => {
  it('round-trips every type, NULLs and columns added later', () => {
    const types: SqlTypeName[] = ['int2', 'int4', 'int8', 'numeric', 'float8', 'text', 'boolean', 'date', 'timestamp', 'timestamptz', 'jsonb', 'bytea'];
    const row: SqlValue[] = [
      { type: 'int2', value: -5 },
      { type: 'int4', value: 2147483647 },
      { type: 'int8', value: -9223372036854775808n },
      { type: 'numeric', value: Decimal.parse('123.450')! },
      { type: 'float8', value: -0.1 },
      { type: 'text', value: 'x\0y' },
      { type: 'boolean', value: false },
      { type: 'date', value: -1 },
      { type: 'timestamp', value: 1700000000123456n },
      { type: 'timestamptz', value: -1n },
      { type: 'jsonb', value: { json: { __proto__: 1, a: [null, 'b'] } as never } },
      { type: 'bytea', value: Buffer.from([0, 255]) },
    ];
    const back = decodeRow(encodeRow(row), types, []);
    expect(back.map((v) => v.type)).toEqual(types);
    expect(back.map((v) => (v.value instanceof Decimal ? v.value.toString() : v.value))).toEqual(row.map((v) => (v.value instanceof Decimal ? v.value.toString() : v.value)));
    const nulls = decodeRow(encodeRow(types.map(NULL)), types, []);
    expect(nulls.every((v) => v.value === null)).toBe(true);
    const added = decodeRow(encodeRow([{ type: 'int4', value: 1 }]), ['int4', 'text'], [NULL('int4'), { type: 'text', value: 'default' }]);
    expect(added[1]).toEqual({ type: 'text', value: 'default' });
  });
});
