-- 0004-packed.sql: per-CPU values packed, one row per (tick, metric).
--
-- 0001 stored one sample row per (tick, metric, CPU): 17 to 25 bytes and
-- one INSERT per value, 9.5 KB a tick on 80 CPUs, too much for a month
-- of a 256-CPU machine at 1 s in 10 GiB.  Now cpu-scope metrics go to
-- cpu_sample, one row per tick and metric holding every CPU's value in a
-- blob, and the sum over CPUs beside it; node- and system-scope metrics
-- stay in sample, one row per value, as before.
--
--  * cpu_sample.vals: a stream of unsigned LEB128 tokens for CPUs 0, 1,
--    2, ... (lib/packed.c):
--      u >= 2   the next CPU's value is u - 2
--      u == 1   the next CPU was not counted (NULL)
--      u == 0   followed by a LEB128 k: the next k + 2 CPUs are 0
--    CPUs past the end of the stream are 0.  Values are in the metric's
--    raw unit, as in sample.
--  * cpu_sample.total: the sum over CPUs; NULL if any CPU was not counted.
--    The whole machine's value is this column, no decoding needed.
--
-- Invariants (1 of 0001 carried over):
--  6. No cpu_sample row has every CPU at 0 (such a row is not written).
--  7. sample holds no row of a cpu-scope metric.
--
-- Reading per-CPU values: scalemond and scalemonctl register the SQL
-- functions scalemon_cpu(vals, cpu) (one CPU's value, NULL if not
-- counted) and scalemon_cpus(vals) (a table of (cpu, value), one row per
-- CPU whose value is not 0), and the aggregate scalemon_pack(cpu, value)
-- this migration uses.  The sqlite3 shell gets them from the extension
-- scalemon.so, installed in scalemon's library directory:
--
--   sqlite3 -readonly scalemon.db -cmd '.load /usr/lib/scalemon/scalemon' \
--     "SELECT time, loc, value FROM cpu_samples WHERE metric = 'context_switches'
--      AND t_ns > (strftime('%s','now') - 60) * 1000000000 ORDER BY t_ns, loc"
--
-- cpu_samples has the columns of samples (which now has node and system
-- rows only).  Without the extension, the system-wide series needs none:
--
--   SELECT tick.t, cpu_sample.total * metric.scale FROM cpu_sample
--     JOIN tick ON tick.id = cpu_sample.tick JOIN metric ON metric.id = cpu_sample.metric
--    WHERE metric.name = 'context_switches'
--
-- The migration packs the existing cpu-scope rows of sample with
-- scalemon_pack, in one transaction: on a large database, the first start
-- of the new scalemond takes a while (and the WAL grows by the size of
-- cpu_sample).

CREATE TABLE cpu_sample (
        tick   INTEGER NOT NULL,           -- tick.id
        metric INTEGER NOT NULL,           -- metric.id, a cpu-scope metric
        total  INTEGER,                    -- sum over CPUs; NULL: a CPU not counted
        vals   BLOB NOT NULL,              -- every CPU's value, packed (above)
        PRIMARY KEY (tick, metric)
) WITHOUT ROWID;

INSERT INTO cpu_sample (tick, metric, total, vals)
        SELECT s.tick, s.metric,
               CASE WHEN count(s.value) = count(*) THEN sum(s.value) END,
               scalemon_pack(s.loc, s.value)
          FROM sample s JOIN metric m ON m.id = s.metric
         WHERE m.scope = 'cpu'
         GROUP BY s.tick, s.metric;
DELETE FROM sample WHERE metric IN (SELECT id FROM metric WHERE scope = 'cpu');

-- Needs scalemon_cpus (above): the same columns as samples.
CREATE VIEW cpu_samples AS
        SELECT tick.t AS t_ns,
               strftime('%Y-%m-%dT%H:%M:%fZ', tick.t / 1e9, 'unixepoch') AS time,
               tick.dur / 1e9 AS interval_s,
               metric.name AS metric,
               metric.scope AS scope,
               u.cpu AS loc,
               u.value * metric.scale AS value
          FROM cpu_sample
          JOIN tick ON tick.id = cpu_sample.tick
          JOIN metric ON metric.id = cpu_sample.metric,
               scalemon_cpus(cpu_sample.vals) AS u;
