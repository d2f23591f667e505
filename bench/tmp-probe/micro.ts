import { performance } from 'node:perf_hooks';
import { makeQueryDocument } from '../lib/documents.js';
import { encodeDocument } from '../../engine/docs/doc-codec.js';
import { documentFromJson } from '../../engine/docs/validate.js';
import { Packr } from 'msgpackr';
const packr = new Packr({ useRecords: false });
const docs = Array.from({ length: 10000 }, (_, i) => makeQueryDocument(i));
function bench(name: string, f: (d: any) => unknown) {
  for (let r = 0; r < 3; r++) { for (const d of docs) f(d); }
  const t = performance.now(); let x: unknown;
  for (let r = 0; r < 20; r++) for (const d of docs) x = f(d);
  console.log(name, ((performance.now() - t) / (20 * docs.length) * 1000).toFixed(3), 'µs');
}
bench('documentFromJson', (d) => documentFromJson(d, { maxDepth: 100 }));
bench('encodeDocument', (d) => encodeDocument(d));
bench('packr.pack', (d) => packr.pack(d));
bench('JSON.stringify', (d) => JSON.stringify(d));
console.log(JSON.stringify(docs[0]));
import { isPlainObject } from '../../engine/docs/values.js';
function hasProtoKey(v: unknown): boolean {
  if (Array.isArray(v)) return v.some(hasProtoKey);
  if (!isPlainObject(v)) return false;
  for (const key of Object.keys(v)) if (key === '__proto__' || hasProtoKey((v as any)[key])) return true;
  return false;
}
function hasProtoKey2(v: unknown): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (Array.isArray(v)) { for (let i = 0; i < v.length; i++) if (hasProtoKey2(v[i])) return true; return false; }
  if (!isPlainObject(v)) return false;
  for (const key in v) if (key === '__proto__' || hasProtoKey2((v as any)[key])) return true;
  return false;
}
bench('hasProtoKey', (d) => hasProtoKey(d));
bench('hasProtoKey2', (d) => hasProtoKey2(d));
bench('pack+copy', (d) => { const b = packr.pack(d); const o = Buffer.allocUnsafe(b.length + 1); o[0] = 1; b.copy(o, 1); return o; });
