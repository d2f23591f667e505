/**
 * The tokenizer of text index version 3 (MongoDB's unicode tokenizer): a word is a run of
 * code points that are not delimiters, a delimiter being a code point with one of the Unicode
 * properties White_Space, Dash, Hyphen, Quotation_Mark, Terminal_Punctuation, Pattern_Syntax or
 * Sentence_Terminal (so `_` and digits belong to words, `-`, `.`, `'` and `"` do not), except
 * that in English the apostrophe is part of a word ("don't"). Each word is then, in this order:
 * lower-cased, dropped when it is a stop word, stemmed (from its original case when the search
 * is case-sensitive), and stripped of its diacritics unless the search is diacritic-sensitive.
 * JavaScript's Unicode tables stand in for MongoDB's (Unicode 8): they agree on every common
 * character.
 */

import type { TextLanguage } from './text-language.js';

// The Hyphen property is deprecated and has no regular-expression escape: its code points.
const HYPHENS = '\\u00AD\\u058A\\u1806\\u2010\\u2011\\u2E17\\u30FB\\uFE63\\uFF0D\\uFF65';
const DELIMITER_CLASS = `[\\p{White_Space}\\p{Dash}\\p{Quotation_Mark}\\p{Terminal_Punctuation}\\p{Pattern_Syntax}\\p{Sentence_Terminal}${HYPHENS}]`;
const DELIMITERS = new RegExp(`${DELIMITER_CLASS}+`, 'u');
const ENGLISH_DELIMITERS = new RegExp(`(?:(?!')${DELIMITER_CLASS})+`, 'u');
// Diacritics once a string is decomposed (NFD): the marks MongoDB's diacritic list removes.
const DIACRITICS = /\p{Diacritic}/gu;
// Only strings with a character past ASCII can hold a diacritic that is not a delimiter.
const NON_ASCII = /[^\u0000-\u007f]/;

/** How words become tokens. */
export interface TokenizeOptions {
  /** Drop the language's stop words (the index does; the matcher of a search does not). */
  readonly filterStopWords: boolean;
  /** Keep each word's case (a `$caseSensitive` search). */
  readonly caseSensitive: boolean;
  /** Keep each word's diacritics (a `$diacriticSensitive` search). */
  readonly diacriticSensitive: boolean;
}

/** The options of index terms: stop words dropped, case and diacritics folded. */
export const INDEX_TOKENS: TokenizeOptions = { filterStopWords: true, caseSensitive: false, diacriticSensitive: false };

/** The words of `text` as the language splits it, before any folding. */
export function words(text: string, language: TextLanguage): string[] {
  return text.split(language.name === 'english' ? ENGLISH_DELIMITERS : DELIMITERS).filter((w) => w !== '');
}

/** `text` lower-cased as MongoDB folds case (Turkish has its own dotted and dotless i). */
export function lowerCase(text: string, language: TextLanguage): string {
  return language.name === 'turkish' ? text.toLocaleLowerCase('tr') : text.toLowerCase();
}

/** `text` without its diacritics ("café" -> "cafe"). */
export function stripDiacritics(text: string): string {
  if (!NON_ASCII.test(text)) return text;
  return text.normalize('NFD').replace(DIACRITICS, '').normalize('NFC');
}

// Snowball's English stemmer (Porter2) first drops a possessive ("shop's", "shops'"); Orama's
// stemmer does not, so that step is taken here.
const POSSESSIVE = /'(?:s'?)?$/i;

function possessiveless(word: string, language: TextLanguage): string {
  if (language.name !== 'english') return word;
  const bare = word.replace(POSSESSIVE, '');
  return bare === '' ? word : bare;
}

/** The tokens of `text` in `language`, in order, repeats kept (the score counts them). */
export function tokenize(text: string, language: TextLanguage, options: TokenizeOptions): string[] {
  const out: string[] = [];
  for (const word of words(text, language)) {
    const lower = lowerCase(word, language);
    // Stop words are listed lower-case, with their diacritics.
    if (options.filterStopWords && language.stopWords.has(lower)) continue;
    // The stemmer sees diacritics, so it runs before they are stripped.
    const stemmed = language.stem(possessiveless(options.caseSensitive ? word : lower, language));
    out.push(options.diacriticSensitive ? stemmed : stripDiacritics(stemmed));
  }
  return out;
}

/** `text` folded as a phrase search compares it: case and diacritics dropped unless the search keeps them. */
export function foldPhrase(text: string, language: TextLanguage, options: Pick<TokenizeOptions, 'caseSensitive' | 'diacriticSensitive'>): string {
  const cased = options.caseSensitive ? text : lowerCase(text, language);
  return options.diacriticSensitive ? cased : stripDiacritics(cased);
}
