-- A journal row sent again with another body under its key (table, journal, row): two histories under
-- one journal (two Pis running copies of one journal, a journal restored under its id by hand). The
-- first body recorded stays the record (`inputs`); each other body is kept here, once (`digest`: of
-- the fields compared, the row's at, source, ref and input), for a person to read, and the recorder
-- logs it at ERROR; `floor tables` counts these rows and the alert service raises `conflicting_rows`.
CREATE TABLE conflicts (
    table_id    text NOT NULL,
    journal_id  text NOT NULL,
    row         bigint NOT NULL,
    digest      text NOT NULL,               -- md5 of [at, source, ref, input] as jsonb text
    body        jsonb NOT NULL,              -- the other message, whole, as it came
    detected_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, journal_id, row, digest)
);
