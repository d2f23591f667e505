import type { CompiledExpr, EvalContext } from '../compiled-expr.js';
import { Decimal } from '../decimal.js';
import { unsupported } from '../expression-eval.js';
import { noFunction } from '../functions/function-def.js';
import { jsonbAsText } from '../functions/json-functions.js';
import { sqlRegExp } from '../functions/string-functions.js';
import { applyArith, compareValues, intervalSpan } from '../operators.js';
import { castValue, typeDisplay } from '../sql-cast.js';
import { elementTypeOf, isArrayType, sortJsonbKeys, sqlFail, type JsonValue, type Jsonb, type NonNullSqlValue, type SqlTypeName, type SqlValue, type ArrayTypeName } from '../sql-types.js';
import { canCoerce, coerce } from '../type-resolution.js';
import { PAUSE, type Exec, type ExplainNode, type Plan, type PlanColumn, type Step } from './runtime.js';

/**
 * PostgreSQL's set-returning functions read in FROM (`FROM unnest(a) AS u(v)`, `FROM t,
 * jsonb_each(t.doc) e`): each resolves its signature from the argument types when the query is
 * planned, and gives its rows from the argument values when it runs (once per row of the items
 * before it when its arguments read them: PostgreSQL's implicit LATERAL, select.ts).
 */
export interface SetFunction {
  /**
   * The output columns. `name` undefined: a function of one value per row (unnest, generate_series,
   * jsonb_object_keys), whose column is named after the alias or, without one, the function.
   */
  readonly columns: readonly { name: string | undefined; type: SqlTypeName }[];
  /** The rows for the arguments' values (evaluated once, in order, before the first row). */
  rows(args: SqlValue[], ctx: EvalContext): Iterable<SqlValue[]>;
}

type Resolver = (name: string, args: CompiledExpr[]) => { fn: SetFunction; args: CompiledExpr[] };

/** The arguments coerced to `types` (one signature), or undefined when they do not fit it. */
function fit(args: CompiledExpr[], types: SqlTypeName[]): CompiledExpr[] | undefined {
  if (args.length !== types.length || !args.every((a, i) => canCoerce(a.type, types[i]!))) return undefined;
  return args.map((a, i) => coerce(a, types[i]!));
}

/** The arguments coerced to the first of `signatures` they fit. @throws SQL_ERROR 42883 */
function fitAny(name: string, args: CompiledExpr[], signatures: SqlTypeName[][]): CompiledExpr[] {
  for (const s of signatures) {
    const fitted = fit(args, s);
    if (fitted !== undefined) return fitted;
  }
  return noFunction(name, args);
}

const text = (value: string | null): SqlValue => ({ type: 'text', value }) as SqlValue;
const json = (v: NonNullSqlValue): JsonValue => (v.value as Jsonb).json;
const jsonbOf = (j: JsonValue): SqlValue => ({ type: 'jsonb', value: { json: j } });
const isJsonObject = (j: JsonValue): j is { [k: string]: JsonValue } => j !== null && typeof j === 'object' && !Array.isArray(j);

/** Rows of a strict function: none when any argument is NULL. */
function strictRows(args: SqlValue[], f: (vals: NonNullSqlValue[]) => Iterable<SqlValue[]>): Iterable<SqlValue[]> {
  return args.some((v) => v.value === null) ? [] : f(args as NonNullSqlValue[]);
}

/** generate_series(int, int [, int]) in int4 or int8, PostgreSQL's integer overloads. */
function integerSeries(type: 'int4' | 'int8'): SetFunction {
  return {
    columns: [{ name: undefined, type }],
    *rows(args) {
      const vals = args.map((a) => castValue(a, { type: 'int8' }));
      if (vals.some((v) => v.value === null)) return;
      const [start, stop, step = { value: 1n }] = vals as { value: bigint }[];
      if (step!.value === 0n) sqlFail('22023', 'step size cannot equal zero');
      for (let v = start!.value; step!.value > 0n ? v <= stop!.value : v >= stop!.value; v += step!.value) yield [castValue({ type: 'int8', value: v }, { type })];
    },
  };
}

/**
 * generate_series over numeric (start, stop[, step]) or time (timestamp or timestamp with time
 * zone: start, stop, interval step), resolved as PostgreSQL resolves the call: a date or an
 * untyped literal beside them takes timestamp with time zone, PostgreSQL's preferred type.
 */
function steppedSeries(name: string, args: CompiledExpr[]): SetFunction {
  const types = args.map((a) => a.type);
  const numberish = (t: SqlTypeName): boolean => t === 'int2' || t === 'int4' || t === 'int8' || t === 'numeric' || t === 'unknown';
  const timeish = (t: SqlTypeName): boolean => t === 'timestamp' || t === 'timestamptz' || t === 'date' || t === 'unknown';
  let type: SqlTypeName;
  if (types.every(numberish)) type = 'numeric';
  else if (args.length === 3 && timeish(types[0]!) && timeish(types[1]!) && (types[2] === 'interval' || types[2] === 'unknown')) {
    type = types.slice(0, 2).includes('timestamp') && !types.slice(0, 2).some((t) => t === 'timestamptz' || t === 'date') ? 'timestamp' : 'timestamptz';
  } else return noFunction(name, args);
  const stepType: SqlTypeName = type === 'numeric' ? 'numeric' : 'interval';
  return {
    columns: [{ name: undefined, type }],
    *rows(values) {
      const start = castValue(values[0]!, { type });
      const stop = castValue(values[1]!, { type });
      const step = values[2] === undefined ? ({ type: 'numeric', value: Decimal.fromBigInt(1n) } as SqlValue) : castValue(values[2], { type: stepType });
      if (start.value === null || stop.value === null || step.value === null) return;
      const sign = step.type === 'interval' ? Math.sign(Number(intervalSpan(step.value))) : step.type === 'numeric' ? step.value.cmp(Decimal.fromBigInt(0n)) : 0;
      if (sign === 0) sqlFail('22023', 'step size cannot equal zero');
      let v = start as NonNullSqlValue;
      for (;;) {
        const c = compareValues(v, stop as NonNullSqlValue);
        if (sign > 0 ? c > 0 : c < 0) return;
        yield [v];
        v = applyArith('+', v, step as NonNullSqlValue, type) as NonNullSqlValue;
      }
    },
  };
}

const generateSeries: Resolver = (name, args) => {
  if (args.length < 2 || args.length > 3) noFunction(name, args);
  const INT_TYPES: SqlTypeName[] = ['int2', 'int4', 'int8', 'unknown'];
  if (!args.every((a) => INT_TYPES.includes(a.type))) return { fn: steppedSeries(name, args), args };
  return { fn: integerSeries(args.some((a) => a.type === 'int8') ? 'int8' : 'int4'), args };
};

/**
 * unnest(array [, array ...]): the elements in order; several arrays (in FROM only) side by side,
 * the shorter ones padded with NULLs. A NULL array has no elements.
 * @throws SQL_ERROR 42725 for an untyped argument (PostgreSQL cannot choose between its overloads)
 */
const unnest: Resolver = (name, args) => {
  if (args.length === 0) noFunction(name, args);
  for (const a of args) {
    if (a.type === 'unknown') sqlFail('42725', `function ${name}(${args.map((x) => typeDisplay(x.type) ?? x.type).join(', ')}) is not unique`, undefined, 'Could not choose a best candidate function. You might need to add explicit type casts.');
    if (!isArrayType(a.type)) noFunction(name, args);
  }
  const types = args.map((a) => elementTypeOf(a.type as ArrayTypeName) as SqlTypeName);
  return {
    args,
    fn: {
      columns: types.map((type) => ({ name: undefined, type })),
      *rows(values) {
        const arrays = values.map((v) => (v.value === null ? [] : (v.value as SqlValue[])));
        const n = Math.max(0, ...arrays.map((a) => a.length));
        for (let i = 0; i < n; i++) yield arrays.map((a, k) => a[i] ?? ({ type: types[k]!, value: null } as SqlValue));
      },
    },
  };
};

/** generate_subscripts(array, dim [, reverse]): the subscripts of dimension `dim` (arrays here have one, from 1). */
const generateSubscripts: Resolver = (name, args) => {
  if (args[0] === undefined || !isArrayType(args[0].type)) noFunction(name, args);
  const fitted = fitAny(name, args.slice(1), [['int4'], ['int4', 'boolean']]);
  return {
    args: [args[0]!, ...fitted],
    fn: {
      columns: [{ name: undefined, type: 'int4' }],
      rows: (values) =>
        strictRows(values, function* ([a, dim, reverse]) {
          const n = (a!.value as SqlValue[]).length;
          if (dim!.value !== 1 || n === 0) return;
          for (let i = 1; i <= n; i++) yield [{ type: 'int4', value: reverse?.value === true ? n + 1 - i : i }];
        }),
    },
  };
};

/** The elements of a jsonb array, as jsonb or (`asText`) as ->> gives them. */
function arrayElements(asText: boolean): Resolver {
  return (name, args) => ({
    args: fitAny(name, args, [['jsonb']]),
    fn: {
      columns: [{ name: 'value', type: asText ? 'text' : 'jsonb' }],
      rows: (values) =>
        strictRows(values, function* ([doc]) {
          const j = json(doc!);
          if (!Array.isArray(j)) sqlFail('22023', isJsonObject(j) ? 'cannot extract elements from an object' : 'cannot extract elements from a scalar');
          for (const e of j) yield [asText ? jsonbAsText(e) : jsonbOf(e)];
        }),
    },
  });
}

/** The keys and values of a jsonb object, in jsonb's key order. */
function objectEntries(asText: boolean): Resolver {
  return (name, args) => ({
    args: fitAny(name, args, [['jsonb']]),
    fn: {
      columns: [
        { name: 'key', type: 'text' },
        { name: 'value', type: asText ? 'text' : 'jsonb' },
      ],
      rows: (values) =>
        strictRows(values, function* ([doc]) {
          const j = json(doc!);
          if (!isJsonObject(j)) sqlFail('22023', `cannot call ${name} on a non-object`);
          for (const k of sortJsonbKeys(Object.keys(j))) yield [text(k), asText ? jsonbAsText(j[k]) : jsonbOf(j[k]!)];
        }),
    },
  });
}

const objectKeys: Resolver = (name, args) => ({
  args: fitAny(name, args, [['jsonb']]),
  fn: {
    columns: [{ name: undefined, type: 'text' }],
    rows: (values) =>
      strictRows(values, function* ([doc]) {
        const j = json(doc!);
        if (!isJsonObject(j)) sqlFail('22023', `cannot call ${name} on ${Array.isArray(j) ? 'an array' : 'a scalar'}`);
        for (const k of sortJsonbKeys(Object.keys(j))) yield [text(k)];
      }),
  },
});

/**
 * The matches of a regular expression in `s`, as PostgreSQL's setup_regexp_matches finds them:
 * each search starts where the last match ended (one character on after an empty one); with
 * `ignoreDegenerate` (splitting), empty matches at either end of the string or right after a
 * match are skipped.
 */
function* regexpMatches(s: string, re: RegExp, global: boolean, ignoreDegenerate: boolean): Generator<RegExpExecArray> {
  const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`);
  let prevEnd = -1;
  let from = 0;
  while (from <= s.length) {
    g.lastIndex = from;
    const m = g.exec(s);
    if (m === null) return;
    const start = m.index;
    const end = start + m[0].length;
    if (m[0].length === 0 && ignoreDegenerate && (start === 0 || start === s.length || start === prevEnd)) {
      from = start + 1;
      continue;
    }
    yield m;
    if (!global) return;
    prevEnd = end;
    from = m[0].length === 0 ? end + 1 : end;
  }
}

/** regexp_split_to_table(s, pattern [, flags]): the pieces between matches. */
const regexpSplit: Resolver = (name, args) => ({
  args: fitAny(name, args, [['text', 'text'], ['text', 'text', 'text']]),
  fn: {
    columns: [{ name: undefined, type: 'text' }],
    rows: (values) =>
      strictRows(values, function* ([s, p, f]) {
        const flags = f === undefined ? '' : (f.value as string);
        if (flags.includes('g')) sqlFail('22023', `${name}() does not support the "global" option`);
        const str = s!.value as string;
        let last = 0;
        for (const m of regexpMatches(str, sqlRegExp(p!.value as string, flags, false), true, true)) {
          yield [text(str.slice(last, m.index))];
          last = m.index + m[0].length;
        }
        yield [text(str.slice(last))];
      }),
  },
});

/** regexp_matches(s, pattern [, flags]): one text[] per match (all of them with flag g): its groups, or the match. */
const regexpMatchesFn: Resolver = (name, args) => ({
  args: fitAny(name, args, [['text', 'text'], ['text', 'text', 'text']]),
  fn: {
    columns: [{ name: undefined, type: 'text[]' }],
    rows: (values) =>
      strictRows(values, function* ([s, p, f]) {
        const flags = f === undefined ? '' : (f.value as string);
        const re = sqlRegExp(p!.value as string, flags, true);
        for (const m of regexpMatches(s!.value as string, re, flags.includes('g'), false)) {
          const groups = m.length > 1 ? m.slice(1) : [m[0]];
          yield [{ type: 'text[]', value: groups.map((g) => text(g ?? null)) }];
        }
      }),
  },
});

/**
 * string_to_table(s, delimiter [, null_string]): the fields between delimiters; a NULL delimiter
 * splits into characters, an empty one gives the whole string; fields equal to null_string are NULL.
 */
const stringToTable: Resolver = (name, args) => ({
  args: fitAny(name, args, [['text', 'text'], ['text', 'text', 'text']]),
  fn: {
    columns: [{ name: undefined, type: 'text' }],
    *rows(values) {
      const [s, d, n] = values;
      if (s!.value === null) return;
      const str = s!.value as string;
      const fields = d!.value === null ? Array.from(str) : d!.value === '' ? (str === '' ? [] : [str]) : str === '' ? [] : str.split(d!.value as string);
      const nullString = n === undefined || n.value === null ? undefined : (n.value as string);
      for (const field of fields) yield [text(field === nullString ? null : field)];
    },
  },
});

/** The functions FROM can read, by name (json_* read their argument as jsonb, which is what json is here). */
const SET_FUNCTIONS: Record<string, Resolver> = {
  generate_series: generateSeries,
  generate_subscripts: generateSubscripts,
  unnest,
  jsonb_array_elements: arrayElements(false),
  jsonb_array_elements_text: arrayElements(true),
  json_array_elements: arrayElements(false),
  json_array_elements_text: arrayElements(true),
  jsonb_each: objectEntries(false),
  jsonb_each_text: objectEntries(true),
  json_each: objectEntries(false),
  json_each_text: objectEntries(true),
  jsonb_object_keys: objectKeys,
  json_object_keys: objectKeys,
  regexp_split_to_table: regexpSplit,
  regexp_matches: regexpMatchesFn,
  string_to_table: stringToTable,
};

/** Whether `name` is a set-returning function FROM can read. */
export function isSetFunction(name: string): boolean {
  return Object.hasOwn(SET_FUNCTIONS, name);
}

/**
 * The set-returning function `name` for these arguments, with the arguments as it reads them.
 * @throws SQL_ERROR 0A000 a function tetradb does not have in FROM, 42883 / 42725 as PostgreSQL's resolution
 */
export function setFunction(name: string, args: CompiledExpr[]): { fn: SetFunction; args: CompiledExpr[] } {
  const resolve = Object.hasOwn(SET_FUNCTIONS, name) ? SET_FUNCTIONS[name] : undefined;
  if (resolve === undefined) return unsupported(`function ${name}() in FROM (set-returning functions: ${Object.keys(SET_FUNCTIONS).join(', ')})`);
  return resolve(name, args);
}

/** A set-returning function called in a select list: its resolved function and arguments. */
export interface ListedSetFunction {
  readonly fn: SetFunction;
  readonly args: CompiledExpr[];
  /** The value it gives for the row being projected (set by ProjectSetPlan). */
  current: SqlValue;
}

/**
 * A projection whose select list calls set-returning functions (PostgreSQL 10's ProjectSet): for
 * each input row, the functions run side by side, one output row per step until every one of them
 * is done, a function already done giving NULL (a row for which all give nothing gives no row).
 */
export class ProjectSetPlan implements Plan {
  constructor(
    readonly input: Plan,
    private readonly functions: readonly ListedSetFunction[],
    private readonly exprs: CompiledExpr[],
    readonly columns: PlanColumn[],
  ) {}

  *rows(x: Exec): Generator<Step> {
    const ctx = x.ctx();
    const n = this.exprs.length;
    for (const row of this.input.rows(x)) {
      if (row === PAUSE) {
        yield row;
        continue;
      }
      ctx.row = row;
      const running = this.functions.map((f) => f.fn.rows(f.args.map((a) => a.evaluate(ctx)), ctx)[Symbol.iterator]());
      const done = running.map(() => false);
      for (;;) {
        let any = false;
        running.forEach((it, k) => {
          const f = this.functions[k]!;
          const step = done[k] ? undefined : it.next();
          if (step === undefined || step.done === true) {
            done[k] = true;
            f.current = { type: f.fn.columns[0]!.type, value: null } as SqlValue;
          } else {
            any = true;
            f.current = step.value[0]!;
          }
        });
        if (!any) break;
        ctx.row = row;
        const out = new Array<SqlValue>(n);
        for (let i = 0; i < n; i++) out[i] = this.exprs[i]!.evaluate(ctx);
        yield out;
        if (x.tick()) yield PAUSE;
      }
    }
  }

  explain(): ExplainNode {
    return { node: 'ProjectSet', children: [this.input.explain()] };
  }
}
