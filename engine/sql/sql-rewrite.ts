import type { AstNode } from './expression-eval.js';
import { clauseEnd, rewriteGrammarGaps } from './sql-grammar-gaps.js';
import { protectLiterals, restoreLiterals, type LiteralValues } from './sql-literals.js';
import { sqlFail } from './sql-types.js';
import { parseIdentityAlter, parseSequenceStatement } from './sequence-options.js';
import { parseTypeStatement } from './type-statements.js';
import { parseSettingStatement } from './session.js';
import { parseCommentStatement } from './comments.js';

/**
 * What node-sql-parser (PostgreSQL mode) cannot read, made readable before it parses: the text
 * is split into statements and tokenised (strings, quoted identifiers, dollar quotes and comments
 * are kept whole, so nothing inside them is ever rewritten), then
 *  - literals the parser would misread are made safe (sql-literals.ts): the statement carries the
 *    values to put back into its AST;
 *  - statements the parser has no grammar for become ASTs here: SAVEPOINT, ROLLBACK TO
 *    [SAVEPOINT], RELEASE [SAVEPOINT], ALTER TABLE ... RENAME [COLUMN] a TO b,
 *    INSERT INTO t DEFAULT VALUES;
 *  - token rewrites keep the meaning in a form it reads: `FETCH FIRST n ROWS ONLY` -> `LIMIT n`;
 *    `INTERSECT ALL` / `EXCEPT ALL` -> the plain operator plus a marker column in the right-hand
 *    SELECT (removed by the planner, which then keeps duplicates); `DELETE FROM t RETURNING`
 *    -> `DELETE FROM t WHERE TRUE RETURNING`; `REFERENCES t` without columns ->
 *    `REFERENCES t (<primary key marker>)`; `LIMIT NULL` -> `LIMIT ALL`, `LIMIT <expr>` ->
 *    `LIMIT (SELECT <expr>)`; aggregates with OVER the parser cannot read (WINDOW_CALL_PREFIX),
 *    INSERT ... ON CONFLICT without a column list (ALL_COLUMNS_MARKER), DELETE ... USING ...
 *    RETURNING (USING_MARKER); window frames and base window names (WINDOW_SPEC_MARKER);
 *  - operators and clauses of sql-grammar-gaps.ts: ^, ~~ and its forms, GROUP BY (),
 *    SET (a, b) = ..., OFFSET <expression>, NATURAL after an alias, $n::type.
 */

/** The marker column name of an ALL set operation's right-hand SELECT. */
export const SET_ALL_MARKER = '__tetra_set_all__';
/** Prefix of an aggregate called with DISTINCT (`sum(DISTINCT x)` -> `__tetra_distinct__sum(x)`). */
export const DISTINCT_PREFIX = '__tetra_distinct__';
/** The stand-in argument of `cume_dist()` / `percent_rank()`, which the parser cannot read bare. */
export const NO_ARGUMENT = '__tetra_noarg__';
// count, string_agg and array_agg take DISTINCT natively (count's DISTINCT (e) form excepted).
const AGGREGATES_WITH_DISTINCT = new Set(['sum', 'avg', 'min', 'max', 'bool_and', 'bool_or', 'every', 'stddev', 'stddev_samp', 'stddev_pop', 'variance', 'var_samp', 'var_pop', 'jsonb_agg', 'json_agg', 'jsonb_object_agg', 'json_object_agg']);

/**
 * Prefix of the marker argument that names an aggregate called with OVER, or with FILTER and
 * OVER: the parser reads OVER only after count/sum/avg/min/max and its own window functions, and
 * never after FILTER, so `bool_and(x) FILTER (WHERE c) OVER w` goes through ntile as
 * `ntile(__tetra_over__bool_and, x, __tetra_filter__, (c)) OVER w`.
 */
export const WINDOW_CALL_PREFIX = '__tetra_over__';
/** In a WINDOW_CALL_PREFIX call, separates the arguments from the FILTER condition after it. */
export const FILTER_MARKER = '__tetra_filter__';
// The calls the parser reads with OVER as they are (without FILTER).
const NATIVE_OVER = new Set(['count', 'sum', 'avg', 'min', 'max', 'row_number', 'rank', 'dense_rank', 'ntile', 'lag', 'lead', 'first_value', 'last_value', 'nth_value']);

/**
 * The marker a window specification carries its frame and its base window in (WINDOW_SPEC_MARKER
 * and rewriteWindowSpecs).
 */
export const WINDOW_SPEC_MARKER = '__tetra_window__';

/**
 * A column list made only of this name stands for "no column list": the parser reads ON CONFLICT
 * only after one (`INSERT INTO t VALUES (1, 2) ON CONFLICT ...` -> `INSERT INTO t (<marker>,
 * <marker>) VALUES ...`, one per value, as the parser checks the count).
 */
export const ALL_COLUMNS_MARKER = '__tetra_all_columns__';

/**
 * In `DELETE FROM t, <marker>, items`, stands for USING; without RETURNING, the alias of the select
 * list of the `WHERE EXISTS (SELECT 1 AS <marker> FROM items WHERE cond)` USING becomes (see rewriteDelete).
 */
export const USING_MARKER = '__tetra_using__';

/** The column list meaning "the referenced table's primary key". */
export const PRIMARY_KEY_MARKER = '__tetra_primary_key__';
/**
 * `INSERT ... ON CONFLICT (cols) WHERE predicate DO ...`, which the parser cannot read: the
 * predicate (an index predicate, for inferring a partial unique index) moves to the end of the
 * statement as `RETURNING ..., (predicate) AS "<marker>"`, read back by the insert (dml.ts
 * conflictWhere), which removes it from RETURNING.
 */
export const CONFLICT_WHERE_MARKER = '__tetra_conflict_where__';
/**
 * `ON CONFLICT ON CONSTRAINT name`, which the parser cannot read: becomes the target list
 * `("<marker><name>")`, resolved by the insert (dml.ts) to the constraint's columns.
 */
export const CONFLICT_CONSTRAINT_MARKER = '__tetra_conflict_constraint__';

/** One token of the pre-pass. */
export interface Token {
  text: string;
  /** Lower-cased word for keywords and plain identifiers; undefined for everything else. */
  word?: string;
  /** Whitespace and comments after the token (kept as they were). */
  space: string;
}

/**
 * One statement of a request: its text for the parser (with the literal values its AST needs
 * back, see restoreLiterals), or an AST built here.
 */
export type Prepared = { text: string; offset: number; literals?: LiteralValues; locking?: LockingClause[] } | { ast: AstNode & Record<string, unknown> };

/**
 * A SELECT's locking clause (`FOR UPDATE | NO KEY UPDATE | SHARE | KEY SHARE [OF t, ...] [NOWAIT |
 * SKIP LOCKED]`), which the parser cannot read: taken off the end of the statement here, checked
 * by the engine (sql-engine.ts checkLocking) and otherwise without effect, since a request's
 * writes run one at a time per tenant (docs/sql.md, Transactions and concurrency).
 */
export interface LockingClause {
  /** FOR UPDATE, FOR NO KEY UPDATE, FOR SHARE or FOR KEY SHARE, as PostgreSQL's messages name it. */
  strength: string;
  /** The relations named after OF (lower-cased unless quoted). */
  of: string[];
}

const LOCK_STRENGTHS: Array<[string[], string]> = [
  [['update'], 'FOR UPDATE'],
  [['no', 'key', 'update'], 'FOR NO KEY UPDATE'],
  [['share'], 'FOR SHARE'],
  [['key', 'share'], 'FOR KEY SHARE'],
];

/** The locking clauses at the end of a SELECT (depth 0), and the tokens before them. */
function takeLocking(tokens: Token[]): { tokens: Token[]; locking: LockingClause[] | undefined } {
  const first = tokens[0]?.word;
  if (first !== 'select' && first !== 'with' && tokens[0]?.text !== '(') return { tokens, locking: undefined };
  let depth = 0;
  let start = -1;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (depth === 0 && t.word === 'for' && LOCK_STRENGTHS.some(([words]) => words.every((w, k) => tokens[i + 1 + k]?.word === w))) {
      start = i;
      break;
    }
  }
  if (start < 0) return { tokens, locking: undefined };
  const locking: LockingClause[] = [];
  let i = start;
  while (i < tokens.length) {
    if (tokens[i]?.word !== 'for') return { tokens, locking: undefined };
    const hit = LOCK_STRENGTHS.find(([words]) => words.every((w, k) => tokens[i + 1 + k]?.word === w));
    if (hit === undefined) return { tokens, locking: undefined };
    i += 1 + hit[0].length;
    const of: string[] = [];
    if (tokens[i]?.word === 'of') {
      i++;
      for (;;) {
        const name = tokens[i];
        if (name === undefined || (name.word === undefined && !name.text.startsWith('"'))) return { tokens, locking: undefined };
        of.push(name.word ?? name.text.slice(1, -1).replace(/""/g, '"'));
        i++;
        if (tokens[i]?.text !== ',') break;
        i++;
      }
    }
    if (tokens[i]?.word === 'nowait') i++;
    else if (tokens[i]?.word === 'skip' && tokens[i + 1]?.word === 'locked') i += 2;
    locking.push({ strength: hit[1], of });
  }
  const kept = tokens.slice(0, start);
  if (kept.length === 0) return { tokens, locking: undefined };
  kept[kept.length - 1] = { ...kept[kept.length - 1]!, space: '' };
  return { tokens: kept, locking };
}

const NUMBER_TOKEN = /\d*(?:\.\d*)?(?:[eE][+-]?\d+)?/y;

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
    } else if ((c === 'u' || c === 'U') && sql[i + 1] === '&' && sql[i + 2] === "'") {
      // U&'...': a standard string (no backslash escapes end it), decoded in sql-literals.ts.
      i += 3;
      while (i < n) {
        if (sql[i] === "'" && sql[i + 1] === "'") i += 2;
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
    } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? '') && !/[A-Za-z0-9_"\])\]]/.test(sql[i - 1] ?? ''))) {
      // A number: digits, a fraction, an exponent (`1e-5` is one token, its sign no operator).
      NUMBER_TOKEN.lastIndex = i;
      i += NUMBER_TOKEN.exec(sql)![0].length;
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

/**
 * The text with only its literals made safe, for a caller that parses without the other rewrites
 * (it puts the values back with restoreLiterals).
 */
export function protectLiteralText(sql: string): { text: string; literals: LiteralValues | undefined } {
  const { tokens, lead } = tokenize(sql);
  const { tokens: out, literals } = protectLiterals(tokens);
  return { text: out === tokens ? sql : lead + render(out), literals };
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

function prepareOne(source: Token[], offset: number): Prepared {
  // SET / RESET / SHOW (session.ts): read from the tokens with their literals as written.
  const first = source[0]?.word;
  if (first === 'set' || first === 'reset' || first === 'show') {
    const setting = parseSettingStatement(source);
    if (setting !== undefined) return { ast: setting as unknown as AstNode & Record<string, unknown> };
  }
  // COMMENT ON ... IS 'text' (comments.ts), its literal as written.
  if (first === 'comment') {
    const comment = parseCommentStatement(source);
    if (comment !== undefined) return { ast: comment as unknown as AstNode & Record<string, unknown> };
  }
  // CREATE [OR REPLACE] ... VIEW and ALTER VIEW (views.ts), read from the tokens as written.
  if (first === 'create' || (first === 'alter' && source[1]?.word === 'view')) {
    const statement = first === 'create' ? createViewStatement(source, offset) : alterViewStatement(source);
    if (statement !== undefined) return { ast: statement as unknown as AstNode & Record<string, unknown> };
  }
  const { tokens, literals } = protectLiterals(source);
  // An AST built here gets its protected names (a quoted identifier with a backslash) back too.
  const built = (ast: AstNode & Record<string, unknown>): Prepared => {
    if (literals !== undefined) restoreLiterals(ast, literals);
    return { ast };
  };
  const w = (i: number): string | undefined => tokens[i]?.word;
  const trailing = (from: number): boolean => from === tokens.length;
  // SAVEPOINT name / RELEASE [SAVEPOINT] name / ROLLBACK [WORK|TRANSACTION] TO [SAVEPOINT] name
  if (w(0) === 'savepoint' && tokens.length === 2) return built(savepointAst('SAVEPOINT', ident(tokens[1])));
  if (w(0) === 'release') {
    const at = w(1) === 'savepoint' ? 2 : 1;
    if (trailing(at + 1)) return built(savepointAst('RELEASE', ident(tokens[at])));
  }
  if (w(0) === 'rollback') {
    let at = 1;
    if (w(at) === 'work' || w(at) === 'transaction') at++;
    if (w(at) === 'to') {
      at++;
      if (w(at) === 'savepoint') at++;
      if (trailing(at + 1)) return built(savepointAst('ROLLBACK TO', ident(tokens[at])));
    }
  }
  // CREATE TYPE ... AS ENUM, ALTER TYPE, DROP TYPE (type-statements.ts)
  if ((w(0) === 'create' || w(0) === 'alter' || w(0) === 'drop') && w(1) === 'type') {
    const statement = parseTypeStatement(tokens);
    if (statement !== undefined) return built(statement as unknown as AstNode & Record<string, unknown>);
  }
  // CREATE / ALTER / DROP SEQUENCE, and ALTER TABLE's identity actions (sequence-options.ts)
  if ((w(0) === 'create' || w(0) === 'alter' || w(0) === 'drop') && tokens.slice(1, 3).some((t) => t.word === 'sequence')) {
    const statement = parseSequenceStatement(tokens);
    if (statement !== undefined) return built(statement as unknown as AstNode & Record<string, unknown>);
  }
  if (w(0) === 'alter' && w(1) === 'table' && tokens.some((t) => t.word === 'identity' || t.word === 'generated' || t.word === 'restart')) {
    const identity = parseIdentityAlter(tokens);
    if (identity !== undefined) return built({ type: 'identity_alter', ...identity });
  }
  // ALTER TABLE [IF EXISTS] [ONLY] [schema.]t RENAME [COLUMN] a TO b
  if (w(0) === 'alter' && w(1) === 'table') {
    let at = 2;
    const ifExists = w(at) === 'if' && w(at + 1) === 'exists';
    if (ifExists) at += 2;
    if (w(at) === 'only' && tokens[at + 1] !== undefined && w(at + 1) !== 'rename') at++;
    // schema.t (alterTable checks the schema)
    let db: string | null = null;
    if (tokens[at + 1]?.text === '.' && ident(tokens[at + 2]) !== undefined) {
      db = ident(tokens[at])!;
      at += 2;
    }
    const table = ident(tokens[at]);
    if (table !== undefined && w(at + 1) === 'rename' && w(at + 2) !== 'to') {
      let c = at + 2;
      if (w(c) === 'column') c++;
      const from = ident(tokens[c]);
      if (from !== undefined && w(c + 1) === 'to' && ident(tokens[c + 2]) !== undefined && trailing(c + 3)) {
        return built({ type: 'alter', keyword: 'table', if_exists: ifExists ? 'IF EXISTS' : null, table: [{ db, table }], expr: [{ action: 'rename', resource: 'column', old_column: from, new_column: ident(tokens[c + 2]) }] });
      }
    }
  }
  // INSERT INTO t DEFAULT VALUES [RETURNING ...]
  if (w(0) === 'insert' && w(1) === 'into' && w(3) === 'default' && w(4) === 'values') {
    const table = ident(tokens[2]);
    if (table !== undefined && trailing(5)) {
      return built({ type: 'insert', table: [{ db: null, table, as: null }], columns: [], values: { type: 'values', values: [{ type: 'expr_list', value: [] }] }, returning: null });
    }
    if (table !== undefined && w(5) === 'returning') {
      // Parse `INSERT INTO t VALUES () RETURNING ...` is not possible either: keep the RETURNING
      // list by parsing a stand-in statement and swapping its values.
      const rest = render(tokens.slice(5));
      return { text: `INSERT INTO ${tokens[2]!.text} VALUES (DEFAULT) ${rest}`.replace(/\s+$/, ''), offset: -1, ...(literals !== undefined ? { literals } : {}) };
    }
  }
  // Window specifications first: the frame offsets they move into their marker are then
  // rewritten by the grammar gaps like any other expression ($1::int, ^).
  const { tokens: unlocked, locking } = takeLocking(tokens);
  const rewritten = rewriteDistinct(rewriteDelete(rewriteValues(rewriteWindowCalls(rewriteTokens(rewriteInsertColumns(rewriteConflictWhere(rewriteConflictConstraint(rewriteGrammarGaps(rewriteWindowSpecs(unlocked))))))))));
  const text = render(rewritten).replace(/\s+$/, '');
  const prepared: Prepared = literals === undefined ? { text, offset: rewritten === source ? offset : -1 } : { text, offset: -1, literals };
  if (locking !== undefined) prepared.locking = locking;
  return prepared;
}

const syntaxErrorAt = (t: Token | undefined): never => sqlFail('42601', `syntax error at ${t === undefined ? 'end of input' : `or near "${t.text}"`}`);

/**
 * `CREATE [OR REPLACE] [TEMP | TEMPORARY] [RECURSIVE] VIEW [schema.]name [(column, ...)] AS query
 * [WITH [CASCADED | LOCAL] CHECK OPTION]` (views.ts CreateViewStatement): the query is prepared
 * as a statement of its own (the parser reads only a plain SELECT after CREATE VIEW ... AS, no
 * UNION or VALUES), for the engine to parse. Undefined for any other CREATE.
 */
function createViewStatement(tokens: Token[], offset: number): Record<string, unknown> | undefined {
  const w = (i: number): string | undefined => tokens[i]?.word;
  let at = 1;
  const replace = w(at) === 'or' && w(at + 1) === 'replace';
  if (replace) at += 2;
  const temporary = w(at) === 'temp' || w(at) === 'temporary';
  if (temporary) at++;
  const recursive = w(at) === 'recursive';
  if (recursive) at++;
  if (w(at) !== 'view') return undefined;
  const { db, name, next } = relationName(tokens, at + 1);
  at = next;
  let columns: string[] | null = null;
  if (tokens[at]?.text === '(') {
    columns = [];
    at++;
    for (;;) {
      const c = ident(tokens[at]);
      if (c === undefined) return syntaxErrorAt(tokens[at]);
      columns.push(c);
      at++;
      if (tokens[at]?.text === ',') at++;
      else if (tokens[at]?.text === ')') {
        at++;
        break;
      } else return syntaxErrorAt(tokens[at]);
    }
  }
  if (w(at) === 'with' && tokens[at + 1]?.text === '(') return sqlFail('0A000', 'unsupported: CREATE VIEW ... WITH (options)');
  if (w(at) !== 'as') return syntaxErrorAt(tokens[at]);
  at++;
  let end = tokens.length;
  let checkOption: string | null = null;
  if (w(end - 1) === 'option' && w(end - 2) === 'check') {
    let k = end - 3;
    let level = 'cascaded';
    if (w(k) === 'cascaded' || w(k) === 'local') level = w(k--)!;
    if (w(k) === 'with') {
      checkOption = level;
      end = k;
    }
  }
  const query = tokens.slice(at, end);
  if (query.length === 0) return syntaxErrorAt(undefined);
  let start = offset;
  for (let i = 0; i < at; i++) start += tokens[i]!.text.length + tokens[i]!.space.length;
  return { type: 'create_view', replace, temporary, recursive, db, name, columns, checkOption, definition: render(query).trim(), query: prepareOne(query, start) };
}

/**
 * `[schema.]name` at `at`: the name folded to lower case, quoted or not, as tables' names are
 * (scope.ts tableName), and where the tokens after it start.
 * @throws SQL_ERROR 42601 no name there
 */
function relationName(tokens: Token[], at: number): { db: string | null; name: string; next: number } {
  let db: string | null = null;
  let name = ident(tokens[at]);
  if (name !== undefined && tokens[at + 1]?.text === '.') {
    db = name;
    at += 2;
    name = ident(tokens[at]);
  }
  if (name === undefined) return syntaxErrorAt(tokens[at]);
  return { db, name: name.toLowerCase(), next: at + 1 };
}

/** `ALTER VIEW [IF EXISTS] [schema.]v RENAME TO w | RENAME [COLUMN] a TO b` (views.ts AlterViewStatement). */
function alterViewStatement(tokens: Token[]): Record<string, unknown> | undefined {
  const w = (i: number): string | undefined => tokens[i]?.word;
  let at = 2;
  const ifExists = w(at) === 'if' && w(at + 1) === 'exists';
  if (ifExists) at += 2;
  const { db, name, next } = relationName(tokens, at);
  at = next;
  if (w(at) !== 'rename') return sqlFail('0A000', `unsupported: ALTER VIEW ... ${tokens[at]?.text.toUpperCase() ?? ''} (RENAME TO and RENAME COLUMN are available)`);
  at++;
  if (w(at) === 'to') {
    const to = ident(tokens[at + 1]);
    if (to === undefined || tokens.length !== at + 2) return syntaxErrorAt(tokens[to === undefined ? at + 1 : at + 2]);
    return { type: 'alter_view', ifExists, db, name, to: to.toLowerCase() };
  }
  if (w(at) === 'column') at++;
  const column = ident(tokens[at]);
  const to = ident(tokens[at + 2]);
  if (column === undefined || w(at + 1) !== 'to' || to === undefined || tokens.length !== at + 3) return syntaxErrorAt(tokens[at + 3] ?? tokens[at]);
  return { type: 'alter_view', ifExists, db, name, column, to };
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
    // LIMIT NULL (no limit) and LIMIT <expression>: the parser reads a number, a parameter, ALL
    // or a parenthesised query there, so an expression becomes a scalar subquery.
    if (w === 'limit' && out[i + 1] !== undefined) {
      const end = clauseEnd(out, i);
      const expr = out.slice(i + 1, end);
      if (expr.length === 1 && expr[0]!.word === 'null') {
        const o = copy();
        o[i + 1] = { ...o[i + 1]!, text: 'ALL' };
        continue;
      }
      // A number or ALL the parser reads; a parenthesised query too. Anything else, a lone
      // column name or `(a)` included, is an expression (PostgreSQL: 42P10 for a column).
      const plain = expr.length === 1 && (/^[0-9.]/.test(expr[0]!.text) || expr[0]!.word === 'all');
      // Nothing before the clause ends (`LIMIT )`, `LIMIT LIMIT`): left for the parser to refuse.
      const query = expr.length > 0 && expr[0]!.text === '(' && ['select', 'with', 'values'].includes(expr[1]?.word ?? '') && expr[expr.length - 1]!.text === ')';
      if (expr.length > 0 && !plain && !query) {
        const o = copy();
        o[i + 1] = { ...o[i + 1]!, text: `(SELECT ${o[i + 1]!.text}` };
        o[end - 1] = { ...o[end - 1]!, text: `${o[end - 1]!.text})` };
        i = end - 1;
        continue;
      }
    }
    // agg(DISTINCT x) for aggregates the parser only reads without DISTINCT (and count(DISTINCT (e)),
    // which it reads as a call of a function named distinct).
    const distinctParen = out[i + 2]?.word === 'distinct' && out[i + 3]?.text === '(';
    if (w !== undefined && (AGGREGATES_WITH_DISTINCT.has(w) || ((w === 'count' || w === 'string_agg' || w === 'array_agg') && distinctParen)) && out[i + 1]?.text === '(' && out[i + 2]?.word === 'distinct') {
      const o = copy();
      o[i] = { ...t, text: `${DISTINCT_PREFIX}${w}` };
      o[i + 2] = { text: '', space: '' };
      continue;
    }
    // Window functions without arguments other than rank/row_number/dense_rank.
    if ((w === 'cume_dist' || w === 'percent_rank') && out[i + 1]?.text === '(' && out[i + 2]?.text === ')') {
      // The parser reads OVER only after its own list of window functions: go through ntile.
      const o = copy();
      o[i] = { ...t, text: 'ntile' };
      o[i + 1] = { ...o[i + 1]!, text: `(${NO_ARGUMENT}${w}` };
      continue;
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

/** `INSERT INTO t VALUES | SELECT | WITH ... ON CONFLICT` without a column list: see ALL_COLUMNS_MARKER. */
function rewriteInsertColumns(tokens: Token[]): Token[] {
  if (tokens[0]?.word !== 'insert' || tokens[1]?.word !== 'into' || tokens[2]?.word === undefined) return tokens;
  // After the PARTITION list OVERRIDING becomes (sql-grammar-gaps.ts), which the parser reads first.
  const at = tokens[3]?.word === 'partition' ? closingParen(tokens, 4) + 1 : 3;
  const body = tokens[at]?.word;
  if (at <= 0 || (body !== 'values' && body !== 'select' && body !== 'with')) return tokens;
  let depth = 0;
  let conflict = false;
  for (let i = at; i < tokens.length && !conflict; i++) {
    if (tokens[i]!.text === '(') depth++;
    else if (tokens[i]!.text === ')') depth--;
    else if (depth === 0 && tokens[i]!.word === 'on' && tokens[i + 1]?.word === 'conflict') conflict = true;
  }
  if (!conflict) return tokens;
  let count = 1;
  if (body === 'values') {
    const close = tokens[at + 1]?.text === '(' ? closingParen(tokens, at + 1) : -1;
    if (close < 0) return tokens;
    let d = 0;
    for (let i = at + 2; i < close; i++) {
      if (tokens[i]!.text === '(') d++;
      else if (tokens[i]!.text === ')') d--;
      else if (d === 0 && tokens[i]!.text === ',') count++;
    }
  }
  const columns = `(${Array.from({ length: count }, () => ALL_COLUMNS_MARKER).join(', ')})`;
  return [...tokens.slice(0, at), { text: columns, space: ' ' }, ...tokens.slice(at)];
}

/** `ON CONFLICT ON CONSTRAINT name` -> `ON CONFLICT ("<CONFLICT_CONSTRAINT_MARKER>name")`. */
function rewriteConflictConstraint(tokens: Token[]): Token[] {
  if (tokens[0]?.word !== 'insert') return tokens;
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.word !== 'on' || tokens[i + 1]?.word !== 'conflict' || tokens[i + 2]?.word !== 'on' || tokens[i + 3]?.word !== 'constraint') continue;
    const name = tokens[i + 4];
    if (name === undefined || (name.word === undefined && !name.text.startsWith('"'))) return tokens;
    const written = name.word ?? name.text.slice(1, -1).replace(/""/g, '"');
    const target: Token = { text: `("${CONFLICT_CONSTRAINT_MARKER}${written.replace(/"/g, '""')}")`, space: name.space };
    return [...tokens.slice(0, i + 1), { ...tokens[i + 1]!, space: ' ' }, target, ...tokens.slice(i + 5)];
  }
  return tokens;
}

/** `ON CONFLICT (cols) WHERE predicate DO ...` -> `ON CONFLICT (cols) DO ... RETURNING ..., (predicate) AS CONFLICT_WHERE_MARKER`. */
function rewriteConflictWhere(tokens: Token[]): Token[] {
  if (tokens[0]?.word !== 'insert') return tokens;
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    if (depth !== 0 || t.word !== 'on' || tokens[i + 1]?.word !== 'conflict' || tokens[i + 2]?.text !== '(') continue;
    const close = closingParen(tokens, i + 2);
    if (close < 0 || tokens[close + 1]?.word !== 'where') return tokens;
    // The predicate runs to the DO at this depth.
    let d = 0;
    let end = close + 2;
    for (; end < tokens.length; end++) {
      const u = tokens[end]!;
      if (u.text === '(') d++;
      else if (u.text === ')') d--;
      else if (d === 0 && u.word === 'do') break;
    }
    if (end >= tokens.length || end === close + 2) return tokens;
    const predicate = tokens.slice(close + 2, end);
    let returning = -1;
    d = 0;
    for (let k = end; k < tokens.length; k++) {
      const u = tokens[k]!;
      if (u.text === '(') d++;
      else if (u.text === ')') d--;
      else if (d === 0 && u.word === 'returning') returning = k;
    }
    const last = tokens[tokens.length - 1]!;
    const tail: Token[] = [
      ...(returning < 0 ? [{ text: 'RETURNING', word: 'returning', space: ' ' }] : [{ text: ',', space: ' ' }]),
      { text: '(', space: '' },
      ...predicate.slice(0, -1),
      { ...predicate[predicate.length - 1]!, space: '' },
      { text: ')', space: ' ' },
      { text: 'AS', word: 'as', space: ' ' },
      { text: `"${CONFLICT_WHERE_MARKER}"`, space: '' },
    ];
    return [...tokens.slice(0, close), { ...tokens[close]!, space: ' ' }, ...tokens.slice(end, -1), { ...last, space: ' ' }, ...tail];
  }
  return tokens;
}

/** Index of the `)` closing the `(` at `open`, or -1. */
function closingParen(tokens: Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (tokens[i]!.text === '(') depth++;
    else if (tokens[i]!.text === ')' && --depth === 0) return i;
  }
  return -1;
}

/** `name(args) [FILTER (WHERE c)] OVER` the parser cannot read -> the ntile form of WINDOW_CALL_PREFIX. */
function rewriteWindowCalls(tokens: Token[]): Token[] {
  let out = tokens;
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    if (t.word === undefined || out[i + 1]?.text !== '(' || out[i - 1]?.text === '.') continue;
    const close = closingParen(out, i + 1);
    if (close < 0) continue;
    let over = close + 1;
    let condition: Token[] | undefined;
    if (out[over]?.word === 'filter' && out[over + 1]?.text === '(' && out[over + 2]?.word === 'where') {
      const end = closingParen(out, over + 1);
      if (end < 0) continue;
      condition = out.slice(over + 3, end);
      over = end + 1;
    }
    const name = t.text.toLowerCase();
    if (out[over]?.word !== 'over' || (condition === undefined && NATIVE_OVER.has(name))) continue;
    const args = out.slice(i + 2, close);
    let depth = 0;
    for (let k = 0; k < args.length; k++) {
      if (args[k]!.text === '(') depth++;
      else if (args[k]!.text === ')') depth--;
      else if (depth === 0 && args[k]!.word === 'order' && args[k + 1]?.word === 'by') sqlFail('0A000', 'aggregate ORDER BY is not implemented for window functions');
    }
    const call: Token[] = [
      { text: 'ntile', space: '' },
      { text: '(', space: '' },
      { text: `${WINDOW_CALL_PREFIX}${name}`, space: '' },
      ...(args.length > 0 ? [{ text: ',', space: ' ' }, ...args] : []),
      ...(condition !== undefined ? [{ text: ',', space: ' ' }, { text: FILTER_MARKER, space: '' }, { text: ',', space: ' ' }, { text: '(', space: '' }, ...condition, { text: ')', space: '' }] : []),
      { text: ')', space: out[over - 1]!.space || ' ' },
    ];
    out = [...out.slice(0, i), ...call, ...out.slice(over)];
  }
  return out;
}

const FRAME_MODES = new Set(['rows', 'range', 'groups']);
const SPEC_KEYWORDS = new Set(['partition', 'order', ...FRAME_MODES]);

/**
 * Window specifications, `OVER (...)` and `WINDOW w AS (...)`: the parser reads a frame only in a
 * few forms (not `N PRECEDING` as its end, not RANGE or GROUPS, no EXCLUDE, no expressions or
 * parameters as offsets) and no base window name (`OVER (w ROWS ...)`; it drops `OVER (w)`
 * silently). Both leave the text as one marker call appended to the ORDER BY list, whose
 * arguments the planner reads (exec/window-spec.ts):
 * `OVER (w ORDER BY x RANGE BETWEEN $1 PRECEDING AND CURRENT ROW EXCLUDE TIES)` ->
 * `OVER (ORDER BY x, __tetra_window__('w', 'range', 'preceding', ($1), 'current row', NULL, 'ties'))`.
 * Every frame goes this way, so the planner has one reader of frames. The frame's shape is
 * checked here, where PostgreSQL's grammar checks it (42P20).
 */
function rewriteWindowSpecs(tokens: Token[]): Token[] {
  let out = moveWindowClauses(tokens);
  for (let i = 0; i < out.length; i++) {
    let open = -1;
    if (out[i]!.word === 'over' && out[i + 1]?.text === '(') open = i + 1;
    else if ((out[i]!.word === 'window' || (out[i]!.text === ',' && inWindowClause(out, i))) && ident(out[i + 1]) !== undefined && out[i + 2]?.word === 'as' && out[i + 3]?.text === '(') open = i + 3;
    if (open < 0) continue;
    const close = closingParen(out, open);
    if (close < 0) continue;
    const spec = windowSpecTokens(out.slice(open + 1, close));
    if (spec === undefined) continue;
    out = [...out.slice(0, open), { text: '(', space: '' }, ...spec, { text: ')', space: out[close]!.space }, ...out.slice(close + 1)];
  }
  return out;
}

/**
 * The parser reads a WINDOW clause only after ORDER BY / LIMIT / OFFSET, and silently drops those
 * when they follow it (`... WINDOW w AS (...) ORDER BY x` came back unordered): the clause moves
 * to the end of its SELECT block, where it means the same.
 */
function moveWindowClauses(tokens: Token[]): Token[] {
  let out = tokens;
  for (let i = 0; i < out.length; i++) {
    if (out[i]!.word !== 'window' || ident(out[i + 1]) === undefined || out[i + 2]?.word !== 'as' || out[i + 3]?.text !== '(') continue;
    let end = closingParen(out, i + 3) + 1;
    while (end > 0 && out[end]?.text === ',' && ident(out[end + 1]) !== undefined && out[end + 2]?.word === 'as' && out[end + 3]?.text === '(') end = closingParen(out, end + 3) + 1;
    const next = out[end]?.word;
    if (end <= 0 || (next !== 'order' && next !== 'limit' && next !== 'offset' && next !== 'fetch')) continue;
    let blockEnd = end;
    for (let depth = 0; blockEnd < out.length; blockEnd++) {
      const t = out[blockEnd]!;
      if (t.text === '(') depth++;
      else if (t.text === ')' && --depth < 0) break;
      else if (depth === 0 && (t.text === ';' || t.word === 'union' || t.word === 'intersect' || t.word === 'except' || t.word === 'for')) break;
    }
    const clause = out.slice(i, end);
    const before = out[blockEnd - 1]!;
    out = [...out.slice(0, i), ...out.slice(end, blockEnd - 1), { ...before, space: before.space || ' ' }, ...clause.slice(0, -1), { ...clause[clause.length - 1]!, space: before.space }, ...out.slice(blockEnd)];
    i = blockEnd - 1;
  }
  return out;
}

/** True when the `,` at `at` separates two definitions of a WINDOW clause (`WINDOW a AS (...), b AS (...)`). */
function inWindowClause(tokens: Token[], at: number): boolean {
  if (tokens[at - 1]?.text !== ')') return false;
  let open = at - 1;
  for (let depth = 0; open >= 0; open--) {
    if (tokens[open]!.text === ')') depth++;
    else if (tokens[open]!.text === '(' && --depth === 0) break;
  }
  return tokens[open - 1]?.word === 'as' && ident(tokens[open - 2]) !== undefined && (tokens[open - 3]?.word === 'window' || (tokens[open - 3]?.text === ',' && inWindowClause(tokens, open - 3)));
}

type ParsedBound = { kind: string; offset?: Token[] };

/** The tokens inside a window specification's parentheses with its base name and frame as the marker; undefined when it has neither. */
function windowSpecTokens(inner: Token[]): Token[] | undefined {
  let from = 0;
  let base: string | undefined;
  const first = inner[0];
  if (first !== undefined && (first.word === undefined ? first.text.startsWith('"') : !SPEC_KEYWORDS.has(first.word))) {
    base = ident(first);
    from = 1;
  }
  // The frame starts at the last ROWS / RANGE / GROUPS of this level that the rest reads as a
  // frame (a column may be named rows).
  let frame: { at: number; mode: string; start: ParsedBound; end: ParsedBound; exclude: string } | undefined;
  for (let k = inner.length - 1; k >= from && frame === undefined; k--) {
    const w = inner[k]!.word;
    if (w === undefined || !FRAME_MODES.has(w) || depthAt(inner, k) !== 0) continue;
    const parsed = parseFrame(inner, k + 1);
    if (parsed !== undefined) frame = { at: k, mode: w, ...parsed };
  }
  if (base === undefined && frame === undefined) return undefined;
  const body = inner.slice(from, frame?.at ?? inner.length);
  let ordered = false;
  for (let k = 0, depth = 0; k < body.length; k++) {
    if (body[k]!.text === '(') depth++;
    else if (body[k]!.text === ')') depth--;
    else if (depth === 0 && body[k]!.word === 'order' && body[k + 1]?.word === 'by') ordered = true;
  }
  const str = (s: string | undefined): string => (s === undefined ? 'NULL' : `'${s.replace(/'/g, "''")}'`);
  // An offset's own spacing, comments dropped (a `--` comment would swallow the closing parenthesis).
  const offset = (b: ParsedBound | undefined): string => (b?.offset === undefined ? 'NULL' : `(${b.offset.map((t, i) => t.text + (i < b.offset!.length - 1 && t.space !== '' ? ' ' : '')).join('')})`);
  const args = [str(base), str(frame?.mode), str(frame?.start.kind), offset(frame?.start), str(frame?.end.kind), offset(frame?.end), str(frame?.exclude)];
  const last = body[body.length - 1];
  const lead: Token[] = body.length === 0 ? [] : [...body.slice(0, -1), { ...last!, space: ordered ? '' : last!.space || ' ' }];
  return [...lead, { text: `${ordered ? ', ' : 'ORDER BY '}${WINDOW_SPEC_MARKER}(${args.join(', ')})`, space: '' }];
}

/** Parenthesis depth just before token `k` of a list. */
function depthAt(tokens: Token[], k: number): number {
  let depth = 0;
  for (let i = 0; i < k; i++) {
    if (tokens[i]!.text === '(') depth++;
    else if (tokens[i]!.text === ')') depth--;
  }
  return depth;
}

/**
 * `BETWEEN <bound> AND <bound> [EXCLUDE ...]` or `<bound> [EXCLUDE ...]` from `at` to the end;
 * undefined when the tokens are not that.
 * @throws SQL_ERROR 42P20 for the bounds PostgreSQL's grammar refuses
 */
function parseFrame(tokens: Token[], at: number): { start: ParsedBound; end: ParsedBound; exclude: string } | undefined {
  let start: ParsedBound | undefined;
  let end: ParsedBound | undefined;
  let next: number;
  const between = tokens[at]?.word === 'between';
  if (between) {
    const s = parseBound(tokens, at + 1);
    if (s === undefined || tokens[s.next]?.word !== 'and') return undefined;
    const e = parseBound(tokens, s.next + 1);
    if (e === undefined) return undefined;
    start = s.bound;
    end = e.bound;
    next = e.next;
  } else {
    const s = parseBound(tokens, at);
    if (s === undefined) return undefined;
    start = s.bound;
    end = { kind: 'current row' };
    next = s.next;
  }
  let exclude = 'no others';
  if (tokens[next]?.word === 'exclude') {
    const a = tokens[next + 1]?.word;
    const b = tokens[next + 2]?.word;
    if (a === 'current' && b === 'row') exclude = 'current row';
    else if (a === 'no' && b === 'others') exclude = 'no others';
    else if (a === 'group' || a === 'ties') exclude = a;
    else return undefined;
    next += a === 'group' || a === 'ties' ? 2 : 3;
  }
  if (next !== tokens.length) return undefined;
  // PostgreSQL's grammar (gram.y, frame_extent) refuses these.
  if (start.kind === 'unbounded following') sqlFail('42P20', 'frame start cannot be UNBOUNDED FOLLOWING');
  if (!between && start.kind === 'following') sqlFail('42P20', 'frame starting from following row cannot end with current row');
  if (end.kind === 'unbounded preceding') sqlFail('42P20', 'frame end cannot be UNBOUNDED PRECEDING');
  if (start.kind === 'current row' && end.kind === 'preceding') sqlFail('42P20', 'frame starting from current row cannot have preceding rows');
  if (start.kind === 'following' && (end.kind === 'preceding' || end.kind === 'current row')) sqlFail('42P20', 'frame starting from following row cannot have preceding rows');
  return { start, end, exclude };
}

/** One frame bound from `at`: UNBOUNDED PRECEDING | UNBOUNDED FOLLOWING | CURRENT ROW | <expr> PRECEDING | <expr> FOLLOWING. */
function parseBound(tokens: Token[], at: number): { bound: ParsedBound; next: number } | undefined {
  const a = tokens[at]?.word;
  const b = tokens[at + 1]?.word;
  if (a === 'unbounded' && (b === 'preceding' || b === 'following')) return { bound: { kind: `unbounded ${b}` }, next: at + 2 };
  if (a === 'current' && b === 'row') return { bound: { kind: 'current row' }, next: at + 2 };
  for (let k = at, depth = 0; k < tokens.length; k++) {
    const t = tokens[k]!;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (depth === 0 && (t.word === 'preceding' || t.word === 'following')) {
      if (k === at) return undefined;
      return { bound: { kind: t.word, offset: tokens.slice(at, k) }, next: k + 1 };
    }
  }
  return undefined;
}

/** Keywords and operators that end an operand of a comparison (scanning outwards from it). */
const OPERAND_STOP = new Set([
  'and', 'or', 'not', 'then', 'when', 'else', 'end', 'from', 'where', 'group', 'order', 'having', 'limit', 'offset', 'union', 'intersect', 'except',
  'as', 'asc', 'desc', 'nulls', 'on', 'join', 'select', 'case', 'is', 'like', 'ilike', 'between', 'in', 'returning', 'set', 'using', 'window', 'over', 'filter', 'fetch',
  // a column definition's clauses (reserved words: never an operand)
  'default', 'primary', 'unique', 'references', 'check', 'constraint',
]);
const STOP_SYMBOLS = new Set([',', ';', '=', '<', '>', '<=', '>=', '<>', '!=']);

function isStop(t: Token): boolean {
  return (t.word !== undefined && OPERAND_STOP.has(t.word)) || STOP_SYMBOLS.has(t.text);
}

/** Index of the first token of the operand that ends just before `at` (same nesting level). */
function operandStart(tokens: Token[], at: number): number {
  let depth = 0;
  let i = at - 1;
  for (; i >= 0; i--) {
    const t = tokens[i]!;
    if (t.text === ')') depth++;
    else if (t.text === '(') {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && isStop(t)) break;
  }
  return i + 1;
}

/** Index just past the operand that starts at `from`; `extraStops` end it too (AND for BETWEEN's first bound). */
function operandEnd(tokens: Token[], from: number): number {
  let depth = 0;
  let i = from;
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.text === '(') depth++;
    else if (t.text === ')') {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && i > from && isStop(t) && !(t.word === 'case' || t.word === 'end')) break;
    if (depth === 0 && t.word === 'case') {
      // CASE ... END is one operand.
      let nest = 0;
      for (; i < tokens.length; i++) {
        if (tokens[i]!.word === 'case') nest++;
        else if (tokens[i]!.word === 'end' && --nest === 0) break;
      }
    }
  }
  return i;
}

const FN_DISTINCT = '__tetra_is_distinct_from__';
const FN_NOT_DISTINCT = '__tetra_is_not_distinct_from__';
const FN_BETWEEN_SYMMETRIC = '__tetra_between_symmetric__';
const FN_NOT_BETWEEN_SYMMETRIC = '__tetra_not_between_symmetric__';
/** Functions the rewrites call; the planner implements them. */
export const REWRITE_FUNCTIONS = { distinct: FN_DISTINCT, notDistinct: FN_NOT_DISTINCT, betweenSymmetric: FN_BETWEEN_SYMMETRIC, notBetweenSymmetric: FN_NOT_BETWEEN_SYMMETRIC } as const;

/**
 * `a IS [NOT] DISTINCT FROM b` -> `__tetra_[not_]distinct__((a), (b))` and
 * `a [NOT] BETWEEN SYMMETRIC b AND c` -> `__tetra_[not_]between_symmetric__((a), (b), (c))`: the
 * parser reads these operators only in a few shapes. Operands extend to the nearest keyword or
 * comparison of lower precedence at the same nesting level.
 */
function rewriteDistinct(tokens: Token[]): Token[] {
  for (let i = 0; i < tokens.length; i++) {
    const w = tokens[i]!.word;
    let fn: string | undefined;
    let opEnd = -1;
    let leftEnd = i;
    if (w === 'is') {
      const not = tokens[i + 1]?.word === 'not';
      const k = not ? i + 2 : i + 1;
      if (tokens[k]?.word === 'distinct' && tokens[k + 1]?.word === 'from') {
        fn = not ? FN_NOT_DISTINCT : FN_DISTINCT;
        opEnd = k + 2;
      }
    } else if (w === 'between' && tokens[i + 1]?.word === 'symmetric') {
      const not = tokens[i - 1]?.word === 'not';
      fn = not ? FN_NOT_BETWEEN_SYMMETRIC : FN_BETWEEN_SYMMETRIC;
      opEnd = i + 2;
      if (not) leftEnd = i - 1;
    }
    if (fn === undefined) continue;
    const start = operandStart(tokens, leftEnd);
    if (start >= leftEnd) return tokens;
    let end = operandEnd(tokens, opEnd);
    const parts: Token[][] = [tokens.slice(start, leftEnd), tokens.slice(opEnd, end)];
    if (fn === FN_BETWEEN_SYMMETRIC || fn === FN_NOT_BETWEEN_SYMMETRIC) {
      // The first bound ends at AND.
      const andAt = parts[1]!.findIndex((t) => t.word === 'and');
      if (andAt < 0) {
        if (tokens[end]?.word !== 'and') return tokens;
        const hiEnd = operandEnd(tokens, end + 1);
        parts.push(tokens.slice(end + 1, hiEnd));
        end = hiEnd;
      } else {
        parts.push(parts[1]!.slice(andAt + 1));
        parts[1] = parts[1]!.slice(0, andAt);
      }
    }
    if (parts.some((p) => p.length === 0)) return tokens;
    const text = `${fn}(${parts.map((p) => `(${render(p).trimEnd()})`).join(', ')})`;
    const last = tokens[end - 1]!;
    const replaced: Token[] = [...tokens.slice(0, start), { text, space: last.space }, ...tokens.slice(end)];
    return rewriteDistinct(replaced);
  }
  return tokens;
}

/**
 * `VALUES (...), (...) [ORDER BY ...]` as a statement or a WITH body, which the parser reads only
 * in INSERT and FROM: -> `SELECT * FROM (VALUES ...) AS __tetra_values [ORDER BY ...]`.
 */
function rewriteValues(tokens: Token[]): Token[] {
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.word !== 'values') continue;
    const atStart = i === 0;
    const inWith = i >= 2 && tokens[i - 1]!.text === '(' && tokens[i - 2]!.word === 'as';
    if (!atStart && !inWith) continue;
    // The rows: ( ... ) [, ( ... )]*
    let j = i + 1;
    for (;;) {
      if (tokens[j]?.text !== '(') return tokens;
      let depth = 0;
      for (; j < tokens.length; j++) {
        if (tokens[j]!.text === '(') depth++;
        else if (tokens[j]!.text === ')' && --depth === 0) break;
      }
      j++;
      if (tokens[j]?.text === ',') j++;
      else break;
    }
    const rows = render(tokens.slice(i, j)).trimEnd();
    const replaced: Token[] = [...tokens.slice(0, i), { text: `SELECT * FROM (${rows}) AS __tetra_values`, space: ' ' }, ...tokens.slice(j)];
    return rewriteValues(replaced);
  }
  return tokens;
}

/**
 * `DELETE FROM t [alias] USING items WHERE cond` -> `DELETE FROM t [alias] WHERE EXISTS (SELECT 1
 * FROM items WHERE cond)`; with RETURNING, which may name the USING items' columns (and whose `*`
 * includes them), -> `DELETE FROM t [alias], <USING_MARKER>, items WHERE cond RETURNING ...`, which
 * the planner joins as UPDATE ... FROM does.
 */
function rewriteDelete(tokens: Token[]): Token[] {
  if (tokens[0]?.word !== 'delete') return tokens;
  let depth = 0;
  let using = -1;
  let where = -1;
  let returning = tokens.length;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    if (depth !== 0) continue;
    if (t.word === 'using' && using < 0) using = i;
    else if (t.word === 'where' && where < 0 && using >= 0) where = i;
    else if (t.word === 'returning' && using >= 0) {
      returning = i;
      break;
    }
  }
  if (using < 0) return tokens;
  if (returning < tokens.length) return [...tokens.slice(0, using), { text: `, ${USING_MARKER},`, space: ' ' }, ...tokens.slice(using + 1)];
  const items = render(tokens.slice(using + 1, where < 0 ? returning : where)).trimEnd();
  const cond = where < 0 ? 'TRUE' : render(tokens.slice(where + 1, returning)).trimEnd();
  // The select list's alias marks the subquery as this rewrite's (dml.ts checks its names as PostgreSQL resolves them).
  return [...tokens.slice(0, using), { text: `WHERE EXISTS (SELECT 1 AS ${USING_MARKER} FROM ${items} WHERE ${cond})`, space: ' ' }, ...tokens.slice(returning)];
}
