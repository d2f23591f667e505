/**
 * Aggregation expressions (manual: "Aggregation Operators" > "Expression Operators"), compiled
 * once into functions of an evaluation context:
 * - `"$a.b"` is a field path of the current document; through an array it gives the array of
 *   the values each element has (elements without the field, and scalars, are left out), as
 *   MongoDB's field paths do; `"$$ROOT"`, `"$$CURRENT"`, `"$$REMOVE"`, `"$$NOW"` and the variables
 *   `$let`, `$map`, `$filter` and `$reduce` define (`"$$this.x"`) are variables;
 * - `{"$op": args}` is an operator from operator-table.ts (an unknown one is a QUERY_ERROR naming
 *   it); any other object is an object of expressions, an array an array of them (a missing value
 *   becomes null in an array and is left out of an object);
 * - anything else is a literal (`{"$literal": ...}` keeps a `$`-string or an operator-like
 *   object from being read).
 * A missing value is MISSING until the end, as in MongoDB, where `$ifNull` and the operators
 * that treat missing as null tell them apart.
 */

import { fail } from '../../../errors.js';
import { bsonTypeOf, getOwn, isPlainObject, MISSING, setOwn, type Doc } from '../../values.js';

/** Variables in force: ROOT, CURRENT and those the enclosing operators bound. */
export class Scope {
  readonly #parent: Scope | undefined;
  readonly #vars: ReadonlyMap<string, unknown> | undefined;
  /** ROOT and CURRENT of a document's scope (no map for the common case). */
  readonly #doc: Doc | undefined;
  /** Where `$rand` draws from in this scope and those within it (Math.random when no scope says). */
  readonly #random: (() => number) | undefined;

  constructor(vars: ReadonlyMap<string, unknown> | undefined, parent?: Scope, doc?: Doc, random?: () => number) {
    this.#vars = vars;
    this.#parent = parent;
    this.#doc = doc;
    this.#random = random;
  }

  /**
   * The scope of one document of a stage: ROOT and CURRENT are the document, beside `vars` (a
   * `$lookup` pipeline's `let`); `random`, where `$rand` draws (see compile-filter.ts, `$expr`).
   */
  static of(doc: Doc, vars?: Scope, random?: () => number): Scope {
    return new Scope(undefined, vars, doc, random);
  }

  /** A draw in [0, 1) for `$rand`: from the nearest scope that has a source, else Math.random. */
  random(): number {
    for (let s: Scope | undefined = this; s !== undefined; s = s.#parent) if (s.#random !== undefined) return s.#random();
    return Math.random();
  }

  /** A scope with more variables. */
  with(vars: ReadonlyMap<string, unknown>): Scope {
    return new Scope(vars, this);
  }

  get(name: string): unknown {
    for (let s: Scope | undefined = this; s !== undefined; s = s.#parent) {
      if (s.#doc !== undefined && (name === 'ROOT' || name === 'CURRENT')) return s.#doc;
      if (s.#vars !== undefined && s.#vars.has(name)) return s.#vars.get(name);
    }
    return MISSING;
  }
}

/** A compiled expression. */
export type Expr = (scope: Scope) => unknown;

/** What an operator's compiler gets: its arguments' compiler, with the variables visible there. */
export interface ExprContext {
  /** The variables defined where the expression stands (user ones; ROOT and the like always are). */
  readonly names: ReadonlySet<string>;
  compile(spec: unknown): Expr;
  /** A compiler for sub-expressions that see more variables. */
  withNames(names: readonly string[]): ExprContext;
}

/** An expression operator: compiles its argument. */
export interface ExprOperator {
  readonly kind: 'expression';
  compile(args: unknown, ctx: ExprContext, name: string): Expr;
}

/** An operator MongoDB has and tetradb does not. */
export interface UnsupportedExprOperator {
  readonly kind: 'unsupported';
  readonly reason: string;
}

export type ExprTableEntry = ExprOperator | UnsupportedExprOperator;

/** Throws QUERY_ERROR naming the operator. @throws QUERY_ERROR */
export function exprError(operator: string, message: string): never {
  fail('QUERY_ERROR', message, { operator });
}

const BUILTIN = new Set(['ROOT', 'CURRENT', 'REMOVE', 'NOW']);
const VARIABLE_NAME = /^[a-z\u0080-\uffff][a-zA-Z0-9_\u0080-\uffff]*$/;
/** How deep expressions may nest (the filter's limit). */
const MAX_DEPTH = 100;

/** Checks a variable name a user defines (`$let`, `as`): MongoDB's rule. @throws QUERY_ERROR */
export function checkVariableName(name: string, operator: string): string {
  if (!VARIABLE_NAME.test(name)) exprError(operator, `'${name}' starts with an invalid character for a user variable name`);
  return name;
}

/** The value at `parts` of `value`, field-path style (see the file comment). */
export function pathValue(value: unknown, parts: readonly string[], i = 0): unknown {
  if (i === parts.length) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const el of value) {
      if (!isPlainObject(el) && !Array.isArray(el)) continue;
      const v = pathValue(el, parts, i);
      if (v !== MISSING) out.push(v);
    }
    return out;
  }
  if (!isPlainObject(value)) return MISSING;
  return pathValue(getOwn(value, parts[i]!), parts, i + 1);
}

function fieldPath(path: string, operator: string): string[] {
  const parts = path.split('.');
  for (const part of parts) {
    if (part === '') exprError(operator, `FieldPath field names may not be empty strings ('${path}')`);
    if (part.startsWith('$')) exprError(operator, `FieldPath field names may not start with '$' ('${path}')`);
  }
  return parts;
}

function compileString(spec: string, names: ReadonlySet<string>): Expr {
  if (spec.startsWith('$$')) {
    const [name, ...rest] = spec.slice(2).split('.');
    if (name === undefined || name === '') exprError('$$', `empty variable name in '${spec}'`);
    if (!BUILTIN.has(name) && !names.has(name)) exprError('$$', `Use of undefined variable: ${name}`);
    const parts = rest.length > 0 ? fieldPath(rest.join('.'), spec) : [];
    if (name === 'REMOVE') return () => MISSING;
    // $$NOW is one instant for a whole operation: the one its scope binds (an update's, an
    // aggregation's), else the time of reading.
    if (name === 'NOW') {
      return (scope) => {
        const now = scope.get('NOW');
        return pathValue(now === MISSING ? new Date() : now, parts);
      };
    }
    return (scope) => pathValue(scope.get(name), parts);
  }
  if (spec.startsWith('$')) {
    if (spec === '$') exprError('$', "'$' by itself is not a valid FieldPath");
    const parts = fieldPath(spec.slice(1), spec);
    return (scope) => pathValue(scope.get('CURRENT'), parts);
  }
  return () => spec;
}

/** Compiles an expression with the operator table given (see operator-table.ts). @throws QUERY_ERROR */
export function makeCompiler(table: Readonly<Record<string, ExprTableEntry>>): (spec: unknown, names?: ReadonlySet<string>) => Expr {
  const context = (names: ReadonlySet<string>, depth: number): ExprContext => ({
    names,
    compile: (spec) => compile(spec, names, depth + 1),
    withNames: (more) => context(new Set([...names, ...more]), depth),
  });
  const compile = (spec: unknown, names: ReadonlySet<string>, depth: number): Expr => {
    if (depth > MAX_DEPTH) exprError('expression', `expression exceeds the maximum nesting depth of ${MAX_DEPTH}`);
    if (typeof spec === 'string') return compileString(spec, names);
    if (Array.isArray(spec)) {
      const items = spec.map((s) => compile(s, names, depth + 1));
      return (scope) =>
        items.map((e) => {
          const v = e(scope);
          return v === MISSING ? null : v;
        });
    }
    if (isPlainObject(spec)) {
      const keys = Object.keys(spec);
      const first = keys[0];
      if (first !== undefined && first.startsWith('$')) {
        if (keys.length > 1) exprError(first, `an expression specification must contain exactly one field, the name of the expression; found ${keys.join(', ')}`);
        const entry = Object.hasOwn(table, first) ? table[first] : undefined;
        if (entry === undefined) exprError(first, `Unrecognized expression '${first}'`);
        if (entry.kind === 'unsupported') exprError(first, `unsupported: the ${first} expression operator is not supported (${entry.reason})`);
        return entry.compile(spec[first], context(names, depth), first);
      }
      const fields = keys.map((k) => {
        if (k.includes('.')) exprError('expression', `FieldPath field names may not contain '.' in an object expression ('${k}')`);
        return [k, compile(spec[k], names, depth + 1)] as const;
      });
      return (scope) => {
        const out: Doc = {};
        for (const [k, e] of fields) {
          const v = e(scope);
          if (v !== MISSING) setOwn(out, k, v);
        }
        return out;
      };
    }
    return () => spec;
  };
  return (spec, names = new Set()) => compile(spec, names, 0);
}

/** An operator's arguments as a list: MongoDB accepts a lone argument for a one-argument operator. */
export function argList(args: unknown): unknown[] {
  return Array.isArray(args) ? args : [args];
}

/** Compiles exactly `n` (or `min`..`max`) arguments. @throws QUERY_ERROR */
export function compileArgs(args: unknown, ctx: ExprContext, name: string, min: number, max = min): Expr[] {
  const list = argList(args);
  if (list.length < min || list.length > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    exprError(name, `Expression ${name} takes ${want} argument${min === 1 && max === 1 ? '' : 's'}. ${list.length} were passed in.`);
  }
  return list.map((a) => ctx.compile(a));
}

/** A one-argument operator over the value of its argument. */
export function unary(fn: (v: unknown, name: string) => unknown): ExprOperator {
  return {
    kind: 'expression',
    compile(args, ctx, name) {
      const [a] = compileArgs(args, ctx, name, 1);
      return (scope) => fn(a!(scope), name);
    },
  };
}

/** An argument that must be an integer. @throws QUERY_ERROR naming the operator and the type found */
export function intArg(v: unknown, name: string, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v)) exprError(name, `${name}: ${what} must be an integer, found: ${bsonTypeOf(v)}`);
  return v;
}

/** True for null and missing: most operators give null for them. */
export function isNullish(v: unknown): boolean {
  return v === null || v === MISSING || v === undefined;
}

/**
 * The named arguments of an operator that takes a document (`{startDate, unit, ...}`): unknown and
 * missing ones are refused with MongoDB's wording. @throws QUERY_ERROR
 */
export function documentArgs(args: unknown, name: string, allowed: readonly string[], required: readonly string[]): Record<string, unknown> {
  if (!isPlainObject(args)) exprError(name, `${name} only supports an object as its argument, found: ${bsonTypeOf(args)}`);
  for (const k of Object.keys(args)) if (!allowed.includes(k)) exprError(name, `Unrecognized argument to ${name}: ${k}`);
  for (const k of required) if (!Object.hasOwn(args, k)) exprError(name, `Missing '${k}' parameter to ${name}`);
  return args;
}

/** The value of an argument written as a constant (not a path, variable or operator), else undefined: such arguments are checked when compiled. */
export function constantArg(spec: unknown): { value: unknown } | undefined {
  if (typeof spec === 'string') return spec.startsWith('$') ? undefined : { value: spec };
  if (typeof spec === 'number' || typeof spec === 'boolean' || spec === null) return { value: spec };
  return undefined;
}

/** True for an integer a 64-bit integer holds (MongoDB's `integral64Bit`: an integral double counts). */
export function isIntegral64(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && Math.abs(v) < 2 ** 63;
}
