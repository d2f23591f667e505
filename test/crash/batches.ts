// The batches the crash child writes, shared with tests that write the same data in-process
// (this file has no side effects; crash-child.ts runs its main() on import).
import type { BatchOp } from '../../engine/tenant/index.js';

/**
 * Batch `seq` of `writer`: its key in trees a and b, the writer's counter, a tmp key replacing
 * the previous batch's (so a half-applied batch shows), and every 50th batch an overflow value.
 */
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
