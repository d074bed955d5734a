-- `croupier floor export TABLE --from --to` reads a time range of one table's rows: without this
-- index it read every row of the table (bench/floor_recall.py EXPLAINs it). Recall needs none: its
-- rounds are a backward scan of the rounds' primary key, and each row's events a range of theirs.
CREATE INDEX inputs_by_time ON inputs (table_id, at);
