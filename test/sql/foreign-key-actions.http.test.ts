// Foreign key actions (engine/sql/exec/dml.ts #checkReferenced / #referentialActions, ddl.ts
// fkActions): ON DELETE and ON UPDATE with NO ACTION, RESTRICT, CASCADE, SET NULL and SET DEFAULT,
// as ORMs write them (Prisma's relations are `ON DELETE RESTRICT ON UPDATE CASCADE`). Each
// statement runs in tetradb over HTTP and in PostgreSQL (PGlite) with the same outcome: its rows,
// or its SQLSTATE, message, DETAIL and HINT. A refused statement changes nothing.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { afterRestart, alikeFull } from './pg-outcome.js';
import { serverForFile, type FileServer } from '../helpers/server.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

/** Each statement on both, in order, with the same outcome; the SQLSTATEs of those refused. */
const alike = (statements: string[], on: FileServer = file): Promise<string[]> => alikeFull(pg, on, statements);

describe('ON UPDATE and ON DELETE actions', () => {
  it('ON UPDATE CASCADE gives the referencing rows the new key; SET NULL and SET DEFAULT theirs', async () => {
    const refused = await alike([
      'CREATE TABLE p (id int PRIMARY KEY, code text UNIQUE)',
      'CREATE TABLE c (id int PRIMARY KEY, pid int DEFAULT 0 REFERENCES p ON UPDATE CASCADE ON DELETE SET DEFAULT, pcode text REFERENCES p (code) ON UPDATE SET NULL ON DELETE SET NULL)',
      "INSERT INTO p VALUES (0, 'zero'), (1, 'one'), (2, 'two'), (3, 'three')",
      "INSERT INTO c VALUES (10, 1, 'one'), (11, 2, 'two'), (12, 1, NULL), (13, 3, 'three')",
      'UPDATE p SET id = 5 WHERE id = 1',
      'SELECT * FROM c ORDER BY id',
      "UPDATE p SET code = 'TWO' WHERE id = 2",
      'SELECT * FROM c ORDER BY id',
      // several keys in one statement: each referencing row follows its own key once
      'UPDATE p SET id = id + 10 WHERE id > 0',
      'SELECT * FROM c ORDER BY id',
      'UPDATE p SET id = id - 9 WHERE id < 14 AND id > 10',
      'SELECT * FROM p ORDER BY id',
      'SELECT * FROM c ORDER BY id',
      // ON DELETE SET DEFAULT. A row whose key does not change is not checked again, as in
      // PostgreSQL: deleting the default's own row leaves the rows that hold it.
      'DELETE FROM p WHERE id = 13',
      'SELECT * FROM c ORDER BY id',
      'DELETE FROM p WHERE id = 0',
      'SELECT * FROM c ORDER BY id',
      'UPDATE c SET pid = 2 WHERE pid = 0',
      'DELETE FROM p WHERE id = 0',
      'SELECT * FROM c ORDER BY id',
      'SELECT * FROM p ORDER BY id',
      // a default no row holds
      'CREATE TABLE c2 (pid int DEFAULT 99 REFERENCES p ON DELETE SET DEFAULT)',
      'INSERT INTO c2 VALUES (2)',
      'DELETE FROM p WHERE id = 2',
      'SELECT * FROM c2',
    ]);
    expect(refused).toEqual(['23503']);
  });

  it('NO ACTION and RESTRICT refuse; a cascade goes on through the referencing table\'s own keys', async () => {
    const refused = await alike([
      'CREATE TABLE a (id int PRIMARY KEY)',
      'CREATE TABLE b (id int PRIMARY KEY, aid int REFERENCES a ON UPDATE CASCADE ON DELETE CASCADE)',
      'CREATE TABLE d (id int PRIMARY KEY, bid int REFERENCES b ON UPDATE RESTRICT ON DELETE NO ACTION)',
      'CREATE TABLE e (bid int REFERENCES b (id) ON UPDATE CASCADE ON DELETE SET NULL, note text)',
      'INSERT INTO a VALUES (1), (2)',
      'INSERT INTO b VALUES (10, 1), (20, 2)',
      "INSERT INTO e VALUES (10, 'x'), (20, 'y')",
      'UPDATE a SET id = 3 WHERE id = 1',
      'SELECT * FROM b ORDER BY id',
      'UPDATE b SET id = 30 WHERE aid = 3',
      'SELECT * FROM e ORDER BY note',
      'INSERT INTO d VALUES (1, 30)',
      'UPDATE b SET id = 40 WHERE id = 30',
      'DELETE FROM a WHERE id = 3',
      'DELETE FROM d',
      'DELETE FROM a WHERE id = 3',
      'SELECT * FROM b ORDER BY id',
      'SELECT * FROM e ORDER BY note',
      // NO ACTION and RESTRICT are checked at the end of the statement: a statement that removes
      // the rows referencing a key with the key passes (a tree deleted whole)
      'CREATE TABLE tree (id int PRIMARY KEY, parent int REFERENCES tree)',
      'INSERT INTO tree VALUES (1, NULL), (2, 1), (3, 2), (4, 1)',
      'DELETE FROM tree WHERE id IN (1, 2)',
      'DELETE FROM tree WHERE id <> 3',
      'SELECT * FROM tree ORDER BY id',
      'DELETE FROM tree',
      'SELECT * FROM tree ORDER BY id',
      'CREATE TABLE rtree (id int PRIMARY KEY, parent int REFERENCES rtree ON DELETE RESTRICT)',
      'INSERT INTO rtree VALUES (1, NULL), (2, 1)',
      'DELETE FROM rtree',
      'SELECT * FROM rtree ORDER BY id',
      // a self-reference
      'CREATE TABLE s (id int PRIMARY KEY, parent int REFERENCES s ON UPDATE CASCADE ON DELETE CASCADE)',
      'INSERT INTO s VALUES (1, NULL), (2, 1), (3, 2), (4, NULL)',
      'UPDATE s SET id = 100 WHERE id = 1',
      'SELECT * FROM s ORDER BY id',
      'DELETE FROM s WHERE id = 100',
      'SELECT * FROM s ORDER BY id',
    ]);
    expect(refused).toEqual(['23001', '23503', '23503', '23503']);
  });

  it('refuses an action that would write a generated column, and a cascade that breaks the referencing table\'s constraints', async () => {
    const refused = await alike([
      'CREATE TABLE gp (id int PRIMARY KEY)',
      'CREATE TABLE g1 (a int, g int GENERATED ALWAYS AS (a) STORED REFERENCES gp ON UPDATE CASCADE)',
      'CREATE TABLE g2 (a int, g int GENERATED ALWAYS AS (a) STORED REFERENCES gp ON DELETE SET DEFAULT)',
      'CREATE TABLE g3 (a int, g int GENERATED ALWAYS AS (a) STORED REFERENCES gp ON UPDATE SET NULL)',
      'CREATE TABLE g4 (a int REFERENCES gp ON UPDATE SET NULL NOT NULL, b int CHECK (b < 100) REFERENCES gp ON UPDATE CASCADE)',
      'INSERT INTO gp VALUES (1), (2)',
      'INSERT INTO g4 VALUES (1, 2)',
      'UPDATE gp SET id = 10 WHERE id = 1',
      'UPDATE gp SET id = 200 WHERE id = 2',
      'UPDATE gp SET id = 20 WHERE id = 2',
      'SELECT * FROM g4',
      'SELECT * FROM gp ORDER BY id',
    ]);
    expect(refused).toEqual(['42601', '42601', '42601', '23502', '23514']);
  });

  it('keeps the actions across a restart', async () => {
    await afterRestart(
      pg,
      ['CREATE TABLE rp (id int PRIMARY KEY)', 'CREATE TABLE rc (pid int REFERENCES rp ON UPDATE CASCADE ON DELETE SET NULL)', 'INSERT INTO rp VALUES (1)', 'INSERT INTO rc VALUES (1)'],
      async (after) => {
        await alike(['UPDATE rp SET id = 2', 'SELECT * FROM rc', 'DELETE FROM rp', 'SELECT * FROM rc'], after);
      },
    );
  });
});
