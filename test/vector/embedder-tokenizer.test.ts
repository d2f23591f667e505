import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadWordPieceTokenizer } from '../../engine/vector/embedder/index.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';
import { TINY_VOCAB, writeTinyModel } from './tiny-onnx-model.js';

const newDir = dirsRemovedAfterEach();
const id = (token: string): number => {
  const i = TINY_VOCAB.indexOf(token);
  if (i < 0) throw new Error(`not in the tiny vocab: ${token}`);
  return i;
};
const ids = (tokens: string): number[] => tokens.split(' ').map(id);

/** Hand-derived BERT WordPiece encodings over the tiny vocab. */
const CASES: ReadonlyArray<{ name: string; text: string; tokens: string }> = [
  { name: 'lower-cases and splits punctuation', text: 'Hello, World!', tokens: '[CLS] hello , world ! [SEP]' },
  { name: 'strips accents', text: 'Café naïve RÉSUMÉ', tokens: '[CLS] cafe naive resume [SEP]' },
  { name: 'splits words into ## pieces, longest match first', text: 'unbelievable playing played plays', tokens: '[CLS] un ##believ ##able play ##ing play ##ed play ##s [SEP]' },
  { name: 'gives [UNK] for a word without a full segmentation', text: 'xyzzy abc ab-c', tokens: '[CLS] [UNK] ab ##c ab - [UNK] [SEP]' },
  { name: 'splits CJK characters even without spaces', text: '中文the dog', tokens: '[CLS] 中 文 the dog [SEP]' },
  { name: 'splits an apostrophe', text: "the dog's", tokens: "[CLS] the dog ' s [SEP]" },
  { name: 'treats tabs and newlines as spaces', text: 'hello\tworld\r\n', tokens: '[CLS] hello world [SEP]' },
  { name: 'drops control and format characters', text: 'hel\u0000lo wor\u200bld', tokens: '[CLS] hello world [SEP]' },
  { name: 'encodes an empty text as the special tokens only', text: '', tokens: '[CLS] [SEP]' },
  { name: 'encodes a blank text as the special tokens only', text: ' \n\t ', tokens: '[CLS] [SEP]' },
  { name: 'recognises special tokens written in the text', text: 'a [MASK] sat', tokens: '[CLS] a [MASK] sat [SEP]' },
  { name: 'keeps a word longer than 100 characters as one [UNK]', text: `the ${'ab'.repeat(51)} cat`, tokens: '[CLS] the [UNK] cat [SEP]' },
];

async function bothTokenizers() {
  const full = newDir('tok-json');
  writeTinyModel(full);
  const vocabOnly = newDir('tok-vocab');
  copyFileSync(join(full, 'vocab.txt'), join(vocabOnly, 'vocab.txt'));
  return { fromJson: await loadWordPieceTokenizer(full), fromVocab: await loadWordPieceTokenizer(vocabOnly) };
}

describe('WordPiece tokenizer', () => {
  it('reads tokenizer.json when present and vocab.txt otherwise', async () => {
    const { fromJson, fromVocab } = await bothTokenizers();
    expect(fromJson.source).toBe('tokenizer.json');
    expect(fromVocab.source).toBe('vocab.txt');
    expect(fromJson.specialTokenCount).toBe(2);
    expect(fromVocab.specialTokenCount).toBe(2);
  });

  it.each(CASES)('$name (both paths give the hand-derived ids)', async ({ text, tokens }) => {
    const { fromJson, fromVocab } = await bothTokenizers();
    expect(fromJson.encode(text, 256)).toEqual(ids(tokens));
    expect(fromVocab.encode(text, 256)).toEqual(ids(tokens));
  });

  it('truncates to maxTokens including [CLS] and [SEP], keeping both', async () => {
    const { fromJson, fromVocab } = await bothTokenizers();
    for (const tok of [fromJson, fromVocab]) {
      expect(tok.encode('the quick brown fox jumps', 4)).toEqual(ids('[CLS] the quick [SEP]'));
      expect(tok.encode('the quick brown fox jumps', 7)).toEqual(ids('[CLS] the quick brown fox jumps [SEP]'));
      expect(tok.encode('the quick brown fox jumps', 3)).toEqual(ids('[CLS] the [SEP]'));
      // A word's ## pieces are tokens like any other: the cut can fall inside a word.
      expect(tok.encode('unbelievable', 4)).toEqual(ids('[CLS] un ##believ [SEP]'));
      const long = tok.encode(`dog ${'the '.repeat(300)}cat`, 256);
      expect(long).toHaveLength(256);
      expect(long.slice(0, 3)).toEqual(ids('[CLS] dog the'));
      expect(long.at(-1)).toBe(id('[SEP]'));
      expect(() => tok.encode('the', 2)).toThrow(/no room/);
    }
  });

  it("ignores tokenizer.json's own truncation (128) and padding, like sentence-transformers", async () => {
    const { fromJson } = await bothTokenizers();
    expect(fromJson.encode('the '.repeat(200), 256)).toHaveLength(202);
    expect(fromJson.encode('hello', 256)).toEqual(ids('[CLS] hello [SEP]'));
  });

  it('gives identical ids on both paths for mixed texts', async () => {
    const { fromJson, fromVocab } = await bothTokenizers();
    const texts = ['THE Quick, brown fox!', 'Ünbelievable? ¿playing', 'naïve café — 中文, mat.', "cat's mat-sat on a dog", '   ', 'a\u00a0cat\u3000sat'];
    for (const text of texts) expect(fromVocab.encode(text, 256)).toEqual(fromJson.encode(text, 256));
  });

  it('honours do_lower_case: false from tokenizer_config.json on the vocab.txt path', async () => {
    const dir = newDir('tok-cased');
    writeTinyModel(dir, { tokenizerJson: false });
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify({ do_lower_case: false }));
    const tok = await loadWordPieceTokenizer(dir);
    expect(tok.encode('Hello hello', 256)).toEqual(ids('[CLS] [UNK] hello [SEP]'));
  });

  it('fails clearly without tokenizer files, with a broken tokenizer.json, or a vocab without [CLS]', async () => {
    await expect(loadWordPieceTokenizer(newDir('tok-none'))).rejects.toThrow(/no tokenizer\.json or vocab\.txt in /);
    const broken = newDir('tok-broken');
    writeFileSync(join(broken, 'tokenizer.json'), '{"model": ');
    await expect(loadWordPieceTokenizer(broken)).rejects.toThrow(/tokenizer\.json is not valid JSON/);
    const noCls = newDir('tok-nocls');
    writeFileSync(join(noCls, 'vocab.txt'), '[PAD]\n[UNK]\n[SEP]\nhello\n');
    await expect(loadWordPieceTokenizer(noCls)).rejects.toThrow(/vocab\.txt has no \[CLS\] token/);
  });
});
