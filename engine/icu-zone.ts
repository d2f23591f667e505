/**
 * The offsets of a zone of the tz data that Node's built-in ICU carries (Intl.DateTimeFormat): the
 * offset east of UTC at an instant, read from ICU and cached per UTC day with the second of that
 * day's change (the tz database has no day with two). No time-zone data ships with tetradb. Shared
 * by the documents model's date operators (docs/aggregate/expression/time-zone.ts, MongoDB's rules
 * for names and local times) and SQL's AT TIME ZONE (sql/time-zones.ts, PostgreSQL's).
 */

const SECOND = 1000;
const DAY = 86_400_000;
/** The range of a JavaScript Date, in milliseconds either side of 1970. */
export const MAX_DATE_MS = 8.64e15;
/** How many days of offsets a zone keeps before it starts over. */
const MAX_CACHED_DAYS = 8192;

/** One UTC day of a zone: its offset, or the instant it changes and the offsets either side. */
export type ZoneDay = number | { readonly at: number; readonly before: number; readonly after: number };

export class IcuZone {
  /** ICU's formatter of the zone, in the fields `exact` reads. */
  readonly format: Intl.DateTimeFormat;
  readonly #days = new Map<number, ZoneDay>();

  private constructor(format: Intl.DateTimeFormat) {
    this.format = format;
  }

  /** The zone ICU knows by `name` (any case, as ICU reads names), or undefined. */
  static named(name: string): IcuZone | undefined {
    try {
      return new IcuZone(
        new Intl.DateTimeFormat('en-US', { timeZone: name, hourCycle: 'h23', era: 'short', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric' }),
      );
    } catch {
      return undefined;
    }
  }

  /** Milliseconds east of UTC at instant `t` (milliseconds, within a Date's range; a whole number of seconds). */
  offset(t: number): number {
    const day = this.day(Math.floor(t / DAY));
    return typeof day === 'number' ? day : t >= day.at ? day.after : day.before;
  }

  /** A day's offsets: ICU's at its two ends, and where they differ, the second of the change. */
  day(day: number): ZoneDay {
    let known = this.#days.get(day);
    if (known === undefined) {
      let lo = day * DAY;
      let hi = lo + DAY;
      const before = this.#exact(lo);
      const after = this.#exact(hi);
      if (before === after) known = before;
      else {
        // The first second with the new offset: offset(lo) is the old one, offset(hi) the new.
        while (hi - lo > SECOND) {
          const mid = lo + Math.floor((hi - lo) / 2 / SECOND) * SECOND;
          if (this.#exact(mid) === after) hi = mid;
          else lo = mid;
        }
        known = { at: hi, before, after };
      }
      if (this.#days.size >= MAX_CACHED_DAYS) this.#days.clear();
      this.#days.set(day, known);
    }
    return known;
  }

  /** The offset at `t` read from ICU: the local time it formats to, less `t` (whole seconds). */
  #exact(t: number): number {
    const s = Math.floor(Math.max(-MAX_DATE_MS, Math.min(MAX_DATE_MS, t)) / SECOND) * SECOND;
    let year = 0;
    let bc = false;
    const f = [0, 1, 1, 0, 0, 0];
    for (const p of this.format.formatToParts(s)) {
      switch (p.type) {
        case 'year':
          year = Number(p.value);
          break;
        case 'era':
          bc = p.value.startsWith('B');
          break;
        case 'month':
          f[1] = Number(p.value);
          break;
        case 'day':
          f[2] = Number(p.value);
          break;
        case 'hour':
          f[3] = Number(p.value);
          break;
        case 'minute':
          f[4] = Number(p.value);
          break;
        case 'second':
          f[5] = Number(p.value);
          break;
        default:
          break;
      }
    }
    const local = new Date(0);
    // Era years: 1 BC is year 0.
    local.setUTCFullYear(bc ? 1 - year : year, f[1]! - 1, f[2]!);
    local.setUTCHours(f[3]!, f[4]!, f[5]!, 0);
    return local.getTime() - s;
  }
}
