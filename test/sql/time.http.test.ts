// The time-of-day types and AT TIME ZONE (engine/sql/sql-cast.ts parseTimeOfDay, operators.ts,
// functions/time-functions.ts, time-zones.ts, sql-grammar-gaps.ts rewriteAtTimeZone / rewriteTimetz,
// store/sql-codec.ts): input and its refusals, output, precision, casts, arithmetic, functions,
// comparison and order, keys and indexes, information_schema, zones (IANA, POSIX offsets, intervals,
// daylight-saving edges), and a restart. Each statement runs in tetradb over HTTP and in PostgreSQL
// (PGlite) with the same outcome: rows as PostgreSQL's text, or SQLSTATE, message, DETAIL and HINT.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { afterRestart } from './pg-outcome.js';
import { http, serverForFile, type FileServer } from '../helpers/server.js';
import { renderOurs, usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

/** PGlite options that keep every value as PostgreSQL's text output (every type, time and timetz among them). */
const RAW = { rowMode: 'array' as const, parsers: Object.fromEntries(Array.from({ length: 4000 }, (_, oid) => [oid, (x: string) => x])) };

type Outcome = { rows: (string | null)[][] } | { sqlstate: string; message: string; detail?: string; hint?: string };

async function theirs(sql: string): Promise<Outcome> {
  return pg.query(sql, [], RAW).then(
    (r) => ({ rows: r.rows as (string | null)[][] }),
    (e: { code: string; message: string; detail?: string; hint?: string }) => ({ sqlstate: e.code, message: e.message, detail: e.detail, hint: e.hint }),
  );
}

async function ours(sql: string, on: FileServer): Promise<Outcome> {
  const res = await http(on.server.url, 'POST', '/api/sql/query', { json: { sql, rowMode: 'array' }, apiKey: on.apiKey });
  if (res.status !== 200) {
    const e = res.body.error as { message: string; details?: { sqlstate?: string; detail?: string; hint?: string } };
    return { sqlstate: e.details?.sqlstate ?? res.body.error.code, message: e.message, detail: e.details?.detail, hint: e.details?.hint };
  }
  const columns = res.body.columns as { type: string }[];
  return { rows: (res.body.rows as unknown[][]).map((row) => row.map((v, i) => renderOurs(v, columns[i]!.type))) };
}

/** Each statement on both, in order, with the same outcome; the SQLSTATEs of those refused. */
async function alike(statements: string[], on: FileServer = file): Promise<string[]> {
  const refused: string[] = [];
  for (const sql of statements) {
    const expected = await theirs(sql);
    expect(await ours(sql, on), sql).toEqual(expected);
    if ('sqlstate' in expected) refused.push(expected.sqlstate);
  }
  return refused;
}

describe('time and timetz', () => {
  it('reads the input forms PostgreSQL reads, refuses the rest with its errors, and prints as it prints', async () => {
    const inputs = [
      '10:00',
      '10:00:01',
      '10:00:01.5',
      '1:2:3',
      '00:00',
      '24:00',
      '24:00:00',
      '23:59:59.9999995',
      '10:00:00.1234567',
      '10:00:00.',
      '11:30.5',
      '59:59.9999999',
      ' 10:00 ',
      '10:00 PM',
      '12:00 am',
      '12:30 pm',
      '10:00:60',
      'T10:00',
      'allballs',
      '2024-01-01 10:00',
      '10:00+02',
      '10:00:00-05:30',
      '10:00+2',
      '10:00+0230',
      '10:00+02:30:15',
      '10:00 -5',
      '10:00z',
      '10:00 UTC',
      '10:00+15:59',
      '10:00-15:59:59',
      // refused
      '24:00:01',
      '25:00',
      '10:60',
      '13:00 pm',
      'abc',
      '',
      '-10:00',
      '10',
      '10:00+16',
      '75:30.5',
      '10:61.5',
    ];
    const refused = await alike(inputs.flatMap((s) => [`SELECT '${s}'::time, time '${s}', CAST('${s}' AS time without time zone)`, `SELECT '${s}'::timetz, timetz '${s}', CAST('${s}' AS time with time zone)`]));
    expect(refused.length).toBeGreaterThan(14);
    expect(new Set(refused)).toEqual(new Set(['22007', '22008', '22009']));
  });

  it('rounds to a precision as PostgreSQL, over HTTP as its text with the type names PostgreSQL gives', async () => {
    await alike([
      "SELECT '10:00:01.5'::time(0), '10:00:02.5'::time(0), '23:59:59.5'::time(0), '10:00:00.125'::time(2), '10:00:00.135'::time(2), '10:00'::time(7)",
      "SELECT '10:00:00.123456+02'::timetz(3), timetz(2) '10:00:00.555+02', CAST('10:00:00.5-01' AS time(0) with time zone), '10:00:00.123456'::time(2)::text",
    ]);
    const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql: "SELECT time '10:30:00.5' AS t, timetz '10:30+05:30' AS z, time '10:00' AT TIME ZONE 'UTC'" }, apiKey: file.apiKey });
    expect(res.status, res.text).toBe(200);
    expect(res.body.columns).toEqual([
      { name: 't', type: 'time' },
      { name: 'z', type: 'timetz' },
      { name: 'timezone', type: 'timetz' },
    ]);
    expect(res.body.rows).toEqual([{ t: '10:30:00.5', z: '10:30:00+05:30', timezone: '10:00:00+00' }]);
  });

  it('casts, computes and compares as PostgreSQL', async () => {
    const refused = await alike([
      "SELECT timestamp '2024-01-01 10:30:01.5'::time, timestamptz '2024-01-01 10:30+02'::time, timestamptz '2024-01-01 10:30+02'::timetz, time '10:00'::interval, interval '25 hours'::time, interval '-1 hour'::time, interval '1 day 2 hours'::time, time '10:00'::timetz, timetz '10:00+02'::time",
      "SELECT time '10:00'::text || '!', timetz '10:00+02'::text, '10:30'::text::time, time '10:00' || 'x'",
      "SELECT time '10:00'::timestamp",
      "SELECT time '10:00' + interval '1 hour', time '23:00' + interval '2 hours', time '01:00' - interval '2 hours', time '10:00' - time '08:30', time '10:00' + interval '1 day 1 month 1 hour', time '24:00' + interval '0'",
      "SELECT date '2024-01-01' + time '10:00', time '10:00' + date '2024-01-01', date '2024-01-01' - time '10:00', interval '1h' + time '10:00', date '2024-01-01' + timetz '10:00+02'",
      "SELECT timetz '10:00+02' + interval '1 hour', timetz '10:00+02' - interval '11 hour', time '10:00' + '1 hour', time '10:00' - '01:00', '10:00' - time '01:00'",
      "SELECT time '10:00' * 2, time '10:00' / 4, -time '10:00'",
      "SELECT time '10:00' + 1",
      "SELECT time '10:00' + time '01:00'",
      "SELECT time '10:00' - timetz '10:00+02'",
      "SELECT timetz '10:00+02' - timetz '10:00+02'",
      "SELECT time '10:00' = timetz '10:00+00', time '10:00' < timetz '10:00+02', timetz '10:00+02' = timetz '08:00+00', timetz '10:00+02' < timetz '08:00+00', timetz '10:00+02' = time '08:00'",
      "SELECT time '10:00' < '11:00', time '10:00' = '10:00:00+05', timetz '10:00+02' = '10:00+02', time '10:00' = interval '10 hours', time '10:00' IN ('10:00', '11:00'), time '10:30' BETWEEN '10:00' AND '11:00', time '10:30' NOT BETWEEN time '10:40' AND '11:00'",
      "SELECT CASE WHEN true THEN time '10:00' ELSE timetz '10:00+02' END, greatest(time '10:00', time '11:00'), least(timetz '10:00+02', timetz '09:00+00')",
      "SELECT COALESCE(time '10:00', interval '1h')",
    ]);
    expect(refused).toEqual(['42846', '42883', '42725', '42883', '42883', '42804']);
  });

  it('has the functions and the clock values of PostgreSQL', async () => {
    const refused = await alike([
      "SELECT extract(hour from time '10:30:15.5'), extract(minute from time '10:30'), extract(second from time '10:30:15.5'), extract(epoch from time '10:30:15.5'), extract(milliseconds from time '10:30:15.5'), extract(microseconds from time '10:30:15.5'), extract(epoch from timetz '10:30+02'), extract(hour from timetz '10:30+02')",
      "SELECT date_part('hour', time '10:30'), date_part('epoch', timetz '10:30+02'), date_part('timezone', timetz '10:30+02:30'), date_part('timezone_hour', timetz '10:30-02:30'), date_part('timezone_minute', timetz '10:30-02:30')",
      "SELECT extract(day from time '10:30')",
      "SELECT date_part('timezone', time '10:30')",
      "SELECT date_part('foo', time '10:30')",
      "SELECT date_trunc('hour', time '10:30'), pg_typeof(date_trunc('hour', time '10:30'))",
      "SELECT date_trunc('hour', timetz '10:30+02')",
      'SELECT make_time(10, 30, 15.5), make_time(24, 0, 0), make_time(0, 0, 59.9999999), pg_typeof(make_time(1, 2, 3))',
      'SELECT make_time(25, 0, 0)',
      'SELECT make_time(24, 0, 0.1)',
      'SELECT make_time(10, 60, 0)',
      'SELECT make_time(1, 2, -1)',
      "SELECT min(x), max(x), count(DISTINCT x) FROM (VALUES (time '10:00'), (time '09:00'), (time '10:00')) v(x)",
      "SELECT min(x), max(x), count(DISTINCT x) FROM (VALUES (timetz '10:00+02'), (timetz '09:00+00'), (timetz '08:00+00'), (timetz '10:00+02')) v(x)",
      'SELECT pg_typeof(current_time), pg_typeof(current_time(2)), pg_typeof(localtime), pg_typeof(localtime(1)), pg_typeof(localtimestamp), pg_typeof(localtimestamp(2))',
      // The session's zone is UTC on both sides.
      "CREATE TABLE dt (a time DEFAULT '12:00', b timetz DEFAULT current_time, c time DEFAULT localtime, d time(0) DEFAULT localtime(2), e timestamp DEFAULT localtimestamp(3), f timetz DEFAULT current_time(1), g timestamptz DEFAULT current_timestamp(2))",
      "SELECT column_name, column_default FROM information_schema.columns WHERE table_name = 'dt' ORDER BY ordinal_position",
      'INSERT INTO dt DEFAULT VALUES',
      'SELECT a, d IS NOT NULL, pg_typeof(b), pg_typeof(f) FROM dt',
      "SELECT current_time(0) = localtime(0)::timetz, localtime = (now() AT TIME ZONE 'UTC')::time, localtimestamp = now() AT TIME ZONE 'UTC', localtimestamp(0) <= localtimestamp + interval '1 second', date_part('timezone', current_time)",
    ]);
    expect(refused).toEqual(['0A000', '0A000', '22023', '42883', '22008', '22008', '22008', '22008']);
  });

  it('orders timetz by its UTC time, then its zone, and keeps keys, unique and other indexes', async () => {
    const refused = await alike([
      'CREATE TABLE sched (id int PRIMARY KEY, opens time NOT NULL, closes time(0), tz timetz, at3 time(3) with time zone, ts timestamp)',
      "INSERT INTO sched VALUES (1, '09:00', '17:30:00.6', '09:00+02', '10:00:00.12345+01', '2024-01-01 10:00'), (2, '08:15:30', '12:00', '08:00+00', NULL, NULL), (3, '24:00', NULL, '23:00-05', '01:00+03', '2024-06-01 23:59:59.5')",
      "INSERT INTO sched (id, opens) VALUES (7, timestamp '2024-01-01 07:45')",
      "INSERT INTO sched (id, opens, tz) VALUES (8, time '07:00', time '07:00'), (9, interval '5 hours', timestamptz '2024-01-01 06:00+02')",
      "INSERT INTO sched (id, opens, closes) VALUES (11, '06:00', timetz '10:00+05')",
      // refused, and the table is left as it was
      "INSERT INTO sched VALUES (4, '08:00', NULL, NULL, NULL, NULL), (5, '25:00', NULL, NULL, NULL, NULL)",
      "INSERT INTO sched VALUES (6, 'x', NULL, NULL, NULL, NULL)",
      'INSERT INTO sched VALUES (6, 1, NULL, NULL, NULL, NULL)',
      "INSERT INTO sched (id, opens, tz) VALUES (10, '06:00', timestamp '2024-01-01 06:00')",
      "UPDATE sched SET opens = '24:00:01' WHERE id = 1",
      'SELECT * FROM sched ORDER BY id',
      'SELECT id FROM sched ORDER BY opens DESC, id',
      'SELECT id, tz FROM sched ORDER BY tz NULLS FIRST, id',
      'SELECT opens, count(*) FROM sched GROUP BY opens ORDER BY 1',
      'SELECT DISTINCT tz FROM sched WHERE tz IS NOT NULL ORDER BY tz DESC',
      "SELECT column_name, data_type, datetime_precision, udt_name FROM information_schema.columns WHERE table_name = 'sched' ORDER BY ordinal_position",
      'SELECT pg_typeof(opens), pg_typeof(tz), pg_typeof(at3) FROM sched WHERE id = 1',
      'CREATE INDEX sched_opens ON sched (opens)',
      'CREATE UNIQUE INDEX sched_tz ON sched (tz)',
      "SELECT id FROM sched WHERE opens BETWEEN '07:00' AND '09:00' ORDER BY opens",
      "SELECT id FROM sched WHERE opens > time '08:00' ORDER BY id",
      // 10:00+03 is 07:00 UTC, as 09:00+02 is: equal instants, other zones
      "SELECT id FROM sched WHERE tz = '07:00+00'",
      "INSERT INTO sched (id, opens, tz) VALUES (20, '05:00', '11:00+04'), (21, '05:00', '09:00+02')",
      "INSERT INTO sched (id, opens, tz) VALUES (22, '05:00', '09:00:00+02:00')",
      'ALTER TABLE sched ALTER COLUMN closes TYPE text',
      'ALTER TABLE sched ALTER COLUMN closes TYPE time',
      'ALTER TABLE sched ALTER COLUMN closes TYPE time USING closes::time',
      "ALTER TABLE sched ADD COLUMN extra time(0) DEFAULT '12:00:00.7'",
      'ALTER TABLE sched ALTER COLUMN ts TYPE time',
      'SELECT id, closes, extra, ts FROM sched ORDER BY id',
      'CREATE TABLE tk (t time PRIMARY KEY, z timetz UNIQUE)',
      "INSERT INTO tk VALUES ('10:00', '10:00+02'), ('10:00:00.000001', '08:00+00'), ('00:00', '08:00+00:00:01'), ('24:00', '23:00-05'), ('23:59:59.999999', '01:00+03')",
      "INSERT INTO tk VALUES ('10:00', NULL)",
      "INSERT INTO tk VALUES ('11:00', '10:00:00+02')",
      'SELECT * FROM tk ORDER BY z',
      'SELECT * FROM tk ORDER BY t DESC',
      "SELECT t FROM tk WHERE t >= '10:00' ORDER BY t",
      "SELECT z FROM tk WHERE z < '08:00+00' ORDER BY z DESC",
      "CREATE TABLE ct AS SELECT time '10:00' AS a, timetz '10:00+02' AS b, localtime AS c",
      "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'ct' ORDER BY ordinal_position",
    ]);
    expect(refused).toEqual(['22008', '22007', '42804', '42804', '22008', '23505', '23505', '42804', '23505', '23505']);
  });

  it('makes arrays of them', async () => {
    await alike([
      'CREATE TABLE ta (id int PRIMARY KEY, a time[], b timetz(0)[])',
      "INSERT INTO ta VALUES (1, '{10:00,09:30:00.5}', ARRAY[timetz '10:00:00.6+02']), (2, ARRAY['08:00'::time], '{}')",
      'SELECT id, a::text, b::text, a[2], pg_typeof(b), array_length(a, 1) FROM ta ORDER BY a',
      "SELECT ARRAY[time '10:00', '11:00']::text, '{10:00,11:30.5}'::time(0)[]::text, ARRAY[numeric '1.50', 2]::text",
    ]);
  });

  it('uses an index on a time column for a range', async () => {
    await alike([
      'CREATE TABLE ev (id int PRIMARY KEY, t time)',
      'CREATE INDEX ev_t ON ev (t)',
      'INSERT INTO ev SELECT g, make_time(g % 24, g % 60, 0) FROM generate_series(1, 500) g',
      "SELECT id, t FROM ev WHERE t BETWEEN '10:00' AND '10:30' ORDER BY t, id",
      "SELECT count(*) FROM ev WHERE t > '22:30' AND t < time '23:59'",
    ]);
    const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql: "EXPLAIN SELECT id FROM ev WHERE t BETWEEN '10:00' AND '10:30'", rowMode: 'array' }, apiKey: file.apiKey });
    expect(res.status, res.text).toBe(200);
    expect(JSON.stringify(res.body.rows)).toMatch(/Index Scan using ev_t on ev/);
  });
});

describe('AT TIME ZONE', () => {
  it('converts timestamptz to local time and back, across daylight-saving changes, as PostgreSQL', async () => {
    const paris = (s: string): string => `timestamptz '${s}' AT TIME ZONE 'Europe/Paris'`;
    const parisLocal = (s: string): string => `timestamp '${s}' AT TIME ZONE 'Europe/Paris'`;
    const ny = (s: string): string => `timestamp '${s}' AT TIME ZONE 'America/New_York'`;
    await alike([
      // spring forward in Paris: 02:00 local becomes 03:00 at 01:00 UTC
      `SELECT ${paris('2024-03-31 00:59:59+00')}, ${paris('2024-03-31 01:00:00+00')}, ${paris('2024-10-27 00:59:59+00')}, ${paris('2024-10-27 01:00:00+00')}`,
      // a skipped local time takes the offset before the change, a repeated one the offset after it
      `SELECT ${parisLocal('2024-03-31 02:30')}, ${parisLocal('2024-03-31 03:00')}, ${parisLocal('2024-10-27 02:30')}, ${parisLocal('2024-10-27 03:00')}, ${parisLocal('2024-10-27 01:59:59')}`,
      `SELECT ${ny('2018-03-11 02:30')}, ${ny('2018-11-04 01:30')}, ${ny('2024-03-10 01:59:59')}, ${ny('2024-11-03 02:00')}`,
      "SELECT timezone('America/New_York', timestamptz '2024-03-10 06:59:59+00'), timezone('America/New_York', timestamptz '2024-03-10 07:00:00+00'), timezone('Europe/Paris', timestamptz '2024-06-01 12:00+00'), timezone('UTC', timestamp '2024-06-01 12:00'), timezone(interval '1 hour', timestamp '2024-06-01 12:00')",
      "SELECT timestamp '2024-06-01 12:00' AT TIME ZONE 'Asia/Kathmandu', timestamp '2024-06-01 12:00' AT TIME ZONE 'Australia/Lord_Howe', timestamptz '2024-06-01 12:00+00' AT TIME ZONE 'America/Argentina/Buenos_Aires', timestamptz '2024-06-01 12:00+00' AT TIME ZONE 'US/Eastern', timestamptz '2024-06-01 12:00+00' AT TIME ZONE 'europe/paris'",
      // local mean time before a zone's first rule, as both zone databases have it
      "SELECT timestamptz '1900-01-01 00:00+00' AT TIME ZONE 'Europe/Paris', timestamptz '1800-01-01 00:00+00' AT TIME ZONE 'America/New_York', timestamptz '1950-01-01 00:00+00' AT TIME ZONE 'Asia/Kolkata', timestamptz '2100-07-01 00:00+00' AT TIME ZONE 'Europe/Paris'",
    ]);
  });

  it('reads offsets with PostgreSQL\'s POSIX sign, intervals, UTC names and refuses unknown zones', async () => {
    const at = (zone: string): string => `timestamptz '2024-06-01 12:00+00' AT TIME ZONE ${zone}`;
    const refused = await alike([
      `SELECT ${at("'+02'")}, ${at("'-05:30'")}, ${at("'UTC+2'")}, ${at("'2'")}, ${at("'FOO3'")}, ${at("'+02:30:15'")}, ${at("'+25'")}, ${at("'Etc/GMT+2'")}, ${at("'GMT+2'")}`,
      `SELECT ${at("INTERVAL '2 hours'")}, ${at("INTERVAL '-05:30'")}, ${at("'UTC'")}, ${at("'utc'")}, ${at("'Z'")}, ${at("'GMT'")}, ${at('NULL')}`,
      `SELECT ${at("'foo'")}`,
      `SELECT ${at("'+200'")}`,
      `SELECT ${at("' UTC'")}`,
      `SELECT ${at("''")}`,
      `SELECT ${at("INTERVAL '1 day'")}`,
      `SELECT ${at("INTERVAL '1 month'")}`,
      "SELECT 1 AT TIME ZONE 'UTC'",
      "SELECT timezone('UTC', 1)",
    ]);
    expect(refused).toEqual(['22023', '22023', '22023', '22023', '22023', '22023', '42883', '42883']);
  });

  it('works after any operand with PostgreSQL\'s precedence, and on timetz and time', async () => {
    await alike([
      'CREATE TABLE tzv (id int PRIMARY KEY, ts timestamp, tstz timestamptz, zone text)',
      "INSERT INTO tzv VALUES (1, '2024-03-31 02:30', '2024-03-31 01:00+00', 'Europe/Paris'), (2, '2024-11-03 01:30', '2024-11-03 06:00+00', 'America/New_York'), (3, '2024-06-01 12:00', '2024-06-01 12:00+00', '-05:30'), (4, NULL, NULL, 'UTC')",
      'SELECT id, ts AT TIME ZONE zone, tstz AT TIME ZONE zone, (ts AT TIME ZONE zone) AT TIME ZONE zone FROM tzv ORDER BY id',
      "SELECT ts AT TIME ZONE 'UTC' AT TIME ZONE 'Asia/Tokyo' FROM tzv WHERE id = 3",
      "SELECT timestamp '2024-06-01 12:00' AT TIME ZONE 'Europe/Paris' + interval '1 hour', - interval '1 hour' + timestamp '2024-06-01 12:00' AT TIME ZONE 'UTC', ('2024-06-01 12:00'::timestamp) AT TIME ZONE 'Europe/Paris', CAST('2024-06-01 12:00' AS timestamp) AT TIME ZONE 'Europe/Paris', '2024-06-01 12:00'::timestamp AT TIME ZONE 'Europe/Paris'",
      "SELECT '2024-01-01 10:00' AT TIME ZONE 'UTC', pg_typeof('2024-01-01 10:00' AT TIME ZONE 'UTC'), date '2024-01-01' AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC' = localtimestamp",
      "SELECT (timestamptz '2024-06-01 12:00+00' AT TIME ZONE 'Europe/Paris')::date, extract(hour from timestamptz '2024-06-01 12:00+00' AT TIME ZONE 'Europe/Paris'), timestamptz '2024-06-01 12:00+00' AT TIME ZONE 'UTC' COLLATE \"C\"",
      "SELECT timetz '10:00+02' AT TIME ZONE '+05', timetz '23:00+00' AT TIME ZONE INTERVAL '3 hours', time '10:00' AT TIME ZONE 'UTC', pg_typeof(time '10:00' AT TIME ZONE 'UTC'), timetz '10:00+02' AT TIME ZONE 'Europe/Paris'",
      "SELECT time '10:00' AT TIME ZONE INTERVAL '1 day'",
      "SELECT id FROM tzv WHERE tstz AT TIME ZONE 'Europe/Paris' < timestamp '2024-04-01' ORDER BY id",
    ]);
  });
});

describe('time across a restart', () => {
  it('keeps values, keys and index order', async () => {
    await afterRestart(
      pg,
      [
        'CREATE TABLE rt (t time PRIMARY KEY, z timetz, n int)',
        'CREATE INDEX rt_z ON rt (z)',
        "INSERT INTO rt VALUES ('10:00', '10:00+02', 1), ('08:30:00.25', '08:00+00', 2), ('24:00', '23:00-05', 3), ('00:00', '09:00+01', 4)",
      ],
      async (after) => {
        await alike(
          [
            'SELECT * FROM rt ORDER BY t',
            'SELECT n, z FROM rt ORDER BY z, n',
            "SELECT n FROM rt WHERE z >= '08:00+00' ORDER BY z DESC",
            "SELECT n FROM rt WHERE t BETWEEN '08:00' AND '23:00' ORDER BY t",
            "INSERT INTO rt VALUES ('10:00', NULL, 5)",
          ],
          after,
        );
      },
    );
  });
});
