-- The floor's PostgreSQL roles (docs/floor.md): run as a superuser in the floor's database, once before
-- the first `croupier floor record` and once after it (it is safe to run again at any time: it creates
-- what is missing and grants what the tables there allow).
--   psql -d floor -f deploy/floor/roles.sql
-- then give each a password (\password croupier_recorder) or a certificate, as pg_hba.conf asks.
--
-- croupier_recorder: `croupier floor record` and `croupier floor alerts`. Either may apply the
--   migrations at its start (so they create and own the floor's tables) and both write: the recorder
--   every batch, the alert service its alerts and their event-log rows.
-- croupier_reader: `croupier floor tables`, `recall`, `report`, `verify`, surveillance and accounting:
--   read only.
-- croupier_board: `croupier floor serve`, the pit board: the reader's reads, and its one write, an
--   operator's acknowledgement: UPDATE of alerts' acked_at and acked_by only, and INSERT into the
--   append-only event_log (whose trigger refuses UPDATE and DELETE to everyone).
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['croupier_recorder', 'croupier_reader', 'croupier_board'] LOOP
        IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = r) THEN
            EXECUTE format('CREATE ROLE %I LOGIN', r);
        END IF;
    END LOOP;
END $$;
-- PostgreSQL 15 no longer lets every role create in the public schema: the recorder needs to.
GRANT USAGE, CREATE ON SCHEMA public TO croupier_recorder;
GRANT USAGE ON SCHEMA public TO croupier_reader;
-- Every table the recorder creates (now and in later migrations) is readable by the reader, no more.
ALTER DEFAULT PRIVILEGES FOR ROLE croupier_recorder IN SCHEMA public GRANT SELECT ON TABLES TO croupier_reader;
GRANT croupier_reader TO croupier_board;
-- The board's acknowledgement, on tables the recorder's first start creates (column privileges need
-- the table: until it is there, say so and grant nothing).
DO $$
BEGIN
    IF to_regclass('public.alerts') IS NULL OR to_regclass('public.event_log') IS NULL THEN
        RAISE NOTICE 'no alerts or event_log table yet: run deploy/floor/roles.sql again after the '
                     'first `croupier floor record` has started, for croupier_board''s acknowledgements';
    ELSE
        GRANT UPDATE (acked_at, acked_by) ON alerts TO croupier_board;
        GRANT INSERT ON event_log TO croupier_board;
    END IF;
END $$;
