/**
 * The languages of text search (manual: "Text Search Languages"): MongoDB's fifteen Snowball
 * languages, by name or ISO 639-1 code, and "none". Each has a stemmer (Snowball, from
 * @orama/stemmers) and a stop-word list (@orama/stopwords: Orama's lists, close to but not the
 * same as MongoDB's own, see docs/mql.md "Text search"). "none" stems nothing and drops no word.
 */

import { stemmer as danishStemmer } from '@orama/stemmers/danish';
import { stemmer as dutchStemmer } from '@orama/stemmers/dutch';
import { stemmer as englishStemmer } from '@orama/stemmers/english';
import { stemmer as finnishStemmer } from '@orama/stemmers/finnish';
import { stemmer as frenchStemmer } from '@orama/stemmers/french';
import { stemmer as germanStemmer } from '@orama/stemmers/german';
import { stemmer as hungarianStemmer } from '@orama/stemmers/hungarian';
import { stemmer as italianStemmer } from '@orama/stemmers/italian';
import { stemmer as norwegianStemmer } from '@orama/stemmers/norwegian';
import { stemmer as portugueseStemmer } from '@orama/stemmers/portuguese';
import { stemmer as romanianStemmer } from '@orama/stemmers/romanian';
import { stemmer as russianStemmer } from '@orama/stemmers/russian';
import { stemmer as spanishStemmer } from '@orama/stemmers/spanish';
import { stemmer as swedishStemmer } from '@orama/stemmers/swedish';
import { stemmer as turkishStemmer } from '@orama/stemmers/turkish';
import { stopwords as danishStopWords } from '@orama/stopwords/danish';
import { stopwords as dutchStopWords } from '@orama/stopwords/dutch';
import { stopwords as englishStopWords } from '@orama/stopwords/english';
import { stopwords as finnishStopWords } from '@orama/stopwords/finnish';
import { stopwords as frenchStopWords } from '@orama/stopwords/french';
import { stopwords as germanStopWords } from '@orama/stopwords/german';
import { stopwords as hungarianStopWords } from '@orama/stopwords/hungarian';
import { stopwords as italianStopWords } from '@orama/stopwords/italian';
import { stopwords as norwegianStopWords } from '@orama/stopwords/norwegian';
import { stopwords as portugueseStopWords } from '@orama/stopwords/portuguese';
import { stopwords as romanianStopWords } from '@orama/stopwords/romanian';
import { stopwords as russianStopWords } from '@orama/stopwords/russian';
import { stopwords as spanishStopWords } from '@orama/stopwords/spanish';
import { stopwords as swedishStopWords } from '@orama/stopwords/swedish';
import { stopwords as turkishStopWords } from '@orama/stopwords/turkish';

/** A text search language: its canonical name, stemmer and stop words. */
export interface TextLanguage {
  /** MongoDB's name for it ("english", ..., "none"). */
  readonly name: string;
  readonly stem: (word: string) => string;
  readonly stopWords: ReadonlySet<string>;
}

/** The language index and query defaults to when none is given (MongoDB's). */
export const DEFAULT_TEXT_LANGUAGE = 'english';

function language(name: string, stem: (word: string) => string, stopWords: readonly string[]): TextLanguage {
  return { name, stem, stopWords: new Set(stopWords) };
}

const NONE: TextLanguage = { name: 'none', stem: (word) => word, stopWords: new Set() };

// Name and ISO 639-1 code of each language (fts_language.cpp's table for text index version 3).
const LANGUAGES: ReadonlyArray<readonly [TextLanguage, string]> = [
  [language('danish', danishStemmer, danishStopWords), 'da'],
  [language('dutch', dutchStemmer, dutchStopWords), 'nl'],
  [language('english', englishStemmer, englishStopWords), 'en'],
  [language('finnish', finnishStemmer, finnishStopWords), 'fi'],
  [language('french', frenchStemmer, frenchStopWords), 'fr'],
  [language('german', germanStemmer, germanStopWords), 'de'],
  [language('hungarian', hungarianStemmer, hungarianStopWords), 'hu'],
  [language('italian', italianStemmer, italianStopWords), 'it'],
  [language('norwegian', norwegianStemmer, norwegianStopWords), 'nb'],
  [language('portuguese', portugueseStemmer, portugueseStopWords), 'pt'],
  [language('romanian', romanianStemmer, romanianStopWords), 'ro'],
  [language('russian', russianStemmer, russianStopWords), 'ru'],
  [language('spanish', spanishStemmer, spanishStopWords), 'es'],
  [language('swedish', swedishStemmer, swedishStopWords), 'sv'],
  [language('turkish', turkishStemmer, turkishStopWords), 'tr'],
];

const BY_NAME = new Map<string, TextLanguage>([['none', NONE]]);
for (const [lang, code] of LANGUAGES) {
  BY_NAME.set(lang.name, lang);
  BY_NAME.set(code, lang);
}

/** The language a name or ISO code stands for (any case, as MongoDB reads them), or undefined. */
export function findTextLanguage(name: string): TextLanguage | undefined {
  return BY_NAME.get(name.toLowerCase());
}

/** Every language name and code accepted, for messages and docs. */
export function textLanguageNames(): string[] {
  return [...BY_NAME.keys()];
}
