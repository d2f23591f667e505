import type { CompiledExpr } from '../compiled-expr.js';
import { formatDate, formatFloat, isArrayValue, sqlFail, toJsonb, toText, type JsonValue, type NonNullSqlValue, type SqlValue } from '../sql-types.js';
import type { FunctionDef } from './function-def.js';

/** SQL value -> JSON, as to_jsonb does (numbers stay numbers, times become ISO strings). */
export function sqlToJson(v: SqlValue): JsonValue {
  if (v.value === null) return null;
  const nn = v as NonNullSqlValue;
  switch (nn.type) {
    case 'boolean':
      return nn.value;
    case 'int2':
    case 'int4':
    case 'float8':
      if (nn.type === 'float8' && !Number.isFinite(nn.value)) return formatFloat(nn.value);
      return nn.value;
    case 'int8':
    case 'numeric':
      // JSON numbers are doubles here; beyond 2^53 this loses digits (see KNOWN_DIFFERENCES).
      return Number(nn.value.toString());
    case 'jsonb':
      return nn.value.json;
    case 'date':
      return formatDate(nn.value);
    case 'timestamp':
    case 'timestamptz': {
      const t = toText(nn).replace(' ', 'T');
      return nn.type === 'timestamptz' ? t.replace(/\+00$/, '+00:00') : t;
    }
    case 'unknown':
    case 'text':
    case 'bytea':
      return toText(nn);
    default: {
      // Arrays become JSON arrays of their elements, as to_jsonb does.
      if (isArrayValue(nn)) return nn.value.map(sqlToJson);
      const never: never = nn;
      return never;
    }
  }
}

const jsonbBuildObject: FunctionDef = {
  compile(_name, args): CompiledExpr {
    if (args.length % 2 !== 0) sqlFail('22023', 'argument list must have even number of elements');
    return {
      type: 'jsonb',
      evaluate(ctx) {
        const obj: Record<string, JsonValue> = {};
        for (let i = 0; i < args.length; i += 2) {
          const k = args[i]!.evaluate(ctx);
          if (k.value === null) sqlFail('22023', `argument ${i + 1}: key must not be null`);
          obj[toText(k as NonNullSqlValue)] = sqlToJson(args[i + 1]!.evaluate(ctx));
        }
        return { type: 'jsonb', value: { json: toJsonb(obj) } };
      },
    };
  },
};

export const JSON_FUNCTIONS: Record<string, FunctionDef> = {
  jsonb_build_object: jsonbBuildObject,
};
