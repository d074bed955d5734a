-- The floor's history: every table's journal rows, the events they caused, rounds and gaps.
-- Keys are the journal's own: a row is (table_id, journal_id, row) and an event (table_id,
-- journal_id, seq), so a message recorded twice (a redelivery, a second recorder) changes nothing.

-- One row per journal of a table (a table whose journal was replaced has one per journal).
CREATE TABLE tables (
    table_id      text NOT NULL,
    journal_id    text NOT NULL,
    game          text NOT NULL,
    options       jsonb NOT NULL,
    currency      jsonb NOT NULL,              -- {"code", "minor_units"}: how amounts are shown
    recorded_row  bigint NOT NULL DEFAULT 0,   -- every row 1..recorded_row is recorded (no hole below)
    journal_rows  bigint NOT NULL DEFAULT 0,   -- the journal's length the uplink last reported
    last_at       double precision,            -- the table's own time of its newest recorded row
    last_seen     timestamptz NOT NULL DEFAULT now(),  -- when a message of it was last recorded
    first_seen    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, journal_id)
);
CREATE INDEX tables_last_seen ON tables (table_id, last_seen DESC);

CREATE TABLE inputs (
    table_id    text NOT NULL,
    journal_id  text NOT NULL,
    row         bigint NOT NULL,
    at          double precision NOT NULL,   -- the table's wall clock when it journaled the input
    source      text NOT NULL,               -- shoe, command <key name>, gpio ...
    ref         text,                        -- the client's idempotency key, if it gave one
    input       jsonb NOT NULL,              -- the input as journaled
    first_seq   bigint NOT NULL,             -- the seq of its first event (events: first_seq..+n-1)
    event_count integer NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, journal_id, row)
);

CREATE TABLE events (
    table_id    text NOT NULL,
    journal_id  text NOT NULL,
    seq         bigint NOT NULL,
    row         bigint NOT NULL,             -- the input that caused it
    event       text NOT NULL,
    payload     jsonb NOT NULL,              -- exactly what the daemon published (event, table, seq, ...)
    PRIMARY KEY (table_id, journal_id, seq)
);
CREATE INDEX events_by_name ON events (table_id, event, seq);

-- One row per settled or voided round, as `croupier ctl recall` shows it (the record's fields).
CREATE TABLE rounds (
    table_id    text NOT NULL,
    journal_id  text NOT NULL,
    round       bigint NOT NULL,
    status      text NOT NULL,               -- settled | voided
    opened_at   double precision,
    ended_at    double precision,
    first_seq   bigint NOT NULL,
    last_seq    bigint NOT NULL,
    house_net   bigint,
    record      jsonb NOT NULL,              -- cards, wagers, decisions, settlements, credits
    PRIMARY KEY (table_id, journal_id, round)
);
CREATE INDEX rounds_recent ON rounds (table_id, ended_at DESC);

-- A range of rows of a journal missing from the history although later rows arrived and nothing
-- was left to deliver: recorded (and logged as an error), never skipped silently.
CREATE TABLE gaps (
    table_id    text NOT NULL,
    journal_id  text NOT NULL,
    first_row   bigint NOT NULL,
    last_row    bigint NOT NULL,
    detected_at timestamptz NOT NULL DEFAULT now(),
    filled_at   timestamptz,                 -- set if the rows arrived after all
    PRIMARY KEY (table_id, journal_id, first_row)
);
