#!/bin/bash
# bench-bytes.sh [DB] - bytes scalemond writes to disk, and bytes it keeps.
#
# Without DB: two parts.
#
# 1. Written.  Runs scalemond at 1 s and 100 ms, on this machine's CPUs
#    and with --simulate-cpus 256, and at 1 s with 1024 (the figure kept
#    for no regression), all side by side (the same noise for all), each
#    on its own database in a directory on disk (not tmpfs: a tmpfs page
#    is never written).  After a warm-up (BENCH_BYTES_WARMUP, 10 s) it
#    reads the process's write_bytes (/proc/PID/io: pages it dirtied, the
#    write-ahead log and checkpoints included) and the database's bytes in
#    use ((page_count - freelist_count) * page_size) at its next commit,
#    again at its first commit after BENCH_BYTES_WINDOW (420 s), and
#    prints both per hour.  Start-up
#    (exec to the end of the warm-up) is its own figure.  Rounds:
#    BENCH_BYTES_ROUNDS (2); min/median/max across them.  PASS/MISS at 1 s
#    on this machine's CPUs: write_bytes per hour at most pmlogger's at
#    the same interval (measured side by side when pmlogger and pmcd are
#    installed, BENCH_BYTES_PMLOGGER=0 skips it; otherwise the 6.6 MB/h
#    measured beside it), and at most 2x the database's growth.
#    Where perf and the tracepoint writeback:writeback_dirty_folio are
#    there (BENCH_BYTES_BREAKDOWN=0 skips it), the first round's 1 s case
#    on this machine's CPUs is also split by file: each event is a page
#    the process dirtied, which is what write_bytes counts, with the
#    inode it belongs to: the head file, the write-ahead log, its -shm
#    index (a file on disk too), the database file (checkpoints) and any
#    other (a rollback journal, the log).
#    BENCH_BYTES_CONF: extra scalemon.conf lines for every daemon (e.g.
#    "commit_interval = 1s" to see the cost of committing every tick);
#    BENCH_BYTES_DAEMON: another scalemond binary (a before/after).
#    BENCH_BYTES_CASES: the cases, "INTERVAL:CPUS ..." (CPUS 0: this
#    machine's own), default "1s:0 100ms:0 1s:256 100ms:256 1s:1024".
#    The growth is read from what is committed, so each case's window
#    runs from one of its commits to another: a wait for a commit lasts
#    up to BENCH_BYTES_COMMIT_WAIT (700 s, more than the default
#    commit_interval).
#
# 2. Kept.  The bytes per stored value and per CPU-hour of the first
#    round's 1 s recording (or of DB, a copy: its log is checkpointed into
#    it first, so the file size is the data's).  A stored value is one
#    metric's count at one place (CPU, node or machine) in one interval:
#    the non-zero ones are stored, zeros are implied.  Printed: the file's
#    size, and the time series' own pages (tick, cpu_sample, sample, mux
#    and their indexes, from dbstat) per interval, per stored value, per
#    value including the implied zeros, and per CPU-hour.
set -u
: "${top_builddir:=.}"
W=${BENCH_BYTES_WINDOW:-420}
CWAIT=${BENCH_BYTES_COMMIT_WAIT:-700}
WARM=${BENCH_BYTES_WARMUP:-10}
ROUNDS=${BENCH_BYTES_ROUNDS:-2}
CASES=${BENCH_BYTES_CASES:-1s:0 100ms:0 1s:256 100ms:256 1s:1024}
DAEMON=${BENCH_BYTES_DAEMON:-$top_builddir/scalemond}
PMLOGGER_FIGURE=6.6          # MB/h, pmlogger at 1 s, measured on this project's test machine
tmp=$(mktemp -d "${BENCH_BYTES_DIR:-/var/tmp}/scalemon-bench-bytes.XXXXXX")
pids=()
cleanup() {
        for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null; done
        for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
        rm -rf "$tmp"
}
trap cleanup EXIT
command -v sqlite3 >/dev/null || { echo "bench-bytes: needs the sqlite3 command-line tool"; exit 0; }
ext=$top_builddir/scalemon.so

wbytes() { awk '/^write_bytes:/ { print $2 }' "/proc/$1/io" 2>/dev/null || echo 0; }
# bytes in use: what the database keeps (the freelist is space, not data)
dbused() {
        sqlite3 -readonly "$1" "SELECT (p.page_count - f.freelist_count) * s.page_size
                                FROM pragma_page_count p, pragma_freelist_count f, pragma_page_size s" 2>/dev/null || echo 0
}
# median, min, max of numbers on stdin
mmm() { sort -g | awk '{ v[NR] = $1 } END { if (!NR) { print "- - -"; exit }
                          m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
                          printf "%.2f %.2f %.2f\n", m, v[1], v[NR] }'; }

# pmlogger side by side, at the same interval, when PCP is installed (a
# bench-only tool: not in tools/install-deps.sh)
pm_pid=
pm_start() {   # interval dir
        [ "${BENCH_BYTES_PMLOGGER:-1}" = 1 ] || return 1
        command -v pmlogger >/dev/null && command -v pminfo >/dev/null || return 1
        pminfo -h local: kernel.all.cpu.user >/dev/null 2>&1 || return 1
        # per-CPU and system values like scalemond's (about 35 a sample on 2 CPUs)
        cat > "$2/pm.conf" <<'EOF'
log mandatory on default {
        kernel.percpu.cpu.user kernel.percpu.cpu.sys kernel.percpu.cpu.idle kernel.percpu.cpu.intr
        kernel.percpu.cpu.wait.total kernel.percpu.cpu.nice kernel.percpu.cpu.steal
        kernel.all.pswitch kernel.all.intr kernel.all.sysfork kernel.all.running kernel.all.blocked
        kernel.all.load mem.vmstat.pgfault mem.vmstat.pgmajfault mem.vmstat.numa_hit mem.vmstat.numa_miss
        mem.vmstat.numa_foreign mem.vmstat.pgmigrate_success mem.vmstat.thp_fault_alloc
        kernel.all.pressure.cpu.some.total kernel.all.pressure.memory.some.total
        kernel.all.pressure.io.some.total mem.util.free mem.util.cached mem.util.used
}
EOF
        pmlogger -r -t "$1" -c "$2/pm.conf" "$2/pmarch" 2>"$2/pm.log" &
        pm_pid=$!
        pids+=("$pm_pid")
}

# The first round's 1 s case split by file: perf records the pages the
# daemon dirties (writeback:writeback_dirty_folio: its inode and index,
# one event per page made dirty, as write_bytes counts them).
bd_pid=
bd_start() {   # pid perf.data
        [ "${BENCH_BYTES_BREAKDOWN:-1}" = 1 ] || return 1
        command -v perf >/dev/null || return 1
        [ -d /sys/kernel/tracing/events/writeback/writeback_dirty_folio ] ||
                [ -d /sys/kernel/debug/tracing/events/writeback/writeback_dirty_folio ] || return 1
        perf record -q -e writeback:writeback_dirty_folio -p "$1" -o "$2" >/dev/null 2>&1 &
        bd_pid=$!
        pids+=("$bd_pid")
        bd_w0=$(wbytes "$1"); bd_t0=$(date +%s.%N)
        : > "$tmp/bd.names"
}
bd_names() {   # case-dir: the files' inodes while the daemon has them
        local f
        for f in db-head db-wal db-shm db; do
                [ -e "$1/$f" ] && echo "ino $(stat -c %i "$1/$f") $f"
        done >> "$tmp/bd.names"
}
bd_stop() {    # pid case-dir
        [ -n "$bd_pid" ] || return 0
        bd_w1=$(wbytes "$1"); bd_t1=$(date +%s.%N)
        bd_names "$2"
        kill -INT "$bd_pid" 2>/dev/null; wait "$bd_pid" 2>/dev/null
}
bd_print() {   # perf.data case-dir
        local f pg
        [ -n "$bd_pid" ] && [ -s "$1" ] || return 0
        pg=$(getconf PAGESIZE)
        perf script -i "$1" -F trace 2>/dev/null | sed -n 's/.*ino=\([0-9]*\).*/\1/p' |
        awk -v pg="$pg" -v t0="$bd_t0" -v t1="$bd_t1" -v w0="$bd_w0" -v w1="$bd_w1" -v names="$tmp/bd.names" '
                BEGIN { while ((getline l < names) > 0) { split(l, a, " "); name[a[2]] = a[3] } }
                { n[($1 in name) ? name[$1] : "other"]++; all++ }
                END {
                        h = (t1 - t0) / 3600
                        printf "  split by file, 1 s, this machine'"'"'s CPUs, first round (%.0f s; pages dirtied, as write_bytes counts them):\n", t1 - t0
                        split("db-head db-wal db-shm db other", order, " ")
                        label["db-head"] = "head file"; label["db-wal"] = "write-ahead log"; label["db-shm"] = "WAL index (-shm)"
                        label["db"] = "database file"; label["other"] = "other (journal, log)"
                        for (i = 1; i <= 5; i++)
                                printf "    %-22s %7.3f MB/h  %5.1f%%\n", label[order[i]], n[order[i]] * pg / h / 1e6,
                                       all ? 100 * n[order[i]] / all : 0
                        printf "    %-22s %7.3f MB/h (write_bytes over the same time: %.3f MB/h)\n", "all", all * pg / h / 1e6,
                               (w1 - w0) / h / 1e6
                }'
}

declare -A WR STU GR RATIO XW XU XT
lasttick() { sqlite3 -readonly "$1" "SELECT coalesce(max(id), 0) FROM tick" 2>/dev/null || echo 0; }
# Each case's write_bytes, bytes in use and time at its first commit from
# now (into XW, XU, XT): the window runs from one commit to another, so
# the database's growth is whole commits' (a window that caught three of
# one run's 2-minute commits and four of another's differed by a third).
# At most CWAIT s of waiting; a case that has not committed by then is
# read as it is.
at_commits() {
        local -A seen=() got=()
        local c d left i
        for c in $CASES; do seen[$c]=$(lasttick "$rd/${c%%:*}-${c##*:}/db"); done
        left=$(echo $CASES | wc -w)
        for i in $(seq $((2 * CWAIT))); do
                [ "$left" -gt 0 ] || break
                sleep 0.5
                for c in $CASES; do
                        [ -z "${got[$c]:-}" ] || continue
                        d=$rd/${c%%:*}-${c##*:}
                        [ "$(lasttick "$d/db")" != "${seen[$c]}" ] || [ "$i" = $((2 * CWAIT)) ] || continue
                        got[$c]=1; left=$((left - 1))
                        XW[$c]=$(wbytes "${P[$c]}"); XU[$c]=$(dbused "$d/db"); XT[$c]=$(date +%s.%N)
                done
        done
}
n_machine=$(nproc)
if [ $# -ge 1 ]; then
        src=$1
        sqlite3 -readonly "$src" ".backup $tmp/db" || { echo "bench-bytes: cannot copy $src"; exit 1; }
        what="$src"
else
        [ "$(id -u)" = 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 0 ] ||
                { echo "bench-bytes: needs root (or perf_event_paranoid <= 0) for per-CPU perf events"; exit 0; }
        printf 'bench-bytes: bytes written (write_bytes of /proc/PID/io) and kept, per hour, over %s s or a little more (from a commit to a commit) after a %s s warm-up, %s round(s), all cases side by side\n' \
                "$W" "$WARM" "$ROUNDS"
        [ -n "${BENCH_BYTES_CONF:-}" ] && printf '  extra settings: %s\n' "$(echo "$BENCH_BYTES_CONF" | tr '\n' ';')"
        [ -n "${BENCH_BYTES_DAEMON:-}" ] && printf '  daemon: %s\n' "$DAEMON"
        for round in $(seq 1 "$ROUNDS"); do
                rd=$tmp/r$round
                mkdir -p "$rd"
                declare -A P=() W0=() U0=() T0=()
                pm_pid=
                pm_start 1 "$rd" || true
                for c in $CASES; do
                        iv=${c%%:*}; n=${c##*:}
                        d=$rd/$iv-$n
                        mkdir -p "$d"
                        printf '%s\n' "${BENCH_BYTES_CONF:-}" > "$d/conf"
                        sim=(); [ "$n" != 0 ] && sim=(--simulate-cpus "$n")
                        "$DAEMON" --foreground --config "$d/conf" --db "$d/db" --socket "$d/sock" --interval "$iv" \
                                "${sim[@]}" 2>"$d/log" &
                        P[$c]=$!
                        pids+=("${P[$c]}")
                done
                pm_w0=0
                sleep "$WARM"
                [ -n "$pm_pid" ] && pm_w0=$(wbytes "$pm_pid")
                at_commits
                for c in $CASES; do W0[$c]=${XW[$c]}; U0[$c]=${XU[$c]}; T0[$c]=${XT[$c]}; done
                bd_pid=
                [ "$round" = 1 ] && [ -n "${P[1s:0]:-}" ] && bd_start "${P[1s:0]}" "$rd/bd.data" &&
                        bd_names "$rd/1s-0"
                sleep "$W"
                if [ -n "$pm_pid" ]; then
                        pm_w1=$(wbytes "$pm_pid")
                        echo "$pm_w0 $pm_w1" | awk -v w="$W" '{ printf "%.3f\n", ($2 - $1) / w * 3600 / 1e6 }' >> "$tmp/pm"
                        kill -TERM "$pm_pid" 2>/dev/null; wait "$pm_pid" 2>/dev/null
                fi
                at_commits
                [ -n "$bd_pid" ] && bd_stop "${P[1s:0]}" "$rd/1s-0"
                for c in $CASES; do
                        d=$rd/${c%%:*}-${c##*:}
                        w1=${XW[$c]}; u1=${XU[$c]}; t1=${XT[$c]}
                        read -r wr gr st ratio < <(awk -v w0="${W0[$c]}" -v w1="$w1" -v u0="${U0[$c]}" -v u1="$u1" \
                                -v t0="${T0[$c]}" -v t1="$t1" 'BEGIN {
                                h = (t1 - t0) / 3600
                                wr = (w1 - w0) / h / 1e6; gr = (u1 - u0) / h / 1e6
                                printf "%.3f %.3f %.3f %.2f\n", wr, gr, w0 / 1e6, (gr > 0 ? wr / gr : 999) }')
                        WR[$c]+="$wr "; GR[$c]+="$gr "; STU[$c]+="$st "; RATIO[$c]+="$ratio "
                        kill -TERM "${P[$c]}"; wait "${P[$c]}"
                        grep -q "stopped" "$d/log" || { echo "bench-bytes: the $c daemon did not stop cleanly:"; tail -3 "$d/log"; }
                done
                [ "$round" = 1 ] && bd_print "$rd/bd.data" "$rd/1s-0" > "$tmp/bd.out"
                pids=()
        done
        printf '  %-8s %-6s %-26s %-26s %-10s %-12s\n' INTERVAL CPUS "WRITTEN MB/h (med min max)" \
                "DB GROWTH MB/h (med..)" "WRITTEN/GROWTH" "START-UP MB"
        for c in $CASES; do
                iv=${c%%:*}; n=${c##*:}; [ "$n" = 0 ] && n="$n_machine"
                printf '  %-8s %-6s %-26s %-26s %-10s %-12s\n' "$iv" "$n" \
                        "$(echo "${WR[$c]}" | tr ' ' '\n' | grep . | mmm)" \
                        "$(echo "${GR[$c]}" | tr ' ' '\n' | grep . | mmm)" \
                        "$(echo "${RATIO[$c]}" | tr ' ' '\n' | grep . | mmm | cut -d' ' -f1)" \
                        "$(echo "${STU[$c]}" | tr ' ' '\n' | grep . | mmm | cut -d' ' -f1)"
        done
        if [ -s "$tmp/pm" ]; then
                read -r pm _ < <(mmm < "$tmp/pm")
                pmwhat="pmlogger measured side by side at 1 s: $(mmm < "$tmp/pm" | awk '{ printf "%s MB/h (min %s, max %s)", $1, $2, $3 }')"
        else
                pm=$PMLOGGER_FIGURE
                pmwhat="pmlogger not measured here (needs pcp's pmlogger and a running pmcd): the figure measured before, $pm MB/h at 1 s"
        fi
        echo "  $pmwhat"
        [ -s "$tmp/bd.out" ] && cat "$tmp/bd.out"
        c="1s:0"
        if [ -n "${WR[$c]:-}" ]; then
                read -r wr _ < <(echo "${WR[$c]}" | tr ' ' '\n' | grep . | mmm)
                read -r ratio _ < <(echo "${RATIO[$c]}" | tr ' ' '\n' | grep . | mmm)
                awk -v wr="$wr" -v pm="$pm" 'BEGIN { printf "  %s: 1 s, %d CPUs: written %.2f MB/h <= pmlogger %.2f MB/h\n",
                        (wr <= pm ? "PASS" : "MISS"), '"$n_machine"', wr, pm }'
                awk -v r="$ratio" 'BEGIN { printf "  %s: 1 s, %d CPUs: written <= 2x the database growth (%.2fx)\n",
                        (r <= 2 ? "PASS" : "MISS"), '"$n_machine"', r }'
        fi
        [ -f "$tmp/r1/1s-0/db" ] || exit 0
        sqlite3 "$tmp/r1/1s-0/db" ".backup $tmp/db"
        what="the first round's recording of this machine at 1 s (${W} s + warm-up)"
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
                printf "bench-bytes: kept, %s\n", what
                printf "  %d intervals (%.2f h) of %d CPUs, %d metrics (%d per CPU): file %.2f MiB after VACUUM, series %.2f MiB\n",
                        t, s / 3600, c, m, mc, f / 1048576, b / 1048576
                printf "  %.0f bytes per interval; %.2f bytes per stored (non-zero) value, %d values; %.2f bytes per value with zeros\n",
                        b / t, b / v, v, b / all
                printf "  %.1f KiB per CPU-hour at this interval\n", b / c / (s / 3600) / 1024
        }'
done
