// The `timezone` argument of the date operators, over HTTP. Expected values come from the MongoDB
// manual's examples where it has them, and otherwise were worked out independently of tetradb's
// code (Python's zoneinfo over the system tz database, and the known DST transitions: New York
// 2021-03-14T07:00Z and 2021-11-07T06:00Z, London 2024-03-31T01:00Z and 2024-10-27T01:00Z, Sydney
// 2021-04-03T16:00Z and 2021-10-02T16:00Z; Kolkata +05:30 and Kathmandu +05:45 all year). A local
// time in a gap or an overlap is resolved as MongoDB's timelib does (docs/mql.md, Time zones).
// Cases marked 'mingo' give mingo's value too; mingo refuses the name "UTC", adds a day in a zone as
// 24 hours and prints -05:30 as -0630, so the others are checked against the expected values only.
import { describe, expect, it } from 'vitest';
import { aggregateHarness, errorCases, expectQueryError, valueCases } from '../../../helpers/aggregate-cases.js';

const date = (iso: string) => ({ $date: iso });
const at = (iso: string) => ({ $toDate: iso });
const NY = 'America/New_York';
const LONDON = 'Europe/London';
const SYDNEY = 'Australia/Sydney';
const KOLKATA = 'Asia/Kolkata';
const KATHMANDU = 'Asia/Kathmandu';

const h = aggregateHarness({
  docs: [
    // The manual's $dateToString example document, and its $dateToParts one.
    { _id: 1, date: date('2014-01-01T08:15:39.736Z'), n: null, tz: 'Foo/Bar', ny: NY, five: 5 },
    { _id: 2, date: date('2017-01-01T01:29:09.123Z') },
  ],
  // The manual's $dateFromString example collection ("logmessages").
  logmessages: [
    { _id: 0, date: '2017-02-08T12:10:40.787', timezone: NY, message: 'Step 1: Started' },
    { _id: 1, date: '2017-02-08', timezone: '-05:00', message: 'Step 1: Ended' },
    { _id: 2, message: ' Step 1: Ended ' },
    { _id: 3, date: '2017-02-09', timezone: LONDON, message: 'Step 2: Started' },
    { _id: 4, date: '2017-02-09T03:35:02.055', timezone: '+0530', message: 'Step 2: In Progress' },
  ],
  // The manual's $dateTrunc example dates ("cakeSales").
  cakeSales: [
    { _id: 0, orderDate: date('2020-05-18T14:10:30Z') },
    { _id: 1, orderDate: date('2021-03-20T11:30:05Z') },
    { _id: 2, orderDate: date('2021-01-11T06:31:15Z') },
    { _id: 3, orderDate: date('2020-02-08T13:13:23Z') },
    { _id: 4, orderDate: date('2019-05-18T16:09:01Z') },
    { _id: 5, orderDate: date('2019-01-08T06:12:03Z') },
  ],
});

describe('time zone names and offsets', () => {
  valueCases(h, [
    ['Olson names, aliases and UTC offsets of all three forms', [NY, LONDON, KOLKATA, KATHMANDU, SYDNEY, 'US/Eastern', 'UTC', 'GMT', '+04:30', '-0530', '+03', '-00:00'].map((timezone) => ({ $dateToString: { date: '$date', format: '%H:%M', timezone } })),
      ['03:15', '08:15', '13:45', '14:00', '19:15', '03:15', '08:15', '08:15', '12:45', '02:45', '11:15', '08:15']],
    ['the parts of a date an offset puts in the previous year (the manual: -0500)', ['$year', '$month', '$dayOfMonth', '$hour'].map((op) => ({ [op]: { date: at('2016-01-01T00:00:00Z'), timezone: '-0500' } })), [2015, 12, 31, 19], 'mingo'],
    ['a computed time zone', { $hour: { date: '$date', timezone: '$ny' } }, 3],
    ['a null or missing time zone gives null', [
      { $hour: { date: '$date', timezone: '$n' } },
      { $hour: { date: '$date', timezone: null } },
      { $dateAdd: { startDate: '$date', unit: 'day', amount: 1, timezone: '$nope' } },
      { $dateDiff: { startDate: '$date', endDate: '$date', unit: 'day', timezone: null } },
      { $dateTrunc: { date: '$date', unit: 'day', timezone: '$n' } },
      { $dateToParts: { date: '$date', timezone: '$n' } },
      { $dateFromParts: { year: 2020, timezone: '$nope' } },
      { $dateFromString: { dateString: '2020-01-01', timezone: '$n' } },
    ], [null, null, null, null, null, null, null, null]],
  ]);
  errorCases(h, [
    ['an unknown Olson name (MongoDB 40485)', { $hour: { date: '$date', timezone: 'Foo/Bar' } }, '$hour', /^unrecognized time zone identifier: "Foo\/Bar"$/],
    ['a name in the wrong case (MongoDB matches names exactly)', { $year: { date: '$date', timezone: 'america/new_york' } }, '$year', /unrecognized time zone identifier: "america\/new_york"/],
    ['"Z", which is no zone name', { $year: { date: '$date', timezone: 'Z' } }, '$year', /unrecognized time zone identifier: "Z"/],
    ['an ICU name the tz database lacks', { $year: { date: '$date', timezone: 'PST' } }, '$year', /unrecognized time zone identifier: "PST"/],
    ['an offset of one hour digit', { $year: { date: '$date', timezone: '+5' } }, '$year', /unrecognized time zone identifier: "\+5"/],
    ['an offset without a sign', { $year: { date: '$date', timezone: '05:30' } }, '$year', /unrecognized time zone identifier: "05:30"/],
    ['a computed unknown zone', { $dateToString: { date: '$date', timezone: '$tz' } }, '$dateToString', /unrecognized time zone identifier: "Foo\/Bar"/],
    ['a computed time zone that is not a string', { $month: { date: '$date', timezone: '$five' } }, '$month', /timezone must evaluate to a string, found int/],
    ['an unknown zone in $dateDiff, with its context', { $dateDiff: { startDate: '$date', endDate: '$date', unit: 'day', timezone: 'Foo/Bar' } }, '$dateDiff', /^\$dateDiff parameter 'timezone' value parsing failed :: caused by :: unrecognized time zone identifier: "Foo\/Bar"$/],
    ['an unknown zone in $dateTrunc, with its context', { $dateTrunc: { date: '$date', unit: 'day', timezone: '$tz' } }, '$dateTrunc', /^\$dateTrunc parameter 'timezone' value parsing failed :: caused by :: unrecognized time zone identifier: "Foo\/Bar"$/],
  ]);
  it('checks a constant time zone when the pipeline is compiled, before any document is read', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ $hour: { date: '$d', timezone: 'Mars/Base' } }, '$hour', /unrecognized time zone identifier: "Mars\/Base"/],
      [{ $dateAdd: { startDate: '$d', unit: 'day', amount: 1, timezone: 'Mars/Base' } }, '$dateAdd', /unrecognized time zone identifier/],
      [{ $dateFromParts: { year: 2020, timezone: 'Mars/Base' } }, '$dateFromParts', /unrecognized time zone identifier/],
      [{ $dateFromString: { dateString: '$s', timezone: 'Mars/Base' } }, '$dateFromString', /unrecognized time zone identifier/],
      [{ $dateToParts: { date: '$d', timezone: 'Mars/Base' } }, '$dateToParts', /unrecognized time zone identifier/],
      [{ $dateTrunc: { date: '$d', unit: 'day', timezone: 5 } }, '$dateTrunc', /\$dateTrunc parameter 'timezone' value parsing failed :: caused by :: timezone must evaluate to a string, found int/],
    ];
    for (const [expr, operator, message] of cases) expectQueryError(await h.aggregate([{ $project: { x: expr } }], 'empty'), operator, message);
  });
  it('reads a computed time zone only when a document has one', async () => {
    const res = await h.aggregate([{ $project: { x: { $hour: { date: '$d', timezone: '$tz' } } } }], 'empty');
    expect(res.status, res.text).toBe(200);
    expect(res.body.documents).toEqual([]);
  });
});

describe('date parts in a zone', () => {
  valueCases(h, [
    ["a New Year's Eve evening in New York: day of week and year, weeks (UTC: Sunday, day 1, week 1)", [
      { $dayOfWeek: { date: '$date', timezone: NY } },
      { $isoDayOfWeek: { date: '$date', timezone: NY } },
      { $dayOfYear: { date: '$date', timezone: NY } },
      { $week: { date: '$date', timezone: NY } },
      { $isoWeek: { date: '$date', timezone: NY } },
      { $isoWeekYear: { date: '$date', timezone: NY } },
      { $dayOfWeek: '$date' },
      { $dayOfYear: '$date' },
      { $week: '$date' },
      { $isoWeek: '$date' },
      { $isoWeekYear: '$date' },
    ], [7, 6, 366, 52, 52, 2016, 1, 1, 1, 52, 2016]],
    ['$dateToParts (the manual), and in ISO parts in Sydney', [
      { $dateToParts: { date: '$date' } },
      { $dateToParts: { date: '$date', iso8601: true } },
      { $dateToParts: { date: '$date', timezone: NY } },
      { $dateToParts: { date: '$date', timezone: SYDNEY, iso8601: true } },
    ], [
      { year: 2017, month: 1, day: 1, hour: 1, minute: 29, second: 9, millisecond: 123 },
      { isoWeekYear: 2016, isoWeek: 52, isoDayOfWeek: 7, hour: 1, minute: 29, second: 9, millisecond: 123 },
      { year: 2016, month: 12, day: 31, hour: 20, minute: 29, second: 9, millisecond: 123 },
      { isoWeekYear: 2016, isoWeek: 52, isoDayOfWeek: 7, hour: 12, minute: 29, second: 9, millisecond: 123 },
    ]],
  ], 2);
  valueCases(h, [
    ['the hour on each side of DST changes', [
      { $hour: { date: at('2021-03-14T06:59:59Z'), timezone: NY } },
      { $hour: { date: at('2021-03-14T07:00:00Z'), timezone: NY } },
      { $hour: { date: at('2024-03-31T00:59:59Z'), timezone: LONDON } },
      { $hour: { date: at('2024-03-31T01:00:00Z'), timezone: LONDON } },
    ], [1, 3, 0, 2], 'mingo'],
    ['a repeated local time, told apart by its offset', [
      { $dateToString: { date: at('2021-11-07T05:30:00Z'), format: '%H:%M%z', timezone: NY } },
      { $dateToString: { date: at('2021-11-07T06:30:00Z'), format: '%H:%M%z', timezone: NY } },
      { $dateToString: { date: at('2024-10-27T00:30:00Z'), format: '%H:%M%z', timezone: LONDON } },
      { $dateToString: { date: at('2024-10-27T01:30:00Z'), format: '%H:%M%z', timezone: LONDON } },
      { $dateToString: { date: at('2021-04-03T15:30:00Z'), format: '%d %H:%M%z', timezone: SYDNEY } },
      { $dateToString: { date: at('2021-04-03T16:30:00Z'), format: '%d %H:%M%z', timezone: SYDNEY } },
    ], ['01:30-0400', '01:30-0500', '01:30+0100', '01:30+0000', '04 02:30+1100', '04 02:30+1000']],
  ]);
});

describe('$dateToString in a zone', () => {
  it('formats the manual example', async () => {
    const res = await h.aggregate([{ $match: { _id: 1 } }, {
      $project: {
        yearMonthDayUTC: { $dateToString: { format: '%Y-%m-%d', date: '$date' } },
        timewithOffsetNY: { $dateToString: { format: '%H:%M:%S:%L%z', date: '$date', timezone: NY } },
        timewithOffset430: { $dateToString: { format: '%H:%M:%S:%L%z', date: '$date', timezone: '+04:30' } },
        minutesOffsetNY: { $dateToString: { format: '%Z', date: '$date', timezone: NY } },
        minutesOffset430: { $dateToString: { format: '%Z', date: '$date', timezone: '+04:30' } },
        abbreviated_month: { $dateToString: { format: '%b', date: '$date', timezone: '+04:30' } },
        full_month: { $dateToString: { format: '%B', date: '$date', timezone: '+04:30' } },
      },
    }]);
    expect(res.body.documents).toEqual([{
      _id: 1, yearMonthDayUTC: '2014-01-01', timewithOffsetNY: '03:15:39:736-0500', timewithOffset430: '12:45:39:736+0430',
      minutesOffsetNY: '-300', minutesOffset430: '270', abbreviated_month: 'Jan', full_month: 'January',
    }]);
  });
  valueCases(h, [
    ['%z and %Z in half-hour and 45-minute zones, in summer time, and west of UTC by a half hour', [KOLKATA, KATHMANDU, SYDNEY, '-0530'].map((timezone) => ({ $dateToString: { date: '$date', format: '%z %Z', timezone } })),
      ['+0530 330', '+0545 345', '+1100 660', '-0530 -330']],
    ['the default format: with a Z in UTC (by name or a zero offset) only, as MongoDB', [
      { $dateToString: { date: '$date', timezone: NY } },
      { $dateToString: { date: '$date', timezone: '+00:00' } },
      { $dateToString: { date: '$date', timezone: 'GMT' } },
      { $dateToString: { date: '$date' } },
    ], ['2014-01-01T03:15:39.736', '2014-01-01T08:15:39.736Z', '2014-01-01T08:15:39.736', '2014-01-01T08:15:39.736Z']],
    ['%G %V %U %j %w %u of the local date', { $dateToString: { date: at('2017-01-01T01:29:09Z'), format: '%G-W%V-%u %U %j %w', timezone: NY } }, '2016-W52-6 52 366 7'],
  ]);
});

describe('$dateAdd and $dateSubtract across DST changes', () => {
  valueCases(h, [
    ['a day keeps the local time: 23 hours in spring, 25 in autumn (New York, London, Sydney)', [
      { $dateAdd: { startDate: at('2021-03-13T17:00:00Z'), unit: 'day', amount: 1, timezone: NY } },
      { $dateAdd: { startDate: at('2021-11-06T16:00:00Z'), unit: 'day', amount: 1, timezone: NY } },
      { $dateAdd: { startDate: at('2024-03-30T12:00:00Z'), unit: 'day', amount: 1, timezone: LONDON } },
      { $dateAdd: { startDate: at('2024-10-26T11:00:00Z'), unit: 'day', amount: 1, timezone: LONDON } },
      { $dateAdd: { startDate: at('2021-04-03T01:00:00Z'), unit: 'day', amount: 1, timezone: SYDNEY } },
      { $dateAdd: { startDate: at('2021-03-10T17:00:00Z'), unit: 'week', amount: 1, timezone: NY } },
    ], [date('2021-03-14T16:00:00.000Z'), date('2021-11-07T17:00:00.000Z'), date('2024-03-31T11:00:00.000Z'), date('2024-10-27T12:00:00.000Z'), date('2021-04-04T02:00:00.000Z'), date('2021-03-17T16:00:00.000Z')]],
    ["hours are elapsed time (MongoDB's own example: 05:50:02Z + 1 hour in New York)", [
      { $dateAdd: { startDate: at('2021-03-13T17:00:00Z'), unit: 'hour', amount: 24, timezone: NY } },
      { $dateAdd: { startDate: at('2020-11-01T05:50:02Z'), unit: 'hour', amount: 1, timezone: NY } },
      { $dateSubtract: { startDate: at('2021-11-07T07:00:00Z'), unit: 'minute', amount: 90, timezone: NY } },
    ], [date('2021-03-14T17:00:00.000Z'), date('2020-11-01T06:50:02.000Z'), date('2021-11-07T05:30:00.000Z')]],
    ['a day that lands in the spring gap moves forward by the gap (02:30 is 03:30 EDT)', { $dateAdd: { startDate: at('2021-03-13T07:30:00Z'), unit: 'day', amount: 1, timezone: NY } }, date('2021-03-14T07:30:00.000Z')],
    ["a day that lands in the autumn overlap keeps the start's DST flag", [
      { $dateAdd: { startDate: at('2021-11-06T05:30:00Z'), unit: 'day', amount: 1, timezone: NY } },
      { $dateSubtract: { startDate: at('2021-11-08T06:30:00Z'), unit: 'day', amount: 1, timezone: NY } },
      { $dateAdd: { startDate: at('2021-10-30T00:30:00Z'), unit: 'day', amount: 1, timezone: 'Europe/Berlin' } },
      { $dateSubtract: { startDate: at('2021-11-01T01:30:00Z'), unit: 'day', amount: 1, timezone: 'Europe/Berlin' } },
      { $dateAdd: { startDate: at('2024-10-26T00:30:00Z'), unit: 'day', amount: 1, timezone: LONDON } },
      { $dateAdd: { startDate: at('2021-04-02T15:30:00Z'), unit: 'day', amount: 1, timezone: SYDNEY } },
      { $dateSubtract: { startDate: at('2021-04-04T16:30:00Z'), unit: 'day', amount: 1, timezone: SYDNEY } },
    ], [date('2021-11-07T05:30:00.000Z'), date('2021-11-07T06:30:00.000Z'), date('2021-10-31T00:30:00.000Z'), date('2021-10-31T01:30:00.000Z'), date('2024-10-27T00:30:00.000Z'), date('2021-04-03T15:30:00.000Z'), date('2021-04-03T16:30:00.000Z')]],
    ['months step the local calendar: clamped to the local month end, across DST', [
      { $dateAdd: { startDate: at('2021-01-31T17:00:00Z'), unit: 'month', amount: 1, timezone: NY } },
      { $dateAdd: { startDate: at('2021-02-28T17:00:00Z'), unit: 'month', amount: 1, timezone: NY } },
      { $dateAdd: { startDate: at('2021-01-30T20:00:00Z'), unit: 'month', amount: 1, timezone: KOLKATA } },
      { $dateAdd: { startDate: at('2021-01-30T20:00:00Z'), unit: 'month', amount: 1 } },
    ], [date('2021-02-28T17:00:00.000Z'), date('2021-03-28T16:00:00.000Z'), date('2021-02-27T20:00:00.000Z'), date('2021-02-28T20:00:00.000Z')]],
    ['a UTC offset is the same offset all year', { $dateAdd: { startDate: at('2021-03-13T17:00:00Z'), unit: 'day', amount: 1, timezone: '-05:00' } }, date('2021-03-14T17:00:00.000Z')],
  ]);
});

describe('$dateTrunc in a zone', () => {
  it('bins the manual cakeSales dates in two-week bins starting Monday, Los Angeles time', async () => {
    const res = await h.aggregate([{ $project: { _id: 0, t: { $dateTrunc: { date: '$orderDate', unit: 'week', binSize: 2, timezone: 'America/Los_Angeles', startOfWeek: 'Monday' } } } }], 'cakeSales');
    expect(res.body.documents.map((d: { t: unknown }) => d.t)).toEqual([
      date('2020-05-11T07:00:00.000Z'), date('2021-03-15T07:00:00.000Z'), date('2021-01-04T08:00:00.000Z'),
      date('2020-02-03T08:00:00.000Z'), date('2019-05-13T07:00:00.000Z'), date('2019-01-07T08:00:00.000Z'),
    ]);
  });
  valueCases(h, [
    ['a day starts at local midnight, on the days of DST changes too', [
      { $dateTrunc: { date: at('2021-03-14T15:00:00Z'), unit: 'day', timezone: NY } },
      { $dateTrunc: { date: at('2021-11-07T12:00:00Z'), unit: 'day', timezone: NY } },
      { $dateTrunc: { date: at('2024-03-31T12:00:00Z'), unit: 'day', timezone: LONDON } },
      { $dateTrunc: { date: at('2024-07-01T00:30:00Z'), unit: 'day', timezone: LONDON } },
    ], [date('2021-03-14T05:00:00.000Z'), date('2021-11-07T04:00:00.000Z'), date('2024-03-31T00:00:00.000Z'), date('2024-06-30T23:00:00.000Z')], 'mingo'],
    ['a day whose midnight a DST change skips starts at 01:00 (São Paulo, 2018-11-04)', { $dateTrunc: { date: at('2018-11-04T12:00:00Z'), unit: 'day', timezone: 'America/Sao_Paulo' } }, date('2018-11-04T03:00:00.000Z')],
    ['weeks across DST, from Sunday and from Monday', [
      { $dateTrunc: { date: at('2021-03-17T12:00:00Z'), unit: 'week', timezone: NY } },
      { $dateTrunc: { date: at('2021-11-10T12:00:00Z'), unit: 'week', timezone: NY, startOfWeek: 'mon' } },
      { $dateTrunc: { date: at('2021-11-03T12:00:00Z'), unit: 'week', timezone: NY, startOfWeek: 'mon' } },
    ], [date('2021-03-14T05:00:00.000Z'), date('2021-11-08T05:00:00.000Z'), date('2021-11-01T04:00:00.000Z')], 'mingo'],
    ['months start at the local first of the month (UTC would say November)', [
      { $dateTrunc: { date: at('2021-11-15T12:00:00Z'), unit: 'month', timezone: NY } },
      { $dateTrunc: { date: at('2021-03-20T12:00:00Z'), unit: 'month', timezone: NY } },
      { $dateTrunc: { date: at('2021-11-01T02:00:00Z'), unit: 'month', timezone: NY } },
      { $dateTrunc: { date: at('2021-11-01T02:00:00Z'), unit: 'month' } },
      { $dateTrunc: { date: at('2021-04-15T00:00:00Z'), unit: 'month', timezone: SYDNEY } },
    ], [date('2021-11-01T04:00:00.000Z'), date('2021-03-01T05:00:00.000Z'), date('2021-10-01T04:00:00.000Z'), date('2021-11-01T00:00:00.000Z'), date('2021-03-31T13:00:00.000Z')]],
    ['hours are counted from the local reference point: half past in Kolkata, a quarter past in Kathmandu', [
      { $dateTrunc: { date: at('2021-06-01T10:20:00Z'), unit: 'hour', timezone: KOLKATA } },
      { $dateTrunc: { date: at('2021-06-01T10:20:00Z'), unit: 'hour', timezone: KATHMANDU } },
      { $dateTrunc: { date: at('2021-06-01T10:20:00Z'), unit: 'hour', timezone: NY } },
    ], [date('2021-06-01T09:30:00.000Z'), date('2021-06-01T10:15:00.000Z'), date('2021-06-01T10:00:00.000Z')]],
  ]);
});

describe('$dateDiff in a zone', () => {
  valueCases(h, [
    ['days count local midnights (UTC counts two here, one there)', [
      { $dateDiff: { startDate: at('2021-11-06T04:30:00Z'), endDate: at('2021-11-08T04:30:00Z'), unit: 'day', timezone: NY } },
      { $dateDiff: { startDate: at('2021-11-06T04:30:00Z'), endDate: at('2021-11-08T04:30:00Z'), unit: 'day' } },
      { $dateDiff: { startDate: at('2024-03-30T23:30:00Z'), endDate: at('2024-03-31T23:30:00Z'), unit: 'day', timezone: LONDON } },
      { $dateDiff: { startDate: at('2024-03-30T23:30:00Z'), endDate: at('2024-03-31T23:30:00Z'), unit: 'day' } },
    ], [1, 2, 2, 1], 'mingo'],
    ['a 23-hour day across the spring change is one day', { $dateDiff: { startDate: at('2021-03-13T17:00:00Z'), endDate: at('2021-03-14T16:00:00Z'), unit: 'day', timezone: NY } }, 1],
    ['hours and minutes across a DST change are elapsed ones', [
      { $dateDiff: { startDate: at('2021-03-14T06:30:00Z'), endDate: at('2021-03-14T07:30:00Z'), unit: 'hour', timezone: NY } },
      { $dateDiff: { startDate: at('2021-11-07T05:30:00Z'), endDate: at('2021-11-07T06:30:00Z'), unit: 'hour', timezone: NY } },
      { $dateDiff: { startDate: at('2021-03-14T06:59:00Z'), endDate: at('2021-03-14T07:01:00Z'), unit: 'minute', timezone: NY } },
    ], [1, 1, 2]],
    ['hours turn at local hours: half past UTC ones in Kolkata, a quarter past in Kathmandu', [
      { $dateDiff: { startDate: at('2021-06-01T10:20:00Z'), endDate: at('2021-06-01T10:40:00Z'), unit: 'hour', timezone: KOLKATA } },
      { $dateDiff: { startDate: at('2021-06-01T10:20:00Z'), endDate: at('2021-06-01T10:40:00Z'), unit: 'hour' } },
      { $dateDiff: { startDate: at('2021-06-01T10:10:00Z'), endDate: at('2021-06-01T10:20:00Z'), unit: 'hour', timezone: KATHMANDU } },
    ], [1, 0, 1]],
    ['weeks, months and years of the local calendar', [
      { $dateDiff: { startDate: at('2021-11-06T12:00:00Z'), endDate: at('2021-11-07T03:00:00Z'), unit: 'week', timezone: NY } },
      { $dateDiff: { startDate: at('2021-11-06T12:00:00Z'), endDate: at('2021-11-07T03:00:00Z'), unit: 'week' } },
      { $dateDiff: { startDate: at('2021-10-31T12:00:00Z'), endDate: at('2021-11-01T02:00:00Z'), unit: 'month', timezone: NY } },
      { $dateDiff: { startDate: at('2021-06-01T00:00:00Z'), endDate: at('2022-01-01T03:00:00Z'), unit: 'year', timezone: NY } },
      { $dateDiff: { startDate: at('2021-06-01T00:00:00Z'), endDate: at('2022-01-01T03:00:00Z'), unit: 'year' } },
    ], [0, 1, 0, 0, 1], 'mingo'],
  ]);
});

describe('$dateFromParts in a zone', () => {
  valueCases(h, [
    ["the parts are local time (the manual: New Year's Eve in New York)", { $dateFromParts: { year: 2016, month: 12, day: 31, hour: 23, minute: 46, second: 12, timezone: NY } }, date('2017-01-01T04:46:12.000Z'), 'mingo'],
    ['in offsets, half-hour zones and ISO week parts', [
      { $dateFromParts: { year: 2021, timezone: '+04:45' } },
      { $dateFromParts: { isoWeekYear: 2017, isoWeek: 6, isoDayOfWeek: 3, hour: 12, timezone: KOLKATA } },
      { $dateFromParts: { year: 2021, month: 6, day: 1, hour: 16, minute: 5, millisecond: 250, timezone: KATHMANDU } },
    ], [date('2020-12-31T19:15:00.000Z'), date('2017-02-08T06:30:00.000Z'), date('2021-06-01T10:20:00.250Z')]],
    ['a time the spring change skips moves forward by the gap', [
      { $dateFromParts: { year: 2021, month: 3, day: 14, hour: 2, minute: 30, timezone: NY } },
      { $dateFromParts: { year: 2021, month: 10, day: 3, hour: 2, minute: 30, timezone: SYDNEY } },
      { $dateFromParts: { year: 2021, month: 3, day: 28, hour: 2, minute: 30, timezone: 'Europe/Berlin' } },
    ], [date('2021-03-14T07:30:00.000Z'), date('2021-10-02T16:30:00.000Z'), date('2021-03-28T01:30:00.000Z')]],
    ['a time the autumn change repeats is the standard-time one, east and west of UTC', [
      { $dateFromParts: { year: 2021, month: 11, day: 7, hour: 1, minute: 30, timezone: NY } },
      { $dateFromParts: { year: 2024, month: 10, day: 27, hour: 1, minute: 30, timezone: LONDON } },
      { $dateFromParts: { year: 2021, month: 10, day: 31, hour: 2, minute: 30, timezone: 'Europe/Berlin' } },
      { $dateFromParts: { year: 2021, month: 4, day: 4, hour: 2, minute: 30, timezone: SYDNEY } },
    ], [date('2021-11-07T06:30:00.000Z'), date('2024-10-27T01:30:00.000Z'), date('2021-10-31T01:30:00.000Z'), date('2021-04-03T16:30:00.000Z')]],
  ]);
});

describe('$dateFromString in a zone', () => {
  it('reads the manual example strings in New York and in their own zones', async () => {
    const res = await h.aggregate([{
      $project: {
        ny: { $dateFromString: { dateString: '$date', timezone: NY } },
        own: { $dateFromString: { dateString: '$date', timezone: '$timezone' } },
      },
    }], 'logmessages');
    expect(res.body.documents).toEqual([
      { _id: 0, ny: date('2017-02-08T17:10:40.787Z'), own: date('2017-02-08T17:10:40.787Z') },
      { _id: 1, ny: date('2017-02-08T05:00:00.000Z'), own: date('2017-02-08T05:00:00.000Z') },
      { _id: 2, ny: null, own: null },
      { _id: 3, ny: date('2017-02-09T05:00:00.000Z'), own: date('2017-02-09T00:00:00.000Z') },
      { _id: 4, ny: date('2017-02-09T08:35:02.055Z'), own: date('2017-02-08T22:05:02.055Z') },
    ]);
  });
  valueCases(h, [
    ['with a format, in a 45-minute zone', { $dateFromString: { dateString: '2021-06-01 16:05', format: '%Y-%m-%d %H:%M', timezone: KATHMANDU } }, date('2021-06-01T10:20:00.000Z')],
    ['a skipped local time moves forward, a repeated one is standard time', [
      { $dateFromString: { dateString: '2021-03-14T02:30:00', timezone: NY } },
      { $dateFromString: { dateString: '2021-11-07T01:30:00', timezone: NY } },
    ], [date('2021-03-14T07:30:00.000Z'), date('2021-11-07T06:30:00.000Z')]],
    ['an offset in the string applies with a UTC timezone (by name or zero offset)', [
      { $dateFromString: { dateString: '2017-02-08T12:10:40+02:00', timezone: 'UTC' } },
      { $dateFromString: { dateString: '2017-02-08T12:10:40Z', timezone: '+00:00' } },
    ], [date('2017-02-08T10:10:40.000Z'), date('2017-02-08T12:10:40.000Z')]],
    ['onError takes an offset in the string given with another timezone', { $dateFromString: { dateString: '2017-02-08T12:10:40+02:00', timezone: NY, onError: 'both' } }, 'both'],
  ]);
  errorCases(h, [
    ['an offset in the string with a timezone other than UTC (MongoDB)', { $dateFromString: { dateString: '2017-02-08T12:10:40+0200', timezone: NY } }, '$dateFromString', /^you cannot pass in a date\/time string with GMT offset together with a timezone argument$/],
    ['a Z in the string with a named zone of offset 0', { $dateFromString: { dateString: '2017-02-08T12:10:40Z', timezone: 'GMT' } }, '$dateFromString', /^you cannot pass in a date\/time string with time zone information \('Z'\) together with a timezone argument$/],
    ['a %z offset with a timezone', { $dateFromString: { dateString: '2017-02-08 +0530', format: '%Y-%m-%d %z', timezone: KOLKATA } }, '$dateFromString', /with GMT offset together with a timezone argument/],
  ]);
});

describe('$dateToParts arguments', () => {
  valueCases(h, [
    ['a null iso8601 or date gives null', [{ $dateToParts: { date: '$date', iso8601: null } }, { $dateToParts: { date: '$nope', timezone: NY } }], [null, null]],
  ]);
  errorCases(h, [
    ['an iso8601 that is not a boolean', { $dateToParts: { date: '$date', iso8601: 1 } }, '$dateToParts', /iso8601 must evaluate to a bool, found int/],
    ['a date that is a string', { $dateToParts: { date: '$tz' } }, '$dateToParts', /can't convert from BSON type string to Date/],
    ['an unknown argument', { $dateToParts: { date: '$date', format: '%Y' } }, '$dateToParts', /Unrecognized argument to \$dateToParts: format/],
    ['a missing date', { $dateToParts: { timezone: NY } }, '$dateToParts', /Missing 'date' parameter to \$dateToParts/],
  ]);
});
