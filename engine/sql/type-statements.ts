import type { Token } from './sql-rewrite.js';
import { sqlFail } from './sql-types.js';

/**
 * CREATE TYPE ... AS ENUM, ALTER TYPE and DROP TYPE, which node-sql-parser reads only in part
 * (CREATE TYPE ... AS ENUM, without quoted names): read here from the statement's tokens into a
 * statement of our own, executed by exec/type-ddl.ts.
 */
export type TypeStatement =
  | { type: 'enum_type'; action: 'create'; name: string; labels: string[] }
  | { type: 'enum_type'; action: 'drop'; names: string[]; ifExists: boolean; cascade: boolean }
  | { type: 'enum_type'; action: 'add_value'; name: string; label: string; ifNotExists: boolean; before?: string; after?: string }
  | { type: 'enum_type'; action: 'rename_value'; name: string; from: string; to: string }
  | { type: 'enum_type'; action: 'rename'; name: string; to: string };

function syntaxError(t: Token | undefined): never {
  return sqlFail('42601', t === undefined ? 'syntax error at end of input' : `syntax error at or near "${t.text}"`);
}

/** A string literal's value (`'it''s'`), or undefined for another token. */
function stringValue(t: Token | undefined): string | undefined {
  if (t === undefined || !t.text.startsWith("'") || !t.text.endsWith("'") || t.text.length < 2) return undefined;
  return t.text.slice(1, -1).replace(/''/g, "'");
}

/** An identifier: a plain word lower-cased, a quoted one as written. */
function identifier(t: Token | undefined): string | undefined {
  if (t === undefined) return undefined;
  if (t.word !== undefined) return t.word;
  if (t.text.startsWith('"') && t.text.endsWith('"') && t.text.length >= 2) return t.text.slice(1, -1).replace(/""/g, '"');
  return undefined;
}

/**
 * The statement, or undefined when the tokens are not a TYPE statement.
 * @throws SQL_ERROR 42601 a malformed one, 0A000 a form other than enums (composite, range, base
 * and shell types), 3F000 a schema other than public
 */
export function parseTypeStatement(tokens: readonly Token[]): TypeStatement | undefined {
  const w = (k: number): string | undefined => tokens[k]?.word;
  if (w(1) !== 'type' || !(w(0) === 'create' || w(0) === 'alter' || w(0) === 'drop')) return undefined;
  let i = 2;
  const name = (): string => {
    let n = identifier(tokens[i]) ?? syntaxError(tokens[i]);
    i++;
    if (tokens[i]?.text === '.') {
      if (n !== 'public') sqlFail('3F000', `schema "${n}" does not exist`);
      i++;
      n = identifier(tokens[i]) ?? syntaxError(tokens[i]);
      i++;
    }
    return n;
  };
  const label = (): string => {
    const v = stringValue(tokens[i]) ?? syntaxError(tokens[i]);
    i++;
    return v;
  };
  const end = (): void => {
    if (i < tokens.length) syntaxError(tokens[i]);
  };
  if (w(0) === 'create') {
    const typeName = name();
    if (w(i) !== 'as') {
      if (i >= tokens.length) sqlFail('0A000', 'unsupported: shell types (CREATE TYPE name without a definition); only enum types can be created');
      return sqlFail('0A000', 'unsupported: base types (CREATE TYPE name (...)); only enum types can be created');
    }
    i++;
    if (w(i) !== 'enum') {
      if (w(i) === 'range') sqlFail('0A000', 'unsupported: range types; only enum types can be created');
      if (tokens[i]?.text === '(') sqlFail('0A000', 'unsupported: composite types; only enum types can be created');
      syntaxError(tokens[i]);
    }
    i++;
    if (tokens[i]?.text !== '(') syntaxError(tokens[i]);
    i++;
    const labels: string[] = [];
    if (tokens[i]?.text !== ')') {
      for (;;) {
        labels.push(label());
        if (tokens[i]?.text === ',') i++;
        else break;
      }
    }
    if (tokens[i]?.text !== ')') syntaxError(tokens[i]);
    i++;
    end();
    return { type: 'enum_type', action: 'create', name: typeName, labels };
  }
  if (w(0) === 'drop') {
    let ifExists = false;
    if (w(i) === 'if' && w(i + 1) === 'exists') {
      ifExists = true;
      i += 2;
    }
    const names = [name()];
    while (tokens[i]?.text === ',') {
      i++;
      names.push(name());
    }
    let cascade = false;
    if (w(i) === 'cascade' || w(i) === 'restrict') {
      cascade = w(i) === 'cascade';
      i++;
    }
    end();
    return { type: 'enum_type', action: 'drop', names, ifExists, cascade };
  }
  const typeName = name();
  if (w(i) === 'add' && w(i + 1) === 'value') {
    i += 2;
    let ifNotExists = false;
    if (w(i) === 'if' && w(i + 1) === 'not' && w(i + 2) === 'exists') {
      ifNotExists = true;
      i += 3;
    }
    const value = label();
    let place: { before?: string; after?: string } = {};
    if (w(i) === 'before' || w(i) === 'after') {
      const where = w(i)!;
      i++;
      place = where === 'before' ? { before: label() } : { after: label() };
    }
    end();
    return { type: 'enum_type', action: 'add_value', name: typeName, label: value, ifNotExists, ...place };
  }
  if (w(i) === 'rename' && w(i + 1) === 'value') {
    i += 2;
    const from = label();
    if (w(i) !== 'to') syntaxError(tokens[i]);
    i++;
    const to = label();
    end();
    return { type: 'enum_type', action: 'rename_value', name: typeName, from, to };
  }
  if (w(i) === 'rename' && w(i + 1) === 'to') {
    i += 2;
    const to = identifier(tokens[i]) ?? syntaxError(tokens[i]);
    i++;
    end();
    return { type: 'enum_type', action: 'rename', name: typeName, to };
  }
  return sqlFail('0A000', `unsupported: ALTER TYPE ... ${tokens[i]?.text.toUpperCase() ?? ''} (only ADD VALUE, RENAME VALUE and RENAME TO)`);
}
