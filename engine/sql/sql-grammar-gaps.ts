import type { Token } from './sql-rewrite.js';
import { encodeSequenceOptions, parseSequenceOptions } from './sequence-options.js';
import { sqlFail } from './sql-types.js';

/**
 * More of what node-sql-parser (PostgreSQL mode) cannot read, rewritten over the pre-pass's
 * tokens (sql-rewrite.ts) into forms it reads, each keeping PostgreSQL's meaning:
 *  - `a ^ b` -> `__tetra_power__((a), (b))`, with ^'s precedence (above * and /, below unary
 *    minus and ::, left-associative); the planner evaluates it as power(), named ?column?;
 *  - `~~`, `!~~`, `~~*`, `!~~*` -> `((a) [NOT] LIKE|ILIKE (b))`, with the operands these
 *    operators take: PostgreSQL gives them the precedence of every other named operator (above
 *    LIKE, at the level of ||, left-associative), so `s ~~ 'a' || '%'` is `(s ~~ 'a') || '%'`;
 *  - `GROUP BY ()` (the empty grouping set) is dropped from the list, and a list left empty
 *    becomes `HAVING TRUE`, which makes the query grouped (one group, even over no rows);
 *  - `SET (a, b) = (x, y)` / `= ROW(x, y)` -> `SET a = x, b = y`, which is what PostgreSQL makes
 *    of it; `SET (a, b) = (SELECT ...)` -> `a = <ROW_ASSIGN>((SELECT ...)), b = <ROW_ASSIGN>()`,
 *    which the planner evaluates once per row;
 *  - `OFFSET <expression>` (the parser reads only a number or a parameter there), OFFSET before
 *    LIMIT or FETCH, `OFFSET n ROWS`, with the LIMIT or FETCH beside it -> `LIMIT (SELECT <limit>
 *    AS <LIMIT_MARKER>, <offset> AS <OFFSET_MARKER>)`;
 *  - `NATURAL [kind] JOIN item` -> `[kind] JOIN item USING (<NATURAL_MARKER>)`: the parser reads
 *    NATURAL only where a table's alias would be (`t NATURAL JOIN u`, not `t x NATURAL JOIN u`);
 *  - `$n::type` -> `($n)::type`: the parser reads a parameter cast only as a whole select item
 *    (and there with the wrong precedence), a parenthesised one everywhere;
 *  - a parenthesised query the parser cannot read where a query starts (a set operation:
 *    `(SELECT 1 UNION SELECT 2) LIMIT 1`, or a parenthesised query with its own ORDER BY or LIMIT
 *    after it: `((SELECT 1) LIMIT 1) UNION ...`) -> `(SELECT * FROM (<query>) AS <QUERY_MARKER>)`,
 *    which the planner reads as the query itself (a trailing ORDER BY, LIMIT or OFFSET then
 *    applies to it, as PostgreSQL's insertSelectOptions does); so does a scalar subquery with a
 *    `*` item or several items in its select list (`SELECT (SELECT * FROM t)`), which the parser
 *    refuses as a select item and the planner answers as PostgreSQL (42601 past one column);
 *  - typed literals `type 'string'` (`numeric '2'`, `int '1'`, `double precision '1.5'`,
 *    `varchar(2) 'abc'`, `timestamptz '...'`, `timestamp(3) '...'`) -> `CAST('string' AS type)`,
 *    which is what PostgreSQL's grammar makes of them (a cast of the literal, named after the
 *    type); the parser reads only `date`, `timestamp` and `interval` ones, which stay as they are;
 *  - the type alias `dec` -> `decimal` where a cast's type is read (`::dec`, `CAST(x AS dec)`),
 *    and a type name PostgreSQL does not know there fails with its 42704;
 *  - the blank-padded character types where a type is read (casts, typed literals, column
 *    definitions): `character[(n)]` -> `char[(n)]` (the parser reads `character(n)` as
 *    `character varying(n)`), `bpchar(n)` -> `char(n)`, `bpchar` -> `char(<UNBOUNDED_BPCHAR>)`,
 *    `char varying` -> `varchar`, `varbit[(n)]` -> `bit varying[(n)]`;
 *  - bit string literals `B'0101'`, `X'1F'` -> `<BIT_LITERAL>('b0101')`, `<BIT_LITERAL>('x1F')`;
 *  - the bitwise operators `a & b`, `a | b`, `a # b`, `a << b`, `a >> b` and prefix `~a` ->
 *    `<BIT_OPERATOR>('&', (a), (b))`, `<BIT_OPERATOR>('~', (a))`, with the operands PostgreSQL
 *    gives any other named operator (as `~~` below: above comparisons, below arithmetic, left to
 *    right at the level of `||`);
 *  - `INSERT INTO t SELECT ... RETURNING ...` -> `INSERT INTO t (SELECT ...) RETURNING ...`
 *    (the parser reads RETURNING after a parenthesised query only);
 *  - `x COLLATE name` -> `<COLLATE_MARKER>((x), name)` with COLLATE's precedence (above binary
 *    operators and AT TIME ZONE, below unary minus, `::` and subscripts); the parser reads COLLATE
 *    only after a column reference, in a column definition and in an index element: the last two
 *    are left to it, and so is a column's in PARTITION BY (which reads no call; the planner makes
 *    it the same call after parsing); a name of three parts or more fails here as in PostgreSQL;
 *  - a generated column's `GENERATED ALWAYS AS (expr) STORED` in CREATE / ALTER TABLE ->
 *    `DEFAULT <GENERATED_MARKER>((expr))`, which the planner reads as the column's generation
 *    expression; `GENERATED ALWAYS AS IDENTITY` -> `DEFAULT <IDENTITY_ALWAYS_MARKER>()` (the
 *    parser reads only BY DEFAULT), and either with a sequence option list `(START WITH 10 ...)`
 *    -> `DEFAULT <IDENTITY_..._MARKER>('<options>')` (the parser reads no option list);
 *  - `INSERT INTO t [(cols)] OVERRIDING SYSTEM | USER VALUE ...` -> `INSERT INTO t PARTITION
 *    (<OVERRIDING_SYSTEM_MARKER | OVERRIDING_USER_MARKER>) [(cols)] ...`: the parser reads no
 *    OVERRIDING clause, and reads a (MySQL) PARTITION list right after the table name, which
 *    PostgreSQL has not, so the planner takes a PARTITION list for one of these markers;
 *  - `ALTER TABLE ... DROP [COLUMN] a CASCADE | RESTRICT` and `DROP CONSTRAINT [IF EXISTS] c
 *    [CASCADE | RESTRICT]` -> the name with DROP_IF_EXISTS_MARKER / DROP_CASCADE_MARKER before
 *    it (the parser reads none of these words there);
 *  - a constraint's quoted name in CREATE / ALTER TABLE -> the name with QUOTED_NAME_MARKER
 *    before it (the parser drops the quotes, and only an unquoted name is folded);
 *  - an array of a type the parser reads no `[]` after (`boolean[]`, `date[]`, `timestamp(3) with
 *    time zone[]`, `uuid[]`, `jsonb[]`, ...), where a type is read (casts, column definitions, ALTER
 *    COLUMN TYPE) -> `tinyint(<code>)[]` (tinyint is no PostgreSQL type: a written one is 42704 first),
 *    the code naming the element type and its modifier (ARRAY_ELEMENT_CODES);
 *  - `json_agg(x ORDER BY y)` / `jsonb_agg(...)` -> `<JSON(B)_AGG_ORDERED>(array_agg(to_jsonb(x)
 *    ORDER BY y))` (the parser reads ORDER BY inside string_agg and array_agg only);
 *  - an array slice `a[lo:hi]` (either bound omitted) -> `a[<SLICE_MARKER>(lo, hi)]`;
 *  - a function in FROM `f(args) WITH ORDINALITY` -> `<ORDINALITY_MARKER>(f(args))` (the parser
 *    reads no WITH ORDINALITY), which the planner reads as the function with its row numbers;
 *  - `timetz[(p)]` -> `time[(p)] with time zone` where a type is read (casts, typed literals,
 *    column definitions, ALTER COLUMN TYPE);
 *  - `x AT TIME ZONE zone` -> `pg_catalog.timezone((zone), (x))`, PostgreSQL's own reading of it (the
 *    function, its column name `timezone`), with AT's precedence: above `^`, `*` and `+`, below
 *    COLLATE, unary minus, `::` and subscripts, left to right (the parser reads AT TIME ZONE only
 *    after a column reference or a call, and there keeps it where nothing reads it);
 * Each returns the same array when it changes nothing.
 */

/** The function `a ^ b` becomes (evaluated as power(); a `__tetra_` name is named ?column?). */
export const POWER_OPERATOR = '__tetra_power__';
/** `a ^- b` becomes `<marker>('^-', (a), (b))`: an operator no type has (42883 naming the operand types). */
export const UNKNOWN_OPERATOR = '__tetra_operator__';
/**
 * `bpchar` without a length (unbounded, unlike `char`, which is char(1)) becomes `char(<this>)`:
 * one past PostgreSQL's largest length, which a written char(n) can never have (refused first).
 */
export const UNBOUNDED_BPCHAR = 10485761;
/** `B'0101'` / `X'1F'` become `<this>('b0101')` / `<this>('x1F')`: a bit string literal (named ?column?). */
export const BIT_LITERAL = '__tetra_bit_literal__';
/** `a & b` becomes `<this>('&', (a), (b))`, `~a` `<this>('~', (a))`: the bitwise operators (see rewriteBitOperators). */
export const BIT_OPERATOR = '__tetra_bit_operator__';
/** The longest character(n) PostgreSQL allows (MaxAttrSize). */
export const MAX_BPCHAR_LENGTH = 10485760;
/** SET (a, b) = (SELECT ...): the first column's value carries the subquery, the others none. */
export const ROW_ASSIGN = '__tetra_row_assign__';
/** Aliases of the LIMIT subquery that carries an OFFSET expression (see rewriteOffset). */
export const LIMIT_MARKER = '__tetra_limit__';
export const OFFSET_MARKER = '__tetra_offset__';
/** USING (<marker>) stands for NATURAL. */
export const NATURAL_MARKER = '__tetra_natural__';
/** `SELECT <marker> FROM (<query>) AS <marker>` stands for the parenthesised query (see rewriteQueryParens). */
export const QUERY_MARKER = '__tetra_query__';
/**
 * `x COLLATE name` becomes `<this>((x), name)` (see rewriteCollate); after parsing, the name is a
 * COLLATION_NAME node, and so is the one the parser reads itself after a column reference.
 */
export const COLLATE_MARKER = '__tetra_collate__';
/** The node type of a COLLATE clause's name in the marker call: `{ type, parts: NamePart[] }`. */
export const COLLATION_NAME = '__tetra_collation_name__';
/** `GENERATED ALWAYS AS (expr) STORED` becomes `DEFAULT <this>((expr))` (see rewriteGenerated). */
export const GENERATED_MARKER = '__tetra_generated__';
/**
 * `GENERATED ALWAYS AS IDENTITY [(options)]` becomes `DEFAULT <this>(['<options>'])`, and
 * `GENERATED BY DEFAULT AS IDENTITY (options)` `DEFAULT <IDENTITY_BY_DEFAULT_MARKER>('<options>')`
 * (see rewriteGenerated; the options encoded by encodeSequenceOptions).
 */
export const IDENTITY_ALWAYS_MARKER = '__tetra_identity_always__';
export const IDENTITY_BY_DEFAULT_MARKER = '__tetra_identity_by_default__';
/** `ALTER TABLE ... DROP [COLUMN] a CASCADE` names the column `"<this>a"` (see rewriteDropBehavior). */
export const DROP_CASCADE_MARKER = '__tetra_cascade__:';
/**
 * A constraint's quoted name in CREATE TABLE / ALTER TABLE (`CONSTRAINT "User_pkey"`) becomes
 * `"<this>User_pkey"`: the parser keeps no quotes there, and only an unquoted name is folded to
 * lower case (see rewriteConstraintNames).
 */
export const QUOTED_NAME_MARKER = '__tetra_quoted__:';
/** `ALTER TABLE ... DROP CONSTRAINT IF EXISTS c` names the constraint `"<this>c"` (before a DROP_CASCADE_MARKER; see rewriteDropBehavior). */
export const DROP_IF_EXISTS_MARKER = '__tetra_if_exists__:';
/** INSERT's `OVERRIDING SYSTEM VALUE` / `OVERRIDING USER VALUE` become `PARTITION (<this>)` (see rewriteOverriding). */
export const OVERRIDING_SYSTEM_MARKER = '__tetra_overriding_system__';
export const OVERRIDING_USER_MARKER = '__tetra_overriding_user__';
/**
 * The element types an array type's `tinyint(<code>)[]` stands for (see rewriteArrayTypes): code
 * = (index + 1) * ARRAY_CODE_SPAN + the element's modifier (its length or precision), or + the
 * span - 1 for none. Each name is one castTargetOf reads.
 */
export const ARRAY_ELEMENT_CODES = ['BOOLEAN', 'DATE', 'TIMESTAMP', 'TIMESTAMPTZ', 'UUID', 'JSONB', 'BYTEA', 'INTERVAL', 'BIT', 'BIT VARYING', 'TIME', 'TIMETZ'] as const;
export const ARRAY_CODE_SPAN = 1_000_000;

/** `json_agg(x ORDER BY y)` / `jsonb_agg(...)` become `<this>(array_agg(to_jsonb(x) ORDER BY y))` (see rewriteJsonAggOrder). */
export const JSON_AGG_ORDERED = '__tetra_json_agg__';
export const JSONB_AGG_ORDERED = '__tetra_jsonb_agg__';
/** `a[lo:hi]` becomes `a[<this>(lo, hi)]`, an omitted bound SLICE_OPEN (see rewriteSlices). */
export const SLICE_MARKER = '__tetra_slice__';
export const SLICE_OPEN = '__tetra_open__';
/** `f(args) WITH ORDINALITY` in FROM becomes `<this>(f(args))` (see rewriteOrdinality). */
export const ORDINALITY_MARKER = '__tetra_ordinality__';

/** Every rewrite of this module, in order (operators first: later ones move whole operands). */
export function rewriteGrammarGaps(tokens: Token[]): Token[] {
  return rewriteJsonAggOrder(rewriteSlices(rewriteOrdinality(rewriteDropBehavior(rewriteConstraintNames(rewriteOverriding(
    rewriteInsertSelect(
      rewriteNatural(rewriteOffset(rewriteRowAssignment(rewriteEmptyGroupingSet(rewriteBitOperators(rewriteLikeOperators(rewritePower(quoteBareAt(rewriteAtTimeZone(rewriteCollate(rewriteParamCasts(rewriteQueryParens(rewriteArrayTypes(rewriteTypeNames(rewriteCharTypes(rewriteBitLiterals(rewriteTypedLiterals(rewriteTimetz(rewriteGenerated(checkInsertArity(rewriteInsertAlias(rewriteValueFunctions(tokens)))))))))))))))))))))),
    ),
  ))))));
}

// ---- json_agg / jsonb_agg with ORDER BY --------------------------------------------------------

/**
 * `jsonb_agg(x ORDER BY y)` (and json_agg) -> `<JSONB_AGG_ORDERED>(array_agg(to_jsonb(x) ORDER BY
 * y))`: the parser reads ORDER BY inside string_agg and array_agg only. The marker makes the
 * array a JSON array (each element as to_jsonb made it, NULL over no rows) and names the column
 * as the call was named. Left alone with DISTINCT, FILTER or OVER.
 */
function rewriteJsonAggOrder(tokens: Token[]): Token[] {
  for (let i = 0; i + 1 < tokens.length; i++) {
    const word = tokens[i]!.word;
    if ((word !== 'json_agg' && word !== 'jsonb_agg') || tokens[i + 1]!.text !== '(' || tokens[i - 1]?.text === '.') continue;
    const close = matching(tokens, i + 1, '(', ')', 1);
    if (close < 0 || tokens[i + 2]?.word === 'distinct' || ['filter', 'over', 'within'].includes(tokens[close + 1]?.word ?? '')) continue;
    let order = -1;
    for (let k = i + 2, depth = 0; k < close; k++) {
      const t = tokens[k]!.text;
      if (t === '(' || t === '[') depth++;
      else if (t === ')' || t === ']') depth--;
      else if (depth === 0 && tokens[k]!.word === 'order' && tokens[k + 1]?.word === 'by') {
        order = k;
        break;
      }
    }
    if (order < 0) continue;
    const call: Token[] = [
      { text: word === 'json_agg' ? JSON_AGG_ORDERED : JSONB_AGG_ORDERED, space: '' },
      { text: '(', space: '' },
      { text: 'array_agg', word: 'array_agg', space: '' },
      { text: '(', space: '' },
      { text: 'to_jsonb', word: 'to_jsonb', space: '' },
      { text: '(', space: '' },
      ...tokens.slice(i + 2, order - 1),
      { ...tokens[order - 1]!, space: '' },
      { text: ')', space: ' ' },
      ...tokens.slice(order, close),
      { text: ')', space: '' },
      { text: ')', space: tokens[close]!.space },
    ];
    return rewriteJsonAggOrder([...tokens.slice(0, i), ...call, ...tokens.slice(close + 1)]);
  }
  return tokens;
}

// ---- array slices ------------------------------------------------------------------------------

/**
 * An array slice `a[lo:hi]`, `a[lo:]`, `a[:hi]`, `a[:]` -> `a[<SLICE_MARKER>(lo, hi)]`, an omitted
 * bound written SLICE_OPEN: the parser reads an expression between brackets, not a slice. A `:`
 * of a cast (`::`) is no slice's.
 */
function rewriteSlices(tokens: Token[]): Token[] {
  for (let i = 1; i < tokens.length; i++) {
    if (tokens[i]!.text !== '[') continue;
    const close = matching(tokens, i, '[', ']', 1);
    if (close < 0) continue;
    let colon = -1;
    for (let k = i + 1, depth = 0; k < close; k++) {
      const t = tokens[k]!.text;
      if (t === '(' || t === '[') depth++;
      else if (t === ')' || t === ']') depth--;
      else if (depth === 0 && t === ':' && tokens[k - 1]!.text !== ':' && tokens[k + 1]!.text !== ':') {
        colon = k;
        break;
      }
    }
    if (colon < 0) continue;
    const bound = (from: number, to: number): Token[] => (to > from ? tokens.slice(from, to) : [{ text: SLICE_OPEN, word: SLICE_OPEN, space: '' }]);
    const call: Token[] = [
      { text: SLICE_MARKER, space: '' },
      { text: '(', space: '' },
      ...bound(i + 1, colon),
      { text: ',', space: ' ' },
      ...bound(colon + 1, close),
      { text: ')', space: '' },
    ];
    return rewriteSlices([...tokens.slice(0, i + 1), ...call, ...tokens.slice(close)]);
  }
  return tokens;
}

// ---- arrays of types the parser reads no [] after ---------------------------------------------

/** The first words of element types rewriteArrayTypes carries, by the code name they stand for. */
const CARRIED_ELEMENTS: Readonly<Record<string, (typeof ARRAY_ELEMENT_CODES)[number]>> = {
  bool: 'BOOLEAN', boolean: 'BOOLEAN', date: 'DATE', timestamp: 'TIMESTAMP', timestamptz: 'TIMESTAMPTZ', uuid: 'UUID', json: 'JSONB', jsonb: 'JSONB', bytea: 'BYTEA', interval: 'INTERVAL', bit: 'BIT', time: 'TIME',
};

/**
 * `type[]` (or `type[n]`, PostgreSQL ignores the size) of an element type the parser reads no
 * brackets after -> `tinyint(<code>)[]` (see ARRAY_ELEMENT_CODES), where a type is read.
 */
function rewriteArrayTypes(tokens: Token[]): Token[] {
  for (let i = 1; i < tokens.length; i++) {
    if (tokens[i]!.text !== '[') continue;
    const close = tokens[i + 1]?.text === ']' ? i + 1 : isNumber(tokens[i + 1]) && tokens[i + 2]?.text === ']' ? i + 2 : -1;
    if (close < 0) continue;
    // The element type before the brackets: name [(modifier)] [with[out] time zone] | bit varying [(n)].
    let k = i - 1;
    let zone: 'with' | 'without' | undefined;
    if (tokens[k]?.word === 'zone' && tokens[k - 1]?.word === 'time' && (tokens[k - 2]?.word === 'with' || tokens[k - 2]?.word === 'without')) {
      zone = tokens[k - 2]!.word as 'with' | 'without';
      k -= 3;
    }
    let modifier: number | undefined;
    if (tokens[k]?.text === ')') {
      const open = matching(tokens, k, '(', ')', -1);
      if (open < 0 || open !== k - 2 || !isNumber(tokens[k - 1])) continue;
      modifier = Number(tokens[k - 1]!.text);
      k = open - 1;
    }
    let name = tokens[k]?.word;
    let start = k;
    if (name === 'varying' && tokens[k - 1]?.word === 'bit') {
      name = 'bit varying';
      start = k - 1;
    }
    if (name === undefined || !(castTypeAt(tokens, start) || columnTypeAt(tokens, start) || alterTypeAt(tokens, start))) continue;
    let code: (typeof ARRAY_ELEMENT_CODES)[number] | undefined = name === 'bit varying' ? 'BIT VARYING' : CARRIED_ELEMENTS[name];
    if (code === undefined) continue;
    if (code === 'TIMESTAMP' && zone === 'with') code = 'TIMESTAMPTZ';
    if (code === 'TIME' && zone === 'with') code = 'TIMETZ';
    const value = (ARRAY_ELEMENT_CODES.indexOf(code) + 1) * ARRAY_CODE_SPAN + (modifier ?? ARRAY_CODE_SPAN - 1);
    const carrier: Token[] = [
      { text: 'tinyint', word: 'tinyint', space: '' },
      { text: '(', space: '' },
      { text: String(value), space: '' },
      { text: ')', space: '' },
      { text: '[', space: '' },
      { text: ']', space: tokens[close]!.space },
    ];
    return rewriteArrayTypes([...tokens.slice(0, start), ...carrier, ...tokens.slice(close + 1)]);
  }
  return tokens;
}

// ---- WITH ORDINALITY -------------------------------------------------------------------------

/**
 * `name(args) WITH ORDINALITY` (a function in FROM, its name qualified or not) -> `<marker>(
 * name(args))`. Only after a call's closing parenthesis: WITH elsewhere (a CTE, WITH CHECK
 * OPTION, WITH TIME ZONE) is never followed by ORDINALITY.
 */
function rewriteOrdinality(tokens: Token[]): Token[] {
  for (let i = 1; i + 1 < tokens.length; i++) {
    if (tokens[i]!.word !== 'with' || tokens[i + 1]!.word !== 'ordinality' || tokens[i - 1]!.text !== ')') continue;
    const open = matching(tokens, i - 1, '(', ')', -1);
    let start = open - 1;
    if (open < 1 || !isName(tokens[start])) continue;
    while (tokens[start - 1]?.text === '.' && isName(tokens[start - 2])) start -= 2;
    const call = tokens.slice(start, i);
    const replaced: Token[] = [
      { text: ORDINALITY_MARKER, space: '' },
      { text: '(', space: '' },
      ...call.slice(0, -1),
      { ...call[call.length - 1]!, space: '' },
      { text: ')', space: tokens[i + 1]!.space },
    ];
    return rewriteOrdinality([...tokens.slice(0, start), ...replaced, ...tokens.slice(i + 2)]);
  }
  return tokens;
}

// ---- SQL value functions ---------------------------------------------------------------------

/**
 * The SQL value functions written without parentheses that the parser reads as a column
 * (`localtimestamp`) or not at all (`current_user`); each becomes a call, `current_user()`, unless
 * it is called already, qualified, or a label after AS.
 */
const VALUE_FUNCTION_WORDS = new Set(['current_user', 'session_user', 'current_role', 'current_catalog', 'current_schema', 'localtimestamp', 'localtime']);

function rewriteValueFunctions(tokens: Token[]): Token[] {
  let out = tokens;
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    if (t.word === undefined || !VALUE_FUNCTION_WORDS.has(t.word)) continue;
    if (out[i + 1]?.text === '(' || out[i - 1]?.text === '.' || out[i - 1]?.word === 'as') continue;
    out = [...out.slice(0, i), { ...t, space: '' }, { text: '(', space: '' }, { text: ')', space: t.space }, ...out.slice(i + 1)];
    i += 2;
  }
  return out;
}

const OPERATOR_CHARS = '+-*/<>=~!@#%^&|`?';
const isOperatorChar = (t: Token | undefined): boolean => t !== undefined && t.text.length === 1 && OPERATOR_CHARS.includes(t.text);
const isNumber = (t: Token | undefined): boolean => t !== undefined && /^[0-9.]/.test(t.text);
const isString = (t: Token | undefined): boolean => t !== undefined && t.text.startsWith("'");
const isQuoted = (t: Token | undefined): boolean => t !== undefined && t.text.startsWith('"');

/** Keywords that end an operand or begin a clause: never a column, function or type name here. */
const KEYWORDS = new Set([
  'and', 'or', 'not', 'then', 'when', 'else', 'end', 'from', 'where', 'group', 'order', 'having', 'limit', 'offset', 'union', 'intersect', 'except',
  'as', 'asc', 'desc', 'nulls', 'on', 'join', 'select', 'case', 'is', 'like', 'ilike', 'similar', 'between', 'in', 'returning', 'set', 'using', 'window', 'over',
  'filter', 'fetch', 'by', 'distinct', 'all', 'any', 'some', 'values', 'exists', 'escape', 'into', 'with', 'natural', 'left', 'right', 'full', 'inner', 'cross',
  'outer', 'lateral', 'for', 'do', 'to', 'symmetric',
]);
/** Words that continue a type name after its first word (`double precision`, `timestamp with time zone`). */
const TYPE_WORDS = new Set(['precision', 'varying', 'with', 'without', 'time', 'zone']);
const COMPARISONS = new Set(['=', '<', '>']);

const isName = (t: Token | undefined): boolean => t !== undefined && ((t.word !== undefined && !KEYWORDS.has(t.word)) || isQuoted(t));
/** Keywords that are also function names (`left(s, 2)`). */
const FUNCTION_KEYWORDS = new Set(['left', 'right']);
/** Whether tokens[k] names a column, function or type (a keyword function only before its `(`). */
const isNameAt = (tokens: Token[], k: number): boolean => isName(tokens[k]) || (FUNCTION_KEYWORDS.has(tokens[k]?.word ?? '') && tokens[k + 1]?.text === '(');

/** Whether the token ends an operand (so a sign after it is binary). */
function endsOperand(t: Token | undefined): boolean {
  if (t === undefined) return false;
  return t.text === ')' || t.text === ']' || isNumber(t) || isString(t) || isName(t) || t.word === 'end';
}

function matching(tokens: Token[], at: number, open: string, close: string, step: 1 | -1): number {
  let depth = 0;
  for (let i = at; i >= 0 && i < tokens.length; i += step) {
    const t = tokens[i]!.text;
    if (t === (step === 1 ? open : close)) depth++;
    else if (t === (step === 1 ? close : open) && --depth === 0) return i;
  }
  return -1;
}

/** The operator made of the operator characters starting at `at` with no space between them. */
function operatorAt(tokens: Token[], at: number): { text: string; end: number } {
  let text = '';
  let i = at;
  while (isOperatorChar(tokens[i])) {
    text += tokens[i]!.text;
    if (tokens[i]!.space !== '') {
      i++;
      break;
    }
    i++;
  }
  return { text, end: i };
}

// ---- ^ ---------------------------------------------------------------------------------------

/**
 * Index of the first token of the operand of ^ that ends at `end` (a primary with its postfix
 * casts and subscripts and any unary signs before it), or -1 when the tokens are no operand.
 */
function powerOperandStart(tokens: Token[], end: number): number {
  let i = end;
  const t = tokens[i];
  if (t === undefined) return -1;
  if (t.text === ')') {
    i = matching(tokens, i, '(', ')', -1);
    if (i < 0) return -1;
    if (isNameAt(tokens, i - 1)) i--;
  } else if (t.text === ']') {
    const open = matching(tokens, i, '[', ']', -1);
    if (open <= 0) return -1;
    return powerOperandStart(tokens, open - 1);
  } else if (t.word === 'end') {
    for (let depth = 0; i >= 0; i--) {
      if (tokens[i]!.word === 'end') depth++;
      else if (tokens[i]!.word === 'case' && --depth === 0) break;
    }
    if (i < 0) return -1;
  } else if (isNumber(t)) {
    if (tokens[i - 1]?.text === '$' && tokens[i - 1]!.space === '') i--;
  } else if (isString(t)) {
    // A typed literal: `numeric '2'` (not the `zone` of AT TIME ZONE 'UTC').
    if (isName(tokens[i - 1]) && !NOT_TYPES.has(tokens[i - 1]!.word ?? '')) i--;
  } else if (isName(t) || t.word === 'null' || t.word === 'true' || t.word === 'false') {
    // A type after `::` may be several words (`x::double precision`).
    let k = i;
    while (k > 0 && TYPE_WORDS.has(tokens[k]!.word ?? '') && tokens[k - 1]!.word !== undefined) k--;
    if (tokens[k - 1]?.text === ':' && tokens[k - 2]?.text === ':') i = k;
  } else return -1;
  // Qualified names: schema.function(...), t.column.
  while (tokens[i - 1]?.text === '.' && isName(tokens[i - 2])) i -= 2;
  if (tokens[i - 1]?.text === ':' && tokens[i - 2]?.text === ':') return powerOperandStart(tokens, i - 3);
  // Unary signs bind tighter than ^ in PostgreSQL: -2 ^ 2 is 4.
  while ((tokens[i - 1]?.text === '-' || tokens[i - 1]?.text === '+') && !endsOperand(tokens[i - 2])) i--;
  return i;
}

/** Index just past the operand of ^ that starts at `from`, or -1 when the tokens are no operand. */
function powerOperandEnd(tokens: Token[], from: number): number {
  let i = from;
  while (tokens[i]?.text === '-' || tokens[i]?.text === '+') i++;
  const t = tokens[i];
  if (t === undefined) return -1;
  if (t.text === '(') i = matching(tokens, i, '(', ')', 1) + 1;
  else if (t.word === 'case') {
    for (let depth = 0; i < tokens.length; i++) {
      if (tokens[i]!.word === 'case') depth++;
      else if (tokens[i]!.word === 'end' && --depth === 0) break;
    }
    i++;
  } else if (t.text === '$' && isNumber(tokens[i + 1])) i += 2;
  else if (isNumber(t) || isString(t) || t.word === 'null' || t.word === 'true' || t.word === 'false') i++;
  else if (isNameAt(tokens, i)) {
    i++;
    while (tokens[i]?.text === '.' && isName(tokens[i + 1])) i += 2;
    if (tokens[i]?.text === '(') i = matching(tokens, i, '(', ')', 1) + 1;
    else if (isString(tokens[i])) i++;
  } else return -1;
  if (i <= 0) return -1;
  // Postfix subscripts and casts.
  for (;;) {
    if (tokens[i]?.text === '[') {
      const close = matching(tokens, i, '[', ']', 1);
      if (close < 0) return -1;
      i = close + 1;
    } else if (tokens[i]?.text === ':' && tokens[i + 1]?.text === ':' && tokens[i + 2]?.word !== undefined) {
      i += 3;
      while (tokens[i]?.word !== undefined && TYPE_WORDS.has(tokens[i]!.word!)) i++;
      if (tokens[i]?.text === '(') i = matching(tokens, i, '(', ')', 1) + 1;
      while (tokens[i]?.text === '[' && tokens[i + 1]?.text === ']') i += 2;
      if (i <= 0) return -1;
    } else return i;
  }
}

function rewritePower(tokens: Token[]): Token[] {
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.text !== '^') continue;
    // Part of a longer operator that does not start here (`-^`): left to the parser.
    if (isOperatorChar(tokens[i - 1]) && tokens[i - 1]!.space === '') continue;
    // PostgreSQL's lexer reads operator characters written together as one operator, a trailing
    // + or - included when a character like ^ is in it: `2^-1` is the operator ^-, which no type
    // has. It becomes a marker call the planner refuses with the operand types (42883).
    const op = operatorAt(tokens, i);
    const start = powerOperandStart(tokens, i - 1);
    const end = powerOperandEnd(tokens, op.end);
    if (start < 0 || end < 0) continue;
    const call: Token[] = [
      { text: op.text === '^' ? POWER_OPERATOR : UNKNOWN_OPERATOR, word: op.text === '^' ? POWER_OPERATOR : UNKNOWN_OPERATOR, space: '' },
      { text: '(', space: '' },
      ...(op.text === '^' ? [] : [{ text: `'${op.text}'`, space: '' }, { text: ',', space: ' ' }]),
      { text: '(', space: '' },
      ...tokens.slice(start, i - 1),
      { ...tokens[i - 1]!, space: '' },
      { text: ')', space: '' },
      { text: ',', space: ' ' },
      { text: '(', space: '' },
      ...tokens.slice(op.end, end - 1),
      { ...tokens[end - 1]!, space: '' },
      { text: ')', space: '' },
      { text: ')', space: tokens[end - 1]!.space },
    ];
    // Left to right: the call is the left operand of a following ^ (2 ^ 3 ^ 2 is 64).
    return rewritePower([...tokens.slice(0, start), ...call, ...tokens.slice(end)]);
  }
  return tokens;
}

// ---- ~~ and its forms ---------------------------------------------------------------------------

const LIKE_FORMS: Record<string, string> = { '~~': 'LIKE', '!~~': 'NOT LIKE', '~~*': 'ILIKE', '!~~*': 'NOT ILIKE' };

/** Whether the token ends an operand of a named operator scanning outwards (a lower-precedence boundary). */
function isBoundary(t: Token): boolean {
  return (t.word !== undefined && KEYWORDS.has(t.word)) || t.text === ',' || t.text === ';' || COMPARISONS.has(t.text);
}

/**
 * The operands of a named operator at tokens[at..opEnd): the left one from `start` (back to a
 * boundary of lower precedence; || and other named operators are the same level, left-associative,
 * so they stay in it), the right one up to `end` (a boundary or an operator of the same or lower
 * precedence; arithmetic binds tighter, `::` is a cast).
 */
function operandBounds(tokens: Token[], at: number, opEnd: number): { start: number; end: number } {
  let start = at;
  for (let depth = 0; start > 0; ) {
    const p = tokens[start - 1]!;
    if (p.text === ')') depth++;
    else if (p.text === '(') {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && p.word === 'end') {
      // CASE ... END is one operand: on to its CASE.
      let k = start - 1;
      for (let nest = 0; k >= 0; k--) {
        if (tokens[k]!.word === 'end') nest++;
        else if (tokens[k]!.word === 'case' && --nest === 0) break;
      }
      if (k < 0) break;
      start = k;
      continue;
    } else if (depth === 0 && isBoundary(p) && !isNameAt(tokens, start - 1)) break;
    start--;
  }
  // Right operand: up to a boundary or an operator of the same or lower precedence.
  let end = opEnd;
  for (let depth = 0; end < tokens.length; end++) {
    const n = tokens[end]!;
    if (n.text === '(') depth++;
    else if (n.text === ')') {
      if (depth === 0) break;
      depth--;
    } else if (depth === 0 && n.word === 'case') {
      let nest = 0;
      for (; end < tokens.length; end++) {
        if (tokens[end]!.word === 'case') nest++;
        else if (tokens[end]!.word === 'end' && --nest === 0) break;
      }
    } else if (depth === 0 && isBoundary(n) && !isNameAt(tokens, end)) break;
    else if (depth === 0 && isOperatorChar(n) && end > opEnd) {
      const next = operatorAt(tokens, end);
      // Arithmetic binds tighter; `::` is a cast. Anything else (||, ->, ~, ...) ends it.
      if (!/^[-+*/%^]+$/.test(next.text)) break;
      end = next.end - 1;
    } else if (depth === 0 && n.text === ':' && tokens[end + 1]?.text === ':') end++;
  }
  return { start, end };
}

function rewriteLikeOperators(tokens: Token[]): Token[] {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t.text !== '~' && t.text !== '!') continue;
    if (isOperatorChar(tokens[i - 1]) && tokens[i - 1]!.space === '') continue;
    const op = operatorAt(tokens, i);
    const form = LIKE_FORMS[op.text];
    if (form === undefined) continue;
    const { start, end } = operandBounds(tokens, i, op.end);
    if (start >= i || end <= op.end) continue;
    const left = tokens.slice(start, i);
    const right = tokens.slice(op.end, end);
    const last = tokens[end - 1]!;
    const expr: Token[] = [
      { text: '(', space: '' },
      { text: '(', space: '' },
      ...left.slice(0, -1),
      { ...left[left.length - 1]!, space: '' },
      { text: ')', space: ' ' },
      { text: form, space: ' ' },
      { text: '(', space: '' },
      ...right.slice(0, -1),
      { ...last, space: '' },
      { text: ')', space: '' },
      { text: ')', space: last.space },
    ];
    return rewriteLikeOperators([...tokens.slice(0, start), ...expr, ...tokens.slice(end)]);
  }
  return tokens;
}

// ---- GROUP BY () -------------------------------------------------------------------------------

const GROUP_BY_END = new Set(['having', 'window', 'order', 'limit', 'offset', 'fetch', 'union', 'intersect', 'except', 'for', 'returning']);

function rewriteEmptyGroupingSet(tokens: Token[]): Token[] {
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.word !== 'group' || tokens[i + 1]?.word !== 'by') continue;
    let end = i + 2;
    for (let depth = 0; end < tokens.length; end++) {
      const t = tokens[end]!;
      if (t.text === '(') depth++;
      else if (t.text === ')' && --depth < 0) break;
      else if (depth === 0 && (t.text === ';' || (t.word !== undefined && GROUP_BY_END.has(t.word)))) break;
    }
    // The list's items, split at its top-level commas; `()` items go.
    const items: Token[][] = [[]];
    for (let k = i + 2, depth = 0; k < end; k++) {
      const t = tokens[k]!;
      if (t.text === '(' || t.text === '[') depth++;
      else if (t.text === ')' || t.text === ']') depth--;
      if (depth === 0 && t.text === ',') items.push([]);
      else items[items.length - 1]!.push(t);
    }
    const kept = items.filter((it) => !(it.length === 2 && it[0]!.text === '(' && it[1]!.text === ')'));
    if (kept.length === items.length) continue;
    const space = tokens[end - 1]!.space || ' ';
    let replaced: Token[];
    if (kept.length > 0) {
      const list = kept.flatMap((it, k) => (k === 0 ? it : [{ text: ',', space: ' ' }, ...it]));
      replaced = [tokens[i]!, tokens[i + 1]!, ...list.slice(0, -1), { ...list[list.length - 1]!, space }];
    } else {
      // Grouped with one group: HAVING makes a query grouped (an existing HAVING does it alone).
      replaced = tokens[end]?.word === 'having' ? [] : [{ text: 'HAVING', word: 'having', space: ' ' }, { text: 'TRUE', word: 'true', space }];
    }
    return rewriteEmptyGroupingSet([...tokens.slice(0, i), ...replaced, ...tokens.slice(end)]);
  }
  return tokens;
}

// ---- SET (a, b) = ... --------------------------------------------------------------------------

/** Splits tokens[from..to) at its top-level commas. */
function splitList(tokens: Token[], from: number, to: number): Token[][] {
  const parts: Token[][] = [[]];
  for (let k = from, depth = 0; k < to; k++) {
    const t = tokens[k]!;
    if (t.text === '(' || t.text === '[') depth++;
    else if (t.text === ')' || t.text === ']') depth--;
    if (depth === 0 && t.text === ',') parts.push([]);
    else parts[parts.length - 1]!.push(t);
  }
  return parts;
}

const SET_END = new Set(['from', 'where', 'returning']);

function rewriteRowAssignment(tokens: Token[]): Token[] {
  const isUpdate = tokens[0]?.word === 'update' || (tokens[0]?.word === 'with' && tokens.some((t) => t.word === 'update'));
  const isUpsert = tokens[0]?.word === 'insert' && tokens.some((t) => t.word === 'conflict');
  if (!isUpdate && !isUpsert) return tokens;
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.word !== 'set') continue;
    if (isUpsert && tokens[i - 1]?.word !== 'update') continue;
    // The SET list: up to FROM, WHERE, RETURNING or the end, at its own depth.
    let end = i + 1;
    for (let depth = 0; end < tokens.length; end++) {
      const t = tokens[end]!;
      if (t.text === '(') depth++;
      else if (t.text === ')' && --depth < 0) break;
      else if (depth === 0 && (t.text === ';' || (t.word !== undefined && SET_END.has(t.word)))) break;
    }
    const items = splitList(tokens, i + 1, end);
    if (!items.some((it) => it[0]?.text === '(')) continue;
    const out: Token[][] = [];
    for (const item of items) {
      if (item[0]?.text !== '(') {
        out.push(item);
        continue;
      }
      const close = matching(item, 0, '(', ')', 1);
      const columns = splitList(item, 1, close);
      if (close < 0 || item[close + 1]?.text !== '=' || columns.some((c) => c.length === 0)) return tokens;
      let source = item.slice(close + 2);
      const row = source[0]?.word === 'row';
      if (row) source = source.slice(1);
      const sourceClose = source[0]?.text === '(' ? matching(source, 0, '(', ')', 1) : -1;
      if (sourceClose !== source.length - 1) return tokens;
      const inner = source.slice(1, -1);
      const name = (c: Token[]): Token[] => [...c.slice(0, -1), { ...c[c.length - 1]!, space: ' ' }];
      let first = 0;
      while (inner[first]?.text === '(') first++;
      if (!row && (inner[first]?.word === 'select' || inner[first]?.word === 'with' || inner[first]?.word === 'values')) {
        // Evaluated once per row by the planner, which checks the subquery's column count.
        columns.forEach((c, k) => {
          const call: Token[] = [{ text: ROW_ASSIGN, word: ROW_ASSIGN, space: '' }, { text: '(', space: '' }];
          const value: Token[] = k === 0 ? [...call, ...source.slice(0, -1), { ...source[source.length - 1]!, space: '' }, { text: ')', space: '' }] : [...call, { text: ')', space: '' }];
          out.push([...name(c), { text: '=', space: ' ' }, ...value]);
        });
        continue;
      }
      const values = splitList(source, 1, source.length - 1);
      if (!row && values.length === 1) sqlFail('0A000', 'source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression');
      if (values.length !== columns.length) sqlFail('42601', 'number of columns does not match number of values');
      columns.forEach((c, k) => out.push([...name(c), { text: '=', space: ' ' }, ...values[k]!]));
    }
    const list = out.flatMap((it, k) => (k === 0 ? it : [{ text: ',', space: ' ' }, ...it]));
    const last = list[list.length - 1]!;
    return [...tokens.slice(0, i + 1), ...list.slice(0, -1), { ...last, space: tokens[end - 1]!.space || (end < tokens.length ? ' ' : '') }, ...tokens.slice(end)];
  }
  return tokens;
}

// ---- OFFSET <expression> -----------------------------------------------------------------------

// WINDOW: a WINDOW clause written before ORDER BY / LIMIT / OFFSET is moved after them (sql-rewrite.ts,
// moveWindowClauses) before this runs.
const CLAUSE_END = new Set(['limit', 'offset', 'fetch', 'for', 'window', 'union', 'intersect', 'except']);

/** The expression after LIMIT or OFFSET at `at`: its tokens' end (exclusive). */
export function clauseEnd(tokens: Token[], at: number): number {
  let end = at + 1;
  for (let depth = 0; end < tokens.length; end++) {
    const t = tokens[end]!;
    if (t.text === '(') depth++;
    else if (t.text === ')' && --depth < 0) break;
    else if (depth === 0 && (t.text === ';' || (t.word !== undefined && CLAUSE_END.has(t.word)))) break;
  }
  return end;
}

/** `FETCH FIRST|NEXT [count] ROW|ROWS ONLY` at `at`: its count's tokens and its end, if it is one. */
function fetchClause(tokens: Token[], at: number): { count: Token[]; end: number } | undefined {
  if (tokens[at]?.word !== 'fetch' || (tokens[at + 1]?.word !== 'first' && tokens[at + 1]?.word !== 'next')) return undefined;
  let k = at + 2;
  while (k < tokens.length && tokens[k]!.word !== 'row' && tokens[k]!.word !== 'rows') k++;
  if (tokens[k + 1]?.word !== 'only') return undefined;
  const count = tokens.slice(at + 2, k);
  return { count: count.length === 0 ? [{ text: '1', space: ' ' }] : count, end: k + 2 };
}

/**
 * `OFFSET <expression>`, and OFFSET before LIMIT or FETCH (the parser reads OFFSET only as a
 * number or a parameter, and drops a LIMIT after it), and `OFFSET n ROWS`: the OFFSET and the
 * LIMIT or FETCH beside it become one LIMIT subquery the planner takes apart (offsetCarrier).
 */
function rewriteOffset(tokens: Token[]): Token[] {
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.word !== 'offset') continue;
    let end = clauseEnd(tokens, i);
    let expr = tokens.slice(i + 1, end);
    const rows = expr.length > 1 && (expr[expr.length - 1]!.word === 'row' || expr[expr.length - 1]!.word === 'rows');
    if (rows) {
      expr = expr.slice(0, -1);
      // With ROWS PostgreSQL's grammar takes only a simple value there: `OFFSET (1 + 1) ROWS`.
      let depth = 0;
      expr.forEach((t, k) => {
        if (t.text === '(') depth++;
        else if (t.text === ')') depth--;
        else if (depth === 0 && k > 0 && isOperatorChar(t)) sqlFail('42601', `syntax error at or near "${tokens[end - 1]!.text}"`);
      });
    }
    // The LIMIT or FETCH beside it, before (LIMIT n OFFSET e) or after (OFFSET e LIMIT n).
    let limit: Token[] | undefined;
    let from = i;
    for (let k = i - 1, depth = 0; k >= 0; k--) {
      const t = tokens[k]!;
      if (t.text === ')') depth++;
      else if (t.text === '(' && --depth < 0) break;
      else if (depth === 0 && t.word === 'limit') {
        if (clauseEnd(tokens, k) === i) ((limit = tokens.slice(k + 1, i)), (from = k));
        break;
      } else if (depth === 0 && t.word === 'fetch') {
        const f = fetchClause(tokens, k);
        if (f?.end === i) ((limit = f.count), (from = k));
        break;
      } else if (depth === 0 && t.word !== undefined && t.word !== 'all' && KEYWORDS.has(t.word)) break;
    }
    let after = false;
    if (limit === undefined && tokens[end]?.word === 'limit') {
      const limitEnd = clauseEnd(tokens, end);
      limit = tokens.slice(end + 1, limitEnd);
      end = limitEnd;
      after = true;
    } else if (limit === undefined) {
      const f = fetchClause(tokens, end);
      if (f !== undefined) ((limit = f.count), (end = f.end), (after = true));
    }
    // A number or a parameter the parser reads itself, with no LIMIT after it.
    const simple = (expr.length === 1 && isNumber(expr[0])) || (expr.length === 2 && expr[0]!.text === '$' && isNumber(expr[1]));
    if (expr.length === 0 || (simple && !rows && !after)) continue;
    if (limit !== undefined && limit.length === 1 && (limit[0]!.word === 'all' || limit[0]!.word === 'null')) limit = undefined;
    const tail = (list: Token[]): Token[] => [...list.slice(0, -1), { ...list[list.length - 1]!, space: ' ' }];
    const clause: Token[] = [
      { text: 'LIMIT', space: ' ' },
      { text: '(', space: '' },
      { text: 'SELECT', space: ' ' },
      ...(limit === undefined || limit.length === 0 ? [{ text: 'NULL', space: ' ' }] : tail(limit)),
      { text: 'AS', space: ' ' },
      { text: LIMIT_MARKER, space: '' },
      { text: ',', space: ' ' },
      ...tail(expr),
      { text: 'AS', space: ' ' },
      { text: OFFSET_MARKER, space: '' },
      { text: ')', space: tokens[end - 1]!.space },
    ];
    return rewriteOffset([...tokens.slice(0, from), ...clause, ...tokens.slice(end)]);
  }
  return tokens;
}

// ---- NATURAL JOIN -------------------------------------------------------------------------------

/** Words that end a FROM item's alias position. */
const ITEM_END = new Set([...KEYWORDS, 'natural', 'join', 'left', 'right', 'full', 'inner', 'cross', 'on', 'using', 'where', 'group', 'having', 'order', 'limit', 'offset', 'window', 'fetch', 'for', 'union', 'intersect', 'except', 'returning', 'set']);

function rewriteNatural(tokens: Token[]): Token[] {
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.word !== 'natural') continue;
    let j = i + 1;
    if (['inner', 'left', 'right', 'full'].includes(tokens[j]?.word ?? '')) j++;
    if (tokens[j]?.word === 'outer') j++;
    if (tokens[j]?.word !== 'join') continue;
    // The joined item: a name or a parenthesised query or join, then [AS] alias [(columns)].
    let k = j + 1;
    if (tokens[k]?.text === '(') k = matching(tokens, k, '(', ')', 1) + 1;
    else {
      if (!isName(tokens[k])) continue;
      k++;
      while (tokens[k]?.text === '.' && isName(tokens[k + 1])) k += 2;
      if (tokens[k]?.text === '(') k = matching(tokens, k, '(', ')', 1) + 1;
    }
    if (k <= 0) continue;
    if (tokens[k]?.word === 'as') k++;
    if ((tokens[k]?.word !== undefined && !ITEM_END.has(tokens[k]!.word!)) || isQuoted(tokens[k])) {
      k++;
      if (tokens[k]?.text === '(') k = matching(tokens, k, '(', ')', 1) + 1;
      if (k <= 0) continue;
    }
    const last = tokens[k - 1]!;
    const replaced: Token[] = [
      ...tokens.slice(i + 1, k - 1),
      { ...last, space: ' ' },
      { text: 'USING', word: 'using', space: ' ' },
      { text: '(', space: '' },
      { text: NATURAL_MARKER, space: '' },
      { text: ')', space: last.space },
    ];
    // NATURAL JOIN is an inner join: the kind words after NATURAL stay, NATURAL goes.
    return rewriteNatural([...tokens.slice(0, i), ...replaced, ...tokens.slice(k)]);
  }
  return tokens;
}

// ---- INSERT ... SELECT ... RETURNING -------------------------------------------------------------

/**
 * `INSERT INTO t [(cols)] [OVERRIDING ... VALUE] SELECT ... RETURNING ...` -> `INSERT INTO t
 * [(cols)] [OVERRIDING ... VALUE] (SELECT ...) RETURNING ...`: the parser reads RETURNING after
 * an INSERT's query only when the query is parenthesised (it takes RETURNING's words for the
 * query's). The query ends at RETURNING or at ON CONFLICT, outside parentheses.
 */
function rewriteInsertSelect(tokens: Token[]): Token[] {
  for (let i = 0; i + 2 < tokens.length; i++) {
    let k = afterInsertTarget(tokens, i);
    if (k < 0) continue;
    if (tokens[k]?.text === '(' && tokens[k + 1]?.word !== 'select') {
      k = matching(tokens, k, '(', ')', 1) + 1;
      if (k <= 0) continue;
    }
    if (tokens[k]?.word === 'overriding' && tokens[k + 2]?.word === 'value') k += 3;
    if (tokens[k]?.word !== 'select') continue;
    let end = k;
    let depth = 0;
    let returning = false;
    for (; end < tokens.length; end++) {
      const t = tokens[end]!;
      if (t.text === '(') depth++;
      else if (t.text === ')') depth--;
      else if (depth === 0 && (t.text === ';' || (t.word === 'on' && tokens[end + 1]?.word === 'conflict'))) break;
      else if (depth === 0 && t.word === 'returning') {
        returning = true;
        break;
      }
    }
    if (!returning) continue;
    const last = tokens[end - 1]!;
    return [
      ...tokens.slice(0, k),
      { text: '(', space: '' },
      ...tokens.slice(k, end - 1),
      { ...last, space: '' },
      { text: ')', space: last.space === '' ? ' ' : last.space },
      ...rewriteInsertSelect(tokens.slice(end)),
    ];
  }
  return tokens;
}

// ---- INSERT's column list against its VALUES rows -----------------------------------------------

/** Where `INSERT INTO name[.name] [AS alias]` starting at `i` ends (its column list, if any, is next), or -1. */
function afterInsertTarget(tokens: Token[], i: number): number {
  if (tokens[i]?.word !== 'insert' || tokens[i + 1]?.word !== 'into' || !isName(tokens[i + 2])) return -1;
  let k = i + 3;
  while (tokens[k]?.text === '.' && isName(tokens[k + 1])) k += 2;
  if (tokens[k]?.word === 'as' && isName(tokens[k + 1])) k += 2;
  return k;
}

/** The number of top-level items between `(` at `open` and its `)` at `close`. */
function itemCount(tokens: Token[], open: number, close: number): number {
  let count = 1;
  for (let i = open + 1, depth = 0; i < close; i++) {
    // Brackets too: ARRAY['a', 'b'] is one item.
    if (tokens[i]!.text === '(' || tokens[i]!.text === '[') depth++;
    else if (tokens[i]!.text === ')' || tokens[i]!.text === ']') depth--;
    else if (depth === 0 && tokens[i]!.text === ',') count++;
  }
  return count;
}

/**
 * `INSERT INTO t (cols) VALUES (...), ...` whose rows do not all have as many items as the list
 * has columns: the parser refuses it with a message of its own (`column count doesn't match value
 * count at row N`); PostgreSQL's transformInsertStmt says `VALUES lists must all be the same
 * length` for rows of different lengths, else `INSERT has more expressions than target columns`
 * or `INSERT has more target columns than expressions`. (PostgreSQL reads each row's expressions
 * first, so an unknown column among them is its error; here the lengths are checked first.)
 * @throws SQL_ERROR 42601
 */
function checkInsertArity(tokens: Token[]): Token[] {
  let k = afterInsertTarget(tokens, 0);
  if (k < 0 || tokens[k]?.text !== '(' || tokens[k + 1]?.word === 'select' || tokens[k + 1]?.word === 'with' || tokens[k + 1]?.word === 'values') return tokens;
  const listEnd = matching(tokens, k, '(', ')', 1);
  if (listEnd < 0) return tokens;
  const columns = itemCount(tokens, k, listEnd);
  k = listEnd + 1;
  if (tokens[k]?.word === 'overriding' && tokens[k + 2]?.word === 'value') k += 3;
  if (tokens[k]?.word !== 'values') return tokens;
  const lengths: number[] = [];
  for (k++; tokens[k]?.text === '('; k++) {
    const close = matching(tokens, k, '(', ')', 1);
    // An empty row is the parser's syntax error.
    if (close <= k + 1) return tokens;
    lengths.push(itemCount(tokens, k, close));
    k = close + 1;
    if (tokens[k]?.text !== ',') break;
  }
  if (lengths.length === 0 || lengths.every((n) => n === columns)) return tokens;
  if (lengths.some((n) => n !== lengths[0])) sqlFail('42601', 'VALUES lists must all be the same length');
  sqlFail('42601', lengths[0]! > columns ? 'INSERT has more expressions than target columns' : 'INSERT has more target columns than expressions');
}

// ---- $n::type ----------------------------------------------------------------------------------

function rewriteParamCasts(tokens: Token[]): Token[] {
  let out = tokens;
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    if (t.text !== '$' || t.space !== '' || !/^[0-9]+$/.test(out[i + 1]?.text ?? '') || out[i + 1]!.space !== '' || out[i + 2]?.text !== ':' || out[i + 3]?.text !== ':') continue;
    out = [...out.slice(0, i), { text: '(', space: '' }, t, { ...out[i + 1]!, space: '' }, { text: ')', space: '' }, ...out.slice(i + 2)];
    i += 3;
  }
  return out;
}

// ---- type 'string' -----------------------------------------------------------------------------

/**
 * The type names a typed literal may start with, as PostgreSQL's grammar (and pg_type) spells
 * them, with the words that may follow the first. A name not listed (a table's column, a type
 * PostgreSQL does not have) is left to the parser.
 */
const LITERAL_TYPES: readonly (readonly string[])[] = [
  ['double', 'precision'],
  ['character', 'varying'],
  ['timestamp', 'with', 'time', 'zone'],
  ['timestamp', 'without', 'time', 'zone'],
  ['time', 'with', 'time', 'zone'],
  ['time', 'without', 'time', 'zone'],
  ...['int', 'integer', 'int2', 'int4', 'int8', 'smallint', 'bigint', 'numeric', 'decimal', 'dec', 'float', 'float4', 'float8', 'real', 'text', 'varchar', 'char', 'character', 'bpchar', 'bool', 'boolean', 'json', 'jsonb', 'bytea', 'timestamptz', 'time', 'bit', 'varbit'].map((w) => [w]),
  ['bit', 'varying'],
  // Read by the parser itself (`timestamp '...'`), but not with a precision: `timestamp(3) '...'`.
  ['timestamp'],
  // Types the parser reads in casts only, which tetradb refuses there (0A000), not with 42601.
  ...['uuid', 'inet', 'cidr', 'macaddr', 'macaddr8', 'money', 'oid', 'tsquery', 'tsvector', 'regclass', 'regtype'].map((w) => [w]),
];

/**
 * The end (exclusive) of the type name at tokens[i] in a typed literal, with its modifiers, which
 * PostgreSQL's grammar puts after the name (`numeric(10, 2)`, `varchar(3)`) or, for the time
 * types, after the first word (`timestamp(3) with time zone`); undefined when none starts there.
 */
function typeNameEnd(tokens: Token[], i: number): number | undefined {
  for (const words of LITERAL_TYPES) {
    let k = i;
    let modifiers = false;
    const ok = words.every((w, n) => {
      if (tokens[k]?.word !== w) return false;
      k++;
      if (tokens[k]?.text === '(' && (n === words.length - 1 || (n === 0 && (w === 'timestamp' || w === 'time')))) {
        const close = matching(tokens, k, '(', ')', 1);
        if (close < 0) return false;
        k = close + 1;
        modifiers = true;
      }
      return true;
    });
    // The parser reads `timestamp '...'` itself (`EXTRACT(year FROM timestamp '...')` only so);
    // `bit '...'` has no length (unlike a cast to bit, bit(1)): rewriteBitLiterals reads it.
    if (ok && !(words.length === 1 && (words[0] === 'timestamp' || words[0] === 'bit') && !modifiers)) return k;
  }
  return undefined;
}

function rewriteTypedLiterals(tokens: Token[]): Token[] {
  let out = tokens;
  for (let i = 0; i < out.length; i++) {
    if (out[i]!.word === undefined || out[i - 1]?.text === '.' || (out[i - 1]?.text === ':' && out[i - 2]?.text === ':')) continue;
    const end = typeNameEnd(out, i);
    if (end === undefined) continue;
    const literal = out[end];
    if (!isString(literal)) continue;
    const type = out.slice(i, end);
    const cast: Token[] = [
      { text: 'CAST', word: 'cast', space: '' },
      { text: '(', space: '' },
      { ...literal!, space: ' ' },
      { text: 'AS', word: 'as', space: ' ' },
      ...type.slice(0, -1),
      { ...type[type.length - 1]!, space: '' },
      { text: ')', space: literal!.space },
    ];
    out = [...out.slice(0, i), ...cast, ...out.slice(end + 1)];
    i += cast.length - 1;
  }
  return out;
}

// ---- character(n) and bpchar -------------------------------------------------------------------

/** The words that name a blank-padded character type. */
const BPCHAR_WORDS = new Set(['char', 'character', 'bpchar', 'varbit']);

/**
 * The blank-padded character types, where a type is read, in the spelling the parser reads as
 * PostgreSQL means it (see the file comment).
 * @throws SQL_ERROR 22023 a written length past PostgreSQL's largest
 */
function rewriteCharTypes(tokens: Token[]): Token[] {
  let out = tokens;
  const ddl = out[0]?.word === 'create' || out[0]?.word === 'alter';
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    if (!BPCHAR_WORDS.has(t.word ?? '') || out[i - 1]?.text === '.' || !(castTypeAt(out, i) || (ddl && columnTypeAt(out, i)))) continue;
    const next = out[i + 1];
    if (next?.word === 'varying') {
      // `character varying` is read as it is; `char varying` is not.
      if (t.word === 'char') out = [...out.slice(0, i), { text: 'varchar', word: 'varchar', space: next.space }, ...out.slice(i + 2)];
      continue;
    }
    const length = next?.text === '(' && /^[0-9]+$/.test(out[i + 2]?.text ?? '') && out[i + 3]?.text === ')' ? Number(out[i + 2]!.text) : undefined;
    if (t.word === 'varbit') {
      out = [...out.slice(0, i), { text: 'bit', word: 'bit', space: ' ' }, { text: 'varying', word: 'varying', space: t.space }, ...out.slice(i + 1)];
      continue;
    }
    if (length !== undefined && length > MAX_BPCHAR_LENGTH) sqlFail('22023', `length for type char cannot exceed ${MAX_BPCHAR_LENGTH}`);
    if (t.word === 'char') continue;
    const replacement: Token[] =
      t.word === 'bpchar' && next?.text !== '('
        ? [{ text: 'char', word: 'char', space: '' }, { text: '(', space: '' }, { text: String(UNBOUNDED_BPCHAR), space: '' }, { text: ')', space: t.space }]
        : [{ text: 'char', word: 'char', space: t.space }];
    out = [...out.slice(0, i), ...replacement, ...out.slice(i + 1)];
  }
  return out;
}

/**
 * Whether tokens[i] is a column's type in CREATE TABLE or ALTER TABLE: right after the column's
 * name, which starts a column definition (after `(`, `,`, `ADD` or `ADD COLUMN`).
 */
function columnTypeAt(tokens: Token[], i: number): boolean {
  const before = tokens[i - 2];
  return alterTypeAt(tokens, i) || (isName(tokens[i - 1]) && before !== undefined && (before.text === '(' || before.text === ',' || before.word === 'add' || before.word === 'column'));
}

/** Whether tokens[i] is the new type of ALTER TABLE ... ALTER [COLUMN] c [SET DATA] TYPE. */
function alterTypeAt(tokens: Token[], i: number): boolean {
  return tokens[0]?.word === 'alter' && tokens[i - 1]?.word === 'type';
}

// ---- bit strings -------------------------------------------------------------------------------

/**
 * `B'0101'`, `X'1F'` (the prefix written against the string) -> `<BIT_LITERAL>('b0101')`; the
 * typed literal `bit '...'` (of the length written, as PostgreSQL's grammar reads it) ->
 * `<BIT_LITERAL>('...')`.
 */
function rewriteBitLiterals(tokens: Token[]): Token[] {
  let out = tokens;
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    const literal = out[i + 1];
    const prefixed = (t.word === 'b' || t.word === 'x') && t.text.length === 1 && t.space === '';
    const typed = t.word === 'bit' && typedLiteralAt(out, i);
    if (!(prefixed || typed) || !isString(literal) || out[i - 1]?.text === '.') continue;
    const call: Token[] = [
      { text: BIT_LITERAL, word: BIT_LITERAL, space: '' },
      { text: '(', space: '' },
      { text: prefixed ? `'${t.word}${literal!.text.slice(1)}` : literal!.text, space: '' },
      { text: ')', space: literal!.space },
    ];
    out = [...out.slice(0, i), ...call, ...out.slice(i + 2)];
    i += call.length - 1;
  }
  return out;
}

const BIT_BINARY_OPERATORS = new Set(['&', '|', '#', '<<', '>>']);

/**
 * The bitwise operators as BIT_OPERATOR calls (the parser reads none of them), one at a time from
 * the left, each with the operands of a named operator (operandBounds).
 */
function rewriteBitOperators(tokens: Token[]): Token[] {
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!'&|#<>~'.includes(t.text) || t.text.length !== 1) continue;
    if (isOperatorChar(tokens[i - 1]) && tokens[i - 1]!.space === '') continue;
    const op = operatorAt(tokens, i);
    const prefix = op.text === '~' && !endsOperand(tokens[i - 1]);
    if (!prefix && !BIT_BINARY_OPERATORS.has(op.text)) continue;
    const { start, end } = operandBounds(tokens, i, op.end);
    if ((!prefix && start >= i) || end <= op.end) continue;
    const operand = (from: number, to: number): Token[] => [{ text: '(', space: '' }, ...tokens.slice(from, to - 1), { ...tokens[to - 1]!, space: '' }, { text: ')', space: '' }];
    const call: Token[] = [
      { text: BIT_OPERATOR, word: BIT_OPERATOR, space: '' },
      { text: '(', space: '' },
      { text: `'${op.text}'`, space: '' },
      { text: ',', space: ' ' },
      ...(prefix ? [] : [...operand(start, i), { text: ',', space: ' ' }]),
      ...operand(op.end, end),
      { text: ')', space: tokens[end - 1]!.space },
    ];
    return rewriteBitOperators([...tokens.slice(0, prefix ? i : start), ...call, ...tokens.slice(end)]);
  }
  return tokens;
}

// ---- type names the parser does not know -------------------------------------------------------

/** PostgreSQL's other spellings of types the parser reads under their usual name. */
const TYPE_ALIASES: Readonly<Record<string, string>> = { dec: 'decimal' };

/** The first words of the type names node-sql-parser reads in a cast (`::name`, `CAST(x AS name)`). */
const PARSER_TYPES = new Set([
  'bigint', 'bit', 'bool', 'boolean', 'bytea', 'char', 'character', 'cidr', 'date', 'decimal', 'double', 'float', 'float4', 'float8', 'inet', 'int', 'int2',
  'int2vector', 'int4', 'int4multirange', 'int4range', 'int8', 'int8multirange', 'int8range', 'integer', 'interval', 'json', 'jsonb', 'macaddr', 'macaddr8',
  'money', 'numeric', 'oid', 'real', 'record', 'regclass', 'regcollation', 'regconfig', 'regdictionary', 'regnamespace', 'regoper', 'regoperator', 'regproc',
  'regprocedure', 'regrole', 'regtype', 'smallint', 'text', 'time', 'timestamp', 'timestamptz', 'tsquery', 'tsvector', 'uuid', 'varchar',
]);

/**
 * PostgreSQL's built-in types (pg_catalog's pg_type, without arrays) the parser does not read:
 * refused as unsupported, where a name PostgreSQL does not know either is 42704.
 */
const OTHER_POSTGRES_TYPES = new Set([
  'aclitem', 'any', 'anyarray', 'anycompatible', 'anycompatiblearray', 'anycompatiblemultirange', 'anycompatiblenonarray', 'anycompatiblerange', 'anyelement',
  'anyenum', 'anymultirange', 'anynonarray', 'anyrange', 'box', 'cid', 'circle', 'cstring', 'datemultirange', 'daterange', 'event_trigger',
  'fdw_handler', 'gtsvector', 'index_am_handler', 'internal', 'jsonpath', 'language_handler', 'line', 'lseg', 'name', 'national', 'nchar', 'nummultirange',
  'numrange', 'oidvector', 'path', 'pg_brin_bloom_summary', 'pg_brin_minmax_multi_summary', 'pg_ddl_command', 'pg_dependencies', 'pg_lsn', 'pg_mcv_list',
  'pg_ndistinct', 'pg_node_tree', 'pg_snapshot', 'point', 'polygon', 'refcursor', 'table_am_handler', 'tid', 'timetz', 'trigger', 'tsm_handler',
  'tsmultirange', 'tsrange', 'tstzmultirange', 'tstzrange', 'txid_snapshot', 'unknown', 'void', 'xid', 'xid8', 'xml',
]);

/**
 * Words that stand before a string inside an expression without being a typed literal's type:
 * `trim(leading 'x' FROM s)`, `ALTER ... SET DEFAULT 'x'`, `AT TIME ZONE 'UTC'`.
 */
const NOT_TYPES = new Set(['leading', 'trailing', 'both', 'default', 'placing', 'zone', 'uescape', 'collate', 'at', 'escape', 'similar', 'to']);

/** The words the parser reads as a type's first word besides PARSER_TYPES (in column definitions too). */
const OTHER_PARSER_TYPES = new Set(['serial', 'serial4', 'serial8', 'smallserial', 'bigserial', 'real', 'tinyint', 'mediumint', 'tinytext', 'mediumtext', 'longtext', 'datetime', 'geometry', 'enum']);

/** Words that start a table constraint or other clause where a column definition could stand. */
const NOT_COLUMN_NAMES = new Set(['constraint', 'primary', 'unique', 'check', 'foreign', 'exclude', 'like', 'column', 'if', 'exists']);

/**
 * A user-defined type's name where a type is read (`x::mood`, `CAST(x AS "Role")`, `mood
 * 'happy'`, a column's type `r "Role"[]`, `public.mood`) becomes `ENUM('<this>', 'name'[, '[]'])`,
 * which the parser reads as a type carrying the name (castTargetOf resolves it against the
 * catalog, where a missing one is 42704 `type "foo" does not exist`); `[]` marks an array of it.
 */
export const TYPE_REF_MARKER = '__tetra_type__';

/**
 * Where tokens[i] is a column's type in a CREATE TABLE's column list (no query in the statement)
 * or after ALTER TABLE ... ADD [COLUMN] [IF NOT EXISTS] name; not a table constraint's words.
 */
function columnDefTypeAt(tokens: Token[], i: number): boolean {
  const column = tokens[i - 1];
  if (!isName(column) || NOT_COLUMN_NAMES.has(column!.word ?? '')) return false;
  if (tokens[0]?.word === 'create') {
    if (!tokens.slice(1, 5).some((t) => t.word === 'table') || tokens.some((t) => t.word === 'select')) return false;
    const before = tokens[i - 2]?.text;
    if (before !== '(' && before !== ',') return false;
    let depth = 0;
    for (let k = 0; k < i; k++) {
      if (tokens[k]!.text === '(') depth++;
      else if (tokens[k]!.text === ')') depth--;
    }
    return depth === 1;
  }
  if (tokens[0]?.word !== 'alter' || tokens[1]?.word !== 'table') return false;
  let k = i - 2;
  if (tokens[k]?.word === 'exists' && tokens[k - 1]?.word === 'not' && tokens[k - 2]?.word === 'if') k -= 3;
  if (tokens[k]?.word === 'column') k--;
  return tokens[k]?.word === 'add';
}

/**
 * The type names of casts, typed literals and column definitions the parser cannot read: an
 * alias (`x::dec`, `CAST(x AS dec(5, 2))`, `dec '1'`, a cast by now) -> the name the parser
 * reads; another PostgreSQL type is unsupported (0A000); any other name (quoted or not, after
 * `public.`, with `[]`) is a user-defined type's, carried as TYPE_REF_MARKER says. So is ALTER
 * COLUMN ... TYPE's new type. Elsewhere such a word is a name (a column `dec`).
 * @throws SQL_ERROR 0A000 for a PostgreSQL type tetradb lacks
 */
function rewriteTypeNames(tokens: Token[]): Token[] {
  let out = tokens;
  const ddl = out[0]?.word === 'create' || out[0]?.word === 'alter';
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    if (!isName(t) && !(isQuoted(t) && t.text.length >= 2)) continue;
    const word = t.word;
    if (word !== undefined && (PARSER_TYPES.has(word) || OTHER_PARSER_TYPES.has(word))) continue;
    const typed = word !== undefined && typedLiteralAt(out, i);
    if (!(castTypeAt(out, i) || typed || alterTypeAt(out, i) || (ddl && columnDefTypeAt(out, i)))) continue;
    // public.name: the schema every type of a tenant is in. Another schema is left to the parser.
    let last = i;
    let name = word ?? t.text.slice(1, -1).replace(/""/g, '"');
    if (out[i + 1]?.text === '.') {
      const next = out[i + 2];
      if (name !== 'public' || next === undefined || !(isName(next) || isQuoted(next))) continue;
      name = next.word ?? next.text.slice(1, -1).replace(/""/g, '"');
      last = i + 2;
      if (next.word !== undefined && (PARSER_TYPES.has(next.word) || OTHER_PARSER_TYPES.has(next.word))) {
        out = [...out.slice(0, i), ...out.slice(i + 2)];
        continue;
      }
    } else if (word !== undefined) {
      const alias = TYPE_ALIASES[word];
      if (alias !== undefined) {
        out = [...out.slice(0, i), { text: alias, word: alias, space: t.space }, ...out.slice(i + 1)];
        continue;
      }
      if (OTHER_POSTGRES_TYPES.has(word)) sqlFail('0A000', `unsupported: type ${word}`);
    }
    const array = out[last + 1]?.text === '[' && (out[last + 2]?.text === ']' || (isNumber(out[last + 2]) && out[last + 3]?.text === ']'));
    if (array) last += out[last + 2]!.text === ']' ? 2 : 3;
    const quote = (v: string): Token => ({ text: `'${v.replace(/'/g, "''")}'`, space: '' });
    const ref: Token[] = [
      { text: 'ENUM', word: 'enum', space: '' },
      { text: '(', space: '' },
      quote(TYPE_REF_MARKER),
      { text: ',', space: ' ' },
      quote(name),
      ...(array ? [{ text: ',', space: ' ' }, quote('[]')] : []),
      { text: ')', space: out[last]!.space },
    ];
    if (typed && out[last + 1] !== undefined && isString(out[last + 1])) {
      // `mood 'happy'` -> CAST('happy' AS ENUM(...)).
      const literal = out[last + 1]!;
      const cast: Token[] = [{ text: 'CAST', word: 'cast', space: '' }, { text: '(', space: '' }, { ...literal, space: ' ' }, { text: 'AS', word: 'as', space: ' ' }, ...ref.slice(0, -1), { text: ')', space: '' }, { text: ')', space: literal.space }];
      out = [...out.slice(0, i), ...cast, ...out.slice(last + 2)];
      i += cast.length - 1;
      continue;
    }
    out = [...out.slice(0, i), ...ref, ...out.slice(last + 1)];
    i += ref.length - 1;
  }
  return out;
}

/**
 * Whether tokens[i] is a typed literal's type: a name right before a string, where an operand
 * starts (after an operator, `(`, `[`, `,` or a keyword). Not the one-letter prefixes of PostgreSQL's
 * B'...', X'...' and N'...' strings.
 */
function typedLiteralAt(tokens: Token[], i: number): boolean {
  const t = tokens[i]!;
  if (!isString(tokens[i + 1]) || KEYWORDS.has(t.word!) || NOT_TYPES.has(t.word!) || (t.space === '' && t.word!.length === 1)) return false;
  const before = tokens[i - 1];
  return before === undefined || before.text === '(' || before.text === '[' || before.text === ',' || isOperatorChar(before) || (before.word !== undefined && KEYWORDS.has(before.word) && before.word !== 'as');
}

/** Whether tokens[i] is where a cast's type name starts: after `::`, or after the AS of CAST(... AS. */
function castTypeAt(tokens: Token[], i: number): boolean {
  if (tokens[i - 1]?.text === ':' && tokens[i - 2]?.text === ':') return true;
  if (tokens[i - 1]?.word !== 'as') return false;
  for (let k = i - 2, depth = 0; k >= 0; k--) {
    const t = tokens[k]!.text;
    if (t === ')') depth++;
    else if (t === '(' && depth-- === 0) return tokens[k - 1]?.word === 'cast';
  }
  return false;
}

// ---- (query) where a query starts -------------------------------------------------------------

const SET_OPERATORS = new Set(['union', 'intersect', 'except']);
/** What may follow a query inside the parentheses of a larger one. */
const QUERY_TAIL = new Set(['order', 'limit', 'offset', 'fetch', 'union', 'intersect', 'except']);

/**
 * How the parenthesised tokens[open..close] hold a query the parser cannot read: 'set' for a set
 * operation at their top level (`(SELECT 1 UNION SELECT 2)`), 'nested' for a parenthesised query
 * followed by more of a query (`((SELECT 1) LIMIT 1)`, `((SELECT 1) UNION (SELECT 2))`).
 */
function unreadableQuery(tokens: Token[], open: number, close: number): 'set' | 'nested' | undefined {
  let first = open + 1;
  const nested = tokens[first]?.text === '(';
  while (tokens[first]?.text === '(') first++;
  const word = tokens[first]?.word;
  if (word !== 'select' && word !== 'with' && word !== 'values') return undefined;
  for (let k = open + 1, depth = 0; k < close; k++) {
    const t = tokens[k]!;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (depth === 0 && t.word !== undefined && (nested ? QUERY_TAIL : SET_OPERATORS).has(t.word)) return nested ? 'nested' : 'set';
  }
  return undefined;
}

/**
 * Whether the `(` at `open` stands where a query starts: the statement's start, after a set
 * operator or `INSERT INTO t`, or first in a query's parentheses (not a call's arguments) with more of that query
 * after it, or alone in parentheses that stand where a query starts.
 */
function startsQuery(tokens: Token[], open: number, close: number): boolean {
  const before = tokens[open - 1];
  if (before === undefined || before.word === 'explain' || SET_OPERATORS.has(before.word ?? '')) return true;
  if ((before.word === 'all' || before.word === 'distinct') && SET_OPERATORS.has(tokens[open - 2]?.word ?? '')) return true;
  if (insertSource(tokens, open)) return true;
  if (before.text !== '(' || callArguments(tokens, open - 1)) return false;
  const after = tokens[close + 1];
  return QUERY_TAIL.has(after?.word ?? '') || (after?.text === ')' && startsQuery(tokens, open - 1, close + 1));
}

/** `INSERT INTO t (query)`: a column list never starts with SELECT, WITH, VALUES or `(`. */
function insertSource(tokens: Token[], open: number): boolean {
  return isName(tokens[open - 1]) && tokens[open - 2]?.word === 'into' && tokens[open - 3]?.word === 'insert';
}

/** Whether the `(` at `open` holds a function call's arguments. */
function callArguments(tokens: Token[], open: number): boolean {
  return isNameAt(tokens, open - 1) && !insertSource(tokens, open);
}

/** Words before a parenthesised query whose select list may be wide: a table, a WITH query's body, EXISTS, IN, ANY/ALL. */
const WIDE_QUERY_PLACES = new Set(['from', 'join', 'lateral', 'as', 'materialized', 'exists', 'in', 'any', 'some', 'all']);

/**
 * Whether the parenthesised tokens[open..close] hold a SELECT whose select list has a `*` item or
 * several items: the parser refuses such a scalar subquery as a select item (or a CASE branch),
 * PostgreSQL answers `(SELECT * FROM t)` of a one-column t and refuses more columns with 42601
 * "subquery must return only one column". Not where a query starts, nor as a table, a WITH
 * query's body, an EXISTS, IN or ANY/ALL operand, nor a row's value, which the parser reads.
 */
function wideScalarQuery(tokens: Token[], open: number, close: number): boolean {
  if (tokens[open + 1]?.word !== 'select' || WIDE_QUERY_PLACES.has(tokens[open - 1]?.word ?? '') || startsQuery(tokens, open, close)) return false;
  // A row's value: SET (a, b) = (SELECT x, y ...), (a, b) = (SELECT x, y ...).
  if (tokens[open - 1]?.text === '=' && tokens[open - 2]?.text === ')') return false;
  for (let k = open + 2, depth = 0; k < close; k++) {
    const t = tokens[k]!;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    else if (depth > 0) continue;
    else if (t.word !== undefined && SELECT_LIST_ENDS.has(t.word)) return false;
    else if (t.text === ',') return true;
    // A `*` item (or `t.*`): after SELECT, DISTINCT, ALL, a comma or a qualifier's dot, never after an operand.
    else if (t.text === '*' && (tokens[k - 1]!.text === '.' || ['select', 'distinct', 'all'].includes(tokens[k - 1]!.word ?? ''))) return true;
  }
  return false;
}

/** Words that end a select list at its top level. */
const SELECT_LIST_ENDS = new Set(['from', 'where', 'group', 'having', 'window', 'order', 'limit', 'offset', 'fetch', 'into', 'union', 'intersect', 'except']);

function rewriteQueryParens(tokens: Token[]): Token[] {
  let out = tokens;
  for (let i = 0; i < out.length; i++) {
    if (out[i]!.text !== '(') continue;
    const close = matching(out, i, '(', ')', 1);
    const kind = close < 0 ? undefined : unreadableQuery(out, i, close);
    // A query in parentheses anywhere but a call's arguments (a scalar subquery, IN, EXISTS, FROM)
    // when its body starts with parentheses; a set operation only where a query starts; a scalar
    // subquery with a wide select list.
    const wide = close >= 0 && wideScalarQuery(out, i, close);
    if (!wide && (kind === undefined || (kind === 'nested' ? callArguments(out, i) : !startsQuery(out, i, close)))) continue;
    const wrapped: Token[] = [
      { text: '(', space: '' },
      { text: 'SELECT', word: 'select', space: ' ' },
      // Not `*`: the parser refuses `*` in a scalar subquery.
      { text: QUERY_MARKER, word: QUERY_MARKER, space: ' ' },
      { text: 'FROM', word: 'from', space: ' ' },
      { ...out[i]!, space: '' },
      ...out.slice(i + 1, close),
      { text: ')', space: ' ' },
      { text: 'AS', word: 'as', space: ' ' },
      { text: QUERY_MARKER, space: '' },
      { text: ')', space: out[close]!.space },
    ];
    out = [...out.slice(0, i), ...wrapped, ...out.slice(close + 1)];
    // On inside: a query in these parentheses may need the same.
    i += 4;
  }
  return out;
}

// ---- GENERATED ALWAYS AS ----------------------------------------------------------------------

/**
 * A generated column in CREATE TABLE or ALTER TABLE: `GENERATED ALWAYS AS (expr) STORED` ->
 * `DEFAULT <GENERATED_MARKER>((expr))`, `GENERATED ALWAYS AS IDENTITY` -> `DEFAULT
 * <IDENTITY_ALWAYS_MARKER>()` (the parser reads neither form; it reads BY DEFAULT AS IDENTITY).
 * PostgreSQL 15's grammar requires STORED (VIRTUAL, and STORED left out, are PostgreSQL 18's).
 * @throws SQL_ERROR 42601 without STORED, for BY DEFAULT AS (expr), and for a column with two
 * defaults, identities or generation clauses, or two of them (checkColumnDefaults)
 */
function rewriteGenerated(tokens: Token[]): Token[] {
  if (!((tokens[0]?.word === 'create' || tokens[0]?.word === 'alter') && tokens[1]?.word === 'table')) return tokens;
  let out = tokens;
  for (let i = 0; i < out.length; i++) {
    if (out[i]!.word !== 'generated') continue;
    const always = out[i + 1]?.word === 'always';
    const as = always ? i + 2 : out[i + 1]?.word === 'by' && out[i + 2]?.word === 'default' ? i + 3 : -1;
    if (as < 0 || out[as]?.word !== 'as') continue;
    if (out[as + 1]?.word === 'identity') {
      // A sequence option list after IDENTITY: carried in the marker call as one string.
      const open = out[as + 2]?.text === '(' ? as + 2 : -1;
      const close = open < 0 ? -1 : matching(out, open, '(', ')', 1);
      if (!always && close < 0) continue;
      const options = close < 0 ? [] : [{ text: `'${encodeSequenceOptions(parseSequenceOptions(out, open, close))}'`, space: '' }];
      const end = close < 0 ? as + 1 : close;
      const marker: Token[] = [
        { text: 'DEFAULT', word: 'default', space: ' ' },
        { text: always ? IDENTITY_ALWAYS_MARKER : IDENTITY_BY_DEFAULT_MARKER, word: always ? IDENTITY_ALWAYS_MARKER : IDENTITY_BY_DEFAULT_MARKER, space: '' },
        { text: '(', space: '' },
        ...options,
        { text: ')', space: out[end]!.space },
      ];
      out = [...out.slice(0, i), ...marker, ...out.slice(end + 1)];
      i += marker.length - 1;
      continue;
    }
    if (out[as + 1]?.text !== '(') continue;
    const close = matching(out, as + 1, '(', ')', 1);
    if (close < 0) continue;
    const next = out[close + 1];
    if (next?.word !== 'stored') sqlFail('42601', next === undefined ? 'syntax error at end of input' : `syntax error at or near "${next.text}"`);
    if (!always) sqlFail('42601', 'for a generated column, GENERATED ALWAYS must be specified');
    const call: Token[] = [
      { text: 'DEFAULT', word: 'default', space: ' ' },
      { text: GENERATED_MARKER, word: GENERATED_MARKER, space: '' },
      { text: '(', space: '' },
      ...out.slice(as + 1, close),
      { text: ')', space: '' },
      { text: ')', space: next.space },
    ];
    out = [...out.slice(0, i), ...call, ...out.slice(close + 2)];
    i += call.length - 1;
  }
  // After the grammar's own errors above, as PostgreSQL reads the column definitions after parsing.
  if (tokens[0]!.word === 'create') checkColumnDefaults(tokens);
  return out;
}

/** Words that start a table constraint in CREATE TABLE's list (anything else starts a column). */
const TABLE_CONSTRAINTS = new Set(['constraint', 'primary', 'unique', 'check', 'foreign', 'exclude', 'like']);

/**
 * PostgreSQL's refusals of a column with two defaults in CREATE TABLE (the parser keeps the last
 * one): two DEFAULTs, identities or generation expressions, or two of these kinds together, or
 * an identity declared NULL.
 * @throws SQL_ERROR 42601
 */
function checkColumnDefaults(tokens: Token[]): void {
  const open = tokens.findIndex((t) => t.text === '(');
  if (open < 3) return;
  const tableToken = tokens[open - 1]!;
  const table = tableToken.word ?? tableToken.text.replace(/^"(.*)"$/, '$1').toLowerCase();
  const close = matching(tokens, open, '(', ')', 1);
  if (close < 0) return;
  let start = open + 1;
  for (let i = open + 1, depth = 0; i <= close; i++) {
    const t = tokens[i]!;
    if (t.text === '(' || t.text === '[') depth++;
    else if ((t.text === ')' && i < close) || t.text === ']') depth--;
    if (!(depth === 0 && (t.text === ',' || i === close))) continue;
    const first = tokens[start];
    if (first !== undefined && !TABLE_CONSTRAINTS.has(first.word ?? '')) {
      let defaults = 0;
      let identities = 0;
      let generated = 0;
      let nullable = false;
      for (let k = start + 1, d = 0; k < i; k++) {
        const w = tokens[k]!;
        if (w.text === '(') d++;
        else if (w.text === ')') d--;
        // Not BY DEFAULT (an identity) nor ON DELETE / UPDATE SET DEFAULT (a foreign key's action).
        else if (d === 0 && w.word === 'default' && tokens[k - 1]?.word !== 'by' && tokens[k - 1]?.word !== 'set') defaults++;
        // A NULL constraint, not NOT NULL, DEFAULT NULL or ON DELETE SET NULL.
        else if (d === 0 && w.word === 'null' && !['not', 'default', 'set', 'is'].includes(tokens[k - 1]?.word ?? '')) nullable = true;
        else if (d === 0 && w.word === 'generated') {
          const as = tokens[k + 1]?.word === 'always' ? k + 2 : k + 3;
          if (tokens[as + 1]?.word === 'identity') identities++;
          else if (tokens[as + 1]?.text === '(') generated++;
        }
      }
      const column = first.word ?? first.text.replace(/^"(.*)"$/, '$1');
      const of = `for column "${column}" of table "${table}"`;
      if (defaults > 1) sqlFail('42601', `multiple default values specified ${of}`);
      if (identities > 1) sqlFail('42601', `multiple identity specifications ${of}`);
      if (generated > 1) sqlFail('42601', `multiple generation clauses specified ${of}`);
      // An identity column is NOT NULL.
      if (identities > 0 && nullable) sqlFail('42601', `conflicting NULL/NOT NULL declarations ${of}`);
      if (defaults > 0 && identities > 0) sqlFail('42601', `both default and identity specified ${of}`);
      if (defaults > 0 && generated > 0) sqlFail('42601', `both default and generation expression specified ${of}`);
      if (identities > 0 && generated > 0) sqlFail('42601', `both identity and generation expression specified ${of}`);
    }
    start = i + 1;
  }
}

// ---- OVERRIDING ... VALUE ----------------------------------------------------------------------

/**
 * `INSERT INTO t [(cols)] OVERRIDING SYSTEM | USER VALUE ...` -> `INSERT INTO t PARTITION
 * (<marker>) [(cols)] ...` (see the file comment); any other word after OVERRIDING is left to
 * the parser's syntax error.
 */
function rewriteOverriding(tokens: Token[]): Token[] {
  if (tokens[0]?.word !== 'insert' || tokens[1]?.word !== 'into' || !isName(tokens[2])) return tokens;
  let name = 3;
  while (tokens[name]?.text === '.' && isName(tokens[name + 1])) name += 2;
  let at = name;
  if (tokens[at]?.text === '(' && tokens[at + 1]?.word !== 'select') at = matching(tokens, at, '(', ')', 1) + 1;
  const kind = tokens[at]?.word === 'overriding' && tokens[at + 2]?.word === 'value' ? tokens[at + 1]?.word : undefined;
  if (at <= 0 || (kind !== 'system' && kind !== 'user')) return tokens;
  const partition: Token[] = [
    { text: 'PARTITION', word: 'partition', space: ' ' },
    { text: '(', space: '' },
    { text: kind === 'system' ? OVERRIDING_SYSTEM_MARKER : OVERRIDING_USER_MARKER, space: '' },
    { text: ')', space: ' ' },
  ];
  return [...tokens.slice(0, name - 1), { ...tokens[name - 1]!, space: ' ' }, ...partition, ...tokens.slice(name, at), ...tokens.slice(at + 3)];
}

// ---- INSERT INTO t AS alias ---------------------------------------------------------------------

/**
 * `INSERT INTO t AS a ...` -> `INSERT INTO t ...` with every `a.` reference made `t.` (the parser
 * reads no alias there; ON CONFLICT DO UPDATE and RETURNING name the target by it). The alias is
 * read as the table's name throughout the statement, a subquery's own `a` included. A `public.`
 * before the target goes too (with it, the parser reads no ON CONFLICT).
 */
function rewriteInsertAlias(tokens: Token[]): Token[] {
  if (tokens[0]?.word !== 'insert' || tokens[1]?.word !== 'into' || !isName(tokens[2])) return tokens;
  if (tokens[2]!.word === 'public' && tokens[3]?.text === '.' && isName(tokens[4])) tokens = [...tokens.slice(0, 2), { ...tokens[4]!, space: tokens[4]!.space }, ...tokens.slice(5)];
  let k = 3;
  while (tokens[k]?.text === '.' && isName(tokens[k + 1])) k += 2;
  if (tokens[k]?.word !== 'as' || !isName(tokens[k + 1])) return tokens;
  const nameOf = (t: Token): string => t.word ?? t.text.slice(1, -1).replace(/""/g, '"').toLowerCase();
  const alias = nameOf(tokens[k + 1]!);
  const table = tokens[k - 1]!;
  const out: Token[] = [...tokens.slice(0, k - 1), { ...table, space: tokens[k + 1]!.space }];
  for (let i = k + 2; i < tokens.length; i++) {
    const t = tokens[i]!;
    const qualifier = isName(t) && nameOf(t) === alias && tokens[i + 1]?.text === '.' && tokens[i - 1]?.text !== '.';
    out.push(qualifier ? { ...table, space: t.space } : t);
  }
  return out;
}

// ---- CONSTRAINT "Name" -------------------------------------------------------------------------

/** `CONSTRAINT "Name"` in CREATE TABLE / ALTER TABLE -> `CONSTRAINT "<QUOTED_NAME_MARKER>Name"` (see the marker). */
function rewriteConstraintNames(tokens: Token[]): Token[] {
  if (!((tokens[0]?.word === 'create' || tokens[0]?.word === 'alter') && tokens[1]?.word === 'table')) return tokens;
  let out = tokens;
  for (let i = 2; i < out.length - 1; i++) {
    if (out[i]!.word !== 'constraint') continue;
    // DROP CONSTRAINT IF EXISTS "c"
    const at = out[i + 1]!.word === 'if' && out[i + 2]?.word === 'exists' ? i + 3 : i + 1;
    const name = out[at];
    if (!isQuoted(name)) continue;
    out = [...out.slice(0, at), { ...name!, text: `"${QUOTED_NAME_MARKER}${name!.text.slice(1)}` }, ...out.slice(at + 1)];
  }
  return out;
}

// ---- DROP COLUMN ... CASCADE | RESTRICT ----------------------------------------------------------

/**
 * `ALTER TABLE t DROP [COLUMN] [IF EXISTS] a CASCADE` -> `... DROP [COLUMN] [IF EXISTS]
 * "<DROP_CASCADE_MARKER>a"`, and `... a RESTRICT` (the default) -> `... a`: the parser reads
 * neither word there. `DROP CONSTRAINT [IF EXISTS] c [CASCADE | RESTRICT]` -> `DROP CONSTRAINT
 * "[<DROP_IF_EXISTS_MARKER>][<DROP_CASCADE_MARKER>]c"`: the parser reads no IF EXISTS there either.
 */
function rewriteDropBehavior(tokens: Token[]): Token[] {
  if (tokens[0]?.word !== 'alter' || tokens[1]?.word !== 'table' || !tokens.some((t) => t.word === 'cascade' || t.word === 'restrict' || t.word === 'constraint')) return tokens;
  let out = tokens;
  for (let i = 2, depth = 0; i < out.length; i++) {
    const t = out[i]!;
    if (t.text === '(') depth++;
    else if (t.text === ')') depth--;
    if (depth !== 0 || t.word !== 'drop') continue;
    let at = i + 1;
    const constraint = out[at]?.word === 'constraint';
    if (out[at]?.word === 'column' || constraint) at++;
    const ifExists = out[at]?.word === 'if' && out[at + 1]?.word === 'exists';
    if (ifExists && constraint) out = [...out.slice(0, at), ...out.slice(at + 2)];
    else if (ifExists) at += 2;
    const name = out[at];
    const behavior = out[at + 1]?.word;
    const given = behavior === 'cascade' || behavior === 'restrict';
    if (name === undefined || !isName(name) || (!given && !(constraint && ifExists))) continue;
    const end = at + (given ? 2 : 1);
    if (out[end] !== undefined && out[end]!.text !== ',' && out[end]!.text !== ';') continue;
    const written = name.word ?? name.text.slice(1, -1);
    const prefix = `${constraint && ifExists ? DROP_IF_EXISTS_MARKER : ''}${behavior === 'cascade' ? DROP_CASCADE_MARKER : ''}`;
    const named: Token = prefix === '' ? { ...name, space: out[end - 1]!.space } : { text: `"${prefix}${written}"`, space: out[end - 1]!.space };
    out = [...out.slice(0, at), named, ...out.slice(end)];
  }
  return out;
}

// ---- timetz ------------------------------------------------------------------------------------

/**
 * `timetz[(p)]` -> `time[(p)] with time zone` (see the file comment), where a type is read: the
 * parser reads only the long spelling. Elsewhere `timetz` is a name.
 */
function rewriteTimetz(tokens: Token[]): Token[] {
  let out = tokens;
  const ddl = out[0]?.word === 'create' || out[0]?.word === 'alter';
  for (let i = 0; i < out.length; i++) {
    const t = out[i]!;
    if (t.word !== 'timetz' || out[i - 1]?.text === '.') continue;
    const close = out[i + 1]?.text === '(' ? matching(out, i + 1, '(', ')', 1) : i;
    if (close < 0) continue;
    const literal = isString(out[close + 1]) && typedLiteralAt([...out.slice(0, i + 1), ...out.slice(close + 1)], i);
    if (!(literal || castTypeAt(out, i) || alterTypeAt(out, i) || (ddl && columnTypeAt(out, i)))) continue;
    const last = out[close]!;
    const words: Token[] = [
      { text: 'time', word: 'time', space: close === i ? ' ' : '' },
      ...out.slice(i + 1, close),
      ...(close === i ? [] : [{ ...last, space: ' ' }]),
      { text: 'with', word: 'with', space: ' ' },
      { text: 'time', word: 'time', space: ' ' },
      { text: 'zone', word: 'zone', space: last.space },
    ];
    out = [...out.slice(0, i), ...words, ...out.slice(close + 1)];
    i += words.length - 1;
  }
  return out;
}

// ---- AT TIME ZONE ------------------------------------------------------------------------------

/**
 * `operand AT TIME ZONE zone` -> `pg_catalog.timezone((zone), (operand))` (see the file comment). The operand
 * is what binds tighter than AT before it (powerOperandStart: a primary with its casts and
 * subscripts, the unary signs before it; a COLLATE is a call by now), the zone likewise after it
 * (powerOperandEnd). Left to right, so a second AT TIME ZONE takes the first's call as its operand.
 */
function rewriteAtTimeZone(tokens: Token[]): Token[] {
  for (let i = 1; i + 3 < tokens.length; i++) {
    if (tokens[i]!.word !== 'at' || tokens[i + 1]!.word !== 'time' || tokens[i + 2]!.word !== 'zone') continue;
    const start = powerOperandStart(tokens, i - 1);
    const end = powerOperandEnd(tokens, i + 3);
    if (start < 0 || end < 0 || end <= i + 3) continue;
    const call: Token[] = [
      { text: 'pg_catalog', word: 'pg_catalog', space: '' },
      { text: '.', space: '' },
      { text: 'timezone', word: 'timezone', space: '' },
      { text: '(', space: '' },
      { text: '(', space: '' },
      ...tokens.slice(i + 3, end - 1),
      { ...tokens[end - 1]!, space: '' },
      { text: ')', space: '' },
      { text: ',', space: ' ' },
      { text: '(', space: '' },
      ...tokens.slice(start, i - 1),
      { ...tokens[i - 1]!, space: '' },
      { text: ')', space: '' },
      { text: ')', space: tokens[end - 1]!.space },
    ];
    return rewriteAtTimeZone([...tokens.slice(0, start), ...call, ...tokens.slice(end)]);
  }
  return tokens;
}

/**
 * A column, table or alias named `at` (PostgreSQL's AT is a non-reserved keyword: `CREATE TABLE
 * e (at timestamptz)`, `SELECT at FROM e`), which the parser reads as the start of AT TIME ZONE and
 * refuses: every `at` left after rewriteAtTimeZone is quoted, `"at"` (the same name: it is lower
 * case).
 */
function quoteBareAt(tokens: Token[]): Token[] {
  if (!tokens.some((t) => t.word === 'at')) return tokens;
  return tokens.map((t) => (t.word === 'at' ? { text: '"at"', space: t.space } : t));
}

// ---- COLLATE -----------------------------------------------------------------------------------

/** Words that end a COLLATE's operand as values, not column names (rewritten, not left to the parser). */
const VALUE_WORDS = new Set(['null', 'true', 'false', 'current_date', 'current_time', 'current_timestamp', 'localtime', 'localtimestamp', 'current_user', 'session_user', 'user', 'current_role', 'current_catalog', 'current_schema']);

/** Whether a token can be a part of a collation's name (an identifier, quoted or not). */
const isNamePart = (t: Token | undefined): boolean => t !== undefined && (isQuoted(t) || (t.word !== undefined && !KEYWORDS.has(t.word) && t.word !== 'default'));

/**
 * `operand COLLATE name` -> `<COLLATE_MARKER>((operand), name)` (see the file comment). The
 * operand is what binds tighter than COLLATE before it: a primary with its casts and subscripts
 * and the unary signs before it (powerOperandStart), an earlier `COLLATE name` included.
 * @throws SQL_ERROR 42601 / 0A000 for a name of four / three parts, as PostgreSQL
 */
function rewriteCollate(tokens: Token[]): Token[] {
  if (!tokens.some((t) => t.word === 'collate')) return tokens;
  let out = tokens;
  for (let i = 0; i < out.length; i++) {
    if (out[i]!.word !== 'collate' || !isNamePart(out[i + 1])) continue;
    let end = i + 2;
    while (out[end]?.text === '.' && isNamePart(out[end + 1])) end += 2;
    const parts = (end - i) / 2;
    if (parts > 2) {
      const written = out.slice(i + 1, end).map((t) => (isQuoted(t) ? t.text.slice(1, -1) : (t.word ?? t.text))).join('');
      if (parts > 3) sqlFail('42601', `improper qualified name (too many dotted names): ${written}`);
      sqlFail('0A000', `cross-database references are not implemented: ${written}`);
    }
    if (definitionCollate(out, i)) continue;
    let start = powerOperandStart(out, i - 1);
    while (start > 1 && out[start - 1]!.word === 'collate') start = powerOperandStart(out, start - 2);
    if (start < 0) continue;
    // In PARTITION BY the parser reads only column references, and their COLLATE (made the same
    // call after parsing): left to it.
    const operand = out.slice(start, i);
    const bare = operand.every((t, k) => (k % 2 === 0 ? isName(t) && !VALUE_WORDS.has(t.word ?? '') : t.text === '.')) && operand.length % 2 === 1;
    if (bare && inPartitionBy(out, start)) continue;
    const call: Token[] = [
      { text: COLLATE_MARKER, word: COLLATE_MARKER, space: '' },
      { text: '(', space: '' },
      { text: '(', space: '' },
      ...operand.slice(0, -1),
      { ...operand[operand.length - 1]!, space: '' },
      { text: ')', space: '' },
      { text: ',', space: ' ' },
      ...out.slice(i + 1, end - 1),
      { ...out[end - 1]!, space: '' },
      { text: ')', space: out[end - 1]!.space },
    ];
    out = [...out.slice(0, start), ...call, ...out.slice(end)];
    i = start + call.length - 1;
  }
  return out;
}

/** Whether tokens[at] starts an item of a PARTITION BY list (column references, with their COLLATE). */
function inPartitionBy(tokens: Token[], at: number): boolean {
  let k = at - 1;
  while (k >= 0 && (tokens[k]!.text === ',' || tokens[k]!.text === '.' || tokens[k]!.word === 'collate' || isName(tokens[k]))) k--;
  return tokens[k]?.word === 'by' && tokens[k - 1]?.word === 'partition';
}

/**
 * Whether the COLLATE at `at` belongs to a definition, where the parser reads it: a column's in
 * CREATE TABLE (in its list, not inside a CHECK or a parenthesised DEFAULT) or in ALTER TABLE
 * (outside any parentheses), an index element's in CREATE INDEX (in its list).
 */
function definitionCollate(tokens: Token[], at: number): boolean {
  const first = tokens[0]?.word;
  if (first !== 'create' && first !== 'alter') return false;
  // The innermost parenthesis open at `at`.
  let open = -1;
  const stack: number[] = [];
  for (let k = 0; k < at; k++) {
    if (tokens[k]!.text === '(') stack.push(k);
    else if (tokens[k]!.text === ')') stack.pop();
  }
  open = stack.length > 0 ? stack[stack.length - 1]! : -1;
  const words = tokens.slice(0, 6).map((t) => t.word);
  if (first === 'alter') return words[1] === 'table' && open < 0;
  if (words.includes('table')) return open >= 0 && stack.length === 1 && open === tokens.findIndex((t) => t.text === '(');
  if (words.includes('index')) {
    const on = tokens.findIndex((t) => t.word === 'on');
    return on >= 0 && stack.length === 1 && open === tokens.findIndex((t, k) => k > on && t.text === '(');
  }
  return false;
}
