import { Decimal } from './decimal.js';
import { INT_RANGES, sqlFail, toJsonb, type SqlValue } from './sql-types.js';

/**
 * Bind parameters arrive as JSON values. Their types follow what a driver sending untyped
 * parameters gets: strings are `unknown` (they take the type the context needs, like a quoted
 * literal), integers are integer/bigint, other numbers numeric, objects and arrays jsonb.
 * @throws SQL_ERROR 22023 for a value JSON cannot carry
 */
export function paramsFromJson(params: readonly unknown[]): SqlValue[] {
  return params.map((p, i): SqlValue => {
    if (p === null || p === undefined) return { type: 'unknown', value: null };
    if (typeof p === 'string') return { type: 'unknown', value: p };
    if (typeof p === 'boolean') return { type: 'boolean', value: p };
    if (typeof p === 'number') {
      if (!Number.isFinite(p)) sqlFail('22023', `parameter $${i + 1} is not a finite number`);
      if (Number.isInteger(p)) {
        if (p >= -2_147_483_648 && p <= 2_147_483_647) return { type: 'int4', value: p };
        const b = BigInt(p);
        if (b >= INT_RANGES.int8[0] && b <= INT_RANGES.int8[1]) return { type: 'int8', value: b };
      }
      return { type: 'numeric', value: Decimal.fromNumber(p) };
    }
    if (typeof p === 'bigint') {
      if (p >= INT_RANGES.int8[0] && p <= INT_RANGES.int8[1]) return { type: 'int8', value: p };
      return { type: 'numeric', value: Decimal.fromBigInt(p) };
    }
    if (typeof p === 'object') return { type: 'jsonb', value: { json: toJsonb(p) } };
    return sqlFail('22023', `parameter $${i + 1} has an unsupported JSON type`);
  });
}
