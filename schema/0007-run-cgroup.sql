-- 0007-run-cgroup.sql: a run's own counters, from its cgroup.
--
-- A run started by `scalemonctl run exec` (or `run start --cgroup PATH`)
-- has its own cgroup, and scalemond counts for it while the run is open
-- (daemon/sampler/owncg.c): perf events in cgroup mode, the cgroup's cpu.stat and
-- its pressure files.  Those totals go to run_total beside the machine's,
-- at the new level 'cgroup' ("this run's cgroup"):
--  1. level 'cgroup' has loc 0, and one row per metric the run's cgroup
--     counted; a run without a cgroup has none;
--  2. value is in the catalogue unit, as at the other levels, and counts
--     only the tasks that were in the cgroup: it is <= the 'system' row of
--     the same metric, up to counting noise (own_share = cgroup / system);
--  3. rows at the other levels are unchanged by this migration.
-- Per interval, the cgroup's deltas go to run_own_sample, keyed by run
-- ("this run's cgroup") and tick:
--  5. one row per (run, tick, metric) where the cgroup's delta in that
--     interval was not 0 (zeros are not stored, as in sample); value in the
--     catalogue unit (seconds for cpu_user, as in run_total), summed over
--     the CPUs;
--  6. the rows of a run cover its ticks after the start tick, up to its end
--     tick; their sum is the run's 'cgroup' total up to what the cgroup
--     did between the stop snapshot and the totals' read (microseconds);
--  7. deleting the run deletes them (ON DELETE CASCADE); the ticks they
--     name are the run's, which retention keeps while the run exists.
-- And the run's tasks' own voluntary and involuntary context switches, as
-- run exec's wait4() gave them (ru_nvcsw, ru_nivcsw: the counters
-- /proc/PID/status shows as voluntary_ctxt_switches and
-- nonvoluntary_ctxt_switches, summed over the command and the children it
-- waited for):
--  4. run.voluntary_switches and run.involuntary_switches are NULL where
--     the run was not run by run exec (or came from an older scalemonctl).
-- SQLite cannot widen a CHECK, so run_total is rebuilt with its rows (and
-- the run_totals view over it recreated as it was).
--
-- Try:
--   sqlite3 -readonly scalemon.db "SELECT run, metric, value FROM run_totals
--     WHERE level = 'cgroup'"

DROP VIEW run_totals;
CREATE TABLE run_total_new (
        run    INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
        metric INTEGER NOT NULL REFERENCES metric (id),
        level  TEXT NOT NULL CHECK (level IN ('cpu', 'node', 'system', 'cgroup')),
        loc    INTEGER NOT NULL,
        value  REAL NOT NULL,
        PRIMARY KEY (run, metric, level, loc)
) WITHOUT ROWID;
INSERT INTO run_total_new (run, metric, level, loc, value) SELECT run, metric, level, loc, value FROM run_total;
DROP TABLE run_total;
ALTER TABLE run_total_new RENAME TO run_total;
CREATE VIEW run_totals AS
        SELECT run.name AS run, metric.name AS metric, run_total.level AS level,
               run_total.loc AS loc, run_total.value AS value
          FROM run_total
          JOIN run ON run.id = run_total.run
          JOIN metric ON metric.id = run_total.metric;

CREATE TABLE run_own_sample (
        run    INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
        tick   INTEGER NOT NULL,
        metric INTEGER NOT NULL REFERENCES metric (id),
        value  REAL NOT NULL,
        PRIMARY KEY (run, tick, metric)
) WITHOUT ROWID;

ALTER TABLE run ADD COLUMN voluntary_switches INTEGER;
ALTER TABLE run ADD COLUMN involuntary_switches INTEGER;
