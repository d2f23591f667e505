import { Packr } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { WAL_FRAME_HEADER_SIZE } from '../../engine/storage/index.js';
import type { BatchOp } from '../../engine/tenant/index.js';
import { recordOp, walRecordFrame } from '../../engine/tenant/wal-record.js';
import { randomBytes, randomInt, seededRandom } from '../helpers/random.js';

// The WAL record encoder writes, by hand, the bytes msgpackr's pack() gives for the record object
// recovery decodes: held equal byte for byte over every size class of every field.

const packr = new Packr({ useRecords: false });

function randomName(rand: () => number): string {
  const lengths = [1, 8, 31, 32, 255, 256, 300];
  const n = lengths[randomInt(rand, 0, lengths.length - 1)]!;
  const alphabet = ['a', 'b', ':', 'é', '日', '😀'];
  let s = '';
  while (Buffer.byteLength(s) < n) s += alphabet[randomInt(rand, 0, alphabet.length - 1)];
  return s;
}

function randomBinary(rand: () => number): Uint8Array {
  // Every size class of bin (8, 16 and 32-bit lengths), the large ones rarely (they are slow to make).
  const lengths = rand() < 0.03 ? [65535, 65536, 70000] : [0, 1, 255, 256, 1000];
  const bytes = randomBytes(rand, lengths[randomInt(rand, 0, lengths.length - 1)]!);
  // Plain Uint8Arrays (views into a larger buffer) as well as Buffers.
  return rand() < 0.3 ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
}

function randomOps(rand: () => number): BatchOp[] {
  const counts = [0, 1, 15, 16, 300];
  const n = counts[randomInt(rand, 0, counts.length - 1)]!;
  const trees = [randomName(rand), randomName(rand), 'c:1:docs'];
  return Array.from({ length: n }, (): BatchOp => {
    const tree = trees[randomInt(rand, 0, trees.length - 1)]!;
    const r = rand();
    if (r < 0.1) return { op: 'dropTree', tree };
    if (r < 0.3) return { op: 'delete', tree, key: randomBinary(rand) };
    return { op: 'put', tree, key: randomBinary(rand), value: randomBinary(rand) };
  });
}

describe('walRecordFrame', () => {
  it('lays out the bytes msgpackr packs for the record, in a frame of the right length', () => {
    const rand = seededRandom(5);
    const lsns = [1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 3];
    for (let i = 0; i < 120; i++) {
      const lsn = lsns[i % lsns.length]!;
      const ops = randomOps(rand);
      const expected = packr.pack({ lsn, ops: ops.map(recordOp) });
      const frame = walRecordFrame(lsn, ops);
      expect(frame.readUInt32LE(0)).toBe(expected.length);
      expect(frame.length).toBe(WAL_FRAME_HEADER_SIZE + expected.length);
      expect(frame.subarray(WAL_FRAME_HEADER_SIZE).equals(expected), `lsn ${lsn}, ${ops.length} ops`).toBe(true);
    }
  });

  it('decodes to the batch', () => {
    const ops: BatchOp[] = [
      { op: 'put', tree: 'c:1:docs', key: Buffer.from('k'), value: Buffer.from('v') },
      { op: 'delete', tree: 'idx', key: Buffer.from([0, 255]) },
      { op: 'dropTree', tree: 'gone' },
    ];
    const decoded = packr.unpack(walRecordFrame(300, ops).subarray(WAL_FRAME_HEADER_SIZE)) as { lsn: number; ops: unknown[] };
    expect(decoded).toStrictEqual({
      lsn: 300,
      ops: [
        { op: 1, tree: 'c:1:docs', key: Buffer.from('k'), value: Buffer.from('v') },
        { op: 2, tree: 'idx', key: Buffer.from([0, 255]) },
        { op: 3, tree: 'gone' },
      ],
    });
  });
});
