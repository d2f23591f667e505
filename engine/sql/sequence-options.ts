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
}

const INT_BOUNDS: Record<'int2' | 'int4' | 'int8', [bigint, bigint]> = {
  int2: [-32768n, 32767n],
  int4: [-2147483648n, 2147483647n],
  int8: [-9223372036854775808n, 9223372036854775807n],
};
const TYPE_NAMES = { int2: 'smallint', int4: 'integer', int8: 'bigint' } as const;

const syntaxError = (t: Token | undefined): never => sqlFail('42601', t === undefined ? 'syntax error at end of input' : `syntax error at or near "${t.text}"`);

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

/**
 * The sequence of an identity column of integer type `type`, from its options (none: the
 * defaults), checked in init_params's order.
 * @throws SQL_ERROR 42601 an option given twice (or AS, which the column's type already gives),
 * 22023 the option checks, 22P02 / 22003 a number that is not an int64, 0A000 OWNED BY other
 * than NONE
 */
export function identitySequence(options: readonly SequenceOption[], type: 'int2' | 'int4' | 'int8'): SequenceDef {
  // PostgreSQL gives the identity's sequence `AS <column type>` ahead of the options written.
  const seen = new Set<string>(['as']);
  let name: string | undefined;
  const byKind = new Map<string, SequenceOption>();
  for (const o of options) {
    if (seen.has(o.kind)) sqlFail('42601', 'conflicting or redundant options');
    seen.add(o.kind);
    if (o.kind === 'sequence_name') name = o.name;
    else byKind.set(o.kind, o);
  }
  const owned = byKind.get('owned_by');
  if (owned !== undefined && owned.name !== 'none') sqlFail('0A000', 'unsupported: OWNED BY in an identity column\'s sequence options (the sequence belongs to its column)');
  const [typeMin, typeMax] = INT_BOUNDS[type];
  const typeName = TYPE_NAMES[type];
  const incrementOption = byKind.get('increment');
  const increment = incrementOption === undefined ? 1n : int64(incrementOption.value!);
  if (increment === 0n) sqlFail('22023', 'INCREMENT must not be zero');
  const cycle = byKind.get('cycle')?.flag ?? false;
  const maxOption = byKind.get('maxvalue');
  const max = maxOption?.value != null ? int64(maxOption.value) : increment > 0n ? typeMax : -1n;
  if (max < typeMin || max > typeMax) sqlFail('22023', `MAXVALUE (${max}) is out of range for sequence data type ${typeName}`);
  const minOption = byKind.get('minvalue');
  const min = minOption?.value != null ? int64(minOption.value) : increment > 0n ? 1n : typeMin;
  if (min < typeMin || min > typeMax) sqlFail('22023', `MINVALUE (${min}) is out of range for sequence data type ${typeName}`);
  if (min >= max) sqlFail('22023', `MINVALUE (${min}) must be less than MAXVALUE (${max})`);
  const startOption = byKind.get('start');
  const start = startOption === undefined ? (increment > 0n ? min : max) : int64(startOption.value!);
  if (start < min) sqlFail('22023', `START value (${start}) cannot be less than MINVALUE (${min})`);
  if (start > max) sqlFail('22023', `START value (${start}) cannot be greater than MAXVALUE (${max})`);
  const restartOption = byKind.get('restart');
  const first = restartOption === undefined || restartOption.value === null ? start : int64(restartOption.value!);
  if (first < min) sqlFail('22023', `RESTART value (${first}) cannot be less than MINVALUE (${min})`);
  if (first > max) sqlFail('22023', `RESTART value (${first}) cannot be greater than MAXVALUE (${max})`);
  const cacheOption = byKind.get('cache');
  if (cacheOption !== undefined) {
    const cache = int64(cacheOption.value!);
    if (cache <= 0n) sqlFail('22023', `CACHE (${cache}) must be greater than zero`);
  }
  const def: SequenceDef = { start: String(start), increment: String(increment), min: String(min), max: String(max), cycle, first: String(first) };
  if (name !== undefined) def.name = name;
  return def;
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

/** The last value SEQUENCE_TREE keeps (undefined: none given yet). */
export function lastValueOf(bytes: Buffer | undefined): bigint | undefined {
  return bytes === undefined ? undefined : bytes.readBigInt64BE(0);
}
