// The date operators with units and the date constructors ($dateAdd, $dateSubtract, $dateDiff,
// $dateTrunc, $dateFromParts, $dateFromString), over HTTP, laid out like the manual's examples;
// mingo checks the cases where it agrees with the manual (docs/mql.md lists where it does not).
import { describe, expect, it } from 'vitest';
import { aggregateHarness, errorCases, expectQueryError, valueCases } from '../../../helpers/aggregate-cases.js';

const date = (iso: string) => ({ $date: iso });

const h = aggregateHarness({
  docs: [
    { _id: 1, d: date('2020-05-18T14:10:30Z'), s: '2017-02-08T12:10:40.787', n: null, unit: 'day', amount: 2, text: 'x' },
    { _id: 2, start: date('2020-12-31T23:59:59Z'), end: date('2021-01-01T00:00:00Z') },
    { _id: 3, start: date('2017-01-07T00:00:00Z'), end: date('2017-01-09T00:00:00Z') },
  ],
  // The manual's $dateAdd example (shipping) and $dateDiff example (orders).
  shipping: [
    { _id: 456, purchaseDate: date('2020-12-31T00:00:00Z') },
    { _id: 457, purchaseDate: date('2021-02-28T00:00:00Z') },
    { _id: 458, purchaseDate: date('2021-02-26T00:00:00Z') },
  ],
  orders: [
    { _id: 456, purchased: date('2020-12-31T00:00:00Z'), delivered: date('2021-01-05T00:00:00Z') },
    { _id: 457, purchased: date('2021-02-28T00:00:00Z'), delivered: date('2021-03-07T00:00:00Z') },
    { _id: 458, purchased: date('2021-02-16T00:00:00Z'), delivered: date('2021-02-18T00:00:00Z') },
  ],
});

const at = (iso: string) => ({ $toDate: iso });

describe('$dateAdd and $dateSubtract', () => {
  it('adds days to each purchase date (the manual: expected delivery three days later)', async () => {
    const res = await h.aggregate([{ $project: { expectedDeliveryDate: { $dateAdd: { startDate: '$purchaseDate', unit: 'day', amount: 3 } } } }], 'shipping');
    expect(res.body.documents).toEqual([
      { _id: 456, expectedDeliveryDate: date('2021-01-03T00:00:00.000Z') },
      { _id: 457, expectedDeliveryDate: date('2021-03-03T00:00:00.000Z') },
      { _id: 458, expectedDeliveryDate: date('2021-03-01T00:00:00.000Z') },
    ]);
  });
  valueCases(h, [
    ['hours, minutes, seconds and milliseconds are fixed lengths', [
      { $dateAdd: { startDate: '$d', unit: 'hour', amount: -15 } },
      { $dateAdd: { startDate: '$d', unit: 'millisecond', amount: 1500 } },
      { $dateSubtract: { startDate: '$d', unit: 'week', amount: 2 } },
    ], [date('2020-05-17T23:10:30.000Z'), date('2020-05-18T14:10:31.500Z'), date('2020-05-04T14:10:30.000Z')], 'mingo'],
    ['a month later keeps the day when the month has it', { $dateAdd: { startDate: at('2021-01-15T12:10:05Z'), unit: 'month', amount: 1 } }, date('2021-02-15T12:10:05.000Z'), 'mingo'],
    ['a month later from the 31st is the end of a shorter month (MongoDB clamps; mingo overflows into March)', [
      { $dateAdd: { startDate: at('2021-01-31T12:10:05Z'), unit: 'month', amount: 1 } },
      { $dateAdd: { startDate: at('2020-01-31T12:10:05Z'), unit: 'month', amount: 1 } },
    ], [date('2021-02-28T12:10:05.000Z'), date('2020-02-29T12:10:05.000Z')]],
    ['a year after February 29th is February 28th', { $dateAdd: { startDate: at('2020-02-29T00:00:00Z'), unit: 'year', amount: 1 } }, date('2021-02-28T00:00:00.000Z')],
    ['quarters are three months, clamped the same way', [
      { $dateSubtract: { startDate: at('2021-05-31T00:00:00Z'), unit: 'quarter', amount: 1 } },
      { $dateAdd: { startDate: at('2021-11-30T06:00:00Z'), unit: 'quarter', amount: 1 } },
    ], [date('2021-02-28T00:00:00.000Z'), date('2022-02-28T06:00:00.000Z')]],
    ['units and amounts may be computed; an integral double is an integer', { $dateAdd: { startDate: '$d', unit: '$unit', amount: { $multiply: ['$amount', 1.0] } } }, date('2020-05-20T14:10:30.000Z')],
    ['a null or missing argument gives null', [
      { $dateAdd: { startDate: '$nope', unit: 'day', amount: 1 } },
      { $dateAdd: { startDate: '$d', unit: '$n', amount: 1 } },
      { $dateSubtract: { startDate: '$d', unit: 'day', amount: '$nope' } },
      { $dateAdd: { startDate: '$d', unit: 'day', amount: 1, timezone: '$n' } },
    ], [null, null, null, null]],
    ['the UTC time zone, by any of its names', { $dateAdd: { startDate: '$d', unit: 'day', amount: 1, timezone: '+00:00' } }, date('2020-05-19T14:10:30.000Z')],
  ]);
  errorCases(h, [
    ['an unknown unit', { $dateAdd: { startDate: '$d', unit: 'fortnight', amount: 1 } }, '$dateAdd', /unknown time unit value: fortnight/],
    ['a unit that is not a string', { $dateAdd: { startDate: '$d', unit: '$amount', amount: 1 } }, '$dateAdd', /requires 'unit' to be a string, but got int/],
    ['a fractional amount', { $dateAdd: { startDate: '$d', unit: 'day', amount: 1.5 } }, '$dateAdd', /expects integer amount of time units/],
    ['a start that is not a date', { $dateSubtract: { startDate: '$text', unit: 'day', amount: 1 } }, '$dateSubtract', /requires startDate to be convertible to a date/],
    ['a missing amount', { $dateAdd: { startDate: '$d', unit: 'day' } }, '$dateAdd', /requires startDate, unit, and amount to be present/],
    ['an unknown argument', { $dateAdd: { startDate: '$d', unit: 'day', amount: 1, when: 1 } }, '$dateAdd', /Unrecognized argument to \$dateAdd: when/],
    ['a result past the date range', { $dateAdd: { startDate: '$d', unit: 'year', amount: 10_000_000 } }, '$dateAdd', /date overflow/],
    ['an amount past what MongoDB accepts', { $dateAdd: { startDate: '$d', unit: 'year', amount: 1e15 } }, '$dateAdd', /invalid dateAdd 'amount' parameter value/],
    ['an unknown time zone', { $dateAdd: { startDate: '$d', unit: 'day', amount: 1, timezone: 'Mars/Olympus_Mons' } }, '$dateAdd', /^unrecognized time zone identifier: "Mars\/Olympus_Mons"$/],
  ]);
  it('refuses a bad constant unit before any document is read', async () => {
    expectQueryError(await h.aggregate([{ $project: { x: { $dateAdd: { startDate: '$d', unit: 'days', amount: 1 } } } }], 'empty'), '$dateAdd', /unknown time unit value: days/);
  });
});

describe('$dateDiff', () => {
  it('averages the days between purchase and delivery (the manual)', async () => {
    const res = await h.aggregate([{ $group: { _id: null, averageTime: { $avg: { $dateDiff: { startDate: '$purchased', endDate: '$delivered', unit: 'day' } } } } }], 'orders');
    expect(res.body.documents[0].averageTime).toBeCloseTo(14 / 3, 12);
  });
  valueCases(h, [
    ['one second apart across a new year is a year, a quarter, a month, a day (boundaries crossed)', ['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second', 'millisecond'].map((unit) => ({ $dateDiff: { startDate: '$start', endDate: '$end', unit } })), [1, 1, 1, 0, 1, 1, 1, 1, 1000], 'mingo'],
  ], 2);
  valueCases(h, [
    ['weeks from a Saturday to the Monday after, by the first day of the week', ['monday', 'sun', 'Saturday', 'TUE'].map((startOfWeek) => ({ $dateDiff: { startDate: '$start', endDate: '$end', unit: 'week', startOfWeek } })), [1, 1, 0, 0], 'mingo'],
    ['a negative difference when the end is earlier', { $dateDiff: { startDate: '$end', endDate: '$start', unit: 'day' } }, -2, 'mingo'],
  ], 3);
  valueCases(h, [
    ['the second boundary crossed by one millisecond (mingo rounds the duration instead)', { $dateDiff: { startDate: at('2021-01-01T00:00:00.999Z'), endDate: at('2021-01-01T00:00:01.000Z'), unit: 'second' } }, 1],
    ['null and missing give null; startOfWeek is read only for weeks', [
      { $dateDiff: { startDate: '$nope', endDate: '$d', unit: 'day' } },
      { $dateDiff: { startDate: '$d', endDate: '$n', unit: 'day' } },
      { $dateDiff: { startDate: '$d', endDate: '$d', unit: 'day', startOfWeek: '$nope' } },
      { $dateDiff: { startDate: '$d', endDate: '$d', unit: 'week', startOfWeek: '$nope' } },
    ], [null, null, 0, null]],
  ]);
  errorCases(h, [
    ['an end that is not a date', { $dateDiff: { startDate: '$d', endDate: '$text', unit: 'day' } }, '$dateDiff', /requires 'endDate' to be a date, but got string/],
    ['an unknown day of the week', { $dateDiff: { startDate: '$d', endDate: '$d', unit: 'week', startOfWeek: 'someday' } }, '$dateDiff', /cannot be recognized as a day of a week: someday/],
    ['a missing unit', { $dateDiff: { startDate: '$d', endDate: '$d' } }, '$dateDiff', /Missing 'unit' parameter to \$dateDiff/],
    ['an argument that is not an object', { $dateDiff: ['$d', '$d'] }, '$dateDiff', /only supports an object as its argument/],
  ]);
});

describe('$dateTrunc', () => {
  valueCases(h, [
    ['to the unit, bins counted from 2000-01-01', [
      { $dateTrunc: { date: '$d', unit: 'year' } },
      { $dateTrunc: { date: '$d', unit: 'quarter' } },
      { $dateTrunc: { date: '$d', unit: 'month' } },
      { $dateTrunc: { date: '$d', unit: 'day' } },
      { $dateTrunc: { date: '$d', unit: 'hour', binSize: 6 } },
      { $dateTrunc: { date: '$d', unit: 'minute', binSize: 15 } },
    ], [date('2020-01-01T00:00:00.000Z'), date('2020-04-01T00:00:00.000Z'), date('2020-05-01T00:00:00.000Z'), date('2020-05-18T00:00:00.000Z'), date('2020-05-18T12:00:00.000Z'), date('2020-05-18T14:00:00.000Z')], 'mingo'],
    ['weeks of two, starting Monday (the manual cakeSales example, in UTC)', { $dateTrunc: { date: '$d', unit: 'week', binSize: 2, startOfWeek: 'Monday' } }, date('2020-05-11T00:00:00.000Z'), 'mingo'],
    ['weeks start on Sunday by default', { $dateTrunc: { date: '$d', unit: 'week' } }, date('2020-05-17T00:00:00.000Z'), 'mingo'],
    ['months before the reference point (mingo gets these wrong)', { $dateTrunc: { date: at('1990-02-28T20:35:47Z'), unit: 'quarter' } }, date('1990-01-01T00:00:00.000Z')],
    ['null and missing give null', [{ $dateTrunc: { date: '$nope', unit: 'day' } }, { $dateTrunc: { date: '$d', unit: '$n' } }, { $dateTrunc: { date: '$d', unit: 'day', binSize: '$n' } }], [null, null, null]],
  ]);
  errorCases(h, [
    ['a bin size of 0', { $dateTrunc: { date: '$d', unit: 'day', binSize: 0 } }, '$dateTrunc', /requires 'binSize' to be greater than 0/],
    ['a fractional bin size', { $dateTrunc: { date: '$d', unit: 'day', binSize: 1.5 } }, '$dateTrunc', /requires 'binSize' to be a 64-bit integer/],
    ['a bin size past dateAdd', { $dateTrunc: { date: '$d', unit: 'month', binSize: 1e12 } }, '$dateTrunc', /dateTrunc unsupported binSize value/],
    ['a date that is a string', { $dateTrunc: { date: '$text', unit: 'day' } }, '$dateTrunc', /requires 'date' to be a date, but got string/],
    ['a missing date', { $dateTrunc: { unit: 'day' } }, '$dateTrunc', /Missing 'date' parameter to \$dateTrunc/],
  ]);
});

describe('$dateFromParts', () => {
  valueCases(h, [
    ['calendar parts (the manual)', { $dateFromParts: { year: 2017, month: 2, day: 8, hour: 12 } }, date('2017-02-08T12:00:00.000Z'), 'mingo'],
    ['ISO week parts (the manual)', { $dateFromParts: { isoWeekYear: 2017, isoWeek: 6, isoDayOfWeek: 3, hour: 12 } }, date('2017-02-08T12:00:00.000Z')],
    ['ISO week 1 starts on the Monday of the week of January 4th', [{ $dateFromParts: { isoWeekYear: 2021 } }, { $dateFromParts: { isoWeekYear: 2020, isoWeek: 53, isoDayOfWeek: 7 } }], [date('2021-01-04T00:00:00.000Z'), date('2021-01-03T00:00:00.000Z')]],
    ['out-of-range parts carry over (the manual: month 14, month 0)', [{ $dateFromParts: { year: 2017, month: 14, day: 1, hour: 12 } }, { $dateFromParts: { year: 2017, month: 0, day: 1, hour: 12 } }], [date('2018-02-01T12:00:00.000Z'), date('2016-12-01T12:00:00.000Z')], 'mingo'],
    ['a day past the month carries into the next (mingo clamps it)', [{ $dateFromParts: { year: 2017, month: 2, day: 31 } }, { $dateFromParts: { year: 2017, hour: -1, minute: 90, second: -1, millisecond: 1001 } }], [date('2017-03-03T00:00:00.000Z'), date('2017-01-01T00:30:00.001Z')]],
    ['years below 100 are years below 100', { $dateFromParts: { year: 5, month: 3 } }, date('0005-03-01T00:00:00.000Z')],
    ['a null or missing part gives null', [{ $dateFromParts: { year: 2017, month: '$n' } }, { $dateFromParts: { year: '$nope' } }, { $dateFromParts: { year: 2017, timezone: '$n' } }], [null, null, null]],
  ]);
  errorCases(h, [
    ['a year past 9999', { $dateFromParts: { year: 10000 } }, '$dateFromParts', /'year' must evaluate to an integer in the range 1 to 9999, found 10000/],
    ['a month past 16 bits', { $dateFromParts: { year: 2017, month: 40000 } }, '$dateFromParts', /'month' must evaluate to a value in the range \[-32768, 32767\]/],
    ['a fractional hour', { $dateFromParts: { year: 2017, hour: 1.5 } }, '$dateFromParts', /'hour' must evaluate to an integer, found double/],
    ['calendar and ISO parts together', { $dateFromParts: { year: 2017, isoWeek: 1 } }, '$dateFromParts', /does not allow mixing natural dates with ISO dates/],
    ['no year', { $dateFromParts: { month: 1 } }, '$dateFromParts', /requires either 'year' or 'isoWeekYear'/],
    ['an unknown part', { $dateFromParts: { year: 2017, weekday: 1 } }, '$dateFromParts', /Unrecognized argument to \$dateFromParts: weekday/],
  ]);
});

describe('$dateFromString', () => {
  valueCases(h, [
    ['an ISO string without an offset is UTC (the manual)', { $dateFromString: { dateString: '$s' } }, date('2017-02-08T12:10:40.787Z'), 'mingo'],
    ['a date alone is midnight (the manual)', { $dateFromString: { dateString: '2017-02-08' } }, date('2017-02-08T00:00:00.000Z'), 'mingo'],
    ['a month name, day and year (the manual)', { $dateFromString: { dateString: 'oct 20 2017' } }, date('2017-10-20T00:00:00.000Z')],
    ['with a format (the manual)', [{ $dateFromString: { dateString: '06-15-2018', format: '%m-%d-%Y' } }, { $dateFromString: { dateString: '15-06-2018', format: '%d-%m-%Y' } }], [date('2018-06-15T00:00:00.000Z'), date('2018-06-15T00:00:00.000Z')], 'mingo'],
    ['month names, milliseconds and an offset in the string', [
      { $dateFromString: { dateString: '15 June 2018 10:05:07.5 +0200', format: '%d %B %Y %H:%M:%S.%L %z' } },
      { $dateFromString: { dateString: 'Jun 15 2018 -60', format: '%b %d %Y %Z' } },
    ], [date('2018-06-15T08:05:07.500Z'), date('2018-06-15T01:00:00.000Z')]],
    ['ISO week year, week and day', { $dateFromString: { dateString: '2018-W06-3 12:00', format: '%G-W%V-%u %H:%M' } }, date('2018-02-07T12:00:00.000Z')],
    ['onNull for null and missing, onError for what does not parse (MongoDB rejects February 30th)', [
      { $dateFromString: { dateString: '$n', onNull: 'none' } },
      { $dateFromString: { dateString: '$nope' } },
      { $dateFromString: { dateString: '2017-02-30', format: '%Y-%m-%d', onError: 'bad' } },
      { $dateFromString: { dateString: '$amount', onError: 'not a string' } },
      { $dateFromString: { dateString: '2017-02-08 junk', onError: 'trailing' } },
    ], ['none', null, 'bad', 'not a string', 'trailing']],
  ]);
  errorCases(h, [
    ['a string that does not parse, without onError', { $dateFromString: { dateString: '2017-13-01', format: '%Y-%m-%d' } }, '$dateFromString', /Error parsing date string '2017-13-01'/],
    ['an unknown format character, even with onError', { $dateFromString: { dateString: '$s', format: '%Y %q', onError: 1 } }, '$dateFromString', /Invalid format character '%q' in format string/],
    ['a missing dateString', { $dateFromString: { format: '%Y' } }, '$dateFromString', /Missing 'dateString' parameter to \$dateFromString/],
    ['an unknown time zone, even for a null string', { $dateFromString: { dateString: '$n', timezone: 'America/Gotham' } }, '$dateFromString', /unrecognized time zone identifier: "America\/Gotham"/],
  ]);
});

describe('$dateToString with null arguments', () => {
  valueCases(h, [
    ['a null date gives onNull, a null time zone null (MongoDB)', [
      { $dateToString: { date: '$nope', onNull: 'none', timezone: 'UTC' } },
      { $dateToString: { date: '$d', onNull: 'none', timezone: '$n' } },
      { $dateToString: { date: '$d', format: '%Y', timezone: '+00' } },
    ], ['none', null, '2020']],
    ['a null or missing format gives null; with a null date, onNull first (MongoDB)', [
      { $dateToString: { date: '$d', format: '$n' } },
      { $dateToString: { date: '$d', format: '$nope', timezone: 'Europe/Paris' } },
      { $dateToString: { date: '$nope', format: null, onNull: 'none' } },
    ], [null, null, 'none']],
  ]);
  // MongoDB checks a given format before it looks at the date.
  errorCases(h, [
    ['a format that is not a string, even for a null date', { $dateToString: { date: '$nope', format: 5, onNull: 'none' } }, '$dateToString', /'format' be a string, found: int/],
    ['a bad format specifier, even for a null date', { $dateToString: { date: '$nope', format: '%Q', onNull: 'none' } }, '$dateToString', /Invalid format character '%Q'/],
  ]);
});

describe('date part operators given the wrong number of arguments', () => {
  errorCases(h, [
    ['$year with two', { $year: ['$d', '$d'] }, '$year', /Expression \$year takes exactly 1 arguments\. 2 were passed in\./],
    ['$dayOfWeek with none', { $dayOfWeek: [] }, '$dayOfWeek', /Expression \$dayOfWeek takes exactly 1 arguments\. 0 were passed in\./],
  ]);
});
