import { cpSync, existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  WAL_FRAME_HEADER_SIZE,
  WAL_FRAME_SYNCED_OFFSET,
  WAL_MAGIC,
  WAL_MAGIC_OFFSET,
  WAL_FIRST_LSN_OFFSET,
  WAL_SEGMENT_HEADER_SIZE,
  WAL_V1_FRAME_HEADER_SIZE,
  WAL_VERSION,
  WAL_VERSION_1,
  WAL_VERSION_OFFSET,
  WalWriter,
  checksum32,
  initChecksum,
  listSegments,
  recoverWal,
  segmentName,
} from '../../engine/storage/index.js';
// The real frame encoder (not part of the storage module's face): tests build frames exactly as
// the writer does, with the syncedThrough a given crash state would have left in them.
import { frameRecord } from '../../engine/storage/wal-segment.js';
import { TenantStore } from '../../engine/tenant/index.js';
import { randomBytes, seededRandom } from '../helpers/random.js';
import { dirsRemovedAfterEach } from '../helpers/temp-dir.js';
import { key, storeOptions, value } from '../helpers/store-fixture.js';

const newDir = dirsRemovedAfterEach();
beforeAll(() => initChecksum());

const options = storeOptions();
const packr = new Packr({ useRecords: false });
const lsnOf = (payload: Buffer) => (packr.unpack(payload) as { lsn: number }).lsn;

interface Frame {
  pos: number;
  length: number;
  synced: number;
  payload: Buffer;
}

/** The version 2 frames of a sound segment, in order. */
function parseFrames(bytes: Buffer): Frame[] {
  const frames: Frame[] = [];
  for (let pos = WAL_SEGMENT_HEADER_SIZE; pos < bytes.length; ) {
    const length = bytes.readUInt32LE(pos);
    const payload = Buffer.from(bytes.subarray(pos + WAL_FRAME_HEADER_SIZE, pos + WAL_FRAME_HEADER_SIZE + length));
    frames.push({ pos, length, synced: bytes.readUInt32LE(pos + WAL_FRAME_SYNCED_OFFSET), payload });
    pos += WAL_FRAME_HEADER_SIZE + length;
  }
  return frames;
}

function frameEnd(frame: Frame): number {
  return frame.pos + WAL_FRAME_HEADER_SIZE + frame.length;
}

/** Records replayed by recoverWal, as lsns. */
async function replayedLsns(dir: string, checkpointLsn = 0): Promise<{ lsns: number[]; recovery: Awaited<ReturnType<typeof recoverWal>> }> {
  const lsns: number[] = [];
  const recovery = await recoverWal(dir, checkpointLsn, (lsn) => void lsns.push(lsn), lsnOf);
  return { lsns, recovery };
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function snapshot(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  for (const f of readdirSync(dir)) files.set(f, readFileSync(join(dir, f)));
  return files;
}

/**
 * A store that acknowledged `sequential` batches one at a time, then `burst` batches written
 * concurrently, copied while open (what a crash right now leaves). Batch i puts key(i) in 'a'.
 */
async function crashedStore(sequential: number, burst: number, extra: { walSegmentBytes?: number } = {}): Promise<{ dir: string; wal: string; frames: Frame[] }> {
  const live = newDir('holes-live');
  const copy = newDir('holes-crashed');
  const store = await TenantStore.open(live, { ...options, ...extra });
  for (let i = 1; i <= sequential; i++) await store.write([{ op: 'put', tree: 'a', key: key(i), value: value(i) }]);
  await Promise.all(range(sequential + 1, sequential + burst).map((i) => store.write([{ op: 'put', tree: 'a', key: key(i), value: value(i) }])));
  cpSync(live, copy, { recursive: true });
  await store.close();
  const segments = listSegments(copy);
  const wal = segments[segments.length - 1]!.path;
  return { dir: copy, wal, frames: parseFrames(readFileSync(wal)) };
}

/**
 * Re-encodes every frame with the syncedThrough that `stamp` gives it (same sizes, so offsets
 * hold): the bytes the writer would have produced had its groups formed at those sync points.
 */
function restamp(bytes: Buffer, frames: Frame[], stamp: (index: number) => number): void {
  frames.forEach((f, i) => frameRecord(f.payload, stamp(i)).copy(bytes, f.pos));
}

type Damage = 'zeros' | 'garbage';

function damage(bytes: Buffer, from: number, to: number, how: Damage): void {
  if (how === 'zeros') bytes.fill(0, from, to);
  else randomBytes(seededRandom(from), to - from).copy(bytes, from);
}

// Layouts of the 18 frames used below: 10 acknowledged one by one (each frame's syncedThrough is
// its own offset, as the writer stamps it), then 8 more either as one group formed once the 10
// were synced, or as two groups of 4 where the second formed after the first had synced.
type Layout = 'one group' | 'two groups';

function stampFor(frames: Frame[], layout: Layout): (i: number) => number {
  return (i) => {
    if (i < 10) return frames[i]!.pos;
    if (layout === 'two groups' && i >= 14) return frames[14]!.pos;
    return frames[10]!.pos;
  };
}

async function laidOut(layout: Layout): Promise<{ dir: string; wal: string; frames: Frame[]; bytes: Buffer }> {
  const { dir, wal, frames } = await crashedStore(10, 8);
  expect(frames).toHaveLength(18);
  const bytes = readFileSync(wal);
  restamp(bytes, frames, stampFor(frames, layout));
  return { dir, wal, frames, bytes };
}

describe('WAL frames record how far the log was synced', () => {
  it('stamps each group with the offset of the last completed fdatasync', async () => {
    const dir = newDir('stamps');
    const writer = WalWriter.open(dir, { fsync: 'batch', segmentBytes: 1 << 20 }, [], undefined, 1);
    for (let lsn = 1; lsn <= 5; lsn++) await writer.append(lsn, packr.pack({ lsn, ops: [] }));
    // Many writers at once: group commit puts several frames in one group.
    await Promise.all(range(6, 45).map((lsn) => writer.append(lsn, packr.pack({ lsn, ops: [] }))));
    await writer.close();
    const frames = parseFrames(readFileSync(join(dir, segmentName(1))));
    expect(frames).toHaveLength(45);
    // Acknowledged one at a time: every earlier byte was synced when the next group formed.
    for (const f of frames.slice(0, 6)) expect(f.synced).toBe(f.pos);
    for (let i = 1; i < frames.length; i++) {
      expect(frames[i]!.synced).toBeLessThanOrEqual(frames[i]!.pos);
      expect(frames[i]!.synced).toBeGreaterThanOrEqual(frames[i - 1]!.synced);
    }
    expect(frames.some((f) => f.synced < f.pos)).toBe(true);

    // Reopened, the writer syncs the tail it continues, so its next frame vouches for all of it.
    const { recovery } = await replayedLsns(dir);
    const reopened = WalWriter.open(dir, { fsync: 'batch', segmentBytes: 1 << 20 }, recovery.segments, recovery.tail, 46);
    await reopened.append(46, packr.pack({ lsn: 46, ops: [] }));
    await reopened.close();
    const after = parseFrames(readFileSync(join(dir, segmentName(1))));
    expect(after[45]!.synced).toBe(frameEnd(frames[44]!));
  });

  it("never claims anything beyond the header in fsync mode 'off'", async () => {
    const dir = newDir('stamps-off');
    const writer = WalWriter.open(dir, { fsync: 'off', segmentBytes: 1 << 20 }, [], undefined, 1);
    for (let lsn = 1; lsn <= 5; lsn++) await writer.append(lsn, packr.pack({ lsn, ops: [] }));
    await writer.close();
    const frames = parseFrames(readFileSync(join(dir, segmentName(1))));
    expect(frames.map((f) => f.synced)).toEqual(new Array<number>(5).fill(WAL_SEGMENT_HEADER_SIZE));
  });

  it('starts a rotated segment synced through its header', async () => {
    const dir = newDir('stamps-rotate');
    const writer = WalWriter.open(dir, { fsync: 'batch', segmentBytes: 1 << 20 }, [], undefined, 1);
    for (let lsn = 1; lsn <= 3; lsn++) await writer.append(lsn, packr.pack({ lsn, ops: [] }));
    await writer.rotate(4);
    for (let lsn = 4; lsn <= 5; lsn++) await writer.append(lsn, packr.pack({ lsn, ops: [] }));
    await writer.close();
    const frames = parseFrames(readFileSync(join(dir, segmentName(4))));
    expect(frames.map((f) => f.synced)).toEqual([WAL_SEGMENT_HEADER_SIZE, frames[1]!.pos]);
  });
});

describe('a power cut that lands a WAL group out of order', () => {
  it.each<[string, Layout, number, Damage]>([
    ['the first frame of the last group is zeros', 'one group', 10, 'zeros'],
    ['a middle frame of the last group is zeros', 'one group', 13, 'zeros'],
    ['the last-but-one frame of the last group is garbage', 'one group', 16, 'garbage'],
    ['a frame of the second of two unsynced groups is zeros', 'two groups', 15, 'zeros'],
  ])('opens when %s: keeps every record before the hole, drops the rest, truncates there', async (_what, layout, hole, how) => {
    const { dir, wal, frames, bytes } = await laidOut(layout);
    damage(bytes, frames[hole]!.pos, frameEnd(frames[hole]!), how);
    writeFileSync(wal, bytes);
    const storeDir = newDir('holes-store');
    cpSync(dir, storeDir, { recursive: true });

    // The log itself: records 1..hole replayed (frame i holds lsn i + 1), cut at the hole.
    const { lsns, recovery } = await replayedLsns(dir);
    expect(lsns).toEqual(range(1, hole));
    expect(recovery.lastLsn).toBe(hole);
    expect(recovery.tail).toMatchObject({ path: wal, size: frames[hole]!.pos, lastLsn: hole, version: WAL_VERSION });
    expect(statSync(wal).size).toBe(frames[hole]!.pos);
    expect(readFileSync(wal).equals(bytes.subarray(0, frames[hole]!.pos))).toBe(true);
    // Cut once: a second recovery finds a clean log.
    expect((await replayedLsns(dir)).lsns).toEqual(range(1, hole));
    expect(statSync(wal).size).toBe(frames[hole]!.pos);

    // Through a store: the records are there, nothing after the hole is, and the log continues.
    const store = await TenantStore.open(storeDir, options);
    expect(store.count('a')).toBe(hole);
    for (const i of range(1, hole)) expect(store.get('a', key(i))?.toString()).toBe(value(i).toString());
    for (const i of range(hole + 1, 18)) expect(store.get('a', key(i))).toBeUndefined();
    expect(await store.write([{ op: 'put', tree: 'a', key: key(100), value: value(100) }])).toEqual({ lsn: hole + 1 });
    const crashedAgain = newDir('holes-again');
    cpSync(storeDir, crashedAgain, { recursive: true });
    await store.close();
    for (const d of [storeDir, crashedAgain]) {
      const again = await TenantStore.open(d, options);
      expect(again.count('a')).toBe(hole + 1);
      expect(again.get('a', key(100))?.toString()).toBe(value(100).toString());
      expect(await again.write([{ op: 'put', tree: 'a', key: key(101), value: value(101) }])).toEqual({ lsn: hole + 2 });
      await again.close();
    }
  });

  it('resynchronises past further bad regions and still cuts when nothing after the hole was synced', async () => {
    const { dir, wal, frames, bytes } = await laidOut('one group');
    damage(bytes, frames[11]!.pos, frameEnd(frames[11]!), 'zeros');
    damage(bytes, frames[13]!.pos + 3, frameEnd(frames[14]!) - 5, 'garbage');
    writeFileSync(wal, bytes);
    const { lsns } = await replayedLsns(dir);
    expect(lsns).toEqual(range(1, 11));
    expect(statSync(wal).size).toBe(frames[11]!.pos);
  });
});

describe('a bad WAL frame in data that was synced', () => {
  it.each<[string, Layout, number[], Damage | 'flip synced', number]>([
    ['an acknowledged record is zeros', 'one group', [5], 'zeros', 5],
    ['the last acknowledged record is garbage before an unsynced group', 'one group', [9], 'garbage', 9],
    ['a bit of syncedThrough flips in an acknowledged record', 'one group', [5], 'flip synced', 5],
    ['a frame of a group that later frames declare synced is zeros', 'two groups', [11], 'zeros', 11],
    // The record proving frame 8 was synced is only found by resynchronising past more damage.
    ['a record is zeros and the next ones garbage', 'one group', [8, 9], 'garbage', 8],
  ])('refuses to open when %s, naming the file and offset, and changes nothing', async (_what, layout, damaged, how, hole) => {
    const { dir, wal, frames, bytes } = await laidOut(layout);
    for (const i of damaged) {
      if (how === 'flip synced') bytes[frames[i]!.pos + WAL_FRAME_SYNCED_OFFSET] = bytes[frames[i]!.pos + WAL_FRAME_SYNCED_OFFSET]! ^ 0x04;
      else damage(bytes, frames[i]!.pos, frameEnd(frames[i]!), i === hole ? 'zeros' : how);
    }
    writeFileSync(wal, bytes);
    const before = snapshot(dir);
    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(TenantStore.open(dir, options)).rejects.toMatchObject({
        code: 'CORRUPTION',
        message: expect.stringContaining(`${wal}: corrupt WAL record at offset ${frames[hole]!.pos} `),
        details: { file: wal, offset: frames[hole]!.pos },
      });
      expect(snapshot(dir)).toEqual(before);
    }
  });

  it('refuses to open when a segment before the last has a bad frame, even with nothing after it', async () => {
    const { dir } = await crashedStore(40, 0, { walSegmentBytes: 600 });
    const segments = listSegments(dir);
    expect(segments.length).toBeGreaterThan(2);
    const closed = segments[1]!.path;
    const bytes = readFileSync(closed);
    const last = parseFrames(bytes).at(-1)!;
    bytes.fill(0, last.pos);
    writeFileSync(closed, bytes);
    const before = snapshot(dir);
    await expect(TenantStore.open(dir, options)).rejects.toMatchObject({
      code: 'CORRUPTION',
      message: expect.stringContaining(`${closed}: corrupt WAL record at offset ${last.pos} `),
      details: { file: closed, offset: last.pos },
    });
    expect(snapshot(dir)).toEqual(before);
  });
});

/** The same segment in the version 1 layout: [u32 length][u32 xxhash32(length ++ payload)][payload]. */
function toVersion1(frames: Frame[], firstLsn: number): Buffer {
  const header = Buffer.alloc(WAL_SEGMENT_HEADER_SIZE);
  header.writeUInt32LE(WAL_MAGIC, WAL_MAGIC_OFFSET);
  header.writeUInt16LE(WAL_VERSION_1, WAL_VERSION_OFFSET);
  header.writeDoubleLE(firstLsn, WAL_FIRST_LSN_OFFSET);
  const parts = [header];
  for (const f of frames) {
    const frame = Buffer.alloc(WAL_V1_FRAME_HEADER_SIZE + f.length);
    frame.writeUInt32LE(f.length, 0);
    f.payload.copy(frame, WAL_V1_FRAME_HEADER_SIZE);
    const hashed = Buffer.concat([frame.subarray(0, 4), f.payload]);
    frame.writeUInt32LE(checksum32(hashed), 4);
    parts.push(frame);
  }
  return Buffer.concat(parts);
}

function v1Starts(frames: Frame[]): number[] {
  let pos = WAL_SEGMENT_HEADER_SIZE;
  return frames.map((f) => {
    const at = pos;
    pos += WAL_V1_FRAME_HEADER_SIZE + f.length;
    return at;
  });
}

describe('WAL format version 1 segments', () => {
  async function v1Store(n: number): Promise<{ dir: string; wal: string; frames: Frame[]; bytes: Buffer }> {
    const { dir, wal, frames } = await crashedStore(n, 0);
    const bytes = toVersion1(frames, 1);
    writeFileSync(wal, bytes);
    return { dir, wal, frames, bytes };
  }

  it('are replayed, and new records go to a new version 2 segment that follows them', async () => {
    const { dir, wal, bytes } = await v1Store(12);
    const storeDir = newDir('v1-store');
    cpSync(dir, storeDir, { recursive: true });

    const { lsns, recovery } = await replayedLsns(dir);
    expect(lsns).toEqual(range(1, 12));
    expect(recovery.tail).toMatchObject({ path: wal, lastLsn: 12, version: WAL_VERSION_1, size: bytes.length });
    const writer = WalWriter.open(dir, { fsync: 'batch', segmentBytes: 1 << 20 }, recovery.segments, recovery.tail, 13);
    await writer.append(13, packr.pack({ lsn: 13, ops: [] }));
    await writer.close();
    expect(readFileSync(wal).equals(bytes)).toBe(true);
    const fresh = join(dir, segmentName(13));
    expect(readFileSync(fresh).readUInt16LE(WAL_VERSION_OFFSET)).toBe(WAL_VERSION);
    const both = await replayedLsns(dir);
    expect(both.lsns).toEqual(range(1, 13));
    expect(both.recovery.segments.map((s) => s.path)).toEqual([wal, fresh]);
    expect(both.recovery.tail).toMatchObject({ path: fresh, lastLsn: 13, version: WAL_VERSION });

    const store = await TenantStore.open(storeDir, options);
    expect(store.count('a')).toBe(12);
    expect(await store.write([{ op: 'put', tree: 'a', key: key(13), value: value(13) }])).toEqual({ lsn: 13 });
    await store.close();
    const again = await TenantStore.open(storeDir, options);
    expect(again.count('a')).toBe(13);
    await again.close();
  });

  it('replace an empty version 1 tail at the next lsn instead of treating it as an older segment', async () => {
    const dir = newDir('v1-empty');
    writeFileSync(join(dir, segmentName(1)), toVersion1([], 1));
    const { recovery } = await replayedLsns(dir);
    expect(recovery.tail).toMatchObject({ lastLsn: 0, version: WAL_VERSION_1 });
    const writer = WalWriter.open(dir, { fsync: 'batch', segmentBytes: 1 << 20 }, recovery.segments, recovery.tail, 1);
    expect(await writer.deleteSegmentsThrough(10)).toBe(0);
    await writer.append(1, packr.pack({ lsn: 1, ops: [] }));
    await writer.close();
    expect(existsSync(join(dir, segmentName(1)))).toBe(true);
    const after = await replayedLsns(dir);
    expect(after.lsns).toEqual([1]);
    expect(after.recovery.tail).toMatchObject({ version: WAL_VERSION });
  });

  it('keep the old rule: a bad frame followed by a valid one is corruption', async () => {
    const { dir, wal, frames, bytes } = await v1Store(10);
    const starts = v1Starts(frames);
    bytes.fill(0, starts[4]!, starts[5]!);
    writeFileSync(wal, bytes);
    await expect(TenantStore.open(dir, options)).rejects.toMatchObject({
      code: 'CORRUPTION',
      details: { file: wal, offset: starts[4]! },
    });
    expect(readFileSync(wal).equals(bytes)).toBe(true);
  });

  it('cut a torn last record', async () => {
    const { dir, wal, frames, bytes } = await v1Store(10);
    const starts = v1Starts(frames);
    writeFileSync(wal, Buffer.concat([bytes.subarray(0, starts[9]! + 5), Buffer.alloc(100)]));
    const { lsns } = await replayedLsns(dir);
    expect(lsns).toEqual(range(1, 9));
    expect(statSync(wal).size).toBe(starts[9]!);
  });
});

describe('recoverWal', () => {
  it('awaits an onRecord that returns a promise before reading on', async () => {
    const { dir } = await crashedStore(6, 0);
    const events: string[] = [];
    const recovery = await recoverWal(
      dir,
      0,
      async (lsn) => {
        events.push(`start ${lsn}`);
        await new Promise((resolve) => setImmediate(resolve));
        events.push(`end ${lsn}`);
      },
      lsnOf,
    );
    expect(recovery.replayedRecords).toBe(6);
    expect(events).toEqual(range(1, 6).flatMap((lsn) => [`start ${lsn}`, `end ${lsn}`]));
  });
});
