-- 0002-runs.sql: benchmark runs.
--
-- A run is one execution of a benchmark under one configuration.  The
-- daemon takes a snapshot of every counter when a run starts and when it
-- stops; run_total holds the exact difference, per CPU, per node and
-- system-wide, written once when the run ends, so a report never scans
-- samples to total a run (invariant 4).  start_tick/end_tick bound the
-- run's ticks: the run covers ticks with start_tick < id <= end_tick
-- (invariant 5); they are NULL for runs imported from another database.
--
-- Try:
--   sqlite3 -readonly scalemon.db "SELECT r.name, t.value FROM run r
--     JOIN run_total t ON t.run = r.id JOIN metric m ON m.id = t.metric
--     WHERE m.name = 'lock_contentions' AND t.level = 'system'"

CREATE TABLE run (
        id          INTEGER PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE,
        host        INTEGER NOT NULL REFERENCES host (id),
        status      TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed', 'interrupted')),
        start       INTEGER NOT NULL,      -- ns since the epoch
        end         INTEGER,               -- NULL while running
        start_tick  INTEGER,               -- last tick before the run
        end_tick    INTEGER,               -- last tick of the run
        exit_status INTEGER,               -- of the benchmark, where known
        wall_s      REAL,                  -- as time(1) prints them, from run exec
        user_s      REAL,
        sys_s       REAL,
        command     TEXT,                  -- what run exec ran
        imported    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX run_by_start ON run (start);

CREATE TABLE run_tag (
        run   INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
        key   TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run, key)
) WITHOUT ROWID;
CREATE INDEX run_tag_by_key ON run_tag (key, value);

CREATE TABLE run_score (
        run   INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
        key   TEXT NOT NULL,
        value REAL NOT NULL,
        PRIMARY KEY (run, key)
) WITHOUT ROWID;

-- The machine and its settings when the run started (kernel, THP, NUMA
-- balancing, KVM parameters, online CPUs, interval, ...).
CREATE TABLE run_context (
        run   INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
        key   TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (run, key)
) WITHOUT ROWID;

CREATE TABLE run_mark (
        id   INTEGER PRIMARY KEY,
        run  INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
        t    INTEGER NOT NULL,
        text TEXT NOT NULL
);
CREATE INDEX run_mark_by_run ON run_mark (run, t);

-- Exact totals: level 'cpu' (loc = CPU), 'node' (loc = node: node metrics,
-- and cpu metrics summed over the node's CPUs), 'system' (loc = 0).  Every
-- CPU online at the start or the end has a row, zeros included, so
-- medians across CPUs are right.  value is in the catalogue unit (scaled).
CREATE TABLE run_total (
        run    INTEGER NOT NULL REFERENCES run (id) ON DELETE CASCADE,
        metric INTEGER NOT NULL REFERENCES metric (id),
        level  TEXT NOT NULL CHECK (level IN ('cpu', 'node', 'system')),
        loc    INTEGER NOT NULL,
        value  REAL NOT NULL,
        PRIMARY KEY (run, metric, level, loc)
) WITHOUT ROWID;

CREATE VIEW run_totals AS
        SELECT run.name AS run, metric.name AS metric, run_total.level AS level,
               run_total.loc AS loc, run_total.value AS value
          FROM run_total
          JOIN run ON run.id = run_total.run
          JOIN metric ON metric.id = run_total.metric;
