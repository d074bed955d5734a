-- The floor's PostgreSQL roles (docs/floor.md): run once, as a superuser, in the floor's database.
--   psql -d floor -f deploy/floor/roles.sql
-- then give each a password (\password croupier_recorder) or a certificate, as pg_hba.conf asks.
--
-- croupier_recorder: `croupier floor record`. It applies the migrations (so it creates and owns the
--   floor's tables) and writes every batch. Nothing else logs in with it.
-- croupier_reader: `croupier floor tables`, `recall`, surveillance and accounting: read only.
CREATE ROLE croupier_recorder LOGIN;
CREATE ROLE croupier_reader LOGIN;
-- PostgreSQL 15 no longer lets every role create in the public schema: the recorder needs to.
GRANT USAGE, CREATE ON SCHEMA public TO croupier_recorder;
GRANT USAGE ON SCHEMA public TO croupier_reader;
-- Every table the recorder creates (now and in later migrations) is readable by the reader, no more.
ALTER DEFAULT PRIVILEGES FOR ROLE croupier_recorder IN SCHEMA public GRANT SELECT ON TABLES TO croupier_reader;
