/**
 * Which fields of its input a pipeline reads (dot paths: an embedded document is read only as far
 * as the paths name, FieldReader), so the model decodes only those (as MongoDB's dependency
 * analysis does): each stage declares the fields it reads and whether its
 * output replaces the document ($group, an inclusion $project, $replaceRoot, $count...). The
 * fields read up to the first replacing stage are all the input needs; a stage that may read
 * anything ($$ROOT, an exclusion $project), or a pipeline that never replaces the document,
 * needs whole documents.
 */

/** What one stage reads of its input. */
export interface Needs {
  /** Dot paths read, or 'all'. */
  readonly fields: ReadonlySet<string> | 'all';
  /** True when the output no longer carries the input's fields. */
  readonly replaces: boolean;
}

/** Adds the dot paths an expression (as written) reads to `out`; false when it may read any. */
export function exprFields(spec: unknown, out: Set<string>): boolean {
  if (typeof spec === 'string') {
    if (spec.startsWith('$$')) {
      const [name, ...rest] = spec.slice(2).split('.');
      if (name !== 'ROOT' && name !== 'CURRENT') return true;
      if (rest.length === 0) return false;
      out.add(rest.join('.'));
      return true;
    }
    if (spec.startsWith('$') && spec.length > 1) out.add(spec.slice(1));
    return true;
  }
  if (Array.isArray(spec)) return spec.every((s) => exprFields(s, out));
  if (typeof spec === 'object' && spec !== null && !(spec instanceof Date)) {
    for (const [k, v] of Object.entries(spec)) {
      if (k === '$literal') continue;
      // $getField names its field without a '$'.
      if (k === '$getField') return false;
      if (!exprFields(v, out)) return false;
    }
  }
  return true;
}

/**
 * True when an expression (as written) draws a random number (`$rand`): its value may differ at
 * each evaluation, so whatever tests it must evaluate it once per document (MongoDB's draw per
 * document), never once to pre-filter and again to decide.
 */
export function exprIsVolatile(spec: unknown): boolean {
  return writtenWith(spec, RAND);
}

const RAND: ReadonlySet<string> = new Set(['$rand']);

/** True when an expression or pipeline (as written) holds one of the operators or stages `names` anywhere outside a `$literal`. */
export function writtenWith(spec: unknown, names: ReadonlySet<string>): boolean {
  if (Array.isArray(spec)) return spec.some((s) => writtenWith(s, names));
  if (typeof spec !== 'object' || spec === null || spec instanceof Date) return false;
  return Object.entries(spec).some(([k, v]) => names.has(k) || (k !== '$literal' && writtenWith(v, names)));
}

/** The needs of stages whose reads are the fields of some expressions and paths. */
export function needsOf(exprs: readonly unknown[], paths: readonly string[], replaces: boolean): Needs {
  const fields = new Set<string>(paths);
  for (const e of exprs) if (!exprFields(e, fields)) return { fields: 'all', replaces };
  return { fields, replaces };
}

/** Reads nothing, replaces nothing ($skip, $limit, $unset). */
export const PASS_THROUGH: Needs = { fields: new Set(), replaces: false };

/** May read anything. */
export const READS_ALL: Needs = { fields: 'all', replaces: false };

/** The input paths a sequence of stages needs, or undefined for whole documents. */
export function pipelineFields(stages: ReadonlyArray<{ readonly needs: Needs }>): string[] | undefined {
  const fields = new Set<string>();
  for (const s of stages) {
    if (s.needs.fields === 'all') return undefined;
    for (const f of s.needs.fields) fields.add(f);
    if (s.needs.replaces) return [...fields];
  }
  return undefined;
}
