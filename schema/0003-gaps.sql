-- 0003-gaps.sql: intervals that were sampled but could not be stored,
-- runs' lengths on the monotonic clock, and run contexts stored once.
--
-- When the database cannot be written (disk full, a reader holding the
-- write-ahead log at wal_limit), scalemond keeps sampling into memory, up
-- to backlog_limit, and writes the backlog once it can.  If the backlog
-- overflows, the oldest intervals are dropped and one row here says which
-- span of time has no samples, how many intervals were lost, and why.
-- Run totals are not affected: they come from the daemon's running
-- counts, not from the samples.
--
-- Try:
--   sqlite3 -readonly scalemon.db "SELECT datetime(start / 1e9, 'unixepoch'),
--     (end - start) / 1e9, intervals, reason FROM gap"

-- A run's length measured on CLOCK_MONOTONIC, set when it ends: end -
-- start is a wall-clock difference, wrong (even negative) when the clock
-- was set during the run.  NULL for runs that ended before this column.
ALTER TABLE run ADD COLUMN length_ns INTEGER;

CREATE TABLE gap (
        id        INTEGER PRIMARY KEY,
        start     INTEGER NOT NULL,        -- ns since the epoch: start of the first lost interval
        end       INTEGER NOT NULL,        -- end of the last lost interval
        intervals INTEGER NOT NULL,        -- how many intervals were lost
        reason    TEXT NOT NULL
);

-- A run's context (0002) is nearly always the one of the run before it:
-- some fifty pairs (kernel, THP, KVM parameters...) per run made it the
-- largest table when runs come by the thousand.  A set of pairs is now
-- stored once and shared by every run that had exactly it; run_context
-- stays, as a view with the same columns.
CREATE TABLE context_set (
        id INTEGER PRIMARY KEY
);
CREATE TABLE context_kv (
        ctx   INTEGER NOT NULL REFERENCES context_set (id),
        key   TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (ctx, key)
) WITHOUT ROWID;
ALTER TABLE run ADD COLUMN context INTEGER REFERENCES context_set (id);
INSERT INTO context_set (id) SELECT DISTINCT run FROM run_context;
INSERT INTO context_kv (ctx, key, value) SELECT run, key, value FROM run_context;
UPDATE run SET context = id WHERE id IN (SELECT id FROM context_set);
DROP TABLE run_context;
CREATE VIEW run_context AS
        SELECT run.id AS run, context_kv.key AS key, context_kv.value AS value
          FROM run JOIN context_kv ON context_kv.ctx = run.context;
