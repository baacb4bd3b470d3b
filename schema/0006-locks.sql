-- 0006-locks.sql: the contended kernel locks of each run.
--
-- Written once when a run stops, from two readings of scalemond's BPF
-- per-caller map (bpf/lockwait.bpf.c) taken at the run's start and stop:
-- contended and total_wait_ns are their exact difference; max_wait_ns and
-- min_wait_ns are the extremes of the waits that ended within the run
-- (the map restarts them at every run boundary: see scalemond(8)).  A row
-- is one (caller, type): caller is "function+0xoffset" of the first kernel
-- frame outside the locking code, named with /proc/kallsyms when the run
-- stopped, so it reads right on another machine or after a reboot; type
-- is perf lock contention's ("spinlock", "rwsem:W", ...).
--
-- run_lock_lost says what the bounded BPF maps could not keep during the
-- run: waits not timed (the per-task map was full) and waits timed but
-- missing from run_lock (the per-caller map was full), with their length.
-- A run without BPF has no row there and none in run_lock.
--
-- Try:
--   sqlite3 -readonly scalemon.db "SELECT caller, type, contended,
--     total_wait_ns FROM run_lock JOIN run ON run.id = run_lock.run
--     WHERE run.name = 'storm' ORDER BY total_wait_ns DESC LIMIT 5"

CREATE TABLE run_lock (
        run           INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
        caller        TEXT NOT NULL,
        type          TEXT NOT NULL,
        contended     INTEGER NOT NULL,
        total_wait_ns INTEGER NOT NULL,
        max_wait_ns   INTEGER NOT NULL,
        min_wait_ns   INTEGER NOT NULL,
        PRIMARY KEY (run, caller, type)
) WITHOUT ROWID;

CREATE TABLE run_lock_lost (
        run             INTEGER PRIMARY KEY REFERENCES run (id) ON DELETE CASCADE,
        untimed         INTEGER NOT NULL,       -- waits not timed: per-task map full
        unattributed    INTEGER NOT NULL,       -- timed waits not in run_lock: per-caller map full
        unattributed_ns INTEGER NOT NULL
);
