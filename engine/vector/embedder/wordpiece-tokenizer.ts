import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import type { JsonObject } from './model-files.js';
import { readJsonIfPresent, readTextIfPresent, TOKENIZER_CONFIG_FILE, TOKENIZER_JSON_FILE, VOCAB_FILE } from './model-files.js';

/** Text -> model input ids: the model's normalisation, pre-tokenisation, WordPiece and special tokens. */
export interface WordPieceTokenizer {
  /** Which file defined it: tokenizer.json when present, else vocab.txt. */
  readonly source: typeof TOKENIZER_JSON_FILE | typeof VOCAB_FILE;
  /** How many special tokens wrap a text ([CLS] and [SEP] for BERT: 2). */
  readonly specialTokenCount: number;
  /**
   * Ids including special tokens, at most maxTokens long. Like Hugging Face's truncation of a
   * single sequence, the text's tokens are cut to make room and the special tokens are kept.
   */
  encode(text: string, maxTokens: number): number[];
  /** The id of a token, or undefined when it is not in the vocabulary. */
  tokenId(token: string): number | undefined;
}


/**
 * Loads the tokenizer of a model directory: tokenizer.json (+ tokenizer_config.json) when present,
 * else the BERT WordPiece tokenizer that vocab.txt defines.
 * @throws Error when neither file is there or a file is not valid.
 */
export async function loadWordPieceTokenizer(modelDir: string): Promise<WordPieceTokenizer> {
  const config = (await readJsonIfPresent(join(modelDir, TOKENIZER_CONFIG_FILE))) ?? {};
  const tokenizerJson = await readJsonIfPresent(join(modelDir, TOKENIZER_JSON_FILE));
  if (tokenizerJson !== undefined) return new LibraryTokenizer(TOKENIZER_JSON_FILE, tokenizerJson, config);
  const vocabText = await readTextIfPresent(join(modelDir, VOCAB_FILE));
  if (vocabText === undefined) throw new Error(`no ${TOKENIZER_JSON_FILE} or ${VOCAB_FILE} in ${modelDir}`);
  return new LibraryTokenizer(VOCAB_FILE, bertTokenizerJson(parseVocab(vocabText), config), config);
}

class LibraryTokenizer implements WordPieceTokenizer {
  readonly source: WordPieceTokenizer['source'];
  readonly specialTokenCount: number;
  #tokenizer: Tokenizer;
  #unkId: number;

  constructor(source: WordPieceTokenizer['source'], tokenizerJson: JsonObject, config: JsonObject) {
    this.source = source;
    try {
      this.#tokenizer = new Tokenizer(tokenizerJson, config);
    } catch (err) {
      throw new Error(`cannot build the tokenizer from ${source}: ${err instanceof Error ? err.message : String(err)}`);
    }
    const model = tokenizerJson['model'] as JsonObject | undefined;
    const unk = typeof model?.['unk_token'] === 'string' ? model['unk_token'] : '[UNK]';
    const unkId = this.#tokenizer.token_to_id(unk);
    if (unkId === undefined) throw new Error(`the tokenizer from ${source} has no id for its unknown token ${unk}`);
    this.#unkId = unkId;
    this.specialTokenCount = this.#withSpecialTokens([]).length;
  }

  encode(text: string, maxTokens: number): number[] {
    const room = maxTokens - this.specialTokenCount;
    if (room < 1) throw new Error(`maxTokens ${maxTokens} leaves no room beside ${this.specialTokenCount} special tokens`);
    const tokens = this.#tokenizer.tokenize(text, { add_special_tokens: false });
    const kept = tokens.length > room ? tokens.slice(0, room) : tokens;
    return this.#withSpecialTokens(kept).map((t) => this.#tokenizer.token_to_id(t) ?? this.#unkId);
  }

  tokenId(token: string): number | undefined {
    return this.#tokenizer.token_to_id(token);
  }

  #withSpecialTokens(tokens: string[]): string[] {
    const post = this.#tokenizer.post_processor;
    return post === null ? tokens : post.post_process(tokens, null, true).tokens;
  }
}

/** vocab.txt: one token per line, the line number is the id (as transformers' load_vocab reads it). */
function parseVocab(text: string): string[] {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** A special token in tokenizer_config.json is a string or an AddedToken object {content}. */
function specialToken(config: JsonObject, key: string, fallback: string): string {
  const value = config[key];
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && typeof (value as JsonObject)['content'] === 'string') return (value as JsonObject)['content'] as string;
  return fallback;
}

/**
 * The tokenizer.json that transformers' BertConverter derives from vocab.txt and the BertTokenizer
 * settings: BertNormalizer (clean text, CJK characters split, lowercase, accents stripped when
 * lowercasing unless told otherwise), BertPreTokenizer (whitespace and punctuation), WordPiece with
 * '##' continuations and [UNK], and the template [CLS] $A [SEP].
 */
function bertTokenizerJson(vocab: readonly string[], config: JsonObject): JsonObject {
  const ids = new Map<string, number>();
  vocab.forEach((token, id) => ids.set(token, id));
  const names = {
    unk: specialToken(config, 'unk_token', '[UNK]'),
    sep: specialToken(config, 'sep_token', '[SEP]'),
    pad: specialToken(config, 'pad_token', '[PAD]'),
    cls: specialToken(config, 'cls_token', '[CLS]'),
    mask: specialToken(config, 'mask_token', '[MASK]'),
  };
  for (const required of [names.unk, names.cls, names.sep]) {
    if (!ids.has(required)) throw new Error(`${VOCAB_FILE} has no ${required} token`);
  }
  const added = [names.pad, names.unk, names.cls, names.sep, names.mask]
    .filter((t) => ids.has(t))
    .map((t) => ({ id: ids.get(t), content: t, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }));
  const strip = config['strip_accents'];
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: config['tokenize_chinese_chars'] !== false,
      strip_accents: typeof strip === 'boolean' ? strip : null,
      lowercase: config['do_lower_case'] !== false,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: names.cls, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: names.sep, type_id: 0 } }],
      pair: [
        { SpecialToken: { id: names.cls, type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: names.sep, type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: names.sep, type_id: 1 } },
      ],
      special_tokens: {
        [names.cls]: { id: names.cls, ids: [ids.get(names.cls)], tokens: [names.cls] },
        [names.sep]: { id: names.sep, ids: [ids.get(names.sep)], tokens: [names.sep] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: names.unk,
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab: Object.fromEntries(ids),
    },
  };
}
