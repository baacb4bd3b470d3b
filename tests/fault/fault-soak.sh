#!/bin/bash
# fault-soak.sh - scalemond at 100 ms for SOAK_SECONDS (default 60; the
# figure in doc/PERFORMANCE.md comes from SOAK_SECONDS=900) with a workload
# running, runs opening and closing, status asked and reloads sent.
# Memory must stay flat: after a warm-up tenth, the resident size less
# what SQLite holds (its page cache fills up to a bound as the database
# grows; the daemon reports it in status) is no higher in the last third
# than in the first third plus 512 KiB (plus the 1 MiB ASan keeps in its
# quarantine of freed blocks, in the sanitizer build), and SQLite stays
# under 8 MiB.  In the
# sanitizer build LeakSanitizer checks for leaks
# at exit (a leak makes the daemon exit non-zero), with ASan's quarantine
# kept small so that the resident size means something.
. "${srcdir:-.}/tests/lib.sh"
need_root

SECS=${SOAK_SECONDS:-60}
INTERVAL=100ms
asan=false
grep -q '^SAN_CFLAGS = .*-fsanitize=address' "$top_builddir/Makefile" 2>/dev/null && asan=true
if $asan; then
        export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:quarantine_size_mb=1:thread_local_quarantine_size_kb=64
fi
printf 'interval = 100ms\n' > "$TMP/s.conf"
start_daemon --config "$TMP/s.conf"
rss() { awk '/^VmRSS/ { print $2 }' /proc/"$DAEMON_PID"/status; }
sqlite_kb() { ctl --format json status | jpy 'd["daemon"]["memory"]["sqlite_bytes"] // 1024'; }

end=$(( $(date +%s) + SECS ))
i=0 runs=0 fails=0
: > "$TMP/rss"
while [ "$(date +%s)" -lt "$end" ]; do
        i=$((i + 1))
        "$WL/wl-pingpong" 500 >/dev/null &
        wl=$!
        ctl run start "soak-$i" --tag i="$i" >/dev/null || fails=$((fails + 1))
        "$WL/wl-touch" 2000 >/dev/null
        ctl run mark "soak-$i" "half way" >/dev/null || fails=$((fails + 1))
        ctl status >/dev/null || fails=$((fails + 1))
        wait "$wl"
        ctl run stop "soak-$i" --score x="$i" >/dev/null && runs=$((runs + 1)) || fails=$((fails + 1))
        [ $((i % 20)) = 0 ] && kill -HUP "$DAEMON_PID"
        echo "$(date +%s) $(rss) $(sqlite_kb)" >> "$TMP/rss"
        sleep 0.3
done
kill -0 "$DAEMON_PID"; ok $? "the daemon ran ${SECS}s at 100 ms ($i rounds)"
[ "$fails" = 0 ]; ok $? "$runs runs started, marked and stopped, status and reloads answered ($fails failures)"
read -r n first last growth sq < <(awk '{ v[NR] = $2 - $3; if ($3 > sq) sq = $3 } END {
        w = int(NR / 10); a = w + int((NR - w) / 3); b = NR - int((NR - w) / 3)
        for (k = w + 1; k <= a; k++) if (v[k] > m1) m1 = v[k]
        for (k = b + 1; k <= NR; k++) if (v[k] > m3) m3 = v[k]
        print NR, m1, m3, m3 - m1, sq }' "$TMP/rss")
diag "resident size less SQLite's: $n readings, max $first kB in the first third, $last kB in the last (asan: $asan)"
slack=512; $asan && slack=$((512 + 1024))
[ "$n" -ge 10 ] && [ "$growth" -le "$slack" ]; ok $? "memory flat: the last third is $growth kB above the first (at most $slack)"
[ "$sq" -lt 8192 ]; ok $? "SQLite held at most $sq kB (under 8 MiB)"
check "the daemon stops cleanly (and, under ASan, with no leak)" -- stop_daemon
grep -q 'LeakSanitizer' "$TMP/daemon.log"; [ $? != 0 ]; ok $? "no LeakSanitizer report in the log"
[ "$(sql 'PRAGMA integrity_check')" = ok ]; ok $? "integrity_check ok"
finish
