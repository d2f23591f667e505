/**
 * The sequence of a serial or identity column: its options as PostgreSQL reads them in
 * `GENERATED ... AS IDENTITY (START WITH 10 INCREMENT BY 5 ...)` (gram.y's SeqOptElem), checked
 * as sequence.c's init_params checks them, and nextval's step with its bounds and CYCLE.
 *
 * The options are read from the statement's tokens before parsing (node-sql-parser reads no
 * option list there), carried to the planner inside the column's marker call as one string
 * (encodeSequenceOptions), and checked against the column's type when the column is defined.
 */

import type { ColumnDef, TableDef } from './catalog.js';
import type { Token } from './sql-rewrite.js';
import { sqlFail, type SqlTypeName } from './sql-types.js';

/** One option as written, in order: the checks that come after depend on both. */
export interface SequenceOption {
  kind: 'as' | 'cache' | 'cycle' | 'increment' | 'maxvalue' | 'minvalue' | 'owned_by' | 'sequence_name' | 'start' | 'restart' | 'logged';
  /** The number as written (sign included), `null` for NO MINVALUE / NO MAXVALUE and a bare RESTART. */
  value?: string | null;
  /** CYCLE (true) or NO CYCLE (false). */
  flag?: boolean;
  /** SEQUENCE NAME's last part; OWNED BY's name as written (only NONE is taken). */
  name?: string;
}

/** A column's sequence, as stored in the catalog (numbers as decimal strings: they are int64). */
export interface SequenceDef {
  /** The name its errors give (absent: `<table>_<column>_seq`, as PostgreSQL names it). */
  name?: string;
  start: string;
  increment: string;
  min: string;
  max: string;
  cycle: boolean;
  /** The first value nextval gives (START, or RESTART's value). */
  first: string;
  /** COMMENT ON SEQUENCE of a serial or identity column's sequence. */
  comment?: string;
  /**
   * A serial column's sequence's own type, once the column's type was changed (ALTER COLUMN ...
   * TYPE leaves the sequence as it was, as PostgreSQL does). Absent: the column's type.
   */
  type?: 'int2' | 'int4' | 'int8';
}

const INT_BOUNDS: Record<'int2' | 'int4' | 'int8', [bigint, bigint]> = {
  int2: [-32768n, 32767n],
  int4: [-2147483648n, 2147483647n],
  int8: [-9223372036854775808n, 9223372036854775807n],
};
/** The integer types' names as PostgreSQL writes them. */
export const TYPE_NAMES = { int2: 'smallint', int4: 'integer', int8: 'bigint' } as const;

/** PostgreSQL's 42601 at token `t` (undefined: the end of the statement). */
export const syntaxError = (t: Token | undefined): never => sqlFail('42601', t === undefined ? 'syntax error at end of input' : `syntax error at or near "${t.text}"`);

/**
 * The option list between `(` at `open` and its `)` at `close` (gram.y's SeqOptList: at least
 * one option, any order, repeats left for the checks).
 * @throws SQL_ERROR 42601 for what the grammar refuses, naming the token as PostgreSQL does
 */
export function parseSequenceOptions(tokens: readonly Token[], open: number, close: number): SequenceOption[] {
  const options: SequenceOption[] = [];
  let i = open + 1;
  const at = (): Token | undefined => (i < close ? tokens[i] : tokens[close]);
  const word = (): string | undefined => (i < close ? tokens[i]!.word : undefined);
  // NumericOnly: a number with an optional sign.
  const number = (): string => {
    let sign = '';
    if (i < close && (tokens[i]!.text === '-' || tokens[i]!.text === '+')) sign = tokens[i++]!.text === '-' ? '-' : '';
    const t = at();
    if (i >= close || !/^[0-9.]/.test(t!.text)) return syntaxError(t);
    i++;
    return sign + t!.text;
  };
  // any_name: dotted names; the last part names the object.
  const anyName = (): string => {
    const parts: string[] = [];
    for (;;) {
      const t = at();
      if (i >= close || !(t!.word !== undefined || t!.text.startsWith('"'))) return syntaxError(t);
      parts.push(t!.word ?? t!.text.slice(1, -1).replace(/""/g, '"'));
      i++;
      if (i < close && tokens[i]!.text === '.') i++;
      else return parts.join('.');
    }
  };
  if (close === open + 1) syntaxError(tokens[close]);
  while (i < close) {
    const w = word();
    i++;
    switch (w) {
      case 'as':
        // SimpleTypename: a type name (a second word for `double precision`, a modifier list).
        options.push({ kind: 'as', name: anyName() });
        if (i < close && tokens[i]!.text === '(') {
          let depth = 0;
          do {
            if (tokens[i]!.text === '(') depth++;
            else if (tokens[i]!.text === ')') depth--;
            i++;
          } while (i < close && depth > 0);
        }
        break;
      case 'cache':
        options.push({ kind: 'cache', value: number() });
        break;
      case 'cycle':
        options.push({ kind: 'cycle', flag: true });
        break;
      case 'no': {
        const next = word();
        if (next === 'cycle') options.push({ kind: 'cycle', flag: false });
        else if (next === 'minvalue' || next === 'maxvalue') options.push({ kind: next, value: null });
        else syntaxError(at());
        i++;
        break;
      }
      case 'increment':
        if (word() === 'by') i++;
        options.push({ kind: 'increment', value: number() });
        break;
      case 'maxvalue':
      case 'minvalue':
        options.push({ kind: w, value: number() });
        break;
      case 'owned':
        if (word() !== 'by') syntaxError(at());
        i++;
        options.push({ kind: 'owned_by', name: anyName() });
        break;
      case 'sequence': {
        if (word() !== 'name') syntaxError(at());
        i++;
        const name = anyName();
        options.push({ kind: 'sequence_name', name: name.slice(name.lastIndexOf('.') + 1) });
        break;
      }
      case 'start':
        if (word() === 'with') i++;
        options.push({ kind: 'start', value: number() });
        break;
      case 'restart': {
        if (word() === 'with') {
          i++;
          options.push({ kind: 'restart', value: number() });
        } else {
          const t = at();
          const numeric = i < close && (/^[0-9.]/.test(t!.text) || t!.text === '-' || t!.text === '+');
          options.push({ kind: 'restart', value: numeric ? number() : null });
        }
        break;
      }
      case 'logged':
        options.push({ kind: 'logged' });
        break;
      default:
        syntaxError(tokens[i - 1]);
    }
  }
  return options;
}

/** The options as one string that survives the parser inside a string literal. */
export function encodeSequenceOptions(options: readonly SequenceOption[]): string {
  return Buffer.from(JSON.stringify(options), 'utf8').toString('base64url');
}

export function decodeSequenceOptions(text: string): SequenceOption[] {
  return JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as SequenceOption[];
}

/** defGetInt64: the option's number as an int64. @throws SQL_ERROR 22P02 not an integer, 22003 past int64 */
function int64(text: string): bigint {
  if (!/^-?\d+$/.test(text)) sqlFail('22P02', `invalid input syntax for type bigint: "${text}"`);
  const v = BigInt(text);
  if (v < INT_BOUNDS.int8[0] || v > INT_BOUNDS.int8[1]) sqlFail('22003', `value "${text}" is out of range for type bigint`);
  return v;
}

/** An integer type a sequence may have (AS). */
export type SequenceType = 'int2' | 'int4' | 'int8';

/** What init_params starts from: nothing (a new sequence), or a sequence being altered. */
interface SequenceBase {
  type: SequenceType;
  def?: SequenceDef;
  /** The altered sequence's state (its last value, as PostgreSQL's last_value: START when never used). */
  state?: SequenceState;
}

/** What init_params makes of the options: the definition, and for ALTER the state it leaves. */
export interface SequenceParams {
  type: SequenceType;
  def: SequenceDef;
  /** The state after RESTART (not yet called), or the altered sequence's unchanged one. */
  state?: SequenceState;
  /** OWNED BY as written (`none`, `t.c`); absent when not given. */
  ownedBy?: string;
  /** SEQUENCE NAME's name (identity columns only). */
  name?: string;
}

/** AS type: smallint, integer or bigint. @throws SQL_ERROR 22023 another type, 42704 an unknown one */
function sequenceType(name: string): SequenceType {
  const t = name.toLowerCase();
  if (t === 'smallint' || t === 'int2') return 'int2';
  if (t === 'integer' || t === 'int' || t === 'int4') return 'int4';
  if (t === 'bigint' || t === 'int8') return 'int8';
  const known = ['text', 'numeric', 'decimal', 'real', 'float4', 'float8', 'double', 'boolean', 'bool', 'date', 'varchar', 'char', 'character', 'timestamp', 'timestamptz', 'time', 'interval', 'json', 'jsonb', 'bytea', 'uuid', 'bit', 'varbit', 'float', 'double.precision'];
  if (!known.includes(t)) sqlFail('42704', `type "${t}" does not exist`);
  return sqlFail('22023', 'sequence type must be smallint, integer, or bigint');
}

/**
 * PostgreSQL's init_params: the options over `base`, checked in its order (the option list first:
 * an option given twice, SEQUENCE NAME outside an identity; then AS, INCREMENT, MAXVALUE,
 * MINVALUE, START, RESTART, the current value against the bounds, CACHE).
 * `identity`: an identity column's options (its type is the column's, so AS is a repeat).
 * @throws SQL_ERROR 42601, 22023, 22P02, 22003, 42704 as PostgreSQL
 */
export function sequenceParams(options: readonly SequenceOption[], base: SequenceBase, identity = false): SequenceParams {
  const seen = new Set<string>(identity ? ['as'] : []);
  const byKind = new Map<string, SequenceOption>();
  let name: string | undefined;
  for (const o of options) {
    if (seen.has(o.kind)) sqlFail('42601', 'conflicting or redundant options');
    seen.add(o.kind);
    if (o.kind === 'sequence_name') {
      if (!identity) sqlFail('42601', 'invalid sequence option SEQUENCE NAME');
      name = o.name;
    } else byKind.set(o.kind, o);
  }
  const current = base.def;
  const asOption = byKind.get('as');
  const type = asOption === undefined ? base.type : sequenceType(asOption.name!);
  // A bound at the old type's limit follows the type (init_params' reset_max_value/reset_min_value).
  const resetMax = current !== undefined && type !== base.type && BigInt(current.max) === INT_BOUNDS[base.type][1];
  const resetMin = current !== undefined && type !== base.type && BigInt(current.min) === INT_BOUNDS[base.type][0];
  const [typeMin, typeMax] = INT_BOUNDS[type];
  const typeName = TYPE_NAMES[type];
  const incrementOption = byKind.get('increment');
  const increment = incrementOption !== undefined ? int64(incrementOption.value!) : current !== undefined ? BigInt(current.increment) : 1n;
  if (increment === 0n) sqlFail('22023', 'INCREMENT must not be zero');
  const cycle = byKind.get('cycle')?.flag ?? current?.cycle ?? false;
  const maxOption = byKind.get('maxvalue');
  const max =
    maxOption?.value != null ? int64(maxOption.value) : maxOption !== undefined || current === undefined || resetMax ? (increment > 0n || resetMax ? typeMax : -1n) : BigInt(current.max);
  if (max < typeMin || max > typeMax) sqlFail('22023', `MAXVALUE (${max}) is out of range for sequence data type ${typeName}`);
  const minOption = byKind.get('minvalue');
  const min =
    minOption?.value != null ? int64(minOption.value) : minOption !== undefined || current === undefined || resetMin ? (increment < 0n || resetMin ? typeMin : 1n) : BigInt(current.min);
  if (min < typeMin || min > typeMax) sqlFail('22023', `MINVALUE (${min}) is out of range for sequence data type ${typeName}`);
  if (min >= max) sqlFail('22023', `MINVALUE (${min}) must be less than MAXVALUE (${max})`);
  const startOption = byKind.get('start');
  const start = startOption !== undefined ? int64(startOption.value!) : current !== undefined ? BigInt(current.start) : increment > 0n ? min : max;
  if (start < min) sqlFail('22023', `START value (${start}) cannot be less than MINVALUE (${min})`);
  if (start > max) sqlFail('22023', `START value (${start}) cannot be greater than MAXVALUE (${max})`);
  const restartOption = byKind.get('restart');
  let state = base.state;
  if (restartOption !== undefined) state = { last: restartOption.value === null ? start : int64(restartOption.value!), called: false };
  else if (current === undefined) state = { last: start, called: false };
  // RESTART's value, or the current one (a bound may have moved past it).
  if (state !== undefined) {
    if (state.last < min) sqlFail('22023', `RESTART value (${state.last}) cannot be less than MINVALUE (${min})`);
    if (state.last > max) sqlFail('22023', `RESTART value (${state.last}) cannot be greater than MAXVALUE (${max})`);
  }
  const cacheOption = byKind.get('cache');
  if (cacheOption !== undefined) {
    const cache = int64(cacheOption.value!);
    if (cache <= 0n) sqlFail('22023', `CACHE (${cache}) must be greater than zero`);
  }
  // A new sequence's first value is in `first`; its state is written by its first nextval.
  const first = current === undefined ? state!.last : BigInt(current.first);
  const def: SequenceDef = { start: String(start), increment: String(increment), min: String(min), max: String(max), cycle, first: String(first) };
  const keptName = name ?? current?.name;
  if (keptName !== undefined) def.name = keptName;
  const params: SequenceParams = { type, def };
  if (current !== undefined && state !== undefined) params.state = state;
  const owned = byKind.get('owned_by');
  if (owned !== undefined) params.ownedBy = owned.name!;
  if (name !== undefined) params.name = name;
  return params;
}

/**
 * The sequence of an identity column of integer type `type`, from its options (none: the
 * defaults), checked in init_params's order.
 * @throws SQL_ERROR 42601 an option given twice (or AS, which the column's type already gives),
 * 22023 the option checks, 22P02 / 22003 a number that is not an int64, 0A000 OWNED BY other
 * than NONE
 */
export function identitySequence(options: readonly SequenceOption[], type: 'int2' | 'int4' | 'int8'): SequenceDef {
  const params = sequenceParams(options, { type }, true);
  if (params.ownedBy !== undefined && params.ownedBy !== 'none') sqlFail('0A000', 'unsupported: OWNED BY in an identity column\'s sequence options (the sequence belongs to its column)');
  return params.def;
}

/** The sequence of a serial or identity column written without options (and of the catalog's older columns). */
export function defaultSequence(type: SqlTypeName): SequenceDef {
  const max = type === 'int2' || type === 'int4' ? INT_BOUNDS[type][1] : INT_BOUNDS.int8[1];
  return { start: '1', increment: '1', min: '1', max: String(max), cycle: false, first: '1' };
}

/**
 * nextval: the value after `last` (undefined: none given yet, so the first), within the bounds,
 * wrapping under CYCLE.
 * @throws SQL_ERROR 2200H past a bound without CYCLE, naming the sequence `name`
 */
export function nextSequenceValue(def: SequenceDef, last: bigint | undefined, name: string): bigint {
  if (last === undefined) return BigInt(def.first);
  const increment = BigInt(def.increment);
  const next = last + increment;
  const max = BigInt(def.max);
  const min = BigInt(def.min);
  if (increment > 0n && next > max) {
    if (!def.cycle) sqlFail('2200H', `nextval: reached maximum value of sequence "${name}" (${max})`);
    return min;
  }
  if (increment < 0n && next < min) {
    if (!def.cycle) sqlFail('2200H', `nextval: reached minimum value of sequence "${name}" (${min})`);
    return max;
  }
  return next;
}

/** A sequence as a table uses it: how it counts, the name its errors give, and the key of its last value in SEQUENCE_TREE. */
export interface TableSequence {
  def: SequenceDef;
  name: string;
  key: Buffer;
}

/** The sequence of a serial or identity column (its options, else its type's defaults). */
export function columnSequence(table: TableDef, col: ColumnDef): TableSequence {
  const def = col.sequence ?? defaultSequence(col.type);
  return { def, name: def.name ?? `${table.name}_${col.name}_seq`, key: Buffer.from(`${table.id}.${col.id}`) };
}

/** The sequence of the hidden row ids of a table without a primary key. */
export function rowIdSequence(table: TableDef): TableSequence {
  return { def: defaultSequence('int8'), name: `${table.name}_rowid`, key: Buffer.from(`${table.id}.rowid`) };
}

/** A sequence's last value as SEQUENCE_TREE keeps it (8 bytes, big-endian). */
export function lastValueBytes(last: bigint): Buffer {
  const bytes = Buffer.alloc(8);
  bytes.writeBigInt64BE(last);
  return bytes;
}

/**
 * A sequence's state as SEQUENCE_TREE keeps it: the last value, and whether nextval returned it
 * already (PostgreSQL's is_called). `setval(s, v, false)` and ALTER SEQUENCE ... RESTART leave a
 * value not yet called: the next nextval returns it.
 */
export interface SequenceState {
  last: bigint;
  called: boolean;
}

/** A state's bytes: the 8-byte last value, and a ninth byte 0 when it is not yet called. */
export function sequenceStateBytes(state: SequenceState): Buffer {
  if (state.called) return lastValueBytes(state.last);
  const bytes = Buffer.alloc(9);
  bytes.writeBigInt64BE(state.last);
  return bytes;
}

/** The state SEQUENCE_TREE keeps (undefined: never used, so the next value is the first). */
export function sequenceStateOf(bytes: Buffer | undefined): SequenceState | undefined {
  return bytes === undefined ? undefined : { last: bytes.readBigInt64BE(0), called: bytes.length === 8 };
}

/** nextval over a state: the value not yet called, else the value after the last. */
export function nextFromState(def: SequenceDef, state: SequenceState | undefined, name: string): bigint {
  if (state !== undefined && !state.called) return state.last;
  return nextSequenceValue(def, state?.last, name);
}

/** CREATE / ALTER / DROP SEQUENCE, read from the tokens (node-sql-parser reads none of them fully). */
export type SequenceStatement =
  | { type: 'sequence'; action: 'create'; name: string; ifNotExists: boolean; options: SequenceOption[] }
  | { type: 'sequence'; action: 'alter'; name: string; ifExists: boolean; options: SequenceOption[]; renameTo?: string }
  | { type: 'sequence'; action: 'drop'; names: string[]; ifExists: boolean; cascade: boolean };

/**
 * The sequence statement the tokens hold, or undefined when they hold another statement.
 * Names keep their schema as written (`public.s`), for relationNameOf to check.
 * @throws SQL_ERROR 42601 what PostgreSQL's grammar refuses, 0A000 forms tetradb does not support
 */
export function parseSequenceStatement(tokens: readonly Token[]): SequenceStatement | undefined {
  const w = (i: number): string | undefined => tokens[i]?.word;
  let i = 0;
  // A dotted name as written (each part unquoted), for relationNameOf.
  const qualifiedName = (): string => {
    const parts: string[] = [];
    for (;;) {
      const t = tokens[i];
      if (t === undefined || !(t.word !== undefined || (t.text.startsWith('"') && t.text.length >= 2))) return syntaxError(t);
      parts.push(t.word ?? `"${t.text.slice(1, -1)}"`);
      i++;
      if (tokens[i]?.text !== '.') return parts.join('.');
      i++;
    }
  };
  const options = (): SequenceOption[] => (i >= tokens.length ? [] : parseSequenceOptions(tokens, i - 1, tokens.length));
  if (w(0) === 'create') {
    i = 1;
    if (w(i) === 'temp' || w(i) === 'temporary') {
      if (w(i + 1) === 'sequence') sqlFail('0A000', 'unsupported: temporary sequences (every sequence here is stored with the tenant)');
      return undefined;
    }
    if (w(i) === 'unlogged' && w(i + 1) === 'sequence') i++;
    if (w(i) !== 'sequence') return undefined;
    i++;
    let ifNotExists = false;
    if (w(i) === 'if' && w(i + 1) === 'not' && w(i + 2) === 'exists') {
      ifNotExists = true;
      i += 3;
    }
    const name = qualifiedName();
    return { type: 'sequence', action: 'create', name, ifNotExists, options: options() };
  }
  if (w(0) === 'alter' && w(1) === 'sequence') {
    i = 2;
    let ifExists = false;
    if (w(i) === 'if' && w(i + 1) === 'exists') {
      ifExists = true;
      i += 2;
    }
    const name = qualifiedName();
    if (w(i) === 'rename' && w(i + 1) === 'to') {
      i += 2;
      const to = qualifiedName();
      if (i < tokens.length) syntaxError(tokens[i]);
      if (to.includes('.')) syntaxError(tokens[i - 2]);
      return { type: 'sequence', action: 'alter', name, ifExists, options: [], renameTo: to.replace(/^"(.*)"$/, '$1') };
    }
    if (w(i) === 'owner' || (w(i) === 'set' && (w(i + 1) === 'schema' || w(i + 1) === 'logged' || w(i + 1) === 'unlogged'))) {
      sqlFail('0A000', `unsupported: ALTER SEQUENCE ... ${w(i) === 'owner' ? 'OWNER TO' : `SET ${w(i + 1)!.toUpperCase()}`} (there are no roles or other schemas; every sequence is logged)`);
    }
    if (i >= tokens.length) syntaxError(undefined);
    return { type: 'sequence', action: 'alter', name, ifExists, options: options() };
  }
  if (w(0) === 'drop' && w(1) === 'sequence') {
    i = 2;
    let ifExists = false;
    if (w(i) === 'if' && w(i + 1) === 'exists') {
      ifExists = true;
      i += 2;
    }
    const names = [qualifiedName()];
    while (tokens[i]?.text === ',') {
      i++;
      names.push(qualifiedName());
    }
    let cascade = false;
    if (w(i) === 'cascade' || w(i) === 'restrict') cascade = w(i++) === 'cascade';
    if (i < tokens.length) syntaxError(tokens[i]);
    return { type: 'sequence', action: 'drop', names, ifExists, cascade };
  }
  return undefined;
}

/** What `ALTER TABLE t ALTER [COLUMN] c ...` does to an identity column (exec/identity-ddl.ts). */
export type IdentityChange =
  | { kind: 'add'; generation: 'always' | 'by default'; options: SequenceOption[] }
  | { kind: 'set'; generation: 'always' | 'by default' | undefined; options: SequenceOption[] }
  | { kind: 'drop'; ifExists: boolean };

/**
 * `ALTER TABLE [IF EXISTS] [ONLY] t ALTER [COLUMN] c` followed by `ADD GENERATED {ALWAYS | BY
 * DEFAULT} AS IDENTITY [(options)]`, `SET GENERATED {ALWAYS | BY DEFAULT}` / `SET <option>` /
 * `RESTART [[WITH] n]` (any number, in any order), or `DROP IDENTITY [IF EXISTS]`, as the one
 * action of the statement (pg_dump writes it so); undefined for anything else.
 * @throws SQL_ERROR 42601 for what PostgreSQL's grammar refuses there
 */
export function parseIdentityAlter(tokens: readonly Token[]): { table: string; ifExists: boolean; column: string; change: IdentityChange } | undefined {
  const w = (i: number): string | undefined => tokens[i]?.word;
  const name = (i: number): string | undefined => tokens[i]?.word ?? (tokens[i]?.text.startsWith('"') ? tokens[i]!.text.slice(1, -1).replace(/""/g, '"') : undefined);
  if (w(0) !== 'alter' || w(1) !== 'table') return undefined;
  let i = 2;
  let ifExists = false;
  if (w(i) === 'if' && w(i + 1) === 'exists') {
    ifExists = true;
    i += 2;
  }
  if (w(i) === 'only') i++;
  let table = name(i);
  if (table === undefined) return undefined;
  i++;
  if (tokens[i]?.text === '.') {
    table = `${table}.${name(i + 1) ?? ''}`;
    i += 2;
  }
  if (w(i) !== 'alter') return undefined;
  i++;
  if (w(i) === 'column') i++;
  const column = name(i);
  if (column === undefined) return undefined;
  i++;
  const rest = tokens.slice(i);
  const r = (k: number): string | undefined => rest[k]?.word;
  // `ALWAYS` or `BY DEFAULT` at k: the generation, and where what follows starts.
  const generationAt = (k: number): ['always' | 'by default', number] =>
    r(k) === 'always' ? ['always', k + 1] : r(k) === 'by' && r(k + 1) === 'default' ? ['by default', k + 2] : syntaxError(rest[k]);
  if (r(0) === 'add' && r(1) === 'generated') {
    const [generation, at] = generationAt(2);
    let k = at;
    if (r(k) !== 'as') return syntaxError(rest[k]);
    // ADD GENERATED ALWAYS AS (expr) STORED is not an identity: left to the other readers.
    if (r(k + 1) !== 'identity') return undefined;
    k += 2;
    let options: SequenceOption[] = [];
    if (rest[k]?.text === '(') {
      let close = k;
      for (let depth = 0; close < rest.length; close++) {
        if (rest[close]!.text === '(') depth++;
        else if (rest[close]!.text === ')' && --depth === 0) break;
      }
      if (close >= rest.length) return syntaxError(undefined);
      options = parseSequenceOptions(rest, k, close);
      k = close + 1;
    }
    if (k !== rest.length) syntaxError(rest[k]);
    return { table, ifExists, column, change: { kind: 'add', generation, options } };
  }
  if (r(0) === 'drop' && r(1) === 'identity') {
    const dropIfExists = r(2) === 'if' && r(3) === 'exists';
    const end = dropIfExists ? 4 : 2;
    if (end !== rest.length) syntaxError(rest[end]);
    return { table, ifExists, column, change: { kind: 'drop', ifExists: dropIfExists } };
  }
  if (!((r(0) === 'set' && (r(1) === 'generated' || SET_OPTION_WORDS.has(r(1) ?? ''))) || r(0) === 'restart')) return undefined;
  // SET GENERATED ..., SET <option>, RESTART: the options without their SETs, read as a list.
  let generation: 'always' | 'by default' | undefined;
  const optionTokens: Token[] = [];
  for (let k = 0; k < rest.length; ) {
    if (r(k) === 'set' && r(k + 1) === 'generated') {
      [generation, k] = generationAt(k + 2);
      continue;
    }
    if (r(k) === 'set') {
      if (!SET_OPTION_WORDS.has(r(k + 1) ?? '')) syntaxError(rest[k + 1]);
      k++;
      continue;
    }
    optionTokens.push(rest[k]!);
    k++;
  }
  const options = optionTokens.length === 0 ? [] : parseSequenceOptions([{ text: '(', space: '' }, ...optionTokens, { text: ')', space: '' }], 0, optionTokens.length + 1);
  return { table, ifExists, column, change: { kind: 'set', generation, options } };
}

/** The options `SET <option>` may name on an identity column (PostgreSQL's alter_identity_column_option). */
const SET_OPTION_WORDS: ReadonlySet<string> = new Set(['increment', 'start', 'minvalue', 'maxvalue', 'no', 'cache', 'cycle']);
