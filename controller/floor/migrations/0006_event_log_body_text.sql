-- The exact text each event_log row's hash covers (docs/floor.md, "The hash rule"). `body` alone,
-- kept as jsonb, does not give back the text that was hashed: jsonb keeps numbers as numeric, so a
-- body's 1e+16 comes back as 10000000000000000 and -0.0 as 0.0, and a verifier re-encoding it
-- computes another hash for an untouched row. So the writer stores the text it hashed, and `body` is
-- that text parsed; a verifier hashes `body_text` and checks that it parses to `body`. Rows written
-- before this migration have no text (NULL) and are checked the old way, from `body` re-encoded.
-- (Adding a column fires no row trigger: the append-only guard is untouched.)
ALTER TABLE event_log ADD COLUMN body_text text;
