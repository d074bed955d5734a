-- A person settles a journal's conflicting rows (`croupier floor conflicts --settle`) by marking them, not by
-- removing them: the recorder's rule of followers reads the other body of the row before in `conflicts`, so
-- a removed row let the other history's next row (its Pi still sending) into the record on top of the first
-- history's rows (a review of 2026-12-08). Settled rows stay, with who settled them, when and why; the
-- `conflicting_rows` alert and `floor tables` count only the rows not settled.
ALTER TABLE conflicts
    ADD COLUMN settled_at timestamptz,
    ADD COLUMN settled_by text,
    ADD COLUMN settled_reason text;
