// String order shared by the documents benchmark and its PostgreSQL peer (distinct answers).
/** Strings by code point, as BSON orders them (JavaScript's < compares UTF-16 units). */
export function byCodePoint(a: string, b: string): number {
  for (let i = 0; i < a.length && i < b.length; ) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
  }
  return a.length - b.length;
}
