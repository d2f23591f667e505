import { describe, expect, it } from 'vitest';
import { compareLeafKey, decodeNode, encodeNode, leafBound, leafKeyAt, leafKeyBytes, leafKeyCount, leafKeyIs, leafKeyList, newLeaf, nodeMemoryBytes, type LeafNode } from '../../engine/storage/btree-node.js';
import { PAGE_SIZE } from '../../engine/storage/index.js';
import { randomInt, seededRandom } from '../helpers/random.js';

// A leaf decoded from a page keeps its keys in the page and searches them there; every answer
// must be the one the dirty leaf (keys as strings, compared by V8) gives for the same entries.

function randomKey(rand: () => number): string {
  // Few distinct bytes, 0x00 and 0xff included, so keys share prefixes and differ only in length.
  const alphabet = [0x00, 0x01, 0x41, 0x7f, 0x80, 0xfe, 0xff];
  let s = '';
  for (let i = randomInt(rand, 0, 6); i > 0; i--) s += String.fromCharCode(alphabet[randomInt(rand, 0, alphabet.length - 1)]!);
  return s;
}

describe('decoded leaves', () => {
  it('search, compare and hand out keys as the dirty leaf they were written from', () => {
    const rand = seededRandom(3);
    for (let round = 0; round < 200; round++) {
      const keys = [...new Set(Array.from({ length: randomInt(rand, 0, 60) }, () => randomKey(rand)))].sort();
      const dirty = newLeaf(keys, keys.map((k) => `v${k}`), 1);
      const page = Buffer.alloc(PAGE_SIZE);
      encodeNode(dirty, page);
      const decoded = decodeNode(page, 7) as LeafNode;
      expect(decoded.keys).toBeUndefined();
      expect(leafKeyCount(decoded)).toBe(keys.length);
      expect(leafKeyList(decoded)).toStrictEqual(keys);
      for (let i = 0; i < keys.length; i++) {
        expect(leafKeyAt(decoded, i)).toBe(keys[i]);
        expect(leafKeyBytes(decoded, i).equals(Buffer.from(keys[i]!, 'latin1'))).toBe(true);
      }
      for (let p = 0; p < 40; p++) {
        const probe = rand() < 0.3 && keys.length > 0 ? keys[randomInt(rand, 0, keys.length - 1)]! : randomKey(rand);
        for (const upper of [false, true]) expect(leafBound(decoded, probe, upper)).toBe(leafBound(dirty, probe, upper));
        const i = leafBound(dirty, probe, false);
        expect(leafKeyIs(decoded, i, probe)).toBe(leafKeyIs(dirty, i, probe));
        for (let j = 0; j < keys.length; j++) expect(Math.sign(compareLeafKey(decoded, j, probe))).toBe(Math.sign(compareLeafKey(dirty, j, probe)));
      }
      // The cache counts the page and its offsets, not a string per key.
      expect(nodeMemoryBytes(decoded)).toBeLessThanOrEqual(PAGE_SIZE + 400 + 8 * keys.length);
    }
  });
});
