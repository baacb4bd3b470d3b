-- 0001-init.sql: the sample store.
--
-- Layout, and why:
--
--  * tick: one row per sampling interval: its start (t, ns since the epoch,
--    CLOCK_REALTIME) and its length (dur, ns, measured on CLOCK_MONOTONIC).
--    Intervals are back to back while the daemon runs; a run start or stop
--    cuts one short, so run boundaries fall on tick boundaries.
--
--  * sample: one row per (metric, tick, loc) whose delta over the interval
--    is not zero.  Most counters are zero on most CPUs most of the time, so
--    a missing row means 0 (invariant 1).  A NULL value means "not counted":
--    the perf group was multiplexed out for the whole interval.  loc is the
--    CPU number for cpu-scope metrics, the node number for node-scope ones,
--    0 for system-scope ones.  The table is clustered on
--    (tick, metric, loc) (WITHOUT ROWID): a flush appends at the end of
--    the b-tree and touches a page or two, not one page per metric, and a
--    metric over a time range is one short seek per tick (join from tick,
--    as the samples view does).  Values are integers in the metric's raw
--    unit; multiply by metric.scale for the catalogue unit (cpu_* are
--    stored in USER_HZ ticks, scale = 1/USER_HZ seconds).
--
--  * mux: duty cycle (running/enabled) of a perf group on a CPU in a tick,
--    only where it was below 1, i.e. where the value was scaled up from a
--    multiplexed count.
--
-- Invariants:
--  1. No sample row holds 0.
--  2. tick.id grows with tick.t, and is never reused (AUTOINCREMENT): a
--     run's start_tick/end_tick keep meaning the same intervals after a
--     retention has deleted old ones.
--  3. The daemon is the only writer; it holds an flock() on the database
--     file for as long as it has it open.
--
-- Try:
--   sqlite3 -readonly scalemon.db \
--     "SELECT time, loc, value FROM samples WHERE metric = 'context_switches'
--      AND t_ns > (strftime('%s','now') - 60) * 1000000000 ORDER BY t_ns, loc"

CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value
) WITHOUT ROWID;

CREATE TABLE host (
        id         INTEGER PRIMARY KEY,
        machine_id TEXT NOT NULL UNIQUE,
        hostname   TEXT NOT NULL,
        kernel     TEXT NOT NULL,          -- uname -r when last seen
        ncpus      INTEGER NOT NULL,       -- possible CPUs
        nnodes     INTEGER NOT NULL,
        cpu_model  TEXT,
        first_seen INTEGER NOT NULL,       -- ns since the epoch
        last_seen  INTEGER NOT NULL
);

CREATE TABLE metric (
        id        INTEGER PRIMARY KEY,
        name      TEXT NOT NULL UNIQUE,
        scope     TEXT NOT NULL CHECK (scope IN ('cpu', 'node', 'system')),
        unit      TEXT NOT NULL,
        scale     REAL NOT NULL DEFAULT 1, -- stored value * scale = value in unit
        source    TEXT NOT NULL,
        available INTEGER NOT NULL DEFAULT 0,
        why       TEXT                     -- why not available, or NULL
);

-- CPU to node map of this host.
CREATE TABLE cpu (
        cpu    INTEGER PRIMARY KEY,
        node   INTEGER NOT NULL,
        online INTEGER NOT NULL
);

CREATE TABLE tick (
        id  INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused, even after old ticks are deleted
        t   INTEGER NOT NULL,
        dur INTEGER NOT NULL
);
CREATE INDEX tick_by_t ON tick (t);

CREATE TABLE sample (
        metric INTEGER NOT NULL,           -- metric.id
        tick   INTEGER NOT NULL,           -- tick.id
        loc    INTEGER NOT NULL,
        value  INTEGER,                    -- NULL: not counted
        PRIMARY KEY (tick, metric, loc)
) WITHOUT ROWID;

CREATE TABLE mux (
        tick  INTEGER NOT NULL,
        cpu   INTEGER NOT NULL,
        grp   TEXT NOT NULL,               -- 'sw' (software + tracepoints) or 'hw'
        duty  REAL NOT NULL,               -- time running / time enabled, < 1
        PRIMARY KEY (tick, cpu, grp)
) WITHOUT ROWID;

-- What happened to the daemon: start, stop, reload, CPU offline/online.
CREATE TABLE event (
        id     INTEGER PRIMARY KEY,
        t      INTEGER NOT NULL,
        kind   TEXT NOT NULL,
        cpu    INTEGER,
        detail TEXT
);

CREATE VIEW samples AS
        SELECT tick.t AS t_ns,
               strftime('%Y-%m-%dT%H:%M:%fZ', tick.t / 1e9, 'unixepoch') AS time,
               tick.dur / 1e9 AS interval_s,
               metric.name AS metric,
               metric.scope AS scope,
               sample.loc AS loc,
               sample.value * metric.scale AS value
          FROM sample
          JOIN tick ON tick.id = sample.tick
          JOIN metric ON metric.id = sample.metric;
