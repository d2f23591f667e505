// A plain-format dump as PostgreSQL 15's `pg_dump --inserts --no-owner` writes it (preamble,
// tables, a serial's sequence made and owned by hand, an identity added by ALTER TABLE, rows,
// setval, constraints and an index added last), posted as one SQL request; the database it
// restores answers as the same dump restored into PostgreSQL (PGlite), before and after a restart.
import type { PGlite } from '@electric-sql/pglite';
import { describe, expect, it } from 'vitest';
import { http, serverForFile, type FileServer } from '../helpers/server.js';
import { afterRestart, oursFull, oursOf, theirsFull, theirsOf } from './pg-outcome.js';
import { usePglite } from './sql-pg-support.js';

const file = serverForFile();
let pg: PGlite;
usePglite((db) => (pg = db));

const DUMP = `--
-- PostgreSQL database dump
--

-- Dumped from database version 15.8
-- Dumped by pg_dump version 15.8

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: authors; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.authors (
    id integer NOT NULL,
    name text NOT NULL,
    born date
);


--
-- Name: TABLE authors; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON TABLE public.authors IS 'People who wrote the books';


--
-- Name: COLUMN authors.born; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.authors.born IS 'Date of birth, if it''s known';


--
-- Name: authors_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.authors_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: authors_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.authors_id_seq OWNED BY public.authors.id;


--
-- Name: books; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.books (
    id bigint NOT NULL,
    author_id integer NOT NULL,
    title text NOT NULL,
    price numeric(8,2),
    CONSTRAINT books_price_check CHECK ((price >= (0)::numeric))
);


--
-- Name: books_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

ALTER TABLE public.books ALTER COLUMN id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.books_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);


--
-- Name: authors id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.authors ALTER COLUMN id SET DEFAULT nextval('public.authors_id_seq'::regclass);


--
-- Data for Name: authors; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.authors VALUES (1, 'Ursula K. Le Guin', '1929-10-21');
INSERT INTO public.authors VALUES (2, 'Octavia E. Butler', '1947-06-22');


--
-- Data for Name: books; Type: TABLE DATA; Schema: public; Owner: -
--

INSERT INTO public.books OVERRIDING SYSTEM VALUE VALUES (1, 1, 'The Dispossessed', 12.50);
INSERT INTO public.books OVERRIDING SYSTEM VALUE VALUES (2, 2, 'Kindred', 9.99);
INSERT INTO public.books OVERRIDING SYSTEM VALUE VALUES (3, 1, 'A Wizard of Earthsea', NULL);


--
-- Name: authors_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.authors_id_seq', 2, true);


--
-- Name: books_id_seq; Type: SEQUENCE SET; Schema: public; Owner: -
--

SELECT pg_catalog.setval('public.books_id_seq', 3, true);


--
-- Name: authors authors_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.authors
    ADD CONSTRAINT authors_pkey PRIMARY KEY (id);


--
-- Name: books books_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.books
    ADD CONSTRAINT books_pkey PRIMARY KEY (id);


--
-- Name: books_author_id_idx; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX books_author_id_idx ON public.books USING btree (author_id);


--
-- Name: books books_author_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.books
    ADD CONSTRAINT books_author_id_fkey FOREIGN KEY (author_id) REFERENCES public.authors(id);


--
-- PostgreSQL database dump complete
--
`;

/** The dump with every name prefixed (a second restore beside the first). */
const renamed = (prefix: string): string => DUMP.replace(/\b(authors|books)/g, `${prefix}$1`);

/** What the restored database answers (tables prefixed `prefix`), checked on `on` against PostgreSQL. */
async function checkRestored(on: FileServer, prefix: string): Promise<void> {
  const same = async (sql: string): Promise<void> => expect(await oursOf(on, [sql]), sql).toEqual(await theirsOf(pg, [sql]));
  const [a, b] = [`${prefix}authors`, `${prefix}books`];
  for (const sql of [
    `SELECT a.name, b.title, b.price FROM ${b} b JOIN ${a} a ON a.id = b.author_id ORDER BY b.id`,
    `SELECT table_name, column_name, column_default, is_nullable, is_identity, identity_generation FROM information_schema.columns WHERE table_name IN ('${a}', '${b}') ORDER BY table_name, ordinal_position`,
    `SELECT sequence_name, data_type, start_value, increment FROM information_schema.sequences WHERE sequence_name IN ('${a}_id_seq', '${b}_id_seq') ORDER BY 1`,
    `SELECT pg_get_serial_sequence('${a}', 'id'), pg_get_serial_sequence('${b}', 'id')`,
    `SELECT last_value, is_called FROM ${a}_id_seq`,
    `SELECT obj_description('${a}'::regclass, 'pg_class'), col_description('${a}'::regclass, 3), col_description('${a}'::regclass, 1), obj_description('${b}'::regclass, 'pg_class')`,
  ]) {
    await same(sql);
  }
}

describe('a pg_dump restore', () => {
  it('runs as one request and answers as PostgreSQL, then takes new rows from the restored sequences', async () => {
    // psql would end its session after the dump (whose search_path is empty); a request does.
    await pg.exec(`${DUMP}; RESET ALL`);
    const res = await http(file.server.url, 'POST', '/api/sql/query', { json: { sql: DUMP }, apiKey: file.apiKey });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await checkRestored(file, '');
    for (const sql of [
      "INSERT INTO authors (name) VALUES ('N. K. Jemisin') RETURNING id",
      "INSERT INTO books (author_id, title, price) VALUES (3, 'The Fifth Season', 15) RETURNING id",
      "INSERT INTO books (id, author_id, title) VALUES (10, 1, 'x')",
      "INSERT INTO books (author_id, title) VALUES (99, 'Nobody''s')",
      "INSERT INTO books (author_id, title, price) VALUES (1, 'Negative', -1)",
      "INSERT INTO authors VALUES (1, 'Again', NULL)",
      'DELETE FROM authors WHERE id = 2',
    ]) {
      const theirs = await theirsFull(pg, sql);
      expect(await oursFull(file, sql), sql).toEqual(theirs);
    }
  });

  it('takes COMMENT ON tables, columns, sequences and indexes as PostgreSQL, and refuses what it refuses', async () => {
    const alike = async (sql: string): Promise<void> => expect(await oursFull(file, sql), sql).toEqual(await theirsFull(pg, sql));
    for (const sql of [
      'CREATE TABLE ct (id int, v text)',
      'CREATE SEQUENCE ct_seq',
      'CREATE INDEX ct_v ON ct (v)',
      "COMMENT ON TABLE ct IS 'the table'",
      "COMMENT ON COLUMN ct.v IS 'a column'",
      "COMMENT ON COLUMN public.ct.id IS 'its id'",
      "COMMENT ON SEQUENCE ct_seq IS 'a sequence'",
      "COMMENT ON INDEX ct_v IS 'an index'",
      "COMMENT ON SCHEMA public IS 'standard public schema'",
      'CREATE TABLE ct2 (id serial, v int)',
      "COMMENT ON SEQUENCE ct2_id_seq IS 'a serial''s'",
      "SELECT obj_description('ct2_id_seq'::regclass, 'pg_class') AS s",
      'ALTER TABLE ct2 ALTER id DROP DEFAULT',
      "SELECT obj_description('ct2_id_seq'::regclass, 'pg_class') AS s",
      "SELECT obj_description('ct'::regclass, 'pg_class') AS t, col_description('ct'::regclass, 1) AS c1, col_description('ct'::regclass, 2) AS c2, col_description('ct'::regclass, 9) AS c9, obj_description('ct_seq'::regclass, 'pg_class') AS s, obj_description('ct_v'::regclass, 'pg_class') AS i",
      'ALTER TABLE ct DROP COLUMN id',
      "SELECT col_description('ct'::regclass, 1) AS c1, col_description('ct'::regclass, 2) AS c2",
      'COMMENT ON TABLE ct IS NULL',
      "COMMENT ON COLUMN ct.v IS ''",
      "SELECT obj_description('ct'::regclass, 'pg_class') AS t, col_description('ct'::regclass, 2) AS c2",
      "COMMENT ON TABLE nope IS 'x'",
      "COMMENT ON COLUMN ct.nope IS 'x'",
      "COMMENT ON COLUMN nope.x IS 'x'",
      "COMMENT ON COLUMN ct IS 'x'",
      "COMMENT ON SEQUENCE ct IS 'x'",
      "COMMENT ON TABLE ct_seq IS 'x'",
      "COMMENT ON INDEX ct IS 'x'",
      "COMMENT ON SEQUENCE nope IS 'x'",
      "SELECT obj_description('nope'::regclass, 'pg_class')",
    ]) {
      await alike(sql);
    }
  });

  it('survives a restart', async () => {
    await afterRestart(pg, [renamed('r_'), 'RESET ALL'], (after) => checkRestored(after, 'r_'));
  });
});
