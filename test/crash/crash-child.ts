// Child process for the crash suites. It writes batches, prints "ack <writer> <seq>" for each
// acknowledged one, and is SIGKILLed by its parent (or by an armed failpoint) at any moment.
// Usage: node --import tsx crash-child.ts <mode> <dir> <fsync> [writers]
import { PageCache, type TreeNode } from '../../engine/storage/index.js';
import { TenantStore, type BatchOp } from '../../engine/tenant/index.js';

const [mode, dir, fsync, writersArg] = process.argv.slice(2) as [string, string, 'batch' | 'always' | 'off', string | undefined];

export function batchFor(writer: number, seq: number): BatchOp[] {
  const id = `w${writer}-${String(seq).padStart(7, '0')}`;
  const value = Buffer.from(`${id}:`.repeat(1 + (seq % 7)));
  const ops: BatchOp[] = [
    { op: 'put', tree: 'a', key: Buffer.from(id), value },
    { op: 'put', tree: 'b', key: Buffer.from(id), value },
    { op: 'put', tree: 'counter', key: Buffer.from(`w${writer}`), value: Buffer.from(String(seq)) },
    { op: 'put', tree: 'tmp', key: Buffer.from(id), value: Buffer.from('x') },
  ];
  if (seq > 1) ops.push({ op: 'delete', tree: 'tmp', key: Buffer.from(`w${writer}-${String(seq - 1).padStart(7, '0')}`) });
  // Every 50th batch carries a value large enough for overflow pages.
  if (seq % 50 === 0) ops.push({ op: 'put', tree: 'big', key: Buffer.from(id), value: Buffer.alloc(20_000, seq % 251) });
  return ops;
}

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

async function main(): Promise<void> {
  const cache = new PageCache<TreeNode>(4 * 1024 * 1024);
  // Small thresholds so checkpoints, segment rotations and compactions all happen mid-run.
  const store = await TenantStore.open(dir, {
    cache,
    fsync,
    walSegmentBytes: 64 * 1024,
    checkpointWalBytes: 128 * 1024,
    checkpointIntervalMs: 200,
    compactGarbageRatio: 0.3,
    compactMinBytes: 64 * 1024,
  });
  say('ready');
  if (mode === 'writer') {
    const writers = Number(writersArg ?? 8);
    await Promise.all(
      Array.from({ length: writers }, async (_, w) => {
        let seq = Number(store.get('counter', Buffer.from(`w${w}`))?.toString() ?? 0);
        for (;;) {
          seq++;
          await store.write(batchFor(w, seq));
          say(`ack ${w} ${seq}`);
        }
      }),
    );
  } else if (mode === 'phase1') {
    for (let seq = 1; seq <= 300; seq++) {
      await store.write(batchFor(0, seq));
      say(`ack 0 ${seq}`);
    }
    await store.close();
    say('closed');
  } else if (mode === 'phase2') {
    // Overwrites and deletes make garbage, then a checkpoint and a compaction run while
    // writes continue; the armed failpoint kills the process somewhere inside them.
    let seq = Number(store.get('counter', Buffer.from('w0'))?.toString() ?? 0);
    const pending: Array<Promise<unknown>> = [];
    for (let i = 0; i < 200; i++) {
      seq++;
      await store.write(batchFor(0, seq));
      say(`ack 0 ${seq}`);
    }
    await store.write(Array.from({ length: 150 }, (_, i) => ({ op: 'delete' as const, tree: 'a', key: Buffer.from(`w0-${String(i + 1).padStart(7, '0')}`) })));
    say('deleted 1 150');
    const maintenance = store.checkpoint().then(() => store.compact());
    for (let i = 0; i < 50; i++) {
      seq++;
      const s = seq;
      pending.push(store.write(batchFor(0, s)).then(() => say(`ack 0 ${s}`)));
    }
    await Promise.all([maintenance, ...pending]);
    await store.checkpoint();
    say('maintenance-done');
    await store.close();
    say('closed');
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`crash-child failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(3);
});
