-- 0008-lock-objects.sql: which lock objects a run waited for, and whose
-- waits they were.
--
-- scalemond's BPF map is keyed by (caller stack, type, lock address,
-- own cgroup slot) (bpf/lockwait.bpf.c), so at a run's stop it knows, for
-- each (caller, type) row of run_lock, how many distinct lock objects
-- its waits were for, and which waits were by tasks of the run's own
-- cgroup (a run started by `run exec` or with --cgroup):
--  1. run_lock.locks: the distinct lock addresses behind the row (0 in
--     rows written before this migration: unknown);
--  2. run_lock.own_contended and own_total_wait_ns: the waits of the
--     run's own cgroup's tasks among the row's, NULL where the run had no
--     cgroup (then only the machine-wide figures exist).
-- run_lock_object is the same run's waits merged by lock address (the
-- "by lock" table of `report --locks lock`):
--  3. lock is the address, "0x" and 16 hex digits (a kernel address
--     does not fit SQLite's signed integers); name is what scalemond
--     recognised it as ("mmap_lock" of the waiting task, "siglock",
--     "rq_lock"), a static lock's kernel data symbol ("jiffies_lock",
--     "pgd_lock", "sym+0xoff" inside a larger one), or '' (a lock in
--     dynamically allocated memory: only its address is known);
--  4. type is the type of most of its wait; callers counts the distinct
--     run_lock rows that waited for it;
--  5. contended and total_wait_ns summed over the lock's rows equal those
--     of run_lock summed over all rows (the same waits, grouped another
--     way); max_wait_ns is a maximum, never summed;
--  6. own_contended and own_total_wait_ns as in 2.
-- What the bounded map could not keep is run_lock_lost's, as before: the
-- same waits are missing from both tables.  And:
--  7. run_lock_lost.nested counts the begins the program ignored because
--     the same task (or, spinning, the same CPU) was already waiting: a
--     mutex that spins on its owner and then sleeps fires
--     lock:contention_begin twice for one wait.  The lock_contentions
--     counter counts every begin, so over a run it exceeds the timed
--     waits by nested + untimed, give or take the waits open at the run's
--     two edges.  NULL in rows written before this migration.
--
-- Try:
--   sqlite3 -readonly scalemon.db "SELECT lock, name, type, contended,
--     total_wait_ns, callers FROM run_lock_object JOIN run ON run.id =
--     run_lock_object.run WHERE run.name = 'storm'
--     ORDER BY total_wait_ns DESC LIMIT 5"

ALTER TABLE run_lock ADD COLUMN locks INTEGER NOT NULL DEFAULT 0;
ALTER TABLE run_lock ADD COLUMN own_contended INTEGER;
ALTER TABLE run_lock ADD COLUMN own_total_wait_ns INTEGER;
ALTER TABLE run_lock_lost ADD COLUMN nested INTEGER;

CREATE TABLE run_lock_object (
        run               INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
        lock              TEXT NOT NULL,
        name              TEXT NOT NULL,
        type              TEXT NOT NULL,
        contended         INTEGER NOT NULL,
        total_wait_ns     INTEGER NOT NULL,
        max_wait_ns       INTEGER NOT NULL,
        callers           INTEGER NOT NULL,
        own_contended     INTEGER,
        own_total_wait_ns INTEGER,
        PRIMARY KEY (run, lock)
) WITHOUT ROWID;
