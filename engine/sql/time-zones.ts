import { IcuZone, MAX_DATE_MS } from '../icu-zone.js';
import { MICROS_PER_SECOND } from './functions/calendar.js';
import { formatInterval, sqlFail, type Interval } from './sql-types.js';

/**
 * The time zones of `AT TIME ZONE` and timezone(zone, x), read as PostgreSQL 15's
 * timestamptz_zone reads them, in its order:
 *  1. a time zone abbreviation (`EST`, `CET`): PostgreSQL's table of them (timezone_abbreviations
 *     'Default') is not carried, so those with an offset other than zero are refused (0A000)
 *     rather than read as the zone of the same name (`CET` there is a fixed +01, summer or not);
 *  2. a POSIX zone `[name]offset` (`+02`, `-05:30`, `UTC+2`, `FOO3`): a fixed offset WEST of UTC
 *     for a positive number, POSIX's sign, which PostgreSQL keeps (`'+02'` is two hours behind
 *     UTC); hours up to 167, then `:mm` and `:ss`, as its tzparse reads them. A POSIX zone with a
 *     daylight-saving part (`EST5EDT,M3.2.0,M11.1.0`) is refused (0A000) unless it is a zone name;
 *  3. an IANA zone name (`Europe/Paris`, any case), its offsets and daylight-saving rules from
 *     the time zone data of Node's ICU (Intl), which may be of another release than PostgreSQL's
 *     for past or future changes of a zone's rules; before a zone's first rule, its local mean
 *     time (`Europe/Paris` in 1900: +00:09:21), as PostgreSQL. Instants past JavaScript's dates
 *     (after the year 275760) take the offset of that year's same moment.
 * Anything else is 22023 `time zone "x" not recognized`.
 */
export type TimeZone = { readonly kind: 'fixed'; readonly west: number } | { readonly kind: 'named'; readonly icu: IcuZone };

/** The abbreviations of PostgreSQL's 'Default' set whose offset is zero (read as UTC). */
const UTC_ABBREVIATIONS = new Set(['gmt', 'ut', 'utc', 'uct', 'z', 'zulu']);

/** The other abbreviations of PostgreSQL's 'Default' set (pg_timezone_abbrevs), refused here. */
const OTHER_ABBREVIATIONS = new Set(
  (
    'acdt acsst acst act acwst adt aedt aesst aest aft akdt akst almst almt amst amt anast anat arst art ast awsst awst azost azot azst azt bdst bdt bnt bort bot bra ' +
    'brst brt bst btt cadt cast cct cdt cest cet cetdst chadt chast chut ckt clst clt cot cst cxt davt ddut easst east eat edt eest eet eetdst egst egt est fet fjst ' +
    'fjt fkst fkt fnst fnt galt gamt gest get gft gilt gyt hkt hst ict idt iot irkst irkt irt ist jayt jst kdt kgst kgt kost krast krat kst lhdt lhst ligt lint lkt ' +
    'magst magt mart mawt mdt mest mesz met metdst mez mht mmt mpt msd msk mst must mut mvt myt ndt nft novst novt npt nst nut nzdt nzst nzt omsst omst pdt pet ' +
    'petst pett pgt pht pkst pkt pmdt pmst pont pst pwt pyst pyt ret sadt sast sct sgt taht tft tjt tkt tmt tot trut tvt ulast ulat uyst uyt uzst uzt vet vlast ' +
    'vlat volt vut wadt wakt wast wat wdt wet wetdst wft wgst wgt xjt yakst yakt yapt yekst yekt'
  ).split(' '),
);

/** `[name]offset` with nothing after: name = no digits, `,`, `+` or `-` (tzparse's getzname); offset [+-]h[:mm[:ss]]. */
const POSIX_ZONE = /^([^0-9,+-]*)([+-]?)(\d+)(?::(\d+)(?::(\d+))?)?$/;

const ZONES = new Map<string, TimeZone>();
const UTC_ZONE: TimeZone = { kind: 'fixed', west: 0 };

/**
 * The zone a name stands for (see the file comment).
 * @throws SQL_ERROR 22023 not recognized, 0A000 an abbreviation other than UTC's, a POSIX daylight-saving rule
 */
export function zoneNamed(name: string): TimeZone {
  const known = ZONES.get(name);
  if (known !== undefined) return known;
  const zone = readZone(name);
  if (ZONES.size > 1000) ZONES.clear();
  ZONES.set(name, zone);
  return zone;
}

function readZone(name: string): TimeZone {
  const lower = name.toLowerCase();
  if (UTC_ABBREVIATIONS.has(lower)) return UTC_ZONE;
  if (OTHER_ABBREVIATIONS.has(lower)) sqlFail('0A000', `unsupported: time zone abbreviation "${name}" (write the zone's name, such as America/New_York, or an offset)`);
  const posix = POSIX_ZONE.exec(name);
  if (posix !== null) {
    const [hours, minutes, seconds] = [Number(posix[3]), Number(posix[4] ?? 0), Number(posix[5] ?? 0)];
    if (hours <= 167 && minutes <= 59 && seconds <= 60) return { kind: 'fixed', west: (posix[2] === '-' ? -1 : 1) * (hours * 3600 + minutes * 60 + seconds) };
  }
  // IANA names are letters, digits, `_`, `-`, `+` and `/`, starting with a letter (ICU reads more,
  // its custom `GMT+2` with the opposite sign among them).
  if (/^[A-Za-z][A-Za-z0-9_+/-]*$/.test(name)) {
    const icu = IcuZone.named(name);
    if (icu !== undefined) return { kind: 'named', icu };
  }
  // A POSIX zone with more after its offset: a daylight-saving part, which PostgreSQL reads.
  if (/^(<[^>]*>|[^0-9,+-]*)[+-]?\d+(:\d+){0,2}[^0-9:]/.test(name)) sqlFail('0A000', `unsupported: the POSIX time zone "${name}" with a daylight-saving rule`);
  return sqlFail('22023', `time zone "${name}" not recognized`);
}

/**
 * The fixed zone an interval stands for (timestamptz_izone): its time part east of UTC, whole
 * seconds.
 * @throws SQL_ERROR 22023 an interval with months or days
 */
export function zoneOfInterval(iv: Interval): TimeZone {
  if (iv.months !== 0 || iv.days !== 0) sqlFail('22023', `interval time zone "${formatInterval(iv)}" must not include months or days`);
  return { kind: 'fixed', west: -Number(iv.micros / MICROS_PER_SECOND) + 0 };
}

const MS_PER_YEAR_CYCLE = 146_097 * 86_400_000; // 400 Gregorian years: the calendar repeats.

/** Seconds east of UTC in `zone` at the instant `utc` (microseconds since 1970). */
export function offsetEast(zone: TimeZone, utc: bigint): number {
  if (zone.kind === 'fixed') return -zone.west;
  let ms = Math.floor(Number(utc / 1000n));
  // Past a Date's range, the same moment 400-year cycles nearer (the rules are those of the end).
  while (ms > MAX_DATE_MS) ms -= MS_PER_YEAR_CYCLE;
  while (ms < -MAX_DATE_MS) ms += MS_PER_YEAR_CYCLE;
  return zone.icu.offset(Math.floor(ms / 1000) * 1000) / 1000;
}

/** `utc` as a local time of `zone` (timestamptz AT TIME ZONE zone), microseconds since 1970. */
export function localOf(zone: TimeZone, utc: bigint): bigint {
  return utc + BigInt(offsetEast(zone, utc)) * MICROS_PER_SECOND;
}

const DAY_MICROS = 86_400n * MICROS_PER_SECOND;

/**
 * The instant a local time of `zone` is (timestamp AT TIME ZONE zone), as PostgreSQL's
 * DetermineTimeZoneOffset decides it: a local time a change of offset skips (spring forward)
 * takes the offset before the change, one it repeats (fall back) the offset after it.
 */
export function utcOf(zone: TimeZone, local: bigint): bigint {
  if (zone.kind === 'fixed') return local + BigInt(zone.west) * MICROS_PER_SECOND;
  const before = offsetEast(zone, local - DAY_MICROS);
  const after = offsetEast(zone, local + DAY_MICROS);
  if (before === after) {
    // Usually the offset of the whole neighbourhood; a change inside it is found below.
    const t = local - BigInt(before) * MICROS_PER_SECOND;
    if (offsetEast(zone, t) === before) return t;
  }
  const tBefore = local - BigInt(before) * MICROS_PER_SECOND;
  const tAfter = local - BigInt(after) * MICROS_PER_SECOND;
  const validBefore = offsetEast(zone, tBefore) === before;
  const validAfter = offsetEast(zone, tAfter) === after;
  if (validAfter) return tAfter;
  if (validBefore) return tBefore;
  // In a gap: the offset before the change.
  return tBefore;
}
