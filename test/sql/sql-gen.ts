// Seeded generator for the SQL differential suite (sql.diff.test.ts): a small schema with
// data, random SELECT queries over it and random DML sequences. Every query is built so that
// PostgreSQL's answer is deterministic: a LIMIT always follows an ORDER BY over every output
// column, window orderings that pick single rows (row_number, lag, ROWS frames) end in the
// primary key, float data are multiples of 1/4 (sums are exact in any order), and divisors are
// non-zero constants. Only what docs/sql.md lists as supported is generated.
import { randomInt, seededRandom } from '../helpers/random.js';

/** The value kinds the generator types its expressions with. */
export type GenType = 'int' | 'num' | 'float' | 'text' | 'bool' | 'date';

/** One generated statement and how to compare its result. */
export interface GenQuery {
  sql: string;
  /** The statement ends in ORDER BY over every output column: compare rows in order. */
  ordered: boolean;
  /** Output positions holding string_agg(x, ',') without ORDER BY: compare their pieces as multisets. */
  unorderedLists: number[];
  /** The template family, for coverage counts. */
  family: string;
}

interface Col {
  ref: string;
  type: GenType;
}

interface TableDef {
  name: string;
  pk: string;
  cols: { name: string; type: GenType }[];
}

/** The schema: three tables, a composite-free primary key each, a secondary index, foreign keys. */
export const TABLES: TableDef[] = [
  { name: 't1', pk: 'id', cols: [{ name: 'id', type: 'int' }, { name: 'a', type: 'int' }, { name: 'b', type: 'int' }, { name: 'n', type: 'num' }, { name: 's', type: 'text' }, { name: 'flag', type: 'bool' }, { name: 'd', type: 'date' }] },
  { name: 't2', pk: 'id', cols: [{ name: 'id', type: 'int' }, { name: 't1_id', type: 'int' }, { name: 'a', type: 'int' }, { name: 'n', type: 'num' }, { name: 's', type: 'text' }, { name: 'flag', type: 'bool' }, { name: 'd', type: 'date' }] },
  { name: 't3', pk: 'id', cols: [{ name: 'id', type: 'int' }, { name: 'a', type: 'int' }, { name: 'b', type: 'int' }, { name: 'label', type: 'text' }, { name: 'f', type: 'float' }, { name: 'flag', type: 'bool' }] },
];

export const SCHEMA_DDL: string[] = [
  'CREATE TABLE t1 (id int PRIMARY KEY, a int, b int CHECK (b > -1000), n numeric(10,2), s text, flag boolean, d date)',
  'CREATE INDEX t1_a ON t1 (a)',
  'CREATE TABLE t2 (id int PRIMARY KEY, t1_id int REFERENCES t1 (id), a int, n numeric(10,2), s text, flag boolean, d date)',
  'CREATE INDEX t2_s ON t2 (s)',
  'CREATE INDEX t2_t1 ON t2 (t1_id)',
  'CREATE TABLE t3 (id int PRIMARY KEY, a int, b int, label text NOT NULL, f double precision, flag boolean, UNIQUE (label, id))',
  'CREATE INDEX t3_ba ON t3 (b, a)',
];

const TEXTS = ["'a'", "'b'", "'ab'", "'abc'", "'B'", "'x_y'", "'%'", "''", "'zz'", "'a b'", "'Ab'"];
const DATES = ["'2020-01-01'", "'2020-02-29'", "'2021-06-15'", "'1999-12-31'", "'2020-01-02'"];

type Rand = () => number;

class Gen {
  readonly #rnd: Rand;
  #alias = 0;
  constructor(rnd: Rand) {
    this.#rnd = rnd;
  }
  chance(p: number): boolean {
    return this.#rnd() < p;
  }
  int(lo: number, hi: number): number {
    return randomInt(this.#rnd, lo, hi);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.#rnd() * xs.length)]!;
  }
  alias(prefix: string): string {
    return `${prefix}${++this.#alias}`;
  }
}

// ---- data ------------------------------------------------------------------------------------

function intLit(g: Gen, lo = -5, hi = 20): string {
  const v = g.int(lo, hi);
  return v < 0 ? `(${v})` : String(v);
}

function valueLiteral(g: Gen, type: GenType, nullable = true): string {
  if (nullable && g.chance(0.15)) return 'NULL';
  switch (type) {
    case 'int':
      return String(g.int(-5, 20));
    case 'num':
      return (g.int(-10000, 10000) / 100).toFixed(2);
    case 'float':
      return String(g.int(-200, 200) / 4);
    case 'text':
      return g.pick(TEXTS);
    case 'bool':
      return g.pick(['true', 'false']);
    case 'date':
      return g.pick(DATES);
  }
}

/** INSERT statements for the initial data: t1 50..80 rows, t2 70..110, t3 30..50. */
export function generateData(seed: number): string[] {
  const g = new Gen(seededRandom(seed ^ 0x5eed));
  const out: string[] = [];
  const n1 = g.int(50, 80);
  const rows1: string[] = [];
  for (let i = 1; i <= n1; i++) rows1.push(`(${i}, ${valueLiteral(g, 'int')}, ${valueLiteral(g, 'int')}, ${valueLiteral(g, 'num')}, ${valueLiteral(g, 'text')}, ${valueLiteral(g, 'bool')}, ${valueLiteral(g, 'date')})`);
  out.push(`INSERT INTO t1 (id, a, b, n, s, flag, d) VALUES ${rows1.join(', ')}`);
  const n2 = g.int(70, 110);
  const rows2: string[] = [];
  for (let i = 1; i <= n2; i++) {
    const fk = g.chance(0.15) ? 'NULL' : String(g.int(1, n1));
    rows2.push(`(${i}, ${fk}, ${valueLiteral(g, 'int')}, ${valueLiteral(g, 'num')}, ${valueLiteral(g, 'text')}, ${valueLiteral(g, 'bool')}, ${valueLiteral(g, 'date')})`);
  }
  out.push(`INSERT INTO t2 (id, t1_id, a, n, s, flag, d) VALUES ${rows2.join(', ')}`);
  const n3 = g.int(30, 50);
  const rows3: string[] = [];
  for (let i = 1; i <= n3; i++) rows3.push(`(${i * 3}, ${valueLiteral(g, 'int')}, ${valueLiteral(g, 'int')}, ${valueLiteral(g, 'text', false)}, ${valueLiteral(g, 'float')}, ${valueLiteral(g, 'bool')})`);
  out.push(`INSERT INTO t3 (id, a, b, label, f, flag) VALUES ${rows3.join(', ')}`);
  return out;
}

// ---- expressions ------------------------------------------------------------------------------

interface Scope {
  cols: Col[];
  /** Tables a correlated subquery may read (all three, under fresh aliases). */
  allowSubqueries: boolean;
}

function colsOf(scope: Scope, type: GenType): Col[] {
  return scope.cols.filter((c) => c.type === type);
}

function literal(g: Gen, type: GenType): string {
  switch (type) {
    case 'int':
      return intLit(g);
    case 'num':
      return g.pick(['1.5', '0.25', '(-2.75)', '10.00', '3']);
    case 'float':
      return g.pick(['1.5::float8', '(-0.25)::float8', '2::float8']);
    case 'text':
      return g.pick(TEXTS);
    case 'bool':
      return g.pick(['true', 'false']);
    case 'date':
      return `${g.pick(DATES)}::date`;
  }
}

function leaf(g: Gen, scope: Scope, type: GenType): string {
  const cols = colsOf(scope, type);
  if (g.chance(0.04)) return `NULL::${{ int: 'int', num: 'numeric', float: 'float8', text: 'text', bool: 'boolean', date: 'date' }[type]}`;
  if (cols.length > 0 && g.chance(0.75)) return g.pick(cols).ref;
  return literal(g, type);
}

/** A correlated or plain subquery over a fresh alias of a random table, of the given type. */
function scalarSubquery(g: Gen, scope: Scope, type: 'int' | 'num' | 'text'): string {
  const t = g.pick(TABLES);
  const al = g.alias('q');
  const inner: Scope = { cols: [...t.cols.map((c) => ({ ref: `${al}.${c.name}`, type: c.type })), ...scope.cols], allowSubqueries: false };
  const where = g.chance(0.8) ? ` WHERE ${correlation(g, inner, al, t, scope)}` : '';
  const ofType = t.cols.filter((c) => c.type === type);
  if (type === 'int') {
    const agg = g.pick(['count(*)', `max(${al}.id)`, `min(${al}.a)`, `sum(${al}.a)`]);
    return `(SELECT ${agg} FROM ${t.name} ${al}${where})`;
  }
  if (ofType.length === 0) return literal(g, type);
  const c = `${al}.${g.pick(ofType).name}`;
  if (g.chance(0.5)) return `(SELECT ${type === 'num' ? g.pick(['max', 'min', 'sum']) : g.pick(['max', 'min'])}(${c}) FROM ${t.name} ${al}${where})`;
  return `(SELECT ${c} FROM ${t.name} ${al}${where} ORDER BY ${c} ${g.pick(['ASC', 'DESC'])} NULLS LAST, ${al}.id LIMIT 1)`;
}

/** A condition linking a subquery's alias to the outer scope (or a plain filter). */
function correlation(g: Gen, inner: Scope, al: string, t: TableDef, outer: Scope): string {
  const outerInts = colsOf(outer, 'int');
  const innerInts = t.cols.filter((c) => c.type === 'int').map((c) => `${al}.${c.name}`);
  if (outerInts.length > 0 && g.chance(0.7)) {
    const op = g.pick(['=', '=', '<', '>=', '<>']);
    const cond = `${g.pick(innerInts)} ${op} ${g.pick(outerInts).ref}`;
    return g.chance(0.3) ? `${cond} AND ${boolExpr(g, { cols: inner.cols.filter((c) => c.ref.startsWith(`${al}.`)), allowSubqueries: false }, 0)}` : cond;
  }
  return boolExpr(g, { cols: inner.cols.filter((c) => c.ref.startsWith(`${al}.`)), allowSubqueries: false }, 1);
}

function intExpr(g: Gen, scope: Scope, depth: number): string {
  if (depth <= 0 || g.chance(0.35)) return leaf(g, scope, 'int');
  const d = depth - 1;
  const forms: (() => string)[] = [
    () => `(${intExpr(g, scope, d)} ${g.pick(['+', '-', '*'])} ${intExpr(g, scope, d)})`,
    () => `(${intExpr(g, scope, d)} ${g.pick(['/', '%'])} ${g.pick(['2', '3', '(-4)', '7'])})`,
    () => `abs(${intExpr(g, scope, d)})`,
    () => `COALESCE(${intExpr(g, scope, d)}, ${intExpr(g, scope, d)})`,
    () => `NULLIF(${intExpr(g, scope, d)}, ${intLit(g)})`,
    () => `CASE WHEN ${boolExpr(g, scope, d)} THEN ${intExpr(g, scope, d)} ELSE ${intExpr(g, scope, d)} END`,
    // The subject is a column or COALESCE(...): node-sql-parser cannot parse `CASE (-3) WHEN` (42601).
    () => `CASE ${colsOf(scope, 'int').length > 0 ? g.pick(colsOf(scope, 'int')).ref : `COALESCE(${intExpr(g, scope, 0)}, 0)`} WHEN 1 THEN ${intExpr(g, scope, d)} WHEN 2 THEN ${intLit(g)} END`,
    () => `length(${textExpr(g, scope, d)})`,
    () => `(${numExpr(g, scope, d)})::int`,
    () => `${g.pick(['GREATEST', 'LEAST'])}(${intExpr(g, scope, d)}, ${intExpr(g, scope, d)})`,
    () => `mod(${intExpr(g, scope, d)}, ${g.pick(['3', '5'])})`,
    () => `(${leaf(g, scope, 'date')} - ${literal(g, 'date')})`,
  ];
  if (scope.allowSubqueries) forms.push(() => scalarSubquery(g, scope, 'int'));
  return g.pick(forms)();
}

function numExpr(g: Gen, scope: Scope, depth: number): string {
  if (depth <= 0 || g.chance(0.35)) return leaf(g, scope, 'num');
  const d = depth - 1;
  const forms: (() => string)[] = [
    () => `(${numExpr(g, scope, d)} ${g.pick(['+', '-', '*'])} ${g.chance(0.5) ? numExpr(g, scope, d) : intExpr(g, scope, d)})`,
    () => `(${numExpr(g, scope, d)} / ${g.pick(['3', '2.5', '(-7)', '0.3'])})`,
    () => `round(${numExpr(g, scope, d)}, ${g.pick(['0', '1', '3'])})`,
    () => `${g.pick(['abs', 'floor', 'ceil', 'round'])}(${numExpr(g, scope, d)})`,
    () => `COALESCE(${numExpr(g, scope, d)}, ${literal(g, 'num')})`,
    () => `(${intExpr(g, scope, d)})::numeric`,
    () => `CASE WHEN ${boolExpr(g, scope, d)} THEN ${numExpr(g, scope, d)} ELSE ${intExpr(g, scope, d)} END`,
    () => `NULLIF(${numExpr(g, scope, d)}, 0)`,
  ];
  if (scope.allowSubqueries) forms.push(() => scalarSubquery(g, scope, 'num'));
  return g.pick(forms)();
}

function floatExpr(g: Gen, scope: Scope, depth: number): string {
  if (depth <= 0 || g.chance(0.4)) return leaf(g, scope, 'float');
  const d = depth - 1;
  return g.pick([
    () => `(${floatExpr(g, scope, d)} ${g.pick(['+', '-'])} ${floatExpr(g, scope, d)})`,
    () => `(${floatExpr(g, scope, d)} * ${g.pick(['2', '0.5', '(-1)'])})`,
    () => `(${intExpr(g, scope, d)})::float8`,
    () => `abs(${floatExpr(g, scope, d)})`,
    () => `COALESCE(${floatExpr(g, scope, d)}, 0)`,
  ])();
}

function textExpr(g: Gen, scope: Scope, depth: number): string {
  if (depth <= 0 || g.chance(0.35)) return leaf(g, scope, 'text');
  const d = depth - 1;
  const forms: (() => string)[] = [
    () => `(${textExpr(g, scope, d)} || ${g.chance(0.7) ? textExpr(g, scope, d) : intExpr(g, scope, d)})`,
    () => `${g.pick(['upper', 'lower', 'trim'])}(${textExpr(g, scope, d)})`,
    () => `substr(${textExpr(g, scope, d)}, ${g.pick(['1', '2'])}, ${g.pick(['1', '2'])})`,
    () => `COALESCE(${textExpr(g, scope, d)}, ${literal(g, 'text')})`,
    () => `NULLIF(${textExpr(g, scope, d)}, ${literal(g, 'text')})`,
    () => `(${intExpr(g, scope, d)})::text`,
    () => `replace(${textExpr(g, scope, d)}, 'a', 'Q')`,
    () => `CASE WHEN ${boolExpr(g, scope, d)} THEN ${textExpr(g, scope, d)} ELSE ${literal(g, 'text')} END`,
  ];
  if (scope.allowSubqueries) forms.push(() => scalarSubquery(g, scope, 'text'));
  return g.pick(forms)();
}

function dateExpr(g: Gen, scope: Scope, depth: number): string {
  if (depth <= 0 || g.chance(0.5)) return leaf(g, scope, 'date');
  const d = depth - 1;
  return g.pick([
    () => `(${dateExpr(g, scope, d)} + ${intLit(g, -40, 400)})`,
    () => `(${dateExpr(g, scope, d)} - ${g.pick(['1', '31'])})`,
    () => `COALESCE(${dateExpr(g, scope, d)}, ${literal(g, 'date')})`,
  ])();
}

function boolExpr(g: Gen, scope: Scope, depth: number): string {
  if (depth <= 0 || g.chance(0.2)) {
    const cols = colsOf(scope, 'bool');
    if (cols.length > 0 && g.chance(0.4)) return g.pick(cols).ref;
    return `(${leaf(g, scope, 'int')} ${g.pick(['=', '<', '>', '<=', '>=', '<>'])} ${leaf(g, scope, 'int')})`;
  }
  const d = depth - 1;
  const forms: (() => string)[] = [
    () => `(${boolExpr(g, scope, d)} ${g.pick(['AND', 'OR'])} ${boolExpr(g, scope, d)})`,
    () => `(NOT ${boolExpr(g, scope, d)})`,
    () => `(${intExpr(g, scope, d)} ${g.pick(['=', '<', '>', '<=', '>=', '<>'])} ${intExpr(g, scope, d)})`,
    () => `(${numExpr(g, scope, d)} ${g.pick(['=', '<', '>='])} ${g.chance(0.5) ? numExpr(g, scope, d) : intExpr(g, scope, d)})`,
    () => `(${textExpr(g, scope, d)} ${g.pick(['=', '<', '>', '<>'])} ${textExpr(g, scope, d)})`,
    () => `(${textExpr(g, scope, d)} ${g.pick(['LIKE', 'NOT LIKE', 'ILIKE'])} ${g.pick(["'a%'", "'%b%'", "'_b'", "'A%'", "'x\\_%'", "'%'"])})`,
    () => `(${intExpr(g, scope, d)} ${g.pick(['BETWEEN', 'NOT BETWEEN'])} ${intLit(g)} AND ${intLit(g)})`,
    () => `(${intExpr(g, scope, d)} ${g.pick(['IN', 'NOT IN'])} (${intLit(g)}, ${intLit(g)}${g.chance(0.3) ? ', NULL' : ''}))`,
    () => `(${textExpr(g, scope, d)} IN (${g.pick(TEXTS)}, ${g.pick(TEXTS)}))`,
    () => `(${g.pick([intExpr, textExpr, numExpr])(g, scope, d)} IS ${g.pick(['', 'NOT '])}NULL)`,
    () => `(${dateExpr(g, scope, d)} ${g.pick(['=', '<', '>='])} ${dateExpr(g, scope, d)})`,
    () => `(${boolExpr(g, scope, d)} IS ${g.pick(['TRUE', 'NOT TRUE', 'FALSE', 'NOT FALSE'])})`,
    () => `COALESCE(${boolExpr(g, scope, d)}, ${g.pick(['true', 'false'])})`,
  ];
  if (colsOf(scope, 'float').length > 0) forms.push(() => `(${floatExpr(g, scope, d)} ${g.pick(['<', '>', '='])} ${g.pick(['0', '2.5', '(-1)'])})`);
  if (scope.allowSubqueries) {
    forms.push(() => {
      const t = g.pick(TABLES);
      const al = g.alias('e');
      const inner: Scope = { cols: [...t.cols.map((c) => ({ ref: `${al}.${c.name}`, type: c.type })), ...scope.cols], allowSubqueries: false };
      return `(${g.pick(['', 'NOT '])}EXISTS (SELECT 1 FROM ${t.name} ${al} WHERE ${correlation(g, inner, al, t, scope)}))`;
    });
    forms.push(() => {
      const t = g.pick(TABLES);
      const al = g.alias('i');
      const innerCol = `${al}.${g.pick(t.cols.filter((c) => c.type === 'int' && c.name !== 'id')).name}`;
      const inner: Scope = { cols: t.cols.map((c) => ({ ref: `${al}.${c.name}`, type: c.type })), allowSubqueries: false };
      const where = g.chance(0.6) ? ` WHERE ${g.chance(0.5) ? correlation(g, { cols: [...inner.cols, ...scope.cols], allowSubqueries: false }, al, t, scope) : boolExpr(g, inner, 1)}` : '';
      return `(${intExpr(g, { ...scope, allowSubqueries: false }, 1)} ${g.pick(['IN', 'NOT IN'])} (SELECT ${innerCol} FROM ${t.name} ${al}${where}))`;
    });
  }
  return g.pick(forms)();
}

function exprOf(g: Gen, scope: Scope, type: GenType, depth: number): string {
  switch (type) {
    case 'int':
      return intExpr(g, scope, depth);
    case 'num':
      return numExpr(g, scope, depth);
    case 'float':
      return floatExpr(g, scope, depth);
    case 'text':
      return textExpr(g, scope, depth);
    case 'bool':
      return boolExpr(g, scope, depth);
    case 'date':
      return dateExpr(g, scope, depth);
    default: {
      const never: never = type;
      return never;
    }
  }
}

// ---- FROM clauses -----------------------------------------------------------------------------

interface From {
  sql: string;
  scope: Col[];
  /** Per-alias primary key refs, which make a window ordering total. */
  keys: string[];
}

function tableRef(g: Gen, t: TableDef): From {
  const al = g.alias(t.name.replace('t', 'x'));
  return { sql: `${t.name} ${al}`, scope: t.cols.map((c) => ({ ref: `${al}.${c.name}`, type: c.type })), keys: [`${al}.${t.pk}`] };
}

/** ON for two sides; `equi` keeps an equality in it (PostgreSQL refuses FULL JOIN without one, 0A000). */
function joinCondition(g: Gen, left: From, right: From, equi = false): string {
  const li = left.scope.filter((c) => c.type === 'int');
  const ri = right.scope.filter((c) => c.type === 'int');
  const eq = `${g.pick(li).ref} = ${g.pick(ri).ref}`;
  const r = g.int(0, equi ? 6 : 9);
  if (r < 5) return eq;
  if (r < 7) return `${eq} AND ${boolExpr(g, { cols: [...left.scope, ...right.scope], allowSubqueries: false }, 1)}`;
  if (r < 9) return `${g.pick(li).ref} ${g.pick(['<', '>=', '<>'])} ${g.pick(ri).ref} AND ${g.pick(li).ref} = ${g.pick(ri).ref}`;
  return `${g.pick(li).ref} < ${g.pick(ri).ref}`;
}

function fromClause(g: Gen, allowDerived: boolean): From {
  const r = g.int(0, 19);
  if (r < 6) return tableRef(g, g.pick(TABLES));
  if (r < 15) {
    const left = tableRef(g, g.pick(TABLES));
    const right = tableRef(g, g.pick(TABLES));
    const kind = g.pick(['JOIN', 'INNER JOIN', 'LEFT JOIN', 'LEFT OUTER JOIN', 'RIGHT JOIN', 'FULL JOIN', 'CROSS JOIN', ',']);
    let sql: string;
    if (kind === 'CROSS JOIN' || kind === ',') sql = `${left.sql}${kind === ',' ? ',' : ' CROSS JOIN'} ${right.sql}`;
    else sql = `${left.sql} ${kind} ${right.sql} ON ${joinCondition(g, left, right, kind === 'FULL JOIN')}`;
    let from: From = { sql, scope: [...left.scope, ...right.scope], keys: [...left.keys, ...right.keys] };
    if (g.chance(0.2)) {
      const third = tableRef(g, g.pick(TABLES));
      const k = g.pick(['JOIN', 'LEFT JOIN']);
      from = { sql: `${from.sql} ${k} ${third.sql} ON ${joinCondition(g, from, third)}`, scope: [...from.scope, ...third.scope], keys: [...from.keys, ...third.keys] };
    }
    return from;
  }
  if (!allowDerived) return tableRef(g, g.pick(TABLES));
  // A derived table: a filtered, projected subquery (sometimes grouped).
  const inner = tableRef(g, g.pick(TABLES));
  const al = g.alias('dt');
  const innerScope: Scope = { cols: inner.scope, allowSubqueries: false };
  if (g.chance(0.4)) {
    const key = g.pick(inner.scope.filter((c) => c.type === 'int' || c.type === 'text'));
    const sql = `(SELECT ${key.ref} AS k, count(*) AS cnt, sum(${g.pick(colsOf(innerScope, 'int')).ref}) AS total FROM ${inner.sql} GROUP BY ${key.ref}) ${al}`;
    return { sql, scope: [{ ref: `${al}.k`, type: key.type }, { ref: `${al}.cnt`, type: 'int' }, { ref: `${al}.total`, type: 'int' }], keys: [`${al}.k`] };
  }
  const types: GenType[] = ['int', 'int', g.pick(['num', 'text', 'bool', 'date'] as const)];
  const cols = types.map((t, i) => ({ name: `c${i}`, type: t, expr: i === 0 ? inner.keys[0]! : exprOf(g, innerScope, t, 1) }));
  const where = g.chance(0.5) ? ` WHERE ${boolExpr(g, innerScope, 1)}` : '';
  const sql = `(SELECT ${cols.map((c) => `${c.expr} AS ${c.name}`).join(', ')} FROM ${inner.sql}${where}) ${al}`;
  return { sql, scope: cols.map((c) => ({ ref: `${al}.${c.name}`, type: c.type })), keys: [`${al}.c0`] };
}

// ---- SELECT templates -------------------------------------------------------------------------

function orderByAll(g: Gen, n: number): string {
  const parts: string[] = [];
  for (let i = 1; i <= n; i++) parts.push(`${i}${g.pick(['', ' ASC', ' DESC'])}${g.pick(['', '', ' NULLS FIRST', ' NULLS LAST'])}`);
  return ` ORDER BY ${parts.join(', ')}`;
}

function limitClause(g: Gen): string {
  const r = g.int(0, 5);
  if (r < 3) return '';
  if (r < 4) return ` LIMIT ${g.int(0, 12)}`;
  if (r < 5) return ` LIMIT ${g.int(1, 12)} OFFSET ${g.int(0, 20)}`;
  return ` OFFSET ${g.int(1, 30)}`;
}

/** ORDER BY every output column (and maybe LIMIT/OFFSET), or no order at all. */
function tail(g: Gen, n: number, canOrder = true): { sql: string; ordered: boolean } {
  if (!canOrder || g.chance(0.3)) return { sql: '', ordered: false };
  return { sql: orderByAll(g, n) + limitClause(g), ordered: true };
}

function projection(g: Gen, scope: Scope, n: number): string[] {
  const items: string[] = [];
  for (let i = 0; i < n; i++) {
    const type = g.pick(['int', 'int', 'num', 'text', 'text', 'bool', 'date', ...(colsOf(scope, 'float').length > 0 ? (['float'] as const) : [])] as const);
    const e = g.chance(0.25) ? leaf(g, scope, type) : exprOf(g, scope, type, g.int(1, 3));
    items.push(g.chance(0.7) ? `${e} AS c${i + 1}` : e);
  }
  return items;
}

function plainSelect(g: Gen): GenQuery {
  const from = fromClause(g, true);
  // Correlated subqueries only over one table: over a join of two 100-row tables they cost seconds.
  const scope: Scope = { cols: from.scope, allowSubqueries: from.keys.length === 1 && g.chance(0.5) };
  const items = projection(g, scope, g.int(1, 4));
  const where = g.chance(0.7) ? ` WHERE ${boolExpr(g, scope, g.int(1, 3))}` : '';
  const distinct = g.chance(0.15) ? 'DISTINCT ' : '';
  const t = tail(g, items.length);
  return { sql: `SELECT ${distinct}${items.join(', ')} FROM ${from.sql}${where}${t.sql}`, ordered: t.ordered, unorderedLists: [], family: scope.allowSubqueries ? 'select+subquery' : from.sql.includes('JOIN') || from.sql.includes(',') ? 'join' : 'select' };
}

function aggregateCall(g: Gen, scope: Scope): { sql: string; list: boolean } {
  const pickCol = (type: GenType): string => (colsOf(scope, type).length > 0 && g.chance(0.7) ? g.pick(colsOf(scope, type)).ref : exprOf(g, { ...scope, allowSubqueries: false }, type, 1));
  const r = g.int(0, 13);
  switch (r) {
    case 0:
      return { sql: 'count(*)', list: false };
    case 1:
      return { sql: `count(${pickCol(g.pick(['int', 'text', 'num'] as const))})`, list: false };
    case 2:
      return { sql: `count(DISTINCT ${pickCol(g.pick(['int', 'text'] as const))})`, list: false };
    case 3:
    case 4:
      return { sql: `sum(${pickCol(g.pick(['int', 'num', ...(colsOf(scope, 'float').length ? (['float'] as const) : [])] as const))})`, list: false };
    case 5:
    case 6:
      return { sql: `avg(${pickCol(g.pick(['int', 'num'] as const))})`, list: false };
    case 7:
    case 8:
      return { sql: `${g.pick(['min', 'max'])}(${pickCol(g.pick(['int', 'num', 'text', 'date'] as const))})`, list: false };
    case 9:
      return { sql: `string_agg(${pickCol('text')}, ',')`, list: true };
    case 10:
      return { sql: `${g.pick(['bool_and', 'bool_or'])}(${pickCol('bool')})`, list: false };
    case 11:
      return { sql: `sum(DISTINCT ${pickCol('int')})`, list: false };
    case 12:
      return { sql: `avg(DISTINCT ${pickCol('int')})`, list: false };
    default:
      return { sql: `count(${pickCol('bool')})`, list: false };
  }
}

function aggregateSelect(g: Gen): GenQuery {
  const from = fromClause(g, true);
  const scope: Scope = { cols: from.scope, allowSubqueries: false };
  const nKeys = g.int(0, 2);
  const keys: Col[] = [];
  for (let i = 0; i < nKeys; i++) keys.push(g.pick(from.scope.filter((c) => c.type !== 'float')));
  const items: string[] = [];
  const lists: number[] = [];
  keys.forEach((k, i) => items.push(g.chance(0.3) ? `${exprOf(g, { cols: [k], allowSubqueries: false }, k.type, 1)} AS k${i}` : k.ref));
  const nAgg = g.int(1, 3);
  for (let i = 0; i < nAgg; i++) {
    const a = aggregateCall(g, scope);
    if (a.list) lists.push(items.length);
    items.push(g.chance(0.6) ? `${a.sql} AS a${i}` : a.sql);
  }
  const where = g.chance(0.5) ? ` WHERE ${boolExpr(g, { cols: from.scope, allowSubqueries: from.keys.length === 1 && g.chance(0.3) }, 2)}` : '';
  // Group by the key columns themselves: PostgreSQL then accepts any expression over them.
  const groupBySql = keys.length > 0 ? ` GROUP BY ${keys.map((k) => k.ref).join(', ')}` : '';
  const having = g.chance(0.35) ? ` HAVING ${g.pick(['count(*) > 1', `count(*) ${g.pick(['>=', '<'])} ${g.int(1, 5)}`, `sum(${g.pick(colsOf(scope, 'int')).ref}) > ${intLit(g)}`, `max(${g.pick(colsOf(scope, 'int')).ref}) IS NOT NULL`, `min(${g.pick(colsOf(scope, 'int')).ref}) < ${intLit(g)}`])}` : '';
  const t = lists.length > 0 ? { sql: '', ordered: false } : tail(g, items.length);
  return { sql: `SELECT ${items.join(', ')} FROM ${from.sql}${where}${groupBySql}${having}${t.sql}`, ordered: t.ordered, unorderedLists: lists, family: 'aggregate' };
}

function windowSelect(g: Gen): GenQuery {
  const t = g.pick(TABLES);
  const from = tableRef(g, t);
  const scope: Scope = { cols: from.scope, allowSubqueries: false };
  const pk = from.keys[0]!;
  const items = [pk];
  const nWin = g.int(1, 3);
  for (let i = 0; i < nWin; i++) {
    const part = g.chance(0.6) ? `PARTITION BY ${g.pick(from.scope.filter((c) => c.type !== 'float' && c.ref !== pk)).ref} ` : '';
    const ord = g.pick(colsOf(scope, 'int').filter((c) => c.ref !== pk)).ref;
    const dir = g.pick(['', ' DESC', ' NULLS FIRST']);
    const total = `ORDER BY ${ord}${dir}, ${pk}`;
    const partial = `ORDER BY ${ord}${dir}`;
    const arg = g.pick(colsOf(scope, g.pick(['int', 'int', t.name === 't3' ? 'float' : 'num'] as const))).ref;
    const r = g.int(0, 10);
    let call: string;
    if (r === 0) call = `row_number() OVER (${part}${total})`;
    else if (r === 1) call = `${g.pick(['rank', 'dense_rank'])}() OVER (${part}${partial})`;
    else if (r === 2) call = `${g.pick(['sum', 'count', 'avg', 'min', 'max'])}(${arg}) OVER (${part}${partial})`;
    else if (r === 3) call = `${g.pick(['sum', 'count', 'avg'])}(${arg}) OVER (${part.trim()})`;
    else if (r === 4) call = `count(*) OVER (${part}${g.chance(0.5) ? partial : ''})`;
    else if (r === 5) call = `${g.pick(['lag', 'lead'])}(${arg}) OVER (${part}${total})`;
    else if (r === 6) call = `sum(${arg}) OVER (${part}${total} ROWS BETWEEN ${g.pick(['UNBOUNDED PRECEDING', '1 PRECEDING', 'CURRENT ROW'])} AND ${g.pick(['CURRENT ROW', '1 FOLLOWING', 'UNBOUNDED FOLLOWING'])})`;
    else if (r === 7) call = `${g.pick(['first_value', 'last_value'])}(${arg}) OVER (${part}${total})`;
    else if (r === 8) call = `ntile(${g.int(2, 4)}) OVER (${part}${total})`;
    else if (r === 9) call = `${g.pick(['percent_rank', 'cume_dist'])}() OVER (${part}${partial})`;
    else call = `row_number() OVER (${part}${total}) * 10 + ${intLit(g, 0, 9)}`;
    items.push(g.chance(0.6) ? `${call} AS w${i}` : call);
  }
  if (g.chance(0.4)) items.push(exprOf(g, scope, 'int', 1));
  const where = g.chance(0.5) ? ` WHERE ${boolExpr(g, scope, 1)}` : '';
  const tl = tail(g, items.length);
  return { sql: `SELECT ${items.join(', ')} FROM ${from.sql}${where}${tl.sql}`, ordered: tl.ordered, unorderedLists: [], family: 'window' };
}

function setOpSelect(g: Gen): GenQuery {
  const types = Array.from({ length: g.int(1, 3) }, () => g.pick(['int', 'text', 'num', 'bool', 'date'] as const));
  const branch = (): string => {
    const from = g.chance(0.8) ? tableRef(g, g.pick(TABLES)) : fromClause(g, false);
    const scope: Scope = { cols: from.scope, allowSubqueries: false };
    const cols = types.map((t) => (g.chance(0.6) && colsOf(scope, t).length > 0 ? g.pick(colsOf(scope, t)).ref : exprOf(g, scope, t, 1)));
    const where = g.chance(0.7) ? ` WHERE ${boolExpr(g, scope, 1)}` : '';
    return `SELECT ${cols.join(', ')} FROM ${from.sql}${where}`;
  };
  let sql = branch();
  const n = g.int(1, 2);
  for (let i = 0; i < n; i++) sql += ` ${g.pick(['UNION', 'UNION ALL', 'INTERSECT', 'INTERSECT ALL', 'EXCEPT', 'EXCEPT ALL'])} ${branch()}`;
  const t = tail(g, types.length);
  return { sql: sql + t.sql, ordered: t.ordered, unorderedLists: [], family: 'set-operation' };
}

function cteSelect(g: Gen): GenQuery {
  const t = g.pick(TABLES);
  const inner = tableRef(g, t);
  const innerScope: Scope = { cols: inner.scope, allowSubqueries: false };
  const name = g.alias('cte');
  const cols: { name: string; type: GenType; expr: string }[] = [
    { name: 'id', type: 'int', expr: inner.keys[0]! },
    { name: 'v', type: 'int', expr: intExpr(g, innerScope, 1) },
    { name: 'w', type: 'text', expr: t.name === 't3' ? inner.scope.find((c) => c.ref.endsWith('.label'))!.ref : textExpr(g, innerScope, 1) },
  ];
  const where = g.chance(0.5) ? ` WHERE ${boolExpr(g, innerScope, 1)}` : '';
  const cte = `WITH ${name} AS (SELECT ${cols.map((c) => `${c.expr} AS ${c.name}`).join(', ')} FROM ${inner.sql}${where})`;
  const al = g.alias('c');
  const cteScope: Col[] = cols.map((c) => ({ ref: `${al}.${c.name}`, type: c.type }));
  if (g.chance(0.5)) {
    // Join the CTE with a table.
    const other = tableRef(g, g.pick(TABLES));
    const kind = g.pick(['JOIN', 'LEFT JOIN', 'FULL JOIN']);
    const scope: Scope = { cols: [...cteScope, ...other.scope], allowSubqueries: false };
    const items = projection(g, scope, g.int(1, 3));
    const tl = tail(g, items.length);
    return { sql: `${cte} SELECT ${items.join(', ')} FROM ${name} ${al} ${kind} ${other.sql} ON ${al}.v = ${g.pick(colsOf({ cols: other.scope, allowSubqueries: false }, 'int')).ref}${tl.sql}`, ordered: tl.ordered, unorderedLists: [], family: 'cte' };
  }
  const scope: Scope = { cols: cteScope, allowSubqueries: true };
  const items = projection(g, scope, g.int(1, 3));
  const w = g.chance(0.5) ? ` WHERE ${boolExpr(g, scope, 1)}` : '';
  const tl = tail(g, items.length);
  return { sql: `${cte} SELECT ${items.join(', ')} FROM ${name} ${al}${w}${tl.sql}`, ordered: tl.ordered, unorderedLists: [], family: 'cte' };
}

function recursiveSelect(g: Gen): GenQuery {
  const r = g.int(0, 2);
  const name = g.alias('r');
  if (r === 0) {
    const step = g.int(1, 3);
    const sql = `WITH RECURSIVE ${name} (n, total) AS (SELECT 1, ${intLit(g)} UNION ALL SELECT n + 1, total + n * ${step} FROM ${name} WHERE n < ${g.int(3, 30)}) SELECT n, total FROM ${name}`;
    return { sql: sql + orderByAll(g, 2), ordered: true, unorderedLists: [], family: 'recursive' };
  }
  if (r === 1) {
    // Walk t2 -> t1 -> t2 via t1_id and a: a bounded chain from a start row.
    const sql = `WITH RECURSIVE ${name} AS (SELECT id, a, 1 AS depth FROM t1 WHERE id = ${g.int(1, 40)} UNION ${g.pick(['', 'ALL '])}SELECT t.id, t.a, ${name}.depth + 1 FROM ${name} JOIN t1 t ON t.id = ${name}.a WHERE ${name}.depth < ${g.int(2, 6)}) SELECT id, a, depth FROM ${name}`;
    return { sql: sql + orderByAll(g, 3), ordered: true, unorderedLists: [], family: 'recursive' };
  }
  const sql = `WITH RECURSIVE ${name} AS (SELECT id, t1_id FROM t2 WHERE id <= ${g.int(1, 10)} UNION SELECT t2.id, t2.t1_id FROM ${name} JOIN t2 ON t2.t1_id = ${name}.id) SELECT count(*), count(DISTINCT t1_id), max(id) FROM ${name}`;
  return { sql, ordered: false, unorderedLists: [], family: 'recursive' };
}

/** `count` random SELECT statements from `seed`. */
export function generateQueries(seed: number, count: number): GenQuery[] {
  const g = new Gen(seededRandom(seed));
  const out: GenQuery[] = [];
  for (let i = 0; i < count; i++) {
    const r = g.int(0, 99);
    if (r < 34) out.push(plainSelect(g));
    else if (r < 56) out.push(aggregateSelect(g));
    else if (r < 70) out.push(windowSelect(g));
    else if (r < 82) out.push(setOpSelect(g));
    else if (r < 95) out.push(cteSelect(g));
    else out.push(recursiveSelect(g));
  }
  return out;
}

// ---- DML --------------------------------------------------------------------------------------

/** `count` random DML statements (with RETURNING, some violating constraints) from `seed`. */
export function generateDml(seed: number, count: number): GenQuery[] {
  const g = new Gen(seededRandom(seed ^ 0xd31));
  const out: GenQuery[] = [];
  const scopeOf = (t: TableDef, withSub = false): Scope => ({ cols: t.cols.map((c) => ({ ref: c.name, type: c.type })), allowSubqueries: withSub });
  const returning = (t: TableDef): string => (g.chance(0.6) ? ` RETURNING ${g.chance(0.5) ? '*' : `${t.pk}, ${g.pick(t.cols.slice(1)).name}`}` : '');
  const rowValues = (t: TableDef, id: number): string =>
    `(${t.cols
      .map((c) => {
        if (c.name === 'id') return String(id);
        if (c.name === 't1_id') return g.chance(0.15) ? 'NULL' : String(g.int(1, 100));
        if (c.name === 'label') return g.chance(0.08) ? 'NULL' : g.pick(TEXTS);
        if (c.name === 'b' && t.name === 't1' && g.chance(0.05)) return '(-5000)';
        return valueLiteral(g, c.type);
      })
      .join(', ')})`;
  for (let i = 0; i < count; i++) {
    const t = g.pick(TABLES);
    const scope = scopeOf(t, g.chance(0.2));
    const r = g.int(0, 9);
    let sql: string;
    if (r < 3) {
      const n = g.int(1, 3);
      const rows = Array.from({ length: n }, () => rowValues(t, g.chance(0.2) ? g.int(1, 60) : g.int(200, 400)));
      const conflict = g.chance(0.25) ? (g.chance(0.5) ? ' ON CONFLICT (id) DO NOTHING' : ` ON CONFLICT (id) DO UPDATE SET ${t.cols[2]!.name} = EXCLUDED.${t.cols[2]!.name}`) : '';
      sql = `INSERT INTO ${t.name} (${t.cols.map((c) => c.name).join(', ')}) VALUES ${rows.join(', ')}${conflict}${returning(t)}`;
    } else if (r < 6) {
      const settable = t.cols.filter((c) => c.name !== 'id');
      const sets = Array.from({ length: g.int(1, 2) }, () => g.pick(settable));
      const unique = [...new Map(sets.map((c) => [c.name, c])).values()];
      const assigns = unique.map((c) => {
        if (c.name === 't1_id') return `t1_id = ${g.chance(0.7) ? String(g.int(1, 100)) : 'NULL'}`;
        if (c.name === 'label') return `label = ${g.chance(0.1) ? 'NULL' : textExpr(g, scopeOf(t), 1)}`;
        return `${c.name} = ${exprOf(g, scopeOf(t), c.type, 1)}`;
      });
      // A shift no two ids differ by: PostgreSQL checks uniqueness row by row, so a shift onto
      // another updated row's old key fails or not depending on its scan order.
      if (g.chance(0.1)) assigns.push(`id = id + ${100000 * (i + 1)}`);
      sql = `UPDATE ${t.name} SET ${assigns.join(', ')} WHERE ${boolExpr(g, scope, 2)}${returning(t)}`;
    } else if (r < 8) {
      sql = `DELETE FROM ${t.name} WHERE ${boolExpr(g, scope, 2)}${returning(t)}`;
    } else if (r < 9) {
      const base = g.int(500, 900) + i * 10;
      sql = `INSERT INTO t2 (id, t1_id, a, s) SELECT id + ${base}, id, a, s FROM t1 WHERE ${boolExpr(g, scopeOf(TABLES[0]!), 1)}${g.chance(0.5) ? ' RETURNING id, t1_id' : ''}`;
    } else {
      sql = `DELETE FROM t1 WHERE id = ${g.int(1, 90)}${g.chance(0.5) ? ' RETURNING *' : ''}`;
    }
    out.push({ sql, ordered: false, unorderedLists: [], family: 'dml' });
  }
  return out;
}
