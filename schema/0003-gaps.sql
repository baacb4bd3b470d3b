-- 0003-gaps.sql: intervals that were sampled but could not be stored, and
-- runs' lengths on the monotonic clock.
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
