/**
 * A `$text` search (manual: $text; MongoDB's fts_query_impl.cpp and fts_matcher.cpp): the search
 * string parsed into terms and phrases, the test of a document, and its score.
 *
 * The string splits on spaces (and CR, LF, VT, FF) into terms; `"` opens and closes a phrase; a
 * `-` after a space (or at the start) negates what follows up to the next space: a term, or a
 * phrase. Terms are then tokenized in the search's language (stop words dropped, stemmed,
 * folded). A document matches when it holds some positive term (the words of positive phrases
 * count as terms), none of the negated ones, every positive phrase and no negated phrase, a
 * phrase being a substring of one indexed string (case and diacritics folded unless the search
 * keeps them). A search of negations only has no positive term, and matches nothing.
 *
 * The search needs its collection's text index (its fields, weights and languages, and the
 * default language when `$language` is not given): it is bound to it when the query is planned.
 */

import { fail } from '../../errors.js';
import type { Doc } from '../values.js';
import { documentTermScores, indexedStrings, type TextIndexSpec } from './text-index-spec.js';
import { findTextLanguage, type TextLanguage } from './text-language.js';
import { foldPhrase, INDEX_TOKENS, tokenize, type TokenizeOptions } from './text-tokenizer.js';

/** `$text`'s operand, checked. */
export interface TextParams {
  readonly search: string;
  /** A canonical language name, or undefined for the index's default language. */
  readonly language: string | undefined;
  readonly caseSensitive: boolean;
  readonly diacriticSensitive: boolean;
}

/** The search string split into its parts, before tokenizing (which needs the language). */
interface ParsedSearch {
  readonly positive: string;
  readonly negated: string;
  readonly phrases: readonly string[];
  readonly negatedPhrases: readonly string[];
}

// MongoDB's query parser separates on these alone (not on tabs).
const WHITESPACE = new Set(['\n', '\v', '\f', '\r', ' ']);

/** Splits a search string as MongoDB's FTSQueryImpl::parse does. */
function parseSearch(query: string): ParsedSearch {
  const positive: string[] = [];
  const negated: string[] = [];
  const phrases: string[] = [];
  const negatedPhrases: string[] = [];
  let inNegation = false;
  let inPhrase = false;
  let quoteAt = 0;
  let i = 0;
  let previousWhiteSpace = true;
  const skipWhitespace = (): boolean => {
    const start = i;
    while (i < query.length && WHITESPACE.has(query[i]!)) i++;
    return i > start;
  };
  skipWhitespace();
  while (i < query.length) {
    const start = i;
    const c = query[i++]!;
    if (c !== '-' && c !== '"') {
      while (i < query.length && !WHITESPACE.has(query[i]!) && query[i] !== '-' && query[i] !== '"') i++;
    }
    const token = query.slice(start, i);
    const afterWhiteSpace = previousWhiteSpace;
    previousWhiteSpace = skipWhitespace();
    if (c === '-') {
      // Only a `-` outside a phrase that starts a word negates.
      if (!inPhrase && afterWhiteSpace) inNegation = true;
    } else if (c === '"') {
      if (inPhrase) {
        (inNegation ? negatedPhrases : phrases).push(query.slice(quoteAt + 1, start));
        inPhrase = false;
      } else {
        inPhrase = true;
        if (inNegation && afterWhiteSpace) inNegation = false;
        quoteAt = start;
      }
    } else if (!(inPhrase && inNegation)) {
      // A negation lasts until the next space: "-foo-bar" negates both words.
      if (inNegation && afterWhiteSpace) inNegation = false;
      (inNegation ? negated : positive).push(token);
    }
  }
  return { positive: positive.join(' '), negated: negated.join(' '), phrases, negatedPhrases };
}

/**
 * The checked operand of `$text` (MongoDB's messages).
 * @throws QUERY_ERROR for an operand that is not `{$search: string, $language?: string, $caseSensitive?: bool, $diacriticSensitive?: bool}`
 */
export function parseTextParams(operand: unknown, typeName: (v: unknown) => string): TextParams {
  const bad = (message: string): never => fail('QUERY_ERROR', message, { operator: '$text' });
  if (typeof operand !== 'object' || operand === null || Array.isArray(operand) || operand instanceof Date) bad('$text expects an object');
  const spec = operand as Doc;
  const field = <T>(name: string, type: 'string' | 'bool', fallback?: T): T | undefined => {
    if (!Object.hasOwn(spec, name)) return name === '$search' ? bad(`Missing expected field "${name}"`) : fallback;
    const v = spec[name];
    if ((type === 'string' && typeof v !== 'string') || (type === 'bool' && typeof v !== 'boolean')) {
      bad(`"${name}" had the wrong type. Expected ${type}, found ${typeName(v)}`);
    }
    return v as T;
  };
  const search = field<string>('$search', 'string')!;
  const languageName = field<string>('$language', 'string');
  const caseSensitive = field<boolean>('$caseSensitive', 'bool', false)!;
  const diacriticSensitive = field<boolean>('$diacriticSensitive', 'bool', false)!;
  const expected = 1 + ['$language', '$caseSensitive', '$diacriticSensitive'].filter((n) => Object.hasOwn(spec, n)).length;
  if (Object.keys(spec).length !== expected) bad('extra fields in $text');
  // An empty $language is the index's default, as in MongoDB.
  let language: string | undefined;
  if (languageName !== undefined && languageName !== '') {
    language = findTextLanguage(languageName)?.name ?? bad(`unsupported language: "${languageName}" for text index version 3`);
  }
  return { search, language, caseSensitive, diacriticSensitive };
}

/** What the search looks for, tokenized in its language. */
interface Terms {
  /** The positive terms as the index holds them: the index is read for these. */
  readonly bounds: ReadonlySet<string>;
  /** Positive and negated terms as the matcher compares them (case or diacritics kept when the search asks). */
  readonly positive: ReadonlySet<string>;
  readonly negated: ReadonlySet<string>;
}

/** A `$text` search: parsed when the filter is, bound to the collection's text index when planned. */
export class TextSearch {
  readonly params: TextParams;
  readonly #parsed: ParsedSearch;
  #spec: TextIndexSpec | undefined;
  #terms: Terms | undefined;
  // The last document's term scores: a match is scored right after it is tested.
  #lastDoc: Doc | undefined;
  #lastScores: Map<string, number> | undefined;

  constructor(params: TextParams) {
    this.params = params;
    this.#parsed = parseSearch(params.search);
  }

  /** Binds the search to its collection's text index (again for each plan: the same index gives the same terms). */
  bind(spec: TextIndexSpec): void {
    if (this.#spec === spec) return;
    this.#spec = spec;
    this.#lastDoc = undefined;
    const language = findTextLanguage(this.params.language ?? spec.defaultLanguage)!;
    const matcherOptions = this.#matcherOptions(true);
    const sensitive = this.params.caseSensitive || this.params.diacriticSensitive;
    const bounds = new Set(tokenize(this.#parsed.positive, language, INDEX_TOKENS));
    const positive = sensitive ? new Set(tokenize(this.#parsed.positive, language, matcherOptions)) : bounds;
    const negated = new Set(tokenize(this.#parsed.negated, language, matcherOptions));
    this.#terms = { bounds, positive, negated };
  }

  /** The index terms a matching document has one of (none: the search matches nothing). */
  boundsTerms(): string[] {
    return [...this.#bound().terms.bounds];
  }

  /** True when `doc` matches the search (see the file comment). @throws INTERNAL when not bound */
  matches(doc: Doc): boolean {
    const { spec, terms } = this.#bound();
    if (terms.bounds.size === 0) return false;
    // The index's terms: what the index lookup found the document by.
    const scores = this.#scoresOf(doc, spec);
    let found = false;
    for (const t of terms.bounds) if (scores.has(t)) found = true;
    if (!found) return false;
    const strings = indexedStrings(doc, spec);
    const sensitive = this.params.caseSensitive || this.params.diacriticSensitive;
    // The matcher reads every word of the document, stop words included (MongoDB's FTSMatcher).
    const options = this.#matcherOptions(false);
    const hasAny = (wanted: ReadonlySet<string>): boolean => strings.some((s) => tokenize(s.text, s.language, options).some((t) => wanted.has(t)));
    if (sensitive && !hasAny(terms.positive)) return false;
    if (terms.negated.size > 0 && hasAny(terms.negated)) return false;
    const phraseIn = (phrase: string): boolean => strings.some((s) => foldPhrase(s.text, s.language, this.params).includes(foldPhrase(phrase, s.language, this.params)));
    return this.#parsed.phrases.every(phraseIn) && !this.#parsed.negatedPhrases.some(phraseIn);
  }

  /** The document's text score: its scores for the search's terms, summed (MongoDB's TEXT_OR). @throws INTERNAL when not bound */
  score(doc: Doc): number {
    const { spec, terms } = this.#bound();
    const scores = this.#scoresOf(doc, spec);
    let total = 0;
    for (const t of terms.bounds) total += scores.get(t) ?? 0;
    return total;
  }

  #scoresOf(doc: Doc, spec: TextIndexSpec): Map<string, number> {
    if (this.#lastDoc !== doc) {
      this.#lastScores = documentTermScores(doc, spec);
      this.#lastDoc = doc;
    }
    return this.#lastScores!;
  }

  #matcherOptions(filterStopWords: boolean): TokenizeOptions {
    return { filterStopWords, caseSensitive: this.params.caseSensitive, diacriticSensitive: this.params.diacriticSensitive };
  }

  #bound(): { spec: TextIndexSpec; terms: Terms } {
    if (this.#spec === undefined || this.#terms === undefined) fail('INTERNAL', 'a $text search was tested before it was planned');
    return { spec: this.#spec, terms: this.#terms };
  }
}

export type { TextLanguage };
