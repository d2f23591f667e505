/**
 * A command's `let` (MongoDB 5.0+: find, aggregate, update, delete, findAndModify, bulkWrite):
 * variables its filters' `$expr`, computed projections and pipelines read as `$$name`.
 * - `let` is an object; each value is an expression evaluated once, before any document is read,
 *   in order, so a later one may read an earlier one (`{a: 1, b: {$add: ["$$a", 1]}}`) and `$$NOW`
 *   (the command's one instant). A value that reads a field (`"$a"`, `$$ROOT`, `$$CURRENT`,
 *   `$meta`, `$getField` without `input`) is refused with MongoDB's error 4890500; a value that
 *   evaluates to missing stays missing (`$eq: ["$a", "$$c"]` then matches documents without `a`).
 * - Names follow MongoDB's rule for user variables (a lower-case letter or a non-ASCII character
 *   first); the system constants (`NOW`, `CLUSTER_TIME`, ...) cannot be set, as from a client of
 *   MongoDB.
 */

import { fail } from '../errors.js';
import { Scope } from './aggregate/expression/expression.js';
import { compileExpression } from './aggregate/expression/operator-table.js';
import { fromJson } from './ejson.js';
import type { CompiledFilter } from './query/compile-filter.js';
import { readsDocument } from './query/expr-bounds.js';
import { bsonTypeOf, isPlainObject } from './values.js';

/** A command's `let`, compiled and evaluated. */
export interface LetVariables {
  /** The names, for compiling the command's filters, expressions and pipelines. */
  readonly names: ReadonlySet<string>;
  /** The values (MISSING for one that evaluated to missing), for a pipeline-style update's apply. */
  readonly values: ReadonlyMap<string, unknown>;
  /** The command's `$$NOW`, which the values read and the command's expressions must read too. */
  readonly now: Date;
  /** The values and `$$NOW`: the scope the command's filters and expressions evaluate in. */
  readonly scope: Scope;
}

/** The options of a command that takes `let`: the request's spec, or one compiled already (a bulkWrite's, for each operation). */
export interface LetOptions {
  let?: unknown;
  variables?: LetVariables;
}

/** MongoDB's system variables a client may not set in `let` (Variables::kSystemVarValidators). */
const SYSTEM_CONSTANTS = new Set(['NOW', 'CLUSTER_TIME', 'JS_SCOPE', 'IS_MR', 'USER_ROLES']);
const USER_VARIABLE = /^[a-z\u0080-\uffff][a-zA-Z0-9_\u0080-\uffff]*$/;

/**
 * Compiles and evaluates a command's `let` (undefined when the command has none). `command`
 * names the command in the type error, as MongoDB's IDL does (`FindCommandRequest`, `aggregate`,
 * `update`, `delete`, `findAndModify`, `bulkWrite`).
 * @throws QUERY_ERROR for a `let` that is not an object, a name a user may not define, a value that
 *   reads a field, or a malformed expression
 */
export function compileLet(spec: unknown, command: string, now: Date = new Date()): LetVariables | undefined {
  if (spec === undefined) return undefined;
  if (!isPlainObject(spec)) fail('QUERY_ERROR', `BSON field '${command}.let' is the wrong type '${bsonTypeOf(spec)}', expected type 'object'`, { field: 'let' });
  const converted = fromJson(spec, { code: 'QUERY_ERROR' }) as Record<string, unknown>;
  const names = new Set<string>();
  const values = new Map<string, unknown>();
  // The scope each value is evaluated in, which gains each value in turn: a value reads the ones before it.
  const inScope = new Map<string, unknown>([['NOW', now]]);
  const scope = new Scope(inScope);
  for (const [name, valueSpec] of Object.entries(converted)) {
    checkLetName(name);
    if (readsDocument(valueSpec)) {
      fail('QUERY_ERROR', 'Command let Expression tried to access a field, but this is not allowed because Command let Expressions run before the query examines any documents.', { field: `let.${name}` });
    }
    const value = compileExpression(valueSpec, names)(scope);
    values.set(name, value);
    inScope.set(name, value);
    names.add(name);
  }
  return { names, values, now, scope };
}

/** The command's variables: those compiled already, else its `let` compiled now. @throws QUERY_ERROR as compileLet */
export function letOf(options: LetOptions, command: string): LetVariables | undefined {
  return options.variables ?? compileLet(options.let, command);
}

/** A filter whose `$expr`s read the command's variables when its caller gives none; a filter bound already stays as it is. */
export function bindFilter(filter: CompiledFilter, lets: LetVariables | undefined): CompiledFilter {
  return lets === undefined ? filter : bindScope(filter, lets.scope);
}

/** A filter whose `$expr`s read `scope` when its caller gives no variables (a `$lookup`'s, for one of its documents); a filter bound already stays as it is. */
export function bindScope(filter: CompiledFilter, scope: Scope): CompiledFilter {
  if (filter.vars !== undefined) return filter;
  return { ast: filter.ast, test: (doc, vars) => filter.test(doc, vars ?? scope), vars: scope };
}

/** MongoDB's validateVariable for a `let` parameter. @throws QUERY_ERROR */
function checkLetName(name: string): void {
  if (SYSTEM_CONSTANTS.has(name)) fail('QUERY_ERROR', `Attempt to set internal constant: ${name}`, { field: `let.${name}` });
  if (name === '') fail('QUERY_ERROR', "Invalid 'let' parameter :: caused by :: empty variable names are not allowed", { field: 'let' });
  if (!USER_VARIABLE.test(name)) fail('QUERY_ERROR', `Invalid 'let' parameter :: caused by :: '${name}' starts with an invalid character for a user variable name`, { field: `let.${name}` });
}
