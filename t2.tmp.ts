import { docsAggregate, docsInsert } from './engine/docs/index.js';
import { PageCache, type TreeNode } from './engine/storage/index.js';
import { TenantStore } from './engine/tenant/index.js';
import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os'; import { join } from 'node:path';
const store = await TenantStore.open(mkdtempSync(join(tmpdir(), 't2-')), { cache: new PageCache<TreeNode>(1 << 24) });
await docsInsert(store, 'c', [{ _id: 1, k: 0, s: 'NaN' }]).durable;
for (const e of [{ $toDouble: '$s' }, { $multiply: ['$k', -1] }, { $atan2: [0, { $multiply: ['$k', -1] }] }, { $ln: 0 }, { $divide: [1, 0] }, { $toString: { $multiply: ['$k', -1] } }, { $convert: { input: 'NaN', to: 'double' } }, { $toDouble: 'Infinity' }, {$toDouble: '-Infinity'}]) {
  try { const r = await docsAggregate(store, 'c', [{ $project: { v: e } }]); const v = r.documents[0]!['v']; console.log(JSON.stringify(e), v, Object.is(v, -0)); } catch (err) { console.log(JSON.stringify(e), 'ERR', (err as Error).message); }
}
await store.close();
