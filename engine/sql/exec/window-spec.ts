// A window's definition read from the AST: the WINDOW clause's named windows, a base window named
// in `OVER (w ...)`, and the frame, which sql-rewrite.ts takes out of the text the parser sees and
// leaves as a marker call at the end of the window's ORDER BY list (WINDOW_SPEC_MARKER).
import type { CompiledExpr } from '../compiled-expr.js';
import type { AstNode } from '../expression-eval.js';
import { castValue, typeDisplay } from '../sql-cast.js';
import { WINDOW_SPEC_MARKER } from '../sql-rewrite.js';
import { sqlFail, type SqlTypeName } from '../sql-types.js';
import { rangeOffsetType, type FrameBound, type WindowFrame } from '../window-functions.js';

type Ast = AstNode & Record<string, any>;

/** A window as written: its frame's offsets are still expressions. */
export interface WindowDefinition {
  /** PARTITION BY expressions. */
  readonly partition: readonly Ast[];
  /** ORDER BY items ({expr, type, nulls}), without the marker. */
  readonly order: readonly Ast[];
  /** Absent: the default frame. */
  readonly frame?: WindowFrame<Ast>;
}

/**
 * The named windows of a SELECT's WINDOW clause; each may build on one defined before it.
 * @throws SQL_ERROR 42P20 a name defined twice or a base window misused, 42704 an unknown base
 */
export function namedWindows(ast: Ast): Map<string, WindowDefinition> {
  const named = new Map<string, WindowDefinition>();
  for (const w of (ast.window?.expr ?? []) as Ast[]) {
    const name = String(w.name).toLowerCase();
    if (named.has(name)) sqlFail('42P20', `window "${name}" is already defined`);
    named.set(name, definition((w.as_window_specification?.window_specification ?? {}) as Ast, named));
  }
  return named;
}

/**
 * The window of a call's OVER: `OVER w` is the named window itself, `OVER (w ...)` builds on it.
 * @throws SQL_ERROR 42704 an unknown window, 42P20 a base window misused
 */
export function windowOf(over: Ast, named: ReadonlyMap<string, WindowDefinition>): WindowDefinition {
  const spec = over.as_window_specification;
  if (typeof spec === 'string') return named.get(spec.toLowerCase()) ?? sqlFail('42704', `window "${spec}" does not exist`);
  return definition((spec?.window_specification ?? spec ?? {}) as Ast, named);
}

/** One window_specification node, its marker read and its base window (if any) merged in, as PostgreSQL's transformWindowDefinitions. */
function definition(spec: Ast, named: ReadonlyMap<string, WindowDefinition>): WindowDefinition {
  // The rewrite takes every frame out of the text, so a frame the parser read itself is a form
  // the rewrite did not recognise.
  if (spec.window_frame_clause) sqlFail('42601', 'syntax error in window frame clause');
  let order = (spec.orderby ?? []) as Ast[];
  const partition = ((spec.partitionby ?? []) as Ast[]).map((p) => (p.expr ?? p) as Ast);
  const last = order[order.length - 1]?.expr as Ast | undefined;
  const marker = last?.type === 'function' && markerName(last) === WINDOW_SPEC_MARKER ? ((last.args?.value ?? []) as Ast[]) : undefined;
  if (marker === undefined) return { partition, order };
  order = order.slice(0, -1);
  const text = (i: number): string | undefined => (marker[i]?.type === 'null' ? undefined : String(marker[i]?.value));
  const mode = text(1) as WindowFrame['mode'] | undefined;
  const frame: WindowFrame<Ast> | undefined =
    mode === undefined
      ? undefined
      : { mode, start: bound(text(2)!, marker[3]!), end: bound(text(4)!, marker[5]!), ...exclusion(text(6)) };
  const baseName = text(0);
  if (baseName === undefined) return { partition, order, ...(frame !== undefined ? { frame } : {}) };
  const base = named.get(baseName.toLowerCase()) ?? sqlFail('42704', `window "${baseName}" does not exist`);
  // SQL's rules: the partitioning is the base's, ORDER BY only where the base has none, and a
  // base with a frame cannot be copied (so `OVER w` and `OVER (w)` differ).
  if (partition.length > 0) sqlFail('42P20', `cannot override PARTITION BY clause of window "${baseName}"`);
  if (order.length > 0 && base.order.length > 0) sqlFail('42P20', `cannot override ORDER BY clause of window "${baseName}"`);
  if (base.frame !== undefined) sqlFail('42P20', `cannot copy window "${baseName}" because it has a frame clause`);
  return { partition: base.partition, order: order.length > 0 ? order : base.order, ...(frame !== undefined ? { frame } : {}) };
}

function markerName(n: Ast): string {
  const parts = (n.name?.name ?? []) as { value: unknown }[];
  return String(parts[parts.length - 1]?.value ?? '').toLowerCase();
}

function bound(kind: string, offset: Ast): FrameBound<Ast> {
  switch (kind) {
    case 'unbounded preceding':
      return { kind: 'unbounded_preceding' };
    case 'unbounded following':
      return { kind: 'unbounded_following' };
    case 'current row':
      return { kind: 'current_row' };
    case 'preceding':
    case 'following':
      return { kind, offset };
    default:
      return sqlFail('XX000', `internal: window frame bound ${kind}`);
  }
}

function exclusion(text: string | undefined): Pick<WindowFrame, 'exclude'> {
  if (text === 'current row') return { exclude: 'current_row' };
  if (text === 'group' || text === 'ties') return { exclude: text };
  return {};
}

/**
 * A frame's offsets compiled and converted (ROWS and GROUPS to bigint, RANGE to the type the ORDER
 * BY column's in_range takes), with the checks PostgreSQL makes when it plans the window.
 * `compile` compiles an offset expression for the frame mode's name (ROWS, RANGE, GROUPS).
 * @throws SQL_ERROR 42P20 RANGE offsets without exactly one ORDER BY column, GROUPS without
 *   ORDER BY; 42804 / 0A000 offsets of the wrong type
 */
export function planFrame(
  frame: WindowFrame<Ast>,
  order: readonly { type: SqlTypeName; desc: boolean; nullsFirst: boolean }[],
  compile: (node: Ast, construct: string) => CompiledExpr,
): WindowFrame<CompiledExpr> {
  const construct = frame.mode.toUpperCase();
  const offsets = frame.start.kind === 'preceding' || frame.start.kind === 'following' || frame.end.kind === 'preceding' || frame.end.kind === 'following';
  if (frame.mode === 'range' && offsets && order.length !== 1) sqlFail('42P20', 'RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column');
  if (frame.mode === 'groups' && order.length === 0) sqlFail('42P20', 'GROUPS mode requires an ORDER BY clause');
  const plan = (b: FrameBound<Ast>): FrameBound<CompiledExpr> => {
    if (b.kind !== 'preceding' && b.kind !== 'following') return b;
    const e = compile(b.offset, construct);
    let type: SqlTypeName;
    if (frame.mode === 'range') type = rangeOffsetType(order[0]!.type, e.type);
    else {
      // Converted as an assignment would (numerics round), like LIMIT.
      if (!['int2', 'int4', 'int8', 'numeric', 'float8', 'unknown'].includes(e.type)) sqlFail('42804', `argument of ${construct} must be type bigint, not type ${typeDisplay(e.type)}`);
      type = 'int8';
    }
    const offset: CompiledExpr = e.type === type ? e : { type, evaluate: (ctx) => castValue(e.evaluate(ctx), { type }) };
    return { kind: b.kind, offset };
  };
  const start = plan(frame.start);
  const end = plan(frame.end);
  const direction = frame.mode === 'range' && offsets ? { descending: order[0]!.desc, nullsFirst: order[0]!.nullsFirst } : {};
  return { mode: frame.mode, start, end, ...(frame.exclude !== undefined ? { exclude: frame.exclude } : {}), ...direction };
}
