/**
 * The regular-expression string operators (manual: $regexMatch, $regexFind, $regexFindAll), as
 * MongoDB evaluates them (its RegexExecutionState): `{input, regex, options}`, the pattern PCRE,
 * translated by the same pcre.ts the `$regex` query operator uses (PCRE-only syntax refused).
 *
 * - `regex` is a string, or an Extended JSON regular expression
 *   `{"$regularExpression": {"pattern", "options"}}` (BSON's regex type, which JSON has no other
 *   way to write); options given in both it and `options` are an error, as in MongoDB.
 * - `options` are `i m s x` (and `u`, which PCRE's UTF mode makes redundant).
 * - A null or missing `input` or `regex` gives false / null / []; the types are checked first.
 * - A match is `{match, idx, captures}`: `idx` counts code points, an unmatched group is null.
 * - `$regexFindAll` does not overlap matches; after an empty match it moves one character on,
 *   and an empty match at the very end is found only when the input is empty (MongoDB's loop).
 */

import { TetraError } from '../../../errors.js';
import { compilePcre } from '../../query/evaluation/pcre.js';
import { bsonTypeOf, isPlainObject, type Doc } from '../../values.js';
import { constantArg, exprError, isNullish, type Expr, type ExprContext, type ExprOperator } from './expression.js';

/** MongoDB's flags; 'u' is accepted and changes nothing (patterns are always Unicode). */
const VALID_OPTIONS = 'imsxu';
/** What the translation understands ('u' dropped). */
const PCRE_OPTIONS = 'imsx';
/** The Extended JSON key of a BSON regular expression. */
const REGEX_LITERAL_KEY = '$regularExpression';
/** MongoDB's cap on the matches `$regexFindAll` collects (BufferMaxSize, 64 MiB), by estimate. */
const MAX_FIND_ALL_BYTES = 64 * 1024 * 1024;
/** Estimated bytes of one match document beside its strings (field names, idx, array). */
const MATCH_OVERHEAD_BYTES = 64;

/** A pattern with its own options: the value of a regular-expression literal. */
interface RegexLiteral {
  readonly pattern: string;
  readonly flags: string;
}

/** What `regex` evaluates to: a string, a literal, or nothing (null/missing). */
type PatternValue = string | RegexLiteral | null;

/** The literal `{"$regularExpression": {"pattern", "options"}}`, else undefined. */
function regexLiteral(spec: unknown, name: string): RegexLiteral | undefined {
  if (!isPlainObject(spec) || !Object.hasOwn(spec, REGEX_LITERAL_KEY)) return undefined;
  const body = spec[REGEX_LITERAL_KEY];
  if (Object.keys(spec).length !== 1 || !isPlainObject(body) || typeof body['pattern'] !== 'string' || typeof (body['options'] ?? '') !== 'string') {
    exprError(name, `${REGEX_LITERAL_KEY} must be {"pattern": <string>, "options": <string>}`);
  }
  return { pattern: body['pattern'], flags: (body['options'] ?? '') as string };
}

function patternOf(v: unknown, name: string): PatternValue {
  if (isNullish(v)) return null;
  if (typeof v === 'string') return v;
  return exprError(name, `${name} needs 'regex' to be of type string or regex`);
}

/**
 * The pattern compiled with its options, checked as MongoDB checks them (extractRegexAndOptions,
 * flagsToOptions); undefined when there is no pattern (but the options are still checked).
 * @throws QUERY_ERROR
 */
function compileRegex(pattern: PatternValue, optionsValue: unknown, name: string): RegExp | undefined {
  if (!isNullish(optionsValue) && typeof optionsValue !== 'string') exprError(name, `${name} needs 'options' to be of type string`);
  let options = isNullish(optionsValue) ? undefined : (optionsValue as string);
  let source: string | undefined;
  if (pattern !== null && typeof pattern === 'object') {
    if (options !== undefined && pattern.flags !== '') exprError(name, `${name}: found regex option(s) specified in both 'regex' and 'option' fields`);
    source = pattern.pattern;
    if (pattern.flags !== '') options = pattern.flags;
  } else if (pattern !== null) source = pattern;
  if (source?.includes('\0')) exprError(name, `${name}: regular expression cannot contain an embedded null byte`);
  if (options?.includes('\0')) exprError(name, `${name}: regular expression options cannot contain an embedded null byte`);
  if (source === undefined) return undefined;
  for (const ch of options ?? '') if (!VALID_OPTIONS.includes(ch)) exprError(name, `${name} invalid flag in regex options: ${ch}`);
  const flags = [...(options ?? '')].filter((ch) => PCRE_OPTIONS.includes(ch)).join('');
  let re: RegExp;
  try {
    re = compilePcre(source, flags);
  } catch (err) {
    if (!(err instanceof TetraError)) throw err;
    return exprError(name, `Invalid Regex in ${name}: ${err.message.replace(/^Regular expression is invalid: /, '')}`);
  }
  // 'g' so that lastIndex says where a search starts (the pattern still sees the text before it).
  return new RegExp(re.source, `${re.flags}g`);
}

/** Evaluates the three arguments to the regex and the input text (undefined when nullish). */
type Prepared = (scope: Parameters<Expr>[0]) => { re: RegExp | undefined; text: string | undefined };

function prepare(args: unknown, ctx: ExprContext, name: string): Prepared {
  if (!isPlainObject(args)) exprError(name, `${name} expects an object of named arguments but found: ${bsonTypeOf(args)}`);
  for (const k of Object.keys(args)) if (k !== 'input' && k !== 'regex' && k !== 'options') exprError(name, `${name} found an unknown argument: ${k}`);
  if (!Object.hasOwn(args, 'input')) exprError(name, `${name} requires 'input' parameter`);
  if (!Object.hasOwn(args, 'regex')) exprError(name, `${name} requires 'regex' parameter`);
  const input = ctx.compile(args['input']);
  const literal = regexLiteral(args['regex'], name);
  const regex: Expr = literal === undefined ? ctx.compile(args['regex']) : () => literal;
  const hasOptions = Object.hasOwn(args, 'options');
  const options: Expr = hasOptions ? ctx.compile(args['options']) : () => null;
  const readPattern = (v: unknown): PatternValue => (v === literal && literal !== undefined ? literal : patternOf(v, name));
  // A constant regex and options are compiled (and refused) once, with the pipeline.
  const constantRegex = literal !== undefined ? { value: literal } : constantArg(args['regex']);
  const constantOptions = hasOptions ? constantArg(args['options']) : { value: null };
  let fixed: { re: RegExp | undefined } | undefined;
  if (constantRegex !== undefined && constantOptions !== undefined) fixed = { re: compileRegex(readPattern(constantRegex.value), constantOptions.value, name) };
  let cache: { pattern: PatternValue; options: unknown; re: RegExp | undefined } | undefined;
  return (scope) => {
    let re: RegExp | undefined;
    if (fixed !== undefined) re = fixed.re;
    else {
      const pattern = readPattern(regex(scope));
      const opts = options(scope);
      if (cache === undefined || cache.pattern !== pattern || cache.options !== opts) cache = { pattern, options: opts, re: compileRegex(pattern, opts, name) };
      re = cache.re;
    }
    const v = input(scope);
    if (!isNullish(v) && typeof v !== 'string') exprError(name, `${name} needs 'input' to be of type string`);
    return { re, text: isNullish(v) ? undefined : (v as string) };
  };
}

/** Code points in `text` from `from` to `to` (UTF-16 indexes on character boundaries). */
function codePoints(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff || i + 1 >= to) n++;
  }
  return n;
}

function matchDocument(m: RegExpExecArray, idx: number): Doc {
  const captures: unknown[] = [];
  for (let i = 1; i < m.length; i++) captures.push(m[i] ?? null);
  return { match: m[0], idx, captures };
}

function search(re: RegExp, text: string, from: number): RegExpExecArray | null {
  re.lastIndex = from;
  return re.exec(text);
}

const regexMatch: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const run = prepare(args, ctx, name);
    return (scope) => {
      const { re, text } = run(scope);
      return re !== undefined && text !== undefined && search(re, text, 0) !== null;
    };
  },
};

const regexFind: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const run = prepare(args, ctx, name);
    return (scope) => {
      const { re, text } = run(scope);
      if (re === undefined || text === undefined) return null;
      const m = search(re, text, 0);
      return m === null ? null : matchDocument(m, codePoints(text, 0, m.index));
    };
  },
};

const regexFindAll: ExprOperator = {
  kind: 'expression',
  compile(args, ctx, name) {
    const run = prepare(args, ctx, name);
    return (scope) => {
      const { re, text } = run(scope);
      const out: Doc[] = [];
      if (re === undefined || text === undefined) return out;
      let pos = 0;
      let cp = 0;
      let bytes = 0;
      // do...while: an empty input is still searched once (MongoDB's loop).
      do {
        const m = search(re, text, pos);
        if (m === null) break;
        cp += codePoints(text, pos, m.index);
        pos = m.index;
        bytes += MATCH_OVERHEAD_BYTES + 2 * m[0].length + m.slice(1).reduce((n, c) => n + MATCH_OVERHEAD_BYTES / 4 + 2 * (c?.length ?? 0), 0);
        if (bytes > MAX_FIND_ALL_BYTES) exprError(name, `${name}: the size of buffer to store output exceeded the 64MB limit`);
        out.push(matchDocument(m, cp));
        if (m[0] === '') {
          if (pos >= text.length) break;
          // On past the empty match, one character (a surrogate pair is one).
          pos += (text.codePointAt(pos) ?? 0) > 0xffff ? 2 : 1;
          cp++;
        } else {
          cp += codePoints(text, pos, pos + m[0].length);
          pos += m[0].length;
        }
      } while (pos < text.length);
      return out;
    };
  },
};

export const regexOperators: Record<string, ExprOperator> = {
  $regexMatch: regexMatch,
  $regexFind: regexFind,
  $regexFindAll: regexFindAll,
};
