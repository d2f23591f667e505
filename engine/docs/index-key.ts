/**
 * Index keys: document values encoded so that plain byte order is MongoDB's BSON order
 * (compareValues), as tuples of the storage key codec.
 *
 * One value is the tuple `[bracket, payload]`: the bracket is its TYPE_BRACKET (so types order as
 * the manual says), the payload orders values within it: numbers and dates as numbers (NaN
 * first, as the codec puts it), strings by code point (the codec's UTF-8 byte order), booleans
 * false < true, objects as `[bracket, name, value]` triples field by field, arrays element by
 * element (a prefix first, as BSON). Null and missing are `[null]`; the key of an empty array in a
 * multikey index is `[EMPTY_ARRAY]`, below null, where MongoDB's `undefined` key sorts.
 *
 * Keys are bounded (a tree key is at most MAX_KEY_BYTES): a string past STRING_PREFIX_CHARS keeps
 * its prefix and a `true` marker, and an object or array whose encoding passes CONTAINER_BYTES
 * (or nests deeper than CONTAINER_DEPTH) becomes `[bracket, true]`. Such keys are "lossy": order
 * is kept only up to ties, so a lossy index still finds a superset of the matches (the query
 * filters every candidate again) but no longer gives a sort order.
 *
 * A descending component is stored as a byte array holding its ascending encoding with every
 * byte complemented: the element encodings are prefix-free, so complementing reverses their
 * order exactly.
 */

import { fail } from '../errors.js';
import { encodeKey, MAX_KEY_BYTES, type KeyPart } from '../storage/index.js';
import { collectValues, parsePath } from './path.js';
import { getOwn, isPlainObject, MISSING, TYPE_BRACKET, typeBracket, type Doc } from './values.js';

/** The key of an empty array in a multikey index: below null. */
export const EMPTY_ARRAY_BRACKET = -1;

const STRING_PREFIX_CHARS = 200;
const CONTAINER_BYTES = 600;
const CONTAINER_DEPTH = 8;

/** The encoding of one value, and whether it had to be shortened. */
export interface Component {
  readonly part: KeyPart;
  readonly lossy: boolean;
  /** A lossy component's value encoded whole (for equality only: it may pass MAX_KEY_BYTES). */
  readonly whole?: KeyPart;
}

// `bounded`: undefined for values an index key shortens; unbounded, every value's whole encoding.
function exact(v: unknown, depth: number, bounded = true): KeyPart | undefined {
  const bracket = typeBracket(v);
  switch (bracket) {
    case TYPE_BRACKET.null:
      return [bracket];
    case TYPE_BRACKET.number:
      return [bracket, v as number];
    case TYPE_BRACKET.string:
      return bounded && (v as string).length > STRING_PREFIX_CHARS ? undefined : [bracket, v as string];
    case TYPE_BRACKET.bool:
      return [bracket, v as boolean];
    case TYPE_BRACKET.date:
      return [bracket, (v as Date).getTime()];
    case TYPE_BRACKET.object: {
      if (bounded && depth >= CONTAINER_DEPTH) return undefined;
      const fields: KeyPart[] = [];
      for (const [name, value] of Object.entries(v as Doc)) {
        const inner = exact(value, depth + 1, bounded);
        if (inner === undefined) return undefined;
        fields.push(typeBracket(value), name, inner);
      }
      return [bracket, fields];
    }
    case TYPE_BRACKET.array: {
      if (bounded && depth >= CONTAINER_DEPTH) return undefined;
      const items: KeyPart[] = [];
      for (const value of v as unknown[]) {
        const inner = exact(value, depth + 1, bounded);
        if (inner === undefined) return undefined;
        items.push(inner);
      }
      return [bracket, items];
    }
    default:
      return fail('INTERNAL', `cannot index a value of bracket ${bracket}`);
  }
}

/** The order-preserving encoding of one value (MISSING indexes as null). */
export function indexComponent(v: unknown): Component {
  if (v === MISSING || v === undefined) return { part: [TYPE_BRACKET.null], lossy: false };
  const part = exact(v, 0);
  if (part !== undefined && (typeof v !== 'object' || v === null || v instanceof Date || encodeKey([part]).length <= CONTAINER_BYTES)) {
    return { part, lossy: false };
  }
  const bracket = typeBracket(v);
  const whole = exact(v, 0, false)!;
  if (bracket === TYPE_BRACKET.string) return { part: [bracket, Array.from(v as string).slice(0, STRING_PREFIX_CHARS).join(''), true], lossy: true, whole };
  return { part: [bracket, true], lossy: true, whole };
}

/**
 * The component of an `_id` in a primary key or an index entry's suffix: exact at any length. An
 * id names one document, so it is never shortened as other values are (two ids sharing their
 * first STRING_PREFIX_CHARS characters once shared a key: the second insert was refused as a
 * duplicate and a find by one id returned the other). Ids are bounded (MAX_ID_BYTES), so the key
 * stays within MAX_KEY_BYTES.
 */
export function idComponent(id: unknown): Component {
  return typeof id === 'string' ? { part: [TYPE_BRACKET.string, id], lossy: false } : indexComponent(id);
}

/** The component an index stored before ids were kept exact gave an `_id` (see upgradeIdKeys). */
export function legacyIdComponent(id: unknown): Component {
  return indexComponent(id);
}

/** The component of the empty-array key of a multikey index. */
export const EMPTY_ARRAY_COMPONENT: Component = { part: [EMPTY_ARRAY_BRACKET], lossy: false };

/** One field of an index key pattern. */
export interface IndexField {
  readonly path: string;
  readonly direction: 1 | -1;
}

/** Complements every byte (in place) of a fresh buffer. */
function complement(bytes: Buffer): Buffer {
  for (let i = 0; i < bytes.length; i++) bytes[i] = ~bytes[i]! & 0xff;
  return bytes;
}

/** The key part a component takes in an index with `direction` on that field. */
export function directed(component: KeyPart, direction: 1 | -1): KeyPart {
  return direction === 1 ? component : complement(encodeKey([component]));
}

/** The index entries one document produces: key parts per entry (before the `_id` suffix). */
export interface DocumentKeys {
  readonly entries: KeyPart[][];
  /**
   * Per entry: undefined when its key holds its values whole, else the values encoded whole (what
   * tells two values apart that share a shortened key: a unique index compares these).
   */
  readonly wholes: Array<KeyPart[] | undefined>;
  /** Some field held an array: the index is multikey from now on. */
  readonly multikey: boolean;
  readonly lossy: boolean;
}

// True when an array lies on the way to the end of the path (the index is then multikey even if
// only one value is reached).
function pathCrossesArray(v: unknown, parts: readonly string[], i: number): boolean {
  if (i >= parts.length) return false;
  if (Array.isArray(v)) return true;
  if (!isPlainObject(v)) return false;
  const next = Object.hasOwn(v, parts[i]!) ? v[parts[i]!] : undefined;
  if (i === parts.length - 1) return false;
  return pathCrossesArray(next, parts, i + 1);
}

// Where along `parts` arrays are met (as path prefixes): fields that meet the same arrays share them.
function arrayLocations(doc: unknown, parts: readonly string[]): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown, i: number): void => {
    if (Array.isArray(v)) {
      out.add(parts.slice(0, i).join('.'));
      if (i < parts.length) for (const el of v) walk(el, i);
      return;
    }
    if (i >= parts.length || !isPlainObject(v)) return;
    walk(Object.hasOwn(v, parts[i]!) ? v[parts[i]!] : undefined, i + 1);
  };
  walk(doc, 0);
  return out;
}

/** Most entries one document may add to one index (MongoDB has no fixed bound; arrays this long in a compound index are a mistake). */
const MAX_ENTRIES_PER_DOCUMENT = 10_000;

/**
 * The keys of `doc` in an index over `fields`: one per combination of the values at each path
 * (an array contributes each element, an empty array the EMPTY_ARRAY key, a missing field null).
 * @throws VALIDATION_FAILED when two fields of one compound key are arrays (MongoDB's "cannot index parallel arrays"), or a key is too large
 */
export function documentKeys(doc: Doc, fields: readonly IndexField[]): DocumentKeys {
  return scalarKeys(doc, fields) ?? documentKeysByWalk(doc, fields);
}

// Parsed index paths: an index's few paths are split once, not once per document.
const PATHS = new Map<string, readonly string[]>();
const MAX_CACHED_PATHS = 1024;

function pathParts(path: string): readonly string[] {
  let parts = PATHS.get(path);
  if (parts === undefined) {
    if (PATHS.size >= MAX_CACHED_PATHS) PATHS.clear();
    parts = parsePath(path);
    PATHS.set(path, parts);
  }
  return parts;
}

const NOT_SCALAR: unique symbol = Symbol('not scalar');

// The one value a path gives an index when the way to it crosses no array and it is neither an
// array nor an object (MISSING when absent, or when the path runs through a scalar); NOT_SCALAR
// otherwise. collectValues yields exactly [that value] then, and no array is met.
function scalarAt(doc: Doc, parts: readonly string[]): unknown {
  let cur: unknown = doc;
  for (let i = 0; i < parts.length; i++) {
    if (!isPlainObject(cur)) return MISSING;
    cur = getOwn(cur, parts[i]!);
    if (cur === MISSING) return MISSING;
    if (Array.isArray(cur)) return NOT_SCALAR;
  }
  return isPlainObject(cur) ? NOT_SCALAR : cur;
}

// The common case: every field reaches one scalar value (or none), so the document makes one
// entry and the index stays single-key; what documentKeysByWalk computes then, without its walks.
function scalarKeys(doc: Doc, fields: readonly IndexField[]): DocumentKeys | undefined {
  const entry: KeyPart[] = [];
  let lossy = false;
  for (const field of fields) {
    const v = scalarAt(doc, pathParts(field.path));
    if (v === NOT_SCALAR) return undefined;
    const c = indexComponent(v);
    lossy ||= c.lossy;
    entry.push(directed(c.part, field.direction));
  }
  return { entries: [entry], wholes: [lossy ? wholeOf(doc, fields) : undefined], multikey: false, lossy };
}

// The whole encodings of a scalar document's values on `fields` (scalarKeys' one entry).
function wholeOf(doc: Doc, fields: readonly IndexField[]): KeyPart[] {
  return fields.map((f) => {
    const c = indexComponent(scalarAt(doc, pathParts(f.path)));
    return c.whole ?? c.part;
  });
}

/**
 * documentKeys for any document: the walk documentKeys skips when every field is scalar (exported
 * so the tests can hold the two equal).
 */
export function documentKeysByWalk(doc: Doc, fields: readonly IndexField[]): DocumentKeys {
  let multikey = false;
  let lossy = false;
  let arrays = 0;
  const perField: Component[][] = [];
  for (const field of fields) {
    const parts = pathParts(field.path);
    const values = collectValues(doc, parts, 'traverse-omit-array');
    const raw = collectValues(doc, parts, 'no-traversal');
    const isArray = raw.some((v) => Array.isArray(v)) || pathCrossesArray(doc, parts, 0);
    if (isArray || values.length > 1) {
      multikey = true;
      arrays++;
    }
    const components: Component[] = [];
    const seen = new Set<string>();
    const add = (c: Component): void => {
      const id = encodeKey([c.part]).toString('latin1');
      if (seen.has(id)) return;
      seen.add(id);
      components.push(c);
      lossy ||= c.lossy;
    };
    for (const v of raw) if (Array.isArray(v) && v.length === 0) add(EMPTY_ARRAY_COMPONENT);
    for (const v of values) add(indexComponent(v));
    if (components.length === 0) add(indexComponent(MISSING));
    perField.push(components);
  }
  const locations = new Set(fields.map((f) => [...arrayLocations(doc, pathParts(f.path))].sort().join('|')).filter((l) => l !== ''));
  if (arrays > 1 && fields.length > 1 && locations.size > 1) {
    fail('VALIDATION_FAILED', `cannot index parallel arrays: more than one field of index {${fields.map((f) => f.path).join(', ')}} holds an array in this document`, {
      fields: fields.map((f) => f.path),
    });
  }
  let entries: KeyPart[][] = [[]];
  // Alongside, when some value is shortened: each entry's components, to encode its values whole.
  let combos: Component[][] | undefined = lossy ? [[]] : undefined;
  for (let i = 0; i < fields.length; i++) {
    const next: KeyPart[][] = [];
    const nextCombos: Component[][] = [];
    for (let e = 0; e < entries.length; e++) {
      for (const c of perField[i]!) {
        next.push([...entries[e]!, directed(c.part, fields[i]!.direction)]);
        if (combos !== undefined) nextCombos.push([...combos[e]!, c]);
      }
    }
    entries = next;
    if (combos !== undefined) combos = nextCombos;
    if (entries.length > MAX_ENTRIES_PER_DOCUMENT) fail('VALIDATION_FAILED', `a document may add at most ${MAX_ENTRIES_PER_DOCUMENT} keys to one index`);
  }
  const wholes = combos === undefined ? entries.map(() => undefined) : combos.map((cs) => (cs.some((c) => c.lossy) ? cs.map((c) => c.whole ?? c.part) : undefined));
  return { entries, wholes, multikey, lossy };
}

// The tuple oneFieldEntryKey encodes, [[bracket, value], idPart], filled in per call: encodeKey is
// synchronous and reads it whole before anything else can, so one pair serves every call.
const SCALAR_PART: [number, KeyPart] = [0, null];
const NULL_PART: KeyPart = [TYPE_BRACKET.null];
const ONE_FIELD_ENTRY: KeyPart[] = [SCALAR_PART, null];

/**
 * The key of a document's one entry in a one-field index that is neither unique nor a text index,
 * when its value there is a scalar kept whole (no array on the way, no object, not a string past
 * STRING_PREFIX_CHARS): entryKey(documentKeys(doc, [field]).entries[0], idPart), without the
 * arrays and objects documentKeys builds on the way (most of an insert's index cost). Undefined
 * for any other value: the caller goes the general way, which also sets the multikey and lossy flags.
 * @throws VALIDATION_FAILED when the key is too large
 */
export function oneFieldEntryKey(doc: Doc, field: IndexField, idPart: KeyPart): Buffer | undefined {
  const v = scalarAt(doc, pathParts(field.path));
  if (v === NOT_SCALAR) return undefined;
  let part: KeyPart;
  if (v === MISSING || v === undefined || v === null) {
    part = NULL_PART;
  } else {
    const bracket = typeBracket(v);
    switch (bracket) {
      case TYPE_BRACKET.number:
      case TYPE_BRACKET.bool:
        SCALAR_PART[1] = v as number | boolean;
        break;
      case TYPE_BRACKET.string:
        if ((v as string).length > STRING_PREFIX_CHARS) return undefined;
        SCALAR_PART[1] = v as string;
        break;
      case TYPE_BRACKET.date:
        SCALAR_PART[1] = (v as Date).getTime();
        break;
      default:
        return undefined;
    }
    SCALAR_PART[0] = bracket;
    part = SCALAR_PART;
  }
  ONE_FIELD_ENTRY[0] = field.direction === 1 ? part : complement(encodeKey([part]));
  ONE_FIELD_ENTRY[1] = idPart;
  const key = encodeKey(ONE_FIELD_ENTRY);
  // Nothing of this document stays referenced from the shared tuple.
  SCALAR_PART[1] = null;
  ONE_FIELD_ENTRY[1] = null;
  if (key.length > MAX_KEY_BYTES) fail('VALIDATION_FAILED', `index key too large (${key.length} bytes, at most ${MAX_KEY_BYTES})`);
  return key;
}

/** The tree key of one index entry; a non-unique index appends the document's id component. @throws VALIDATION_FAILED when too large */
export function entryKey(parts: readonly KeyPart[], idPart: KeyPart | undefined): Buffer {
  const key = encodeKey(idPart === undefined ? parts : [...parts, idPart]);
  if (key.length > MAX_KEY_BYTES) fail('VALIDATION_FAILED', `index key too large (${key.length} bytes, at most ${MAX_KEY_BYTES})`);
  return key;
}

/** True for values whose component can bound a range scan exactly within their bracket. */
export function isScalarForBounds(v: unknown): boolean {
  const b = typeBracket(v);
  return b === TYPE_BRACKET.null || b === TYPE_BRACKET.number || b === TYPE_BRACKET.string || b === TYPE_BRACKET.bool || b === TYPE_BRACKET.date;
}

/** Re-exported for the planner: which objects are plain documents. */
export { isPlainObject };
