import type { CompiledExpr } from '../compiled-expr.js';
import { formatDate, formatFloat, isArrayValue, isEnumValue, jsonbText, sqlFail, toJsonb, toText, type Jsonb, type JsonValue, type NonNullSqlValue, type SqlTypeName, type SqlValue } from '../sql-types.js';
import { noFunction, strict, type FunctionDef } from './function-def.js';

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
      // The zone is written +00:00 in JSON; a BC era stays last ('...+00:00 BC').
      return nn.type === 'timestamptz' ? t.replace(/\+00( BC)?$/, '+00:00$1') : t;
    }
    case 'unknown':
    case 'text':
    case 'bpchar':
    case 'bit':
    case 'varbit':
    case 'bytea':
    case 'uuid':
    case 'interval':
    case 'time':
    case 'timetz':
      return toText(nn);
    default: {
      // Arrays become JSON arrays of their elements, as to_jsonb does.
      if (isArrayValue(nn)) return nn.value.map(sqlToJson);
      if (isEnumValue(nn)) return toText(nn);
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

/** jsonb_build_array(VARIADIC "any"): SQL NULL becomes JSON null. */
const jsonbBuildArray: FunctionDef = {
  compile(_name, args): CompiledExpr {
    return {
      type: 'jsonb',
      evaluate: (ctx) => ({ type: 'jsonb', value: { json: toJsonb(args.map((a) => sqlToJson(a.evaluate(ctx)))) } }),
    };
  },
};

type JsonObject = { [k: string]: JsonValue };
const isObject = (v: JsonValue): v is JsonObject => v !== null && typeof v === 'object' && !Array.isArray(v);
const jsonb = (v: NonNullSqlValue): JsonValue => (v.value as Jsonb).json;

function jsonbTypeof(v: JsonValue): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v;
}

/** One step of a jsonb path: object key, or array index (negative from the end). */
function pathStep(j: JsonValue | undefined, key: string): JsonValue | undefined {
  if (j === undefined) return undefined;
  if (Array.isArray(j)) {
    if (!/^\s*[+-]?\d+\s*$/.test(key)) return undefined;
    const i = Number(key);
    return j[i < 0 ? j.length + i : i];
  }
  if (isObject(j)) return Object.hasOwn(j, key) ? j[key] : undefined;
  return undefined;
}

/** jsonb #> path / jsonb_extract_path: undefined when the path does not exist. */
export function jsonbPath(j: JsonValue, path: readonly string[]): JsonValue | undefined {
  let cur: JsonValue | undefined = j;
  for (const k of path) cur = pathStep(cur, k);
  return cur;
}

/** The text form ->> and #>> give: strings unquoted, JSON null as SQL NULL. */
export function jsonbAsText(v: JsonValue | undefined): SqlValue {
  if (v === undefined || v === null) return { type: 'text', value: null };
  return { type: 'text', value: typeof v === 'string' ? v : jsonbText(v) };
}

/**
 * jsonb @> jsonb (PostgreSQL's JsonbDeepContains): objects contain objects key by key, arrays
 * contain arrays element by element (in any order, duplicates allowed), and a top-level array
 * contains a bare scalar it holds.
 */
export function jsonbContains(a: JsonValue, b: JsonValue, topLevel = true): boolean {
  if (Array.isArray(a)) {
    if (Array.isArray(b)) return b.every((x) => a.some((y) => (x !== null && typeof x === 'object' ? y !== null && typeof y === 'object' && Array.isArray(y) === Array.isArray(x) && jsonbContains(y, x, false) : jsonbEqualScalar(x, y))));
    return topLevel && !isObject(b) && a.some((y) => jsonbEqualScalar(b, y));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    return Object.keys(b).every((k) => Object.hasOwn(a, k) && jsonbContainsValue(a[k]!, b[k]!));
  }
  return !Array.isArray(b) && !isObject(b) && jsonbEqualScalar(a, b);
}

function jsonbContainsValue(a: JsonValue, b: JsonValue): boolean {
  if (Array.isArray(a) !== Array.isArray(b) || isObject(a) !== isObject(b)) return false;
  return jsonbContains(a, b, false);
}

function jsonbEqualScalar(x: JsonValue, y: JsonValue): boolean {
  if (x !== null && typeof x === 'object') return false;
  return x === y;
}

/** jsonb ? text: a top-level object key, or a string element of a top-level array or scalar. */
export function jsonbHasKey(j: JsonValue, key: string): boolean {
  if (isObject(j)) return Object.hasOwn(j, key);
  if (Array.isArray(j)) return j.some((e) => e === key);
  return j === key;
}

/** jsonb_extract_path(_text)(from_json, VARIADIC path text[]). */
const extractPath = (asText: boolean): FunctionDef => ({
  compile(name, args) {
    // VARIADIC path text[]: at least one path element.
    if (args.length < 2) return noFunction(name, args);
    const types: SqlTypeName[] = ['jsonb', ...args.slice(1).map((): SqlTypeName => 'text')];
    return strict({
      args: types,
      returns: asText ? 'text' : 'jsonb',
      impl: ([j, ...path]) => {
        const got = jsonbPath(jsonb(j!), path.map((p) => p!.value as string));
        if (asText) return jsonbAsText(got);
        return got === undefined ? { type: 'jsonb', value: null } : { type: 'jsonb', value: { json: got } };
      },
    }).compile(name, args);
  },
});

/**
 * to_jsonb(x) and to_json(x): a value as JSON, as sqlToJson makes it (a string stays a JSON
 * string, a number a number, jsonb itself). Both give jsonb here (no separate json type). Not
 * strict: NULL gives SQL NULL.
 */
const toJsonbFn: FunctionDef = {
  compile(name, args): CompiledExpr {
    if (args.length !== 1) return noFunction(name, args);
    const arg = args[0]!;
    if (arg.type === 'unknown') sqlFail('42804', 'could not determine polymorphic type because input has type unknown');
    return {
      type: 'jsonb',
      evaluate(ctx) {
        const v = arg.evaluate(ctx);
        return v.value === null ? { type: 'jsonb', value: null } : { type: 'jsonb', value: { json: toJsonb(sqlToJson(v)) } };
      },
    };
  },
};

export const JSON_FUNCTIONS: Record<string, FunctionDef> = {
  to_jsonb: toJsonbFn,
  to_json: toJsonbFn,
  jsonb_build_object: jsonbBuildObject,
  // Built as jsonb: this engine has no separate json type (see KNOWN_DIFFERENCES).
  json_build_object: jsonbBuildObject,
  jsonb_build_array: jsonbBuildArray,
  json_build_array: jsonbBuildArray,
  jsonb_typeof: strict({ args: ['jsonb'], returns: 'text', impl: ([j]) => ({ type: 'text', value: jsonbTypeof(jsonb(j!)) }) }),
  jsonb_array_length: strict({
    args: ['jsonb'],
    returns: 'int4',
    impl: ([j]) => {
      const v = jsonb(j!);
      if (Array.isArray(v)) return { type: 'int4', value: v.length };
      return sqlFail('22023', isObject(v) ? 'cannot get array length of a non-array' : 'cannot get array length of a scalar');
    },
  }),
  jsonb_extract_path: extractPath(false),
  jsonb_extract_path_text: extractPath(true),
};
