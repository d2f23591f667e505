/**
 * What PostgreSQL keeps per session, kept here per request (a request is tetradb's session):
 * the values nextval drew (currval, lastval) and the run-time settings (SET, SHOW, RESET,
 * set_config, current_setting).
 *
 * The settings are PostgreSQL's names with its syntax, checks and displays. Few change anything
 * here: statement_timeout bounds the request's later statements (within the server's own limit);
 * the others are accepted for the values tetradb behaves as (search_path public, client_encoding
 * UTF8, standard_conforming_strings on, ...) so that pg_dump's preamble and a driver's session
 * setup run, and refused (0A000) for values it cannot honour.
 */

import type { TxnView } from './store/sql-view.js';
import type { Token } from './sql-rewrite.js';
import type { EvalContext } from './compiled-expr.js';
import { strict, type FunctionDef } from './functions/function-def.js';
import { sequenceStateBytes, syntaxError, type SequenceState } from './sequence-options.js';
import { sqlFail } from './sql-types.js';

/** A setting: its value as SHOW displays it, from a SET's items (already unquoted). */
interface SettingDef {
  /** The value before any SET (SHOW's answer; RESET goes back to it). */
  readonly initial: string;
  /** The display of `items` (a SET's list); throws for a value PostgreSQL or tetradb refuses. */
  check(items: readonly string[], name: string): string;
}

const invalid = (name: string, value: string, hint?: string): never => sqlFail('22023', `invalid value for parameter "${name}": "${value}"`, undefined, hint);

/** One item: SET's list of several is an error for a setting that takes one value. */
function single(items: readonly string[], name: string): string {
  if (items.length !== 1) sqlFail('22023', `SET ${name} takes only one argument`);
  return items[0]!;
}

/** PostgreSQL's parse_bool: on/off, true/false, yes/no, 1/0 and their unique prefixes. */
function parseBool(text: string): boolean | undefined {
  const t = text.trim().toLowerCase();
  if (t === '') return undefined;
  for (const [word, value] of [['true', true], ['false', false], ['yes', true], ['no', false]] as const) if (word.startsWith(t)) return value;
  if (t === 'on') return true;
  if (t === 'off' || t === 'of') return false;
  if (t === '1') return true;
  if (t === '0') return false;
  return undefined;
}

function bool(initial: boolean, only?: boolean, why?: string): SettingDef {
  return {
    initial: initial ? 'on' : 'off',
    check(items, name) {
      const v = parseBool(single(items, name));
      if (v === undefined) sqlFail('22023', `parameter "${name}" requires a Boolean value`);
      if (only !== undefined && v !== only) sqlFail('0A000', `unsupported: ${name} ${v ? 'on' : 'off'} (${why})`);
      return v ? 'on' : 'off';
    },
  };
}

const TIME_UNITS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, min: 60_000, h: 3_600_000, d: 86_400_000 };

/** Milliseconds as PostgreSQL displays a time setting: in the largest unit that divides it. */
export function displayMs(ms: number): string {
  if (ms === 0) return '0';
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['min', 60_000], ['s', 1000]] as const) if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms}ms`;
}

/** A time setting in milliseconds (a bare number is ms, else a number and one of PostgreSQL's units). */
function timeMs(initialMs: number): SettingDef {
  return {
    initial: displayMs(initialMs),
    check(items, name) {
      const text = single(items, name);
      const m = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
      const hint = 'Valid units for this parameter are "us", "ms", "s", "min", "h", and "d".';
      if (m === null) return invalid(name, text);
      const unit = m[2]!;
      if (unit !== '' && TIME_UNITS[unit] === undefined) return invalid(name, text, hint);
      const ms = Math.round(Number(m[1]) * (unit === '' ? 1 : TIME_UNITS[unit]!));
      if (ms < 0 || ms > 2147483647) sqlFail('22023', `${ms} ms is outside the valid range for parameter "${name}" (0 ms .. 2147483647 ms)`);
      return displayMs(ms);
    },
  };
}

/** A setting whose value must be one of `allowed` (compared in lower case), displayed as written. */
function oneOf(initial: string, allowed: readonly string[], supported: readonly string[] = allowed, why = ''): SettingDef {
  return {
    initial,
    check(items, name) {
      const text = single(items, name);
      const v = text.toLowerCase();
      if (!allowed.includes(v)) sqlFail('22023', `invalid value for parameter "${name}": "${text}"`, undefined, `Available values: ${allowed.join(', ')}.`);
      if (!supported.includes(v)) sqlFail('0A000', `unsupported: ${name} ${text} (${why})`);
      return v;
    },
  };
}

/** Any text, kept as given. */
const anyText = (initial: string): SettingDef => ({ initial, check: (items, name) => single(items, name) });

/** Only the values that mean what tetradb does: `accept(v)` gives the display, or undefined to refuse. */
function fixed(initial: string, accept: (v: string) => string | undefined, why: string): SettingDef {
  return {
    initial,
    check(items, name) {
      const text = single(items, name);
      return accept(text) ?? sqlFail('0A000', `unsupported: ${name} ${JSON.stringify(text)} (${why})`);
    },
  };
}

const UTC_NAMES = ['utc', 'gmt', 'etc/utc', 'etc/gmt', 'z', 'zulu', 'universal', 'utc0', 'gmt0', '0', '+00', '+00:00'];

const SETTINGS: Record<string, SettingDef> = {
  statement_timeout: timeMs(0),
  lock_timeout: timeMs(0),
  idle_in_transaction_session_timeout: timeMs(0),
  idle_session_timeout: timeMs(0),
  client_encoding: fixed('UTF8', (v) => (['utf8', 'utf-8', 'unicode'].includes(v.toLowerCase()) ? 'UTF8' : undefined), 'answers are JSON, which is UTF-8'),
  standard_conforming_strings: bool(true, true, "a backslash in a plain string literal is an ordinary character here; use E'...' for escapes"),
  check_function_bodies: bool(true),
  row_security: bool(true),
  synchronous_commit: oneOf('on', ['on', 'off', 'local', 'remote_write', 'remote_apply']),
  xmloption: oneOf('content', ['content', 'document']),
  client_min_messages: oneOf('notice', ['debug5', 'debug4', 'debug3', 'debug2', 'debug1', 'log', 'notice', 'warning', 'error']),
  default_tablespace: fixed('', (v) => (v === '' || v.toLowerCase() === 'pg_default' ? v : undefined), 'there are no tablespaces'),
  default_table_access_method: fixed('heap', (v) => (v.toLowerCase() === 'heap' ? 'heap' : undefined), 'tables are stored in tetradb\'s own B-trees'),
  default_with_oids: bool(false, false, 'tables declared WITH OIDS are not supported'),
  application_name: anyText(''),
  extra_float_digits: fixed('1', (v) => (/^\s*[+]?[1-3]\s*$/.test(v) ? String(Number(v)) : undefined), 'floats are written in the shortest form that reads back exactly, as with 1 to 3'),
  bytea_output: oneOf('hex', ['escape', 'hex'], ['hex'], 'bytea is written in hex'),
  intervalstyle: oneOf('postgres', ['postgres', 'postgres_verbose', 'sql_standard', 'iso_8601'], ['postgres'], 'intervals are written in the postgres style'),
  datestyle: fixed('ISO, MDY', (v) => (/^\s*iso\s*(,\s*(mdy|us|noneuropean)\s*)?$/i.test(v) ? 'ISO, MDY' : undefined), 'dates are written in ISO form, read month before day'),
  timezone: fixed('UTC', (v) => (UTC_NAMES.includes(v.trim().toLowerCase()) ? 'UTC' : undefined), 'the time zone is UTC'),
  search_path: {
    initial: '"$user", public',
    check(items, name) {
      // Every table is in public; naming it, "$user" (no such schema) and pg_catalog changes nothing.
      const shown: string[] = [];
      for (const item of items) {
        if (item === '' && items.length === 1) return '';
        if (!['public', '$user', 'pg_catalog'].includes(item)) sqlFail('0A000', `unsupported: ${name} naming schema "${item}" (every table is in schema public)`);
        shown.push(item === 'public' || item === 'pg_catalog' ? item : `"${item}"`);
      }
      return shown.join(', ');
    },
  },
};

/** A custom (dotted) setting: one text; RESET makes it empty, as PostgreSQL's placeholder. */
const CUSTOM: SettingDef = { initial: '', check: (items, name) => single(items, name) };

/** PostgreSQL's spellings of a parameter's name (case-insensitive; TIME ZONE is timezone). */
function settingName(name: string): string {
  return name.toLowerCase();
}

/** The names SHOW gives its column where PostgreSQL's are not lower case. */
const SHOWN_NAMES: Record<string, string> = { timezone: 'TimeZone', datestyle: 'DateStyle', intervalstyle: 'IntervalStyle' };

/** The column name of SHOW name: the parameter's own spelling. */
export function shownName(name: string): string {
  const key = settingName(name);
  return SHOWN_NAMES[key] ?? key;
}

/** The request's session. */
export class SqlSession {
  /** The writing request's view (set when it starts writing); undefined in a read-only request, which never calls nextval. */
  view: TxnView | undefined;
  // Made on first use: most requests never touch them.
  #current: Map<string, bigint> | undefined;
  #lastUsed: string | undefined;
  /** The state each sequence nextval or setval left, by key: kept whatever becomes of the request. */
  #advanced: Map<string, Buffer> | undefined;
  #settings: Map<string, string> | undefined;
  /** The request's limits, which statement_timeout changes (within the server's own). */
  readonly #limits: { timeLimitMs: number };
  readonly #serverTimeLimitMs: number;

  constructor(view: TxnView | undefined, limits: { timeLimitMs: number }) {
    this.view = view;
    this.#limits = limits;
    this.#serverTimeLimitMs = limits.timeLimitMs;
  }

  // ---- sequences -------------------------------------------------------------------------------

  /** nextval returned `value` from the sequence at `key`. */
  drew(key: Buffer, value: bigint): void {
    const k = key.toString('latin1');
    (this.#current ??= new Map()).set(k, value);
    this.#lastUsed = k;
    (this.#advanced ??= new Map()).set(k, sequenceStateBytes({ last: value, called: true }));
  }

  /** setval: the state it set; with `called`, currval is the value (lastval does not move to this sequence). */
  setTo(key: Buffer, state: SequenceState): void {
    const k = key.toString('latin1');
    if (state.called) (this.#current ??= new Map()).set(k, state.last);
    (this.#advanced ??= new Map()).set(k, sequenceStateBytes(state));
  }

  /**
   * The states nextval and setval left, by SEQUENCE_TREE key: PostgreSQL never undoes them, so a
   * ROLLBACK puts them back into the transaction and a failed request writes them on its own.
   */
  advanced(): ReadonlyMap<string, Buffer> {
    return this.#advanced ?? EMPTY;
  }

  current(key: Buffer): bigint | undefined {
    return this.#current?.get(key.toString('latin1'));
  }

  /** lastval: the current value of the sequence nextval last drew from. */
  last(): { key: Buffer; value: bigint } | undefined {
    if (this.#lastUsed === undefined) return undefined;
    return { key: Buffer.from(this.#lastUsed, 'latin1'), value: this.#current!.get(this.#lastUsed)! };
  }

  // ---- settings --------------------------------------------------------------------------------

  /** SHOW / current_setting. @throws SQL_ERROR 42704 an unknown parameter (unless `missingOk`: undefined) */
  show(name: string, missingOk = false): string | undefined {
    const key = settingName(name);
    const value = this.#settings?.get(key) ?? SETTINGS[key]?.initial;
    if (value === undefined) return missingOk ? undefined : sqlFail('42704', `unrecognized configuration parameter "${name}"`);
    return value;
  }

  /**
   * SET name TO items (undefined: DEFAULT) / set_config; returns the new display.
   * @throws SQL_ERROR 42704 an unknown parameter, 22023 a bad value, 0A000 one tetradb cannot honour
   */
  set(name: string, items: readonly string[] | undefined): string {
    const key = settingName(name);
    // A dotted name is a custom setting (an application's, `myapp.user_id`): any one text.
    const def = SETTINGS[key] ?? (key.includes('.') ? CUSTOM : sqlFail('42704', `unrecognized configuration parameter "${name}"`));
    const shown = items === undefined ? def.initial : def.check(items, key);
    if (items === undefined && def !== CUSTOM) this.#settings?.delete(key);
    else (this.#settings ??= new Map()).set(key, shown);
    if (key === 'statement_timeout') {
      const ms = items === undefined ? 0 : parseDisplayMs(shown);
      // 0 (none) and anything longer leave the server's limit (TETRA_SQL_TIME_LIMIT_MS) in force.
      this.#limits.timeLimitMs = ms === 0 ? this.#serverTimeLimitMs : this.#serverTimeLimitMs === 0 ? ms : Math.min(ms, this.#serverTimeLimitMs);
    }
    return shown;
  }

  /** RESET ALL. */
  resetAll(): void {
    for (const key of [...(this.#settings?.keys() ?? [])]) this.set(key, undefined);
  }
}

function parseDisplayMs(shown: string): number {
  const m = /^(\d+)([a-z]*)$/.exec(shown)!;
  return Number(m[1]) * (m[2] === '' ? 1 : TIME_UNITS[m[2]!]!);
}

/** SET / RESET / SHOW as read from the tokens (node-sql-parser reads only some of their forms). */
export type SettingStatement =
  | { type: 'setting'; action: 'set'; name: string; items: string[] | undefined }
  | { type: 'setting'; action: 'reset'; name: string | undefined }
  | { type: 'setting'; action: 'show'; name: string };

const EMPTY: ReadonlyMap<string, Buffer> = new Map();


/** A parameter name as written: a word or quoted name, dotted for a custom one. */
function parameterName(tokens: readonly Token[], at: number): { name: string; end: number } {
  const parts: string[] = [];
  let i = at;
  for (;;) {
    const t = tokens[i];
    if (t === undefined || !(t.word !== undefined || (t.text.startsWith('"') && t.text.length >= 2))) return syntaxError(t);
    parts.push(t.word ?? t.text.slice(1, -1).replace(/""/g, '"'));
    i++;
    if (tokens[i]?.text !== '.') return { name: parts.join('.'), end: i };
    i++;
  }
}

/**
 * SET's value list: items separated by commas, each a string literal (its text), a number (with
 * its sign), or a name (lower case unless quoted); `DEFAULT` alone is undefined.
 */
function settingItems(tokens: readonly Token[], at: number): string[] | undefined {
  if (at >= tokens.length) return syntaxError(undefined);
  if (tokens[at]!.word === 'default' && at + 1 === tokens.length) return undefined;
  const items: string[] = [];
  let i = at;
  for (;;) {
    const t = tokens[i];
    if (t === undefined) return syntaxError(t);
    if (t.text.startsWith("'") && t.text.endsWith("'") && t.text.length >= 2) items.push(t.text.slice(1, -1).replace(/''/g, "'"));
    else if ((t.text === '-' || t.text === '+') && /^[0-9.]/.test(tokens[i + 1]?.text ?? '')) items.push((t.text === '-' ? '-' : '') + tokens[++i]!.text);
    else if (/^[0-9.]/.test(t.text)) items.push(t.text);
    else if (t.word !== undefined) items.push(t.word);
    else if (t.text.startsWith('"') && t.text.length >= 2) items.push(t.text.slice(1, -1).replace(/""/g, '"'));
    else return syntaxError(t);
    i++;
    if (i === tokens.length) return items;
    if (tokens[i]!.text !== ',') return syntaxError(tokens[i]);
    i++;
  }
}

/**
 * `SET [SESSION | LOCAL] name {TO | =} value, ... | DEFAULT`, `SET [SESSION | LOCAL] TIME ZONE
 * value`, `RESET name | ALL`, `SHOW name`: read from the statement's tokens (literals as written),
 * or undefined for another statement.
 * @throws SQL_ERROR 42601 syntax, 0A000 the forms tetradb does not have (SET ROLE, SET TRANSACTION, ...)
 */
export function parseSettingStatement(tokens: readonly Token[]): SettingStatement | undefined {
  const w = (i: number): string | undefined => tokens[i]?.word;
  if (w(0) === 'show') {
    if (w(1) === 'all' && tokens.length === 2) sqlFail('0A000', 'unsupported: SHOW ALL (SHOW one parameter, or current_setting())');
    if (w(1) === 'time' && w(2) === 'zone' && tokens.length === 3) return { type: 'setting', action: 'show', name: 'timezone' };
    const { name, end } = parameterName(tokens, 1);
    if (end !== tokens.length) syntaxError(tokens[end]);
    return { type: 'setting', action: 'show', name };
  }
  if (w(0) === 'reset') {
    if (w(1) === 'all' && tokens.length === 2) return { type: 'setting', action: 'reset', name: undefined };
    if (w(1) === 'time' && w(2) === 'zone' && tokens.length === 3) return { type: 'setting', action: 'reset', name: 'timezone' };
    const { name, end } = parameterName(tokens, 1);
    if (end !== tokens.length) syntaxError(tokens[end]);
    return { type: 'setting', action: 'reset', name };
  }
  if (w(0) !== 'set') return undefined;
  let i = 1;
  if (w(i) === 'session' || w(i) === 'local') {
    if (w(i) === 'session' && (w(i + 1) === 'characteristics' || w(i + 1) === 'authorization')) sqlFail('0A000', `unsupported: SET SESSION ${w(i + 1)!.toUpperCase()}`);
    i++;
  }
  if (w(i) === 'role' || w(i) === 'transaction' || w(i) === 'constraints') sqlFail('0A000', `unsupported: SET ${w(i)!.toUpperCase()} (there are no roles; a request is one serializable transaction; constraints are checked at once)`);
  if (w(i) === 'time' && w(i + 1) === 'zone') {
    const at = i + 2;
    if (w(at) === 'local' && at + 1 === tokens.length) return { type: 'setting', action: 'set', name: 'timezone', items: undefined };
    return { type: 'setting', action: 'set', name: 'timezone', items: settingItems(tokens, at) };
  }
  const { name, end } = parameterName(tokens, i);
  if (tokens[end]?.text !== '=' && tokens[end]?.word !== 'to') return syntaxError(tokens[end]);
  return { type: 'setting', action: 'set', name, items: settingItems(tokens, end + 1) };
}

/** The session an expression runs in (ctx.exec, an Exec). */
function sessionOf(ctx: EvalContext): SqlSession {
  const session = (ctx.exec as { session?: SqlSession } | undefined)?.session;
  return session ?? sqlFail('XX000', 'internal: a session function evaluated outside a statement');
}

/** set_config(name, value, is_local): SET name TO 'value'; the new value as SHOW gives it. */
const setConfig: FunctionDef = strict({
  args: ['text', 'text', 'boolean'],
  returns: 'text',
  impl: (a, ctx) => ({ type: 'text', value: sessionOf(ctx).set(a[0]!.value as string, [a[1]!.value as string]) }),
});

/** current_setting(name [, missing_ok]): SHOW name; NULL for an unknown one when missing_ok. */
const currentSetting: FunctionDef = strict(
  { args: ['text'], returns: 'text', impl: (a, ctx) => ({ type: 'text', value: sessionOf(ctx).show(a[0]!.value as string)! }) },
  { args: ['text', 'boolean'], returns: 'text', impl: (a, ctx) => ({ type: 'text', value: sessionOf(ctx).show(a[0]!.value as string, a[1]!.value as boolean) ?? null }) },
);

/** The session functions by name (functions/function-table.ts registers them). */
export const SESSION_FUNCTIONS: Record<string, FunctionDef> = { set_config: setConfig, current_setting: currentSetting };
