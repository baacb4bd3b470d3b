#!/bin/bash
# bench-bytes.sh [DB] - bytes on disk per stored value and per CPU-hour.
#
# Without DB, records BENCH_SECONDS (120) of this machine at 1 s first;
# with DB, measures that database (a copy: its log is checkpointed into
# it first, so the file size is the data's).  A stored value is one
# metric's count at one place (CPU, node or machine) in one interval: the
# non-zero ones are stored, zeros are implied.  Printed: the file's size,
# and the time series' own pages (tick, cpu_sample, sample, mux and their
# indexes, from dbstat; the rest is the schema, runs and a page or two per
# table, a fixed few hundred KiB) per interval, per stored value, per
# value including the implied zeros, and per CPU-hour.
set -u
: "${top_builddir:=.}"
D=${BENCH_SECONDS:-120}
tmp=$(mktemp -d /tmp/scalemon-bench.XXXXXX)
pid=
trap '[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid"; rm -rf "$tmp"' EXIT
command -v sqlite3 >/dev/null || { echo "bench-bytes: needs the sqlite3 command-line tool"; exit 0; }
ext=$top_builddir/scalemon.so

if [ $# -ge 1 ]; then
        src=$1
        sqlite3 -readonly "$src" ".backup $tmp/db" || { echo "bench-bytes: cannot copy $src"; exit 1; }
        what="$src"
else
        [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ] ||
                { echo "bench-bytes: needs root (or perf_event_paranoid <= 0) for per-CPU perf events"; exit 0; }
        : >"$tmp/empty.conf"
        "$top_builddir/scalemond" --foreground --config "$tmp/empty.conf" --db "$tmp/rec.db" --socket "$tmp/sock" \
                --interval 1s 2>"$tmp/log" &
        pid=$!
        sleep "$D"
        kill -TERM "$pid"; wait "$pid"; pid=
        sqlite3 "$tmp/rec.db" ".backup $tmp/db"
        what="a ${D}s recording of this machine at 1 s"
fi
sqlite3 "$tmp/db" "PRAGMA wal_checkpoint(TRUNCATE); VACUUM;" >/dev/null
sqlite3 -batch -noheader -separator ' ' -cmd ".load $ext" "$tmp/db" "
        SELECT (SELECT page_count * page_size FROM pragma_page_count, pragma_page_size),
               (SELECT count(*) FROM tick), (SELECT sum(dur) / 1e9 FROM tick),
               (SELECT count(*) FROM cpu), (SELECT count(*) FROM metric WHERE available),
               (SELECT count(*) FROM metric WHERE available AND scope = 'cpu'),
               (SELECT count(*) FROM sample) + (SELECT count(*) FROM cpu_sample c, scalemon_cpus(c.vals)),
               (SELECT sum(pgsize) FROM dbstat WHERE name IN ('tick', 'tick_by_t', 'cpu_sample', 'sample', 'mux'))" |
while read -r file ticks secs ncpus nmetrics ncpumetrics nvalues bytes; do
        awk -v what="$what" -v f="$file" -v b="$bytes" -v t="$ticks" -v s="$secs" -v c="$ncpus" -v m="$nmetrics" \
            -v mc="$ncpumetrics" -v v="$nvalues" 'BEGIN {
                all = t * (mc * c + (m - mc))      # every value, zeros included (node/system: one place)
                printf "bench-bytes: %s\n", what
                printf "  %d intervals (%.2f h) of %d CPUs, %d metrics (%d per CPU): file %.2f MiB after VACUUM, series %.2f MiB\n",
                        t, s / 3600, c, m, mc, f / 1048576, b / 1048576
                printf "  %.0f bytes per interval; %.2f bytes per stored (non-zero) value, %d values; %.2f bytes per value with zeros\n",
                        b / t, b / v, v, b / all
                printf "  %.1f KiB per CPU-hour at this interval\n", b / c / (s / 3600) / 1024
        }'
done
