/**
 * Time zones of the date operators (manual: the `timezone` argument): an Olson identifier
 * ("America/New_York", "Europe/London", "GMT") or a UTC offset ("+04:45", "-0530", "+03"), as
 * MongoDB's TimeZoneDatabase reads them. Offsets of a named zone come from Node's built-in ICU
 * (Intl.DateTimeFormat), cached per zone and day; no time-zone data ships with tetradb.
 *
 * Local to UTC is MongoDB's: timelib's do_adjust_timezone (the version MongoDB 7 and 8 vendor) is
 * ported in `instant`. A local time that a DST change skips (02:30 on a spring-forward night in
 * New York) is read with the offset before the change, so it lands the gap's length later (03:30
 * EDT); a local time that happens twice (01:30 on the fall-back night) is the occurrence whose DST
 * flag matches the one given: $dateAdd passes the start date's, so a day after 01:30 EDT is 01:30
 * EDT; $dateFromParts and $dateFromString pass the flag of 1970-01-01 in the zone (timelib's
 * fresh time), which is standard time nearly everywhere, so they give the later, standard-time
 * occurrence.
 */

import { exprError } from './expression.js';
import { IcuZone, MAX_DATE_MS } from '../../../icu-zone.js';

const SECOND = 1000;
const HOUR = 3_600_000;
const DAY = 86_400_000;

/** A time zone: the offset from UTC at each instant and the way back from a local time. */
export interface TimeZone {
  /** MongoDB's isUtcZone: "UTC" itself or a zero offset; "GMT" and "Etc/UTC" are zones with offset 0, not this. */
  readonly utc: boolean;
  /** True for UTC and the offsets: the same offset at every instant. */
  readonly fixed: boolean;
  /** Milliseconds east of UTC at instant `t` (a whole number of seconds). */
  offset(t: number): number;
  /** True when daylight-saving time is in force at instant `t`. */
  isDst(t: number): boolean;
  /** The instant of a local time (`wall`: the local date and time read as if UTC); `dst` picks an ambiguous time's occurrence. */
  instant(wall: number, dst: boolean): number;
}

class FixedZone implements TimeZone {
  readonly fixed = true;
  readonly utc: boolean;
  readonly #offset: number;

  /** `utc`: MongoDB's UTC (the name "UTC" or a zero offset), not a named zone that has offset 0. */
  constructor(offset: number, utc: boolean) {
    this.#offset = offset;
    this.utc = utc;
  }

  offset(): number {
    return this.#offset;
  }

  isDst(): boolean {
    return false;
  }

  instant(wall: number): number {
    return wall - this.#offset;
  }
}

/** How many years' standard offsets a zone keeps before it starts over. */
const MAX_CACHED_YEARS = 8192;

class NamedZone implements TimeZone {
  readonly utc = false;
  readonly fixed = false;
  /** ICU's offsets, cached per day (at most one change a day: the tz database has no day with two). */
  readonly #icu: IcuZone;
  /** Year -> its standard offset (the smaller of January's and July's). */
  readonly #standard = new Map<number, number>();

  constructor(icu: IcuZone) {
    this.#icu = icu;
  }

  offset(t: number): number {
    return Number.isFinite(t) ? this.#icu.offset(t) : 0;
  }

  isDst(t: number): boolean {
    const year = new Date(clamp(t)).getUTCFullYear();
    let standard = this.#standard.get(year);
    if (standard === undefined) {
      const jan = new Date(0);
      jan.setUTCFullYear(year, 0, 1);
      const jul = new Date(0);
      jul.setUTCFullYear(year, 6, 1);
      standard = Math.min(this.offset(jan.getTime()), this.offset(jul.getTime()));
      if (this.#standard.size >= MAX_CACHED_YEARS) this.#standard.clear();
      this.#standard.set(year, standard);
    }
    return this.offset(t) > standard;
  }

  /**
   * timelib's do_adjust_timezone, in milliseconds on whole seconds: `current` is the offset at the
   * wall time read as an instant, `after` the offset at that instant minus `current`; where they
   * differ the time is near a change, and `in_transition` tells a skipped time (read with the
   * offset before the change) from one past the change. Where they agree, timelib looks two hours
   * behind or ahead for a change the flag `dst` says the time belongs to the other side of.
   */
  instant(wall: number, dst: boolean): number {
    if (!Number.isFinite(wall)) return wall;
    const ms = wall - Math.floor(wall / SECOND) * SECOND;
    const w = wall - ms;
    const current = this.offset(w);
    const currentIsDst = this.isDst(w);
    const after = this.offset(w - current);
    let actual = after;
    let actualStart: number | undefined;
    if (current === after) {
      if (current >= 0 && dst && !currentIsDst) {
        // East of UTC: the time read as UTC has left DST already; the time may still be in it.
        const earlier = this.offset(w - current - 2 * HOUR);
        if (earlier !== after && w - earlier < this.#periodStart(w - current)) {
          actual = earlier;
          actualStart = this.#periodStart(w - current - 2 * HOUR);
        }
      } else if (current <= 0 && currentIsDst && !dst) {
        // West of UTC: the time read as UTC is still in DST; the time may have left it.
        const later = this.offset(w - current + 2 * HOUR);
        const laterStart = this.#periodStart(w - current + 2 * HOUR);
        if (later !== after && w - later >= laterStart) {
          actual = later;
          actualStart = laterStart;
        }
      }
    }
    // With one offset all along, timelib's in_transition cannot hold: both of its answers are `current`.
    if (current === actual) return w - current + ms;
    actualStart ??= this.#periodStart(w - current);
    const inTransition = w - actual >= actualStart + (current - actual) && w - actual < actualStart;
    return w - (inTransition ? current : actual) + ms;
  }

  /**
   * The instant the offset in force at `t` began, looked for two days back (-Infinity when it held
   * all that time: timelib's answer is then too early to change any decision above).
   */
  #periodStart(t: number): number {
    const first = Math.floor((t - 2 * DAY) / DAY);
    for (let d = Math.floor(t / DAY); d >= first; d--) {
      const day = this.#icu.day(d);
      if (typeof day !== 'number' && day.at <= t) return day.at;
    }
    return -Infinity;
  }
}

const clamp = (t: number): number => Math.max(-MAX_DATE_MS, Math.min(MAX_DATE_MS, t));

/** UTC: MongoDB's utcZone, the zone of an operator given no `timezone`. */
export const UTC: TimeZone = new FixedZone(0, true);

/** The local date and time of instant `t` in `zone`, as milliseconds read as if UTC. */
export function localTime(zone: TimeZone, t: number): number {
  return t + zone.offset(t);
}

/** The three forms of a UTC offset MongoDB reads: ±hh, ±hhmm, ±hh:mm (no range check, as in MongoDB). */
const OFFSET = /^([+-])(\d\d)(?:(\d\d)|:(\d\d))?$/;

/**
 * ICU names that are not in the tz database (MongoDB's timelib knows only the database's): the
 * Java-era three-letter IDs and SystemV zones, and US/Pacific-New (dropped from tzdata in 2020).
 */
const ICU_ONLY = new Set(['ACT', 'AET', 'AGT', 'ART', 'AST', 'BET', 'BST', 'CAT', 'CNT', 'CST', 'CTT', 'EAT', 'ECT', 'IET', 'IST', 'JST', 'MIT', 'NET', 'NST', 'PLT', 'PNT', 'PRT', 'PST', 'SST', 'VST', 'US/Pacific-New']);

let canonicalNames: Map<string, string> | undefined;

/** ICU's canonical zone names by lower case (with UTC, which supportedValuesOf leaves out). */
function canonical(): Map<string, string> {
  canonicalNames ??= new Map([...Intl.supportedValuesOf('timeZone'), 'UTC'].map((n) => [n.toLowerCase(), n]));
  return canonicalNames;
}

/**
 * A named zone, or undefined when the tz database has no such name. MongoDB matches names exactly:
 * a canonical name in another case is refused, and so is a name whose parts do not start with a
 * capital (ICU itself ignores case).
 */
function namedZone(name: string): TimeZone | undefined {
  if (ICU_ONLY.has(name) || name.startsWith('SystemV/')) return undefined;
  if (!name.split('/').every((part) => /^[A-Z]/.test(part))) return undefined;
  const known = canonical().get(name.toLowerCase());
  if (known !== undefined && known !== name) return undefined;
  const icu = IcuZone.named(name);
  if (icu === undefined) return undefined;
  // ICU maps the UTC aliases (GMT, Etc/UTC, Zulu) to UTC: a fixed zone of offset 0, not MongoDB's UTC.
  return icu.format.resolvedOptions().timeZone === 'UTC' ? new FixedZone(0, false) : new NamedZone(icu);
}

/** Zones by name (undefined for an unknown one), bounded: names are user input. */
const zones = new Map<string, TimeZone | undefined>();
const MAX_CACHED_ZONES = 1024;

/** The zone a `timezone` string names. @throws QUERY_ERROR "unrecognized time zone identifier" (MongoDB's 40485) */
export function parseTimeZone(name: string, operator: string, context?: string): TimeZone {
  let zone = zones.get(name);
  if (zone === undefined && !zones.has(name)) {
    zone = readZone(name);
    if (zones.size >= MAX_CACHED_ZONES) zones.clear();
    zones.set(name, zone);
  }
  if (zone === undefined) {
    const message = `unrecognized time zone identifier: ${JSON.stringify(name)}`;
    exprError(operator, context === undefined ? message : `${context} :: caused by :: ${message}`);
  }
  return zone;
}

function readZone(name: string): TimeZone | undefined {
  if (name === 'UTC') return UTC;
  const m = OFFSET.exec(name);
  if (m !== null) {
    const minutes = Number(m[2]) * 60 + Number(m[3] ?? m[4] ?? 0);
    return new FixedZone((m[1] === '-' ? -1 : 1) * minutes * 60_000, minutes === 0);
  }
  return namedZone(name);
}
