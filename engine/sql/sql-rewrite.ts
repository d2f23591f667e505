import type { AstNode } from './expression-eval.js';
import { sqlFail } from './sql-types.js';

/**
 * What node-sql-parser (PostgreSQL mode) cannot read, made readable before it parses: the text
 * is split into statements and tokenised (strings, quoted identifiers, dollar quotes and comments
 * are kept whole, so nothing inside them is ever rewritten), then
 *  - statements the parser has no grammar for become ASTs here: SAVEPOINT, ROLLBACK TO
 *    [SAVEPOINT], RELEASE [SAVEPOINT], ALTER TABLE ... RENAME [COLUMN] a TO b,
 *    INSERT INTO t DEFAULT VALUES;
 *  - token rewrites keep the meaning in a form it reads: `FETCH FIRST n ROWS ONLY` -> `LIMIT n`;
 *    `INTERSECT ALL` / `EXCEPT ALL` -> the plain operator plus a marker column in the right-hand
 *    SELECT (removed by the planner, which then keeps duplicates); `DELETE FROM t RETURNING`
 *    -> `DELETE FROM t WHERE TRUE RETURNING`; `REFERENCES t` without columns ->
 *    `REFERENCES t (<primary key marker>)`.
 */

/** The marker column name of an ALL set operation's right-hand SELECT. */
export const SET_ALL_MARKER = '__tetra_set_all__';
/** The column list meaning "the referenced table's primary key". */
export const PRIMARY_KEY_MARKER = '__tetra_primary_key__';

interface Token {
  text: string;
  /** Lower-cased word for keywords and plain identifiers; undefined for everything else. */
  word?: string;
  /** Whitespace and comments after the token (kept as they were). */
  space: string;
}

/** One statement of a request: its text for the parser, or an AST built here. */
export type Prepared = { text: string; offset: number } | { ast: AstNode & Record<string, unknown> };

function tokenize(sql: string): { tokens: Token[]; lead: string } {
  const tokens: Token[] = [];
  let i = 0;
  const n = sql.length;
  const skipSpace = (): string => {
    const start = i;
    for (;;) {
      if (i < n && /\s/.test(sql[i]!)) i++;
      else if (sql.startsWith('--', i)) {
        const end = sql.indexOf('\n', i);
        i = end < 0 ? n : end + 1;
      } else if (sql.startsWith('/*', i)) {
        let depth = 1;
        i += 2;
        while (i < n && depth > 0) {
          if (sql.startsWith('/*', i)) ((depth += 1), (i += 2));
          else if (sql.startsWith('*/', i)) ((depth -= 1), (i += 2));
          else i++;
        }
      } else break;
    }
    return sql.slice(start, i);
  };
  const lead = skipSpace();
  while (i < n) {
    const start = i;
    const c = sql[i]!;
    let word: string | undefined;
    if (c === "'" || ((c === 'e' || c === 'E') && sql[i + 1] === "'")) {
      const backslash = c !== "'";
      i += backslash ? 2 : 1;
      while (i < n) {
        if (backslash && sql[i] === '\\') i += 2;
        else if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
        else if (sql[i] === "'") {
          i++;
          break;
        } else i++;
      }
    } else if (c === '"') {
      i++;
      while (i < n) {
        if (sql[i] === '"' && sql[i + 1] === '"') i += 2;
        else if (sql[i] === '"') {
          i++;
          break;
        } else i++;
      }
    } else if (c === '$' && /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.test(sql.slice(i, i + 64))) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 64))![0];
      const end = sql.indexOf(tag, i + tag.length);
      i = end < 0 ? n : end + tag.length;
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      while (i < n && /[A-Za-z0-9_$\u0080-\uffff]/.test(sql[i]!)) i++;
      word = sql.slice(start, i).toLowerCase();
    } else if (/[0-9]/.test(c)) {
      while (i < n && /[0-9.eE]/.test(sql[i]!)) i++;
    } else i++;
    const text = sql.slice(start, i);
    tokens.push({ text, ...(word !== undefined ? { word } : {}), space: skipSpace() });
  }
  return { tokens, lead };
}

const render = (tokens: Token[]): string => tokens.map((t) => t.text + t.space).join('');

/** An identifier token's name: unquoted names fold to lower case. */
function ident(t: Token | undefined): string | undefined {
  if (t === undefined) return undefined;
  if (t.word !== undefined) return t.word;
  if (t.text.startsWith('"') && t.text.endsWith('"') && t.text.length >= 2) return t.text.slice(1, -1).replace(/""/g, '"');
  return undefined;
}

/** Splits a request into statements and prepares each (see the module comment). */
export function prepareStatements(sql: string): Prepared[] {
  const { tokens, lead } = tokenize(sql);
  const out: Prepared[] = [];
  let offset = lead.length;
  let current: Token[] = [];
  let depth = 0;
  const flush = (): void => {
    if (current.length > 0) out.push(prepareOne(current, offset));
    current = [];
  };
  let pos = lead.length;
  for (const t of tokens) {
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    if (t.text === ';' && depth <= 0) {
      pos += t.text.length + t.space.length;
      flush();
      offset = pos;
      continue;
    }
    current.push(t);
    pos += t.text.length + t.space.length;
  }
  flush();
  return out;
}

function prepareOne(tokens: Token[], offset: number): Prepared {
  const w = (i: number): string | undefined => tokens[i]?.word;
  const trailing = (from: number): boolean => from === tokens.length;
  // SAVEPOINT name / RELEASE [SAVEPOINT] name / ROLLBACK [WORK|TRANSACTION] TO [SAVEPOINT] name
  if (w(0) === 'savepoint' && tokens.length === 2) return { ast: savepointAst('SAVEPOINT', ident(tokens[1])) };
  if (w(0) === 'release') {
    const at = w(1) === 'savepoint' ? 2 : 1;
    if (trailing(at + 1)) return { ast: savepointAst('RELEASE', ident(tokens[at])) };
  }
  if (w(0) === 'rollback') {
    let at = 1;
    if (w(at) === 'work' || w(at) === 'transaction') at++;
    if (w(at) === 'to') {
      at++;
      if (w(at) === 'savepoint') at++;
      if (trailing(at + 1)) return { ast: savepointAst('ROLLBACK TO', ident(tokens[at])) };
    }
  }
  // ALTER TABLE [IF EXISTS] t RENAME [COLUMN] a TO b
  if (w(0) === 'alter' && w(1) === 'table') {
    let at = 2;
    if (w(at) === 'if' && w(at + 1) === 'exists') at += 2;
    const table = ident(tokens[at]);
    if (table !== undefined && w(at + 1) === 'rename' && w(at + 2) !== 'to') {
      let c = at + 2;
      if (w(c) === 'column') c++;
      const from = ident(tokens[c]);
      if (from !== undefined && w(c + 1) === 'to' && ident(tokens[c + 2]) !== undefined && trailing(c + 3)) {
        return { ast: { type: 'alter', keyword: 'table', table: [{ db: null, table }], expr: [{ action: 'rename', resource: 'column', old_column: from, new_column: ident(tokens[c + 2]) }] } };
      }
    }
  }
  // INSERT INTO t DEFAULT VALUES [RETURNING ...]
  if (w(0) === 'insert' && w(1) === 'into' && w(3) === 'default' && w(4) === 'values') {
    const table = ident(tokens[2]);
    if (table !== undefined && trailing(5)) {
      return { ast: { type: 'insert', table: [{ db: null, table, as: null }], columns: [], values: { type: 'values', values: [{ type: 'expr_list', value: [] }] }, returning: null } };
    }
    if (table !== undefined && w(5) === 'returning') {
      // Parse `INSERT INTO t VALUES () RETURNING ...` is not possible either: keep the RETURNING
      // list by parsing a stand-in statement and swapping its values.
      const rest = render(tokens.slice(5));
      return { text: `INSERT INTO ${tokens[2]!.text} VALUES (DEFAULT) ${rest}`.replace(/\s+$/, ''), offset: -1 };
    }
  }
  const rewritten = rewriteTokens(tokens);
  return { text: render(rewritten).replace(/\s+$/, ''), offset: rewritten === tokens ? offset : -1 };
}

function savepointAst(action: string, name: string | undefined): AstNode & Record<string, unknown> {
  if (name === undefined) return sqlFail('42601', `syntax error: ${action} needs a savepoint name`);
  return { type: 'transaction', expr: { action: { type: 'origin', value: action }, savepoint: name } };
}

/** Token rewrites; returns the same array when nothing changed. */
function rewriteTokens(tokens: Token[]): Token[] {
  let out = tokens;
  const copy = (): Token[] => (out === tokens ? (out = tokens.map((t) => ({ ...t }))) : out);
  const isDelete = tokens[0]?.word === 'delete';
  let sawWhere = false;
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = out[i]!;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    const w = t.word;
    if ((w === 'intersect' || w === 'except') && out[i + 1]?.word === 'all') {
      const o = copy();
      o[i + 1] = { text: '', space: '' };
      // The right-hand member's SELECT gets the marker as its first column.
      let j = i + 2;
      while (j < o.length && o[j]!.text === '(') j++;
      if (o[j]?.word !== 'select') return sqlFail('0A000', `unsupported: ${w.toUpperCase()} ALL followed by something other than SELECT`);
      o[j] = { ...o[j]!, space: `${o[j]!.space || ' '}'${SET_ALL_MARKER}' AS ${SET_ALL_MARKER}, ` };
      continue;
    }
    if (w === 'fetch' && (out[i + 1]?.word === 'first' || out[i + 1]?.word === 'next')) {
      let j = i + 2;
      let count = '1';
      if (out[j] !== undefined && /^[0-9]+$/.test(out[j]!.text)) count = out[j++]!.text;
      else if (out[j]?.text.startsWith('$')) count = out[j++]!.text;
      if ((out[j]?.word === 'row' || out[j]?.word === 'rows') && out[j + 1]?.word === 'only') {
        const o = copy();
        o[i] = { text: 'LIMIT', space: ' ' };
        o[i + 1] = { text: count, space: o[j + 1]!.space || ' ' };
        for (let k = i + 2; k <= j + 1; k++) o[k] = { text: '', space: '' };
        i = j + 1;
        continue;
      }
    }
    if (isDelete && depth === 0 && w === 'where') sawWhere = true;
    if (isDelete && depth === 0 && w === 'returning' && !sawWhere) {
      const o = copy();
      o[i] = { ...t, text: `WHERE TRUE ${t.text}` };
      sawWhere = true;
      continue;
    }
    if (w === 'references' && out[i + 1] !== undefined && out[i + 2]?.text !== '(' && !(out[i + 2]?.text === '.' )) {
      const o = copy();
      o[i + 1] = { ...o[i + 1]!, space: ` (${PRIMARY_KEY_MARKER})${o[i + 1]!.space || ' '}` };
    }
  }
  return out === tokens ? tokens : out.filter((t) => t.text !== '' || t.space !== '');
}
