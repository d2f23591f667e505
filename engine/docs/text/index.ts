// Text search (manual: Text Indexes, $text): languages, the tokenizer, text index specs with
// their per-term scores, and the $text search itself. The collection layer stores and reads the
// index; the filter compiler parses $text into a TextSearch.
export { DEFAULT_TEXT_LANGUAGE, findTextLanguage, textLanguageNames, type TextLanguage } from './text-language.js';
export { foldPhrase, INDEX_TOKENS, tokenize, type TokenizeOptions } from './text-tokenizer.js';
export {
  describeTextIndex,
  documentTermScores,
  indexedStrings,
  isTextKeyPattern,
  parseTextIndex,
  textIndexFields,
  textKeyFields,
  textKeyPattern,
  textKeyValue,
  type ParsedTextIndex,
  type TextKeyField,
  sameTextIndex,
  termKey,
  TEXT_INDEX_VERSION,
  TEXT_KEY_PATTERN,
  type TextIndexOptions,
  type TextIndexSpec,
} from './text-index-spec.js';
export { parseTextParams, TextSearch, type TextParams } from './text-search.js';
export { carryTextScore, checkMetaName, setNoTextScore, setTextScore, TEXT_SCORE_UNAVAILABLE, textScoreIfAny, textScoreOf } from './text-score.js';
