-- The pit's alerts (docs/floor.md, "Alerts"): one row per alert, from its raising to its clearing.
-- At most one open (uncleared) alert per table, kind and key: a cause that persists is one alert,
-- not one per check. `key` tells apart alerts of one kind at one table (a device name, a shoe,
-- a journal); '' when the kind needs none.
CREATE TABLE alerts (
    id          bigserial PRIMARY KEY,
    table_id    text NOT NULL,
    kind        text NOT NULL,               -- feed_lost, daemon_stopped, tilt, journal_fault, ...
    key         text NOT NULL DEFAULT '',
    severity    text NOT NULL CHECK (severity IN ('critical', 'warning')),
    detail      text NOT NULL,               -- one line for the pit boss, in the table's words
    data        jsonb NOT NULL DEFAULT '{}', -- the figures behind it (rows, cards, z-score ...)
    cause_at    double precision,            -- when its cause happened (the table's clock), if known
    raised_at   timestamptz NOT NULL DEFAULT now(),
    acked_at    timestamptz,
    acked_by    text,                        -- the operator name the board authenticated
    cleared_at  timestamptz,
    CHECK ((acked_at IS NULL) = (acked_by IS NULL))
);
CREATE UNIQUE INDEX alerts_open ON alerts (table_id, kind, key) WHERE cleared_at IS NULL;
CREATE INDEX alerts_recent ON alerts (table_id, raised_at DESC);
