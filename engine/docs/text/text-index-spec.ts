/**
 * A text index's specification (manual: Text Indexes; MongoDB's fts_spec.cpp): which fields it
 * holds, with what weight, and the languages of its documents. createIndex's keys and options
 * are checked here with MongoDB's messages; the documents' scores per term (MongoDB's
 * scoreDocument, text index version 3) are computed here too, for the index entries and for a
 * search's `textScore`.
 */

import { fail } from '../../errors.js';
import { describeValue, isPlainObject, type Doc } from '../values.js';
import { DEFAULT_TEXT_LANGUAGE, findTextLanguage, type TextLanguage } from './text-language.js';
import { INDEX_TOKENS, tokenize } from './text-tokenizer.js';

/** What a text index holds: stored in its catalog entry (IndexInfo.text). */
export interface TextIndexSpec {
  /** Weighted field paths, by path in byte order (as MongoDB lists them); the wildcard is not among them. */
  readonly weights: ReadonlyArray<readonly [string, number]>;
  /** `$**`: every string field of a document, weighted 1 unless `weights` says otherwise. */
  readonly wildcard: boolean;
  /** A canonical language name ("english", "none", ...). */
  readonly defaultLanguage: string;
  /** The field naming a document's (or an embedded document's) own language. */
  readonly languageOverride: string;
}

/** The only text index version tetradb builds (case- and diacritic-insensitive, MongoDB 3.2+). */
export const TEXT_INDEX_VERSION = 3;
/** The key pattern every text index has in listIndexes and in MongoDB's catalog. */
export const TEXT_KEY_PATTERN = { _fts: 'text', _ftsx: 1 } as const;
const WILDCARD = '$**';
const DEFAULT_LANGUAGE_OVERRIDE = 'language';
// MongoDB's MAX_WORD_WEIGHT: a weight lies strictly between 0 and this.
const MAX_WORD_WEIGHT = 100_000;
const TEXT = 'text';

function cannotCreate(message: string, field = 'keys'): never {
  fail('VALIDATION_FAILED', message, { field });
}

/** True for a createIndex key pattern that asks for a text index (some field is "text"). */
export function isTextKeyPattern(keys: unknown): boolean {
  return isPlainObject(keys) && Object.values(keys).some((v) => v === TEXT);
}

/** The options of createIndex a text index reads. */
export interface TextIndexOptions {
  weights?: unknown;
  default_language?: unknown;
  language_override?: unknown;
  textIndexVersion?: unknown;
}

function checkPath(path: string, what: string): void {
  if (path === '') cannotCreate(`${what} cannot be on an empty field`);
  for (const part of path.split('.')) {
    if (part === '') cannotCreate(`${what} cannot have empty path component`);
    if (part.startsWith('$')) cannotCreate(`${what} cannot have path component with $ prefix`);
  }
}

/** A compound text index's ascending or descending field, before or after its text fields. */
export interface TextKeyField {
  readonly path: string;
  readonly direction: 1 | -1;
}

/** createIndex's text key pattern, parsed: the text index's spec, its other fields and its default name. */
export interface ParsedTextIndex {
  readonly spec: TextIndexSpec;
  /** Fields before the text fields: a `$text` query needs an equality on each (MongoDB's extraBefore). */
  readonly prefix: readonly TextKeyField[];
  /** Fields after the text fields, stored in each entry after the term (MongoDB's extraAfter). */
  readonly suffix: readonly TextKeyField[];
  readonly defaultName: string;
}

/**
 * The spec of a text index from createIndex's keys (`{title: "text", body: "text"}`, or compound:
 * `{category: 1, body: "text", views: -1}`) and options, and its default name
 * (`category_1_body_text_views_-1`). As MongoDB's fixSpec: ascending/descending fields may come
 * before the text fields and after them, the text fields adjacent.
 * @throws VALIDATION_FAILED with MongoDB's message for a bad key pattern or option, or by name for
 *   what tetradb does not build (text index version 1 and 2)
 */
export function parseTextIndex(keys: Doc, options: TextIndexOptions): ParsedTextIndex {
  const weights = new Map<string, number>();
  let wildcard = false;
  const nameParts: string[] = [];
  const prefix: TextKeyField[] = [];
  const suffix: TextKeyField[] = [];
  // Where the walk is in the key pattern: before the text fields, among them, or after them.
  let at: 'prefix' | 'text' | 'suffix' = 'prefix';
  for (const [path, value] of Object.entries(keys)) {
    if (path === '_fts' || path === '_ftsx') cannotCreate('text index with reserved fields _fts/_ftsx not allowed');
    if (value !== TEXT) {
      // MongoDB reads the number's integer part.
      const direction = typeof value === 'number' ? Math.trunc(value) : NaN;
      if (direction !== 1 && direction !== -1) cannotCreate('expected value 1 or -1 for non-text key in compound index');
      checkPath(path, 'index key');
      (at === 'prefix' ? prefix : suffix).push({ path, direction });
      if (at === 'text') at = 'suffix';
      nameParts.push(`${path}_${direction}`);
      continue;
    }
    if (at === 'suffix') cannotCreate("'text' fields in index must all be adjacent");
    at = 'text';
    nameParts.push(`${path}_${TEXT}`);
    if (path === WILDCARD) wildcard = true;
    else {
      checkPath(path, 'index key');
      weights.set(path, 1);
    }
  }
  const given = options.weights;
  if (given === WILDCARD) wildcard = true;
  else if (isPlainObject(given)) {
    for (const [path, w] of Object.entries(given)) {
      if (typeof w !== 'number' || !Number.isFinite(w)) cannotCreate('weight for text index needs numeric type', 'weights');
      // MongoDB keeps the integer part (numberInt).
      const weight = Math.trunc(w);
      if (weight <= 0 || weight >= MAX_WORD_WEIGHT) cannotCreate(`text index weight must be in the exclusive interval (0,${MAX_WORD_WEIGHT}) but found: ${weight}`, 'weights');
      if (path === WILDCARD) wildcard = true;
      else {
        checkPath(path, 'weight');
        weights.set(path, weight);
      }
    }
  } else if (given !== undefined) cannotCreate("text index option 'weights' must be an object", 'weights');
  const language = options.default_language;
  if (language !== undefined && typeof language !== 'string') cannotCreate('default_language needs a string type', 'default_language');
  const defaultLanguage = language === undefined ? DEFAULT_TEXT_LANGUAGE : findTextLanguage(language)?.name;
  if (defaultLanguage === undefined) cannotCreate('default_language is not valid', 'default_language');
  const override = options.language_override;
  if (override !== undefined && typeof override !== 'string') cannotCreate('language_override must be a string', 'language_override');
  const languageOverride = override ?? DEFAULT_LANGUAGE_OVERRIDE;
  if (languageOverride === '' || languageOverride.startsWith('$') || languageOverride.includes('.')) cannotCreate('language_override is not valid', 'language_override');
  const version = options.textIndexVersion;
  if (version !== undefined) {
    if (typeof version !== 'number') cannotCreate("text index option 'textIndexVersion' must be a number", 'textIndexVersion');
    if (version !== TEXT_INDEX_VERSION) cannotCreate(`unsupported: textIndexVersion ${describeValue(version)} (tetradb builds text index version ${TEXT_INDEX_VERSION} only)`, 'textIndexVersion');
  }
  const sorted = [...weights].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return { spec: { weights: sorted, wildcard, defaultLanguage, languageOverride }, prefix, suffix, defaultName: nameParts.join('_') };
}

/** The fields a text index has in the catalog, in MongoDB's key pattern: `{<prefix>, _fts: "text", _ftsx: 1, <suffix>}`. */
export function textIndexFields(prefix: readonly TextKeyField[], suffix: readonly TextKeyField[]): TextKeyField[] {
  return [...prefix, { path: '_fts', direction: 1 }, { path: '_ftsx', direction: 1 }, ...suffix];
}

/** A text index's catalog fields split around `_fts`/`_ftsx`: its prefix and suffix fields. */
export function textKeyFields(fields: readonly TextKeyField[]): { prefix: readonly TextKeyField[]; suffix: readonly TextKeyField[] } {
  const at = fields.findIndex((f) => f.path === '_fts');
  return { prefix: fields.slice(0, at), suffix: fields.slice(at + 2) };
}

/** A text index's key pattern as listIndexes shows it (`{category: 1, _fts: "text", _ftsx: 1}`). */
export function textKeyPattern(fields: readonly TextKeyField[]): Record<string, 1 | -1 | 'text'> {
  return Object.fromEntries(fields.map((f) => [f.path, f.path === '_fts' ? TEXT : f.direction]));
}

// Longest rendering of a document in the message refusing an array in a prefix or suffix field.
const MESSAGE_DOCUMENT_CHARS = 200;

/**
 * The value at `path` a compound text index stores for a prefix or suffix field (null when
 * missing). As MongoDB's extractNonFTSKeyElement: no array may lie along the path, except one a
 * numeric component indexes into ("a.3").
 * @throws VALIDATION_FAILED (MongoDB's message) when one does
 */
export function textKeyValue(doc: Doc, path: string): unknown {
  let cur: unknown = doc;
  const refuse = (): never =>
    fail('VALIDATION_FAILED', `Field '${path}' of text index contains an array in document: ${describeValue(doc, MESSAGE_DOCUMENT_CHARS)}`, { field: path });
  for (const part of path.split('.')) {
    if (Array.isArray(cur)) {
      if (!/^\d+$/.test(part)) refuse();
      cur = (cur as unknown[])[Number(part)];
    } else if (isPlainObject(cur)) {
      cur = Object.hasOwn(cur, part) ? cur[part] : undefined;
    } else {
      return null;
    }
    if (cur === undefined) return null;
  }
  if (Array.isArray(cur)) refuse();
  return cur;
}

/** The spec as listIndexes shows it (MongoDB's fields beside `key`). */
export function describeTextIndex(spec: TextIndexSpec): Record<string, unknown> {
  const weights: Record<string, number> = {};
  if (spec.wildcard) weights[WILDCARD] = 1;
  for (const [path, w] of spec.weights) if (!(spec.wildcard && path === WILDCARD)) weights[path] = w;
  return { weights, default_language: spec.defaultLanguage, language_override: spec.languageOverride, textIndexVersion: TEXT_INDEX_VERSION };
}

/** True when two specs index the same way (createIndex of the same text index again is a no-op). */
export function sameTextIndex(a: TextIndexSpec, b: TextIndexSpec): boolean {
  return JSON.stringify(describeTextIndex(a)) === JSON.stringify(describeTextIndex(b));
}

/** One string a text index holds: its text, its field's weight and the language it is in. */
export interface IndexedString {
  readonly text: string;
  readonly weight: number;
  readonly language: TextLanguage;
}

// Weights by path, per spec (a spec is stored once per catalog read and shared).
const WEIGHTS = new WeakMap<TextIndexSpec, ReadonlyMap<string, number>>();

function weightsOf(spec: TextIndexSpec): ReadonlyMap<string, number> {
  let map = WEIGHTS.get(spec);
  if (map === undefined) WEIGHTS.set(spec, (map = new Map(spec.weights)));
  return map;
}

/**
 * The language of a document (or embedded document), from its language-override field, else
 * `current`.
 * @throws VALIDATION_FAILED with MongoDB's messages for a field that is not a string or names no language
 */
function languageOf(doc: Doc, spec: TextIndexSpec, current: TextLanguage): TextLanguage {
  if (!Object.hasOwn(doc, spec.languageOverride)) return current;
  const name = doc[spec.languageOverride];
  if (typeof name !== 'string') fail('VALIDATION_FAILED', 'found language override field in document with non-string type', { field: spec.languageOverride });
  return findTextLanguage(name) ?? fail('VALIDATION_FAILED', `language override unsupported: ${name}`, { field: spec.languageOverride });
}

/**
 * The strings of `doc` the index holds (MongoDB's FTSElementIterator): string values at a
 * weighted path (or anywhere, for a wildcard index), array elements counted as values of their
 * array's path, embedded documents entered when a weighted path lies below them, each in the
 * language of the nearest document (the field named by language_override) or the index's.
 * @throws VALIDATION_FAILED for a language override MongoDB refuses
 */
export function indexedStrings(doc: Doc, spec: TextIndexSpec): IndexedString[] {
  const weights = weightsOf(spec);
  const out: IndexedString[] = [];
  const below = (path: string): boolean => {
    if (spec.wildcard) return true;
    const prefix = `${path}.`;
    for (const p of weights.keys()) if (p.startsWith(prefix)) return true;
    return false;
  };
  const visitValue = (value: unknown, path: string, language: TextLanguage): void => {
    if (typeof value === 'string') {
      const weight = weights.get(path) ?? (spec.wildcard ? 1 : undefined);
      if (weight !== undefined) out.push({ text: value, weight, language });
    } else if (Array.isArray(value)) {
      for (const element of value) visitValue(element, path, language);
    } else if (isPlainObject(value) && below(path)) {
      visitDocument(value, path, language);
    }
  };
  const visitDocument = (sub: Doc, prefix: string, parent: TextLanguage): void => {
    const language = languageOf(sub, spec, parent);
    for (const [name, value] of Object.entries(sub)) visitValue(value, prefix === '' ? name : `${prefix}.${name}`, language);
  };
  visitDocument(doc, '', findTextLanguage(spec.defaultLanguage)!);
  return out;
}

/** The score a string adds to each of its terms (MongoDB's _scoreStringV2). */
function scoreString(raw: string, weight: number, language: TextLanguage, scores: Map<string, number>): void {
  const tokens = tokenize(raw, language, INDEX_TOKENS);
  // Per term: how often it occurs, and its frequency, where each repeat counts half the one before.
  const terms = new Map<string, { count: number; freq: number; exp: number }>();
  for (const term of tokens) {
    const data = terms.get(term);
    if (data === undefined) terms.set(term, { count: 1, freq: 1, exp: 1 });
    else {
      data.exp *= 2;
      data.count++;
      data.freq += 1 / data.exp;
    }
  }
  for (const [term, data] of terms) {
    // Weighs a term by its share of the string: half for being there, half by its proportion.
    const coeff = (0.5 * data.count) / tokens.length + 0.5;
    // A string that is the term itself (one word, its own stem) scores a tenth more.
    const adjustment = raw.length === term.length && raw.toLowerCase() === term ? 1.1 : 1;
    scores.set(term, (scores.get(term) ?? 0) + weight * data.freq * coeff * adjustment);
  }
}

/**
 * Each term of `doc` with its score (MongoDB's scoreDocument): the sum over the strings holding
 * it of weight x frequency x coefficient x adjustment. Empty for a document with no indexed text.
 * @throws VALIDATION_FAILED for a language override MongoDB refuses
 */
export function documentTermScores(doc: Doc, spec: TextIndexSpec): Map<string, number> {
  const scores = new Map<string, number>();
  for (const s of indexedStrings(doc, spec)) scoreString(s.text, s.weight, s.language, scores);
  return scores;
}

/** Longest term an index key holds whole, in UTF-16 units; a longer one keeps this prefix (the search then checks the document). */
export const TERM_KEY_CHARS = 200;

/** The part of a term an index key holds. */
export function termKey(term: string): string {
  return term.length <= TERM_KEY_CHARS ? term : term.slice(0, TERM_KEY_CHARS);
}
