# lib.sh - shared by the shell tests: TAP output, a scalemond in the
# foreground on a temporary database, and helpers to read what it stored.
# Source it; call `finish` at the end.
set -u

: "${top_builddir:=.}"
: "${srcdir:=.}"
SCALEMOND=${SCALEMOND:-$top_builddir/scalemond}
SCALEMONCTL=${SCALEMONCTL:-$top_builddir/scalemonctl}
WL=$top_builddir/tests/workloads
TMP=$(mktemp -d /tmp/scalemon-test.XXXXXX)
DB=$TMP/scalemon.db
SOCK=$TMP/control.sock
DAEMON_PID=
INTERVAL=${INTERVAL:-100ms}
tap_n=0
tap_failed=0

ok() {          # ok CONDITION-EXIT-STATUS DESCRIPTION...
        local rc=$1; shift
        tap_n=$((tap_n + 1))
        if [ "$rc" -eq 0 ]; then echo "ok $tap_n - $*"; else echo "not ok $tap_n - $*"; tap_failed=$((tap_failed + 1)); fi
}
check() {       # check DESCRIPTION -- COMMAND...: ok if COMMAND succeeds
        local desc=$1; shift; [ "$1" = -- ] && shift
        "$@"; ok $? "$desc"
}
skip_one() {    # skip_one REASON -- DESCRIPTION...: one check that cannot be judged here
        local why=$1; shift; [ "$1" = -- ] && shift
        tap_n=$((tap_n + 1))
        echo "ok $tap_n - $* # SKIP $why"
}
diag() { echo "# $*"; }
skip_all() { echo "1..0 # SKIP $*"; cleanup; exit 77; }
bail() { echo "Bail out! $*"; daemon_log_tail; cleanup; exit 1; }
# daemon_log_tail: the end of this test's daemon log as TAP comments, so
# that a failure's log says what the daemon said (a sanitizer's report, an
# error) after $TMP is gone
daemon_log_tail() {
        [ -s "$TMP/daemon.log" ] || return 0
        echo "# the end of scalemond's log ($TMP/daemon.log):"
        tail -n 30 "$TMP/daemon.log" | sed 's/^/# daemon: /'
}

# need_hotplug CPU: CPU can be taken offline and is online now; sets CPU
# and ONLINE (its sysfs file), else the test is skipped
need_hotplug() {
        CPU=$1
        ONLINE=/sys/devices/system/cpu/cpu$CPU/online
        [ -w "$ONLINE" ] || skip_all "cpu$CPU cannot be taken offline here (no writable $ONLINE)"
        [ "$(cat "$ONLINE")" = 1 ] || skip_all "cpu$CPU is already offline"
}
need_root() { [ "$(id -u)" = 0 ] || skip_all "needs root for system-wide perf events"; }
# fake_kernel: this test needs no kernel counter (what it checks is the
# daemon's and client's own behaviour), so it runs as any user, root
# included, on the fake kernel of daemon/sampler/fakekernel.c: software
# events count 1000 per read on every CPU, with no perf_event_open().
fake_kernel() {
        need_seam SCALEMON_TEST_FAKE_KERNEL "$SCALEMOND"
        export SCALEMON_TEST_FAKE_KERNEL=1
}
# need_seam VAR PROGRAM...: the test seam read from the environment
# variable VAR is built into every PROGRAM (only with ./configure
# --enable-test-seams); skip the whole test if not
need_seam() {
        local var=$1 p; shift
        for p in "$@"; do
                grep -qa "$var" "$p" ||
                        skip_all "$(basename "$p") was built without the test seam $var (configure --enable-test-seams)"
        done
}

cleanup() {
        if [ -n "${EXP_PID:-}" ] && kill -0 "$EXP_PID" 2>/dev/null; then
                kill -TERM "$EXP_PID" 2>/dev/null; wait "$EXP_PID" 2>/dev/null
        fi
        EXP_PID=
        if [ -n "${PROM_PID:-}" ] && kill -0 "$PROM_PID" 2>/dev/null; then
                kill -TERM "$PROM_PID" 2>/dev/null; wait "$PROM_PID" 2>/dev/null
        fi
        PROM_PID=
        if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
                kill -TERM "$DAEMON_PID" 2>/dev/null; wait "$DAEMON_PID" 2>/dev/null
        fi
        DAEMON_PID=
        [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT

finish() {
        echo "1..$tap_n"
        [ "$tap_failed" -eq 0 ] || daemon_log_tail
        cleanup
        trap - EXIT
        [ "$tap_failed" -eq 0 ]
        exit $?
}

# start_daemon [ARGS...]: scalemond in the foreground on $DB; returns once
# it has said it started, or bails out with its log.  It runs with the
# settings a user gets (commit_interval's default: scalemonctl, and sql()
# through scalemon.so, read the ticks not committed yet from the head
# file), unless the test sets COMMIT_INTERVAL and says why.
start_daemon() {
        local before; touch "$TMP/daemon.log"; before=$(grep -c 'started:' "$TMP/daemon.log")
        local ci=${COMMIT_INTERVAL-}
        "$SCALEMOND" --foreground --db "$DB" --socket "$SOCK" ${INTERVAL:+--interval "$INTERVAL"} \
                ${ci:+--commit-interval "$ci"} "$@" \
                >>"$TMP/daemon.log" 2>&1 &
        DAEMON_PID=$!
        local i
        for i in $(seq 200); do
                [ "$(grep -c 'started:' "$TMP/daemon.log" 2>/dev/null)" -gt "${before:-0}" ] && return 0
                kill -0 "$DAEMON_PID" 2>/dev/null || break
                sleep 0.05
        done
        sed 's/^/# daemon: /' "$TMP/daemon.log"
        bail "scalemond did not start"
}

stop_daemon() {
        [ -n "$DAEMON_PID" ] || return 0
        kill -TERM "$DAEMON_PID"
        wait "$DAEMON_PID"
        local rc=$?
        DAEMON_PID=
        return $rc
}

ctl() { "$SCALEMONCTL" --db "$DB" --socket "$SOCK" "$@"; }
# Per-CPU values are packed, one cpu_sample row per tick and metric
# (schema 0004).  scalemon.so, loaded, puts the head file's ticks behind
# temp views named like the tables (tick, sample, cpu_sample, ..., and the
# views samples, cpu_samples), so sql() sees every tick up to the latest.
# Over those, temp views show every value with the per-CPU ones unpacked,
# through its SQL functions: sample_all (metric, tick, loc, value) has every
# row the old table sample had (no zeros, NULL where not counted), and
# samples_all has cpu_samples' rows too.
SQLITE_EXT=${SQLITE_EXT:-$top_builddir/scalemon.so}
SQL_UNPACK="CREATE TEMP VIEW sample_all AS
          SELECT metric, tick, loc, value FROM sample
          UNION ALL SELECT c.metric, c.tick, u.cpu, u.value FROM cpu_sample c, scalemon_cpus(c.vals) u;
        CREATE TEMP VIEW samples_all AS SELECT * FROM samples UNION ALL SELECT * FROM cpu_samples;"
sql() { sqlite3 -readonly -batch -noheader -cmd ".load $SQLITE_EXT" -cmd "$SQL_UNPACK" "$DB" "$@"; }

now_ns() { date +%s%N; }
ns_to_when() { printf '@%d.%09d' $(($1 / 1000000000)) $(($1 % 1000000000)); }
interval_ns() { sql "SELECT value FROM meta WHERE key = 'interval_ns'"; }

# wait_flushed NS: until the ticks that end at or after NS can be read
# (sql() reads the head file's with the database's).
last_tick_end() { sql "SELECT coalesce(max(t + dur), 0) FROM tick" 2>/dev/null || echo 0; }
wait_flushed() {
        local want=$1 i last
        for i in $(seq 100); do
                last=$(last_tick_end)
                [ "${last:-0}" -ge "$want" ] && return 0
                sleep 0.1
        done
        diag "database has no tick ending after $want (last ${last:-none})"
        return 1
}

# total METRIC FROM_NS TO_NS [QUERY-ARGS...]: sum of the metric's deltas
# over every tick that starts in [FROM_NS - interval, TO_NS], through
# scalemonctl's CSV output.
total() {
        local m=$1 from=$2 to=$3; shift 3
        local iv; iv=$(interval_ns)
        ctl --format csv query "$m" --since "$(ns_to_when $((from - iv)))" --until "$(ns_to_when "$to")" "$@" |
                awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "value") c = i; next }
                         { s += $c } END { printf "%.0f\n", s }'
}

vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

# jq-lite: jpy EXPR < JSON prints the Python expression EXPR evaluated with
# the document as `d` (lists print one item per line).
jpy() {
        python3 -c '
import json, sys
d = json.load(sys.stdin)
v = eval(sys.argv[1])
if isinstance(v, list):
    print("\n".join(str(x) for x in v))
elif isinstance(v, bool):
    print("true" if v else "false")
elif v is None:
    print("null")
else:
    print(v)' "$1"
}

# scalemon-exporter on a free port (EPORT), asking this test's daemon:
# start_exporter [ARGS...] sets EPORT and EXP_PID; cleanup stops it.
EXP_PID=
start_exporter() {
        EPORT=$(free_port)
        "$top_builddir/scalemon-exporter" --listen "127.0.0.1:$EPORT" --socket "$SOCK" --db "$DB" "$@" \
                >"$TMP/exporter.log" 2>&1 &
        EXP_PID=$!
}

# A real Prometheus (Debian's prometheus) that scrapes TARGET (host:port)
# every second, on a free port, its data under $TMP/prom:
# start_prometheus TARGET sets API and PROM_PID and returns once it has
# scraped scalemon_up 1 (bails out after 30 s); q EXPR [TIME] is an
# instant query's JSON.  cleanup stops it.
PROM_PID=
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
start_prometheus() {
        local port up i
        port=$(free_port)
        mkdir -p "$TMP/prom"
        printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: scalemon\n    static_configs:\n      - targets: [%s]\n' \
                "'$1'" >"$TMP/prometheus.yml"
        prometheus --config.file="$TMP/prometheus.yml" --storage.tsdb.path="$TMP/prom" \
                --web.listen-address="127.0.0.1:$port" >"$TMP/prometheus.log" 2>&1 &
        PROM_PID=$!
        API=http://127.0.0.1:$port/api/v1
        for i in $(seq 150); do
                up=$(q 'scalemon_up' | jpy 'd["data"]["result"][0]["value"][1] if d["data"]["result"] else ""' 2>/dev/null)
                [ "$up" = 1 ] && return 0
                sleep 0.2
        done
        sed 's/^/# prometheus: /' "$TMP/prometheus.log" | tail -20
        bail "Prometheus did not scrape scalemon_up 1 within 30s"
}
q() { curl -sf "$API/query" --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"}; }

# retry N COMMAND...: COMMAND again, up to N tries in all, until it
# succeeds; the status of the last try.  For a measurement that another
# process on this shared machine can spoil (its counts are machine-wide):
# COMMAND measures afresh and judges by the same bounds on every try, so
# the check still fails when every try fails.  Each failed try is a TAP
# comment naming it and COMMAND's own diagnostics.
retry() {
        local _retry_n=$1 _retry_i _retry_rc=1; shift
        for _retry_i in $(seq "$_retry_n"); do
                "$@"; _retry_rc=$?
                if [ "$_retry_rc" = 0 ]; then
                        [ "$_retry_i" -gt 1 ] && diag "retry: try $_retry_i of $_retry_n passed: $*"
                        return 0
                fi
                diag "retry: try $_retry_i of $_retry_n failed (status $_retry_rc): $*"
        done
        return "$_retry_rc"
}
