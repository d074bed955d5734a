-- The significant-event log (GLI-13): alerts, operator commands, key changes, tilts and faults, in
-- order, append-only. Each row's hash covers the previous row's hash and its own fields
-- (controller/floor/eventlog.py says exactly how), so an edited, removed or inserted row breaks the
-- chain at that row: `croupier floor verify` names it. `id` runs 1, 2, 3 ... without holes: it is
-- given under a lock by the writer, not by a sequence (a sequence leaves holes on rollback).
CREATE TABLE event_log (
    id          bigint PRIMARY KEY,
    logged_at   timestamptz NOT NULL,
    table_id    text,                        -- NULL for a floor-wide event
    kind        text NOT NULL,               -- alert_raised, operator_command, tilt, ...
    origin      text NOT NULL UNIQUE,        -- where it came from, once: 'row:<t>:<j>:<n>', 'alert:<id>:raised'
    body        jsonb NOT NULL,
    prev_hash   bytea NOT NULL,
    hash        bytea NOT NULL UNIQUE
);
CREATE INDEX event_log_by_table ON event_log (table_id, id);

-- Append-only for everyone, the table's owner included: rows are never changed or removed.
CREATE FUNCTION event_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'event_log is append-only: % refused', TG_OP;
END $$;
CREATE TRIGGER event_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON event_log
    FOR EACH STATEMENT EXECUTE FUNCTION event_log_append_only();
