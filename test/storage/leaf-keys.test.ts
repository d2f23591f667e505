import { describe, expect, it } from 'vitest';
import {
  branchBound,
  cloneNode,
  compareLeafKey,
  decodeNode,
  dirtyNodeBytes,
  encodeNode,
  leafBound,
  leafKeyAt,
  leafKeyBytes,
  leafKeyCount,
  leafKeyIs,
  leafKeyList,
  leafValueAt,
  lowerBound,
  newLeaf,
  nodeMemoryBytes,
  PageCopies,
  upperBound,
  type BranchNode,
  type LeafNode,
} from '../../engine/storage/btree-node.js';
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

// Keys of one leaf often share a long prefix (time-ordered ids, one index value): the search
// skips what a key is known to share with the keys around it, which these exercise.
function prefixedKey(rand: () => number, prefixes: readonly string[]): string {
  return prefixes[randomInt(rand, 0, prefixes.length - 1)]! + randomKey(rand);
}

describe('decoded leaves', () => {
  it('search, compare and hand out keys as the dirty leaf they were written from', () => {
    const rand = seededRandom(3);
    for (let round = 0; round < 400; round++) {
      // Half the rounds: keys under a few long prefixes that share their starts with each other.
      const base = 'doc-00'.repeat(randomInt(rand, 1, 5));
      const prefixes = round % 2 === 0 ? [''] : [base, `${base}0`, `${base}1`, base.slice(0, -1), `${base}\u00ff`];
      const keys = [...new Set(Array.from({ length: randomInt(rand, 0, 60) }, () => prefixedKey(rand, prefixes)))].sort();
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
        const probe = rand() < 0.3 && keys.length > 0 ? keys[randomInt(rand, 0, keys.length - 1)]! : prefixedKey(rand, prefixes);
        for (const upper of [false, true]) expect(leafBound(decoded, probe, upper)).toBe(leafBound(dirty, probe, upper));
        const i = leafBound(dirty, probe, false);
        expect(leafKeyIs(decoded, i, probe)).toBe(leafKeyIs(dirty, i, probe));
        for (let j = 0; j < keys.length; j++) expect(Math.sign(compareLeafKey(decoded, j, probe))).toBe(Math.sign(compareLeafKey(dirty, j, probe)));
      }
      // The cache counts the page, its offsets and heads, not a string per key.
      expect(nodeMemoryBytes(decoded)).toBeLessThanOrEqual(PAGE_SIZE + 400 + 12 * keys.length);
    }
  });
});

// A branch decoded from a page searches its keys' heads first (the bytes after the prefix all its
// keys share) and compares whole keys only on a tie: every answer must be upperBound's over the
// same keys as strings, for probes inside, below, above and within the shared prefix.
describe('decoded branches', () => {
  it('find the child a plain binary search over the keys finds', () => {
    const rand = seededRandom(5);
    for (let round = 0; round < 400; round++) {
      const base = 'doc-00'.repeat(randomInt(rand, 1, 5));
      const prefixes = round % 2 === 0 ? [''] : [base, `${base}0`, `${base}1`, base.slice(0, -1), `${base}\u00ff`];
      const keys = [...new Set(Array.from({ length: randomInt(rand, 1, 80) }, () => prefixedKey(rand, prefixes)))].sort();
      // A branch of keys.length + 1 children: page ids stand in for them.
      const dirty: BranchNode = { kind: 'branch', pageId: 0, gen: 1, keys, children: keys.map((_, i) => i + 10).concat([keys.length + 10]), bytes: 0, heads: undefined };
      const page = Buffer.alloc(PAGE_SIZE);
      encodeNode(dirty, page);
      const decoded = decodeNode(page, 7) as BranchNode;
      expect(decoded.keys).toStrictEqual(keys);
      expect(decoded.heads).toBeDefined();
      for (let p = 0; p < 40; p++) {
        const r = rand();
        const probe = r < 0.3 ? keys[randomInt(rand, 0, keys.length - 1)]! : r < 0.4 ? base.slice(0, randomInt(rand, 0, base.length)) : prefixedKey(rand, prefixes);
        expect(branchBound(decoded, probe)).toBe(upperBound(keys, probe));
        // A dirty branch (no heads) answers as upperBound too.
        expect(branchBound(dirty, probe)).toBe(upperBound(keys, probe));
      }
    }
  });
});

// A dirty copy of a decoded leaf keeps the page's keys as offsets into its copy of the page, and
// a writer then inserts keys as strings among them: every answer must be the one a plain sorted
// array of strings (compared by V8) gives, and the page it encodes to must hold the same entries.
function expectLeafHolds(leaf: LeafNode, keys: string[], values: Map<string, string>, rand: () => number): void {
  expect(leafKeyCount(leaf)).toBe(keys.length);
  expect(leafKeyList(leaf)).toStrictEqual(keys);
  for (let i = 0; i < keys.length; i++) {
    expect(leafKeyAt(leaf, i)).toBe(keys[i]);
    expect(leafKeyBytes(leaf, i).equals(Buffer.from(keys[i]!, 'latin1'))).toBe(true);
    expect(Buffer.from(leafValueAt(leaf, i) as Buffer | string).toString('latin1')).toBe(values.get(keys[i]!));
  }
  for (let p = 0; p < 40; p++) {
    const probe = rand() < 0.3 && keys.length > 0 ? keys[randomInt(rand, 0, keys.length - 1)]! : randomKey(rand);
    expect(leafBound(leaf, probe, false)).toBe(lowerBound(keys, probe));
    expect(leafBound(leaf, probe, true)).toBe(upperBound(keys, probe));
    const i = lowerBound(keys, probe);
    expect(leafKeyIs(leaf, i, probe)).toBe(keys[i] === probe);
    for (let j = 0; j < keys.length; j++) expect(Math.sign(compareLeafKey(leaf, j, probe))).toBe(keys[j]! < probe ? -1 : keys[j]! > probe ? 1 : 0);
  }
}

describe('dirty copies of decoded leaves', () => {
  it('keep inherited keys in their copy of the page and answer as a sorted array of strings, mixed with inserted keys', () => {
    const rand = seededRandom(11);
    let slabBytes = 0;
    const copies = new PageCopies((bytes) => (slabBytes += bytes));
    for (let round = 0; round < 200; round++) {
      const keys = [...new Set(Array.from({ length: randomInt(rand, 0, 60) }, () => randomKey(rand)))].sort();
      const values = new Map(keys.map((k) => [k, `v${k}`]));
      const page = Buffer.alloc(PAGE_SIZE);
      encodeNode(newLeaf(keys, keys.map((k) => values.get(k)!), 1), page);
      const slabBefore = slabBytes;
      const copy = cloneNode(decodeNode(page, 7), 2, copies) as LeafNode;
      // No string per inherited key: offsets only.
      expect(copy.keys.every((k) => typeof k === 'number')).toBe(true);
      // The dirty budget counts them as two array slots each, not as strings; the copy of the page
      // counts with the slab it was carved from (told to the store when the slab was allocated).
      expect(dirtyNodeBytes(copy)).toBe(256 + 200 + 32 * keys.length);
      if (slabBytes > slabBefore) expect(slabBytes - slabBefore).toBeGreaterThanOrEqual(copy.packed!.length);
      expect(copy.packed!.buffer.byteLength).toBeLessThanOrEqual(256 * 1024);
      expectLeafHolds(copy, keys, values, rand);
      // The page the copy came from may be reused: the copy must not depend on it.
      page.fill(0xaa);
      expectLeafHolds(copy, keys, values, rand);

      // A writer's inserts and replacements, as BTree.put makes them.
      const expected = [...keys];
      for (let n = randomInt(rand, 0, 20); n > 0; n--) {
        const key = randomKey(rand);
        const value = `w${round}.${n}`;
        const i = leafBound(copy, key, false);
        if (leafKeyIs(copy, i, key)) {
          copy.values[i] = value;
        } else {
          copy.keys.splice(i, 0, key);
          copy.values.splice(i, 0, value);
          expected.splice(lowerBound(expected, key), 0, key);
        }
        values.set(key, value);
      }
      expectLeafHolds(copy, expected, values, rand);
      // A copy of the copy in a later epoch (its own `packed`), and the page the mixed leaf encodes to.
      expectLeafHolds(cloneNode(copy, 3, copies) as LeafNode, expected, values, rand);
      const written = Buffer.alloc(PAGE_SIZE);
      encodeNode(newLeaf(copy.keys, copy.values, 4, copy.packed), written);
      expectLeafHolds(decodeNode(written, 8) as LeafNode, expected, values, rand);
    }
  });
});

describe('PageCopies', () => {
  it('counts every slab as it allocates it, grows them within a generation, and never shares one across a restart', () => {
    const slabs: number[] = [];
    const copies = new PageCopies((bytes) => slabs.push(bytes));
    const page = Buffer.alloc(PAGE_SIZE, 7);
    const first = Array.from({ length: 40 }, () => copies.copy(page, 6000));
    // 16 KiB, then doubling up to 256 KiB: a store that copies a page or two holds a small slab.
    expect(slabs.slice(0, 5)).toEqual([16 * 1024, 32 * 1024, 64 * 1024, 128 * 1024, 256 * 1024]);
    expect(Math.max(...slabs)).toBe(256 * 1024);
    // Everything carved is inside what was counted.
    expect(slabs.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(40 * 6000);
    expect(first.every((c) => c.length === 6000 && c[0] === 7 && c[5999] === 7)).toBe(true);
    const counted = slabs.length;
    copies.restart();
    const next = copies.copy(page, 100);
    // A new generation starts a new (small) slab: no earlier copy keeps it alive, nor it them.
    expect(slabs.length).toBe(counted + 1);
    expect(slabs[counted]).toBe(16 * 1024);
    expect(first.some((c) => c.buffer === next.buffer)).toBe(false);
  });
});
